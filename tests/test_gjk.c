/* SPDX-License-Identifier: Apache-2.0 */
/* gjk.c: support mappings, boxes, GJK distance, EPA depth and the clipped
 * manifold of lcp__collide_convex, against closed forms. */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include "collide.h"
#include "gjk.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double SQRT2 = 1.41421356237309504880;
static const double SQRT3 = 1.73205080756887729353;

static xform at(double x, double y, double z) { return xf_make(v3(x, y, z), q_identity()); }
static xform at_rot(vec3 p, vec3 axis, double angle) {
  return xf_make(p, q_from_axis_angle(axis, angle));
}

static void build_box_hull(hull *h, vec3 he) {
  vec3 p[8];
  for (int i = 0; i < 8; ++i)
    p[i] = v3((i & 1) ? he.x : -he.x, (i & 2) ? he.y : -he.y, (i & 4) ? he.z : -he.z);
  assert_int_equal(lcp__hull_build(p, 8, h), LCP_OK);
}

/* |x| + |y| + |z| ≤ s */
static void build_octahedron(hull *h, double s) {
  vec3 p[6] = {v3(s, 0, 0), v3(-s, 0, 0), v3(0, s, 0), v3(0, -s, 0), v3(0, 0, s), v3(0, 0, -s)};
  assert_int_equal(lcp__hull_build(p, 6, h), LCP_OK);
}

/* Regular tetrahedron with vertices (1,1,1), (1,−1,−1), (−1,1,−1), (−1,−1,1),
 * negated when flip. */
static void build_tetra(hull *h, bool flip) {
  vec3 p[4] = {v3(1, 1, 1), v3(1, -1, -1), v3(-1, 1, -1), v3(-1, -1, 1)};
  for (int i = 0; flip && i < 4; ++i)
    p[i] = v3_neg(p[i]);
  assert_int_equal(lcp__hull_build(p, 4, h), LCP_OK);
}

static double gjk_dist(const shape *a, const xform *xa, const shape *b, const xform *xb,
                       gjk_result *r) {
  assert_int_equal(lcp__gjk_distance(a, xa, b, xb, r), LCP_OK);
  return r->distance;
}

/* Witness points must realise the distance and lie on the surfaces, and the
 * call must be symmetric. */
static void check_witnesses(const shape *a, const xform *xa, const shape *b, const xform *xb,
                            const gjk_result *r, double tol) {
  assert_false(r->overlap);
  ASSERT_NEAR(v3_len(v3_sub(r->point_b, r->point_a)), r->distance, tol);
  gjk_result s;
  assert_int_equal(lcp__gjk_distance(b, xb, a, xa, &s), LCP_OK);
  ASSERT_NEAR(s.distance, r->distance, tol);
  /* each witness is a support point along the separating direction */
  vec3 n = v3_scale(v3_sub(r->point_b, r->point_a), 1.0 / r->distance);
  vec3 sa = xf_point(xa, lcp__shape_support_local(a, xf_inv_vector(xa, n)));
  vec3 sb = xf_point(xb, lcp__shape_support_local(b, xf_inv_vector(xb, v3_neg(n))));
  ASSERT_NEAR(v3_dot(sa, n), v3_dot(r->point_a, n), tol);
  ASSERT_NEAR(v3_dot(sb, n), v3_dot(r->point_b, n), tol);
}

/* ---- support and boxes ---- */

static void test_support_closed_forms(void **state) {
  (void)state;
  hull oct;
  build_octahedron(&oct, 0.7);
  shape s[5] = {shape_sphere(0.3), shape_box(0.1, 0.2, 0.3), shape_capsule(0.2, 0.5),
                shape_cylinder(0.4, 0.25), shape_hull(&oct)};
  rng seed = {3};
  for (int k = 0; k < 200; ++k) {
    vec3 d = rng_vec3(&seed, -2, 2);
    double l = v3_len(d), rho = sqrt(d.x * d.x + d.y * d.y);
    double want[5] = {0.3 * l, 0.1 * fabs(d.x) + 0.2 * fabs(d.y) + 0.3 * fabs(d.z),
                      0.5 * fabs(d.z) + 0.2 * l, 0.25 * fabs(d.z) + 0.4 * rho,
                      0.7 * fmax(fabs(d.x), fmax(fabs(d.y), fabs(d.z)))};
    for (int i = 0; i < 5; ++i)
      ASSERT_NEAR(v3_dot(lcp__shape_support_local(&s[i], d), d), want[i], 1e-14);
    /* the support point belongs to the shape */
    vec3 c = lcp__shape_support_local(&s[3], d);
    ASSERT_NEAR(sqrt(c.x * c.x + c.y * c.y), 0.4, 1e-15);
    ASSERT_NEAR(fabs(c.z), 0.25, 0.0);
  }
  lcp__hull_free(&oct);
}

static void test_aabb(void **state) {
  (void)state;
  hull tet;
  build_tetra(&tet, false);
  shape s[5] = {shape_sphere(0.3), shape_box(0.1, 0.2, 0.3), shape_capsule(0.2, 0.5),
                shape_cylinder(0.4, 0.25), shape_hull(&tet)};
  xform x = at_rot(v3(1, -2, 3), v3(0.3, 1, -0.2), 0.7);
  for (int i = 0; i < 5; ++i) {
    vec3 lo, hi;
    lcp__shape_aabb(&s[i], &x, &lo, &hi);
    /* the exact box is given by the supports along ±world axes */
    for (int a = 0; a < 3; ++a) {
      vec3 e = v3_zero();
      v3_set(&e, a, 1.0);
      vec3 ph = xf_point(&x, lcp__shape_support_local(&s[i], xf_inv_vector(&x, e)));
      vec3 pl = xf_point(&x, lcp__shape_support_local(&s[i], xf_inv_vector(&x, v3_neg(e))));
      ASSERT_NEAR(v3_get(hi, a), v3_get(ph, a), 1e-14);
      ASSERT_NEAR(v3_get(lo, a), v3_get(pl, a), 1e-14);
    }
  }
  shape plane = shape_plane();
  vec3 lo, hi;
  lcp__shape_aabb(&plane, &x, &lo, &hi);
  assert_true(isinf(lo.x) && lo.x < 0 && isinf(hi.z) && hi.z > 0);
  lcp__hull_free(&tet);
}

/* ---- GJK distance ---- */

