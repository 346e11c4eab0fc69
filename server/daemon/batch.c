/* SPDX-License-Identifier: Apache-2.0 */
#include "batch.h"

#include "batch_world.h"
#include "log.h"
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lcpd_batch_job {
  lcpd_call_t call; /* its arenas report to call.error: the job never moves */
  lcpd_world_t *world;
  const Lcpsim__V1__WorldStep *step;
  size_t index; /* in the request */
  /* What its steps should take, from the world's last step (UINT64_MAX:
   * unknown), for the loop's choice of the jobs it runs itself. */
  uint64_t estimate_ns;
  Lcpsim__V1__BatchStepResult result;
  ProtobufCBinaryData packed; /* the result as an entry of BatchStepReply.results */
  /* States the world's stream was due during the job, sent after it. */
  lcpd_arena_t publish_arena;
  lcpd_error_t publish_error;
  zmq_msg_t *frames;
  size_t frame_count, frame_capacity;
  lcpd_publish_fn saved_publish;
  void *saved_publish_user;
};

static void publish_later(lcpd_sim_t *sim, void *user) {
  lcpd_batch_job_t *job = user;
  if (job->frame_count == job->frame_capacity) {
    size_t capacity = job->frame_capacity ? 2 * job->frame_capacity : 4;
    zmq_msg_t *grown = realloc(job->frames, capacity * sizeof *grown);
    if (!grown) {
      LCPD_ERROR("state stream of world '%s': out of memory; a state is not published",
                 sim->world_name ? sim->world_name : LCPD_DEFAULT_WORLD);
      return;
    }
    job->frames = grown;
    job->frame_capacity = capacity;
  }
  if (lcpd_stream_frame(sim, &job->publish_arena, &job->publish_error,
                        &job->frames[job->frame_count]))
    job->frame_count++;
}

/* The result as an entry of BatchStepReply.results (field 1), packed into
 * arena; false when the arena has no room (nothing reported: the result's
 * message may be the arena's call's error). */
static bool pack_result(const Lcpsim__V1__BatchStepResult *result, lcpd_arena_t *arena,
                        ProtobufCBinaryData *out) {
  size_t inner = lcpsim__v1__batch_step_result__get_packed_size(result);
  uint8_t header[16];
  size_t head = lcpd_encode_field_header(1, inner, header);
  lcpd_error_t *report = arena->error;
  arena->error = NULL;
  uint8_t *bytes = lcpd_arena_alloc(arena, head + inner);
  arena->error = report;
  if (!bytes)
    return false;
  memcpy(bytes, header, head);
  lcpsim__v1__batch_step_result__pack(result, bytes + head);
  *out = (ProtobufCBinaryData){head + inner, bytes};
  return true;
}

/* A world's part, and its result packed on the same thread. */
static void run_job(lcpd_batch_t *batch, lcpd_batch_job_t *job) {
  lcpd_call_world_step(&job->call, job->world->sim, job->step, batch->call->request->batch_step,
                       job->index, job->world->name, &batch->stop, &job->result);
  if (!pack_result(&job->result, &job->call.reply_arena, &job->packed))
    job->packed = (ProtobufCBinaryData){0, NULL}; /* packed by the loop, in finish */
}

static void run_task(void *context, size_t index) {
  lcpd_batch_t *batch = context;
  run_job(batch, batch->jobs[batch->pooled[index]]);
}

/* The loop's thread runs a job itself only when it expects to be done
 * within one slice of a Step from the batch's start: it answers other
 * requests no later than a Step running on it would. */
static bool loop_may_run(void *context, size_t index) {
  const lcpd_batch_t *batch = context;
  uint64_t estimate = batch->jobs[batch->pooled[index]]->estimate_ns;
  uint64_t spent = uv_hrtime() - batch->started_ns;
  return estimate <= batch->slice_ns && spent <= batch->slice_ns - estimate;
}

/* A job's steps at the pace of its world's last step. */
static uint64_t estimate_job(const lcpd_sim_t *sim, const Lcpsim__V1__WorldStep *step) {
  lcp_step_stats_t stats;
  lcp_world_get_stats(sim->live.world, &stats);
  if (!(stats.step_seconds > 0.0) || step->steps < 0)
    return UINT64_MAX;
  double ns = 1e9 * stats.step_seconds * (double)(step->steps > 0 ? step->steps : 1);
  return ns < 1e18 ? (uint64_t)ns : UINT64_MAX;
}

static void on_pool_done(void *user);

