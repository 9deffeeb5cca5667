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
    this.pending = new Map(); // timestampUs -> flags, frames at the encoder
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
    this.pending.set(timestampUs, flags);
    this.counts.framesEncoded++;
    this.encode({ pcm, sampleClock, timestampUs });
  }

  /** The encoder's packet for the frame at `timestampUs`: sent as the next AudioFrame. A
   * packet for no frame given to encode() (an encoder's flush) is counted and dropped. */
  packet(timestampUs, bytes) {
    const flags = this.pending.get(timestampUs);
    if (flags === undefined) {
      this.counts.packetsUnmatched++;
      return;
    }
    this.pending.delete(timestampUs);
    const sampleClock = Math.round((timestampUs * 48) / 1000);
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
