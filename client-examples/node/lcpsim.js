// SPDX-License-Identifier: Apache-2.0
'use strict';
// lcpsim.js: the Node.js client for lcpsimd (the package lcpsim; protocol
// lcpsim.v1, proto/lcpsim/v1/lcpsim.proto).
//
// One Client is one ZeroMQ DEALER socket connected to the daemon's ROUTER.
// Each call sends a Request with a fresh id and resolves with the result of
// the matching Reply; several calls may be in flight at once (the replies are
// matched by id). A call rejects with LcpsimError when the daemon answers
// with a status other than OK (err.code: the Status.Code number, err.codeName:
// its name, err.message: the daemon's message) and with TimeoutError when no
// reply comes in time. A call that timed out may still be applied by the
// daemon; its late reply is recognised by its id and dropped.
//
// Messages are plain objects with camelCase field names (protobufjs's
// conversion: step_count -> stepCount); 64-bit integers come back as numbers,
// enums as their names, unset fields as their defaults.
//
// The .proto file is loaded at run time: the package's own copy,
// proto/lcpsim/v1/lcpsim.proto beside this file (scripts/copy-proto.js puts
// it there when the package is packed or installed in its folder), or the
// path given as `protoPath` or in LCPSIM_PROTO.

const fs = require('node:fs');
const path = require('node:path');
const zmq = require('zeromq');
const protobuf = require('protobufjs');

const DEFAULT_PROTO = path.join(__dirname, 'proto', 'lcpsim', 'v1', 'lcpsim.proto');
const DEFAULT_TIMEOUT_MS = 5000;

const STATUS_NAMES = [
  'OK',
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'FAILED_PRECONDITION',
  'RESOURCE_EXHAUSTED',
  'INTERNAL',
  'PERMISSION_DENIED',
];

// The daemon answered with a status other than OK.
class LcpsimError extends Error {
  constructor(code, message, call) {
    const codeName = STATUS_NAMES[code] || `CODE_${code}`;
    super(`${call}: ${codeName}: ${message}`);
    this.name = 'LcpsimError';
    this.code = code;
    this.codeName = codeName;
    this.serverMessage = message;
    this.call = call;
  }
}

