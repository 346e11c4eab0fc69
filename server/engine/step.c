/* The step (DESIGN.md §3): one function naming every stage in order, each
 * stage a function of the world and the step's scratch context, each timed.
 *
 * Nothing in the world's state changes before the integrate stage, so a step
 * that fails (out of memory, a non-finite solve) leaves the world as it was. */
#include "solver.h"
#include "world_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Everything a step derives, all from the scratch arena. Arrays are indexed
 * by body slot [body_count] or geom slot [geom_count] unless noted. */
typedef struct step_context {
  const lcp_world_settings_t *settings;
  int32_t body_count;
  int32_t geom_count;
  xform *body_x;           /* [body_count] world pose of the centre of mass */
  mat3 *inv_inertia_world; /* [body_count] R I⁻¹ Rᵀ; zero for static bodies */
  int32_t *body_dof;       /* [body_count] offset in the velocity vector, -1 if static */
  int32_t *geom_body;      /* [geom_count] body slot */
  xform *geom_x;           /* [geom_count] */
  vec3 *geom_lo, *geom_hi; /* [geom_count] margin-inflated world boxes */
  int32_t pair_count;
  sap_pair *pairs; /* [pair_count] geom slots, a < b */
  int32_t manifold_count;
  manifold *manifolds;    /* [manifold_count] */
  int32_t *manifold_pair; /* [manifold_count] index into pairs */
  int32_t *manifold_row;  /* [manifold_count] first row: 3 rows per point */
  int32_t contact_count;
  solver_problem problem;
  double *u_free;  /* [dof_count] velocities before constraints */
  uint8_t *pushed; /* [body_count] a constraint impulse acted on it this step */
  int32_t warm_started;
} step_context;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define NEW(ctx_arena, type, n) ARENA_NEW(ctx_arena, type, (n) > 0 ? (n) : 1)

/* ---- 1. kinematics: world poses, world inertias, geom poses and boxes ---- */
static int stage_kinematics(lcp_world_t *world, step_context *ctx) {
  const world_model *model = &world->model;
  arena *a = &world->scratch;
  int32_t nb = ctx->body_count, ng = ctx->geom_count;
  ctx->body_x = NEW(a, xform, nb);
  ctx->inv_inertia_world = NEW(a, mat3, nb);
  ctx->body_dof = NEW(a, int32_t, nb);
  ctx->geom_body = NEW(a, int32_t, ng);
  ctx->geom_x = NEW(a, xform, ng);
  ctx->geom_lo = NEW(a, vec3, ng);
  ctx->geom_hi = NEW(a, vec3, ng);
  if (!ctx->body_x || !ctx->inv_inertia_world || !ctx->body_dof || !ctx->geom_body ||
      !ctx->geom_x || !ctx->geom_lo || !ctx->geom_hi)
    return LCP_ERR_NO_MEMORY;
  int32_t dofs = 0;
  for (int32_t i = 0; i < nb; ++i) {
    const body_state *s = &world->state.bodies[i];
    ctx->body_x[i] = xf_make(s->position, s->orientation);
    if (model->bodies[i].type == LCP_BODY_DYNAMIC) {
      ctx->inv_inertia_world[i] =
          m3_rotate_tensor(&ctx->body_x[i].R, &model->bodies[i].inv_inertia_local);
      ctx->body_dof[i] = dofs;
      dofs += 6;
    } else {
      ctx->inv_inertia_world[i] = m3_zero();
      ctx->body_dof[i] = -1;
    }
  }
  ctx->problem.dof_count = dofs;
  double margin = ctx->settings->contact_margin;
  vec3 inflate = v3(margin, margin, margin);
  for (int32_t g = 0; g < ng; ++g) {
    const geom_model *geom = &model->geoms[g];
    int32_t slot = world_body_slot(world, geom->body);
    ctx->geom_body[g] = slot;
    ctx->geom_x[g] = xf_mul(&ctx->body_x[slot], &geom->local);
    vec3 lo, hi;
    shape_aabb(&geom->shape, &ctx->geom_x[g], &lo, &hi);
    ctx->geom_lo[g] = v3_sub(lo, inflate);
    ctx->geom_hi[g] = v3_add(hi, inflate);
  }
  return LCP_OK;
}

