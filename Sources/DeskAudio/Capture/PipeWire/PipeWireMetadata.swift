import CPipeWire
import DeskAudioShim
import Glibc

/// The session manager's "default" metadata, bound from a registry: each property present
/// arrives after a round trip, then each change (this client's own included), on the loop
/// thread. Holds the default devices and the streams' targets. Create and close with the
/// loop lock held.
final class PipeWireMetadata {
    /// The value of `metadata.name` this binds.
    static let defaultName = "default"

    private var proxy: OpaquePointer?
    private let events = UnsafeMutablePointer<pw_metadata_events>.allocate(capacity: 1)
    private let listener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let onProperty: (_ subject: UInt32, _ key: String?, _ value: String?) -> Void

    /// The subject of a change to every subject (PW_ID_ANY).
    static let everySubject = UInt32.max

    /// Binds the metadata global `id` (type `type`) through `registry`; `onProperty` gets each
    /// property's subject, key and value (nil: removed). A nil key says every property of the
    /// subject was removed, of every subject when it is `everySubject` (pw_metadata_clear).
    /// When the bind fails, nothing arrives and `set` does nothing.
    init(
        id: UInt32, type: String, registry: OpaquePointer?,
        onProperty: @escaping (UInt32, String?, String?) -> Void
    ) {
        self.onProperty = onProperty
        events.initialize(to: pw_metadata_events())
        events.pointee.version = UInt32(PW_VERSION_METADATA_EVENTS)
        events.pointee.property = { data, subject, key, _, value in
            Unmanaged<PipeWireMetadata>.fromOpaque(data!).takeUnretainedValue()
                .onProperty(subject, key.map { String(cString: $0) }, value.map { String(cString: $0) })
            return 0
        }
        listener.initialize(to: spa_hook())
        guard let bound = pw_registry_bind(registry, id, type, UInt32(PW_VERSION_METADATA), 0) else { return }
        proxy = OpaquePointer(bound)
        deskaudio_shim_metadata_add_listener(proxy, listener, events, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        assert(proxy == nil, "PipeWireMetadata dropped without close()")
        events.deallocate()
        listener.deallocate()
    }

    /// Lock held: sets `key` of `subject` to `value` (nil removes it), untyped.
    func set(_ subject: UInt32, _ key: String, to value: String?) {
        guard let proxy else { return }
        deskaudio_shim_metadata_set_property(proxy, subject, key, nil, value)
    }

    /// Lock held: removes the listener and destroys the proxy; safe to call twice.
    func close() {
        guard let proxy else { return }
        spa_hook_remove(listener)
        pw_proxy_destroy(proxy)
        self.proxy = nil
    }
}
