/* SPDX-License-Identifier: Apache-2.0 */
/* Broad phase (sweep and prune): the pairs it reports must be exactly
 * those of the O(n²) all-pairs test, whatever the motion, the proxy count
 * changes, the skip flags, touching or infinite boxes; and an unchanged or
 * barely moving scene must cost few insertion-sort swaps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "arena.h"
#include "broadphase.h"
#include "lcpsim/lcpsim.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- random boxes on the 1/8 lattice ---- */

/* A multiple of 1/8 in [0, n/8): exact in binary, so boxes built from such
 * values touch exactly (hi == lo) often. */
static double rng_eighth(rng *r, uint64_t n) { return (double)(rng_next(r) % n) / 8.0; }

/* Three of them, drawn x, then y, then z, each moved by offset. */
static vec3 rng_eighths(rng *r, uint64_t n, double offset) {
  double x = rng_eighth(r, n) + offset;
  double y = rng_eighth(r, n) + offset;
  double z = rng_eighth(r, n) + offset;
  return v3(x, y, z);
}

/* ---- reference: all pairs ---- */

static int overlap1(double alo, double ahi, double blo, double bhi) {
  return alo <= bhi && blo <= ahi;
}

static int overlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi) {
  return overlap1(alo.x, ahi.x, blo.x, bhi.x) && overlap1(alo.y, ahi.y, blo.y, bhi.y) &&
         overlap1(alo.z, ahi.z, blo.z, bhi.z);
}

/* Every overlapping pair (a < b), in (a, b) order, skipped–skipped excluded.
 * Returns the count; the caller frees *out. */
static int32_t brute_pairs(int32_t n, const vec3 *lo, const vec3 *hi, const uint8_t *skip,
                           sap_pair **out) {
  size_t cap = 1024, len = 0;
  sap_pair *p = malloc(cap * sizeof *p);
  assert_non_null(p);
  for (int32_t a = 0; a < n; a++)
    for (int32_t b = a + 1; b < n; b++) {
      if (skip && skip[a] && skip[b])
        continue;
      if (!overlap(lo[a], hi[a], lo[b], hi[b]))
        continue;
      if (len == cap) {
        cap *= 2;
        p = realloc(p, cap * sizeof *p);
        assert_non_null(p);
      }
      p[len++] = (sap_pair){a, b};
    }
  *out = p;
  return (int32_t)len;
}

/* Runs lcp__sap_update and checks its pairs against the reference, element by
 * element (so order, duplicates and a < b are all checked). Returns the pair
 * count. */
static int32_t update_and_check(sap *s, arena *scratch, int32_t n, const vec3 *lo, const vec3 *hi,
                                const uint8_t *skip) {
  lcp__arena_reset(scratch);
  sap_pair *got = NULL;
  int32_t got_n = -1;
  assert_int_equal(lcp__sap_update(s, n, lo, hi, skip, scratch, &got, &got_n), LCP_OK);
  assert_int_equal(s->proxy_count, n);
  sap_pair *want = NULL;
  int32_t want_n = brute_pairs(n, lo, hi, skip, &want);
  assert_int_equal(got_n, want_n);
  if (want_n > 0)
    assert_non_null(got);
  for (int32_t i = 0; i < want_n; i++) {
    assert_int_equal(got[i].a, want[i].a);
    assert_int_equal(got[i].b, want[i].b);
  }
  free(want);
  /* The endpoint list stays a sorted list of exactly 2 n endpoints. */
  for (int32_t i = 1; i < 2 * n; i++) {
    const sap_endpoint *x = &s->endpoints[i - 1], *y = &s->endpoints[i];
    assert_true(x->value <= y->value);
  }
  return got_n;
}

/* ---- a population of moving boxes ---- */

typedef struct scene {
  int32_t n;
  vec3 *c, *h, *v; /* centre, half extents, velocity */
  vec3 *lo, *hi;
  int32_t *exact; /* box i lives on the 1/8 lattice */
  double side;
} scene;

