//! Records app audio through libdeskaudio for a few seconds, decodes every AudioFrame with
//! the library's decoder, and checks that the expected tone came through.
//!
//!     deskaudio-rust-host [SECONDS] [EXPECTED_HZ]      (defaults: 3, 1000)
//!
//! Exit status 0 when the tone is there (at least 90 % of the decoded energy), 1 otherwise.
#![allow(non_camel_case_types, non_upper_case_globals, dead_code)]

mod sys {
    #![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]
    include!(concat!(env!("OUT_DIR"), "/deskaudio.rs"));
}

use std::ffi::{c_void, CStr};
use std::sync::Mutex;
use std::time::Duration;

/// Frames the callback received, in order.
struct Received {
    frames: Mutex<Vec<Vec<u8>>>,
}

/// The frame callback: copies the AudioFrame (valid only during the call).
unsafe extern "C" fn on_frame(frame: *const u8, len: sys::size_t, user_data: *mut c_void) {
    let received = &*(user_data as *const Received);
    let bytes = std::slice::from_raw_parts(frame, len as usize).to_vec();
    received.frames.lock().unwrap().push(bytes);
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(sys::deskaudio_last_error()) }.to_string_lossy().into_owned()
}

/// Power of `frequency` in `samples` (Goertzel), as the RMS level of that sine component.
fn tone_rms(samples: &[f32], frequency: f64) -> f64 {
    let omega = 2.0 * std::f64::consts::PI * frequency / 48_000.0;
    let coefficient = 2.0 * omega.cos();
    let (mut previous, mut before) = (0.0f64, 0.0f64);
    for &sample in samples {
        let current = sample as f64 + coefficient * previous - before;
        before = previous;
        previous = current;
    }
    let power = previous * previous + before * before - coefficient * previous * before;
    (2.0 * power).sqrt() / samples.len() as f64
}

fn decibels(rms: f64) -> f64 {
    20.0 * rms.max(1e-9).log10()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse().expect("SECONDS is a number")).unwrap_or(3.0);
    let expected: f64 = args.next().map(|s| s.parse().expect("EXPECTED_HZ is a number")).unwrap_or(1000.0);

    let abi = unsafe { sys::deskaudio_abi_version() };
    if abi != sys::DESKAUDIO_ABI_VERSION as i32 {
        eprintln!("rust host: built for ABI {}, loaded ABI {abi}", sys::DESKAUDIO_ABI_VERSION);
        std::process::exit(1);
    }

    let received = Box::new(Received { frames: Mutex::new(Vec::new()) });
    let user_data = &*received as *const Received as *mut c_void;
    unsafe { sys::set_audio_callback(Some(on_frame), user_data) };
    let status = unsafe { sys::enable_audio(false, true) };
    if status != 0 {
        eprintln!("rust host: enable_audio: {}", last_error());
        std::process::exit(1);
    }
    std::thread::sleep(Duration::from_secs_f64(seconds));
    unsafe {
        sys::enable_audio(false, false);
        sys::set_audio_callback(None, std::ptr::null_mut());
    }
    let frames = std::mem::take(&mut *received.frames.lock().unwrap());

    // Decode everything with the library's decoder (it conceals holes, if any).
    let decoder = unsafe { sys::deskaudio_decoder_create() };
    assert!(!decoder.is_null(), "deskaudio_decoder_create: {}", last_error());
    let room = sys::DESKAUDIO_DECODER_MAX_SAMPLES as usize;
    let mut pcm = vec![0f32; room * 2];
    let mut left = Vec::new();
    for frame in &frames {
        let written = unsafe {
            sys::deskaudio_decoder_decode(
                decoder, frame.as_ptr(), frame.len() as sys::size_t, pcm.as_mut_ptr(), room as sys::size_t)
        };
        if written < 0 {
            eprintln!("rust host: a frame did not decode: {}", last_error());
            std::process::exit(1);
        }
        left.extend(pcm[..written as usize * 2].iter().step_by(2));
    }
    let mut stats: sys::deskaudio_decoder_stats = unsafe { std::mem::zeroed() };
    unsafe {
        sys::deskaudio_decoder_get_stats(decoder, &mut stats);
        sys::deskaudio_decoder_destroy(decoder);
    }

    // The tone's share of the energy, where there is sound.
    let loud: Vec<f32> = left
        .chunks(480)
        .filter(|frame| frame.iter().map(|s| s * s).sum::<f32>() / 480.0 > 1e-4)
        .flatten()
        .copied()
        .collect();
    let total_rms = (loud.iter().map(|&s| (s as f64) * (s as f64)).sum::<f64>() / loud.len().max(1) as f64).sqrt();
    let tone = tone_rms(&loud, expected);
    let share = if total_rms > 0.0 { (tone / total_rms).powi(2) } else { 0.0 };
    println!(
        "rust host: {} frames, {} decoded, {} lost; {:.1} s of sound; {expected} Hz at {:.2} dBFS, {:.1} % of the energy",
        frames.len(),
        stats.frames_decoded,
        stats.frames_lost,
        loud.len() as f64 / 48_000.0,
        decibels(tone),
        share * 100.0
    );
    let ok = loud.len() as f64 >= 48_000.0 * seconds * 0.5 && share > 0.9;
    std::process::exit(if ok { 0 } else { 1 });
}
