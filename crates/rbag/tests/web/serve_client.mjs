// A real Foxglove WebSocket client for `rbag serve`'s tests: Foxglove's npm
// `@foxglove/ws-protocol` (FoxgloveClient) over the `ws` package, as installed by
// scripts/setup-peers.sh into .peers/web/node_modules (or $RBAG_WEB_MODULES).
//
// usage: node serve_client.mjs MODE URL [options]
//   MODE dump       subscribe to every channel, print what arrives as JSON
//   MODE malformed  send malformed requests, then subscribe and count messages
//   MODE bench      subscribe to everything and print messages/s until playback ends
// options:
//   --proto P[,P]   subprotocols to offer (default foxglove.websocket.v1)
//   --seek NS       after subscribing, send a playback control request: play, seek to NS
//   --speed X       the speed in that request (default 1000)
//   --seek-delay-ms N  send it N ms after subscribing (default 0)
//   --stall-ms N    stop reading the socket for N ms after subscribing (a slow client)
//   --exit-after K  drop the connection after K messages (a client leaving mid-stream)
//   --expect N      (bench) stop after N messages; the rate is N over first to last message
//   --timeout S     give up after S seconds (default 60)
// Output: one JSON object on stdout. Message times are strings (u64 ns).

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.env.RBAG_WEB_MODULES ?? path.join(here, "../../../../.peers/web/node_modules");
const require = createRequire(path.join(modules, "noop.js"));
const WebSocket = require("ws");
const { FoxgloveClient } = require("@foxglove/ws-protocol");

const [mode, url, ...rest] = process.argv.slice(2);
const opt = { proto: "foxglove.websocket.v1", timeout: "60", speed: "1000" };
for (let i = 0; i < rest.length; i += 2) opt[rest[i].replace(/^--/, "")] = rest[i + 1];

// FNV-1a 64 of the bytes and their length, as rbag-testkit's `digest` and tests/oracle/common.py.
function digest(view) {
  let lo = 0x84222325 >>> 0;
  let hi = 0xcbf29ce4 >>> 0;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let i = 0; i < bytes.length; i++) {
    lo = (lo ^ bytes[i]) >>> 0;
    // (hi:lo) * 0x100000001b3 = (hi:lo) * 0x1b3 + ((hi:lo) << 40), modulo 2^64
    const a = lo * 0x1b3;
    const carry = Math.floor(a / 0x100000000);
    const newLo = a >>> 0;
    hi = (Math.imul(hi, 0x1b3) + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = newLo;
  }
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0") + bytes.length.toString(16).padStart(8, "0");
}

function controlRequest(seekNs, speed, id) {
  const idBytes = new TextEncoder().encode(id);
  const buf = new ArrayBuffer(1 + 1 + 4 + 1 + 8 + 4 + idBytes.length);
  const v = new DataView(buf);
  v.setUint8(0, 3); // PlaybackControlRequest
  v.setUint8(1, 0); // play
  v.setFloat32(2, speed, true);
  v.setUint8(6, seekNs === undefined ? 0 : 1);
  v.setBigUint64(7, BigInt(seekNs ?? 0), true);
  v.setUint32(15, idBytes.length, true);
  new Uint8Array(buf, 19).set(idBytes);
  return buf;
}

function parsePlaybackState(data) {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const len = v.getUint32(15, true);
  return {
    status: v.getUint8(1),
    currentTime: v.getBigUint64(2, true).toString(),
    speed: v.getFloat32(10, true),
    didSeek: v.getUint8(14) !== 0,
    requestId: new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset + 19, len)),
  };
}

const out = { mode, protocol: null, serverInfo: null, channels: [], messages: [], statuses: [], errors: [], states: [] };
const started = Date.now();
let finished = false;
function finish(code = 0) {
  if (finished) return;
  finished = true;
  out.elapsedMs = Date.now() - started;
  process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(code));
}
setTimeout(() => {
  out.timedOut = true;
  out.count = count;
  finish(0);
}, Number(opt.timeout) * 1000);

