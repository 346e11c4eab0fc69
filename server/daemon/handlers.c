/* SPDX-License-Identifier: Apache-2.0 */
#include "handlers.h"

#include "convert.h"
#include "handlers_state.h"
#include "log.h"
#include "recording.h"
#include "request_lists.h"
#include "scene_view.h"
#include "targets.h"

#include "lcpsim/urdf.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define BAD LCP_ERR_INVALID_ARGUMENT

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void lcpd_call_init(lcpd_call_t *call, size_t decode_budget, size_t reply_limit, uint64_t slice_ns,
                    int32_t max_steps) {
  *call = (lcpd_call_t){.slice_ns = slice_ns, .max_steps = max_steps};
  /* Test-only: the failures no real request can cause on demand, to test
   * that they leave the world as it was (LCPSIMD_TEST_FAULTS). */
  const char *faults = getenv("LCPSIMD_TEST_FAULTS");
  if (faults && strstr(faults, "step"))
    call->test_faults |= LCPD_FAULT_STEP;
  if (faults && strstr(faults, "undo"))
    call->test_faults |= LCPD_FAULT_UNDO;
  lcpd_arena_init(&call->request_arena, decode_budget, &call->error);
  lcpd_arena_init(&call->reply_arena, reply_limit, &call->error);
  lcpsim__v1__reply__init(&call->reply);
  lcpsim__v1__status__init(&call->status);
}

const char *lcpd_call_name(const lcpd_call_t *call) {
  if (!call->request)
    return "undecodable";
  const ProtobufCFieldDescriptor *field = protobuf_c_message_descriptor_get_field(
      &lcpsim__v1__request__descriptor, (unsigned)call->request->call_case);
  return field ? field->name : "unknown call";
}

/* The reply to a request that failed: call->error as its status. */
static void reply_error(lcpd_call_t *call) {
  /* Whatever filled the message (the engine's, a loader's), the reply
   * carries UTF-8 only. */
  lcpd_utf8_repair(call->error.message);
  call->reply.result_case = LCPSIM__V1__REPLY__RESULT__NOT_SET;
  call->packed_count = 0;
  call->status.code =
      call->world_restored ? LCPSIM__V1__STATUS__CODE__INTERNAL : lcpd_code_of(call->error.code);
  call->status.message = call->error.message;
  call->status.world_restored = call->world_restored;
}

/* An allocation from the call's arena was refused, which filled call->error
 * ("more than the N bytes of memory allowed"): the message names the call
 * and that the world is as before the request. */
static int call_out_of_memory(lcpd_call_t *call) {
  char why[sizeof call->error.message];
  snprintf(why, sizeof why, "%s", call->error.message);
  return lcpd_fail(&call->error, LCP_ERR_NO_MEMORY,
                   "%s: the call needs %s for its reply and its working memory; the world is "
                   "as before the request",
                   lcpd_call_name(call), why);
}

/* lcpd_plan_target in the call's arena, its running out of memory said as
 * the call's. */
static int plan_target(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__SetTargetRequest *t,
                       const char *field, const lcpd_target_plan **latest, lcpd_target_plan *plan,
                       lcpd_error_t *error) {
  int rc = lcpd_plan_target(&call->reply_arena, sim, t, field, latest, plan, error);
  return rc == LCP_ERR_NO_MEMORY ? call_out_of_memory(call) : rc;
}

static void reply_ok(lcpd_call_t *call, Lcpsim__V1__Reply__ResultCase result_case, void *result) {
  call->status.code = LCPSIM__V1__STATUS__CODE__OK;
  call->status.message = (char *)"";
  call->reply.result_case = result_case;
  /* Every member of the result oneof is a message pointer in the same place. */
  call->reply.ping = result;
}

/* An empty result message of the given type in the reply's arena (NULL
 * when refused), made before the call changes the world so that nothing
 * can fail after it has. */
static void *new_empty_reply(lcpd_call_t *call, const ProtobufCMessageDescriptor *descriptor) {
  ProtobufCMessage *out = lcpd_arena_alloc(&call->reply_arena, descriptor->sizeof_message);
  if (out)
    descriptor->message_init(out);
  return out;
}

/* ---- names ---- */

static int check_name(const char *name, const char *field, lcpd_error_t *error) {
  if (strlen(name) >= LCP_NAME_MAX)
    return lcpd_fail(error, BAD, "%s is longer than %d bytes", field, LCP_NAME_MAX - 1);
  return LCP_OK;
}

/* ---- the calls ---- */

/* Every handler returns LCP_OK with call->reply ready (a Step that goes on
 * sets call->stepping), or a negative lcp_status_t with call->error filled
 * (`error` is &call->error). */

static int handle_ping(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__PingRequest *req,
                       lcpd_error_t *error) {
  (void)sim;
  (void)error;
  Lcpsim__V1__PingReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__PingReply);
  if (!out)
    return call_out_of_memory(call);
  lcpsim__v1__ping_reply__init(out);
  out->payload = req->payload; /* the request outlives the packing of its reply */
  out->server_version = (char *)LCPD_SERVER_VERSION;
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_PING, out);
  return LCP_OK;
}

static int handle_get_info(lcpd_call_t *call, lcpd_sim_t *sim,
                           const Lcpsim__V1__GetInfoRequest *req, lcpd_error_t *error) {
  (void)req;
  (void)error;
  Lcpsim__V1__GetInfoReply *out = lcpd_new_info_reply(&call->reply_arena, sim);
  if (!out)
    return call_out_of_memory(call);
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_GET_INFO, out);
  return LCP_OK;
}

static int handle_get_scene(lcpd_call_t *call, lcpd_sim_t *sim,
                            const Lcpsim__V1__GetSceneRequest *req, lcpd_error_t *error) {
  (void)req;
  Lcpsim__V1__GetSceneReply *out = lcpd_new_scene_reply(&call->reply_arena, sim, error);
  if (!out)
    return error->code == LCP_ERR_NO_MEMORY ? call_out_of_memory(call) : error->code;
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_GET_SCENE, out);
  return LCP_OK;
}

