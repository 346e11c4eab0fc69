/* The world's internal layout, shared by world.c (API, bodies, geoms,
 * snapshots) and step.c (the step pipeline).
 *
 * Model / state split (DESIGN.md §2): `model` is what the world is — bodies'
 * mass properties, geoms, settings; `state` is what it is doing — poses,
 * velocities, pending forces, the warm-start cache, time. A snapshot is the
 * state alone. Everything a step derives (world transforms, boxes, rows) lives
 * in the per-step arena and is gone when the step ends.
 */
#ifndef LCP_WORLD_INTERNAL_H
#define LCP_WORLD_INTERNAL_H

#include "arena.h"
#include "broadphase.h"
#include "collide.h"
#include "lcp_math.h"
#include "lcpsim/lcpsim.h"

#include <stdint.h>

typedef struct body_model {
  lcp_body_id id;
  lcp_body_type_t type;
  double mass;
  double inv_mass;        /* 0 for static bodies */
  mat3 inertia_local;     /* about the centre of mass, body axes */
  mat3 inv_inertia_local; /* zero for static bodies */
} body_model;

typedef struct body_state {
  vec3 position;
  quat orientation;
  vec3 linear_velocity;
  vec3 angular_velocity;
  vec3 force;  /* pending until the next step */
  vec3 torque; /* pending until the next step */
} body_state;

typedef struct geom_model {
  lcp_geom_id id;
  lcp_body_id body;
  xform local; /* geom frame in the body frame */
  shape shape;
  hull *hull; /* owned; shape.hull points here */
  double friction;
  uint32_t category_bits;
  uint32_t collide_mask;
} geom_model;

/* Impulses of one contact point kept for the next step's warm start. */
typedef struct cached_point {
  uint32_t feature_id;
  double normal_impulse;
  double friction_impulse[2];
} cached_point;

typedef struct cached_manifold {
  lcp_geom_id geom_a, geom_b; /* geom_a < geom_b; the cache is sorted by (a, b) */
  int32_t point_count;
  cached_point points[MANIFOLD_MAX_POINTS];
} cached_manifold;

typedef struct world_model {
  lcp_world_settings_t settings;
  int32_t body_count; /* creation order; slot 0 is the world body */
  int32_t body_capacity;
  body_model *bodies;
  int32_t geom_count; /* creation order */
  int32_t geom_capacity;
  geom_model *geoms;
  lcp_body_id next_body_id;
  lcp_geom_id next_geom_id;
  int32_t body_slot_capacity;
  int32_t *body_slot_of_id; /* id → slot, -1 once removed */
} world_model;

typedef struct world_state {
  double time;
  uint64_t step_count;
  body_state *bodies; /* parallel to model.bodies (same capacity) */
  int32_t cache_count;
  int32_t cache_capacity;
  cached_manifold *cache;
} world_state;

struct lcp_world {
  world_model model;
  world_state state;
  sap broadphase;
  arena scratch;
  lcp_step_stats_t stats;
  /* the last step's contacts, for lcp_world_get_contacts */
  int32_t contact_count;
  int32_t contact_capacity;
  lcp_contact_info_t *contacts;
  lcp_log_fn log_fn;
  void *log_user;
  char last_error[256];
};

/* Records a formatted error message for lcp_world_last_error and returns code. */
int world_fail(lcp_world_t *world, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void world_log(const lcp_world_t *world, lcp_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int32_t world_body_slot(const lcp_world_t *world, lcp_body_id id);
/* Grows a heap array to hold at least need elements (geometric growth). */
int world_reserve(void **array, int32_t *capacity, int32_t need, size_t element_size);

#endif
