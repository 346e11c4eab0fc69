/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the boxed LCP solvers (server/engine/solver_*.c).
 *
 * Random problems are built in row form with M = I, so that A = J Jᵀ is known
 * exactly: J = Q diag(√e) with Q orthogonal and eigenvalues e in [0.1, 10]
 * (A = Q diag(e) Qᵀ). lcp__dantzig_dense is checked against the LCP
 * conditions themselves, and the other solvers against it. All randomness
 * comes from a fixed-seed splitmix64, so every run sees the same problems. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "arena.h"
#include "lcp_math.h"
#include "solver.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dense helpers ---- */

/* The largest violation of the boxed LCP conditions by λ: outside [lo, hi],
 * or w = Aλ + b of the wrong sign for where λ sits. */
static double lcp_violation(int n, const double *A, const double *b, const double *lo,
                            const double *hi, const double *lambda) {
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    double w = b[i];
    for (int j = 0; j < n; ++j)
      w += A[i * n + j] * lambda[j];
    double l = lambda[i], v;
    if (l < lo[i] || l > hi[i])
      v = fmax(lo[i] - l, l - hi[i]);
    else if (l == lo[i] && l == hi[i])
      v = 0.0;
    else if (l == lo[i])
      v = fmax(0.0, -w);
    else if (l == hi[i])
      v = fmax(0.0, w);
    else
      v = fabs(w);
    worst = fmax(worst, v);
  }
  return worst;
}

/* ---- random boxed LCPs in row form ---- */

typedef struct lcp_case {
  int n;      /* rows = dofs */
  double *Jf; /* n×n, row i = J_i; M = I so M⁻¹J_iᵀ = J_iᵀ */
  double *A;  /* J Jᵀ + diag(cfm) */
  double *b, *lo, *hi, *cfm, *u;
  solver_row *rows;
  double *J, *T; /* 2n coefficients per row: side 0 at 2n·i, side 1 at 2n·i + n */
  double *velocity;
  double *reference; /* λ by lcp__dantzig_dense on A (case_solve_reference) */
  solver_problem problem;
} lcp_case;

/* A random SPD boxed LCP of size n. split: each row's J is cut into two
 * overlapping sides of different lengths, the overlap shared between them
 * with different random weights in J and in M⁻¹Jᵀ, so only a solver that
 * forms the cross terms of overlapping sides gets A right. */
static void case_make(lcp_case *c, rng *r, int n, bool split) {
  c->n = n;
  c->Jf = test_doubles(n * n);
  c->A = test_doubles(n * n);
  c->b = test_doubles(n);
  c->lo = test_doubles(n);
  c->hi = test_doubles(n);
  c->cfm = test_doubles(n);
  c->u = test_doubles(n);
  c->rows = test_alloc((size_t)n, sizeof(solver_row));
  c->J = test_doubles(2 * n * n);
  c->T = test_doubles(2 * n * n);
  c->velocity = test_doubles(n);
  c->reference = test_doubles(n);

  /* Q: Gram–Schmidt (twice, for orthogonality to rounding) on random rows. */
  double *Q = test_doubles(n * n);
  for (int i = 0; i < n * n; ++i)
    Q[i] = rng_range(r, -1.0, 1.0);
  for (int i = 0; i < n; ++i) {
    for (int pass = 0; pass < 2; ++pass)
      for (int j = 0; j < i; ++j) {
        double d = 0.0;
        for (int k = 0; k < n; ++k)
          d += Q[i * n + k] * Q[j * n + k];
        for (int k = 0; k < n; ++k)
          Q[i * n + k] -= d * Q[j * n + k];
      }
    double len = 0.0;
    for (int k = 0; k < n; ++k)
      len += Q[i * n + k] * Q[i * n + k];
    len = sqrt(len);
    assert_true(len > 1e-8);
    for (int k = 0; k < n; ++k)
      Q[i * n + k] /= len;
  }
  /* J = Q diag(√e): J Jᵀ = Q diag(e) Qᵀ, eigenvalues e log-uniform in [0.1, 10]. */
  for (int k = 0; k < n; ++k) {
    double e = 0.1 * pow(100.0, rng_unit(r));
    for (int i = 0; i < n; ++i)
      c->Jf[i * n + k] = Q[i * n + k] * sqrt(e);
  }
  free(Q);
  for (int i = 0; i < n; ++i) {
    c->cfm[i] = rng_unit(r) < 0.3 ? rng_range(r, 0.0, 0.5) : 0.0;
    for (int j = 0; j < n; ++j) {
      double d = 0.0;
      for (int k = 0; k < n; ++k)
        d += c->Jf[i * n + k] * c->Jf[j * n + k];
      c->A[i * n + j] = d + (i == j ? c->cfm[i] : 0.0);
    }
    c->u[i] = rng_range(r, -1.0, 1.0);
    c->b[i] = rng_range(r, -1.0, 1.0);
    double kind = rng_unit(r);
    if (kind < 0.4) { /* contact-like: [0, ∞) */
      c->lo[i] = 0.0;
      c->hi[i] = INFINITY;
    } else if (kind < 0.75) { /* limited effort: [−c, c] */
      double m = rng_range(r, 0.05, 1.0);
      c->lo[i] = -m;
      c->hi[i] = m;
    } else { /* bilateral */
      c->lo[i] = -INFINITY;
      c->hi[i] = INFINITY;
    }
  }
  for (int i = 0; i < n; ++i) {
    solver_row *row = &c->rows[i];
    const double *ji = &c->Jf[i * n];
    double *j0 = &c->J[2 * n * i], *j1 = j0 + n, *t0 = &c->T[2 * n * i], *t1 = t0 + n;
    row->coef_offset[0] = 2 * n * i;
    row->coef_offset[1] = 2 * n * i + n;
    if (!split) {
      row->dof_offset[0] = 0;
      row->dof_count[0] = n;
      row->dof_offset[1] = 0;
      row->dof_count[1] = 0;
      for (int k = 0; k < n; ++k)
        j0[k] = t0[k] = ji[k];
    } else {
      /* side 0 covers [0, a), side 1 covers [s, n), s ≤ a */
      int a = 1 + rng_int(r, n);
      int s = rng_int(r, a + 1);
      row->dof_offset[0] = 0;
      row->dof_count[0] = a;
      row->dof_offset[1] = s;
      row->dof_count[1] = n - s;
      for (int k = 0; k < n; ++k) {
        bool in0 = k < a, in1 = k >= s;
        double wj = in0 && in1 ? rng_unit(r) : (in0 ? 1.0 : 0.0);
        double wt = in0 && in1 ? rng_unit(r) : (in0 ? 1.0 : 0.0);
        if (in0) {
          j0[k] = wj * ji[k];
          t0[k] = wt * ji[k];
        }
        if (in1) {
          j1[k - s] = (1.0 - wj) * ji[k];
          t1[k - s] = (1.0 - wt) * ji[k];
        }
      }
      if (rng_unit(r) < 0.5) { /* the side order must not matter */
        int32_t t;
        t = row->dof_offset[0], row->dof_offset[0] = row->dof_offset[1], row->dof_offset[1] = t;
        t = row->dof_count[0], row->dof_count[0] = row->dof_count[1], row->dof_count[1] = t;
        t = row->coef_offset[0], row->coef_offset[0] = row->coef_offset[1], row->coef_offset[1] = t;
      }
    }
    row->kind = isinf(c->lo[i]) ? ROW_BILATERAL : ROW_NORMAL;
    row->normal_row = -1;
    row->mu = 0.0;
    row->cfm = c->cfm[i];
    row->lo = c->lo[i];
    row->hi = c->hi[i];
    /* b_i = J_i u − target_i */
    double ju = 0.0;
    for (int k = 0; k < n; ++k)
      ju += ji[k] * c->u[k];
    row->target = ju - c->b[i];
  }
  c->problem = (solver_problem){
      .row_count = n,
      .rows = c->rows,
      .J = c->J,
      .MinvJt = c->T,
      .dof_count = n,
      .velocity = c->velocity,
  };
}

/* Back to the cold start: velocity = u_free, λ = 0. */
static void case_reset(lcp_case *c) {
  memcpy(c->velocity, c->u, sizeof(double) * (size_t)c->n);
  for (int i = 0; i < c->n; ++i)
    c->rows[i].lambda = 0.0;
}

/* The reference λ: Dantzig's pivoting on the dense A. */
static void case_solve_reference(lcp_case *c, arena *a) {
  assert_int_equal(lcp__dantzig_dense(c->n, c->A, c->b, c->lo, c->hi, c->reference, a), LCP_OK);
}

/* max_i |λ_i − reference_i| of the rows' λ. */
static double case_lambda_error(const lcp_case *c) {
  double worst = 0.0;
  for (int i = 0; i < c->n; ++i)
    worst = fmax(worst, fabs(c->rows[i].lambda - c->reference[i]));
  return worst;
}

static void case_free(lcp_case *c) {
  free(c->Jf);
  free(c->A);
  free(c->b);
  free(c->lo);
  free(c->hi);
  free(c->cfm);
  free(c->u);
  free(c->rows);
  free(c->J);
  free(c->T);
  free(c->velocity);
  free(c->reference);
}

/* max_k |velocity_k − (u + Jᵀλ)_k|: the solvers must leave v = u_free + M⁻¹Jᵀλ. */
static double case_velocity_error(const lcp_case *c) {
  double worst = 0.0;
  for (int k = 0; k < c->n; ++k) {
    double v = c->u[k];
    for (int i = 0; i < c->n; ++i)
      v += c->Jf[i * c->n + k] * c->rows[i].lambda;
    worst = fmax(worst, fabs(v - c->velocity[k]));
  }
  return worst;
}

static solver_settings settings_of(int32_t iterations, double omega, double tolerance,
                                   lcp_friction_model_t model) {
  return (solver_settings){.max_iterations = iterations,
                           .omega = omega,
                           .tolerance = tolerance,
                           .friction_model = model};
}

/* Every test gets a fresh arena as its state. */
static int arena_setup(void **state) {
  arena *a = test_alloc(1, sizeof *a);
  lcp__arena_init(a);
  *state = a;
  return 0;
}
static int arena_teardown(void **state) {
  lcp__arena_destroy(*state);
  free(*state);
  return 0;
}
#define ARENA_TEST(f) cmocka_unit_test_setup_teardown(f, arena_setup, arena_teardown)

#define CASES 100

static int case_size(rng *r) { return 3 + rng_int(r, 58); } /* 3..60 */

/* ---- Dantzig ---- */

/* lcp__dantzig_dense solves 100 random SPD boxed LCPs (n = 3..60, mixed
 * [0,∞), [−c,c], (−∞,∞) bounds): the LCP conditions hold to 1e-9 (w in
 * units of b, |b| ≤ 1). */
