/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's worlds by name: the default world ("default", the one the
 * daemon starts with) first, then the others in the order they were
 * created. A name is found through a hash table (open addressing, linear
 * probing), so that a BatchStep naming hundreds of worlds costs a lookup per
 * world, not a scan of every name. The limits (how many worlds, how much
 * memory) are checked when a world is created. Knows nothing of sockets or
 * protobuf. */
#ifndef LCPD_WORLDS_H
#define LCPD_WORLDS_H

#include "error.h"
#include "sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A world's name: [A-Za-z0-9_.-], 1 to 63 bytes. */
#define LCPD_WORLD_NAME_MAX 64
#define LCPD_DEFAULT_WORLD "default"
/* The defaults of --max-worlds and --max-world-memory (when --max-memory
 * is not given). */
#define LCPD_DEFAULT_MAX_WORLDS 256
#define LCPD_DEFAULT_MAX_WORLD_BYTES ((uint64_t)1 << 30)

typedef struct lcpd_world {
  char name[LCPD_WORLD_NAME_MAX];
  lcpd_sim_t *sim; /* the default world's is main's; the others' are owned */
  bool owned;
  /* The state stream's topic: "state" for the default world, else
   * "w/NAME/state" (without a NUL on the wire). */
  char topic[LCPD_WORLD_NAME_MAX + 8];
  size_t topic_length;
  /* Set while a BatchStep steps it on a worker thread. */
  bool busy;
  /* The BatchStep that last named it (to refuse a world named twice). */
  uint64_t batch_mark;
} lcpd_world_t;

typedef struct lcpd_worlds {
  lcpd_world_t **items; /* creation order; items[0] is the default world */
  int32_t count, capacity;
  int32_t *table; /* index into items, -1: empty; table_size a power of two */
  uint32_t table_size;
  uint32_t next_number; /* for made-up names: world1, world2, ... */
  uint32_t max_worlds;  /* the default world counted */
  uint64_t max_bytes;   /* all worlds' lcpd_world_memory_bytes together */
} lcpd_worlds_t;

/* The registry with the default world (sim, not owned) in it. */
int lcpd_worlds_init(lcpd_worlds_t *worlds, lcpd_sim_t *default_sim, uint32_t max_worlds,
                     uint64_t max_bytes, lcpd_error_t *error);
/* Destroys every world but the default one. */
void lcpd_worlds_destroy(lcpd_worlds_t *worlds);

/* The world of that name; "" is the default world. NULL: none. */
lcpd_world_t *lcpd_worlds_find(const lcpd_worlds_t *worlds, const char *name);
static inline lcpd_world_t *lcpd_worlds_default(const lcpd_worlds_t *worlds) {
  return worlds->items[0];
}

/* Whether name may name a new world: a message in *error when not (field
 * names the request's field). */
int lcpd_world_name_check(const char *name, const char *field, lcpd_error_t *error);

/* Adds a world built elsewhere (sim, heap-allocated and built; the registry
 * takes it over, and destroys it on failure too). An empty name gets one
 * made up. Refused, with nothing changed, for a name taken or invalid
 * (LCP_ERR_INVALID_ARGUMENT) and past the limits (LCP_ERR_NO_MEMORY, the
 * message naming the limit). */
int lcpd_worlds_add(lcpd_worlds_t *worlds, const char *name, lcpd_sim_t *sim, lcpd_world_t **out,
                    lcpd_error_t *error);
/* Removes and destroys a world (not the default one). */
int lcpd_worlds_remove(lcpd_worlds_t *worlds, lcpd_world_t *world, lcpd_error_t *error);

/* What a world holds, counted from its sizes: the engine's model, state,
 * caches and scratch memory (lcp_world_memory_size), the daemon's copies of
 * the robots' definitions (start-up scene and later edits, hull points
 * included), the names, the edits and the snapshot slots. */
uint64_t lcpd_world_memory_bytes(const lcpd_sim_t *sim);
/* All worlds' together. */
uint64_t lcpd_worlds_memory_bytes(const lcpd_worlds_t *worlds);

#endif
