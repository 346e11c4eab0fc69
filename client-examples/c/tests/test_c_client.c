/* SPDX-License-Identifier: Apache-2.0 */
/* The C client library against a live lcpsimd (each test starts its own on ephemeral ports), and
 * against a fake daemon for what a real one does not do on demand: late, wrong and undecodable
 * replies.
 *
 *   test_c_client PATH_TO_LCPSIMD
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim_client.h"
#include "test_daemon.h"

/* In double precision (cmocka's assert_float_equal compares floats). */
#define assert_near(a, b, tol)                                                                     \
  do {                                                                                             \
    double a_ = (a), b_ = (b), t_ = (tol);                                                         \
    if (!(fabs(a_ - b_) <= t_))                                                                    \
      fail_msg("%s = %.17g, expected %.17g (tol %g)", #a, a_, b_, t_);                             \
  } while (0)

static const char *daemon_path;

/* The built-in world's arm (server/model/robots/arm7.urdf). */
static const char ARM[] = "arm7";
enum { ARM_JOINTS = 7 };
static const char *const ARM_JOINT_NAMES[ARM_JOINTS] = {"joint1", "joint2", "joint3", "joint4",
                                                        "joint5", "joint6", "joint7"};

typedef struct {
  test_daemon_t daemon;
  lcpsim_client_t *client;
  double timestep; /* the world's, from GetInfo */
} live_t;

static int start_live(void **state) {
  live_t *live = calloc(1, sizeof *live);
  if (!live || test_daemon_start(daemon_path, &live->daemon) != 0) {
    free(live);
    return -1;
  }
  lcpsim_info_t *info = NULL;
  if (lcpsim_client_connect(live->daemon.rep, 20000, &live->client) != LCPSIM_OK ||
      lcpsim_client_get_info(live->client, &info) != LCPSIM_OK) {
    fprintf(stderr, "cannot reach the daemon at %s: %s\n", live->daemon.rep,
            lcpsim_client_last_error(live->client));
    lcpsim_client_destroy(&live->client);
    test_daemon_stop(&live->daemon);
    free(live);
    return -1;
  }
  live->timestep = info->settings->timestep;
  lcpsim_info_destroy(&info);
  *state = live;
  return 0;
}

static int stop_live(void **state) {
  live_t *live = *state;
  lcpsim_client_destroy(&live->client);
  /* The daemon shuts down cleanly on SIGTERM. */
  int status = test_daemon_stop(&live->daemon);
  free(live);
  if (status != 0)
    fprintf(stderr, "lcpsimd exited with status %d on SIGTERM\n", status);
  return status == 0 ? 0 : -1;
}

/* Steps for `seconds` of simulated time in one call. */
static int steps_for(const live_t *live, double seconds) {
  return (int)lround(seconds / live->timestep);
}

static lcpsim_state_t *get_state(live_t *live) {
  lcpsim_state_t *state = NULL;
  assert_int_equal(lcpsim_client_get_state(live->client, LCPSIM_WITHOUT_CONTACTS, &state),
                   LCPSIM_OK);
  assert_non_null(state);
  return state;
}

static const lcpsim_robot_state_t *arm_of(const lcpsim_state_t *state) {
  const lcpsim_robot_state_t *arm = lcpsim_state_find_robot(state, ARM);
  assert_non_null(arm);
  assert_int_equal(arm->n_q, ARM_JOINTS);
  assert_int_equal(arm->n_qd, ARM_JOINTS);
  return arm;
}

/* Position control of every arm joint with gravity compensation. Gains that damp the shoulder well
 * (about 6 kg·m² of arm above it: ζ ≈ 0.8), so that the arm settles within a few seconds. */
static const double KP = 100.0, KD = 40.0;
static const double SETTLE_SECONDS = 5.0;
static lcpsim_target_t hold_arm(const double position[ARM_JOINTS]) {
  return (lcpsim_target_t){.robot = ARM,
                           .mode = LCPSIM_MODE_POSITION,
                           .position = position,
                           .n_position = ARM_JOINTS,
                           .kp = &KP,
                           .n_kp = 1,
                           .kd = &KD,
                           .n_kd = 1,
                           .gravity_compensation = LCPSIM_GRAVITY_COMPENSATION_ON};
}

/* ---- happy paths, one per call ---- */

static void ping_answers_with_the_version(void **state) {
  live_t *live = *state;
  char version[64] = "";
  assert_int_equal(lcpsim_client_ping(live->client, version, sizeof version), LCPSIM_OK);
  assert_true(strlen(version) > 0);
  assert_string_equal(lcpsim_client_last_error(live->client), "");
  /* A NULL buffer is allowed. */
  assert_int_equal(lcpsim_client_ping(live->client, NULL, 0), LCPSIM_OK);
}

static void get_info_describes_the_arm_as_its_urdf_says(void **state) {
  live_t *live = *state;
  lcpsim_info_t *info = NULL;
  assert_int_equal(lcpsim_client_get_info(live->client, &info), LCPSIM_OK);
  const lcpsim_robot_info_t *arm = lcpsim_info_find_robot(info, ARM);
  assert_non_null(arm);
  assert_false(arm->floating_base);
  assert_int_equal(arm->n_joints, ARM_JOINTS);
  assert_int_equal(arm->nq, ARM_JOINTS);
  assert_int_equal(arm->nv, ARM_JOINTS);
  for (int i = 0; i < ARM_JOINTS; ++i) {
    const lcpsim_joint_info_t *joint = arm->joints[i];
    assert_string_equal(joint->name, ARM_JOINT_NAMES[i]);
    assert_int_equal(joint->index, i);
    assert_int_equal(joint->type, LCPSIM__V1__JOINT_INFO__TYPE__REVOLUTE);
    assert_true(joint->has_limits);
    /* Axes alternate z, y, z, ...; limits ±170° (z), ±120° (y), ±175° (last), 100 N·m. */
    double expected_upper = i == 6 ? 175.0 : i % 2 == 0 ? 170.0 : 120.0;
    assert_near(joint->upper, expected_upper * 3.14159265358979323846 / 180.0, 1e-12);
    assert_near(joint->lower, -joint->upper, 1e-12);
    assert_near(joint->effort_limit, 100.0, 1e-12);
    assert_non_null(joint->axis);
    assert_near(joint->axis->z, i % 2 == 0 ? 1.0 : 0.0, 1e-12);
    assert_near(joint->axis->y, i % 2 == 0 ? 0.0 : 1.0, 1e-12);
  }
  assert_non_null(info->settings);
  assert_true(info->settings->timestep > 0.0);
  assert_near(info->settings->gravity->z, -9.81, 1e-12);
  assert_true(strlen(info->server_version) > 0);
  lcpsim_info_destroy(&info);
  assert_null(info);
}

static void step_advances_time_and_count(void **state) {
  live_t *live = *state;
  lcpsim_state_t *before = get_state(live);
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step(live->client, 10, NULL, 0, LCPSIM_WITHOUT_CONTACTS, &after),
                   LCPSIM_OK);
  assert_int_equal(after->step_count, before->step_count + 10);
  assert_near(after->time, before->time + 10 * live->timestep, 1e-9);
  assert_int_equal(after->sequence, 0);
  /* Without a state asked for, the call still steps. */
  assert_int_equal(lcpsim_client_step(live->client, 5, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  lcpsim_state_t *later = get_state(live);
  assert_int_equal(later->step_count, before->step_count + 15);
  lcpsim_state_destroy(&before);
  lcpsim_state_destroy(&after);
  lcpsim_state_destroy(&later);
}

static void step_targets_drive_the_arm_to_a_pose(void **state) {
  live_t *live = *state;
  const double pose[ARM_JOINTS] = {0.3, -0.2, 0.1, 0.4, 0.0, -0.3, 0.2};
  lcpsim_target_t target = hold_arm(pose);
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step(live->client, steps_for(live, SETTLE_SECONDS), &target, 1,
                                      LCPSIM_WITHOUT_CONTACTS, &after),
                   LCPSIM_OK);
  const lcpsim_robot_state_t *arm = arm_of(after);
  /* With gravity compensated, the PD settles on its target. */
  for (int i = 0; i < ARM_JOINTS; ++i) {
    assert_near(arm->q[i], pose[i], 0.01);
    assert_near(arm->qd[i], 0.0, 0.01);
  }
  lcpsim_state_destroy(&after);
}

static void set_target_by_name_and_by_index(void **state) {
  live_t *live = *state;
  const double zero = 0.0, bend = 0.25;
  /* Hold joints 1, 3..7 at 0 by name, then joint2 (index 1) at 0.25 by index. */
  const char *const others[] = {"joint1", "joint3", "joint4", "joint5", "joint6", "joint7"};
  lcpsim_target_t by_name = {.robot = ARM,
                             .joints = others,
                             .n_joints = 6,
                             .mode = LCPSIM_MODE_POSITION,
                             .position = &zero,
                             .n_position = 1,
                             .kp = &KP,
                             .n_kp = 1,
                             .kd = &KD,
                             .n_kd = 1,
                             .gravity_compensation = LCPSIM_GRAVITY_COMPENSATION_ON};
  const int32_t second[] = {1};
  lcpsim_target_t by_index = {.robot = ARM,
                              .indices = second,
                              .n_indices = 1,
                              .mode = LCPSIM_MODE_POSITION,
                              .position = &bend,
                              .n_position = 1,
                              .kp = &KP,
                              .n_kp = 1,
                              .kd = &KD,
                              .n_kd = 1};
  assert_int_equal(lcpsim_client_set_target(live->client, &by_name), LCPSIM_OK);
  assert_int_equal(lcpsim_client_set_target(live->client, &by_index), LCPSIM_OK);
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step(live->client, steps_for(live, SETTLE_SECONDS), NULL, 0,
                                      LCPSIM_WITHOUT_CONTACTS, &after),
                   LCPSIM_OK);
  const lcpsim_robot_state_t *arm = arm_of(after);
  for (int i = 0; i < ARM_JOINTS; ++i)
    assert_near(arm->q[i], i == 1 ? bend : 0.0, 0.01);
  lcpsim_state_destroy(&after);
}

