/* SPDX-License-Identifier: Apache-2.0 */
/* The state a step leaves, checked before it is kept: every number finite,
 * positions and speeds within the bounds of lcpsim.h (LCP_STATE_MAX_*). A
 * step whose state breaks them is undone bitwise from the backup taken just
 * before its integration, in the spirit of MuJoCo's mjWARN_BADQPOS and
 * mjWARN_BADQVEL checks, except that the world is put back as it was before
 * the step rather than reset. */
#include "state_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The same parts for a snapshot (world_snapshot.c) and a step's backup. */
int lcp__robot_state_parts(const robot_model *r, robot_state *st,
                           robot_snapshot_part out[ROBOT_SNAPSHOT_PARTS]) {
  size_t nq = (size_t)r->mb.nq, nv = (size_t)r->mb.nv, nj = (size_t)r->mb.joint_count;
  out[0] = (robot_snapshot_part){st->q, nq};
  out[1] = (robot_snapshot_part){st->qd, nv};
  out[2] = (robot_snapshot_part){st->force, nv};
  out[3] = (robot_snapshot_part){st->link_wrench, 6 * (size_t)r->mb.link_count};
  out[4] = (robot_snapshot_part){st->applied_torque, nj};
  out[5] = (robot_snapshot_part){st->joint_impulse, JOINT_ROW_KINDS * nj};
  out[6] = (robot_snapshot_part){st->qdd, nv};
  out[7] = (robot_snapshot_part){st->step_link_wrench, 6 * (size_t)r->mb.link_count};
  return ROBOT_SNAPSHOT_PARTS;
}

/* Doubles of a robot's state that a step's integration writes: q, qd, the
 * pending forces it clears and what it records for the sensors and the warm
 * start. Sizes as world_snapshot.c's parts. */
static size_t robot_backup_doubles(const robot_model *r) {
  robot_snapshot_part parts[ROBOT_SNAPSHOT_PARTS];
  robot_state unused = {0};
  int count = lcp__robot_state_parts(r, &unused, parts);
  size_t n = 0;
  for (int k = 0; k < count; ++k)
    n += parts[k].count;
  return n;
}

int lcp__step_backup_save(const lcp_world_t *world, arena *a, step_backup *out) {
  const world_model *model = &world->model;
  *out = (step_backup){0};
  size_t doubles = 0;
  for (int32_t r = 0; r < model->robot_count; ++r)
    doubles += robot_backup_doubles(&model->robots[r]);
  out->bodies = ARENA_NEW(a, body_state, model->body_count > 0 ? model->body_count : 1);
  out->robot_doubles = ARENA_NEW(a, double, doubles > 0 ? doubles : 1);
  out->synchronized = ARENA_NEW(a, uint8_t, model->robot_count > 0 ? model->robot_count : 1);
  if (!out->bodies || !out->robot_doubles || !out->synchronized)
    return LCP_ERR_NO_MEMORY;
  if (model->body_count > 0)
    memcpy(out->bodies, world->state.bodies, (size_t)model->body_count * sizeof(body_state));
  double *flat = out->robot_doubles;
  for (int32_t r = 0; r < model->robot_count; ++r) {
    robot_snapshot_part parts[ROBOT_SNAPSHOT_PARTS];
    int count = lcp__robot_state_parts(&model->robots[r], &world->state.robots[r], parts);
    for (int k = 0; k < count; ++k) {
      memcpy(flat, parts[k].data, parts[k].count * sizeof(double));
      flat += parts[k].count;
    }
    out->synchronized[r] = world->state.robots[r].velocity_synchronized;
  }
  return LCP_OK;
}

void lcp__step_backup_restore(lcp_world_t *world, const step_backup *backup) {
  const world_model *model = &world->model;
  if (model->body_count > 0)
    memcpy(world->state.bodies, backup->bodies, (size_t)model->body_count * sizeof(body_state));
  const double *flat = backup->robot_doubles;
  for (int32_t r = 0; r < model->robot_count; ++r) {
    robot_snapshot_part parts[ROBOT_SNAPSHOT_PARTS];
    int count = lcp__robot_state_parts(&model->robots[r], &world->state.robots[r], parts);
    for (int k = 0; k < count; ++k) {
      memcpy(parts[k].data, flat, parts[k].count * sizeof(double));
      flat += parts[k].count;
    }
    world->state.robots[r].velocity_synchronized = backup->synchronized[r] != 0;
  }
  /* The link poses and velocities were computed for the rejected state:
   * they are refreshed from the restored one when next read. */
  world->robot_kinematics_stale = model->robot_count > 0;
}

/* ---- the bounds ---- */

static bool all_finite(const double *v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(v[i]))
      return false;
  return true;
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* The first broken rule of a position (3 values) and a linear and an angular
 * velocity, each NULL when not checked: false with the reason in why. */
