/* SPDX-License-Identifier: Apache-2.0 */
/* Run-time edits (dynamics_edit.c): a pendulum's period follows an edit of
 * its link's mass, inertia and centre of mass as the compound-pendulum
 * formula says; refused edits change nothing; setting a state drops the warm
 * starts and gives bitwise the steps that restoring a snapshot taken at that
 * state gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "scenes.h"
#include "test_util.h"
#include "world_internal.h" /* the robot's momentum */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pendulum ---- */

/* A fixed base and one rod hanging along −z from a joint about y
 * (continuous): mass m, centre of mass d below the pivot, inertia Icm about
 * the centre of mass. */
static lcp_robot_id add_pendulum(lcp_world_t *w, double mass, double d, double Icm) {
  lcp_robot_def_t *def = NULL;
  assert_int_equal(lcp_robot_def_alloc(2, 1, &def), LCP_OK);
  strcpy(def->name, "pendulum");
  strcpy(def->links[0].name, "base");
  lcp_link_def_t *rod = &def->links[1];
  strcpy(rod->name, "rod");
  strcpy(rod->joint_name, "pivot");
  rod->parent = 0;
  rod->joint_type = LCP_JOINT_CONTINUOUS;
  rod->axis[0] = rod->axis[2] = 0.0;
  rod->axis[1] = 1.0;
  rod->mass = mass;
  rod->com[2] = -d;
  memset(rod->inertia, 0, sizeof rod->inertia);
  rod->inertia[0] = rod->inertia[4] = Icm;
  rod->inertia[8] = 1e-3;
  /* A small sphere at the tip, so the rod has a material to edit. */
  def->geoms[0] = test_sphere_def(0.05, 0.5);
  def->geoms[0].local_position[2] = -2.0 * d;
  rod->first_geom = 0;
  rod->geom_count = 1;
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
  lcp_robot_def_free(&def);
  return id;
}

/* The small-swing period from three upward zero crossings of q after a
 * release at q0 from rest (interpolated within a step). */
static double measured_period(lcp_world_t *w, lcp_robot_id id, double h, double q0) {
  const double qd0 = 0.0;
  assert_int_equal(lcp_robot_set_state(w, id, &q0, 1, &qd0, 1), LCP_OK);
  double crossings[4];
  int found = 0;
  double q_prev = q0;
  for (int step = 1; step <= 40000 && found < 4; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double q;
    assert_int_equal(lcp_robot_get_q(w, id, &q, 1), LCP_OK);
    if (q_prev < 0.0 && q >= 0.0)
      crossings[found++] = h * (step - 1 + q_prev / (q_prev - q));
    q_prev = q;
  }
  assert_int_equal(found, 4);
  return (crossings[3] - crossings[0]) / 3.0;
}

/* Compound pendulum: T = 2π √(I_pivot / (m g d)), I_pivot = Icm + m d².
 * From 3° at h = 1 ms the measured period is within 0.2 % of it (the
 * amplitude's own correction, θ0²/16, is 4e-5). */
static double compound_period(double mass, double d, double Icm) {
  return 2.0 * TEST_PI * sqrt((Icm + mass * d * d) / (mass * 9.81 * d));
}

