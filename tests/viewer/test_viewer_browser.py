# SPDX-License-Identifier: Apache-2.0
"""The viewer page in a real browser (Debian's headless Chromium) shows the world where it is.

The test serves the built page and the WebSocket /ws itself (browser_harness.ViewerServer) and
sends it RecordEntry messages: a RecordHeader, then GetSceneReply and State entries made from a
live lcpsimd serving the built-in world (its GetInfo and GetState; the Scene is written here
from the arm's URDF collision geoms and the bodies' shapes). The page's camera is set by the
URL (camera, target, fov), so the test knows where each solid projects. Screenshots:

  empty   the scene is the ground alone
  world   the arm, the table and the box (a new scene revision)
  moved   the same scene, a new State: the box moved by SetBodyState on the daemon
  no_box  a scene without the box, the same State

and the pixel facts checked (a pixel "differs" when its R, G, B differ by more than
DIFFERENT in sum; regions are the interiors of the projected solids, PIXEL_MARGIN pixels in from
their silhouettes' borders, less the page's panels):

  - where the table projects, `world` differs from `empty` (TABLE_MIN of the pixels);
  - along each arm link's axis, `world` differs from `empty` (ARM_MIN of the sample points);
  - where the box projects, `world` differs from `no_box` (BOX_MIN): the box is drawn there;
  - after the move, the old box region of `moved` matches `no_box` (at most BACK_MAX differ)
    and the new region differs from `world` (BOX_MIN).

The screenshots are written to $LCPSIM_SCREENSHOT_DIR and their paths printed.
Other tests: contacts are drawn at their points; the replay controls send the JSON commands
the daemon expects; pause view holds the picture.
"""

import json
import math
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

from browser_harness import (Chromium, ViewerServer, box_corners, convex_hull_mask,
                             differing_fraction, find_chromium, project, rotate)
from lcpsim import Client
from lcpsim.v1 import lcpsim_pb2 as pb
from live_daemon import LiveDaemon

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
CONTACT_STEPS = 60  # the box settles on the table
ARM_JOINTS = {"joint1": 2.0, "joint2": 0.6, "joint4": 0.8, "joint6": 0.5}

