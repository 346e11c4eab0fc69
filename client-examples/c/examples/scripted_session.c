/* SPDX-License-Identifier: Apache-2.0 */
/* scripted_session: one scripted session against a fresh lcpsimd serving its built-in world (the
 * arm "arm7", the static "table", the free 0.5 kg "box"): load a quadruped, add IMUs, set
 * states, push, randomise the dynamics, sense, snapshot and restore. It prints every state it
 * reads in a canonical text form that the Python (scripted_session.py) and Node
 * (scripted_session.js) versions of this script print byte for byte the same: the daemon is
 * deterministic, and the three clients must hand the same doubles to the user.
 *
 *   scripted_session ENDPOINT QUADRUPED_URDF
 *
 * The script (the same constants in the three languages):
 *  1. GetInfo; LoadModel QUADRUPED_URDF as "dog", floating base, base at (0, 2, 0.6) m.
 *  2. AddImu "wrist" on arm7/link7 at (0, 0, 0.05) m; AddImu "trunk_imu" on dog/trunk with
 *     accel_noise 0.01 m/s², gyro_noise 0.001 rad/s, seed 7.
 *  3. SetRobotState arm7 joint1 q = 0.3, joint2 q = 0.2, qd = 0.1; SetRobotState dog base
 *     pose (0, 2, 0.5) m, identity, base twist linear (0.1, 0, 0) m/s, angular 0;
 *     SetBodyState box at its position + (0, 0, 0.05) m, its orientation, linear velocity 0,
 *     angular velocity (0, 0, 1) rad/s.
 *  4. Step 20 with targets: arm7 every joint POSITION q* = 0.1, kp = 100, kd = 10; dog every
 *     joint POSITION q* = 0 (hip), 0.8 (thigh), -1.6 (calf), kp = 200, kd = 5. Print "A".
 *  5. ApplyWrench dog base force (0, 50, 0) N, held; Step 24; clear it; ApplyWrench arm7
 *     link7 torque (0, 0, 2) N·m, local frame, next step only; Step 1. Print "B".
 *  6. SetDynamics box mass 2.0 kg, friction 0.6; dog trunk mass 8.8 kg (the URDF's 8.0 kg
 *     + 10 %); arm7 joint3 damping 0.5 N·m·s/rad. Step 60 with every sensor group and the
 *     contacts; print "C" (the Step's state) with them.
 *  7. SaveState; Step 10; print "D"; RestoreState; Step 10; print "E". D and E must be equal
 *     (the program exits 1 if not).
 * "A", "B", "D" and "E" come from a GetState after the steps (no sensors, no contacts).
 *
 * The canonical form: one line per value group, "<label> <path>[ <value>...]"; a double is the
 * 16 lowercase hex digits of its IEEE-754 bits, an integer is decimal. Per state: time,
 * step_count; per robot (the state's order): robot.R.q, .qd, .applied_torque, .base_pose
 * (px py pz qw qx qy qz), .base_twist (linear, angular), .link_poses and .frame_poses (7 per
 * link or frame); per body: body.B.pose, body.B.twist. With the sensors also robot.R.qdd,
 * .link_twists, .link_twists_local, .link_accelerations (6 per link: linear, angular),
 * .joint_wrenches (12 per joint: world force, torque, local force, torque),
 * .link_contact_wrenches (12 per link: normal force, torque, friction force, torque),
 * robot.R.imu.NAME (specific_force, angular_rate), robot.R.energy (kinetic, potential);
 * body.B.contact_wrench (12), body.B.energy; and solver_stats (pairs manifolds contacts rows
 * iterations residual warm_started). With the contacts: "contacts N", then per contact
 * "contact A B" position normal depth normal_impulse friction_impulse. A message the daemon
 * left out prints as zeros, except an orientation, which prints as the identity (the protocol
 * says an unset orientation is the identity; a quaternion of four zeros is taken the same way).
 * A body without a name is "body.#ID".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcpsim_client.h"

static const double DOG_BASE[3] = {0.0, 2.0, 0.6};    /* m, where LoadModel puts the dog */
static const double WRIST_SITE[3] = {0.0, 0.0, 0.05}; /* m, in link7's frame */
static const double TRUNK_IMU_ACCEL_NOISE = 0.01, TRUNK_IMU_GYRO_NOISE = 0.001;
static const uint64_t TRUNK_IMU_SEED = 7;
static const double DOG_RESET_BASE[3] = {0.0, 2.0, 0.5};   /* m */
static const double DOG_RESET_LINEAR[3] = {0.1, 0.0, 0.0}; /* m/s */
static const double BOX_LIFT = 0.05;                       /* m */
static const double BOX_SPIN[3] = {0.0, 0.0, 1.0};         /* rad/s */
static const double ARM_TARGET = 0.1, ARM_KP = 100.0, ARM_KD = 10.0;
/* rad, by the joint name's part "_hip_", "_thigh_", "_calf_" */
static const char *const DOG_STANCE_PARTS[3] = {"_hip_", "_thigh_", "_calf_"};
static const double DOG_STANCE[3] = {0.0, 0.8, -1.6};
static const double DOG_KP = 200.0, DOG_KD = 5.0;
static const double PUSH_FORCE[3] = {0.0, 50.0, 0.0};  /* N */
static const double TWIST_TORQUE[3] = {0.0, 0.0, 2.0}; /* N·m */
static const double BOX_MASS = 2.0, BOX_FRICTION = 0.6;
/* kg: the URDF's trunk mass + 10 % (GetInfo gives no link masses) */
static const double TRUNK_MASS = 8.0 * 1.1;
static const double JOINT3_DAMPING = 0.5; /* N·m·s/rad */
enum { PUSH_STEPS = 24, SETTLE_STEPS = 20, SENSED_STEPS = 60, REPLAY_STEPS = 10, MAX_JOINTS = 64 };
static const double IDENTITY[4] = {1.0, 0.0, 0.0, 0.0};

