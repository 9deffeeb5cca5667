// The AudioWorklet side of the player: runs the jitter buffer on the audio thread, one
// render block at a time, and reports its stats (and the output's level) to the page.
import { PlayoutBuffer } from "./playout-buffer.js";

const STATS_EVERY_BLOCKS = 94; // about 250 ms of 128-sample blocks at 48 kHz

class DeskAudioPlayerProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.buffer = new PlayoutBuffer(options.processorOptions ?? {});
    this.blocks = 0;
    this.peak = 0;
    this.spare = new Float32Array(128);
    const take = (event) => {
      const message = event.data;
      if (message.type === "frame") {
        this.buffer.push({
          sequence: message.sequence,
          sampleClock: message.sampleClock,
          afterGap: message.afterGap,
          pcm: message.pcm,
          replace: message.replace === true,
          arrivalMs: currentTime * 1000,
        });
      } else if (message.type === "port") {
        // A receiver's port (AudioFramePlayer.receive()): its frames come straight here.
        message.port.onmessage = take;
      }
    };
    this.port.onmessage = take;
  }

  process(_inputs, outputs) {
    const output = outputs[0];
    const left = output[0];
    if (!left) return true;
    let right = output[1];
    if (!right) {
      if (this.spare.length !== left.length) this.spare = new Float32Array(left.length);
      right = this.spare;
    }
    this.buffer.render(left, right, currentTime * 1000);
    if (output.length === 1) {
      for (let index = 0; index < left.length; index++) left[index] = 0.5 * (left[index] + right[index]);
    }
    for (let index = 0; index < left.length; index++) {
      const magnitude = Math.max(Math.abs(left[index]), Math.abs(right[index]));
      if (magnitude > this.peak) this.peak = magnitude;
    }
    for (let channel = 2; channel < output.length; channel++) output[channel].fill(0);
    if (++this.blocks % STATS_EVERY_BLOCKS === 0) {
      this.port.postMessage({ type: "stats", stats: { ...this.buffer.stats, peak: this.peak } });
      this.peak = 0;
    }
    return true;
  }
}

registerProcessor("deskaudio-player", DeskAudioPlayerProcessor);