// No reply within the timeout.
class TimeoutError extends Error {
  constructor(call, timeoutMs, endpoint) {
    super(`${call}: no reply from ${endpoint} within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
    this.code = 'TIMEOUT';
    this.call = call;
  }
}

const protoCache = new Map();

// The lcpsim.v1 message types, loaded once per .proto path.
function loadProtocol(protoPath) {
  const file = path.resolve(protoPath || process.env.LCPSIM_PROTO || DEFAULT_PROTO);
  let types = protoCache.get(file);
  if (!types) {
    if (file === DEFAULT_PROTO && !fs.existsSync(file)) {
      throw new Error(`lcpsim: the package has no ${file}: in a checkout, run npm install (or ` +
        'npm ci) in client-examples/node, which copies it from proto/; or give protoPath or LCPSIM_PROTO');
    }
    const root = protobuf.loadSync(file);
    const type = (name) => root.lookupType(`lcpsim.v1.${name}`);
    types = {
      root,
      Request: type('Request'),
      Reply: type('Reply'),
      State: type('State'),
      RecordEntry: type('RecordEntry'),
    };
    protoCache.set(file, types);
  }
  return types;
}

// protobufjs's fromObject drops keys that name no field, so a misspelt
// field (`base` for `baseType`) would silently send its default. Every key
// must name a field of its message (camelCase, as fromObject takes them);
// messages inside are checked too. Throws a TypeError naming the path.
function checkFields(type, value, where) {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return;
  for (const key of Object.keys(value)) {
    const field = type.fields[key];
    if (!field) {
      const names = Object.keys(type.fields).join(', ');
      throw new TypeError(`${where}.${key}: ${type.fullName.slice(1)} has no field '${key}' (its fields: ${names})`);
    }
    field.resolve();
    const inner = field.resolvedType;
    if (!inner || !inner.fields || value[key] == null) continue;
    if (field.repeated && Array.isArray(value[key])) {
      value[key].forEach((item, i) => checkFields(inner, item, `${where}.${key}[${i}]`));
    } else {
      checkFields(inner, value[key], `${where}.${key}`);
    }
  }
}

// ---- CURVE keys: a daemon started with --curve-secret-key ----

const Z85_KEY = /^[0-9a-zA-Z.\-:+=^!/*?&<>()[\]{}@%$#]{40}$/;

// The names and values of a key file as `lcpsimd --gen-keys NAME` writes
// them (`name = "value"` lines, # comments): { publicKey, secretKey, role },
// each undefined when the file lacks it. Throws naming the file and line of a
// malformed one.
function readKeyFile(file) {
  const values = {};
  fs.readFileSync(file, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const equals = line.indexOf('=');
    const name = equals < 0 ? '' : line.slice(0, equals).trim();
    let value = equals < 0 ? '' : line.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    const key = { 'public-key': 'publicKey', 'secret-key': 'secretKey', role: 'role' }[name];
    if (!key) throw new Error(`${file}:${i + 1}: expected public-key, secret-key or role = "value"`);
    if (key !== 'role' && !Z85_KEY.test(value)) throw new Error(`${file}:${i + 1}: ${name} must be 40 characters of Z85`);
    values[key] = value;
  });
  return values;
}

// The public key (Z85) in a NAME.pub or NAME.key file.
function loadPublicKey(file) {
  const { publicKey } = readKeyFile(file);
  if (!publicKey) throw new Error(`${file}: no public-key line`);
  return publicKey;
}

// The key pair { publicKey, secretKey } in a NAME.key file.
function loadKeyPair(file) {
  const { publicKey, secretKey } = readKeyFile(file);
  if (!publicKey || !secretKey) throw new Error(`${file}: a key pair file has public-key and secret-key lines (give NAME.key)`);
  return { publicKey, secretKey };
}

// An IPv6 address (tcp://[::1]:5555) connects only with the socket's ipv6
// option. Only for a bracketed host: with it a host name may resolve to its
// IPv6 address first (localhost to ::1) where the daemon listens on IPv4.
function ipv6Option(endpoint) {
  return endpoint.startsWith('tcp://[') ? { ipv6: true } : {};
}

// Socket options for CURVE: options.serverKey is the daemon's public key (Z85)
// or its .pub file; options.clientKeys this client's { publicKey, secretKey }
// or its NAME.key file. None without serverKey.
function curveOptions(options) {
  if (!options.serverKey) {
    if (options.clientKeys) throw new Error('lcpsim: clientKeys without serverKey: CURVE needs the daemon\'s public key');
    return {};
  }
  const serverKey = Z85_KEY.test(options.serverKey) && !fs.existsSync(options.serverKey)
    ? options.serverKey : loadPublicKey(options.serverKey);
  const pair = typeof options.clientKeys === 'string' ? loadKeyPair(options.clientKeys)
    : options.clientKeys || zmq.curveKeyPair();
  return { curveServerKey: serverKey, curvePublicKey: pair.publicKey, curveSecretKey: pair.secretKey };
}

// The calls about worlds: Request.world stays empty.
const CALLS_OF_NO_WORLD = new Set(['createWorld', 'destroyWorld', 'listWorlds', 'batchStep']);

// The state stream's topic of a world: "state" for the default world ('' or
// 'default'), "w/NAME/state" for another.
function stateTopic(world = '') {
  return !world || world === 'default' ? 'state' : `w/${world}/state`;
}

const TO_OBJECT = { longs: Number, enums: String, bytes: Buffer, defaults: true, arrays: true, oneofs: true };

class Client {
  // endpoint: the daemon's request socket, e.g. "tcp://127.0.0.1:5555".
  // options.timeoutMs: the default per-call timeout (5000 ms);
  // options.protoPath: the lcpsim.proto to load;
  // options.serverKey, options.clientKeys: CURVE (see curveOptions), for a
  // daemon started with --curve-secret-key. A key it does not allow gets no
  // reply: calls reject with TimeoutError.
  constructor(endpoint = 'tcp://127.0.0.1:5555', options = {}) {
    this.endpoint = endpoint;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.proto = loadProtocol(options.protoPath);
    this.socket = new zmq.Dealer({ linger: 0, ...ipv6Option(endpoint), ...curveOptions(options) });
    this.socket.connect(endpoint);
    // Shared with the world views (see world()): one id sequence and one send
    // queue per socket.
    this.io = {
      nextId: 1,
      sendQueue: Promise.resolve(), // zeromq allows one send in progress at a time
    };
    this.pending = new Map(); // id -> { resolve, reject, timer, call }
    this.worldName = ''; // Request.world of every call but those about worlds
    this.closed = false;
    this.receiving = this.receiveLoop();
  }

  async receiveLoop() {
    try {
      for await (const frames of this.socket) {
        // A DEALER sees the empty delimiter the ROUTER sends back, then the reply.
        const body = frames[frames.length - 1];
        let reply;
        try {
          reply = this.proto.Reply.toObject(this.proto.Reply.decode(body), TO_OBJECT);
        } catch (err) {
          continue; // not a Reply: nothing to match it with
        }
        const waiter = this.pending.get(reply.id);
        if (!waiter) continue; // late reply to a call that timed out
        this.pending.delete(reply.id);
        clearTimeout(waiter.timer);
        const status = reply.status || { code: 'OK', message: '' };
        const code = typeof status.code === 'string' ? STATUS_NAMES.indexOf(status.code) : status.code;
        if (code !== 0) {
          waiter.reject(new LcpsimError(code, status.message, waiter.call));
        } else if (reply.result !== waiter.call) {
          waiter.reject(new Error(`${waiter.call}: the reply carries ${reply.result || 'no result'}`));
        } else {
          waiter.resolve(reply[waiter.call]);
        }
      }
    } catch (err) {
      if (!this.closed) this.failAll(err);
    }
  }

  failAll(err) {
    for (const [id, waiter] of this.pending) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
      this.pending.delete(id);
    }
  }

  // Sends one call (`call` is the Request oneof's camelCase name) and resolves
  // with its result message as a plain object.
  // options.timeoutMs: this call's timeout; options.world: the world it
  // addresses (default: the client's, see world()).
  call(call, body = {}, options = {}) {
    if (this.closed) return Promise.reject(new Error(`${call}: the client is closed`));
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const id = this.io.nextId++;
    // The calls about worlds name their worlds in their own fields.
    const world = CALLS_OF_NO_WORLD.has(call) ? '' : (options.world ?? this.worldName);
    try {
      checkFields(this.proto.Request, { [call]: body }, 'request');
    } catch (err) {
      return Promise.reject(err);
    }
    const request = this.proto.Request.fromObject({ id, world, [call]: body });
    const bytes = this.proto.Request.encode(request).finish();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new TimeoutError(call, timeoutMs, this.endpoint));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, call });
      this.io.sendQueue = this.io.sendQueue
        .then(() => this.socket.send([Buffer.alloc(0), bytes]))
        .catch((err) => {
          if (this.pending.delete(id)) {
            clearTimeout(timer);
            reject(err);
          }
        });
    });
  }

  // ---- one method per call of the protocol ----

  // Resolves with { payload, serverVersion }.
  ping(payload = Buffer.alloc(0), options) {
    return this.call('ping', { payload: Buffer.from(payload) }, options);
  }

  // Resolves with { serverVersion, settings, robots, bodies }.
  getInfo(options) {
    return this.call('getInfo', {}, options);
  }

  // Steps `steps` times after applying `targets` (an array of SetTarget
  // requests, all or none). Resolves with { time, stepCount, state,
  // stepsRun, cancelled }. sensors (with returnState): the readings wanted,
  // e.g. { imus: true, energy: true } (see getState); left out: none.
  step(steps = 1, { targets = [], returnState = false, includeContacts = false, sensors } = {}, options) {
    return this.call('step', { steps, targets, returnState, includeContacts, sensors }, options);
  }

  // request: { robot, joints | indices, mode, position, velocity, kp, kd,
  // effortLimit, torque, gravityCompensation } (mode: 'KEEP', 'OFF',
  // 'POSITION', 'VELOCITY', 'TORQUE').
  setTarget(request, options) {
    return this.call('setTarget', request, options);
  }

  // Resolves with the State: { time, stepCount, robots, bodies, contacts,
  // solverStats }. sensors: the readings wanted, any of { linkTwists,
  // linkAccelerations, imus, jointWrenches, contactWrenches, energy,
  // solverStats } set true; each adds its fields (robot.imus,
  // robot.jointWrenches, robot.linkContactWrenches, robot.energy,
  // body.contactWrench, body.energy, state.solverStats, ...), which are
  // otherwise empty ([] or null).
  async getState({ includeContacts = false, sensors } = {}, options) {
    const reply = await this.call('getState', { includeContacts, sensors }, options);
    return reply.state;
  }

  // request: { urdfPath | urdfText, name, basePose, base, selfCollision }.
  // Resolves with { robot } (a RobotInfo).
  loadModel(request, options) {
    return this.call('loadModel', request, options);
  }

  // request: { name, shape, pose, twist, mass, isStatic, friction, restitution }.
  spawn(request, options) {
    return this.call('spawn', request, options);
  }

  remove(name, options) {
    return this.call('remove', { name }, options);
  }

  reset(options) {
    return this.call('reset', {}, options);
  }

  // Resolves with { snapshot (a Buffer), time }.
  saveState(slot = '', options) {
    return this.call('saveState', { slot }, options);
  }

  // source: { snapshot } or { slot }.
  restoreState(source, options) {
    return this.call('restoreState', source, options);
  }

  // request: the settings to change ({ timestep, gravity, iterations,
  // maxPushSpeed, relaxIterations, restitutionThreshold,
  // enforceVelocityLimits, ... }; a field left out is unchanged); resolves
  // with { settings } as they now are.
  setSettings(request, options) {
    return this.call('setSettings', request, options);
  }

  // Asks for a State on the PUB socket every `everySteps` steps (0 stops),
  // each with the readings of `sensors` (as getState's; left out: none).
  subscribe(everySteps, { includeContacts = false, sensors } = {}, options) {
    return this.call('subscribe', { everySteps, includeContacts, sensors }, options);
  }

  // ---- editing the world between steps ----

  // request: { robot, q, qd, joints: [{ name, position, velocity }],
  // basePose, baseTwist }: all or nothing, what is left out is kept; the
  // next step starts from exactly this state.
  setRobotState(request, options) {
    return this.call('setRobotState', request, options);
  }

  // request: { name | id, pose, twist } (a free body; left out: kept).
  setBodyState(request, options) {
    return this.call('setBodyState', request, options);
  }

  // request: { target, link, force, torque, point, frame ('WORLD' | 'LOCAL'),
  // duration ('NEXT_STEP' | 'HOLD') } or { clear: holdId } or
  // { clearAll: true }. Resolves with { holdId, held }.
  applyWrench(request, options) {
    return this.call('applyWrench', request, options);
  }

  // request: { bodies: [{ body | robot and link, mass, inertia, com,
  // friction, restitution }], joints: [{ robot, joint, damping, friction,
  // lower, upper, effortLimit, velocityLimit }] }: all or nothing.
  setDynamics(request, options) {
    return this.call('setDynamics', request, options);
  }

  // request: { name, robot, link, pose, accelNoise, gyroNoise, accelBias,
  // gyroBias, seed }: an IMU site on a robot's link, read with
  // sensors: { imus: true } (robot.imus: [{ name, link, specificForce,
  // angularRate }], site axes; at rest specificForce is +|g| up).
  addImu(request, options) {
    return this.call('addImu', request, options);
  }

  // Stops this client's running Step (the one with request id stepId, or
  // whichever runs when 0): the Step's promise then resolves with cancelled
  // and stepsRun. Resolves with { cancelled, stepId, stepsRun, stepsRequested }.
  cancelStep(stepId = 0, options) {
    return this.call('cancelStep', { stepId }, options);
  }

  // Resolves with { scene, info }: scene { revision, worldGeoms, robots:
  // [{ name, links: [{ name, geoms }] }], bodies: [{ id, name, isStatic,
  // geoms }] }, each geom { type, pose, radius, halfLength, halfExtents,
  // vertices, triangles } in its owner's frame; info as getInfo's.
  getScene(options) {
    return this.call('getScene', {}, options);
  }

  // request: { path, stop, everySteps, includeContacts }: starts recording
  // to path below the daemon's --record-dir (a new file), or with stop ends
  // the recording. Resolves with { path, statesWritten, bytesWritten,
  // recording }. Read the file with readRecording.
  record(request, options) {
    return this.call('record', request, options);
  }

  // ---- worlds ----

  // A view of this client addressing world `name` ('' or 'default': the
  // default world): the same socket and ids, every call with Request.world
  // set to `name`. Close the client, not its views.
  world(name) {
    const view = Object.create(this);
    view.worldName = !name || name === 'default' ? '' : String(name);
    view.close = async () => {}; // the socket is the client's
    return view;
  }

  // request: { name, scenePath | sceneText | copyOf, copyState, snapshot }
  // (copyOf: 'default' for the default world; snapshot: a Buffer from
  // saveState or a batchStep result, restored into the new world). Resolves
  // with its WorldInfo { name, time, stepCount, robotCount, bodyCount,
  // memoryBytes }.
  async createWorld(request = {}, options) {
    const reply = await this.call('createWorld', request, options);
    return reply.world;
  }

  // Destroys a world (not the default one: FAILED_PRECONDITION).
  destroyWorld(name, options) {
    return this.call('destroyWorld', { name }, options);
  }

  // Resolves with { worlds (WorldInfo, the default world first), maxWorlds,
  // maxWorldBytes, workers }.
  listWorlds(options) {
    return this.call('listWorlds', {}, options);
  }

  // One BatchStep: worlds is an array of WorldSteps { world, steps, targets,
  // restore: { slot } | { snapshot }, robotStates, bodyStates }, each applied
  // to its world in that order (restore, states, targets, steps); the daemon
  // steps them in parallel. Resolves with the results in the request's order,
  // each { world, status: { code, message }, time, stepCount, stepsRun,
  // state (with returnState), snapshot (with returnSnapshot) }; a world that
  // failed has status.code other than 'OK' and was left as it was.
  async batchStep(worlds, { returnState = false, includeContacts = false, sensors, returnSnapshot = false } = {},
    options) {
    const reply = await this.call('batchStep', { worlds, returnState, includeContacts, sensors, returnSnapshot },
      options);
    return reply.results;
  }

  // Closes the socket; calls still waiting reject.
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.failAll(new Error('the client is closed'));
    this.socket.close();
    await this.receiving.catch(() => {});
  }
}

// The daemon's state stream: an async iterator of State objects read from
// its PUB endpoint (e.g. "tcp://127.0.0.1:5556"). Close with stream.close().
class StateStream {
  // options: protoPath, serverKey and clientKeys as for Client (a
  // controller's or an observer's key), and world: the world whose states
  // come ('' or 'default': the default world's; its publishing is started by
  // client.world(name).subscribe(everySteps)).
  constructor(endpoint, options = {}) {
    this.proto = loadProtocol(options.protoPath);
    this.topic = Buffer.from(stateTopic(options.world));
    this.socket = new zmq.Subscriber({
      linger: 0,
      ...ipv6Option(endpoint),
      ...curveOptions(options),
    });
    this.socket.connect(endpoint);
    this.socket.subscribe(this.topic);
  }

  async *[Symbol.asyncIterator]() {
    for await (const [frame] of this.socket) {
      // One frame: the topic and the serialized State after it.
      if (!frame.subarray(0, this.topic.length).equals(this.topic)) continue;
      yield this.proto.State.toObject(this.proto.State.decode(frame.subarray(this.topic.length)), TO_OBJECT);
    }
  }

  close() {
    this.socket.close();
  }
}

const RECORDING_MAGIC = 'lcpsim-recording';
const RECORDING_FORMAT_VERSION = 1;

// The entries of a recording (lcpsimd --record, Client.record) as plain
// objects ({ header } | { scene } | { state }, as the messages above): the
// file is a sequence of RecordEntry messages, each preceded by its length as
// a varint (protobufjs's decodeDelimited). Reads the whole file; a last
// entry cut short (a daemon killed while writing) ends the list.
// options: protoPath.
function* readRecording(file, options = {}) {
  const { RecordEntry } = loadProtocol(options.protoPath);
  const reader = protobuf.Reader.create(fs.readFileSync(file));
  let first = true;
  while (reader.pos < reader.len) {
    let entry;
    try {
      entry = RecordEntry.toObject(RecordEntry.decodeDelimited(reader), TO_OBJECT);
    } catch (err) {
      if (err instanceof RangeError) return; // cut short
      throw err;
    }
    if (first) {
      if (!entry.header || entry.header.magic !== RECORDING_MAGIC) {
        throw new Error(`${file}: not an lcpsim recording (no RecordHeader first)`);
      }
      if (entry.header.formatVersion !== RECORDING_FORMAT_VERSION) {
        throw new Error(`${file}: recording format ${entry.header.formatVersion}; this client reads ` +
          `format ${RECORDING_FORMAT_VERSION}`);
      }
      first = false;
    }
    yield entry;
  }
}

module.exports = {
  Client, StateStream, readRecording, LcpsimError, TimeoutError, STATUS_NAMES, DEFAULT_PROTO, loadProtocol,
  readKeyFile, loadPublicKey, loadKeyPair, curveOptions, stateTopic,
};
