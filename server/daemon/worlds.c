/* SPDX-License-Identifier: Apache-2.0 */
#include "worlds.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t name_hash(const char *name) {
  return lcp_hash_bytes(LCP_HASH_SEED, name, strlen(name));
}

/* Rebuilds the table for the current items (after a removal, or to grow it
 * so that it is at most half full). */
static int rebuild_table(lcpd_worlds_t *worlds, uint32_t size) {
  int32_t *table = malloc((size_t)size * sizeof *table);
  if (!table)
    return LCP_ERR_NO_MEMORY;
  for (uint32_t i = 0; i < size; ++i)
    table[i] = -1;
  for (int32_t k = 0; k < worlds->count; ++k) {
    uint32_t at = (uint32_t)name_hash(worlds->items[k]->name) & (size - 1);
    while (table[at] >= 0)
      at = (at + 1) & (size - 1);
    table[at] = k;
  }
  free(worlds->table);
  worlds->table = table;
  worlds->table_size = size;
  return LCP_OK;
}

static void set_topic(lcpd_world_t *world, bool is_default) {
  if (is_default)
    snprintf(world->topic, sizeof world->topic, "state");
  else
    snprintf(world->topic, sizeof world->topic, "w/%s/state", world->name);
  world->topic_length = strlen(world->topic);
}

int lcpd_worlds_init(lcpd_worlds_t *worlds, lcpd_sim_t *default_sim, uint32_t max_worlds,
                     uint64_t max_bytes, lcpd_error_t *error) {
  *worlds = (lcpd_worlds_t){.max_worlds = max_worlds, .max_bytes = max_bytes};
  lcpd_world_t *world = calloc(1, sizeof *world);
  worlds->items = malloc(8 * sizeof *worlds->items);
  if (!world || !worlds->items) {
    free(world);
    free(worlds->items);
    worlds->items = NULL;
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for the worlds");
  }
  worlds->capacity = 8;
  snprintf(world->name, sizeof world->name, "%s", LCPD_DEFAULT_WORLD);
  world->sim = default_sim;
  set_topic(world, true);
  worlds->items[worlds->count++] = world;
  if (rebuild_table(worlds, 16) != LCP_OK) {
    lcpd_worlds_destroy(worlds);
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for the worlds");
  }
  return LCP_OK;
}

static void free_world(lcpd_world_t *world) {
  if (world->owned) {
    lcpd_sim_destroy(world->sim);
    free(world->sim);
  }
  free(world);
}

void lcpd_worlds_destroy(lcpd_worlds_t *worlds) {
  for (int32_t i = 0; i < worlds->count; ++i)
    free_world(worlds->items[i]);
  free(worlds->items);
  free(worlds->table);
  *worlds = (lcpd_worlds_t){0};
}

lcpd_world_t *lcpd_worlds_find(const lcpd_worlds_t *worlds, const char *name) {
  if (name[0] == '\0')
    return worlds->items[0];
  uint32_t mask = worlds->table_size - 1;
  for (uint32_t at = (uint32_t)name_hash(name) & mask;; at = (at + 1) & mask) {
    int32_t index = worlds->table[at];
    if (index < 0)
      return NULL;
    if (strcmp(worlds->items[index]->name, name) == 0)
      return worlds->items[index];
  }
}

int lcpd_world_name_check(const char *name, const char *field, lcpd_error_t *error) {
  size_t length = strlen(name);
  if (length == 0 || length >= LCPD_WORLD_NAME_MAX)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s: a world's name has 1 to %d bytes (got %zu)", field,
                     LCPD_WORLD_NAME_MAX - 1, length);
  for (size_t i = 0; i < length; ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok)
      return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                       "%s: '%s' is not a world name: byte %zu is not one of A-Z a-z 0-9 _ . -",
                       field, LCPD_QUOTE(name), i);
  }
  return LCP_OK;
}

uint64_t lcpd_world_memory_bytes(const lcpd_sim_t *sim) {
  uint64_t defs = sim->edit_bytes;
  for (int32_t i = 0; i < sim->scene.robot_count; ++i)
    defs += lcpd_robot_def_bytes(sim->scene.robots[i].def);
  uint64_t names = 0;
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    names += sizeof sim->live.robots[i] + (uint64_t)sim->live.robots[i].link_count * LCP_NAME_MAX;
  names += (uint64_t)sim->live.body_count * sizeof *sim->live.bodies;
  uint64_t edits = (uint64_t)sim->edit_capacity * sizeof *sim->edits;
  uint64_t engine = lcp_world_memory_size(sim->live.world);
  return sizeof *sim + engine + defs + names + edits + sim->slot_bytes +
         (uint64_t)sim->slot_count * sizeof *sim->slots;
}

