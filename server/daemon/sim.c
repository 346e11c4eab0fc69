/* SPDX-License-Identifier: Apache-2.0 */
#include "sim.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t monotonic_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void engine_log(void *user, lcp_log_level_t level, const char *message) {
  (void)user;
  static const lcpd_log_level_t levels[] = {LCPD_LOG_ERROR, LCPD_LOG_WARNING, LCPD_LOG_INFO,
                                            LCPD_LOG_DEBUG};
  lcpd_log(level >= 0 && level <= LCP_LOG_DEBUG ? levels[level] : LCPD_LOG_INFO, "engine: %s",
           message);
}

/* ---- the live world ---- */

static void live_clear(lcpd_live_t *live) {
  for (int32_t i = 0; i < live->robot_count; ++i)
    free(live->robots[i].link_names);
  free(live->robots);
  free(live->bodies);
  lcp_world_destroy(&live->world);
  *live = (lcpd_live_t){0};
}

static int live_add_robot(lcpd_live_t *live, const lcp_robot_def_t *def, const double position[3],
                          const double orientation[4], lcpd_robot_t **out, lcpd_error_t *error) {
  if (def->name[0] == '\0' || memchr(def->name, '\0', LCP_NAME_MAX) == NULL)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "a robot needs a name of 1 to %d bytes",
                     LCP_NAME_MAX - 1);
  lcpd_robot_t *grown = realloc(live->robots, (size_t)(live->robot_count + 1) * sizeof *grown);
  if (!grown)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  live->robots = grown;
  lcpd_robot_t robot = {.link_count = def->link_count};
  robot.link_names = calloc((size_t)def->link_count, sizeof *robot.link_names);
  if (!robot.link_names)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  for (int32_t i = 0; i < def->link_count; ++i) {
    memcpy(robot.link_names[i], def->links[i].name, LCP_NAME_MAX);
    robot.link_names[i][LCP_NAME_MAX - 1] = '\0';
  }
  memcpy(robot.name, def->name, LCP_NAME_MAX);
  int rc = lcp_robot_add(live->world, def, position, orientation, &robot.id);
  if (rc != LCP_OK) {
    free(robot.link_names);
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(live->world));
  }
  live->robots[live->robot_count] = robot;
  if (out)
    *out = &live->robots[live->robot_count];
  live->robot_count++;
  return LCP_OK;
}

static int live_add_imu(lcpd_live_t *live, const lcpd_imu_spec_t *spec, lcpd_error_t *error) {
  lcp_imu_def_t def = lcp_imu_def_default();
  const lcpd_robot_t *robot = NULL;
  for (int32_t i = 0; i < live->robot_count; ++i)
    if (strcmp(live->robots[i].name, spec->robot) == 0)
      robot = &live->robots[i];
  if (!robot)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "imu '%s': no robot '%s'", LCPD_QUOTE(spec->name),
                     LCPD_QUOTE(spec->robot));
  if (lcp_robot_find_link(live->world, robot->id, spec->link, &def.link) != LCP_OK)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "imu '%s': robot '%s' has no link '%s'",
                     LCPD_QUOTE(spec->name), LCPD_QUOTE(spec->robot), LCPD_QUOTE(spec->link));
  if (spec->name[0] == '\0')
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "an imu needs a name");
  memcpy(def.name, spec->name, LCP_NAME_MAX);
  def.robot = robot->id;
  memcpy(def.position, spec->position, sizeof def.position);
  memcpy(def.orientation, spec->orientation, sizeof def.orientation);
  def.accel_noise = spec->accel_noise;
  def.gyro_noise = spec->gyro_noise;
  memcpy(def.accel_bias, spec->accel_bias, sizeof def.accel_bias);
  memcpy(def.gyro_bias, spec->gyro_bias, sizeof def.gyro_bias);
  def.seed = spec->seed;
  int rc = lcp_imu_add(live->world, &def, NULL);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(live->world));
  return LCP_OK;
}

