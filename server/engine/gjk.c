/* SPDX-License-Identifier: Apache-2.0 */
/* The general convex narrow phase, part one: support mappings and boxes of
 * every shape, GJK distance and EPA penetration (the clipped contact
 * manifold of a convex pair is in convex_contact.c).
 *
 * GJK (Gilbert, Johnson & Keerthi, "A fast procedure for computing the
 * distance between complex objects in three-dimensional space", 1988) walks
 * a simplex of the Minkowski difference A − B towards the origin; the point
 * of the simplex closest to the origin is found with the signed-volumes
 * method (Montanari, Petrinic & Barbieri, "Improving the GJK algorithm for faster
 * and more reliable distance queries between convex objects", ACM TOG 2017),
 * which drops to a face or an edge by comparing the signs of sub-determinants
 * instead of dividing by them, and so stays reliable for thin simplices.
 * As in van den Bergen ("Collision Detection in Interactive 3D Environments",
 * 2003, section 4.3), rounded shapes run on their cores (sphere: its centre,
 * capsule: its segment) and the radii are added afterwards, so those pairs
 * converge in a few exact steps instead of approaching a curved surface.
 *
 * EPA (van den Bergen 2001, "Proximity queries and penetration depth
 * computation on 3D game objects") grows a polytope inside A − B from the GJK
 * simplex until the face nearest the origin is on the boundary.
 */
#include "gjk_internal.h"

#include <float.h>
#include <string.h>

/* ---- support mappings of the cores (shape.c has the full shapes') ---- */

static vec3 core_support_local(const shape *s, vec3 d) {
  if (s->type == LCP_SHAPE_SPHERE)
    return v3_zero();
  if (s->type == LCP_SHAPE_CAPSULE)
    return v3(0.0, 0.0, sgn_pos(d.z) * s->half_length);
  return lcp__shape_support_local(s, d);
}

/* ---- Minkowski difference ---- */

static vec3 support_world(const shape *s, const xform *x, vec3 d, bool core) {
  vec3 dl = xf_inv_vector(x, d);
  return xf_point(x, core ? core_support_local(s, dl) : lcp__shape_support_local(s, dl));
}

/* Support of A − B in direction d: the farthest a along d minus the farthest
 * b along −d. */
static mpoint pair_support(const pair *p, vec3 d) {
  mpoint m;
  m.a = support_world(p->sa, p->xa, d, p->core);
  m.b = support_world(p->sb, p->xb, v3_neg(d), p->core);
  m.w = v3_sub(m.a, m.b);
  return m;
}

/* ---- signed-volumes closest point of a simplex to the origin ---- */

typedef struct sub_result {
  int mask;         /* vertices with λ > 0 */
  double lambda[4]; /* indexed like the simplex */
  double vv;        /* |v|² of the closest point */
} sub_result;

static bool same_sign(double a, double b) { return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0); }

static void sub_set_point(sub_result *r, const vec3 *w, int i) {
  memset(r, 0, sizeof *r);
  r->mask = 1 << i;
  r->lambda[i] = 1.0;
  r->vv = v3_len2(w[i]);
}

static void sub_finish(sub_result *r, const vec3 *w) {
  vec3 v = v3_zero();
  for (int i = 0; i < 4; ++i)
    if (r->mask & (1 << i))
      v = v3_madd(v, w[i], r->lambda[i]);
  r->vv = v3_len2(v);
}

/* Segment (i, j). */
static void sd1(const vec3 *w, int i, int j, sub_result *r) {
  vec3 t = v3_sub(w[j], w[i]);
  double tt = v3_len2(t);
  double u = tt > 0.0 ? -v3_dot(w[i], t) / tt : 0.0;
  if (!(u > 0.0)) {
    sub_set_point(r, w, i);
    return;
  }
  if (!(u < 1.0)) {
    sub_set_point(r, w, j);
    return;
  }
  memset(r, 0, sizeof *r);
  r->mask = (1 << i) | (1 << j);
  r->lambda[i] = 1.0 - u;
  r->lambda[j] = u;
  sub_finish(r, w);
}

static void keep_best(sub_result *best, const sub_result *cand) {
  if (best->mask == 0 || cand->vv < best->vv)
    *best = *cand;
}

/* Signed area of (a, b, c) in the coordinate plane (J, K). */
static double area2(vec3 a, vec3 b, vec3 c, int J, int K) {
  return (v3_get(b, J) - v3_get(a, J)) * (v3_get(c, K) - v3_get(a, K)) -
         (v3_get(b, K) - v3_get(a, K)) * (v3_get(c, J) - v3_get(a, J));
}

