/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd: the happy path of every call of lcpsim.v1, against a real
 * daemon serving the built-in world (ground, arm7, table, box). */
#include "daemon_harness.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct fixture {
  daemon_proc daemon;
  void *client;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  daemon_start(&f->daemon, NULL);
  f->client = connect_req(f->daemon.rep);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  close_socket(&f->client);
  daemon_stop(&f->daemon);
  free(f);
  test_context_destroy();
  return 0;
}

static void test_ping_echoes_the_payload(void **state) {
  fixture *f = *state;
  unsigned char payload[1000];
  for (size_t i = 0; i < sizeof payload; ++i)
    payload[i] = (unsigned char)(i * 7 + 3);
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  ping.payload.data = payload;
  ping.payload.len = sizeof payload;
  Lcpsim__V1__Request r = request_of(17, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 17, LCPSIM__V1__REPLY__RESULT_PING);
  assert_int_equal(reply->ping->payload.len, sizeof payload);
  assert_memory_equal(reply->ping->payload.data, payload, sizeof payload);
  assert_true(strncmp(reply->ping->server_version, "lcpsimd ", 8) == 0);
  reply_free(&reply);
}

static void test_get_info_describes_the_builtin_world(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *reply = call_get_info(f->client, 2);
  const Lcpsim__V1__GetInfoReply *info = reply->get_info;
  assert_int_equal(info->n_robots, 1);
  const Lcpsim__V1__RobotInfo *arm = info->robots[0];
  assert_string_equal(arm->name, "arm7");
  assert_false(arm->floating_base);
  assert_int_equal(arm->n_joints, 7);
  assert_int_equal(arm->nq, 7);
  assert_int_equal(arm->nv, 7);
  assert_int_equal(arm->n_links, 8);
  assert_string_equal(arm->links[0], "base_link");
  for (size_t j = 0; j < 7; ++j) {
    char name[16];
    snprintf(name, sizeof name, "joint%zu", j + 1);
    assert_string_equal(arm->joints[j]->name, name);
    assert_int_equal(arm->joints[j]->index, (int)j);
    assert_int_equal(arm->joints[j]->type, LCPSIM__V1__JOINT_INFO__TYPE__REVOLUTE);
    assert_true(arm->joints[j]->has_limits);
    assert_true(arm->joints[j]->lower < 0 && arm->joints[j]->upper > 0);
    assert_float_equal(arm->joints[j]->effort_limit, 100.0, 1e-12);
    /* Axes alternate z, y, z, ... */
    double along = j % 2 ? arm->joints[j]->axis->y : arm->joints[j]->axis->z;
    assert_float_equal(along, 1.0, 1e-12);
  }
  assert_int_equal(info->n_bodies, 2);
  assert_string_equal(info->bodies[0]->name, "table");
  assert_true(info->bodies[0]->is_static);
  assert_int_equal(info->bodies[0]->shape->type, LCPSIM__V1__SHAPE__TYPE__BOX);
  assert_float_equal(info->bodies[0]->shape->half_extents->z, 0.2, 1e-12);
  assert_string_equal(info->bodies[1]->name, "box");
  assert_false(info->bodies[1]->is_static);
  assert_float_equal(info->bodies[1]->mass, 0.5, 1e-12);
  const Lcpsim__V1__Settings *s = info->settings;
  assert_float_equal(s->timestep, 1.0 / 240.0, 1e-15);
  assert_float_equal(s->gravity->z, -9.81, 1e-12);
  assert_int_equal(s->mode, LCPSIM__V1__SETTINGS__MODE__MODE_LOCKSTEP);
  assert_float_equal(s->rate, 1.0, 0.0);
  reply_free(&reply);
}

static void test_get_state_at_start(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *reply = call_get_state(f->client, 3, true);
  const Lcpsim__V1__State *s = reply->get_state->state;
  assert_float_equal(s->time, 0.0, 0.0);
  assert_int_equal(s->step_count, 0);
  assert_int_equal(s->sequence, 0);
  assert_int_equal(s->n_robots, 1);
  const Lcpsim__V1__RobotState *arm = s->robots[0];
  assert_string_equal(arm->name, "arm7");
  assert_int_equal(arm->n_q, 7);
  assert_int_equal(arm->n_qd, 7);
  assert_int_equal(arm->n_applied_torque, 7);
  assert_int_equal(arm->n_link_poses, 8);
  /* The base stands on the ground; the upright arm's last link starts
   * 6 × 0.3 m above the first joint. */
  assert_float_equal(arm->base_pose->position->z, 0.1, 1e-12);
  assert_float_equal(arm->link_poses[7]->position->z, 0.1 + 6 * 0.3, 1e-9);
  assert_int_equal(s->n_bodies, 2);
  assert_string_equal(s->bodies[1]->name, "box");
  assert_float_equal(s->bodies[1]->pose->position->x, 0.6, 1e-12);
  assert_float_equal(s->bodies[1]->pose->position->z, 0.45, 1e-12);
  reply_free(&reply);
}

