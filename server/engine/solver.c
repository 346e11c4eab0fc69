/* The boxed LCP solvers (DESIGN.md §3 step 5; seed 000; seed 002 §3.5).
 *
 *     w = A λ + b,  A = J M⁻¹ Jᵀ (+ diag cfm),  b = J u_free − target
 *     λ_i = lo_i ⇒ w_i ≥ 0;  λ_i = hi_i ⇒ w_i ≤ 0;  lo_i < λ_i < hi_i ⇒ w_i = 0
 *
 * Three solvers share the row preparation below:
 *
 * - solver_pgs: projected Gauss–Seidel with over-relaxation (SOR). Seed 000
 *   splits A = B + C with B = L + ω⁻¹D and iterates λ ← LCP(B, b + Cλ); with a
 *   diagonal D this is one clamped scalar update per row, and only A_ii is
 *   ever formed because w_i = J_i·v − target_i with v = u_free + M⁻¹Jᵀλ kept
 *   current. Converges for 0 < ω < 2 when A is positive definite (seed 000).
 * - solver_jacobi: the same with B = ω⁻¹D (all rows from one v), i.e. a
 *   projected gradient step in the D metric; converges for ω < 2/ρ(D⁻¹A).
 * - solver_direct: forms the dense A and solves it exactly by Dantzig's
 *   principal pivoting (lcp_dense_dantzig), with friction bounds from an outer
 *   fixed-point loop on the normal impulses.
 *
 * Friction rows come in (ROW_FRICTION_1, ROW_FRICTION_2) pairs whose bounds
 * follow their normal row's current λn (isotropic Coulomb, seed 001):
 * box model |λt_k| ≤ μλn per row; cone model |(λt1, λt2)| ≤ μλn. A friction
 * row's own lo/hi are not used; a negative λn counts as 0. In the cone model
 * the iterative solvers update a pair from one v with one common step
 * ω/λmax(2×2 block of A + cfm) and then project on the disc: with a common
 * scalar step the fixed point on the rim is λt = −μλn wt/‖wt‖ exactly
 * (maximal dissipation), which per-row steps ω/A_ii would skew whenever the
 * two tangents see different effective masses.
 *
 * Contract details beyond solver.h: a row with A_ii + cfm_i = 0 (J_i in the
 * null space of M⁻¹, no cfm) is degenerate and keeps λ = 0; a malformed
 * problem (side ranges outside [0, dof_count), a friction row whose
 * normal_row is out of range or itself a friction row, cfm < 0, μ < 0,
 * lo > hi, ω ≤ 0) gives LCP_ERR_INVALID_ARGUMENT before anything is
 * written. */
#include "solver.h"

#include "lcp_math.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A_ii below this fraction of Σ_k |J_ik (M⁻¹J_iᵀ)_k| is rounding noise: the
 * row cannot move its own w (see compute_diagonal). */
#define DEGENERATE_RATIO 1e-13

static bool is_friction(row_kind k) { return k == ROW_FRICTION_1 || k == ROW_FRICTION_2; }

/* The 6-wide kernels of the hot loop. With GCC/Clang they use 2-wide double
 * vectors (SSE2 on x86-64, NEON on arm64: part of every baseline, so the
 * arithmetic, and hence the result, does not depend on the machine);
 * scalar code elsewhere. Loads go through memcpy: coefficient blocks need
 * not be 16-byte aligned. */
#if defined(__GNUC__) || defined(__clang__)
typedef double vd2 __attribute__((vector_size(16)));
static inline vd2 ld2(const double *p) {
  vd2 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static inline void st2(double *p, vd2 v) { memcpy(p, &v, sizeof v); }
static inline vd2 dot6_partial(const double *a, const double *b) {
  return ld2(a) * ld2(b) + ld2(a + 2) * ld2(b + 2) + ld2(a + 4) * ld2(b + 4);
}
static inline double dot6(const double *a, const double *b) {
  vd2 s = dot6_partial(a, b);
  return s[0] + s[1];
}
/* a0·b0 + a1·b1 over two 6-wide sides */
static inline double dot12(const double *a0, const double *b0, const double *a1, const double *b1) {
  vd2 s = dot6_partial(a0, b0) + dot6_partial(a1, b1);
  return s[0] + s[1];
}
static inline void axpy6(double *y, const double *x, double s) {
  vd2 sv = {s, s};
  st2(y, ld2(y) + ld2(x) * sv);
  st2(y + 2, ld2(y + 2) + ld2(x + 2) * sv);
  st2(y + 4, ld2(y + 4) + ld2(x + 4) * sv);
}
/* y += x1 s1 + x2 s2: both tangents of a contact act on the same sides. */
static inline void axpy6x2(double *y, const double *x1, double s1, const double *x2, double s2) {
  vd2 a = {s1, s1}, b = {s2, s2};
  st2(y, ld2(y) + (ld2(x1) * a + ld2(x2) * b));
  st2(y + 2, ld2(y + 2) + (ld2(x1 + 2) * a + ld2(x2 + 2) * b));
  st2(y + 4, ld2(y + 4) + (ld2(x1 + 4) * a + ld2(x2 + 4) * b));
}
#else
static inline double dot6(const double *a, const double *b) {
  return ((a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5]);
}
static inline double dot12(const double *a0, const double *b0, const double *a1, const double *b1) {
  return dot6(a0, b0) + dot6(a1, b1);
}
static inline void axpy6(double *y, const double *x, double s) {
  for (int k = 0; k < 6; ++k)
    y[k] += x[k] * s;
}
static inline void axpy6x2(double *y, const double *x1, double s1, const double *x2, double s2) {
  for (int k = 0; k < 6; ++k)
    y[k] += x1[k] * s1 + x2[k] * s2;
}
#endif

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

/* ---- A from the rows ---- */

/* Σ a_k b_k over the dof indices both segments cover: a covers
 * [a_off, a_off + a_n), b covers [b_off, b_off + b_n). Blocks of different
 * lengths (a body's 6 against a robot's n) overlap in any sub-range. */
static double overlap_dot(const double *a, int32_t a_off, int32_t a_n, const double *b,
                          int32_t b_off, int32_t b_n) {
  int32_t start = a_off > b_off ? a_off : b_off;
  int32_t a_end = a_off + a_n, b_end = b_off + b_n;
  int32_t end = a_end < b_end ? a_end : b_end;
  double sum = 0.0;
  for (int32_t k = start; k < end; ++k)
    sum += a[k - a_off] * b[k - b_off];
  return sum;
}

/* J_i · M⁻¹J_jᵀ = A_ij: every side of row i against every side of row j
 * (seed 000's δ(lhs(i), lhs(j)) ... terms, generalised to overlapping
 * ranges, so that two sides on the same block also give their cross terms). */
static double row_cross(const solver_problem *p, const solver_row *ri, const solver_row *rj) {
  double sum = 0.0;
  for (int a = 0; a < 2; ++a) {
    if (ri->dof_count[a] <= 0)
      continue;
    for (int c = 0; c < 2; ++c) {
      if (rj->dof_count[c] <= 0)
        continue;
      const double *ja = p->J + ri->coef_offset[a], *tc = p->MinvJt + rj->coef_offset[c];
      if (ri->dof_offset[a] == rj->dof_offset[c] && ri->dof_count[a] == rj->dof_count[c])
        sum += side_dot(ja, tc, ri->dof_count[a]); /* the common case: the same block */
      else
        sum += overlap_dot(ja, ri->dof_offset[a], ri->dof_count[a], tc, rj->dof_offset[c],
                           rj->dof_count[c]);
    }
  }
  return sum;
}

/* J_i · v − target_i: the row's current constraint velocity w_i (seed 000). */
static double row_velocity(const solver_problem *p, const solver_row *r, const double *v) {
  double sum = -r->target;
  for (int a = 0; a < 2; ++a)
    for (int32_t k = 0; k < r->dof_count[a]; ++k)
      sum += p->J[r->coef_offset[a] + k] * v[r->dof_offset[a] + k];
  return sum;
}

/* v += M⁻¹J_iᵀ s */
static void row_apply(const solver_problem *p, const solver_row *r, double *v, double s) {
  for (int a = 0; a < 2; ++a)
    for (int32_t k = 0; k < r->dof_count[a]; ++k)
      v[r->dof_offset[a] + k] += p->MinvJt[r->coef_offset[a] + k] * s;
}

/* ---- checks and per-row facts shared by the three solvers ---- */

/* LCP_ERR_INVALID_ARGUMENT for a malformed problem (indices out of range, a
 * friction row without a valid normal row, cfm < 0, μ < 0, lo > hi),
 * LCP_ERR_NUMERIC for a non-finite input. */
/* A row's bounds (bounded: not a friction row) and its cfm, target and
 * impulse: LCP_ERR_INVALID_ARGUMENT for bounds the wrong way round or a
 * negative cfm; *numeric set for a value that is not a number (or not
 * finite). */
static int check_row_values(const solver_row *r, bool bounded, bool *numeric) {
  if (bounded) {
    if (isnan(r->lo) || isnan(r->hi))
      *numeric = true;
    else if (r->lo > r->hi)
      return LCP_ERR_INVALID_ARGUMENT;
  }
  if (!isfinite(r->cfm) || !isfinite(r->target) || !isfinite(r->lambda))
    *numeric = true;
  else if (r->cfm < 0.0)
    return LCP_ERR_INVALID_ARGUMENT;
  return LCP_OK;
}

static int check_problem(const solver_problem *p) {
  if (!p || p->row_count < 0 || p->dof_count < 0)
    return LCP_ERR_INVALID_ARGUMENT;
  if (p->row_count > 0 && (!p->rows || !p->J || !p->MinvJt))
    return LCP_ERR_INVALID_ARGUMENT;
  if (p->dof_count > 0 && !p->velocity)
    return LCP_ERR_INVALID_ARGUMENT;
  bool numeric = false;
  for (int32_t i = 0; i < p->dof_count; ++i)
    numeric |= !isfinite(p->velocity[i]);
  for (int32_t i = 0; i < p->row_count; ++i) {
    const solver_row *r = &p->rows[i];
    int kind = (int)r->kind;
    if (kind < ROW_BILATERAL || kind > ROW_FRICTION_2)
      return LCP_ERR_INVALID_ARGUMENT;
    for (int a = 0; a < 2; ++a) {
      if (r->dof_count[a] < 0)
        return LCP_ERR_INVALID_ARGUMENT;
      if (r->dof_count[a] > 0 &&
          (r->dof_offset[a] < 0 || r->coef_offset[a] < 0 ||
           (int64_t)r->dof_offset[a] + r->dof_count[a] > (int64_t)p->dof_count))
        return LCP_ERR_INVALID_ARGUMENT;
    }
    if (is_friction(r->kind)) {
      if (r->normal_row < 0 || r->normal_row >= p->row_count || r->normal_row == i ||
          is_friction(p->rows[r->normal_row].kind))
        return LCP_ERR_INVALID_ARGUMENT;
      if (!isfinite(r->mu))
        numeric = true;
      else if (r->mu < 0.0)
        return LCP_ERR_INVALID_ARGUMENT;
    }
    int rc = check_row_values(r, !is_friction(r->kind), &numeric);
    if (rc != LCP_OK)
      return rc;
  }
  if (p->contact_count < 0 ||
      (p->contact_count > 0 && (!p->contacts || !p->body_inv_mass || !p->body_inv_inertia)))
    return LCP_ERR_INVALID_ARGUMENT;
  int32_t next_row = 0;
  for (int32_t k = 0; k < p->contact_count; ++k) {
    const solver_contact *c = &p->contacts[k];
    if (c->row < next_row || c->row > p->row_count - 3)
      return LCP_ERR_INVALID_ARGUMENT;
    next_row = c->row + 3;
    const solver_row *r = &p->rows[c->row];
    if (is_friction(r[0].kind) || r[1].kind != ROW_FRICTION_1 || r[2].kind != ROW_FRICTION_2 ||
        r[1].normal_row != c->row || r[2].normal_row != c->row)
      return LCP_ERR_INVALID_ARGUMENT;
    for (int s = 0; s < 2; ++s) {
      int32_t dof = c->dof[s];
      if (dof != -1 && (dof < 0 || dof % 6 != 0 || dof > p->dof_count - 6))
        return LCP_ERR_INVALID_ARGUMENT;
      for (int m = 0; m < 3; ++m)
        if (r[m].dof_count[s] != (dof >= 0 ? 6 : 0) || (dof >= 0 && r[m].dof_offset[s] != dof))
          return LCP_ERR_INVALID_ARGUMENT;
    }
  }
  return numeric ? LCP_ERR_NUMERIC : LCP_OK;
}

/* Writes the J and M⁻¹Jᵀ coefficients of a contact point's rows (the
 * formulas at solver_contact), for the code that works from coefficients. */
static void contact_expand(const solver_problem *p, const solver_contact *c) {
  for (int m = 0; m < 3; ++m) {
    const solver_row *r = &p->rows[c->row + m];
    vec3 d = v3_from(c->dir[m]);
    for (int s = 0; s < 2; ++s) {
      if (c->dof[s] < 0)
        continue;
      double sign = s == 0 ? -1.0 : 1.0;
      int32_t body = c->dof[s] / 6;
      mat3 inv_inertia;
      memcpy(&inv_inertia, p->body_inv_inertia[body], sizeof inv_inertia);
      double inv_mass = p->body_inv_mass[body];
      vec3 lin = v3_scale(d, sign);
      vec3 ang = v3_scale(v3_cross(v3_from(c->arm[s]), d), sign);
      vec3 response = m3_mulv(&inv_inertia, ang);
      double *j = p->J + r->coef_offset[s], *t = p->MinvJt + r->coef_offset[s];
      j[0] = lin.x, j[1] = lin.y, j[2] = lin.z, j[3] = ang.x, j[4] = ang.y, j[5] = ang.z;
      t[0] = lin.x * inv_mass, t[1] = lin.y * inv_mass, t[2] = lin.z * inv_mass;
      t[3] = response.x, t[4] = response.y, t[5] = response.z;
    }
  }
}

static void contacts_expand_all(const solver_problem *p) {
  for (int32_t k = 0; k < p->contact_count; ++k)
    contact_expand(p, &p->contacts[k]);
}

/* Σ a_k b_k and Σ |a_k b_k| over the overlap of two segments (as overlap_dot). */
static double overlap_dot_abs(const double *a, int32_t a_off, int32_t a_n, const double *b,
                              int32_t b_off, int32_t b_n, double *abs_sum) {
  int32_t start = a_off > b_off ? a_off : b_off;
  int32_t a_end = a_off + a_n, b_end = b_off + b_n;
  int32_t end = a_end < b_end ? a_end : b_end;
  double sum = 0.0, sa = 0.0;
  for (int32_t k = start; k < end; ++k) {
    double x = a[k - a_off] * b[k - b_off];
    sum += x;
    sa += fabs(x);
  }
  *abs_sum += sa;
  return sum;
}

/* diag[i] = A_ii + cfm_i, or 0 for a degenerate row (its impulse stays 0).
 * A_ii = Σ_k J_k (M⁻¹Jᵀ)_k is taken as zero when it is below 1e-13 of
 * Σ_k |J_k (M⁻¹Jᵀ)_k|, i.e. at the rounding level of its own terms (J_i in
 * the null space of M⁻¹: the row cannot change its own w). A non-finite
 * coefficient always makes A_ii non-finite (x·∞ = ±∞, 0·∞ = NaN): −1 then. */
/* A_ii of row r (0 when it is degenerate: below DEGENERATE_RATIO of the
 * sum of its terms' sizes), or −1 when not finite. */
static double row_a(const solver_problem *p, const solver_row *r) {
  double a = 0.0, scale = 0.0;
  for (int s = 0; s < 2; ++s) {
    const double *j = p->J + r->coef_offset[s], *t = p->MinvJt + r->coef_offset[s];
    for (int32_t k = 0; k < r->dof_count[s]; ++k) {
      double x = j[k] * t[k];
      a += x;
      scale += fabs(x);
    }
  }
  const int32_t o0 = r->dof_offset[0], n0 = r->dof_count[0];
  const int32_t o1 = r->dof_offset[1], n1 = r->dof_count[1];
  if (n0 > 0 && n1 > 0 && o0 < o1 + n1 && o1 < o0 + n0) {
    /* two sides on overlapping ranges: their cross terms belong to A_ii */
    const double *j0 = p->J + r->coef_offset[0], *t0 = p->MinvJt + r->coef_offset[0];
    const double *j1 = p->J + r->coef_offset[1], *t1 = p->MinvJt + r->coef_offset[1];
    a += overlap_dot_abs(j0, o0, n0, t1, o1, n1, &scale);
    a += overlap_dot_abs(j1, o1, n1, t0, o0, n0, &scale);
  }
  if (!isfinite(a) || !isfinite(scale))
    return -1.0;
  return a > DEGENERATE_RATIO * scale ? a : 0.0;
}

/* A_ii + cfm_i from row_a's a (−1 stays −1; a degenerate soft row keeps
 * its cfm). */
static double diag_of(double a, double cfm) {
  if (a < 0.0)
    return -1.0;
  double d = a + cfm;
  return d > 0.0 ? d : 0.0;
}

static double row_diag(const solver_problem *p, const solver_row *r) {
  return diag_of(row_a(p, r), r->cfm);
}

/* diag[i] for every row; see row_diag (−1 there: a non-finite A_ii). */
static int compute_diagonal(const solver_problem *p, double *diag) {
  for (int32_t i = 0; i < p->row_count; ++i) {
    diag[i] = row_diag(p, &p->rows[i]);
    if (diag[i] < 0.0)
      return LCP_ERR_NUMERIC;
  }
  return LCP_OK;
}

/* Rows i and i+1 are solved together on the friction disc (cone model). */
static bool is_cone_pair(const solver_problem *p, const double *diag, int32_t i) {
  const solver_row *r = p->rows;
  return i + 1 < p->row_count && r[i].kind == ROW_FRICTION_1 && r[i + 1].kind == ROW_FRICTION_2 &&
         r[i + 1].normal_row == r[i].normal_row && diag[i] > 0.0 && diag[i + 1] > 0.0;
}

/* The largest eigenvalue of the pair's 2×2 block [[d1, a], [a, d2]] of
 * A + diag(cfm). Both tangents of a pair take the common step 1/λmax: with a
 * common scalar step the fixed point of "step, then project on the disc" is
 * λt ∥ −wt on the rim (maximal dissipation, isotropic Coulomb), which
 * per-row steps 1/d1 ≠ 1/d2 would skew; and a step ≤ 1/λmax keeps the
 * pair's projected-gradient update a contraction for ω < 2. */
static double pair_lambda_max2(const solver_problem *p, int32_t i, double d1, double d2) {
  const solver_row *r = p->rows;
  double a = 0.5 * (row_cross(p, &r[i], &r[i + 1]) + row_cross(p, &r[i + 1], &r[i]));
  double h = 0.5 * (d1 - d2);
  return 0.5 * (d1 + d2) + sqrt(h * h + a * a);
}
static double pair_lambda_max(const solver_problem *p, const double *diag, int32_t i) {
  return pair_lambda_max2(p, i, diag[i], diag[i + 1]);
}

static double clampd(double x, double lo, double hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

/* Warm start (DESIGN.md §3 step 5): the rows' lambda, clamped into the bounds
 * (friction bounds from the already clamped normal), zero for degenerate rows. */
static void clamp_warm_start(const solver_problem *p, const double *diag, bool cone, double *lam) {
  const solver_row *r = p->rows;
  for (int32_t i = 0; i < p->row_count; ++i)
    if (!is_friction(r[i].kind))
      lam[i] = diag[i] > 0.0 ? clampd(r[i].lambda, r[i].lo, r[i].hi) : 0.0;
  for (int32_t i = 0; i < p->row_count; ++i) {
    if (!is_friction(r[i].kind))
      continue;
    double n = lam[r[i].normal_row];
    double bound = r[i].mu * (n > 0.0 ? n : 0.0);
    if (cone && is_cone_pair(p, diag, i)) {
      double l1 = r[i].lambda, l2 = r[i + 1].lambda;
      double len = sqrt(l1 * l1 + l2 * l2);
      double f = len > bound ? bound / len : 1.0;
      lam[i] = l1 * f;
      lam[i + 1] = l2 * f;
      ++i;
      continue;
    }
    lam[i] = diag[i] > 0.0 ? clampd(r[i].lambda, -bound, bound) : 0.0;
  }
}

static void set_result(solver_result *result, int32_t iterations, double residual) {
  if (result) {
    result->iterations = iterations;
    result->residual = residual;
  }
}

static int check_finite_output(const solver_problem *p) {
  for (int32_t i = 0; i < p->dof_count; ++i)
    if (!isfinite(p->velocity[i]))
      return LCP_ERR_NUMERIC;
  for (int32_t i = 0; i < p->row_count; ++i)
    if (!isfinite(p->rows[i].lambda))
      return LCP_ERR_NUMERIC;
  return LCP_OK;
}

/* ---- the iterative solvers ---- */

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
  double step;    /* ω / (A_ii + cfm_i); ω / λmax of the block for a cone pair */
  double keep;    /* 1 − step·cfm_i */
  double bias;    /* step·target_i */
  double diag;    /* A_ii + cfm_i, for the residual */
  double lo, hi;  /* fixed bounds; 0 for friction rows */
  double mu;      /* friction: bounds ±μ max(λn, 0); 0 otherwise */
  int32_t n[2];   /* side widths (0 for an absent side) */
  int32_t row;    /* row index */
  int32_t normal; /* row whose λ scales the bounds (itself when mu == 0) */
  int32_t kind;   /* IT_*; a pair is this item and the next */
  int32_t pad_;
} pgs_item;

/* ---- contact units, swept four at a time ----
 *
 * One item per row makes a sweep a chain of dependent row updates, each
 * waiting for the previous row's velocity update, and a box resting on a box
 * is 12 such rows on the same two bodies. Most of a contact problem is
 * instead swept as units, four units at a time:
 *
 * - a unit is consecutive contact points (a non-friction row and its
 *   ROW_FRICTION_1/2 pair each) on the same one or two 6-wide sides with the
 *   same directions: a manifold. Points given by geometry (solver_contact,
 *   the step's contacts: "point units", FORM_POINTS) make units of up to
 *   POINT_MAX points, swept one point after the other from the velocity
 *   kept in registers. Points given by coefficients (FORM_COEFS) make units
 *   of one or two points sharing the linear parts of J and M⁻¹Jᵀ (±d and
 *   ±d/m, compared exactly); there every row's J_i·v is formed from the
 *   velocity at the start of the unit, and the Δλ_j of the rows before it
 *   are added through the couplings A_ij = J_i·M⁻¹J_jᵀ (formed once per
 *   solve, times the row's step): J_i·v after row j is J_i·v_start +
 *   Σ_j A_ij Δλ_j, the same Gauss–Seidel update up to rounding, and
 *   v += Σ_j M⁻¹J_jᵀ Δλ_j once at the end of the unit;
 * - a group is LANES units on pairwise disjoint velocity entries, swept
 *   together, one unit per lane of a 4-wide vector: every operation of the
 *   update acts on the four units at once and no lane ever reads another, so
 *   a unit's arithmetic (and so its result) does not depend on its group or
 *   lane, and the dependency chain of a sweep (clamp, cone projection with
 *   its sqrt and division, coupling into the next row) is shared by four
 *   units. Units are put into groups by list scheduling in row order: a unit
 *   goes into the first group, of its kind and with a free lane, after every
 *   group holding an earlier unit on one of its bodies. Each body thus sees
 *   the units that act on it in row order, and updates on disjoint entries
 *   commute exactly, so the sweep is the sequential Gauss–Seidel sweep over
 *   the units in row order, bit for bit;
 * - a group's data is one record, field by field, each field holding its
 *   value for the four lanes (LANES doubles), so that one load gives an
 *   operand. A group's units all have the same number of points. Empty
 *   lanes have all fields zero and velocity pointing at zeros: their
 *   updates are exactly 0 + 0.
 *
 * Generic rows (robots, other widths, soft rows that are not contacts...)
 * are items; a stretch of items ends a run of groups, so the sweep follows
 * row order across the two. Rows, steps, clamps and the cone projection are
 * those of the items; only rounding differs. Compilers without vector
 * extensions sweep every row as an item. */
#if defined(__GNUC__) || defined(__clang__)
#define LCP_UNITS 1
#else
#define LCP_UNITS 0
#endif

enum { LANES = 4, UNIT_MAX_POINTS = 2 };
/* A point unit (FORM_POINTS) is a manifold's points on its two bodies, up
 * to four: its sweep gathers the bodies' velocities once for all of them. */
enum { POINT_MAX = 4 };

/* Record fields. Directions d are the rows of a point: 0 normal (or
 * bilateral), 1 and 2 its friction rows a and b; s is the side, c the
 * component. The unit's header holds the shared linear parts: */
enum {
  U_JL = 0,  /* J lin, [s][d][c] */
  U_TL = 18, /* M⁻¹Jᵀ lin, [s][d][c] */
  U_SIZE = 36
};
/* then each point: */
enum {
  P_JA = 0,    /* J ang, [s][d][c] */
  P_TA = 18,   /* M⁻¹Jᵀ ang, [s][d][c] */
  P_ROWS = 36, /* the point's row constants (R_*) */
  P_SIZE = 36 + 19
};
/* The row constants of a point, in both forms of record: */
enum {
  R_STEP = 0,  /* [d]: ω/(A_ii + cfm_i); ω/λmax of the 2×2 block for a cone pair */
  R_KEEP = 3,  /* [d]: 1 − step·cfm */
  R_BIAS = 6,  /* [d]: step·target */
  R_DIAG = 9,  /* [d]: A_ii + cfm_i, for the residual */
  R_LO = 12,   /* the normal's fixed bounds */
  R_HI = 13,   /*   */
  R_MU = 14,   /* [2]: friction rows' μ */
  R_C_NA = 16, /* step_a A_an: the normal's Δλ into friction row a */
  R_C_NB = 17, /* step_b A_bn */
  R_C_AB = 18, /* step_b A_ba: a into b (box model; 0 for the cone) */
  R_SIZE = 19
};
/* then, for a 2-point unit, the couplings of point 0's rows into point 1's,
 * [from d][to d], each times the step of the receiving row. */
enum { C_SIZE = 9 };

/* Units of solver_contact points (FORM_POINTS) store, instead of
 * coefficients, what they are made of: J_k·v is d_k · (relative velocity
 * of the bodies at the point) and M⁻¹J_kᵀΔλ comes from the impulse
 * P = Σ_k d_k Δλ_k, as ±P/m and ±I⁻¹(r × P) (the formulas at
 * solver_contact). They are the contacts the step writes (point_unit_placeable):
 * the normal bounded by [0, ∞), one cfm for the three rows, one μ for the
 * pair, friction rows without target. A third of the fields of a
 * coefficient record, which is what a sweep of a large problem waits for
 * (the records are read from memory once per sweep). The header: */
enum {
  H_DIR = 0, /* [d][c] the unit's directions */
  H_IM = 9,  /* [s] inverse masses (0 for an absent side) */
  H_II = 11, /* [s][6] world inverse inertias, symmetric: xx xy xz yy yz zz (0: absent side) */
  H_SIZE = 23
};
/* then each point: its arms [s][c], then its row constants: */
enum {
  PR_STEP = 0, /* [d]: ω/(A_nn + cfm); ω/λmax of the friction pair's 2×2 block (cone) or
                  ω/(A_kk + cfm) (box) */
  PR_CFM = 3,  /* the rows' cfm */
  PR_BIAS = 4, /* step_n·target_n */
  PR_DIAG = 5, /* A_nn + cfm: the residual's scale for the point's three rows */
  PR_MU = 6,   /* μ */
  PR_C_NA = 7, /* step_a A_an: the normal's Δλ into friction row a */
  PR_C_NB = 8, /* step_b A_bn */
  PR_C_AB = 9, /* step_b A_ba: a into b (box model; 0 for the cone) */
  PR_SIZE = 10
};
enum { Q_ARM = 0, Q_ROWS = 6, Q_SIZE = 6 + PR_SIZE };
/* (no couplings between the two points of a unit: the sweep takes them in
 * turn) */
enum { FORM_COEFS = 0, FORM_POINTS = 1 };
/* row-major 3×3 index → symmetric storage index */
static const int SYM[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5};

static int32_t unit_fields(int32_t form, int32_t points) {
  /* point units need no couplings: their sweep takes the points in turn */
  return form == FORM_POINTS ? H_SIZE + Q_SIZE * points
                             : U_SIZE + P_SIZE * points + (points == 2 ? C_SIZE : 0);
}

typedef struct lane_group {
  double *rec;          /* unit_fields(points) fields of LANES doubles */
  double *lam;          /* [3·points][LANES]: the units' impulses */
  double *v[2][LANES];  /* velocity of each side of each lane */
  int32_t row[LANES];   /* first row of each lane's unit; −1: empty lane */
  int32_t count[LANES]; /* points of each lane's unit */
  /* FORM_POINTS: each lane's first contact (index into problem->contacts),
   * for point_group_fill */
  int32_t contact[LANES];
  int32_t points; /* 1 or 2 (coefficients), 1 to POINT_MAX (points): the group's kind, */
  int32_t form;   /*   and FORM_* */
  int32_t lanes_used;
} lane_group;

#if LCP_UNITS
typedef double vd4 __attribute__((vector_size(32)));
typedef long long vi4 __attribute__((vector_size(32)));
#define ALWAYS_INLINE inline __attribute__((always_inline))
/* GCC warns that 32-byte vector arguments would change the ABI without AVX;
 * the functions that take them are all inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

static ALWAYS_INLINE vd4 ld4(const double *p) {
  vd4 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static ALWAYS_INLINE void st4(double *p, vd4 v) { memcpy(p, &v, sizeof v); }
static ALWAYS_INLINE vd4 splat4(double x) { return (vd4){x, x, x, x}; }
static ALWAYS_INLINE vd4 abs4(vd4 x) {
  return (vd4)((vi4)x & (vi4){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX});
}

static ALWAYS_INLINE vd2 half_lo(vd4 a) { return __builtin_shufflevector(a, a, 0, 1); }
static ALWAYS_INLINE vd2 half_hi(vd4 a) { return __builtin_shufflevector(a, a, 2, 3); }
static ALWAYS_INLINE vd4 join2(vd2 lo, vd2 hi) {
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
}
/* a > b ? a : b and a < b ? a : b lane-wise as a compare and a select:
 * the values of maxpd / minpd (b when either is a NaN, b for ±0 against ∓0;
 * a clamp as max4(lo, x) keeps a NaN x, as clampd does), and every ISA
 * gets whole-vector compares instead of 2-wide halves. sqrt goes by halves
 * (sqrtpd with SSE2), or lane by lane without it. */
static ALWAYS_INLINE vd4 select4(vi4 m, vd4 a, vd4 b) {
  return (vd4)((m & (vi4)a) | (~m & (vi4)b));
}
static ALWAYS_INLINE vd4 max4(vd4 a, vd4 b) { return select4(a > b, a, b); }
static ALWAYS_INLINE vd4 min4(vd4 a, vd4 b) { return select4(a < b, a, b); }
#if defined(__SSE2__)
#include <emmintrin.h>
static ALWAYS_INLINE vd4 sqrt4(vd4 a) {
  return join2(_mm_sqrt_pd(half_lo(a)), _mm_sqrt_pd(half_hi(a)));
}
#else
static ALWAYS_INLINE vd4 sqrt4(vd4 a) {
  vd4 r;
  for (int k = 0; k < LANES; ++k)
    r[k] = sqrt(a[k]);
  return r;
}
#endif

/* clamp(x, lo, hi), a NaN x staying NaN */
static ALWAYS_INLINE vd4 clamp4(vd4 x, vd4 lo, vd4 hi) { return min4(hi, max4(lo, x)); }

/* gather: V[s][c] holds component c of side s's velocity for each lane of
 * g (a 4×2 transpose per two components) */
static ALWAYS_INLINE void group_gather(const lane_group *g, vd4 V[2][6]) {
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 6; c += 2) {
      vd2 a = ld2(g->v[s][0] + c), b = ld2(g->v[s][1] + c);
      vd2 e = ld2(g->v[s][2] + c), f = ld2(g->v[s][3] + c);
      V[s][c] = join2(__builtin_shufflevector(a, b, 0, 2), __builtin_shufflevector(e, f, 0, 2));
      V[s][c + 1] = join2(__builtin_shufflevector(a, b, 1, 3), __builtin_shufflevector(e, f, 1, 3));
    }
}

