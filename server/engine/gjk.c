/* The general convex narrow phase (DESIGN.md §3 step 3, seed 004 "GJK"):
 * support mappings and boxes of every shape, GJK distance, EPA penetration
 * and the clipped contact manifold of any convex pair.
 *
 * GJK (Gilbert, Johnson & Keerthi, "A fast procedure for computing the
 * distance between complex objects in three-dimensional space", 1988) walks
 * a simplex of the Minkowski difference A − B towards the origin; the point
 * of the simplex closest to the origin is found with the signed-volumes
 * method (Montanari, Brown & Sinha, "Improving the GJK algorithm for faster
 * and more reliable distance queries between convex objects", ACM TOG 2017),
 * which drops to a face or an edge by comparing the signs of sub-determinants
 * instead of dividing by them, and so stays reliable for thin simplices.
 * As in van den Bergen ("Collision Detection in Interactive 3D Environments",
 * 2003, §4.3), rounded shapes run on their cores (sphere: its centre,
 * capsule: its segment) and the radii are added afterwards, so those pairs
 * converge in a few exact steps instead of approaching a curved surface.
 *
 * EPA (van den Bergen 2001, "Proximity queries and penetration depth
 * computation on 3D game objects") grows a polytope inside A − B from the GJK
 * simplex until the face nearest the origin is on the boundary.
 *
 * The manifold follows the clipping scheme of the seed's "contact region"
 * (and of Gregorius, "The separating axis test between convex polyhedra",
 * GDC 2013): the face of either shape best aligned with the normal is the
 * reference, the other shape's feature facing it is clipped against its side
 * planes (Sutherland & Hodgman, "Reentrant polygon clipping", 1974), and the
 * points below the reference plane within the margin are kept.
 */
#include "collide.h"

#include <float.h>
#include <string.h>

/* ---- support mappings ---- */

static double sgn_pos(double x) { return x >= 0.0 ? 1.0 : -1.0; }

vec3 shape_support_local(const shape *s, vec3 d) {
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
    const hull *h = s->hull;
    int32_t best = 0;
    double bd = -INFINITY;
    for (int32_t i = 0; i < h->vertex_count; ++i) {
      double v = v3_dot(h->vertices[i], d);
      if (v > bd) {
        bd = v;
        best = i;
      }
    }
    return h->vertices[best];
  }
  default:
    return v3_zero(); /* planes are not convex-finite: never asked */
  }
}

/* The radius GJK leaves out: the shape is its core swept by this sphere. */
static double core_radius(const shape *s) {
  return (s->type == LCP_SHAPE_SPHERE || s->type == LCP_SHAPE_CAPSULE) ? s->radius : 0.0;
}

static vec3 core_support_local(const shape *s, vec3 d) {
  if (s->type == LCP_SHAPE_SPHERE)
    return v3_zero();
  if (s->type == LCP_SHAPE_CAPSULE)
    return v3(0.0, 0.0, sgn_pos(d.z) * s->half_length);
  return shape_support_local(s, d);
}

/* A length scale of the shape, for relative tolerances. */
static double shape_size(const shape *s) {
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
    return s->radius;
  case LCP_SHAPE_BOX:
    return v3_len(s->half_extents);
  case LCP_SHAPE_CAPSULE:
    return s->half_length + s->radius;
  case LCP_SHAPE_CYLINDER:
    return sqrt(s->radius * s->radius + s->half_length * s->half_length);
  case LCP_SHAPE_HULL:
    return s->hull->bounding_radius;
  default:
    return 0.0;
  }
}

