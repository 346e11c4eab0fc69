/* SPDX-License-Identifier: Apache-2.0 */
#include "scene_view.h"

#include "convert.h"
#include "handlers.h"

#include <string.h>

Lcpsim__V1__GetInfoReply *lcpd_new_info_reply(lcpd_arena_t *arena, const lcpd_sim_t *sim) {
  Lcpsim__V1__GetInfoReply *out = LCPD_NEW(arena, Lcpsim__V1__GetInfoReply);
  if (!out)
    return NULL;
  lcpsim__v1__get_info_reply__init(out);
  out->server_version = (char *)LCPD_SERVER_VERSION;
  out->settings = lcpd_new_settings(arena, sim);
  out->robots = lcpd_arena_array(arena, (size_t)sim->live.robot_count, sizeof *out->robots);
  out->bodies = lcpd_arena_array(arena, (size_t)sim->live.body_count, sizeof *out->bodies);
  if (!out->settings || !out->robots || !out->bodies)
    return NULL;
  out->n_robots = (size_t)sim->live.robot_count;
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    if (!(out->robots[i] = lcpd_new_robot_info(arena, sim, &sim->live.robots[i])))
      return NULL;
  out->n_bodies = (size_t)sim->live.body_count;
  for (int32_t i = 0; i < sim->live.body_count; ++i)
    if (!(out->bodies[i] = lcpd_new_body_info(arena, &sim->live.bodies[i])))
      return NULL;
  return out;
}

/* ---- geoms ---- */

static Lcpsim__V1__Geom__Type geom_type(lcp_shape_type_t type) {
  switch (type) {
  case LCP_SHAPE_PLANE:
    return LCPSIM__V1__GEOM__TYPE__PLANE;
  case LCP_SHAPE_SPHERE:
    return LCPSIM__V1__GEOM__TYPE__SPHERE;
  case LCP_SHAPE_BOX:
    return LCPSIM__V1__GEOM__TYPE__BOX;
  case LCP_SHAPE_CAPSULE:
    return LCPSIM__V1__GEOM__TYPE__CAPSULE;
  case LCP_SHAPE_CYLINDER:
    return LCPSIM__V1__GEOM__TYPE__CYLINDER;
  case LCP_SHAPE_HULL:
    return LCPSIM__V1__GEOM__TYPE__CONVEX;
  default:
    return LCPSIM__V1__GEOM__TYPE__GEOM_UNSPECIFIED;
  }
}

static Lcpsim__V1__Geom *new_geom(lcpd_arena_t *arena, const lcp_world_t *world, lcp_geom_id id,
                                  const lcp_geom_info_t *info) {
  Lcpsim__V1__Geom *m = LCPD_NEW(arena, Lcpsim__V1__Geom);
  if (!m)
    return NULL;
  lcpsim__v1__geom__init(m);
  m->type = geom_type(info->type);
  if (!(m->pose = lcpd_new_pose(arena, info->local_position, info->local_orientation)))
    return NULL;
  switch (info->type) {
  case LCP_SHAPE_SPHERE:
    m->radius = info->radius;
    break;
  case LCP_SHAPE_BOX:
    if (!(m->half_extents = lcpd_new_vec3(arena, info->half_extents)))
      return NULL;
    break;
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    m->radius = info->radius;
    m->half_length = info->half_length;
    break;
  case LCP_SHAPE_HULL: {
    size_t vertex_count = (size_t)info->hull_vertex_count;
    size_t triangle_count = (size_t)info->hull_triangle_count;
    m->vertices = lcpd_arena_array(arena, 3 * vertex_count, sizeof *m->vertices);
    m->triangles = lcpd_arena_array(arena, 3 * triangle_count, sizeof *m->triangles);
    if (!m->vertices || !m->triangles ||
        lcp_geom_get_hull(world, id, m->vertices, info->hull_vertex_count, m->triangles,
                          info->hull_triangle_count) != LCP_OK)
      return NULL;
    m->n_vertices = 3 * vertex_count;
    m->n_triangles = 3 * triangle_count;
    break;
  }
  default:
    break;
  }
  return m;
}

/* Where each geom goes: the world's list, a robot's link or a free body,
 * as an index into the scene's arrays (-1: none, a geom of something the
 * daemon does not list). */
typedef struct geom_place {
  lcp_geom_id id;
  lcp_geom_info_t info;
  int32_t robot; /* index into sim->live.robots, or -1 */
  int32_t body;  /* index into sim->live.bodies, or -1; LCP_WORLD_BODY's geoms: -2 */
} geom_place;

enum { ON_WORLD = -2, NOWHERE = -1 };

static int32_t robot_index(const lcpd_sim_t *sim, lcp_robot_id id) {
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    if (sim->live.robots[i].id == id)
      return i;
  return NOWHERE;
}

static int32_t body_index(const lcpd_sim_t *sim, lcp_body_id id) {
  if (id == LCP_WORLD_BODY)
    return ON_WORLD;
  for (int32_t i = 0; i < sim->live.body_count; ++i)
    if (sim->live.bodies[i].id == id)
      return i;
  return NOWHERE;
}

