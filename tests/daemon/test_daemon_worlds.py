# SPDX-License-Identifier: Apache-2.0
"""lcpsimd's worlds and BatchStep (docs/worlds.md): N worlds stepped by BatchStep equal,
bit for bit, the same worlds stepped one by one with SetTarget + Step, for 1, 2 and 4
worker threads; a world destroyed by another client while a batch steps it (the destroy
waits for the batch; the next batch gets NOT_FOUND for it alone, the other worlds' states
are those of an undisturbed run); the limits (--max-worlds, --max-world-memory) refuse
with RESOURCE_EXHAUSTED and change nothing; copy_state and snapshots moved between two
daemons continue bitwise; a copy carries its source's SetDynamics edits and snapshot
slots; bad names, unknown worlds, duplicate names and a scene_text that does not parse
are refused precisely; Ping is answered while a long BatchStep runs;
another world's state stream is on its own topic. Runs on Debian's /usr/bin/python3
(python3-zmq, python3-protobuf) with the shipped generated module."""

import math
import os
import shutil
import subprocess
import tempfile
import unittest

import zmq

from lcpsim import load_key_pair, load_public_key
from lcpsim.v1 import lcpsim_pb2 as pb

LCPSIMD = os.environ["LCPSIMD"]
CODE = pb.Status.Code
ARM = "arm7"
JOINTS = 7
TIMEOUT_MS = 120000


