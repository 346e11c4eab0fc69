/* SPDX-License-Identifier: Apache-2.0 */
/* Joint targets: a SetTargetRequest (a robot's joints by name or all of
 * them, their controller mode, set points, gains and limits) checked and
 * planned against a world before anything changes, then applied. SetTarget,
 * Step and each world of a BatchStep plan all their targets first, so that a
 * bad one leaves the world as it was. */
#ifndef LCPD_TARGETS_H
#define LCPD_TARGETS_H

#include "error.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdbool.h>
#include <stdint.h>

/* The controllers a SetTargetRequest leaves on one robot's joints. */
typedef struct lcpd_target_plan {
  const lcpd_robot_t *robot;
  int32_t joint_count;
  lcp_joint_control_t *controls; /* all joints, in joint order */
  bool set_gravity_compensation;
  bool gravity_compensation;
} lcpd_target_plan;

/* Plans one SetTargetRequest, its arrays in `arena`; `field` names the
 * request in errors. latest (NULL for a lone SetTarget) has a slot per robot
 * of the world, pointing at the last plan an earlier target of the same
 * request made for that robot (NULL: none yet); this plan takes its slot.
 * The slot makes planning n targets cost O(n) lookups rather than a scan of
 * the earlier plans for each. LCP_OK, or a negative lcp_status_t with
 * `error` filled (LCP_ERR_NO_MEMORY: the arena refused, and has said so). */
int lcpd_plan_target(lcpd_arena_t *arena, lcpd_sim_t *sim, const Lcpsim__V1__SetTargetRequest *t,
                     const char *field, const lcpd_target_plan **latest, lcpd_target_plan *plan,
                     lcpd_error_t *error);

/* Applies planned targets in order. The caller keeps a snapshot to undo a
 * partial application (the plans were checked, so it should not happen). */
int lcpd_apply_target_plans(lcpd_sim_t *sim, const lcpd_target_plan *plans, int32_t count,
                            lcpd_error_t *error);

#endif