static void test_pendulum_period_follows_mass_edit(void **state) {
  (void)state;
  const double h = 1e-3, q0 = 3.0 * TEST_PI / 180.0;
  lcp_world_t *w = test_new_world(h, true);
  lcp_robot_id id = add_pendulum(w, 1.0, 0.5, 0.1);
  double before = measured_period(w, id, h, q0);
  double expected_before = compound_period(1.0, 0.5, 0.1);
  assert_true(fabs(before / expected_before - 1.0) < 0.002);

  /* Heavier, with its mass lower and a smaller inertia about it. */
  lcp_dynamics_edit_t edit = {.target = LCP_EDIT_LINK,
                              .robot = id,
                              .index = 1,
                              .fields = LCP_EDIT_MASS | LCP_EDIT_INERTIA | LCP_EDIT_COM,
                              .mass = 4.0,
                              .inertia = {0.02, 0, 0, 0, 0.02, 0, 0, 0, 1e-3},
                              .com = {0.0, 0.0, -0.2}};
  assert_int_equal(lcp_world_edit_dynamics(w, &edit, 1, NULL), LCP_OK);
  double mass, com[3], inertia[9];
  assert_int_equal(lcp_robot_get_link_mass(w, id, 1, &mass, com, inertia), LCP_OK);
  assert_true(mass == 4.0 && com[2] == -0.2 && inertia[4] == 0.02);
  double after = measured_period(w, id, h, q0);
  double expected_after = compound_period(4.0, 0.2, 0.02);
  print_message("period %.6f s -> %.6f s; formula %.6f s -> %.6f s\n", before, after,
                expected_before, expected_after);
  assert_true(fabs(after / expected_after - 1.0) < 0.002);
  /* The edit moved the period by far more than the tolerance. */
  assert_true(fabs(after / before - 1.0) > 0.1);

  /* A mass edit alone with the inertia scaled with it (a point mass:
   * Icm = 0) leaves the period as it was: T depends on I/m only. */
  edit.mass = 2.0;
  edit.fields = LCP_EDIT_MASS | LCP_EDIT_INERTIA;
  const double point_like[9] = {1e-9, 0, 0, 0, 1e-9, 0, 0, 0, 1e-9};
  memcpy(edit.inertia, point_like, sizeof point_like);
  assert_int_equal(lcp_world_edit_dynamics(w, &edit, 1, NULL), LCP_OK);
  double light = measured_period(w, id, h, q0);
  edit.mass = 8.0;
  edit.fields = LCP_EDIT_MASS;
  assert_int_equal(lcp_world_edit_dynamics(w, &edit, 1, NULL), LCP_OK);
  double heavy = measured_period(w, id, h, q0);
  assert_true(fabs(heavy / light - 1.0) < 1e-3);
  assert_true(fabs(light / compound_period(2.0, 0.2, 1e-9) - 1.0) < 0.002);
  lcp_world_destroy(&w);
}

/* ---- refused edits ---- */

typedef struct bad_edit {
  lcp_dynamics_edit_t edit;
  int code;
  const char *says; /* a part of the error message */
} bad_edit;

/* Every bad edit, put second after a good one, is refused with its reason,
 * names its index, and leaves the world's dynamics as they were: the same
 * steps from the same state give bitwise the same state. */
