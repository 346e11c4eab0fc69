/* SPDX-License-Identifier: Apache-2.0 */
/* The joint rows: for each movable joint its bound rows (position and
 * velocity limits), damping, friction and controller rows, all on the
 * joint's own velocity. */
#include "rows_internal.h"

#include <math.h>
#include <string.h>

/* ---- joint rows ----
 *
 * Every row of a movable joint acts on its velocity qd_v alone: with
 * J = ±e_v its response M⁻¹Jᵀ = ±column v of M⁻¹ (lcp__mb_response_dof), which
 * the joint's rows share (the upper limit's is the negation). */

/* ---- which bound rows a joint gets ----
 *
 * A joint's position limits and its velocity limit share two rows, both on
 * J = ±e_v with λ ≥ 0 (joint_bound_rows): the lower row asks qd⁺ ≥ a, the
 * upper row qd⁺ ≤ b. Such a row must be there whenever the joint could end
 * the step past a bound, whatever the other joints do. Predicting that
 * from the joint's own free velocity is not enough: when one joint of a
 * chain stops at its limit, the solve passes its momentum on to the
 * others, and a neighbour without a row then crosses its limit in the same
 * step (hundreds of rad on the 7-dof arm under full torques). Bounding
 * every joint's speed a priori (a row whenever the gap is below
 * margin + h·v_max, v_max its velocity limit) does not help when velocity
 * limits are off or absent. So the rows are made in two passes, in the way
 * an active-set method grows its working set (and as speculative limit
 * constraints of Featherstone-style articulated solvers are made ahead of
 * contact):
 *
 * 1. before the solve, for a joint near a bound by its free velocity u:
 *    within JOINT_LIMIT_MARGIN + h |u| of a position limit, or |u| above
 *    (1 − VELOCITY_LIMIT_MARGIN) v_max; and for a joint whose bound row
 *    pushed last step (its warm-start impulse > 0), since the set of
 *    active bounds changes little from step to step (joint_bounds_near);
 * 2. after the solve, for a joint without the row whose solved velocity
 *    would take it past a position limit (q + h qd⁺ beyond it) or past
 *    v_max (lcp__joint_rows_complete); the solve is then repeated from its
 *    solution (warm start), which happens only in the steps where momentum
 *    flows into a joint like that. Each pass adds rows and none removes
 *    any, so the repetition ends (at most two rows per joint).
 *
 * The margins let the first pass catch the common cases, and keep a robot
 * that no row touches (velocity Verlet, step.c) clear of its bounds. */

/* Limit rows are made this close to a limit (rad or m) and also when the
 * free velocity would cross it within the step, so the row is there before
 * the joint arrives (speculatively, like contacts with their margin). */
#define JOINT_LIMIT_MARGIN 0.02
/* Velocity-limit rows are made from this fraction of the limit below it. */
#define VELOCITY_LIMIT_MARGIN 0.05

/* The velocity limit a joint is held to: its URDF limit when the world
 * enforces them and the joint has one (> 0), else none. */
static double joint_speed_limit(const joint_model *joint, const lcp_world_settings_t *s) {
  return s->enforce_velocity_limits && joint->velocity_limit > 0.0 ? joint->velocity_limit
                                                                   : INFINITY;
}

/* Which bound rows a joint at q needs when its velocity over the step may
 * lie anywhere in [u_low, u_high], `impulse` its rows' impulses of last
 * step: bit 0 the lower, bit 1 the upper. */
static inline int joint_bounds_near(const joint_model *joint, const lcp_world_settings_t *s,
                                    double q, double u_low, double u_high, const double *impulse) {
  double v_max = joint_speed_limit(joint, s);
  /* nothing to bound (a row may have pushed last step while the velocity
   * limit was enforced: not again) */
  if (!joint->has_limits && v_max == INFINITY)
    return 0;
  int near = (impulse[JOINT_ROW_LOWER] > 0.0 ? 1 : 0) | (impulse[JOINT_ROW_UPPER] > 0.0 ? 2 : 0);
  if (joint->has_limits) {
    double reach = JOINT_LIMIT_MARGIN + s->timestep * fmax(fabs(u_low), fabs(u_high));
    near |= (q - joint->lower < reach ? 1 : 0) | (joint->upper - q < reach ? 2 : 0);
  }
  double v_near = (1.0 - VELOCITY_LIMIT_MARGIN) * v_max;
  return near | (u_low < -v_near ? 1 : 0) | (u_high > v_near ? 2 : 0);
}

