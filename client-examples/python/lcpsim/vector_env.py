# SPDX-License-Identifier: Apache-2.0
"""lcpsim.vector_env: a vector environment with the API and semantics of Gymnasium's VectorEnv
(gymnasium.vector.VectorEnv, 1.x), without importing gymnasium, each sub-environment a world of
one lcpsimd and each step one BatchStep for all of them.

    env = SomeTask(endpoint, num_envs=64)        # a subclass of WorldsVectorEnv
    obs, infos = env.reset(seed=42)              # obs: (num_envs, *single_observation_space.shape)
    for _ in range(1000):
        actions = env.action_space.sample()
        obs, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Semantics, as Gymnasium's SyncVectorEnv with its default autoreset mode (NEXT_STEP):
reset(seed=s) gives sub-environment i numpy.random.default_rng(s + i) (a list gives
each its own seed; None keeps the generators going) and resets them all; step(actions) steps
every sub-environment, except that one whose episode ended (terminated or truncated) at the
previous step is reset instead: its action is ignored, it returns its reset observation,
reward 0, terminated and truncated False. Seeded, the episodes are the same every run: the
daemon steps each world deterministically, and every random draw comes from the
sub-environment's generator.

On the daemon: each sub-environment is a world created by CreateWorld (a copy of a source world,
or from a scene), whose initial state is kept in a snapshot slot. A step is one BatchStep: the
stepping worlds get their controller targets and `frame_skip` steps; the resetting worlds get, in
the same WorldStep, the initial snapshot restored, the robot state the task draws (SetRobotState)
and zero steps. Dynamics drawn per episode (SetDynamics) go in a separate call per resetting
world, sent just before that BatchStep (all in flight together: the daemon takes one
connection's requests in their order).

step() is step_async(actions) then step_wait(), as in Gymnasium's AsyncVectorEnv: step_async
sends the BatchStep and returns at once, step_wait waits for its reply. A trainer with two
vector environments (two halves of its sub-environments, each on a client of its own) can send
one's step while it computes the other's actions, so that the daemon always has the next batch:

    obs_a, _ = env_a.reset(seed=0)
    obs_b, _ = env_b.reset(seed=env_a.num_envs)
    env_a.step_async(policy(obs_a))
    for _ in range(steps):
        env_b.step_async(policy(obs_b))      # queued at the daemon behind a's
        obs_a, *rest_a = env_a.step_wait()   # a's reply comes while b's batch is stepped
        env_a.step_async(policy(obs_a))
        obs_b, *rest_b = env_b.step_wait()
    env_a.step_wait()

(examples/random_policy_rollout.py --halves runs this loop).

A task subclasses WorldsVectorEnv: it defines the spaces and draw_episode, targets, observe and
evaluate (see their docstrings); the example examples/arm_reach_vector_env.py is one.
"""

import enum
import secrets

import numpy as np

from lcpsim.batch import BatchResult, BatchStepError, build_world_steps
from lcpsim.client import DEFAULT_ENDPOINT, Client, LcpsimError, _deadline, pb

INITIAL_SLOT = "lcpsim.vector_env.initial"


class AutoresetMode(enum.Enum):
    """Gymnasium's gymnasium.vector.AutoresetMode (same values)."""
    NEXT_STEP = "NextStep"
    SAME_STEP = "SameStep"
    DISABLED = "Disabled"


class Box:
    """A box in R^shape, as gymnasium.spaces.Box: low and high (arrays of `shape`, from scalars
    or arrays), dtype, seed(s) and sample() (uniform in the box, from the space's own
    generator, numpy.random.default_rng(seed)), contains(x). Unbounded sides are sampled as
    Gymnasium does: normal where both are infinite, low + exponential where only high is."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        self.dtype = np.dtype(dtype)
        if shape is None:
            shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
        self.shape = tuple(int(n) for n in shape)
        self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), self.shape).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), self.shape).copy()
        if np.any(self.low > self.high):
            raise ValueError("Box: low > high")
        self._np_random = None
        if seed is not None:
            self.seed(seed)

    @property
    def np_random(self):
        if self._np_random is None:
            self.seed()
        return self._np_random

    def seed(self, seed=None):
        """Sets the space's generator from `seed`; returns [seed]."""
        self._np_random = np.random.default_rng(seed)
        return [seed]

    def sample(self):
        low, high = self.low.astype(np.float64), self.high.astype(np.float64)
        bounded_below, bounded_above = np.isfinite(low), np.isfinite(high)
        rng = self.np_random
        sample = np.empty(self.shape)
        both = bounded_below & bounded_above
        sample[both] = rng.uniform(low[both], high[both])
        neither = ~bounded_below & ~bounded_above
        sample[neither] = rng.normal(size=int(neither.sum()))
        below = bounded_below & ~bounded_above
        sample[below] = low[below] + rng.exponential(size=int(below.sum()))
        above = ~bounded_below & bounded_above
        sample[above] = high[above] - rng.exponential(size=int(above.sum()))
        if np.issubdtype(self.dtype, np.integer):
            sample = np.floor(sample)
        return sample.astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return (x.shape == self.shape and np.can_cast(x.dtype, self.dtype)
                and bool(np.all(x >= self.low)) and bool(np.all(x <= self.high)))

    def __repr__(self):
        return "Box(%s, %s, %s, %s)" % (self.low.min(), self.high.max(), self.shape, self.dtype)

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape
                and self.dtype == other.dtype and np.array_equal(self.low, other.low)
                and np.array_equal(self.high, other.high))


