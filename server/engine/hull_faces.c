/* SPDX-License-Identifier: Apache-2.0 */
/* Phase 2 of the hull construction (hull.c): faces, edges and mass
 * properties from quickhull's triangulation. */
#include "hull_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct hb {
  /* triangulation, compacted */
  int32_t tcount;
  int32_t (*tv)[3];
  int32_t (*tadj)[3];
  vec3 *tn;
  double *tarea;
  int32_t *order;
  int32_t *group;
  bool *reliable;        /* the triangle's normal orientation can be trusted */
  vec3 *gnormal;         /* per group: its seed triangle's normal */
  int32_t *member_first; /* triangles by group (counting sort) */
  int32_t *members;
  int32_t gcount;
  /* face loops, one per group, concatenated */
  int32_t *loop_first;
  int32_t *loop_len;
  int32_t *loops;
  int32_t *occ;   /* per point: number of loops it is on */
  int32_t *remap; /* per point: final vertex index or -1 */
  int32_t *stack;
  int32_t *edge_from; /* boundary edges of one group */
  int32_t *edge_to;
} hb;

static void hb_free(hb *b) {
  free(b->tv);
  free(b->tadj);
  free(b->tn);
  free(b->tarea);
  free(b->order);
  free(b->group);
  free(b->reliable);
  free(b->gnormal);
  free(b->member_first);
  free(b->members);
  free(b->loop_first);
  free(b->loop_len);
  free(b->loops);
  free(b->occ);
  free(b->remap);
  free(b->stack);
  free(b->edge_from);
  free(b->edge_to);
  memset(b, 0, sizeof *b);
}

/* Triangles by decreasing area (then index): a group is seeded by its best
 * conditioned triangle, so its plane is accurate. */
typedef struct tri_key {
  double area;
  int32_t index;
} tri_key;

static int tri_key_cmp(const void *pa, const void *pb) {
  const tri_key *a = pa, *b = pb;
  if (a->area != b->area)
    return a->area > b->area ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static int tri_order(int32_t *order, const double *area, int32_t n) {
  tri_key *k = malloc(sizeof(tri_key) * (size_t)(n > 0 ? n : 1));
  if (!k)
    return LCP_ERR_NO_MEMORY;
  for (int32_t i = 0; i < n; ++i)
    k[i] = (tri_key){area[i], i};
  qsort(k, (size_t)n, sizeof(tri_key), tri_key_cmp);
  for (int32_t i = 0; i < n; ++i)
    order[i] = k[i].index;
  free(k);
  return LCP_OK;
}

typedef struct dir_edge {
  int32_t lo, hi; /* vertex indices, lo < hi */
  int32_t face;
  int32_t forward; /* 1 when the face's loop goes lo → hi */
} dir_edge;

static int dir_edge_cmp(const void *pa, const void *pb) {
  const dir_edge *a = pa, *b = pb;
  if (a->lo != b->lo)
    return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi)
    return a->hi < b->hi ? -1 : 1;
  if (a->forward != b->forward)
    return a->forward > b->forward ? -1 : 1;
  return (a->face > b->face) - (a->face < b->face);
}

/* Lists the triangles of each group contiguously (counting sort), in
 * triangle order within a group. */
static void collect_members(hb *b, int32_t G) {
  for (int32_t g = 0; g <= G; ++g)
    b->member_first[g] = 0;
  for (int32_t t = 0; t < b->tcount; ++t)
    b->member_first[b->group[t] + 1]++;
  for (int32_t g = 0; g < G; ++g)
    b->member_first[g + 1] += b->member_first[g];
  for (int32_t g = 0; g < G; ++g)
    b->stack[g] = b->member_first[g];
  for (int32_t t = 0; t < b->tcount; ++t)
    b->members[b->stack[b->group[t]]++] = t;
}

/* Traces the boundary of group g into loop (vertex indices, in the
 * triangles' counter-clockwise sense). Returns its length, 0 when the group
 * is not a disc bounded by one simple loop. */
