/* The step (DESIGN.md §3): one function naming every stage in order, each
 * stage a function of the world and the step's scratch context, each timed.
 *
 * Nothing in the world's state changes before the integrate stage, so a step
 * that fails (out of memory, a non-finite solve) leaves the world as it was.
 * Everything the step derives lives in the scratch arena, which is empty
 * again when the step returns. */
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
  int32_t *geom_body;      /* [geom_count] body slot; -1 for a robot link's geom */
  int32_t *geom_robot;     /* [geom_count] robot slot; -1 for a body's geom */
  int32_t *geom_link;      /* [geom_count] the robot link, or -1 */
  uint8_t *geom_static;    /* [geom_count] nothing can move it (static body, fixed base link) */
  int32_t robot_count;
  int32_t *robot_dof;          /* [robot_count] offset of the robot's qd in the velocity vector */
  uint8_t **link_moves;        /* [robot_count][link_count] some dof moves the link */
  double **feedforward;        /* [robot_count][joint_count] joint force applied outside the rows:
                                  torque mode and gravity compensation, within the effort limit */
  int32_t **joint_rows;        /* [robot_count][JOINT_ROW_KINDS joint_count] row index or -1 */
  double (*robot_momentum)[6]; /* [robot_count] floating bases: momentum due at the step's end,
                                  before constraint impulses (linear; angular about the origin) */
  double **robot_tau;          /* [robot_count][nv] generalised forces of the step (no rows) */
  double **robot_qdd;          /* [robot_count][nv] ABA accelerations at the step's start */
  uint8_t *robot_free;         /* [robot_count] no row touches it: velocity Verlet this step */
  xform *geom_x;               /* [geom_count] */
  vec3 *geom_lo, *geom_hi;     /* [geom_count] margin-inflated world boxes */
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

/* ---- 1. kinematics: world poses, world inertias, robots' dynamics, geom poses and boxes ---- */

static double joint_effort_limit(const joint_model *joint, const lcp_joint_control_t *control) {
  if (control->effort_limit > 0.0)
    return control->effort_limit;
  return joint->effort_limit > 0.0 ? joint->effort_limit : INFINITY;
}

/* The feed-forward joint force — the torque-mode torque plus the gravity
 * compensation g(q) — is the motor's, so it is held to the effort limit too
 * (and the PD row's bounds leave room only for the rest, joint_rows). */
static double joint_feedforward(const joint_model *joint, const lcp_joint_control_t *control,
                                const double *gravity_torque, int32_t v) {
  double wanted = (control->mode == LCP_CONTROL_TORQUE ? control->torque : 0.0) +
                  (gravity_torque ? gravity_torque[v] : 0.0);
  double limit = joint_effort_limit(joint, control);
  return fmin(fmax(wanted, -limit), limit);
}

/* A wrench [F; τ_P] about the point P, moved to the world origin: τ + P × F. */
static void add_wrench_about_origin(double out[6], vec3 force, vec3 torque, vec3 point) {
  vec3 t = v3_add(torque, v3_cross(point, force));
  out[0] += force.x, out[1] += force.y, out[2] += force.z;
  out[3] += t.x, out[4] += t.y, out[5] += t.z;
}

/* The external wrench on a robot that is not a constraint impulse, about the
 * world origin, at the kinematics in d: gravity at the centre of mass, the
 * user's base wrench (the base part of a generalised force is a wrench about
 * the base origin) and link wrenches. */
static void robot_external_wrench(const mb_model *mb, const robot_state *st, const mb_data *d,
                                  vec3 g, double out[6]) {
  vec3 com;
  double mass;
  mb_center_of_mass(mb, d, &mass, &com);
  for (int k = 0; k < 6; ++k)
    out[k] = 0.0;
  add_wrench_about_origin(out, v3_scale(g, mass), v3_zero(), com);
  add_wrench_about_origin(out, v3_from(st->force), v3_from(st->force + 3), v3_from(st->q));
  for (int32_t l = 0; l < mb->link_count; ++l)
    add_wrench_about_origin(out, v3_from(st->link_wrench + 6 * l),
                            v3_from(st->link_wrench + 6 * l + 3), d->link_x[l].p);
}

/* out += s · the robot's external wrench at the kinematics in d. */
static void add_external_impulse(const mb_model *mb, const robot_state *st, const mb_data *d,
                                 vec3 g, double s, double out[6]) {
  double wrench[6];
  robot_external_wrench(mb, st, d, g, wrench);
  for (int k = 0; k < 6; ++k)
    out[k] += s * wrench[k];
}

/* The robot's unconstrained accelerations q̈(q, qd, τ) by the articulated-
 * body algorithm (DESIGN.md §4), τ being the user's generalised forces, the
 * torque-mode controllers and the gravity compensation; also leaves the ABA
 * factors in the robot's data for the rows' responses M⁻¹Jᵀ, and for a
 * floating base starts its momentum balance with the momentum now. */
