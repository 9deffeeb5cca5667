// The player hands each Opus decoder its frames in sequence order, whatever order they arrive
// in (web/deskaudio-player.js): checked with a stand-in for WebCodecs' AudioDecoder that
// records what each decoder instance was given.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AudioFramePlayer } from "../../web/deskaudio-player.js";

const decoders = [];
globalThis.EncodedAudioChunk = class {
  constructor({ data }) {
    this.sequence = data[0];
  }
};
globalThis.AudioDecoder = class {
  constructor({ output }) {
    this.output = output;
    this.state = "unconfigured";
    this.given = [];
    decoders.push(this);
  }
  configure() {
    this.state = "configured";
  }
  decode(chunk) {
    this.given.push(chunk.sequence);
    const planes = [new Float32Array(480).fill(chunk.sequence), new Float32Array(480).fill(chunk.sequence)];
    this.output({
      numberOfFrames: 480,
      numberOfChannels: 2,
      copyTo: (plane, { planeIndex }) => plane.set(planes[planeIndex]),
      close() {},
    });
  }
  close() {
    this.state = "closed";
  }
};

// A version 1 stereo AudioFrame whose one-byte payload is its sequence number.
function frame(sequence) {
  const bytes = new Uint8Array(37);
  const view = new DataView(bytes.buffer);
  bytes.set([0x44, 0x41, 0x46, 0x52, 1, 0, 2, 1]);
  view.setUint32(8, 48000, true);
  view.setUint32(12, sequence, true);
  view.setBigUint64(16, BigInt(sequence * 480), true);
  view.setUint16(32, 480, true);
  view.setUint16(34, 1, true);
  bytes[36] = sequence;
  return bytes;
}

function newPlayer() {
  decoders.length = 0;
  const posted = [];
  const node = { port: { postMessage: (message) => posted.push(message) } };
  return { player: new AudioFramePlayer({}, node), posted };
}

test("frames in order go to one decoder, in order", () => {
  const { player, posted } = newPlayer();
  for (const sequence of [1, 2, 3, 4]) player.push(frame(sequence));
  assert.equal(decoders.length, 1);
  assert.deepEqual(decoders[0].given, [1, 2, 3, 4]);
  assert.deepEqual(posted.map((message) => message.sequence), [1, 2, 3, 4]);
});

test("a frame that arrives after a later one is decoded in order on the spare decoder, which takes over", () => {
  const { player, posted } = newPlayer();
  for (const sequence of [1, 2, 3, 5, 4, 6, 9, 7, 8, 8]) player.push(frame(sequence));
  const [first, second] = decoders;
  // 4 came after 5: the spare decoder has 2, 3 (run-up), 4, 5 again, and decodes from then
  // on (6, 9); 7 came after 9: the first decoder, spare now, has 5, 6, 7, 9 again; 8 after 9:
  // the second has 6, 7, 8, 9; the duplicate 8: the first has 6, 7, 8, 9.
  assert.deepEqual(first.given, [1, 2, 3, 5, 5, 6, 7, 9, 6, 7, 8, 9]);
  assert.deepEqual(second.given, [2, 3, 4, 5, 6, 9, 6, 7, 8, 9]);
  // No decoder is ever given a frame older than the one before it without a run-up: each
  // goes back only to restart two frames before a late one.
  // The worklet gets each frame once as it arrives, and the frames after a late one again
  // to replace their audio; every one with its own samples. The run-up's audio is dropped.
  assert.deepEqual(posted.map((message) => `${message.sequence}${message.replace ? "r" : ""}`),
    ["1", "2", "3", "5", "4", "5r", "6", "9", "7", "9r", "8", "9r", "8", "9r"]);
  assert.ok(posted.every((message) => message.pcm[0] === message.sequence));
  assert.equal(player.stats.framesOutOfOrder, 4);
});

test("a frame far behind is a sender that started again: the frames' own decoder takes it", () => {
  const { player } = newPlayer();
  for (const sequence of [5000, 5001, 3, 4]) player.push(frame(sequence));
  assert.equal(decoders.length, 1);
  assert.deepEqual(decoders[0].given, [5000 & 0xff, 5001 & 0xff, 3, 4]); // (the payload byte)
});

test("a context of the viewer's own at another rate than 48 kHz is refused, not played at the wrong pitch", async () => {
  const context = { sampleRate: 44100, audioWorklet: { addModule: async () => assert.fail("went on to load the worklet") } };
  await assert.rejects(AudioFramePlayer.create({ context }), (error) => {
    assert.ok(error instanceof RangeError);
    assert.match(error.message, /must run at 48000 Hz, this one runs at 44100 Hz/);
    return true;
  });
});

test("arrival jitter: each frame's lateness against the earliest transit of the last 2.56 s, p50 and p99", () => {
  const { player } = newPlayer();
  // 400 frames 10 ms apart: 20 of them 6 ms late, 8 (2 %) 12 ms late.
  for (let sequence = 0; sequence < 400; sequence++) {
    const late = sequence % 50 === 25 ? 12 : sequence % 20 === 10 ? 6 : 0;
    player.decoding.push(frame(sequence), 1000 + sequence * 10 + late);
  }
  assert.deepEqual(player.decoding.arrivalJitter, { p50: 0, p99: 12 });
  assert.equal(player.stats.arrivalJitterP99Ms, 12);
});