/* Triangle (i, j, k): project the origin on its plane, then compare the
 * signed areas of the sub-triangles in the coordinate plane where the
 * triangle's projection is largest (Montanari et al., section 4.2). */
static void sd2(const vec3 *w, int i, int j, int k, sub_result *r) {
  vec3 e1 = v3_sub(w[j], w[i]), e2 = v3_sub(w[k], w[i]);
  vec3 n = v3_cross(e1, e2);
  double nn = v3_len2(n);
  int idx[3] = {i, j, k};
  bool degenerate = !(nn > 1e-26 * v3_len2(e1) * v3_len2(e2));
  double C[3] = {0.0, 0.0, 0.0}, mu = 0.0;
  if (!degenerate) {
    vec3 p0 = v3_scale(n, v3_dot(w[i], n) / nn);
    vec3 an = v3_abs(n);
    int I = (an.x >= an.y && an.x >= an.z) ? 0 : (an.y >= an.z ? 1 : 2);
    int J = (I + 1) % 3, K = (I + 2) % 3; /* cyclic, so area2 has the sign of n_I */
    mu = area2(w[i], w[j], w[k], J, K);
    C[0] = area2(p0, w[j], w[k], J, K);
    C[1] = area2(w[i], p0, w[k], J, K);
    C[2] = area2(w[i], w[j], p0, J, K);
    if (same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2])) {
      double s = C[0] + C[1] + C[2];
      memset(r, 0, sizeof *r);
      r->mask = (1 << i) | (1 << j) | (1 << k);
      for (int m = 0; m < 3; ++m)
        r->lambda[idx[m]] = C[m] / s;
      sub_finish(r, w);
      return;
    }
  }
  sub_result best;
  memset(&best, 0, sizeof best);
  for (int m = 0; m < 3; ++m) {
    if (!degenerate && same_sign(mu, C[m]))
      continue; /* the origin is on the inner side of the edge opposite m */
    sub_result c;
    sd1(w, idx[(m + 1) % 3], idx[(m + 2) % 3], &c);
    keep_best(&best, &c);
  }
  *r = best;
}

static double det3(vec3 a, vec3 b, vec3 c) { return v3_dot(a, v3_cross(b, c)); }

/* Tetrahedron: the cofactors of [w0 w1 w2 w3; 1 1 1 1] are the barycentric
 * coordinates of the origin times the determinant (Montanari et al., section 4.3). */
static void sd3(const vec3 *w, sub_result *r) {
  double C[4] = {-det3(w[1], w[2], w[3]), det3(w[0], w[2], w[3]), -det3(w[0], w[1], w[3]),
                 det3(w[0], w[1], w[2])};
  double mu = C[0] + C[1] + C[2] + C[3];
  double mag = fabs(C[0]) + fabs(C[1]) + fabs(C[2]) + fabs(C[3]);
  bool degenerate = !(fabs(mu) > 1e-13 * mag);
  if (!degenerate && same_sign(mu, C[0]) && same_sign(mu, C[1]) && same_sign(mu, C[2]) &&
      same_sign(mu, C[3])) {
    memset(r, 0, sizeof *r);
    r->mask = 15;
    for (int m = 0; m < 4; ++m)
      r->lambda[m] = C[m] / mu;
    r->vv = 0.0;
    return;
  }
  static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  sub_result best;
  memset(&best, 0, sizeof best);
  for (int m = 0; m < 4; ++m) {
    if (!degenerate && same_sign(mu, C[m]))
      continue;
    sub_result c;
    sd2(w, face[m][0], face[m][1], face[m][2], &c);
    keep_best(&best, &c);
  }
  *r = best;
}

/* Replaces the simplex by the smallest sub-simplex holding the point closest
 * to the origin; returns that point. */
static vec3 simplex_reduce(simplex *s) {
  vec3 w[4];
  for (int i = 0; i < s->n; ++i)
    w[i] = s->p[i].w;
  sub_result r;
  if (s->n == 1)
    sub_set_point(&r, w, 0);
  else if (s->n == 2)
    sd1(w, 0, 1, &r);
  else if (s->n == 3)
    sd2(w, 0, 1, 2, &r);
  else
    sd3(w, &r);
  int k = 0;
  vec3 v = v3_zero();
  for (int i = 0; i < s->n; ++i)
    if (r.mask & (1 << i)) {
      s->p[k] = s->p[i];
      s->lambda[k] = r.lambda[i];
      v = v3_madd(v, s->p[k].w, s->lambda[k]);
      ++k;
    }
  s->n = k;
  return r.mask == 15 ? v3_zero() : v;
}

