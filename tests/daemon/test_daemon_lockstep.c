/* SPDX-License-Identifier: Apache-2.0 */
/* Lockstep equivalence: a control loop of 1000 Step(1, targets) calls with
 * the state returned, against the daemon over a REQ socket and through the C
 * client library, ends in exactly the state (bit for bit) of the same world
 * stepped in-process through the engine API with the same controls
 * (lockstep_reference.h), also with other requests between the steps. The
 * Python client's run is test_daemon_python_lockstep.py. */
#include "daemon_harness.h"
#include "lcpsim_client.h"
#include "lockstep_reference.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { STEPS = 1000 };

typedef struct fixture {
  daemon_proc daemon;
  lockstep_state_t reference;
  double h;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  char error[512];
  if (lockstep_reference_run(STEPS, &f->reference, &f->h, error, sizeof error) != 0)
    fail_msg("in-process reference run: %s", error);
  assert_int_equal(f->reference.step_count, STEPS);
  daemon_start(&f->daemon, NULL);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  daemon_stop(&f->daemon);
  free(f);
  test_context_destroy();
  return 0;
}

/* The daemon's timestep is the reference run's, to the bit. */
static void check_timestep(double daemon_h, double reference_h) {
  assert_memory_equal(&daemon_h, &reference_h, sizeof daemon_h);
}

static void assert_same_state(const lockstep_state_t *reference, const Lcpsim__V1__State *message) {
  lockstep_state_t got;
  assert_int_equal(lockstep_state_from_message(message, &got), 0);
  assert_int_equal(got.step_count, reference->step_count);
  assert_int_equal(got.count, reference->count);
  assert_int_equal(got.q_count, LOCKSTEP_JOINTS);
  for (size_t i = 0; i < got.count; ++i)
    if (memcmp(&got.values[i], &reference->values[i], sizeof(double)) != 0)
      fail_msg("value %zu of %zu differs: daemon %a, in-process %a", i, got.count, got.values[i],
               reference->values[i]);
  /* And the arm has moved: the comparison is of a state worth comparing. */
  double moved = 0.0;
  for (size_t i = 0; i < got.q_count; ++i)
    moved += fabs(got.values[got.q_offset + i]);
  assert_true(moved > 0.1);
}

/* The reference run's targets for the C client: every joint of the arm in
 * position mode to `position`, with the reference's gains. */
static const double reference_kp = LOCKSTEP_KP, reference_kd = LOCKSTEP_KD;
static lcpsim_target_t reference_target(double position[LOCKSTEP_JOINTS]) {
  return (lcpsim_target_t){.robot = LOCKSTEP_ROBOT,
                           .mode = LCPSIM_MODE_POSITION,
                           .position = position,
                           .n_position = LOCKSTEP_JOINTS,
                           .kp = &reference_kp,
                           .n_kp = 1,
                           .kd = &reference_kd,
                           .n_kd = 1};
}

static void test_req_loop_matches_in_process_bitwise(void **state) {
  fixture *f = *state;
  void *client = connect_req(f->daemon.rep);
  Lcpsim__V1__Reply *info = call_get_info(client, 1);
  check_timestep(info->get_info->settings->timestep, f->h);
  reply_free(&info);

  double position[LOCKSTEP_JOINTS], kp = LOCKSTEP_KP, kd = LOCKSTEP_KD;
  Lcpsim__V1__SetTargetRequest target = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  target.robot = (char *)LOCKSTEP_ROBOT;
  target.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  target.position = position;
  target.n_position = LOCKSTEP_JOINTS;
  target.kp = &kp;
  target.n_kp = 1;
  target.kd = &kd;
  target.n_kd = 1;
  Lcpsim__V1__SetTargetRequest *targets[] = {&target};
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 1;
  step.n_targets = 1;
  step.targets = targets;
  step.return_state = true;
  Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
  r.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  r.step = &step;
  Lcpsim__V1__Reply *reply = NULL;
  for (int k = 0; k < STEPS; ++k) {
    lockstep_targets(k, f->h, position);
    r.id = 100 + (uint64_t)k;
    reply_free(&reply);
    reply = rpc(client, &r);
    assert_ok(reply, r.id, LCPSIM__V1__REPLY__RESULT_STEP);
    assert_int_equal(reply->step->step_count, (uint64_t)k + 1);
    assert_non_null(reply->step->state);
  }
  assert_same_state(&f->reference, reply->step->state);
  reply_free(&reply);
  /* GetState afterwards says the same. */
  reply = call_get_state(client, 2, false);
  assert_same_state(&f->reference, reply->get_state->state);
  reply_free(&reply);
  close_socket(&client);
}

