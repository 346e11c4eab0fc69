/* SPDX-License-Identifier: Apache-2.0 */
/* Narrow phase: the dedicated pair routines, the dispatcher and the manifold
 * reduction (server/engine/collide.c). Each case has an answer worked out by
 * hand: depth, normal, point count and positions to 1e-9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "collide.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#define TOL 1e-9
#define MARGIN 0.002
#define S2 1.41421356237309504880 /* √2 */

static xform X(double x, double y, double z) { return xf_make(v3(x, y, z), q_identity()); }
static xform XR(double x, double y, double z, vec3 axis, double angle) {
  return xf_make(v3(x, y, z), q_from_axis_angle(axis, angle));
}

/* Index of the manifold point at position p, or -1. */
static int find_point(const manifold *m, vec3 p, double tol) {
  for (int i = 0; i < m->point_count; ++i) {
    vec3 d = v3_sub(m->points[i].position, p);
    if (fabs(d.x) <= tol && fabs(d.y) <= tol && fabs(d.z) <= tol)
      return i;
  }
  return -1;
}

/* Asserts that m has exactly the n expected points, each with the depth. */
static void assert_points(const manifold *m, const vec3 *expected, int n, double depth) {
  assert_int_equal(m->point_count, n);
  for (int i = 0; i < n; ++i) {
    int k = find_point(m, expected[i], TOL);
    assert_true(k >= 0);
    ASSERT_NEAR(m->points[k].depth, depth, TOL);
  }
}

static void assert_distinct_ids(const manifold *m) {
  for (int i = 0; i < m->point_count; ++i)
    for (int j = i + 1; j < m->point_count; ++j)
      assert_int_not_equal(m->points[i].feature_id, m->points[j].feature_id);
}

/* Area of the convex polygon spanned by the manifold's points, projected on
 * the plane normal to z (points sorted by angle around their centroid). */
static double manifold_area_z(const manifold *m) {
  int n = m->point_count;
  vec3 c = v3_zero();
  for (int i = 0; i < n; ++i)
    c = v3_add(c, m->points[i].position);
  c = v3_scale(c, 1.0 / n);
  int order[MANIFOLD_MAX_POINTS];
  double ang[MANIFOLD_MAX_POINTS];
  for (int i = 0; i < n; ++i) {
    order[i] = i;
    ang[i] = atan2(m->points[i].position.y - c.y, m->points[i].position.x - c.x);
  }
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && ang[order[j]] < ang[order[j - 1]]; --j) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  double area = 0.0;
  for (int i = 0; i < n; ++i) {
    vec3 a = m->points[order[i]].position, b = m->points[order[(i + 1) % n]].position;
    area += a.x * b.y - a.y * b.x;
  }
  return 0.5 * fabs(area);
}

/* ---- plane ---- */

static void test_plane_sphere(void **state) {
  (void)state;
  shape p = shape_plane(), s = shape_sphere(0.5);
  xform xp = X(0, 0, 0), xs = X(1, 2, 0.49);
  manifold m;
  assert_int_equal(lcp__collide_shapes(&p, &xp, &s, &xs, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(1, 2, -0.005), TOL);

  /* a tilted, raised plane: the same answer in its frame */
  xp = XR(0.3, -0.2, 1.0, v3(1, 0, 0), 0.5);
  vec3 n = m3_col(&xp.R, 2);
  vec3 c = v3_madd(xp.p, n, 0.5 - 0.02);
  xs = X(c.x, c.y, c.z);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &s, &xs, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, n, TOL);
  ASSERT_NEAR(m.points[0].depth, 0.02, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3_madd(xp.p, n, -0.01), TOL);

  /* speculative: 1.5 mm gap inside a 2 mm margin, then 3 mm outside it */
  xp = X(0, 0, 0);
  xs = X(0, 0, 0.5015);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &s, &xs, MARGIN, &m), 1);
  ASSERT_NEAR(m.points[0].depth, -0.0015, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0, 0, 0.00075), TOL);
  xs = X(0, 0, 0.503);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &s, &xs, MARGIN, &m), 0);
  assert_int_equal(m.point_count, 0);
}

