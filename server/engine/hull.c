/* SPDX-License-Identifier: Apache-2.0 */
/* Convex hulls of point sets for LCP_SHAPE_HULL.
 *
 * Two phases:
 *
 * 1. Quickhull (Barber, Dobkin & Huhdanpaa, "The Quickhull algorithm for
 *    convex hulls", ACM TOMS 1996) builds a triangulated hull. Points closer
 *    than eps to the current hull are dropped, which is what makes the result
 *    insensitive to duplicates and to noise in coplanar input. Distances are
 *    taken in floating point with an error bound; when the bound cannot
 *    decide, and always for the horizon of a new apex, an exact orientation
 *    predicate does (floating filter, then an exact expansion evaluation in
 *    the manner of Shewchuk, "Adaptive precision floating-point arithmetic and
 *    fast robust geometric predicates", 1997). So the visible region is always
 *    a disc bounded by one simple loop and the triangulation stays a closed
 *    2-manifold, slivers and duplicates included.
 *
 * 2. Faces (hull_faces.c): adjacent triangles whose vertices lie within eps of a seed
 *    triangle's plane are grouped into one face; the boundary of each group
 *    (taken from the triangulation's adjacency, so two neighbouring faces
 *    always agree on their shared boundary) is the face loop. A group whose
 *    outline is not convex within eps (possible on surfaces bumpy at that
 *    scale) is left as separate triangles. Vertices that end inside a face,
 *    or in the middle of a straight edge between exactly two faces, are
 *    removed from every loop they belong to, so a box with points on its
 *    faces and edges comes out as 8 vertices, 6 quads and 12 edges.
 *
 * The result is checked (edge pairing, Euler characteristic, every input point
 * inside) and, in the rare near-degenerate case where rounding defeats the
 * tolerances (a sliver's plane is poorly defined), rebuilt with a larger eps.
 *
 * Mass properties: exact for the polyhedron by decomposing it into tetrahedra
 * from a reference point (divergence theorem); the covariance of a tetrahedron
 * with vertices w0..w3 is V/20 (Σ wi wiᵀ + (Σ wi)(Σ wi)ᵀ) (e.g. Tonon,
 * "Explicit exact formulas for the 3-D tetrahedron inertia tensor", 2005).
 */
#include "hull_internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* ---- exact orientation predicate ----
 *
 * An expansion is a sum of doubles, nonoverlapping, in increasing magnitude,
 * zeros removed; its sign is the sign of its last (largest) component. Every
 * operation below is exact (no overflow is assumed for geometry in metres). */

#define EXP_MAX 256

static void two_sum(double a, double b, double *s, double *e) {
  double x = a + b;
  double bv = x - a;
  double av = x - bv;
  *s = x;
  *e = (a - av) + (b - bv);
}

static void two_prod(double a, double b, double *p, double *e) {
  double x = a * b;
  *p = x;
  *e = fma(a, b, -x); /* exact error of the product */
}

/* h = e + b. h may alias e (each component is read before it can be
 * overwritten). Returns the length of h (at most n + 1). */
static int exp_grow(const double *e, int n, double b, double *h) {
  double q = b;
  int k = 0;
  for (int i = 0; i < n; ++i) {
    double s, t;
    two_sum(q, e[i], &s, &t);
    if (t != 0.0)
      h[k++] = t;
    q = s;
  }
  if (q != 0.0)
    h[k++] = q;
  return k;
}

/* h = e + f; h must not alias f. */
static int exp_add(const double *e, int n, const double *f, int m, double *h) {
  if (h != e)
    memcpy(h, e, sizeof(double) * (size_t)n);
  int k = n;
  for (int j = 0; j < m; ++j)
    k = exp_grow(h, k, f[j], h);
  return k;
}

/* h = e·b; h must not alias e. */
static int exp_scale(const double *e, int n, double b, double *h) {
  int k = 0;
  for (int i = 0; i < n; ++i) {
    double p, pe;
    two_prod(e[i], b, &p, &pe);
    k = exp_grow(h, k, pe, h);
    k = exp_grow(h, k, p, h);
  }
  return k;
}

