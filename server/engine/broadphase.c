/* SPDX-License-Identifier: Apache-2.0 */
/* Broad phase: sweep and prune along one axis (Baraff,
 * "Dynamic simulation of non-penetrating rigid bodies"; the step's second stage).
 *
 * Seed 004's argument: bodies in a simulation barely change order from one
 * step to the next, so the endpoint list kept from the last step is almost
 * sorted and insertion sort restores it in O(n + swaps) ("ほとんどソート済み →
 * Insert sort が早い"). The same slide warns that when the order is shuffled
 * (teleports, re-indexed bodies, a perfectly aligned grid jittering in place)
 * insertion sort degrades to O(n²). We therefore give it a budget of about
 * n log n swaps and, past it, finish with a merge sort: a step never costs
 * more than about twice a full sort.
 *
 * The sweep then walks the sorted endpoints once ("左から重なりをチェック");
 * between a proxy's lower and upper endpoint it is "active", and each lower
 * endpoint is tested on the two other axes against the active proxies. Active
 * proxies keep a copy of their other-axis extents in compact arrays
 * (swap-remove keeps them dense), so a scan streams through contiguous
 * memory. When many proxies are active at once, a grid on the two other axes
 * narrows the candidates (see the cell index below): a plain sweep costs
 * about n checks only when few proxies overlap on the sweep axis alone, which
 * a dense pile of bodies does not grant. */
#include "broadphase.h"

#include "lcpsim/lcpsim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Total order on endpoints: value, then lower before upper (so that closed
 * intervals that merely touch are seen as overlapping: the lower end of one is
 * visited while the other is still active), then proxy index. Every endpoint
 * has a distinct (proxy, is_upper), so the order is strict and the sorted
 * result does not depend on the sort used. The world never passes NaN. */
static inline bool ep_less(const sap_endpoint *a, const sap_endpoint *b) {
  if (a->value != b->value)
    return a->value < b->value;
  if (a->is_upper != b->is_upper)
    return a->is_upper < b->is_upper;
  return a->proxy < b->proxy;
}

/* Insertion sort of e[0..n) (coherence keeps it nearly sorted), stopping once it has made more than
 * budget swaps. Returns the swaps made; *done tells whether e is sorted. */
static uint64_t insertion_sort(sap_endpoint *e, size_t n, uint64_t budget, bool *done) {
  uint64_t swaps = 0;
  for (size_t i = 1; i < n; i++) {
    if (!ep_less(&e[i], &e[i - 1]))
      continue;
    sap_endpoint x = e[i];
    size_t j = i;
    do {
      e[j] = e[j - 1];
      j--;
    } while (j > 0 && ep_less(&x, &e[j - 1]));
    e[j] = x;
    swaps += i - j;
    if (swaps > budget) {
      *done = i + 1 == n;
      return swaps;
    }
  }
  *done = true;
  return swaps;
}

/* Bottom-up merge sort of e[0..n) using tmp[0..n). Short runs are first put
 * in order by insertion sort, which is faster than merging at that size.
 * Returns the number of inversions, which is exactly the number of swaps an
 * insertion sort would have made. */
static uint64_t merge_sort(sap_endpoint *e, size_t n, sap_endpoint *tmp) {
  enum { RUN = 32 };
  uint64_t inversions = 0;
  bool done;
  for (size_t i = 0; i < n; i += RUN)
    inversions += insertion_sort(e + i, n - i < RUN ? n - i : RUN, UINT64_MAX, &done);
  sap_endpoint *src = e, *dst = tmp;
  for (size_t width = RUN; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (ep_less(&src[j], &src[i])) {
          inversions += mid - i; /* src[j] jumps over what is left of the left run */
          dst[k++] = src[j++];
        } else {
          dst[k++] = src[i++];
        }
      }
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    sap_endpoint *t = src;
    src = dst;
    dst = t;
  }
  if (src != e)
    memcpy(e, src, n * sizeof *e);
  return inversions;
}

static uint64_t ceil_log2(size_t n) {
  uint64_t b = 0;
  while (b < 63 && ((size_t)1 << b) < n)
    b++;
  return b;
}

/* Insertion sort with a swap budget of about (n/2) log2 n; past it
 * the rest is a merge sort, so a shuffled list costs O(n log n), not O(n²).
 * When the previous update already needed more than the budget (a scene that
 * keeps reshuffling, e.g. an aligned grid jittering in place), the merge sort
 * starts right away. Returns the swaps an insertion sort needs, counted either
 * way (each adjacent swap removes one inversion). Without scratch memory for
 * the merge sort it finishes by insertion sort: slower, same result. */