#define GJK_MAX_ITERATIONS 128
/* Stop when the lower bound v·w/|v| is within this fraction of |v|. */
#define GJK_RELATIVE_TOLERANCE 1e-13

void lcp__gjk_run(const pair *p, double scale, gjk_state *g) {
  vec3 d = v3_sub(p->xb->p, p->xa->p);
  if (!(v3_len2(d) > 0.0))
    d = v3(1.0, 0.0, 0.0);
  g->s.n = 1;
  g->s.p[0] = pair_support(p, d);
  g->s.lambda[0] = 1.0;
  g->v = g->s.p[0].w;
  g->overlap = false;
  g->iterations = 0;
  double tiny = 1e-14 * scale;
  for (int it = 0; it < GJK_MAX_ITERATIONS; ++it) {
    g->iterations = it + 1;
    double vv = v3_len2(g->v);
    if (vv <= tiny * tiny) {
      g->overlap = true;
      return;
    }
    mpoint w = pair_support(p, v3_neg(g->v));
    /* |v|² − v·w bounds |v|·(|v| − distance): relative progress, with a floor
     * at the rounding level of v·w. */
    double gap = vv - v3_dot(g->v, w.w);
    if (gap <= GJK_RELATIVE_TOLERANCE * vv || gap <= 16.0 * DBL_EPSILON * scale * sqrt(vv))
      return;
    for (int i = 0; i < g->s.n; ++i)
      if (v3_len2(v3_sub(w.w, g->s.p[i].w)) <= tiny * tiny)
        return; /* no new support point: converged */
    simplex saved = g->s;
    vec3 saved_v = g->v;
    g->s.p[g->s.n++] = w;
    g->v = simplex_reduce(&g->s);
    if (g->s.n == 4) {
      g->overlap = true;
      g->v = v3_zero();
      return;
    }
    if (!(v3_len2(g->v) < vv)) {
      /* rounding stalled the descent: the previous simplex is the answer */
      g->s = saved;
      g->v = saved_v;
      return;
    }
  }
}

void lcp__gjk_witnesses(const gjk_state *g, vec3 *pa, vec3 *pb) {
  vec3 a = v3_zero(), b = v3_zero();
  for (int i = 0; i < g->s.n; ++i) {
    a = v3_madd(a, g->s.p[i].a, g->s.lambda[i]);
    b = v3_madd(b, g->s.p[i].b, g->s.lambda[i]);
  }
  *pa = a;
  *pb = b;
}

int lcp__gjk_distance(const shape *a, const xform *xa, const shape *b, const xform *xb,
                      gjk_result *out) {
  if (!out || !shape_ok(a, xa) || !shape_ok(b, xb))
    return LCP_ERR_INVALID_ARGUMENT;
  pair p = {a, b, xa, xb, true};
  gjk_state g;
  lcp__gjk_run(&p, pair_scale(a, xa, b, xb), &g);
  vec3 pa, pb;
  lcp__gjk_witnesses(&g, &pa, &pb);
  out->iterations = g.iterations;
  double ra = core_radius(a), rb = core_radius(b);
  vec3 n;
  if (g.overlap || !v3_normalize(v3_neg(g.v), &n, 0.0)) {
    /* the cores intersect: pa (= pb) is a common point */
    out->distance = 0.0;
    out->overlap = true;
    out->point_a = pa;
    out->point_b = pa;
    return LCP_OK;
  }
  double d = v3_len(g.v) - ra - rb;
  out->overlap = !(d > 0.0);
  out->distance = d > 0.0 ? d : 0.0;
  /* on the surfaces along the line of the cores' closest points (they cross
   * over when the radii overlap) */
  out->point_a = v3_madd(pa, n, ra);
  out->point_b = v3_madd(pb, n, -rb);
  return LCP_OK;
}

/* ---- EPA ---- */

#define EPA_MAX_ITERATIONS 100
#define EPA_MAX_VERTICES (4 + EPA_MAX_ITERATIONS)
#define EPA_MAX_FACES (2 * EPA_MAX_VERTICES + 8)

