/* The C examples run against a live lcpsimd and do what they say.
 *
 *   test_c_examples PATH_TO_LCPSIMD PATH_TO_ARM_SINE PATH_TO_PING
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

static const char *daemon_path, *arm_sine_path, *ping_path;

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

static void arm_sine_tracks_the_sine(void **state) {
  test_daemon_t *daemon = *state;
  char command[1024];
  snprintf(command, sizeof command, "'%s' --steps 2000 '%s'", arm_sine_path, daemon->rep);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 0);
  assert_non_null(strstr(output.text[0], "robot=arm7 joints=7"));

  arm_line_t lines[MAX_LINES];
  int count = 0;
  for (int i = 1; i < output.lines; ++i) {
    assert_true(parse_arm_line(output.text[i], &lines[count]));
    assert_int_equal(lines[count].joints, 7);
    ++count;
  }
  /* 2000 steps, a line every 100. */
  assert_int_equal(count, 20);
  double timestep = lines[1].time - lines[0].time;
  assert_true(timestep > 0.0);
  double lowest[7], highest[7];
  for (int j = 0; j < 7; ++j)
    lowest[j] = highest[j] = lines[0].q[j];
  for (int i = 0; i < count; ++i) {
    assert_float_equal(lines[i].time, (i + 1) * timestep, 1e-9);
    for (int j = 0; j < 7; ++j) {
      lowest[j] = fmin(lowest[j], lines[i].q[j]);
      highest[j] = fmax(highest[j], lines[i].q[j]);
    }
    /* After the transient (the start is a jump to 0.5 sin(i)), the PD with velocity feed-forward
     * and gravity compensation follows the 0.5 rad sine closely. */
    if (lines[i].time >= 1.0)
      assert_true(lines[i].tracking_error < 0.05);
  }
  /* The arm moves: over the run, every joint sweeps more than 0.1 rad. */
  for (int j = 0; j < 7; ++j)
    assert_true(highest[j] - lowest[j] > 0.1);
}

static void arm_sine_rejects_a_bad_option(void **state) {
  (void)state;
  char command[1024];
  snprintf(command, sizeof command, "'%s' --steps nine 2>/dev/null", arm_sine_path);
  output_t output;
  run(command, &output);
  assert_int_equal(output.exit_status, 2);
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

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LCPSIMD ARM_SINE PING\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  arm_sine_path = argv[2];
  ping_path = argv[3];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(arm_sine_tracks_the_sine, start_daemon, stop_daemon),
      cmocka_unit_test(arm_sine_rejects_a_bad_option),
      cmocka_unit_test_setup_teardown(ping_succeeds_against_the_daemon, start_daemon, stop_daemon),
      cmocka_unit_test(ping_fails_when_nothing_answers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
