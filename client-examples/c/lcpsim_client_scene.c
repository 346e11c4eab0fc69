/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: the world's contents and settings: GetInfo, GetScene, Record, LoadModel, Spawn,
 * Remove, Reset, SaveState and RestoreState, SetSettings. */
#include "lcpsim_client_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lcpsim_client_get_info(lcpsim_client_t *client, lcpsim_info_t **info) {
  if (!client || !info)
    return LCPSIM_ERR_USAGE;
  *info = NULL;
  Lcpsim__V1__GetInfoRequest get_info = LCPSIM__V1__GET_INFO_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_GET_INFO;
  request.get_info = &get_info;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->get_info)
    return lcpc_missing(client, reply, "info");
  /* Every sub-message of an unpacked message is its own allocation: hand this one over. */
  *info = reply->get_info;
  reply->get_info = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

void lcpsim_scene_destroy(lcpsim_scene_t **scene) { lcpc_message_destroy(scene); }

int lcpsim_client_get_scene(lcpsim_client_t *client, lcpsim_scene_t **scene) {
  if (!client || !scene)
    return LCPSIM_ERR_USAGE;
  *scene = NULL;
  Lcpsim__V1__GetSceneRequest get_scene = LCPSIM__V1__GET_SCENE_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_GET_SCENE;
  request.get_scene = &get_scene;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->get_scene || !reply->get_scene->scene)
    return lcpc_missing(client, reply, "scene");
  *scene = reply->get_scene;
  reply->get_scene = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

static int record_call(lcpsim_client_t *client, Lcpsim__V1__RecordRequest *record,
                       lcpsim_record_result_t *result) {
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_RECORD;
  request.record = record;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->record)
    return lcpc_missing(client, reply, "record");
  if (result) {
    *result = (lcpsim_record_result_t){.states_written = reply->record->states_written,
                                       .bytes_written = reply->record->bytes_written,
                                       .recording = reply->record->recording};
    snprintf(result->path, sizeof result->path, "%s", reply->record->path);
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_record_start(lcpsim_client_t *client, const char *path, uint32_t every_steps,
                               bool include_contacts, lcpsim_record_result_t *result) {
  if (!client || !path)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RecordRequest record = LCPSIM__V1__RECORD_REQUEST__INIT;
  record.path = (char *)path;
  record.every_steps = every_steps;
  record.include_contacts = include_contacts;
  return record_call(client, &record, result);
}

int lcpsim_client_record_stop(lcpsim_client_t *client, lcpsim_record_result_t *result) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RecordRequest record = LCPSIM__V1__RECORD_REQUEST__INIT;
  record.stop = true;
  return record_call(client, &record, result);
}

int lcpsim_client_load_model(lcpsim_client_t *client, const lcpsim_model_t *model,
                             lcpsim_robot_info_t **robot) {
  if (!client || !model)
    return LCPSIM_ERR_USAGE;
  if (robot)
    *robot = NULL;
  if ((model->urdf_path != NULL) == (model->urdf_text != NULL))
    return lcpc_fail(client, LCPSIM_ERR_USAGE,
                     "load_model: give exactly one of urdf_path, urdf_text");
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  if (model->urdf_path) {
    load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
    load.urdf_path = (char *)model->urdf_path;
  } else {
    load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
    load.urdf_text = (char *)model->urdf_text;
  }
  load.name = (char *)(model->name ? model->name : "");
  lcpc_pose_message_t base_pose;
  lcpc_pose_message(&model->base_pose, &base_pose);
  load.base_pose = &base_pose.pose;
  load.base_type = (Lcpsim__V1__LoadModelRequest__Base)model->base;
  load.self_collision = model->self_collision;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_LOAD_MODEL;
  request.load_model = &load;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (robot) {
    if (!reply->load_model || !reply->load_model->robot)
      return lcpc_missing(client, reply, "robot");
    *robot = reply->load_model->robot;
    reply->load_model->robot = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_spawn(lcpsim_client_t *client, const lcpsim_body_t *body, uint32_t *id,
                        char **name) {
  if (!client || !body)
    return LCPSIM_ERR_USAGE;
  if (name)
    *name = NULL;
  Lcpsim__V1__Vec3 half_extents = lcpc_vec3_message(body->half_extents);
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = (Lcpsim__V1__Shape__Type)body->shape;
  shape.radius = body->radius;
  shape.half_length = body->half_length;
  shape.half_extents = &half_extents;
  lcpc_pose_message_t pose;
  lcpc_pose_message(&body->pose, &pose);
  Lcpsim__V1__Vec3 linear = lcpc_vec3_message(body->linear_velocity);
  Lcpsim__V1__Vec3 angular = lcpc_vec3_message(body->angular_velocity);
  Lcpsim__V1__Twist twist = LCPSIM__V1__TWIST__INIT;
  twist.linear = &linear;
  twist.angular = &angular;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.name = (char *)(body->name ? body->name : "");
  spawn.shape = &shape;
  spawn.pose = &pose.pose;
  spawn.twist = &twist;
  spawn.mass = body->mass;
  spawn.is_static = body->is_static;
  spawn.friction = body->friction;
  spawn.restitution = body->restitution;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SPAWN;
  request.spawn = &spawn;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->spawn)
    return lcpc_missing(client, reply, "body");
  if (id)
    *id = reply->spawn->id;
  if (name) {
    *name = strdup(reply->spawn->name);
    if (!*name)
      code = lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "spawn: out of memory");
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

int lcpsim_client_remove(lcpsim_client_t *client, const char *name) {
  if (!client || !name)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)name;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_REMOVE;
  request.remove = &remove;
  return lcpc_call_for_status(client, &request);
}

int lcpsim_client_reset(lcpsim_client_t *client) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_RESET;
  request.reset = &reset;
  return lcpc_call_for_status(client, &request);
}

