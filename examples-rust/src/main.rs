//! Records app audio through libdeskaudio's safe Rust crate for a few seconds, decodes every
//! AudioFrame with the crate's decoder, and checks that the expected tone came through.
//!
//!     deskaudio-rust-host [SECONDS] [EXPECTED_HZ]      (defaults: 3, 1000)
//!
//! Exit status 0 when the tone is there (at least 90 % of the decoded energy), 1 otherwise.
#![deny(unsafe_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

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

fn run(seconds: f64, expected: f64) -> deskaudio::Result<bool> {
    if deskaudio::abi_version() != deskaudio::ABI_VERSION {
        eprintln!("rust host: built for ABI {}, loaded ABI {}", deskaudio::ABI_VERSION, deskaudio::abi_version());
        return Ok(false);
    }
    // Frames arrive on the library's thread, borrowed for the call: keep copies.
    let received = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let mut capture = deskaudio::Capture::new()?;
    let sink = Arc::clone(&received);
    capture.on_frame(move |frame| sink.lock().unwrap().push(frame.bytes().to_vec()))?;
    capture.enable(false, true)?;
    std::thread::sleep(Duration::from_secs_f64(seconds));
    capture.stop()?;
    drop(capture); // no frame arrives after this
    let frames = std::mem::take(&mut *received.lock().unwrap());

    // Decode everything with the library's decoder (it conceals holes, if any).
    let mut decoder = deskaudio::Decoder::new()?;
    let mut left = Vec::new();
    for frame in &frames {
        left.extend(decoder.decode(frame)?.channel(0));
    }
    let stats = decoder.stats();

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
    Ok(loud.len() as f64 >= 48_000.0 * seconds * 0.5 && share > 0.9)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse().expect("SECONDS is a number")).unwrap_or(3.0);
    let expected: f64 = args.next().map(|s| s.parse().expect("EXPECTED_HZ is a number")).unwrap_or(1000.0);
    match run(seconds, expected) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(error) => {
            eprintln!("rust host: {error}");
            std::process::exit(1);
        }
    }
}
