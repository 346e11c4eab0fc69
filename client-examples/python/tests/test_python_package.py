# SPDX-License-Identifier: Apache-2.0
"""The package as a user installs it, offline, with Debian's pip: a venv that sees Debian's
python3-zmq and python3-protobuf (--system-site-packages), `pip install --no-index
--no-build-isolation` of client-examples/python, then installed_ping.py run by the venv's python
against a live lcpsimd. Environment: LCPSIMD (the daemon), LCPSIM_VENV_DIR (where the venv goes;
made anew each run), LCPSIM_PROJECT_VERSION (the version the package must carry)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(HERE)
DISTRIBUTION = "lcpsim-client"


class PackageTest(unittest.TestCase):
    def test_installs_offline_into_a_venv_and_pings_a_live_daemon(self):
        venv = os.environ["LCPSIM_VENV_DIR"]
        subprocess.run([sys.executable, "-m", "venv", "--clear", "--system-site-packages", venv],
                       check=True)
        python = os.path.join(venv, "bin", "python")
        with tempfile.TemporaryDirectory(prefix="lcpsim-package-") as scratch:
            # pip builds in the tree it is given and leaves build/ and *.egg-info there: give it a
            # copy, so that the test writes nothing into the source tree.
            source = os.path.join(scratch, "python")
            shutil.copytree(PACKAGE_DIR, source, ignore=shutil.ignore_patterns(
                "build", "dist", "*.egg-info", "__pycache__"))
            install = subprocess.run(
                [python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                 "--no-cache-dir", "--disable-pip-version-check", source],
                capture_output=True, text=True, cwd=scratch)
            self.assertEqual(install.returncode, 0, install.stdout + install.stderr)
            self.assertIn("Successfully installed %s-%s"
                          % (DISTRIBUTION, os.environ["LCPSIM_PROJECT_VERSION"]), install.stdout)
            # No PYTHONPATH, and a working directory away from the sources: lcpsim can only come
            # from the venv. installed_ping.py's own folder (tests/) is on its sys.path, which
            # has live_daemon.py but no lcpsim.
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["LCPSIM_VENV_DIR"] = os.path.realpath(venv)
            ping = subprocess.run([python, os.path.join(HERE, "installed_ping.py")],
                                  capture_output=True, text=True, cwd=scratch, env=env,
                                  timeout=120)
        self.assertEqual(ping.returncode, 0, ping.stdout + ping.stderr)
        self.assertIn("lcpsim %s from %s:" % (os.environ["LCPSIM_PROJECT_VERSION"],
                                              os.path.realpath(venv)), ping.stdout)


if __name__ == "__main__":
    unittest.main()
