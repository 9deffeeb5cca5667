/// A caller's value (its bytes, its handler) handed into a lock's closure, used only during
/// the call that got it and never kept: so it joins no region, and the state the lock owns
/// stays checked by the compiler. The one claim the compiler cannot check is that last one.
public struct CallScoped<Value>: @unchecked Sendable {
    /// The caller's value.
    public let value: Value

    /// Wraps `value` for the duration of the call.
    public init(_ value: Value) { self.value = value }
}
