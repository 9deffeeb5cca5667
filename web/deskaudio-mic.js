// DeskAudio's browser microphone: the viewer's voice as AudioFrames, for any transport the
// viewer has (the same WebSocket as the player's, a WebRTC data channel, WebTransport). It
// takes the microphone with getUserMedia, reads it as the browser captured it (a
// MediaStreamTrackProcessor where there is one and the track runs at 48 kHz; else an
// AudioWorklet, ./mic-worklet.js, which crosses into the output's clock), cuts it into 10 ms
// frames, encodes them with WebCodecs' AudioEncoder (Opus, 48 kHz) and writes AudioFrames by
// the library's rules (./mic-sender.js, ./audio-frame.js). See docs/web-player.md.
import { MicrophoneSender, FrameCutter, FRAME_SAMPLES } from "./mic-sender.js";

const SAMPLE_RATE = 48000;

/**
 * Why the microphone could not start or stopped. `code`: "insecure" (the page is not on
 * https or localhost), "unsupported" (no getUserMedia, AudioWorklet or AudioEncoder able to
 * encode Opus so), "permission" (the user or the browser refused), "no-device" (no
 * microphone, or none matching `deviceId`), "busy" (the device is in use or failed to open),
 * "ended" (the device went away), "encoder" (the encoder failed).
 */
export class MicrophoneError extends Error {
  constructor(code, message, cause) {
    super(message, cause ? { cause } : undefined);
    this.name = "MicrophoneError";
    this.code = code;
  }
}

