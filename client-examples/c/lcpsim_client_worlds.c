/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: the worlds of a daemon (which one the client addresses, CreateWorld,
 * DestroyWorld, ListWorlds) and BatchStep, whole or in two halves. */
#include "lcpsim_client_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- worlds ---- */

int lcpsim_client_set_world(lcpsim_client_t *client, const char *world) {
  if (!client || (world && strlen(world) >= sizeof client->world))
    return LCPSIM_ERR_USAGE;
  snprintf(client->world, sizeof client->world, "%s", lcpc_is_default_world(world) ? "" : world);
  return LCPSIM_OK;
}

const char *lcpsim_client_world(const lcpsim_client_t *client) {
  return client ? client->world : "";
}

void lcpsim_world_info_destroy(lcpsim_world_info_t **info) { lcpc_message_destroy(info); }
void lcpsim_world_list_destroy(lcpsim_world_list_t **list) { lcpc_message_destroy(list); }
void lcpsim_batch_reply_destroy(lcpsim_batch_reply_t **reply) { lcpc_message_destroy(reply); }

int lcpsim_client_create_world(lcpsim_client_t *client, const lcpsim_world_source_t *source,
                               lcpsim_world_info_t **info) {
  if (info)
    *info = NULL;
  if (!client || !source || (source->snapshot_size && !source->snapshot) ||
      (source->scene_path != NULL) + (source->scene_text != NULL) + (source->copy_of != NULL) > 1)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__CreateWorldRequest create = LCPSIM__V1__CREATE_WORLD_REQUEST__INIT;
  create.name = (char *)(source->name ? source->name : "");
  if (source->scene_path) {
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_PATH;
    create.scene_path = (char *)source->scene_path;
  } else if (source->scene_text) {
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_TEXT;
    create.scene_text = (char *)source->scene_text;
  } else if (source->copy_of) {
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_COPY_OF;
    create.copy_of = (char *)source->copy_of;
  }
  create.copy_state = source->copy_state;
  create.snapshot.data = (uint8_t *)source->snapshot;
  create.snapshot.len = source->snapshot_size;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_CREATE_WORLD;
  request.create_world = &create;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->create_world || !reply->create_world->world)
    return lcpc_missing(client, reply, "world");
  if (info) {
    *info = reply->create_world->world;
    reply->create_world->world = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_destroy_world(lcpsim_client_t *client, const char *name) {
  if (!client || !name)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__DestroyWorldRequest destroy = LCPSIM__V1__DESTROY_WORLD_REQUEST__INIT;
  destroy.name = (char *)name;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_DESTROY_WORLD;
  request.destroy_world = &destroy;
  return lcpc_call_for_status(client, &request);
}

int lcpsim_client_list_worlds(lcpsim_client_t *client, lcpsim_world_list_t **list) {
  if (!client || !list)
    return LCPSIM_ERR_USAGE;
  *list = NULL;
  Lcpsim__V1__ListWorldsRequest list_worlds = LCPSIM__V1__LIST_WORLDS_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_LIST_WORLDS;
  request.list_worlds = &list_worlds;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->list_worlds)
    return lcpc_missing(client, reply, "worlds");
  *list = reply->list_worlds;
  reply->list_worlds = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

/* ---- BatchStep ---- */

int lcpsim_batch_result_code(const lcpsim_batch_result_t *result) {
  if (!result)
    return LCPSIM_ERR_USAGE;
  if (!result->status || result->status->code == LCPSIM__V1__STATUS__CODE__OK)
    return LCPSIM_OK;
  int code = -(int)result->status->code;
  return code < 0 ? code : LCPSIM_ERR_PROTOCOL;
}

static bool world_step_is_valid(const lcpsim_world_step_t *step) {
  if ((step->n_targets && !step->targets) || (step->n_robot_states && !step->robot_states) ||
      (step->n_body_states && !step->body_states) ||
      (step->restore_snapshot_size && !step->restore_snapshot) ||
      (step->restore_slot && step->restore_snapshot_size))
    return false;
  for (size_t i = 0; i < step->n_targets; ++i)
    if (!lcpc_target_is_valid(&step->targets[i]))
      return false;
  for (size_t i = 0; i < step->n_robot_states; ++i)
    if (!lcpc_robot_state_change_is_valid(&step->robot_states[i]))
      return false;
  return true;
}

/* One WorldStep message, its parts allocated from `scratch`. */
static Lcpsim__V1__WorldStep *world_step_message(lcpc_scratch_t *scratch,
                                                 const lcpsim_world_step_t *step) {
  Lcpsim__V1__WorldStep *message = lcpc_scratch_alloc(scratch, 1, sizeof *message);
  Lcpsim__V1__SetTargetRequest *targets =
      lcpc_scratch_alloc(scratch, step->n_targets, sizeof *targets);
  Lcpsim__V1__SetTargetRequest **target_pointers =
      lcpc_scratch_alloc(scratch, step->n_targets, sizeof *target_pointers);
  Lcpsim__V1__SetRobotStateRequest *robots =
      lcpc_scratch_alloc(scratch, step->n_robot_states, sizeof *robots);
  Lcpsim__V1__SetRobotStateRequest **robot_pointers =
      lcpc_scratch_alloc(scratch, step->n_robot_states, sizeof *robot_pointers);
  Lcpsim__V1__SetBodyStateRequest *bodies =
      lcpc_scratch_alloc(scratch, step->n_body_states, sizeof *bodies);
  Lcpsim__V1__SetBodyStateRequest **body_pointers =
      lcpc_scratch_alloc(scratch, step->n_body_states, sizeof *body_pointers);
  if (scratch->failed)
    return NULL;
  lcpsim__v1__world_step__init(message);
  message->world = (char *)(step->world ? step->world : "");
  message->steps = step->steps;
  for (size_t i = 0; i < step->n_targets; ++i) {
    targets[i] = lcpc_target_message(&step->targets[i]);
    target_pointers[i] = &targets[i];
  }
  message->n_targets = step->n_targets;
  message->targets = target_pointers;
  for (size_t i = 0; i < step->n_robot_states; ++i) {
    lcpc_robot_state_message(scratch, &step->robot_states[i], &robots[i]);
    robot_pointers[i] = &robots[i];
  }
  message->n_robot_states = step->n_robot_states;
  message->robot_states = robot_pointers;
  for (size_t i = 0; i < step->n_body_states; ++i) {
    lcpc_body_state_message(scratch, &step->body_states[i], &bodies[i]);
    body_pointers[i] = &bodies[i];
  }
  message->n_body_states = step->n_body_states;
  message->body_states = body_pointers;
  if (step->restore_slot || step->restore_snapshot_size) {
    Lcpsim__V1__RestoreStateRequest *restore = lcpc_scratch_alloc(scratch, 1, sizeof *restore);
    if (!restore)
      return NULL;
    lcpsim__v1__restore_state_request__init(restore);
    if (step->restore_slot) {
      restore->source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
      restore->slot = (char *)step->restore_slot;
    } else {
      restore->source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
      restore->snapshot.data = (uint8_t *)step->restore_snapshot;
      restore->snapshot.len = step->restore_snapshot_size;
    }
    message->restore = restore;
  }
  return message;
}

/* Builds the BatchStep request and sends it: started, without waiting for the connection or the
 * reply (`*started` gets its id, `*reply` untouched); else waits for the reply, decoded into
 * `buffer` (NULL: malloc'd), in `*reply`. The buffer is reset only once the request is sent, so
 * the world steps may point into the reply it holds (a snapshot it returned, say). */
static int batch_step_call(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                           size_t n_worlds, unsigned flags, unsigned sensors, uint64_t *started,
                           lcpsim_state_buffer_t *buffer, reply_t **reply) {
  if (!client || (n_worlds && !worlds))
    return LCPSIM_ERR_USAGE;
  for (size_t i = 0; i < n_worlds; ++i)
    if (!world_step_is_valid(&worlds[i]))
      return lcpc_fail(client, LCPSIM_ERR_USAGE, "batch_step: world step %zu has an array of NULL",
                       i);
  lcpc_scratch_t scratch = {0};
  Lcpsim__V1__WorldStep **messages = lcpc_scratch_alloc(&scratch, n_worlds, sizeof *messages);
  for (size_t i = 0; i < n_worlds && !scratch.failed; ++i)
    messages[i] = world_step_message(&scratch, &worlds[i]);
  if (scratch.failed) {
    lcpc_scratch_free(&scratch);
    return lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "batch_step: out of memory");
  }
  bool want_state = (flags & LCPSIM_BATCH_RETURN_STATE) != 0;
  Lcpsim__V1__Sensors sensors_wanted = lcpc_sensors_message(sensors);
  Lcpsim__V1__BatchStepRequest batch = LCPSIM__V1__BATCH_STEP_REQUEST__INIT;
  batch.n_worlds = n_worlds;
  batch.worlds = messages;
  batch.return_state = want_state;
  batch.include_contacts = want_state && (flags & LCPSIM_BATCH_WITH_CONTACTS);
  batch.sensors = want_state && sensors ? &sensors_wanted : NULL;
  batch.return_snapshot = (flags & LCPSIM_BATCH_RETURN_SNAPSHOT) != 0;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_BATCH_STEP;
  request.batch_step = &batch;
  /* No waiting for a connection when started: a daemon not connected now is taken as gone. */
  int64_t deadline = started ? lcpc_monotonic_ms() : lcpc_call_deadline(client);
  int code = lcpc_send_request(client, &request, deadline);
  lcpc_scratch_free(&scratch);
  if (code != LCPSIM_OK)
    return code;
  if (started) {
    *started = request.id;
    return LCPSIM_OK;
  }
  ProtobufCAllocator *allocator = buffer ? lcpc_state_buffer_reset(buffer) : NULL;
  return lcpc_receive_reply(client, request.id, LCPSIM__V1__REQUEST__CALL_BATCH_STEP, allocator,
                            deadline, reply);
}

