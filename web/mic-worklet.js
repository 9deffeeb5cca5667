// The AudioWorklet side of the microphone: cuts what the microphone's node gives into 10 ms
// frames (480 samples per channel, planar: ./mic-sender.js's FrameCutter, as the track's
// chunks are cut) and posts each to the page, transferred.
import { FrameCutter } from "./mic-sender.js";

const BLOCK = 128;

class DeskAudioMicrophoneProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.cutter = new FrameCutter(options.processorOptions.channels, (pcm) => this.port.postMessage(pcm, [pcm.buffer]));
    this.silence = [new Float32Array(BLOCK)];
    this.stopped = false;
    this.port.onmessage = (event) => {
      if (event.data === "stop") this.stopped = true;
    };
  }

  process(inputs) {
    if (this.stopped) return false;
    const input = inputs[0];
    // No input connected yet: silence.
    if (input.length > 0) this.cutter.push(input, input[0].length);
    else this.cutter.push(this.silence, BLOCK);
    return true;
  }
}

registerProcessor("deskaudio-microphone", DeskAudioMicrophoneProcessor);
