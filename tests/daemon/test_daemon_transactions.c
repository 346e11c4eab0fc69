/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd's promises about failed requests and what it sends: every string
 * of a request must be UTF-8 (refused naming the field otherwise), names are
 * quoted escaped and cut short, every reply message is UTF-8; a request that
 * fails leaves the world as it was (everything a client can read of it:
 * the snapshot bytes, GetInfo, GetState), whether its Step fails at its
 * first step, after many slices, or building its reply; a world that could
 * not be put back is rebuilt from the start-up scene and the reply says so;
 * a floating pendulum at the largest gravity allowed fails its step with a
 * clear error and nothing non-finite is ever sent. */
#include "../test_models.h"
#include "daemon_harness.h"
#include "error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include <cmocka.h>

/* Sends a request, asserts the reply is an error with the code whose
 * message contains needle and is UTF-8, and that the world is as before. */
static Lcpsim__V1__Reply *refused_unchanged(void *client, const Lcpsim__V1__Request *request,
                                            Lcpsim__V1__Status__Code code, const char *needle) {
  uint64_t before = world_hash_all(client);
  Lcpsim__V1__Reply *reply = rpc(client, request);
  print_message("%s\n", reply->status ? reply->status->message : "(no status)");
  assert_error(reply, request->id, code, needle);
  const char *message = reply->status->message;
  assert_true(lcpd_utf8_valid(message, strlen(message)));
  assert_false(reply->status->world_restored);
  assert_true(world_hash_all(client) == before);
  return reply;
}

static void test_strings_must_be_utf8(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--log-level", "error", NULL});
  void *client = connect_req(d.rep);

  /* An overlong '/', a surrogate, a code point above U+10FFFF, a sequence
   * cut short: each in a different place of a request. */
  Lcpsim__V1__SetTargetRequest target = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  target.robot = (char *)"\xc0\xaf";
  Lcpsim__V1__Request r = request_of(1, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &target);
  Lcpsim__V1__Reply *reply =
      refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                        "set_target.robot is not valid UTF-8");
  reply_free(&reply);

  static char *joints[] = {(char *)"joint1", (char *)"\xed\xa0\x80"};
  Lcpsim__V1__SetTargetRequest t = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  t.robot = (char *)"arm7";
  t.joints = joints;
  t.n_joints = 2;
  Lcpsim__V1__SetTargetRequest *targets[] = {&t};
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 1;
  step.targets = targets;
  step.n_targets = 1;
  r = request_of(2, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                            "step.targets[0].joints[1] is not valid UTF-8");
  reply_free(&reply);

  Lcpsim__V1__LoadModelRequest__PackagesEntry entry =
      LCPSIM__V1__LOAD_MODEL_REQUEST__PACKAGES_ENTRY__INIT;
  entry.key = (char *)"pkg\xf4\x90\x80\x80";
  entry.value = (char *)"/tmp";
  Lcpsim__V1__LoadModelRequest__PackagesEntry *entries[] = {&entry};
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)"<robot name=\"r\"/>";
  load.packages = entries;
  load.n_packages = 1;
  r = request_of(3, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                            "load_model.packages[0].key is not valid UTF-8");
  reply_free(&reply);

  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"box\xe2\x82";
  r = request_of(4, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                            "remove.name is not valid UTF-8");
  reply_free(&reply);

  /* Text beyond ASCII is welcome. */
  Lcpsim__V1__Vec3 half = LCPSIM__V1__VEC3__INIT;
  half.x = half.y = half.z = 0.05;
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = LCPSIM__V1__SHAPE__TYPE__BOX;
  shape.half_extents = &half;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.name = (char *)"bo\xc3\xaete_\xf0\x9f\x93\xa6"; /* boîte_📦 */
  spawn.shape = &shape;
  spawn.mass = 1.0;
  r = request_of(5, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
  reply = rpc(client, &r);
  assert_ok(reply, 5, LCPSIM__V1__REPLY__RESULT_SPAWN);
  assert_string_equal(reply->spawn->name, spawn.name);
  reply_free(&reply);

  close_socket(&client);
  daemon_stop(&d);
}

