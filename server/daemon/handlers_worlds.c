/* SPDX-License-Identifier: Apache-2.0 */
#include "handlers_worlds.h"

#include "log.h"
#include "scene_file.h"

#include "lcpsim/urdf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD LCP_ERR_INVALID_ARGUMENT

static void fill_world_info(Lcpsim__V1__WorldInfo *info, const lcpd_world_t *world) {
  lcpsim__v1__world_info__init(info);
  const lcpd_sim_t *sim = world->sim;
  info->name = (char *)world->name;
  info->time = lcp_world_time(sim->live.world);
  info->step_count = lcp_world_step_count(sim->live.world);
  info->robot_count = sim->live.robot_count;
  info->body_count = sim->live.body_count;
  info->memory_bytes = lcpd_world_memory_bytes(sim);
}

/* The scene of a scene_path or scene_text, its robots loaded as LoadModel
 * loads (below the model roots, with the daemon's packages). */
static int read_scene(const Lcpsim__V1__CreateWorldRequest *req, const lcpd_sim_t *model,
                      lcpd_scene_t *scene, lcpd_error_t *error) {
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.packages = model->packages;
  options.package_count = model->package_count;
  options.package_paths = (const char **)model->package_paths;
  options.package_path_count = model->package_path_count;
  options.files = (lcp_file_rules_t){model->model_roots, model->model_root_count, true};
  options.max_total_mesh_bytes = LCPD_MAX_LOAD_MODEL_MESH_BYTES;
  options.max_mesh_files = LCPD_MAX_LOAD_MODEL_MESH_FILES;
  int rc;
  if (req->source_case == LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_PATH)
    rc = lcpd_scene_file_load_confined(req->scene_path, &options.files, &options, scene, error);
  else
    rc = lcpd_scene_text_load("scene_text", req->scene_text, strlen(req->scene_text), &options,
                              scene, error);
  if (rc != LCP_OK)
    return lcpd_error_prefix(error, "create_world.%s: ",
                             req->source_case == LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_PATH
                                 ? "scene_path"
                                 : "scene_text");
  /* Only the default world follows the wall clock (docs/worlds.md). */
  scene->mode = LCPD_MODE_LOCKSTEP;
  return LCP_OK;
}

/* The new world's sim, built from the request's source (NULL on failure). */
static lcpd_sim_t *build_world(lcpd_worlds_t *worlds, const Lcpsim__V1__CreateWorldRequest *req,
                               lcpd_error_t *error) {
  const lcpd_sim_t *model = lcpd_worlds_default(worlds)->sim;
  if (req->copy_state && req->source_case != LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_COPY_OF) {
    lcpd_fail(error, BAD, "create_world.copy_state needs copy_of");
    return NULL;
  }
  const lcpd_world_t *source = NULL;
  if (req->source_case == LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_COPY_OF &&
      !(source = lcpd_worlds_find(worlds, req->copy_of))) {
    lcpd_fail(error, LCP_ERR_NOT_FOUND, "create_world.copy_of: no world named '%s'",
              LCPD_QUOTE(req->copy_of));
    return NULL;
  }
  if (req->source_case == LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE__NOT_SET) {
    lcpd_fail(error, BAD, "create_world needs scene_path, scene_text or copy_of");
    return NULL;
  }
  lcpd_sim_t *sim = calloc(1, sizeof *sim);
  if (!sim) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "create_world: out of memory");
    return NULL;
  }
  int rc;
  if (source) {
    rc = lcpd_sim_copy(sim, source->sim, req->copy_state, error);
    if (rc != LCP_OK)
      lcpd_error_prefix(error, "create_world.copy_of: ");
  } else {
    lcpd_scene_t scene;
    rc = read_scene(req, model, &scene, error);
    if (rc == LCP_OK && (rc = lcpd_sim_init(sim, &scene, error)) != LCP_OK)
      lcpd_error_prefix(error, "create_world: ");
    if (rc == LCP_OK) {
      sim->packages = model->packages;
      sim->package_count = model->package_count;
      sim->package_paths = model->package_paths;
      sim->package_path_count = model->package_path_count;
      sim->model_roots = model->model_roots;
      sim->model_root_count = model->model_root_count;
    }
  }
  if (rc != LCP_OK) {
    free(sim);
    return NULL;
  }
  if (req->snapshot.len &&
      lcpd_sim_restore(sim, req->snapshot.data, req->snapshot.len, error) != LCP_OK) {
    lcpd_error_prefix(error, "create_world.snapshot: ");
    lcpd_sim_destroy(sim);
    free(sim);
    return NULL;
  }
  sim->publish = model->publish;
  sim->publish_user = model->publish_user;
  return sim;
}

