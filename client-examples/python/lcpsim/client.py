# SPDX-License-Identifier: Apache-2.0
"""lcpsim.client: a small blocking Python client for lcpsimd.

One method per call of the protocol (lcpsim/v1/lcpsim.proto). Each call waits
for its reply at most the client's timeout; a server error raises LcpsimError
with the server's status code and message, no reply in time raises
LcpsimTimeout. Every call that returns a world state (step, get_state,
Subscriber.receive) returns a lcpsim.state.State: attribute access, robots and
bodies by name, numbers as numpy arrays when numpy is installed. Other results
are the protocol's messages (lcpsim.v1.lcpsim_pb2, also reachable here as `pb`).

    from lcpsim import Client
    with Client("tcp://127.0.0.1:5555") as sim:
        state = sim.step(10, return_state=True)
        print(state.time, state.robots["arm"].q)

A daemon started with --curve-secret-key takes only clients with a key on its allow-list:

    with Client("tcp://sim:5555", server_key="server.pub", client_keys="me.key") as sim:
        ...

Needs pyzmq and protobuf (Debian: python3-zmq, python3-protobuf).
"""

import collections
import copy
import itertools
import math
import os
import time

import zmq
import zmq.utils.z85
from google.protobuf.message import DecodeError

from lcpsim.batch import BatchResult, BatchStepError, batch_request, build_world_steps
from lcpsim.state import State, sensors_message
from lcpsim.v1 import lcpsim_pb2 as pb

DEFAULT_ENDPOINT = "tcp://127.0.0.1:5555"
DEFAULT_PUB_ENDPOINT = "tcp://127.0.0.1:5556"
DEFAULT_TIMEOUT_MS = 5000
STATE_TOPIC = b"state"


def state_topic(world=""):
    """The state stream's topic of a world: "state" for the default world ("" or "default"),
    "w/NAME/state" for another."""
    if not world or world == "default":
        return STATE_TOPIC
    return b"w/" + world.encode() + b"/" + STATE_TOPIC


class LcpsimError(Exception):
    """A failed call: `code` is the server's Status.Code (e.g. pb.Status.NOT_FOUND), or None
    when the failure is the client's (a timeout, an undecodable reply); `message` says why."""

    def __init__(self, code, message):
        super().__init__(code, message)
        self.code = code
        self.message = message

    @property
    def code_name(self):
        if self.code is None:
            return type(self).__name__
        try:
            return pb.Status.Code.Name(self.code)
        except ValueError:
            return "CODE_%d" % self.code

    def __str__(self):
        return "%s: %s" % (self.code_name, self.message)


class LcpsimTimeout(LcpsimError, TimeoutError):
    """No reply within the timeout (the daemon is not there, or is busy)."""

    def __init__(self, message):
        super().__init__(None, message)


class LcpsimProtocolError(LcpsimError):
    """A reply that cannot be decoded or that answers another call."""

    def __init__(self, message):
        super().__init__(None, message)


def _deadline(timeout_ms):
    return None if timeout_ms is None or timeout_ms < 0 else time.monotonic() + timeout_ms / 1000.0


def _wait(socket, event, deadline):
    """True when `socket` is ready for `event` before `deadline` (None: no deadline)."""
    poller = zmq.Poller()
    poller.register(socket, event)
    while True:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready = dict(poller.poll(None if left is None else int(math.ceil(left * 1000))))
        if ready.get(socket, 0) & event:
            return True
        if left is not None and time.monotonic() >= deadline:
            return False


def _values(value):
    """A SetTarget array: None (keep), one number (every joint), or one per joint."""
    if value is None:
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    return [float(v) for v in value]


_TARGET_ARRAYS = ("position", "velocity", "kp", "kd", "effort_limit", "torque")


def _enum(enum_type, value, prefix=""):
    """An enum given by its value or by its name, in any case ("position", "POSITION")."""
    if isinstance(value, str):
        return enum_type.Value(prefix + value.upper())
    return int(value)


