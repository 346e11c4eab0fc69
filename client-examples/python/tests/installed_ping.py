# SPDX-License-Identifier: Apache-2.0
"""Run by the python of a venv that has lcpsim-client installed (test_python_package.py): imports
lcpsim, checks that it is the venv's copy with the distribution's version, and pings a live
lcpsimd (LCPSIMD) through it, then steps it once. Prints "lcpsim VERSION from VENV" and exits 0,
or fails with an exception."""

import importlib.metadata
import os

import lcpsim
import lcpsim.state
from lcpsim.v1 import lcpsim_pb2
from live_daemon import LiveDaemon



def require(condition, message):
    if not condition:
        raise SystemExit("installed_ping: " + message)


venv = os.environ["LCPSIM_VENV_DIR"]
for module in (lcpsim, lcpsim.state, lcpsim_pb2):
    where = os.path.realpath(module.__file__)
    require(where.startswith(venv + os.sep),
            "%s comes from %s, not from the venv %s" % (module.__name__, where, venv))
installed = importlib.metadata.version("lcpsim-client")
require(lcpsim.__version__ == installed,
        "lcpsim.__version__ is %s, the distribution %s" % (lcpsim.__version__, installed))

daemon = LiveDaemon()
try:
    with lcpsim.Client(daemon.rep, timeout_ms=20000) as sim:
        reply = sim.ping(b"installed")  # raises unless the payload comes back
        require(reply.server_version != "", "an empty server_version")
        state = sim.step(1, return_state=True).state
        # step() returns the client's State (it returned a StepReply whose .state was the
        # protocol's State); the protocol's message is its .message.
        require(isinstance(state, lcpsim.State), "a %s, not a State" % type(state))
        require(isinstance(state.message, lcpsim_pb2.State),
                "a %s, not the protocol's State" % type(state.message))
        require(state.step_count == 1, "step_count %d after one step" % state.step_count)
finally:
    status = daemon.stop()
require(status == 0, "lcpsimd exited with %s" % status)
print("lcpsim %s from %s: ping answered by %s" % (lcpsim.__version__, venv, reply.server_version))
