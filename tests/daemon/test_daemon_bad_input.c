/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd: every kind of bad input gets a precise error reply (or, over the
 * size limit, the transport's disconnect), leaves the world bit for bit as it
 * was (the bytes of a SaveState snapshot, which hold poses, velocities,
 * joint controllers and time), and the daemon goes on serving others. */
#include "daemon_harness.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#define MAX_MESSAGE "65536"
#define MAX_DECODE "262144"

typedef struct fixture {
  daemon_proc daemon;
  void *client; /* sends the bad input */
  void *other;  /* another client, which must be served throughout */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  /* /tmp: the temporary robot files LoadModel reads (write_temp_file). */
  const char *args[] = {"--max-message-bytes",
                        MAX_MESSAGE,
                        "--max-decode-bytes",
                        MAX_DECODE,
                        "--model-path",
                        "/tmp",
                        NULL};
  daemon_start(&f->daemon, args);
  f->client = connect_req(f->daemon.rep);
  f->other = connect_req(f->daemon.rep);
  /* Move the world off its initial state so that "unchanged" means more
   * than "still at rest". */
  call_step(f->other, 1, 20);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  close_socket(&f->client);
  close_socket(&f->other);
  daemon_stop(&f->daemon);
  free(f);
  test_context_destroy();
  return 0;
}

/* The world is as it was and another client is served. */
static void assert_unharmed(fixture *f, uint64_t before) {
  assert_true(world_hash(f->other) == before);
  assert_true(call_ping(f->other, 777));
}

static void expect_error(fixture *f, const Lcpsim__V1__Request *request,
                         Lcpsim__V1__Status__Code code, const char *needle) {
  uint64_t before = world_hash(f->other);
  Lcpsim__V1__Reply *reply = rpc(f->client, request);
  assert_error(reply, request->id, code, needle);
  reply_free(&reply);
  assert_unharmed(f, before);
}

static void expect_raw_error(fixture *f, const void *data, size_t size, uint64_t id,
                             Lcpsim__V1__Status__Code code, const char *needle) {
  uint64_t before = world_hash(f->other);
  Lcpsim__V1__Reply *reply = rpc_raw(f->client, data, size);
  assert_error(reply, id, code, needle);
  reply_free(&reply);
  assert_unharmed(f, before);
}

#define BAD LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT
#define NOT_FOUND LCPSIM__V1__STATUS__CODE__NOT_FOUND

static void test_undecodable_bytes(void **state) {
  fixture *f = *state;
  const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff};
  expect_raw_error(f, garbage, sizeof garbage, 0, BAD, "does not decode");
  /* Field 12 (step) says 16 bytes follow; one does. */
  const unsigned char truncated[] = {0x08, 0x05, 0x62, 0x10, 0x01};
  expect_raw_error(f, truncated, sizeof truncated, 0, BAD, "does not decode");
  /* A varint that never ends. */
  const unsigned char endless[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x80,
                                   0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  expect_raw_error(f, endless, sizeof endless, 0, BAD, "does not decode");
}

static void test_empty_envelope(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
  r.id = 5;
  expect_error(f, &r, BAD, "unknown or missing call");
  /* A zero-length frame is an empty Request too. */
  expect_raw_error(f, "", 0, 0, BAD, "unknown or missing call");
}

static void test_unknown_oneof_case(void **state) {
  fixture *f = *state;
  /* id = 7, then field 99 (not a call of this protocol), length 0. */
  const unsigned char unknown[] = {0x08, 0x07, 0x9a, 0x06, 0x00};
  expect_raw_error(f, unknown, sizeof unknown, 7, BAD, "unknown or missing call");
  /* Field 63, a number no call has yet, as a varint. */
  const unsigned char next[] = {0x08, 0x08, 0xf8, 0x03, 0x01};
  expect_raw_error(f, next, sizeof next, 8, BAD, "unknown or missing call");
}

static Lcpsim__V1__SetTargetRequest position_target(char **joints, size_t n_joints, double *q,
                                                    size_t n_q) {
  static double kp[] = {100.0}, kd[] = {10.0};
  Lcpsim__V1__SetTargetRequest t = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  t.robot = (char *)"arm7";
  t.joints = joints;
  t.n_joints = n_joints;
  t.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  t.position = q;
  t.n_position = n_q;
  t.kp = kp;
  t.n_kp = 1;
  t.kd = kd;
  t.n_kd = 1;
  return t;
}

static void test_wrong_robot_or_joint_name(void **state) {
  fixture *f = *state;
  double q[] = {0.3, 0.2};
  char *good[] = {(char *)"joint1", (char *)"joint2"};
  Lcpsim__V1__SetTargetRequest t = position_target(good, 2, q, 2);
  t.robot = (char *)"nope";
  Lcpsim__V1__Request r = request_of(10, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  /* The message says which robots there are, or what the name is instead. */
  expect_error(f, &r, NOT_FOUND, "set_target.robot: no robot named 'nope' (robots: arm7)");
  t.robot = (char *)"box";
  r = request_of(19, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  expect_error(f, &r, NOT_FOUND, "set_target.robot: no robot named 'box' (it is a free body)");
  /* One bad joint among good ones: nothing changes, not even joint1. */
  char *mixed[] = {(char *)"joint1", (char *)"elbow"};
  t = position_target(mixed, 2, q, 2);
  r = request_of(11, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  expect_error(f, &r, NOT_FOUND, "set_target.joints[1]: robot 'arm7' has no joint named 'elbow'");
  /* Remove, by a name nothing has. */
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"ghost";
  r = request_of(12, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  expect_error(f, &r, NOT_FOUND, "ghost");
}

static void test_index_out_of_range(void **state) {
  fixture *f = *state;
  double q[] = {0.1};
  Lcpsim__V1__SetTargetRequest t = position_target(NULL, 0, q, 1);
  int32_t indices[] = {0, 7};
  t.indices = indices;
  t.n_indices = 2;
  Lcpsim__V1__Request r = request_of(13, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  expect_error(f, &r, NOT_FOUND, "set_target.indices[1] = 7 is out of range");
  int32_t negative[] = {-1};
  t.indices = negative;
  t.n_indices = 1;
  r = request_of(14, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  expect_error(f, &r, NOT_FOUND, "indices[0] = -1 is out of range");
}

static void test_non_finite_numbers_anywhere(void **state) {
  fixture *f = *state;
  const double bad_values[] = {NAN, INFINITY, -INFINITY};
  for (size_t b = 0; b < 3; ++b) {
    double x = bad_values[b];
    /* A joint target. */
    double q[] = {0.1, x};
    char *joints[] = {(char *)"joint1", (char *)"joint2"};
    Lcpsim__V1__SetTargetRequest t = position_target(joints, 2, q, 2);
    Lcpsim__V1__Request r = request_of(20, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
    expect_error(f, &r, BAD, "set_target.position[1] is not a finite number");
    /* The same inside a Step's targets: nothing is stepped. */
    Lcpsim__V1__SetTargetRequest *targets[] = {&t};
    Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
    step.steps = 5;
    step.targets = targets;
    step.n_targets = 1;
    r = request_of(21, LCPSIM__V1__REQUEST__CALL_STEP, &step);
    expect_error(f, &r, BAD, "step.targets[0].position[1] is not a finite number");
    /* A spawned body's pose, orientation, twist, mass, size. */
    Lcpsim__V1__Vec3 position = LCPSIM__V1__VEC3__INIT;
    position.z = x;
    Lcpsim__V1__Quat orientation = LCPSIM__V1__QUAT__INIT;
    orientation.w = 1.0;
    Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
    pose.position = &position;
    pose.orientation = &orientation;
    Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
    shape.type = LCPSIM__V1__SHAPE__TYPE__SPHERE;
    shape.radius = 0.1;
    Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
    spawn.shape = &shape;
    spawn.pose = &pose;
    spawn.mass = 1.0;
    r = request_of(22, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
    expect_error(f, &r, BAD, "spawn.pose.position.z is not a finite number");
    position.z = 1.0;
    orientation.y = x;
    expect_error(f, &r, BAD, "spawn.pose.orientation.y is not a finite number");
    orientation.y = 0.0;
    Lcpsim__V1__Vec3 spin = LCPSIM__V1__VEC3__INIT;
    spin.x = x;
    Lcpsim__V1__Twist twist = LCPSIM__V1__TWIST__INIT;
    twist.angular = &spin;
    spawn.twist = &twist;
    expect_error(f, &r, BAD, "spawn.twist.angular.x is not a finite number");
    spawn.twist = NULL;
    spawn.mass = x;
    expect_error(f, &r, BAD, "spawn.mass is not a finite number");
    spawn.mass = 1.0;
    shape.radius = x;
    expect_error(f, &r, BAD, "spawn.shape.radius is not a finite number");
    /* Settings. */
    Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
    set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
    set.timestep = x;
    r = request_of(23, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
    expect_error(f, &r, BAD, "set_settings.timestep is not a finite number");
    set = (Lcpsim__V1__SetSettingsRequest)LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
    Lcpsim__V1__Vec3 gravity = LCPSIM__V1__VEC3__INIT;
    gravity.y = x;
    set.gravity = &gravity;
    r = request_of(24, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
    expect_error(f, &r, BAD, "set_settings.gravity.y is not a finite number");
    set = (Lcpsim__V1__SetSettingsRequest)LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
    set.rate_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__RATE_VALUE_RATE;
    set.rate = x;
    r = request_of(25, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
    expect_error(f, &r, BAD, "set_settings.rate is not a finite number");
    /* A model's base pose. */
    char path[1024];
    snprintf(path, sizeof path, "%s/pendulum2.urdf", robots_dir());
    Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
    load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
    load.urdf_path = path;
    position.z = x;
    load.base_pose = &pose;
    r = request_of(26, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
    expect_error(f, &r, BAD, "load_model.base_pose.position.z is not a finite number");
  }
}

static void test_negative_counts_and_timesteps(void **state) {
  fixture *f = *state;
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = -1;
  Lcpsim__V1__Request r = request_of(30, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  expect_error(f, &r, BAD, "step.steps must be >= 0 (got -1)");
  step.steps = INT32_MIN;
  expect_error(f, &r, BAD, "step.steps must be >= 0");
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
  set.timestep = -0.01;
  r = request_of(31, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  expect_error(f, &r, BAD, "set_settings.timestep must be > 0 (got -0.01)");
  set.timestep = 0.0;
  expect_error(f, &r, BAD, "set_settings.timestep must be > 0");
  set = (Lcpsim__V1__SetSettingsRequest)LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.iterations_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__ITERATIONS_VALUE_ITERATIONS;
  set.iterations = -3;
  r = request_of(32, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  expect_error(f, &r, BAD, "set_settings.iterations must be >= 1");
  /* The engine's rules, as the engine words them, with the request's field
   * and value; the daemon's rate too. */
  set = (Lcpsim__V1__SetSettingsRequest)LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
  set.timestep = 2.0;
  r = request_of(35, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  expect_error(f, &r, BAD, "set_settings.timestep must be <= 1 s (got 2)");
  set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE__NOT_SET;
  set.sor_omega_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__SOR_OMEGA_VALUE_SOR_OMEGA;
  set.sor_omega = 2.0;
  expect_error(f, &r, BAD, "set_settings.sor_omega must be in (0, 2) (got 2)");
  set.sor_omega_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__SOR_OMEGA_VALUE__NOT_SET;
  set.rate_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__RATE_VALUE_RATE;
  set.rate = -1.0;
  expect_error(f, &r, BAD, "set_settings.rate must be > 0 (got -1)");
  /* Negative gains and a non-positive mass. */
  double q[] = {0.1}, kp[] = {-5.0};
  Lcpsim__V1__SetTargetRequest t = position_target(NULL, 0, q, 1);
  t.kp = kp;
  r = request_of(33, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  expect_error(f, &r, BAD, "set_target.kp[0] = -5 must be >= 0");
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = LCPSIM__V1__SHAPE__TYPE__BOX;
  Lcpsim__V1__Vec3 half = LCPSIM__V1__VEC3__INIT;
  half.x = half.y = half.z = 0.1;
  shape.half_extents = &half;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.shape = &shape;
  spawn.mass = -1.0;
  r = request_of(34, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
  expect_error(f, &r, BAD, "spawn.mass must be > 0");
  spawn.mass = 1.0;
  half.y = -0.1;
  expect_error(f, &r, BAD, "spawn.shape.half_extents must be > 0");
}

/* The settings GetInfo reports, packed: compared whole before and after a
 * refused SetSettings. */
static size_t packed_settings(void *client, uint8_t *out, size_t size) {
  Lcpsim__V1__Reply *reply = call_get_info(client, 778);
  size_t n = lcpsim__v1__settings__get_packed_size(reply->get_info->settings);
  assert_true(n <= size);
  lcpsim__v1__settings__pack(reply->get_info->settings, out);
  reply_free(&reply);
  return n;
}

/* The settings of bounded push-out, relaxation, restitution and velocity
 * limits are refused out of range, naming the field and the value, and the
 * settings stay as they were (the other fields of the same request are not
 * applied either); so is a spawn's restitution outside [0, 1]. */
static void test_bad_contact_settings_and_restitution(void **state) {
  fixture *f = *state;
  uint8_t before[1024], after[1024];
  size_t before_size = packed_settings(f->other, before, sizeof before);
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  /* A valid change in the same request, which must not be applied. */
  set.enforce_velocity_limits_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__ENFORCE_VELOCITY_LIMITS_VALUE_ENFORCE_VELOCITY_LIMITS;
  set.enforce_velocity_limits = false;
  set.max_push_speed_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__MAX_PUSH_SPEED_VALUE_MAX_PUSH_SPEED;
  set.max_push_speed = -1.0;
  Lcpsim__V1__Request r = request_of(40, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  expect_error(f, &r, BAD, "set_settings.max_push_speed must be finite and >= 0 (got -1)");
  set.max_push_speed = NAN;
  expect_error(f, &r, BAD, "set_settings.max_push_speed is not a finite number");
  set.max_push_speed_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__MAX_PUSH_SPEED_VALUE__NOT_SET;
  set.relax_iterations_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__RELAX_ITERATIONS_VALUE_RELAX_ITERATIONS;
  set.relax_iterations = -2;
  expect_error(f, &r, BAD, "set_settings.relax_iterations must be in [0, 100000] (got -2)");
  set.relax_iterations_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__RELAX_ITERATIONS_VALUE__NOT_SET;
  set.restitution_threshold_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__RESTITUTION_THRESHOLD_VALUE_RESTITUTION_THRESHOLD;
  set.restitution_threshold = -0.5;
  expect_error(f, &r, BAD, "set_settings.restitution_threshold must be finite and >= 0 (got -0.5)");
  size_t after_size = packed_settings(f->other, after, sizeof after);
  assert_int_equal(after_size, before_size);
  assert_memory_equal(after, before, before_size);

  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = LCPSIM__V1__SHAPE__TYPE__SPHERE;
  shape.radius = 0.1;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.name = (char *)"bouncy";
  spawn.shape = &shape;
  spawn.mass = 1.0;
  spawn.restitution = 1.5;
  r = request_of(41, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
  expect_error(f, &r, BAD, "spawn.restitution must be in [0, 1] (got 1.5)");
  spawn.restitution = -0.25;
  expect_error(f, &r, BAD, "spawn.restitution must be in [0, 1] (got -0.25)");
  spawn.restitution = NAN;
  expect_error(f, &r, BAD, "spawn.restitution is not a finite number");
  Lcpsim__V1__Reply *reply = call_get_info(f->other, 42);
  for (size_t i = 0; i < reply->get_info->n_bodies; ++i)
    assert_string_not_equal(reply->get_info->bodies[i]->name, "bouncy");
  reply_free(&reply);
}

static void test_malformed_requests(void **state) {
  fixture *f = *state;
  /* Arrays of the wrong length, joints both by name and index, unknown enum
   * values, a position controller without gains, a taken name. */
  double three[] = {0.1, 0.2, 0.3};
  Lcpsim__V1__SetTargetRequest t = position_target(NULL, 0, three, 3);
  Lcpsim__V1__Request r = request_of(40, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  expect_error(f, &r, BAD, "set_target.position has 3 values");
  char *joints[] = {(char *)"joint1"};
  int32_t indices[] = {1};
  t = position_target(joints, 1, three, 1);
  t.indices = indices;
  t.n_indices = 1;
  expect_error(f, &r, BAD, "not both");
  t = position_target(NULL, 0, three, 1);
  t.mode = (Lcpsim__V1__SetTargetRequest__Mode)99;
  expect_error(f, &r, BAD, "set_target.mode = 99");
  double zero[] = {0.0};
  t = position_target(NULL, 0, three, 1);
  t.kp = t.kd = zero;
  expect_error(f, &r, BAD, "POSITION mode needs kp + kd > 0");

  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = (Lcpsim__V1__Shape__Type)42;
  shape.radius = 0.1;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.shape = &shape;
  spawn.mass = 1.0;
  r = request_of(41, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
  expect_error(f, &r, BAD, "spawn.shape.type must be");
  shape.type = LCPSIM__V1__SHAPE__TYPE__SPHERE;
  spawn.name = (char *)"box";
  expect_error(f, &r, BAD, "the name 'box' is taken");
  char long_name[200];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  spawn.name = long_name;
  expect_error(f, &r, BAD, "spawn.name is longer than");

  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.mode_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__MODE_VALUE_MODE;
  set.mode = (Lcpsim__V1__Settings__Mode)5;
  r = request_of(42, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  expect_error(f, &r, BAD, "set_settings.mode = 5");

  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  r = request_of(43, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore);
  expect_error(f, &r, BAD, "needs a snapshot or a slot");
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  restore.slot = (char *)"never saved";
  expect_error(f, &r, NOT_FOUND, "no snapshot slot named 'never saved'");
}

static void test_bad_targets_step_nothing(void **state) {
  fixture *f = *state;
  /* The first target is fine, the second names a joint that is not there:
   * neither target applies and no step is taken. */
  double q[] = {0.5};
  char *first[] = {(char *)"joint1"}, *second[] = {(char *)"joint9"};
  Lcpsim__V1__SetTargetRequest a = position_target(first, 1, q, 1);
  Lcpsim__V1__SetTargetRequest b = position_target(second, 1, q, 1);
  Lcpsim__V1__SetTargetRequest *targets[] = {&a, &b};
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 10;
  step.targets = targets;
  step.n_targets = 2;
  Lcpsim__V1__Request r = request_of(50, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  expect_error(f, &r, NOT_FOUND, "step.targets[1].joints[0]");
  Lcpsim__V1__Reply *reply = call_get_state(f->other, 51, false);
  assert_int_equal(reply->get_state->state->step_count, 20);
  reply_free(&reply);
}

static void test_urdf_that_fails_to_load(void **state) {
  fixture *f = *state;
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)"<robot name=\"r\">\n  <link name=\"a\">\n</robot>\n";
  Lcpsim__V1__Request r = request_of(60, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  expect_error(f, &r, BAD, "<string>:");

  /* A file whose revolute joint has no <limit>: the loader's FILE:LINE. */
  char path[1024];
  const char *urdf = "<?xml version=\"1.0\"?>\n"
                     "<robot name=\"bad\">\n"
                     "  <link name=\"a\"><inertial><mass value=\"1\"/>"
                     "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
                     "</inertial></link>\n"
                     "  <link name=\"b\"><inertial><mass value=\"1\"/>"
                     "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
                     "</inertial></link>\n"
                     "  <joint name=\"j\" type=\"revolute\">\n"
                     "    <parent link=\"a\"/><child link=\"b\"/>\n"
                     "  </joint>\n"
                     "</robot>\n";
  write_temp_file("bad.urdf", urdf, path, sizeof path);
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  load.urdf_path = path;
  r = request_of(61, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  char where[1100];
  snprintf(where, sizeof where, "%s:5:", path);
  expect_error(f, &r, BAD, where);
  remove_temp_file(path);

  load.urdf_path = (char *)"/dev/null";
  expect_error(f, &r, NOT_FOUND, "/dev/null: no such file below the model roots");
  load.urdf_path = (char *)"/nonexistent/robot.urdf";
  expect_error(f, &r, NOT_FOUND, "/nonexistent/robot.urdf");
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE__NOT_SET;
  expect_error(f, &r, BAD, "needs urdf_path or urdf_text");
}

static void test_snapshot_of_another_world(void **state) {
  fixture *f = *state;
  /* Another daemon serving another world: the example scene plus a ball. */
  char scene[1024], text[1024];
  snprintf(text, sizeof text,
           "<lcpsim>\n  <ground/>\n"
           "  <robot urdf=\"%s/arm7.urdf\" base=\"fixed\" xyz=\"0 0 0.1\"/>\n"
           "  <body name=\"ball\" shape=\"sphere\" size=\"0.1\" xyz=\"0 1 1\" mass=\"1\"/>\n"
           "</lcpsim>\n",
           robots_dir());
  write_temp_file("other.xml", text, scene, sizeof scene);
  daemon_proc elsewhere;
  const char *args[] = {"--world", scene, NULL};
  daemon_start(&elsewhere, args);
  remove_temp_file(scene);
  void *there = connect_req(elsewhere.rep);
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(70, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save);
  Lcpsim__V1__Reply *saved = rpc(there, &r);
  assert_ok(saved, 70, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  close_socket(&there);
  daemon_stop(&elsewhere);

  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore.snapshot = saved->save_state->snapshot;
  r = request_of(71, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore);
  expect_error(f, &r, LCPSIM__V1__STATUS__CODE__FAILED_PRECONDITION, "of another world");

  /* This world's own snapshot, cut short or damaged; and no snapshot. */
  r = request_of(72, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save);
  Lcpsim__V1__Reply *own = rpc(f->client, &r);
  assert_ok(own, 72, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  restore.snapshot = own->save_state->snapshot;
  restore.snapshot.len -= 8;
  r = request_of(73, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore);
  expect_error(f, &r, BAD, "truncated or damaged");
  restore.snapshot.len += 8;
  own->save_state->snapshot.data[restore.snapshot.len - 3] ^= 0x40;
  expect_error(f, &r, BAD, "truncated or damaged");
  restore.snapshot.data = (uint8_t *)"not a snapshot at all, just some bytes of text";
  restore.snapshot.len = strlen((const char *)restore.snapshot.data);
  expect_error(f, &r, BAD, "not an lcpsimd snapshot");
  reply_free(&own);
  reply_free(&saved);
}

static void test_message_over_the_size_limit_disconnects(void **state) {
  fixture *f = *state;
  uint64_t before = world_hash(f->other);
  size_t size = 2 * 65536;
  unsigned char *big = calloc(1, size);
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  ping.payload.data = big;
  ping.payload.len = size;
  Lcpsim__V1__Request r = request_of(80, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  size_t packed_size = lcpsim__v1__request__get_packed_size(&r);
  unsigned char *packed = malloc(packed_size);
  lcpsim__v1__request__pack(&r, packed);
  void *offender = connect_req(f->daemon.rep);
  assert_int_equal(zmq_send(offender, packed, packed_size, 0), (int)packed_size);
  /* The transport drops the peer: no reply comes. */
  unsigned char *frame;
  assert_int_equal(receive_frame(offender, 1000, &frame), -1);
  close_socket(&offender);
  free(packed);
  free(big);
  assert_unharmed(f, before);
  /* A message just under the limit is served. */
  Lcpsim__V1__PingRequest small = LCPSIM__V1__PING_REQUEST__INIT;
  unsigned char payload[60000] = {0};
  small.payload.data = payload;
  small.payload.len = sizeof payload;
  r = request_of(81, LCPSIM__V1__REQUEST__CALL_PING, &small);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 81, LCPSIM__V1__REPLY__RESULT_PING);
  reply_free(&reply);
}

static void test_decode_budget(void **state) {
  fixture *f = *state;
  /* 4000 empty targets (under the 4096 entries a list may have): 8 kB on
   * the wire (under the size limit), but about a megabyte once unpacked,
   * over the 256 kB decode budget. */
  enum { COUNT = 4000 };
  unsigned char *packed = malloc(2 + 2 * COUNT + 16);
  size_t n = 0;
  packed[n++] = 0x08; /* id = 90 */
  packed[n++] = 90;
  packed[n++] = 0x62; /* field 12 (step), length-delimited */
  size_t body = 2 * COUNT;
  packed[n++] = (unsigned char)(0x80 | (body & 0x7f));
  packed[n++] = (unsigned char)(0x80 | ((body >> 7) & 0x7f));
  packed[n++] = (unsigned char)(body >> 14);
  for (int i = 0; i < COUNT; ++i) {
    packed[n++] = 0x12; /* field 2 (targets), length 0 */
    packed[n++] = 0x00;
  }
  expect_raw_error(f, packed, n, 0, LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED,
                   "needs more than the 262144 bytes");
  free(packed);
}

static void test_multi_frame_request(void **state) {
  fixture *f = *state;
  uint64_t before = world_hash(f->other);
  void *dealer = connect_dealer(f->daemon.rep);
  assert_int_equal(zmq_send(dealer, "", 0, ZMQ_SNDMORE), 0);
  assert_int_equal(zmq_send(dealer, "ab", 2, ZMQ_SNDMORE), 2);
  assert_int_equal(zmq_send(dealer, "cd", 2, 0), 2);
  Lcpsim__V1__Reply *reply = receive_reply(dealer);
  assert_error(reply, 0, BAD, "a request is one frame");
  reply_free(&reply);
  close_socket(&dealer);
  assert_unharmed(f, before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_undecodable_bytes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_envelope, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unknown_oneof_case, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrong_robot_or_joint_name, setup, teardown),
      cmocka_unit_test_setup_teardown(test_index_out_of_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_non_finite_numbers_anywhere, setup, teardown),
      cmocka_unit_test_setup_teardown(test_negative_counts_and_timesteps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_contact_settings_and_restitution, setup, teardown),
      cmocka_unit_test_setup_teardown(test_malformed_requests, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_targets_step_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_urdf_that_fails_to_load, setup, teardown),
      cmocka_unit_test_setup_teardown(test_snapshot_of_another_world, setup, teardown),
      cmocka_unit_test_setup_teardown(test_message_over_the_size_limit_disconnects, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_decode_budget, setup, teardown),
      cmocka_unit_test_setup_teardown(test_multi_frame_request, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
