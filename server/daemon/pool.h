/* SPDX-License-Identifier: Apache-2.0 */
/* The worker threads of BatchStep: a fixed set of pthreads that run the
 * tasks of one batch at a time (task i of n, each task on one thread),
 * taking the next task as they finish one, and tell the event loop when
 * the last one is done (uv_async_send: the done callback runs on the loop's
 * thread). The thread that starts a batch may run tasks of it too
 * (lcpd_pool_help), in one of the workers' seats: at most `workers` threads
 * run tasks at a time, so that on a machine with as many cores as workers
 * no two of them share a core, and a short batch costs neither the wake-up
 * of the thread the loop's share would have gone to nor the loop's own
 * wake-up when that thread ends it. libuv's own thread pool is left to
 * libuv. */
#ifndef LCPD_POOL_H
#define LCPD_POOL_H

#include "error.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

/* The most worker threads (--workers). */
#define LCPD_MAX_WORKERS 64

typedef void (*lcpd_task_fn)(void *context, size_t index);
/* Whether the helping thread may run task index now (asked under the
 * pool's lock, for the next task in order: it must be quick). */
typedef bool (*lcpd_task_accept_fn)(void *context, size_t index);
typedef void (*lcpd_batch_done_fn)(void *user);

typedef struct lcpd_pool {
  pthread_t threads[LCPD_MAX_WORKERS];
  int thread_count;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bool locks_made;
  /* The batch running: tasks [0, total) of run(context, i); next is the
   * first not taken, finished counts those done. */
  lcpd_task_fn run;
  void *context;
  size_t next, total, finished;
  int seats; /* threads that may still start running tasks (of thread_count) */
  bool stopping;
  uv_async_t async;
  bool async_open;
  lcpd_batch_done_fn done;
  void *done_user;
} lcpd_pool_t;

/* Starts workers threads on the loop (its async handle is closed with the
 * loop's other handles through lcpd_pool_close_handle). */
int lcpd_pool_open(lcpd_pool_t *pool, uv_loop_t *loop, int workers, lcpd_batch_done_fn done,
                   void *user, lcpd_error_t *error);
/* Runs tasks 0 .. count - 1 of run(context, i) on the workers; done is
 * called on the loop's thread once all are over. One batch at a time.
 * help: the calling thread takes a seat first, and must then call
 * lcpd_pool_help. */
void lcpd_pool_run(lcpd_pool_t *pool, lcpd_task_fn run, void *context, size_t count, bool help);
/* Runs the batch's next tasks on this thread while accept agrees, then
 * gives its seat to a worker. True when this thread ended the batch's last
 * task: done is not called then (the caller ends the batch). */
bool lcpd_pool_help(lcpd_pool_t *pool, lcpd_task_accept_fn accept);
void lcpd_pool_close_handle(lcpd_pool_t *pool);
/* Lets the workers finish the task each runs, then joins them. */
void lcpd_pool_stop(lcpd_pool_t *pool);

#endif