static int64_t sort_endpoints(sap_endpoint *e, size_t n, arena *scratch, int64_t previous) {
  uint64_t budget = (uint64_t)(n / 2) * ceil_log2(n) + 64;
  uint64_t swaps = 0;
  bool done = n < 2;
  if (!done && (uint64_t)previous <= budget)
    swaps = insertion_sort(e, n, budget, &done);
  if (!done) {
    sap_endpoint *tmp = ARENA_NEW(scratch, sap_endpoint, n);
    swaps += tmp ? merge_sort(e, n, tmp) : insertion_sort(e, n, UINT64_MAX, &done);
  }
  return swaps > INT64_MAX ? INT64_MAX : (int64_t)swaps;
}

void lcp__sap_init(sap *s, int32_t axis) {
  memset(s, 0, sizeof *s);
  s->axis = axis >= 0 && axis <= 2 ? axis : 0;
}

void lcp__sap_destroy(sap *s) {
  free(s->endpoints);
  memset(s, 0, sizeof *s);
}

/* Other-axis extents of a proxy: [lo1, hi1] × [lo2, hi2]. */
typedef struct sap_box2 {
  double lo1, hi1, lo2, hi2;
} sap_box2;

/* Closed intervals; the four comparisons are combined with & so that the
 * scanning loops have one well-predicted branch per candidate. */
static inline bool box2_overlap(const sap_box2 *a, const sap_box2 *b) {
  return (a->lo1 <= b->hi1) & (b->lo1 <= a->hi1) & (a->lo2 <= b->hi2) & (b->lo2 <= a->hi2);
}

typedef struct sap_pairbuf {
  sap_pair *p;
  size_t n, cap;
  arena *scratch;
} sap_pairbuf;

/* The arena cannot grow an allocation in place; doubling wastes at most the
 * size of the final buffer, and the arena is reset every step anyway. */
static bool pairbuf_grow(sap_pairbuf *pb) {
  if (pb->cap >= (size_t)INT32_MAX) /* the count is returned as int32_t */
    return false;
  size_t cap = pb->cap * 2 < (size_t)INT32_MAX ? pb->cap * 2 : (size_t)INT32_MAX;
  sap_pair *p = ARENA_NEW(pb->scratch, sap_pair, cap);
  if (!p)
    return false;
  memcpy(p, pb->p, pb->n * sizeof *p);
  pb->p = p;
  pb->cap = cap;
  return true;
}

static inline bool emit(sap_pairbuf *pb, int32_t p, int32_t q) {
  if (pb->n == pb->cap && !pairbuf_grow(pb))
    return false;
  pb->p[pb->n++] = p < q ? (sap_pair){p, q} : (sap_pair){q, p};
  return true;
}

/* Sorts pairs by (a, b): two stable counting passes (LSD radix with radix
 * count), first by b then by a. O(pairs + count), and the order is total
 * because a pair occurs once. */
static bool sort_pairs(sap_pairbuf *pb, int32_t count) {
  size_t n = pb->n;
  if (n < 2)
    return true;
  sap_pair *tmp = ARENA_NEW(pb->scratch, sap_pair, n);
  size_t *start = ARENA_NEW(pb->scratch, size_t, (size_t)count + 1);
  if (!tmp || !start)
    return false;
  for (int pass = 0; pass < 2; pass++) {
    const sap_pair *src = pass == 0 ? pb->p : tmp;
    sap_pair *dst = pass == 0 ? tmp : pb->p;
    memset(start, 0, ((size_t)count + 1) * sizeof *start);
    for (size_t i = 0; i < n; i++)
      start[(pass == 0 ? src[i].b : src[i].a) + 1]++;
    for (int32_t k = 0; k < count; k++)
      start[k + 1] += start[k];
    for (size_t i = 0; i < n; i++)
      dst[start[pass == 0 ? src[i].b : src[i].a]++] = src[i];
  }
  return true;
}

/* Active proxies of one class, dense (swap-remove), with a copy of their
 * extents so that a scan streams through contiguous memory. */
typedef struct sap_list {
  sap_box2 *box;
  int32_t *id;
  int32_t n;
} sap_list;