static void test_names_are_quoted_safely(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--log-level", "error", NULL});
  void *client = connect_req(d.rep);
  /* Control characters are escaped. */
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"\x1b[31mred\x7f\\\xc2\x85";
  Lcpsim__V1__Request r = request_of(1, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  Lcpsim__V1__Reply *reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__NOT_FOUND,
                                               "'\\x1b[31mred\\x7f\\x5c\\u0085'");
  reply_free(&reply);
  /* A long name is cut on a character boundary (é is 2 bytes: 32 of them
   * fill the 64 bytes quoted) and ends with an ellipsis. */
  char long_name[601];
  for (int i = 0; i < 300; ++i)
    memcpy(long_name + 2 * i, "\xc3\xa9", 2);
  long_name[600] = '\0';
  remove.name = long_name;
  r = request_of(2, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  char expected[80] = "'";
  for (int i = 0; i < 32; ++i)
    strcat(expected, "\xc3\xa9");
  strcat(expected, "\xe2\x80\xa6'");
  reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__NOT_FOUND, expected);
  assert_true(strlen(reply->status->message) < 200);
  reply_free(&reply);
  close_socket(&client);
  daemon_stop(&d);
}

static const char PENDULUM[] = TEST_FLOATING_PENDULUM_URDF;

static void set_gravity(void *client, uint64_t id, double gz, Lcpsim__V1__Status__Code code) {
  Lcpsim__V1__Vec3 gravity = LCPSIM__V1__VEC3__INIT;
  gravity.z = gz;
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.gravity = &gravity;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  Lcpsim__V1__Reply *reply = code == LCPSIM__V1__STATUS__CODE__OK
                                 ? rpc(client, &r)
                                 : refused_unchanged(client, &r, code, "gravity");
  if (code == LCPSIM__V1__STATUS__CODE__OK)
    assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  reply_free(&reply);
}

/* The step fails with a clear error after many steps of a request, the
 * world is as before it, and every reply and every state streamed meanwhile
 * holds finite numbers only. */