const ws = new WebSocket(url, opt.proto.split(","), { maxPayload: 512 * 1024 * 1024 });
ws.on("unexpected-response", (_req, res) => {
  out.httpStatus = res.statusCode;
  finish(0);
});
ws.on("error", (e) => {
  out.socketError = String(e.message ?? e);
  finish(0);
});
ws.on("close", () => {
  out.closed = true;
  if (!finished && mode !== "dump") finish(0);
});
// PlaybackState (opcode 5) is the SDK's; FoxgloveClient 0.8 does not parse it, so read it raw.
ws.on("message", (data, isBinary) => {
  // FoxgloveClient sets binaryType "arraybuffer".
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (isBinary && bytes.length > 0 && bytes[0] === 5) {
    const s = parsePlaybackState(bytes);
    s.afterMessages = out.messages.length;
    s.atMs = Date.now() - started;
    out.states.push(s);
  }
});

const client = new FoxgloveClient({ ws });
const topics = new Map();
let count = 0;
let firstAt = null;
client.on("open", () => {
  out.protocol = ws.protocol;
});
client.on("error", (e) => {
  const text = String(e?.message ?? e);
  if (!text.includes("opcode in binary message: 5")) out.errors.push(text);
});
client.on("serverInfo", (info) => {
  out.serverInfo = info;
  if (mode === "malformed") malformed();
});
client.on("status", (s) => {
  s.afterMessages = out.messages.length + count;
  out.statuses.push(s);
  if (s.level === 0 && s.message.startsWith("playback ended") && !(mode === "bench" && opt.expect)) {
    if (mode === "bench") {
      const secs = (Date.now() - firstAt) / 1000;
      out.rate = count / secs;
    }
    out.count = count;
    finish(0);
  }
});
client.on("advertise", (channels) => {
  out.channels.push(...channels);
  if (mode === "malformed") return;
  subscribeAll(channels);
});
client.on("message", ({ subscriptionId, timestamp, data }) => {
  if (firstAt === null) firstAt = Date.now();
  if (mode === "bench" || mode === "malformed") {
    count++;
    if (mode === "bench" && opt.expect && count >= Number(opt.expect)) {
      out.rate = count / ((Date.now() - firstAt) / 1000);
      out.count = count;
      finish(0);
    }
    return;
  }
  out.messages.push([topics.get(subscriptionId) ?? `?${subscriptionId}`, timestamp.toString(), digest(data)]);
  if (opt["exit-after"] && out.messages.length >= Number(opt["exit-after"])) {
    ws.terminate();
    finish(0);
  }
});

function subscribeAll(channels) {
  for (const c of channels) topics.set(client.subscribe(c.id), c.topic);
  if (opt.seek !== undefined) {
    setTimeout(() => {
      out.seekSentAtMs = Date.now() - started;
      out.seekSentAfterMessages = out.messages.length;
      ws.send(controlRequest(opt.seek, Number(opt.speed), "seek-1"));
    }, Number(opt["seek-delay-ms"] ?? 0));
  }
  if (opt["stall-ms"]) {
    ws.pause();
    out.stalledAtMessages = out.messages.length;
    setTimeout(() => ws.resume(), Number(opt["stall-ms"]));
  }
}

function malformed() {
  const bad = [
    ["bad JSON", "{not json"],
    ["unknown op", JSON.stringify({ op: "dance" })],
    ["no op", JSON.stringify({ subscriptions: [] })],
    ["bad subscribe", JSON.stringify({ op: "subscribe", subscriptions: "all" })],
    ["unknown channel", JSON.stringify({ op: "subscribe", subscriptions: [{ id: 1, channelId: 999999 }] })],
    ["unknown subscription", JSON.stringify({ op: "unsubscribe", subscriptionIds: [4242] })],
    ["unsupported op", JSON.stringify({ op: "advertise", channels: [] })],
    ["truncated binary", new Uint8Array([3, 0, 0]).buffer],
    ["unknown opcode", new Uint8Array([77, 1, 2, 3]).buffer],
    ["empty binary", new Uint8Array([]).buffer],
  ];
  out.sent = bad.map(([what]) => what);
  for (const [, payload] of bad) ws.send(payload);
  // Then behave: subscribe to everything (ids from 100, clear of the ones above).
  setTimeout(() => {
    let id = 100;
    const subscriptions = out.channels.map((c) => ({ id: id++, channelId: c.id }));
    ws.send(JSON.stringify({ op: "subscribe", subscriptions }));
  }, 300);
}
