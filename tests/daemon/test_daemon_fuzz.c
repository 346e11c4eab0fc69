/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd against damaged requests: valid requests of every call, with
 * bytes flipped, cut, repeated or inserted by a fixed-seed generator. Every
 * one gets a reply that decodes with protobuf-c, with its status set and
 * only finite numbers; after every reply that is not OK the world is as
 * before the request (everything a client can read of it: world_hash_all);
 * and every reply also decodes with Python's protobuf (which refuses a
 * string that is not UTF-8), from a dump of them all that
 * decode_replies.py reads. The daemon keeps serving. (Some mutations are
 * still valid requests and change the world; that is fine here.)
 *
 * LCPD_FUZZ_ROUNDS=N runs N requests; LCPSIM_FUZZ_SECONDS=S runs for S
 * seconds instead (a long run by hand, e.g. against the sanitizer build);
 * LCPSIM_FUZZ_DUMP=FILE keeps the dump of the replies in FILE. */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

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

  /* Names in every other place a request gives one. */
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"box1";
  r.call_case = LCPSIM__V1__REQUEST__CALL_REMOVE;
  r.remove = &remove;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  static double qd[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  Lcpsim__V1__JointState joint = LCPSIM__V1__JOINT_STATE__INIT;
  joint.name = (char *)"joint2";
  joint.position_value_case = LCPSIM__V1__JOINT_STATE__POSITION_VALUE_POSITION;
  joint.position = 0.3;
  Lcpsim__V1__JointState *joint_states[] = {&joint};
  Lcpsim__V1__SetRobotStateRequest robot_state = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
  robot_state.robot = (char *)"arm7";
  robot_state.qd = qd;
  robot_state.n_qd = 7;
  robot_state.joints = joint_states;
  robot_state.n_joints = 1;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE;
  r.set_robot_state = &robot_state;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__Vec3 push = LCPSIM__V1__VEC3__INIT;
  push.x = 3.0;
  Lcpsim__V1__ApplyWrenchRequest wrench = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  wrench.target = (char *)"arm7";
  wrench.link = (char *)"link3";
  wrench.force = &push;
  wrench.duration = LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD;
  r.call_case = LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH;
  r.apply_wrench = &wrench;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__JointDynamics joint_dynamics = LCPSIM__V1__JOINT_DYNAMICS__INIT;
  joint_dynamics.robot = (char *)"arm7";
  joint_dynamics.joint = (char *)"joint4";
  joint_dynamics.damping_value_case = LCPSIM__V1__JOINT_DYNAMICS__DAMPING_VALUE_DAMPING;
  joint_dynamics.damping = 0.5;
  Lcpsim__V1__JointDynamics *joint_edits[] = {&joint_dynamics};
  Lcpsim__V1__SetDynamicsRequest dynamics = LCPSIM__V1__SET_DYNAMICS_REQUEST__INIT;
  dynamics.joints = joint_edits;
  dynamics.n_joints = 1;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS;
  r.set_dynamics = &dynamics;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__AddImuRequest imu = LCPSIM__V1__ADD_IMU_REQUEST__INIT;
  imu.name = (char *)"wrist_imu";
  imu.robot = (char *)"arm7";
  imu.link = (char *)"link7";
  imu.pose = &pose;
  r.call_case = LCPSIM__V1__REQUEST__CALL_ADD_IMU;
  r.add_imu = &imu;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__Twist twist = LCPSIM__V1__TWIST__INIT;
  twist.linear = &where;
  Lcpsim__V1__SetBodyStateRequest body_state = LCPSIM__V1__SET_BODY_STATE_REQUEST__INIT;
  body_state.body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
  body_state.name = (char *)"box1";
  body_state.pose = &pose;
  body_state.twist = &twist;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE;
  r.set_body_state = &body_state;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  save.slot = (char *)"before";
  r.call_case = LCPSIM__V1__REQUEST__CALL_SAVE_STATE;
  r.save_state = &save;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  restore.slot = (char *)"before";
  r.call_case = LCPSIM__V1__REQUEST__CALL_RESTORE_STATE;
  r.restore_state = &restore;
  sizes[n] = lcpsim__v1__request__pack(&r, seeds[n]);
  n++;

  Lcpsim__V1__Sensors sensors = LCPSIM__V1__SENSORS__INIT;
  sensors.imus = sensors.energy = sensors.contact_wrenches = sensors.solver_stats = true;
  step.sensors = &sensors;
  step.steps = 3;
  r.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  r.step = &step;
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

/* Sends a request frame and receives the reply's bytes (asserted to come
 * within REPLY_TIMEOUT_MS). */
static long exchange(void *socket, const void *data, size_t size, unsigned char **reply) {
  assert_true(zmq_send(socket, data, size, 0) == (int)size);
  long length = receive_frame(socket, REPLY_TIMEOUT_MS, reply);
  assert_true(length >= 0);
  return length;
}

/* A mutated SetSettings may turn realtime mode on, in which the daemon
 * steps by itself and the world changes between requests: back to
 * lockstep. */
static void keep_lockstep(void *client, const Lcpsim__V1__Reply *reply) {
  if (reply->result_case != LCPSIM__V1__REPLY__RESULT_SET_SETTINGS ||
      !reply->set_settings->settings ||
      reply->set_settings->settings->mode != LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME)
    return;
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.mode_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__MODE_VALUE_MODE;
  set.mode = LCPSIM__V1__SETTINGS__MODE__MODE_LOCKSTEP;
  Lcpsim__V1__Request r = request_of(6, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  Lcpsim__V1__Reply *back = rpc(client, &r);
  assert_ok(back, 6, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  reply_free(&back);
}

/* Appends a reply's bytes to the dump: a 4-byte little-endian length, then
 * the bytes. */
static void dump_reply(FILE *dump, const unsigned char *bytes, long size) {
  unsigned char length[4] = {(unsigned char)size, (unsigned char)(size >> 8),
                             (unsigned char)(size >> 16), (unsigned char)(size >> 24)};
  assert_int_equal(fwrite(length, 1, 4, dump), 4);
  assert_int_equal(fwrite(bytes, 1, (size_t)size, dump), (size_t)size);
}

static void test_damaged_requests_all_get_replies(void **state) {
  (void)state;
  daemon_proc d;
  /* A damaged step count may ask for millions of steps, whose reply takes
   * as long as they do (minutes in a sanitizer build): capped, every reply
   * comes within the timeout, and the cap's refusal is a reply like any. */
  daemon_start(&d,
               (const char *[]){"--log-level", "error", "--max-steps-per-request", "2000", NULL});
  void *client = connect_req(d.rep);
  static unsigned char seeds[24][512];
  size_t sizes[24];
  size_t seed_count = make_seeds(seeds, sizes);
  const char *rounds_env = getenv("LCPD_FUZZ_ROUNDS");
  const char *seconds_env = getenv("LCPSIM_FUZZ_SECONDS");
  const char *dump_env = getenv("LCPSIM_FUZZ_DUMP");
  const double seconds = seconds_env ? atof(seconds_env) : 0.0;
  const long rounds = rounds_env && atol(rounds_env) > 0 ? atol(rounds_env) : 3000;
  char dump_path[512];
  snprintf(dump_path, sizeof dump_path, "%s", dump_env ? dump_env : "lcpsim_fuzz_replies.bin");
  FILE *dump = fopen(dump_path, "wb");
  assert_non_null(dump);
  const double start = now_seconds();
  long i = 0, ok = 0, refused = 0;
  uint64_t world = world_hash_all(client);
  for (; seconds > 0.0 ? now_seconds() - start < seconds : i < rounds; ++i) {
    unsigned char message[2048];
    size_t k = (size_t)i % seed_count;
    size_t size = mutate(seeds[k], sizes[k], message, sizeof message);
    unsigned char *bytes;
    long length = exchange(client, message, size, &bytes);
    dump_reply(dump, bytes, length);
    Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, (size_t)length, bytes);
    assert_non_null(reply);
    assert_non_null(reply->status);
    assert_true(reply->status->code <= LCPSIM__V1__STATUS__CODE__INTERNAL);
    if (!message_all_finite(&reply->base)) {
      fclose(dump);
      fail_msg("round %ld (seed %zu damaged): reply %d ('%s') holds a non-finite number (the "
               "last reply of the dump %s)",
               i, k, (int)reply->result_case, reply->status->message, dump_path);
    }
    free(bytes);
    if (reply->status->code == LCPSIM__V1__STATUS__CODE__OK) {
      ok++;
      keep_lockstep(client, reply);
      world = world_hash_all(client);
    } else {
      refused++;
      assert_true(strlen(reply->status->message) > 0);
      assert_false(reply->status->world_restored);
      uint64_t after = world_hash_all(client);
      if (after != world)
        fail_msg("round %ld (seed %zu damaged, %zu bytes): the refusal '%s' changed the world", i,
                 k, size, reply->status->message);
    }
    reply_free(&reply);
    /* Keep the world small: damaged Spawns and LoadModels that still work
     * would otherwise pile up. */
    if (i % 200 == 199) {
      Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
      Lcpsim__V1__Request r = request_of(5, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
      reply = rpc(client, &r);
      assert_ok(reply, 5, LCPSIM__V1__REPLY__RESULT_RESET);
      reply_free(&reply);
      world = world_hash_all(client);
    }
  }
  assert_int_equal(fclose(dump), 0);
  print_message("%ld damaged requests in %.0f s: %ld OK, %ld refused, each refusal leaving the "
                "world as it was\n",
                i, now_seconds() - start, ok, refused);
  /* Some damage leaves a valid request, most does not. */
  assert_true(ok > 0 && ok < i);
  assert_true(call_ping(client, 99));
  close_socket(&client);
  daemon_stop(&d);
#ifdef LCP_FUZZ_PYTHON
  /* Python's protobuf decodes every reply too (strings as UTF-8). */
  char command[2048];
  snprintf(command, sizeof command, "PYTHONPATH='%s' PYTHONDONTWRITEBYTECODE=1 '%s' '%s' '%s' %ld",
           LCP_FUZZ_PYTHON_PATH, LCP_FUZZ_PYTHON, LCP_FUZZ_DECODE_SCRIPT, dump_path, i);
  int status = system(command);
  assert_int_equal(status, 0);
#else
  print_message("no /usr/bin/python3 with the generated protocol: replies decoded by C only\n");
#endif
  if (!dump_env)
    remove(dump_path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_damaged_requests_all_get_replies),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  test_context_destroy();
  return failed;
}