static int handle_set_target(lcpd_call_t *call, lcpd_sim_t *sim,
                             const Lcpsim__V1__SetTargetRequest *req, lcpd_error_t *error) {
  lcpd_target_plan plan;
  int rc = plan_target(call, sim, req, "set_target", NULL, &plan, error);
  if (rc != LCP_OK)
    return rc;
  /* The reply first: nothing may fail once the world has changed. */
  void *out = new_empty_reply(call, &lcpsim__v1__set_target_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  /* One robot: lcp_robot_set_controls is all or nothing, and gravity
   * compensation cannot fail once the robot is known. */
  if ((rc = lcpd_apply_target_plans(sim, &plan, 1, error)) != LCP_OK)
    return rc;
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_SET_TARGET, out);
  return LCP_OK;
}

/* The undo buffer is kept for the next request (no allocation per Step). */
static void drop_undo(lcpd_call_t *call) { call->undo_size = 0; }

/* The world could not be put back as it was before a failed request (why):
 * serving it as the request left it would break the promise that a failed
 * request changes nothing, so it is rebuilt from the start-up scene, the
 * last state known good, and the reply says so (INTERNAL, with
 * Status.world_restored set). */
static void world_lost(lcpd_call_t *call, lcpd_sim_t *sim, const char *why) {
  LCPD_ERROR("could not put the world back after a failed %s request (%s): restoring the "
             "start-up scene",
             lcpd_call_name(call), why);
  lcpd_error_t reset_error;
  char message[sizeof call->error.message];
  snprintf(message, sizeof message, "%s", call->error.message);
  if (lcpd_sim_reset(sim, &reset_error) == LCP_OK) {
    call->world_restored = true;
    lcpd_fail(&call->error, call->error.code,
              "%s; the world could not be put back as it was before the request (%s), so it "
              "was restored to the start-up scene at time %g",
              message, why, lcp_world_time(sim->live.world));
    LCPD_ERROR("the world was restored to the start-up scene at time %g",
               lcp_world_time(sim->live.world));
  } else {
    LCPD_ERROR("the start-up scene could not be rebuilt either: %s", reset_error.message);
    lcpd_fail(&call->error, LCP_ERR_STATE,
              "%s; the world could not be put back as it was before the request (%s), nor "
              "rebuilt from the start-up scene (%s): send Reset",
              message, why, reset_error.message);
  }
}

/* Puts the world back as it was before the request. */
static void undo(lcpd_call_t *call, lcpd_sim_t *sim) {
  if (!call->undo_size)
    return;
  lcpd_error_t error;
  int rc = (call->test_faults & LCPD_FAULT_UNDO)
               ? lcpd_fail(&error, LCP_ERR_NO_MEMORY, "a fault injected by the test")
               : lcpd_sim_undo_restore(sim, call->undo, call->undo_size, &error);
  if (rc == LCP_OK)
    sim->steps_since_publish = call->undo_steps_since_publish;
  else
    world_lost(call, sim, error.message);
  drop_undo(call);
}

/* The state for a reply, with the readings sensors asks for. The state
 * itself is finite and within the engine's bounds after every step; the
 * readings derived from it (accelerations, wrenches, energies, IMUs with
 * their biases and noise) are checked too, so that no reply carries a
 * number that is not finite: a reading that overflowed fails the call. */
static int new_state(lcpd_call_t *call, const lcpd_sim_t *sim, bool include_contacts,
                     const Lcpsim__V1__Sensors *sensors, const char *field,
                     Lcpsim__V1__State **out) {
  *out = lcpd_new_state_sensed(&call->reply_arena, sim, include_contacts, sensors, 0);
  if (!*out)
    return call_out_of_memory(call);
  char path[256];
  if (sensors && lcpd_check_values(&(*out)->base, path, sizeof path) != LCPD_VALUES_OK)
    return lcpd_fail(&call->error, LCP_ERR_NUMERIC,
                     "%s.%s would not be a finite number (a sensor's reading overflowed)", field,
                     path);
  return LCP_OK;
}

/* The reply of a Step that has run all its steps. */
static int finish_step(lcpd_call_t *call, lcpd_sim_t *sim) {
  const Lcpsim__V1__StepRequest *req = call->request->step;
  Lcpsim__V1__StepReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__StepReply);
  if (!out)
    return call_out_of_memory(call);
  lcpsim__v1__step_reply__init(out);
  out->time = lcp_world_time(sim->live.world);
  out->step_count = lcp_world_step_count(sim->live.world);
  out->steps_run = call->steps_done;
  out->cancelled = call->cancelled;
  int rc = req->return_state ? new_state(call, sim, req->include_contacts, req->sensors,
                                         "step.state", &out->state)
                             : LCP_OK;
  if (rc != LCP_OK)
    return rc;
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_STEP, out);
  return LCP_OK;
}

/* The reply of a Step that is over, or, when it cannot be made, the world
 * put back as before the request: the undo snapshot is kept until then. */
static int finish_step_or_undo(lcpd_call_t *call, lcpd_sim_t *sim) {
  int rc = finish_step(call, sim);
  if (rc == LCP_OK)
    drop_undo(call);
  else
    undo(call, sim);
  return rc;
}

/* Runs steps for one slice. Returns LCP_OK with call->stepping still set
 * when steps remain; otherwise the Step is over, with its reply or its
 * error. */
static int step_slice(lcpd_call_t *call, lcpd_sim_t *sim) {
  uint64_t deadline = now_ns() + call->slice_ns;
  while (call->steps_done < call->steps_total) {
    int rc = (call->test_faults & LCPD_FAULT_STEP) && call->steps_done + 1 == call->steps_total
                 ? lcpd_fail(&call->error, LCP_ERR_NUMERIC, "a fault injected by the test")
                 : lcpd_sim_step(sim, &call->error);
    if (rc != LCP_OK) {
      lcpd_error_t failed = call->error;
      call->stepping = false;
      undo(call, sim);
      if (!call->world_restored)
        lcpd_fail(&call->error, failed.code,
                  "%s (step %d of %d of this request; the world is as before the request)",
                  failed.message, call->steps_done + 1, call->steps_total);
      return call->error.code;
    }
    call->steps_done++;
    if (call->steps_done < call->steps_total && now_ns() >= deadline)
      return LCP_OK;
  }
  call->stepping = false;
  return finish_step_or_undo(call, sim);
}

