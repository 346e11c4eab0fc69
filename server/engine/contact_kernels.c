/* SPDX-License-Identifier: Apache-2.0 */
/* Contact units: which rows make one, their records, and the 4-lane
 * kernels that set them up and sweep them (contact_kernels.h). The vectors
 * are simd.h's; the kernels are compiled twice, for the baseline and for
 * AVX2, and picked at run time (lcp__contact_pick_sweep): that is the one place
 * of the dispatch.
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
 *   units (which units share a group: solver_pgs.c);
 * - a group's data is one record, field by field, each field holding its
 *   value for the four lanes (LANES doubles), so that one load gives an
 *   operand. A group's units all have the same number of points. Empty
 *   lanes have all fields zero and velocity pointing at zeros: their
 *   updates are exactly 0 + 0.
 *
 * Rows, steps, clamps and the cone projection are those of the items
 * (pgs_item); only rounding differs. */
#include "contact_kernels.h"

#include "lcp_math.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* ---- records ---- */

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
 * solver_contact). They are the contacts the step writes
 * (lcp__contact_point_unit_placeable):
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
/* row-major 3×3 index → symmetric storage index */
static const int SYM[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5};

int32_t lcp__contact_unit_fields(int32_t form, int32_t points) {
  /* point units need no couplings: their sweep takes the points in turn */
  return form == FORM_POINTS ? H_SIZE + Q_SIZE * points
                             : U_SIZE + P_SIZE * points + (points == 2 ? C_SIZE : 0);
}

/* ---- which rows make a unit ---- */

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

bool lcp__contact_same_sides(const side_layout *a, const side_layout *b) {
  return a->sides == b->sides && a->dof[0] == b->dof[0] && a->dof[1] == b->dof[1];
}

/* lcp__solver_row_diag for a row whose present sides are 6 wide and apart (l):
 * the same A_ii + cfm_i, 0 or −1, summed in pairs of lanes. */
static inline double row_diag6(const solver_problem *p, const solver_row *r, const side_layout *l) {
  lcp_d2 sum = d2_splat(0.0), mag = d2_splat(0.0);
  for (int32_t s = 0; s < l->sides; ++s) {
    const double *j = p->J + l->coef[s], *t = p->MinvJt + l->coef[s];
    for (int k = 0; k < 6; k += 2) {
      lcp_d2 x = d2_mul(d2_load(j + k), d2_load(t + k));
      sum = d2_add(sum, x);
      mag = d2_add(mag, d2_abs(x));
    }
  }
  double a = d2_sum(sum), scale = d2_sum(mag);
  if (!isfinite(a) || !isfinite(scale))
    return -1.0;
  if (!(a > DEGENERATE_RATIO * scale))
    a = 0.0;
  double d = a + r->cfm;
  return d > 0.0 ? d : 0.0;
}

bool lcp__contact_unit_point_at(const solver_problem *p, const uint8_t *refs, int32_t i,
                                side_layout l[3], double diag[3]) {
  if (i + 2 >= p->row_count)
    return false;
  const solver_row *r = &p->rows[i];
  if (is_friction(r[0].kind) || r[1].kind != ROW_FRICTION_1 || r[2].kind != ROW_FRICTION_2 ||
      r[1].normal_row != i || r[2].normal_row != i || refs[i] != 2)
    return false;
  for (int m = 0; m < 3; ++m)
    if (!row_layout(&r[m], &l[m]))
      return false;
  if (!lcp__contact_same_sides(&l[0], &l[1]) || !lcp__contact_same_sides(&l[0], &l[2]))
    return false;
  for (int m = 0; m < 3; ++m)
    diag[m] = row_diag6(p, &r[m], &l[m]);
  /* a non-finite A_ii (−1) is left to the item path, which reports it */
  return diag[0] > 0.0 && diag[1] > 0.0 && diag[2] > 0.0;
}

