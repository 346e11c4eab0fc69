/* SPDX-License-Identifier: Apache-2.0 */
/* Projected Jacobi: the PGS update of every row from one velocity,
 *
 *     λ ← clamp(λ − ω D⁻¹(A λ + b + cfm λ), lo, hi)  (D = diag(A) + cfm),
 *
 * i.e. a projected gradient step in the D metric, all rows at once; it
 * converges for ω < 2/ρ(D⁻¹A). Cone pairs step with 1/λmax of their 2×2
 * block and are projected onto the disc, as in PGS. Every row is an item
 * (solver_internal.h), contact points from their coefficients. */
#include "solver_internal.h"

#include <math.h>
#include <string.h>

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

/* Every row as an item, its warm start applied to velocity. */
static int jacobi_setup(const solver_settings *settings, solver_problem *p, arena *scratch,
                        solver_items *s) {
  int rc = lcp__solver_check_iterative(settings, p, scratch);
  if (rc != LCP_OK)
    return rc;
  if (lcp__solver_items_init(s, p->row_count, scratch) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  lcp__solver_contacts_expand_all(p);
  const bool cone = settings->friction_model == LCP_FRICTION_CONE;
  for (int32_t i = 0; i < p->row_count;) {
    double d = lcp__solver_row_diag(p, &p->rows[i]);
    if (d < 0.0)
      return LCP_ERR_NUMERIC;
    if (!(d > 0.0)) {
      lcp__solver_items_skip(s, p, i++);
      continue;
    }
    int taken = lcp__solver_items_add(s, p, i, d, settings->omega, cone);
    if (taken < 0)
      return taken;
    i += taken;
  }
  return LCP_OK;
}

/* Up to `iterations` sweeps, fewer when the residual falls below the
 * tolerance; LCP_ERR_NUMERIC as soon as a sweep's sum is not finite. */
static int jacobi_iterate(const solver_settings *settings, solver_items *s, double *next,
                          int32_t iterations, int32_t *it, double *res) {
  for (int32_t k = 0; s->count > 0 && k < iterations; ++k) {
    double sum;
    *res = jacobi_sweep(s->items, s->count, s->lam, next, &sum);
    ++*it;
    if (!isfinite(sum))
      return LCP_ERR_NUMERIC;
    if (*res < settings->tolerance)
      break;
  }
  return LCP_OK;
}

int lcp__solver_jacobi(const solver_settings *settings, solver_problem *problem,
                       solver_result *result, arena *scratch) {
  lcp__solver_set_result(result, 0, 0.0);
  solver_items s;
  int rc = jacobi_setup(settings, problem, scratch, &s);
  if (rc != LCP_OK)
    return rc;
  double *next = ARENA_NEW(scratch, double, problem->row_count > 0 ? problem->row_count : 1);
  if (!next)
    return LCP_ERR_NO_MEMORY;
  double *targets = NULL; /* the relax iterations' */
  int32_t main_iterations, relax_iterations, it = 0;
  bool bounces;
  lcp__solver_split_iterations(settings, problem, &main_iterations, &relax_iterations, &bounces);
  double res = 0.0;
  rc = jacobi_iterate(settings, &s, next, main_iterations, &it, &res);
  if (rc == LCP_OK && problem->position_velocity)
    memcpy(problem->position_velocity, problem->velocity,
           sizeof(double) * (size_t)problem->dof_count);
  if (rc == LCP_OK && relax_iterations > 0 && s.count > 0) {
    /* the relax targets into the items' biases (as PGS's pgs_retarget) */
    if (bounces) /* only a bounce depends on the impulses */
      lcp__solver_items_finish(&s, problem);
    targets = ARENA_NEW(scratch, double, problem->row_count);
    if (!targets)
      return LCP_ERR_NO_MEMORY;
    lcp__solver_relax_targets(problem, targets);
    for (int32_t k = 0; k < s.count; ++k)
      s.items[k].bias = s.items[k].step * targets[s.items[k].row];
    rc = jacobi_iterate(settings, &s, next, relax_iterations, &it, &res);
  }
  lcp__solver_items_finish(&s, problem);
  lcp__solver_patches_even(problem, PATCH_W_TOLERANCE, targets);
  lcp__solver_set_result(result, it, res);
  return rc != LCP_OK ? rc : lcp__solver_check_finite_output(problem);
}