static void test_bad_edits_change_nothing(void **state) {
  (void)state;
  const double h = 1e-3;
  lcp_world_t *w = test_new_world(h, true);
  assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
  lcp_robot_id pendulum = add_pendulum(w, 1.0, 0.5, 0.1);
  const double box_at[3] = {2.0, 0.0, 0.3};
  lcp_geom_def_t box_geom = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id box = test_add_solid(w, &box_geom, 1.0, box_at, NULL);
  assert_true(box != LCP_NULL_ID);
  const double other_at[3] = {-2.0, 0.0, 0.3};
  lcp_body_id other = test_add_solid(w, &box_geom, 1.0, other_at, NULL);
  const double q0 = 0.3;
  assert_int_equal(lcp_robot_set_state(w, pendulum, &q0, 1, NULL, 0), LCP_OK);
  test_step_n(w, 10);

  size_t size = lcp_world_state_size(w);
  void *snapshot = test_alloc(size, 1);
  assert_int_equal(lcp_world_save_state(w, snapshot, size, &size), LCP_OK);
  test_step_n(w, 200);
  const uint64_t reference = lcp_world_state_hash(w);

  const lcp_dynamics_edit_t good = {
      .target = LCP_EDIT_BODY, .body = other, .fields = LCP_EDIT_MASS, .mass = 3.0};
  const bad_edit bad[] = {
      {{.target = LCP_EDIT_LINK,
        .robot = pendulum,
        .index = 1,
        .fields = LCP_EDIT_INERTIA,
        .inertia = {1, 2, 0, 2, 1, 0, 0, 0, 1}},
       LCP_ERR_INVALID_ARGUMENT,
       "not symmetric positive definite"},
      {{.target = LCP_EDIT_LINK,
        .robot = pendulum,
        .index = 1,
        .fields = LCP_EDIT_INERTIA,
        .inertia = {1, 0.5, 0, 0, 1, 0, 0, 0, 1}},
       LCP_ERR_INVALID_ARGUMENT,
       "not symmetric"},
      {{.target = LCP_EDIT_BODY, .body = box, .fields = LCP_EDIT_MASS, .mass = -1.0},
       LCP_ERR_INVALID_ARGUMENT,
       "mass must be > 0"},
      {{.target = LCP_EDIT_BODY, .body = box, .fields = LCP_EDIT_FRICTION, .friction = -0.1},
       LCP_ERR_INVALID_ARGUMENT,
       "friction must be >= 0"},
      {{.target = LCP_EDIT_BODY, .body = box, .fields = LCP_EDIT_RESTITUTION, .restitution = 1.5},
       LCP_ERR_INVALID_ARGUMENT,
       "restitution must be in [0, 1]"},
      {{.target = LCP_EDIT_BODY, .body = box, .fields = LCP_EDIT_COM},
       LCP_ERR_INVALID_ARGUMENT,
       "its origin is its centre of mass"},
      {{.target = LCP_EDIT_BODY, .body = LCP_WORLD_BODY, .fields = LCP_EDIT_MASS, .mass = 1.0},
       LCP_ERR_INVALID_ARGUMENT,
       "is static"},
      {{.target = LCP_EDIT_BODY, .body = 12345, .fields = LCP_EDIT_MASS, .mass = 1.0},
       LCP_ERR_NOT_FOUND,
       "no body"},
      {{.target = LCP_EDIT_LINK,
        .robot = pendulum,
        .index = 7,
        .fields = LCP_EDIT_MASS,
        .mass = 1.0},
       LCP_ERR_NOT_FOUND,
       "has no link 7"},
      {{.target = LCP_EDIT_JOINT,
        .robot = pendulum,
        .index = 0,
        .fields = LCP_EDIT_LIMITS,
        .lower = -1.0,
        .upper = 1.0},
       LCP_ERR_INVALID_ARGUMENT,
       "continuous"},
      {{.target = LCP_EDIT_JOINT,
        .robot = pendulum,
        .index = 0,
        .fields = LCP_EDIT_DAMPING,
        .damping = -2.0},
       LCP_ERR_INVALID_ARGUMENT,
       "damping must be >= 0"},
      {{.target = LCP_EDIT_JOINT,
        .robot = pendulum,
        .index = 0,
        .fields = LCP_EDIT_DAMPING,
        .damping = NAN},
       LCP_ERR_INVALID_ARGUMENT,
       "damping must be >= 0"},
      {{.target = LCP_EDIT_JOINT,
        .robot = pendulum,
        .index = 0,
        .fields = LCP_EDIT_MASS,
        .mass = 1.0},
       LCP_ERR_INVALID_ARGUMENT,
       "belong to its link"},
      {good, LCP_ERR_INVALID_ARGUMENT, "same object as edit 0"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    assert_int_equal(lcp_world_restore_state(w, snapshot, size), LCP_OK);
    const lcp_dynamics_edit_t edits[2] = {good, bad[k].edit};
    int32_t failed = -2;
    assert_int_equal(lcp_world_edit_dynamics(w, edits, 2, &failed), bad[k].code);
    assert_int_equal(failed, 1);
    const char *why = lcp_world_last_error(w);
    if (!strstr(why, bad[k].says) || !strstr(why, "edit 1"))
      fail_msg("bad edit %zu: '%s' does not say '%s'", k, why, bad[k].says);
    test_step_n(w, 200);
    if (lcp_world_state_hash(w) != reference)
      fail_msg("bad edit %zu ('%s') changed the world", k, why);
  }
  /* The good edit alone does change the steps (the check above can fail). */
  assert_int_equal(lcp_world_restore_state(w, snapshot, size), LCP_OK);
  assert_int_equal(lcp_world_edit_dynamics(w, &good, 1, NULL), LCP_OK);
  test_step_n(w, 200);
  assert_true(lcp_world_state_hash(w) != reference);
  free(snapshot);
  lcp_world_destroy(&w);
}

/* Materials and joint dynamics edits read back and act. */
static void test_material_and_joint_edits(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, true);
  lcp_robot_id pendulum = add_pendulum(w, 1.0, 0.5, 0.1);
  const lcp_dynamics_edit_t edits[2] = {
      {.target = LCP_EDIT_LINK,
       .robot = pendulum,
       .index = 1,
       .fields = LCP_EDIT_FRICTION | LCP_EDIT_RESTITUTION,
       .friction = 0.9,
       .restitution = 0.4},
      {.target = LCP_EDIT_JOINT,
       .robot = pendulum,
       .index = 0,
       .fields = LCP_EDIT_DAMPING | LCP_EDIT_JOINT_FRICTION | LCP_EDIT_EFFORT_LIMIT |
                 LCP_EDIT_VELOCITY_LIMIT,
       .damping = 2.0,
       .joint_friction = 0.1,
       .effort_limit = 5.0,
       .velocity_limit = 3.0},
  };
  assert_int_equal(lcp_world_edit_dynamics(w, edits, 2, NULL), LCP_OK);
  double mu, e;
  assert_int_equal(lcp_robot_get_link_material(w, pendulum, 1, &mu, &e), LCP_OK);
  assert_true(mu == 0.9 && e == 0.4);
  lcp_joint_info_t joint;
  assert_int_equal(lcp_robot_get_joint(w, pendulum, 0, &joint), LCP_OK);
  assert_true(joint.damping == 2.0 && joint.friction == 0.1 && joint.effort_limit == 5.0 &&
              joint.velocity_limit == 3.0);
  /* Damping acts: released at 0.3 rad, a damped swing has lost most of its
   * amplitude after 3 s (undamped it keeps it). */
  const double q0 = 0.3, qd0 = 0.0;
  assert_int_equal(lcp_robot_set_state(w, pendulum, &q0, 1, &qd0, 1), LCP_OK);
  double peak = 0.0;
  for (int i = 0; i < 3000; ++i) {
    test_step_n(w, 1);
    double q;
    lcp_robot_get_q(w, pendulum, &q, 1);
    if (i > 2000)
      peak = fmax(peak, fabs(q));
  }
  assert_true(peak < 0.1);
  lcp_world_destroy(&w);
}