/* Hands the BatchStepReply of `reply`, decoded with `allocator` (NULL: malloc), over to `*batch`:
 * malloc'd, it is detached and the rest freed; in a buffer, it stays there. */
static int take_batch_reply(lcpsim_client_t *client, reply_t *reply, ProtobufCAllocator *allocator,
                            lcpsim_batch_reply_t **batch) {
  if (!reply->batch_step) {
    lcpsim__v1__reply__free_unpacked(reply, allocator);
    return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no batch_step results");
  }
  *batch = reply->batch_step;
  if (!allocator) {
    reply->batch_step = NULL;
    lcpsim__v1__reply__free_unpacked(reply, NULL);
  }
  return LCPSIM_OK;
}

/* lcpsim_client_batch_step and its _into: `*reply` in `buffer` (NULL: malloc'd). */
static int batch_step(lcpsim_client_t *client, const lcpsim_world_step_t *worlds, size_t n_worlds,
                      unsigned flags, unsigned sensors, lcpsim_state_buffer_t *buffer,
                      lcpsim_batch_reply_t **reply) {
  reply_t *received = NULL;
  int code = batch_step_call(client, worlds, n_worlds, flags, sensors, NULL, buffer, &received);
  if (code != LCPSIM_OK)
    return code;
  /* The buffer was reset after sending: its allocator is the one the reply was decoded with. */
  ProtobufCAllocator *allocator = buffer ? lcpc_state_buffer_allocator(buffer) : NULL;
  return take_batch_reply(client, received, allocator, reply);
}

