// The browser player's parser and loss accounting against Tests/Vectors/audio-frames.json,
// the vectors the C API's tests read too (Tests/DeskAudioTests/CABI/SharedVectorTests.swift).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseAudioFrame, writeAudioFrame, FrameFormatError } from "../../web/audio-frame.js";
import { PlayoutBuffer } from "../../web/playout-buffer.js";

const vectors = JSON.parse(readFileSync(new URL("../Vectors/audio-frames.json", import.meta.url)));
const STATUS = { truncated: -10, oversized: -11, magic: -12, version: -13, field: -14 };

test("every frame vector parses as it says", () => {
  assert.ok(vectors.frames.length >= 30);
  for (const vector of vectors.frames) {
    const bytes = Uint8Array.from(Buffer.from(vector.hex, "hex"));
    if (vector.error) {
      assert.throws(() => parseAudioFrame(bytes), (error) => {
        assert.ok(error instanceof FrameFormatError, vector.name);
        assert.equal(error.code, vector.error, vector.name);
        assert.equal(error.status, STATUS[vector.error], vector.name);
        return true;
      });
      continue;
    }
    const frame = parseAudioFrame(bytes);
    for (const [field, value] of Object.entries(vector.fields)) {
      let actual = frame[field];
      if (field === "sampleClock" || field === "captureTimeNs") actual = actual.toString();
      if (field === "payloadHex") actual = Buffer.from(frame.payload).toString("hex");
      if (field === "streams" || field === "coupledStreams" || field === "table") actual = frame.mapping[field];
      assert.deepEqual(actual, value, `${vector.name}: ${field}`);
    }
  }
});

test("every valid frame vector is written back to its bytes from the fields it parses to", () => {
  let written = 0;
  for (const vector of vectors.frames) {
    if (vector.error) continue;
    const bytes = Uint8Array.from(Buffer.from(vector.hex, "hex"));
    const frame = parseAudioFrame(bytes);
    const again = writeAudioFrame(frame, frame.payload);
    assert.equal(Buffer.from(again).toString("hex"), vector.hex, vector.name);
    written++;
  }
  assert.ok(written >= 10);
});

test("the writer refuses what the parser would refuse", () => {
  const good = { channels: 1, sequence: 0, sampleClock: 0, captureTimeNs: 0 };
  const payload = new Uint8Array([0xf8]);
  assert.equal(parseAudioFrame(writeAudioFrame(good, payload)).channels, 1);
  const bad = [
    [{ ...good, channels: 3 }, payload],
    [{ ...good, sequence: 2 ** 32 }, payload],
    [{ ...good, sequence: -1 }, payload],
    [{ ...good, sampleClock: -1 }, payload],
    [{ ...good, captureTimeNs: 2 ** 64 }, payload],
    [{ ...good, captureTimeNs: 1.5 }, payload],
    [{ ...good, frameSamples: 500 }, payload],
    [{ ...good, sampleRate: 44100 }, payload],
    [{ ...good, flags: 256 }, payload],
    [good, new Uint8Array(0)],
    [good, new Uint8Array(1276)],
    [good, [0xf8]],
    [{ ...good, channels: 2, mapping: { streams: 1, coupledStreams: 2, table: [0, 1] } }, payload],
  ];
  for (const [fields, bytes] of bad) assert.throws(() => writeAudioFrame(fields, bytes), RangeError, JSON.stringify(fields));
});

test("an ArrayBuffer is read like its bytes", () => {
  const bytes = Uint8Array.from(Buffer.from(vectors.frames[0].hex, "hex"));
  assert.equal(parseAudioFrame(bytes.buffer).sequence, 7);
});

test("every stream vector counts loss and gaps as it says", () => {
  for (const vector of vectors.streams) {
    const buffer = new PlayoutBuffer();
    const left = new Float32Array(128);
    const right = new Float32Array(128);
    let now = 0;
    vector.arrivals.forEach(([sequence, afterGap], index) => {
      buffer.push({ sequence, sampleClock: index * 480, afterGap, pcm: new Float32Array(960).fill(0.1), arrivalMs: now });
      for (let block = 0; block < 4; block++, now += 128 / 48) buffer.render(left, right, now);
    });
    for (let block = 0; block < 100; block++, now += 128 / 48) buffer.render(left, right, now);
    assert.equal(buffer.stats.framesLost, vector.lost, `${vector.name}: lost`);
    assert.equal(buffer.stats.gaps, vector.gaps, `${vector.name}: gaps`);
  }
});
