/* SPDX-License-Identifier: Apache-2.0 */
/* Support mappings and world boxes of every shape: the one place that knows
 * each shape's extent, for the broad phase (boxes) and for GJK, EPA and the
 * feature clipping of convex pairs (support points). */
#include "shape.h"

#include <math.h>
#include <stdint.h>

vec3 lcp__shape_support_local(const shape *s, vec3 d) {
  switch (s->type) {
  case LCP_SHAPE_SPHERE: {
    vec3 u;
    if (!v3_normalize(d, &u, 0.0))
      return v3_zero();
    return v3_scale(u, s->radius);
  }
  case LCP_SHAPE_BOX:
    return v3(sgn_pos(d.x) * s->half_extents.x, sgn_pos(d.y) * s->half_extents.y,
              sgn_pos(d.z) * s->half_extents.z);
  case LCP_SHAPE_CAPSULE: {
    vec3 u;
    vec3 end = v3(0.0, 0.0, sgn_pos(d.z) * s->half_length);
    if (!v3_normalize(d, &u, 0.0))
      return end;
    return v3_madd(end, u, s->radius);
  }
  case LCP_SHAPE_CYLINDER: {
    double rho = sqrt(d.x * d.x + d.y * d.y);
    vec3 p = v3(0.0, 0.0, sgn_pos(d.z) * s->half_length);
    if (rho > 0.0) {
      p.x = s->radius * d.x / rho;
      p.y = s->radius * d.y / rho;
    }
    return p;
  }
  case LCP_SHAPE_HULL: {
    return s->hull->vertices[hull_support_vertex(s->hull, d)];
  }
  default:
    return v3_zero(); /* planes are not convex-finite: never asked */
  }
}

void lcp__shape_aabb(const shape *s, const xform *x, vec3 *lo, vec3 *hi) {
  vec3 e;
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
    e = v3(s->radius, s->radius, s->radius);
    break;
  case LCP_SHAPE_BOX: {
    mat3 A = x->R;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        A.m[i][j] = fabs(A.m[i][j]);
    e = m3_mulv(&A, s->half_extents);
    break;
  }
  case LCP_SHAPE_CAPSULE: {
    vec3 a = v3_abs(m3_col(&x->R, 2));
    e = v3_add(v3_scale(a, s->half_length), v3(s->radius, s->radius, s->radius));
    break;
  }
  case LCP_SHAPE_CYLINDER: {
    /* a disc of radius r with unit normal a extends r·sqrt(1 − a_i²) along i */
    vec3 a = m3_col(&x->R, 2);
    e = v3(fabs(a.x) * s->half_length + s->radius * sqrt(fmax(0.0, 1.0 - a.x * a.x)),
           fabs(a.y) * s->half_length + s->radius * sqrt(fmax(0.0, 1.0 - a.y * a.y)),
           fabs(a.z) * s->half_length + s->radius * sqrt(fmax(0.0, 1.0 - a.z * a.z)));
    break;
  }
  case LCP_SHAPE_HULL: {
    const hull *h = s->hull;
    vec3 l = v3(INFINITY, INFINITY, INFINITY), u = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int32_t i = 0; i < h->vertex_count; ++i) {
      vec3 w = xf_point(x, h->vertices[i]);
      l = v3_min(l, w);
      u = v3_max(u, w);
    }
    *lo = l;
    *hi = u;
    return;
  }
  default:
    *lo = v3(-INFINITY, -INFINITY, -INFINITY);
    *hi = v3(INFINITY, INFINITY, INFINITY);
    return;
  }
  *lo = v3_sub(x->p, e);
  *hi = v3_add(x->p, e);
}