static void scene_box(scene *sc, int32_t i, rng *r) {
  sc->exact[i] = (rng_next(r) & 1) != 0;
  double m = sc->side * 8.0;
  if (sc->exact[i]) {
    sc->c[i] = rng_eighths(r, (uint64_t)m, 0.0);
    sc->h[i] = rng_eighths(r, 12, 0.125);
    sc->v[i] = rng_eighths(r, 5, -0.25);
  } else {
    sc->c[i] = rng_vec3(r, 0, sc->side);
    sc->h[i] = rng_vec3(r, 0.05, 1.5);
    sc->v[i] = rng_vec3(r, -0.3, 0.3);
  }
}

static void scene_bounds(scene *sc) {
  for (int32_t i = 0; i < sc->n; i++) {
    sc->lo[i] = v3_sub(sc->c[i], sc->h[i]);
    sc->hi[i] = v3_add(sc->c[i], sc->h[i]);
  }
}

/* Room for cap boxes, all zero; n of them in use. */
static void scene_alloc(scene *sc, int32_t cap, int32_t n, double side) {
  sc->n = n;
  sc->side = side;
  sc->c = test_alloc((size_t)cap, sizeof(vec3));
  sc->h = test_alloc((size_t)cap, sizeof(vec3));
  sc->v = test_alloc((size_t)cap, sizeof(vec3));
  sc->lo = test_alloc((size_t)cap, sizeof(vec3));
  sc->hi = test_alloc((size_t)cap, sizeof(vec3));
  sc->exact = test_alloc((size_t)cap, sizeof(int32_t));
}

/* cap random boxes (scene_box) in a cube of the given side. */
static void scene_init(scene *sc, int32_t cap, int32_t n, double side, rng *r) {
  scene_alloc(sc, cap, n, side);
  for (int32_t i = 0; i < cap; i++)
    scene_box(sc, i, r);
  scene_bounds(sc);
}

static void scene_free(scene *sc) {
  free(sc->c);
  free(sc->h);
  free(sc->v);
  free(sc->lo);
  free(sc->hi);
  free(sc->exact);
}

/* Moves every box by its velocity; a box that leaves the cube is wrapped to
 * the other side, a big jump that reorders the endpoint list. */
static void scene_move(scene *sc) {
  for (int32_t i = 0; i < sc->n; i++) {
    sc->c[i] = v3_add(sc->c[i], sc->v[i]);
    for (int k = 0; k < 3; k++) {
      double x = v3_get(sc->c[i], k);
      if (x < 0)
        v3_set(&sc->c[i], k, x + sc->side);
      else if (x >= sc->side)
        v3_set(&sc->c[i], k, x - sc->side);
    }
  }
  scene_bounds(sc);
}

static int32_t count_touching(const scene *sc) {
  int32_t t = 0;
  for (int32_t a = 0; a < sc->n; a++)
    for (int32_t b = a + 1; b < sc->n; b++)
      if (overlap(sc->lo[a], sc->hi[a], sc->lo[b], sc->hi[b]))
        for (int k = 0; k < 3; k++)
          if (v3_get(sc->hi[a], k) == v3_get(sc->lo[b], k) ||
              v3_get(sc->hi[b], k) == v3_get(sc->lo[a], k)) {
            t++;
            break;
          }
  return t;
}

/* (1) 1000 moving boxes, 100 updates, every sweep axis. */
static void test_random_motion_matches_all_pairs(void **state) {
  (void)state;
  for (int32_t axis = 0; axis < 3; axis++) {
    rng r = {0x1234u + (uint64_t)axis};
    scene sc;
    scene_init(&sc, 1000, 1000, 24.0, &r);
    sap s;
    lcp__sap_init(&s, axis);
    arena scratch;
    lcp__arena_init(&scratch);
    int64_t total_pairs = 0;
    int32_t touching = 0;
    for (int step = 0; step < 100; step++) {
      total_pairs += update_and_check(&s, &scratch, sc.n, sc.lo, sc.hi, NULL);
      if (step % 25 == 0)
        touching += count_touching(&sc);
      scene_move(&sc);
    }
    /* The scene is neither empty nor trivial, and it does exercise exact
     * touching. */
    assert_true(total_pairs > 100 * 100);
    assert_true(touching > 10);
    lcp__sap_destroy(&s);
    lcp__arena_destroy(&scratch);
    scene_free(&sc);
  }
}

