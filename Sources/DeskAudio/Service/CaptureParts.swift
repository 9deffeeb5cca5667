/// The parts of one capture that its threads share without the control lock: each is safe
/// to use from any thread on its own terms (atomics, its own lock, a lock-free ring).
/// `AudioService` reads them directly; `CaptureControl` changes them under its lock.
struct CaptureParts: Sendable {
    /// The backends capture may use.
    let backends: BackendSet
    /// Which of them it uses: the one rule.
    let backendChoice = BackendChoice()
    /// Encoder settings; changes apply at the next frame.
    let settings: EncoderSettings
    /// Events and log messages for the host.
    let notices: NoticeBoard
    /// The feeds the streams write into.
    let slots: SourceSlots
    /// PCM the host pushes itself.
    let hostInput = HostPCMInput()
    /// Counts and levels.
    let statsBoard: StatsBoard
    /// Wakes the worker when audio arrives.
    let wake = WakeSignal()
    /// Hands frames to the host on the delivery thread.
    let delivery: FrameDelivery
    /// Whether app audio creates a virtual sink on a server that has none.
    let ensuresSink = LockedValue(false)
    /// Where every "now" of the capture comes from.
    let clock: LibraryClock
    /// Who runs the worker, the delivery and the supervisor.
    let driving: CaptureDriving

    /// The parts of a new capture on `backends`, on `clock`, run as `driving` says.
    init(
        backends: BackendSet, settings: EncoderSettings, notices: NoticeBoard, clock: LibraryClock = .system,
        driving: CaptureDriving = .threads
    ) {
        self.backends = backends
        self.settings = settings
        self.notices = notices
        self.clock = clock
        self.driving = driving
        slots = SourceSlots(notices: notices)
        let statsBoard = StatsBoard()
        self.statsBoard = statsBoard
        delivery = FrameDelivery(stats: statsBoard, clock: clock)
    }
}

/// Who runs a capture's worker, delivery and supervisor.
enum CaptureDriving: Sendable {
    /// The library's own threads (every host).
    case threads
    /// The caller, one step at a time (`AudioService.step()`, `supervise()`): a scenario test
    /// on a virtual clock, where each step's result is exact.
    case stepped
}
