// The page `deskaudio serve --web` serves: the frames from its WebSocket into the player, a
// level meter and the player's stats. It reports the stats back over the socket once a
// second (the server prints them: that is how its tests read the browser's side). When the
// server takes a microphone (`serve --remote-mic`), a button sends the browser's microphone
// back on the same socket.
import { AudioFramePlayer } from "./deskaudio-player.js";
import { AudioFrameMicrophone } from "./deskaudio-mic.js";

const status = document.getElementById("status");
const listen = document.getElementById("listen");
const level = document.getElementById("level");
const table = document.getElementById("stats");
const microphoneButton = document.getElementById("microphone");
const muteButton = document.getElementById("mute");
const microphoneStatus = document.getElementById("microphone-status");
const parameters = new URLSearchParams(location.search);

const SHOWN = [
  ["delay now (ms)", "delayMs"],
  ["delay p99 (ms)", "delayP99Ms"],
  ["output latency (ms)", "outputLatencyMs"],
  ["output delay now (ms)", "outputDelayMs"],
  ["buffered (ms)", "bufferedMs"],
  ["jitter covered (ms)", "jitterMs"],
  ["frame length (ms)", "frameMs"],
  ["frames played", "framesPlayed"],
  ["lost", "framesLost"],
  ["concealed", "framesConcealed"],
  ["late", "framesLate"],
  ["dropped", "framesDropped"],
  ["gated silences", "gaps"],
];

if (!window.isSecureContext) {
  // WebCodecs and AudioWorklet exist only on https:// or localhost.
  status.textContent = "This page needs a secure origin to play: open it through https (a reverse proxy) "
    + "or as http://localhost (ssh -L PORT:localhost:PORT this-host).";
  throw new Error("not a secure context");
}
let player;
try {
  player = await AudioFramePlayer.create();
} catch (error) {
  status.textContent = `This browser cannot play the stream: ${error.message}`;
  throw error;
}
// ?pilot=HZ: a quiet sine of that frequency (−43 dBFS) beside the stream, rendered by the
// browser itself: a recording of the browser's output then shows where the browser's own
// output stalled (a hole in the pilot), apart from anything in the stream (the web tests use it).
const pilotHz = Number(parameters.get("pilot"));
if (pilotHz > 0 && pilotHz < 20000) {
  const pilot = new OscillatorNode(player.context, { frequency: pilotHz });
  pilot.connect(new GainNode(player.context, { gain: 0.01 })).connect(player.context.destination);
  pilot.start();
}
if (!player.running) {
  listen.hidden = false;
  listen.onclick = async () => {
    await player.resume();
    listen.hidden = true;
  };
}

player.onstats = (stats) => {
  const dbfs = stats.peak > 0 ? 20 * Math.log10(stats.peak) : -Infinity;
  level.style.width = `${Math.max(0, Math.min(100, ((dbfs + 60) / 60) * 100))}%`;
  table.replaceChildren(
    ...SHOWN.map(([label, key]) => {
      const row = document.createElement("tr");
      const value = stats[key];
      row.innerHTML = `<td>${label}</td><td>${typeof value === "number" ? +value.toFixed(1) : "–"}</td>`;
      return row;
    }),
  );
};

// The microphone, while on; `send` sends up whichever connection is open now.
let microphone = null;
let send = null;

function showMicrophone(text) {
  microphoneStatus.hidden = false;
  microphoneStatus.textContent = text;
}

// ?mic=on: the microphone starts with the page (where the browser grants it without a click);
// ?micProcessing=off: without the browser's echo cancellation, noise suppression and gain
// control, =echo: with its echo cancellation alone (the web tests measure each so);
// ?micRead=worklet: read it through the AudioContext even where the track can be read as captured.
async function startMicrophone() {
  const processing = parameters.get("micProcessing") ?? "all";
  try {
    microphone = await AudioFrameMicrophone.create({
      context: player.context,
      echoCancellation: processing !== "off",
      noiseSuppression: processing === "all",
      autoGainControl: processing === "all",
      readFrom: parameters.get("micRead") === "worklet" ? "worklet" : "track",
      send: (bytes) => send?.(bytes),
    });
  } catch (error) {
    showMicrophone(`No microphone: ${error.message}`);
    return;
  }
  microphone.onerror = (error) => {
    stopMicrophone();
    showMicrophone(`The microphone stopped: ${error.message}`);
  };
  microphoneButton.textContent = "Microphone off";
  muteButton.hidden = false;
  showMicrophone("Sending the microphone");
}