/* (2) Proxies added and removed between updates. */
static void test_count_changes(void **state) {
  (void)state;
  static const int32_t counts[] = {1000, 700, 700,  1300, 1300, 0,   0,    40,  1000,
                                   1,    2,   1500, 3,    1500, 999, 1000, 1001};
  rng r = {77};
  scene sc;
  scene_init(&sc, 1500, 0, 20.0, &r);
  sap s;
  lcp__sap_init(&s, 0);
  arena scratch;
  lcp__arena_init(&scratch);
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    int32_t n = counts[k];
    /* Proxies that come back after being dropped get fresh boxes, as a world
     * reusing an index for a new body would. */
    for (int32_t i = sc.n; i < n; i++)
      scene_box(&sc, i, &r);
    sc.n = n;
    scene_move(&sc);
    update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
    /* And a second update at the same count, after motion. */
    scene_move(&sc);
    update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
  }
  lcp__sap_destroy(&s);
  lcp__arena_destroy(&scratch);
  scene_free(&sc);
}

/* (3) skip flags remove exactly the pairs whose two proxies are skipped. */
static void test_skip_flags(void **state) {
  (void)state;
  rng r = {99};
  const int32_t n = 800;
  scene sc;
  scene_init(&sc, n, n, 16.0, &r);
  uint8_t *skip = calloc((size_t)n, 1);
  uint8_t *all = calloc((size_t)n, 1);
  uint8_t *none = calloc((size_t)n, 1);
  assert_true(skip && all && none);
  for (int32_t i = 0; i < n; i++) {
    skip[i] = rng_int(&r, 3) == 0 ? (uint8_t)(1 + rng_int(&r, 255)) : 0;
    all[i] = 1;
  }
  sap s_skip, s_plain, s_all, s_none;
  lcp__sap_init(&s_skip, 1);
  lcp__sap_init(&s_plain, 1);
  lcp__sap_init(&s_all, 2);
  lcp__sap_init(&s_none, 0);
  arena scratch;
  lcp__arena_init(&scratch);
  int64_t skipped_total = 0;
  for (int step = 0; step < 20; step++) {
    int32_t with = update_and_check(&s_skip, &scratch, n, sc.lo, sc.hi, skip);
    int32_t without = update_and_check(&s_plain, &scratch, n, sc.lo, sc.hi, NULL);
    /* The difference is exactly the skipped–skipped pairs. */
    int32_t ss = 0;
    for (int32_t a = 0; a < n; a++)
      for (int32_t b = a + 1; b < n; b++)
        ss += skip[a] && skip[b] && overlap(sc.lo[a], sc.hi[a], sc.lo[b], sc.hi[b]);
    assert_int_equal(without - with, ss);
    skipped_total += ss;
    assert_int_equal(update_and_check(&s_all, &scratch, n, sc.lo, sc.hi, all), 0);
    assert_int_equal(update_and_check(&s_none, &scratch, n, sc.lo, sc.hi, none), without);
    scene_move(&sc);
  }
  assert_true(skipped_total > 0);
  lcp__sap_destroy(&s_skip);
  lcp__sap_destroy(&s_plain);
  lcp__sap_destroy(&s_all);
  lcp__sap_destroy(&s_none);
  lcp__arena_destroy(&scratch);
  free(skip);
  free(all);
  free(none);
  scene_free(&sc);
}

/* The swaps an insertion sort needs to bring the endpoint list of s, as left
 * by the last update, into the order of the new boxes: the number of
 * inversions, counted pair by pair with the contract's order (value, lower
 * before upper, proxy). The proxy count must not change. */
