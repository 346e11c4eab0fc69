/* SPDX-License-Identifier: Apache-2.0 */
/* The general convex narrow phase, part two: the contact manifold of any
 * convex pair (lcp__collide_convex), from GJK's or EPA's normal (gjk.c).
 *
 * The manifold follows the usual clipping scheme (Gregorius, "The
 * separating axis test between convex polyhedra", GDC 2013): the face of
 * either shape best aligned with the normal is the reference, the other
 * shape's feature facing it is clipped against its side planes (Sutherland
 * & Hodgman, "Reentrant polygon clipping", 1974), and the points below the
 * reference plane within the margin are kept.
 */
#include "collide.h"
#include "gjk_internal.h"

#include <string.h>

/* ---- contact manifold by feature clipping ---- */

/* Features within this angle of the normal count as facing it. */
#define FEATURE_ANGLE 0.05
#define CYLINDER_CAP_POINTS 12
#define FEATURE_MAX 64

enum { FEAT_FACE = 0, FEAT_EDGE = 1, FEAT_VERTEX = 2 };

typedef struct feature {
  int n;                     /* 1 vertex, 2 edge, ≥ 3 face polygon */
  vec3 p[FEATURE_MAX];       /* world; counter-clockwise about normal for a face */
  uint32_t vid[FEATURE_MAX]; /* the shape's own vertex numbers */
  vec3 normal;               /* a face's outward unit normal */
  uint32_t code;             /* which feature of the shape: number·4 + kind */
} feature;

static void feat_point(feature *f, vec3 p, uint32_t vid, uint32_t code) {
  f->n = 1;
  f->p[0] = p;
  f->vid[0] = vid;
  f->code = code;
}

static void feat_segment(feature *f, vec3 p0, uint32_t v0, vec3 p1, uint32_t v1, uint32_t code) {
  f->n = 2;
  f->p[0] = p0;
  f->p[1] = p1;
  f->vid[0] = v0;
  f->vid[1] = v1;
  f->code = code;
}

static uint32_t box_corner_id(vec3 sgn) {
  return (sgn.x > 0 ? 1u : 0u) | (sgn.y > 0 ? 2u : 0u) | (sgn.z > 0 ? 4u : 0u);
}

/* The feature of s (at x) facing world direction d (unit): a face when its
 * normal is within FEATURE_ANGLE of d, else an edge within FEATURE_ANGLE of
 * perpendicular, else the support vertex. Rounded shapes include their radius
 * along d. */