/* ---- copying dynamics ---- */

/* The pendulum and a free box, built the same way each time (with_box
 * false: another layout). */
static lcp_world_t *pendulum_and_box(bool with_box, lcp_body_id *box) {
  lcp_world_t *w = test_new_world(1e-3, true);
  add_pendulum(w, 1.0, 0.5, 0.1);
  if (with_box) {
    lcp_geom_def_t geom = test_box_def(0.1, 0.1, 0.1, 0.5);
    *box = test_add_solid(w, &geom, 1.0, (double[]){2.0, 0.0, 0.0}, NULL);
  }
  return w;
}

static void *saved_state(const lcp_world_t *w, size_t *size) {
  *size = lcp_world_state_size(w);
  void *snapshot = malloc(*size);
  assert_non_null(snapshot);
  assert_int_equal(lcp_world_save_state(w, snapshot, *size, NULL), LCP_OK);
  return snapshot;
}

/* A world given an edited world's dynamics steps as that world does,
 * bitwise, from the same state, and reads back the same values; a world of
 * another layout is refused unchanged; snapshots restore across mass edits
 * (masses are not part of a snapshot's layout). */
static void test_copy_dynamics(void **state) {
  (void)state;
  lcp_body_id box = LCP_NULL_ID, box_b = LCP_NULL_ID, box_d = LCP_NULL_ID;
  lcp_world_t *a = pendulum_and_box(true, &box), *b = pendulum_and_box(true, &box_b);
  lcp_world_t *c = pendulum_and_box(false, NULL), *d = pendulum_and_box(true, &box_d);
  lcp_robot_id pendulum;
  assert_int_equal(lcp_robot_find(a, "pendulum", &pendulum), LCP_OK);
  size_t size;
  void *before = saved_state(a, &size);
  const lcp_dynamics_edit_t edits[3] = {
      {.target = LCP_EDIT_LINK,
       .robot = pendulum,
       .index = 1,
       .fields = LCP_EDIT_MASS | LCP_EDIT_COM | LCP_EDIT_FRICTION,
       .mass = 2.0,
       .com = {0.0, 0.0, -0.4},
       .friction = 0.9},
      {.target = LCP_EDIT_JOINT,
       .robot = pendulum,
       .index = 0,
       .fields = LCP_EDIT_DAMPING | LCP_EDIT_JOINT_FRICTION,
       .damping = 0.7,
       .joint_friction = 0.05},
      {.target = LCP_EDIT_BODY,
       .body = box,
       .fields = LCP_EDIT_MASS | LCP_EDIT_INERTIA | LCP_EDIT_RESTITUTION,
       .mass = 3.0,
       .inertia = {0.02, 0, 0, 0, 0.03, 0, 0, 0, 0.04},
       .restitution = 0.3},
  };
  assert_int_equal(lcp_world_edit_dynamics(a, edits, 3, NULL), LCP_OK);
  assert_int_equal(lcp_world_restore_state(a, before, size), LCP_OK);
  const double q0 = 0.3, qd0 = 0.0;
  assert_int_equal(lcp_robot_set_state(a, pendulum, &q0, 1, &qd0, 1), LCP_OK);
  void *start = saved_state(a, &size);

  uint64_t c_before = lcp_world_state_hash(c);
  assert_int_equal(lcp_world_copy_dynamics(c, a), LCP_ERR_MISMATCH);
  assert_true(lcp_world_state_hash(c) == c_before);
  assert_int_equal(lcp_world_copy_dynamics(b, a), LCP_OK);
  assert_int_equal(lcp_world_restore_state(b, start, size), LCP_OK);
  assert_int_equal(lcp_world_restore_state(d, start, size), LCP_OK);

  double mass_a, mass_b, inertia_a[9], inertia_b[9], com_a[3], com_b[3], mu_a, mu_b, e_a, e_b;
  assert_int_equal(lcp_body_get_mass(a, box, &mass_a, inertia_a), LCP_OK);
  assert_int_equal(lcp_body_get_mass(b, box_b, &mass_b, inertia_b), LCP_OK);
  assert_true(mass_b == 3.0 && mass_a == mass_b &&
              memcmp(inertia_a, inertia_b, sizeof inertia_a) == 0);
  assert_int_equal(lcp_body_get_material(b, box_b, &mu_b, &e_b), LCP_OK);
  assert_true(e_b == 0.3);
  assert_int_equal(lcp_robot_get_link_mass(a, pendulum, 1, &mass_a, com_a, inertia_a), LCP_OK);
  assert_int_equal(lcp_robot_get_link_mass(b, pendulum, 1, &mass_b, com_b, inertia_b), LCP_OK);
  assert_true(mass_b == 2.0 && com_b[2] == -0.4);
  assert_true(memcmp(inertia_a, inertia_b, sizeof inertia_a) == 0);
  assert_int_equal(lcp_robot_get_link_material(a, pendulum, 1, &mu_a, &e_a), LCP_OK);
  assert_int_equal(lcp_robot_get_link_material(b, pendulum, 1, &mu_b, &e_b), LCP_OK);
  assert_true(mu_b == 0.9 && mu_a == mu_b && e_a == e_b);
  lcp_joint_info_t joint_a, joint_b;
  assert_int_equal(lcp_robot_get_joint(a, pendulum, 0, &joint_a), LCP_OK);
  assert_int_equal(lcp_robot_get_joint(b, pendulum, 0, &joint_b), LCP_OK);
  assert_true(joint_b.damping == 0.7 && joint_b.friction == 0.05);
  assert_true(joint_a.has_limits == joint_b.has_limits && joint_a.lower == joint_b.lower &&
              joint_a.upper == joint_b.upper && joint_a.effort_limit == joint_b.effort_limit &&
              joint_a.velocity_limit == joint_b.velocity_limit);

  /* Bitwise the same steps; the unedited world from the same state departs. */
  test_step_n(a, 1000);
  test_step_n(b, 1000);
  test_step_n(d, 1000);
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  assert_true(lcp_world_state_hash(a) != lcp_world_state_hash(d));
  free(before);
  free(start);
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
  lcp_world_destroy(&c);
  lcp_world_destroy(&d);
}