static int64_t inversions_for(const sap *s, const vec3 *lo, const vec3 *hi) {
  int32_t m = 2 * s->proxy_count;
  double *v = malloc((size_t)m * sizeof *v);
  assert_non_null(v);
  for (int32_t i = 0; i < m; i++) {
    const sap_endpoint *e = &s->endpoints[i];
    v[i] = v3_get(e->is_upper ? hi[e->proxy] : lo[e->proxy], s->axis);
  }
  int64_t inv = 0;
  for (int32_t i = 0; i < m; i++)
    for (int32_t j = i + 1; j < m; j++) {
      const sap_endpoint *a = &s->endpoints[i], *b = &s->endpoints[j];
      int b_first = v[j] != v[i]                 ? v[j] < v[i]
                    : a->is_upper != b->is_upper ? b->is_upper < a->is_upper
                                                 : b->proxy < a->proxy;
      inv += b_first;
    }
  free(v);
  return inv;
}

/* An update whose last_swaps must be exactly the inversions it undid. */
static int64_t update_with_swaps(sap *s, arena *scratch, int32_t n, const vec3 *lo,
                                 const vec3 *hi) {
  assert_int_equal(s->proxy_count, n);
  int64_t want = inversions_for(s, lo, hi);
  update_and_check(s, scratch, n, lo, hi, NULL);
  assert_int_equal(s->last_swaps, want);
  return want;
}

/* (4) Coherence: an unchanged scene costs no swaps, a small motion
 * few. last_swaps is the number of swaps insertion sort needs (the
 * inversions), whichever sort actually ran: checked exactly every update,
 * through a shuffle and a jittering aligned grid, where the sort switches to
 * merge sort. */
static void test_swaps_follow_motion(void **state) {
  (void)state;
  rng r = {2024};
  const int32_t n = 1000;
  scene sc;
  scene_init(&sc, n, n, 30.0, &r);
  /* Only the non-lattice boxes: distinct endpoint values with a typical gap
   * of 30 / 2000 = 0.015 on the sweep axis. */
  for (int32_t i = 0; i < n; i++) {
    sc.c[i] = rng_vec3(&r, 0, 30);
    sc.h[i] = rng_vec3(&r, 0.1, 1);
  }
  scene_bounds(&sc);
  sap s;
  lcp__sap_init(&s, 0);
  arena scratch;
  lcp__arena_init(&scratch);
  update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
  update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
  assert_int_equal(s.last_swaps, 0);
  update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
  assert_int_equal(s.last_swaps, 0);

  /* Motion of 1e-4, about 1/150 of the gap: a handful of swaps among 2000
   * endpoints (n²/4 would be 10⁶). */
  int64_t swaps = 0;
  for (int step = 0; step < 10; step++) {
    for (int32_t i = 0; i < n; i++)
      sc.c[i] = v3_add(sc.c[i], rng_vec3(&r, -1e-4, 1e-4));
    scene_bounds(&sc);
    swaps += update_with_swaps(&s, &scratch, n, sc.lo, sc.hi);
    assert_true(s.last_swaps < n / 10);
  }
  assert_true(swaps > 0 && swaps < n);

  /* Every box teleported: the list is shuffled (about m²/4 inversions for
   * m = 2000 endpoints), then at rest again. */
  for (int32_t i = 0; i < n; i++)
    sc.c[i] = rng_vec3(&r, 0, 30);
  scene_bounds(&sc);
  assert_true(update_with_swaps(&s, &scratch, n, sc.lo, sc.hi) > 500000);
  assert_int_equal(update_with_swaps(&s, &scratch, n, sc.lo, sc.hi), 0);
  assert_int_equal(update_with_swaps(&s, &scratch, n, sc.lo, sc.hi), 0);

  /* A perfectly aligned grid jittering in place reshuffles the endpoints of
   * each slab at random, update after update. */
  for (int32_t i = 0; i < n; i++) {
    sc.c[i] = v3((double)(i % 10), (double)(i / 10 % 10), (double)(i / 100));
    sc.h[i] = v3(0.5, 0.5, 0.5); /* neighbours touch exactly */
  }
  scene_bounds(&sc);
  update_with_swaps(&s, &scratch, n, sc.lo, sc.hi);
  for (int step = 0; step < 5; step++) {
    for (int32_t i = 0; i < n; i++) {
      vec3 c = v3((double)(i % 10), (double)(i / 10 % 10), (double)(i / 100));
      sc.c[i] = v3_add(c, rng_vec3(&r, -1e-6, 1e-6));
    }
    scene_bounds(&sc);
    assert_true(update_with_swaps(&s, &scratch, n, sc.lo, sc.hi) > 0);
  }
  /* And still: no motion, no swaps. */
  assert_int_equal(update_with_swaps(&s, &scratch, n, sc.lo, sc.hi), 0);
  lcp__sap_destroy(&s);
  lcp__arena_destroy(&scratch);
  scene_free(&sc);
}