/* scatter: the transpose back */
static ALWAYS_INLINE void group_scatter(const lane_group *g, vd4 V[2][6]) {
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 6; c += 2) {
      vd2 xl = half_lo(V[s][c]), yl = half_lo(V[s][c + 1]);
      vd2 xh = half_hi(V[s][c]), yh = half_hi(V[s][c + 1]);
      st2(g->v[s][0] + c, __builtin_shufflevector(xl, yl, 0, 2));
      st2(g->v[s][1] + c, __builtin_shufflevector(xl, yl, 1, 3));
      st2(g->v[s][2] + c, __builtin_shufflevector(xh, yh, 0, 2));
      st2(g->v[s][3] + c, __builtin_shufflevector(xh, yh, 1, 3));
    }
}

/* The rows of a unit's K points in order (seed 000's update, see
 * pgs_item), from each row's unclamped update y = keep·λ + bias − step·J·v
 * at the unit's start: clamps, then the couplings into the later rows.
 * Stores λ, leaves Δλ in dl and folds the residual, the largest
 * |Δλ_i|·(A_ii + cfm_i), into res and the sum (for finiteness) into acc.
 * R[p]: point p's row constants (R_*); C: the 2-point couplings. */
static ALWAYS_INLINE void unit_rows(const double *const R[UNIT_MAX_POINTS], const double *C,
                                    double *lam, vd4 y[UNIT_MAX_POINTS][3],
                                    const vd4 l[UNIT_MAX_POINTS][3], vd4 dl[UNIT_MAX_POINTS][3],
                                    vd4 *res_io, vd4 *acc_io, const bool cone, const int K) {
#define RF(p, f) ld4(R[p] + LANES * (f))
  const vd4 zero = splat4(0.0), one = splat4(1.0);
#pragma GCC unroll 2
  for (int p = 0; p < K; ++p) {
    vd4 x = clamp4(y[p][0], RF(p, R_LO), RF(p, R_HI));
    dl[p][0] = x - l[p][0];
    vd4 ya = y[p][1] - RF(p, R_C_NA) * dl[p][0];
    vd4 yb = y[p][2] - RF(p, R_C_NB) * dl[p][0];
    vd4 npos = max4(x, zero); /* a negative (or NaN) λn bounds friction by 0 */
    vd4 xa, xb;
    if (cone) {
      /* both tangents from the same v with the common step, then onto the
       * disc of radius μλn: scaled by min(1, r/‖y‖), which is 1 inside the
       * disc and for ‖y‖ = 0 (pair_update) */
      vd4 radius = RF(p, R_MU) * npos;
      vd4 f = min4(radius / sqrt4(ya * ya + yb * yb), one);
      xa = ya * f;
      xb = yb * f;
    } else {
      /* box: the two friction rows one after the other, each to ±μλn */
      vd4 bound = RF(p, R_MU) * npos;
      xa = clamp4(ya, -bound, bound);
      yb -= RF(p, R_C_AB) * (xa - l[p][1]);
      bound = RF(p, R_MU + 1) * npos;
      xb = clamp4(yb, -bound, bound);
    }
    dl[p][1] = xa - l[p][1];
    dl[p][2] = xb - l[p][2];
    st4(lam + LANES * (3 * p), x);
    st4(lam + LANES * (3 * p + 1), xa);
    st4(lam + LANES * (3 * p + 2), xb);
    if (K == 2 && p == 0) {
#pragma GCC unroll 3
      for (int d = 0; d < 3; ++d)
        y[1][d] -= (ld4(C + LANES * d) * dl[0][0] + ld4(C + LANES * (3 + d)) * dl[0][1]) +
                   ld4(C + LANES * (6 + d)) * dl[0][2];
    }
  }
  vd4 res = *res_io, acc = *acc_io;
#pragma GCC unroll 2
  for (int p = 0; p < K; ++p)
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d) {
      vd4 r = abs4(dl[p][d]) * RF(p, R_DIAG + d);
      res = max4(r, res);
      acc += r;
    }
  *res_io = res;
  *acc_io = acc;
#undef RF
}

/* One group of coefficient units: K points per lane, the cone or the box
 * friction model. The field f of the unit's record is at rec + LANES·f. */
