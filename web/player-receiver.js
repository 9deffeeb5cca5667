// The player's receiver, in a Worker of its own (AudioFramePlayer.receive()): a WebSocket's
// AudioFrames decoded here (./frame-decoding.js) and posted straight to the player's worklet
// through a MessagePort, so the page's main thread, however busy, is not on their way.
import { FrameDecoding } from "./frame-decoding.js";

let socket = null;
let toWorklet = null;
let newest = null;
let acknowledge = null;
const decoding = new FrameDecoding((meta, pcm) => toWorklet.postMessage({ type: "frame", ...meta, pcm }, [pcm.buffer]));

self.onmessage = ({ data: message }) => {
  if (message.type === "connect") {
    toWorklet = message.port;
    connect(message.url);
  } else if (message.type === "send") {
    if (socket?.readyState === WebSocket.OPEN) socket.send(message.data);
  } else if (message.type === "close") {
    socket?.close();
  }
};

function connect(url) {
  socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    self.postMessage({ type: "open" });
    // The newest frame taken, 4 times a second (the server may drop frames for a client
    // that falls behind); the counts to the page with it.
    acknowledge = setInterval(() => {
      if (newest !== null) socket.send(`received ${newest}`);
      self.postMessage({ type: "counts", counts: decoding.counts, arrivalJitter: decoding.arrivalJitter, newest });
    }, 250);
  };
  socket.onmessage = (event) => {
    if (typeof event.data === "string") {
      self.postMessage({ type: "text", text: event.data });
      return;
    }
    try {
      const { sequence } = decoding.push(new Uint8Array(event.data));
      if (newest === null || ((sequence - newest) >>> 0) < 0x80000000) newest = sequence;
    } catch {
      // counted in decoding.counts (framesInvalid, lastError)
    }
  };
  socket.onclose = (event) => {
    clearInterval(acknowledge);
    decoding.close();
    self.postMessage({ type: "close", code: event.code, reason: event.reason, counts: decoding.counts });
  };
}
