// The browser microphone's sender (web/mic-sender.js) on simulated frames and a fake
// encoder: the AudioFrames' fields, the zero gate's counts and mute's, exactly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseAudioFrame, Flags } from "../../web/audio-frame.js";
import { MicrophoneSender, FRAME_SAMPLES, ZERO_FRAMES_SENT, MUTE_FRAMES_SENT } from "../../web/mic-sender.js";

// A sender whose encoder answers each frame at once (or, `later`, when flushed) with a
// packet naming the frame's first sample clock.
function rig({ channels = 1, later = false, startTimeNs = 5_000_000_000n } = {}) {
  const sent = [];
  const queue = [];
  const sender = new MicrophoneSender({
    channels,
    startTimeNs,
    send: (bytes) => sent.push(parseAudioFrame(bytes)),
    encode: ({ timestampUs, sampleClock }) => {
      // (The encoder's own timestamp, off by 1 µs: not what pairs packets with frames.)
      const packet = () => sender.packet(timestampUs + 1, new Uint8Array([0xf8, sampleClock & 0xff]));
      if (later) queue.push(packet);
      else packet();
    },
  });
  const flush = () => queue.splice(0).forEach((packet) => packet());
  return { sender, sent, flush };
}

const tone = (channels = 1) => new Float32Array(FRAME_SAMPLES * channels).fill(0.25);
const zeros = (channels = 1) => new Float32Array(FRAME_SAMPLES * channels);

test("each frame becomes an AudioFrame: sequence, sample clock, capture time and flags exact", () => {
  const { sender, sent } = rig();
  for (let index = 0; index < 10; index++) sender.push(tone());
  assert.equal(sent.length, 10);
  sent.forEach((frame, index) => {
    assert.equal(frame.sequence, index);
    assert.equal(frame.sampleClock, BigInt(index * 480));
    assert.equal(frame.captureTimeNs, 5_000_000_000n + BigInt(index) * 10_000_000n);
    assert.equal(frame.flags, Flags.MIC);
    assert.equal(frame.channels, 1);
    assert.equal(frame.frameSamples, 480);
    assert.equal(frame.payload[1], (index * 480) & 0xff);
  });
});

test("stereo frames say 2 channels; a frame of the wrong length is refused and counts nothing", () => {
  const { sender, sent } = rig({ channels: 2 });
  sender.push(tone(2));
  assert.throws(() => sender.push(tone(1)), RangeError);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].channels, 2);
  assert.equal(sender.counts.framesIn, 1);
  assert.throws(() => new MicrophoneSender({ channels: 3, send() {}, encode() {} }), RangeError);
});

test("the zero gate: 800 zero frames sent, the 801st on held, the next sound sent with AFTER_GAP", () => {
  const { sender, sent } = rig();
  sender.push(tone());
  for (let index = 0; index < ZERO_FRAMES_SENT + 50; index++) sender.push(zeros());
  assert.equal(sent.length, 1 + ZERO_FRAMES_SENT);
  assert.equal(sender.counts.framesHeld, 50);
  sender.push(tone());
  const resumed = sent.at(-1);
  assert.equal(sent.length, 2 + ZERO_FRAMES_SENT);
  assert.equal(resumed.sequence, 1 + ZERO_FRAMES_SENT); // no hole: nothing was lost
  assert.equal(resumed.sampleClock, BigInt((1 + ZERO_FRAMES_SENT + 50) * 480)); // the clock ran on
  assert.equal(resumed.flags, Flags.MIC | Flags.AFTER_GAP);
  sender.push(tone());
  assert.equal(sent.at(-1).flags, Flags.MIC);
});

test("800 zero frames and then sound: never held, no AFTER_GAP", () => {
  const { sender, sent } = rig();
  for (let index = 0; index < ZERO_FRAMES_SENT; index++) sender.push(zeros());
  sender.push(tone());
  assert.equal(sent.length, ZERO_FRAMES_SENT + 1);
  assert.equal(sender.counts.framesHeld, 0);
  assert.ok(sent.every((frame) => !frame.afterGap));
});

