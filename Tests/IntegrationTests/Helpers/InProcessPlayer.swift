import Foundation
import TestSupport

/// Plays a sine from this very process through libpulse's simple API (loaded with dlopen,
/// as a host would link it): the host's own playback, which app selections leave out unless
/// asked. Blocks until it has played.
enum InProcessPlayer {
    private struct SampleSpec {
        var format: Int32 = 5  // PA_SAMPLE_FLOAT32LE
        var rate: UInt32 = 48_000
        var channels: UInt8 = 2
    }

    /// pa_buffer_attr: -1 leaves a field to the server.
    private struct BufferAttributes {
        var maxlength = UInt32.max
        var tlength = UInt32.max
        var prebuf = UInt32.max
        var minreq = UInt32.max
        var fragsize = UInt32.max
    }

    private typealias New = @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutablePointer<Int32>?
    ) -> OpaquePointer?
    private typealias Write = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeMutablePointer<Int32>?) -> Int32
    private typealias Drain = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> Int32
    private typealias Free = @convention(c) (OpaquePointer?) -> Void

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Plays `seconds` of `frequency` at `amplitude` to the default sink, as application `name`,
    /// with 200 ms of buffer as the tests' `pacat` players have (libpulse's default is 2 s).
    static func play(frequency: Double, amplitude: Float, seconds: Double, name: String) throws {
        guard let library = dlopen("libpulse-simple.so.0", RTLD_NOW) else {
            throw Failure(description: "libpulse-simple.so.0: \(String(cString: dlerror()))")
        }
        defer { dlclose(library) }
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let address = dlsym(library, name) else { throw Failure(description: "no \(name)") }
            return unsafeBitCast(address, to: type)
        }
        let new = try symbol("pa_simple_new", as: New.self)
        let write = try symbol("pa_simple_write", as: Write.self)
        let drain = try symbol("pa_simple_drain", as: Drain.self)
        let free = try symbol("pa_simple_free", as: Free.self)
        var spec = SampleSpec()
        var buffer = BufferAttributes()
        buffer.tlength = UInt32(48_000 / 5 * 2 * MemoryLayout<Float>.size)
        var error: Int32 = 0
        guard let stream = new(nil, name, 1 /* PA_STREAM_PLAYBACK */, nil, "tone", &spec, nil, &buffer, &error) else {
            throw Failure(description: "pa_simple_new failed (\(error))")
        }
        defer { free(stream) }
        let samples = SignalAnalysis.sine(frequency: frequency, amplitude: amplitude, frames: Int(seconds * 48_000))
        for start in stride(from: 0, to: samples.count, by: 960) {
            let chunk = samples[start..<min(start + 960, samples.count)]
            let status = chunk.withUnsafeBytes { write(stream, $0.baseAddress, $0.count, &error) }
            guard status == 0 else { throw Failure(description: "pa_simple_write failed (\(error))") }
        }
        _ = drain(stream, &error)
    }
}
