# SPDX-License-Identifier: Apache-2.0
"""The Python client against a live lcpsimd (each test starts its own), and against a fake
daemon for late and wrong replies. Run with /usr/bin/python3, the package lcpsim importable
(installed, or PYTHONPATH holding client-examples/python), LCPSIMD the daemon's path."""

import math
import os
import struct
import threading
import time
import unittest

import zmq

from lcpsim import (Client, LcpsimError, LcpsimProtocolError, LcpsimTimeout, Subscriber, find_robot,
                    pb, target)
from live_daemon import LiveDaemon, RefusingEndpoint

ARM = "arm7"
ARM_JOINTS = ["joint%d" % i for i in range(1, 8)]
ARM7_URDF = os.path.join(os.path.dirname(__file__), "..", "..", "..", "server", "model", "robots",
                         "arm7.urdf")
# Gains that damp the shoulder well (about 6 kg·m² of arm above it: ζ ≈ 0.8), so that the arm
# settles within a few seconds.
KP, KD = 100.0, 40.0
SETTLE_SECONDS = 5.0


def hold_arm(position):
    return target(ARM, mode="position", position=position, kp=KP, kd=KD,
                  gravity_compensation=True)


class LiveTest(unittest.TestCase):
    def setUp(self):
        self.daemon = LiveDaemon()
        self.sim = Client(self.daemon.rep, timeout_ms=20000)
        self.timestep = self.sim.get_info().settings.timestep

    def tearDown(self):
        self.sim.close()
        # The daemon shuts down cleanly on SIGTERM.
        self.assertEqual(self.daemon.stop(), 0)

    def steps_for(self, seconds):
        return round(seconds / self.timestep)

    def arm(self, state):
        arm = find_robot(state, ARM)
        self.assertIsNotNone(arm)
        self.assertEqual(len(arm.q), 7)
        return arm

    def test_ping_echoes_and_names_the_version(self):
        reply = self.sim.ping(b"\x00echo\xff")
        self.assertEqual(reply.payload, b"\x00echo\xff")
        self.assertTrue(reply.server_version)

    def test_get_info_describes_the_arm(self):
        info = self.sim.get_info()
        arm = find_robot(info, ARM)
        self.assertFalse(arm.floating_base)
        self.assertEqual([joint.name for joint in arm.joints], ARM_JOINTS)
        self.assertEqual([joint.index for joint in arm.joints], list(range(7)))
        for i, joint in enumerate(arm.joints):
            self.assertEqual(joint.type, pb.JointInfo.REVOLUTE)
            degrees = 175.0 if i == 6 else 170.0 if i % 2 == 0 else 120.0
            self.assertAlmostEqual(joint.upper, math.radians(degrees), delta=1e-12)
            self.assertAlmostEqual(joint.effort_limit, 100.0, delta=1e-12)
        self.assertAlmostEqual(info.settings.gravity.z, -9.81, delta=1e-12)
        self.assertGreater(info.settings.timestep, 0.0)

    def test_step_with_targets_settles_on_the_pose(self):
        pose = [0.3, -0.2, 0.1, 0.4, 0.0, -0.3, 0.2]
        before = self.sim.get_state()
        reply = self.sim.step(self.steps_for(SETTLE_SECONDS), targets=[hold_arm(pose)], return_state=True)
        self.assertEqual(reply.step_count, before.step_count + self.steps_for(SETTLE_SECONDS))
        self.assertAlmostEqual(reply.state.time, reply.time, delta=0.0)
        arm = self.arm(reply.state)
        for q, qd, goal in zip(arm.q, arm.qd, pose):
            self.assertAlmostEqual(q, goal, delta=0.01)
            self.assertAlmostEqual(qd, 0.0, delta=0.01)
        # Without return_state the State has no robots or bodies, but the time comes back.
        reply = self.sim.step(2)
        self.assertEqual((len(reply.robots), len(reply.bodies)), (0, 0))
        self.assertAlmostEqual(reply.time, before.time + (self.steps_for(SETTLE_SECONDS) + 2) * self.timestep,
                               delta=1e-9)

    def test_set_target_by_name_and_index(self):
        self.sim.set_target(ARM, joints=[n for n in ARM_JOINTS if n != "joint2"], mode="position",
                            position=0.0, kp=KP, kd=KD, gravity_compensation=True)
        self.sim.set_target(ARM, indices=[1], mode="position", position=[0.25], kp=[KP], kd=[KD])
        arm = self.arm(self.sim.step(self.steps_for(SETTLE_SECONDS), return_state=True).state)
        for i, q in enumerate(arm.q):
            self.assertAlmostEqual(q, 0.25 if i == 1 else 0.0, delta=0.01)

    def test_contacts_only_when_asked(self):
        self.sim.step(self.steps_for(0.5))
        self.assertGreater(len(self.sim.get_state(include_contacts=True).contacts), 0)
        self.assertEqual(len(self.sim.get_state().contacts), 0)
        stepped = self.sim.step(1, return_state=True, include_contacts=True).state
        self.assertGreater(len(stepped.contacts), 0)

    def test_load_model_spawn_remove(self):
        with open(ARM7_URDF) as urdf:
            robot = self.sim.load_model(urdf_text=urdf.read(), name="second_arm",
                                        base_position=(1.0, 0.0, 0.1), base="fixed")
        self.assertEqual(robot.name, "second_arm")
        self.assertEqual(len(robot.joints), 7)
        # By name: below the daemon's model root, the shipped robots.
        self.sim.load_model(urdf_path="arm7.urdf", name="third_arm",
                            base_position=(-1.0, 0.0, 0.1))
        names = [robot.name for robot in self.sim.get_info().robots]
        self.assertEqual(sorted(names), sorted([ARM, "second_arm", "third_arm"]))

        spawned = self.sim.spawn("sphere", name="ball", radius=0.1, mass=1.0,
                                 position=(20.0, 20.0, 10.0))
        self.assertEqual(spawned.name, "ball")
        start = self.sim.get_state().time
        state = self.sim.step(self.steps_for(0.5), return_state=True).state
        ball = next(body for body in state.bodies if body.name == "ball")
        self.assertEqual(ball.id, spawned.id)
        t = state.time - start
        # Semi-implicit Euler falls a little further than ½ g t² (by ½ g h t).
        self.assertAlmostEqual(ball.pose.position.z, 10.0 - 0.5 * 9.81 * t * t,
                               delta=9.81 * self.timestep * t)
        self.sim.remove("ball")
        self.assertNotIn("ball", [body.name for body in self.sim.get_state().bodies])
        with self.assertRaises(LcpsimError) as caught:
            self.sim.remove("ball")
        self.assertEqual(caught.exception.code, pb.Status.NOT_FOUND)
        self.assertIn("ball", caught.exception.message)

    def test_reset(self):
        start = self.sim.get_state()
        self.sim.spawn("box", name="crate", half_extents=(0.1, 0.1, 0.1), mass=1.0,
                       position=(5.0, 5.0, 1.0))
        self.sim.step(50)
        self.sim.reset()
        now = self.sim.get_state()
        self.assertEqual(now.step_count, start.step_count)
        self.assertNotIn("crate", [body.name for body in now.bodies])
        self.assertEqual(list(self.arm(now).q), list(self.arm(start).q))

    def test_save_and_restore_replays_bitwise(self):
        pose = [0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5]
        self.sim.step(20, targets=[hold_arm(pose)])
        saved = self.sim.save_state(slot="home")
        self.assertGreater(len(saved.snapshot), 0)
        first = self.sim.step(100, targets=[hold_arm(pose)], return_state=True).state
        self.assertEqual(self.sim.restore_state(snapshot=saved.snapshot), saved.time)
        again = self.sim.step(100, targets=[hold_arm(pose)], return_state=True).state
        # A snapshot is the whole state: the replay is bitwise the same.
        pack = lambda values: struct.pack("%dd" % len(values), *values)  # noqa: E731
        self.assertEqual(pack(self.arm(again).q), pack(self.arm(first).q))
        self.assertEqual(pack(self.arm(again).qd), pack(self.arm(first).qd))
        self.assertEqual(self.sim.restore_state(slot="home"), saved.time)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.restore_state(slot="no such slot")
        self.assertEqual(caught.exception.code, pb.Status.NOT_FOUND)

    def test_set_settings(self):
        omega = self.sim.get_info().settings.sor_omega
        settings = self.sim.set_settings(timestep=0.002, iterations=37, gravity=(0, 0, -1.62))
        self.assertEqual(settings.timestep, 0.002)
        self.assertEqual(settings.iterations, 37)
        self.assertEqual(settings.gravity.z, -1.62)
        self.assertEqual(settings.sor_omega, omega)
        before = self.sim.get_state().time
        self.assertAlmostEqual(self.sim.step(3).time - before, 0.006, delta=1e-12)
        settings = self.sim.set_settings(sor_omega=1.3, friction_model="box")
        self.assertEqual(settings.sor_omega, 1.3)
        self.assertEqual(settings.friction_model, pb.Settings.FRICTION_BOX)
        self.assertEqual(settings.iterations, 37)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_settings(timestep=-1.0)
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)

    def test_contact_settings(self):
        settings = self.sim.get_info().settings
        self.assertEqual(settings.max_push_speed, 3.0)
        self.assertEqual(settings.relax_iterations, 4)
        self.assertEqual(settings.restitution_threshold, 1.0)
        self.assertTrue(settings.enforce_velocity_limits)
        settings = self.sim.set_settings(max_push_speed=0.5, relax_iterations=2,
                                         restitution_threshold=0.3, enforce_velocity_limits=False)
        self.assertEqual(settings.max_push_speed, 0.5)
        self.assertEqual(settings.relax_iterations, 2)
        self.assertEqual(settings.restitution_threshold, 0.3)
        self.assertFalse(settings.enforce_velocity_limits)
        # Not named: unchanged (not zero, not false).
        settings = self.sim.set_settings(iterations=25)
        self.assertEqual(settings.max_push_speed, 0.5)
        self.assertFalse(settings.enforce_velocity_limits)
        settings = self.sim.set_settings(enforce_velocity_limits=True)
        self.assertTrue(settings.enforce_velocity_limits)
        self.assertEqual(settings.relax_iterations, 2)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_settings(max_push_speed=-1.0)
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
        self.assertIn("max_push_speed", caught.exception.message)

    def test_spawn_restitution(self):
        # A ball of radius 0.1 m dropped 1 m with e = 0.5 rises to e² h = 0.25 m (within 5 %),
        # one with e = 0 does not rise.
        drop, radius, e = 1.0, 0.1, 0.5
        self.sim.spawn("sphere", name="bouncy", radius=radius, mass=1.0,
                       position=(-1.0, -0.5, radius + drop), restitution=e)
        self.sim.spawn("sphere", name="dull", radius=radius, mass=1.0,
                       position=(-1.0, 0.5, radius + drop))
        heights = {"bouncy": [], "dull": []}
        for _ in range(self.steps_for(1.5)):
            state = self.sim.step(1, return_state=True).state
            for body in state.bodies:
                if body.name in heights:
                    heights[body.name].append(body.pose.position.z)

        def rebound(z):
            # The highest point once the ball first rises; none: it never left the ground.
            rising = [i for i in range(1, len(z)) if z[i] > z[i - 1] + 1e-9]
            return max(z[rising[0]:]) - radius if rising else 0.0

        self.assertAlmostEqual(rebound(heights["bouncy"]), e * e * drop, delta=0.05 * e * e * drop)
        self.assertLess(rebound(heights["dull"]), 0.001)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.spawn("sphere", name="over", radius=radius, mass=1.0, restitution=1.5)
        self.assertIn("spawn.restitution", caught.exception.message)

    def test_realtime_mode_steps_on_its_own(self):
        settings = self.sim.set_settings(mode="realtime", rate=1.0)
        self.assertEqual(settings.mode, pb.Settings.MODE_REALTIME)
        # How far the world moves in 300 ms depends on the machine; that it moves does not.
        time.sleep(0.3)
        self.assertGreater(self.sim.get_state().step_count, 0)
        self.sim.set_settings(mode="lockstep")
        stopped = self.sim.get_state().step_count
        time.sleep(0.3)
        self.assertEqual(self.sim.get_state().step_count, stopped)

    def test_subscribe_streams_every_kth_state(self):
        with Subscriber(self.daemon.pub) as stream:
            self.sim.subscribe(2)
            # A subscription takes effect once its connection is up: step until a state comes.
            first = None
            for _ in range(200):
                self.sim.step(2)
                try:
                    first = stream.receive(timeout_ms=50)
                    break
                except LcpsimTimeout:
                    pass
            self.assertIsNotNone(first)
            last = first
            while True:
                try:
                    last = stream.receive(timeout_ms=100)
                except LcpsimTimeout:
                    break
            self.sim.step(6)
            for i in range(1, 4):
                published = stream.receive(timeout_ms=5000)
                self.assertEqual(published.sequence, last.sequence + i)
                self.assertEqual(published.step_count, last.step_count + 2 * i)
            self.sim.subscribe(0)
            self.sim.step(6)
            with self.assertRaises(LcpsimTimeout):
                stream.receive(timeout_ms=300)
            # Readings on the stream: the same as a GetState asking for them at that step.
            self.sim.subscribe(1, sensors={"energy"})
            self.sim.step(1)
            published = stream.receive(timeout_ms=5000).message
            asked = self.sim.get_state(sensors="energy").message
            self.assertEqual(published.step_count, asked.step_count)
            self.assertTrue(published.robots[0].HasField("energy"))
            self.assertEqual(published.robots[0].energy, asked.robots[0].energy)
            self.sim.subscribe(0)

    def test_server_errors_carry_code_and_message(self):
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_target("no_such_robot", position=1.0)
        self.assertEqual(caught.exception.code, pb.Status.NOT_FOUND)
        self.assertIn("no_such_robot", caught.exception.message)
        self.assertIn("NOT_FOUND", str(caught.exception))
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_target(ARM, position=float("nan"))
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
        before = self.sim.get_state().step_count
        with self.assertRaises(LcpsimError) as caught:
            self.sim.step(5, targets=[hold_arm([0.0] * 7), target("no_such_robot", position=1.0)])
        self.assertEqual(caught.exception.code, pb.Status.NOT_FOUND)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.step(-1)
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
        self.assertEqual(self.sim.get_state().step_count, before)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.load_model(urdf_text="<robot name='broken'><link name='a'></robot")
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
        self.sim.ping()  # still usable


