/* SPDX-License-Identifier: Apache-2.0 */
/* The C examples run against a live lcpsimd and do what they say.
 *
 *   test_c_examples PATH_TO_LCPSIMD PATH_TO_ARM_SINE PATH_TO_PING PATH_TO_SCRIPTED_SESSION
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_daemon.h"

/* In double precision (cmocka's assert_float_equal compares floats). */
#define assert_near(a, b, tol)                                                                     \
  do {                                                                                             \
    double a_ = (a), b_ = (b), t_ = (tol);                                                         \
    if (!(fabs(a_ - b_) <= t_))                                                                    \
      fail_msg("%s = %.17g, expected %.17g (tol %g)", #a, a_, b_, t_);                             \
  } while (0)

static const char *daemon_path, *arm_sine_path, *ping_path, *scripted_session_path;

enum { MAX_LINES = 256, MAX_JOINTS = 16 };

typedef struct {
  int exit_status;
  int lines;
  char text[MAX_LINES][512];
} output_t;

/* Runs a command through the shell, keeping its stdout lines and its exit status. */
static void run(const char *command, output_t *output) {
  memset(output, 0, sizeof *output);
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  char line[512];
  while (fgets(line, sizeof line, pipe)) {
    if (output->lines < MAX_LINES)
      snprintf(output->text[output->lines++], sizeof output->text[0], "%s", line);
  }
  int status = pclose(pipe);
  output->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int start_daemon(void **state) {
  test_daemon_t *daemon = calloc(1, sizeof *daemon);
  if (!daemon || test_daemon_start(daemon_path, daemon) != 0) {
    free(daemon);
    return -1;
  }
  *state = daemon;
  return 0;
}

static int stop_daemon(void **state) {
  test_daemon_t *daemon = *state;
  int status = test_daemon_stop(daemon);
  free(daemon);
  return status == 0 ? 0 : -1;
}

/* One printed line of arm_sine: "time=T q=q1,q2,... tracking_error=E". */
typedef struct {
  double time;
  int joints;
  double q[MAX_JOINTS];
  double tracking_error;
} arm_line_t;

static bool parse_arm_line(const char *text, arm_line_t *line) {
  memset(line, 0, sizeof *line);
  if (sscanf(text, "time=%lf", &line->time) != 1)
    return false;
  const char *q = strstr(text, " q=");
  const char *error = strstr(text, " tracking_error=");
  if (!q || !error || sscanf(error, " tracking_error=%lf", &line->tracking_error) != 1)
    return false;
  for (const char *cursor = q + 3; cursor < error && line->joints < MAX_JOINTS;) {
    char *end = NULL;
    line->q[line->joints++] = strtod(cursor, &end);
    if (end == cursor)
      return false;
    cursor = *end == ',' ? end + 1 : end;
    if (*end != ',')
      break;
  }
  return true;
}

/* Runs arm_sine for 2000 steps with `options` against the daemon and checks what every run must
 * show: exit 0, the arm found, a line every 100 steps, and every joint sweeping more than 0.1 rad
 * (the arm moves). Returns the largest tracking error printed from `settled` seconds on. */
static double run_arm_sine(const test_daemon_t *daemon, const char *options, double settled) {
  char command[1024];
  snprintf(command, sizeof command, "'%s' --steps 2000 %s '%s'", arm_sine_path, options,
           daemon->rep);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 0);
  assert_true(output.lines > 0);
  assert_non_null(strstr(output.text[0], "robot=arm7 joints=7"));
  const char *timestep_text = strstr(output.text[0], "timestep=");
  assert_non_null(timestep_text);
  double timestep = atof(timestep_text + strlen("timestep="));
  assert_true(timestep > 0.0);

  arm_line_t lines[MAX_LINES];
  int count = 0;
  for (int i = 1; i < output.lines; ++i) {
    assert_true(parse_arm_line(output.text[i], &lines[count]));
    assert_int_equal(lines[count].joints, 7);
    ++count;
  }
  assert_int_equal(count, 20);
  double lowest[7], highest[7], worst = 0.0;
  for (int j = 0; j < 7; ++j)
    lowest[j] = highest[j] = lines[0].q[j];
  for (int i = 0; i < count; ++i) {
    /* Every 100 steps, printed to the millisecond. */
    assert_near(lines[i].time, (i + 1) * 100 * timestep, 1e-3);
    for (int j = 0; j < 7; ++j) {
      lowest[j] = fmin(lowest[j], lines[i].q[j]);
      highest[j] = fmax(highest[j], lines[i].q[j]);
    }
    if (lines[i].time >= settled)
      worst = fmax(worst, lines[i].tracking_error);
  }
  for (int j = 0; j < 7; ++j)
    assert_true(highest[j] - lowest[j] > 0.1);
  return worst;
}

static void arm_sine_moves_the_arm_with_the_scene_gains(void **state) {
  /* kp = 100, kd = 10 leave the shoulder (joint2, about 6 kg·m² of arm above it) a lightly damped
   * loop (ωn ≈ 4 rad/s, ζ ≈ 0.2) driven near resonance by the 0.5 Hz sine: linear analysis gives
   * an error of about 0.65 rad there. Bounded, it shows the loop stable. */
  double worst = run_arm_sine(*state, "", 2.0);
  assert_true(worst < 0.8);
}

static void arm_sine_tracks_closely_with_stiffer_gains(void **state) {
  /* kp = 1000, kd = 100: the same analysis gives 0.03 rad. */
  double worst = run_arm_sine(*state, "--kp 1000 --kd 100", 2.0);
  assert_true(worst < 0.05);
}

static void arm_sine_rejects_a_bad_option(void **state) {
  (void)state;
  char command[1024];
  snprintf(command, sizeof command, "'%s' --steps nine 2>/dev/null", arm_sine_path);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 2);
}

