# SPDX-License-Identifier: Apache-2.0
"""The viewer page in a real browser (Debian's headless Chromium) shows the world where it is,
loaded from a live lcpsimd (`--http 127.0.0.1:0`: the page at /, the stream at /ws, the scene
the daemon builds itself) and from a replayed recording (`--replay FILE --http ...`).

The page's camera is set by the URL (camera, target, fov), so the test knows where each solid
projects (browser_harness.project). Screenshots, written to $LCPSIM_SCREENSHOT_DIR and their
paths printed:

  live_empty      a daemon serving a scene file with the ground alone (the reference;
  replay_empty    the same, for the replay test)
  live_world      the built-in world: the arm (bent by SetRobotState), the table, the box
  live_moved      the box moved by SetBodyState over the protocol (then one Step)
  live_no_box     the box removed (Remove): a new scene revision
  live_contacts   ?contacts=1 after the box settled on the table
  replay_before   a recording of the built-in world replayed, sought to before the box moved
  replay_after    the same, sought to after it moved
  replay_controls the replay controls, against a WebSocket served by the test itself

and the pixel facts checked (a pixel "differs" when its R, G, B differ by more than DIFFERENT in
sum; regions are the interiors of the projected solids, PIXEL_MARGIN pixels in from their
silhouettes' borders, less the page's panels):

  live:   where the table projects, `live_world` differs from `live_empty` (TABLE_MIN of the pixels);
          along each arm link's axis, `live_world` differs from `live_empty` (ARM_MIN of the samples);
          where the box projects, `live_world` differs from `live_no_box` (BOX_MIN);
          after the move the old box region of `live_moved` matches `live_no_box` (at most
          BACK_MAX differ) and the new region differs from `live_world` (BOX_MIN);
  replay: the table and the arm as above (`replay_before` against `replay_empty`); the old box
          region differs between `replay_before` and `replay_after` (BOX_MIN), the new region
          differs from `replay_empty` in `replay_after` (BOX_MIN) and matches it in `replay_before`
          (at most BACK_MAX): the box is at its old place before and at its new place after.

Each measured fraction is printed ("fraction: ...").
Other tests: contacts are drawn at their points (live); the replay controls send the JSON
commands the daemon expects and pause view holds the picture (a WebSocket of the test's own,
which sees the page's messages word for word).
"""

import json
import math
import os
import sys
import tempfile
import unittest

from browser_harness import (Chromium, Daemon, ViewerServer, box_corners, convex_hull_mask,
                             differing_fraction, find_chromium, project, rotate)
from lcpsim import Client
from lcpsim.v1 import lcpsim_pb2 as pb

SKIP = 77
WIDTH, HEIGHT = 960, 640
CAMERA = (1.1, -3.0, 1.45)
TARGET = (0.45, 0.0, 0.6)
FOV = 45.0
DIFFERENT = 24  # sum of |ΔR| + |ΔG| + |ΔB| out of 765: well above rasterisation noise
PIXEL_MARGIN = 3.0  # px inside a silhouette, past its anti-aliased edge
TABLE_MIN = 0.95
ARM_MIN = 0.9
BOX_MIN = 0.95
BACK_MAX = 0.02
BOX_MOVED_TO = (0.1, -0.55, 0.05)  # on the ground, in front of the arm and left of the table
BOX_TURNED = (math.cos(math.radians(15)), 0.0, 0.0, math.sin(math.radians(15)))  # 30° about z
# The arm bent away from the camera, so its links' orientations are not the identity: a page
# that read the quaternions wrong would draw them elsewhere.
ARM_JOINTS = {"joint1": 2.0, "joint2": 0.6, "joint4": 0.8, "joint6": 0.5}
CONTACT_STEPS = 60  # the box settles on the table
REPLAY_STEPS_BEFORE = 24  # steps recorded before the box is moved
REPLAY_STEPS_AFTER = 12  # and after, to the State sought after the move
REPLAY_STEPS_END = 12  # and then to the end
LOCAL = "127.0.0.1:0"
ZMQ_LOCAL = "tcp://127.0.0.1:0"

