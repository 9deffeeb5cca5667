// Reads AudioFrame bytes (docs/wire-format.md, versions 1 and 2) exactly as the library's
// C and Swift parsers do: the same checks, in the same order, with the same error names.

/** Bytes of the fixed header every version starts with. */
export const HEADER_BYTES = 36;
/** An Opus packet's largest size (RFC 6716), the payload limit of version 1. */
export const MAX_PACKET_BYTES = 1275;
/** Frame lengths, in samples per channel, that Opus can code. */
export const OPUS_FRAME_SAMPLES = Object.freeze([120, 240, 480, 960, 1920, 2880]);

/** Flag bits of byte 5. */
export const Flags = Object.freeze({ AFTER_GAP: 1, APP: 2, MIC: 4, HOST: 8, AFTER_LOSS: 16, TIME_STEP: 32 });

/**
 * Why bytes are not an AudioFrame. `code` is the C API's name without its prefix
 * (DESKAUDIO_ERROR_FRAME_TRUNCATED is "truncated"), `status` its number.
 */
export class FrameFormatError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "FrameFormatError";
    this.code = code;
    this.status = STATUS[code];
  }
}

const STATUS = Object.freeze({ truncated: -10, oversized: -11, magic: -12, version: -13, field: -14 });

/**
 * Parses one AudioFrame. `bytes` is a Uint8Array (or ArrayBuffer) holding exactly one frame.
 * Returns its fields; `payload` is a view into `bytes`, not a copy. Throws FrameFormatError.
 */
export function parseAudioFrame(bytes) {
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  const length = bytes.byteLength;
  if (length < 5) throw truncated(length, HEADER_BYTES);
  if (bytes[0] !== 0x44 || bytes[1] !== 0x41 || bytes[2] !== 0x46 || bytes[3] !== 0x52) {
    throw new FrameFormatError("magic", 'not an AudioFrame: the first bytes are not "DAFR"');
  }
  const version = bytes[4];
  if (version !== 1 && version !== 2) {
    throw new FrameFormatError("version", `AudioFrame version ${version} is not one this library reads (1, 2)`);
  }
  if (length < HEADER_BYTES) throw truncated(length, HEADER_BYTES);
  const view = new DataView(bytes.buffer, bytes.byteOffset, length);
  const flags = bytes[5];
  const channels = bytes[6];
  const codec = bytes[7];
  const frame = {
    version,
    flags,
    afterGap: (flags & Flags.AFTER_GAP) !== 0,
    afterLoss: (flags & Flags.AFTER_LOSS) !== 0,
    timeStep: (flags & Flags.TIME_STEP) !== 0,
    app: (flags & Flags.APP) !== 0,
    mic: (flags & Flags.MIC) !== 0,
    host: (flags & Flags.HOST) !== 0,
    channels,
    codec,
    sampleRate: view.getUint32(8, true),
    sequence: view.getUint32(12, true),
    sampleClock: view.getBigUint64(16, true),
    captureTimeNs: view.getBigUint64(24, true),
    frameSamples: view.getUint16(32, true),
    payloadLength: view.getUint16(34, true),
    mapping: null,
    payload: null,
  };
  let headerBytes = HEADER_BYTES;
  let packetLimit = MAX_PACKET_BYTES;
  if (version === 2) {
    if (channels < 1 || channels > 8) throw field(`channels ${channels} is not 1 to 8 (version 2)`);
    headerBytes = HEADER_BYTES + 2 + channels;
    if (length < headerBytes) throw truncated(length, headerBytes);
    frame.mapping = {
      streams: bytes[36],
      coupledStreams: bytes[37],
      table: Array.from(bytes.subarray(38, headerBytes)),
    };
    const streams = Math.max(1, frame.mapping.streams);
    packetLimit = streams * MAX_PACKET_BYTES + (streams - 1) * 2;
  }
  if (frame.payloadLength > packetLimit) {
    throw new FrameFormatError("oversized", `AudioFrame oversized: ${frame.payloadLength} bytes, at most ${packetLimit}`);
  }
  const total = headerBytes + frame.payloadLength;
  if (length < total) throw truncated(length, total);
  if (length > total) throw new FrameFormatError("oversized", `AudioFrame oversized: ${length} bytes, at most ${total}`);
  if (frame.mapping) {
    if (codec !== 2) throw field(`codec ${codec} is not Opus multistream (2) in version 2`);
    const problem = mappingProblem(frame.mapping);
    if (problem) throw field(`channel mapping: ${problem}`);
  } else {
    if (codec !== 1) throw field(`codec ${codec} is not Opus (1)`);
    if (channels !== 1 && channels !== 2) throw field(`channels ${channels} is not 1 or 2`);
  }
  if (frame.sampleRate !== 48000) throw field(`sample rate ${frame.sampleRate} is not 48000`);
  if (!OPUS_FRAME_SAMPLES.includes(frame.frameSamples)) {
    throw field(`frame of ${frame.frameSamples} samples is not an Opus frame size`);
  }
  if (frame.payloadLength === 0) throw field("payload is empty");
  frame.payload = bytes.subarray(headerBytes, total);
  return frame;
}

