# SPDX-License-Identifier: Apache-2.0
"""lcpsim.pool against four live lcpsimd standing in for the pods of a Kubernetes Service: 256
worlds (copies of the built-in world: the arm, a table and a box) spread over them and stepped
with one BatchStep per daemon per tick; one daemon is killed (SIGKILL) mid-run. Every world must
end at the step count asked, the killed daemon's worlds must have moved (and been reported as
moved, and only they) and must end bitwise where a run without the kill leaves them. Run with
/usr/bin/python3, the package lcpsim importable (see CMakeLists.txt)."""
import signal
import socket
import unittest

import numpy as np

from lcpsim import LcpsimError, find_robot, target
from lcpsim.pool import Pool, PoolError, resolve_endpoints
from live_daemon import LiveDaemon, RefusingEndpoint

WORLDS = 256
DAEMONS = 4
TICKS = 30
STEPS = 2           # robot steps per tick
SNAPSHOT_EVERY = 8  # ticks
KILL_AT = 19        # the tick before which one daemon is killed


def tick_targets(prefix):
    """A function of the tick giving every world of the pool (named prefix + index) its own
    position targets."""
    def targets(tick):
        i = np.arange(WORLDS)[:, None]
        j = np.arange(7)[None, :]
        positions = 0.5 * np.sin(0.15 * tick + 0.05 * i + 0.9 * j)
        return {"%s%d" % (prefix, w): [target("arm7", mode="position",
                                             position=positions[w].tolist(), kp=150.0,
                                             kd=12.0, gravity_compensation=True)]
                for w in range(WORLDS)}
    return targets


def arm_of(result):
    arm = find_robot(result.state, "arm7")
    return np.array(list(arm.q)).tobytes() + np.array(list(arm.qd)).tobytes()


