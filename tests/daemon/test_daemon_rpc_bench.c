/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-rpc-bench runs against a live daemon and prints its line, and
 * `lcpsim-bench rpc` does the same with a daemon it starts and stops;
 * `lcpsim-bench batch` steps its worlds through BatchStep with one and two
 * requests in flight and checks every world's result (no timing is
 * asserted: performance belongs to benchmarks, not tests). */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Runs a command; its first line of output goes to line. */
static int run_command(const char *command, char *line, size_t size) {
  FILE *out = popen(command, "r");
  assert_non_null(out);
  line[0] = '\0';
  if (!fgets(line, (int)size, out))
    line[0] = '\0';
  return pclose(out);
}

/* Runs the bench with the extra arguments; its one line of output goes to
 * line. Returns its exit status. */
static int run_bench(const daemon_proc *d, const char *extra, char *line, size_t size) {
  char command[1024];
  snprintf(command, sizeof command, "'%s' --endpoint '%s' --calls 100 %s", LCP_RPC_BENCH, d->rep,
           extra);
  return run_command(command, line, size);
}

static void assert_keys(const char *line, const char *call) {
  static const char *const keys[] = {"bytes=",  "calls=100 ",      " us_per_call=", " echo_us=",
                                     " ratio=", " request_bytes=", " reply_bytes="};
  assert_true(strncmp(line, "scene=rpc endpoint=tcp bytes=", 29) == 0);
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
    if (!strstr(line, keys[i]))
      fail_msg("no '%s' in: %s", keys[i], line);
  char want[32];
  snprintf(want, sizeof want, " call=%s ", call);
  assert_non_null(strstr(line, want));
}

static void test_step_and_ping_lines(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, NULL);
  char line[1024];
  assert_int_equal(run_bench(&d, "", line, sizeof line), 0);
  assert_keys(line, "step");
  /* A Step with the arm's 7 targets and a state of 8 links and 2 bodies. */
  const char *reply = strstr(line, "reply_bytes=");
  assert_true(atoi(reply + 12) > 500);
  assert_int_equal(run_bench(&d, "--call ping --bytes 32", line, sizeof line), 0);
  assert_keys(line, "ping");
  daemon_stop(&d);
}

static void test_step_needs_the_robot(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, NULL);
  char line[1024];
  assert_int_not_equal(run_bench(&d, "--robot nosuch 2>/dev/null", line, sizeof line), 0);
  daemon_stop(&d);
}

/* `lcpsim-bench rpc` starts lcpsimd on ephemeral ports, measures, and stops
 * it (the bench fails unless the daemon exits cleanly); options reach the
 * bench and, through --daemon-arg, the daemon. */
static void test_lcpsim_bench_rpc_starts_its_daemon(void **state) {
  (void)state;
  char command[1024], line[1024];
  snprintf(command, sizeof command, "'%s' rpc --calls 100", LCP_BENCH);
  assert_int_equal(run_command(command, line, sizeof line), 0);
  assert_keys(line, "step");
  snprintf(command, sizeof command,
           "'%s' rpc --calls 100 --call ping --daemon-arg=--busy-poll-us=0", LCP_BENCH);
  assert_int_equal(run_command(command, line, sizeof line), 0);
  assert_keys(line, "ping");
  /* --curve: a second daemon with CURVE on, timed beside the first. */
  snprintf(command, sizeof command, "'%s' rpc --calls 100 --curve", LCP_BENCH);
  assert_int_equal(run_command(command, line, sizeof line), 0);
  assert_keys(line, "step");
  assert_non_null(strstr(line, " curve_us="));
  assert_non_null(strstr(line, " curve_ratio="));
  /* A daemon that cannot start: an error, no line. */
  snprintf(command, sizeof command,
           "'%s' rpc --calls 100 --daemon-arg=--busy-poll-us=-1 2>/dev/null", LCP_BENCH);
  assert_int_not_equal(run_command(command, line, sizeof line), 0);
  assert_string_equal(line, "");
}

/* `lcpsim-bench batch` on a small grid: daemons of 1 and 2 workers, K = 1
 * and 3 worlds, 1 and 2 steps each, 1 and 2 BatchSteps in flight. The bench
 * fails unless every world of every reply ran its steps and returned its
 * state; each configuration gets its key=value line. */
static void test_lcpsim_bench_batch_runs_every_configuration(void **state) {
  (void)state;
  char command[1024];
  snprintf(command, sizeof command,
           "'%s' batch --workers 1,2 --worlds 1,3 --steps 1,2 --in-flight 1,2 --rounds 1 "
           "--robot-steps 60 --no-mujoco",
           LCP_BENCH);
  FILE *out = popen(command, "r");
  assert_non_null(out);
  char line[4096];
  int wire = 0, two_in_flight = 0, inprocess = 0;
  while (fgets(line, sizeof line, out)) {
    if (strncmp(line, "bench=batch mode=inprocess ", 27) == 0)
      ++inprocess;
    if (strncmp(line, "bench=batch mode=wire ", 22) != 0)
      continue;
    ++wire;
    two_in_flight += strstr(line, " in_flight=2 ") != NULL;
    const char *rate = strstr(line, " robot_steps_per_s=");
    assert_non_null(rate);
    assert_true(atof(rate + strlen(" robot_steps_per_s=")) > 0.0);
    assert_non_null(strstr(line, " us_per_call="));
  }
  assert_int_equal(pclose(out), 0);
  assert_int_equal(wire, 2 * 2 * 2 * 2); /* workers × worlds × steps × in flight */
  assert_int_equal(two_in_flight, wire / 2);
  assert_int_equal(inprocess, 2 + 2); /* one world per S, and K = 3 per S */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step_and_ping_lines),
      cmocka_unit_test(test_step_needs_the_robot),
      cmocka_unit_test(test_lcpsim_bench_rpc_starts_its_daemon),
      cmocka_unit_test(test_lcpsim_bench_batch_runs_every_configuration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