test("mute: three frames of silence sent, then none; unmute: the next frame carries AFTER_GAP", () => {
  const { sender, sent } = rig();
  const encoded = [];
  const encode = sender.encode;
  sender.encode = (frame) => {
    encoded.push(frame.pcm.every((sample) => sample === 0));
    encode(frame);
  };
  sender.push(tone());
  sender.setMuted(true);
  for (let index = 0; index < 20; index++) sender.push(tone());
  assert.equal(sent.length, 1 + MUTE_FRAMES_SENT);
  assert.deepEqual(encoded, [false, true, true, true]); // the muted frames went out as silence
  assert.equal(sender.counts.framesHeld, 20 - MUTE_FRAMES_SENT);
  sender.setMuted(true); // muting again changes nothing
  sender.setMuted(false);
  sender.push(tone());
  assert.equal(sent.at(-1).flags, Flags.MIC | Flags.AFTER_GAP);
  assert.equal(sent.at(-1).sequence, 1 + MUTE_FRAMES_SENT);
  assert.equal(sent.at(-1).sampleClock, BigInt(21 * 480));
});

test("mute shorter than its silence frames: no gap, no AFTER_GAP", () => {
  const { sender, sent } = rig();
  sender.setMuted(true);
  sender.push(tone());
  sender.push(tone());
  sender.setMuted(false);
  sender.push(tone());
  assert.equal(sent.length, 3);
  assert.ok(sent.every((frame) => !frame.afterGap));
});

test("an encoder that answers late, with timestamps of its own: frames in order, each with its own clock; a packet for no frame dropped", () => {
  const { sender, sent, flush } = rig({ later: true });
  for (let index = 0; index < 5; index++) sender.push(tone());
  assert.equal(sent.length, 0);
  flush();
  assert.deepEqual(sent.map((frame) => Number(frame.sampleClock)), [0, 480, 960, 1440, 1920]);
  assert.deepEqual(sent.map((frame) => frame.sequence), [0, 1, 2, 3, 4]);
  sender.packet(50_000, new Uint8Array([0xf8])); // a flush's tail: no frame of ours
  sender.packet(0, new Uint8Array([0xf8]));
  assert.equal(sent.length, 5);
  assert.equal(sender.counts.packetsUnmatched, 2);
});

test("the cutter makes 480-sample frames of chunks of any length, mixed to the channels asked for", async () => {
  const { FrameCutter } = await import("../../web/mic-sender.js");
  const frames = [];
  const mono = new FrameCutter(1, (pcm) => frames.push(pcm));
  const left = Float32Array.from({ length: 1000 }, (_, index) => index + 1);
  const right = Float32Array.from({ length: 1000 }, (_, index) => -(index + 1) + 2 * (index + 1)); // = left
  for (const [start, length] of [[0, 128], [128, 333], [461, 539]]) {
    mono.push([left.subarray(start, start + length), right.subarray(start, start + length)], length);
  }
  assert.equal(frames.length, 2);
  assert.equal(frames[0].length, 480);
  assert.equal(frames[1][0], 481);
  assert.equal(frames[1][479], 960);
  const stereoFrames = [];
  const stereo = new FrameCutter(2, (pcm) => stereoFrames.push(pcm));
  stereo.push([left], 480);
  assert.equal(stereoFrames.length, 1);
  assert.equal(stereoFrames[0][0], 1);
  assert.equal(stereoFrames[0][480], 1); // the one channel copied to both
  assert.equal(stereo.inputHoles, 0);
});

test("the cutter counts holes of 64 exact zeros or more inside sound, not silence before or after it", async () => {
  const { FrameCutter, INPUT_HOLE_SAMPLES } = await import("../../web/mic-sender.js");
  const cutter = new FrameCutter(1, () => {});
  const chunk = (values) => cutter.push([Float32Array.from(values)], values.length);
  chunk(new Array(500).fill(0)); // silence first: no hole
  chunk(new Array(100).fill(0.5));
  chunk(new Array(INPUT_HOLE_SAMPLES - 1).fill(0)); // too short to be a hole
  chunk([0.5]);
  chunk(new Array(INPUT_HOLE_SAMPLES).fill(0));
  chunk([0.5]);
  chunk(new Array(1000).fill(0)); // silence after: not yet a hole
  assert.equal(cutter.inputHoles, 1);
});
