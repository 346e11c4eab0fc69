/* SPDX-License-Identifier: Apache-2.0 */
/* State snapshots (lcpsim.h): a world's state as bytes, restored bitwise,
 * and the state's hash. The model is not in a snapshot; a signature of its
 * layout is, so that a snapshot is refused by a world of another layout. */
#include "world_internal.h"

#include "state_check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- the snapshot ----
 * Layout: header {magic, version, layout signature, counts}, time, step
 * count, body states in slot order, warm-start cache, robots, then what the
 * last step reported (its statistics without timings, its contact list), so
 * that a restored world reads exactly as it did when saved. All
 * native-endian: a snapshot is for the same build on the same machine kind. */

#define SNAPSHOT_MAGIC 0x4c435053u /* "LCPS" */
#define SNAPSHOT_VERSION 5u

typedef struct snapshot_header {
  uint32_t magic;
  uint32_t version;
  uint64_t layout; /* signature of the model's bodies and geoms */
  int32_t body_count;
  int32_t cache_count;
  int32_t contact_count;
  int32_t unused; /* zero: no padding of unknown bytes */
  double time;
  uint64_t step_count;
} snapshot_header;

/* The identity of the model a state belongs to: body ids and types, geom ids
 * and owners. Kept until the model changes (every save and restore asks).
 * Masses are not in it: they are values a dynamics edit changes
 * (lcp_world_edit_dynamics) without changing what the state describes, and
 * a snapshot is taken back across such edits. */
static uint64_t layout_signature(const lcp_world_t *world) {
  if (world->layout_hash_valid)
    return world->layout_hash;
  uint64_t h = LCP_HASH_SEED;
  for (int32_t i = 0; i < world->model.body_count; ++i) {
    const body_model *b = &world->model.bodies[i];
    h = lcp_hash_bytes(h, &b->id, sizeof b->id);
    h = lcp_hash_bytes(h, &b->type, sizeof b->type);
  }
  for (int32_t i = 0; i < world->model.geom_count; ++i) {
    const geom_model *g = &world->model.geoms[i];
    h = lcp_hash_bytes(h, &g->id, sizeof g->id);
    h = lcp_hash_bytes(h, &g->body, sizeof g->body);
    h = lcp_hash_bytes(h, &g->shape.type, sizeof g->shape.type);
    h = lcp_hash_bytes(h, &g->robot, sizeof g->robot);
  }
  for (int32_t i = 0; i < world->model.robot_count; ++i) {
    const robot_model *r = &world->model.robots[i];
    h = lcp_hash_bytes(h, &r->id, sizeof r->id);
    h = lcp_hash_bytes(h, &r->mb.nq, sizeof r->mb.nq);
    h = lcp_hash_bytes(h, &r->mb.nv, sizeof r->mb.nv);
    h = lcp_hash_bytes(h, &r->mb.link_count, sizeof r->mb.link_count);
  }
  /* a cache of the model, not part of it (the world's state and what the
   * API returns stay as they were): const callers may fill it */
  lcp_world_t *cache = (lcp_world_t *)world;
  cache->layout_hash = h;
  cache->layout_hash_valid = true;
  return h;
}

/* The last step's statistics in a snapshot: the counts, without the
 * timings (which differ from run to run while the state does not). Field by
 * field, without padding. */
typedef struct snapshot_stats {
  int32_t pairs, manifolds, contacts, rows, iterations, warm_started;
  double residual;
} snapshot_stats;

/* A robot's part of a snapshot: lcp__robot_state_parts (state_check.c). */
static size_t robots_double_bytes(const lcp_world_t *world) {
  size_t n = 0;
  for (int32_t i = 0; i < world->model.robot_count; ++i) {
    robot_snapshot_part parts[ROBOT_SNAPSHOT_PARTS];
    int count = lcp__robot_state_parts(&world->model.robots[i], &world->state.robots[i], parts);
    for (int k = 0; k < count; ++k)
      n += parts[k].count;
  }
  return n * sizeof(double);
}

static size_t robot_control_bytes(const robot_model *r) {
  return (size_t)r->mb.joint_count * sizeof(lcp_joint_control_t) + sizeof(int32_t);
}