def target(robot, joints=None, indices=None, mode=None, position=None, velocity=None, kp=None,
           kd=None, effort_limit=None, torque=None, gravity_compensation=None):
    """A SetTargetRequest for Client.set_target or Client.step.

    The joints addressed: `joints` by name, or `indices` in joint order, or (neither) all of
    them. mode: "keep", "off", "position", "velocity", "torque" (or the enum). Each of
    position, velocity, kp, kd, effort_limit, torque is None (keep), a number (the same for
    every addressed joint), one number per addressed joint, or a dict {joint name: value}
    (then the dicts given must all name the same joints, which become `joints`).
    gravity_compensation: None (keep), True or False."""
    arrays = {"position": position, "velocity": velocity, "kp": kp, "kd": kd,
              "effort_limit": effort_limit, "torque": torque}
    named = [key for key in _TARGET_ARRAYS if isinstance(arrays[key], dict)]
    if named:
        if joints or indices:
            raise ValueError("target: joints come from the dicts; do not give joints or indices")
        joints = list(arrays[named[0]])
        for key in named:
            if set(arrays[key]) != set(joints):
                raise ValueError("target: %s names other joints than %s" % (key, named[0]))
            arrays[key] = [arrays[key][name] for name in joints]
        position, velocity, kp, kd, effort_limit, torque = (arrays[k] for k in _TARGET_ARRAYS)
    request = pb.SetTargetRequest(robot=robot)
    request.joints.extend(joints or [])
    request.indices.extend(indices or [])
    if mode is not None:
        request.mode = _enum(pb.SetTargetRequest.Mode, mode)
    request.position.extend(_values(position))
    request.velocity.extend(_values(velocity))
    request.kp.extend(_values(kp))
    request.kd.extend(_values(kd))
    request.effort_limit.extend(_values(effort_limit))
    request.torque.extend(_values(torque))
    if gravity_compensation is not None:
        request.gravity_compensation = bool(gravity_compensation)
    return request


def robot_state(robot, q=None, qd=None, joints=None, base_position=None, base_orientation=None,
                base_linear=None, base_angular=None):
    """A SetRobotStateRequest for Client.set_robot_state, or for a WorldStep's robot_states
    (world_step, Client.batch_step); the arguments are those of Client.set_robot_state."""
    joints = dict(joints or {})
    for values, slot in ((q, 0), (qd, 1)):
        if isinstance(values, dict):
            for name, value in values.items():
                given = joints.get(name)
                pair = list(given) if isinstance(given, (tuple, list)) else [given, None]
                pair[slot] = value
                joints[name] = tuple(pair)
    q = None if isinstance(q, dict) else q
    qd = None if isinstance(qd, dict) else qd
    request = pb.SetRobotStateRequest(robot=robot)
    request.q.extend(q if q is not None else [])
    request.qd.extend(qd if qd is not None else [])
    for name, value in joints.items():
        position, velocity = value if isinstance(value, (tuple, list)) else (value, None)
        joint = request.joints.add(name=name)
        if position is not None:
            joint.position = position
        if velocity is not None:
            joint.velocity = velocity
    if base_position is not None or base_orientation is not None:
        _pose(request.base_pose, base_position or (0.0, 0.0, 0.0), base_orientation)
    if base_linear is not None or base_angular is not None:
        _vec3(request.base_twist.linear, base_linear or (0.0, 0.0, 0.0))
        _vec3(request.base_twist.angular, base_angular or (0.0, 0.0, 0.0))
    return request


def _pose(message, position=None, orientation=None):
    if position is not None:
        message.position.x, message.position.y, message.position.z = position
    if orientation is not None:  # (w, x, y, z); unset: identity
        q = message.orientation
        q.w, q.x, q.y, q.z = orientation


def _vec3(message, value):
    if value is not None:
        message.x, message.y, message.z = value


def dynamics(bodies=(), joints=()):
    """A SetDynamicsRequest for Client.set_dynamics or Pool.set_dynamics. `bodies`: dicts with
    "body" (a free body) or "robot" and "link", and any of "mass", "inertia" (9 values or the 3
    of the diagonal), "com" (links), "friction", "restitution". `joints`: dicts with "robot",
    "joint" and any of "damping", "friction", "lower", "upper", "effort_limit",
    "velocity_limit"."""
    request = pb.SetDynamicsRequest()
    for entry in bodies:
        message = request.bodies.add()
        for key, value in entry.items():
            if key == "inertia":
                message.inertia.extend(value)
            elif key == "com":
                _vec3(message.com, value)
            else:
                setattr(message, key, value)
    for entry in joints:
        message = request.joints.add()
        for key, value in entry.items():
            setattr(message, key, value)
    return request


def find_robot(message, name):
    """The robot of that name in a GetInfoReply or a State, or None."""
    return next((robot for robot in message.robots if robot.name == name), None)


class RobotNames:
    """A robot's name-to-index maps from its RobotInfo: joints (joint name to its index in
    the joint order, which targets and applied_torque use), q_index and qd_index (joint name
    to its place in q and qd, past a floating base), links (link name to its index in
    link_poses) and frames (frame name to its index in frame_poses)."""

    def __init__(self, info):
        self.info = info
        base_q, base_qd = (7, 6) if info.floating_base else (0, 0)
        self.joints = {joint.name: joint.index for joint in info.joints}
        self.q_index = {name: base_q + i for name, i in self.joints.items()}
        self.qd_index = {name: base_qd + i for name, i in self.joints.items()}
        self.links = {name: i for i, name in enumerate(info.links)}
        self.frames = {frame.name: i for i, frame in enumerate(info.frames)}

    def __repr__(self):
        return "RobotNames(%s: joints %s)" % (self.info.name, list(self.joints))


