// The player's jitter buffer: decoded 48 kHz stereo frames in, a continuous stream of samples
// out, on the output's clock. Pure logic with no browser API, so the AudioWorklet runs it and
// tests drive it on simulated time. Everything is allocated at creation: `push` and `render`
// allocate nothing but the map entry of a waiting frame.
//
// How it plays:
// - Frames are put back in sequence order and played `delay` after they arrive. The delay is
//   the smallest that covers the arrival jitter seen over the last 20 s: a frame that misses
//   its turn is played concealed and the delay grows by what it lacked. The jitter is the
//   widest spread of a second's transit times (arrival less the sender's sample time) in
//   those 20 s, so a stall that recurs every few seconds (a busy core, a garbage collection)
//   is kept covered instead of forgotten and concealed again each time. When the least slack
//   of the last seconds stays above the margin (plus the jitter of the 20 s they did not
//   see), playback runs up to 0.3 % fast until it is back (a pitch change under 6 cents), and
//   a frame is dropped when it is more than two frames above.
// - Clock drift between the sender's 48 kHz and this output is measured, not waited for: the
//   earliest transit of each second (arrival less the sender's sample time) drifts by the
//   clocks' difference, and a line fitted through the last 20 s of them gives the playback
//   rate that keeps the delay still, so it does not creep over an hour. Stalls leave the
//   earliest transits alone, so they do not move the rate.
// - A frame lost in transit (a hole in the sequence, later frames already here) is concealed
//   by repeating the last pitch period of what played (waveform substitution), fading out
//   over 60 ms; after 100 ms of concealment the buffer plays silence and waits.
// - The sender's zero gate leaves no hole in the sequence: its silence is played as silence
//   and never counted as loss. The frame that ends it (AFTER_GAP) starts playback again with
//   the delay the sound stopped with (or, if it came later than that allows, the margin).

const RATE = 48000;
const CHANNELS = 2;
const RING_SAMPLES = RATE; // 1 s of stereo samples
const HISTORY = 1024; // samples of what played, for concealment
const CROSSFADE = 48; // 1 ms
const MAX_CONCEALED_RUN_MS = 100;
const SILENCE_POWER = 1e-10; // mean square under which a frame is silence (-100 dBFS)
const SLACK_WINDOW = 256; // frames whose slack the rate control looks at
const JITTER_SECONDS = 20; // seconds of arrival jitter the delay covers
const RECENT_SECONDS = 3; // about the rate control's window of frames (SLACK_WINDOW)
const DELAY_WINDOW = 1024; // frames whose delay the p99 is taken over

/** The counts and figures a viewer can show. */
export class PlayoutStats {
  constructor() {
    /** Frames received (after parsing), duplicates included. */
    this.framesReceived = 0;
    /** Frames played as decoded. */
    this.framesPlayed = 0;
    /** Sequence numbers never received: frames lost in transit. */
    this.framesLost = 0;
    /** Frames played concealed: a loss, a late frame, or a wait for one. */
    this.framesConcealed = 0;
    /** Frames that arrived after their turn (already concealed), or twice: dropped. */
    this.framesLate = 0;
    /** Frames dropped to bring the delay down (steady network, fast sender clock, backlog). */
    this.framesDropped = 0;
    /** Times the sender's zero gate ended a silence (AFTER_GAP with no hole). */
    this.gaps = 0;
    /** Milliseconds from arrival to play of the last frame played. */
    this.delayMs = 0;
    /** The 99th percentile of that delay over the last 1024 frames. */
    this.delayP99Ms = 0;
    /** Audio waiting to be played, in ms. */
    this.bufferedMs = 0;
    /** The arrival jitter the delay covers, ms: a second's widest transit spread in 20 s. */
    this.jitterMs = 0;
    /** Playback speed now: 1 plays at the sender's rate (drift and delay control move it). */
    this.rate = 1;
    /** The length of the last frame played, ms (the sender's --frame-ms). */
    this.frameMs = 0;
  }
}

