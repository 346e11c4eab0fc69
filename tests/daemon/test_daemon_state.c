/* SPDX-License-Identifier: Apache-2.0 */
/* SetRobotState, SetBodyState, ApplyWrench and SetDynamics over the wire:
 * the quadruped standing under PD recovers from a lateral push; a held
 * wrench's impulse is the momentum it gives (gravity off); setting the whole
 * world's state and stepping equals restoring a snapshot taken at that
 * state, bit for bit; every bad request is refused naming its field and
 * leaves the world as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon_harness.h"

#include "lcpsim/lcpsim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
  daemon_proc daemon;
  void *client;
  uint64_t id;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  daemon_start(&f->daemon, NULL);
  f->client = connect_req(f->daemon.rep);
  f->id = 100;
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

/* Sends a call and asserts it succeeds; the caller frees the reply. */
static Lcpsim__V1__Reply *call_ok(fixture *f, Lcpsim__V1__Request__CallCase call, void *body,
                                  Lcpsim__V1__Reply__ResultCase result) {
  uint64_t id = ++f->id;
  Lcpsim__V1__Request r = request_of(id, call, body);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, id, result);
  return reply;
}

static void call_ok_free(fixture *f, Lcpsim__V1__Request__CallCase call, void *body,
                         Lcpsim__V1__Reply__ResultCase result) {
  Lcpsim__V1__Reply *reply = call_ok(f, call, body, result);
  reply_free(&reply);
}

/* Sends a call and asserts it is refused with the code and a message
 * containing needle. */
static void call_refused(fixture *f, Lcpsim__V1__Request__CallCase call, void *body,
                         Lcpsim__V1__Status__Code code, const char *needle) {
  uint64_t id = ++f->id;
  Lcpsim__V1__Request r = request_of(id, call, body);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_error(reply, id, code, needle);
  reply_free(&reply);
}

static const Lcpsim__V1__RobotState *robot_state(const Lcpsim__V1__State *s, const char *name) {
  for (size_t i = 0; i < s->n_robots; ++i)
    if (strcmp(s->robots[i]->name, name) == 0)
      return s->robots[i];
  fail_msg("no robot '%s' in the state", name);
  return NULL;
}

static const Lcpsim__V1__BodyState *body_state(const Lcpsim__V1__State *s, const char *name) {
  for (size_t i = 0; i < s->n_bodies; ++i)
    if (strcmp(s->bodies[i]->name, name) == 0)
      return s->bodies[i];
  fail_msg("no body '%s' in the state", name);
  return NULL;
}

/* ---- the quadruped ---- */

#define DOG_JOINTS 12

/* Loads the shipped quadruped as "dog" on a floating base at (x, 0, z),
 * sets its standing pose by joint name (thighs 0.8 rad, calves −1.6 rad)
 * and holds it there by PD (kp 300, kd 10). */
static void load_dog(fixture *f, double x, double z) {
  /* By name, below the daemon's model root: the shipped robots. */
  char path[] = "quadruped.urdf";
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  load.urdf_path = path;
  load.name = (char *)"dog";
  load.base_type = LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FLOATING;
  Lcpsim__V1__Vec3 where = LCPSIM__V1__VEC3__INIT;
  where.x = x;
  where.z = z;
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  pose.position = &where;
  load.base_pose = &pose;
  Lcpsim__V1__Reply *reply =
      call_ok(f, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  const Lcpsim__V1__RobotInfo *info = reply->load_model->robot;
  assert_int_equal(info->n_joints, DOG_JOINTS);

  Lcpsim__V1__JointState joint_states[DOG_JOINTS];
  Lcpsim__V1__JointState *joint_pointers[DOG_JOINTS];
  double stand[DOG_JOINTS];
  for (int j = 0; j < DOG_JOINTS; ++j) {
    const char *name = info->joints[j]->name;
    stand[j] = strstr(name, "_thigh_joint") ? 0.8 : strstr(name, "_calf_joint") ? -1.6 : 0.0;
    lcpsim__v1__joint_state__init(&joint_states[j]);
    joint_states[j].name = info->joints[j]->name;
    joint_states[j].position_value_case = LCPSIM__V1__JOINT_STATE__POSITION_VALUE_POSITION;
    joint_states[j].position = stand[j];
    joint_pointers[j] = &joint_states[j];
  }
  Lcpsim__V1__SetRobotStateRequest set = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
  set.robot = (char *)"dog";
  set.n_joints = DOG_JOINTS;
  set.joints = joint_pointers;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set,
               LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE);
  reply_free(&reply);

  Lcpsim__V1__SetTargetRequest target = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  target.robot = (char *)"dog";
  target.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  target.n_position = DOG_JOINTS;
  target.position = stand;
  double kp = 300.0, kd = 10.0;
  target.n_kp = target.n_kd = 1;
  target.kp = &kp;
  target.kd = &kd;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &target,
               LCPSIM__V1__REPLY__RESULT_SET_TARGET);
}

