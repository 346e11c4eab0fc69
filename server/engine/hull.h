/* SPDX-License-Identifier: Apache-2.0 */
/* Convex hulls of point sets: the polyhedron behind LCP_SHAPE_HULL, built by
 * quickhull (hull.c) with merged coplanar faces (hull_faces.c). */
#ifndef LCP_HULL_H
#define LCP_HULL_H

#include "lcp_math.h"
#include "lcpsim/lcpsim.h"

#include <stdint.h>

/* A convex polyhedron built by lcp__hull_build(). Faces are convex polygons with
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

/* The index of the vertex farthest along local direction d (the first of
 * equals): a hull's support mapping, max over i of vertices[i] · d. */
static inline int32_t hull_support_vertex(const hull *h, vec3 d) {
  int32_t best = 0;
  double best_dot = -INFINITY;
  for (int32_t i = 0; i < h->vertex_count; ++i) {
    double v = v3_dot(h->vertices[i], d);
    if (v > best_dot) {
      best_dot = v;
      best = i;
    }
  }
  return best;
}

/* Builds the convex hull of points (quickhull). Returns LCP_OK,
 * LCP_ERR_DEGENERATE when the points do not span a volume (fewer than 4
 * non-coplanar, within a relative tolerance), LCP_ERR_INVALID_ARGUMENT for
 * non-finite input, LCP_ERR_NO_MEMORY. On success *out owns its arrays. */
int lcp__hull_build(const vec3 *points, int32_t count, hull *out);
void lcp__hull_free(hull *h);

#endif