static size_t robots_state_bytes(const lcp_world_t *world) {
  size_t n = robots_double_bytes(world);
  for (int32_t i = 0; i < world->model.robot_count; ++i)
    n += robot_control_bytes(&world->model.robots[i]);
  return n;
}

/* Copies the robots' states to (save: states only read) or from (restore)
 * the snapshot bytes. */
static void robots_state_copy(const world_model *model, robot_state *states, unsigned char *flat,
                              bool save) {
  for (int32_t i = 0; i < model->robot_count; ++i) {
    robot_snapshot_part parts[ROBOT_SNAPSHOT_PARTS];
    int count = lcp__robot_state_parts(&model->robots[i], &states[i], parts);
    for (int k = 0; k < count; ++k) {
      size_t bytes = parts[k].count * sizeof(double);
      if (save)
        memcpy(flat, parts[k].data, bytes);
      else
        memcpy(parts[k].data, flat, bytes);
      flat += bytes;
    }
  }
  for (int32_t i = 0; i < model->robot_count; ++i) {
    robot_state *st = &states[i];
    size_t bytes = (size_t)model->robots[i].mb.joint_count * sizeof(lcp_joint_control_t);
    int32_t flag = (st->gravity_compensation ? 1 : 0) | (st->velocity_synchronized ? 2 : 0);
    if (save) {
      /* Field by field into zeroed records: the padding after `mode` holds
       * whatever the caller's struct held, and a snapshot's bytes must be the
       * same for the same state. */
      for (int32_t j = 0; j < model->robots[i].mb.joint_count; ++j) {
        const lcp_joint_control_t *from = &st->control[j];
        lcp_joint_control_t record;
        memset(&record, 0, sizeof record);
        record.mode = from->mode;
        record.position = from->position;
        record.velocity = from->velocity;
        record.kp = from->kp;
        record.kd = from->kd;
        record.torque = from->torque;
        record.effort_limit = from->effort_limit;
        memcpy(flat + (size_t)j * sizeof record, &record, sizeof record);
      }
      memcpy(flat + bytes, &flag, sizeof flag);
    } else {
      memcpy(st->control, flat, bytes);
      memcpy(&flag, flat + bytes, sizeof flag);
      st->gravity_compensation = (flag & 1) != 0;
      st->velocity_synchronized = (flag & 2) != 0;
    }
    flat += bytes + sizeof flag;
  }
}

/* Are the controls in a snapshot's bytes acceptable to lcp_robot_set_controls? */
static bool robots_controls_valid(const lcp_world_t *world, const unsigned char *flat) {
  for (int32_t i = 0; i < world->model.robot_count; ++i) {
    int32_t joints = world->model.robots[i].mb.joint_count;
    for (int32_t j = 0; j < joints; ++j) {
      lcp_joint_control_t c;
      memcpy(&c, flat, sizeof c);
      flat += sizeof c;
      if (!lcp__robot_control_valid(&c))
        return false;
    }
    flat += sizeof(int32_t);
  }
  return true;
}

/* Its bytes go into snapshots as they are: no padding may hide in it. */
_Static_assert(sizeof(lcp_contact_info_t) == 8 * sizeof(int32_t) + 10 * sizeof(double),
               "lcp_contact_info_t has padding");
_Static_assert(sizeof(snapshot_stats) == 6 * sizeof(int32_t) + sizeof(double),
               "snapshot_stats has padding");

size_t lcp_world_state_size(const lcp_world_t *world) {
  return sizeof(snapshot_header) + (size_t)world->model.body_count * sizeof(body_state) +
         (size_t)world->state.cache_count * sizeof(cached_manifold) + robots_state_bytes(world) +
         sizeof(snapshot_stats) + (size_t)world->contact_count * sizeof(lcp_contact_info_t);
}

/* Where each part of a snapshot with header h starts: the bodies, what
 * the last step reported (statistics, contacts), the warm-start cache, the
 * robots. */
typedef struct snapshot_parts {
  size_t bodies, stats, contacts, cache, robots, end;
} snapshot_parts;

static snapshot_parts parts_of(const lcp_world_t *world, const snapshot_header *h) {
  snapshot_parts at;
  at.bodies = sizeof *h;
  at.stats = at.bodies + (size_t)h->body_count * sizeof(body_state);
  at.contacts = at.stats + sizeof(snapshot_stats);
  at.cache = at.contacts + (size_t)h->contact_count * sizeof(lcp_contact_info_t);
  at.robots = at.cache + (size_t)h->cache_count * sizeof(cached_manifold);
  at.end = at.robots + robots_state_bytes(world);
  return at;
}

