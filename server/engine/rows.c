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
#include "step_context.h"

#include <math.h>
#include <string.h>

/* ---- warm starts ---- */

/* The last step's manifold of the geoms at slots (a, b), or NULL. The manifolds of a
 * step come in the cache's order (store_contacts in step.c), so the search
 * starts where the previous one ended (*cursor): in a large world a binary
 * search per manifold reads the cache from all over memory. */
static const cached_manifold *cache_find(const world_state *state, int32_t a, int32_t b,
                                         int32_t *cursor) {
  int32_t lo = *cursor, hi = state->cache_count - 1;
  /* the next few entries first: the one sought, or one past it */
  for (int32_t end = lo + 4 < state->cache_count ? lo + 4 : state->cache_count; lo < end; ++lo) {
    const cached_manifold *c = &state->cache[lo];
    if (c->slot_a == a && c->slot_b == b) {
      *cursor = lo + 1;
      return c;
    }
    if (c->slot_a > a || (c->slot_a == a && c->slot_b > b)) {
      *cursor = lo;
      return NULL;
    }
  }
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    const cached_manifold *c = &state->cache[mid];
    if (c->slot_a == a && c->slot_b == b) {
      *cursor = mid + 1;
      return c;
    }
    if (c->slot_a < a || (c->slot_a == a && c->slot_b < b))
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  *cursor = lo;
  return NULL;
}

/* The cached impulses of the point with this feature in a cached manifold. */
static const cached_point *cached_point_of(const cached_manifold *cached, uint32_t feature) {
  if (cached)
    for (int32_t c = 0; c < cached->point_count; ++c)
      if (cached->points[c].feature_id == feature)
        return &cached->points[c];
  return NULL;
}

/* ---- row sides ---- */

/* The side of a contact row on a free body: its coefficients are left to
 * the solver, from the row's solver_contact; the arrays keep room for them. */
static void body_side(solver_row *row, int side, int32_t dof, int32_t coef) {
  row->dof_offset[side] = dof;
  row->dof_count[side] = 6;
  row->coef_offset[side] = coef;
}

/* Writes one side of a contact row on a free body whose other side is a
 * robot link, for direction d at arm r from the centre of mass:
 * J = s [d, r × d], M⁻¹Jᵀ = s [d/m, I⁻¹(r × d)]. */
static void write_side(solver_row *row, int side, int32_t dof, int32_t coef, double *J,
                       double *MinvJt, vec3 d, vec3 r, double sign, double inv_mass,
                       const mat3 *inv_inertia) {
  vec3 lin = v3_scale(d, sign);
  vec3 ang = v3_scale(v3_cross(r, d), sign);
  vec3 ang_response = m3_mulv(inv_inertia, ang);
  double *j = J + coef, *t = MinvJt + coef;
  j[0] = lin.x, j[1] = lin.y, j[2] = lin.z, j[3] = ang.x, j[4] = ang.y, j[5] = ang.z;
  t[0] = lin.x * inv_mass, t[1] = lin.y * inv_mass, t[2] = lin.z * inv_mass;
  t[3] = ang_response.x, t[4] = ang_response.y, t[5] = ang_response.z;
  row->dof_offset[side] = dof;
  row->dof_count[side] = 6;
  row->coef_offset[side] = coef;
}

/* How many velocity entries a contact side on geom g spans: 6 for a dynamic
 * body, nv for a moving robot link, 0 for what nothing moves. */
static int32_t side_width(const lcp_world_t *world, const step_context *ctx, int32_t g) {
  if (ctx->geom_static[g])
    return 0;
  int32_t r = ctx->geom_robot[g];
  return r >= 0 ? world->model.robots[r].mb.nv : 6;
}

/* Writes one side of a contact row on a robot link: the joint-space
 * Jacobian row of the contact point along dir, and its response M⁻¹Jᵀ from
 * the articulated-body factors, O(n) (Featherstone, "Rigid Body Dynamics
 * Algorithms") — or copied from response when it was computed already
 * (lcp__mb_response_point3). When other_link ≥ 0 the row is a self-contact and
 * the side carries J_link − J_other (both links move the same velocities),
 * with scratch holding 2 nv doubles. */
