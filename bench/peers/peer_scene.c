/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark scenes for other engines, read out of lcpsim's scene builders
 * (see peer.h for what is read and what is restated). */
#include "peer.h"

#include "lcpsim/urdf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *error, size_t error_size, int rc, const char *format, ...) {
  if (error && error_size) {
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
  }
  return rc;
}

void peer_quat_rotate(const double q[4], const double v[3], double out[3]) {
  /* v + 2w (u × v) + 2 u × (u × v), u = (x, y, z) */
  const double *u = q + 1;
  double c[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  double cc[3] = {u[1] * c[2] - u[2] * c[1], u[2] * c[0] - u[0] * c[2], u[0] * c[1] - u[1] * c[0]};
  for (int k = 0; k < 3; ++k)
    out[k] = v[k] + 2.0 * (q[0] * c[k] + cc[k]);
}

void peer_quat_multiply(const double a[4], const double b[4], double out[4]) {
  double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(out, r, sizeof r);
}

/* ---- body scenes ---- */

static lcp_geom_def_t cube_shape(double edge, double mu) {
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = LCP_SHAPE_BOX;
  g.half_extents[0] = g.half_extents[1] = g.half_extents[2] = 0.5 * edge;
  g.friction = mu;
  return g;
}

/* The shape of free body `index` (creation order), as lcp_scene_pyramid and
 * lcp_scene_pile make them: pyramid, 0.5 m cubes with μ = 0.6; pile, odd
 * bodies spheres of radius 0.05 m, even ones 0.1 m cubes, μ = 0.5. */
static lcp_geom_def_t solid_shape(peer_scene_kind kind, int32_t index) {
  if (kind == PEER_SCENE_PYRAMID)
    return cube_shape(0.5, 0.6);
  if (index % 2 == 0)
    return cube_shape(0.1, 0.5);
  lcp_geom_def_t ball = lcp_geom_def_default();
  ball.type = LCP_SHAPE_SPHERE;
  ball.radius = 0.05;
  ball.friction = 0.5;
  return ball;
}

/* The pile's bin: four static walls 0.1 m thick and 1 m tall around the 2 m
 * square on the ground, each long enough to close the corners. */
static int add_bin_walls(peer_scene *out) {
  const double inner_half = 1.0, half_thickness = 0.05, half_height = 0.5;
  out->fixtures = calloc(4, sizeof *out->fixtures);
  if (!out->fixtures)
    return LCP_ERR_NO_MEMORY;
  for (int w = 0; w < 4; ++w) {
    lcp_geom_def_t *g = &out->fixtures[w];
    *g = lcp_geom_def_default();
    g->type = LCP_SHAPE_BOX;
    g->friction = 0.5;
    int across = w < 2 ? 0 : 1; /* the axis the wall is thin along */
    double side = w % 2 == 0 ? 1.0 : -1.0;
    g->half_extents[across] = half_thickness;
    g->half_extents[1 - across] = inner_half + 2.0 * half_thickness;
    g->half_extents[2] = half_height;
    g->local_position[across] = side * (inner_half + half_thickness);
    g->local_position[2] = half_height;
  }
  out->fixture_count = 4;
  return LCP_OK;
}

static int read_body_scene(peer_scene *out, char *error, size_t error_size) {
  lcp_world_settings_t settings = lcp_scene_settings();
  lcp_world_t *world = NULL;
  int rc = lcp_world_create(&settings, &world);
  if (rc != LCP_OK)
    return fail(error, error_size, rc, "cannot create an lcpsim world");
  lcp_scene_info_t info;
  rc = out->kind == PEER_SCENE_PYRAMID ? lcp_scene_pyramid(world, out->size, &info)
                                       : lcp_scene_pile(world, out->size, &info);
  int32_t count = lcp_world_body_count(world);
  lcp_body_id *ids = rc == LCP_OK ? malloc((size_t)count * sizeof *ids) : NULL;
  out->solids = rc == LCP_OK ? calloc((size_t)info.bodies, sizeof *out->solids) : NULL;
  if (rc == LCP_OK && (!ids || !out->solids))
    rc = LCP_ERR_NO_MEMORY;
  if (rc != LCP_OK) {
    free(ids);
    fail(error, error_size, rc, "building %s in lcpsim: %s", out->name,
         lcp_world_last_error(world));
    lcp_world_destroy(&world);
    return rc;
  }
  count = lcp_world_body_ids(world, ids, count);
  out->top_solid = -1;
  for (int32_t i = 0; i < count; ++i) {
    lcp_body_type_t type;
    lcp_body_get_type(world, ids[i], &type);
    if (type != LCP_BODY_DYNAMIC || out->solid_count == info.bodies)
      continue;
    peer_solid *s = &out->solids[out->solid_count];
    s->shape = solid_shape(out->kind, out->solid_count);
    lcp_body_get_mass(world, ids[i], &s->mass, s->inertia);
    lcp_body_get_pose(world, ids[i], s->position, s->orientation);
    if (ids[i] == info.top_body)
      out->top_solid = out->solid_count;
    out->solid_count++;
  }
  free(ids);
  lcp_world_destroy(&world);
  out->settings = settings;
  out->steps = info.default_steps;
  out->ground_friction = out->kind == PEER_SCENE_PYRAMID ? 0.6 : 0.5;
  if (out->solid_count != info.bodies || out->top_solid < 0)
    return fail(error, error_size, LCP_ERR_MISMATCH,
                "%s: lcpsim's world has %d free bodies, not %d", out->name, (int)out->solid_count,
                (int)info.bodies);
  if (out->kind == PEER_SCENE_PILE && (rc = add_bin_walls(out)) != LCP_OK)
    return fail(error, error_size, rc, "out of memory");
  return LCP_OK;
}

/* ---- robot scenes ---- */

#define ROBOT_FRICTION 0.8

/* The chain of lcp_scene_chain: 20 links, each a capsule of radius 0.04 m
 * whose hemisphere centres are 0.2 m apart, along its link's x axis from the
 * link origin, 0.5 kg with the solid capsule's moments; link i's joint sits
 * 0.21 m along its parent's x, continuous, about x for odd i and y for even i;
 * floating base. */
static int chain_def(lcp_robot_def_t **out) {
  enum { LINKS = 20 };
  const double radius = 0.04, segment = 0.2, mass = 0.5, pitch = 0.21;
  lcp_geom_def_t capsule = lcp_geom_def_default();
  capsule.type = LCP_SHAPE_CAPSULE;
  capsule.radius = radius;
  capsule.half_length = 0.5 * segment;
  capsule.friction = ROBOT_FRICTION;
  capsule.local_position[0] = 0.5 * segment;
  /* the capsule's z axis turned onto the link's x: +90° about y */
  capsule.local_orientation[0] = capsule.local_orientation[2] = sqrt(0.5);
  capsule.local_orientation[1] = capsule.local_orientation[3] = 0.0;
  double unit_mass, inertia[9], centre[3];
  int rc = lcp_geom_def_mass_properties(&capsule, 1.0, &unit_mass, inertia, centre);
  if (rc != LCP_OK)
    return rc;
  /* lcp_geom_def_mass_properties turns the inertia into the link's axes, so
   * [0] is the moment about the capsule's axis (x) and [8] one across it. */
  double about_x = inertia[0] * mass / unit_mass, about_y_z = inertia[8] * mass / unit_mass;
  lcp_robot_def_t *def = NULL;
  if ((rc = lcp_robot_def_alloc(LINKS, LINKS, &def)) != LCP_OK)
    return rc;
  snprintf(def->name, sizeof def->name, "chain");
  def->floating_base = true;
  def->self_collision = false;
  for (int32_t i = 0; i < LINKS; ++i) {
    lcp_link_def_t *link = &def->links[i];
    snprintf(link->name, sizeof link->name, "link%d", (int)i);
    link->mass = mass;
    memset(link->com, 0, sizeof link->com);
    link->com[0] = 0.5 * segment;
    memset(link->inertia, 0, sizeof link->inertia);
    link->inertia[0] = about_x;
    link->inertia[4] = link->inertia[8] = about_y_z;
    def->geoms[i] = capsule;
    link->first_geom = i;
    link->geom_count = 1;
    if (i == 0)
      continue;
    snprintf(link->joint_name, sizeof link->joint_name, "joint%d", (int)i);
    link->parent = i - 1;
    link->joint_type = LCP_JOINT_CONTINUOUS;
    link->origin_position[0] = pitch;
    link->axis[0] = i % 2 == 1 ? 1.0 : 0.0;
    link->axis[1] = i % 2 == 1 ? 0.0 : 1.0;
    link->axis[2] = 0.0;
  }
  *out = def;
  return LCP_OK;
}

static int robot_def(peer_scene_kind kind, lcp_robot_def_t **out, char *error, size_t error_size) {
  int rc;
  if (kind == PEER_SCENE_CHAIN) {
    rc = chain_def(out);
  } else {
    char path[512], why[1024] = "";
    rc = lcp_shipped_robot_path(kind == PEER_SCENE_ARM ? "arm7.urdf" : "quadruped.urdf", path,
                                sizeof path, why, sizeof why);
    if (rc != LCP_OK)
      return fail(error, error_size, rc, "%s", why);
    lcp_urdf_options_t options = lcp_urdf_options_default();
    options.floating_base = kind == PEER_SCENE_QUADRUPED;
    rc = lcp_urdf_load_file(path, &options, out, why, sizeof why);
    if (rc != LCP_OK)
      return fail(error, error_size, rc, "%s", why);
  }
  if (rc != LCP_OK)
    return fail(error, error_size, rc, "cannot build the robot: %s", lcp_status_string(rc));
  for (int32_t g = 0; g < (*out)->geom_count; ++g)
    (*out)->geoms[g].friction = ROBOT_FRICTION;
  return LCP_OK;
}

static int build_robot_in(lcp_world_t *world, peer_scene_kind kind, lcp_robot_scene_t *scene) {
  if (kind == PEER_SCENE_ARM)
    return lcp_scene_arm(world, scene);
  if (kind == PEER_SCENE_CHAIN)
    return lcp_scene_chain(world, scene);
  return lcp_scene_quadruped(world, PEER_QUADRUPED_KP, PEER_QUADRUPED_KD, PEER_QUADRUPED_LIFT,
                             scene);
}

/* Reads from lcpsim's robot scene what the definition does not hold: the
 * base pose, the joint values, the controllers, the feet. */
static int read_robot_state(lcp_world_t *world, const lcp_robot_scene_t *scene, peer_scene *out,
                            char *error, size_t error_size) {
  lcp_robot_info_t info;
  lcp_robot_get_info(world, scene->robot, &info);
  int32_t n = info.joint_count;
  double *q = malloc((size_t)info.nq * sizeof *q);
  out->joint_link = calloc((size_t)n + 1, sizeof *out->joint_link);
  double *values = calloc(5 * (size_t)n + 1, sizeof *values);
  if (!q || !out->joint_link || !values) {
    free(q);
    free(values);
    return fail(error, error_size, LCP_ERR_NO_MEMORY, "out of memory");
  }
  out->joint_initial = values;
  out->kp = values + n;
  out->kd = values + 2 * n;
  out->effort = values + 3 * n;
  out->hold_target = values + 4 * n;
  out->joint_count = n;
  lcp_robot_get_q(world, scene->robot, q, info.nq);
  lcp_robot_get_link_pose(world, scene->robot, 0, out->base_position, out->base_orientation);
  out->controlled = n > 0;
  int rc = LCP_OK;
  for (int32_t j = 0; j < n && rc == LCP_OK; ++j) {
    lcp_joint_info_t joint;
    lcp_joint_control_t control;
    lcp_robot_get_joint(world, scene->robot, j, &joint);
    lcp_robot_get_joint_control(world, scene->robot, j, &control);
    rc = lcp_robot_find_link(world, scene->robot, joint.child_link, &out->joint_link[j]);
    const lcp_link_def_t *link = rc == LCP_OK ? &out->robot->links[out->joint_link[j]] : NULL;
    if (!link || strcmp(link->joint_name, joint.name) != 0 || link->joint_type != joint.type)
      rc = fail(error, error_size, LCP_ERR_MISMATCH,
                "joint %d (%s) is not where the definition has it", (int)j, joint.name);
    out->joint_initial[j] = q[joint.q_index];
    if (control.mode != LCP_CONTROL_POSITION) {
      out->controlled = false;
      continue;
    }
    if (control.velocity != 0.0)
      rc = fail(error, error_size, LCP_ERR_MISMATCH, "joint %s has a velocity target", joint.name);
    out->kp[j] = control.kp;
    out->kd[j] = control.kd;
    out->hold_target[j] = control.position;
    double limit = control.effort_limit > 0.0 ? control.effort_limit : joint.effort_limit;
    out->effort[j] = limit > 0.0 ? limit : INFINITY;
  }
  free(q);
  out->foot_count = scene->foot_count;
  memcpy(out->foot_link, scene->foot_link, sizeof out->foot_link);
  memcpy(out->foot_offset, scene->foot_offset, sizeof out->foot_offset);
  out->stand_height = scene->stand_height;
  out->steps = scene->default_steps;
  return rc;
}

static int read_robot_scene(peer_scene *out, char *error, size_t error_size) {
  int rc = robot_def(out->kind, &out->robot, error, error_size);
  if (rc != LCP_OK)
    return rc;
  lcp_world_settings_t settings = lcp_scene_robot_settings();
  lcp_world_t *world = NULL;
  if ((rc = lcp_world_create(&settings, &world)) != LCP_OK)
    return fail(error, error_size, rc, "cannot create an lcpsim world");
  lcp_robot_scene_t scene;
  rc = build_robot_in(world, out->kind, &scene);
  if (rc != LCP_OK)
    fail(error, error_size, rc, "building %s in lcpsim: %s", out->name,
         lcp_world_last_error(world));
  else if (scene.bodies != out->robot->link_count)
    rc = fail(error, error_size, LCP_ERR_MISMATCH, "%s: %d links in lcpsim, %d here", out->name,
              (int)scene.bodies, (int)out->robot->link_count);
  else
    rc = read_robot_state(world, &scene, out, error, error_size);
  lcp_world_destroy(&world);
  out->settings = settings;
  out->ground_friction = ROBOT_FRICTION;
  return rc;
}

int peer_scene_build(const char *name, int32_t size, peer_scene *out, char *error,
                     size_t error_size) {
  static const struct {
    const char *name;
    peer_scene_kind kind;
    int32_t default_size;
  } scenes[] = {{"pyramid", PEER_SCENE_PYRAMID, 20},
                {"pile", PEER_SCENE_PILE, 1000},
                {"chain", PEER_SCENE_CHAIN, 0},
                {"arm", PEER_SCENE_ARM, 0},
                {"quadruped", PEER_SCENE_QUADRUPED, 0}};
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; ++i) {
    if (strcmp(name, scenes[i].name) != 0)
      continue;
    out->kind = scenes[i].kind;
    out->name = scenes[i].name;
    out->size = scenes[i].default_size && size > 0 ? size : scenes[i].default_size;
    int rc = scenes[i].default_size ? read_body_scene(out, error, error_size)
                                    : read_robot_scene(out, error, error_size);
    if (rc != LCP_OK)
      peer_scene_free(out);
    return rc;
  }
  return fail(error, error_size, LCP_ERR_NOT_FOUND, "unknown scene '%s'", name);
}

void peer_scene_free(peer_scene *scene) {
  free(scene->solids);
  free(scene->fixtures);
  lcp_robot_def_free(&scene->robot);
  free(scene->joint_link);
  free(scene->joint_initial); /* kp, kd, effort and hold_target share its block */
  memset(scene, 0, sizeof *scene);
}

void peer_scene_targets(const peer_scene *scene, double t, double *targets) {
  for (int32_t j = 0; j < scene->joint_count; ++j)
    targets[j] = scene->kind == PEER_SCENE_ARM ? lcp_scene_arm_target(j, t) : scene->hold_target[j];
}
