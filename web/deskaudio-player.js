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
   * is passed to a new one, "interactive" by default), the worklet module
   * loaded from beside this file, and a decoder. `options.marginMs`, `maxDelayMs` and
   * `startDelayMs` tune the jitter buffer. The context may start suspended where the browser
   * wants a user gesture first: `resume()` from a click then.
   */
  static async create(options = {}) {
    if (typeof AudioDecoder === "undefined") {
      throw new Error("this browser has no WebCodecs AudioDecoder (Chrome 94+, Edge, Safari 16.4+ or Firefox 130+ needed)");
    }
    const context =
      options.context ?? new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: options.latencyHint ?? "interactive" });
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
    this.decoder = null;
    this.format = "";
    this.pending = []; // the frames given to the decoder, in order: it outputs one AudioData each
    this.unsupported = new Set(); // channel layouts the browser's decoder refused
    this.latest = {};
    this.counts = { framesInvalid: 0, framesUndecodable: 0, lastError: null };
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
    const timestamp = Number((frame.sampleClock * 1000000n) / BigInt(SAMPLE_RATE));
    this.pending.push({ sequence: frame.sequence, sampleClock: Number(frame.sampleClock), afterGap: frame.afterGap });
    this.decoder.decode(new EncodedAudioChunk({ type: "key", timestamp, data: frame.payload }));
    return frame;
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

  /** Stops playing and frees the decoder and the context (if the player made it). */
  async close() {
    if (this.decoder && this.decoder.state !== "closed") this.decoder.close();
    this.node.disconnect();
    await this.context.close();
  }

  // A decoder for this frame's channel layout; false (and counted) where the browser has none.
  configureFor(frame) {
    const format = frame.mapping ? `${frame.channels}:${frame.mapping.table.join(",")}` : `${frame.channels}`;
    if (format === this.format && this.decoder && this.decoder.state === "configured") return true;
    if (this.unsupported.has(format)) {
      this.counts.framesUndecodable++;
      return false;
    }
    if (this.decoder && this.decoder.state !== "closed") this.decoder.close();
    this.format = format;
    this.pending.length = 0;
    this.decoder = new AudioDecoder({
      output: (data) => this.decoded(data),
      error: (error) => {
        // A layout this browser cannot decode is not tried again; any other error (a bad
        // packet) gets a new decoder with the next frame.
        if (error.name === "NotSupportedError") {
          this.unsupported.add(format);
          this.counts.lastError = `${frame.channels} channels: not supported by this browser's decoder`;
        } else {
          this.counts.lastError = `decoder: ${error.message}`;
        }
        this.format = "";
      },
    });
    const config = { codec: "opus", sampleRate: SAMPLE_RATE, numberOfChannels: frame.channels };
    if (frame.mapping) config.description = opusHead(frame);
    try {
      this.decoder.configure(config);
    } catch (error) {
      this.counts.framesUndecodable++;
      this.counts.lastError = `${frame.channels} channels: not supported here (${error.message})`;
      this.format = "";
      return false;
    }
    return true;
  }

  // Decoded audio to the worklet as interleaved stereo (surround folded down as the library's
  // StereoDownmix does), with its frame's sequence number.
  decoded(data) {
    const meta = this.pending.shift();
    const samples = data.numberOfFrames;
    const channels = data.numberOfChannels;
    const planes = [];
    for (let channel = 0; channel < channels; channel++) {
      const plane = new Float32Array(samples);
      data.copyTo(plane, { planeIndex: channel, format: "f32-planar" });
      planes.push(plane);
    }
    data.close();
    if (!meta) return;
    const pcm = new Float32Array(samples * 2);
    fold(planes, pcm);
    this.node.port.postMessage({ type: "frame", ...meta, pcm }, [pcm.buffer]);
  }
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
