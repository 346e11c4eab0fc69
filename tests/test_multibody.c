/* Tests of the Featherstone multibody kernel (server/engine/multibody.c;
 * R. Featherstone, "Rigid Body Dynamics Algorithms").
 *
 * The three dynamics algorithms are checked against each other on random
 * robots (articulated-body forward dynamics against the composite-rigid-body
 * mass matrix and Newton–Euler bias; Newton–Euler as the inverse of the
 * articulated-body pass; the O(n) impulse responses against a dense M⁻¹Jᵀ),
 * and against physics that none of them shares code with: Jacobians against
 * finite differences of positions, the generalised gravity force against the
 * gradient of the potential energy, kinetic energy against ½ q̇ᵀMq̇, a free
 * rigid body and a pendulum against closed forms, and conservation of
 * momentum and energy along integrated trajectories.
 *
 * Random robots: 1–30 links, random trees (chains and branches), revolute,
 * continuous, prismatic and fixed joints (some fixed links massless), random
 * origins, unnormalised axes, masses, centres of mass and inertias, fixed or
 * floating base (a fixed base at a random world pose). All randomness comes
 * from a fixed-seed splitmix64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcp_math.h"
#include "lcpsim/robot.h"
#include "multibody.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dense linear algebra (reference) ---- */

/* Cholesky factor in place (lower), n×n row-major; false if not SPD. */
static bool dense_cholesky(int n, double *A) {
  for (int j = 0; j < n; ++j) {
    double s = A[j * n + j];
    for (int k = 0; k < j; ++k)
      s -= A[j * n + k] * A[j * n + k];
    if (!(s > 0.0))
      return false;
    A[j * n + j] = sqrt(s);
    for (int i = j + 1; i < n; ++i) {
      double t = A[i * n + j];
      for (int k = 0; k < j; ++k)
        t -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = t / A[j * n + j];
    }
  }
  return true;
}
static void dense_solve(int n, const double *L, const double *b, double *x) {
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (int k = 0; k < i; ++k)
      s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int k = i + 1; k < n; ++k)
      s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
}

/* ---- definitions ---- */

/* A definition with the defaults of lcp_robot_def_alloc (a chain of fixed
 * joints, identity origins, axis z, 1 kg, unit inertia), built here so the
 * test does not depend on the allocator; freed by lcp_robot_def_free. */
static lcp_robot_def_t *def_alloc(int n) {
  lcp_robot_def_t *def = test_alloc(1, sizeof *def);
  def->links = test_alloc((size_t)n, sizeof(lcp_link_def_t));
  def->link_count = n;
  for (int i = 0; i < n; ++i) {
    lcp_link_def_t *l = &def->links[i];
    l->parent = i - 1;
    l->joint_type = LCP_JOINT_FIXED;
    l->origin_orientation[0] = 1.0;
    l->axis[2] = 1.0;
    l->mass = 1.0;
    l->inertia[0] = l->inertia[4] = l->inertia[8] = 1.0;
  }
  return def;
}

/* ---- random robots ---- */

typedef struct robot {
  lcp_robot_def_t *def;
  mb_model m;
  mb_data d;
  int nq, nv, n;
  double *q, *qd; /* a random state (random_state) */
} robot;

static mat3 random_inertia(rng *r, double mass) {
  mat3 Q = q_to_mat3(rng_quat(r));
  /* principal moments of a random box, so the triangle inequality holds */
  vec3 s = rng_vec3(r, 0.05, 0.6); /* the box's sides */
  vec3 d = v3(mass * (s.y * s.y + s.z * s.z) / 12, mass * (s.x * s.x + s.z * s.z) / 12,
              mass * (s.x * s.x + s.y * s.y) / 12);
  mat3 D = m3_diag(d);
  return m3_rotate_tensor(&Q, &D);
}

/* Base position within ±pos_scale, any base orientation, joints within
 * ±0.5 m (prismatic) or ±π, velocities within ±1. */
static void random_state(rng *r, const robot *rb, double *q, double *qd, double pos_scale) {
  const mb_model *m = &rb->m;
  if (m->floating) {
    v3_store(rng_vec3(r, -pos_scale, pos_scale), q);
    q_store(rng_quat(r), q + 3);
  }
  for (int i = 1; i < m->link_count; ++i) {
    const mb_link *L = &m->links[i];
    if (L->q_index >= 0)
      q[L->q_index] = L->joint_type == LCP_JOINT_PRISMATIC ? rng_range(r, -0.5, 0.5)
                                                           : rng_range(r, -LCP_PI, LCP_PI);
  }
  for (int k = 0; k < m->nv; ++k)
    qd[k] = rng_range(r, -1.0, 1.0);
}

/* A random robot of n links, then a random state of it in out->q, out->qd. */
static void robot_random(rng *r, int n, bool floating, double pos_scale, robot *out) {
  memset(out, 0, sizeof *out);
  lcp_robot_def_t *def = out->def = def_alloc(n);
  def->floating_base = floating;
  for (int i = 0; i < n; ++i) {
    lcp_link_def_t *L = &def->links[i];
    snprintf(L->name, sizeof L->name, "link%d", i);
    snprintf(L->joint_name, sizeof L->joint_name, "joint%d", i);
    if (i == 0) {
      L->parent = -1;
    } else {
      /* mostly chains, with branches anywhere */
      L->parent = rng_unit(r) < 0.5 ? i - 1 : rng_int(r, i);
      double t = rng_unit(r);
      L->joint_type = t < 0.15   ? LCP_JOINT_FIXED
                      : t < 0.3  ? LCP_JOINT_PRISMATIC
                      : t < 0.45 ? LCP_JOINT_CONTINUOUS
                                 : LCP_JOINT_REVOLUTE;
      v3_store(rng_vec3(r, -0.5, 0.5), L->origin_position);
      q_store(rng_quat(r), L->origin_orientation);
      vec3 ax;
      do
        ax = rng_vec3(r, -1.0, 1.0);
      while (v3_len(ax) < 0.3);
      v3_store(v3_scale(ax, rng_range(r, 0.5, 2.0)), L->axis); /* not unit: normalised */
      L->lower = -1.0;
      L->upper = 1.0;
    }
    v3_store(rng_vec3(r, -0.2, 0.2), L->com);
    if (i > 0 && L->joint_type == LCP_JOINT_FIXED && rng_unit(r) < 0.3) {
      L->mass = 0.0; /* a massless frame (sensor, tool point) */
      memset(L->inertia, 0, sizeof L->inertia);
    } else {
      L->mass = rng_range(r, 0.3, 3.0);
      mat3 I = random_inertia(r, L->mass);
      for (int k = 0; k < 9; ++k)
        L->inertia[k] = I.m[k / 3][k % 3];
    }
  }
  char err[256];
  assert_int_equal(lcp__mb_model_init(&out->m, def, err, sizeof err), LCP_OK);
  assert_int_equal(lcp__mb_data_init(&out->d, &out->m), LCP_OK);
  if (!floating) /* a fixed base somewhere in the world */
    out->m.links[0].parent_from_joint = rng_pose(r, -2.0, 2.0);
  out->nq = out->m.nq;
  out->nv = out->m.nv;
  out->n = out->m.link_count;
  out->q = test_doubles(out->nq);
  out->qd = test_doubles(out->nv);
  random_state(r, out, out->q, out->qd, pos_scale);
}