static void torque_mode_accelerates_the_base_joint(void **state) {
  live_t *live = *state;
  /* The arm held straight up turns about joint1's z axis as one body: links 1..7, each with
   * izz = 0.000775849 kg·m² on that axis, so a torque τ gives qd = τ t / I. */
  const double straight[ARM_JOINTS] = {0};
  lcpsim_target_t hold = hold_arm(straight);
  const double torque = 0.01, inertia = 7 * 0.0007758490566037736, duration = 0.2;
  const int32_t first[] = {0};
  lcpsim_target_t twist = {.robot = ARM,
                           .indices = first,
                           .n_indices = 1,
                           .mode = LCPSIM_MODE_TORQUE,
                           .torque = &torque,
                           .n_torque = 1};
  lcpsim_target_t targets[] = {hold, twist};
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step(live->client, steps_for(live, duration), targets, 2,
                                      LCPSIM_WITHOUT_CONTACTS, &after),
                   LCPSIM_OK);
  const lcpsim_robot_state_t *arm = arm_of(after);
  double expected_rate = torque / inertia * duration;
  assert_near(arm->qd[0], expected_rate, 0.03 * expected_rate);
  assert_near(arm->q[0], 0.5 * expected_rate * duration, 0.05 * expected_rate * duration);
  assert_int_equal(arm->n_applied_torque, ARM_JOINTS);
  assert_near(arm->applied_torque[0], torque, 1e-9);
  lcpsim_state_destroy(&after);
}

