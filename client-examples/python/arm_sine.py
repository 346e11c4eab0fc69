#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""arm_sine: drives the daemon's arm in lockstep along q*_i(t) = 0.5 sin(2π·0.5·t + i) with
the in-engine PD controllers (by default kp = 100, kd = 10, the gains of the daemon's built-in
arm scene), one Step-with-targets round trip per control tick, and prints a line of state every
100 steps.
With the scene's gains the shoulder (joint2, about 6 kg·m² of arm above it) is a lightly
damped loop (ωn ≈ 4 rad/s, ζ ≈ 0.2) close to the 0.5 Hz drive, so it lags by up to about
0.6 rad; --kp 1000 --kd 100 track within about 0.03 rad.

    /usr/bin/python3 client-examples/python/arm_sine.py \
        [--steps N] [--robot NAME] [--kp KP] [--kd KD] [--timeout-ms MS] [ENDPOINT]
"""

import argparse
import math
import sys

from lcpsim import DEFAULT_ENDPOINT, DEFAULT_TIMEOUT_MS, Client, LcpsimError, find_robot, target

AMPLITUDE = 0.5  # rad
FREQUENCY = 0.5  # Hz
PRINT_EVERY = 100


def target_position(i, t):
    return AMPLITUDE * math.sin(2.0 * math.pi * FREQUENCY * t + i)


def target_velocity(i, t):
    """The rate of the target, given as the velocity target so that kd damps the tracking
    error rather than the motion itself."""
    return AMPLITUDE * 2.0 * math.pi * FREQUENCY * math.cos(2.0 * math.pi * FREQUENCY * t + i)


def run(endpoint, steps, robot_name=None, kp=100.0, kd=10.0, timeout_ms=DEFAULT_TIMEOUT_MS,
        server_key=None, client_keys=None):
    with Client(endpoint, timeout_ms=timeout_ms, server_key=server_key,
                client_keys=client_keys) as sim:
        info = sim.get_info()
        if robot_name:
            robot = find_robot(info, robot_name)
        else:
            robot = info.robots[0] if info.robots else None
        if robot is None or robot.floating_base or not robot.joints:
            raise SystemExit("arm_sine: no fixed-base robot%s with joints at %s"
                             % (" named " + robot_name if robot_name else "", endpoint))
        joints = len(robot.joints)
        timestep = info.settings.timestep
        print("robot=%s joints=%d timestep=%g steps=%d kp=%g kd=%g"
              % (robot.name, joints, timestep, steps, kp, kd), flush=True)
        time = sim.get_state().time
        for step in range(1, steps + 1):
            # The implicit PD acts on the state at the end of the step: aim at that time.
            t = time + timestep
            tracking = target(robot.name, mode="position",
                              position=[target_position(i, t) for i in range(joints)],
                              velocity=[target_velocity(i, t) for i in range(joints)],
                              kp=kp, kd=kd, gravity_compensation=True)
            state = sim.step(1, targets=[tracking], return_state=True).state
            time = state.time
            if step % PRINT_EVERY:
                continue
            q = find_robot(state, robot.name).q[:joints]
            error = max(abs(target_position(i, time) - q[i]) for i in range(joints))
            print("time=%.3f q=%s tracking_error=%.4f"
                  % (time, ",".join("%+.4f" % value for value in q), error), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("endpoint", nargs="?", default=DEFAULT_ENDPOINT,
                        help="the daemon's request socket (default %(default)s)")
    parser.add_argument("--steps", type=int, default=2000, help="steps to run (default 2000)")
    parser.add_argument("--robot", help="the robot to drive (default: the first)")
    parser.add_argument("--kp", type=float, default=100.0, help="N·m/rad (default 100)")
    parser.add_argument("--kd", type=float, default=10.0, help="N·m·s/rad (default 10)")
    parser.add_argument("--timeout-ms", type=int, default=DEFAULT_TIMEOUT_MS,
                        help="how long one call may wait for its reply (default %(default)s)")
    parser.add_argument("--server-key", metavar="FILE",
                        help="CURVE: the daemon's public key file (its NAME.pub)")
    parser.add_argument("--client-key", metavar="FILE",
                        help="CURVE: this client's key pair file (NAME.key, a controller's)")
    args = parser.parse_args()
    if bool(args.server_key) != bool(args.client_key):
        parser.error("--server-key and --client-key go together")
    if args.steps < 0 or args.kp < 0 or args.kd < 0:
        parser.error("--steps, --kp and --kd must be >= 0")
    try:
        run(args.endpoint, args.steps, args.robot, args.kp, args.kd, args.timeout_ms,
            args.server_key, args.client_key)
    except (LcpsimError, OSError, ValueError) as error:
        print("arm_sine: %s" % error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
