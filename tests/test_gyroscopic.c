/* SPDX-License-Identifier: Apache-2.0 */
/* Torque-free tumbling (issue 13, gyroscopic stability): free bodies and
 * floating robots spun near each principal axis in zero gravity keep their
 * world angular momentum to rounding and gain no kinetic energy, and a spin
 * near the intermediate axis flips with the period of Euler's equations
 * (the Dzhanibekov effect). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "rigid_rotation.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SIMULATED_SECONDS 20.0
#define SPIN_RATE 10.0         /* rad/s about the chosen principal axis */
#define SPIN_PERTURBATION 0.02 /* of SPIN_RATE, about each other principal axis */
#define ENERGY_GROWTH 0.01     /* kinetic energy never above (1 + this) E₀ */
#define MOMENTUM_ERROR 1e-9    /* |L − L₀| / |L₀| at every step */

static const double timesteps[2] = {1.0 / 240.0, 1e-3};

/* What a run saw at its steps: the largest kinetic energy relative to the
 * first, the smallest, and the largest relative change of the world angular
 * momentum. */
typedef struct tumble_record {
  double energy_max, energy_min, momentum_error;
} tumble_record;

static void record_step(tumble_record *rec, double e, double e0, vec3 L, vec3 L0) {
  rec->energy_max = fmax(rec->energy_max, e / e0);
  rec->energy_min = fmin(rec->energy_min, e / e0);
  rec->momentum_error = fmax(rec->momentum_error, v3_len(v3_sub(L, L0)) / v3_len(L0));
}

/* Energy never above (1 + ENERGY_GROWTH) E₀ and, for a rigid body, never
 * below (1 − ENERGY_GROWTH) E₀ either: its torque-free motion keeps it. */
static void assert_tumble_record(const char *what, double h, const tumble_record *rec, bool rigid) {
  print_message("%-42s h = %.5f s: E/E0 in [%.6f, %.6f], |dL|/|L0| <= %.2e\n", what, h,
                rec->energy_min, rec->energy_max, rec->momentum_error);
  assert_true(rec->energy_max <= 1.0 + ENERGY_GROWTH);
  if (rigid)
    assert_true(rec->energy_min >= 1.0 - ENERGY_GROWTH);
  assert_true(rec->momentum_error <= MOMENTUM_ERROR);
}

/* A body-frame angular velocity of SPIN_RATE about principal axis `axis`,
 * with SPIN_PERTURBATION of it about the two others, turned from the
 * principal axes to the body's by `principal`. */
static vec3 spin_near_axis(int axis, quat principal) {
  vec3 w = v3(SPIN_PERTURBATION, SPIN_PERTURBATION, SPIN_PERTURBATION);
  v3_set(&w, axis, 1.0);
  return q_rotate(principal, v3_scale(w, SPIN_RATE));
}

/* Times the downward zero crossings of a sampled value (linearly
 * interpolated between samples): the mean time between the first and the
 * last is the period of a periodic value with one such crossing a period. */
typedef struct flip_timer {
  double previous, first, last;
  int crossings;
} flip_timer;

static void flip_timer_sample(flip_timer *f, double t_previous, double h, double value) {
  if (f->previous > 0.0 && value <= 0.0) {
    double t = t_previous + h * f->previous / (f->previous - value);
    if (f->crossings == 0)
      f->first = t;
    f->last = t;
    ++f->crossings;
  }
  f->previous = value;
}

static double flip_timer_period(const flip_timer *f) {
  assert_true(f->crossings >= 3);
  return (f->last - f->first) / (f->crossings - 1);
}

/* ---- free bodies ---- */

/* Kinetic energy ½ ωᵀ L and world angular momentum L = R I Rᵀ ω of a body. */
static double body_rotation_state(const lcp_world_t *w, lcp_body_id id, const mat3 *inertia,
                                  vec3 *L) {
  double q[4], omega[3];
  assert_int_equal(lcp_body_get_pose(w, id, NULL, q), LCP_OK);
  assert_int_equal(lcp_body_get_velocity(w, id, NULL, omega), LCP_OK);
  quat r = q_from(q);
  vec3 om = v3_from(omega);
  *L = q_rotate(r, m3_mulv(inertia, q_rotate(q_conj(r), om)));
  return 0.5 * v3_dot(om, *L);
}