/** RFC 7845 §5.1.1's rules for a family 1 mapping; null when libopus can decode it. */
function mappingProblem({ streams, coupledStreams, table }) {
  if (streams < 1) return "no Opus stream";
  if (coupledStreams > streams) return `${coupledStreams} coupled streams of ${streams}`;
  const decoded = streams + coupledStreams;
  if (decoded > 255) return `${decoded} decoded channels`;
  for (let index = 0; index < table.length; index++) {
    if (table[index] !== 255 && table[index] >= decoded) {
      return `channel ${index} maps to stream channel ${table[index]} of ${decoded}`;
    }
  }
  return null;
}

function truncated(have, need) {
  return new FrameFormatError("truncated", `AudioFrame truncated: ${have} bytes, ${need} needed`);
}

function field(text) {
  return new FrameFormatError("field", `AudioFrame field invalid: ${text}`);
}

/**
 * Lays out one AudioFrame as the library's writer does: version 1 for mono and stereo,
 * version 2 when `fields.mapping` ({ streams, coupledStreams, table }) is given. `fields`
 * holds `channels`, `sequence` (a u32), `sampleClock` and `captureTimeNs` (non-negative
 * integers, Number or BigInt), and optionally `flags` (default 0), `codec` (1, or 2 with a
 * mapping), `sampleRate` (48000) and `frameSamples` (480). `payload` is the Opus packet
 * (1 to the version's limit of bytes). Returns a new Uint8Array. Throws RangeError for a
 * field the parser would refuse, so what it writes always parses back to `fields`.
 */
export function writeAudioFrame(fields, payload) {
  const mapping = fields.mapping ?? null;
  const channels = fields.channels;
  const codec = fields.codec ?? (mapping ? 2 : 1);
  const sampleRate = fields.sampleRate ?? 48000;
  const frameSamples = fields.frameSamples ?? 480;
  const flags = fields.flags ?? 0;
  const headerBytes = mapping ? HEADER_BYTES + 2 + channels : HEADER_BYTES;
  const streams = mapping ? Math.max(1, mapping.streams) : 1;
  const packetLimit = streams * MAX_PACKET_BYTES + (streams - 1) * 2;
  if (!(payload instanceof Uint8Array)) throw new RangeError("the payload is not a Uint8Array");
  if (payload.byteLength < 1 || payload.byteLength > packetLimit) {
    throw new RangeError(`a payload of ${payload.byteLength} bytes: an Opus packet has 1 to ${packetLimit}`);
  }
  if (!Number.isInteger(flags) || flags < 0 || flags > 255) throw new RangeError(`flags ${flags} are not a byte`);
  if (mapping) {
    if (!Number.isInteger(channels) || channels < 1 || channels > 8) throw new RangeError(`channels ${channels} are not 1 to 8`);
    if (codec !== 2) throw new RangeError(`codec ${codec} is not Opus multistream (2)`);
    if (!Array.isArray(mapping.table) || mapping.table.length !== channels) {
      throw new RangeError(`a mapping table of ${mapping.table?.length} entries for ${channels} channels`);
    }
    const problem = mappingProblem(mapping);
    if (problem) throw new RangeError(`channel mapping: ${problem}`);
  } else {
    if (channels !== 1 && channels !== 2) throw new RangeError(`channels ${channels} are not 1 or 2`);
    if (codec !== 1) throw new RangeError(`codec ${codec} is not Opus (1)`);
  }
  if (sampleRate !== 48000) throw new RangeError(`sample rate ${sampleRate} is not 48000`);
  if (!OPUS_FRAME_SAMPLES.includes(frameSamples)) {
    throw new RangeError(`a frame of ${frameSamples} samples is not an Opus frame size`);
  }
  if (!Number.isInteger(fields.sequence) || fields.sequence < 0 || fields.sequence > 0xffffffff) {
    throw new RangeError(`sequence ${fields.sequence} is not a u32`);
  }
  const bytes = new Uint8Array(headerBytes + payload.byteLength);
  const view = new DataView(bytes.buffer);
  bytes.set([0x44, 0x41, 0x46, 0x52, mapping ? 2 : 1, flags, channels, codec]);
  view.setUint32(8, sampleRate, true);
  view.setUint32(12, fields.sequence, true);
  view.setBigUint64(16, u64(fields.sampleClock, "sampleClock"), true);
  view.setBigUint64(24, u64(fields.captureTimeNs, "captureTimeNs"), true);
  view.setUint16(32, frameSamples, true);
  view.setUint16(34, payload.byteLength, true);
  if (mapping) bytes.set([mapping.streams, mapping.coupledStreams, ...mapping.table], HEADER_BYTES);
  bytes.set(payload, headerBytes);
  return bytes;
}

function u64(value, name) {
  const big = typeof value === "bigint" ? value : Number.isSafeInteger(value) ? BigInt(value) : -1n;
  if (big < 0n || big > 0xffffffffffffffffn) throw new RangeError(`${name} ${value} is not a non-negative 64-bit integer`);
  return big;
}