/* Appends the geoms placed by match(place) to *out (already sized). */
static bool append_geoms(lcpd_arena_t *arena, const lcp_world_t *world, const geom_place *places,
                         int32_t count, bool (*match)(const geom_place *, int32_t, int32_t),
                         int32_t a, int32_t b, Lcpsim__V1__Geom ***out, size_t *n_out) {
  size_t n = 0;
  for (int32_t i = 0; i < count; ++i)
    n += match(&places[i], a, b);
  *out = lcpd_arena_array(arena, n, sizeof **out);
  if (!*out)
    return false;
  *n_out = n;
  n = 0;
  for (int32_t i = 0; i < count; ++i)
    if (match(&places[i], a, b) &&
        !((*out)[n++] = new_geom(arena, world, places[i].id, &places[i].info)))
      return false;
  return true;
}

static bool on_world(const geom_place *p, int32_t a, int32_t b) {
  (void)a;
  (void)b;
  return p->body == ON_WORLD;
}
static bool on_link(const geom_place *p, int32_t robot, int32_t link) {
  return p->robot == robot && p->info.link == link;
}
static bool on_body(const geom_place *p, int32_t body, int32_t unused) {
  (void)unused;
  return p->body == body;
}

static Lcpsim__V1__Scene *new_scene(lcpd_arena_t *arena, const lcpd_sim_t *sim, lcpd_error_t *error,
                                    bool *arena_refused) {
  const lcp_world_t *world = sim->live.world;
  *arena_refused = true;
  int32_t count = lcp_world_geom_count(world);
  geom_place *places = lcpd_arena_array(arena, (size_t)count, sizeof *places);
  lcp_geom_id *ids = lcpd_arena_array(arena, (size_t)count, sizeof *ids);
  Lcpsim__V1__Scene *m = LCPD_NEW(arena, Lcpsim__V1__Scene);
  if (!places || !ids || !m)
    return NULL;
  lcpsim__v1__scene__init(m);
  m->revision = lcpd_sim_scene_revision(sim);
  count = lcp_world_geom_ids(world, ids, count);
  for (int32_t i = 0; i < count; ++i) {
    places[i].id = ids[i];
    if (lcp_geom_get_info(world, ids[i], &places[i].info) != LCP_OK) {
      *arena_refused = false;
      lcpd_fail(error, LCP_ERR_STATE, "the engine does not know its own geom %d", (int)ids[i]);
      return NULL;
    }
    places[i].robot =
        places[i].info.robot == LCP_NULL_ID ? NOWHERE : robot_index(sim, places[i].info.robot);
    places[i].body =
        places[i].info.body == LCP_NULL_ID ? NOWHERE : body_index(sim, places[i].info.body);
  }
  if (!append_geoms(arena, world, places, count, on_world, 0, 0, &m->world_geoms,
                    &m->n_world_geoms))
    return NULL;
  m->robots = lcpd_arena_array(arena, (size_t)sim->live.robot_count, sizeof *m->robots);
  m->bodies = lcpd_arena_array(arena, (size_t)sim->live.body_count, sizeof *m->bodies);
  if (!m->robots || !m->bodies)
    return NULL;
  for (int32_t r = 0; r < sim->live.robot_count; ++r) {
    const lcpd_robot_t *robot = &sim->live.robots[r];
    Lcpsim__V1__RobotScene *rs = LCPD_NEW(arena, Lcpsim__V1__RobotScene);
    if (!rs)
      return NULL;
    lcpsim__v1__robot_scene__init(rs);
    rs->name = (char *)robot->name; /* the sim outlives the packing */
    rs->links = lcpd_arena_array(arena, (size_t)robot->link_count, sizeof *rs->links);
    if (!rs->links)
      return NULL;
    for (int32_t k = 0; k < robot->link_count; ++k) {
      Lcpsim__V1__LinkScene *ls = LCPD_NEW(arena, Lcpsim__V1__LinkScene);
      if (!ls)
        return NULL;
      lcpsim__v1__link_scene__init(ls);
      ls->name = (char *)robot->link_names[k];
      if (!append_geoms(arena, world, places, count, on_link, r, k, &ls->geoms, &ls->n_geoms))
        return NULL;
      rs->links[rs->n_links++] = ls;
    }
    m->robots[m->n_robots++] = rs;
  }
  for (int32_t b = 0; b < sim->live.body_count; ++b) {
    const lcpd_body_t *body = &sim->live.bodies[b];
    Lcpsim__V1__BodyScene *bs = LCPD_NEW(arena, Lcpsim__V1__BodyScene);
    if (!bs)
      return NULL;
    lcpsim__v1__body_scene__init(bs);
    bs->id = (uint32_t)body->id;
    bs->name = (char *)body->name;
    bs->is_static = body->is_static;
    if (!append_geoms(arena, world, places, count, on_body, b, 0, &bs->geoms, &bs->n_geoms))
      return NULL;
    m->bodies[m->n_bodies++] = bs;
  }
  return m;
}

Lcpsim__V1__GetSceneReply *lcpd_new_scene_reply(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                                lcpd_error_t *error) {
  bool arena_refused = true;
  Lcpsim__V1__GetSceneReply *out = LCPD_NEW(arena, Lcpsim__V1__GetSceneReply);
  if (out) {
    lcpsim__v1__get_scene_reply__init(out);
    out->scene = new_scene(arena, sim, error, &arena_refused);
    out->info = out->scene ? lcpd_new_info_reply(arena, sim) : NULL;
  }
  if (out && out->scene && out->info)
    return out;
  if (arena_refused && error && arena->error != error)
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "%s",
              arena->error ? arena->error->message : "more memory than allowed");
  return NULL;
}
