# SPDX-License-Identifier: Apache-2.0
"""lcpsim.state: the one State type every call that returns a world state gives.

State wraps the protocol's State message (kept as `state.message`) with attribute access:
vectors and repeated numbers are numpy arrays when numpy can be imported (plain tuples when it
cannot, or after use_numpy(False)); robots, bodies, links, frames, IMUs and joint wrenches are
reachable by name as well as by position. A Vec3 is an array of 3 (x, y, z) that also has .x,
.y, .z; a quaternion is an array of 4 in the order (w, x, y, z) that also has .w, .x, .y, .z.
"""

try:
    import numpy as _numpy
except ImportError:  # the client works without numpy: arrays become tuples
    _numpy = None

_use_numpy = _numpy is not None


def use_numpy(enabled=True):
    """Arrays as numpy arrays (True, the default when numpy is installed) or tuples (False).
    Returns whether numpy is now used (False when it is not installed)."""
    global _use_numpy
    _use_numpy = bool(enabled) and _numpy is not None
    return _use_numpy


def numpy_in_use():
    return _use_numpy


def array(values):
    """A sequence of floats as a numpy float64 array, or a tuple without numpy."""
    if _use_numpy:
        return _numpy.array(values, dtype=float)
    return tuple(float(v) for v in values)


class _TupleVec3(tuple):
    __slots__ = ()
    x = property(lambda self: self[0])
    y = property(lambda self: self[1])
    z = property(lambda self: self[2])


class _TupleQuat(tuple):
    __slots__ = ()
    w = property(lambda self: self[0])
    x = property(lambda self: self[1])
    y = property(lambda self: self[2])
    z = property(lambda self: self[3])


if _numpy is not None:
    class _ArrayVec3(_numpy.ndarray):
        """A float64 array (x, y, z) that also answers .x, .y, .z."""
        x = property(lambda self: float(self[0]))
        y = property(lambda self: float(self[1]))
        z = property(lambda self: float(self[2]))

    class _ArrayQuat(_numpy.ndarray):
        """A float64 array (w, x, y, z) that also answers .w, .x, .y, .z."""
        w = property(lambda self: float(self[0]))
        x = property(lambda self: float(self[1]))
        y = property(lambda self: float(self[2]))
        z = property(lambda self: float(self[3]))


def vec3(message):
    values = (message.x, message.y, message.z)
    if _use_numpy:
        return _numpy.array(values, dtype=float).view(_ArrayVec3)
    return _TupleVec3(values)


def quat(message):
    """A Quat message as (w, x, y, z); an unset one (all zero) is the identity, as the
    protocol says."""
    values = (message.w, message.x, message.y, message.z)
    if values == (0.0, 0.0, 0.0, 0.0):
        values = (1.0, 0.0, 0.0, 0.0)
    if _use_numpy:
        return _numpy.array(values, dtype=float).view(_ArrayQuat)
    return _TupleQuat(values)


class Named:
    """An ordered collection reachable by name (a str key) and by position (an int key);
    iterating yields the items, as a list would. keys() gives the names in order."""

    def __init__(self, items, names):
        self._items = list(items)
        self._names = list(names)
        self._index = {name: i for i, name in enumerate(self._names)}

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                return self._items[self._index[key]]
            except KeyError:
                raise KeyError("no %r (there are %s)" % (key, ", ".join(self._names) or "none"))
        return self._items[key]

    def get(self, key, default=None):
        try:
            return self[key]
        except (KeyError, IndexError):
            return default

    def __contains__(self, key):
        return key in self._index if isinstance(key, str) else key in self._items

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def keys(self):
        return list(self._names)

    def items(self):
        return list(zip(self._names, self._items))

    def index(self, name):
        return self._index[name]

    def __repr__(self):
        return "Named(%s)" % ", ".join(self._names)


class View:
    """A protocol message with attribute access: Vec3 and Quat fields become vec3/quat
    arrays, repeated numbers arrays, repeated messages lists of views, other messages views;
    every other field is returned as the message has it. `message` is the message itself."""

    def __init__(self, message):
        self.message = message

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return convert(self.message, name)

    def __dir__(self):
        return sorted(set(object.__dir__(self))
                      | {f.name for f in self.message.DESCRIPTOR.fields})

    def __eq__(self, other):
        return isinstance(other, View) and self.message == other.message

    __hash__ = None

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, str(self.message).replace("\n", " ").strip())


def _view_of(message):
    kind = message.DESCRIPTOR.name
    if kind == "Vec3":
        return vec3(message)
    if kind == "Quat":
        return quat(message)
    return View(message)


def convert(message, name):
    field = message.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        return getattr(message, name)  # methods of the message (HasField, ...)
    value = getattr(message, name)
    if field.label == field.LABEL_REPEATED:
        if field.type == field.TYPE_MESSAGE:
            return [_view_of(item) for item in value]
        if field.type in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
            return array(value)
        return list(value)
    if field.type == field.TYPE_MESSAGE:
        return _view_of(value)
    return value


