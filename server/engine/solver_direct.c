/* SPDX-License-Identifier: Apache-2.0 */
/* The reference solvers: Dantzig's principal pivoting for the dense boxed
 * LCP (lcp__dantzig_dense; also the exact solves of PGS's robot blocks), and
 * the direct solver, which forms the dense A of a problem's rows and solves
 * it by Dantzig's method, with the friction bounds from an outer fixed-point
 * loop on the normal impulses. */
#include "solver_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- Dantzig's principal pivoting for the dense boxed LCP ----
 *
 * Indices are processed one at a time (the incremental form of Dantzig's
 * method in Baraff, "Fast Contact Force Computation for Nonpenetrating
 * Rigid Bodies"). Every processed index is in one of the sets
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

struct dantzig_work {
  int32_t cap;    /* largest n */
  double *L;      /* cap×cap, row stride n: lower Cholesky factor of A_FF in F order */
  double *y;      /* [cap] solve buffer */
  double *dlf;    /* [cap] Δλ of F members, in F order */
  double *w;      /* [cap] w of L and U members */
  double *tmp;    /* [cap] */
  int32_t *fidx;  /* [cap] F members in factor order */
  int32_t *order; /* [cap] processing order */
  uint8_t *state; /* [cap] DZ_* */
};
typedef struct dantzig_work dz_work;

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

dantzig_work *lcp__dantzig_work_new(int32_t n, arena *a) {
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
void lcp__dantzig_cholesky_solve(const double *L, int32_t n, int32_t m, double *y) {
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
  lcp__dantzig_cholesky_solve(ws->L, n, m, ws->y);
  for (int32_t p = 0; p < m; ++p)
    x[ws->fidx[p]] = ws->y[p];
  for (int refine = 0; refine < 2; ++refine) {
    for (int32_t p = 0; p < m; ++p)
      ws->y[p] = -(dz_row_dot(A, n, ws->fidx[p], x, reg) + b[ws->fidx[p]]);
    lcp__dantzig_cholesky_solve(ws->L, n, m, ws->y);
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
    lcp__dantzig_cholesky_solve(ws->L, n, m, ws->y);
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
int lcp__dantzig_solve(dz_work *ws, int32_t n, const double *A, const double *b, const double *lo,
                       const double *hi, double *x) {
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

int lcp__dantzig_dense(int32_t n, const double *A, const double *b, const double *lo,
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
  return lcp__dantzig_solve(&ws, n, A, b, lo, hi, lambda);
}

/* ---- the direct solver's view of the rows ---- */

/* diag[i] for every row; see lcp__solver_row_diag (−1 there: a non-finite A_ii). */
static int compute_diagonal(const solver_problem *p, double *diag) {
  for (int32_t i = 0; i < p->row_count; ++i) {
    diag[i] = lcp__solver_row_diag(p, &p->rows[i]);
    if (diag[i] < 0.0)
      return LCP_ERR_NUMERIC;
  }
  return LCP_OK;
}

/* Rows i and i+1 are solved together on the friction disc (cone model). */
static bool is_cone_pair(const solver_problem *p, const double *diag, int32_t i) {
  const solver_row *r = p->rows;
  return i + 1 < p->row_count && r[i].kind == ROW_FRICTION_1 && r[i + 1].kind == ROW_FRICTION_2 &&
         r[i + 1].normal_row == r[i].normal_row && r[i + 1].normal_count == r[i].normal_count &&
         diag[i] > 0.0 && diag[i + 1] > 0.0;
}

static double pair_lambda_max(const solver_problem *p, const double *diag, int32_t i) {
  return lcp__solver_pair_lambda_max(p, i, diag[i], diag[i + 1]);
}

/* Warm start: the rows' lambda, clamped into the bounds
 * (friction bounds from the already clamped normal), zero for degenerate rows. */
static void clamp_warm_start(const solver_problem *p, const double *diag, bool cone, double *lam) {
  const solver_row *r = p->rows;
  for (int32_t i = 0; i < p->row_count; ++i)
    if (!is_friction(r[i].kind))
      lam[i] = diag[i] > 0.0 ? clampd(r[i].lambda, r[i].lo, r[i].hi) : 0.0;
  for (int32_t i = 0; i < p->row_count; ++i) {
    if (!is_friction(r[i].kind))
      continue;
    double bound = lcp__solver_friction_bound(&r[i], lam, NULL);
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

/* ---- the direct solver ----
 *
 * Dense A_kl = ½(J_k·M⁻¹J_lᵀ + J_l·M⁻¹J_kᵀ) + δ_kl cfm_k over the
 * non-degenerate rows (symmetrised: the two products agree in exact
 * arithmetic, and the factorisation needs exact symmetry), b = J u_free −
 * target. Friction bounds depend on λn (a patch's total Σλn, solver.h),
 * so Dantzig runs inside a fixed-point
 * loop on them (ODE's findex idea, done as an outer loop), starting from the
 * warm-started impulses, until the solution stops changing (≤ 50 solves).
 * The change is measured on w, max|A Δλ| (m/s; reported as the residual,
 * and the loop count as iterations): with redundant contacts λ is fixed
 * only up to directions that A barely sees, and its noise there must not
 * keep the loop going. The bounds are:
 *   box model (and torsion rows): |λt_k| ≤ μ Σλn(previous solve);
 *   cone model: |λt_k| ≤ μ Σλn |c_k| with c a unit vector per contact, i.e. a
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

/* The dense problem over the m active (non-degenerate) rows. */
typedef struct direct_problem {
  int32_t m;
  size_t ms;              /* m, at least 1: the row stride of A */
  int32_t *act;           /* [m] active index → row */
  int32_t *pos;           /* [row_count] row → active index, −1 if degenerate */
  double *A, *b;          /* m×m, [m] */
  double *bs;             /* b + A λ0 */
  double *lo, *hi, *x0;   /* the shifted bounds and the shift λ0 */
  double *x, *lam, *prev; /* Dantzig's solution, λ, the previous solve's λ */
  double *cdir;           /* |c_k| of cone pair rows */
  double *alpha;          /* 1/λmax of cone pair rows */
  int32_t *pair;          /* cone: partner active index, else −1 */
  bool has_friction, cone;
  dz_work ws;
} direct_problem;

static int direct_alloc(direct_problem *d, const solver_problem *problem, const double *diag,
                        arena *scratch) {
  const int32_t n = problem->row_count;
  d->m = 0;
  for (int32_t i = 0; i < n; ++i) {
    d->pos[i] = diag[i] > 0.0 ? d->m : -1;
    if (diag[i] > 0.0)
      d->act[d->m++] = i;
  }
  size_t ms = d->m > 0 ? (size_t)d->m : 1;
  d->ms = ms;
  d->A = ARENA_NEW(scratch, double, ms *ms);
  d->b = ARENA_NEW(scratch, double, ms);
  d->bs = ARENA_NEW(scratch, double, ms);
  d->lo = ARENA_NEW(scratch, double, ms);
  d->hi = ARENA_NEW(scratch, double, ms);
  d->x0 = ARENA_NEW(scratch, double, ms);
  d->x = ARENA_NEW(scratch, double, ms);
  d->lam = ARENA_NEW(scratch, double, ms);
  d->prev = ARENA_NEW(scratch, double, ms);
  d->cdir = ARENA_NEW(scratch, double, ms);
  d->alpha = ARENA_NEW(scratch, double, ms);
  d->pair = ARENA_NEW(scratch, int32_t, ms);
  if (!d->A || !d->b || !d->bs || !d->lo || !d->hi || !d->x0 || !d->x || !d->lam || !d->prev ||
      !d->cdir || !d->alpha || !d->pair || dz_alloc(&d->ws, d->m, scratch) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  return LCP_OK;
}

/* A, b, the first λ (the warm start) and the cone pairs' first boxes. */
static void direct_fill(direct_problem *d, const solver_problem *problem, const double *diag,
                        const double *warm) {
  const solver_row *rows = problem->rows;
  const int32_t m = d->m;
  const size_t ms = d->ms;
  d->has_friction = false;
  for (int32_t k = 0; k < m; ++k) {
    const solver_row *rk = &rows[d->act[k]];
    for (int32_t l = 0; l <= k; ++l) {
      const solver_row *rl = &rows[d->act[l]];
      double a =
          0.5 * (lcp__solver_row_cross(problem, rk, rl) + lcp__solver_row_cross(problem, rl, rk));
      d->A[(size_t)k * ms + (size_t)l] = a;
      d->A[(size_t)l * ms + (size_t)k] = a;
    }
    d->A[(size_t)k * ms + (size_t)k] = diag[d->act[k]];
    d->b[k] = lcp__solver_row_velocity(problem, rk, problem->velocity);
    d->prev[k] = warm[d->act[k]];
    d->pair[k] = -1;
    d->cdir[k] = 1.0;
    d->alpha[k] = 0.0;
    d->has_friction |= is_friction(rk->kind);
  }
  if (!d->cone)
    return;
  for (int32_t k = 0; k + 1 < m; ++k) {
    int32_t i = d->act[k];
    if (d->act[k + 1] != i + 1 || !is_cone_pair(problem, diag, i))
      continue;
    d->pair[k] = k + 1;
    d->pair[k + 1] = k;
    d->alpha[k] = d->alpha[k + 1] = 1.0 / pair_lambda_max(problem, diag, i);
    double l1 = warm[i], l2 = warm[i + 1], len = hypot(l1, l2);
    d->cdir[k] = len > 0.0 ? fabs(l1) / len : sqrt(0.5);
    d->cdir[k + 1] = len > 0.0 ? fabs(l2) / len : sqrt(0.5);
    ++k;
  }
}

/* The bounds for the next solve, from the previous λn (and the cone
 * boxes' directions), shifted so that they hold 0: lo, hi, x0 and bs. */
static void direct_bounds(direct_problem *d, const solver_row *rows) {
  const int32_t m = d->m;
  bool shifted = false;
  for (int32_t k = 0; k < m; ++k) {
    const solver_row *rk = &rows[d->act[k]];
    double l, h;
    if (is_friction(rk->kind)) {
      double r = lcp__solver_friction_bound(rk, d->prev, d->pos) * d->cdir[k];
      l = -r;
      h = r;
    } else {
      l = rk->lo;
      h = rk->hi;
    }
    d->x0[k] = clampd(0.0, l, h);
    shifted |= d->x0[k] != 0.0;
    d->lo[k] = l - d->x0[k];
    d->hi[k] = h - d->x0[k];
  }
  for (int32_t k = 0; k < m; ++k)
    d->bs[k] = shifted ? d->b[k] + dz_row_dot(d->A, m, k, d->x0, 0.0) : d->b[k];
}

/* After a solve: λ = x + x0, the change of this solve measured as the
 * change of w = Aλ + b (*change, m/s, the units of the PGS residual) and
 * the size of w's terms (*scale). x is left holding Δλ. */
static void direct_change(direct_problem *d, double *change, double *scale) {
  const int32_t m = d->m;
  for (int32_t k = 0; k < m; ++k) {
    d->lam[k] = d->x[k] + d->x0[k];
    d->x[k] = d->lam[k] - d->prev[k];
  }
  *change = 0.0;
  *scale = 0.0;
  for (int32_t k = 0; k < m; ++k) {
    double dw = fabs(dz_row_dot(d->A, m, k, d->x, 0.0));
    *change = dw > *change ? dw : *change;
    double sk = fabs(d->b[k]) + fabs(dz_row_dot(d->A, m, k, d->lam, 0.0));
    *scale = sk > *scale ? sk : *scale;
  }
}

/* The cone boxes re-aimed at g = λt − wt/λmax (c = |g|/‖g‖). */
static void direct_reaim(direct_problem *d) {
  const int32_t m = d->m;
  for (int32_t k = 0; k < m; ++k) {
    if (d->pair[k] != k + 1)
      continue;
    double w1 = dz_row_dot(d->A, m, k, d->lam, 0.0) + d->b[k];
    double w2 = dz_row_dot(d->A, m, k + 1, d->lam, 0.0) + d->b[k + 1];
    double g1 = d->lam[k] - d->alpha[k] * w1, g2 = d->lam[k + 1] - d->alpha[k] * w2;
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
      d->cdir[k] = c1;
      d->cdir[k + 1] = c2;
    }
  }
}

/* The solution into the rows and the velocity. The friction impulses obey
 * the bounds of the λn they were solved with (the previous solve's); they
 * are put inside the bounds of the final λn, so that the returned λ is
 * feasible even when the loop stopped at its cap. After convergence this
 * moves them by the noise of λn only. */
static void direct_finish(direct_problem *d, solver_problem *problem) {
  const solver_row *rows = problem->rows;
  const int32_t m = d->m, n = problem->row_count;
  double *lam = d->lam;
  for (int32_t k = 0; k < m; ++k) {
    const solver_row *rk = &rows[d->act[k]];
    if (!is_friction(rk->kind))
      continue;
    double r = lcp__solver_friction_bound(rk, lam, d->pos);
    if (d->pair[k] == k + 1) {
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
    problem->rows[i].lambda = d->pos[i] >= 0 ? lam[d->pos[i]] : 0.0;
  for (int32_t i = 0; i < n; ++i)
    if (problem->rows[i].lambda != 0.0)
      lcp__solver_row_apply(problem, &rows[i], problem->velocity, problem->rows[i].lambda);
}

static int direct_solve_once(const solver_settings *settings, solver_problem *problem,
                             solver_result *result, arena *scratch, int32_t max_rows) {
  lcp__solver_set_result(result, 0, 0.0);
  if (!settings || !problem || !scratch)
    return LCP_ERR_INVALID_ARGUMENT;
  if (problem->row_count > max_rows)
    return LCP_ERR_STATE;
  int rc = lcp__solver_check_problem(problem);
  if (rc != LCP_OK)
    return rc;
  lcp__solver_contacts_expand_all(problem);
  const int32_t n = problem->row_count;
  if (n == 0)
    return LCP_OK;
  direct_problem d;
  d.cone = settings->friction_model == LCP_FRICTION_CONE;
  double *diag = ARENA_NEW(scratch, double, n);
  double *warm = ARENA_NEW(scratch, double, n);
  d.act = ARENA_NEW(scratch, int32_t, n);
  d.pos = ARENA_NEW(scratch, int32_t, n);
  if (!diag || !warm || !d.act || !d.pos)
    return LCP_ERR_NO_MEMORY;
  rc = compute_diagonal(problem, diag);
  if (rc != LCP_OK)
    return rc;
  clamp_warm_start(problem, diag, d.cone, warm);
  if (direct_alloc(&d, problem, diag, scratch) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  direct_fill(&d, problem, diag, warm);

  int32_t loops = 0;
  double change = 0.0;
  for (;;) {
    direct_bounds(&d, problem->rows);
    rc = lcp__dantzig_solve(&d.ws, d.m, d.A, d.bs, d.lo, d.hi, d.x);
    ++loops;
    if (rc != LCP_OK) {
      lcp__solver_set_result(result, loops, change);
      return rc;
    }
    double scale;
    direct_change(&d, &change, &scale);
    if (d.cone)
      direct_reaim(&d);
    memcpy(d.prev, d.lam, sizeof(double) * (size_t)d.m);
    if (!d.has_friction || loops >= DIRECT_MAX_LOOPS || change <= settings->tolerance ||
        change <= 1e-12 * scale)
      break;
  }
  direct_finish(&d, problem);
  lcp__solver_patches_even(problem, PATCH_W_TOLERANCE, NULL);
  lcp__solver_set_result(result, loops, d.has_friction ? change : 0.0);
  return lcp__solver_check_finite_output(problem);
}

/* With relax iterations, the problem is solved twice: with the rows'
 * targets (the velocity the positions move with), then from u_free again,
 * warm-started from that solution, with the relax targets
 * (lcp__solver_relax_targets); the rows' targets are given back after. */
int lcp__solver_direct(const solver_settings *settings, solver_problem *problem,
                       solver_result *result, arena *scratch, int32_t max_rows) {
  int32_t main_iterations = 1, relax_iterations = 0;
  bool bounces = false;
  if (settings && problem)
    lcp__solver_split_iterations(settings, problem, &main_iterations, &relax_iterations, &bounces);
  (void)bounces; /* the first solve wrote the impulses into the rows */
  if (!settings || !problem || !scratch || (relax_iterations == 0 && !problem->position_velocity))
    return direct_solve_once(settings, problem, result, scratch, max_rows);
  const int32_t n = problem->row_count, dofs = problem->dof_count;
  double *u_free = ARENA_NEW(scratch, double, dofs > 0 ? dofs : 1);
  double *targets = ARENA_NEW(scratch, double, n > 0 ? n : 1);
  if (!u_free || !targets)
    return LCP_ERR_NO_MEMORY;
  memcpy(u_free, problem->velocity, sizeof(double) * (size_t)dofs);
  int rc = direct_solve_once(settings, problem, result, scratch, max_rows);
  if (rc != LCP_OK)
    return rc;
  if (problem->position_velocity)
    memcpy(problem->position_velocity, problem->velocity, sizeof(double) * (size_t)dofs);
  if (relax_iterations == 0)
    return LCP_OK;
  lcp__solver_relax_targets(problem, targets);
  for (int32_t i = 0; i < n; ++i) {
    double t = problem->rows[i].target;
    problem->rows[i].target = targets[i];
    targets[i] = t;
  }
  memcpy(problem->velocity, u_free, sizeof(double) * (size_t)dofs);
  rc = direct_solve_once(settings, problem, result, scratch, max_rows);
  for (int32_t i = 0; i < n; ++i)
    problem->rows[i].target = targets[i];
  return rc;
}
