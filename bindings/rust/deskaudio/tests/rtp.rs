//! The RTP packetizer through the safe crate, on AudioFrames laid out here (no server needed).

/// An AudioFrame (version 1, stereo, 10 ms) with these fields and a 3-byte Opus packet.
fn frame(sequence: u32, sample_clock: u64, flags: u8) -> Vec<u8> {
    let mut bytes = b"DAFR".to_vec();
    bytes.extend([1, flags, 2, 1]);
    bytes.extend(48_000u32.to_le_bytes());
    bytes.extend(sequence.to_le_bytes());
    bytes.extend(sample_clock.to_le_bytes());
    bytes.extend(1_000_000_000u64.to_le_bytes());
    bytes.extend(480u16.to_le_bytes());
    bytes.extend(3u16.to_le_bytes());
    bytes.extend([0xf8, 0xff, 0xfe]);
    bytes
}

fn sequence_and_timestamp(packet: &[u8]) -> (u16, u32) {
    (u16::from_be_bytes([packet[2], packet[3]]), u32::from_be_bytes([packet[4], packet[5], packet[6], packet[7]]))
}

#[test]
fn frames_become_rtp_packets_and_the_gate_gap_moves_only_the_timestamp() {
    let mut packetizer = deskaudio::RtpPacketizer::new(111, 42).expect("a packetizer");
    let first = packetizer.packetize(&frame(0, 0, 2)).expect("a packet").to_vec();
    assert_eq!(first[0], 0x80, "RTP version 2, nothing else set");
    assert_eq!(first[1], 0x80 | 111, "the marker on the first packet, payload type 111");
    assert_eq!(&first[8..12], &42u32.to_be_bytes());
    assert_eq!(&first[12..], &[0xf8, 0xff, 0xfe], "the Opus packet as it was");
    let (sequence, timestamp) = sequence_and_timestamp(&first);
    // 2 s of gated silence, then the first frame after it (AFTER_GAP | APP).
    let after_gap = packetizer.packetize(&frame(1, 480 + 96_000, 3)).expect("a packet").to_vec();
    assert_eq!(sequence_and_timestamp(&after_gap), (sequence.wrapping_add(1), timestamp.wrapping_add(96_480)));
    assert_eq!(after_gap[1] & 0x80, 0x80, "the marker after the gap");
    let sdp = packetizer.sdp("127.0.0.1", 5004).expect("an SDP");
    assert!(sdp.contains("a=rtpmap:111 opus/48000/2\r\n"), "{sdp}");
}

#[test]
fn bad_input_is_an_error_with_its_own_status() {
    let mut packetizer = deskaudio::RtpPacketizer::new(96, 0).expect("a packetizer");
    let error = packetizer.packetize(b"not a frame").unwrap_err();
    assert_eq!(error.status(), deskaudio::sys::DESKAUDIO_ERROR_FRAME_MAGIC);
    assert_eq!(packetizer.set_format(3, 480).unwrap_err().status(), deskaudio::sys::DESKAUDIO_ERROR_INVALID_ARGUMENT);
    assert!(deskaudio::RtpPacketizer::new(8, 0).is_err(), "a static payload type");
    assert!(packetizer.sdp("bad\r\nhost", 1).is_err());
}