static ALWAYS_INLINE void group_sweep(const lane_group *g, vd4 *res_io, vd4 *acc_io,
                                      const bool cone, const int K) {
  const double *rec = g->rec;
#define F(f) ld4(rec + LANES * (f))
#define PF(p, f) F(U_SIZE + P_SIZE * (p) + (f))
  double *lam = g->lam;
  vd4 V[2][6];
  group_gather(g, V);

  /* y = keep·λ + bias − step·(J·v): each row's unclamped update, J·v from
   * the shared linear part and the point's angular part */
  vd4 wl[3], y[UNIT_MAX_POINTS][3], l[UNIT_MAX_POINTS][3], dl[UNIT_MAX_POINTS][3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d) {
    vd4 w =
        F(U_JL + 3 * d) * V[0][0] + F(U_JL + 3 * d + 1) * V[0][1] + F(U_JL + 3 * d + 2) * V[0][2];
    wl[d] = w + (F(U_JL + 9 + 3 * d) * V[1][0] + F(U_JL + 9 + 3 * d + 1) * V[1][1] +
                 F(U_JL + 9 + 3 * d + 2) * V[1][2]);
  }
#pragma GCC unroll 2
  for (int p = 0; p < K; ++p)
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d) {
      vd4 a = PF(p, P_JA + 3 * d) * V[0][3] + PF(p, P_JA + 3 * d + 1) * V[0][4] +
              PF(p, P_JA + 3 * d + 2) * V[0][5];
      vd4 b = PF(p, P_JA + 9 + 3 * d) * V[1][3] + PF(p, P_JA + 9 + 3 * d + 1) * V[1][4] +
              PF(p, P_JA + 9 + 3 * d + 2) * V[1][5];
      l[p][d] = ld4(lam + LANES * (3 * p + d));
      y[p][d] = (PF(p, P_ROWS + R_KEEP + d) * l[p][d] + PF(p, P_ROWS + R_BIAS + d)) -
                PF(p, P_ROWS + R_STEP + d) * (wl[d] + (a + b));
    }

  const double *const R[UNIT_MAX_POINTS] = {rec + LANES * (U_SIZE + P_ROWS),
                                            rec + LANES * (U_SIZE + P_SIZE + P_ROWS)};
  unit_rows(R, rec + LANES * (U_SIZE + 2 * P_SIZE), lam, y, l, dl, res_io, acc_io, cone, K);

  /* v += Σ M⁻¹J_iᵀ Δλ_i: the shared linear parts from the sums of each
   * direction's Δλ, the angular parts per point */
  const vd4 zero = splat4(0.0);
  vd4 sum[3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
    sum[d] = K == 2 ? dl[0][d] + dl[1][d] : dl[0][d];
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c) {
      V[s][c] += (F(U_TL + 9 * s + c) * sum[0] + F(U_TL + 9 * s + 3 + c) * sum[1]) +
                 F(U_TL + 9 * s + 6 + c) * sum[2];
      vd4 w = zero;
#pragma GCC unroll 2
      for (int p = 0; p < K; ++p)
        w += (PF(p, P_TA + 9 * s + c) * dl[p][0] + PF(p, P_TA + 9 * s + 3 + c) * dl[p][1]) +
             PF(p, P_TA + 9 * s + 6 + c) * dl[p][2];
      V[s][3 + c] += w;
    }
#undef F
#undef PF
  group_scatter(g, V);
}

/* a × b lane-wise */
static ALWAYS_INLINE void cross4(const vd4 a[3], const vd4 b[3], vd4 out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* One group of point units (FORM_POINTS). With u the velocity of B
 * relative to A at the point, (v_B + ω_B × r_B) − (v_A + ω_A × r_A), row
 * k's J_k·v is d_k·u; the impulse P = Σ_k d_k Δλ_k of each point changes
 * v_A by −P/m_A, ω_A by −I_A⁻¹(r_A × P), and B's by the same with +
 * (solver_contact's J and M⁻¹Jᵀ, regrouped). The points of a unit are
 * taken one after the other, each from the velocity the one before left
 * in registers: Gauss–Seidel exactly, without couplings between the
 * points. Each row's unclamped update is seed 000's
 * y = λ − step·(J·v + cfm·λ) + step·target; the normal is clamped to
 * [0, ∞), its Δλ coupled into the friction rows (as unit_rows), which are
 * projected onto the disc of radius μλn (cone) or each into ±μλn (box).
 * The residual takes |Δλ|·(A_nn + cfm) over the point's rows. */
static ALWAYS_INLINE void point_group_sweep(const lane_group *g, vd4 *res_io, vd4 *acc_io,
                                            const bool cone, const int K) {
  const double *rec = g->rec;
#define F(f) ld4(rec + LANES * (f))
#define QF(p, f) F(H_SIZE + Q_SIZE * (p) + (f))
  const vd4 zero = splat4(0.0), one = splat4(1.0);
  vd4 V[2][6];
  group_gather(g, V);

  vd4 D[3][3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      D[d][c] = F(H_DIR + 3 * d + c);
  vd4 res = *res_io, acc = *acc_io;
#pragma GCC unroll 4
  for (int p = 0; p < K; ++p) {
    double *lam = g->lam + LANES * 3 * p;
    vd4 arm[2][3], wr[2][3];
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        arm[s][c] = QF(p, Q_ARM + 3 * s + c);
      cross4(&V[s][3], arm[s], wr[s]);
    }
    vd4 u[3];
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      u[c] = (V[1][c] + wr[1][c]) - (V[0][c] + wr[0][c]);
    const vd4 cfm = QF(p, Q_ROWS + PR_CFM);
    vd4 l[3], y[3];
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d) {
      vd4 jv = (D[d][0] * u[0] + D[d][1] * u[1]) + D[d][2] * u[2];
      l[d] = ld4(lam + LANES * d);
      y[d] = l[d] - QF(p, Q_ROWS + PR_STEP + d) * (jv + cfm * l[d]);
    }
    y[0] += QF(p, Q_ROWS + PR_BIAS);
    /* max4(0, y): a NaN y stays NaN, as clamp4 */
    vd4 x = max4(zero, y[0]);
    vd4 dn = x - l[0];
    vd4 ya = y[1] - QF(p, Q_ROWS + PR_C_NA) * dn;
    vd4 yb = y[2] - QF(p, Q_ROWS + PR_C_NB) * dn;
    vd4 radius = QF(p, Q_ROWS + PR_MU) * max4(x, zero);
    vd4 xa, xb;
    if (cone) {
      /* sticking points (inside the disc) need no projection: when no lane
       * is outside, the sqrt and the division (long, and on the chain of
       * the next point) are skipped */
      vd4 q = ya * ya + yb * yb;
      vi4 out = q > radius * radius;
      if (out[0] | out[1] | out[2] | out[3]) {
        vd4 f = min4(radius / sqrt4(q), one);
        xa = ya * f;
        xb = yb * f;
      } else {
        xa = ya;
        xb = yb;
      }
    } else {
      xa = clamp4(ya, -radius, radius);
      yb -= QF(p, Q_ROWS + PR_C_AB) * (xa - l[1]);
      xb = clamp4(yb, -radius, radius);
    }
    vd4 da = xa - l[1], db = xb - l[2];
    st4(lam, x);
    st4(lam + LANES, xa);
    st4(lam + 2 * LANES, xb);
    vd4 an = abs4(dn), aa = abs4(da), ab = abs4(db);
    res = max4(max4(max4(an, aa), ab) * QF(p, Q_ROWS + PR_DIAG), res);
    acc += (an + aa) + ab;

    /* the point's impulse P, then r × P of each side for the angular parts */
    vd4 P[3], torque[3];
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      P[c] = (D[0][c] * dn + D[1][c] * da) + D[2][c] * db;
    vd4 im0 = F(H_IM), im1 = F(H_IM + 1);
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c) {
      V[0][c] -= im0 * P[c];
      V[1][c] += im1 * P[c];
    }
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      cross4(arm[s], P, torque);
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c) {
        const int I = H_II + 6 * s;
        vd4 w = (F(I + SYM[3 * c]) * torque[0] + F(I + SYM[3 * c + 1]) * torque[1]) +
                F(I + SYM[3 * c + 2]) * torque[2];
        V[s][3 + c] = s == 0 ? V[s][3 + c] - w : V[s][3 + c] + w;
      }
    }
  }
  *res_io = res;
  *acc_io = acc;
#undef F
#undef QF
  group_scatter(g, V);
}

/* A large problem's records do not stay in the cache from one sweep to
 * the next, and the sweep reads each group's record at once, not in order:
 * the record of the group PREFETCH_GROUPS ahead is asked for while this one
 * is swept (its impulses and the lanes' velocities too). Only for problems
 * whose records outgrow PREFETCH_BYTES: below, the records stay cached and
 * the requests are pure cost (pyramid L = 20, 0.5 MB of records: 7 %
 * slower with them; pile N = 10000, 7 MB: the solve 22 % faster). */
