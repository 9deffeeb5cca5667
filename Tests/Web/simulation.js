// The simulation the jitter buffer's tests run: a 1 kHz tone sent as 10 ms frames through a
// seeded network (jitter, loss, clock drift), rendered in 128-sample blocks as an AudioWorklet
// would. Plain ES module: node's tests (playout-buffer.test.mjs) and a browser page
// (drift.html, run in Chromium by Tests/Browser/browser_test.py) both import it.
import { PlayoutBuffer } from "../../web/playout-buffer.js";

const RATE = 48000;
const FRAME = 480;
const BLOCK = 128;

// A small seeded generator (mulberry32), so every run sees the same network.
export function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A frame of the tone; at amplitude 0, what Opus decodes digital silence to (not exact zeros:
// the gate's frames played in Chromium peaked at 2e-34).
function toneFrame(firstSample, amplitude = 0.5) {
  const pcm = new Float32Array(FRAME * 2);
  for (let i = 0; i < FRAME; i++) {
    const v = amplitude === 0 ? 2e-34 * Math.sin(i) : amplitude * Math.sin((2 * Math.PI * 1000 * (firstSample + i)) / RATE);
    pcm[i * 2] = v;
    pcm[i * 2 + 1] = v;
  }
  return pcm;
}

// Runs `seconds` of a sender whose clock runs at `senderRate` × the receiver's. `network(i)`
// returns the transit of frame i in ms, or null to lose it; `zero(i)` sends frame i as
// digital silence; `silent(i)` gates it (not sent, not counted). Returns the output's per-10-ms levels and the buffer.
export function run({ seconds, network, silent = () => false, zero = () => false, senderRate = 1, buffer = new PlayoutBuffer(), onBlock }) {
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

export function longestQuietRun(levels, from, to) {
  let longest = 0;
  let run = 0;
  for (let i = from; i < to; i++) {
    run = levels[i] < 0.5 / Math.SQRT2 / 4 ? run + 1 : 0; // 12 dB below the tone
    longest = Math.max(longest, run);
  }
  return longest;
}

// A sender clock `senderRate` × the receiver's for `seconds` (10 minutes by default), over
// 5-15 ms of seeded jitter: the delay p99 of the first and the last minute, and the longest
// quiet run of the output.
export function driftRun(senderRate, seconds = 600) {
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
  const { levels, buffer } = run({ seconds, senderRate, network: () => 5 + random() * 10, onBlock });
  const p99 = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length * 0.99)];
  return {
    firstMinuteP99: p99(minutes[0]),
    lastMinuteP99: p99(minutes[minutes.length - 1]),
    longestQuietRun: longestQuietRun(levels, 100, levels.length - 60),
    stats: { ...buffer.stats },
  };
}
