/* SPDX-License-Identifier: Apache-2.0 */
#include "scene.h"

#include "lcpsim/urdf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lcpd_scene_init(lcpd_scene_t *scene) {
  *scene = (lcpd_scene_t){
      .settings = lcp_world_settings_default(),
      .mode = LCPD_MODE_LOCKSTEP,
      .rate = 1.0,
      .ground_friction = 0.8,
  };
}

void lcpd_scene_clear(lcpd_scene_t *scene) {
  for (int32_t i = 0; i < scene->robot_count; ++i)
    lcp_robot_def_free(&scene->robots[i].def);
  free(scene->robots);
  free(scene->bodies);
  free(scene->imus);
  scene->imus = NULL;
  scene->imu_count = 0;
  scene->robots = NULL;
  scene->bodies = NULL;
  scene->robot_count = 0;
  scene->body_count = 0;
}

bool lcpd_scene_has_name(const lcpd_scene_t *scene, const char *name) {
  for (int32_t i = 0; i < scene->robot_count; ++i)
    if (strcmp(scene->robots[i].def->name, name) == 0)
      return true;
  for (int32_t i = 0; i < scene->body_count; ++i)
    if (strcmp(scene->bodies[i].name, name) == 0)
      return true;
  return false;
}

bool lcpd_scene_name_taken(const void *scene, const char *name) {
  return lcpd_scene_has_name(scene, name);
}

bool lcpd_unique_name(const char *base, bool (*taken)(const void *context, const char *name),
                      const void *context, char out[LCP_NAME_MAX]) {
  if (!taken(context, base)) {
    snprintf(out, LCP_NAME_MAX, "%s", base);
    return true;
  }
  for (int n = 2; n < 10000; ++n) {
    char suffix[8];
    int len = snprintf(suffix, sizeof suffix, "_%d", n);
    int keep = (int)strlen(base);
    if (keep > LCP_NAME_MAX - 1 - len)
      keep = LCP_NAME_MAX - 1 - len;
    snprintf(out, LCP_NAME_MAX, "%.*s%s", keep, base, suffix);
    if (!taken(context, out))
      return true;
  }
  return false;
}

static bool finite3(const double v[3]) {
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

int lcpd_scene_add_robot(lcpd_scene_t *scene, lcp_robot_def_t *def, const double position[3],
                         const double orientation[4], lcpd_error_t *error) {
  int rc = LCP_OK;
  if (!finite3(position) || !lcp_quat_is_valid(orientation))
    rc =
        lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                  "robot '%s': the base pose must be finite with a non-zero quaternion", def->name);
  else if (lcpd_scene_has_name(scene, def->name))
    rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                   "the name '%s' is taken by another robot or body", def->name);
  lcpd_robot_spec_t *grown = NULL;
  if (rc == LCP_OK) {
    grown = realloc(scene->robots, (size_t)(scene->robot_count + 1) * sizeof *grown);
    if (!grown)
      rc = lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  }
  if (rc != LCP_OK) {
    lcp_robot_def_free(&def);
    return rc;
  }
  scene->robots = grown;
  lcpd_robot_spec_t *spec = &scene->robots[scene->robot_count++];
  spec->def = def;
  memcpy(spec->position, position, sizeof spec->position);
  memcpy(spec->orientation, orientation, sizeof spec->orientation);
  return LCP_OK;
}

int lcpd_scene_add_imu(lcpd_scene_t *scene, const lcpd_imu_spec_t *imu, lcpd_error_t *error) {
  const lcp_robot_def_t *def = NULL;
  for (int32_t i = 0; i < scene->robot_count; ++i)
    if (strcmp(scene->robots[i].def->name, imu->robot) == 0)
      def = scene->robots[i].def;
  if (!def)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "imu '%s': no robot '%s' before it", imu->name,
                     imu->robot);
  bool has_link = false;
  for (int32_t i = 0; i < def->link_count; ++i)
    has_link |= strcmp(def->links[i].name, imu->link) == 0;
  if (!has_link)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "imu '%s': robot '%s' has no link '%s'", imu->name,
                     imu->robot, imu->link);
  for (int32_t i = 0; i < scene->imu_count; ++i)
    if (strcmp(scene->imus[i].name, imu->name) == 0)
      return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "the imu name '%s' is used twice",
                       imu->name);
  lcpd_imu_spec_t *grown = realloc(scene->imus, (size_t)(scene->imu_count + 1) * sizeof *grown);
  if (!grown)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  scene->imus = grown;
  scene->imus[scene->imu_count++] = *imu;
  return LCP_OK;
}

