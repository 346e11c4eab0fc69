/* SPDX-License-Identifier: Apache-2.0 */
#include "targets.h"

#include "log.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BAD LCP_ERR_INVALID_ARGUMENT

/* An array of a SetTargetRequest: empty (keep), one value (for every
 * addressed joint) or one per addressed joint. */
typedef struct target_array {
  const char *name;
  const double *values;
  size_t count;
  double lowest; /* values must be >= this (-HUGE_VAL: any) */
} target_array;

int lcpd_plan_target(lcpd_arena_t *arena, lcpd_sim_t *sim, const Lcpsim__V1__SetTargetRequest *t,
                     const char *field, const lcpd_target_plan **latest, lcpd_target_plan *plan,
                     lcpd_error_t *error) {
  const lcpd_robot_t *robot = lcpd_sim_find_robot(sim, t->robot);
  if (!robot) {
    /* The field's path is formatted only for the error. */
    char where[96];
    snprintf(where, sizeof where, "%s.robot", field);
    lcpd_sim_robot_named(sim, t->robot, where, error);
    return error->code;
  }
  const lcp_world_t *world = sim->live.world;
  lcp_robot_info_t info;
  int rc = lcp_robot_get_info(world, robot->id, &info);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "robot '%s': %s", robot->name, lcp_world_last_error(world));
  const int32_t joint_count = info.joint_count;

  if (t->n_joints && t->n_indices)
    return lcpd_fail(error, BAD, "%s: give joints by name or by index, not both", field);
  /* The addressed joints. */
  size_t addressed = t->n_joints ? t->n_joints : t->n_indices;
  int32_t *joints;
  if (addressed == 0) {
    addressed = (size_t)joint_count;
    joints = lcpd_arena_array(arena, addressed, sizeof *joints);
    if (!joints)
      return LCP_ERR_NO_MEMORY;
    for (size_t k = 0; k < addressed; ++k)
      joints[k] = (int32_t)k;
  } else {
    joints = lcpd_arena_array(arena, addressed, sizeof *joints);
    if (!joints)
      return LCP_ERR_NO_MEMORY;
    for (size_t k = 0; k < addressed; ++k) {
      if (t->n_joints) {
        if (lcp_robot_find_joint(world, robot->id, t->joints[k], &joints[k]) != LCP_OK)
          return lcpd_fail(error, LCP_ERR_NOT_FOUND,
                           "%s.joints[%zu]: robot '%s' has no joint named '%s'", field, k,
                           robot->name, LCPD_QUOTE(t->joints[k]));
      } else {
        int32_t index = t->indices[k];
        if (index < 0 || index >= joint_count)
          return lcpd_fail(error, LCP_ERR_NOT_FOUND,
                           "%s.indices[%zu] = %d is out of range: robot '%s' has %d joints "
                           "(0 to %d)",
                           field, k, index, robot->name, joint_count, joint_count - 1);
        joints[k] = index;
      }
    }
    /* Naming a joint twice would make the result depend on the order. */
    bool *seen = lcpd_arena_array(arena, (size_t)joint_count, sizeof *seen);
    if (!seen)
      return LCP_ERR_NO_MEMORY;
    for (size_t k = 0; k < addressed; ++k) {
      if (seen[joints[k]])
        return lcpd_fail(error, BAD, "%s: joint %d is addressed twice", field, joints[k]);
      seen[joints[k]] = true;
    }
  }

  const target_array arrays[] = {
      {"position", t->position, t->n_position, -HUGE_VAL},
      {"velocity", t->velocity, t->n_velocity, -HUGE_VAL},
      {"kp", t->kp, t->n_kp, 0.0},
      {"kd", t->kd, t->n_kd, 0.0},
      {"effort_limit", t->effort_limit, t->n_effort_limit, 0.0},
      {"torque", t->torque, t->n_torque, -HUGE_VAL},
  };
  enum { POSITION, VELOCITY, KP, KD, EFFORT, TORQUE, ARRAYS };
  for (int a = 0; a < ARRAYS; ++a) {
    const target_array *array = &arrays[a];
    if (array->count > 1 && array->count != addressed)
      return lcpd_fail(error, BAD,
                       "%s.%s has %zu values: give none (keep), 1 (for every joint) or %zu (one "
                       "per addressed joint)",
                       field, array->name, array->count, addressed);
    for (size_t k = 0; k < array->count; ++k)
      if (!(array->values[k] >= array->lowest))
        return lcpd_fail(error, BAD, "%s.%s[%zu] = %g must be >= %g", field, array->name, k,
                         array->values[k], array->lowest);
  }
  lcp_control_mode_t mode = LCP_CONTROL_OFF;
  bool keep_mode = false;
  switch (t->mode) {
  case LCPSIM__V1__SET_TARGET_REQUEST__MODE__KEEP:
    keep_mode = true;
    break;
  case LCPSIM__V1__SET_TARGET_REQUEST__MODE__OFF:
    mode = LCP_CONTROL_OFF;
    break;
  case LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION:
    mode = LCP_CONTROL_POSITION;
    break;
  case LCPSIM__V1__SET_TARGET_REQUEST__MODE__VELOCITY:
    mode = LCP_CONTROL_VELOCITY;
    break;
  case LCPSIM__V1__SET_TARGET_REQUEST__MODE__TORQUE:
    mode = LCP_CONTROL_TORQUE;
    break;
  default:
    return lcpd_fail(error, BAD, "%s.mode = %d is not a SetTargetRequest.Mode", field,
                     (int)t->mode);
  }

  /* Start from the controllers as they will be when this target applies: as
   * an earlier target of the same request leaves them, else as they are. */
  plan->robot = robot;
  plan->joint_count = joint_count;
  plan->controls = lcpd_arena_array(arena, (size_t)joint_count, sizeof *plan->controls);
  if (!plan->controls)
    return LCP_ERR_NO_MEMORY;
  const lcpd_target_plan *before = latest ? latest[robot - sim->live.robots] : NULL;
  for (int32_t j = 0; j < joint_count; ++j) {
    if (before)
      plan->controls[j] = before->controls[j];
    else if ((rc = lcp_robot_get_joint_control(world, robot->id, j, &plan->controls[j])) != LCP_OK)
      return lcpd_fail(error, rc, "robot '%s': cannot read joint %d's control: %s", robot->name, j,
                       lcp_world_last_error(world));
  }
  plan->set_gravity_compensation = before && before->set_gravity_compensation;
  plan->gravity_compensation = before && before->gravity_compensation;
  for (size_t k = 0; k < addressed; ++k) {
    lcp_joint_control_t *c = &plan->controls[joints[k]];
    double *fields[ARRAYS] = {&c->position, &c->velocity,     &c->kp,
                              &c->kd,       &c->effort_limit, &c->torque};
    for (int a = 0; a < ARRAYS; ++a)
      if (arrays[a].count)
        *fields[a] = arrays[a].values[arrays[a].count == 1 ? 0 : k];
    if (!keep_mode)
      c->mode = mode;
    /* The engine's rules, checked here to name the joint and the field. */
    bool position_bad = c->mode == LCP_CONTROL_POSITION && !(c->kp + c->kd > 0.0);
    bool velocity_bad = c->mode == LCP_CONTROL_VELOCITY && !(c->kd > 0.0);
    if (position_bad || velocity_bad) {
      lcp_joint_info_t joint;
      lcp_robot_get_joint(world, robot->id, joints[k], &joint);
      return lcpd_fail(error, BAD, "%s: joint '%s' in %s mode needs %s", field, joint.name,
                       position_bad ? "POSITION" : "VELOCITY",
                       position_bad ? "kp + kd > 0" : "kd > 0");
    }
  }
  if (t->gravity_compensation_value_case ==
      LCPSIM__V1__SET_TARGET_REQUEST__GRAVITY_COMPENSATION_VALUE_GRAVITY_COMPENSATION) {
    plan->set_gravity_compensation = true;
    plan->gravity_compensation = t->gravity_compensation;
  }
  if (latest)
    latest[robot - sim->live.robots] = plan;
  return LCP_OK;
}

int lcpd_apply_target_plans(lcpd_sim_t *sim, const lcpd_target_plan *plans, int32_t count,
                            lcpd_error_t *error) {
  for (int32_t i = 0; i < count; ++i) {
    const lcpd_target_plan *plan = &plans[i];
    int rc =
        lcp_robot_set_controls(sim->live.world, plan->robot->id, plan->controls, plan->joint_count);
    if (rc == LCP_OK && plan->set_gravity_compensation)
      rc = lcp_robot_set_gravity_compensation(sim->live.world, plan->robot->id,
                                              plan->gravity_compensation);
    if (rc != LCP_OK)
      return lcpd_fail(error, rc, "robot '%s': %s", plan->robot->name,
                       lcp_world_last_error(sim->live.world));
  }
  return LCP_OK;
}