export class PlayoutBuffer {
  /**
   * `marginMs`: the slack kept above zero (the output's block plus message timing, a few
   * ms); `maxDelayMs`: the delay's ceiling; `startDelayMs`: the delay of the first frame.
   */
  constructor({ marginMs = 6, maxDelayMs = 300, startDelayMs = 10 } = {}) {
    this.marginMs = marginMs;
    this.maxDelayMs = maxDelayMs;
    this.startDelayMs = startDelayMs;
    this.stats = new PlayoutStats();
    this.ring = new Float32Array(RING_SAMPLES * CHANNELS);
    this.ringRead = 0; // fractional sample position
    this.ringWrite = 0; // samples written (absolute)
    this.history = new Float32Array(HISTORY * CHANNELS); // the last HISTORY samples appended
    this.waiting = new Map(); // sequence → frame
    this.nextSequence = null;
    this.newestSequence = null;
    this.playing = false;
    this.concealedRunMs = 0;
    this.concealPhase = 0;
    this.concealPeriod = 0;
    this.crossfadeNext = false;
    this.lastWasAudible = false;
    this.slacks = new Float64Array(SLACK_WINDOW);
    this.slackCount = 0;
    // Each past second's transits (arrival less the sender's sample time, ms): their spread,
    // and the earliest with the sender's time of its frame.
    this.spreads = new Float64Array(JITTER_SECONDS);
    this.earliest = new Float64Array(JITTER_SECONDS);
    this.earliestAt = new Float64Array(JITTER_SECONDS);
    this.secondCount = 0;
    // This second's transits so far: the least (secondLow, of the frame sent at secondLowAt),
    // the greatest (secondHigh), and the ms of frames they cover (secondMs).
    this.startSecond();
    this.lastTransitMs = 0;
    this.delays = new Float64Array(DELAY_WINDOW);
    this.delaySorted = new Float64Array(DELAY_WINDOW);
    this.delayCount = 0;
    this.framesSinceControl = 0;
    this.received = new Uint8Array(4096); // seen-bitmap of recent sequence numbers
    this.firstSequence = null;
    this.historyStart = 0;
    this.monoScratch = new Float32Array(HISTORY);
    this.fadeFrom = new Float32Array(CROSSFADE * CHANNELS);
    this.concealGain = 1;
    this.insertedFor = null;
    this.playOffsetMs = null; // play time minus the sender's sample time, of the last frame
    this.lastFrameSamples = 0;
  }

  /**
   * A decoded frame: `sequence`, `sampleClock` (its first sample's index on the sender's
   * 48 kHz clock, a Number), `afterGap`, `pcm` (interleaved stereo Float32Array of
   * `pcm.length / 2` samples) and `arrivalMs` (this output's clock when it arrived). With
   * `replace`, the frame's audio decoded again (in order, after a frame that came late):
   * it replaces the audio of that frame if it is still waiting, and counts for nothing.
   */
  push(frame) {
    const stats = this.stats;
    const sequence = frame.sequence >>> 0;
    if (frame.replace) {
      const waiting = this.waiting.get(sequence);
      if (waiting) waiting.pcm = frame.pcm;
      return;
    }
    stats.framesReceived++;
    this.countSequence(sequence);
    if (this.nextSequence !== null && this.playing && before(sequence, this.nextSequence)) {
      stats.framesLate++;
      return;
    }
    if (this.waiting.has(sequence)) {
      stats.framesLate++;
      return;
    }
    if (this.waiting.size >= 128) this.dropOldestWaiting();
    this.waiting.set(sequence, frame);
  }