static void test_plane_box(void **state) {
  (void)state;
  shape p = shape_plane(), b = shape_box(0.5, 0.5, 0.5);
  xform xp = X(0, 0, 0), xb = X(0, 0, 0.49);
  manifold m;
  assert_int_equal(lcp__collide_shapes(&p, &xp, &b, &xb, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 flat[4] = {
      {0.5, 0.5, -0.005}, {-0.5, 0.5, -0.005}, {0.5, -0.5, -0.005}, {-0.5, -0.5, -0.005}};
  assert_points(&m, flat, 4, 0.01);
  assert_distinct_ids(&m);

  /* ids persist under a 1 µm slide */
  manifold m2;
  xform xb2 = X(1e-6, 0, 0.49);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &b, &xb2, MARGIN, &m2), 4);
  for (int i = 0; i < 4; ++i) {
    int k = find_point(&m2, v3_add(m.points[i].position, v3(1e-6, 0, 0)), TOL);
    assert_true(k >= 0);
    assert_int_equal(m2.points[k].feature_id, m.points[i].feature_id);
  }

  /* on an edge (45° about y): the two corners of the lowest edge */
  xb = XR(0, 0, 0.5 * S2 - 0.01, v3(0, 1, 0), LCP_PI / 4);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &b, &xb, MARGIN, &m), 2);
  const vec3 edge[2] = {{0, 0.5, -0.005}, {0, -0.5, -0.005}};
  assert_points(&m, edge, 2, 0.01);

  /* speculative inside the margin, nothing beyond it */
  xb = X(0, 0, 0.501);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &b, &xb, MARGIN, &m), 4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m.points[i].depth, -0.001, TOL);
    ASSERT_NEAR(m.points[i].position.z, 0.0005, TOL);
  }
  xb = X(0, 0, 0.503);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &b, &xb, MARGIN, &m), 0);
}

static void test_plane_capsule(void **state) {
  (void)state;
  shape p = shape_plane(), c = shape_capsule(0.1, 0.5);
  xform xp = X(0, 0, 0);
  manifold m;
  /* lying along x: both segment ends touch */
  xform xc = XR(0, 0, 0.09, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &c, &xc, MARGIN, &m), 2);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 lying[2] = {{0.5, 0, -0.005}, {-0.5, 0, -0.005}};
  assert_points(&m, lying, 2, 0.01);
  assert_distinct_ids(&m);

  /* standing: only the lower end */
  xc = X(0.2, 0.1, 0.59);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &c, &xc, MARGIN, &m), 1);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.2, 0.1, -0.005), TOL);
}

static void test_plane_cylinder(void **state) {
  (void)state;
  shape p = shape_plane(), c = shape_cylinder(0.3, 0.5);
  xform xp = X(0, 0, 0);
  manifold m;
  /* standing: 4 rim points of the bottom cap, at 90° */
  xform xc = X(0, 0, 0.49);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &c, &xc, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 standing[4] = {
      {0.3, 0, -0.005}, {0, 0.3, -0.005}, {-0.3, 0, -0.005}, {0, -0.3, -0.005}};
  assert_points(&m, standing, 4, 0.01);
  assert_distinct_ids(&m);

  /* lying along x: the lowest rim point of each cap */
  xc = XR(0, 0, 0.29, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &c, &xc, MARGIN, &m), 2);
  const vec3 lying[2] = {{0.5, 0, -0.005}, {-0.5, 0, -0.005}};
  assert_points(&m, lying, 2, 0.01);

  /* tilted 30° about y: one rim point, at c - hl u + r e, e = (cos30, 0, -sin30) */
  double a = LCP_PI / 6;
  double cz = 0.5 * cos(a) + 0.3 * sin(a) - 0.01;
  xc = XR(0.1, 0, cz, v3(0, 1, 0), a);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &c, &xc, MARGIN, &m), 1);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.1 - 0.5 * sin(a) + 0.3 * cos(a), 0, -0.005), TOL);
}

static void test_plane_hull(void **state) {
  (void)state;
  /* a 16-sided prism, radius 0.5, half height 0.5: bottom vertices 0..15 */
  vec3 v[32];
  for (int i = 0; i < 16; ++i) {
    double a = 2.0 * LCP_PI * i / 16.0;
    v[i] = v3(0.5 * cos(a), 0.5 * sin(a), -0.5);
    v[16 + i] = v3(0.5 * cos(a), 0.5 * sin(a), 0.5);
  }
  hull h = {.vertex_count = 32, .vertices = v};
  shape p = shape_plane(), s = shape_hull(&h);
  xform xp = X(0, 0, 0), xs = X(0, 0, 0.49);
  manifold m;
  /* 16 candidates at the same depth reduce to the inscribed square */
  assert_int_equal(lcp__collide_shapes(&p, &xp, &s, &xs, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  bool seen[4] = {false, false, false, false};
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m.points[i].depth, 0.01, TOL);
    uint32_t id = m.points[i].feature_id;
    assert_true(id < 16 && id % 4 == 0);
    seen[id / 4] = true;
    vec3 e = v[id];
    ASSERT_VEC_NEAR(m.points[i].position, v3(e.x, e.y, -0.005), TOL);
  }
  assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
  ASSERT_NEAR(manifold_area_z(&m), 0.5, TOL);

  /* swapped order: the same points, the normal flipped */
  manifold m2;
  assert_int_equal(lcp__collide_shapes(&s, &xs, &p, &xp, MARGIN, &m2), 4);
  ASSERT_VEC_NEAR(m2.normal, v3(0, 0, -1), TOL);

  /* raised beyond the margin */
  xs = X(0, 0, 0.503);
  assert_int_equal(lcp__collide_shapes(&p, &xp, &s, &xs, MARGIN, &m), 0);
}

