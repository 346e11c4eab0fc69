/* SPDX-License-Identifier: Apache-2.0 */
/* Narrow phase (the step's third stage): the dedicated pair routines and
 * their dispatcher.
 *
 * Every routine follows the conventions of collide.h: normal from A to B,
 * depth > 0 penetrating, points reported while depth > -margin (speculative
 * contacts), at most MANIFOLD_MAX_POINTS points, positions midway between the
 * two surfaces, feature ids that only change when different features touch.
 * Pairs without a dedicated routine (cylinders except against planes, hulls
 * except against planes) go to lcp__collide_convex (GJK/EPA, convex_contact.c).
 *
 * No allocation anywhere: candidates live on the stack (box–box clipping
 * yields at most 8), and plane–hull streams over the hull's vertices.
 */
#include "collide.h"

#include <math.h>
#include <stddef.h>

/* Below this a direction is treated as undefined (lengths are in metres of
 * bodies between millimetres and tens of metres). */
#define COLLIDE_TINY 1e-12

/* Two capsule axes count as parallel (line contact, 2 points) below this
 * |ua × ub| = sin(angle). */
#define CAPSULE_PARALLEL_SIN 1e-2

/* Plane–cylinder: below this sin(tilt) of the axis from the plane normal the
 * bottom cap is sampled at 4 rim points so a standing cylinder rests on a
 * 4-point manifold instead of rocking on one. */
#define CYLINDER_FLAT_SIN 0.2
/* ... and below this the "deepest" rim direction is noise: use the
 * cylinder's own x axis so the points stay put from step to step. */
#define CYLINDER_UPRIGHT_SIN 1e-6

/* Box–box SAT: an axis replaces the current best only if its separation is
 * larger by this fraction of |best| (plus an absolute part relative to the box
 * size). Favours A's faces over B's and faces over edges, so a stack keeps the
 * same reference face step after step (Gottschalk's OBB test extended with a
 * hysteresis on the axis choice). */
#define BOX_REL_TOL 0.05
#define BOX_ABS_TOL 1e-5
/* Edge–edge axes whose edges are this close to parallel (|a × b|) are
 * skipped: a face axis then separates at least as well. */
#define BOX_EDGE_MIN_SIN 1e-6
/* Incident vertices within this fraction of the reference half-extent beyond
 * a side plane are kept unclipped, so equal-size aligned boxes keep vertex
 * feature ids under jitter instead of flipping to clip-generated ones. */
#define BOX_CLIP_SLACK 1e-4

typedef int32_t (*pair_fn)(const shape *a, const xform *xa, const shape *b, const xform *xb,
                           double margin, manifold *out);

