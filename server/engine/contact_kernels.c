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
 * - a unit is a manifold on the same one or two 6-wide sides. A contact
 *   patch given by geometry (solver_contact, the step's contacts: "point
 *   units", FORM_POINTS) is one unit: its up to POINT_MAX normal rows, then
 *   its friction rows (two tangents at its centre and the torsion row),
 *   swept one row after the other from the velocity kept in registers.
 *   Single points given by coefficients (a non-friction row and its
 *   ROW_FRICTION_1/2 pair each, FORM_COEFS) make units
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

/* Units of solver_contact patches (FORM_POINTS: a manifold's K points and
 * its friction rows, solver.h) store, instead of coefficients, what they
 * are made of: J·v is d · (relative velocity of the bodies at the arm)
 * (d_0·(ω_B − ω_A) for the torsion row) and M⁻¹JᵀΔλ comes from the impulse
 * P = Σ d Δλ, as ±P/m and ±I⁻¹(r × P) (+ ±I⁻¹ d_0 Δλτ). They are the
 * patches the step writes (lcp__contact_point_unit_placeable): normals
 * bounded by [0, ∞), one cfm for all the rows, one μ for the tangents,
 * friction rows without target. A fraction of the fields of a coefficient
 * record, which is what a sweep of a large problem waits for (the records
 * are read from memory once per sweep). The header: */
enum {
  H_DIR = 0, /* [d][c] the unit's directions */
  H_IM = 9,  /* [s] inverse masses (0 for an absent side) */
  H_II = 11, /* [s][6] world inverse inertias, symmetric: xx xy xz yy yz zz (0: absent side) */
  H_SIZE = 23
};
/* then each point: its arms [s][c] and its normal row's constants */
enum {
  Q_ARM = 0,
  Q_STEP = 6, /* ω/(A_nn + cfm) */
  Q_BIAS = 7, /* step·target: the only field that depends on the row's target */
  Q_DIAG = 8, /* A_nn + cfm, for the residual */
  Q_SIZE = 9
};
/* then the patch's friction rows: tangents 1, 2 at the centre, torsion */
enum {
  F_ARM = 0,   /* [s][c] the centre's arms */
  F_STEP = 6,  /* [3]: ω/λmax of the tangents' 2×2 block (cone) or ω/(A_kk + cfm) (box);
                  ω/(A_ττ + cfm) (0 without a torsion row) */
  F_DIAG = 9,  /* [3]: A_kk + cfm, for the residual */
  F_CFM = 12,  /* the cfm of every row of the patch */
  F_MU = 13,   /* μ: tangents' bound μΣλn */
  F_MU_T = 14, /* μ r: torsion's bound μ r Σλn */
  F_C_12 = 15, /* step_2 A_21: tangent 1 into tangent 2 (box model; 0 for the cone) */
  F_C_1T = 16, /* step_τ A_τ1: tangent 1 into the torsion row */
  F_C_2T = 17, /* step_τ A_τ2 */
  F_SIZE = 18,
  /* a single point has no torsion row; its normal's Δλ is coupled into
   * its tangents instead (it is swept from one relative velocity): */
  F_C_N1 = F_C_1T, /* step_1 A_1n */
  F_C_N2 = F_C_2T  /* step_2 A_2n */
};
/* row-major 3×3 index → symmetric storage index */
static const int SYM[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5};

int32_t lcp__contact_unit_rows(int32_t form, int32_t points) {
  return form == FORM_POINTS ? solver_patch_rows(points) : 3 * points;
}

int32_t lcp__contact_unit_fields(int32_t form, int32_t points) {
  /* point units need no couplings: their sweep takes the rows in turn */
  return form == FORM_POINTS ? H_SIZE + Q_SIZE * points + F_SIZE
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
      r[1].normal_row != i || r[2].normal_row != i || r[1].normal_count != 1 ||
      r[2].normal_count != 1 || refs[i] != 2)
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
  const int32_t K = c->point_count, friction = solver_patch_rows(K) - K;
  const solver_row *r = &p->rows[c->row], *f = r + K;
  if ((c->dof[0] < 0 && c->dof[1] < 0) || c->dof[0] == c->dof[1])
    return false;
  for (int32_t q = 0; q < K; ++q)
    if (refs[c->row + q] != friction || r[q].lo != 0.0 || r[q].hi != INFINITY ||
        r[q].cfm != r[0].cfm)
      return false;
  for (int32_t d = 0; d < friction; ++d)
    if (f[d].cfm != r[0].cfm || f[d].target != 0.0)
      return false;
  return f[0].mu == f[1].mu;
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

/* v += the impulse P (linear) with angular impulse arm × P + n·spin on
 * each side: −P/m_A, −I_A⁻¹(r_A × P + n spin) on A, + on B (the M⁻¹Jᵀ of
 * solver_contact's rows, summed). Without spin (has_spin false) the n
 * term is left out. */
static SIMD_INLINE void point_apply(const double *rec, lcp_d4 V[2][6], const lcp_d4 arm[2][3],
                                    const lcp_d4 P[3], const lcp_d4 n[3], lcp_d4 spin,
                                    const bool has_spin) {
#define F(f) d4_load(rec + LANES * (f))
  lcp_d4 im0 = F(H_IM), im1 = F(H_IM + 1);
#pragma GCC unroll 3
  for (int c = 0; c < 3; ++c) {
    V[0][c] = d4_msub(V[0][c], im0, P[c]);
    V[1][c] = d4_madd(V[1][c], im1, P[c]);
  }
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s) {
    lcp_d4 torque[3];
    cross4(arm[s], P, torque);
    if (has_spin)
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        torque[c] = d4_madd(torque[c], n[c], spin);
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c) {
      const int I = H_II + 6 * s;
      lcp_d4 w = dot3x4(F(I + SYM[3 * c]), torque[0], F(I + SYM[3 * c + 1]), torque[1],
                        F(I + SYM[3 * c + 2]), torque[2]);
      V[s][3 + c] = s == 0 ? d4_sub(V[s][3 + c], w) : d4_add(V[s][3 + c], w);
    }
  }
