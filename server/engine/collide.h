/* SPDX-License-Identifier: Apache-2.0 */
/* Narrow phase (the step's third stage): the contact manifold of any two shapes.
 *
 * Conventions for every routine here:
 * - shapes are described in their own frame (see lcp_shape_type_t); a pair
 *   routine gets each shape with its world transform;
 * - the manifold normal points from shape A to shape B (the direction in which
 *   B must move to separate); depth > 0 means penetration, depth < 0 a gap;
 * - a pair routine reports points whose depth > -margin (speculative contacts)
 *   and returns the number of points (0 = no contact);
 * - at most 4 points: the contact region, not only the deepest point, chosen
 *   to keep the deepest point and maximise the area of the others;
 * - each point has a feature id, stable while the same features of the two
 *   shapes touch, so impulses carry over to the next step (warm start).
 *
 * The layers below: shapes (shape.h) and hulls (hull.h); GJK and EPA
 * (gjk.h); the manifold and its reduction (manifold.h).
 */
#ifndef LCP_COLLIDE_H
#define LCP_COLLIDE_H

#include "lcp_math.h"
#include "manifold.h"
#include "shape.h"

#include <stdint.h>

/* Collides any two shapes by dispatching to the dedicated pair routine, or to
 * lcp__collide_convex for pairs without one (collide.c). Swaps the pair internally
 * when the routine is written for (B, A) and flips the normal back, so the
 * convention above always holds for the caller's order. Plane–plane
 * returns 0. */
int32_t lcp__collide_shapes(const shape *a, const xform *xa, const shape *b, const xform *xb,
                            double margin, manifold *out);

/* The general convex pair (convex_contact.c): GJK when apart (speculative
 * within margin), EPA when overlapping, then a full manifold by clipping the
 * two shapes' support features (face, edge or vertex) along the normal. Used
 * for hulls and cylinders and as the fallback for any convex pair. */
int32_t lcp__collide_convex(const shape *a, const xform *xa, const shape *b, const xform *xb,
                            double margin, manifold *out);

#endif
