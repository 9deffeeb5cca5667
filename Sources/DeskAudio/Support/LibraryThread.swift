import DeskAudioShim
import Glibc

/// Starts one of the library's own threads running `body`; join it with `pthread_join`.
func startLibraryThread(
    named name: String, _ body: @escaping @Sendable () -> Void
) throws(DeskAudioError) -> pthread_t {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    let status = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    guard status == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        throw .outOfResources("cannot start a library thread: \(String(cString: strerror(status)))")
    }
    _ = deskaudio_shim_set_thread_name(thread, name)  // seen in top -H, gdb, /proc
    return thread
}

/// What a library thread runs, carried through pthread_create's context pointer.
private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