static void robot_free(robot *rb) {
  free(rb->q);
  free(rb->qd);
  lcp__mb_data_free(&rb->d);
  lcp__mb_model_free(&rb->m);
  lcp_robot_def_free(&rb->def);
}

/* Generalised force of world wrenches on links (force, torque about the link
 * origin) by Jᵀf, from Jacobian rows at the poses of the last kinematics. */
static void wrench_to_generalized(const robot *rb, const double *wrench, double *tau_ext) {
  int nv = rb->nv;
  double *J = test_doubles(nv);
  memset(tau_ext, 0, (size_t)nv * sizeof(double));
  for (int i = 0; i < rb->n; ++i) {
    vec3 p = rb->d.link_x[i].p;
    for (int k = 0; k < 6; ++k) {
      vec3 e = v3_zero();
      v3_set(&e, k % 3, 1.0);
      if (k < 3)
        lcp__mb_point_jacobian_row(&rb->m, &rb->d, i, p, e, v3_zero(), J);
      else
        lcp__mb_point_jacobian_row(&rb->m, &rb->d, i, p, v3_zero(), e, J);
      for (int j = 0; j < nv; ++j)
        tau_ext[j] += J[j] * wrench[6 * i + k];
    }
  }
  free(J);
}

/* ---- ABA against CRBA + RNEA ---- */

static void check_aba_against_dense(bool floating, bool wrenches, uint64_t seed) {
  rng r = {seed};
  double worst = 0.0;
  for (int trial = 0; trial < 300; ++trial) {
    int n = 1 + (trial < 30 ? trial : rng_int(&r, 30));
    robot rb;
    robot_random(&r, n, floating, trial % 5 == 0 ? 100.0 : 1.0, &rb);
    int nv = rb.nv;
    double *q = rb.q, *qd = rb.qd;
    double *tau = test_doubles(nv), *qdd = test_doubles(nv);
    double *bias = test_doubles(nv), *rhs = test_doubles(nv);
    double *M = test_doubles(nv * nv), *x = test_doubles(nv);
    double *wrench = test_doubles(6 * n);
    double *tau_ext = test_doubles(nv);
    for (int k = 0; k < nv; ++k)
      tau[k] = rng_range(&r, -5.0, 5.0);
    if (wrenches)
      for (int k = 0; k < 6 * n; ++k)
        wrench[k] = rng_range(&r, -5.0, 5.0);
    vec3 g = trial % 3 == 0 ? rng_vec3(&r, -10.0, 10.0) : v3(0.0, 0.0, -9.81);

    lcp__mb_forward_dynamics(&rb.m, q, qd, tau, wrenches ? wrench : NULL, g, &rb.d, qdd);
    lcp__mb_inverse_dynamics(&rb.m, q, qd, NULL, g, &rb.d, bias);
    lcp__mb_mass_matrix(&rb.m, q, &rb.d, M);
    if (wrenches)
      wrench_to_generalized(&rb, wrench, tau_ext);
    for (int k = 0; k < nv; ++k)
      rhs[k] = tau[k] + tau_ext[k] - bias[k];
    if (nv > 0) {
      assert_true(dense_cholesky(nv, M));
      dense_solve(nv, M, rhs, x);
    }
    double err = test_max_abs_diff(nv, qdd, x) / fmax(1.0, test_max_abs(nv, x));
    worst = fmax(worst, err);
    if (err > 1e-9)
      fail_msg("trial %d (%d links, %s): ABA differs from M⁻¹(τ − h) by %g", trial, n,
               floating ? "floating" : "fixed", err);
    free(tau), free(qdd), free(bias), free(rhs), free(M), free(x);
    free(wrench), free(tau_ext);
    robot_free(&rb);
  }
  print_message("  worst relative difference %.2e\n", worst);
}

static void test_aba_crba_rnea_fixed(void **state) {
  (void)state;
  check_aba_against_dense(false, false, 1);
}
static void test_aba_crba_rnea_floating(void **state) {
  (void)state;
  check_aba_against_dense(true, false, 2);
}
static void test_aba_link_wrenches_fixed(void **state) {
  (void)state;
  check_aba_against_dense(false, true, 3);
}
static void test_aba_link_wrenches_floating(void **state) {
  (void)state;
  check_aba_against_dense(true, true, 4);
}

