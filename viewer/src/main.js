// SPDX-License-Identifier: Apache-2.0
// The lcpsim viewer page: draws the world lcpsimd streams over the WebSocket /ws.
//
// Messages: each binary message is one lcpsim.v1.RecordEntry. A RecordHeader comes first, then
// a GetSceneReply (the geoms and names), then States; a new GetSceneReply whenever the scene
// changes (a State carries the revision of the scene it belongs to). The page sends JSON text
// messages for a replay's controls ({"cmd":"play"}, {"cmd":"pause"}, {"cmd":"seek","t":s},
// {"cmd":"speed","speed":x}) and to ask for contacts ({"cmd":"contacts","on":bool}).
//
// Only the newest State is drawn, once per animation frame: a slow browser skips states, it
// never queues them.
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { decodeEntry } from "./protocol.js";
import { readParams } from "./params.js";
import { WorldView } from "./world.js";
import { RateMeter } from "./rate.js";

const params = readParams(window.location.search);
const $ = (id) => document.getElementById(id);

// What a test reads to know what the page has drawn (rendered, not only received).
const hook = {
  frames: 0, // States drawn
  lastStepCount: null, // step_count of the last State drawn
  lastTime: null, // its simulated time
  lastSequence: null, // its stream sequence (a live daemon numbers the States it sends)
  sceneRevision: null, // revision of the scene drawn
  ready: false, // a scene and a State of it are on screen
  received: 0, // binary messages received
  replay: false,
};
window.lcpsimViewer = hook;

// ---- three.js: renderer, camera, orbit ----
const renderer = new THREE.WebGLRenderer({ antialias: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setSize(window.innerWidth, window.innerHeight);
$("view").appendChild(renderer.domElement);

const scene3d = new THREE.Scene();
scene3d.background = new THREE.Color(0xdfe6ee);
const sky = new THREE.HemisphereLight(0xffffff, 0x77706a, 1.6);
sky.position.set(0, 0, 1); // lcpsim's up
scene3d.add(sky);
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(2, -3, 5);
scene3d.add(sun);

const camera = new THREE.PerspectiveCamera(params.fov, window.innerWidth / window.innerHeight, 0.01, 500);
camera.up.set(0, 0, 1); // before OrbitControls, which orbits about camera.up
const controls = new OrbitControls(camera, renderer.domElement);
function resetCamera() {
  camera.position.fromArray(params.camera);
  controls.target.fromArray(params.target);
  controls.update();
}
resetCamera();

const world = new WorldView(scene3d);
world.forceScale = params.forceScale;
world.setFramesVisible(params.frames);
world.setContactsVisible(params.contacts);

let needsRender = true;
controls.addEventListener("change", () => {
  needsRender = true;
});
window.addEventListener("resize", () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
  needsRender = true;
});

// ---- the stream ----
let socket = null;
let retryMs = 500;
let pendingState = null; // the newest State not drawn yet
let latestState = null; // the newest State of the scene on screen, drawn or not
let heldState = null; // a State of a scene not received yet
let viewPaused = false;
let followKey = "";
let followLast = null;
let replayEnd = 0;
let replayDuration = 0; // the header's duration
let replayStart = null; // the time of the first State of a replay (its timeline's start)
let seeking = false;
const rate = new RateMeter(1.0);

function setStatus(text) {
  $("status").textContent = text;
}

function send(command) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(command));
}

// The daemon reads the stream's options from the /ws URL's query: the rate (hz), contacts
// from the first State on, and a replay's start paused at its first State (paused).
function streamUrl() {
  if (params.ws) return params.ws;
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const query = new URLSearchParams();
  if (params.hz) query.set("hz", params.hz);
  if (params.contacts) query.set("contacts", "1");
  if (params.paused) query.set("paused", "1");
  const search = query.toString();
  return `${scheme}://${window.location.host}/ws${search ? `?${search}` : ""}`;
}

function connect() {
  setStatus("connecting");
  socket = new WebSocket(streamUrl());
  socket.binaryType = "arraybuffer";
  socket.onopen = () => {
    retryMs = 500;
    setStatus("connected");
    if (world.contactsVisible) send({ cmd: "contacts", on: true });
  };
  socket.onmessage = (event) => {
    if (typeof event.data === "string") return; // text messages carry nothing the page needs
    hook.received += 1;
    let entry;
    try {
      entry = decodeEntry(new Uint8Array(event.data));
    } catch (error) {
      setStatus(`bad message: ${error.message}`);
      return;
    }
    onEntry(entry);
  };
  socket.onclose = () => {
    setStatus(`disconnected; retrying in ${(retryMs / 1000).toFixed(1)} s`);
    window.setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  };
}

function onEntry(entry) {
  switch (entry.entry) {
    case "header":
      onHeader(entry.header);
      break;
    case "scene":
      onScene(entry.scene);
      break;
    case "state":
      onState(entry.state);
      break;
    default:
      break;
  }
}

