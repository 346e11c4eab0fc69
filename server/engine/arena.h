/* SPDX-License-Identifier: Apache-2.0 */
/* Per-step scratch memory: allocations are bump pointers into
 * one block and are all released at once by lcp__arena_reset() at the end of the
 * step. When a step needs more than the block holds, extra blocks are taken
 * and the next reset replaces them all by one block of 1.5 × the high-water size,
 * so a steady simulation stops allocating after its first steps. */
#ifndef LCP_ARENA_H
#define LCP_ARENA_H

#include <stddef.h>

typedef struct arena_block arena_block;

typedef struct arena {
  arena_block *blocks; /* newest first */
  size_t used_total;   /* bytes handed out since the last reset */
  size_t high_water;   /* largest used_total ever seen */
} arena;

void lcp__arena_init(arena *a);
void lcp__arena_destroy(arena *a);
/* 32-byte aligned, uninitialised; NULL only when the system is out of memory. */
void *lcp__arena_alloc(arena *a, size_t bytes);
/* Zeroed. */
void *lcp__arena_calloc(arena *a, size_t count, size_t size);
void lcp__arena_reset(arena *a);
/* The bytes its blocks hold now (kept from step to step). */
size_t lcp__arena_reserved(const arena *a);

#define ARENA_NEW(a, type, count) ((type *)lcp__arena_alloc((a), sizeof(type) * (size_t)(count)))

#endif