static void test_dantzig_random(void **state) {
  arena *a = *state;
  rng r = {1};
  double worst = 0.0;
  for (int p = 0; p < CASES; ++p) {
    lcp_case c;
    case_make(&c, &r, case_size(&r), false);
    case_solve_reference(&c, a);
    double v = lcp_violation(c.n, c.A, c.b, c.lo, c.hi, c.reference);
    worst = fmax(worst, v);
    assert_true(v <= 1e-9);
    case_free(&c);
    lcp__arena_reset(a);
  }
  printf("  dantzig: worst LCP violation over %d problems %.3g\n", CASES, worst);
}

/* A positive semidefinite A (8 contact rows on 3 dofs, rank 3, no cfm):
 * the solver still returns a complementary λ (to 1e-6: it may regularise
 * by 1e-10 diag(A)). */
static void test_dantzig_semidefinite(void **state) {
  arena *a = *state;
  rng r = {7};
  for (int p = 0; p < 20; ++p) {
    enum { N = 8, D = 3 };
    double Jd[N * D], A[N * N], b[N], lo[N], hi[N], lambda[N];
    /* All rows in the open half-space J_i·e_z > 0 (contact normals that do
     * not oppose each other): then no y ≥ 0, y ≠ 0 has Jᵀy = 0, so the LCP
     * is feasible, and a PSD LCP that is feasible is solvable. */
    for (int i = 0; i < N * D; ++i)
      Jd[i] = i % D == D - 1 ? rng_range(&r, 0.5, 1.0) : rng_range(&r, -1.0, 1.0);
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        double d = 0.0;
        for (int k = 0; k < D; ++k)
          d += Jd[i * D + k] * Jd[j * D + k];
        A[i * N + j] = d;
      }
      b[i] = rng_range(&r, -1.0, 0.5);
      lo[i] = 0.0;
      hi[i] = p % 2 ? 2.0 : INFINITY;
    }
    assert_int_equal(lcp__dantzig_dense(N, A, b, lo, hi, lambda, a), LCP_OK);
    assert_true(lcp_violation(N, A, b, lo, hi, lambda) <= 1e-6);
    lcp__arena_reset(a);
  }
}

/* Duplicated unbounded rows (a redundant joint constraint, no cfm): A is
 * singular and the plain pivoting meets a row it can neither drive nor add;
 * the solver then regularises by 1e-10 diag(A). The LCP conditions hold to
 * 1e-6 and the twin rows share the impulse equally (1e-6). */
static void test_dantzig_redundant_rows(void **state) {
  arena *a = *state;
  rng r = {9};
  enum { N = 6, D = 4 };
  double Jd[N * D], A[N * N], b[N], lo[N], hi[N], lambda[N], u[D];
  for (int i = 0; i < 4 * D; ++i)
    Jd[i] = rng_range(&r, -1.0, 1.0);
  for (int k = 0; k < D; ++k) {
    Jd[4 * D + k] = Jd[0 * D + k]; /* row 4 = row 0 */
    Jd[5 * D + k] = Jd[2 * D + k]; /* row 5 = row 2 */
    u[k] = rng_range(&r, -1.0, 1.0);
  }
  for (int i = 0; i < N; ++i) {
    b[i] = 0.0;
    for (int k = 0; k < D; ++k)
      b[i] += Jd[i * D + k] * u[k]; /* b = J u: consistent */
    for (int j = 0; j < N; ++j) {
      double d = 0.0;
      for (int k = 0; k < D; ++k)
        d += Jd[i * D + k] * Jd[j * D + k];
      A[i * N + j] = d;
    }
    lo[i] = -INFINITY;
    hi[i] = INFINITY;
  }
  assert_int_equal(lcp__dantzig_dense(N, A, b, lo, hi, lambda, a), LCP_OK);
  assert_true(lcp_violation(N, A, b, lo, hi, lambda) <= 1e-6);
  assert_true(fabs(lambda[0] - lambda[4]) <= 1e-6 && fabs(lambda[2] - lambda[5]) <= 1e-6);
}

/* A 2×2 case solved exactly (1e-15), then: NaN in b or ∞ in A →
 * LCP_ERR_NUMERIC; bounds not containing 0 → LCP_ERR_INVALID_ARGUMENT. */
static void test_dantzig_rejects_bad_input(void **state) {
  arena *a = *state;
  double A[4] = {2.0, 0.5, 0.5, 1.0}, b[2] = {-1.0, 1.0}, lo[2] = {0.0, -1.0};
  double hi[2] = {INFINITY, 1.0}, lambda[2];
  assert_int_equal(lcp__dantzig_dense(2, A, b, lo, hi, lambda, a), LCP_OK);
  /* λ0 free: 2 λ0 − 1 + 0.5 λ1 = 0; λ1 at −1 since w1 = 0.5 λ0 + λ1 + 1 > 0 at λ1 = −1 */
  assert_true(fabs(lambda[0] - 0.75) <= 1e-15 && lambda[1] == -1.0);
  b[1] = NAN;
  assert_int_equal(lcp__dantzig_dense(2, A, b, lo, hi, lambda, a), LCP_ERR_NUMERIC);
  b[1] = 1.0;
  A[1] = INFINITY;
  assert_int_equal(lcp__dantzig_dense(2, A, b, lo, hi, lambda, a), LCP_ERR_NUMERIC);
  A[1] = 0.5;
  lo[0] = 0.1; /* lo ≤ 0 ≤ hi is required */
  assert_int_equal(lcp__dantzig_dense(2, A, b, lo, hi, lambda, a), LCP_ERR_INVALID_ARGUMENT);
}

/* ---- direct, PGS, Jacobi against Dantzig on the random problems ---- */

/* lcp__solver_direct (A formed from rows, half of them with overlapping split
 * sides) gives Dantzig's λ on the dense A to 1e-9, and leaves
 * velocity = u + Jᵀλ to 1e-9. */
static void test_direct_matches_dantzig(void **state) {
  arena *a = *state;
  rng r = {2};
  for (int p = 0; p < CASES; ++p) {
    lcp_case c;
    case_make(&c, &r, case_size(&r), p % 2 == 1);
    case_solve_reference(&c, a);
    case_reset(&c);
    solver_settings s = settings_of(20, 1.0, 1e-13, LCP_FRICTION_BOX);
    solver_result res;
    assert_int_equal(lcp__solver_direct(&s, &c.problem, &res, a, c.n), LCP_OK);
    assert_int_equal(res.iterations, 1);
    assert_true(case_lambda_error(&c) <= 1e-9);
    assert_true(case_velocity_error(&c) <= 1e-9);
    case_free(&c);
    lcp__arena_reset(a);
  }
}

/* PGS with ω = 1 and ω = 1.3 (tolerance 1e-13, up to 100000 sweeps)
 * converges to the direct λ within 1e-6 on all 100 problems. */
static void test_pgs_matches_direct(void **state) {
  arena *a = *state;
  const double omegas[] = {1.0, 1.3};
  rng r = {3};
  long sweeps[2] = {0, 0};
  for (int p = 0; p < CASES; ++p) {
    lcp_case c;
    case_make(&c, &r, case_size(&r), p % 2 == 1);
    case_solve_reference(&c, a);
    for (int o = 0; o < 2; ++o) {
      case_reset(&c);
      solver_settings s = settings_of(100000, omegas[o], 1e-13, LCP_FRICTION_BOX);
      solver_result res;
      assert_int_equal(lcp__solver_pgs(&s, &c.problem, &res, a), LCP_OK);
      assert_true(res.residual < 1e-13);
      assert_true(res.iterations < 100000);
      sweeps[o] += res.iterations;
      assert_true(case_lambda_error(&c) <= 1e-6);
      assert_true(case_velocity_error(&c) <= 1e-9);
    }
    case_free(&c);
    lcp__arena_reset(a);
  }
  printf("  pgs: mean sweeps to 1e-13: %.1f (omega 1.0), %.1f (omega 1.3)\n",
         (double)sweeps[0] / CASES, (double)sweeps[1] / CASES);
}

/* ρ(D⁻¹A) = λmax(D^-½ A D^-½) by power iteration, with A (+ diag cfm) formed
 * here from the rows by expanding each row to full dof vectors — independent
 * of the solver's own overlap arithmetic. */
static double jacobi_radius(const solver_problem *p) {
  int n = p->row_count, d = p->dof_count;
  double *Jf = test_doubles(n * d), *Tf = test_doubles(n * d);
  double *A = test_doubles(n * n);
  for (int i = 0; i < n; ++i) {
    const solver_row *r = &p->rows[i];
    for (int k = 0; k < 2; ++k)
      for (int q = 0; q < r->dof_count[k]; ++q) {
        Jf[i * d + r->dof_offset[k] + q] += p->J[r->coef_offset[k] + q];
        Tf[i * d + r->dof_offset[k] + q] += p->MinvJt[r->coef_offset[k] + q];
      }
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? p->rows[i].cfm : 0.0;
      for (int k = 0; k < d; ++k)
        s += Jf[i * d + k] * Tf[j * d + k];
      A[i * n + j] = s;
    }
  double *x = test_doubles(n), *y = test_doubles(n);
  for (int i = 0; i < n; ++i)
    x[i] = 1.0 + 0.01 * i;
  double rho = 0.0;
  for (int it = 0; it < 500; ++it) {
    double len = 0.0;
    for (int i = 0; i < n; ++i) {
      double s = 0.0;
      for (int j = 0; j < n; ++j)
        if (A[i * n + i] > 0.0 && A[j * n + j] > 0.0) /* degenerate rows are skipped */
          s += A[i * n + j] / sqrt(A[i * n + i] * A[j * n + j]) * x[j];
      y[i] = s;
      len += s * s;
    }
    len = sqrt(len);
    rho = len; /* x has unit length from the second iteration on */
    for (int i = 0; i < n; ++i)
      x[i] = y[i] / len;
  }
  free(Jf);
  free(Tf);
  free(A);
  free(x);
  free(y);
  return rho;
}

/* Projected Jacobi with ω = 1/ρ(D⁻¹A) (< 2/ρ: convergent) reaches the
 * direct λ within 1e-6. */
static void test_jacobi_matches_direct(void **state) {
  arena *a = *state;
  rng r = {4};
  for (int p = 0; p < CASES; ++p) {
    lcp_case c;
    case_make(&c, &r, case_size(&r), p % 2 == 1);
    case_solve_reference(&c, a);
    case_reset(&c);
    solver_settings s =
        settings_of(100000, 1.0 / jacobi_radius(&c.problem), 1e-13, LCP_FRICTION_BOX);
    solver_result res;
    assert_int_equal(lcp__solver_jacobi(&s, &c.problem, &res, a), LCP_OK);
    assert_true(res.residual < 1e-13);
    assert_true(case_lambda_error(&c) <= 1e-6);
    assert_true(case_velocity_error(&c) <= 1e-9);
    case_free(&c);
    lcp__arena_reset(a);
  }
}

