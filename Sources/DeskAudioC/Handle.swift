/// The Swift object behind an opaque C handle: `retained` makes a handle that owns one
/// reference (released by the handle's destroy call through `release`); `object` reads it
/// back without touching the count.
enum Handle {
    /// A handle owning one reference to `object`.
    static func retained<Object: AnyObject>(_ object: Object) -> OpaquePointer {
        OpaquePointer(Unmanaged.passRetained(object).toOpaque())
    }

    /// The object behind `handle`, still owned by the handle.
    static func object<Object: AnyObject>(_ handle: OpaquePointer, as type: Object.Type = Object.self) -> Object {
        Unmanaged<Object>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    /// Gives back the reference `retained` took: the handle must not be used after.
    static func release<Object: AnyObject>(_ handle: OpaquePointer, as type: Object.Type) {
        Unmanaged<Object>.fromOpaque(UnsafeRawPointer(handle)).release()
    }
}