static void test_sphere_sphere(void **state) {
  (void)state;
  shape a = shape_sphere(0.5), b = shape_sphere(0.3);
  xform xa = at(0, 0, 0), xb = at(1, 2, 2);
  gjk_result r;
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 2.2, 1e-12);
  check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
  ASSERT_VEC_NEAR(r.point_a, v3(0.5 / 3, 1.0 / 3, 1.0 / 3), 1e-12);
  ASSERT_VEC_NEAR(r.point_b, v3(1 - 0.1, 2 - 0.2, 2 - 0.2), 1e-12);
  /* overlapping */
  xb = at(0.3, 0.4, 0);
  gjk_dist(&a, &xa, &b, &xb, &r);
  assert_true(r.overlap);
  ASSERT_NEAR(r.distance, 0.0, 0.0);
  /* concentric */
  xb = xa;
  gjk_dist(&a, &xa, &b, &xb, &r);
  assert_true(r.overlap);
}

static void test_sphere_box(void **state) {
  (void)state;
  shape a = shape_box(1, 2, 3), b = shape_sphere(0.25);
  xform xa = at_rot(v3(0.5, -1, 2), v3(1, 2, 0.5), 0.9);
  struct {
    vec3 local;
    double dist;
  } cases[] = {{{2.5, 0.5, -1}, 1.5 - 0.25},                 /* face */
               {{2, 3, 4}, SQRT3 - 0.25},                    /* vertex */
               {{2, 3, 0.7}, SQRT2 - 0.25},                  /* edge */
               {{-0.3, -2.1, 1}, 0.1 - 0.25},                /* overlapping through the radius */
               {{-0.2, 0.4, -3.75}, 0.75 - 0.25},            /* face −z */
               {{-1.0 - 0.3, 2.0 + 0.4, -2.9}, 0.5 - 0.25}}; /* edge −x +y: (0.3, 0.4) → 0.5 */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    xform xb = xf_make(xf_point(&xa, cases[i].local), q_identity());
    gjk_result r;
    gjk_dist(&a, &xa, &b, &xb, &r);
    if (cases[i].dist > 0) {
      ASSERT_NEAR(r.distance, cases[i].dist, 1e-12);
      check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
    } else {
      assert_true(r.overlap);
      ASSERT_NEAR(r.distance, 0.0, 0.0);
    }
  }
}

static void test_box_box(void **state) {
  (void)state;
  shape a = shape_box(1, 1, 1), b = shape_box(0.5, 0.5, 0.5);
  gjk_result r;
  /* face–face: B turned about the common vertical, above A's top face */
  xform xa = at(0, 0, 0), xb = at_rot(v3(0.2, -0.1, 2.7), v3(0, 0, 1), 0.5);
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 1.2, 1e-12);
  check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
  /* the same configuration turned as a whole */
  quat q = q_from_axis_angle(v3(1, 1, 0), 0.6);
  xform xa2 = xf_make(q_rotate(q, xa.p), q_mul(q, xa.q));
  xform xb2 = xf_make(q_rotate(q, xb.p), q_mul(q, xb.q));
  ASSERT_NEAR(gjk_dist(&a, &xa2, &b, &xb2, &r), 1.2, 1e-12);
  check_witnesses(&a, &xa2, &b, &xb2, &r, 1e-12);
  /* edge–edge: A turned 45° about x has a top edge along x at z = √2; B turned
   * 45° about y has a bottom edge along y at its centre − √2. The edges
   * cross, so the distance is the height difference. */
  shape c = shape_box(1, 1, 1);
  const double g = 0.37;
  xform ea = at_rot(v3(0, 0, 0), v3(1, 0, 0), LCP_PI / 4);
  xform eb = at_rot(v3(0.3, 0.2, 2 * SQRT2 + g), v3(0, 1, 0), LCP_PI / 4);
  ASSERT_NEAR(gjk_dist(&c, &ea, &c, &eb, &r), g, 1e-12);
  check_witnesses(&c, &ea, &c, &eb, &r, 1e-12);
  ASSERT_VEC_NEAR(r.point_a, v3(0.3, 0, SQRT2), 1e-12);
  ASSERT_VEC_NEAR(r.point_b, v3(0.3, 0, SQRT2 + g), 1e-12);
  /* B's edge turned in the horizontal plane as well: still crossing */
  quat qb = q_mul(q_from_axis_angle(v3(0, 0, 1), 0.4), q_from_axis_angle(v3(0, 1, 0), LCP_PI / 4));
  eb = xf_make(v3(0.1, -0.3, 2 * SQRT2 + g), qb);
  ASSERT_NEAR(gjk_dist(&c, &ea, &c, &eb, &r), g, 1e-12);
  check_witnesses(&c, &ea, &c, &eb, &r, 1e-12);
  /* overlapping */
  xb = at(0.5, 0.5, 1.4);
  gjk_dist(&a, &xa, &b, &xb, &r);
  assert_true(r.overlap);
}

/* Independent segment–segment distance: the interior critical point and the
 * four edges of the parameter square. */
static double clamp01(double t) { return t < 0 ? 0 : (t > 1 ? 1 : t); }
static double point_seg(vec3 p, vec3 a, vec3 b) {
  vec3 d = v3_sub(b, a);
  double t = clamp01(v3_dot(v3_sub(p, a), d) / v3_len2(d));
  return v3_len(v3_sub(p, v3_madd(a, d, t)));
}
static double seg_seg(vec3 p0, vec3 p1, vec3 q0, vec3 q1) {
  double best = fmin(fmin(point_seg(p0, q0, q1), point_seg(p1, q0, q1)),
                     fmin(point_seg(q0, p0, p1), point_seg(q1, p0, p1)));
  vec3 u = v3_sub(p1, p0), v = v3_sub(q1, q0), w = v3_sub(p0, q0);
  double a = v3_dot(u, u), b = v3_dot(u, v), c = v3_dot(v, v), d = v3_dot(u, w), e = v3_dot(v, w);
  double den = a * c - b * b;
  if (den > 1e-14 * a * c) {
    double s = (b * e - c * d) / den, t = (a * e - b * d) / den;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1)
      best = fmin(best, v3_len(v3_sub(v3_madd(p0, u, s), v3_madd(q0, v, t))));
  }
  return best;
}

static void capsule_segment(const shape *s, const xform *x, vec3 *p0, vec3 *p1) {
  *p0 = xf_point(x, v3(0, 0, -s->half_length));
  *p1 = xf_point(x, v3(0, 0, s->half_length));
}