/* ---- SOR ---- */

/* Seed 000: for A positive definite PGS-SOR converges for every 0 < ω < 2.
 * Each ω reaches the direct λ within 1e-6. */
static void test_sor_converges_in_0_2(void **state) {
  arena *a = *state;
  const double omegas[] = {0.2, 0.5, 1.0, 1.5, 1.9};
  rng r = {5};
  lcp_case c;
  case_make(&c, &r, 25, true);
  case_solve_reference(&c, a);
  for (size_t o = 0; o < sizeof omegas / sizeof omegas[0]; ++o) {
    case_reset(&c);
    solver_settings s = settings_of(100000, omegas[o], 1e-13, LCP_FRICTION_BOX);
    solver_result res;
    assert_int_equal(lcp__solver_pgs(&s, &c.problem, &res, a), LCP_OK);
    assert_true(case_lambda_error(&c) <= 1e-6);
  }
  case_free(&c);
}

/* Outside (0, 2) SOR diverges on an unbounded (bilateral) SPD system: its
 * iteration matrix has ρ ≥ |ω − 1| (Kahan), 1.3 for ω = 2.3, so after 300
 * sweeps λ is far (> 1) from the solution — or the solver reports the
 * overflow. The same problem converges for ω = 1.9. Row by row (PGS_MODE_NO_BLOCKS):
 * its rows all act on one range and would otherwise be one exact block. */
static void test_sor_diverges_outside_0_2(void **state) {
  arena *a = *state;
  rng r = {6};
  lcp_case c;
  case_make(&c, &r, 10, false);
  for (int i = 0; i < c.n; ++i) {
    c.lo[i] = c.rows[i].lo = -INFINITY;
    c.hi[i] = c.rows[i].hi = INFINITY;
    c.rows[i].kind = ROW_BILATERAL;
  }
  case_solve_reference(&c, a);
  case_reset(&c);
  solver_settings s = settings_of(300, 2.3, 0.0, LCP_FRICTION_BOX);
  s.pgs_mode = PGS_MODE_NO_BLOCKS;
  solver_result res;
  int rc = lcp__solver_pgs(&s, &c.problem, &res, a);
  assert_true(rc == LCP_ERR_NUMERIC || (rc == LCP_OK && case_lambda_error(&c) > 1.0));
  case_reset(&c);
  s.omega = 1.9;
  s.max_iterations = 100000;
  s.tolerance = 1e-13;
  assert_int_equal(lcp__solver_pgs(&s, &c.problem, &res, a), LCP_OK);
  assert_true(case_lambda_error(&c) <= 1e-6);
  case_free(&c);
}

/* ---- small hand-made problems ---- */

/* A problem with up to 16 rows on up to 12 dofs, each row one or two
 * 6-wide (or narrower) sides, coefficients stored densely per row. */
typedef struct small_problem {
  solver_row rows[16];
  double J[16 * 12], T[16 * 12];
  double u[12], velocity[12];
  solver_problem problem;
} small_problem;

static void small_init(small_problem *sp, int rows, int dofs) {
  memset(sp, 0, sizeof *sp);
  for (int i = 0; i < rows; ++i) {
    sp->rows[i].coef_offset[0] = 12 * i;
    sp->rows[i].coef_offset[1] = 12 * i + 6;
    sp->rows[i].normal_row = -1;
    sp->rows[i].lo = -INFINITY;
    sp->rows[i].hi = INFINITY;
  }
  sp->problem = (solver_problem){.row_count = rows,
                                 .rows = sp->rows,
                                 .J = sp->J,
                                 .MinvJt = sp->T,
                                 .dof_count = dofs,
                                 .velocity = sp->velocity};
}

static void small_reset(small_problem *sp) {
  memcpy(sp->velocity, sp->u, sizeof sp->u);
  for (int i = 0; i < sp->problem.row_count; ++i)
    sp->rows[i].lambda = 0.0;
}

/* A rigid body: mass m, diagonal body inertia, at the identity orientation. */
typedef struct body {
  int dof; /* −1: static */
  double inv_mass;
  vec3 inv_inertia;
  vec3 com;
} body;

/* Side k of row i: J = sign [d, r × d], M⁻¹Jᵀ = sign [d/m, I⁻¹ (r × d)] (the contact row's
 * Jacobian). */
static void small_side(small_problem *sp, int i, int k, const body *bd, vec3 point, vec3 d,
                       double sign) {
  solver_row *row = &sp->rows[i];
  if (!bd || bd->dof < 0) {
    row->dof_count[k] = 0;
    return;
  }
  vec3 rr = v3_sub(point, bd->com);
  vec3 ang = v3_cross(rr, d);
  double *j = &sp->J[row->coef_offset[k]], *t = &sp->T[row->coef_offset[k]];
  double jv[6] = {d.x, d.y, d.z, ang.x, ang.y, ang.z};
  double tv[6] = {d.x * bd->inv_mass,        d.y * bd->inv_mass,        d.z * bd->inv_mass,
                  ang.x * bd->inv_inertia.x, ang.y * bd->inv_inertia.y, ang.z * bd->inv_inertia.z};
  for (int q = 0; q < 6; ++q) {
    j[q] = sign * jv[q];
    t[q] = sign * tv[q];
  }
  row->dof_offset[k] = bd->dof;
  row->dof_count[k] = 6;
}

/* A contact at point with normal n (from a to b): rows i (normal), i+1, i+2
 * (tangents), w = n·(u_b − u_a) at the point. */
static void small_contact(small_problem *sp, int i, const body *a, const body *b, vec3 point,
                          vec3 n, double mu) {
  vec3 t[2];
  v3_tangent_basis(n, &t[0], &t[1]);
  for (int q = 0; q < 3; ++q) {
    vec3 d = q == 0 ? n : t[q - 1];
    small_side(sp, i + q, 0, a, point, d, -1.0);
    small_side(sp, i + q, 1, b, point, d, 1.0);
    solver_row *row = &sp->rows[i + q];
    row->kind = q == 0 ? ROW_NORMAL : (q == 1 ? ROW_FRICTION_1 : ROW_FRICTION_2);
    row->normal_row = q == 0 ? -1 : i;
    row->normal_count = q == 0 ? 0 : 1;
    row->mu = q == 0 ? 0.0 : mu;
    row->lo = q == 0 ? 0.0 : -INFINITY;
    row->hi = INFINITY;
  }
}

/* A point mass (3 dofs, m = 1) sliding on the plane z = 0: rows normal (z),
 * t1 (x), t2 (y), μ = 0.5, approaching at 1 m/s. */
static void particle_problem(small_problem *sp, double vx, double vy, double vz) {
  small_init(sp, 3, 3);
  for (int i = 0; i < 3; ++i) {
    sp->rows[i].dof_offset[0] = 0;
    sp->rows[i].dof_count[0] = 3;
    sp->J[12 * i + (i == 0 ? 2 : i - 1)] = 1.0;
    sp->T[12 * i + (i == 0 ? 2 : i - 1)] = 1.0;
  }
  sp->rows[0].kind = ROW_NORMAL;
  sp->rows[0].lo = 0.0;
  sp->rows[1].kind = ROW_FRICTION_1;
  sp->rows[2].kind = ROW_FRICTION_2;
  for (int i = 1; i < 3; ++i) {
    sp->rows[i].normal_row = 0;
    sp->rows[i].normal_count = 1;
    sp->rows[i].mu = 0.5;
  }
  sp->u[0] = vx;
  sp->u[1] = vy;
  sp->u[2] = vz;
}

typedef int (*solver_fn)(const solver_settings *, solver_problem *, solver_result *, arena *);

static int run_direct(const solver_settings *s, solver_problem *p, solver_result *r, arena *a) {
  return lcp__solver_direct(s, p, r, a, 600);
}

static const solver_fn all_solvers[3] = {lcp__solver_pgs, lcp__solver_jacobi, run_direct};

/* Box against cone on the particle approaching at 2 m/s (λn = 2, so the
 * friction bound μλn = 1 differs from μ) and pushed diagonally (u_t = (3, 3),
 * needs |λt| = 3√2 > μλn to stop): every solver stops the normal motion and
 * - box: λt = (−1, −1), each component at μλn, so |λt| = √2 exceeds the
 *   disc of radius 1 — the box model's anisotropy;
 * - cone: λt = −(1, 1)/√2, exactly on the disc, against the slip.
 * With u_t = (4, 0.4) the box model sticks in y (λt2 = −0.4 inside its
 * bound) while the cone slides along (4, 0.4). Tolerance 1e-9. */
static void test_friction_box_vs_cone(void **state) {
  arena *a = *state;
  small_problem sp;
  for (int f = 0; f < 3; ++f) {
    for (int model = 0; model < 2; ++model) {
      solver_settings s =
          settings_of(1000, 1.0, 1e-14, model ? LCP_FRICTION_CONE : LCP_FRICTION_BOX);
      solver_result res;

      particle_problem(&sp, 3.0, 3.0, -2.0);
      small_reset(&sp);
      assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_OK);
      double ln = sp.rows[0].lambda, l1 = sp.rows[1].lambda, l2 = sp.rows[2].lambda;
      assert_true(fabs(ln - 2.0) <= 1e-9);
      assert_true(fabs(sp.velocity[2]) <= 1e-9);
      if (!model) {
        assert_true(fabs(l1 + 1.0) <= 1e-9 && fabs(l2 + 1.0) <= 1e-9);
        assert_true(hypot(l1, l2) > 0.5 * ln + 0.4); /* outside the disc */
      } else {
        assert_true(fabs(l1 + 1.0 / sqrt(2.0)) <= 1e-9 && fabs(l2 + 1.0 / sqrt(2.0)) <= 1e-9);
        assert_true(hypot(l1, l2) <= 0.5 * ln + 1e-12);
      }

      particle_problem(&sp, 4.0, 0.4, -2.0);
      small_reset(&sp);
      assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_OK);
      ln = sp.rows[0].lambda, l1 = sp.rows[1].lambda, l2 = sp.rows[2].lambda;
      assert_true(fabs(ln - 2.0) <= 1e-9);
      if (!model) {
        assert_true(fabs(l1 + 1.0) <= 1e-9 && fabs(l2 + 0.4) <= 1e-9);
        assert_true(fabs(sp.velocity[1]) <= 1e-9); /* sticks in y */
      } else {
        double k = 1.0 / hypot(4.0, 0.4);
        assert_true(fabs(l1 + 4.0 * k) <= 1e-9 && fabs(l2 + 0.4 * k) <= 1e-9);
        /* slides along the push: v_t ∥ u_t */
        assert_true(fabs(sp.velocity[0] * 0.4 - sp.velocity[1] * 4.0) <= 1e-9);
      }
      lcp__arena_reset(a);
    }
  }
}