static int live_add_body(lcpd_live_t *live, const lcpd_body_spec_t *spec, lcpd_body_t **out,
                         lcpd_error_t *error) {
  int rc = lcpd_body_spec_validate(spec, "", error);
  if (rc != LCP_OK)
    return lcpd_error_prefix(error, "body '%s': ", spec->name);
  lcp_body_def_t body_def;
  lcp_geom_def_t geom_def;
  rc = lcpd_body_spec_defs(spec, &body_def, &geom_def);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "body '%s': no mass properties for its shape", spec->name);
  lcpd_body_t *grown = realloc(live->bodies, (size_t)(live->body_count + 1) * sizeof *grown);
  if (!grown)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  live->bodies = grown;
  lcpd_body_t body = {.shape = spec->shape,
                      .is_static = spec->is_static,
                      .mass = spec->is_static ? 0.0 : spec->mass};
  memcpy(body.name, spec->name, LCP_NAME_MAX);
  rc = lcp_body_add(live->world, &body_def, &body.id);
  if (rc == LCP_OK) {
    rc = lcp_geom_add(live->world, body.id, &geom_def, NULL);
    if (rc != LCP_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", lcp_world_last_error(live->world));
      lcp_body_remove(live->world, body.id);
      return lcpd_fail(error, rc, "body '%s': %s", spec->name, why);
    }
  } else {
    return lcpd_fail(error, rc, "body '%s': %s", spec->name, lcp_world_last_error(live->world));
  }
  live->bodies[live->body_count] = body;
  if (out)
    *out = &live->bodies[live->body_count];
  live->body_count++;
  return LCP_OK;
}

static int live_build(lcpd_live_t *live, const lcpd_scene_t *scene, lcpd_error_t *error) {
  *live = (lcpd_live_t){0};
  int rc = lcpd_settings_validate(&scene->settings, scene->rate, error);
  if (rc != LCP_OK)
    return lcpd_error_prefix(error, "bad world settings: ");
  rc = lcp_world_create(&scene->settings, &live->world);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "cannot create the world: %s", lcp_status_string(rc));
  lcp_world_set_log(live->world, engine_log, NULL);
  if (scene->has_ground) {
    /* The plane z = 0 on the world body, as the benchmark scenes' ground,
     * with the scene's restitution too. */
    lcp_geom_def_t plane = lcp_geom_def_default();
    plane.type = LCP_SHAPE_PLANE;
    plane.friction = scene->ground_friction;
    plane.restitution = scene->ground_restitution;
    rc = lcp_geom_add(live->world, LCP_WORLD_BODY, &plane, NULL);
    if (rc != LCP_OK)
      lcpd_fail(error, rc, "ground: %s", lcp_world_last_error(live->world));
  }
  for (int32_t i = 0; rc == LCP_OK && i < scene->robot_count; ++i)
    rc = live_add_robot(live, scene->robots[i].def, scene->robots[i].position,
                        scene->robots[i].orientation, NULL, error);
  for (int32_t i = 0; rc == LCP_OK && i < scene->body_count; ++i)
    rc = live_add_body(live, &scene->bodies[i], NULL, error);
  for (int32_t i = 0; rc == LCP_OK && i < scene->imu_count; ++i)
    rc = live_add_imu(live, &scene->imus[i], error);
  if (rc != LCP_OK)
    live_clear(live);
  return rc;
}

/* ---- the edits since the scene ---- */

static void edits_clear(lcpd_sim_t *sim) {
  for (int32_t i = 0; i < sim->edit_count; ++i)
    if (sim->edits[i].kind == LCPD_EDIT_ROBOT)
      lcp_robot_def_free(&sim->edits[i].as.robot.def);
  free(sim->edits);
  sim->edits = NULL;
  sim->edit_count = sim->edit_capacity = 0;
  sim->edit_bytes = 0;
}

/* Room for one more edit, made before the world changes so that recording
 * it cannot fail after. */
