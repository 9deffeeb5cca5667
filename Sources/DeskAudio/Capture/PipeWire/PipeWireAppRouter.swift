import CPipeWire
import DeskAudioShim
import Glibc

/// Links the playback streams an `AppSelection` picks into a capture stream that the session
/// manager leaves unlinked (node.autoconnect=false): each selected stream's output ports go to
/// the capture's input ports (left channels to FL, right to FR, mono and centre to both), and
/// PipeWire mixes them there. The streams keep their own links to their sinks, so the
/// machine's speakers go on playing them. Follows the registry: a stream that appears is
/// linked as soon as its ports are there, one that goes takes its links with it, and a link
/// whose port goes is made again when ports come back (R-WP-PORTS). The links
/// belong to this connection: they vanish with it, whatever ends the process. With
/// a `PipeWireHostMute`, the selected streams are kept off the speakers. With `AppLevels`,
/// each selected stream is also linked to a `PipeWireLevelStream` of its own.
/// Loop thread, or loop lock held.
final class PipeWireAppRouter: PipeWireRegistryWatcher {
    let connection: PipeWireConnection
    private let selection: AppSelection
    private let captureNode: () -> UInt32
    private let onChange: (_ stream: PlaybackStream, _ appeared: Bool, _ recorded: Bool) -> Void
    private let ownProcess = getpid()
    var registry: PipeWireRegistry?
    private lazy var watch = PipeWireStreamWatch(
        onUpdate: { [unowned self] stream, first in streamUpdated(stream, first: first) },
        onRemove: { [unowned self] stream in
            onChange(stream, false, selection.records(stream, ownProcess: ownProcess))
        })
    private var selected: Set<UInt32> = []
    private var ports: [UInt32: PipeWirePort] = [:]
    private let mute: PipeWireHostMute?
    private let appLevels: AppLevels?
    private var levelStreams: [UInt32: PipeWireLevelStream] = [:]
    private var links = PipeWirePortLinks<OpaquePointer>()

    /// Routes what `selection` picks into the node `captureNode` returns (read as ports come),
    /// keeping each off the speakers with `mute` (started) if given, and measuring each into
    /// `appLevels` if given; `onChange` hears of each playback stream that appears or goes,
    /// and whether it is recorded.
    init(
        connection: PipeWireConnection, selection: AppSelection, mute: PipeWireHostMute?, appLevels: AppLevels?,
        captureNode: @escaping () -> UInt32,
        onChange: @escaping (PlaybackStream, Bool, Bool) -> Void
    ) {
        self.connection = connection
        self.selection = selection
        self.captureNode = captureNode
        self.onChange = onChange
        self.mute = mute
        self.appLevels = appLevels
    }


    /// Lock held: removes every link made and stops watching (the mute's owner finishes the
    /// mute); safe to call twice.
    func finish() {
        for proxy in links.removeAll() { pw_proxy_destroy(proxy) }
        for id in levelStreams.keys { stopMeasuring(id) }
        watch.finish()
        stopWatching()
    }

    func global(id: UInt32, type: String, properties: PipeWireProperties) {
        switch type {
        case "PipeWire:Interface:Port":
            guard let port = PipeWirePort(properties), !port.isMonitor else { return }
            ports[id] = port
        default:
            return watch.global(id: id, type: type, properties: properties, registry: registry?.proxy)
        }
        linkWhatIsSelected()
    }

    func removed(_ id: UInt32) {
        ports[id] = nil
        selected.remove(id)
        for proxy in links.remove(touching: id) { pw_proxy_destroy(proxy) }
        stopMeasuring(id)
        watch.removed(id)
    }

    // A stream's details were read: it is linked once they say the selection takes it.
    private func streamUpdated(_ stream: PlaybackStream, first: Bool) {
        let recorded = selection.records(stream, ownProcess: ownProcess)
        if first { onChange(stream, true, recorded) }
        if recorded {
            selected.insert(stream.id)
            mute?.mute(stream.id)
            if let appLevels, levelStreams[stream.id] == nil {
                let name = stream.applicationName.isEmpty ? stream.nodeName : stream.applicationName
                levelStreams[stream.id] = PipeWireLevelStream(
                    measuring: name, into: appLevels.meter(for: stream), on: connection)
            }
            linkWhatIsSelected()
        } else if selected.remove(stream.id) != nil {
            mute?.unmute(stream.id)
            // Its details changed so that the selection no longer takes it.
            for proxy in links.remove(touching: stream.id) { pw_proxy_destroy(proxy) }
            stopMeasuring(stream.id)
        }
    }

    private func stopMeasuring(_ stream: UInt32) {
        levelStreams.removeValue(forKey: stream)?.destroy()
        appLevels?.remove(stream)
    }

    /// Makes the links still missing from each selected stream to the capture node and to
    /// the stream's level stream.
    private func linkWhatIsSelected() {
        let capture = captureNode()
        for stream in selected {
            link(stream, into: capture)
            if let level = levelStreams[stream] { link(stream, into: level.nodeID) }
        }
    }

    private func link(_ stream: UInt32, into node: UInt32) {
        guard node != UInt32.max else { return }
        let inputs = ports.filter { $0.value.node == node && !$0.value.isOutput }
        let positions = Set(inputs.values.map(\.channel))
        for (outputID, output) in ports where output.node == stream && output.isOutput {
            for (inputID, input) in inputs
            where PipeWireAppRouter.feeds(output.channel, into: input.channel, of: positions) {
                let pair = PipeWirePortPair(outputNode: stream, output: outputID, input: inputID)
                guard !links.contains(pair) else { continue }
                guard let proxy = deskaudio_shim_create_link(connection.core, stream, outputID, node, inputID)
                else { continue }
                links.insert(proxy, for: pair)
            }
        }
    }

    /// Whether an output channel goes into an input channel of a capture with the channels
    /// `inputs`: into its own position when the capture has it; else a mono capture takes
    /// every channel but LFE, and a stereo or surround one folds it to the same side, or to
    /// both front sides for mono and centre; LFE goes nowhere it has no place of its own.
    static func feeds(_ output: String, into input: String, of inputs: Set<String>) -> Bool {
        if inputs.contains(output) { return input == output }
        if inputs.contains("MONO") { return input == "MONO" && !output.hasPrefix("LFE") }
        switch output {
        case "FL", "RL", "SL", "FLC", "RLC", "TFL", "TRL": return input == "FL"
        case "FR", "RR", "SR", "FRC", "RRC", "TFR", "TRR": return input == "FR"
        case "LFE", "LFE2": return false
        default: return input == "FL" || input == "FR"  // MONO, FC, RC, unknown
        }
    }
}