/* ---- 2. broad phase: sweep and prune, then filtering; planes apart ---- */

static bool geoms_may_collide(const lcp_world_t *world, const step_context *ctx, int32_t a,
                              int32_t b) {
  const geom_model *ga = &world->model.geoms[a], *gb = &world->model.geoms[b];
  int32_t sa = ctx->geom_body[a], sb = ctx->geom_body[b];
  if (sa == sb)
    return false;
  if (ctx->body_dof[sa] < 0 && ctx->body_dof[sb] < 0)
    return false;
  return (ga->category_bits & gb->collide_mask) && (gb->category_bits & ga->collide_mask);
}

/* Does the box [lo, hi] reach within the plane's solid side? */
static bool box_reaches_plane(const xform *plane, vec3 lo, vec3 hi) {
  vec3 n = m3_col(&plane->R, 2);
  vec3 c = v3_scale(v3_add(lo, hi), 0.5);
  vec3 e = v3_scale(v3_sub(hi, lo), 0.5);
  double lowest = v3_dot(n, v3_sub(c, plane->p)) - v3_dot(v3_abs(n), e);
  return lowest <= 0.0;
}

static int compare_pairs(const void *x, const void *y) {
  const sap_pair *a = x, *b = y;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return (a->b > b->b) - (a->b < b->b);
}

static int stage_broadphase(lcp_world_t *world, step_context *ctx) {
  arena *a = &world->scratch;
  const world_model *model = &world->model;
  int32_t ng = ctx->geom_count;
  /* Proxies are the non-plane geoms in slot order; planes are infinite and
   * are tested against every non-static geom directly. */
  int32_t *proxy_geom = NEW(a, int32_t, ng);
  int32_t *planes = NEW(a, int32_t, ng);
  vec3 *lo = NEW(a, vec3, ng), *hi = NEW(a, vec3, ng);
  uint8_t *skip = NEW(a, uint8_t, ng);
  if (!proxy_geom || !planes || !lo || !hi || !skip)
    return LCP_ERR_NO_MEMORY;
  int32_t proxies = 0, plane_count = 0;
  for (int32_t g = 0; g < ng; ++g) {
    if (model->geoms[g].shape.type == LCP_SHAPE_PLANE) {
      planes[plane_count++] = g;
      continue;
    }
    proxy_geom[proxies] = g;
    lo[proxies] = ctx->geom_lo[g];
    hi[proxies] = ctx->geom_hi[g];
    skip[proxies] = ctx->body_dof[ctx->geom_body[g]] < 0;
    proxies++;
  }
  sap_pair *found = NULL;
  int32_t found_count = 0;
  int rc = sap_update(&world->broadphase, proxies, lo, hi, skip, a, &found, &found_count);
  if (rc != LCP_OK)
    return rc;
  sap_pair *plane_pairs = NEW(a, sap_pair, (int64_t)plane_count * proxies);
  ctx->pairs = NEW(a, sap_pair, found_count + (int64_t)plane_count * proxies);
  if (!plane_pairs || !ctx->pairs)
    return LCP_ERR_NO_MEMORY;
  int32_t plane_pair_count = 0;
  for (int32_t p = 0; p < plane_count; ++p) {
    int32_t pg = planes[p];
    for (int32_t i = 0; i < proxies; ++i) {
      int32_t g = proxy_geom[i];
      if (!geoms_may_collide(world, ctx, pg, g) ||
          !box_reaches_plane(&ctx->geom_x[pg], ctx->geom_lo[g], ctx->geom_hi[g]))
        continue;
      plane_pairs[plane_pair_count++] = pg < g ? (sap_pair){pg, g} : (sap_pair){g, pg};
    }
  }
  if (plane_count > 1)
    qsort(plane_pairs, (size_t)plane_pair_count, sizeof(sap_pair), compare_pairs);
  /* Merge the two sorted lists: the pairs, and so the manifolds and the
   * warm-start cache built from them, are sorted by geom slot, i.e. by id. */
  int32_t n = 0, i = 0, j = 0;
  while (i < found_count || j < plane_pair_count) {
    sap_pair next;
    if (i < found_count) {
      /* Proxy order is slot order, so a < b holds for geom slots too. */
      sap_pair sp = {proxy_geom[found[i].a], proxy_geom[found[i].b]};
      if (j < plane_pair_count && compare_pairs(&plane_pairs[j], &sp) < 0) {
        next = plane_pairs[j++];
      } else {
        ++i;
        if (!geoms_may_collide(world, ctx, sp.a, sp.b))
          continue;
        next = sp;
      }
    } else {
      next = plane_pairs[j++];
    }
    ctx->pairs[n++] = next;
  }
  ctx->pair_count = n;
  return LCP_OK;
}

