/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: editing the world between steps (SetRobotState, SetBodyState, ApplyWrench,
 * SetDynamics) and adding sensors (AddImu). */
#include "lcpsim_client_internal.h"

#include <stdlib.h>

/* ---- editing the world between steps ---- */

int lcpsim_client_set_robot_state(lcpsim_client_t *client,
                                  const lcpsim_robot_state_change_t *change) {
  if (!client || !lcpc_robot_state_change_is_valid(change))
    return LCPSIM_ERR_USAGE;
  lcpc_scratch_t scratch = {0};
  Lcpsim__V1__SetRobotStateRequest set;
  lcpc_robot_state_message(&scratch, change, &set);
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE;
  request.set_robot_state = &set;
  int code = scratch.failed
                 ? lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "set_robot_state: out of memory")
                 : lcpc_call_for_status(client, &request);
  lcpc_scratch_free(&scratch);
  return code;
}

int lcpsim_client_set_body_state(lcpsim_client_t *client,
                                 const lcpsim_body_state_change_t *change) {
  if (!client || !change)
    return LCPSIM_ERR_USAGE;
  lcpc_scratch_t scratch = {0};
  Lcpsim__V1__SetBodyStateRequest set;
  lcpc_body_state_message(&scratch, change, &set);
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE;
  request.set_body_state = &set;
  int code = scratch.failed
                 ? lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "set_body_state: out of memory")
                 : lcpc_call_for_status(client, &request);
  lcpc_scratch_free(&scratch);
  return code;
}

/* Sends an ApplyWrenchRequest; hold_id (may be NULL) gets the reply's. */
static int send_wrench(lcpsim_client_t *client, Lcpsim__V1__ApplyWrenchRequest *wrench,
                       uint32_t *hold_id) {
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH;
  request.apply_wrench = wrench;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (hold_id)
    *hold_id = reply->apply_wrench->hold_id;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_apply_wrench(lcpsim_client_t *client, const lcpsim_wrench_t *wrench,
                               uint32_t *hold_id) {
  if (!client || !wrench || !wrench->target)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__ApplyWrenchRequest apply = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  apply.target = (char *)wrench->target;
  apply.link = (char *)(wrench->link ? wrench->link : "");
  Lcpsim__V1__Vec3 force = lcpc_vec3_message(wrench->force);
  Lcpsim__V1__Vec3 torque = lcpc_vec3_message(wrench->torque);
  Lcpsim__V1__Vec3 point = lcpc_vec3_message(wrench->point);
  apply.force = &force;
  apply.torque = &torque;
  if (wrench->has_point)
    apply.point = &point;
  apply.frame = (Lcpsim__V1__ApplyWrenchRequest__Frame)wrench->frame;
  apply.duration = wrench->hold ? LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD
                                : LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__NEXT_STEP;
  return send_wrench(client, &apply, hold_id);
}

int lcpsim_client_clear_wrench(lcpsim_client_t *client, uint32_t hold_id) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__ApplyWrenchRequest clear = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  clear.clear = hold_id;
  clear.clear_all = hold_id == 0;
  return send_wrench(client, &clear, NULL);
}

/* The message of one SetDynamics body entry (its com lives in *com). */
static void body_dynamics_message(const lcpsim_body_dynamics_t *in, Lcpsim__V1__BodyDynamics *out,
                                  Lcpsim__V1__Vec3 *com) {
  lcpsim__v1__body_dynamics__init(out);
  out->body = (char *)(in->body ? in->body : "");
  out->robot = (char *)(in->robot ? in->robot : "");
  out->link = (char *)(in->link ? in->link : "");
  if (in->has_mass) {
    out->mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
    out->mass = in->mass;
  }
  out->n_inertia = in->n_inertia;
  out->inertia = (double *)in->inertia;
  *com = lcpc_vec3_message(in->com);
  if (in->has_com)
    out->com = com;
  if (in->has_friction) {
    out->friction_value_case = LCPSIM__V1__BODY_DYNAMICS__FRICTION_VALUE_FRICTION;
    out->friction = in->friction;
  }
  if (in->has_restitution) {
    out->restitution_value_case = LCPSIM__V1__BODY_DYNAMICS__RESTITUTION_VALUE_RESTITUTION;
    out->restitution = in->restitution;
  }
}

static void joint_dynamics_message(const lcpsim_joint_dynamics_t *in,
                                   Lcpsim__V1__JointDynamics *out) {
  lcpsim__v1__joint_dynamics__init(out);
  out->robot = (char *)(in->robot ? in->robot : "");
  out->joint = (char *)(in->joint ? in->joint : "");
  if (in->has_damping) {
    out->damping_value_case = LCPSIM__V1__JOINT_DYNAMICS__DAMPING_VALUE_DAMPING;
    out->damping = in->damping;
  }
  if (in->has_friction) {
    out->friction_value_case = LCPSIM__V1__JOINT_DYNAMICS__FRICTION_VALUE_FRICTION;
    out->friction = in->friction;
  }
  if (in->has_lower) {
    out->lower_value_case = LCPSIM__V1__JOINT_DYNAMICS__LOWER_VALUE_LOWER;
    out->lower = in->lower;
  }
  if (in->has_upper) {
    out->upper_value_case = LCPSIM__V1__JOINT_DYNAMICS__UPPER_VALUE_UPPER;
    out->upper = in->upper;
  }
  if (in->has_effort_limit) {
    out->effort_limit_value_case = LCPSIM__V1__JOINT_DYNAMICS__EFFORT_LIMIT_VALUE_EFFORT_LIMIT;
    out->effort_limit = in->effort_limit;
  }
  if (in->has_velocity_limit) {
    out->velocity_limit_value_case =
        LCPSIM__V1__JOINT_DYNAMICS__VELOCITY_LIMIT_VALUE_VELOCITY_LIMIT;
    out->velocity_limit = in->velocity_limit;
  }
}