/* ---- spheres and capsules ---- */

static void test_sphere_sphere(void **state) {
  (void)state;
  shape a = shape_sphere(0.5), b = shape_sphere(0.3);
  vec3 n = v3(0.6, 0.8, 0);
  xform xa = X(1, 1, 1), xb = X(1 + 0.7 * 0.6, 1 + 0.7 * 0.8, 1);
  manifold m;
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, n, TOL);
  ASSERT_NEAR(m.points[0].depth, 0.1, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3_madd(xa.p, n, 0.45), TOL);

  xb = X(1 + 0.801 * 0.6, 1 + 0.801 * 0.8, 1);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 1);
  ASSERT_NEAR(m.points[0].depth, -0.001, TOL);
  xb = X(1 + 0.803 * 0.6, 1 + 0.803 * 0.8, 1);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 0);
}

static void test_sphere_box(void **state) {
  (void)state;
  shape s = shape_sphere(0.2), b = shape_box(1, 0.5, 0.25);
  xform xb = X(0, 0, 0);
  manifold m;
  /* above the top face */
  xform xs = X(0.3, 0.1, 0.44);
  assert_int_equal(lcp__collide_shapes(&s, &xs, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), TOL); /* sphere → box */
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.3, 0.1, 0.245), TOL);

  /* beyond the edge x = 1, z = 0.25 */
  xs = X(1.1, 0.2, 0.35);
  assert_int_equal(lcp__collide_shapes(&s, &xs, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(-1 / S2, 0, -1 / S2), TOL);
  double dist = 0.1 * S2;
  ASSERT_NEAR(m.points[0].depth, 0.2 - dist, TOL);
  vec3 mid = v3_scale(v3_add(v3(1, 0.2, 0.25), v3_madd(xs.p, m.normal, 0.2)), 0.5);
  ASSERT_VEC_NEAR(m.points[0].position, mid, TOL);

  /* centre inside, nearest face +x at 0.1: leaves through it */
  xs = X(0.9, 0, 0);
  s.radius = 0.1;
  assert_int_equal(lcp__collide_shapes(&s, &xs, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(-1, 0, 0), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.2, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.9, 0, 0), TOL);

  /* the same inside case with the box rotated 90° about z and moved */
  xb = XR(2, 3, 4, v3(0, 0, 1), LCP_PI / 2);
  vec3 c = xf_point(&xb, v3(0.9, 0, 0));
  xs = X(c.x, c.y, c.z);
  assert_int_equal(lcp__collide_shapes(&s, &xs, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, -1, 0), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.2, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, c, TOL);
}

static void test_sphere_capsule(void **state) {
  (void)state;
  shape s = shape_sphere(0.2), c = shape_capsule(0.1, 0.5);
  xform xc = X(0, 0, 0);
  manifold m;
  xform xs = X(0.25, 0, 0.3);
  assert_int_equal(lcp__collide_shapes(&s, &xs, &c, &xc, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(-1, 0, 0), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.05, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.075, 0, 0.3), TOL);

  /* beyond the upper end: against the end cap */
  xs = X(0, 0, 0.75);
  assert_int_equal(lcp__collide_shapes(&s, &xs, &c, &xc, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.05, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0, 0, 0.575), TOL);
}

