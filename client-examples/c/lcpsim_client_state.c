/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: Step and GetState (into a new state or into a state buffer), SetTarget, and
 * the Step that can be cancelled. */
#include "lcpsim_client_internal.h"

#include <stdlib.h>

/* Takes a Step's reply: with want_state, `*state` points into `*reply` (decoded with
 * `allocator`), which the caller frees once done with both. */
static int take_step_reply(lcpsim_client_t *client, bool want_state, ProtobufCAllocator *allocator,
                           reply_t **reply, lcpsim_state_t **state) {
  if (want_state) {
    if (!(*reply)->step || !(*reply)->step->state) {
      lcpsim__v1__reply__free_unpacked(*reply, allocator);
      *reply = NULL;
      return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no state");
    }
    *state = (*reply)->step->state;
  }
  return LCPSIM_OK;
}

/* A Step; with want_state, `*state` points into `*reply` (decoded with `allocator`), which the
 * caller frees once done with both. With `started` not NULL the Step is only sent: `*started`
 * gets its id and no reply is awaited. */
static int step_call(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                     size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                     bool want_state, ProtobufCAllocator *allocator, reply_t **reply,
                     lcpsim_state_t **state, uint64_t *started) {
  *reply = NULL;
  *state = NULL;
  for (size_t i = 0; i < n_targets; ++i)
    if (!lcpc_target_is_valid(&targets[i]))
      return lcpc_fail(client, LCPSIM_ERR_USAGE, "step: target %zu has an array of NULL", i);
  Lcpsim__V1__SetTargetRequest *messages = calloc(n_targets ? n_targets : 1, sizeof *messages);
  Lcpsim__V1__SetTargetRequest **pointers = calloc(n_targets ? n_targets : 1, sizeof *pointers);
  if (!messages || !pointers) {
    free(messages);
    free(pointers);
    return lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "step: out of memory");
  }
  for (size_t i = 0; i < n_targets; ++i) {
    messages[i] = lcpc_target_message(&targets[i]);
    pointers[i] = &messages[i];
  }
  Lcpsim__V1__Sensors sensors_wanted = lcpc_sensors_message(sensors);
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = steps;
  step.n_targets = n_targets;
  step.targets = pointers;
  step.return_state = want_state;
  step.include_contacts = want_state && contacts == LCPSIM_WITH_CONTACTS;
  /* Unset when none is wanted, so a plain control tick sends what it sent before. */
  step.sensors = want_state && sensors ? &sensors_wanted : NULL;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  request.step = &step;
  int code = started ? lcpc_send_request(client, &request, lcpc_call_deadline(client))
                     : lcpc_call_with(client, &request, allocator, reply);
  free(messages);
  free(pointers);
  if (code != LCPSIM_OK || started) {
    if (started && code == LCPSIM_OK)
      *started = request.id;
    return code;
  }
  return take_step_reply(client, want_state, allocator, reply, state);
}

int lcpsim_client_step(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                       size_t n_targets, lcpsim_contacts_t contacts, lcpsim_state_t **state) {
  return lcpsim_client_step_sensors(client, steps, targets, n_targets, contacts, 0, state);
}

