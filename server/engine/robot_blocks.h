/* SPDX-License-Identifier: Apache-2.0 */
/* Robot blocks for PGS: a robot's coupled joint rows solved together
 * (robot_blocks.c). */
#ifndef LCP_ROBOT_BLOCKS_H
#define LCP_ROBOT_BLOCKS_H

#include "solver_internal.h"

#include <stdbool.h>
#include <stdint.h>

enum { BLOCK_MAX = 48 };

typedef struct row_block {
  int32_t first, m, width;
  double *v;             /* the range's velocity */
  const double **J, **T; /* [m] the rows' coefficients over the range */
  double *K, *L;         /* m×m: A_bb + diag(cfm); its lower Cholesky factor */
  bool factored;         /* K clearly positive definite: L holds its factor */
  double *lo, *hi, *target, *cfm, *diag;
  double *r, *x, *x0, *q, *blo, *bhi; /* sweep work, [m] each */
} row_block;

/* How many rows from i (before end) form a block: consecutive rows whose
 * only side is the same range of velocity entries, none a friction row,
 * none degenerate, at most BLOCK_MAX; 0 when fewer than 2. diag gets their
 * A_ii + cfm_i. */
int32_t lcp__robot_block_rows(const solver_problem *p, int32_t i, int32_t end, double *diag);
/* Block b for rows [i, i + m) (lcp__robot_block_rows' m and diag): its K and,
 * when K is clearly positive definite, its Cholesky factor (else the block
 * is solved by Dantzig's method alone), its rows' bounds, targets and cfm,
 * and its warm start (the rows' impulses clamped into their bounds, into
 * lam and applied to velocity). LCP_ERR_NO_MEMORY or LCP_OK. */
int lcp__robot_block_init(row_block *b, solver_problem *p, int32_t i, int32_t m, const double *diag,
                          double *lam, arena *scratch);
/* One block Gauss–Seidel update of b (its exact boxed LCP with the other
 * impulses fixed), λ in lam. Folds the residual into *res (the largest
 * |Δλ_i|·(A_ii + cfm_i)) and *sum (their sum). dz: Dantzig's work space for
 * the largest block. Returns whether the update was that exact solution
 * (false when it fell back to a projected Gauss–Seidel pass). */
bool lcp__robot_block_sweep(const row_block *b, dantzig_work *dz, double *lam, double *res,
                            double *sum);

#endif