static void test_step_advances_time_and_returns_contacts(void **state) {
  fixture *f = *state;
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 240;
  step.return_state = true;
  step.include_contacts = true;
  Lcpsim__V1__Request r = request_of(4, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_STEP);
  assert_int_equal(reply->step->step_count, 240);
  assert_float_equal(reply->step->time, 1.0, 1e-9);
  const Lcpsim__V1__State *s = reply->step->state;
  assert_non_null(s);
  assert_float_equal(s->time, reply->step->time, 0.0);
  /* The box rests on the table: contacts between the two, normals along z,
   * and it has not moved by more than a millimetre. */
  size_t box_on_table = 0;
  for (size_t i = 0; i < s->n_contacts; ++i) {
    const Lcpsim__V1__Contact *c = s->contacts[i];
    bool pair = (!strcmp(c->a, "table") && !strcmp(c->b, "box")) ||
                (!strcmp(c->a, "box") && !strcmp(c->b, "table"));
    if (pair) {
      box_on_table++;
      assert_float_equal(fabs(c->normal->z), 1.0, 1e-6);
      assert_true(c->normal_impulse >= 0.0);
    }
  }
  assert_true(box_on_table >= 3);
  assert_float_equal(s->bodies[1]->pose->position->z, 0.45, 1e-3);
  reply_free(&reply);
}

static Lcpsim__V1__SetTargetRequest joint1_target(double position) {
  static char *joints[] = {(char *)"joint1"};
  static double kp[] = {200.0}, kd[] = {20.0};
  static double q[1];
  q[0] = position;
  Lcpsim__V1__SetTargetRequest t = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  t.robot = (char *)"arm7";
  t.n_joints = 1;
  t.joints = joints;
  t.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  t.n_position = 1;
  t.position = q;
  t.n_kp = 1;
  t.kp = kp;
  t.n_kd = 1;
  t.kd = kd;
  return t;
}

static double joint_q(void *client, size_t joint) {
  Lcpsim__V1__Reply *reply = call_get_state(client, 99, false);
  double q = reply->get_state->state->robots[0]->q[joint];
  reply_free(&reply);
  return q;
}

static void test_set_target_drives_a_joint(void **state) {
  fixture *f = *state;
  /* joint1 turns about the vertical: no gravity torque, so a PD controller
   * settles on its target. */
  Lcpsim__V1__SetTargetRequest t = joint1_target(0.5);
  Lcpsim__V1__Request r = request_of(5, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 5, LCPSIM__V1__REPLY__RESULT_SET_TARGET);
  reply_free(&reply);
  call_step(f->client, 6, 1200);
  assert_float_equal(joint_q(f->client, 0), 0.5, 0.01);

  /* By index, keeping the mode and gains (KEEP), only a new position. */
  Lcpsim__V1__SetTargetRequest keep = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  keep.robot = (char *)"arm7";
  int32_t index[] = {0};
  double q[] = {-0.3};
  keep.n_indices = 1;
  keep.indices = index;
  keep.n_position = 1;
  keep.position = q;
  r = request_of(7, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &keep);
  reply = rpc(f->client, &r);
  assert_ok(reply, 7, LCPSIM__V1__REPLY__RESULT_SET_TARGET);
  reply_free(&reply);
  call_step(f->client, 8, 1200);
  assert_float_equal(joint_q(f->client, 0), -0.3, 0.01);
}

static void test_step_applies_targets_first(void **state) {
  fixture *f = *state;
  Lcpsim__V1__SetTargetRequest t = joint1_target(0.4);
  Lcpsim__V1__SetTargetRequest *targets[] = {&t};
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 1200;
  step.n_targets = 1;
  step.targets = targets;
  step.return_state = true;
  Lcpsim__V1__Request r = request_of(9, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 9, LCPSIM__V1__REPLY__RESULT_STEP);
  assert_float_equal(reply->step->state->robots[0]->q[0], 0.4, 0.01);
  reply_free(&reply);
}