/** The viewer's microphone, sending AudioFrames. Make one with `AudioFrameMicrophone.create()`. */
export class AudioFrameMicrophone {
  /**
   * Opens the microphone and starts sending. `options.send(bytes)` gets each AudioFrame (a
   * Uint8Array of its own), about 100 a second while there is sound. Settings:
   * `echoCancellation`, `noiseSuppression`, `autoGainControl` (the browser's, true by
   * default), `deviceId`, `channels` (1 or 2, default 1), `bitrate` (bits/s, default 32000),
   * `application` ("lowdelay", "voip" or "audio", default "lowdelay" as the library's
   * encoder), `readFrom` ("track", the default where the browser can: as captured; or
   * "worklet": through an AudioContext), `context` (an AudioContext at 48 kHz for the
   * worklet to run in, the player's for one; default a new one). Rejects with a MicrophoneError.
   */
  static async create(options = {}) {
    if (typeof options.send !== "function") throw new TypeError("options.send must be a function taking the frames' bytes");
    const channels = options.channels ?? 1;
    if (channels !== 1 && channels !== 2) throw new RangeError(`channels ${channels}: 1 or 2`);
    if (typeof window !== "undefined" && !window.isSecureContext) {
      throw new MicrophoneError("insecure", "the microphone needs a secure page: https, or http://localhost");
    }
    if (!navigator.mediaDevices?.getUserMedia || typeof AudioWorkletNode === "undefined") {
      throw new MicrophoneError("unsupported", "this browser has no getUserMedia or AudioWorklet");
    }
    if (typeof AudioEncoder === "undefined") {
      throw new MicrophoneError("unsupported", "this browser has no WebCodecs AudioEncoder (Chrome 94+, Edge, Safari 18.4+, Firefox 130+)");
    }
    if (options.context && options.context.sampleRate !== SAMPLE_RATE) {
      throw new RangeError(`the microphone's AudioContext must run at ${SAMPLE_RATE} Hz, this one at ${options.context.sampleRate} Hz`);
    }
    const config = {
      codec: "opus",
      sampleRate: SAMPLE_RATE,
      numberOfChannels: channels,
      bitrate: options.bitrate ?? 32000,
      opus: { frameDuration: 10000, application: options.application ?? "lowdelay" },
    };
    const support = await AudioEncoder.isConfigSupported(config).catch(() => ({ supported: false }));
    if (!support.supported) {
      throw new MicrophoneError("unsupported", `this browser's AudioEncoder cannot encode ${JSON.stringify(config)}`);
    }
    const processing = {
      echoCancellation: options.echoCancellation ?? true,
      noiseSuppression: options.noiseSuppression ?? true,
      autoGainControl: options.autoGainControl ?? true,
    };
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({
        audio: {
          ...processing,
          ...(options.deviceId ? { deviceId: { exact: options.deviceId } } : {}),
          channelCount: { ideal: channels },
          sampleRate: { ideal: SAMPLE_RATE },
        },
      });
    } catch (error) {
      throw openingError(error);
    }
    const [track] = stream.getAudioTracks();
    const direct = options.readFrom !== "worklet" && typeof MediaStreamTrackProcessor !== "undefined"
      && track.getSettings().sampleRate === SAMPLE_RATE;
    const ownContext = !direct && !options.context;
    const context = direct ? null : (options.context ?? new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 0 }));
    try {
      if (context) await context.audioWorklet.addModule(new URL("./mic-worklet.js", import.meta.url));
      return new AudioFrameMicrophone(context, ownContext, stream, config, options.send);
    } catch (error) {
      for (const track of stream.getTracks()) track.stop();
      if (ownContext) context.close();
      throw error instanceof MicrophoneError ? error : new MicrophoneError("unsupported", error.message, error);
    }
  }

  constructor(context, ownContext, stream, config, send) {
    /** The AudioContext the microphone runs in (null where it is read from the track itself). */
    this.context = context;
    /** The getUserMedia stream (its track's getSettings() say what the browser applied). */
    this.stream = stream;
    /** Called with a MicrophoneError when the microphone stops by itself (device gone, encoder failed). */
    this.onerror = null;
    this.ownContext = ownContext;
    this.closed = false;
    const channels = config.numberOfChannels;
    const startTimeNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    this.encoder = new AudioEncoder({
      output: (chunk) => {
        const bytes = new Uint8Array(chunk.byteLength);
        chunk.copyTo(bytes);
        this.sender.packet(chunk.timestamp, bytes);
      },
      error: (error) => this.fail(new MicrophoneError("encoder", `the Opus encoder failed: ${error.message}`, error)),
    });
    this.encoder.configure(config);
    this.sender = new MicrophoneSender({
      channels,
      startTimeNs,
      send,
      encode: ({ pcm, timestampUs }) => {
        const data = new AudioData({
          format: "f32-planar", sampleRate: SAMPLE_RATE, numberOfFrames: FRAME_SAMPLES,
          numberOfChannels: channels, timestamp: timestampUs, data: pcm,
        });
        this.encoder.encode(data);
        data.close();
      },
    });
    const [track] = stream.getAudioTracks();
    track.onended = () => this.fail(new MicrophoneError("ended", "the microphone went away"));
    this.cutter = null;
    if (context) {
      this.source = new MediaStreamAudioSourceNode(context, { mediaStream: stream });
      this.node = new AudioWorkletNode(context, "deskaudio-microphone", {
        numberOfInputs: 1,
        numberOfOutputs: 0,
        channelCount: channels,
        channelCountMode: "explicit",
        channelInterpretation: "speakers",
        processorOptions: { channels },
      });
      this.node.port.onmessage = (event) => this.take(event.data);
      this.source.connect(this.node);
    } else {
      // The track's own chunks, as captured, kept up to 0.5 s while the page is busy.
      this.cutter = new FrameCutter(channels, (pcm) => this.take(pcm));
      this.read(new MediaStreamTrackProcessor({ track, maxBufferSize: 50 }).readable.getReader());
    }
  }

  take(pcm) {
    if (!this.closed && this.encoder.state === "configured") this.sender.push(pcm);
  }

  async read(reader) {
    this.reader = reader;
    const planes = [];
    for (;;) {
      let chunk;
      try {
        chunk = (await reader.read()).value;
      } catch {
        chunk = undefined;
      }
      if (!chunk) return; // the track ended or close() cancelled the reader
      const count = chunk.numberOfFrames;
      for (let plane = 0; plane < Math.min(2, chunk.numberOfChannels); plane++) {
        if (!planes[plane] || planes[plane].length < count) planes[plane] = new Float32Array(count);
        chunk.copyTo(planes[plane], { planeIndex: plane, format: "f32-planar", frameCount: count });
      }
      planes.length = Math.min(2, chunk.numberOfChannels);
      chunk.close();
      if (!this.closed) this.cutter.push(planes.map((plane) => plane.subarray(0, count)), count);
    }
  }

  /** True while muted. */
  get muted() {
    return this.sender.muted;
  }

  /** Mutes: a few frames of silence, then nothing until unmute(); the receiver hears the
   * sender's silence (as the zero gate's), not a lost stream. */
  mute() {
    this.sender.setMuted(true);
  }

  /** Unmutes: the next frame carries AFTER_GAP. */
  unmute() {
    this.sender.setMuted(false);
  }

  /** What was sent: frames in from the microphone, encoded, sent, held back by the gate or
   * mute; the encoder's queue; the processing the browser applied; how the microphone is
   * read ("track": as captured, "worklet": through the AudioContext) and, read as captured,
   * the holes in it (runs of 64 exact zeros or more inside sound: the browser's capture fell behind). */
  get stats() {
    const settings = this.stream.getAudioTracks()[0]?.getSettings() ?? {};
    return {
      ...this.sender.counts,
      readFrom: this.cutter ? "track" : "worklet",
      inputHoles: this.cutter ? this.cutter.inputHoles : null,
      muted: this.muted,
      encodeQueueSize: this.encoder.state === "configured" ? this.encoder.encodeQueueSize : 0,
      echoCancellation: settings.echoCancellation,
      noiseSuppression: settings.noiseSuppression,
      autoGainControl: settings.autoGainControl,
    };
  }

  /** Stops sending and lets the microphone go (its indicator goes off). */
  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.node) {
      this.node.port.postMessage("stop");
      this.node.port.onmessage = null;
      this.source.disconnect();
    }
    this.reader?.cancel().catch(() => {});
    for (const track of this.stream.getTracks()) track.stop();
    if (this.encoder.state !== "closed") this.encoder.close();
    if (this.ownContext) this.context.close();
  }

  fail(error) {
    if (this.closed) return;
    this.close();
    if (this.onerror) this.onerror(error);
  }
}

function openingError(error) {
  switch (error?.name) {
    case "NotAllowedError":
    case "SecurityError":
      return new MicrophoneError("permission", "the microphone was not allowed (the user or the browser said no)", error);
    case "NotFoundError":
    case "OverconstrainedError":
      return new MicrophoneError("no-device", "no microphone (or none matching the deviceId given)", error);
    case "NotReadableError":
    case "AbortError":
      return new MicrophoneError("busy", `the microphone could not be opened: ${error.message}`, error);
    default:
      return new MicrophoneError("unsupported", `getUserMedia failed: ${error?.message ?? error}`, error);
  }
}
