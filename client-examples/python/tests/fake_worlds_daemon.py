# SPDX-License-Identifier: Apache-2.0
"""Test support: a stand-in for lcpsimd's worlds and BatchStep, to test the clients' logic
(the vector environment's autoreset, the pool's moves) without the daemon. It serves the
protocol's calls about worlds and a few others (GetInfo, GetState, Step, SaveState,
RestoreState, SetRobotState, SetTarget, SetDynamics) for worlds holding one toy 'arm7': seven
joints each a unit mass under a PD controller, stepped by semi-implicit Euler,
    qd ← qd + h (kp (q* − q) + kd (qd* − qd) − damping qd),  q ← q + h qd,
and one link whose position is (Σ sin q, Σ cos q, h·steps) with the identity orientation.
Deterministic, so two runs of the same calls give the same bits, as the daemon's do.

Run as a program it binds tcp://127.0.0.1:0 and prints "rep=ENDPOINT" as lcpsimd's first
line does (LiveDaemon reads it)."""

import pickle
import sys

import numpy as np
import zmq

from lcpsim.v1 import lcpsim_pb2 as pb

JOINTS = 7
TIMESTEP = 1.0 / 240.0


class World:
    def __init__(self):
        self.q = np.zeros(JOINTS)
        self.qd = np.zeros(JOINTS)
        self.step_count = 0
        self.kp = np.full(JOINTS, 100.0)
        self.kd = np.full(JOINTS, 10.0)
        self.target_q = np.zeros(JOINTS)
        self.target_qd = np.zeros(JOINTS)
        self.damping = np.zeros(JOINTS)
        self.slots = {}

    def snapshot(self):
        return pickle.dumps((self.q.copy(), self.qd.copy(), self.step_count))

    def restore(self, data):
        self.q, self.qd, self.step_count = pickle.loads(data)

    def step(self, steps):
        for _ in range(steps):
            acceleration = (self.kp * (self.target_q - self.q)
                            + self.kd * (self.target_qd - self.qd) - self.damping * self.qd)
            self.qd = self.qd + TIMESTEP * acceleration
            self.q = self.q + TIMESTEP * self.qd
            self.step_count += 1

    def set_target(self, message):
        def values(field):
            v = list(getattr(message, field))
            return None if not v else np.array(v * JOINTS if len(v) == 1 else v)
        for field, attribute in (("position", "target_q"), ("velocity", "target_qd"),
                                 ("kp", "kp"), ("kd", "kd")):
            v = values(field)
            if v is not None:
                if len(v) != JOINTS:
                    raise ValueError("set_target.%s has %d values" % (field, len(v)))
                setattr(self, attribute, v)

    def set_robot_state(self, message):
        if message.q:
            self.q = np.array(message.q)
        if message.qd:
            self.qd = np.array(message.qd)

    def state(self, message):
        message.time = self.step_count * TIMESTEP
        message.step_count = self.step_count
        robot = message.robots.add(name="arm7")
        robot.q.extend(self.q.tolist())
        robot.qd.extend(self.qd.tolist())
        link = robot.link_poses.add()
        link.position.x = float(np.sum(np.sin(self.q)))
        link.position.y = float(np.sum(np.cos(self.q)))
        link.position.z = self.step_count * TIMESTEP
        link.orientation.w = 1.0


def info(reply):
    robot = reply.robots.add(name="arm7", nq=JOINTS, nv=JOINTS)
    robot.links.append("link7")
    for j in range(JOINTS):
        robot.joints.add(name="joint%d" % (j + 1), index=j, has_limits=True, lower=-2.0,
                         upper=2.0)


def serve(socket):
    worlds = {"default": World()}

    def world_of(name):
        world = worlds.get(name or "default")
        if world is None:
            raise KeyError(name)
        return world

    while True:
        frames = socket.recv_multipart()
        request = pb.Request()
        request.ParseFromString(frames[-1])
        reply = pb.Reply(id=request.id)
        call = request.WhichOneof("call")
        try:
            body = getattr(request, call)
            result = getattr(reply, call)
            if call == "create_world":
                if body.name in worlds:
                    raise ValueError("world %s exists" % body.name)
                world = World()
                if body.snapshot:
                    world.restore(body.snapshot)
                worlds[body.name] = world
                result.world.name = body.name
                result.world.step_count = world.step_count
                result.world.robot_count = 1
            elif call == "destroy_world":
                world_of(body.name)
                del worlds[body.name]
                result.SetInParent()
            elif call == "list_worlds":
                for name in worlds:
                    result.worlds.add(name=name)
            elif call == "batch_step":
                for step in body.worlds:
                    out = result.results.add(world=step.world)
                    try:
                        world = world_of(step.world)
                        if step.HasField("restore"):
                            source = step.restore
                            world.restore(source.snapshot if source.WhichOneof("source") ==
                                          "snapshot" else world.slots[source.slot])
                        for state in step.robot_states:
                            world.set_robot_state(state)
                        for t in step.targets:
                            world.set_target(t)
                        world.step(step.steps)
                    except (KeyError, ValueError) as error:
                        out.status.code = pb.Status.NOT_FOUND
                        out.status.message = str(error)
                        continue
                    out.step_count = world.step_count
                    out.time = world.step_count * TIMESTEP
                    out.steps_run = step.steps
                    if body.return_state:
                        world.state(out.state)
                    if body.return_snapshot:
                        out.snapshot = world.snapshot()
            else:
                world = world_of(request.world)
                if call == "get_info":
                    info(result)
                elif call == "get_state":
                    world.state(result.state)
                elif call == "step":
                    for t in body.targets:
                        world.set_target(t)
                    world.step(body.steps)
                    result.step_count = world.step_count
                    result.steps_run = body.steps
                    if body.return_state:
                        world.state(result.state)
                elif call == "save_state":
                    result.snapshot = world.snapshot()
                    if body.slot:
                        world.slots[body.slot] = result.snapshot
                elif call == "restore_state":
                    world.restore(body.snapshot if body.WhichOneof("source") == "snapshot"
                                  else world.slots[body.slot])
                    result.SetInParent()
                elif call == "set_robot_state":
                    world.set_robot_state(body)
                    result.SetInParent()
                elif call == "set_target":
                    world.set_target(body)
                    result.SetInParent()
                elif call == "set_dynamics":
                    for joint in body.joints:
                        world.damping[int(joint.joint[5:]) - 1] = joint.damping
                    result.SetInParent()
                elif call == "ping":
                    result.payload = body.payload
                else:
                    raise ValueError("the fake daemon does not serve %s" % call)
        except (KeyError, ValueError) as error:
            reply.ClearField(call)
            reply.status.code = pb.Status.NOT_FOUND
            reply.status.message = str(error)
        socket.send_multipart(frames[:-1] + [reply.SerializeToString()])


def main():
    context = zmq.Context()
    socket = context.socket(zmq.ROUTER)
    port = socket.bind_to_random_port("tcp://127.0.0.1")
    print("rep=tcp://127.0.0.1:%d pub=tcp://127.0.0.1:0" % port, flush=True)
    serve(socket)


if __name__ == "__main__":
    sys.exit(main())
