/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark scenes (scenes.h). */
#include "scenes.h"
#include "lcpsim/urdf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SCENE_PI 3.14159265358979323846

lcp_world_settings_t lcp_scene_settings(void) {
  lcp_world_settings_t s = lcp_world_settings_default();
  s.timestep = 1.0 / 240.0;
  s.iterations = 20;
  return s;
}

int lcp_scene_ground(lcp_world_t *world, double mu, lcp_geom_id *out_geom) {
  lcp_geom_def_t plane = lcp_geom_def_default();
  plane.type = LCP_SHAPE_PLANE;
  plane.friction = mu;
  return lcp_geom_add(world, LCP_WORLD_BODY, &plane, out_geom);
}

/* A dynamic box or sphere of uniform density with the given mass. */
static int add_solid(lcp_world_t *world, const lcp_geom_def_t *shape, double mass, double x,
                     double y, double z, lcp_body_id *out) {
  double unit_mass, inertia[9], center[3];
  int rc = lcp_geom_def_mass_properties(shape, 1.0, &unit_mass, inertia, center);
  if (rc != 0)
    return rc;
  lcp_body_def_t body = lcp_body_def_default();
  body.mass = mass;
  for (int i = 0; i < 9; ++i)
    body.inertia[i] = inertia[i] * mass / unit_mass;
  body.position[0] = x;
  body.position[1] = y;
  body.position[2] = z;
  if ((rc = lcp_body_add(world, &body, out)) != 0)
    return rc;
  return lcp_geom_add(world, *out, shape, NULL);
}

static lcp_geom_def_t cube(double edge, double mu) {
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = LCP_SHAPE_BOX;
  g.half_extents[0] = g.half_extents[1] = g.half_extents[2] = 0.5 * edge;
  g.friction = mu;
  return g;
}

static void info_set(lcp_scene_info_t *info, int32_t bodies, lcp_body_id top, double x, double y,
                     double z, int32_t steps) {
  if (!info)
    return;
  info->bodies = bodies;
  info->dofs = 6 * bodies;
  info->top_body = top;
  info->top_position[0] = x;
  info->top_position[1] = y;
  info->top_position[2] = z;
  info->default_steps = steps;
}

int lcp_scene_pyramid(lcp_world_t *world, int32_t levels, lcp_scene_info_t *info) {
  if (levels < 1)
    return LCP_ERR_INVALID_ARGUMENT;
  const double edge = 0.5, mu = 0.6;
  int rc = lcp_scene_ground(world, mu, NULL);
  if (rc != 0)
    return rc;
  lcp_geom_def_t box = cube(edge, mu);
  lcp_body_id top = LCP_NULL_ID;
  int32_t count = 0;
  double tx = 0, tz = 0;
  for (int32_t k = 0; k < levels; ++k) {
    int32_t n = levels - k;
    for (int32_t i = 0; i < n; ++i) {
      double x = (i - 0.5 * (n - 1)) * edge;
      double z = 0.5 * edge + k * edge;
      if ((rc = add_solid(world, &box, 1.0, x, 0.0, z, &top)) != 0)
        return rc;
      tx = x;
      tz = z;
      count++;
    }
  }
  info_set(info, count, top, tx, 0.0, tz, 480);
  return LCP_OK;
}

int lcp_scene_stack(lcp_world_t *world, int32_t count, lcp_scene_info_t *info) {
  if (count < 1)
    return LCP_ERR_INVALID_ARGUMENT;
  const double edge = 0.5, mu = 0.6;
  int rc = lcp_scene_ground(world, mu, NULL);
  if (rc != 0)
    return rc;
  lcp_geom_def_t box = cube(edge, mu);
  lcp_body_id top = LCP_NULL_ID;
  for (int32_t k = 0; k < count; ++k)
    if ((rc = add_solid(world, &box, 1.0, 0.0, 0.0, 0.5 * edge + k * edge, &top)) != 0)
      return rc;
  info_set(info, count, top, 0.0, 0.0, 0.5 * edge + (count - 1) * edge, 2400);
  return LCP_OK;
}

