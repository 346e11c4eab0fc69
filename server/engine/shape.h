/* SPDX-License-Identifier: Apache-2.0 */
/* The collision shapes in their own frames, their support mappings and their
 * world boxes (shape.c): what the broad phase, GJK/EPA and the pair routines
 * all start from. */
#ifndef LCP_SHAPE_H
#define LCP_SHAPE_H

#include "hull.h"
#include "lcp_math.h"
#include "lcpsim/lcpsim.h"

/* One shape as lcp_shape_type_t describes it, in its own frame. */
typedef struct shape {
  lcp_shape_type_t type;
  double radius;      /* sphere, capsule, cylinder */
  double half_length; /* capsule, cylinder: along local z */
  vec3 half_extents;  /* box */
  const hull *hull;   /* LCP_SHAPE_HULL */
} shape;

/* +1 for x ≥ 0, else −1: the side of a box or capsule a direction picks */
static inline double sgn_pos(double x) { return x >= 0.0 ? 1.0 : -1.0; }

/* Support point of the shape (its full extent, radius included) in local
 * direction d: argmax over the shape of dot(x, d). d need not be unit. */
vec3 lcp__shape_support_local(const shape *s, vec3 d);

/* World AABB of the shape at transform x. Planes get an infinite box. */
void lcp__shape_aabb(const shape *s, const xform *x, vec3 *lo, vec3 *hi);

#endif