static void test_floating_pendulum_at_huge_gravity(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--log-level", "error", NULL});
  void *client = connect_req(d.rep);
  void *subscriber = zmq_socket(test_context(), ZMQ_SUB);
  int zero = 0;
  zmq_setsockopt(subscriber, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(subscriber, ZMQ_SUBSCRIBE, "state", 5);
  assert_int_equal(zmq_connect(subscriber, d.pub), 0);

  set_gravity(client, 1, -1e12, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT);
  set_gravity(client, 2, -1e3, LCPSIM__V1__STATUS__CODE__OK);
  Lcpsim__V1__Vec3 up = LCPSIM__V1__VEC3__INIT;
  up.z = 3.0;
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  pose.position = &up;
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)PENDULUM;
  load.base_type = LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FLOATING;
  load.base_pose = &pose;
  Lcpsim__V1__Request r = request_of(3, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  Lcpsim__V1__Reply *reply = rpc(client, &r);
  assert_ok(reply, 3, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  reply_free(&reply);
  Lcpsim__V1__SubscribeRequest sub = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  sub.every_steps = 1;
  sub.include_contacts = true;
  r = request_of(4, LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, &sub);
  reply = rpc(client, &r);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
  /* The base thrown sideways at 0.9 times the speed bound: it crosses the
   * position bound after a few hundred steps. */
  Lcpsim__V1__Vec3 fast = LCPSIM__V1__VEC3__INIT;
  fast.x = 0.9 * LCP_STATE_MAX_LINEAR_SPEED;
  Lcpsim__V1__Twist twist = LCPSIM__V1__TWIST__INIT;
  twist.linear = &fast;
  Lcpsim__V1__SetRobotStateRequest set = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
  set.robot = (char *)"pendulum";
  set.base_twist = &twist;
  r = request_of(5, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set);
  reply = rpc(client, &r);
  assert_ok(reply, 5, LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE);
  reply_free(&reply);

  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 2000;
  step.return_state = true;
  r = request_of(6, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INTERNAL,
                            "robot 'pendulum': its base's position x = ");
  assert_non_null(strstr(reply->status->message, "the world is as before the request"));
  reply_free(&reply);
  /* Every state streamed during the failed Step was finite and within the
   * bounds (PUB/SUB may drop the first ones: any number of them is fine). */
  int streamed = 0;
  Lcpsim__V1__State *published;
  while ((published = receive_state(subscriber, 300)) != NULL) {
    assert_true(message_all_finite(&published->base));
    for (size_t i = 0; i < published->n_robots; ++i)
      assert_true(fabs(published->robots[i]->q[0]) <= LCP_STATE_MAX_POSITION);
    lcpsim__v1__state__free_unpacked(published, NULL);
    streamed++;
  }
  print_message("%d states streamed during the failed Step, all finite\n", streamed);
  /* A joint spinning beyond the bound is refused when it is set: a world
   * whose every step would fail is never made. */
  double qd[7] = {0, 0, 0, 0, 0, 0, 2.0 * LCP_STATE_MAX_ANGULAR_SPEED};
  set.base_twist = NULL;
  set.qd = qd;
  set.n_qd = 7;
  r = request_of(7, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set);
  reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                            "robot 'pendulum': the joint of link 'bob' moves at");
  reply_free(&reply);
  reply = call_get_state(client, 9, true);
  assert_true(message_all_finite(&reply->base));
  reply_free(&reply);
  close_socket(&subscriber);
  close_socket(&client);
  daemon_stop(&d);
}

/* A daemon whose steps (and undo) fail on demand: LCPSIMD_TEST_FAULTS, read at
 * its start; returns a client connected to it. */
static void *start_with_faults(daemon_proc *d, const char *faults) {
  setenv("LCPSIMD_TEST_FAULTS", faults, 1);
  daemon_start(d, (const char *[]){"--log-level", "error", NULL});
  unsetenv("LCPSIMD_TEST_FAULTS");
  return connect_req(d->rep);
}

/* Steps of the built-in arm with targets, whose last step is made to fail
 * (LCPSIMD_TEST_FAULTS=step): after one step, and after enough steps to run
 * in many slices, the world is as before the request, targets included. */
static void test_injected_step_failure_undone(void **state) {
  (void)state;
  daemon_proc d;
  void *client = start_with_faults(&d, "step");
  call_step(client, 1, 0);
  static double q[] = {0.3};
  static double kp[] = {80.0}, kd[] = {4.0};
  Lcpsim__V1__SetTargetRequest t = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  t.robot = (char *)"arm7";
  t.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  t.position = q;
  t.n_position = 1;
  t.kp = kp;
  t.n_kp = 1;
  t.kd = kd;
  t.n_kd = 1;
  Lcpsim__V1__SetTargetRequest *targets[] = {&t};
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.targets = targets;
  step.n_targets = 1;
  step.return_state = true;
  const int32_t counts[] = {1, 2, 20000};
  for (int i = 0; i < 3; ++i) {
    step.steps = counts[i];
    Lcpsim__V1__Request r = request_of(10 + (uint64_t)i, LCPSIM__V1__REQUEST__CALL_STEP, &step);
    Lcpsim__V1__Reply *reply = refused_unchanged(client, &r, LCPSIM__V1__STATUS__CODE__INTERNAL,
                                                 "a fault injected by the test");
    reply_free(&reply);
  }
  close_socket(&client);
  daemon_stop(&d);
}

/* An undo that fails too (LCPSIMD_TEST_FAULTS=step,undo): the world is
 * rebuilt from the start-up scene, and the reply says so. */
static void test_failed_undo_restores_startup_scene(void **state) {
  (void)state;
  daemon_proc d;
  void *client = start_with_faults(&d, "step,undo");
  uint64_t startup = world_hash_all(client);
  Lcpsim__V1__Vec3 half = LCPSIM__V1__VEC3__INIT;
  half.x = half.y = half.z = 0.05;
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = LCPSIM__V1__SHAPE__TYPE__BOX;
  shape.half_extents = &half;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.name = (char *)"extra";
  spawn.shape = &shape;
  spawn.mass = 1.0;
  Lcpsim__V1__Request r = request_of(1, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
  Lcpsim__V1__Reply *reply = rpc(client, &r);
  assert_ok(reply, 1, LCPSIM__V1__REPLY__RESULT_SPAWN);
  reply_free(&reply);
  assert_true(world_hash_all(client) != startup);
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 3;
  r = request_of(2, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  reply = rpc(client, &r);
  print_message("%s\n", reply->status->message);
  assert_error(reply, 2, LCPSIM__V1__STATUS__CODE__INTERNAL,
               "so it was restored to the start-up scene at time 0");
  assert_true(reply->status->world_restored);
  reply_free(&reply);
  assert_true(world_hash_all(client) == startup);
  close_socket(&client);
  daemon_stop(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strings_must_be_utf8),
      cmocka_unit_test(test_names_are_quoted_safely),
      cmocka_unit_test(test_floating_pendulum_at_huge_gravity),
      cmocka_unit_test(test_injected_step_failure_undone),
      cmocka_unit_test(test_failed_undo_restores_startup_scene),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  test_context_destroy();
  return failed;
}
