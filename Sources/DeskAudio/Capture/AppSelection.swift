/// Which applications' playback an app capture records, instead of the default sink's whole
/// monitor. An application is matched by any of its streams' application name, process
/// binary, node name (case-insensitively, whole) or process id. The calling process's own
/// playback is left out unless `includesOwnProcess` is set, so a host that plays a viewer's
/// voice never sends it back.
public struct AppSelection: Sendable, Equatable {
    /// Whether the names are what is captured or what is left out.
    public enum Mode: Sendable, Equatable {
        /// Only the applications named.
        case only
        /// Every application but those named.
        case allExcept
    }

    /// Only, or all except.
    public var mode: Mode
    /// Application names, binaries, node names or process ids.
    public var names: [String]
    /// True to record the calling process's own playback too.
    public var includesOwnProcess: Bool
    /// True to keep what is recorded off the machine's speakers while capturing (the streams
    /// play into a silent sink of the library's; the default sink is never changed).
    public var mutesHost: Bool
    /// True to measure the level of each recorded stream on its own (`AudioService.appLevels`).
    /// On PipeWire's native backend that is one more stream per recorded application.
    public var measuresLevels: Bool

    /// A selection of `mode` over `names`; the caller's own playback left out unless asked
    /// for; the speakers muted for what is recorded if `mutesHost`; each stream's level
    /// measured if `measuresLevels`.
    public init(
        mode: Mode, names: [String], includesOwnProcess: Bool = false, mutesHost: Bool = false,
        measuresLevels: Bool = false
    ) {
        self.mode = mode
        self.names = names
        self.includesOwnProcess = includesOwnProcess
        self.mutesHost = mutesHost
        self.measuresLevels = measuresLevels
    }

    /// Every application but the calling process, as the default sink's monitor would hold
    /// them, optionally kept off the speakers.
    public static func everyApp(mutesHost: Bool, measuresLevels: Bool = false) -> AppSelection {
        AppSelection(mode: .allExcept, names: [], mutesHost: mutesHost, measuresLevels: measuresLevels)
    }

    /// True when the playback stream `stream` is to be recorded, the caller being process `ownProcess`.
    public func records(_ stream: PlaybackStream, ownProcess: Int32) -> Bool {
        if stream.processID == ownProcess && !includesOwnProcess { return false }
        let named = names.contains { stream.answers(to: $0) }
        return mode == .only ? named : !named
    }
}

extension AppSelection: CustomStringConvertible {
    /// The selection in words, for messages.
    public var description: String {
        let list = names.isEmpty ? "none" : names.joined(separator: ", ")
        let own = includesOwnProcess ? ", this process included" : ""
        let muted = mutesHost ? ", kept off the speakers" : ""
        let details = own + muted + (measuresLevels ? ", levels per app" : "")
        return mode == .only ? "only the apps \(list)\(details)" : "every app except \(list)\(details)"
    }
}