static void test_capsule_capsule(void **state) {
  (void)state;
  shape a = shape_capsule(0.1, 0.5), b = shape_capsule(0.1, 0.5);
  manifold m;
  /* crossing: A along x, B along y above it */
  xform xa = XR(0, 0, 0, v3(0, 1, 0), LCP_PI / 2);
  xform xb = XR(0.2, 0.1, 0.19, v3(1, 0, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.2, 0, 0.095), TOL);

  /* B at 45° in the plane z = 0.19, its lower end (0.2, 0.1) nearest to A:
   * the closest point of A is that end's projection (0.2, 0, 0), not where
   * the infinite lines cross */
  {
    shape a2 = shape_capsule(0.15, 0.5), b2 = shape_capsule(0.15, 0.5);
    vec3 ub = v3(1 / S2, 1 / S2, 0);
    xform xb2 =
        xf_make(v3_madd(v3(0.2, 0.1, 0.19), ub, 0.5), q_from_axis_angle(v3(-1, 1, 0), LCP_PI / 2));
    ASSERT_VEC_NEAR(m3_col(&xb2.R, 2), ub, TOL);
    assert_int_equal(lcp__collide_shapes(&a2, &xa, &b2, &xb2, MARGIN, &m), 1);
    double d = sqrt(0.1 * 0.1 + 0.19 * 0.19);
    vec3 nd = v3(0, 0.1 / d, 0.19 / d);
    ASSERT_VEC_NEAR(m.normal, nd, TOL);
    ASSERT_NEAR(m.points[0].depth, 0.3 - d, TOL);
    ASSERT_VEC_NEAR(m.points[0].position, v3_madd(v3(0.2, 0, 0), nd, 0.5 * d), TOL);
  }

  /* parallel, half overlapping: 2 points at the ends of the overlap */
  xb = XR(0.6, 0, 0.19, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 2);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 line[2] = {{0.1, 0, 0.095}, {0.5, 0, 0.095}};
  assert_points(&m, line, 2, 0.01);
  assert_distinct_ids(&m);

  /* parallel and apart beyond the margin */
  xb = XR(0.6, 0, 0.203, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 0);
}

/* ---- box–capsule ---- */

static void test_box_capsule(void **state) {
  (void)state;
  shape b = shape_box(1, 1, 0.5), c = shape_capsule(0.1, 0.5);
  xform xb = X(0, 0, 0);
  manifold m;
  /* lying on the top face along x: both ends */
  xform xc = XR(0.2, 0.3, 0.59, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 2);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 on_face[2] = {{-0.3, 0.3, 0.495}, {0.7, 0.3, 0.495}};
  assert_points(&m, on_face, 2, 0.01);
  assert_distinct_ids(&m);

  /* hanging over the +x edge: the segment is clipped at x = 1 */
  xc = XR(0.8, 0.3, 0.59, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 2);
  const vec3 clipped[2] = {{0.3, 0.3, 0.495}, {1.0, 0.3, 0.495}};
  assert_points(&m, clipped, 2, 0.01);

  xc = XR(-0.8, 0.3, 0.59, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 2);
  const vec3 clipped_neg[2] = {{-1.0, 0.3, 0.495}, {-0.3, 0.3, 0.495}};
  assert_points(&m, clipped_neg, 2, 0.01);

  /* across the edge x = 1, z = 0.5 at 45°, its middle 0.05 from the edge:
   * the closest point is inside the segment and the normal diagonal */
  {
    vec3 nd = v3(1 / S2, 0, 1 / S2);
    vec3 ctr = v3_add(v3(1, 0.4, 0.5), v3_scale(nd, 0.05));
    xc = xf_make(ctr, q_from_axis_angle(v3(0, 1, 0), 3 * LCP_PI / 4));
    assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 1);
    ASSERT_VEC_NEAR(m.normal, nd, TOL);
    ASSERT_NEAR(m.points[0].depth, 0.05, TOL);
    /* the capsule surface is 0.05 inside the edge, so midway is 0.025 inside */
    ASSERT_VEC_NEAR(m.points[0].position, v3_add(v3(1, 0.4, 0.5), v3_scale(nd, -0.025)), TOL);
  }

  /* tilted 0.1 rad: only the lower end is within the margin */
  double a = 0.1;
  xc = xf_make(v3(0, 0, 0), q_from_axis_angle(v3(0, 1, 0), LCP_PI / 2 - a));
  vec3 u = m3_col(&xc.R, 2); /* (cos a, 0, sin a): the -u end is the lower */
  vec3 low = v3(-0.2, 0.1, 0.59);
  vec3 ctr = v3_madd(low, u, 0.5);
  xc.p = ctr;
  assert_true(u.z > 0.0);
  assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(low.x, low.y, 0.495), TOL);

  /* along y, beyond the edge x = 1, z = 0.5: one point, diagonal normal */
  xc = XR(1.05, 0.2, 0.55, v3(1, 0, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(1 / S2, 0, 1 / S2), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.1 - 0.05 * S2, TOL);
  double off = 0.5 * (0.05 * S2 - 0.1) / S2; /* half the gap, along the normal */
  ASSERT_NEAR(m.points[0].position.x, 1.0 + off, TOL);
  ASSERT_NEAR(m.points[0].position.z, 0.5 + off, TOL);

  /* swapped order flips the normal, keeps the points */
  manifold m2;
  xc = XR(0.2, 0.3, 0.59, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&c, &xc, &b, &xb, MARGIN, &m2), 2);
  ASSERT_VEC_NEAR(m2.normal, v3(0, 0, -1), TOL);
  assert_points(&m2, on_face, 2, 0.01);

  /* beyond the margin */
  xc = XR(0.2, 0.3, 0.603, v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&b, &xb, &c, &xc, MARGIN, &m), 0);
}