static void get_state_reports_contacts_only_when_asked(void **state) {
  live_t *live = *state;
  /* Let the world settle so that what rests on something touches it. */
  assert_int_equal(lcpsim_client_step(live->client, steps_for(live, 0.5), NULL, 0,
                                      LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  lcpsim_state_t *with = NULL, *without = NULL;
  assert_int_equal(lcpsim_client_get_state(live->client, LCPSIM_WITH_CONTACTS, &with), LCPSIM_OK);
  assert_int_equal(lcpsim_client_get_state(live->client, LCPSIM_WITHOUT_CONTACTS, &without),
                   LCPSIM_OK);
  assert_true(with->n_contacts > 0);
  assert_int_equal(without->n_contacts, 0);
  for (size_t i = 0; i < with->n_contacts; ++i) {
    const lcpsim_contact_t *contact = with->contacts[i];
    assert_true(strlen(contact->a) > 0 && strlen(contact->b) > 0);
    double n =
        sqrt(contact->normal->x * contact->normal->x + contact->normal->y * contact->normal->y +
             contact->normal->z * contact->normal->z);
    assert_near(n, 1.0, 1e-6);
    assert_true(contact->normal_impulse >= 0.0);
  }
  /* Step with the state and contacts in one round trip. */
  lcpsim_state_t *stepped = NULL;
  assert_int_equal(lcpsim_client_step(live->client, 1, NULL, 0, LCPSIM_WITH_CONTACTS, &stepped),
                   LCPSIM_OK);
  assert_true(stepped->n_contacts > 0);
  lcpsim_state_destroy(&with);
  lcpsim_state_destroy(&without);
  lcpsim_state_destroy(&stepped);
}

static char *read_file(const char *path) {
  FILE *file = fopen(path, "rb");
  assert_non_null(file);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
  text[size] = '\0';
  fclose(file);
  return text;
}

static void load_model_from_text_and_from_path(void **state) {
  live_t *live = *state;
  char *urdf = read_file(LCP_ARM7_URDF);
  lcpsim_model_t from_text = {.urdf_text = urdf,
                              .name = "second_arm",
                              .base_pose = {.position = {1.0, 0.0, 0.1}},
                              .base = LCPSIM_BASE_FIXED};
  lcpsim_robot_info_t *robot = NULL;
  assert_int_equal(lcpsim_client_load_model(live->client, &from_text, &robot), LCPSIM_OK);
  free(urdf);
  assert_string_equal(robot->name, "second_arm");
  assert_int_equal(robot->n_joints, ARM_JOINTS);
  assert_string_equal(robot->joints[3]->name, "joint4");
  lcpsim_robot_info_destroy(&robot);
  assert_null(robot);

  lcpsim_model_t from_path = {
      .urdf_path = "arm7.urdf", .name = "third_arm", .base_pose = {.position = {-1.0, 0.0, 0.1}}};
  assert_int_equal(lcpsim_client_load_model(live->client, &from_path, NULL), LCPSIM_OK);

  lcpsim_info_t *info = NULL;
  assert_int_equal(lcpsim_client_get_info(live->client, &info), LCPSIM_OK);
  assert_non_null(lcpsim_info_find_robot(info, ARM));
  assert_non_null(lcpsim_info_find_robot(info, "second_arm"));
  assert_non_null(lcpsim_info_find_robot(info, "third_arm"));
  lcpsim_info_destroy(&info);
  /* The new robot is in the state, its base where it was put. */
  lcpsim_state_t *now = get_state(live);
  const lcpsim_robot_state_t *second = lcpsim_state_find_robot(now, "second_arm");
  assert_non_null(second);
  assert_non_null(second->base_pose);
  assert_near(second->base_pose->position->x, 1.0, 1e-12);
  assert_near(second->base_pose->position->z, 0.1, 1e-12);
  lcpsim_state_destroy(&now);

  lcpsim_model_t neither = {.name = "nothing"};
  assert_int_equal(lcpsim_client_load_model(live->client, &neither, NULL), LCPSIM_ERR_USAGE);
}

static const lcpsim_body_state_t *find_body(const lcpsim_state_t *state, const char *name) {
  for (size_t i = 0; i < state->n_bodies; ++i)
    if (strcmp(state->bodies[i]->name, name) == 0)
      return state->bodies[i];
  return NULL;
}

static void spawn_falls_freely_and_remove_takes_it_away(void **state) {
  live_t *live = *state;
  /* Far from everything else in the world, 10 m up. */
  lcpsim_body_t ball = {.name = "ball",
                        .shape = LCPSIM_SHAPE_SPHERE,
                        .radius = 0.1,
                        .pose = {.position = {20.0, 20.0, 10.0}},
                        .mass = 1.0};
  uint32_t id = 0;
  char *name = NULL;
  assert_int_equal(lcpsim_client_spawn(live->client, &ball, &id, &name), LCPSIM_OK);
  assert_string_equal(name, "ball");
  free(name);

  lcpsim_body_t box = {.shape = LCPSIM_SHAPE_BOX,
                       .half_extents = {0.1, 0.1, 0.1},
                       .pose = {.position = {-20.0, 20.0, 0.1}},
                       .mass = 2.0};
  uint32_t box_id = 0;
  assert_int_equal(lcpsim_client_spawn(live->client, &box, &box_id, &name), LCPSIM_OK);
  /* An unnamed body gets a name of the server's. */
  assert_true(strlen(name) > 0);
  assert_int_not_equal(box_id, id);
  free(name);

  lcpsim_state_t *before = get_state(live);
  const double duration = 0.5;
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step(live->client, steps_for(live, duration), NULL, 0,
                                      LCPSIM_WITHOUT_CONTACTS, &after),
                   LCPSIM_OK);
  const lcpsim_body_state_t *fallen = find_body(after, "ball");
  assert_non_null(fallen);
  assert_int_equal(fallen->id, id);
  double t = after->time - before->time;
  /* Semi-implicit Euler falls a little further than ½ g t² (by ½ g h t). */
  assert_near(fallen->pose->position->z, 10.0 - 0.5 * 9.81 * t * t, 9.81 * live->timestep * t);
  assert_near(fallen->twist->linear->z, -9.81 * t, 1e-6);
  lcpsim_state_destroy(&before);
  lcpsim_state_destroy(&after);

  assert_int_equal(lcpsim_client_remove(live->client, "ball"), LCPSIM_OK);
  lcpsim_state_t *now = get_state(live);
  assert_null(find_body(now, "ball"));
  lcpsim_state_destroy(&now);
  assert_int_equal(lcpsim_client_remove(live->client, "ball"), LCPSIM_ERR_NOT_FOUND);
  assert_non_null(strstr(lcpsim_client_last_error(live->client), "ball"));

  /* The restitution is sent: one above 1 is refused by the daemon. */
  ball.restitution = 1.5;
  assert_int_equal(lcpsim_client_spawn(live->client, &ball, NULL, NULL),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcpsim_client_last_error(live->client), "spawn.restitution"));
  ball.restitution = 0.5;
  assert_int_equal(lcpsim_client_spawn(live->client, &ball, NULL, NULL), LCPSIM_OK);
}

