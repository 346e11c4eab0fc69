/* SPDX-License-Identifier: Apache-2.0 */
/* The world: creation, settings, bodies, geoms and their queries, and the
 * services every other part of the world uses (errors, log, growing arrays,
 * geom poses, the robots' storage and kinematics cache).
 *
 * This file calls no other part of the world: the robot API (robot.c), the
 * state snapshots (world_snapshot.c) and the step (step.c) are built on it,
 * never the reverse. */
#include "world_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lcp_status_string(int status) {
  switch (status) {
  case LCP_OK:
    return "ok";
  case LCP_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case LCP_ERR_NOT_FOUND:
    return "not found";
  case LCP_ERR_NO_MEMORY:
    return "out of memory";
  case LCP_ERR_MISMATCH:
    return "state from another world";
  case LCP_ERR_DEGENERATE:
    return "degenerate shape";
  case LCP_ERR_STATE:
    return "not valid in this state";
  case LCP_ERR_NUMERIC:
    return "non-finite value";
  default:
    return "unknown status";
  }
}

int lcp__world_fail(lcp_world_t *world, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(world->last_error, sizeof world->last_error, fmt, ap);
  va_end(ap);
  return code;
}

void lcp__world_log(const lcp_world_t *world, lcp_log_level_t level, const char *fmt, ...) {
  if (!world->log_fn)
    return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  world->log_fn(world->log_user, level, line);
}

int lcp__world_reserve(void **array, int32_t *capacity, int32_t need, size_t element_size) {
  if (need <= *capacity)
    return LCP_OK;
  int32_t cap = *capacity > 0 ? *capacity : 8;
  while (cap < need)
    cap = cap > INT32_MAX / 2 ? need : cap * 2;
  void *grown = realloc(*array, (size_t)cap * element_size);
  if (!grown)
    return LCP_ERR_NO_MEMORY;
  *array = grown;
  *capacity = cap;
  return LCP_OK;
}

/* ---- what the world keeps of its robots: storage and kinematics ---- */

xform lcp__world_geom_pose(const lcp_world_t *world, const geom_model *g) {
  if (g->robot != LCP_NULL_ID) {
    lcp__world_ensure_robot_kinematics(world);
    int32_t r = id_pool_slot(&world->model.robot_ids, g->robot);
    return xf_mul(&world->robot_data[r].link_x[g->link], &g->local);
  }
  const body_state *b = &world->state.bodies[id_pool_slot(&world->model.body_ids, g->body)];
  xform body_x = xf_make(b->position, b->orientation);
  return xf_mul(&body_x, &g->local);
}

void lcp__world_refresh_robot_kinematics(lcp_world_t *world) {
  /* Poses and velocities only: what the queries that refresh them read
   * (a step's passes recompute the rest from the state). */
  for (int32_t i = 0; i < world->model.robot_count; ++i)
    lcp__mb_link_kinematics(&world->model.robots[i].mb, world->state.robots[i].q,
                            world->state.robots[i].qd, &world->robot_data[i]);
  world->robot_kinematics_stale = false;
}

void lcp__world_ensure_robot_kinematics(const lcp_world_t *world) {
  /* The kinematics are a cache of the state, not part of it: refreshing
   * them leaves the world as it was, so const queries may do it. */
  if (world->robot_kinematics_stale)
    lcp__world_refresh_robot_kinematics((lcp_world_t *)world);
}

void lcp__world_free_robot(robot_model *model, robot_state *state, mb_data *data) {
  lcp__mb_model_free(&model->mb);
  free(model->link_names);
  free(model->joints);
  free(model->frames);
  free(state->q);
  free(state->qd);
  free(state->force);
  free(state->link_wrench);
  free(state->applied_torque);
  free(state->joint_impulse);
  free(state->control);
  free(state->qdd);
  free(state->step_link_wrench);
  lcp__mb_data_free(data);
  memset(model, 0, sizeof *model);
  memset(state, 0, sizeof *state);
}

/* ---- world ---- */

static int add_world_body(lcp_world_t *world) {
  lcp_body_def_t def = lcp_body_def_default();
  def.type = LCP_BODY_STATIC;
  lcp_body_id id;
  return lcp_body_add(world, &def, &id);
}

