"""Signal analysis of the browser tests: 10 ms block levels, tone spans, frequency, burst
onsets and sink-to-sink latency between two time-stamped recordings."""
import numpy as np

RATE = 48000
BLOCK = 480  # 10 ms


def burst_onsets(samples, start, threshold=0.05, quiet=2400):
    """Sample indexes (from `start`) where a burst begins: above `threshold` after at least
    `quiet` samples below it."""
    loud = np.flatnonzero(np.abs(samples[start:]) > threshold) + start
    if len(loud) == 0:
        return []
    onsets = [int(loud[0])]
    gaps = np.diff(loud)
    onsets += [int(index) for index, gap in zip(loud[1:], gaps) if gap > quiet]
    return onsets


BURST_HZ = (1500, 2000, 2500, 3000)


def burst_spectrum(samples, onset_index):
    """The magnitude spectrum of the 10 ms from `onset_index`, Hann-windowed (100 Hz bins)."""
    return np.abs(np.fft.rfft(samples[onset_index:onset_index + BLOCK] * np.hanning(BLOCK)))


def burst_class(samples, onset_index, classes=BURST_HZ):
    """Which of `classes` (Hz) the 10 ms burst starting at `onset_index` is."""
    peak_hz = np.argmax(burst_spectrum(samples, onset_index)) * RATE / BLOCK
    return int(np.argmin([abs(peak_hz - hz) for hz in classes]))


def burst_level(samples, onset_index, kind):
    """dB (of full scale, Hann-windowed) of the 10 ms from `onset_index` at the frequency of
    burst class `kind`: how much of that burst is there."""
    spectrum = burst_spectrum(samples, onset_index)
    centre = int(round(BURST_HZ[kind] * BLOCK / RATE))
    return 20 * np.log10(float(np.max(spectrum[centre - 1:centre + 2])) + 1e-12)


def sink_to_sink(host_samples, host_time, browser_samples, browser_time, host_from, browser_from):
    """Latency of each burst from the host's sink to the browser's, ms, on CLOCK_MONOTONIC,
    each matched to the first burst of its own frequency within 500 ms; and when (ns, at the
    host's sink) each burst was played that the browser did not play (lost on the way: the
    next of the same frequency is 600 ms on)."""
    host = [(host_time(i), burst_class(host_samples, i)) for i in burst_onsets(host_samples, host_from)]
    heard = [(browser_time(i), burst_class(browser_samples, i)) for i in burst_onsets(browser_samples, browser_from)]
    latencies, missed = [], []
    for at, kind in host:
        later = [t for t, heard_kind in heard if heard_kind == kind and 0 <= t - at <= 500e6]
        if later:
            latencies.append((later[0] - at) / 1e6)
        else:
            missed.append(at)
    return latencies, missed