/* ---- box–box ---- */

static void test_box_box_face(void **state) {
  (void)state;
  manifold m;
  /* equal cubes, face to face */
  shape a = shape_box(0.5, 0.5, 0.5), b = shape_box(0.5, 0.5, 0.5);
  xform xa = X(0, 0, 0), xb = X(0, 0, 0.99);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 cube[4] = {
      {0.5, 0.5, 0.495}, {-0.5, 0.5, 0.495}, {0.5, -0.5, 0.495}, {-0.5, -0.5, 0.495}};
  assert_points(&m, cube, 4, 0.01);
  assert_distinct_ids(&m);

  /* a small box on a large one, off centre: its 4 bottom corners */
  shape big = shape_box(1, 1, 0.5), small = shape_box(0.4, 0.3, 0.2);
  xform xbig = X(0, 0, 0), xsmall = X(0.1, 0.2, 0.69);
  assert_int_equal(lcp__collide_shapes(&big, &xbig, &small, &xsmall, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  const vec3 corners[4] = {
      {0.5, 0.5, 0.495}, {-0.3, 0.5, 0.495}, {0.5, -0.1, 0.495}, {-0.3, -0.1, 0.495}};
  assert_points(&m, corners, 4, 0.01);

  /* and upside down (the small box below the large one, large box as A) */
  xsmall = X(0.1, 0.2, -0.69);
  assert_int_equal(lcp__collide_shapes(&big, &xbig, &small, &xsmall, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), TOL);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m.points[i].depth, 0.01, TOL);
    ASSERT_NEAR(m.points[i].position.z, -0.495, TOL);
  }

  /* speculative within the margin, nothing beyond */
  xb = X(0, 0, 1.001);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m.points[i].depth, -0.001, TOL);
    ASSERT_NEAR(m.points[i].position.z, 0.5005, TOL);
  }
  xb = X(0, 0, 1.003);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 0);
  /* apart sideways, beyond the margin along x */
  xb = X(1.003, 0, 0.5);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 0);

  /* side contact along x, through a rotated pair: the normal follows A's frame */
  xa = XR(1, 2, 3, v3(0, 0, 1), 0.3);
  vec3 ax = m3_col(&xa.R, 0);
  vec3 pb = v3_madd(xa.p, ax, 0.98);
  xb = xf_make(pb, xa.q);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, ax, TOL);
  for (int i = 0; i < 4; ++i)
    ASSERT_NEAR(m.points[i].depth, 0.02, TOL);
}

static void test_box_box_rotated_45(void **state) {
  (void)state;
  shape a = shape_box(0.5, 0.5, 0.5), b = shape_box(0.5, 0.5, 0.5);
  xform xa = X(0, 0, 0), xb = XR(0, 0, 0.99, v3(0, 0, 1), LCP_PI / 4);
  /* B's bottom square (half diagonal √2/2) clipped by A's top face: a
   * regular octagon with vertices (±0.5, ±c), (±c, ±0.5), c = √2/2 − 1/2. */
  double c = 0.5 * S2 - 0.5;
  const vec3 oct[8] = {{0.5, c, 0.495}, {0.5, -c, 0.495}, {-0.5, c, 0.495}, {-0.5, -c, 0.495},
                       {c, 0.5, 0.495}, {-c, 0.5, 0.495}, {c, -0.5, 0.495}, {-c, -0.5, 0.495}};
  manifold m;
  for (int swap = 0; swap < 2; ++swap) {
    int32_t n = swap ? lcp__collide_shapes(&b, &xb, &a, &xa, MARGIN, &m)
                     : lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m);
    assert_int_equal(n, 4);
    ASSERT_VEC_NEAR(m.normal, v3(0, 0, swap ? -1 : 1), TOL);
    for (int i = 0; i < 4; ++i) {
      ASSERT_NEAR(m.points[i].depth, 0.01, TOL);
      int hit = 0;
      for (int k = 0; k < 8; ++k) {
        vec3 d = v3_sub(m.points[i].position, oct[k]);
        if (fabs(d.x) <= TOL && fabs(d.y) <= TOL && fabs(d.z) <= TOL)
          ++hit;
      }
      assert_int_equal(hit, 1);
    }
    assert_distinct_ids(&m);
    /* the largest quad in a regular octagon: alternate vertices, 2 R² */
    double r2 = 0.25 + c * c;
    ASSERT_NEAR(manifold_area_z(&m), 2.0 * r2, TOL);
  }
}

