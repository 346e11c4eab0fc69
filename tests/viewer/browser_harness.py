# SPDX-License-Identifier: Apache-2.0
"""Test support for the viewer page in a real browser, on Debian's python3 alone:

- Chromium: headless, driven over the Chrome DevTools protocol on a pipe
  (--remote-debugging-pipe: JSON messages ending in a NUL byte, fd 3 into the browser, fd 4 out
  of it), so no WebSocket client and no npm package is needed to drive it;
- Daemon: an lcpsimd of the test's own (its first line's key=value fields: rep, pub, http, and
  a replay's states, duration, scenes), stopped with SIGTERM;
- ViewerServer: serves a directory over HTTP and the WebSocket /ws (RFC 6455: the handshake's
  accept key, server frames unmasked, client frames masked) sending binary messages it is given
  and keeping the text messages the page sends: what the page says, word for word;
- read_png: the pixels of a screenshot (8-bit RGB or RGBA, no interlace: what Chromium writes);
- project and convex_hull_mask: where a point and a solid of the world land on the screen for
  the page's camera (a three.js PerspectiveCamera looking at `target` with z up).
"""

import base64
import hashlib
import http.server
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import zlib


# ---- lcpsimd ----

DAEMON_STARTUP_SECONDS = 30.0  # generous: an ASan build on a loaded machine starts slowly


class Daemon:
    """`$LCPSIMD ARGS...`; `fields` holds the key=value words of the first line it prints
    ("lcpsimd listening rep=... pub=... http=URL", a replay's "states=N duration=S ...")."""

    def __init__(self, args):
        path = os.environ.get("LCPSIMD")
        if not path:
            raise RuntimeError("set LCPSIMD to the lcpsimd executable")
        # stdout goes to a file, not a pipe: the daemon can never block on a full pipe.
        self._stdout = tempfile.NamedTemporaryFile(prefix="lcpsimd-viewer-test-", suffix=".out")
        self.args = [path, *args]
        self.process = subprocess.Popen(self.args, stdout=self._stdout, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + DAEMON_STARTUP_SECONDS
        while True:
            with open(self._stdout.name, "r") as out:
                line = out.readline()
            if line.endswith("\n"):
                self.first_line = line.strip()
                self.fields = dict(word.split("=", 1) for word in line.split() if "=" in word)
                return
            if self.process.poll() is not None:
                raise RuntimeError("%s exited with %d before its first line"
                                   % (" ".join(self.args), self.process.returncode))
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("%s printed nothing within %g s"
                                   % (" ".join(self.args), DAEMON_STARTUP_SECONDS))
            time.sleep(0.01)

    @property
    def url(self):
        """The page's URL: the http= of the first line, with a slash."""
        if "http" not in self.fields:
            raise AssertionError("%s: no http= on its first line: %r" % (" ".join(self.args), self.first_line))
        return self.fields["http"].rstrip("/") + "/"

    def stop(self):
        """SIGTERM, then the exit status (SIGKILL after 20 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stdout.close()
        return self.process.returncode


# ---- PNG ----

def read_png(data):
    """(width, height, rows): rows[y] is a bytes of RGB triples."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat, header = 8, [], None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d colour %d interlace %d" % (depth, colour, interlace))
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(b"".join(idat))
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:  # Paeth's predictor
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predicted = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[i] = (line[i] + predicted) & 0xFF
        previous = line
        if channels == 4:
            rgb = bytearray(width * 3)
            rgb[0::3], rgb[1::3], rgb[2::3] = line[0::4], line[1::4], line[2::4]
            rows.append(bytes(rgb))
        else:
            rows.append(bytes(line))
    return width, height, rows


# ---- camera geometry ----

def _sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _unit(a):
    n = math.sqrt(_dot(a, a))
    return [a[0] / n, a[1] / n, a[2] / n]


