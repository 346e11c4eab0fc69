# SPDX-License-Identifier: Apache-2.0
"""The C, Python and Node clients run the same scripted session and read bitwise the same states.

Each of scripted_session (C), scripted_session.py and scripted_session.js runs the same script
(load a quadruped, add IMUs, set robot and body states, push with held and one-step wrenches,
change the dynamics, step with every sensor and the contacts, snapshot and restore) against a
fresh lcpsimd of its own, so that the three start from the same world, and prints every state
it reads in one canonical text form: the doubles as the hex digits of their IEEE-754 bits. The
daemon is deterministic, so the three outputs must be the same bytes; a difference is a client
that decodes, rounds or orders a value differently (or a daemon that is not deterministic).

The outputs also show that the calls took effect: the arm's joint1 starts where SetRobotState
put it, the held push moved the dog's base along +y with about the momentum the impulse gives,
the box weighs what SetDynamics made it weigh, and the replay from the snapshot is the first run.

Run by Debian's /usr/bin/python3 (python3-zmq, python3-protobuf). The ctest sets: LCPSIMD,
LCPSIM_SCRIPTED_SESSION_C, LCPSIM_NODE, NODE_PATH, LCPSIM_PROTO (the .proto for lcpsim.js),
LCPSIM_PYTHON_DIR (client-examples/python) and LCPSIM_ROBOTS_DIR (server/model/robots).
"""

import os
import struct
import subprocess
import unittest

from lcpsim.v1 import lcpsim_pb2 as pb
from test_three_clients import HERE, Daemon, env

LABELS = "ABCDE"
# Sensor lines the state "C" must carry (the script asks for every group and the contacts).
SENSOR_PATHS = ["robot.arm7.qdd", "robot.arm7.link_twists", "robot.arm7.link_twists_local",
                "robot.arm7.link_accelerations", "robot.arm7.joint_wrenches",
                "robot.arm7.link_contact_wrenches", "robot.arm7.imu.wrist", "robot.arm7.energy",
                "robot.dog.imu.trunk_imu", "robot.dog.joint_wrenches", "robot.dog.energy",
                "body.box.contact_wrench", "body.box.energy", "contacts", "solver_stats"]
# The script's constants that the checks below use (see scripted_session.py).
ARM_TARGET = 0.1  # rad
JOINT1_START = 0.3  # rad
PUSH_FORCE_Y, PUSH_STEPS = 50.0, 24  # N, steps
BOX_MASS = 2.0  # kg
DOG_MASS = 16.2  # kg, the URDF's (SetDynamics makes the trunk heavier only after B)


def double(word):
    return struct.unpack("<d", struct.pack("<Q", int(word, 16)))[0]


def parse(output):
    """{label: {path: [words after the path]}}; a contact's path is "contact" with the words
    of every contact line appended."""
    states = {}
    for line in output.splitlines():
        label, path, *words = line.split(" ")
        states.setdefault(label, {}).setdefault(path, []).extend(words)
    return states


def first_difference(a, b):
    a_lines, b_lines = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(a_lines, b_lines)):
        if x != y:
            return i + 1, x, y
    n = min(len(a_lines), len(b_lines))
    return n + 1, (a_lines[n:] or ["<end>"])[0], (b_lines[n:] or ["<end>"])[0]


class SameSession(unittest.TestCase):
    def setUp(self):
        # One fresh daemon per client: each session starts from the built-in world.
        self.daemons = {}
        for client in ("c", "python", "node"):
            self.daemons[client] = Daemon(env("LCPSIMD"))
            self.addCleanup(self.daemons[client].close)

    def test_three_clients_print_the_same_states(self):
        urdf = os.path.join(env("LCPSIM_ROBOTS_DIR"), "quadruped.urdf")
        commands = {
            "c": [env("LCPSIM_SCRIPTED_SESSION_C")],
            "python": ["/usr/bin/python3",
                       os.path.join(env("LCPSIM_PYTHON_DIR"), "scripted_session.py")],
            "node": [env("LCPSIM_NODE"), os.path.join(HERE, "scripted_session.js")],
        }
        procs = {client: subprocess.Popen(command + [self.daemons[client].rep, urdf],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True)
                 for client, command in commands.items()}
        outputs = {}
        for client, proc in procs.items():
            out, err = proc.communicate(timeout=300)
            self.assertEqual(proc.returncode, 0, f"the {client} scripted session failed:\n{err}")
            outputs[client] = out

        # Byte for byte the same.
        for client in ("python", "node"):
            if outputs[client] != outputs["c"]:
                line, c_line, other = first_difference(outputs["c"], outputs[client])
                self.fail(f"the {client} session's output differs from the C one's first at "
                          f"line {line}:\n  c:      {c_line}\n  {client + ':':7} {other}")

        states = parse(outputs["c"])
        self.assertEqual(sorted(states), list(LABELS))
        for label in LABELS:
            for path in ("time", "step_count", "robot.arm7.q", "robot.dog.base_pose",
                         "body.box.pose"):
                self.assertIn(path, states[label], label)
        for path in SENSOR_PATHS:
            self.assertIn(path, states["C"], "sensor line missing")
        self.assertGreater(int(states["C"]["contacts"][0]), 0, "the dog stands, the box rests")
        # The replay from the snapshot is the first run (the script checks it too).
        self.assertEqual(states["D"], states["E"])

        info = self.daemons["c"].call(get_info=pb.GetInfoRequest())
        h = info.settings.timestep
        g = -info.settings.gravity.z

        def values(label, path):
            return [double(w) for w in states[label][path]]

        # SetRobotState: joint1 starts at 0.3 rad (0 in the built-in world) and after 20 steps
        # is still coming down to its 0.1 rad target.
        joint1 = values("A", "robot.arm7.q")[0]
        self.assertGreater(joint1, ARM_TARGET + 0.05)
        self.assertLess(joint1, JOINT1_START)

        # The held push: its impulse F·24h over the dog's 16.2 kg is the velocity it gives
        # along y (0 before it: the dog was set moving along x only). The feet reach the
        # ground near the end of the push, where friction takes some of it.
        expected = PUSH_FORCE_Y * PUSH_STEPS * h / DOG_MASS
        vy_a, vy_b = values("A", "robot.dog.base_twist")[1], values("B", "robot.dog.base_twist")[1]
        self.assertLess(abs(vy_a), 1e-9)
        self.assertGreater(vy_b, 0.7 * expected)
        self.assertLess(vy_b, 1.1 * expected)
        y_a, y_b = values("A", "robot.dog.base_pose")[1], values("B", "robot.dog.base_pose")[1]
        self.assertGreater(y_b, y_a)

        # SetDynamics: the box (now 2 kg, not 0.5) rests on the table: its potential energy is
        # m g z and the table holds it up with m g.
        box_z = values("C", "body.box.pose")[2]
        potential = values("C", "body.box.energy")[1]
        self.assertAlmostEqual(potential / (g * box_z), BOX_MASS, delta=1e-9)
        normal_force_z = values("C", "body.box.contact_wrench")[2]
        self.assertAlmostEqual(normal_force_z / g, BOX_MASS, delta=1e-4 * BOX_MASS)
        print(f"{len(outputs['c'].splitlines())} lines the same in C, Python and Node; the push "
              f"gave the dog {vy_b:.4f} m/s along y (impulse/mass {expected:.4f}); the box "
              f"weighs {normal_force_z / g:.6f} kg on the table")


if __name__ == "__main__":
    unittest.main()