int lcpd_handle_create_world(lcpd_call_t *call, lcpd_worlds_t *worlds,
                             const Lcpsim__V1__CreateWorldRequest *req) {
  lcpd_error_t *error = &call->error;
  /* What can be refused before anything is built is. */
  if (req->name[0] && lcpd_world_name_check(req->name, "create_world.name", error) != LCP_OK)
    return error->code;
  if (req->name[0] && lcpd_worlds_find(worlds, req->name))
    return lcpd_fail(error, BAD, "create_world.name: a world named '%s' exists already", req->name);
  if ((uint32_t)worlds->count >= worlds->max_worlds)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY,
                     "create_world: the daemon holds %d worlds, its limit (--max-worlds %u, the "
                     "default world counted); destroy one first",
                     worlds->count, worlds->max_worlds);
  Lcpsim__V1__CreateWorldReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__CreateWorldReply);
  Lcpsim__V1__WorldInfo *info = LCPD_NEW(&call->reply_arena, Lcpsim__V1__WorldInfo);
  if (!out || !info)
    return lcpd_call_out_of_memory(call);
  lcpd_sim_t *sim = build_world(worlds, req, error);
  if (!sim)
    return error->code;
  lcpd_world_t *world;
  if (lcpd_worlds_add(worlds, req->name, sim, &world, error) != LCP_OK)
    return error->code;
  LCPD_INFO("world '%s' created (%d robots, %d bodies; %d worlds)", world->name,
            sim->live.robot_count, sim->live.body_count, worlds->count);
  lcpsim__v1__create_world_reply__init(out);
  fill_world_info(info, world);
  out->world = info;
  lcpd_call_reply_ok(call, LCPSIM__V1__REPLY__RESULT_CREATE_WORLD, out);
  return LCP_OK;
}

int lcpd_handle_destroy_world(lcpd_call_t *call, lcpd_worlds_t *worlds,
                              const Lcpsim__V1__DestroyWorldRequest *req) {
  lcpd_error_t *error = &call->error;
  lcpd_world_t *world = req->name[0] ? lcpd_worlds_find(worlds, req->name) : NULL;
  if (!req->name[0])
    return lcpd_fail(error, BAD, "destroy_world.name: name the world to destroy");
  if (!world)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "destroy_world.name: no world named '%s'",
                     LCPD_QUOTE(req->name));
  if (world->busy)
    return lcpd_fail(error, LCP_ERR_STATE, "destroy_world.name: world '%s' is being stepped",
                     world->name);
  void *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__DestroyWorldReply);
  if (!out)
    return lcpd_call_out_of_memory(call);
  lcpsim__v1__destroy_world_reply__init(out);
  if (lcpd_worlds_remove(worlds, world, error) != LCP_OK)
    return error->code;
  lcpd_call_reply_ok(call, LCPSIM__V1__REPLY__RESULT_DESTROY_WORLD, out);
  return LCP_OK;
}

int lcpd_handle_list_worlds(lcpd_call_t *call, const lcpd_worlds_t *worlds, uint32_t workers) {
  Lcpsim__V1__ListWorldsReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__ListWorldsReply);
  Lcpsim__V1__WorldInfo **infos =
      lcpd_arena_array(&call->reply_arena, (size_t)worlds->count, sizeof *infos);
  Lcpsim__V1__WorldInfo *filled =
      lcpd_arena_array(&call->reply_arena, (size_t)worlds->count, sizeof *filled);
  if (!out || !infos || !filled)
    return lcpd_call_out_of_memory(call);
  lcpsim__v1__list_worlds_reply__init(out);
  for (int32_t i = 0; i < worlds->count; ++i) {
    fill_world_info(&filled[i], worlds->items[i]);
    infos[i] = &filled[i];
  }
  out->worlds = infos;
  out->n_worlds = (size_t)worlds->count;
  out->max_worlds = worlds->max_worlds;
  out->max_world_bytes = worlds->max_bytes;
  out->workers = workers;
  lcpd_call_reply_ok(call, LCPSIM__V1__REPLY__RESULT_LIST_WORLDS, out);
  return LCP_OK;
}
