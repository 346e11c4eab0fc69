/* SPDX-License-Identifier: Apache-2.0 */
/* Distance and penetration of two convex shapes: GJK and EPA (gjk.c). The
 * contact manifold built on them is lcp__collide_convex (collide.h). */
#ifndef LCP_GJK_H
#define LCP_GJK_H

#include "lcp_math.h"
#include "shape.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct gjk_result {
  double distance; /* ≥ 0 between the two shapes, radii included; 0 when overlapping */
  vec3 point_a;    /* closest point on A, world */
  vec3 point_b;    /* closest point on B, world */
  int32_t iterations;
  bool overlap; /* the shapes (radii included) intersect */
} gjk_result;

/* Distance between two convex shapes by GJK on their cores (sphere: point,
 * capsule: segment) with the radii added afterwards, so that rounded shapes
 * converge exactly. */
int lcp__gjk_distance(const shape *a, const xform *xa, const shape *b, const xform *xb,
                      gjk_result *out);

typedef struct epa_result {
  double depth; /* ≥ 0 penetration depth */
  vec3 normal;  /* unit, from A to B: moving B by depth·normal separates */
  vec3 point_a; /* deepest point of A inside B, world */
  vec3 point_b; /* deepest point of B inside A, world */
} epa_result;

/* Penetration depth and direction of two overlapping convex shapes by EPA.
 * Returns LCP_OK, or LCP_ERR_STATE when they do not overlap. */
int lcp__epa_penetration(const shape *a, const xform *xa, const shape *b, const xform *xb,
                         epa_result *out);

#endif