typedef struct tumbling_shape {
  const char *name;
  double half_extents[3];
  double mass;
  double tilt[4]; /* the box's axes in the body's: a tilted box has a full inertia */
} tumbling_shape;

static const tumbling_shape shapes[3] = {
    {"1x2x3 box", {0.5, 1.0, 1.5}, 2.0, {1.0, 0.0, 0.0, 0.0}},
    {"long thin box", {0.02, 0.05, 0.5}, 0.5, {1.0, 0.0, 0.0, 0.0}},
    /* turned by 0.7 rad about (1, 2, 3)/√14: cos 0.35, sin 0.35 · axis */
    {"1x2x3 box, non-diagonal inertia",
     {0.5, 1.0, 1.5},
     2.0,
     {0.93937271284737889, 0.091526194755040155, 0.18305238951008031, 0.27457858426512047}},
};

/* A world holding one free box of the shape at orientation q0, spinning
 * near its principal axis `axis`; returns the body and its inertia. */
static lcp_world_t *spinning_box(const tumbling_shape *shape, int axis, double h, quat q0,
                                 lcp_body_id *id, mat3 *inertia) {
  lcp_world_t *w = test_new_world(h, false);
  lcp_geom_def_t box =
      test_box_def(shape->half_extents[0], shape->half_extents[1], shape->half_extents[2], 0.5);
  memcpy(box.local_orientation, shape->tilt, sizeof box.local_orientation);
  double q[4];
  q_store(q0, q);
  *id = test_add_solid(w, &box, shape->mass, (double[]){0.0, 0.0, 0.0}, q);
  assert_int_not_equal(*id, LCP_NULL_ID);
  double mass, I[9];
  assert_int_equal(lcp_body_get_mass(w, *id, &mass, I), LCP_OK);
  *inertia = m3_from(I);
  /* a tilted box must give the full inertia that the principal-frame path needs */
  bool tilted = shape->tilt[0] != 1.0;
  assert_true(tilted == (fabs(I[1]) + fabs(I[2]) + fabs(I[5]) > 1e-3 * I[0]));
  double omega[3];
  v3_store(q_rotate(q0, spin_near_axis(axis, q_from(shape->tilt))), omega);
  assert_int_equal(lcp_body_set_velocity(w, *id, (double[]){0.0, 0.0, 0.0}, omega), LCP_OK);
  return w;
}

/* Free boxes of three shapes (one with a non-diagonal body inertia), at a
 * random orientation, spun at 10 rad/s near each principal axis with a 2 %
 * perturbation, for 20 s at h = 1/240 s and 1 ms in zero gravity: at every
 * step the kinetic energy is within 1 % of its start and the world angular
 * momentum within 1e-9 relative of its start. */
static void test_tumbling_bodies_keep_energy_and_momentum(void **state) {
  (void)state;
  rng r = {13};
  for (int s = 0; s < 3; ++s)
    for (int axis = 0; axis < 3; ++axis)
      for (int k = 0; k < 2; ++k) {
        double h = timesteps[k];
        lcp_body_id id;
        mat3 inertia;
        lcp_world_t *w = spinning_box(&shapes[s], axis, h, rng_quat(&r), &id, &inertia);
        vec3 L0, L;
        double e0 = body_rotation_state(w, id, &inertia, &L0);
        tumble_record rec = {1.0, 1.0, 0.0};
        int steps = (int)lround(SIMULATED_SECONDS / h);
        for (int n = 0; n < steps; ++n) {
          assert_int_equal(lcp_world_step(w), LCP_OK);
          double e = body_rotation_state(w, id, &inertia, &L);
          record_step(&rec, e, e0, L, L0);
        }
        char what[96];
        snprintf(what, sizeof what, "%s, axis %d", shapes[s].name, axis);
        assert_tumble_record(what, h, &rec, true);
        lcp_world_destroy(&w);
      }
}

/* The complete elliptic integral of the first kind K(m) = π / (2 agm(1, √(1 − m))). */
static double elliptic_k(double m) {
  double a = 1.0, b = sqrt(1.0 - m);
  for (int i = 0; i < 64 && fabs(a - b) > 1e-16 * a; ++i) {
    double mean = 0.5 * (a + b);
    b = sqrt(a * b);
    a = mean;
  }
  return 0.5 * TEST_PI / a;
}