static int32_t group_boundary(hb *b, int32_t g, const int32_t *members, int32_t nmem,
                              int32_t *loop) {
  int32_t ne = 0;
  for (int32_t k = 0; k < nmem; ++k) {
    int32_t t = members[k];
    for (int e = 0; e < 3; ++e)
      if (b->group[b->tadj[t][e]] != g) {
        b->edge_from[ne] = b->tv[t][e];
        b->edge_to[ne] = b->tv[t][(e + 1) % 3];
        ++ne;
      }
  }
  if (ne < 3)
    return 0;
  for (int32_t i = 0; i < ne; ++i)
    for (int32_t j = i + 1; j < ne; ++j)
      if (b->edge_from[i] == b->edge_from[j])
        return 0; /* pinched at a vertex */
  /* Start at the smallest vertex index so the loop is canonical. */
  int32_t start = 0;
  for (int32_t i = 1; i < ne; ++i)
    if (b->edge_from[i] < b->edge_from[start])
      start = i;
  int32_t cur = start;
  for (int32_t k = 0; k < ne; ++k) {
    loop[k] = b->edge_from[cur];
    int32_t want = b->edge_to[cur], nxt = -1;
    for (int32_t j = 0; j < ne; ++j)
      if (b->edge_from[j] == want) {
        nxt = j;
        break;
      }
    if (nxt < 0)
      return 0;
    if (nxt == start && k != ne - 1)
      return 0; /* more than one loop: a face with a hole */
    cur = nxt;
  }
  return cur == start ? ne : 0;
}

/* Whether the loop turns counter-clockwise about n at every vertex, or is
 * reflex by no more than tol (the depth of the vertex inside the chord of
 * its neighbours). */
static bool loop_convex(const vec3 *p, const int32_t *loop, int32_t len, vec3 n, double tol) {
  for (int32_t k = 0; k < len; ++k) {
    vec3 a = p[loop[(k + len - 1) % len]], b = p[loop[k]], c = p[loop[(k + 1) % len]];
    double chord = v3_len(v3_sub(c, a));
    double turn = v3_dot(v3_cross(v3_sub(b, a), v3_sub(c, b)), n);
    if (turn < 0.0 && -turn > tol * chord)
      return false;
  }
  return true;
}

/* Distance of v from the segment (u, w), or INFINITY when its projection
 * falls outside the open segment. */
static double seg_dist(vec3 v, vec3 u, vec3 w) {
  vec3 d = v3_sub(w, u);
  double dd = v3_len2(d);
  if (!(dd > 0.0))
    return INFINITY;
  double t = v3_dot(v3_sub(v, u), d) / dd;
  if (!(t > 0.0 && t < 1.0))
    return INFINITY;
  return v3_len(v3_sub(v3_madd(u, d, t), v));
}

/* Whether some face loop already runs between u and w: collapsing a vertex
 * onto that edge would glue two faces together along a flat sliver. */
static bool loops_have_edge(const hb *b, int32_t G, int32_t u, int32_t w) {
  for (int32_t g = 0; g < G; ++g) {
    const int32_t *l = b->loops + b->loop_first[g];
    int32_t len = b->loop_len[g];
    for (int32_t k = 0; k < len; ++k) {
      int32_t x = l[k], y = l[(k + 1) % len];
      if ((x == u && y == w) || (x == w && y == u))
        return true;
    }
  }
  return false;
}

static void loop_remove_at(hb *b, int32_t g, int32_t pos) {
  int32_t *l = b->loops + b->loop_first[g];
  memmove(l + pos, l + pos + 1, sizeof(int32_t) * (size_t)(b->loop_len[g] - pos - 1));
  b->loop_len[g]--;
}