static int edits_reserve(lcpd_sim_t *sim, lcpd_error_t *error) {
  if (sim->edit_count < sim->edit_capacity)
    return LCP_OK;
  int32_t capacity = sim->edit_capacity ? 2 * sim->edit_capacity : 8;
  lcpd_edit_t *grown = realloc(sim->edits, (size_t)capacity * sizeof *grown);
  if (!grown)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  sim->edits = grown;
  sim->edit_capacity = capacity;
  return LCP_OK;
}

/* ---- the sim ---- */

int lcpd_sim_init(lcpd_sim_t *sim, lcpd_scene_t *scene, lcpd_error_t *error) {
  *sim = (lcpd_sim_t){.scene = *scene, .mode = scene->mode, .rate = scene->rate};
  *scene = (lcpd_scene_t){0};
  lcpd_scene_init(scene);
  int rc = live_build(&sim->live, &sim->scene, error);
  if (rc != LCP_OK)
    lcpd_scene_clear(&sim->scene);
  return rc;
}

void lcpd_sim_destroy(lcpd_sim_t *sim) {
  edits_clear(sim);
  live_clear(&sim->live);
  lcpd_scene_clear(&sim->scene);
  for (int32_t i = 0; i < sim->slot_count; ++i)
    free(sim->slots[i].data);
  free(sim->slots);
  sim->slots = NULL;
  sim->slot_count = 0;
  sim->slot_bytes = 0;
  lcpd_held_destroy(&sim->held_wrenches);
}

int lcpd_sim_reset(lcpd_sim_t *sim, lcpd_error_t *error) {
  lcpd_live_t fresh;
  int rc = live_build(&fresh, &sim->scene, error);
  if (rc != LCP_OK)
    return rc;
  live_clear(&sim->live);
  sim->live = fresh;
  edits_clear(sim);
  sim->mode = sim->world_name ? LCPD_MODE_LOCKSTEP : sim->scene.mode;
  sim->rate = sim->scene.rate;
  sim->steps_since_publish = 0;
  sim->time_epoch++;
  sim->scene_revision++;
  lcpd_held_clear(&sim->held_wrenches);
  return LCP_OK;
}

/* Replays the edits of from on to, through the calls that made them. */
static int replay_edits(lcpd_sim_t *to, const lcpd_sim_t *from, lcpd_error_t *error) {
  int rc = LCP_OK;
  for (int32_t i = 0; rc == LCP_OK && i < from->edit_count; ++i) {
    const lcpd_edit_t *edit = &from->edits[i];
    switch (edit->kind) {
    case LCPD_EDIT_ROBOT:
      rc = lcpd_sim_add_robot(to, edit->as.robot.def, edit->as.robot.position,
                              edit->as.robot.orientation, NULL, error);
      break;
    case LCPD_EDIT_BODY:
      rc = lcpd_sim_add_body(to, &edit->as.body, NULL, error);
      break;
    case LCPD_EDIT_IMU:
      rc = lcpd_sim_add_imu(to, &edit->as.imu, error);
      break;
    case LCPD_EDIT_REMOVE:
      rc = lcpd_sim_remove(to, edit->as.removed, error);
      break;
    }
  }
  return rc;
}

/* The copy's controllers as from's: every joint's control and gravity
 * compensation, robot by robot (the robots are the same, in the same order). */
static int copy_controls(lcpd_sim_t *to, const lcpd_sim_t *from, lcpd_error_t *error) {
  for (int32_t i = 0; i < from->live.robot_count; ++i) {
    lcp_robot_id source = from->live.robots[i].id, copy = to->live.robots[i].id;
    lcp_robot_info_t info;
    int rc = lcp_robot_get_info(from->live.world, source, &info);
    lcp_joint_control_t *controls =
        rc == LCP_OK ? calloc((size_t)info.joint_count + 1, sizeof *controls) : NULL;
    if (!controls)
      return lcpd_fail(error, rc == LCP_OK ? LCP_ERR_NO_MEMORY : rc,
                       "cannot copy the controllers of robot '%s'", from->live.robots[i].name);
    for (int32_t j = 0; rc == LCP_OK && j < info.joint_count; ++j)
      rc = lcp_robot_get_joint_control(from->live.world, source, j, &controls[j]);
    bool gravity = false;
    if (rc == LCP_OK)
      rc = lcp_robot_get_gravity_compensation(from->live.world, source, &gravity);
    if (rc == LCP_OK)
      rc = lcp_robot_set_controls(to->live.world, copy, controls, info.joint_count);
    if (rc == LCP_OK)
      rc = lcp_robot_set_gravity_compensation(to->live.world, copy, gravity);
    free(controls);
    if (rc != LCP_OK)
      return lcpd_fail(error, rc, "cannot copy the controllers of robot '%s': %s",
                       from->live.robots[i].name, lcp_world_last_error(to->live.world));
  }
  return LCP_OK;
}