/* A position in [−reach, reach)³, then a turn of 0 to 3 rad about an axis
 * drawn from [−1, 1)³. */
static xform random_axis_angle_pose(rng *r, double reach) {
  vec3 p = rng_vec3(r, -reach, reach);
  vec3 axis = rng_vec3(r, -1, 1);
  double angle = rng_range(r, 0, 3);
  return at_rot(p, axis, angle);
}

static void test_capsule_capsule(void **state) {
  (void)state;
  shape a = shape_capsule(0.2, 1.0), b = shape_capsule(0.3, 0.5);
  gjk_result r;
  /* parallel, overlapping in z */
  xform xa = at(0, 0, 0), xb = at(1, 0, 0.7);
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 0.5, 1e-12);
  check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
  /* parallel, end to end */
  xb = at(0, 0, 2.0);
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 0.5 - 0.5, 1e-12);
  assert_true(r.overlap);
  xb = at(0, 0, 2.6);
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 1.1 - 0.5, 1e-12);
  /* perpendicular skew: A along x, B along y above it */
  xa = at_rot(v3(0, 0, 0), v3(0, 1, 0), LCP_PI / 2);
  xb = at_rot(v3(0.2, 0, 1.5), v3(1, 0, 0), LCP_PI / 2);
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 1.0, 1e-12);
  check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
  /* random skew placements against the independent segment distance */
  rng seed = {17};
  for (int k = 0; k < 200; ++k) {
    xa = random_axis_angle_pose(&seed, 1);
    xb = random_axis_angle_pose(&seed, 3);
    vec3 p0, p1, q0, q1;
    capsule_segment(&a, &xa, &p0, &p1);
    capsule_segment(&b, &xb, &q0, &q1);
    double want = seg_seg(p0, p1, q0, q1) - 0.5;
    gjk_dist(&a, &xa, &b, &xb, &r);
    if (want > 1e-9) {
      ASSERT_NEAR(r.distance, want, 1e-12);
      check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
    } else if (want < -1e-9) {
      assert_true(r.overlap);
    }
  }
}

static void test_sphere_hull(void **state) {
  (void)state;
  hull oct;
  build_octahedron(&oct, 1.0);
  shape a = shape_hull(&oct), b = shape_sphere(0.2);
  xform xa = at_rot(v3(1, 2, -1), v3(0.2, -0.4, 1), 1.1);
  gjk_result r;
  /* off the face x + y + z = 1 along its normal */
  for (double t = 0.5; t < 3; t += 0.37) {
    xform xb = xf_make(xf_point(&xa, v3(t, t, t)), q_identity());
    double want = (3 * t - 1) / SQRT3 - 0.2;
    gjk_dist(&a, &xa, &b, &xb, &r);
    if (want > 0) {
      ASSERT_NEAR(r.distance, want, 1e-12);
      check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
    } else {
      assert_true(r.overlap);
    }
  }
  /* off the vertex (1, 0, 0) */
  xform xb = xf_make(xf_point(&xa, v3(2.5, 0, 0)), q_identity());
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), 1.5 - 0.2, 1e-12);
  check_witnesses(&a, &xa, &b, &xb, &r, 1e-12);
  /* off the edge between (1,0,0) and (0,1,0), whose midpoint is (½, ½, 0) */
  xb = xf_make(xf_point(&xa, v3(1.5, 1.5, 0)), q_identity());
  ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), SQRT2 - 0.2, 1e-12);
  lcp__hull_free(&oct);
}

static void test_hull_hull(void **state) {
  (void)state;
  hull oct, tet, tetf;
  build_octahedron(&oct, 1.0);
  build_tetra(&tet, false);
  build_tetra(&tetf, true);
  shape o = shape_hull(&oct), t = shape_hull(&tet), tf = shape_hull(&tetf);
  gjk_result r;
  /* octahedra vertex to vertex along x; B spun about x keeps its vertex */
  xform xa = at(0, 0, 0), xb = at_rot(v3(3, 0, 0), v3(1, 0, 0), 0.3);
  ASSERT_NEAR(gjk_dist(&o, &xa, &o, &xb, &r), 1.0, 1e-12);
  check_witnesses(&o, &xa, &o, &xb, &r, 1e-12);
  /* octahedra face to face: B at (s, s, s), faces x+y+z = 1 and = 3s − 1 */
  for (double s = 0.8; s < 2.0; s += 0.3) {
    xb = at(s, s, s);
    ASSERT_NEAR(gjk_dist(&o, &xa, &o, &xb, &r), (3 * s - 2) / SQRT3, 1e-12);
    check_witnesses(&o, &xa, &o, &xb, &r, 1e-12);
  }
  /* tetrahedra vertex to face: A's vertex (1,1,1) (coordinate sum 3) under
   * the face x + y + z = −1 + 3s of the same tetrahedron moved to (s, s, s),
   * whose centre lies on the same diagonal */
  for (double s = 1.4; s < 2.5; s += 0.25) {
    xb = at(s, s, s);
    ASSERT_NEAR(gjk_dist(&t, &xa, &t, &xb, &r), (3 * s - 4) / SQRT3, 1e-12);
    check_witnesses(&t, &xa, &t, &xb, &r, 1e-12);
    ASSERT_VEC_NEAR(r.point_a, v3(1, 1, 1), 1e-12);
  }
  /* face to face: A's face x + y + z = −1 over the flipped tetrahedron's face
   * x + y + z = 1 − 3s (the two triangles are turned by 180°, so they overlap
   * in projection) */
  for (double s = 0.7; s < 2.0; s += 0.25) {
    xb = at(-s, -s, -s);
    ASSERT_NEAR(gjk_dist(&t, &xa, &tf, &xb, &r), (3 * s - 2) / SQRT3, 1e-12);
    check_witnesses(&t, &xa, &tf, &xb, &r, 1e-12);
  }
  /* the whole configuration moved rigidly */
  xform m = at_rot(v3(-4, 5, 0.5), v3(1, -2, 3), 2.2);
  xb = at(-1.2, -1.2, -1.2);
  xform ma = xf_mul(&m, &xa), mb = xf_mul(&m, &xb);
  ASSERT_NEAR(gjk_dist(&t, &ma, &tf, &mb, &r), (3 * 1.2 - 2) / SQRT3, 1e-12);
  check_witnesses(&t, &ma, &tf, &mb, &r, 1e-12);
  lcp__hull_free(&oct);
  lcp__hull_free(&tet);
  lcp__hull_free(&tetf);
}