int lcpd_scene_add_body(lcpd_scene_t *scene, const lcpd_body_spec_t *body, lcpd_error_t *error) {
  if (body->name[0] == '\0')
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "a body in a scene needs a name");
  int rc = lcpd_body_spec_validate(body, "", error);
  if (rc != LCP_OK)
    return lcpd_error_prefix(error, "body '%s': ", body->name);
  if (lcpd_scene_has_name(scene, body->name))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "the name '%s' is taken by another robot or body", body->name);
  lcpd_body_spec_t *grown = realloc(scene->bodies, (size_t)(scene->body_count + 1) * sizeof *grown);
  if (!grown)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  scene->bodies = grown;
  scene->bodies[scene->body_count++] = *body;
  return LCP_OK;
}

lcpd_body_spec_t lcpd_body_spec_default(void) {
  return (lcpd_body_spec_t){
      .shape = {.type = LCP_SHAPE_BOX, .half_extents = {0.05, 0.05, 0.05}},
      .orientation = {1.0, 0.0, 0.0, 0.0},
      .mass = 1.0,
      .friction = 0.5,
  };
}

static bool positive(double x) { return isfinite(x) && x > 0.0; }

int lcpd_body_spec_validate(const lcpd_body_spec_t *b, const char *field_prefix,
                            lcpd_error_t *error) {
  const int bad = LCP_ERR_INVALID_ARGUMENT;
  const char *f = field_prefix;
  if (memchr(b->name, '\0', LCP_NAME_MAX) == NULL)
    return lcpd_fail(error, bad, "%sname is longer than %d bytes", f, LCP_NAME_MAX - 1);
  const lcpd_shape_t *s = &b->shape;
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
    if (!positive(s->radius))
      return lcpd_fail(error, bad, "%sshape.radius must be > 0 for a sphere (got %g)", f,
                       s->radius);
    break;
  case LCP_SHAPE_BOX:
    if (!positive(s->half_extents[0]) || !positive(s->half_extents[1]) ||
        !positive(s->half_extents[2]))
      return lcpd_fail(error, bad, "%sshape.half_extents must be > 0 for a box (got %g %g %g)", f,
                       s->half_extents[0], s->half_extents[1], s->half_extents[2]);
    break;
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    if (!positive(s->radius) || !positive(s->half_length))
      return lcpd_fail(
          error, bad, "%sshape.radius and half_length must be > 0 for a %s (got %g, %g)", f,
          s->type == LCP_SHAPE_CAPSULE ? "capsule" : "cylinder", s->radius, s->half_length);
    break;
  default:
    return lcpd_fail(error, bad, "%sshape.type must be a sphere, box, capsule or cylinder", f);
  }
  if (!finite3(b->position))
    return lcpd_fail(error, bad, "%spose.position must be finite", f);
  if (!lcp_quat_is_valid(b->orientation))
    return lcpd_fail(error, bad,
                     "%spose.orientation must be a finite, non-zero quaternion (w, x, y, z)", f);
  if (!finite3(b->linear_velocity) || !finite3(b->angular_velocity))
    return lcpd_fail(error, bad, "%stwist must be finite", f);
  if (!b->is_static && !positive(b->mass))
    return lcpd_fail(error, bad, "%smass must be > 0 for a dynamic body (got %g)", f, b->mass);
  if (!(isfinite(b->friction) && b->friction >= 0.0))
    return lcpd_fail(error, bad, "%sfriction must be finite and >= 0 (got %g)", f, b->friction);
  if (!(b->restitution >= 0.0 && b->restitution <= 1.0))
    return lcpd_fail(error, bad, "%srestitution must be in [0, 1] (got %g)", f, b->restitution);
  return LCP_OK;
}

