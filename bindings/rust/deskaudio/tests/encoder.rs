//! The viewer's encoder through the safe crate (no server needed): a tone encoded and decoded,
//! the echo of what is played taken out, bad input refused.

const RATE: i32 = 48_000;
const START_NS: u64 = 1_000_000_000_000;

/// The time sample `index` (48 kHz) is captured or leaves the speakers.
fn time_ns(index: usize) -> u64 {
    START_NS + index as u64 * 1_000_000_000 / RATE as u64
}

/// Seeded noise in bursts of 150 ms every 250 ms (xorshift), as a far end that talks.
fn bursts(samples: usize, mut seed: u64) -> Vec<f32> {
    (0..samples)
        .map(|index| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let noise = (seed >> 40) as f32 / (1u64 << 24) as f32 * 0.6 - 0.3;
            if index % (RATE as usize / 4) < RATE as usize * 15 / 100 { noise } else { 0.0 }
        })
        .collect()
}

#[test]
fn a_tone_encoded_is_decoded_at_its_level() {
    let mut encoder = deskaudio::Encoder::new().expect("an encoder");
    let tone: Vec<i16> = (0..16_000).map(|i| ((i as f32 * 2.0 * std::f32::consts::PI / 16.0).sin() * 8192.0) as i16).collect();
    let mut frames = Vec::new();
    let taken = encoder.push(&tone, 1, 16_000, 0, |frame| frames.push(frame.to_vec())).expect("pushed");
    assert_eq!(taken, 16_000);
    assert!(frames.len() >= 98, "{} frames for 1 s", frames.len());
    let mut decoder = deskaudio::Decoder::new().expect("a decoder");
    let mut energy = 0.0f64;
    let mut count = 0usize;
    for frame in &frames[20..] {
        let pcm = decoder.decode(frame).expect("decoded");
        for sample in pcm.channel(0) {
            energy += (sample as f64).powi(2);
            count += 1;
        }
    }
    let level_db = 10.0 * (energy / count as f64).log10();
    let expected_db = 20.0 * (0.25f64 / 2f64.sqrt()).log10();
    assert!((level_db - expected_db).abs() <= 1.0, "{level_db} dBFS, {expected_db} played");
    assert_eq!(encoder.stats().frames_sent, frames.len() as u64);
}

#[test]
fn the_echo_of_what_is_played_is_taken_out() {
    let mut encoder = deskaudio::Encoder::new().expect("an encoder");
    encoder.set_echo_cancel(true).expect("echo cancellation on");
    let played = bursts(RATE as usize * 6, 7);
    let delay = RATE as usize * 90 / 1000;
    let heard: Vec<f32> = (0..played.len()).map(|i| if i >= delay { 0.5 * played[i - delay] } else { 0.0 }).collect();
    let blocks = played.len() / 480;
    let mut frames = Vec::new();
    for block in 0..(blocks + 4) {
        // Each 10 ms of playback 40 ms before it plays; the microphone as it hears.
        if block < blocks {
            let start = block * 480;
            let taken = encoder.push_playback(&played[start..start + 480], 1, RATE, time_ns(start + 479)).expect("playback");
            assert_eq!(taken, 480);
        }
        if block >= 4 {
            let start = (block - 4) * 480;
            encoder.push(&heard[start..start + 480], 1, RATE, time_ns(start + 479), |frame| frames.push(frame.to_vec())).expect("pushed");
        }
    }
    let mut decoder = deskaudio::Decoder::new().expect("a decoder");
    let result: Vec<f32> = frames.iter().flat_map(|frame| decoder.decode(frame).expect("decoded").channel(0).collect::<Vec<_>>()).collect();
    // The last 2 s, the filter having learnt the path.
    let tail = (RATE as usize * 4)..(RATE as usize * 6 - 960);
    let energy = |samples: &[f32]| samples.iter().map(|s| (*s as f64).powi(2)).sum::<f64>();
    let enhancement_db = 10.0 * (energy(&heard[tail.clone()]) / energy(&result[tail])).log10();
    let stats = encoder.stats();
    println!("measured: echo through a 90 ms path, the last 2 s: {enhancement_db:.1} dB taken out; delay found {} ms", stats.echo_delay_ms);
    assert!(enhancement_db >= 25.0, "{enhancement_db} dB");
    // The best there is: speexdsp (1), or WebRTC's AEC3 (2) where PipeWire's plugin has it.
    assert!(matches!(stats.echo_canceller, 1 | 2), "{}", stats.echo_canceller);
    assert!((stats.echo_delay_ms - 90).abs() <= 2, "{} ms", stats.echo_delay_ms);
}

#[test]
fn the_echo_canceller_chosen_runs() {
    let mut encoder = deskaudio::Encoder::new().expect("an encoder");
    encoder.set_echo_cancel(true).expect("echo cancellation on");
    encoder.set_echo_canceller(deskaudio::EchoCanceller::Speexdsp).expect("speexdsp");
    assert_eq!(encoder.stats().echo_canceller, 1);
    match encoder.set_echo_canceller(deskaudio::EchoCanceller::WebrtcAec3) {
        Ok(()) => assert_eq!(encoder.stats().echo_canceller, 2),
        Err(error) => {
            assert_eq!(error.status(), deskaudio::sys::DESKAUDIO_ERROR_NOT_SUPPORTED);
            assert!(error.message().starts_with("WebRTC's AEC3: "), "{error}");
            assert_eq!(encoder.stats().echo_canceller, 1, "a refused choice changes nothing");
        }
    }
}

#[test]
fn bad_input_is_refused_and_a_panic_comes_back_to_the_caller() {
    let mut encoder = deskaudio::Encoder::new().expect("an encoder");
    encoder.set_echo_cancel(true).expect("echo cancellation on");
    let error = encoder.push_playback(&[0i16; 6], 3, RATE, 0).expect_err("three channels");
    assert_eq!(error.status(), deskaudio::sys::DESKAUDIO_ERROR_INVALID_ARGUMENT);
    let error = encoder.push(&[f32::NAN; 2], 1, RATE, 0, |_| {}).expect_err("a NaN");
    assert!(error.message().contains("finite"), "{error}");
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = encoder.push(&[0.1f32; 960], 1, RATE, 0, |_| panic!("the host's closure"));
    }));
    assert!(panicked.is_err(), "the closure's panic reaches the caller");
    assert_eq!(encoder.push(&[0.1f32; 480], 1, RATE, 0, |_| {}).expect("still works"), 480);
}
