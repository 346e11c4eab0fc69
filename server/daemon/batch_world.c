/* SPDX-License-Identifier: Apache-2.0 */
#include "batch_world.h"

#include "handlers_state.h"

/* The states a world's part sets before its Step (SetRobotState and
 * SetBodyState, in the request's order). */
static int set_world_states(lcpd_call_t *job, lcpd_sim_t *sim, const Lcpsim__V1__WorldStep *ws) {
  void *result;
  for (size_t i = 0; i < ws->n_robot_states; ++i) {
    int rc =
        lcpd_set_robot_state(sim, &job->reply_arena, ws->robot_states[i], &result, &job->error);
    if (rc != LCP_OK)
      return rc == LCP_ERR_NO_MEMORY ? lcpd_call_out_of_memory(job) : rc;
  }
  for (size_t i = 0; i < ws->n_body_states; ++i) {
    int rc = lcpd_set_body_state(sim, &job->reply_arena, ws->body_states[i], &result, &job->error);
    if (rc != LCP_OK)
      return rc == LCP_ERR_NO_MEMORY ? lcpd_call_out_of_memory(job) : rc;
  }
  return LCP_OK;
}

static int run_world_step(lcpd_call_t *job, lcpd_sim_t *sim, const Lcpsim__V1__WorldStep *ws,
                          const Lcpsim__V1__BatchStepRequest *req, const atomic_bool *stop,
                          Lcpsim__V1__BatchStepResult *out) {
  lcpd_error_t *error = &job->error;
  /* The Step undoes its own failure; what comes before it (restore,
   * states) and after it (the snapshot) needs this copy. */
  bool keep = ws->restore || ws->n_robot_states || ws->n_body_states || req->return_snapshot;
  uint32_t steps_since_publish = sim->steps_since_publish;
  job->batch_undo_size = 0;
  if (keep && lcpd_sim_undo_save(sim, &job->batch_undo, &job->batch_undo_capacity,
                                 &job->batch_undo_size, error) != LCP_OK)
    return lcpd_error_prefix(error, "cannot keep the world to undo a failure: ");
  int rc = ws->restore ? lcpd_call_restore_state(job, sim, ws->restore) : LCP_OK;
  if (rc == LCP_OK)
    rc = set_world_states(job, sim, ws);
  if (rc == LCP_OK)
    rc = lcpd_call_step(job, sim, job->request->step);
  while (rc == LCP_OK && job->stepping) {
    if (atomic_load_explicit(stop, memory_order_relaxed)) {
      lcpd_call_cancel_step(job, sim);
      rc = job->status.code == LCPSIM__V1__STATUS__CODE__OK ? LCP_OK : error->code;
      break;
    }
    rc = lcpd_call_step_slice(job, sim);
  }
  if (rc == LCP_OK && req->return_snapshot) {
    size_t size = lcpd_sim_snapshot_size(sim);
    unsigned char *data = lcpd_arena_alloc(&job->reply_arena, size);
    if (!data)
      rc = lcpd_call_out_of_memory(job);
    else if ((rc = lcpd_sim_snapshot_write(sim, data, size, error)) == LCP_OK) {
      out->snapshot.data = data;
      out->snapshot.len = size;
    }
  }
  if (rc != LCP_OK && job->batch_undo_size && !job->world_restored) {
    lcpd_error_t undo_error;
    if (lcpd_sim_undo_restore(sim, job->batch_undo, job->batch_undo_size, &undo_error) == LCP_OK)
      sim->steps_since_publish = steps_since_publish;
    else
      lcpd_call_world_lost(job, sim, undo_error.message);
  }
  return rc;
}

void lcpd_call_world_step(lcpd_call_t *job, lcpd_sim_t *sim, const Lcpsim__V1__WorldStep *ws,
                          const Lcpsim__V1__BatchStepRequest *req, size_t index, const char *name,
                          const atomic_bool *stop, Lcpsim__V1__BatchStepResult *out) {
  job->error = (lcpd_error_t){0};
  job->world_restored = false;
  lcpsim__v1__status__init(&job->status);
  out->status = &job->status;
  /* The Step this part is, as a request of its own: its handler, its
   * checks and its messages are the Step's. */
  Lcpsim__V1__Request *request = LCPD_NEW(&job->reply_arena, Lcpsim__V1__Request);
  Lcpsim__V1__StepRequest *step = LCPD_NEW(&job->reply_arena, Lcpsim__V1__StepRequest);
  int rc;
  if (!request || !step) {
    rc = lcpd_call_out_of_memory(job);
  } else {
    lcpsim__v1__request__init(request);
    lcpsim__v1__step_request__init(step);
    step->steps = ws->steps;
    step->n_targets = ws->n_targets;
    step->targets = ws->targets;
    step->return_state = req->return_state;
    step->include_contacts = req->include_contacts;
    step->sensors = req->sensors;
    request->call_case = LCPSIM__V1__REQUEST__CALL_STEP;
    request->step = step;
    job->request = request;
    rc = run_world_step(job, sim, ws, req, stop, out);
  }
  out->time = lcp_world_time(sim->live.world);
  out->step_count = lcp_world_step_count(sim->live.world);
  if (rc == LCP_OK) {
    sim->change_count++; /* as dispatch counts a request that succeeded */
    out->steps_run = job->steps_done;
    out->state = job->reply.step ? job->reply.step->state : NULL;
    job->status.code = LCPSIM__V1__STATUS__CODE__OK;
    job->status.message = (char *)"";
  } else {
    out->snapshot.data = NULL;
    out->snapshot.len = 0;
    lcpd_error_prefix(&job->error, "batch_step.worlds[%zu] (world '%s'): ", index, name);
    lcpd_call_reply_error(job);
  }
  job->stepping = false;
}
