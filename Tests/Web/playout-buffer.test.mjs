// The browser player's jitter buffer on simulated time (node --test): a 1 kHz tone sent as
// 10 ms frames through a seeded network (jitter, loss, clock drift), rendered in 128-sample
// blocks as an AudioWorklet would, and judged on the samples that came out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PlayoutBuffer } from "../../web/playout-buffer.js";

const RATE = 48000;
const FRAME = 480;
const BLOCK = 128;

// A small seeded generator (mulberry32), so every run sees the same network.
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function toneFrame(firstSample, amplitude = 0.5) {
  const pcm = new Float32Array(FRAME * 2);
  for (let i = 0; i < FRAME; i++) {
    const v = amplitude * Math.sin((2 * Math.PI * 1000 * (firstSample + i)) / RATE);
    pcm[i * 2] = v;
    pcm[i * 2 + 1] = v;
  }
  return pcm;
}

// Runs `seconds` of a sender whose clock runs at `senderRate` × the receiver's. `network(i)`
// returns the transit of frame i in ms, or null to lose it; `zero(i)` sends frame i as
// digital silence; `silent(i)` gates it (not sent, not counted). Returns the output's per-10-ms levels and the buffer.
function run({ seconds, network, silent = () => false, zero = () => false, senderRate = 1, buffer = new PlayoutBuffer(), onBlock }) {
  const events = [];
  const frames = Math.floor((seconds - 0.5) * 100 * senderRate); // all delivered before the end
  let sequence = 0;
  let gated = false;
  for (let i = 0; i < frames; i++) {
    if (silent(i)) {
      gated = true;
      continue;
    }
    const sentMs = (i * 10) / senderRate;
    const transit = network(i);
    const pcm = toneFrame(i * FRAME, zero(i) ? 0 : 0.5);
    const frame = { sequence: sequence++, sampleClock: i * FRAME, afterGap: gated, pcm };
    gated = false;
    if (transit === null) continue;
    events.push({ atMs: sentMs + 10 + transit, frame });
  }
  events.sort((a, b) => a.atMs - b.atMs);
  const left = new Float32Array(BLOCK);
  const right = new Float32Array(BLOCK);
  const levels = [];
  let blockEnergy = 0;
  let blockSamples = 0;
  let next = 0;
  const blocks = Math.floor((seconds * RATE) / BLOCK);
  for (let b = 0; b < blocks; b++) {
    const nowMs = (b * BLOCK * 1000) / RATE;
    while (next < events.length && events[next].atMs <= nowMs) {
      buffer.push({ ...events[next].frame, arrivalMs: events[next].atMs });
      next++;
    }
    buffer.render(left, right, nowMs);
    if (onBlock) onBlock(nowMs, buffer);
    for (let i = 0; i < BLOCK; i++) {
      blockEnergy += left[i] * left[i];
      if (++blockSamples === FRAME) {
        levels.push(Math.sqrt(blockEnergy / FRAME));
        blockEnergy = 0;
        blockSamples = 0;
      }
    }
  }
  return { levels, buffer };
}

function longestQuietRun(levels, from, to) {
  let longest = 0;
  let run = 0;
  for (let i = from; i < to; i++) {
    run = levels[i] < 0.5 / Math.SQRT2 / 4 ? run + 1 : 0; // 12 dB below the tone
    longest = Math.max(longest, run);
  }
  return longest;
}

test("a steady network plays the tone unbroken at a low delay", () => {
  let concealedWhileSending = null;
  const onBlock = (nowMs, buffer) => {
    if (nowMs >= 19400 && concealedWhileSending === null) concealedWhileSending = buffer.stats.framesConcealed;
  };
  const { levels, buffer } = run({ seconds: 20, network: () => 2, onBlock });
  assert.equal(longestQuietRun(levels, 50, levels.length - 60), 0);
  assert.equal(buffer.stats.framesLost, 0);
  assert.equal(concealedWhileSending, 0);
  // Frames are played within a render block or two of arriving.
  assert.ok(buffer.stats.delayP99Ms <= 10, `delay p99 ${buffer.stats.delayP99Ms} ms`);
});

test("5-35 ms of jitter and 5 % loss: loss counted exactly, every loss concealed, bounded delay", () => {
  const random = seeded(7);
  let dropped = 0;
  let lossRun = 0;
  let longestLossRun = 0;
  const network = (i) => {
    if (random() < 0.05 && i > 0) { // (a loss at either end shows in no sequence)
      dropped++;
      longestLossRun = Math.max(longestLossRun, ++lossRun);
      return null;
    }
    lossRun = 0;
    return 5 + random() * 30;
  };
  const { levels, buffer } = run({ seconds: 60, network });
  const quiet = longestQuietRun(levels, 100, levels.length - 60);
  assert.ok(quiet <= longestLossRun + 1, `quiet for ${quiet} frames, longest loss run ${longestLossRun}`);
  assert.equal(buffer.stats.framesLost, dropped);
  assert.ok(buffer.stats.delayP99Ms <= 60, `delay p99 ${buffer.stats.delayP99Ms} ms`);
  console.log("jitter+loss:", JSON.stringify(buffer.stats), "dropped", dropped, "quiet", quiet);
});

for (const [name, senderRate] of [["fast", 1.001], ["slow", 0.999]]) {
  test(`a sender clock 0.1 % ${name} for 10 minutes: the delay does not creep`, () => {
    const random = seeded(3);
    const minutes = [];
    let minute = [];
    let lastMinute = 0;
    let played = 0;
    const onBlock = (nowMs, buffer) => {
      if (buffer.stats.framesPlayed !== played) {
        played = buffer.stats.framesPlayed;
        minute.push(buffer.stats.delayMs);
      }
      if (nowMs - lastMinute >= 60000) {
        minutes.push(minute);
        minute = [];
        lastMinute = nowMs;
      }
    };
    const { levels, buffer } = run({ seconds: 600, senderRate, network: () => 5 + random() * 10, onBlock });
    const p99 = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length * 0.99)];
    const first = p99(minutes[0]);
    const last = p99(minutes[minutes.length - 1]);
    console.log(`${name}: delay p99 first minute ${first.toFixed(1)} ms, last ${last.toFixed(1)} ms, rate ${buffer.stats.rate}`, JSON.stringify(buffer.stats));
    assert.ok(Math.abs(last - first) <= 5, `first minute ${first} ms, last ${last} ms`);
    assert.ok(longestQuietRun(levels, 100, levels.length - 60) <= 1);
  });
}

test("the zero gate: silence through the gap, no loss, the tone back promptly", () => {
  // 3 s of tone, 10 s of silence at the host (8 s of zero frames sent, then the gate), 3 s
  // of tone.
  const zero = (i) => i >= 300 && i < 1100;
  const silent = (i) => i >= 1100 && i < 1300;
  const { levels, buffer } = run({ seconds: 16, network: () => 3, zero, silent });
  assert.equal(buffer.stats.framesLost, 0);
  assert.equal(buffer.stats.gaps, 1);
  assert.ok(levels.slice(320, 1290).every((level) => level === 0), "silence through the gap");
  // The tone stops at 3.0 s and returns at 13.0 s at the host: it comes back with the delay
  // it stopped with (the sample clock ran on through the gap), to the 10 ms block.
  const end = levels.findIndex((level, i) => i >= 250 && level < 0.01);
  const back = levels.findIndex((level, i) => i >= 1300 && level > 0.3);
  assert.ok(Math.abs((back - 1300) - (end - 300)) <= 1, `stopped ${(end - 300) * 10} ms late, back ${(back - 1300) * 10} ms late`);
});