static int handle_step(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__StepRequest *req,
                       lcpd_error_t *error) {
  if (req->steps < 0)
    return lcpd_fail(error, BAD, "step.steps must be >= 0 (got %d)", req->steps);
  if (req->steps > call->max_steps)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY,
                     "step.steps = %d is more than the %d steps one request may run (the "
                     "daemon's --max-steps-per-request); send several Steps, or start lcpsimd "
                     "with a larger --max-steps-per-request",
                     req->steps, call->max_steps);
  if (req->steps > 0 && sim->mode == LCPD_MODE_REALTIME)
    return lcpd_fail(error, LCP_ERR_STATE,
                     "step.steps must be 0 in realtime mode (the daemon steps by itself; "
                     "set the mode to lockstep to step)");
  lcpd_target_plan *plans = lcpd_arena_array(&call->reply_arena, req->n_targets, sizeof *plans);
  const lcpd_target_plan **latest = NULL;
  if (req->n_targets && !(latest = lcpd_arena_array(&call->reply_arena,
                                                    (size_t)sim->live.robot_count, sizeof *latest)))
    return call_out_of_memory(call);
  if (!plans)
    return call_out_of_memory(call);
  for (size_t i = 0; i < req->n_targets; ++i) {
    if (plan_target(call, sim, req->targets[i], "", latest, &plans[i], error) == LCP_OK)
      continue;
    /* The field's name is formatted only for the error (it costs more than
     * the rest of a control tick's planning): plan again to say it. A failed
     * plan left its robot's slot alone, so the second one sees the same. */
    char field[48];
    snprintf(field, sizeof field, "step.targets[%zu]", i);
    plan_target(call, sim, req->targets[i], field, latest, &plans[i], error);
    return error->code;
  }
  /* A Step of no steps and no targets changes nothing: nothing to undo. */
  int rc = LCP_OK;
  if (req->steps > 0 || req->n_targets > 0) {
    rc = lcpd_sim_undo_save(sim, &call->undo, &call->undo_capacity, &call->undo_size, error);
    if (rc != LCP_OK)
      return lcpd_error_prefix(error, "step: cannot keep the world to undo a failed step: ");
    call->undo_steps_since_publish = sim->steps_since_publish;
  }
  rc = lcpd_apply_target_plans(sim, plans, (int32_t)req->n_targets, error);
  if (rc != LCP_OK) {
    undo(call, sim);
    return rc;
  }
  call->stepping = true;
  call->cancelled = false;
  call->steps_done = 0;
  call->steps_total = req->steps;
  return step_slice(call, sim);
}

static int handle_get_state(lcpd_call_t *call, lcpd_sim_t *sim,
                            const Lcpsim__V1__GetStateRequest *req, lcpd_error_t *error) {
  (void)error;
  Lcpsim__V1__GetStateReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__GetStateReply);
  if (!out)
    return call_out_of_memory(call);
  lcpsim__v1__get_state_reply__init(out);
  int rc =
      new_state(call, sim, req->include_contacts, req->sensors, "get_state.state", &out->state);
  if (rc != LCP_OK)
    return rc;
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_GET_STATE, out);
  return LCP_OK;
}

static void log_urdf_warning(void *user, lcp_log_level_t level, const char *message) {
  (void)user;
  lcpd_log(level <= LCP_LOG_WARNING ? LCPD_LOG_WARNING : LCPD_LOG_DEBUG, "load_model: %s", message);
}

static bool sim_name_taken(const void *sim, const char *name) {
  return lcpd_sim_name_taken(sim, name);
}

/* While a LoadModel runs, SIGINT and SIGTERM are held back (blocked, so they
 * stay pending); the loader polls for them and stops, so that the daemon
 * exits promptly however large the load, once they are let through. */