/* The cylinder is the one curved core: GJK converges towards it rather than
 * terminating, so its tolerance is looser. */
static void test_cylinder_sphere(void **state) {
  (void)state;
  shape a = shape_cylinder(0.5, 1.0), b = shape_sphere(0.25);
  xform xa = at_rot(v3(0.3, 0.1, -0.2), v3(1, 1, 1), 0.8);
  struct {
    vec3 local;
    double dist;
  } cases[] = {{{2, 0, 0.3}, 1.25},                  /* side */
               {{0.6 * 1.2, 0.8 * 1.2, -0.5}, 0.45}, /* side, another azimuth */
               {{0.1, 0.2, 2}, 0.75},                /* cap */
               {{1.5, 0, 2}, SQRT2 - 0.25}};         /* rim */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    xform xb = xf_make(xf_point(&xa, cases[i].local), q_identity());
    gjk_result r;
    ASSERT_NEAR(gjk_dist(&a, &xa, &b, &xb, &r), cases[i].dist, 1e-9);
  }
}

static void test_invalid_arguments(void **state) {
  (void)state;
  shape a = shape_sphere(1), p = shape_plane();
  shape h = shape_hull(NULL);
  xform x = xf_identity();
  gjk_result r;
  epa_result e;
  manifold m;
  assert_int_equal(lcp__gjk_distance(&a, &x, &p, &x, &r), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__gjk_distance(&a, &x, &h, &x, &r), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__gjk_distance(&a, &x, &a, &x, NULL), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__epa_penetration(&p, &x, &a, &x, &e), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__collide_convex(&a, &x, &a, NULL, 0.0, &m), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__collide_convex(&a, &x, &a, &x, -1.0, &m), LCP_ERR_INVALID_ARGUMENT);
}

/* ---- EPA ---- */

static void check_epa(const epa_result *e, double depth, vec3 normal, double tol) {
  ASSERT_NEAR(e->depth, depth, tol);
  ASSERT_VEC_NEAR(e->normal, normal, tol);
  /* moving B by depth·normal carries its deepest point onto A's */
  ASSERT_VEC_NEAR(v3_sub(e->point_a, e->point_b), v3_scale(e->normal, e->depth), tol);
}

static void test_epa_boxes(void **state) {
  (void)state;
  shape a = shape_box(1, 1, 1), b = shape_box(0.5, 0.5, 0.5);
  epa_result e;
  /* axis aligned: overlaps 1.3 in x, 1.4 in y, 0.2 in z */
  xform xa = at(0, 0, 0), xb = at(0.2, 0.1, 1.3);
  assert_int_equal(lcp__epa_penetration(&a, &xa, &b, &xb, &e), LCP_OK);
  check_epa(&e, 0.2, v3(0, 0, 1), 1e-9);
  ASSERT_NEAR(e.point_a.z, 1.0, 1e-9);
  ASSERT_NEAR(e.point_b.z, 0.8, 1e-9);
  /* reversed pair: the normal flips */
  assert_int_equal(lcp__epa_penetration(&b, &xb, &a, &xa, &e), LCP_OK);
  check_epa(&e, 0.2, v3(0, 0, -1), 1e-9);
  /* B turned 45° about z, beside A: its vertical edge is 0.1 inside A's +x
   * face; along B's own face normals the overlap is 0.78 */
  xb = at_rot(v3(1 + 0.5 * SQRT2 - 0.1, 0.05, 0.2), v3(0, 0, 1), LCP_PI / 4);
  assert_int_equal(lcp__epa_penetration(&a, &xa, &b, &xb, &e), LCP_OK);
  check_epa(&e, 0.1, v3(1, 0, 0), 1e-9);
  /* both turned together about y by 0.3 rad: same depth, turned normal */
  quat q = q_from_axis_angle(v3(0, 1, 0), 0.3);
  xform ra = xf_make(v3_zero(), q), rb = xf_make(q_rotate(q, xb.p), q_mul(q, xb.q));
  assert_int_equal(lcp__epa_penetration(&a, &ra, &b, &rb, &e), LCP_OK);
  check_epa(&e, 0.1, q_rotate(q, v3(1, 0, 0)), 1e-9);
  /* B turned about x by 0.2 rad on top of A: its lowest edge is at
   * z_B − (0.5 cos 0.2 + 0.5 sin 0.2) */
  double low = 0.5 * cos(0.2) + 0.5 * sin(0.2);
  xb = at_rot(v3(0.1, -0.2, 1 + low - 0.15), v3(1, 0, 0), 0.2);
  assert_int_equal(lcp__epa_penetration(&a, &xa, &b, &xb, &e), LCP_OK);
  check_epa(&e, 0.15, v3(0, 0, 1), 1e-9);
  /* not overlapping */
  xb = at(0, 0, 1.6);
  assert_int_equal(lcp__epa_penetration(&a, &xa, &b, &xb, &e), LCP_ERR_STATE);
}

static void test_epa_sphere_hull(void **state) {
  (void)state;
  hull oct;
  build_octahedron(&oct, 1.0);
  shape h = shape_hull(&oct), s = shape_sphere(0.3);
  xform xh = at_rot(v3(-1, 0.5, 2), v3(2, -1, 0.5), 0.7);
  vec3 n = xf_vector(&xh, v3(1 / SQRT3, 1 / SQRT3, 1 / SQRT3));
  epa_result e;
  /* centre inside the hull, 0.4/√3 below the face x + y + z = 1: EPA proper */
  xform xs = xf_make(xf_point(&xh, v3(0.2, 0.2, 0.2)), q_identity());
  assert_int_equal(lcp__epa_penetration(&h, &xh, &s, &xs, &e), LCP_OK);
  check_epa(&e, 0.4 / SQRT3 + 0.3, n, 1e-9);
  assert_int_equal(lcp__epa_penetration(&s, &xs, &h, &xh, &e), LCP_OK);
  check_epa(&e, 0.4 / SQRT3 + 0.3, v3_neg(n), 1e-9);
  /* centre deep inside, nearest face still x + y + z = 1 */
  xs = xf_make(xf_point(&xh, v3(0.1, 0.05, 0.08)), q_identity());
  assert_int_equal(lcp__epa_penetration(&h, &xh, &s, &xs, &e), LCP_OK);
  check_epa(&e, (1 - 0.23) / SQRT3 + 0.3, n, 1e-9);
  /* centre outside, overlapping through the radius */
  xs = xf_make(xf_point(&xh, v3(0.5, 0.5, 0.5)), q_identity());
  assert_int_equal(lcp__epa_penetration(&h, &xh, &s, &xs, &e), LCP_OK);
  check_epa(&e, 0.3 - 0.5 / SQRT3, n, 1e-12);
  /* apart */
  xs = xf_make(xf_point(&xh, v3(0.6, 0.6, 0.6)), q_identity());
  assert_int_equal(lcp__epa_penetration(&h, &xh, &s, &xs, &e), LCP_ERR_STATE);
  lcp__hull_free(&oct);
}