static Lcpsim__V1__State *get_state(fixture *f, Lcpsim__V1__Reply **reply) {
  *reply = call_get_state(f->client, ++f->id, false);
  return (*reply)->get_state->state;
}

/* Holds a world force on a target's base (or a body) and returns its id. */
static uint32_t hold_force(fixture *f, const char *target, double fx, double fy, double fz,
                           bool local) {
  Lcpsim__V1__ApplyWrenchRequest w = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  w.target = (char *)target;
  Lcpsim__V1__Vec3 force = LCPSIM__V1__VEC3__INIT;
  force.x = fx, force.y = fy, force.z = fz;
  w.force = &force;
  w.duration = LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD;
  w.frame = local ? LCPSIM__V1__APPLY_WRENCH_REQUEST__FRAME__LOCAL
                  : LCPSIM__V1__APPLY_WRENCH_REQUEST__FRAME__WORLD;
  Lcpsim__V1__Reply *reply = call_ok(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w,
                                     LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  uint32_t id = reply->apply_wrench->hold_id;
  assert_true(id > 0);
  reply_free(&reply);
  return id;
}

static void clear_hold(fixture *f, uint32_t hold_id) {
  Lcpsim__V1__ApplyWrenchRequest w = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  w.clear = hold_id;
  Lcpsim__V1__Reply *reply = call_ok(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w,
                                     LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  reply_free(&reply);
}

/* The built-in world steps at h = 1/240 s. */
#define H (1.0 / 240.0)

/* Standing under PD, a 0.1 s lateral push of 150 N on the base (15 N·s,
 * more than the feet's friction can hold: about 1 m/s for its 15 kg without
 * it) sets the trunk moving sideways at more than 0.2 m/s; 2 s later its
 * height is back within 1 cm of where it stood. */
static void test_push_recovery(void **state) {
  fixture *f = *state;
  load_dog(f, -2.0, 0.31);
  call_step(f->client, ++f->id, 480);
  Lcpsim__V1__Reply *reply;
  const double z0 = robot_state(get_state(f, &reply), "dog")->base_pose->position->z;
  reply_free(&reply);
  assert_true(z0 > 0.2 && z0 < 0.35); /* standing */

  uint32_t push = hold_force(f, "dog", 0.0, 150.0, 0.0, false);
  call_step(f->client, ++f->id, 24); /* 0.1 s */
  clear_hold(f, push);
  const Lcpsim__V1__RobotState *dog = robot_state(get_state(f, &reply), "dog");
  const double pushed_vy = dog->base_twist->linear->y;
  reply_free(&reply);
  print_message("base height %.4f m; lateral speed after the push %.3f m/s\n", z0, pushed_vy);
  assert_true(pushed_vy > 0.2);

  call_step(f->client, ++f->id, 480); /* 2 s */
  dog = robot_state(get_state(f, &reply), "dog");
  const double z1 = dog->base_pose->position->z;
  print_message("height 2 s after the push %.4f m (moved %.3f m sideways)\n", z1,
                dog->base_pose->position->y);
  assert_true(fabs(z1 - z0) < 0.01);
  reply_free(&reply);
}

/* A one-link floating robot, 2 kg, in the air with gravity off: a held
 * force's impulse F·t is the change of its momentum m·Δv (to 1e-9, well
 * within 1 %), in world axes or turned by the base's orientation (LOCAL). */
static const char *const PUCK_URDF =
    "<robot name='puck'><link name='body'><inertial><mass value='2'/>"
    "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>"
    "</link></robot>";

static void test_wrench_impulse_in_the_air(void **state) {
  fixture *f = *state;
  Lcpsim__V1__SetSettingsRequest settings = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  Lcpsim__V1__Vec3 no_gravity = LCPSIM__V1__VEC3__INIT;
  settings.gravity = &no_gravity;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, &settings,
               LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)PUCK_URDF;
  load.base_type = LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FLOATING;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load,
               LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  /* In the air, turned 90° about z. */
  Lcpsim__V1__SetRobotStateRequest set = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
  set.robot = (char *)"puck";
  Lcpsim__V1__Vec3 high = LCPSIM__V1__VEC3__INIT;
  high.z = 3.0;
  Lcpsim__V1__Quat turned = LCPSIM__V1__QUAT__INIT;
  turned.w = turned.z = sqrt(0.5);
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  pose.position = &high;
  pose.orientation = &turned;
  set.base_pose = &pose;
  Lcpsim__V1__Twist still = LCPSIM__V1__TWIST__INIT;
  set.base_twist = &still;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set,
               LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE);

  /* World axes: 24 steps of (3, −4, 5) N. */
  uint32_t hold = hold_force(f, "puck", 3.0, -4.0, 5.0, false);
  call_step(f->client, ++f->id, 24);
  clear_hold(f, hold);
  call_step(f->client, ++f->id, 10); /* cleared: no more momentum */
  Lcpsim__V1__Reply *reply;
  const Lcpsim__V1__Vec3 *v = robot_state(get_state(f, &reply), "puck")->base_twist->linear;
  const double t = 24 * H, impulse[3] = {3.0 * t, -4.0 * t, 5.0 * t};
  const double momentum[3] = {2.0 * v->x, 2.0 * v->y, 2.0 * v->z};
  for (int k = 0; k < 3; ++k)
    assert_true(fabs(momentum[k] - impulse[k]) <= 1e-9 * fabs(impulse[k]) + 1e-12);
  reply_free(&reply);

  /* LOCAL: (1, 0, 0) N in the base frame is (0, 1, 0) N in the world. */
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set,
               LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE);
  hold = hold_force(f, "puck", 1.0, 0.0, 0.0, true);
  call_step(f->client, ++f->id, 48);
  clear_hold(f, hold);
  v = robot_state(get_state(f, &reply), "puck")->base_twist->linear;
  assert_true(fabs(2.0 * v->y - 48 * H) < 1e-9 && fabs(v->x) < 1e-12 && fabs(v->z) < 1e-12);
  reply_free(&reply);

  /* NEXT_STEP: one step only. */
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set,
               LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE);
  Lcpsim__V1__ApplyWrenchRequest once = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  once.target = (char *)"puck";
  Lcpsim__V1__Vec3 up = LCPSIM__V1__VEC3__INIT;
  up.z = 10.0;
  once.force = &up;
  Lcpsim__V1__Reply *applied = call_ok(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &once,
                                       LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  assert_int_equal(applied->apply_wrench->hold_id, 0);
  reply_free(&applied);
  call_step(f->client, ++f->id, 5);
  v = robot_state(get_state(f, &reply), "puck")->base_twist->linear;
  assert_true(fabs(2.0 * v->z - 10.0 * H) < 1e-9);
  reply_free(&reply);
}