static bool exit_requested(void *user) {
  (void)user;
  sigset_t pending;
  return sigpending(&pending) == 0 &&
         (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

static int handle_load_model(lcpd_call_t *call, lcpd_sim_t *sim,
                             const Lcpsim__V1__LoadModelRequest *req, lcpd_error_t *error) {
  int rc = check_name(req->name, "load_model.name", error);
  if (rc != LCP_OK)
    return rc;
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.log = log_urdf_warning;
  switch (req->base_type) {
  case LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_DEFAULT:
    options.floating_base = -1;
    break;
  case LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FIXED:
    options.floating_base = 0;
    break;
  case LCPSIM__V1__LOAD_MODEL_REQUEST__BASE__BASE_FLOATING:
    options.floating_base = 1;
    break;
  default:
    return lcpd_fail(error, BAD, "load_model.base_type = %d is not a LoadModelRequest.Base",
                     (int)req->base_type);
  }
  double position[3], orientation[4];
  rc = lcpd_read_pose(req->base_pose, position, orientation, "load_model.base_pose", error);
  if (rc != LCP_OK)
    return rc;
  /* The request's packages and package paths first, then the daemon's. */
  size_t package_count = req->n_packages + (size_t)sim->package_count;
  size_t path_count = req->n_package_paths + (size_t)sim->package_path_count;
  lcp_urdf_package_t *packages =
      lcpd_arena_array(&call->reply_arena, package_count, sizeof *packages);
  const char **paths = lcpd_arena_array(&call->reply_arena, path_count, sizeof *paths);
  if ((package_count && !packages) || (path_count && !paths))
    return call_out_of_memory(call);
  for (size_t i = 0; i < req->n_packages; ++i) {
    if (!req->packages[i]->key[0] || !req->packages[i]->value[0])
      return lcpd_fail(error, BAD, "load_model.packages: entry %zu needs a name and a directory",
                       i);
    packages[i] = (lcp_urdf_package_t){req->packages[i]->key, req->packages[i]->value};
  }
  for (int32_t i = 0; i < sim->package_count; ++i)
    packages[req->n_packages + (size_t)i] = sim->packages[i];
  for (size_t i = 0; i < req->n_package_paths; ++i)
    paths[i] = req->package_paths[i];
  for (int32_t i = 0; i < sim->package_path_count; ++i)
    paths[req->n_package_paths + (size_t)i] = sim->package_paths[i];
  options.packages = packages;
  options.package_count = (int32_t)package_count;
  options.package_paths = paths;
  options.package_path_count = (int32_t)path_count;
  /* The files of a remote request are confined to the model roots, read by
   * the file rules and never quoted (lcpsim/urdf.h, lcp_file_read). */
  options.files = (lcp_file_rules_t){sim->model_roots, sim->model_root_count, true};
  /* Bounds the time one LoadModel may take, hulls included, so that the
   * daemon stays responsive (and honours SIGTERM) while it loads. */
  options.max_total_mesh_bytes = LCPD_MAX_LOAD_MODEL_MESH_BYTES;
  options.max_mesh_files = LCPD_MAX_LOAD_MODEL_MESH_FILES;
  options.interrupted = exit_requested;
  if (req->source_case != LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH &&
      req->source_case != LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT)
    return lcpd_fail(error, BAD, "load_model needs urdf_path or urdf_text");
  lcp_robot_def_t *def = NULL;
  char why[sizeof error->message] = "";
  sigset_t exit_signals, previous;
  sigemptyset(&exit_signals);
  sigaddset(&exit_signals, SIGINT);
  sigaddset(&exit_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &exit_signals, &previous);
  if (req->source_case == LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH)
    rc = lcp_urdf_load_file(req->urdf_path, &options, &def, why, sizeof why);
  else
    rc = lcp_urdf_load_string(req->urdf_text, NULL, &options, &def, why, sizeof why);
  /* Asked to exit meanwhile: not worth building the robot's hulls. */
  if (rc == LCP_OK && exit_requested(NULL)) {
    lcp_robot_def_free(&def);
    rc = LCP_ERR_STATE;
    snprintf(why, sizeof why, "interrupted: the daemon is exiting");
  }
  pthread_sigmask(SIG_SETMASK, &previous, NULL); /* a held signal is handled now */
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "load_model: %s", why);
  /* A URDF loaded twice gets a free name of its own (quadruped_2); a name the
   * client chose is never changed, but a taken one is refused with a free one
   * suggested. */
  char free_name[LCP_NAME_MAX];
  if (req->name[0]) {
    if (lcpd_sim_name_taken(sim, req->name)) {
      bool found = lcpd_unique_name(req->name, sim_name_taken, sim, free_name);
      lcp_robot_def_free(&def);
      return lcpd_fail(error, BAD,
                       "load_model.name: the name '%s' is taken by another robot or "
                       "body%s%s%s",
                       req->name, found ? " (a free one: '" : "", found ? free_name : "",
                       found ? "')" : "");
    }
    snprintf(def->name, sizeof def->name, "%s", req->name);
  } else if (lcpd_unique_name(def->name, sim_name_taken, sim, free_name)) {
    snprintf(def->name, sizeof def->name, "%s", free_name);
  }
  def->self_collision = req->self_collision;
  lcpd_robot_t *robot = NULL;
  rc = lcpd_sim_add_robot(sim, def, position, orientation, &robot, error);
  lcp_robot_def_free(&def);
  if (rc != LCP_OK)
    return lcpd_error_prefix(error, "load_model: ");
  LCPD_INFO("loaded robot '%s' (%d links)", robot->name, robot->link_count);
  Lcpsim__V1__LoadModelReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__LoadModelReply);
  if (out) {
    lcpsim__v1__load_model_reply__init(out);
    out->robot = lcpd_new_robot_info(&call->reply_arena, sim, robot);
  }
  if (!out || !out->robot) {
    /* A failed request leaves the world as it was: the robot goes again. */
    lcpd_sim_remove(sim, robot->name, NULL);
    return call_out_of_memory(call);
  }
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL, out);
  return LCP_OK;
}

static int handle_spawn(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__SpawnRequest *req,
                        lcpd_error_t *error) {
  int rc = check_name(req->name, "spawn.name", error);
  if (rc != LCP_OK)
    return rc;
  lcpd_body_spec_t spec = lcpd_body_spec_default();
  snprintf(spec.name, sizeof spec.name, "%s", req->name);
  if ((rc = lcpd_read_shape(req->shape, &spec.shape, error)) != LCP_OK ||
      (rc = lcpd_read_pose(req->pose, spec.position, spec.orientation, "spawn.pose", error)) !=
          LCP_OK)
    return rc;
  if (req->twist) {
    lcpd_read_vec3(req->twist->linear, spec.linear_velocity);
    lcpd_read_vec3(req->twist->angular, spec.angular_velocity);
  }
  spec.is_static = req->is_static;
  spec.mass = req->mass;
  /* proto3 cannot tell an unset friction from 0: unset is the default. */
  if (req->friction != 0.0)
    spec.friction = req->friction;
  /* Here 0, unset, is also the default: no restitution. */
  spec.restitution = req->restitution;
  if (spec.name[0] && lcpd_sim_name_taken(sim, spec.name))
    return lcpd_fail(error, BAD, "spawn.name: the name '%s' is taken by another robot or body",
                     LCPD_QUOTE(spec.name));
  /* Checked here to name the request's fields (lcpd_sim_add_body checks
   * again, naming the body). */
  if ((rc = lcpd_body_spec_validate(&spec, "spawn.", error)) != LCP_OK)
    return rc;
  /* The reply first (the name has room for any made-up one). */
  Lcpsim__V1__SpawnReply *out = new_empty_reply(call, &lcpsim__v1__spawn_reply__descriptor);
  char *name = lcpd_arena_alloc(&call->reply_arena, LCP_NAME_MAX);
  if (!out || !name)
    return call_out_of_memory(call);
  lcpd_body_t *body = NULL;
  if (lcpd_sim_add_body(sim, &spec, &body, error) != LCP_OK)
    return lcpd_error_prefix(error, "spawn: ");
  out->id = (uint32_t)body->id;
  snprintf(name, LCP_NAME_MAX, "%s", body->name);
  out->name = name;
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_SPAWN, out);
  return LCP_OK;
}

