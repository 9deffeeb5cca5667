extension UnsafeMutableBufferPointer where Element: Numeric {
    /// `count` elements allocated once and set to zero: the buffers the library makes before
    /// any audio flows, so the per-frame path allocates nothing. Free with `deallocate()`.
    static func zeroed(_ count: Int) -> Self {
        let buffer = allocate(capacity: count)
        buffer.initialize(repeating: 0)
        return buffer
    }
}
