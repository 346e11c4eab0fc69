"""GetScene, Record and lcpsim.read_recording through the Python client against a live lcpsimd
(the built-in world) started with --record-dir. Run with /usr/bin/python3, the package lcpsim
importable (see CMakeLists.txt)."""
import os
import shutil
import tempfile
import unittest

import lcpsim
from lcpsim import Client, LcpsimError, pb
from live_daemon import LiveDaemon


class RecordingTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="lcpsim-py-record-")
        self.daemon = LiveDaemon(["--record-dir", self.dir])
        self.sim = Client(self.daemon.rep, timeout_ms=20000)

    def tearDown(self):
        self.sim.close()
        self.assertEqual(self.daemon.stop(), 0)
        shutil.rmtree(self.dir)

    def test_get_scene(self):
        reply = self.sim.get_scene()
        scene = reply.scene
        self.assertEqual([g.type for g in scene.world_geoms], [pb.Geom.PLANE])
        self.assertEqual([r.name for r in scene.robots], ["arm7"])
        self.assertEqual(len(scene.robots[0].links), 8)
        self.assertEqual([b.name for b in scene.bodies], [b.name for b in reply.info.bodies])
        table = next(b for b in scene.bodies if b.name == "table")
        self.assertEqual(table.geoms[0].type, pb.Geom.BOX)
        self.assertEqual((table.geoms[0].half_extents.x, table.geoms[0].half_extents.y,
                          table.geoms[0].half_extents.z), (0.3, 0.4, 0.2))

    def test_record_and_read_back(self):
        started = self.sim.record("py.lcprec", every_steps=2)
        self.assertTrue(started.recording)
        self.assertEqual(started.path, os.path.join(os.path.realpath(self.dir), "py.lcprec"))
        self.sim.step(6)
        self.sim.spawn("sphere", name="ball", radius=0.05, position=(0, 0, 2), mass=1.0)
        self.sim.step(4)
        stopped = self.sim.record(stop=True)
        self.assertFalse(stopped.recording)
        self.assertEqual(stopped.states_written, 1 + 10 // 2)
        self.assertEqual(os.path.getsize(stopped.path), stopped.bytes_written)
        entries = list(lcpsim.read_recording(stopped.path))
        kinds = [e.WhichOneof("entry") for e in entries]
        # The header, the scene, the states of steps 0 to 6, a new scene with the ball, the
        # states of steps 8 and 10.
        self.assertEqual(kinds, ["header", "scene", "state", "state", "state", "state", "scene",
                                 "state", "state"])
        self.assertEqual(entries[0].header.magic, "lcpsim-recording")
        self.assertEqual(entries[0].header.format_version, 1)
        self.assertEqual([e.state.step_count for e in entries if e.HasField("state")],
                         [0, 2, 4, 6, 8, 10])
        self.assertEqual([b.name for b in entries[6].scene.scene.bodies], ["table", "box", "ball"])
        self.assertEqual(entries[7].state.scene_revision, entries[6].scene.scene.revision)
        self.assertNotEqual(entries[1].scene.scene.revision, entries[6].scene.scene.revision)
        # A file cut short reads up to its last whole entry.
        with open(stopped.path, "rb") as f:
            data = f.read()
        cut = os.path.join(self.dir, "cut.lcprec")
        with open(cut, "wb") as f:
            f.write(data[:-3])
        self.assertEqual(len(list(lcpsim.read_recording(cut))), len(entries) - 1)
        with self.assertRaises(ValueError):
            list(lcpsim.read_recording(cut, allow_truncated=False))
        # An existing file and a path outside the directory are refused.
        for path, needle in (("py.lcprec", "exists"), ("../out.lcprec", "record directory")):
            with self.assertRaises(LcpsimError) as caught:
                self.sim.record(path)
            self.assertEqual(caught.exception.code, pb.Status.INVALID_ARGUMENT)
            self.assertIn(needle, caught.exception.message)


if __name__ == "__main__":
    unittest.main()
