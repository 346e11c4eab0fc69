/* Memory of one request: the byte budget its decoding may use, and the arena
 * its reply is built in. */
#ifndef LCPD_MEMORY_H
#define LCPD_MEMORY_H

#include <protobuf-c/protobuf-c.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

/* A ProtobufCAllocator that refuses to hand out more than `limit` bytes for
 * one request, so that a small message cannot unpack into a huge tree (an
 * empty sub-message costs 2 bytes on the wire and a whole struct in memory).
 * It bumps through chunks and frees nothing until lcpd_budget_reset, which
 * frees the whole decoded request at once (no free_unpacked walk) and keeps
 * a chunk of the usual size for the next one, so that a usual request
 * decodes without calling malloc. What protobuf-c frees while decoding (a
 * field given twice replaces the first) still counts against the limit;
 * the chunks' unused tails do not, so the memory held stays under about
 * twice the limit. */
typedef struct lcpd_arena_chunk lcpd_arena_chunk_t;
typedef struct lcpd_budget {
  ProtobufCAllocator allocator; /* pass &budget->allocator to protobuf-c */
  size_t limit;
  size_t used;    /* bytes handed out since the last reset */
  bool exhausted; /* an allocation was refused */
  lcpd_arena_chunk_t *chunks;
} lcpd_budget_t;

void lcpd_budget_init(lcpd_budget_t *budget, size_t limit);
/* Frees everything handed out; the budget serves the next request. */
void lcpd_budget_reset(lcpd_budget_t *budget);
void lcpd_budget_destroy(lcpd_budget_t *budget);

/* A bump allocator for building replies: everything is freed at once by
 * lcpd_arena_reset. Allocation never returns NULL: on failure (out of memory
 * or over `limit`) it longjmps to *on_failure, which the caller has armed
 * with setjmp around the code that builds the reply. */
typedef struct lcpd_arena {
  lcpd_arena_chunk_t *chunks;
  size_t total; /* bytes held in chunks */
  size_t limit; /* most bytes the arena may hold */
  jmp_buf *on_failure;
} lcpd_arena_t;

void lcpd_arena_init(lcpd_arena_t *arena, size_t limit);
/* Zeroed, aligned for any type. */
void *lcpd_arena_alloc(lcpd_arena_t *arena, size_t size);
/* count × size bytes, zeroed; count may be 0 (a valid pointer is returned). */
void *lcpd_arena_array(lcpd_arena_t *arena, size_t count, size_t size);
char *lcpd_arena_strdup(lcpd_arena_t *arena, const char *text);
void *lcpd_arena_memdup(lcpd_arena_t *arena, const void *data, size_t size);
/* Frees everything allocated. The arena can be used again; it keeps one
 * chunk of the usual size for that, so that a small reply allocates
 * nothing. */
void lcpd_arena_reset(lcpd_arena_t *arena);
/* Frees every chunk, the kept one too. */
void lcpd_arena_destroy(lcpd_arena_t *arena);

#define LCPD_NEW(arena, type) ((type *)lcpd_arena_alloc((arena), sizeof(type)))

#endif