static void test_epa_rounded(void **state) {
  (void)state;
  /* a capsule whose segment lies inside a box: it leaves upwards */
  shape a = shape_box(1, 1, 1), c = shape_capsule(0.2, 0.5);
  xform xa = at(0, 0, 0), xc = at_rot(v3(0.1, 0.2, 0.9), v3(0, 1, 0), LCP_PI / 2);
  epa_result e;
  assert_int_equal(lcp__epa_penetration(&a, &xa, &c, &xc, &e), LCP_OK);
  check_epa(&e, 0.3, v3(0, 0, 1), 1e-9);
  /* concentric spheres: any direction, depth = sum of radii. EPA's polytope
   * never reaches a ball; the support bound along its best normal does. */
  shape s = shape_sphere(0.5);
  xform xs = at(1, 1, 1);
  assert_int_equal(lcp__epa_penetration(&s, &xs, &s, &xs, &e), LCP_OK);
  ASSERT_NEAR(e.depth, 1.0, 1e-12);
  ASSERT_NEAR(v3_len(e.normal), 1.0, 1e-12);
  /* crossing capsules: cores intersect, the depth is the sum of radii */
  shape k = shape_capsule(0.1, 1.0);
  xform k1 = at_rot(v3(0, 0, 0), v3(0, 1, 0), LCP_PI / 2),
        k2 = at_rot(v3(0, 0, 0), v3(1, 0, 0), LCP_PI / 2);
  assert_int_equal(lcp__epa_penetration(&k, &k1, &k, &k2, &e), LCP_OK);
  ASSERT_NEAR(e.depth, 0.2, 1e-9);
  ASSERT_NEAR(fabs(e.normal.z), 1.0, 1e-9);
}

/* ---- lcp__collide_convex manifolds ---- */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void sorted_ids(const manifold *m, uint32_t *ids) {
  for (int32_t i = 0; i < m->point_count; ++i)
    ids[i] = m->points[i].feature_id;
  qsort(ids, (size_t)m->point_count, sizeof(uint32_t), cmp_u32);
  for (int32_t i = 1; i < m->point_count; ++i)
    assert_true(ids[i] != ids[i - 1]);
}

/* The fixture of the manifold tests: a 4 × 4 × 1 box hull and a unit cube
 * hull, each centred on its own origin. */
typedef struct box_and_cube {
  hull big, cube;
} box_and_cube;

static int box_and_cube_setup(void **state) {
  box_and_cube *f = test_alloc(1, sizeof *f);
  build_box_hull(&f->big, v3(2, 2, 0.5));
  build_box_hull(&f->cube, v3(0.5, 0.5, 0.5));
  *state = f;
  return 0;
}
static int box_and_cube_teardown(void **state) {
  box_and_cube *f = *state;
  lcp__hull_free(&f->big);
  lcp__hull_free(&f->cube);
  free(f);
  return 0;
}
#define BOX_AND_CUBE_TEST(f)                                                                       \
  cmocka_unit_test_setup_teardown(f, box_and_cube_setup, box_and_cube_teardown)

/* A cube hull resting on a larger box hull, sunk by pen. */
static void test_cube_on_box(void **state) {
  const box_and_cube *f = *state;
  shape a = shape_hull(&f->big), b = shape_hull(&f->cube);
  xform xa = at(0, 0, 0);
  const double pen = 0.01, yaw = 0.35;
  xform xb = at_rot(v3(0.3, -0.2, 1.0 - pen), v3(0, 0, 1), yaw);
  manifold m;
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.002, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), 1e-12);
  bool corner_seen[4] = {false, false, false, false};
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
    ASSERT_NEAR(m.points[i].position.z, 0.5 - 0.5 * pen, 1e-9);
    /* at the cube's bottom corners */
    vec3 l = xf_inv_point(&xb, m.points[i].position);
    ASSERT_NEAR(fabs(l.x), 0.5, 1e-9);
    ASSERT_NEAR(fabs(l.y), 0.5, 1e-9);
    corner_seen[(l.x > 0) + 2 * (l.y > 0)] = true;
  }
  assert_true(corner_seen[0] && corner_seen[1] && corner_seen[2] && corner_seen[3]);
  uint32_t ids[4], ids2[4];
  sorted_ids(&m, ids);

  /* a tiny motion keeps the same features in touch, hence the same ids */
  xform xb2 = at_rot(v3(0.3 + 1e-6, -0.2 - 2e-6, 1.0 - pen + 1e-7), v3(0, 0, 1), yaw + 1e-5);
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb2, 0.002, &m), 4);
  sorted_ids(&m, ids2);
  assert_memory_equal(ids, ids2, sizeof ids);

  /* the reversed pair: normal from A (the cube) to B (the box) is −z */
  assert_int_equal(lcp__collide_convex(&b, &xb, &a, &xa, 0.002, &m), 4);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), 1e-12);
  for (int i = 0; i < 4; ++i)
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);

  /* speculative: a gap smaller than the margin gives negative depths */
  xb = at_rot(v3(0.3, -0.2, 1.0 + 0.001), v3(0, 0, 1), yaw);
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.002, &m), 4);
  for (int i = 0; i < 4; ++i)
    ASSERT_NEAR(m.points[i].depth, -0.001, 1e-9);
  /* beyond the margin: nothing */
  xb = at_rot(v3(0.3, -0.2, 1.0 + 0.003), v3(0, 0, 1), yaw);
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.002, &m), 0);
}

/* The cube hanging over the box's edge: clipped points on the edge keep their
 * ids under a tiny motion too. */
