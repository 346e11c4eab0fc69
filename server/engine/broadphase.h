/* Broad phase: sweep and prune along one axis (seed 004, DESIGN.md §3 step 2).
 *
 * The sorted list of box endpoints is kept from one step to the next; the
 * boxes move little, so it is almost sorted and an insertion sort restores it
 * in O(n + swaps). One sweep over the sorted list then visits exactly the
 * pairs overlapping on the sweep axis and checks the other two axes. */
#ifndef LCP_BROADPHASE_H
#define LCP_BROADPHASE_H

#include "arena.h"
#include "lcp_math.h"

#include <stdint.h>

typedef struct sap_endpoint {
  double value;
  int32_t proxy;    /* box index */
  int32_t is_upper; /* 0 = lower end, 1 = upper end */
} sap_endpoint;

typedef struct sap {
  int32_t axis;          /* 0, 1, 2 */
  int32_t proxy_count;   /* boxes known at the last update */
  int32_t capacity;      /* of endpoints, in proxies */
  sap_endpoint *endpoints; /* 2 × proxy_count, sorted by value */
  int64_t last_swaps;    /* insertion-sort swaps of the last update (for benchmarks) */
} sap;

typedef struct sap_pair {
  int32_t a, b; /* proxy indices, a < b */
} sap_pair;

void sap_init(sap *s, int32_t axis);
void sap_destroy(sap *s);

/* Brings the endpoint list up to date with count boxes (proxy i is box i;
 * proxies ≥ count are dropped, new ones inserted) and writes every pair whose
 * boxes overlap on all three axes (closed intervals), with a < b, sorted by
 * (a, b). skip[i] != 0 excludes proxy i as the first of a pair with another
 * skipped proxy (static–static pairs); skip may be NULL.
 * *out_pairs is allocated from scratch. Returns LCP_OK or LCP_ERR_NO_MEMORY. */
int sap_update(sap *s, int32_t count, const vec3 *lo, const vec3 *hi, const uint8_t *skip,
               arena *scratch, sap_pair **out_pairs, int32_t *out_pair_count);

#endif