/* h = e·f (small expansions only: the result has at most 2·n·m components). */
static int exp_mul(const double *e, int n, const double *f, int m, double *h) {
  double t[EXP_MAX];
  int k = 0;
  for (int j = 0; j < m; ++j) {
    int tn = exp_scale(e, n, f[j], t);
    k = exp_add(h, k, t, tn, h);
  }
  return k;
}

static void exp_negate(double *e, int n) {
  for (int i = 0; i < n; ++i)
    e[i] = -e[i];
}

static int exp_diff(double a, double b, double *h) {
  double s, e;
  two_sum(a, -b, &s, &e);
  int k = 0;
  if (e != 0.0)
    h[k++] = e;
  if (s != 0.0)
    h[k++] = s;
  return k;
}

static int exp_sign(const double *e, int n) {
  if (n == 0)
    return 0;
  return e[n - 1] > 0.0 ? 1 : (e[n - 1] < 0.0 ? -1 : 0);
}

/* Sign of dot(p - a, (b - a) × (c - a)): +1 when p is above the triangle
 * (a, b, c) seen counter-clockwise, -1 below, 0 exactly coplanar.
 * Evaluated as -det[a - p, b - p, c - p]. */
static int orient3d_sign(vec3 a, vec3 b, vec3 c, vec3 p) {
  vec3 A = v3_sub(a, p), B = v3_sub(b, p), C = v3_sub(c, p);
  double m0 = B.y * C.z - B.z * C.y;
  double m1 = B.z * C.x - B.x * C.z;
  double m2 = B.x * C.y - B.y * C.x;
  double det = A.x * m0 + A.y * m1 + A.z * m2;
  double perm = fabs(A.x) * (fabs(B.y * C.z) + fabs(B.z * C.y)) +
                fabs(A.y) * (fabs(B.z * C.x) + fabs(B.x * C.z)) +
                fabs(A.z) * (fabs(B.x * C.y) + fabs(B.y * C.x));
  /* Shewchuk's first error bound is (7 + 56u)u·perm with u = 2^-53, which
   * covers the rounding of the differences too; 8·DBL_EPSILON is above it. */
  double bound = 8.0 * DBL_EPSILON * perm;
  if (det > bound)
    return -1;
  if (det < -bound)
    return 1;

  double ax[2], ay[2], az[2], bx[2], by[2], bz[2], cx[2], cy[2], cz[2];
  int nax = exp_diff(a.x, p.x, ax), nay = exp_diff(a.y, p.y, ay), naz = exp_diff(a.z, p.z, az);
  int nbx = exp_diff(b.x, p.x, bx), nby = exp_diff(b.y, p.y, by), nbz = exp_diff(b.z, p.z, bz);
  int ncx = exp_diff(c.x, p.x, cx), ncy = exp_diff(c.y, p.y, cy), ncz = exp_diff(c.z, p.z, cz);
  double t1[EXP_MAX], t2[EXP_MAX], m[EXP_MAX], term[EXP_MAX], sum[EXP_MAX];
  int nsum = 0;
  /* A.x (B.y C.z - B.z C.y) */
  int n1 = exp_mul(by, nby, cz, ncz, t1);
  int n2 = exp_mul(bz, nbz, cy, ncy, t2);
  exp_negate(t2, n2);
  int nm = exp_add(t1, n1, t2, n2, m);
  int nt = exp_mul(m, nm, ax, nax, term);
  nsum = exp_add(sum, nsum, term, nt, sum);
  /* A.y (B.z C.x - B.x C.z) */
  n1 = exp_mul(bz, nbz, cx, ncx, t1);
  n2 = exp_mul(bx, nbx, cz, ncz, t2);
  exp_negate(t2, n2);
  nm = exp_add(t1, n1, t2, n2, m);
  nt = exp_mul(m, nm, ay, nay, term);
  nsum = exp_add(sum, nsum, term, nt, sum);
  /* A.z (B.x C.y - B.y C.x) */
  n1 = exp_mul(bx, nbx, cy, ncy, t1);
  n2 = exp_mul(by, nby, cx, ncx, t2);
  exp_negate(t2, n2);
  nm = exp_add(t1, n1, t2, n2, m);
  nt = exp_mul(m, nm, az, naz, term);
  nsum = exp_add(sum, nsum, term, nt, sum);
  return -exp_sign(sum, nsum);
}