/* Tests box b of proxy q against every proxy in l. */
static bool scan_list(const sap_list *l, const sap_box2 *b, int32_t q, sap_pairbuf *pb) {
  const sap_box2 *box = l->box;
  for (int32_t k = 0; k < l->n; k++)
    if (box2_overlap(&box[k], b) && !emit(pb, l->id[k], q))
      return false;
  return true;
}

/* Scanning every active proxy costs O(n + pairs overlapping on the sweep
 * axis alone), and that second term is what dominates dense scenes: in a
 * pile of N bodies in a bin of fixed footprint, a slab across the sweep axis
 * holds O(N) bodies and the sweep would be O(N²). So the small active
 * proxies are also indexed by a uniform grid on the two other axes (cell
 * width w, a power of two about the size of most boxes): a proxy spanning at
 * most two cells per axis is filed under the cell of its lower corner, and a
 * query visits only the cells that can hold an overlapping one. Big,
 * infinite or far-away proxies stay in plain lists only, and a query scans
 * the plain list instead when the active set is small or the query box
 * covers many cells, whichever is cheaper.
 *
 * A proxy's class indexes its active list. Skipped proxies have lists of
 * their own so that a skipped proxy never scans the others of its kind; in
 * the cell index they share the chains and are passed over by their class. */
enum { CLASS_SKIP = 1, CLASS_BIG = 2, CLASS_COUNT = 4 };
#define CELL_LIMIT 1073741824.0 /* 2^30: cell coordinates stay well inside int32 */
enum {
  CELL_MIN_ACTIVE = 24, /* below this many active small proxies a scan wins */
  CELL_COST = 4,        /* a cell visit costs about this many scanned boxes (measured) */
};

/* Per proxy, built before the sweep (the sweep reads it once, at the
 * proxy's lower endpoint). */
typedef struct sap_proxy {
  sap_box2 b;
  int32_t cell[4]; /* small proxies: cells of lo1, hi1, lo2, hi2 */
} sap_proxy;

/* A node of the cell index. Nodes are taken in sweep order, so the active
 * ones, which are what a query reads, sit in a short recent stretch of the
 * pool: the chains are walked in cache. */
typedef struct sap_node {
  sap_box2 b;
  int32_t ci, cj; /* cell of the lower corner */
  int32_t next, prev;
  int32_t proxy, cls;
} sap_node;

typedef struct sap_sweep {
  const sap_proxy *px;
  /* Small per-proxy arrays, so that an upper endpoint touches only these. */
  const uint8_t *cls;
  int32_t *pos;  /* index in its active list, -1 when not active */
  int32_t *node; /* its node in the cell index while active */
  sap_node *pool;
  int32_t n_node;
  int32_t *head; /* per hash bucket, a node or -1 */
  uint32_t mask;
  double inv_w;
  sap_list list[CLASS_COUNT];
  sap_pairbuf pb;
} sap_sweep;

static inline uint32_t cell_hash(int32_t i, int32_t j) {
  uint32_t h = (uint32_t)i * 0x9E3779B1u ^ (uint32_t)j * 0x85EBCA77u;
  return h ^ (h >> 15);
}

/* Cells that may hold a small proxy overlapping proxy q: one more below on
 * each axis, since a small proxy is filed by its lower corner and spans at
 * most two cells. False when q's box is not within the grid's range. */
static bool cell_range(const sap_sweep *sw, const sap_proxy *q, bool big, int32_t r[4],
                       double *ncells) {
  if (!big) {
    r[0] = q->cell[0] - 1, r[1] = q->cell[1], r[2] = q->cell[2] - 1, r[3] = q->cell[3];
  } else {
    const sap_box2 *b = &q->b;
    double c[4] = {floor(b->lo1 * sw->inv_w) - 1.0, floor(b->hi1 * sw->inv_w),
                   floor(b->lo2 * sw->inv_w) - 1.0, floor(b->hi2 * sw->inv_w)};
    if (!(c[0] >= -CELL_LIMIT && c[1] <= CELL_LIMIT && c[2] >= -CELL_LIMIT && c[3] <= CELL_LIMIT &&
          c[1] - c[0] < CELL_LIMIT && c[3] - c[2] < CELL_LIMIT))
      return false; /* also catches ±∞ */
    for (int d = 0; d < 4; d++)
      r[d] = (int32_t)c[d];
  }
  *ncells = ((double)r[1] - r[0] + 1.0) * ((double)r[3] - r[2] + 1.0);
  return true;
}

