/* SPDX-License-Identifier: Apache-2.0 */
/* The step: one function, lcp_world_step, runs the stages of the pipeline
 * in order (the table `pipeline` below, indexed by lcp_stage_t), each a
 * function of the world and the step's context (step_context.h):
 *
 *   kinematics    world poses and inertias, the robots' articulated-body
 *                 pass (free accelerations, factors for the responses),
 *                 geom poses and boxes;
 *   broad phase   candidate pairs (sweep and prune; planes apart);
 *   narrow phase  contact manifolds;
 *   rows          free velocities, then the LCP's rows (rows.c);
 *   solve         the boxed LCP (solver.h);
 *   integrate     the new state, the warm-start cache, the contact list.
 *
 * The step's wall time is always kept in its stats; each stage's only when
 * lcp_world_set_stage_timing asked for it (two clock reads are cheap, seven
 * are a visible part of a small robot's step).
 *
 * Nothing in the world's state changes before the integrate stage, so a step
 * that fails (out of memory, a non-finite solve) leaves the world as it was.
 * Everything the step derives lives in the scratch arena, which is empty
 * again when the step returns. */
#include "rigid_rotation.h"
#include "simd.h"
#include "state_check.h"
#include "step_context.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- 1. kinematics: world poses, world inertias, robots' dynamics, geom poses and boxes ---- */

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
  lcp__mb_center_of_mass(mb, d, &mass, &com);
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
 * body algorithm (Featherstone, "Rigid Body Dynamics Algorithms"), τ being
 * the user's generalised forces, the
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
  double *tau = STEP_NEW(a, double, nv), *qdd = STEP_NEW(a, double, nv);
  double *applied = STEP_NEW(a, double, nj);
  uint8_t *moves = STEP_NEW(a, uint8_t, mb->link_count);
  int32_t *rows = STEP_NEW(a, int32_t, JOINT_ROW_KINDS * nj);
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
    double *rest = lcp__arena_calloc(a, (size_t)nv, sizeof(double));
    gravity_torque = STEP_NEW(a, double, nv);
    if (!rest || !gravity_torque)
      return LCP_ERR_NO_MEMORY;
    lcp__mb_inverse_dynamics(mb, st->q, rest, NULL, g, d, gravity_torque);
  }
  for (int32_t j = 0; j < nj; ++j) {
    int32_t v = mb->links[rm->joints[j].link].v_index;
    applied[j] = joint_feedforward(&rm->joints[j], &st->control[j], gravity_torque, v);
    tau[v] += applied[j];
  }
  lcp__mb_forward_dynamics(mb, st->q, st->qd, tau, st->link_wrench, g, d, qdd);
  if (mb->floating) {
    vec3 linear, angular;
    lcp__mb_momentum(mb, d, &linear, &angular);
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

/* The velocity at the start of the step of the point p of geom g: v + ω ×
 * (p − o) with v, ω those of its body's centre of mass or its link's
 * frame origin o; zero for what nothing moves. */
static vec3 geom_point_velocity(const lcp_world_t *world, const step_context *ctx, int32_t g,
                                vec3 p) {
  if (ctx->geom_static[g])
    return v3_zero();
  int32_t r = ctx->geom_robot[g];
  if (r >= 0) {
    const mb_data *d = &world->robot_data[r];
    int32_t l = ctx->geom_link[g];
    return v3_add(d->link_v[l], v3_cross(d->link_w[l], v3_sub(p, d->link_x[l].p)));
  }
  int32_t slot = ctx->geom_body[g];
  const body_state *b = &world->state.bodies[slot];
  return v3_add(b->linear_velocity, v3_cross(b->angular_velocity, v3_sub(p, ctx->body_x[slot].p)));
}

/* How far geom g can move in this step, at most: h (|v| + |ω| R + h |g|),
 * R the farthest the geom reaches from its body's centre of mass (or its
 * link's frame), g_len = |g|. Contacts are made this much before touching
 * besides the contact margin (speculative contacts, as in Box2D and Catto's
 * "Speculative contacts"), so a fast body meets thin geometry before it
 * could pass through it. */
static double geom_reach(const lcp_world_t *world, const step_context *ctx, int32_t g,
                         double g_len) {
  if (ctx->geom_static[g])
    return 0.0;
  vec3 v, w;
  int32_t r = ctx->geom_robot[g];
  if (r >= 0) {
    const mb_data *d = &world->robot_data[r];
    v = d->link_v[ctx->geom_link[g]], w = d->link_w[ctx->geom_link[g]];
  } else {
    const body_state *b = &world->state.bodies[ctx->geom_body[g]];
    v = b->linear_velocity, w = b->angular_velocity;
  }
  double h = ctx->settings->timestep;
  return h * (v3_len(v) + v3_len(w) * world->model.geoms[g].reach_radius + h * g_len);
}

static int stage_kinematics(lcp_world_t *world, step_context *ctx) {
  const world_model *model = &world->model;
  arena *a = &world->scratch;
  int32_t nb = ctx->body_count, ng = ctx->geom_count, nr = ctx->robot_count;
  ctx->body_x = STEP_NEW(a, xform, nb);
  ctx->inv_inertia_world = STEP_NEW(a, mat3, nb);
  ctx->body_dof = STEP_NEW(a, int32_t, nb);
  ctx->geom_body = STEP_NEW(a, int32_t, ng);
  ctx->geom_robot = STEP_NEW(a, int32_t, ng);
  ctx->geom_link = STEP_NEW(a, int32_t, ng);
  ctx->geom_static = STEP_NEW(a, uint8_t, ng);
  ctx->geom_x = STEP_NEW(a, xform, ng);
  ctx->geom_lo = STEP_NEW(a, vec3, ng);
  ctx->geom_hi = STEP_NEW(a, vec3, ng);
  ctx->robot_dof = STEP_NEW(a, int32_t, nr);
  ctx->link_moves = STEP_NEW(a, uint8_t *, nr);
  ctx->feedforward = STEP_NEW(a, double *, nr);
  ctx->joint_rows = STEP_NEW(a, int32_t *, nr);
  ctx->robot_momentum = (double(*)[6])STEP_NEW(a, double, 6 * (nr > 0 ? nr : 1));
  ctx->robot_tau = STEP_NEW(a, double *, nr);
  ctx->robot_qdd = STEP_NEW(a, double *, nr);
  ctx->robot_free = STEP_NEW(a, uint8_t, nr);
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
  ctx->u_free = STEP_NEW(a, double, dofs);
  if (!ctx->u_free)
    return LCP_ERR_NO_MEMORY;
  for (int32_t r = 0; r < nr; ++r) {
    int rc = robot_dynamics(world, ctx, r);
    if (rc != LCP_OK)
      return rc;
  }
  world->robot_kinematics_stale = false; /* the dynamics passes ran them at the state */
  ctx->geom_reach = STEP_NEW(a, double, ng);
  if (!ctx->geom_reach)
    return LCP_ERR_NO_MEMORY;
  const double g_len = v3_len(v3_from(ctx->settings->gravity));
  for (int32_t g = 0; g < ng; ++g) {
    const geom_model *geom = &model->geoms[g];
    if (geom->robot != LCP_NULL_ID) {
      int32_t r = id_pool_slot(&model->robot_ids, geom->robot);
      ctx->geom_body[g] = -1;
      ctx->geom_robot[g] = r;
      ctx->geom_link[g] = geom->link;
      ctx->geom_static[g] = !ctx->link_moves[r][geom->link];
      ctx->geom_x[g] = xf_mul(&world->robot_data[r].link_x[geom->link], &geom->local);
    } else {
      int32_t slot = id_pool_slot(&model->body_ids, geom->body);
      ctx->geom_body[g] = slot;
      ctx->geom_robot[g] = -1;
      ctx->geom_link[g] = -1;
      ctx->geom_static[g] = ctx->body_dof[slot] < 0;
      ctx->geom_x[g] = xf_mul(&ctx->body_x[slot], &geom->local);
    }
    vec3 lo, hi;
    lcp__shape_aabb(&geom->shape, &ctx->geom_x[g], &lo, &hi);
    ctx->geom_reach[g] = geom_reach(world, ctx, g, g_len);
    double margin = ctx->settings->contact_margin + ctx->geom_reach[g];
    vec3 inflate = v3(margin, margin, margin);
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

/* lcp__sap_update's result by brute force: every pair overlapping on all three
 * axes (closed intervals), a < b, sorted by (a, b), no pair of two skipped
 * proxies. The sap's endpoint list is left as it is: lcp__sap_update refreshes
 * every endpoint from the boxes it is given, so a later sweep stays exact. */
static int direct_pairs(int32_t count, const vec3 *lo, const vec3 *hi, const uint8_t *skip,
                        arena *a, sap_pair **out, int32_t *out_count) {
  sap_pair *pairs = STEP_NEW(a, sap_pair, (int64_t)count * (count - 1) / 2);
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
  int32_t *proxy_geom = STEP_NEW(a, int32_t, ng);
  int32_t *planes = STEP_NEW(a, int32_t, ng);
  vec3 *lo = STEP_NEW(a, vec3, ng), *hi = STEP_NEW(a, vec3, ng);
  uint8_t *skip = STEP_NEW(a, uint8_t, ng);
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
    int rc =
        proxies <= BROADPHASE_DIRECT_MAX
            ? direct_pairs(proxies, lo, hi, skip, a, &found, &found_count)
            : lcp__sap_update(&world->broadphase, proxies, lo, hi, skip, a, &found, &found_count);
    if (rc != LCP_OK)
      return rc;
  }
  sap_pair *plane_pairs = STEP_NEW(a, sap_pair, (int64_t)plane_count * proxies);
  ctx->pairs = STEP_NEW(a, sap_pair, found_count + (int64_t)plane_count * proxies);
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
   * warm-start cache built from them, are sorted by geom slot. */
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
  ctx->manifolds = STEP_NEW(a, manifold, ctx->pair_count);
  ctx->manifold_pair = STEP_NEW(a, int32_t, ctx->pair_count);
  if (!ctx->manifolds || !ctx->manifold_pair)
    return LCP_ERR_NO_MEMORY;
  const lcp_world_settings_t *s = ctx->settings;
  int32_t n = 0, points = 0;
  for (int32_t i = 0; i < ctx->pair_count; ++i) {
    int32_t ga = ctx->pairs[i].a, gb = ctx->pairs[i].b;
    if (i + NARROW_PREFETCH < ctx->pair_count) {
      /* a large world's geoms are not in the cache, and the pairs name
       * them out of order: ask for those of a pair a few ahead */
      const sap_pair *ahead = &ctx->pairs[i + NARROW_PREFETCH];
      simd_prefetch_read(&world->model.geoms[ahead->a].shape);
      simd_prefetch_read(&world->model.geoms[ahead->b].shape);
      simd_prefetch_read(&ctx->geom_x[ahead->a]);
      simd_prefetch_read(&ctx->geom_x[ahead->b]);
    }
    manifold *m = &ctx->manifolds[n];
    double margin = s->contact_margin + ctx->geom_reach[ga] + ctx->geom_reach[gb];
    int32_t count = lcp__collide_shapes(&world->model.geoms[ga].shape, &ctx->geom_x[ga],
                                        &world->model.geoms[gb].shape, &ctx->geom_x[gb], margin, m);
    if (count <= 0)
      continue;
    m->point_count = count;
    /* Restitution (Newton's impact law): a point approaching faster than
     * the threshold is to separate at e times its approach speed after the
     * impact, e the larger of the two geoms' (the solver applies it only
     * where the contact hits within the step). */
    double e = fmax(world->model.geoms[ga].restitution, world->model.geoms[gb].restitution);
    for (int32_t q = 0; q < count; ++q) {
      const contact_point *cp = &m->points[q];
      m->bounce[q] = 0.0;
      if (!(e > 0.0))
        continue;
      vec3 relative = v3_sub(geom_point_velocity(world, ctx, gb, cp->position),
                             geom_point_velocity(world, ctx, ga, cp->position));
      double approach = -v3_dot(m->normal, relative);
      if (approach > s->restitution_threshold)
        m->bounce[q] = e * approach;
    }
    ctx->manifold_pair[n++] = i;
    points += count;
  }
  ctx->manifold_count = n;
  ctx->contact_count = points;
  return LCP_OK;
}

/* ---- 4. rows: the free velocities, then the LCP's rows (rows.c) ---- */

/* The free bodies' velocities after the external forces, before the
 * constraints: u_free = u + h M⁻¹ f_ext. Gyroscopic torque is not added
 * here: angular momentum is carried exactly in the integrate stage. */
static void body_free_velocities(const lcp_world_t *world, step_context *ctx) {
  const lcp_world_settings_t *s = ctx->settings;
  double h = s->timestep;
  vec3 g = v3_from(s->gravity);
  for (int32_t i = 0; i < ctx->body_count; ++i) {
    int32_t dof = ctx->body_dof[i];
    if (dof < 0)
      continue;
    const body_state *b = &world->state.bodies[i];
    vec3 v = v3_madd(b->linear_velocity, v3_madd(g, b->force, world->model.bodies[i].inv_mass), h);
    vec3 w = v3_madd(b->angular_velocity, m3_mulv(&ctx->inv_inertia_world[i], b->torque), h);
    double *u = &ctx->u_free[dof];
    u[0] = v.x, u[1] = v.y, u[2] = v.z, u[3] = w.x, u[4] = w.y, u[5] = w.z;
  }
}

/* The robots' free velocities: u_free = qd + κ h q̈.
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
    ctx->robot_free[r] = !lcp__rows_robot_touched(world, ctx, r);
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
      double *mid_qdd = STEP_NEW(&world->scratch, double, mb->nv);
      if (!mid_qdd)
        return LCP_ERR_NO_MEMORY;
      for (int pass = 0; pass < MID_VELOCITY_PASSES; ++pass) {
        lcp__mb_forward_dynamics(mb, st->q, u, ctx->robot_tau[r], st->link_wrench, g,
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

/* u_free of the bodies and robots, then the rows (rows.c). */
static int stage_rows(lcp_world_t *world, step_context *ctx) {
  body_free_velocities(world, ctx);
  int rc = robot_free_velocities(world, ctx);
  return rc == LCP_OK ? lcp__rows_build(world, ctx) : rc;
}

/* ---- 5. solve ---- */
static solver_settings solver_settings_of(const lcp_world_settings_t *s) {
  return (solver_settings){
      .max_iterations = s->iterations,
      .omega = s->sor_omega,
      .tolerance = s->residual_tolerance,
      .friction_model = s->friction_model,
      .relax_iterations = s->relax_iterations,
  };
}

static int stage_solve(lcp_world_t *world, step_context *ctx) {
  const lcp_world_settings_t *s = ctx->settings;
  solver_settings ss = solver_settings_of(s);
  solver_result result = {0, 0.0};
  int rc = LCP_OK;
  ctx->problem.position_velocity = STEP_NEW(&world->scratch, double, ctx->problem.dof_count);
  if (!ctx->problem.position_velocity)
    return LCP_ERR_NO_MEMORY;
  int32_t iterations = 0;
  /* again while a joint turns out to need a limit row it lacks
   * (lcp__joint_rows_complete: rare, and finite as rows are only added) */
  for (bool again = true; again && rc == LCP_OK;) {
    /* without rows the velocity is u_free, which the positions move with;
     * with rows the solver writes position_velocity */
    if (ctx->problem.row_count == 0) {
      memcpy(ctx->problem.position_velocity, ctx->problem.velocity,
             sizeof(double) * (size_t)ctx->problem.dof_count);
    } else {
      switch (s->solver) {
      case LCP_SOLVER_JACOBI:
        rc = lcp__solver_jacobi(&ss, &ctx->problem, &result, &world->scratch);
        break;
      case LCP_SOLVER_DIRECT:
        rc = lcp__solver_direct(&ss, &ctx->problem, &result, &world->scratch, s->direct_max_rows);
        break;
      case LCP_SOLVER_PGS:
      default:
        rc = lcp__solver_pgs(&ss, &ctx->problem, &result, &world->scratch);
        break;
      }
      iterations += result.iterations;
    }
    if (rc == LCP_OK)
      rc = lcp__joint_rows_complete(world, ctx, &again);
  }
  ctx->iterations = iterations;
  ctx->residual = result.residual;
  return rc;
}

/* ---- 6. integrate ---- */

static void integrate_bodies(lcp_world_t *world, step_context *ctx) {
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
    const double *u_pos = &ctx->problem.position_velocity[dof];
    vec3 v = v3(u[0], u[1], u[2]);
    vec3 w = v3(u[3], u[4], u[5]);
    /* Semi-implicit Euler: positions from u⁺ — the velocity of the main
     * iterations, which includes the positional correction; the velocity
     * kept is the relax iterations' (lcp_world_settings_t.relax_iterations),
     * without it. A body
     * no constraint pushed this step is in ballistic flight under constant
     * forces, and for it the step is made exact by removing the ½h²a that
     * semi-implicit Euler adds: x⁺ = x + h u⁺ − ½h²a = x + h u + ½h²a. */
    vec3 step = v3_scale(v3(u_pos[0], u_pos[1], u_pos[2]), h);
    if (!ctx->pushed[i]) {
      vec3 h_accel = v3_sub(v3_from(&ctx->u_free[dof]), b->linear_velocity);
      step = v3_madd(step, h_accel, -0.5 * h);
    }
    b->position = v3_add(b->position, step);
    /* The torque-free rotation from the solved ω over the step, keeping
     * the world angular momentum exactly and the energy from drifting
     * (rigid_rotation.c). The positional correction's part of the main
     * iterations' ω, which the relax iterations took out of the velocity
     * kept, turns the body first (q̇ = ½ ω ⊗ q), with the momentum the
     * solve gave it: L = I_w(q) ω, ω' = I_w(q')⁻¹ L. */
    quat q = b->orientation;
    vec3 w_push = v3_sub(v3(u_pos[3], u_pos[4], u_pos[5]), w);
    if (w_push.x != 0.0 || w_push.y != 0.0 || w_push.z != 0.0) {
      const mat3 *I_local = &model->bodies[i].inertia_local;
      vec3 L = m3_mulv(&ctx->body_x[i].R, m3_mulv(I_local, m3_tmulv(&ctx->body_x[i].R, w)));
      q = q_integrate(q, w_push, h);
      mat3 R = q_to_mat3(q);
      w = m3_mulv(&R, m3_mulv(&model->bodies[i].inv_inertia_local, m3_tmulv(&R, L)));
    }
    lcp__rigid_rotation_step(q, &model->bodies[i].inertia_local,
                             &model->bodies[i].inv_inertia_local, w, h, &b->orientation,
                             &b->angular_velocity);
    b->linear_velocity = v;
  }
}

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

/* Robots: qd⁺ from the solve, q by semi-implicit Euler, the controllers'
 * applied torques λ/h and the joint rows' impulses for the next step's warm
 * start; pending forces cleared. */
static void integrate_robots(lcp_world_t *world, step_context *ctx) {
  double h = ctx->settings->timestep;
  const solver_problem *p = &ctx->problem;
  add_constraint_impulses(world, ctx);
  for (int32_t r = 0; r < ctx->robot_count; ++r) {
    const robot_model *rm = &world->model.robots[r];
    robot_state *st = &world->state.robots[r];
    const mb_model *mb = &rm->mb;
    mb_data *d = &world->robot_data[r];
    /* positions with the main iterations' velocity, qd⁺ the relax
     * iterations' (integrate_bodies) */
    lcp__mb_integrate_positions(mb, st->q, &p->position_velocity[ctx->robot_dof[r]], h);
    memcpy(st->qdd, st->qd, sizeof(double) * (size_t)mb->nv); /* qd before, for q̈ below */
    memcpy(st->qd, &p->velocity[ctx->robot_dof[r]], sizeof(double) * (size_t)mb->nv);
    st->velocity_synchronized = ctx->robot_free[r];
    if (ctx->robot_free[r]) {
      /* velocity Verlet's second half kick, at the new positions */
      double *qdd = ctx->robot_qdd[r];
      vec3 g = v3_from(ctx->settings->gravity);
      lcp__mb_forward_dynamics(mb, st->q, st->qd, ctx->robot_tau[r], st->link_wrench, g, d, qdd);
      for (int32_t k = 0; k < mb->nv; ++k)
        st->qd[k] += 0.5 * h * qdd[k];
      if (mb->floating)
        add_external_impulse(mb, st, d, g, 0.5 * h, ctx->robot_momentum[r]);
    }
    if (mb->floating) {
      const double *due = ctx->robot_momentum[r];
      lcp__mb_set_base_velocity_for_momentum(mb, st->q, st->qd, v3_from(due), v3_from(due + 3), d);
    }
    /* what the sensors read of the step (sensors.c): q̈ = (qd⁺ − qd)/h and
     * the external wrenches that acted, the base's generalised force being a
     * wrench about the base origin, link 0's */
    for (int32_t k = 0; k < mb->nv; ++k)
      st->qdd[k] = (st->qd[k] - st->qdd[k]) / h;
    memcpy(st->step_link_wrench, st->link_wrench, 6 * sizeof(double) * (size_t)mb->link_count);
    for (int k = 0; mb->floating && k < 6; ++k)
      st->step_link_wrench[k] += st->force[k];
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

/* Room for the contacts store_contacts keeps: the one part of keeping them
 * that can fail, done before the state changes. */
static int reserve_contacts(lcp_world_t *world, const step_context *ctx) {
  world_state *state = &world->state;
  if (lcp__world_reserve((void **)&state->cache, &state->cache_capacity, ctx->manifold_count,
                         sizeof(cached_manifold)) != LCP_OK ||
      lcp__world_reserve((void **)&world->contacts, &world->contact_capacity, ctx->contact_count,
                         sizeof(lcp_contact_info_t)) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  return LCP_OK;
}

/* A body is pushed when a row of a contact touching it carries an impulse
 * (integrate_bodies). */
static void mark_pushed(step_context *ctx) {
  const solver_row *rows = ctx->problem.rows;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    const solver_row *r = &rows[ctx->manifold_row[k]];
    int32_t patch_rows = solver_patch_rows(ctx->manifolds[k].point_count);
    bool pushing = false;
    for (int32_t q = 0; q < patch_rows; ++q)
      pushing |= r[q].lambda != 0.0;
    if (pushing) {
      if (ctx->geom_body[pair->a] >= 0)
        ctx->pushed[ctx->geom_body[pair->a]] = 1;
      if (ctx->geom_body[pair->b] >= 0)
        ctx->pushed[ctx->geom_body[pair->b]] = 1;
    }
  }
}

/* Keeps the solved impulses for the next step's warm start and the contact
 * list for lcp_world_get_contacts (room reserved by reserve_contacts). */
static void store_contacts(lcp_world_t *world, step_context *ctx) {
  world_state *state = &world->state;
  const world_model *model = &world->model;
  int32_t n = 0;
  const solver_row *rows = ctx->problem.rows;
  for (int32_t k = 0; k < ctx->manifold_count; ++k) {
    const manifold *m = &ctx->manifolds[k];
    const sap_pair *pair = &ctx->pairs[ctx->manifold_pair[k]];
    const geom_model *ga = &model->geoms[pair->a], *gb = &model->geoms[pair->b];
    cached_manifold *c = &state->cache[k];
    memset(c, 0, sizeof *c);
    c->slot_a = pair->a;
    c->slot_b = pair->b;
    c->point_count = m->point_count;
    const int32_t K = m->point_count;
    const solver_row *r = &rows[ctx->manifold_row[k]];
    /* the patch's friction rows follow its K normal rows (contact_rows.c) */
    const solver_row *f = r + K;
    double total = 0.0;
    for (int32_t q = 0; q < K; ++q)
      total += r[q].lambda;
    for (int32_t d = 0; d < solver_patch_rows(K) - K; ++d)
      c->friction_impulse[d] = f[d].lambda;
    for (int32_t q = 0; q < K; ++q) {
      /* Field by field: a struct assignment may copy a temporary's padding,
       * and the cache's bytes go into snapshots, whose bytes must be the
       * same for the same state (the memset above zeroed the padding). */
      cached_point *cp = &c->points[q];
      cp->feature_id = m->points[q].feature_id;
      cp->normal_impulse = r[q].lambda;
      /* each point's share of the patch's tangential impulse, in
       * proportion to its normal impulse (equal shares when none) */
      double share = total > 0.0 ? r[q].lambda / total : 1.0 / K;
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
      info->normal_impulse = r[q].lambda;
      info->friction_impulse[0] = share * f[0].lambda;
      info->friction_impulse[1] = share * f[1].lambda;
    }
  }
  /* Manifolds come in pair order, which sorts by geom slot: the cache
   * stays sorted for cache_find. */
  state->cache_count = ctx->manifold_count;
  world->contact_count = n;
}

/* The bodies and robots moved, their new state checked, then the contacts
 * kept: the only stage that changes the world's state. Everything that can
 * fail (memory) is done first; a state that breaks a bound of lcpsim.h
 * (non-finite, or too far, too fast) is undone from the backup taken just
 * before, so a failed step leaves the world bitwise as it was. */
static int stage_integrate(lcp_world_t *world, step_context *ctx) {
  ctx->pushed =
      lcp__arena_calloc(&world->scratch, (size_t)(ctx->body_count > 0 ? ctx->body_count : 1), 1);
  if (!ctx->pushed)
    return LCP_ERR_NO_MEMORY;
  step_backup backup;
  int rc = reserve_contacts(world, ctx);
  if (rc == LCP_OK)
    rc = lcp__step_backup_save(world, &world->scratch, &backup);
  if (rc != LCP_OK)
    return rc;
  mark_pushed(ctx);
  integrate_bodies(world, ctx);
  integrate_robots(world, ctx);
  char why[200];
  if (lcp__state_check(world, true, why, sizeof why) != LCP_OK) {
    lcp__step_backup_restore(world, &backup);
    lcp__world_log(world, LCP_LOG_ERROR, "step %llu: %s; the step is undone",
                   (unsigned long long)world->state.step_count + 1, why);
    return lcp__world_fail(world, LCP_ERR_NUMERIC, "%s", why);
  }
  store_contacts(world, ctx);
  return LCP_OK;
}

/* ---- the step ---- */

typedef int (*step_stage)(lcp_world_t *world, step_context *ctx);

/* The pipeline, in order (lcp_stage_t is the order). */
static const step_stage pipeline[LCP_STAGE_COUNT] = {
    [LCP_STAGE_KINEMATICS] = stage_kinematics,   /* poses, inertias, articulated-body pass */
    [LCP_STAGE_BROADPHASE] = stage_broadphase,   /* candidate pairs */
    [LCP_STAGE_NARROWPHASE] = stage_narrowphase, /* contact manifolds */
    [LCP_STAGE_ROWS] = stage_rows,               /* free velocities, the LCP's rows */
    [LCP_STAGE_SOLVE] = stage_solve,             /* λ of the boxed LCP */
    [LCP_STAGE_INTEGRATE] = stage_integrate,     /* the new state */
};

int lcp_world_step(lcp_world_t *world) {
  if (!world)
    return LCP_ERR_INVALID_ARGUMENT;
  step_context ctx = {
      .settings = &world->model.settings,
      .body_count = world->model.body_count,
      .geom_count = world->model.geom_count,
      .robot_count = world->model.robot_count,
  };
  lcp_step_stats_t stats = {0};
  int rc = LCP_OK;
  double t_begin = now_seconds(), t = t_begin;
  int stage_failed = -1;
  const bool timing = world->stage_timing;
  for (int stage = 0; stage < LCP_STAGE_COUNT && rc == LCP_OK; ++stage) {
    rc = pipeline[stage](world, &ctx);
    if (rc != LCP_OK)
      stage_failed = stage;
    if (timing) {
      double t_next = now_seconds();
      stats.stage_seconds[stage] = t_next - t;
      t = t_next;
    }
  }
  lcp__arena_reset(&world->scratch);
  if (rc != LCP_OK) {
    /* The integrate stage names what broke a bound itself. */
    if (stage_failed == LCP_STAGE_INTEGRATE && rc == LCP_ERR_NUMERIC)
      return rc;
    if (rc == LCP_ERR_NUMERIC)
      lcp__world_log(world, LCP_LOG_ERROR, "step %llu: the solver produced a non-finite value",
                     (unsigned long long)world->state.step_count + 1);
    return lcp__world_fail(world, rc, "the %s stage failed: %s",
                           lcp_stage_name((lcp_stage_t)stage_failed), lcp_status_string(rc));
  }
  world->state.time += world->model.settings.timestep;
  world->state.step_count++;
  stats.pairs = ctx.pair_count;
  stats.manifolds = ctx.manifold_count;
  stats.contacts = ctx.contact_count;
  stats.rows = ctx.problem.row_count;
  stats.iterations = ctx.iterations;
  stats.residual = ctx.residual;
  stats.warm_started = ctx.warm_started;
  stats.step_seconds = now_seconds() - t_begin;
  world->stats = stats;
  return LCP_OK;
}