#undef F
}

/* u = (v_B + ω_B × r_B) − (v_A + ω_A × r_A): the velocity of B relative to
 * A at the arms */
static SIMD_INLINE void point_relative_velocity(const lcp_d4 V[2][6], const lcp_d4 arm[2][3],
                                                lcp_d4 u[3]) {
  lcp_d4 wr[2][3];
  cross4(&V[0][3], arm[0], wr[0]);
  cross4(&V[1][3], arm[1], wr[1]);
#pragma GCC unroll 3
  for (int c = 0; c < 3; ++c)
    u[c] = d4_sub(d4_add(V[1][c], wr[1][c]), d4_add(V[0][c], wr[0][c]));
}

/* One group of patch units (FORM_POINTS), K points each. With u the
 * velocity of B relative to A at an arm, a normal or tangent row's J·v is
 * d·u and the torsion row's d_0·(ω_B − ω_A) (solver_contact's J and M⁻¹Jᵀ,
 * regrouped). The rows are taken in order, each from the velocity the one
 * before left in registers: the K normals one after the other (Gauss–
 * Seidel exactly), then the patch's friction from the velocity after them:
 * the tangents (projected together onto the disc of radius μΣλn, cone, or
 * one after the other into ±μΣλn, box, the second through its coupling
 * step_2 A_21 to the first), then the torsion row into ±μ r Σλn through its
 * couplings to the tangents. A single point (K = 1, its centre the point
 * itself) takes its three rows from one relative velocity, the normal's Δλ
 * coupled into the tangents (step_k A_kn), and moves the bodies once, by
 * its whole impulse. Each row's unclamped update is
 * y = λ − step·(J·v + cfm·λ) + step·target. The residual takes
 * |Δλ|·(A_ii + cfm) of each row. */
