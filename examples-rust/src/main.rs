//! Records app audio through libdeskaudio's safe Rust crate for a few seconds, decodes every
//! AudioFrame with the crate's decoder, and checks that the expected tone came through.
//!
//!     deskaudio-rust-host [SECONDS] [EXPECTED_HZ] [EXPECTED_DBFS]    (defaults: 3, 1000, -9.03)
//!
//! Exit status 0 when the tone is there: in the median 100 ms block of sound, at least 90 % of
//! the decoded energy, at the level played (within 1 dB; a sine at 0.5 is -9.03 dBFS); 1 otherwise.
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

/// The middle value (NaN for none).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn decibels(rms: f64) -> f64 {
    20.0 * rms.max(1e-9).log10()
}

fn run(seconds: f64, expected: f64, expected_dbfs: f64) -> deskaudio::Result<bool> {
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

    // The tone's share of each 100 ms block where there is sound, and its level there: judged
    // block by block, so a few broken blocks cannot hide the tone. One sum over the whole
    // recording cancels itself out where the sine's phase jumps (a cycle the server lost or
    // repeated: docs/reliability.md, "Monitor consumers that get a cycle of zeros"): in one CI
    // run it gave the tone 10 % of the energy at -19 dBFS, the host's check failing on it.
    let mut shares = Vec::new();
    let mut levels = Vec::new();
    for block in left.chunks_exact(4800) {
        let power = block.iter().map(|&s| (s as f64) * (s as f64)).sum::<f64>() / block.len() as f64;
        if power <= 1e-4 {
            continue;
        }
        let tone = tone_rms(block, expected);
        shares.push(tone * tone / power);
        levels.push(decibels(tone));
    }
    let share = median(&mut shares);
    let level = median(&mut levels);
    let off_tone = shares.iter().filter(|&&share| share <= 0.9).count();
    println!(
        "rust host: {} frames, {} decoded, {} lost; {:.1} s of sound; {expected} Hz at {level:.2} dBFS and {:.1} % of the energy (medians of {} blocks of 100 ms; {off_tone} at 90 % or less)",
        frames.len(),
        stats.frames_decoded,
        stats.frames_lost,
        shares.len() as f64 / 10.0,
        share * 100.0,
        shares.len()
    );
    Ok(shares.len() as f64 >= 10.0 * seconds * 0.5 && share > 0.9 && (level - expected_dbfs).abs() <= 1.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse().expect("SECONDS is a number")).unwrap_or(3.0);
    let expected: f64 = args.next().map(|s| s.parse().expect("EXPECTED_HZ is a number")).unwrap_or(1000.0);
    let expected_dbfs: f64 = args.next().map(|s| s.parse().expect("EXPECTED_DBFS is a number")).unwrap_or(-9.03);
    match run(seconds, expected, expected_dbfs) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(error) => {
            eprintln!("rust host: {error}");
            std::process::exit(1);
        }
    }
}