/* ---- 3. narrow phase ---- */
static int stage_narrowphase(lcp_world_t *world, step_context *ctx) {
  arena *a = &world->scratch;
  ctx->manifolds = NEW(a, manifold, ctx->pair_count);
  ctx->manifold_pair = NEW(a, int32_t, ctx->pair_count);
  if (!ctx->manifolds || !ctx->manifold_pair)
    return LCP_ERR_NO_MEMORY;
  double margin = ctx->settings->contact_margin;
  int32_t n = 0, points = 0;
  for (int32_t i = 0; i < ctx->pair_count; ++i) {
    int32_t ga = ctx->pairs[i].a, gb = ctx->pairs[i].b;
    manifold *m = &ctx->manifolds[n];
    int32_t count = collide_shapes(&world->model.geoms[ga].shape, &ctx->geom_x[ga],
                                   &world->model.geoms[gb].shape, &ctx->geom_x[gb], margin, m);
    if (count <= 0)
      continue;
    m->point_count = count;
    ctx->manifold_pair[n++] = i;
    points += count;
  }
  ctx->manifold_count = n;
  ctx->contact_count = points;
  return LCP_OK;
}

/* ---- 4. rows ---- */

static const cached_manifold *cache_find(const world_state *state, lcp_geom_id a, lcp_geom_id b) {
  int32_t lo = 0, hi = state->cache_count - 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    const cached_manifold *c = &state->cache[mid];
    if (c->geom_a == a && c->geom_b == b)
      return c;
    if (c->geom_a < a || (c->geom_a == a && c->geom_b < b))
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return NULL;
}

/* Writes one side of a contact row: J = s [d, r × d], M⁻¹Jᵀ = s [d/m, I⁻¹(r × d)]
 * (seed 000: J_lin, J_ang and T = M⁻¹Jᵀ per body). */
