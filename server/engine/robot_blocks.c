/* SPDX-License-Identifier: Apache-2.0 */
/* Blocks of generic rows on one range of velocity entries: a robot's
 * joint rows, for PGS (robot_blocks.h).
 *
 * A robot's joint rows (limits, damping, friction, PD control: rows.c) all
 * act on the robot's dofs only, and M⁻¹ of a multibody is dense, so they
 * are strongly coupled: A_ij = (M⁻¹)_{v_i v_j}. Row-by-row Gauss–Seidel
 * then converges slowly (the 7-dof arm's 7 PD rows: all 20 sweeps,
 * residual 1e-5). A maximal run of consecutive rows whose only side is the
 * same dof range (none a friction row, none degenerate, 2 to BLOCK_MAX
 * rows) is instead one block of block Gauss–Seidel (projected Gauss–Seidel's
 * splitting A = B + C with B = L + D, D now block diagonal; Cottle, Pang and
 * Stone, "The Linear Complementarity Problem", on splitting methods): each
 * sweep solves the block's boxed LCP exactly, with the rest of λ fixed,
 *
 *     K x + q ⟂ lo ≤ x ≤ hi,  K = A_bb + diag(cfm_b),  q = r − K λ_b,
 *     r_i = J_i·v − target_i + cfm_i λ_i (the rows' current w + cfm λ),
 *
 * by x = λ_b − K⁻¹ r (Cholesky factor of K, made once per solve) when that
 * is inside the bounds, else by Dantzig's method on K (lcp__dantzig_solve). Then
 * v += Σ_i M⁻¹J_iᵀ (x_i − λ_i). Block Gauss–Seidel with exact block solves
 * converges for positive definite A like PGS with ω = 1; ω does not apply
 * to blocks. A block whose K is not clearly positive definite (redundant
 * rows without cfm: a joint's lower and upper bound rows, J = e_v and
 * −e_v, or a controller on a joint beside its limit row) has no factor and
 * is solved by Dantzig's method alone in every sweep: of two opposite
 * bounds at most one is active at a solution, and the principal pivoting
 * keeps only consistent rows in its active set (regularising only when
 * rounding makes that singular), where sweeping such a block row by row
 * would converge as slowly as plain projected Gauss–Seidel on the whole
 * robot. */
#include "robot_blocks.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* The one present side of row r: its index, or −1 when there are two or none. */
static int only_side(const solver_row *r) {
  bool s0 = r->dof_count[0] > 0, s1 = r->dof_count[1] > 0;
  return s0 == s1 ? -1 : (s0 ? 0 : 1);
}

int32_t lcp__robot_block_rows(const solver_problem *p, int32_t i, int32_t end, double *diag) {
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
    double d = lcp__solver_row_diag(p, r);
    if (!(d > 0.0))
      break;
    diag[m++] = d;
  }
  return m >= 2 ? m : 0;
}

/* Block b for rows [i, i + m): its layout and the off-diagonal of K.
 * LCP_ERR_NO_MEMORY or LCP_OK. */
static int block_layout(row_block *b, solver_problem *p, int32_t i, int32_t m, arena *scratch) {
  const solver_row *rows = &p->rows[i];
  int s0 = only_side(&rows[0]);
  size_t mm = (size_t)m * (size_t)m;
  b->first = i;
  b->m = m;
  b->width = rows[0].dof_count[s0];
  b->v = p->velocity + rows[0].dof_offset[s0];
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

/* K's diagonal from diag and its factor L: LCP_ERR_STATE when K is not
 * clearly positive definite, else LCP_OK. */
static int block_factor(row_block *b, const double *diag) {
  const int32_t m = b->m;
  for (int32_t k = 0; k < m; ++k) {
    b->diag[k] = diag[k];
    b->K[(size_t)k * (size_t)m + (size_t)k] = diag[k];
  }
  /* Cholesky K = L Lᵀ, column by column: the pivot
   *   L_ll = √(K_ll − Σ_c<l L_lc²),
   * then below it L_kl = (K_kl − Σ_c<l L_kc L_lc) / L_ll. The sums read
   * only earlier columns, finished a column before (row by row, each
   * entry's sum read the entries just stored in its row, which stalls the
   * loads). A pivot below 1e-12 of its K_ll means K is singular to
   * rounding. */
  const double *K = b->K;
  double *L = b->L;
  for (int32_t l = 0; l < m; ++l) {
    const double *L_l = L + (size_t)l * (size_t)m;
    for (int32_t k = l; k < m; ++k) {
      double *L_k = L + (size_t)k * (size_t)m;
      double sum = K[(size_t)k * (size_t)m + (size_t)l];
      for (int32_t c = 0; c < l; ++c)
        sum -= L_k[c] * L_l[c];
      if (k == l) {
        if (!(sum > 1e-12 * diag[l]))
          return LCP_ERR_STATE;
        L_k[l] = sqrt(sum);
      } else {
        L_k[l] = sum / L_l[l];
      }
    }
  }
  return LCP_OK;
}

/* Block b's values from its rows: bounds, targets, cfm, K_kk = A_kk + cfm_k
 * (diag, as the items'), the factor of K when it has one, and the warm
 * start. */
static void block_values(row_block *b, solver_problem *p, const double *diag, double *lam) {
  const solver_row *rows = &p->rows[b->first];
  for (int32_t k = 0; k < b->m; ++k) {
    b->lo[k] = rows[k].lo;
    b->hi[k] = rows[k].hi;
    b->target[k] = rows[k].target;
    b->cfm[k] = rows[k].cfm;
  }
  b->factored = block_factor(b, diag) == LCP_OK;
  block_warm(b, p, lam);
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

bool lcp__robot_block_sweep(const row_block *b, dantzig_work *dz, double *lam, double *res_io,
                            double *sum_io) {
  const int32_t m = b->m, w = b->width;
  double *lb = lam + b->first, *x = b->x;
  bool inside = false, exact = true;
  for (int32_t k = 0; k < m; ++k)
    b->r[k] = (side_dot(b->J[k], b->v, w) - b->target[k]) + b->cfm[k] * lb[k];
  if (b->factored) {
    inside = true;
    memcpy(x, b->r, sizeof(double) * (size_t)m);
    lcp__dantzig_cholesky_solve(b->L, m, m, x);
    for (int32_t k = 0; k < m; ++k) {
      x[k] = lb[k] - x[k];
      inside &= x[k] >= b->lo[k] && x[k] <= b->hi[k];
    }
  }
  if (!inside) {
    /* Dantzig on x = x0 + y with x0 = clamp(0, lo, hi), as lcp__solver_direct
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
    if (lcp__dantzig_solve(dz, m, b->K, b->q, b->blo, b->bhi, x) == LCP_OK) {
      for (int32_t k = 0; k < m; ++k)
        x[k] = clampd(b->x0[k] + x[k], b->lo[k], b->hi[k]);
    } else {
      /* no exact block solution (non-finite data): one projected
       * Gauss–Seidel pass on the block instead, from λ_b */
      block_gs_pass(b, lb, x);
      exact = false;
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
  return exact;
}

int lcp__robot_block_init(row_block *b, solver_problem *p, int32_t i, int32_t m, const double *diag,
                          double *lam, arena *scratch) {
  int rc = block_layout(b, p, i, m, scratch);
  if (rc == LCP_OK)
    block_values(b, p, diag, lam);
  return rc;
}
