/* The built-in scenes of DESIGN.md §7. */
#include "lcpsim/scenes.h"

#include <math.h>
#include <string.h>

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