static int handle_remove(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__RemoveRequest *req,
                         lcpd_error_t *error) {
  void *out = new_empty_reply(call, &lcpsim__v1__remove_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  if (lcpd_sim_remove(sim, req->name, error) != LCP_OK)
    return lcpd_error_prefix(error, "remove.name: ");
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_REMOVE, out);
  return LCP_OK;
}

static int handle_reset(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__ResetRequest *req,
                        lcpd_error_t *error) {
  (void)req;
  void *out = new_empty_reply(call, &lcpsim__v1__reset_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  if (lcpd_sim_reset(sim, error) != LCP_OK)
    return lcpd_error_prefix(error, "reset: ");
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_RESET, out);
  return LCP_OK;
}

static int handle_save_state(lcpd_call_t *call, lcpd_sim_t *sim,
                             const Lcpsim__V1__SaveStateRequest *req, lcpd_error_t *error) {
  int rc = check_name(req->slot, "save_state.slot", error);
  if (rc != LCP_OK)
    return rc;
  /* Written straight into the reply's arena. */
  size_t size = lcpd_sim_snapshot_size(sim);
  unsigned char *data = lcpd_arena_alloc(&call->reply_arena, size);
  Lcpsim__V1__SaveStateReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__SaveStateReply);
  if (!data || !out)
    return call_out_of_memory(call);
  if (lcpd_sim_snapshot_write(sim, data, size, error) != LCP_OK)
    return lcpd_error_prefix(error, "save_state: ");
  if (req->slot[0] && lcpd_sim_slot_put(sim, req->slot, data, size, error) != LCP_OK)
    return lcpd_error_prefix(error, "save_state.slot: ");
  lcpsim__v1__save_state_reply__init(out);
  out->snapshot.data = data;
  out->snapshot.len = size;
  out->time = lcp_world_time(sim->live.world);
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_SAVE_STATE, out);
  return LCP_OK;
}

static int handle_restore_state(lcpd_call_t *call, lcpd_sim_t *sim,
                                const Lcpsim__V1__RestoreStateRequest *req, lcpd_error_t *error) {
  const unsigned char *data;
  size_t size;
  const char *field;
  if (req->source_case == LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT) {
    data = req->snapshot.data;
    size = req->snapshot.len;
    field = "restore_state.snapshot";
  } else if (req->source_case == LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT) {
    const lcpd_slot_t *slot = lcpd_sim_slot_get(sim, req->slot);
    if (!slot)
      return lcpd_fail(error, LCP_ERR_NOT_FOUND, "restore_state.slot: no snapshot slot named '%s'",
                       LCPD_QUOTE(req->slot));
    data = slot->data;
    size = slot->size;
    field = "restore_state.slot";
  } else {
    return lcpd_fail(error, BAD, "restore_state needs a snapshot or a slot");
  }
  Lcpsim__V1__RestoreStateReply *out =
      new_empty_reply(call, &lcpsim__v1__restore_state_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  if (lcpd_sim_restore(sim, data, size, error) != LCP_OK)
    return lcpd_error_prefix(error, "%s: ", field);
  out->time = lcp_world_time(sim->live.world);
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_RESTORE_STATE, out);
  return LCP_OK;
}

static int handle_set_settings(lcpd_call_t *call, lcpd_sim_t *sim,
                               const Lcpsim__V1__SetSettingsRequest *req, lcpd_error_t *error) {
  lcp_world_settings_t s;
  lcp_world_get_settings(sim->live.world, &s);
  lcpd_mode_t mode = sim->mode;
  double rate = sim->rate;
  if (req->timestep_value_case == LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP)
    s.timestep = req->timestep;
  if (req->gravity)
    lcpd_read_vec3(req->gravity, s.gravity);
  if (req->iterations_value_case == LCPSIM__V1__SET_SETTINGS_REQUEST__ITERATIONS_VALUE_ITERATIONS)
    s.iterations = req->iterations;
  if (req->sor_omega_value_case == LCPSIM__V1__SET_SETTINGS_REQUEST__SOR_OMEGA_VALUE_SOR_OMEGA)
    s.sor_omega = req->sor_omega;
  if (req->friction_model_value_case ==
      LCPSIM__V1__SET_SETTINGS_REQUEST__FRICTION_MODEL_VALUE_FRICTION_MODEL) {
    if (req->friction_model == LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_CONE)
      s.friction_model = LCP_FRICTION_CONE;
    else if (req->friction_model == LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_BOX)
      s.friction_model = LCP_FRICTION_BOX;
    else
      return lcpd_fail(error, BAD, "set_settings.friction_model = %d is not a FrictionModel",
                       (int)req->friction_model);
  }
  if (req->mode_value_case == LCPSIM__V1__SET_SETTINGS_REQUEST__MODE_VALUE_MODE) {
    if (req->mode == LCPSIM__V1__SETTINGS__MODE__MODE_LOCKSTEP)
      mode = LCPD_MODE_LOCKSTEP;
    else if (req->mode == LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME && sim->world_name)
      return lcpd_fail(error, LCP_ERR_STATE,
                       "set_settings.mode: realtime mode is for the default world only; world "
                       "'%s' steps when a client sends Step or BatchStep",
                       sim->world_name);
    else if (req->mode == LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME)
      mode = LCPD_MODE_REALTIME;
    else
      return lcpd_fail(error, BAD, "set_settings.mode = %d is not a Settings.Mode", (int)req->mode);
  }
  if (req->rate_value_case == LCPSIM__V1__SET_SETTINGS_REQUEST__RATE_VALUE_RATE)
    rate = req->rate;
  if (req->max_push_speed_value_case ==
      LCPSIM__V1__SET_SETTINGS_REQUEST__MAX_PUSH_SPEED_VALUE_MAX_PUSH_SPEED)
    s.max_push_speed = req->max_push_speed;
  if (req->relax_iterations_value_case ==
      LCPSIM__V1__SET_SETTINGS_REQUEST__RELAX_ITERATIONS_VALUE_RELAX_ITERATIONS)
    s.relax_iterations = req->relax_iterations;
  if (req->restitution_threshold_value_case ==
      LCPSIM__V1__SET_SETTINGS_REQUEST__RESTITUTION_THRESHOLD_VALUE_RESTITUTION_THRESHOLD)
    s.restitution_threshold = req->restitution_threshold;
  if (req->enforce_velocity_limits_value_case ==
      LCPSIM__V1__SET_SETTINGS_REQUEST__ENFORCE_VELOCITY_LIMITS_VALUE_ENFORCE_VELOCITY_LIMITS)
    s.enforce_velocity_limits = req->enforce_velocity_limits;
  /* The message starts with the setting's name, the request's field's. */
  if (lcpd_settings_validate(&s, rate, error) != LCP_OK)
    return lcpd_error_prefix(error, "set_settings.");
  Lcpsim__V1__SetSettingsReply *out =
      new_empty_reply(call, &lcpsim__v1__set_settings_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  lcp_world_settings_t before;
  lcp_world_get_settings(sim->live.world, &before);
  const lcpd_mode_t mode_before = sim->mode;
  const double rate_before = sim->rate;
  int rc = lcp_world_set_settings(sim->live.world, &s);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "set_settings: %s", lcp_world_last_error(sim->live.world));
  sim->mode = mode;
  sim->rate = rate;
  if (!(out->settings = lcpd_new_settings(&call->reply_arena, sim))) {
    /* Settings that were valid a moment ago are valid again. */
    lcp_world_set_settings(sim->live.world, &before);
    sim->mode = mode_before;
    sim->rate = rate_before;
    return call_out_of_memory(call);
  }
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS, out);
  return LCP_OK;
}