int lcpsim_client_save_state(lcpsim_client_t *client, const char *slot, uint8_t **snapshot,
                             size_t *size, double *time) {
  if (!client || (snapshot && !size))
    return LCPSIM_ERR_USAGE;
  if (snapshot) {
    *snapshot = NULL;
    *size = 0;
  }
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  save.slot = (char *)(slot ? slot : "");
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SAVE_STATE;
  request.save_state = &save;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->save_state)
    return lcpc_missing(client, reply, "snapshot");
  const ProtobufCBinaryData *bytes = &reply->save_state->snapshot;
  if (snapshot) {
    *snapshot = malloc(bytes->len ? bytes->len : 1);
    if (*snapshot) {
      if (bytes->len)
        memcpy(*snapshot, bytes->data, bytes->len);
      *size = bytes->len;
    } else {
      code = lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "save_state: out of memory");
    }
  }
  if (time)
    *time = reply->save_state->time;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

static int restore(lcpsim_client_t *client, Lcpsim__V1__RestoreStateRequest *restore_state,
                   double *time) {
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_RESTORE_STATE;
  request.restore_state = restore_state;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (time)
    *time = reply->restore_state ? reply->restore_state->time : 0.0;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_restore_state(lcpsim_client_t *client, const uint8_t *snapshot, size_t size,
                                double *time) {
  if (!client || (!snapshot && size > 0))
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RestoreStateRequest restore_state = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore_state.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore_state.snapshot.data = (uint8_t *)snapshot;
  restore_state.snapshot.len = size;
  return restore(client, &restore_state, time);
}

int lcpsim_client_restore_slot(lcpsim_client_t *client, const char *slot, double *time) {
  if (!client || !slot)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RestoreStateRequest restore_state = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore_state.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  restore_state.slot = (char *)slot;
  return restore(client, &restore_state, time);
}

int lcpsim_client_set_settings(lcpsim_client_t *client, const lcpsim_settings_change_t *change,
                               lcpsim_settings_t **settings) {
  if (!client || !change)
    return LCPSIM_ERR_USAGE;
  if (settings)
    *settings = NULL;
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  Lcpsim__V1__Vec3 gravity = lcpc_vec3_message(change->gravity);
  if (change->has_timestep) {
    set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
    set.timestep = change->timestep;
  }
  if (change->has_gravity)
    set.gravity = &gravity;
  if (change->has_iterations) {
    set.iterations_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__ITERATIONS_VALUE_ITERATIONS;
    set.iterations = change->iterations;
  }
  if (change->has_sor_omega) {
    set.sor_omega_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__SOR_OMEGA_VALUE_SOR_OMEGA;
    set.sor_omega = change->sor_omega;
  }
  if (change->has_friction_model) {
    set.friction_model_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__FRICTION_MODEL_VALUE_FRICTION_MODEL;
    set.friction_model = (Lcpsim__V1__Settings__FrictionModel)change->friction_model;
  }
  if (change->has_mode) {
    set.mode_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__MODE_VALUE_MODE;
    set.mode = (Lcpsim__V1__Settings__Mode)change->mode;
  }
  if (change->has_rate) {
    set.rate_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__RATE_VALUE_RATE;
    set.rate = change->rate;
  }
  if (change->has_max_push_speed) {
    set.max_push_speed_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__MAX_PUSH_SPEED_VALUE_MAX_PUSH_SPEED;
    set.max_push_speed = change->max_push_speed;
  }
  if (change->has_relax_iterations) {
    set.relax_iterations_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__RELAX_ITERATIONS_VALUE_RELAX_ITERATIONS;
    set.relax_iterations = change->relax_iterations;
  }
  if (change->has_restitution_threshold) {
    set.restitution_threshold_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__RESTITUTION_THRESHOLD_VALUE_RESTITUTION_THRESHOLD;
    set.restitution_threshold = change->restitution_threshold;
  }
  if (change->has_enforce_velocity_limits) {
    set.enforce_velocity_limits_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__ENFORCE_VELOCITY_LIMITS_VALUE_ENFORCE_VELOCITY_LIMITS;
    set.enforce_velocity_limits = change->enforce_velocity_limits;
  }
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_SETTINGS;
  request.set_settings = &set;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (settings) {
    if (!reply->set_settings || !reply->set_settings->settings)
      return lcpc_missing(client, reply, "settings");
    *settings = reply->set_settings->settings;
    reply->set_settings->settings = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}
