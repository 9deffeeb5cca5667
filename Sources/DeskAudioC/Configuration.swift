import DeskAudio

//# 3. Configuration: encoder, frames, channels, gate; the session served

/// Sets `capture`'s Opus target bitrate in bits per second (6000–510000; default: the
/// layout's, 128000 for stereo; see deskaudio_capture_set_channels()). Applies from the next
/// frame, also while capturing; loss reports step on from it. Once set, it stays whatever
/// the layout.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - bits_per_second: the Opus target bitrate, 6000 to 510000 bit/s.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT outside the range.
@_cdecl("deskaudio_capture_set_bitrate")
public func deskaudio_capture_set_bitrate(_ capture: deskaudio_capture?, _ bits_per_second: Int32) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in try service.settings.setBitrate(bits_per_second) }
    }
}

/// deskaudio_capture_set_bitrate() on the default capture.
@_cdecl("deskaudio_set_bitrate")
public func deskaudio_set_bitrate(_ bits_per_second: Int32) -> Int32 {
    deskaudio_capture_set_bitrate(defaultHandle, bits_per_second)
}

/// Sets `capture`'s Opus encoder complexity, 0 (fastest) to 10 (best, the default).
/// Applies from the next frame, also while capturing.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - complexity: 0 (least CPU) to 10 (best; the default).
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT outside the range.
@_cdecl("deskaudio_capture_set_complexity")
public func deskaudio_capture_set_complexity(_ capture: deskaudio_capture?, _ complexity: Int32) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in try service.settings.setComplexity(complexity) }
    }
}

/// deskaudio_capture_set_complexity() on the default capture.
@_cdecl("deskaudio_set_complexity")
public func deskaudio_set_complexity(_ complexity: Int32) -> Int32 {
    deskaudio_capture_set_complexity(defaultHandle, complexity)
}

/// Turns `capture`'s Opus in-band FEC on or off and sets the packet loss, in percent
/// (0–100), the encoder plans for (default: off, 0). FEC data rides in SILK and hybrid
/// packets only; in the default restricted-low-delay mode (CELT only) it is accepted and has
/// no effect. Applies from the next frame. deskaudio_capture_report_packet_loss() sets both
/// from then on.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - enabled: true for Opus in-band FEC.
///   - expected_loss_percent: the packet loss the encoder plans for, 0 to 100 %.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT outside the range.
@_cdecl("deskaudio_capture_set_fec")
public func deskaudio_capture_set_fec(
    _ capture: deskaudio_capture?, _ enabled: Bool, _ expected_loss_percent: Int32
) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in
            try service.settings.setLossProtection(fec: enabled, expectedLossPercent: expected_loss_percent)
        }
    }
}

/// deskaudio_capture_set_fec() on the default capture.
@_cdecl("deskaudio_set_fec")
public func deskaudio_set_fec(_ enabled: Bool, _ expected_loss_percent: Int32) -> Int32 {
    deskaudio_capture_set_fec(defaultHandle, enabled, expected_loss_percent)
}

/// Turns `capture`'s zero gate on (the default: after 800 all-zero frames, 8 s at 10 ms,
/// nothing is sent until sound returns) or off (every frame is sent). Applies from the next
/// frame.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - enabled: true: the zero gate holds back silence after 800 all-zero frames; false: every frame is sent.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for a NULL capture.
@_cdecl("deskaudio_capture_set_gate")
public func deskaudio_capture_set_gate(_ capture: deskaudio_capture?, _ enabled: Bool) -> Int32 {
    withCapture(capture) { service in
        service.settings.setGate(enabled: enabled)
        return deskaudio_status.DESKAUDIO_OK.rawValue
    }
}

/// deskaudio_capture_set_gate() on the default capture.
@_cdecl("deskaudio_set_gate")
public func deskaudio_set_gate(_ enabled: Bool) -> Int32 {
    deskaudio_capture_set_gate(defaultHandle, enabled)
}

/// Sets the length of `capture`'s frames, in microseconds: 2500, 5000, 10000 (the default)
/// or 20000; anything else is DESKAUDIO_ERROR_INVALID_ARGUMENT. Also while capturing: frames
/// change at the next frame boundary, with sequence and sample clock running on. Each frame
/// says its length (frame_samples: 120, 240, 480 or 960). The zero gate counts frames, so it
/// closes after 800 all-zero frames of any length: 2 s at 2.5 ms, 4 s at 5 ms, 8 s at 10 ms,
/// 16 s at 20 ms. Streams started after the call ask the server for blocks of the frame
/// length (within 5 to 10 ms), which shorter frames need for their lower latency; set it before
/// deskaudio_capture_enable() for that. Shorter frames cost more CPU and bytes per second.
/// The receiving side's jitter buffer (deskaudio_remote_mic) plays 10 ms frames only.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - microseconds: 2500, 5000, 10000 (the default) or 20000 µs.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for another length.
@_cdecl("deskaudio_capture_set_frame_duration")
public func deskaudio_capture_set_frame_duration(_ capture: deskaudio_capture?, _ microseconds: Int32) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in
            guard let duration = FrameDuration(microseconds: Int(microseconds)) else {
                throw .invalidArgument("frame duration \(microseconds) us is not 2500, 5000, 10000 or 20000")
            }
            service.settings.setFrameDuration(duration)
        }
    }
}

