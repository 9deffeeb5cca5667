import Testing

@testable import DeskAudio

/// Which default a PipeWire capture goes by when the session manager does not say
/// (`PipeWireDevices.chosenDefaults`, R-WP-RESTART): the one it last named, while that node
/// is still there.
@Suite struct ChosenDefaultsTests {
    static let lastNamed = PipeWireDefaults(sinkName: "deskaudio_sink", sourceName: "deskaudio_mic")
    static let nodes: Set<String> = ["deskaudio_sink", "deskaudio_other", "deskaudio_mic"]

    @Test func theDefaultsNamedNowAreCurrent() {
        let now = PipeWireDefaults(sinkName: "deskaudio_other", sourceName: "deskaudio_mic")
        let (defaults, current) = PipeWireDevices.chosenDefaults(answered: now, lastNamed: Self.lastNamed, nodeNames: Self.nodes)
        #expect(defaults == now && current)
    }

    @Test func aSessionManagerThatDoesNotAnswerLeavesTheLastNamedWhileTheirNodesAreThere() {
        let (defaults, current) = PipeWireDevices.chosenDefaults(
            answered: nil, lastNamed: Self.lastNamed, nodeNames: ["deskaudio_sink"])
        #expect(defaults == PipeWireDefaults(sinkName: "deskaudio_sink", sourceName: nil))
        #expect(!current)
    }

    /// WirePlumber stopped: the daemon answers, with no "default" metadata to name anything.
    @Test func noSessionManagerRunningLeavesTheLastNamedToo() {
        let (defaults, current) = PipeWireDevices.chosenDefaults(
            answered: PipeWireDefaults(), lastNamed: Self.lastNamed, nodeNames: Self.nodes)
        #expect(defaults == Self.lastNamed && !current)
        let (none, stillCurrent) = PipeWireDevices.chosenDefaults(
            answered: PipeWireDefaults(), lastNamed: PipeWireDefaults(), nodeNames: Self.nodes)
        #expect(none == PipeWireDefaults() && stillCurrent, "nothing named ever: none, as the server says")
    }

    @Test func oneNamedNowAndOneLastNamedMix() {
        let (defaults, current) = PipeWireDevices.chosenDefaults(
            answered: PipeWireDefaults(sinkName: "deskaudio_other", sourceName: nil), lastNamed: Self.lastNamed,
            nodeNames: Self.nodes)
        #expect(defaults == PipeWireDefaults(sinkName: "deskaudio_other", sourceName: "deskaudio_mic") && !current)
    }
}
