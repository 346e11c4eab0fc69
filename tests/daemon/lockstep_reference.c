/* SPDX-License-Identifier: Apache-2.0 */
#include "lockstep_reference.h"

#include "scene.h"
#include "sim.h"

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void lockstep_targets(int64_t k, double h, double position[LOCKSTEP_JOINTS]) {
  /* Written as the Python test writes it, so that both round alike. */
  double t = (double)k * h;
  for (int i = 0; i < LOCKSTEP_JOINTS; ++i)
    position[i] = 0.5 * sin(2.0 * 3.141592653589793 * 0.5 * t + (double)i);
}

static bool push(lockstep_state_t *s, const double *v, size_t n) {
  if (s->count + n > LOCKSTEP_MAX_VALUES)
    return false;
  memcpy(s->values + s->count, v, n * sizeof *v);
  s->count += n;
  return true;
}

static bool push_vec3(lockstep_state_t *s, const Lcpsim__V1__Vec3 *v) {
  double x[3] = {0, 0, 0};
  if (v) {
    x[0] = v->x;
    x[1] = v->y;
    x[2] = v->z;
  }
  return push(s, x, 3);
}

static bool push_pose(lockstep_state_t *s, const Lcpsim__V1__Pose *p) {
  double q[4] = {1, 0, 0, 0};
  if (p && p->orientation) {
    q[0] = p->orientation->w;
    q[1] = p->orientation->x;
    q[2] = p->orientation->y;
    q[3] = p->orientation->z;
  }
  return push_vec3(s, p ? p->position : NULL) && push(s, q, 4);
}

int lockstep_state_from_message(const Lcpsim__V1__State *m, lockstep_state_t *s) {
  memset(s, 0, sizeof *s);
  s->step_count = m->step_count;
  bool ok = push(s, &m->time, 1);
  for (size_t r = 0; ok && r < m->n_robots; ++r) {
    const Lcpsim__V1__RobotState *robot = m->robots[r];
    if (r == 0) {
      s->q_offset = s->count;
      s->q_count = robot->n_q;
    }
    ok = push(s, robot->q, robot->n_q) && push(s, robot->qd, robot->n_qd) &&
         push(s, robot->applied_torque, robot->n_applied_torque);
    for (size_t k = 0; ok && k < robot->n_link_poses; ++k)
      ok = push_pose(s, robot->link_poses[k]);
  }
  for (size_t b = 0; ok && b < m->n_bodies; ++b) {
    const Lcpsim__V1__BodyState *body = m->bodies[b];
    ok = push_pose(s, body->pose) && push_vec3(s, body->twist ? body->twist->linear : NULL) &&
         push_vec3(s, body->twist ? body->twist->angular : NULL);
  }
  return ok ? 0 : -1;
}

/* The same vector read from the engine. */
static int state_from_world(const lcpd_sim_t *sim, lockstep_state_t *s) {
  const lcp_world_t *world = sim->live.world;
  memset(s, 0, sizeof *s);
  s->step_count = lcp_world_step_count(world);
  double time = lcp_world_time(world);
  bool ok = push(s, &time, 1);
  for (int32_t r = 0; ok && r < sim->live.robot_count; ++r) {
    const lcpd_robot_t *robot = &sim->live.robots[r];
    lcp_robot_info_t info;
    if (lcp_robot_get_info(world, robot->id, &info) != LCP_OK)
      return -1;
    double v[64];
    if (info.nq > 64 || info.nv > 64 || info.joint_count > 64)
      return -1;
    if (r == 0) {
      s->q_offset = s->count;
      s->q_count = (size_t)info.nq;
    }
    ok = lcp_robot_get_q(world, robot->id, v, info.nq) == LCP_OK && push(s, v, (size_t)info.nq);
    ok = ok && lcp_robot_get_qd(world, robot->id, v, info.nv) == LCP_OK &&
         push(s, v, (size_t)info.nv);
    ok = ok && lcp_robot_get_applied_torques(world, robot->id, v, info.joint_count) == LCP_OK &&
         push(s, v, (size_t)info.joint_count);
    for (int32_t k = 0; ok && k < robot->link_count; ++k)
      ok = lcp_robot_get_link_pose(world, robot->id, k, v, v + 3) == LCP_OK && push(s, v, 7);
  }
  for (int32_t b = 0; ok && b < sim->live.body_count; ++b) {
    double v[13];
    ok = lcp_body_get_pose(world, sim->live.bodies[b].id, v, v + 3) == LCP_OK &&
         lcp_body_get_velocity(world, sim->live.bodies[b].id, v + 7, v + 10) == LCP_OK &&
         push(s, v, 13);
  }
  return ok ? 0 : -1;
}

int lockstep_reference_run(int steps, lockstep_state_t *out, double *h, char *error,
                           size_t error_size) {
  lcpd_error_t failure;
  lcpd_scene_t scene;
  lcpd_sim_t sim;
  if (lcpd_scene_builtin(&scene, &failure) != LCP_OK ||
      lcpd_sim_init(&sim, &scene, &failure) != LCP_OK) {
    snprintf(error, error_size, "%s", failure.message);
    return -1;
  }
  int rc = -1;
  lcp_world_t *world = sim.live.world;
  lcpd_robot_t *arm = lcpd_sim_find_robot(&sim, LOCKSTEP_ROBOT);
  lcp_world_settings_t settings;
  lcp_world_get_settings(world, &settings);
  *h = settings.timestep;
  if (!arm) {
    snprintf(error, error_size, "the built-in world has no robot '%s'", LOCKSTEP_ROBOT);
    goto done;
  }
  for (int k = 0; k < steps; ++k) {
    double position[LOCKSTEP_JOINTS];
    lockstep_targets(k, settings.timestep, position);
    for (int32_t j = 0; j < LOCKSTEP_JOINTS; ++j) {
      lcp_joint_control_t c;
      if (lcp_robot_get_joint_control(world, arm->id, j, &c) != LCP_OK)
        goto engine_failed;
      c.mode = LCP_CONTROL_POSITION;
      c.position = position[j];
      c.kp = LOCKSTEP_KP;
      c.kd = LOCKSTEP_KD;
      if (lcp_robot_set_joint_control(world, arm->id, j, &c) != LCP_OK)
        goto engine_failed;
    }
    if (lcpd_sim_step(&sim, &failure) != LCP_OK) {
      snprintf(error, error_size, "%s", failure.message);
      goto done;
    }
  }
  if (state_from_world(&sim, out) != 0) {
    snprintf(error, error_size, "the state does not fit %d doubles", LOCKSTEP_MAX_VALUES);
    goto done;
  }
  rc = 0;
  goto done;
engine_failed:
  snprintf(error, error_size, "engine: %s", lcp_world_last_error(world));
done:
  lcpd_sim_destroy(&sim);
  return rc;
}