SCREENSHOT_DIR = os.environ.get("LCPSIM_SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="viewer-shots-")

# The scene file of the empty world: the ground alone (docs/scene-format.md).
EMPTY_WORLD = """<?xml version="1.0"?>
<lcpsim version="1">
  <ground/>
</lcpsim>
"""


def live_daemon(*args):
    """An lcpsimd on ephemeral ports, its viewer on http=."""
    return Daemon(["--bind", ZMQ_LOCAL, "--pub", ZMQ_LOCAL, "--http", LOCAL, *args])


def raw_state(sim, include_contacts=False):
    return sim._call("get_state", pb.GetStateRequest(include_contacts=include_contacts)).state


def body_named(state, name):
    return next(b for b in state.bodies if b.name == name)


def vec(v):
    return [v.x, v.y, v.z]


def quat(q):
    return (q.w, q.x, q.y, q.z) if (q.w, q.x, q.y, q.z) != (0, 0, 0, 0) else (1.0, 0.0, 0.0, 0.0)


def page_url(base, extra=""):
    return base + "?camera=%g,%g,%g&target=%g,%g,%g&fov=%g%s" % (CAMERA + TARGET + (FOV, extra))


def stopped(test, daemon):
    test.assertEqual(daemon.stop(), 0, "%s exits with status 0 on SIGTERM" % " ".join(daemon.args))


class BrowserTestCase(unittest.TestCase):
    """One Chromium per test; the empty world's screenshot taken once for the class."""

    empty = None
    prefix = "test"  # of the screenshots' names

    @classmethod
    def setUpClass(cls):
        cls.chromium_path = find_chromium()
        cls.viewer_dir = os.environ.get("LCPSIM_VIEWER_DIR", "")
        os.makedirs(SCREENSHOT_DIR, exist_ok=True)

    def setUp(self):
        self.profile = tempfile.TemporaryDirectory(prefix="viewer-chromium-")
        self.browser = Chromium(self.chromium_path, WIDTH, HEIGHT, self.profile.name,
                                os.path.join(SCREENSHOT_DIR, self.id().rsplit(".", 1)[-1] + ".chromium.log"))

    def tearDown(self):
        self.browser.close()
        self.profile.cleanup()

    def shoot(self, name):
        path = os.path.join(SCREENSHOT_DIR, name + ".png")
        image = self.browser.screenshot(path)
        print("screenshot: %s" % path, flush=True)
        self.assertEqual(image[:2], (WIDTH, HEIGHT))
        return image

    def empty_world(self):
        """The screenshot of a daemon serving the ground alone (taken once)."""
        cls = type(self)
        if cls.empty is None:
            with tempfile.NamedTemporaryFile("w", prefix="empty-world-", suffix=".xml") as scene:
                scene.write(EMPTY_WORLD)
                scene.flush()
                daemon = live_daemon("--world", scene.name)
                try:
                    self.browser.navigate(page_url(daemon.url))
                    self.browser.wait_for("v.ready && v.lastStepCount === 0")
                    cls.empty = self.shoot(cls.prefix + "_empty")
                finally:
                    stopped(self, daemon)
        return cls.empty

    def panel_pixels(self):
        """The pixels the page's panels cover (left out of the regions)."""
        rects = self.browser.evaluate(
            "JSON.stringify([...document.querySelectorAll('.panel')].filter(p => !p.hidden)"
            ".map(p => { const r = p.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }))")
        return [tuple(r) for r in json.loads(rects)]

    def region(self, points, panels):
        pixels = [project(p, CAMERA, TARGET, FOV, WIDTH, HEIGHT) for p in points]
        inside = convex_hull_mask(pixels, PIXEL_MARGIN)
        kept = [(x, y) for x, y in inside
                if not any(l <= x <= r and t <= y <= b for l, t, r, b in panels)]
        self.assertGreater(len(kept), 50, "the region of %s is on screen" % (points,))
        return kept

    def box_region(self, info, state, name, panels):
        half = vec(next(b for b in info.bodies if b.name == name).shape.half_extents)
        body = body_named(state, name)
        return self.region(box_corners(vec(body.pose.position), half, quat(body.pose.orientation)), panels)

    def fraction(self, what, image_a, image_b, region):
        value = differing_fraction(image_a, image_b, region, DIFFERENT)
        print("fraction: %s = %.4f (%d px)" % (what, value, len(region)), flush=True)
        return value

    def check_table_and_arm(self, name, image, info, state, panels):
        """The table and the arm of `state` are drawn in `image` where they project."""
        empty = self.empty_world()
        table_region = self.box_region(info, state, "table", panels)
        self.assertGreaterEqual(self.fraction(name + ": table vs empty", image, empty, table_region),
                                TABLE_MIN, "the table is drawn where it projects")
        # The arm: points along each capsule's axis (the link's z from 0 to 0.3 m is the
        # segment between its hemisphere centres), a 3×3 patch around each.
        arm = next(r for r in state.robots if r.name == "arm7")
        samples = hits = 0
        for link_pose in arm.link_poses[1:]:
            for s in (0.05, 0.1, 0.15, 0.2, 0.25):
                offset = rotate(quat(link_pose.orientation), [0.0, 0.0, s])
                point = [link_pose.position.x + offset[0], link_pose.position.y + offset[1],
                         link_pose.position.z + offset[2]]
                x, y = project(point, CAMERA, TARGET, FOV, WIDTH, HEIGHT)
                patch = [(int(x) + dx, int(y) + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
                if any(l <= px <= r and t <= py <= b for px, py in patch for l, t, r, b in panels):
                    continue
                samples += 1
                if differing_fraction(image, empty, patch, DIFFERENT) >= 0.5:
                    hits += 1
        print("fraction: %s: arm samples drawn = %.4f (%d samples)" % (name, hits / samples, samples),
              flush=True)
        self.assertGreaterEqual(samples, 30)
        self.assertGreaterEqual(hits / samples, ARM_MIN, "the arm's links are drawn along their axes")

    def wait_drawn(self, step_count, extra=""):
        return self.browser.wait_for("v.ready && v.lastStepCount === %d%s" % (step_count, extra))


class LiveDaemonTest(BrowserTestCase):
    prefix = "live"

    def test_the_page_from_a_live_daemon_shows_the_world_where_it_is(self):
        daemon = live_daemon()
        try:
            self.assertIn("rep", daemon.fields)
            with Client(daemon.fields["rep"]) as sim:
                info = sim.get_info()
                # No step anywhere below: the daemon streams a State when a request changed
                # the world, not only when it stepped.
                sim.set_robot_state("arm7", joints=ARM_JOINTS)
                state = raw_state(sim)
                revision = sim.get_scene().scene.revision

                self.browser.navigate(page_url(daemon.url))
                viewer = self.wait_drawn(state.step_count)
                self.assertEqual(viewer["sceneRevision"], revision, "the page drew the daemon's scene")
                world = self.shoot("live_world")
                panels = self.panel_pixels()
                # Offline: the page loaded nothing but from the daemon it came from.
                loaded = json.loads(self.browser.evaluate(
                    "JSON.stringify(performance.getEntriesByType('resource').map(e => e.name))"))
                self.assertTrue(loaded, "the page loaded its script and style")
                for url in loaded:
                    self.assertTrue(url.startswith(daemon.url) or url.startswith(daemon.url.replace("http", "ws")),
                                    "the page loaded %s from elsewhere" % url)

                # The State drawn so far is the last one sent: nothing changes until the next
                # request, so the next State sent is the one after it.
                sent = viewer["lastSequence"]
                sim.set_body_state("box", position=BOX_MOVED_TO, orientation=BOX_TURNED)
                moved_state = raw_state(sim)
                self.assertEqual(moved_state.step_count, state.step_count, "moved without a step")
                viewer = self.wait_drawn(moved_state.step_count, " && v.lastSequence > %d" % sent)
                moved = self.shoot("live_moved")

                sent = viewer["lastSequence"]
                sim.remove("box")
                no_box_state = raw_state(sim)
                new_revision = sim.get_scene().scene.revision
                self.assertNotEqual(new_revision, revision)
                self.wait_drawn(no_box_state.step_count, " && v.sceneRevision === %d && v.lastSequence > %d"
                                % (new_revision, sent))
                no_box = self.shoot("live_no_box")
        finally:
            stopped(self, daemon)

        self.check_table_and_arm("live_world", world, info, state, panels)
        box_after = body_named(moved_state, "box")
        self.assertAlmostEqual(box_after.pose.position.x, BOX_MOVED_TO[0], delta=1e-3)
        self.assertAlmostEqual(box_after.pose.orientation.z, BOX_TURNED[3], delta=1e-3)
        old_region = self.box_region(info, state, "box", panels)
        new_region = self.box_region(info, moved_state, "box", panels)
        self.assertFalse(set(old_region) & set(new_region), "the two box regions are apart")
        self.assertGreaterEqual(self.fraction("live_world vs live_no_box, old box region", world, no_box, old_region),
                                BOX_MIN, "the box is drawn on the table")
        self.assertLessEqual(self.fraction("live_moved vs live_no_box, old box region", moved, no_box, old_region),
                             BACK_MAX, "after the move the table shows where the box was")
        self.assertGreaterEqual(self.fraction("live_moved vs live_world, new box region", moved, world, new_region),
                                BOX_MIN, "after the move the box is drawn where it went")

    def test_contacts_are_drawn_at_their_points(self):
        """With ?contacts=1 the page asks the daemon for contacts, and each contact's point is
        drawn as a red dot (over everything: the dots ignore depth) once the box rests on the
        table."""
        daemon = live_daemon()
        try:
            with Client(daemon.fields["rep"]) as sim:
                self.browser.navigate(page_url(daemon.url, "&contacts=1&frames=1"))
                self.wait_drawn(0)
                sim.step(CONTACT_STEPS)
                state = raw_state(sim, include_contacts=True)
                self.wait_drawn(state.step_count)
                image = self.shoot("live_contacts")
                self.assertEqual(self.browser.evaluate("document.getElementById('status').textContent"),
                                 "connected", "the daemon kept the page's connection")
        finally:
            stopped(self, daemon)
        box_contacts = [c for c in state.contacts if "box" in (c.a, c.b)]
        self.assertGreaterEqual(len(box_contacts), 3, "the box rests on the table")
        _, _, rows = image
        for contact in box_contacts:
            x, y = project(vec(contact.position), CAMERA, TARGET, FOV, WIDTH, HEIGHT)
            patch = [rows[int(y) + dy][3 * (int(x) + dx):3 * (int(x) + dx) + 3]
                     for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
            self.assertTrue(any(r > 150 and g < 90 and b < 90 for r, g, b in patch),
                            "a red dot at the contact (%.3f, %.3f, %.3f): %s"
                            % (contact.position.x, contact.position.y, contact.position.z, patch))


class ReplayTest(BrowserTestCase):
    prefix = "replay"

    def seek(self, t):
        """Moves the page's replay slider to t (None: its right end) as a user would (input,
        then change on release): the page sends {"cmd":"seek","t":t}."""
        value = "s.max" if t is None else "'%r'" % t
        self.browser.evaluate("""(() => { const s = document.getElementById('replay-seek');
            s.value = %s; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change'));
            return s.value; })()""" % value)

    def seek_time(self, state, timestep):
        """A time to the millisecond between `state` and the next State: a seek there shows
        `state` (the State at or before the time)."""
        t = round(state.time + timestep / 2, 3)
        self.assertTrue(state.time <= t < state.time + timestep)
        return t

    def test_a_replayed_recording_shows_the_box_before_and_after_it_moved(self):
        with tempfile.TemporaryDirectory(prefix="viewer-recording-") as directory:
            path = os.path.join(directory, "run.lcprec")
            recorder = live_daemon("--record", path)
            try:
                with Client(recorder.fields["rep"]) as sim:
                    info = sim.get_info()
                    sim.set_robot_state("arm7", joints=ARM_JOINTS)
                    sim.step(REPLAY_STEPS_BEFORE)
                    before_state = raw_state(sim)
                    sim.set_body_state("box", position=BOX_MOVED_TO, orientation=BOX_TURNED)
                    sim.step(REPLAY_STEPS_AFTER)
                    after_state = raw_state(sim)
                    sim.step(REPLAY_STEPS_END)
                    end_state = raw_state(sim)
            finally:
                stopped(self, recorder)
            self.assertGreater(os.path.getsize(path), 0)

            player = Daemon(["--replay", path, "--pub", ZMQ_LOCAL, "--http", LOCAL])
            try:
                # The State at the start, then one a step.
                recorded = REPLAY_STEPS_BEFORE + REPLAY_STEPS_AFTER + REPLAY_STEPS_END + 1
                self.assertEqual(int(player.fields.get("states", -1)), recorded, player.first_line)
                self.assertAlmostEqual(float(player.fields.get("duration", -1)), end_state.time,
                                       delta=1e-9, msg=player.first_line)
                timestep = info.settings.timestep

                self.browser.navigate(page_url(player.url, "&paused=1"))
                viewer = self.wait_drawn(0)
                self.assertTrue(viewer["replay"], "the header says it is a replay")
                self.assertFalse(self.browser.evaluate("document.getElementById('replay').hidden"))

                self.seek(self.seek_time(before_state, timestep))
                self.wait_drawn(before_state.step_count)
                before = self.shoot("replay_before")
                panels = self.panel_pixels()
                self.assertEqual(self.browser.evaluate("window.lcpsimViewer.lastStepCount"),
                                 before_state.step_count, "paused: the State sought stays on screen")

                self.seek(self.seek_time(after_state, timestep))
                self.wait_drawn(after_state.step_count)
                after = self.shoot("replay_after")
                self.assertEqual(self.browser.evaluate("window.lcpsimViewer.lastStepCount"),
                                 after_state.step_count)

                # The slider's right end is the last State.
                self.seek(None)
                self.wait_drawn(end_state.step_count)
                # Play from the first time sought: the replay runs to its end and stays there.
                self.seek(self.seek_time(before_state, timestep))
                self.wait_drawn(before_state.step_count)
                self.browser.evaluate("document.getElementById('replay-play').click()")
                self.wait_drawn(end_state.step_count)
                self.assertEqual(self.browser.evaluate("document.getElementById('status').textContent"),
                                 "connected", "the daemon stays up at the end of the replay")
            finally:
                stopped(self, player)

        empty = self.empty_world()
        self.check_table_and_arm("replay_before", before, info, before_state, panels)
        old_region = self.box_region(info, before_state, "box", panels)
        new_region = self.box_region(info, after_state, "box", panels)
        self.assertFalse(set(old_region) & set(new_region), "the two box regions are apart")
        self.assertGreaterEqual(self.fraction("replay_before vs replay_after, old box region", before, after, old_region),
                                BOX_MIN, "before the move the box is on the table, after it the table is bare")
        self.assertGreaterEqual(self.fraction("replay_after vs empty, new box region", after, empty, new_region),
                                BOX_MIN, "after the move the box is drawn where it went")
        self.assertLessEqual(self.fraction("replay_before vs empty, new box region", before, empty, new_region),
                             BACK_MAX, "before the move nothing is drawn where the box goes")


class ReplayControlsTest(BrowserTestCase):
    """The page's controls against a WebSocket of the test's own, which sees every message the
    page sends."""

    def entry(self, **kwargs):
        return pb.RecordEntry(**kwargs).SerializeToString()

    def test_the_replay_controls_send_their_commands_and_pause_view_holds(self):
        server = ViewerServer(self.viewer_dir)
        try:
            server.publish("header", self.entry(header=pb.RecordHeader(
                magic="lcpsim-recording", format_version=1, timestep=0.001, replay=True,
                duration=2.0)))
            scene = pb.GetSceneReply()
            scene.scene.revision = 1
            scene.scene.world_geoms.add(type=pb.Geom.PLANE)
            server.publish("scene", self.entry(scene=scene))
            server.publish("state", self.entry(state=pb.State(time=2.5, step_count=2500, scene_revision=1)))
            self.browser.navigate(page_url(server.url, "&replay=1"))
            viewer = self.browser.wait_for("v.ready && v.lastStepCount === 2500")
            self.assertTrue(viewer["replay"])
            self.assertFalse(self.browser.evaluate("document.getElementById('replay').hidden"))
            # The slider spans the recording from its first State's time (2.5 s) for its duration.
            self.assertEqual(self.browser.evaluate("document.getElementById('replay-seek').min"), "2.5")
            self.assertEqual(self.browser.evaluate("document.getElementById('replay-seek').max"), "4.5")
            self.browser.evaluate("document.getElementById('replay-play').click()")
            self.browser.evaluate("document.getElementById('replay-pause').click()")
            self.browser.evaluate("""(() => { const s = document.getElementById('replay-seek');
                s.value = '3.75'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()""")
            self.browser.evaluate("""(() => { const s = document.getElementById('replay-speed');
                s.value = '2'; s.dispatchEvent(new Event('change')); })()""")
            commands = server.wait_for_command(4)
            self.assertEqual(commands, [{"cmd": "play"}, {"cmd": "pause"}, {"cmd": "seek", "t": 3.75},
                                        {"cmd": "speed", "speed": 2}])
            self.shoot("replay_controls")

            # Pause view: a State received while paused is not drawn (the animation frames
            # after its arrival leave the last one on screen); resuming draws it.
            self.browser.evaluate("document.getElementById('pause-view').click()")
            received = self.browser.evaluate("window.lcpsimViewer.received")
            server.publish("state", self.entry(state=pb.State(time=2.6, step_count=2600, scene_revision=1)))
            viewer = self.browser.wait_for("v.received === %d" % (received + 1))
            self.assertEqual(viewer["lastStepCount"], 2500, "paused: the new State is not drawn")
            self.browser.evaluate("document.getElementById('pause-view').click()")
            self.browser.wait_for("v.lastStepCount === 2600")
        finally:
            server.stop()


def main():
    # Skipped only without a browser; a viewer the build should have made and did not is a
    # failure (a build without the viewer does not register this test: CMakeLists.txt).
    if not find_chromium():
        print("viewer_browser: SKIPPED: chromium not found (apt-get install chromium, or set LCPSIM_CHROMIUM)")
        sys.exit(SKIP)
    viewer_dir = os.environ.get("LCPSIM_VIEWER_DIR", "")
    if not os.path.isfile(os.path.join(viewer_dir, "viewer.js")):
        print("viewer_browser: no built viewer in LCPSIM_VIEWER_DIR=%r (build the lcpsim_viewer target)"
              % viewer_dir)
        sys.exit(1)
    unittest.main()


if __name__ == "__main__":
    main()
