/* SPDX-License-Identifier: Apache-2.0 */
/* Joint limits that hold whatever drives the joints: the shipped 7-dof arm
 * at h = 1/240 driven into its position limits by torques, by a two-step
 * kick and by position controllers aimed far beyond them, with and without
 * the URDF velocity limits enforced; the velocity-limit option shown to
 * matter (off, the arm goes faster than its URDF allows) and switched at
 * run time; a floating-base robot's joints held at their limits; and a
 * robot block holding a joint's two opposite bound rows solved exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "arena.h"
#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"
#include "solver.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { JOINTS_MAX = 16 };

/* A position limit may be crossed by this much (rad) at any step. */
#define POSITION_TOLERANCE 0.01
/* A joint speed may exceed its velocity limit by this fraction. */
#define SPEED_TOLERANCE 0.01

/* 5 s at h = 1/240. */
#define STEPS 1200

typedef struct loaded_robot {
  lcp_world_t *world;
  lcp_robot_id id;
  lcp_robot_info_t info;
  lcp_joint_info_t joints[JOINTS_MAX];
} loaded_robot;

static loaded_robot load_robot(const char *file, bool floating, bool enforce_velocity_limits,
                               bool gravity) {
  lcp_world_settings_t s = lcp_world_settings_default();
  s.enforce_velocity_limits = enforce_velocity_limits;
  if (!gravity)
    s.gravity[2] = 0.0;
  loaded_robot r = {.world = test_create_world(&s)};
  lcp_urdf_options_t o = lcp_urdf_options_default();
  o.floating_base = floating ? 1 : 0;
  lcp_robot_def_t *def = NULL;
  char path[512], err[256];
  snprintf(path, sizeof path, "%s/%s", LCP_TEST_ROBOTS_DIR, file);
  assert_int_equal(lcp_urdf_load_file(path, &o, &def, err, sizeof err), LCP_OK);
  const double base[3] = {0.0, 0.0, 1.0};
  assert_int_equal(lcp_robot_add(r.world, def, base, NULL, &r.id), LCP_OK);
  lcp_robot_def_free(&def);
  assert_int_equal(lcp_robot_get_info(r.world, r.id, &r.info), LCP_OK);
  assert_true(r.info.joint_count <= JOINTS_MAX);
  for (int32_t j = 0; j < r.info.joint_count; ++j) {
    assert_int_equal(lcp_robot_get_joint(r.world, r.id, j, &r.joints[j]), LCP_OK);
    assert_true(r.joints[j].has_limits);
    assert_true(r.joints[j].velocity_limit > 0.0);
  }
  return r;
}

/* How a run drives joint j: +1 towards its upper limit, −1 towards its
 * lower one, 0 not at all (its controller off). */
typedef enum drive_mode { DRIVE_TORQUE, DRIVE_POSITION } drive_mode;

typedef struct drive {
  drive_mode mode;
  double torque; /* torque mode: |τ| (the effort limit caps it) */
  int sign[JOINTS_MAX];
} drive;

/* Alternating directions over all joints, starting with `first`. */
static drive drive_alternating(drive_mode mode, double torque, int first, int joints) {
  drive d = {.mode = mode, .torque = torque};
  for (int j = 0; j < joints; ++j)
    d.sign[j] = (j % 2 == 0) ? first : -first;
  return d;
}

static void set_drive(loaded_robot *r, const drive *d) {
  lcp_joint_control_t c[JOINTS_MAX];
  for (int32_t j = 0; j < r->info.joint_count; ++j) {
    c[j] = lcp_joint_control_default();
    if (d->sign[j] == 0)
      continue;
    if (d->mode == DRIVE_TORQUE) {
      c[j].mode = LCP_CONTROL_TORQUE;
      c[j].torque = d->sign[j] * d->torque;
    } else {
      /* 10 rad beyond the limit, stiff: the controller saturates at the
       * effort limit all the way */
      c[j].mode = LCP_CONTROL_POSITION;
      c[j].position = d->sign[j] > 0 ? r->joints[j].upper + 10.0 : r->joints[j].lower - 10.0;
      c[j].kp = 1e4;
      c[j].kd = 100.0;
    }
  }
  assert_int_equal(lcp_robot_set_controls(r->world, r->id, c, r->info.joint_count), LCP_OK);
}