/* ---- setting the whole world's state ---- */

/* Sets arm7, dog and box to the states recorded in s. */
static void set_world(fixture *f, const Lcpsim__V1__State *s) {
  const char *robots[] = {"arm7", "dog"};
  for (int i = 0; i < 2; ++i) {
    const Lcpsim__V1__RobotState *r = robot_state(s, robots[i]);
    Lcpsim__V1__SetRobotStateRequest set = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
    set.robot = (char *)robots[i];
    set.n_q = r->n_q;
    set.q = r->q;
    set.n_qd = r->n_qd;
    set.qd = r->qd;
    call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &set,
                 LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE);
  }
  const Lcpsim__V1__BodyState *b = body_state(s, "box");
  Lcpsim__V1__SetBodyStateRequest set = LCPSIM__V1__SET_BODY_STATE_REQUEST__INIT;
  set.body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
  set.name = (char *)"box";
  set.pose = b->pose;
  set.twist = b->twist;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, &set,
               LCPSIM__V1__REPLY__RESULT_SET_BODY_STATE);
}

static void assert_same_motion(const Lcpsim__V1__State *a, const Lcpsim__V1__State *b) {
  assert_int_equal(a->n_robots, b->n_robots);
  for (size_t i = 0; i < a->n_robots; ++i) {
    assert_int_equal(a->robots[i]->n_q, b->robots[i]->n_q);
    assert_memory_equal(a->robots[i]->q, b->robots[i]->q, a->robots[i]->n_q * sizeof(double));
    assert_memory_equal(a->robots[i]->qd, b->robots[i]->qd, a->robots[i]->n_qd * sizeof(double));
  }
  assert_int_equal(a->n_bodies, b->n_bodies);
  for (size_t i = 0; i < a->n_bodies; ++i) {
    const Lcpsim__V1__Pose *p = a->bodies[i]->pose, *q = b->bodies[i]->pose;
    const double pa[7] = {p->position->x,    p->position->y,    p->position->z,   p->orientation->w,
                          p->orientation->x, p->orientation->y, p->orientation->z};
    const double pb[7] = {q->position->x,    q->position->y,    q->position->z,   q->orientation->w,
                          q->orientation->x, q->orientation->y, q->orientation->z};
    assert_memory_equal(pa, pb, sizeof pa);
  }
}

