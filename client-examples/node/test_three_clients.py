# SPDX-License-Identifier: Apache-2.0
"""Three clients in three languages drive one lcpsimd world at the same time.

The C arm_sine, the Python arm_sine.py and the Node arm_sine.js each drive an
arm of their own (the built-in world's arm and two more loaded with
LoadModel) in lockstep: one Step(1)-with-targets round trip per tick, each
printing the daemon's time every 100 of its own steps. The daemon is held
with SIGSTOP until all three have connected, so that their steps interleave.

What proves they share the world, each seeing the others' effects:
  * the daemon's step count at the end is exactly the sum of their steps;
  * each client's own printed times run ahead of its own step count: the time
    it printed after its k-th step is (k + m)·h with m > 0 steps made by the
    others in between, and the daemon time each prints only grows;
  * each arm followed its own client's sine (the state at the end) while the
    others stepped it too, and the arms nobody drives stay where they were.

Run by Debian's /usr/bin/python3 (python3-zmq, python3-protobuf). The ctest
sets: LCPSIMD, LCPSIM_ARM_SINE_C, LCPSIM_NODE, NODE_PATH, LCPSIM_PROTO (the
.proto for lcpsim.js), LCPSIM_PYTHON_DIR (client-examples/python, also on
PYTHONPATH for the package lcpsim) and LCPSIM_ROBOTS_DIR (server/model/robots).
"""

import math
import os
import re
import signal
import subprocess
import time
import unittest

import zmq
from lcpsim.v1 import lcpsim_pb2 as pb

HERE = os.path.dirname(os.path.abspath(__file__))

STEPS = 1000  # per client
STATE_LINE = re.compile(r"^time=(\S+) q=(\S+) tracking_error=(\S+)$")


def env(name):
    value = os.environ.get(name)
    if not value:
        raise unittest.SkipTest(f"{name} is not set")
    return value


class Daemon:
    """lcpsimd on ephemeral loopback ports, with a raw protocol connection."""

    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary, "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        m = re.search(r"rep=(\S+)\s+pub=(\S+)", line)
        if not m:
            self.proc.kill()
            raise AssertionError(f"unexpected first line from lcpsimd: {line!r}")
        self.rep, self.pub = m.group(1), m.group(2)
        self.port = int(self.rep.rsplit(":", 1)[1])
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.connect(self.rep)
        self.next_id = 1

    def call(self, **call):
        request = pb.Request(id=self.next_id, **call)
        self.next_id += 1
        self.socket.send_multipart([b"", request.SerializeToString()])
        if not self.socket.poll(10000):
            raise AssertionError(f"no reply to {request}")
        reply = pb.Reply()
        reply.ParseFromString(self.socket.recv_multipart()[-1])
        assert reply.id == request.id, (reply.id, request.id)
        assert reply.status.code == pb.Status.OK, reply.status
        return getattr(reply, reply.WhichOneof("result"))

    def established(self):
        """Connections the daemon's request socket has accepted (TCP level)."""
        count = 0
        with open("/proc/net/tcp") as f:
            for row in f.readlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                if int(local.split(":")[1], 16) == self.port and state == "01":
                    count += 1
        return count

    def close(self):
        self.proc.stdout.close()
        if not self.context.closed:
            self.socket.close()
            self.context.term()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                return self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def target(i, t):
    return 0.5 * math.sin(2 * math.pi * 0.5 * t + i)


