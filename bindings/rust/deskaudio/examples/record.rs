//! Records app audio for a few seconds through the safe crate, decodes the AudioFrames with
//! the crate's decoder and writes them to a WAV file; prints the frame count and level.
//!
//!     cargo run --example record -- [SECONDS] [OUT.wav]      (defaults: 5, record.wav)
#![deny(unsafe_code)]

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5.0);
    let path = args.next().unwrap_or_else(|| "record.wav".to_string());
    if deskaudio::abi_version() != deskaudio::ABI_VERSION {
        return Err(format!("built for ABI {}, loaded {}", deskaudio::ABI_VERSION, deskaudio::abi_version()).into());
    }

    let (sender, frames) = mpsc::channel::<Vec<u8>>();
    let mut capture = deskaudio::Capture::new()?;
    capture.on_frame(move |frame| {
        let _ = sender.send(frame.bytes().to_vec()); // a real host sends these bytes to its viewer
    })?;
    capture.enable(false, true)?;
    let mut decoder = deskaudio::Decoder::new()?;
    let mut pcm: Vec<f32> = Vec::new();
    let mut count = 0;
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    while let Ok(frame) = frames.recv_timeout(end.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))) {
        pcm.extend_from_slice(decoder.decode(&frame)?.samples);
        count += 1;
        if Instant::now() >= end {
            break;
        }
    }
    let backend = capture.backend().unwrap_or_default();
    capture.stop()?;

    let peak = pcm.iter().fold(0f32, |peak, sample| peak.max(sample.abs()));
    write_wav(&path, &pcm)?;
    println!(
        "{count} frames ({:.1} s), peak {:.1} dBFS, backend {backend}: wrote {path}",
        pcm.len() as f64 / 96_000.0,
        20.0 * peak.max(1e-9).log10()
    );
    Ok(())
}

/// A 48 kHz stereo 32-bit float WAV file.
fn write_wav(path: &str, samples: &[f32]) -> std::io::Result<()> {
    let data = samples.len() as u32 * 4;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    file.write_all(b"RIFF")?;
    file.write_all(&(36 + data).to_le_bytes())?;
    file.write_all(b"WAVEfmt ")?;
    file.write_all(&16u32.to_le_bytes())?;
    file.write_all(&3u16.to_le_bytes())?; // IEEE float
    file.write_all(&2u16.to_le_bytes())?;
    file.write_all(&48_000u32.to_le_bytes())?;
    file.write_all(&(48_000u32 * 8).to_le_bytes())?;
    file.write_all(&8u16.to_le_bytes())?;
    file.write_all(&32u16.to_le_bytes())?;
    file.write_all(b"data")?;
    file.write_all(&data.to_le_bytes())?;
    for sample in samples {
        file.write_all(&sample.to_le_bytes())?;
    }
    file.flush()
}