/// deskaudio_capture_set_frame_duration() on the default capture.
@_cdecl("deskaudio_set_frame_duration")
public func deskaudio_set_frame_duration(_ microseconds: Int32) -> Int32 {
    deskaudio_capture_set_frame_duration(defaultHandle, microseconds)
}

/// deskaudio_capture_set_channels(): the default sink's own layout, read as capture starts.
public let DESKAUDIO_CHANNELS_SINK: Int32 = 0

/// Sets the channels of `capture`'s frames: 1 (mono), 2 (stereo, the default), 6 (5.1: FL FR
/// FC LFE RL RR) or 8 (7.1: FL FR FC LFE RL RR SL SR), or DESKAUDIO_CHANNELS_SINK for the
/// layout of the sink app audio records (its monitor's channels: 1 mono, 2 stereo, 3 to 6
/// 5.1, more 7.1; stereo when the server does not say); anything else is
/// DESKAUDIO_ERROR_INVALID_ARGUMENT. The server up- or downmixes each source to that layout
/// (a stereo microphone lands on FL and FR). 6 and 8 channels are Opus multistream with
/// channel mapping family 1, in AudioFrame version 2 (docs/wire-format.md); a stereo capture
/// of a 5.1 sink stays the server's downmix. Applies from the next start from stopped: a
/// running capture keeps its layout until deskaudio_capture_enable(capture, false, false)
/// and a new start. Unless deskaudio_capture_set_bitrate() was called, each start takes the
/// layout's default bitrate: 64000 mono, 128000 stereo, 256000 for 5.1, 450000 for 7.1
/// (loss reports step from it by the same percentages). Host PCM
/// (deskaudio_capture_push_pcm()) goes onto FL and FR.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - channels: 1, 2 (the default), 6 (5.1), 8 (7.1) or DESKAUDIO_CHANNELS_SINK.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for another count.
@_cdecl("deskaudio_capture_set_channels")
public func deskaudio_capture_set_channels(_ capture: deskaudio_capture?, _ channels: Int32) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in
            if channels == DESKAUDIO_CHANNELS_SINK { return service.setChannels(.sinkLayout) }
            guard let layout = ChannelLayout(channels: Int(channels)) else {
                throw .invalidArgument("channels \(channels) is not 1, 2, 6, 8 or DESKAUDIO_CHANNELS_SINK (0)")
            }
            service.setChannels(.layout(layout))
        }
    }
}

/// deskaudio_capture_set_channels() on the default capture.
@_cdecl("deskaudio_set_channels")
public func deskaudio_set_channels(_ channels: Int32) -> Int32 {
    deskaudio_capture_set_channels(defaultHandle, channels)
}

/// deskaudio_capture_set_surround_streams(): libopus's surround encoder (the default).
public let DESKAUDIO_SURROUND_COUPLED: Int32 = 0
/// deskaudio_capture_set_surround_streams(): one Opus stream per channel, none coupled.
public let DESKAUDIO_SURROUND_DISCRETE: Int32 = 1

/// Sets how `capture`'s 5.1 and 7.1 frames are split into Opus streams; both are channel
/// mapping family 1, which the frame's header spells out (streams, coupled streams, table),
/// so every family 1 decoder (this library's, ffmpeg's, libopus's) reads either.
/// DESKAUDIO_SURROUND_COUPLED (the default) is libopus's surround encoder: the front, rear
/// and side pairs coupled, the LFE coded as one, bits spread by surround masking; the best
/// quality per bit, with another channel's tone at −46 to −48 dB in a channel.
/// DESKAUDIO_SURROUND_DISCRETE is one mono stream per channel (Sunshine's high-quality
/// layout): the channels apart to libopus's noise floor (−61 dB), for a host with bits to
/// spare, since a pair's likeness is not shared and the LFE takes a full channel's share; give
/// it a higher bitrate (deskaudio_capture_set_bitrate()). Mono and stereo are one stream
/// whatever this says. Applies from the next start from stopped, as
/// deskaudio_capture_set_channels() does.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - streams: DESKAUDIO_SURROUND_COUPLED or DESKAUDIO_SURROUND_DISCRETE.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for another value.
@_cdecl("deskaudio_capture_set_surround_streams")
public func deskaudio_capture_set_surround_streams(_ capture: deskaudio_capture?, _ streams: Int32) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in
            switch streams {
            case DESKAUDIO_SURROUND_COUPLED: service.setSurroundStreams(.coupled)
            case DESKAUDIO_SURROUND_DISCRETE: service.setSurroundStreams(.discrete)
            default:
                throw .invalidArgument(
                    "surround streams \(streams) is not DESKAUDIO_SURROUND_COUPLED (0) or DESKAUDIO_SURROUND_DISCRETE (1)")
            }
        }
    }
}