/* The copy's model values that SetDynamics changes (masses, inertias,
 * materials, joint dynamics and limits) as from's are now: read from the
 * source's engine model rather than replayed, so that a world randomised at
 * every episode keeps no growing list of edits, and exact whatever the
 * edits were. The copy was built by the same calls, so the layouts agree. */
static int copy_dynamics(lcpd_sim_t *to, const lcpd_sim_t *from, lcpd_error_t *error) {
  int rc = lcp_world_copy_dynamics(to->live.world, from->live.world);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "dynamics: %s", lcp_world_last_error(to->live.world));
  /* GetInfo reports a body's mass from the daemon's record, which
   * SetDynamics keeps; the bodies are the same, in the same order. */
  for (int32_t i = 0; i < from->live.body_count; ++i)
    to->live.bodies[i].mass = from->live.bodies[i].mass;
  return LCP_OK;
}

int lcpd_sim_copy(lcpd_sim_t *to, const lcpd_sim_t *from, bool with_state, lcpd_error_t *error) {
  lcpd_scene_t scene;
  int rc = lcpd_scene_copy(&from->scene, &scene, error);
  if (rc != LCP_OK) {
    *to = (lcpd_sim_t){0};
    return rc;
  }
  scene.mode = LCPD_MODE_LOCKSTEP;
  if ((rc = lcpd_sim_init(to, &scene, error)) != LCP_OK)
    return rc;
  to->packages = from->packages;
  to->package_count = from->package_count;
  to->package_paths = from->package_paths;
  to->package_path_count = from->package_path_count;
  to->model_roots = from->model_roots;
  to->model_root_count = from->model_root_count;
  rc = replay_edits(to, from, error);
  to->next_body_number = from->next_body_number;
  lcp_world_settings_t settings;
  lcp_world_get_settings(from->live.world, &settings);
  if (rc == LCP_OK && (rc = lcp_world_set_settings(to->live.world, &settings)) != LCP_OK)
    lcpd_fail(error, rc, "settings: %s", lcp_world_last_error(to->live.world));
  to->rate = from->rate;
  for (int32_t i = 0; rc == LCP_OK && i < from->held_wrenches.count; ++i) {
    uint32_t id;
    rc = lcpd_held_add(&to->held_wrenches, &from->held_wrenches.items[i], &id, error);
    if (rc == LCP_OK)
      to->held_wrenches.items[to->held_wrenches.count - 1].hold_id =
          from->held_wrenches.items[i].hold_id;
  }
  to->held_wrenches.last_id = from->held_wrenches.last_id;
  if (rc == LCP_OK)
    rc = copy_dynamics(to, from, error);
  for (int32_t i = 0; rc == LCP_OK && i < from->slot_count; ++i)
    rc =
        lcpd_sim_slot_put(to, from->slots[i].name, from->slots[i].data, from->slots[i].size, error);
  if (rc == LCP_OK && with_state) {
    /* The engine's whole state: the copy is the same world, bitwise. */
    unsigned char *state = NULL;
    size_t capacity = 0, size = 0;
    rc = lcpd_sim_undo_save(from, &state, &capacity, &size, error);
    if (rc == LCP_OK)
      rc = lcpd_sim_undo_restore(to, state, size, error);
    free(state);
  } else if (rc == LCP_OK) {
    rc = copy_controls(to, from, error);
  }
  if (rc != LCP_OK)
    lcpd_sim_destroy(to);
  return rc;
}