int lcp_world_create(const lcp_world_settings_t *settings, lcp_world_t **out_world) {
  if (!out_world)
    return LCP_ERR_INVALID_ARGUMENT;
  *out_world = NULL;
  lcp_world_settings_t s = settings ? *settings : lcp_world_settings_default();
  if (lcp_world_settings_validate(&s, NULL, 0) != LCP_OK)
    return LCP_ERR_INVALID_ARGUMENT;
  lcp_world_t *world = calloc(1, sizeof *world);
  if (!world)
    return LCP_ERR_NO_MEMORY;
  world->model.settings = s;
  lcp__id_pool_init(&world->model.body_ids);
  lcp__id_pool_init(&world->model.geom_ids);
  lcp__id_pool_init(&world->model.robot_ids);
  lcp__sap_init(&world->broadphase, 0);
  lcp__arena_init(&world->scratch);
  int rc = add_world_body(world);
  if (rc != LCP_OK) {
    lcp_world_destroy(&world);
    return rc;
  }
  *out_world = world;
  return LCP_OK;
}

void lcp_world_destroy(lcp_world_t **world_ptr) {
  if (!world_ptr || !*world_ptr)
    return;
  lcp_world_t *world = *world_ptr;
  for (int32_t i = 0; i < world->model.geom_count; ++i) {
    lcp__hull_free(world->model.geoms[i].hull);
    free(world->model.geoms[i].hull);
  }
  for (int32_t i = 0; i < world->model.robot_count; ++i)
    lcp__world_free_robot(&world->model.robots[i], &world->state.robots[i], &world->robot_data[i]);
  free(world->model.robots);
  free(world->state.robots);
  free(world->robot_data);
  free(world->model.bodies);
  free(world->model.geoms);
  lcp__id_pool_destroy(&world->model.body_ids);
  lcp__id_pool_destroy(&world->model.geom_ids);
  lcp__id_pool_destroy(&world->model.robot_ids);
  free(world->state.bodies);
  free(world->state.cache);
  free(world->contacts);
  free(world->imus);
  lcp__sap_destroy(&world->broadphase);
  lcp__arena_destroy(&world->scratch);
  free(world);
  *world_ptr = NULL;
}

/* The heap bytes of one robot: its model (links, joints, frames, names), its
 * state arrays (world_internal.h, robot_state) and its kinematics. */
static size_t robot_bytes(const robot_model *r, const mb_data *d) {
  size_t links = (size_t)r->mb.link_count, joints = (size_t)r->mb.joint_count;
  size_t nq = (size_t)r->mb.nq, nv = (size_t)r->mb.nv;
  size_t model = links * (sizeof(mb_link) + sizeof *r->link_names) + joints * sizeof *r->joints +
                 (size_t)r->frame_count * sizeof *r->frames;
  size_t doubles = nq + 3 * nv + 12 * links + joints * (1 + JOINT_ROW_KINDS);
  size_t state = doubles * sizeof(double) + joints * sizeof(lcp_joint_control_t);
  size_t kinematics = links * (sizeof(xform) + 2 * sizeof(vec3)) + d->work_size;
  return model + state + kinematics;
}

static size_t hull_bytes(const hull *h) {
  if (!h)
    return 0;
  size_t loops = 0;
  for (int32_t f = 0; f < h->face_count; ++f)
    loops += (size_t)h->faces[f].vertex_count;
  return sizeof *h + (size_t)h->vertex_count * sizeof *h->vertices +
         (size_t)h->face_count * sizeof *h->faces + loops * sizeof *h->face_vertices +
         (size_t)h->edge_count * sizeof *h->edges;
}