enum { PREFETCH_BYTES = 2 << 20 };
enum { PREFETCH_GROUPS = 2 };
static ALWAYS_INLINE void group_prefetch(const lane_group *g) {
  const char *rec = (const char *)g->rec;
  size_t bytes = sizeof(double) * LANES * (size_t)unit_fields(g->form, g->points);
  for (size_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(rec + b, 0, 3);
  __builtin_prefetch(g->lam, 1, 3);
  for (int s = 0; s < 2; ++s)
    for (int l = 0; l < LANES; ++l)
      __builtin_prefetch(g->v[s][l], 1, 3);
}

/* A run of groups; each group's kind picks its unrolled sweep. */
static ALWAYS_INLINE void groups_sweep(const lane_group *g, int32_t count, double *res_io,
                                       double *acc_io, const bool cone, const bool prefetch) {
  vd4 res = splat4(0.0), acc = splat4(0.0);
  for (int32_t k = 0; k < count; ++k) {
    if (prefetch && k + PREFETCH_GROUPS < count)
      group_prefetch(&g[k + PREFETCH_GROUPS]);
    if (g[k].form == FORM_POINTS) {
      switch (g[k].points) {
      case 4:
        point_group_sweep(&g[k], &res, &acc, cone, 4);
        break;
      case 3:
        point_group_sweep(&g[k], &res, &acc, cone, 3);
        break;
      case 2:
        point_group_sweep(&g[k], &res, &acc, cone, 2);
        break;
      default:
        point_group_sweep(&g[k], &res, &acc, cone, 1);
        break;
      }
    } else if (g[k].points == 2) {
      group_sweep(&g[k], &res, &acc, cone, 2);
    } else {
      group_sweep(&g[k], &res, &acc, cone, 1);
    }
  }
  double r = *res_io;
  for (int k = 0; k < LANES; ++k)
    r = res[k] > r ? res[k] : r;
  *res_io = r;
  *acc_io += (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

typedef void (*groups_fn)(const lane_group *g, int32_t count, double *res, double *acc);

/* The sweeps, by friction model and prefetching (groups_sweep), compiled
 * for the baseline and, chosen at run time where the processor has it, for
 * AVX2: 4-wide vectors in one register and three-operand instructions halve
 * the instructions of the baseline (SSE2: two halves, and register copies).
 * The arithmetic is the same lane by lane, IEEE and without fused
 * multiply-adds (no "fma" target, and ISO C's -ffp-contract=off), so the
 * results are bitwise those of the baseline. */
#define LCP_SWEEP_VARIANT(name, attr, cone, prefetch)                                              \
  attr static void name(const lane_group *g, int32_t count, double *res, double *acc) {            \
    groups_sweep(g, count, res, acc, cone, prefetch);                                              \
  }
LCP_SWEEP_VARIANT(groups_sweep_cone, , true, false)
LCP_SWEEP_VARIANT(groups_sweep_box, , false, false)
LCP_SWEEP_VARIANT(groups_sweep_cone_pf, , true, true)
LCP_SWEEP_VARIANT(groups_sweep_box_pf, , false, true)
#if defined(__x86_64__) || defined(__i386__)
#define LCP_AVX2 1
LCP_SWEEP_VARIANT(groups_sweep_cone_avx2, __attribute__((target("avx2"))), true, false)
LCP_SWEEP_VARIANT(groups_sweep_box_avx2, __attribute__((target("avx2"))), false, false)
LCP_SWEEP_VARIANT(groups_sweep_cone_pf_avx2, __attribute__((target("avx2"))), true, true)
LCP_SWEEP_VARIANT(groups_sweep_box_pf_avx2, __attribute__((target("avx2"))), false, true)
#else
#define LCP_AVX2 0
#endif

static groups_fn pick_groups_sweep(bool cone, bool baseline_only, bool prefetch) {
#if LCP_AVX2
  if (!baseline_only && __builtin_cpu_supports("avx2")) {
    if (prefetch)
      return cone ? groups_sweep_cone_pf_avx2 : groups_sweep_box_pf_avx2;
    return cone ? groups_sweep_cone_avx2 : groups_sweep_box_avx2;
  }
#else
  (void)baseline_only;
#endif
  if (prefetch)
    return cone ? groups_sweep_cone_pf : groups_sweep_box_pf;
  return cone ? groups_sweep_cone : groups_sweep_box;
}
#endif

/* The present sides of a row, in side order, when each is 6 wide (a body). */
typedef struct side_layout {
  int32_t sides; /* 1 or 2 */
  int32_t dof[2];
  int32_t coef[2]; /* the row's coefficient offsets */
} side_layout;

/* false when a side has another width, none is present, or two present
 * sides overlap (their velocities could not be updated apart) */
static bool row_layout(const solver_row *r, side_layout *out) {
  out->sides = 0;
  out->dof[1] = -1;
  for (int s = 0; s < 2; ++s) {
    if (r->dof_count[s] == 0)
      continue;
    if (r->dof_count[s] != 6)
      return false;
    out->dof[out->sides] = r->dof_offset[s];
    out->coef[out->sides] = r->coef_offset[s];
    out->sides++;
  }
  if (out->sides == 2)
    return out->dof[0] + 6 <= out->dof[1] || out->dof[1] + 6 <= out->dof[0];
  return out->sides == 1;
}

static bool same_sides(const side_layout *a, const side_layout *b) {
  return a->sides == b->sides && a->dof[0] == b->dof[0] && a->dof[1] == b->dof[1];
}

/* row_diag for a row whose present sides are 6 wide and apart (l): the
 * same A_ii + cfm_i, 0 or −1, summed in vector lanes. */
static inline double row_diag6(const solver_problem *p, const solver_row *r, const side_layout *l) {
  double a, scale;
#if defined(__GNUC__) || defined(__clang__)
  vd2 sum = {0.0, 0.0}, mag = {0.0, 0.0};
  const vd2 absmask = (vd2)((long long __attribute__((vector_size(16)))){INT64_MAX, INT64_MAX});
  for (int32_t s = 0; s < l->sides; ++s) {
    const double *j = p->J + l->coef[s], *t = p->MinvJt + l->coef[s];
    for (int k = 0; k < 6; k += 2) {
      vd2 x = ld2(j + k) * ld2(t + k);
      sum += x;
      mag += (vd2)((long long __attribute__((vector_size(16))))x &
                   (long long __attribute__((vector_size(16))))absmask);
    }
  }
  a = sum[0] + sum[1];
  scale = mag[0] + mag[1];
#else
  a = 0.0, scale = 0.0;
  for (int32_t s = 0; s < l->sides; ++s)
    for (int k = 0; k < 6; ++k) {
      double x = p->J[l->coef[s] + k] * p->MinvJt[l->coef[s] + k];
      a += x;
      scale += fabs(x);
    }
#endif
  if (!isfinite(a) || !isfinite(scale))
    return -1.0;
  if (!(a > DEGENERATE_RATIO * scale))
    a = 0.0;
  double d = a + r->cfm;
  return d > 0.0 ? d : 0.0;
}

/* A contact point a unit can take at row i: a non-friction row followed by
 * its two friction rows (ROW_FRICTION_1, ROW_FRICTION_2, both with
 * normal_row i, and no other row with normal_row i: the unit keeps its
 * impulses to itself during the sweep), none degenerate, all on the same
 * 6-wide sides. l[m] gets row i + m's layout. */
static bool unit_point_at(const solver_problem *p, const uint8_t *refs, int32_t i, side_layout l[3],
                          double diag[3]) {
  if (i + 2 >= p->row_count)
    return false;
  const solver_row *r = &p->rows[i];
  if (is_friction(r[0].kind) || r[1].kind != ROW_FRICTION_1 || r[2].kind != ROW_FRICTION_2 ||
      r[1].normal_row != i || r[2].normal_row != i || refs[i] != 2)
    return false;
  for (int m = 0; m < 3; ++m)
    if (!row_layout(&r[m], &l[m]))
      return false;
  if (!same_sides(&l[0], &l[1]) || !same_sides(&l[0], &l[2]))
    return false;
  for (int m = 0; m < 3; ++m)
    diag[m] = row_diag6(p, &r[m], &l[m]);
  /* a non-finite A_ii (−1) is left to the item path, which reports it */
  return diag[0] > 0.0 && diag[1] > 0.0 && diag[2] > 0.0;
}

/* Does the point with layouts l share the linear parts (first 3
 * coefficients of each side, in J and M⁻¹Jᵀ) of the point with layouts l0? */
static bool same_linear(const solver_problem *p, const side_layout l0[3], const side_layout l[3]) {
  for (int m = 0; m < 3; ++m)
    for (int32_t s = 0; s < l0[m].sides; ++s)
      for (int k = 0; k < 3; ++k)
        if (p->J[l[m].coef[s] + k] != p->J[l0[m].coef[s] + k] ||
            p->MinvJt[l[m].coef[s] + k] != p->MinvJt[l0[m].coef[s] + k])
          return false;
  return true;
}

/* J_i · M⁻¹J_jᵀ of two rows on the same sides */
static inline double layout_cross(const solver_problem *p, const side_layout *li,
                                  const side_layout *lj) {
  double s = 0.0;
  for (int32_t k = 0; k < li->sides; ++k)
    s += dot6(p->J + li->coef[k], p->MinvJt + lj->coef[k]);
  return s;
}

/* Writes lane k of group g's record for the unit of `points` points at row
 * i0 (layouts l, 3 per point), with its rows' A_ii + cfm_i in diag and their
 * warm start in lam (both indexed from i0). */
static void unit_fill(const solver_problem *p, const double *diag, const double *lam, double omega,
                      bool cone, int32_t i0, int32_t points, const side_layout (*l)[3],
                      lane_group *g, double *rec, int32_t k, double *dummy_v) {
  const int32_t S = l[0][0].sides;
  const double *J = p->J, *T = p->MinvJt;
#define SET(f, x) (rec[LANES * (f) + k] = (x))
  /* the record is not zeroed beforehand: a 1-sided unit writes zeros for
   * its absent side (which reads the dummy velocity) */
  for (int32_t s = 0; s < 2; ++s)
    for (int d = 0; d < 3; ++d)
      for (int c = 0; c < 3; ++c) {
        SET(U_JL + 9 * s + 3 * d + c, s < S ? J[l[0][d].coef[s] + c] : 0.0);
        SET(U_TL + 9 * s + 3 * d + c, s < S ? T[l[0][d].coef[s] + c] : 0.0);
      }
  double step[UNIT_MAX_POINTS][3];
  for (int32_t q = 0; q < points; ++q) {
    const int32_t P = U_SIZE + P_SIZE * q;
    const solver_row *row = &p->rows[i0 + 3 * q];
    const side_layout *lq = l[q];
    const double *dq = diag + 3 * q;
    for (int32_t s = 0; s < 2; ++s)
      for (int d = 0; d < 3; ++d)
        for (int c = 0; c < 3; ++c) {
          SET(P + P_JA + 9 * s + 3 * d + c, s < S ? J[lq[d].coef[s] + 3 + c] : 0.0);
          SET(P + P_TA + 9 * s + 3 * d + c, s < S ? T[lq[d].coef[s] + 3 + c] : 0.0);
        }
    step[q][0] = omega / dq[0];
    if (cone) {
      /* pair_lambda_max */
      double x = 0.5 * (layout_cross(p, &lq[1], &lq[2]) + layout_cross(p, &lq[2], &lq[1]));
      double d1 = dq[1], d2 = dq[2], h = 0.5 * (d1 - d2);
      step[q][1] = step[q][2] = omega / (0.5 * (d1 + d2) + sqrt(h * h + x * x));
    } else {
      step[q][1] = omega / dq[1];
      step[q][2] = omega / dq[2];
    }
    for (int d = 0; d < 3; ++d) {
      SET(P + P_ROWS + R_STEP + d, step[q][d]);
      SET(P + P_ROWS + R_KEEP + d, 1.0 - step[q][d] * row[d].cfm);
      SET(P + P_ROWS + R_BIAS + d, step[q][d] * row[d].target);
      SET(P + P_ROWS + R_DIAG + d, dq[d]);
      g->lam[LANES * (3 * q + d) + k] = lam[3 * q + d];
    }
    SET(P + P_ROWS + R_LO, row[0].lo);
    SET(P + P_ROWS + R_HI, row[0].hi);
    SET(P + P_ROWS + R_MU, row[1].mu);
    SET(P + P_ROWS + R_MU + 1, row[2].mu);
    SET(P + P_ROWS + R_C_NA, step[q][1] * layout_cross(p, &lq[1], &lq[0]));
    SET(P + P_ROWS + R_C_NB, step[q][2] * layout_cross(p, &lq[2], &lq[0]));
    SET(P + P_ROWS + R_C_AB, cone ? 0.0 : step[q][2] * layout_cross(p, &lq[2], &lq[1]));
  }
  if (points == 2)
    for (int from = 0; from < 3; ++from)
      for (int to = 0; to < 3; ++to)
        SET(U_SIZE + 2 * P_SIZE + 3 * from + to,
            step[1][to] * layout_cross(p, &l[1][to], &l[0][from]));
#undef SET
  for (int s = 0; s < 2; ++s)
    g->v[s][k] = s < S ? p->velocity + l[0][0].dof[s] : dummy_v;
  g->row[k] = i0;
  g->count[k] = points;
}

/* ---- units of solver_contact points ---- */

/* Can contact c be (a point of) a unit? Its normal's λ must be referred to
 * by its two friction rows only, its sides must be apart, and its rows
 * those the point record holds (the step's contacts): the normal bounded
 * by [0, ∞), one cfm for the three rows, one μ, no friction target.
 * (Whether its A_kk are usable is found when its group is filled.) */
static bool point_unit_placeable(const solver_problem *p, const uint8_t *refs,
                                 const solver_contact *c) {
  const solver_row *r = &p->rows[c->row];
  return refs[c->row] == 2 && !(c->dof[0] < 0 && c->dof[1] < 0) && c->dof[0] != c->dof[1] &&
         r[0].lo == 0.0 && r[0].hi == INFINITY && r[1].cfm == r[0].cfm && r[2].cfm == r[0].cfm &&
         r[1].mu == r[2].mu && r[1].target == 0.0 && r[2].target == 0.0;
}

/* Units are coloured greedily in row order (DESIGN.md §3 step 5 leaves the
 * order of the rows to the solver): each takes the smallest colour that no
 * earlier unit on one of its velocity entries took, so the units of one
 * colour are pairwise disjoint. A sweep takes the colours in turn, each in
 * row order: the dependency chain of a sweep is then a few colours long
 * instead of the longest chain of units sharing bodies in row order (326 of
 * the 1180 units of the L = 20 pyramid), and the groups of a colour overlap
 * in the processor. A unit finding all COLORS taken gets COLORS: those go
 * one unit per group, in row order, after the rest. */
enum { COLORS = 64 };
enum { RUN_UNITS_MAX = 1024 };

static int32_t unit_color(uint64_t *used, const side_layout *l) {
  uint64_t taken = 0;
  for (int32_t k = 0; k < l->sides; ++k)
    for (int32_t c = 0; c < 6; ++c)
      taken |= used[l->dof[k] + c];
  int32_t color = 0;
  while (color < COLORS && (taken >> color & 1u))
    ++color;
  if (color < COLORS)
    for (int32_t k = 0; k < l->sides; ++k)
      for (int32_t c = 0; c < 6; ++c)
        used[l->dof[k] + c] |= (uint64_t)1 << color;
  return color;
}

#if LCP_UNITS
/* ---- point units filled four lanes at a time ----
 *
 * The setup of a group of point units, every lane at once: the loop over
 * the rows only places each unit in its group and lane (its contact in
 * g->contact); when the run ends, each group's record is computed here with
 * the vector type: the steps from A_kk + cfm (row_diag's degenerate test),
 * the couplings of a point's normal into its friction rows, the warm start
 * clamped as unit_warm and added to the velocity. Returns false when a used
 * lane's A_kk is not finite or degenerate: the caller then sets the problem
 * up again without point units (iter_prepare), the generic rows handling
 * such a point. Empty lanes get zero fields and impulses, and velocity
 * pointing at dummy_v. */
typedef struct point_inputs {
  double dir[9][LANES];
  double im[2][LANES];
  double ii[2][6][LANES]; /* the upper triangle: xx xy xz yy yz zz */
  double arm[POINT_MAX][2][3][LANES];
  double cfm[POINT_MAX][LANES], target[POINT_MAX][LANES], mu[POINT_MAX][LANES];
  double lambda[POINT_MAX][3][LANES];
} point_inputs;

/* The lanes' inputs, transposed (lane-major) from the contacts and rows
 * (point_unit_placeable: one cfm, one μ, and only the normal's target). */
static ALWAYS_INLINE void point_inputs_gather(const solver_problem *p, lane_group *g,
                                              double *dummy_v, point_inputs *in, const int K) {
  for (int32_t k = 0; k < g->lanes_used; ++k) {
    const solver_contact *c = &p->contacts[g->contact[k]];
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d)
#pragma GCC unroll 3
      for (int m = 0; m < 3; ++m)
        in->dir[3 * d + m][k] = c->dir[d][m];
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      const bool present = c->dof[s] >= 0;
      g->v[s][k] = present ? p->velocity + c->dof[s] : dummy_v;
      const int32_t body = present ? c->dof[s] / 6 : 0;
      const double *ii = p->body_inv_inertia[body];
      in->im[s][k] = present ? p->body_inv_mass[body] : 0.0;
      in->ii[s][0][k] = present ? ii[0] : 0.0;
      in->ii[s][1][k] = present ? ii[1] : 0.0;
      in->ii[s][2][k] = present ? ii[2] : 0.0;
      in->ii[s][3][k] = present ? ii[4] : 0.0;
      in->ii[s][4][k] = present ? ii[5] : 0.0;
      in->ii[s][5][k] = present ? ii[8] : 0.0;
#pragma GCC unroll 4
      for (int32_t pt = 0; pt < K; ++pt)
#pragma GCC unroll 3
        for (int m = 0; m < 3; ++m)
          in->arm[pt][s][m][k] = present ? c[pt].arm[s][m] : 0.0;
    }
#pragma GCC unroll 4
    for (int32_t pt = 0; pt < K; ++pt) {
      const solver_row *r = &p->rows[c[pt].row];
      in->cfm[pt][k] = r[0].cfm;
      in->target[pt][k] = r[0].target;
      in->mu[pt][k] = r[1].mu;
#pragma GCC unroll 3
      for (int d = 0; d < 3; ++d)
        in->lambda[pt][d][k] = r[d].lambda;
    }
    g->row[k] = c->row;
    g->count[k] = K;
  }
  /* empty lanes: zeros (their velocity already points at dummy_v) */
  for (int32_t k = g->lanes_used; k < LANES; ++k) {
    double *fields = &in->dir[0][0];
    for (size_t f = 0; f < sizeof *in / sizeof(double); f += LANES)
      fields[f + (size_t)k] = 0.0;
  }
}

/* What a point contributes to A, lane-wise: per side s and direction k,
 * c[s][k] = r_s × d_k and t[s][k] = I_s⁻¹ c[s][k], so that A_jk of two of
 * its rows is Σ_s (d_j·d_k)/m_s + c_j·t_k. */
typedef struct point_terms4 {
  vd4 c[2][3][3], t[2][3][3];
} point_terms4;

/* J_j · M⁻¹J_kᵀ for row j of point a and row k of point b, on the same
 * sides, with dd = d_j·d_k (an absent side's terms are zeros) */
static ALWAYS_INLINE vd4 point_cross4(const vd4 im[2], const point_terms4 *a, int j,
                                      const point_terms4 *b, int k, vd4 dd) {
  vd4 s0 =
      a->c[0][j][0] * b->t[0][k][0] + a->c[0][j][1] * b->t[0][k][1] + a->c[0][j][2] * b->t[0][k][2];
  vd4 s1 =
      a->c[1][j][0] * b->t[1][k][0] + a->c[1][j][1] * b->t[1][k][1] + a->c[1][j][2] * b->t[1][k][2];
  return (im[0] * dd + s0) + (im[1] * dd + s1);
}

static ALWAYS_INLINE vi4 finite4(vd4 x) { return (x - x) == splat4(0.0); }

static ALWAYS_INLINE bool point_group_fill(const solver_problem *p, lane_group *g, double omega,
                                           bool cone, double *dummy_v, const int K) {
  point_inputs in;
  point_inputs_gather(p, g, dummy_v, &in, K);
  double *rec = g->rec;
  const vd4 zero = splat4(0.0), one = splat4(1.0), w = splat4(omega);
  const long long n = g->lanes_used;
  const vi4 used = (vi4){0, 1, 2, 3} < (vi4){n, n, n, n}; /* the lanes holding a unit */
#define PUT(f, x) st4(rec + LANES * (f), (x))
  /* the inverse inertias as the sweep uses them: the upper triangle */
  vd4 D[3][3], im[2], ii[2][9];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
#pragma GCC unroll 3
    for (int q = 0; q < 3; ++q) {
      D[d][q] = ld4(in.dir[3 * d + q]);
      PUT(H_DIR + 3 * d + q, D[d][q]);
    }
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s) {
    im[s] = ld4(in.im[s]);
    PUT(H_IM + s, im[s]);
#pragma GCC unroll 6
    for (int q = 0; q < 6; ++q)
      PUT(H_II + 6 * s + q, ld4(in.ii[s][q]));
#pragma GCC unroll 9
    for (int q = 0; q < 9; ++q)
      ii[s][q] = ld4(in.ii[s][SYM[q]]);
  }
  vd4 dd[3][3];
#pragma GCC unroll 3
  for (int j = 0; j < 3; ++j)
#pragma GCC unroll 3
    for (int m = 0; m < 3; ++m)
      dd[j][m] = D[j][0] * D[m][0] + D[j][1] * D[m][1] + D[j][2] * D[m][2];
  vd4 lam[POINT_MAX][3];
  vi4 bad = used & ~used; /* all false */
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
    const int32_t Q = H_SIZE + Q_SIZE * q, P = Q + Q_ROWS;
    vd4 arm[2][3];
    point_terms4 pt;
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
#pragma GCC unroll 3
      for (int m = 0; m < 3; ++m) {
        arm[s][m] = ld4(in.arm[q][s][m]);
        PUT(Q + Q_ARM + 3 * s + m, arm[s][m]);
      }
#pragma GCC unroll 3
      for (int k = 0; k < 3; ++k) {
        vd4 *c = pt.c[s][k], *t = pt.t[s][k];
        c[0] = arm[s][1] * D[k][2] - arm[s][2] * D[k][1];
        c[1] = arm[s][2] * D[k][0] - arm[s][0] * D[k][2];
        c[2] = arm[s][0] * D[k][1] - arm[s][1] * D[k][0];
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r)
          t[r] = ii[s][3 * r] * c[0] + ii[s][3 * r + 1] * c[1] + ii[s][3 * r + 2] * c[2];
      }
    }
    /* A_kk + cfm; A_kk taken as degenerate below 1e-13 of the sum of its
     * terms' magnitudes, as row_diag */
    const vd4 cfm = ld4(in.cfm[q]);
    vd4 diag[3];
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k) {
      /* the linear terms, im_s d_k·d_k, are positive: their sum is both
       * theirs and their magnitudes' */
      vd4 lin = (im[0] + im[1]) * dd[k][k];
      vd4 a = lin, scale = lin;
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
        for (int m = 0; m < 3; ++m) {
          vd4 ang = pt.c[s][k][m] * pt.t[s][k][m];
          a += ang;
          scale += abs4(ang);
        }
      diag[k] = a + cfm;
      vi4 good =
          finite4(a) & finite4(scale) & (a > splat4(DEGENERATE_RATIO) * scale) & (diag[k] > zero);
      bad |= used & ~good;
    }
    vd4 step[3];
    step[0] = w / diag[0];
    if (cone) {
      /* ω/λmax of the pair's 2×2 block (pair_lambda_max) */
      vd4 x = splat4(0.5) * (point_cross4(im, &pt, 1, &pt, 2, dd[1][2]) +
                             point_cross4(im, &pt, 2, &pt, 1, dd[2][1]));
      vd4 h = splat4(0.5) * (diag[1] - diag[2]);
      step[1] = step[2] = w / (splat4(0.5) * (diag[1] + diag[2]) + sqrt4(h * h + x * x));
    } else {
      step[1] = w / diag[1];
      step[2] = w / diag[2];
    }
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d)
      PUT(P + PR_STEP + d, step[d]);
    PUT(P + PR_CFM, cfm);
    PUT(P + PR_BIAS, step[0] * ld4(in.target[q]));
    PUT(P + PR_DIAG, diag[0]);
    vd4 mu = ld4(in.mu[q]);
    PUT(P + PR_MU, mu);
    PUT(P + PR_C_NA, step[1] * point_cross4(im, &pt, 1, &pt, 0, dd[1][0]));
    PUT(P + PR_C_NB, step[2] * point_cross4(im, &pt, 2, &pt, 0, dd[2][0]));
    PUT(P + PR_C_AB, cone ? zero : step[2] * point_cross4(im, &pt, 2, &pt, 1, dd[2][1]));

    /* the warm start, clamped as unit_warm: the normal into [0, ∞), the
     * friction pair onto the disc (cone) or into ±μλn (box); an empty
     * lane's inputs are zeros and its impulses come out 0 */
    vd4 l0 = ld4(in.lambda[q][0]), l1 = ld4(in.lambda[q][1]), l2 = ld4(in.lambda[q][2]);
    l0 = select4(l0 < zero, zero, l0);
    vd4 bound = mu * l0;
    if (cone) {
      vd4 len = sqrt4(l1 * l1 + l2 * l2);
      vd4 f = select4(len > bound, bound / len, one);
      l1 = l1 * f;
      l2 = l2 * f;
    } else {
      l1 = select4(l1 < -bound, -bound, l1);
      l1 = select4(l1 > bound, bound, l1);
      l2 = select4(l2 < -bound, -bound, l2);
      l2 = select4(l2 > bound, bound, l2);
    }
    lam[q][0] = l0;
    lam[q][1] = l1;
    lam[q][2] = l2;
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d)
      st4(g->lam + LANES * (3 * q + d), lam[q][d]);
  }
#undef PUT
  vi4 any = bad;
  if (any[0] | any[1] | any[2] | any[3])
    return false;
  /* empty lanes: zero fields (their steps, 1/0, made NaNs) */
  const int32_t fields = unit_fields(FORM_POINTS, K);
  for (int32_t l = g->lanes_used; l < LANES; ++l)
    for (int32_t f = 0; f < fields; ++f)
      rec[LANES * f + l] = 0.0;

  /* v += M⁻¹Jᵀλ of the warm start: per point P = Σ_k d_k λ_k, −P/m_A and
   * −I_A⁻¹(r_A × P) on A, + on B */
  vd4 V[2][6];
  group_gather(g, V);
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
    vd4 P3[3], arm[2][3];
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      P3[c] = (D[0][c] * lam[q][0] + D[1][c] * lam[q][1]) + D[2][c] * lam[q][2];
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
#pragma GCC unroll 3
      for (int m = 0; m < 3; ++m)
        arm[s][m] = ld4(in.arm[q][s][m]);
      vd4 torque[3];
      cross4(arm[s], P3, torque);
      vd4 sign = s == 0 ? splat4(-1.0) : one;
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c) {
        V[s][c] += sign * (im[s] * P3[c]);
        V[s][3 + c] += sign * ((ii[s][3 * c] * torque[0] + ii[s][3 * c + 1] * torque[1]) +
                               ii[s][3 * c + 2] * torque[2]);
      }
    }
  }
  group_scatter(g, V);
  return true;
}

/* the fill unrolled for the group's points */
static ALWAYS_INLINE bool point_group_fill_k(const solver_problem *p, lane_group *g, double omega,
                                             bool cone, double *dummy_v) {
  switch (g->points) {
  case 4:
    return point_group_fill(p, g, omega, cone, dummy_v, 4);
  case 3:
    return point_group_fill(p, g, omega, cone, dummy_v, 3);
  case 2:
    return point_group_fill(p, g, omega, cone, dummy_v, 2);
  default:
    return point_group_fill(p, g, omega, cone, dummy_v, 1);
  }
}

/* Compiled for the baseline and, as the sweeps, for AVX2: the same
 * operations lane by lane, no fused multiply-adds, so the same bits. */
typedef bool (*point_fill_fn)(const solver_problem *p, lane_group *g, double omega, bool cone,
                              double *dummy_v);
static bool point_group_fill_base(const solver_problem *p, lane_group *g, double omega, bool cone,
                                  double *dummy_v) {
  return point_group_fill_k(p, g, omega, cone, dummy_v);
}
#if LCP_AVX2
__attribute__((target("avx2"))) static bool point_group_fill_avx2(const solver_problem *p,
                                                                  lane_group *g, double omega,
                                                                  bool cone, double *dummy_v) {
  return point_group_fill_k(p, g, omega, cone, dummy_v);
}
#endif
static point_fill_fn pick_point_fill(bool baseline_only) {
#if LCP_AVX2
  if (!baseline_only && __builtin_cpu_supports("avx2"))
    return point_group_fill_avx2;
#else
  (void)baseline_only;
#endif
  return point_group_fill_base;
}
#endif

/* ---- blocks of generic rows on one range (robots' joint rows) ----
 *
 * A robot's joint rows (limits, damping, friction, PD control: DESIGN.md
 * §4–5) all act on the robot's dofs only, and M⁻¹ of a multibody is dense,
 * so they are strongly coupled: A_ij = (M⁻¹)_{v_i v_j}. Row-by-row
 * Gauss–Seidel then converges slowly (the 7-dof arm's 7 PD rows: all 20
 * sweeps, residual 1e-5). A maximal run of consecutive rows whose only side
 * is the same dof range (none a friction row, none degenerate, 2 to
 * BLOCK_MAX rows) is instead one block of block Gauss–Seidel (seed 000's
 * splitting with B = L + D, D now block diagonal): each sweep solves the
 * block's boxed LCP exactly, with the rest of λ fixed,
 *
 *     K x + q ⟂ lo ≤ x ≤ hi,  K = A_bb + diag(cfm_b),  q = r − K λ_b,
 *     r_i = J_i·v − target_i + cfm_i λ_i (the rows' current w + cfm λ),
 *
 * by x = λ_b − K⁻¹ r (Cholesky factor of K, made once per solve) when that
 * is inside the bounds, else by Dantzig on K (lcp_dense_dantzig's
 * algorithm). Then v += Σ_i M⁻¹J_iᵀ (x_i − λ_i). Block Gauss–Seidel with
 * exact block solves converges for positive definite A like PGS with ω = 1;
 * ω does not apply to blocks. A block whose K is not clearly positive
 * definite (redundant rows without cfm: a lower and an upper limit on the
 * same joint) goes row by row as items. */
enum { BLOCK_MAX = 48 };

struct dz_work;
static struct dz_work *dz_new(int32_t n, arena *a);
static int dz_solve_robust(struct dz_work *ws, int32_t n, const double *A, const double *b,
                           const double *lo, const double *hi, double *x);