void shape_aabb(const shape *s, const xform *x, vec3 *lo, vec3 *hi) {
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

/* ---- Minkowski difference ---- */

typedef struct mpoint {
  vec3 w; /* a − b */
  vec3 a; /* on A, world */
  vec3 b; /* on B, world */
} mpoint;

typedef struct pair {
  const shape *sa, *sb;
  const xform *xa, *xb;
  bool core; /* support of the cores (radii left out) */
} pair;

static vec3 support_world(const shape *s, const xform *x, vec3 d, bool core) {
  vec3 dl = xf_inv_vector(x, d);
  return xf_point(x, core ? core_support_local(s, dl) : shape_support_local(s, dl));
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

typedef struct simplex {
  mpoint p[4];
  double lambda[4]; /* barycentric coordinates of the closest point */
  int n;
} simplex;

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
 * triangle's projection is largest (Montanari et al. §4.2). */
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
 * coordinates of the origin times the determinant (Montanari et al. §4.3). */
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

typedef struct gjk_state {
  simplex s;
  vec3 v; /* closest point of the simplex; a − b of the witnesses */
  int32_t iterations;
  bool overlap; /* the origin is in the simplex (within rounding) */
} gjk_state;

static void gjk_run(const pair *p, double scale, gjk_state *g) {
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

static void gjk_witnesses(const gjk_state *g, vec3 *pa, vec3 *pb) {
  vec3 a = v3_zero(), b = v3_zero();
  for (int i = 0; i < g->s.n; ++i) {
    a = v3_madd(a, g->s.p[i].a, g->s.lambda[i]);
    b = v3_madd(b, g->s.p[i].b, g->s.lambda[i]);
  }
  *pa = a;
  *pb = b;
}

static bool shape_ok(const shape *s, const xform *x) {
  if (!s || !x)
    return false;
  switch (s->type) {
  case LCP_SHAPE_SPHERE:
  case LCP_SHAPE_BOX:
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    return true;
  case LCP_SHAPE_HULL:
    return s->hull && s->hull->vertex_count > 0;
  default:
    return false;
  }
}

static double pair_scale(const shape *a, const xform *xa, const shape *b, const xform *xb) {
  double s = shape_size(a) + shape_size(b) + v3_len(v3_sub(xa->p, xb->p));
  return s > 0.0 ? s : 1.0;
}

int gjk_distance(const shape *a, const xform *xa, const shape *b, const xform *xb,
                 gjk_result *out) {
  if (!out || !shape_ok(a, xa) || !shape_ok(b, xb))
    return LCP_ERR_INVALID_ARGUMENT;
  pair p = {a, b, xa, xb, true};
  gjk_state g;
  gjk_run(&p, pair_scale(a, xa, b, xb), &g);
  vec3 pa, pb;
  gjk_witnesses(&g, &pa, &pb);
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

typedef struct epa_out {
  double depth;
  vec3 normal;
  vec3 pa, pb;
} epa_out;

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
static void epa_run(const pair *full, const simplex *start, double scale, epa_out *out) {
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

int epa_penetration(const shape *a, const xform *xa, const shape *b, const xform *xb,
                    epa_result *out) {
  if (!out || !shape_ok(a, xa) || !shape_ok(b, xb))
    return LCP_ERR_INVALID_ARGUMENT;
  double scale = pair_scale(a, xa, b, xb);
  pair core = {a, b, xa, xb, true};
  gjk_state g;
  gjk_run(&core, scale, &g);
  vec3 pa, pb;
  gjk_witnesses(&g, &pa, &pb);
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
  epa_run(&full, &g.s, scale, &r);
  out->depth = fmax(r.depth, 0.0);
  out->normal = r.normal;
  out->point_a = r.pa;
  out->point_b = r.pb;
  return LCP_OK;
}

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
    int32_t bv = 0;
    double bd = -INFINITY;
    for (int32_t k = 0; k < h->vertex_count; ++k) {
      double v = v3_dot(h->vertices[k], dl);
      if (v > bd) {
        bd = v;
        bv = k;
      }
    }
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

int32_t collide_convex(const shape *a, const xform *xa, const shape *b, const xform *xb,
                       double margin, manifold *out) {
  if (!out || !shape_ok(a, xa) || !shape_ok(b, xb) || !(margin >= 0.0))
    return LCP_ERR_INVALID_ARGUMENT;
  out->point_count = 0;
  out->normal = v3(0.0, 0.0, 1.0);
  double scale = pair_scale(a, xa, b, xb);
  pair core = {a, b, xa, xb, true};
  gjk_state g;
  gjk_run(&core, scale, &g);
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
    gjk_witnesses(&g, &wa, &wb);
    wa = v3_madd(wa, n, ra);
    wb = v3_madd(wb, n, -rb);
    depth = -dist;
  } else {
    /* overlapping or touching cores: the normal is only well defined by EPA */
    pair full = {a, b, xa, xb, false};
    epa_out r;
    epa_run(&full, &g.s, scale, &r);
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
