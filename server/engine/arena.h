/* SPDX-License-Identifier: Apache-2.0 */
/* Per-step scratch memory: allocations are bump pointers into
 * one block and are all released at once by lcp__arena_reset() at the end of the
 * step. When a step needs more than the block holds, extra blocks are taken
 * and the next reset replaces them all by one block of 1.5 × the high-water size,
 * so a steady simulation stops allocating after its first steps.
 *
 * A step makes dozens of small allocations, so the common case — room in
 * the current block — is inline here: a rounding, a comparison and a bump
 * of the cursor; only a new block goes through arena.c. */
#ifndef LCP_ARENA_H
#define LCP_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define ARENA_ALIGN 32

typedef struct arena_block arena_block;

typedef struct arena {
  arena_block *blocks; /* newest first */
  char *cursor;        /* the next free byte of the newest block (NULL: no block) */
  size_t room;         /* the bytes after cursor in the newest block */
  size_t used_total;   /* bytes handed out since the last reset */
  size_t high_water;   /* the most bytes handed out between two resets */
} arena;

void lcp__arena_init(arena *a);
void lcp__arena_destroy(arena *a);
/* lcp__arena_alloc when the newest block lacks room for n (aligned) bytes. */
void *lcp__arena_alloc_new_block(arena *a, size_t n);
/* 32-byte aligned, uninitialised; NULL only when the system is out of memory. */
static inline void *lcp__arena_alloc(arena *a, size_t bytes) {
  size_t n = ((bytes ? bytes : 1) + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1);
  if (n <= a->room) {
    void *p = a->cursor;
    a->cursor += n;
    a->room -= n;
    a->used_total += n;
    return p;
  }
  return lcp__arena_alloc_new_block(a, n);
}
/* Zeroed. */
void *lcp__arena_calloc(arena *a, size_t count, size_t size);
void lcp__arena_reset(arena *a);
/* The bytes its blocks hold now (kept from step to step). */
size_t lcp__arena_reserved(const arena *a);

#define ARENA_NEW(a, type, count) ((type *)lcp__arena_alloc((a), sizeof(type) * (size_t)(count)))

#endif
