/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's bump allocator: the memory of one request's decoded tree and
 * of one reply's tree, each in an arena freed whole when the request is
 * done.
 *
 * The engine has a bump allocator of its own (server/engine/arena.c): its
 * per-step scratch, internal to the engine and unbounded, sized by the
 * step's high-water mark. This one serves protobuf-c (a ProtobufCAllocator)
 * and enforces a limit, so that a small message cannot unpack into a huge
 * tree (an empty sub-message costs 2 bytes on the wire and a whole struct
 * in memory) and no reply grows without bound; the engine's API does not
 * offer allocators, and a library's allocator should not carry a server's
 * limits. */
#ifndef LCPD_MEMORY_H
#define LCPD_MEMORY_H

#include "error.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

typedef struct lcpd_arena_chunk lcpd_arena_chunk_t;

/* Allocations are bumped through chunks and never freed one by one:
 * lcpd_arena_reset frees them all at once (a decoded request needs no
 * free_unpacked walk) and keeps one chunk of the usual size, so that a usual
 * request and its reply call malloc no more. What protobuf-c frees while
 * decoding (a field given twice replaces the first) still counts against
 * the limit; the chunks' unused tails do not, so the memory held stays
 * under about twice the limit. */
typedef struct lcpd_arena {
  ProtobufCAllocator allocator; /* pass &arena->allocator to protobuf-c */
  lcpd_arena_chunk_t *chunks;
  size_t used;  /* bytes handed out since the last reset */
  size_t limit; /* most bytes handed out between resets */
  /* Where a refused allocation is reported (may be NULL): LCP_ERR_NO_MEMORY
   * and "more than the N bytes of memory allowed" or "more memory than the
   * system gives", to follow "... needs". */
  lcpd_error_t *error;
} lcpd_arena_t;

void lcpd_arena_init(lcpd_arena_t *arena, size_t limit, lcpd_error_t *error);
/* Zeroed, aligned for any type; NULL when refused (over the limit or out of
 * memory). */
void *lcpd_arena_alloc(lcpd_arena_t *arena, size_t size);
/* count × size bytes, zeroed; count may be 0 (a valid pointer is returned). */
void *lcpd_arena_array(lcpd_arena_t *arena, size_t count, size_t size);
char *lcpd_arena_strdup(lcpd_arena_t *arena, const char *text);
/* Frees everything allocated; the arena serves the next request. */
void lcpd_arena_reset(lcpd_arena_t *arena);
/* Frees every chunk, the kept one too. */
void lcpd_arena_destroy(lcpd_arena_t *arena);

#define LCPD_NEW(arena, type) ((type *)lcpd_arena_alloc((arena), sizeof(type)))

#endif