function stopMicrophone() {
  microphone?.close();
  microphone = null;
  send?.("microphone off");
  microphoneButton.textContent = "Microphone on";
  muteButton.hidden = true;
  muteButton.textContent = "Mute";
  showMicrophone("Microphone off");
}

microphoneButton.onclick = async () => {
  if (microphone) return stopMicrophone();
  if (!player.running) await player.resume();
  await startMicrophone();
};

muteButton.onclick = () => {
  if (!microphone) return;
  if (microphone.muted) microphone.unmute();
  else microphone.mute();
  muteButton.textContent = microphone.muted ? "Unmute" : "Mute";
};

// The server's text messages: its hello says whether it takes a microphone.
function serverSaid(text) {
  let hello = null;
  try {
    hello = JSON.parse(text);
  } catch {}
  if (hello?.type === "server" && hello.microphone) {
    microphoneButton.hidden = false;
    if (parameters.get("mic") === "on" && !microphone) startMicrophone();
  }
}

// The stats the server shows (and the web tests read), once a second.
function report(send) {
  const stats = player.stats;
  const sent = microphone ? microphone.stats : {};
  send(JSON.stringify({
    type: "stats", running: player.running, ...stats,
    micFramesIn: sent.framesIn, micFramesSent: sent.framesSent, micFramesHeld: sent.framesHeld,
    micPacketsUnmatched: sent.packetsUnmatched, micEncodeQueue: sent.encodeQueueSize,
    micReadFrom: sent.readFrom, micInputHoles: sent.inputHoles, micEchoCancellation: sent.echoCancellation,
    micNoiseSuppression: sent.noiseSuppression, micAutoGainControl: sent.autoGainControl,
  }));
  if (player.running) status.textContent = "Playing";
}

// The frames are received and decoded in the player's Worker (player.receive()), out of
// this thread's way; ?receive=page does it here instead, on the page's thread (to compare).
function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const url = `${scheme}://${location.host}/frames`;
  if (parameters.get("receive") === "page") return connectOnThePage(url);
  const connection = player.receive(url);
  let reporting = null;
  connection.onopen = () => (reporting = opened((data) => connection.send(data)));
  connection.ontext = serverSaid;
  connection.onclose = () => closed(reporting);
}

function connectOnThePage(url) {
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  let reporting = null;
  let acknowledge = null;
  let newest = null;
  socket.onopen = () => {
    reporting = opened((data) => socket.send(data));
    // The newest frame that arrived, 4 times a second: the server stops sending to a browser
    // that falls behind.
    acknowledge = setInterval(() => newest !== null && socket.send(`received ${newest}`), 250);
  };
  socket.onmessage = (event) => {
    if (typeof event.data === "string") return serverSaid(event.data);
    try {
      const { sequence } = player.push(new Uint8Array(event.data));
      if (newest === null || ((sequence - newest) >>> 0) < 0x80000000) newest = sequence;
    } catch (error) {
      console.warn(error.message);
    }
  };
  socket.onclose = () => closed(reporting, acknowledge);
}

// Either way of receiving, once connected: `sendUp` sends up the connection, and the stats go
// up it once a second (the timer returned).
function opened(sendUp) {
  status.textContent = player.running ? "Playing" : "Connected: press Listen";
  send = sendUp;
  return setInterval(() => report(send), 1000);
}

// Either way, once the connection closed: its timers stopped, and a new one in a second.
function closed(...timers) {
  for (const timer of timers) clearInterval(timer);
  send = null;
  status.textContent = "Disconnected: reconnecting…";
  setTimeout(connect, 1000);
}

// ?busy=MS: the page's own thread kept busy MS ms out of every 50 (the web tests' load).
const busyMs = Number(parameters.get("busy"));
if (busyMs > 0 && busyMs < 50) {
  setInterval(() => {
    const until = performance.now() + busyMs;
    while (performance.now() < until);
  }, 50);
}

connect();
