// The browser player's jitter buffer on simulated time (node --test, simulation.js): judged
// on the samples that came out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { driftRun, longestQuietRun, run, seeded } from "./simulation.js";
import { PlayoutBuffer } from "../../web/playout-buffer.js";

test("a steady network plays the tone unbroken at a low delay", () => {
  let concealedWhileSending = null;
  const onBlock = (nowMs, buffer) => {
    if (nowMs >= 19400 && concealedWhileSending === null) concealedWhileSending = buffer.stats.framesConcealed;
  };
  const { levels, buffer } = run({ seconds: 20, network: () => 2, onBlock });
  assert.equal(longestQuietRun(levels, 50, levels.length - 60), 0);
  assert.equal(buffer.stats.framesLost, 0);
  assert.equal(buffer.stats.frameMs, 10);
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
    const result = driftRun(senderRate);
    console.log(`${name}:`, JSON.stringify(result));
    assert.ok(Math.abs(result.lastMinuteP99 - result.firstMinuteP99) <= 5, JSON.stringify(result));
    assert.ok(result.longestQuietRun <= 1);
  });
}

test("the zero gate: silence through the gap, no loss, the tone back promptly", () => {
  // 3 s of tone, 10 s of silence at the host (8 s of zero frames sent, then the gate), 3 s
  // of tone.
  const zero = (i) => i >= 300 && i < 1100;
  const silent = (i) => i >= 1100 && i < 1300;
  let concealedAt13s = null;
  const onBlock = (nowMs, buffer) => {
    if (nowMs >= 13000 && concealedAt13s === null) concealedAt13s = buffer.stats.framesConcealed;
  };
  const { levels, buffer } = run({ seconds: 16, network: () => 3, zero, silent, onBlock });
  assert.equal(buffer.stats.framesLost, 0);
  assert.equal(buffer.stats.gaps, 1);
  assert.ok(levels.slice(320, 1290).every((level) => level < 1e-30), "silence through the gap");
  // The gate's silence is waited through, not concealed (only the stream's end at 16 s is).
  assert.equal(concealedAt13s, 0, "frames concealed by 13 s");
  // The tone stops at 3.0 s and returns at 13.0 s at the host: it comes back with the delay
  // it stopped with (the sample clock ran on through the gap), to the 10 ms block.
  const end = levels.findIndex((level, i) => i >= 250 && level < 0.01);
  const back = levels.findIndex((level, i) => i >= 1300 && level > 0.3);
  assert.ok(Math.abs((back - 1300) - (end - 300)) <= 1, `stopped ${(end - 300) * 10} ms late, back ${(back - 1300) * 10} ms late`);
});

test("a receiver whose main thread stalls 20-80 ms every 0.3-2.8 s (a busy core): the stalls stay covered, the pitch stays", () => {
  // Frames due during a stall arrive together when it ends. Before the delay covered 20 s of
  // jitter, the stall was forgotten after 2.5 s: concealed again and again (25 frames after
  // the first 10 s), frames dropped, and playback 0.16 % fast on average (1.6 Hz on a 1 kHz tone).
  const random = seeded(11);
  const stalls = [];
  for (let at = 500; at < 60000; at += 300 + random() * 2500) stalls.push([at, at + 20 + random() * 60]);
  const network = (i) => {
    const due = i * 10 + 11;
    const stall = stalls.find(([start, end]) => due >= start && due < end);
    return stall ? stall[1] - i * 10 - 10 : 1;
  };
  let concealedBy10s = 0;
  let rateSum = 0;
  let rateBlocks = 0;
  const onBlock = (nowMs, buffer) => {
    if (nowMs < 10000) {
      concealedBy10s = buffer.stats.framesConcealed;
    } else {
      rateSum += buffer.stats.rate;
      rateBlocks++;
    }
  };
  const { levels, buffer } = run({ seconds: 60, network, onBlock });
  const meanRate = rateSum / rateBlocks;
  console.log("stalls:", JSON.stringify(buffer.stats), "concealed in the first 10 s", concealedBy10s, "mean rate", meanRate);
  assert.equal(longestQuietRun(levels, 100, levels.length - 60), 0);
  assert.ok(buffer.stats.framesConcealed - concealedBy10s <= 15, `${buffer.stats.framesConcealed - concealedBy10s} concealed after 10 s`);
  assert.ok(Math.abs(meanRate - 1) <= 0.0005, `mean playback rate ${meanRate}`);
  assert.ok(buffer.stats.framesDropped <= 6, `${buffer.stats.framesDropped} frames dropped`);
});

test("a frame decoded again in order replaces the audio of that frame while it waits, and counts for nothing", () => {
  const buffer = new PlayoutBuffer({ startDelayMs: 0 });
  const pcm = (value) => new Float32Array(960).fill(value);
  buffer.push({ sequence: 0, sampleClock: 0, afterGap: false, pcm: pcm(0.1), arrivalMs: 0 });
  buffer.push({ sequence: 0, sampleClock: 0, afterGap: false, pcm: pcm(0.2), arrivalMs: 1, replace: true });
  const left = new Float32Array(128);
  const right = new Float32Array(128);
  buffer.render(left, right, 1);
  assert.ok(left.every((sample) => Math.abs(sample - 0.2) < 1e-6), `played ${left[0]}`);
  // Played already: a replacement changes nothing and is not counted as late or received.
  buffer.push({ sequence: 0, sampleClock: 0, afterGap: false, pcm: pcm(0.3), arrivalMs: 2, replace: true });
  assert.equal(buffer.stats.framesReceived, 1);
  assert.equal(buffer.stats.framesLate, 0);
});