lcpd_robot_t *lcpd_sim_find_robot(lcpd_sim_t *sim, const char *name) {
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    if (strcmp(sim->live.robots[i].name, name) == 0)
      return &sim->live.robots[i];
  return NULL;
}

/* "arm7, other" (cut short when long), to say what a name could have been. */
static const char *robot_names(const lcpd_sim_t *sim, char *buffer, size_t size) {
  buffer[0] = '\0';
  size_t used = 0;
  for (int32_t i = 0; i < sim->live.robot_count && used + 1 < size; ++i)
    used += (size_t)snprintf(buffer + used, size - used, "%s%s", i ? ", " : "",
                             sim->live.robots[i].name);
  if (sim->live.robot_count == 0)
    snprintf(buffer, size, "none");
  return buffer;
}

lcpd_robot_t *lcpd_sim_robot_named(lcpd_sim_t *sim, const char *name, const char *field,
                                   lcpd_error_t *error) {
  lcpd_robot_t *robot = lcpd_sim_find_robot(sim, name);
  if (robot)
    return robot;
  char names[256];
  if (lcpd_sim_find_body(sim, name))
    lcpd_fail(error, LCP_ERR_NOT_FOUND, "%s: no robot named '%s' (it is a free body)", field,
              LCPD_QUOTE(name));
  else
    lcpd_fail(error, LCP_ERR_NOT_FOUND, "%s: no robot named '%s' (robots: %s)", field,
              LCPD_QUOTE(name), robot_names(sim, names, sizeof names));
  return NULL;
}

lcpd_body_t *lcpd_sim_find_body(lcpd_sim_t *sim, const char *name) {
  for (int32_t i = 0; i < sim->live.body_count; ++i)
    if (strcmp(sim->live.bodies[i].name, name) == 0)
      return &sim->live.bodies[i];
  return NULL;
}

const lcpd_robot_t *lcpd_sim_robot_by_id(const lcpd_sim_t *sim, lcp_robot_id id) {
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    if (sim->live.robots[i].id == id)
      return &sim->live.robots[i];
  return NULL;
}

const lcpd_body_t *lcpd_sim_body_by_id(const lcpd_sim_t *sim, lcp_body_id id) {
  for (int32_t i = 0; i < sim->live.body_count; ++i)
    if (sim->live.bodies[i].id == id)
      return &sim->live.bodies[i];
  return NULL;
}

bool lcpd_sim_name_taken(const lcpd_sim_t *sim, const char *name) {
  return lcpd_sim_find_robot((lcpd_sim_t *)sim, name) ||
         lcpd_sim_find_body((lcpd_sim_t *)sim, name);
}

int lcpd_sim_add_robot(lcpd_sim_t *sim, const lcp_robot_def_t *def, const double position[3],
                       const double orientation[4], lcpd_robot_t **out, lcpd_error_t *error) {
  if (lcpd_sim_name_taken(sim, def->name))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "the name '%s' is taken by another robot or body", def->name);
  lcpd_edit_t edit = {.kind = LCPD_EDIT_ROBOT};
  if (edits_reserve(sim, error) != LCP_OK)
    return error->code;
  if (lcpd_robot_def_copy(def, &edit.as.robot.def) != LCP_OK)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for a copy of the robot");
  memcpy(edit.as.robot.position, position, sizeof edit.as.robot.position);
  memcpy(edit.as.robot.orientation, orientation, sizeof edit.as.robot.orientation);
  int rc = live_add_robot(&sim->live, def, position, orientation, out, error);
  if (rc != LCP_OK) {
    lcp_robot_def_free(&edit.as.robot.def);
    return rc;
  }
  sim->edit_bytes += lcpd_robot_def_bytes(edit.as.robot.def);
  sim->edits[sim->edit_count++] = edit;
  sim->scene_revision++;
  return rc;
}

