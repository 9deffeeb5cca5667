/// A weak reference set once, before any other thread reads it: lets a thread's closure
/// reach an object without keeping it alive (no reference cycle through the thread).
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    /// The object, while it lives.
    weak var value: Object?
}
