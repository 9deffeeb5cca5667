/// A server connection whose main loop lock guards everything made on it (PipeWire's thread
/// loop, libpulse's threaded main loop).
protocol MainLoopLocking: AnyObject {
    /// Takes the main loop lock.
    func lock()
    /// Lets it go.
    func unlock()
}

extension MainLoopLocking {
    /// Runs `body` with the lock held, the way a stream starts: if it throws, the lock is let
    /// go, `undo` runs (it takes the lock itself, to take down what was made), and the error
    /// is thrown on.
    func withLock(undoingOnError undo: () -> Void, _ body: () throws(DeskAudioError) -> Void) throws(DeskAudioError) {
        lock()
        do throws(DeskAudioError) {
            try body()
            unlock()
        } catch {
            unlock()
            undo()
            throw error
        }
    }
}