int lcpsim_client_step_sensors(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                               size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                               lcpsim_state_t **state) {
  if (!client || (n_targets > 0 && !targets))
    return LCPSIM_ERR_USAGE;
  if (state)
    *state = NULL;
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = step_call(client, steps, targets, n_targets, contacts, sensors, state != NULL, NULL,
                       &reply, &decoded, NULL);
  if (code != LCPSIM_OK)
    return code;
  if (state) {
    /* Every sub-message of an unpacked message is its own allocation: hand this one over. */
    *state = decoded;
    reply->step->state = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_set_target(lcpsim_client_t *client, const lcpsim_target_t *target) {
  if (!client || !target)
    return LCPSIM_ERR_USAGE;
  if (!lcpc_target_is_valid(target))
    return lcpc_fail(client, LCPSIM_ERR_USAGE, "set_target: an array is NULL");
  Lcpsim__V1__SetTargetRequest set_target = lcpc_target_message(target);
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_TARGET;
  request.set_target = &set_target;
  return lcpc_call_for_status(client, &request);
}

static int get_state_call(lcpsim_client_t *client, lcpsim_contacts_t contacts, unsigned sensors,
                          ProtobufCAllocator *allocator, reply_t **reply, lcpsim_state_t **state) {
  *reply = NULL;
  *state = NULL;
  Lcpsim__V1__Sensors sensors_wanted = lcpc_sensors_message(sensors);
  Lcpsim__V1__GetStateRequest get_state = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  get_state.include_contacts = contacts == LCPSIM_WITH_CONTACTS;
  get_state.sensors = sensors ? &sensors_wanted : NULL;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_GET_STATE;
  request.get_state = &get_state;
  int code = lcpc_call_with(client, &request, allocator, reply);
  if (code != LCPSIM_OK)
    return code;
  if (!(*reply)->get_state || !(*reply)->get_state->state) {
    lcpsim__v1__reply__free_unpacked(*reply, allocator);
    *reply = NULL;
    return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no state");
  }
  *state = (*reply)->get_state->state;
  return LCPSIM_OK;
}

int lcpsim_client_get_state(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                            lcpsim_state_t **state) {
  return lcpsim_client_get_state_sensors(client, contacts, 0, state);
}

int lcpsim_client_get_state_sensors(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                                    unsigned sensors, lcpsim_state_t **state) {
  if (!client || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = get_state_call(client, contacts, sensors, NULL, &reply, &decoded);
  if (code != LCPSIM_OK)
    return code;
  *state = decoded;
  reply->get_state->state = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_step_into(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                            size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                            lcpsim_state_buffer_t *buffer, const lcpsim_state_t **state) {
  if (!client || (n_targets > 0 && !targets) || !buffer || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  ProtobufCAllocator *allocator = lcpc_state_buffer_reset(buffer);
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = step_call(client, steps, targets, n_targets, contacts, sensors, true, allocator,
                       &reply, &decoded, NULL);
  *state = decoded;
  return code;
}

int lcpsim_client_get_state_into(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                                 unsigned sensors, lcpsim_state_buffer_t *buffer,
                                 const lcpsim_state_t **state) {
  if (!client || !buffer || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  ProtobufCAllocator *allocator = lcpc_state_buffer_reset(buffer);
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = get_state_call(client, contacts, sensors, allocator, &reply, &decoded);
  *state = decoded;
  return code;
}

/* ---- a Step that can be cancelled ---- */

int lcpsim_client_step_start(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                             size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                             bool return_state, uint64_t *step_id) {
  if (!client || (n_targets > 0 && !targets))
    return LCPSIM_ERR_USAGE;
  if (client->pending_step_id != 0)
    return lcpc_fail(client, LCPSIM_ERR_USAGE, "step_start: a started Step has not been finished");
  reply_t *reply = NULL;
  lcpsim_state_t *state = NULL;
  uint64_t id = 0;
  int code = step_call(client, steps, targets, n_targets, contacts, sensors, return_state, NULL,
                       &reply, &state, &id);
  if (code != LCPSIM_OK)
    return code;
  client->pending_step_id = id;
  client->pending_step_state = return_state;
  if (step_id)
    *step_id = id;
  return LCPSIM_OK;
}

int lcpsim_client_step_finish(lcpsim_client_t *client, lcpsim_step_result_t *result,
                              lcpsim_state_t **state) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  if (state)
    *state = NULL;
  if (client->pending_step_id == 0)
    return lcpc_fail(client, LCPSIM_ERR_USAGE, "step_finish: no Step was started");
  reply_t *reply = NULL;
  int code;
  if (client->stashed_step_reply) {
    reply_t *received = lcpsim__v1__reply__unpack(NULL, client->stashed_step_reply_size,
                                                  client->stashed_step_reply);
    free(client->stashed_step_reply);
    client->stashed_step_reply = NULL;
    code = received ? lcpc_accept_reply(client, received, LCPSIM__V1__REQUEST__CALL_STEP, "step",
                                        NULL, &reply)
                    : lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "step: undecodable reply");
  } else {
    code = lcpc_receive_reply(client, client->pending_step_id, LCPSIM__V1__REQUEST__CALL_STEP, NULL,
                              lcpc_call_deadline(client), &reply);
    /* A timeout leaves the Step pending: a later step_finish waits for it again. */
    if (code == LCPSIM_ERR_TIMEOUT)
      return code;
  }
  bool want_state = client->pending_step_state;
  client->pending_step_id = 0;
  if (code != LCPSIM_OK)
    return code;
  lcpsim_state_t *decoded = NULL;
  code = take_step_reply(client, want_state, NULL, &reply, &decoded);
  if (code != LCPSIM_OK)
    return code;
  if (result)
    *result = (lcpsim_step_result_t){.time = reply->step->time,
                                     .step_count = reply->step->step_count,
                                     .steps_run = reply->step->steps_run,
                                     .cancelled = reply->step->cancelled};
  if (state && decoded) {
    *state = decoded;
    reply->step->state = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_cancel_step(lcpsim_client_t *client, uint64_t step_id,
                              lcpsim_cancel_result_t *result) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__CancelStepRequest cancel = LCPSIM__V1__CANCEL_STEP_REQUEST__INIT;
  cancel.step_id = step_id;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_CANCEL_STEP;
  request.cancel_step = &cancel;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->cancel_step)
    return lcpc_missing(client, reply, "cancel_step");
  if (result)
    *result = (lcpsim_cancel_result_t){.cancelled = reply->cancel_step->cancelled,
                                       .step_id = reply->cancel_step->step_id,
                                       .steps_run = reply->cancel_step->steps_run,
                                       .steps_requested = reply->cancel_step->steps_requested};
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}