/* ---- the canonical form ---- */

static void put_double(FILE *out, double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  fprintf(out, " %016" PRIx64, bits);
}

static void put_vec3(FILE *out, const Lcpsim__V1__Vec3 *v) {
  put_double(out, v ? v->x : 0.0);
  put_double(out, v ? v->y : 0.0);
  put_double(out, v ? v->z : 0.0);
}

/* (w, x, y, z); an unset Quat or four zeros is the identity. */
static void put_quat(FILE *out, const Lcpsim__V1__Quat *q) {
  if (!q || (q->w == 0.0 && q->x == 0.0 && q->y == 0.0 && q->z == 0.0)) {
    for (int i = 0; i < 4; ++i)
      put_double(out, IDENTITY[i]);
    return;
  }
  put_double(out, q->w);
  put_double(out, q->x);
  put_double(out, q->y);
  put_double(out, q->z);
}

static void put_pose(FILE *out, const Lcpsim__V1__Pose *pose) {
  put_vec3(out, pose ? pose->position : NULL);
  put_quat(out, pose ? pose->orientation : NULL);
}

static void put_twist(FILE *out, const Lcpsim__V1__Twist *twist) {
  put_vec3(out, twist ? twist->linear : NULL);
  put_vec3(out, twist ? twist->angular : NULL);
}

static void put_wrench(FILE *out, const Lcpsim__V1__Wrench *wrench) {
  put_vec3(out, wrench ? wrench->force : NULL);
  put_vec3(out, wrench ? wrench->torque : NULL);
}

static void put_contact_wrench(FILE *out, const Lcpsim__V1__ContactWrench *wrench) {
  put_wrench(out, wrench ? wrench->normal : NULL);
  put_wrench(out, wrench ? wrench->friction : NULL);
}

static void put_energy(FILE *out, const Lcpsim__V1__Energy *energy) {
  put_double(out, energy ? energy->kinetic : 0.0);
  put_double(out, energy ? energy->potential : 0.0);
}

static void put_doubles(FILE *out, const double *values, size_t n) {
  for (size_t i = 0; i < n; ++i)
    put_double(out, values[i]);
}

