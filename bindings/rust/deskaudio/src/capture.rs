use std::ffi::{c_char, c_void, CStr, CString};

use crate::closure_slot::ClosureSlot;
use crate::error::{check, Error, Result};
use crate::frame::Frame;

type FrameClosure = Box<dyn FnMut(&Frame<'_>) + Send>;
type EventClosure = Box<dyn FnMut(Event, &str) + Send>;

/// The channels a capture's frames carry (`deskaudio_capture_set_channels()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    /// One channel.
    Mono,
    /// FL FR: the default.
    Stereo,
    /// 5.1: FL FR FC LFE RL RR, Opus multistream (mapping family 1).
    Surround51,
    /// 7.1: FL FR FC LFE RL RR SL SR.
    Surround71,
    /// The layout of the sink app audio records, read at each start.
    Sink,
}

impl Channels {
    fn raw(self) -> i32 {
        match self {
            Channels::Mono => 1,
            Channels::Stereo => 2,
            Channels::Surround51 => 6,
            Channels::Surround71 => 8,
            Channels::Sink => deskaudio_sys::DESKAUDIO_CHANNELS_SINK as i32,
        }
    }
}

/// What happened to a capture (`deskaudio_capture_set_event_callback()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A source is capturing.
    Connected,
    /// The server dropped a stream; the library reconnects.
    Disconnected,
    /// A source follows a new default device, or was moved.
    DeviceChanged,
    /// Something failed that the host should know of.
    Error,
    /// An application started playing (with an app selection).
    AppStarted,
    /// An application stopped playing.
    AppStopped,
    /// A stream was connected but got no audio for 2 s; the library reopens it.
    Stalled,
    /// An event this crate does not know yet: the library's number.
    Other(i32),
}

impl Event {
    fn from_raw(value: i32) -> Event {
        match value {
            1 => Event::Connected,
            2 => Event::Disconnected,
            3 => Event::DeviceChanged,
            4 => Event::Error,
            5 => Event::AppStarted,
            6 => Event::AppStopped,
            7 => Event::Stalled,
            other => Event::Other(other),
        }
    }
}

/// A capture's counts and levels (`deskaudio_stats`; the header documents each field).
pub type Stats = deskaudio_sys::deskaudio_stats;

/// Where the capture's sample clock stands on CLOCK_MONOTONIC: `sample_clock` sounded at
/// `time_ns`, each sample lasting `nanoseconds_per_sample` (`deskaudio_clock`).
pub type Clock = deskaudio_sys::deskaudio_clock;

/// One capture: its own streams, encoder, settings and frame callback, independent of any
/// other in the process. Dropping it stops it (no frame callback runs after the drop) and
/// frees it. Every method may be called from any thread; frames and events arrive on the
/// library's own threads.
pub struct Capture {
    raw: *mut deskaudio_sys::deskaudio_capture,
    frames: Option<Box<ClosureSlot<FrameClosure>>>,
    events: Option<Box<ClosureSlot<EventClosure>>>,
}

// The C API is thread-safe for every capture call, and the closures are Send.
unsafe impl Send for Capture {}
unsafe impl Sync for Capture {}

unsafe extern "C" fn on_frame(frame: *const u8, len: deskaudio_sys::size_t, user_data: *mut c_void) {
    let Some(slot) = ClosureSlot::<FrameClosure>::from_user_data(user_data) else { return };
    if frame.is_null() {
        return;
    }
    let bytes = std::slice::from_raw_parts(frame, len as usize);
    slot.call(|closure| closure(&Frame::new(bytes)));
}

unsafe extern "C" fn on_event(event: i32, detail: *const c_char, user_data: *mut c_void) {
    let Some(slot) = ClosureSlot::<EventClosure>::from_user_data(user_data) else { return };
    let detail = if detail.is_null() { String::new() } else { CStr::from_ptr(detail).to_string_lossy().into_owned() };
    slot.call(|closure| closure(Event::from_raw(event), &detail));
}

fn text(value: &str) -> Result<CString> {
    CString::new(value).map_err(|_| Error::invalid_argument(format!("{value:?} holds a NUL byte")))
}

impl Capture {
    /// A stopped capture with default settings (stereo, 128 kbit/s, 10 ms frames).
    pub fn new() -> Result<Capture> {
        let raw = unsafe { deskaudio_sys::deskaudio_capture_create() };
        if raw.is_null() {
            return Err(Error::last(deskaudio_sys::DESKAUDIO_ERROR_OUT_OF_RESOURCES));
        }
        Ok(Capture { raw, frames: None, events: None })
    }