/* ---- state edits ---- */

/* A box resting on the ground: setting its own state again drops its warm
 * starts, and the steps after it are bitwise those after restoring a
 * snapshot taken right after the set, wherever the world was before. */
static void test_body_set_state_like_restore(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1.0 / 240.0, true);
  assert_int_equal(test_add_plane(w, 0.6, NULL), LCP_OK);
  lcp_geom_def_t geom = test_box_def(0.2, 0.2, 0.2, 0.6);
  const double at[3] = {0.0, 0.0, 0.25};
  lcp_body_id box = test_add_solid(w, &geom, 2.0, at, NULL);
  test_step_n(w, 120);
  double p[3], q[4], v[3], om[3];
  lcp_body_get_pose(w, box, p, q);
  lcp_body_get_velocity(w, box, v, om);
  /* Resting: the next step warm-starts its contacts. */
  lcp_step_stats_t stats;
  size_t size = lcp_world_state_size(w);
  void *before = test_alloc(size, 1);
  assert_int_equal(lcp_world_save_state(w, before, size, &size), LCP_OK);
  test_step_n(w, 1);
  lcp_world_get_stats(w, &stats);
  assert_true(stats.warm_started > 0);
  assert_int_equal(lcp_world_restore_state(w, before, size), LCP_OK);

  /* Refused: the state is untouched (the bytes of its hash). */
  const uint64_t hash = lcp_world_state_hash(w);
  const double zero_quat[4] = {0, 0, 0, 0}, nan3[3] = {NAN, 0, 0};
  assert_int_equal(lcp_body_set_state(w, box, p, zero_quat, v, om), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_set_state(w, box, nan3, q, v, om), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_set_state(w, LCP_WORLD_BODY, p, q, NULL, NULL),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_set_state(w, 999, p, q, v, om), LCP_ERR_NOT_FOUND);
  /* Beyond the bounds every step checks: the steps after it would all fail. */
  const double far[3] = {2e6, 0.0, 0.25}, fast[3] = {0.0, 2e6, 0.0}, spin[3] = {0.0, 0.0, 2e10};
  assert_int_equal(lcp_body_set_state(w, box, far, q, v, om), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "beyond the bound"));
  assert_int_equal(lcp_body_set_state(w, box, p, q, fast, om), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_set_state(w, box, p, q, v, spin), LCP_ERR_INVALID_ARGUMENT);
  assert_true(lcp_world_state_hash(w) == hash);

  assert_int_equal(lcp_body_set_state(w, box, p, q, v, om), LCP_OK);
  void *at_set = test_alloc(size, 1);
  assert_int_equal(lcp_world_save_state(w, at_set, size, &size), LCP_OK);
  test_step_n(w, 1);
  lcp_world_get_stats(w, &stats);
  assert_int_equal(stats.warm_started, 0);
  test_step_n(w, 59);
  double pa[3], qa[4], va[3], oa[3];
  lcp_body_get_pose(w, box, pa, qa);
  lcp_body_get_velocity(w, box, va, oa);

  /* Elsewhere: knocked about for a while, then set to the same state. */
  const double kick[3] = {30.0, 0.0, 50.0};
  lcp_body_apply_force_at_center(w, box, kick);
  test_step_n(w, 90);
  assert_int_equal(lcp_body_set_state(w, box, p, q, v, om), LCP_OK);
  test_step_n(w, 60);
  double pc[3], qc[4], vc[3], oc[3];
  lcp_body_get_pose(w, box, pc, qc);
  lcp_body_get_velocity(w, box, vc, oc);
  assert_memory_equal(pa, pc, sizeof pa);
  assert_memory_equal(qa, qc, sizeof qa);
  assert_memory_equal(va, vc, sizeof va);
  assert_memory_equal(oa, oc, sizeof oa);
  /* And restoring the snapshot taken at the set gives the same. */
  assert_int_equal(lcp_world_restore_state(w, at_set, size), LCP_OK);
  test_step_n(w, 60);
  lcp_body_get_pose(w, box, pc, qc);
  assert_memory_equal(pa, pc, sizeof pa);
  assert_memory_equal(qa, qc, sizeof qa);
  free(before);
  free(at_set);
  lcp_world_destroy(&w);
}