static void put_robot(FILE *out, const char *label, const lcpsim_robot_state_t *robot,
                      bool sensors) {
  char prefix[256];
  snprintf(prefix, sizeof prefix, "robot.%s.", robot->name);
  fprintf(out, "%s %sq", label, prefix);
  put_doubles(out, robot->q, robot->n_q);
  fprintf(out, "\n%s %sqd", label, prefix);
  put_doubles(out, robot->qd, robot->n_qd);
  fprintf(out, "\n%s %sapplied_torque", label, prefix);
  put_doubles(out, robot->applied_torque, robot->n_applied_torque);
  fprintf(out, "\n%s %sbase_pose", label, prefix);
  put_pose(out, robot->base_pose);
  fprintf(out, "\n%s %sbase_twist", label, prefix);
  put_twist(out, robot->base_twist);
  fprintf(out, "\n%s %slink_poses", label, prefix);
  for (size_t i = 0; i < robot->n_link_poses; ++i)
    put_pose(out, robot->link_poses[i]);
  fprintf(out, "\n%s %sframe_poses", label, prefix);
  for (size_t i = 0; i < robot->n_frame_poses; ++i)
    put_pose(out, robot->frame_poses[i]);
  fputc('\n', out);
  if (!sensors)
    return;
  fprintf(out, "%s %sqdd", label, prefix);
  put_doubles(out, robot->qdd, robot->n_qdd);
  fprintf(out, "\n%s %slink_twists", label, prefix);
  for (size_t i = 0; i < robot->n_link_twists; ++i)
    put_twist(out, robot->link_twists[i]);
  fprintf(out, "\n%s %slink_twists_local", label, prefix);
  for (size_t i = 0; i < robot->n_link_twists_local; ++i)
    put_twist(out, robot->link_twists_local[i]);
  fprintf(out, "\n%s %slink_accelerations", label, prefix);
  for (size_t i = 0; i < robot->n_link_accelerations; ++i) {
    /* An Acceleration has the layout of a Twist: linear, angular. */
    const Lcpsim__V1__Acceleration *a = robot->link_accelerations[i];
    put_vec3(out, a ? a->linear : NULL);
    put_vec3(out, a ? a->angular : NULL);
  }
  fprintf(out, "\n%s %sjoint_wrenches", label, prefix);
  for (size_t i = 0; i < robot->n_joint_wrenches; ++i) {
    put_wrench(out, robot->joint_wrenches[i]->world);
    put_wrench(out, robot->joint_wrenches[i]->local);
  }
  fprintf(out, "\n%s %slink_contact_wrenches", label, prefix);
  for (size_t i = 0; i < robot->n_link_contact_wrenches; ++i)
    put_contact_wrench(out, robot->link_contact_wrenches[i]);
  fputc('\n', out);
  for (size_t i = 0; i < robot->n_imus; ++i) {
    const lcpsim_imu_reading_t *imu = robot->imus[i];
    fprintf(out, "%s %simu.%s", label, prefix, imu->name);
    put_vec3(out, imu->specific_force);
    put_vec3(out, imu->angular_rate);
    fputc('\n', out);
  }
  fprintf(out, "%s %senergy", label, prefix);
  put_energy(out, robot->energy);
  fputc('\n', out);
}

static void put_body(FILE *out, const char *label, const lcpsim_body_state_t *body, bool sensors) {
  char prefix[256];
  if (body->name && body->name[0])
    snprintf(prefix, sizeof prefix, "body.%s.", body->name);
  else
    snprintf(prefix, sizeof prefix, "body.#%" PRIu32 ".", body->id);
  fprintf(out, "%s %spose", label, prefix);
  put_pose(out, body->pose);
  fprintf(out, "\n%s %stwist", label, prefix);
  put_twist(out, body->twist);
  fputc('\n', out);
  if (!sensors)
    return;
  fprintf(out, "%s %scontact_wrench", label, prefix);
  put_contact_wrench(out, body->contact_wrench);
  fprintf(out, "\n%s %senergy", label, prefix);
  put_energy(out, body->energy);
  fputc('\n', out);
}

/* The state's lines in the canonical form (see the top of this file). */
static void put_state(FILE *out, const char *label, const lcpsim_state_t *state, bool sensors,
                      bool contacts) {
  fprintf(out, "%s time", label);
  put_double(out, state->time);
  fprintf(out, "\n%s step_count %" PRIu64 "\n", label, state->step_count);
  for (size_t i = 0; i < state->n_robots; ++i)
    put_robot(out, label, state->robots[i], sensors);
  for (size_t i = 0; i < state->n_bodies; ++i)
    put_body(out, label, state->bodies[i], sensors);
  if (contacts) {
    fprintf(out, "%s contacts %zu\n", label, state->n_contacts);
    for (size_t i = 0; i < state->n_contacts; ++i) {
      const lcpsim_contact_t *c = state->contacts[i];
      fprintf(out, "%s contact %s %s", label, c->a, c->b);
      put_vec3(out, c->position);
      put_vec3(out, c->normal);
      put_double(out, c->depth);
      put_double(out, c->normal_impulse);
      put_vec3(out, c->friction_impulse);
      fputc('\n', out);
    }
  }
  if (sensors) {
    static const Lcpsim__V1__SolverStats none = LCPSIM__V1__SOLVER_STATS__INIT;
    const lcpsim_solver_stats_t *s = state->solver_stats ? state->solver_stats : &none;
    fprintf(out, "%s solver_stats %d %d %d %d %d", label, s->pairs, s->manifolds, s->contacts,
            s->rows, s->iterations);
    put_double(out, s->residual);
    fprintf(out, " %d\n", s->warm_started);
  }
}