static inline double clampd(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

static inline void manifold_clear(manifold *out) {
  out->normal = v3(0.0, 0.0, 1.0);
  out->point_count = 0;
}

/* Reduces candidates into out->points and sets the count. */
static int32_t finish(manifold *out, vec3 normal, const contact_point *cand, int32_t count) {
  out->normal = normal;
  out->point_count = manifold_reduce(cand, count, normal, out->points);
  return out->point_count;
}

/* ---- plane (always A) against the others ----
 * The plane is its frame's z = 0, solid below: n is the frame's z axis and
 * also the manifold normal (B leaves along +n). For a point p of B's surface
 * at signed height s = n·p - d, the depth is -s and the midway position
 * p - (s/2) n. */

static inline vec3 plane_normal(const xform *x) { return m3_col(&x->R, 2); }

static inline void plane_point(vec3 n, double d, vec3 p, double margin, uint32_t id,
                               contact_point *cand, int32_t *count) {
  double s = v3_dot(n, p) - d;
  if (-s > -margin) {
    cand[*count] = (contact_point){v3_madd(p, n, -0.5 * s), -s, id};
    ++*count;
  }
}

static int32_t plane_sphere(const shape *a, const xform *xa, const shape *b, const xform *xb,
                            double margin, manifold *out) {
  (void)a;
  vec3 n = plane_normal(xa);
  double s = v3_dot(n, v3_sub(xb->p, xa->p)) - b->radius;
  out->normal = n;
  if (!(-s > -margin))
    return 0;
  /* sphere surface at c - r n, plane at c - (s + r) n: midway c - (r + s/2) n */
  out->points[0] = (contact_point){v3_madd(xb->p, n, -(b->radius + 0.5 * s)), -s, 0};
  out->point_count = 1;
  return 1;
}

static int32_t plane_box(const shape *a, const xform *xa, const shape *b, const xform *xb,
                         double margin, manifold *out) {
  (void)a;
  vec3 n = plane_normal(xa);
  double d = v3_dot(n, xa->p);
  vec3 ax[3] = {v3_scale(m3_col(&xb->R, 0), b->half_extents.x),
                v3_scale(m3_col(&xb->R, 1), b->half_extents.y),
                v3_scale(m3_col(&xb->R, 2), b->half_extents.z)};
  contact_point cand[8];
  int32_t count = 0;
  /* corner i: bit k set = + side along axis k; the id is the corner index */
  for (uint32_t i = 0; i < 8; ++i) {
    vec3 p = xb->p;
    for (int k = 0; k < 3; ++k)
      p = v3_madd(p, ax[k], (i >> k) & 1u ? 1.0 : -1.0);
    plane_point(n, d, p, margin, i, cand, &count);
  }
  return finish(out, n, cand, count);
}

static int32_t plane_capsule(const shape *a, const xform *xa, const shape *b, const xform *xb,
                             double margin, manifold *out) {
  (void)a;
  vec3 n = plane_normal(xa);
  double d = v3_dot(n, xa->p) + b->radius; /* the core segment against the offset plane */
  vec3 u = m3_col(&xb->R, 2);
  contact_point cand[2];
  int32_t count = 0;
  for (uint32_t e = 0; e < 2; ++e) {
    vec3 end = v3_madd(xb->p, u, e ? b->half_length : -b->half_length);
    /* the surface point is end - r n; plane_point sees the core end against
     * the plane raised by r, then the midway point is shifted down by r */
    int32_t before = count;
    plane_point(n, d, end, margin, e, cand, &count);
    if (count > before)
      cand[before].position = v3_madd(cand[before].position, n, -b->radius);
  }
  return finish(out, n, cand, count);
}

static int32_t plane_cylinder(const shape *a, const xform *xa, const shape *b, const xform *xb,
                              double margin, manifold *out) {
  (void)a;
  vec3 n = plane_normal(xa);
  double d = v3_dot(n, xa->p);
  vec3 u = m3_col(&xb->R, 2);
  /* The lowest rim point of a cap lies along -w, w the part of n normal to
   * the axis (the cap circle's extreme point in direction -n). */
  vec3 w = v3_perp(n, u);
  double wl = v3_len(w);
  vec3 e1 = wl > CYLINDER_UPRIGHT_SIN ? v3_scale(w, -1.0 / wl) : m3_col(&xb->R, 0);
  vec3 e2 = v3_cross(u, e1);
  int samples = wl < CYLINDER_FLAT_SIN ? 4 : 1;
  vec3 dir[4] = {e1, e2, v3_neg(e1), v3_neg(e2)};
  contact_point cand[8];
  int32_t count = 0;
  for (uint32_t cap = 0; cap < 2; ++cap) {
    vec3 c = v3_madd(xb->p, u, cap ? b->half_length : -b->half_length);
    for (int k = 0; k < samples; ++k)
      plane_point(n, d, v3_madd(c, dir[k], b->radius), margin, cap * 4u + (uint32_t)k, cand,
                  &count);
  }
  return finish(out, n, cand, count);
}

typedef struct plane_hull_ctx {
  const hull *h;
  const xform *x;
  vec3 n;
  double d;
  double margin;
} plane_hull_ctx;

static bool plane_hull_candidate(const void *ctx, int32_t i, contact_point *cp) {
  const plane_hull_ctx *c = ctx;
  vec3 p = xf_point(c->x, c->h->vertices[i]);
  double s = v3_dot(c->n, p) - c->d;
  if (!(-s > -c->margin))
    return false;
  *cp = (contact_point){v3_madd(p, c->n, -0.5 * s), -s, (uint32_t)i};
  return true;
}

static int32_t plane_hull(const shape *a, const xform *xa, const shape *b, const xform *xb,
                          double margin, manifold *out) {
  (void)a;
  vec3 n = plane_normal(xa);
  out->normal = n;
  if (b->hull == NULL || b->hull->vertices == NULL)
    return 0;
  plane_hull_ctx ctx = {b->hull, xb, n, v3_dot(n, xa->p), margin};
  out->point_count =
      manifold_reduce_stream(plane_hull_candidate, &ctx, b->hull->vertex_count, n, out->points);
  return out->point_count;
}

/* ---- spheres and capsules: closest points between cores, plus radii ---- */

/* One point between core points ca (radius ra) and cb (radius rb) along the
 * unit normal n from A to B at core distance dist. */
static int32_t rounded_point(vec3 ca, double ra, vec3 cb, double rb, vec3 n, double dist,
                             double margin, uint32_t id, manifold *out) {
  double depth = ra + rb - dist;
  out->normal = n;
  if (!(depth > -margin))
    return 0;
  vec3 sa = v3_madd(ca, n, ra), sb = v3_madd(cb, n, -rb);
  out->points[0] = (contact_point){v3_scale(v3_add(sa, sb), 0.5), depth, id};
  out->point_count = 1;
  return 1;
}

static int32_t sphere_sphere(const shape *a, const xform *xa, const shape *b, const xform *xb,
                             double margin, manifold *out) {
  vec3 d = v3_sub(xb->p, xa->p);
  double dist = v3_len(d);
  /* concentric: any direction separates; take world z, deterministically */
  vec3 n = dist > COLLIDE_TINY ? v3_scale(d, 1.0 / dist) : v3(0.0, 0.0, 1.0);
  return rounded_point(xa->p, a->radius, xb->p, b->radius, n, dist, margin, 0, out);
}

static int32_t sphere_capsule(const shape *a, const xform *xa, const shape *b, const xform *xb,
                              double margin, manifold *out) {
  vec3 u = m3_col(&xb->R, 2);
  double t = clampd(v3_dot(v3_sub(xa->p, xb->p), u), -b->half_length, b->half_length);
  vec3 q = v3_madd(xb->p, u, t);
  vec3 d = v3_sub(q, xa->p);
  double dist = v3_len(d);
  /* centre on the axis: leave sideways, along the capsule's own x axis */
  vec3 n = dist > COLLIDE_TINY ? v3_scale(d, 1.0 / dist) : m3_col(&xb->R, 0);
  return rounded_point(xa->p, a->radius, q, b->radius, n, dist, margin, 0, out);
}

/* Closest points of segments p1 + s d1 (|s| <= h1) and p2 + t d2 (|t| <= h2),
 * d1, d2 unit: minimise the convex quadratic |r + s d1 - t d2|² by clamping s,
 * solving t for it, clamping t and re-solving s (exact for a box domain). */
static void closest_segments(vec3 p1, vec3 d1, double h1, vec3 p2, vec3 d2, double h2, double *s,
                             double *t) {
  vec3 r = v3_sub(p1, p2);
  double b = v3_dot(d1, d2), c = v3_dot(d1, r), f = v3_dot(d2, r);
  double denom = 1.0 - b * b;
  double ss = denom > COLLIDE_TINY ? clampd((b * f - c) / denom, -h1, h1) : 0.0;
  double tt = b * ss + f;
  if (tt < -h2 || tt > h2) {
    tt = clampd(tt, -h2, h2);
    ss = clampd(b * tt - c, -h1, h1);
  }
  *s = ss;
  *t = tt;
}

static int32_t capsule_capsule(const shape *a, const xform *xa, const shape *b, const xform *xb,
                               double margin, manifold *out) {
  vec3 ua = m3_col(&xa->R, 2), ub = m3_col(&xb->R, 2);
  double ha = a->half_length, hb = b->half_length;
  double rr = a->radius + b->radius;
  vec3 pab = v3_sub(xb->p, xa->p);

  if (v3_len(v3_cross(ua, ub)) < CAPSULE_PARALLEL_SIN) {
    /* Line contact: the interval of A's segment facing B's, one point at
     * each end of it, each at its own distance along the common normal. */
    double t0 = v3_dot(v3_madd(pab, ub, -hb), ua), t1 = v3_dot(v3_madd(pab, ub, hb), ua);
    double lo = fmax(-ha, fmin(t0, t1)), hi = fmin(ha, fmax(t0, t1));
    if (hi - lo > COLLIDE_TINY) {
      vec3 n;
      if (!v3_normalize(v3_perp(pab, ua), &n, COLLIDE_TINY))
        n = m3_col(&xa->R, 0); /* coaxial: leave sideways */
      contact_point cand[2];
      int32_t count = 0;
      double ts[2] = {lo, hi};
      for (uint32_t i = 0; i < 2; ++i) {
        vec3 qa = v3_madd(xa->p, ua, ts[i]);
        double tb = clampd(v3_dot(v3_sub(qa, xb->p), ub), -hb, hb);
        vec3 qb = v3_madd(xb->p, ub, tb);
        double depth = rr - v3_dot(v3_sub(qb, qa), n);
        if (depth > -margin) {
          vec3 sa = v3_madd(qa, n, a->radius), sb = v3_madd(qb, n, -b->radius);
          cand[count++] = (contact_point){v3_scale(v3_add(sa, sb), 0.5), depth, i};
        }
      }
      return finish(out, n, cand, count);
    }
  }

  double s, t;
  closest_segments(xa->p, ua, ha, xb->p, ub, hb, &s, &t);
  vec3 qa = v3_madd(xa->p, ua, s), qb = v3_madd(xb->p, ub, t);
  vec3 d = v3_sub(qb, qa);
  double dist = v3_len(d);
  vec3 n;
  if (dist > COLLIDE_TINY) {
    n = v3_scale(d, 1.0 / dist);
  } else {
    /* the cores cross: leave along the common perpendicular, towards B */
    if (!v3_normalize(v3_cross(ua, ub), &n, COLLIDE_TINY))
      n = m3_col(&xa->R, 0);
    if (v3_dot(n, pab) < 0.0)
      n = v3_neg(n);
  }
  return rounded_point(qa, a->radius, qb, b->radius, n, dist, margin, 2, out);
}

/* ---- boxes ---- */

static inline double v3_at(vec3 v, int i) { return v3_get(v, i); }

/* Voronoi region of a box-local point: per axis 0 inside the slab, 1 beyond
 * the - face, 2 beyond the + face, as base-3 digits. */
static uint32_t box_region(vec3 p, vec3 he) {
  uint32_t code = 0, scale = 1;
  for (int i = 0; i < 3; ++i) {
    double x = v3_at(p, i), h = v3_at(he, i);
    code += scale * (x < -h ? 1u : (x > h ? 2u : 0u));
    scale *= 3u;
  }
  return code;
}

static inline vec3 box_clamp(vec3 p, vec3 he) {
  return v3(clampd(p.x, -he.x, he.x), clampd(p.y, -he.y, he.y), clampd(p.z, -he.z, he.z));
}

static int32_t sphere_box(const shape *a, const xform *xa, const shape *b, const xform *xb,
                          double margin, manifold *out) {
  const vec3 he = b->half_extents;
  const double r = a->radius;
  vec3 c = xf_inv_point(xb, xa->p); /* in the box frame */
  uint32_t region = box_region(c, he);
  vec3 nl, pos;
  double depth;
  uint32_t id;
  if (region != 0) {
    /* outside: towards the closest box point */
    vec3 q = box_clamp(c, he);
    vec3 d = v3_sub(q, c);
    double dist = v3_len(d);
    nl = v3_scale(d, 1.0 / dist); /* dist > 0: c is strictly outside */
    depth = r - dist;
    pos = v3_scale(v3_add(v3_madd(c, nl, r), q), 0.5);
    id = region;
  } else {
    /* inside: the sphere leaves through the nearest face, so the box moves
     * against that face's outward normal o */
    int best = 0;
    double best_d = INFINITY;
    for (int f = 0; f < 6; ++f) {
      int i = f >> 1;
      double dist = v3_at(he, i) + ((f & 1) ? -v3_at(c, i) : v3_at(c, i));
      if (dist < best_d) {
        best_d = dist;
        best = f;
      }
    }
    vec3 o = v3_zero();
    v3_set(&o, best >> 1, (best & 1) ? 1.0 : -1.0);
    nl = v3_neg(o);
    depth = r + best_d;
    pos = v3_scale(v3_add(v3_madd(c, o, -r), v3_madd(c, o, best_d)), 0.5);
    id = 27u + (uint32_t)best;
  }
  out->normal = xf_vector(xb, nl);
  if (!(depth > -margin))
    return 0;
  out->points[0] = (contact_point){xf_point(xb, pos), depth, id};
  out->point_count = 1;
  return 1;
}

/* Closest point of the segment e0 + t dv (t in [0, 1]) to an origin-centred
 * box, exactly: the planes x_i = ±he_i cut [0, 1] into at most 7 intervals,
 * on each the clamped axes are fixed and the squared distance is a quadratic
 * in t whose minimiser is clamped to the interval. The distance is convex in
 * t, so the best interval minimum is the global one. Returns the squared
 * distance and the parameter. */
static double segment_box_closest(vec3 e0, vec3 dv, vec3 he, double *t_out) {
  double cuts[8];
  int nc = 0;
  cuts[nc++] = 0.0;
  for (int i = 0; i < 3; ++i) {
    double d = v3_at(dv, i);
    if (d == 0.0)
      continue;
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double t = (sgn * v3_at(he, i) - v3_at(e0, i)) / d;
      if (t > 0.0 && t < 1.0)
        cuts[nc++] = t;
    }
  }
  cuts[nc++] = 1.0;
  for (int i = 2; i < nc - 1; ++i) /* insertion sort of the interior cuts */
    for (int j = i; j > 1 && cuts[j] < cuts[j - 1]; --j) {
      double tmp = cuts[j];
      cuts[j] = cuts[j - 1];
      cuts[j - 1] = tmp;
    }
  double best = INFINITY, best_t = 0.0;
  for (int k = 0; k + 1 < nc; ++k) {
    double t0 = cuts[k], t1 = cuts[k + 1];
    double tm = 0.5 * (t0 + t1);
    double qa = 0.0, qb = 0.0;
    for (int i = 0; i < 3; ++i) {
      double x = v3_at(e0, i) + tm * v3_at(dv, i), h = v3_at(he, i);
      if (x > h || x < -h) {
        double off = v3_at(e0, i) - (x > h ? h : -h);
        qa += v3_at(dv, i) * v3_at(dv, i);
        qb += v3_at(dv, i) * off;
      }
    }
    double t = qa > 0.0 ? clampd(-qb / qa, t0, t1) : t0;
    vec3 p = v3_madd(e0, dv, t);
    double d2 = v3_len2(v3_sub(p, box_clamp(p, he)));
    if (d2 < best) {
      best = d2;
      best_t = t;
    }
  }
  *t_out = best_t;
  return best;
}