bool lcp__contact_same_linear(const solver_problem *p, const side_layout l0[3],
                              const side_layout l[3]) {
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

void lcp__contact_unit_fill(const solver_problem *p, const double *diag, const double *lam,
                            double omega, bool cone, int32_t i0, int32_t points,
                            const side_layout (*l)[3], lane_group *g, double *rec, int32_t k,
                            double *dummy_v) {
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
      /* lcp__solver_pair_lambda_max */
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

/* (Whether its A_kk are usable is found when its group is filled.) */
bool lcp__contact_point_unit_placeable(const solver_problem *p, const uint8_t *refs,
                                       const solver_contact *c) {
  const solver_row *r = &p->rows[c->row];
  return refs[c->row] == 2 && !(c->dof[0] < 0 && c->dof[1] < 0) && c->dof[0] != c->dof[1] &&
         r[0].lo == 0.0 && r[0].hi == INFINITY && r[1].cfm == r[0].cfm && r[2].cfm == r[0].cfm &&
         r[1].mu == r[2].mu && r[1].target == 0.0 && r[2].target == 0.0;
}

void lcp__contact_unit_warm(const solver_row *r, bool cone, double *lam) {
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

/* ---- the sweeps ---- */

/* gather: V[s][c] holds component c of side s's velocity for each lane of
 * g (a 4×2 transpose per two components) */
static SIMD_INLINE void group_gather(const lane_group *g, lcp_d4 V[2][6]) {
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 6; c += 2)
      d4_load_pairs(g->v[s][0] + c, g->v[s][1] + c, g->v[s][2] + c, g->v[s][3] + c, &V[s][c],
                    &V[s][c + 1]);
}

/* scatter: the transpose back */
static SIMD_INLINE void group_scatter(const lane_group *g, lcp_d4 V[2][6]) {
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 6; c += 2)
      d4_store_pairs(g->v[s][0] + c, g->v[s][1] + c, g->v[s][2] + c, g->v[s][3] + c, V[s][c],
                     V[s][c + 1]);
}

/* The rows of a coefficient unit's K points in order (the projected update
 * of pgs_item), from each row's unclamped update y = keep·λ + bias − step·J·v
 * at the unit's start: clamps, then the couplings into the later rows.
 * Stores λ, leaves Δλ in dl and folds the residual, the largest
 * |Δλ_i|·(A_ii + cfm_i), into res and the sum (for finiteness) into acc.
 * R[p]: point p's row constants (R_*); C: the 2-point couplings. */
static SIMD_INLINE void unit_rows(const double *const R[UNIT_MAX_POINTS], const double *C,
                                  double *lam, lcp_d4 y[UNIT_MAX_POINTS][3],
                                  const lcp_d4 l[UNIT_MAX_POINTS][3], lcp_d4 dl[UNIT_MAX_POINTS][3],
                                  lcp_d4 *res_io, lcp_d4 *acc_io, const bool cone, const int K) {
#define RF(p, f) d4_load(R[p] + LANES * (f))
  const lcp_d4 zero = d4_splat(0.0), one = d4_splat(1.0);
#pragma GCC unroll 2
  for (int p = 0; p < K; ++p) {
    lcp_d4 x = d4_clamp(y[p][0], RF(p, R_LO), RF(p, R_HI));
    dl[p][0] = d4_sub(x, l[p][0]);
    lcp_d4 ya = d4_msub(y[p][1], RF(p, R_C_NA), dl[p][0]);
    lcp_d4 yb = d4_msub(y[p][2], RF(p, R_C_NB), dl[p][0]);
    lcp_d4 npos = d4_max(x, zero); /* a negative (or NaN) λn bounds friction by 0 */
    lcp_d4 xa, xb;
    if (cone) {
      /* both tangents from the same v with the common step, then onto the
       * disc of radius μλn: scaled by min(1, r/‖y‖), which is 1 inside the
       * disc and for ‖y‖ = 0 (pair_update) */
      lcp_d4 radius = d4_mul(RF(p, R_MU), npos);
      lcp_d4 f = d4_min(d4_div(radius, d4_sqrt(d4_add(d4_mul(ya, ya), d4_mul(yb, yb)))), one);
      xa = d4_mul(ya, f);
      xb = d4_mul(yb, f);
    } else {
      /* box: the two friction rows one after the other, each to ±μλn */
      lcp_d4 bound = d4_mul(RF(p, R_MU), npos);
      xa = d4_clamp(ya, d4_neg(bound), bound);
      yb = d4_msub(yb, RF(p, R_C_AB), d4_sub(xa, l[p][1]));
      bound = d4_mul(RF(p, R_MU + 1), npos);
      xb = d4_clamp(yb, d4_neg(bound), bound);
    }
    dl[p][1] = d4_sub(xa, l[p][1]);
    dl[p][2] = d4_sub(xb, l[p][2]);
    d4_store(lam + LANES * (3 * p), x);
    d4_store(lam + LANES * (3 * p + 1), xa);
    d4_store(lam + LANES * (3 * p + 2), xb);
    if (K == 2 && p == 0) {
#pragma GCC unroll 3
      for (int d = 0; d < 3; ++d) {
        lcp_d4 c = d4_madd(d4_mul(d4_load(C + LANES * d), dl[0][0]), d4_load(C + LANES * (3 + d)),
                           dl[0][1]);
        y[1][d] = d4_sub(y[1][d], d4_madd(c, d4_load(C + LANES * (6 + d)), dl[0][2]));
      }
    }
  }
  lcp_d4 res = *res_io, acc = *acc_io;
#pragma GCC unroll 2
  for (int p = 0; p < K; ++p)
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d) {
      lcp_d4 r = d4_mul(d4_abs(dl[p][d]), RF(p, R_DIAG + d));
      res = d4_max(r, res);
      acc = d4_add(acc, r);
    }
  *res_io = res;
  *acc_io = acc;
#undef RF
}

