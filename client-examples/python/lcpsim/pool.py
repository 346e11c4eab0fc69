# SPDX-License-Identifier: Apache-2.0
"""lcpsim.pool: many worlds spread over many daemons (a list of endpoints, or a DNS name that
resolves to many addresses, such as a Kubernetes headless Service), stepped together, and moved
off a daemon that fails.

    pool = Pool(resolve_endpoints("tcp://lcpsimd.sim.svc.cluster.local:5555"), worlds=256,
                snapshot_every=10)
    for tick in range(1000):
        results = pool.step(steps=4, targets={name: [target("arm7", position=...)], ...})
    print(pool.moves)   # [Move(world, from_endpoint, to_endpoint, from_step), ...]
    pool.close()

Each tick sends one BatchStep to every daemon at once (one socket per daemon, their replies
waited for together with a zmq.Poller, no threads) and returns when all have answered. Every
snapshot_every ticks the BatchSteps also ask for each world's snapshot; the pool keeps the last
one and the WorldSteps sent since. When a daemon fails (no reply within the timeout, or its
connection drops), its worlds are created again on the other daemons from their last snapshots
(CreateWorld with the same source and the snapshot) and the WorldSteps sent since are run
again: the daemons are deterministic, so the moved worlds end bitwise where they would have.
Each move is recorded in `moves`.

What a snapshot holds is the world's state; the controllers' targets are given again by every
WorldStep that sets them, so a pool whose ticks give every world its targets moves worlds
exactly. Nor does a snapshot hold the world's dynamics: Pool.set_dynamics records each edit in
order with the world's ticks, and a moved world gets every edit again at the same point of its
history (an edit made on a daemon directly, not through the pool, is not carried).
"""

import collections
import socket
import time
import urllib.parse

import zmq
import zmq.utils.monitor

from lcpsim.batch import batch_request, world_step
from lcpsim.client import Client, LcpsimError, LcpsimProtocolError, dynamics, pb

Move = collections.namedtuple("Move", "world source destination from_step")
Move.__doc__ = ("A world moved off a failed daemon: its name, the endpoint it left, the one it "
                "went to, and the step count of the snapshot it continued from.")


class PoolError(LcpsimError):
    """The pool cannot go on (no daemon left, a world refused by every daemon, ...)."""

    def __init__(self, message):
        super().__init__(None, message)


def resolve_endpoints(endpoint, family=socket.AF_UNSPEC):
    """The endpoints of every address a tcp://HOST:PORT endpoint's host name resolves to (all
    its A and AAAA records, each once, in the resolver's order), e.g. the pods behind a
    Kubernetes headless Service. An endpoint with a literal address gives itself; a list
    gives the endpoints of each of its members."""
    if isinstance(endpoint, (list, tuple)):
        resolved = []
        for one in endpoint:
            resolved.extend(e for e in resolve_endpoints(one, family) if e not in resolved)
        return resolved
    parsed = urllib.parse.urlsplit(endpoint)
    if parsed.scheme != "tcp" or parsed.hostname is None or parsed.port is None:
        return [endpoint]  # ipc://, inproc:// and the like: nothing to resolve
    endpoints = []
    for family_found, _, _, _, address in socket.getaddrinfo(parsed.hostname, parsed.port,
                                                               family, socket.SOCK_STREAM):
        host = address[0]
        text = ("tcp://[%s]:%d" % (host, parsed.port) if family_found == socket.AF_INET6
                else "tcp://%s:%d" % (host, parsed.port))
        if text not in endpoints:
            endpoints.append(text)
    return endpoints