static void arm_sine_fails_when_nothing_answers(void **state) {
  (void)state;
  char endpoint[64];
  int reserved = test_refusing_endpoint(endpoint, sizeof endpoint);
  assert_true(reserved >= 0);
  char command[1024];
  snprintf(command, sizeof command, "'%s' --timeout-ms 300 '%s' 2>/dev/null", arm_sine_path,
           endpoint);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 1);
  assert_int_equal(output.lines, 0);
  close(reserved);
}

static void ping_succeeds_against_the_daemon(void **state) {
  test_daemon_t *daemon = *state;
  char command[1024];
  snprintf(command, sizeof command, "'%s' --timeout-ms 10000 '%s'", ping_path, daemon->rep);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 0);
}

static void ping_fails_when_nothing_answers(void **state) {
  (void)state;
  char endpoint[64];
  int reserved = test_refusing_endpoint(endpoint, sizeof endpoint);
  assert_true(reserved >= 0);
  char command[1024];
  snprintf(command, sizeof command, "'%s' --timeout-ms 300 '%s' 2>/dev/null", ping_path, endpoint);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 1);
  close(reserved);
}

/* scripted_session runs its whole script (its replay from the snapshot equal to the first run, or
 * it exits 1) and prints the five states, the sensed one with its IMUs and solver statistics.
 * Its lines are long (a quadruped's link poses), so they are read whole with getline. */
static void scripted_session_runs_the_script(void **state) {
  test_daemon_t *daemon = *state;
  char command[2048];
  snprintf(command, sizeof command, "'%s' '%s' '%s'", scripted_session_path, daemon->rep,
           LCP_QUADRUPED_URDF);
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  char *line = NULL;
  size_t size = 0;
  int times = 0, sensed = 0, lines = 0;
  const char *sensor_lines[] = {"C robot.arm7.imu.wrist ", "C robot.dog.imu.trunk_imu ",
                                "C robot.dog.joint_wrenches ", "C body.box.contact_wrench ",
                                "C solver_stats "};
  while (getline(&line, &size, pipe) > 0) {
    ++lines;
    static const char labels[] = "ABCDE";
    if (strncmp(line + 1, " time ", 6) == 0 && line[0] == labels[times])
      ++times;
    for (size_t i = 0; i < sizeof sensor_lines / sizeof sensor_lines[0]; ++i)
      sensed += strncmp(line, sensor_lines[i], strlen(sensor_lines[i])) == 0;
  }
  free(line);
  int status = pclose(pipe);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(times, 5);
  assert_int_equal(sensed, 5);
  assert_true(lines > 100);
}

static void scripted_session_needs_its_two_arguments(void **state) {
  (void)state;
  char command[1024];
  snprintf(command, sizeof command, "'%s' 2>/dev/null", scripted_session_path);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 2);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s LCPSIMD ARM_SINE PING SCRIPTED_SESSION\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  arm_sine_path = argv[2];
  ping_path = argv[3];
  scripted_session_path = argv[4];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(arm_sine_moves_the_arm_with_the_scene_gains, start_daemon,
                                      stop_daemon),
      cmocka_unit_test_setup_teardown(arm_sine_tracks_closely_with_stiffer_gains, start_daemon,
                                      stop_daemon),
      cmocka_unit_test(arm_sine_rejects_a_bad_option),
      cmocka_unit_test(arm_sine_fails_when_nothing_answers),
      cmocka_unit_test_setup_teardown(ping_succeeds_against_the_daemon, start_daemon, stop_daemon),
      cmocka_unit_test(ping_fails_when_nothing_answers),
      cmocka_unit_test_setup_teardown(scripted_session_runs_the_script, start_daemon, stop_daemon),
      cmocka_unit_test(scripted_session_needs_its_two_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
