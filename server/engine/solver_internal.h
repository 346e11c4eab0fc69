/* SPDX-License-Identifier: Apache-2.0 */
/* What the solvers share (solver.h is their interface): the checks and
 * per-row facts of a problem (solver_common.c), the 6-wide body kernels,
 * the generic rows as items (one row's projected update, used by PGS and
 * Jacobi), and the dense boxed-LCP solver by Dantzig's method that the
 * direct solver and PGS's robot blocks use (solver_direct.c).
 *
 * Internal names: functions with external linkage are prefixed by their
 * module (solver_, dantzig_, contact_, robot_block_, pgs_); static and
 * static inline helpers are not. */
#ifndef LCP_SOLVER_INTERNAL_H
#define LCP_SOLVER_INTERNAL_H

#include "simd.h"
#include "solver.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* A_ii below this fraction of Σ_k |J_ik (M⁻¹J_iᵀ)_k| is rounding noise: the
 * row cannot move its own w (lcp__solver_row_diag). */
#define DEGENERATE_RATIO 1e-13

/* rows whose bound follows normal rows' impulses: tangents and torsion */
static inline bool is_friction(row_kind k) {
  return k == ROW_FRICTION_1 || k == ROW_FRICTION_2 || k == ROW_TORSION;
}

/* Σ max(λ_j, 0) over a friction row's normals, normal .. normal + count − 1,
 * in lam (indexed by row): the patch's total normal impulse, a negative
 * one counting as 0. */
static inline double normal_sum(const double *lam, int32_t normal, int32_t count) {
  double sum = 0.0;
  for (int32_t j = 0; j < count; ++j) {
    double n = lam[normal + j];
    sum += n > 0.0 ? n : 0.0;
  }
  return sum;
}

