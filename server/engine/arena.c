/* SPDX-License-Identifier: Apache-2.0 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_MIN_BLOCK (64 * 1024)

struct arena_block {
  arena_block *next;
  size_t size;
  /* data follows, aligned */
};

static size_t align_up(size_t n) { return (n + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1); }

static const size_t header_size =
    (sizeof(arena_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

static char *block_data(arena_block *b) { return (char *)b + header_size; }

static arena_block *block_new(size_t size) {
  void *mem = NULL;
  if (posix_memalign(&mem, ARENA_ALIGN, header_size + size) != 0)
    return NULL;
  arena_block *b = mem;
  b->next = NULL;
  b->size = size;
  return b;
}

/* Makes b the newest block, empty. */
static void use_block(arena *a, arena_block *b) {
  a->blocks = b;
  a->cursor = block_data(b);
  a->room = b->size;
}

void lcp__arena_init(arena *a) { memset(a, 0, sizeof *a); }

size_t lcp__arena_reserved(const arena *a) {
  size_t bytes = 0;
  for (const arena_block *b = a->blocks; b; b = b->next)
    bytes += header_size + b->size;
  return bytes;
}

void lcp__arena_destroy(arena *a) {
  arena_block *b = a->blocks;
  while (b) {
    arena_block *next = b->next;
    free(b);
    b = next;
  }
  memset(a, 0, sizeof *a);
}

void *lcp__arena_alloc_new_block(arena *a, size_t n) {
  arena_block *b = a->blocks;
  size_t size = ARENA_MIN_BLOCK;
  if (b && b->size * 2 > size)
    size = b->size * 2;
  if (size < n)
    size = n;
  arena_block *fresh = block_new(size);
  if (!fresh)
    return NULL;
  fresh->next = b;
  use_block(a, fresh);
  void *p = a->cursor;
  a->cursor += n;
  a->room -= n;
  a->used_total += n;
  if (a->used_total > a->high_water)
    a->high_water = a->used_total;
  return p;
}

void *lcp__arena_calloc(arena *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size)
    return NULL;
  void *p = lcp__arena_alloc(a, count * size);
  if (p)
    memset(p, 0, count * size);
  return p;
}

void lcp__arena_reset(arena *a) {
  if (a->used_total > a->high_water)
    a->high_water = a->used_total;
  arena_block *b = a->blocks;
  if (b && b->next) {
    /* More than one block was needed: replace them all by one that holds
     * the high-water mark, so the next steps allocate nothing. */
    size_t keep = a->high_water;
    lcp__arena_destroy(a);
    /* Headroom: a scene whose needs creep up step by step (a pile settling,
     * contacts accumulating) would otherwise reallocate, and fault in fresh
     * pages, at nearly every step. */
    arena_block *one = block_new(align_up(keep + keep / 2));
    a->high_water = keep;
    if (one) /* on failure the next alloc retries */
      use_block(a, one);
    return;
  }
  if (b)
    use_block(a, b);
  a->used_total = 0;
}
