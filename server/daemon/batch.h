/* SPDX-License-Identifier: Apache-2.0 */
/* BatchStep: many worlds stepped in one request on the worker threads
 * (pool.h). The event loop's thread checks the request whole (every world
 * named at most once, at most LCPD_MAX_BATCH_WORLDS of them) and gives each
 * world's part to a job of its own (lcpd_call_world_step, batch_world.h: its own arenas
 * and undo buffers, so that jobs share nothing but the decoded request,
 * which they only read). It runs jobs itself, in one of the workers'
 * seats, as long as it expects them done within one slice of a Step (from
 * its world's last step time), then returns to the loop; the reply is made
 * on the loop's thread once every job is over, in the request's order. A world is
 * stepped by one thread, from start to end, with the engine's deterministic
 * step: its result does not depend on the number of threads nor on the
 * order in which the jobs end. States a world's stream is due meanwhile
 * are built by its job and published by the loop after the batch. */
#ifndef LCPD_BATCH_H
#define LCPD_BATCH_H

#include "handlers.h"
#include "memory.h"
#include "pool.h"
#include "worlds.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <zmq.h>

/* The most worlds one BatchStep may name. */
#define LCPD_MAX_BATCH_WORLDS 4096

typedef struct lcpd_batch_job lcpd_batch_job_t;

/* A state stream message made during the batch, sent by the loop after it. */
typedef void (*lcpd_send_frame_fn)(void *user, zmq_msg_t *frame);
/* The batch is over and the BatchStep's reply ready (on the loop's thread). */
typedef void (*lcpd_batch_over_fn)(void *user);

typedef struct lcpd_batch {
  lcpd_pool_t pool;
  int workers;
  lcpd_batch_job_t **jobs; /* each allocated on its own: a job's arenas point into it */
  size_t job_capacity;
  size_t job_count;
  size_t *pooled; /* the jobs the workers run (indices into jobs) */
  size_t pooled_count;
  lcpd_call_t *call; /* the BatchStep being served */
  uint64_t mark;     /* counted up per BatchStep (lcpd_world_t.batch_mark) */
  bool running;
  atomic_bool stop; /* set at shutdown: jobs stop after their current slice */
  size_t reply_limit;
  int32_t max_steps;
  uint64_t slice_ns;   /* a Step's slice: the most the loop spends on a batch's jobs */
  uint64_t started_ns; /* uv_hrtime() when the running batch started */
  lcpd_batch_over_fn over;
  lcpd_send_frame_fn send_frame;
  void *user;
} lcpd_batch_t;

int lcpd_batch_open(lcpd_batch_t *batch, uv_loop_t *loop, int workers, size_t reply_limit,
                    int32_t max_steps, uint64_t slice_ns, lcpd_batch_over_fn over,
                    lcpd_send_frame_fn send_frame, void *user, lcpd_error_t *error);
/* Starts serving the decoded BatchStep in call. Returns true when its reply
 * is ready already (refused whole, or every job ran on this thread), false
 * when the workers run: then over() is called when it is ready. jobs on
 * the default world run on this thread when run_default_here (the HTTP
 * side, the recorder or the realtime clock read that world on the loop). */
bool lcpd_batch_start(lcpd_batch_t *batch, lcpd_call_t *call, lcpd_worlds_t *worlds,
                      bool run_default_here);
void lcpd_batch_close_handles(lcpd_batch_t *batch);
/* Stops the workers (each after its current slice of steps). */
void lcpd_batch_stop(lcpd_batch_t *batch);
void lcpd_batch_destroy(lcpd_batch_t *batch);

#endif