/* The worst of a run, over every step and joint. */
typedef struct run_worst {
  double past_limit;  /* rad beyond a position limit (≤ 0: never beyond) */
  double speed_ratio; /* |qd| / velocity limit */
  double at_limit;    /* the largest |q − the driven limit| at the end */
} run_worst;

/* Steps the robot n times under the drive and records the worst. */
static run_worst run(loaded_robot *r, const drive *d, int n) {
  set_drive(r, d);
  double q[64], qd[64];
  int32_t base_q = r->info.nq - r->info.joint_count, base_v = r->info.nv - r->info.joint_count;
  run_worst worst = {-INFINITY, 0.0, 0.0};
  for (int step = 0; step < n; ++step) {
    assert_int_equal(lcp_world_step(r->world), LCP_OK);
    assert_int_equal(lcp_robot_get_q(r->world, r->id, q, r->info.nq), LCP_OK);
    assert_int_equal(lcp_robot_get_qd(r->world, r->id, qd, r->info.nv), LCP_OK);
    for (int32_t j = 0; j < r->info.joint_count; ++j) {
      const lcp_joint_info_t *ji = &r->joints[j];
      double qj = q[base_q + j], vj = qd[base_v + j];
      worst.past_limit = fmax(worst.past_limit, fmax(ji->lower - qj, qj - ji->upper));
      worst.speed_ratio = fmax(worst.speed_ratio, fabs(vj) / ji->velocity_limit);
      if (step == n - 1 && d->sign[j] != 0)
        worst.at_limit = fmax(worst.at_limit, fabs(qj - (d->sign[j] > 0 ? ji->upper : ji->lower)));
    }
  }
  return worst;
}

/* The arm driven by d (and by d with every direction reversed), velocity
 * limits enforced or not, for 5 s: no joint more than POSITION_TOLERANCE past
 * a limit at any step, and, enforced, no joint faster than its velocity
 * limit by more than SPEED_TOLERANCE. Returns the worst speed ratio. */
static double arm_holds(const char *what, drive d, bool enforce) {
  double fastest = 0.0;
  for (int direction = 0; direction < 2; ++direction) {
    loaded_robot r = load_robot("arm7.urdf", false, enforce, true);
    if (direction == 1)
      for (int j = 0; j < JOINTS_MAX; ++j)
        d.sign[j] = -d.sign[j];
    run_worst w = run(&r, &d, STEPS);
    print_message("arm, %s, %s, velocity limits %s: worst %.2e rad past a limit, fastest joint "
                  "%.4f of its velocity limit\n",
                  what, direction ? "reversed" : "as given", enforce ? "on" : "off", w.past_limit,
                  w.speed_ratio);
    assert_true(w.past_limit <= POSITION_TOLERANCE);
    if (enforce)
      assert_true(w.speed_ratio <= 1.0 + SPEED_TOLERANCE);
    fastest = fmax(fastest, w.speed_ratio);
    lcp_world_destroy(&r.world);
  }
  return fastest;
}

/* Every joint at its full effort (100 N·m) into its limits, alternating. */
static void test_arm_full_effort_torques(void **state) {
  (void)state;
  drive d = drive_alternating(DRIVE_TORQUE, 100.0, 1, 7);
  arm_holds("full effort on every joint", d, true);
  arm_holds("full effort on every joint", d, false);
}

/* 100 N·m on two neighbouring joints of the chain, the others passive: the
 * driven joints stop at their limits and their momentum goes into the
 * passive ones, which have no controller to hold them. */
static void test_arm_two_driven_joints(void **state) {
  (void)state;
  drive d = {.mode = DRIVE_TORQUE, .torque = 100.0};
  d.sign[1] = 1;
  d.sign[2] = -1;
  arm_holds("100 N·m on joints 2 and 3", d, true);
  arm_holds("100 N·m on joints 2 and 3", d, false);
  drive e = {.mode = DRIVE_TORQUE, .torque = 100.0};
  e.sign[3] = 1;
  e.sign[4] = 1;
  arm_holds("100 N·m on joints 4 and 5", e, true);
  arm_holds("100 N·m on joints 4 and 5", e, false);
}