function onHeader(header) {
  world.setTimestep(header.timestep);
  // A replay's header says so (replay) and gives the recording's length (duration, s): the
  // seek slider spans it from the first State's time (a recording started by the Record call
  // starts where the run was, not at 0).
  hook.replay = params.replay || Boolean(header.replay);
  replayDuration = header.duration > 0 ? header.duration : 0;
  replayStart = null;
  replayEnd = 0;
  $("replay").hidden = !hook.replay || !params.ui;
}

function onScene(reply) {
  world.setScene(reply);
  hook.sceneRevision = world.revision;
  hook.ready = false;
  const menu = $("follow");
  menu.length = 1;
  for (const { key, label } of world.followables()) menu.add(new Option(label, key));
  if (params.follow && !followKey) followKey = world.keyOfName(params.follow);
  menu.value = world.followables().some((f) => f.key === followKey) ? followKey : "";
  followKey = menu.value;
  followLast = null;
  rate.reset();
  // A State of the scene before this one is never drawn on this one.
  latestState = heldState && heldState.scene_revision === world.revision ? heldState : null;
  pendingState = viewPaused ? null : latestState;
  heldState = null;
  needsRender = true;
}

function onState(state) {
  if (world.revision === null || state.scene_revision !== world.revision) {
    heldState = state; // its scene comes next
    return;
  }
  rate.add(state.time, performance.now() / 1000);
  latestState = state;
  if (!viewPaused) pendingState = state;
}

// ---- drawing ----
function drawState(state) {
  world.applyState(state);
  $("sim-time").textContent = state.time.toFixed(3);
  $("step-count").textContent = String(state.step_count);
  const factor = rate.factor();
  $("rtf").textContent = factor === null ? "–" : factor.toFixed(2);
  if (hook.replay && !seeking) {
    if (replayStart === null) {
      // A viewer is sent the first State first (playing or paused at the start).
      replayStart = state.time;
      replayEnd = replayStart + replayDuration;
      $("replay-seek").min = String(replayStart);
    }
    replayEnd = Math.max(replayEnd, state.time);
    $("replay-seek").max = String(replayEnd);
    $("replay-seek").value = String(state.time);
    $("replay-time").textContent = state.time.toFixed(3);
  }
  if (followKey) {
    const position = world.followPosition(followKey);
    if (position) {
      // The camera keeps its offset from what it follows.
      if (followLast) {
        const delta = position.clone().sub(followLast);
        camera.position.add(delta);
        controls.target.add(delta);
        controls.update();
      }
      followLast = position.clone();
    }
  }
}

function animate() {
  window.requestAnimationFrame(animate);
  const state = pendingState;
  pendingState = null;
  if (state) {
    drawState(state);
    needsRender = true;
  }
  if (!needsRender) return;
  needsRender = false;
  renderer.render(scene3d, camera);
  if (state) {
    hook.frames += 1;
    hook.lastStepCount = state.step_count;
    hook.lastTime = state.time;
    hook.lastSequence = Number(state.sequence);
    hook.sceneRevision = world.revision;
    hook.ready = true;
  }
}

// ---- controls ----
function setupControls() {
  if (!params.ui) {
    for (const id of ["hud", "controls", "replay"]) $(id).hidden = true;
  }
  $("show-contacts").checked = params.contacts;
  $("show-contacts").addEventListener("change", (event) => {
    world.setContactsVisible(event.target.checked);
    send({ cmd: "contacts", on: event.target.checked });
    needsRender = true;
  });
  $("show-frames").checked = params.frames;
  $("show-frames").addEventListener("change", (event) => {
    world.setFramesVisible(event.target.checked);
    needsRender = true;
  });
  $("follow").addEventListener("change", (event) => {
    followKey = event.target.value;
    followLast = null;
  });
  $("pause-view").addEventListener("click", () => {
    viewPaused = !viewPaused;
    pendingState = viewPaused ? null : latestState; // resuming draws the newest at once
    $("pause-view").textContent = viewPaused ? "resume view" : "pause view";
  });
  $("reset-camera").addEventListener("click", () => {
    followLast = null;
    resetCamera();
  });
  $("replay-play").addEventListener("click", () => send({ cmd: "play" }));
  $("replay-pause").addEventListener("click", () => send({ cmd: "pause" }));
  const seek = $("replay-seek");
  seek.addEventListener("input", () => {
    seeking = true;
    $("replay-time").textContent = Number(seek.value).toFixed(3);
  });
  seek.addEventListener("change", () => {
    seeking = false;
    // A range input rounds its value to fewer digits than a double has (max 0.2000000000000002
    // reads back as 0.2), so its right end would fall just before the last State: there it
    // stands for the recording's end exactly.
    const t = Number(seek.value);
    send({ cmd: "seek", t: replayEnd - t < 1e-9 ? Math.max(t, replayEnd) : t });
  });
  $("replay-speed").addEventListener("change", (event) => send({ cmd: "speed", speed: Number(event.target.value) }));
}

setupControls();
connect();
animate();
