# SPDX-License-Identifier: Apache-2.0
"""lcpsimd --http: status codes, the viewer's files, /healthz, /metrics (parsed by
prometheus_client's text parser, its request counters equal to the requests sent) and the
/ws stream (a RecordHeader, the scene, then States in step order), with bad input: unknown
paths, other methods, oversized, binary and malformed WebSocket messages, and a viewer that
never reads. Runs on Debian's /usr/bin/python3 with python3-websocket and
python3-prometheus-client."""

import os
import socket
import subprocess
import tempfile
import time
import unittest

import websocket

import metrics_scrape
from lcpsim import Client
from lcpsim.v1 import lcpsim_pb2 as pb

LCPSIMD = os.environ["LCPSIMD"]


class Daemon:
    def __init__(self, *extra):
        self.process = subprocess.Popen(
            [LCPSIMD, "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0",
             "--http", "127.0.0.1:0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().split()
        fields = dict(f.split("=", 1) for f in line[2:])
        self.rep, self.url = fields["rep"], fields["http"]
        self.host, self.port = self.url[len("http://"):].rsplit(":", 1)
        self.port = int(self.port)

    def close(self):
        """Stops the daemon (SIGTERM); its exit status and what it wrote to stderr."""
        self.process.terminate()
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return self.process.returncode, err


def http_request(daemon, raw):
    """Sends raw bytes, returns (status, headers, body) of the reply."""
    return metrics_scrape.exchange(daemon.host, daemon.port, raw)


def get(daemon, path):
    return metrics_scrape.get(daemon.host, daemon.port, path)


def metrics(daemon):
    headers, samples = metrics_scrape.scrape(daemon.host, daemon.port)
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    return samples


def entry(data):
    e = pb.RecordEntry()
    e.ParseFromString(data)
    return e


def ws_connect(daemon, query=""):
    return websocket.create_connection("ws://%s:%d/ws%s" % (daemon.host, daemon.port, query),
                                       timeout=10)


def close_code(ws):
    """Reads until the daemon's close frame; its status code."""
    while True:
        opcode, data = ws.recv_data(control_frame=True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return int.from_bytes(data[:2], "big")


class HttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.viewer = tempfile.TemporaryDirectory()
        root = cls.viewer.name
        os.makedirs(os.path.join(root, "assets"))
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write("<!doctype html><title>lcpsim</title>\n")
        with open(os.path.join(root, "assets", "app.js"), "w") as f:
            f.write("console.log('lcpsim');\n")
        with open(os.path.join(root, ".hidden"), "w") as f:
            f.write("secret\n")
        cls.outside = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        cls.outside.write("outside\n")
        cls.outside.close()
        os.symlink(cls.outside.name, os.path.join(root, "link.txt"))
        cls.daemon = Daemon("--viewer-dir", root)
        cls.client = Client(cls.daemon.rep, timeout_ms=10000)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        status, err = cls.daemon.close()
        cls.viewer.cleanup()
        os.unlink(cls.outside.name)
        # A clean exit with every viewer's connection and the HTTP side closed (and, in the
        # sanitizer build, nothing leaked or misused).
        if status != 0 or "Sanitizer" in err or "runtime error" in err:
            raise AssertionError("lcpsimd exited with %d:\n%s" % (status, err[-4000:]))

    def test_healthz(self):
        status, headers, body = get(self.daemon, "/healthz")
        self.assertEqual((status, body), (200, b"ok\n"))

    def test_files_and_status_codes(self):
        status, headers, body = get(self.daemon, "/")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/html"))
        self.assertIn(b"<title>lcpsim</title>", body)
        status, headers, body = get(self.daemon, "/assets/app.js")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/javascript"))
        for path in ("/nope", "/assets/none.js", "/../../etc/passwd", "/assets/../../etc/passwd",
                     "/.hidden", "/link.txt", "/assets", "/%2e%2e/%2e%2e/etc/passwd"):
            self.assertEqual(get(self.daemon, path)[0], 404, path)
        status, headers, _ = http_request(
            self.daemon, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        self.assertEqual(status, 405)
        self.assertEqual(headers.get("allow"), "GET")
        self.assertEqual(get(self.daemon, "/ws")[0], 400)  # not an upgrade
        # HEAD: the headers of the GET, no body (the next request on the connection is served).
        with socket.create_connection((self.daemon.host, self.daemon.port), timeout=10) as s:
            s.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                      b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = metrics_scrape.receive(s)
        first, second = data.split(b"HTTP/1.1 200", 2)[1:]
        self.assertIn(b"content-length: 3", first.lower())
        self.assertTrue(first.endswith(b"\r\n\r\n"), first)
        self.assertTrue(second.endswith(b"\r\n\r\nok\n"), second)

    def test_metrics_count_requests(self):
        before = metrics(self.daemon)

        def count(call, status):
            key = ("lcpsim_requests_total", (("call", call), ("status", status)))
            return after.get(key, 0) - before.get(key, 0)

        for _ in range(7):
            self.client.ping()
        for _ in range(5):
            self.client.step(steps=3)
        with self.assertRaises(Exception):
            self.client.remove("no such body")
        after = metrics(self.daemon)
        self.assertEqual(count("ping", "OK"), 7)
        self.assertEqual(count("step", "OK"), 5)
        self.assertEqual(count("remove", "NOT_FOUND"), 1)
        steps = after[("lcpsim_steps_total", ())] - before[("lcpsim_steps_total", ())]
        self.assertEqual(steps, 15)
        histogram = (after[("lcpsim_step_seconds_count", ())]
                     - before[("lcpsim_step_seconds_count", ())])
        self.assertEqual(histogram, 15)
        self.assertEqual(after[("lcpsim_step_seconds_bucket", (("le", "+Inf"),))],
                         after[("lcpsim_step_seconds_count", ())])
        self.assertGreaterEqual(after[("lcpsim_clients", ())], 1)
        self.assertGreater(after[("process_resident_memory_bytes", ())], 0)

    def test_stream(self):
        ws = ws_connect(self.daemon, "?hz=30&contacts=1")
        header = entry(ws.recv())
        self.assertEqual(header.WhichOneof("entry"), "header")
        self.assertEqual(header.header.magic, "lcpsim-recording")
        self.assertEqual(header.header.format_version, 1)
        self.assertGreater(header.header.timestep, 0)
        scene = entry(ws.recv())
        self.assertEqual(scene.WhichOneof("entry"), "scene")
        revision = scene.scene.scene.revision
        last = -1
        for _ in range(4):
            self.client.step(steps=10)
            e = entry(ws.recv())
            self.assertEqual(e.WhichOneof("entry"), "state")
            self.assertEqual(e.state.scene_revision, revision)
            self.assertGreater(e.state.step_count, last)
            last = e.state.step_count
        self.assertEqual(last, self.client.get_state().step_count)
        # A change without a step is streamed too: the box moved by SetBodyState.
        self.client.set_body_state("box", position=[0.5, 0.3, 1.5])
        e = entry(ws.recv())
        self.assertEqual(e.WhichOneof("entry"), "state")
        self.assertEqual(e.state.step_count, last)
        box = next(b for b in e.state.bodies if b.name == "box")
        self.assertAlmostEqual(box.pose.position.z, 1.5, delta=1e-12)
        # The scene changes: its new description comes before the next State.
        self.client.spawn("sphere", name="ball", radius=0.1, mass=1.0, position=[0, 2, 1])
        self.client.step(steps=1)
        while True:
            e = entry(ws.recv())
            if e.WhichOneof("entry") != "state":
                break
        self.assertEqual(e.WhichOneof("entry"), "scene")
        self.assertNotEqual(e.scene.scene.revision, revision)
        e = entry(ws.recv())
        self.assertEqual(e.state.scene_revision, e.state.scene_revision)
        self.client.remove("ball")
        # A well-formed control message is accepted (and ignored: live, no player).
        ws.send('{"cmd":"seek","t":1.5,"speed":2}')
        self.client.step(steps=1)
        while entry(ws.recv()).WhichOneof("entry") != "state":
            pass
        ws.close()

    def test_bad_messages_close(self):
        cases = [("x" * (70 << 10), websocket.ABNF.OPCODE_TEXT, 1009),
                 (b"\x01\x02", websocket.ABNF.OPCODE_BINARY, 1003),
                 ("{nope", websocket.ABNF.OPCODE_TEXT, 1007),
                 ('{"cmd":"fly"}', websocket.ABNF.OPCODE_TEXT, 1007),
                 (b"\xff\xfe", websocket.ABNF.OPCODE_TEXT, 1007)]
        for payload, opcode, code in cases:
            ws = ws_connect(self.daemon)
            ws.send(payload, opcode)
            self.assertEqual(close_code(ws), code, payload[:16])
            ws.close()
        self.assertEqual(get(self.daemon, "/healthz")[0], 200)
        # A WebSocket elsewhere than /ws is refused.
        with self.assertRaises(websocket.WebSocketException):
            websocket.create_connection("ws://%s:%d/other" % (self.daemon.host, self.daemon.port),
                                        timeout=10)

    def test_stalled_viewer(self):
        # A viewer that never reads, with a small receive buffer, while the world steps.
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect((self.daemon.host, self.daemon.port))
        stalled.sendall(b"GET /ws?hz=60 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        b"Sec-WebSocket-Version: 13\r\n\r\n")
        reader = ws_connect(self.daemon)
        before = metrics(self.daemon)
        # Larger States (contacts of many bodies) fill the stalled socket's buffers sooner.
        for i in range(20):
            self.client.spawn("box", name="crate%d" % i, half_extents=[0.05, 0.05, 0.05], mass=0.5,
                              position=[1 + 0.2 * (i % 5), -1 + 0.2 * (i // 5), 0.3])
        states = 0
        deadline_steps = 0
        while deadline_steps < 400 or after_dropped(self.daemon, before) == 0:
            self.client.step(steps=5)
            deadline_steps += 1
            time.sleep(0.005)
            self.assertLess(deadline_steps, 4000, "no frame dropped for the stalled viewer")
        # The reading viewer is served the latest states.
        reader.settimeout(10)
        last = None
        while True:
            e = entry(reader.recv())
            if e.WhichOneof("entry") == "state":
                states += 1
                last = e.state.step_count
                if last == self.client.get_state().step_count:
                    break
        self.assertGreater(states, 0)
        after = metrics(self.daemon)
        self.assertEqual(after[("lcpsim_stream_subscribers", ())], 2)
        # Bounded: the stalled viewer holds at most a State and the unsent tail of one.
        growth = (after[("process_resident_memory_bytes", ())]
                  - before[("process_resident_memory_bytes", ())])
        self.assertLess(growth, 32 << 20)
        stalled.close()
        reader.close()
        for i in range(20):
            self.client.remove("crate%d" % i)


def after_dropped(daemon, before):
    key = ("lcpsim_viewer_frames_dropped_total", ())
    return metrics(daemon)[key] - before[key]


class ExposureTest(unittest.TestCase):
    def test_beyond_loopback_needs_insecure(self):
        result = subprocess.run([LCPSIMD, "--bind", "tcp://127.0.0.1:0", "--pub",
                                 "tcp://127.0.0.1:0", "--http", "0.0.0.0:0"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("--insecure", result.stderr)
        result = subprocess.run([LCPSIMD, "--http", "nonsense"], capture_output=True, text=True,
                                timeout=30)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("HOST:PORT", result.stderr)


if __name__ == "__main__":
    unittest.main()