/* True when the two texts have the same lines once each line's label (up to its first space) is
 * taken off. */
static bool same_but_labels(const char *a, const char *b) {
  while (*a && *b) {
    a = strchr(a, ' ');
    b = strchr(b, ' ');
    if (!a || !b)
      return a == b;
    size_t n = strcspn(a, "\n"), m = strcspn(b, "\n");
    if (n != m || memcmp(a, b, n) != 0)
      return false;
    a += n + (a[n] == '\n');
    b += m + (b[m] == '\n');
  }
  return *a == *b;
}

/* ---- the session ---- */

static int failed(lcpsim_client_t *client, const char *what, int code) {
  fprintf(stderr, "scripted_session: %s: %s (%s)\n", what, lcpsim_status_name(code),
          lcpsim_client_last_error(client));
  return 1;
}

/* GetState (no sensors, no contacts) printed with `label` to `out`. */
static int print_state(lcpsim_client_t *client, const char *label, FILE *out) {
  lcpsim_state_t *state = NULL;
  int rc = lcpsim_client_get_state(client, LCPSIM_WITHOUT_CONTACTS, &state);
  if (rc != LCPSIM_OK)
    return failed(client, "GetState", rc);
  put_state(out, label, state, false, false);
  lcpsim_state_destroy(&state);
  return 0;
}

/* Steps REPLAY_STEPS, then GetState: its lines with `label` into a malloc'd text `*text`. */
static int replay(lcpsim_client_t *client, const char *label, char **text) {
  size_t size = 0;
  FILE *out = open_memstream(text, &size);
  if (!out) {
    perror("scripted_session: open_memstream");
    return 1;
  }
  int rc = lcpsim_client_step(client, REPLAY_STEPS, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL);
  int result = rc == LCPSIM_OK ? print_state(client, label, out) : failed(client, "Step", rc);
  fclose(out);
  return result;
}