/* RNEA(q, q̇, ABA(q, q̇, τ)) = τ */
static void test_rnea_inverts_aba(void **state) {
  (void)state;
  rng r = {5};
  double worst = 0.0;
  for (int trial = 0; trial < 400; ++trial) {
    bool floating = trial % 2 == 1;
    int n = 1 + rng_int(&r, 30);
    robot rb;
    robot_random(&r, n, floating, 1.0, &rb);
    int nv = rb.nv;
    double *q = rb.q, *qd = rb.qd;
    double *tau = test_doubles(nv), *qdd = test_doubles(nv);
    double *tau2 = test_doubles(nv);
    for (int k = 0; k < nv; ++k)
      tau[k] = rng_range(&r, -5.0, 5.0);
    vec3 g = v3(0.0, 0.0, -9.81);
    lcp__mb_forward_dynamics(&rb.m, q, qd, tau, NULL, g, &rb.d, qdd);
    lcp__mb_inverse_dynamics(&rb.m, q, qd, qdd, g, &rb.d, tau2);
    double err = test_max_abs_diff(nv, tau, tau2) / fmax(1.0, test_max_abs(nv, tau));
    worst = fmax(worst, err);
    if (err > 1e-9)
      fail_msg("trial %d (%d links): RNEA(ABA(τ)) differs from τ by %g", trial, n, err);
    free(tau), free(qdd), free(tau2);
    robot_free(&rb);
  }
  print_message("  worst relative difference %.2e\n", worst);
}

/* ---- responses against dense M⁻¹Jᵀ ---- */

static void test_responses(void **state) {
  (void)state;
  rng r = {6};
  double worst = 0.0;
  for (int trial = 0; trial < 300; ++trial) {
    bool floating = trial % 2 == 0;
    int n = 1 + rng_int(&r, 30);
    robot rb;
    robot_random(&r, n, floating, trial % 7 == 0 ? 50.0 : 1.0, &rb);
    int nv = rb.nv;
    double *q = rb.q, *qd = rb.qd;
    double *qdd = test_doubles(nv), *M = test_doubles(nv * nv);
    double *J = test_doubles(nv), *x = test_doubles(nv);
    double *y = test_doubles(nv), *e = test_doubles(nv);
    /* factors from a forward pass with velocities, gravity and torques: the
     * responses must ignore all of them */
    lcp__mb_forward_dynamics(&rb.m, q, qd, NULL, NULL, v3(0.0, 0.0, -9.81), &rb.d, qdd);
    lcp__mb_mass_matrix(&rb.m, q, &rb.d, M); /* same q: must not disturb the factors */
    if (nv > 0)
      assert_true(dense_cholesky(nv, M));
    for (int row = 0; row < 8; ++row) {
      int link = rng_int(&r, n);
      vec3 point = xf_point(&rb.d.link_x[link], rng_vec3(&r, -0.5, 0.5));
      vec3 dir = rng_vec3(&r, -1.0, 1.0);
      vec3 ang_dir = row % 2 ? rng_vec3(&r, -1.0, 1.0) : v3_zero();
      if (row == 3)
        dir = v3_zero();
      lcp__mb_point_jacobian_row(&rb.m, &rb.d, link, point, dir, ang_dir, J);
      dense_solve(nv, M, J, x);
      lcp__mb_response_point(&rb.m, &rb.d, link, point, dir, ang_dir, y);
      double scale = test_max_abs(nv, x);
      double err = test_max_abs_diff(nv, x, y) / fmax(scale, 1e-300);
      if (scale == 0.0) /* e.g. a link welded to a fixed base */
        err = test_max_abs(nv, y);
      worst = fmax(worst, err);
      if (err > 1e-9)
        fail_msg("trial %d (%d links) row %d on link %d: response differs by %g", trial, n, row,
                 link, err);
    }
    /* three directions at one point in one pass: each equals M⁻¹Jᵀ */
    {
      int link = rng_int(&r, n);
      vec3 point = xf_point(&rb.d.link_x[link], rng_vec3(&r, -0.5, 0.5));
      vec3 dirs[3];
      for (int k = 0; k < 3; ++k)
        dirs[k] = rng_vec3(&r, -1.0, 1.0);
      double *three = test_doubles(3 * nv + 1);
      lcp__mb_response_point3(&rb.m, &rb.d, link, point, dirs, three);
      for (int k = 0; k < 3; ++k) {
        lcp__mb_point_jacobian_row(&rb.m, &rb.d, link, point, dirs[k], v3_zero(), J);
        dense_solve(nv, M, J, x);
        double scale = test_max_abs(nv, x);
        double err = scale == 0.0 ? test_max_abs(nv, three + k * nv)
                                  : test_max_abs_diff(nv, x, three + k * nv) / scale;
        worst = fmax(worst, err);
        if (err > 1e-9)
          fail_msg("trial %d (%d links) direction %d on link %d: response3 differs by %g", trial, n,
                   k, link, err);
      }
      free(three);
    }
    for (int k = 0; k < nv; ++k) {
      memset(e, 0, (size_t)nv * sizeof(double));
      e[k] = 1.0;
      dense_solve(nv, M, e, x);
      lcp__mb_response_dof(&rb.m, &rb.d, k, y);
      double err = test_max_abs_diff(nv, x, y) / test_max_abs(nv, x);
      worst = fmax(worst, err);
      if (err > 1e-9)
        fail_msg("trial %d (%d links) dof %d: response differs by %g", trial, n, k, err);
    }
    free(qdd), free(M), free(J), free(x), free(y), free(e);
    robot_free(&rb);
  }
  print_message("  worst relative difference %.2e\n", worst);
}

/* ---- Jacobian rows against finite differences and link velocities ---- */

/* q ⊕ (±eps e_k) into qp and qm: rb->q moved by ±eps along velocity
 * coordinate k, for central differences. */
static void displace(const robot *rb, int k, double eps, double *qp, double *qm) {
  double *e = test_doubles(rb->nv);
  e[k] = 1.0;
  memcpy(qp, rb->q, (size_t)rb->nq * sizeof(double));
  memcpy(qm, rb->q, (size_t)rb->nq * sizeof(double));
  lcp__mb_integrate_positions(&rb->m, qp, e, eps);
  lcp__mb_integrate_positions(&rb->m, qm, e, -eps);
  free(e);
}

static vec3 vee_antisym(const mat3 *A) {
  return v3(0.5 * (A->m[2][1] - A->m[1][2]), 0.5 * (A->m[0][2] - A->m[2][0]),
            0.5 * (A->m[1][0] - A->m[0][1]));
}