static inline double clampd(double x, double lo, double hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

/* ---- the 6-wide kernels of a body side: three pairs of lanes ---- */

static inline lcp_d2 dot6_partial(const double *a, const double *b) {
  lcp_d2 s = d2_mul(d2_load(a), d2_load(b));
  s = d2_add(s, d2_mul(d2_load(a + 2), d2_load(b + 2)));
  return d2_add(s, d2_mul(d2_load(a + 4), d2_load(b + 4)));
}
static inline double dot6(const double *a, const double *b) { return d2_sum(dot6_partial(a, b)); }
/* a0·b0 + a1·b1 over two 6-wide sides */
static inline double dot12(const double *a0, const double *b0, const double *a1, const double *b1) {
  return d2_sum(d2_add(dot6_partial(a0, b0), dot6_partial(a1, b1)));
}
/* y += x s */
static inline void axpy6(double *y, const double *x, double s) {
  lcp_d2 sv = d2_splat(s);
  for (int k = 0; k < 6; k += 2)
    d2_store(y + k, d2_add(d2_load(y + k), d2_mul(d2_load(x + k), sv)));
}
/* y += x1 s1 + x2 s2: both tangents of a contact act on the same sides. */
static inline void axpy6x2(double *y, const double *x1, double s1, const double *x2, double s2) {
  lcp_d2 a = d2_splat(s1), b = d2_splat(s2);
  for (int k = 0; k < 6; k += 2)
    d2_store(y + k, d2_add(d2_load(y + k),
                           d2_add(d2_mul(d2_load(x1 + k), a), d2_mul(d2_load(x2 + k), b))));
}

/* a·b and y += x s over a side of n entries (6: a body) */
static inline double side_dot(const double *a, const double *b, int32_t n) {
  if (n == 6)
    return dot6(a, b);
  double s = 0.0;
  for (int32_t k = 0; k < n; ++k)
    s += a[k] * b[k];
  return s;
}
static inline void side_axpy(double *y, const double *x, int32_t n, double s) {
  if (n == 6) {
    axpy6(y, x, s);
    return;
  }
  for (int32_t k = 0; k < n; ++k)
    y[k] += x[k] * s;
}

/* ---- checks and per-row facts (solver_common.c) ---- */

/* LCP_ERR_INVALID_ARGUMENT for a malformed problem (indices out of range, a
 * friction row without a valid normal row, cfm < 0, μ < 0, lo > hi),
 * LCP_ERR_NUMERIC for a non-finite input. */
int lcp__solver_check_problem(const solver_problem *p);
/* The iterative solvers' checks: settings and scratch given, 0 < ω finite,
 * and lcp__solver_check_problem. */
int lcp__solver_check_iterative(const solver_settings *settings, const solver_problem *p,
                                const arena *scratch);
/* A_ii + cfm_i of row r, or 0 for a degenerate row (its impulse stays 0),
 * or −1 when not finite. A_ii = Σ_k J_k (M⁻¹Jᵀ)_k is taken as zero when
 * it is below DEGENERATE_RATIO of Σ_k |J_k (M⁻¹Jᵀ)_k|, the rounding level of
 * its own terms (J_i in the null space of M⁻¹). */
double lcp__solver_row_diag(const solver_problem *p, const solver_row *r);
/* A_ij = J_i · M⁻¹J_jᵀ */
double lcp__solver_row_cross(const solver_problem *p, const solver_row *ri, const solver_row *rj);
/* J_i · v − target_i: the row's constraint velocity w_i */
double lcp__solver_row_velocity(const solver_problem *p, const solver_row *r, const double *v);
/* v += M⁻¹J_iᵀ s */
void lcp__solver_row_apply(const solver_problem *p, const solver_row *r, double *v, double s);
/* Writes the J and M⁻¹Jᵀ coefficients of a contact point's rows (the
 * formulas at solver_contact), for the code that works from coefficients. */
void lcp__solver_contact_expand(const solver_problem *p, const solver_contact *c);
void lcp__solver_contacts_expand_all(const solver_problem *p);
/* The bound of friction row r from the normals' impulses in lam (indexed
 * by row, or through pos when pos is not NULL: lam[pos[row]], −1 absent):
 * μ Σ max(λn, 0). */
double lcp__solver_friction_bound(const solver_row *r, const double *lam, const int32_t *pos);
/* Gives each patch's normal impulses (problem contacts with K ≥ 2) the
 * symmetric distribution: among its points whose w_i is within w_tolerance
 * of 0, the minimum-norm nonnegative λ with the same Σλ_i and Σλ_i p_i (p_i
 * the points in the contact plane). Jᵀλ, and so the velocity, every w and
 * every friction bound (they depend on Σλ_i only) are unchanged: a
 * symmetric load gets a symmetric distribution, which Gauss–Seidel, for
 * the rank-3 rows of a rigid face, does not give. w_i is taken against
 * targets[row] when given (the relax iterations' targets), else against
 * the rows' targets. */
void lcp__solver_patches_even(solver_problem *p, double w_tolerance, const double *targets);
/* The w_tolerance the solvers give it (m/s): the velocity error an
 * iterative solve leaves. */
#define PATCH_W_TOLERANCE 1e-5
/* The same on the impulses of one patch of K points at positions x, y in
 * its plane, over the points with active[q]; false (lam unchanged) when no
 * such distribution is found. */
bool lcp__patch_even(int32_t K, const double *x, const double *y, const bool *active, double *lam);
/* The largest eigenvalue of a friction pair's 2×2 block [[d1, a], [a, d2]]
 * of A + diag(cfm), rows i and i + 1 with diagonals d1 and d2. Both
 * tangents take the common step 1/λmax: with a common scalar step the
 * fixed point of "step, then project on the disc" is λt ∥ −wt on the rim
 * (maximal dissipation, isotropic Coulomb friction), which per-row steps
 * 1/d1 ≠ 1/d2 would skew; and a step ≤ 1/λmax keeps the pair's
 * projected-gradient update a contraction for ω < 2. */
double lcp__solver_pair_lambda_max(const solver_problem *p, int32_t i, double d1, double d2);
void lcp__solver_set_result(solver_result *result, int32_t iterations, double residual);
/* LCP_ERR_NUMERIC when a velocity or an impulse is not finite */
int lcp__solver_check_finite_output(const solver_problem *p);

/* ---- generic rows as items ---- */

/* One row as the sweep sees it: everything the update touches, by pointer,
 * in one 128-byte record, in row order. A row whose sides are all 6 wide or
 * absent is "fast": absent sides point at zeros and a dummy velocity, so the
 * update is straight-line code (dot12/axpy6) without branches. */
enum { IT_FAST = 0, IT_GENERAL = 1, IT_PAIR_FAST = 2, IT_PAIR_GENERAL = 3 };

typedef struct pgs_item {
  double *v[2];       /* velocity of each side */
  const double *J[2]; /* J_i coefficients of each side */
  const double *T[2]; /* M⁻¹J_iᵀ coefficients of each side */
  /* The update λ − ω (J_i·v − target + cfm λ)/(A_ii + cfm), regrouped as
   * keep·λ + bias − step·(J_i·v) so that the part that waits for v is one
   * multiply-subtract: */
  double step;          /* ω / (A_ii + cfm_i); ω / λmax of the block for a cone pair */
  double keep;          /* 1 − step·cfm_i */
  double bias;          /* step·target_i */
  double diag;          /* A_ii + cfm_i, for the residual */
  double lo, hi;        /* fixed bounds; 0 for friction rows */
  double mu;            /* friction: bounds ±μ Σ max(λn, 0); 0 otherwise */
  int32_t n[2];         /* side widths (0 for an absent side) */
  int32_t row;          /* row index */
  int32_t normal;       /* first row whose λ scales the bounds (itself when mu == 0) */
  int32_t kind;         /* IT_*; a pair is this item and the next */
  int32_t normal_count; /* rows normal .. normal + normal_count − 1 scale the bounds */
} pgs_item;

/* J_i · v (without the target) */
static inline double item_jv(const pgs_item *it) {
  if (it->kind == IT_FAST || it->kind == IT_PAIR_FAST)
    return dot12(it->J[0], it->v[0], it->J[1], it->v[1]);
  return side_dot(it->J[0], it->v[0], it->n[0]) + side_dot(it->J[1], it->v[1], it->n[1]);
}

/* v += M⁻¹J_iᵀ dl */
static inline void item_apply(const pgs_item *it, double dl) {
  if (it->kind == IT_FAST || it->kind == IT_PAIR_FAST) {
    axpy6(it->v[0], it->T[0], dl);
    axpy6(it->v[1], it->T[1], dl);
  } else {
    side_axpy(it->v[0], it->T[0], it->n[0], dl);
    side_axpy(it->v[1], it->T[1], it->n[1], dl);
  }
}

/* The projected update of one scalar row,
 *
 *     λ ← clamp(λ − ω (w + cfm λ)/(A_ii + cfm), lo, hi),  w = J_i·v − target,
 *
 * the bounds of a friction row being ±μΣλn with Σλn its normal rows' current
 * impulses; jv = J_i·v. */
static inline double item_update(const pgs_item *it, const double *lam, double jv) {
  double l = lam[it->row];
  double bound = it->mu * normal_sum(lam, it->normal, it->normal_count);
  double x = (it->keep * l + it->bias) - it->step * jv;
  return clampd(x, it->lo - bound, it->hi + bound);
}

/* The cone pair's update: both tangents step from the same v with the common
 * step, then (λ1, λ2) is projected on the disc of radius μλn. */
static inline void pair_update(const pgs_item *a, const pgs_item *b, const double *lam, double jv1,
                               double jv2, double *out1, double *out2) {
  double l1 = lam[a->row], l2 = lam[b->row];
  double radius = a->mu * normal_sum(lam, a->normal, a->normal_count);
  double u1 = (a->keep * l1 + a->bias) - a->step * jv1;
  double u2 = (b->keep * l2 + b->bias) - b->step * jv2;
  double len2 = u1 * u1 + u2 * u2;
  if (len2 > radius * radius) {
    double f = radius / sqrt(len2);
    u1 *= f;
    u2 *= f;
  }
  *out1 = u1;
  *out2 = u2;
}

/* The items of a problem and the impulses of its rows. */
typedef struct solver_items {
  pgs_item *items;
  int32_t count;
  double *lam;     /* [row_count] current impulses (PGS: of its blocks' rows too) */
  double *dummy_v; /* the velocity of an absent side (zeros) */
} solver_items;

/* Room for an item per row. LCP_ERR_NO_MEMORY or LCP_OK. */
int lcp__solver_items_init(solver_items *s, int32_t row_count, arena *scratch);
/* A row the items skip: degenerate (A_ii + cfm_i = 0), its impulse 0. */
void lcp__solver_items_skip(solver_items *s, solver_problem *p, int32_t i);
/* Row i, whose A_ii + cfm_i is diag > 0, as an item, or with row i + 1 as a
 * cone pair (cone model, a ROW_FRICTION_1/2 pair of one normal, both not
 * degenerate); the warm start, clamped into the bounds (friction: from the
 * normal's clamped warm start), is applied to velocity. Returns the rows
 * taken (1 or 2), or LCP_ERR_NUMERIC for a non-finite A_ii of row i + 1. */
int lcp__solver_items_add(solver_items *s, solver_problem *p, int32_t i, double diag, double omega,
                          bool cone);
/* The items' impulses into their rows. */
void lcp__solver_items_finish(const solver_items *s, solver_problem *p);

/* ---- the dense boxed LCP (solver_direct.c) ---- */

typedef struct dantzig_work dantzig_work;
/* Work space for problems of up to n rows; NULL when out of memory. */
dantzig_work *lcp__dantzig_work_new(int32_t n, arena *a);
/* lcp__dantzig_dense without its checks: A finite, symmetric, positive
 * diagonal; lo ≤ 0 ≤ hi. Regularises A only when the plain solve fails. */
int lcp__dantzig_solve(dantzig_work *ws, int32_t n, const double *A, const double *b,
                       const double *lo, const double *hi, double *x);
/* y ← K⁻¹ y with K = L Lᵀ (m×m, row stride n) */
void lcp__dantzig_cholesky_solve(const double *L, int32_t n, int32_t m, double *y);

#endif