int lcpd_batch_open(lcpd_batch_t *batch, uv_loop_t *loop, int workers, size_t reply_limit,
                    int32_t max_steps, uint64_t slice_ns, lcpd_batch_over_fn over,
                    lcpd_send_frame_fn send_frame, void *user, lcpd_error_t *error) {
  *batch = (lcpd_batch_t){.workers = workers,
                          .reply_limit = reply_limit,
                          .max_steps = max_steps,
                          .slice_ns = slice_ns,
                          .over = over,
                          .send_frame = send_frame,
                          .user = user};
  return lcpd_pool_open(&batch->pool, loop, workers, on_pool_done, batch, error);
}

/* Frees what the last batch's jobs held for its reply (their arenas keep a
 * chunk for the next one). */
static void release_jobs(lcpd_batch_t *batch) {
  for (size_t i = 0; i < batch->job_count; ++i) {
    lcpd_batch_job_t *job = batch->jobs[i];
    lcpd_call_finish(&job->call);
    for (size_t k = 0; k < job->frame_count; ++k)
      zmq_msg_close(&job->frames[k]);
    job->frame_count = 0;
  }
  batch->job_count = 0;
}

/* Room for count jobs. */
static bool reserve_jobs(lcpd_batch_t *batch, size_t count) {
  if (count <= batch->job_capacity)
    return true;
  lcpd_batch_job_t **jobs = realloc(batch->jobs, count * sizeof *jobs);
  if (!jobs)
    return false;
  batch->jobs = jobs;
  size_t *pooled = realloc(batch->pooled, count * sizeof *pooled);
  if (!pooled)
    return false;
  batch->pooled = pooled;
  while (batch->job_capacity < count) {
    lcpd_batch_job_t *job = calloc(1, sizeof *job);
    if (!job)
      return false;
    lcpd_call_init(&job->call, 0, batch->reply_limit, batch->slice_ns, batch->max_steps);
    lcpd_arena_init(&job->publish_arena, batch->reply_limit, &job->publish_error);
    batch->jobs[batch->job_capacity++] = job;
  }
  return true;
}

/* Refuses the whole request (nothing was changed). */
static bool refuse(lcpd_call_t *call, int code, const char *message) {
  lcpd_call_reject(call, code, message);
  return true;
}

/* The reply, in the request's order, once every job is over; the worlds'
 * streams get their states. */
static void finish(lcpd_batch_t *batch) {
  lcpd_call_t *call = batch->call;
  for (size_t i = 0; i < batch->job_count; ++i) {
    lcpd_batch_job_t *job = batch->jobs[i];
    if (!job->world)
      continue;
    job->world->busy = false;
    job->world->sim->publish = job->saved_publish;
    job->world->sim->publish_user = job->saved_publish_user;
    for (size_t k = 0; k < job->frame_count; ++k)
      batch->send_frame(batch->user, &job->frames[k]);
    job->frame_count = 0;
  }
  /* The jobs packed their results: the reply is their concatenation (a
   * result the workers could not pack, and those of unknown worlds, are
   * packed here). */
  ProtobufCBinaryData *parts =
      lcpd_arena_array(&call->reply_arena, batch->job_count, sizeof *parts);
  bool packed = parts != NULL;
  for (size_t i = 0; packed && i < batch->job_count; ++i) {
    lcpd_batch_job_t *job = batch->jobs[i];
    parts[i] = job->packed;
    if (!parts[i].data)
      packed = pack_result(&job->result, &call->reply_arena, &parts[i]);
  }
  if (packed) {
    lcpd_call_reply_packed(call, LCPSIM__V1__REPLY__RESULT_BATCH_STEP, parts, batch->job_count);
  } else {
    lcpd_fail(&call->error, LCP_ERR_NO_MEMORY,
              "batch_step: the reply would be larger than the daemon's limit on a reply");
    lcpd_call_reply_error(call);
  }
  batch->running = false;
}

static void on_pool_done(void *user) {
  lcpd_batch_t *batch = user;
  if (!batch->running)
    return;
  finish(batch);
  batch->over(batch->user);
}