/* The quadruped standing under PD: SetRobotState from a disturbed state
 * gives bitwise the steps of restoring the snapshot taken at the set. */
static void test_robot_set_state_like_restore(void **state) {
  (void)state;
  lcp_world_settings_t s = lcp_scene_robot_settings();
  lcp_world_t *w = test_create_world(&s);
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_quadruped(w, 200.0, 5.0, 0.0, &scene), LCP_OK);
  test_step_n(w, 300);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, scene.robot, &info), LCP_OK);
  double q[64], qd[64];
  lcp_robot_get_q(w, scene.robot, q, info.nq);
  lcp_robot_get_qd(w, scene.robot, qd, info.nv);

  /* Refused: wrong lengths, a zero base quaternion, NaN. Nothing changes. */
  const uint64_t hash = lcp_world_state_hash(w);
  assert_int_equal(lcp_robot_set_state(w, scene.robot, q, info.nq - 1, qd, info.nv),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_robot_set_state(w, scene.robot, q, info.nq, qd, info.nv + 1),
                   LCP_ERR_INVALID_ARGUMENT);
  double bad[64];
  memcpy(bad, q, sizeof bad);
  bad[3] = bad[4] = bad[5] = bad[6] = 0.0;
  assert_int_equal(lcp_robot_set_state(w, scene.robot, bad, info.nq, qd, info.nv),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "base quaternion"));
  memcpy(bad, qd, sizeof bad);
  bad[info.nv - 1] = NAN;
  assert_int_equal(lcp_robot_set_state(w, scene.robot, q, info.nq, bad, info.nv),
                   LCP_ERR_INVALID_ARGUMENT);
  /* A base thrown faster than the bound every step checks, and a joint spun
   * beyond it, are refused: the steps after them would all fail. */
  bad[info.nv - 1] = qd[info.nv - 1];
  bad[0] = 2e6;
  assert_int_equal(lcp_robot_set_state(w, scene.robot, NULL, 0, bad, info.nv),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "base's speed"));
  bad[0] = qd[0];
  bad[info.nv - 1] = 2e10;
  assert_int_equal(lcp_robot_set_state(w, scene.robot, NULL, 0, bad, info.nv),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_true(lcp_world_state_hash(w) == hash);

  assert_int_equal(lcp_robot_set_state(w, scene.robot, q, info.nq, qd, info.nv), LCP_OK);
  size_t size = lcp_world_state_size(w);
  void *at_set = test_alloc(size, 1);
  assert_int_equal(lcp_world_save_state(w, at_set, size, &size), LCP_OK);
  test_step_n(w, 200);
  double qa[64], qda[64];
  lcp_robot_get_q(w, scene.robot, qa, info.nq);
  lcp_robot_get_qd(w, scene.robot, qda, info.nv);

  /* Pushed sideways for a while, then set back. */
  for (int i = 0; i < 150; ++i) {
    const double push[3] = {0.0, 40.0, 0.0};
    double base[3], orientation[4];
    lcp_robot_get_link_pose(w, scene.robot, 0, base, orientation);
    lcp_robot_apply_link_force(w, scene.robot, 0, push, base);
    test_step_n(w, 1);
  }
  assert_int_equal(lcp_robot_set_state(w, scene.robot, q, info.nq, qd, info.nv), LCP_OK);
  test_step_n(w, 200);
  double qc[64], qdc[64];
  lcp_robot_get_q(w, scene.robot, qc, info.nq);
  lcp_robot_get_qd(w, scene.robot, qdc, info.nv);
  assert_memory_equal(qa, qc, (size_t)info.nq * sizeof(double));
  assert_memory_equal(qda, qdc, (size_t)info.nv * sizeof(double));

  assert_int_equal(lcp_world_restore_state(w, at_set, size), LCP_OK);
  test_step_n(w, 200);
  lcp_robot_get_q(w, scene.robot, qc, info.nq);
  assert_memory_equal(qa, qc, (size_t)info.nq * sizeof(double));
  free(at_set);
  lcp_world_destroy(&w);
}