/* a0 b0 + a1 b1 + a2 b2 lane-wise, summed left to right */
static SIMD_INLINE lcp_d4 dot3x4(lcp_d4 a0, lcp_d4 b0, lcp_d4 a1, lcp_d4 b1, lcp_d4 a2, lcp_d4 b2) {
  return d4_madd(d4_madd(d4_mul(a0, b0), a1, b1), a2, b2);
}

/* One group of coefficient units: K points per lane, the cone or the box
 * friction model. The field f of the unit's record is at rec + LANES·f. */
static SIMD_INLINE void group_sweep(const lane_group *g, lcp_d4 *res_io, lcp_d4 *acc_io,
                                    const bool cone, const int K) {
  const double *rec = g->rec;
#define F(f) d4_load(rec + LANES * (f))
#define PF(p, f) F(U_SIZE + P_SIZE * (p) + (f))
  double *lam = g->lam;
  lcp_d4 V[2][6];
  group_gather(g, V);

  /* y = keep·λ + bias − step·(J·v): each row's unclamped update, J·v from
   * the shared linear part and the point's angular part */
  lcp_d4 wl[3], y[UNIT_MAX_POINTS][3], l[UNIT_MAX_POINTS][3], dl[UNIT_MAX_POINTS][3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d) {
    lcp_d4 w = dot3x4(F(U_JL + 3 * d), V[0][0], F(U_JL + 3 * d + 1), V[0][1], F(U_JL + 3 * d + 2),
                      V[0][2]);
    wl[d] = d4_add(w, dot3x4(F(U_JL + 9 + 3 * d), V[1][0], F(U_JL + 9 + 3 * d + 1), V[1][1],
                             F(U_JL + 9 + 3 * d + 2), V[1][2]));
  }
#pragma GCC unroll 2
  for (int p = 0; p < K; ++p)
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d) {
      lcp_d4 a = dot3x4(PF(p, P_JA + 3 * d), V[0][3], PF(p, P_JA + 3 * d + 1), V[0][4],
                        PF(p, P_JA + 3 * d + 2), V[0][5]);
      lcp_d4 b = dot3x4(PF(p, P_JA + 9 + 3 * d), V[1][3], PF(p, P_JA + 9 + 3 * d + 1), V[1][4],
                        PF(p, P_JA + 9 + 3 * d + 2), V[1][5]);
      l[p][d] = d4_load(lam + LANES * (3 * p + d));
      lcp_d4 kept = d4_madd(PF(p, P_ROWS + R_BIAS + d), PF(p, P_ROWS + R_KEEP + d), l[p][d]);
      y[p][d] = d4_msub(kept, PF(p, P_ROWS + R_STEP + d), d4_add(wl[d], d4_add(a, b)));
    }

  const double *const R[UNIT_MAX_POINTS] = {rec + LANES * (U_SIZE + P_ROWS),
                                            rec + LANES * (U_SIZE + P_SIZE + P_ROWS)};
  unit_rows(R, rec + LANES * (U_SIZE + 2 * P_SIZE), lam, y, l, dl, res_io, acc_io, cone, K);

  /* v += Σ M⁻¹J_iᵀ Δλ_i: the shared linear parts from the sums of each
   * direction's Δλ, the angular parts per point */
  const lcp_d4 zero = d4_splat(0.0);
  lcp_d4 sum[3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
    sum[d] = K == 2 ? d4_add(dl[0][d], dl[1][d]) : dl[0][d];
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c) {
      V[s][c] = d4_add(V[s][c], dot3x4(F(U_TL + 9 * s + c), sum[0], F(U_TL + 9 * s + 3 + c), sum[1],
                                       F(U_TL + 9 * s + 6 + c), sum[2]));
      lcp_d4 w = zero;
#pragma GCC unroll 2
      for (int p = 0; p < K; ++p)
        w = d4_add(w, dot3x4(PF(p, P_TA + 9 * s + c), dl[p][0], PF(p, P_TA + 9 * s + 3 + c),
                             dl[p][1], PF(p, P_TA + 9 * s + 6 + c), dl[p][2]));
      V[s][3 + c] = d4_add(V[s][3 + c], w);
    }
#undef F
#undef PF
  group_scatter(g, V);
}

/* a × b lane-wise */
static SIMD_INLINE void cross4(const lcp_d4 a[3], const lcp_d4 b[3], lcp_d4 out[3]) {
  out[0] = d4_sub(d4_mul(a[1], b[2]), d4_mul(a[2], b[1]));
  out[1] = d4_sub(d4_mul(a[2], b[0]), d4_mul(a[0], b[2]));
  out[2] = d4_sub(d4_mul(a[0], b[1]), d4_mul(a[1], b[0]));
}