/* ---- phase 1: quickhull on triangles ---- */

static double qh_dist(const qh *q, int32_t face, int32_t point) {
  const qh_face *f = &q->f[face];
  return v3_dot(f->n, v3_sub(q->p[point], q->p[f->v[0]]));
}

static int qh_reserve_faces(qh *q, int32_t need) {
  if (need <= q->fcap)
    return QH_OK;
  int32_t cap = q->fcap * 2;
  if (cap < need)
    cap = need;
  qh_face *nf = realloc(q->f, sizeof(qh_face) * (size_t)cap);
  if (!nf)
    return QH_NOMEM;
  q->f = nf;
  int32_t *nq = realloc(q->queue, sizeof(int32_t) * (size_t)cap);
  if (!nq)
    return QH_NOMEM;
  q->queue = nq;
  q->fcap = cap;
  return QH_OK;
}

static int qh_reserve_horizon(qh *q, int32_t need) {
  if (need <= q->hz_cap)
    return QH_OK;
  int32_t cap = q->hz_cap * 2;
  if (cap < need)
    cap = need;
  int32_t **arrays[5] = {&q->hz_from, &q->hz_to, &q->hz_face, &q->hz_order, &q->new_faces};
  for (int i = 0; i < 5; ++i) {
    int32_t *na = realloc(*arrays[i], sizeof(int32_t) * (size_t)cap);
    if (!na)
      return QH_NOMEM;
    *arrays[i] = na;
  }
  q->hz_cap = cap;
  return QH_OK;
}

/* Appends a face; its adjacency is left for the caller. */
static int32_t qh_add_face(qh *q, int32_t a, int32_t b, int32_t c) {
  int32_t id = q->fcount++;
  qh_face *f = &q->f[id];
  f->v[0] = a;
  f->v[1] = b;
  f->v[2] = c;
  f->adj[0] = f->adj[1] = f->adj[2] = -1;
  double s;
  vec3 n = tri_normal_err(q->p[a], q->p[b], q->p[c], &s);
  double len = v3_len(n);
  /* The cross product's components carry an absolute error of a few ulps of
   * s, so the normal's direction is off by about ε·s/|n| (large for a
   * sliver) and the distance of a point r away by that much times r. */
  if (len > 0.0) {
    f->n = v3_scale(n, 1.0 / len);
    f->nerr = 8.0 * DBL_EPSILON * (1.0 + s / len);
  } else {
    f->n = v3_zero();
    f->nerr = INFINITY;
  }
  f->outside = -1;
  f->mark = 0;
  f->visible = false;
  f->alive = true;
  return id;
}

/* Puts point i on the outside list of the new face it is farthest above, or
 * drops it when it is within eps of all of them (it is then within eps of the
 * hull: Barber et al. §3, a point above a visible face is above a new face or
 * inside the new hull). Where the float distance cannot tell (a sliver's
 * normal is inaccurate), the exact predicate decides, so a point on a list is
 * always strictly above its face: apexes are then never on the hull already
 * (duplicates of vertices cannot come back as apexes). */
static void qh_assign(qh *q, int32_t i, const int32_t *faces, int32_t count) {
  int32_t best = -1;
  double best_d = -INFINITY;
  for (int32_t k = 0; k < count; ++k) {
    const qh_face *f = &q->f[faces[k]];
    vec3 rel = v3_sub(q->p[i], q->p[f->v[0]]);
    double d = v3_dot(f->n, rel);
    double err = f->nerr * v3_len(rel);
    bool outside;
    if (d - err > q->eps)
      outside = true;
    else if (d + err <= q->eps)
      outside = false;
    else
      outside = orient3d_sign(q->p[f->v[0]], q->p[f->v[1]], q->p[f->v[2]], q->p[i]) > 0;
    if (outside && d > best_d) {
      best_d = d;
      best = faces[k];
    }
  }
  if (best >= 0) {
    q->next[i] = q->f[best].outside;
    q->f[best].outside = i;
  }
}