static int robot_dynamics(lcp_world_t *world, step_context *ctx, int32_t r) {
  arena *a = &world->scratch;
  const robot_model *rm = &world->model.robots[r];
  const robot_state *st = &world->state.robots[r];
  const mb_model *mb = &rm->mb;
  mb_data *d = &world->robot_data[r];
  int32_t nv = mb->nv, nj = mb->joint_count;
  vec3 g = v3_from(ctx->settings->gravity);
  double *tau = NEW(a, double, nv), *qdd = NEW(a, double, nv);
  double *applied = NEW(a, double, nj);
  uint8_t *moves = NEW(a, uint8_t, mb->link_count);
  int32_t *rows = NEW(a, int32_t, JOINT_ROW_KINDS * nj);
  if (!tau || !qdd || !applied || !moves || !rows)
    return LCP_ERR_NO_MEMORY;
  for (int32_t l = 0; l < mb->link_count; ++l) {
    const mb_link *link = &mb->links[l];
    moves[l] = link->parent < 0 ? mb->floating : (moves[link->parent] || link->v_index >= 0);
  }
  memcpy(tau, st->force, sizeof(double) * (size_t)nv);
  double *gravity_torque = NULL;
  if (st->gravity_compensation) {
    /* g(q) by Newton–Euler at rest; only the joints' part is applied: the
     * base is not actuated. */
    double *rest = arena_calloc(a, (size_t)nv, sizeof(double));
    gravity_torque = NEW(a, double, nv);
    if (!rest || !gravity_torque)
      return LCP_ERR_NO_MEMORY;
    mb_inverse_dynamics(mb, st->q, rest, NULL, g, d, gravity_torque);
  }
  for (int32_t j = 0; j < nj; ++j) {
    int32_t v = mb->links[rm->joints[j].link].v_index;
    applied[j] = joint_feedforward(&rm->joints[j], &st->control[j], gravity_torque, v);
    tau[v] += applied[j];
  }
  mb_forward_dynamics(mb, st->q, st->qd, tau, st->link_wrench, g, d, qdd);
  if (mb->floating) {
    vec3 linear, angular;
    mb_momentum(mb, d, &linear, &angular);
    double *due = ctx->robot_momentum[r];
    due[0] = linear.x, due[1] = linear.y, due[2] = linear.z;
    due[3] = angular.x, due[4] = angular.y, due[5] = angular.z;
  }
  ctx->robot_tau[r] = tau;
  ctx->robot_qdd[r] = qdd;
  ctx->link_moves[r] = moves;
  ctx->feedforward[r] = applied;
  ctx->joint_rows[r] = rows;
  return LCP_OK;
}

static int stage_kinematics(lcp_world_t *world, step_context *ctx) {
  const world_model *model = &world->model;
  arena *a = &world->scratch;
  int32_t nb = ctx->body_count, ng = ctx->geom_count, nr = ctx->robot_count;
  ctx->body_x = NEW(a, xform, nb);
  ctx->inv_inertia_world = NEW(a, mat3, nb);
  ctx->body_dof = NEW(a, int32_t, nb);
  ctx->geom_body = NEW(a, int32_t, ng);
  ctx->geom_robot = NEW(a, int32_t, ng);
  ctx->geom_link = NEW(a, int32_t, ng);
  ctx->geom_static = NEW(a, uint8_t, ng);
  ctx->geom_x = NEW(a, xform, ng);
  ctx->geom_lo = NEW(a, vec3, ng);
  ctx->geom_hi = NEW(a, vec3, ng);
  ctx->robot_dof = NEW(a, int32_t, nr);
  ctx->link_moves = NEW(a, uint8_t *, nr);
  ctx->feedforward = NEW(a, double *, nr);
  ctx->joint_rows = NEW(a, int32_t *, nr);
  ctx->robot_momentum = (double(*)[6])NEW(a, double, 6 * (nr > 0 ? nr : 1));
  ctx->robot_tau = NEW(a, double *, nr);
  ctx->robot_qdd = NEW(a, double *, nr);
  ctx->robot_free = NEW(a, uint8_t, nr);
  if (!ctx->body_x || !ctx->inv_inertia_world || !ctx->body_dof || !ctx->geom_body ||
      !ctx->geom_robot || !ctx->geom_link || !ctx->geom_static || !ctx->geom_x || !ctx->geom_lo ||
      !ctx->geom_hi || !ctx->robot_dof || !ctx->link_moves || !ctx->feedforward ||
      !ctx->joint_rows || !ctx->robot_momentum || !ctx->robot_tau || !ctx->robot_qdd ||
      !ctx->robot_free)
    return LCP_ERR_NO_MEMORY;
  /* The velocity vector u: 6 per dynamic body, then each robot's qd. */
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
  for (int32_t r = 0; r < nr; ++r) {
    ctx->robot_dof[r] = dofs;
    dofs += model->robots[r].mb.nv;
  }
  ctx->problem.dof_count = dofs;
  ctx->u_free = NEW(a, double, dofs);
  if (!ctx->u_free)
    return LCP_ERR_NO_MEMORY;
  for (int32_t r = 0; r < nr; ++r) {
    int rc = robot_dynamics(world, ctx, r);
    if (rc != LCP_OK)
      return rc;
  }
  world->robot_kinematics_stale = false; /* the dynamics passes ran them at the state */
  double margin = ctx->settings->contact_margin;
  vec3 inflate = v3(margin, margin, margin);
  for (int32_t g = 0; g < ng; ++g) {
    const geom_model *geom = &model->geoms[g];
    if (geom->robot != LCP_NULL_ID) {
      int32_t r = world_robot_slot(world, geom->robot);
      ctx->geom_body[g] = -1;
      ctx->geom_robot[g] = r;
      ctx->geom_link[g] = geom->link;
      ctx->geom_static[g] = !ctx->link_moves[r][geom->link];
      ctx->geom_x[g] = xf_mul(&world->robot_data[r].link_x[geom->link], &geom->local);
    } else {
      int32_t slot = world_body_slot(world, geom->body);
      ctx->geom_body[g] = slot;
      ctx->geom_robot[g] = -1;
      ctx->geom_link[g] = -1;
      ctx->geom_static[g] = ctx->body_dof[slot] < 0;
      ctx->geom_x[g] = xf_mul(&ctx->body_x[slot], &geom->local);
    }
    vec3 lo, hi;
    shape_aabb(&geom->shape, &ctx->geom_x[g], &lo, &hi);
    ctx->geom_lo[g] = v3_sub(lo, inflate);
    ctx->geom_hi[g] = v3_add(hi, inflate);
  }
  return LCP_OK;
}

/* ---- 2. broad phase: sweep and prune, then filtering; planes apart ---- */