class StepHandle:
    """A Step sent by Client.step_async: result() waits for its State, cancel() stops it
    between two steps (a CancelStep on the same socket, which is what lets the daemon accept
    it) and returns the CancelStepReply. The Step's reply then says cancelled and
    steps_run."""

    def __init__(self, client, request_id):
        self._client = client
        self.id = request_id
        self._state = None

    def cancel(self):
        return self._client._call("cancel_step", pb.CancelStepRequest(step_id=self.id))

    def done(self):
        """True once the Step's reply has come (without waiting)."""
        if self._state is None:
            return self._client._poll_reply(self.id)
        return True

    def result(self, timeout_ms=None):
        """The Step's State (as Client.step returns it); waits at most timeout_ms (None:
        as long as it takes). After a LcpsimTimeout it may be called again."""
        if self._state is None:
            reply = self._client._receive(self.id, "step", _deadline(timeout_ms),
                                          "%s ms" % timeout_ms, keep_on_timeout=True)
            self._state = self._client._step_state(reply)
        return self._state


KeyPair = collections.namedtuple("KeyPair", "public secret")
KeyPair.__doc__ = "A CURVE key pair, each key 40 characters of Z85 (bytes)."


def read_key_file(path):
    """The names and values of a key file as lcpsimd --gen-keys writes them (`name = "value"`
    lines, comments starting with #): a dict that may hold "public-key", "secret-key" and
    "role". Raises ValueError naming the file and line of a malformed one."""
    values = {}
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, equals, value = line.partition("=")
            name, value = name.strip(), value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            if not equals or name not in ("public-key", "secret-key", "role"):
                raise ValueError("%s:%d: expected public-key, secret-key or role = \"value\""
                                 % (path, number))
            if name != "role" and (len(value) != 40 or not _is_z85(value)):
                raise ValueError("%s:%d: %s must be 40 characters of Z85" % (path, number, name))
            values[name] = value
    return values


def _is_z85(text):
    try:
        return len(zmq.utils.z85.decode(text)) == 32
    except (ValueError, KeyError, TypeError):
        return False


def load_public_key(path):
    """The public key (bytes, Z85) in a NAME.pub or NAME.key file."""
    values = read_key_file(path)
    if "public-key" in values:
        return values["public-key"].encode()
    if "secret-key" in values:
        return zmq.curve_public(values["secret-key"].encode())
    raise ValueError("%s: no public-key line" % path)


def load_key_pair(path):
    """The KeyPair in a NAME.key file (lcpsimd --gen-keys NAME)."""
    values = read_key_file(path)
    if "secret-key" not in values:
        raise ValueError("%s: no secret-key line (give the NAME.key file, not NAME.pub)" % path)
    secret = values["secret-key"].encode()
    public = zmq.curve_public(secret)
    if "public-key" in values and values["public-key"].encode() != public:
        raise ValueError("%s: public-key is not the public key of secret-key" % path)
    return KeyPair(public, secret)


def _public_key(value):
    """A server key given as a Z85 key (40 characters, str or bytes) or a key file's path."""
    if isinstance(value, (str, bytes)) and len(value) == 40 and not os.path.exists(value):
        return value.encode() if isinstance(value, str) else value
    return load_public_key(value)


def _key_pair(value):
    """Client keys given as a (public, secret) pair or a NAME.key file's path."""
    if isinstance(value, (tuple, list)):
        public, secret = (k.encode() if isinstance(k, str) else k for k in value)
        return KeyPair(public, secret)
    return load_key_pair(value)


def curve_options(server_key=None, client_keys=None):
    """The socket options that make a CURVE client of a daemon with that public key
    (server_key) using client_keys; none when server_key is None. client_keys may be None only
    with a server key: then a fresh pair is made, which an allow-list will not know."""
    if server_key is None:
        if client_keys is not None:
            raise ValueError("client_keys without server_key: CURVE needs the server's key")
        return []
    pair = _key_pair(client_keys) if client_keys is not None else KeyPair(*zmq.curve_keypair())
    return [(zmq.CURVE_SERVERKEY, _public_key(server_key)), (zmq.CURVE_PUBLICKEY, pair.public),
            (zmq.CURVE_SECRETKEY, pair.secret)]


class _Socket:
    """One ZeroMQ socket of `kind` connected to `endpoint`, with LINGER 0 and the `options`
    (pairs of option and value) set first; closed by close() or at the end of a with block."""

    def __init__(self, kind, endpoint, context, options):
        self._context = context or zmq.Context.instance()
        self._socket = self._context.socket(kind)
        self._socket.setsockopt(zmq.LINGER, 0)
        # An IPv6 address (tcp://[::1]:5555) connects only with IPV6, set before connect. Only
        # for a bracketed host: with it a host name may resolve to its IPv6 address first
        # (localhost to ::1) where the daemon listens on IPv4.
        if endpoint.startswith("tcp://["):
            self._socket.setsockopt(zmq.IPV6, 1)
        try:
            for option, value in options:
                self._socket.setsockopt(option, value)
        except (zmq.ZMQError, ValueError, OSError):
            self.close()
            raise
        try:
            self._socket.connect(endpoint)
        except zmq.ZMQError:
            self.close()
            raise

    def close(self):
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_CALLS_OF_NO_WORLD = frozenset(("create_world", "destroy_world", "list_worlds", "batch_step"))