static bool scan_cells(const sap_sweep *sw, const int32_t r[4], const sap_box2 *b, int32_t q,
                       bool q_skip, sap_pairbuf *pb) {
  const sap_node *node = sw->pool;
  for (int32_t i = r[0]; i <= r[1]; i++)
    for (int32_t j = r[2]; j <= r[3]; j++)
      for (int32_t k = sw->head[cell_hash(i, j) & sw->mask]; k >= 0; k = node[k].next) {
        /* Each proxy sits in exactly one cell and each cell is visited once,
         * so checking the cell (not only the bucket) prevents duplicates. */
        const sap_node *nd = &node[k];
        if (nd->ci != i || nd->cj != j || (q_skip && (nd->cls & CLASS_SKIP)))
          continue;
        if (box2_overlap(&nd->b, b) && !emit(pb, nd->proxy, q))
          return false;
      }
  return true;
}

static void cell_link(sap_sweep *sw, const sap_proxy *x, int32_t p, int cls) {
  int32_t k = sw->n_node++;
  int32_t *h = &sw->head[cell_hash(x->cell[0], x->cell[2]) & sw->mask];
  sw->pool[k] = (sap_node){x->b, x->cell[0], x->cell[2], *h, -1, p, cls};
  if (*h >= 0)
    sw->pool[*h].prev = k;
  *h = k;
  sw->node[p] = k;
}

static void cell_unlink(sap_sweep *sw, int32_t p) {
  const sap_node *nd = &sw->pool[sw->node[p]];
  if (nd->prev >= 0)
    sw->pool[nd->prev].next = nd->next;
  else
    sw->head[cell_hash(nd->ci, nd->cj) & sw->mask] = nd->next;
  if (nd->next >= 0)
    sw->pool[nd->next].prev = nd->prev;
}

/* One pass over the sorted endpoints (left to right, checking overlaps
 * against the open intervals). */
static bool sweep(sap_sweep *sw, const sap_endpoint *e, size_t n_end) {
  sap_pairbuf *pb = &sw->pb;
  for (size_t k = 0; k < n_end; k++) {
    int32_t p = e[k].proxy;
    int cls = sw->cls[p];
    bool p_skip = (cls & CLASS_SKIP) != 0, p_big = (cls & CLASS_BIG) != 0;
    sap_list *own = &sw->list[cls];
    if (!e[k].is_upper) {
      const sap_proxy *x = &sw->px[p];
      const sap_box2 *b = &x->b;
      if (!scan_list(&sw->list[CLASS_BIG], b, p, pb))
        return false;
      if (!p_skip && !scan_list(&sw->list[CLASS_BIG | CLASS_SKIP], b, p, pb))
        return false;
      int32_t n_small = sw->list[0].n + (p_skip ? 0 : sw->list[CLASS_SKIP].n);
      int32_t r[4];
      double ncells = 0.0;
      if (n_small >= CELL_MIN_ACTIVE && cell_range(sw, x, p_big, r, &ncells) &&
          ncells * CELL_COST < (double)n_small) {
        if (!scan_cells(sw, r, b, p, p_skip, pb))
          return false;
      } else {
        if (!scan_list(&sw->list[0], b, p, pb))
          return false;
        if (!p_skip && !scan_list(&sw->list[CLASS_SKIP], b, p, pb))
          return false;
      }
      own->box[own->n] = *b;
      own->id[own->n] = p;
      sw->pos[p] = own->n++;
      if (!p_big)
        cell_link(sw, x, p, cls);
    } else if (sw->pos[p] >= 0) {
      /* pos < 0 only for an inverted box (lo > hi), which is not valid input;
       * it is merely kept memory-safe. */
      int32_t i = sw->pos[p], last = --own->n;
      own->box[i] = own->box[last];
      own->id[i] = own->id[last];
      sw->pos[own->id[i]] = i;
      sw->pos[p] = -1;
      if (!p_big)
        cell_unlink(sw, p);
    }
  }
  return true;
}

/* Plain max: no NaN here, and it inlines where fmax may be a call. */
static inline double dmax(double a, double b) { return a > b ? a : b; }

static inline bool box2_finite_extent(const sap_box2 *b, double *m) {
  *m = dmax(b->hi1 - b->lo1, b->hi2 - b->lo2);
  return isfinite(*m) && isfinite(b->lo1) && isfinite(b->hi1) && isfinite(b->lo2) &&
         isfinite(b->hi2);
}