static void chol_solve(const double *L, int32_t n, int32_t m, double *y);

typedef struct row_block {
  int32_t first, m, width;
  bool factored;         /* L is K's factor (else the block's K is not clearly
                            positive definite and is swept by projected Gauss–Seidel) */
  double *v;             /* the range's velocity */
  const double **J, **T; /* [m] the rows' coefficients over the range */
  double *K, *L;         /* m×m: A_bb + diag(cfm); its lower Cholesky factor */
  double *lo, *hi, *target, *cfm, *diag;
  double *r, *x, *x0, *q, *blo, *bhi; /* sweep work, [m] each */
} row_block;

/* The one present side of row r: its index, or −1 when there are two or none. */
static int only_side(const solver_row *r) {
  bool s0 = r->dof_count[0] > 0, s1 = r->dof_count[1] > 0;
  return s0 == s1 ? -1 : (s0 ? 0 : 1);
}

/* How many rows from i form a block (0 when fewer than 2); diag gets their
 * A_ii + cfm_i. */
static int32_t block_rows(const solver_problem *p, int32_t i, int32_t end, double *diag) {
  const solver_row *r0 = &p->rows[i];
  int s0 = only_side(r0);
  if (s0 < 0)
    return 0;
  int32_t m = 0;
  while (i + m < end && m < BLOCK_MAX) {
    const solver_row *r = &p->rows[i + m];
    int s = only_side(r);
    if (s < 0 || is_friction(r->kind) || r->dof_offset[s] != r0->dof_offset[s0] ||
        r->dof_count[s] != r0->dof_count[s0])
      break;
    double d = row_diag(p, r);
    if (!(d > 0.0))
      break;
    diag[m++] = d;
  }
  return m >= 2 ? m : 0;
}

/* Block b for rows [i, i + m): its layout and the off-diagonal of K, which
 * depend on the rows' coefficients only. LCP_ERR_NO_MEMORY or LCP_OK. */
static int block_layout(row_block *b, solver_problem *p, int32_t i, int32_t m, arena *scratch) {
  const solver_row *rows = &p->rows[i];
  int s0 = only_side(&rows[0]);
  size_t mm = (size_t)m * (size_t)m;
  b->first = i;
  b->m = m;
  b->width = rows[0].dof_count[s0];
  b->v = p->velocity + rows[0].dof_offset[s0];
  b->factored = false;
  b->J = ARENA_NEW(scratch, const double *, m);
  b->T = ARENA_NEW(scratch, const double *, m);
  b->K = ARENA_NEW(scratch, double, 2 * mm);
  double *buf = ARENA_NEW(scratch, double, 11 * (size_t)m);
  if (!b->J || !b->T || !b->K || !buf)
    return LCP_ERR_NO_MEMORY;
  b->L = b->K + mm;
  b->lo = buf, b->hi = buf + m, b->target = buf + 2 * m, b->cfm = buf + 3 * m;
  b->diag = buf + 4 * m, b->r = buf + 5 * m, b->x = buf + 6 * m, b->x0 = buf + 7 * m;
  b->q = buf + 8 * m, b->blo = buf + 9 * m, b->bhi = buf + 10 * m;
  for (int32_t k = 0; k < m; ++k) {
    const solver_row *r = &rows[k];
    int s = only_side(r);
    b->J[k] = p->J + r->coef_offset[s];
    b->T[k] = p->MinvJt + r->coef_offset[s];
  }
  /* K_kl = ½(J_k·M⁻¹J_lᵀ + J_l·M⁻¹J_kᵀ) (equal in exact arithmetic; the
   * factor needs exact symmetry) */
  for (int32_t k = 0; k < m; ++k) {
    for (int32_t l = 0; l < k; ++l) {
      double a =
          0.5 * (side_dot(b->J[k], b->T[l], b->width) + side_dot(b->J[l], b->T[k], b->width));
      b->K[(size_t)k * (size_t)m + (size_t)l] = a;
      b->K[(size_t)l * (size_t)m + (size_t)k] = a;
    }
  }
  return LCP_OK;
}

/* The block's warm start: its rows' impulses clamped into their bounds,
 * applied to velocity. */
static void block_warm(const row_block *b, const solver_problem *p, double *lam) {
  const solver_row *rows = &p->rows[b->first];
  for (int32_t k = 0; k < b->m; ++k) {
    double x = clampd(rows[k].lambda, rows[k].lo, rows[k].hi);
    lam[b->first + k] = x;
    if (x != 0.0)
      side_axpy(b->v, b->T[k], b->width, x);
  }
}

/* Block b's values from its rows: bounds, targets, cfm, K_kk = A_kk + cfm_k
 * (diag, as the items'), the factor of K, and the warm start (clamped into
 * the bounds, applied to velocity). LCP_ERR_STATE when K is not clearly
 * positive definite (nothing was written to lam or velocity), else LCP_OK. */
/* K's diagonal from diag and its factor L: LCP_ERR_STATE (and factored
 * false) when K is not clearly positive definite, else LCP_OK. */
static int block_factor(row_block *b, const double *diag) {
  const int32_t m = b->m;
  b->factored = false;
  for (int32_t k = 0; k < m; ++k) {
    b->diag[k] = diag[k];
    b->K[(size_t)k * (size_t)m + (size_t)k] = diag[k];
  }
  /* Cholesky K = L Lᵀ; a pivot below 1e-12 of its K_kk means K is singular
   * to rounding */
  for (int32_t k = 0; k < m; ++k)
    for (int32_t l = 0; l <= k; ++l) {
      double sum = b->K[(size_t)k * (size_t)m + (size_t)l];
      for (int32_t c = 0; c < l; ++c)
        sum -= b->L[(size_t)k * (size_t)m + (size_t)c] * b->L[(size_t)l * (size_t)m + (size_t)c];
      if (k == l) {
        if (!(sum > 1e-12 * diag[k]))
          return LCP_ERR_STATE;
        b->L[(size_t)k * (size_t)m + (size_t)k] = sqrt(sum);
      } else {
        b->L[(size_t)k * (size_t)m + (size_t)l] = sum / b->L[(size_t)l * (size_t)m + (size_t)l];
      }
    }
  b->factored = true;
  return LCP_OK;
}

static int block_values(row_block *b, solver_problem *p, const double *diag, double *lam) {
  const solver_row *rows = &p->rows[b->first];
  for (int32_t k = 0; k < b->m; ++k) {
    b->lo[k] = rows[k].lo;
    b->hi[k] = rows[k].hi;
    b->target[k] = rows[k].target;
    b->cfm[k] = rows[k].cfm;
  }
  int rc = block_factor(b, diag);
  if (rc == LCP_OK)
    block_warm(b, p, lam);
  return rc;
}

/* One projected Gauss–Seidel pass on a block from λ_b, with r its residual
 * at λ_b: the block's rows one after the other through K. */
static void block_gs_pass(const row_block *b, const double *lb, double *x) {
  const int32_t m = b->m;
  for (int32_t k = 0; k < m; ++k) {
    const double *row = b->K + (size_t)k * (size_t)m;
    double rk = b->r[k];
    for (int32_t l = 0; l < k; ++l)
      rk += row[l] * (x[l] - lb[l]);
    x[k] = clampd(lb[k] - rk / b->diag[k], b->lo[k], b->hi[k]);
  }
}

/* One block of the sweep (see above). Folds the residual into *res_io and
 * *sum_io as pgs_items does. */
static void block_sweep(const row_block *b, struct dz_work *dz, double *lam, double *res_io,
                        double *sum_io) {
  const int32_t m = b->m, w = b->width;
  double *lb = lam + b->first, *x = b->x;
  bool inside = true;
  for (int32_t k = 0; k < m; ++k)
    b->r[k] = (side_dot(b->J[k], b->v, w) - b->target[k]) + b->cfm[k] * lb[k];
  if (!b->factored) {
    block_gs_pass(b, lb, x);
  } else {
    memcpy(x, b->r, sizeof(double) * (size_t)m);
    chol_solve(b->L, m, m, x);
    for (int32_t k = 0; k < m; ++k) {
      x[k] = lb[k] - x[k];
      inside &= x[k] >= b->lo[k] && x[k] <= b->hi[k];
    }
  }
  if (b->factored && !inside) {
    /* Dantzig on x = x0 + y with x0 = clamp(0, lo, hi), as solver_direct
     * shifts bounds that exclude 0: K y + q' ⟂ lo − x0 ≤ y ≤ hi − x0 with
     * q' = r + K (x0 − λ_b). */
    for (int32_t k = 0; k < m; ++k) {
      b->x0[k] = clampd(0.0, b->lo[k], b->hi[k]);
      b->blo[k] = b->lo[k] - b->x0[k];
      b->bhi[k] = b->hi[k] - b->x0[k];
    }
    for (int32_t k = 0; k < m; ++k) {
      const double *row = b->K + (size_t)k * (size_t)m;
      double qk = b->r[k];
      for (int32_t l = 0; l < m; ++l)
        qk += row[l] * (b->x0[l] - lb[l]);
      b->q[k] = qk;
    }
    if (dz_solve_robust(dz, m, b->K, b->q, b->blo, b->bhi, x) == LCP_OK) {
      for (int32_t k = 0; k < m; ++k)
        x[k] = clampd(b->x0[k] + x[k], b->lo[k], b->hi[k]);
    } else {
      /* no exact block solution (non-finite data): one projected
       * Gauss–Seidel pass on the block instead, from λ_b */
      block_gs_pass(b, lb, x);
    }
  }
  double res = *res_io, acc = *sum_io;
  for (int32_t k = 0; k < m; ++k) {
    double dl = x[k] - lb[k];
    lb[k] = x[k];
    if (dl != 0.0)
      side_axpy(b->v, b->T[k], w, dl);
    double rr = fabs(dl) * b->diag[k];
    res = rr > res ? rr : res;
    acc += rr;
  }
  *res_io = res;
  *sum_io = acc;
}

/* The sweep runs ops in order: a range of items, of groups or of blocks. */
enum { OP_ITEMS = 0, OP_GROUPS = 1, OP_BLOCKS = 2 };
typedef struct sweep_op {
  int32_t kind;
  int32_t begin, end;
} sweep_op;

typedef struct iter_setup {
  pgs_item *items;
  int32_t count;
  sweep_op *ops; /* PGS: items and groups in row order */
  int32_t op_count;
  lane_group *groups;
  int32_t group_count;
  bool cone;
#if LCP_UNITS
  groups_fn sweep_groups;
#endif
  row_block *blocks;
  int32_t block_count;
  struct dz_work *dz; /* Dantzig's work space for the largest block */
  /* [row_count] current impulses of the items' and blocks' rows (a unit's
   * are in its group) */
  double *lam;
  double *dummy_v; /* the velocity of an absent side (zeros) */
} iter_setup;
static const double zeros6[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};

/* J_i · v (without the target) */
static inline double item_jv(const pgs_item *it) {
  if (it->kind == IT_FAST || it->kind == IT_PAIR_FAST)
    return dot12(it->J[0], it->v[0], it->J[1], it->v[1]);
  return side_dot(it->J[0], it->v[0], it->n[0]) + side_dot(it->J[1], it->v[1], it->n[1]);
}

static inline void item_apply(const pgs_item *it, double dl) {
  if (it->kind == IT_FAST || it->kind == IT_PAIR_FAST) {
    axpy6(it->v[0], it->T[0], dl);
    axpy6(it->v[1], it->T[1], dl);
  } else {
    side_axpy(it->v[0], it->T[0], it->n[0], dl);
    side_axpy(it->v[1], it->T[1], it->n[1], dl);
  }
}

/* The projected update of one scalar row (seed 000):
 * λ ← clamp(λ − ω (w + cfm λ)/(A_ii + cfm), lo, hi), w = J_i·v − target,
 * the bounds of a friction row being ±μλn with λn the normal row's current
 * impulse. jv = J_i·v. */
static inline double item_update(const pgs_item *it, const double *lam, double jv) {
  double l = lam[it->row];
  double n = lam[it->normal];
  double bound = it->mu * (n > 0.0 ? n : 0.0);
  double x = (it->keep * l + it->bias) - it->step * jv;
  return clampd(x, it->lo - bound, it->hi + bound);
}

/* The cone pair's update: both tangents step from the same v with the common
 * step, then (λ1, λ2) is projected on the disc of radius μλn (DESIGN.md §3
 * step 5, cone model). */
