//! The safe crate against a real audio server (scripts/test starts a private one and points
//! XDG_RUNTIME_DIR at it): a capture records a tone played into the default sink, the
//! crate's decoder decodes it, frequency and level are checked; a panicking closure is
//! caught and reported; bad input comes back as an Error. Run with --test-threads=1: the
//! tests play into the same sink.
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskaudio::{Capture, Decoder, Frame};

/// Plays a 1 kHz sine at `amplitude` for `seconds` into the default sink with pacat.
fn play_tone(amplitude: f32, seconds: f64) -> Child {
    let mut player = Command::new("pacat")
        .args(["--playback", "--raw", "--format=float32le", "--rate=48000", "--channels=2", "--latency-msec=200"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("pacat runs (pulseaudio-utils)");
    let frames = (seconds * 48_000.0) as usize;
    let mut bytes = Vec::with_capacity(frames * 8);
    for index in 0..frames {
        let sample = amplitude * (2.0 * std::f64::consts::PI * 1000.0 * index as f64 / 48_000.0).sin() as f32;
        bytes.extend_from_slice(&sample.to_le_bytes());
        bytes.extend_from_slice(&sample.to_le_bytes());
    }
    player.stdin.take().unwrap().write_all(&bytes).expect("pacat takes the tone");
    player
}

/// RMS level, dBFS, of the `frequency` component of `samples` (Goertzel).
fn tone_dbfs(samples: &[f32], frequency: f64) -> f64 {
    let omega = 2.0 * std::f64::consts::PI * frequency / 48_000.0;
    let coefficient = 2.0 * omega.cos();
    let (mut previous, mut before) = (0.0f64, 0.0f64);
    for &sample in samples {
        let current = sample as f64 + coefficient * previous - before;
        before = previous;
        previous = current;
    }
    let power = previous * previous + before * before - coefficient * previous * before;
    20.0 * ((2.0 * power).sqrt() / samples.len() as f64).max(1e-12).log10()
}

/// The middle value.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The strongest frequency in `samples`, 20 Hz to 4 kHz in 1 Hz steps around the peak.
fn dominant_frequency(samples: &[f32]) -> f64 {
    let coarse = (20..4000).step_by(10).map(f64::from).max_by(|a, b| tone_dbfs(samples, *a).total_cmp(&tone_dbfs(samples, *b))).unwrap();
    ((coarse as i32 - 10)..=(coarse as i32 + 10)).map(f64::from).max_by(|a, b| tone_dbfs(samples, *a).total_cmp(&tone_dbfs(samples, *b))).unwrap()
}

#[test]
fn a_capture_records_the_tone_and_the_decoder_gives_it_back() {
    assert_eq!(deskaudio::abi_version(), deskaudio::ABI_VERSION, "the library loaded serves this header");
    let frames = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
    let mut capture = Capture::new().expect("a capture");
    let sink = Arc::clone(&frames);
    capture.on_frame(move |frame: &Frame| sink.lock().unwrap().push(frame.bytes().to_vec())).unwrap();
    capture.enable(false, true).expect("app audio starts");
    std::thread::sleep(Duration::from_millis(300));
    play_tone(0.5, 2.0).wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    capture.stop().unwrap();
    let stats = capture.stats().unwrap();
    drop(capture);

    let frames = std::mem::take(&mut *frames.lock().unwrap());
    assert!(frames.len() >= 200, "{} frames", frames.len());
    let info = Frame::new(&frames[0]).info().unwrap();
    assert_eq!((info.channels, info.frame_samples, info.version), (2, 480, 1));
    let mut decoder = Decoder::new().unwrap();
    let mut left = Vec::new();
    for frame in &frames {
        let pcm = decoder.decode(frame).expect("every frame decodes");
        assert_eq!(pcm.channels, 2);
        left.extend(pcm.channel(0));
    }
    // The loud part: 10 ms blocks above -30 dBFS, less the first and last.
    let blocks: Vec<&[f32]> = left.chunks(480).filter(|block| tone_dbfs(block, 1000.0) > -30.0).collect();
    assert!((190..=210).contains(&blocks.len()), "2 s of tone: {} blocks of 10 ms", blocks.len());
    // Frequency and level in each 100 ms of it, the medians judged: one sum over the whole
    // tone cancels itself out where the sine's phase jumps (a cycle the server lost or
    // repeated), which is a continuity question, not one of pitch or level.
    let interior: Vec<f32> = blocks[2..blocks.len() - 2].concat();
    let mut frequencies: Vec<f64> = interior.chunks_exact(4800).map(dominant_frequency).collect();
    let mut levels: Vec<f64> = interior.chunks_exact(4800).map(|block| tone_dbfs(block, 1000.0)).collect();
    let (frequency, level) = (median(&mut frequencies), median(&mut levels));
    println!(
        "measured: Rust crate: {} frames, 1 kHz at {frequency} Hz, {level:.2} dBFS (medians of {} blocks of 100 ms), {} decoded",
        frames.len(),
        levels.len(),
        decoder.stats().frames_decoded
    );
    assert!((frequency - 1000.0).abs() <= 2.0, "frequency {frequency} Hz");
    assert!((level - (-9.03)).abs() <= 1.0, "level {level} dBFS (a sine at 0.5 is -9.03)");
    assert_eq!(stats.frames_dropped_overflow, 0);
}

#[test]
fn a_panicking_closure_is_caught_and_reported() {
    let calls = Arc::new(Mutex::new(0u32));
    let mut capture = Capture::new().unwrap();
    let counter = Arc::clone(&calls);
    capture
        .on_frame(move |_frame: &Frame| {
            *counter.lock().unwrap() += 1;
            panic!("the host's send failed");
        })
        .unwrap();
    capture.enable(false, true).unwrap();
    // The panic is recorded once it has unwound, after the panic hook has printed its
    // message (and, with RUST_BACKTRACE set, symbolized a backtrace: over 500 ms once in CI).
    let start = std::time::Instant::now();
    while capture.callback_panic().is_none() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(capture.callback_panic().as_deref(), Some("the host's send failed"));
    let sent = capture.stats().unwrap().frames_sent;
    std::thread::sleep(Duration::from_millis(500));
    let stats = capture.stats().unwrap();
    assert!(stats.frames_sent >= sent + 20, "the capture ran on: {} frames sent, {sent} before", stats.frames_sent);
    assert_eq!(*calls.lock().unwrap(), 1, "called once, then no more");
    capture.stop().unwrap();
}

#[test]
fn bad_input_is_an_error_with_the_librarys_words() {
    let capture = Capture::new().unwrap();
    let error = capture.set_bitrate(1).unwrap_err();
    assert_eq!(error.status(), deskaudio::sys::DESKAUDIO_ERROR_INVALID_ARGUMENT);
    assert!(error.message().contains("bitrate 1"), "{error}");
    assert!(error.to_string().starts_with(&error.name()), "{error}");
    assert!(capture.set_backend("pipe\0wire").is_err());
    let mut decoder = Decoder::new().unwrap();
    let error = decoder.decode(b"not an AudioFrame at all, not one bit of it").unwrap_err();
    assert_eq!(error.status(), deskaudio::sys::DESKAUDIO_ERROR_FRAME_MAGIC, "{error}");
    assert!(error.message().contains("DAFR"), "{error}");
    assert!(Frame::new(b"short").info().is_err());
}

#[test]
fn devices_list_the_rigs_sinks_and_sources() {
    let devices = deskaudio::devices().expect("the server answers");
    assert!(devices.iter().any(|d| d.kind == deskaudio::DeviceKind::Sink && d.is_default), "{devices:?}");
    assert!(devices.iter().any(|d| d.kind == deskaudio::DeviceKind::Source), "{devices:?}");
}
