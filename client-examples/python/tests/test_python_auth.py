# SPDX-License-Identifier: Apache-2.0
"""The Python client against a daemon with CURVE on (lcpsimd --curve-secret-key): a controller
key may step, an observer key may read and subscribe but its Step is PERMISSION_DENIED and
changes nothing, an unknown key and a wrong server key get no reply at all (a timeout)."""

import os
import shutil
import subprocess
import tempfile
import unittest

import zmq

from live_daemon import LiveDaemon

from lcpsim import (Client, LcpsimError, LcpsimTimeout, Subscriber, load_key_pair,
                    load_public_key, pb, read_key_file)

# An unknown key's call waits this long for the reply that never comes.
REFUSED_TIMEOUT_MS = 1500


def gen_keys(directory, name, role="controller"):
    subprocess.run([os.environ["LCPSIMD"], "--gen-keys", os.path.join(directory, name),
                    "--key-role", role], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(directory, name)


class CurveDaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="lcpsim-auth-")
        cls.server = gen_keys(cls.dir, "server")
        allow = os.path.join(cls.dir, "allow")
        os.mkdir(allow)
        cls.controller = gen_keys(allow, "controller")
        cls.observer = gen_keys(allow, "observer", "observer")
        cls.stranger = gen_keys(cls.dir, "stranger")
        # The allow-list directory holds the .pub files only.
        for name in ("controller", "observer"):
            shutil.move(os.path.join(allow, name + ".key"), os.path.join(cls.dir, name + ".key"))
        cls.daemon = LiveDaemon(["--curve-secret-key", cls.server + ".key",
                                 "--authorized-keys", allow])

    @classmethod
    def tearDownClass(cls):
        status = cls.daemon.stop()
        shutil.rmtree(cls.dir)
        assert status == 0, "lcpsimd exited with %s" % status

    def client(self, keys, server_key=None, timeout_ms=5000):
        return Client(self.daemon.rep, timeout_ms=timeout_ms,
                      server_key=server_key or self.server + ".pub",
                      client_keys=os.path.join(self.dir, keys + ".key"))

    def test_key_files_load(self):
        pair = load_key_pair(os.path.join(self.dir, "controller.key"))
        self.assertEqual(len(pair.public), 40)
        self.assertEqual(zmq.curve_public(pair.secret), pair.public)
        self.assertEqual(load_public_key(os.path.join(self.dir, "allow", "controller.pub")),
                         pair.public)
        self.assertEqual(read_key_file(os.path.join(self.dir, "allow", "observer.pub"))["role"],
                         "observer")
        with self.assertRaises(ValueError):
            load_key_pair(self.server + ".pub")  # a public key file has no secret

    def test_controller_steps(self):
        with self.client("controller") as sim:
            before = sim.get_state().step_count
            state = sim.step(3, return_state=True)
            self.assertEqual(state.step_count, before + 3)

    def test_controller_with_keys_given_as_values(self):
        pair = load_key_pair(os.path.join(self.dir, "controller.key"))
        with Client(self.daemon.rep, server_key=load_public_key(self.server + ".pub").decode(),
                    client_keys=(pair.public, pair.secret)) as sim:
            self.assertTrue(sim.ping().server_version.startswith("lcpsimd"))

    def test_observer_reads_but_may_not_step(self):
        with self.client("observer") as observer:
            self.assertTrue(observer.ping().server_version.startswith("lcpsimd"))
            observer.get_info()
            count = observer.get_state().step_count
            with self.assertRaises(LcpsimError) as raised:
                observer.step(5)
            self.assertEqual(raised.exception.code, pb.Status.PERMISSION_DENIED)
            self.assertIn("observer", raised.exception.message)
            self.assertIn("step", raised.exception.message)
            self.assertEqual(observer.get_state().step_count, count)

    def test_observer_subscribes(self):
        with self.client("controller") as controller, \
                Subscriber(self.daemon.pub, server_key=self.server + ".pub",
                           client_keys=os.path.join(self.dir, "observer.key")) as stream:
            controller.subscribe(every_steps=1)
            try:
                # A subscription takes effect once connected: step until a state arrives.
                for _ in range(200):
                    controller.step(1)
                    try:
                        state = stream.receive(timeout_ms=50)
                        break
                    except LcpsimTimeout:
                        continue
                else:
                    self.fail("no state reached the observer's subscriber")
                self.assertGreater(state.step_count, 0)
            finally:
                controller.subscribe(every_steps=0)

    def test_unknown_key_gets_no_reply(self):
        with self.client("stranger", timeout_ms=REFUSED_TIMEOUT_MS) as sim:
            with self.assertRaises(LcpsimTimeout):
                sim.ping()

    def test_wrong_server_key_gets_no_reply(self):
        with self.client("controller", server_key=self.stranger + ".pub",
                         timeout_ms=REFUSED_TIMEOUT_MS) as sim:
            with self.assertRaises(LcpsimTimeout):
                sim.ping()

    def test_plain_client_gets_no_reply(self):
        with Client(self.daemon.rep, timeout_ms=REFUSED_TIMEOUT_MS) as sim:
            with self.assertRaises(LcpsimTimeout):
                sim.ping()


if __name__ == "__main__":
    unittest.main()