/* Two boxes: A on the ground (two contacts), B on A (one contact), pushed
 * sideways and down, spinning; the rows couple through lever arms. */
static void stack_problem(small_problem *sp, double cfm) {
  small_init(sp, 9, 12);
  body ground = {-1, 0.0, {0, 0, 0}, {0, 0, 0}};
  body A = {0, 1.0, {6.0, 5.0, 4.0}, {0.0, 0.0, 0.25}};
  body B = {6, 2.0, {9.0, 12.0, 10.0}, {0.1, 0.05, 0.75}};
  small_contact(sp, 0, &ground, &A, v3(-0.25, -0.2, 0.0), v3(0, 0, 1), 0.6);
  small_contact(sp, 3, &ground, &A, v3(0.25, 0.15, 0.0), v3(0, 0, 1), 0.6);
  vec3 n;
  v3_normalize(v3(0.1, 0.0, 0.995), &n, 1e-12);
  small_contact(sp, 6, &A, &B, v3(0.05, 0.2, 0.5), n, 0.4);
  for (int i = 0; i < 9; ++i)
    sp->rows[i].cfm = cfm;
  sp->rows[0].target = 0.02; /* Baumgarte push-out on one contact */
  const double u[12] = {0.6, 0.3, -0.5, 0.4, -0.3, 1.0, -0.2, 0.5, -0.8, 0.0, 0.7, -0.4};
  memcpy(sp->u, u, sizeof u);
}

/* w_i + cfm_i λ_i for every row from the solver's output velocity. */
static void small_w(const small_problem *sp, double *w) {
  for (int i = 0; i < sp->problem.row_count; ++i) {
    const solver_row *r = &sp->rows[i];
    double s = -r->target + r->cfm * r->lambda;
    for (int k = 0; k < 2; ++k)
      for (int q = 0; q < r->dof_count[k]; ++q)
        s += sp->J[r->coef_offset[k] + q] * sp->velocity[r->dof_offset[k] + q];
    w[i] = s;
  }
}

/* The direct solver's box and cone solutions on the coupled stack satisfy
 * the Coulomb conditions (1e-8), and PGS and Jacobi reach them (1e-6):
 * - normals: λn ≥ 0, w ≥ 0, λn w = 0;
 * - box: |λt_k| ≤ μλn, w_k = 0 inside, w_k of the opposite sign at a bound;
 * - cone: |λt| ≤ μλn; inside the disc w_t = 0, on the rim λt = −μλn w_t/|w_t|. */
static void test_friction_coupled(void **state) {
  arena *a = *state;
  small_problem sp;
  for (int model = 0; model < 2; ++model) {
    lcp_friction_model_t fm = model ? LCP_FRICTION_CONE : LCP_FRICTION_BOX;
    stack_problem(&sp, 1e-6);
    small_reset(&sp);
    solver_settings s = settings_of(1, 1.0, 1e-14, fm);
    solver_result res;
    assert_int_equal(run_direct(&s, &sp.problem, &res, a), LCP_OK);
    assert_true(res.iterations < 50); /* the fixed point on λn (and the cone's box) settled */
    double ref[9], w[9];
    for (int i = 0; i < 9; ++i)
      ref[i] = sp.rows[i].lambda;
    small_w(&sp, w);
    int sliding = 0;
    for (int c = 0; c < 3; ++c) {
      double ln = ref[3 * c], wn = w[3 * c];
      assert_true(ln >= 0.0 && wn >= -1e-8 && fabs(ln * wn) <= 1e-8);
      double mu = sp.rows[3 * c + 1].mu, rim = mu * ln;
      const double *lt = &ref[3 * c + 1], *wt = &w[3 * c + 1];
      if (!model) {
        for (int k = 0; k < 2; ++k) {
          assert_true(fabs(lt[k]) <= rim + 1e-12);
          if (fabs(lt[k]) < rim - 1e-8) {
            assert_true(fabs(wt[k]) <= 1e-8);
          } else {
            ++sliding;
            assert_true(lt[k] * wt[k] <= 1e-8); /* opposes the slip */
          }
        }
      } else {
        double len = hypot(lt[0], lt[1]), wlen = hypot(wt[0], wt[1]);
        assert_true(len <= rim + 1e-12);
        if (wlen > 1e-8) { /* sliding: on the rim, against the slip */
          ++sliding;
          assert_true(fabs(len - rim) <= 1e-8);
          assert_true(fabs(lt[0] + rim * wt[0] / wlen) <= 1e-8);
          assert_true(fabs(lt[1] + rim * wt[1] / wlen) <= 1e-8);
        }
      }
    }
    assert_true(sliding > 0); /* the case exercises the bounds (box) or the rim (cone) */
    for (int f = 0; f < 2; ++f) {
      small_reset(&sp);
      solver_settings si =
          settings_of(200000, f ? 1.0 / jacobi_radius(&sp.problem) : 1.0, 1e-13, fm);
      assert_int_equal(all_solvers[f](&si, &sp.problem, &res, a), LCP_OK);
      for (int i = 0; i < 9; ++i)
        assert_true(fabs(sp.rows[i].lambda - ref[i]) <= 1e-6);
    }
    lcp__arena_reset(a);
  }
}

/* A cube on the ground on 4 coplanar contact points (12 rows on 6 dofs, cfm
 * 1e-9: A is singular up to cfm, cond ≈ 1e10, and the split of λn among the
 * points is statically indeterminate, fixed only by cfm), pushed sideways,
 * once sliding straight and once spinning as well. The direct solver's λ
 * satisfies the LCP (box) and Coulomb (cone) conditions to 1e-6 (what
 * cond·ε allows) with exact friction bounds; its outer loop settles for the
 * box model and gets within 1e-6 m/s for the cone. In the box model without
 * spin the cube's velocity agrees with PGS to 1e-6; with the cone (or spin)
 * it depends on the indeterminate split — each point's friction is μ times
 * its own λn, so unequal λn exert a torque — and two exact solvers may
 * legitimately differ, so only the conditions are checked. */
static void test_direct_redundant_contacts(void **state) {
  arena *a = *state;
  small_problem sp;
  for (int spin = 0; spin < 2; ++spin)
    for (int model = 0; model < 2; ++model) {
      lcp_friction_model_t fm = model ? LCP_FRICTION_CONE : LCP_FRICTION_BOX;
      small_init(&sp, 12, 6);
      body ground = {-1, 0.0, {0, 0, 0}, {0, 0, 0}};
      body cube = {0, 1.0, {24.0, 24.0, 24.0}, {0.0, 0.0, 0.25}};
      for (int c = 0; c < 4; ++c)
        small_contact(&sp, 3 * c, &ground, &cube,
                      v3(c & 1 ? 0.25 : -0.25, c & 2 ? 0.25 : -0.25, 0.0), v3(0, 0, 1), 0.5);
      for (int i = 0; i < 12; ++i)
        sp.rows[i].cfm = 1e-9;
      const double u[6] = {0.3, 0.1, -0.5, 0.2, -0.1, spin ? 0.8 : 0.0};
      memcpy(sp.u, u, sizeof u);
      small_reset(&sp);
      solver_settings s = settings_of(1, 1.0, 1e-12, fm);
      solver_result res;
      assert_int_equal(run_direct(&s, &sp.problem, &res, a), LCP_OK);
      assert_true(model ? res.residual < 1e-6 : res.iterations < 50);
      double w[12], v_direct[6];
      small_w(&sp, w);
      memcpy(v_direct, sp.velocity, sizeof v_direct);
      for (int c = 0; c < 4; ++c) {
        double ln = sp.rows[3 * c].lambda, rim = 0.5 * ln;
        assert_true(ln >= 0.0 && w[3 * c] >= -1e-6 && fabs(ln * w[3 * c]) <= 1e-6);
        const double *wt = &w[3 * c + 1];
        double lt[2] = {sp.rows[3 * c + 1].lambda, sp.rows[3 * c + 2].lambda};
        if (!model) {
          for (int k = 0; k < 2; ++k) {
            assert_true(fabs(lt[k]) <= rim + 1e-12);
            if (fabs(lt[k]) < rim - 1e-6)
              assert_true(fabs(wt[k]) <= 1e-6);
            else
              assert_true(lt[k] * wt[k] <= 1e-6);
          }
        } else {
          double len = hypot(lt[0], lt[1]), wlen = hypot(wt[0], wt[1]);
          assert_true(len <= rim + 1e-12);
          if (wlen > 1e-6) {
            assert_true(fabs(lt[0] + rim * wt[0] / wlen) <= 1e-6);
            assert_true(fabs(lt[1] + rim * wt[1] / wlen) <= 1e-6);
          }
        }
      }
      if (!spin && !model) {
        small_reset(&sp);
        solver_settings sg = settings_of(100000, 1.0, 1e-14, fm);
        assert_int_equal(lcp__solver_pgs(&sg, &sp.problem, &res, a), LCP_OK);
        for (int k = 0; k < 6; ++k)
          assert_true(fabs(sp.velocity[k] - v_direct[k]) <= 1e-6);
      }
      lcp__arena_reset(a);
    }
}

/* ---- warm start ---- */

/* Started from its own solution, PGS (and Jacobi) stops after 1 sweep with
 * the residual below the tolerance, and λ moves by less than 1e-9. */
static void test_warm_start_one_sweep(void **state) {
  arena *a = *state;
  rng r = {8};
  lcp_case c;
  case_make(&c, &r, 30, true);
  small_problem sp;
  for (int f = 0; f < 2; ++f) {
    for (int which = 0; which < 2; ++which) {
      solver_problem *p;
      double omega = f ? 0.5 : 1.0;
      if (which == 0) {
        case_reset(&c);
        p = &c.problem;
        if (f)
          omega = 1.0 / jacobi_radius(&c.problem);
      } else {
        stack_problem(&sp, 1e-6);
        small_reset(&sp);
        p = &sp.problem;
        if (f)
          omega = 1.0 / jacobi_radius(p);
      }
      solver_settings s = settings_of(100000, omega, 1e-10, LCP_FRICTION_CONE);
      solver_result res;
      assert_int_equal(all_solvers[f](&s, p, &res, a), LCP_OK);
      assert_true(res.iterations > 1 && res.residual < 1e-10);
      double sol[30];
      for (int i = 0; i < p->row_count; ++i)
        sol[i] = p->rows[i].lambda;
      /* again, from u_free and the solution */
      if (which == 0)
        memcpy(c.velocity, c.u, sizeof(double) * (size_t)c.n);
      else
        memcpy(sp.velocity, sp.u, sizeof sp.u);
      assert_int_equal(all_solvers[f](&s, p, &res, a), LCP_OK);
      assert_int_equal(res.iterations, 1);
      assert_true(res.residual < 1e-10);
      for (int i = 0; i < p->row_count; ++i)
        assert_true(fabs(p->rows[i].lambda - sol[i]) <= 1e-9);
      lcp__arena_reset(a);
    }
  }
  case_free(&c);
}