int lcpd_sim_add_body(lcpd_sim_t *sim, const lcpd_body_spec_t *spec, lcpd_body_t **out,
                      lcpd_error_t *error) {
  lcpd_body_spec_t named = *spec;
  if (named.name[0] == '\0') {
    do
      snprintf(named.name, sizeof named.name, "body%u", ++sim->next_body_number);
    while (lcpd_sim_name_taken(sim, named.name));
  } else if (lcpd_sim_name_taken(sim, named.name)) {
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "the name '%s' is taken by another robot or body", LCPD_QUOTE(named.name));
  }
  if (edits_reserve(sim, error) != LCP_OK)
    return error->code;
  int rc = live_add_body(&sim->live, &named, out, error);
  if (rc == LCP_OK) {
    sim->edits[sim->edit_count++] = (lcpd_edit_t){.kind = LCPD_EDIT_BODY, .as.body = named};
    sim->scene_revision++;
  }
  return rc;
}

int lcpd_sim_add_imu(lcpd_sim_t *sim, const lcpd_imu_spec_t *spec, lcpd_error_t *error) {
  if (edits_reserve(sim, error) != LCP_OK)
    return error->code;
  int rc = live_add_imu(&sim->live, spec, error);
  if (rc == LCP_OK)
    sim->edits[sim->edit_count++] = (lcpd_edit_t){.kind = LCPD_EDIT_IMU, .as.imu = *spec};
  return rc;
}

/* Records a removal that succeeded (room was reserved before it). */
static void edit_removed(lcpd_sim_t *sim, const char *name) {
  lcpd_edit_t *edit = &sim->edits[sim->edit_count++];
  *edit = (lcpd_edit_t){.kind = LCPD_EDIT_REMOVE};
  snprintf(edit->as.removed, sizeof edit->as.removed, "%s", name);
}

int lcpd_sim_remove(lcpd_sim_t *sim, const char *name, lcpd_error_t *error) {
  lcpd_live_t *live = &sim->live;
  lcpd_robot_t *robot = lcpd_sim_find_robot(sim, name);
  lcpd_body_t *body = robot ? NULL : lcpd_sim_find_body(sim, name);
  if ((robot || body) && edits_reserve(sim, error) != LCP_OK)
    return error->code;
  if (robot) {
    int rc = lcp_robot_remove(live->world, robot->id);
    if (rc != LCP_OK)
      return lcpd_fail(error, rc, "%s", lcp_world_last_error(live->world));
    edit_removed(sim, name);
    free(robot->link_names);
    int32_t index = (int32_t)(robot - live->robots);
    memmove(robot, robot + 1, (size_t)(live->robot_count - index - 1) * sizeof *robot);
    live->robot_count--;
    sim->scene_revision++;
    return LCP_OK;
  }
  if (body) {
    int rc = lcp_body_remove(live->world, body->id);
    if (rc != LCP_OK)
      return lcpd_fail(error, rc, "%s", lcp_world_last_error(live->world));
    edit_removed(sim, name);
    int32_t index = (int32_t)(body - live->bodies);
    memmove(body, body + 1, (size_t)(live->body_count - index - 1) * sizeof *body);
    live->body_count--;
    sim->scene_revision++;
    return LCP_OK;
  }
  return lcpd_fail(error, LCP_ERR_NOT_FOUND, "no robot or body named '%s'", LCPD_QUOTE(name));
}

int lcpd_sim_step(lcpd_sim_t *sim, lcpd_error_t *error) {
  int rc = sim->held_wrenches.count
               ? lcpd_held_apply_all(&sim->held_wrenches, sim->live.world, error)
               : LCP_OK;
  if (rc != LCP_OK)
    return rc;
  uint64_t start = sim->step_observer ? monotonic_ns() : 0;
  rc = lcp_world_step(sim->live.world);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "step %llu failed: %s",
                     (unsigned long long)lcp_world_step_count(sim->live.world) + 1,
                     lcp_world_last_error(sim->live.world));
  bool published = false;

  if (sim->step_observer)
    sim->step_observer(sim->step_observer_user, monotonic_ns() - start);
  if (sim->publish_every && ++sim->steps_since_publish >= sim->publish_every) {
    sim->steps_since_publish = 0;
    if (sim->publish) {
      sim->publish(sim, sim->publish_user);
      published = true;
    }
  }
  if (sim->record_step)
    sim->record_step(sim, published);
  return LCP_OK;
}