/// deskaudio_capture_set_surround_streams() on the default capture.
@_cdecl("deskaudio_set_surround_streams")
public func deskaudio_set_surround_streams(_ streams: Int32) -> Int32 {
    deskaudio_capture_set_surround_streams(defaultHandle, streams)
}

/// Sets the quantum `capture`'s PipeWire streams ask the graph for, in samples per channel at
/// 48 kHz: 32 to 480, or 0 (the default) for the frame's length within 5 to 10 ms. A frame's
/// last sample waits up to one graph cycle before the capture has it: at the 256-sample
/// quantum many graphs run, that is up to 5.3 ms of the sink-to-frame latency, at 64 samples
/// 1.3 ms (docs/performance.md). The graph runs at the smallest quantum any of its streams
/// asks, so every application on the server then wakes that often: ask only when latency
/// matters more than the server's CPU. The PulseAudio backend on pipewire-pulse asks for it
/// too (as the client's pulse.min.quantum and pulse.min.frag, which pipewire-pulse otherwise
/// floors at 256 samples, and in fragments that long); on plain PulseAudio it keeps its
/// fragments at the frame's length (small ones made its capture times worse). Applies from
/// the next start from stopped, as deskaudio_capture_set_channels() does.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - samples: 32 to 480 samples per channel, or 0 for the frame's length within 5–10 ms.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT outside that.
@_cdecl("deskaudio_capture_set_pipewire_quantum")
public func deskaudio_capture_set_pipewire_quantum(_ capture: deskaudio_capture?, _ samples: Int32) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in try service.setPipeWireQuantum(samples: samples == 0 ? nil : Int(samples)) }
    }
}

/// deskaudio_capture_set_pipewire_quantum() on the default capture.
@_cdecl("deskaudio_set_pipewire_quantum")
public func deskaudio_set_pipewire_quantum(_ samples: Int32) -> Int32 {
    deskaudio_capture_set_pipewire_quantum(defaultHandle, samples)
}

/// Sets the range, in bits per second, that deskaudio_capture_report_packet_loss() steps
/// `capture`'s bitrate within (default 6000–510000; both within that, minimum ≤ maximum).
/// The bitrate is pulled into the range at once.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - minimum: the lowest bitrate loss reports step down to, 6000 to 510000 bit/s.
///   - maximum: the highest bitrate they step up to, `minimum` to 510000 bit/s.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for a range outside 6000–510000 or upside down.
@_cdecl("deskaudio_capture_set_bitrate_range")
public func deskaudio_capture_set_bitrate_range(
    _ capture: deskaudio_capture?, _ minimum: Int32, _ maximum: Int32
) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in
            try service.settings.setBitrateRange(minimum: minimum, maximum: maximum)
        }
    }
}

/// deskaudio_capture_set_bitrate_range() on the default capture.
@_cdecl("deskaudio_set_bitrate_range")
public func deskaudio_set_bitrate_range(_ minimum: Int32, _ maximum: Int32) -> Int32 {
    deskaudio_capture_set_bitrate_range(defaultHandle, minimum, maximum)
}

/// Reports the fraction of `capture`'s packets (0–1) the host saw lost over its last
/// reporting interval. The bitrate steps within the range: loss ≥ 10 % → down 50 %; ≥ 5 %
/// → down 15 %; < 1 % → up 15 %; otherwise unchanged. The expected loss is set to the
/// report, and in-band FEC is on while loss is above 1 %. Returns the bitrate now in force
/// (bit/s, positive), or DESKAUDIO_ERROR_INVALID_ARGUMENT for a value that is not a fraction
/// (NaN included). Applies from the next frame.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - loss_fraction: packets lost over the host's last interval, 0 to 1.
/// - Returns: the bitrate now in force (bit/s, positive), or DESKAUDIO_ERROR_INVALID_ARGUMENT.
// C: warn_unused_result
@_cdecl("deskaudio_capture_report_packet_loss")
public func deskaudio_capture_report_packet_loss(_ capture: deskaudio_capture?, _ loss_fraction: Float) -> Int32 {
    withCapture(capture) { service in
        valueOrStatus { () throws(DeskAudioError) in try service.settings.reportLoss(loss_fraction) }
    }
}

/// deskaudio_capture_report_packet_loss() on the default capture.
@_cdecl("deskaudio_report_packet_loss")
public func deskaudio_report_packet_loss(_ loss_fraction: Float) -> Int32 {
    deskaudio_capture_report_packet_loss(defaultHandle, loss_fraction)
}
