import CPipeWire
import DeskAudioShim
import Glibc

/// The daemon's registry, bound on a connection: each global present arrives first, then
/// each one added or removed, on the loop thread. Create and close with the loop lock held.
final class PipeWireRegistry {
    /// The registry proxy, to bind globals with.
    private(set) var proxy: OpaquePointer?
    private let events = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
    private let listener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
    private let onGlobal: (_ id: UInt32, _ type: String, _ properties: PipeWireProperties) -> Void
    private let onRemove: (_ id: UInt32) -> Void

    /// Binds the registry on `connection`; `onGlobal` gets each global's id, type and
    /// properties, `onRemove` each removed global's id.
    init(
        on connection: PipeWireConnection,
        onGlobal: @escaping (UInt32, String, PipeWireProperties) -> Void,
        onRemove: @escaping (UInt32) -> Void = { _ in }
    ) throws(DeskAudioError) {
        self.onGlobal = onGlobal
        self.onRemove = onRemove
        events.initialize(to: pw_registry_events())
        events.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        events.pointee.global = { data, id, _, type, _, properties in
            guard let type, let properties else { return }
            Unmanaged<PipeWireRegistry>.fromOpaque(data!).takeUnretainedValue()
                .onGlobal(id, String(cString: type), PipeWireProperties(dict: properties))
        }
        events.pointee.global_remove = { data, id in
            Unmanaged<PipeWireRegistry>.fromOpaque(data!).takeUnretainedValue().onRemove(id)
        }
        listener.initialize(to: spa_hook())
        // Thrown after every property is set: deinit runs and frees events and listener.
        guard let newProxy = pw_core_get_registry(connection.core, UInt32(PW_VERSION_REGISTRY), 0) else {
            throw .outOfResources("cannot get the PipeWire registry: \(PipeWireConnection.errnoText())")
        }
        proxy = newProxy
        deskaudio_shim_registry_add_listener(newProxy, listener, events, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        assert(proxy == nil, "PipeWireRegistry dropped without close()")
        events.deallocate()
        listener.deallocate()
    }

    /// Lock held: removes the listener and destroys the proxy; safe to call twice.
    func close() {
        guard let proxy else { return }
        spa_hook_remove(listener)
        pw_proxy_destroy(proxy)
        self.proxy = nil
    }
}

/// What follows the registry: told of each global (those present first, then each one added)
/// and of each removed one, on the loop thread.
protocol PipeWireRegistryListener: AnyObject {
    /// A global: its id, type ("PipeWire:Interface:Node", …) and properties.
    func global(id: UInt32, type: String, properties: PipeWireProperties)
    /// A global that went away.
    func removed(_ id: UInt32)
}

extension PipeWireRegistryListener {
    /// By default a removal is not followed.
    func removed(_ id: UInt32) {}
}

/// A listener that binds the registry on the connection it was given, and lets it go when it
/// is done: the capture's watchers (app routing, a device linked by the library, the link
/// watch). Loop lock held for both.
protocol PipeWireRegistryWatcher: PipeWireRegistryListener {
    /// The connection whose registry is followed.
    var connection: PipeWireConnection { get }
    /// The bound registry, nil before `startWatching` and after `stopWatching`.
    var registry: PipeWireRegistry? { get set }
}

extension PipeWireRegistryWatcher {
    /// Binds the registry: every global present arrives first, then the changes.
    func startWatching() throws(DeskAudioError) {
        registry = try PipeWireRegistry(on: connection, for: self)
    }

    /// Stops following the registry; safe to call twice.
    func stopWatching() {
        registry?.close()
        registry = nil
    }
}

extension PipeWireRegistry {
    /// Binds the registry on `connection` for `listener`, held unowned (it owns the registry).
    convenience init(on connection: PipeWireConnection, for listener: some PipeWireRegistryListener)
        throws(DeskAudioError)
    {
        try self.init(
            on: connection,
            onGlobal: { [unowned listener] id, type, properties in listener.global(id: id, type: type, properties: properties) },
            onRemove: { [unowned listener] id in listener.removed(id) })
    }
}