static void test_box_box_edge_edge(void **state) {
  (void)state;
  shape a = shape_box(0.5, 0.5, 0.5), b = shape_box(0.5, 0.5, 0.5);
  /* A on an edge along x (45° about x), B on an edge along y (45° about y),
   * B's lower edge 1 cm into A's upper edge */
  double h = 0.5 * S2;
  xform xa = XR(0, 0, 0, v3(1, 0, 0), LCP_PI / 4);
  xform xb = XR(0, 0, 2 * h - 0.01, v3(0, 1, 0), LCP_PI / 4);
  manifold m;
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0, 0, h - 0.005), TOL);
  uint32_t id0 = m.points[0].feature_id;

  manifold m2;
  assert_int_equal(lcp__collide_shapes(&b, &xb, &a, &xa, MARGIN, &m2), 1);
  ASSERT_VEC_NEAR(m2.normal, v3(0, 0, -1), TOL);
  ASSERT_NEAR(m2.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m2.points[0].position, v3(0, 0, h - 0.005), TOL);

  /* shifted along both edges: the point follows the crossing */
  xb.p = v3(0.1, -0.2, 2 * h - 0.01);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 1);
  ASSERT_NEAR(m.points[0].depth, 0.01, TOL);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.1, 0, h - 0.005), TOL);
  assert_int_equal(m.points[0].feature_id, id0); /* the same two edges */

  /* apart by 1 mm: speculative, then 3 mm: nothing */
  xb.p = v3(0.1, -0.2, 2 * h + 0.001);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 1);
  ASSERT_NEAR(m.points[0].depth, -0.001, TOL);
  xb.p = v3(0.1, -0.2, 2 * h + 0.003);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 0);
}

static void test_box_box_feature_ids(void **state) {
  (void)state;
  shape big = shape_box(1, 1, 0.5), small = shape_box(0.4, 0.3, 0.2);
  xform xbig = X(0, 0, 0), xs = X(0.1, 0.2, 0.69);
  manifold m, m2;
  assert_int_equal(lcp__collide_shapes(&big, &xbig, &small, &xs, MARGIN, &m), 4);
  assert_distinct_ids(&m);

  /* 1 µm along x and y: same points, same ids */
  xform xs2 = X(0.1 + 1e-6, 0.2 - 1e-6, 0.69);
  assert_int_equal(lcp__collide_shapes(&big, &xbig, &small, &xs2, MARGIN, &m2), 4);
  for (int i = 0; i < 4; ++i) {
    int k = find_point(&m2, v3_add(m.points[i].position, v3(1e-6, -1e-6, 0)), TOL);
    assert_true(k >= 0);
    assert_int_equal(m2.points[k].feature_id, m.points[i].feature_id);
  }

  /* a slight tilt keeps the same faces touching: same ids */
  xs2 = XR(0.1, 0.2, 0.69, v3(1, 1, 0), 1e-4);
  assert_int_equal(lcp__collide_shapes(&big, &xbig, &small, &xs2, MARGIN, &m2), 4);
  for (int i = 0; i < 4; ++i) {
    bool found = false;
    for (int k = 0; k < 4; ++k)
      found = found || m2.points[k].feature_id == m.points[i].feature_id;
    assert_true(found);
  }

  /* equal aligned cubes: their vertical faces are flush, and a 1 µm slide
   * must not turn corner points into clipped ones (ids and points stay) */
  shape cube = shape_box(0.5, 0.5, 0.5);
  xform xc = X(0, 0, 0.99), xc2 = X(1e-6, -1e-6, 0.99);
  assert_int_equal(lcp__collide_shapes(&cube, &xbig, &cube, &xc, MARGIN, &m), 4);
  assert_int_equal(lcp__collide_shapes(&cube, &xbig, &cube, &xc2, MARGIN, &m2), 4);
  for (int i = 0; i < 4; ++i) {
    int k = find_point(&m2, v3_add(m.points[i].position, v3(1e-6, -1e-6, 0)), TOL);
    assert_true(k >= 0);
    assert_int_equal(m2.points[k].feature_id, m.points[i].feature_id);
  }

  /* turned 90° about x: another face of the small box touches, all ids change */
  xs2 = XR(0.1, 0.2, 0.5 + 0.3 - 0.01, v3(1, 0, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_shapes(&big, &xbig, &small, &xs2, MARGIN, &m2), 4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m2.points[i].depth, 0.01, TOL);
    for (int k = 0; k < 4; ++k)
      assert_int_not_equal(m2.points[k].feature_id, m.points[i].feature_id);
  }
}

