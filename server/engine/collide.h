/* Narrow phase: shapes, contact manifolds, pair routines, GJK/EPA
 * (the step's third stage).
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
 */
#ifndef LCP_COLLIDE_H
#define LCP_COLLIDE_H

#include "lcp_math.h"
#include "lcpsim/lcpsim.h"

#include <stdint.h>

/* A convex polyhedron built by hull_build(). Faces are convex polygons with
 * their vertices counter-clockwise seen from outside; coplanar triangles are
 * merged into one face. */
typedef struct hull_face {
  vec3 normal;         /* outward unit normal */
  double offset;       /* plane: dot(normal, x) = offset */
  int32_t first_index; /* into face_vertices */
  int32_t vertex_count;
} hull_face;

typedef struct hull_edge {
  int32_t a, b;           /* vertex indices, a < b */
  int32_t face_a, face_b; /* the two faces sharing it */
} hull_edge;

typedef struct hull {
  int32_t vertex_count;
  vec3 *vertices;
  int32_t face_count;
  hull_face *faces;
  int32_t *face_vertices; /* concatenated vertex loops */
  int32_t edge_count;
  hull_edge *edges;
  vec3 centroid; /* of the solid */
  double volume;
  mat3 inertia_unit_density; /* about the centroid, hull axes, density 1 */
  double bounding_radius;    /* max |vertex| in the hull frame */
} hull;

/* Builds the convex hull of points (quickhull). Returns LCP_OK,
 * LCP_ERR_DEGENERATE when the points do not span a volume (fewer than 4
 * non-coplanar, within a relative tolerance), LCP_ERR_INVALID_ARGUMENT for
 * non-finite input, LCP_ERR_NO_MEMORY. On success *out owns its arrays. */
int hull_build(const vec3 *points, int32_t count, hull *out);
void hull_free(hull *h);

typedef struct shape {
  lcp_shape_type_t type;
  double radius;      /* sphere, capsule, cylinder */
  double half_length; /* capsule, cylinder: along local z */
  vec3 half_extents;  /* box */
  const hull *hull;   /* LCP_SHAPE_HULL */
} shape;

/* Support point of the shape (its full extent, radius included) in local
 * direction d: argmax over the shape of dot(x, d). d need not be unit. */
vec3 shape_support_local(const shape *s, vec3 d);

/* World AABB of the shape at transform x. Planes get an infinite box. */
void shape_aabb(const shape *s, const xform *x, vec3 *lo, vec3 *hi);

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
} manifold;

/* Collides any two shapes by dispatching to the dedicated pair routine, or to
 * the GJK/EPA path for pairs without one. Swaps the pair internally when the
 * routine is written for (B, A) and flips the normal back, so the convention
 * above always holds for the caller's order. Plane–plane returns 0. */
int32_t collide_shapes(const shape *a, const xform *xa, const shape *b, const xform *xb,
                       double margin, manifold *out);

/* Reduces candidate points (all with the same normal) to at most 4: the
 * deepest, then the ones spanning the largest area. Keeps feature ids. */
int32_t manifold_reduce(const contact_point *candidates, int32_t count, vec3 normal,
                        contact_point out[MANIFOLD_MAX_POINTS]);

/* ---- GJK / EPA (gjk.c) ---- */

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
int gjk_distance(const shape *a, const xform *xa, const shape *b, const xform *xb, gjk_result *out);

typedef struct epa_result {
  double depth; /* ≥ 0 penetration depth */
  vec3 normal;  /* unit, from A to B: moving B by depth·normal separates */
  vec3 point_a; /* deepest point of A inside B, world */
  vec3 point_b; /* deepest point of B inside A, world */
} epa_result;

/* Penetration depth and direction of two overlapping convex shapes by EPA.
 * Returns LCP_OK, or LCP_ERR_STATE when they do not overlap. */
int epa_penetration(const shape *a, const xform *xa, const shape *b, const xform *xb,
                    epa_result *out);

/* The general convex pair: GJK when apart (speculative within margin), EPA
 * when overlapping, then a full manifold by clipping the two shapes' support
 * features (face, edge or vertex) along the normal. Used for hulls and
 * cylinders and as the fallback for any convex pair. */
int32_t collide_convex(const shape *a, const xform *xa, const shape *b, const xform *xb,
                       double margin, manifold *out);

#endif
