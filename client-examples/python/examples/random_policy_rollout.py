#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A random policy in the arm-reach vector environment: runs --steps batched env steps of
--num-envs arms (resets included) and prints the mean return of the episodes that ended, their
count, and the rate in env steps per second (sub-environment steps: batched steps × num_envs)
and robot steps per second (× frame_skip).

    lcpsimd --workers 2 --max-worlds 1024 &
    /usr/bin/python3 random_policy_rollout.py --num-envs 64 --steps 2000

--halves splits the sub-environments into two vector environments, each on a connection of its
own, and steps them in turn with step_async / step_wait: one's BatchStep waits at the daemon
while this process reads the other's reply and draws its actions, so the daemon is never idle
waiting for the client.

Output, one key=value line: episodes=... mean_return=... env_steps_per_s=... robot_steps_per_s=...
"""

import argparse
import sys
import time

import numpy as np

from arm_reach_vector_env import ArmReachVectorEnv


def rollout(env, steps, seed):
    """Runs a seeded random policy; returns (returns of the finished episodes, seconds)."""
    env.action_space.seed(seed)
    env.reset(seed=seed)
    returns = np.zeros(env.num_envs)
    finished = []
    start = time.perf_counter()
    for _ in range(steps):
        _, rewards, terminations, truncations, _ = env.step(env.action_space.sample())
        returns += rewards  # the reset steps' rewards are 0 (NEXT_STEP)
        done = terminations | truncations
        finished.extend(returns[done].tolist())
        returns[done] = 0.0
    return finished, time.perf_counter() - start


def rollout_halves(env_a, env_b, steps, seed):
    """rollout over two vector environments stepped in turn, one's step in flight while the
    other's result is read; `steps` batched steps each."""
    envs = (env_a, env_b)
    for k, env in enumerate(envs):
        env.action_space.seed(seed + k)
        env.reset(seed=seed + k * env_a.num_envs)
    returns = [np.zeros(env.num_envs) for env in envs]
    finished = []
    start = time.perf_counter()
    env_a.step_async(env_a.action_space.sample())
    for step in range(steps):
        env_b.step_async(env_b.action_space.sample())
        for k, env in enumerate(envs):
            _, rewards, terminations, truncations, _ = env.step_wait()
            returns[k] += rewards
            done = terminations | truncations
            finished.extend(returns[k][done].tolist())
            returns[k][done] = 0.0
            if k == 0 and step + 1 < steps:
                env_a.step_async(env_a.action_space.sample())
    return finished, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default="tcp://127.0.0.1:5555")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=1000, help="batched env steps")
    parser.add_argument("--frame-skip", type=int, default=4)
    parser.add_argument("--max-episode-steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scene", help="a scene file on the daemon's machine (default: copies "
                        "of the daemon's default world)")
    parser.add_argument("--halves", action="store_true",
                        help="two vector environments of num-envs/2, stepped in turn")
    args = parser.parse_args(argv)

    def make(num_envs):
        return ArmReachVectorEnv(args.endpoint, num_envs=num_envs, frame_skip=args.frame_skip,
                                 max_episode_steps=args.max_episode_steps,
                                 scene_path=args.scene)

    if args.halves:
        if args.num_envs < 2 or args.num_envs % 2:
            parser.error("--halves needs an even --num-envs")
        with make(args.num_envs // 2) as env_a, make(args.num_envs // 2) as env_b:
            finished, seconds = rollout_halves(env_a, env_b, args.steps, args.seed)
    else:
        with make(args.num_envs) as env:
            finished, seconds = rollout(env, args.steps, args.seed)
    env_steps = args.steps * args.num_envs
    print("num_envs=%d steps=%d halves=%s episodes=%d mean_return=%.4f env_steps_per_s=%.0f "
          "robot_steps_per_s=%.0f"
          % (args.num_envs, args.steps, "yes" if args.halves else "no", len(finished),
             float(np.mean(finished)) if finished else float("nan"),
             env_steps / seconds, env_steps * args.frame_skip / seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
