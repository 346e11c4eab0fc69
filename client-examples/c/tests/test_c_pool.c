/* SPDX-License-Identifier: Apache-2.0 */
/* The C pool (lcpsim_pool.h) against two live lcpsimd standing in for a Service's pods: 16
 * worlds (copies of the built-in world) over both, one daemon killed (SIGKILL) mid-run. Every
 * world ends at the step count asked; the killed daemon's worlds, and only they, are reported
 * moved, from their last snapshot, because the connection was lost: the pool's monitor of the
 * connection saw it, the tick's timeout (a minute) never came; and they end bitwise where a run
 * without the kill leaves them. Also endpoint resolution. */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "lcpsim_pool.h"
#include "test_daemon.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *daemon_path;

enum {
  WORLDS = 16,
  JOINTS = 7,
  TICKS = 15,
  STEPS = 2,
  SNAPSHOT_EVERY = 4,
  KILL_BEFORE = 9, /* the tick before which one daemon is killed */
  /* Long enough that a move made on the tick's timeout would not be reported as a lost
   * connection, and would make the killed tick last at least that long. */
  TIMEOUT_MS = 60000,
};

/* World w's targets at tick t; `positions` holds their values. */
static void targets_of(int t, double positions[WORLDS][JOINTS], lcpsim_target_t targets[WORLDS]) {
  static const double kp = 150.0, kd = 12.0;
  for (int w = 0; w < WORLDS; ++w) {
    for (int j = 0; j < JOINTS; ++j)
      positions[w][j] = 0.5 * sin(0.15 * t + 0.2 * w + 0.9 * j);
    targets[w] = (lcpsim_target_t){.robot = "arm7",
                                   .mode = LCPSIM_MODE_POSITION,
                                   .position = positions[w],
                                   .n_position = JOINTS,
                                   .kp = &kp,
                                   .n_kp = 1,
                                   .kd = &kd,
                                   .n_kd = 1,
                                   .gravity_compensation = LCPSIM_GRAVITY_COMPENSATION_ON};
  }
}

/* Runs TICKS ticks; with `victim` not NULL, SIGKILLs it before tick KILL_BEFORE, and
 * `killed_tick_ms` (may be NULL) gets how long that tick took. Copies each world's final q and
 * qd into `final`. */
static void run(lcpsim_pool_t *pool, test_daemon_t *victim, double final[WORLDS][2 * JOINTS],
                double *killed_tick_ms) {
  const lcpsim_batch_result_t *const *results = NULL;
  for (int t = 1; t <= TICKS; ++t) {
    if (victim && t == KILL_BEFORE)
      kill(victim->pid, SIGKILL);
    double positions[WORLDS][JOINTS];
    lcpsim_target_t targets[WORLDS];
    targets_of(t, positions, targets);
    double start = test_now_ms();
    int code = lcpsim_pool_step(pool, STEPS, targets, t == TICKS ? LCPSIM_BATCH_RETURN_STATE : 0u,
                                &results);
    if (killed_tick_ms && t == KILL_BEFORE)
      *killed_tick_ms = test_now_ms() - start;
    if (code != LCPSIM_OK)
      fprintf(stderr, "tick %d: %s\n", t, lcpsim_pool_last_error(pool));
    assert_int_equal(code, LCPSIM_OK);
  }
  for (int w = 0; w < WORLDS; ++w) {
    assert_int_equal(results[w]->step_count, TICKS * STEPS);
    const lcpsim_robot_state_t *arm = lcpsim_state_find_robot(results[w]->state, "arm7");
    assert_non_null(arm);
    assert_int_equal(arm->n_q, JOINTS);
    memcpy(final[w], arm->q, JOINTS * sizeof *arm->q);
    memcpy(final[w] + JOINTS, arm->qd, JOINTS * sizeof *arm->qd);
  }
}

