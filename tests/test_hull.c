/* SPDX-License-Identifier: Apache-2.0 */
/* lcp__hull_build: topology, geometry and mass properties of convex hulls. */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include "hull.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic Fisher–Yates shuffle, so coplanar points are met in any order. */
static void shuffle(vec3 *p, int32_t n, uint64_t seed) {
  rng r = {seed};
  for (int32_t i = n - 1; i > 0; --i) {
    int32_t j = rng_int(&r, i + 1);
    vec3 t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

/* Structural checks every hull must pass; tol is the geometric tolerance. */
static void check_hull(const hull *h, const vec3 *pts, int32_t n, double tol) {
  assert_true(h->vertex_count >= 4);
  assert_true(h->face_count >= 4);
  assert_int_equal(h->vertex_count - h->edge_count + h->face_count, 2);
  assert_true(h->volume > 0.0);
  /* every vertex is an input point */
  for (int32_t v = 0; v < h->vertex_count; ++v) {
    bool found = false;
    for (int32_t i = 0; i < n && !found; ++i)
      found = memcmp(&h->vertices[v], &pts[i], sizeof(vec3)) == 0;
    assert_true(found);
  }
  int32_t total = 0;
  int32_t *uses = calloc((size_t)h->vertex_count, sizeof(int32_t));
  for (int32_t f = 0; f < h->face_count; ++f) {
    const hull_face *F = &h->faces[f];
    assert_true(F->vertex_count >= 3);
    ASSERT_NEAR(v3_len(F->normal), 1.0, 1e-12);
    total += F->vertex_count;
    const int32_t *l = h->face_vertices + F->first_index;
    vec3 newell = v3_zero();
    for (int32_t k = 0; k < F->vertex_count; ++k) {
      vec3 a = h->vertices[l[k]], b = h->vertices[l[(k + 1) % F->vertex_count]];
      ASSERT_NEAR(v3_dot(F->normal, a), F->offset, tol);
      newell = v3_add(newell, v3_cross(a, b));
      uses[l[k]]++;
      /* strictly convex corner, counter-clockwise about the outward normal */
      vec3 c = h->vertices[l[(k + 2) % F->vertex_count]];
      double turn = v3_dot(v3_cross(v3_sub(b, a), v3_sub(c, b)), F->normal);
      assert_true(turn > 0.0);
    }
    assert_true(v3_dot(newell, F->normal) > 0.0);
    /* a supporting plane of the whole input */
    for (int32_t i = 0; i < n; ++i)
      assert_true(v3_dot(F->normal, pts[i]) - F->offset <= tol);
  }
  for (int32_t v = 0; v < h->vertex_count; ++v)
    assert_true(uses[v] >= 3); /* a true corner of the solid */
  free(uses);
  assert_int_equal(total, 2 * h->edge_count);
  for (int32_t e = 0; e < h->edge_count; ++e) {
    const hull_edge *E = &h->edges[e];
    assert_true(E->a < E->b);
    assert_true(E->face_a != E->face_b);
    for (int s = 0; s < 2; ++s) {
      const hull_face *F = &h->faces[s == 0 ? E->face_a : E->face_b];
      const int32_t *l = h->face_vertices + F->first_index;
      bool has = false;
      for (int32_t k = 0; k < F->vertex_count; ++k) {
        int32_t a = l[k], b = l[(k + 1) % F->vertex_count];
        if ((a == E->a && b == E->b) || (a == E->b && b == E->a))
          has = true;
      }
      assert_true(has);
    }
    for (int32_t k = e + 1; k < h->edge_count; ++k)
      assert_false(h->edges[k].a == E->a && h->edges[k].b == E->b);
  }
  double r = 0.0;
  for (int32_t v = 0; v < h->vertex_count; ++v)
    r = fmax(r, v3_len(h->vertices[v]));
  ASSERT_NEAR(h->bounding_radius, r, 1e-15 * r);
}

/* The hull of n points: built, with the given numbers of vertices, faces and
 * edges, and through check_hull at tol. */
static void build_checked(hull *h, const vec3 *pts, int32_t n, int32_t vertices, int32_t faces,
                          int32_t edges, double tol) {
  assert_int_equal(lcp__hull_build(pts, n, h), LCP_OK);
  assert_int_equal(h->vertex_count, vertices);
  assert_int_equal(h->face_count, faces);
  assert_int_equal(h->edge_count, edges);
  check_hull(h, pts, n, tol);
}

/* Box corners, then points inside, on the faces, on the edges and duplicated. */
static int32_t box_cloud(vec3 *p, vec3 he, vec3 c, const mat3 *R, uint64_t seed) {
  rng gen = {seed};
  int32_t n = 0;
  for (int i = 0; i < 8; ++i)
    p[n++] = v3((i & 1) ? he.x : -he.x, (i & 2) ? he.y : -he.y, (i & 4) ? he.z : -he.z);
  for (int i = 0; i < 8; ++i)
    p[n++] = p[i]; /* duplicates */
  for (int i = 0; i < 30; ++i)
    p[n++] = rng_box(&gen, v3_neg(he), he);
  for (int axis = 0; axis < 3; ++axis)
    for (int s = -1; s <= 1; s += 2)
      for (int i = 0; i < 6; ++i) {
        vec3 q = rng_box(&gen, v3_neg(he), he);
        v3_set(&q, axis, s * v3_get(he, axis));
        p[n++] = q;
      }
  for (int i = 0; i < 8; ++i) /* edge midpoints and face centres */
    for (int axis = 0; axis < 3; ++axis) {
      vec3 q = p[i];
      v3_set(&q, axis, 0.0);
      p[n++] = q;
      vec3 r = v3_zero();
      v3_set(&r, axis, v3_get(p[i], axis));
      p[n++] = r;
    }
  for (int32_t i = 0; i < n; ++i)
    p[i] = v3_add(m3_mulv(R, p[i]), c);
  return n;
}

static void test_box_with_extra_points(void **state) {
  (void)state;
  vec3 pts[256];
  mat3 I = m3_identity();
  vec3 he = v3(0.5, 1.0, 1.5);
  int32_t n = box_cloud(pts, he, v3_zero(), &I, 1);
  for (uint64_t order = 0; order < 8; ++order) {
    if (order > 0)
      shuffle(pts, n, order);
    hull h;
    build_checked(&h, pts, n, 8, 6, 12, 1e-12);
    int seen = 0;
    for (int32_t f = 0; f < 6; ++f) {
      assert_int_equal(h.faces[f].vertex_count, 4);
      vec3 nrm = h.faces[f].normal;
      for (int axis = 0; axis < 3; ++axis) {
        double c = v3_get(nrm, axis);
        if (fabs(c) > 0.5) {
          ASSERT_NEAR(fabs(c), 1.0, 1e-15);
          ASSERT_NEAR(h.faces[f].offset, v3_get(he, axis), 1e-15);
          seen |= 1 << (2 * axis + (c > 0));
        }
      }
    }
    assert_int_equal(seen, 63);
    for (int32_t v = 0; v < 8; ++v)
      assert_true(fabs(h.vertices[v].x) == he.x && fabs(h.vertices[v].y) == he.y &&
                  fabs(h.vertices[v].z) == he.z);
    lcp__hull_free(&h);
  }
}

static void test_rotated_box_with_extra_points(void **state) {
  (void)state;
  vec3 pts[256];
  mat3 R = q_to_mat3(q_normalize((quat){0.8, 0.3, -0.4, 0.25}));
  int32_t n = box_cloud(pts, v3(0.2, 0.05, 0.7), v3(3.0, -1.0, 0.5), &R, 7);
  shuffle(pts, n, 99);
  hull h;
  build_checked(&h, pts, n, 8, 6, 12, 1e-12);
  ASSERT_NEAR(h.volume, 8 * 0.2 * 0.05 * 0.7, 1e-14);
  lcp__hull_free(&h);
}

/* A 5×5×5 lattice: every point but the corners is coplanar or collinear with
 * others, the worst case for quickhull's tolerances. */
static void test_lattice(void **state) {
  (void)state;
  vec3 pts[125];
  int32_t n = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 5; ++k)
        pts[n++] = v3(0.25 * i, 0.25 * j, 0.25 * k);
  for (uint64_t order = 0; order < 6; ++order) {
    if (order > 0)
      shuffle(pts, n, order + 100);
    hull h;
    build_checked(&h, pts, n, 8, 6, 12, 1e-12);
    ASSERT_NEAR(h.volume, 1.0, 1e-15);
    lcp__hull_free(&h);
  }
}

static void test_box_mass_properties(void **state) {
  (void)state;
  vec3 he = v3(0.5, 1.0, 1.5), c = v3(1.0, 2.0, -3.0);
  vec3 pts[8];
  for (int i = 0; i < 8; ++i)
    pts[i] = v3_add(c, v3((i & 1) ? he.x : -he.x, (i & 2) ? he.y : -he.y, (i & 4) ? he.z : -he.z));
  hull h;
  assert_int_equal(lcp__hull_build(pts, 8, &h), LCP_OK);
  double m = 8.0 * he.x * he.y * he.z;
  ASSERT_NEAR(h.volume, m, 1e-12 * m);
  ASSERT_NEAR(h.centroid.x, c.x, 1e-12);
  ASSERT_NEAR(h.centroid.y, c.y, 1e-12);
  ASSERT_NEAR(h.centroid.z, c.z, 1e-12);
  double I[3] = {m * (he.y * he.y + he.z * he.z) / 3.0, m * (he.x * he.x + he.z * he.z) / 3.0,
                 m * (he.x * he.x + he.y * he.y) / 3.0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      ASSERT_NEAR(h.inertia_unit_density.m[i][j], i == j ? I[i] : 0.0, 1e-12 * I[2]);
  ASSERT_NEAR(h.bounding_radius, v3_len(v3_add(v3_abs(c), he)), 1e-15);
  lcp__hull_free(&h);
}

static void test_regular_tetrahedron_mass_properties(void **state) {
  (void)state;
  const double s = 0.3;
  vec3 base[4] = {v3(1, 1, 1), v3(1, -1, -1), v3(-1, 1, -1), v3(-1, -1, 1)};
  mat3 R = q_to_mat3(q_normalize((quat){0.3, -0.5, 0.7, 0.1}));
  vec3 c = v3(-2.0, 0.5, 4.0);
  vec3 pts[4];
  for (int i = 0; i < 4; ++i)
    pts[i] = v3_add(m3_mulv(&R, v3_scale(base[i], s)), c);
  hull h;
  build_checked(&h, pts, 4, 4, 4, 6, 1e-12);
  double a = 2.0 * sqrt(2.0) * s; /* edge length */
  double vol = a * a * a / (6.0 * sqrt(2.0));
  ASSERT_NEAR(h.volume, vol, 1e-12 * vol);
  ASSERT_NEAR(h.centroid.x, c.x, 1e-12);
  ASSERT_NEAR(h.centroid.y, c.y, 1e-12);
  ASSERT_NEAR(h.centroid.z, c.z, 1e-12);
  /* A regular tetrahedron's inertia is isotropic: m a²/20 about any axis
   * through the centroid. */
  double I = vol * a * a / 20.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      ASSERT_NEAR(h.inertia_unit_density.m[i][j], i == j ? I : 0.0, 1e-12 * I);
  lcp__hull_free(&h);
}

/* A 32-sided prism with points on its caps and sides: caps must come out as
 * single 32-gons. Volume and inertia against the prism's closed form. */
static void test_prism(void **state) {
  (void)state;
  enum { N = 32 };
  vec3 pts[4 * N + 40];
  int32_t n = 0;
  const double r = 0.4, hl = 0.25;
  for (int k = 0; k < N; ++k) {
    double a = 2.0 * LCP_PI * k / N;
    pts[n++] = v3(r * cos(a), r * sin(a), hl);
    pts[n++] = v3(r * cos(a), r * sin(a), -hl);
    pts[n++] = v3(r * cos(a), r * sin(a), 0.3 * hl); /* on a side edge */
  }
  rng gen = {5};
  for (int k = 0; k < 40; ++k) {
    double x = rng_range(&gen, -0.2, 0.2);
    double y = rng_range(&gen, -0.2, 0.2);
    pts[n++] = v3(x, y, k % 2 ? hl : -hl);
  }
  shuffle(pts, n, 3);
  hull h;
  build_checked(&h, pts, n, 2 * N, N + 2, 3 * N, 1e-12);
  int caps = 0;
  for (int32_t f = 0; f < h.face_count; ++f)
    if (h.faces[f].vertex_count == N)
      ++caps;
    else
      assert_int_equal(h.faces[f].vertex_count, 4);
  assert_int_equal(caps, 2);
  /* regular N-gon of circumradius r: area N r² sin(2π/N)/2 */
  double area = 0.5 * N * r * r * sin(2.0 * LCP_PI / N);
  double vol = area * 2.0 * hl;
  ASSERT_NEAR(h.volume, vol, 1e-12 * vol);
  /* polar moment of the N-gon about its centre, summed over its N triangles
   * (0, a, b): area·(a·a + a·b + b·b)/6 = area r² (2 + cos(2π/N))/6 */
  double J = area * r * r / 6.0 * (2.0 + cos(2.0 * LCP_PI / N));
  double Izz = 2.0 * hl * J;
  double Ixx = 2.0 * hl * J / 2.0 + vol * (2.0 * hl) * (2.0 * hl) / 12.0;
  ASSERT_NEAR(h.inertia_unit_density.m[2][2], Izz, 1e-12 * Izz);
  ASSERT_NEAR(h.inertia_unit_density.m[0][0], Ixx, 1e-12 * Ixx);
  ASSERT_NEAR(h.inertia_unit_density.m[1][1], Ixx, 1e-12 * Ixx);
  ASSERT_NEAR(h.inertia_unit_density.m[0][1], 0.0, 1e-12 * Izz);
  lcp__hull_free(&h);
}

static void test_octahedron_and_duplicates(void **state) {
  (void)state;
  vec3 pts[60];
  int32_t n = 0;
  for (int rep = 0; rep < 10; ++rep) {
    pts[n++] = v3(1, 0, 0);
    pts[n++] = v3(-1, 0, 0);
    pts[n++] = v3(0, 1, 0);
    pts[n++] = v3(0, -1, 0);
    pts[n++] = v3(0, 0, 1);
    pts[n++] = v3(0, 0, -1);
  }
  hull h;
  build_checked(&h, pts, n, 6, 8, 12, 1e-12);
  ASSERT_NEAR(h.volume, 4.0 / 3.0, 1e-15);
  /* |x|+|y|+|z| ≤ 1: ∫x² dV = 8·(1/60) over the unit simplices, so
   * Ixx = ∫(y² + z²) dV = 4/15 = m/5 */
  ASSERT_NEAR(h.inertia_unit_density.m[0][0], 4.0 / 3.0 * 0.2, 1e-15);
  lcp__hull_free(&h);
}

static void check_random_cloud(vec3 *pts, int32_t n) {
  hull h;
  assert_int_equal(lcp__hull_build(pts, n, &h), LCP_OK);
  check_hull(&h, pts, n, 1e-9);
  /* triangles only on a cloud in general position */
  for (int32_t f = 0; f < h.face_count; ++f)
    assert_int_equal(h.faces[f].vertex_count, 3);
  /* determinism: a second build is bitwise identical */
  hull g;
  assert_int_equal(lcp__hull_build(pts, n, &g), LCP_OK);
  assert_int_equal(g.vertex_count, h.vertex_count);
  assert_int_equal(g.face_count, h.face_count);
  assert_memory_equal(g.vertices, h.vertices, sizeof(vec3) * (size_t)h.vertex_count);
  assert_memory_equal(g.face_vertices, h.face_vertices, sizeof(int32_t) * 3 * (size_t)h.face_count);
  assert_memory_equal(&g.inertia_unit_density, &h.inertia_unit_density, sizeof(mat3));
  lcp__hull_free(&g);
  lcp__hull_free(&h);
}

static void test_random_clouds(void **state) {
  (void)state;
  enum { N = 400 };
  vec3 *pts = malloc(sizeof(vec3) * N);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    rng s = {seed * 1000};
    int32_t n = 4 + rng_int(&s, N - 4);
    for (int32_t i = 0; i < n; ++i)
      pts[i] = rng_box(&s, v3(-1, -2, -0.5), v3(1, 2, 0.5));
    check_random_cloud(pts, n);
  }
  /* on a sphere: every point is a vertex */
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    rng s = {seed};
    for (int32_t i = 0; i < N; ++i) {
      vec3 d;
      do
        d = rng_vec3(&s, -1, 1);
      while (v3_len2(d) > 1.0 || v3_len2(d) < 0.01);
      v3_normalize(d, &pts[i], 0.0);
    }
    check_random_cloud(pts, N);
    hull h;
    assert_int_equal(lcp__hull_build(pts, N, &h), LCP_OK);
    assert_int_equal(h.vertex_count, N);
    assert_true(h.volume < 4.0 / 3.0 * LCP_PI && h.volume > 0.9 * 4.0 / 3.0 * LCP_PI);
    lcp__hull_free(&h);
  }
  free(pts);
}