static void shape_feature(const shape *s, const xform *x, vec3 d, feature *f) {
  const double cos_face = cos(FEATURE_ANGLE), sin_edge = sin(FEATURE_ANGLE);
  vec3 dl = xf_inv_vector(x, d);
  f->n = 0;
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
    feat_point(f, v3_madd(x->p, d, s->radius), 0, FEAT_VERTEX);
    return;
  case LCP_SHAPE_CAPSULE: {
    vec3 off = v3_scale(d, s->radius);
    vec3 top = v3_add(xf_point(x, v3(0, 0, s->half_length)), off);
    vec3 bot = v3_add(xf_point(x, v3(0, 0, -s->half_length)), off);
    if (fabs(dl.z) <= sin_edge && s->half_length > 0.0)
      feat_segment(f, bot, 0, top, 1, FEAT_EDGE);
    else if (dl.z >= 0.0)
      feat_point(f, top, 1, 4 + FEAT_VERTEX);
    else
      feat_point(f, bot, 0, FEAT_VERTEX);
    return;
  }
  case LCP_SHAPE_CYLINDER: {
    double r = s->radius, hl = s->half_length;
    double rho = sqrt(dl.x * dl.x + dl.y * dl.y);
    if (fabs(dl.z) >= cos_face) {
      /* the cap disc as an inscribed regular polygon */
      bool top = dl.z > 0.0;
      f->n = CYLINDER_CAP_POINTS;
      for (int k = 0; k < CYLINDER_CAP_POINTS; ++k) {
        int m = top ? k : CYLINDER_CAP_POINTS - 1 - k; /* counter-clockwise from outside */
        double a = 2.0 * LCP_PI * m / CYLINDER_CAP_POINTS;
        f->p[k] = xf_point(x, v3(r * cos(a), r * sin(a), top ? hl : -hl));
        f->vid[k] = (uint32_t)(m + (top ? 0 : CYLINDER_CAP_POINTS));
      }
      f->normal = xf_vector(x, v3(0, 0, top ? 1.0 : -1.0));
      f->code = (top ? 0u : 4u) + FEAT_FACE;
      return;
    }
    double cx = rho > 0.0 ? dl.x / rho : 1.0, cy = rho > 0.0 ? dl.y / rho : 0.0;
    vec3 top = xf_point(x, v3(r * cx, r * cy, hl)), bot = xf_point(x, v3(r * cx, r * cy, -hl));
    if (fabs(dl.z) <= sin_edge)
      feat_segment(f, bot, 2 * CYLINDER_CAP_POINTS, top, 2 * CYLINDER_CAP_POINTS + 1,
                   8 + FEAT_EDGE);
    else if (dl.z > 0.0)
      feat_point(f, top, 2 * CYLINDER_CAP_POINTS + 1, 12 + FEAT_VERTEX);
    else
      feat_point(f, bot, 2 * CYLINDER_CAP_POINTS, 16 + FEAT_VERTEX);
    return;
  }
  case LCP_SHAPE_BOX: {
    vec3 he = s->half_extents, ad = v3_abs(dl);
    vec3 sg = v3(sgn_pos(dl.x), sgn_pos(dl.y), sgn_pos(dl.z));
    int i = (ad.x >= ad.y && ad.x >= ad.z) ? 0 : (ad.y >= ad.z ? 1 : 2);
    if (v3_get(ad, i) >= cos_face) {
      double si = v3_get(sg, i);
      int j = (i + 1) % 3, k = (i + 2) % 3;
      static const double cj[4] = {-1, 1, 1, -1}, ck[4] = {-1, -1, 1, 1};
      f->n = 4;
      for (int c = 0; c < 4; ++c) {
        int m = si > 0 ? c : 3 - c; /* counter-clockwise about the outward normal */
        vec3 sq = v3_zero();
        v3_set(&sq, i, si);
        v3_set(&sq, j, cj[m]);
        v3_set(&sq, k, ck[m]);
        f->p[c] = xf_point(x, v3_mul(sq, he));
        f->vid[c] = box_corner_id(sq);
      }
      vec3 nl = v3_zero();
      v3_set(&nl, i, si);
      f->normal = xf_vector(x, nl);
      f->code = (uint32_t)(2 * i + (si < 0)) * 4 + FEAT_FACE;
      return;
    }
    int j = (ad.x <= ad.y && ad.x <= ad.z) ? 0 : (ad.y <= ad.z ? 1 : 2);
    if (v3_get(ad, j) <= sin_edge) {
      vec3 s0 = sg, s1 = sg;
      v3_set(&s0, j, -1.0);
      v3_set(&s1, j, 1.0);
      feat_segment(f, xf_point(x, v3_mul(s0, he)), box_corner_id(s0), xf_point(x, v3_mul(s1, he)),
                   box_corner_id(s1), (uint32_t)(8 * j + box_corner_id(s0)) * 4 + FEAT_EDGE);
      return;
    }
    feat_point(f, xf_point(x, v3_mul(sg, he)), box_corner_id(sg),
               box_corner_id(sg) * 4 + FEAT_VERTEX);
    return;
  }
  case LCP_SHAPE_HULL: {
    const hull *h = s->hull;
    int32_t bf = -1;
    double ba = -INFINITY;
    for (int32_t k = 0; k < h->face_count; ++k) {
      double a = v3_dot(h->faces[k].normal, dl);
      if (a > ba) {
        ba = a;
        bf = k;
      }
    }
    if (bf >= 0 && ba >= cos_face && h->faces[bf].vertex_count <= FEATURE_MAX) {
      const hull_face *F = &h->faces[bf];
      f->n = F->vertex_count;
      for (int32_t k = 0; k < F->vertex_count; ++k) {
        int32_t v = h->face_vertices[F->first_index + k];
        f->p[k] = xf_point(x, h->vertices[v]);
        f->vid[k] = (uint32_t)v;
      }
      f->normal = xf_vector(x, F->normal);
      f->code = (uint32_t)bf * 4 + FEAT_FACE;
      return;
    }
    int32_t bv = hull_support_vertex(h, dl);
    /* the edge at the support vertex closest to perpendicular to d */
    int32_t be = -1, bo = -1;
    double bs = INFINITY;
    for (int32_t k = 0; k < h->edge_count; ++k) {
      const hull_edge *E = &h->edges[k];
      if (E->a != bv && E->b != bv)
        continue;
      int32_t o = E->a == bv ? E->b : E->a;
      vec3 e = v3_sub(h->vertices[o], h->vertices[bv]);
      double len = v3_len(e);
      double sn = len > 0.0 ? fabs(v3_dot(e, dl)) / len : INFINITY;
      if (sn < bs) {
        bs = sn;
        be = k;
        bo = o;
      }
    }
    if (be >= 0 && bs <= sin_edge) {
      int32_t va = bv < bo ? bv : bo, vb = bv < bo ? bo : bv;
      feat_segment(f, xf_point(x, h->vertices[va]), (uint32_t)va, xf_point(x, h->vertices[vb]),
                   (uint32_t)vb, (uint32_t)be * 4 + FEAT_EDGE);
      return;
    }
    feat_point(f, xf_point(x, h->vertices[bv]), (uint32_t)bv, (uint32_t)bv * 4 + FEAT_VERTEX);
    return;
  }
  default:
    feat_point(f, x->p, 0, FEAT_VERTEX);
    return;
  }
}