int lcp_scene_drop(lcp_world_t *world, int32_t count, lcp_scene_info_t *info) {
  if (count < 1)
    return LCP_ERR_INVALID_ARGUMENT;
  const double mu = 0.5, half_plate = 2.0, half_thickness = 0.01, height = 5.0, spacing = 0.4;
  lcp_body_def_t plate = lcp_body_def_default();
  plate.type = LCP_BODY_STATIC;
  lcp_body_id plate_id;
  int rc = lcp_body_add(world, &plate, &plate_id);
  if (rc != LCP_OK)
    return rc;
  lcp_geom_def_t slab = cube(1.0, mu);
  slab.half_extents[0] = slab.half_extents[1] = half_plate;
  slab.half_extents[2] = half_thickness;
  slab.local_position[2] = -half_thickness; /* the top face at z = 0 */
  if ((rc = lcp_geom_add(world, plate_id, &slab, NULL)) != LCP_OK)
    return rc;
  lcp_geom_def_t ball = lcp_geom_def_default();
  ball.radius = 0.1;
  ball.friction = mu;
  lcp_geom_def_t box = cube(0.2, mu);
  /* a square grid centred over the plate, layers 0.4 m apart upwards */
  int32_t side = (int32_t)ceil(sqrt((double)(count < 100 ? count : 100)));
  lcp_body_id first = LCP_NULL_ID;
  for (int32_t k = 0; k < count; ++k) {
    int32_t layer = k / (side * side), cell = k % (side * side);
    double x = (cell % side - 0.5 * (side - 1)) * spacing;
    double y = (cell / side - 0.5 * (side - 1)) * spacing;
    lcp_body_id id;
    if ((rc = add_solid(world, k % 2 ? &box : &ball, 1.0, x, y, height + 0.1 + layer * spacing,
                        &id)) != LCP_OK)
      return rc;
    if (k == 0)
      first = id;
  }
  double x0 = -0.5 * (side - 1) * spacing;
  info_set(info, count, first, x0, x0, height + 0.1, 960);
  return LCP_OK;
}

int lcp_scene_pile(lcp_world_t *world, int32_t count, lcp_scene_info_t *info) {
  if (count < 1)
    return LCP_ERR_INVALID_ARGUMENT;
  const double mu = 0.5, half_bin = 1.0, wall_half_thickness = 0.05, wall_half_height = 0.5;
  int rc = lcp_scene_ground(world, mu, NULL);
  if (rc != 0)
    return rc;
  /* Four static walls around the 2 m × 2 m bin. */
  for (int w = 0; w < 4; ++w) {
    lcp_geom_def_t wall = lcp_geom_def_default();
    wall.type = LCP_SHAPE_BOX;
    wall.friction = mu;
    double along = half_bin + 2.0 * wall_half_thickness;
    double offset = half_bin + wall_half_thickness;
    bool x_wall = w < 2;
    double sign = (w % 2 == 0) ? 1.0 : -1.0;
    wall.half_extents[0] = x_wall ? wall_half_thickness : along;
    wall.half_extents[1] = x_wall ? along : wall_half_thickness;
    wall.half_extents[2] = wall_half_height;
    wall.local_position[0] = x_wall ? sign * offset : 0.0;
    wall.local_position[1] = x_wall ? 0.0 : sign * offset;
    wall.local_position[2] = wall_half_height;
    if ((rc = lcp_geom_add(world, LCP_WORLD_BODY, &wall, NULL)) != 0)
      return rc;
  }
  /* A grid of 12 × 12 per layer, 0.15 m apart, layers 0.15 m apart from
   * z = 0.1; odd bodies are spheres, even ones cubes. Each layer is shifted
   * a little so that the pile does not stand in perfect columns. */
  const int32_t per_row = 12;
  const double spacing = 0.15;
  lcp_geom_def_t box = cube(0.1, mu);
  lcp_geom_def_t ball = lcp_geom_def_default();
  ball.type = LCP_SHAPE_SPHERE;
  ball.radius = 0.05;
  ball.friction = mu;
  lcp_body_id last = LCP_NULL_ID;
  double lx = 0, ly = 0, lz = 0;
  for (int32_t i = 0; i < count; ++i) {
    int32_t layer = i / (per_row * per_row);
    int32_t in_layer = i % (per_row * per_row);
    double shift = 0.02 * ((layer % 3) - 1);
    double x = (in_layer % per_row - 0.5 * (per_row - 1)) * spacing + shift;
    double y = (in_layer / per_row - 0.5 * (per_row - 1)) * spacing - shift;
    double z = 0.1 + layer * spacing;
    if ((rc = add_solid(world, (i % 2) ? &ball : &box, 0.1, x, y, z, &last)) != 0)
      return rc;
    lx = x, ly = y, lz = z;
  }
  info_set(info, count, last, lx, ly, lz, 1000);
  return LCP_OK;
}

