# SPDX-License-Identifier: Apache-2.0
"""lcpsim.batch: BatchStep requests built from numpy arrays and their replies read into numpy
arrays, for Client.batch_step (and the vector environment and the pool built on it).

A BatchStep steps N worlds in one request. Client.batch_step takes per-world controller
targets as arrays of shape (N, dof) (or one row for all), per-world resets, and returns a
BatchResult whose q and qd have shape (N, nq) and (N, nv): one protobuf message per world is
unavoidable, but no Python loop runs per joint.
"""

import itertools

from lcpsim.state import State, sensors_message
from lcpsim.v1 import lcpsim_pb2 as pb

try:
    import numpy as np
except ImportError:  # only batch_step needs numpy; the rest of the client does not
    np = None

_TARGET_ARRAYS = ("position", "velocity", "kp", "kd", "effort_limit", "torque")


def world_step(world, steps=1, targets=(), restore_slot=None, restore_snapshot=None,
               robot_states=(), body_states=()):
    """A WorldStep: in this order, restore the slot or snapshot given (a reset), set the robot
    and body states (SetRobotStateRequest, SetBodyStateRequest: see lcpsim.robot_state), apply
    the targets (SetTargetRequest: see lcpsim.target), then step `steps` times."""
    message = pb.WorldStep(world=world, steps=int(steps))
    message.targets.extend(targets)
    if restore_slot is not None and restore_snapshot is not None:
        raise ValueError("world_step: give at most one of restore_slot, restore_snapshot")
    if restore_slot is not None:
        message.restore.slot = restore_slot
    elif restore_snapshot is not None:
        message.restore.snapshot = restore_snapshot
    message.robot_states.extend(robot_states)
    message.body_states.extend(body_states)
    return message


def batch_request(world_steps, return_state=False, include_contacts=False, sensors=None,
                  return_snapshot=False):
    """A BatchStepRequest of WorldStep messages (see world_step)."""
    request = pb.BatchStepRequest(return_state=return_state or sensors is not None,
                                  include_contacts=include_contacts,
                                  return_snapshot=return_snapshot)
    request.worlds.extend(world_steps)
    sensors = sensors_message(sensors, pb.Sensors)
    if sensors is not None:
        request.sensors.CopyFrom(sensors)
    return request


def _rows(value, count, name):
    """A target array as `count` lists of floats (one per world), or None: None stays None; a
    number or one row (dof,) is every world's; else the shape must be (count, dof)."""
    if value is None:
        return None
    values = np.asarray(value, dtype=float)
    if values.ndim == 0:
        return [[float(values)]] * count
    if values.ndim == 1:
        return [values.tolist()] * count
    if values.ndim != 2 or values.shape[0] != count:
        raise ValueError("batch_step: %s has shape %s, expected (%d, dof), (dof,) or a number"
                         % (name, values.shape, count))
    return values.tolist()


def _per_world(value, count, name):
    """A per-world argument: None (none for any world), or a sequence of `count` entries."""
    if value is None:
        return [None] * count
    if len(value) != count:
        raise ValueError("batch_step: %s has %d entries for %d worlds" % (name, len(value), count))
    return list(value)


def build_world_steps(worlds, steps=1, robot=None, mode=None, gravity_compensation=None,
                      arrays=None, targets=None, restore=None, robot_states=None,
                      body_states=None, into=None):
    """The WorldSteps of Client.batch_step (see there for the arguments), made in `into` (a
    BatchStepRequest's worlds, to build the request without copying them) or standalone."""
    count = len(worlds)
    arrays = {key: _rows(value, count, key) for key, value in (arrays or {}).items()
              if value is not None}
    if arrays and not robot:
        raise ValueError("batch_step: target arrays need the robot they are for")
    if np is not None and isinstance(steps, np.ndarray) or isinstance(steps, (list, tuple)):
        steps_of = [int(s) for s in steps]
        if len(steps_of) != count:
            raise ValueError("batch_step: steps has %d entries for %d worlds"
                             % (len(steps_of), count))
    else:
        steps_of = [int(steps)] * count
    extra_targets = _per_world(targets, count, "targets")
    restores = _per_world(restore, count, "restore")
    robot_states = _per_world(robot_states, count, "robot_states")
    body_states = _per_world(body_states, count, "body_states")
    mode_value = None
    if mode is not None:
        mode_value = (pb.SetTargetRequest.Mode.Value(mode.upper()) if isinstance(mode, str)
                      else int(mode))
    messages = []
    for i, world in enumerate(worlds):
        message = (into.add(world=world, steps=steps_of[i]) if into is not None
                   else pb.WorldStep(world=world, steps=steps_of[i]))
        reset = restores[i]
        if isinstance(reset, bytes):
            message.restore.snapshot = reset
        elif reset is not None:
            message.restore.slot = reset
        if robot_states[i]:
            message.robot_states.extend(robot_states[i])
        if body_states[i]:
            message.body_states.extend(body_states[i])
        if arrays or mode_value is not None or gravity_compensation is not None:
            request = message.targets.add(robot=robot)
            if mode_value is not None:
                request.mode = mode_value
            if gravity_compensation is not None:
                request.gravity_compensation = bool(gravity_compensation)
            for key, rows in arrays.items():
                getattr(request, key).extend(rows[i])
        if extra_targets[i]:
            message.targets.extend(extra_targets[i])
        messages.append(message)
    return messages