/* SetRobotState and SetBodyState of everything that moves, then Step, gives
 * bitwise what RestoreState of a snapshot taken right after the set gives,
 * wherever the world was before the set. */
static void test_set_state_equals_restore(void **state) {
  fixture *f = *state;
  load_dog(f, -2.0, 0.31);
  call_step(f->client, ++f->id, 120);
  Lcpsim__V1__Reply *recorded_reply;
  const Lcpsim__V1__State *recorded = get_state(f, &recorded_reply);

  set_world(f, recorded);
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  Lcpsim__V1__Reply *saved =
      call_ok(f, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  call_step(f->client, ++f->id, 120);
  Lcpsim__V1__Reply *a_reply;
  const Lcpsim__V1__State *a = get_state(f, &a_reply);

  /* Disturbed, elsewhere, then set again. */
  uint32_t push = hold_force(f, "dog", 30.0, 40.0, 0.0, false);
  uint32_t shove = hold_force(f, "box", 1.0, 0.0, 0.0, false);
  call_step(f->client, ++f->id, 60);
  clear_hold(f, shove);
  (void)push; /* cleared with the rest below */
  Lcpsim__V1__ApplyWrenchRequest clear_all = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  clear_all.clear_all = true;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &clear_all,
               LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  set_world(f, recorded);
  call_step(f->client, ++f->id, 120);
  Lcpsim__V1__Reply *c_reply;
  assert_same_motion(a, get_state(f, &c_reply));
  reply_free(&c_reply);

  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore.snapshot = saved->save_state->snapshot;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore,
               LCPSIM__V1__REPLY__RESULT_RESTORE_STATE);
  call_step(f->client, ++f->id, 120);
  Lcpsim__V1__Reply *b_reply;
  assert_same_motion(a, get_state(f, &b_reply));
  reply_free(&b_reply);
  reply_free(&a_reply);
  reply_free(&saved);
  reply_free(&recorded_reply);
}

/* ---- SetDynamics ---- */

static uint64_t hash_after_steps(fixture *f, const Lcpsim__V1__RestoreStateRequest *from,
                                 int steps) {
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, (void *)from,
               LCPSIM__V1__REPLY__RESULT_RESTORE_STATE);
  call_step(f->client, ++f->id, steps);
  return world_hash(f->client);
}

/* A SetDynamics request with one body entry and one joint entry. */
typedef struct dynamics_request {
  Lcpsim__V1__SetDynamicsRequest request;
  Lcpsim__V1__BodyDynamics body;
  Lcpsim__V1__BodyDynamics *bodies[2];
  Lcpsim__V1__BodyDynamics second;
  Lcpsim__V1__JointDynamics joint;
  Lcpsim__V1__JointDynamics *joints[1];
} dynamics_request;

static void dynamics_request_init(dynamics_request *d) {
  lcpsim__v1__set_dynamics_request__init(&d->request);
  lcpsim__v1__body_dynamics__init(&d->body);
  lcpsim__v1__body_dynamics__init(&d->second);
  lcpsim__v1__joint_dynamics__init(&d->joint);
  d->bodies[0] = &d->body;
  d->bodies[1] = &d->second;
  d->joints[0] = &d->joint;
  d->request.bodies = d->bodies;
  d->request.joints = d->joints;
  /* A valid first entry: the box gets heavier. */
  d->body.body = (char *)"box";
  d->body.mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
  d->body.mass = 0.7;
  d->request.n_bodies = 1;
  d->second.robot = (char *)"arm7";
}