static void test_cube_over_edge(void **state) {
  const box_and_cube *f = *state;
  shape a = shape_hull(&f->big), b = shape_hull(&f->cube);
  xform xa = at(0, 0, 0);
  const double pen = 0.004;
  xform xb = at_rot(v3(1.8, 0.4, 1.0 - pen), v3(0, 0, 1), 0.2);
  manifold m;
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.002, &m), 4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
    assert_true(m.points[i].position.x <= 2.0 + 1e-12);
  }
  int on_edge = 0;
  for (int i = 0; i < 4; ++i)
    on_edge += fabs(m.points[i].position.x - 2.0) < 1e-9;
  assert_int_equal(on_edge, 2);
  uint32_t ids[4], ids2[4];
  sorted_ids(&m, ids);
  xform xb2 = at_rot(v3(1.8 - 1e-6, 0.4 + 1e-6, 1.0 - pen), v3(0, 0, 1), 0.2 - 1e-5);
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb2, 0.002, &m), 4);
  sorted_ids(&m, ids2);
  assert_memory_equal(ids, ids2, sizeof ids);
}

static void test_cylinder_on_box(void **state) {
  (void)state;
  shape a = shape_box(2, 2, 0.5), c = shape_cylinder(0.3, 0.4);
  xform xa = at(0, 0, 0);
  const double pen = 0.02;
  xform xc = at_rot(v3(0.5, 0.2, 0.5 + 0.4 - pen), v3(0, 0, 1), 0.3);
  manifold m;
  int32_t n = lcp__collide_convex(&a, &xa, &c, &xc, 0.002, &m);
  assert_true(n >= 3);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), 1e-12);
  for (int i = 0; i < n; ++i) {
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
    vec3 l = xf_inv_point(&xc, m.points[i].position);
    ASSERT_NEAR(sqrt(l.x * l.x + l.y * l.y), 0.3, 1e-9); /* on the rim */
  }
  /* upside down (cylinder as A, box above it as B) */
  xform xa2 = at(0.5, 0.2, 0.5 + 0.8 + 0.5 - 2 * pen); /* box bottom pen below the top cap */
  n = lcp__collide_convex(&c, &xc, &a, &xa2, 0.002, &m);
  assert_true(n >= 3);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), 1e-12);
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
  /* lying on its side: a line contact, two points */
  xform xl = at_rot(v3(0.1, 0.1, 0.5 + 0.3 - pen), v3(1, 0, 0), LCP_PI / 2);
  n = lcp__collide_convex(&a, &xa, &c, &xl, 0.002, &m);
  assert_int_equal(n, 2);
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
  ASSERT_NEAR(fabs(m.points[0].position.y - m.points[1].position.y), 0.8, 1e-9);
}

/* Convention: the normal points from A to B whichever is on top. */
static void test_normal_direction(void **state) {
  (void)state;
  hull big;
  build_box_hull(&big, v3(1, 1, 1));
  shape s = shape_sphere(0.3), h = shape_hull(&big);
  xform xs = at(0.2, 0.1, 1.2), xh = at(0, 0, 0);
  manifold m;
  assert_int_equal(lcp__collide_convex(&s, &xs, &h, &xh, 0.0, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), 1e-12);
  ASSERT_NEAR(m.points[0].depth, 0.1, 1e-12);
  ASSERT_VEC_NEAR(m.points[0].position, v3(0.2, 0.1, 0.95), 1e-12);
  assert_int_equal(lcp__collide_convex(&h, &xh, &s, &xs, 0.0, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), 1e-12);
  ASSERT_NEAR(m.points[0].depth, 0.1, 1e-12);
  /* deep: the sphere's centre inside the hull, nearest face +x */
  xs = at(0.8, 0.1, 0.2);
  assert_int_equal(lcp__collide_convex(&h, &xh, &s, &xs, 0.0, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(1, 0, 0), 1e-9);
  ASSERT_NEAR(m.points[0].depth, 0.5, 1e-9);
  lcp__hull_free(&big);
}

/* A cube turned corner-down touches with one vertex; with an edge down it
 * touches along two points. */
static void test_vertex_and_edge_contacts(void **state) {
  const box_and_cube *f = *state;
  shape a = shape_hull(&f->big), b = shape_hull(&f->cube);
  xform xa = at(0, 0, 0);
  quat q = q_mul(q_from_axis_angle(v3(1, 0, 0), 0.6), q_from_axis_angle(v3(0, 1, 0), 0.5));
  mat3 R = q_to_mat3(q);
  double low = INFINITY;
  for (int i = 0; i < 8; ++i) {
    vec3 c = m3_mulv(&R, v3((i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, (i & 4) ? 0.5 : -0.5));
    low = fmin(low, c.z);
  }
  const double pen = 0.003;
  xform xb = xf_make(v3(0.1, 0.2, 0.5 - low - pen), q);
  manifold m;
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.001, &m), 1);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), 1e-9);
  ASSERT_NEAR(m.points[0].depth, pen, 1e-9);
  ASSERT_NEAR(m.points[0].position.z, 0.5 - 0.5 * pen, 1e-9);
  /* edge down: turned 45° about x */
  xb = at_rot(v3(0.1, 0.2, 0.5 + 0.5 * SQRT2 - pen), v3(1, 0, 0), LCP_PI / 4);
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.001, &m), 2);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, 1), 1e-9);
  for (int i = 0; i < 2; ++i) {
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
    ASSERT_NEAR(fabs(m.points[i].position.x - 0.1), 0.5, 1e-9);
  }
  /* a capsule lying on the box: two points at its ends */
  shape c = shape_capsule(0.1, 0.6);
  xform xc = at_rot(v3(0.2, 0.3, 0.5 + 0.1 - pen), v3(0, 1, 0), LCP_PI / 2);
  assert_int_equal(lcp__collide_convex(&a, &xa, &c, &xc, 0.001, &m), 2);
  for (int i = 0; i < 2; ++i) {
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
    ASSERT_NEAR(fabs(m.points[i].position.x - 0.2), 0.6, 1e-9);
  }
}