static void write_link_side(solver_row *row, int side, const lcp_world_t *world,
                            const step_context *ctx, int32_t r, int32_t link, int32_t other_link,
                            int32_t coef, double *J, double *MinvJt, vec3 point, vec3 dir,
                            double sign, double *scratch, const double *response) {
  const mb_model *mb = &world->model.robots[r].mb;
  mb_data *d = &world->robot_data[r];
  int32_t nv = mb->nv;
  double *j = J + coef, *t = MinvJt + coef;
  lcp__mb_point_jacobian_row(mb, d, link, point, dir, v3_zero(), j);
  if (response)
    memcpy(t, response, sizeof(double) * (size_t)nv);
  else
    lcp__mb_response_point(mb, d, link, point, dir, v3_zero(), t);
  if (other_link >= 0) {
    lcp__mb_point_jacobian_row(mb, d, other_link, point, dir, v3_zero(), scratch);
    lcp__mb_response_point(mb, d, other_link, point, dir, v3_zero(), scratch + nv);
    for (int32_t k = 0; k < nv; ++k) {
      j[k] -= scratch[k];
      t[k] -= scratch[nv + k];
    }
  }
  if (sign < 0.0)
    for (int32_t k = 0; k < nv; ++k) {
      j[k] = -j[k];
      t[k] = -t[k];
    }
  row->dof_offset[side] = ctx->robot_dof[r];
  row->dof_count[side] = nv;
  row->coef_offset[side] = coef;
}

static void write_absent_side(solver_row *row, int side) {
  row->dof_offset[side] = 0;
  row->dof_count[side] = 0;
  row->coef_offset[side] = 0;
}

/* Baumgarte stabilisation with slop (Baumgarte, "Stabilization of
 * Constraints and Integrals of Motion in Dynamical Systems"; the slop as in
 * Catto's "Iterative Dynamics with Temporal Coherence") for a depth (> 0
 * penetrating): the target velocity pushes out what is beyond the slop over
 * a few steps,
 *
 *     target = β (depth − slop)/h,
 *
 * and a gap (depth < 0) lets the sides approach by exactly the gap in this
 * step, target = depth/h (a speculative contact). */
static double baumgarte_target(const lcp_world_settings_t *s, double depth) {
  if (depth > s->baumgarte_slop)
    return s->baumgarte_beta * (depth - s->baumgarte_slop) / s->timestep;
  if (depth < 0.0)
    return depth / s->timestep;
  return 0.0;
}

/* ---- contact rows ---- */

/* What the rows of one manifold share. Side A (geom pair->a) moves against
 * the normal, side B along it. */
typedef struct manifold_rows {
  const manifold *m;
  const sap_pair *pair;
  int32_t sa, sb;    /* body slots, −1 for a link's geom */
  int32_t ra, rb;    /* robot slots, −1 for a body's geom */
  int32_t wa, wb;    /* side widths (side_width) */
  bool self_contact; /* two links of one robot: one side carries both */
  bool on_bodies;    /* free bodies (or one and something static): solver_contact points */
  double mu;         /* √(μ_a μ_b) */
  vec3 dir[3];       /* the normal and its two tangents */
  const cached_manifold *cached;
} manifold_rows;

/* Where the rows go. */
typedef struct row_writer {
  solver_problem *p;
  solver_contact *contacts; /* the problem's, writable */
  int32_t row;              /* the next row */
  int64_t coef;             /* the next coefficient */
  double *scratch;          /* 2 nv of the widest robot: a self-contact's other link */
  double *responses;        /* 6 nv: a point's link responses, 3 directions × 2 sides */
} row_writer;

/* The normal row of a contact point: along the normal n from A to B,
 *
 *     J = [−n, −r_A × n | n, r_B × n],  w = n·(u_B − u_A) at the point,
 *     0 ≤ λn,  target = Baumgarte's (baumgarte_target),  cfm = the world's,
 *
 * positive w separating. */
static void contact_normal_row(solver_row *row, double target, double cfm,
                               const cached_point *warm) {
  row->cfm = cfm;
  row->kind = ROW_NORMAL;
  row->normal_row = -1;
  row->mu = 0.0;
  row->target = target;
  row->lo = 0.0;
  row->hi = INFINITY;
  row->lambda = warm ? warm->normal_impulse : 0.0;
}

/* Friction row k (1, 2) of a contact point: along tangent t_k,
 *
 *     J = [−t_k, −r_A × t_k | t_k, r_B × t_k],  target = 0,
 *
 * bounded by its normal row's impulse (isotropic Coulomb friction): each
 * |λ_k| ≤ μ λn (box model) or |(λ_1, λ_2)| ≤ μ λn (cone model); the solver
 * takes the bounds from normal_row, so lo and hi here are only ±∞. */
static void contact_friction_row(solver_row *row, int k, int32_t normal_row, double mu, double cfm,
                                 const cached_point *warm) {
  row->cfm = cfm;
  row->kind = k == 1 ? ROW_FRICTION_1 : ROW_FRICTION_2;
  row->normal_row = normal_row;
  row->mu = mu;
  row->target = 0.0;
  row->lo = -INFINITY;
  row->hi = INFINITY;
  row->lambda = warm ? warm->friction_impulse[k - 1] : 0.0;
}