size_t lcp_world_memory_size(const lcp_world_t *world) {
  const world_model *m = &world->model;
  const world_state *st = &world->state;
  size_t bytes = sizeof *world;
  bytes += (size_t)m->body_capacity * (sizeof *m->bodies + sizeof *st->bodies);
  bytes += (size_t)m->geom_capacity * sizeof *m->geoms;
  for (int32_t i = 0; i < m->geom_count; ++i)
    bytes += hull_bytes(m->geoms[i].hull);
  bytes += (size_t)m->robot_capacity *
           (sizeof *m->robots + sizeof *st->robots + sizeof *world->robot_data);
  for (int32_t i = 0; i < m->robot_count; ++i)
    bytes += robot_bytes(&m->robots[i], &world->robot_data[i]);
  bytes += (size_t)(m->body_ids.capacity + m->geom_ids.capacity + m->robot_ids.capacity) *
           sizeof(id_entry);
  bytes += (size_t)st->cache_capacity * sizeof *st->cache;
  bytes += (size_t)world->contact_capacity * sizeof *world->contacts;
  bytes += (size_t)world->imu_capacity * sizeof *world->imus;
  bytes += (size_t)world->broadphase.capacity * 2 * sizeof(sap_endpoint);
  return bytes + lcp__arena_reserved(&world->scratch);
}

int lcp_world_set_settings(lcp_world_t *world, const lcp_world_settings_t *settings) {
  char why[128];
  if (lcp_world_settings_validate(settings, why, sizeof why) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "settings: %s", why);
  world->model.settings = *settings;
  return LCP_OK;
}

void lcp_world_get_settings(const lcp_world_t *world, lcp_world_settings_t *out) {
  *out = world->model.settings;
}

void lcp_world_set_log(lcp_world_t *world, lcp_log_fn fn, void *user) {
  world->log_fn = fn;
  world->log_user = user;
}

const char *lcp_world_last_error(const lcp_world_t *world) { return world->last_error; }

double lcp_world_time(const lcp_world_t *world) { return world->state.time; }
uint64_t lcp_world_step_count(const lcp_world_t *world) { return world->state.step_count; }

void lcp_world_get_stats(const lcp_world_t *world, lcp_step_stats_t *out) { *out = world->stats; }

void lcp_world_set_stage_timing(lcp_world_t *world, bool on) {
  if (world)
    world->stage_timing = on;
}

const char *lcp_stage_name(lcp_stage_t stage) {
  static const char *const names[LCP_STAGE_COUNT] = {"kinematics", "broadphase", "narrowphase",
                                                     "rows",       "solve",      "integrate"};
  return (stage >= 0 && stage < LCP_STAGE_COUNT) ? names[stage] : "unknown";
}

int32_t lcp_world_get_contacts(const lcp_world_t *world, lcp_contact_info_t *out,
                               int32_t capacity) {
  int32_t n = world->contact_count < capacity ? world->contact_count : capacity;
  if (out && n > 0)
    memcpy(out, world->contacts, (size_t)n * sizeof *out);
  return world->contact_count;
}

/* ---- bodies ---- */

lcp_body_def_t lcp_body_def_default(void) {
  return (lcp_body_def_t){
      .type = LCP_BODY_DYNAMIC,
      .mass = 1.0,
      .inertia = {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0},
      .orientation = {1.0, 0.0, 0.0, 0.0},
  };
}

static bool all_finite(const double *v, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(v[i]))
      return false;
  return true;
}

/* Symmetric (to a relative 1e-9) and positive definite (Sylvester's
 * criterion on the leading minors). */
static bool inertia_is_spd(const mat3 *I) {
  double scale = fabs(I->m[0][0]) + fabs(I->m[1][1]) + fabs(I->m[2][2]);
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (fabs(I->m[i][j] - I->m[j][i]) > 1e-9 * scale)
        return false;
  double m1 = I->m[0][0];
  double m2 = I->m[0][0] * I->m[1][1] - I->m[0][1] * I->m[1][0];
  double m3 = m3_det(I);
  double tiny = 1e-300;
  return m1 > tiny && m2 > tiny && m3 > tiny;
}

static int validate_pose(lcp_world_t *world, const double position[3],
                         const double orientation[4]) {
  if (!all_finite(position, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "position must be finite");
  if (!all_finite(orientation, 4) || !(q_norm(q_from(orientation)) > 1e-12))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "orientation must be a finite non-zero quaternion");
  return LCP_OK;
}

