/* SPDX-License-Identifier: Apache-2.0 */
#include "memory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lcpd_arena_chunk {
  lcpd_arena_chunk_t *next;
  size_t capacity;
  size_t used;
  max_align_t data[]; /* capacity bytes */
};

enum { ARENA_CHUNK_BYTES = 64 * 1024 };

/* Uninitialised, aligned for any type; NULL when refused. */
static void *arena_take(lcpd_arena_t *arena, size_t size) {
  const size_t align = sizeof(max_align_t);
  if (size > arena->limit) {
    lcpd_fail(arena->error, LCP_ERR_NO_MEMORY, "more than the %zu bytes of memory allowed",
              arena->limit);
    return NULL;
  }
  size = size ? (size + align - 1) / align * align : align;
  if (size > arena->limit - arena->used) {
    lcpd_fail(arena->error, LCP_ERR_NO_MEMORY, "more than the %zu bytes of memory allowed",
              arena->limit);
    return NULL;
  }
  lcpd_arena_chunk_t *chunk = arena->chunks;
  if (!chunk || chunk->capacity - chunk->used < size) {
    size_t capacity = size > ARENA_CHUNK_BYTES ? size : ARENA_CHUNK_BYTES;
    chunk = malloc(sizeof *chunk + capacity);
    if (!chunk) {
      lcpd_fail(arena->error, LCP_ERR_NO_MEMORY, "more memory than the system gives");
      return NULL;
    }
    *chunk = (lcpd_arena_chunk_t){.next = arena->chunks, .capacity = capacity};
    arena->chunks = chunk;
  }
  void *p = (unsigned char *)chunk->data + chunk->used;
  chunk->used += size;
  arena->used += size;
  return p;
}

static void *allocator_alloc(void *data, size_t size) { return arena_take(data, size); }

/* Everything goes at once, in lcpd_arena_reset. */
static void allocator_free(void *data, void *pointer) {
  (void)data;
  (void)pointer;
}

void lcpd_arena_init(lcpd_arena_t *arena, size_t limit, lcpd_error_t *error) {
  *arena = (lcpd_arena_t){.limit = limit, .error = error};
  arena->allocator = (ProtobufCAllocator){
      .alloc = allocator_alloc, .free = allocator_free, .allocator_data = arena};
}

void *lcpd_arena_alloc(lcpd_arena_t *arena, size_t size) {
  void *p = arena_take(arena, size);
  if (p)
    memset(p, 0, size);
  return p;
}

void *lcpd_arena_array(lcpd_arena_t *arena, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / 4 / size) {
    lcpd_fail(arena->error, LCP_ERR_NO_MEMORY, "more than the %zu bytes of memory allowed",
              arena->limit);
    return NULL;
  }
  return lcpd_arena_alloc(arena, count * size);
}

char *lcpd_arena_strdup(lcpd_arena_t *arena, const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = arena_take(arena, size);
  if (copy)
    memcpy(copy, text, size);
  return copy;
}

void lcpd_arena_reset(lcpd_arena_t *arena) {
  /* Keep the oldest chunk (last in the list) when it has the usual size. */
  lcpd_arena_chunk_t *kept = NULL;
  while (arena->chunks) {
    lcpd_arena_chunk_t *next = arena->chunks->next;
    if (!next && arena->chunks->capacity == ARENA_CHUNK_BYTES)
      kept = arena->chunks;
    else
      free(arena->chunks);
    arena->chunks = next;
  }
  if (kept) {
    kept->used = 0;
    arena->chunks = kept;
  }
  arena->used = 0;
}

void lcpd_arena_destroy(lcpd_arena_t *arena) {
  lcpd_arena_reset(arena);
  free(arena->chunks);
  arena->chunks = NULL;
}