/* Two parallel capsules side by side: the fallback gives their common stretch. */
static void test_parallel_capsules(void **state) {
  (void)state;
  shape c = shape_capsule(0.1, 0.5);
  xform x1 = at(0, 0, 0), x2 = at(0.19, 0, 0.3);
  manifold m;
  assert_int_equal(lcp__collide_convex(&c, &x1, &c, &x2, 0.0, &m), 2);
  ASSERT_VEC_NEAR(m.normal, v3(1, 0, 0), 1e-12);
  double zs[2] = {m.points[0].position.z, m.points[1].position.z};
  ASSERT_NEAR(fmin(zs[0], zs[1]), -0.2, 1e-12);
  ASSERT_NEAR(fmax(zs[0], zs[1]), 0.5, 1e-12);
  for (int i = 0; i < 2; ++i)
    ASSERT_NEAR(m.points[i].depth, 0.01, 1e-12);
}

/* A cube tilted by 2° (within the face angle) resting on a box with the cube
 * as A: the box's face is the better aligned one and must be the reference,
 * so the normal is exactly the box's face normal and the contact is the
 * cube's lowest edge (the other edge is 35 mm up, beyond the margin). */
static void test_reference_is_the_better_aligned_face(void **state) {
  const box_and_cube *f = *state;
  shape a = shape_hull(&f->cube), b = shape_hull(&f->big);
  const double tilt = 2.0 * LCP_PI / 180.0, pen = 0.002;
  double low = 0.5 * cos(tilt) + 0.5 * sin(tilt);
  xform xa = at_rot(v3(0.2, 0.1, 0.5 + low - pen), v3(0, 1, 0), tilt), xb = at(0, 0, 0);
  manifold m;
  assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.005, &m), 2);
  ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), 1e-12);
  for (int i = 0; i < 2; ++i) {
    ASSERT_NEAR(m.points[i].depth, pen, 1e-9);
    ASSERT_NEAR(m.points[i].position.z, 0.5 - 0.5 * pen, 1e-9);
  }
}

/* With the small cube as the reference (A) and the big box's face clipped to
 * it, the contacts are the cube's corners: their ids name the cube's sides
 * that meet there, whatever edges of the big face were cut on the way. */
static void test_reference_corner_ids(void **state) {
  const box_and_cube *f = *state;
  shape a = shape_hull(&f->cube), b = shape_hull(&f->big);
  xform xb = at(0, 0, 0);
  uint32_t first[4], ids[4];
  const double yaws[4] = {0.35, 1.2, -0.7, 2.9};
  for (int k = 0; k < 4; ++k) {
    xform xa = at_rot(v3(0.3 * k - 0.4, 0.2, 1.0 - 0.01), v3(0, 0, 1), yaws[k]);
    manifold m;
    assert_int_equal(lcp__collide_convex(&a, &xa, &b, &xb, 0.002, &m), 4);
    ASSERT_VEC_NEAR(m.normal, v3(0, 0, -1), 1e-12);
    for (int i = 0; i < 4; ++i) {
      ASSERT_NEAR(m.points[i].depth, 0.01, 1e-9);
      vec3 l = xf_inv_point(&xa, m.points[i].position);
      ASSERT_NEAR(fabs(l.x), 0.5, 1e-9);
      ASSERT_NEAR(fabs(l.y), 0.5, 1e-9);
    }
    sorted_ids(&m, k == 0 ? first : ids);
    if (k > 0)
      assert_memory_equal(first, ids, sizeof ids);
  }
}

/* ---- randomised certificates ---- */

/* A random hull of 4–24 points in a box of half size s. */
static void random_hull(hull *h, rng *seed, double s) {
  vec3 p[24];
  int n;
  do {
    n = 4 + rng_int(seed, 21);
    for (int i = 0; i < n; ++i)
      p[i] = rng_vec3(seed, -s, s);
  } while (lcp__hull_build(p, n, h) != LCP_OK);
}

/* Whether the local point q belongs to the shape, within tol. */
static bool inside(const shape *s, vec3 q, double tol) {
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
    return v3_len(q) <= s->radius + tol;
  case LCP_SHAPE_BOX:
    return fabs(q.x) <= s->half_extents.x + tol && fabs(q.y) <= s->half_extents.y + tol &&
           fabs(q.z) <= s->half_extents.z + tol;
  case LCP_SHAPE_CAPSULE: {
    double z = fmax(-s->half_length, fmin(s->half_length, q.z));
    return v3_len(v3_sub(q, v3(0, 0, z))) <= s->radius + tol;
  }
  case LCP_SHAPE_CYLINDER:
    return fabs(q.z) <= s->half_length + tol && sqrt(q.x * q.x + q.y * q.y) <= s->radius + tol;
  case LCP_SHAPE_HULL:
    for (int32_t f = 0; f < s->hull->face_count; ++f)
      if (v3_dot(s->hull->faces[f].normal, q) > s->hull->faces[f].offset + tol)
        return false;
    return true;
  default:
    return false;
  }
}

/* max over the shape of dot(x, d), world */
static double support_value(const shape *s, const xform *x, vec3 d) {
  return v3_dot(xf_point(x, lcp__shape_support_local(s, xf_inv_vector(x, d))), d);
}

/* A distance is exact when the witnesses are in the shapes, realise it, and
 * the slab between the planes through them perpendicular to their
 * difference holds neither shape. */
static void certify_distance(const shape *a, const xform *xa, const shape *b, const xform *xb,
                             const gjk_result *r, double tol) {
  assert_true(inside(a, xf_inv_point(xa, r->point_a), tol));
  assert_true(inside(b, xf_inv_point(xb, r->point_b), tol));
  vec3 d = v3_sub(r->point_b, r->point_a);
  ASSERT_NEAR(v3_len(d), r->distance, tol);
  vec3 n = v3_scale(d, 1.0 / v3_len(d));
  assert_true(support_value(a, xa, n) <= v3_dot(n, r->point_a) + tol);
  assert_true(-support_value(b, xb, v3_neg(n)) >= v3_dot(n, r->point_b) - tol);
}

/* Penetration depth of two polytopes by the separating axis theorem: the
 * smallest overlap over face normals and edge–edge cross products. */
