use std::ffi::{c_char, CStr, CString};

use crate::error::{check, Error, Result};

/// AudioFrames of one stream in, standard RTP packets out (RFC 3550 header, the frame's Opus
/// packet as RFC 7587's payload; 5.1 and 7.1 as WebRTC's multiopus), and the SDP that
/// describes the stream. Drive it from the frame callback. It is `Send`, not `Sync`.
pub struct RtpPacketizer {
    raw: *mut deskaudio_sys::deskaudio_rtp_packetizer,
    packet: Vec<u8>,
}

unsafe impl Send for RtpPacketizer {}

impl RtpPacketizer {
    /// A packetizer with this dynamic payload type (96-127, or 35-63) and SSRC (0: random).
    pub fn new(payload_type: u8, ssrc: u32) -> Result<RtpPacketizer> {
        let raw = unsafe { deskaudio_sys::deskaudio_rtp_packetizer_create(payload_type, ssrc) };
        if raw.is_null() {
            return Err(Error::last(deskaudio_sys::DESKAUDIO_ERROR_INVALID_ARGUMENT));
        }
        Ok(RtpPacketizer { raw, packet: vec![0; deskaudio_sys::DESKAUDIO_RTP_MAX_PACKET as usize] })
    }

    /// Declares the stream's channels (1, 2, 6, 8) and samples per packet (120, 240, 480,
    /// 960) before the first packet, so that `sdp` describes it before any frame.
    pub fn set_format(&mut self, channels: i32, frame_samples: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_rtp_packetizer_set_format(self.raw, channels, frame_samples) })?;
        Ok(())
    }

    /// Puts the abs-capture-time header extension on every packet under `id` (1-14); 0: off.
    pub fn set_abs_capture_time(&mut self, id: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_rtp_packetizer_set_abs_capture_time(self.raw, id) })?;
        Ok(())
    }

    /// The RTP packet for one AudioFrame, borrowed until the next call. Bad bytes, or a frame
    /// of other channels than the stream's, are an error; the stream is then unchanged.
    pub fn packetize(&mut self, frame: &[u8]) -> Result<&[u8]> {
        let length = check(unsafe {
            deskaudio_sys::deskaudio_rtp_packetize(
                self.raw,
                frame.as_ptr(),
                frame.len() as deskaudio_sys::size_t,
                self.packet.as_mut_ptr(),
                self.packet.len() as deskaudio_sys::size_t,
            )
        })? as usize;
        Ok(&self.packet[..length])
    }

    /// The SDP of the stream sent to `address` (IPv4, IPv6 or a host name) and `port`.
    pub fn sdp(&self, address: &str, port: u16) -> Result<String> {
        let address = CString::new(address).map_err(|_| Error::invalid_argument("address contains a NUL byte"))?;
        let mut text = vec![0 as c_char; deskaudio_sys::DESKAUDIO_RTP_MAX_SDP as usize];
        check(unsafe {
            deskaudio_sys::deskaudio_rtp_sdp(
                self.raw,
                address.as_ptr(),
                port,
                text.as_mut_ptr(),
                text.len() as deskaudio_sys::size_t,
            )
        })?;
        Ok(unsafe { CStr::from_ptr(text.as_ptr()) }.to_string_lossy().into_owned())
    }
}

impl Drop for RtpPacketizer {
    fn drop(&mut self) {
        unsafe { deskaudio_sys::deskaudio_rtp_packetizer_destroy(self.raw) }
    }
}