  /**
   * Fills `left` and `right` (Float32Arrays of one output block) with the next samples.
   * `nowMs`: this output's clock at the block's first sample.
   */
  render(left, right, nowMs) {
    const count = left.length;
    const rate = this.stats.rate;
    const needed = Math.ceil(count * rate) + 2;
    let filled = true;
    while (this.ringWrite - Math.floor(this.ringRead) < needed) {
      const playMs = nowMs + (this.ringWrite - this.ringRead) / rate / (RATE / 1000);
      if (!this.appendNext(playMs)) {
        filled = false;
        break;
      }
    }
    const ring = this.ring;
    let position = this.ringRead;
    for (let index = 0; index < count; index++) {
      const whole = Math.floor(position);
      if (whole + 1 >= this.ringWrite) {
        left[index] = 0;
        right[index] = 0;
        if (whole < this.ringWrite) position = this.ringWrite; // played out: stay at the end
        continue;
      }
      const fraction = position - whole;
      const a = (whole % RING_SAMPLES) * 2;
      const b = ((whole + 1) % RING_SAMPLES) * 2;
      left[index] = ring[a] + (ring[b] - ring[a]) * fraction;
      right[index] = ring[a + 1] + (ring[b + 1] - ring[a + 1]) * fraction;
      position += rate;
    }
    this.ringRead = Math.min(position, this.ringWrite);
    if (!filled && !this.playing) this.ringRead = this.ringWrite;
    this.stats.bufferedMs = this.bufferedMs();
  }

  /** Audio waiting: what is in the ring plus the frames in order after it. */
  bufferedMs() {
    let samples = this.ringWrite - this.ringRead;
    if (this.nextSequence !== null) {
      for (let sequence = this.nextSequence; ; sequence = (sequence + 1) >>> 0) {
        const frame = this.waiting.get(sequence);
        if (!frame) break;
        samples += frame.pcm.length / CHANNELS;
      }
    }
    return samples / (RATE / 1000);
  }

  // Appends the next frame (or its concealment) to the ring, to be heard at `playMs`.
  // False when there is nothing to play yet.
  appendNext(playMs) {
    if (!this.playing) return this.start(playMs);
    const frame = this.waiting.get(this.nextSequence);
    if (frame) {
      this.waiting.delete(this.nextSequence);
      this.nextSequence = (this.nextSequence + 1) >>> 0;
      this.insertedFor = null;
      if (frame.afterGap) this.stats.gaps++;
      this.appendFrame(frame);
      const sentMs = frame.sampleClock / (RATE / 1000);
      this.controlDelay(playMs - frame.arrivalMs, frame.arrivalMs - sentMs, sentMs);
      this.playOffsetMs = playMs - sentMs;
      return true;
    }
    if (this.newerWaiting()) {
      // The next frame is lost or late, and later ones are here.
      if (this.insertedFor === this.nextSequence || this.concealedRunMs >= MAX_CONCEALED_RUN_MS) {
        // Its time was concealed already while waiting for it: go on with the next one.
        this.nextSequence = (this.nextSequence + 1) >>> 0;
        this.insertedFor = null;
        return this.appendNext(playMs);
      }
      this.nextSequence = (this.nextSequence + 1) >>> 0;
      this.appendConcealment();
      return true;
    }
    // An underrun: conceal while waiting for the frame (the delay grows by what it lacked),
    // unless there is nothing worth concealing: then wait in silence (the zero gate, an outage).
    if (this.concealedRunMs >= MAX_CONCEALED_RUN_MS || !this.lastWasAudible) {
      this.playing = false;
      return false;
    }
    this.insertedFor = this.nextSequence;
    this.appendConcealment();
    return true;
  }

  // Starts playing (first frame, or after a silence) once the oldest frame has waited the
  // start delay.
  start(playMs) {
    let first = null;
    for (const [sequence, frame] of this.waiting) {
      if (this.nextSequence !== null && before(sequence, this.nextSequence)) {
        this.waiting.delete(sequence); // from before the silence: too late now
        this.stats.framesLate++;
      } else if (first === null || before(sequence, first.sequence)) {
        first = frame;
      }
    }
    if (!first) return false;
    if (playMs < this.startTime(first)) return false;
    this.playing = true;
    this.nextSequence = first.sequence >>> 0;
    this.concealedRunMs = 0;
    this.concealPeriod = 0;
    this.crossfadeNext = false;
    this.lastWasAudible = false;
    return this.appendNext(playMs);
  }

