/* SPDX-License-Identifier: Apache-2.0 */
/* Wrenches on bodies and links, given in the world frame or in the target's
 * own frame, applied for the next step only or held: kept here and applied
 * again before every step (lcpd_sim_step) until cleared. Held wrenches live
 * in the daemon, not in the engine's state: a snapshot neither keeps nor
 * restores them, Reset clears them, and one whose target is removed is
 * dropped at the next step. */
#ifndef LCPD_HELD_WRENCH_H
#define LCPD_HELD_WRENCH_H

#include "error.h"

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct lcpd_wrench {
  uint32_t hold_id;   /* held: > 0; for the next step only: 0 */
  bool on_robot;      /* a robot's link, else a free body */
  lcp_body_id body;   /* !on_robot */
  lcp_robot_id robot; /* on_robot */
  int32_t link;       /* on_robot */
  bool local;         /* force, torque and point in the target's frame */
  bool has_point;     /* else at the body's centre of mass or the link frame's origin */
  double force[3], torque[3], point[3];
} lcpd_wrench_t;

typedef struct lcpd_held_wrenches {
  lcpd_wrench_t *items;
  int32_t count, capacity;
  uint32_t last_id; /* ids are never reused within a daemon's life */
} lcpd_held_wrenches_t;

/* Adds the wrench to the target's pending forces for the next step, turned
 * into world axes at the target's current pose. */
int lcpd_wrench_apply(lcp_world_t *world, const lcpd_wrench_t *wrench, lcpd_error_t *error);

/* Keeps a copy of the wrench; *hold_id gets its id. */
int lcpd_held_add(lcpd_held_wrenches_t *held, const lcpd_wrench_t *wrench, uint32_t *hold_id,
                  lcpd_error_t *error);
/* Removes the held wrench of that id; false when there is none. */
bool lcpd_held_remove(lcpd_held_wrenches_t *held, uint32_t hold_id);
void lcpd_held_clear(lcpd_held_wrenches_t *held);
void lcpd_held_destroy(lcpd_held_wrenches_t *held);
/* Applies every held wrench for the coming step; a wrench whose target is
 * gone is dropped. */
int lcpd_held_apply_all(lcpd_held_wrenches_t *held, lcp_world_t *world, lcpd_error_t *error);

#endif