bool lcpd_batch_start(lcpd_batch_t *batch, lcpd_call_t *call, lcpd_worlds_t *worlds,
                      bool run_default_here) {
  const Lcpsim__V1__BatchStepRequest *req = call->request->batch_step;
  char message[256];
  release_jobs(batch);
  if (req->n_worlds > LCPD_MAX_BATCH_WORLDS) {
    snprintf(message, sizeof message,
             "batch_step.worlds has %zu worlds, more than the %d one BatchStep may step; send "
             "several",
             req->n_worlds, LCPD_MAX_BATCH_WORLDS);
    return refuse(call, LCP_ERR_NO_MEMORY, message);
  }
  if (!reserve_jobs(batch, req->n_worlds))
    return refuse(call, LCP_ERR_NO_MEMORY, "batch_step: out of memory for the worlds' jobs");
  /* Checked whole before any world changes: each world named once. */
  batch->mark++;
  for (size_t i = 0; i < req->n_worlds; ++i) {
    lcpd_world_t *world = lcpd_worlds_find(worlds, req->worlds[i]->world);
    batch->jobs[i]->world = world;
    if (!world)
      continue;
    if (world->batch_mark == batch->mark) {
      snprintf(message, sizeof message,
               "batch_step.worlds[%zu]: world '%s' is named twice in one BatchStep (a world "
               "may appear at most once)",
               i, world->name);
      batch->mark++; /* the marks of this request are forgotten */
      return refuse(call, LCP_ERR_INVALID_ARGUMENT, message);
    }
    world->batch_mark = batch->mark;
  }
  /* Each job's state and snapshot share the reply's limit. */
  size_t share = req->n_worlds ? batch->reply_limit / req->n_worlds : batch->reply_limit;
  batch->call = call;
  batch->job_count = req->n_worlds;
  batch->pooled_count = 0;
  lcpd_batch_job_t *here = NULL;
  for (size_t i = 0; i < req->n_worlds; ++i) {
    lcpd_batch_job_t *job = batch->jobs[i];
    const Lcpsim__V1__WorldStep *ws = req->worlds[i];
    job->step = ws;
    job->index = i;
    job->call.reply_arena.limit = share;
    lcpsim__v1__batch_step_result__init(&job->result);
    job->packed = (ProtobufCBinaryData){0, NULL};
    job->result.world = ws->world[0] ? ws->world : (char *)LCPD_DEFAULT_WORLD;
    if (!job->world) {
      lcpd_fail(&job->call.error, LCP_ERR_NOT_FOUND,
                "batch_step.worlds[%zu].world: no world "
                "named '%s' (ListWorlds lists them)",
                i, LCPD_QUOTE(ws->world));
      lcpd_call_reply_error(&job->call);
      job->result.status = &job->call.status;
      continue;
    }
    lcpd_sim_t *sim = job->world->sim;
    job->saved_publish = sim->publish;
    job->saved_publish_user = sim->publish_user;
    sim->publish = publish_later;
    sim->publish_user = job;
    job->world->busy = true;
    job->estimate_ns = estimate_job(sim, ws);
    if (run_default_here && job->world == lcpd_worlds_default(worlds))
      here = job;
    else
      batch->pooled[batch->pooled_count++] = i;
  }
  batch->running = true;
  batch->started_ns = uv_hrtime();
  if (batch->pooled_count)
    lcpd_pool_run(&batch->pool, run_task, batch, batch->pooled_count, true);
  if (here)
    run_job(batch, here);
  if (batch->pooled_count && !lcpd_pool_help(&batch->pool, loop_may_run))
    return false;
  finish(batch);
  return true;
}

void lcpd_batch_close_handles(lcpd_batch_t *batch) {
  lcpd_batch_stop(batch);
  lcpd_pool_close_handle(&batch->pool);
}

void lcpd_batch_stop(lcpd_batch_t *batch) {
  atomic_store(&batch->stop, true);
  lcpd_pool_stop(&batch->pool);
}

void lcpd_batch_destroy(lcpd_batch_t *batch) {
  lcpd_batch_stop(batch);
  if (batch->running) {
    /* Stopped at shutdown: the worlds get their hooks back. */
    for (size_t i = 0; i < batch->job_count; ++i) {
      lcpd_batch_job_t *job = batch->jobs[i];
      if (job->world) {
        job->world->busy = false;
        job->world->sim->publish = job->saved_publish;
        job->world->sim->publish_user = job->saved_publish_user;
      }
    }
    batch->running = false;
  }
  release_jobs(batch);
  for (size_t i = 0; i < batch->job_capacity; ++i) {
    lcpd_call_destroy(&batch->jobs[i]->call);
    lcpd_arena_destroy(&batch->jobs[i]->publish_arena);
    free(batch->jobs[i]->frames);
    free(batch->jobs[i]);
  }
  free(batch->jobs);
  free(batch->pooled);
  batch->jobs = NULL;
  batch->pooled = NULL;
  batch->job_capacity = 0;
}