/* The sides of a contact point's row along dir (mr->dir[d]), at arms
 * ra_arm, rb_arm from the bodies' centres of mass; response_a/b: the
 * links' responses to the point's three directions, or NULL. */
static void contact_row_sides(const lcp_world_t *world, const step_context *ctx,
                              const manifold_rows *mr, row_writer *w, solver_row *row,
                              const contact_point *cp, int d, vec3 ra_arm, vec3 rb_arm,
                              const double *response_a, const double *response_b) {
  const world_model *model = &world->model;
  solver_problem *p = w->p;
  const sap_pair *pair = mr->pair;
  vec3 dir = mr->dir[d];
  if (mr->self_contact) {
    write_absent_side(row, 0);
    write_link_side(row, 1, world, ctx, mr->rb, ctx->geom_link[pair->b], ctx->geom_link[pair->a],
                    (int32_t)w->coef, p->J, p->MinvJt, cp->position, dir, 1.0, w->scratch, NULL);
    w->coef += mr->wb;
    return;
  }
  if (mr->wa == 0)
    write_absent_side(row, 0);
  else if (mr->ra >= 0)
    write_link_side(row, 0, world, ctx, mr->ra, ctx->geom_link[pair->a], -1, (int32_t)w->coef, p->J,
                    p->MinvJt, cp->position, dir, -1.0, w->scratch, response_a + d * mr->wa);
  else if (mr->on_bodies)
    body_side(row, 0, ctx->body_dof[mr->sa], (int32_t)w->coef);
  else
    write_side(row, 0, ctx->body_dof[mr->sa], (int32_t)w->coef, p->J, p->MinvJt, dir, ra_arm, -1.0,
               model->bodies[mr->sa].inv_mass, &ctx->inv_inertia_world[mr->sa]);
  w->coef += mr->wa;
  if (mr->wb == 0)
    write_absent_side(row, 1);
  else if (mr->rb >= 0)
    write_link_side(row, 1, world, ctx, mr->rb, ctx->geom_link[pair->b], -1, (int32_t)w->coef, p->J,
                    p->MinvJt, cp->position, dir, 1.0, w->scratch, response_b + d * mr->wb);
  else if (mr->on_bodies)
    body_side(row, 1, ctx->body_dof[mr->sb], (int32_t)w->coef);
  else
    write_side(row, 1, ctx->body_dof[mr->sb], (int32_t)w->coef, p->J, p->MinvJt, dir, rb_arm, 1.0,
               model->bodies[mr->sb].inv_mass, &ctx->inv_inertia_world[mr->sb]);
  w->coef += mr->wb;
}

/* The three rows of one contact point (normal, then its two friction rows).
 * Returns whether it was warm-started. */
static bool contact_point_rows(const lcp_world_t *world, const step_context *ctx,
                               const manifold_rows *mr, row_writer *w, const contact_point *cp) {
  const world_model *model = &world->model;
  const lcp_world_settings_t *s = ctx->settings;
  solver_problem *p = w->p;
  vec3 ra_arm = mr->sa >= 0 ? v3_sub(cp->position, ctx->body_x[mr->sa].p) : v3_zero();
  vec3 rb_arm = mr->sb >= 0 ? v3_sub(cp->position, ctx->body_x[mr->sb].p) : v3_zero();
  double target = baumgarte_target(s, cp->depth);
  const cached_point *warm = cached_point_of(mr->cached, cp->feature_id);
  if (mr->on_bodies) {
    /* the rows are described by the point's geometry, not by coefficients */
    solver_contact *c = &w->contacts[p->contact_count++];
    c->row = w->row;
    c->dof[0] = mr->wa > 0 ? ctx->body_dof[mr->sa] : -1;
    c->dof[1] = mr->wb > 0 ? ctx->body_dof[mr->sb] : -1;
    for (int d = 0; d < 3; ++d)
      v3_store(mr->dir[d], c->dir[d]);
    v3_store(ra_arm, c->arm[0]);
    v3_store(rb_arm, c->arm[1]);
  }
  /* a link side's three responses (normal, tangents) in one pass */
  const double *response_a = NULL, *response_b = NULL;
  if (!mr->self_contact && mr->wa > 0 && mr->ra >= 0) {
    lcp__mb_response_point3(&model->robots[mr->ra].mb, &world->robot_data[mr->ra],
                            ctx->geom_link[mr->pair->a], cp->position, mr->dir, w->responses);
    response_a = w->responses;
  }
  if (!mr->self_contact && mr->wb > 0 && mr->rb >= 0) {
    lcp__mb_response_point3(&model->robots[mr->rb].mb, &world->robot_data[mr->rb],
                            ctx->geom_link[mr->pair->b], cp->position, mr->dir,
                            w->responses + 3 * mr->wa);
    response_b = w->responses + 3 * mr->wa;
  }
  const int32_t normal_row = w->row;
  for (int d = 0; d < 3; ++d) {
    solver_row *row = &p->rows[w->row++];
    contact_row_sides(world, ctx, mr, w, row, cp, d, ra_arm, rb_arm, response_a, response_b);
    if (d == 0)
      contact_normal_row(row, target, s->cfm, warm);
    else
      contact_friction_row(row, d, normal_row, mr->mu, s->cfm, warm);
  }
  return warm != NULL;
}

