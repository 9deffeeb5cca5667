import Foundation

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
@discardableResult
public func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return condition()
}