static void test_jacobian(void **state) {
  (void)state;
  rng r = {7};
  const double eps = 1e-6;
  double worst_fd = 0.0, worst_v = 0.0;
  for (int trial = 0; trial < 120; ++trial) {
    bool floating = trial % 2 == 0;
    int n = 1 + rng_int(&r, 20);
    robot rb;
    robot_random(&r, n, floating, 1.0, &rb);
    int nq = rb.nq, nv = rb.nv;
    double *q = rb.q, *qd = rb.qd;
    double *qp = test_doubles(nq), *qm = test_doubles(nq);
    double *Jl = test_doubles(3 * nv);
    double *Ja = test_doubles(3 * nv);
    double *J = test_doubles(nv);
    int link = rng_int(&r, n);
    vec3 local = rng_vec3(&r, -0.5, 0.5);
    lcp__mb_kinematics(&rb.m, q, qd, &rb.d);
    xform X = rb.d.link_x[link];
    vec3 point = xf_point(&X, local);

    /* J·q̇ = dir·v(point) + ang_dir·ω, from the velocities of lcp__mb_kinematics */
    vec3 dir = rng_vec3(&r, -1.0, 1.0);
    vec3 ang_dir = rng_vec3(&r, -1.0, 1.0);
    lcp__mb_point_jacobian_row(&rb.m, &rb.d, link, point, dir, ang_dir, J);
    double jv = 0.0, mag = 0.0;
    for (int k = 0; k < nv; ++k) {
      jv += J[k] * qd[k];
      mag += fabs(J[k] * qd[k]);
    }
    vec3 w = rb.d.link_w[link];
    vec3 vp = v3_add(rb.d.link_v[link], v3_cross(w, v3_sub(point, X.p)));
    double direct = v3_dot(dir, vp) + v3_dot(ang_dir, w);
    double errv = fabs(jv - direct) / fmax(mag, 1e-300);
    worst_v = fmax(worst_v, errv);
    if (errv > 1e-12)
      fail_msg("trial %d: J·q̇ = %.17g but the point velocity gives %.17g", trial, jv, direct);

    for (int c = 0; c < 3; ++c) {
      vec3 ec = v3_zero();
      v3_set(&ec, c, 1.0);
      lcp__mb_point_jacobian_row(&rb.m, &rb.d, link, point, ec, v3_zero(), Jl + c * nv);
      lcp__mb_point_jacobian_row(&rb.m, &rb.d, link, point, v3_zero(), ec, Ja + c * nv);
    }
    for (int k = 0; k < nv; ++k) {
      displace(&rb, k, eps, qp, qm);
      lcp__mb_kinematics(&rb.m, qp, NULL, &rb.d);
      xform Xp = rb.d.link_x[link];
      lcp__mb_kinematics(&rb.m, qm, NULL, &rb.d);
      xform Xm = rb.d.link_x[link];
      vec3 dp = v3_scale(v3_sub(xf_point(&Xp, local), xf_point(&Xm, local)), 0.5 / eps);
      mat3 RmT = m3_transpose(&Xm.R), dR = m3_mul(&Xp.R, &RmT);
      vec3 dw = v3_scale(vee_antisym(&dR), 0.5 / eps);
      for (int c = 0; c < 3; ++c) {
        double el = fabs(Jl[c * nv + k] - v3_get(dp, c)) / fmax(1.0, fabs(v3_get(dp, c)));
        double ea = fabs(Ja[c * nv + k] - v3_get(dw, c)) / fmax(1.0, fabs(v3_get(dw, c)));
        worst_fd = fmax(worst_fd, fmax(el, ea));
        if (el > 1e-6 || ea > 1e-6)
          fail_msg("trial %d link %d dof %d axis %d: J (%g, %g) vs finite differences (%g, %g)",
                   trial, link, k, c, Jl[c * nv + k], Ja[c * nv + k], v3_get(dp, c), v3_get(dw, c));
      }
    }
    free(qp), free(qm), free(Jl), free(Ja), free(J);
    robot_free(&rb);
  }
  print_message("  worst: finite differences %.2e, velocity %.2e\n", worst_fd, worst_v);
}

/* ---- energies ---- */

static void test_energy(void **state) {
  (void)state;
  rng r = {8};
  const double eps = 1e-5;
  double worst_ke = 0.0, worst_pe = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    bool floating = trial % 2 == 0;
    int n = 1 + rng_int(&r, 30);
    robot rb;
    robot_random(&r, n, floating, 1.0, &rb);
    int nq = rb.nq, nv = rb.nv;
    double *q = rb.q, *qd = rb.qd;
    double *qp = test_doubles(nq), *qm = test_doubles(nq);
    double *M = test_doubles(nv * nv), *gq = test_doubles(nv);
    double *zero = test_doubles(nv);
    lcp__mb_kinematics(&rb.m, q, qd, &rb.d);
    double ke = lcp__mb_kinetic_energy(&rb.m, &rb.d);
    lcp__mb_mass_matrix(&rb.m, q, &rb.d, M);
    double ref = 0.0;
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j)
        ref += 0.5 * qd[i] * M[i * nv + j] * qd[j];
    double err = fabs(ke - ref) / fmax(ref, 1e-300);
    if (nv == 0)
      err = fabs(ke);
    worst_ke = fmax(worst_ke, err);
    if (err > 1e-12)
      fail_msg("trial %d: kinetic energy %.17g, ½q̇ᵀMq̇ %.17g", trial, ke, ref);

    /* generalised gravity force (RNEA at rest) = ∂V/∂q along each velocity coordinate */
    vec3 g = rng_vec3(&r, -10.0, 10.0);
    lcp__mb_inverse_dynamics(&rb.m, q, zero, NULL, g, &rb.d, gq);
    for (int k = 0; k < nv; ++k) {
      displace(&rb, k, eps, qp, qm);
      lcp__mb_kinematics(&rb.m, qp, NULL, &rb.d);
      double vp = lcp__mb_potential_energy(&rb.m, &rb.d, g);
      lcp__mb_kinematics(&rb.m, qm, NULL, &rb.d);
      double vm = lcp__mb_potential_energy(&rb.m, &rb.d, g);
      double dv = (vp - vm) / (2 * eps);
      double errp = fabs(dv - gq[k]) / fmax(1.0, fabs(gq[k]));
      worst_pe = fmax(worst_pe, errp);
      if (errp > 1e-6)
        fail_msg("trial %d dof %d: gravity force %g, dV/dq %g", trial, k, gq[k], dv);
    }
    free(qp), free(qm), free(M), free(gq), free(zero);
    robot_free(&rb);
  }
  print_message("  worst: kinetic %.2e, potential gradient %.2e\n", worst_ke, worst_pe);
}