class FakeDaemon(threading.Thread):
    """A ROUTER that holds the first request and answers it just before the second, or answers
    the first with `first_reply(request)` when given."""

    def __init__(self, first_reply=None):
        super().__init__(daemon=True)
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.ROUTER)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVTIMEO, 10000)
        self.socket.bind("tcp://127.0.0.1:*")
        self.endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self.first_reply = first_reply
        self.start()

    def receive(self):
        identity, _, payload = self.socket.recv_multipart()
        request = pb.Request()
        request.ParseFromString(payload)
        return identity, request

    def answer(self, identity, reply):
        self.socket.send_multipart([identity, b"", reply.SerializeToString()])

    @staticmethod
    def pong(request):
        reply = pb.Reply(id=request.id)
        reply.ping.payload = request.ping.payload
        reply.ping.server_version = "fake"
        return reply

    def run(self):
        try:
            identity, first = self.receive()
            if self.first_reply:
                self.answer(identity, self.first_reply(first))
                return
            identity, second = self.receive()
            self.answer(identity, self.pong(first))
            self.answer(identity, self.pong(second))
        except zmq.Again:
            pass

    def stop(self):
        """After the client has read its replies: a connection closed earlier would take unread
        replies with it (the client's socket is ZMQ_IMMEDIATE)."""
        self.join()
        self.socket.close()
        self.context.term()