uint64_t lcpd_sim_scene_revision(const lcpd_sim_t *sim) { return sim->scene_revision; }

/* ---- snapshots ---- */

/* The daemon's wrapper around the engine's snapshot. The engine refuses a
 * snapshot of other bodies and geoms; the layout hash here also tells apart
 * worlds whose bodies differ only by name, and lets the daemon refuse
 * another world's snapshot before the engine reads a byte of it. The
 * checksum catches truncated or damaged copies. */
typedef struct snapshot_header {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint64_t layout;
  uint64_t engine_size;
  uint64_t checksum;
} snapshot_header;

static const char SNAPSHOT_MAGIC[8] = {'L', 'C', 'P', 'S', 'I', 'M', 'D', 'S'};
#define SNAPSHOT_VERSION 1u

static uint64_t layout_hash(const lcpd_sim_t *sim) {
  uint64_t h = LCP_HASH_SEED;
  const lcpd_live_t *live = &sim->live;
  for (int32_t i = 0; i < live->robot_count; ++i) {
    const lcpd_robot_t *r = &live->robots[i];
    h = lcp_hash_bytes(h, "robot", 5);
    h = lcp_hash_bytes(h, r->name, strlen(r->name) + 1);
    h = lcp_hash_bytes(h, &r->id, sizeof r->id);
    h = lcp_hash_bytes(h, &r->link_count, sizeof r->link_count);
    for (int32_t k = 0; k < r->link_count; ++k)
      h = lcp_hash_bytes(h, r->link_names[k], strlen(r->link_names[k]) + 1);
  }
  for (int32_t i = 0; i < live->body_count; ++i) {
    const lcpd_body_t *b = &live->bodies[i];
    h = lcp_hash_bytes(h, "body", 4);
    h = lcp_hash_bytes(h, b->name, strlen(b->name) + 1);
    h = lcp_hash_bytes(h, &b->id, sizeof b->id);
    unsigned char is_static = b->is_static;
    h = lcp_hash_bytes(h, &is_static, 1);
    int32_t type = (int32_t)b->shape.type;
    h = lcp_hash_bytes(h, &type, sizeof type);
  }
  return h;
}

size_t lcpd_sim_snapshot_size(const lcpd_sim_t *sim) {
  return sizeof(snapshot_header) + lcp_world_state_size(sim->live.world);
}

int lcpd_sim_snapshot_write(const lcpd_sim_t *sim, unsigned char *buffer, size_t size,
                            lcpd_error_t *error) {
  if (size != lcpd_sim_snapshot_size(sim))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "a snapshot of this world has %zu bytes, not %zu", lcpd_sim_snapshot_size(sim),
                     size);
  size_t engine_size = size - sizeof(snapshot_header);
  int rc = lcp_world_save_state(sim->live.world, buffer + sizeof(snapshot_header), engine_size,
                                &engine_size);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(sim->live.world));
  snapshot_header h = {.version = SNAPSHOT_VERSION,
                       .header_size = sizeof h,
                       .layout = layout_hash(sim),
                       .engine_size = engine_size};
  memcpy(h.magic, SNAPSHOT_MAGIC, sizeof h.magic);
  h.checksum = lcp_hash_bytes(LCP_HASH_SEED, buffer + sizeof h, engine_size);
  memcpy(buffer, &h, sizeof h);
  return LCP_OK;
}

