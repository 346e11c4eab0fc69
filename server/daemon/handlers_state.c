/* SPDX-License-Identifier: Apache-2.0 */
#include "handlers_state.h"

#include "convert.h"

#include <stdio.h>
#include <string.h>

#define BAD LCP_ERR_INVALID_ARGUMENT

/* An empty reply message of the given type, in the arena. */
static int empty_result(lcpd_arena_t *arena, const ProtobufCMessageDescriptor *descriptor,
                        void **result) {
  ProtobufCMessage *out = lcpd_arena_alloc(arena, descriptor->sizeof_message);
  if (!out)
    return LCP_ERR_NO_MEMORY;
  descriptor->message_init(out);
  *result = out;
  return LCP_OK;
}

static const lcpd_body_t *find_body(lcpd_sim_t *sim, const char *name, const char *field,
                                    lcpd_error_t *error) {
  const lcpd_body_t *body = lcpd_sim_find_body(sim, name);
  if (!body)
    lcpd_fail(error, LCP_ERR_NOT_FOUND, "%s: no body named '%s'%s", field, LCPD_QUOTE(name),
              lcpd_sim_find_robot(sim, name) ? " (it is a robot)" : " (GetInfo lists them)");
  return body;
}

static int find_link(const lcpd_sim_t *sim, const lcpd_robot_t *robot, const char *name,
                     const char *field, int32_t *link, lcpd_error_t *error) {
  if (lcp_robot_find_link(sim->live.world, robot->id, name, link) != LCP_OK)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "%s: robot '%s' has no link named '%s'", field,
                     robot->name, LCPD_QUOTE(name));
  return LCP_OK;
}

/* ---- SetRobotState ---- */