static SIMD_INLINE void point_group_sweep(const lane_group *g, lcp_d4 *res_io, lcp_d4 *acc_io,
                                          const bool cone, const int K) {
  const double *rec = g->rec;
#define F(f) d4_load(rec + LANES * (f))
#define QF(p, f) F(H_SIZE + Q_SIZE * (p) + (f))
#define FF(f) F(H_SIZE + Q_SIZE * K + (f))
  const lcp_d4 zero = d4_splat(0.0), one = d4_splat(1.0);
  lcp_d4 V[2][6];
  group_gather(g, V);

  lcp_d4 D[3][3];
#pragma GCC unroll 3
  for (int d = 0; d < 3; ++d)
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      D[d][c] = F(H_DIR + 3 * d + c);
  const lcp_d4 cfm = FF(F_CFM);
  double *lam = g->lam;
  lcp_d4 res = *res_io, acc = *acc_io, total = zero, arm[2][3], u[3];
  /* the normals' impulses not yet moved into V (a single point's) */
  lcp_d4 pending = zero;
#pragma GCC unroll 4
  for (int p = 0; p < K; ++p) {
    if (K == 1) {
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
        for (int c = 0; c < 3; ++c)
          arm[s][c] = FF(F_ARM + 3 * s + c);
    } else {
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
        for (int c = 0; c < 3; ++c)
          arm[s][c] = QF(p, Q_ARM + 3 * s + c);
    }
    point_relative_velocity(V, arm, u);
    lcp_d4 jv = dot3x4(D[0][0], u[0], D[0][1], u[1], D[0][2], u[2]);
    lcp_d4 l = d4_load(lam + LANES * p);
    lcp_d4 y = d4_add(d4_msub(l, QF(p, Q_STEP), d4_madd(jv, cfm, l)), QF(p, Q_BIAS));
    /* max(0, y): a NaN y stays NaN, as d4_clamp */
    lcp_d4 x = d4_max(zero, y);
    lcp_d4 dn = d4_sub(x, l);
    d4_store(lam + LANES * p, x);
    total = d4_add(total, x);
    lcp_d4 an = d4_abs(dn);
    res = d4_max(d4_mul(an, QF(p, Q_DIAG)), res);
    acc = d4_add(acc, an);
    if (K == 1) {
      pending = dn;
    } else {
      lcp_d4 P[3];
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        P[c] = d4_mul(D[0][c], dn);
      point_apply(rec, V, arm, P, D[0], zero, false);
    }
  }

  /* the patch's friction at its centre, bounded by μ Σλn (the normals' new
   * impulses) */
  if (K > 1) {
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        arm[s][c] = FF(F_ARM + 3 * s + c);
    point_relative_velocity(V, arm, u);
  }
  double *lf = lam + LANES * K;
  lcp_d4 l1 = d4_load(lf), l2 = d4_load(lf + LANES);
  lcp_d4 jv1 = dot3x4(D[1][0], u[0], D[1][1], u[1], D[1][2], u[2]);
  lcp_d4 jv2 = dot3x4(D[2][0], u[0], D[2][1], u[1], D[2][2], u[2]);
  lcp_d4 ya = d4_msub(l1, FF(F_STEP), d4_madd(jv1, cfm, l1));
  lcp_d4 yb = d4_msub(l2, FF(F_STEP + 1), d4_madd(jv2, cfm, l2));
  if (K == 1) {
    ya = d4_msub(ya, FF(F_C_N1), pending);
    yb = d4_msub(yb, FF(F_C_N2), pending);
  }
  lcp_d4 radius = d4_mul(FF(F_MU), total);
  lcp_d4 xa, xb;
  if (cone) {
    /* sticking patches (inside the disc) need no projection: when no lane
     * is outside, the sqrt and the division are skipped */
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
    yb = d4_msub(yb, FF(F_C_12), d4_sub(xa, l1));
    xb = d4_clamp(yb, d4_neg(radius), radius);
  }
  lcp_d4 da = d4_sub(xa, l1), db = d4_sub(xb, l2), dt = zero;
  d4_store(lf, xa);
  d4_store(lf + LANES, xb);
  lcp_d4 aa = d4_abs(da), ab = d4_abs(db);
  res = d4_max(d4_max(d4_mul(aa, FF(F_DIAG)), d4_mul(ab, FF(F_DIAG + 1))), res);
  acc = d4_add(acc, d4_add(aa, ab));
  if (K >= 2) {
    lcp_d4 lt = d4_load(lf + 2 * LANES);
    lcp_d4 jvt = dot3x4(D[0][0], d4_sub(V[1][3], V[0][3]), D[0][1], d4_sub(V[1][4], V[0][4]),
                        D[0][2], d4_sub(V[1][5], V[0][5]));
    lcp_d4 yt = d4_msub(lt, FF(F_STEP + 2), d4_madd(jvt, cfm, lt));
    yt = d4_msub(d4_msub(yt, FF(F_C_1T), da), FF(F_C_2T), db);
    lcp_d4 bt = d4_mul(FF(F_MU_T), total);
    lcp_d4 xt = d4_clamp(yt, d4_neg(bt), bt);
    dt = d4_sub(xt, lt);
    d4_store(lf + 2 * LANES, xt);
    lcp_d4 at = d4_abs(dt);
    res = d4_max(d4_mul(at, FF(F_DIAG + 2)), res);
    acc = d4_add(acc, at);
  }
  lcp_d4 P[3];
#pragma GCC unroll 3
  for (int c = 0; c < 3; ++c)
    P[c] = K == 1 ? dot3x4(D[0][c], pending, D[1][c], da, D[2][c], db)
                  : d4_madd(d4_mul(D[1][c], da), D[2][c], db);
  point_apply(rec, V, arm, P, D[0], dt, K >= 2);
  *res_io = res;
  *acc_io = acc;
#undef F
#undef QF
#undef FF
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

/* ---- patch units filled four lanes at a time ----
 *
 * The setup of a group of patch units, every lane at once: PGS's pass over
 * the rows only places each unit in its group and lane (its contact in
 * g->contact); when the run ends, each group's record is computed here with
 * the vectors: the steps from A_kk + cfm (lcp__solver_row_diag's degenerate
 * test), the friction rows' couplings, the warm start clamped (normals into
 * [0, ∞), the tangents onto the disc or into the box of μΣλn, the torsion
 * into ±μ r Σλn) and added to the velocity. Empty lanes get zero fields and
 * impulses, and velocity pointing at dummy_v. */
typedef struct point_inputs {
  double dir[9][LANES];
  double im[2][LANES];
  double ii[2][6][LANES];                 /* the upper triangle: xx xy xz yy yz zz */
  double arm[POINT_MAX + 1][2][3][LANES]; /* the points', then the centre's */
  double cfm[LANES], mu[LANES], mu_t[LANES];
  double target[POINT_MAX][LANES];
  double lambda[POINT_MAX + 3][LANES];
} point_inputs;

/* The lanes' inputs, transposed (lane-major) from the patches and rows
 * (lcp__contact_point_unit_placeable: one cfm, one μ, and only the
 * normals' targets). */
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
          in->arm[pt][s][m][k] = present ? c->point_arm[pt][s][m] : 0.0;
#pragma GCC unroll 3
      for (int m = 0; m < 3; ++m)
        in->arm[K][s][m][k] = present ? c->arm[s][m] : 0.0;
    }
    const solver_row *r = &p->rows[c->row];