/* Stacked equal cubes with the lower one tilted by 10 mrad: B's face axis
 * separates a hair better than A's (by t_z (1 - cos θ)), but the SAT's
 * tolerance keeps A's face as the reference, so the normal is A's tilted z
 * axis, and it stays so under the tilt's sign and a small slide. */
static void test_box_box_face_hysteresis(void **state) {
  (void)state;
  shape a = shape_box(0.5, 0.5, 0.5), b = shape_box(0.5, 0.5, 0.5);
  manifold m;
  for (int k = 0; k < 4; ++k) {
    double th = (k & 1) ? -1e-2 : 1e-2;
    xform xa = XR(0, 0, 0, v3(1, 0, 0), th);
    xform xb = X((k & 2) ? 1e-4 : 0.0, 0, 0.99);
    vec3 na = m3_col(&xa.R, 2);
    assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 4);
    ASSERT_VEC_NEAR(m.normal, na, TOL);
    for (int i = 0; i < 4; ++i) {
      /* each point midway between A's top plane and B's bottom */
      vec3 p = m.points[i].position;
      double h_a = v3_dot(na, p) - 0.5; /* above A's plane by depth/2 */
      ASSERT_NEAR(h_a, -0.5 * m.points[i].depth, TOL);
      assert_true(m.points[i].depth > 0.004 && m.points[i].depth < 0.016);
    }
  }
  /* the upper one tilted instead: A's face wins on its own, normal +z */
  xform xa = X(0, 0, 0), xb = XR(0, 0, 0.99, v3(1, 0, 0), 1e-3);
  assert_int_equal(lcp__collide_shapes(&a, &xa, &b, &xb, MARGIN, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), TOL);
}

/* ---- dispatch ---- */

static void sort_depths(const manifold *m, double *d) {
  for (int i = 0; i < m->point_count; ++i)
    d[i] = m->points[i].depth;
  for (int i = 1; i < m->point_count; ++i)
    for (int j = i; j > 0 && d[j] < d[j - 1]; --j) {
      double t = d[j];
      d[j] = d[j - 1];
      d[j - 1] = t;
    }
}

static void test_swap_symmetry(void **state) {
  (void)state;
  struct {
    shape a, b;
    xform xa, xb;
  } cases[] = {
      {shape_plane(), shape_sphere(0.5), X(0, 0, 0), X(0.1, 0.2, 0.45)},
      {shape_plane(), shape_box(0.5, 0.4, 0.3), X(0, 0, 0), XR(0, 0, 0.3, v3(1, 2, 3), 0.2)},
      {shape_plane(), shape_capsule(0.1, 0.5), X(0, 0, 0), XR(0, 0, 0.12, v3(0, 1, 0), 1.4)},
      {shape_plane(), shape_cylinder(0.3, 0.5), X(0, 0, 0), XR(0, 0, 0.5, v3(1, 0, 0), 0.3)},
      {shape_sphere(0.3), shape_box(0.5, 0.4, 0.3), X(0.6, 0.1, 0.2),
       XR(0, 0, 0, v3(0, 0, 1), 0.3)},
      {shape_sphere(0.3), shape_capsule(0.1, 0.5), X(0.3, 0.1, 0.2), X(0, 0, 0)},
      {shape_capsule(0.2, 0.4), shape_capsule(0.1, 0.5), XR(0, 0, 0, v3(1, 1, 0), 1.0),
       X(0.2, 0.1, 0.1)},
      {shape_box(1, 1, 0.5), shape_capsule(0.1, 0.5), XR(0, 0, 0, v3(0, 0, 1), 0.4),
       XR(0.3, 0, 0.58, v3(0, 1, 0), LCP_PI / 2)},
      {shape_box(0.5, 0.5, 0.5), shape_box(0.3, 0.4, 0.5), X(0, 0, 0),
       XR(0.2, 0.1, 0.95, v3(0, 0, 1), 0.3)},
      {shape_box(0.5, 0.5, 0.5), shape_box(0.3, 0.4, 0.5), X(0, 0, 0),
       XR(0.2, 0.1, 1.0, v3(1, 1, 0), 0.7)},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    manifold ab, ba;
    int32_t n1 =
        lcp__collide_shapes(&cases[c].a, &cases[c].xa, &cases[c].b, &cases[c].xb, MARGIN, &ab);
    int32_t n2 =
        lcp__collide_shapes(&cases[c].b, &cases[c].xb, &cases[c].a, &cases[c].xa, MARGIN, &ba);
    assert_true(n1 > 0);
    assert_int_equal(n1, n2);
    ASSERT_VEC_NEAR(ab.normal, v3_neg(ba.normal), TOL);
    ASSERT_NEAR(v3_len(ab.normal), 1.0, TOL);
    double d1[4], d2[4];
    sort_depths(&ab, d1);
    sort_depths(&ba, d2);
    for (int i = 0; i < n1; ++i)
      ASSERT_NEAR(d1[i], d2[i], TOL);
  }
}