/* Far from the origin the rounding of the coordinates dominates the
 * tolerance; the box must still come out whole. */
static void test_far_from_origin(void **state) {
  (void)state;
  vec3 pts[256];
  mat3 I = m3_identity();
  int32_t n = box_cloud(pts, v3(0.5, 0.5, 0.5), v3(1e5, -2e5, 3e4), &I, 11);
  hull h;
  assert_int_equal(lcp__hull_build(pts, n, &h), LCP_OK);
  assert_int_equal(h.vertex_count, 8);
  assert_int_equal(h.face_count, 6);
  assert_int_equal(h.edge_count, 12);
  ASSERT_NEAR(h.volume, 1.0, 1e-9);
  lcp__hull_free(&h);
}

static void test_degenerate_inputs(void **state) {
  (void)state;
  hull h;
  vec3 pts[64];
  /* fewer than four points */
  pts[0] = v3(0, 0, 0);
  pts[1] = v3(1, 0, 0);
  pts[2] = v3(0, 1, 0);
  assert_int_equal(lcp__hull_build(pts, 3, &h), LCP_ERR_DEGENERATE);
  assert_int_equal(lcp__hull_build(pts, 0, &h), LCP_ERR_DEGENERATE);
  /* coplanar, including within the relative tolerance */
  rng s = {42};
  for (int i = 0; i < 50; ++i)
    pts[i] = v3_mul(rng_vec3(&s, -1, 1), v3(1, 1, 1e-11));
  assert_int_equal(lcp__hull_build(pts, 50, &h), LCP_ERR_DEGENERATE);
  /* ... but not when the thickness is above it */
  pts[7].z = 1e-6;
  assert_int_equal(lcp__hull_build(pts, 50, &h), LCP_OK);
  lcp__hull_free(&h);
  /* collinear */
  for (int i = 0; i < 20; ++i)
    pts[i] = v3(0.1 * i, 0.2 * i, -0.3 * i);
  assert_int_equal(lcp__hull_build(pts, 20, &h), LCP_ERR_DEGENERATE);
  /* coincident */
  for (int i = 0; i < 20; ++i)
    pts[i] = v3(1.5, -2.0, 3.0);
  assert_int_equal(lcp__hull_build(pts, 20, &h), LCP_ERR_DEGENERATE);
  /* non-finite */
  for (int i = 0; i < 8; ++i)
    pts[i] = v3((i & 1) ? 1 : -1, (i & 2) ? 1 : -1, (i & 4) ? 1 : -1);
  pts[5].y = NAN;
  assert_int_equal(lcp__hull_build(pts, 8, &h), LCP_ERR_INVALID_ARGUMENT);
  pts[5].y = INFINITY;
  assert_int_equal(lcp__hull_build(pts, 8, &h), LCP_ERR_INVALID_ARGUMENT);
  pts[5].y = 1.0;
  assert_int_equal(lcp__hull_build(NULL, 8, &h), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__hull_build(pts, 8, NULL), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp__hull_build(pts, -1, &h), LCP_ERR_INVALID_ARGUMENT);
  /* a failed build leaves an empty hull that lcp__hull_free accepts */
  assert_int_equal(lcp__hull_build(pts, 3, &h), LCP_ERR_DEGENERATE);
  assert_null(h.vertices);
  lcp__hull_free(&h);
  lcp__hull_free(NULL);
}

