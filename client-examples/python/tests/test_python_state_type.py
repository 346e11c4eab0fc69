# SPDX-License-Identifier: Apache-2.0
"""The Python client's State type, name maps, sensors and cancellable steps against a live
lcpsimd (the built-in world: the arm 'arm7', a table and a box). Run with /usr/bin/python3, the
package lcpsim importable (see CMakeLists.txt)."""
import struct
import unittest

import lcpsim
from lcpsim import Client, State, target
from live_daemon import LiveDaemon

try:
    import numpy
except ImportError:
    numpy = None

# A fixed-base link with a frame 0.5 m above it on a fixed joint ('tip'): the link is at rest,
# so an IMU on it reads gravity's opposite, and 'tip' is kept as a named frame.
POST_URDF = ("<robot name='post'><link name='body'><inertial><mass value='2'/>"
             "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>"
             "</link><link name='tip'/><joint name='tip_mount' type='fixed'><parent link='body'/>"
             "<child link='tip'/><origin xyz='0 0 0.5'/></joint></robot>")
POST_BASE = (3.0, 0.0, 1.0)


def pack(values):
    return struct.pack("%dd" % len(values), *values)


class StateTypeTest(unittest.TestCase):
    def setUp(self):
        self.daemon = LiveDaemon()
        self.sim = Client(self.daemon.rep, timeout_ms=20000)

    def tearDown(self):
        lcpsim.use_numpy(True)
        self.sim.close()
        self.assertEqual(self.daemon.stop(), 0)

    def test_step_and_get_state_return_the_same_type_and_values(self):
        stepped = self.sim.step(3, return_state=True)
        got = self.sim.get_state()
        self.assertIs(type(stepped), State)
        self.assertIs(type(got), State)
        self.assertEqual(stepped.message, got.message)
        self.assertEqual((stepped.time, stepped.step_count), (got.time, got.step_count))
        self.assertEqual(stepped.steps_run, 3)
        self.assertFalse(stepped.cancelled)
        self.assertIs(stepped.state, stepped)  # code written for the old StepReply still works
        # Robots and bodies by name and by position.
        self.assertIs(type(got.robots["arm7"]), lcpsim.RobotState)
        self.assertEqual(got.robots["arm7"].message, got.robots[0].message)
        self.assertIn("box", got.bodies.keys())
        self.assertEqual(pack(got.bodies["box"].pose.position),
                         pack([got.message.bodies[got.bodies.index("box")].pose.position.x,
                               got.message.bodies[got.bodies.index("box")].pose.position.y,
                               got.message.bodies[got.bodies.index("box")].pose.position.z]))
        with self.assertRaises(KeyError):
            got.robots["no_such_robot"]

    @unittest.skipIf(numpy is None, "numpy is not installed")
    def test_arrays_are_numpy_arrays(self):
        self.assertTrue(lcpsim.numpy_in_use())
        state = self.sim.step(1, return_state=True)
        arm = state.robots["arm7"]
        for values, length in [(arm.q, 7), (arm.qd, 7), (arm.applied_torque, 7),
                               (arm.base_pose.position, 3), (arm.base_pose.orientation, 4),
                               (arm.link_poses[0].position, 3)]:
            self.assertIsInstance(values, numpy.ndarray)
            self.assertEqual(values.dtype, numpy.float64)
            self.assertEqual(values.shape, (length,))
        self.assertEqual(pack(arm.q), pack(arm.message.q))
        position = state.bodies["box"].pose.position
        self.assertEqual(position.z, position[2])

    def test_without_numpy_arrays_are_tuples_with_the_same_values(self):
        with_numpy = self.sim.step(1, return_state=True)
        self.assertFalse(lcpsim.use_numpy(False))
        state = self.sim.get_state()
        arm = state.robots["arm7"]
        self.assertIsInstance(arm.q, tuple)
        self.assertIsInstance(arm.link_poses[2].position, tuple)
        self.assertEqual(pack(arm.q), pack(with_numpy.robots["arm7"].q))
        self.assertEqual(pack(arm.applied_torque), pack(with_numpy.robots["arm7"].applied_torque))
        position = state.bodies["box"].pose.position
        self.assertEqual((position.x, position.y, position.z), tuple(position))
        self.assertEqual(len(state.bodies["box"].pose.orientation), 4)

    def test_name_maps(self):
        info = self.sim.get_info()
        arm_info = next(r for r in info.robots if r.name == "arm7")
        names = self.sim.names("arm7")
        self.assertEqual(names.joints, {j.name: j.index for j in arm_info.joints})
        self.assertEqual(names.links, {name: i for i, name in enumerate(arm_info.links)})
        self.assertEqual(names.q_index, names.joints)  # a fixed base: q is the joints
        # SetRobotState by name, read back by name.
        self.sim.set_robot_state("arm7", q={"joint2": 0.4}, qd={"joint2": 0.25, "joint4": -0.1})
        arm = self.sim.get_state().robots["arm7"]
        self.assertEqual(arm.position("joint2"), 0.4)
        self.assertEqual(arm.velocity("joint2"), 0.25)
        self.assertEqual(arm.velocity("joint4"), -0.1)
        self.sim.set_robot_state("arm7", joints={"joint5": (0.2, 0.3)}, qd={"joint5": -0.5})
        arm5 = self.sim.get_state().robots["arm7"]
        self.assertEqual((arm5.position("joint5"), arm5.velocity("joint5")), (0.2, -0.5))
        self.assertEqual(arm.q[names.q_index["joint2"]], 0.4)
        last_link = arm_info.links[-1]
        self.assertEqual(pack(arm.link_poses[last_link].position),
                         pack(arm.link_poses[len(arm_info.links) - 1].position))
        # A target given as a dict addresses those joints by name; the torque it produced is
        # read back by joint name.
        request = target("arm7", mode="torque", torque={"joint1": 1.5, "joint3": -2.0})
        self.assertEqual(list(request.joints), ["joint1", "joint3"])
        self.assertEqual(list(request.torque), [1.5, -2.0])
        arm = self.sim.step(1, targets=[request], return_state=True).robots["arm7"]
        self.assertEqual(arm.torque("joint1"), 1.5)
        self.assertEqual(arm.torque("joint3"), -2.0)
        with self.assertRaises(ValueError):
            target("arm7", position={"joint1": 0.0}, kp={"joint2": 10.0})

    def test_frames_by_name(self):
        self.sim.get_state()  # this client now knows the robots there are
        # Loaded by another client: this one learns the robot's names when it first sees it.
        with Client(self.daemon.rep, timeout_ms=20000) as other:
            other.load_model(urdf_text=POST_URDF, base="fixed", base_position=POST_BASE)
        names = self.sim.names("post")
        self.assertEqual(names.frames, {"tip": 0})
        post = self.sim.get_state().robots["post"]
        self.assertEqual(post.frame_poses.keys(), ["tip"])
        tip = post.frame_poses["tip"].position
        for got, want in zip(tip, (POST_BASE[0], POST_BASE[1], POST_BASE[2] + 0.5)):
            self.assertAlmostEqual(got, want, delta=1e-12)

    def test_imu_at_rest_reads_plus_g_up(self):
        g = self.sim.get_info().settings.gravity
        self.sim.load_model(urdf_text=POST_URDF, base="fixed", base_position=POST_BASE)
        self.sim.add_imu("post_imu", "post", "body")
        # Without sensors asked for, no readings come.
        self.assertEqual(len(self.sim.step(1, return_state=True).robots["post"].imus), 0)
        for state in (self.sim.step(2, sensors={"imus", "energy"}),
                      self.sim.get_state(sensors=["imus"])):
            imu = state.robots["post"].imus["post_imu"]
            self.assertEqual(imu.link, "body")
            for got, want in zip(imu.specific_force, (-g.x, -g.y, -g.z)):
                self.assertAlmostEqual(got, want, delta=1e-6)
            self.assertAlmostEqual(imu.specific_force[2], 9.81, delta=1e-6)
            for rate in imu.angular_rate:
                self.assertAlmostEqual(rate, 0.0, delta=1e-6)
        # "all" asks for every group; solver statistics come with it.
        state = self.sim.get_state(sensors="all")
        self.assertEqual(len(state.robots["post"].imus), 1)
        self.assertGreater(state.solver_stats.iterations, 0)
        with self.assertRaises(ValueError):
            self.sim.get_state(sensors={"imu"})  # a misspelt group

    def test_cancel_a_long_step(self):
        before = self.sim.get_state().step_count
        requested = 20000000
        handle = self.sim.step_async(requested, return_state=True)
        # Ping is answered while the Step runs; once it is, the Step has started.
        self.assertEqual(self.sim.ping(b"meanwhile").payload, b"meanwhile")
        self.assertFalse(handle.done())
        with self.assertRaises(lcpsim.LcpsimTimeout):
            handle.result(timeout_ms=0)  # still running; the handle stays usable
        cancel = handle.cancel()
        self.assertTrue(cancel.cancelled)
        self.assertEqual(cancel.step_id, handle.id)
        self.assertEqual(cancel.steps_requested, requested)
        state = handle.result(timeout_ms=60000)
        self.assertIs(type(state), State)
        self.assertTrue(state.cancelled)
        self.assertEqual(state.steps_run, cancel.steps_run)
        self.assertLess(state.steps_run, requested)
        self.assertEqual(state.step_count - before, state.steps_run)
        self.assertEqual(state.robots["arm7"].message, self.sim.get_state().robots["arm7"].message)
        # Nothing runs now: a second cancel finds no Step.
        self.assertFalse(self.sim.cancel_step().cancelled)


if __name__ == "__main__":
    unittest.main()