/* One group of point units (FORM_POINTS). With u the velocity of B
 * relative to A at the point, (v_B + ω_B × r_B) − (v_A + ω_A × r_A), row
 * k's J_k·v is d_k·u; the impulse P = Σ_k d_k Δλ_k of each point changes
 * v_A by −P/m_A, ω_A by −I_A⁻¹(r_A × P), and B's by the same with +
 * (solver_contact's J and M⁻¹Jᵀ, regrouped). The points of a unit are
 * taken one after the other, each from the velocity the one before left
 * in registers: Gauss–Seidel exactly, without couplings between the
 * points. Each row's unclamped update is
 * y = λ − step·(J·v + cfm·λ) + step·target; the normal is clamped to
 * [0, ∞), its Δλ coupled into the friction rows (as unit_rows), which are
 * projected onto the disc of radius μλn (cone) or each into ±μλn (box).
 * The residual takes |Δλ|·(A_nn + cfm) over the point's rows. */
static SIMD_INLINE void point_group_sweep(const lane_group *g, lcp_d4 *res_io, lcp_d4 *acc_io,
                                          const bool cone, const int K) {
  const double *rec = g->rec;
#define F(f) d4_load(rec + LANES * (f))
#define QF(p, f) F(H_SIZE + Q_SIZE * (p) + (f))
  const lcp_d4 zero = d4_splat(0.0), one = d4_splat(1.0);
  lcp_d4 V[2][6];
  group_gather(g, V);

  lcp_d4 D[3][3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      D[d][c] = F(H_DIR + 3 * d + c);
  lcp_d4 res = *res_io, acc = *acc_io;
#pragma GCC unroll 4
  for (int p = 0; p < K; ++p) {
    double *lam = g->lam + LANES * 3 * p;
    lcp_d4 arm[2][3], wr[2][3];
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        arm[s][c] = QF(p, Q_ARM + 3 * s + c);
      cross4(&V[s][3], arm[s], wr[s]);
    }
    lcp_d4 u[3];
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      u[c] = d4_sub(d4_add(V[1][c], wr[1][c]), d4_add(V[0][c], wr[0][c]));
    const lcp_d4 cfm = QF(p, Q_ROWS + PR_CFM);
    lcp_d4 l[3], y[3];
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d) {
      lcp_d4 jv = dot3x4(D[d][0], u[0], D[d][1], u[1], D[d][2], u[2]);
      l[d] = d4_load(lam + LANES * d);
      y[d] = d4_msub(l[d], QF(p, Q_ROWS + PR_STEP + d), d4_madd(jv, cfm, l[d]));
    }
    y[0] = d4_add(y[0], QF(p, Q_ROWS + PR_BIAS));
    /* max(0, y): a NaN y stays NaN, as d4_clamp */
    lcp_d4 x = d4_max(zero, y[0]);
    lcp_d4 dn = d4_sub(x, l[0]);
    lcp_d4 ya = d4_msub(y[1], QF(p, Q_ROWS + PR_C_NA), dn);
    lcp_d4 yb = d4_msub(y[2], QF(p, Q_ROWS + PR_C_NB), dn);
    lcp_d4 radius = d4_mul(QF(p, Q_ROWS + PR_MU), d4_max(x, zero));
    lcp_d4 xa, xb;
    if (cone) {
      /* sticking points (inside the disc) need no projection: when no lane
       * is outside, the sqrt and the division (long, and on the chain of
       * the next point) are skipped */
      lcp_d4 q = d4_add(d4_mul(ya, ya), d4_mul(yb, yb));
      if (m4_any(d4_gt(q, d4_mul(radius, radius)))) {
        lcp_d4 f = d4_min(d4_div(radius, d4_sqrt(q)), one);
        xa = d4_mul(ya, f);
        xb = d4_mul(yb, f);
      } else {
        xa = ya;
        xb = yb;
      }
    } else {
      xa = d4_clamp(ya, d4_neg(radius), radius);
      yb = d4_msub(yb, QF(p, Q_ROWS + PR_C_AB), d4_sub(xa, l[1]));
      xb = d4_clamp(yb, d4_neg(radius), radius);
    }
    lcp_d4 da = d4_sub(xa, l[1]), db = d4_sub(xb, l[2]);
    d4_store(lam, x);
    d4_store(lam + LANES, xa);
    d4_store(lam + 2 * LANES, xb);
    lcp_d4 an = d4_abs(dn), aa = d4_abs(da), ab = d4_abs(db);
    res = d4_max(d4_mul(d4_max(d4_max(an, aa), ab), QF(p, Q_ROWS + PR_DIAG)), res);
    acc = d4_add(acc, d4_add(d4_add(an, aa), ab));

    /* the point's impulse P, then r × P of each side for the angular parts */
    lcp_d4 P[3], torque[3];
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      P[c] = dot3x4(D[0][c], dn, D[1][c], da, D[2][c], db);
    lcp_d4 im0 = F(H_IM), im1 = F(H_IM + 1);
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c) {
      V[0][c] = d4_msub(V[0][c], im0, P[c]);
      V[1][c] = d4_madd(V[1][c], im1, P[c]);
    }
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      cross4(arm[s], P, torque);
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c) {
        const int I = H_II + 6 * s;
        lcp_d4 w = dot3x4(F(I + SYM[3 * c]), torque[0], F(I + SYM[3 * c + 1]), torque[1],
                          F(I + SYM[3 * c + 2]), torque[2]);
        V[s][3 + c] = s == 0 ? d4_sub(V[s][3 + c], w) : d4_add(V[s][3 + c], w);
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
 * whose records outgrow CONTACT_PREFETCH_BYTES: below, the records stay
 * cached and the requests are pure cost. */
enum { PREFETCH_GROUPS = 2 };
static SIMD_INLINE void group_prefetch(const lane_group *g) {
  const char *rec = (const char *)g->rec;
  size_t bytes = sizeof(double) * LANES * (size_t)lcp__contact_unit_fields(g->form, g->points);
  for (size_t b = 0; b < bytes; b += 64)
    simd_prefetch_read(rec + b);
  simd_prefetch_write(g->lam);
  for (int s = 0; s < 2; ++s)
    for (int l = 0; l < LANES; ++l)
      simd_prefetch_write(g->v[s][l]);
}

/* A run of groups; each group's kind picks its unrolled sweep. */
static SIMD_INLINE void groups_sweep(const lane_group *g, int32_t count, double *res_io,
                                     double *acc_io, const bool cone, const bool prefetch) {
  lcp_d4 res = d4_splat(0.0), acc = d4_splat(0.0);
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
    r = d4_lane(res, k) > r ? d4_lane(res, k) : r;
  *res_io = r;
  *acc_io += (d4_lane(acc, 0) + d4_lane(acc, 1)) + (d4_lane(acc, 2) + d4_lane(acc, 3));
}

/* ---- point units filled four lanes at a time ----
 *
 * The setup of a group of point units, every lane at once: PGS's pass over
 * the rows only places each unit in its group and lane (its contact in
 * g->contact); when the run ends, each group's record is computed here with
 * the vectors: the steps from A_kk + cfm (lcp__solver_row_diag's degenerate test),
 * the couplings of a point's normal into its friction rows, the warm start
 * clamped as lcp__contact_unit_warm and added to the velocity. Empty lanes get
 * zero fields and impulses, and velocity pointing at dummy_v. */
typedef struct point_inputs {
  double dir[9][LANES];
  double im[2][LANES];
  double ii[2][6][LANES]; /* the upper triangle: xx xy xz yy yz zz */
  double arm[POINT_MAX][2][3][LANES];
  double cfm[POINT_MAX][LANES], target[POINT_MAX][LANES], mu[POINT_MAX][LANES];
  double lambda[POINT_MAX][3][LANES];
} point_inputs;

/* The lanes' inputs, transposed (lane-major) from the contacts and rows
 * (lcp__contact_point_unit_placeable: one cfm, one μ, and only the normal's
 * target). */
static SIMD_INLINE void point_inputs_gather(const solver_problem *p, lane_group *g, double *dummy_v,
                                            point_inputs *in, const int K) {
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

/* What the group's points share, lane-wise: directions, inverse masses and
 * inertias (full 3×3 from the upper triangle), and the directions' dot
 * products dd[j][k] = d_j·d_k. */
typedef struct point_frame {
  lcp_d4 D[3][3], im[2], ii[2][9], dd[3][3];
} point_frame;

/* What a point contributes to A, lane-wise: per side s and direction k,
 * c[s][k] = r_s × d_k and t[s][k] = I_s⁻¹ c[s][k], so that A_jk of two of
 * its rows is Σ_s (d_j·d_k)/m_s + c_j·t_k. */
typedef struct point_terms4 {
  lcp_d4 c[2][3][3], t[2][3][3];
} point_terms4;

/* J_j · M⁻¹J_kᵀ for row j of point a and row k of point b, on the same
 * sides, with dd = d_j·d_k (an absent side's terms are zeros) */
static SIMD_INLINE lcp_d4 point_cross4(const lcp_d4 im[2], const point_terms4 *a, int j,
                                       const point_terms4 *b, int k, lcp_d4 dd) {
  lcp_d4 s0 = dot3x4(a->c[0][j][0], b->t[0][k][0], a->c[0][j][1], b->t[0][k][1], a->c[0][j][2],
                     b->t[0][k][2]);
  lcp_d4 s1 = dot3x4(a->c[1][j][0], b->t[1][k][0], a->c[1][j][1], b->t[1][k][1], a->c[1][j][2],
                     b->t[1][k][2]);
  return d4_add(d4_madd(s0, im[0], dd), d4_madd(s1, im[1], dd));
}

#define PUT(f, x) d4_store(rec + LANES * (f), (x))

/* The record's header (directions, inverse masses, inertias) into rec,
 * and the frame the points' fields are computed in. */
static SIMD_INLINE void point_frame_fill(const point_inputs *in, double *rec, point_frame *fr) {
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
#pragma GCC unroll 3
    for (int q = 0; q < 3; ++q) {
      fr->D[d][q] = d4_load(in->dir[3 * d + q]);
      PUT(H_DIR + 3 * d + q, fr->D[d][q]);
    }
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s) {
    fr->im[s] = d4_load(in->im[s]);
    PUT(H_IM + s, fr->im[s]);
#pragma GCC unroll 6
    for (int q = 0; q < 6; ++q)
      PUT(H_II + 6 * s + q, d4_load(in->ii[s][q]));
#pragma GCC unroll 9
    for (int q = 0; q < 9; ++q)
      fr->ii[s][q] = d4_load(in->ii[s][SYM[q]]);
  }
#pragma GCC unroll 3
  for (int j = 0; j < 3; ++j)
#pragma GCC unroll 3
    for (int m = 0; m < 3; ++m)
      fr->dd[j][m] =
          dot3x4(fr->D[j][0], fr->D[m][0], fr->D[j][1], fr->D[m][1], fr->D[j][2], fr->D[m][2]);
}

/* Point q's arms into rec and its terms c = r × d, t = I⁻¹ c. */
static SIMD_INLINE void point_terms_fill(const point_inputs *in, const point_frame *fr, int32_t q,
                                         double *rec, point_terms4 *pt) {
  const int32_t Q = H_SIZE + Q_SIZE * q;
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s) {
    lcp_d4 arm[3];
#pragma GCC unroll 3
    for (int m = 0; m < 3; ++m) {
      arm[m] = d4_load(in->arm[q][s][m]);
      PUT(Q + Q_ARM + 3 * s + m, arm[m]);
    }
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k) {
      lcp_d4 *c = pt->c[s][k], *t = pt->t[s][k];
      cross4(arm, fr->D[k], c);
#pragma GCC unroll 3
      for (int r = 0; r < 3; ++r)
        t[r] =
            dot3x4(fr->ii[s][3 * r], c[0], fr->ii[s][3 * r + 1], c[1], fr->ii[s][3 * r + 2], c[2]);
    }
  }
}