def project(point, camera, target, fov_deg, width, height):
    """Pixel (x, y) of a world point: the camera looks from `camera` at `target`, up = +z,
    vertical field of view fov_deg; x right, y down from the top-left corner."""
    forward = _unit(_sub(target, camera))
    right = _unit(_cross(forward, [0.0, 0.0, 1.0]))
    up = _cross(right, forward)
    d = _sub(point, camera)
    depth = _dot(d, forward)
    if depth <= 0:
        raise ValueError("point behind the camera")
    focal = (height / 2.0) / math.tan(math.radians(fov_deg) / 2.0)
    return (width / 2.0 + focal * _dot(d, right) / depth,
            height / 2.0 - focal * _dot(d, up) / depth)


def rotate(q, v):
    """v rotated by the unit quaternion q = (w, x, y, z)."""
    w, x, y, z = q
    u = [x, y, z]
    t = [2.0 * c for c in _cross(u, v)]
    c = _cross(u, t)
    return [v[i] + w * t[i] + c[i] for i in range(3)]


def box_corners(centre, half_extents, orientation=(1.0, 0.0, 0.0, 0.0)):
    corners = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                local = [sx * half_extents[0], sy * half_extents[1], sz * half_extents[2]]
                r = rotate(orientation, local)
                corners.append([centre[i] + r[i] for i in range(3)])
    return corners