static int handle_subscribe(lcpd_call_t *call, lcpd_sim_t *sim,
                            const Lcpsim__V1__SubscribeRequest *req, lcpd_error_t *error) {
  (void)error;
  void *out = new_empty_reply(call, &lcpsim__v1__subscribe_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  sim->publish_every = req->every_steps;
  sim->publish_contacts = req->include_contacts;
  sim->publish_sensors = lcpd_sensors_bits(req->sensors);
  sim->steps_since_publish = 0;
  LCPD_INFO("state stream: %s", req->every_steps ? "on" : "off");
  if (req->every_steps)
    LCPD_INFO("state stream: every %u steps%s", req->every_steps,
              req->include_contacts ? ", with contacts" : "");
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE, out);
  return LCP_OK;
}

/* An IMU site on a robot's link, as the scene file's <imu>. */
static int handle_add_imu(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__AddImuRequest *req,
                          lcpd_error_t *error) {
  lcpd_imu_spec_t spec = {.orientation = {1, 0, 0, 0}};
  int rc = check_name(req->name, "add_imu.name", error);
  if (rc == LCP_OK && (!req->name || req->name[0] == '\0'))
    rc = lcpd_fail(error, BAD, "add_imu.name: an imu needs a name");
  if (rc == LCP_OK)
    rc = lcpd_read_pose(req->pose, spec.position, spec.orientation, "add_imu.pose", error);
  if (rc != LCP_OK)
    return rc;
  snprintf(spec.name, sizeof spec.name, "%s", req->name);
  snprintf(spec.robot, sizeof spec.robot, "%s", req->robot ? req->robot : "");
  snprintf(spec.link, sizeof spec.link, "%s", req->link ? req->link : "");
  spec.accel_noise = req->accel_noise;
  spec.gyro_noise = req->gyro_noise;
  lcpd_read_vec3(req->accel_bias, spec.accel_bias);
  lcpd_read_vec3(req->gyro_bias, spec.gyro_bias);
  spec.seed = req->seed;
  void *out = new_empty_reply(call, &lcpsim__v1__add_imu_reply__descriptor);
  if (!out)
    return call_out_of_memory(call);
  if (lcpd_sim_add_imu(sim, &spec, error) != LCP_OK)
    return lcpd_error_prefix(error, "add_imu: ");
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_ADD_IMU, out);
  return LCP_OK;
}

/* A CancelStep served in turn finds no Step running: a Step runs alone and
 * the server answers a CancelStep sent during one at once, through
 * lcpd_call_reply_cancel. */
static int handle_cancel_step(lcpd_call_t *call, lcpd_sim_t *sim,
                              const Lcpsim__V1__CancelStepRequest *req, lcpd_error_t *error) {
  (void)sim;
  (void)req;
  (void)error;
  lcpd_call_reply_cancel(call, NULL);
  return call->status.code == LCPSIM__V1__STATUS__CODE__OK ? LCP_OK : call->error.code;
}

void lcpd_call_reply_cancel(lcpd_call_t *call, const lcpd_call_t *stepped) {
  Lcpsim__V1__CancelStepReply *out = LCPD_NEW(&call->reply_arena, Lcpsim__V1__CancelStepReply);
  if (!out) {
    call_out_of_memory(call);
    reply_error(call);
    return;
  }
  lcpsim__v1__cancel_step_reply__init(out);
  if (stepped) {
    out->cancelled = true;
    out->step_id = stepped->request->id;
    out->steps_run = stepped->steps_done;
    out->steps_requested = stepped->steps_total;
  }
  reply_ok(call, LCPSIM__V1__REPLY__RESULT_CANCEL_STEP, out);
}

void lcpd_call_cancel_step(lcpd_call_t *call, lcpd_sim_t *sim) {
  if (!call->stepping)
    return;
  call->stepping = false;
  call->cancelled = true;
  LCPD_INFO("request %llu (step) cancelled after %d of %d steps",
            (unsigned long long)call->request->id, call->steps_done, call->steps_total);
  if (finish_step_or_undo(call, sim) != LCP_OK)
    reply_error(call);
}

bool lcpd_call_is_free(const lcpd_call_t *call) {
  return call->request && (call->request->call_case == LCPSIM__V1__REQUEST__CALL_PING ||
                           call->request->call_case == LCPSIM__V1__REQUEST__CALL_GET_INFO);
}