static int session(lcpsim_client_t *client, const char *quadruped_urdf) {
  /* 1. The world, and a quadruped beside the arm. */
  lcpsim_info_t *info = NULL;
  int rc = lcpsim_client_get_info(client, &info);
  if (rc != LCPSIM_OK)
    return failed(client, "GetInfo", rc);
  lcpsim_info_destroy(&info);
  lcpsim_model_t model = {.urdf_path = quadruped_urdf, .name = "dog", .base = LCPSIM_BASE_FLOATING};
  memcpy(model.base_pose.position, DOG_BASE, sizeof DOG_BASE);
  lcpsim_robot_info_t *dog = NULL;
  rc = lcpsim_client_load_model(client, &model, &dog);
  if (rc != LCPSIM_OK)
    return failed(client, "LoadModel", rc);
  double stance[MAX_JOINTS];
  size_t dog_joints = dog->n_joints;
  if (dog_joints > MAX_JOINTS) {
    fprintf(stderr, "scripted_session: the dog has %zu joints, more than %d\n", dog_joints,
            MAX_JOINTS);
    lcpsim_robot_info_destroy(&dog);
    return 1;
  }
  for (size_t i = 0; i < dog_joints; ++i) {
    stance[i] = 0.0;
    for (int part = 0; part < 3; ++part)
      if (strstr(dog->joints[i]->name, DOG_STANCE_PARTS[part]))
        stance[i] = DOG_STANCE[part];
  }
  lcpsim_robot_info_destroy(&dog);

  /* 2. IMUs: a noiseless one at the wrist, a noisy one (seeded) in the trunk. */
  lcpsim_imu_t wrist = {.name = "wrist", .robot = "arm7", .link = "link7"};
  memcpy(wrist.pose.position, WRIST_SITE, sizeof WRIST_SITE);
  if ((rc = lcpsim_client_add_imu(client, &wrist)) != LCPSIM_OK)
    return failed(client, "AddImu wrist", rc);
  const lcpsim_imu_t trunk = {.name = "trunk_imu",
                              .robot = "dog",
                              .link = "trunk",
                              .accel_noise = TRUNK_IMU_ACCEL_NOISE,
                              .gyro_noise = TRUNK_IMU_GYRO_NOISE,
                              .seed = TRUNK_IMU_SEED};
  if ((rc = lcpsim_client_add_imu(client, &trunk)) != LCPSIM_OK)
    return failed(client, "AddImu trunk_imu", rc);

  /* 3. States: two arm joints by name, the dog's base in the air moving along x, the box lifted
   * off the table and spinning. */
  const lcpsim_joint_state_t arm_joints[] = {
      {.name = "joint1", .has_position = true, .position = 0.3},
      {.name = "joint2",
       .has_position = true,
       .position = 0.2,
       .has_velocity = true,
       .velocity = 0.1}};
  const lcpsim_robot_state_change_t arm_state = {
      .robot = "arm7", .joints = arm_joints, .n_joints = 2};
  if ((rc = lcpsim_client_set_robot_state(client, &arm_state)) != LCPSIM_OK)
    return failed(client, "SetRobotState arm7", rc);
  lcpsim_robot_state_change_t dog_state = {
      .robot = "dog", .has_base_pose = true, .has_base_twist = true};
  memcpy(dog_state.base_pose.position, DOG_RESET_BASE, sizeof DOG_RESET_BASE);
  memcpy(dog_state.base_pose.orientation, IDENTITY, sizeof IDENTITY);
  memcpy(dog_state.base_linear, DOG_RESET_LINEAR, sizeof DOG_RESET_LINEAR);
  if ((rc = lcpsim_client_set_robot_state(client, &dog_state)) != LCPSIM_OK)
    return failed(client, "SetRobotState dog", rc);
  lcpsim_state_t *now = NULL;
  if ((rc = lcpsim_client_get_state(client, LCPSIM_WITHOUT_CONTACTS, &now)) != LCPSIM_OK)
    return failed(client, "GetState", rc);
  lcpsim_body_state_change_t box = {.name = "box", .has_pose = true, .has_twist = true};
  bool found = false;
  for (size_t i = 0; i < now->n_bodies; ++i) {
    const lcpsim_body_state_t *body = now->bodies[i];
    if (strcmp(body->name, "box") != 0)
      continue;
    found = true;
    const Lcpsim__V1__Vec3 *p = body->pose ? body->pose->position : NULL;
    const Lcpsim__V1__Quat *q = body->pose ? body->pose->orientation : NULL;
    box.pose.position[0] = p ? p->x : 0.0;
    box.pose.position[1] = p ? p->y : 0.0;
    box.pose.position[2] = (p ? p->z : 0.0) + BOX_LIFT;
    const double unit[4] = {q ? q->w : 0.0, q ? q->x : 0.0, q ? q->y : 0.0, q ? q->z : 0.0};
    bool unset = unit[0] == 0.0 && unit[1] == 0.0 && unit[2] == 0.0 && unit[3] == 0.0;
    memcpy(box.pose.orientation, unset ? IDENTITY : unit, sizeof unit);
  }
  lcpsim_state_destroy(&now);
  if (!found) {
    fprintf(stderr, "scripted_session: the world has no body \"box\"\n");
    return 1;
  }
  memcpy(box.angular_velocity, BOX_SPIN, sizeof BOX_SPIN);
  if ((rc = lcpsim_client_set_body_state(client, &box)) != LCPSIM_OK)
    return failed(client, "SetBodyState box", rc);

  /* 4. PD targets for both robots, applied with the first step. */
  const double arm_target = ARM_TARGET, arm_kp = ARM_KP, arm_kd = ARM_KD;
  const double dog_kp = DOG_KP, dog_kd = DOG_KD;
  const lcpsim_target_t targets[] = {{.robot = "arm7",
                                      .mode = LCPSIM_MODE_POSITION,
                                      .position = &arm_target,
                                      .n_position = 1,
                                      .kp = &arm_kp,
                                      .n_kp = 1,
                                      .kd = &arm_kd,
                                      .n_kd = 1},
                                     {.robot = "dog",
                                      .mode = LCPSIM_MODE_POSITION,
                                      .position = stance,
                                      .n_position = dog_joints,
                                      .kp = &dog_kp,
                                      .n_kp = 1,
                                      .kd = &dog_kd,
                                      .n_kd = 1}};
  if ((rc = lcpsim_client_step(client, SETTLE_STEPS, targets, 2, LCPSIM_WITHOUT_CONTACTS, NULL)))
    return failed(client, "Step with targets", rc);
  if (print_state(client, "A", stdout))
    return 1;

  /* 5. A held lateral push on the dog's base, then a one-step twist of the wrist. */
  lcpsim_wrench_t push = {.target = "dog", .hold = true};
  memcpy(push.force, PUSH_FORCE, sizeof PUSH_FORCE);
  uint32_t push_id = 0;
  if ((rc = lcpsim_client_apply_wrench(client, &push, &push_id)) != LCPSIM_OK)
    return failed(client, "ApplyWrench dog", rc);
  if ((rc = lcpsim_client_step(client, PUSH_STEPS, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL)))
    return failed(client, "Step", rc);
  if ((rc = lcpsim_client_clear_wrench(client, push_id)) != LCPSIM_OK)
    return failed(client, "ApplyWrench clear", rc);
  lcpsim_wrench_t twist = {.target = "arm7", .link = "link7", .frame = LCPSIM_FRAME_LOCAL};
  memcpy(twist.torque, TWIST_TORQUE, sizeof TWIST_TORQUE);
  if ((rc = lcpsim_client_apply_wrench(client, &twist, NULL)) != LCPSIM_OK)
    return failed(client, "ApplyWrench arm7", rc);
  if ((rc = lcpsim_client_step(client, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL)))
    return failed(client, "Step", rc);
  if (print_state(client, "B", stdout))
    return 1;

  /* 6. Randomised dynamics, then every sensor and the contacts. */
  const lcpsim_body_dynamics_t bodies[] = {
      {.body = "box",
       .has_mass = true,
       .mass = BOX_MASS,
       .has_friction = true,
       .friction = BOX_FRICTION},
      {.robot = "dog", .link = "trunk", .has_mass = true, .mass = TRUNK_MASS}};
  const lcpsim_joint_dynamics_t joints[] = {
      {.robot = "arm7", .joint = "joint3", .has_damping = true, .damping = JOINT3_DAMPING}};
  if ((rc = lcpsim_client_set_dynamics(client, bodies, 2, joints, 1)) != LCPSIM_OK)
    return failed(client, "SetDynamics", rc);
  lcpsim_state_t *sensed = NULL;
  rc = lcpsim_client_step_sensors(client, SENSED_STEPS, NULL, 0, LCPSIM_WITH_CONTACTS,
                                  LCPSIM_SENSOR_ALL, &sensed);
  if (rc != LCPSIM_OK)
    return failed(client, "Step with sensors", rc);
  put_state(stdout, "C", sensed, true, true);
  lcpsim_state_destroy(&sensed);

  /* 7. A snapshot, replayed: the same steps from it give the same state. */
  uint8_t *snapshot = NULL;
  size_t snapshot_size = 0;
  if ((rc = lcpsim_client_save_state(client, NULL, &snapshot, &snapshot_size, NULL)))
    return failed(client, "SaveState", rc);
  char *first = NULL, *again = NULL;
  int result = replay(client, "D", &first);
  if (result == 0) {
    fputs(first, stdout);
    rc = lcpsim_client_restore_state(client, snapshot, snapshot_size, NULL);
    result = rc == LCPSIM_OK ? replay(client, "E", &again) : failed(client, "RestoreState", rc);
  }
  if (result == 0) {
    fputs(again, stdout);
    if (!same_but_labels(first, again)) {
      fprintf(stderr, "scripted_session: the replay from the snapshot (E) differs from the "
                      "first run (D)\n");
      result = 1;
    }
  }
  free(first);
  free(again);
  free(snapshot);
  return result;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ENDPOINT QUADRUPED_URDF\n", argv[0]);
    return 2;
  }
  lcpsim_client_t *client = NULL;
  int rc = lcpsim_client_connect(argv[1], 30000, &client);
  if (rc != LCPSIM_OK) {
    fprintf(stderr, "scripted_session: connect %s: %s\n", argv[1], lcpsim_status_name(rc));
    return 1;
  }
  int result = session(client, argv[2]);
  lcpsim_client_destroy(&client);
  return fflush(stdout) == 0 ? result : 1;
}
