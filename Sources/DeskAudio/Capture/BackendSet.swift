/// The backends a capture may use, in the order automatic choice tries them: what picks
/// one for a request ("pipewire", "pulse", or automatic), the only place that tells them apart.
struct BackendSet: Sendable {
    /// The backends, first the one automatic choice prefers.
    let backends: [CaptureBackend]

    /// The real servers: PipeWire's native API first, PulseAudio's when no PipeWire answers.
    static let system = BackendSet(backends: [PipeWireBackend(), PulseBackend()])

    /// Runs `body` on the backend `requested` names; for automatic choice (nil), on each in
    /// order while the one before found no server. With none answering, the error names
    /// every failure.
    func run<T>(
        on requested: AudioBackend?, _ body: (CaptureBackend) throws(DeskAudioError) -> T
    ) throws(DeskAudioError) -> T {
        if let requested {
            guard let backend = backends.first(where: { $0.kind == requested }) else {
                throw .notSupported("the \(requested.rawValue) backend is not available here")
            }
            return try body(backend)
        }
        return try Self.firstAnswering(backends, serverName: \.serverName, body)
    }

    /// The rule automatic choice follows, for capture and playback alike: runs `body` on
    /// each candidate in order while the one before threw `.noServer`; with none answering,
    /// the error names every server and why (a single candidate's error is passed on as it is).
    static func firstAnswering<Candidate, T>(
        _ candidates: [Candidate], serverName: (Candidate) -> String,
        _ body: (Candidate) throws(DeskAudioError) -> T
    ) throws(DeskAudioError) -> T {
        var reasons: [String] = []
        for candidate in candidates {
            do throws(DeskAudioError) {
                return try body(candidate)
            } catch {
                guard case .noServer(let reason) = error, candidates.count > 1 else { throw error }
                reasons.append(reason)
            }
        }
        let names = candidates.map(serverName).joined(separator: " nor ")
        throw .noServer("neither \(names) answered (\(reasons.joined(separator: "; ")))")
    }
}