/* Which bounds a joint at q ends the step past: bit 0 the lower (q + h
 * qd_position below its lower limit — the positions move with the main
 * iterations' velocity — or the velocity kept, qd⁺, below −v_max), bit 1
 * the upper. */
static int joint_bounds_crossed(const joint_model *joint, const lcp_world_settings_t *s, double q,
                                double qd_position, double qd) {
  int crossed = 0;
  if (joint->has_limits) {
    double next = q + s->timestep * qd_position;
    crossed |= (next < joint->lower ? 1 : 0) | (next > joint->upper ? 2 : 0);
  }
  double v_max = joint_speed_limit(joint, s);
  return crossed | (qd < -v_max ? 1 : 0) | (qd > v_max ? 2 : 0);
}

/* A robot that no row touches takes velocity Verlet's half kick
 * (step.c), and its velocity at the step's end is qd + ½h(q̈ + q̈⁺), not
 * the qd + h q̈ predicted here: the bounds are checked for the whole range
 * qd ± h|q̈|, which holds both as long as q̈ does not double in a step
 * (and the position margin covers more). */
bool lcp__rows_robot_touched(const lcp_world_t *world, const step_context *ctx, int32_t r) {
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    if (ctx->geom_robot[pair->a] == r || ctx->geom_robot[pair->b] == r)
      return true;
  }
  const robot_model *rm = &world->model.robots[r];
  const robot_state *st = &world->state.robots[r];
  const lcp_world_settings_t *s = ctx->settings;
  for (int32_t j = 0; j < rm->mb.joint_count; ++j) {
    const joint_model *joint = &rm->joints[j];
    const mb_link *link = &rm->mb.links[joint->link];
    lcp_control_mode_t mode = st->control[j].mode;
    double qd = st->qd[link->v_index];
    double change = s->timestep * fabs(ctx->robot_qdd[r][link->v_index]);
    if (joint->damping > 0.0 || joint->friction > 0.0 || mode == LCP_CONTROL_POSITION ||
        mode == LCP_CONTROL_VELOCITY ||
        joint_bounds_near(joint, s, st->q[link->q_index], qd - change, qd + change,
                          &st->joint_impulse[JOINT_ROW_KINDS * j]))
      return true;
  }
  return false;
}

