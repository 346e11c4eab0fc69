/* SPDX-License-Identifier: Apache-2.0 */
/* What GJK and EPA (gjk.c) give the contact manifold of a convex pair
 * (convex_contact.c). */
#ifndef LCP_GJK_INTERNAL_H
#define LCP_GJK_INTERNAL_H

#include "gjk.h"

#include <stdbool.h>
#include <stdint.h>

/* A point of the Minkowski difference A − B and the points it came from. */
typedef struct mpoint {
  vec3 w; /* a − b */
  vec3 a; /* on A, world */
  vec3 b; /* on B, world */
} mpoint;

typedef struct pair {
  const shape *sa, *sb;
  const xform *xa, *xb;
  bool core; /* support of the cores (radii left out) */
} pair;

typedef struct simplex {
  mpoint p[4];
  double lambda[4]; /* barycentric coordinates of the closest point */
  int n;
} simplex;

typedef struct gjk_state {
  simplex s;
  vec3 v; /* closest point of the simplex; a − b of the witnesses */
  int32_t iterations;
  bool overlap; /* the origin is in the simplex (within rounding) */
} gjk_state;

typedef struct epa_out {
  double depth;
  vec3 normal;
  vec3 pa, pb;
} epa_out;

/* The radius GJK leaves out: the shape is its core swept by this sphere. */
static inline double core_radius(const shape *s) {
  return (s->type == LCP_SHAPE_SPHERE || s->type == LCP_SHAPE_CAPSULE) ? s->radius : 0.0;
}

/* A length scale of the shape, for relative tolerances. */
static inline double shape_size(const shape *s) {
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
    return s->radius;
  case LCP_SHAPE_BOX:
    return v3_len(s->half_extents);
  case LCP_SHAPE_CAPSULE:
    return s->half_length + s->radius;
  case LCP_SHAPE_CYLINDER:
    return sqrt(s->radius * s->radius + s->half_length * s->half_length);
  case LCP_SHAPE_HULL:
    return s->hull->bounding_radius;
  default:
    return 0.0;
  }
}

/* Is the shape one GJK can take (convex, finite) and is its pose given? */
static inline bool shape_ok(const shape *s, const xform *x) {
  if (!s || !x)
    return false;
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
  case LCP_SHAPE_BOX:
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    return true;
  case LCP_SHAPE_HULL:
    return s->hull && s->hull->vertex_count > 0;
  default:
    return false;
  }
}

static inline double pair_scale(const shape *a, const xform *xa, const shape *b, const xform *xb) {
  double s = shape_size(a) + shape_size(b) + v3_len(v3_sub(xa->p, xb->p));
  return s > 0.0 ? s : 1.0;
}

/* GJK from the pair's centres: its simplex, closest point and whether the
 * origin is inside (within rounding). */
void lcp__gjk_run(const pair *p, double scale, gjk_state *g);
/* The closest points on A and on B of a finished run. */
void lcp__gjk_witnesses(const gjk_state *g, vec3 *pa, vec3 *pb);
/* EPA on the full shapes from a GJK simplex holding the origin. The depth
 * may come out slightly negative when the shapes only touch. */
void lcp__epa_run(const pair *full, const simplex *start, double scale, epa_out *out);

#endif