/* Point q's row constants into rec (PR_*): A_kk + cfm with A_kk taken as
 * degenerate below DEGENERATE_RATIO of the sum of its terms' magnitudes (as
 * lcp__solver_row_diag), the steps and the couplings. Returns the used lanes
 * whose A_kk is not finite or degenerate. */
static SIMD_INLINE lcp_m4 point_rows_fill(const point_inputs *in, const point_frame *fr,
                                          const point_terms4 *pt, int32_t q, double omega,
                                          bool cone, lcp_m4 used, double *rec) {
  const int32_t P = H_SIZE + Q_SIZE * q + Q_ROWS;
  const lcp_d4 zero = d4_splat(0.0), w = d4_splat(omega), half = d4_splat(0.5);
  const lcp_d4 cfm = d4_load(in->cfm[q]);
  lcp_m4 bad = m4_first(0);
  lcp_d4 diag[3];
#pragma GCC unroll 3
  for (int k = 0; k < 3; ++k) {
    /* the linear terms, im_s d_k·d_k, are positive: their sum is both
     * theirs and their magnitudes' */
    lcp_d4 lin = d4_mul(d4_add(fr->im[0], fr->im[1]), fr->dd[k][k]);
    lcp_d4 a = lin, scale = lin;
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
      for (int m = 0; m < 3; ++m) {
        lcp_d4 ang = d4_mul(pt->c[s][k][m], pt->t[s][k][m]);
        a = d4_add(a, ang);
        scale = d4_add(scale, d4_abs(ang));
      }
    diag[k] = d4_add(a, cfm);
    lcp_m4 good =
        m4_and(m4_and(d4_finite(a), d4_finite(scale)),
               m4_and(d4_gt(a, d4_mul(d4_splat(DEGENERATE_RATIO), scale)), d4_gt(diag[k], zero)));
    bad = m4_or(bad, m4_andnot(used, good));
  }
  lcp_d4 step[3];
  step[0] = d4_div(w, diag[0]);
  if (cone) {
    /* ω/λmax of the pair's 2×2 block (lcp__solver_pair_lambda_max) */
    lcp_d4 x = d4_mul(half, d4_add(point_cross4(fr->im, pt, 1, pt, 2, fr->dd[1][2]),
                                   point_cross4(fr->im, pt, 2, pt, 1, fr->dd[2][1])));
    lcp_d4 h = d4_mul(half, d4_sub(diag[1], diag[2]));
    lcp_d4 lmax =
        d4_add(d4_mul(half, d4_add(diag[1], diag[2])), d4_sqrt(d4_add(d4_mul(h, h), d4_mul(x, x))));
    step[1] = step[2] = d4_div(w, lmax);
  } else {
    step[1] = d4_div(w, diag[1]);
    step[2] = d4_div(w, diag[2]);
  }
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
    PUT(P + PR_STEP + d, step[d]);
  PUT(P + PR_CFM, cfm);
  PUT(P + PR_BIAS, d4_mul(step[0], d4_load(in->target[q])));
  PUT(P + PR_DIAG, diag[0]);
  PUT(P + PR_MU, d4_load(in->mu[q]));
  PUT(P + PR_C_NA, d4_mul(step[1], point_cross4(fr->im, pt, 1, pt, 0, fr->dd[1][0])));
  PUT(P + PR_C_NB, d4_mul(step[2], point_cross4(fr->im, pt, 2, pt, 0, fr->dd[2][0])));
  PUT(P + PR_C_AB, cone ? zero : d4_mul(step[2], point_cross4(fr->im, pt, 2, pt, 1, fr->dd[2][1])));
  return bad;
}