static void test_c_client_loop_matches_in_process_bitwise(void **state) {
  fixture *f = *state;
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(f->daemon.rep, REPLY_TIMEOUT_MS, &client), LCPSIM_OK);
  lcpsim_info_t *info = NULL;
  assert_int_equal(lcpsim_client_get_info(client, &info), LCPSIM_OK);
  check_timestep(info->settings->timestep, f->h);
  lcpsim_info_destroy(&info);

  double position[LOCKSTEP_JOINTS];
  const lcpsim_target_t target = reference_target(position);
  lcpsim_state_t *s = NULL;
  for (int k = 0; k < STEPS; ++k) {
    lockstep_targets(k, f->h, position);
    lcpsim_state_destroy(&s);
    int rc = lcpsim_client_step(client, 1, &target, 1, LCPSIM_WITHOUT_CONTACTS, &s);
    if (rc != LCPSIM_OK)
      fail_msg("step %d: %s: %s", k, lcpsim_status_name(rc), lcpsim_client_last_error(client));
    assert_int_equal(s->step_count, (uint64_t)k + 1);
  }
  assert_same_state(&f->reference, s);
  lcpsim_state_destroy(&s);
  lcpsim_client_destroy(&client);
}

/* The same loop with other requests in it must still end bitwise as the
 * reference: ticks split into SetTarget then Step(1) without targets,
 * GetState between steps (nothing changes), and a RestoreState back to a
 * snapshot taken earlier, after which the loop runs on from there. */
static void test_loop_with_other_requests_matches_in_process_bitwise(void **state) {
  fixture *f = *state;
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(f->daemon.rep, REPLY_TIMEOUT_MS, &client), LCPSIM_OK);
  double position[LOCKSTEP_JOINTS];
  const lcpsim_target_t target = reference_target(position);
  enum { SAVE_AT = 300, RESTORE_AT = 600 };
  uint8_t *snapshot = NULL;
  size_t snapshot_size = 0;
  bool restored = false;
  lcpsim_state_t *s = NULL;
  for (int k = 0; k < STEPS; ++k) {
    if (k == SAVE_AT && !restored)
      assert_int_equal(lcpsim_client_save_state(client, NULL, &snapshot, &snapshot_size, NULL),
                       LCPSIM_OK);
    if (k == RESTORE_AT && !restored) {
      double time = 0.0;
      assert_int_equal(lcpsim_client_restore_state(client, snapshot, snapshot_size, &time),
                       LCPSIM_OK);
      restored = true;
      k = SAVE_AT;
    }
    lockstep_targets(k, f->h, position);
    lcpsim_state_destroy(&s);
    int rc;
    if (k % 7 == 3) {
      /* a tick in two requests, a look at the state between */
      assert_int_equal(lcpsim_client_set_target(client, &target), LCPSIM_OK);
      assert_int_equal(lcpsim_client_get_state(client, LCPSIM_WITHOUT_CONTACTS, &s), LCPSIM_OK);
      lcpsim_state_destroy(&s);
      rc = lcpsim_client_step(client, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, &s);
    } else {
      rc = lcpsim_client_step(client, 1, &target, 1, LCPSIM_WITHOUT_CONTACTS, &s);
    }
    if (rc != LCPSIM_OK)
      fail_msg("step %d: %s: %s", k, lcpsim_status_name(rc), lcpsim_client_last_error(client));
    assert_int_equal(s->step_count, (uint64_t)k + 1);
  }
  assert_true(restored);
  assert_same_state(&f->reference, s);
  lcpsim_state_destroy(&s);
  free(snapshot);
  lcpsim_client_destroy(&client);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_req_loop_matches_in_process_bitwise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_c_client_loop_matches_in_process_bitwise, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_loop_with_other_requests_matches_in_process_bitwise,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
