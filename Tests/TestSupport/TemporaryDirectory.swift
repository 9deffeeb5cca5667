import Foundation

/// A folder of its own under the system's temporary directory, made when created and
/// removed with everything in it when the last reference goes: held by a suite, whose
/// instance lives for one test, it leaves nothing behind.
public final class TemporaryDirectory: Sendable {
    /// Where the folder is.
    public let url: URL

    /// Makes `/tmp/PREFIX-UUID`.
    public init(prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// `name` inside the folder.
    public func appendingPathComponent(_ name: String) -> URL { url.appendingPathComponent(name) }
}