static int32_t box_capsule(const shape *a, const xform *xa, const shape *b, const xform *xb,
                           double margin, manifold *out) {
  const vec3 he = a->half_extents;
  const double r = b->radius;
  /* in the box frame */
  vec3 c = xf_inv_point(xa, xb->p);
  vec3 u = xf_inv_vector(xa, m3_col(&xb->R, 2));
  vec3 e0 = v3_madd(c, u, -b->half_length);
  vec3 dv = v3_scale(u, 2.0 * b->half_length);
  double t;
  double d2 = segment_box_closest(e0, dv, he, &t);
  if (d2 <= COLLIDE_TINY * COLLIDE_TINY) /* the core enters the box: EPA */
    return lcp__collide_convex(a, xa, b, xb, margin, out);
  vec3 p = v3_madd(e0, dv, t);
  vec3 q = box_clamp(p, he);
  double dist = sqrt(d2);
  vec3 nl = v3_scale(v3_sub(p, q), 1.0 / dist);
  out->normal = xf_vector(xa, nl);
  if (!(r - dist > -margin)) {
    out->point_count = 0;
    return 0;
  }

  uint32_t region = box_region(p, he);
  int k = -1, clamped = 0;
  for (int i = 0; i < 3; ++i) {
    double x = v3_at(p, i), h = v3_at(he, i);
    if (x > h || x < -h) {
      k = i;
      ++clamped;
    }
  }
  if (clamped == 1) {
    /* The closest point faces face k: clip the segment to that face's
     * rectangle (Liang–Barsky on the two tangent slabs) and report both ends
     * of what remains, each at its own height above the face. */
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 3; ++i) {
      if (i == k)
        continue;
      double d = v3_at(dv, i), x0 = v3_at(e0, i), h = v3_at(he, i);
      if (fabs(d) <= COLLIDE_TINY)
        continue; /* parallel to this slab, and inside it (the closest point is) */
      double ta = (-h - x0) / d, tb = (h - x0) / d;
      lo = fmax(lo, fmin(ta, tb));
      hi = fmin(hi, fmax(ta, tb));
    }
    if (lo <= hi) {
      double sk = v3_at(p, k) > 0.0 ? 1.0 : -1.0;
      uint32_t face = 2u * (uint32_t)k + (sk > 0.0 ? 1u : 0u);
      double ts[2] = {lo, hi};
      int np = (hi - lo) * v3_len(dv) > COLLIDE_TINY ? 2 : 1;
      contact_point cand[2];
      int32_t count = 0;
      for (int i = 0; i < np; ++i) {
        vec3 pi = v3_madd(e0, dv, ts[i]);
        double height = sk * v3_at(pi, k) - v3_at(he, k);
        double depth = r - height;
        if (depth > -margin) {
          vec3 mid = pi;
          v3_set(&mid, k, v3_at(pi, k) - sk * 0.5 * (r + height));
          cand[count++] = (contact_point){xf_point(xa, mid), depth, face * 2u + (uint32_t)i};
        }
      }
      return finish(out, out->normal, cand, count);
    }
  }
  vec3 mid = v3_scale(v3_add(q, v3_madd(p, nl, -r)), 0.5);
  out->points[0] = (contact_point){xf_point(xa, mid), r - dist, 64u + region};
  out->point_count = 1;
  return 1;
}