/* ---- closed forms ---- */

/* A pendulum about y with its centre of mass at (l, 0, 0) and a prismatic
 * slider along z: θ̈ = (τ + m g l cos θ)/(I_yy + m l²), z̈ = τ/m − g. */
static void test_pendulum_and_slider(void **state) {
  (void)state;
  lcp_robot_def_t *def = def_alloc(3);
  const double m = 2.0, l = 0.7, Iyy = 0.3, g = 9.81;
  lcp_link_def_t *P = &def->links[1], *S = &def->links[2];
  strcpy(P->name, "pendulum");
  P->parent = 0;
  P->joint_type = LCP_JOINT_REVOLUTE;
  P->axis[0] = 0, P->axis[1] = 1, P->axis[2] = 0;
  P->mass = m;
  P->com[0] = l;
  P->inertia[0] = 0.1, P->inertia[4] = Iyy, P->inertia[8] = 0.2;
  strcpy(S->name, "slider");
  S->parent = 0;
  S->joint_type = LCP_JOINT_PRISMATIC;
  S->origin_position[0] = 3.0;
  S->mass = 1.5;
  mb_model mo;
  mb_data d;
  assert_int_equal(lcp__mb_model_init(&mo, def, NULL, 0), LCP_OK);
  assert_int_equal(lcp__mb_data_init(&d, &mo), LCP_OK);
  double q[2] = {0.4, 0.1}, qd[2] = {1.3, -0.5}, tau[2] = {0.7, 2.0}, qdd[2];
  lcp__mb_forward_dynamics(&mo, q, qd, tau, NULL, v3(0, 0, -g), &d, qdd);
  double th = (tau[0] + m * g * l * cos(q[0])) / (Iyy + m * l * l);
  ASSERT_NEAR(qdd[0], th, 1e-12);
  ASSERT_NEAR(qdd[1], tau[1] / 1.5 - g, 1e-12);
  /* link frame = joint frame moved by the joint value */
  ASSERT_NEAR(d.link_x[2].p.z, 0.1, 1e-15);
  ASSERT_NEAR(d.link_x[1].R.m[0][2], sin(0.4), 1e-15);

  /* A fixed base turned by R sees gravity Rᵀg in its own frame. */
  quat qb = q_from_axis_angle(v3(1, 2, 3), 0.9);
  mo.links[0].parent_from_joint = xf_make(v3(5, -2, 1), qb);
  double qdd2[2];
  lcp__mb_forward_dynamics(&mo, q, qd, tau, NULL, v3(0, 0, -g), &d, qdd2);
  vec3 gl = q_rotate(q_conj(qb), v3(0, 0, -g));
  mo.links[0].parent_from_joint = xf_identity();
  double qdd3[2];
  lcp__mb_forward_dynamics(&mo, q, qd, tau, NULL, gl, &d, qdd3);
  ASSERT_NEAR(qdd2[0], qdd3[0], 1e-12);
  ASSERT_NEAR(qdd2[1], qdd3[1], 1e-12);
  lcp__mb_data_free(&d);
  lcp__mb_model_free(&mo);
  lcp_robot_def_free(&def);
}

/* A floating single body: the centre of mass falls with g and the rotation
 * obeys Euler's equations I α = −ω × I ω; the base origin, off the centre of
 * mass by c, accelerates by a_c − α × c − ω × (ω × c). */
static void test_free_body(void **state) {
  (void)state;
  rng r = {9};
  for (int trial = 0; trial < 50; ++trial) {
    robot rb;
    robot_random(&r, 1, true, 3.0, &rb);
    double *q = rb.q, *qd = rb.qd, tau[6], qdd[6];
    for (int k = 0; k < 6; ++k)
      tau[k] = rng_range(&r, -3, 3);
    vec3 g = rng_vec3(&r, -10.0, 10.0);
    lcp__mb_forward_dynamics(&rb.m, q, qd, tau, NULL, g, &rb.d, qdd);
    const mb_link *L = &rb.m.links[0];
    const xform *X = &rb.d.link_x[0];
    vec3 c = xf_vector(X, L->com), w = v3_from(qd + 3);
    mat3 I = m3_rotate_tensor(&X->R, &L->inertia), Iinv = m3_zero();
    assert_true(m3_inverse(&I, &Iinv, 0.0));
    /* the wrench tau acts at the base origin: about the centre of mass its
     * torque is n + (−c) × f */
    vec3 f = v3_from(tau), n = v3_add(v3_from(tau + 3), v3_cross(v3_neg(c), f));
    vec3 alpha = m3_mulv(&Iinv, v3_sub(n, v3_cross(w, m3_mulv(&I, w))));
    vec3 ac = v3_add(g, v3_scale(f, 1.0 / L->mass));
    vec3 ao = v3_sub(v3_sub(ac, v3_cross(alpha, c)), v3_cross(w, v3_cross(w, c)));
    for (int k = 0; k < 3; ++k) {
      ASSERT_NEAR(qdd[k], v3_get(ao, k), 1e-10);
      ASSERT_NEAR(qdd[3 + k], v3_get(alpha, k), 1e-10);
    }
    robot_free(&rb);
  }
}

/* ---- conservation along trajectories ---- */

/* ẋ for RK4 on (q, q̇) with the quaternion as four raw coordinates,
 * q̇_quat = ½ (0, ω) ⊗ q; lcp__mb_kinematics normalises it when it reads it. */
static void state_derivative(robot *rb, const double *q, const double *qd, const double *tau,
                             vec3 g, double *dq, double *dqd) {
  const mb_model *m = &rb->m;
  lcp__mb_forward_dynamics(m, q, qd, tau, NULL, g, &rb->d, dqd);
  int oq = 0, ov = 0;
  if (m->floating) {
    memcpy(dq, qd, 3 * sizeof(double));
    quat d = q_mul((quat){0.0, qd[3], qd[4], qd[5]}, q_from(q + 3));
    q_store((quat){0.5 * d.w, 0.5 * d.x, 0.5 * d.y, 0.5 * d.z}, dq + 3);
    oq = 7;
    ov = 6;
  }
  for (int j = 0; j < m->joint_count; ++j)
    dq[oq + j] = qd[ov + j];
}