typedef struct epa_face {
  int16_t v[3];   /* counter-clockwise seen from outside */
  int16_t adj[3]; /* across edge (v[i], v[i+1]) */
  vec3 n;         /* outward unit normal */
  double d;       /* dot(n, vertex): distance of the plane from the origin */
  bool alive;
  bool visible;
} epa_face;

typedef struct epa_poly {
  mpoint v[EPA_MAX_VERTICES];
  int nv;
  epa_face f[EPA_MAX_FACES];
  int nf;
} epa_poly;

static bool epa_set_face(epa_poly *e, int id, int a, int b, int c) {
  epa_face *f = &e->f[id];
  f->v[0] = (int16_t)a;
  f->v[1] = (int16_t)b;
  f->v[2] = (int16_t)c;
  f->adj[0] = f->adj[1] = f->adj[2] = -1;
  f->alive = true;
  f->visible = false;
  vec3 A = e->v[a].w, B = e->v[b].w, C = e->v[c].w;
  if (!v3_normalize(v3_cross(v3_sub(B, A), v3_sub(C, A)), &f->n, 0.0))
    return false;
  /* average of the three vertices' offsets: symmetric in the vertices */
  f->d = (v3_dot(f->n, A) + v3_dot(f->n, B) + v3_dot(f->n, C)) / 3.0;
  return true;
}

/* Grows the GJK simplex (which holds the origin, possibly on its boundary)
 * into a tetrahedron by support points off its affine hull. Returns false
 * when A − B is flat: the penetration depth is then 0 along *flat_normal. */
static bool epa_blow_up(const pair *p, simplex s, double tol, epa_poly *e, vec3 *flat_normal) {
  static const vec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  *flat_normal = v3(0.0, 0.0, 1.0);
  if (s.n == 1) {
    for (int k = 0; k < 6 && s.n == 1; ++k) {
      mpoint w = pair_support(p, axes[k]);
      if (v3_len(v3_sub(w.w, s.p[0].w)) > tol)
        s.p[s.n++] = w;
    }
    if (s.n == 1)
      return false;
  }
  if (s.n == 2) {
    vec3 dir, t1, t2;
    v3_normalize(v3_sub(s.p[1].w, s.p[0].w), &dir, 0.0);
    v3_tangent_basis(dir, &t1, &t2);
    *flat_normal = t1;
    for (int k = 0; k < 6 && s.n == 2; ++k) {
      double ang = LCP_PI / 3.0 * k;
      vec3 d = v3_add(v3_scale(t1, cos(ang)), v3_scale(t2, sin(ang)));
      mpoint w = pair_support(p, d);
      vec3 rel = v3_sub(w.w, s.p[0].w);
      if (v3_len(v3_cross(rel, dir)) > tol)
        s.p[s.n++] = w;
    }
    if (s.n == 2)
      return false;
  }
  if (s.n == 3) {
    vec3 n;
    if (!v3_normalize(v3_cross(v3_sub(s.p[1].w, s.p[0].w), v3_sub(s.p[2].w, s.p[0].w)), &n, 0.0))
      return false;
    *flat_normal = n;
    mpoint w = pair_support(p, n);
    if (!(v3_dot(n, v3_sub(w.w, s.p[0].w)) > tol))
      w = pair_support(p, v3_neg(n));
    if (!(fabs(v3_dot(n, v3_sub(w.w, s.p[0].w))) > tol))
      return false;
    s.p[s.n++] = w;
  }
  for (int i = 0; i < 4; ++i)
    e->v[i] = s.p[i];
  e->nv = 4;
  /* (0, 1, 2) must face away from vertex 3; the other faces then reverse its
   * edges (as in hull.c's initial tetrahedron). */
  vec3 A = e->v[0].w;
  if (det3(v3_sub(e->v[1].w, A), v3_sub(e->v[2].w, A), v3_sub(e->v[3].w, A)) > 0.0) {
    mpoint t = e->v[1];
    e->v[1] = e->v[2];
    e->v[2] = t;
  }
  static const int tv[4][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}};
  for (int k = 0; k < 4; ++k)
    if (!epa_set_face(e, k, tv[k][0], tv[k][1], tv[k][2]))
      return false;
  e->nf = 4;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 3; ++i) {
      int a = e->f[k].v[i], b = e->f[k].v[(i + 1) % 3];
      for (int m = 0; m < 4; ++m)
        for (int j = 0; j < 3; ++j)
          if (e->f[m].v[j] == b && e->f[m].v[(j + 1) % 3] == a)
            e->f[k].adj[i] = (int16_t)m;
    }
  return true;
}