static double sat_depth(const hull *ha, const xform *xa, const hull *hb, const xform *xb) {
  shape a = shape_hull(ha), b = shape_hull(hb);
  double best = INFINITY;
  size_t cap = (size_t)(ha->face_count + hb->face_count + ha->edge_count * hb->edge_count);
  vec3 *axes = malloc(sizeof(vec3) * cap);
  int na = 0;
  for (int32_t f = 0; f < ha->face_count; ++f)
    axes[na++] = xf_vector(xa, ha->faces[f].normal);
  for (int32_t f = 0; f < hb->face_count; ++f)
    axes[na++] = xf_vector(xb, hb->faces[f].normal);
  for (int32_t i = 0; i < ha->edge_count; ++i)
    for (int32_t j = 0; j < hb->edge_count; ++j) {
      vec3 ea = xf_vector(xa, v3_sub(ha->vertices[ha->edges[i].b], ha->vertices[ha->edges[i].a]));
      vec3 eb = xf_vector(xb, v3_sub(hb->vertices[hb->edges[j].b], hb->vertices[hb->edges[j].a]));
      vec3 c;
      if (v3_normalize(v3_cross(ea, eb), &c, 1e-9))
        axes[na++] = c;
    }
  for (int k = 0; k < na; ++k)
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      vec3 u = v3_scale(axes[k], sgn);
      best = fmin(best, support_value(&a, xa, u) + support_value(&b, xb, v3_neg(u)));
    }
  free(axes);
  return best;
}

static void test_random_hull_pairs(void **state) {
  (void)state;
  rng seed = {2024};
  int apart = 0, overlapping = 0;
  for (int trial = 0; trial < 300; ++trial) {
    hull ha, hb;
    random_hull(&ha, &seed, 1.0);
    random_hull(&hb, &seed, 0.7);
    shape a = shape_hull(&ha), b = shape_hull(&hb);
    double xa_x = rng_range(&seed, -0.5, 0.5);
    double xa_y = rng_range(&seed, -0.5, 0.5);
    xform xa = xf_make(v3(xa_x, xa_y, 0), rng_quat(&seed));
    xform xb = rng_pose(&seed, -1.5, 1.5); /* about 2 in 5 overlap A */
    gjk_result r;
    gjk_dist(&a, &xa, &b, &xb, &r);
    epa_result e;
    int rc = lcp__epa_penetration(&a, &xa, &b, &xb, &e);
    if (!r.overlap) {
      ++apart;
      certify_distance(&a, &xa, &b, &xb, &r, 1e-10);
      assert_int_equal(rc, LCP_ERR_STATE);
    } else {
      ++overlapping;
      assert_int_equal(rc, LCP_OK);
      double want = sat_depth(&ha, &xa, &hb, &xb);
      ASSERT_NEAR(e.depth, want, 1e-9);
      /* moving B by the depth along the normal separates them exactly */
      ASSERT_NEAR(support_value(&a, &xa, e.normal) + support_value(&b, &xb, v3_neg(e.normal)),
                  e.depth, 1e-9);
      /* the manifold agrees: its deepest point is no deeper than the overlap
       * along its normal, and every point is within the shapes' overlap */
      manifold m;
      int32_t n = lcp__collide_convex(&a, &xa, &b, &xb, 0.01, &m);
      assert_true(n >= 1 && n <= 4);
      ASSERT_NEAR(v3_len(m.normal), 1.0, 1e-12);
      double overlap = support_value(&a, &xa, m.normal) + support_value(&b, &xb, v3_neg(m.normal));
      for (int i = 0; i < n; ++i) {
        assert_true(m.points[i].depth > -0.01);
        assert_true(m.points[i].depth <= overlap + 1e-9);
      }
    }
    lcp__hull_free(&ha);
    lcp__hull_free(&hb);
  }
  /* both branches were exercised, each in at least a third of the trials */
  assert_true(apart > 100 && overlapping > 100);
}

/* Every pair of shape types at random poses: GJK's answer must carry its
 * certificate. The cylinder is curved, so GJK only converges towards it. */
static void test_random_mixed_pairs(void **state) {
  (void)state;
  hull h;
  rng seed = {77};
  random_hull(&h, &seed, 0.6);
  shape s[5] = {shape_sphere(0.3), shape_box(0.4, 0.2, 0.3), shape_capsule(0.15, 0.4),
                shape_cylinder(0.3, 0.25), shape_hull(&h)};
  for (int trial = 0; trial < 400; ++trial) {
    int i = rng_int(&seed, 5);
    int j = rng_int(&seed, 5);
    xform xa = xf_make(v3_zero(), rng_quat(&seed));
    xform xb = rng_pose(&seed, -1.5, 1.5);
    gjk_result r;
    gjk_dist(&s[i], &xa, &s[j], &xb, &r);
    bool curved = s[i].type == LCP_SHAPE_CYLINDER || s[j].type == LCP_SHAPE_CYLINDER;
    if (!r.overlap && r.distance > 1e-6)
      certify_distance(&s[i], &xa, &s[j], &xb, &r, curved ? 1e-8 : 1e-10);
    manifold m;
    int32_t n = lcp__collide_convex(&s[i], &xa, &s[j], &xb, 0.05, &m);
    assert_true(n >= 0 && n <= 4);
    if (!r.overlap && r.distance > 0.05 + 1e-9)
      assert_int_equal(n, 0);
    if (r.overlap)
      assert_true(n >= 1);
    for (int k = 0; k < n; ++k)
      assert_true(m.points[k].depth > -0.05 && isfinite(m.points[k].position.x));
  }
  lcp__hull_free(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_support_closed_forms),
      cmocka_unit_test(test_aabb),
      cmocka_unit_test(test_sphere_sphere),
      cmocka_unit_test(test_sphere_box),
      cmocka_unit_test(test_box_box),
      cmocka_unit_test(test_capsule_capsule),
      cmocka_unit_test(test_sphere_hull),
      cmocka_unit_test(test_hull_hull),
      cmocka_unit_test(test_cylinder_sphere),
      cmocka_unit_test(test_invalid_arguments),
      cmocka_unit_test(test_epa_boxes),
      cmocka_unit_test(test_epa_sphere_hull),
      cmocka_unit_test(test_epa_rounded),
      BOX_AND_CUBE_TEST(test_cube_on_box),
      BOX_AND_CUBE_TEST(test_cube_over_edge),
      cmocka_unit_test(test_cylinder_on_box),
      cmocka_unit_test(test_normal_direction),
      BOX_AND_CUBE_TEST(test_vertex_and_edge_contacts),
      cmocka_unit_test(test_parallel_capsules),
      BOX_AND_CUBE_TEST(test_reference_is_the_better_aligned_face),
      BOX_AND_CUBE_TEST(test_reference_corner_ids),
      cmocka_unit_test(test_random_hull_pairs),
      cmocka_unit_test(test_random_mixed_pairs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