/* Feature ids: [31] the reference face is B's, [30:20] the reference
 * feature, [19:18] kind, [17:9] a, [8:0] b. Kinds: 0 a single closest pair
 * (a, b: the features of A and B), 1 an incident vertex kept whole (a: its
 * number), 2 an incident edge cut by a reference side (a: the edge's first
 * vertex, b: the side), 3 two reference sides meeting inside the incident
 * face (a, b: the sides). */
static uint32_t make_id(bool ref_b, uint32_t ref, uint32_t kind, uint32_t a, uint32_t b) {
  return (ref_b ? 1u << 31 : 0u) | (ref & 0x7FFu) << 20 | (kind & 3u) << 18 | (a & 0x1FFu) << 9 |
         (b & 0x1FFu);
}

typedef struct cvert {
  vec3 p;
  uint32_t id;
  int32_t line; /* the boundary from here to the next vertex: ≥ 0 incident edge
                   (its first vertex's number), < 0 reference side −1 − k */
} cvert;

static uint32_t clip_id(bool ref_b, uint32_t ref, int32_t line, int side) {
  if (line >= 0)
    return make_id(ref_b, ref, 2, (uint32_t)line, (uint32_t)side);
  return make_id(ref_b, ref, 3, (uint32_t)(-1 - line), (uint32_t)side);
}

/* Sutherland–Hodgman: keeps the part of the closed polygon with
 * dot(n, x) ≤ off. */
static int clip_polygon(const cvert *in, int n, vec3 pn, double off, int side, bool ref_b,
                        uint32_t ref, cvert *out) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const cvert *prv = &in[(i + n - 1) % n], *cur = &in[i];
    double dp = v3_dot(pn, prv->p) - off, dc = v3_dot(pn, cur->p) - off;
    if (dc <= 0.0) {
      if (dp > 0.0) { /* entering: the new point continues prv's boundary */
        double t = dp / (dp - dc);
        out[m].p = v3_add(prv->p, v3_scale(v3_sub(cur->p, prv->p), t));
        out[m].id = clip_id(ref_b, ref, prv->line, side);
        out[m].line = prv->line;
        ++m;
      }
      out[m++] = *cur;
    } else if (dp <= 0.0) { /* leaving: the boundary now runs along the side */
      double t = dp / (dp - dc);
      out[m].p = v3_add(prv->p, v3_scale(v3_sub(cur->p, prv->p), t));
      out[m].id = clip_id(ref_b, ref, prv->line, side);
      out[m].line = -1 - side;
      ++m;
    }
  }
  return m;
}