class PoolTest(unittest.TestCase):
    def setUp(self):
        self.daemons = [LiveDaemon(["--workers", "1", "--max-worlds", "600"])
                        for _ in range(DAEMONS)]

    def tearDown(self):
        for daemon in self.daemons:
            daemon.stop()

    def test_killed_daemon_worlds_move_and_end_where_they_would_have(self):
        endpoints = [d.rep for d in self.daemons]
        victim = self.daemons[1]
        pool = Pool(endpoints, WORLDS, snapshot_every=SNAPSHOT_EVERY, timeout_ms=60000,
                    prefix="w")
        try:
            victim_worlds = {w for w in pool.world_names if pool.where(w) == victim.rep}
            self.assertEqual(len(victim_worlds), WORLDS // DAEMONS)

            def kill(tick):
                if tick == KILL_AT:
                    victim.process.kill()
                    victim.process.wait()
            pool.on_tick = kill
            results = pool.run(TICKS, STEPS, tick_targets("w"), return_state=True)
            self.assertEqual(pool.failed, [victim.rep])
            self.assertNotIn(victim.rep, pool.endpoints)
            for name in pool.world_names:
                self.assertEqual(results[name].step_count, TICKS * STEPS, name)
                self.assertNotEqual(pool.where(name), victim.rep)
            # The report: exactly the killed daemon's worlds, each from its last snapshot
            # (taken at tick 16, the last multiple of SNAPSHOT_EVERY before the kill).
            self.assertEqual({m.world for m in pool.moves}, victim_worlds)
            self.assertEqual(len(pool.moves), len(victim_worlds))
            for move in pool.moves:
                self.assertEqual(move.source, victim.rep)
                self.assertIn(move.destination, endpoints)
                self.assertNotEqual(move.destination, victim.rep)
                self.assertEqual(move.from_step, (KILL_AT - 1) // SNAPSHOT_EVERY
                                 * SNAPSHOT_EVERY * STEPS)
            # The moved worlds spread over the three others.
            self.assertEqual(len({m.destination for m in pool.moves}), DAEMONS - 1)
            final = {name: arm_of(results[name]) for name in pool.world_names}
        finally:
            pool.close()
        # The reference: the same worlds and targets on the surviving daemons, nothing killed.
        survivors = [e for e in endpoints if e != victim.rep]
        with Pool(survivors, WORLDS, snapshot_every=SNAPSHOT_EVERY, timeout_ms=60000,
                  prefix="r") as reference:
            expected = reference.run(TICKS, STEPS, tick_targets("r"), return_state=True)
            self.assertEqual(reference.moves, [])
        for w in range(WORLDS):
            self.assertEqual(final["w%d" % w], arm_of(expected["r%d" % w]), "world w%d" % w)

    def test_dynamics_edits_move_with_their_worlds(self):
        """Every world gets its own joint damping, friction and box mass through
        Pool.set_dynamics, some before its last snapshot and some after. Daemon 1 is killed
        between two ticks and the next edit of one of its worlds finds it gone (the worlds move
        from inside set_dynamics); daemon 2 is killed before a tick is sent (they move from
        inside the tick). Every world must end bitwise where a pool without kills, given the
        same edits at the same ticks, leaves it: a moved world that missed an edit, or got one
        at another tick, departs within a few steps."""
        endpoints = [d.rep for d in self.daemons]
        worlds, ticks, snapshot_every = 16, 24, 8

        def edit(pool, prefix, tick):
            for w in range(worlds):
                name = "%s%d" % (prefix, w)
                if tick == 3:  # before the snapshot of tick 8
                    pool.set_dynamics(name, bodies=[{"body": "box", "mass": 1.0 + 0.1 * w}],
                                      joints=[{"robot": "arm7", "joint": "joint2",
                                               "damping": 0.5 + 0.2 * w}])
                elif tick in (11, 17):  # after the snapshots of ticks 8 and 16
                    pool.set_dynamics(name, joints=[
                        {"robot": "arm7", "joint": "joint%d" % (1 + (w + tick) % 7),
                         "damping": 0.05 * w + 0.01 * tick, "friction": 0.02 * w}])

        def run(pool, prefix, kills):
            victims = {}
            targets = tick_targets(prefix)
            results = None
            for tick in range(1, ticks + 1):
                if tick in kills:
                    victim = kills[tick]
                    victims[tick] = {w for w in pool.world_names if pool.where(w) == victim.rep}
                    victim.process.kill()
                    victim.process.wait()
                edit(pool, prefix, tick)
                step_targets = targets(tick)
                results = pool.step(STEPS, {w: step_targets[w] for w in pool.world_names},
                                    return_state=True)
            return results, victims

        pool = Pool(endpoints, worlds, snapshot_every=snapshot_every, timeout_ms=60000,
                    prefix="d")
        try:
            # Daemon 1 dies after tick 10: the first edit of tick 11 to one of its worlds
            # finds it gone. Daemon 2 dies just before tick 19 is sent, with tick 17's edits
            # in its worlds' logs and those of ticks 3 and 11 before their snapshots.
            victims_of_2 = set()

            def kill_before_tick(tick):
                if tick == 19:
                    victims_of_2.update(w for w in pool.world_names
                                        if pool.where(w) == self.daemons[2].rep)
                    self.daemons[2].process.kill()
                    self.daemons[2].process.wait()
            pool.on_tick = kill_before_tick
            results, victims = run(pool, "d", {11: self.daemons[1]})
            self.assertEqual(pool.failed, [self.daemons[1].rep, self.daemons[2].rep])
            # Each world moved once per daemon that failed under it (those of daemon 1's
            # worlds that went to daemon 2 moved twice).
            moved = [m.world for m in pool.moves]
            self.assertEqual(len(moved), len(victims[11]) + len(victims_of_2))
            self.assertEqual(set(moved), victims[11] | victims_of_2)
            self.assertTrue(victims[11] and victims_of_2)
            for name in pool.world_names:
                self.assertEqual(results[name].step_count, ticks * STEPS, name)
            final = {name: arm_of(results[name]) for name in pool.world_names}
        finally:
            pool.close()
        survivors = [self.daemons[0].rep, self.daemons[3].rep]
        with Pool(survivors, worlds, snapshot_every=snapshot_every, timeout_ms=60000,
                  prefix="e") as reference:
            expected, _ = run(reference, "e", {})
            self.assertEqual(reference.moves, [])
        for w in range(worlds):
            self.assertEqual(final["d%d" % w], arm_of(expected["e%d" % w]), "world d%d" % w)

    def test_a_refused_edit_is_not_recorded(self):
        pool = Pool([self.daemons[0].rep, self.daemons[1].rep], 4, snapshot_every=100,
                    timeout_ms=20000, prefix="x")
        try:
            with self.assertRaises(LcpsimError) as caught:
                pool.set_dynamics("x1", joints=[{"robot": "arm7", "joint": "no_such_joint",
                                                 "damping": 1.0}])
            self.assertIn("no_such_joint", caught.exception.message)
            self.assertEqual(pool.log.get("x1", []), [])
            with self.assertRaises(KeyError):
                pool.set_dynamics("not_a_world", joints=[])
            pool.step(2)
            # The refused edit is not made again when its world moves.
            self.daemons[1].process.kill()
            self.daemons[1].process.wait()
            results = pool.step(2)
            self.assertEqual([m.world for m in pool.moves], ["x1", "x3"])
            self.assertEqual({r.step_count for r in results.values()}, {4})
        finally:
            pool.close()

    def test_a_daemon_that_stops_answering_times_out(self):
        # SIGSTOP: the connection stays up, the daemon answers nothing; the tick's timeout
        # takes it as failed.
        frozen = self.daemons[2]
        pool = Pool([self.daemons[0].rep, frozen.rep], 8, snapshot_every=2, timeout_ms=3000,
                    prefix="t")
        try:
            pool.run(3, 1)
            frozen.process.send_signal(signal.SIGSTOP)
            results = pool.run(2, 1)
            self.assertEqual(pool.failed, [frozen.rep])
            self.assertEqual(sorted(m.world for m in pool.moves), ["t1", "t3", "t5", "t7"])
            self.assertTrue(all(m.from_step == 2 for m in pool.moves))
            self.assertEqual({r.step_count for r in results.values()}, {5})
        finally:
            frozen.process.send_signal(signal.SIGCONT)
            pool.close()

    def test_all_daemons_gone_is_an_error(self):
        pool = Pool([self.daemons[0].rep], 4, timeout_ms=20000)
        try:
            pool.step(1)
            self.daemons[0].process.kill()
            self.daemons[0].process.wait()
            with self.assertRaises(PoolError):
                pool.step(1)
        finally:
            pool.close()


class ResolveTest(unittest.TestCase):
    """Endpoint resolution (no daemon)."""

    def test_names_resolve_to_every_address(self):
        self.assertIn("tcp://127.0.0.1:5555", resolve_endpoints("tcp://localhost:5555"))
        self.assertEqual(resolve_endpoints("tcp://10.1.2.3:7"), ["tcp://10.1.2.3:7"])
        if socket.has_ipv6:
            self.assertEqual(resolve_endpoints("tcp://[::1]:9"), ["tcp://[::1]:9"])
        self.assertEqual(resolve_endpoints(["tcp://10.0.0.1:1", "tcp://10.0.0.1:1",
                                            "ipc:///tmp/x"]),
                         ["tcp://10.0.0.1:1", "ipc:///tmp/x"])
        # Every A and AAAA record of a name, each once: localhost, the one name every machine
        # and container resolves (often to both 127.0.0.1 and ::1).
        host = "localhost"
        addresses = {a[4][0] for a in socket.getaddrinfo(host, 1, type=socket.SOCK_STREAM)}
        self.assertEqual(len(resolve_endpoints("tcp://%s:1" % host)), len(addresses))

    def test_a_pool_over_an_ipv6_endpoint(self):
        """A daemon bound to the IPv6 loopback, as a pod reached by its AAAA record: the pool's
        worlds are made and stepped there (the client's socket needs IPV6 before it connects)."""
        try:
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind(("::1", 0))
        except OSError:
            self.skipTest("no IPv6 loopback")
        daemon = LiveDaemon(["--bind", "tcp://[::1]:0", "--pub", "tcp://[::1]:0"])
        try:
            self.assertTrue(daemon.rep.startswith("tcp://[::1]:"), daemon.rep)
            pool = Pool([daemon.rep], 2, timeout_ms=20000, prefix="v6_")
            try:
                results = pool.step(3)
                self.assertEqual(sorted(results), ["v6_0", "v6_1"])
                for result in results.values():
                    self.assertEqual(result.step_count, 3)
            finally:
                pool.close()
        finally:
            daemon.stop()

    def test_no_daemon_at_all(self):
        refusing = RefusingEndpoint()
        try:
            with self.assertRaises(Exception):
                Pool([refusing.endpoint], 2, timeout_ms=300)
        finally:
            refusing.close()


if __name__ == "__main__":
    unittest.main()