/* The period of the body-frame angular velocity of a torque-free body with
 * principal moments I1 < I2 < I3, energy E and |L| = M (Landau and Lifshitz,
 * Mechanics, the free asymmetric top): with M² > 2 E I2,
 *   T = 4 K(k²) √(I1 I2 I3 / ((I3 − I2)(M² − 2 E I1))),
 *   k² = (I2 − I1)(2 E I3 − M²) / ((I3 − I2)(M² − 2 E I1)),
 * and with M² < 2 E I2 the same with I1 and I3 exchanged. The intermediate
 * component ω₂ ∝ sn has one downward zero crossing per period. */
static double free_top_period(double I1, double I2, double I3, double E, double M) {
  double M2 = M * M;
  if (M2 < 2.0 * E * I2) {
    double t = I1;
    I1 = I3;
    I3 = t;
  }
  double k2 = (I2 - I1) * (2.0 * E * I3 - M2) / ((I3 - I2) * (M2 - 2.0 * E * I1));
  return 4.0 * elliptic_k(k2) * sqrt(I1 * I2 * I3 / ((I3 - I2) * (M2 - 2.0 * E * I1)));
}

/* Solves the period of Euler's equations by RK4 at a tiny step from the
 * same start: a check of free_top_period. Returns the mean time between
 * downward zero crossings of ω₂ over `seconds`. */
static double reference_period(const double I[3], vec3 w, double seconds) {
  const double dt = 1e-5;
  flip_timer flips = {w.y, 0.0, 0.0, 0};
  for (long n = 0; n * dt < seconds; ++n) {
    vec3 k[4], y = w;
    for (int stage = 0; stage < 4; ++stage) {
      /* I ω̇ = (I ω) × ω */
      vec3 c = v3_cross(v3(I[0] * y.x, I[1] * y.y, I[2] * y.z), y);
      k[stage] = v3(c.x / I[0], c.y / I[1], c.z / I[2]);
      y = v3_madd(w, k[stage], stage < 2 ? 0.5 * dt : dt);
    }
    w = v3_madd(w, v3_add(v3_add(k[0], k[3]), v3_scale(v3_add(k[1], k[2]), 2.0)), dt / 6.0);
    flip_timer_sample(&flips, (double)n * dt, dt, w.y);
  }
  return flip_timer_period(&flips);
}

/* The period of the free asymmetric top (free_top_period) for a body of
 * principal moments I (x, y, z; y the intermediate one) spun near y as
 * spin_near_axis does, with the energy and |L| of that spin; checked
 * against RK4 on Euler's equations to 1e-6. */
static double expected_flip_period(const double I[3]) {
  assert_true(I[2] < I[1] && I[1] < I[0]);
  vec3 w0 = spin_near_axis(1, q_identity());
  vec3 L0 = v3(I[0] * w0.x, I[1] * w0.y, I[2] * w0.z);
  double expected = free_top_period(I[2], I[1], I[0], 0.5 * v3_dot(w0, L0), v3_len(L0));
  double reference = reference_period(I, w0, SIMULATED_SECONDS);
  print_message("free top period: elliptic %.6f s, RK4 %.6f s\n", expected, reference);
  assert_true(fabs(reference / expected - 1.0) < 1e-6);
  return expected;
}

static void assert_flip_period(const char *what, double h, const flip_timer *flips,
                               double expected) {
  double period = flip_timer_period(flips);
  print_message("%s, h = %.5f s: flip period %.6f s over %d flips, expected %.6f s (%+.4f %%)\n",
                what, h, period, flips->crossings, expected, 100.0 * (period / expected - 1.0));
  assert_true(fabs(period / expected - 1.0) < 0.05);
}

/* A 1×2×3 box spun at 10 rad/s about its intermediate axis (y, moment
 * between those of z and x) with a 2 % perturbation flips over and back
 * with the period of the free asymmetric top: within 5 % at h = 1 ms (and
 * at 1/240 s) over 20 s, timed by the downward zero crossings of the
 * body-frame ω_y. */