int lcpd_set_robot_state(lcpd_sim_t *sim, lcpd_arena_t *arena,
                         const Lcpsim__V1__SetRobotStateRequest *req, void **result,
                         lcpd_error_t *error) {
  lcp_world_t *world = sim->live.world;
  const lcpd_robot_t *robot = lcpd_sim_robot_named(sim, req->robot, "set_robot_state.robot", error);
  if (!robot)
    return error->code;
  /* The reply first: nothing may fail once the world has changed. */
  int rc = empty_result(arena, &lcpsim__v1__set_robot_state_reply__descriptor, result);
  if (rc != LCP_OK)
    return rc;
  lcp_robot_info_t info;
  rc = lcp_robot_get_info(world, robot->id, &info);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "set_robot_state: %s", lcp_world_last_error(world));
  if (req->n_q && req->n_q != (size_t)info.nq)
    return lcpd_fail(error, BAD,
                     "set_robot_state.q has %zu values: robot '%s' needs %d (nq) or none", req->n_q,
                     robot->name, info.nq);
  if (req->n_qd && req->n_qd != (size_t)info.nv)
    return lcpd_fail(error, BAD,
                     "set_robot_state.qd has %zu values: robot '%s' needs %d (nv) or none",
                     req->n_qd, robot->name, info.nv);
  if (!info.floating_base && (req->base_pose || req->base_twist))
    return lcpd_fail(error, BAD, "set_robot_state.%s: robot '%s' has a fixed base",
                     req->base_pose ? "base_pose" : "base_twist", robot->name);
  double *q = lcpd_arena_array(arena, (size_t)info.nq, sizeof *q);
  double *qd = lcpd_arena_array(arena, (size_t)info.nv, sizeof *qd);
  bool *seen = lcpd_arena_array(arena, (size_t)info.joint_count + 1, sizeof *seen);
  if (!q || !qd || !seen)
    return LCP_ERR_NO_MEMORY;
  lcp_robot_get_q(world, robot->id, q, info.nq);
  lcp_robot_get_qd(world, robot->id, qd, info.nv);
  bool set_q = req->n_q > 0, set_qd = req->n_qd > 0;
  if (req->n_q)
    memcpy(q, req->q, req->n_q * sizeof *q);
  if (req->n_qd)
    memcpy(qd, req->qd, req->n_qd * sizeof *qd);
  if (req->base_pose) {
    if (req->n_q)
      return lcpd_fail(error, BAD, "set_robot_state: give q or base_pose, not both");
    if ((rc = lcpd_read_pose(req->base_pose, &q[0], &q[3], "set_robot_state.base_pose", error)) !=
        LCP_OK)
      return rc;
    set_q = true;
  }
  if (req->base_twist) {
    if (req->n_qd)
      return lcpd_fail(error, BAD, "set_robot_state: give qd or base_twist, not both");
    lcpd_read_vec3(req->base_twist->linear, &qd[0]);
    lcpd_read_vec3(req->base_twist->angular, &qd[3]);
    set_qd = true;
  }
  for (size_t k = 0; k < req->n_joints; ++k) {
    const Lcpsim__V1__JointState *j = req->joints[k];
    int32_t index;
    if (lcp_robot_find_joint(world, robot->id, j->name, &index) != LCP_OK)
      return lcpd_fail(error, LCP_ERR_NOT_FOUND,
                       "set_robot_state.joints[%zu].name: robot '%s' has no joint named '%s'", k,
                       robot->name, LCPD_QUOTE(j->name));
    if (seen[index])
      return lcpd_fail(error, BAD, "set_robot_state.joints[%zu]: joint '%s' is given twice", k,
                       LCPD_QUOTE(j->name));
    seen[index] = true;
    lcp_joint_info_t joint;
    lcp_robot_get_joint(world, robot->id, index, &joint);
    bool position = j->position_value_case == LCPSIM__V1__JOINT_STATE__POSITION_VALUE_POSITION;
    bool velocity = j->velocity_value_case == LCPSIM__V1__JOINT_STATE__VELOCITY_VALUE_VELOCITY;
    if ((position && req->n_q) || (velocity && req->n_qd))
      return lcpd_fail(
          error, BAD, "set_robot_state.joints[%zu]: give the full %s or joints' %s, not both", k,
          position && req->n_q ? "q" : "qd", position && req->n_q ? "positions" : "velocities");
    if (position)
      q[joint.q_index] = j->position;
    if (velocity)
      qd[joint.v_index] = j->velocity;
    set_q |= position;
    set_qd |= velocity;
  }
  if (set_q || set_qd) {
    rc = lcp_robot_set_state(world, robot->id, set_q ? q : NULL, set_q ? info.nq : 0,
                             set_qd ? qd : NULL, set_qd ? info.nv : 0);
    if (rc != LCP_OK)
      return lcpd_fail(error, rc, "set_robot_state: robot '%s': %s", robot->name,
                       lcp_world_last_error(world));
  }
  return LCP_OK;
}

/* ---- SetBodyState ---- */

static const lcpd_body_t *find_body_ref(lcpd_sim_t *sim, const char *field_prefix, bool by_name,
                                        const char *name, uint32_t id, lcpd_error_t *error) {
  char field[64];
  if (by_name) {
    snprintf(field, sizeof field, "%s.name", field_prefix);
    return find_body(sim, name, field, error);
  }
  const lcpd_body_t *body = lcpd_sim_body_by_id(sim, (lcp_body_id)id);
  if (!body)
    lcpd_fail(error, LCP_ERR_NOT_FOUND, "%s.id: no free body with id %u", field_prefix, id);
  return body;
}

int lcpd_set_body_state(lcpd_sim_t *sim, lcpd_arena_t *arena,
                        const Lcpsim__V1__SetBodyStateRequest *req, void **result,
                        lcpd_error_t *error) {
  if (req->body_ref_case == LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF__NOT_SET)
    return lcpd_fail(error, BAD, "set_body_state needs the body's name or id");
  const lcpd_body_t *body =
      find_body_ref(sim, "set_body_state",
                    req->body_ref_case == LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME,
                    req->name, req->id, error);
  if (!body)
    return error->code;
  double position[3], orientation[4], linear[3], angular[3];
  if (req->pose) {
    int rc = lcpd_read_pose(req->pose, position, orientation, "set_body_state.pose", error);
    if (rc != LCP_OK)
      return rc;
  }
  if (req->twist) {
    lcpd_read_vec3(req->twist->linear, linear);
    lcpd_read_vec3(req->twist->angular, angular);
  }
  lcp_world_t *world = sim->live.world;
  int rc = empty_result(arena, &lcpsim__v1__set_body_state_reply__descriptor, result);
  if (rc != LCP_OK)
    return rc;
  rc = lcp_body_set_state(world, body->id, req->pose ? position : NULL,
                          req->pose ? orientation : NULL, req->twist ? linear : NULL,
                          req->twist ? angular : NULL);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "set_body_state: body '%s': %s", body->name,
                     lcp_world_last_error(world));
  return LCP_OK;
}

