#include "memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */

struct lcpd_arena_chunk {
  lcpd_arena_chunk_t *next;
  size_t capacity;
  size_t used;
  max_align_t data[]; /* capacity bytes */
};

enum { ARENA_CHUNK_BYTES = 64 * 1024 };

static lcpd_arena_chunk_t *chunk_new(size_t capacity, lcpd_arena_chunk_t *next) {
  lcpd_arena_chunk_t *chunk = malloc(sizeof *chunk + capacity);
  if (!chunk)
    return NULL;
  chunk->capacity = capacity;
  chunk->used = 0;
  chunk->next = next;
  return chunk;
}

/* Frees every chunk but the oldest (last in the list) when it has the usual
 * size, which is emptied and kept. Returns the bytes kept. */
static size_t chunks_reset(lcpd_arena_chunk_t **chunks) {
  lcpd_arena_chunk_t *kept = NULL;
  while (*chunks) {
    lcpd_arena_chunk_t *next = (*chunks)->next;
    if (!next && (*chunks)->capacity == ARENA_CHUNK_BYTES)
      kept = *chunks;
    else
      free(*chunks);
    *chunks = next;
  }
  if (!kept)
    return 0;
  kept->used = 0;
  kept->next = NULL;
  *chunks = kept;
  return kept->capacity;
}

static void chunks_free(lcpd_arena_chunk_t **chunks) {
  chunks_reset(chunks);
  free(*chunks);
  *chunks = NULL;
}

void lcpd_arena_init(lcpd_arena_t *arena, size_t limit) { *arena = (lcpd_arena_t){.limit = limit}; }

static _Noreturn void arena_fail(lcpd_arena_t *arena) {
  /* Without an armed jump there is nowhere sensible to go; handlers always
   * arm it, so this is a programming error. */
  if (!arena->on_failure)
    abort();
  longjmp(*arena->on_failure, 1);
}

void *lcpd_arena_alloc(lcpd_arena_t *arena, size_t size) {
  const size_t align = sizeof(max_align_t);
  if (size > SIZE_MAX / 2)
    arena_fail(arena);
  size = (size + align - 1) / align * align;
  if (size == 0)
    size = align;
  lcpd_arena_chunk_t *chunk = arena->chunks;
  if (!chunk || chunk->capacity - chunk->used < size) {
    size_t capacity = size > ARENA_CHUNK_BYTES ? size : ARENA_CHUNK_BYTES;
    if (capacity > arena->limit || arena->total > arena->limit - capacity)
      arena_fail(arena);
    chunk = chunk_new(capacity, arena->chunks);
    if (!chunk)
      arena_fail(arena);
    arena->chunks = chunk;
    arena->total += capacity;
  }
  void *p = (unsigned char *)chunk->data + chunk->used;
  chunk->used += size;
  memset(p, 0, size);
  return p;
}

void *lcpd_arena_array(lcpd_arena_t *arena, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / 4 / size)
    arena_fail(arena);
  return lcpd_arena_alloc(arena, count * size);
}

char *lcpd_arena_strdup(lcpd_arena_t *arena, const char *text) {
  return lcpd_arena_memdup(arena, text, strlen(text) + 1);
}

void *lcpd_arena_memdup(lcpd_arena_t *arena, const void *data, size_t size) {
  void *p = lcpd_arena_alloc(arena, size);
  if (size)
    memcpy(p, data, size);
  return p;
}

void lcpd_arena_reset(lcpd_arena_t *arena) { arena->total = chunks_reset(&arena->chunks); }

void lcpd_arena_destroy(lcpd_arena_t *arena) {
  chunks_free(&arena->chunks);
  arena->total = 0;
}

/* ---- budget ---- */

static void *budget_alloc(void *data, size_t size) {
  lcpd_budget_t *budget = data;
  const size_t align = sizeof(max_align_t);
  if (size > budget->limit) {
    budget->exhausted = true;
    return NULL;
  }
  size = (size + align - 1) / align * align;
  if (size == 0)
    size = align;
  if (size > budget->limit - budget->used) {
    budget->exhausted = true;
    return NULL;
  }
  lcpd_arena_chunk_t *chunk = budget->chunks;
  if (!chunk || chunk->capacity - chunk->used < size) {
    chunk = chunk_new(size > ARENA_CHUNK_BYTES ? size : ARENA_CHUNK_BYTES, budget->chunks);
    if (!chunk) {
      budget->exhausted = true;
      return NULL;
    }
    budget->chunks = chunk;
  }
  void *p = (unsigned char *)chunk->data + chunk->used;
  chunk->used += size;
  budget->used += size;
  return p;
}

/* Everything goes at once, in lcpd_budget_reset. */
static void budget_free(void *data, void *pointer) {
  (void)data;
  (void)pointer;
}

void lcpd_budget_init(lcpd_budget_t *budget, size_t limit) {
  *budget = (lcpd_budget_t){.limit = limit};
  budget->allocator.alloc = budget_alloc;
  budget->allocator.free = budget_free;
  budget->allocator.allocator_data = budget;
}

void lcpd_budget_reset(lcpd_budget_t *budget) {
  chunks_reset(&budget->chunks);
  budget->used = 0;
  budget->exhausted = false;
}

void lcpd_budget_destroy(lcpd_budget_t *budget) {
  chunks_free(&budget->chunks);
  budget->used = 0;
}
