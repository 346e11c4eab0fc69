/* SPDX-License-Identifier: Apache-2.0 */
/* Contact manifolds: the points two touching shapes share, and their
 * reduction to at most MANIFOLD_MAX_POINTS (used by the pair routines of
 * collide.c and by the convex-pair manifold of convex_contact.c).
 *
 * The reduction is a template in this header rather than a function of its
 * own file: it is written once over a candidate callback, and each caller
 * gets it specialised and inlined (a plain array for box–box, a stream over
 * a hull's vertices for plane–hull) without an indirect call per candidate. */
#ifndef LCP_MANIFOLD_H
#define LCP_MANIFOLD_H

#include "lcp_math.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct contact_point {
  vec3 position;       /* world; midway between the two surfaces */
  double depth;        /* > 0 penetrating */
  uint32_t feature_id; /* stable while the same features touch */
} contact_point;

#define MANIFOLD_MAX_POINTS 4

typedef struct manifold {
  vec3 normal; /* unit, from A to B */
  int32_t point_count;
  contact_point points[MANIFOLD_MAX_POINTS];
  /* per point, the separating speed restitution asks for after this
   * step's impact (e |approach speed|), 0 for none: set by the step's
   * narrow phase from the velocities at the step's start, not by the
   * collision routines */
  double bounce[MANIFOLD_MAX_POINTS];
} manifold;

/* Squared distance / doubled area below which the reduction does not add a
 * point: it would span nothing (coincident or collinear candidates). */
#define MANIFOLD_REDUCE_EPS 1e-18

#if defined(__GNUC__)
#define MANIFOLD_INLINE static inline __attribute__((always_inline))
#else
#define MANIFOLD_INLINE static inline
#endif

/* Writes candidate i to *cp; false when there is no candidate i (a vertex
 * beyond the margin, for a stream). */
typedef bool (*manifold_candidate_fn)(const void *ctx, int32_t i, contact_point *cp);

MANIFOLD_INLINE bool manifold_candidate_from_array(const void *ctx, int32_t i, contact_point *cp) {
  *cp = ((const contact_point *)ctx)[i];
  return true;
}

/* Greedy area maximisation in the plane normal to n: (1) the deepest point,
 * (2) the point farthest from it, (3) the point maximising the triangle area,
 * (4) the point outside the triangle adding the largest area to it (the most
 * negative signed area against one of its edges). Returns the number of
 * points written to out. */
MANIFOLD_INLINE int32_t manifold_reduce_stream(manifold_candidate_fn get, const void *ctx,
                                               int32_t count, vec3 n,
                                               contact_point out[MANIFOLD_MAX_POINTS]) {
  contact_point cp;
  int32_t valid = 0;
  int32_t deepest = -1;
  double best = -INFINITY;
  for (int32_t i = 0; i < count; ++i) {
    if (!get(ctx, i, &cp))
      continue;
    ++valid;
    if (deepest < 0 || cp.depth > best) {
      best = cp.depth;
      deepest = i;
    }
  }
  if (valid <= MANIFOLD_MAX_POINTS) {
    int32_t m = 0;
    for (int32_t i = 0; i < count && m < MANIFOLD_MAX_POINTS; ++i)
      if (get(ctx, i, &cp))
        out[m++] = cp;
    return m;
  }

  int32_t idx[MANIFOLD_MAX_POINTS] = {deepest, -1, -1, -1};
  get(ctx, deepest, &out[0]);
  vec3 p0 = out[0].position;

  /* (2) farthest from the deepest */
  double score = MANIFOLD_REDUCE_EPS;
  for (int32_t i = 0; i < count; ++i) {
    if (i == idx[0] || !get(ctx, i, &cp))
      continue;
    double d2 = v3_len2(v3_perp(v3_sub(cp.position, p0), n));
    if (d2 > score) {
      score = d2;
      idx[1] = i;
      out[1] = cp;
    }
  }
  if (idx[1] < 0)
    return 1;
  vec3 e01 = v3_sub(out[1].position, p0);

  /* (3) largest triangle (doubled area, projected on n) */
  score = MANIFOLD_REDUCE_EPS;
  for (int32_t i = 0; i < count; ++i) {
    if (i == idx[0] || i == idx[1] || !get(ctx, i, &cp))
      continue;
    double area = fabs(v3_dot(v3_cross(e01, v3_sub(cp.position, p0)), n));
    if (area > score) {
      score = area;
      idx[2] = i;
      out[2] = cp;
    }
  }
  if (idx[2] < 0)
    return 2;

  /* (4) the point adding the most area to the triangle: against each edge
   * (a, b) the signed area of (a, b, q), oriented like the triangle, is
   * negative when q lies beyond that edge; its magnitude is the area added. */
  double orient = v3_dot(v3_cross(e01, v3_sub(out[2].position, p0)), n) >= 0.0 ? 1.0 : -1.0;
  score = MANIFOLD_REDUCE_EPS;
  for (int32_t i = 0; i < count; ++i) {
    if (i == idx[0] || i == idx[1] || i == idx[2] || !get(ctx, i, &cp))
      continue;
    double added = -INFINITY;
    for (int e = 0; e < 3; ++e) {
      vec3 a = out[e].position, b = out[(e + 1) % 3].position;
      double s = -orient * v3_dot(v3_cross(v3_sub(b, a), v3_sub(cp.position, a)), n);
      if (s > added)
        added = s;
    }
    if (added > score) {
      score = added;
      idx[3] = i;
      out[3] = cp;
    }
  }
  return idx[3] < 0 ? 3 : 4;
}

/* Reduces candidate points (all with the same normal) to at most 4: the
 * deepest, then the ones spanning the largest area. Keeps feature ids. */
static inline int32_t manifold_reduce(const contact_point *candidates, int32_t count, vec3 normal,
                                      contact_point out[MANIFOLD_MAX_POINTS]) {
  if (candidates == NULL || out == NULL || count <= 0)
    return 0;
  return manifold_reduce_stream(manifold_candidate_from_array, candidates, count, normal, out);
}

#endif