static int32_t pairs_of(sap *s, arena *scratch, int32_t n, const vec3 *lo, const vec3 *hi,
                        sap_pair *out) {
  lcp__arena_reset(scratch);
  sap_pair *p = NULL;
  int32_t np = 0;
  assert_int_equal(lcp__sap_update(s, n, lo, hi, NULL, scratch, &p, &np), LCP_OK);
  for (int32_t i = 0; i < np; i++)
    out[i] = p[i];
  return np;
}

/* (5) Closed intervals: boxes that touch (hi == lo) overlap, on every axis
 * and whichever axis is swept; the next double apart they do not. */
static void test_touching_boxes_overlap(void **state) {
  (void)state;
  arena scratch;
  lcp__arena_init(&scratch);
  for (int32_t axis = 0; axis < 3; axis++) {
    for (int k = 0; k < 3; k++) {
      sap s;
      lcp__sap_init(&s, axis);
      vec3 lo[2] = {v3(0, 0, 0), v3(0, 0, 0)};
      vec3 hi[2] = {v3(1, 1, 1), v3(1, 1, 1)};
      v3_set(&lo[1], k, 1.0);
      v3_set(&hi[1], k, 2.0);
      sap_pair p[4];
      assert_int_equal(pairs_of(&s, &scratch, 2, lo, hi, p), 1);
      assert_int_equal(p[0].a, 0);
      assert_int_equal(p[0].b, 1);
      /* Same pair with the indices the other way round. */
      vec3 lo2[2] = {lo[1], lo[0]}, hi2[2] = {hi[1], hi[0]};
      assert_int_equal(pairs_of(&s, &scratch, 2, lo2, hi2, p), 1);
      /* One ulp apart: no contact. */
      v3_set(&lo[1], k, nextafter(1.0, 2.0));
      assert_int_equal(pairs_of(&s, &scratch, 2, lo, hi, p), 0);
      lcp__sap_destroy(&s);
    }
    /* Corner to corner, a point box on a face, and two equal point boxes. */
    sap s;
    lcp__sap_init(&s, axis);
    vec3 lo[4] = {v3(0, 0, 0), v3(1, 1, 1), v3(0.5, 0.5, 0), v3(0.5, 0.5, 0)};
    vec3 hi[4] = {v3(1, 1, 1), v3(2, 2, 2), v3(0.5, 0.5, 0), v3(0.5, 0.5, 0)};
    sap_pair p[8];
    int32_t np = pairs_of(&s, &scratch, 4, lo, hi, p);
    assert_int_equal(np, 4);
    static const int32_t want[4][2] = {{0, 1}, {0, 2}, {0, 3}, {2, 3}};
    for (int i = 0; i < 4; i++) {
      assert_int_equal(p[i].a, want[i][0]);
      assert_int_equal(p[i].b, want[i][1]);
    }
    lcp__sap_destroy(&s);
  }
  /* Many boxes stacked on a lattice where every neighbour touches: each box
   * overlaps its 26 neighbours (faces, edges, corners). */
  {
    enum { G = 6 };
    vec3 lo[G * G * G], hi[G * G * G];
    for (int i = 0; i < G * G * G; i++) {
      lo[i] = v3(i % G, i / G % G, i / (G * G));
      hi[i] = v3_add(lo[i], v3(1, 1, 1));
    }
    sap s;
    lcp__sap_init(&s, 2);
    update_and_check(&s, &scratch, G * G * G, lo, hi, NULL);
    lcp__arena_reset(&scratch);
    sap_pair *p = NULL;
    int32_t np = 0;
    assert_int_equal(lcp__sap_update(&s, G * G * G, lo, hi, NULL, &scratch, &p, &np), LCP_OK);
    /* Every pair of cells at Chebyshev distance 1. */
    int32_t want = 0;
    for (int a = 0; a < G * G * G; a++)
      for (int b = a + 1; b < G * G * G; b++) {
        int dx = abs(a % G - b % G), dy = abs(a / G % G - b / G % G),
            dz = abs(a / (G * G) - b / (G * G));
        want += dx <= 1 && dy <= 1 && dz <= 1;
      }
    assert_int_equal(np, want);
    lcp__sap_destroy(&s);
  }
  lcp__arena_destroy(&scratch);
}