bool lcpd_call_mutates(const lcpd_call_t *call) {
  if (!call->request)
    return false;
  /* Listed by what may be read, so that a call added later is refused to
   * observers until it is known to change nothing. */
  switch (call->request->call_case) {
  case LCPSIM__V1__REQUEST__CALL_PING:
  case LCPSIM__V1__REQUEST__CALL_GET_INFO:
  case LCPSIM__V1__REQUEST__CALL_GET_STATE:
  case LCPSIM__V1__REQUEST__CALL_GET_SCENE:
  case LCPSIM__V1__REQUEST__CALL_LIST_WORLDS:
  case LCPSIM__V1__REQUEST__CALL__NOT_SET: /* refused as unknown by dispatch */
    return false;
  default:
    return true;
  }
}

bool lcpd_call_is_cancel(const lcpd_call_t *call, uint64_t *step_id) {
  if (!call->request || call->request->call_case != LCPSIM__V1__REQUEST__CALL_CANCEL_STEP)
    return false;
  *step_id = call->request->cancel_step->step_id;
  return true;
}

/* ---- decoding and dispatch ---- */

/* The reply of a call served in handlers_state.c: its result, or its error
 * (an arena's refusal reported as call_out_of_memory does). */
static int state_call_reply(lcpd_call_t *call, Lcpsim__V1__Reply__ResultCase result_case, int rc,
                            void *result) {
  if (rc == LCP_ERR_NO_MEMORY)
    return call_out_of_memory(call);
  if (rc == LCP_OK)
    reply_ok(call, result_case, result);
  return rc;
}

