// Receiving AudioFrames: parsed (./audio-frame.js), decoded with WebCodecs' AudioDecoder in
// sequence order whatever order they arrive in, handed on as interleaved stereo PCM. Used
// by the player on the page's thread (push()) and in its receiving Worker
// (./player-receiver.js), so that page work cannot delay it.
import { parseAudioFrame } from "./audio-frame.js";

const SAMPLE_RATE = 48000;
const SQRT_HALF = Math.SQRT1_2;

/** Frames in, `output(meta, pcm)` out (meta: sequence, sampleClock, afterGap, replace). */
export class FrameDecoding {
  constructor(output) {
    this.output = output;
    // Frames are decoded as they arrive, by `decoder`, whose state runs from one frame to the
    // next (the MDCT overlap, the energy prediction): a frame decoded after a later one comes
    // out with a click of the later sound in it, and the later one, decoded without it, too
    // quiet or too loud. So a frame that arrives after a later one (a transport that reorders)
    // goes to `spareDecoder`, after the two frames before it, and the frames after it that
    // were already decoded follow it there again, their audio replacing what they had where
    // it has not played yet; that decoder, which has now had them all in order, takes over.
    this.decoder = null;
    this.spareDecoder = null;
    this.config = null;
    this.format = "";
    this.newest = null; // the newest sequence number `decoder` has had
    this.recent = new Map(); // sequence -> frame, the last RECENT_FRAMES (late frames' run-up)
    this.unsupported = new Set(); // channel layouts the browser's decoder refused
    this.counts = { framesInvalid: 0, framesUndecodable: 0, framesOutOfOrder: 0, lastError: null };
    this.arrivals = new ArrivalJitter();
  }

  /** How late frames arrived, ms, beyond the earliest of the last 2.56 s (their transit against
   * their sample clock): the 50th and 99th percentiles over every frame so far. */
  get arrivalJitter() {
    return this.arrivals.percentiles();
  }

  /**
   * Takes one AudioFrame (Uint8Array or ArrayBuffer); returns its parsed fields. Throws
   * FrameFormatError for bytes that are not one; nothing already accepted is lost.
   */
  push(bytes, arrivalMs = performance.now()) {
    let frame;
    try {
      frame = parseAudioFrame(bytes);
    } catch (error) {
      this.counts.framesInvalid++;
      this.counts.lastError = error.message;
      throw error;
    }
    this.arrivals.add(arrivalMs - Number(frame.sampleClock) / 48);
    if (!this.configureFor(frame)) return frame;
    this.recent.set(frame.sequence, frame);
    this.recent.delete((frame.sequence - RECENT_FRAMES) >>> 0);
    // How far behind the newest decoded frame (0: that one again); further back than a stream
    // reorders, it is a sender that started again.
    const behind = this.newest === null ? -1 : -((frame.sequence - this.newest) | 0);
    if (behind >= 0 && behind < NEW_STREAM_FRAMES) {
      this.decodeLate(frame);
    } else {
      this.newest = frame.sequence;
      this.decoder.decode(frame, frameFields(frame));
    }
    return frame;
  }

  // A frame older than one already decoded: on the spare decoder, after the two frames before
  // it (their audio dropped: they set its state), then the frames after it up to the newest
  // again (their audio replacing theirs); the spare decoder takes over.
  decodeLate(frame) {
    this.counts.framesOutOfOrder++;
    let decoder = this.spareDecoder;
    try {
      decoder ??= new FrameDecoder(this.config, (meta, pcm) => this.output(meta, pcm), (error) => this.failed(error));
    } catch {
      this.decoder.decode(frame, frameFields(frame)); // as without a spare: a click, not silence
      return;
    }
    for (const back of [2, 1]) {
      const before = this.recent.get((frame.sequence - back) >>> 0);
      if (before) decoder.decode(before, null);
    }
    decoder.decode(frame, frameFields(frame));
    for (let sequence = (frame.sequence + 1) >>> 0; sequence !== ((this.newest + 1) >>> 0); sequence = (sequence + 1) >>> 0) {
      const after = this.recent.get(sequence);
      if (after) decoder.decode(after, { ...frameFields(after), replace: true });
    }
    this.spareDecoder = this.decoder;
    this.decoder = decoder;
  }

  /** Frees the decoders. */
  close() {
    this.closeDecoders();
  }

  closeDecoders() {
    this.decoder?.close();
    this.spareDecoder?.close();
    this.decoder = this.spareDecoder = null;
    this.newest = null;
    this.recent.clear();
  }

  // A decoder for this frame's channel layout; false (and counted) where the browser has none.
  configureFor(frame) {
    const format = frame.mapping ? `${frame.channels}:${frame.mapping.table.join(",")}` : `${frame.channels}`;
    if (format === this.format && this.decoder?.configured) return true;
    if (this.unsupported.has(format)) {
      this.counts.framesUndecodable++;
      return false;
    }
    this.closeDecoders();
    this.format = format;
    this.config = { codec: "opus", sampleRate: SAMPLE_RATE, numberOfChannels: frame.channels };
    if (frame.mapping) this.config.description = opusHead(frame);
    try {
      this.decoder = new FrameDecoder(this.config, (meta, pcm) => this.output(meta, pcm), (error) => this.failed(error));
    } catch (error) {
      this.counts.framesUndecodable++;
      this.counts.lastError = `${frame.channels} channels: not supported here (${error.message})`;
      this.format = "";
      return false;
    }
    return true;
  }

  // A decoder's error: a layout this browser cannot decode is not tried again; any other (a
  // bad packet) gets new decoders with the next frame.
  failed(error) {
    if (error.name === "NotSupportedError") {
      this.unsupported.add(this.format);
      this.counts.lastError = `${this.config.numberOfChannels} channels: not supported by this browser's decoder`;
    } else {
      this.counts.lastError = `decoder: ${error.message}`;
    }
    this.format = "";
  }
}