def batch_space(space, n):
    """The space of n stacked samples of `space` (gymnasium.vector.utils.batch_space for a
    Box): shape (n, *space.shape), the bounds repeated."""
    return Box(np.stack([space.low] * n), np.stack([space.high] * n), dtype=space.dtype)


class Episode:
    """What a task draws for one sub-environment's new episode (draw_episode): robot_states
    (SetRobotStateRequests applied after the initial snapshot is restored), targets
    (SetTargetRequests applied then), dynamics (a SetDynamicsRequest or None, sent before the
    BatchStep) and task, the task's own data (a goal, ...)."""

    def __init__(self, robot_states=(), targets=(), dynamics=None, task=None):
        self.robot_states = list(robot_states)
        self.targets = list(targets)
        self.dynamics = dynamics
        self.task = task


class WorldsVectorEnv:
    """The Gymnasium VectorEnv over worlds of one daemon; see the module's docstring.

    A subclass sets single_observation_space and single_action_space (Box) before calling
    __init__'s end (or in setup()), and defines:
      draw_episode(i, rng) -> Episode: sub-environment i's new episode, every random number
          drawn from rng (its generator);
      targets(actions) -> dict of target arrays for Client.batch_step (position, kp, ...)
          from the clipped actions (num_envs, *action shape); only the stepping rows are sent;
      observe(result) -> observations (num_envs, *observation shape) from the BatchResult;
      evaluate(observations, actions, result) -> (rewards, terminations) for the stepping
          sub-environments (the rows of the others are ignored).
    Truncation at max_episode_steps is done here (Gymnasium's TimeLimit).

    Arguments: endpoint or client (a Client, not closed by close()), num_envs, the worlds'
    source (copy_of: a world of the daemon, "default" by default; or scene_path / scene_text),
    frame_skip (the daemon's steps per env step), max_episode_steps (None: none), robot and
    links (for the BatchResult: the robot whose q, qd are read, the links whose poses are),
    world_prefix (the worlds' names: prefix + index; by default a random prefix of 48 bits,
    so that environments of many processes and machines can share a daemon)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    render_mode = None
    spec = None

    def __init__(self, endpoint=DEFAULT_ENDPOINT, num_envs=1, client=None, copy_of="default",
                 scene_path=None, scene_text=None, frame_skip=1, max_episode_steps=None,
                 robot=None, links=None, world_prefix=None, timeout_ms=60000):
        if num_envs < 1:
            raise ValueError("num_envs must be at least 1")
        self.num_envs = int(num_envs)
        self.frame_skip = int(frame_skip)
        self.max_episode_steps = max_episode_steps
        self.robot = robot
        self.links = list(links or [])
        self.closed = False
        self._own_client = client is None
        self.client = client or Client(endpoint, timeout_ms=timeout_ms)
        # Random, not the pid and id(self): environments of different processes, machines or
        # containers (each its own pid 1) share the daemon's one namespace of world names.
        prefix = world_prefix or "venv-%s-" % secrets.token_hex(6)
        self.worlds = ["%s%d" % (prefix, i) for i in range(self.num_envs)]
        self._created = []
        try:
            for name in self.worlds:
                if scene_path is not None or scene_text is not None:
                    self.client.create_world(name, scene_path=scene_path, scene_text=scene_text)
                else:
                    self.client.create_world(name, copy_of=copy_of)
                self._created.append(name)
                self.client.world(name).save_state(slot=INITIAL_SLOT)
            self.setup(self.client.world(self.worlds[0]))
        except BaseException:
            self.close()
            raise
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rngs = [np.random.default_rng() for _ in range(self.num_envs)]
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._episode_steps = np.zeros(self.num_envs, dtype=np.int64)
        self._pending = None  # step_async's (actions, resetting, _batch_send's), until step_wait
        self.episodes = [None] * self.num_envs  # each sub-environment's current Episode
        # The sub-environments being reset by the current reset() or step() (evaluate's rows
        # of them are ignored).
        self.resetting = np.zeros(self.num_envs, dtype=bool)
        self.last_result = None                 # the BatchResult of the last reset or step

    # ---- for subclasses ----

    def setup(self, first_world):
        """Called once the worlds are made, with a Client view of the first: a subclass
        reads what it needs (joint limits, ...) and sets its spaces."""

    def draw_episode(self, index, rng):
        raise NotImplementedError

    def targets(self, actions):
        raise NotImplementedError

    def observe(self, result):
        raise NotImplementedError

    def evaluate(self, observations, actions, result):
        raise NotImplementedError

    # ---- the VectorEnv API ----

    @property
    def unwrapped(self):
        return self

    @property
    def np_random(self):
        """The generators of the sub-environments (one per sub-environment)."""
        return self._rngs

    def reset(self, seed=None, options=None):
        """Resets every sub-environment; seed: None, an int (sub-environment i gets seed + i)
        or a list of num_envs ints/None. Returns (observations, infos)."""
        self._check_open()
        if self._pending is not None:
            raise RuntimeError("reset: a step is pending (call step_wait first)")
        if seed is not None:
            per_env = [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else seed
            if len(per_env) != self.num_envs:
                raise ValueError("reset: %d seed values for %d sub-environments"
                                 % (len(per_env), self.num_envs))
            for i, s in enumerate(per_env):
                if s is not None:
                    self._rngs[i] = np.random.default_rng(s)
        everyone = np.ones(self.num_envs, dtype=bool)
        self.resetting = everyone
        result = self._batch(everyone, None)
        self._autoreset[:] = False
        observations = self.observe(result)
        return observations, {}

    def step(self, actions):
        """Steps every sub-environment (resetting those whose episode ended at the previous
        step, NEXT_STEP). Returns (observations, rewards, terminations, truncations, infos)
        as arrays of num_envs rows; infos is a dict (empty)."""
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions):
        """Sends step(actions)'s BatchStep and returns at once; step_wait() returns what step
        would. At most one step may be pending (as Gymnasium's AsyncVectorEnv)."""
        self._check_open()
        if self._pending is not None:
            raise RuntimeError("step_async: a step is already pending (call step_wait first)")
        actions = np.asarray(actions)
        if actions.shape != self.action_space.shape:
            raise ValueError("step: actions of shape %s, expected %s"
                             % (actions.shape, self.action_space.shape))
        actions = np.clip(actions, self.action_space.low, self.action_space.high)
        resetting = self._autoreset.copy()
        self.resetting = resetting
        self._pending = (actions, resetting, self._batch_send(resetting, actions))

    def step_wait(self):
        """The result of the step step_async sent: (observations, rewards, terminations,
        truncations, infos), as step returns."""
        self._check_open()
        if self._pending is None:
            raise RuntimeError("step_wait: no step is pending (call step_async first)")
        actions, resetting, sent = self._pending
        self._pending = None
        result = self._batch_wait(sent)
        observations = self.observe(result)
        rewards, terminations = self.evaluate(observations, actions, result)
        rewards = np.asarray(rewards, dtype=np.float64).copy()
        terminations = np.asarray(terminations, dtype=bool).copy()
        self._episode_steps[~resetting] += 1
        truncations = np.zeros(self.num_envs, dtype=bool)
        if self.max_episode_steps is not None:
            truncations = self._episode_steps >= self.max_episode_steps
        rewards[resetting] = 0.0
        terminations[resetting] = False
        truncations[resetting] = False
        self._autoreset = terminations | truncations
        return observations, rewards, terminations, truncations, {}

    def close(self):
        """Destroys the worlds (and closes the client this env made)."""
        if self.closed:
            return
        self.closed = True
        try:
            for name in self._created:
                try:
                    self.client.destroy_world(name)
                except LcpsimError:
                    pass  # the daemon gone or the world already destroyed: nothing to free
        finally:
            if self._own_client:
                self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # As Gymnasium's envs: closed when collected, quietly (at interpreter exit ZeroMQ may
        # be gone already).
        if not getattr(self, "closed", True) and getattr(self, "_own_client", False):
            try:
                self.close()
            except Exception:  # noqa: BLE001 - nothing can be reported from a finaliser
                pass

    # ---- machinery ----

    def _check_open(self):
        if self.closed:
            raise RuntimeError("the vector environment is closed")

    def _batch(self, resetting, actions):
        """One BatchStep (_batch_send, then _batch_wait). Returns the BatchResult."""
        return self._batch_wait(self._batch_send(resetting, actions))

    def _batch_send(self, resetting, actions):
        """Sends one BatchStep: the `resetting` sub-environments restored to their initial
        snapshot with a freshly drawn episode (0 steps), the others given the actions' targets
        and frame_skip steps. Returns what _batch_wait needs for its reply."""
        self._link_indices()  # resolved now, not while the reply is awaited
        count = self.num_envs
        restores = [None] * count
        robot_states = [None] * count
        extra_targets = [None] * count
        steps = np.where(resetting, 0, self.frame_skip)
        for i in np.flatnonzero(resetting):
            episode = self.draw_episode(int(i), self._rngs[i])
            self.episodes[i] = episode
            self._episode_steps[i] = 0
            restores[i] = INITIAL_SLOT
            robot_states[i] = episode.robot_states
            extra_targets[i] = episode.targets
        dynamics = self._send_dynamics(resetting)
        request = pb.BatchStepRequest(return_state=True)
        messages = build_world_steps(self.worlds, steps.tolist(), robot_states=robot_states,
                                     restore=restores, targets=extra_targets,
                                     into=request.worlds)
        if actions is not None:
            self._add_action_targets(messages, resetting, self.targets(actions))
        # The daemon takes one connection's requests in their order: the SetDynamics sent
        # above apply before this BatchStep, whose reply is waited for after theirs.
        return self.client._send("batch_step", request), dynamics

    def _batch_wait(self, sent):
        """The BatchResult of the BatchStep _batch_send sent (BatchStepError when a world
        failed)."""
        batch_id, dynamics = sent
        deadline = _deadline(self.client.timeout_ms)
        for view, request_id in dynamics:
            view._receive(request_id, "set_dynamics", deadline)
        reply = self.client._receive(batch_id, "batch_step", deadline)
        result = BatchResult(reply, self.worlds, self.robot, self._link_indices(), None)
        if not result.ok.all():
            raise BatchStepError(result, result.failed())
        self.last_result = result
        return result

    def _add_action_targets(self, messages, resetting, arrays):
        """Appends each stepping world's SetTargetRequest for self.robot made from `arrays`
        (targets()'s): "mode" and "gravity_compensation" as target()'s, the others arrays of
        one row per sub-environment, one row for all, or a number."""
        arrays = dict(arrays)
        mode = arrays.pop("mode", None)
        if isinstance(mode, str):
            mode = pb.SetTargetRequest.Mode.Value(mode.upper())
        gravity_compensation = arrays.pop("gravity_compensation", None)
        rows = {}
        for key, value in arrays.items():
            if value is None:
                continue
            value = np.asarray(value, dtype=float)
            rows[key] = value.tolist() if value.ndim == 2 else [np.atleast_1d(value).tolist()]
        for i in np.flatnonzero(~resetting):
            request = messages[i].targets.add(robot=self.robot)
            if mode is not None:
                request.mode = mode
            if gravity_compensation is not None:
                request.gravity_compensation = bool(gravity_compensation)
            for key, values in rows.items():
                getattr(request, key).extend(values[i] if len(values) > 1 else values[0])

    def _send_dynamics(self, resetting):
        """Sends the resetting worlds' SetDynamics, without waiting; returns (view, request
        id) of each, for their replies."""
        pending = []
        for i in np.flatnonzero(resetting):
            dynamics = self.episodes[i].dynamics
            if dynamics is not None:
                view = self.client.world(self.worlds[i])
                pending.append((view, view._send("set_dynamics", dynamics)))
        return pending

    def _link_indices(self):
        if not self.links:
            return None
        if not hasattr(self, "_links_resolved"):
            names = self.client.world(self.worlds[0]).names(self.robot)
            self._links_resolved = [names.links[link] if isinstance(link, str) else int(link)
                                    for link in self.links]
        return self._links_resolved