/* A warm start outside the bounds is clamped first: λn = −3 → 0, and a
 * friction warm start of 5 is cut to μλn of the clamped normal (0) before it
 * touches the velocity; with max_iterations = 0 that is all that happens. */
static void test_warm_start_is_clamped(void **state) {
  arena *a = *state;
  small_problem sp;
  particle_problem(&sp, 1.0, 1.0, -1.0);
  small_reset(&sp);
  sp.rows[0].lambda = -3.0;
  sp.rows[1].lambda = 5.0;
  solver_settings s = settings_of(0, 1.0, 0.0, LCP_FRICTION_BOX);
  solver_result res;
  assert_int_equal(lcp__solver_pgs(&s, &sp.problem, &res, a), LCP_OK);
  assert_int_equal(res.iterations, 0);
  assert_true(sp.rows[0].lambda == 0.0 && sp.rows[1].lambda == 0.0);
  assert_true(sp.velocity[0] == 1.0 && sp.velocity[2] == -1.0);
  /* a valid warm start is applied: λn = 2 moves v_z by 2 */
  small_reset(&sp);
  sp.rows[0].lambda = 2.0;
  sp.rows[1].lambda = 0.5;
  assert_int_equal(lcp__solver_pgs(&s, &sp.problem, &res, a), LCP_OK);
  assert_true(fabs(sp.velocity[2] - 1.0) <= 1e-15 && fabs(sp.velocity[0] - 1.5) <= 1e-15);
}

/* ---- row forms and special rows ---- */

/* Two sides on the same dof (J = 1 + 1 on u0, M⁻¹ = 1): A = 4, not 1 + 1.
 * One PGS sweep with ω = 1 solves a single unbounded row exactly, so λ after
 * one sweep is −b/A = −1 only if the cross terms are in A_ii. */
static void test_overlapping_sides(void **state) {
  arena *a = *state;
  small_problem sp;
  small_init(&sp, 1, 1);
  for (int k = 0; k < 2; ++k) {
    sp.rows[0].dof_offset[k] = 0;
    sp.rows[0].dof_count[k] = 1;
    sp.J[12 * 0 + 6 * k] = 1.0;
    sp.T[12 * 0 + 6 * k] = 1.0;
  }
  sp.rows[0].target = -4.0; /* b = J u − target = 4 */
  for (int f = 0; f < 3; ++f) {
    small_reset(&sp);
    solver_settings s = settings_of(1, 1.0, 0.0, LCP_FRICTION_BOX);
    solver_result res;
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_OK);
    assert_true(fabs(sp.rows[0].lambda + 1.0) <= 1e-15);
    assert_true(fabs(sp.velocity[0] + 2.0) <= 1e-15); /* u + (1 + 1)·λ */
  }
}

/* A soft row (cfm = 0.5) solves w + cfm λ = 0: A = J M⁻¹ J = 2·0.5·2 = 2,
 * b = 2 → λ = −b/(A + cfm) = −0.8 and v = 1 + 0.5·2·λ = 0.2, for every
 * solver and PGS ω = 1.5 (1e-12). */
static void test_soft_row(void **state) {
  arena *a = *state;
  small_problem sp;
  small_init(&sp, 1, 1);
  sp.rows[0].dof_count[0] = 1;
  sp.J[0] = 2.0;
  sp.T[0] = 1.0;
  sp.rows[0].cfm = 0.5;
  sp.u[0] = 1.0;
  for (int f = 0; f < 3; ++f) {
    small_reset(&sp);
    solver_settings s = settings_of(1000, f == 0 ? 1.5 : 1.0, 1e-15, LCP_FRICTION_BOX);
    solver_result res;
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_OK);
    assert_true(fabs(sp.rows[0].lambda + 0.8) <= 1e-12);
    assert_true(fabs(sp.velocity[0] - 0.2) <= 1e-12);
  }
}

/* Bounds that exclude 0 (lo = 0.5: a minimum push) and a degenerate row
 * (J = 0, cfm = 0: it cannot change its own w) beside a normal contact:
 * the degenerate row gets λ = 0, the others agree across solvers (1e-8). */
static void test_degenerate_and_offset_bounds(void **state) {
  arena *a = *state;
  small_problem sp;
  stack_problem(&sp, 1e-6);
  /* row 3 (second contact's normal) becomes degenerate; its friction rows
   * then have bound 0 */
  for (int q = 0; q < 12; ++q)
    sp.J[12 * 3 + q] = sp.T[12 * 3 + q] = 0.0;
  sp.rows[3].cfm = 0.0;
  sp.rows[6].lo = 0.5; /* B pressed onto A with at least 0.5 N·s */
  sp.rows[6].hi = 3.0;
  double ref[9];
  for (int f = 2; f >= 0; --f) {
    small_reset(&sp);
    double omega = f == 1 ? 1.0 / jacobi_radius(&sp.problem) : 1.0;
    solver_settings s = settings_of(200000, omega, 1e-13, LCP_FRICTION_BOX);
    solver_result res;
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_OK);
    assert_true(sp.rows[3].lambda == 0.0 && sp.rows[4].lambda == 0.0 && sp.rows[5].lambda == 0.0);
    assert_true(sp.rows[6].lambda >= 0.5 && sp.rows[6].lambda <= 3.0);
    for (int i = 0; i < 9; ++i) {
      assert_true(isfinite(sp.rows[i].lambda));
      if (f == 2)
        ref[i] = sp.rows[i].lambda;
      else
        assert_true(fabs(sp.rows[i].lambda - ref[i]) <= 1e-8);
    }
  }
}

/* ---- errors ---- */

/* Non-finite input (velocity, J, target) or a non-finite value appearing in
 * the sweep (A_ii = 1e-10, target 1e300: λ overflows) → LCP_ERR_NUMERIC. */
static void test_non_finite(void **state) {
  arena *a = *state;
  small_problem sp;
  solver_settings s = settings_of(20, 1.0, 0.0, LCP_FRICTION_CONE);
  solver_result res;
  for (int f = 0; f < 3; ++f) {
    particle_problem(&sp, 1.0, 1.0, -1.0);
    small_reset(&sp);
    sp.velocity[1] = NAN;
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_ERR_NUMERIC);
    small_reset(&sp);
    sp.J[12 * 1 + 0] = INFINITY;
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_ERR_NUMERIC);
    particle_problem(&sp, 1.0, 1.0, -1.0);
    small_reset(&sp);
    sp.rows[2].target = NAN;
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_ERR_NUMERIC);
  }
  small_init(&sp, 1, 1);
  sp.rows[0].dof_count[0] = 1;
  sp.J[0] = sp.T[0] = 1e-5;
  sp.rows[0].target = 1e300;
  for (int f = 0; f < 3; ++f) {
    small_reset(&sp);
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_ERR_NUMERIC);
  }
}

/* ---- contact units (the vector path of lcp__solver_pgs) ---- */

/* A scene of BODIES free bodies (6 dofs each) and a static ground, with
 * manifolds of 1 to 4 points (shared normal, as the step writes them), plus
 * generic rows between them on the same velocities: a 9-wide soft
 * bilateral row across bodies 0 and 1 and a 3-wide bounded row on body 2. */
enum { BODIES = 8, BIG_ROWS = 3 * 4 * 12 + 2 };
typedef struct big_problem {
  solver_row rows[BIG_ROWS];
  double J[BIG_ROWS * 12], T[BIG_ROWS * 12];
  double u[6 * BODIES], velocity[6 * BODIES];
  solver_problem problem;
  /* the contact points again as solver_contact, and the bodies' mass
   * properties (the same M⁻¹ as T's) */
  solver_contact contacts[BIG_ROWS / 3];
  int contact_count;
  double inv_mass[BODIES], inv_inertia[BODIES][9];
} big_problem;

static void big_side(big_problem *bp, int i, int k, int b, vec3 point, vec3 d, double sign) {
  solver_row *row = &bp->rows[i];
  row->coef_offset[k] = 12 * i + 6 * k;
  if (b < 0) {
    row->dof_count[k] = 0;
    return;
  }
  vec3 com = v3(0.3 * b, 0.1 * b, 0.5 * b);
  vec3 ang = v3_cross(v3_sub(point, com), d);
  double im = 1.0 / (1.0 + b), ii[3] = {2.0 + 0.1 * b, 3.0, 1.5 + 0.2 * b};
  double jv[6] = {d.x, d.y, d.z, ang.x, ang.y, ang.z};
  for (int q = 0; q < 6; ++q) {
    bp->J[12 * i + 6 * k + q] = sign * jv[q];
    bp->T[12 * i + 6 * k + q] = sign * jv[q] * (q < 3 ? im : ii[q - 3]);
  }
  row->dof_offset[k] = 6 * b;
  row->dof_count[k] = 6;
}

