// DeskAudio's browser player: feed it AudioFrame bytes from any transport (WebSocket, WebRTC
// data channel, WebTransport); it parses them (./audio-frame.js), decodes them with WebCodecs'
// AudioDecoder and plays them through an AudioWorklet with a jitter buffer
// (./playout-buffer.js): adaptive delay, loss concealment, the sender's gate silence played
// as silence, clock drift absorbed. See docs/web-player.md.
import { parseAudioFrame, FrameFormatError } from "./audio-frame.js";
import { FrameDecoding } from "./frame-decoding.js";

export { parseAudioFrame, FrameFormatError };

const SAMPLE_RATE = 48000;

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
    // Frames pushed on this thread are decoded here; those a receiver (receive()) takes, in
    // its Worker, whose counts come back with its stats.
    this.decoding = new FrameDecoding((meta, pcm) => this.play(meta, pcm));
    this.receiverCounts = null;
    this.receiverJitter = null;
    this.latest = {};
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
    return this.decoding.push(bytes);
  }

  /** The jitter buffer's stats (see PlayoutStats in playout-buffer.js) and the player's own. */
  get stats() {
    return {
      ...this.latest,
      ...(this.receiverCounts ?? this.decoding.counts),
      arrivalJitterP50Ms: (this.receiverJitter ?? this.decoding.arrivalJitter).p50,
      arrivalJitterP99Ms: (this.receiverJitter ?? this.decoding.arrivalJitter).p99,
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

  /**
   * Receives the frames from a WebSocket at `url` (one AudioFrame per binary message) in a
   * Worker of its own, which decodes them and hands them to the worklet directly: the page's
   * own work cannot delay them. Returns the connection: `send(data)` (text or bytes up the
   * same socket), `close()`, and, if set, `onopen()`, `onclose(event)`, `ontext(text)` (text
   * messages from the server), `onframe(sequence)` (each frame taken, its sequence number).
   * The receiver acknowledges what it has (`received SEQUENCE`, 4 times a second), for a
   * server that drops frames for a client that falls behind (`deskaudio serve`).
   */
  receive(url) {
    const worker = new Worker(new URL("./player-receiver.js", import.meta.url), { type: "module" });
    const channel = new MessageChannel();
    this.node.port.postMessage({ type: "port", port: channel.port1 }, [channel.port1]);
    const connection = {
      onopen: null, onclose: null, ontext: null, onframe: null,
      send: (data) => worker.postMessage({ type: "send", data }),
      close: () => worker.postMessage({ type: "close" }),
    };
    worker.onmessage = ({ data: message }) => {
      if (message.type === "open") connection.onopen?.();
      else if (message.type === "text") connection.ontext?.(message.text);
      else if (message.type === "counts") {
        this.receiverCounts = message.counts;
        this.receiverJitter = message.arrivalJitter;
        if (message.newest !== null) connection.onframe?.(message.newest);
      } else if (message.type === "close") {
        worker.terminate();
        connection.onclose?.(message);
      }
    };
    worker.postMessage({ type: "connect", url: String(url), port: channel.port2 }, [channel.port2]);
    return connection;
  }

  /** Stops playing and frees the decoders and the context (if the player made it). */
  async close() {
    this.decoding.close();
    this.node.disconnect();
    await this.context.close();
  }

  // A decoded frame to the worklet.
  play(meta, pcm) {
    this.node.port.postMessage({ type: "frame", ...meta, pcm }, [pcm.buffer]);
  }
}