/* 100 N·m on two neighbouring joints of the chain for two steps (either
 * direction each), then every controller off for 5 s: the arm flails
 * passively (between its limits no row touches it, and it moves by
 * velocity Verlet), and every limit holds at every step. With limit rows
 * made only from each joint's own free velocity, 32 of these 48 runs went
 * 30 to 260 rad past a limit. */
static void test_arm_brief_torques(void **state) {
  (void)state;
  drive off = {.mode = DRIVE_TORQUE};
  double worst_past = -INFINITY, fastest[2] = {0.0, 0.0};
  for (int enforce = 1; enforce >= 0; --enforce)
    for (int j = 0; j + 1 < 7; ++j)
      for (int signs = 0; signs < 4; ++signs) {
        drive kick = {.mode = DRIVE_TORQUE, .torque = 100.0};
        kick.sign[j] = signs & 1 ? 1 : -1;
        kick.sign[j + 1] = signs & 2 ? 1 : -1;
        loaded_robot r = load_robot("arm7.urdf", false, enforce, true);
        run_worst a = run(&r, &kick, 2), b = run(&r, &off, STEPS);
        double past = fmax(a.past_limit, b.past_limit), speed = fmax(a.speed_ratio, b.speed_ratio);
        if (!(past <= POSITION_TOLERANCE) || (enforce && !(speed <= 1.0 + SPEED_TOLERANCE)))
          fail_msg("joints %d and %d kicked (%+d, %+d), velocity limits %s: %.3g rad past a "
                   "limit, fastest joint %.4f of its velocity limit",
                   j + 1, j + 2, kick.sign[j], kick.sign[j + 1], enforce ? "on" : "off", past,
                   speed);
        worst_past = fmax(worst_past, past);
        fastest[enforce] = fmax(fastest[enforce], speed);
        lcp_world_destroy(&r.world);
      }
  print_message("arm, 100 N·m on two neighbouring joints for two steps, then passive (48 runs): "
                "worst %.2e rad past a limit; fastest joint %.4f of its velocity limit (limits "
                "on), %.1f (off)\n",
                worst_past, fastest[1], fastest[0]);
}

/* Stiff position controllers aimed 10 rad beyond the limits, saturated at
 * the effort limit. */
static void test_arm_position_targets_beyond(void **state) {
  (void)state;
  drive d = drive_alternating(DRIVE_POSITION, 0.0, 1, 7);
  arm_holds("position targets 10 rad beyond", d, true);
  arm_holds("position targets 10 rad beyond", d, false);
}

/* The option matters: the same full-effort run without the velocity limits
 * takes some joint well past its URDF limit (5 rad/s), so the tests above
 * with them on would fail if they were not enforced. */
static void test_velocity_limits_off_exceeded(void **state) {
  (void)state;
  drive d = drive_alternating(DRIVE_TORQUE, 100.0, 1, 7);
  double fastest = arm_holds("full effort on every joint", d, false);
  print_message("velocity limits off: fastest joint %.2f of its velocity limit\n", fastest);
  assert_true(fastest > 1.5);
}

/* A continuous joint (no position limits) with a velocity limit of
 * 2 rad/s, driven by 1 N·m on 0.01 kg·m² (100 rad/s²): held at 2 rad/s
 * while the limit is enforced; the world's setting turned off, it
 * accelerates freely (1 s later at about 100 rad/s); turned on again, the
 * next step brings it back to the limit. */
static void test_velocity_limit_toggled(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1.0 / 240.0, false);
  lcp_robot_def_t *def = NULL;
  assert_int_equal(lcp_robot_def_alloc(2, 0, &def), LCP_OK);
  strcpy(def->name, "spinner");
  def->links[0].parent = -1;
  lcp_link_def_t *l = &def->links[1];
  strcpy(l->name, "rotor");
  strcpy(l->joint_name, "spin");
  l->parent = 0;
  l->joint_type = LCP_JOINT_CONTINUOUS;
  l->velocity_limit = 2.0;
  memset(l->inertia, 0, sizeof l->inertia);
  l->inertia[0] = l->inertia[4] = l->inertia[8] = 0.01;
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
  lcp_robot_def_free(&def);
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_TORQUE;
  c.torque = 1.0;
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
  double qd = 0.0, fastest = 0.0;
  for (int i = 0; i < 240; ++i) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    assert_int_equal(lcp_robot_get_qd(w, id, &qd, 1), LCP_OK);
    fastest = fmax(fastest, fabs(qd));
  }
  ASSERT_NEAR(qd, 2.0, 2.0 * SPEED_TOLERANCE);
  assert_true(fastest <= 2.0 * (1.0 + SPEED_TOLERANCE));
  lcp_world_settings_t s;
  lcp_world_get_settings(w, &s);
  s.enforce_velocity_limits = false;
  assert_int_equal(lcp_world_set_settings(w, &s), LCP_OK);
  test_step_n(w, 240);
  assert_int_equal(lcp_robot_get_qd(w, id, &qd, 1), LCP_OK);
  ASSERT_NEAR(qd, 2.0 + 100.0, 1.0);
  s.enforce_velocity_limits = true;
  assert_int_equal(lcp_world_set_settings(w, &s), LCP_OK);
  test_step_n(w, 1);
  assert_int_equal(lcp_robot_get_qd(w, id, &qd, 1), LCP_OK);
  ASSERT_NEAR(qd, 2.0, 2.0 * SPEED_TOLERANCE);
  lcp_world_destroy(&w);
}