int lcp_world_save_state(const lcp_world_t *world, void *buffer, size_t capacity,
                         size_t *out_size) {
  size_t need = lcp_world_state_size(world);
  if (out_size)
    *out_size = need;
  if (!buffer || capacity < need)
    return LCP_ERR_INVALID_ARGUMENT;
  /* A snapshot is a state to come back to: one that is not finite is none
   * (and lcp_world_restore_state would refuse it). */
  char why[256];
  if (lcp__state_check(world, false, why, sizeof why) != LCP_OK)
    return lcp__world_fail((lcp_world_t *)world, LCP_ERR_NUMERIC,
                           "the state is not finite, no snapshot is taken: %s", why);
  snapshot_header h = {
      .magic = SNAPSHOT_MAGIC,
      .version = SNAPSHOT_VERSION,
      .layout = layout_signature(world),
      .body_count = world->model.body_count,
      .cache_count = world->state.cache_count,
      .contact_count = world->contact_count,
      .time = world->state.time,
      .step_count = world->state.step_count,
  };
  const snapshot_parts at = parts_of(world, &h);
  unsigned char *p = buffer;
  memcpy(p, &h, sizeof h);
  if (h.body_count)
    memcpy(p + at.bodies, world->state.bodies, (size_t)h.body_count * sizeof(body_state));
  const lcp_step_stats_t *st = &world->stats;
  const snapshot_stats stats = {st->pairs,      st->manifolds,    st->contacts, st->rows,
                                st->iterations, st->warm_started, st->residual};
  memcpy(p + at.stats, &stats, sizeof stats);
  if (h.contact_count)
    memcpy(p + at.contacts, world->contacts, (size_t)h.contact_count * sizeof(lcp_contact_info_t));
  if (h.cache_count)
    memcpy(p + at.cache, world->state.cache, (size_t)h.cache_count * sizeof(cached_manifold));
  robots_state_copy(&world->model, world->state.robots, p + at.robots, true);
  return LCP_OK;
}

static bool all_finite(const double *values, size_t count) {
  for (size_t k = 0; k < count; ++k)
    if (!isfinite(values[k]))
      return false;
  return true;
}

/* Whether the last step's report in a snapshot is finite. */
static bool report_valid(const unsigned char *stats_bytes, const unsigned char *contact_bytes,
                         int32_t contact_count) {
  snapshot_stats stats;
  memcpy(&stats, stats_bytes, sizeof stats);
  if (!isfinite(stats.residual))
    return false;
  for (int32_t i = 0; i < contact_count; ++i) {
    lcp_contact_info_t c;
    memcpy(&c, contact_bytes + (size_t)i * sizeof c, sizeof c);
    const double numbers[] = {
        c.position[0],         c.position[1],        c.position[2], c.normal[0],
        c.normal[1],           c.normal[2],          c.depth,       c.normal_impulse,
        c.friction_impulse[0], c.friction_impulse[1]};
    if (!all_finite(numbers, sizeof numbers / sizeof numbers[0]))
      return false;
  }
  return true;
}