static void big_make(big_problem *bp, rng *r) {
  memset(bp, 0, sizeof *bp);
  int i = 0;
  for (int m = 0; m < 12; ++m) {
    int a = m < 3 ? -1 : (int)(rng_next(r) % BODIES);
    int b = (a + 1 + (int)(rng_next(r) % (BODIES - 1))) % BODIES;
    if (a < 0)
      b = m;
    vec3 n;
    double nx = rng_range(r, -0.3, 0.3);
    double ny = rng_range(r, -0.3, 0.3);
    v3_normalize(v3(nx, ny, 1.0), &n, 1e-12);
    vec3 t[2];
    v3_tangent_basis(n, &t[0], &t[1]);
    int points = 1 + (int)(rng_next(r) % 4);
    for (int q = 0; q < points; ++q) {
      /* the points of a manifold lie in the contact plane */
      double s0 = rng_range(r, -0.5, 0.5);
      double s1 = rng_range(r, -0.5, 0.5);
      vec3 point =
          v3_add(v3(0.3 * m, 0.2, 0.1 * b), v3_add(v3_scale(t[0], s0), v3_scale(t[1], s1)));
      double mu = 0.3 + 0.1 * (m % 5);
      solver_contact *c = &bp->contacts[bp->contact_count++];
      c->row = i;
      c->point_count = 1; /* a patch of one point: normal, then its friction pair */
      c->dof[0] = a >= 0 ? 6 * a : -1;
      c->dof[1] = 6 * b;
      v3_store(n, c->dir[0]);
      v3_store(t[0], c->dir[1]);
      v3_store(t[1], c->dir[2]);
      for (int k = 0; k < 2; ++k) {
        int body = k == 0 ? a : b;
        vec3 arm = body >= 0 ? v3_sub(point, v3(0.3 * body, 0.1 * body, 0.5 * body)) : v3_zero();
        v3_store(arm, c->arm[k]);
        v3_store(arm, c->point_arm[0][k]);
      }
      for (int d = 0; d < 3; ++d, ++i) {
        vec3 dir = d == 0 ? n : t[d - 1];
        big_side(bp, i, 0, a, point, dir, -1.0);
        big_side(bp, i, 1, b, point, dir, 1.0);
        solver_row *row = &bp->rows[i];
        row->kind = d == 0 ? ROW_NORMAL : (d == 1 ? ROW_FRICTION_1 : ROW_FRICTION_2);
        row->normal_row = d == 0 ? -1 : i - d;
        row->normal_count = d == 0 ? 0 : 1;
        row->mu = d == 0 ? 0.0 : mu;
        row->lo = d == 0 ? 0.0 : -INFINITY;
        row->hi = INFINITY;
        row->cfm = 1e-2; /* a unique solution for the comparison */
        row->target = d == 0 ? rng_range(r, -0.1, 0.3) : 0.0;
      }
    }
    if (m == 5 || m == 9) { /* generic rows in the middle of the contacts */
      solver_row *row = &bp->rows[i];
      row->kind = ROW_BILATERAL;
      row->normal_row = -1;
      row->lo = m == 5 ? -INFINITY : -0.5;
      row->hi = m == 5 ? INFINITY : 0.5;
      row->cfm = m == 5 ? 0.2 : 0.0;
      row->target = 0.3;
      row->dof_offset[0] = m == 5 ? 3 : 12;
      row->dof_count[0] = m == 5 ? 9 : 3;
      row->coef_offset[0] = 12 * i;
      for (int q = 0; q < row->dof_count[0]; ++q) {
        bp->J[12 * i + q] = rng_range(r, -1, 1);
        bp->T[12 * i + q] = bp->J[12 * i + q] * 0.7;
      }
      ++i;
    }
  }
  for (int k = 0; k < 6 * BODIES; ++k)
    bp->u[k] = rng_range(r, -1, 1);
  for (int b = 0; b < BODIES; ++b) {
    bp->inv_mass[b] = 1.0 / (1.0 + b);
    bp->inv_inertia[b][0] = 2.0 + 0.1 * b;
    bp->inv_inertia[b][4] = 3.0;
    bp->inv_inertia[b][8] = 1.5 + 0.2 * b;
  }
  bp->problem = (solver_problem){.row_count = i,
                                 .rows = bp->rows,
                                 .J = bp->J,
                                 .MinvJt = bp->T,
                                 .dof_count = 6 * BODIES,
                                 .velocity = bp->velocity};
}

static void big_reset(big_problem *bp) {
  memcpy(bp->velocity, bp->u, sizeof bp->u);
  for (int i = 0; i < bp->problem.row_count; ++i)
    bp->rows[i].lambda = 0.0;
}

/* Contact units mixed with generic rows: PGS converges (1e-12) to impulses
 * within their bounds with complementary normals (1e-9), in both friction
 * models, and the processor's widest unit sweep gives bitwise the
 * baseline's λ and v after 7 sweeps from a warm start. */
static void test_contact_units(void **state) {
  arena *a = *state;
  rng r = {11};
  big_problem *bp = test_alloc(1, sizeof *bp);
  for (int c = 0; c < 6; ++c) {
    big_make(bp, &r);
    for (int model = 0; model < 2; ++model) {
      lcp_friction_model_t fm = model ? LCP_FRICTION_CONE : LCP_FRICTION_BOX;
      int n = bp->problem.row_count;
      double ref[BIG_ROWS], got[BIG_ROWS], v0[6 * BODIES];
      solver_result res;
      big_reset(bp);
      solver_settings s = settings_of(200000, 1.0, 1e-12, fm);
      assert_int_equal(lcp__solver_pgs(&s, &bp->problem, &res, a), LCP_OK);
      assert_true(res.residual < 1e-12);
      /* the bounds hold, and every contact normal with an impulse has w = 0
       * (w + cfm λ, from the solver's velocity) while the others separate */
      for (int i = 0; i < n; ++i) {
        const solver_row *row = &bp->rows[i];
        ref[i] = row->lambda;
        double w = -row->target + row->cfm * row->lambda;
        for (int k = 0; k < 2; ++k)
          for (int q = 0; q < row->dof_count[k]; ++q)
            w += bp->J[row->coef_offset[k] + q] * bp->velocity[row->dof_offset[k] + q];
        if (row->kind == ROW_NORMAL) {
          assert_true(row->lambda >= 0.0);
          assert_true(row->lambda > 0.0 ? fabs(w) <= 1e-9 : w >= -1e-9);
        } else if (row->kind != ROW_BILATERAL) {
          double bound = row->mu * bp->rows[row->normal_row].lambda;
          assert_true(fabs(row->lambda) <= bound * (1.0 + 1e-12) + 1e-300);
        }
      }
      /* widest against baseline, from a warm start */
      s = settings_of(7, 1.0, 0.0, fm);
      for (int i = 0; i < n; ++i)
        ref[i] = 0.5 * ref[i];
      for (int wide = 0; wide < 2; ++wide) {
        big_reset(bp);
        for (int i = 0; i < n; ++i)
          bp->rows[i].lambda = ref[i];
        s.pgs_mode = wide == 0 ? PGS_MODE_BASELINE_VECTORS : PGS_MODE_FULL;
        assert_int_equal(lcp__solver_pgs(&s, &bp->problem, &res, a), LCP_OK);
        if (wide == 0) {
          for (int i = 0; i < n; ++i)
            got[i] = bp->rows[i].lambda;
          memcpy(v0, bp->velocity, sizeof v0);
        } else {
          for (int i = 0; i < n; ++i)
            assert_memory_equal(&got[i], &bp->rows[i].lambda, sizeof(double));
          assert_memory_equal(v0, bp->velocity, sizeof v0);
        }
      }
      lcp__arena_reset(a);
    }
  }
  free(bp);
}

/* The problem's contacts as coefficients (form 0) or as solver_contact
 * points (form 1). */
static void big_set_form(big_problem *bp, int form) {
  bp->problem.contact_count = form == 1 ? bp->contact_count : 0;
  if (form == 1) {
    bp->problem.contacts = bp->contacts;
    bp->problem.body_inv_mass = bp->inv_mass;
    bp->problem.body_inv_inertia = (const double(*)[9])bp->inv_inertia;
  }
}

/* Form 0 keeps the impulses and velocities as the reference; form 1 must
 * give them to 1e-8 (relative beyond 1). */
static void big_keep_or_compare(const big_problem *bp, int form, double *ref, double *vref) {
  for (int i = 0; i < bp->problem.row_count; ++i) {
    if (form == 0)
      ref[i] = bp->rows[i].lambda;
    else
      assert_true(fabs(bp->rows[i].lambda - ref[i]) <= 1e-8 * (1.0 + fabs(ref[i])));
  }
  for (int k = 0; k < 6 * BODIES; ++k) {
    if (form == 0)
      vref[k] = bp->velocity[k];
    else
      assert_true(fabs(bp->velocity[k] - vref[k]) <= 1e-8 * (1.0 + fabs(vref[k])));
  }
}

/* The big problem's contacts given as solver_contact points, their rows'
 * coefficients unwritten (NaN: any read before the solver writes them
 * shows): each solver gives the coefficient form's impulses and velocity
 * (to rounding), PGS's point units in both friction models converging to
 * the same solution and the widest sweep bitwise the baseline's. */
static void test_contact_points(void **state) {
  arena *a = *state;
  rng r = {23};
  big_problem *bp = test_alloc(1, sizeof *bp);
  for (int c = 0; c < 4; ++c) {
    big_make(bp, &r);
    int n = bp->problem.row_count;
    double J[BIG_ROWS * 12], T[BIG_ROWS * 12];
    memcpy(J, bp->J, sizeof J);
    memcpy(T, bp->T, sizeof T);
    double radius = jacobi_radius(&bp->problem);
    for (int kind = 0; kind < 4; ++kind) {
      lcp_friction_model_t fm = kind == 1 ? LCP_FRICTION_BOX : LCP_FRICTION_CONE;
      /* Jacobi: ω below 2/ρ(D⁻¹A) */
      double omega = kind == 2 ? 1.0 / radius : 1.0;
      solver_settings s = settings_of(400000, omega, kind == 3 ? 0.0 : 1e-12, fm);
      double ref[BIG_ROWS], vref[6 * BODIES];
      solver_result res;
      for (int form = 0; form < 2; ++form) {
        big_reset(bp);
        memcpy(bp->J, J, sizeof J);
        memcpy(bp->T, T, sizeof T);
        if (form == 1)
          for (int k = 0; k < bp->contact_count; ++k)
            for (int m = 0; m < 3; ++m)
              for (int q = 0; q < 12; ++q)
                bp->J[12 * (bp->contacts[k].row + m) + q] =
                    bp->T[12 * (bp->contacts[k].row + m) + q] = NAN;
        big_set_form(bp, form);
        int rc = kind == 2   ? lcp__solver_jacobi(&s, &bp->problem, &res, a)
                 : kind == 3 ? lcp__solver_direct(&s, &bp->problem, &res, a, BIG_ROWS)
                             : lcp__solver_pgs(&s, &bp->problem, &res, a);
        assert_int_equal(rc, LCP_OK);
        big_keep_or_compare(bp, form, ref, vref);
        lcp__arena_reset(a);
      }
      if (kind > 1)
        continue;
      /* widest against baseline, from a warm start */
      s = settings_of(7, 1.0, 0.0, fm);
      double got[BIG_ROWS], v0[6 * BODIES];
      for (int wide = 0; wide < 2; ++wide) {
        big_reset(bp);
        for (int i = 0; i < n; ++i)
          bp->rows[i].lambda = 0.5 * ref[i];
        s.pgs_mode = wide == 0 ? PGS_MODE_BASELINE_VECTORS : PGS_MODE_FULL;
        assert_int_equal(lcp__solver_pgs(&s, &bp->problem, &res, a), LCP_OK);
        for (int i = 0; i < n; ++i) {
          if (wide == 0)
            got[i] = bp->rows[i].lambda;
          else
            assert_memory_equal(&got[i], &bp->rows[i].lambda, sizeof(double));
        }
        if (wide == 0)
          memcpy(v0, bp->velocity, sizeof v0);
        else
          assert_memory_equal(v0, bp->velocity, sizeof v0);
        lcp__arena_reset(a);
      }
    }
  }
  free(bp);
}

/* A body that nothing can move (inverse mass and inertia 0) resting on the
 * ground: its ground contact's rows have A_kk = 0. Given as points, such a
 * point is found degenerate while its group is filled four lanes at a time
 * (after other groups' warm starts went into velocity, for some of these
 * problems), and the whole problem is set up again lane by lane from the
 * velocity as it was, the point going to the generic rows: the impulses and
 * velocities are the coefficient form's (1e-8) and the degenerate rows'
 * impulses 0, in both friction models. */