/* Each bad SetDynamics, after a valid first entry, is refused naming its
 * field; restored and stepped, the world moves bitwise as it did before:
 * nothing was applied. A valid request does change the steps. */
static void test_set_dynamics_atomic(void **state) {
  fixture *f = *state;
  Lcpsim__V1__GetInfoRequest get_info = LCPSIM__V1__GET_INFO_REQUEST__INIT;
  Lcpsim__V1__Reply *info =
      call_ok(f, LCPSIM__V1__REQUEST__CALL_GET_INFO, &get_info, LCPSIM__V1__REPLY__RESULT_GET_INFO);
  const Lcpsim__V1__RobotInfo *arm = info->get_info->robots[0];
  char *link = arm->links[2], *joint = arm->joints[1]->name;
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  Lcpsim__V1__Reply *saved =
      call_ok(f, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore.snapshot = saved->save_state->snapshot;
  /* The arm swings under gravity with its joints off: masses matter. */
  const uint64_t reference = hash_after_steps(f, &restore, 60);

  const double not_spd[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1}, four[4] = {1, 1, 1, 1};
  for (int k = 0; k < 12; ++k) {
    dynamics_request d;
    dynamics_request_init(&d);
    Lcpsim__V1__BodyDynamics *b = &d.second;
    Lcpsim__V1__JointDynamics *j = &d.joint;
    Lcpsim__V1__Status__Code code = LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT;
    const char *needle = NULL;
    Lcpsim__V1__Vec3 com = LCPSIM__V1__VEC3__INIT;
    d.request.n_bodies = 2;
    switch (k) {
    case 0: /* not positive definite */
      b->link = link, b->n_inertia = 9, b->inertia = (double *)not_spd;
      needle = "set_dynamics.bodies[1]: inertia";
      break;
    case 1:
      b->link = link, b->n_inertia = 4, b->inertia = (double *)four;
      needle = "set_dynamics.bodies[1].inertia has 4 values";
      break;
    case 2:
      b->link = link, b->friction_value_case = LCPSIM__V1__BODY_DYNAMICS__FRICTION_VALUE_FRICTION;
      b->friction = -0.2;
      needle = "set_dynamics.bodies[1]: friction must be >= 0";
      break;
    case 3:
      b->link = link;
      b->restitution_value_case = LCPSIM__V1__BODY_DYNAMICS__RESTITUTION_VALUE_RESTITUTION;
      b->restitution = 2.0;
      needle = "restitution must be in [0, 1]";
      break;
    case 4:
      b->link = (char *)"no_such_link",
      b->mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
      b->mass = 1.0;
      code = LCPSIM__V1__STATUS__CODE__NOT_FOUND;
      needle = "set_dynamics.bodies[1].link: robot 'arm7' has no link named 'no_such_link'";
      break;
    case 5:
      b->link = link, b->mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
      b->mass = 0.0;
      needle = "mass must be > 0";
      break;
    case 6: /* a body has no centre of mass to move */
      b->robot = (char *)"", b->body = (char *)"box", b->com = &com;
      needle = "set_dynamics.bodies[1]"; /* the box twice, or its com: either is named */
      break;
    case 7:
      d.request.n_bodies = 1, d.request.n_joints = 1, j->robot = (char *)"arm7", j->joint = joint;
      j->lower_value_case = LCPSIM__V1__JOINT_DYNAMICS__LOWER_VALUE_LOWER;
      j->upper_value_case = LCPSIM__V1__JOINT_DYNAMICS__UPPER_VALUE_UPPER;
      j->lower = 1.0, j->upper = -1.0;
      needle = "set_dynamics.joints[0]: joint";
      break;
    case 8:
      d.request.n_bodies = 1, d.request.n_joints = 1, j->robot = (char *)"arm7",
      j->joint = (char *)"elbow_of_nothing";
      code = LCPSIM__V1__STATUS__CODE__NOT_FOUND;
      needle = "set_dynamics.joints[0].joint: robot 'arm7' has no joint named";
      break;
    case 9:
      d.request.n_bodies = 1, d.request.n_joints = 1, j->robot = (char *)"arm7", j->joint = joint;
      j->damping_value_case = LCPSIM__V1__JOINT_DYNAMICS__DAMPING_VALUE_DAMPING;
      j->damping = -1.0;
      needle = "damping must be >= 0";
      break;
    case 10:
      d.request.n_bodies = 1, d.request.n_joints = 1, j->robot = (char *)"nobody", j->joint = joint;
      code = LCPSIM__V1__STATUS__CODE__NOT_FOUND;
      needle = "set_dynamics.joints[0].robot: no robot named 'nobody'";
      break;
    case 11:
      b->robot = (char *)"arm7", b->body = (char *)"box";
      needle = "give a body, or a robot and a link, not both";
      break;
    }
    call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS, &d.request, code, needle);
    if (hash_after_steps(f, &restore, 60) != reference)
      fail_msg("refused SetDynamics %d changed the world", k);
  }
  /* GetInfo still gives the box's mass as loaded. */
  Lcpsim__V1__Reply *info2 =
      call_ok(f, LCPSIM__V1__REQUEST__CALL_GET_INFO, &get_info, LCPSIM__V1__REPLY__RESULT_GET_INFO);
  for (size_t i = 0; i < info2->get_info->n_bodies; ++i)
    if (strcmp(info2->get_info->bodies[i]->name, "box") == 0)
      assert_true(info2->get_info->bodies[i]->mass == 0.5);
  reply_free(&info2);

  /* A valid request: a heavier link and a damped joint change the motion;
   * GetInfo shows the joint's new damping. */
  dynamics_request d;
  dynamics_request_init(&d);
  d.request.n_bodies = 2;
  d.second.link = link;
  d.second.mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
  d.second.mass = 3.0;
  const double diagonal[3] = {0.02, 0.02, 0.005};
  d.second.n_inertia = 3;
  d.second.inertia = (double *)diagonal;
  d.request.n_joints = 1;
  d.joint.robot = (char *)"arm7";
  d.joint.joint = joint;
  d.joint.damping_value_case = LCPSIM__V1__JOINT_DYNAMICS__DAMPING_VALUE_DAMPING;
  d.joint.damping = 0.7;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS, &d.request,
               LCPSIM__V1__REPLY__RESULT_SET_DYNAMICS);
  assert_true(hash_after_steps(f, &restore, 60) != reference);
  info2 =
      call_ok(f, LCPSIM__V1__REQUEST__CALL_GET_INFO, &get_info, LCPSIM__V1__REPLY__RESULT_GET_INFO);
  assert_true(info2->get_info->robots[0]->joints[1]->damping == 0.7);
  for (size_t i = 0; i < info2->get_info->n_bodies; ++i)
    if (strcmp(info2->get_info->bodies[i]->name, "box") == 0)
      assert_true(info2->get_info->bodies[i]->mass == 0.7);
  reply_free(&info2);
  reply_free(&saved);
  reply_free(&info);
}