static void write_side(solver_row *row, int side, int32_t dof, int32_t coef, double *J,
                       double *MinvJt, vec3 d, vec3 r, double sign, double inv_mass,
                       const mat3 *inv_inertia) {
  if (dof < 0) {
    row->dof_offset[side] = 0;
    row->dof_count[side] = 0;
    row->coef_offset[side] = coef;
    return;
  }
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

static int stage_rows(lcp_world_t *world, step_context *ctx) {
  arena *a = &world->scratch;
  const lcp_world_settings_t *s = ctx->settings;
  const world_model *model = &world->model;
  int32_t row_count = 3 * ctx->contact_count;
  solver_problem *p = &ctx->problem;
  p->row_count = row_count;
  p->rows = NEW(a, solver_row, row_count);
  p->J = NEW(a, double, 12 * row_count);
  p->MinvJt = NEW(a, double, 12 * row_count);
  p->velocity = NEW(a, double, p->dof_count);
  ctx->u_free = NEW(a, double, p->dof_count);
  ctx->manifold_row = NEW(a, int32_t, ctx->manifold_count);
  if (!p->rows || !p->J || !p->MinvJt || !p->velocity || !ctx->u_free || !ctx->manifold_row)
    return LCP_ERR_NO_MEMORY;

  /* u_free = u + h M⁻¹ f_ext (DESIGN.md §3 step 5). Gyroscopic torque is
   * not added here: angular momentum is carried exactly in integrate. */
  double h = s->timestep;
  vec3 g = v3_from(s->gravity);
  for (int32_t i = 0; i < ctx->body_count; ++i) {
    int32_t dof = ctx->body_dof[i];
    if (dof < 0)
      continue;
    const body_state *b = &world->state.bodies[i];
    vec3 v = v3_madd(b->linear_velocity, v3_madd(g, b->force, model->bodies[i].inv_mass), h);
    vec3 w = v3_madd(b->angular_velocity, m3_mulv(&ctx->inv_inertia_world[i], b->torque), h);
    double *u = &ctx->u_free[dof];
    u[0] = v.x, u[1] = v.y, u[2] = v.z, u[3] = w.x, u[4] = w.y, u[5] = w.z;
  }
  memcpy(p->velocity, ctx->u_free, sizeof(double) * (size_t)p->dof_count);

  int32_t r = 0, warm = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const manifold *m = &ctx->manifolds[k];
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    const geom_model *ga = &model->geoms[pair->a], *gb = &model->geoms[pair->b];
    int32_t sa = ctx->geom_body[pair->a], sb = ctx->geom_body[pair->b];
    double mu = sqrt(ga->friction * gb->friction);
    const cached_manifold *cached =
        s->warm_start ? cache_find(&world->state, ga->id, gb->id) : NULL;
    vec3 t[2];
    v3_tangent_basis(m->normal, &t[0], &t[1]);
    ctx->manifold_row[k] = r;
    for (int32_t q = 0; q < m->point_count; ++q) {
      const contact_point *cp = &m->points[q];
      vec3 ra = v3_sub(cp->position, ctx->body_x[sa].p);
      vec3 rb = v3_sub(cp->position, ctx->body_x[sb].p);
      /* Baumgarte with slop (seed 002 §2.2–2.3, DESIGN.md §3 step 4): push
       * out what is beyond the slop over a few steps; a gap (depth < 0)
       * lets the bodies approach by exactly the gap in this step. */
      double depth = cp->depth, target = 0.0;
      if (depth > s->baumgarte_slop)
        target = s->baumgarte_beta * (depth - s->baumgarte_slop) / h;
      else if (depth < 0.0)
        target = depth / h;
      const cached_point *warm_point = NULL;
      if (cached)
        for (int32_t c = 0; c < cached->point_count; ++c)
          if (cached->points[c].feature_id == cp->feature_id) {
            warm_point = &cached->points[c];
            break;
          }
      warm += warm_point != NULL;
      for (int32_t d = 0; d < 3; ++d, ++r) {
        solver_row *row = &p->rows[r];
        vec3 dir = d == 0 ? m->normal : t[d - 1];
        /* Side A moves against the normal, side B along it: w = n·(u_B − u_A)
         * at the contact point, positive when separating. */
        write_side(row, 0, ctx->body_dof[sa], 12 * r, p->J, p->MinvJt, dir, ra, -1.0,
                   model->bodies[sa].inv_mass, &ctx->inv_inertia_world[sa]);
        write_side(row, 1, ctx->body_dof[sb], 12 * r + 6, p->J, p->MinvJt, dir, rb, 1.0,
                   model->bodies[sb].inv_mass, &ctx->inv_inertia_world[sb]);
        row->cfm = s->cfm;
        if (d == 0) {
          row->kind = ROW_NORMAL;
          row->normal_row = -1;
          row->mu = 0.0;
          row->target = target;
          row->lo = 0.0;
          row->hi = INFINITY;
          row->lambda = warm_point ? warm_point->normal_impulse : 0.0;
        } else {
          row->kind = d == 1 ? ROW_FRICTION_1 : ROW_FRICTION_2;
          row->normal_row = r - d;
          row->mu = mu;
          row->target = 0.0;
          row->lo = -INFINITY;
          row->hi = INFINITY;
          row->lambda = warm_point ? warm_point->friction_impulse[d - 1] : 0.0;
        }
      }
    }
  }
  ctx->warm_started = warm;
  return LCP_OK;
}

/* ---- 5. solve ---- */
static int stage_solve(lcp_world_t *world, step_context *ctx, solver_result *result) {
  const lcp_world_settings_t *s = ctx->settings;
  solver_settings ss = {
      .max_iterations = s->iterations,
      .omega = s->sor_omega,
      .tolerance = s->residual_tolerance,
      .friction_model = s->friction_model,
  };
  *result = (solver_result){0, 0.0};
  if (ctx->problem.row_count == 0)
    return LCP_OK;
  switch (s->solver) {
  case LCP_SOLVER_JACOBI:
    return solver_jacobi(&ss, &ctx->problem, result, &world->scratch);
  case LCP_SOLVER_DIRECT:
    return solver_direct(&ss, &ctx->problem, result, &world->scratch, s->direct_max_rows);
  case LCP_SOLVER_PGS:
  default:
    return solver_pgs(&ss, &ctx->problem, result, &world->scratch);
  }
}