static void test_plane_plane(void **state) {
  (void)state;
  shape p = shape_plane();
  xform x1 = X(0, 0, 0), x2 = X(0, 0, -1);
  manifold m;
  assert_int_equal(lcp__collide_shapes(&p, &x1, &p, &x2, MARGIN, &m), 0);
  assert_int_equal(m.point_count, 0);
  shape bad = {.type = (lcp_shape_type_t)99};
  assert_int_equal(lcp__collide_shapes(&bad, &x1, &p, &x2, MARGIN, &m), 0);
}

/* ---- manifold_reduce ---- */

static void test_manifold_reduce(void **state) {
  (void)state;
  /* a 5×5 grid on [-1, 1]², depth 0.01, and one interior point deeper */
  contact_point cand[25];
  int n = 0;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) {
      cand[n] = (contact_point){v3(-1 + 0.5 * i, -1 + 0.5 * j, 0.3), 0.01, (uint32_t)(100 + n)};
      ++n;
    }
  cand[13].depth = 0.02; /* (0.5, 0) */
  /* zeroed: GCC -O3 cannot tell that the assertion below stops the test
   * when fewer than 4 points were written (no feature id here is 0) */
  contact_point out[MANIFOLD_MAX_POINTS] = {0};
  assert_int_equal(manifold_reduce(cand, n, v3(0, 0, 1), out), 4);
  /* deepest first, then the farthest corner (-1,-1), the triangle's best
   * (-1, 1), and the point adding the most area beyond it (1, -1) */
  assert_int_equal(out[0].feature_id, 113);
  ASSERT_NEAR(out[0].depth, 0.02, TOL);
  assert_int_equal(out[1].feature_id, 100);
  assert_int_equal(out[2].feature_id, 120);
  assert_int_equal(out[3].feature_id, 104);
  ASSERT_VEC_NEAR(out[3].position, v3(1, -1, 0.3), TOL);
  manifold m = {.point_count = 4};
  for (int i = 0; i < 4; ++i)
    m.points[i] = out[i];
  ASSERT_NEAR(manifold_area_z(&m), 2.5, TOL);

  /* a tilted normal: distances and areas are measured in its plane, so a
   * spread along the normal counts for nothing */
  contact_point line[6];
  for (int i = 0; i < 6; ++i)
    line[i] = (contact_point){v3(0, 0, i), 0.01 * (6 - i), (uint32_t)i};
  assert_int_equal(manifold_reduce(line, 6, v3(0, 0, 1), out), 1);
  assert_int_equal(out[0].feature_id, 0);

  /* four or fewer: all kept as they are */
  assert_int_equal(manifold_reduce(cand, 3, v3(0, 0, 1), out), 3);
  for (int i = 0; i < 3; ++i)
    assert_int_equal(out[i].feature_id, cand[i].feature_id);
  assert_int_equal(manifold_reduce(cand, 0, v3(0, 0, 1), out), 0);

  /* collinear candidates: the deepest and the farthest only */
  contact_point col[6];
  for (int i = 0; i < 6; ++i)
    col[i] = (contact_point){v3(0.1 * i, 0, 0), i == 2 ? 0.05 : 0.01, (uint32_t)i};
  assert_int_equal(manifold_reduce(col, 6, v3(0, 0, 1), out), 2);
  assert_int_equal(out[0].feature_id, 2);
  assert_int_equal(out[1].feature_id, 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plane_sphere),
      cmocka_unit_test(test_plane_box),
      cmocka_unit_test(test_plane_capsule),
      cmocka_unit_test(test_plane_cylinder),
      cmocka_unit_test(test_plane_hull),
      cmocka_unit_test(test_sphere_sphere),
      cmocka_unit_test(test_sphere_box),
      cmocka_unit_test(test_sphere_capsule),
      cmocka_unit_test(test_capsule_capsule),
      cmocka_unit_test(test_box_capsule),
      cmocka_unit_test(test_box_box_face),
      cmocka_unit_test(test_box_box_rotated_45),
      cmocka_unit_test(test_box_box_edge_edge),
      cmocka_unit_test(test_box_box_feature_ids),
      cmocka_unit_test(test_box_box_face_hysteresis),
      cmocka_unit_test(test_swap_symmetry),
      cmocka_unit_test(test_plane_plane),
      cmocka_unit_test(test_manifold_reduce),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