/* Serves the decoded request. Returns true when the reply is ready. */
static bool dispatch(lcpd_call_t *call, lcpd_sim_t *sim) {
  const Lcpsim__V1__Request *r = call->request;
  lcpd_error_t *error = &call->error;
  void *result = NULL;
  int rc;
  switch (r->call_case) {
  case LCPSIM__V1__REQUEST__CALL_PING:
    rc = handle_ping(call, sim, r->ping, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_GET_INFO:
    rc = handle_get_info(call, sim, r->get_info, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_STEP:
    rc = handle_step(call, sim, r->step, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_SET_TARGET:
    rc = handle_set_target(call, sim, r->set_target, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_GET_STATE:
    rc = handle_get_state(call, sim, r->get_state, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_LOAD_MODEL:
    rc = handle_load_model(call, sim, r->load_model, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_SPAWN:
    rc = handle_spawn(call, sim, r->spawn, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_REMOVE:
    rc = handle_remove(call, sim, r->remove, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_RESET:
    rc = handle_reset(call, sim, r->reset, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_SAVE_STATE:
    rc = handle_save_state(call, sim, r->save_state, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_RESTORE_STATE:
    rc = handle_restore_state(call, sim, r->restore_state, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_SET_SETTINGS:
    rc = handle_set_settings(call, sim, r->set_settings, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_SUBSCRIBE:
    rc = handle_subscribe(call, sim, r->subscribe, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_ADD_IMU:
    rc = handle_add_imu(call, sim, r->add_imu, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE:
    rc = lcpd_set_robot_state(sim, &call->reply_arena, r->set_robot_state, &result, error);
    rc = state_call_reply(call, LCPSIM__V1__REPLY__RESULT_SET_ROBOT_STATE, rc, result);
    break;
  case LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE:
    rc = lcpd_set_body_state(sim, &call->reply_arena, r->set_body_state, &result, error);
    rc = state_call_reply(call, LCPSIM__V1__REPLY__RESULT_SET_BODY_STATE, rc, result);
    break;
  case LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH:
    rc = lcpd_apply_wrench(sim, &call->reply_arena, r->apply_wrench, &result, error);
    rc = state_call_reply(call, LCPSIM__V1__REPLY__RESULT_APPLY_WRENCH, rc, result);
    break;
  case LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS:
    rc = lcpd_set_dynamics(sim, &call->reply_arena, r->set_dynamics, &result, error);
    rc = state_call_reply(call, LCPSIM__V1__REPLY__RESULT_SET_DYNAMICS, rc, result);
    break;
  case LCPSIM__V1__REQUEST__CALL_CANCEL_STEP:
    rc = handle_cancel_step(call, sim, r->cancel_step, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_GET_SCENE:
    rc = handle_get_scene(call, sim, r->get_scene, error);
    break;
  case LCPSIM__V1__REQUEST__CALL_RECORD:
    if (sim->world_name) {
      rc = lcpd_fail(error, LCP_ERR_STATE,
                     "record: the daemon records its default world only (this request names "
                     "world '%s')",
                     sim->world_name);
      break;
    }
    rc = lcpd_handle_record(sim, &call->reply_arena, r->record, &result, error);
    rc = state_call_reply(call, LCPSIM__V1__REPLY__RESULT_RECORD, rc, result);
    break;
  default:
    rc = lcpd_fail(error, BAD,
                   "unknown or missing call: the Request sets none of the calls this daemon "
                   "knows (field numbers 10 to 34)");
    break;
  }
  if (rc != LCP_OK) {
    reply_error(call);
    return true;
  }
  if (lcpd_call_mutates(call))
    sim->change_count++;
  return !call->stepping;
}

bool lcpd_call_start(lcpd_call_t *call, lcpd_sim_t *sim, const void *data, size_t size) {
  return !lcpd_call_decode(call, data, size) || dispatch(call, sim);
}

bool lcpd_call_serve(lcpd_call_t *call, lcpd_sim_t *sim) { return dispatch(call, sim); }

bool lcpd_call_decode(lcpd_call_t *call, const void *data, size_t size) {
  lcpsim__v1__reply__init(&call->reply);
  lcpsim__v1__status__init(&call->status);
  call->reply.status = &call->status;
  call->error = (lcpd_error_t){0};
  /* Its lists are counted first (a request this small cannot hold a list
   * too long). */
  uint64_t id;
  if (size > LCPD_MAX_LIST_ENTRIES &&
      !lcpd_request_lists_fit(&lcpsim__v1__request__descriptor, data, size, &id,
                              call->error.message, sizeof call->error.message)) {
    call->error.code = LCP_ERR_NO_MEMORY;
    reply_error(call);
    call->reply.id = id;
    return false;
  }
  /* In the request's arena, whose limit keeps a small message from
   * unpacking into a huge tree; a refusal fills call->error. */
  call->request = lcpsim__v1__request__unpack(&call->request_arena.allocator, size, data);
  if (!call->request) {
    if (call->error.code == LCP_ERR_NO_MEMORY)
      lcpd_error_prefix(&call->error, "decoding the request (%zu bytes) needs ", size);
    else
      lcpd_fail(&call->error, BAD,
                "the request (%zu bytes) does not decode as an lcpsim.v1.Request", size);
    reply_error(call);
    return false;
  }
  call->reply.id = call->request->id;
  /* Before any handler runs: every number finite, every string UTF-8
   * (names are quoted in replies, and a reply's strings must decode). */
  char path[256];
  lcpd_values_t bad = lcpd_check_values(&call->request->base, path, sizeof path);
  if (bad != LCPD_VALUES_OK) {
    lcpd_fail(&call->error, BAD,
              bad == LCPD_VALUE_NOT_FINITE ? "%s is not a finite number (NaN or infinite)"
                                           : "%s is not valid UTF-8 (every string must be)",
              path);
    reply_error(call);
    return false;
  }
  return true;
}

bool lcpd_call_resume(lcpd_call_t *call, lcpd_sim_t *sim) {
  if (step_slice(call, sim) != LCP_OK) {
    reply_error(call);
    return true;
  }
  return !call->stepping;
}

static size_t encode_varint(uint64_t value, uint8_t *out) {
  size_t n = 0;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out[n++] = byte | (value ? 0x80 : 0);
  } while (value);
  return n;
}

size_t lcpd_encode_field_header(uint32_t field, uint64_t length, uint8_t *out) {
  size_t n = encode_varint(((uint64_t)field << 3) | 2u, out);
  return n + encode_varint(length, out + n);
}

size_t lcpd_call_reply_size(const lcpd_call_t *call) {
  size_t size = lcpsim__v1__reply__get_packed_size(&call->reply);
  if (call->packed_count) {
    uint8_t header[16];
    size +=
        lcpd_encode_field_header(call->packed_field, call->packed_size, header) + call->packed_size;
  }
  return size;
}

void lcpd_call_reply_write(const lcpd_call_t *call, void *buffer) {
  uint8_t *out = buffer;
  out += lcpsim__v1__reply__pack(&call->reply, out);
  if (!call->packed_count)
    return;
  /* The result after the Reply's other fields: a decoder takes fields in
   * any order. */
  out += lcpd_encode_field_header(call->packed_field, call->packed_size, out);
  for (size_t i = 0; i < call->packed_count; ++i) {
    memcpy(out, call->packed_parts[i].data, call->packed_parts[i].len);
    out += call->packed_parts[i].len;
  }
}

void lcpd_call_reply_packed(lcpd_call_t *call, uint32_t field, const ProtobufCBinaryData *parts,
                            size_t count) {
  call->status.code = LCPSIM__V1__STATUS__CODE__OK;
  call->status.message = (char *)"";
  call->reply.result_case = LCPSIM__V1__REPLY__RESULT__NOT_SET;
  call->packed_field = field;
  call->packed_parts = parts;
  call->packed_count = count;
  call->packed_size = 0;
  for (size_t i = 0; i < count; ++i)
    call->packed_size += parts[i].len;
  /* An empty message is still sent (with no parts, as one of length 0). */
  if (!count) {
    static const ProtobufCBinaryData none = {0, NULL};
    call->packed_parts = &none;
    call->packed_count = 1;
  }
}

void lcpd_call_reject(lcpd_call_t *call, int code, const char *message) {
  lcpsim__v1__reply__init(&call->reply);
  lcpsim__v1__status__init(&call->status);
  call->reply.status = &call->status;
  if (call->request)
    call->reply.id = call->request->id;
  lcpd_fail(&call->error, code, "%s", message);
  reply_error(call);
}

void lcpd_call_finish(lcpd_call_t *call) {
  /* The decoded request is in its arena's memory: freed whole. */
  call->request = NULL;
  call->packed_parts = NULL;
  call->packed_count = call->packed_size = 0;
  call->world_restored = false;
  lcpd_arena_reset(&call->request_arena);
  drop_undo(call);
  call->stepping = false;
  call->cancelled = false;
  lcpd_arena_reset(&call->reply_arena);
  lcpsim__v1__reply__init(&call->reply);
  lcpsim__v1__status__init(&call->status);
  call->error = (lcpd_error_t){0};
}

void lcpd_call_destroy(lcpd_call_t *call) {
  lcpd_call_finish(call);
  free(call->undo);
  call->undo = NULL;
  call->undo_capacity = 0;
  free(call->batch_undo);
  call->batch_undo = NULL;
  call->batch_undo_capacity = 0;
  lcpd_arena_destroy(&call->request_arena);
  lcpd_arena_destroy(&call->reply_arena);
}

void lcpd_call_reply_ok(lcpd_call_t *call, Lcpsim__V1__Reply__ResultCase result_case,
                        void *result) {
  reply_ok(call, result_case, result);
}

void lcpd_call_reply_error(lcpd_call_t *call) { reply_error(call); }

int lcpd_call_out_of_memory(lcpd_call_t *call) { return call_out_of_memory(call); }

int lcpd_call_restore_state(lcpd_call_t *call, lcpd_sim_t *sim,
                            const Lcpsim__V1__RestoreStateRequest *req) {
  return handle_restore_state(call, sim, req, &call->error);
}

int lcpd_call_step(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__StepRequest *req) {
  return handle_step(call, sim, req, &call->error);
}

int lcpd_call_step_slice(lcpd_call_t *call, lcpd_sim_t *sim) { return step_slice(call, sim); }

void lcpd_call_world_lost(lcpd_call_t *call, lcpd_sim_t *sim, const char *why) {
  world_lost(call, sim, why);
}
