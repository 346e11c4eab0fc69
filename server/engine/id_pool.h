/* SPDX-License-Identifier: Apache-2.0 */
/* Ids of one kind of object (a world's bodies, geoms or robots): the one
 * mechanism by which an id is handed out, resolved to the object's slot in
 * its dense array, and refused once the object is gone.
 *
 * An id packs an index into the pool's table (the low ID_INDEX_BITS bits)
 * and that index's generation (the next ID_GENERATION_BITS bits); bit 31 is
 * always clear, so an id is a non-negative int32 and LCP_NULL_ID (-1) is
 * never one. Removing an object puts its index on a free list with its
 * generation advanced by one: the next object of the kind reuses the index
 * under the new generation, and the removed object's id, whose generation
 * no longer matches, resolves to nothing instead of to the newcomer. An
 * index whose generation is exhausted is retired rather than reused, so no
 * id is ever handed out twice by one pool.
 *
 * The free list is last in, first out, and nothing else decides which id
 * comes next: the same sequence of adds and removes gives the same ids.
 *
 * The table maps an index to the object's slot; the objects themselves stay
 * in their dense arrays in creation order (the step's order), and whoever
 * moves an object within its array tells the pool (id_pool_move). */
#ifndef LCP_ID_POOL_H
#define LCP_ID_POOL_H

#include <stdint.h>

enum {
  ID_INDEX_BITS = 20,      /* up to 1,048,576 live objects of a kind */
  ID_GENERATION_BITS = 11, /* 2,048 objects in turn per index before it is retired */
};
#define ID_INDEX_MASK ((UINT32_C(1) << ID_INDEX_BITS) - 1u)
#define ID_GENERATION_MAX ((UINT32_C(1) << ID_GENERATION_BITS) - 1u)

typedef struct id_entry {
  int32_t slot;        /* the live object's slot in its dense array; -1 when none */
  int32_t next_free;   /* the next index on the free list, -1 at its end */
  uint32_t generation; /* of the live object, or of the next one when free */
} id_entry;

typedef struct id_pool {
  id_entry *entries; /* [count], indexed by an id's index */
  int32_t count;     /* indices handed out so far, free and retired ones included */
  int32_t capacity;
  int32_t free_head; /* the most recently freed index, -1 when none is free */
} id_pool;

void lcp__id_pool_init(id_pool *pool);
void lcp__id_pool_destroy(id_pool *pool);

/* Hands out a new id for an object at slot. LCP_ERR_NO_MEMORY when the table
 * cannot grow or every index is live or retired; nothing changes then. */
int lcp__id_pool_add(id_pool *pool, int32_t slot, int32_t *out_id);

/* Frees a live id (id_pool_slot(pool, id) >= 0): from now on it resolves to
 * nothing, and its index waits for the next lcp__id_pool_add. */
void lcp__id_pool_remove(id_pool *pool, int32_t id);

/* Records that the live object id now sits at slot. */
static inline void id_pool_move(id_pool *pool, int32_t id, int32_t slot) {
  pool->entries[(uint32_t)id & ID_INDEX_MASK].slot = slot;
}

/* The slot of the object with this id, or -1 when no live object has it: an
 * id of a removed object (its index reused or not), an id never handed
 * out, a negative value. */
static inline int32_t id_pool_slot(const id_pool *pool, int32_t id) {
  if (id < 0)
    return -1;
  uint32_t index = (uint32_t)id & ID_INDEX_MASK;
  if (index >= (uint32_t)pool->count)
    return -1;
  const id_entry *e = &pool->entries[index];
  /* a free or retired entry has slot -1, whatever its generation */
  return e->generation == (uint32_t)id >> ID_INDEX_BITS ? e->slot : -1;
}

#endif
