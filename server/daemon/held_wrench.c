/* SPDX-License-Identifier: Apache-2.0 */
#include "held_wrench.h"

#include <stdlib.h>
#include <string.h>

int lcpd_wrench_apply(lcp_world_t *world, const lcpd_wrench_t *wrench, lcpd_error_t *error) {
  double position[3], orientation[4];
  int rc = wrench->on_robot
               ? lcp_robot_get_link_pose(world, wrench->robot, wrench->link, position, orientation)
               : lcp_body_get_pose(world, wrench->body, position, orientation);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "the wrench's %s is gone", wrench->on_robot ? "robot" : "body");
  /* World axes: a local vector v is R v, a local point p is x + R p. */
  double force[3], torque[3], point[3];
  memcpy(force, wrench->force, sizeof force);
  memcpy(torque, wrench->torque, sizeof torque);
  memcpy(point, wrench->has_point ? wrench->point : (const double[3]){0.0, 0.0, 0.0}, sizeof point);
  if (wrench->local) {
    lcp_quat_rotate(orientation, force, force);
    lcp_quat_rotate(orientation, torque, torque);
    lcp_quat_rotate(orientation, point, point);
  }
  if (wrench->local || !wrench->has_point)
    for (int k = 0; k < 3; ++k)
      point[k] += position[k];
  if (wrench->on_robot)
    rc = lcp_robot_apply_link_wrench(world, wrench->robot, wrench->link, force, point, torque);
  else if ((rc = lcp_body_apply_force(world, wrench->body, force, point)) == LCP_OK)
    rc = lcp_body_apply_torque(world, wrench->body, torque);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s", lcp_world_last_error(world));
  return LCP_OK;
}

int lcpd_held_add(lcpd_held_wrenches_t *held, const lcpd_wrench_t *wrench, uint32_t *hold_id,
                  lcpd_error_t *error) {
  if (held->count == held->capacity) {
    int32_t capacity = held->capacity ? 2 * held->capacity : 8;
    lcpd_wrench_t *grown = realloc(held->items, (size_t)capacity * sizeof *grown);
    if (!grown)
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "no memory to hold another wrench");
    held->items = grown;
    held->capacity = capacity;
  }
  if (held->last_id == UINT32_MAX)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "no hold ids left");
  lcpd_wrench_t *kept = &held->items[held->count++];
  *kept = *wrench;
  kept->hold_id = ++held->last_id;
  *hold_id = kept->hold_id;
  return LCP_OK;
}

bool lcpd_held_remove(lcpd_held_wrenches_t *held, uint32_t hold_id) {
  for (int32_t i = 0; i < held->count; ++i)
    if (held->items[i].hold_id == hold_id) {
      /* Kept in the order given, so that forces add up in the same order
       * every step. */
      memmove(&held->items[i], &held->items[i + 1],
              (size_t)(held->count - i - 1) * sizeof *held->items);
      held->count--;
      return true;
    }
  return false;
}

void lcpd_held_clear(lcpd_held_wrenches_t *held) { held->count = 0; }

void lcpd_held_destroy(lcpd_held_wrenches_t *held) {
  free(held->items);
  *held = (lcpd_held_wrenches_t){0};
}

int lcpd_held_apply_all(lcpd_held_wrenches_t *held, lcp_world_t *world, lcpd_error_t *error) {
  for (int32_t i = 0; i < held->count;) {
    int rc = lcpd_wrench_apply(world, &held->items[i], error);
    if (rc == LCP_ERR_NOT_FOUND) {
      lcpd_held_remove(held, held->items[i].hold_id);
      continue;
    }
    if (rc != LCP_OK)
      return rc;
    ++i;
  }
  return LCP_OK;
}
