// Types of DeskAudio's browser microphone (deskaudio-mic.js, mic-sender.js). docs/web-player.md.

/** Why the microphone could not start, or stopped by itself. */
export type MicrophoneErrorCode = "insecure" | "unsupported" | "permission" | "no-device" | "busy" | "ended" | "encoder";

/** The microphone could not start or stopped: `code` says why. */
export declare class MicrophoneError extends Error {
  readonly code: MicrophoneErrorCode;
}

/** Settings of `AudioFrameMicrophone.create()`. */
export interface MicrophoneOptions {
  /** Gets each AudioFrame's bytes (a Uint8Array of its own), about 100 a second while there is sound. */
  send: (bytes: Uint8Array) => void;
  /** The browser's echo cancellation (default true). */
  echoCancellation?: boolean;
  /** The browser's noise suppression (default true). */
  noiseSuppression?: boolean;
  /** The browser's automatic gain control (default true). */
  autoGainControl?: boolean;
  /** Which microphone (MediaDeviceInfo.deviceId); default: the browser's choice. */
  deviceId?: string;
  /** Channels sent: 1 (default) or 2. */
  channels?: 1 | 2;
  /** Opus bitrate, bits/s (default 32000). */
  bitrate?: number;
  /** Opus application (default "lowdelay", as the library's encoder). */
  application?: "lowdelay" | "voip" | "audio";
  /** "track" (default where the browser has MediaStreamTrackProcessor and the track runs at 48 kHz): the audio as captured; "worklet": through an AudioContext. */
  readFrom?: "track" | "worklet";
  /** An AudioContext at 48 kHz for the worklet to run in (the player's, for one); default: a new one. */
  context?: AudioContext;
}

/** What the microphone has sent. */
export interface MicrophoneStats {
  /** 10 ms frames from the microphone. */
  framesIn: number;
  /** Frames given to the encoder. */
  framesEncoded: number;
  /** AudioFrames sent. */
  framesSent: number;
  /** Frames held back by the zero gate or mute. */
  framesHeld: number;
  /** Packets from the encoder for no frame (an encoder's flush): dropped. */
  packetsUnmatched: number;
  muted: boolean;
  /** Frames waiting in the encoder. */
  encodeQueueSize: number;
  /** How it is read. */
  readFrom: "track" | "worklet";
  /** Read from the track: runs of 64 exact zeros or more inside sound (the browser's capture fell behind); null from the worklet. */
  inputHoles: number | null;
  /** The processing the browser applied (its track's settings). */
  echoCancellation?: boolean;
  noiseSuppression?: boolean;
  autoGainControl?: boolean;
}

/** The viewer's microphone, sent as AudioFrames (mono 48 kHz Opus by default, 10 ms frames, the MIC flag set). */
export declare class AudioFrameMicrophone {
  /** Opens the microphone and starts sending; rejects with a MicrophoneError (or a RangeError/TypeError for bad options). */
  static create(options: MicrophoneOptions): Promise<AudioFrameMicrophone>;
  /** The AudioContext the worklet runs in; null when read from the track. */
  readonly context: AudioContext | null;
  readonly stream: MediaStream;
  /** Called when the microphone stops by itself (device gone, encoder failed). */
  onerror: ((error: MicrophoneError) => void) | null;
  readonly muted: boolean;
  /** A few frames of silence, then nothing until unmute(): the receiver hears the sender's silence, not loss. */
  mute(): void;
  /** The next frame carries AFTER_GAP. */
  unmute(): void;
  readonly stats: MicrophoneStats;
  /** Stops sending and releases the device. */
  close(): void;
}

/** Samples per channel of one frame (480: 10 ms at 48 kHz). */
export declare const FRAME_SAMPLES: 480;
/** Zero frames in a row sent before the gate closes (800, as the library's). */
export declare const ZERO_FRAMES_SENT: 800;
/** Silent frames sent after mute() before the stream goes quiet. */
export declare const MUTE_FRAMES_SENT: 3;

/** Exact zeros in a row, inside sound, that count as a hole in what the browser captured (64). */
export declare const INPUT_HOLE_SAMPLES: 64;

/** Cuts chunks of any length into FRAME_SAMPLES-sample planar frames of `channels`, counting holes. */
export declare class FrameCutter {
  constructor(channels: 1 | 2, frame: (pcm: Float32Array) => void);
  readonly inputHoles: number;
  push(planes: Float32Array[], count: number): void;
}

/** The sender's logic apart from the browser: frames in, gate and mute, AudioFrames out. */
export declare class MicrophoneSender {
  constructor(options: {
    channels?: 1 | 2;
    send: (bytes: Uint8Array) => void;
    encode: (frame: { pcm: Float32Array; sampleClock: number; timestampUs: number }) => void;
    /** Capture time of sample 0, ns. */
    startTimeNs?: bigint | number;
  });
  readonly muted: boolean;
  readonly counts: { framesIn: number; framesEncoded: number; framesSent: number; framesHeld: number; packetsUnmatched: number };
  setMuted(muted: boolean): void;
  /** One frame: FRAME_SAMPLES × channels samples, planar. */
  push(pcm: Float32Array): void;
  /** The encoder's packet for the frame that started at `timestampUs`. */
  packet(timestampUs: number, bytes: Uint8Array): void;
}