int lcp_body_add(lcp_world_t *world, const lcp_body_def_t *def, lcp_body_id *out_id) {
  if (!def)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "body def is NULL");
  if (def->type != LCP_BODY_STATIC && def->type != LCP_BODY_DYNAMIC)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "body type must be static or dynamic");
  int rc = validate_pose(world, def->position, def->orientation);
  if (rc != LCP_OK)
    return rc;
  if (!all_finite(def->linear_velocity, 3) || !all_finite(def->angular_velocity, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "velocity must be finite");
  body_model m = {.type = def->type};
  if (def->type == LCP_BODY_DYNAMIC) {
    if (!(isfinite(def->mass) && def->mass > 0.0))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "mass must be finite and > 0 (got %g)", def->mass);
    if (!all_finite(def->inertia, 9))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "inertia must be finite");
    m.mass = def->mass;
    m.inv_mass = 1.0 / def->mass;
    m.inertia_local = m3_from(def->inertia);
    if (!inertia_is_spd(&m.inertia_local) ||
        !m3_inverse(&m.inertia_local, &m.inv_inertia_local, 1e-300))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "inertia must be symmetric positive definite");
  }
  world_model *model = &world->model;
  int32_t need = model->body_count + 1;
  int32_t cap = model->body_capacity;
  if (lcp__world_reserve((void **)&model->bodies, &cap, need, sizeof(body_model)) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory adding a body");
  if (cap != model->body_capacity) {
    body_state *grown = realloc(world->state.bodies, (size_t)cap * sizeof(body_state));
    if (!grown)
      return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory adding a body");
    world->state.bodies = grown;
    model->body_capacity = cap;
  }
  int32_t slot = model->body_count;
  if (lcp__id_pool_add(&model->body_ids, slot, &m.id) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "no room for another body (memory or ids)");
  model->body_count++;
  world->layout_hash_valid = false;
  model->bodies[slot] = m;
  world->state.bodies[slot] = (body_state){
      .position = v3_from(def->position),
      .orientation = q_normalize(q_from(def->orientation)),
      .linear_velocity = def->type == LCP_BODY_DYNAMIC ? v3_from(def->linear_velocity) : v3_zero(),
      .angular_velocity =
          def->type == LCP_BODY_DYNAMIC ? v3_from(def->angular_velocity) : v3_zero(),
  };
  if (out_id)
    *out_id = m.id;
  return LCP_OK;
}