def convex_hull(points):
    """Andrew's monotone chain: the hull's vertices counter-clockwise (in x-right, y-up terms)."""
    points = sorted(set(points))
    if len(points) < 3:
        return points

    def turn(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in points:
        while len(lower) >= 2 and turn(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(points):
        while len(upper) >= 2 and turn(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def convex_hull_mask(pixels, margin):
    """The integer pixel centres (x, y) inside the convex hull of `pixels` and at least `margin`
    pixels from its edges: the interior of a convex solid's silhouette, its anti-aliased border
    left out."""
    hull = convex_hull([(float(x), float(y)) for x, y in pixels])
    edges = []
    for i in range(len(hull)):
        (x0, y0), (x1, y1) = hull[i], hull[(i + 1) % len(hull)]
        length = math.hypot(x1 - x0, y1 - y0)
        edges.append((x0, y0, (x1 - x0) / length, (y1 - y0) / length))
    xs = [p[0] for p in hull]
    ys = [p[1] for p in hull]
    inside = []
    for y in range(int(min(ys)), int(max(ys)) + 1):
        for x in range(int(min(xs)), int(max(xs)) + 1):
            cx, cy = x + 0.5, y + 0.5
            # Inside a counter-clockwise hull: every edge has the point on its left, at a
            # signed distance (the 2-D cross product with the unit edge) of at least margin.
            if all((ex * (cy - y0) - ey * (cx - x0)) >= margin for x0, y0, ex, ey in edges):
                inside.append((x, y))
    return inside


def differing_fraction(image_a, image_b, region, threshold):
    """The fraction of the pixels of `region` (x, y) whose colours in the two images differ by
    more than `threshold` (the sum of the absolute R, G, B differences)."""
    width, height, rows_a = image_a
    _, _, rows_b = image_b
    count = differ = 0
    for x, y in region:
        if not (0 <= x < width and 0 <= y < height):
            continue
        count += 1
        a, b = rows_a[y][3 * x:3 * x + 3], rows_b[y][3 * x:3 * x + 3]
        if abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2]) > threshold:
            differ += 1
    if count == 0:
        raise ValueError("the region is off the screen")
    return differ / count


# ---- Chromium over the DevTools protocol ----

def find_chromium():
    path = os.environ.get("LCPSIM_CHROMIUM")
    if path:
        return path if os.access(path, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class DevToolsError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium and one page in it, driven over --remote-debugging-pipe."""

    def __init__(self, executable, width, height, profile_dir, log_path):
        self.width, self.height = width, height
        into_browser_r, into_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # The pipe ends the child gets as 3 and 4 are first moved above them, so no dup2 below
        # has its source and target the same.
        child_in = _fd_above(into_browser_r, 10)
        child_out = _fd_above(from_browser_w, 10)
        os.close(into_browser_r)
        os.close(from_browser_w)
        arguments = [
            executable, "--headless", "--remote-debugging-pipe", "--no-sandbox",
            "--user-data-dir=" + profile_dir, "--window-size=%d,%d" % (width, height),
            "--force-device-scale-factor=1", "--hide-scrollbars", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
            # WebGL on the CPU: no GPU here (nor in CI).
            "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "about:blank"]
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
            (os.POSIX_SPAWN_DUP2, child_in, 3),
            (os.POSIX_SPAWN_DUP2, child_out, 4),
        ]
        self.pid = os.posix_spawn(executable, arguments, os.environ, file_actions=actions)
        os.close(child_in)
        os.close(child_out)
        self._write = into_browser_w
        self._read = from_browser_r
        self._next_id = 0
        self._replies = {}
        self._done = threading.Condition()
        self._closed = False
        self._reader = threading.Thread(target=self._read_messages, daemon=True)
        self._reader.start()
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _read_messages(self):
        pending = b""
        while True:
            try:
                chunk = os.read(self._read, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._done:
                    self._closed = True
                    self._done.notify_all()
                return
            pending += chunk
            while b"\0" in pending:
                text, pending = pending.split(b"\0", 1)
                message = json.loads(text)
                if "id" in message:
                    with self._done:
                        self._replies[message["id"]] = message
                        self._done.notify_all()

    def call(self, method, session=False, timeout=60.0, **params):
        """The result of one DevTools command (of the page's session when session is true)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write, data):]
        with self._done:
            if not self._done.wait_for(lambda: self._next_id in self._replies or self._closed,
                                       timeout):
                raise DevToolsError("%s: no answer within %g s" % (method, timeout))
            if self._next_id not in self._replies:
                raise DevToolsError("%s: the browser closed the pipe" % method)
            reply = self._replies.pop(self._next_id)
        if "error" in reply:
            raise DevToolsError("%s: %s" % (method, reply["error"]))
        return reply["result"]

    def navigate(self, url):
        self.call("Page.navigate", session=True, url=url)

    def evaluate(self, expression, timeout=60.0):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.call("Runtime.evaluate", session=True, timeout=timeout, expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError("page: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def wait_for(self, condition, limit_ms=60000):
        """Waits until the JavaScript `condition` on `v` (window.lcpsimViewer) holds and two
        more animation frames have gone by (the frame that drew it is on screen); returns v. A
        page that never gets there fails the test after limit_ms."""
        script = """new Promise((resolve) => {
          const start = performance.now();
          const check = () => {
            const v = window.lcpsimViewer;
            if (v && (%s)) {
              requestAnimationFrame(() => requestAnimationFrame(() => resolve(JSON.stringify(v))));
            } else if (performance.now() - start > %d) {
              resolve(JSON.stringify({timedOut: true, viewer: v || null,
                                      status: (document.getElementById('status') || {}).textContent}));
            } else {
              setTimeout(check, 20);
            }
          };
          check();
        })""" % (condition, limit_ms)
        value = json.loads(self.evaluate(script, timeout=limit_ms / 1000.0 + 30.0))
        if value.get("timedOut"):
            raise AssertionError("the page never reached %s: %s" % (condition, value))
        return value

    def screenshot(self, path):
        """A PNG of the page, written to path; returns read_png's (width, height, rows)."""
        data = base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])
        with open(path, "wb") as out:
            out.write(data)
        return read_png(data)

    def close(self):
        try:
            self.call("Browser.close", timeout=10.0)
        except DevToolsError:
            pass
        try:
            os.close(self._write)
        except OSError:
            pass
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        self._reader.join(5.0)
        os.close(self._read)
        return status


def _fd_above(fd, lowest):
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)


# ---- HTTP and the WebSocket ----

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3


def websocket_frame(opcode, payload):
    """A final, unmasked server frame (RFC 6455, section 5.2)."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack(">H", n)
    else:
        head += bytes([127]) + struct.pack(">Q", n)
    return head + payload


def _read_exactly(stream, n):
    data = stream.read(n)
    if data is None or len(data) != n:
        raise ConnectionError("the client closed the connection")
    return data


def read_websocket_frame(stream):
    """(opcode, payload) of one client frame (masked, as RFC 6455 requires of clients)."""
    first, second = _read_exactly(stream, 2)
    opcode, length = first & 0x0F, second & 0x7F
    if length == 126:
        length = struct.unpack(">H", _read_exactly(stream, 2))[0]
    elif length == 127:
        length = struct.unpack(">Q", _read_exactly(stream, 8))[0]
    mask = _read_exactly(stream, 4) if second & 0x80 else b"\0\0\0\0"
    payload = bytearray(_read_exactly(stream, length))
    for i in range(length):
        payload[i] ^= mask[i % 4]
    return opcode, bytes(payload)


class ViewerServer(http.server.ThreadingHTTPServer):
    """Serves `root` on 127.0.0.1 (an ephemeral port) and the WebSocket /ws. A client that
    connects gets the current entries (header, scene, state: set with publish) at once and each
    later one as it is published; the page's text messages are kept in `commands`."""

    daemon_threads = True

    def __init__(self, root):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = os.path.realpath(root)
        self.lock = threading.Condition()
        self.current = {}  # kind → serialized RecordEntry
        self.clients = []
        self.commands = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return "http://127.0.0.1:%d/" % self.server_address[1]

    def publish(self, kind, entry_bytes):
        """Sends one entry ("header", "scene" or "state") to every client and keeps it for
        the clients to come."""
        with self.lock:
            self.current[kind] = entry_bytes
            frame = websocket_frame(0x2, entry_bytes)
            for client in list(self.clients):
                try:
                    client.sendall(frame)
                except OSError:
                    self.clients.remove(client)

    def wait_for_command(self, count, timeout=30.0):
        with self.lock:
            if not self.lock.wait_for(lambda: len(self.commands) >= count, timeout):
                raise AssertionError("the page sent %d commands, not %d: %s"
                                     % (len(self.commands), count, self.commands))
            return list(self.commands)

    def stop(self):
        self.shutdown()
        with self.lock:
            for client in self.clients:
                try:
                    client.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    types = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
             ".css": "text/css; charset=utf-8", ".json": "application/json",
             ".txt": "text/plain; charset=utf-8"}

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/ws":
            self._websocket()
            return
        name = "index.html" if path == "/" else path.lstrip("/")
        file = os.path.realpath(os.path.join(self.server.root, name))
        if os.path.dirname(file) != self.server.root or not os.path.isfile(file):
            self.send_error(404)
            return
        with open(file, "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Type", self.types.get(os.path.splitext(file)[1], "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
            self.send_error(400)
            return
        accept = base64.b64encode(hashlib.sha1(key.encode() + WEBSOCKET_GUID).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        server = self.server
        with server.lock:
            for kind in ("header", "scene", "state"):
                if kind in server.current:
                    self.connection.sendall(websocket_frame(0x2, server.current[kind]))
            server.clients.append(self.connection)
        try:
            while True:
                opcode, payload = read_websocket_frame(self.rfile)
                if opcode == 0x8:  # close
                    break
                if opcode == 0x1:  # text
                    with server.lock:
                        server.commands.append(json.loads(payload.decode()))
                        server.lock.notify_all()
        except (ConnectionError, OSError, ValueError):
            pass
        finally:
            with server.lock:
                if self.connection in server.clients:
                    server.clients.remove(self.connection)
        self.close_connection = True
