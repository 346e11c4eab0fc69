# SPDX-License-Identifier: Apache-2.0
"""The arm-reach vector environment (examples/arm_reach_vector_env.py, on lcpsim.vector_env)
against a live lcpsimd serving the 7-dof arm alone: Gymnasium's VectorEnv semantics (spaces,
seeded resets, NEXT_STEP autoreset) over 64 worlds for 10,000 batched steps, and observations
bitwise equal to those of a plain single-world client making the same calls on a daemon of its
own. Needs LCPSIMD and LCPSIM_ARM7_URDF; run with /usr/bin/python3, the package lcpsim and the
examples importable (see CMakeLists.txt)."""
import os
import tempfile
import time
import unittest

import numpy as np

from arm_reach_vector_env import ArmReachVectorEnv
from lcpsim import Client, find_robot, target
from lcpsim.vector_env import AutoresetMode, Box
from live_daemon import LiveDaemon

# The built-in world's arm and settings without the table and the box.
ARM_SCENE = """<?xml version="1.0"?>
<lcpsim version="1">
  <settings timestep="0.004166666666666667" iterations="20" gravity="0 0 -9.81" friction="cone"/>
  <ground friction="0.8"/>
  <robot name="arm7" urdf="%s" base="fixed" xyz="0 0 0.1" rpy="0 0 0"/>
</lcpsim>
"""


def arm_scene_file():
    scene = tempfile.NamedTemporaryFile("w", prefix="arm-only-", suffix=".xml", delete=False)
    scene.write(ARM_SCENE % os.environ["LCPSIM_ARM7_URDF"])
    scene.close()
    return scene.name


class VectorEnvTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scene = arm_scene_file()
        cls.daemon = LiveDaemon(["--world", cls.scene, "--workers", "2", "--max-worlds", "200"])

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        os.unlink(cls.scene)

    def make_env(self, num_envs, **kwargs):
        return ArmReachVectorEnv(self.daemon.rep, num_envs=num_envs, timeout_ms=60000, **kwargs)

    def test_spaces_and_metadata(self):
        with self.make_env(3) as env:
            self.assertEqual(env.num_envs, 3)
            self.assertEqual(env.metadata["autoreset_mode"], AutoresetMode.NEXT_STEP)
            self.assertEqual(env.single_action_space.shape, (7,))
            self.assertEqual(env.single_observation_space.shape, (20,))
            self.assertEqual(env.action_space.shape, (3, 7))
            self.assertEqual(env.observation_space.shape, (3, 20))
            self.assertEqual(env.observation_space.dtype, np.float32)
            observations, infos = env.reset(seed=1)
            self.assertEqual(observations.shape, (3, 20))
            self.assertEqual(observations.dtype, np.float32)
            self.assertEqual(infos, {})
            self.assertTrue(env.observation_space.contains(observations))
            names = [w.name for w in Client(self.daemon.rep).list_worlds().worlds]
            for world in env.worlds:
                self.assertIn(world, names)
        # close() destroyed the worlds.
        names = [w.name for w in Client(self.daemon.rep).list_worlds().worlds]
        self.assertFalse(any(world in names for world in env.worlds))

    def test_seeded_episodes_repeat(self):
        def run(seed):
            with self.make_env(4, max_episode_steps=15) as env:
                first, _ = env.reset(seed=seed)
                env.action_space.seed(seed)
                trace = [first]
                for _ in range(40):
                    trace.append(env.step(env.action_space.sample())[0])
                return np.stack(trace)
        a, b, c = run(11), run(11), run(12)
        self.assertEqual(a.tobytes(), b.tobytes())
        self.assertFalse(np.array_equal(a[0], c[0]))
        # Sub-environments draw from their own generators (seed + i): their resets differ.
        self.assertFalse(np.array_equal(a[0, 0], a[0, 1]))

    def test_two_halves_in_flight_match_synchronous_steps(self):
        """Two vector environments of 4 sub-environments each, their steps interleaved with
        step_async / step_wait so that one's BatchStep is queued at the daemon while the other's
        reply is read (two in flight, two connections), give bitwise what each gives stepped
        synchronously alone: the same observations, rewards, terminations and truncations,
        across resets (episodes of 12 steps, randomised dynamics included)."""
        def actions_for(env, rng):
            low, high = env.action_space.low, env.action_space.high
            return rng.uniform(low, high).astype(env.action_space.dtype)

        def synchronous(seed):
            with self.make_env(4, max_episode_steps=12) as env:
                rng = np.random.default_rng(seed)
                trace = [env.reset(seed=seed)[0]]
                for _ in range(30):
                    out = env.step(actions_for(env, rng))
                    trace.extend(out[:4])
                return trace

        expected_a, expected_b = synchronous(100), synchronous(200)
        with self.make_env(4, max_episode_steps=12) as env_a, \
                self.make_env(4, max_episode_steps=12) as env_b:
            rng_a, rng_b = np.random.default_rng(100), np.random.default_rng(200)
            trace_a = [env_a.reset(seed=100)[0]]
            trace_b = [env_b.reset(seed=200)[0]]
            with self.assertRaises(RuntimeError):
                env_a.step_wait()  # nothing pending
            env_a.step_async(actions_for(env_a, rng_a))
            with self.assertRaises(RuntimeError):
                env_a.step_async(actions_for(env_a, np.random.default_rng(0)))  # one at a time
            with self.assertRaises(RuntimeError):
                env_a.reset()
            for step in range(30):
                env_b.step_async(actions_for(env_b, rng_b))
                trace_a.extend(env_a.step_wait()[:4])
                if step + 1 < 30:
                    env_a.step_async(actions_for(env_a, rng_a))
                trace_b.extend(env_b.step_wait()[:4])
        for got, expected in ((trace_a, expected_a), (trace_b, expected_b)):
            self.assertEqual(len(got), len(expected))
            for g, e in zip(got, expected):
                self.assertEqual(np.asarray(g).tobytes(), np.asarray(e).tobytes())
        # Episodes ended within the run (12 steps each): resets were crossed.
        self.assertTrue(any(np.asarray(t).dtype == bool and np.asarray(t).any()
                            for t in expected_a[4::4]))

    def test_64_arms_10000_steps_next_step_autoreset(self):
        num_envs, steps, max_steps = 64, 10000, 100
        with self.make_env(num_envs, frame_skip=1, max_episode_steps=max_steps,
                           success_distance=0.9, success_steps=2) as env:
            observations, _ = env.reset(seed=5)
            env.action_space.seed(5)
            ended = np.zeros(num_envs, dtype=bool)
            episode_steps = np.zeros(num_envs, dtype=np.int64)
            terminated_count = truncated_count = ended_count = resets = 0
            start = time.perf_counter()
            for _ in range(steps):
                observations, rewards, terminations, truncations, _ = env.step(
                    env.action_space.sample())
                # NEXT_STEP: a sub-environment that ended at the previous step was reset by
                # this one: reward 0, neither flag, its reset observation (the drawn joint
                # positions, at rest, the new goal).
                for i in np.flatnonzero(ended):
                    self.assertEqual(rewards[i], 0.0)
                    self.assertFalse(terminations[i] or truncations[i])
                    episode = env.episodes[i].task
                    self.assertEqual(observations[i, :7].tobytes(),
                                     episode["q0"].astype(np.float32).tobytes())
                    self.assertFalse(observations[i, 7:14].any())
                    self.assertEqual(observations[i, 14:17].tobytes(),
                                     episode["goal"].astype(np.float32).tobytes())
                resets += int(ended.sum())
                episode_steps = np.where(ended, 0, episode_steps + 1)
                self.assertTrue(np.all(rewards[~ended] < 0.0))
                # Truncation exactly at max_episode_steps, never before.
                self.assertTrue(np.array_equal(truncations, episode_steps == max_steps))
                terminated_count += int(terminations.sum())
                truncated_count += int(truncations.sum())
                ended = terminations | truncations
                ended_count += int(ended.sum())
            seconds = time.perf_counter() - start
            self.assertTrue(np.isfinite(observations).all())
        print("vector_env: %d envs x %d steps in %.1f s (%.0f env steps/s), %d terminated, "
              "%d truncated, %d resets" % (num_envs, steps, seconds, num_envs * steps / seconds,
                                           terminated_count, truncated_count, resets))
        self.assertGreater(terminated_count, 0)
        self.assertGreater(truncated_count, 0)
        self.assertEqual(resets, ended_count - int(ended.sum()))

    def test_observations_match_a_single_world_client(self):
        seed, steps, frame_skip, watched = 3, 150, 2, (0, 3, 7)
        reference = LiveDaemon(["--world", self.scene])
        try:
            with self.make_env(8, frame_skip=frame_skip, max_episode_steps=40,
                               success_distance=0.3, success_steps=2) as env, \
                    Client(reference.rep, timeout_ms=60000) as single:
                single.save_state(slot="initial")
                observations, _ = env.reset(seed=seed)
                env.action_space.seed(seed)
                rngs = {i: np.random.default_rng(seed + i) for i in watched}
                low, high = env.single_action_space.low, env.single_action_space.high
                # Each watched sub-environment replayed one call at a time on `single`, one
                # sub-environment after the other (each from the initial state).
                traces = {i: [observations[i]] for i in watched}
                actions_taken, ended_at = [], []
                ended = np.zeros(env.num_envs, dtype=bool)
                for _ in range(steps):
                    actions = env.action_space.sample()
                    actions_taken.append(actions)
                    ended_at.append(ended)
                    observations, _, terminations, truncations, _ = env.step(actions)
                    for i in watched:
                        traces[i].append(observations[i])
                    ended = terminations | truncations
                resets_seen = sum(int(e[i]) for e in ended_at for i in watched)
                self.assertGreater(resets_seen, 0)
                for i in watched:
                    expected = self.replay(env, single, rngs[i], actions_taken, ended_at, i,
                                           low, high)
                    for t, (got, want) in enumerate(zip(traces[i], expected)):
                        self.assertEqual(got.tobytes(), want.tobytes(), (i, t))
        finally:
            reference.stop()

    def replay(self, env, single, rng, actions_taken, ended_at, i, low, high):
        """Sub-environment i's observations as a single-world client sees them: a reset is
        SetDynamics, RestoreState, SetRobotState and SetTarget, a step one Step with the
        position targets; the observation is made from GetState / the Step's state."""
        def reset():
            q0, goal, damping = env.draw(rng)
            dynamics, state, hold = env.reset_calls(q0, damping)
            if dynamics is not None:
                single._call("set_dynamics", dynamics)
            single.restore_state(slot="initial")
            single._call("set_robot_state", state)
            single._call("set_target", hold)
            return goal, single.get_state()

        def observe(state, goal):
            arm = find_robot(state.message, "arm7")
            link = arm.link_poses[len(arm.link_poses) - 1]
            p, o = link.position, link.orientation
            return env.observation(np.array([list(arm.q)]), np.array([list(arm.qd)]),
                                   goal[None], np.array([[p.x, p.y, p.z]]),
                                   np.array([[o.w, o.x, o.y, o.z]]))[0]

        goal, state = reset()
        observations = [observe(state, goal)]
        for actions, ended in zip(actions_taken, ended_at):
            if ended[i]:
                goal, state = reset()
            else:
                q = np.array(list(find_robot(state.message, "arm7").q))
                position = env.position_targets(q, np.clip(actions[i], low, high))
                state = single.step(env.frame_skip,
                                    targets=[target("arm7", position=position.tolist())],
                                    return_state=True)
            observations.append(observe(state, goal))
        return observations


class BoxTest(unittest.TestCase):
    """The minimal Box space (no daemon)."""

    def test_box_samples_within_bounds_and_repeats_with_a_seed(self):
        box = Box(-1.0, 2.0, (5,), dtype=np.float32, seed=4)
        samples = np.stack([box.sample() for _ in range(1000)])
        self.assertEqual(samples.dtype, np.float32)
        self.assertTrue((samples >= -1.0).all() and (samples <= 2.0).all())
        self.assertTrue(box.contains(samples[0]))
        self.assertFalse(box.contains(np.full(5, 3.0, dtype=np.float32)))
        again = Box(-1.0, 2.0, (5,), dtype=np.float32, seed=4)
        self.assertEqual(again.sample().tobytes(), samples[0].tobytes())
        unbounded = Box(-np.inf, np.inf, (3,), seed=0)
        self.assertTrue(np.isfinite(unbounded.sample()).all())
        with self.assertRaises(ValueError):
            Box(1.0, 0.0, (2,))


if __name__ == "__main__":
    unittest.main()
