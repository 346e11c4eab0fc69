/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "pool.h"

#include <stdio.h>
#include <string.h>

/* Takes and runs the batch's tasks while there are some and keep(context,
 * next) agrees (NULL: always); called and returns with the lock held. True
 * when this thread ended the batch's last task. */
static bool run_tasks(lcpd_pool_t *pool, lcpd_task_accept_fn keep) {
  bool last = false;
  while (pool->next < pool->total && (!keep || keep(pool->context, pool->next))) {
    size_t index = pool->next++;
    lcpd_task_fn run = pool->run;
    void *context = pool->context;
    pthread_mutex_unlock(&pool->lock);
    run(context, index);
    pthread_mutex_lock(&pool->lock);
    last = ++pool->finished == pool->total;
  }
  return last;
}

static void *worker(void *argument) {
  lcpd_pool_t *pool = argument;
  /* Named so that top -H and perf tell the workers from the event loop. */
  pthread_setname_np(pthread_self(), "lcpsimd-worker");
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stopping && (pool->next >= pool->total || pool->seats == 0))
      pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->stopping)
      break;
    pool->seats--;
    /* The last task's thread tells the loop (the async send is after every
     * task's writes: the loop reads them after taking this lock). */
    if (run_tasks(pool, NULL))
      uv_async_send(&pool->async);
    pool->seats++;
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

static void on_async(uv_async_t *handle) {
  lcpd_pool_t *pool = handle->data;
  pthread_mutex_lock(&pool->lock);
  bool over = pool->total > 0 && pool->finished == pool->total;
  if (over)
    pool->total = pool->next = pool->finished = 0;
  pthread_mutex_unlock(&pool->lock);
  if (over && pool->done)
    pool->done(pool->done_user);
}

int lcpd_pool_open(lcpd_pool_t *pool, uv_loop_t *loop, int workers, lcpd_batch_done_fn done,
                   void *user, lcpd_error_t *error) {
  memset(pool, 0, sizeof *pool);
  pool->done = done;
  pool->done_user = user;
  if (workers < 1 || workers > LCPD_MAX_WORKERS)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "--workers must be 1 to %d (got %d)",
                     LCPD_MAX_WORKERS, workers);
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pool->locks_made = true;
  int rc = uv_async_init(loop, &pool->async, on_async);
  if (rc != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot create the workers' wake-up: %s",
                     uv_strerror(rc));
  pool->async.data = pool;
  pool->async_open = true;
  pool->seats = workers;
  for (int i = 0; i < workers; ++i) {
    int started = pthread_create(&pool->threads[i], NULL, worker, pool);
    if (started != 0) {
      lcpd_pool_stop(pool);
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot start worker thread %d of %d: %s", i + 1,
                       workers, strerror(started));
    }
    pool->thread_count++;
  }
  return LCP_OK;
}

void lcpd_pool_run(lcpd_pool_t *pool, lcpd_task_fn run, void *context, size_t count, bool help) {
  pthread_mutex_lock(&pool->lock);
  pool->run = run;
  pool->context = context;
  pool->next = pool->finished = 0;
  pool->total = count;
  if (help)
    pool->seats--;
  /* As many workers as there are seats and tasks beyond the helper's
   * first: the others sleep on (a helper that takes none gives its seat
   * back with a wake-up of its own). */
  size_t wanted = help ? count - 1 : count;
  for (int i = 0; i < pool->seats && (size_t)i < wanted; ++i)
    pthread_cond_signal(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
}

bool lcpd_pool_help(lcpd_pool_t *pool, lcpd_task_accept_fn accept) {
  pthread_mutex_lock(&pool->lock);
  bool last = run_tasks(pool, accept);
  if (last)
    pool->total = pool->next = pool->finished = 0;
  pool->seats++;
  if (pool->next < pool->total)
    pthread_cond_signal(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  return last;
}

void lcpd_pool_close_handle(lcpd_pool_t *pool) {
  if (pool->async_open && !uv_is_closing((uv_handle_t *)&pool->async))
    uv_close((uv_handle_t *)&pool->async, NULL);
  pool->async_open = false;
}

void lcpd_pool_stop(lcpd_pool_t *pool) {
  if (!pool->locks_made)
    return;
  pthread_mutex_lock(&pool->lock);
  pool->stopping = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->thread_count; ++i)
    pthread_join(pool->threads[i], NULL);
  pool->thread_count = 0;
  pthread_mutex_destroy(&pool->lock);
  pthread_cond_destroy(&pool->wake);
  pool->locks_made = false;
}
