// DeskAudio's browser player: feed it AudioFrame bytes from any transport (WebSocket, WebRTC
// data channel, WebTransport); it parses them (./audio-frame.js), decodes them with WebCodecs'
// AudioDecoder and plays them through an AudioWorklet with a jitter buffer
// (./playout-buffer.js): adaptive delay, loss concealment, the sender's gate silence played
// as silence, clock drift absorbed. See docs/web-player.md.
import { parseAudioFrame, FrameFormatError } from "./audio-frame.js";

export { parseAudioFrame, FrameFormatError };

const SAMPLE_RATE = 48000;
const SQRT_HALF = Math.SQRT1_2;

/** Plays AudioFrames. Create one with `AudioFramePlayer.create()`. */
export class AudioFramePlayer {
  /**
   * Makes the player: an AudioContext at 48 kHz (or `options.context`; `options.latencyHint`
   * is passed to a new one, 0 by default: the least output latency the browser offers), the
   * worklet module loaded from beside this file, and a decoder. `options.marginMs`,
   * `maxDelayMs` and `startDelayMs` tune the jitter buffer. The context may start suspended
   * where the browser wants a user gesture first: `resume()` from a click then. A context of
   * the viewer's own must run at 48 kHz (the worklet plays the frames' samples as they are;
   * the browser resamples to the device): another rate is an error, not a change of pitch.
   */
  static async create(options = {}) {
    if (options.context && options.context.sampleRate !== SAMPLE_RATE) {
      throw new RangeError(
        `the player's AudioContext must run at ${SAMPLE_RATE} Hz, this one runs at ${options.context.sampleRate} Hz: ` +
          `make it with new AudioContext({ sampleRate: ${SAMPLE_RATE} })`,
      );
    }
    if (typeof AudioDecoder === "undefined") {
      throw new Error("this browser has no WebCodecs AudioDecoder (Chrome 94+, Edge, Safari 16.4+ or Firefox 130+ needed)");
    }
    const context =
      options.context ?? new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: options.latencyHint ?? 0 });
    await context.audioWorklet.addModule(new URL("./player-worklet.js", import.meta.url));
    const node = new AudioWorkletNode(context, "deskaudio-player", {
      numberOfInputs: 0,
      numberOfOutputs: 1,
      outputChannelCount: [2],
      processorOptions: {
        marginMs: options.marginMs,
        maxDelayMs: options.maxDelayMs,
        startDelayMs: options.startDelayMs,
      },
    });
    node.connect(options.destination ?? context.destination);
    return new AudioFramePlayer(context, node);
  }

  constructor(context, node) {
    /** The AudioContext the player plays in. */
    this.context = context;
    /** The AudioWorkletNode it plays through (connected to the destination). */
    this.node = node;
    /** Called with the stats about 4 times a second, if set. */
    this.onstats = null;
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
    this.latest = {};
    this.counts = { framesInvalid: 0, framesUndecodable: 0, framesOutOfOrder: 0, lastError: null };
    node.port.onmessage = (event) => {
      if (event.data.type !== "stats") return;
      this.latest = event.data.stats;
      if (this.onstats) this.onstats(this.stats);
    };
  }

  /** Whether the browser lets the context play yet (autoplay policy). */
  get running() {
    return this.context.state === "running";
  }

  /** Starts the context: call it from a user gesture where autoplay is not allowed. */
  resume() {
    return this.context.resume();
  }

  /**
   * Takes one AudioFrame (Uint8Array or ArrayBuffer); returns its parsed fields. Throws
   * FrameFormatError for bytes that are not one; nothing already accepted is lost.
   */
  push(bytes) {
    let frame;
    try {
      frame = parseAudioFrame(bytes);
    } catch (error) {
      this.counts.framesInvalid++;
      this.counts.lastError = error.message;
      throw error;
    }
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
      decoder ??= new FrameDecoder(this.config, (meta, pcm) => this.play(meta, pcm), (error) => this.failed(error));
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

  /** The jitter buffer's stats (see PlayoutStats in playout-buffer.js) and the player's own. */
  get stats() {
    return {
      ...this.latest,
      ...this.counts,
      outputLatencyMs: 1000 * ((this.context.outputLatency || 0) + (this.context.baseLatency || 0)),
      outputDelayMs: this.outputDelayMs(),
    };
  }

  // How far behind the context's clock the sound is heard right now, ms: the audio rendered
  // up to currentTime against what the output plays now (getOutputTimestamp(), which follows
  // the device). NaN where the browser does not tell.
  outputDelayMs() {
    const stamp = this.context.getOutputTimestamp?.();
    if (!stamp || !(stamp.contextTime > 0) || !(stamp.performanceTime > 0)) return NaN;
    const playingNow = stamp.contextTime + (performance.now() - stamp.performanceTime) / 1000;
    return 1000 * (this.context.currentTime - playingNow);
  }

  /** Stops playing and frees the decoders and the context (if the player made it). */
  async close() {
    this.closeDecoders();
    this.node.disconnect();
    await this.context.close();
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
      this.decoder = new FrameDecoder(this.config, (meta, pcm) => this.play(meta, pcm), (error) => this.failed(error));
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

  // A decoded frame to the worklet.
  play(meta, pcm) {
    this.node.port.postMessage({ type: "frame", ...meta, pcm }, [pcm.buffer]);
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