static void mass_properties(hull *h) {
  /* Reference point: the vertex mean, close to the centroid, which keeps the
   * tetrahedra small and the sums well conditioned. */
  vec3 r = v3_zero();
  for (int32_t i = 0; i < h->vertex_count; ++i)
    r = v3_add(r, h->vertices[i]);
  r = v3_scale(r, 1.0 / h->vertex_count);
  double vol6 = 0.0;
  vec3 first = v3_zero();
  for (int32_t f = 0; f < h->face_count; ++f) {
    const int32_t *l = h->face_vertices + h->faces[f].first_index;
    vec3 a = v3_sub(h->vertices[l[0]], r);
    for (int32_t k = 1; k + 1 < h->faces[f].vertex_count; ++k) {
      vec3 bb = v3_sub(h->vertices[l[k]], r), c = v3_sub(h->vertices[l[k + 1]], r);
      double d = v3_dot(a, v3_cross(bb, c));
      vol6 += d;
      first = v3_madd(first, v3_add(v3_add(a, bb), c), d);
    }
  }
  h->volume = vol6 / 6.0;
  vec3 c0 = v3_madd(r, first, 1.0 / (4.0 * vol6));
  h->centroid = c0;
  /* Covariance about the centroid, from tetrahedra with apex at the centroid. */
  double C[3][3] = {{0}};
  for (int32_t f = 0; f < h->face_count; ++f) {
    const int32_t *l = h->face_vertices + h->faces[f].first_index;
    vec3 a = v3_sub(h->vertices[l[0]], c0);
    for (int32_t k = 1; k + 1 < h->faces[f].vertex_count; ++k) {
      vec3 bb = v3_sub(h->vertices[l[k]], c0), c = v3_sub(h->vertices[l[k + 1]], c0);
      double v = v3_dot(a, v3_cross(bb, c)) / 6.0;
      vec3 s = v3_add(v3_add(a, bb), c);
      double w[3][3] = {{a.x, a.y, a.z}, {bb.x, bb.y, bb.z}, {c.x, c.y, c.z}};
      double sv[3] = {s.x, s.y, s.z};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          double acc = sv[i] * sv[j];
          for (int m = 0; m < 3; ++m)
            acc += w[m][i] * w[m][j];
          C[i][j] += v / 20.0 * acc;
        }
    }
  }
  double tr = C[0][0] + C[1][1] + C[2][2];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      h->inertia_unit_density.m[i][j] = (i == j ? tr : 0.0) - C[i][j];
  double rmax = 0.0;
  for (int32_t i = 0; i < h->vertex_count; ++i)
    rmax = fmax(rmax, v3_len(h->vertices[i]));
  h->bounding_radius = rmax;
}

/* The triangles of the quickhull triangulation, compacted: vertices,
 * neighbours, unit normals, areas and whether their normals can be
 * trusted. */