static inline void pair_update(const pgs_item *a, const pgs_item *b, const double *lam, double jv1,
                               double jv2, double *out1, double *out2) {
  double l1 = lam[a->row], l2 = lam[b->row];
  double n = lam[a->normal];
  double radius = a->mu * (n > 0.0 ? n : 0.0);
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

static void item_set_step(pgs_item *it, double step, const solver_row *r) {
  it->step = step;
  it->keep = 1.0 - step * r->cfm;
  it->bias = step * r->target;
}

static void fill_item(pgs_item *it, const solver_problem *p, int32_t i, double diag, double omega,
                      double *dummy_v) {
  const solver_row *r = &p->rows[i];
  bool fast = true;
  for (int s = 0; s < 2; ++s) {
    int32_t n = r->dof_count[s];
    if (n > 0) {
      it->v[s] = p->velocity + r->dof_offset[s];
      it->J[s] = p->J + r->coef_offset[s];
      it->T[s] = p->MinvJt + r->coef_offset[s];
    } else {
      it->v[s] = dummy_v;
      it->J[s] = zeros6;
      it->T[s] = zeros6;
      n = 0;
    }
    it->n[s] = n;
    fast &= n == 0 || n == 6;
  }
  it->kind = fast ? IT_FAST : IT_GENERAL;
  it->diag = diag;
  item_set_step(it, omega / diag, r);
  it->row = i;
  it->pad_ = 0;
  if (is_friction(r->kind)) {
    it->lo = 0.0;
    it->hi = 0.0;
    it->mu = r->mu;
    it->normal = r->normal_row;
  } else {
    it->lo = r->lo;
    it->hi = r->hi;
    it->mu = 0.0;
    it->normal = i;
  }
}

/* Appends item or group k to the ops, extending the last op when it is a
 * range of the same kind ending at k. */
static void ops_add(iter_setup *s, int32_t kind, int32_t index) {
  sweep_op *last = s->op_count > 0 ? &s->ops[s->op_count - 1] : NULL;
  if (last && last->kind == kind && last->end == index) {
    last->end = index + 1;
    return;
  }
  s->ops[s->op_count++] = (sweep_op){kind, index, index + 1};
}

/* Groups are filled as the units are found, one open group per bucket
 * (colour, form, points): a unit goes into the last group of its bucket, or a new
 * one when that is full. A run's groups are kept in staging and copied into
 * the setup's group list bucket by bucket when the run ends (at an item or
 * the last row): colour by colour, 2-point before 1-point groups, each
 * bucket in row order. */
/* per colour: coefficient groups of 2 and 1 points, point groups of 1 to
 * POINT_MAX points, the larger first */
enum { KINDS = 2 + POINT_MAX, BUCKETS = KINDS * (COLORS + 1) };
typedef struct unit_staging {
  lane_group *groups; /* this run's groups, in creation order */
  int32_t *next;      /* next group of the same bucket, −1 at the end */
  int32_t count;
  int32_t head[BUCKETS], tail[BUCKETS]; /* −1: the bucket is empty */
  /* colours with a group in this run (bit c for c < COLORS; COLORS apart),
   * so that ending a run visits only their buckets */
  uint64_t colors_used;
  bool last_color_used;
  int32_t dofs_used; /* velocity entries whose colour masks are set */
  int32_t *dof_list; /* their first entries (6 each) */
  /* contact points make point units, whose groups get their records when
   * the run ends (point_group_fill); else every contact goes the
   * coefficient way */
  bool deferred;
} unit_staging;

/* The lane of a new unit of `points` points and colour `color`: the open
 * group of its bucket, or a new group (record uninitialised: every lane
 * that takes a unit writes all its fields, the rest are zeroed at the end
 * of the run). NULL when out of memory. */
static lane_group *unit_slot(unit_staging *st, arena *scratch, int32_t color, int32_t form,
                             int32_t points, double *dummy_v, int32_t *lane) {
  int32_t b = KINDS * color + (form == FORM_COEFS ? (points == 1) : 2 + POINT_MAX - points);
  int32_t per_group = color == COLORS ? 1 : LANES;
  int32_t t = st->tail[b];
  if (t >= 0 && st->groups[t].lanes_used < per_group) {
    *lane = st->groups[t].lanes_used++;
    return &st->groups[t];
  }
  int32_t k = st->count++;
  lane_group *g = &st->groups[k];
  g->rec = g->lam = NULL;
  if (form == FORM_COEFS || !st->deferred) {
    g->rec = ARENA_NEW(scratch, double, LANES *unit_fields(form, points));
    g->lam = ARENA_NEW(scratch, double, LANES * 3 * points);
    if (!g->rec || !g->lam)
      return NULL;
  }
  for (int32_t l = 0; l < LANES; ++l) {
    g->v[0][l] = g->v[1][l] = dummy_v;
    g->row[l] = -1;
    g->count[l] = 0;
    g->contact[l] = -1;
  }
  g->points = points;
  g->form = form;
  g->lanes_used = 1;
  st->next[k] = -1;
  if (t >= 0)
    st->next[t] = k;
  else
    st->head[b] = k;
  if (color < COLORS)
    st->colors_used |= (uint64_t)1 << color;
  else
    st->last_color_used = true;
  st->tail[b] = k;
  *lane = 0;
  return g;
}

/* What unit_run_end needs beyond the staging. */
typedef struct run_context {
  const solver_problem *p;
  arena *scratch;
  double omega;
  bool cone;
  double *dummy_v;
#if LCP_UNITS
  point_fill_fn fill;
#endif
} run_context;

enum { RUN_REDO = 1 }; /* a deferred point group has a degenerate lane */

/* Ends a run: fills the deferred point groups (their records allocated one
 * after the other, in sweep order) and zeroes the empty lanes of the others
 * (all their updates are then 0 + 0, on the dummy velocity), appends the
 * groups to the setup bucket by bucket, and clears the run's colour masks.
 * LCP_OK, LCP_ERR_NO_MEMORY or RUN_REDO. */
static int unit_run_end(iter_setup *s, unit_staging *st, uint64_t *used, const run_context *rc) {
  for (int32_t color = 0; color <= COLORS; ++color) {
    if (color < COLORS) {
      uint64_t from_here = st->colors_used >> color;
      if (!from_here) {
        color = COLORS - 1; /* the loop goes on to the last colour */
        continue;
      }
      color += (int32_t)__builtin_ctzll(from_here);
    } else if (!st->last_color_used) {
      break;
    }
    for (int32_t b = KINDS * color; b < KINDS * (color + 1); ++b) {
      for (int32_t k = st->head[b]; k >= 0; k = st->next[k]) {
        lane_group *g = &st->groups[k];
        int32_t fields = unit_fields(g->form, g->points);
#if LCP_UNITS
        if (!g->rec) {
          g->rec = ARENA_NEW(rc->scratch, double, LANES *fields);
          g->lam = ARENA_NEW(rc->scratch, double, LANES * 3 * g->points);
          if (!g->rec || !g->lam)
            return LCP_ERR_NO_MEMORY;
          if (!rc->fill(rc->p, g, rc->omega, rc->cone, rc->dummy_v))
            return RUN_REDO;
        } else
#endif
        {
          for (int32_t l = g->lanes_used; l < LANES; ++l) {
            for (int32_t f = 0; f < fields; ++f)
              g->rec[LANES * f + l] = 0.0;
            for (int32_t f = 0; f < 3 * g->points; ++f)
              g->lam[LANES * f + l] = 0.0;
          }
        }
        s->groups[s->group_count] = *g;
        ops_add(s, OP_GROUPS, s->group_count++);
      }
      st->head[b] = st->tail[b] = -1;
    }
  }
  st->colors_used = 0;
  st->last_color_used = false;
  st->count = 0;
  for (int32_t u = 0; u < st->dofs_used; ++u)
    memset(used + st->dof_list[u], 0, 6 * sizeof(uint64_t));
  st->dofs_used = 0;
  return LCP_OK;
}

/* The warm start of a unit's point at row i (DESIGN.md §3 step 5): the
 * normal clamped into its bounds, the friction pair into ±μλn (box) or the
 * disc of radius μλn (cone), as clamp_warm_start. */
static void unit_warm(const solver_row *r, bool cone, double *lam) {
  lam[0] = clampd(r[0].lambda, r[0].lo, r[0].hi);
  double n = lam[0] > 0.0 ? lam[0] : 0.0;
  if (cone) {
    double bound = r[1].mu * n;
    double l1 = r[1].lambda, l2 = r[2].lambda;
    double len = sqrt(l1 * l1 + l2 * l2);
    double f = len > bound ? bound / len : 1.0;
    lam[1] = l1 * f;
    lam[2] = l2 * f;
  } else {
    double b1 = r[1].mu * n, b2 = r[2].mu * n;
    lam[1] = clampd(r[1].lambda, -b1, b1);
    lam[2] = clampd(r[2].lambda, -b2, b2);
  }
}

/* The warm start of a generic row from the row itself (its normal's for
 * friction), clamped as clamp_warm_start does. */
static double item_warm(const solver_problem *p, int32_t i, double diag) {
  const solver_row *r = &p->rows[i];
  if (!(diag > 0.0))
    return 0.0;
  if (!is_friction(r->kind))
    return clampd(r->lambda, r->lo, r->hi);
  const solver_row *nr = &p->rows[r->normal_row];
  double n = row_diag(p, nr) > 0.0 ? clampd(nr->lambda, nr->lo, nr->hi) : 0.0;
  double bound = r->mu * (n > 0.0 ? n : 0.0);
  return clampd(r->lambda, -bound, bound);
}

/* Checks, then one pass over the rows in order: contact units (with
 * use_units) go straight into their lane of a group, every other row
 * becomes an item (or is skipped when degenerate); the warm start is
 * clamped and applied to velocity (v = u_free + M⁻¹Jᵀλ) as each row is
 * met. Non-finite coefficients (A_ii) give LCP_ERR_NUMERIC, possibly after
 * some of the warm start went into velocity. */
static int iter_prepare_pass(const solver_settings *settings, solver_problem *p, arena *scratch,
                             bool use_units, bool deferred, iter_setup *out) {
  if (!settings || !scratch)
    return LCP_ERR_INVALID_ARGUMENT;
  if (!(settings->omega > 0.0) || !isfinite(settings->omega))
    return LCP_ERR_INVALID_ARGUMENT;
  int rc = check_problem(p);
  if (rc != LCP_OK)
    return rc;
  const int32_t n = p->row_count;
  const double omega = settings->omega;
  size_t rows = n > 0 ? (size_t)n : 1;
  use_units = use_units && LCP_UNITS;
  out->lam = ARENA_NEW(scratch, double, rows);
  out->items = ARENA_NEW(scratch, pgs_item, rows);
  out->ops = ARENA_NEW(scratch, sweep_op, rows);
  double *dummy_v = arena_calloc(scratch, 6, sizeof(double));
  if (!out->lam || !out->items || !out->ops || !dummy_v)
    return LCP_ERR_NO_MEMORY;
  out->dummy_v = dummy_v;
  out->groups = NULL;
  out->blocks = NULL;
  out->block_count = 0;
  const bool use_blocks = use_units && settings->pgs_mode != PGS_MODE_NO_BLOCKS;
  double *bdiag = NULL;
  if (use_blocks) {
    out->blocks = ARENA_NEW(scratch, row_block, rows / 2 + 1);
    bdiag = ARENA_NEW(scratch, double, BLOCK_MAX);
    if (!out->blocks || !bdiag)
      return LCP_ERR_NO_MEMORY;
  }
  uint8_t *refs = NULL;
  uint64_t *used = NULL;
  unit_staging st; /* head and tail are set below, with the units */
  st.groups = NULL;
  st.next = NULL;
  st.count = 0;
  st.colors_used = 0;
  st.last_color_used = false;
  st.dofs_used = 0;
  st.dof_list = NULL;
  st.deferred = false;
  if (use_units) {
    size_t max_units = rows / 3 + 1;
    out->groups = ARENA_NEW(scratch, lane_group, max_units);
    st.groups = ARENA_NEW(scratch, lane_group, max_units);
    st.next = ARENA_NEW(scratch, int32_t, max_units);
    st.dof_list = ARENA_NEW(scratch, int32_t, 2 * max_units);
    refs = arena_calloc(scratch, rows, 1);
    used = arena_calloc(scratch, p->dof_count > 0 ? (size_t)p->dof_count : 1, sizeof(uint64_t));
    if (!out->groups || !st.groups || !st.next || !st.dof_list || !refs || !used)
      return LCP_ERR_NO_MEMORY;
    memset(st.head, 0xff, sizeof st.head); /* all −1 */
    memset(st.tail, 0xff, sizeof st.tail);
    for (int32_t i = 0; i < n; ++i)
      if (is_friction(p->rows[i].kind) && refs[p->rows[i].normal_row] < 255)
        refs[p->rows[i].normal_row]++;
  }
  const bool cone = settings->friction_model == LCP_FRICTION_CONE;
  const bool baseline_only = settings->pgs_mode == PGS_MODE_BASELINE_VECTORS;
  out->cone = cone;
  st.deferred = deferred && LCP_UNITS;
#if LCP_UNITS
  const run_context run = {p, scratch, omega, cone, dummy_v, pick_point_fill(baseline_only)};
#else
  const run_context run = {p, scratch, omega, cone, dummy_v};
#endif
#if LCP_UNITS
  out->sweep_groups = pick_groups_sweep(cone, baseline_only, false);
#endif

  /* contact points: the ones that will not be point units get their
   * coefficients now (another row may read their normal's before the loop
   * reaches them); without deferred point groups, all of them */
  const solver_contact *contacts = p->contacts;
  const int32_t contact_count = p->contact_count;
  /* [contact_count]: will be (a point of) a point unit; found once, as a
   * large problem's rows are not in the cache for a second look */
  uint8_t *placeable = NULL;
  if (st.deferred && contact_count > 0) {
    placeable = ARENA_NEW(scratch, uint8_t, contact_count);
    if (!placeable)
      return LCP_ERR_NO_MEMORY;
  }
  for (int32_t k = 0; k < contact_count; ++k) {
    bool unit = st.deferred && point_unit_placeable(p, refs, &contacts[k]);
    if (placeable)
      placeable[k] = unit;
    if (!unit)
      contact_expand(p, &contacts[k]);
  }
  int32_t ci = 0; /* the next contact */

  int32_t count = 0;
  out->op_count = 0;
  out->group_count = 0;
  for (int32_t i = 0; i < n;) {
    side_layout l[UNIT_MAX_POINTS][3];
    double ud[3 * UNIT_MAX_POINTS], ul[3 * UNIT_MAX_POINTS];
    /* A run is coloured as a whole, and a sweep takes it colour by colour:
     * a run much longer than the cache holds would be read once per colour
     * from memory. Runs are cut at RUN_UNITS_MAX units (contacts come in
     * spatial order, so a run covers a neighbourhood). */
    if (st.count >= RUN_UNITS_MAX && (rc = unit_run_end(out, &st, used, &run)) != LCP_OK)
      return rc;
    if (ci < contact_count && contacts[ci].row == i) {
      const solver_contact *c = &contacts[ci];
      if (placeable && placeable[ci]) {
        /* placed now, computed when the run ends (point_group_fill); the
         * next points join while they are on the same bodies with the same
         * directions (a manifold's points, as the step writes them) */
        int32_t points = 1;
        while (points < POINT_MAX && ci + points < contact_count &&
               c[points].row == i + 3 * points && c[points].dof[0] == c->dof[0] &&
               c[points].dof[1] == c->dof[1] && memcmp(c[points].dir, c->dir, sizeof c->dir) == 0 &&
               placeable[ci + points])
          ++points;
        side_layout sl = {.sides = 0, .dof = {-1, -1}};
        for (int s = 0; s < 2; ++s)
          if (c->dof[s] >= 0)
            sl.dof[sl.sides++] = c->dof[s];
        int32_t color = unit_color(used, &sl);
        for (int32_t k = 0; k < sl.sides; ++k)
          if (color < COLORS)
            st.dof_list[st.dofs_used++] = sl.dof[k];
        int32_t lane;
        lane_group *g = unit_slot(&st, scratch, color, FORM_POINTS, points, dummy_v, &lane);
        if (!g)
          return LCP_ERR_NO_MEMORY;
        g->contact[lane] = ci;
        i += 3 * points;
        ci += points;
        continue;
      }
      /* not a unit: its rows (expanded above) go the generic way below */
      ++ci;
    }
    if (use_units && unit_point_at(p, refs, i, l[0], ud)) {
      int32_t points = 1;
      if (!(ci < contact_count && contacts[ci].row == i + 3) &&
          unit_point_at(p, refs, i + 3, l[1], ud + 3) && same_sides(&l[0][0], &l[1][0]) &&
          same_linear(p, l[0], l[1]))
        points = 2;
      int32_t color = unit_color(used, &l[0][0]);
      for (int32_t k = 0; k < l[0][0].sides; ++k)
        if (color < COLORS)
          st.dof_list[st.dofs_used++] = l[0][0].dof[k];
      int32_t lane;
      lane_group *g = unit_slot(&st, scratch, color, FORM_COEFS, points, dummy_v, &lane);
      if (!g)
        return LCP_ERR_NO_MEMORY;
      for (int32_t q = 0; q < points; ++q) {
        unit_warm(&p->rows[i + 3 * q], cone, ul + 3 * q);
        for (int32_t m = 0; m < 3; ++m) {
          double x = ul[3 * q + m];
          if (x == 0.0)
            continue;
          for (int32_t s = 0; s < l[q][m].sides; ++s)
            axpy6(p->velocity + l[q][m].dof[s], p->MinvJt + l[q][m].coef[s], x);
        }
      }
      unit_fill(p, ud, ul, omega, cone, i, points, l, g, g->rec, lane, dummy_v);
      i += 3 * points;
      continue;
    }
    /* a block ends before the next contact point's rows (not yet expanded) */
    int32_t bm =
        use_blocks ? block_rows(p, i, ci < contact_count ? contacts[ci].row : n, bdiag) : 0;
    if (bm > 0) {
      row_block *b = &out->blocks[out->block_count];
      rc = block_layout(b, p, i, bm, scratch);
      if (rc == LCP_OK)
        rc = block_values(b, p, bdiag, out->lam);
      if (rc == LCP_ERR_NO_MEMORY)
        return rc;
      if (rc == LCP_OK) {
        if (st.count > 0 && (rc = unit_run_end(out, &st, used, &run)) != LCP_OK)
          return rc;
        ops_add(out, OP_BLOCKS, out->block_count++);
        i += bm;
        continue;
      }
    }
    double d0 = row_diag(p, &p->rows[i]);
    if (d0 < 0.0)
      return LCP_ERR_NUMERIC;
    if (!(d0 > 0.0)) {
      out->lam[i] = 0.0; /* degenerate: λ stays 0 */
      p->rows[i].lambda = 0.0;
      ++i;
      continue;
    }
    /* the units before these items are swept before them */
    if (st.count > 0 && (rc = unit_run_end(out, &st, used, &run)) != LCP_OK)
      return rc;
    int32_t first = count;
    double d1 = -1.0;
    if (cone && i + 1 < n && p->rows[i].kind == ROW_FRICTION_1 &&
        p->rows[i + 1].kind == ROW_FRICTION_2 &&
        p->rows[i + 1].normal_row == p->rows[i].normal_row) {
      d1 = row_diag(p, &p->rows[i + 1]);
      if (d1 < 0.0)
        return LCP_ERR_NUMERIC;
    }
    if (d1 > 0.0) { /* a cone pair (is_cone_pair) */
      pgs_item *a = &out->items[count], *b = &out->items[count + 1];
      fill_item(a, p, i, d0, omega, dummy_v);
      fill_item(b, p, i + 1, d1, omega, dummy_v);
      double step = omega / pair_lambda_max2(p, i, d0, d1);
      item_set_step(a, step, &p->rows[i]);
      item_set_step(b, step, &p->rows[i + 1]);
      bool fused =
          a->kind == IT_FAST && b->kind == IT_FAST && a->v[0] == b->v[0] && a->v[1] == b->v[1];
      a->kind = b->kind = fused ? IT_PAIR_FAST : IT_PAIR_GENERAL;
      /* the pair's warm start onto the disc (clamp_warm_start) */
      const solver_row *nr = &p->rows[p->rows[i].normal_row];
      double ln = row_diag(p, nr) > 0.0 ? clampd(nr->lambda, nr->lo, nr->hi) : 0.0;
      double bound = p->rows[i].mu * (ln > 0.0 ? ln : 0.0);
      double l1 = p->rows[i].lambda, l2 = p->rows[i + 1].lambda;
      double len = sqrt(l1 * l1 + l2 * l2);
      double f = len > bound ? bound / len : 1.0;
      out->lam[i] = l1 * f;
      out->lam[i + 1] = l2 * f;
      count += 2;
      i += 2;
    } else {
      fill_item(&out->items[count++], p, i, d0, omega, dummy_v);
      out->lam[i] = item_warm(p, i, d0);
      i += 1;
    }
    for (int32_t k = first; k < count; ++k) {
      const pgs_item *it = &out->items[k];
      double x = out->lam[it->row];
      if (x != 0.0)
        item_apply(it, x);
      ops_add(out, OP_ITEMS, k);
    }
  }
  if (st.count > 0 && (rc = unit_run_end(out, &st, used, &run)) != LCP_OK)
    return rc;
  out->count = count;
#if LCP_UNITS
  size_t record_bytes = 0;
  for (int32_t k = 0; k < out->group_count; ++k)
    record_bytes +=
        sizeof(double) * LANES * (size_t)unit_fields(out->groups[k].form, out->groups[k].points);
  if (record_bytes > PREFETCH_BYTES)
    out->sweep_groups = pick_groups_sweep(cone, baseline_only, true);
#endif
  out->dz = NULL;
  if (out->block_count > 0) {
    int32_t largest = 0;
    for (int32_t k = 0; k < out->block_count; ++k)
      largest = out->blocks[k].m > largest ? out->blocks[k].m : largest;
    out->dz = dz_new(largest, scratch);
    if (!out->dz)
      return LCP_ERR_NO_MEMORY;
  }
  return LCP_OK;
}

/* Sets the problem up with the point groups filled four lanes at a time,
 * or, when one of their points turns out degenerate (RUN_REDO), again from
 * the velocity as it was, every contact from its coefficients (row_diag
 * then finds such a row degenerate and keeps its impulse 0). */
static int iter_prepare(const solver_settings *settings, solver_problem *p, arena *scratch,
                        bool use_units, iter_setup *out) {
  if (!p || !use_units || !LCP_UNITS || p->contact_count <= 0 || p->dof_count <= 0 || !p->velocity)
    return iter_prepare_pass(settings, p, scratch, use_units, false, out);
  double *saved = ARENA_NEW(scratch, double, p->dof_count);
  if (!saved)
    return LCP_ERR_NO_MEMORY;
  memcpy(saved, p->velocity, sizeof(double) * (size_t)p->dof_count);
  int rc = iter_prepare_pass(settings, p, scratch, true, true, out);
  if (rc != RUN_REDO)
    return rc;
  memcpy(p->velocity, saved, sizeof(double) * (size_t)p->dof_count);
  return iter_prepare_pass(settings, p, scratch, true, false, out);
}

/* The solution into the rows: the units' from their groups, the items'
 * from lam (degenerate rows were set to 0 by iter_prepare). */
static void iter_finish(solver_problem *p, const iter_setup *s) {
  for (int32_t k = 0; k < s->group_count; ++k) {
    const lane_group *g = &s->groups[k];
    for (int32_t lane = 0; lane < g->lanes_used; ++lane)
      for (int32_t r = 0; r < 3 * g->count[lane]; ++r)
        p->rows[g->row[lane] + r].lambda = g->lam[LANES * r + lane];
  }
  for (int32_t k = 0; k < s->count; ++k)
    p->rows[s->items[k].row].lambda = s->lam[s->items[k].row];
  for (int32_t k = 0; k < s->block_count; ++k)
    for (int32_t r = 0; r < s->blocks[k].m; ++r)
      p->rows[s->blocks[k].first + r].lambda = s->lam[s->blocks[k].first + r];
}

/* Gauss–Seidel over a range of items in row order. Folds into *res the
 * residual, the largest |Δλ_i|·(A_ii + cfm_i), and into *sum their sum,
 * which turns non-finite as soon as any update does (the clamps below would
 * hide a NaN in λ, not in Δλ). */
static void pgs_items(const pgs_item *items, int32_t count, double *lam, double *res_io,
                      double *sum_io) {
  double res = *res_io, acc = *sum_io;
  for (int32_t k = 0; k < count;) {
    const pgs_item *a = &items[k];
    switch (a->kind) {
    case IT_FAST: {
      double *v0 = a->v[0], *v1 = a->v[1];
      double l = lam[a->row];
      double x = item_update(a, lam, dot12(a->J[0], v0, a->J[1], v1));
      double dl = x - l;
      lam[a->row] = x;
      axpy6(v0, a->T[0], dl);
      axpy6(v1, a->T[1], dl);
      double r = fabs(dl) * a->diag;
      res = r > res ? r : res;
      acc += r;
      k += 1;
      break;
    }
    case IT_GENERAL: {
      double l = lam[a->row];
      double x = item_update(a, lam, item_jv(a));
      double dl = x - l;
      lam[a->row] = x;
      item_apply(a, dl);
      double r = fabs(dl) * a->diag;
      res = r > res ? r : res;
      acc += r;
      k += 1;
      break;
    }
    case IT_PAIR_FAST: {
      const pgs_item *b = a + 1;
      double *v0 = a->v[0], *v1 = a->v[1];
      double w1 = dot12(a->J[0], v0, a->J[1], v1);
      double w2 = dot12(b->J[0], v0, b->J[1], v1);
      double l1 = lam[a->row], l2 = lam[b->row], x1, x2;
      pair_update(a, b, lam, w1, w2, &x1, &x2);
      double d1 = x1 - l1, d2 = x2 - l2;
      lam[a->row] = x1;
      lam[b->row] = x2;
      axpy6x2(v0, a->T[0], d1, b->T[0], d2);
      axpy6x2(v1, a->T[1], d1, b->T[1], d2);
      double r1 = fabs(d1) * a->diag, r2 = fabs(d2) * b->diag;
      double r = r1 > r2 ? r1 : r2;
      res = r > res ? r : res;
      acc += r1 + r2;
      k += 2;
      break;
    }
    default: { /* IT_PAIR_GENERAL */
      const pgs_item *b = a + 1;
      double w1 = item_jv(a), w2 = item_jv(b);
      double l1 = lam[a->row], l2 = lam[b->row], x1, x2;
      pair_update(a, b, lam, w1, w2, &x1, &x2);
      double d1 = x1 - l1, d2 = x2 - l2;
      lam[a->row] = x1;
      lam[b->row] = x2;
      item_apply(a, d1);
      item_apply(b, d2);
      double r1 = fabs(d1) * a->diag, r2 = fabs(d2) * b->diag;
      double r = r1 > r2 ? r1 : r2;
      res = r > res ? r : res;
      acc += r1 + r2;
      k += 2;
      break;
    }
    }
  }
  *res_io = res;
  *sum_io = acc;
}

/* One Gauss–Seidel sweep in row order: the ops' items and groups. Returns
 * the residual; *sum as in pgs_items. */
static double pgs_sweep(const iter_setup *s, double *sum) {
  double res = 0.0, acc = 0.0;
  for (int32_t k = 0; k < s->op_count; ++k) {
    const sweep_op *op = &s->ops[k];
    if (op->kind == OP_ITEMS) {
      pgs_items(s->items + op->begin, op->end - op->begin, s->lam, &res, &acc);
      continue;
    }
    if (op->kind == OP_BLOCKS) {
      for (int32_t k = op->begin; k < op->end; ++k)
        block_sweep(&s->blocks[k], s->dz, s->lam, &res, &acc);
      continue;
    }
#if LCP_UNITS
    s->sweep_groups(s->groups + op->begin, op->end - op->begin, &res, &acc);
#endif
  }
  *sum = acc;
  return res;
}

int solver_pgs(const solver_settings *settings, solver_problem *problem, solver_result *result,
               arena *scratch) {
  set_result(result, 0, 0.0);
  if (!settings || !problem || !scratch)
    return LCP_ERR_INVALID_ARGUMENT;
  iter_setup s;
  int rc = iter_prepare(settings, problem, scratch, true, &s);
  if (rc != LCP_OK)
    return rc;
  int32_t it = 0;
  double res = 0.0;
  while (s.op_count > 0 && it < settings->max_iterations) {
    double sum;
    res = pgs_sweep(&s, &sum);
    ++it;
    if (!isfinite(sum)) {
      iter_finish(problem, &s);
      set_result(result, it, res);
      return LCP_ERR_NUMERIC;
    }
    if (res < settings->tolerance)
      break;
  }
  iter_finish(problem, &s);
  set_result(result, it, res);
  return check_finite_output(problem);
}

/* One Jacobi sweep: every row's new λ from the start-of-sweep v and λ
 * (friction bounds from the start-of-sweep λn), then v updated once. */
static double jacobi_sweep(const pgs_item *items, int32_t count, double *lam, double *next,
                           double *sum) {
  for (int32_t k = 0; k < count;) {
    const pgs_item *a = &items[k];
    if (a->kind == IT_PAIR_FAST || a->kind == IT_PAIR_GENERAL) {
      const pgs_item *b = a + 1;
      pair_update(a, b, lam, item_jv(a), item_jv(b), &next[a->row], &next[b->row]);
      k += 2;
    } else {
      next[a->row] = item_update(a, lam, item_jv(a));
      k += 1;
    }
  }
  double res = 0.0, acc = 0.0;
  for (int32_t k = 0; k < count; ++k) {
    const pgs_item *a = &items[k];
    double dl = next[a->row] - lam[a->row];
    lam[a->row] = next[a->row];
    item_apply(a, dl);
    double r = fabs(dl) * a->diag;
    res = r > res ? r : res;
    acc += r;
  }
  *sum = acc;
  return res;
}

int solver_jacobi(const solver_settings *settings, solver_problem *problem, solver_result *result,
                  arena *scratch) {
  set_result(result, 0, 0.0);
  iter_setup s;
  int rc = iter_prepare(settings, problem, scratch, false, &s);
  if (rc != LCP_OK)
    return rc;
  double *next = ARENA_NEW(scratch, double, problem->row_count > 0 ? problem->row_count : 1);
  if (!next)
    return LCP_ERR_NO_MEMORY;
  int32_t it = 0;
  double res = 0.0;
  while (s.count > 0 && it < settings->max_iterations) {
    double sum;
    res = jacobi_sweep(s.items, s.count, s.lam, next, &sum);
    ++it;
    if (!isfinite(sum)) {
      iter_finish(problem, &s);
      set_result(result, it, res);
      return LCP_ERR_NUMERIC;
    }
    if (res < settings->tolerance)
      break;
  }
  iter_finish(problem, &s);
  set_result(result, it, res);
  return check_finite_output(problem);
}

/* ---- Dantzig's principal pivoting for the dense boxed LCP ----
 *
 * Indices are processed one at a time (Baraff's incremental form of
 * Dantzig's method). Every processed index is in one of the sets
 *   F: lo < λ < hi (or touching), w = 0   — "free", in the Cholesky factor
 *   L: λ = lo, w ≥ 0;   U: λ = hi, w ≤ 0;   X: lo = hi = 0, fixed
 * and unprocessed ones have λ = 0. To add index d, λ_d is driven in the
 * direction that takes w_d towards 0 while F keeps w_F = 0 and L, U stay at
 * their bounds:
 *   Δλ_d = s,  Δλ_F = −s A_FF⁻¹ A_Fd,  Δw = A Δλ  (Δw_F = 0),
 *   Δw_d = s (A_dd − A_dF A_FF⁻¹ A_Fd) = s · (Schur complement) > 0·s for A ≻ 0.
 * The step is the largest that keeps everything complementary; the first
 * index to block pivots (F member reaches a bound → L/U; an L/U member's w
 * reaches 0 → F) and the drive continues, until w_d = 0 (d → F) or λ_d
 * reaches its bound (d → L/U). For positive definite A this terminates.
 *
 * A_FF is kept as a Cholesky factor updated in O(|F|²) per pivot (append a
 * row; delete a row by a rank-one update of the trailing block). Within a
 * drive the path is followed incrementally, so that blocking variables land
 * exactly on their bounds; after each drive λ_F is re-solved from the factor
 * with iterative refinement and w recomputed, so rounding does not pile up:
 * the result satisfies w_F = 0 to the backward error of a Cholesky solve
 * (~1e-15 relative on the tests' problems, ~1e-13 on contact problems with
 * redundant points and cfm 1e-9). With such nearly singular A the re-solve
 * can disagree with the path by more than rounding; a few repair rounds
 * then pivot out free variables found outside their bounds and drive again
 * L/U members with a wrong-signed w. A singular principal block (A only
 * semidefinite: redundant constraints without cfm), an unbounded ray or
 * the pivot cap (10n + 100) restarts the solve on A + ε diag(A), ε = 1e-10,
 * then 1e-8 (the result then solves that nearby problem), and only then
 * gives LCP_ERR_NUMERIC. Cost: O(n) drives of O(n·|F|) per pivot, about
 * O(n³) in all. */

#define DZ_RETRY 1 /* internal: singular block, unbounded ray or pivot cap; retry regularised */

enum { DZ_UNSEEN = 0, DZ_FREE = 1, DZ_LOWER = 2, DZ_UPPER = 3, DZ_FIXED = 4 };
enum { DZ_NONE = 0, DZ_D_ZERO, DZ_D_BOUND, DZ_F_BOUND, DZ_W_ZERO };

typedef struct dz_work {
  int32_t cap;    /* largest n */
  double *L;      /* cap×cap, row stride n: lower Cholesky factor of A_FF in F order */
  double *y;      /* [cap] solve buffer */
  double *dlf;    /* [cap] Δλ of F members, in F order */
  double *w;      /* [cap] w of L and U members */
  double *tmp;    /* [cap] */
  int32_t *fidx;  /* [cap] F members in factor order */
  int32_t *order; /* [cap] processing order */
  uint8_t *state; /* [cap] DZ_* */
} dz_work;

static int dz_alloc(dz_work *ws, int32_t n, arena *a) {
  size_t c = n > 0 ? (size_t)n : 1;
  ws->cap = n;
  ws->L = ARENA_NEW(a, double, c *c);
  ws->y = ARENA_NEW(a, double, c);
  ws->dlf = ARENA_NEW(a, double, c);
  ws->w = ARENA_NEW(a, double, c);
  ws->tmp = ARENA_NEW(a, double, c);
  ws->fidx = ARENA_NEW(a, int32_t, c);
  ws->order = ARENA_NEW(a, int32_t, c);
  ws->state = ARENA_NEW(a, uint8_t, c);
  if (!ws->L || !ws->y || !ws->dlf || !ws->w || !ws->tmp || !ws->fidx || !ws->order || !ws->state)
    return LCP_ERR_NO_MEMORY;
  return LCP_OK;
}

static struct dz_work *dz_new(int32_t n, arena *a) {
  dz_work *ws = ARENA_NEW(a, dz_work, 1);
  return ws && dz_alloc(ws, n, a) == LCP_OK ? ws : NULL;
}

/* (A + reg·diag(A)) row i · x */
static double dz_row_dot(const double *A, int32_t n, int32_t i, const double *x, double reg) {
  const double *a = A + (size_t)i * (size_t)n;
  double s = 0.0;
  for (int32_t j = 0; j < n; ++j)
    s += a[j] * x[j];
  return s + reg * a[i] * x[i];
}

/* y ← A_FF⁻¹ y with A_FF = L Lᵀ (m×m, row stride n). */
static void chol_solve(const double *L, int32_t n, int32_t m, double *y) {
  for (int32_t p = 0; p < m; ++p) {
    const double *row = L + (size_t)p * (size_t)n;
    double s = y[p];
    for (int32_t q = 0; q < p; ++q)
      s -= row[q] * y[q];
    y[p] = s / row[p];
  }
  for (int32_t p = m - 1; p >= 0; --p) {
    double s = y[p];
    for (int32_t q = p + 1; q < m; ++q)
      s -= L[(size_t)q * (size_t)n + p] * y[q];
    y[p] = s / L[(size_t)p * (size_t)n + p];
  }
}

/* Appends index j to F: the new factor row l solves L l = A_Fj, and the new
 * pivot is the Schur complement A_jj − l·l. DZ_RETRY when it is not clearly
 * positive (A_{F∪j} singular). */
static int chol_add(dz_work *ws, const double *A, int32_t n, int32_t *m, int32_t j, double reg) {
  double *L = ws->L;
  double *row = L + (size_t)(*m) * (size_t)n;
  double ss = 0.0;
  for (int32_t p = 0; p < *m; ++p) {
    const double *lp = L + (size_t)p * (size_t)n;
    double s = A[(size_t)ws->fidx[p] * (size_t)n + j];
    for (int32_t q = 0; q < p; ++q)
      s -= lp[q] * row[q];
    row[p] = s / lp[p];
    ss += row[p] * row[p];
  }
  double ajj = A[(size_t)j * (size_t)n + j] * (1.0 + reg);
  double piv = ajj - ss;
  if (!(piv > 1e-12 * ajj))
    return DZ_RETRY;
  row[*m] = sqrt(piv);
  ws->fidx[*m] = j;
  ++*m;
  return LCP_OK;
}

/* Removes the F member at factor position k. Dropping row k of L leaves the
 * rows below with an extra column k, x = L[k+1:, k]; their block satisfies
 * A' = L22 L22ᵀ + x xᵀ, so L22 gets the standard rank-one Cholesky update
 * (rotations that fold x in), and then rows and columns shift up by one. */
static void chol_remove(dz_work *ws, int32_t n, int32_t *m, int32_t k) {
  double *L = ws->L, *x = ws->tmp;
  int32_t mm = *m;
  for (int32_t p = k + 1; p < mm; ++p)
    x[p] = L[(size_t)p * (size_t)n + k];
  for (int32_t p = k + 1; p < mm; ++p) {
    double *lpp = &L[(size_t)p * (size_t)n + p];
    double a = *lpp, b = x[p];
    double r = sqrt(a * a + b * b);
    double c = r / a, s = b / a;
    *lpp = r;
    for (int32_t q = p + 1; q < mm; ++q) {
      double *lqp = &L[(size_t)q * (size_t)n + p];
      *lqp = (*lqp + s * x[q]) / c;
      x[q] = c * x[q] - s * *lqp;
    }
  }
  for (int32_t p = k + 1; p < mm; ++p) {
    double *dst = L + (size_t)(p - 1) * (size_t)n;
    const double *src = L + (size_t)p * (size_t)n;
    for (int32_t q = 0; q < k; ++q)
      dst[q] = src[q];
    for (int32_t q = k + 1; q <= p; ++q)
      dst[q - 1] = src[q];
    ws->fidx[p - 1] = ws->fidx[p];
  }
  *m = mm - 1;
}

/* λ_F from the factor for the current λ of everything outside F, i.e.
 * A_FF λ_F = −b_F − A_F,rest λ_rest, then w of the L and U members exactly.
 * The factor has been through many rank-one updates, and A_FF can be close
 * to singular (redundant contacts with a small cfm), so the solve is
 * followed by iterative refinement on the exact residual w_F = A_F·λ + b_F
 * (it converges while cond(A_FF)·ε < 1: cfm 1e-9 gives 1e10·1e-16). */
static void dz_refresh(dz_work *ws, int32_t n, int32_t m, const double *A, const double *b,
                       double *x, double reg) {
  for (int32_t p = 0; p < m; ++p) {
    int32_t f = ws->fidx[p];
    const double *a = A + (size_t)f * (size_t)n;
    double s = -b[f];
    for (int32_t k = 0; k < n; ++k)
      if (ws->state[k] != DZ_FREE && x[k] != 0.0)
        s -= a[k] * x[k];
    ws->y[p] = s;
  }
  chol_solve(ws->L, n, m, ws->y);
  for (int32_t p = 0; p < m; ++p)
    x[ws->fidx[p]] = ws->y[p];
  for (int refine = 0; refine < 2; ++refine) {
    for (int32_t p = 0; p < m; ++p)
      ws->y[p] = -(dz_row_dot(A, n, ws->fidx[p], x, reg) + b[ws->fidx[p]]);
    chol_solve(ws->L, n, m, ws->y);
    for (int32_t p = 0; p < m; ++p)
      x[ws->fidx[p]] += ws->y[p];
  }
  for (int32_t j = 0; j < n; ++j)
    if (ws->state[j] == DZ_LOWER || ws->state[j] == DZ_UPPER)
      ws->w[j] = dz_row_dot(A, n, j, x, reg) + b[j];
}

/* Rebuilds the factor of A_FF from scratch (same F order). */
static int dz_refactor(dz_work *ws, int32_t n, int32_t m, const double *A, double reg) {
  int32_t k = 0;
  for (int32_t p = 0; p < m; ++p)
    if (chol_add(ws, A, n, &k, ws->fidx[p], reg) != LCP_OK)
      return DZ_RETRY;
  return LCP_OK;
}

/* Relative size of rounding noise in w: |w_d| below this fraction of
 * |b_d| + Σ_k |A_dk λ_k| (the terms it is summed from) counts as zero. */
#define DZ_W_ZERO_RATIO 1e-13

/* The problem and the pivoting state of one solve. */
typedef struct dz_problem {
  int32_t n;
  const double *A, *b, *lo, *hi;
  double *x;
  double reg;
  double amax;    /* largest (A + reg diag A)_ii */
  int32_t m;      /* |F| */
  int64_t pivots; /* so far */
  int64_t cap;    /* pivot budget of the whole solve */
} dz_problem;

/* w_d = (Aλ + b)_d at the current λ, and the size of the terms it sums. */
static double dz_w(const dz_problem *q, int32_t d, double *terms) {
  const double *ad = q->A + (size_t)d * (size_t)q->n;
  double w = q->b[d], t = fabs(q->b[d]);
  for (int32_t k = 0; k < q->n; ++k) {
    double v = ad[k] * q->x[k];
    w += v;
    t += fabs(v);
  }
  w += q->reg * ad[d] * q->x[d];
  *terms = t;
  return w;
}

/* Brings index d (not in F, λ_d anywhere in [lo_d, hi_d]) into a
 * complementary state with everything processed so far kept complementary:
 * either it already is, or λ_d is driven in the direction s that takes w_d
 * towards 0 (see above). s is kept for the whole drive: w_d moves
 * monotonically to 0, so a sign change of w_d can only be rounding and must
 * not turn the drive around. The path is followed incrementally, and a
 * blocking variable lands exactly on its bound (or its w exactly on 0),
 * which keeps the ratio tests consistent. */
static int dz_drive(dz_work *ws, dz_problem *q, int32_t d) {
  const int32_t n = q->n;
  const double *A = q->A, *lo = q->lo, *hi = q->hi;
  double *x = q->x;
  const double *ad = A + (size_t)d * (size_t)n;
  const double add = ad[d] * (1.0 + q->reg);
  double terms, wd = dz_w(q, d, &terms);
  const double wtol = DZ_W_ZERO_RATIO * terms;
  /* Already complementary? */
  if (x[d] <= lo[d] && wd >= -wtol) {
    x[d] = lo[d];
    ws->state[d] = DZ_LOWER;
    ws->w[d] = wd;
    return LCP_OK;
  }
  if (x[d] >= hi[d] && wd <= wtol) {
    x[d] = hi[d];
    ws->state[d] = DZ_UPPER;
    ws->w[d] = wd;
    return LCP_OK;
  }
  if (fabs(wd) <= wtol) { /* w_d = 0 with λ_d inside: free as it stands */
    if (chol_add(ws, A, n, &q->m, d, q->reg) != LCP_OK)
      return DZ_RETRY;
    ws->state[d] = DZ_FREE;
    return LCP_OK;
  }
  ws->state[d] = DZ_UNSEEN; /* neither F nor L/U while it moves */
  const double s = wd > 0.0 ? -1.0 : 1.0;
  for (;;) {
    const int32_t m = q->m;
    /* Direction: Δλ_F = −s A_FF⁻¹ A_Fd. */
    for (int32_t p = 0; p < m; ++p)
      ws->y[p] = A[(size_t)ws->fidx[p] * (size_t)n + d];
    chol_solve(ws->L, n, m, ws->y);
    double size = 1.0, dwd = s * add;
    for (int32_t p = 0; p < m; ++p) {
      ws->dlf[p] = -s * ws->y[p];
      size += fabs(ws->dlf[p]);
      dwd += ad[ws->fidx[p]] * ws->dlf[p];
    }
    /* Δw below this is rounding of a zero (a dependent row of a singular A). */
    const double eps_dw = 1e-13 * q->amax * size;

    double best = INFINITY;
    int who = DZ_NONE;
    int32_t which = -1;
    if (s * dwd > 1e-11 * add) {
      double t = -wd / dwd;
      best = t > 0.0 ? t : 0.0;
      who = DZ_D_ZERO;
    }
    const double bd = s > 0.0 ? hi[d] : lo[d];
    if (isfinite(bd)) {
      double t = (bd - x[d]) * s;
      t = t > 0.0 ? t : 0.0;
      if (t < best) {
        best = t;
        who = DZ_D_BOUND;
      }
    }
    for (int32_t p = 0; p < m; ++p) {
      int32_t j = ws->fidx[p];
      double dl = ws->dlf[p], t;
      if (dl > 0.0 && isfinite(hi[j]))
        t = (hi[j] - x[j]) / dl;
      else if (dl < 0.0 && isfinite(lo[j]))
        t = (lo[j] - x[j]) / dl;
      else
        continue;
      t = t > 0.0 ? t : 0.0;
      if (t < best) {
        best = t;
        who = DZ_F_BOUND;
        which = p;
      }
    }
    for (int32_t j = 0; j < n; ++j) {
      uint8_t st = ws->state[j];
      if (st != DZ_LOWER && st != DZ_UPPER)
        continue;
      const double *aj = A + (size_t)j * (size_t)n;
      double dw = s * aj[d];
      for (int32_t p = 0; p < m; ++p)
        dw += aj[ws->fidx[p]] * ws->dlf[p];
      ws->tmp[j] = dw;
      if (!(st == DZ_LOWER ? dw < -eps_dw : dw > eps_dw))
        continue;
      double t = -ws->w[j] / dw;
      t = t > 0.0 ? t : 0.0;
      if (t < best) {
        best = t;
        who = DZ_W_ZERO;
        which = j;
      }
    }
    if (who == DZ_NONE || ++q->pivots > q->cap)
      return DZ_RETRY; /* unbounded ray (no solution for this A) or cycling */

    /* Step along the path. */
    x[d] += best * s;
    wd += best * dwd;
    for (int32_t p = 0; p < m; ++p)
      x[ws->fidx[p]] += best * ws->dlf[p];
    for (int32_t j = 0; j < n; ++j)
      if (ws->state[j] == DZ_LOWER || ws->state[j] == DZ_UPPER)
        ws->w[j] += best * ws->tmp[j];

    switch (who) {
    case DZ_D_ZERO:
      if (chol_add(ws, A, n, &q->m, d, q->reg) != LCP_OK)
        return DZ_RETRY;
      ws->state[d] = DZ_FREE;
      return LCP_OK;
    case DZ_D_BOUND:
      x[d] = bd;
      ws->state[d] = s > 0.0 ? DZ_UPPER : DZ_LOWER;
      ws->w[d] = wd;
      return LCP_OK;
    case DZ_F_BOUND: {
      int32_t j = ws->fidx[which];
      bool up = ws->dlf[which] > 0.0;
      x[j] = up ? hi[j] : lo[j];
      ws->state[j] = up ? DZ_UPPER : DZ_LOWER;
      ws->w[j] = 0.0; /* it was free: w_j = 0 on the path */
      chol_remove(ws, n, &q->m, which);
      break;
    }
    default: /* DZ_W_ZERO */
      if (chol_add(ws, A, n, &q->m, which, q->reg) != LCP_OK)
        return DZ_RETRY;
      ws->state[which] = DZ_FREE;
      break;
    }
  }
}

/* Rounds of repair after the main pass, for nearly singular A where the
 * re-solved λ_F can disagree with the path by more than rounding. */
#define DZ_CLEANUP_ROUNDS 3

static int dz_solve(dz_work *ws, int32_t n, const double *A, const double *b, const double *lo,
                    const double *hi, double *x, double reg) {
  dz_problem q = {n, A, b, lo, hi, x, reg, 0.0, 0, 0, 10 * (int64_t)n + 100};
  int32_t no = 0;
  for (int32_t i = 0; i < n; ++i) {
    x[i] = 0.0;
    ws->state[i] = lo[i] == hi[i] ? DZ_FIXED : DZ_UNSEEN;
    double aii = A[(size_t)i * (size_t)n + i] * (1.0 + reg);
    q.amax = aii > q.amax ? aii : q.amax;
  }
  /* Unbounded rows first: they always end in F, and the later drives then
   * see them as part of the free block from the start. */
  for (int32_t i = 0; i < n; ++i)
    if (isinf(lo[i]) && isinf(hi[i]))
      ws->order[no++] = i;
  for (int32_t i = 0; i < n; ++i)
    if (!(isinf(lo[i]) && isinf(hi[i])))
      ws->order[no++] = i;

  for (int32_t oi = 0; oi < n; ++oi) {
    int32_t d = ws->order[oi];
    if (ws->state[d] == DZ_FIXED)
      continue;
    int rc = dz_drive(ws, &q, d);
    if (rc != LCP_OK)
      return rc;
    /* Re-solve λ_F from the factor (w_F = 0 to one solve's backward error)
     * and recompute w of L and U, so rounding does not pile up over drives. */
    dz_refresh(ws, n, q.m, A, b, x, reg);
  }

  /* Repair what the exact re-solve of λ_F exposes when A is nearly singular
   * (the path and the solve then disagree by more than rounding): free
   * variables outside their bounds leave F at the bound, and L/U members
   * whose w has the wrong sign beyond rounding are driven again; each round
   * starts from a fresh factor (the updated one has been through every
   * pivot). For a well-conditioned A nothing needs repair. */
  for (int round = 0; round < DZ_CLEANUP_ROUNDS; ++round) {
    bool repaired = false;
    for (int32_t p = q.m - 1; p >= 0; --p) {
      int32_t j = ws->fidx[p];
      if (x[j] < lo[j] || x[j] > hi[j]) {
        bool up = x[j] > hi[j];
        x[j] = up ? hi[j] : lo[j];
        ws->state[j] = up ? DZ_UPPER : DZ_LOWER;
        chol_remove(ws, n, &q.m, p);
        repaired = true;
      }
    }
    if (repaired)
      dz_refresh(ws, n, q.m, A, b, x, reg);
    for (int32_t j = 0; j < n; ++j) {
      uint8_t st = ws->state[j];
      if (st != DZ_LOWER && st != DZ_UPPER)
        continue;
      double terms, w = dz_w(&q, j, &terms);
      if (st == DZ_LOWER ? w >= -DZ_W_ZERO_RATIO * terms : w <= DZ_W_ZERO_RATIO * terms)
        continue;
      int rc = dz_drive(ws, &q, j);
      if (rc != LCP_OK)
        return rc;
      dz_refresh(ws, n, q.m, A, b, x, reg);
      repaired = true;
    }
    if (!repaired)
      break;
    if (dz_refactor(ws, n, q.m, A, reg) != LCP_OK)
      return DZ_RETRY;
    dz_refresh(ws, n, q.m, A, b, x, reg);
  }
  for (int32_t i = 0; i < n; ++i) {
    x[i] = clampd(x[i], lo[i], hi[i]);
    if (!isfinite(x[i]))
      return LCP_ERR_NUMERIC;
  }
  return LCP_OK;
}

/* Exact solve of A (pre-checked), regularised only when the plain one fails. */
static int dz_solve_robust(dz_work *ws, int32_t n, const double *A, const double *b,
                           const double *lo, const double *hi, double *x) {
  static const double regs[] = {0.0, 1e-10, 1e-8};
  for (size_t r = 0; r < sizeof regs / sizeof regs[0]; ++r) {
    int rc = dz_solve(ws, n, A, b, lo, hi, x, regs[r]);
    if (rc != DZ_RETRY)
      return rc;
  }
  for (int32_t i = 0; i < n; ++i)
    x[i] = 0.0;
  return LCP_ERR_NUMERIC;
}

int lcp_dense_dantzig(int32_t n, const double *A, const double *b, const double *lo,
                      const double *hi, double *lambda, arena *scratch) {
  if (n < 0 || !scratch || (n > 0 && (!A || !b || !lo || !hi || !lambda)))
    return LCP_ERR_INVALID_ARGUMENT;
  if (n == 0)
    return LCP_OK;
  for (int32_t i = 0; i < n; ++i) {
    if (!isfinite(b[i]) || isnan(lo[i]) || isnan(hi[i]))
      return LCP_ERR_NUMERIC;
    for (int32_t j = 0; j < n; ++j)
      if (!isfinite(A[(size_t)i * (size_t)n + j]))
        return LCP_ERR_NUMERIC;
  }
  for (int32_t i = 0; i < n; ++i)
    if (lo[i] > 0.0 || hi[i] < 0.0 || !(A[(size_t)i * (size_t)n + i] > 0.0))
      return LCP_ERR_INVALID_ARGUMENT;
  dz_work ws;
  if (dz_alloc(&ws, n, scratch) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  return dz_solve_robust(&ws, n, A, b, lo, hi, lambda);
}

/* ---- the direct solver ----
 *
 * Dense A_kl = ½(J_k·M⁻¹J_lᵀ + J_l·M⁻¹J_kᵀ) + δ_kl cfm_k over the
 * non-degenerate rows (symmetrised: the two products agree in exact
 * arithmetic, and the factorisation needs exact symmetry), b = J u_free −
 * target. Friction bounds depend on λn, so Dantzig runs inside a fixed-point
 * loop on them (ODE's findex idea, done as an outer loop), starting from the
 * warm-started impulses, until the solution stops changing (≤ 50 solves).
 * The change is measured on w, max|A Δλ| (m/s; reported as the residual,
 * and the loop count as iterations): with redundant contacts λ is fixed
 * only up to directions that A barely sees, and its noise there must not
 * keep the loop going. The bounds are:
 *   box model: |λt_k| ≤ μ λn(previous solve);
 *   cone model: |λt_k| ≤ μ λn |c_k| with c a unit vector per contact, i.e. a
 *     box inscribed in the disc, re-aimed after each solve at
 *     g = λt − wt/λmax (c = |g|/‖g‖, λmax of the pair's 2×2 block as in PGS).
 *     Its fixed points are exactly the Coulomb cone's solutions: sticking
 *     (wt = 0, c ∥ λt, inside the disc) or sliding (both rows at their
 *     bounds and wt ∥ λt, i.e. λt = −μλn wt/‖wt‖ on the rim). A state with
 *     one tangent saturated and the other not is never a fixed point.
 *     Convergence is linear and not guaranteed (a body slipping in
 *     different directions at several points may need all 50 solves).
 * Rows whose fixed bounds exclude 0 are shifted (λ = λ0 + x) for Dantzig,
 * which needs lo ≤ 0 ≤ hi. Degenerate rows (A_ii + cfm = 0) are left out
 * with λ = 0, as in PGS. */

#define DIRECT_MAX_LOOPS 50

int solver_direct(const solver_settings *settings, solver_problem *problem, solver_result *result,
                  arena *scratch, int32_t max_rows) {
  set_result(result, 0, 0.0);
  if (!settings || !problem || !scratch)
    return LCP_ERR_INVALID_ARGUMENT;
  if (problem->row_count > max_rows)
    return LCP_ERR_STATE;
  int rc = check_problem(problem);
  if (rc == LCP_OK)
    contacts_expand_all(problem);
  if (rc != LCP_OK)
    return rc;
  const int32_t n = problem->row_count;
  if (n == 0)
    return LCP_OK;
  const solver_row *rows = problem->rows;
  bool cone = settings->friction_model == LCP_FRICTION_CONE;

  double *diag = ARENA_NEW(scratch, double, n);
  double *warm = ARENA_NEW(scratch, double, n);
  int32_t *act = ARENA_NEW(scratch, int32_t, n); /* active index → row */
  int32_t *pos = ARENA_NEW(scratch, int32_t, n); /* row → active index, −1 if degenerate */
  if (!diag || !warm || !act || !pos)
    return LCP_ERR_NO_MEMORY;
  rc = compute_diagonal(problem, diag);
  if (rc != LCP_OK)
    return rc;
  clamp_warm_start(problem, diag, cone, warm);

  int32_t m = 0;
  for (int32_t i = 0; i < n; ++i) {
    pos[i] = diag[i] > 0.0 ? m : -1;
    if (diag[i] > 0.0)
      act[m++] = i;
  }
  size_t ms = m > 0 ? (size_t)m : 1;
  double *A = ARENA_NEW(scratch, double, ms *ms);
  double *b = ARENA_NEW(scratch, double, ms);
  double *bs = ARENA_NEW(scratch, double, ms); /* b + A λ0 */
  double *lo = ARENA_NEW(scratch, double, ms);
  double *hi = ARENA_NEW(scratch, double, ms);
  double *x0 = ARENA_NEW(scratch, double, ms);
  double *x = ARENA_NEW(scratch, double, ms);
  double *lam = ARENA_NEW(scratch, double, ms);
  double *prev = ARENA_NEW(scratch, double, ms);
  double *cdir = ARENA_NEW(scratch, double, ms);   /* |c_k| of cone pair rows */
  double *alpha = ARENA_NEW(scratch, double, ms);  /* 1/λmax of cone pair rows */
  int32_t *pair = ARENA_NEW(scratch, int32_t, ms); /* cone: partner active index, else −1 */
  dz_work ws;
  if (!A || !b || !bs || !lo || !hi || !x0 || !x || !lam || !prev || !cdir || !alpha || !pair ||
      dz_alloc(&ws, m, scratch) != LCP_OK)
    return LCP_ERR_NO_MEMORY;

  bool has_friction = false;
  for (int32_t k = 0; k < m; ++k) {
    const solver_row *rk = &rows[act[k]];
    for (int32_t l = 0; l <= k; ++l) {
      const solver_row *rl = &rows[act[l]];
      double a = 0.5 * (row_cross(problem, rk, rl) + row_cross(problem, rl, rk));
      A[(size_t)k * ms + (size_t)l] = a;
      A[(size_t)l * ms + (size_t)k] = a;
    }
    A[(size_t)k * ms + (size_t)k] = diag[act[k]];
    b[k] = row_velocity(problem, rk, problem->velocity);
    prev[k] = warm[act[k]];
    pair[k] = -1;
    cdir[k] = 1.0;
    alpha[k] = 0.0;
    has_friction |= is_friction(rk->kind);
  }
  if (cone)
    for (int32_t k = 0; k + 1 < m; ++k) {
      int32_t i = act[k];
      if (act[k + 1] != i + 1 || !is_cone_pair(problem, diag, i))
        continue;
      pair[k] = k + 1;
      pair[k + 1] = k;
      alpha[k] = alpha[k + 1] = 1.0 / pair_lambda_max(problem, diag, i);
      double l1 = warm[i], l2 = warm[i + 1], len = hypot(l1, l2);
      cdir[k] = len > 0.0 ? fabs(l1) / len : sqrt(0.5);
      cdir[k + 1] = len > 0.0 ? fabs(l2) / len : sqrt(0.5);
      ++k;
    }

  int32_t loops = 0;
  double change = 0.0;
  for (;;) {
    bool shifted = false;
    for (int32_t k = 0; k < m; ++k) {
      const solver_row *rk = &rows[act[k]];
      double l, h;
      if (is_friction(rk->kind)) {
        int32_t nk = pos[rk->normal_row];
        double ln = nk >= 0 ? prev[nk] : 0.0;
        double r = rk->mu * (ln > 0.0 ? ln : 0.0) * cdir[k];
        l = -r;
        h = r;
      } else {
        l = rk->lo;
        h = rk->hi;
      }
      x0[k] = clampd(0.0, l, h);
      shifted |= x0[k] != 0.0;
      lo[k] = l - x0[k];
      hi[k] = h - x0[k];
    }
    for (int32_t k = 0; k < m; ++k)
      bs[k] = shifted ? b[k] + dz_row_dot(A, m, k, x0, 0.0) : b[k];
    rc = dz_solve_robust(&ws, m, A, bs, lo, hi, x);
    ++loops;
    if (rc != LCP_OK) {
      set_result(result, loops, change);
      return rc;
    }
    /* The change of this solve, measured as the change of w = Aλ + b
     * (m/s, the units of the PGS residual): with redundant contacts λ is
     * fixed only up to directions A barely sees (cfm), and its noise there
     * must not keep the loop going. */
    for (int32_t k = 0; k < m; ++k) {
      lam[k] = x[k] + x0[k];
      x[k] = lam[k] - prev[k];
    }
    change = 0.0;
    double scale = 0.0;
    for (int32_t k = 0; k < m; ++k) {
      double dw = fabs(dz_row_dot(A, m, k, x, 0.0));
      change = dw > change ? dw : change;
      double sk = fabs(b[k]) + fabs(dz_row_dot(A, m, k, lam, 0.0));
      scale = sk > scale ? sk : scale;
    }
    if (cone)
      for (int32_t k = 0; k < m; ++k) {
        if (pair[k] != k + 1)
          continue;
        double w1 = dz_row_dot(A, m, k, lam, 0.0) + b[k];
        double w2 = dz_row_dot(A, m, k + 1, lam, 0.0) + b[k + 1];
        double g1 = lam[k] - alpha[k] * w1, g2 = lam[k + 1] - alpha[k] * w2;
        double len = hypot(g1, g2);
        if (len > 0.0 && isfinite(len)) {
          double c1 = fabs(g1) / len, c2 = fabs(g2) / len;
          /* A box only 1e-6 of μλn wide is noise for the nearly singular A
           * of redundant contacts and makes Dantzig pivot in circles:
           * align c with the other tangent instead (≤ 1e-6 rad off). */
          if (c1 < 1e-6)
            c1 = 0.0, c2 = 1.0;
          else if (c2 < 1e-6)
            c1 = 1.0, c2 = 0.0;
          cdir[k] = c1;
          cdir[k + 1] = c2;
        }
      }
    memcpy(prev, lam, sizeof(double) * (size_t)m);
    if (!has_friction || loops >= DIRECT_MAX_LOOPS || change <= settings->tolerance ||
        change <= 1e-12 * scale)
      break;
  }

  /* The friction impulses obey the bounds of the λn they were solved with
   * (the previous solve's); put them inside the bounds of the final λn, so
   * that the returned λ is feasible even when the loop stopped at its cap.
   * After convergence this moves them by the noise of λn only. */
  for (int32_t k = 0; k < m; ++k) {
    const solver_row *rk = &rows[act[k]];
    if (!is_friction(rk->kind))
      continue;
    int32_t nk = pos[rk->normal_row];
    double ln = nk >= 0 ? lam[nk] : 0.0;
    double r = rk->mu * (ln > 0.0 ? ln : 0.0);
    if (pair[k] == k + 1) {
      double len = hypot(lam[k], lam[k + 1]);
      if (len > r) {
        lam[k] *= r / len;
        lam[k + 1] *= r / len;
      }
      ++k;
    } else {
      lam[k] = clampd(lam[k], -r, r);
    }
  }
  for (int32_t i = 0; i < n; ++i)
    problem->rows[i].lambda = pos[i] >= 0 ? lam[pos[i]] : 0.0;
  for (int32_t i = 0; i < n; ++i)
    if (problem->rows[i].lambda != 0.0)
      row_apply(problem, &rows[i], problem->velocity, problem->rows[i].lambda);
  set_result(result, loops, has_friction ? change : 0.0);
  return check_finite_output(problem);
}