int lcpd_sim_restore(lcpd_sim_t *sim, const unsigned char *data, size_t size, lcpd_error_t *error) {
  snapshot_header h;
  if (size < sizeof h)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "not an lcpsimd snapshot (%zu bytes, shorter than the header)", size);
  memcpy(&h, data, sizeof h);
  if (memcmp(h.magic, SNAPSHOT_MAGIC, sizeof h.magic) != 0 || h.header_size != sizeof h)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "not an lcpsimd snapshot");
  if (h.version != SNAPSHOT_VERSION)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "snapshot version %u; this daemon reads version %u", h.version,
                     SNAPSHOT_VERSION);
  if (h.engine_size != size - sizeof h ||
      h.checksum != lcp_hash_bytes(LCP_HASH_SEED, data + sizeof h, size - sizeof h))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "the snapshot is truncated or damaged (size or checksum mismatch)");
  if (h.layout != layout_hash(sim))
    return lcpd_fail(error, LCP_ERR_MISMATCH,
                     "the snapshot is of another world (its robots and bodies differ from this "
                     "world's)");
  int rc = lcp_world_restore_state(sim->live.world, data + sizeof h, size - sizeof h);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(sim->live.world));
  sim->time_epoch++;
  sim->scene_revision++;
  return LCP_OK;
}

int lcpd_sim_undo_save(const lcpd_sim_t *sim, unsigned char **buffer, size_t *capacity,
                       size_t *size, lcpd_error_t *error) {
  *size = 0;
  size_t need = lcp_world_state_size(sim->live.world);
  if (need > *capacity) {
    unsigned char *grown = realloc(*buffer, need);
    if (!grown)
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for a copy of the world's state");
    *buffer = grown;
    *capacity = need;
  }
  int rc = lcp_world_save_state(sim->live.world, *buffer, *capacity, size);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(sim->live.world));
  return LCP_OK;
}

int lcpd_sim_undo_restore(lcpd_sim_t *sim, const unsigned char *data, size_t size,
                          lcpd_error_t *error) {
  int rc = lcp_world_restore_state(sim->live.world, data, size);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(sim->live.world));
  sim->time_epoch++;
  return LCP_OK;
}

int lcpd_sim_slot_put(lcpd_sim_t *sim, const char *name, const unsigned char *data, size_t size,
                      lcpd_error_t *error) {
  if (name[0] == '\0' || strlen(name) >= LCP_NAME_MAX)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "a slot name has 1 to %d bytes",
                     LCP_NAME_MAX - 1);
  lcpd_slot_t *slot = (lcpd_slot_t *)lcpd_sim_slot_get(sim, name);
  size_t freed = slot ? slot->size : 0;
  if (!slot && sim->slot_count >= LCPD_MAX_SLOTS)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "all %d snapshot slots are in use", LCPD_MAX_SLOTS);
  if (size > LCPD_MAX_SLOT_BYTES || sim->slot_bytes - freed > LCPD_MAX_SLOT_BYTES - size)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "the slots would hold more than %zu bytes",
                     LCPD_MAX_SLOT_BYTES);
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  memcpy(copy, data, size);
  if (!slot) {
    lcpd_slot_t *grown = realloc(sim->slots, (size_t)(sim->slot_count + 1) * sizeof *grown);
    if (!grown) {
      free(copy);
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
    }
    sim->slots = grown;
    slot = &sim->slots[sim->slot_count++];
    *slot = (lcpd_slot_t){0};
    snprintf(slot->name, sizeof slot->name, "%s", name);
  }
  free(slot->data);
  slot->data = copy;
  slot->size = size;
  sim->slot_bytes = sim->slot_bytes - freed + size;
  return LCP_OK;
}

const lcpd_slot_t *lcpd_sim_slot_get(const lcpd_sim_t *sim, const char *name) {
  for (int32_t i = 0; i < sim->slot_count; ++i)
    if (strcmp(sim->slots[i].name, name) == 0)
      return &sim->slots[i];
  return NULL;
}

double lcpd_sim_timestep(const lcpd_sim_t *sim) {
  lcp_world_settings_t settings;
  lcp_world_get_settings(sim->live.world, &settings);
  return settings.timestep;
}