int lcpd_settings_validate(const lcp_world_settings_t *settings, double rate, lcpd_error_t *error) {
  char why[256];
  if (lcp_world_settings_validate(settings, why, sizeof why) != LCP_OK)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s", why);
  if (!(isfinite(rate) && rate > 0.0))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "rate must be > 0 (got %g)", rate);
  return LCP_OK;
}

int lcpd_body_spec_defs(const lcpd_body_spec_t *b, lcp_body_def_t *body_def,
                        lcp_geom_def_t *geom_def) {
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = b->shape.type;
  g.radius = b->shape.radius;
  g.half_length = b->shape.half_length;
  memcpy(g.half_extents, b->shape.half_extents, sizeof g.half_extents);
  g.friction = b->friction;
  g.restitution = b->restitution;
  lcp_body_def_t d = lcp_body_def_default();
  memcpy(d.position, b->position, sizeof d.position);
  memcpy(d.orientation, b->orientation, sizeof d.orientation);
  if (b->is_static) {
    d.type = LCP_BODY_STATIC;
    d.mass = 0.0;
    memset(d.inertia, 0, sizeof d.inertia);
  } else {
    /* The solid's inertia at unit density, scaled to the mass: the shapes are
     * symmetric about the body origin, so that is the centre of mass. */
    double unit_mass, inertia[9], center[3];
    int rc = lcp_geom_def_mass_properties(&g, 1.0, &unit_mass, inertia, center);
    if (rc != LCP_OK)
      return rc;
    if (!(unit_mass > 0.0))
      return LCP_ERR_INVALID_ARGUMENT;
    d.mass = b->mass;
    for (int i = 0; i < 9; ++i)
      d.inertia[i] = inertia[i] * (b->mass / unit_mass);
    memcpy(d.linear_velocity, b->linear_velocity, sizeof d.linear_velocity);
    memcpy(d.angular_velocity, b->angular_velocity, sizeof d.angular_velocity);
  }
  *body_def = d;
  *geom_def = g;
  return LCP_OK;
}

int lcpd_scene_builtin(lcpd_scene_t *scene, lcpd_error_t *error) {
  lcpd_scene_init(scene);
  scene->has_ground = true;
  scene->ground_friction = 0.8;

  /* The arm's base cylinder is 0.1 m tall below its first joint: with the
   * base at z = 0.1 m it stands on the ground. */
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.floating_base = 0;
  lcp_robot_def_t *arm = NULL;
  char why[2048];
  char arm_path[4096];
  int rc = lcp_shipped_robot_path("arm7.urdf", arm_path, sizeof arm_path, why, sizeof why);
  if (rc == LCP_OK)
    rc = lcp_urdf_load_file(arm_path, &options, &arm, why, sizeof why);
  if (rc != LCP_OK) {
    lcpd_fail(error, rc, "built-in world: %s", why);
    lcpd_scene_clear(scene);
    return rc;
  }
  const double arm_position[3] = {0.0, 0.0, 0.1}, identity[4] = {1.0, 0.0, 0.0, 0.0};
  rc = lcpd_scene_add_robot(scene, arm, arm_position, identity, error);

  /* A table 0.4 m high whose near edge is 0.45 m in front of the arm, and a
   * 0.1 m, 0.5 kg box resting on it 0.6 m out: the arm reaches it by
   * bending its second and fourth joints. */
  lcpd_body_spec_t table = lcpd_body_spec_default();
  snprintf(table.name, sizeof table.name, "table");
  table.shape = (lcpd_shape_t){.type = LCP_SHAPE_BOX, .half_extents = {0.3, 0.4, 0.2}};
  table.position[0] = 0.75;
  table.position[2] = 0.2;
  table.is_static = true;
  table.friction = 0.6;
  lcpd_body_spec_t box = lcpd_body_spec_default();
  snprintf(box.name, sizeof box.name, "box");
  box.shape = (lcpd_shape_t){.type = LCP_SHAPE_BOX, .half_extents = {0.05, 0.05, 0.05}};
  box.position[0] = 0.6;
  box.position[2] = 0.45;
  box.mass = 0.5;
  box.friction = 0.6;
  if (rc == LCP_OK)
    rc = lcpd_scene_add_body(scene, &table, error);
  if (rc == LCP_OK)
    rc = lcpd_scene_add_body(scene, &box, error);
  if (rc != LCP_OK)
    lcpd_scene_clear(scene);
  return rc;
}