static void test_intermediate_axis_flip_period(void **state) {
  (void)state;
  for (int k = 0; k < 2; ++k) {
    double h = timesteps[k];
    lcp_body_id id;
    mat3 inertia;
    lcp_world_t *w = spinning_box(&shapes[0], 1, h, q_identity(), &id, &inertia);
    const double I[3] = {inertia.m[0][0], inertia.m[1][1], inertia.m[2][2]};
    double expected = expected_flip_period(I);
    flip_timer flips = {spin_near_axis(1, q_identity()).y, 0.0, 0.0, 0};
    int steps = (int)lround(SIMULATED_SECONDS / h);
    for (int n = 1; n <= steps; ++n) {
      assert_int_equal(lcp_world_step(w), LCP_OK);
      double q[4], omega[3];
      assert_int_equal(lcp_body_get_pose(w, id, NULL, q), LCP_OK);
      assert_int_equal(lcp_body_get_velocity(w, id, NULL, omega), LCP_OK);
      flip_timer_sample(&flips, (n - 1) * h, h, q_rotate(q_conj(q_from(q)), v3_from(omega)).y);
    }
    assert_flip_period("free 1x2x3 box", h, &flips, expected);
    lcp_world_destroy(&w);
  }
}

/* One step of lcp__rigid_rotation_step against the exact torque-free
 * motion (RK4 on q̇ = ½ (0, ω) ⊗ q with ω = R I⁻¹ Rᵀ L, L fixed, at 1e-7 s):
 * for inertias with their moments in each of the six orders along the
 * body axes and a non-diagonal one, the orientation error at h = 10 ms is
 * below 1e-5 and falls by at least 6 when h halves (a second-order method
 * errs by O(h³) in a step). */
static quat exact_rotation(quat q, const mat3 *I, const mat3 *I_inv, vec3 w, double h) {
  const int substeps = 100000;
  const double dt = h / substeps;
  mat3 R = q_to_mat3(q);
  vec3 L = m3_mulv(&R, m3_mulv(I, m3_tmulv(&R, w)));
  for (int n = 0; n < substeps; ++n) {
    quat k[4], y = q;
    for (int stage = 0; stage < 4; ++stage) {
      mat3 Ry = q_to_mat3(q_normalize(y));
      vec3 wy = m3_mulv(&Ry, m3_mulv(I_inv, m3_tmulv(&Ry, L)));
      k[stage] = q_mul((quat){0.0, 0.5 * wy.x, 0.5 * wy.y, 0.5 * wy.z}, y);
      double f = stage < 2 ? 0.5 * dt : dt;
      y = (quat){q.w + f * k[stage].w, q.x + f * k[stage].x, q.y + f * k[stage].y,
                 q.z + f * k[stage].z};
    }
    double f = dt / 6.0;
    q = q_normalize((quat){q.w + f * (k[0].w + 2.0 * (k[1].w + k[2].w) + k[3].w),
                           q.x + f * (k[0].x + 2.0 * (k[1].x + k[2].x) + k[3].x),
                           q.y + f * (k[0].y + 2.0 * (k[1].y + k[2].y) + k[3].y),
                           q.z + f * (k[0].z + 2.0 * (k[1].z + k[2].z) + k[3].z)});
  }
  return q;
}

static double rotation_distance(quat a, quat b) {
  /* q and −q are one rotation */
  double minus = q_norm((quat){a.w - b.w, a.x - b.x, a.y - b.y, a.z - b.z});
  double plus = q_norm((quat){a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z});
  return fmin(minus, plus);
}

static void test_rotation_step_is_second_order(void **state) {
  (void)state;
  static const double orders[6][3] = {{1, 2, 3}, {1, 3, 2}, {2, 1, 3},
                                      {2, 3, 1}, {3, 1, 2}, {3, 2, 1}};
  const quat q0 = q_normalize((quat){0.7, 0.2, -0.4, 0.5});
  const vec3 w0 = v3(3.0, -2.0, 5.0);
  for (int c = 0; c < 7; ++c) {
    mat3 I, I_inv;
    if (c < 6)
      I = m3_diag(v3(orders[c][0], orders[c][1], orders[c][2]));
    else
      I = (mat3){{{2.0, 0.3, -0.2}, {0.3, 1.5, 0.1}, {-0.2, 0.1, 1.0}}};
    assert_true(m3_inverse(&I, &I_inv, 1e-300));
    double error[2];
    for (int k = 0; k < 2; ++k) {
      double h = k == 0 ? 0.01 : 0.005;
      quat q;
      vec3 w;
      lcp__rigid_rotation_step(q0, &I, &I_inv, w0, h, &q, &w);
      error[k] = rotation_distance(q, exact_rotation(q0, &I, &I_inv, w0, h));
    }
    print_message("inertia %d: step error %.3e at 10 ms, %.3e at 5 ms (ratio %.2f)\n", c, error[0],
                  error[1], error[0] / error[1]);
    assert_true(error[0] < 1e-5);
    assert_true(error[0] > 6.0 * error[1]);
  }
}

