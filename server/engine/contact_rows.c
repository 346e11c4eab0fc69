/* SPDX-License-Identifier: Apache-2.0 */
/* The contact rows: for each manifold (a contact patch: up to 4 points
 * sharing one normal) a normal row per point and friction on the patch,
 * two tangential rows at the patch's centre and one torsional row about
 * the normal, bounded by μ times the patch's total normal impulse (PhysX's
 * patch friction, learned from, not copied). Their sides are on free
 * bodies (given by geometry, as a solver_contact patch) or on robot links
 * (by coefficients); their warm starts come from the last step's manifold
 * of the same geoms. */
#include "rows_internal.h"
#include "solver_internal.h"

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
 * J = s [d, r × d], M⁻¹Jᵀ = s [d/m, I⁻¹(r × d)]; for a spin about d
 * (torsion) J = s [0, d], M⁻¹Jᵀ = s [0, I⁻¹d]. */
static void write_side(solver_row *row, int side, int32_t dof, int32_t coef, double *J,
                       double *MinvJt, vec3 d, vec3 r, bool spin, double sign, double inv_mass,
                       const mat3 *inv_inertia) {
  vec3 lin = spin ? v3_zero() : v3_scale(d, sign);
  vec3 ang = v3_scale(spin ? d : v3_cross(r, d), sign);
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
 * Jacobian row of the contact point along dir (or, for a spin, of the
 * link's angular velocity about dir), and its response M⁻¹Jᵀ from the
 * articulated-body factors, O(n) (Featherstone, "Rigid Body Dynamics
 * Algorithms") — or copied from response when it was computed already
 * (lcp__mb_response_point3). When other_link ≥ 0 the row is a self-contact
 * and the side carries J_link − J_other (both links move the same
 * velocities), with scratch holding 2 nv doubles. */
static void write_link_side(solver_row *row, int side, const lcp_world_t *world,
                            const step_context *ctx, int32_t r, int32_t link, int32_t other_link,
                            int32_t coef, double *J, double *MinvJt, vec3 point, vec3 dir,
                            bool spin, double sign, double *scratch, const double *response) {
  const mb_model *mb = &world->model.robots[r].mb;
  mb_data *d = &world->robot_data[r];
  int32_t nv = mb->nv;
  double *j = J + coef, *t = MinvJt + coef;
  vec3 lin = spin ? v3_zero() : dir, ang = spin ? dir : v3_zero();
  lcp__mb_point_jacobian_row(mb, d, link, point, lin, ang, j);
  if (response)
    memcpy(t, response, sizeof(double) * (size_t)nv);
  else
    lcp__mb_response_point(mb, d, link, point, lin, ang, t);
  if (other_link >= 0) {
    lcp__mb_point_jacobian_row(mb, d, other_link, point, lin, ang, scratch);
    lcp__mb_response_point(mb, d, other_link, point, lin, ang, scratch + nv);
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
  bool on_bodies;    /* free bodies (or one and something static): a solver_contact patch */
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
                               double warm) {
  row->cfm = cfm;
  row->kind = ROW_NORMAL;
  row->normal_row = -1;
  row->normal_count = 0;
  row->mu = 0.0;
  row->target = target;
  row->relax_target = relax_target;
  row->bounce = 0.0;
  row->lo = 0.0;
  row->hi = INFINITY;
  row->lambda = warm;
}

/* A friction row of the patch whose K normal rows start at normal_row:
 * tangent k (ROW_FRICTION_1/2) at the patch centre c,
 *
 *     J = [−t_k, −r_A × t_k | t_k, r_B × t_k],  target = 0,
 *
 * or the torsion row (ROW_TORSION), the relative spin about the normal,
 * J = [0, −n | 0, n], bounded by μ r Σλn. The bounds follow the patch's
 * total normal impulse Σλn (isotropic Coulomb friction on the patch): each
 * |λ_k| ≤ μ Σλn (box model) or |(λ_1, λ_2)| ≤ μ Σλn (cone model); the
 * solver takes them from normal_row and normal_count, so lo and hi here
 * are only ±∞. */
static void contact_friction_row(solver_row *row, row_kind kind, int32_t normal_row, int32_t K,
                                 double mu, double cfm, double warm) {
  row->cfm = cfm;
  row->kind = kind;
  row->normal_row = normal_row;
  row->normal_count = K;
  row->mu = mu;
  row->target = 0.0;
  row->relax_target = 0.0;
  row->bounce = 0.0;
  row->lo = -INFINITY;
  row->hi = INFINITY;
  row->lambda = warm;
}

/* The sides of a contact row along dir at point (arms ra_arm, rb_arm from
 * the bodies' centres of mass), or of the spin about dir (torsion);
 * response[s]: a link side's response to it when computed already, or
 * NULL. */
static void contact_row_sides(const lcp_world_t *world, const step_context *ctx,
                              const manifold_rows *mr, row_writer *w, solver_row *row, vec3 point,
                              vec3 dir, bool spin, vec3 ra_arm, vec3 rb_arm,
                              const double *const response[2]) {
  const world_model *model = &world->model;
  solver_problem *p = w->p;
  const sap_pair *pair = mr->pair;
  if (mr->self_contact) {
    write_absent_side(row, 0);
    write_link_side(row, 1, world, ctx, mr->rb, ctx->geom_link[pair->b], ctx->geom_link[pair->a],
                    (int32_t)w->coef, p->J, p->MinvJt, point, dir, spin, 1.0, w->scratch, NULL);
    w->coef += mr->wb;
    return;
  }
  if (mr->wa == 0)
    write_absent_side(row, 0);
  else if (mr->ra >= 0)
    write_link_side(row, 0, world, ctx, mr->ra, ctx->geom_link[pair->a], -1, (int32_t)w->coef, p->J,
                    p->MinvJt, point, dir, spin, -1.0, w->scratch, response[0]);
  else if (mr->on_bodies)
    body_side(row, 0, ctx->body_dof[mr->sa], (int32_t)w->coef);
  else
    write_side(row, 0, ctx->body_dof[mr->sa], (int32_t)w->coef, p->J, p->MinvJt, dir, ra_arm, spin,
               -1.0, model->bodies[mr->sa].inv_mass, &ctx->inv_inertia_world[mr->sa]);
  w->coef += mr->wa;
  if (mr->wb == 0)
    write_absent_side(row, 1);
  else if (mr->rb >= 0)
    write_link_side(row, 1, world, ctx, mr->rb, ctx->geom_link[pair->b], -1, (int32_t)w->coef, p->J,
                    p->MinvJt, point, dir, spin, 1.0, w->scratch, response[1]);
  else if (mr->on_bodies)
    body_side(row, 1, ctx->body_dof[mr->sb], (int32_t)w->coef);
  else
    write_side(row, 1, ctx->body_dof[mr->sb], (int32_t)w->coef, p->J, p->MinvJt, dir, rb_arm, spin,
               1.0, model->bodies[mr->sb].inv_mass, &ctx->inv_inertia_world[mr->sb]);
  w->coef += mr->wb;
}

/* A point's arms from the bodies' centres of mass (zero for a link side). */
static void point_arms(const step_context *ctx, const manifold_rows *mr, vec3 point, vec3 arm[2]) {
  arm[0] = mr->sa >= 0 ? v3_sub(point, ctx->body_x[mr->sa].p) : v3_zero();
  arm[1] = mr->sb >= 0 ? v3_sub(point, ctx->body_x[mr->sb].p) : v3_zero();
}

/* The patch of manifold mr->m: its centre c (the points' centroid), the
 * points' coordinates (x_q, y_q) = ((p_q − c)·t_1, (p_q − c)·t_2) in its
 * plane, and its torsional radius r, the mean distance of the points from
 * c in the plane. With |λτ| ≤ μ r Σλn, a patch whose points share its
 * normal impulse equally (the symmetric distribution) resists spin up to
 * Σ_q μ λn_q |p_q − c| = μ r Σλn: the largest torque per-point Coulomb
 * friction would give it. */
static double patch_geometry(const manifold_rows *mr, vec3 *centre, double *x, double *y) {
  const manifold *m = mr->m;
  const int32_t K = m->point_count;
  if (K == 1) { /* the point itself, no torsion */
    *centre = m->points[0].position;
    x[0] = y[0] = 0.0;
    return 0.0;
  }
  vec3 c = v3_zero();
  for (int32_t q = 0; q < K; ++q)
    c = v3_add(c, m->points[q].position);
  c = v3_scale(c, 1.0 / K);
  double radius = 0.0;
  for (int32_t q = 0; q < K; ++q) {
    vec3 d = v3_sub(m->points[q].position, c);
    x[q] = v3_dot(d, mr->dir[1]);
    y[q] = v3_dot(d, mr->dir[2]);
    radius += sqrt(x[q] * x[q] + y[q] * y[q]);
  }
  *centre = c;
  return radius / K;
}

/* The rows of manifold k: its K normal rows, then its friction rows (two
 * tangents, and the torsion row when K ≥ 2). Returns how many of its
 * points were warm-started. */
static int32_t manifold_rows_build(const lcp_world_t *world, step_context *ctx, int32_t k,
                                   row_writer *w, int32_t *cache_cursor) {
  const world_model *model = &world->model;
  const lcp_world_settings_t *s = ctx->settings;
  solver_problem *p = w->p;
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
  mr.cached =
      s->warm_start ? cache_find(&world->state, mr.pair->a, mr.pair->b, cache_cursor) : NULL;
  mr.dir[0] = mr.m->normal;
  v3_tangent_basis(mr.m->normal, &mr.dir[1], &mr.dir[2]);
  ctx->manifold_row[k] = w->row;
  const int32_t K = mr.m->point_count;
  vec3 centre;
  double x[MANIFOLD_MAX_POINTS], y[MANIFOLD_MAX_POINTS], warm_n[MANIFOLD_MAX_POINTS];
  const double radius = patch_geometry(&mr, &centre, x, y);
  /* The cache holds each point's normal impulse as the solver left it,
   * in the patch's symmetric distribution (lcp__solver_patches_even): the
   * warm start starts from it. */
  int32_t warm = 0;
  for (int32_t q = 0; q < K; ++q) {
    const cached_point *c = cached_point_of(mr.cached, mr.m->points[q].feature_id);
    warm_n[q] = c ? c->normal_impulse : 0.0;
    warm += c != NULL;
  }
  solver_contact *patch = NULL;
  if (mr.on_bodies) {
    /* the rows are described by the patch's geometry, not by coefficients */
    /* (every field the solver reads is written below: the points' arms
     * past K are not read) */
    patch = &w->contacts[p->contact_count++];
    patch->row = w->row;
    patch->point_count = K;
    patch->dof[0] = mr.wa > 0 ? ctx->body_dof[mr.sa] : -1;
    patch->dof[1] = mr.wb > 0 ? ctx->body_dof[mr.sb] : -1;
    for (int d = 0; d < 3; ++d)
      v3_store(mr.dir[d], patch->dir[d]);
  }
  /* A link side's responses in one pass per point (lcp__mb_response_point3)
   * to its three directions: the normal row's, and the tangents' at the
   * centre as the mean of the points' (a response is linear in the spatial
   * force, and a force at c = (1/K) Σ p_q is the mean of the same force at
   * the points); the first point's pass also gives the torsion row's, the
   * response to a pure angular impulse about n, which is the same at any
   * point (lcp__mb_response_point3_spin). w->responses holds the point's
   * [n, t1, t2, spin] per side at 4 wa s, then the tangents' sums [t1, t2]
   * per side at 4 (wa + wb) + 2 wa s. */
  const int32_t width[2] = {mr.wa, mr.wb}, robot[2] = {mr.ra, mr.rb};
  const int32_t link_geom[2] = {mr.pair->a, mr.pair->b};
  double *point_response[2] = {NULL, NULL}, *tangent_response[2] = {NULL, NULL};
  if (!mr.self_contact)
    for (int sd = 0; sd < 2; ++sd)
      if (width[sd] > 0 && robot[sd] >= 0) {
        point_response[sd] = w->responses + 4 * mr.wa * sd;
        tangent_response[sd] = w->responses + 4 * (mr.wa + mr.wb) + 2 * mr.wa * sd;
      }
  const int32_t normal_row = w->row;
  for (int32_t q = 0; q < K; ++q) {
    const contact_point *cp = &mr.m->points[q];
    vec3 arm[2];
    point_arms(ctx, &mr, cp->position, arm);
    if (patch) {
      v3_store(arm[0], patch->point_arm[q][0]);
      v3_store(arm[1], patch->point_arm[q][1]);
    }
    for (int sd = 0; sd < 2; ++sd) {
      if (!point_response[sd])
        continue;
      const int32_t nv = width[sd];
      const mb_model *mb = &model->robots[robot[sd]].mb;
      mb_data *data = &world->robot_data[robot[sd]];
      int32_t link = ctx->geom_link[link_geom[sd]];
      if (q == 0 && K > 1)
        lcp__mb_response_point3_spin(mb, data, link, cp->position, mr.dir, mr.dir[0],
                                     point_response[sd]);
      else
        lcp__mb_response_point3(mb, data, link, cp->position, mr.dir, point_response[sd]);
      for (int32_t k = 0; k < 2 * nv; ++k)
        tangent_response[sd][k] = q == 0 ? point_response[sd][nv + k]
                                         : tangent_response[sd][k] + point_response[sd][nv + k];
    }
    solver_row *row = &p->rows[w->row++];
    contact_row_sides(world, ctx, &mr, w, row, cp->position, mr.dir[0], false, arm[0], arm[1],
                      (const double *const[2]){point_response[0], point_response[1]});
    contact_normal_row(row, rows_position_target(s, cp->depth), rows_relax_target(s, cp->depth),
                       s->cfm, warm_n[q]);
    row->bounce = mr.m->bounce[q];
  }
  vec3 arm[2];
  point_arms(ctx, &mr, centre, arm);
  if (patch) {
    v3_store(arm[0], patch->arm[0]);
    v3_store(arm[1], patch->arm[1]);
  }
  for (int sd = 0; sd < 2 && K > 1; ++sd)
    for (int32_t k = 0; tangent_response[sd] && k < 2 * width[sd]; ++k)
      tangent_response[sd][k] *= 1.0 / K;
  const double *warm_f = mr.cached ? mr.cached->friction_impulse : NULL;
  for (int32_t d = 0; d < solver_patch_rows(K) - K; ++d) {
    solver_row *row = &p->rows[w->row++];
    bool torsion = d == 2;
    const double *const response[2] = {!tangent_response[0] ? NULL
                                       : torsion            ? point_response[0] + 3 * mr.wa
                                                            : tangent_response[0] + d * mr.wa,
                                       !tangent_response[1] ? NULL
                                       : torsion            ? point_response[1] + 3 * mr.wb
                                                            : tangent_response[1] + d * mr.wb};
    contact_row_sides(world, ctx, &mr, w, row, centre, mr.dir[torsion ? 0 : d + 1], torsion, arm[0],
                      arm[1], response);
    row_kind kind = torsion ? ROW_TORSION : d == 0 ? ROW_FRICTION_1 : ROW_FRICTION_2;
    contact_friction_row(row, kind, normal_row, K, torsion ? mr.mu * radius : mr.mu, s->cfm,
                         warm_f ? warm_f[d] : 0.0);
  }
  return warm;
}

int64_t lcp__contact_rows_coefficients(const lcp_world_t *world, const step_context *ctx) {
  int64_t coef_count = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    int64_t width = side_width(world, ctx, pair->a) + side_width(world, ctx, pair->b);
    coef_count += solver_patch_rows(ctx->manifolds[k].point_count) * width;
  }
  return coef_count;
}

int32_t lcp__contact_rows_build(const lcp_world_t *world, step_context *ctx, row_writer *w) {
  int32_t warm = 0, cache_cursor = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k)
    warm += manifold_rows_build(world, ctx, k, w, &cache_cursor);
  return warm;
}