static void test_contact_points_degenerate(void **state) {
  arena *a = *state;
  big_problem *bp = test_alloc(1, sizeof *bp);
  for (int problem = 0; problem < 12; ++problem) {
    rng r = {41 + (uint64_t)problem};
    big_make(bp, &r);
    int n = bp->problem.row_count, still = problem % 3; /* bodies 0-2 rest on the ground */
    bp->inv_mass[still] = 0.0;
    memset(bp->inv_inertia[still], 0, sizeof bp->inv_inertia[still]);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < 2; ++k)
        if (bp->rows[i].dof_count[k] == 6 && bp->rows[i].dof_offset[k] == 6 * still)
          for (int q = 0; q < 6; ++q)
            bp->T[bp->rows[i].coef_offset[k] + q] = 0.0;
    int degenerate = 0;
    for (int k = 0; k < bp->contact_count; ++k)
      if (bp->contacts[k].dof[0] < 0 && bp->contacts[k].dof[1] == 6 * still) {
        for (int d = 0; d < 3; ++d)
          bp->rows[bp->contacts[k].row + d].cfm = 0.0;
        ++degenerate;
      }
    assert_true(degenerate > 0);
    double J[BIG_ROWS * 12], T[BIG_ROWS * 12];
    memcpy(J, bp->J, sizeof J);
    memcpy(T, bp->T, sizeof T);
    for (int model = 0; model < 2; ++model) {
      lcp_friction_model_t fm = model == 0 ? LCP_FRICTION_CONE : LCP_FRICTION_BOX;
      solver_settings s = settings_of(400000, 1.0, 1e-12, fm);
      double ref[BIG_ROWS], vref[6 * BODIES];
      for (int form = 0; form < 2; ++form) {
        big_reset(bp);
        /* a warm start, so that velocity moves as groups are filled */
        for (int i = 0; i < n; ++i)
          bp->rows[i].lambda = bp->rows[i].kind == ROW_NORMAL ? 0.2 : 0.05;
        memcpy(bp->J, J, sizeof J);
        memcpy(bp->T, T, sizeof T);
        big_set_form(bp, form);
        solver_result res;
        assert_int_equal(lcp__solver_pgs(&s, &bp->problem, &res, a), LCP_OK);
        for (int i = 0; i < n; ++i)
          assert_true(isfinite(bp->rows[i].lambda));
        big_keep_or_compare(bp, form, ref, vref);
        for (int k = 0; k < bp->contact_count; ++k)
          if (bp->contacts[k].dof[0] < 0 && bp->contacts[k].dof[1] == 6 * still)
            for (int d = 0; d < 3; ++d)
              assert_true(bp->rows[bp->contacts[k].row + d].lambda == 0.0);
        lcp__arena_reset(a);
      }
    }
  }
  free(bp);
}

/* A contact given as a point with a non-finite arm, direction or inverse
 * mass: every solver answers LCP_ERR_NUMERIC (PGS finds it while filling
 * the point's group, and the coefficient way then meets the non-finite
 * coefficients), without reading out of bounds. */
static void test_contact_points_non_finite(void **state) {
  arena *a = *state;
  rng r = {57};
  big_problem *bp = test_alloc(1, sizeof *bp);
  for (int what = 0; what < 3; ++what) {
    big_make(bp, &r);
    big_set_form(bp, 1);
    solver_contact *c = &bp->contacts[bp->contact_count / 2];
    if (what == 0)
      c->arm[1][2] = NAN;
    else if (what == 1)
      c->dir[0][0] = INFINITY;
    else
      bp->inv_mass[c->dof[1] / 6] = INFINITY;
    solver_settings s = settings_of(50, 1.0, 0.0, LCP_FRICTION_CONE);
    solver_result res;
    big_reset(bp);
    assert_int_equal(lcp__solver_pgs(&s, &bp->problem, &res, a), LCP_ERR_NUMERIC);
    lcp__arena_reset(a);
    big_reset(bp);
    s.omega = 0.2;
    assert_int_equal(lcp__solver_jacobi(&s, &bp->problem, &res, a), LCP_ERR_NUMERIC);
    lcp__arena_reset(a);
    big_reset(bp);
    assert_int_equal(lcp__solver_direct(&s, &bp->problem, &res, a, BIG_ROWS), LCP_ERR_NUMERIC);
    lcp__arena_reset(a);
  }
  free(bp);
}

/* ---- blocks: a robot's joint rows solved together ---- */

/* A robot of RB_NV dofs (range [0, RB_NV), M⁻¹ a random SPD matrix) and
 * RB_BODIES free bodies, with contact rows first (body on the ground,
 * body on body, a robot link on a body: 6-wide and RB_NV-wide sides) and
 * then the robot's joint rows on its range, as the step writes them: a PD
 * row per joint (J = e_v, soft, |λ| ≤ a bound some reach), upper-limit rows
 * (J = −e_v, [0, ∞), nearly hard) on every other joint and a damping row
 * ((−∞, ∞), soft). */
enum { RB_NV = 7, RB_BODIES = 3, RB_DOFS = RB_NV + 6 * RB_BODIES, RB_ROWS = 64 };
typedef struct robot_problem {
  solver_row rows[RB_ROWS];
  double J[RB_ROWS * 2 * RB_DOFS], T[RB_ROWS * 2 * RB_DOFS];
  double minv[RB_NV * RB_NV];
  double u[RB_DOFS], velocity[RB_DOFS];
  int n, joint_first; /* row count; first joint row */
  solver_problem problem;
} robot_problem;

static void rb_body_side(robot_problem *rp, int i, int k, int b, vec3 point, vec3 d, double sign) {
  solver_row *row = &rp->rows[i];
  row->coef_offset[k] = 2 * RB_DOFS * i + RB_DOFS * k;
  if (b < 0) {
    row->dof_count[k] = 0;
    return;
  }
  vec3 com = v3(0.4 * b, -0.2 * b, 0.3 + 0.5 * b);
  vec3 ang = v3_cross(v3_sub(point, com), d);
  double im = 1.0 / (1.5 + b), ii[3] = {2.0 + 0.3 * b, 2.5, 1.2 + 0.2 * b};
  double jv[6] = {d.x, d.y, d.z, ang.x, ang.y, ang.z};
  for (int q = 0; q < 6; ++q) {
    rp->J[row->coef_offset[k] + q] = sign * jv[q];
    rp->T[row->coef_offset[k] + q] = sign * jv[q] * (q < 3 ? im : ii[q - 3]);
  }
  row->dof_offset[k] = RB_NV + 6 * b;
  row->dof_count[k] = 6;
}

/* side k of row i on the robot: J = sign·jr, M⁻¹Jᵀ = sign·M⁻¹ jr */
static void rb_robot_side(robot_problem *rp, int i, int k, const double *jr, double sign) {
  solver_row *row = &rp->rows[i];
  row->coef_offset[k] = 2 * RB_DOFS * i + RB_DOFS * k;
  row->dof_offset[k] = 0;
  row->dof_count[k] = RB_NV;
  for (int a = 0; a < RB_NV; ++a) {
    double t = 0.0;
    for (int c = 0; c < RB_NV; ++c)
      t += rp->minv[a * RB_NV + c] * jr[c];
    rp->J[row->coef_offset[k] + a] = sign * jr[a];
    rp->T[row->coef_offset[k] + a] = sign * t;
  }
}

/* A contact point (normal row i, friction rows i+1, i+2) between side a
 * (body ba, or the robot with link Jacobian jr when ba == -2) and body bb. */
static void rb_contact(robot_problem *rp, rng *r, int i, int ba, const double *jr_dirs, int bb,
                       vec3 point, vec3 n, double mu) {
  vec3 t[2];
  v3_tangent_basis(n, &t[0], &t[1]);
  for (int d = 0; d < 3; ++d) {
    vec3 dir = d == 0 ? n : t[d - 1];
    if (ba == -2)
      rb_robot_side(rp, i + d, 0, jr_dirs + RB_NV * d, -1.0);
    else
      rb_body_side(rp, i + d, 0, ba, point, dir, -1.0);
    rb_body_side(rp, i + d, 1, bb, point, dir, 1.0);
    solver_row *row = &rp->rows[i + d];
    row->kind = d == 0 ? ROW_NORMAL : (d == 1 ? ROW_FRICTION_1 : ROW_FRICTION_2);
    row->normal_row = d == 0 ? -1 : i;
    row->normal_count = d == 0 ? 0 : 1;
    row->mu = d == 0 ? 0.0 : mu;
    row->lo = d == 0 ? 0.0 : -INFINITY;
    row->hi = INFINITY;
    row->cfm = 1e-2; /* a unique solution for the comparison */
    row->target = d == 0 ? rng_range(r, 0.0, 0.4) : 0.0;
  }
}

/* one joint row on the robot's range: J = sign e_v, M⁻¹Jᵀ = sign column v */
static void rb_joint_row(robot_problem *rp, int i, int v, double sign, double target, double cfm,
                         double lo, double hi) {
  double e[RB_NV] = {0};
  e[v] = 1.0;
  solver_row *row = &rp->rows[i];
  memset(row, 0, sizeof *row);
  rb_robot_side(rp, i, 1, e, sign);
  row->coef_offset[0] = 2 * RB_DOFS * i;
  row->dof_count[0] = 0;
  row->kind = ROW_BILATERAL;
  row->normal_row = -1;
  row->target = target;
  row->cfm = cfm;
  row->lo = lo;
  row->hi = hi;
}