/* Cell width w: the smallest power of two at least as large as 7/8 of the
 * finite boxes (on the two other axes), but coarse enough that those boxes
 * are within 2^28 cells of the origin. Ground planes and walls given as huge
 * finite boxes do not count: they are big anyway. Returns 1 / w. */
static double cell_inv_width(const sap_proxy *px, int32_t count) {
  enum { LOW = -64, HIGH = 1100, BINS = HIGH - LOW + 1 };
  int32_t hist[BINS] = {0};
  int32_t n_fin = 0;
  double m;
  for (int32_t p = 0; p < count; p++) {
    if (!box2_finite_extent(&px[p].b, &m))
      continue;
    int ex = LOW;
    if (m > 0.0) {
      if (frexp(m, &ex) == 0.5) /* m = 2^(ex-1) exactly: that is wide enough */
        ex--;
      ex = ex < LOW ? LOW : ex; /* now m ≤ 2^ex */
    }
    hist[ex - LOW]++;
    n_fin++;
  }
  if (n_fin == 0)
    return 1.0;
  int32_t need = n_fin - n_fin / 8, seen = 0;
  int bin = 0;
  while ((seen += hist[bin]) < need)
    bin++;
  int E = bin + LOW;
  double w = ldexp(1.0, E), amax = 0.0;
  for (int32_t p = 0; p < count; p++) {
    const sap_box2 *b = &px[p].b;
    if (box2_finite_extent(b, &m) && m <= w)
      amax = dmax(amax, dmax(dmax(fabs(b->lo1), fabs(b->hi1)), dmax(fabs(b->lo2), fabs(b->hi2))));
  }
  int ea = 0;
  frexp(amax, &ea); /* amax < 2^ea */
  if (E < ea - 28)
    E = ea - 28;
  return ldexp(1.0, -E);
}