/* ---- bad state and wrench requests ---- */

/* Each is refused with its code and a message naming the field, and the
 * world's state (the bytes of a snapshot) is unchanged. */
static void test_bad_state_requests_change_nothing(void **state) {
  fixture *f = *state;
  load_dog(f, -2.0, 0.31);
  call_step(f->client, ++f->id, 10);
  const uint64_t before = world_hash(f->client);
  const Lcpsim__V1__Status__Code BAD = LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                                 MISSING = LCPSIM__V1__STATUS__CODE__NOT_FOUND;

  Lcpsim__V1__SetRobotStateRequest r = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
  r.robot = (char *)"cat";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, MISSING,
               "set_robot_state.robot: no robot named 'cat'");
  r.robot = (char *)"dog";
  double q[19] = {0, 0, 0.3, 0, 0, 0, 0}; /* a zero base quaternion */
  r.n_q = 18;
  r.q = q;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, BAD,
               "set_robot_state.q has 18 values: robot 'dog' needs 19");
  r.n_q = 19;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, BAD, "base quaternion");
  q[3] = NAN;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, BAD, "not a finite number");
  q[3] = 1.0;
  Lcpsim__V1__Pose pose = LCPSIM__V1__POSE__INIT;
  Lcpsim__V1__Quat zero = LCPSIM__V1__QUAT__INIT;
  pose.orientation = &zero;
  r.base_pose = &pose;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, BAD, "not both");
  r.n_q = 0;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, BAD, "set_robot_state.base_pose");
  r.base_pose = NULL;
  Lcpsim__V1__JointState js[2];
  Lcpsim__V1__JointState *jp[2] = {&js[0], &js[1]};
  for (int k = 0; k < 2; ++k) {
    lcpsim__v1__joint_state__init(&js[k]);
    js[k].name = (char *)"FL_calf_joint";
    js[k].velocity_value_case = LCPSIM__V1__JOINT_STATE__VELOCITY_VALUE_VELOCITY;
    js[k].velocity = 1.0;
  }
  r.n_joints = 2;
  r.joints = jp;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, BAD, "given twice");
  js[1].name = (char *)"FL_tail_joint";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &r, MISSING,
               "set_robot_state.joints[1].name: robot 'dog' has no joint named 'FL_tail_joint'");
  Lcpsim__V1__SetRobotStateRequest arm = LCPSIM__V1__SET_ROBOT_STATE_REQUEST__INIT;
  arm.robot = (char *)"arm7";
  Lcpsim__V1__Twist twist = LCPSIM__V1__TWIST__INIT;
  arm.base_twist = &twist;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, &arm, BAD, "has a fixed base");

  Lcpsim__V1__SetBodyStateRequest b = LCPSIM__V1__SET_BODY_STATE_REQUEST__INIT;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, &b, BAD, "needs the body's name or id");
  b.body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
  b.name = (char *)"dog";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, &b, MISSING, "(it is a robot)");
  b.body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_ID;
  b.id = 77777;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, &b, MISSING, "set_body_state.id");
  b.body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
  b.name = (char *)"table";
  Lcpsim__V1__Vec3 moving = LCPSIM__V1__VEC3__INIT;
  moving.x = 1.0;
  Lcpsim__V1__Twist table_twist = LCPSIM__V1__TWIST__INIT;
  table_twist.linear = &moving;
  b.twist = &table_twist;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, &b, BAD, "static");
  b.name = (char *)"box";
  b.twist = NULL;
  b.pose = &pose; /* the zero quaternion */
  call_refused(f, LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, &b, BAD, "set_body_state.pose");

  Lcpsim__V1__ApplyWrenchRequest w = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  w.target = (char *)"ghost";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, MISSING,
               "apply_wrench.target: no body or robot named 'ghost'");
  w.target = (char *)"dog";
  w.link = (char *)"tail";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, MISSING,
               "apply_wrench.link: robot 'dog' has no link named 'tail'");
  w.target = (char *)"box";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, BAD, "it has no links");
  w.link = (char *)"";
  w.target = (char *)"table";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, BAD, "static");
  w.target = (char *)"box";
  w.frame = 7;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, BAD, "apply_wrench.frame = 7");
  w.frame = 0;
  w.clear = 5;
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, BAD, "goes alone");
  w.target = (char *)"";
  call_refused(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &w, MISSING,
               "apply_wrench.clear: no held wrench with id 5");

  assert_true(world_hash(f->client) == before);
  /* And the held list is empty: the next steps are those of no wrench. */
  Lcpsim__V1__ApplyWrenchRequest none = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  none.clear_all = true;
  Lcpsim__V1__Reply *reply = call_ok(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &none,
                                     LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  assert_int_equal(reply->apply_wrench->held, 0);
  reply_free(&reply);
}

/* A held wrench outlives steps and RestoreState, not Reset. */
static void test_held_wrench_lifetime(void **state) {
  fixture *f = *state;
  hold_force(f, "box", 0.0, 0.0, 1.0, false);
  hold_force(f, "box", 0.0, 0.0, 1.0, true);
  Lcpsim__V1__ApplyWrenchRequest probe = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  probe.target = (char *)"box"; /* a zero wrench for the next step: reports the count */
  Lcpsim__V1__Reply *reply = call_ok(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &probe,
                                     LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  assert_int_equal(reply->apply_wrench->held, 2);
  reply_free(&reply);
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  call_ok_free(f, LCPSIM__V1__REQUEST__CALL_RESET, &reset, LCPSIM__V1__REPLY__RESULT_RESET);
  reply = call_ok(f, LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, &probe,
                  LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH);
  assert_int_equal(reply->apply_wrench->held, 0);
  reply_free(&reply);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_push_recovery, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrench_impulse_in_the_air, setup, teardown),
      cmocka_unit_test_setup_teardown(test_set_state_equals_restore, setup, teardown),
      cmocka_unit_test_setup_teardown(test_set_dynamics_atomic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_state_requests_change_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_held_wrench_lifetime, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