/* Point q's warm start, clamped as lcp__contact_unit_warm: the normal into
 * [0, ∞), the friction pair onto the disc (cone) or into ±μλn (box); an
 * empty lane's inputs are zeros and its impulses come out 0. */
static SIMD_INLINE void point_warm(const point_inputs *in, int32_t q, bool cone, lcp_d4 lam[3]) {
  const lcp_d4 zero = d4_splat(0.0), one = d4_splat(1.0);
  lcp_d4 l0 = d4_load(in->lambda[q][0]), l1 = d4_load(in->lambda[q][1]);
  lcp_d4 l2 = d4_load(in->lambda[q][2]);
  l0 = d4_select(d4_lt(l0, zero), zero, l0);
  lcp_d4 bound = d4_mul(d4_load(in->mu[q]), l0);
  if (cone) {
    lcp_d4 len = d4_sqrt(d4_add(d4_mul(l1, l1), d4_mul(l2, l2)));
    lcp_d4 f = d4_select(d4_gt(len, bound), d4_div(bound, len), one);
    l1 = d4_mul(l1, f);
    l2 = d4_mul(l2, f);
  } else {
    lcp_d4 lo = d4_neg(bound);
    l1 = d4_select(d4_lt(l1, lo), lo, l1);
    l1 = d4_select(d4_gt(l1, bound), bound, l1);
    l2 = d4_select(d4_lt(l2, lo), lo, l2);
    l2 = d4_select(d4_gt(l2, bound), bound, l2);
  }
  lam[0] = l0;
  lam[1] = l1;
  lam[2] = l2;
}