/* What the rows of one joint share. */
typedef struct joint_rows_at {
  int32_t robot, nv;
  int32_t plus, minus; /* coefficients of J = e_v and of J = −e_v (written for an upper row) */
  const double *warm;  /* [JOINT_ROW_KINDS] warm starts (last step's impulses) */
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

/* The bound rows (see "which bound rows a joint gets" above), cfm the
 * world's:
 *
 *     lower: J = e_v,  λ ≥ 0,  qd⁺ ≥ a_lower,
 *     upper: J = −e_v, λ ≥ 0,  qd⁺ ≤ −a_upper,
 *     a = min(max(a_position, −v_max), v_max),
 *
 * a_position the position target of the limit's depth (lower − q, resp.
 * q − upper): past the limit Baumgarte's push-out, bounded by the world's
 * push-out speed; before it −gap/h, so that the joint may approach by
 * exactly the gap in this step (a speculative row: rows_position_target);
 * −∞ for a joint without position limits. v_max is the enforced velocity
 * limit (∞ when none: joint_speed_limit), the lower bound of the velocity
 * a row allows, as PhysX's maximum joint velocity bounds an articulation's
 * joint speeds. A push-out is held to v_max too, so that a joint's two
 * rows can always hold together (a_lower ≤ −a_upper). The relax
 * iterations keep the speculative part and the velocity limit: the same
 * with rows_relax_target. */
static double joint_bound_target(double position_target, double v_max) {
  return fmin(fmax(position_target, -v_max), v_max);
}

static void joint_bound_rows(solver_problem *p, int32_t *r, const step_context *ctx,
                             const joint_rows_at *at, const joint_model *joint, double q,
                             int which) {
  const lcp_world_settings_t *s = ctx->settings;
  double v_max = joint_speed_limit(joint, s);
  for (int side = 0; side < 2; ++side) {
    if (!(which & (1 << side)))
      continue;
    double depth = side == 0 ? joint->lower - q : q - joint->upper;
    double target = joint->has_limits ? rows_position_target(s, depth) : -INFINITY;
    double relax = joint->has_limits ? rows_relax_target(s, depth) : -INFINITY;
    add_joint_row(p, r, ctx, at, side == 0 ? JOINT_ROW_LOWER : JOINT_ROW_UPPER,
                  side == 0 ? at->plus : at->minus, joint_bound_target(target, v_max), s->cfm, 0.0,
                  INFINITY);
    p->rows[*r - 1].relax_target = joint_bound_target(relax, v_max);
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

/* The rows of robot `robot`'s joints from row w->row and coefficient
 * w->coef on. bounds[j] (NULL: joint_bounds_near from the free velocity)
 * are joint j's bound rows; warm[JOINT_ROW_KINDS j + k] (NULL: last step's
 * impulses) the warm starts. A joint without rows gets no coefficients
 * (its O(n) response is skipped). */
static void robot_joint_rows(lcp_world_t *world, step_context *ctx, int32_t robot, row_writer *w,
                             const uint8_t *bounds, const double *warm) {
  int64_t *coef = &w->coef;
  int32_t r = w->row;
  const robot_model *rm = &world->model.robots[robot];
  const robot_state *st = &world->state.robots[robot];
  const mb_model *mb = &rm->mb;
  mb_data *d = &world->robot_data[robot];
  solver_problem *p = &ctx->problem;
  int32_t nv = mb->nv;
  for (int32_t j = 0; j < mb->joint_count; ++j) {
    const joint_model *joint = &rm->joints[j];
    const lcp_joint_control_t *c = &st->control[j];
    const mb_link *link = &mb->links[joint->link];
    int32_t v = link->v_index;
    double q = st->q[link->q_index];
    int near;
    if (bounds) {
      near = bounds[j];
    } else {
      double u_free = ctx->u_free[ctx->robot_dof[robot] + v];
      near = joint_bounds_near(joint, ctx->settings, q, u_free, u_free,
                               &st->joint_impulse[JOINT_ROW_KINDS * j]);
    }
    joint_rows_at at = {robot,
                        nv,
                        -1,
                        -1,
                        warm ? &warm[JOINT_ROW_KINDS * j] : &st->joint_impulse[JOINT_ROW_KINDS * j],
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
    if (near & 2) { /* J = −e_v is the upper bound row's alone */
      for (int32_t k = 0; k < nv; ++k) {
        p->J[at.minus + k] = -J[k];
        p->MinvJt[at.minus + k] = -T[k];
      }
    }
    if (near)
      joint_bound_rows(p, &r, ctx, &at, joint, q, near);
    if (joint->damping > 0.0)
      joint_damping_row(p, &r, ctx, &at, joint);
    if (joint->friction > 0.0)
      joint_friction_row(p, &r, ctx, &at, joint);
    if (controlled)
      joint_control_row(p, &r, ctx, &at, joint, c, q, ctx->feedforward[robot][j]);
  }
  w->row = r;
}

void lcp__joint_rows_build(lcp_world_t *world, step_context *ctx, int32_t robot, row_writer *w) {
  robot_joint_rows(world, ctx, robot, w, NULL, NULL);
}

/* ---- after the solve: the rows a joint turned out to need ---- */

/* Where the joint rows begin: they are the problem's last rows (rows.c
 * builds the contacts' first), their coefficients 2 nv per joint with rows
 * after the contacts'. */
static void joint_rows_start(const lcp_world_t *world, const step_context *ctx, int32_t *row,
                             int64_t *coef) {
  const solver_problem *p = &ctx->problem;
  int32_t joint_row_count = 0;
  int64_t first = INT64_MAX;
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    const mb_model *mb = &world->model.robots[r].mb;
    const int32_t *index = ctx->joint_rows[r];
    for (int32_t k = 0; k < JOINT_ROW_KINDS * mb->joint_count; ++k) {
      if (index[k] < 0)
        continue;
      ++joint_row_count;
      /* the upper bound row's coefficients are −e_v's, nv after e_v's */
      int64_t at =
          p->rows[index[k]].coef_offset[1] - (k % JOINT_ROW_KINDS == JOINT_ROW_UPPER ? mb->nv : 0);
      first = at < first ? at : first;
    }
  }
  *row = p->row_count - joint_row_count;
  if (joint_row_count > 0) {
    *coef = first;
    return;
  }
  /* no joint rows yet: after the last coefficient any row uses */
  int64_t end = 0;
  for (int32_t i = 0; i < p->row_count; ++i)
    for (int side = 0; side < 2; ++side)
      if (p->rows[i].dof_count[side] > 0) {
        int64_t e = (int64_t)p->rows[i].coef_offset[side] + p->rows[i].dof_count[side];
        end = e > end ? e : end;
      }
  *coef = end;
}

/* The bound rows joint j of robot r has (bits as joint_bounds_near) in
 * *have, and returns those it needs after the solve: the ones it has and
 * those whose bound its solved velocity crosses. A robot no row touches
 * takes velocity Verlet's half kick (step.c): its velocity is not the
 * step's yet, and it has no rows to extend (lcp__rows_robot_touched keeps
 * it clear of its bounds). */
static int joint_bounds_needed(const lcp_world_t *world, const step_context *ctx, int32_t r,
                               int32_t j, int *have) {
  const robot_model *rm = &world->model.robots[r];
  const joint_model *joint = &rm->joints[j];
  const mb_link *link = &rm->mb.links[joint->link];
  const int32_t *index = &ctx->joint_rows[r][JOINT_ROW_KINDS * j];
  *have = (index[JOINT_ROW_LOWER] >= 0 ? 1 : 0) | (index[JOINT_ROW_UPPER] >= 0 ? 2 : 0);
  if (ctx->robot_free[r])
    return *have;
  double q = world->state.robots[r].q[link->q_index];
  int32_t v = ctx->robot_dof[r] + link->v_index;
  return *have | joint_bounds_crossed(joint, ctx->settings, q, ctx->problem.position_velocity[v],
                                      ctx->problem.velocity[v]);
}

/* Does a joint of robot r cross a bound it has no row for (the common
 * answer, no, found with a look at each joint's bounds alone)? */
static bool robot_lacks_rows(const lcp_world_t *world, const step_context *ctx, int32_t r) {
  if (ctx->robot_free[r])
    return false;
  const robot_model *rm = &world->model.robots[r];
  const double *q = world->state.robots[r].q;
  const double *qd = &ctx->problem.velocity[ctx->robot_dof[r]];
  const double *qd_position = &ctx->problem.position_velocity[ctx->robot_dof[r]];
  const int32_t *index = ctx->joint_rows[r];
  for (int32_t j = 0; j < rm->mb.joint_count; ++j) {
    const joint_model *joint = &rm->joints[j];
    const mb_link *link = &rm->mb.links[joint->link];
    int crossed = joint_bounds_crossed(joint, ctx->settings, q[link->q_index],
                                       qd_position[link->v_index], qd[link->v_index]);
    if (((crossed & 1) && index[JOINT_ROW_KINDS * j + JOINT_ROW_LOWER] < 0) ||
        ((crossed & 2) && index[JOINT_ROW_KINDS * j + JOINT_ROW_UPPER] < 0))
      return true;
  }
  return false;
}

int lcp__joint_rows_complete(lcp_world_t *world, step_context *ctx, bool *added) {
  solver_problem *p = &ctx->problem;
  bool lacking = false;
  int32_t joints = 0;
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    lacking = lacking || robot_lacks_rows(world, ctx, r);
    joints += world->model.robots[r].mb.joint_count;
  }
  *added = lacking;
  if (!lacking)
    return LCP_OK;
  /* Every joint's rows again, in place (a robot's rows stay together, one
   * block for PGS: robot_blocks.c), with the new bound rows; each row
   * starts from its impulse in this solve, a new one from last step's. */
  uint8_t *bounds = STEP_NEW(&world->scratch, uint8_t, joints);
  double *warm = STEP_NEW(&world->scratch, double, JOINT_ROW_KINDS *(int64_t)joints);
  if (!bounds || !warm)
    return LCP_ERR_NO_MEMORY;
  for (int32_t r = 0, at = 0; r < ctx->robot_count; ++r) {
    const robot_state *st = &world->state.robots[r];
    for (int32_t j = 0; j < world->model.robots[r].mb.joint_count; ++j, ++at) {
      int have;
      bounds[at] = (uint8_t)joint_bounds_needed(world, ctx, r, j, &have);
      for (int k = 0; k < JOINT_ROW_KINDS; ++k) {
        int32_t row = ctx->joint_rows[r][JOINT_ROW_KINDS * j + k];
        warm[JOINT_ROW_KINDS * at + k] =
            row >= 0 ? p->rows[row].lambda : st->joint_impulse[JOINT_ROW_KINDS * j + k];
      }
    }
  }
  row_writer w = {.p = p};
  joint_rows_start(world, ctx, &w.row, &w.coef);
  for (int32_t r = 0, at = 0; r < ctx->robot_count; ++r) {
    robot_joint_rows(world, ctx, r, &w, &bounds[at], &warm[JOINT_ROW_KINDS * at]);
    at += world->model.robots[r].mb.joint_count;
  }
  p->row_count = w.row;
  /* the solvers start from u_free and apply the warm start themselves */
  memcpy(p->velocity, ctx->u_free, sizeof(double) * (size_t)p->dof_count);
  return LCP_OK;
}
