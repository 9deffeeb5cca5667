/// What a capture stream records.
public enum CaptureTarget: Sendable, Equatable {
    /// The monitor of the default sink: what the machine plays (app audio). Follows the
    /// default sink when it changes.
    case defaultSinkMonitor
    /// The default source, which must not be a monitor: the microphone. Follows the default
    /// source when it changes.
    case defaultSource
    /// The monitor of the sink with this name (a `CaptureDevice` of kind `.sink`).
    case sinkMonitor(named: String)
    /// The source with this name (a `CaptureDevice` of kind `.source`), never a monitor.
    case source(named: String)
    /// What the applications `AppSelection` picks play, wherever they play to, mixed by the
    /// server; applications that start or stop while capturing are picked up or dropped.
    case applications(AppSelection)

    /// True for targets that record a sink's monitor (app audio).
    var recordsASink: Bool {
        switch self {
        case .defaultSinkMonitor, .sinkMonitor: true
        case .defaultSource, .source, .applications: false
        }
    }

    /// True for a device (a sink's monitor or a source), false for applications.
    var isADevice: Bool {
        if case .applications = self { return false }
        return true
    }

    /// The device name asked for, nil for the default device.
    var deviceName: String? {
        switch self {
        case .defaultSinkMonitor, .defaultSource, .applications: nil
        case .sinkMonitor(let name), .source(let name): name
        }
    }
}

extension CaptureTarget: CustomStringConvertible {
    /// The target in words, for messages.
    public var description: String {
        switch self {
        case .defaultSinkMonitor: "the default sink's monitor"
        case .defaultSource: "the default source"
        case .sinkMonitor(let name): "the monitor of sink \(name)"
        case .source(let name): "source \(name)"
        case .applications(let selection): selection.description
        }
    }
}