/* ---- 6. integrate ---- */

static void mark_pushed_bodies(step_context *ctx) {
  /* A body is pushed when any row touching it carries an impulse. */
  const solver_problem *p = &ctx->problem;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    int32_t first = ctx->manifold_row[k];
    int32_t rows = 3 * ctx->manifolds[k].point_count;
    for (int32_t r = first; r < first + rows; ++r)
      if (p->rows[r].lambda != 0.0) {
        ctx->pushed[ctx->geom_body[pair->a]] = 1;
        ctx->pushed[ctx->geom_body[pair->b]] = 1;
        break;
      }
  }
}

static void stage_integrate(lcp_world_t *world, step_context *ctx) {
  const world_model *model = &world->model;
  double h = ctx->settings->timestep;
  mark_pushed_bodies(ctx);
  for (int32_t i = 0; i < ctx->body_count; ++i) {
    body_state *b = &world->state.bodies[i];
    int32_t dof = ctx->body_dof[i];
    b->force = v3_zero();
    b->torque = v3_zero();
    if (dof < 0)
      continue;
    const double *u = &ctx->problem.velocity[dof];
    vec3 v = v3(u[0], u[1], u[2]);
    vec3 w = v3(u[3], u[4], u[5]);
    /* Semi-implicit Euler (DESIGN.md §3 step 6): positions from u⁺. A body
     * no constraint pushed this step is in ballistic flight under constant
     * forces, and for it the step is made exact by removing the ½h²a that
     * semi-implicit Euler adds: x⁺ = x + h u⁺ − ½h²a = x + h u + ½h²a. */
    vec3 step = v3_scale(v, h);
    if (!ctx->pushed[i]) {
      vec3 h_accel = v3_sub(v3_from(&ctx->u_free[dof]), b->linear_velocity);
      step = v3_madd(step, h_accel, -0.5 * h);
    }
    b->position = v3_add(b->position, step);
    /* q̇ = ½ ω ⊗ q, renormalised (seed 002 §1). Then ω is re-derived from
     * the angular momentum L = I_w ω, which no torque changed after the
     * solve: ω⁺ = I_w(q⁺)⁻¹ I_w(q) ω, so a tumbling body keeps L exactly. */
    quat q_new = q_integrate(b->orientation, w, h);
    const mat3 *I_local = &model->bodies[i].inertia_local;
    vec3 L = m3_mulv(&ctx->body_x[i].R, m3_mulv(I_local, m3_tmulv(&ctx->body_x[i].R, w)));
    mat3 R_new = q_to_mat3(q_new);
    vec3 w_new = m3_mulv(&R_new, m3_mulv(&model->bodies[i].inv_inertia_local, m3_tmulv(&R_new, L)));
    b->orientation = q_new;
    b->linear_velocity = v;
    b->angular_velocity = w_new;
  }
}

/* Keeps the solved impulses for the next step's warm start and the contact
 * list for lcp_world_get_contacts. */
