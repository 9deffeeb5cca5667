import Glibc
import NIOCore

/// The files of the web player (the repository's web/ folder) that `serve` hands out, read
/// once at start. Only these paths are served; everything else is 404.
struct WebAssets: Sendable {
    /// One file: its bytes and content type.
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
    }

    /// The files, by request path ("/" is index.html).
    let files: [String: Asset]
    /// The folder they came from.
    let root: String

    private static let names = [
        "index.html", "demo.js", "deskaudio-player.js", "audio-frame.js", "playout-buffer.js", "player-worklet.js",
        "deskaudio-mic.js", "mic-sender.js", "mic-worklet.js",
        "deskaudio-player.d.ts", "deskaudio-mic.js", "mic-sender.js", "mic-worklet.js", "deskaudio-mic.d.ts",
        "frame-decoding.js", "player-receiver.js",
    ]

    /// Reads the player from `root`, or from the first folder that has it of: $DESKAUDIO_WEB_ROOT,
    /// ../share/deskaudio/web beside the executable (installed), and this source tree's web/.
    static func load(from root: String?) throws(CLIFailure) -> WebAssets {
        let candidates = root.map { [$0] } ?? defaultRoots()
        guard let found = candidates.first(where: { isReadable($0 + "/index.html") }) else {
            throw CLIFailure(
                "no web player found (looked in \(candidates.joined(separator: ", "))): give its folder with --web-root")
        }
        var files: [String: Asset] = [:]
        for name in names {
            guard let bytes = readFile(found + "/" + name) else {
                throw CLIFailure("the web player in \(found) has no readable \(name)")
            }
            let asset = Asset(body: ByteBuffer(bytes: bytes), contentType: contentType(of: name))
            files["/" + name] = asset
            if name == "index.html" { files["/"] = asset }
        }
        return WebAssets(files: files, root: found)
    }

    private static func defaultRoots() -> [String] {
        var roots: [String] = []
        if let environment = getenv("DESKAUDIO_WEB_ROOT") { roots.append(String(cString: environment)) }
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, Int(PATH_MAX))
        if length > 0 {
            let executable = String(decoding: path[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            roots.append(parent(parent(executable)) + "/share/deskaudio/web")
        }
        // Sources/DeskAudioCLI/Serve/WebAssets.swift → the repository's web/.
        roots.append(parent(parent(parent(parent(#filePath)))) + "/web")
        return roots
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }

    private static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    private static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
        }
    }

    private static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        return "text/plain; charset=utf-8"
    }
}