/* Box–box, face case: clip the incident box's most anti-parallel face against
 * the side planes of the reference face (Sutherland–Hodgman), in the
 * reference box's frame.
 *
 * Polygon edges carry a tag: 0..3 a piece of incident edge v -> v+1, 4 + p a
 * piece of side plane p. A vertex's feature is (incoming tag, outgoing tag):
 * an incident vertex, an edge/plane crossing or a reference corner, which
 * persists while the same features touch. A convex quad clipped by 4
 * half-planes has at most 8 vertices; the buffer has room for more so that
 * rounding can never overrun it. */
#define CLIP_MAX 16

typedef struct clip_poly {
  int n;
  double p[CLIP_MAX][3];
  uint8_t tag[CLIP_MAX]; /* of the edge from p[i] to p[i+1] */
} clip_poly;

/* Keeps the part of the polygon with sign * x[axis] <= limit (+ slack). */
static void clip_plane(const clip_poly *in, clip_poly *out, int axis, double sign, double limit,
                       double slack, uint8_t plane_tag) {
  out->n = 0;
  if (in->n == 0)
    return;
  const double *a = in->p[in->n - 1];
  double da = sign * a[axis] - limit;
  uint8_t atag = in->tag[in->n - 1];
  for (int i = 0; i < in->n && out->n < CLIP_MAX - 1; ++i) {
    /* edge a -> b, a the previous vertex */
    const double *b = in->p[i];
    double db = sign * b[axis] - limit;
    bool ain = da <= slack, bin = db <= slack;
    if (ain != bin && (ain ? da < 0.0 : db < 0.0)) {
      /* a true crossing of the plane (an endpoint within the slack beyond
       * it stands for the crossing itself) */
      double f = da / (da - db);
      double *x = out->p[out->n];
      x[0] = a[0] + f * (b[0] - a[0]);
      x[1] = a[1] + f * (b[1] - a[1]);
      x[2] = a[2] + f * (b[2] - a[2]);
      x[axis] = sign * limit; /* exactly on the plane */
      out->tag[out->n++] = ain ? plane_tag : atag;
    }
    if (bin) {
      double *x = out->p[out->n];
      x[0] = b[0];
      x[1] = b[1];
      x[2] = b[2];
      out->tag[out->n++] = in->tag[i];
    }
    a = b;
    da = db;
    atag = in->tag[i];
  }
}