// Each frame's transit (arrival less its sample clock, ms) against the least of the last 256
// (2.56 s of 10 ms frames): its lateness, counted in 0.5 ms bins up to 1 s.
class ArrivalJitter {
  constructor() {
    this.window = new Float64Array(256);
    this.count = 0;
    this.bins = new Uint32Array(2001);
    this.total = 0;
  }

  add(transitMs) {
    this.window[this.count++ % this.window.length] = transitMs;
    let least = Infinity;
    for (let index = 0; index < Math.min(this.count, this.window.length); index++) {
      if (this.window[index] < least) least = this.window[index];
    }
    this.bins[Math.min(this.bins.length - 1, Math.round((transitMs - least) * 2))]++;
    this.total++;
  }

  percentiles() {
    const at = (fraction) => {
      let seen = 0;
      for (let bin = 0; bin < this.bins.length; bin++) {
        seen += this.bins[bin];
        if (seen >= fraction * this.total) return bin / 2;
      }
      return NaN;
    };
    return this.total ? { p50: at(0.5), p99: at(0.99) } : { p50: NaN, p99: NaN };
  }
}

// Frames kept for a late frame's run-up on the late decoder.
const RECENT_FRAMES = 16;
// A frame further behind the newest than this is a new stream, not a late one.
const NEW_STREAM_FRAMES = 256;

// What the worklet takes of a frame besides its PCM (and `replace`: the same frame decoded
// again in order, whose audio replaces what it had if it has not played yet).
function frameFields(frame) {
  return { sequence: frame.sequence, sampleClock: Number(frame.sampleClock), afterGap: frame.afterGap };
}

// One WebCodecs AudioDecoder and the frames it was given, in order (it outputs one AudioData
// each): `onPcm(meta, pcm)` gets each frame's audio as interleaved stereo (surround folded
// down as the library's StereoDownmix does); a frame given with meta null is decoded for its
// state only. Throws where the browser cannot be configured for `config`.
class FrameDecoder {
  constructor(config, onPcm, onError) {
    this.pending = [];
    this.decoder = new AudioDecoder({
      output: (data) => {
        const meta = this.pending.shift();
        if (meta) onPcm(meta, toStereo(data));
        data.close();
      },
      error: onError,
    });
    this.decoder.configure(config);
  }

  get configured() {
    return this.decoder.state === "configured";
  }

  decode(frame, meta) {
    this.pending.push(meta);
    const timestamp = Number((frame.sampleClock * 1000000n) / BigInt(SAMPLE_RATE));
    this.decoder.decode(new EncodedAudioChunk({ type: "key", timestamp, data: frame.payload }));
  }

  close() {
    if (this.decoder.state !== "closed") this.decoder.close();
  }
}

function toStereo(data) {
  const samples = data.numberOfFrames;
  const planes = [];
  for (let channel = 0; channel < data.numberOfChannels; channel++) {
    const plane = new Float32Array(samples);
    data.copyTo(plane, { planeIndex: channel, format: "f32-planar" });
    planes.push(plane);
  }
  const pcm = new Float32Array(samples * 2);
  fold(planes, pcm);
  return pcm;
}

// Mono, stereo, or surround to interleaved stereo: L = FL + 0.707·FC + 0.707·RL (+ 0.707·SL),
// LFE left out (the library's StereoDownmix). Chromium's Opus decoder hands surround over in
// the order audio servers use, not Opus's Vorbis order (measured: a 5.1 stream's front pair
// comes out in planes 0 and 1): FL FR FC LFE RL RR, then SL SR.
function fold(planes, pcm) {
  const samples = pcm.length / 2;
  const [a, b] = planes;
  const centre = planes.length >= 3 ? planes[2] : null;
  const rearLeft = planes.length >= 6 ? planes[4] : null;
  const rearRight = planes.length >= 6 ? planes[5] : null;
  const sideLeft = planes.length >= 8 ? planes[6] : null;
  const sideRight = planes.length >= 8 ? planes[7] : null;
  for (let index = 0; index < samples; index++) {
    if (planes.length === 1) {
      pcm[index * 2] = pcm[index * 2 + 1] = a[index];
      continue;
    }
    let left = a[index];
    let right = b[index];
    if (centre) {
      left += SQRT_HALF * centre[index];
      right += SQRT_HALF * centre[index];
    }
    if (rearLeft) {
      left += SQRT_HALF * rearLeft[index];
      right += SQRT_HALF * rearRight[index];
    }
    if (sideLeft) {
      left += SQRT_HALF * sideLeft[index];
      right += SQRT_HALF * sideRight[index];
    }
    pcm[index * 2] = left;
    pcm[index * 2 + 1] = right;
  }
}

// The Ogg Opus identification header (RFC 7845 §5.1) for a version 2 frame: what WebCodecs
// needs to decode a multistream packet.
function opusHead(frame) {
  const head = new Uint8Array(21 + frame.channels);
  head.set([0x4f, 0x70, 0x75, 0x73, 0x48, 0x65, 0x61, 0x64]); // "OpusHead"
  const view = new DataView(head.buffer);
  head[8] = 1; // version
  head[9] = frame.channels;
  view.setUint16(10, 0, true); // pre-skip
  view.setUint32(12, SAMPLE_RATE, true);
  view.setInt16(16, 0, true); // output gain
  head[18] = 1; // mapping family
  head[19] = frame.mapping.streams;
  head[20] = frame.mapping.coupledStreams;
  head.set(frame.mapping.table, 21);
  return head;
}