int lcp_world_restore_state(lcp_world_t *world, const void *buffer, size_t size) {
  snapshot_header h;
  if (!buffer || size < sizeof h)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "snapshot too short (%zu bytes)", size);
  memcpy(&h, buffer, sizeof h);
  if (h.magic != SNAPSHOT_MAGIC || h.version != SNAPSHOT_VERSION)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "not an lcpsim state snapshot");
  if (h.layout != layout_signature(world) || h.body_count != world->model.body_count)
    return lcp__world_fail(world, LCP_ERR_MISMATCH,
                           "snapshot belongs to another world (different bodies or geoms)");
  if (h.cache_count < 0 || h.contact_count < 0 || size != parts_of(world, &h).end)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "snapshot size does not match its header");
  const snapshot_parts at = parts_of(world, &h);
  const unsigned char *p = buffer;
  for (int32_t i = 0; i < h.body_count; ++i) {
    body_state s;
    memcpy(&s, p + at.bodies + (size_t)i * sizeof s, sizeof s);
    if (!v3_is_finite(s.position) || !q_is_finite(s.orientation) ||
        !v3_is_finite(s.linear_velocity) || !v3_is_finite(s.angular_velocity))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "snapshot holds non-finite values");
  }
  if (!report_valid(p + at.stats, p + at.contacts, h.contact_count))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "snapshot holds non-finite values");
  /* The cache names geoms by slot and is searched in (slot_a, slot_b)
   * order; each manifold holds at most MANIFOLD_MAX_POINTS points. */
  for (int32_t i = 0; i < h.cache_count; ++i) {
    cached_manifold c;
    memcpy(&c, p + at.cache + (size_t)i * sizeof c, sizeof c);
    if (!(0 <= c.slot_a && c.slot_a < c.slot_b && c.slot_b < world->model.geom_count) ||
        c.point_count < 0 || c.point_count > MANIFOLD_MAX_POINTS)
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "snapshot holds an invalid contact");
  }
  size_t robot_doubles = robots_double_bytes(world) / sizeof(double);
  for (size_t i = 0; i < robot_doubles; ++i) {
    double x;
    memcpy(&x, p + at.robots + i * sizeof x, sizeof x);
    if (!isfinite(x))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "snapshot holds non-finite values");
  }
  if (!robots_controls_valid(world, p + at.robots + robot_doubles * sizeof(double)))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "snapshot holds invalid joint controls");
  if (lcp__world_reserve((void **)&world->state.cache, &world->state.cache_capacity, h.cache_count,
                         sizeof(cached_manifold)) != LCP_OK ||
      lcp__world_reserve((void **)&world->contacts, &world->contact_capacity, h.contact_count,
                         sizeof(lcp_contact_info_t)) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory restoring a snapshot");
  /* Checked whole: from here nothing fails. */
  if (h.body_count)
    memcpy(world->state.bodies, p + at.bodies, (size_t)h.body_count * sizeof(body_state));
  snapshot_stats stats;
  memcpy(&stats, p + at.stats, sizeof stats);
  world->stats = (lcp_step_stats_t){.pairs = stats.pairs,
                                    .manifolds = stats.manifolds,
                                    .contacts = stats.contacts,
                                    .rows = stats.rows,
                                    .iterations = stats.iterations,
                                    .residual = stats.residual,
                                    .warm_started = stats.warm_started};
  if (h.contact_count)
    memcpy(world->contacts, p + at.contacts, (size_t)h.contact_count * sizeof(lcp_contact_info_t));
  world->contact_count = h.contact_count;
  if (h.cache_count)
    memcpy(world->state.cache, p + at.cache, (size_t)h.cache_count * sizeof(cached_manifold));
  world->state.cache_count = h.cache_count;
  robots_state_copy(&world->model, world->state.robots, (unsigned char *)(uintptr_t)(p + at.robots),
                    false);
  lcp__world_refresh_robot_kinematics(world);
  world->state.time = h.time;
  world->state.step_count = h.step_count;
  return LCP_OK;
}

uint64_t lcp_world_state_hash(const lcp_world_t *world) {
  uint64_t h = LCP_HASH_SEED;
  h = lcp_hash_bytes(h, &world->state.time, sizeof world->state.time);
  h = lcp_hash_bytes(h, &world->state.step_count, sizeof world->state.step_count);
  for (int32_t i = 0; i < world->model.body_count; ++i) {
    const body_state *b = &world->state.bodies[i];
    h = lcp_hash_bytes(h, &b->position, sizeof b->position);
    h = lcp_hash_bytes(h, &b->orientation, sizeof b->orientation);
    h = lcp_hash_bytes(h, &b->linear_velocity, sizeof b->linear_velocity);
    h = lcp_hash_bytes(h, &b->angular_velocity, sizeof b->angular_velocity);
  }
  for (int32_t i = 0; i < world->model.robot_count; ++i) {
    const robot_model *r = &world->model.robots[i];
    h = lcp_hash_bytes(h, world->state.robots[i].q, (size_t)r->mb.nq * sizeof(double));
    h = lcp_hash_bytes(h, world->state.robots[i].qd, (size_t)r->mb.nv * sizeof(double));
  }
  return h;
}