/* ---- floating robots ---- */

/* Kinetic energy and world angular momentum (about the origin) of a robot,
 * link by link: each link's centre of mass c moves at v + ω × (c − p). */
static double robot_rotation_state(const lcp_world_t *w, lcp_robot_id id,
                                   const lcp_robot_def_t *def, vec3 *L) {
  double kinetic = 0.0;
  *L = v3_zero();
  for (int32_t l = 0; l < def->link_count; ++l) {
    const lcp_link_def_t *link = &def->links[l];
    double p[4], q[4], v[3], omega[3];
    assert_int_equal(lcp_robot_get_link_pose(w, id, l, p, q), LCP_OK);
    assert_int_equal(lcp_robot_get_link_velocity(w, id, l, v, omega), LCP_OK);
    quat r = q_from(q);
    vec3 om = v3_from(omega), arm = q_rotate(r, v3_from(link->com));
    vec3 c = v3_add(v3_from(p), arm), vc = v3_add(v3_from(v), v3_cross(om, arm));
    mat3 I = m3_from(link->inertia);
    vec3 spin = q_rotate(r, m3_mulv(&I, q_rotate(q_conj(r), om)));
    kinetic += 0.5 * (link->mass * v3_dot(vc, vc) + v3_dot(om, spin));
    *L = v3_add(*L, v3_add(v3_cross(c, v3_scale(vc, link->mass)), spin));
  }
  return kinetic;
}

/* A floating robot: a base box of 1×2×3 m and 4 kg, then `joints` light
 * links (0.1 kg rods 0.3 m long) in a chain off the base's +z face,
 * revolute about x, y, z in turn. */
static lcp_robot_def_t *floating_robot(int joints) {
  lcp_robot_def_t *def = NULL;
  assert_int_equal(lcp_robot_def_alloc(1 + joints, 0, &def), LCP_OK);
  strcpy(def->name, "tumbler");
  def->floating_base = true;
  lcp_link_def_t *base = &def->links[0];
  strcpy(base->name, "base");
  base->parent = -1;
  base->mass = 4.0;
  memset(base->inertia, 0, sizeof base->inertia);
  const double hx = 0.5, hy = 1.0, hz = 1.5;
  base->inertia[0] = base->mass * (hy * hy + hz * hz) / 3.0;
  base->inertia[4] = base->mass * (hx * hx + hz * hz) / 3.0;
  base->inertia[8] = base->mass * (hx * hx + hy * hy) / 3.0;
  for (int j = 1; j <= joints; ++j) {
    lcp_link_def_t *l = &def->links[j];
    snprintf(l->name, sizeof l->name, "link%d", j);
    snprintf(l->joint_name, sizeof l->joint_name, "joint%d", j);
    l->parent = j - 1;
    l->joint_type = LCP_JOINT_CONTINUOUS;
    l->origin_position[2] = j == 1 ? hz : 0.3;
    l->axis[(j - 1) % 3] = 1.0;
    l->mass = 0.1;
    l->com[2] = 0.15;
    memset(l->inertia, 0, sizeof l->inertia);
    l->inertia[0] = l->inertia[4] = l->mass * 0.3 * 0.3 / 12.0;
    l->inertia[8] = 1e-4 * l->mass;
  }
  return def;
}

#define HOLD_KP 1e5 /* N·m/rad: the held joints' position gain (no damping) */

/* Runs the robot spun near the base's principal axis `axis` for 20 s at h;
 * its joints (if any) held at 0 by stiff position controllers. Times the
 * base's flips by its body-frame ω_y. */