/* The shipped quadruped on a floating base, in zero gravity: every joint at
 * its full effort (35 N·m) into a limit, alternating. The joints stay
 * within their limits and velocity limits, and end held at the limits they
 * are driven into. */
static void test_floating_base_joints_held(void **state) {
  (void)state;
  for (int direction = 0; direction < 2; ++direction) {
    loaded_robot r = load_robot("quadruped.urdf", true, true, false);
    assert_true(r.info.floating_base);
    drive d = drive_alternating(DRIVE_TORQUE, 35.0, direction ? -1 : 1, (int)r.info.joint_count);
    run_worst w = run(&r, &d, STEPS);
    print_message("floating quadruped, %s: worst %.2e rad past a limit, fastest joint %.4f of "
                  "its velocity limit, farthest from its driven limit at the end %.2e rad\n",
                  direction ? "reversed" : "as given", w.past_limit, w.speed_ratio, w.at_limit);
    assert_true(w.past_limit <= POSITION_TOLERANCE);
    assert_true(w.speed_ratio <= 1.0 + SPEED_TOLERANCE);
    assert_true(w.at_limit <= POSITION_TOLERANCE);
    lcp_world_destroy(&r.world);
  }
}

/* Bitwise replay through steps whose solve is repeated with added rows:
 * the arm at full effort (velocity limits on: rows are added after the
 * solve in several of its first 120 steps), its state saved at step 5,
 * stepped to 120; restored and stepped again, and a second world stepped
 * alongside, both end with the same state hash. */
static void test_replay_through_completed_rows(void **state) {
  (void)state;
  drive d = drive_alternating(DRIVE_TORQUE, 100.0, 1, 7);
  loaded_robot a = load_robot("arm7.urdf", false, true, true);
  loaded_robot b = load_robot("arm7.urdf", false, true, true);
  set_drive(&a, &d);
  set_drive(&b, &d);
  test_step_n(a.world, 5);
  size_t size = lcp_world_state_size(a.world), used = 0;
  void *saved = test_alloc(size, 1);
  assert_int_equal(lcp_world_save_state(a.world, saved, size, &used), LCP_OK);
  test_step_n(a.world, 115);
  test_step_n(b.world, 120);
  uint64_t first = lcp_world_state_hash(a.world);
  assert_true(first == lcp_world_state_hash(b.world));
  assert_int_equal(lcp_world_restore_state(a.world, saved, used), LCP_OK);
  test_step_n(a.world, 115);
  assert_true(first == lcp_world_state_hash(a.world));
  free(saved);
  lcp_world_destroy(&a.world);
  lcp_world_destroy(&b.world);
}

/* A joint's lower and upper bound rows (J = e_v and −e_v, cfm 1e-9) on a
 * light joint (M⁻¹_vv = 5000) make a robot block whose K is singular to
 * rounding. Beside two saturated controller rows on the coupled joints,
 * the block is still solved exactly in a sweep (Dantzig's method without
 * the factor): PGS stops after the confirming sweep, with the joint at its
 * upper speed bound to 1e-9 and the lower row idle; row by row it takes
 * more sweeps. */
