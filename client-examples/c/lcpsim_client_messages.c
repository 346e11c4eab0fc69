/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: the protocol's messages built from the caller's structs (targets, sensors,
 * poses, robot and body states), shared by the calls that send them. */
#include "lcpsim_client_internal.h"

#include <stdlib.h>

/* The protobuf-c form of a target; it points into `target`, which must outlive it. */
Lcpsim__V1__SetTargetRequest lcpc_target_message(const lcpsim_target_t *target) {
  Lcpsim__V1__SetTargetRequest message = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  /* protobuf-c only reads these arrays when packing; the casts drop const for its field types. */
  message.robot = (char *)(target->robot ? target->robot : "");
  message.n_joints = target->n_joints;
  message.joints = (char **)target->joints;
  message.n_indices = target->n_indices;
  message.indices = (int32_t *)target->indices;
  message.mode = (Lcpsim__V1__SetTargetRequest__Mode)target->mode;
  message.n_position = target->n_position;
  message.position = (double *)target->position;
  message.n_velocity = target->n_velocity;
  message.velocity = (double *)target->velocity;
  message.n_kp = target->n_kp;
  message.kp = (double *)target->kp;
  message.n_kd = target->n_kd;
  message.kd = (double *)target->kd;
  message.n_effort_limit = target->n_effort_limit;
  message.effort_limit = (double *)target->effort_limit;
  message.n_torque = target->n_torque;
  message.torque = (double *)target->torque;
  if (target->gravity_compensation != LCPSIM_GRAVITY_COMPENSATION_KEEP) {
    message.gravity_compensation_value_case =
        LCPSIM__V1__SET_TARGET_REQUEST__GRAVITY_COMPENSATION_VALUE_GRAVITY_COMPENSATION;
    message.gravity_compensation =
        target->gravity_compensation == LCPSIM_GRAVITY_COMPENSATION_ON ? 1 : 0;
  }
  return message;
}

bool lcpc_target_is_valid(const lcpsim_target_t *target) {
  return (target->joints || target->n_joints == 0) && (target->indices || target->n_indices == 0) &&
         (target->position || target->n_position == 0) &&
         (target->velocity || target->n_velocity == 0) && (target->kp || target->n_kp == 0) &&
         (target->kd || target->n_kd == 0) &&
         (target->effort_limit || target->n_effort_limit == 0) &&
         (target->torque || target->n_torque == 0);
}

/* The protocol's Sensors message for a set of LCPSIM_SENSOR_* flags. */
Lcpsim__V1__Sensors lcpc_sensors_message(unsigned sensors) {
  Lcpsim__V1__Sensors message = LCPSIM__V1__SENSORS__INIT;
  message.link_twists = (sensors & LCPSIM_SENSOR_LINK_TWISTS) != 0;
  message.link_accelerations = (sensors & LCPSIM_SENSOR_LINK_ACCELERATIONS) != 0;
  message.imus = (sensors & LCPSIM_SENSOR_IMUS) != 0;
  message.joint_wrenches = (sensors & LCPSIM_SENSOR_JOINT_WRENCHES) != 0;
  message.contact_wrenches = (sensors & LCPSIM_SENSOR_CONTACT_WRENCHES) != 0;
  message.energy = (sensors & LCPSIM_SENSOR_ENERGY) != 0;
  message.solver_stats = (sensors & LCPSIM_SENSOR_SOLVER_STATS) != 0;
  return message;
}

void lcpc_pose_message(const lcpsim_pose_t *pose, lcpc_pose_message_t *out) {
  *out = (lcpc_pose_message_t){.pose = LCPSIM__V1__POSE__INIT,
                               .position = LCPSIM__V1__VEC3__INIT,
                               .orientation = LCPSIM__V1__QUAT__INIT};
  out->position.x = pose->position[0];
  out->position.y = pose->position[1];
  out->position.z = pose->position[2];
  out->pose.position = &out->position;
  const double *q = pose->orientation;
  if (q[0] != 0.0 || q[1] != 0.0 || q[2] != 0.0 || q[3] != 0.0) {
    out->orientation.w = q[0];
    out->orientation.x = q[1];
    out->orientation.y = q[2];
    out->orientation.z = q[3];
    out->pose.orientation = &out->orientation;
  }
}

Lcpsim__V1__Vec3 lcpc_vec3_message(const double v[3]) {
  Lcpsim__V1__Vec3 message = LCPSIM__V1__VEC3__INIT;
  message.x = v[0];
  message.y = v[1];
  message.z = v[2];
  return message;
}

