#include "memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- budget ---- */

/* Each block carries its size in front so that free can give it back. The
 * header keeps the payload aligned as malloc's would be. */
typedef union budget_header {
  size_t size;
  max_align_t align;
} budget_header;

static void *budget_alloc(void *data, size_t size) {
  lcpd_budget_t *budget = data;
  size_t need = size + sizeof(budget_header);
  if (size > budget->limit || need > budget->limit - budget->used) {
    budget->exhausted = true;
    return NULL;
  }
  budget_header *block = malloc(need);
  if (!block) {
    budget->exhausted = true;
    return NULL;
  }
  block->size = need;
  budget->used += need;
  return block + 1;
}

static void budget_free(void *data, void *pointer) {
  if (!pointer)
    return;
  lcpd_budget_t *budget = data;
  budget_header *block = (budget_header *)pointer - 1;
  budget->used -= block->size;
  free(block);
}

void lcpd_budget_init(lcpd_budget_t *budget, size_t limit) {
  *budget = (lcpd_budget_t){.limit = limit};
  budget->allocator.alloc = budget_alloc;
  budget->allocator.free = budget_free;
  budget->allocator.allocator_data = budget;
}

/* ---- arena ---- */

struct lcpd_arena_chunk {
  lcpd_arena_chunk_t *next;
  size_t capacity;
  size_t used;
  max_align_t data[]; /* capacity bytes */
};

enum { ARENA_CHUNK_BYTES = 64 * 1024 };

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
    chunk = malloc(sizeof *chunk + capacity);
    if (!chunk)
      arena_fail(arena);
    chunk->capacity = capacity;
    chunk->used = 0;
    chunk->next = arena->chunks;
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

void lcpd_arena_reset(lcpd_arena_t *arena) {
  /* The oldest chunk (last in the list) stays when it has the usual size. */
  lcpd_arena_chunk_t *kept = NULL;
  while (arena->chunks) {
    lcpd_arena_chunk_t *next = arena->chunks->next;
    if (!next && arena->chunks->capacity == ARENA_CHUNK_BYTES)
      kept = arena->chunks;
    else
      free(arena->chunks);
    arena->chunks = next;
  }
  arena->total = 0;
  if (kept) {
    kept->used = 0;
    kept->next = NULL;
    arena->chunks = kept;
    arena->total = kept->capacity;
  }
}

void lcpd_arena_destroy(lcpd_arena_t *arena) {
  lcpd_arena_reset(arena);
  free(arena->chunks);
  arena->chunks = NULL;
  arena->total = 0;
}