static int hb_triangles(const qh *q, hb *b) {
  const vec3 *p = q->p;
  double tol = q->eps;
  int32_t T = 0;
  int32_t *tri_of_face = malloc(sizeof(int32_t) * (size_t)q->fcount);
  if (!tri_of_face)
    return LCP_ERR_NO_MEMORY;
  for (int32_t i = 0; i < q->fcount; ++i)
    tri_of_face[i] = q->f[i].alive ? T++ : -1;
  b->tcount = T;
  b->tv = malloc(sizeof(*b->tv) * (size_t)T);
  b->tadj = malloc(sizeof(*b->tadj) * (size_t)T);
  b->tn = malloc(sizeof(vec3) * (size_t)T);
  b->tarea = malloc(sizeof(double) * (size_t)T);
  b->order = malloc(sizeof(int32_t) * (size_t)T);
  b->group = malloc(sizeof(int32_t) * (size_t)T);
  b->reliable = malloc(sizeof(bool) * (size_t)T);
  b->gnormal = malloc(sizeof(vec3) * (size_t)T);
  b->stack = malloc(sizeof(int32_t) * (size_t)T);
  b->loop_first = malloc(sizeof(int32_t) * (size_t)T);
  b->loop_len = malloc(sizeof(int32_t) * (size_t)T);
  b->loops = malloc(sizeof(int32_t) * (size_t)T * 3);
  b->edge_from = malloc(sizeof(int32_t) * (size_t)T * 3);
  b->edge_to = malloc(sizeof(int32_t) * (size_t)T * 3);
  b->occ = calloc((size_t)q->n, sizeof(int32_t));
  b->remap = malloc(sizeof(int32_t) * (size_t)q->n);
  if (!b->tv || !b->tadj || !b->tn || !b->tarea || !b->order || !b->group || !b->reliable ||
      !b->stack || !b->loop_first || !b->loop_len || !b->loops || !b->edge_from || !b->edge_to ||
      !b->occ || !b->remap) {
    free(tri_of_face);
    return LCP_ERR_NO_MEMORY;
  }
  for (int32_t i = 0; i < q->fcount; ++i) {
    int32_t t = tri_of_face[i];
    if (t < 0)
      continue;
    for (int e = 0; e < 3; ++e) {
      b->tv[t][e] = q->f[i].v[e];
      b->tadj[t][e] = tri_of_face[q->f[i].adj[e]];
    }
    vec3 a = p[b->tv[t][0]], bb = p[b->tv[t][1]], c = p[b->tv[t][2]];
    vec3 n = tri_normal(a, bb, c);
    b->tarea[t] = 0.5 * v3_len(n);
    if (!v3_normalize(n, &b->tn[t], 0.0))
      b->tn[t] = v3_zero();
    /* height above the longest edge well above the tolerance */
    double lmax =
        sqrt(fmax(v3_len2(v3_sub(bb, a)), fmax(v3_len2(v3_sub(c, bb)), v3_len2(v3_sub(a, c)))));
    b->reliable[t] = 2.0 * b->tarea[t] > 10.0 * tol * lmax;
  }
  free(tri_of_face);
  for (int32_t t = 0; t < T; ++t)
    if (b->tadj[t][0] < 0 || b->tadj[t][1] < 0 || b->tadj[t][2] < 0)
      return LCP_ERR_DEGENERATE; /* cannot happen: the triangulation is closed */

  return LCP_OK;
}

/* Groups coplanar neighbours around the largest triangles; returns the
 * number of groups. */
static int32_t hb_group(const qh *q, hb *b) {
  const vec3 *p = q->p;
  double tol = q->eps;
  int32_t T = b->tcount;
  for (int32_t t = 0; t < T; ++t)
    b->group[t] = -1;
  int32_t G = 0;
  for (int32_t k = 0; k < T; ++k) {
    int32_t seed = b->order[k];
    if (b->group[seed] >= 0)
      continue;
    vec3 n = b->tn[seed], o = p[b->tv[seed][0]];
    int32_t g = G++;
    b->gnormal[g] = n;
    int32_t sp = 0;
    b->group[seed] = g;
    b->stack[sp++] = seed;
    while (sp > 0) {
      int32_t t = b->stack[--sp];
      for (int e = 0; e < 3; ++e) {
        int32_t u = b->tadj[t][e];
        if (b->group[u] >= 0)
          continue;
        bool on = true;
        for (int m = 0; m < 3 && on; ++m)
          on = fabs(v3_dot(n, v3_sub(p[b->tv[u][m]], o))) <= tol;
        /* A well-shaped triangle must also face the same way (guards against
         * merging the two sides of a hull thinner than the tolerance). */
        if (on && b->reliable[u] && v3_dot(b->tn[u], n) < 0.0)
          on = false;
        if (on) {
          b->group[u] = g;
          b->stack[sp++] = u;
        }
      }
    }
  }

  return G;
}

/* Groups that are not discs, or whose outline is not convex (on a surface
 * bumpy at the scale of the tolerance, the triangles within eps of a plane
 * can form an L), fall back to one face per triangle, which is always
 * consistent: the boundary of a group depends only on its own triangles.
 * *G: the number of groups, updated. */