/* (6) Infinite extents: a whole-space box overlaps everything, a half-space
 * (ground) overlaps what reaches below its top, two infinite boxes overlap
 * each other; mixed with random boxes, still exactly the all-pairs set. */
static void test_infinite_boxes(void **state) {
  (void)state;
  arena scratch;
  lcp__arena_init(&scratch);
  rng r = {4242};
  const int32_t n = 300;
  scene sc;
  scene_init(&sc, n, n, 10.0, &r);
  const double inf = INFINITY;
  /* 0: everything; 1: ground z ≤ 0; 2: a wall x ≥ 5; 3: a slab unbounded in
   * x and y between z = 2 and 3; 4: a box touching the wall from the left. */
  sc.lo[0] = v3(-inf, -inf, -inf), sc.hi[0] = v3(inf, inf, inf);
  sc.lo[1] = v3(-inf, -inf, -inf), sc.hi[1] = v3(inf, inf, 0);
  sc.lo[2] = v3(5, -inf, -inf), sc.hi[2] = v3(inf, inf, inf);
  sc.lo[3] = v3(-inf, -inf, 2), sc.hi[3] = v3(inf, inf, 3);
  sc.lo[4] = v3(4, 0, 0), sc.hi[4] = v3(5, 1, 1);
  for (int32_t axis = 0; axis < 3; axis++) {
    sap s;
    lcp__sap_init(&s, axis);
    update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
    lcp__arena_reset(&scratch);
    sap_pair *p = NULL;
    int32_t np = 0;
    assert_int_equal(lcp__sap_update(&s, n, sc.lo, sc.hi, NULL, &scratch, &p, &np), LCP_OK);
    int32_t with0 = 0, ground = 0, wall = 0;
    for (int32_t i = 0; i < np; i++) {
      with0 += p[i].a == 0;
      ground += p[i].a == 1;
      wall += (p[i].a == 2 || p[i].b == 2);
    }
    assert_int_equal(with0, n - 1);
    int32_t want_ground = 0, want_wall = 0;
    for (int32_t i = 2; i < n; i++) {
      want_ground += sc.lo[i].z <= 0;
      want_wall += i != 2 && sc.hi[i].x >= 5;
    }
    want_wall += 2; /* 0 and 1 are unbounded in x */
    assert_int_equal(ground, want_ground);
    assert_int_equal(wall, want_wall);
    assert_true(wall >= 4); /* 0, 1, 3 and the touching box 4 at least */
    lcp__sap_destroy(&s);
  }
  /* The infinite boxes stay exact while the finite ones move around them. */
  sap s;
  lcp__sap_init(&s, 1);
  for (int step = 0; step < 30; step++) {
    update_and_check(&s, &scratch, n, sc.lo, sc.hi, NULL);
    for (int32_t i = 5; i < n; i++) {
      sc.c[i] = v3_add(sc.c[i], sc.v[i]);
      sc.lo[i] = v3_sub(sc.c[i], sc.h[i]);
      sc.hi[i] = v3_add(sc.c[i], sc.h[i]);
    }
  }
  lcp__sap_destroy(&s);
  scene_free(&sc);
  lcp__arena_destroy(&scratch);
}

/* A pile in a bin (the "pile N" benchmark scene): bodies on a lattice that touch
 * their neighbours exactly, a ground and four walls, all static walls
 * skipped; then the pile jitters. Dense on every axis, so the sweep's cell
 * index does most of the work; still exactly the all-pairs set. */
