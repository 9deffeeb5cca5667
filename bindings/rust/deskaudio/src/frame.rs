use crate::error::{check, Result};

/// One AudioFrame as the library hands it to a frame callback: the bytes to send to the
/// viewer, borrowed for the call only (copy them to keep them).
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    bytes: &'a [u8],
}

/// An AudioFrame's header fields (docs/wire-format.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// Frames sent before this one (wraps at 2^32): a hole means loss in transit.
    pub sequence: u32,
    /// 48 kHz sample index of the frame's first sample.
    pub sample_clock: u64,
    /// CLOCK_MONOTONIC ns on the sender at which the first sample was captured.
    pub capture_time_ns: u64,
    /// Samples per channel the frame decodes to (480 for 10 ms).
    pub frame_samples: u16,
    /// Channels of the encoded audio (2; 6 for 5.1, 8 for 7.1).
    pub channels: u8,
    /// Layout version: 1, or 2 for surround.
    pub version: u8,
    /// `DESKAUDIO_FRAME_*` bits (after gap, app, mic, host, after loss).
    pub flags: u8,
    /// Bytes of the Opus packet.
    pub payload_length: u32,
}

impl<'a> Frame<'a> {
    /// A frame over `bytes` (received from the network, say).
    pub fn new(bytes: &'a [u8]) -> Frame<'a> {
        Frame { bytes }
    }

    /// The AudioFrame's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Reads the header; an error names what is wrong with bytes that are not an AudioFrame.
    pub fn info(&self) -> Result<FrameInfo> {
        let mut info: deskaudio_sys::deskaudio_frame_info = unsafe { std::mem::zeroed() };
        check(unsafe { deskaudio_sys::deskaudio_parse_frame(self.bytes.as_ptr(), self.bytes.len() as deskaudio_sys::size_t, &mut info, std::mem::size_of::<deskaudio_sys::deskaudio_frame_info>() as deskaudio_sys::size_t) })?;
        Ok(FrameInfo {
            sequence: info.sequence,
            sample_clock: info.sample_clock,
            capture_time_ns: info.capture_time_ns,
            frame_samples: info.frame_samples,
            channels: info.channels,
            version: info.version,
            flags: info.flags,
            payload_length: info.payload_length,
        })
    }
}