static void test_load_model_by_path_and_by_text(void **state) {
  fixture *f = *state;
  char path[1024];
  snprintf(path, sizeof path, "%s/pendulum2.urdf", robots_dir());
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  /* By name, below the daemon's model root: the shipped robots. */
  load.urdf_path = (char *)"pendulum2.urdf";
  load.name = (char *)"pend";
  load.base_type = LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FIXED;
  Lcpsim__V1__Vec3 where = LCPSIM__V1__VEC3__INIT;
  where.x = 2.0;
  where.z = 1.5;
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  pose.position = &where;
  load.base_pose = &pose;
  Lcpsim__V1__Request r = request_of(10, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 10, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  assert_string_equal(reply->load_model->robot->name, "pend");
  assert_false(reply->load_model->robot->floating_base);
  assert_int_equal(reply->load_model->robot->n_joints, 2);
  reply_free(&reply);

  /* The same file as text, on a floating base. */
  FILE *file = fopen(path, "rb");
  assert_non_null(file);
  static char text[65536];
  size_t length = fread(text, 1, sizeof text - 1, file);
  fclose(file);
  text[length] = '\0';
  Lcpsim__V1__LoadModelRequest inline_load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  inline_load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  inline_load.urdf_text = text;
  inline_load.name = (char *)"pend_free";
  inline_load.base_type = LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FLOATING;
  r = request_of(11, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &inline_load);
  reply = rpc(f->client, &r);
  assert_ok(reply, 11, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  assert_true(reply->load_model->robot->floating_base);
  assert_int_equal(reply->load_model->robot->nq, 2 + 7);
  reply_free(&reply);

  reply = call_get_state(f->client, 12, false);
  const Lcpsim__V1__State *s = reply->get_state->state;
  assert_int_equal(s->n_robots, 3);
  assert_string_equal(s->robots[1]->name, "pend");
  assert_float_equal(s->robots[1]->base_pose->position->x, 2.0, 1e-12);
  assert_float_equal(s->robots[1]->base_pose->position->z, 1.5, 1e-12);
  reply_free(&reply);
}

static Lcpsim__V1__Reply *spawn_sphere(void *client, uint64_t id, const char *name, double z) {
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = LCPSIM__V1__SHAPE__TYPE__SPHERE;
  shape.radius = 0.1;
  Lcpsim__V1__Vec3 where = LCPSIM__V1__VEC3__INIT;
  where.x = -1.0;
  where.z = z;
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  pose.position = &where;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.name = (char *)name;
  spawn.shape = &shape;
  spawn.pose = &pose;
  spawn.mass = 1.0;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
  return rpc(client, &r);
}

static void test_spawn_falls_and_remove_takes_away(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *reply = spawn_sphere(f->client, 13, "ball", 1.0);
  assert_ok(reply, 13, LCPSIM__V1__REPLY__RESULT_SPAWN);
  assert_string_equal(reply->spawn->name, "ball");
  uint32_t ball_id = reply->spawn->id;
  reply_free(&reply);
  reply = spawn_sphere(f->client, 14, "", 2.0);
  assert_ok(reply, 14, LCPSIM__V1__REPLY__RESULT_SPAWN);
  assert_true(strlen(reply->spawn->name) > 0);
  assert_true(reply->spawn->id != ball_id);
  reply_free(&reply);

  /* Dropped from 0.9 m above the ground: after 1.5 s it rests on it. */
  call_step(f->client, 15, 360);
  reply = call_get_state(f->client, 16, false);
  const Lcpsim__V1__State *s = reply->get_state->state;
  assert_int_equal(s->n_bodies, 4);
  assert_string_equal(s->bodies[2]->name, "ball");
  assert_int_equal(s->bodies[2]->id, ball_id);
  assert_float_equal(s->bodies[2]->pose->position->z, 0.1, 0.005);
  reply_free(&reply);

  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"ball";
  Lcpsim__V1__Request r = request_of(17, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  reply = rpc(f->client, &r);
  assert_ok(reply, 17, LCPSIM__V1__REPLY__RESULT_REMOVE);
  reply_free(&reply);
  remove.name = (char *)"arm7";
  r = request_of(18, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  reply = rpc(f->client, &r);
  assert_ok(reply, 18, LCPSIM__V1__REPLY__RESULT_REMOVE);
  reply_free(&reply);
  reply = call_get_info(f->client, 19);
  assert_int_equal(reply->get_info->n_robots, 0);
  assert_int_equal(reply->get_info->n_bodies, 3);
  for (size_t i = 0; i < reply->get_info->n_bodies; ++i)
    assert_string_not_equal(reply->get_info->bodies[i]->name, "ball");
  reply_free(&reply);
}

/* The id State gives the body of this name, or 0 and a failure when none. */
static uint32_t body_id_in_state(void *client, uint64_t id, const char *name) {
  Lcpsim__V1__Reply *reply = call_get_state(client, id, false);
  const Lcpsim__V1__State *s = reply->get_state->state;
  uint32_t found = 0;
  bool seen = false;
  for (size_t i = 0; i < s->n_bodies; ++i)
    if (strcmp(s->bodies[i]->name, name) == 0) {
      found = s->bodies[i]->id;
      seen = true;
    }
  reply_free(&reply);
  assert_true(seen);
  return found;
}

/* A body removed and spawned again under its name is a new body: a new id
 * on the wire (the engine reuses the index, not the id), and a snapshot of
 * the world with the old body is refused. */
static void test_respawn_gets_a_new_id(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *reply = spawn_sphere(f->client, 40, "ball", 1.0);
  assert_ok(reply, 40, LCPSIM__V1__REPLY__RESULT_SPAWN);
  uint32_t first = reply->spawn->id;
  reply_free(&reply);
  assert_int_equal(body_id_in_state(f->client, 41, "ball"), first);
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(42, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save);
  Lcpsim__V1__Reply *saved = rpc(f->client, &r);
  assert_ok(saved, 42, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);

  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"ball";
  r = request_of(43, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  reply = rpc(f->client, &r);
  assert_ok(reply, 43, LCPSIM__V1__REPLY__RESULT_REMOVE);
  reply_free(&reply);
  reply = spawn_sphere(f->client, 44, "ball", 1.0);
  assert_ok(reply, 44, LCPSIM__V1__REPLY__RESULT_SPAWN);
  uint32_t second = reply->spawn->id;
  reply_free(&reply);
  assert_true(second != first);
  assert_int_equal(body_id_in_state(f->client, 45, "ball"), second);

  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore.snapshot = saved->save_state->snapshot;
  r = request_of(46, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore);
  reply = rpc(f->client, &r);
  assert_error(reply, 46, LCPSIM__V1__STATUS__CODE__FAILED_PRECONDITION, "of another world");
  reply_free(&reply);
  reply_free(&saved);
}

static void test_reset_returns_to_the_world_as_loaded(void **state) {
  fixture *f = *state;
  uint64_t initial = world_hash(f->client);
  Lcpsim__V1__Reply *reply = spawn_sphere(f->client, 20, "ball", 1.0);
  assert_ok(reply, 20, LCPSIM__V1__REPLY__RESULT_SPAWN);
  reply_free(&reply);
  Lcpsim__V1__SetTargetRequest t = joint1_target(0.5);
  Lcpsim__V1__Request r = request_of(21, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &t);
  reply = rpc(f->client, &r);
  reply_free(&reply);
  call_step(f->client, 22, 100);
  assert_true(world_hash(f->client) != initial);

  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  r = request_of(23, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
  reply = rpc(f->client, &r);
  assert_ok(reply, 23, LCPSIM__V1__REPLY__RESULT_RESET);
  reply_free(&reply);
  /* Bit for bit the world of start-up: bodies, time, controllers. */
  assert_true(world_hash(f->client) == initial);
  reply = call_get_info(f->client, 24);
  assert_int_equal(reply->get_info->n_bodies, 2);
  reply_free(&reply);
}

static void test_save_and_restore_by_bytes_and_by_slot(void **state) {
  fixture *f = *state;
  call_step(f->client, 25, 10);
  uint64_t h0 = world_hash(f->client);
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  save.slot = (char *)"ten";
  Lcpsim__V1__Request r = request_of(26, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save);
  Lcpsim__V1__Reply *saved = rpc(f->client, &r);
  assert_ok(saved, 26, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  assert_float_equal(saved->save_state->time, 10.0 / 240.0, 1e-12);
  assert_true(saved->save_state->snapshot.len > 0);

  call_step(f->client, 27, 100);
  uint64_t h1 = world_hash(f->client);
  assert_true(h1 != h0);

  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore.snapshot = saved->save_state->snapshot;
  r = request_of(28, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 28, LCPSIM__V1__REPLY__RESULT_RESTORE_STATE);
  assert_float_equal(reply->restore_state->time, 10.0 / 240.0, 1e-12);
  reply_free(&reply);
  assert_true(world_hash(f->client) == h0);
  /* Deterministic: the same 100 steps again give bitwise the same world. */
  call_step(f->client, 29, 100);
  assert_true(world_hash(f->client) == h1);

  Lcpsim__V1__RestoreStateRequest from_slot = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  from_slot.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  from_slot.slot = (char *)"ten";
  r = request_of(30, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &from_slot);
  reply = rpc(f->client, &r);
  assert_ok(reply, 30, LCPSIM__V1__REPLY__RESULT_RESTORE_STATE);
  reply_free(&reply);
  assert_true(world_hash(f->client) == h0);
  reply_free(&saved);
}

static void test_set_settings_changes_only_what_is_set(void **state) {
  fixture *f = *state;
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
  set.timestep = 0.002;
  Lcpsim__V1__Vec3 moon = LCPSIM__V1__VEC3__INIT;
  moon.z = -1.62;
  set.gravity = &moon;
  set.iterations_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__ITERATIONS_VALUE_ITERATIONS;
  set.iterations = 30;
  set.friction_model_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__FRICTION_MODEL_VALUE_FRICTION_MODEL;
  set.friction_model = LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_BOX;
  Lcpsim__V1__Request r = request_of(31, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 31, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  const Lcpsim__V1__Settings *s = reply->set_settings->settings;
  assert_float_equal(s->timestep, 0.002, 0.0);
  assert_float_equal(s->gravity->z, -1.62, 0.0);
  assert_int_equal(s->iterations, 30);
  assert_int_equal(s->friction_model, LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_BOX);
  assert_float_equal(s->sor_omega, 1.0, 0.0); /* unset: unchanged */
  assert_int_equal(s->mode, LCPSIM__V1__SETTINGS__MODE__MODE_LOCKSTEP);
  reply_free(&reply);
  call_step(f->client, 32, 10);
  reply = call_get_state(f->client, 33, false);
  assert_float_equal(reply->get_state->state->time, 0.02, 1e-12);
  reply_free(&reply);
}

/* The settings of bounded push-out, relaxation, restitution and velocity
 * limits: the defaults reported, set and read back (in the reply and in
 * GetInfo), and left alone by a request that does not name them, as an
 * older client's is (its zeros would otherwise turn the push-out bound and
 * the velocity limits off). */
static void test_set_settings_contact_fields_round_trip(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *reply = call_get_info(f->client, 40);
  const Lcpsim__V1__Settings *s = reply->get_info->settings;
  assert_float_equal(s->max_push_speed, 3.0, 0.0);
  assert_int_equal(s->relax_iterations, 4);
  assert_float_equal(s->restitution_threshold, 1.0, 0.0);
  assert_true(s->enforce_velocity_limits);
  reply_free(&reply);

  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
  set.timestep = 0.002;
  Lcpsim__V1__Request r = request_of(41, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  reply = rpc(f->client, &r);
  assert_ok(reply, 41, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  s = reply->set_settings->settings;
  assert_float_equal(s->max_push_speed, 3.0, 0.0);
  assert_int_equal(s->relax_iterations, 4);
  assert_float_equal(s->restitution_threshold, 1.0, 0.0);
  assert_true(s->enforce_velocity_limits);
  reply_free(&reply);

  set = (Lcpsim__V1__SetSettingsRequest)LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.max_push_speed_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__MAX_PUSH_SPEED_VALUE_MAX_PUSH_SPEED;
  set.max_push_speed = 0.75;
  set.relax_iterations_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__RELAX_ITERATIONS_VALUE_RELAX_ITERATIONS;
  set.relax_iterations = 0;
  set.restitution_threshold_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__RESTITUTION_THRESHOLD_VALUE_RESTITUTION_THRESHOLD;
  set.restitution_threshold = 0.25;
  set.enforce_velocity_limits_value_case =
      LCPSIM__V1__SET_SETTINGS_REQUEST__ENFORCE_VELOCITY_LIMITS_VALUE_ENFORCE_VELOCITY_LIMITS;
  set.enforce_velocity_limits = false;
  r = request_of(42, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &set);
  reply = rpc(f->client, &r);
  assert_ok(reply, 42, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  s = reply->set_settings->settings;
  assert_float_equal(s->max_push_speed, 0.75, 0.0);
  assert_int_equal(s->relax_iterations, 0);
  assert_float_equal(s->restitution_threshold, 0.25, 0.0);
  assert_false(s->enforce_velocity_limits);
  assert_float_equal(s->timestep, 0.002, 0.0); /* unset: unchanged */
  reply_free(&reply);
  reply = call_get_info(f->client, 43);
  s = reply->get_info->settings;
  assert_float_equal(s->max_push_speed, 0.75, 0.0);
  assert_int_equal(s->relax_iterations, 0);
  assert_float_equal(s->restitution_threshold, 0.25, 0.0);
  assert_false(s->enforce_velocity_limits);
  reply_free(&reply);
}

/* Two balls of radius 0.1 m dropped 1 m onto the ground (e = 0), one with
 * restitution 0.5, one without: Newton's law of restitution has the first
 * leave the ground at e times its impact speed and rise e² h = 0.25 m; the
 * second stays on the ground. Measured step by step from Step replies over
 * 1.5 s, the peak after the first impact. */
static void test_spawn_restitution_bounces(void **state) {
  fixture *f = *state;
  const double drop = 1.0, radius = 0.1, e = 0.5;
  const char *const names[2] = {"bouncy", "dull"};
  for (int k = 0; k < 2; ++k) {
    Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
    shape.type = LCPSIM__V1__SHAPE__TYPE__SPHERE;
    shape.radius = radius;
    Lcpsim__V1__Vec3 where = LCPSIM__V1__VEC3__INIT;
    where.x = -1.0;
    where.y = k == 0 ? -0.5 : 0.5;
    where.z = radius + drop;
    Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
    pose.position = &where;
    Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
    spawn.name = (char *)names[k];
    spawn.shape = &shape;
    spawn.pose = &pose;
    spawn.mass = 1.0;
    spawn.restitution = k == 0 ? e : 0.0;
    Lcpsim__V1__Request r = request_of(50 + (uint64_t)k, LCPSIM__V1__REQUEST__CALL_SPAWN, &spawn);
    Lcpsim__V1__Reply *reply = rpc(f->client, &r);
    assert_ok(reply, 50 + (uint64_t)k, LCPSIM__V1__REPLY__RESULT_SPAWN);
    reply_free(&reply);
  }
  drop_record drops[2];
  record_drops(f->client, names, 2, 360, drops);
  /* Both reached the ground without sinking more than 5 mm into it. */
  for (int k = 0; k < 2; ++k)
    assert_float_equal(drops[k].lowest, radius, 0.005);
  /* e² h within 5 %. */
  assert_float_equal(drops[0].rebound - radius, e * e * drop, 0.05 * e * e * drop);
  /* The plastic one rises by under 1 mm (if at all: -INFINITY when not). */
  assert_true(drops[1].rebound - radius < 0.001);
}

static void test_subscribe_replies(void **state) {
  fixture *f = *state;
  Lcpsim__V1__SubscribeRequest sub = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  sub.every_steps = 3;
  Lcpsim__V1__Request r = request_of(34, LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, &sub);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 34, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_ping_echoes_the_payload, setup, teardown),
      cmocka_unit_test_setup_teardown(test_get_info_describes_the_builtin_world, setup, teardown),
      cmocka_unit_test_setup_teardown(test_get_state_at_start, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_advances_time_and_returns_contacts, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_set_target_drives_a_joint, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_applies_targets_first, setup, teardown),
      cmocka_unit_test_setup_teardown(test_load_model_by_path_and_by_text, setup, teardown),
      cmocka_unit_test_setup_teardown(test_spawn_falls_and_remove_takes_away, setup, teardown),
      cmocka_unit_test_setup_teardown(test_respawn_gets_a_new_id, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reset_returns_to_the_world_as_loaded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_save_and_restore_by_bytes_and_by_slot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_set_settings_changes_only_what_is_set, setup, teardown),
      cmocka_unit_test_setup_teardown(test_set_settings_contact_fields_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_spawn_restitution_bounces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_subscribe_replies, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
