/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd against damaged requests: valid requests of every call, with
 * bytes flipped, cut, repeated or inserted by a fixed-seed generator. Every
 * one gets a reply that decodes, with its status set, and the daemon keeps
 * serving. (Some mutations are still valid requests and change the world;
 * that is fine here.) */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void) {
  /* xorshift64*: deterministic, so a failure reproduces. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static size_t below(size_t n) { return n ? (size_t)(next_random() % n) : 0; }

/* The seeds: one valid request of each kind that carries numbers, names,
 * arrays and nested messages. */
static size_t make_seeds(unsigned char seeds[][512], size_t sizes[]) {
  size_t n = 0;
  static char *joints[] = {(char *)"joint1", (char *)"joint3"};
  static double q[] = {0.2, -0.4}, kp[] = {50.0}, kd[] = {5.0};
  Lcpsim__V1__SetTargetRequest t = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  t.robot = (char *)"arm7";
  t.joints = joints;
  t.n_joints = 2;
  t.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  t.position = q;
  t.n_position = 2;
  t.kp = kp;
  t.n_kp = 1;
  t.kd = kd;
  t.n_kd = 1;
  Lcpsim__V1__SetTargetRequest *targets[] = {&t};
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 2;
  step.targets = targets;
  step.n_targets = 1;
  step.return_state = true;
  step.include_contacts = true;
  Lcpsim__V1__Request r = request_of(1, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SET_TARGET;
  r.set_target = &t;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__Vec3 half = LCPSIM__V1__VEC3__INIT, where = LCPSIM__V1__VEC3__INIT;
  half.x = half.y = half.z = 0.05;
  where.x = -1.0;
  where.z = 0.5;
  Lcpsim__V1__Quat turn = LCPSIM__V1__QUAT__INIT;
  turn.w = 0.9;
  turn.z = 0.1;
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  pose.position = &where;
  pose.orientation = &turn;
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = LCPSIM__V1__SHAPE__TYPE__BOX;
  shape.half_extents = &half;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.shape = &shape;
  spawn.pose = &pose;
  spawn.mass = 0.2;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SPAWN;
  r.spawn = &spawn;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__Vec3 gravity = LCPSIM__V1__VEC3__INIT;
  gravity.z = -9.0;
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
  set.timestep = 0.005;
  set.gravity = &gravity;
  set.iterations_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__ITERATIONS_VALUE_ITERATIONS;
  set.iterations = 10;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SET_SETTINGS;
  r.set_settings = &set;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)"<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/>"
                           "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
                           "</inertial><collision><geometry><sphere radius=\"0.1\"/></geometry>"
                           "</collision></link></robot>";
  load.base_type = LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FLOATING;
  load.base_pose = &pose;
  r.call_case = LCPSIM__V1__REQUEST__CALL_LOAD_MODEL;
  r.load_model = &load;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__GetStateRequest get = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  get.include_contacts = true;
  r.call_case = LCPSIM__V1__REQUEST__CALL_GET_STATE;
  r.get_state = &get;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;
  return n;
}

static size_t mutate(const unsigned char *seed, size_t size, unsigned char *out, size_t capacity) {
  memcpy(out, seed, size);
  int edits = 1 + (int)below(4);
  for (int e = 0; e < edits; ++e) {
    switch (below(5)) {
    case 0: /* flip a bit */
      /* one draw a statement: C leaves the order of the two sides open, and
       * every compiler should fuzz the same inputs */
      if (size) {
        size_t at = below(size);
        out[at] ^= (unsigned char)(1u << below(8));
      }
      break;
    case 1: /* a random byte */
      if (size) {
        size_t at = below(size);
        out[at] = (unsigned char)next_random();
      }
      break;
    case 2: /* cut the end */
      size = below(size + 1);
      break;
    case 3: /* insert a byte */
      if (size + 1 < capacity) {
        size_t at = below(size + 1);
        memmove(out + at + 1, out + at, size - at);
        out[at] = (unsigned char)next_random();
        size++;
      }
      break;
    default: /* repeat a run */
      if (size && size * 2 < capacity) {
        size_t from = below(size), length = 1 + below(size - from);
        memmove(out + from + 2 * length, out + from + length, size - from - length);
        memcpy(out + from + length, out + from, length);
        size += length;
      }
      break;
    }
  }
  return size;
}

static void test_damaged_requests_all_get_replies(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--log-level", "error", NULL});
  void *client = connect_req(d.rep);
  static unsigned char seeds[8][512];
  size_t sizes[8];
  size_t seed_count = make_seeds(seeds, sizes);
  /* LCPD_FUZZ_ROUNDS=N runs longer by hand. */
  const char *env = getenv("LCPD_FUZZ_ROUNDS");
  const int rounds = env && atoi(env) > 0 ? atoi(env) : 3000;
  int ok = 0;
  for (int i = 0; i < rounds; ++i) {
    unsigned char message[2048];
    size_t k = (size_t)i % seed_count;
    size_t size = mutate(seeds[k], sizes[k], message, sizeof message);
    Lcpsim__V1__Reply *reply = rpc_raw(client, message, size);
    assert_non_null(reply->status);
    assert_true(reply->status->code <= LCPSIM__V1__STATUS__CODE__INTERNAL);
    if (reply->status->code == LCPSIM__V1__STATUS__CODE__OK)
      ok++;
    else
      assert_true(strlen(reply->status->message) > 0);
    reply_free(&reply);
    /* Keep the world small: damaged Spawns and LoadModels that still work
     * would otherwise pile up. */
    if (i % 200 == 199) {
      Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
      Lcpsim__V1__Request r = request_of(5, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
      reply = rpc(client, &r);
      assert_ok(reply, 5, LCPSIM__V1__REPLY__RESULT_RESET);
      reply_free(&reply);
    }
  }
  /* Some damage leaves a valid request, most does not. */
  assert_true(ok > 0 && ok < rounds);
  assert_true(call_ping(client, 99));
  close_socket(&client);
  daemon_stop(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_damaged_requests_all_get_replies),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  test_context_destroy();
  return failed;
}