/* Replaces the faces visible from the new vertex by a cone over their
 * horizon. Returns false when the horizon is not one simple loop (rounding):
 * the caller then keeps the current answer. */
static bool epa_expand(epa_poly *e, int first, int vi, double vis_tol) {
  int queue[EPA_MAX_FACES], nq = 0;
  vec3 W = e->v[vi].w;
  for (int k = 0; k < e->nf; ++k)
    e->f[k].visible = false;
  e->f[first].visible = true;
  queue[nq++] = first;
  for (int q = 0; q < nq; ++q) {
    const epa_face *g = &e->f[queue[q]];
    for (int i = 0; i < 3; ++i) {
      epa_face *h = &e->f[g->adj[i]];
      if (h->visible)
        continue;
      if (v3_dot(h->n, W) - h->d > vis_tol) {
        h->visible = true;
        queue[nq++] = g->adj[i];
      }
    }
  }
  int hz_from[EPA_MAX_FACES], hz_to[EPA_MAX_FACES], hz_face[EPA_MAX_FACES], nh = 0;
  for (int q = 0; q < nq; ++q) {
    const epa_face *g = &e->f[queue[q]];
    for (int i = 0; i < 3; ++i)
      if (!e->f[g->adj[i]].visible) {
        hz_from[nh] = g->v[i];
        hz_to[nh] = g->v[(i + 1) % 3];
        hz_face[nh] = g->adj[i];
        ++nh;
      }
  }
  if (nh < 3)
    return false;
  int order[EPA_MAX_FACES];
  order[0] = 0;
  for (int k = 1; k < nh; ++k) {
    int found = -1;
    for (int j = 0; j < nh; ++j)
      if (hz_from[j] == hz_to[order[k - 1]]) {
        if (found >= 0)
          return false;
        found = j;
      }
    if (found <= 0)
      return false;
    order[k] = found;
  }
  if (hz_to[order[nh - 1]] != hz_from[0])
    return false;
  /* every new face must have a normal, or the cone is not built at all */
  for (int k = 0; k < nh; ++k) {
    vec3 A = e->v[hz_from[k]].w, B = e->v[hz_to[k]].w;
    if (!(v3_len2(v3_cross(v3_sub(B, A), v3_sub(W, A))) > 0.0))
      return false;
  }
  /* free slots: the visible faces first, then fresh ones */
  int slots[EPA_MAX_FACES], ns = 0;
  for (int q = 0; q < nq; ++q)
    slots[ns++] = queue[q];
  while (ns < nh) {
    if (e->nf >= EPA_MAX_FACES)
      return false;
    slots[ns++] = e->nf++;
  }
  for (int q = 0; q < nq; ++q)
    e->f[queue[q]].alive = false;
  for (int k = 0; k < nh; ++k) {
    int h = order[k], id = slots[k];
    epa_set_face(e, id, hz_from[h], hz_to[h], vi);
    e->f[id].adj[0] = (int16_t)hz_face[h];
    epa_face *bf = &e->f[hz_face[h]];
    for (int j = 0; j < 3; ++j)
      if (bf->v[j] == hz_to[h] && bf->v[(j + 1) % 3] == hz_from[h])
        bf->adj[j] = (int16_t)id;
  }
  for (int k = 0; k < nh; ++k) {
    e->f[slots[k]].adj[1] = (int16_t)slots[(k + 1) % nh];
    e->f[slots[k]].adj[2] = (int16_t)slots[(k + nh - 1) % nh];
  }
  for (int k = 0; k < e->nf; ++k)
    e->f[k].visible = false;
  return true;
}

static void epa_face_result(const epa_poly *e, int fi, epa_out *out) {
  const epa_face *f = &e->f[fi];
  out->depth = f->d;
  out->normal = f->n;
  /* barycentric coordinates of the origin's projection on the face */
  vec3 P = v3_scale(f->n, f->d);
  vec3 A = e->v[f->v[0]].w, B = e->v[f->v[1]].w, C = e->v[f->v[2]].w;
  double l[3] = {v3_dot(v3_cross(v3_sub(B, P), v3_sub(C, P)), f->n),
                 v3_dot(v3_cross(v3_sub(C, P), v3_sub(A, P)), f->n),
                 v3_dot(v3_cross(v3_sub(A, P), v3_sub(B, P)), f->n)};
  double s = 0.0;
  for (int i = 0; i < 3; ++i) {
    l[i] = fmax(l[i], 0.0);
    s += l[i];
  }
  if (!(s > 0.0)) {
    l[0] = l[1] = l[2] = 1.0;
    s = 3.0;
  }
  out->pa = v3_zero();
  out->pb = v3_zero();
  for (int i = 0; i < 3; ++i) {
    out->pa = v3_madd(out->pa, e->v[f->v[i]].a, l[i] / s);
    out->pb = v3_madd(out->pb, e->v[f->v[i]].b, l[i] / s);
  }
}

