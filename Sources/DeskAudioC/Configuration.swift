import DeskAudio

/// Sets the Opus target bitrate in bits per second (6000–510000; default 128000).
/// Applies from the next frame, also while capturing; loss reports step on from it.
@_cdecl("deskaudio_set_bitrate")
public func deskaudio_set_bitrate(_ bits_per_second: Int32) -> Int32 {
    status { () throws(DeskAudioError) in try service.settings.setBitrate(bits_per_second) }
}

/// Sets the Opus encoder complexity, 0 (fastest) to 10 (best, the default).
/// Applies from the next frame, also while capturing.
@_cdecl("deskaudio_set_complexity")
public func deskaudio_set_complexity(_ complexity: Int32) -> Int32 {
    status { () throws(DeskAudioError) in try service.settings.setComplexity(complexity) }
}

/// Turns Opus in-band FEC on or off and sets the packet loss, in percent (0–100), the
/// encoder plans for (default: off, 0). FEC data rides in SILK and hybrid packets only; in
/// the default restricted-low-delay mode (CELT only) it is accepted and has no effect.
/// Applies from the next frame. deskaudio_report_packet_loss() sets both from then on.
@_cdecl("deskaudio_set_fec")
public func deskaudio_set_fec(_ enabled: Bool, _ expected_loss_percent: Int32) -> Int32 {
    status { () throws(DeskAudioError) in
        try service.settings.setLossProtection(fec: enabled, expectedLossPercent: expected_loss_percent)
    }
}

/// Turns the zero gate on (the default: after 800 all-zero frames, nothing is sent until
/// sound returns) or off (every frame is sent). Applies from the next frame.
@_cdecl("deskaudio_set_gate")
public func deskaudio_set_gate(_ enabled: Bool) -> Int32 {
    service.settings.setGate(enabled: enabled)
    return deskaudio_status.DESKAUDIO_OK.rawValue
}

/// Sets the range, in bits per second, that deskaudio_report_packet_loss() steps the
/// bitrate within (default 6000–510000; both within that, minimum ≤ maximum). The bitrate
/// is pulled into the range at once.
@_cdecl("deskaudio_set_bitrate_range")
public func deskaudio_set_bitrate_range(_ minimum: Int32, _ maximum: Int32) -> Int32 {
    status { () throws(DeskAudioError) in try service.settings.setBitrateRange(minimum: minimum, maximum: maximum) }
}

/// Reports the fraction of packets (0–1) the host saw lost over its last reporting
/// interval. The bitrate steps within the range: loss ≥ 10 % → down 50 %; ≥ 5 % → down
/// 15 %; < 1 % → up 15 %; otherwise unchanged. The expected loss is set to the report, and
/// in-band FEC is on while loss is above 1 %. Returns the bitrate now in force (bit/s,
/// positive), or DESKAUDIO_ERROR_INVALID_ARGUMENT for a value that is not a fraction
/// (NaN included). Applies from the next frame.
@_cdecl("deskaudio_report_packet_loss")
public func deskaudio_report_packet_loss(_ loss_fraction: Float) -> Int32 {
    valueOrStatus { () throws(DeskAudioError) in try service.settings.reportLoss(loss_fraction) }
}