#pragma GCC unroll 4
    for (int32_t pt = 0; pt < K; ++pt) {
      in->target[pt][k] = r[pt].target;
      in->lambda[pt][k] = r[pt].lambda;
    }
    in->cfm[k] = r[0].cfm;
    in->mu[k] = r[K].mu;
    in->mu_t[k] = K >= 2 ? r[K + 2].mu : 0.0;
    in->lambda[K][k] = r[K].lambda;
    in->lambda[K + 1][k] = r[K + 1].lambda;
    in->lambda[K + 2][k] = K >= 2 ? r[K + 2].lambda : 0.0;
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

/* What the group's patches share, lane-wise: directions, inverse masses
 * and inertias (full 3×3 from the upper triangle), and the directions' dot
 * products dd[j][k] = d_j·d_k. */
typedef struct point_frame {
  lcp_d4 D[3][3], im[2], ii[2][9], dd[3][3];
} point_frame;

/* What an arm contributes to A, lane-wise: per side s and direction k,
 * c[s][k] = r_s × d_k and t[s][k] = I_s⁻¹ c[s][k], so that A_jk of two
 * rows at the arm is Σ_s (d_j·d_k)/m_s + c_j·t_k. */
typedef struct point_terms4 {
  lcp_d4 c[2][3][3], t[2][3][3];
} point_terms4;

/* J_j · M⁻¹J_kᵀ for rows j and k at the arm of a, with dd = d_j·d_k (an
 * absent side's terms are zeros) */
