use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::error::{check, Error, Result};

/// A PCM sample the encoder takes: `i16`, or `f32` nominally within ±1 (NaN and infinity
/// are refused).
pub trait Sample: Copy + private::Sealed {
    /// Its `deskaudio_pcm_format`.
    const FORMAT: i32;
}

impl Sample for i16 {
    const FORMAT: i32 = deskaudio_sys::DESKAUDIO_PCM_S16 as i32;
}

impl Sample for f32 {
    const FORMAT: i32 = deskaudio_sys::DESKAUDIO_PCM_F32 as i32;
}

mod private {
    pub trait Sealed {}
    impl Sealed for i16 {}
    impl Sealed for f32 {}
}

/// Which echo canceller an encoder runs (`deskaudio_echo_canceller`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoCanceller {
    /// WebRTC's AEC3 where present, else speexdsp: the default.
    Best,
    /// speexdsp's adaptive filter and residual echo suppressor, on every system.
    Speexdsp,
    /// WebRTC's AEC3, through PipeWire's echo-cancel plugin where PipeWire is built on
    /// webrtc-audio-processing 1.0 or later (Debian 13; not Debian 12).
    WebrtcAec3,
}

/// An encoder's counts and its echo canceller's figures (`deskaudio_encoder_stats`; the
/// header documents each field).
pub type EncoderStats = deskaudio_sys::deskaudio_encoder_stats;

/// The viewer's side of two-way audio: its microphone's PCM (1 or 2 channels, 8–96 kHz, any
/// chunk size) becomes AudioFrames for the host's `RemoteMic`, with the echo of what the
/// viewer plays taken out when asked (`set_echo_cancel`, `push_playback`). It is `Send`,
/// not `Sync`.
pub struct Encoder {
    raw: *mut deskaudio_sys::deskaudio_encoder,
}

unsafe impl Send for Encoder {}

/// What `push` hands the trampoline: the caller's closure, and the panic it raised, if any.
struct FrameSink<'a> {
    on_frame: &'a mut dyn FnMut(&[u8]),
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn frame_trampoline(frame: *const u8, len: deskaudio_sys::size_t, user_data: *mut c_void) {
    let sink = unsafe { &mut *(user_data as *mut FrameSink<'_>) };
    if sink.panic.is_some() || frame.is_null() {
        return;
    }
    let bytes = unsafe { std::slice::from_raw_parts(frame, len as usize) };
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| (sink.on_frame)(bytes))) {
        sink.panic = Some(panic);
    }
}

fn bytes_of<S: Sample>(samples: &[S]) -> (*const c_void, deskaudio_sys::size_t) {
    (samples.as_ptr() as *const c_void, std::mem::size_of_val(samples) as deskaudio_sys::size_t)
}

impl Encoder {
    /// An encoder at 128 kbit/s, complexity 10, echo cancellation off.
    pub fn new() -> Result<Encoder> {
        let raw = unsafe { deskaudio_sys::deskaudio_encoder_create() };
        if raw.is_null() {
            return Err(Error::last(deskaudio_sys::DESKAUDIO_ERROR_ENCODER));
        }
        Ok(Encoder { raw })
    }

    /// Encodes interleaved `samples` of `channels` channels at `sample_rate` Hz, whose last
    /// sample was captured at `end_time_ns` (CLOCK_MONOTONIC; 0: now), and calls `on_frame`
    /// with each AudioFrame completed, on this thread, before it returns. Returns the sample
    /// frames taken: all of them. Bad input takes nothing and is an error. A panic in
    /// `on_frame` stops the frames it is given and is resumed once the library returns.
    pub fn push<S: Sample>(
        &mut self,
        samples: &[S],
        channels: i32,
        sample_rate: i32,
        end_time_ns: u64,
        mut on_frame: impl FnMut(&[u8]),
    ) -> Result<usize> {
        let mut sink = FrameSink { on_frame: &mut on_frame, panic: None };
        let (data, bytes) = bytes_of(samples);
        let taken = unsafe {
            deskaudio_sys::deskaudio_encoder_push_pcm(
                self.raw,
                data,
                bytes,
                S::FORMAT,
                channels,
                sample_rate,
                end_time_ns,
                Some(frame_trampoline),
                &mut sink as *mut FrameSink<'_> as *mut c_void,
            )
        };
        if let Some(panic) = sink.panic {
            resume_unwind(panic);
        }
        Ok(check(taken)? as usize)
    }

    /// Turns echo cancellation on or off from the next push on (off at first; turned on
    /// again, it starts afresh): on, what `push_playback` hands in is taken out of what
    /// `push` hands in.
    pub fn set_echo_cancel(&mut self, enabled: bool) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_encoder_set_echo_cancel(self.raw, enabled) })?;
        Ok(())
    }

    /// Chooses the echo canceller that cancellation runs; one running with another starts
    /// afresh with this one. `WebrtcAec3` where it cannot run is an error that says why
    /// (`DESKAUDIO_ERROR_NOT_SUPPORTED`), changing nothing.
    pub fn set_echo_canceller(&mut self, canceller: EchoCanceller) -> Result<()> {
        let value = match canceller {
            EchoCanceller::Best => deskaudio_sys::DESKAUDIO_ECHO_CANCELLER_BEST,
            EchoCanceller::Speexdsp => deskaudio_sys::DESKAUDIO_ECHO_CANCELLER_SPEEXDSP,
            EchoCanceller::WebrtcAec3 => deskaudio_sys::DESKAUDIO_ECHO_CANCELLER_WEBRTC_AEC3,
        };
        check(unsafe { deskaudio_sys::deskaudio_encoder_set_echo_canceller(self.raw, value as i32) })?;
        Ok(())
    }

    /// Hands in what the viewer is about to play, as `push` takes PCM, its last sample
    /// leaving the speakers at `end_time_ns` (CLOCK_MONOTONIC; 0: now): push it before the
    /// microphone can hear it, and all of it (a pause counts as silence). Returns the sample
    /// frames taken: all of them; while echo cancellation is off they are checked and dropped.
    pub fn push_playback<S: Sample>(
        &mut self,
        samples: &[S],
        channels: i32,
        sample_rate: i32,
        end_time_ns: u64,
    ) -> Result<usize> {
        let (data, bytes) = bytes_of(samples);
        let taken = unsafe {
            deskaudio_sys::deskaudio_encoder_push_playback(self.raw, data, bytes, S::FORMAT, channels, sample_rate, end_time_ns)
        };
        Ok(check(taken)? as usize)
    }

    /// Sets the bitrate (6000–510000 bit/s) from the next frame on.
    pub fn set_bitrate(&mut self, bits_per_second: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_encoder_set_bitrate(self.raw, bits_per_second) })?;
        Ok(())
    }

    /// Marks a break in the microphone's audio (closed, then opened again) after what was
    /// pushed so far, `skipped_samples` (48 kHz) long: the next frame is flagged after a gap.
    pub fn mark_gap(&mut self, skipped_samples: u64) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_encoder_mark_gap(self.raw, skipped_samples) })?;
        Ok(())
    }

    /// Counts so far, and the echo canceller's figures.
    pub fn stats(&self) -> EncoderStats {
        let mut stats: EncoderStats = unsafe { std::mem::zeroed() };
        unsafe {
            deskaudio_sys::deskaudio_encoder_get_stats(self.raw, &mut stats, std::mem::size_of::<EncoderStats>() as deskaudio_sys::size_t)
        };
        stats
    }
}

impl Drop for Encoder {
    fn drop(&mut self) {
        unsafe { deskaudio_sys::deskaudio_encoder_destroy(self.raw) };
    }
}