class ThreeClients(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon(env("LCPSIMD"))
        self.addCleanup(self.daemon.close)

    def test_three_clients_drive_one_world(self):
        d = self.daemon
        info = d.call(get_info=pb.GetInfoRequest())
        h = info.settings.timestep
        builtin = next(r for r in info.robots if not r.floating_base and len(r.joints) == 7)
        # Two more arms beside the built-in one, clear of it and of each other.
        urdf = os.path.join(env("LCPSIM_ROBOTS_DIR"), "arm7.urdf")
        for name, y in (("arm_py", 1.5), ("arm_js", -1.5)):
            d.call(load_model=pb.LoadModelRequest(
                urdf_path=urdf, name=name, base_type=pb.LoadModelRequest.BASE_FIXED,
                base_pose=pb.Pose(position=pb.Vec3(x=-1.5, y=y, z=0.0))))
        start = d.call(get_state=pb.GetStateRequest()).state
        start_q = {r.name: list(r.q) for r in start.robots}
        self.assertEqual(start.step_count, 0)

        # arm_sine.py finds the package lcpsim beside it; arm_sine.js, the .proto in LCPSIM_PROTO.
        commands = {
            builtin.name: [env("LCPSIM_ARM_SINE_C"), "--steps", str(STEPS), "--robot", builtin.name, d.rep],
            "arm_py": ["/usr/bin/python3", os.path.join(env("LCPSIM_PYTHON_DIR"), "arm_sine.py"),
                       "--steps", str(STEPS), "--robot", "arm_py", d.rep],
            "arm_js": [env("LCPSIM_NODE"), os.path.join(HERE, "arm_sine.js"),
                       "--steps", str(STEPS), "--robot", "arm_js", d.rep],
        }
        # Hold the daemon until the three have connected, so that their steps
        # interleave rather than run one after another.
        d.proc.send_signal(signal.SIGSTOP)
        procs = {}
        try:
            for robot, command in commands.items():
                procs[robot] = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                text=True)
            # The most connections seen at once: a client's TCP connection may
            # be counted in the kernel's table an instant before another's
            # transient one (a reconnect) leaves it.
            deadline = time.monotonic() + 20
            most = d.established()
            while most < 1 + len(procs) and time.monotonic() < deadline:
                time.sleep(0.02)
                most = max(most, d.established())
            connected = most - 1  # the test's own connection
        finally:
            d.proc.send_signal(signal.SIGCONT)
        self.assertEqual(connected, 3, "all three clients connected while the daemon was held")
        outputs = {}
        for robot, proc in procs.items():
            out, err = proc.communicate(timeout=600)
            self.assertEqual(proc.returncode, 0, f"{commands[robot][:2]} failed:\n{err}")
            outputs[robot] = out

        end = d.call(get_state=pb.GetStateRequest()).state
        # One world: the daemon made exactly the steps the three asked for.
        self.assertEqual(end.step_count, 3 * STEPS)
        self.assertAlmostEqual(end.time, 3 * STEPS * h, delta=h / 2)

        for robot, out in outputs.items():
            lines = [STATE_LINE.match(l) for l in out.splitlines() if l.startswith("time=")]
            self.assertEqual(len(lines), STEPS // 100, out)
            self.assertTrue(all(lines), out)
            times = [float(m.group(1)) for m in lines]
            # After its k-th own step, each client saw the daemon at (k + m)·h: m steps by others.
            others = [round(t / h) - 100 * (k + 1) for k, t in enumerate(times)]
            self.assertTrue(all(b >= a for a, b in zip(others, others[1:])), (robot, others))
            self.assertGreater(others[-1], 0, f"{robot}'s client saw no step of the others: {times}")
            self.assertLessEqual(others[-1], 2 * STEPS, (robot, others))
            # Its arm followed its own sine and the printed q is the daemon's q.
            arm = next(r for r in end.robots if r.name == robot)
            last_q = [float(v) for v in lines[-1].group(2).split(",")]
            self.assertEqual(len(last_q), 7)
            moved = max(abs(a - b) for a, b in zip(arm.q, start_q[robot]))
            self.assertGreater(moved, 0.1, f"{robot} moved {moved} rad")
            print(f"{robot}: last printed time {times[-1]:.3f} s after its own {STEPS} steps "
                  f"(saw {others[-1]} steps of the others), arm moved {moved:.3f} rad")
        # The robots none of the three drove did not move.
        for robot in end.robots:
            if robot.name not in outputs:
                drift = max((abs(a - b) for a, b in zip(robot.q, start_q[robot.name])), default=0.0)
                self.assertLess(drift, 1e-6, robot.name)

        self.assertEqual(d.close(), 0, "lcpsimd exits 0 on SIGTERM")


if __name__ == "__main__":
    unittest.main()