static void test_pile_in_bin(void **state) {
  (void)state;
  enum { SIDE = 16, LAYERS = 8, BODIES = SIDE * SIDE * LAYERS, N = BODIES + 5 };
  vec3 *lo = calloc(N, sizeof(vec3)), *hi = calloc(N, sizeof(vec3)), *c = calloc(N, sizeof(vec3));
  uint8_t *skip = calloc(N, 1);
  assert_true(lo && hi && c && skip);
  for (int i = 0; i < BODIES; i++)
    c[i] = v3(0.05 + 0.1 * (i % SIDE), 0.05 + 0.1 * (i / SIDE % SIDE),
              0.05 + 0.1 * (i / (SIDE * SIDE)));
  const double W = 0.1 * SIDE, inf = INFINITY;
  lo[BODIES] = v3(-inf, -inf, -inf), hi[BODIES] = v3(inf, inf, 0.0);
  lo[BODIES + 1] = v3(-0.1, -0.1, 0), hi[BODIES + 1] = v3(0, W + 0.1, 1);
  lo[BODIES + 2] = v3(W, -0.1, 0), hi[BODIES + 2] = v3(W + 0.1, W + 0.1, 1);
  lo[BODIES + 3] = v3(-0.1, -0.1, 0), hi[BODIES + 3] = v3(W + 0.1, 0, 1);
  lo[BODIES + 4] = v3(-0.1, W, 0), hi[BODIES + 4] = v3(W + 0.1, W + 0.1, 1);
  for (int i = BODIES; i < N; i++)
    skip[i] = 1;
  rng r = {31337};
  arena scratch;
  lcp__arena_init(&scratch);
  for (int32_t axis = 0; axis < 3; axis++) {
    sap s;
    lcp__sap_init(&s, axis);
    for (int step = 0; step < 6; step++) {
      /* Step 0: the exact lattice (0.05 is the box half size, so the faces
       * coincide up to rounding); later steps: jitter of 1e-3. */
      double j = step == 0 ? 0.0 : 1e-3;
      for (int i = 0; i < BODIES; i++) {
        vec3 x = v3_add(c[i], rng_vec3(&r, -j, j));
        lo[i] = v3_sub(x, v3(0.05, 0.05, 0.05));
        hi[i] = v3_add(x, v3(0.05, 0.05, 0.05));
      }
      int32_t np = update_and_check(&s, &scratch, N, lo, hi, skip);
      assert_true(np > BODIES); /* every body touches its neighbours */
    }
    lcp__sap_destroy(&s);
  }
  lcp__arena_destroy(&scratch);
  free(lo);
  free(hi);
  free(c);
  free(skip);
}

/* Moves every box along x by amount · (u − ½), u uniform in [0, 1). */
static void jitter_x(scene *sc, rng *r, double amount) {
  for (int32_t i = 0; i < sc->n; i++)
    sc->c[i].x += amount * (rng_unit(r) - 0.5);
}

/* Moves every box by up to ±amount along each axis. */
static void jitter_xyz(scene *sc, rng *r, double amount) {
  for (int32_t i = 0; i < sc->n; i++)
    sc->c[i] = v3_add(sc->c[i], rng_vec3(r, -amount, amount));
}

/* On each sweep axis a fresh sweep, updated four times and checked against
 * all pairs each time, the boxes jittered after every update. */
static void sweep_jittered(scene *sc, arena *scratch, rng *r,
                           void (*jitter)(scene *, rng *, double), double amount) {
  for (int32_t axis = 0; axis < 3; axis++) {
    sap s;
    lcp__sap_init(&s, axis);
    for (int step = 0; step < 4; step++) {
      scene_bounds(sc);
      update_and_check(&s, scratch, sc->n, sc->lo, sc->hi, NULL);
      jitter(sc, r, amount);
    }
    lcp__sap_destroy(&s);
  }
}

/* Coordinates far from the origin, point boxes, boxes of every scale from
 * 1e-9 to 1e300 in one scene, signed zeros: exact all the same. */
