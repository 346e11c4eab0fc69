# SPDX-License-Identifier: Apache-2.0
"""Worlds and BatchStep through the Python client against a live lcpsimd (the built-in world:
the arm 'arm7', a table and a box): client.world(name) views, CreateWorld / DestroyWorld /
ListWorlds, Client.batch_step with numpy arrays against the same calls made one world at a
time, per-world failures, a world's state stream and the daemon's world limit. Run with
/usr/bin/python3, the package lcpsim importable (see CMakeLists.txt)."""
import math
import unittest

import numpy as np

from lcpsim import (BatchStepError, Client, LcpsimError, Subscriber, find_robot, pb, robot_state,
                    target, world_step)
from live_daemon import LiveDaemon

JOINTS = 7


def sine_targets(count, tick):
    """Position targets (count, 7) that differ per world and per tick."""
    i = np.arange(count)[:, None]
    j = np.arange(JOINTS)[None, :]
    return 0.4 * np.sin(0.05 * tick + 0.3 * i + 0.7 * j)


class WorldsTest(unittest.TestCase):
    def setUp(self):
        self.daemon = LiveDaemon(["--workers", "2", "--max-worlds", "16"])
        self.sim = Client(self.daemon.rep, timeout_ms=30000)

    def tearDown(self):
        self.sim.close()
        self.assertEqual(self.daemon.stop(), 0)

    def test_views_address_their_world_only(self):
        info = self.sim.create_world("w1", copy_of="default")
        self.assertEqual(info.name, "w1")
        self.assertEqual(info.robot_count, 1)
        self.assertEqual(info.step_count, 0)
        w1 = self.sim.world("w1")
        self.assertEqual(w1.world_name, "w1")
        state = w1.step(25, return_state=True)
        self.assertEqual(state.step_count, 25)
        # The default world did not move; the view's calls went to w1 only.
        self.assertEqual(self.sim.get_state().step_count, 0)
        self.assertEqual(self.sim.world("default").get_state().step_count, 0)
        self.assertEqual(w1.get_state().step_count, 25)
        names = [w.name for w in self.sim.list_worlds().worlds]
        self.assertEqual(names[0], "default")
        self.assertIn("w1", names)
        # Closing a view leaves the connection open.
        w1.close()
        self.assertEqual(self.sim.ping().payload, b"lcpsim")
        self.sim.destroy_world("w1")
        with self.assertRaises(LcpsimError) as caught:
            self.sim.world("w1").get_state()
        self.assertEqual(caught.exception.code, pb.Status.NOT_FOUND)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.destroy_world("default")
        self.assertEqual(caught.exception.code, pb.Status.FAILED_PRECONDITION)

    def test_copy_state_and_snapshot_step_bitwise_alike(self):
        self.sim.step(40, targets=[target("arm7", mode="position", position=0.3, kp=100.0,
                                                kd=10.0)])
        saved = self.sim.save_state()
        self.sim.create_world("copy", copy_of="default", copy_state=True)
        self.sim.create_world("moved", copy_of="default", snapshot=saved.snapshot)
        hold = [target("arm7", mode="position", position=-0.2, kp=200.0, kd=10.0)]
        finals = [self.sim.world(name).step(60, targets=hold, return_state=True)
                  for name in ("default", "copy", "moved")]
        for final in finals[1:]:
            self.assertEqual(final.step_count, 100)
            self.assertEqual(find_robot(final, "arm7").q.tobytes(),
                             find_robot(finals[0], "arm7").q.tobytes())

    def test_batch_step_equals_one_world_at_a_time(self):
        count, ticks = 6, 30
        batched = ["b%d" % i for i in range(count)]
        single = ["s%d" % i for i in range(count)]
        for name in batched + single:
            self.sim.create_world(name, copy_of="default")
        for tick in range(ticks):
            positions = sine_targets(count, tick)
            result = self.sim.batch_step(batched, steps=3, robot="arm7", mode="position",
                                         position=positions, kp=150.0, kd=12.0,
                                         gravity_compensation=True, links=["link7"])
            for i, name in enumerate(single):
                state = self.sim.world(name).step(
                    3, targets=[target("arm7", mode="position", position=positions[i].tolist(),
                                       kp=150.0, kd=12.0, gravity_compensation=True)],
                    return_state=True)
                arm = find_robot(state, "arm7")
                self.assertEqual(result.q[i].tobytes(), arm.q.tobytes(), (tick, i))
                self.assertEqual(result.qd[i].tobytes(), arm.qd.tobytes(), (tick, i))
                self.assertEqual(result.time[i], state.time)
                link = arm.link_poses[len(arm.link_poses) - 1]
                self.assertEqual(result.link_positions[i, 0].tobytes(),
                                 np.array(link.position).tobytes())
        self.assertEqual(result.q.shape, (count, JOINTS))
        self.assertTrue(result.ok.all())
        self.assertEqual(list(result.step_count), [3 * ticks] * count)
        self.assertEqual(list(result.steps_run), [3] * count)
        # Worlds that got different targets moved differently.
        self.assertGreater(np.abs(result.q[0] - result.q[1]).max(), 1e-3)

    def test_resets_in_a_batch_equal_restore_then_set_state(self):
        self.sim.create_world("a", copy_of="default")
        self.sim.create_world("b", copy_of="default")
        start = self.sim.world("a").save_state(slot="start").snapshot
        self.sim.world("b").save_state(slot="start")
        self.sim.batch_step(["a", "b"], steps=50, robot="arm7", mode="position", position=0.5,
                            kp=100.0, kd=10.0)
        q0 = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7]
        reset = robot_state("arm7", q=q0, qd=[0.0] * JOINTS)
        result = self.sim.batch_step(["a", "b"], steps=[0, 10], restore=["start", "start"],
                                     robot_states=[[reset], [reset]])
        self.assertEqual(list(result.step_count), [0, 10])
        self.assertEqual(result.q[0].tolist(), q0)
        self.assertEqual(result.qd[0].tolist(), [0.0] * JOINTS)
        # The same in separate calls on a third world.
        self.sim.create_world("c", copy_of="default")
        c = self.sim.world("c")
        c.step(50, targets=[target("arm7", mode="position", position=0.5, kp=100.0, kd=10.0)])
        c.restore_state(snapshot=start)
        c.set_robot_state("arm7", q=q0, qd=[0.0] * JOINTS)
        arm = find_robot(c.step(10, return_state=True), "arm7")
        self.assertEqual(result.q[1].tobytes(), arm.q.tobytes())

    def test_failures_are_per_world(self):
        self.sim.create_world("ok", copy_of="default")
        steps = [world_step("ok", 5), world_step("missing", 5),
                 world_step("ok2", 1, targets=[target("arm7", position=[0.0] * 3)])]
        self.sim.create_world("ok2", copy_of="default")
        results = self.sim.batch(steps, return_state=True)
        self.assertEqual([r.world for r in results], ["ok", "missing", "ok2"])
        self.assertEqual(results[0].status.code, pb.Status.OK)
        self.assertEqual(results[0].step_count, 5)
        self.assertEqual(results[1].status.code, pb.Status.NOT_FOUND)
        self.assertNotEqual(results[2].status.code, pb.Status.OK)  # 3 positions for 7 joints
        # Left unchanged.
        self.assertEqual(self.sim.world("ok2").get_state().step_count, 0)
        with self.assertRaises(BatchStepError) as caught:
            self.sim.batch_step(["ok", "missing"], steps=1)
        self.assertEqual([f[1] for f in caught.exception.failed], ["missing"])
        result = self.sim.batch_step(["ok", "missing"], steps=1, check=False)
        self.assertEqual(result.ok.tolist(), [True, False])
        self.assertTrue(math.isnan(result.q[1, 0]))
        # A world named twice refuses the whole request.
        with self.assertRaises(LcpsimError) as caught:
            self.sim.batch([world_step("ok", 1), world_step("ok", 1)])
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)

    def test_world_state_stream(self):
        self.sim.create_world("streamed", copy_of="default")
        view = self.sim.world("streamed")
        with Subscriber(self.daemon.pub, world="streamed") as stream, \
                Subscriber(self.daemon.pub) as default_stream:
            view.subscribe(1)
            # A subscription's first states may be lost while it connects: step until one comes.
            state = None
            for _ in range(200):
                view.step(1)
                try:
                    state = stream.receive(timeout_ms=50)
                    break
                except LcpsimError:
                    continue
            self.assertIsNotNone(state)
            self.assertEqual(state.message.world, "streamed")
            with self.assertRaises(LcpsimError):
                default_stream.receive(timeout_ms=200)  # the default world publishes nothing

    def test_world_limit(self):
        limit = self.sim.list_worlds().max_worlds
        self.assertEqual(limit, 16)
        for i in range(limit - 1):
            self.sim.create_world("x%d" % i, copy_of="default")
        with self.assertRaises(LcpsimError) as caught:
            self.sim.create_world("one-too-many", copy_of="default")
        self.assertEqual(caught.exception.code, pb.Status.RESOURCE_EXHAUSTED)
        self.assertEqual(len(self.sim.list_worlds().worlds), limit)
        self.sim.destroy_world("x0")
        self.sim.create_world("one-too-many", copy_of="default")


if __name__ == "__main__":
    unittest.main()
