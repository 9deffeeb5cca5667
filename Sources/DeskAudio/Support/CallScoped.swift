/// A caller's value (its bytes) handed into a lock's closure, used only during the call that
/// got it and never kept: so it joins no region, and the state the lock owns stays checked by
/// the compiler. The one claim the compiler cannot check is that last one. Not for a closure
/// on a hot path: a function held by a generic is re-wrapped in a thunk, a heap allocation
/// (`scripts/bench --allocations` saw two per frame in `PCMFrameEncoder.push`).
public struct CallScoped<Value>: @unchecked Sendable {
    /// The caller's value.
    public let value: Value

    /// Wraps `value` for the duration of the call.
    public init(_ value: Value) { self.value = value }
}