/* Adds the farthest outside point of face fi. */
static int qh_add_point(qh *q, int32_t fi) {
  /* The apex: the farthest point above the face (lowest index on ties). */
  int32_t apex = -1;
  double best = -INFINITY;
  for (int32_t i = q->f[fi].outside; i >= 0; i = q->next[i]) {
    double d = qh_dist(q, fi, i);
    if (apex < 0 || d > best || (d == best && i < apex)) {
      best = d;
      apex = i;
    }
  }
  vec3 P = q->p[apex];

  /* Visible region by breadth-first search from fi; visibility is exact, the
   * seed face is visible since the apex is above it by more than eps. */
  int32_t stamp = ++q->stamp;
  int32_t qhead = 0, qtail = 0;
  q->queue[qtail++] = fi;
  q->f[fi].mark = stamp;
  q->f[fi].visible = true;
  while (qhead < qtail) {
    const qh_face *g = &q->f[q->queue[qhead++]];
    for (int e = 0; e < 3; ++e) {
      int32_t h = g->adj[e];
      qh_face *hf = &q->f[h];
      if (hf->mark == stamp)
        continue;
      hf->mark = stamp;
      hf->visible = orient3d_sign(q->p[hf->v[0]], q->p[hf->v[1]], q->p[hf->v[2]], P) > 0;
      if (hf->visible)
        q->queue[qtail++] = h;
    }
  }
  int32_t nvis = qtail;

  /* Horizon: edges of visible faces whose neighbour is not visible. */
  int32_t nh = 0;
  for (int32_t k = 0; k < nvis; ++k) {
    const qh_face *g = &q->f[q->queue[k]];
    for (int e = 0; e < 3; ++e) {
      if (!q->f[g->adj[e]].visible) { /* every neighbour was classified above */
        if (qh_reserve_horizon(q, nh + 1) != QH_OK)
          return QH_NOMEM;
        q->hz_from[nh] = g->v[e];
        q->hz_to[nh] = g->v[(e + 1) % 3];
        q->hz_face[nh] = g->adj[e];
        ++nh;
      }
    }
  }
  /* Order it into one loop; anything else means rounding broke convexity. */
  if (nh < 3)
    return QH_BROKEN;
  q->hz_order[0] = 0;
  for (int32_t k = 1; k < nh; ++k) {
    int32_t want = q->hz_to[q->hz_order[k - 1]], found = -1;
    for (int32_t j = 0; j < nh; ++j) {
      if (q->hz_from[j] == want) {
        if (found >= 0)
          return QH_BROKEN;
        found = j;
      }
    }
    if (found < 0 || found == 0)
      return QH_BROKEN;
    q->hz_order[k] = found;
  }
  if (q->hz_to[q->hz_order[nh - 1]] != q->hz_from[0])
    return QH_BROKEN;

  /* Collect the outside points of the visible faces and retire them. */
  int32_t ncollect = 0;
  for (int32_t k = 0; k < nvis; ++k) {
    qh_face *g = &q->f[q->queue[k]];
    for (int32_t i = g->outside; i >= 0; i = q->next[i])
      if (i != apex)
        q->scratch[ncollect++] = i;
    g->outside = -1;
    g->alive = false;
  }

  /* The cone from the apex over the horizon. */
  if (qh_reserve_faces(q, q->fcount + nh) != QH_OK)
    return QH_NOMEM;
  for (int32_t k = 0; k < nh; ++k) {
    int32_t e = q->hz_order[k];
    int32_t id = qh_add_face(q, q->hz_from[e], q->hz_to[e], apex);
    q->new_faces[k] = id;
    int32_t beyond = q->hz_face[e];
    q->f[id].adj[0] = beyond;
    qh_face *bf = &q->f[beyond];
    for (int j = 0; j < 3; ++j)
      if (bf->v[j] == q->hz_to[e] && bf->v[(j + 1) % 3] == q->hz_from[e])
        bf->adj[j] = id;
  }
  for (int32_t k = 0; k < nh; ++k) {
    qh_face *f = &q->f[q->new_faces[k]];
    f->adj[1] = q->new_faces[(k + 1) % nh];
    f->adj[2] = q->new_faces[(k + nh - 1) % nh];
  }
  q->is_vertex[apex] = true;
  for (int32_t k = 0; k < ncollect; ++k)
    qh_assign(q, q->scratch[k], q->new_faces, nh);
  return QH_OK;
}