/* ---- robot scenes ---- */

lcp_world_settings_t lcp_scene_robot_settings(void) {
  lcp_world_settings_t s = lcp_world_settings_default();
  s.timestep = 1e-3;
  s.iterations = 20;
  return s;
}

static void robot_scene_init(lcp_robot_scene_t *out) {
  memset(out, 0, sizeof *out);
  out->robot = LCP_NULL_ID;
  out->ground = LCP_NULL_ID;
}

/* Adds def to the world and fills the common part of out. */
static int add_robot(lcp_world_t *world, const lcp_robot_def_t *def, const double base[3],
                     lcp_robot_scene_t *out) {
  int rc = lcp_robot_add(world, def, base, NULL, &out->robot);
  if (rc != LCP_OK)
    return rc;
  lcp_robot_info_t info;
  if ((rc = lcp_robot_get_info(world, out->robot, &info)) != LCP_OK)
    return rc;
  out->bodies = info.link_count;
  out->dofs = info.nv;
  out->joint_count = info.joint_count;
  return LCP_OK;
}

static int load_shipped(const char *file, int floating_base, lcp_robot_def_t **def) {
  char path[4096], error[1024];
  int rc = lcp_shipped_robot_path(file, path, sizeof path, error, sizeof error);
  if (rc != LCP_OK)
    return rc;
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.floating_base = floating_base;
  return lcp_urdf_load_file(path, &options, def, error, sizeof error);
}

#define ARM_KP 100.0
#define ARM_KD 10.0
#define ARM_JOINTS 7

double lcp_scene_arm_target(int32_t joint, double t) {
  return 0.5 * sin(2.0 * SCENE_PI * 0.5 * t + (double)joint);
}

int lcp_scene_arm_set_targets(lcp_world_t *world, lcp_robot_id arm, double t) {
  lcp_joint_control_t c[ARM_JOINTS];
  for (int32_t i = 0; i < ARM_JOINTS; ++i) {
    c[i] = lcp_joint_control_default();
    c[i].mode = LCP_CONTROL_POSITION;
    c[i].kp = ARM_KP;
    c[i].kd = ARM_KD;
    c[i].position = lcp_scene_arm_target(i, t);
    c[i].velocity = 0.0;
  }
  return lcp_robot_set_controls(world, arm, c, ARM_JOINTS);
}

int lcp_scene_arm(lcp_world_t *world, lcp_robot_scene_t *out) {
  if (!world || !out)
    return LCP_ERR_INVALID_ARGUMENT;
  robot_scene_init(out);
  const double mu = 0.8;
  int rc = lcp_scene_ground(world, mu, &out->ground);
  if (rc != LCP_OK)
    return rc;
  lcp_robot_def_t *def = NULL;
  if ((rc = load_shipped("arm7.urdf", 0, &def)) != LCP_OK)
    return rc;
  for (int32_t g = 0; g < def->geom_count; ++g)
    def->geoms[g].friction = mu;
  const double base[3] = {0.0, 0.0, 0.1};
  rc = add_robot(world, def, base, out);
  lcp_robot_def_free(&def);
  if (rc != LCP_OK)
    return rc;
  if (out->joint_count != ARM_JOINTS)
    return LCP_ERR_MISMATCH;
  out->default_steps = 10000;
  return lcp_scene_arm_set_targets(world, out->robot, 0.0);
}