int lcpc_send_set_dynamics(lcpsim_client_t *client, const lcpsim_body_dynamics_t *bodies,
                           size_t n_bodies, const lcpsim_joint_dynamics_t *joints, size_t n_joints,
                           int64_t deadline, uint64_t *request_id) {
  if (!client || (n_bodies && !bodies) || (n_joints && !joints))
    return LCPSIM_ERR_USAGE;
  for (size_t i = 0; i < n_bodies; ++i)
    if (bodies[i].n_inertia > 9)
      return lcpc_fail(client, LCPSIM_ERR_USAGE, "set_dynamics: bodies[%zu].n_inertia > 9", i);
  Lcpsim__V1__BodyDynamics *body_messages = calloc(n_bodies + 1, sizeof *body_messages);
  Lcpsim__V1__BodyDynamics **body_pointers = calloc(n_bodies + 1, sizeof *body_pointers);
  Lcpsim__V1__Vec3 *coms = calloc(n_bodies + 1, sizeof *coms);
  Lcpsim__V1__JointDynamics *joint_messages = calloc(n_joints + 1, sizeof *joint_messages);
  Lcpsim__V1__JointDynamics **joint_pointers = calloc(n_joints + 1, sizeof *joint_pointers);
  int code = LCPSIM_ERR_NO_MEMORY;
  if (body_messages && body_pointers && coms && joint_messages && joint_pointers) {
    Lcpsim__V1__SetDynamicsRequest set = LCPSIM__V1__SET_DYNAMICS_REQUEST__INIT;
    for (size_t i = 0; i < n_bodies; ++i) {
      body_dynamics_message(&bodies[i], &body_messages[i], &coms[i]);
      body_pointers[i] = &body_messages[i];
    }
    for (size_t i = 0; i < n_joints; ++i) {
      joint_dynamics_message(&joints[i], &joint_messages[i]);
      joint_pointers[i] = &joint_messages[i];
    }
    set.n_bodies = n_bodies;
    set.bodies = body_pointers;
    set.n_joints = n_joints;
    set.joints = joint_pointers;
    request_t request = LCPSIM__V1__REQUEST__INIT;
    request.call_case = LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS;
    request.set_dynamics = &set;
    code = lcpc_send_request(client, &request, deadline);
    *request_id = request.id;
  } else {
    lcpc_fail(client, code, "set_dynamics: out of memory");
  }
  free(body_messages);
  free(body_pointers);
  free(coms);
  free(joint_messages);
  free(joint_pointers);
  return code;
}

int lcpsim_client_set_dynamics(lcpsim_client_t *client, const lcpsim_body_dynamics_t *bodies,
                               size_t n_bodies, const lcpsim_joint_dynamics_t *joints,
                               size_t n_joints) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  int64_t deadline = lcpc_call_deadline(client);
  uint64_t id = 0;
  int code = lcpc_send_set_dynamics(client, bodies, n_bodies, joints, n_joints, deadline, &id);
  reply_t *reply = NULL;
  if (code == LCPSIM_OK)
    code = lcpc_receive_reply(client, id, LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS, NULL, deadline,
                              &reply);
  if (code == LCPSIM_OK)
    lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

/* ---- sensors ---- */

int lcpsim_client_add_imu(lcpsim_client_t *client, const lcpsim_imu_t *imu) {
  if (!client || !imu || !imu->name || !imu->robot || !imu->link)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__AddImuRequest add = LCPSIM__V1__ADD_IMU_REQUEST__INIT;
  add.name = (char *)imu->name;
  add.robot = (char *)imu->robot;
  add.link = (char *)imu->link;
  lcpc_pose_message_t pose;
  lcpc_pose_message(&imu->pose, &pose);
  add.pose = &pose.pose;
  add.accel_noise = imu->accel_noise;
  add.gyro_noise = imu->gyro_noise;
  Lcpsim__V1__Vec3 accel_bias = lcpc_vec3_message(imu->accel_bias);
  Lcpsim__V1__Vec3 gyro_bias = lcpc_vec3_message(imu->gyro_bias);
  add.accel_bias = &accel_bias;
  add.gyro_bias = &gyro_bias;
  add.seed = imu->seed;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_ADD_IMU;
  request.add_imu = &add;
  return lcpc_call_for_status(client, &request);
}