static int find_body(lcp_world_t *world, lcp_body_id id, int32_t *slot) {
  *slot = id_pool_slot(&world->model.body_ids, id);
  if (*slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no body with id %d", (int)id);
  return LCP_OK;
}

/* Removes the warm-start entries that mention the geom at slot, and moves
 * the later geoms' slots down by one as the geoms themselves move (the
 * order, and so the cache's sorting, is kept). */
static void cache_forget_geom(world_state *state, int32_t slot) {
  int32_t kept = 0;
  for (int32_t i = 0; i < state->cache_count; ++i) {
    cached_manifold *c = &state->cache[i];
    if (c->slot_a == slot || c->slot_b == slot)
      continue;
    c->slot_a -= c->slot_a > slot;
    c->slot_b -= c->slot_b > slot;
    state->cache[kept++] = *c;
  }
  state->cache_count = kept;
}

void lcp__world_remove_geom_slot(lcp_world_t *world, int32_t slot) {
  world_model *model = &world->model;
  geom_model *g = &model->geoms[slot];
  cache_forget_geom(&world->state, slot);
  lcp__id_pool_remove(&model->geom_ids, g->id);
  lcp__hull_free(g->hull);
  free(g->hull);
  memmove(&model->geoms[slot], &model->geoms[slot + 1],
          (size_t)(model->geom_count - slot - 1) * sizeof(geom_model));
  model->geom_count--;
  for (int32_t s = slot; s < model->geom_count; ++s)
    id_pool_move(&model->geom_ids, model->geoms[s].id, s);
  world->layout_hash_valid = false;
}

int lcp_body_remove(lcp_world_t *world, lcp_body_id id) {
  int32_t slot;
  int rc = find_body(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (id == LCP_WORLD_BODY)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "the world body cannot be removed");
  world_model *model = &world->model;
  for (int32_t g = model->geom_count - 1; g >= 0; --g)
    if (model->geoms[g].body == id)
      lcp__world_remove_geom_slot(world, g);
  /* Keep creation order: slots after the removed one move down by one. */
  int32_t tail = model->body_count - slot - 1;
  memmove(&model->bodies[slot], &model->bodies[slot + 1], (size_t)tail * sizeof(body_model));
  memmove(&world->state.bodies[slot], &world->state.bodies[slot + 1],
          (size_t)tail * sizeof(body_state));
  model->body_count--;
  world->layout_hash_valid = false;
  lcp__id_pool_remove(&model->body_ids, id);
  for (int32_t s = slot; s < model->body_count; ++s)
    id_pool_move(&model->body_ids, model->bodies[s].id, s);
  return LCP_OK;
}

int32_t lcp_world_body_count(const lcp_world_t *world) { return world->model.body_count; }

int32_t lcp_world_body_ids(const lcp_world_t *world, lcp_body_id *out_ids, int32_t capacity) {
  int32_t n = world->model.body_count < capacity ? world->model.body_count : capacity;
  for (int32_t i = 0; i < n; ++i)
    out_ids[i] = world->model.bodies[i].id;
  return n;
}

int lcp_body_get_pose(const lcp_world_t *world, lcp_body_id id, double position[3],
                      double orientation[4]) {
  int32_t slot = id_pool_slot(&world->model.body_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const body_state *b = &world->state.bodies[slot];
  if (position)
    v3_store(b->position, position);
  if (orientation)
    q_store(b->orientation, orientation);
  return LCP_OK;
}

int lcp_body_set_pose(lcp_world_t *world, lcp_body_id id, const double position[3],
                      const double orientation[4]) {
  int32_t slot;
  int rc = find_body(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (id == LCP_WORLD_BODY)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "the world body cannot be moved");
  if ((rc = validate_pose(world, position, orientation)) != LCP_OK)
    return rc;
  body_state *b = &world->state.bodies[slot];
  b->position = v3_from(position);
  b->orientation = q_normalize(q_from(orientation));
  return LCP_OK;
}

int lcp_body_get_velocity(const lcp_world_t *world, lcp_body_id id, double linear[3],
                          double angular[3]) {
  int32_t slot = id_pool_slot(&world->model.body_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const body_state *b = &world->state.bodies[slot];
  if (linear)
    v3_store(b->linear_velocity, linear);
  if (angular)
    v3_store(b->angular_velocity, angular);
  return LCP_OK;
}

int lcp_body_set_velocity(lcp_world_t *world, lcp_body_id id, const double linear[3],
                          const double angular[3]) {
  int32_t slot;
  int rc = find_body(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (!all_finite(linear, 3) || !all_finite(angular, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "velocity must be finite");
  if (world->model.bodies[slot].type != LCP_BODY_DYNAMIC)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "body %d is static", (int)id);
  body_state *b = &world->state.bodies[slot];
  b->linear_velocity = v3_from(linear);
  b->angular_velocity = v3_from(angular);
  return LCP_OK;
}

int lcp_body_get_mass(const lcp_world_t *world, lcp_body_id id, double *mass, double inertia[9]) {
  int32_t slot = id_pool_slot(&world->model.body_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const body_model *m = &world->model.bodies[slot];
  if (mass)
    *mass = m->mass;
  if (inertia)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        inertia[3 * i + j] = m->inertia_local.m[i][j];
  return LCP_OK;
}

int lcp_body_get_type(const lcp_world_t *world, lcp_body_id id, lcp_body_type_t *type) {
  int32_t slot = id_pool_slot(&world->model.body_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  *type = world->model.bodies[slot].type;
  return LCP_OK;
}

static int find_dynamic_for_force(lcp_world_t *world, lcp_body_id id, const double v[3],
                                  int32_t *slot) {
  int rc = find_body(world, id, slot);
  if (rc != LCP_OK)
    return rc;
  if (!v || !all_finite(v, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "force and torque must be finite");
  return LCP_OK;
}

int lcp_body_apply_force(lcp_world_t *world, lcp_body_id id, const double force[3],
                         const double point[3]) {
  int32_t slot;
  int rc = find_dynamic_for_force(world, id, force, &slot);
  if (rc != LCP_OK)
    return rc;
  if (!point || !all_finite(point, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "application point must be finite");
  body_state *b = &world->state.bodies[slot];
  vec3 f = v3_from(force);
  b->force = v3_add(b->force, f);
  b->torque = v3_add(b->torque, v3_cross(v3_sub(v3_from(point), b->position), f));
  return LCP_OK;
}

int lcp_body_apply_force_at_center(lcp_world_t *world, lcp_body_id id, const double force[3]) {
  int32_t slot;
  int rc = find_dynamic_for_force(world, id, force, &slot);
  if (rc != LCP_OK)
    return rc;
  world->state.bodies[slot].force = v3_add(world->state.bodies[slot].force, v3_from(force));
  return LCP_OK;
}

int lcp_body_apply_torque(lcp_world_t *world, lcp_body_id id, const double torque[3]) {
  int32_t slot;
  int rc = find_dynamic_for_force(world, id, torque, &slot);
  if (rc != LCP_OK)
    return rc;
  world->state.bodies[slot].torque = v3_add(world->state.bodies[slot].torque, v3_from(torque));
  return LCP_OK;
}

/* ---- geoms ---- */

lcp_geom_def_t lcp_geom_def_default(void) {
  return (lcp_geom_def_t){
      .type = LCP_SHAPE_SPHERE,
      .local_orientation = {1.0, 0.0, 0.0, 0.0},
      .radius = 1.0,
      .friction = 0.5,
      .category_bits = 1u,
      .collide_mask = 0xffffffffu,
  };
}

static bool positive(double x) { return isfinite(x) && x > 0.0; }

/* Checks the shape fields of def and builds the hull when there is one. */
static int make_shape(lcp_world_t *world, const lcp_geom_def_t *def, shape *out, hull **out_hull) {
  *out = (shape){.type = def->type};
  *out_hull = NULL;
  switch (def->type) {
  case LCP_SHAPE_PLANE:
    return LCP_OK;
  case LCP_SHAPE_SPHERE:
    if (!positive(def->radius))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "sphere radius must be > 0");
    out->radius = def->radius;
    return LCP_OK;
  case LCP_SHAPE_BOX:
    if (!positive(def->half_extents[0]) || !positive(def->half_extents[1]) ||
        !positive(def->half_extents[2]))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "box half extents must be > 0");
    out->half_extents = v3_from(def->half_extents);
    return LCP_OK;
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    if (!positive(def->radius) || !positive(def->half_length))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "capsule and cylinder need radius > 0 and half_length > 0");
    out->radius = def->radius;
    out->half_length = def->half_length;
    return LCP_OK;
  case LCP_SHAPE_HULL: {
    if (!def->hull_points || def->hull_point_count < 4)
      return lcp__world_fail(world, LCP_ERR_DEGENERATE, "a hull needs at least 4 points (got %d)",
                             (int)def->hull_point_count);
    if (!all_finite(def->hull_points, 3 * def->hull_point_count))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "hull points must be finite");
    vec3 *points = malloc((size_t)def->hull_point_count * sizeof(vec3));
    hull *h = calloc(1, sizeof(hull));
    if (!points || !h) {
      free(points);
      free(h);
      return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory building a hull");
    }
    for (int32_t i = 0; i < def->hull_point_count; ++i)
      points[i] = v3_from(&def->hull_points[3 * i]);
    int rc = lcp__hull_build(points, def->hull_point_count, h);
    free(points);
    if (rc != LCP_OK) {
      free(h);
      if (rc == LCP_ERR_DEGENERATE)
        return lcp__world_fail(world, rc,
                               "degenerate hull: the points do not span a volume "
                               "(need 4 non-coplanar points)");
      return lcp__world_fail(world, rc, "hull: %s", lcp_status_string(rc));
    }
    out->hull = h;
    *out_hull = h;
    return LCP_OK;
  }
  default:
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "unknown shape type %d",
                           (int)def->type);
  }
}

int lcp__world_add_geom(lcp_world_t *world, const lcp_geom_def_t *def, lcp_body_id body,
                        lcp_robot_id robot, int32_t link, lcp_geom_id *out_id) {
  if (!def)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "geom def is NULL");
  int rc = validate_pose(world, def->local_position, def->local_orientation);
  if (rc != LCP_OK)
    return rc;
  if (!(isfinite(def->friction) && def->friction >= 0.0))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "friction must be finite and >= 0");
  if (!(def->restitution >= 0.0 && def->restitution <= 1.0))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "restitution must be in [0, 1] (got %g)", def->restitution);
  bool static_owner =
      robot == LCP_NULL_ID &&
      world->model.bodies[id_pool_slot(&world->model.body_ids, body)].type == LCP_BODY_STATIC;
  if (def->type == LCP_SHAPE_PLANE && !static_owner)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "planes can only belong to static bodies");
  world_model *model = &world->model;
  if (lcp__world_reserve((void **)&model->geoms, &model->geom_capacity, model->geom_count + 1,
                         sizeof(geom_model)) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory adding a geom");
  geom_model g = {
      .body = robot == LCP_NULL_ID ? body : LCP_NULL_ID,
      .robot = robot,
      .link = robot == LCP_NULL_ID ? -1 : link,
      .local = xf_make(v3_from(def->local_position), q_normalize(q_from(def->local_orientation))),
      .friction = def->friction,
      .restitution = def->restitution,
      .category_bits = def->category_bits,
      .collide_mask = def->collide_mask,
  };
  if ((rc = make_shape(world, def, &g.shape, &g.hull)) != LCP_OK)
    return rc;
  /* how far the geom reaches from its body's or link's frame: the
   * farthest corner of its own box, beyond its offset (planes: none) */
  if (def->type != LCP_SHAPE_PLANE) {
    xform at_origin = xf_identity();
    vec3 lo, hi;
    lcp__shape_aabb(&g.shape, &at_origin, &lo, &hi);
    vec3 corner = v3(fmax(fabs(lo.x), fabs(hi.x)), fmax(fabs(lo.y), fabs(hi.y)),
                     fmax(fabs(lo.z), fabs(hi.z)));
    g.reach_radius = v3_len(g.local.p) + v3_len(corner);
  }
  if (lcp__id_pool_add(&model->geom_ids, model->geom_count, &g.id) != LCP_OK) {
    lcp__hull_free(g.hull);
    free(g.hull);
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "no room for another geom (memory or ids)");
  }
  model->geoms[model->geom_count++] = g;
  world->layout_hash_valid = false;
  if (out_id)
    *out_id = g.id;
  return LCP_OK;
}