/* EPA on the full shapes from a GJK simplex holding the origin. The depth may
 * come out slightly negative when the shapes only touch. */
void lcp__epa_run(const pair *full, const simplex *start, double scale, epa_out *out) {
  epa_poly e;
  vec3 flat_n;
  double tol = 1e-12 * scale;
  if (!epa_blow_up(full, *start, 1e-10 * scale, &e, &flat_n)) {
    /* A − B has no volume: the shapes touch without overlapping */
    vec3 pa = v3_zero(), pb = v3_zero();
    for (int i = 0; i < start->n; ++i) {
      pa = v3_madd(pa, start->p[i].a, start->lambda[i]);
      pb = v3_madd(pb, start->p[i].b, start->lambda[i]);
    }
    out->depth = 0.0;
    out->normal = flat_n;
    out->pa = pa;
    out->pb = pb;
    return;
  }
  /* Besides the polytope's nearest face (a lower bound on the depth), keep
   * the smallest support value h(n) met along the face normals: moving B by
   * h(n)·n always separates the shapes, so it is an upper bound, and on a
   * curved difference (rounded cores that overlap) it is far closer than the
   * polytope, which only creeps towards the surface. */
  double upper = INFINITY;
  vec3 upper_n = v3(0.0, 0.0, 1.0);
  mpoint upper_w = e.v[0];
  bool converged = false;
  int best = 0;
  for (int it = 0; it < EPA_MAX_ITERATIONS; ++it) {
    best = -1;
    for (int k = 0; k < e.nf; ++k)
      if (e.f[k].alive && (best < 0 || e.f[k].d < e.f[best].d))
        best = k;
    const epa_face *f = &e.f[best];
    mpoint w = pair_support(full, f->n);
    double h = v3_dot(f->n, w.w);
    if (h < upper) {
      upper = h;
      upper_n = f->n;
      upper_w = w;
    }
    if (h - f->d <= tol) {
      converged = true;
      break;
    }
    if (e.nv >= EPA_MAX_VERTICES)
      break;
    e.v[e.nv] = w;
    if (!epa_expand(&e, best, e.nv, tol))
      break;
    e.nv++;
  }
  if (converged || !(upper < INFINITY)) {
    epa_face_result(&e, best < 0 ? 0 : best, out);
    return;
  }
  out->depth = upper;
  out->normal = upper_n;
  out->pa = upper_w.a;
  out->pb = upper_w.b;
}

int lcp__epa_penetration(const shape *a, const xform *xa, const shape *b, const xform *xb,
                         epa_result *out) {
  if (!out || !shape_ok(a, xa) || !shape_ok(b, xb))
    return LCP_ERR_INVALID_ARGUMENT;
  double scale = pair_scale(a, xa, b, xb);
  pair core = {a, b, xa, xb, true};
  gjk_state g;
  lcp__gjk_run(&core, scale, &g);
  vec3 pa, pb;
  lcp__gjk_witnesses(&g, &pa, &pb);
  double ra = core_radius(a), rb = core_radius(b);
  vec3 n;
  if (!g.overlap && v3_normalize(v3_neg(g.v), &n, 0.0)) {
    /* Separated cores: A − B is the cores' difference swept by a ball of
     * radius ra + rb, so the depth is exact without EPA. */
    double depth = ra + rb - v3_len(g.v);
    if (!(depth >= 0.0))
      return LCP_ERR_STATE;
    out->depth = depth;
    out->normal = n;
    out->point_a = v3_madd(pa, n, ra);
    out->point_b = v3_madd(pb, n, -rb);
    return LCP_OK;
  }
  pair full = {a, b, xa, xb, false};
  epa_out r;
  lcp__epa_run(&full, &g.s, scale, &r);
  out->depth = fmax(r.depth, 0.0);
  out->normal = r.normal;
  out->point_a = r.pa;
  out->point_b = r.pb;
  return LCP_OK;
}