  // When to start playing `first`. After a silence, at the same offset from the sender's
  // sample clock as the frames before it (so the sound comes back with the delay it had: the
  // sample clock runs on through a gap), or as soon after as the margin allows when it came
  // too late for that (a stall as it came back: what it adds is what it was late, no more);
  // at the start, or when the sender's clock is not the one before, once it has waited the
  // start delay.
  startTime(first) {
    if (this.playOffsetMs !== null) {
      const resumeMs = first.sampleClock / (RATE / 1000) + this.playOffsetMs;
      if (Math.abs(resumeMs - first.arrivalMs) <= this.maxDelayMs) {
        return Math.max(resumeMs, first.arrivalMs + this.marginMs);
      }
    }
    return first.arrivalMs + this.startDelay();
  }

  // The delay a first start waits: the jitter of the last 20 s and the margin, or the
  // initial delay.
  startDelay() {
    if (this.slackCount < 16) return this.startDelayMs;
    return Math.min(this.maxDelayMs, Math.max(this.marginMs, this.jitterMs() + this.marginMs));
  }

  // The arrival jitter of the last `seconds` (this one and those before it, up to 20): the
  // widest spread of a second's transit times (arrival less the sender's sample time, so the
  // player's own delay steps do not count).
  jitterMs(seconds = JITTER_SECONDS) {
    let widest = this.secondHigh - this.secondLow;
    if (!(widest > 0)) widest = 0;
    const count = Math.min(this.secondCount, JITTER_SECONDS, seconds - 1);
    for (let back = 1; back <= count; back++) {
      widest = Math.max(widest, this.spreads[(this.secondCount - back) % JITTER_SECONDS]);
    }
    return widest;
  }

  // How much faster than this output the sender's clock runs (0.001: 0.1 % fast), from the
  // slope of the last 20 s of each second's earliest transit; 0 until there are 5 seconds.
  senderSkew() {
    const count = Math.min(this.secondCount, JITTER_SECONDS);
    if (count < 5) return 0;
    let meanAt = 0;
    let meanTransit = 0;
    for (let index = 0; index < count; index++) {
      meanAt += this.earliestAt[index] / count;
      meanTransit += this.earliest[index] / count;
    }
    let covariance = 0;
    let variance = 0;
    for (let index = 0; index < count; index++) {
      const at = this.earliestAt[index] - meanAt;
      covariance += at * (this.earliest[index] - meanTransit);
      variance += at * at;
    }
    // A transit that falls by 1 ms per second of the sender's time: a sender 0.1 % fast.
    return variance > 0 ? clamp(-covariance / variance, -0.005, 0.005) : 0;
  }

  // Keeps a frame's slack for the rate control's recent window, and its transit in this
  // second's spread.
  recordArrival(slackMs, transitMs, sentMs) {
    this.slacks[this.slackCount % SLACK_WINDOW] = slackMs;
    this.slackCount++;
    if (Math.abs(transitMs - this.lastTransitMs) > 1000) {
      // A new sender clock (a restarted sender) or an outage of over a second: what the
      // transits said before says nothing now.
      this.secondCount = 0;
      this.startSecond();
    }
    this.lastTransitMs = transitMs;
    if (transitMs < this.secondLow) {
      this.secondLow = transitMs;
      this.secondLowAt = sentMs;
    }
    this.secondHigh = Math.max(this.secondHigh, transitMs);
    this.secondMs += this.stats.frameMs || 10;
    if (this.secondMs >= 1000) {
      const at = this.secondCount % JITTER_SECONDS;
      this.spreads[at] = this.secondHigh - this.secondLow;
      this.earliest[at] = this.secondLow;
      this.earliestAt[at] = this.secondLowAt;
      this.secondCount++;
      this.startSecond();
    }
  }

  // A second of transits starts with none.
  startSecond() {
    this.secondLow = Infinity;
    this.secondLowAt = 0;
    this.secondHigh = -Infinity;
    this.secondMs = 0;
  }