/* hr, hi: half extents of the reference and incident boxes; Rri[m][j] =
 * component m of the incident box's axis j in the reference frame; tri: the
 * incident centre in the reference frame; the reference face is
 * x_k = sgn hr_k. Writes up to 8 candidates, world positions. */
static int32_t box_face_points(const double hr[3], const double hi[3], const double Rri[3][3],
                               const double tri[3], int k, double sgn, const xform *xref,
                               double margin, uint32_t id_base, contact_point *cand) {
  /* incident face: the face normal most anti-parallel to the reference one */
  int j = 0;
  double best = fabs(Rri[k][0]);
  for (int m = 1; m < 3; ++m)
    if (fabs(Rri[k][m]) > best) {
      best = fabs(Rri[k][m]);
      j = m;
    }
  double sj = sgn * Rri[k][j] > 0.0 ? -1.0 : 1.0;
  int ua = j == 2 ? 0 : j + 1, va = ua == 2 ? 0 : ua + 1;
  double fc[3], cu[3], cv[3];
  for (int m = 0; m < 3; ++m) {
    fc[m] = tri[m] + sj * hi[j] * Rri[m][j];
    cu[m] = hi[ua] * Rri[m][ua];
    cv[m] = hi[va] * Rri[m][va];
  }
  uint32_t inc_face = 2u * (uint32_t)j + (sj > 0.0 ? 1u : 0u);

  clip_poly poly[2];
  static const double su[4] = {1.0, -1.0, -1.0, 1.0}, sv[4] = {1.0, 1.0, -1.0, -1.0};
  poly[0].n = 4;
  for (int v = 0; v < 4; ++v) {
    for (int m = 0; m < 3; ++m)
      poly[0].p[v][m] = fc[m] + su[v] * cu[m] + sv[v] * cv[m];
    poly[0].tag[v] = (uint8_t)v;
  }
  int cur = 0;
  for (int q = 0; q < 2; ++q) {
    int axis = (k + 1 + q) % 3;
    double slack = BOX_CLIP_SLACK * hr[axis];
    for (int side = 0; side < 2; ++side) {
      double sign = side ? -1.0 : 1.0;
      /* most planes cut nothing (a smaller box on a larger one): skip them */
      bool cuts = false;
      for (int v = 0; v < poly[cur].n; ++v)
        cuts = cuts || sign * poly[cur].p[v][axis] - hr[axis] > slack;
      if (!cuts)
        continue;
      clip_plane(&poly[cur], &poly[1 - cur], axis, sign, hr[axis], slack,
                 (uint8_t)(4 + 2 * q + side));
      cur = 1 - cur;
    }
  }

  int32_t count = 0;
  const clip_poly *pl = &poly[cur];
  uint32_t tin = pl->n > 0 ? pl->tag[pl->n - 1] : 0u;
  for (int i = 0; i < pl->n; ++i) {
    uint32_t tout = pl->tag[i];
    double x[3] = {pl->p[i][0], pl->p[i][1], pl->p[i][2]};
    double h = sgn * x[k] - hr[k]; /* height above the reference face */
    if (-h > -margin) {
      x[k] -= 0.5 * h * sgn; /* midway between the two faces */
      cand[count++] = (contact_point){xf_point(xref, v3(x[0], x[1], x[2])), -h,
                                      id_base | (inc_face << 6) | (tin << 3) | tout};
    }
    tin = tout;
  }
  return count;
}

