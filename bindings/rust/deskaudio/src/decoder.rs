use crate::error::{check, Error, Result};

/// What a decoder writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecoderOutput {
    /// Interleaved stereo; surround folded (L = FL + 0.707 FC + 0.707 RL (+ 0.707 SL)).
    Stereo,
    /// Each frame's own channels in the servers' order (FL FR FC LFE RL RR SL SR).
    AsSent,
}

/// What one `decode` call wrote: interleaved samples of `channels` channels, borrowed from
/// the decoder until its next call.
#[derive(Clone, Copy, Debug)]
pub struct Pcm<'a> {
    /// Interleaved 48 kHz float samples.
    pub samples: &'a [f32],
    /// Interleaved channels (2, or as sent: 6 for 5.1, 8 for 7.1).
    pub channels: usize,
}

impl Pcm<'_> {
    /// Samples per channel.
    pub fn frames(&self) -> usize {
        self.samples.len() / self.channels
    }

    /// Channel `index`'s samples, one per sample frame.
    pub fn channel(&self, index: usize) -> impl Iterator<Item = f32> + '_ {
        self.samples.iter().skip(index).step_by(self.channels).copied()
    }
}

/// A decoder's counts (`deskaudio_decoder_stats`; the header documents each field).
pub type DecoderStats = deskaudio_sys::deskaudio_decoder_stats;

/// The receiving side: AudioFrames of one stream in, 48 kHz float PCM out, frames lost in
/// transit concealed. Use it from one thread at a time (it is `Send`, not `Sync`).
pub struct Decoder {
    raw: *mut deskaudio_sys::deskaudio_decoder,
    pcm: Vec<f32>,
}

unsafe impl Send for Decoder {}

impl Decoder {
    /// A decoder writing stereo.
    pub fn new() -> Result<Decoder> {
        Decoder::with_output(DecoderOutput::Stereo)
    }

    /// A decoder writing `output`.
    pub fn with_output(output: DecoderOutput) -> Result<Decoder> {
        let channels = match output {
            DecoderOutput::Stereo => 2,
            DecoderOutput::AsSent => deskaudio_sys::DESKAUDIO_DECODER_AS_SENT as i32,
        };
        let raw = unsafe { deskaudio_sys::deskaudio_decoder_create_with_output(channels) };
        if raw.is_null() {
            return Err(Error::last(deskaudio_sys::DESKAUDIO_ERROR_ENCODER));
        }
        let room = deskaudio_sys::DESKAUDIO_DECODER_MAX_SAMPLES as usize * deskaudio_sys::DESKAUDIO_DECODER_MAX_CHANNELS as usize;
        Ok(Decoder { raw, pcm: vec![0.0; room] })
    }

    /// Decodes one AudioFrame: the concealment of frames lost just before it, if any, then
    /// the frame, as interleaved samples of `channels()` channels (empty for a late or
    /// repeated frame). Bad bytes are an error naming what is wrong; the decoder is then
    /// unchanged.
    pub fn decode(&mut self, frame: &[u8]) -> Result<Pcm<'_>> {
        let samples = check(unsafe {
            deskaudio_sys::deskaudio_decoder_decode(
                self.raw,
                frame.as_ptr(),
                frame.len() as deskaudio_sys::size_t,
                self.pcm.as_mut_ptr(),
                deskaudio_sys::DESKAUDIO_DECODER_MAX_SAMPLES as deskaudio_sys::size_t,
            )
        })? as usize;
        let channels = self.channels();
        Ok(Pcm { samples: &self.pcm[..samples * channels], channels })
    }

    /// Interleaved channels of what `decode` returned last (2 until a frame as sent arrives).
    pub fn channels(&self) -> usize {
        unsafe { deskaudio_sys::deskaudio_decoder_get_channels(self.raw) }.max(1) as usize
    }

    /// Counts so far.
    pub fn stats(&self) -> DecoderStats {
        let mut stats: DecoderStats = unsafe { std::mem::zeroed() };
        unsafe { deskaudio_sys::deskaudio_decoder_get_stats(self.raw, &mut stats, std::mem::size_of::<DecoderStats>() as deskaudio_sys::size_t) };
        stats
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        unsafe { deskaudio_sys::deskaudio_decoder_destroy(self.raw) };
    }
}
