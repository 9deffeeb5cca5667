/// A change of the capture service's state, for the host's event handler.
public enum LibraryEvent: Int32, Sendable, CaseIterable {
    /// A source started capturing, or came back after its server went away.
    case connected = 1
    /// A source's stream was lost (its server stopped or dropped it); the library retries.
    case disconnected = 2
    /// A source now captures another device (the default changed, or the host chose one).
    case deviceChanged = 3
    /// Something failed that no call returned to the host (a reconnect attempt, say).
    case error = 4
    /// While applications are selected: one started playing (the detail says whether the
    /// selection records it).
    case appStarted = 5
    /// While applications are selected: one stopped playing.
    case appStopped = 6
    /// A source's stream is connected but no audio has come for seconds (the session
    /// manager restarted and did not link it again, or someone unlinked it); the library
    /// reopens it.
    case stalled = 7
}

/// How much a log message matters; a log handler gets the levels up to the one it asked for.
public enum LogLevel: Int32, Sendable, Comparable, CaseIterable {
    /// A failure.
    case error = 1
    /// Something went wrong and was handled.
    case warning = 2
    /// A state change worth knowing (streams opened and closed, devices, backend).
    case info = 3
    /// Detail for tracking a problem down.
    case debug = 4

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