static SIMD_INLINE lcp_d4 point_cross4(const lcp_d4 im[2], const point_terms4 *a, int j, int k,
                                       lcp_d4 dd) {
  lcp_d4 s0 = dot3x4(a->c[0][j][0], a->t[0][k][0], a->c[0][j][1], a->t[0][k][1], a->c[0][j][2],
                     a->t[0][k][2]);
  lcp_d4 s1 = dot3x4(a->c[1][j][0], a->t[1][k][0], a->c[1][j][1], a->t[1][k][1], a->c[1][j][2],
                     a->t[1][k][2]);
  return d4_add(d4_madd(s0, im[0], dd), d4_madd(s1, im[1], dd));
}

#define PUT(f, x) d4_store(rec + LANES * (f), (x))

/* The record's header (directions, inverse masses, inertias) into rec,
 * and the frame the rows' fields are computed in. */
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

/* Arm q's (q = K: the centre's) values into rec at field `at` and its terms
 * c = r × d, t = I⁻¹ c for directions k0 .. k1 − 1. */
static SIMD_INLINE void point_terms_fill(const point_inputs *in, const point_frame *fr, int32_t q,
                                         int32_t at, int k0, int k1, double *rec,
                                         point_terms4 *pt) {
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s) {
    lcp_d4 arm[3];
#pragma GCC unroll 3
    for (int m = 0; m < 3; ++m) {
      arm[m] = d4_load(in->arm[q][s][m]);
      PUT(at + 3 * s + m, arm[m]);
    }
#pragma GCC unroll 3
    for (int k = k0; k < k1; ++k) {
      lcp_d4 *c = pt->c[s][k], *t = pt->t[s][k];
      cross4(arm, fr->D[k], c);
#pragma GCC unroll 3
      for (int r = 0; r < 3; ++r)
        t[r] =
            dot3x4(fr->ii[s][3 * r], c[0], fr->ii[s][3 * r + 1], c[1], fr->ii[s][3 * r + 2], c[2]);
    }
  }
}

/* lcp__solver_row_diag's A + cfm from A's value a and its terms' magnitudes
 * scale, lane-wise; the used lanes where it is not finite or degenerate
 * are added to *bad. */
static SIMD_INLINE lcp_d4 diag_check(lcp_d4 a, lcp_d4 scale, lcp_d4 cfm, lcp_m4 used, lcp_m4 *bad) {
  lcp_d4 diag = d4_add(a, cfm);
  lcp_m4 good = m4_and(
      m4_and(d4_finite(a), d4_finite(scale)),
      m4_and(d4_gt(a, d4_mul(d4_splat(DEGENERATE_RATIO), scale)), d4_gt(diag, d4_splat(0.0))));
  *bad = m4_or(*bad, m4_andnot(used, good));
  return diag;
}

/* A_kk + cfm of the row along d_k at the arm of pt, and the lanes where it
 * is not finite or degenerate (below DEGENERATE_RATIO of the sum of its
 * terms' magnitudes, as lcp__solver_row_diag) among the used ones. */
static SIMD_INLINE lcp_d4 point_diag(const point_frame *fr, const point_terms4 *pt, int k,
                                     lcp_d4 cfm, lcp_m4 used, lcp_m4 *bad) {
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
  return diag_check(a, scale, cfm, used, bad);
}

/* The patch's row constants into rec: each point's normal row (Q_*), then
 * the friction rows' (F_*): the tangents' steps (ω/λmax of their 2×2 block
 * for the cone, lcp__solver_pair_lambda_max), the torsion row's
 * A_ττ = Σ_s d_0·I_s⁻¹d_0 and its couplings A_τk = Σ_s d_0·I_s⁻¹(r_s × d_k)
 * to the tangents. Returns the used lanes with a degenerate row. */
