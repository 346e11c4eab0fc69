/* SPDX-License-Identifier: Apache-2.0 */
/* The C pool (lcpsim_pool.h) against two live lcpsimd standing in for a Service's pods: 16
 * worlds (copies of the built-in world) over both, one daemon killed (SIGKILL) mid-run. Every
 * world ends at the step count asked; the killed daemon's worlds, and only they, are reported
 * moved, from their last snapshot, because the connection was lost: the pool's monitor of the
 * connection saw it, the tick's timeout (a minute) never came; and they end bitwise where a run
 * without the kill leaves them. The same with every world's dynamics randomised through the pool
 * (link masses, joint damping) before and after the last snapshot, the kill found by a tick or
 * by an edit: a snapshot holds no dynamics, so only re-applying the edits, each between the same
 * ticks, ends the moved worlds where a run without the kill leaves them. A refused edit is not
 * re-applied. Also endpoint resolution. */
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
/* The two daemons of a test, started by its setup and stopped by its teardown, which cmocka runs
 * also after a failed assertion: none is left running. */
static test_daemon_t daemons[2];

static int start_daemons(void **state) {
  (void)state;
  static const char *const args[] = {"--workers", "1", "--max-worlds", "64", NULL};
  for (int d = 0; d < 2; ++d)
    if (test_daemon_start_args(daemon_path, args, &daemons[d]) != 0)
      return -1;
  return 0;
}

static int stop_daemons(void **state) {
  (void)state;
  for (int d = 0; d < 2; ++d)
    test_daemon_stop(&daemons[d]); /* -1 for one stopped already */
  return 0;
}

