#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The 7-dof arm reaching random targets, as a vector environment (lcpsim.vector_env): each
sub-environment a world of one lcpsimd, all stepped by one BatchStep per env step.

Task, per sub-environment:
  observation  (2 * joints + 6,): q, qd (rad, rad/s), the goal position and the end effector's
               position (m, world axes); the end effector is the tip of the last link, `tip`
               metres along its z axis.
  action       (joints,) in [-1, 1]: a change of each joint's position target, target =
               clip(q + action_scale * action, lower, upper), tracked by the daemon's PD
               controllers (kp, kd, gravity compensation) during frame_skip steps.
  reward       -|goal - end effector| - action_cost * |action|^2.
  terminated   the end effector within success_distance of the goal for success_steps env
               steps in a row.
  truncated    max_episode_steps env steps.
  reset        the world's initial state restored, each joint at its home position plus
               uniform(-joint_noise, joint_noise) (clipped to its limits), at rest; the goal
               uniform in a box in front of the arm; with randomize_dynamics each joint's
               damping uniform in [0, max_damping] (SetDynamics).

Run it for a short random-policy demo (see random_policy_rollout.py for the rollout figures):

    /usr/bin/python3 arm_reach_vector_env.py [--endpoint tcp://127.0.0.1:5555] [--num-envs 8]
"""

import argparse
import sys

import numpy as np

from lcpsim import find_robot, robot_state, target
from lcpsim.vector_env import Box, Episode, WorldsVectorEnv

# Goals: a box in front of the arm's base, above the built-in world's table.
GOAL_LOW = np.array([0.3, -0.5, 0.6])
GOAL_HIGH = np.array([0.9, 0.5, 1.4])


def rotate(quaternions, vectors):
    """Each vector (n, 3) rotated by its unit quaternion (n, 4) (w, x, y, z):
    v' = v + 2 w (u × v) + 2 u × (u × v), u the quaternion's vector part."""
    w = quaternions[:, :1]
    u = quaternions[:, 1:]
    uv = _cross(u, vectors)
    return vectors + 2.0 * w * uv + 2.0 * _cross(u, uv)


def _cross(a, b):
    """Row-wise a × b of two (n, 3) arrays (numpy.cross is slow for small arrays)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                     a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


class ArmReachVectorEnv(WorldsVectorEnv):
    """The arm-reach task (see the module's docstring). Arguments beyond WorldsVectorEnv's
    (endpoint, num_envs, client, copy_of, scene_path, scene_text, world_prefix):
    robot (None: the first robot), frame_skip, max_episode_steps, action_scale (rad),
    success_distance (m), success_steps, action_cost, kp, kd, joint_noise (rad), tip (m),
    randomize_dynamics, max_damping (N·m·s/rad), dtype of the observations."""

    def __init__(self, endpoint="tcp://127.0.0.1:5555", num_envs=8, robot=None, frame_skip=4,
                 max_episode_steps=200, action_scale=0.1, success_distance=0.02,
                 success_steps=10, action_cost=0.01, kp=100.0, kd=10.0, joint_noise=0.3,
                 tip=0.3, randomize_dynamics=True, max_damping=0.5, dtype=np.float32,
                 **kwargs):
        self.robot_wanted = robot
        self.action_scale = float(action_scale)
        self.success_distance = float(success_distance)
        self.success_steps = int(success_steps)
        self.action_cost = float(action_cost)
        self.kp, self.kd = float(kp), float(kd)
        self.joint_noise = float(joint_noise)
        self.tip = np.array([0.0, 0.0, float(tip)])
        self.randomize_dynamics = bool(randomize_dynamics)
        self.max_damping = float(max_damping)
        self.dtype = np.dtype(dtype)
        self.goals = np.zeros((num_envs, 3))
        self.steps_within = np.zeros(num_envs, dtype=np.int64)
        super().__init__(endpoint, num_envs, frame_skip=frame_skip,
                         max_episode_steps=max_episode_steps, **kwargs)

    def setup(self, first_world):
        info = first_world.get_info()
        robot = (find_robot(info, self.robot_wanted) if self.robot_wanted
                 else (info.robots[0] if info.robots else None))
        if robot is None:
            raise ValueError("no robot %r in the worlds" % (self.robot_wanted or ""))
        if robot.floating_base:
            raise ValueError("the arm-reach task wants a fixed-base arm, %s floats" % robot.name)
        self.robot = robot.name
        self.joint_names = [joint.name for joint in robot.joints]
        self.lower = np.array([j.lower if j.has_limits else -np.pi for j in robot.joints])
        self.upper = np.array([j.upper if j.has_limits else np.pi for j in robot.joints])
        self.links = [robot.links[-1]]
        self.home = np.array(find_robot(first_world.get_state(), self.robot).q, dtype=float)
        joints = len(self.joint_names)
        self.single_action_space = Box(-1.0, 1.0, (joints,), dtype=np.float32)
        self.single_observation_space = Box(-np.inf, np.inf, (2 * joints + 6,), dtype=self.dtype)

    # ---- the task ----

    def draw(self, rng):
        """An episode's random numbers, in the order drawn: the initial joint positions, the
        goal, and the joints' damping (None without randomize_dynamics)."""
        joints = len(self.joint_names)
        q0 = np.clip(self.home + rng.uniform(-self.joint_noise, self.joint_noise, joints),
                     self.lower, self.upper)
        goal = rng.uniform(GOAL_LOW, GOAL_HIGH)
        damping = (rng.uniform(0.0, self.max_damping, joints) if self.randomize_dynamics
                   else None)
        return q0, goal, damping

    def reset_calls(self, q0, damping):
        """The SetDynamicsRequest (or None), SetRobotStateRequest and SetTargetRequest that
        start an episode from q0 at rest, holding q0."""
        dynamics = None
        if damping is not None:
            from lcpsim import pb
            dynamics = pb.SetDynamicsRequest()
            for name, value in zip(self.joint_names, damping):
                dynamics.joints.add(robot=self.robot, joint=name, damping=float(value))
        state = robot_state(self.robot, q=q0.tolist(), qd=[0.0] * len(q0))
        hold = target(self.robot, mode="position", position=q0.tolist(), velocity=0.0,
                      kp=self.kp, kd=self.kd, gravity_compensation=True)
        return dynamics, state, hold

    def draw_episode(self, index, rng):
        q0, goal, damping = self.draw(rng)
        dynamics, state, hold = self.reset_calls(q0, damping)
        self.goals[index] = goal
        self.steps_within[index] = 0
        return Episode(robot_states=[state], targets=[hold], dynamics=dynamics,
                       task={"q0": q0, "goal": goal, "damping": damping})

    def position_targets(self, q, actions):
        """The joint position targets of `actions` (clipped to [-1, 1]) from positions q."""
        return np.clip(q + self.action_scale * actions, self.lower, self.upper)

    def targets(self, actions):
        return {"position": self.position_targets(self.last_result.q, actions)}

    def end_effector(self, link_positions, link_orientations):
        """The tip of the last link (n, 3) from its poses (n, 3) and (n, 4)."""
        count = len(link_positions)
        return link_positions + rotate(link_orientations, np.tile(self.tip, (count, 1)))

    def observation(self, q, qd, goals, link_positions, link_orientations):
        """Observations (n, 2 * joints + 6) from the arrays of n worlds."""
        tip = self.end_effector(link_positions, link_orientations)
        return np.concatenate([q, qd, goals, tip], axis=1).astype(self.dtype)

    def observe(self, result):
        return self.observation(result.q, result.qd, self.goals, result.link_positions[:, 0],
                                result.link_orientations[:, 0])

    def distance(self, observations):
        """|goal - end effector| of each row of observations."""
        goal, tip = observations[:, -6:-3], observations[:, -3:]
        return np.linalg.norm(goal.astype(np.float64) - tip.astype(np.float64), axis=1)

    def evaluate(self, observations, actions, result):
        distance = self.distance(observations)
        rewards = -distance - self.action_cost * np.sum(np.square(actions, dtype=np.float64),
                                                        axis=1)
        within = (distance < self.success_distance) & ~self.resetting
        self.steps_within = np.where(within, self.steps_within + 1, 0)
        return rewards, self.steps_within >= self.success_steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default="tcp://127.0.0.1:5555")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with ArmReachVectorEnv(args.endpoint, num_envs=args.num_envs) as env:
        observations, _ = env.reset(seed=args.seed)
        env.action_space.seed(args.seed)
        for t in range(args.steps):
            observations, rewards, terminations, truncations, _ = env.step(
                env.action_space.sample())
            if t % 50 == 0:
                print("step=%d mean_distance=%.3f mean_reward=%.3f"
                      % (t, env.distance(observations).mean(), rewards.mean()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
