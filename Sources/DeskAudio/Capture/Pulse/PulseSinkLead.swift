import CPulse

/// How long before it is played a plain PulseAudio sink hands its monitor each block. A
/// PulseAudio sink renders ahead of its clock by up to its configured latency and gives the
/// monitor each block as it renders it (a null sink asked for 5 ms renders every 5 ms, 5 ms
/// ahead: `pactl list sinks` shows its latency running from 5 ms down to 0), so audio read
/// from a monitor arrived that long before it was played, and its capture time is that much
/// later than its arrival says. The record stream's timing info has the sink's latency too
/// (`sink_usec`), but as of its last update, up to 1.5 s old: a random point of that cycle.
/// pipewire-pulse hands a monitor each cycle as it is played (its capture times measured right
/// without a lead). Asked of the server before the stream starts and then every 250 ms, from
/// the source to the sink it monitors: a sink's latency moves as its clients come, ask for
/// less or go (an idle null sink's is 50 ms, 10 ms once the capture records from it), and
/// until the lead is asked again the capture times are off by the change. Main loop thread
/// only (or its lock held).
final class PulseSinkLead {
    /// The lead, in ns: 0 until known, on pipewire-pulse, and for a source that is no monitor.
    private(set) var leadNs: Int64 = 0
    /// True once the server answered the last question (or could not).
    var answered: Bool { awaiting == nil }
    private enum Question { case serverName, source, sink }
    // What the server is to answer next; nil once the lead is in `leadNs`.
    private var awaiting: Question?
    // Nil until the server said what it is.
    private var isPipeWire: Bool?
    private var askedAtNs: UInt64 = 0
    // The source asked about.
    private var device = ""
    private static let intervalNs: UInt64 = 250_000_000

    /// Asks the server for the lead of the source `device` on `context` at `nowNs`;
    /// `answered` turns true on the main loop when it is in `leadNs`.
    func ask(device: String, on context: OpaquePointer?, nowNs: UInt64) {
        self.device = device
        askedAtNs = nowNs
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let isPipeWire else {
            return send(
                .serverName,
                pulse.pa_context_get_server_info(
                    context,
                    { context, info, userData in
                        let lead = Unmanaged<PulseSinkLead>.fromOpaque(userData!).takeUnretainedValue()
                        let name = info?.pointee.server_name.map { String(cString: $0) } ?? ""
                        lead.isPipeWire = name.hasPrefix("PulseAudio (on PipeWire")
                        lead.ask(device: lead.device, on: context, nowNs: lead.askedAtNs)
                    }, me))
        }
        guard !isPipeWire else { return send(nil, nil) }
        send(
            .source,
            pulse.pa_context_get_source_info_by_name(
                context, device,
                { context, source, endOfList, userData in
                    let lead = Unmanaged<PulseSinkLead>.fromOpaque(userData!).takeUnretainedValue()
                    guard let source else {
                        if endOfList != 0 && lead.awaiting == .source { lead.send(nil, nil) }
                        return
                    }
                    let sink = source.pointee.monitor_of_sink
                    guard sink != UInt32.max else {
                        lead.leadNs = 0
                        return lead.send(nil, nil)
                    }
                    lead.send(
                        .sink,
                        pulse.pa_context_get_sink_info_by_index(
                            context, sink,
                            { _, sink, endOfList, userData in
                                let lead = Unmanaged<PulseSinkLead>.fromOpaque(userData!).takeUnretainedValue()
                                if let sink { lead.leadNs = Int64(clamping: sink.pointee.configured_latency) &* 1000 }
                                if (sink != nil || endOfList != 0) && lead.awaiting == .sink { lead.send(nil, nil) }
                            }, userData))
                }, me))
    }

    /// At a read of `stream`: asks again once the last question is answered and 250 ms have
    /// passed since it was asked.
    func refresh(stream: OpaquePointer?, context: OpaquePointer?, nowNs: UInt64) {
        guard answered, isPipeWire == false, nowNs &- askedAtNs >= Self.intervalNs,
            let name = pulse.pa_stream_get_device_name(stream)
        else { return }
        ask(device: String(cString: name), on: context, nowNs: nowNs)
    }

    // Awaits `question`'s answer from `operation` (none sent, or nil: nothing awaited).
    private func send(_ question: Question?, _ operation: OpaquePointer?) {
        awaiting = operation == nil ? nil : question
        if let operation { pulse.pa_operation_unref(operation) }
    }
}
