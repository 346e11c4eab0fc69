/* SPDX-License-Identifier: Apache-2.0 */
/* The joint rows: for each movable joint its limit, damping, friction and
 * controller rows, all on the joint's own velocity. */
#include "rows_internal.h"

#include <math.h>
#include <string.h>

/* ---- joint rows ----
 *
 * Every row of a movable joint acts on its velocity qd_v alone: with
 * J = ±e_v its response M⁻¹Jᵀ = ±column v of M⁻¹ (lcp__mb_response_dof), which
 * the joint's rows share (the upper limit's is the negation). */

/* Limit rows are made this close to a limit (rad or m) and also when the
 * free velocity would cross it within the step, so the row is there before
 * the joint arrives (speculatively, like contacts with their margin). */
#define JOINT_LIMIT_MARGIN 0.02

/* Which limit rows a joint at q with free velocity u needs: bit 0 the lower,
 * bit 1 the upper. */
static int joint_limits_near(const joint_model *joint, double q, double u, double h) {
  if (!joint->has_limits)
    return 0;
  double reach = JOINT_LIMIT_MARGIN + h * fabs(u);
  return (q - joint->lower < reach ? 1 : 0) | (joint->upper - q < reach ? 2 : 0);
}

bool lcp__rows_robot_touched(const lcp_world_t *world, const step_context *ctx, int32_t r) {
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    if (ctx->geom_robot[pair->a] == r || ctx->geom_robot[pair->b] == r)
      return true;
  }
  const robot_model *rm = &world->model.robots[r];
  const robot_state *st = &world->state.robots[r];
  double h = ctx->settings->timestep;
  for (int32_t j = 0; j < rm->mb.joint_count; ++j) {
    const joint_model *joint = &rm->joints[j];
    const mb_link *link = &rm->mb.links[joint->link];
    lcp_control_mode_t mode = st->control[j].mode;
    double u = st->qd[link->v_index] + h * ctx->robot_qdd[r][link->v_index];
    if (joint->damping > 0.0 || joint->friction > 0.0 || mode == LCP_CONTROL_POSITION ||
        mode == LCP_CONTROL_VELOCITY || joint_limits_near(joint, st->q[link->q_index], u, h))
      return true;
  }
  return false;
}

/* What the rows of one joint share. */
typedef struct joint_rows_at {
  int32_t robot, nv;
  int32_t plus, minus; /* coefficients of J = e_v and of J = −e_v */
  const double *warm;  /* [JOINT_ROW_KINDS] last step's impulses */
  int32_t *index;      /* [JOINT_ROW_KINDS] their rows, −1: none */
} joint_rows_at;

/* A one-dof row on a robot's joint velocity, w = ±qd_v⁺ − target (the
 * coefficients at coef), its warm start clamped into its bounds. */
static void add_joint_row(solver_problem *p, int32_t *r, const step_context *ctx,
                          const joint_rows_at *at, int kind, int32_t coef, double target,
                          double cfm, double lo, double hi) {
  at->index[kind] = *r;
  solver_row *row = &p->rows[(*r)++];
  write_absent_side(row, 0);
  row->dof_offset[1] = ctx->robot_dof[at->robot];
  row->dof_count[1] = at->nv;
  row->coef_offset[1] = coef;
  row->kind = ROW_BILATERAL;
  row->normal_row = -1;
  row->mu = 0.0;
  row->target = target;
  row->relax_target = target;
  row->bounce = 0.0;
  row->cfm = cfm;
  row->lo = lo;
  row->hi = hi;
  row->lambda = fmin(fmax(at->warm[kind], lo), hi);
}

/* The position limits, unilateral rows made when near (joint_limits_near):
 *
 *     lower: J = e_v,  λ ≥ 0,  target = Baumgarte's for the depth lower − q;
 *     upper: J = −e_v, λ ≥ 0,  target = Baumgarte's for the depth q − upper;
 *
 * cfm the world's. */
static void joint_limit_rows(solver_problem *p, int32_t *r, const step_context *ctx,
                             const joint_rows_at *at, const joint_model *joint, double q,
                             int near) {
  const lcp_world_settings_t *s = ctx->settings;
  double gap_lower = q - joint->lower, gap_upper = joint->upper - q;
  if (near & 1) {
    add_joint_row(p, r, ctx, at, JOINT_ROW_LOWER, at->plus, rows_position_target(s, -gap_lower),
                  s->cfm, 0.0, INFINITY);
    p->rows[*r - 1].relax_target = rows_relax_target(s, -gap_lower);
  }
  if (near & 2) {
    add_joint_row(p, r, ctx, at, JOINT_ROW_UPPER, at->minus, rows_position_target(s, -gap_upper),
                  s->cfm, 0.0, INFINITY);
    p->rows[*r - 1].relax_target = rows_relax_target(s, -gap_upper);
  }
}

/* Viscous damping b (URDF <dynamics damping>), implicit: the soft row
 *
 *     J = e_v,  target = 0,  cfm = 1/(h b),  λ unbounded,
 *
 * solves qd⁺ + λ/(h b) = 0, i.e. λ = −h b qd⁺: the damping torque at the
 * end-of-step velocity, stable for any b. */
