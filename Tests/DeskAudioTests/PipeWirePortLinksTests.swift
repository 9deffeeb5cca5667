import Testing

@testable import DeskAudio

/// The links the PipeWire linkers make themselves are forgotten with either of their ports or
/// their source node, so the same ports, or new ones under reused ids, are linked again
/// (R-WP-PORTS: WirePlumber 0.4.13 coming back replaced an idle sink's monitor ports, and
/// the library's links to them, and the linker took the dead links for live ones).
@Suite struct PipeWirePortLinksTests {
    // A sink (node 30) with monitor ports 38 (FL) and 32 (FR), linked into a capture's input
    // ports 60 and 61.
    static func linked() -> PipeWirePortLinks<String> {
        var links = PipeWirePortLinks<String>()
        links.insert("FL link", for: PipeWirePortPair(outputNode: 30, output: 38, input: 60))
        links.insert("FR link", for: PipeWirePortPair(outputNode: 30, output: 32, input: 61))
        return links
    }

    @Test func aLinkWhoseOutputPortGoesIsForgotten() {
        var links = Self.linked()
        #expect(links.remove(touching: 38) == ["FL link"])
        #expect(links.linkedInputs == [61])
        // The new monitor port comes back under the same id: its link is missing again.
        #expect(!links.contains(PipeWirePortPair(outputNode: 30, output: 38, input: 60)))
        #expect(links.contains(PipeWirePortPair(outputNode: 30, output: 32, input: 61)))
    }

    @Test func aLinkWhoseInputPortGoesIsForgotten() {
        var links = Self.linked()
        #expect(links.remove(touching: 61) == ["FR link"])
        #expect(links.linkedInputs == [60])
    }

    @Test func theLinksOfANodeThatGoesAreForgotten() {
        var links = Self.linked()
        #expect(links.remove(touching: 30).sorted() == ["FL link", "FR link"])
        #expect(links.linkedInputs.isEmpty)
    }

    @Test func anotherGlobalTouchesNoLink() {
        var links = Self.linked()
        #expect(links.remove(touching: 99).isEmpty)
        #expect(links.linkedInputs == [60, 61])
    }

    @Test func removingAllReturnsEachLinkOnce() {
        var links = Self.linked()
        #expect(links.removeAll().sorted() == ["FL link", "FR link"])
        #expect(links.removeAll().isEmpty)
    }
}