bool lcp__motion_within_bounds(const double *position, const double *linear, const double *angular,
                               char *why, size_t size) {
  if (position)
    for (int k = 0; k < 3; ++k)
      if (!(fabs(position[k]) <= LCP_STATE_MAX_POSITION)) {
        snprintf(why, size, "position %c = %.9g m is beyond the bound of %g m", "xyz"[k],
                 position[k], LCP_STATE_MAX_POSITION);
        return false;
      }
  if (linear && !(norm3(linear) <= LCP_STATE_MAX_LINEAR_SPEED)) {
    snprintf(why, size, "speed %.9g m/s is beyond the bound of %g m/s", norm3(linear),
             LCP_STATE_MAX_LINEAR_SPEED);
    return false;
  }
  if (angular && !(norm3(angular) <= LCP_STATE_MAX_ANGULAR_SPEED)) {
    snprintf(why, size, "angular speed %.9g rad/s is beyond the bound of %g rad/s", norm3(angular),
             LCP_STATE_MAX_ANGULAR_SPEED);
    return false;
  }
  return true;
}

static bool body_ok(const body_state *b, bool bounds, char *why, size_t size) {
  const double values[13] = {b->position.x,        b->position.y,         b->position.z,
                             b->orientation.w,     b->orientation.x,      b->orientation.y,
                             b->orientation.z,     b->linear_velocity.x,  b->linear_velocity.y,
                             b->linear_velocity.z, b->angular_velocity.x, b->angular_velocity.y,
                             b->angular_velocity.z};
  if (!all_finite(values, 13)) {
    snprintf(why, size, "its pose or twist is not finite");
    return false;
  }
  return !bounds || lcp__motion_within_bounds(&values[0], &values[7], &values[10], why, size);
}

static bool robot_ok(const robot_model *rm, const double *q_all, const double *qd_all, bool bounds,
                     char *why, size_t size) {
  const mb_model *mb = &rm->mb;
  for (int32_t i = 0; i < mb->nq; ++i)
    if (!isfinite(q_all[i])) {
      snprintf(why, size, "q[%d] is not finite", (int)i);
      return false;
    }
  for (int32_t i = 0; i < mb->nv; ++i)
    if (!isfinite(qd_all[i])) {
      snprintf(why, size, "qd[%d] is not finite", (int)i);
      return false;
    }
  if (!bounds)
    return true;
  char part[160];
  if (mb->floating && !lcp__motion_within_bounds(q_all, qd_all, qd_all + 3, part, sizeof part)) {
    snprintf(why, size, "its base's %s", part);
    return false;
  }
  for (int32_t l = 0; l < mb->link_count; ++l) {
    const mb_link *link = &mb->links[l];
    if (link->q_index < 0)
      continue;
    double q = q_all[link->q_index], qd = qd_all[link->v_index];
    bool prismatic = link->joint_type == LCP_JOINT_PRISMATIC;
    double speed_bound = prismatic ? LCP_STATE_MAX_LINEAR_SPEED : LCP_STATE_MAX_ANGULAR_SPEED;
    if (prismatic && !(fabs(q) <= LCP_STATE_MAX_POSITION)) {
      snprintf(why, size, "the joint of link '%s' is at %.9g m, beyond the bound of %g m",
               rm->link_names[l], q, LCP_STATE_MAX_POSITION);
      return false;
    }
    if (!(fabs(qd) <= speed_bound)) {
      snprintf(why, size, "the joint of link '%s' moves at %.9g %s, beyond the bound of %g",
               rm->link_names[l], qd, prismatic ? "m/s" : "rad/s", speed_bound);
      return false;
    }
  }
  return true;
}

bool lcp__robot_motion_within_bounds(const robot_model *rm, const double *q, const double *qd,
                                     char *why, size_t size) {
  return robot_ok(rm, q, qd, true, why, size);
}

/* The common case, every step: a few comparisons a body, no square root
 * and no message. A NaN fails every comparison and an infinity every bound
 * (a quaternion's components sum to NaN or an infinity when one is not
 * finite: their magnitudes are near 1 otherwise), so a body that passes
 * is finite and within the bounds; one that does not is looked at again by
 * body_ok, which says why. */
static bool body_quick_ok(const body_state *b) {
  const double p = LCP_STATE_MAX_POSITION, v = LCP_STATE_MAX_LINEAR_SPEED,
               w = LCP_STATE_MAX_ANGULAR_SPEED;
  const quat q = b->orientation;
  return fabs(b->position.x) <= p && fabs(b->position.y) <= p && fabs(b->position.z) <= p &&
         v3_len2(b->linear_velocity) <= v * v && v3_len2(b->angular_velocity) <= w * w &&
         isfinite(q.w + q.x + q.y + q.z);
}

int lcp__state_check(const lcp_world_t *world, bool bounds, char *why, size_t size) {
  const world_model *model = &world->model;
  char reason[200];
  for (int32_t i = 0; i < model->body_count; ++i) {
    if (model->bodies[i].type == LCP_BODY_STATIC)
      continue;
    const body_state *b = &world->state.bodies[i];
    if (bounds && body_quick_ok(b))
      continue;
    if (!body_ok(b, bounds, reason, sizeof reason)) {
      snprintf(why, size, "body id %u: %s", (unsigned)model->bodies[i].id, reason);
      return LCP_ERR_NUMERIC;
    }
  }
  for (int32_t r = 0; r < model->robot_count; ++r)
    if (!robot_ok(&model->robots[r], world->state.robots[r].q, world->state.robots[r].qd, bounds,
                  reason, sizeof reason)) {
      snprintf(why, size, "robot '%s': %s", model->robots[r].name, reason);
      return LCP_ERR_NUMERIC;
    }
  return LCP_OK;
}
