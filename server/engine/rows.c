/* SPDX-License-Identifier: Apache-2.0 */
/* The rows of a step's LCP (step_context.h): for each contact point a
 * normal row and two friction rows, for each movable joint its limit,
 * damping, friction and controller rows, side by side, each with its
 * Jacobian, bounds and right-hand side. The solvers (solver.h) see only
 * rows: a Jacobian row J over the velocity vector u, its response M⁻¹Jᵀ,
 * bounds lo ≤ λ ≤ hi, a target and a cfm, so that a row asks for
 *
 *     w = J u⁺ − target,   w + cfm λ = 0 between its bounds,
 *                          ≥ 0 at lo, ≤ 0 at hi,
 *
 * λ being the row's impulse over the step. u holds 6 entries per dynamic
 * body ([v, ω], world axes) and then each robot's qd. Each row starts from
 * the impulse it had last step (warm start; Catto, "Iterative Dynamics with
 * Temporal Coherence"). */
#include "rows_internal.h"

#include <math.h>
#include <string.h>

/* ---- the problem ---- */

/* The problem's arrays: 3 rows per contact point, each with its sides'
 * widths of coefficients; at most JOINT_ROW_KINDS rows per joint sharing
 * 2 nv coefficients; the bodies' mass properties for the contact points. */
static int rows_allocate(lcp_world_t *world, step_context *ctx, row_writer *w) {
  arena *a = &world->scratch;
  solver_problem *p = &ctx->problem;
  int64_t row_capacity = 3 * (int64_t)ctx->contact_count;
  int64_t coef_count = lcp__contact_rows_coefficients(world, ctx);
  int32_t self_width = 0;
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    const mb_model *mb = &world->model.robots[r].mb;
    row_capacity += JOINT_ROW_KINDS * (int64_t)mb->joint_count;
    coef_count += 2 * (int64_t)mb->nv * mb->joint_count;
    if (mb->nv > self_width)
      self_width = mb->nv;
  }
  p->rows = STEP_NEW(a, solver_row, row_capacity);
  p->J = STEP_NEW(a, double, coef_count);
  p->MinvJt = STEP_NEW(a, double, coef_count);
  p->velocity = STEP_NEW(a, double, p->dof_count);
  w->contacts = STEP_NEW(a, solver_contact, ctx->contact_count);
  double *body_inv_mass = STEP_NEW(a, double, p->dof_count / 6);
  double(*body_inv_inertia)[9] = (double(*)[9])STEP_NEW(a, double, 9 * (p->dof_count / 6));
  ctx->manifold_row = STEP_NEW(a, int32_t, ctx->manifold_count);
  w->scratch = STEP_NEW(a, double, 2 * self_width);
  w->responses = STEP_NEW(a, double, 12 * self_width);
  if (!p->rows || !p->J || !p->MinvJt || !p->velocity || !w->contacts || !body_inv_mass ||
      !body_inv_inertia || !ctx->manifold_row || !w->scratch || !w->responses)
    return LCP_ERR_NO_MEMORY;
  p->contacts = w->contacts;
  p->body_inv_mass = body_inv_mass;
  p->body_inv_inertia = (const double(*)[9])body_inv_inertia;
  p->contact_count = 0;
  /* the bodies' mass properties by velocity block: bodies' dofs come
   * first, 6 each (stage_kinematics) */
  for (int32_t i = 0; i < ctx->body_count; ++i) {
    int32_t dof = ctx->body_dof[i];
    if (dof < 0)
      continue;
    body_inv_mass[dof / 6] = world->model.bodies[i].inv_mass;
    memcpy(body_inv_inertia[dof / 6], &ctx->inv_inertia_world[i], sizeof(double[9]));
  }
  return LCP_OK;
}

int lcp__rows_build(lcp_world_t *world, step_context *ctx) {
  solver_problem *p = &ctx->problem;
  row_writer w = {.p = p};
  int rc = rows_allocate(world, ctx, &w);
  if (rc != LCP_OK)
    return rc;
  memcpy(p->velocity, ctx->u_free, sizeof(double) * (size_t)p->dof_count);
  ctx->warm_started = lcp__contact_rows_build(world, ctx, &w);
  for (int32_t robot = 0; robot < ctx->robot_count; ++robot)
    lcp__joint_rows_build(world, ctx, robot, &w);
  p->row_count = w.row;
  return LCP_OK;
}