static SIMD_INLINE lcp_m4 patch_rows_fill(const point_inputs *in, const point_frame *fr,
                                          double omega, bool cone, lcp_m4 used, double *rec,
                                          const int K) {
  const lcp_d4 zero = d4_splat(0.0), w = d4_splat(omega), half = d4_splat(0.5);
  const lcp_d4 cfm = d4_load(in->cfm);
  lcp_m4 bad = m4_first(0);
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
    const int32_t Q = H_SIZE + Q_SIZE * q;
    point_terms4 pt;
    point_terms_fill(in, fr, q, Q + Q_ARM, 0, 1, rec, &pt);
    lcp_d4 diag = point_diag(fr, &pt, 0, cfm, used, &bad);
    lcp_d4 step = d4_div(w, diag);
    PUT(Q + Q_STEP, step);
    PUT(Q + Q_BIAS, d4_mul(step, d4_load(in->target[q])));
    PUT(Q + Q_DIAG, diag);
  }
  const int32_t Fb = H_SIZE + Q_SIZE * K;
  point_terms4 pt;
  point_terms_fill(in, fr, K, Fb + F_ARM, K == 1 ? 0 : 1, 3, rec, &pt);
  lcp_d4 diag1 = point_diag(fr, &pt, 1, cfm, used, &bad);
  lcp_d4 diag2 = point_diag(fr, &pt, 2, cfm, used, &bad);
  lcp_d4 step1, step2;
  if (cone) {
    lcp_d4 x = d4_mul(half, d4_add(point_cross4(fr->im, &pt, 1, 2, fr->dd[1][2]),
                                   point_cross4(fr->im, &pt, 2, 1, fr->dd[2][1])));
    lcp_d4 h = d4_mul(half, d4_sub(diag1, diag2));
    lcp_d4 lmax =
        d4_add(d4_mul(half, d4_add(diag1, diag2)), d4_sqrt(d4_add(d4_mul(h, h), d4_mul(x, x))));
    step1 = step2 = d4_div(w, lmax);
  } else {
    step1 = d4_div(w, diag1);
    step2 = d4_div(w, diag2);
  }
  lcp_d4 diag_t = zero, step_t = zero, c1t = zero, c2t = zero;
  if (K >= 2) {
    lcp_d4 a = zero, scale = zero;
    const lcp_d4 *n = fr->D[0];
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s) {
      lcp_d4 tn[3];
#pragma GCC unroll 3
      for (int r = 0; r < 3; ++r) {
        tn[r] =
            dot3x4(fr->ii[s][3 * r], n[0], fr->ii[s][3 * r + 1], n[1], fr->ii[s][3 * r + 2], n[2]);
        lcp_d4 term = d4_mul(n[r], tn[r]);
        a = d4_add(a, term);
        scale = d4_add(scale, d4_abs(term));
      }
      c1t = d4_add(c1t, dot3x4(tn[0], pt.c[s][1][0], tn[1], pt.c[s][1][1], tn[2], pt.c[s][1][2]));
      c2t = d4_add(c2t, dot3x4(tn[0], pt.c[s][2][0], tn[1], pt.c[s][2][1], tn[2], pt.c[s][2][2]));
    }
    diag_t = diag_check(a, scale, cfm, used, &bad);
    step_t = d4_div(w, diag_t);
    c1t = d4_mul(step_t, c1t);
    c2t = d4_mul(step_t, c2t);
  } else {
    /* F_C_N1, F_C_N2: the normal into the tangents, at the point */
    c1t = d4_mul(step1, point_cross4(fr->im, &pt, 1, 0, fr->dd[1][0]));
    c2t = d4_mul(step2, point_cross4(fr->im, &pt, 2, 0, fr->dd[2][0]));
  }
  PUT(Fb + F_STEP, step1);
  PUT(Fb + F_STEP + 1, step2);
  PUT(Fb + F_STEP + 2, step_t);
  PUT(Fb + F_DIAG, diag1);
  PUT(Fb + F_DIAG + 1, diag2);
  PUT(Fb + F_DIAG + 2, diag_t);
  PUT(Fb + F_CFM, cfm);
  PUT(Fb + F_MU, d4_load(in->mu));
  PUT(Fb + F_MU_T, d4_load(in->mu_t));
  PUT(Fb + F_C_12, cone ? zero : d4_mul(step2, point_cross4(fr->im, &pt, 2, 1, fr->dd[2][1])));
  PUT(Fb + F_C_1T, c1t);
  PUT(Fb + F_C_2T, c2t);
  return bad;
}

/* The patch's warm start, clamped as the items clamp it: each normal into
 * [0, ∞), the tangents onto the disc (cone) or into ±μΣλn (box), the
 * torsion into ±μ r Σλn; an empty lane's inputs are zeros and its
 * impulses come out 0. */
