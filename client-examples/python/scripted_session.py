#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""scripted_session: one scripted session against a fresh lcpsimd serving its built-in world
(the arm "arm7", the static "table", the free 0.5 kg "box"): load a quadruped, add IMUs, set
states, push, randomise the dynamics, sense, snapshot and restore. It prints every state it
reads in a canonical text form that the C (scripted_session.c) and Node (scripted_session.js)
versions of this script print byte for byte the same: the daemon is deterministic, and the
three clients must hand the same doubles to the user.

    /usr/bin/python3 client-examples/python/scripted_session.py ENDPOINT QUADRUPED_URDF

The script (the same constants in the three languages):
  1. GetInfo; LoadModel QUADRUPED_URDF as "dog", floating base, base at (0, 2, 0.6) m.
  2. AddImu "wrist" on arm7/link7 at (0, 0, 0.05) m; AddImu "trunk_imu" on dog/trunk with
     accel_noise 0.01 m/s², gyro_noise 0.001 rad/s, seed 7.
  3. SetRobotState arm7 joint1 q = 0.3, joint2 q = 0.2, qd = 0.1; SetRobotState dog base
     pose (0, 2, 0.5) m, identity, base twist linear (0.1, 0, 0) m/s, angular 0;
     SetBodyState box at its position + (0, 0, 0.05) m, its orientation, linear velocity 0,
     angular velocity (0, 0, 1) rad/s.
  4. Step 20 with targets: arm7 every joint POSITION q* = 0.1, kp = 100, kd = 10; dog every
     joint POSITION q* = 0 (hip), 0.8 (thigh), -1.6 (calf), kp = 200, kd = 5. Print "A".
  5. ApplyWrench dog base force (0, 50, 0) N, held; Step 24; clear it; ApplyWrench arm7
     link7 torque (0, 0, 2) N·m, local frame, next step only; Step 1. Print "B".
  6. SetDynamics box mass 2.0 kg, friction 0.6; dog trunk mass 8.8 kg (the URDF's 8.0 kg
     + 10 %); arm7 joint3 damping 0.5 N·m·s/rad. Step 60 with every sensor group and the
     contacts; print "C" (the Step's state) with them.
  7. SaveState; Step 10; print "D"; RestoreState; Step 10; print "E". D and E must be equal
     (the script exits 1 if not).
"A", "B", "D" and "E" come from a GetState after the steps (no sensors, no contacts).

The canonical form: one line per value group, "<label> <path>[ <value>...]"; a double is the
16 lowercase hex digits of its IEEE-754 bits, an integer is decimal. Per state: time,
step_count; per robot (the state's order): robot.R.q, .qd, .applied_torque, .base_pose
(px py pz qw qx qy qz), .base_twist (linear, angular), .link_poses and .frame_poses (7 per
link or frame); per body: body.B.pose, body.B.twist. With the sensors also robot.R.qdd,
.link_twists, .link_twists_local, .link_accelerations (6 per link: linear, angular),
.joint_wrenches (12 per joint: world force, torque, local force, torque),
.link_contact_wrenches (12 per link: normal force, torque, friction force, torque),
robot.R.imu.NAME (specific_force, angular_rate), robot.R.energy (kinetic, potential);
body.B.contact_wrench (12), body.B.energy; and solver_stats (pairs manifolds contacts rows
iterations residual warm_started). With the contacts: "contacts N", then per contact
"contact A B" position normal depth normal_impulse friction_impulse. A message the daemon
left out prints as zeros, except an orientation, which prints as the identity (the protocol
says an unset orientation is the identity; a quaternion of four zeros is taken the same way).
A body without a name is "body.#ID".
"""

import struct
import sys

from lcpsim import Client, LcpsimError, target

DOG_BASE = (0.0, 2.0, 0.6)  # m, where LoadModel puts the dog
WRIST_SITE = (0.0, 0.0, 0.05)  # m, in link7's frame
TRUNK_IMU_ACCEL_NOISE, TRUNK_IMU_GYRO_NOISE, TRUNK_IMU_SEED = 0.01, 0.001, 7
DOG_RESET_BASE = (0.0, 2.0, 0.5)  # m
DOG_RESET_LINEAR = (0.1, 0.0, 0.0)  # m/s
BOX_LIFT = 0.05  # m
BOX_SPIN = (0.0, 0.0, 1.0)  # rad/s
ARM_TARGET, ARM_KP, ARM_KD = 0.1, 100.0, 10.0
DOG_STANCE = {"hip": 0.0, "thigh": 0.8, "calf": -1.6}  # rad, by the joint name's part
DOG_KP, DOG_KD = 200.0, 5.0
PUSH_FORCE, PUSH_STEPS = (0.0, 50.0, 0.0), 24  # N
TWIST_TORQUE = (0.0, 0.0, 2.0)  # N·m
BOX_MASS, BOX_FRICTION = 2.0, 0.6
TRUNK_MASS = 8.0 * 1.1  # kg: the URDF's trunk mass + 10 % (GetInfo gives no link masses)
JOINT3_DAMPING = 0.5  # N·m·s/rad
SETTLE_STEPS, SENSED_STEPS, REPLAY_STEPS = 20, 60, 10
IDENTITY = (1.0, 0.0, 0.0, 0.0)


def hex_double(value):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(value)))[0]


def orientation(quat):
    """(w, x, y, z); four zeros (an unset Quat) is the identity. The State views already map
    an unset orientation to the identity; this keeps the rule in one place here too."""
    values = tuple(float(v) for v in quat)
    return IDENTITY if values == (0.0, 0.0, 0.0, 0.0) else values


def pose_values(pose):
    return list(pose.position) + list(orientation(pose.orientation))


def twist_values(twist):  # a Twist or an Acceleration: linear, angular
    return list(twist.linear) + list(twist.angular)


def wrench_values(wrench):
    return list(wrench.force) + list(wrench.torque)


def contact_wrench_values(wrench):
    return wrench_values(wrench.normal) + wrench_values(wrench.friction)


def hexes(values):
    return [hex_double(v) for v in values]


def canonical(label, state, sensors=False, contacts=False):
    """The state's lines in the canonical form (see the module's description)."""
    lines = []

    def line(path, words):
        lines.append(" ".join([label, path] + words))

    line("time", hexes([state.time]))
    line("step_count", [str(state.step_count)])
    for name, robot in state.robots.items():
        path = "robot.%s." % name
        line(path + "q", hexes(robot.q))
        line(path + "qd", hexes(robot.qd))
        line(path + "applied_torque", hexes(robot.applied_torque))
        line(path + "base_pose", hexes(pose_values(robot.base_pose)))
        line(path + "base_twist", hexes(twist_values(robot.base_twist)))
        line(path + "link_poses", hexes(v for p in robot.link_poses for v in pose_values(p)))
        line(path + "frame_poses", hexes(v for p in robot.frame_poses for v in pose_values(p)))
        if sensors:
            line(path + "qdd", hexes(robot.qdd))
            for group in ("link_twists", "link_twists_local", "link_accelerations"):
                line(path + group, hexes(v for t in getattr(robot, group)
                                         for v in twist_values(t)))
            line(path + "joint_wrenches", hexes(v for w in robot.joint_wrenches
                                                for v in wrench_values(w.world)
                                                + wrench_values(w.local)))
            line(path + "link_contact_wrenches", hexes(v for w in robot.link_contact_wrenches
                                                       for v in contact_wrench_values(w)))
            for imu_name, imu in robot.imus.items():
                line(path + "imu." + imu_name,
                     hexes(list(imu.specific_force) + list(imu.angular_rate)))
            line(path + "energy", hexes([robot.energy.kinetic, robot.energy.potential]))
    for body in state.bodies:
        path = "body.%s." % (body.name or "#%d" % body.id)
        line(path + "pose", hexes(pose_values(body.pose)))
        line(path + "twist", hexes(twist_values(body.twist)))
        if sensors:
            line(path + "contact_wrench", hexes(contact_wrench_values(body.contact_wrench)))
            line(path + "energy", hexes([body.energy.kinetic, body.energy.potential]))
    if contacts:
        line("contacts", [str(len(state.contacts))])
        for c in state.contacts:
            line("contact", [c.a, c.b] + hexes(list(c.position) + list(c.normal)
                                               + [c.depth, c.normal_impulse]
                                               + list(c.friction_impulse)))
    if sensors:
        s = state.solver_stats
        line("solver_stats", [str(n) for n in (s.pairs, s.manifolds, s.contacts, s.rows,
                                               s.iterations)]
             + hexes([s.residual]) + [str(s.warm_started)])
    return lines


def emit(lines):
    sys.stdout.write("".join(l + "\n" for l in lines))
    sys.stdout.flush()


def without_label(lines):
    return [l.split(" ", 1)[1] for l in lines]


def run(endpoint, quadruped_urdf):
    with Client(endpoint, timeout_ms=30000) as sim:
        # 1. The world, and a quadruped beside the arm.
        sim.get_info()
        dog = sim.load_model(urdf_path=quadruped_urdf, name="dog", base="floating",
                             base_position=DOG_BASE)
        # 2. IMUs: a noiseless one at the wrist, a noisy one (seeded) in the trunk.
        sim.add_imu("wrist", "arm7", "link7", position=WRIST_SITE)
        sim.add_imu("trunk_imu", "dog", "trunk", accel_noise=TRUNK_IMU_ACCEL_NOISE,
                    gyro_noise=TRUNK_IMU_GYRO_NOISE, seed=TRUNK_IMU_SEED)
        # 3. States: two arm joints by name, the dog's base in the air moving along x, the
        #    box lifted off the table and spinning.
        sim.set_robot_state("arm7", joints={"joint1": 0.3, "joint2": (0.2, 0.1)})
        sim.set_robot_state("dog", base_position=DOG_RESET_BASE, base_orientation=IDENTITY,
                            base_linear=DOG_RESET_LINEAR, base_angular=(0.0, 0.0, 0.0))
        box = sim.get_state().bodies["box"]
        x, y, z = (float(v) for v in box.pose.position)
        sim.set_body_state("box", position=(x, y, z + BOX_LIFT),
                           orientation=orientation(box.pose.orientation),
                           linear_velocity=(0.0, 0.0, 0.0), angular_velocity=BOX_SPIN)
        # 4. PD targets for both robots, applied with the first step.
        stance = [DOG_STANCE[next(part for part in DOG_STANCE if "_%s_" % part in joint.name)]
                  for joint in dog.joints]
        targets = [target("arm7", mode="position", position=ARM_TARGET, kp=ARM_KP, kd=ARM_KD),
                   target("dog", mode="position", position=stance, kp=DOG_KP, kd=DOG_KD)]
        sim.step(SETTLE_STEPS, targets=targets)
        emit(canonical("A", sim.get_state()))
        # 5. A held lateral push on the dog's base, then a one-step twist of the wrist.
        push = sim.apply_wrench("dog", force=PUSH_FORCE, hold=True)
        sim.step(PUSH_STEPS)
        sim.apply_wrench(clear=push.hold_id)
        sim.apply_wrench("arm7", link="link7", torque=TWIST_TORQUE, frame="local")
        sim.step(1)
        emit(canonical("B", sim.get_state()))
        # 6. Randomised dynamics, then every sensor and the contacts.
        sim.set_dynamics(bodies=[{"body": "box", "mass": BOX_MASS, "friction": BOX_FRICTION},
                                 {"robot": "dog", "link": "trunk", "mass": TRUNK_MASS}],
                         joints=[{"robot": "arm7", "joint": "joint3",
                                  "damping": JOINT3_DAMPING}])
        sensed = sim.step(SENSED_STEPS, return_state=True, include_contacts=True, sensors="all")
        emit(canonical("C", sensed, sensors=True, contacts=True))
        # 7. A snapshot, replayed: the same steps from it give the same state.
        snapshot = sim.save_state().snapshot
        sim.step(REPLAY_STEPS)
        first = canonical("D", sim.get_state())
        emit(first)
        sim.restore_state(snapshot=snapshot)
        sim.step(REPLAY_STEPS)
        again = canonical("E", sim.get_state())
        emit(again)
        if without_label(first) != without_label(again):
            print("scripted_session: the replay from the snapshot (E) differs from the first "
                  "run (D)", file=sys.stderr)
            return 1
    return 0


def main():
    if len(sys.argv) != 3:
        print("usage: scripted_session.py ENDPOINT QUADRUPED_URDF", file=sys.stderr)
        return 2
    try:
        return run(sys.argv[1], sys.argv[2])
    except LcpsimError as error:
        print("scripted_session: %s" % error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