int lcp_geom_add(lcp_world_t *world, lcp_body_id body, const lcp_geom_def_t *def,
                 lcp_geom_id *out_id) {
  int32_t slot;
  int rc = find_body(world, body, &slot);
  if (rc != LCP_OK)
    return rc;
  return lcp__world_add_geom(world, def, body, LCP_NULL_ID, -1, out_id);
}

int lcp_geom_remove(lcp_world_t *world, lcp_geom_id id) {
  int32_t slot = id_pool_slot(&world->model.geom_ids, id);
  if (slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no geom with id %d", (int)id);
  lcp__world_remove_geom_slot(world, slot);
  return LCP_OK;
}

int lcp_geom_get_body(const lcp_world_t *world, lcp_geom_id id, lcp_body_id *out_body) {
  int32_t slot = id_pool_slot(&world->model.geom_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  *out_body = world->model.geoms[slot].body;
  return LCP_OK;
}

int lcp_geom_get_aabb(const lcp_world_t *world, lcp_geom_id id, double lo[3], double hi[3]) {
  int32_t slot = id_pool_slot(&world->model.geom_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const geom_model *g = &world->model.geoms[slot];
  xform x = lcp__world_geom_pose(world, g);
  vec3 l, h;
  lcp__shape_aabb(&g->shape, &x, &l, &h);
  v3_store(l, lo);
  v3_store(h, hi);
  return LCP_OK;
}

int lcp_geom_def_mass_properties(const lcp_geom_def_t *def, double density, double *mass,
                                 double inertia[9], double center[3]) {
  if (!def || !(isfinite(density) && density > 0.0))
    return LCP_ERR_INVALID_ARGUMENT;
  double r = def->radius, hl = def->half_length;
  double m = 0.0;
  vec3 d = v3_zero(); /* principal moments, geom axes */
  vec3 c = v3_zero();
  mat3 full = m3_zero();
  bool use_full = false;
  switch (def->type) {
  case LCP_SHAPE_SPHERE:
    if (!positive(r))
      return LCP_ERR_INVALID_ARGUMENT;
    m = density * 4.0 / 3.0 * LCP_PI * r * r * r;
    d = v3(0.4 * m * r * r, 0.4 * m * r * r, 0.4 * m * r * r);
    break;
  case LCP_SHAPE_BOX: {
    vec3 e = v3_from(def->half_extents);
    if (!positive(e.x) || !positive(e.y) || !positive(e.z))
      return LCP_ERR_INVALID_ARGUMENT;
    m = density * 8.0 * e.x * e.y * e.z;
    d = v3(m / 3.0 * (e.y * e.y + e.z * e.z), m / 3.0 * (e.x * e.x + e.z * e.z),
           m / 3.0 * (e.x * e.x + e.y * e.y));
    break;
  }
  case LCP_SHAPE_CYLINDER: {
    if (!positive(r) || !positive(hl))
      return LCP_ERR_INVALID_ARGUMENT;
    double len = 2.0 * hl;
    m = density * LCP_PI * r * r * len;
    double ixx = m * (3.0 * r * r + len * len) / 12.0;
    d = v3(ixx, ixx, 0.5 * m * r * r);
    break;
  }
  case LCP_SHAPE_CAPSULE: {
    if (!positive(r) || !positive(hl))
      return LCP_ERR_INVALID_ARGUMENT;
    /* A cylinder of length 2 hl plus two hemispheres whose centres of mass
     * sit 3r/8 beyond the segment ends (parallel-axis theorem). */
    double len = 2.0 * hl;
    double mc = density * LCP_PI * r * r * len;
    double mh = density * 2.0 / 3.0 * LCP_PI * r * r * r; /* one hemisphere */
    double off = hl + 3.0 * r / 8.0;
    double ih_own = (83.0 / 320.0) * mh * r * r; /* hemisphere about its own cm, transverse */
    double ixx = mc * (3.0 * r * r + len * len) / 12.0 + 2.0 * (ih_own + mh * off * off);
    double izz = 0.5 * mc * r * r + 2.0 * 0.4 * mh * r * r;
    m = mc + 2.0 * mh;
    d = v3(ixx, ixx, izz);
    break;
  }
  case LCP_SHAPE_HULL: {
    if (!def->hull_points || def->hull_point_count < 4 ||
        !all_finite(def->hull_points, 3 * def->hull_point_count))
      return LCP_ERR_INVALID_ARGUMENT;
    vec3 *points = malloc((size_t)def->hull_point_count * sizeof(vec3));
    if (!points)
      return LCP_ERR_NO_MEMORY;
    for (int32_t i = 0; i < def->hull_point_count; ++i)
      points[i] = v3_from(&def->hull_points[3 * i]);
    hull h;
    int rc = lcp__hull_build(points, def->hull_point_count, &h);
    free(points);
    if (rc != LCP_OK)
      return rc;
    m = density * h.volume;
    full = m3_scale(&h.inertia_unit_density, density);
    c = h.centroid;
    use_full = true;
    lcp__hull_free(&h);
    break;
  }
  default:
    return LCP_ERR_INVALID_ARGUMENT;
  }
  if (!use_full)
    full = m3_diag(d);
  /* Express in geom axes rotated into the body by local_orientation, about
   * the geom's centre of mass in body coordinates. */
  mat3 R = q_to_mat3(q_normalize(q_from(def->local_orientation)));
  mat3 body_inertia = m3_rotate_tensor(&R, &full);
  vec3 body_center = v3_add(v3_from(def->local_position), m3_mulv(&R, c));
  if (mass)
    *mass = m;
  if (inertia)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        inertia[3 * i + j] = body_inertia.m[i][j];
  if (center)
    v3_store(body_center, center);
  return LCP_OK;
}
