/* SPDX-License-Identifier: Apache-2.0 */
/* Generation-checked ids (id_pool.h). */
#include "id_pool.h"

#include "lcpsim/lcpsim.h"

#include <stdlib.h>

_Static_assert(ID_INDEX_BITS + ID_GENERATION_BITS == 31,
               "an id fills the 31 bits of a non-negative int32");

void lcp__id_pool_init(id_pool *pool) { *pool = (id_pool){.free_head = -1}; }

void lcp__id_pool_destroy(id_pool *pool) {
  free(pool->entries);
  lcp__id_pool_init(pool);
}

static int32_t make_id(uint32_t index, uint32_t generation) {
  return (int32_t)(generation << ID_INDEX_BITS | index);
}

int lcp__id_pool_add(id_pool *pool, int32_t slot, int32_t *out_id) {
  if (pool->free_head >= 0) {
    int32_t index = pool->free_head;
    id_entry *e = &pool->entries[index];
    pool->free_head = e->next_free;
    e->slot = slot;
    e->next_free = -1;
    *out_id = make_id((uint32_t)index, e->generation);
    return LCP_OK;
  }
  if ((uint32_t)pool->count > ID_INDEX_MASK)
    return LCP_ERR_NO_MEMORY; /* every index is live or retired */
  if (pool->count == pool->capacity) {
    int32_t cap = pool->capacity > 0 ? 2 * pool->capacity : 16;
    if ((uint32_t)cap > ID_INDEX_MASK + 1u)
      cap = (int32_t)(ID_INDEX_MASK + 1u);
    id_entry *grown = realloc(pool->entries, (size_t)cap * sizeof *grown);
    if (!grown)
      return LCP_ERR_NO_MEMORY;
    pool->entries = grown;
    pool->capacity = cap;
  }
  int32_t index = pool->count++;
  pool->entries[index] = (id_entry){.slot = slot, .next_free = -1, .generation = 0};
  *out_id = make_id((uint32_t)index, 0);
  return LCP_OK;
}

void lcp__id_pool_remove(id_pool *pool, int32_t id) {
  uint32_t index = (uint32_t)id & ID_INDEX_MASK;
  id_entry *e = &pool->entries[index];
  e->slot = -1;
  if (e->generation == ID_GENERATION_MAX)
    return; /* retired: a further generation would wrap to ids handed out before */
  e->generation++;
  e->next_free = pool->free_head;
  pool->free_head = (int32_t)index;
}
