/* SPDX-License-Identifier: Apache-2.0 */
/* What the two phases of the hull construction share: quickhull's
 * triangulation (hull.c) and the faces built from it (hull_faces.c). */
#ifndef LCP_HULL_INTERNAL_H
#define LCP_HULL_INTERNAL_H

#include "hull.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct qh_face {
  int32_t v[3];    /* counter-clockwise seen from outside */
  int32_t adj[3];  /* adj[i]: the face across edge (v[i], v[(i+1)%3]) */
  vec3 n;          /* unit outward normal (float; exact tests use orient3d_sign) */
  double nerr;     /* bound on the error of dot(n, q − v0) per unit of |q − v0| */
  int32_t outside; /* head of this face's outside point list, -1 when empty */
  int32_t mark;    /* visit stamp */
  bool visible;
  bool alive;
} qh_face;

typedef struct qh {
  const vec3 *p;
  int32_t n;
  double eps;
  qh_face *f;
  int32_t fcount, fcap;
  int32_t *next;     /* outside list links, per point */
  bool *is_vertex;   /* per point */
  int32_t *scratch;  /* per point: points collected from visible faces */
  int32_t *queue;    /* faces, grows with fcap */
  int32_t *hz_from;  /* horizon edges: start vertex ... */
  int32_t *hz_to;    /* ... end vertex ... */
  int32_t *hz_face;  /* ... the face beyond (not visible) */
  int32_t *hz_order; /* the horizon in loop order */
  int32_t *new_faces;
  int32_t hz_cap;
  int32_t stamp;
} qh;

enum { QH_OK = 0, QH_NOMEM = -1, QH_BROKEN = -2 };

/* Cross the two edges meeting opposite the longest edge: the most accurate
 * of the three equivalent products. *short2 (optional) gets the product of
 * the two edges' lengths, the scale of the product's rounding error. */
static inline vec3 tri_normal_err(vec3 a, vec3 b, vec3 c, double *short2) {
  double l0 = v3_len2(v3_sub(b, a)), l1 = v3_len2(v3_sub(c, b)), l2 = v3_len2(v3_sub(a, c));
  vec3 n;
  double s;
  if (l0 >= l1 && l0 >= l2) {
    n = v3_cross(v3_sub(a, c), v3_sub(b, c));
    s = sqrt(l1 * l2);
  } else if (l1 >= l2) {
    n = v3_cross(v3_sub(b, a), v3_sub(c, a));
    s = sqrt(l0 * l2);
  } else {
    n = v3_cross(v3_sub(c, b), v3_sub(a, b));
    s = sqrt(l0 * l1);
  }
  if (short2)
    *short2 = s;
  return n;
}

static inline vec3 tri_normal(vec3 a, vec3 b, vec3 c) { return tri_normal_err(a, b, c, NULL); }

/* Phase 2: the polygonal hull (faces, edges, mass properties) from the
 * triangulation. LCP_ERR_DEGENERATE when the faces do not close up (the
 * caller retries with a larger eps), LCP_ERR_NO_MEMORY, LCP_OK. */
int lcp__hull_build_faces(const qh *q, hull *out);

#endif