static int hb_split_nonconvex(const qh *q, hb *b, int32_t *group_count) {
  const vec3 *p = q->p;
  double tol = q->eps;
  int32_t T = b->tcount, G = *group_count;
  b->member_first = malloc(sizeof(int32_t) * (size_t)(T + 1));
  b->members = malloc(sizeof(int32_t) * (size_t)T);
  if (!b->member_first || !b->members)
    return LCP_ERR_NO_MEMORY;
  collect_members(b, G);
  int32_t G0 = G;
  for (int32_t g = 0; g < G0; ++g) {
    const int32_t *mem = b->members + b->member_first[g];
    int32_t nmem = b->member_first[g + 1] - b->member_first[g];
    if (nmem < 2)
      continue;
    int32_t len = group_boundary(b, g, mem, nmem, b->loops);
    if (len == 0 || !loop_convex(p, b->loops, len, b->gnormal[g], tol))
      for (int32_t k = 1; k < nmem; ++k)
        b->group[mem[k]] = G++;
  }
  if (G != G0)
    collect_members(b, G);

  *group_count = G;
  return LCP_OK;
}

/* The face loops, one per group, and how many loops each point is on. */
static int hb_face_loops(hb *b, int32_t G) {
  int32_t used = 0;
  for (int32_t g = 0; g < G; ++g) {
    const int32_t *mem = b->members + b->member_first[g];
    int32_t nmem = b->member_first[g + 1] - b->member_first[g];
    int32_t len = group_boundary(b, g, mem, nmem, b->loops + used);
    if (len < 3)
      return LCP_ERR_DEGENERATE; /* handled as a failed attempt by the caller */
    b->loop_first[g] = used;
    b->loop_len[g] = len;
    used += len;
  }
  b->gcount = G;
  for (int32_t i = 0; i < used; ++i)
    b->occ[b->loops[i]]++;

  return LCP_OK;
}

/* Drop vertices in the middle of a straight edge between exactly two
 * faces: both loops pass u → v → w (one of them reversed), so removing v
 * from both keeps them agreeing on their common boundary. */
static void hb_drop_collinear(const qh *q, hb *b) {
  const vec3 *p = q->p;
  double tol = q->eps;
  int32_t G = b->gcount;
  bool changed = true;
  while (changed) {
    changed = false;
    for (int32_t g = 0; g < G; ++g) {
      for (int32_t k = 0; k < b->loop_len[g] && b->loop_len[g] > 3; ++k) {
        const int32_t *l = b->loops + b->loop_first[g];
        int32_t len = b->loop_len[g];
        int32_t v = l[k], u = l[(k + len - 1) % len], w = l[(k + 1) % len];
        if (b->occ[v] != 2 || !(seg_dist(p[v], p[u], p[w]) <= tol))
          continue;
        /* the other loop through v */
        int32_t og = -1, opos = -1;
        for (int32_t h = 0; h < G && og < 0; ++h) {
          if (h == g)
            continue;
          const int32_t *lh = b->loops + b->loop_first[h];
          for (int32_t j = 0; j < b->loop_len[h]; ++j)
            if (lh[j] == v) {
              og = h;
              opos = j;
              break;
            }
        }
        if (og < 0 || b->loop_len[og] <= 3 || loops_have_edge(b, G, u, w))
          continue;
        loop_remove_at(b, og, opos);
        loop_remove_at(b, g, k);
        b->occ[v] = 0;
        changed = true;
        --k;
      }
    }
  }
}

/* The hull from the face loops: its vertices in input order, faces with
 * Newell's normals, edges (each once in each direction, else the
 * triangulation was not a closed convex surface), mass properties. */