/* ---- ApplyWrench ---- */

/* Fills the reply made before the world changed. */
static int apply_wrench_result(lcpd_sim_t *sim, uint32_t hold_id, void **result) {
  Lcpsim__V1__ApplyWrenchReply *out = *result;
  out->hold_id = hold_id;
  out->held = (uint32_t)sim->held_wrenches.count;
  return LCP_OK;
}

int lcpd_apply_wrench(lcpd_sim_t *sim, lcpd_arena_t *arena,
                      const Lcpsim__V1__ApplyWrenchRequest *req, void **result,
                      lcpd_error_t *error) {
  lcpd_held_wrenches_t *held = &sim->held_wrenches;
  if (empty_result(arena, &lcpsim__v1__apply_wrench_reply__descriptor, result) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  if (req->clear || req->clear_all) {
    if (req->target[0] || req->link[0] || req->force || req->torque || req->point || req->frame ||
        req->duration || (req->clear && req->clear_all))
      return lcpd_fail(error, BAD,
                       "apply_wrench: clear (or clear_all) goes alone, without a target, a "
                       "wrench, a frame or a duration");
    if (req->clear_all)
      lcpd_held_clear(held);
    else if (!lcpd_held_remove(held, req->clear))
      return lcpd_fail(error, LCP_ERR_NOT_FOUND, "apply_wrench.clear: no held wrench with id %u",
                       req->clear);
    return apply_wrench_result(sim, 0, result);
  }
  lcpd_wrench_t wrench = {0};
  const lcpd_robot_t *robot = lcpd_sim_find_robot(sim, req->target);
  if (robot) {
    wrench.on_robot = true;
    wrench.robot = robot->id;
    if (req->link[0]) {
      int rc = find_link(sim, robot, req->link, "apply_wrench.link", &wrench.link, error);
      if (rc != LCP_OK)
        return rc;
    }
  } else {
    const lcpd_body_t *body = lcpd_sim_find_body(sim, req->target);
    if (!body)
      return lcpd_fail(error, LCP_ERR_NOT_FOUND,
                       "apply_wrench.target: no body or robot named '%s' (GetInfo lists them)",
                       LCPD_QUOTE(req->target));
    if (req->link[0])
      return lcpd_fail(error, BAD, "apply_wrench.link: '%s' is a free body: it has no links",
                       body->name);
    if (body->is_static)
      return lcpd_fail(error, BAD, "apply_wrench.target: body '%s' is static", body->name);
    wrench.body = body->id;
  }
  switch (req->frame) {
  case LCPSIM__V1__APPLY_WRENCH_REQUEST__FRAME__WORLD:
    break;
  case LCPSIM__V1__APPLY_WRENCH_REQUEST__FRAME__LOCAL:
    wrench.local = true;
    break;
  default:
    return lcpd_fail(error, BAD, "apply_wrench.frame = %d is not an ApplyWrenchRequest.Frame",
                     (int)req->frame);
  }
  if (req->duration != LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__NEXT_STEP &&
      req->duration != LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD)
    return lcpd_fail(error, BAD, "apply_wrench.duration = %d is not an ApplyWrenchRequest.Duration",
                     (int)req->duration);
  lcpd_read_vec3(req->force, wrench.force);
  lcpd_read_vec3(req->torque, wrench.torque);
  wrench.has_point = req->point != NULL;
  lcpd_read_vec3(req->point, wrench.point);
  uint32_t hold_id = 0;
  int rc = req->duration == LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD
               ? lcpd_held_add(held, &wrench, &hold_id, error)
               : lcpd_wrench_apply(sim->live.world, &wrench, error);
  if (rc != LCP_OK)
    return lcpd_error_prefix(error, "apply_wrench: ");
  return apply_wrench_result(sim, hold_id, result);
}

/* ---- SetDynamics ---- */

/* The request's field of edit i: "set_dynamics.bodies[2]". */
static void edit_field(const Lcpsim__V1__SetDynamicsRequest *req, int32_t i, char *field,
                       size_t size) {
  if ((size_t)i < req->n_bodies)
    snprintf(field, size, "set_dynamics.bodies[%d]", (int)i);
  else
    snprintf(field, size, "set_dynamics.joints[%d]", (int)(i - (int32_t)req->n_bodies));
}

static int body_edit(lcpd_sim_t *sim, const Lcpsim__V1__BodyDynamics *d, const char *field,
                     lcp_dynamics_edit_t *e, lcpd_error_t *error) {
  char where[96];
  if (d->body[0] && (d->robot[0] || d->link[0]))
    return lcpd_fail(error, BAD, "%s: give a body, or a robot and a link, not both", field);
  if (d->body[0]) {
    snprintf(where, sizeof where, "%s.body", field);
    const lcpd_body_t *body = find_body(sim, d->body, where, error);
    if (!body)
      return error->code;
    *e = (lcp_dynamics_edit_t){.target = LCP_EDIT_BODY, .body = body->id};
  } else {
    snprintf(where, sizeof where, "%s.robot", field);
    const lcpd_robot_t *robot = lcpd_sim_robot_named(sim, d->robot, where, error);
    if (!robot)
      return error->code;
    snprintf(where, sizeof where, "%s.link", field);
    *e = (lcp_dynamics_edit_t){.target = LCP_EDIT_LINK, .robot = robot->id};
    int rc = find_link(sim, robot, d->link, where, &e->index, error);
    if (rc != LCP_OK)
      return rc;
  }
  if (d->mass_value_case == LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS) {
    e->fields |= LCP_EDIT_MASS;
    e->mass = d->mass;
  }
  if (d->n_inertia == 9) {
    memcpy(e->inertia, d->inertia, sizeof e->inertia);
  } else if (d->n_inertia == 3) {
    for (int k = 0; k < 3; ++k)
      e->inertia[4 * k] = d->inertia[k];
  } else if (d->n_inertia != 0) {
    return lcpd_fail(error, BAD,
                     "%s.inertia has %zu values: give 9 (row-major), 3 (the diagonal) or none",
                     field, d->n_inertia);
  }
  if (d->n_inertia)
    e->fields |= LCP_EDIT_INERTIA;
  if (d->com) {
    e->fields |= LCP_EDIT_COM;
    lcpd_read_vec3(d->com, e->com);
  }
  if (d->friction_value_case == LCPSIM__V1__BODY_DYNAMICS__FRICTION_VALUE_FRICTION) {
    e->fields |= LCP_EDIT_FRICTION;
    e->friction = d->friction;
  }
  if (d->restitution_value_case == LCPSIM__V1__BODY_DYNAMICS__RESTITUTION_VALUE_RESTITUTION) {
    e->fields |= LCP_EDIT_RESTITUTION;
    e->restitution = d->restitution;
  }
  return LCP_OK;
}

static int joint_edit(lcpd_sim_t *sim, const Lcpsim__V1__JointDynamics *d, const char *field,
                      lcp_dynamics_edit_t *e, lcpd_error_t *error) {
  char where[96];
  snprintf(where, sizeof where, "%s.robot", field);
  const lcpd_robot_t *robot = lcpd_sim_robot_named(sim, d->robot, where, error);
  if (!robot)
    return error->code;
  *e = (lcp_dynamics_edit_t){.target = LCP_EDIT_JOINT, .robot = robot->id};
  if (lcp_robot_find_joint(sim->live.world, robot->id, d->joint, &e->index) != LCP_OK)
    return lcpd_fail(error, LCP_ERR_NOT_FOUND, "%s.joint: robot '%s' has no joint named '%s'",
                     field, robot->name, LCPD_QUOTE(d->joint));
  lcp_joint_info_t joint;
  lcp_robot_get_joint(sim->live.world, robot->id, e->index, &joint);
  if (d->damping_value_case == LCPSIM__V1__JOINT_DYNAMICS__DAMPING_VALUE_DAMPING) {
    e->fields |= LCP_EDIT_DAMPING;
    e->damping = d->damping;
  }
  if (d->friction_value_case == LCPSIM__V1__JOINT_DYNAMICS__FRICTION_VALUE_FRICTION) {
    e->fields |= LCP_EDIT_JOINT_FRICTION;
    e->joint_friction = d->friction;
  }
  bool lower = d->lower_value_case == LCPSIM__V1__JOINT_DYNAMICS__LOWER_VALUE_LOWER;
  bool upper = d->upper_value_case == LCPSIM__V1__JOINT_DYNAMICS__UPPER_VALUE_UPPER;
  if (lower || upper) {
    e->fields |= LCP_EDIT_LIMITS;
    e->lower = lower ? d->lower : joint.lower;
    e->upper = upper ? d->upper : joint.upper;
  }
  if (d->effort_limit_value_case == LCPSIM__V1__JOINT_DYNAMICS__EFFORT_LIMIT_VALUE_EFFORT_LIMIT) {
    e->fields |= LCP_EDIT_EFFORT_LIMIT;
    e->effort_limit = d->effort_limit;
  }
  if (d->velocity_limit_value_case ==
      LCPSIM__V1__JOINT_DYNAMICS__VELOCITY_LIMIT_VALUE_VELOCITY_LIMIT) {
    e->fields |= LCP_EDIT_VELOCITY_LIMIT;
    e->velocity_limit = d->velocity_limit;
  }
  return LCP_OK;
}

int lcpd_set_dynamics(lcpd_sim_t *sim, lcpd_arena_t *arena,
                      const Lcpsim__V1__SetDynamicsRequest *req, void **result,
                      lcpd_error_t *error) {
  const size_t count = req->n_bodies + req->n_joints;
  lcp_dynamics_edit_t *edits = lcpd_arena_array(arena, count ? count : 1, sizeof *edits);
  if (!edits)
    return LCP_ERR_NO_MEMORY;
  char field[64];
  for (size_t i = 0; i < count; ++i) {
    edit_field(req, (int32_t)i, field, sizeof field);
    int rc = i < req->n_bodies
                 ? body_edit(sim, req->bodies[i], field, &edits[i], error)
                 : joint_edit(sim, req->joints[i - req->n_bodies], field, &edits[i], error);
    if (rc != LCP_OK)
      return rc;
  }
  lcp_world_t *world = sim->live.world;
  if (empty_result(arena, &lcpsim__v1__set_dynamics_reply__descriptor, result) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  int32_t failed = -1;
  int rc = lcp_world_edit_dynamics(world, edits, (int32_t)count, &failed);
  if (rc != LCP_OK) {
    /* The engine's message starts "edit N: "; the field's name replaces it. */
    const char *why = lcp_world_last_error(world);
    const char *colon = strstr(why, ": ");
    if (colon && strncmp(why, "edit ", 5) == 0)
      why = colon + 2;
    edit_field(req, failed, field, sizeof field);
    return lcpd_fail(error, rc, "%s: %s (nothing was changed)", field, why);
  }
  /* GetInfo reports a body's mass from the daemon's own record. */
  for (size_t i = 0; i < req->n_bodies; ++i)
    if (edits[i].target == LCP_EDIT_BODY && (edits[i].fields & LCP_EDIT_MASS)) {
      lcpd_body_t *body = lcpd_sim_find_body(sim, req->bodies[i]->body);
      if (body)
        body->mass = edits[i].mass;
    }
  return LCP_OK;
}