/* v += M⁻¹Jᵀλ of the warm start: per point P = Σ_k d_k λ_k, −P/m_A and
 * −I_A⁻¹(r_A × P) on A, + on B */
static SIMD_INLINE void point_warm_apply(const lane_group *g, const point_inputs *in,
                                         const point_frame *fr, lcp_d4 lam[POINT_MAX][3],
                                         const int K) {
  lcp_d4 V[2][6];
  group_gather(g, V);
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
    lcp_d4 P3[3], arm[2][3];
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      P3[c] = dot3x4(fr->D[0][c], lam[q][0], fr->D[1][c], lam[q][1], fr->D[2][c], lam[q][2]);
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
#pragma GCC unroll 3
      for (int m = 0; m < 3; ++m)
        arm[s][m] = d4_load(in->arm[q][s][m]);
      lcp_d4 torque[3];
      cross4(arm[s], P3, torque);
      lcp_d4 sign = s == 0 ? d4_splat(-1.0) : d4_splat(1.0);
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c) {
        const lcp_d4 *ii = fr->ii[s];
        V[s][c] = d4_add(V[s][c], d4_mul(sign, d4_mul(fr->im[s], P3[c])));
        V[s][3 + c] =
            d4_add(V[s][3 + c], d4_mul(sign, dot3x4(ii[3 * c], torque[0], ii[3 * c + 1], torque[1],
                                                    ii[3 * c + 2], torque[2])));
      }
    }
  }
  group_scatter(g, V);
}

static SIMD_INLINE bool point_group_fill(const solver_problem *p, lane_group *g, double omega,
                                         bool cone, double *dummy_v, const int K) {
  point_inputs in;
  point_inputs_gather(p, g, dummy_v, &in, K);
  double *rec = g->rec;
  const lcp_m4 used = m4_first(g->lanes_used); /* the lanes holding a unit */
  point_frame fr;
  point_frame_fill(&in, rec, &fr);
  lcp_d4 lam[POINT_MAX][3];
  lcp_m4 bad = m4_first(0);
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
    point_terms4 pt;
    point_terms_fill(&in, &fr, q, rec, &pt);
    bad = m4_or(bad, point_rows_fill(&in, &fr, &pt, q, omega, cone, used, rec));
    point_warm(&in, q, cone, lam[q]);
#pragma GCC unroll 3
    for (int d = 0; d < 3; ++d)
      d4_store(g->lam + LANES * (3 * q + d), lam[q][d]);
  }
  if (m4_any(bad))
    return false;
  /* empty lanes: zero fields (their steps, 1/0, made NaNs) */
  const int32_t fields = lcp__contact_unit_fields(FORM_POINTS, K);
  for (int32_t l = g->lanes_used; l < LANES; ++l)
    for (int32_t f = 0; f < fields; ++f)
      rec[LANES * f + l] = 0.0;
  point_warm_apply(g, &in, &fr, lam, K);
  return true;
}
#undef PUT