enum {
  WORLDS = 16,
  JOINTS = 7,
  TICKS = 15,
  STEPS = 2,
  SNAPSHOT_EVERY = 4,
  KILL_BEFORE = 9, /* the tick before which one daemon is killed */
  /* The same in the runs that edit the dynamics: two ticks, and edits, between the last snapshot
   * (tick 8) and the kill. */
  EDITED_KILL_BEFORE = 11,
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

/* What a run does besides its ticks. */
typedef struct {
  test_daemon_t *victim; /* SIGKILLed before tick kill_before (NULL: nobody) */
  int kill_before;
  void (*edit)(lcpsim_pool_t *pool, int tick); /* called before each tick (NULL: no edits) */
  /* The kill's tick's edits come before the kill (the tick finds the failed daemon) rather than
   * after it (an edit finds it). */
  bool kill_after_edits;
} plan_t;

/* Runs TICKS ticks as `plan` says; `killed_tick_ms` (may be NULL) gets how long the tick after
 * the kill took. Copies each world's final q and qd into `final`. */
static void run(lcpsim_pool_t *pool, const plan_t *plan, double final[WORLDS][2 * JOINTS],
                double *killed_tick_ms) {
  const lcpsim_batch_result_t *const *results = NULL;
  for (int t = 1; t <= TICKS; ++t) {
    bool kill_now = plan->victim && t == plan->kill_before;
    if (kill_now && !plan->kill_after_edits)
      kill(plan->victim->pid, SIGKILL);
    if (plan->edit)
      plan->edit(pool, t);
    if (kill_now && plan->kill_after_edits)
      kill(plan->victim->pid, SIGKILL);
    /* Edits made after the kill found the failed daemon: its worlds moved before this tick. */
    if (kill_now && plan->edit && !plan->kill_after_edits)
      assert_int_equal(lcpsim_pool_moves(pool, NULL), WORLDS / 2);
    double positions[WORLDS][JOINTS];
    lcpsim_target_t targets[WORLDS];
    targets_of(t, positions, targets);
    double start = test_now_ms();
    int code = lcpsim_pool_step(pool, STEPS, targets, t == TICKS ? LCPSIM_BATCH_RETURN_STATE : 0u,
                                &results);
    if (killed_tick_ms && kill_now)
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

/* A pool of WORLDS worlds named prefix + index over the first n_daemons daemons. */
static lcpsim_pool_t *pool_over(size_t n_daemons, const char *prefix) {
  const char *endpoints[2] = {daemons[0].rep, daemons[1].rep};
  lcpsim_pool_options_t options = {
      .prefix = prefix, .snapshot_every = SNAPSHOT_EVERY, .timeout_ms = TIMEOUT_MS};
  lcpsim_pool_t *pool = NULL;
  assert_int_equal(lcpsim_pool_new(endpoints, n_daemons, WORLDS, &options, &pool), LCPSIM_OK);
  return pool;
}

/* A run's reference: the same ticks and edits on the survivor alone, nothing killed. */
static void run_on_survivor(const char *prefix, void (*edit)(lcpsim_pool_t *pool, int tick),
                            double final[WORLDS][2 * JOINTS]) {
  lcpsim_pool_t *pool = pool_over(1, prefix);
  run(pool, &(plan_t){.edit = edit}, final, NULL);
  assert_int_equal(lcpsim_pool_moves(pool, NULL), 0);
  lcpsim_pool_destroy(&pool);
}

static void killed_daemon_worlds_move(void **state) {
  (void)state;
  lcpsim_pool_t *pool = pool_over(2, "w");
  bool on_victim[WORLDS];
  for (int w = 0; w < WORLDS; ++w) {
    on_victim[w] = strcmp(lcpsim_pool_world_endpoint(pool, (size_t)w), daemons[1].rep) == 0;
    assert_int_equal(on_victim[w], w % 2 == 1);
  }
  double moved_final[WORLDS][2 * JOINTS], expected[WORLDS][2 * JOINTS];
  double killed_tick_ms = 0.0;
  run(pool, &(plan_t){.victim = &daemons[1], .kill_before = KILL_BEFORE}, moved_final,
      &killed_tick_ms);
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
  run_on_survivor("r", NULL, expected);
  for (int w = 0; w < WORLDS; ++w)
    assert_memory_equal(moved_final[w], expected[w], sizeof expected[w]);
  assert_int_equal(test_daemon_stop(&daemons[0]), 0);
}

/* Domain randomisation: world w's dynamics, edited before ticks 1 and 6 (made before the last
 * snapshot before the kill, tick 8, so kept apart from the ticks) and 10 and 11 (after it, so
 * logged between the ticks), each value its own function of w. */
static void randomise(lcpsim_pool_t *pool, int tick) {
  for (int w = 0; w < WORLDS; ++w) {
    lcpsim_body_dynamics_t link = {.robot = "arm7", .has_mass = true};
    lcpsim_joint_dynamics_t joint = {.robot = "arm7", .has_damping = true};
    switch (tick) {
    case 1:
      link.link = "link3";
      link.mass = 1.0 + 0.05 * w;
      joint.joint = "joint2";
      joint.damping = 0.1 + 0.02 * w;
      break;
    case 6:
      joint.joint = "joint5";
      joint.damping = 0.3 + 0.01 * w;
      break;
    case 10:
      link.link = "link5";
      link.mass = 1.2 + 0.03 * w;
      break;
    case 11:
      link.link = "link7";
      link.mass = 0.8 + 0.02 * w;
      joint.joint = "joint4";
      joint.damping = 0.05 * w;
      break;
    default:
      return;
    }
    int code = lcpsim_pool_set_dynamics(pool, (size_t)w, &link, link.link ? 1 : 0, &joint,
                                        joint.joint ? 1 : 0);
    if (code != LCPSIM_OK)
      fprintf(stderr, "tick %d, world %d: %s\n", tick, w, lcpsim_pool_last_error(pool));
    assert_int_equal(code, LCPSIM_OK);
  }
}

/* Kills one of two daemons during a randomised run and compares with the same run on the survivor
 * alone; with `edit_finds_it`, the kill comes just before an edit of every world, which finds
 * the failed daemon and moves its worlds before it goes on. */
static void randomised_worlds_move(bool edit_finds_it) {
  lcpsim_pool_t *pool = pool_over(2, "w");
  double moved_final[WORLDS][2 * JOINTS], expected[WORLDS][2 * JOINTS],
      unedited[WORLDS][2 * JOINTS];
  run(pool,
      &(plan_t){.victim = &daemons[1],
                .kill_before = EDITED_KILL_BEFORE,
                .edit = randomise,
                .kill_after_edits = !edit_finds_it},
      moved_final, NULL);
  const lcpsim_pool_move_t *moves = NULL;
  size_t n_moves = lcpsim_pool_moves(pool, &moves);
  assert_int_equal(n_moves, WORLDS / 2);
  for (size_t m = 0; m < n_moves; ++m) {
    assert_int_equal(moves[m].world % 2, 1);
    assert_string_equal(moves[m].source, daemons[1].rep);
    /* Found by the connection's monitor or the send, not by the minute's timeout. */
    assert_string_not_equal(moves[m].reason, "no reply within the timeout");
    assert_int_equal(moves[m].from_step,
                     (EDITED_KILL_BEFORE - 1) / SNAPSHOT_EVERY * SNAPSHOT_EVERY * STEPS);
  }
  lcpsim_pool_destroy(&pool);
  run_on_survivor("r", randomise, expected);
  run_on_survivor("u", NULL, unedited);
  for (int w = 0; w < WORLDS; ++w) {
    assert_memory_equal(moved_final[w], expected[w], sizeof expected[w]);
    /* The edits change every world's motion: a move that dropped them would show. */
    assert_memory_not_equal(expected[w], unedited[w], sizeof expected[w]);
  }
  assert_int_equal(test_daemon_stop(&daemons[0]), 0);
}

static void randomised_worlds_move_when_a_tick_finds_the_kill(void **state) {
  (void)state;
  randomised_worlds_move(false);
}

static void randomised_worlds_move_when_an_edit_finds_the_kill(void **state) {
  (void)state;
  randomised_worlds_move(true);
}

/* Before tick 6 every world gets an edit with a good entry (link3's mass) and a bad one (a joint
 * arm7 does not have): refused whole, with the daemon's message, and not recorded, so the move
 * after the kill (before tick 7) replays without it and every world ends where a run without any
 * edit leaves it. */
static void refuse_everything(lcpsim_pool_t *pool, int tick) {
  lcpsim_body_dynamics_t link = {.robot = "arm7", .link = "link3", .has_mass = true, .mass = 3.0};
  lcpsim_joint_dynamics_t joint = {
      .robot = "arm7", .joint = "no_such_joint", .has_damping = true, .damping = 1.0};
  if (tick == 1) {
    assert_int_equal(lcpsim_pool_set_dynamics(pool, WORLDS, &link, 1, NULL, 0), LCPSIM_ERR_USAGE);
    assert_int_equal(lcpsim_pool_set_dynamics(pool, 0, NULL, 1, NULL, 0), LCPSIM_ERR_USAGE);
  }
  if (tick != 6)
    return;
  for (int w = 0; w < WORLDS; ++w) {
    assert_int_equal(lcpsim_pool_set_dynamics(pool, (size_t)w, &link, 1, &joint, 1),
                     LCPSIM_ERR_NOT_FOUND);
    assert_non_null(strstr(lcpsim_pool_last_error(pool),
                           "set_dynamics.joints[0].joint: robot 'arm7' has no joint named "
                           "'no_such_joint'"));
  }
}

static void refused_edit_is_not_replayed(void **state) {
  (void)state;
  lcpsim_pool_t *pool = pool_over(2, "w");
  double moved_final[WORLDS][2 * JOINTS], expected[WORLDS][2 * JOINTS];
  run(pool,
      &(plan_t){.victim = &daemons[1],
                .kill_before = 7,
                .edit = refuse_everything,
                .kill_after_edits = true},
      moved_final, NULL);
  assert_int_equal(lcpsim_pool_moves(pool, NULL), WORLDS / 2);
  lcpsim_pool_destroy(&pool);
  run_on_survivor("r", NULL, expected);
  for (int w = 0; w < WORLDS; ++w)
    assert_memory_equal(moved_final[w], expected[w], sizeof expected[w]);
  assert_int_equal(test_daemon_stop(&daemons[0]), 0);
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
      cmocka_unit_test_setup_teardown(killed_daemon_worlds_move, start_daemons, stop_daemons),
      cmocka_unit_test_setup_teardown(randomised_worlds_move_when_a_tick_finds_the_kill,
                                      start_daemons, stop_daemons),
      cmocka_unit_test_setup_teardown(randomised_worlds_move_when_an_edit_finds_the_kill,
                                      start_daemons, stop_daemons),
      cmocka_unit_test_setup_teardown(refused_edit_is_not_replayed, start_daemons, stop_daemons),
      cmocka_unit_test(endpoints_resolve),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
