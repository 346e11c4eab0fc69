// SPDX-License-Identifier: Apache-2.0
// The page's URL query parameters (docs/viewer.md lists them).

function vector(text, fallback) {
  if (text === null) return fallback;
  const parts = text.split(",").map(Number);
  if (parts.length !== 3 || parts.some((v) => !Number.isFinite(v))) return fallback;
  return parts;
}

function number(text, fallback) {
  if (text === null) return fallback;
  const value = Number(text);
  return Number.isFinite(value) ? value : fallback;
}

function flag(text) {
  return text !== null && text !== "0" && text !== "false";
}

export function readParams(search) {
  const query = new URLSearchParams(search);
  return {
    // A view of the built-in world: the arm, the table and the box on it.
    camera: vector(query.get("camera"), [1.9, -1.7, 1.2]),
    target: vector(query.get("target"), [0.45, 0.0, 0.35]),
    fov: number(query.get("fov"), 50), // vertical, degrees
    ws: query.get("ws"), // the WebSocket URL; default ws(s)://<this host>/ws
    follow: query.get("follow") || "", // a body or robot name
    contacts: flag(query.get("contacts")),
    frames: flag(query.get("frames")),
    forceScale: number(query.get("forcescale"), 0.02), // m of arrow per N of contact force
    replay: flag(query.get("replay")), // show the replay controls whatever the header says
    paused: flag(query.get("paused")), // a replay: start paused at the first State
    hz: query.get("hz"), // the stream's state rate, at most the daemon's (60)
    ui: query.get("ui") !== "0",
  };
}
