//! DeskAudio for Rust remote-desktop hosts: the machine's sound (app audio, the microphone,
//! both mixed) captured through PipeWire or PulseAudio, cut into 10 ms Opus AudioFrames for
//! the viewer; the viewer's side decodes them; the viewer's microphone, encoded with the echo
//! of its speakers taken out (`Encoder`), can become a microphone on the host (`RemoteMic`).
//!
//! ```no_run
//! use std::sync::mpsc;
//! let (sender, frames) = mpsc::channel::<Vec<u8>>();
//! let mut capture = deskaudio::Capture::new()?;
//! capture.on_frame(move |frame| { let _ = sender.send(frame.bytes().to_vec()); })?;
//! capture.enable(false, true)?;                  // app audio
//! let mut decoder = deskaudio::Decoder::new()?;  // on the viewer's side
//! for frame in frames.iter().take(100) {
//!     let pcm = decoder.decode(&frame)?;         // 48 kHz stereo f32: pcm.samples
//!     # let _ = pcm;
//! }
//! # Ok::<(), deskaudio::Error>(())
//! ```
//!
//! Handles free themselves when dropped; closures are called on the library's threads and a
//! panic in one is caught, never unwound into the library. Every fallible call returns
//! `Result<_, Error>` with the library's status and its explanation.
#![deny(missing_docs)]

mod capture;
mod closure_slot;
mod decoder;
mod devices;
mod encoder;
mod error;
mod frame;
mod remote_mic;
mod rtp;

pub use capture::{Capture, Channels, Clock, Event, Stats};
pub use decoder::{Decoder, DecoderOutput, DecoderStats, Pcm};
pub use devices::{apps, devices, App, Device, DeviceKind};
pub use encoder::{EchoCanceller, Encoder, EncoderStats, Sample};
pub use error::{Error, Result};
pub use frame::{Frame, FrameInfo};
pub use remote_mic::{Recording, RemoteMic, RemoteMicStats};
pub use rtp::RtpPacketizer;

/// The raw C API (status codes, constants, and calls this crate does not wrap yet).
pub use deskaudio_sys as sys;

/// The ABI version this crate was built against (the header's `DESKAUDIO_ABI_VERSION`).
pub const ABI_VERSION: i32 = deskaudio_sys::DESKAUDIO_ABI_VERSION as i32;

/// The loaded library's version, "0.2.0".
pub fn version() -> String {
    let text = unsafe { deskaudio_sys::deskaudio_version() };
    if text.is_null() {
        return String::new();
    }
    unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

/// The loaded library's ABI version: a host checks it equals `ABI_VERSION` at start-up.
pub fn abi_version() -> i32 {
    unsafe { deskaudio_sys::deskaudio_abi_version() }
}