static SIMD_INLINE void patch_warm(const point_inputs *in, bool cone, lcp_d4 lam[POINT_MAX + 3],
                                   const int K) {
  const lcp_d4 zero = d4_splat(0.0), one = d4_splat(1.0);
  lcp_d4 total = zero;
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
    lcp_d4 l = d4_load(in->lambda[q]);
    lam[q] = d4_select(d4_lt(l, zero), zero, l);
    total = d4_add(total, lam[q]);
  }
  lcp_d4 l1 = d4_load(in->lambda[K]), l2 = d4_load(in->lambda[K + 1]);
  lcp_d4 bound = d4_mul(d4_load(in->mu), total);
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
  lam[K] = l1;
  lam[K + 1] = l2;
  if (K >= 2) {
    lcp_d4 lt = d4_load(in->lambda[K + 2]), bt = d4_mul(d4_load(in->mu_t), total);
    lt = d4_select(d4_lt(lt, d4_neg(bt)), d4_neg(bt), lt);
    lam[K + 2] = d4_select(d4_gt(lt, bt), bt, lt);
  }
}

/* v += M⁻¹Jᵀλ of the warm start: each point's normal impulse, then the
 * patch's friction at its centre (point_apply) */
static SIMD_INLINE void patch_warm_apply(const lane_group *g, const double *rec,
                                         const point_frame *fr, const lcp_d4 lam[POINT_MAX + 3],
                                         const int K) {
  lcp_d4 V[2][6], arm[2][3], P[3];
  group_gather(g, V);
#pragma GCC unroll 4
  for (int32_t q = 0; q < K; ++q) {
#pragma GCC unroll 2
    for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
      for (int c = 0; c < 3; ++c)
        arm[s][c] = d4_load(rec + LANES * (H_SIZE + Q_SIZE * q + Q_ARM + 3 * s + c));
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      P[c] = d4_mul(fr->D[0][c], lam[q]);
    point_apply(rec, V, arm, P, fr->D[0], d4_splat(0.0), false);
  }
#pragma GCC unroll 2
  for (int s = 0; s < 2; ++s)
#pragma GCC unroll 3
    for (int c = 0; c < 3; ++c)
      arm[s][c] = d4_load(rec + LANES * (H_SIZE + Q_SIZE * K + F_ARM + 3 * s + c));
#pragma GCC unroll 3
  for (int c = 0; c < 3; ++c)
    P[c] = d4_madd(d4_mul(fr->D[1][c], lam[K]), fr->D[2][c], lam[K + 1]);
  point_apply(rec, V, arm, P, fr->D[0], K >= 2 ? lam[K + 2] : d4_splat(0.0), K >= 2);
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
  if (m4_any(patch_rows_fill(&in, &fr, omega, cone, used, rec, K)))
    return false;
  /* empty lanes: zero fields (their steps, 1/0, made NaNs) */
  const int32_t fields = lcp__contact_unit_fields(FORM_POINTS, K);
  for (int32_t l = g->lanes_used; l < LANES; ++l)
    for (int32_t f = 0; f < fields; ++f)
      rec[LANES * f + l] = 0.0;
  lcp_d4 lam[POINT_MAX + 3];
  patch_warm(&in, cone, lam, K);
  for (int32_t r = 0; r < solver_patch_rows(K); ++r)
    d4_store(g->lam + LANES * r, lam[r]);
  patch_warm_apply(g, rec, &fr, lam, K);
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
 * targets only rewrite those fields, lane by lane. Patch units carry their
 * normals' biases alone (their friction and torsion rows have no target). */
void lcp__contact_group_retarget(lane_group *g, const double *targets) {
  for (int32_t lane = 0; lane < g->lanes_used; ++lane) {
    for (int32_t q = 0; q < g->count[lane]; ++q) {
      if (g->form == FORM_POINTS) {
        /* a patch: its K normal rows first, row + q */
        const int32_t Q = H_SIZE + Q_SIZE * q;
        g->rec[LANES * (Q + Q_BIAS) + lane] =
            g->rec[LANES * (Q + Q_STEP) + lane] * targets[g->row[lane] + q];
      } else {
        const double *t = targets + g->row[lane] + 3 * q;
        const int32_t P = U_SIZE + P_SIZE * q + P_ROWS;
        for (int d = 0; d < 3; ++d)
          g->rec[LANES * (P + R_BIAS + d) + lane] = g->rec[LANES * (P + R_STEP + d) + lane] * t[d];
      }
    }
  }
}