class Daemon:
    """An lcpsimd on ephemeral ports with its built-in world."""

    def __init__(self, *extra):
        self.process = subprocess.Popen(
            [LCPSIMD, "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0",
             "--log-level", "warning", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        fields = dict(f.split("=", 1) for f in self.process.stdout.readline().split()[2:])
        self.rep, self.pub = fields["rep"], fields["pub"]

    def close(self):
        self.process.terminate()
        self.process.stdout.close()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


class Client:
    """A DEALER: requests may be sent before the replies are read."""

    def __init__(self, context, endpoint, curve=None):
        self.socket = context.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if curve:  # (server public key, client key pair)
            self.socket.curve_serverkey = curve[0]
            self.socket.curve_publickey, self.socket.curve_secretkey = curve[1]
        self.socket.setsockopt(zmq.RCVTIMEO, TIMEOUT_MS)
        self.socket.connect(endpoint)
        self.next_id = 0

    def send(self, world="", **call):
        self.next_id += 1
        request = pb.Request(id=self.next_id, world=world, **call)
        self.socket.send_multipart([b"", request.SerializeToString()])
        return self.next_id

    def receive(self):
        reply = pb.Reply()
        reply.ParseFromString(self.socket.recv_multipart()[-1])
        return reply

    def call(self, world="", **call):
        sent = self.send(world, **call)
        reply = self.receive()
        assert reply.id == sent, (reply.id, sent)
        return reply

    def ok(self, world="", **call):
        reply = self.call(world, **call)
        assert reply.status.code == CODE.OK, reply.status
        return reply

    def close(self):
        self.socket.close()


def target(world_index, step):
    """Joint position targets that differ per world and move with the step."""
    return pb.SetTargetRequest(
        robot=ARM, mode=pb.SetTargetRequest.POSITION, kp=[200.0], kd=[20.0],
        position=[0.4 * math.sin(0.05 * step + 0.7 * world_index + 0.3 * j)
                  for j in range(JOINTS)])


def world_names(client):
    return [w.name for w in client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds.worlds]


def state_bytes(state):
    """The State's bytes: protobuf writes every double as its 8 bytes, so equal bytes
    mean every number equal bit for bit."""
    return state.SerializeToString(deterministic=True)


class WorldsTest(unittest.TestCase):
    def setUp(self):
        self.context = zmq.Context()
        self.daemons, self.clients = [], []

    def tearDown(self):
        for client in self.clients:
            client.close()
        for daemon in self.daemons:
            self.assertEqual(daemon.close(), 0)
        self.context.term()

    def start(self, *extra):
        daemon = Daemon(*extra)
        self.daemons.append(daemon)
        return daemon

    def connect(self, daemon, curve=None):
        client = Client(self.context, daemon.rep, curve)
        self.clients.append(client)
        return client

    def copies(self, client, names, **options):
        for name in names:
            info = client.ok(create_world=pb.CreateWorldRequest(
                name=name, copy_of="default", **options)).create_world.world
            self.assertEqual(info.name, name)
            self.assertEqual(info.robot_count, 1)

    # (a)
    def test_batch_equals_one_by_one_for_1_2_4_workers(self):
        n, steps = 8, 200
        runs = {}
        for workers in (1, 2, 4):
            daemon = self.start("--workers", str(workers))
            client = self.connect(daemon)
            self.assertEqual(client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds.workers,
                             workers)
            batched = ["b%d" % i for i in range(n)]
            alone = ["s%d" % i for i in range(n)]
            self.copies(client, batched + alone)
            trajectory = []
            for step in range(steps):
                reply = client.ok(batch_step=pb.BatchStepRequest(
                    worlds=[pb.WorldStep(world=name, steps=1, targets=[target(i, step)])
                            for i, name in enumerate(batched)],
                    return_state=True))
                results = reply.batch_step.results
                self.assertEqual([r.world for r in results], batched)
                row = []
                for i, (name, result) in enumerate(zip(alone, results)):
                    self.assertEqual(result.status.code, CODE.OK, result.status)
                    self.assertEqual(result.steps_run, 1)
                    self.assertEqual(result.step_count, step + 1)
                    client.ok(name, set_target=target(i, step))
                    single = client.ok(name, step=pb.StepRequest(steps=1, return_state=True))
                    self.assertEqual(single.step.step_count, result.step_count)
                    self.assertEqual(single.step.time, result.time)
                    self.assertEqual(state_bytes(result.state), state_bytes(single.step.state),
                                     "world %d, step %d, %d workers" % (i, step, workers))
                    row.append(state_bytes(result.state))
                trajectory.append(row)
            # The targets differ per world: the worlds went different ways.
            self.assertEqual(len(set(trajectory[-1])), n)
            self.assertNotEqual(trajectory[0][0], trajectory[-1][0])
            runs[workers] = trajectory
        self.assertEqual(runs[1], runs[2])
        self.assertEqual(runs[1], runs[4])

    # (b) and (f)
    def test_destroy_while_batched(self):
        daemon = self.start("--workers", "2")
        batcher, other = self.connect(daemon), self.connect(daemon)
        names, references = ["w%d" % i for i in range(4)], ["r%d" % i for i in range(4)]
        self.copies(batcher, names + references)
        long_steps = 20000

        def batch(worlds, steps, step_index):
            return pb.BatchStepRequest(
                worlds=[pb.WorldStep(world=name, steps=steps,
                                     targets=[target(i % 4, step_index)])
                        for i, name in enumerate(worlds)], return_state=True)

        # A long batch, then a Ping on the same connection: the daemon reads them in
        # order, so the Ping's reply coming first means it was answered while the
        # batch ran (f).
        batch_id = batcher.send(batch_step=batch(names, long_steps, 0))
        ping_id = batcher.send(ping=pb.PingRequest(payload=b"while batching"))
        first = batcher.receive()
        self.assertEqual(first.id, ping_id, "the Ping waited for the BatchStep")
        self.assertEqual(first.ping.payload, b"while batching")
        # The batch runs: a destroy of one of its worlds waits for it to end.
        destroy_id = other.send(destroy_world=pb.DestroyWorldRequest(name="w2"))
        list_id = other.send(list_worlds=pb.ListWorldsRequest())
        done = batcher.receive()
        self.assertEqual(done.id, batch_id)
        self.assertEqual(done.status.code, CODE.OK)
        for result in done.batch_step.results:
            self.assertEqual(result.status.code, CODE.OK, result.status)
            self.assertEqual(result.steps_run, long_steps)
        destroyed = other.receive()
        self.assertEqual((destroyed.id, destroyed.status.code), (destroy_id, CODE.OK))
        listed = other.receive()
        self.assertEqual(listed.id, list_id)
        self.assertNotIn("w2", [w.name for w in listed.list_worlds.worlds])
        # The reference worlds take the same batch, undisturbed.
        batcher.ok(batch_step=batch(references, long_steps, 0))
        # The next batches: NOT_FOUND for w2 alone, the others go on.
        for step_index in range(1, 4):
            reply = batcher.ok(batch_step=batch(names, 50, step_index))
            reference = batcher.ok(batch_step=batch(references, 50, step_index))
            for result, expected in zip(reply.batch_step.results,
                                        reference.batch_step.results):
                if result.world == "w2":
                    self.assertEqual(result.status.code, CODE.NOT_FOUND)
                    self.assertIn("'w2'", result.status.message)
                    self.assertFalse(result.HasField("state"))
                    continue
                self.assertEqual(result.status.code, CODE.OK, result.status)
                self.assertEqual(state_bytes(result.state), state_bytes(expected.state))
        # Destroyed between batches: the same.
        other.ok(destroy_world=pb.DestroyWorldRequest(name="w0"))
        reply = batcher.ok(batch_step=batch(names, 1, 9))
        self.assertEqual([r.status.code for r in reply.batch_step.results],
                         [CODE.NOT_FOUND, CODE.OK, CODE.NOT_FOUND, CODE.OK])

    # (c)
    def test_limits_refuse_and_change_nothing(self):
        daemon = self.start("--max-worlds", "3")
        client = self.connect(daemon)
        self.copies(client, ["a", "b"])
        before = client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds
        self.assertEqual(before.max_worlds, 3)
        refused = client.call(create_world=pb.CreateWorldRequest(name="c", copy_of="default"))
        self.assertEqual(refused.status.code, CODE.RESOURCE_EXHAUSTED)
        self.assertIn("--max-worlds 3", refused.status.message)
        self.assertEqual(client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds, before)
        client.ok(destroy_world=pb.DestroyWorldRequest(name="a"))
        self.copies(client, ["c"])
        self.assertEqual(world_names(client), ["default", "b", "c"])

        # Room for the default world and one copy, not two.
        one = before.worlds[0].memory_bytes
        self.assertGreater(one, 0)
        daemon = self.start("--max-world-memory", str(one * 5 // 2))
        client = self.connect(daemon)
        listed = client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds
        self.assertEqual(listed.max_world_bytes, one * 5 // 2)
        self.copies(client, ["a"])
        before = client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds
        refused = client.call(create_world=pb.CreateWorldRequest(name="b", copy_of="default"))
        self.assertEqual(refused.status.code, CODE.RESOURCE_EXHAUSTED)
        self.assertIn("--max-world-memory", refused.status.message)
        self.assertEqual(client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds, before)

    # (d)
    def test_copy_state_and_snapshot_between_daemons(self):
        first, second = self.start(), self.start()
        a, b = self.connect(first), self.connect(second)
        for step in range(100):
            a.ok(set_target=target(0, step))
            a.ok(step=pb.StepRequest(steps=1))
        a.ok(create_world=pb.CreateWorldRequest(name="same", copy_of="default",
                                                copy_state=True))
        a.ok(create_world=pb.CreateWorldRequest(name="fresh", copy_of="default"))
        fresh = a.ok("fresh", get_state=pb.GetStateRequest()).get_state.state
        self.assertEqual(fresh.time, 0.0)
        snapshot = a.ok(save_state=pb.SaveStateRequest()).save_state.snapshot
        moved = b.ok(create_world=pb.CreateWorldRequest(name="moved", copy_of="default",
                                                        snapshot=snapshot)).create_world.world
        self.assertEqual(moved.step_count, 100)
        for step in range(100, 200):
            states = []
            for client, world in ((a, ""), (a, "same"), (b, "moved")):
                client.ok(world, set_target=target(0, step))
                states.append(state_bytes(client.ok(
                    world, step=pb.StepRequest(steps=1, return_state=True)).step.state))
            self.assertEqual(states[0], states[1], "copy_state, step %d" % step)
            self.assertEqual(states[0], states[2], "snapshot moved, step %d" % step)
        # A snapshot of another world's layout: refused, no world created.
        before = b.ok(list_worlds=pb.ListWorldsRequest()).list_worlds
        scene = ('<?xml version="1.0"?>\n<lcpsim version="1">\n  <ground friction="0.8"/>\n'
                 '</lcpsim>\n')
        refused = b.call(create_world=pb.CreateWorldRequest(name="other", scene_text=scene,
                                                            snapshot=snapshot))
        self.assertEqual(refused.status.code, CODE.FAILED_PRECONDITION)
        self.assertIn("create_world.snapshot", refused.status.message)
        self.assertEqual(b.ok(list_worlds=pb.ListWorldsRequest()).list_worlds, before)
        # The same scene without the snapshot is a world.
        info = b.ok(create_world=pb.CreateWorldRequest(scene_text=scene)).create_world.world
        self.assertEqual((info.name, info.robot_count, info.body_count), ("world1", 0, 0))

    def test_copy_of_an_edited_world(self):
        """A copy replays what was spawned and removed since the scene: same bodies, same
        engine ids (a snapshot of one restores into the other), same trajectory."""
        daemon = self.start()
        client = self.connect(daemon)
        self.copies(client, ["src"])
        client.ok("src", spawn=pb.SpawnRequest(
            name="ball", shape=pb.Shape(type=pb.Shape.SPHERE, radius=0.05), mass=0.2,
            pose=pb.Pose(position=pb.Vec3(x=0.5, y=0.1, z=0.6))))
        before = client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds.worlds[1]
        self.assertEqual(before.name, "src")
        client.ok("src", remove=pb.RemoveRequest(name="box"))
        client.ok("src", set_settings=pb.SetSettingsRequest(iterations=37))
        for step in range(50):
            client.ok("src", set_target=target(1, step))
            client.ok("src", step=pb.StepRequest(steps=1))
        client.ok(create_world=pb.CreateWorldRequest(name="same", copy_of="src",
                                                     copy_state=True))
        client.ok(create_world=pb.CreateWorldRequest(name="fresh", copy_of="src"))
        listed = client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds.worlds
        # A world holds more once it has stepped (the step's memory) and has more in it.
        self.assertGreater(listed[1].memory_bytes, before.memory_bytes)
        info = {world: client.ok(world, get_info=pb.GetInfoRequest()).get_info
                for world in ("src", "same", "fresh")}
        self.assertEqual([b.name for b in info["src"].bodies], ["table", "ball"])
        self.assertEqual(info["same"], info["src"])
        self.assertEqual(info["fresh"], info["src"])
        self.assertEqual(info["fresh"].settings.iterations, 37)
        snapshot = client.ok("src", save_state=pb.SaveStateRequest()).save_state.snapshot
        client.ok("fresh", restore_state=pb.RestoreStateRequest(snapshot=snapshot))
        for step in range(50, 150):
            states = []
            for world in ("src", "same", "fresh"):
                client.ok(world, set_target=target(1, step))
                states.append(state_bytes(client.ok(
                    world, step=pb.StepRequest(steps=1, return_state=True)).step.state))
            self.assertEqual(states[0], states[1], "copy_state, step %d" % step)
            self.assertEqual(states[0], states[2], "copy + snapshot, step %d" % step)

    def test_copy_carries_dynamics_edits_and_slots(self):
        """A copy takes the source's SetDynamics edits (a link's mass, a joint's damping, a
        body's friction and mass) and its snapshot slots: copied with copy_state, it steps
        bitwise as the source for 200 steps, GetInfo agrees, and the source's slot restores
        in the copy to the slot's state. Each group of edits changes the trajectory (a world
        with the other groups only, from the same state, departs from the source), so a copy
        that missed any of them would fail here."""
        daemon = self.start()
        client = self.connect(daemon)
        edits = {
            "link_mass": dict(bodies=[pb.BodyDynamics(robot=ARM, link="link4", mass=3.5)]),
            "damping": dict(joints=[pb.JointDynamics(robot=ARM, joint="joint2", damping=4.0)]),
            "box": dict(bodies=[pb.BodyDynamics(body="box", friction=0.15, mass=0.8)]),
        }
        # without[group]: a world with every edit but that group's.
        without = {group: "without_" + group for group in edits}
        self.copies(client, ["src", *without.values()])
        for step in range(20):
            client.ok("src", set_target=target(2, step))
            client.ok("src", step=pb.StepRequest(steps=1))
        for group, edit in edits.items():
            client.ok("src", set_dynamics=pb.SetDynamicsRequest(**edit))
            for other, world in without.items():
                if other != group:
                    client.ok(world, set_dynamics=pb.SetDynamicsRequest(**edit))
        # The box slides across the table, so that its friction acts.
        client.ok("src", set_body_state=pb.SetBodyStateRequest(
            name="box", twist=pb.Twist(linear=pb.Vec3(y=0.8))))
        slot = client.ok("src", save_state=pb.SaveStateRequest(slot="start")).save_state.snapshot
        client.ok(create_world=pb.CreateWorldRequest(name="copy", copy_of="src",
                                                     copy_state=True))
        self.assertEqual(client.ok("copy", get_info=pb.GetInfoRequest()).get_info,
                         client.ok("src", get_info=pb.GetInfoRequest()).get_info)
        for world in without.values():
            client.ok(world, restore_state=pb.RestoreStateRequest(snapshot=slot))
        departed = {world: False for world in without.values()}
        for step in range(20, 220):
            states = {}
            for world in ("src", "copy", *without.values()):
                client.ok(world, set_target=target(2, step))
                states[world] = state_bytes(client.ok(
                    world, step=pb.StepRequest(steps=1, return_state=True)).step.state)
            self.assertEqual(states["copy"], states["src"], "step %d" % step)
            for world in without.values():
                departed[world] |= states[world] != states["src"]
        self.assertEqual(departed, {world: True for world in without.values()})
        # The slot is the copy's too, and holds the source's bytes.
        client.ok("copy", restore_state=pb.RestoreStateRequest(slot="start"))
        self.assertEqual(client.ok("copy", save_state=pb.SaveStateRequest()).save_state.snapshot,
                         slot)

    # (e)
    def test_bad_requests_refused_precisely(self):
        daemon = self.start()
        client = self.connect(daemon)
        self.copies(client, ["a"])
        before = client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds

        def refused(code, text, world="", **call):
            reply = client.call(world, **call)
            self.assertEqual(reply.status.code, code, reply.status)
            self.assertIn(text, reply.status.message)
            self.assertEqual(client.ok(list_worlds=pb.ListWorldsRequest()).list_worlds, before)

        refused(CODE.NOT_FOUND, "no world named 'nope'", "nope", get_state=pb.GetStateRequest())
        refused(CODE.NOT_FOUND, "no world named 'nope'", "nope", step=pb.StepRequest(steps=1))
        refused(CODE.INVALID_ARGUMENT, "request.world must be empty", "a",
                list_worlds=pb.ListWorldsRequest())
        refused(CODE.INVALID_ARGUMENT, "request.world must be empty", "a",
                create_world=pb.CreateWorldRequest(copy_of="default"))
        refused(CODE.INVALID_ARGUMENT, "is not a world name",
                create_world=pb.CreateWorldRequest(name="bad name", copy_of="default"))
        refused(CODE.INVALID_ARGUMENT, "1 to 63 bytes",
                create_world=pb.CreateWorldRequest(name="x" * 64, copy_of="default"))
        refused(CODE.INVALID_ARGUMENT, "a world named 'a' exists already",
                create_world=pb.CreateWorldRequest(name="a", copy_of="default"))
        refused(CODE.INVALID_ARGUMENT, "a world named 'default' exists already",
                create_world=pb.CreateWorldRequest(name="default", copy_of="default"))
        refused(CODE.NOT_FOUND, "create_world.copy_of: no world named 'nope'",
                create_world=pb.CreateWorldRequest(name="b", copy_of="nope"))
        refused(CODE.INVALID_ARGUMENT, "needs scene_path, scene_text or copy_of",
                create_world=pb.CreateWorldRequest(name="b"))
        scene = ('<?xml version="1.0"?>\n<lcpsim version="1">\n'
                 '  <ground fricton="0.8"/>\n</lcpsim>\n')
        refused(CODE.INVALID_ARGUMENT, "create_world.scene_text: scene_text:3: <ground> has no "
                "attribute 'fricton'", create_world=pb.CreateWorldRequest(name="b",
                                                                          scene_text=scene))
        refused(CODE.INVALID_ARGUMENT, "scene_text:3: malformed XML",
                create_world=pb.CreateWorldRequest(name="b", scene_text="<lcpsim>\n<oops\n"))
        refused(CODE.NOT_FOUND, "create_world.scene_path",
                create_world=pb.CreateWorldRequest(name="b", scene_path="/etc/passwd"))
        refused(CODE.FAILED_PRECONDITION, "default world cannot be destroyed",
                destroy_world=pb.DestroyWorldRequest(name="default"))
        refused(CODE.NOT_FOUND, "no world named 'nope'",
                destroy_world=pb.DestroyWorldRequest(name="nope"))
        refused(CODE.INVALID_ARGUMENT, "named twice",
                batch_step=pb.BatchStepRequest(worlds=[pb.WorldStep(world="a", steps=1),
                                                       pb.WorldStep(world="", steps=1),
                                                       pb.WorldStep(world="a", steps=1)]))
        refused(CODE.FAILED_PRECONDITION, "realtime mode is for the default world only", "a",
                set_settings=pb.SetSettingsRequest(mode=pb.Settings.MODE_REALTIME))
        # Per world: a bad target fails its world alone, which is left as it was.
        reply = client.ok(batch_step=pb.BatchStepRequest(worlds=[
            pb.WorldStep(world="a", steps=5, targets=[pb.SetTargetRequest(robot="nobody")]),
            pb.WorldStep(world="default", steps=5)]))
        bad, good = reply.batch_step.results
        self.assertEqual(bad.status.code, CODE.NOT_FOUND)
        self.assertIn("batch_step.worlds[0] (world 'a')", bad.status.message)
        self.assertIn("'nobody'", bad.status.message)
        self.assertEqual((bad.step_count, good.step_count), (0, 5))
        self.assertEqual(client.ok("a", get_state=pb.GetStateRequest()).get_state.state.time, 0)
        # The scene file of the built-in world, below the model roots, is a world.
        info = client.ok(create_world=pb.CreateWorldRequest(
            name="arm_table", scene_text='<lcpsim version="1"><robot name="arm7" '
            'urdf="arm7.urdf" base="fixed"/></lcpsim>')).create_world.world
        self.assertEqual(info.robot_count, 1)

    def test_scene_path_below_the_model_roots(self):
        """The built-in world's scene file, read below --model-path, is the default world
        again: the same robots and bodies, and the same trajectory bit for bit."""
        server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "server")
        scene = os.path.join(server, "daemon", "scenes", "arm_table.xml")
        daemon = self.start("--model-path", server)
        client = self.connect(daemon)
        info = client.ok(create_world=pb.CreateWorldRequest(
            name="from_file", scene_path=scene)).create_world.world
        self.assertEqual((info.robot_count, info.body_count), (1, 2))
        for step in range(50):
            states = []
            for world in ("", "from_file"):
                client.ok(world, set_target=target(2, step))
                states.append(state_bytes(client.ok(
                    world, step=pb.StepRequest(steps=1, return_state=True)).step.state))
            self.assertEqual(states[0], states[1], "step %d" % step)
        # Outside the model roots: refused, as LoadModel's files are.
        refused = client.call(create_world=pb.CreateWorldRequest(
            name="outside", scene_path=os.path.join(server, "..", "README.md")))
        self.assertEqual(refused.status.code, CODE.NOT_FOUND)
        self.assertEqual(world_names(client), ["default", "from_file"])

    def test_observer_may_list_worlds_only(self):
        """With CURVE on, an observer's key may call ListWorlds (it reads), not CreateWorld,
        DestroyWorld or BatchStep (PERMISSION_DENIED, nothing changed)."""
        directory = tempfile.mkdtemp(prefix="lcpsim-worlds-")
        try:
            allow = os.path.join(directory, "allow")
            os.mkdir(allow)
            for name, where, role in (("server", directory, "controller"),
                                      ("controller", allow, "controller"),
                                      ("observer", allow, "observer")):
                subprocess.run([LCPSIMD, "--gen-keys", os.path.join(where, name), "--key-role",
                                role], check=True, stdout=subprocess.DEVNULL)
                if where == allow:  # the allow-list holds public keys only
                    shutil.move(os.path.join(allow, name + ".key"),
                                os.path.join(directory, name + ".key"))
            daemon = self.start("--curve-secret-key", os.path.join(directory, "server.key"),
                                "--authorized-keys", allow)
            server_key = load_public_key(os.path.join(directory, "server.pub"))

            def keyed(name):
                return self.connect(daemon, (server_key, load_key_pair(
                    os.path.join(directory, name + ".key"))))

            controller, observer = keyed("controller"), keyed("observer")
            self.copies(controller, ["a"])
            before = observer.ok(list_worlds=pb.ListWorldsRequest()).list_worlds
            self.assertEqual([w.name for w in before.worlds], ["default", "a"])
            for call in (dict(create_world=pb.CreateWorldRequest(name="b", copy_of="a")),
                         dict(destroy_world=pb.DestroyWorldRequest(name="a")),
                         dict(batch_step=pb.BatchStepRequest(
                             worlds=[pb.WorldStep(world="a", steps=1)]))):
                reply = observer.call(**call)
                self.assertEqual(reply.status.code, CODE.PERMISSION_DENIED, reply.status)
                self.assertEqual(controller.ok(list_worlds=pb.ListWorldsRequest()).list_worlds,
                                 before)
            # Reading a world by name is an observer's too; stepping it is not.
            self.assertEqual(observer.ok("a", get_state=pb.GetStateRequest()).get_state.state
                             .time, 0)
            reply = observer.call("a", step=pb.StepRequest(steps=1))
            self.assertEqual(reply.status.code, CODE.PERMISSION_DENIED)
        finally:
            shutil.rmtree(directory)

    def test_sigterm_during_batch(self):
        """SIGTERM while the workers step: they stop after their current slice of steps
        and the daemon exits cleanly (the sanitizer builds check what it frees)."""
        daemon = self.start("--workers", "2")
        client = self.connect(daemon)
        self.copies(client, ["w0", "w1", "w2"])
        client.send(batch_step=pb.BatchStepRequest(worlds=[
            pb.WorldStep(world=name, steps=10000000) for name in ("w0", "w1", "w2")]))
        ping_id = client.send(ping=pb.PingRequest())
        self.assertEqual(client.receive().id, ping_id)
        self.daemons.remove(daemon)
        self.assertEqual(daemon.close(), 0)

    def test_stream_of_another_world(self):
        daemon = self.start()
        client = self.connect(daemon)
        self.copies(client, ["a"])
        subscriber = self.context.socket(zmq.SUB)
        subscriber.setsockopt(zmq.LINGER, 0)
        subscriber.setsockopt(zmq.RCVTIMEO, TIMEOUT_MS)
        subscriber.setsockopt(zmq.SUBSCRIBE, b"w/a/state")
        subscriber.connect(daemon.pub)
        try:
            client.ok("a", subscribe=pb.SubscribeRequest(every_steps=1))
            # PUB drops what is sent before the subscription arrives: step until a
            # state comes (each batch publishes one).
            subscriber.setsockopt(zmq.RCVTIMEO, 100)
            frame = None
            for _ in range(200):
                client.ok(batch_step=pb.BatchStepRequest(worlds=[pb.WorldStep(world="a",
                                                                              steps=1)]))
                client.ok(step=pb.StepRequest(steps=1))  # the default world publishes not
                try:
                    frame = subscriber.recv()
                    break
                except zmq.Again:
                    continue
            self.assertIsNotNone(frame)
            self.assertTrue(frame.startswith(b"w/a/state"))
            state = pb.State()
            state.ParseFromString(frame[len(b"w/a/state"):])
            self.assertEqual(state.world, "a")
            self.assertGreater(state.time, 0)
        finally:
            subscriber.close()


if __name__ == "__main__":
    unittest.main()
