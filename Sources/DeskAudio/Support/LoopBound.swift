/// A value only one thread may touch, as swift-nio's NIOLoopBound: the thread `isOnLoop`
/// recognises, by the owner's own call (an audio server's loop: `pa_threaded_mainloop_in_thread`,
/// `pw_thread_loop_in_thread`; the frame handler's thread: `AudioService.isInsideFrameHandler`).
/// Every access checks it in debug and test builds (the sanitized suites too); release builds
/// trust it. The box may be passed anywhere; its value is used only there.
public final class LoopBound<Value>: @unchecked Sendable {
    private var value: Value
    private let isOnLoop: @Sendable () -> Bool
    private let loop: String

    /// `value`, confined to the thread `isOnLoop` says is the one (`loop` names it in a failure).
    public init(_ value: Value, on loop: String, isOnLoop: @escaping @Sendable () -> Bool) {
        self.value = value
        self.loop = loop
        self.isOnLoop = isOnLoop
    }

    /// Runs `body` with the value; on any other thread than its loop's, a debug build stops here.
    public func withValue<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        assert(isOnLoop(), "a value confined to \(loop) was used on another thread")
        return try body(&value)
    }
}
