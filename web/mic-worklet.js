// The AudioWorklet side of the microphone: cuts what the microphone's node gives into 10 ms
// frames (480 samples per channel, planar) and posts each to the page, transferred.
const FRAME_SAMPLES = 480;

class DeskAudioMicrophoneProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.channels = options.processorOptions.channels;
    this.frame = new Float32Array(FRAME_SAMPLES * this.channels);
    this.filled = 0;
    this.stopped = false;
    this.port.onmessage = (event) => {
      if (event.data === "stop") this.stopped = true;
    };
  }

  process(inputs) {
    if (this.stopped) return false;
    const input = inputs[0];
    const length = input.length > 0 ? input[0].length : 128;
    let done = 0;
    while (done < length) {
      const take = Math.min(length - done, FRAME_SAMPLES - this.filled);
      for (let channel = 0; channel < this.channels; channel++) {
        const source = input[Math.min(channel, input.length - 1)];
        const target = this.frame.subarray(channel * FRAME_SAMPLES + this.filled, channel * FRAME_SAMPLES + this.filled + take);
        if (source) target.set(source.subarray(done, done + take));
        else target.fill(0); // no input connected yet: silence
      }
      this.filled += take;
      done += take;
      if (this.filled === FRAME_SAMPLES) {
        this.port.postMessage(this.frame, [this.frame.buffer]);
        this.frame = new Float32Array(FRAME_SAMPLES * this.channels);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor("deskaudio-microphone", DeskAudioMicrophoneProcessor);