static int store_contacts(lcp_world_t *world, const step_context *ctx) {
  world_state *state = &world->state;
  const world_model *model = &world->model;
  if (world_reserve((void **)&state->cache, &state->cache_capacity, ctx->manifold_count,
                    sizeof(cached_manifold)) != LCP_OK ||
      world_reserve((void **)&world->contacts, &world->contact_capacity, ctx->contact_count,
                    sizeof(lcp_contact_info_t)) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  int32_t n = 0;
  const solver_row *rows = ctx->problem.rows;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const manifold *m = &ctx->manifolds[k];
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    const geom_model *ga = &model->geoms[pair->a], *gb = &model->geoms[pair->b];
    cached_manifold *c = &state->cache[k];
    memset(c, 0, sizeof *c);
    c->geom_a = ga->id;
    c->geom_b = gb->id;
    c->point_count = m->point_count;
    for (int32_t q = 0; q < m->point_count; ++q) {
      const solver_row *r = &rows[ctx->manifold_row[k] + 3 * q];
      c->points[q] =
          (cached_point){m->points[q].feature_id, r[0].lambda, {r[1].lambda, r[2].lambda}};
      lcp_contact_info_t *info = &world->contacts[n++];
      info->geom_a = ga->id;
      info->geom_b = gb->id;
      info->body_a = ga->body;
      info->body_b = gb->body;
      info->robot_a = ga->robot;
      info->robot_b = gb->robot;
      info->link_a = ga->robot == LCP_NULL_ID ? -1 : ga->link;
      info->link_b = gb->robot == LCP_NULL_ID ? -1 : gb->link;
      v3_store(m->points[q].position, info->position);
      v3_store(m->normal, info->normal);
      info->depth = m->points[q].depth;
      info->normal_impulse = r[0].lambda;
      info->friction_impulse[0] = r[1].lambda;
      info->friction_impulse[1] = r[2].lambda;
    }
  }
  /* Manifolds come in pair order, which sorts by geom slot and so by id
   * (slots keep creation order): the cache stays sorted for cache_find. */
  state->cache_count = ctx->manifold_count;
  world->contact_count = n;
  return LCP_OK;
}

int lcp_world_step(lcp_world_t *world) {
  if (!world)
    return LCP_ERR_INVALID_ARGUMENT;
  /* Robots can be built, posed and queried, but their coupling into the
   * LCP (DESIGN.md §4) is not in the step yet: refuse rather than ignore. */
  if (world->model.robot_count > 0)
    return world_fail(world, LCP_ERR_STATE, "stepping a world with robots is not supported yet");
  step_context ctx = {
      .settings = &world->model.settings,
      .body_count = world->model.body_count,
      .geom_count = world->model.geom_count,
  };
  lcp_step_stats_t stats = {0};
  solver_result solve = {0, 0.0};
  double t_begin = now_seconds(), t = t_begin, t_next;
  int rc = LCP_OK;
#define RUN_STAGE(stage, call)                                                                     \
  do {                                                                                             \
    if (rc == LCP_OK)                                                                              \
      rc = (call);                                                                                 \
    t_next = now_seconds();                                                                        \
    stats.stage_seconds[stage] = t_next - t;                                                       \
    t = t_next;                                                                                    \
  } while (0)
  RUN_STAGE(LCP_STAGE_KINEMATICS, stage_kinematics(world, &ctx));
  RUN_STAGE(LCP_STAGE_BROADPHASE, stage_broadphase(world, &ctx));
  RUN_STAGE(LCP_STAGE_NARROWPHASE, stage_narrowphase(world, &ctx));
  RUN_STAGE(LCP_STAGE_ROWS, stage_rows(world, &ctx));
  RUN_STAGE(LCP_STAGE_SOLVE, stage_solve(world, &ctx, &solve));
  if (rc == LCP_OK) {
    ctx.pushed =
        arena_calloc(&world->scratch, (size_t)(ctx.body_count > 0 ? ctx.body_count : 1), 1);
    if (!ctx.pushed)
      rc = LCP_ERR_NO_MEMORY;
  }
  if (rc == LCP_OK)
    rc = store_contacts(world, &ctx);
  RUN_STAGE(LCP_STAGE_INTEGRATE, (stage_integrate(world, &ctx), LCP_OK));
#undef RUN_STAGE
  arena_reset(&world->scratch);
  if (rc != LCP_OK) {
    if (rc == LCP_ERR_NUMERIC)
      world_log(world, LCP_LOG_ERROR, "step %llu: the solver produced a non-finite value",
                (unsigned long long)world->state.step_count);
    return world_fail(world, rc, "step failed: %s", lcp_status_string(rc));
  }
  world->state.time += world->model.settings.timestep;
  world->state.step_count++;
  stats.pairs = ctx.pair_count;
  stats.manifolds = ctx.manifold_count;
  stats.contacts = ctx.contact_count;
  stats.rows = ctx.problem.row_count;
  stats.iterations = solve.iterations;
  stats.residual = solve.residual;
  stats.warm_started = ctx.warm_started;
  stats.step_seconds = now_seconds() - t_begin;
  world->stats = stats;
  return LCP_OK;
}