static void rk4_step(robot *rb, double *q, double *qd, const double *tau, vec3 g, double h,
                     double *buf) {
  int nq = rb->nq, nv = rb->nv;
  double *kq[4], *kv[4], *tq = buf + 8 * (nq + nv), *tv = tq + nq;
  for (int s = 0; s < 4; ++s) {
    kq[s] = buf + s * (nq + nv);
    kv[s] = kq[s] + nq;
  }
  state_derivative(rb, q, qd, tau, g, kq[0], kv[0]);
  const double c[3] = {0.5, 0.5, 1.0};
  for (int s = 1; s < 4; ++s) {
    for (int i = 0; i < nq; ++i)
      tq[i] = q[i] + c[s - 1] * h * kq[s - 1][i];
    for (int i = 0; i < nv; ++i)
      tv[i] = qd[i] + c[s - 1] * h * kv[s - 1][i];
    state_derivative(rb, tq, tv, tau, g, kq[s], kv[s]);
  }
  for (int i = 0; i < nq; ++i)
    q[i] += h / 6 * (kq[0][i] + 2 * kq[1][i] + 2 * kq[2][i] + kq[3][i]);
  for (int i = 0; i < nv; ++i)
    qd[i] += h / 6 * (kv[0][i] + 2 * kv[1][i] + 2 * kv[2][i] + kv[3][i]);
  if (rb->m.floating)
    q_store(q_normalize(q_from(q + 3)), q + 3);
}

static void momentum_at(robot *rb, const double *q, const double *qd, double out[6]) {
  vec3 P, L;
  lcp__mb_kinematics(&rb->m, q, qd, &rb->d);
  lcp__mb_momentum(&rb->m, &rb->d, &P, &L);
  v3_store(P, out);
  v3_store(L, out + 3);
}

/* Joint torques are internal: a floating robot in zero gravity keeps its
 * linear and angular momentum. Checked three ways:
 *  1. exactly, in continuous time: the rate of change of the momentum along
 *     (q̇, q̈ = ABA) is zero (central differences at ε and ε/2, Richardson
 *     extrapolated, error O(ε⁴)), to 1e-9 relative;
 *  2. along 1000 RK4 steps of 1 ms (error O(h⁴)), to 1e-9 relative;
 *  3. semi-implicit Euler (the engine's integrator) cannot
 *     conserve it exactly in these coordinates: the momentum is A(q) q̇ with
 *     A depending on the configuration, and q̇ₖ₊₁ = q̇ₖ + h q̈ₖ followed by
 *     qₖ₊₁ = qₖ ⊕ h q̇ₖ₊₁ changes it per step by
 *     h (A q̈ + Ȧ q̇ₖ₊₁) + O(h²) = h Ȧ (q̇ₖ₊₁ − q̇ₖ) + O(h²) = O(h²),
 *     since A q̈ + Ȧ q̇ₖ = 0 is exactly what the ABA satisfies (point 1):
 *     a drift of first order in h over a fixed time. The test checks that
 *     the drift halves when h halves, i.e. that it is the integrator's and
 *     not the dynamics'. */
static void test_momentum_conservation(void **state) {
  (void)state;
  rng r = {10};
  double worst_rate = 0.0, worst_rk4 = 0.0, worst_euler = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    int n = trial < 2 ? 1 + trial : 2 + rng_int(&r, 19);
    robot rb;
    robot_random(&r, n, true, 1.0, &rb);
    int nq = rb.nq, nv = rb.nv;
    double *q0 = rb.q, *qd0 = rb.qd;
    double *q = test_doubles(nq), *qd = test_doubles(nv);
    double *tau = test_doubles(nv), *qdd = test_doubles(nv);
    double *qp = test_doubles(nq), *qdp = test_doubles(nv);
    double *buf = test_doubles(10 * (nq + nv));
    /* torques scaled by the joint's own inertia, so accelerations stay O(1)
     * and RK4 resolves the motion */
    lcp__mb_forward_dynamics(&rb.m, q0, qd0, NULL, NULL, v3_zero(), &rb.d, qdd);
    for (int k = 6; k < nv; ++k) {
      lcp__mb_response_dof(&rb.m, &rb.d, k, qdp); /* (M⁻¹)_kk: the joint's mobility */
      tau[k] = rng_range(&r, -0.3, 0.3) / qdp[k];
    }
    const vec3 g0 = v3_zero();
    double P0[6];
    momentum_at(&rb, q0, qd0, P0);
    double scale_l = v3_len(v3_from(P0)), scale_a = v3_len(v3_from(P0 + 3));

    /* 1. d/dt momentum = 0: central differences at ε and ε/2, Richardson
     * extrapolated (error O(ε⁴)) */
    lcp__mb_forward_dynamics(&rb.m, q0, qd0, tau, NULL, g0, &rb.d, qdd);
    double D[2][6];
    for (int level = 0; level < 2; ++level) {
      const double eps = level == 0 ? 2e-4 : 1e-4;
      double Pp[6], Pm[6];
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        memcpy(qp, q0, (size_t)nq * sizeof(double));
        lcp__mb_integrate_positions(&rb.m, qp, qd0, sgn * eps);
        for (int k = 0; k < nv; ++k)
          qdp[k] = qd0[k] + sgn * eps * qdd[k];
        momentum_at(&rb, qp, qdp, sgn > 0 ? Pp : Pm);
      }
      for (int k = 0; k < 6; ++k)
        D[level][k] = (Pp[k] - Pm[k]) / (2 * eps);
    }
    for (int k = 0; k < 6; ++k) {
      double rate = (4 * D[1][k] - D[0][k]) / 3 / (k < 3 ? scale_l : scale_a);
      worst_rate = fmax(worst_rate, fabs(rate));
      if (fabs(rate) > 1e-9)
        fail_msg("trial %d: momentum component %d changes at relative rate %g", trial, k, rate);
    }

    /* 2. RK4 */
    memcpy(q, q0, (size_t)nq * sizeof(double));
    memcpy(qd, qd0, (size_t)nv * sizeof(double));
    for (int s = 0; s < 1000; ++s)
      rk4_step(&rb, q, qd, tau, g0, 1e-3, buf);
    double P1[6];
    momentum_at(&rb, q, qd, P1);
    double el = v3_len(v3_sub(v3_from(P1), v3_from(P0))) / scale_l;
    double ea = v3_len(v3_sub(v3_from(P1 + 3), v3_from(P0 + 3))) / scale_a;
    worst_rk4 = fmax(worst_rk4, fmax(el, ea));
    if (el > 1e-9 || ea > 1e-9)
      fail_msg("trial %d (%d links): RK4 momentum drift linear %g angular %g", trial, n, el, ea);

    /* 3. semi-implicit Euler: first-order drift */
    double drift[2];
    for (int pass = 0; pass < 2; ++pass) {
      double h = pass == 0 ? 1e-3 : 5e-4;
      memcpy(q, q0, (size_t)nq * sizeof(double));
      memcpy(qd, qd0, (size_t)nv * sizeof(double));
      for (int s = 0; s < (pass == 0 ? 1000 : 2000); ++s) {
        lcp__mb_forward_dynamics(&rb.m, q, qd, tau, NULL, g0, &rb.d, qdd);
        for (int k = 0; k < nv; ++k)
          qd[k] += h * qdd[k];
        lcp__mb_integrate_positions(&rb.m, q, qd, h);
      }
      double P2[6];
      momentum_at(&rb, q, qd, P2);
      drift[pass] = v3_len(v3_sub(v3_from(P2), v3_from(P0))) / scale_l +
                    v3_len(v3_sub(v3_from(P2 + 3), v3_from(P0 + 3))) / scale_a;
    }
    worst_euler = fmax(worst_euler, drift[0]);
    if (n > 1 || drift[0] > 1e-12) { /* a single free body may happen to drift less */
      double ratio = drift[1] / drift[0];
      if (!(ratio > 0.4 && ratio < 0.6) && drift[0] > 1e-10)
        fail_msg("trial %d: semi-implicit Euler drift %g then %g: not first order", trial, drift[0],
                 drift[1]);
    }
    free(q), free(qd), free(tau), free(qdd), free(qp), free(qdp), free(buf);
    robot_free(&rb);
  }
  print_message("  worst relative: rate %.2e, RK4 drift %.2e, semi-implicit Euler drift %.2e "
                "(1000 steps of 1 ms)\n",
                worst_rate, worst_rk4, worst_euler);
}

