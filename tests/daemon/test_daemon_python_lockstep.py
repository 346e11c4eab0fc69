# SPDX-License-Identifier: Apache-2.0
"""Lockstep equivalence through the Python client: 1000 Step(1, targets) calls with the state
returned end in exactly (bit for bit) the final q and state of the same world stepped in-process
through the engine API, as printed by lcpd-lockstep-reference (tests/daemon/lockstep_reference.h).

Environment: LCPSIMD (the daemon), LCPD_LOCKSTEP_REFERENCE (the reference program), PYTHONPATH
holding client-examples/python (the package lcpsim) unless it is installed."""

import math
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

from lcpsim import Client, find_robot, target

STEPS = 1000
ROBOT = "arm7"
JOINTS = 7
KP, KD = 100.0, 10.0


def joint_targets(k, h):
    """q*_i(t) = 0.5 sin(2 pi 0.5 t + i) at t = k h, rounded as lockstep_reference.c rounds it."""
    t = float(k) * h
    return [0.5 * math.sin(2.0 * 3.141592653589793 * 0.5 * t + float(i)) for i in range(JOINTS)]


def reference(steps):
    out = subprocess.run([os.environ["LCPD_LOCKSTEP_REFERENCE"], str(steps)], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    fields = {}
    for line in out.splitlines():
        key, _, rest = line.partition(" ")
        fields[key] = rest.split()
    return {"h": float.fromhex(fields["h"][0]), "step_count": int(fields["step_count"][0]),
            "q": [float.fromhex(x) for x in fields["q"]],
            "values": [float.fromhex(x) for x in fields["values"]]}


def flatten(state):
    """The flat vector of lockstep_state_from_message: time; per robot q, qd, applied torque,
    link poses; per body pose and twist."""
    values = [state.time]

    def pose(p):
        o = p.orientation if p.HasField("orientation") else None
        return [p.position.x, p.position.y, p.position.z] + (
            [o.w, o.x, o.y, o.z] if o is not None else [1.0, 0.0, 0.0, 0.0])

    for robot in state.robots:
        values += list(robot.q) + list(robot.qd) + list(robot.applied_torque)
        for link in robot.link_poses:
            values += pose(link)
    for body in state.bodies:
        t = body.twist
        values += pose(body.pose) + [t.linear.x, t.linear.y, t.linear.z,
                                     t.angular.x, t.angular.y, t.angular.z]
    return values


def bits(values):
    return [float.hex(v) for v in values]


class Daemon:
    """lcpsimd on ephemeral ports; its endpoints from the first line it prints."""

    def __init__(self):
        self._out = tempfile.NamedTemporaryFile(prefix="lcpsimd-lockstep-", suffix=".out")
        self.process = subprocess.Popen(
            [os.environ["LCPSIMD"], "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0"],
            stdout=self._out, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            with open(self._out.name) as out:
                line = out.readline()
            match = re.search(r"rep=(\S+)", line)
            if line.endswith("\n") and match:
                self.rep = match.group(1)
                return
            if self.process.poll() is not None:
                raise RuntimeError("lcpsimd exited with %d" % self.process.returncode)
            time.sleep(0.01)
        self.stop()
        raise RuntimeError("lcpsimd printed no endpoints in time")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._out.close()
        return self.process.returncode


class PythonLockstepTest(unittest.TestCase):
    def setUp(self):
        self.reference = reference(STEPS)
        self.daemon = Daemon()
        self.sim = Client(self.daemon.rep, timeout_ms=20000)

    def tearDown(self):
        self.sim.close()
        self.assertEqual(self.daemon.stop(), 0)

    def test_1000_steps_with_targets_match_in_process_bitwise(self):
        h = self.sim.get_info().settings.timestep
        self.assertEqual(float.hex(h), float.hex(self.reference["h"]))
        reply = None
        for k in range(STEPS):
            arm = target(ROBOT, mode="position", position=joint_targets(k, h), kp=KP, kd=KD)
            reply = self.sim.step(1, targets=[arm], return_state=True)
            self.assertEqual(reply.step_count, k + 1)
        state = reply.state
        self.assertEqual(state.step_count, self.reference["step_count"])
        q = list(find_robot(state, ROBOT).q)
        self.assertEqual(bits(q), bits(self.reference["q"]))
        self.assertGreater(sum(abs(x) for x in q), 0.1)  # the arm moved
        self.assertEqual(bits(flatten(state)), bits(self.reference["values"]))


if __name__ == "__main__":
    unittest.main()