class RobotState(View):
    """A robot's state. q, qd, applied_torque, qdd are arrays; link_poses, link_twists,
    link_twists_local, link_accelerations and link_contact_wrenches are Named by link, and
    frame_poses by frame, when the robot's RobotInfo is known (by position otherwise);
    imus and joint_wrenches are Named by IMU and joint. position(joint), velocity(joint) and
    torque(joint) read one joint by name or index."""

    def __init__(self, message, info=None):
        super().__init__(message)
        self.info = info

    def _named(self, name, names):
        items = convert(self.message, name)
        if names is None or len(names) != len(items):
            names = [str(i) for i in range(len(items))]
        return Named(items, names)

    def _links(self):
        return list(self.info.links) if self.info is not None else None

    link_poses = property(lambda self: self._named("link_poses", self._links()))
    link_twists = property(lambda self: self._named("link_twists", self._links()))
    link_twists_local = property(lambda self: self._named("link_twists_local", self._links()))
    link_accelerations = property(lambda self: self._named("link_accelerations",
                                                           self._links()))
    link_contact_wrenches = property(lambda self: self._named("link_contact_wrenches",
                                                              self._links()))
    frame_poses = property(lambda self: self._named(
        "frame_poses", [f.name for f in self.info.frames] if self.info is not None else None))
    imus = property(lambda self: self._named("imus", [i.name for i in self.message.imus]))
    joint_wrenches = property(lambda self: self._named(
        "joint_wrenches", [w.joint for w in self.message.joint_wrenches]))

    def _joint(self, joint):
        if isinstance(joint, str):
            if self.info is None:
                raise KeyError("joint %r: the robot's RobotInfo is not known" % joint)
            for info in self.info.joints:
                if info.name == joint:
                    return info.index
            raise KeyError("robot %r has no joint %r" % (self.message.name, joint))
        return int(joint)

    def _floating(self):
        if self.info is not None:
            return self.info.floating_base
        return len(self.message.q) == len(self.message.applied_torque) + 7

    def position(self, joint):
        """The joint's q (by name or joint index), past a floating base's 7 values."""
        return self.message.q[self._joint(joint) + (7 if self._floating() else 0)]

    def velocity(self, joint):
        """The joint's qd (by name or joint index), past a floating base's 6 values."""
        return self.message.qd[self._joint(joint) + (6 if self._floating() else 0)]

    def torque(self, joint):
        """The joint's applied torque of the last step (by name or joint index)."""
        return self.message.applied_torque[self._joint(joint)]


class State(View):
    """The world's state, as every call that returns one gives it (Client.step, get_state,
    Subscriber.receive). time, step_count, sequence; robots and bodies Named by name (and
    by position); contacts a list; solver_stats. From step(): steps_run and cancelled (the
    StepReply's; without return_state, robots and bodies are empty). `message` is the
    protocol's State. `state` is the State itself, so code written for the StepReply that
    step() used to return (`sim.step(1, return_state=True).state`) still works."""

    def __init__(self, message, infos=None, time=None, step_count=None, steps_run=None,
                 cancelled=False):
        super().__init__(message)
        self._infos = infos or {}
        self.time = message.time if time is None else time
        self.step_count = message.step_count if step_count is None else step_count
        self.steps_run = steps_run
        self.cancelled = cancelled
        self._robots = None
        self._bodies = None

    @property
    def state(self):
        return self

    @property
    def robots(self):
        if self._robots is None:  # made once: a State is not changed after it is made
            self._robots = Named([RobotState(r, self._infos.get(r.name))
                                  for r in self.message.robots],
                                 [r.name for r in self.message.robots])
        return self._robots

    @property
    def bodies(self):
        if self._bodies is None:
            self._bodies = Named([View(b) for b in self.message.bodies],
                                 [b.name or str(b.id) for b in self.message.bodies])
        return self._bodies


SENSOR_GROUPS = ("link_twists", "link_accelerations", "imus", "joint_wrenches",
                 "contact_wrenches", "energy", "solver_stats")


def sensors_message(sensors, message_type):
    """A Sensors message from None (none), "all", an iterable of group names, a dict of group
    name to bool, or a Sensors message."""
    if sensors is None or isinstance(sensors, message_type):
        return sensors
    if isinstance(sensors, str):
        sensors = SENSOR_GROUPS if sensors == "all" else [sensors]
    if not isinstance(sensors, dict):
        sensors = {name: True for name in sensors}
    message = message_type()
    for name, wanted in sensors.items():
        if name not in SENSOR_GROUPS:
            raise ValueError("unknown sensor group %r (known: %s)"
                             % (name, ", ".join(SENSOR_GROUPS)))
        setattr(message, name, bool(wanted))
    return message
