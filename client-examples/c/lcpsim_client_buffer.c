/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: the state buffer, an arena that decoded replies are allocated from. */
#include "lcpsim_client_internal.h"

#include <stdlib.h>

/* An arena: protobuf-c allocates the decoded reply from its blocks and frees nothing; a reset
 * makes the whole arena free again. After a reset that found more than one block, the blocks are
 * merged into one of their total size, so a steady loop decodes its states with no malloc. */
typedef struct arena_block {
  struct arena_block *next;
  size_t capacity;
  size_t used;
  max_align_t data[]; /* aligned for any decoded field */
} arena_block_t;

struct lcpsim_state_buffer {
  ProtobufCAllocator allocator;
  arena_block_t *blocks; /* the block allocated from first; older ones follow */
  size_t total_capacity;
};

enum { ARENA_FIRST_BLOCK = 16384 };

static arena_block_t *arena_block_new(size_t capacity) {
  arena_block_t *block = malloc(sizeof *block + capacity);
  if (block)
    *block = (arena_block_t){.capacity = capacity};
  return block;
}

static void *arena_alloc(void *data, size_t size) {
  lcpsim_state_buffer_t *buffer = data;
  const size_t alignment = sizeof(max_align_t);
  size = (size + alignment - 1) / alignment * alignment;
  arena_block_t *block = buffer->blocks;
  if (!block || block->capacity - block->used < size) {
    size_t capacity = buffer->total_capacity > size ? buffer->total_capacity : size;
    arena_block_t *grown = arena_block_new(capacity);
    if (!grown)
      return NULL;
    grown->next = block;
    buffer->blocks = block = grown;
    buffer->total_capacity += capacity;
  }
  void *memory = (char *)block->data + block->used;
  block->used += size;
  return memory;
}

/* Memory goes back at the next reset. */
static void arena_free(void *data, void *pointer) {
  (void)data;
  (void)pointer;
}

static void arena_release(lcpsim_state_buffer_t *buffer) {
  for (arena_block_t *block = buffer->blocks; block;) {
    arena_block_t *next = block->next;
    free(block);
    block = next;
  }
  buffer->blocks = NULL;
  buffer->total_capacity = 0;
}

static void arena_reset(lcpsim_state_buffer_t *buffer) {
  if (buffer->blocks && buffer->blocks->next) {
    size_t total = buffer->total_capacity;
    arena_release(buffer);
    buffer->blocks = arena_block_new(total); /* on failure the next allocation tries again */
    buffer->total_capacity = buffer->blocks ? total : 0;
  }
  if (buffer->blocks)
    buffer->blocks->used = 0;
}

ProtobufCAllocator *lcpc_state_buffer_reset(lcpsim_state_buffer_t *buffer) {
  arena_reset(buffer);
  return &buffer->allocator;
}

ProtobufCAllocator *lcpc_state_buffer_allocator(lcpsim_state_buffer_t *buffer) {
  return &buffer->allocator;
}

int lcpsim_state_buffer_new(lcpsim_state_buffer_t **buffer) {
  if (!buffer)
    return LCPSIM_ERR_USAGE;
  *buffer = calloc(1, sizeof **buffer);
  if (!*buffer)
    return LCPSIM_ERR_NO_MEMORY;
  (*buffer)->allocator = (ProtobufCAllocator){arena_alloc, arena_free, *buffer};
  (*buffer)->blocks = arena_block_new(ARENA_FIRST_BLOCK);
  (*buffer)->total_capacity = (*buffer)->blocks ? ARENA_FIRST_BLOCK : 0;
  return LCPSIM_OK;
}

void lcpsim_state_buffer_destroy(lcpsim_state_buffer_t **buffer) {
  if (!buffer || !*buffer)
    return;
  arena_release(*buffer);
  free(*buffer);
  *buffer = NULL;
}

size_t lcpsim_state_buffer_capacity(const lcpsim_state_buffer_t *buffer) {
  return buffer ? buffer->total_capacity : 0;
}