SCREENSHOT_DIR = os.environ.get("LCPSIM_SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="viewer-shots-")


# ---- the Scene, written by hand until the daemon's GetScene serves it ----

def quaternion_from_rpy(roll, pitch, yaw):
    """URDF's rpy: fixed-axis rotations about x, then y, then z (R = Rz(yaw) Ry(pitch) Rx(roll)),
    as (w, x, y, z)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)


def urdf_link_geoms(path):
    """{link name: [Geom]} from the URDF's <collision> elements."""
    geoms = {}
    for link in ElementTree.parse(path).getroot().findall("link"):
        items = []
        for collision in link.findall("collision"):
            geom = pb.Geom()
            origin = collision.find("origin")
            xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
            rpy = [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
            geom.pose.position.x, geom.pose.position.y, geom.pose.position.z = xyz
            q = quaternion_from_rpy(*rpy)
            geom.pose.orientation.w, geom.pose.orientation.x = q[0], q[1]
            geom.pose.orientation.y, geom.pose.orientation.z = q[2], q[3]
            shape = list(collision.find("geometry"))[0]
            if shape.tag == "box":
                geom.type = pb.Geom.BOX
                size = [float(v) for v in shape.get("size").split()]
                geom.half_extents.x, geom.half_extents.y, geom.half_extents.z = [s / 2 for s in size]
            elif shape.tag == "sphere":
                geom.type = pb.Geom.SPHERE
                geom.radius = float(shape.get("radius"))
            elif shape.tag in ("cylinder", "capsule"):
                # lcpsim's capsule length is between the hemisphere centres, as a cylinder's.
                geom.type = pb.Geom.CYLINDER if shape.tag == "cylinder" else pb.Geom.CAPSULE
                geom.radius = float(shape.get("radius"))
                geom.half_length = float(shape.get("length")) / 2
            else:
                continue
            items.append(geom)
        geoms[link.get("name")] = items
    return geoms


def shape_geom(shape):
    geom = pb.Geom()
    if shape.type == pb.Shape.BOX:
        geom.type = pb.Geom.BOX
        geom.half_extents.CopyFrom(shape.half_extents)
    elif shape.type == pb.Shape.SPHERE:
        geom.type = pb.Geom.SPHERE
        geom.radius = shape.radius
    elif shape.type in (pb.Shape.CAPSULE, pb.Shape.CYLINDER):
        geom.type = pb.Geom.CAPSULE if shape.type == pb.Shape.CAPSULE else pb.Geom.CYLINDER
        geom.radius, geom.half_length = shape.radius, shape.half_length
    return geom


def world_scene(info, state, revision, robots_dir, without=()):
    """A GetSceneReply for the daemon's world: the ground, its robots (geoms from their URDFs
    in robots_dir) and its bodies (geoms from their shapes), less the bodies named in
    `without`."""
    reply = pb.GetSceneReply()
    reply.info.CopyFrom(info)
    reply.scene.revision = revision
    reply.scene.world_geoms.add(type=pb.Geom.PLANE)
    for robot in info.robots:
        link_geoms = urdf_link_geoms(os.path.join(robots_dir, robot.name + ".urdf"))
        robot_scene = reply.scene.robots.add(name=robot.name)
        for link in robot.links:
            robot_scene.links.add(name=link, geoms=link_geoms.get(link, []))
    shapes = {body.id: body for body in info.bodies}
    for body in state.bodies:
        if body.name in without:
            continue
        body_info = shapes[body.id]
        reply.scene.bodies.add(id=body.id, name=body.name, is_static=body_info.is_static,
                               geoms=[shape_geom(body_info.shape)])
    return reply


def entry(**kwargs):
    return pb.RecordEntry(**kwargs).SerializeToString()


def body_named(state, name):
    return next(b for b in state.bodies if b.name == name)


def vec(v):
    return [v.x, v.y, v.z]


def quat(q):
    return (q.w, q.x, q.y, q.z) if (q.w, q.x, q.y, q.z) != (0, 0, 0, 0) else (1.0, 0.0, 0.0, 0.0)


class ViewerBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.chromium_path = find_chromium()
        cls.viewer_dir = os.environ.get("LCPSIM_VIEWER_DIR", "")
        cls.robots_dir = os.environ.get("LCPSIM_ROBOTS_DIR", "")
        os.makedirs(SCREENSHOT_DIR, exist_ok=True)

    def setUp(self):
        self.profile = tempfile.TemporaryDirectory(prefix="viewer-chromium-")
        self.server = ViewerServer(self.viewer_dir)
        self.browser = Chromium(self.chromium_path, WIDTH, HEIGHT, self.profile.name,
                                os.path.join(SCREENSHOT_DIR, self.id().rsplit(".", 1)[-1] + ".chromium.log"))

    def tearDown(self):
        self.browser.close()
        self.server.stop()
        self.profile.cleanup()

    def page_url(self, extra=""):
        return self.server.url + "?camera=%g,%g,%g&target=%g,%g,%g&fov=%g%s" % (
            CAMERA + TARGET + (FOV, extra))

    def shoot(self, name):
        path = os.path.join(SCREENSHOT_DIR, name + ".png")
        image = self.browser.screenshot(path)
        print("screenshot: %s" % path, flush=True)
        self.assertEqual(image[:2], (WIDTH, HEIGHT))
        return image

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

    def show(self, scene_bytes, state_bytes, revision, step_count, name):
        if scene_bytes is not None:
            self.server.publish("scene", scene_bytes)
        self.server.publish("state", state_bytes)
        viewer = self.browser.wait_for("v.ready && v.sceneRevision === %d && v.lastStepCount === %d"
                                       % (revision, step_count))
        self.assertEqual(viewer["sceneRevision"], revision)
        return self.shoot(name)

    def test_the_page_shows_the_world_where_it_is(self):
        daemon = LiveDaemon()
        try:
            with Client(daemon.rep) as sim:
                info = sim.get_info()
                sim.set_robot_state("arm7", joints=ARM_JOINTS)
                state = sim._call("get_state", pb.GetStateRequest()).state
                sim.set_body_state("box", position=BOX_MOVED_TO, orientation=BOX_TURNED)
                moved_state = sim._call("get_state", pb.GetStateRequest()).state
        finally:
            self.assertEqual(daemon.stop(), 0)

        self.server.publish("header", entry(header=pb.RecordHeader(
            magic="lcpsim-recording", format_version=1, server_version=info.server_version,
            timestep=info.settings.timestep, started_utc="2026-01-01T00:00:00Z")))
        empty_scene = pb.GetSceneReply()
        empty_scene.info.settings.CopyFrom(info.settings)
        empty_scene.scene.revision = 1
        empty_scene.scene.world_geoms.add(type=pb.Geom.PLANE)
        empty_state = pb.State(time=0.0, step_count=1, scene_revision=1)
        self.server.publish("scene", entry(scene=empty_scene))
        self.server.publish("state", entry(state=empty_state))

        self.browser.navigate(self.page_url())
        self.browser.wait_for("v.ready && v.sceneRevision === 1 && v.lastStepCount === 1")
        empty = self.shoot("empty")
        panels = self.panel_pixels()
        # Offline: the page loaded nothing but from the server it came from.
        loaded = json.loads(self.browser.evaluate(
            "JSON.stringify(performance.getEntriesByType('resource').map(e => e.name))"))
        self.assertTrue(loaded, "the page loaded its script and style")
        for url in loaded:
            self.assertTrue(url.startswith(self.server.url) or url.startswith(self.server.url.replace("http", "ws")),
                            "the page loaded %s from elsewhere" % url)

        world_state = pb.State()
        world_state.CopyFrom(state)
        world_state.step_count, world_state.scene_revision = 2, 2
        world = self.show(entry(scene=world_scene(info, state, 2, self.robots_dir)),
                          entry(state=world_state), 2, 2, "world")

        after_move = pb.State()
        after_move.CopyFrom(moved_state)
        after_move.step_count, after_move.scene_revision = 3, 2
        moved = self.show(None, entry(state=after_move), 2, 3, "moved")

        no_box_state = pb.State()
        no_box_state.CopyFrom(moved_state)
        no_box_state.step_count, no_box_state.scene_revision = 4, 3
        del no_box_state.bodies[:]
        no_box_state.bodies.extend(b for b in moved_state.bodies if b.name != "box")
        no_box = self.show(entry(scene=world_scene(info, state, 3, self.robots_dir, without=("box",))),
                           entry(state=no_box_state), 3, 4, "no_box")

        bodies = {body.id: body for body in info.bodies}
        table = body_named(state, "table")
        table_region = self.region(box_corners(vec(table.pose.position), vec(bodies[table.id].shape.half_extents),
                                               quat(table.pose.orientation)), panels)
        fraction = differing_fraction(world, empty, table_region, DIFFERENT)
        self.assertGreaterEqual(fraction, TABLE_MIN, "the table is drawn where it projects")

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
                samples += 1
                if differing_fraction(world, empty, patch, DIFFERENT) >= 0.5:
                    hits += 1
        self.assertGreaterEqual(samples, 30)
        self.assertGreaterEqual(hits / samples, ARM_MIN, "the arm's links are drawn along their axes")

        box_before, box_after = body_named(state, "box"), body_named(moved_state, "box")
        half = vec(bodies[box_before.id].shape.half_extents)
        self.assertAlmostEqual(box_after.pose.position.x, BOX_MOVED_TO[0], delta=1e-9)
        self.assertAlmostEqual(box_after.pose.orientation.z, BOX_TURNED[3], delta=1e-9)
        old_region = self.region(box_corners(vec(box_before.pose.position), half,
                                             quat(box_before.pose.orientation)), panels)
        new_region = self.region(box_corners(vec(box_after.pose.position), half,
                                             quat(box_after.pose.orientation)), panels)
        self.assertFalse(set(old_region) & set(new_region), "the two box regions are apart")
        self.assertGreaterEqual(differing_fraction(world, no_box, old_region, DIFFERENT), BOX_MIN,
                                "the box is drawn on the table")
        self.assertLessEqual(differing_fraction(moved, no_box, old_region, DIFFERENT), BACK_MAX,
                             "after the move the table shows where the box was")
        self.assertGreaterEqual(differing_fraction(moved, world, new_region, DIFFERENT), BOX_MIN,
                                "after the move the box is drawn where it went")


    def test_contacts_are_drawn_at_their_points(self):
        """The box rests on the table after a few steps; with ?contacts=1 each contact's point
        is drawn as a red dot (over everything: the dots ignore depth), and the page asks the
        server for contacts ({"cmd":"contacts","on":true})."""
        daemon = LiveDaemon()
        try:
            with Client(daemon.rep) as sim:
                info = sim.get_info()
                sim.step(CONTACT_STEPS)
                state = sim._call("get_state", pb.GetStateRequest(include_contacts=True)).state
        finally:
            self.assertEqual(daemon.stop(), 0)
        box_contacts = [c for c in state.contacts if "box" in (c.a, c.b)]
        self.assertGreaterEqual(len(box_contacts), 3, "the box rests on the table")
        self.server.publish("header", entry(header=pb.RecordHeader(
            magic="lcpsim-recording", format_version=1, timestep=info.settings.timestep)))
        state.scene_revision = 1
        self.server.publish("scene", entry(scene=world_scene(info, state, 1, self.robots_dir)))
        self.server.publish("state", entry(state=state))
        self.browser.navigate(self.page_url("&contacts=1&frames=1"))
        self.browser.wait_for("v.ready && v.lastStepCount === %d" % state.step_count)
        image = self.shoot("contacts")
        self.assertIn({"cmd": "contacts", "on": True}, self.server.wait_for_command(1))
        _, _, rows = image
        for contact in box_contacts:
            x, y = project(vec(contact.position), CAMERA, TARGET, FOV, WIDTH, HEIGHT)
            patch = [rows[int(y) + dy][3 * (int(x) + dx):3 * (int(x) + dx) + 3]
                     for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
            self.assertTrue(any(r > 150 and g < 90 and b < 90 for r, g, b in patch),
                            "a red dot at the contact (%.3f, %.3f, %.3f): %s"
                            % (contact.position.x, contact.position.y, contact.position.z, patch))

    def test_the_replay_controls_send_their_commands_and_pause_view_holds(self):
        self.server.publish("header", entry(header=pb.RecordHeader(
            magic="lcpsim-recording", format_version=1, timestep=0.001)))
        scene = pb.GetSceneReply()
        scene.scene.revision = 1
        scene.scene.world_geoms.add(type=pb.Geom.PLANE)
        self.server.publish("scene", entry(scene=scene))
        self.server.publish("state", entry(state=pb.State(time=2.5, step_count=2500, scene_revision=1)))
        self.browser.navigate(self.page_url("&replay=1"))
        viewer = self.browser.wait_for("v.ready && v.lastStepCount === 2500")
        self.assertTrue(viewer["replay"])
        self.assertFalse(self.browser.evaluate("document.getElementById('replay').hidden"))
        self.browser.evaluate("document.getElementById('replay-play').click()")
        self.browser.evaluate("document.getElementById('replay-pause').click()")
        self.browser.evaluate("""(() => { const s = document.getElementById('replay-seek');
            s.value = '1.25'; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); })()""")
        self.browser.evaluate("""(() => { const s = document.getElementById('replay-speed');
            s.value = '2'; s.dispatchEvent(new Event('change')); })()""")
        commands = self.server.wait_for_command(4)
        self.assertEqual(commands, [{"cmd": "play"}, {"cmd": "pause"}, {"cmd": "seek", "t": 1.25},
                                    {"cmd": "speed", "speed": 2}])
        self.shoot("replay_controls")

        # Pause view: a State received while paused is not drawn (the animation frames after
        # its arrival leave the last one on screen); resuming draws it.
        self.browser.evaluate("document.getElementById('pause-view').click()")
        received = self.browser.evaluate("window.lcpsimViewer.received")
        self.server.publish("state", entry(state=pb.State(time=2.6, step_count=2600, scene_revision=1)))
        viewer = self.browser.wait_for("v.received === %d" % (received + 1))
        self.assertEqual(viewer["lastStepCount"], 2500, "paused: the new State is not drawn")
        self.browser.evaluate("document.getElementById('pause-view').click()")
        self.browser.wait_for("v.lastStepCount === 2600")


def main():
    missing = []
    if not find_chromium():
        missing.append("chromium not found (apt-get install chromium, or set LCPSIM_CHROMIUM)")
    viewer_dir = os.environ.get("LCPSIM_VIEWER_DIR", "")
    if not os.path.isfile(os.path.join(viewer_dir, "viewer.js")):
        missing.append("no built viewer in LCPSIM_VIEWER_DIR=%r" % viewer_dir)
    if missing:
        print("viewer_browser: SKIPPED: " + "; ".join(missing))
        sys.exit(SKIP)
    unittest.main()


if __name__ == "__main__":
    main()