/* An open segment (2 vertices) against the same half-space. */
static int clip_segment(cvert *v, vec3 pn, double off, int side, bool ref_b, uint32_t ref) {
  double d0 = v3_dot(pn, v[0].p) - off, d1 = v3_dot(pn, v[1].p) - off;
  if (d0 > 0.0 && d1 > 0.0)
    return 0;
  if (d0 > 0.0 || d1 > 0.0) {
    int o = d0 > 0.0 ? 0 : 1; /* the end outside */
    double t = d0 / (d0 - d1);
    v[o].p = v3_add(v[0].p, v3_scale(v3_sub(v[1].p, v[0].p), t));
    v[o].id = clip_id(ref_b, ref, v[0].line, side);
  }
  return 2;
}

static int32_t finish_manifold(contact_point *cand, int32_t count, vec3 normal, manifold *out) {
  out->normal = normal;
  if (count > MANIFOLD_MAX_POINTS) {
    out->point_count = manifold_reduce(cand, count, normal, out->points);
  } else {
    for (int32_t i = 0; i < count; ++i)
      out->points[i] = cand[i];
    out->point_count = count;
  }
  return out->point_count;
}

/* Reference face ref (outward normal nr) against the incident feature inc.
 * Writes candidates; returns their number. */
static int clip_features(const feature *ref, const feature *inc, bool ref_b, double margin,
                         contact_point *cand) {
  cvert buf[2][2 * FEATURE_MAX + 4];
  int n = inc->n;
  for (int i = 0; i < n; ++i) {
    buf[0][i].p = inc->p[i];
    buf[0][i].id = make_id(ref_b, ref->code, 1, inc->vid[i], 0);
    buf[0][i].line = (int32_t)inc->vid[i];
  }
  vec3 nr = ref->normal;
  int cur = 0;
  for (int k = 0; k < ref->n && n > 0; ++k) {
    vec3 r0 = ref->p[k], r1 = ref->p[(k + 1) % ref->n];
    vec3 sn;
    if (!v3_normalize(v3_cross(v3_sub(r1, r0), nr), &sn, 0.0))
      continue; /* a repeated vertex: no side */
    double off = v3_dot(sn, r0);
    if (n >= 3) {
      n = clip_polygon(buf[cur], n, sn, off, k, ref_b, ref->code, buf[1 - cur]);
      cur = 1 - cur;
    } else if (n == 2) {
      n = clip_segment(buf[cur], sn, off, k, ref_b, ref->code);
    } else if (v3_dot(sn, buf[cur][0].p) - off > 0.0) {
      n = 0;
    }
  }
  double plane = -INFINITY;
  for (int k = 0; k < ref->n; ++k)
    plane = fmax(plane, v3_dot(nr, ref->p[k]));
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double sep = v3_dot(nr, buf[cur][i].p) - plane;
    if (!(-sep > -margin))
      continue;
    cand[m].position = v3_madd(buf[cur][i].p, nr, -0.5 * sep);
    cand[m].depth = -sep;
    cand[m].feature_id = buf[cur][i].id;
    ++m;
  }
  return m;
}