class TransportTest(unittest.TestCase):
    def test_a_silent_endpoint_times_out(self):
        nothing = RefusingEndpoint()
        with Client(nothing.endpoint, timeout_ms=300) as sim:
            started = time.monotonic()
            with self.assertRaises(LcpsimTimeout) as caught:
                sim.ping()
            self.assertLess(time.monotonic() - started, 30.0)  # an error, not a hang
            self.assertIsNone(caught.exception.code)
            self.assertIsInstance(caught.exception, TimeoutError)
        nothing.close()

    def test_a_malformed_endpoint_is_refused(self):
        with self.assertRaises(zmq.ZMQError):
            Client("not an endpoint")
        with self.assertRaises(zmq.ZMQError):
            Subscriber("not an endpoint")

    def test_a_late_reply_is_discarded(self):
        fake = FakeDaemon()
        with Client(fake.endpoint, timeout_ms=300) as sim:
            with self.assertRaises(LcpsimTimeout):
                sim.ping(b"first")
            sim.timeout_ms = 10000
            # The first ping's reply arrives first now; the second takes its own.
            self.assertEqual(sim.ping(b"second").payload, b"second")
        fake.stop()

    def test_a_reply_to_another_call_is_a_protocol_error(self):
        def wrong(request):
            reply = pb.Reply(id=request.id)
            reply.get_info.server_version = "fake"
            return reply
        fake = FakeDaemon(wrong)
        with Client(fake.endpoint, timeout_ms=10000) as sim:
            with self.assertRaises(LcpsimProtocolError):
                sim.ping()
        fake.stop()

    def test_an_unknown_status_code_is_still_an_error(self):
        def newer(request):
            reply = pb.Reply(id=request.id)
            reply.status.code = 42
            reply.status.message = "a code from a newer server"
            return reply
        fake = FakeDaemon(newer)
        with Client(fake.endpoint, timeout_ms=10000) as sim:
            with self.assertRaises(LcpsimError) as caught:
                sim.ping()
        self.assertEqual(caught.exception.code, 42)
        self.assertEqual(str(caught.exception), "CODE_42: a code from a newer server")
        fake.stop()

    def test_an_answer_with_id_0_is_this_requests_error(self):
        def undecoded(request):
            reply = pb.Reply(id=0)
            reply.status.code = pb.Status.INVALID_ARGUMENT
            reply.status.message = "request: not a Request"
            return reply
        fake = FakeDaemon(undecoded)
        with Client(fake.endpoint, timeout_ms=10000) as sim:
            with self.assertRaises(LcpsimError) as caught:
                sim.ping()
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
        self.assertEqual(caught.exception.message, "request: not a Request")
        fake.stop()


if __name__ == "__main__":
    unittest.main()
