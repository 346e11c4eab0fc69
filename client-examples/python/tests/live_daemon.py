# SPDX-License-Identifier: Apache-2.0
"""Test support: a live lcpsimd of the test's own on ephemeral ports (its path in the LCPSIMD
environment variable), and an endpoint where nothing listens."""

import os
import re
import signal
import socket
import subprocess
import tempfile
import time

STARTUP_SECONDS = 30.0  # generous: an ASan build on a loaded machine starts slowly


class LiveDaemon:
    """Starts `$LCPSIMD --bind tcp://127.0.0.1:0 --pub tcp://127.0.0.1:0` (and `args`) and
    reads the endpoints (`rep`, `pub`) from the first line it prints."""

    def __init__(self, args=()):
        path = os.environ.get("LCPSIMD")
        if not path:
            raise RuntimeError("set LCPSIMD to the lcpsimd executable")
        # stdout goes to a file, not a pipe: the daemon can never block on a full pipe.
        self._stdout = tempfile.NamedTemporaryFile(prefix="lcpsimd-test-", suffix=".out")
        self.process = subprocess.Popen(
            [path, "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0", *args],
            stdout=self._stdout, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            with open(self._stdout.name, "r") as out:
                line = out.readline()
            if line.endswith("\n"):
                rep = re.search(r"rep=(\S+)", line)
                pub = re.search(r"pub=(\S+)", line)
                if not rep or not pub:
                    self.stop()
                    raise RuntimeError("unexpected first line from lcpsimd: %r" % line)
                self.rep, self.pub = rep.group(1), pub.group(1)
                return
            if self.process.poll() is not None:
                raise RuntimeError("lcpsimd exited with %d before printing its endpoints"
                                   % self.process.returncode)
            time.sleep(0.01)
        self.stop()
        raise RuntimeError("lcpsimd printed no endpoints within %g s" % STARTUP_SECONDS)

    def stop(self):
        """SIGTERM, then the exit status (SIGKILL after 10 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stdout.close()
        return self.process.returncode


class RefusingEndpoint:
    """A TCP endpoint on 127.0.0.1 that refuses connections: a port bound but not listening,
    held until close() so that nothing else takes it meanwhile."""

    def __init__(self):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.endpoint = "tcp://127.0.0.1:%d" % self._socket.getsockname()[1]

    def close(self):
        self._socket.close()