int lcp__sap_update(sap *s, int32_t count, const vec3 *lo, const vec3 *hi, const uint8_t *skip,
                    arena *scratch, sap_pair **out_pairs, int32_t *out_pair_count) {
  *out_pairs = NULL;
  *out_pair_count = 0;
  const int64_t previous_swaps = s->last_swaps;
  s->last_swaps = 0;
  if (count < 0 || (count > 0 && (!lo || !hi)))
    return LCP_ERR_INVALID_ARGUMENT;
  if (count > INT32_MAX / 2)
    return LCP_ERR_NO_MEMORY;

  /* Everything that can fail before the endpoint list is changed is done
   * first, so a failure leaves the sap as it was. */
  if (count > s->capacity) {
    int32_t cap = s->capacity > 16 ? s->capacity : 16;
    while (cap < count)
      cap = cap > INT32_MAX / 4 ? INT32_MAX / 2 : cap * 2;
    sap_endpoint *e = realloc(s->endpoints, (size_t)cap * 2 * sizeof *e);
    if (!e)
      return LCP_ERR_NO_MEMORY;
    s->endpoints = e;
    s->capacity = cap;
  }
  const size_t n = (size_t)count;
  int32_t old = s->proxy_count < count ? s->proxy_count : count;
  size_t n_new = 2 * (size_t)(count - old);
  size_t buckets = 16; /* a power of two ≥ count: chains stay short */
  while (buckets < n)
    buckets *= 2;
  sap_sweep sw;
  memset(&sw, 0, sizeof sw);
  sap_endpoint *fresh = ARENA_NEW(scratch, sap_endpoint, 2 * n_new + 1); /* + merge room */
  double *ext = ARENA_NEW(scratch, double, 2 * n + 1);
  sap_proxy *px = ARENA_NEW(scratch, sap_proxy, n + 1);
  uint8_t *cls = ARENA_NEW(scratch, uint8_t, n + 1);
  sw.pos = ARENA_NEW(scratch, int32_t, n + 1);
  sw.node = ARENA_NEW(scratch, int32_t, n + 1);
  sw.pool = ARENA_NEW(scratch, sap_node, n + 1);
  sw.head = ARENA_NEW(scratch, int32_t, buckets);
  sap_box2 *lbox = ARENA_NEW(scratch, sap_box2, n + 1);
  int32_t *lid = ARENA_NEW(scratch, int32_t, n + 1);
  sw.pb = (sap_pairbuf){ARENA_NEW(scratch, sap_pair, n + 64), 0, n + 64, scratch};
  if (!fresh || !ext || !px || !cls || !sw.pos || !sw.node || !sw.pool || !sw.head || !lbox ||
      !lid || !sw.pb.p)
    return LCP_ERR_NO_MEMORY;

  /* One pass in proxy order over the boxes (the only time they are read
   * whole): the sweep-axis extents, compact, for refreshing the endpoints,
   * and the other two axes for the sweep. */
  const int axis = s->axis, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  for (int32_t p = 0; p < count; p++) {
    ext[2 * (size_t)p] = v3_get(lo[p], axis);
    ext[2 * (size_t)p + 1] = v3_get(hi[p], axis);
    px[p].b =
        (sap_box2){v3_get(lo[p], a1), v3_get(hi[p], a1), v3_get(lo[p], a2), v3_get(hi[p], a2)};
  }
  sw.inv_w = cell_inv_width(px, count);
  int32_t n_class[CLASS_COUNT] = {0};
  for (int32_t p = 0; p < count; p++) {
    sap_proxy *x = &px[p];
    const sap_box2 *b = &x->b;
    double c[4] = {floor(b->lo1 * sw.inv_w), floor(b->hi1 * sw.inv_w), floor(b->lo2 * sw.inv_w),
                   floor(b->hi2 * sw.inv_w)};
    /* The cell map is monotone, so a box whose two corners are at most one
     * cell apart truly spans at most two cells, whatever the rounding. */
    bool small = c[0] >= -CELL_LIMIT && c[1] <= CELL_LIMIT && c[2] >= -CELL_LIMIT &&
                 c[3] <= CELL_LIMIT && c[1] - c[0] <= 1.0 && c[3] - c[2] <= 1.0;
    for (int d = 0; d < 4; d++)
      x->cell[d] = small ? (int32_t)c[d] : 0;
    int k = (skip && skip[p] ? CLASS_SKIP : 0) | (small ? 0 : CLASS_BIG);
    cls[p] = (uint8_t)k;
    n_class[k]++;
    sw.pos[p] = -1;
  }

  /* Nothing can fail from here until the endpoint list is consistent again,
   * so a failure above leaves the sap as it was.
   *
   * Drop proxies ≥ count (keeping the order of the rest) and refresh the
   * values of the survivors from their new boxes. */
  sap_endpoint *e = s->endpoints;
  size_t n_old = 0;
  for (size_t i = 0; i < 2 * (size_t)s->proxy_count; i++) {
    int32_t p = e[i].proxy;
    if (p >= count)
      continue;
    e[n_old] = e[i];
    e[n_old].value = ext[2 * (size_t)p + (size_t)e[i].is_upper];
    n_old++;
  }
  s->last_swaps = sort_endpoints(e, n_old, scratch, previous_swaps);

  /* New proxies: sort their endpoints on their own, then merge them in from
   * the back, so adding k proxies costs O(n + k log k), not O(n k). */
  if (n_new > 0) {
    for (int32_t p = old; p < count; p++) {
      size_t k = 2 * (size_t)(p - old);
      fresh[k] = (sap_endpoint){ext[2 * (size_t)p], p, 0};
      fresh[k + 1] = (sap_endpoint){ext[2 * (size_t)p + 1], p, 1};
    }
    (void)merge_sort(fresh, n_new, fresh + n_new);
    size_t i = n_old, j = n_new, w = n_old + n_new;
    while (j > 0) {
      if (i > 0 && ep_less(&fresh[j - 1], &e[i - 1]))
        e[--w] = e[--i];
      else
        e[--w] = fresh[--j];
    }
  }
  s->proxy_count = count;

  /* Sweep. */
  size_t at = 0;
  for (int k = 0; k < CLASS_COUNT; k++) {
    sw.list[k] = (sap_list){lbox + at, lid + at, 0};
    at += (size_t)n_class[k];
  }
  memset(sw.head, 0xff, buckets * sizeof *sw.head); /* all -1 */
  sw.mask = (uint32_t)(buckets - 1);
  sw.px = px;
  sw.cls = cls;
  if (!sweep(&sw, e, 2 * n))
    return LCP_ERR_NO_MEMORY;

  sap_pairbuf pb = sw.pb;
  if (!sort_pairs(&pb, count))
    return LCP_ERR_NO_MEMORY;
  *out_pairs = pb.p;
  *out_pair_count = (int32_t)pb.n;
  return LCP_OK;
}