/* Geoms of one body never collide, nor two that nothing can move; links of
 * one robot only with self-collision on, and never a link with itself, its
 * parent or its child. */
static bool geoms_may_collide(const lcp_world_t *world, const step_context *ctx, int32_t a,
                              int32_t b) {
  const geom_model *ga = &world->model.geoms[a], *gb = &world->model.geoms[b];
  if (ctx->geom_static[a] && ctx->geom_static[b])
    return false;
  int32_t ra = ctx->geom_robot[a], rb = ctx->geom_robot[b];
  if (ra < 0 && rb < 0 && ctx->geom_body[a] == ctx->geom_body[b])
    return false;
  if (ra >= 0 && ra == rb) {
    const robot_model *robot = &world->model.robots[ra];
    int32_t la = ctx->geom_link[a], lb = ctx->geom_link[b];
    if (!robot->self_collision || la == lb || robot->mb.links[la].parent == lb ||
        robot->mb.links[lb].parent == la)
      return false;
  }
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

/* Can any two of the proxies collide at all? Not when they are all links of
 * one robot without self-collision (a robot alone on the ground: planes are
 * not proxies); then the sweep is skipped (its endpoint order is rebuilt
 * when needed). */
static bool proxies_may_pair(const lcp_world_t *world, const step_context *ctx,
                             const int32_t *proxy_geom, int32_t proxies) {
  int32_t robot = -1;
  for (int32_t i = 0; i < proxies; ++i) {
    int32_t r = ctx->geom_robot[proxy_geom[i]];
    if (r < 0 || world->model.robots[r].self_collision || (robot >= 0 && r != robot))
      return true;
    robot = r;
  }
  return false;
}

/* Up to this many proxies, every pair's boxes are compared directly: for a
 * robot beside a few bodies that is a few dozen comparisons, where the sweep
 * (its endpoint upkeep, cell grid and scratch tables) costs several times
 * more. */
#define BROADPHASE_DIRECT_MAX 24

/* sap_update's result by brute force: every pair overlapping on all three
 * axes (closed intervals), a < b, sorted by (a, b), no pair of two skipped
 * proxies. The sap's endpoint list is left as it is: sap_update refreshes
 * every endpoint from the boxes it is given, so a later sweep stays exact. */
static int direct_pairs(int32_t count, const vec3 *lo, const vec3 *hi, const uint8_t *skip,
                        arena *a, sap_pair **out, int32_t *out_count) {
  sap_pair *pairs = NEW(a, sap_pair, (int64_t)count * (count - 1) / 2);
  if (!pairs)
    return LCP_ERR_NO_MEMORY;
  int32_t n = 0;
  for (int32_t i = 0; i < count; ++i)
    for (int32_t j = i + 1; j < count; ++j) {
      if (skip[i] && skip[j])
        continue;
      if (lo[i].x <= hi[j].x && lo[j].x <= hi[i].x && lo[i].y <= hi[j].y && lo[j].y <= hi[i].y &&
          lo[i].z <= hi[j].z && lo[j].z <= hi[i].z)
        pairs[n++] = (sap_pair){i, j};
    }
  *out = pairs;
  *out_count = n;
  return LCP_OK;
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
    skip[proxies] = ctx->geom_static[g];
    proxies++;
  }
  sap_pair *found = NULL;
  int32_t found_count = 0;
  if (proxies_may_pair(world, ctx, proxy_geom, proxies)) {
    int rc = proxies <= BROADPHASE_DIRECT_MAX
                 ? direct_pairs(proxies, lo, hi, skip, a, &found, &found_count)
                 : sap_update(&world->broadphase, proxies, lo, hi, skip, a, &found, &found_count);
    if (rc != LCP_OK)
      return rc;
  }
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
enum { NARROW_PREFETCH = 8 };
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
    if (i + NARROW_PREFETCH < ctx->pair_count) {
      /* a large world's geoms are not in the cache, and the pairs name
       * them out of order: ask for those of a pair a few ahead */
      const sap_pair *ahead = &ctx->pairs[i + NARROW_PREFETCH];
      __builtin_prefetch(&world->model.geoms[ahead->a].shape);
      __builtin_prefetch(&world->model.geoms[ahead->b].shape);
      __builtin_prefetch(&ctx->geom_x[ahead->a]);
      __builtin_prefetch(&ctx->geom_x[ahead->b]);
    }
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

/* The last step's manifold of geoms (a, b), or NULL. The manifolds of a
 * step come in the cache's order (see store_contacts), so the search starts
 * where the previous one ended (*cursor): in a large world a binary search
 * per manifold reads the cache from all over memory. */
static const cached_manifold *cache_find(const world_state *state, lcp_geom_id a, lcp_geom_id b,
                                         int32_t *cursor) {
  int32_t lo = *cursor, hi = state->cache_count - 1;
  /* the next few entries first: the one sought, or one past it */
  for (int32_t end = lo + 4 < state->cache_count ? lo + 4 : state->cache_count; lo < end; ++lo) {
    const cached_manifold *c = &state->cache[lo];
    if (c->geom_a == a && c->geom_b == b) {
      *cursor = lo + 1;
      return c;
    }
    if (c->geom_a > a || (c->geom_a == a && c->geom_b > b)) {
      *cursor = lo;
      return NULL;
    }
  }
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    const cached_manifold *c = &state->cache[mid];
    if (c->geom_a == a && c->geom_b == b) {
      *cursor = mid + 1;
      return c;
    }
    if (c->geom_a < a || (c->geom_a == a && c->geom_b < b))
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  *cursor = lo;
  return NULL;
}

/* The side of a contact row on a free body: its coefficients are left to
 * the solver, from the row's solver_contact (J = ±[d, r × d],
 * M⁻¹Jᵀ = ±[d/m, I⁻¹(r × d)], seed 000); the arrays keep room for them. */
static void body_side(solver_row *row, int side, int32_t dof, int32_t coef) {
  row->dof_offset[side] = dof;
  row->dof_count[side] = 6;
  row->coef_offset[side] = coef;
}

/* Writes one side of a contact row on a free body whose other side is a
 * robot link: J = s [d, r × d], M⁻¹Jᵀ = s [d/m, I⁻¹(r × d)]
 * (seed 000: J_lin, J_ang and T = M⁻¹Jᵀ per body). */
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

/* Writes one side of a contact row on a robot link (DESIGN.md §4): the
 * joint-space Jacobian row of the contact point along dir, and its response
 * M⁻¹Jᵀ from the articulated-body factors, O(n) — or copied from response
 * when it was computed already (mb_response_point3). When other_link ≥ 0
 * the row is a self-contact and the side carries J_link − J_other (both
 * links move the same velocities), with scratch holding 2 nv doubles. */
static void write_link_side(solver_row *row, int side, const lcp_world_t *world,
                            const step_context *ctx, int32_t r, int32_t link, int32_t other_link,
                            int32_t coef, double *J, double *MinvJt, vec3 point, vec3 dir,
                            double sign, double *scratch, const double *response) {
  const mb_model *mb = &world->model.robots[r].mb;
  mb_data *d = &world->robot_data[r];
  int32_t nv = mb->nv;
  double *j = J + coef, *t = MinvJt + coef;
  mb_point_jacobian_row(mb, d, link, point, dir, v3_zero(), j);
  if (response)
    memcpy(t, response, sizeof(double) * (size_t)nv);
  else
    mb_response_point(mb, d, link, point, dir, v3_zero(), t);
  if (other_link >= 0) {
    mb_point_jacobian_row(mb, d, other_link, point, dir, v3_zero(), scratch);
    mb_response_point(mb, d, other_link, point, dir, v3_zero(), scratch + nv);
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

/* Baumgarte with slop (seed 002 §2.2–2.3, DESIGN.md §3 step 4) for a depth
 * (> 0 penetrating): push out what is beyond the slop over a few steps; a
 * gap (depth < 0) lets the sides approach by exactly the gap in this step. */
static double baumgarte_target(const lcp_world_settings_t *s, double depth) {
  if (depth > s->baumgarte_slop)
    return s->baumgarte_beta * (depth - s->baumgarte_slop) / s->timestep;
  if (depth < 0.0)
    return depth / s->timestep;
  return 0.0;
}

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

/* Does any row touch the robot this step: a contact on one of its links, or
 * a joint row (limit, damping, friction, controller)? */
static bool robot_has_rows(const lcp_world_t *world, const step_context *ctx, int32_t r) {
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

/* The robots' free velocities (DESIGN.md §3 step 5): u_free = qd + κ h q̈.
 * A robot no row touches moves by velocity Verlet — a half kick here, the
 * drift, and a half kick at the new positions in integrate_robots — with
 * the velocity products of both half kicks taken at the mid-step velocity
 * (here predicted, there known), which makes the step symmetric in time:
 * second order, and the energy of a free multibody stays bounded where
 * semi-implicit Euler lets it drift by O(h) through the explicit velocity
 * products. Rows act on the velocity the positions move with, so a robot
 * they touch takes the full kick (semi-implicit Euler); its velocity is then
 * the step's, and a later free step starts with a full kick (leapfrog). */
#define MID_VELOCITY_PASSES 2
static int robot_free_velocities(lcp_world_t *world, step_context *ctx) {
  double h = ctx->settings->timestep;
  vec3 g = v3_from(ctx->settings->gravity);
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    const mb_model *mb = &world->model.robots[r].mb;
    const robot_state *st = &world->state.robots[r];
    ctx->robot_free[r] = !robot_has_rows(world, ctx, r);
    double kick = ctx->robot_free[r] && st->velocity_synchronized ? 0.5 * h : h;
    double *u = &ctx->u_free[ctx->robot_dof[r]];
    double *qdd = ctx->robot_qdd[r];
    for (int32_t k = 0; k < mb->nv; ++k)
      u[k] = st->qd[k] + kick * qdd[k];
    if (kick < h) {
      /* q̈ again with the velocity products at the mid-step velocity, which
       * depends on q̈: two fixed-point passes (the chain test's energy error
       * goes 46 % → 0.6 % with one, 0.4 % with two). Same q, so the factors
       * for the responses stay valid. */
      double *mid_qdd = NEW(&world->scratch, double, mb->nv);
      if (!mid_qdd)
        return LCP_ERR_NO_MEMORY;
      for (int pass = 0; pass < MID_VELOCITY_PASSES; ++pass) {
        mb_forward_dynamics(mb, st->q, u, ctx->robot_tau[r], st->link_wrench, g,
                            &world->robot_data[r], mid_qdd);
        for (int32_t k = 0; k < mb->nv; ++k)
          u[k] = st->qd[k] + kick * mid_qdd[k];
      }
      /* The passes left the links' velocities at u, not at the state's qd:
       * a query after a step that fails before its integrate stage
       * refreshes them. Nothing later in the step reads them. */
      world->robot_kinematics_stale = true;
    }
    if (mb->floating)
      add_external_impulse(mb, st, &world->robot_data[r], g, kick, ctx->robot_momentum[r]);
  }
  return LCP_OK;
}

/* A one-dof row on a robot's joint velocity: w = sign·qd_v⁺ (DESIGN.md §4–5). */
static solver_row *add_joint_row(solver_problem *p, int32_t *r, const step_context *ctx,
                                 int32_t robot, int32_t nv, int32_t coef, double target, double cfm,
                                 double lo, double hi, double warm) {
  solver_row *row = &p->rows[(*r)++];
  write_absent_side(row, 0);
  row->dof_offset[1] = ctx->robot_dof[robot];
  row->dof_count[1] = nv;
  row->coef_offset[1] = coef;
  row->kind = ROW_BILATERAL;
  row->normal_row = -1;
  row->mu = 0.0;
  row->target = target;
  row->cfm = cfm;
  row->lo = lo;
  row->hi = hi;
  row->lambda = fmin(fmax(warm, lo), hi);
  return row;
}

/* The implicit PD controller's row (DESIGN.md §5): λ = h τ with
 * τ = kp (q* − q − h qd⁺) + kd (qd* − qd⁺) is the soft row w = qd⁺,
 * w_ref = (kp (q* − q) + kd qd*)/(h kp + kd), cfm = 1/(h (h kp + kd)),
 * |λ| ≤ h τmax less the feed-forward force the motor already gives. */
typedef struct control_row {
  double target, cfm, lo, hi;
} control_row;

static control_row control_row_values(double h, const joint_model *joint,
                                      const lcp_joint_control_t *c, double q, double feedforward) {
  double kp = c->mode == LCP_CONTROL_POSITION ? c->kp : 0.0, kd = c->kd;
  double stiffness = h * kp + kd;
  double limit = joint_effort_limit(joint, c);
  return (control_row){(kp * (c->position - q) + kd * c->velocity) / stiffness,
                       1.0 / (h * stiffness), -h * (limit + feedforward),
                       h * (limit - feedforward)};
}

/* The rows of every movable joint: position limits (unilateral, Baumgarte),
 * viscous damping (cfm = 1/(h b): λ = −h b qd⁺), Coulomb friction (|λ| ≤ h f)
 * and the implicit PD controller (DESIGN.md §5). They share the coefficients
 * J = e_v, M⁻¹Jᵀ = column v of M⁻¹ (the upper limit its negation). */
static int32_t joint_rows(lcp_world_t *world, step_context *ctx, int32_t robot, int32_t r,
                          int64_t *coef) {
  const lcp_world_settings_t *s = ctx->settings;
  const robot_model *rm = &world->model.robots[robot];
  const robot_state *st = &world->state.robots[robot];
  const mb_model *mb = &rm->mb;
  mb_data *d = &world->robot_data[robot];
  solver_problem *p = &ctx->problem;
  int32_t nv = mb->nv;
  double h = s->timestep;
  int32_t *rows = ctx->joint_rows[robot];
  for (int32_t j = 0; j < mb->joint_count; ++j) {
    const joint_model *joint = &rm->joints[j];
    const lcp_joint_control_t *c = &st->control[j];
    const mb_link *link = &mb->links[joint->link];
    int32_t v = link->v_index;
    double q = st->q[link->q_index];
    double u_free = ctx->u_free[ctx->robot_dof[robot] + v];
    int near = joint_limits_near(joint, q, u_free, h);
    const double *warm = &st->joint_impulse[JOINT_ROW_KINDS * j];
    int32_t *mine = &rows[JOINT_ROW_KINDS * j];
    for (int k = 0; k < JOINT_ROW_KINDS; ++k)
      mine[k] = -1;
    bool controlled = c->mode == LCP_CONTROL_POSITION || c->mode == LCP_CONTROL_VELOCITY;
    if (!near && !(joint->damping > 0.0) && !(joint->friction > 0.0) && !controlled)
      continue; /* no row: skip the O(n) response */
    int32_t plus = (int32_t)*coef, minus = plus + nv;
    *coef += 2 * nv;
    double *J = p->J + plus, *T = p->MinvJt + plus;
    memset(J, 0, sizeof(double) * (size_t)nv);
    J[v] = 1.0;
    mb_response_dof(mb, d, v, T);
    for (int32_t k = 0; k < nv; ++k) {
      p->J[minus + k] = -J[k];
      p->MinvJt[minus + k] = -T[k];
    }
    if (near) {
      double gap_lower = q - joint->lower, gap_upper = joint->upper - q;
      if (near & 1) {
        mine[JOINT_ROW_LOWER] = r;
        add_joint_row(p, &r, ctx, robot, nv, plus, baumgarte_target(s, -gap_lower), s->cfm, 0.0,
                      INFINITY, warm[JOINT_ROW_LOWER]);
      }
      if (near & 2) {
        mine[JOINT_ROW_UPPER] = r;
        add_joint_row(p, &r, ctx, robot, nv, minus, baumgarte_target(s, -gap_upper), s->cfm, 0.0,
                      INFINITY, warm[JOINT_ROW_UPPER]);
      }
    }
    if (joint->damping > 0.0) {
      mine[JOINT_ROW_DAMPING] = r;
      add_joint_row(p, &r, ctx, robot, nv, plus, 0.0, 1.0 / (h * joint->damping), -INFINITY,
                    INFINITY, warm[JOINT_ROW_DAMPING]);
    }
    if (joint->friction > 0.0) {
      mine[JOINT_ROW_FRICTION] = r;
      double bound = h * joint->friction;
      add_joint_row(p, &r, ctx, robot, nv, plus, 0.0, s->cfm, -bound, bound,
                    warm[JOINT_ROW_FRICTION]);
    }
    if (controlled) {
      control_row v = control_row_values(h, joint, c, q, ctx->feedforward[robot][j]);
      mine[JOINT_ROW_CONTROL] = r;
      add_joint_row(p, &r, ctx, robot, nv, plus, v.target, v.cfm, v.lo, v.hi,
                    warm[JOINT_ROW_CONTROL]);
    }
  }
  return r;
}

static int stage_rows(lcp_world_t *world, step_context *ctx) {
  arena *a = &world->scratch;
  const lcp_world_settings_t *s = ctx->settings;
  const world_model *model = &world->model;
  solver_problem *p = &ctx->problem;
  /* Count rows and coefficients: 3 rows per contact point, each with its
   * sides' widths; at most JOINT_ROW_KINDS rows per joint sharing 2 nv. */
  int64_t row_capacity = 3 * (int64_t)ctx->contact_count, coef_count = 0;
  int32_t self_width = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    int64_t width = side_width(world, ctx, pair->a) + side_width(world, ctx, pair->b);
    coef_count += 3 * (int64_t)ctx->manifolds[k].point_count * width;
  }
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    const mb_model *mb = &model->robots[r].mb;
    row_capacity += JOINT_ROW_KINDS * (int64_t)mb->joint_count;
    coef_count += 2 * (int64_t)mb->nv * mb->joint_count;
    if (mb->nv > self_width)
      self_width = mb->nv;
  }
  p->rows = NEW(a, solver_row, row_capacity);
  p->J = NEW(a, double, coef_count);
  p->MinvJt = NEW(a, double, coef_count);
  p->velocity = NEW(a, double, p->dof_count);
  solver_contact *contacts = NEW(a, solver_contact, ctx->contact_count);
  double *body_inv_mass = NEW(a, double, p->dof_count / 6);
  double(*body_inv_inertia)[9] = (double(*)[9])NEW(a, double, 9 * (p->dof_count / 6));
  if (!contacts || !body_inv_mass || !body_inv_inertia)
    return LCP_ERR_NO_MEMORY;
  p->contacts = contacts;
  p->body_inv_mass = body_inv_mass;
  p->body_inv_inertia = (const double(*)[9])body_inv_inertia;
  p->contact_count = 0;
  ctx->manifold_row = NEW(a, int32_t, ctx->manifold_count);
  double *scratch = NEW(a, double, 2 * self_width);
  double *responses = NEW(a, double, 6 * self_width); /* per point: 3 directions × 2 sides */
  if (!p->rows || !p->J || !p->MinvJt || !p->velocity || !ctx->manifold_row || !scratch ||
      !responses)
    return LCP_ERR_NO_MEMORY;

  /* u_free = u + h M⁻¹ f_ext (DESIGN.md §3 step 5). Gyroscopic torque is
   * not added here: angular momentum is carried exactly in integrate.
   * Robots' parts were set by the kinematics stage. */
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
    /* bodies' dofs come first, 6 each (stage_kinematics) */
    body_inv_mass[dof / 6] = model->bodies[i].inv_mass;
    memcpy(body_inv_inertia[dof / 6], &ctx->inv_inertia_world[i], sizeof(double[9]));
  }
  int rc = robot_free_velocities(world, ctx);
  if (rc != LCP_OK)
    return rc;
  memcpy(p->velocity, ctx->u_free, sizeof(double) * (size_t)p->dof_count);

  int32_t r = 0, warm = 0;
  int64_t coef = 0;
  int32_t cache_cursor = 0;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const manifold *m = &ctx->manifolds[k];
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    const geom_model *ga = &model->geoms[pair->a], *gb = &model->geoms[pair->b];
    int32_t sa = ctx->geom_body[pair->a], sb = ctx->geom_body[pair->b];
    int32_t ra = ctx->geom_robot[pair->a], rb = ctx->geom_robot[pair->b];
    int32_t wa = side_width(world, ctx, pair->a), wb = side_width(world, ctx, pair->b);
    bool self_contact = ra >= 0 && ra == rb;
    double mu = sqrt(ga->friction * gb->friction);
    const cached_manifold *cached =
        s->warm_start ? cache_find(&world->state, ga->id, gb->id, &cache_cursor) : NULL;
    vec3 t[2];
    v3_tangent_basis(m->normal, &t[0], &t[1]);
    ctx->manifold_row[k] = r;
    for (int32_t q = 0; q < m->point_count; ++q) {
      const contact_point *cp = &m->points[q];
      vec3 ra_arm = sa >= 0 ? v3_sub(cp->position, ctx->body_x[sa].p) : v3_zero();
      vec3 rb_arm = sb >= 0 ? v3_sub(cp->position, ctx->body_x[sb].p) : v3_zero();
      double target = baumgarte_target(s, cp->depth);
      const cached_point *warm_point = NULL;
      if (cached)
        for (int32_t c = 0; c < cached->point_count; ++c)
          if (cached->points[c].feature_id == cp->feature_id) {
            warm_point = &cached->points[c];
            break;
          }
      warm += warm_point != NULL;
      /* Free bodies (or one and something static): the rows are described
       * by the point's geometry (solver_contact), not by coefficients. */
      bool on_bodies = !self_contact && ra < 0 && rb < 0;
      if (on_bodies) {
        solver_contact *c = &contacts[p->contact_count++];
        c->row = r;
        c->dof[0] = wa > 0 ? ctx->body_dof[sa] : -1;
        c->dof[1] = wb > 0 ? ctx->body_dof[sb] : -1;
        v3_store(m->normal, c->dir[0]);
        v3_store(t[0], c->dir[1]);
        v3_store(t[1], c->dir[2]);
        v3_store(ra_arm, c->arm[0]);
        v3_store(rb_arm, c->arm[1]);
      }
      /* a link side's three responses (normal, tangents) in one pass */
      vec3 dirs[3] = {m->normal, t[0], t[1]};
      const double *response_a = NULL, *response_b = NULL;
      if (!self_contact && wa > 0 && ra >= 0) {
        mb_response_point3(&model->robots[ra].mb, &world->robot_data[ra], ctx->geom_link[pair->a],
                           cp->position, dirs, responses);
        response_a = responses;
      }
      if (!self_contact && wb > 0 && rb >= 0) {
        mb_response_point3(&model->robots[rb].mb, &world->robot_data[rb], ctx->geom_link[pair->b],
                           cp->position, dirs, responses + 3 * wa);
        response_b = responses + 3 * wa;
      }
      for (int32_t d = 0; d < 3; ++d, ++r) {
        solver_row *row = &p->rows[r];
        vec3 dir = d == 0 ? m->normal : t[d - 1];
        /* Side A moves against the normal, side B along it: w = n·(u_B − u_A)
         * at the contact point, positive when separating. A self-contact
         * is one side carrying both links. */
        if (self_contact) {
          write_absent_side(row, 0);
          write_link_side(row, 1, world, ctx, rb, ctx->geom_link[pair->b], ctx->geom_link[pair->a],
                          (int32_t)coef, p->J, p->MinvJt, cp->position, dir, 1.0, scratch, NULL);
          coef += wb;
        } else {
          if (wa == 0)
            write_absent_side(row, 0);
          else if (ra >= 0)
            write_link_side(row, 0, world, ctx, ra, ctx->geom_link[pair->a], -1, (int32_t)coef,
                            p->J, p->MinvJt, cp->position, dir, -1.0, scratch, response_a + d * wa);
          else if (on_bodies)
            body_side(row, 0, ctx->body_dof[sa], (int32_t)coef);
          else
            write_side(row, 0, ctx->body_dof[sa], (int32_t)coef, p->J, p->MinvJt, dir, ra_arm, -1.0,
                       model->bodies[sa].inv_mass, &ctx->inv_inertia_world[sa]);
          coef += wa;
          if (wb == 0)
            write_absent_side(row, 1);
          else if (rb >= 0)
            write_link_side(row, 1, world, ctx, rb, ctx->geom_link[pair->b], -1, (int32_t)coef,
                            p->J, p->MinvJt, cp->position, dir, 1.0, scratch, response_b + d * wb);
          else if (on_bodies)
            body_side(row, 1, ctx->body_dof[sb], (int32_t)coef);
          else
            write_side(row, 1, ctx->body_dof[sb], (int32_t)coef, p->J, p->MinvJt, dir, rb_arm, 1.0,
                       model->bodies[sb].inv_mass, &ctx->inv_inertia_world[sb]);
          coef += wb;
        }
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
  for (int32_t robot = 0; robot < ctx->robot_count; ++robot)
    r = joint_rows(world, ctx, robot, r, &coef);
  p->row_count = r;
  ctx->warm_started = warm;
  return LCP_OK;
}

/* ---- 5. solve ---- */
static solver_settings solver_settings_of(const lcp_world_settings_t *s) {
  return (solver_settings){
      .max_iterations = s->iterations,
      .omega = s->sor_omega,
      .tolerance = s->residual_tolerance,
      .friction_model = s->friction_model,
  };
}

static int stage_solve(lcp_world_t *world, step_context *ctx, solver_result *result) {
  const lcp_world_settings_t *s = ctx->settings;
  solver_settings ss = solver_settings_of(s);
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

static void stage_integrate(lcp_world_t *world, step_context *ctx) {
  const world_model *model = &world->model;
  double h = ctx->settings->timestep;
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

/* Robots: qd⁺ from the solve, q by semi-implicit Euler (DESIGN.md §3 step
 * 6), the controllers' applied torques λ/h and the joint rows' impulses for
 * the next step's warm start; pending forces cleared. */
/* Adds to each floating robot's momentum balance the constraint impulses of
 * the solve: the base part of Jᵀλ of every row side on it, a wrench about
 * the base origin (joint rows have none: they are internal). */
static void add_constraint_impulses(const lcp_world_t *world, step_context *ctx) {
  const solver_problem *p = &ctx->problem;
  /* most worlds have no floating robot: no pass over the rows for them */
  bool floating = false;
  for (int32_t r = 0; r < ctx->robot_count; ++r)
    floating |= world->model.robots[r].mb.floating;
  if (!floating)
    return;
  for (int32_t i = 0; i < p->row_count; ++i) {
    const solver_row *row = &p->rows[i];
    for (int side = 0; side < 2; ++side) {
      if (row->dof_count[side] == 0 || row->lambda == 0.0)
        continue;
      for (int32_t r = 0; r < ctx->robot_count; ++r) {
        const mb_model *mb = &world->model.robots[r].mb;
        if (row->dof_offset[side] != ctx->robot_dof[r] || !mb->floating)
          continue;
        const double *J = p->J + row->coef_offset[side];
        vec3 force = v3_scale(v3_from(J), row->lambda);
        vec3 torque = v3_scale(v3_from(J + 3), row->lambda);
        add_wrench_about_origin(ctx->robot_momentum[r], force, torque,
                                v3_from(world->state.robots[r].q));
      }
    }
  }
}

static void integrate_robots(lcp_world_t *world, step_context *ctx) {
  double h = ctx->settings->timestep;
  const solver_problem *p = &ctx->problem;
  add_constraint_impulses(world, ctx);
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    const robot_model *rm = &world->model.robots[r];
    robot_state *st = &world->state.robots[r];
    const mb_model *mb = &rm->mb;
    mb_data *d = &world->robot_data[r];
    memcpy(st->qd, &p->velocity[ctx->robot_dof[r]], sizeof(double) * (size_t)mb->nv);
    mb_integrate_positions(mb, st->q, st->qd, h);
    st->velocity_synchronized = ctx->robot_free[r];
    if (ctx->robot_free[r]) {
      /* velocity Verlet's second half kick, at the new positions */
      double *qdd = ctx->robot_qdd[r];
      vec3 g = v3_from(ctx->settings->gravity);
      mb_forward_dynamics(mb, st->q, st->qd, ctx->robot_tau[r], st->link_wrench, g, d, qdd);
      for (int32_t k = 0; k < mb->nv; ++k)
        st->qd[k] += 0.5 * h * qdd[k];
      if (mb->floating)
        add_external_impulse(mb, st, d, g, 0.5 * h, ctx->robot_momentum[r]);
    }
    if (mb->floating) {
      const double *due = ctx->robot_momentum[r];
      mb_set_base_velocity_for_momentum(mb, st->q, st->qd, v3_from(due), v3_from(due + 3), d);
    }
    memset(st->force, 0, sizeof(double) * (size_t)mb->nv);
    memset(st->link_wrench, 0, 6 * sizeof(double) * (size_t)mb->link_count);
    const int32_t *rows = ctx->joint_rows[r];
    for (int32_t j = 0; j < mb->joint_count; ++j) {
      for (int k = 0; k < JOINT_ROW_KINDS; ++k) {
        int32_t row = rows[JOINT_ROW_KINDS * j + k];
        st->joint_impulse[JOINT_ROW_KINDS * j + k] = row >= 0 ? p->rows[row].lambda : 0.0;
      }
      int32_t control_row = rows[JOINT_ROW_KINDS * j + JOINT_ROW_CONTROL];
      st->applied_torque[j] =
          ctx->feedforward[r][j] + (control_row >= 0 ? p->rows[control_row].lambda / h : 0.0);
    }
  }
  /* The link poses of the new state are computed when first read (a
   * query, or the next step's dynamics): a loop that only steps skips them. */
  world->robot_kinematics_stale = ctx->robot_count > 0;
}

/* Keeps the solved impulses for the next step's warm start and the contact
 * list for lcp_world_get_contacts. */
static int store_contacts(lcp_world_t *world, step_context *ctx) {
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
    bool pushing = false;
    for (int32_t q = 0; q < m->point_count; ++q) {
      const solver_row *r = &rows[ctx->manifold_row[k] + 3 * q];
      c->points[q] =
          (cached_point){m->points[q].feature_id, r[0].lambda, {r[1].lambda, r[2].lambda}};
      pushing |= (r[0].lambda != 0.0) | (r[1].lambda != 0.0) | (r[2].lambda != 0.0);
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
    /* a body is pushed when a row touching it carries an impulse
     * (stage_integrate) */
    if (pushing) {
      if (ctx->geom_body[pair->a] >= 0)
        ctx->pushed[ctx->geom_body[pair->a]] = 1;
      if (ctx->geom_body[pair->b] >= 0)
        ctx->pushed[ctx->geom_body[pair->b]] = 1;
    }
  }
  /* Manifolds come in pair order, which sorts by geom slot and so by id
   * (slots keep creation order): the cache stays sorted for cache_find. */
  state->cache_count = ctx->manifold_count;
  world->contact_count = n;
  return LCP_OK;
}

/* ---- the step ---- */

static void step_context_init(lcp_world_t *world, step_context *ctx) {
  *ctx = (step_context){
      .settings = &world->model.settings,
      .body_count = world->model.body_count,
      .geom_count = world->model.geom_count,
      .robot_count = world->model.robot_count,
  };
}

/* The stages before the solve, timed into stats. */
static int run_front_stages(lcp_world_t *world, step_context *ctx, lcp_step_stats_t *stats) {
  double t = now_seconds(), t_next;
  int rc = LCP_OK;
#define RUN_STAGE(stage, call)                                                                     \
  do {                                                                                             \
    if (rc == LCP_OK)                                                                              \
      rc = (call);                                                                                 \
    t_next = now_seconds();                                                                        \
    stats->stage_seconds[stage] = t_next - t;                                                      \
    t = t_next;                                                                                    \
  } while (0)
  RUN_STAGE(LCP_STAGE_KINEMATICS, stage_kinematics(world, ctx));
  RUN_STAGE(LCP_STAGE_BROADPHASE, stage_broadphase(world, ctx));
  RUN_STAGE(LCP_STAGE_NARROWPHASE, stage_narrowphase(world, ctx));
  RUN_STAGE(LCP_STAGE_ROWS, stage_rows(world, ctx));
#undef RUN_STAGE
  return rc;
}

int lcp_world_step(lcp_world_t *world) {
  if (!world)
    return LCP_ERR_INVALID_ARGUMENT;
  double t_begin = now_seconds();
  step_context ctx;
  step_context_init(world, &ctx);
  lcp_step_stats_t stats = {0};
  int rc = run_front_stages(world, &ctx, &stats);
  solver_result solve = {0, 0.0};
  double t = now_seconds();
  if (rc == LCP_OK)
    rc = stage_solve(world, &ctx, &solve);
  double t_next = now_seconds();
  stats.stage_seconds[LCP_STAGE_SOLVE] = t_next - t;
  t = t_next;
  if (rc == LCP_OK) {
    ctx.pushed =
        arena_calloc(&world->scratch, (size_t)(ctx.body_count > 0 ? ctx.body_count : 1), 1);
    if (!ctx.pushed)
      rc = LCP_ERR_NO_MEMORY;
  }
  if (rc == LCP_OK)
    rc = store_contacts(world, &ctx);
  if (rc == LCP_OK) {
    stage_integrate(world, &ctx);
    integrate_robots(world, &ctx);
  }
  stats.stage_seconds[LCP_STAGE_INTEGRATE] = now_seconds() - t;
  stats.pairs = ctx.pair_count;
  stats.manifolds = ctx.manifold_count;
  stats.contacts = ctx.contact_count;
  stats.rows = ctx.problem.row_count;
  stats.iterations = solve.iterations;
  stats.residual = solve.residual;
  stats.warm_started = ctx.warm_started;
  arena_reset(&world->scratch);
  if (rc != LCP_OK) {
    if (rc == LCP_ERR_NUMERIC)
      world_log(world, LCP_LOG_ERROR, "step %llu: the solver produced a non-finite value",
                (unsigned long long)world->state.step_count);
    return world_fail(world, rc, "step failed: %s", lcp_status_string(rc));
  }
  world->state.time += world->model.settings.timestep;
  world->state.step_count++;
  stats.step_seconds = now_seconds() - t_begin;
  world->stats = stats;
  return LCP_OK;
}