static void joint_damping_row(solver_problem *p, int32_t *r, const step_context *ctx,
                              const joint_rows_at *at, const joint_model *joint) {
  double h = ctx->settings->timestep;
  add_joint_row(p, r, ctx, at, JOINT_ROW_DAMPING, at->plus, 0.0, 1.0 / (h * joint->damping),
                -INFINITY, INFINITY);
}

/* Coulomb joint friction f (URDF <dynamics friction>):
 *
 *     J = e_v,  target = 0,  |λ| ≤ h f,  cfm the world's:
 *
 * the joint sticks while the friction impulse can hold it. */
static void joint_friction_row(solver_problem *p, int32_t *r, const step_context *ctx,
                               const joint_rows_at *at, const joint_model *joint) {
  double bound = ctx->settings->timestep * joint->friction;
  add_joint_row(p, r, ctx, at, JOINT_ROW_FRICTION, at->plus, 0.0, ctx->settings->cfm, -bound,
                bound);
}

/* The implicit PD controller's row: λ = h τ with
 *
 *     τ = kp (q* − q − h qd⁺) + kd (qd* − qd⁺)
 *
 * is the soft row J = e_v with
 *
 *     target = (kp (q* − q) + kd qd*)/(h kp + kd),  cfm = 1/(h (h kp + kd)),
 *     −h (τmax + τff) ≤ λ ≤ h (τmax − τff),
 *
 * τmax the effort limit and τff the feed-forward force the motor already
 * gives (torque mode, gravity compensation). Velocity control is kp = 0.
 * Stable for any gains: the spring and damper act at the end-of-step state. */
static void joint_control_row(solver_problem *p, int32_t *r, const step_context *ctx,
                              const joint_rows_at *at, const joint_model *joint,
                              const lcp_joint_control_t *c, double q, double feedforward) {
  double h = ctx->settings->timestep;
  double kp = c->mode == LCP_CONTROL_POSITION ? c->kp : 0.0, kd = c->kd;
  double stiffness = h * kp + kd;
  double limit = joint_effort_limit(joint, c);
  add_joint_row(p, r, ctx, at, JOINT_ROW_CONTROL, at->plus,
                (kp * (c->position - q) + kd * c->velocity) / stiffness, 1.0 / (h * stiffness),
                -h * (limit + feedforward), h * (limit - feedforward));
}

/* A joint without rows gets no coefficients (its O(n) response is
 * skipped). */
void lcp__joint_rows_build(lcp_world_t *world, step_context *ctx, int32_t robot, row_writer *w) {
  int64_t *coef = &w->coef;
  int32_t r = w->row;
  const robot_model *rm = &world->model.robots[robot];
  const robot_state *st = &world->state.robots[robot];
  const mb_model *mb = &rm->mb;
  mb_data *d = &world->robot_data[robot];
  solver_problem *p = &ctx->problem;
  int32_t nv = mb->nv;
  double h = ctx->settings->timestep;
  for (int32_t j = 0; j < mb->joint_count; ++j) {
    const joint_model *joint = &rm->joints[j];
    const lcp_joint_control_t *c = &st->control[j];
    const mb_link *link = &mb->links[joint->link];
    int32_t v = link->v_index;
    double q = st->q[link->q_index];
    double u_free = ctx->u_free[ctx->robot_dof[robot] + v];
    int near = joint_limits_near(joint, q, u_free, h);
    joint_rows_at at = {robot,
                        nv,
                        -1,
                        -1,
                        &st->joint_impulse[JOINT_ROW_KINDS * j],
                        &ctx->joint_rows[robot][JOINT_ROW_KINDS * j]};
    for (int k = 0; k < JOINT_ROW_KINDS; ++k)
      at.index[k] = -1;
    bool controlled = c->mode == LCP_CONTROL_POSITION || c->mode == LCP_CONTROL_VELOCITY;
    if (!near && !(joint->damping > 0.0) && !(joint->friction > 0.0) && !controlled)
      continue;
    at.plus = (int32_t)*coef, at.minus = at.plus + nv;
    *coef += 2 * nv;
    double *J = p->J + at.plus, *T = p->MinvJt + at.plus;
    memset(J, 0, sizeof(double) * (size_t)nv);
    J[v] = 1.0;
    lcp__mb_response_dof(mb, d, v, T);
    for (int32_t k = 0; k < nv; ++k) {
      p->J[at.minus + k] = -J[k];
      p->MinvJt[at.minus + k] = -T[k];
    }
    if (near)
      joint_limit_rows(p, &r, ctx, &at, joint, q, near);
    if (joint->damping > 0.0)
      joint_damping_row(p, &r, ctx, &at, joint);
    if (joint->friction > 0.0)
      joint_friction_row(p, &r, ctx, &at, joint);
    if (controlled)
      joint_control_row(p, &r, ctx, &at, joint, c, q, ctx->feedforward[robot][j]);
  }
  w->row = r;
}
