/* SPDX-License-Identifier: Apache-2.0 */
/* The contact rows: for each point of a manifold a normal row and two
 * friction rows, with their sides on free bodies (given by geometry, as
 * solver_contact points) or on robot links (by coefficients), and their
 * warm starts from the last step's manifold of the same geoms. */
#include "rows_internal.h"

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

/* The normal row of a contact point: along the normal n from A to B,
 *
 *     J = [−n, −r_A × n | n, r_B × n],  w = n·(u_B − u_A) at the point,
 *     0 ≤ λn,  target = Baumgarte's (rows_position_target),  cfm = the world's,
 *
 * positive w separating. */
static void contact_normal_row(solver_row *row, double target, double relax_target, double cfm,
                               const cached_point *warm) {
  row->cfm = cfm;
  row->kind = ROW_NORMAL;
  row->normal_row = -1;
  row->mu = 0.0;
  row->target = target;
  row->relax_target = relax_target;
  row->bounce = 0.0;
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
  row->relax_target = 0.0;
  row->bounce = 0.0;
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
  double target = rows_position_target(s, cp->depth);
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
    if (d == 0) {
      contact_normal_row(row, target, rows_relax_target(s, cp->depth), s->cfm, warm);
      row->bounce = mr->m->bounce[cp - mr->m->points];
    } else
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

int64_t lcp__contact_rows_coefficients(const lcp_world_t *world, const step_context *ctx) {
  int64_t coef_count = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    int64_t width = side_width(world, ctx, pair->a) + side_width(world, ctx, pair->b);
    coef_count += 3 * (int64_t)ctx->manifolds[k].point_count * width;
  }
  return coef_count;
}

int32_t lcp__contact_rows_build(const lcp_world_t *world, step_context *ctx, row_writer *w) {
  int32_t warm = 0, cache_cursor = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k)
    warm += manifold_rows_build(world, ctx, k, w, &cache_cursor);
  return warm;
}