class Client(_Socket):
    """A connection to the daemon's request socket (a DEALER; replies matched by request id, so
    a late reply to a call that timed out is discarded). Not for use from several threads.

    server_key and client_keys connect with CURVE to a daemon started with --curve-secret-key:
    server_key is its public key (Z85) or the path of its .pub file, client_keys a
    (public, secret) pair or the path of this client's NAME.key file (lcpsimd --gen-keys).
    A key the daemon does not allow gets no reply: calls raise LcpsimTimeout."""

    def __init__(self, endpoint=DEFAULT_ENDPOINT, timeout_ms=DEFAULT_TIMEOUT_MS, context=None,
                 server_key=None, client_keys=None):
        self.endpoint = endpoint
        self.timeout_ms = timeout_ms
        # LINGER 0: a pending request must not keep close() waiting for a daemon that is gone.
        # IMMEDIATE: one sent while the daemon is down (or that has not accepted the keys)
        # must time out rather than be applied when it returns.
        super().__init__(zmq.DEALER, endpoint, context,
                         curve_options(server_key, client_keys) + [(zmq.IMMEDIATE, 1)])
        self._ids = itertools.count(1)
        self._outstanding = {}  # request id -> call, sent and not yet answered
        self._replies = {}      # request id -> Reply, come and not yet taken
        self._infos = None      # robot name -> RobotInfo, see _robot_infos
        self._world = ""        # Request.world of every call; "" is the default world
        self._owns_socket = True

    @property
    def world_name(self):
        """The world this client's calls address ("" is the daemon's default world)."""
        return self._world

    def world(self, name):
        """A view of this client that addresses world `name` ("" or "default": the default
        world): the same connection, request ids and timeout, every call of Client with
        Request.world set to `name`. Closing a view does not close the connection; closing
        the client does (its views then fail)."""
        view = copy.copy(self)
        view._world = "" if name == "default" else str(name)
        view._infos = None  # robot names are the world's own
        view._owns_socket = False
        return view

    def close(self):
        # A view shares its client's socket; a failed __init__ has set nothing yet.
        if getattr(self, "_owns_socket", True):
            super().close()
        else:
            self._socket = None

    def _send(self, call, message, timeout_ms=None):
        """Sends a request (waiting at most timeout_ms, None: the client's timeout, for the
        connection); returns its id."""
        # The calls about worlds name their worlds in their own fields (Request.world empty).
        world = "" if call in _CALLS_OF_NO_WORLD else self._world
        request = pb.Request(id=next(self._ids), world=world)
        getattr(request, call).CopyFrom(message)
        timeout_ms = self.timeout_ms if timeout_ms is None else timeout_ms
        if not _wait(self._socket, zmq.POLLOUT, _deadline(timeout_ms)):
            raise LcpsimTimeout("%s: no connection to %s within %s ms"
                                % (call, self.endpoint, timeout_ms))
        self._socket.send_multipart([b"", request.SerializeToString()])
        self._outstanding[request.id] = call
        return request.id

    def _read_one(self, call):
        """Reads one reply off the socket; keeps it if a request still waits for it."""
        frames = self._socket.recv_multipart()
        reply = pb.Reply()
        try:
            if len(frames) != 2:
                raise ValueError("%d frames" % len(frames))
            reply.ParseFromString(frames[1])
        except (DecodeError, ValueError) as error:
            raise LcpsimProtocolError("%s: undecodable reply (%s)" % (call, error))
        # Any other id is the late reply to a call that timed out: dropped.
        if reply.id in self._outstanding:
            self._replies[reply.id] = reply
        return reply

    def _poll_reply(self, request_id):
        while request_id not in self._replies and _wait(self._socket, zmq.POLLIN, 0.0):
            self._read_one("step")
        return request_id in self._replies

    def _receive(self, request_id, call, deadline, waited=None, keep_on_timeout=False):
        """The answer to request `request_id`, waited for until `deadline`. On a timeout the
        request is forgotten (its late reply will be dropped) unless keep_on_timeout."""
        while request_id not in self._replies:
            if not _wait(self._socket, zmq.POLLIN, deadline):
                if not keep_on_timeout:
                    self._outstanding.pop(request_id, None)
                raise LcpsimTimeout("%s: no reply from %s within %s"
                                    % (call, self.endpoint, waited or "%s ms" % self.timeout_ms))
            reply = self._read_one(call)
            # Id 0 answers a request the daemon could not decode; take it as the answer to
            # the request waited for.
            if reply.id == 0 and reply.status.code != pb.Status.OK:
                self._replies[request_id] = reply
        reply = self._replies.pop(request_id)
        self._outstanding.pop(request_id, None)
        if reply.status.code != pb.Status.OK:
            raise LcpsimError(reply.status.code, reply.status.message)
        if reply.WhichOneof("result") != call:
            raise LcpsimProtocolError("%s: the reply answers %s"
                                      % (call, reply.WhichOneof("result")))
        return getattr(reply, call)

    def _call(self, call, message):
        deadline = _deadline(self.timeout_ms)
        return self._receive(self._send(call, message), call, deadline)

    # ---- names and states ----

    def _robot_infos(self, robots=()):
        """RobotInfo by robot name, from a GetInfo made once and again after any call of this
        client that may change the robots (load_model, remove, reset, restore_state) or when
        one of `robots` is not known (another client loaded it)."""
        if self._infos is None or any(name not in self._infos for name in robots):
            self.get_info()
        return self._infos

    def _forget_infos(self):
        self._infos = None

    def names(self, robot):
        """The RobotNames (joint, link and frame name-to-index maps) of a robot."""
        infos = self._robot_infos([robot])
        if robot not in infos:
            raise KeyError("no robot %r (there are %s)" % (robot, ", ".join(infos) or "none"))
        return RobotNames(infos[robot])

    def _infos_for(self, message):
        names = [robot.name for robot in message.robots]
        return self._robot_infos(names) if names else None

    def _state(self, message):
        return State(message, self._infos_for(message))

    def _step_state(self, reply):
        return State(reply.state, self._infos_for(reply.state), time=reply.time,
                     step_count=reply.step_count, steps_run=reply.steps_run,
                     cancelled=reply.cancelled)

    # ---- the calls ----

    def ping(self, payload=b"lcpsim"):
        """A round trip; returns the PingReply (payload echoed, server_version)."""
        reply = self._call("ping", pb.PingRequest(payload=payload))
        if reply.payload != payload:
            raise LcpsimProtocolError("ping: the payload did not come back")
        return reply

    def get_info(self):
        """GetInfoReply: server_version, settings, robots (joints, links), named bodies."""
        info = self._call("get_info", pb.GetInfoRequest())
        self._infos = {robot.name: robot for robot in info.robots}
        return info

    def get_scene(self):
        """GetSceneReply: the Scene (every geom of the ground, of each robot's links and of each
        free body, with its shape and its pose in its owner's frame; its revision, which changes
        when robots or bodies come or go) and the GetInfoReply of the same world."""
        return self._call("get_scene", pb.GetSceneRequest())

    def record(self, path="", stop=False, every_steps=0, include_contacts=False):
        """Starts recording to `path` on the daemon's machine, below its --record-dir (a new
        file; relative paths are in that directory), a State every `every_steps` steps (0: 1);
        or, with stop=True, ends the recording in progress. RecordReply: path, states_written,
        bytes_written, recording. Read the file with lcpsim.read_recording."""
        return self._call("record", pb.RecordRequest(path=path, stop=stop, every_steps=every_steps,
                                                     include_contacts=include_contacts))

    def _step_request(self, steps, targets, return_state, include_contacts, sensors):
        request = pb.StepRequest(steps=steps, return_state=return_state or sensors is not None,
                                 include_contacts=include_contacts)
        request.targets.extend(targets)
        sensors = sensors_message(sensors, pb.Sensors)
        if sensors is not None:
            request.sensors.CopyFrom(sensors)
        return request

    def step(self, steps=1, targets=(), return_state=False, include_contacts=False,
             sensors=None):
        """Applies `targets` (SetTargetRequests, see target(); all or none), then steps `steps`
        times. Returns a State: time, step_count, steps_run, cancelled, and (with return_state,
        or when sensors are asked for) robots and bodies. sensors: as get_state's."""
        request = self._step_request(steps, targets, return_state, include_contacts, sensors)
        return self._step_state(self._call("step", request))

    def step_async(self, steps=1, targets=(), return_state=False, include_contacts=False,
                   sensors=None):
        """Sends a Step and returns at once a StepHandle (result(), cancel(), done()). Other
        calls may be made meanwhile on this client; the daemon answers Ping and GetInfo while
        the Step runs and holds the others until it is over. The Step's reply is waited for
        without the client's timeout (result(timeout_ms) sets one)."""
        request = self._step_request(steps, targets, return_state, include_contacts, sensors)
        return StepHandle(self, self._send("step", request))

    def cancel_step(self, step_id=0):
        """Cancels this client's running Step (step_id: its request id, StepHandle.id; 0: any).
        Returns the CancelStepReply (cancelled, step_id, steps_run, steps_requested)."""
        return self._call("cancel_step", pb.CancelStepRequest(step_id=step_id))

    def set_target(self, robot, **kwargs):
        """Sets joint controller targets; the arguments are those of target()."""
        self._call("set_target", target(robot, **kwargs))

    def get_state(self, include_contacts=False, sensors=None):
        """The State: time, step_count, robots (q, qd, applied torque, poses), bodies.
        sensors: the readings wanted, None (none), "all", a group name, an iterable of group
        names or a dict {group: bool}; groups: link_twists, link_accelerations, imus,
        joint_wrenches, contact_wrenches, energy, solver_stats."""
        request = pb.GetStateRequest(include_contacts=include_contacts)
        sensors = sensors_message(sensors, pb.Sensors)
        if sensors is not None:
            request.sensors.CopyFrom(sensors)
        return self._state(self._call("get_state", request).state)

    def add_imu(self, name, robot, link, position=None, orientation=None, accel_noise=0.0,
                gyro_noise=0.0, accel_bias=None, gyro_bias=None, seed=0):
        """Adds an IMU site on a robot's link (a link or frame name), at `position` and
        `orientation` (w, x, y, z) in the link frame; noise standard deviations in m/s² and
        rad/s, biases in site axes; seed of the noise (deterministic). Its readings come with
        sensors={"imus"}: state.robots[robot].imus[name]."""
        request = pb.AddImuRequest(name=name, robot=robot, link=link, accel_noise=accel_noise,
                                   gyro_noise=gyro_noise, seed=seed)
        if position is not None or orientation is not None:
            _pose(request.pose, position or (0.0, 0.0, 0.0), orientation)
        _vec3(request.accel_bias, accel_bias)
        _vec3(request.gyro_bias, gyro_bias)
        self._call("add_imu", request)

    def load_model(self, urdf_path=None, urdf_text=None, name="", base_position=None,
                   base_orientation=None, base="default", self_collision=False):
        """Loads a robot from a URDF file on the daemon's machine or from its text; base:
        "default" (as the URDF says), "fixed" or "floating". Returns its RobotInfo."""
        if (urdf_path is None) == (urdf_text is None):
            raise ValueError("give exactly one of urdf_path, urdf_text")
        request = pb.LoadModelRequest(name=name, self_collision=self_collision)
        if urdf_path is not None:
            request.urdf_path = urdf_path
        else:
            request.urdf_text = urdf_text
        _pose(request.base_pose, base_position, base_orientation)
        request.base_type = _enum(pb.LoadModelRequest.Base, base, "BASE_")
        self._forget_infos()
        return self._call("load_model", request).robot

    def spawn(self, shape, name="", radius=0.0, half_length=0.0, half_extents=None,
              position=(0.0, 0.0, 0.0), orientation=None, linear_velocity=None,
              angular_velocity=None, mass=0.0, is_static=False, friction=0.0, restitution=0.0):
        """Adds a free body; shape: "sphere", "box", "capsule" or "cylinder"; friction 0 means
        the daemon's default; restitution e in [0, 1] (0: none). Returns the SpawnReply (id,
        name)."""
        request = pb.SpawnRequest(name=name, mass=mass, is_static=is_static, friction=friction,
                                  restitution=restitution)
        request.shape.type = _enum(pb.Shape.Type, shape)
        request.shape.radius = radius
        request.shape.half_length = half_length
        _vec3(request.shape.half_extents, half_extents)
        _pose(request.pose, position, orientation)
        _vec3(request.twist.linear, linear_velocity)
        _vec3(request.twist.angular, angular_velocity)
        return self._call("spawn", request)

    def remove(self, name):
        """Removes a body or a robot by name."""
        self._forget_infos()
        self._call("remove", pb.RemoveRequest(name=name))

    def reset(self):
        """Back to the world as the daemon loaded it at start-up."""
        self._forget_infos()
        self._call("reset", pb.ResetRequest())

    def save_state(self, slot=""):
        """A snapshot of the world's state (also kept in the daemon under `slot` if given).
        Returns the SaveStateReply (snapshot bytes, time)."""
        return self._call("save_state", pb.SaveStateRequest(slot=slot))

    def restore_state(self, snapshot=None, slot=None):
        """Restores a snapshot's bytes or a slot; returns the simulated time restored."""
        if (snapshot is None) == (slot is None):
            raise ValueError("give exactly one of snapshot, slot")
        if snapshot is not None:
            request = pb.RestoreStateRequest(snapshot=snapshot)
        else:
            request = pb.RestoreStateRequest(slot=slot)
        self._forget_infos()
        return self._call("restore_state", request).time

    def set_settings(self, timestep=None, gravity=None, iterations=None, sor_omega=None,
                     friction_model=None, mode=None, rate=None, max_push_speed=None,
                     relax_iterations=None, restitution_threshold=None,
                     enforce_velocity_limits=None):
        """Changes the settings given (None: unchanged); friction_model "cone" or "box", mode
        "lockstep" or "realtime"; max_push_speed and restitution_threshold in m/s,
        relax_iterations a count, enforce_velocity_limits a bool. Returns the Settings as they
        now are."""
        request = pb.SetSettingsRequest()
        if timestep is not None:
            request.timestep = timestep
        if gravity is not None:
            _vec3(request.gravity, gravity)
        if iterations is not None:
            request.iterations = iterations
        if sor_omega is not None:
            request.sor_omega = sor_omega
        if friction_model is not None:
            request.friction_model = _enum(pb.Settings.FrictionModel, friction_model, "FRICTION_")
        if mode is not None:
            request.mode = _enum(pb.Settings.Mode, mode, "MODE_")
        if rate is not None:
            request.rate = rate
        if max_push_speed is not None:
            request.max_push_speed = max_push_speed
        if relax_iterations is not None:
            request.relax_iterations = relax_iterations
        if restitution_threshold is not None:
            request.restitution_threshold = restitution_threshold
        if enforce_velocity_limits is not None:
            request.enforce_velocity_limits = bool(enforce_velocity_limits)
        return self._call("set_settings", request).settings

    def subscribe(self, every_steps, include_contacts=False, sensors=None):
        """Publish the State every `every_steps` steps on the daemon's PUB socket (0 stops),
        each with the readings of `sensors` (as get_state's; None: none)."""
        request = pb.SubscribeRequest(every_steps=every_steps, include_contacts=include_contacts)
        sensors = sensors_message(sensors, pb.Sensors)
        if sensors is not None:
            request.sensors.CopyFrom(sensors)
        self._call("subscribe", request)

    # ---- editing the world between steps ----

    def set_robot_state(self, robot, q=None, qd=None, joints=None, base_position=None,
                        base_orientation=None, base_linear=None, base_angular=None):
        """Sets a robot's state, all or nothing; what is not given is kept. q and qd are full
        vectors (nq and nv values); or `joints` maps joint names to a position, or to a pair
        (position, velocity) where either may be None; base_* set a floating base's pose
        (orientation (w, x, y, z), unset: identity) and twist (world axes). The next step
        starts from exactly this state (the robot's warm starts are dropped). q and qd may
        also be dicts {joint name: value}, merged into `joints`."""
        self._call("set_robot_state", robot_state(robot, q, qd, joints, base_position,
                                                  base_orientation, base_linear,
                                                  base_angular))

    def set_body_state(self, body, position=None, orientation=None, linear_velocity=None,
                       angular_velocity=None):
        """Sets a free body's pose and twist (a name or an id); None keeps the pose (both
        position and orientation None) or the twist (both velocities None)."""
        request = pb.SetBodyStateRequest()
        if isinstance(body, str):
            request.name = body
        else:
            request.id = int(body)
        if position is not None or orientation is not None:
            _pose(request.pose, position or (0.0, 0.0, 0.0), orientation)
        if linear_velocity is not None or angular_velocity is not None:
            _vec3(request.twist.linear, linear_velocity or (0.0, 0.0, 0.0))
            _vec3(request.twist.angular, angular_velocity or (0.0, 0.0, 0.0))
        self._call("set_body_state", request)

    def apply_wrench(self, target=None, link="", force=None, torque=None, point=None,
                     frame="world", hold=False, clear=None, clear_all=False):
        """A force (N) and a torque (N·m) on a body or a robot's link (empty: the base), at a
        point (None: the centre of mass or the link origin), in the "world" or the "local"
        frame; for the next step only, or held (hold=True) until cleared. clear=ID or
        clear_all=True removes held wrenches instead. Returns the ApplyWrenchReply (hold_id,
        held)."""
        request = pb.ApplyWrenchRequest(link=link, clear=clear or 0, clear_all=clear_all)
        if target is not None:
            request.target = target
        if force is not None:
            _vec3(request.force, force)
        if torque is not None:
            _vec3(request.torque, torque)
        if point is not None:
            _vec3(request.point, point)
        if clear is None and not clear_all:
            request.frame = _enum(pb.ApplyWrenchRequest.Frame, frame)
            request.duration = (pb.ApplyWrenchRequest.HOLD if hold
                                else pb.ApplyWrenchRequest.NEXT_STEP)
        return self._call("apply_wrench", request)

    def set_dynamics(self, bodies=(), joints=()):
        """Changes mass properties, materials and joint dynamics, all or nothing; `bodies` and
        `joints` as dynamics() takes them."""
        self._call("set_dynamics", dynamics(bodies, joints))


    # ---- worlds ----

    def create_world(self, name="", scene_path=None, scene_text=None, copy_of=None,
                     copy_state=False, snapshot=None):
        """Creates a world (name: [A-Za-z0-9_.-], 1 to 63 bytes; "": the daemon makes one up)
        from at most one of a scene file on the daemon's machine (scene_path), a scene's text
        (scene_text) or an existing world (copy_of, "default" for the default world; with
        copy_state=True it also takes that world's state). snapshot: a snapshot of a world of
        the same layout (save_state, BatchResult.snapshots) restored into it, how a world moves
        between daemons. Returns its WorldInfo (name, time, step_count, robot_count,
        body_count, memory_bytes). Address it with client.world(name)."""
        if sum(value is not None for value in (scene_path, scene_text, copy_of)) > 1:
            raise ValueError("give at most one of scene_path, scene_text, copy_of")
        request = pb.CreateWorldRequest(name=name, copy_state=copy_state)
        if scene_path is not None:
            request.scene_path = scene_path
        elif scene_text is not None:
            request.scene_text = scene_text
        elif copy_of is not None:
            request.copy_of = copy_of
        if snapshot is not None:
            request.snapshot = snapshot
        return self._call("create_world", request).world

    def destroy_world(self, name):
        """Destroys a world (not the default one: FAILED_PRECONDITION)."""
        self._call("destroy_world", pb.DestroyWorldRequest(name=name))

    def list_worlds(self):
        """ListWorldsReply: worlds (WorldInfo, the default world first), max_worlds,
        max_world_bytes, workers."""
        return self._call("list_worlds", pb.ListWorldsRequest())

    def batch(self, world_steps, return_state=False, include_contacts=False, sensors=None,
              return_snapshot=False):
        """One BatchStep of WorldStep messages (see lcpsim.world_step), the worlds stepped in
        parallel by the daemon. Returns the BatchStepResult messages in the request's order;
        a world that failed has its status set and was left unchanged (no exception)."""
        request = batch_request(world_steps, return_state, include_contacts, sensors,
                                return_snapshot)
        return list(self._call("batch_step", request).results)

    def batch_step(self, worlds, steps=1, robot=None, position=None, velocity=None, kp=None,
                   kd=None, effort_limit=None, torque=None, mode=None,
                   gravity_compensation=None, targets=None, restore=None, robot_states=None,
                   body_states=None, return_state=True, include_contacts=False, sensors=None,
                   return_snapshot=False, links=None, check=True):
        """Steps the N worlds named in `worlds` in one BatchStep (numpy needed), and returns a
        BatchResult: q (N, nq), qd (N, nv), time (N,), ... of `robot`.

        steps: a count for all worlds, or one per world. The controller targets of `robot`
        (all its joints): position, velocity, kp, kd, effort_limit, torque each None (kept),
        an array (N, joints), one row (joints,) or a number for every world; mode and
        gravity_compensation as target()'s. Per world (None, or a list of N entries, each
        None for none): targets, more SetTargetRequests; restore, a slot name or snapshot
        bytes restored first (a reset); robot_states and body_states, lists of
        SetRobotStateRequest (lcpsim.robot_state) and SetBodyStateRequest applied after the
        restore and before the targets. links: link names or indices of `robot` whose poses
        are read into link_positions (N, links, 3) and link_orientations (N, links, 4).
        check: raise BatchStepError when a world failed (else see BatchResult.ok)."""
        arrays = {"position": position, "velocity": velocity, "kp": kp, "kd": kd,
                  "effort_limit": effort_limit, "torque": torque}
        messages = build_world_steps(worlds, steps, robot, mode, gravity_compensation, arrays,
                                     targets, restore, robot_states, body_states)
        request = batch_request(messages, return_state or bool(links), include_contacts,
                                sensors, return_snapshot)
        link_indices = None
        if links:
            link_map = self.names(robot).links if robot else None
            link_indices = [link_map[link] if isinstance(link, str) else int(link)
                            for link in links]
        reply = self._call("batch_step", request)
        result = BatchResult(reply, worlds, robot, link_indices, self._infos)
        if check and not result.ok.all():
            raise BatchStepError(result, result.failed())
        return result