static void test_block_with_opposite_bounds(void **state) {
  (void)state;
  enum { NV = 3, ROWS = 4 };
  /* M⁻¹, symmetric and diagonally dominant */
  const double minv[NV][NV] = {{4000, 2500, 1500}, {2500, 5000, 3000}, {1500, 3000, 4000}};
  /* row: dof, sign of J, target, cfm, lo, hi */
  const struct {
    int dof;
    double sign, target, cfm, lo, hi;
  } spec[ROWS] = {
      {0, 1.0, 0.5, 1e-4, -1.0, 1.0},       /* a controller, saturated */
      {1, 1.0, -0.2, 1e-9, 0.0, INFINITY},  /* qd_1 ≥ −0.2 */
      {1, -1.0, -0.3, 1e-9, 0.0, INFINITY}, /* qd_1 ≤ 0.3 */
      {2, 1.0, -1.0, 1e-4, -1e-4, 1e-4},    /* a controller, saturated */
  };
  const double u_free[NV] = {0.0, 2.0, 0.0};
  double J[ROWS * NV], T[ROWS * NV], velocity[NV];
  solver_row rows[ROWS];
  for (int i = 0; i < ROWS; ++i) {
    for (int k = 0; k < NV; ++k) {
      J[i * NV + k] = k == spec[i].dof ? spec[i].sign : 0.0;
      T[i * NV + k] = spec[i].sign * minv[k][spec[i].dof];
    }
    rows[i] = (solver_row){.dof_offset = {0, 0},
                           .dof_count = {0, NV},
                           .coef_offset = {0, i * NV},
                           .kind = ROW_BILATERAL,
                           .normal_row = -1,
                           .target = spec[i].target,
                           .relax_target = spec[i].target,
                           .cfm = spec[i].cfm,
                           .lo = spec[i].lo,
                           .hi = spec[i].hi};
  }
  solver_problem p = {
      .row_count = ROWS, .rows = rows, .J = J, .MinvJt = T, .dof_count = NV, .velocity = velocity};
  arena a;
  lcp__arena_init(&a);
  int32_t sweeps[2];
  for (int blocks = 1; blocks >= 0; --blocks) {
    solver_settings s = {.max_iterations = 1000,
                         .omega = 1.0,
                         .tolerance = 1e-12,
                         .friction_model = LCP_FRICTION_BOX,
                         .pgs_mode = blocks ? PGS_MODE_FULL : PGS_MODE_NO_BLOCKS};
    memcpy(velocity, u_free, sizeof velocity);
    for (int i = 0; i < ROWS; ++i)
      rows[i].lambda = 0.0;
    solver_result res;
    assert_int_equal(lcp__solver_pgs(&s, &p, &res, &a), LCP_OK);
    sweeps[blocks] = res.iterations;
    ASSERT_NEAR(velocity[1], 0.3, 1e-9);
    assert_true(rows[1].lambda == 0.0);
    assert_true(rows[2].lambda > 0.0);
    /* the boxed-LCP conditions of every row: w + cfm λ ≥ 0 at lo, ≤ 0 at
     * hi, 0 between */
    for (int i = 0; i < ROWS; ++i) {
      double w = -rows[i].target + rows[i].cfm * rows[i].lambda;
      for (int k = 0; k < NV; ++k)
        w += J[i * NV + k] * velocity[k];
      if (rows[i].lambda <= rows[i].lo)
        assert_true(w >= -1e-9);
      else if (rows[i].lambda >= rows[i].hi)
        assert_true(w <= 1e-9);
      else
        ASSERT_NEAR(w, 0.0, 1e-9);
    }
    lcp__arena_reset(&a);
  }
  print_message("opposite bounds in a block: %d sweeps (block), %d (row by row)\n", sweeps[1],
                sweeps[0]);
  assert_true(sweeps[1] <= 2);
  assert_true(sweeps[0] > sweeps[1]);
  lcp__arena_destroy(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arm_full_effort_torques),
      cmocka_unit_test(test_arm_two_driven_joints),
      cmocka_unit_test(test_arm_brief_torques),
      cmocka_unit_test(test_arm_position_targets_beyond),
      cmocka_unit_test(test_velocity_limits_off_exceeded),
      cmocka_unit_test(test_velocity_limit_toggled),
      cmocka_unit_test(test_floating_base_joints_held),
      cmocka_unit_test(test_replay_through_completed_rows),
      cmocka_unit_test(test_block_with_opposite_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