int lcpsim_client_batch_step(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                             size_t n_worlds, unsigned flags, unsigned sensors,
                             lcpsim_batch_reply_t **reply) {
  if (!reply)
    return LCPSIM_ERR_USAGE;
  *reply = NULL;
  return batch_step(client, worlds, n_worlds, flags, sensors, NULL, reply);
}

int lcpsim_client_batch_step_into(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                                  size_t n_worlds, unsigned flags, unsigned sensors,
                                  lcpsim_state_buffer_t *buffer,
                                  const lcpsim_batch_reply_t **reply) {
  if (!buffer || !reply)
    return LCPSIM_ERR_USAGE;
  *reply = NULL;
  lcpsim_batch_reply_t *decoded = NULL;
  int code = batch_step(client, worlds, n_worlds, flags, sensors, buffer, &decoded);
  *reply = decoded;
  return code;
}

int lcpsim_client_batch_step_start(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                                   size_t n_worlds, unsigned flags, unsigned sensors,
                                   uint64_t *request_id) {
  uint64_t id = 0;
  int code = batch_step_call(client, worlds, n_worlds, flags, sensors, &id, NULL, NULL);
  if (request_id)
    *request_id = id;
  return code;
}

/* lcpsim_client_batch_step_finish and its _into: `*reply` in `buffer` (NULL: malloc'd). */
static int batch_step_finish(lcpsim_client_t *client, uint64_t request_id, int timeout_ms,
                             lcpsim_state_buffer_t *buffer, lcpsim_batch_reply_t **reply) {
  int64_t deadline = timeout_ms < 0 ? -1 : lcpc_monotonic_ms() + timeout_ms;
  ProtobufCAllocator *allocator = buffer ? lcpc_state_buffer_reset(buffer) : NULL;
  reply_t *received = NULL;
  int code = lcpc_receive_reply(client, request_id, LCPSIM__V1__REQUEST__CALL_BATCH_STEP, allocator,
                                deadline, &received);
  return code == LCPSIM_OK ? take_batch_reply(client, received, allocator, reply) : code;
}

int lcpsim_client_batch_step_finish(lcpsim_client_t *client, uint64_t request_id, int timeout_ms,
                                    lcpsim_batch_reply_t **reply) {
  if (!client || !reply || request_id == 0)
    return LCPSIM_ERR_USAGE;
  *reply = NULL;
  return batch_step_finish(client, request_id, timeout_ms, NULL, reply);
}

int lcpsim_client_batch_step_finish_into(lcpsim_client_t *client, uint64_t request_id,
                                         int timeout_ms, lcpsim_state_buffer_t *buffer,
                                         const lcpsim_batch_reply_t **reply) {
  if (!client || !buffer || !reply || request_id == 0)
    return LCPSIM_ERR_USAGE;
  *reply = NULL;
  lcpsim_batch_reply_t *decoded = NULL;
  int code = batch_step_finish(client, request_id, timeout_ms, buffer, &decoded);
  *reply = decoded;
  return code;
}
