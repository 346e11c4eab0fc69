/* Helpers shared by the unit tests: deterministic random numbers and small
 * worlds built through the public API. Header-only so each test stays one
 * executable. */
#ifndef LCP_TEST_UTIL_H
#define LCP_TEST_UTIL_H

#include "lcp_math.h"
#include "lcpsim/lcpsim.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define TEST_PI 3.14159265358979323846

/* ---- deterministic random numbers ----
 *
 * splitmix64 (G. Steele, D. Lea, C. Flood, "Fast splittable pseudorandom
 * number generators"): every test seeds its own generator, so every run sees
 * the same scenes. C leaves unspecified the order in which the arguments of a
 * call, the members of an initialiser list and the operands of + or * are
 * evaluated (GCC and clang differ), so two draws in one of them would give
 * each compiler its own scene: draw each number in its own statement, or
 * through rng_vec3, rng_box, rng_quat and rng_pose, which draw their
 * components in order. */

typedef struct rng {
  uint64_t state;
} rng;

static inline uint64_t rng_next(rng *r) {
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1), from the top 53 bits. */
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* Uniform in [lo, hi). */
static inline double rng_range(rng *r, double lo, double hi) {
  return lo + (hi - lo) * rng_unit(r);
}

/* Uniform in 0 .. n − 1 (n > 0). */
static inline int rng_int(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

/* Each coordinate uniform in [lo, hi), drawn x, then y, then z. */
static inline vec3 rng_vec3(rng *r, double lo, double hi) {
  double x = rng_range(r, lo, hi);
  double y = rng_range(r, lo, hi);
  double z = rng_range(r, lo, hi);
  return v3(x, y, z);
}

/* Uniform in the box [lo, hi), drawn x, then y, then z. */
static inline vec3 rng_box(rng *r, vec3 lo, vec3 hi) {
  double x = rng_range(r, lo.x, hi.x);
  double y = rng_range(r, lo.y, hi.y);
  double z = rng_range(r, lo.z, hi.z);
  return v3(x, y, z);
}

/* A uniformly distributed rotation: a point of the unit 4-ball, drawn w, x,
 * y, z by rejection from the cube (and away from the centre, where
 * normalising would magnify rounding), normalised. */
static inline quat rng_quat(rng *r) {
  quat q;
  double n;
  do {
    q.w = rng_range(r, -1, 1);
    q.x = rng_range(r, -1, 1);
    q.y = rng_range(r, -1, 1);
    q.z = rng_range(r, -1, 1);
    n = q_norm(q);
  } while (n < 0.1 || n > 1.0);
  return q_normalize(q);
}

/* A position in [lo, hi)³, then a rotation by rng_quat. */
static inline xform rng_pose(rng *r, double lo, double hi) {
  vec3 p = rng_vec3(r, lo, hi);
  quat q = rng_quat(r);
  return xf_make(p, q);
}

/* ---- small worlds through the public API ---- */

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