/* The initial tetrahedron from extreme points; QH_BROKEN when the points do
 * not span a volume (the caller reports LCP_ERR_DEGENERATE). */
static int qh_init(qh *q) {
  const vec3 *p = q->p;
  int32_t ext[6] = {0, 0, 0, 0, 0, 0};
  for (int32_t i = 1; i < q->n; ++i) {
    for (int a = 0; a < 3; ++a) {
      if (v3_get(p[i], a) < v3_get(p[ext[2 * a]], a))
        ext[2 * a] = i;
      if (v3_get(p[i], a) > v3_get(p[ext[2 * a + 1]], a))
        ext[2 * a + 1] = i;
    }
  }
  int32_t i0 = ext[0], i1 = ext[1];
  double best = -1.0;
  for (int a = 0; a < 6; ++a)
    for (int b = a + 1; b < 6; ++b) {
      double d = v3_len2(v3_sub(p[ext[a]], p[ext[b]]));
      if (d > best) {
        best = d;
        i0 = ext[a];
        i1 = ext[b];
      }
    }
  if (!(sqrt(best) > q->eps))
    return QH_BROKEN; /* all points coincide */
  vec3 dir = v3_scale(v3_sub(p[i1], p[i0]), 1.0 / sqrt(best));
  int32_t i2 = -1;
  best = -1.0;
  for (int32_t i = 0; i < q->n; ++i) {
    double d = v3_len(v3_cross(v3_sub(p[i], p[i0]), dir));
    if (d > best) {
      best = d;
      i2 = i;
    }
  }
  if (!(best > q->eps))
    return QH_BROKEN; /* collinear */
  vec3 n;
  v3_normalize(tri_normal(p[i0], p[i1], p[i2]), &n, 0.0);
  int32_t i3 = -1;
  best = -1.0;
  for (int32_t i = 0; i < q->n; ++i) {
    double d = fabs(v3_dot(n, v3_sub(p[i], p[i0])));
    if (d > best) {
      best = d;
      i3 = i;
    }
  }
  if (!(best > q->eps))
    return QH_BROKEN; /* coplanar */
  if (v3_dot(n, v3_sub(p[i3], p[i0])) > 0.0) {
    int32_t t = i1;
    i1 = i2;
    i2 = t;
  }
  /* (i0, i1, i2) now faces away from i3; the other three faces reverse its
   * edges, so all four are counter-clockwise seen from outside. */
  if (qh_reserve_faces(q, 4) != QH_OK)
    return QH_NOMEM;
  int32_t tv[4][3] = {{i0, i1, i2}, {i0, i3, i1}, {i1, i3, i2}, {i2, i3, i0}};
  for (int k = 0; k < 4; ++k)
    qh_add_face(q, tv[k][0], tv[k][1], tv[k][2]);
  for (int k = 0; k < 4; ++k)
    for (int e = 0; e < 3; ++e) {
      int32_t a = q->f[k].v[e], b = q->f[k].v[(e + 1) % 3];
      for (int m = 0; m < 4; ++m)
        for (int g = 0; g < 3; ++g)
          if (q->f[m].v[g] == b && q->f[m].v[(g + 1) % 3] == a)
            q->f[k].adj[e] = m;
    }
  q->is_vertex[i0] = q->is_vertex[i1] = q->is_vertex[i2] = q->is_vertex[i3] = true;
  int32_t all[4] = {0, 1, 2, 3};
  for (int32_t i = 0; i < q->n; ++i)
    if (!q->is_vertex[i])
      qh_assign(q, i, all, 4);
  return QH_OK;
}

static int qh_run(qh *q) {
  int rc = qh_init(q);
  if (rc != QH_OK)
    return rc;
  /* Faces below the cursor are dead or have empty outside lists for good:
   * points only ever move to newly appended faces. */
  int32_t cursor = 0;
  while (cursor < q->fcount) {
    if (!q->f[cursor].alive || q->f[cursor].outside < 0) {
      ++cursor;
      continue;
    }
    rc = qh_add_point(q, cursor);
    if (rc != QH_OK)
      return rc;
  }
  return QH_OK;
}

void lcp__hull_free(hull *h) {
  if (!h)
    return;
  free(h->vertices);
  free(h->faces);
  free(h->face_vertices);
  free(h->edges);
  memset(h, 0, sizeof *h);
}

