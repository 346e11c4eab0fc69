#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A random policy in the arm-reach vector environment: runs --steps batched env steps of
--num-envs arms (resets included) and prints the mean return of the episodes that ended, their
count, and the rate in env steps per second (sub-environment steps: batched steps × num_envs)
and robot steps per second (× frame_skip).

    lcpsimd --workers 2 --max-worlds 1024 &
    /usr/bin/python3 random_policy_rollout.py --num-envs 64 --steps 2000

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
    args = parser.parse_args(argv)
    with ArmReachVectorEnv(args.endpoint, num_envs=args.num_envs, frame_skip=args.frame_skip,
                           max_episode_steps=args.max_episode_steps,
                           scene_path=args.scene) as env:
        finished, seconds = rollout(env, args.steps, args.seed)
        env_steps = args.steps * env.num_envs
        print("num_envs=%d steps=%d episodes=%d mean_return=%.4f env_steps_per_s=%.0f "
              "robot_steps_per_s=%.0f"
              % (env.num_envs, args.steps, len(finished),
                 float(np.mean(finished)) if finished else float("nan"),
                 env_steps / seconds, env_steps * env.frame_skip / seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
