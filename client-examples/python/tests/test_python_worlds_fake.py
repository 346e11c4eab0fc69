# SPDX-License-Identifier: Apache-2.0
"""The logic of the vector environment and of the pool against fake_worlds_daemon.py (no
lcpsimd): NEXT_STEP autoreset bookkeeping, seeded resets, and a pool that loses one of four
daemons and still ends every world where a run without the loss does, bitwise. Run with
/usr/bin/python3, the package lcpsim and the examples importable (see CMakeLists.txt)."""
import os
import re
import subprocess
import sys
import unittest

import numpy as np

from arm_reach_vector_env import ArmReachVectorEnv
from lcpsim import target
from lcpsim.pool import Pool

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_worlds_daemon.py")


class FakeDaemon:
    def __init__(self):
        self.process = subprocess.Popen([sys.executable, FAKE], stdout=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL)
        line = self.process.stdout.readline().decode()
        self.rep = re.search(r"rep=(\S+)", line).group(1)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()


class FakeVectorEnvTest(unittest.TestCase):
    def setUp(self):
        self.daemon = FakeDaemon()

    def tearDown(self):
        self.daemon.kill()

    def test_next_step_autoreset(self):
        with ArmReachVectorEnv(self.daemon.rep, num_envs=6, max_episode_steps=9,
                               success_distance=6.7, success_steps=2) as env:
            observations, _ = env.reset(seed=2)
            env.action_space.seed(2)
            ended = np.zeros(6, dtype=bool)
            lengths = np.zeros(6, dtype=np.int64)
            finished = 0
            for _ in range(300):
                observations, rewards, terminations, truncations, _ = env.step(
                    env.action_space.sample())
                for i in np.flatnonzero(ended):
                    self.assertEqual(rewards[i], 0.0)
                    self.assertFalse(terminations[i] or truncations[i])
                    self.assertEqual(observations[i, :7].tobytes(),
                                     env.episodes[i].task["q0"].astype(np.float32).tobytes())
                lengths = np.where(ended, 0, lengths + 1)
                self.assertTrue(np.array_equal(truncations, lengths == 9))
                self.assertTrue(np.all(lengths[terminations] >= 2))
                finished += int((terminations & ~truncations).sum())
                ended = terminations | truncations
            self.assertGreater(finished, 0)


class FakePoolTest(unittest.TestCase):
    def test_lost_daemon_worlds_move_and_end_bitwise_alike(self):
        daemons = [FakeDaemon() for _ in range(6)]
        try:
            def targets(tick):
                return {"w%d" % i: [target("arm7", position=[0.02 * tick + 0.01 * i] * 7)]
                        for i in range(48)}

            pool = Pool([d.rep for d in daemons[:4]], ["w%d" % i for i in range(48)],
                        snapshot_every=4, timeout_ms=5000)
            lost = {w for w in pool.world_names if pool.where(w) == daemons[2].rep}
            pool.on_tick = lambda tick: daemons[2].kill() if tick == 7 else None
            results = pool.run(13, 3, targets, return_state=True)
            self.assertEqual({m.world for m in pool.moves}, lost)
            self.assertTrue(all(m.from_step == 4 * 3 for m in pool.moves))
            self.assertEqual({r.step_count for r in results.values()}, {39})
            pool.close()
            with Pool([d.rep for d in daemons[4:]], ["w%d" % i for i in range(48)]) as reference:
                expected = reference.run(13, 3, targets, return_state=True)
            for name in results:
                self.assertEqual(results[name].state.SerializeToString(),
                                 expected[name].state.SerializeToString(), name)
        finally:
            for daemon in daemons:
                daemon.kill()


if __name__ == "__main__":
    unittest.main()
