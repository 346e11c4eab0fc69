/* Helpers shared by the engine tests: building small worlds through the
 * public API. Header-only so each test stays one executable. */
#ifndef LCP_TEST_UTIL_H
#define LCP_TEST_UTIL_H

#include "lcpsim/lcpsim.h"

#include <math.h>
#include <stdbool.h>

#define TEST_PI 3.14159265358979323846

/* A dynamic body of uniform density carrying one geom, with the given mass. */
static inline lcp_body_id test_add_solid(lcp_world_t *world, const lcp_geom_def_t *geom,
                                         double mass, const double position[3],
                                         const double orientation[4]) {
  double unit_mass, inertia[9], center[3];
  if (lcp_geom_def_mass_properties(geom, 1.0, &unit_mass, inertia, center) != LCP_OK)
    return LCP_NULL_ID;
  lcp_body_def_t body = lcp_body_def_default();
  body.mass = mass;
  for (int i = 0; i < 9; ++i)
    body.inertia[i] = inertia[i] * mass / unit_mass;
  for (int i = 0; i < 3; ++i)
    body.position[i] = position[i];
  if (orientation)
    for (int i = 0; i < 4; ++i)
      body.orientation[i] = orientation[i];
  lcp_body_id id;
  if (lcp_body_add(world, &body, &id) != LCP_OK)
    return LCP_NULL_ID;
  if (lcp_geom_add(world, id, geom, NULL) != LCP_OK)
    return LCP_NULL_ID;
  return id;
}

static inline lcp_geom_def_t test_box_def(double hx, double hy, double hz, double mu) {
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = LCP_SHAPE_BOX;
  g.half_extents[0] = hx;
  g.half_extents[1] = hy;
  g.half_extents[2] = hz;
  g.friction = mu;
  return g;
}

static inline lcp_geom_def_t test_sphere_def(double r, double mu) {
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = LCP_SHAPE_SPHERE;
  g.radius = r;
  g.friction = mu;
  return g;
}

/* A ground plane through the origin whose normal is the world z axis rotated
 * by the quaternion q (NULL: flat). */
static inline int test_add_plane(lcp_world_t *world, double mu, const double q[4]) {
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = LCP_SHAPE_PLANE;
  g.friction = mu;
  if (q)
    for (int i = 0; i < 4; ++i)
      g.local_orientation[i] = q[i];
  return lcp_geom_add(world, LCP_WORLD_BODY, &g, NULL);
}

static inline double test_norm3(const double v[3]) {
  return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static inline double test_dist3(const double a[3], const double b[3]) {
  double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return test_norm3(d);
}

#endif
