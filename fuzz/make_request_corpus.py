#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of the request fuzzer (fuzz/corpus/request): one
file per sequence of lcpsim.v1 Requests, each framed as fuzz_request.c reads
them (a 2-byte little-endian length, then the encoded Request). The requests
name what the harness's world holds: arm7 (fixed base, joints joint1..joint7,
links link1..link7), pendulum2 (floating base, joints joint1 and joint2), the
static body "table" and the box "box".

Run with Debian's python3 (python3-protobuf), from anywhere:
    /usr/bin/python3 fuzz/make_request_corpus.py
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client-examples", "python"))
from lcpsim.v1 import lcpsim_pb2 as pb  # noqa: E402

CORPUS = os.path.join(HERE, "corpus", "request")
ROBOTS = os.path.join(HERE, "..", "server", "model", "robots")

# A one-link robot small enough to keep the seed short.
SMALL_URDF = """<robot name="stick">
 <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
 <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="10" velocity="5"/></joint>
 <link name="arm"><inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><origin xyz="0 0 -0.2"/><geometry><capsule radius="0.02" length="0.4"/></geometry></collision></link>
</robot>
"""


def request(id_, **call):
    r = pb.Request(id=id_)
    (name, message), = call.items()
    getattr(r, name).CopyFrom(message)
    return r


def vec3(x, y, z):
    return pb.Vec3(x=x, y=y, z=z)


def pose(x, y, z):
    return pb.Pose(position=vec3(x, y, z), orientation=pb.Quat(w=1))


def sequence(*requests):
    out = b""
    for r in requests:
        data = r.SerializeToString()
        out += struct.pack("<H", len(data)) + data
    return out


def all_sensors():
    return pb.Sensors(link_twists=True, link_accelerations=True, imus=True,
                      joint_wrenches=True, contact_wrenches=True, energy=True,
                      solver_stats=True)