/* The public geom queries: a body's box and a hull of a cube's corners plus
 * points inside, as the engine holds them. The hull comes back with its 8
 * corners and 12 triangles (each square face cut in two), every triangle
 * facing out: all vertices on or behind its plane (n · (v − a) ≤ 1e-12 |n|,
 * n = (b − a) × (c − a)). */
static void test_geom_queries(void **state) {
  (void)state;
  lcp_world_settings_t settings = lcp_world_settings_default();
  lcp_world_t *world = NULL;
  assert_int_equal(lcp_world_create(&settings, &world), LCP_OK);
  lcp_body_def_t body_def = lcp_body_def_default();
  lcp_body_id body;
  assert_int_equal(lcp_body_add(world, &body_def, &body), LCP_OK);
  lcp_geom_def_t box = lcp_geom_def_default();
  box.type = LCP_SHAPE_BOX;
  box.half_extents[0] = 0.1, box.half_extents[1] = 0.2, box.half_extents[2] = 0.3;
  box.local_position[2] = 0.5;
  lcp_geom_id box_id, hull_id;
  assert_int_equal(lcp_geom_add(world, body, &box, &box_id), LCP_OK);
  double points[3 * 10];
  int32_t n = 0;
  for (int i = 0; i < 8; ++i, ++n) {
    points[3 * n] = i & 1 ? 0.5 : -0.5;
    points[3 * n + 1] = i & 2 ? 0.5 : -0.5;
    points[3 * n + 2] = i & 4 ? 0.5 : -0.5;
  }
  for (int i = 0; i < 2; ++i, ++n)
    points[3 * n] = points[3 * n + 1] = points[3 * n + 2] = 0.1 * (i + 1);
  lcp_geom_def_t cloud = lcp_geom_def_default();
  cloud.type = LCP_SHAPE_HULL;
  cloud.hull_points = points;
  cloud.hull_point_count = n;
  assert_int_equal(lcp_geom_add(world, body, &cloud, &hull_id), LCP_OK);

  assert_int_equal(lcp_world_geom_count(world), 2);
  lcp_geom_id ids[4];
  assert_int_equal(lcp_world_geom_ids(world, ids, 4), 2);
  assert_int_equal(ids[0], box_id);
  assert_int_equal(ids[1], hull_id);
  lcp_geom_info_t info;
  assert_int_equal(lcp_geom_get_info(world, box_id, &info), LCP_OK);
  assert_int_equal(info.type, LCP_SHAPE_BOX);
  assert_int_equal(info.body, body);
  assert_int_equal(info.robot, LCP_NULL_ID);
  assert_int_equal(info.link, -1);
  assert_true(info.half_extents[0] == 0.1 && info.half_extents[1] == 0.2 &&
              info.half_extents[2] == 0.3);
  assert_true(info.local_position[2] == 0.5 && info.local_orientation[0] == 1.0);
  assert_int_equal(info.hull_vertex_count, 0);

  assert_int_equal(lcp_geom_get_info(world, hull_id, &info), LCP_OK);
  assert_int_equal(info.type, LCP_SHAPE_HULL);
  assert_int_equal(info.hull_vertex_count, 8);
  assert_int_equal(info.hull_triangle_count, 12);
  double vertices[3 * 8];
  int32_t triangles[3 * 12];
  assert_int_equal(lcp_geom_get_hull(world, hull_id, vertices, 8, triangles, 11),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_geom_get_hull(world, box_id, vertices, 8, triangles, 12),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_geom_get_hull(world, hull_id, vertices, 8, triangles, 12), LCP_OK);
  for (int i = 0; i < 3 * 8; ++i)
    assert_true(fabs(vertices[i]) == 0.5);
  for (int t = 0; t < 12; ++t) {
    const double *a = vertices + 3 * triangles[3 * t], *b = vertices + 3 * triangles[3 * t + 1],
                 *c = vertices + 3 * triangles[3 * t + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double nrm[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                     u[0] * w[1] - u[1] * w[0]};
    double length = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    assert_true(length > 0.0);
    for (int v = 0; v < 8; ++v) {
      const double *p = vertices + 3 * v;
      assert_true(nrm[0] * (p[0] - a[0]) + nrm[1] * (p[1] - a[1]) + nrm[2] * (p[2] - a[2]) <=
                  1e-12 * length);
    }
  }
  assert_int_equal(lcp_body_remove(world, body), LCP_OK);
  assert_int_equal(lcp_world_geom_count(world), 0);
  assert_int_equal(lcp_geom_get_info(world, box_id, &info), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_geom_get_hull(world, hull_id, vertices, 8, triangles, 12),
                   LCP_ERR_NOT_FOUND);
  lcp_world_destroy(&world);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_with_extra_points),
      cmocka_unit_test(test_rotated_box_with_extra_points),
      cmocka_unit_test(test_lattice),
      cmocka_unit_test(test_box_mass_properties),
      cmocka_unit_test(test_regular_tetrahedron_mass_properties),
      cmocka_unit_test(test_prism),
      cmocka_unit_test(test_octahedron_and_duplicates),
      cmocka_unit_test(test_random_clouds),
      cmocka_unit_test(test_far_from_origin),
      cmocka_unit_test(test_degenerate_inputs),
      cmocka_unit_test(test_geom_queries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
