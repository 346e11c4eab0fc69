/* SPDX-License-Identifier: Apache-2.0 */
/* The calls that edit the world between steps: SetRobotState,
 * SetBodyState, ApplyWrench and SetDynamics. Each checks its whole request
 * (every name resolved, every value in range) before it changes anything,
 * and on success builds its reply message in `arena` into *result. On
 * failure it returns a negative lcp_status_t with `error` filled, naming the
 * request's field; LCP_ERR_NO_MEMORY means the arena refused the reply (the
 * arena has reported it). */
#ifndef LCPD_HANDLERS_STATE_H
#define LCPD_HANDLERS_STATE_H

#include "error.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

int lcpd_set_robot_state(lcpd_sim_t *sim, lcpd_arena_t *arena,
                         const Lcpsim__V1__SetRobotStateRequest *req, void **result,
                         lcpd_error_t *error);
int lcpd_set_body_state(lcpd_sim_t *sim, lcpd_arena_t *arena,
                        const Lcpsim__V1__SetBodyStateRequest *req, void **result,
                        lcpd_error_t *error);
int lcpd_apply_wrench(lcpd_sim_t *sim, lcpd_arena_t *arena,
                      const Lcpsim__V1__ApplyWrenchRequest *req, void **result,
                      lcpd_error_t *error);
int lcpd_set_dynamics(lcpd_sim_t *sim, lcpd_arena_t *arena,
                      const Lcpsim__V1__SetDynamicsRequest *req, void **result,
                      lcpd_error_t *error);

#endif