def corpus():
    arm_target = pb.SetTargetRequest(
        robot="arm7", mode=pb.SetTargetRequest.POSITION,
        position=[0.1, -0.2, 0.3, 0.4, 0, 0.2, 0], kp=[50], kd=[2])
    yield "ping", sequence(request(1, ping=pb.PingRequest(payload=b"hello")))
    yield "get_info", sequence(request(2, get_info=pb.GetInfoRequest()))
    yield "get_state_sensors", sequence(request(3, get_state=pb.GetStateRequest(
        include_contacts=True, sensors=all_sensors())))
    yield "target_then_step", sequence(
        request(4, set_target=arm_target),
        request(5, step=pb.StepRequest(steps=5, return_state=True, include_contacts=True)))
    yield "step_with_targets_by_index", sequence(request(6, step=pb.StepRequest(
        steps=3, return_state=True, sensors=all_sensors(),
        targets=[pb.SetTargetRequest(robot="pendulum2", indices=[1, 0],
                                     mode=pb.SetTargetRequest.TORQUE, torque=[0.5, -0.5],
                                     gravity_compensation=True)])))
    yield "load_text_then_step", sequence(
        request(7, load_model=pb.LoadModelRequest(urdf_text=SMALL_URDF, name="stick",
                                                  base_pose=pose(0, 1, 0.5),
                                                  base_type=pb.LoadModelRequest.BASE_FIXED)),
        request(8, set_target=pb.SetTargetRequest(robot="stick", joints=["hinge"],
                                                  mode=pb.SetTargetRequest.VELOCITY,
                                                  velocity=[1], kd=[3])),
        request(9, step=pb.StepRequest(steps=4, return_state=True)),
        request(10, remove=pb.RemoveRequest(name="stick")))
    yield "load_text_floating_packages", sequence(
        request(11, load_model=pb.LoadModelRequest(
            urdf_text=SMALL_URDF, base_type=pb.LoadModelRequest.BASE_FLOATING,
            self_collision=True, packages={"missing": "nowhere"}, package_paths=["nowhere"])))
    yield "spawn_step_remove", sequence(
        request(12, spawn=pb.SpawnRequest(
            name="ball", shape=pb.Shape(type=pb.Shape.SPHERE, radius=0.05),
            pose=pose(0.6, 0, 0.8), mass=0.2, friction=0.4, restitution=0.5)),
        request(13, spawn=pb.SpawnRequest(
            shape=pb.Shape(type=pb.Shape.CAPSULE, radius=0.03, half_length=0.1),
            pose=pose(0.7, 0.1, 0.9), mass=0.1,
            twist=pb.Twist(linear=vec3(0, 0, -1), angular=vec3(1, 0, 0)))),
        request(14, step=pb.StepRequest(steps=8, return_state=True, include_contacts=True)),
        request(15, remove=pb.RemoveRequest(name="ball")))
    yield "save_step_restore", sequence(
        request(16, save_state=pb.SaveStateRequest(slot="start")),
        request(17, step=pb.StepRequest(steps=5)),
        request(18, restore_state=pb.RestoreStateRequest(slot="start")),
        request(19, save_state=pb.SaveStateRequest()))
    yield "settings_then_step", sequence(
        request(20, set_settings=pb.SetSettingsRequest(
            timestep=0.002, gravity=vec3(0, 0, -3.7), iterations=12, sor_omega=1.1,
            friction_model=pb.Settings.FRICTION_BOX, max_push_speed=2, relax_iterations=2,
            restitution_threshold=0.5, enforce_velocity_limits=False)),
        request(21, step=pb.StepRequest(steps=4, return_state=True)))
    yield "realtime_mode", sequence(
        request(22, set_settings=pb.SetSettingsRequest(mode=pb.Settings.MODE_REALTIME, rate=2)),
        request(23, step=pb.StepRequest(steps=1)),
        request(24, set_settings=pb.SetSettingsRequest(mode=pb.Settings.MODE_LOCKSTEP)))
    yield "subscribe_step", sequence(
        request(25, subscribe=pb.SubscribeRequest(every_steps=2, include_contacts=True)),
        request(26, step=pb.StepRequest(steps=4)),
        request(27, subscribe=pb.SubscribeRequest()))
    yield "set_robot_state", sequence(
        request(28, set_robot_state=pb.SetRobotStateRequest(
            robot="pendulum2", q=[-1, 0, 1.5, 1, 0, 0, 0, 0.3, -0.3], qd=[0] * 8)),
        request(29, set_robot_state=pb.SetRobotStateRequest(
            robot="arm7", joints=[pb.JointState(name="joint2", position=0.5, velocity=-1)])),
        request(30, set_robot_state=pb.SetRobotStateRequest(
            robot="pendulum2", base_pose=pose(-1, 0, 2),
            base_twist=pb.Twist(linear=vec3(0, 0, 1)))),
        request(31, step=pb.StepRequest(steps=2, return_state=True)))
    yield "set_body_state", sequence(
        request(32, set_body_state=pb.SetBodyStateRequest(
            name="box", pose=pose(0.6, 0, 0.6), twist=pb.Twist(angular=vec3(0, 0, 2)))),
        request(33, set_body_state=pb.SetBodyStateRequest(id=3, pose=pose(0.5, 0, 0.6))),
        request(34, step=pb.StepRequest(steps=3)))
    yield "apply_wrench", sequence(
        request(35, apply_wrench=pb.ApplyWrenchRequest(
            target="box", force=vec3(1, 0, 5), point=vec3(0.6, 0, 0.45))),
        request(36, apply_wrench=pb.ApplyWrenchRequest(
            target="arm7", link="link7", torque=vec3(0, 0.5, 0),
            frame=pb.ApplyWrenchRequest.LOCAL, duration=pb.ApplyWrenchRequest.HOLD)),
        request(37, step=pb.StepRequest(steps=3)),
        request(38, apply_wrench=pb.ApplyWrenchRequest(clear=1)),
        request(39, apply_wrench=pb.ApplyWrenchRequest(clear_all=True)))
    yield "set_dynamics", sequence(
        request(40, set_dynamics=pb.SetDynamicsRequest(
            bodies=[pb.BodyDynamics(body="box", mass=2, inertia=[0.01, 0.01, 0.01],
                                    friction=0.9, restitution=0.2),
                    pb.BodyDynamics(robot="arm7", link="link3", mass=1.5,
                                    com=vec3(0, 0, 0.05))],
            joints=[pb.JointDynamics(robot="arm7", joint="joint1", damping=0.1, friction=0.2,
                                     lower=-1, upper=1, effort_limit=20,
                                     velocity_limit=2)])),
        request(41, step=pb.StepRequest(steps=2)))
    yield "add_imu", sequence(
        request(42, add_imu=pb.AddImuRequest(
            name="wrist", robot="arm7", link="link7", pose=pose(0, 0, 0.05),
            accel_noise=0.01, gyro_noise=0.001, accel_bias=vec3(0.1, 0, 0), seed=7)),
        request(43, step=pb.StepRequest(steps=2, return_state=True,
                                        sensors=pb.Sensors(imus=True))))
    yield "cancel_reset", sequence(
        request(44, cancel_step=pb.CancelStepRequest(step_id=3)),
        request(45, reset=pb.ResetRequest()),
        request(46, get_state=pb.GetStateRequest()))
    yield "errors", sequence(
        request(47, step=pb.StepRequest(steps=-1)),
        request(48, set_target=pb.SetTargetRequest(robot="nobody")),
        request(49, restore_state=pb.RestoreStateRequest(snapshot=b"not a snapshot")),
        request(50, load_model=pb.LoadModelRequest(urdf_text="<robot")),
        pb.Request(id=51))


def main():
    os.makedirs(CORPUS, exist_ok=True)
    for name, data in corpus():
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