static void tumble_robot(int joints, int axis, double h, tumble_record *rec, flip_timer *flips) {
  lcp_world_t *w = test_new_world(h, false);
  lcp_robot_def_t *def = floating_robot(joints);
  const quat q0 = q_normalize((quat){0.8, 0.3, -0.4, 0.2});
  double base_q[4];
  q_store(q0, base_q);
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, (double[]){0.3, -0.2, 1.0}, base_q, &id), LCP_OK);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, id, &info), LCP_OK);
  double qd[16] = {0};
  v3_store(q_rotate(q0, spin_near_axis(axis, q_identity())), qd + 3);
  assert_int_equal(lcp_robot_set_qd(w, id, qd, info.nv), LCP_OK);
  for (int32_t j = 0; j < info.joint_count; ++j) {
    lcp_joint_control_t c = lcp_joint_control_default();
    c.mode = LCP_CONTROL_POSITION;
    c.kp = HOLD_KP;
    c.kd = 0.0;
    assert_int_equal(lcp_robot_set_joint_control(w, id, j, &c), LCP_OK);
  }
  vec3 L0, L;
  double e0 = robot_rotation_state(w, id, def, &L0);
  *rec = (tumble_record){1.0, 1.0, 0.0};
  *flips = (flip_timer){spin_near_axis(axis, q_identity()).y, 0.0, 0.0, 0};
  int steps = (int)lround(SIMULATED_SECONDS / h);
  for (int n = 1; n <= steps; ++n) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double e = robot_rotation_state(w, id, def, &L);
    double q[16];
    assert_int_equal(lcp_robot_get_q(w, id, q, info.nq), LCP_OK);
    /* the controllers' springs store energy too: ½ kp q² */
    for (int32_t j = 0; j < info.joint_count; ++j)
      e += 0.5 * HOLD_KP * q[7 + j] * q[7 + j];
    record_step(rec, e, e0, L, L0);
    double base_w[3];
    assert_int_equal(lcp_robot_get_link_velocity(w, id, 0, NULL, base_w), LCP_OK);
    flip_timer_sample(flips, (n - 1) * h, h, q_rotate(q_conj(q_from(q + 3)), v3_from(base_w)).y);
  }
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

/* A floating robot of one link, a 1×2×3 box, spun near each principal axis
 * as the free bodies are (no rows touch it: velocity Verlet, the base's
 * velocity from its momentum): the same bounds on energy and momentum, and near
 * the intermediate axis the flip period of the free top within 5 %. */
static void test_tumbling_floating_base(void **state) {
  (void)state;
  lcp_robot_def_t *def = floating_robot(0);
  const double I[3] = {def->links[0].inertia[0], def->links[0].inertia[4],
                       def->links[0].inertia[8]};
  double expected = expected_flip_period(I);
  lcp_robot_def_free(&def);
  for (int axis = 0; axis < 3; ++axis)
    for (int k = 0; k < 2; ++k) {
      tumble_record rec;
      flip_timer flips;
      tumble_robot(0, axis, timesteps[k], &rec, &flips);
      char what[64];
      snprintf(what, sizeof what, "floating box robot, axis %d", axis);
      assert_tumble_record(what, timesteps[k], &rec, true);
      if (axis == 1)
        assert_flip_period("floating box robot", timesteps[k], &flips, expected);
    }
}

/* The same base carrying a chain of three joints held at 0 by stiff
 * position controllers (kp = 1e5 N·m/rad, no damping; rows in the solve
 * every step): kinetic plus spring energy at most 1 % above its start,
 * momentum within 1e-9 relative. (A robot its rows touch steps by
 * semi-implicit Euler, which loses energy here instead: the tumbling
 * decays towards a spin about the largest moment.) */
static void test_tumbling_floating_robot_with_held_joints(void **state) {
  (void)state;
  for (int axis = 0; axis < 3; ++axis)
    for (int k = 0; k < 2; ++k) {
      tumble_record rec;
      flip_timer flips;
      tumble_robot(3, axis, timesteps[k], &rec, &flips);
      char what[64];
      snprintf(what, sizeof what, "floating robot with held joints, axis %d", axis);
      assert_tumble_record(what, timesteps[k], &rec, false);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tumbling_bodies_keep_energy_and_momentum),
      cmocka_unit_test(test_intermediate_axis_flip_period),
      cmocka_unit_test(test_rotation_step_is_second_order),
      cmocka_unit_test(test_tumbling_floating_base),
      cmocka_unit_test(test_tumbling_floating_robot_with_held_joints),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