void *lcpc_scratch_alloc(lcpc_scratch_t *scratch, size_t count, size_t size) {
  if (scratch->failed)
    return NULL;
  if (scratch->count == scratch->capacity) {
    size_t capacity = scratch->capacity ? 2 * scratch->capacity : 16;
    void **blocks = realloc(scratch->blocks, capacity * sizeof *blocks);
    if (!blocks) {
      scratch->failed = true;
      return NULL;
    }
    scratch->blocks = blocks;
    scratch->capacity = capacity;
  }
  void *block = calloc(count ? count : 1, size);
  if (!block) {
    scratch->failed = true;
    return NULL;
  }
  scratch->blocks[scratch->count++] = block;
  return block;
}

void lcpc_scratch_free(lcpc_scratch_t *scratch) {
  for (size_t i = 0; i < scratch->count; ++i)
    free(scratch->blocks[i]);
  free(scratch->blocks);
  *scratch = (lcpc_scratch_t){0};
}

/* A twist message from two vectors, its parts allocated from `scratch`. */
static Lcpsim__V1__Twist *twist_message(lcpc_scratch_t *scratch, const double linear[3],
                                        const double angular[3]) {
  Lcpsim__V1__Twist *twist = lcpc_scratch_alloc(scratch, 1, sizeof *twist);
  Lcpsim__V1__Vec3 *vectors = lcpc_scratch_alloc(scratch, 2, sizeof *vectors);
  if (!twist || !vectors)
    return NULL;
  lcpsim__v1__twist__init(twist);
  vectors[0] = lcpc_vec3_message(linear);
  vectors[1] = lcpc_vec3_message(angular);
  twist->linear = &vectors[0];
  twist->angular = &vectors[1];
  return twist;
}

bool lcpc_robot_state_change_is_valid(const lcpsim_robot_state_change_t *change) {
  return change && change->robot && (change->q || change->n_q == 0) &&
         (change->qd || change->n_qd == 0) && (change->joints || change->n_joints == 0);
}

/* The SetRobotStateRequest of `change` into `set`, its parts allocated from `scratch` (check
 * scratch->failed). */
void lcpc_robot_state_message(lcpc_scratch_t *scratch, const lcpsim_robot_state_change_t *change,
                              Lcpsim__V1__SetRobotStateRequest *set) {
  lcpsim__v1__set_robot_state_request__init(set);
  set->robot = (char *)change->robot;
  set->n_q = change->n_q;
  set->q = (double *)change->q;
  set->n_qd = change->n_qd;
  set->qd = (double *)change->qd;
  Lcpsim__V1__JointState *joints = lcpc_scratch_alloc(scratch, change->n_joints, sizeof *joints);
  Lcpsim__V1__JointState **pointers =
      lcpc_scratch_alloc(scratch, change->n_joints, sizeof *pointers);
  if (!joints || !pointers)
    return;
  for (size_t i = 0; i < change->n_joints; ++i) {
    const lcpsim_joint_state_t *j = &change->joints[i];
    lcpsim__v1__joint_state__init(&joints[i]);
    joints[i].name = (char *)(j->name ? j->name : "");
    if (j->has_position) {
      joints[i].position_value_case = LCPSIM__V1__JOINT_STATE__POSITION_VALUE_POSITION;
      joints[i].position = j->position;
    }
    if (j->has_velocity) {
      joints[i].velocity_value_case = LCPSIM__V1__JOINT_STATE__VELOCITY_VALUE_VELOCITY;
      joints[i].velocity = j->velocity;
    }
    pointers[i] = &joints[i];
  }
  set->n_joints = change->n_joints;
  set->joints = pointers;
  if (change->has_base_pose) {
    lcpc_pose_message_t *pose = lcpc_scratch_alloc(scratch, 1, sizeof *pose);
    if (!pose)
      return;
    lcpc_pose_message(&change->base_pose, pose);
    set->base_pose = &pose->pose;
  }
  if (change->has_base_twist)
    set->base_twist = twist_message(scratch, change->base_linear, change->base_angular);
}

/* The SetBodyStateRequest of `change` into `set`, its parts allocated from `scratch`. */
void lcpc_body_state_message(lcpc_scratch_t *scratch, const lcpsim_body_state_change_t *change,
                             Lcpsim__V1__SetBodyStateRequest *set) {
  lcpsim__v1__set_body_state_request__init(set);
  if (change->name) {
    set->body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
    set->name = (char *)change->name;
  } else {
    set->body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_ID;
    set->id = change->id;
  }
  if (change->has_pose) {
    lcpc_pose_message_t *pose = lcpc_scratch_alloc(scratch, 1, sizeof *pose);
    if (!pose)
      return;
    lcpc_pose_message(&change->pose, pose);
    set->pose = &pose->pose;
  }
  if (change->has_twist)
    set->twist = twist_message(scratch, change->linear_velocity, change->angular_velocity);
}