class Subscriber(_Socket):
    """The daemon's state stream (its PUB socket). As with any ZeroMQ subscription, states
    published before the connection is made are not seen."""

    def __init__(self, endpoint=DEFAULT_PUB_ENDPOINT, context=None, server_key=None,
                 client_keys=None, world=""):
        """server_key, client_keys: as for Client (either role may subscribe). world: the
        world whose states are received ("" or "default": the default world, topic "state";
        another world's topic is "w/NAME/state"); its publishing is started by
        client.world(name).subscribe(every_steps)."""
        self.topic = state_topic(world)
        super().__init__(zmq.SUB, endpoint, context,
                         curve_options(server_key, client_keys) + [(zmq.SUBSCRIBE, self.topic)])

    def receive(self, timeout_ms=None):
        """The next published State (a lcpsim.state.State, robots by name but links by
        position: the subscriber has no RobotInfo); LcpsimTimeout if none comes within
        timeout_ms."""
        deadline = _deadline(timeout_ms)
        while True:
            if not _wait(self._socket, zmq.POLLIN, deadline):
                raise LcpsimTimeout("no state published within %s ms" % timeout_ms)
            frames = self._socket.recv_multipart()
            if len(frames) != 1 or not frames[0].startswith(self.topic):
                continue
            state = pb.State()
            try:
                state.ParseFromString(frames[0][len(self.topic):])
            except DecodeError as error:
                raise LcpsimProtocolError("undecodable state (%s)" % error)
            return State(state)
