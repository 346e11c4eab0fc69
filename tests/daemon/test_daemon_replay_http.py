# SPDX-License-Identifier: Apache-2.0
"""lcpsimd --replay FILE --http: each viewer of /ws plays the recording on its own. A live
daemon records a run with a Spawn halfway (two scenes); the replay's viewers get a RecordHeader
marked as a replay with the timeline's length, the scene in force, then States in time order,
each byte-equal to the recorded one (read back with lcpsim.read_recording) and preceded by its
own scene. Controls: play, pause, seek, speed (bad values ignored, the connection kept), two
viewers at independent positions, the end of the recording reached with the daemon still up.
Also the live daemon's {"cmd":"contacts"}. No timing is asserted: where a wrong daemon would send
a State it should not, a seek's reply (the seek's State, sent at once) serves as the barrier
after which nothing else may have come. Runs on Debian's /usr/bin/python3 with
python3-websocket."""

import math
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import websocket

import metrics_scrape
from lcpsim import Client, read_recording
from lcpsim.v1 import lcpsim_pb2 as pb

LCPSIMD = os.environ["LCPSIMD"]
STEPS_BEFORE_SPAWN = 60
STEPS_AFTER_SPAWN = 60


def first_line_fields(process):
    """The key=value fields of the daemon's first line, after "lcpsimd listening"."""
    words = process.stdout.readline().split()
    assert words[:2] == ["lcpsimd", "listening"], words
    return dict(w.split("=", 1) for w in words[2:] if "=" in w), words


def stop(process):
    """SIGTERM; the exit status and stderr."""
    process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return process.returncode, err


def assert_clean_exit(status, err):
    if status != 0 or "Sanitizer" in err or "runtime error" in err:
        raise AssertionError("lcpsimd exited with %d:\n%s" % (status, err[-4000:]))


def get(host, port, path):
    """(status, body) of GET path."""
    status, _, body = metrics_scrape.get(host, port, path)
    return status, body


def entry(data):
    e = pb.RecordEntry()
    e.ParseFromString(data)
    return e


class ReplayHttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.dir.name, "run.lcprec")
        # The recording: the built-in world stepped, a sphere spawned (a new scene), stepped on.
        live = subprocess.Popen([LCPSIMD, "--bind", "tcp://127.0.0.1:0", "--pub",
                                 "tcp://127.0.0.1:0", "--record", cls.path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        fields, _ = first_line_fields(live)
        with Client(fields["rep"], timeout_ms=10000) as client:
            client.step(steps=STEPS_BEFORE_SPAWN)
            client.spawn("sphere", name="ball", radius=0.1, mass=1.0, position=[0, 2, 1])
            client.step(steps=STEPS_AFTER_SPAWN)
        assert_clean_exit(*stop(live))
        cls.entries = list(read_recording(cls.path, allow_truncated=False))
        cls.scenes = [e for e in cls.entries if e.WhichOneof("entry") == "scene"]
        cls.states = []  # (RecordEntry, the scene in force)
        scene = None
        for e in cls.entries:
            if e.WhichOneof("entry") == "scene":
                scene = e
            elif e.WhichOneof("entry") == "state":
                cls.states.append((e, scene))
        assert len(cls.scenes) == 2, len(cls.scenes)
        cls.start = cls.states[0][0].state.time
        cls.end = cls.states[-1][0].state.time
        # The first State of the second scene.
        cls.change = next(i for i, (_, s) in enumerate(cls.states) if s is cls.scenes[1])

        cls.replay = subprocess.Popen([LCPSIMD, "--replay", cls.path, "--pub", "tcp://127.0.0.1:0",
                                       "--http", "127.0.0.1:0"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cls.fields, cls.words = first_line_fields(cls.replay)
        url = cls.fields["http"]
        cls.host, port = url[len("http://"):].rsplit(":", 1)
        cls.port = int(port)

    @classmethod
    def tearDownClass(cls):
        # Viewers still connected at SIGTERM, one playing and one paused: their players close
        # with the HTTP side (the sanitizer build checks nothing is leaked or used after).
        playing = websocket.create_connection("ws://%s:%d/ws" % (cls.host, cls.port), timeout=10)
        paused = websocket.create_connection("ws://%s:%d/ws?paused=1" % (cls.host, cls.port),
                                             timeout=10)
        for ws in (playing, paused):
            ws.recv()  # the header: connected
        status, err = stop(cls.replay)
        playing.close()
        paused.close()
        cls.dir.cleanup()
        assert_clean_exit(status, err)

    # ---- helpers ----

    def connect(self, query=""):
        ws = websocket.create_connection("ws://%s:%d/ws%s" % (self.host, self.port, query),
                                         timeout=10)
        self.addCleanup(ws.close)
        return ws

    def receive(self, ws):
        data = ws.recv()
        self.assertIsInstance(data, bytes)
        return data, entry(data)

    def state_at(self, t):
        """The index of the last State at or before t (the first when t is before it)."""
        index = 0
        for i, (e, _) in enumerate(self.states):
            if e.state.time <= t:
                index = i
        return index

    def assert_recorded(self, data, index):
        """data is the recording's State number index, byte for byte."""
        recorded = self.states[index][0]
        self.assertEqual(entry(data), recorded)
        self.assertEqual(data, recorded.SerializeToString())

    def assert_start(self, ws):
        """The header, the first scene, the first State."""
        _, header = self.receive(ws)
        self.assertEqual(header.WhichOneof("entry"), "header")
        self.assertTrue(header.header.replay)
        self.assertAlmostEqual(header.header.duration, self.end - self.start, delta=1e-9)
        self.assertEqual(header.header.magic, self.entries[0].header.magic)
        self.assertEqual(header.header.timestep, self.entries[0].header.timestep)
        data, scene = self.receive(ws)
        self.assertEqual(scene, self.scenes[0])
        data, _ = self.receive(ws)
        self.assert_recorded(data, 0)

    def seek(self, ws, t, scene=None):
        """Seeks to t: the scene (when given) then the State at or before t come next."""
        ws.send('{"cmd":"seek","t":%r}' % t)
        if scene is not None:
            _, e = self.receive(ws)
            self.assertEqual(e, scene)
        data, _ = self.receive(ws)
        self.assert_recorded(data, self.state_at(t))

    def drain_until_seek(self, ws, t):
        """Seeks to t while playback may still be sending; returns the States received before
        the seek's State (a scene may come before it)."""
        ws.send('{"cmd":"seek","t":%r}' % t)
        expected = self.states[self.state_at(t)][0]
        before = []
        while True:
            data, e = self.receive(ws)
            if e == expected:
                return before
            if e.WhichOneof("entry") == "state":
                before.append(e)

    def mid(self, i):
        """A time between State i and State i + 1."""
        return 0.5 * (self.states[i][0].state.time + self.states[i + 1][0].state.time)

    # ---- tests ----

    def test_first_line(self):
        self.assertEqual(self.words[:2], ["lcpsimd", "listening"])
        self.assertEqual(self.fields["rep"], "-")
        self.assertIn("replay", self.words)
        # The field order: rep, pub, http, then the recording's summary.
        keys = [w.split("=", 1)[0] for w in self.words[2:]]
        self.assertEqual(keys, ["rep", "pub", "http", "replay", "states", "duration", "scenes"])
        self.assertEqual(int(self.fields["states"]), len(self.states))
        self.assertEqual(int(self.fields["scenes"]), 2)
        self.assertAlmostEqual(float(self.fields["duration"]), self.end - self.start, delta=1e-9)
        self.assertEqual(get(self.host, self.port, "/healthz"), (200, b"ok\n"))

    def test_plays_to_the_end_and_stays_up(self):
        ws = self.connect("?paused=1")
        self.assert_start(ws)
        ws.send('{"cmd":"speed","speed":4}')
        ws.send('{"cmd":"play"}')
        # States in increasing time, each after the scene in force for it, up to the last.
        scene = self.scenes[0]
        last_time = self.start
        seen = 0
        while True:
            data, e = self.receive(ws)
            if e.WhichOneof("entry") == "scene":
                self.assertNotEqual(e, scene)
                scene = e
                continue
            self.assertEqual(e.WhichOneof("entry"), "state")
            self.assertGreater(e.state.time, last_time)
            last_time = e.state.time
            index = next(i for i, (s, _) in enumerate(self.states) if s == e)
            self.assert_recorded(data, index)
            self.assertEqual(self.states[index][1], scene)
            seen += 1
            if index == len(self.states) - 1:
                break
        self.assertEqual(scene, self.scenes[1])
        self.assertGreater(seen, 0)
        # At the end: paused at the last State, the daemon up, the viewer still served.
        self.assertEqual(get(self.host, self.port, "/healthz"), (200, b"ok\n"))
        self.seek(ws, self.mid(3), scene=self.scenes[0])
        # Play at the end starts over (from a seek to the last State, which is the end; slowly,
        # so that the first State is not replaced by a later one before it is written).
        self.seek(ws, self.end + 1.0, scene=self.scenes[1])
        ws.send('{"cmd":"speed","speed":1e-3}')
        ws.send('{"cmd":"play"}')
        _, e = self.receive(ws)
        self.assertEqual(e, self.scenes[0])
        data, _ = self.receive(ws)
        self.assert_recorded(data, 0)

    def test_starts_playing(self):
        ws = self.connect()
        self.assert_start(ws)
        # Playing at --replay-speed 1: more States come without any control.
        _, e = self.receive(ws)
        self.assertIn(e.WhichOneof("entry"), ("state", "scene"))

    def test_paused_seeks(self):
        ws = self.connect("?paused=1")
        self.assert_start(ws)
        # Within the first scene: no scene sent again.
        self.seek(ws, self.mid(10))
        # Across the scene change, forward and back: the scene in force first.
        self.seek(ws, self.mid(self.change + 5), scene=self.scenes[1])
        self.seek(ws, self.states[self.change][0].state.time)
        self.seek(ws, self.mid(self.change - 2), scene=self.scenes[0])
        # Before the start and after the end: the first and the last State.
        self.seek(ws, self.start - 5.0)
        self.seek(ws, self.end + 5.0, scene=self.scenes[1])
        # Exactly at a State's time: that State.
        self.seek(ws, self.states[7][0].state.time, scene=self.scenes[0])

    def test_pause_holds(self):
        ws = self.connect("?paused=1")
        self.assert_start(ws)
        ws.send('{"cmd":"speed","speed":0.05}')
        ws.send('{"cmd":"play"}')
        _, e = self.receive(ws)  # playing: a State comes
        self.assertEqual(e.WhichOneof("entry"), "state")
        ws.send('{"cmd":"pause"}')
        # The States sent before the pause was processed come before this seek's State (one
        # near the end, which the playing would take a long time to reach)...
        before = self.drain_until_seek(ws, self.mid(len(self.states) - 3))
        self.assertTrue(all(e.state.time < self.states[self.change][0].state.time
                            for e in before))
        # ...and after it, paused, nothing but the next seek's State, however long we wait.
        time.sleep(0.3)
        self.seek(ws, self.mid(2), scene=self.scenes[0])

    def test_speed(self):
        ws = self.connect("?paused=1")
        self.assert_start(ws)
        # Nearly still: in 0.3 s of play the timeline moves less than a State's period.
        ws.send('{"cmd":"speed","speed":1e-3}')
        ws.send('{"cmd":"play"}')
        time.sleep(0.3)
        self.assertEqual(self.drain_until_seek(ws, self.start), [])
        ws.send('{"cmd":"pause"}')
        # Fast, and play with a speed: to the last State.
        ws.send('{"cmd":"play","speed":100}')
        while True:
            data, e = self.receive(ws)
            if e == self.states[-1][0]:
                break

    def test_independent_viewers(self):
        a = self.connect("?paused=1")
        b = self.connect("?paused=1")
        self.assert_start(a)
        self.assert_start(b)
        self.seek(a, self.mid(5))
        self.seek(b, self.mid(self.change + 3), scene=self.scenes[1])
        # a plays; b, paused, gets nothing but its own seek's State.
        a.send('{"cmd":"speed","speed":1000}')
        a.send('{"cmd":"play"}')
        while True:
            _, e = self.receive(a)
            if e == self.states[-1][0]:
                break
        self.seek(b, self.mid(self.change + 4))
        self.seek(a, self.mid(1), scene=self.scenes[0])

    def test_bad_values_ignored(self):
        ws = self.connect("?paused=1")
        self.assert_start(ws)
        for bad in ('{"cmd":"speed","speed":-1}', '{"cmd":"speed","speed":0}',
                    '{"cmd":"speed","speed":1e999}', '{"cmd":"seek","t":1e999}',
                    '{"cmd":"seek","t":-1e999}', '{"cmd":"play","speed":-2}'):
            ws.send(bad)
        # Still open, still paused (the play with a bad speed was ignored whole).
        time.sleep(0.2)
        self.seek(ws, self.mid(6))
        # contacts: accepted, a replay's contacts are the recording's.
        ws.send('{"cmd":"contacts","on":true}')
        self.seek(ws, self.mid(8))

    def test_malformed_controls_close(self):
        for text in ('{"cmd":"speed"}', '{"cmd":"seek"}', '{"cmd":"contacts"}',
                     '{"cmd":"contacts","on":1}', '{"cmd":"rewind"}', '{"cmd":"speed","speed":"x"}'):
            ws = self.connect("?paused=1")
            self.assert_start(ws)
            ws.send(text)
            while True:
                opcode, data = ws.recv_data(control_frame=True)
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    self.assertEqual(int.from_bytes(data[:2], "big"), 1007, text)
                    break

    def test_stalled_viewer_drops_states(self):
        # A viewer that never reads (a small receive buffer) and seeks over and over: each seek
        # gives it a State; once its socket is full, a newer State replaces the unsent one.
        stalled = websocket.create_connection(
            "ws://%s:%d/ws?paused=1" % (self.host, self.port), timeout=10,
            sockopt=((socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),))
        self.addCleanup(stalled.close)
        key = ("lcpsim_viewer_frames_dropped_total", ())
        before = self.metrics()[key]
        sent = 0
        while self.metrics()[key] == before:
            for i in range(200):
                stalled.send('{"cmd":"seek","t":%r}' % self.mid(2 + i % 2 * 10))
            sent += 200
            self.assertLess(sent, 20000, "no State dropped for a viewer that never reads")
        # The daemon serves the others as before.
        ws = self.connect("?paused=1")
        self.assert_start(ws)
        self.seek(ws, self.mid(9))

    def metrics(self):
        return metrics_scrape.scrape(self.host, self.port)[1]

    def test_metrics(self):
        samples = self.metrics()
        self.assertEqual(samples[("lcpsim_steps_total", ())], 0)
        self.assertIn(("lcpsim_viewer_frames_dropped_total", ()), samples)
        self.assertGreaterEqual(samples[("lcpsim_stream_subscribers", ())], 0)


class ReplayOptionsTest(unittest.TestCase):
    def test_beyond_loopback_needs_insecure(self):
        with tempfile.NamedTemporaryFile(suffix=".lcprec") as f:
            result = subprocess.run([LCPSIMD, "--replay", f.name, "--pub", "tcp://127.0.0.1:0",
                                     "--http", "0.0.0.0:0"],
                                    capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("--insecure", result.stderr)


class LiveContactsTest(unittest.TestCase):
    def test_contacts_on_and_off(self):
        live = subprocess.Popen([LCPSIMD, "--bind", "tcp://127.0.0.1:0", "--pub",
                                 "tcp://127.0.0.1:0", "--http", "127.0.0.1:0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        fields, _ = first_line_fields(live)
        host, port = fields["http"][len("http://"):].rsplit(":", 1)
        try:
            with Client(fields["rep"], timeout_ms=10000) as client:
                client.step(steps=50)  # the box rests on the table: contacts
                ws = websocket.create_connection("ws://%s:%s/ws" % (host, port), timeout=10)
                try:
                    self.assertEqual(entry(ws.recv()).WhichOneof("entry"), "header")
                    self.assertEqual(entry(ws.recv()).WhichOneof("entry"), "scene")

                    def next_state():
                        client.step(steps=1)
                        step = client.get_state().step_count
                        while True:
                            e = entry(ws.recv())
                            if e.WhichOneof("entry") == "state" and e.state.step_count == step:
                                return e.state

                    def until(contacts):
                        """Steps until a State with (or without) contacts comes: the control
                        message and the next Step go over different sockets."""
                        for _ in range(50):
                            if (len(next_state().contacts) > 0) == contacts:
                                return
                        self.fail("no State %s contacts" % ("with" if contacts else "without"))

                    self.assertEqual(len(next_state().contacts), 0)
                    ws.send('{"cmd":"contacts","on":true}')
                    until(True)
                    ws.send('{"cmd":"contacts","on":false}')
                    until(False)
                finally:
                    ws.close()
        finally:
            assert_clean_exit(*stop(live))


if __name__ == "__main__":
    unittest.main()