#define CHAIN_LINKS 20

int lcp_scene_chain(lcp_world_t *world, lcp_robot_scene_t *out) {
  if (!world || !out)
    return LCP_ERR_INVALID_ARGUMENT;
  robot_scene_init(out);
  const double length = 0.2, radius = 0.04, mass = 0.5, pitch = 0.21, height = 0.5, mu = 0.8;
  int rc = lcp_scene_ground(world, mu, &out->ground);
  if (rc != LCP_OK)
    return rc;
  /* The capsule along the link's x axis: its segment is the geom's z axis,
   * turned by +90° about y. */
  lcp_geom_def_t capsule = lcp_geom_def_default();
  capsule.type = LCP_SHAPE_CAPSULE;
  capsule.radius = radius;
  capsule.half_length = 0.5 * length;
  capsule.local_position[0] = 0.5 * length;
  capsule.local_orientation[0] = sqrt(0.5);
  capsule.local_orientation[2] = sqrt(0.5);
  capsule.friction = mu;
  double unit_mass, geom_inertia[9], center[3];
  if ((rc = lcp_geom_def_mass_properties(&capsule, 1.0, &unit_mass, geom_inertia, center)) !=
      LCP_OK)
    return rc;
  double scale = mass / unit_mass;
  /* lcp_geom_def_mass_properties gives the inertia in the link's axes, where
   * the capsule's segment lies along x: x is its axial moment. */
  double axial = geom_inertia[0] * scale, across = geom_inertia[8] * scale;
  lcp_robot_def_t *def = NULL;
  if ((rc = lcp_robot_def_alloc(CHAIN_LINKS, CHAIN_LINKS, &def)) != LCP_OK)
    return rc;
  snprintf(def->name, sizeof def->name, "chain");
  def->floating_base = true;
  def->self_collision = false;
  for (int32_t i = 0; i < CHAIN_LINKS; ++i) {
    lcp_link_def_t *l = &def->links[i];
    snprintf(l->name, sizeof l->name, "link%d", (int)i);
    if (i > 0) {
      snprintf(l->joint_name, sizeof l->joint_name, "joint%d", (int)i);
      l->parent = i - 1;
      l->joint_type = LCP_JOINT_CONTINUOUS;
      l->origin_position[0] = pitch;
      l->axis[0] = l->axis[1] = l->axis[2] = 0.0;
      l->axis[i % 2 ? 0 : 1] = 1.0; /* odd joints about x, even ones about y */
    }
    l->mass = mass;
    l->com[0] = 0.5 * length;
    l->com[1] = l->com[2] = 0.0;
    memset(l->inertia, 0, sizeof l->inertia);
    l->inertia[0] = axial;
    l->inertia[4] = l->inertia[8] = across;
    def->geoms[i] = capsule;
    l->first_geom = i;
    l->geom_count = 1;
  }
  const double base[3] = {0.0, 0.0, height};
  rc = add_robot(world, def, base, out);
  lcp_robot_def_free(&def);
  if (rc != LCP_OK)
    return rc;
  out->default_steps = 5000;
  return LCP_OK;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

double lcp_scene_quadruped_stand_angle(const lcp_world_t *world, lcp_robot_id robot,
                                       int32_t joint) {
  lcp_joint_info_t info;
  if (lcp_robot_get_joint(world, robot, joint, &info) != LCP_OK)
    return 0.0;
  if (ends_with(info.name, "_thigh_joint"))
    return 0.8;
  if (ends_with(info.name, "_calf_joint"))
    return -1.6;
  return 0.0; /* hips */
}

int lcp_scene_foot_position(const lcp_world_t *world, const lcp_robot_scene_t *scene, int32_t foot,
                            double position[3]) {
  if (!scene || foot < 0 || foot >= scene->foot_count)
    return LCP_ERR_INVALID_ARGUMENT;
  double p[3], q[4], r[3];
  int rc = lcp_robot_get_link_pose(world, scene->robot, scene->foot_link[foot], p, q);
  if (rc != LCP_OK)
    return rc;
  lcp_quat_rotate(q, scene->foot_offset[foot], r);
  for (int k = 0; k < 3; ++k)
    position[k] = p[k] + r[k];
  return LCP_OK;
}

#define QUADRUPED_JOINTS 12

int lcp_scene_quadruped(lcp_world_t *world, double kp, double kd, double lift,
                        lcp_robot_scene_t *out) {
  if (!world || !out || !(kp >= 0.0) || !(kd >= 0.0) || !(lift >= 0.0) || !isfinite(kp) ||
      !isfinite(kd) || !isfinite(lift))
    return LCP_ERR_INVALID_ARGUMENT;
  robot_scene_init(out);
  const double mu = 0.8;
  int rc = lcp_scene_ground(world, mu, &out->ground);
  if (rc != LCP_OK)
    return rc;
  lcp_robot_def_t *def = NULL;
  if ((rc = load_shipped("quadruped.urdf", 1, &def)) != LCP_OK)
    return rc;
  /* The feet are the sphere geoms (merged into the calves). */
  double foot_radius = 0.0;
  for (int32_t l = 0; l < def->link_count; ++l) {
    const lcp_link_def_t *link = &def->links[l];
    for (int32_t g = link->first_geom; g < link->first_geom + link->geom_count; ++g) {
      lcp_geom_def_t *geom = &def->geoms[g];
      geom->friction = mu;
      if (geom->type != LCP_SHAPE_SPHERE || out->foot_count == LCP_SCENE_MAX_FEET)
        continue;
      out->foot_link[out->foot_count] = l;
      memcpy(out->foot_offset[out->foot_count], geom->local_position, sizeof(double[3]));
      foot_radius = geom->radius;
      out->foot_count++;
    }
  }
  const double origin[3] = {0.0, 0.0, 0.0};
  rc = add_robot(world, def, origin, out);
  lcp_robot_def_free(&def);
  if (rc != LCP_OK)
    return rc;
  if (out->joint_count != QUADRUPED_JOINTS || out->foot_count != LCP_SCENE_MAX_FEET)
    return LCP_ERR_MISMATCH;
  /* The standing pose with the trunk at the origin, then lifted so that the
   * lowest foot is `lift` above the ground. */
  double q[7 + QUADRUPED_JOINTS] = {0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0};
  lcp_joint_control_t controls[QUADRUPED_JOINTS];
  for (int32_t j = 0; j < QUADRUPED_JOINTS; ++j) {
    q[7 + j] = lcp_scene_quadruped_stand_angle(world, out->robot, j);
    controls[j] = lcp_joint_control_default();
    if (kp > 0.0 || kd > 0.0) {
      controls[j].mode = LCP_CONTROL_POSITION;
      controls[j].position = q[7 + j];
      controls[j].kp = kp;
      controls[j].kd = kd;
    }
  }
  if ((rc = lcp_robot_set_q(world, out->robot, q, 7 + QUADRUPED_JOINTS)) != LCP_OK)
    return rc;
  double lowest = INFINITY;
  for (int32_t k = 0; k < out->foot_count; ++k) {
    double p[3];
    if ((rc = lcp_scene_foot_position(world, out, k, p)) != LCP_OK)
      return rc;
    lowest = fmin(lowest, p[2] - foot_radius);
  }
  out->stand_height = -lowest;
  q[2] = out->stand_height + lift;
  if ((rc = lcp_robot_set_q(world, out->robot, q, 7 + QUADRUPED_JOINTS)) != LCP_OK)
    return rc;
  if ((rc = lcp_robot_set_controls(world, out->robot, controls, QUADRUPED_JOINTS)) != LCP_OK)
    return rc;
  out->default_steps = 5000;
  return LCP_OK;
}