static void rb_make(robot_problem *rp, rng *r, bool contacts) {
  memset(rp, 0, sizeof *rp);
  /* M⁻¹ = Q diag(e) Qᵀ + 0.05 I, Q random (not orthogonal): dense and SPD */
  double Q[RB_NV * RB_NV];
  for (int k = 0; k < RB_NV * RB_NV; ++k)
    Q[k] = rng_range(r, -1.0, 1.0);
  for (int a = 0; a < RB_NV; ++a)
    for (int b = 0; b < RB_NV; ++b) {
      double m = a == b ? 0.05 : 0.0;
      for (int c = 0; c < RB_NV; ++c)
        m += Q[a * RB_NV + c] * Q[b * RB_NV + c] * (0.2 + c);
      rp->minv[a * RB_NV + b] = m;
    }
  int i = 0;
  if (contacts) {
    vec3 up = v3(0.0, 0.0, 1.0);
    for (int q = 0; q < 2; ++q) /* body 0 on the ground, 2 points */
      rb_contact(rp, r, i, -1, NULL, 0, v3(0.2 * q - 0.1, 0.1, 0.0), up, 0.6), i += 3;
    rb_contact(rp, r, i, 0, NULL, 1, v3(0.1, -0.1, 0.6), up, 0.4);
    i += 3;
    double jr[3 * RB_NV]; /* a link's point Jacobian along n, t1, t2 */
    for (int k = 0; k < 3 * RB_NV; ++k)
      jr[k] = rng_range(r, -0.8, 0.8);
    rb_contact(rp, r, i, -2, jr, 2, v3(0.7, -0.3, 1.2), up, 0.5);
    i += 3;
  }
  rp->joint_first = i;
  for (int v = 0; v < RB_NV; ++v) {
    double bound = rng_range(r, 0.02, 0.5);
    double target = rng_range(r, -1.0, 1.0);
    double cfm = rng_range(r, 0.05, 0.5);
    rb_joint_row(rp, i++, v, 1.0, target, cfm, -bound, bound);
    if (v % 2 == 0) /* an upper limit: w = −qd ≥ target */
      rb_joint_row(rp, i++, v, -1.0, rng_range(r, -0.5, 0.5), 1e-3, 0.0, INFINITY);
    if (v == 3) /* viscous damping */
      rb_joint_row(rp, i++, v, 1.0, 0.0, 1.0, -INFINITY, INFINITY);
  }
  rp->n = i;
  for (int k = 0; k < RB_DOFS; ++k)
    rp->u[k] = rng_range(r, -1.0, 1.0);
  rp->problem = (solver_problem){.row_count = i,
                                 .rows = rp->rows,
                                 .J = rp->J,
                                 .MinvJt = rp->T,
                                 .dof_count = RB_DOFS,
                                 .velocity = rp->velocity};
}

static void rb_reset(robot_problem *rp) {
  memcpy(rp->velocity, rp->u, sizeof rp->u);
  for (int i = 0; i < rp->n; ++i)
    rp->rows[i].lambda = 0.0;
}

/* The boxed-LCP conditions of the solution in rp (box friction): each row's
 * w + cfm λ (from the returned velocity) is ≥ 0 at its lower bound, ≤ 0 at
 * its upper bound (either when they are equal), 0 between; the bounds hold;
 * and the velocity is u + M⁻¹Jᵀλ. Returns the largest violation. */
static double rb_violation(const robot_problem *rp) {
  double worst = 0.0;
  double v[RB_DOFS];
  memcpy(v, rp->u, sizeof v);
  for (int i = 0; i < rp->n; ++i) {
    const solver_row *row = &rp->rows[i];
    for (int k = 0; k < 2; ++k)
      for (int q = 0; q < row->dof_count[k]; ++q)
        v[row->dof_offset[k] + q] += rp->T[row->coef_offset[k] + q] * row->lambda;
  }
  for (int k = 0; k < RB_DOFS; ++k)
    worst = fmax(worst, fabs(v[k] - rp->velocity[k]));
  for (int i = 0; i < rp->n; ++i) {
    const solver_row *row = &rp->rows[i];
    double w = -row->target + row->cfm * row->lambda;
    for (int k = 0; k < 2; ++k)
      for (int q = 0; q < row->dof_count[k]; ++q)
        w += rp->J[row->coef_offset[k] + q] * v[row->dof_offset[k] + q];
    double lo = row->lo, hi = row->hi, l = row->lambda;
    if (row->kind == ROW_FRICTION_1 || row->kind == ROW_FRICTION_2) {
      double n = fmax(rp->rows[row->normal_row].lambda, 0.0);
      lo = -row->mu * n;
      hi = row->mu * n;
    }
    worst = fmax(worst, fmax(lo - l, l - hi));
    if (lo == hi) /* a friction row of a normal without impulse: any w */
      continue;
    if (l <= lo)
      worst = fmax(worst, -w);
    else if (l >= hi)
      worst = fmax(worst, w);
    else
      worst = fmax(worst, fabs(w));
  }
  return worst;
}

/* A robot's joint rows as one block (with contact rows on the robot and on
 * free bodies in the same sweep): PGS's λ satisfies the boxed-LCP
 * conditions to 1e-9 and equals the direct solver's within 1e-7, for 20
 * random problems, some with saturated PD rows (Dantzig in the block).
 * Alone, the joint rows converge in 2 sweeps (one exact, one to confirm),
 * where row-by-row PGS needs many more; and the same bits every time. */
static void test_robot_blocks(void **state) {
  arena *a = *state;
  rng r = {21};
  robot_problem *rp = test_alloc(1, sizeof *rp);
  double ref[RB_ROWS], got[RB_ROWS];
  long sweeps_block = 0, sweeps_rows = 0;
  int saturated = 0;
  for (int c = 0; c < 20; ++c) {
    bool contacts = c % 2 == 0;
    rb_make(rp, &r, contacts);
    solver_settings s = settings_of(100000, 1.0, 1e-13, LCP_FRICTION_BOX);
    solver_result res;
    rb_reset(rp);
    assert_int_equal(lcp__solver_pgs(&s, &rp->problem, &res, a), LCP_OK);
    assert_true(rb_violation(rp) <= 1e-9);
    sweeps_block += res.iterations;
    if (!contacts)
      assert_true(res.iterations <= 2);
    for (int i = 0; i < rp->n; ++i) {
      got[i] = rp->rows[i].lambda;
      const solver_row *row = &rp->rows[i];
      saturated += i >= rp->joint_first && (got[i] == row->lo || got[i] == row->hi) &&
                   isfinite(got[i]) && got[i] != 0.0;
    }
    /* again: bitwise the same */
    rb_reset(rp);
    assert_int_equal(lcp__solver_pgs(&s, &rp->problem, &res, a), LCP_OK);
    for (int i = 0; i < rp->n; ++i)
      assert_memory_equal(&got[i], &rp->rows[i].lambda, sizeof(double));
    /* the direct solver */
    rb_reset(rp);
    assert_int_equal(lcp__solver_direct(&s, &rp->problem, &res, a, 600), LCP_OK);
    for (int i = 0; i < rp->n; ++i)
      ref[i] = rp->rows[i].lambda;
    assert_true(test_max_abs_diff(rp->n, ref, got) <= 1e-7);
    /* row by row */
    s.pgs_mode = PGS_MODE_NO_BLOCKS;
    rb_reset(rp);
    assert_int_equal(lcp__solver_pgs(&s, &rp->problem, &res, a), LCP_OK);
    sweeps_rows += res.iterations;
    lcp__arena_reset(a);
  }
  assert_true(saturated > 0);
  assert_true(sweeps_block < sweeps_rows);
  printf("  robot blocks: mean sweeps to 1e-13: %.1f (blocks), %.1f (row by row); %d "
         "saturated joint rows\n",
         (double)sweeps_block / 20, (double)sweeps_rows / 20, saturated);
  free(rp);
}

/* A block singular to rounding (the same PD row twice on one dof, cfm
 * 1e-15: K is not clearly positive definite) has no factor and still
 * solves: the boxed-LCP conditions hold to 1e-6. */
static void test_robot_block_singular(void **state) {
  arena *a = *state;
  rng r = {37};
  robot_problem *rp = test_alloc(1, sizeof *rp);
  solver_settings s = settings_of(100000, 1.0, 1e-13, LCP_FRICTION_BOX);
  solver_result res;
  rb_make(rp, &r, false);
  int i = 0;
  rb_joint_row(rp, i++, 0, 1.0, 0.4, 1e-15, -0.3, 0.3);
  rb_joint_row(rp, i++, 0, 1.0, 0.4, 1e-15, -0.3, 0.3);
  rb_joint_row(rp, i++, 1, 1.0, -0.2, 0.1, -0.5, 0.5);
  rp->n = i;
  rp->problem.row_count = i;
  rb_reset(rp);
  assert_int_equal(lcp__solver_pgs(&s, &rp->problem, &res, a), LCP_OK);
  assert_true(rb_violation(rp) <= 1e-6);
  free(rp);
}

/* The direct solver refuses more rows than max_rows (LCP_ERR_STATE) and
 * leaves the problem alone; malformed rows are LCP_ERR_INVALID_ARGUMENT. */
static void test_errors(void **state) {
  arena *a = *state;
  small_problem sp;
  particle_problem(&sp, 1.0, 1.0, -1.0);
  small_reset(&sp);
  solver_settings s = settings_of(20, 1.0, 0.0, LCP_FRICTION_BOX);
  solver_result res;
  assert_int_equal(lcp__solver_direct(&s, &sp.problem, &res, a, 2), LCP_ERR_STATE);
  assert_true(sp.velocity[2] == -1.0 && sp.rows[0].lambda == 0.0);
  assert_int_equal(lcp__solver_direct(&s, &sp.problem, &res, a, 3), LCP_OK);
  for (int f = 0; f < 3; ++f) {
    particle_problem(&sp, 1.0, 1.0, -1.0);
    small_reset(&sp);
    sp.rows[1].normal_row = 7; /* no such row */
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_ERR_INVALID_ARGUMENT);
    particle_problem(&sp, 1.0, 1.0, -1.0);
    small_reset(&sp);
    sp.rows[0].dof_count[0] = 4; /* past dof_count */
    assert_int_equal(all_solvers[f](&s, &sp.problem, &res, a), LCP_ERR_INVALID_ARGUMENT);
  }
  particle_problem(&sp, 1.0, 1.0, -1.0);
  small_reset(&sp);
  s.omega = 0.0;
  assert_int_equal(lcp__solver_pgs(&s, &sp.problem, &res, a), LCP_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      ARENA_TEST(test_dantzig_random),
      ARENA_TEST(test_dantzig_semidefinite),
      ARENA_TEST(test_dantzig_redundant_rows),
      ARENA_TEST(test_dantzig_rejects_bad_input),
      ARENA_TEST(test_direct_matches_dantzig),
      ARENA_TEST(test_pgs_matches_direct),
      ARENA_TEST(test_jacobi_matches_direct),
      ARENA_TEST(test_sor_converges_in_0_2),
      ARENA_TEST(test_sor_diverges_outside_0_2),
      ARENA_TEST(test_friction_box_vs_cone),
      ARENA_TEST(test_friction_coupled),
      ARENA_TEST(test_direct_redundant_contacts),
      ARENA_TEST(test_warm_start_one_sweep),
      ARENA_TEST(test_warm_start_is_clamped),
      ARENA_TEST(test_overlapping_sides),
      ARENA_TEST(test_soft_row),
      ARENA_TEST(test_degenerate_and_offset_bounds),
      ARENA_TEST(test_non_finite),
      ARENA_TEST(test_contact_units),
      ARENA_TEST(test_contact_points),
      ARENA_TEST(test_contact_points_degenerate),
      ARENA_TEST(test_contact_points_non_finite),
      ARENA_TEST(test_robot_blocks),
      ARENA_TEST(test_robot_block_singular),
      ARENA_TEST(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
