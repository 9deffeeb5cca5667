import Glibc

//# 1. Version and errors: what the header and the library are, status codes and messages

/// The message of the last failure, kept per thread (a pthread key), so that
/// deskaudio_last_error() is thread-safe and its string stays valid until the next
/// failing call on the same thread.
enum LastError {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    /// Replaces the calling thread's message.
    static func record(_ message: String) {
        let copy = strdup(message)
        free(pthread_getspecific(key))
        pthread_setspecific(key, copy)
    }

    /// The calling thread's message, or an empty string.
    static var message: UnsafePointer<CChar> {
        if let stored = pthread_getspecific(key) {
            return UnsafePointer(stored.assumingMemoryBound(to: CChar.self))
        }
        return cString(empty)
    }

    private static let empty: StaticString = ""
}