/* The rows of manifold k. Returns how many of its points were warm-started. */
static int32_t manifold_rows_build(const lcp_world_t *world, step_context *ctx, int32_t k,
                                   row_writer *w, int32_t *cache_cursor) {
  const world_model *model = &world->model;
  manifold_rows mr;
  mr.m = &ctx->manifolds[k];
  mr.pair = &ctx->pairs[ctx->manifold_pair[k]];
  const geom_model *ga = &model->geoms[mr.pair->a], *gb = &model->geoms[mr.pair->b];
  mr.sa = ctx->geom_body[mr.pair->a], mr.sb = ctx->geom_body[mr.pair->b];
  mr.ra = ctx->geom_robot[mr.pair->a], mr.rb = ctx->geom_robot[mr.pair->b];
  mr.wa = side_width(world, ctx, mr.pair->a), mr.wb = side_width(world, ctx, mr.pair->b);
  mr.self_contact = mr.ra >= 0 && mr.ra == mr.rb;
  mr.on_bodies = !mr.self_contact && mr.ra < 0 && mr.rb < 0;
  mr.mu = sqrt(ga->friction * gb->friction);
  mr.cached = ctx->settings->warm_start
                  ? cache_find(&world->state, mr.pair->a, mr.pair->b, cache_cursor)
                  : NULL;
  mr.dir[0] = mr.m->normal;
  v3_tangent_basis(mr.m->normal, &mr.dir[1], &mr.dir[2]);
  ctx->manifold_row[k] = w->row;
  int32_t warm = 0;
  for (int32_t q = 0; q < mr.m->point_count; ++q)
    warm += contact_point_rows(world, ctx, &mr, w, &mr.m->points[q]);
  return warm;
}

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
  if (near & 1)
    add_joint_row(p, r, ctx, at, JOINT_ROW_LOWER, at->plus, baumgarte_target(s, -gap_lower), s->cfm,
                  0.0, INFINITY);
  if (near & 2)
    add_joint_row(p, r, ctx, at, JOINT_ROW_UPPER, at->minus, baumgarte_target(s, -gap_upper),
                  s->cfm, 0.0, INFINITY);
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

/* The rows of robot `robot`'s movable joints, from row r on; returns the
 * next row. A joint without rows gets no coefficients (its O(n) response is
 * skipped). */
static int32_t joint_rows(lcp_world_t *world, step_context *ctx, int32_t robot, int32_t r,
                          int64_t *coef) {
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
  return r;
}

/* ---- the problem ---- */

/* The problem's arrays: 3 rows per contact point, each with its sides'
 * widths of coefficients; at most JOINT_ROW_KINDS rows per joint sharing
 * 2 nv coefficients; the bodies' mass properties for the contact points. */
static int rows_allocate(lcp_world_t *world, step_context *ctx, row_writer *w) {
  arena *a = &world->scratch;
  solver_problem *p = &ctx->problem;
  int64_t row_capacity = 3 * (int64_t)ctx->contact_count, coef_count = 0;
  int32_t self_width = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    int64_t width = side_width(world, ctx, pair->a) + side_width(world, ctx, pair->b);
    coef_count += 3 * (int64_t)ctx->manifolds[k].point_count * width;
  }
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
  w->responses = STEP_NEW(a, double, 6 * self_width);
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
  int32_t warm = 0, cache_cursor = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k)
    warm += manifold_rows_build(world, ctx, k, &w, &cache_cursor);
  for (int32_t robot = 0; robot < ctx->robot_count; ++robot)
    w.row = joint_rows(world, ctx, robot, w.row, &w.coef);
  p->row_count = w.row;
  ctx->warm_started = warm;
  return LCP_OK;
}