int32_t lcp__collide_convex(const shape *a, const xform *xa, const shape *b, const xform *xb,
                            double margin, manifold *out) {
  if (!out || !shape_ok(a, xa) || !shape_ok(b, xb) || !(margin >= 0.0))
    return LCP_ERR_INVALID_ARGUMENT;
  out->point_count = 0;
  out->normal = v3(0.0, 0.0, 1.0);
  double scale = pair_scale(a, xa, b, xb);
  pair core = {a, b, xa, xb, true};
  gjk_state g;
  lcp__gjk_run(&core, scale, &g);
  double ra = core_radius(a), rb = core_radius(b);

  /* Normal and depth of the closest (or deepest) pair. */
  vec3 n, wa, wb;
  double depth;
  double dcore = v3_len(g.v);
  if (!g.overlap && dcore > 1e-9 * scale) {
    double dist = dcore - ra - rb;
    if (dist > margin)
      return 0;
    n = v3_scale(g.v, -1.0 / dcore);
    lcp__gjk_witnesses(&g, &wa, &wb);
    wa = v3_madd(wa, n, ra);
    wb = v3_madd(wb, n, -rb);
    depth = -dist;
  } else {
    /* overlapping or touching cores: the normal is only well defined by EPA */
    pair full = {a, b, xa, xb, false};
    epa_out r;
    lcp__epa_run(&full, &g.s, scale, &r);
    n = r.normal;
    wa = r.pa;
    wb = r.pb;
    depth = r.depth;
    if (!(depth > -margin))
      return 0;
  }

  /* Features facing each other; the face best aligned with the normal is the
   * reference (A's on a near tie, so the choice does not flicker). */
  feature fa, fb;
  shape_feature(a, xa, n, &fa);
  shape_feature(b, xb, v3_neg(n), &fb);
  double align_a = fa.n >= 3 ? v3_dot(fa.normal, n) : -2.0;
  double align_b = fb.n >= 3 ? -v3_dot(fb.normal, n) : -2.0;
  contact_point cand[2 * FEATURE_MAX + 4];
  int m = 0;
  if (fa.n >= 3 || fb.n >= 3) {
    bool ref_b = !(fa.n >= 3 && align_a >= align_b - 1e-6);
    const feature *ref = ref_b ? &fb : &fa;
    feature inc;
    /* the incident feature again, facing the reference face exactly */
    if (ref_b)
      shape_feature(a, xa, v3_neg(ref->normal), &inc);
    else
      shape_feature(b, xb, v3_neg(ref->normal), &inc);
    m = clip_features(ref, &inc, ref_b, margin, cand);
    if (m > 0)
      return finish_manifold(cand, m, ref_b ? v3_neg(ref->normal) : ref->normal, out);
  } else if (fa.n == 2 && fb.n == 2) {
    /* parallel edges: the two ends of their common stretch */
    vec3 da = v3_sub(fa.p[1], fa.p[0]), db = v3_sub(fb.p[1], fb.p[0]);
    double la = v3_len(da), lb = v3_len(db);
    if (la > 0.0 && lb > 0.0 && v3_len(v3_cross(da, db)) <= sin(FEATURE_ANGLE) * la * lb) {
      vec3 ua = v3_scale(da, 1.0 / la), ub = v3_scale(db, 1.0 / lb);
      double t0 = v3_dot(v3_sub(fb.p[0], fa.p[0]), ua), t1 = v3_dot(v3_sub(fb.p[1], fa.p[0]), ua);
      double lo = fmax(0.0, fmin(t0, t1)), hi = fmin(la, fmax(t0, t1));
      if (hi - lo > 1e-9 * scale) {
        double ts[2] = {lo, hi};
        for (int k = 0; k < 2; ++k) {
          vec3 pa = v3_madd(fa.p[0], ua, ts[k]);
          double u = v3_dot(v3_sub(pa, fb.p[0]), ub);
          vec3 pb = v3_madd(fb.p[0], ub, fmin(fmax(u, 0.0), lb));
          double dk = v3_dot(v3_sub(pa, pb), n);
          if (dk > -margin) {
            cand[m].position = v3_scale(v3_add(pa, pb), 0.5);
            cand[m].depth = dk;
            cand[m].feature_id = make_id(false, fa.code, 0, fb.code, (uint32_t)k + 1);
            ++m;
          }
        }
        if (m > 0)
          return finish_manifold(cand, m, n, out);
      }
    }
  }
  /* A single closest pair: vertex contacts, crossing edges, or clipping that
   * lost everything to rounding. */
  cand[0].position = v3_scale(v3_add(wa, wb), 0.5);
  cand[0].depth = depth;
  cand[0].feature_id = make_id(false, fa.code, 0, fb.code, 0);
  return finish_manifold(cand, 1, n, out);
}