def _pose_values(pose):
    """A Pose message as (x, y, z, w, qx, qy, qz)."""
    p, o = pose.position, pose.orientation
    return (p.x, p.y, p.z, o.w, o.x, o.y, o.z)


class BatchStepError(Exception):
    """Some worlds of a BatchStep failed (each left as it was before the request): `failed` is
    a list of (index, world, status code, message); `result` the whole BatchResult."""

    def __init__(self, result, failed):
        self.result = result
        self.failed = failed
        shown = "; ".join("%s: %s %s" % (world, pb.Status.Code.Name(code), message)
                          for _, world, code, message in failed[:4])
        super().__init__("BatchStep: %d of %d worlds failed (%s%s)"
                         % (len(failed), len(result.worlds), shown,
                            ", ..." if len(failed) > 4 else ""))


def _stack(vectors, count, width):
    """`count` repeated-double fields of `width` values each (None: a row of NaN) as an array
    (count, width), read without a Python loop per value."""
    if all(v is not None for v in vectors):
        flat = np.fromiter(itertools.chain.from_iterable(vectors), dtype=float,
                           count=count * width)
        return flat.reshape(count, width)
    out = np.full((count, width), np.nan)
    for i, v in enumerate(vectors):
        if v is not None:
            out[i] = v
    return out


class BatchResult:
    """The reply of a BatchStep, per world in the request's order (index i: worlds[i]).

    ok (N,) bool, codes (N,) the Status codes, messages (N,) why a world failed; time,
    step_count, steps_run (N,); and, when states were returned, for the robot asked (the first
    robot when none was named): q (N, nq), qd (N, nv), applied_torque (N, joints), and for the
    links asked link_positions (N, links, 3) and link_orientations (N, links, 4) (w, x, y, z),
    rows of NaN for failed worlds; snapshots (N,) bytes or None; results the BatchStepResult
    messages; state(i) world i's State (lcpsim.state.State)."""

    def __init__(self, reply, worlds, robot=None, links=None, infos=None):
        self.results = list(reply.results)
        self.worlds = list(worlds)
        self._infos = infos
        count = len(self.results)
        if count != len(self.worlds):
            raise ValueError("BatchStep: %d results for %d worlds" % (count, len(self.worlds)))
        # One pass over the results for the per-world numbers.
        numbers = np.array([(r.status.code, r.time, r.step_count, r.steps_run)
                            for r in self.results], dtype=float).reshape(count, 4)
        self.codes = numbers[:, 0].astype(np.int32)
        self.ok = self.codes == pb.Status.OK
        self.messages = [r.status.message for r in self.results]
        self.time = numbers[:, 1].copy()
        self.step_count = np.fromiter((r.step_count for r in self.results), dtype=np.uint64,
                                      count=count)  # exact, past 2^53 too
        self.steps_run = numbers[:, 3].astype(np.int32)
        self.snapshots = [r.snapshot if r.snapshot else None for r in self.results]
        self.robot = robot
        self.q = self.qd = self.applied_torque = None
        self.link_positions = self.link_orientations = None
        robots = [self._robot_of(r) if ok else None for r, ok in zip(self.results, self.ok)]
        first = next((r for r in robots if r is not None), None)
        if first is None:
            return
        self.robot = first.name
        self.q = _stack([r.q if r is not None else None for r in robots], count, len(first.q))
        self.qd = _stack([r.qd if r is not None else None for r in robots], count, len(first.qd))
        self.applied_torque = _stack([r.applied_torque if r is not None else None
                                      for r in robots], count, len(first.applied_torque))
        if links:
            self._read_links(robots, links, count)

    def _robot_of(self, result):
        robots = result.state.robots
        if not robots:
            return None
        if self.robot is None:
            return robots[0]
        for candidate in robots:
            if candidate.name == self.robot:
                return candidate
        return None

    def _read_links(self, robots, links, count):
        poses = np.full((count, len(links), 7), np.nan)
        for i, robot in enumerate(robots):
            if robot is not None:
                poses[i] = [_pose_values(robot.link_poses[link]) for link in links]
        self.link_positions = poses[:, :, :3]
        self.link_orientations = poses[:, :, 3:]

    def failed(self):
        """(index, world, status code, message) of each world that failed."""
        return [(i, self.worlds[i], int(self.codes[i]), self.messages[i])
                for i in np.flatnonzero(~self.ok)]

    def state(self, i):
        """World i's State (time, step_count, robots by name, ...)."""
        result = self.results[i]
        return State(result.state, self._infos, time=result.time, step_count=result.step_count,
                     steps_run=result.steps_run)

    def __len__(self):
        return len(self.results)

    def __repr__(self):
        return "BatchResult(%d worlds, %d failed)" % (len(self.results), int((~self.ok).sum()))