/* ---- wrenches ---- */

static vec3 robot_linear_momentum(lcp_world_t *w, lcp_robot_id id) {
  lcp__world_ensure_robot_kinematics(w);
  int32_t slot = id_pool_slot(&w->model.robot_ids, id);
  vec3 linear, angular;
  lcp__mb_momentum(&w->model.robots[slot].mb, &w->robot_data[slot], &linear, &angular);
  return linear;
}

/* The quadruped in the air with gravity off, its joints held by PD: a
 * 0.1 s push on its base (a force off the centre of mass, plus a torque)
 * changes its total linear momentum by the impulse, to 1e-9 relative (the
 * internal PD forces cancel; the requirement is 1 %). */
static void test_quadruped_push_momentum_in_the_air(void **state) {
  (void)state;
  lcp_world_settings_t s = lcp_scene_robot_settings();
  lcp_world_t *w = test_create_world(&s);
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_quadruped(w, 300.0, 10.0, 1.0, &scene), LCP_OK);
  s.gravity[2] = 0.0;
  assert_int_equal(lcp_world_set_settings(w, &s), LCP_OK);
  const vec3 before = robot_linear_momentum(w, scene.robot);
  const double force[3] = {0.0, 60.0, 10.0}, torque[3] = {1.0, 0.0, 2.0};
  const int steps = (int)lround(0.1 / s.timestep);
  for (int i = 0; i < steps; ++i) {
    double p[3], q[4], point[3];
    lcp_robot_get_link_pose(w, scene.robot, 0, p, q);
    const double offset[3] = {0.1, -0.05, 0.02};
    lcp_quat_rotate(q, offset, point);
    for (int k = 0; k < 3; ++k)
      point[k] += p[k];
    assert_int_equal(lcp_robot_apply_link_wrench(w, scene.robot, 0, force, point, torque), LCP_OK);
    test_step_n(w, 1);
  }
  test_step_n(w, 50); /* free flight: the momentum stays */
  const vec3 after = robot_linear_momentum(w, scene.robot);
  const double impulse[3] = {force[0] * steps * s.timestep, force[1] * steps * s.timestep,
                             force[2] * steps * s.timestep};
  const double change[3] = {after.x - before.x, after.y - before.y, after.z - before.z};
  for (int k = 0; k < 3; ++k)
    ASSERT_NEAR(change[k], impulse[k], 1e-9 * 6.0 + 1e-9);
  lcp_world_destroy(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pendulum_period_follows_mass_edit),
      cmocka_unit_test(test_bad_edits_change_nothing),
      cmocka_unit_test(test_material_and_joint_edits),
      cmocka_unit_test(test_copy_dynamics),
      cmocka_unit_test(test_body_set_state_like_restore),
      cmocka_unit_test(test_robot_set_state_like_restore),
      cmocka_unit_test(test_quadruped_push_momentum_in_the_air),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