  // Rate control: the sender's clock, and faster when the least slack of the recent frames
  // is above the margin. Jitter the last 20 s saw and the recent frames did not (a stall that
  // comes back every few seconds) is kept as slack above the margin.
  controlDelay(slackMs, transitMs, sentMs) {
    this.recordArrival(slackMs, transitMs, sentMs);
    this.delays[this.delayCount % DELAY_WINDOW] = Math.max(0, slackMs);
    this.delayCount++;
    this.stats.delayMs = Math.max(0, slackMs);
    if (++this.framesSinceControl < 10) return;
    this.framesSinceControl = 0;
    this.stats.delayP99Ms = this.delayP99();
    const jitterMs = this.jitterMs();
    this.stats.jitterMs = jitterMs;
    const count = Math.min(this.slackCount, SLACK_WINDOW);
    if (count < 32) return;
    let low = Infinity;
    for (let index = 0; index < count; index++) low = Math.min(low, this.slacks[index]);
    const unseenJitterMs = Math.max(0, jitterMs - this.jitterMs(RECENT_SECONDS));
    const excessMs = low - this.marginMs - unseenJitterMs;
    if (excessMs > 2 * (this.stats.frameMs || 10) + 5 && this.nextFrameWaiting()) {
      this.dropNextFrame();
      for (let index = 0; index < count; index++) this.slacks[index] -= this.stats.frameMs || 10;
      return;
    }
    // Too little slack is not made up here: the frame that misses its turn is concealed and
    // the delay grows by what it lacked.
    this.stats.rate = 1 + clamp(this.senderSkew() + Math.max(0, excessMs) * 3e-4, -0.003, 0.003);
  }

  delayP99() {
    const count = Math.min(this.delayCount, DELAY_WINDOW);
    const sorted = this.delaySorted.subarray(0, count);
    sorted.set(this.delays.subarray(0, count));
    sorted.sort();
    return sorted[Math.min(count - 1, Math.floor(count * 0.99))];
  }

  nextFrameWaiting() {
    return this.waiting.has(this.nextSequence);
  }

  dropNextFrame() {
    this.waiting.delete(this.nextSequence);
    this.nextSequence = (this.nextSequence + 1) >>> 0;
    this.stats.framesDropped++;
    this.crossfadeNext = true;
  }

  newerWaiting() {
    for (const sequence of this.waiting.keys()) if (before(this.nextSequence, sequence)) return true;
    return false;
  }

  dropOldestWaiting() {
    let oldest = null;
    for (const sequence of this.waiting.keys()) {
      if (oldest === null || before(sequence, oldest)) oldest = sequence;
    }
    this.waiting.delete(oldest);
    this.stats.framesDropped++;
  }

  appendFrame(frame) {
    const pcm = frame.pcm;
    const samples = pcm.length / CHANNELS;
    const fade = this.crossfadeNext || this.concealedRunMs > 0;
    if (fade) this.prepareContinuation();
    this.concealPeriod = 0;
    let energy = 0;
    for (let index = 0; index < samples; index++) {
      let l = pcm[index * 2];
      let r = pcm[index * 2 + 1];
      energy += l * l + r * r;
      if (fade && index < CROSSFADE) {
        // From the continuation of what played into the frame, without a click.
        const weight = (index + 1) / (CROSSFADE + 1);
        l = this.fadeFrom[index * 2] + (l - this.fadeFrom[index * 2]) * weight;
        r = this.fadeFrom[index * 2 + 1] + (r - this.fadeFrom[index * 2 + 1]) * weight;
      }
      this.write(l, r);
    }
    // Under -100 dBFS is silence: Opus decodes the gate's digital silence to ~1e-34, not 0.
    this.lastWasAudible = energy > SILENCE_POWER * pcm.length;
    this.lastFrameSamples = samples;
    this.stats.frameMs = samples / (RATE / 1000);
    this.concealedRunMs = 0;
    this.crossfadeNext = false;
    this.stats.framesPlayed++;
  }

  // Waveform substitution: the last pitch period of what played, repeated; the first frame
  // at full level, then fading out over 50 ms. Counted as concealed.
  appendConcealment() {
    if (this.concealPeriod === 0) {
      this.concealPeriod = this.pitchPeriod();
      this.concealPhase = 0;
    }
    const samples = this.lastFrameSamples || 480;
    const frameMs = samples / (RATE / 1000);
    for (let index = 0; index < samples; index++) {
      const atMs = this.concealedRunMs + index / (RATE / 1000);
      this.concealGain = atMs < frameMs ? 1 : Math.max(0, 1 - (atMs - frameMs) / 50);
      const at = this.periodSample(this.concealPeriod, this.concealPhase++);
      this.write(this.history[at] * this.concealGain, this.history[at + 1] * this.concealGain);
    }
    this.concealedRunMs += frameMs;
    this.crossfadeNext = true;
    this.stats.framesConcealed++;
  }