uint64_t lcpd_worlds_memory_bytes(const lcpd_worlds_t *worlds) {
  uint64_t total = 0;
  for (int32_t i = 0; i < worlds->count; ++i)
    total += lcpd_world_memory_bytes(worlds->items[i]->sim);
  return total;
}

/* A name no world has: world1, world2, ... */
static void made_up_name(lcpd_worlds_t *worlds, char name[LCPD_WORLD_NAME_MAX]) {
  do
    snprintf(name, LCPD_WORLD_NAME_MAX, "world%u", ++worlds->next_number);
  while (lcpd_worlds_find(worlds, name));
}

int lcpd_worlds_add(lcpd_worlds_t *worlds, const char *name, lcpd_sim_t *sim, lcpd_world_t **out,
                    lcpd_error_t *error) {
  int rc = LCP_OK;
  char chosen[LCPD_WORLD_NAME_MAX];
  if (name[0] == '\0') {
    made_up_name(worlds, chosen);
  } else if ((rc = lcpd_world_name_check(name, "create_world.name", error)) == LCP_OK) {
    if (lcpd_worlds_find(worlds, name))
      rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "create_world.name: a world named '%s' exists already", name);
    snprintf(chosen, sizeof chosen, "%s", name);
  }
  uint64_t bytes = lcpd_world_memory_bytes(sim), held = lcpd_worlds_memory_bytes(worlds);
  if (rc == LCP_OK && (uint32_t)worlds->count >= worlds->max_worlds)
    rc = lcpd_fail(error, LCP_ERR_NO_MEMORY,
                   "create_world: the daemon holds %d worlds, its limit (--max-worlds %u, the "
                   "default world counted); destroy one first",
                   worlds->count, worlds->max_worlds);
  if (rc == LCP_OK && held + bytes > worlds->max_bytes)
    rc = lcpd_fail(error, LCP_ERR_NO_MEMORY,
                   "create_world: the new world would hold %llu bytes, and the worlds %llu "
                   "already, more than the %llu allowed (--max-world-memory)",
                   (unsigned long long)bytes, (unsigned long long)held,
                   (unsigned long long)worlds->max_bytes);
  lcpd_world_t *world = NULL;
  if (rc == LCP_OK && worlds->count == worlds->capacity) {
    lcpd_world_t **grown =
        realloc(worlds->items, (size_t)worlds->capacity * 2 * sizeof *worlds->items);
    if (grown) {
      worlds->items = grown;
      worlds->capacity *= 2;
    } else {
      rc = lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for another world");
    }
  }
  if (rc == LCP_OK && 2 * (uint32_t)(worlds->count + 1) > worlds->table_size &&
      rebuild_table(worlds, 2 * worlds->table_size) != LCP_OK)
    rc = lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for another world");
  if (rc == LCP_OK && !(world = calloc(1, sizeof *world)))
    rc = lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for another world");
  if (rc != LCP_OK) {
    lcpd_sim_destroy(sim);
    free(sim);
    return rc;
  }
  snprintf(world->name, sizeof world->name, "%s", chosen);
  world->sim = sim;
  world->owned = true;
  sim->world_name = world->name;
  set_topic(world, false);
  uint32_t mask = worlds->table_size - 1;
  uint32_t at = (uint32_t)name_hash(world->name) & mask;
  while (worlds->table[at] >= 0)
    at = (at + 1) & mask;
  worlds->table[at] = worlds->count;
  worlds->items[worlds->count++] = world;
  *out = world;
  return LCP_OK;
}

int lcpd_worlds_remove(lcpd_worlds_t *worlds, lcpd_world_t *world, lcpd_error_t *error) {
  if (world == worlds->items[0])
    return lcpd_fail(error, LCP_ERR_STATE,
                     "destroy_world.name: the default world cannot be destroyed");
  int32_t index = 0;
  while (index < worlds->count && worlds->items[index] != world)
    index++;
  if (index == worlds->count)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "destroy_world.name: no such world");
  /* The table is rebuilt first: the world stays if that fails. */
  lcpd_world_t *last = worlds->items[index];
  memmove(&worlds->items[index], &worlds->items[index + 1],
          (size_t)(worlds->count - index - 1) * sizeof *worlds->items);
  worlds->count--;
  if (rebuild_table(worlds, worlds->table_size) != LCP_OK) {
    memmove(&worlds->items[index + 1], &worlds->items[index],
            (size_t)(worlds->count - index) * sizeof *worlds->items);
    worlds->items[index] = last;
    worlds->count++;
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  }
  LCPD_INFO("world '%s' destroyed", world->name);
  free_world(world);
  return LCP_OK;
}
