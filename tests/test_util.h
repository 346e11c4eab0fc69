/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the unit tests: approximate comparisons, checked
 * allocation, deterministic random numbers, the engine's shapes and small
 * worlds built through the public API. Header-only so each test stays one
 * executable. */
#ifndef LCP_TEST_UTIL_H
#define LCP_TEST_UTIL_H

// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "lcp_math.h"
#include "lcpsim/lcpsim.h"
#include "shape.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define TEST_PI 3.14159265358979323846

/* ---- approximate comparisons ---- */

/* |a − b| ≤ tol, NaN failing; the message names the expression and gives
 * both values and the tolerance. */
#define ASSERT_NEAR(a, b, tol)                                                                     \
  do {                                                                                             \
    double a_ = (a), b_ = (b), t_ = (tol);                                                         \
    if (!(fabs(a_ - b_) <= t_))                                                                    \
      fail_msg("%s = %.17g, expected %.17g (tol %g)", #a, a_, b_, t_);                             \
  } while (0)

/* ASSERT_NEAR on each coordinate of two vec3. */
#define ASSERT_VEC_NEAR(a, b, tol)                                                                 \
  do {                                                                                             \
    vec3 va_ = (a), vb_ = (b);                                                                     \
    ASSERT_NEAR(va_.x, vb_.x, tol);                                                                \
    ASSERT_NEAR(va_.y, vb_.y, tol);                                                                \
    ASSERT_NEAR(va_.z, vb_.z, tol);                                                                \
  } while (0)

/* max |a_i| and max |a_i − b_i| over n entries (0 when n is 0). */
static inline double test_max_abs(int n, const double *a) {
  double m = 0.0;
  for (int i = 0; i < n; ++i)
    m = fmax(m, fabs(a[i]));
  return m;
}
static inline double test_max_abs_diff(int n, const double *a, const double *b) {
  double d = 0.0;
  for (int i = 0; i < n; ++i)
    d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* ---- checked allocation ---- */

/* Zeroed memory, never NULL (a count of 0 still gets one element). */
static inline void *test_alloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size);
  assert_non_null(p);
  return p;
}

/* n zeroed doubles. */
static inline double *test_doubles(int n) { return test_alloc((size_t)n, sizeof(double)); }

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

/* ---- the engine's shapes, in their own frames ---- */

static inline shape shape_plane(void) { return (shape){.type = LCP_SHAPE_PLANE}; }
static inline shape shape_sphere(double r) {
  return (shape){.type = LCP_SHAPE_SPHERE, .radius = r};
}
static inline shape shape_box(double hx, double hy, double hz) {
  return (shape){.type = LCP_SHAPE_BOX, .half_extents = {hx, hy, hz}};
}
static inline shape shape_capsule(double r, double half_length) {
  return (shape){.type = LCP_SHAPE_CAPSULE, .radius = r, .half_length = half_length};
}
static inline shape shape_cylinder(double r, double half_length) {
  return (shape){.type = LCP_SHAPE_CYLINDER, .radius = r, .half_length = half_length};
}
static inline shape shape_hull(const hull *h) { return (shape){.type = LCP_SHAPE_HULL, .hull = h}; }

/* ---- small worlds through the public API ---- */

/* A world with the settings s (NULL: the defaults), which must be accepted. */
static inline lcp_world_t *test_create_world(const lcp_world_settings_t *s) {
  lcp_world_t *w = NULL;
  assert_int_equal(lcp_world_create(s, &w), LCP_OK);
  return w;
}

/* A world with the default settings but the timestep h, and no gravity
 * unless asked. */
static inline lcp_world_t *test_new_world(double h, bool gravity) {
  lcp_world_settings_t s = lcp_world_settings_default();
  s.timestep = h;
  if (!gravity)
    s.gravity[2] = 0.0;
  return test_create_world(&s);
}

/* n steps, each of which must succeed. */
static inline void test_step_n(lcp_world_t *w, int n) {
  for (int i = 0; i < n; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
}

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