  // What would have come next, for the crossfade into a frame: the concealment going on, or
  // (after a dropped frame) the last period of what played.
  prepareContinuation() {
    const concealing = this.concealPeriod !== 0;
    const period = concealing ? this.concealPeriod : this.pitchPeriod();
    const gain = concealing ? this.concealGain : 1;
    for (let index = 0; index < CROSSFADE; index++) {
      const at = this.periodSample(period, (concealing ? this.concealPhase : 0) + index);
      this.fadeFrom[index * 2] = this.history[at] * gain;
      this.fadeFrom[index * 2 + 1] = this.history[at + 1] * gain;
    }
  }

  // Index in `history` of the sample `phase` after its end, repeating its last `period`.
  periodSample(period, phase) {
    return ((this.historyStart + HISTORY - period + (phase % period)) % HISTORY) * 2;
  }

  // The lag (2.5 to 15 ms) at which the last samples best repeat: normalized autocorrelation.
  pitchPeriod() {
    const mono = this.monoScratch;
    for (let index = 0; index < HISTORY; index++) {
      const at = ((this.historyStart + index) % HISTORY) * 2;
      mono[index] = this.history[at] + this.history[at + 1];
    }
    const window = 160;
    let best = 480;
    let bestScore = -Infinity;
    for (let lag = 120; lag <= 720; lag++) {
      let cross = 0;
      let energy = 0;
      for (let index = HISTORY - window; index < HISTORY; index++) {
        const b = mono[index - lag];
        cross += mono[index] * b;
        energy += b * b;
      }
      const score = energy > 0 ? cross / Math.sqrt(energy) : 0;
      if (score > bestScore + 1e-9) {
        bestScore = score;
        best = lag;
      }
    }
    return best;
  }

  write(l, r) {
    const at = (this.ringWrite % RING_SAMPLES) * 2;
    this.ring[at] = l;
    this.ring[at + 1] = r;
    this.ringWrite++;
    if (this.concealPeriod === 0) {
      // History keeps real audio only: concealment repeats from it.
      const h = (this.historyStart % HISTORY) * 2;
      this.history[h] = l;
      this.history[h + 1] = r;
      this.historyStart = (this.historyStart + 1) % HISTORY;
    }
  }

  // Loss accounting on sequence numbers: a number never seen between the first and the
  // newest is lost; one seen late is taken back off the count.
  countSequence(sequence) {
    if (this.firstSequence === null) {
      this.firstSequence = sequence;
      this.newestSequence = sequence;
      this.mark(sequence, 1);
      return;
    }
    if (before(this.newestSequence, sequence)) {
      const jump = (sequence - this.newestSequence) >>> 0;
      if (jump > this.received.length) {
        this.stats.framesLost += jump - 1;
        this.received.fill(0);
      } else {
        for (let s = (this.newestSequence + 1) >>> 0; s !== sequence; s = (s + 1) >>> 0) {
          this.mark(s, 0);
          this.stats.framesLost++;
        }
      }
      this.newestSequence = sequence;
      this.mark(sequence, 1);
      return;
    }
    const age = (this.newestSequence - sequence) >>> 0;
    if (!before(sequence, this.firstSequence) && age < this.received.length && this.received[sequence % this.received.length] === 0) {
      this.mark(sequence, 1);
      this.stats.framesLost--;
    }
  }

  mark(sequence, seen) {
    this.received[sequence % this.received.length] = seen;
  }
}

// Whether sequence `a` comes before `b`, across the 2^32 wrap.
function before(a, b) {
  const difference = (b - a) >>> 0;
  return difference !== 0 && difference < 0x80000000;
}

function clamp(value, low, high) {
  return Math.min(high, Math.max(low, value));
}
