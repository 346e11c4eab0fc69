/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_pool: many worlds spread over many daemons (a list of endpoints, or a DNS name that
 * resolves to many addresses, such as a Kubernetes headless Service), stepped together, and
 * moved off a daemon that fails.
 *
 * Each tick sends one BatchStep to every daemon at once (one client each, their replies waited
 * for together with zmq_poll, one thread) and returns when all have answered. Every
 * snapshot_every ticks the BatchSteps also ask for each world's snapshot; the pool keeps the last
 * one and the steps and targets given since. When a daemon fails (it has no connection when a
 * tick is sent, its connection drops while the pool waits for its reply, which a monitor of the
 * client's socket shows at once, or it does not answer within the timeout), its worlds are
 * created again on the other daemons from their last snapshots (CreateWorld with the same source
 * and the snapshot) and the ticks since are run again there: the daemons being deterministic, the
 * moved worlds end bitwise where they would have. Each move is reported, with the reason
 * (lcpsim_pool_moves).
 *
 * A snapshot holds a world's state, not its controllers' targets nor its dynamics: give every
 * world its targets each tick so that a moved world replays exactly. Dynamics edits made through
 * the pool (lcpsim_pool_set_dynamics) are carried: the pool keeps every one, and a moved world,
 * once created from its snapshot, gets again those made before the snapshot, in order, then the
 * ticks and the edits since, each in its place. Edits made on a daemon directly
 * (lcpsim_client_set_dynamics) are not: a moved world would lose them.
 */
#ifndef LCPSIM_POOL_H
#define LCPSIM_POOL_H

#include "lcpsim_client.h"

#ifdef __cplusplus
extern "C" {
#endif
LCP_API_BEGIN

/* The endpoints of every address a "tcp://HOST:PORT" endpoint's host resolves to (getaddrinfo:
 * all A and AAAA records, each once, "tcp://[v6]:PORT" for IPv6), in the resolver's order; any
 * other endpoint gives itself. `*endpoints` (malloc'd strings in a malloc'd array) is freed with
 * lcpsim_endpoints_free. LCPSIM_ERR_NOT_FOUND when the name does not resolve. */
int lcpsim_resolve_endpoints(const char *endpoint, char ***endpoints, size_t *count);
void lcpsim_endpoints_free(char **endpoints, size_t count);

typedef struct {
  /* The worlds' source on every daemon: at most one of copy_of, scene_path and scene_text (none:
   * copy_of "default"). */
  const char *copy_of;
  const char *scene_path;
  const char *scene_text;
  const char *prefix; /* world names: prefix + index (NULL: "pool") */
  int snapshot_every; /* ticks between snapshots (0: 10) */
  int timeout_ms;     /* a daemon that takes longer to answer a tick has failed (0: 10000) */
} lcpsim_pool_options_t;

typedef struct {
  size_t world;            /* its index */
  const char *source;      /* the endpoint it left (a failed daemon) */
  const char *destination; /* the endpoint it went to */
  uint64_t from_step;      /* the step count of the snapshot it continued from */
  /* Why the source was taken as failed: "connection lost" (its connection dropped), "no
   * connection" (none to send a tick on), "no reply within the timeout", "transport error". */
  const char *reason;
} lcpsim_pool_move_t;

typedef struct lcpsim_pool lcpsim_pool_t;

/* Connects to the daemons and creates n_worlds worlds, world i on daemon i mod n_endpoints, and
 * takes their first snapshots. options may be NULL (the defaults). */
int lcpsim_pool_new(const char *const *endpoints, size_t n_endpoints, size_t n_worlds,
                    const lcpsim_pool_options_t *options, lcpsim_pool_t **pool);
/* Destroys the worlds on the daemons still alive, and the pool. */
void lcpsim_pool_destroy(lcpsim_pool_t **pool);

size_t lcpsim_pool_world_count(const lcpsim_pool_t *pool);
const char *lcpsim_pool_world_name(const lcpsim_pool_t *pool, size_t world);
/* The endpoint of the daemon that holds the world now. */
const char *lcpsim_pool_world_endpoint(const lcpsim_pool_t *pool, size_t world);

/* One tick: every world steps `steps` times after targets[world] (targets NULL: none; a target
 * with a NULL robot: none for that world). flags: LCPSIM_BATCH_RETURN_STATE and
 * LCPSIM_BATCH_WITH_CONTACTS. results (may be NULL) receives an array of one result per world
 * (time, step_count, the state with LCPSIM_BATCH_RETURN_STATE), owned by the pool and valid
 * until the next tick. A world's own failure (a bad target) fails the tick with that world's
 * code; no daemon left: LCPSIM_ERR_TRANSPORT. */
int lcpsim_pool_step(lcpsim_pool_t *pool, int steps, const lcpsim_target_t *targets, unsigned flags,
                     const lcpsim_batch_result_t *const **results);

/* Changes world `world`'s dynamics (masses, inertias, friction, joint damping, limits...; see
 * lcpsim_client_set_dynamics), all or nothing, and records the edit in the world's history
 * between the ticks before and after it, so that a move re-applies it; bodies and joints are
 * copied (nothing of the caller's is kept). A refused edit (an unknown joint, say) returns the
 * daemon's code, its message in lcpsim_pool_last_error, and is not recorded. When the world's
 * daemon has failed, found as a tick finds it (no connection, a dropped connection, no answer
 * within the timeout), its worlds move first, as in a tick (lcpsim_pool_moves reports them), and
 * the edit goes to the world's new daemon; no daemon left: LCPSIM_ERR_TRANSPORT. Unlike the
 * ticks, kept back to the last snapshot only, every edit is kept for the life of the pool. */
int lcpsim_pool_set_dynamics(lcpsim_pool_t *pool, size_t world,
                             const lcpsim_body_dynamics_t *bodies, size_t n_bodies,
                             const lcpsim_joint_dynamics_t *joints, size_t n_joints);

/* The moves made so far, in order; `*moves` is owned by the pool. */
size_t lcpsim_pool_moves(const lcpsim_pool_t *pool, const lcpsim_pool_move_t **moves);
/* The endpoints of the daemons taken as failed, in order. */
size_t lcpsim_pool_failed(const lcpsim_pool_t *pool, const char *const **endpoints);

/* Why the last call failed ("" after a success). */
const char *lcpsim_pool_last_error(const lcpsim_pool_t *pool);

LCP_API_END
#ifdef __cplusplus
}
#endif

#endif