/* the fill unrolled for the group's points */
static SIMD_INLINE bool point_group_fill_k(const solver_problem *p, lane_group *g, double omega,
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

/* ---- the kernels compiled for the baseline and for AVX2 ----
 *
 * The sweeps, by friction model and prefetching, and the fill, compiled
 * for the baseline and, chosen at run time where the processor has it, for
 * AVX2: 4-wide vectors in one register and three-operand instructions halve
 * the instructions of the baseline (SSE2: two halves, and register copies).
 * The arithmetic is the same lane by lane, IEEE and without fused
 * multiply-adds, so the results are bitwise those of the baseline. */
#define CONTACT_SWEEP_VARIANT(name, attr, cone, prefetch)                                          \
  attr static void name(const lane_group *g, int32_t count, double *res, double *acc) {            \
    groups_sweep(g, count, res, acc, cone, prefetch);                                              \
  }
CONTACT_SWEEP_VARIANT(sweep_cone, , true, false)
CONTACT_SWEEP_VARIANT(sweep_box, , false, false)
CONTACT_SWEEP_VARIANT(sweep_cone_prefetch, , true, true)
CONTACT_SWEEP_VARIANT(sweep_box_prefetch, , false, true)
static bool point_fill(const solver_problem *p, lane_group *g, double omega, bool cone,
                       double *dummy_v) {
  return point_group_fill_k(p, g, omega, cone, dummy_v);
}
#if SIMD_AVX2_DISPATCH
CONTACT_SWEEP_VARIANT(sweep_cone_avx2, SIMD_TARGET_AVX2, true, false)
CONTACT_SWEEP_VARIANT(sweep_box_avx2, SIMD_TARGET_AVX2, false, false)
CONTACT_SWEEP_VARIANT(sweep_cone_prefetch_avx2, SIMD_TARGET_AVX2, true, true)
CONTACT_SWEEP_VARIANT(sweep_box_prefetch_avx2, SIMD_TARGET_AVX2, false, true)
SIMD_TARGET_AVX2 static bool point_fill_avx2(const solver_problem *p, lane_group *g, double omega,
                                             bool cone, double *dummy_v) {
  return point_group_fill_k(p, g, omega, cone, dummy_v);
}
#endif

contact_sweep_fn lcp__contact_pick_sweep(bool cone, bool baseline_only, bool prefetch) {
#if SIMD_AVX2_DISPATCH
  if (!baseline_only && simd_cpu_has_avx2()) {
    if (prefetch)
      return cone ? sweep_cone_prefetch_avx2 : sweep_box_prefetch_avx2;
    return cone ? sweep_cone_avx2 : sweep_box_avx2;
  }
#endif
  (void)baseline_only;
  if (prefetch)
    return cone ? sweep_cone_prefetch : sweep_box_prefetch;
  return cone ? sweep_cone : sweep_box;
}

contact_fill_fn lcp__contact_pick_point_fill(bool baseline_only) {
#if SIMD_AVX2_DISPATCH
  if (!baseline_only && simd_cpu_has_avx2())
    return point_fill_avx2;
#endif
  (void)baseline_only;
  return point_fill;
}

/* ---- new targets (the relax iterations) ----
 *
 * The bias of a row is step·target in either form of record, so new
 * targets only rewrite those fields, lane by lane. Point units carry the
 * normal's bias alone (their friction rows have no target). */
void lcp__contact_group_retarget(lane_group *g, const double *targets) {
  for (int32_t lane = 0; lane < g->lanes_used; ++lane) {
    for (int32_t q = 0; q < g->count[lane]; ++q) {
      const double *t = targets + g->row[lane] + 3 * q;
      if (g->form == FORM_POINTS) {
        const int32_t P = H_SIZE + Q_SIZE * q + Q_ROWS;
        g->rec[LANES * (P + PR_BIAS) + lane] = g->rec[LANES * (P + PR_STEP) + lane] * t[0];
      } else {
        const int32_t P = U_SIZE + P_SIZE * q + P_ROWS;
        for (int d = 0; d < 3; ++d)
          g->rec[LANES * (P + R_BIAS + d) + lane] = g->rec[LANES * (P + R_STEP + d) + lane] * t[d];
      }
    }
  }
}
