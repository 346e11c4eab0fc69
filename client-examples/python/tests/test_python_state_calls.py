"""SetRobotState, SetBodyState, ApplyWrench and SetDynamics through the Python client against a
live lcpsimd (the built-in world: the arm 'arm7', a table and a box). Run with /usr/bin/python3,
the package lcpsim importable (see CMakeLists.txt)."""
import struct
import unittest

from lcpsim import Client, LcpsimError, find_robot, pb
from live_daemon import LiveDaemon

PUCK_URDF = ("<robot name='puck'><link name='body'><inertial><mass value='2'/>"
             "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>"
             "</link></robot>")


def pack(values):
    return struct.pack("%dd" % len(values), *values)


class StateCallsTest(unittest.TestCase):
    def setUp(self):
        self.daemon = LiveDaemon()
        self.sim = Client(self.daemon.rep, timeout_ms=20000)
        self.h = self.sim.get_info().settings.timestep

    def tearDown(self):
        self.sim.close()
        self.assertEqual(self.daemon.stop(), 0)

    def test_set_robot_state_by_name_and_vector(self):
        self.sim.set_robot_state("arm7", joints={"joint2": 0.4, "joint4": (-0.3, 0.1)})
        arm = find_robot(self.sim.get_state(), "arm7")
        self.assertEqual(arm.q[1], 0.4)
        self.assertEqual(arm.q[3], -0.3)
        self.assertEqual(arm.qd[3], 0.1)
        self.sim.set_robot_state("arm7", q=[0.1] * 7, qd=[0.0] * 7)
        self.assertEqual(list(find_robot(self.sim.get_state(), "arm7").q), [0.1] * 7)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_robot_state("arm7", q=[0.0] * 6)
        self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
        self.assertIn("set_robot_state.q has 6 values", caught.exception.message)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_robot_state("arm7", joints={"elbow": 1.0})
        self.assertEqual(caught.exception.code, pb.Status.NOT_FOUND)

    def test_set_state_then_step_equals_restore(self):
        self.sim.step(30)
        recorded = self.sim.get_state()
        arm, box = find_robot(recorded, "arm7"), next(b for b in recorded.bodies if b.name == "box")

        def set_all():
            self.sim.set_robot_state("arm7", q=arm.q, qd=arm.qd)
            p, o = box.pose.position, box.pose.orientation
            self.sim.set_body_state("box", position=(p.x, p.y, p.z),
                                    orientation=(o.w, o.x, o.y, o.z),
                                    linear_velocity=(box.twist.linear.x, box.twist.linear.y,
                                                     box.twist.linear.z),
                                    angular_velocity=(box.twist.angular.x, box.twist.angular.y,
                                                      box.twist.angular.z))
        set_all()
        saved = self.sim.save_state()
        first = find_robot(self.sim.step(60, return_state=True).state, "arm7")
        self.sim.apply_wrench("box", force=(3.0, 0.0, 0.0), hold=True)
        self.sim.step(40)
        self.sim.apply_wrench(clear_all=True)
        set_all()
        again = find_robot(self.sim.step(60, return_state=True).state, "arm7")
        self.assertEqual(pack(again.q), pack(first.q))
        self.sim.restore_state(snapshot=saved.snapshot)
        restored = find_robot(self.sim.step(60, return_state=True).state, "arm7")
        self.assertEqual(pack(restored.q), pack(first.q))

    def test_wrench_impulse_and_dynamics(self):
        self.sim.set_settings(gravity=(0.0, 0.0, 0.0))
        self.sim.load_model(urdf_text=PUCK_URDF, base="floating", base_position=(0.0, 0.0, 3.0))
        held = self.sim.apply_wrench("puck", force=(0.0, 6.0, 0.0), hold=True)
        self.assertGreater(held.hold_id, 0)
        self.sim.step(24)
        self.assertEqual(self.sim.apply_wrench(clear=held.hold_id).held, 0)
        self.sim.step(5)
        v = find_robot(self.sim.get_state(), "puck").base_twist.linear
        self.assertAlmostEqual(2.0 * v.y, 6.0 * 24 * self.h, delta=1e-9)
        # Twice the mass: the same impulse gives half the speed.
        self.sim.set_dynamics(bodies=[{"robot": "puck", "link": "body", "mass": 4.0,
                                       "inertia": [0.02, 0.02, 0.02]}])
        self.sim.set_robot_state("puck", base_linear=(0.0, 0.0, 0.0))
        self.sim.apply_wrench("puck", force=(0.0, 6.0, 0.0), hold=True)
        self.sim.step(24)
        v = find_robot(self.sim.get_state(), "puck").base_twist.linear
        self.assertAlmostEqual(4.0 * v.y, 6.0 * 24 * self.h, delta=1e-9)
        with self.assertRaises(LcpsimError) as caught:
            self.sim.set_dynamics(bodies=[{"body": "box", "friction": -1.0}],
                                  joints=[{"robot": "arm7", "joint": "joint1", "damping": 1.0}])
        self.assertIn("set_dynamics.bodies[0]: friction must be >= 0", caught.exception.message)
        info = self.sim.get_info()
        self.assertEqual(find_robot(info, "arm7").joints[0].damping, 0.0)  # nothing applied


if __name__ == "__main__":
    unittest.main()
