// Types of DeskAudio's browser player (deskaudio-player.js, audio-frame.js). docs/web-player.md.

/** Flag bits of an AudioFrame's byte 5. */
export declare const Flags: {
  readonly AFTER_GAP: 1;
  readonly APP: 2;
  readonly MIC: 4;
  readonly HOST: 8;
  readonly AFTER_LOSS: 16;
  readonly TIME_STEP: 32;
};

/** The C API's frame error names, without their DESKAUDIO_ERROR_FRAME_ prefix. */
export type FrameErrorCode = "truncated" | "oversized" | "magic" | "version" | "field";

/** Bytes that are not an AudioFrame: `code` names why, `status` is the C API's number (-10 to -14). */
export declare class FrameFormatError extends Error {
  readonly code: FrameErrorCode;
  readonly status: number;
}

/** Version 2's Opus multistream channel mapping (RFC 7845 §5.1.1, family 1). */
export interface ChannelMapping {
  streams: number;
  coupledStreams: number;
  /** For each channel in Vorbis order, the decoded stream channel it takes; 255 is silence. */
  table: number[];
}

/** One AudioFrame's fields (docs/wire-format.md). */
export interface AudioFrame {
  version: 1 | 2;
  flags: number;
  /** First frame after the sender held frames back (zero gate, capture restart). */
  afterGap: boolean;
  /** The sender dropped the frames before this one (its host fell behind): conceal them. */
  afterLoss: boolean;
  /** captureTimeNs does not follow from the last frame's: the sender's clock stepped; re-anchor A/V sync here. */
  timeStep: boolean;
  app: boolean;
  mic: boolean;
  host: boolean;
  channels: number;
  codec: number;
  sampleRate: number;
  /** Counts frames sent, from 0, wrapping at 2^32: a hole is loss in transit. */
  sequence: number;
  /** 48 kHz sample index of the first sample. */
  sampleClock: bigint;
  /** CLOCK_MONOTONIC of the first sample at the sender, in ns. */
  captureTimeNs: bigint;
  frameSamples: number;
  payloadLength: number;
  mapping: ChannelMapping | null;
  /** The Opus packet: a view into the bytes given to the parser. */
  payload: Uint8Array;
}

/** Reads one AudioFrame; throws FrameFormatError as the C parser would fail. */
export declare function parseAudioFrame(bytes: Uint8Array | ArrayBuffer): AudioFrame;

/** The fields `writeAudioFrame` lays out (defaults: flags 0, codec 1 or 2 with a mapping, 48000 Hz, 480 samples). */
export interface AudioFrameFields {
  channels: number;
  sequence: number;
  sampleClock: bigint | number;
  captureTimeNs: bigint | number;
  flags?: number;
  codec?: number;
  sampleRate?: number;
  frameSamples?: number;
  mapping?: ChannelMapping | null;
}

/** Writes one AudioFrame (version 1, or 2 with a mapping) as the library's writer does; throws RangeError for what the parser would refuse. (From audio-frame.js.) */
export declare function writeAudioFrame(fields: AudioFrameFields, payload: Uint8Array): Uint8Array;