/* With gravity and no joint forces, kinetic + potential energy is constant
 * (fixed and floating bases; RK4, 1000 steps). */
static void test_energy_conservation(void **state) {
  (void)state;
  rng r = {11};
  double worst = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    bool floating = trial % 2 == 0;
    int n = 1 + rng_int(&r, 15);
    robot rb;
    robot_random(&r, n, floating, 1.0, &rb);
    int nq = rb.nq, nv = rb.nv;
    double *q = rb.q, *qd = rb.qd;
    double *buf = test_doubles(10 * (nq + nv));
    vec3 g = v3(0.0, 0.0, -9.81);
    lcp__mb_kinematics(&rb.m, q, qd, &rb.d);
    double ke0 = lcp__mb_kinetic_energy(&rb.m, &rb.d),
           e0 = ke0 + lcp__mb_potential_energy(&rb.m, &rb.d, g);
    double mass = 0.0;
    for (int i = 0; i < n; ++i)
      mass += rb.m.links[i].mass;
    for (int s = 0; s < 1000; ++s)
      rk4_step(&rb, q, qd, NULL, g, 5e-4, buf);
    lcp__mb_kinematics(&rb.m, q, qd, &rb.d);
    double e1 = lcp__mb_kinetic_energy(&rb.m, &rb.d) + lcp__mb_potential_energy(&rb.m, &rb.d, g);
    /* scale: the energy exchanged, at least kinetic energy plus m g · 1 m */
    double err = fabs(e1 - e0) / (ke0 + mass * 9.81);
    worst = fmax(worst, err);
    if (err > 1e-9)
      fail_msg("trial %d (%d links, %s): energy %.17g → %.17g", trial, n,
               floating ? "floating" : "fixed", e0, e1);
    free(buf);
    robot_free(&rb);
  }
  print_message("  worst relative energy drift %.2e\n", worst);
}

/* ---- determinism and workspace hygiene ---- */

static void test_deterministic(void **state) {
  (void)state;
  rng r = {12};
  robot rb;
  robot_random(&r, 25, true, 1.0, &rb);
  int nv = rb.nv;
  double *q = rb.q, *qd = rb.qd;
  double *a = test_doubles(nv), *b = test_doubles(nv);
  double *c = test_doubles(nv), *e = test_doubles(nv);
  lcp__mb_forward_dynamics(&rb.m, q, qd, NULL, NULL, v3(0, 0, -9.81), &rb.d, a);
  lcp__mb_response_point(&rb.m, &rb.d, 20, v3(0.1, 0.2, 0.3), v3(0, 0, 1), v3_zero(), c);
  lcp__mb_response_dof(&rb.m, &rb.d, nv - 1, e);
  lcp__mb_forward_dynamics(&rb.m, q, qd, NULL, NULL, v3(0, 0, -9.81), &rb.d, b);
  assert_memory_equal(a, b, (size_t)nv * sizeof(double));
  lcp__mb_response_point(&rb.m, &rb.d, 20, v3(0.1, 0.2, 0.3), v3(0, 0, 1), v3_zero(), b);
  assert_memory_equal(c, b, (size_t)nv * sizeof(double));
  lcp__mb_response_dof(&rb.m, &rb.d, nv - 1, b);
  assert_memory_equal(e, b, (size_t)nv * sizeof(double));
  free(a), free(b), free(c), free(e);
  robot_free(&rb);
}

/* ---- validation ---- */