class _Daemon:
    """One daemon of the pool: its client (one DEALER socket), a monitor of that socket (to see
    the connection drop), the worlds it holds and whether it is still used."""

    def __init__(self, endpoint, timeout_ms, context):
        self.endpoint = endpoint
        self.client = Client(endpoint, timeout_ms=timeout_ms, context=context)
        self.monitor = self.client._socket.get_monitor_socket(
            zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
        self.connected = True  # as far as the monitor's events say
        self.worlds = []  # names, in the order of their WorldSteps
        self.alive = True

    def close(self):
        if self.monitor is not None:
            try:
                self.client._socket.disable_monitor()
            except (zmq.ZMQError, AttributeError):
                pass
            self.monitor.close()
            self.monitor = None
        self.client.close()


class Pool:
    """Worlds spread over daemons; see the module's docstring.

    endpoints: a list of endpoints (or one, resolved with resolve_endpoints). worlds: a count
    (named prefix + index) or a list of names. The worlds are made alike on every daemon:
    copy_of a world there ("default", the default) or from scene_path / scene_text; they are
    given to the daemons in turn (world i to daemon i mod D). snapshot_every: K, the ticks
    between snapshots (1: every tick). timeout_ms: how long a daemon may take to answer a
    tick before it is taken as failed."""

    def __init__(self, endpoints, worlds, copy_of="default", scene_path=None, scene_text=None,
                 snapshot_every=10, timeout_ms=10000, prefix="pool", context=None):
        if isinstance(endpoints, str):
            endpoints = resolve_endpoints(endpoints)
        if not endpoints:
            raise ValueError("Pool: no endpoints")
        if snapshot_every < 1:
            raise ValueError("Pool: snapshot_every must be at least 1")
        names = (["%s%d" % (prefix, i) for i in range(worlds)] if isinstance(worlds, int)
                 else list(worlds))
        if len(set(names)) != len(names):
            raise ValueError("Pool: world names must be unique")
        self.world_names = names
        self.snapshot_every = int(snapshot_every)
        self.timeout_ms = timeout_ms
        self._source = {"copy_of": copy_of, "scene_path": scene_path, "scene_text": scene_text}
        if scene_path is not None or scene_text is not None:
            self._source["copy_of"] = None
        self._context = context or zmq.Context.instance()
        self.daemons = [_Daemon(e, timeout_ms, self._context) for e in endpoints]
        self.home = {}          # world -> its _Daemon
        self.snapshots = {}     # world -> the last snapshot's bytes
        self.snapshot_step = {}  # world -> the step count of that snapshot
        # world -> what was sent since that snapshot, in order: WorldSteps, and the
        # SetDynamicsRequests of set_dynamics between them
        self.log = {}
        self.edits_before = {}  # world -> the SetDynamicsRequests made before that snapshot
        self.moves = []         # Move, in the order made
        self.failed = []        # endpoints of the daemons taken as failed
        self.ticks = 0
        self.on_tick = None     # called with the tick number before each tick is sent
        try:
            for i, name in enumerate(names):
                self._place(name, self.daemons[i % len(self.daemons)])
            self._tick({name: world_step(name, 0) for name in names}, snapshot=True, log=False)
        except BaseException:
            self.close()
            raise

    # ---- public ----

    @property
    def endpoints(self):
        """The endpoints of the daemons still in use."""
        return [d.endpoint for d in self.daemons if d.alive]

    def where(self, world):
        """The endpoint of the daemon holding `world`."""
        return self.home[world].endpoint

    def step(self, steps=1, targets=None, world_steps=None, return_state=False,
             sensors=None):
        """One tick: every world steps `steps` times after its targets (targets: a dict world ->
        list of SetTargetRequest, or None), or as its WorldStep in `world_steps` (a dict world ->
        WorldStep, for resets and per-world steps; the worlds not in it step `steps` times).
        Returns a dict world -> BatchStepResult (the state in it with return_state)."""
        self.ticks += 1
        if self.on_tick is not None:
            self.on_tick(self.ticks)
        messages = {}
        for name in self.world_names:
            if world_steps is not None and name in world_steps:
                message = pb.WorldStep()
                message.CopyFrom(world_steps[name])
                message.world = name
            else:
                message = world_step(name, steps, targets.get(name, ()) if targets else ())
            messages[name] = message
        snapshot = self.ticks % self.snapshot_every == 0
        return self._tick(messages, snapshot, log=True, return_state=return_state,
                          sensors=sensors)

    def run(self, ticks, steps=1, targets=None, return_state=False):
        """`ticks` ticks; targets: None, a dict (every tick's) or a function of the tick number
        (1, 2, ...) returning one. Returns the last tick's results."""
        results = None
        for _ in range(ticks):
            tick_targets = targets(self.ticks + 1) if callable(targets) else targets
            results = self.step(steps, tick_targets, return_state=return_state)
        return results

    def set_dynamics(self, world, bodies=(), joints=()):
        """SetDynamics on one world (`bodies` and `joints` as lcpsim.dynamics takes them), sent
        to the daemon holding it; all or nothing, as Client.set_dynamics. The edit is recorded
        in order with the world's ticks, so that a world moved off a failed daemon has it again
        at the same point of its history. An edit the daemon refuses raises its LcpsimError and
        is not recorded. When the world's daemon has failed, its worlds are moved first (as a
        tick moves them) and the edit is made where the world went."""
        if world not in self.home:
            raise KeyError("Pool.set_dynamics: no world named %r in the pool" % (world,))
        request = dynamics(bodies, joints)
        while True:
            daemon = self.home[world]
            replies, failed = self._call_all({daemon: ("set_dynamics", request)},
                                             world=world)
            if not failed:
                break
            # No answer (the daemon is gone or hung): its worlds move, then the edit is made
            # where this one went.
            self._replay_round(self._move_worlds_of(daemon), daemon)
        if isinstance(replies[daemon], LcpsimError):
            raise replies[daemon]  # the daemon answered: the edit itself was refused
        self.log.setdefault(world, []).append(request)

    def close(self, destroy=True):
        """Destroys the pool's worlds on the daemons still alive (destroy=True) and closes the
        sockets."""
        for daemon in self.daemons:
            if destroy and daemon.alive:
                for name in daemon.worlds:
                    try:
                        daemon.client.destroy_world(name)
                    except LcpsimError:
                        break  # the daemon is gone: nothing more to free there
            daemon.close()
        self.daemons = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- placing worlds ----

    def _create(self, name, daemon, snapshot=None):
        source = self._source
        daemon.client.create_world(name, scene_path=source["scene_path"],
                                   scene_text=source["scene_text"], copy_of=source["copy_of"],
                                   snapshot=snapshot)

    def _place(self, name, daemon, snapshot=None):
        self._create(name, daemon, snapshot)
        daemon.worlds.append(name)
        self.home[name] = daemon

    # ---- ticks ----

    def _tick(self, messages, snapshot, log, return_state=False, sensors=None):
        """Sends each daemon the BatchStep of its worlds' messages, waits for all, moves the
        worlds of the daemons that failed and runs their lost steps again. Returns world ->
        BatchStepResult."""
        if log:
            for name, message in messages.items():
                self.log.setdefault(name, []).append(message)
        options = {"return_state": return_state, "sensors": sensors,
                   "return_snapshot": snapshot}
        results = {}
        pending = {d: [messages[w] for w in d.worlds] for d in self.daemons
                   if d.alive and d.worlds}
        while pending:
            answered, failed = self._exchange(pending, options)
            for daemon, batch in answered.items():
                for result in batch:
                    results[result.world] = result
                    if result.status.code != pb.Status.OK:
                        raise PoolError("world %s on %s: %s %s" % (
                            result.world, daemon.endpoint,
                            pb.Status.Code.Name(result.status.code), result.status.message))
                    if snapshot:
                        self._keep_snapshot(result)
            pending = {}
            for daemon in failed:
                pending.update(self._move_worlds_of(daemon))
        return {name: results[name] for name in messages}

    def _keep_snapshot(self, result):
        self.snapshots[result.world] = result.snapshot
        self.snapshot_step[result.world] = result.step_count
        # The dynamics are not in the snapshot: the edits made so far stay to be made again.
        self.edits_before.setdefault(result.world, []).extend(
            entry for entry in self.log.get(result.world, ())
            if isinstance(entry, pb.SetDynamicsRequest))
        self.log[result.world] = []

    def _exchange(self, batches, options):
        """Sends each daemon its BatchStep (a list of WorldSteps), all at once, and waits for
        the replies together. Returns ({daemon: [BatchStepResult]}, [daemons that failed])."""
        calls = {daemon: ("batch_step", batch_request(steps, **options))
                 for daemon, steps in batches.items()}
        replies, failed = self._call_all(calls)
        answered = {}
        for daemon, reply in replies.items():
            if isinstance(reply, LcpsimError):
                raise PoolError("%s refused a BatchStep: %s" % (daemon.endpoint, reply))
            answered[daemon] = list(reply.results)
        return answered, failed

    def _call_all(self, calls, world=None):
        """Sends each daemon its request ({daemon: (call, message)}, addressed to `world`, None:
        the default world), all at once, and waits for the replies together. Returns ({daemon:
        reply, or the LcpsimError of a refusal}, [daemons that failed]); a daemon fails when it
        has no connection, when its connection drops, or when it does not answer within the
        timeout."""
        sent = {}
        failed = []
        for daemon, (call, message) in calls.items():
            client = daemon.client if world is None else daemon.client.world(world)
            try:
                # No wait: a daemon that is not connected now has failed.
                sent[daemon] = client._send(call, message, timeout_ms=0)
            except LcpsimError:
                failed.append(daemon)
        poller = zmq.Poller()
        by_socket = {}
        for daemon in sent:
            poller.register(daemon.client._socket, zmq.POLLIN)
            poller.register(daemon.monitor, zmq.POLLIN)
            by_socket[daemon.client._socket] = daemon
            by_socket[daemon.monitor] = daemon
        answered = {}
        deadline = time.monotonic() + self.timeout_ms / 1000.0
        waiting = set(sent)
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for sock, _ in poller.poll(int(left * 1000) + 1):
                daemon = by_socket[sock]
                if sock is daemon.monitor:
                    if not self._connected(daemon) and daemon in waiting:
                        waiting.discard(daemon)
                        failed.append(daemon)
                    continue
                if daemon not in waiting:
                    continue
                call = calls[daemon][0]
                try:
                    daemon.client._read_one(call)
                except LcpsimProtocolError:
                    waiting.discard(daemon)
                    failed.append(daemon)
                    continue
                if sent[daemon] in daemon.client._replies:
                    try:
                        answered[daemon] = daemon.client._receive(sent[daemon], call, deadline)
                    except LcpsimError as error:
                        answered[daemon] = error
                    waiting.discard(daemon)
        for daemon in waiting:
            daemon.client._outstanding.pop(sent[daemon], None)
            failed.append(daemon)
        return answered, failed

    @staticmethod
    def _connected(daemon):
        """Reads the monitor's pending events; whether the last one left the daemon
        connected (a drop followed by a reconnection is no failure)."""
        while True:
            try:
                event = zmq.utils.monitor.recv_monitor_message(daemon.monitor, zmq.NOBLOCK)
            except zmq.Again:
                return daemon.connected
            daemon.connected = event["event"] != zmq.EVENT_DISCONNECTED

    def _move_worlds_of(self, daemon):
        """Takes `daemon` out, creates its worlds on the others from their last snapshots and
        makes their logged history again there, all but the last round of WorldSteps; returns
        that round's BatchSteps, per daemon, for the caller to send."""
        daemon.alive = False
        self.failed.append(daemon.endpoint)
        alive = [d for d in self.daemons if d.alive]
        if not alive:
            raise PoolError("no daemon left (the last, %s, failed)" % daemon.endpoint)
        moved = daemon.worlds
        daemon.worlds = []
        destinations = collections.defaultdict(list)
        for name in moved:
            if name not in self.snapshots:
                raise PoolError("world %s: %s failed before its first snapshot"
                                % (name, daemon.endpoint))
            destination = min(alive, key=lambda d: len(d.worlds))
            try:
                self._place(name, destination, self.snapshots[name])
            except LcpsimError as error:
                raise PoolError("world %s: not created on %s (%s)"
                                % (name, destination.endpoint, error))
            self.moves.append(Move(name, daemon.endpoint, destination.endpoint,
                                   self.snapshot_step[name]))
            destinations[destination].append(name)
        # The lost history, in order: the edits made before the snapshot, then each world's
        # logged WorldSteps, one BatchStep per daemon and round, each after the edits that
        # preceded it. The last round is this tick's: it is returned for _tick to send (when
        # no tick is under way, the caller sends it with _replay_round).
        replay = {}
        for destination, names in destinations.items():
            for name in names:
                for edit in self.edits_before.get(name, ()):
                    self._edit_moved(destination, name, edit, daemon)
            rounds = {name: _rounds(self.log.get(name, [])) for name in names}
            count = max(len(r) for r in rounds.values())
            for r in range(count):
                for name in names:
                    if r < len(rounds[name]):
                        for edit in rounds[name][r][0]:
                            self._edit_moved(destination, name, edit, daemon)
                steps = [rounds[name][r][1] for name in names
                         if r < len(rounds[name]) and rounds[name][r][1] is not None]
                if r < count - 1:
                    self._replay_round({destination: steps}, daemon)
                elif steps:
                    replay[destination] = steps
        return replay

    def _edit_moved(self, destination, name, edit, source):
        try:
            destination.client.world(name)._call("set_dynamics", edit)
        except LcpsimError as error:
            raise PoolError("world %s: its dynamics not set again on %s while taking the worlds "
                            "of %s (%s)" % (name, destination.endpoint, source.endpoint, error))

    def _replay_round(self, batches, source=None):
        """Runs one round of logged WorldSteps again ({daemon: [WorldStep]}) and checks every
        world's result."""
        options = {"return_state": False, "sensors": None, "return_snapshot": False}
        answered, failed = self._exchange(batches, options)
        if failed:
            raise PoolError("%s failed while taking the worlds of %s"
                            % (failed[0].endpoint, source.endpoint if source else "a daemon"))
        for destination, batch in answered.items():
            for result in batch:
                if result.status.code != pb.Status.OK:
                    raise PoolError("world %s on %s: %s" % (result.world, destination.endpoint,
                                                            result.status.message))


def _rounds(log):
    """A world's log as rounds ([edits], WorldStep): each WorldStep with the edits made just
    before it; edits made after the last WorldStep end it as ([edits], None)."""
    rounds, edits = [], []
    for entry in log:
        if isinstance(entry, pb.SetDynamicsRequest):
            edits.append(entry)
        else:
            rounds.append((edits, entry))
            edits = []
    if edits:
        rounds.append((edits, None))
    return rounds