/** What the player reports about 4 times a second. */
export interface PlayerStats {
  framesReceived: number;
  framesPlayed: number;
  /** Sequence numbers never received: lost in transit. */
  framesLost: number;
  /** Frames played concealed (a loss, a late frame, or a wait for one). */
  framesConcealed: number;
  /** Frames that came after their turn, or twice: dropped. */
  framesLate: number;
  /** Frames dropped to bring the delay down. */
  framesDropped: number;
  /** Silences of the sender's zero gate that ended (played as silence, not loss). */
  gaps: number;
  /** Arrival to play of the last frame played, ms. */
  delayMs: number;
  /** 99th percentile of that delay over the last 1024 frames, ms. */
  delayP99Ms: number;
  /** Audio waiting to play, ms. */
  bufferedMs: number;
  /** The arrival jitter the delay covers: the widest spread of a second's transit times
   *  (arrival less the sender's sample time) over the last 20 s, ms. */
  jitterMs: number;
  /** Playback speed against the sender's clock (drift and delay control), about 1. */
  rate: number;
  /** The length of the last frame played, ms (2.5, 5, 10 or 20: the sender's frame length). */
  frameMs: number;
  /** Peak sample of the output since the last report, 0 to 1. */
  peak: number;
  /** Messages that were not AudioFrames. */
  framesInvalid: number;
  /** Frames this browser cannot decode (a channel layout it lacks). */
  framesUndecodable: number;
  /** Frames that arrived after a later one, decoded again in order on a second decoder. */
  framesOutOfOrder: number;
  /** The last error's text, or null. */
  lastError: string | null;
  /** The AudioContext's own output and base latency, ms: add it to the delay for the total. */
  outputLatencyMs: number;
  /** How far behind the context's clock the sound is heard now, ms (getOutputTimestamp()):
   * unlike outputLatencyMs it follows the device; NaN where the browser does not tell. */
  outputDelayMs: number;
  /** How late frames reached the receiver (the Worker of receive(), else push()) beyond the
   * earliest of the last 2.56 s, against their sample clock, ms: median over every frame so
   * far (NaN before any). */
  arrivalJitterP50Ms: number;
  /** The same, 99th percentile. */
  arrivalJitterP99Ms: number;
}

/** A connection receive() made: the socket lives in the player's Worker. */
export interface FrameConnection {
  /** Sends text or bytes up the same socket (a microphone's frames, stats). */
  send(data: string | Uint8Array | ArrayBuffer): void;
  close(): void;
  onopen: (() => void) | null;
  /** The socket closed (the player's Worker is gone with it); receive() again to reconnect. */
  onclose: ((event: { code: number; reason: string }) => void) | null;
  /** A text message from the server. */
  ontext: ((text: string) => void) | null;
  /** About 4 times a second: the newest frame taken, its sequence number. */
  onframe: ((sequence: number) => void) | null;
}

export interface PlayerOptions {
  /** Play in this context instead of a new one. It must run at 48 kHz (`create()` rejects
   * another rate with a RangeError); the browser resamples to the device. */
  context?: AudioContext;
  /** For a new context: its latencyHint (0 by default, the least output latency the browser
   * offers: in headless Chromium 156 on PulseAudio about 14 ms less than "interactive"). */
  latencyHint?: AudioContextLatencyCategory | number;
  /** Connect to this node instead of the context's destination. */
  destination?: AudioNode;
  /** Slack kept above zero in the jitter buffer, ms (default 6). */
  marginMs?: number;
  /** The delay's ceiling, ms (default 300). */
  maxDelayMs?: number;
  /** Delay of the first frame before any jitter is measured, ms (default 10). */
  startDelayMs?: number;
}

/** Plays AudioFrames through WebCodecs and an AudioWorklet. */
export declare class AudioFramePlayer {
  static create(options?: PlayerOptions): Promise<AudioFramePlayer>;
  readonly context: AudioContext;
  readonly node: AudioWorkletNode;
  /** Called with the stats about 4 times a second. */
  onstats: ((stats: PlayerStats) => void) | null;
  /** Whether the browser lets the context play yet (autoplay policy). */
  readonly running: boolean;
  /** Starts the context; call it from a user gesture where autoplay is not allowed. */
  resume(): Promise<void>;
  /** Takes one AudioFrame and returns its fields; throws FrameFormatError for bytes that are not one. */
  push(bytes: Uint8Array | ArrayBuffer): AudioFrame;
  /** Receives a WebSocket's frames (one AudioFrame per binary message) in a Worker that decodes
   * them and hands them to the worklet directly, so the page's own work cannot delay them;
   * acknowledges what it has (`received SEQUENCE`) 4 times a second. */
  receive(url: string | URL): FrameConnection;
  readonly stats: PlayerStats;
  close(): Promise<void>;
}