static void qh_free(qh *q) {
  free(q->f);
  free(q->next);
  free(q->is_vertex);
  free(q->scratch);
  free(q->queue);
  free(q->hz_from);
  free(q->hz_to);
  free(q->hz_face);
  free(q->hz_order);
  free(q->new_faces);
}

/* One attempt at tolerance eps. LCP_ERR_NUMERIC (internal only) asks the
 * caller to try again with a larger eps. */
static int hull_attempt(const vec3 *points, int32_t count, double eps, double check_tol,
                        hull *out) {
  qh q;
  memset(&q, 0, sizeof q);
  q.p = points;
  q.n = count;
  q.eps = eps;
  q.next = malloc(sizeof(int32_t) * (size_t)count);
  q.is_vertex = calloc((size_t)count, sizeof(bool));
  q.scratch = malloc(sizeof(int32_t) * (size_t)count);
  int rc = LCP_OK;
  if (!q.next || !q.is_vertex || !q.scratch || qh_reserve_faces(&q, 64) != QH_OK ||
      qh_reserve_horizon(&q, 64) != QH_OK)
    rc = LCP_ERR_NO_MEMORY;
  if (rc == LCP_OK) {
    int r = qh_run(&q);
    if (r == QH_NOMEM)
      rc = LCP_ERR_NO_MEMORY;
    else if (r == QH_BROKEN)
      rc = q.fcount == 0 ? LCP_ERR_DEGENERATE : LCP_ERR_NUMERIC;
  }
  if (rc == LCP_OK) {
    memset(out, 0, sizeof *out);
    rc = lcp__hull_build_faces(&q, out);
    if (rc == LCP_ERR_DEGENERATE)
      rc = LCP_ERR_NUMERIC;
  }
  qh_free(&q);
  if (rc == LCP_OK && !(out->volume > 0.0))
    rc = LCP_ERR_DEGENERATE;
  /* Every input point must be inside: a failure means rounding misplaced a
   * face (the plane of a sliver is poorly defined), and a larger eps avoids
   * the near-degenerate configuration. The check costs points × faces, so
   * very large inputs (whose faces are well conditioned) skip it. */
  bool check = rc == LCP_OK && (double)count * (double)out->face_count <= 3e7;
  for (int32_t i = 0; check && rc == LCP_OK && i < count; ++i)
    for (int32_t f = 0; f < out->face_count; ++f)
      if (v3_dot(out->faces[f].normal, points[i]) - out->faces[f].offset > check_tol) {
        rc = LCP_ERR_NUMERIC;
        break;
      }
  if (rc != LCP_OK)
    lcp__hull_free(out);
  return rc;
}

int lcp__hull_build(const vec3 *points, int32_t count, hull *out) {
  if (!out || count < 0 || (count > 0 && !points))
    return LCP_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  for (int32_t i = 0; i < count; ++i)
    if (!v3_is_finite(points[i]))
      return LCP_ERR_INVALID_ARGUMENT;
  if (count < 4)
    return LCP_ERR_DEGENERATE;
  vec3 lo = points[0], hi = points[0];
  double maxabs = 0.0;
  for (int32_t i = 0; i < count; ++i) {
    lo = v3_min(lo, points[i]);
    hi = v3_max(hi, points[i]);
    vec3 a = v3_abs(points[i]);
    maxabs = fmax(maxabs, fmax(a.x, fmax(a.y, a.z)));
  }
  vec3 ext = v3_sub(hi, lo);
  double extent = fmax(ext.x, fmax(ext.y, ext.z));
  /* Relative tolerance: 1e-9 of the size, plus the rounding of coordinates of
   * that magnitude (points far from the origin). */
  double eps = 1e-9 * extent + 16.0 * DBL_EPSILON * maxabs;
  int rc = LCP_ERR_DEGENERATE;
  for (int attempt = 0; attempt < 3; ++attempt) {
    rc = hull_attempt(points, count, eps, 4.0 * eps, out);
    if (rc != LCP_ERR_NUMERIC)
      return rc;
    eps *= 100.0;
  }
  return LCP_ERR_DEGENERATE;
}
