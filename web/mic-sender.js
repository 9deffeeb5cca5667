// The microphone sender's logic, apart from the browser's APIs so node can test it on
// simulated input: 10 ms frames in, the zero gate and mute applied, Opus packets out as
// AudioFrames. The browser module (./deskaudio-mic.js) feeds it the worklet's frames and
// WebCodecs' packets.
import { writeAudioFrame, Flags } from "./audio-frame.js";

/** Samples per channel in one frame: 10 ms at 48 kHz. */
export const FRAME_SAMPLES = 480;
/** Zero frames in a row still sent before the gate closes: the library's ZeroGate's 800. */
export const ZERO_FRAMES_SENT = 800;
/** Frames of silence sent after mute() before the stream goes quiet: the receiver's decoder
 * and jitter buffer end on silence, not on a cut. */
export const MUTE_FRAMES_SENT = 3;

/** Exact zeros in a row, inside sound, that count as a hole in what the browser captured. */
export const INPUT_HOLE_SAMPLES = 64;

/**
 * Cuts audio that comes in chunks of any length (WebCodecs AudioData from a track) into
 * frames of FRAME_SAMPLES per channel, planar, mixed to `channels` (two to one: their mean;
 * one to two: copied), handed to `frame(pcm)`. Counts the holes in what came: runs of at
 * least INPUT_HOLE_SAMPLES exact zeros between sound (the browser's capture fell behind).
 */
export class FrameCutter {
  constructor(channels, frame) {
    this.channels = channels;
    this.frame = frame;
    this.pcm = new Float32Array(FRAME_SAMPLES * channels);
    this.filled = 0;
    this.zeroRun = 0;
    this.heardSound = false;
    this.inputHoles = 0;
  }

  /** One chunk: `planes` (one Float32Array per channel it has, each `count` samples long). */
  push(planes, count) {
    let done = 0;
    while (done < count) {
      const take = Math.min(count - done, FRAME_SAMPLES - this.filled);
      for (let index = 0; index < take; index++) {
        const at = done + index;
        const left = planes[0][at];
        const right = planes.length > 1 ? planes[1][at] : left;
        this.noteSample(left !== 0 || right !== 0);
        if (this.channels === 1) {
          this.pcm[this.filled + index] = planes.length > 1 ? (left + right) / 2 : left;
        } else {
          this.pcm[this.filled + index] = left;
          this.pcm[FRAME_SAMPLES + this.filled + index] = right;
        }
      }
      this.filled += take;
      done += take;
      if (this.filled === FRAME_SAMPLES) {
        const full = this.pcm;
        this.pcm = new Float32Array(FRAME_SAMPLES * this.channels);
        this.filled = 0;
        this.frame(full);
      }
    }
  }

  noteSample(sound) {
    if (!sound) {
      this.zeroRun++;
      return;
    }
    if (this.heardSound && this.zeroRun >= INPUT_HOLE_SAMPLES) this.inputHoles++;
    this.heardSound = true;
    this.zeroRun = 0;
  }
}

/**
 * Frames in, AudioFrames out. `encode(frame)` is handed each frame to send
 * ({ pcm: Float32Array planar, sampleClock, timestampUs }) and later gives its packet back to
 * `packet(timestampUs, bytes)`; `send(bytes)` gets each AudioFrame.
 */
export class MicrophoneSender {
  constructor({ channels = 1, send, encode, startTimeNs = 0n }) {
    if (channels !== 1 && channels !== 2) throw new RangeError(`channels ${channels}: 1 or 2`);
    this.channels = channels;
    this.send = send;
    this.encode = encode;
    this.startTimeNs = BigInt(startTimeNs);
    this.sampleClock = 0; // the next frame's first sample
    this.sequence = 0;
    this.zeroRun = 0; // zero frames in a row, muted ones included
    this.muted = false;
    this.mutedRun = 0;
    this.held = false; // the gate (or mute) is holding frames back
    this.pending = []; // { sampleClock, flags } of the frames at the encoder, oldest first
    this.counts = { framesIn: 0, framesEncoded: 0, framesSent: 0, framesHeld: 0, packetsUnmatched: 0 };
  }

  /** Mutes: the next frames are silence, and after MUTE_FRAMES_SENT of them nothing is sent
   * until unmute(); the first frame after that carries AFTER_GAP (the receiver plays the
   * stretch as the sender's silence, not as loss). */
  setMuted(muted) {
    if (muted && !this.muted) this.mutedRun = 0;
    this.muted = muted;
  }

  /** One frame of FRAME_SAMPLES samples per channel, planar (`pcm.length` =
   * FRAME_SAMPLES × channels), in capture order. */
  push(pcm) {
    if (pcm.length !== FRAME_SAMPLES * this.channels) {
      throw new RangeError(`a frame of ${pcm.length} samples: ${FRAME_SAMPLES * this.channels} expected`);
    }
    this.counts.framesIn++;
    const sampleClock = this.sampleClock;
    this.sampleClock += FRAME_SAMPLES;
    let zero = this.muted;
    if (this.muted) {
      pcm.fill(0);
    } else {
      zero = true;
      for (let index = 0; index < pcm.length; index++) {
        if (pcm[index] !== 0) {
          zero = false;
          break;
        }
      }
    }
    this.zeroRun = zero ? this.zeroRun + 1 : 0;
    if (this.muted) this.mutedRun++;
    const hold = zero && (this.zeroRun > ZERO_FRAMES_SENT || (this.muted && this.mutedRun > MUTE_FRAMES_SENT));
    if (hold) {
      this.held = true;
      this.counts.framesHeld++;
      return;
    }
    const flags = Flags.MIC | (this.held ? Flags.AFTER_GAP : 0);
    this.held = false;
    const timestampUs = (sampleClock * 1000) / 48;
    this.pending.push({ sampleClock, flags });
    this.counts.framesEncoded++;
    this.encode({ pcm, sampleClock, timestampUs });
  }

  /** The encoder's next packet: it codes the oldest frame given to encode() and not yet
   * answered (an encoder answers in order, one packet a frame; its timestamps are its own
   * count and part from ours, docs/reliability.md R-WEB-ENC-TS). Sent as the next AudioFrame. A
   * packet with no frame waiting (an encoder's flush) is counted and dropped. */
  packet(_timestampUs, bytes) {
    const next = this.pending.shift();
    if (next === undefined) {
      this.counts.packetsUnmatched++;
      return;
    }
    const { sampleClock, flags } = next;
    const frame = writeAudioFrame(
      {
        flags,
        channels: this.channels,
        sequence: this.sequence,
        sampleClock,
        captureTimeNs: this.startTimeNs + (BigInt(sampleClock) * 62500n) / 3n,
      },
      bytes,
    );
    this.sequence = (this.sequence + 1) >>> 0;
    this.counts.framesSent++;
    this.send(frame);
  }
}