static void reset_goes_back_to_the_start(void **state) {
  live_t *live = *state;
  lcpsim_state_t *start = get_state(live);
  lcpsim_body_t ball = {.name = "ball",
                        .shape = LCPSIM_SHAPE_SPHERE,
                        .radius = 0.1,
                        .pose = {.position = {5, 5, 1}},
                        .mass = 1};
  assert_int_equal(lcpsim_client_spawn(live->client, &ball, NULL, NULL), LCPSIM_OK);
  assert_int_equal(lcpsim_client_step(live->client, 50, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  assert_int_equal(lcpsim_client_reset(live->client), LCPSIM_OK);
  lcpsim_state_t *reset = get_state(live);
  assert_int_equal(reset->step_count, start->step_count);
  assert_near(reset->time, start->time, 0.0);
  assert_null(find_body(reset, "ball"));
  assert_int_equal(reset->n_bodies, start->n_bodies);
  const lcpsim_robot_state_t *arm = arm_of(reset), *arm_at_start = arm_of(start);
  for (int i = 0; i < ARM_JOINTS; ++i)
    assert_near(arm->q[i], arm_at_start->q[i], 0.0);
  lcpsim_state_destroy(&start);
  lcpsim_state_destroy(&reset);
}

/* Steps the arm along a fixed motion and returns its state. */
static lcpsim_state_t *move_arm(live_t *live, int steps) {
  const double pose[ARM_JOINTS] = {0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5};
  lcpsim_target_t target = hold_arm(pose);
  lcpsim_state_t *after = NULL;
  assert_int_equal(
      lcpsim_client_step(live->client, steps, &target, 1, LCPSIM_WITHOUT_CONTACTS, &after),
      LCPSIM_OK);
  return after;
}

static void save_and_restore_bytes_replays_bitwise(void **state) {
  live_t *live = *state;
  lcpsim_state_t *warmup = move_arm(live, 20);
  uint8_t *snapshot = NULL;
  size_t size = 0;
  double saved_at = -1.0;
  assert_int_equal(lcpsim_client_save_state(live->client, NULL, &snapshot, &size, &saved_at),
                   LCPSIM_OK);
  assert_true(size > 0);
  assert_near(saved_at, warmup->time, 0.0);
  lcpsim_state_t *first = move_arm(live, 100);
  double restored_at = -1.0;
  assert_int_equal(lcpsim_client_restore_state(live->client, snapshot, size, &restored_at),
                   LCPSIM_OK);
  assert_near(restored_at, saved_at, 0.0);
  lcpsim_state_t *again = move_arm(live, 100);
  /* A snapshot is the whole state: the replay is bitwise the same. */
  assert_int_equal(again->step_count, first->step_count);
  const lcpsim_robot_state_t *a = arm_of(first), *b = arm_of(again);
  for (int i = 0; i < ARM_JOINTS; ++i) {
    assert_memory_equal(&a->q[i], &b->q[i], sizeof(double));
    assert_memory_equal(&a->qd[i], &b->qd[i], sizeof(double));
  }
  free(snapshot);
  lcpsim_state_destroy(&warmup);
  lcpsim_state_destroy(&first);
  lcpsim_state_destroy(&again);
}

static void save_and_restore_by_slot(void **state) {
  live_t *live = *state;
  lcpsim_state_t *warmup = move_arm(live, 10);
  double saved_at = -1.0;
  assert_int_equal(lcpsim_client_save_state(live->client, "home", NULL, NULL, &saved_at),
                   LCPSIM_OK);
  lcpsim_state_t *moved = move_arm(live, 50);
  assert_true(moved->time > saved_at);
  double restored_at = -1.0;
  assert_int_equal(lcpsim_client_restore_slot(live->client, "home", &restored_at), LCPSIM_OK);
  assert_near(restored_at, saved_at, 0.0);
  lcpsim_state_t *now = get_state(live);
  assert_int_equal(now->step_count, warmup->step_count);
  const lcpsim_robot_state_t *a = arm_of(warmup), *b = arm_of(now);
  for (int i = 0; i < ARM_JOINTS; ++i)
    assert_near(a->q[i], b->q[i], 0.0);
  assert_int_equal(lcpsim_client_restore_slot(live->client, "no such slot", NULL),
                   LCPSIM_ERR_NOT_FOUND);
  lcpsim_state_destroy(&warmup);
  lcpsim_state_destroy(&moved);
  lcpsim_state_destroy(&now);
}

static void set_settings_changes_only_what_is_given(void **state) {
  live_t *live = *state;
  lcpsim_info_t *info = NULL;
  assert_int_equal(lcpsim_client_get_info(live->client, &info), LCPSIM_OK);
  const double omega_before = info->settings->sor_omega;
  lcpsim_info_destroy(&info);

  lcpsim_settings_change_t change = {.has_timestep = true,
                                     .timestep = 0.002,
                                     .has_iterations = true,
                                     .iterations = 37,
                                     .has_gravity = true,
                                     .gravity = {0.0, 0.0, -1.62}};
  lcpsim_settings_t *settings = NULL;
  assert_int_equal(lcpsim_client_set_settings(live->client, &change, &settings), LCPSIM_OK);
  assert_near(settings->timestep, 0.002, 0.0);
  assert_int_equal(settings->iterations, 37);
  assert_near(settings->gravity->z, -1.62, 0.0);
  assert_near(settings->sor_omega, omega_before, 0.0);
  lcpsim_settings_destroy(&settings);
  assert_null(settings);

  lcpsim_state_t *before = get_state(live);
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step(live->client, 3, NULL, 0, LCPSIM_WITHOUT_CONTACTS, &after),
                   LCPSIM_OK);
  assert_near(after->time - before->time, 3 * 0.002, 1e-12);
  lcpsim_state_destroy(&before);
  lcpsim_state_destroy(&after);

  lcpsim_settings_change_t solver = {.has_sor_omega = true,
                                     .sor_omega = 1.3,
                                     .has_friction_model = true,
                                     .friction_model = LCPSIM_FRICTION_BOX};
  assert_int_equal(lcpsim_client_set_settings(live->client, &solver, &settings), LCPSIM_OK);
  assert_near(settings->sor_omega, 1.3, 0.0);
  assert_int_equal(settings->friction_model, LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_BOX);
  assert_int_equal(settings->iterations, 37);
  lcpsim_settings_destroy(&settings);

  lcpsim_settings_change_t bad = {.has_timestep = true, .timestep = -1.0};
  assert_int_equal(lcpsim_client_set_settings(live->client, &bad, NULL),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_true(strlen(lcpsim_client_last_error(live->client)) > 0);

  /* The contact settings: false and 0 are sent when flagged; unflagged ones
   * stay as they are. */
  lcpsim_settings_change_t contact = {.has_max_push_speed = true,
                                      .max_push_speed = 0.5,
                                      .has_relax_iterations = true,
                                      .relax_iterations = 0,
                                      .has_restitution_threshold = true,
                                      .restitution_threshold = 0.3,
                                      .has_enforce_velocity_limits = true,
                                      .enforce_velocity_limits = false};
  assert_int_equal(lcpsim_client_set_settings(live->client, &contact, &settings), LCPSIM_OK);
  assert_near(settings->max_push_speed, 0.5, 0.0);
  assert_int_equal(settings->relax_iterations, 0);
  assert_near(settings->restitution_threshold, 0.3, 0.0);
  assert_false(settings->enforce_velocity_limits);
  assert_int_equal(settings->iterations, 37);
  lcpsim_settings_destroy(&settings);
  lcpsim_settings_change_t push_only = {.has_max_push_speed = true, .max_push_speed = 2.0};
  assert_int_equal(lcpsim_client_set_settings(live->client, &push_only, &settings), LCPSIM_OK);
  assert_near(settings->max_push_speed, 2.0, 0.0);
  assert_near(settings->restitution_threshold, 0.3, 0.0);
  assert_false(settings->enforce_velocity_limits);
  lcpsim_settings_destroy(&settings);
}

static void realtime_mode_steps_without_step_calls(void **state) {
  live_t *live = *state;
  lcpsim_settings_change_t realtime = {
      .has_mode = true, .mode = LCPSIM_REALTIME, .has_rate = true, .rate = 1.0};
  lcpsim_settings_t *settings = NULL;
  assert_int_equal(lcpsim_client_set_settings(live->client, &realtime, &settings), LCPSIM_OK);
  assert_int_equal(settings->mode, LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME);
  lcpsim_settings_destroy(&settings);
  /* The world moves on its own; how far in 300 ms depends on the machine, that it moves does not.
   */
  struct timespec pause = {.tv_nsec = 300000000L};
  nanosleep(&pause, NULL);
  lcpsim_state_t *moved = get_state(live);
  assert_true(moved->step_count > 0);
  lcpsim_settings_change_t lockstep = {.has_mode = true, .mode = LCPSIM_LOCKSTEP};
  assert_int_equal(lcpsim_client_set_settings(live->client, &lockstep, NULL), LCPSIM_OK);
  lcpsim_state_t *stopped = get_state(live);
  nanosleep(&pause, NULL);
  lcpsim_state_t *still = get_state(live);
  assert_int_equal(still->step_count, stopped->step_count);
  lcpsim_state_destroy(&moved);
  lcpsim_state_destroy(&stopped);
  lcpsim_state_destroy(&still);
}

static void subscribe_streams_every_kth_state(void **state) {
  live_t *live = *state;
  lcpsim_subscriber_t *subscriber = NULL;
  assert_int_equal(lcpsim_subscriber_new(live->daemon.pub, &subscriber), LCPSIM_OK);
  assert_int_equal(lcpsim_client_subscribe(live->client, 2, LCPSIM_WITHOUT_CONTACTS), LCPSIM_OK);
  /* A subscription takes effect once its connection is up: step until the first state comes. */
  lcpsim_state_t *first = NULL;
  for (int attempt = 0; attempt < 200 && !first; ++attempt) {
    assert_int_equal(lcpsim_client_step(live->client, 2, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                     LCPSIM_OK);
    int code = lcpsim_subscriber_receive(subscriber, 50, &first);
    assert_true(code == LCPSIM_OK || code == LCPSIM_ERR_TIMEOUT);
  }
  assert_non_null(first);
  /* Drain whatever else came during the wait, so the next state is that of the next steps. */
  lcpsim_state_t *extra = NULL;
  uint64_t sequence = first->sequence, step_count = first->step_count;
  while (lcpsim_subscriber_receive(subscriber, 100, &extra) == LCPSIM_OK) {
    sequence = extra->sequence;
    step_count = extra->step_count;
    lcpsim_state_destroy(&extra);
  }
  assert_true(first->sequence >= 1);
  lcpsim_state_destroy(&first);

  assert_int_equal(lcpsim_client_step(live->client, 6, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  for (int i = 1; i <= 3; ++i) {
    lcpsim_state_t *published = NULL;
    assert_int_equal(lcpsim_subscriber_receive(subscriber, 5000, &published), LCPSIM_OK);
    assert_int_equal(published->sequence, sequence + (uint64_t)i);
    assert_int_equal(published->step_count, step_count + 2 * (uint64_t)i);
    assert_non_null(lcpsim_state_find_robot(published, ARM));
    lcpsim_state_destroy(&published);
  }
  /* every_steps 0 stops the stream. */
  assert_int_equal(lcpsim_client_subscribe(live->client, 0, LCPSIM_WITHOUT_CONTACTS), LCPSIM_OK);
  assert_int_equal(lcpsim_client_step(live->client, 6, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  assert_int_equal(lcpsim_subscriber_receive(subscriber, 300, &extra), LCPSIM_ERR_TIMEOUT);
  lcpsim_subscriber_destroy(&subscriber);
  assert_null(subscriber);
}

/* ---- server errors: the Status code, negated, and the server's message ---- */

static void server_errors_come_back_as_codes_with_the_message(void **state) {
  live_t *live = *state;
  const double one = 1.0;
  lcpsim_target_t nobody = {.robot = "no_such_robot", .position = &one, .n_position = 1};
  assert_int_equal(lcpsim_client_set_target(live->client, &nobody), LCPSIM_ERR_NOT_FOUND);
  assert_non_null(strstr(lcpsim_client_last_error(live->client), "no_such_robot"));

  const char *const wrong_joint[] = {"joint99"};
  lcpsim_target_t no_joint = {
      .robot = ARM, .joints = wrong_joint, .n_joints = 1, .position = &one, .n_position = 1};
  assert_int_equal(lcpsim_client_set_target(live->client, &no_joint), LCPSIM_ERR_NOT_FOUND);
  assert_non_null(strstr(lcpsim_client_last_error(live->client), "joint99"));

  const double not_a_number = NAN;
  lcpsim_target_t nan_target = {.robot = ARM, .position = &not_a_number, .n_position = 1};
  assert_int_equal(lcpsim_client_set_target(live->client, &nan_target),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_true(strlen(lcpsim_client_last_error(live->client)) > 0);

  /* Targets in a Step apply all or none: a bad one refuses the whole call, and nothing steps. */
  lcpsim_state_t *before = get_state(live);
  lcpsim_target_t targets[] = {hold_arm((const double[ARM_JOINTS]){0}), nobody};
  assert_int_equal(lcpsim_client_step(live->client, 5, targets, 2, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_ERR_NOT_FOUND);
  assert_int_equal(lcpsim_client_step(live->client, -1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  lcpsim_state_t *after = get_state(live);
  assert_int_equal(after->step_count, before->step_count);
  lcpsim_state_destroy(&before);
  lcpsim_state_destroy(&after);

  const uint8_t garbage[] = "not a snapshot";
  int code = lcpsim_client_restore_state(live->client, garbage, sizeof garbage, NULL);
  assert_true(code == LCPSIM_ERR_INVALID_ARGUMENT || code == LCPSIM_ERR_FAILED_PRECONDITION);

  lcpsim_body_t massless = {.shape = LCPSIM_SHAPE_SPHERE, .radius = 0.1};
  assert_int_equal(lcpsim_client_spawn(live->client, &massless, NULL, NULL),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  lcpsim_model_t bad_urdf = {.urdf_text = "<robot name='broken'><link name='a'></robot"};
  assert_int_equal(lcpsim_client_load_model(live->client, &bad_urdf, NULL),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  /* After errors, the same client goes on working, and last_error is cleared by a success. */
  assert_int_equal(lcpsim_client_ping(live->client, NULL, 0), LCPSIM_OK);
  assert_string_equal(lcpsim_client_last_error(live->client), "");
}

/* ---- transport ---- */

static void a_silent_endpoint_times_out(void **state) {
  (void)state;
  char endpoint[64];
  int reserved = test_refusing_endpoint(endpoint, sizeof endpoint);
  assert_true(reserved >= 0);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(endpoint, 300, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_client_ping(client, NULL, 0), LCPSIM_ERR_TIMEOUT);
  assert_non_null(strstr(lcpsim_client_last_error(client), "300 ms"));
  lcpsim_info_t *info = NULL;
  assert_int_equal(lcpsim_client_get_info(client, &info), LCPSIM_ERR_TIMEOUT);
  assert_null(info);
  lcpsim_client_destroy(&client);
  assert_null(client);
  close(reserved);
}

static void a_malformed_endpoint_is_refused(void **state) {
  (void)state;
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect("not an endpoint", 100, &client), LCPSIM_ERR_TRANSPORT);
  assert_null(client);
  assert_int_equal(lcpsim_client_connect(NULL, 100, &client), LCPSIM_ERR_USAGE);
  assert_int_equal(lcpsim_client_ping(NULL, NULL, 0), LCPSIM_ERR_USAGE);
  lcpsim_client_destroy(&client); /* a NULL client is fine */
  lcpsim_client_destroy(NULL);
}

/* A fake daemon on a thread of its own: it answers the requests its script says, as it says. */
typedef enum {
  FAKE_ANSWER_LATE,  /* hold the first request; answer it just before the second */
  FAKE_WRONG_CALL,   /* answer a Ping with a GetInfo result */
  FAKE_UNKNOWN_CODE, /* answer with a status code this client does not know */
  FAKE_UNDECODABLE,  /* answer with bytes that are no Reply */
  FAKE_UNDECODED,    /* answer as to a request that could not be decoded: id 0, an error */
} fake_script_t;

typedef struct {
  void *context;
  void *socket;
  char endpoint[64];
  fake_script_t script;
  pthread_t thread;
} fake_daemon_t;

typedef struct {
  zmq_msg_t identity;
  Lcpsim__V1__Request *request;
} fake_request_t;

static bool fake_receive(fake_daemon_t *fake, fake_request_t *received) {
  zmq_msg_init(&received->identity);
  if (zmq_msg_recv(&received->identity, fake->socket, 0) < 0)
    return false;
  zmq_msg_t delimiter, payload;
  zmq_msg_init(&delimiter);
  zmq_msg_init(&payload);
  zmq_msg_recv(&delimiter, fake->socket, 0);
  zmq_msg_recv(&payload, fake->socket, 0);
  received->request =
      lcpsim__v1__request__unpack(NULL, zmq_msg_size(&payload), zmq_msg_data(&payload));
  zmq_msg_close(&delimiter);
  zmq_msg_close(&payload);
  return received->request != NULL;
}

static void fake_send(fake_daemon_t *fake, fake_request_t *to, const void *bytes, size_t size) {
  zmq_msg_send(&to->identity, fake->socket, ZMQ_SNDMORE);
  zmq_send(fake->socket, "", 0, ZMQ_SNDMORE);
  zmq_send(fake->socket, bytes, size, 0);
  lcpsim__v1__request__free_unpacked(to->request, NULL);
  to->request = NULL;
}

/* Answers a Ping as the daemon would (or, with a wrong result, as it never should). */
static void fake_answer(fake_daemon_t *fake, fake_request_t *to, bool wrong_call, int code) {
  Lcpsim__V1__Reply reply = LCPSIM__V1__REPLY__INIT;
  Lcpsim__V1__Status status = LCPSIM__V1__STATUS__INIT;
  Lcpsim__V1__PingReply pong = LCPSIM__V1__PING_REPLY__INIT;
  Lcpsim__V1__GetInfoReply info = LCPSIM__V1__GET_INFO_REPLY__INIT;
  reply.id = to->request->id;
  status.code = (Lcpsim__V1__Status__Code)code;
  status.message = code ? "a code from a newer server" : "";
  reply.status = &status;
  if (code == 0 && wrong_call) {
    reply.result_case = LCPSIM__V1__REPLY__RESULT_GET_INFO;
    reply.get_info = &info;
  } else if (code == 0) {
    pong.payload = to->request->ping->payload;
    pong.server_version = "fake";
    reply.result_case = LCPSIM__V1__REPLY__RESULT_PING;
    reply.ping = &pong;
  }
  uint8_t bytes[512];
  size_t size = lcpsim__v1__reply__pack(&reply, bytes);
  fake_send(fake, to, bytes, size);
}

static void *fake_run(void *argument) {
  fake_daemon_t *fake = argument;
  fake_request_t first = {0}, second = {0};
  if (!fake_receive(fake, &first))
    return NULL;
  switch (fake->script) {
  case FAKE_ANSWER_LATE:
    if (fake_receive(fake, &second)) {
      fake_answer(fake, &first, false, 0);
      fake_answer(fake, &second, false, 0);
    }
    break;
  case FAKE_WRONG_CALL:
    fake_answer(fake, &first, true, 0);
    break;
  case FAKE_UNKNOWN_CODE:
    fake_answer(fake, &first, false, 42);
    break;
  case FAKE_UNDECODABLE:
    fake_send(fake, &first, "\xff\xff\xff", 3);
    break;
  case FAKE_UNDECODED: {
    Lcpsim__V1__Reply reply = LCPSIM__V1__REPLY__INIT;
    Lcpsim__V1__Status status = LCPSIM__V1__STATUS__INIT;
    status.code = LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT;
    status.message = "request: not a Request";
    reply.status = &status;
    uint8_t bytes[128];
    fake_send(fake, &first, bytes, lcpsim__v1__reply__pack(&reply, bytes));
    break;
  }
  }
  zmq_msg_close(&first.identity);
  zmq_msg_close(&second.identity);
  if (first.request)
    lcpsim__v1__request__free_unpacked(first.request, NULL);
  if (second.request)
    lcpsim__v1__request__free_unpacked(second.request, NULL);
  return NULL;
}

static void fake_start(fake_daemon_t *fake, fake_script_t script) {
  fake->script = script;
  fake->context = zmq_ctx_new();
  fake->socket = zmq_socket(fake->context, ZMQ_ROUTER);
  int linger = 0, patience_ms = 10000;
  zmq_setsockopt(fake->socket, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(fake->socket, ZMQ_RCVTIMEO, &patience_ms, sizeof patience_ms);
  assert_int_equal(zmq_bind(fake->socket, "tcp://127.0.0.1:*"), 0);
  size_t size = sizeof fake->endpoint;
  assert_int_equal(zmq_getsockopt(fake->socket, ZMQ_LAST_ENDPOINT, fake->endpoint, &size), 0);
  assert_int_equal(pthread_create(&fake->thread, NULL, fake_run, fake), 0);
}

static void fake_stop(fake_daemon_t *fake) {
  pthread_join(fake->thread, NULL);
  zmq_close(fake->socket);
  zmq_ctx_term(fake->context);
}

static void a_late_reply_is_discarded(void **state) {
  (void)state;
  fake_daemon_t fake;
  fake_start(&fake, FAKE_ANSWER_LATE);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(fake.endpoint, 300, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_client_ping(client, NULL, 0), LCPSIM_ERR_TIMEOUT);
  /* The first ping's reply now arrives first; the second ping must take its own. */
  lcpsim_client_set_timeout(client, 10000);
  char version[16] = "";
  assert_int_equal(lcpsim_client_ping(client, version, sizeof version), LCPSIM_OK);
  assert_string_equal(version, "fake");
  lcpsim_client_destroy(&client);
  fake_stop(&fake);
}

static void a_reply_to_another_call_is_a_protocol_error(void **state) {
  (void)state;
  fake_daemon_t fake;
  fake_start(&fake, FAKE_WRONG_CALL);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(fake.endpoint, 10000, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_client_ping(client, NULL, 0), LCPSIM_ERR_PROTOCOL);
  lcpsim_client_destroy(&client);
  fake_stop(&fake);
}

static void an_unknown_status_code_is_still_an_error(void **state) {
  (void)state;
  fake_daemon_t fake;
  fake_start(&fake, FAKE_UNKNOWN_CODE);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(fake.endpoint, 10000, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_client_ping(client, NULL, 0), -42);
  assert_string_equal(lcpsim_client_last_error(client), "a code from a newer server");
  assert_string_equal(lcpsim_status_name(-42), "UNKNOWN");
  lcpsim_client_destroy(&client);
  fake_stop(&fake);
}

static void an_undecodable_reply_is_a_protocol_error(void **state) {
  (void)state;
  fake_daemon_t fake;
  fake_start(&fake, FAKE_UNDECODABLE);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(fake.endpoint, 10000, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_client_ping(client, NULL, 0), LCPSIM_ERR_PROTOCOL);
  lcpsim_client_destroy(&client);
  fake_stop(&fake);
}

static void an_answer_with_id_0_is_this_requests_error(void **state) {
  (void)state;
  fake_daemon_t fake;
  fake_start(&fake, FAKE_UNDECODED);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(fake.endpoint, 10000, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_client_ping(client, NULL, 0), LCPSIM_ERR_INVALID_ARGUMENT);
  assert_string_equal(lcpsim_client_last_error(client), "request: not a Request");
  lcpsim_client_destroy(&client);
  fake_stop(&fake);
}

/* A started Step of 2*10^7 steps: a Ping is answered while it runs, CancelStep stops it (the Step's
 * reply, which comes first, is kept for step_finish), and both replies report the same steps run,
 * which the world's step count shows. A short started Step finishes with its state. */
static void a_started_step_is_cancelled(void **state) {
  live_t *live = *state;
  lcpsim_client_t *c = live->client;
  const int steps = 20000000;
  uint64_t id = 0;
  assert_int_equal(
      lcpsim_client_step_start(c, steps, NULL, 0, LCPSIM_WITHOUT_CONTACTS, 0, false, &id),
      LCPSIM_OK);
  assert_true(id > 0);
  assert_int_equal(lcpsim_client_step_start(c, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, 0, false, NULL),
                   LCPSIM_ERR_USAGE);
  assert_int_equal(lcpsim_client_ping(c, NULL, 0), LCPSIM_OK);
  lcpsim_cancel_result_t cancel = {0};
  assert_int_equal(lcpsim_client_cancel_step(c, id, &cancel), LCPSIM_OK);
  assert_true(cancel.cancelled);
  assert_int_equal(cancel.step_id, id);
  assert_int_equal(cancel.steps_requested, steps);
  assert_true(cancel.steps_run > 0 && cancel.steps_run < steps);
  lcpsim_step_result_t result = {0};
  assert_int_equal(lcpsim_client_step_finish(c, &result, NULL), LCPSIM_OK);
  assert_true(result.cancelled);
  assert_int_equal(result.steps_run, cancel.steps_run);
  assert_int_equal(result.step_count, (uint64_t)cancel.steps_run);
  const uint64_t count = result.step_count;
  assert_int_equal(lcpsim_client_step_finish(c, &result, NULL), LCPSIM_ERR_USAGE);
  /* Nothing runs now: nothing to cancel. */
  lcpsim_cancel_result_t none = {0};
  assert_int_equal(lcpsim_client_cancel_step(c, 0, &none), LCPSIM_OK);
  assert_false(none.cancelled);

  assert_int_equal(lcpsim_client_step_start(c, 3, NULL, 0, LCPSIM_WITHOUT_CONTACTS, 0, true, NULL),
                   LCPSIM_OK);
  lcpsim_state_t *after = NULL;
  assert_int_equal(lcpsim_client_step_finish(c, &result, &after), LCPSIM_OK);
  assert_false(result.cancelled);
  assert_int_equal(result.steps_run, 3);
  assert_non_null(after);
  assert_int_equal(result.step_count, count + 3);
  assert_int_equal(after->step_count, count + 3);
  lcpsim_state_destroy(&after);
}

/* A daemon bound to the IPv6 loopback serves the client and the stream there: both sockets of
 * the client take tcp://[::1]:PORT endpoints (ZMQ_IPV6), as a pool does for the AAAA records of
 * a dual-stack Service. Where the host has no IPv6 loopback the daemon cannot bind it and the
 * test has nothing to check. */
static void an_ipv6_endpoint_serves_requests_and_states(void **state) {
  (void)state;
  int probe = socket(AF_INET6, SOCK_STREAM, 0);
  struct sockaddr_in6 loopback = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
  bool has_ipv6 = probe >= 0 && bind(probe, (struct sockaddr *)&loopback, sizeof loopback) == 0;
  if (probe >= 0)
    close(probe);
  if (!has_ipv6)
    skip();
  test_daemon_t daemon;
  assert_int_equal(test_daemon_start_args(
                       daemon_path,
                       (const char *[]){"--bind", "tcp://[::1]:0", "--pub", "tcp://[::1]:0", NULL},
                       &daemon),
                   0);
  assert_non_null(strstr(daemon.rep, "tcp://[::1]:"));
  lcpsim_client_t *client = NULL;
  lcpsim_subscriber_t *subscriber = NULL;
  assert_int_equal(lcpsim_client_connect(daemon.rep, 20000, &client), LCPSIM_OK);
  assert_int_equal(lcpsim_subscriber_new(daemon.pub, &subscriber), LCPSIM_OK);
  assert_int_equal(lcpsim_client_subscribe(client, 1, LCPSIM_WITHOUT_CONTACTS), LCPSIM_OK);
  lcpsim_state_t *published = NULL;
  for (int attempt = 0; attempt < 200 && !published; ++attempt) {
    assert_int_equal(lcpsim_client_step(client, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                     LCPSIM_OK);
    int code = lcpsim_subscriber_receive(subscriber, 50, &published);
    assert_true(code == LCPSIM_OK || code == LCPSIM_ERR_TIMEOUT);
  }
  assert_non_null(published);
  assert_true(published->step_count >= 1);
  assert_non_null(lcpsim_state_find_robot(published, ARM));
  lcpsim_state_destroy(&published);
  lcpsim_subscriber_destroy(&subscriber);
  lcpsim_client_destroy(&client);
  assert_int_equal(test_daemon_stop(&daemon), 0);
}

/* GetScene describes the built-in world; Record starts and stops a recording below --record-dir,
 * whose file then holds what the reply counted. */
static void get_scene_and_record(void **state) {
  (void)state;
  char dir[] = "/tmp/lcpsim_c_record_XXXXXX";
  assert_non_null(mkdtemp(dir));
  test_daemon_t daemon;
  assert_int_equal(
      test_daemon_start_args(daemon_path, (const char *[]){"--record-dir", dir, NULL}, &daemon), 0);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect(daemon.rep, 20000, &client), LCPSIM_OK);
  lcpsim_scene_t *scene = NULL;
  assert_int_equal(lcpsim_client_get_scene(client, &scene), LCPSIM_OK);
  assert_int_equal(scene->scene->n_world_geoms, 1);
  assert_int_equal(scene->scene->world_geoms[0]->type, LCPSIM__V1__GEOM__TYPE__PLANE);
  assert_int_equal(scene->scene->n_robots, 1);
  assert_int_equal(scene->scene->robots[0]->n_links, 8);
  assert_int_equal(scene->scene->n_bodies, 2);
  assert_string_equal(scene->info->robots[0]->name, ARM);
  lcpsim_scene_destroy(&scene);
  assert_null(scene);
  lcpsim_record_result_t result;
  assert_int_equal(lcpsim_client_record_start(client, "c.lcprec", 1, false, &result), LCPSIM_OK);
  assert_true(result.recording);
  assert_int_equal(lcpsim_client_step(client, 4, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  assert_int_equal(lcpsim_client_record_stop(client, &result), LCPSIM_OK);
  assert_false(result.recording);
  assert_int_equal(result.states_written, 5);
  FILE *file = fopen(result.path, "rb");
  assert_non_null(file);
  fseek(file, 0, SEEK_END);
  assert_int_equal((uint64_t)ftell(file), result.bytes_written);
  fclose(file);
  /* The file exists now: refused, with the daemon's message. */
  assert_int_equal(lcpsim_client_record_start(client, "c.lcprec", 1, false, NULL),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcpsim_client_last_error(client), "exists"));
  unlink(result.path);
  rmdir(dir);
  lcpsim_client_destroy(&client);
  assert_int_equal(test_daemon_stop(&daemon), 0);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH_TO_LCPSIMD\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
#define LIVE(test) cmocka_unit_test_setup_teardown(test, start_live, stop_live)
  const struct CMUnitTest tests[] = {
      LIVE(ping_answers_with_the_version),
      LIVE(get_info_describes_the_arm_as_its_urdf_says),
      LIVE(step_advances_time_and_count),
      LIVE(step_targets_drive_the_arm_to_a_pose),
      LIVE(set_target_by_name_and_by_index),
      LIVE(torque_mode_accelerates_the_base_joint),
      LIVE(get_state_reports_contacts_only_when_asked),
      LIVE(load_model_from_text_and_from_path),
      LIVE(spawn_falls_freely_and_remove_takes_it_away),
      LIVE(reset_goes_back_to_the_start),
      LIVE(save_and_restore_bytes_replays_bitwise),
      LIVE(save_and_restore_by_slot),
      LIVE(set_settings_changes_only_what_is_given),
      LIVE(realtime_mode_steps_without_step_calls),
      LIVE(subscribe_streams_every_kth_state),
      LIVE(server_errors_come_back_as_codes_with_the_message),
      LIVE(a_started_step_is_cancelled),
      cmocka_unit_test(get_scene_and_record),
      cmocka_unit_test(an_ipv6_endpoint_serves_requests_and_states),
      cmocka_unit_test(a_silent_endpoint_times_out),
      cmocka_unit_test(a_malformed_endpoint_is_refused),
      cmocka_unit_test(a_late_reply_is_discarded),
      cmocka_unit_test(a_reply_to_another_call_is_a_protocol_error),
      cmocka_unit_test(an_unknown_status_code_is_still_an_error),
      cmocka_unit_test(an_undecodable_reply_is_a_protocol_error),
      cmocka_unit_test(an_answer_with_id_0_is_this_requests_error),
  };
#undef LIVE
  return cmocka_run_group_tests(tests, NULL, NULL);
}