static lcp_robot_def_t *valid_def(bool floating) {
  lcp_robot_def_t *def = def_alloc(4);
  def->floating_base = floating;
  const char *names[4] = {"base", "upper_arm", "forearm", "tool"};
  for (int i = 0; i < 4; ++i) {
    strcpy(def->links[i].name, names[i]);
    def->links[i].joint_type = i == 0 || i == 3 ? LCP_JOINT_FIXED : LCP_JOINT_REVOLUTE;
    def->links[i].origin_position[2] = 0.3;
  }
  def->links[3].mass = 0.0; /* massless tool frame on a fixed joint: fine */
  memset(def->links[3].inertia, 0, sizeof def->links[3].inertia);
  return def;
}

static void expect_rejected(lcp_robot_def_t *def, const char *name, const char *what) {
  mb_model m;
  char err[256];
  memset(&m, 0xab, sizeof m);
  int rc = lcp__mb_model_init(&m, def, err, sizeof err);
  if (rc != LCP_ERR_INVALID_ARGUMENT)
    fail_msg("%s: accepted (rc %d)", what, rc);
  if (!strstr(err, name))
    fail_msg("%s: message '%s' does not name '%s'", what, err, name);
  assert_null(m.links);
  assert_int_equal(m.link_count, 0);
  lcp_robot_def_free(&def);
}

static void test_validation(void **state) {
  (void)state;
  lcp_robot_def_t *def = valid_def(false);
  mb_model m;
  char err[256];
  assert_int_equal(lcp__mb_model_init(&m, def, err, sizeof err), LCP_OK);
  assert_int_equal(m.nv, 2);
  assert_int_equal(m.nq, 2);
  assert_int_equal(m.joint_count, 2);
  assert_int_equal(m.links[3].v_index, -1);
  assert_int_equal(m.links[2].v_index, 1);
  lcp__mb_model_free(&m);
  lcp_robot_def_free(&def);
  def = valid_def(true);
  assert_int_equal(lcp__mb_model_init(&m, def, err, sizeof err), LCP_OK);
  assert_int_equal(m.nv, 8);
  assert_int_equal(m.nq, 9);
  assert_int_equal(m.links[1].q_index, 7);
  assert_int_equal(m.links[1].v_index, 6);
  lcp__mb_model_free(&m);
  lcp_robot_def_free(&def);

  def = valid_def(false);
  def->links[2].parent = 2;
  expect_rejected(def, "forearm", "parent not before the link");
  def = valid_def(false);
  def->links[2].parent = 3;
  expect_rejected(def, "forearm", "parent after the link");
  def = valid_def(false);
  def->links[2].parent = -1;
  expect_rejected(def, "forearm", "a second root");
  def = valid_def(false);
  def->links[0].parent = 0;
  expect_rejected(def, "base", "base with a parent");
  def = valid_def(false);
  def->links[1].mass = 0.0;
  expect_rejected(def, "upper_arm", "massless revolute link");
  def = valid_def(false);
  def->links[3].mass = -1.0;
  expect_rejected(def, "tool", "negative mass on a fixed link");
  def = valid_def(true);
  def->links[0].mass = 0.0;
  expect_rejected(def, "base", "massless floating base");
  def = valid_def(false);
  def->links[2].inertia[8] = -0.1;
  expect_rejected(def, "forearm", "indefinite inertia");
  def = valid_def(false);
  def->links[2].inertia[8] = 0.0;
  expect_rejected(def, "forearm", "singular inertia on a moving link");
  def = valid_def(false);
  def->links[1].inertia[1] = 0.5;
  expect_rejected(def, "upper_arm", "asymmetric inertia");
  def = valid_def(false);
  def->links[1].inertia[1] = def->links[1].inertia[3] = 2.0;
  expect_rejected(def, "upper_arm", "symmetric but not positive definite");
  def = valid_def(false);
  def->links[3].inertia[0] = -1.0;
  expect_rejected(def, "tool", "negative inertia on a massless fixed link");
  def = valid_def(false);
  def->links[2].axis[0] = def->links[2].axis[1] = def->links[2].axis[2] = 0.0;
  expect_rejected(def, "forearm", "zero axis");
  def = valid_def(false);
  def->links[2].joint_type = (lcp_joint_type_t)7;
  expect_rejected(def, "forearm", "unknown joint type");

  /* NaN anywhere */
  for (int field = 0; field < 9; ++field) {
    def = valid_def(false);
    lcp_link_def_t *L = &def->links[2];
    switch (field) {
    case 0:
      L->origin_position[1] = NAN;
      break;
    case 1:
      L->origin_orientation[2] = NAN;
      break;
    case 2:
      L->axis[0] = NAN;
      break;
    case 3:
      L->mass = NAN;
      break;
    case 4:
      L->com[2] = NAN;
      break;
    case 5:
      L->inertia[4] = NAN;
      break;
    case 6:
      L->lower = NAN;
      break;
    case 7:
      L->damping = NAN;
      break;
    default:
      L->mass = INFINITY;
      break;
    }
    char what[32];
    snprintf(what, sizeof what, "NaN in field %d", field);
    expect_rejected(def, "forearm", what);
  }
  def = valid_def(false);
  def->links[0].inertia[0] = NAN;
  expect_rejected(def, "base", "NaN in the base inertia");

  /* A zero quaternion cannot be normalised. */
  def = valid_def(false);
  memset(def->links[1].origin_orientation, 0, sizeof def->links[1].origin_orientation);
  expect_rejected(def, "upper_arm", "zero origin quaternion");
  assert_int_equal(lcp__mb_model_init(&m, NULL, err, sizeof err), LCP_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validation),
      cmocka_unit_test(test_pendulum_and_slider),
      cmocka_unit_test(test_free_body),
      cmocka_unit_test(test_aba_crba_rnea_fixed),
      cmocka_unit_test(test_aba_crba_rnea_floating),
      cmocka_unit_test(test_aba_link_wrenches_fixed),
      cmocka_unit_test(test_aba_link_wrenches_floating),
      cmocka_unit_test(test_rnea_inverts_aba),
      cmocka_unit_test(test_responses),
      cmocka_unit_test(test_jacobian),
      cmocka_unit_test(test_energy),
      cmocka_unit_test(test_momentum_conservation),
      cmocka_unit_test(test_energy_conservation),
      cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