int lcpd_robot_def_copy(const lcp_robot_def_t *from, lcp_robot_def_t **out) {
  *out = NULL;
  lcp_robot_def_t *def = NULL;
  int rc = lcp_robot_def_alloc(from->link_count, from->geom_count, &def);
  if (rc != LCP_OK)
    return rc;
  memcpy(def->name, from->name, sizeof def->name);
  def->floating_base = from->floating_base;
  def->self_collision = from->self_collision;
  memcpy(def->links, from->links, (size_t)from->link_count * sizeof *def->links);
  for (int32_t i = 0; i < from->geom_count; ++i) {
    def->geoms[i] = from->geoms[i];
    def->geoms[i].hull_points = NULL;
    if (from->geoms[i].hull_points && from->geoms[i].hull_point_count > 0) {
      size_t bytes = (size_t)from->geoms[i].hull_point_count * 3 * sizeof(double);
      double *points = malloc(bytes);
      if (!points) {
        def->geoms[i].hull_point_count = 0;
        lcp_robot_def_free(&def);
        return LCP_ERR_NO_MEMORY;
      }
      memcpy(points, from->geoms[i].hull_points, bytes);
      def->geoms[i].hull_points = points;
    }
  }
  if (from->frame_count > 0) {
    def->frames = malloc((size_t)from->frame_count * sizeof *def->frames);
    if (!def->frames) {
      lcp_robot_def_free(&def);
      return LCP_ERR_NO_MEMORY;
    }
    memcpy(def->frames, from->frames, (size_t)from->frame_count * sizeof *def->frames);
    def->frame_count = from->frame_count;
  }
  *out = def;
  return LCP_OK;
}

size_t lcpd_robot_def_bytes(const lcp_robot_def_t *def) {
  size_t bytes = sizeof *def + (size_t)def->link_count * sizeof *def->links +
                 (size_t)def->geom_count * sizeof *def->geoms +
                 (size_t)def->frame_count * sizeof *def->frames;
  for (int32_t i = 0; i < def->geom_count; ++i)
    bytes += (size_t)def->geoms[i].hull_point_count * 3 * sizeof(double);
  return bytes;
}

int lcpd_scene_copy(const lcpd_scene_t *from, lcpd_scene_t *to, lcpd_error_t *error) {
  *to = *from;
  to->robots = NULL;
  to->bodies = NULL;
  to->imus = NULL;
  to->robot_count = to->body_count = to->imu_count = 0;
  if (from->robot_count && !(to->robots = calloc((size_t)from->robot_count, sizeof *to->robots)))
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for a copy of the scene");
  for (int32_t i = 0; i < from->robot_count; ++i) {
    to->robots[i] = from->robots[i];
    to->robots[i].def = NULL;
    if (lcpd_robot_def_copy(from->robots[i].def, &to->robots[i].def) != LCP_OK) {
      lcpd_scene_clear(to);
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for a copy of the scene");
    }
    to->robot_count = i + 1;
  }
  if ((from->body_count && !(to->bodies = malloc((size_t)from->body_count * sizeof *to->bodies))) ||
      (from->imu_count && !(to->imus = malloc((size_t)from->imu_count * sizeof *to->imus)))) {
    lcpd_scene_clear(to);
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for a copy of the scene");
  }
  if (from->body_count)
    memcpy(to->bodies, from->bodies, (size_t)from->body_count * sizeof *to->bodies);
  if (from->imu_count)
    memcpy(to->imus, from->imus, (size_t)from->imu_count * sizeof *to->imus);
  to->body_count = from->body_count;
  to->imu_count = from->imu_count;
  return LCP_OK;
}
