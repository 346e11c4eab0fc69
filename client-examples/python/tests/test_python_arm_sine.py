"""arm_sine.py against a live lcpsimd: it exits 0, moves the arm, and tracks the sine."""

import os
import re
import subprocess
import sys
import unittest

from live_daemon import LiveDaemon, RefusingEndpoint

ARM_SINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "arm_sine.py")
LINE = re.compile(r"^time=(\S+) q=(\S+) tracking_error=(\S+)$")


class ArmSineTest(unittest.TestCase):
    def test_tracks_the_sine(self):
        daemon = LiveDaemon()
        try:
            run = subprocess.run([sys.executable, ARM_SINE, "--steps", "2000", daemon.rep],
                                 capture_output=True, text=True, timeout=600)
        finally:
            self.assertEqual(daemon.stop(), 0)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertTrue(lines[0].startswith("robot=arm7 joints=7 "), lines[0])
        rows = []
        for line in lines[1:]:
            match = LINE.match(line)
            self.assertIsNotNone(match, line)
            rows.append((float(match.group(1)), [float(v) for v in match.group(2).split(",")],
                         float(match.group(3))))
        # 2000 steps, a line every 100.
        self.assertEqual(len(rows), 20)
        timestep = rows[1][0] - rows[0][0]
        for i, (time, q, error) in enumerate(rows):
            self.assertAlmostEqual(time, (i + 1) * timestep, delta=1e-9)
            self.assertEqual(len(q), 7)
            # After the transient (the start is a jump to 0.5 sin(i)), the PD with velocity
            # feed-forward and gravity compensation follows the 0.5 rad sine closely.
            if time >= 1.0:
                self.assertLess(error, 0.05, line)
        # The arm moves: over the run, every joint sweeps more than 0.1 rad.
        for joint in range(7):
            values = [q[joint] for _, q, _ in rows]
            self.assertGreater(max(values) - min(values), 0.1)

    def test_no_daemon_is_an_error_not_a_hang(self):
        nothing = RefusingEndpoint()
        try:
            run = subprocess.run([sys.executable, ARM_SINE, "--timeout-ms", "300",
                                  nothing.endpoint], capture_output=True, text=True, timeout=120)
        finally:
            nothing.close()
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("LcpsimTimeout", run.stderr)


if __name__ == "__main__":
    unittest.main()