def blocks_of(samples):
    """The whole 10 ms blocks of `samples`, one per row, as float64."""
    return samples[: len(samples) // BLOCK * BLOCK].reshape(-1, BLOCK).astype(np.float64)


def runs(indexes):
    """[block, blocks] of each run of consecutive block indexes in `indexes` (ascending)."""
    result = []
    for index in indexes:
        if result and index == result[-1][0] + result[-1][1]:
            result[-1][1] += 1
        else:
            result.append([int(index), 1])
    return result


def block_levels(samples):
    """RMS of each 10 ms block, in dBFS."""
    return 10 * np.log10(np.mean(blocks_of(samples) ** 2, axis=1) + 1e-20)


def dropouts(samples, levels, first, last, floor):
    """The dropouts between blocks `first` and `last`: (block, blocks, digital) for each run of
    10 ms blocks under `floor` dBFS, `digital` when it holds 1 ms or more of exact zeros. A
    sink fills with exact zeros where its client's samples came too late (the player on the
    host's sink, Chromium on the browser's); what passed through Opus and the web player is
    never exactly zero inside a tone."""
    result = []
    for block, count in runs(np.flatnonzero(levels[first:last] < floor) + first):
        starts, ends = zero_spans(samples[(block - 1) * BLOCK:(block + count + 1) * BLOCK])
        longest_zeros = int(np.max(ends - starts)) if len(starts) else 0
        result.append((block, count, longest_zeros >= RATE // 1000))
    return result


def spans(levels, threshold=-30.0, merge=50):
    """(first, last) block indexes of each run of blocks above `threshold`, merging holes of
    up to `merge` blocks (a dropout inside a tone is not the tone's end: one of 170 ms once
    split a tone in two, under load; the tests' silences between tones are 1 s or more)."""
    loud = np.flatnonzero(levels > threshold)
    if len(loud) == 0:
        return []
    result = [[loud[0], loud[0]]]
    for index in loud[1:]:
        if index - result[-1][1] <= merge:
            result[-1][1] = index
        else:
            result.append([index, index])
    return [(int(first), int(last)) for first, last in result]


def frequency(samples):
    """The tone's frequency: median over half-second windows, a quarter second apart, of the
    interpolated FFT peak, so that a phase jump (a cycle a server skipped, a frame a player
    dropped) moves only the two windows over it (R-WEB-PITCH)."""
    estimates = []
    size, hop = RATE // 2, RATE // 4
    window = np.hanning(size)
    for start in range(0, len(samples) - size + 1, hop):
        spectrum = np.abs(np.fft.rfft(samples[start:start + size] * window))
        peak = int(np.argmax(spectrum[1:-1])) + 1
        a, b, c = np.log(spectrum[peak - 1:peak + 2] + 1e-20)
        estimates.append((peak + 0.5 * (a - c) / (a - 2 * b + c)) * RATE / size)
    return float(np.median(estimates))


def onset(samples, threshold=0.05):
    """Index of the first sample above `threshold`, to the sample."""
    loud = np.flatnonzero(np.abs(samples) > threshold)
    return int(loud[0]) if len(loud) else None


def pilot_levels(samples, hz):
    """The page's pilot sine (demo.js's ?pilot=`hz`, a multiple of 100 Hz: a whole number of
    periods in each 10 ms block) in each block: its amplitude, from its own FFT bin, where the
    tone and the bursts (at most 3 kHz) leave it alone. A block where it is missing is one where
    the browser's own rendering or output stalled (its sink played silence for the page)."""
    return 2 * np.abs(np.fft.rfft(blocks_of(samples), axis=1)[:, int(round(hz * BLOCK / RATE))]) / BLOCK


def pilot_holes(pilot, first_block, last_block):
    """(block, blocks) of each run of blocks between `first_block` and `last_block` in which
    the pilot (`pilot_levels`) is more than 6 dB under its median there."""
    part = pilot[max(0, first_block):min(last_block, len(pilot))]
    if len(part) == 0:
        return []
    return [tuple(hole) for hole in runs(np.flatnonzero(part < np.median(part) / 2) + max(0, first_block))]


def zero_spans(samples):
    """(starts, ends): the sample indexes where each run of exact zeros begins and ends."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], (samples == 0).astype(np.int8), [0]))))
    return edges[::2], edges[1::2]


def zero_runs(samples, least=16):
    """(block, blocks) of each run of at least `least` exact zeros (a third of a millisecond):
    where a sink had nothing from its client in time. With the page's pilot playing, only
    Chromium's output leaves them (a sine is not exactly zero twice running); too short to
    take 6 dB off a block's pilot (`pilot_holes`), they still leave their edges' sound beside
    it (92 zeros put a 10 ms block of the gate's silence at -57.8 dBFS, a core kept busy)."""
    return [(int(start // BLOCK), int((end - 1) // BLOCK - start // BLOCK + 1))
            for start, end in zip(*zero_spans(samples)) if end - start >= least]


def pilot_breaks(samples, hz, radians=0.3):
    """(block, blocks) of each run of blocks where the pilot (`pilot_levels`, a whole number of
    periods per block, so its phase is the same in every block while it plays on) jumps in
    phase against the block before: the browser's output skipped or repeated audio there
    without a hole of silence, and the pilot's edges leave sound beside its frequency (a block
    of -57 dBFS in a silence, with a core kept busy)."""
    bins = np.fft.rfft(blocks_of(samples), axis=1)[:, int(round(hz * BLOCK / RATE))]
    turn = np.abs(np.angle(bins[1:] * np.conj(bins[:-1])))
    present = np.minimum(np.abs(bins[1:]), np.abs(bins[:-1])) > 0.25 * np.median(np.abs(bins))
    return [tuple(run) for run in runs(np.flatnonzero((turn > radians) & present) + 1)]


def tone_shift(samples, block, count, hz=1000):
    """How far the tone (`hz`, a whole number of periods per 10 ms block, so its phase is the
    same in every block while it plays on) lies behind after the `count` blocks from `block`
    than before them, in samples modulo one period (-period/2 up to period/2): about 0 where
    the run stood in for audio whose time went on (a frame concealed, a skip filled); about
    the length of a silence put in where the tone paused and went on where it stopped (a
    player or sink that came late); negative where audio was cut out (or played fast)."""
    bin_index = int(round(hz * BLOCK / RATE))
    before, after = block - 2, block + count + 1
    if before < 0 or (after + 1) * BLOCK > len(samples):
        return float("nan")
    bins = np.fft.rfft(blocks_of(samples[before * BLOCK:(after + 1) * BLOCK]), axis=1)[:, bin_index]
    period = RATE / hz
    return float(-np.angle(bins[-1] * np.conj(bins[0])) / (2 * np.pi) * period)


def clear_of(holes, first, count):
    """A mask of the `count` blocks from block `first`: False in and beside (one block either
    side) each of `holes` ((block, blocks) runs), True elsewhere."""
    mask = np.ones(count, dtype=bool)
    for start, length in holes:
        mask[max(0, start - 1 - first):max(0, start + length + 1 - first)] = False
    return mask


def block_levels_without(samples, hz):
    """`block_levels` with the pilot sine at `hz` (and 200 Hz either side) taken out: what the
    stream played."""
    spectrum = np.fft.rfft(blocks_of(samples), axis=1)
    centre, width = int(round(hz * BLOCK / RATE)), int(round(200 * BLOCK / RATE))
    spectrum[:, centre - width:centre + width + 1] = 0
    return 10 * np.log10(np.mean(np.fft.irfft(spectrum, n=BLOCK, axis=1) ** 2, axis=1) + 1e-20)
