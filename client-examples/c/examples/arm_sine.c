/* SPDX-License-Identifier: Apache-2.0 */
/* arm_sine: drives the daemon's arm in lockstep along q*_i(t) = 0.5 sin(2π·0.5·t + i) with the
 * in-engine PD controllers (by default kp = 100, kd = 10, the arm scene's gains), one
 * Step-with-targets round trip per control tick, and prints a line of state every 100 steps.
 * With the scene's gains the shoulder (joint2, about 6 kg·m² of arm above it) is a lightly damped
 * loop (ωn ≈ 4 rad/s, ζ ≈ 0.2) close to the 0.5 Hz drive, so it lags by up to about 0.6 rad;
 * --kp 1000 --kd 100 track within about 0.03 rad.
 *
 *   arm_sine [--steps N] [--robot NAME] [--kp KP] [--kd KD] [--timeout-ms MS] [ENDPOINT]
 *            (defaults 2000 steps, the first robot, 100, 10, 5000 ms, tcp://127.0.0.1:5555)
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lcpsim_client.h"

static const double PI = 3.14159265358979323846;
static const double AMPLITUDE = 0.5; /* rad */
static const double FREQUENCY = 0.5; /* Hz */
enum { PRINT_EVERY = 100, MAX_JOINTS = 64 };

static int usage(const char *program) {
  fprintf(stderr,
          "usage: %s [--steps N] [--robot NAME] [--kp KP] [--kd KD] [--timeout-ms MS] [ENDPOINT]\n",
          program);
  return 2;
}

static void report(lcpsim_client_t *client, const char *what, int code) {
  fprintf(stderr, "arm_sine: %s: %s (%s)\n", what, lcpsim_status_name(code),
          lcpsim_client_last_error(client));
}

/* The target of joint i at time t, and its rate (the velocity target, so that kd damps the
 * tracking error rather than the motion itself). */
static double target_position(int i, double t) {
  return AMPLITUDE * sin(2.0 * PI * FREQUENCY * t + i);
}
static double target_velocity(int i, double t) {
  return AMPLITUDE * 2.0 * PI * FREQUENCY * cos(2.0 * PI * FREQUENCY * t + i);
}

int main(int argc, char **argv) {
  long steps = 2000;
  const char *robot_name = NULL;
  double kp = 100.0, kd = 10.0; /* N·m/rad, N·m·s/rad */
  long timeout_ms = 5000;
  static const struct option options[] = {{"steps", required_argument, NULL, 's'},
                                          {"robot", required_argument, NULL, 'r'},
                                          {"kp", required_argument, NULL, 'p'},
                                          {"kd", required_argument, NULL, 'd'},
                                          {"timeout-ms", required_argument, NULL, 't'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  for (int option; (option = getopt_long(argc, argv, "s:r:p:d:t:h", options, NULL)) != -1;) {
    char *end = NULL;
    switch (option) {
    case 's':
      steps = strtol(optarg, &end, 10);
      if (*end != '\0' || steps < 0)
        return usage(argv[0]);
      break;
    case 'r':
      robot_name = optarg;
      break;
    case 'p':
    case 'd':
      *(option == 'p' ? &kp : &kd) = strtod(optarg, &end);
      if (*end != '\0' || !(kp >= 0.0 && kd >= 0.0))
        return usage(argv[0]);
      break;
    case 't':
      timeout_ms = strtol(optarg, &end, 10);
      if (*end != '\0' || timeout_ms <= 0 || timeout_ms > 3600000)
        return usage(argv[0]);
      break;
    default:
      return usage(argv[0]);
    }
  }
  if (argc - optind > 1)
    return usage(argv[0]);
  const char *endpoint = optind < argc ? argv[optind] : "tcp://127.0.0.1:5555";

  lcpsim_client_t *client = NULL;
  if (lcpsim_client_connect(endpoint, (int)timeout_ms, &client) != LCPSIM_OK) {
    fprintf(stderr, "arm_sine: cannot connect to %s\n", endpoint);
    return 1;
  }
  int status = 1;
  lcpsim_info_t *info = NULL;
  lcpsim_state_t *state = NULL;
  int code = lcpsim_client_get_info(client, &info);
  if (code != LCPSIM_OK) {
    report(client, "get_info", code);
    goto done;
  }
  /* The robot asked for, or else the first robot of the world. */
  const lcpsim_robot_info_t *robot = robot_name           ? lcpsim_info_find_robot(info, robot_name)
                                     : info->n_robots > 0 ? info->robots[0]
                                                          : NULL;
  if (!robot || robot->floating_base || robot->n_joints == 0 || robot->n_joints > MAX_JOINTS) {
    fprintf(stderr, "arm_sine: no fixed-base robot%s%s with joints at %s\n",
            robot_name ? " named " : "", robot_name ? robot_name : "", endpoint);
    goto done;
  }
  const int joints = (int)robot->n_joints;
  const double timestep = info->settings->timestep;
  printf("robot=%s joints=%d timestep=%g steps=%ld kp=%g kd=%g\n", robot->name, joints, timestep,
         steps, kp, kd);

  code = lcpsim_client_get_state(client, LCPSIM_WITHOUT_CONTACTS, &state);
  if (code != LCPSIM_OK) {
    report(client, "get_state", code);
    goto done;
  }
  double position[MAX_JOINTS], velocity[MAX_JOINTS];
  lcpsim_target_t target = {
      .robot = robot->name,
      .mode = LCPSIM_MODE_POSITION,
      .position = position,
      .n_position = (size_t)joints,
      .velocity = velocity,
      .n_velocity = (size_t)joints,
      .kp = &kp,
      .n_kp = 1,
      .kd = &kd,
      .n_kd = 1,
      .gravity_compensation = LCPSIM_GRAVITY_COMPENSATION_ON,
  };
  for (long step = 1; step <= steps; ++step) {
    /* The implicit PD acts on the state at the end of the step: aim at the target of that time. */
    double t = state->time + timestep;
    for (int i = 0; i < joints; ++i) {
      position[i] = target_position(i, t);
      velocity[i] = target_velocity(i, t);
    }
    lcpsim_state_destroy(&state);
    code = lcpsim_client_step(client, 1, &target, 1, LCPSIM_WITHOUT_CONTACTS, &state);
    if (code != LCPSIM_OK) {
      report(client, "step", code);
      goto done;
    }
    if (step % PRINT_EVERY != 0)
      continue;
    const lcpsim_robot_state_t *arm = lcpsim_state_find_robot(state, robot->name);
    if (!arm || arm->n_q < (size_t)joints) {
      fprintf(stderr, "arm_sine: the state has no q for %s\n", robot->name);
      goto done;
    }
    double error = 0.0;
    printf("time=%.3f q=", state->time);
    for (int i = 0; i < joints; ++i) {
      printf("%s%+.4f", i ? "," : "", arm->q[i]);
      error = fmax(error, fabs(target_position(i, state->time) - arm->q[i]));
    }
    printf(" tracking_error=%.4f\n", error);
  }
  status = 0;
done:
  lcpsim_state_destroy(&state);
  lcpsim_info_destroy(&info);
  lcpsim_client_destroy(&client);
  return status;
}