static void test_extreme_coordinates(void **state) {
  (void)state;
  const int32_t n = 600;
  scene sc;
  scene_alloc(&sc, n, n, 0.0);
  vec3 *c = sc.c, *h = sc.h;
  rng r = {555};
  arena scratch;
  lcp__arena_init(&scratch);
  for (int layout = 0; layout < 4; layout++) {
    for (int32_t i = 0; i < n; i++) {
      double off = layout == 0 ? 1e12 : (layout == 1 ? -3e15 : 0.0);
      double span = layout == 3 ? 1e-6 : 20.0;
      c[i] = v3_add(v3(off, off, off), rng_vec3(&r, 0, span));
      double size;
      switch (rng_int(&r, 12)) {
      case 0:
        size = 0.0; /* a point */
        break;
      case 1:
        size = span * 1e-9;
        break;
      case 2:
        size = 1e300; /* huge but finite */
        break;
      default:
        size = span * rng_range(&r, 0.01, 0.1);
        break;
      }
      h[i] = v3(size, size * rng_unit(&r), size);
      if (layout == 2 && i % 7 == 0)
        c[i] = v3(-0.0, 0.0, -0.0), h[i] = v3(0, 0, 0); /* signed zeros */
    }
    sweep_jittered(&sc, &scratch, &r, jitter_x, layout == 3 ? 1e-8 : 0.5);
  }
  lcp__arena_destroy(&scratch);
  scene_free(&sc);
}

/* A dense field of unit boxes with some medium ones (a few unit cells
 * across) and a few long rods: medium boxes look up many cells of the
 * sweep's grid, and a unit box just below or left of a medium one must still
 * be found. */
static void test_mixed_sizes_dense(void **state) {
  (void)state;
  const int32_t n = 3100;
  const double side = 14.0;
  scene sc;
  scene_alloc(&sc, n, n, side);
  vec3 *c = sc.c, *h = sc.h;
  rng r = {8080};
  for (int32_t i = 0; i < n; i++) {
    c[i] = rng_vec3(&r, 0, side);
    if (i % 17 == 0) /* medium */
      h[i] = rng_vec3(&r, 0.6, 2.5);
    else if (i % 97 == 1) /* a rod along some axis */
      h[i] = i % 3 == 0 ? v3(6, 0.2, 0.2) : (i % 3 == 1 ? v3(0.2, 6, 0.2) : v3(0.2, 0.2, 6));
    else
      h[i] = rng_vec3(&r, 0.3, 0.5);
  }
  arena scratch;
  lcp__arena_init(&scratch);
  sweep_jittered(&sc, &scratch, &r, jitter_xyz, 0.05);
  lcp__arena_destroy(&scratch);
  scene_free(&sc);
}

/* Edge cases of the contract. */
static void test_edge_cases(void **state) {
  (void)state;
  arena scratch;
  lcp__arena_init(&scratch);
  sap s;
  lcp__sap_init(&s, 0);
  lcp__sap_destroy(&s); /* never used */
  lcp__sap_init(&s, 2);
  sap_pair *p = (sap_pair *)&s;
  int32_t np = 7;
  assert_int_equal(lcp__sap_update(&s, 0, NULL, NULL, NULL, &scratch, &p, &np), LCP_OK);
  assert_int_equal(np, 0);
  assert_int_equal(lcp__sap_update(&s, -1, NULL, NULL, NULL, &scratch, &p, &np),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(np, 0);
  vec3 lo = v3(0, 0, 0), hi = v3(1, 1, 1);
  assert_int_equal(lcp__sap_update(&s, 1, &lo, &hi, NULL, &scratch, &p, &np), LCP_OK);
  assert_int_equal(np, 0);
  assert_int_equal(s.proxy_count, 1);
  lcp__sap_destroy(&s);
  lcp__arena_destroy(&scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_motion_matches_all_pairs),
      cmocka_unit_test(test_count_changes),
      cmocka_unit_test(test_skip_flags),
      cmocka_unit_test(test_swaps_follow_motion),
      cmocka_unit_test(test_touching_boxes_overlap),
      cmocka_unit_test(test_infinite_boxes),
      cmocka_unit_test(test_pile_in_bin),
      cmocka_unit_test(test_extreme_coordinates),
      cmocka_unit_test(test_mixed_sizes_dense),
      cmocka_unit_test(test_edge_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
