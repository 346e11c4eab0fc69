/* SPDX-License-Identifier: Apache-2.0 */
/* Broad phase: sweep and prune along one axis (the step's second stage).
 *
 * The sorted list of box endpoints is kept from one step to the next; the
 * boxes move little, so it is almost sorted and an insertion sort restores it
 * in O(n + swaps). One sweep over the sorted list then finds the pairs
 * overlapping on the sweep axis and checks the other two axes (through a grid
 * on those axes when many proxies overlap on the sweep axis at once). */
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
  int32_t axis;            /* 0, 1, 2 */
  int32_t proxy_count;     /* boxes known at the last update */
  int32_t capacity;        /* of endpoints, in proxies */
  sap_endpoint *endpoints; /* 2 × proxy_count, sorted by value */
  int64_t last_swaps;      /* insertion-sort swaps of the last update (for benchmarks):
                              the inversions undone, also counted when a shuffled
                              list (past about n log n swaps) is merge-sorted */
} sap;

typedef struct sap_pair {
  int32_t a, b; /* proxy indices, a < b */
} sap_pair;

void lcp__sap_init(sap *s, int32_t axis);
void lcp__sap_destroy(sap *s);

/* Brings the endpoint list up to date with count boxes (proxy i is box i;
 * proxies ≥ count are dropped, new ones inserted) and writes every pair whose
 * boxes overlap on all three axes (closed intervals), with a < b, sorted by
 * (a, b). skip[i] != 0 excludes proxy i as the first of a pair with another
 * skipped proxy (static–static pairs); skip may be NULL.
 * Boxes need lo ≤ hi; ±INFINITY is fine, NaN is not.
 * *out_pairs is allocated from scratch. Returns LCP_OK, LCP_ERR_INVALID_ARGUMENT
 * (count < 0, or lo/hi NULL with count > 0) or LCP_ERR_NO_MEMORY; after an
 * error the sap is still consistent and the next update is exact. */
int lcp__sap_update(sap *s, int32_t count, const vec3 *lo, const vec3 *hi, const uint8_t *skip,
                    arena *scratch, sap_pair **out_pairs, int32_t *out_pair_count);

#endif