static int hb_output(const qh *q, hb *b, hull *out) {
  const vec3 *p = q->p;
  int32_t G = b->gcount;
  int32_t V = 0;
  for (int32_t i = 0; i < q->n; ++i)
    b->remap[i] = b->occ[i] > 0 ? V++ : -1;
  int32_t nfv = 0;
  for (int32_t g = 0; g < G; ++g)
    nfv += b->loop_len[g];
  out->vertex_count = V;
  out->face_count = G;
  out->edge_count = nfv / 2;
  out->vertices = malloc(sizeof(vec3) * (size_t)V);
  out->faces = malloc(sizeof(hull_face) * (size_t)G);
  out->face_vertices = malloc(sizeof(int32_t) * (size_t)nfv);
  out->edges = malloc(sizeof(hull_edge) * (size_t)(nfv / 2 + 1));
  dir_edge *de = malloc(sizeof(dir_edge) * (size_t)nfv);
  if (!out->vertices || !out->faces || !out->face_vertices || !out->edges || !de) {
    free(de);
    return LCP_ERR_NO_MEMORY;
  }
  for (int32_t i = 0; i < q->n; ++i)
    if (b->remap[i] >= 0)
      out->vertices[b->remap[i]] = p[i];
  int32_t pos = 0;
  for (int32_t g = 0; g < G; ++g) {
    const int32_t *l = b->loops + b->loop_first[g];
    int32_t len = b->loop_len[g];
    hull_face *f = &out->faces[g];
    f->first_index = pos;
    f->vertex_count = len;
    /* Newell's normal of the loop (sum of the cross products of consecutive
     * vertices about their mean): exact for a planar polygon, an area-weighted
     * average for one warped within the tolerance. */
    vec3 c = v3_zero();
    for (int32_t k = 0; k < len; ++k)
      c = v3_add(c, p[l[k]]);
    c = v3_scale(c, 1.0 / len);
    vec3 n = v3_zero();
    for (int32_t k = 0; k < len; ++k)
      n = v3_add(n, v3_cross(v3_sub(p[l[k]], c), v3_sub(p[l[(k + 1) % len]], c)));
    if (!v3_normalize(n, &f->normal, 0.0)) {
      free(de);
      return LCP_ERR_DEGENERATE;
    }
    double off = -INFINITY;
    for (int32_t k = 0; k < len; ++k) {
      off = fmax(off, v3_dot(f->normal, p[l[k]]));
      out->face_vertices[pos + k] = b->remap[l[k]];
    }
    f->offset = off;
    for (int32_t k = 0; k < len; ++k) {
      int32_t a = b->remap[l[k]], bb = b->remap[l[(k + 1) % len]];
      de[pos + k] = (dir_edge){a < bb ? a : bb, a < bb ? bb : a, g, a < bb ? 1 : 0};
    }
    pos += len;
  }
  /* Unique edges: every undirected edge must appear once in each direction. */
  qsort(de, (size_t)nfv, sizeof(dir_edge), dir_edge_cmp);
  int rc = LCP_OK;
  if (nfv % 2 != 0)
    rc = LCP_ERR_DEGENERATE;
  for (int32_t k = 0; rc == LCP_OK && k < nfv; k += 2) {
    if (de[k].lo != de[k + 1].lo || de[k].hi != de[k + 1].hi || de[k].forward != 1 ||
        de[k + 1].forward != 0 ||
        (k + 2 < nfv && de[k + 2].lo == de[k].lo && de[k + 2].hi == de[k].hi)) {
      rc = LCP_ERR_DEGENERATE;
      break;
    }
    out->edges[k / 2] = (hull_edge){de[k].lo, de[k].hi, de[k].face, de[k + 1].face};
  }
  free(de);
  if (rc != LCP_OK)
    return rc;
  if (V - out->edge_count + G != 2)
    return LCP_ERR_DEGENERATE;
  mass_properties(out);
  return LCP_OK;
}

/* Builds the polygonal hull from the quickhull triangulation. */
static int build_faces(const qh *q, hb *b, hull *out) {
  int rc = hb_triangles(q, b);
  if (rc != LCP_OK)
    return rc;
  if (tri_order(b->order, b->tarea, b->tcount) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  int32_t G = hb_group(q, b);
  rc = hb_split_nonconvex(q, b, &G);
  if (rc == LCP_OK)
    rc = hb_face_loops(b, G);
  if (rc != LCP_OK)
    return rc;
  hb_drop_collinear(q, b);
  return hb_output(q, b, out);
}

int lcp__hull_build_faces(const qh *q, hull *out) {
  hb b;
  memset(&b, 0, sizeof b);
  int rc = build_faces(q, &b, out);
  hb_free(&b);
  return rc;
}