static void killed_daemon_worlds_move(void **state) {
  (void)state;
  static const char *const args[] = {"--workers", "1", "--max-worlds", "64", NULL};
  test_daemon_t daemons[2];
  for (int d = 0; d < 2; ++d)
    assert_int_equal(test_daemon_start_args(daemon_path, args, &daemons[d]), 0);
  const char *endpoints[2] = {daemons[0].rep, daemons[1].rep};
  lcpsim_pool_options_t options = {
      .prefix = "w", .snapshot_every = SNAPSHOT_EVERY, .timeout_ms = TIMEOUT_MS};
  lcpsim_pool_t *pool = NULL;
  assert_int_equal(lcpsim_pool_new(endpoints, 2, WORLDS, &options, &pool), LCPSIM_OK);
  bool on_victim[WORLDS];
  for (int w = 0; w < WORLDS; ++w) {
    on_victim[w] = strcmp(lcpsim_pool_world_endpoint(pool, (size_t)w), daemons[1].rep) == 0;
    assert_int_equal(on_victim[w], w % 2 == 1);
  }
  double moved_final[WORLDS][2 * JOINTS], expected[WORLDS][2 * JOINTS];
  double killed_tick_ms = 0.0;
  run(pool, &daemons[1], moved_final, &killed_tick_ms);
  /* The move did not wait for the timeout. */
  assert_true(killed_tick_ms < TIMEOUT_MS);
  const char *const *failed = NULL;
  assert_int_equal(lcpsim_pool_failed(pool, &failed), 1);
  assert_string_equal(failed[0], daemons[1].rep);
  const lcpsim_pool_move_t *moves = NULL;
  size_t n_moves = lcpsim_pool_moves(pool, &moves);
  assert_int_equal(n_moves, WORLDS / 2);
  for (size_t m = 0; m < n_moves; ++m) {
    assert_true(on_victim[moves[m].world]);
    assert_string_equal(moves[m].source, daemons[1].rep);
    assert_string_equal(moves[m].destination, daemons[0].rep);
    assert_string_equal(moves[m].reason, "connection lost");
    assert_int_equal(moves[m].from_step,
                     (KILL_BEFORE - 1) / SNAPSHOT_EVERY * SNAPSHOT_EVERY * STEPS);
  }
  for (int w = 0; w < WORLDS; ++w)
    assert_string_equal(lcpsim_pool_world_endpoint(pool, (size_t)w), daemons[0].rep);
  lcpsim_pool_destroy(&pool);
  /* The reference: the same on the survivor alone, nothing killed. */
  options.prefix = "r";
  assert_int_equal(lcpsim_pool_new(endpoints, 1, WORLDS, &options, &pool), LCPSIM_OK);
  run(pool, NULL, expected, NULL);
  assert_int_equal(lcpsim_pool_moves(pool, NULL), 0);
  lcpsim_pool_destroy(&pool);
  for (int w = 0; w < WORLDS; ++w)
    assert_memory_equal(moved_final[w], expected[w], sizeof expected[w]);
  assert_int_equal(test_daemon_stop(&daemons[0]), 0);
  test_daemon_stop(&daemons[1]);
}

static void endpoints_resolve(void **state) {
  (void)state;
  char **endpoints = NULL;
  size_t count = 0;
  assert_int_equal(lcpsim_resolve_endpoints("tcp://localhost:5555", &endpoints, &count), LCPSIM_OK);
  bool loopback = false;
  for (size_t i = 0; i < count; ++i)
    loopback = loopback || strcmp(endpoints[i], "tcp://127.0.0.1:5555") == 0;
  assert_true(loopback);
  lcpsim_endpoints_free(endpoints, count);
  assert_int_equal(lcpsim_resolve_endpoints("tcp://[::1]:7", &endpoints, &count), LCPSIM_OK);
  assert_int_equal(count, 1);
  assert_string_equal(endpoints[0], "tcp://[::1]:7");
  lcpsim_endpoints_free(endpoints, count);
  assert_int_equal(lcpsim_resolve_endpoints("ipc:///tmp/sim", &endpoints, &count), LCPSIM_OK);
  assert_int_equal(count, 1);
  assert_string_equal(endpoints[0], "ipc:///tmp/sim");
  lcpsim_endpoints_free(endpoints, count);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LCPSIMD\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(killed_daemon_worlds_move),
      cmocka_unit_test(endpoints_resolve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