static int32_t box_box(const shape *a, const xform *xa, const shape *b, const xform *xb,
                       double margin, manifold *out) {
  const double hA[3] = {a->half_extents.x, a->half_extents.y, a->half_extents.z};
  const double hB[3] = {b->half_extents.x, b->half_extents.y, b->half_extents.z};
  /* Everything in A's frame: R[i][j] = a_i · b_j (column j = b_j), t = B's
   * centre. */
  double R[3][3], AR[3][3], t[3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      R[i][j] = xa->R.m[0][i] * xb->R.m[0][j] + xa->R.m[1][i] * xb->R.m[1][j] +
                xa->R.m[2][i] * xb->R.m[2][j];
      AR[i][j] = fabs(R[i][j]);
    }
  vec3 dw = v3_sub(xb->p, xa->p);
  for (int i = 0; i < 3; ++i)
    t[i] = xa->R.m[0][i] * dw.x + xa->R.m[1][i] * dw.y + xa->R.m[2][i] * dw.z;

  /* SAT: separation along a unit axis L = |t·L| - (rA + rB), rA, rB the
   * boxes' projected radii. Any separation beyond the margin ends it. */
  double sA = -INFINITY, sB = -INFINITY, sE = -INFINITY;
  int kA = 0, kB = 0, eI = 0, eJ = 0;
  for (int i = 0; i < 3; ++i) {
    double s = fabs(t[i]) - (hA[i] + hB[0] * AR[i][0] + hB[1] * AR[i][1] + hB[2] * AR[i][2]);
    if (s > margin)
      return 0;
    if (s > sA) {
      sA = s;
      kA = i;
    }
  }
  for (int j = 0; j < 3; ++j) {
    double tj = t[0] * R[0][j] + t[1] * R[1][j] + t[2] * R[2][j];
    double s = fabs(tj) - (hA[0] * AR[0][j] + hA[1] * AR[1][j] + hA[2] * AR[2][j] + hB[j]);
    if (s > margin)
      return 0;
    if (s > sB) {
      sB = s;
      kB = j;
    }
  }
  /* L = a_i × b_j: |L|² = 1 - R[i][j]², and with (i, i1, i2), (j, j1, j2)
   * cyclic: t·L = t[i2] R[i1][j] - t[i1] R[i2][j], rA = hA[i1] |R[i2][j]| +
   * hA[i2] |R[i1][j]|, rB = hB[j1] |R[i][j2]| + hB[j2] |R[i][j1]|. */
  for (int i = 0; i < 3; ++i) {
    int i1 = i == 2 ? 0 : i + 1, i2 = i1 == 2 ? 0 : i1 + 1;
    for (int j = 0; j < 3; ++j) {
      double len2 = 1.0 - R[i][j] * R[i][j];
      if (len2 < BOX_EDGE_MIN_SIN * BOX_EDGE_MIN_SIN)
        continue;
      int j1 = j == 2 ? 0 : j + 1, j2 = j1 == 2 ? 0 : j1 + 1;
      double tl = t[i2] * R[i1][j] - t[i1] * R[i2][j];
      double rA = hA[i1] * AR[i2][j] + hA[i2] * AR[i1][j];
      double rB = hB[j1] * AR[i][j2] + hB[j2] * AR[i][j1];
      double s = (fabs(tl) - rA - rB) / sqrt(len2);
      if (s > margin)
        return 0;
      if (s > sE) {
        sE = s;
        eI = i;
        eJ = j;
      }
    }
  }

  double scale = fmax(fmax(fmax(hA[0], hA[1]), fmax(hA[2], hB[0])), fmax(hB[1], hB[2]));
  double abs_tol = BOX_ABS_TOL * scale;
  /* Face of A unless B's face or an edge pair separates clearly better. */
  int use = 0; /* 0: face of A, 1: face of B, 2: edges */
  double s_best = sA;
  if (sB > sA + BOX_REL_TOL * fabs(sA) + abs_tol) {
    use = 1;
    s_best = sB;
  }
  if (sE > s_best + BOX_REL_TOL * fabs(s_best) + abs_tol)
    use = 2;

  contact_point cand[CLIP_MAX];
  if (use == 0) {
    double sgn = t[kA] >= 0.0 ? 1.0 : -1.0; /* A's face towards B */
    uint32_t ref_face = 2u * (uint32_t)kA + (sgn > 0.0 ? 1u : 0u);
    int32_t count = box_face_points(hA, hB, R, t, kA, sgn, xa, margin, ref_face << 9, cand);
    return finish(out, v3_scale(m3_col(&xa->R, kA), sgn), cand, count);
  }
  if (use == 1) {
    /* A seen from B: axes Rᵀ, centre -Rᵀ t */
    double RT[3][3], tB[3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        RT[i][j] = R[j][i];
    for (int j = 0; j < 3; ++j)
      tB[j] = -(R[0][j] * t[0] + R[1][j] * t[1] + R[2][j] * t[2]);
    double sgn = tB[kB] >= 0.0 ? 1.0 : -1.0; /* B's face towards A */
    uint32_t ref_face = 2u * (uint32_t)kB + (sgn > 0.0 ? 1u : 0u);
    int32_t count =
        box_face_points(hB, hA, RT, tB, kB, sgn, xb, margin, (1u << 12) | (ref_face << 9), cand);
    return finish(out, v3_scale(m3_col(&xb->R, kB), -sgn), cand, count);
  }

  /* Edge–edge: the edge of A along a_i most extreme along +L, the edge of B
   * along b_j most extreme along -L; one point midway between their closest
   * points, at the SAT depth (both edges lie in their support planes, so
   * the gap along L between any two of their points is sE). */
  vec3 ai = v3_zero();
  v3_set(&ai, eI, 1.0);
  vec3 bj = v3(R[0][eJ], R[1][eJ], R[2][eJ]);
  vec3 L = v3_scale(v3_cross(ai, bj), 1.0 / sqrt(1.0 - R[eI][eJ] * R[eI][eJ]));
  vec3 tv = v3(t[0], t[1], t[2]);
  if (v3_dot(L, tv) < 0.0)
    L = v3_neg(L);
  vec3 ca = v3_zero();
  uint32_t edge_a = 0, edge_b = 0;
  for (int k = 0, bit = 0; k < 3; ++k) {
    if (k == eI)
      continue;
    double sk = v3_at(L, k) >= 0.0 ? 1.0 : -1.0;
    v3_set(&ca, k, sk * hA[k]);
    edge_a |= (sk > 0.0 ? 1u : 0u) << bit++;
  }
  vec3 cb = tv;
  for (int m = 0, bit = 0; m < 3; ++m) {
    if (m == eJ)
      continue;
    vec3 bm = v3(R[0][m], R[1][m], R[2][m]);
    double sm = v3_dot(L, bm) >= 0.0 ? -1.0 : 1.0;
    cb = v3_madd(cb, bm, sm * hB[m]);
    edge_b |= (sm > 0.0 ? 1u : 0u) << bit++;
  }
  double s, u;
  closest_segments(ca, ai, hA[eI], cb, bj, hB[eJ], &s, &u);
  vec3 mid = v3_scale(v3_add(v3_madd(ca, ai, s), v3_madd(cb, bj, u)), 0.5);
  out->normal = xf_vector(xa, L);
  out->points[0] = (contact_point){xf_point(xa, mid), -sE,
                                   (1u << 13) | (((uint32_t)eI * 4u + edge_a) << 4) |
                                       ((uint32_t)eJ * 4u + edge_b)};
  out->point_count = 1;
  return 1;
}

/* ---- dispatch ---- */

static int32_t collide_nothing(const shape *a, const xform *xa, const shape *b, const xform *xb,
                               double margin, manifold *out) {
  (void)a;
  (void)xa;
  (void)b;
  (void)xb;
  (void)margin;
  (void)out;
  return 0;
}

typedef struct pair_entry {
  pair_fn fn; /* NULL: the general convex path */
  bool swap;  /* the routine is written for (B, A) */
} pair_entry;

#define P_ LCP_SHAPE_PLANE
#define S_ LCP_SHAPE_SPHERE
#define B_ LCP_SHAPE_BOX
#define C_ LCP_SHAPE_CAPSULE
#define Y_ LCP_SHAPE_CYLINDER
#define H_ LCP_SHAPE_HULL
static const pair_entry pair_table[LCP_SHAPE_COUNT][LCP_SHAPE_COUNT] = {
    [P_][P_] = {collide_nothing, false}, [P_][S_] = {plane_sphere, false},
    [S_][P_] = {plane_sphere, true},     [P_][B_] = {plane_box, false},
    [B_][P_] = {plane_box, true},        [P_][C_] = {plane_capsule, false},
    [C_][P_] = {plane_capsule, true},    [P_][Y_] = {plane_cylinder, false},
    [Y_][P_] = {plane_cylinder, true},   [P_][H_] = {plane_hull, false},
    [H_][P_] = {plane_hull, true},       [S_][S_] = {sphere_sphere, false},
    [S_][B_] = {sphere_box, false},      [B_][S_] = {sphere_box, true},
    [S_][C_] = {sphere_capsule, false},  [C_][S_] = {sphere_capsule, true},
    [C_][C_] = {capsule_capsule, false}, [B_][C_] = {box_capsule, false},
    [C_][B_] = {box_capsule, true},      [B_][B_] = {box_box, false},
};
#undef P_
#undef S_
#undef B_
#undef C_
#undef Y_
#undef H_

int32_t lcp__collide_shapes(const shape *a, const xform *xa, const shape *b, const xform *xb,
                            double margin, manifold *out) {
  if (out == NULL)
    return 0;
  manifold_clear(out);
  if (a == NULL || b == NULL || xa == NULL || xb == NULL)
    return 0;
  if ((unsigned)a->type >= (unsigned)LCP_SHAPE_COUNT ||
      (unsigned)b->type >= (unsigned)LCP_SHAPE_COUNT)
    return 0;
  pair_entry e = pair_table[a->type][b->type];
  if (e.fn == NULL)
    return lcp__collide_convex(a, xa, b, xb, margin, out);
  if (!e.swap)
    return e.fn(a, xa, b, xb, margin, out);
  int32_t n = e.fn(b, xb, a, xa, margin, out);
  out->normal = v3_neg(out->normal);
  return n;
}