    /// Calls `closure` with each AudioFrame, on the library's delivery thread, the frame
    /// borrowed for the call. A panic in it is caught: the closure is not called again and
    /// `callback_panic()` says why. Replaces the closure before; once this returns, the old
    /// one is not called again.
    pub fn on_frame(&mut self, closure: impl FnMut(&Frame<'_>) + Send + 'static) -> Result<()> {
        let slot = ClosureSlot::<FrameClosure>::new(Box::new(closure));
        check(unsafe { deskaudio_sys::deskaudio_capture_set_frame_callback(self.raw, Some(on_frame), slot.user_data()) })?;
        self.frames = Some(slot);
        Ok(())
    }

    /// Calls `closure` with each event and its detail text, on a library thread; a panic in
    /// it is caught as in `on_frame`.
    pub fn on_event(&mut self, closure: impl FnMut(Event, &str) + Send + 'static) -> Result<()> {
        let slot = ClosureSlot::<EventClosure>::new(Box::new(closure));
        check(unsafe { deskaudio_sys::deskaudio_capture_set_event_callback(self.raw, Some(on_event), slot.user_data()) })?;
        self.events = Some(slot);
        Ok(())
    }

    /// The message of the panic that stopped the frame closure, if one did.
    pub fn callback_panic(&self) -> Option<String> {
        self.frames.as_ref().and_then(|slot| slot.panic_message())
    }

    /// Starts, changes or stops capture: microphone and/or app audio, mixed; (false, false) stops.
    pub fn enable(&self, mic: bool, app: bool) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_enable(self.raw, mic, app) }).map(drop)
    }

    /// Stops capture (enable(false, false)).
    pub fn stop(&self) -> Result<()> {
        self.enable(false, false)
    }

    /// The Opus bitrate, bits per second (6000–510000), from the next frame.
    pub fn set_bitrate(&self, bits_per_second: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_bitrate(self.raw, bits_per_second) }).map(drop)
    }

    /// The Opus complexity, 0–10, from the next frame.
    pub fn set_complexity(&self, complexity: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_complexity(self.raw, complexity) }).map(drop)
    }

    /// The frames' length in microseconds: 2500, 5000, 10000 (the default) or 20000.
    pub fn set_frame_duration(&self, microseconds: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_frame_duration(self.raw, microseconds) }).map(drop)
    }

    /// The frames' channels, from the next start.
    pub fn set_channels(&self, channels: Channels) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_channels(self.raw, channels.raw()) }).map(drop)
    }

    /// 5.1 and 7.1 as libopus's surround encoder codes them (`discrete` false, the default)
    /// or as one Opus stream per channel (true: the channels kept apart, at a cost in bits),
    /// from the next start (`deskaudio_capture_set_surround_streams()`).
    pub fn set_discrete_surround(&self, discrete: bool) -> Result<()> {
        let streams = if discrete { deskaudio_sys::DESKAUDIO_SURROUND_DISCRETE } else { deskaudio_sys::DESKAUDIO_SURROUND_COUPLED };
        check(unsafe { deskaudio_sys::deskaudio_capture_set_surround_streams(self.raw, streams as i32) }).map(drop)
    }

    /// The quantum PipeWire streams ask the graph for, in samples per channel at 48 kHz: 32
    /// to 480, or 0 for the frame's length within 5–10 ms (the default), from the next start
    /// (`deskaudio_capture_set_pipewire_quantum()`: a smaller one, less latency, every
    /// application on the server waking more often).
    pub fn set_pipewire_quantum(&self, samples: i32) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_pipewire_quantum(self.raw, samples) }).map(drop)
    }

    /// The zero gate on (the default) or off.
    pub fn set_gate(&self, enabled: bool) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_gate(self.raw, enabled) }).map(drop)
    }

    /// "pipewire", "pulse" or "auto", for the next start.
    pub fn set_backend(&self, name: &str) -> Result<()> {
        let name = text(name)?;
        check(unsafe { deskaudio_sys::deskaudio_capture_set_backend(self.raw, name.as_ptr()) }).map(drop)
    }

    /// App audio from this sink's monitor (None: the default sink, followed).
    pub fn set_app_device(&self, name: Option<&str>) -> Result<()> {
        let name = name.map(text).transpose()?;
        let pointer = name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr());
        check(unsafe { deskaudio_sys::deskaudio_capture_set_app_device(self.raw, pointer) }).map(drop)
    }

    /// The microphone from this source (None: the default source).
    pub fn set_mic_device(&self, name: Option<&str>) -> Result<()> {
        let name = name.map(text).transpose()?;
        let pointer = name.as_ref().map_or(std::ptr::null(), |name| name.as_ptr());
        check(unsafe { deskaudio_sys::deskaudio_capture_set_mic_device(self.raw, pointer) }).map(drop)
    }

    /// While true, what app audio records stays off this machine's speakers.
    pub fn set_mute_host(&self, mute: bool) -> Result<()> {
        check(unsafe { deskaudio_sys::deskaudio_capture_set_mute_host(self.raw, mute) }).map(drop)
    }

    /// Takes the loss the host saw (0–1); returns the bitrate now in force.
    pub fn report_packet_loss(&self, loss_fraction: f32) -> Result<i32> {
        check(unsafe { deskaudio_sys::deskaudio_capture_report_packet_loss(self.raw, loss_fraction) })
    }

    /// The backend capturing now ("pipewire" or "pulse"), None while stopped.
    pub fn backend(&self) -> Option<String> {
        let name = unsafe { deskaudio_sys::deskaudio_capture_backend(self.raw) };
        if name.is_null() {
            return None;
        }
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        (!name.is_empty()).then_some(name)
    }

    /// Counts and levels so far.
    pub fn stats(&self) -> Result<Stats> {
        let mut stats: Stats = unsafe { std::mem::zeroed() };
        check(unsafe { deskaudio_sys::deskaudio_capture_get_stats(self.raw, &mut stats, std::mem::size_of::<Stats>() as deskaudio_sys::size_t) })?;
        Ok(stats)
    }

    /// Where the sample clock stands on CLOCK_MONOTONIC after the last chunk of audio: a
    /// frame's `sample_clock` placed on the host's video timeline. An error before the
    /// first chunk.
    pub fn clock(&self) -> Result<Clock> {
        let mut clock: Clock = unsafe { std::mem::zeroed() };
        check(unsafe { deskaudio_sys::deskaudio_capture_get_clock(self.raw, &mut clock, std::mem::size_of::<Clock>() as deskaudio_sys::size_t) })?;
        Ok(clock)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        // Stops first: no callback runs once this returns, so the closures can go after it.
        unsafe { deskaudio_sys::deskaudio_capture_destroy(self.raw) };
    }
}
