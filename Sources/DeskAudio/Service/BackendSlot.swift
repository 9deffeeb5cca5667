import Synchronization

/// An optional AudioBackend that any thread may read or replace without a lock.
final class BackendSlot: Sendable {
    private let code = Atomic<UInt8>(0)  // 0: none, else 1 + the backend's index

    /// The backend held, or nil.
    var value: AudioBackend? {
        get {
            let stored = Int(code.load(ordering: .acquiring))
            return stored == 0 ? nil : AudioBackend.allCases[stored - 1]
        }
        set {
            let stored = newValue.flatMap { AudioBackend.allCases.firstIndex(of: $0) }.map { UInt8($0 + 1) } ?? 0
            code.store(stored, ordering: .releasing)
        }
    }
}
