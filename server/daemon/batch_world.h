/* SPDX-License-Identifier: Apache-2.0 */
/* A world's part of a BatchStep (batch.h), served on whichever thread runs
 * its job: the calls RestoreState, SetRobotState, SetBodyState and Step
 * of handlers.h, in that order, on a call of its own. */
#ifndef LCPD_BATCH_WORLD_H
#define LCPD_BATCH_WORLD_H

#include "handlers.h"

#include <stdatomic.h>
#include <stddef.h>

/* One world's part of a BatchStep (req), served on the calling thread with
 * job, a call of its own (its reply arena holds the result's state and
 * snapshot; its buffers are its own, so that jobs on several threads share
 * nothing): the world restored (ws->restore), its robots' and bodies'
 * states set, its targets set and its steps run, exactly as the calls
 * RestoreState, SetRobotState, SetBodyState and Step (with the targets)
 * would, one by one. A failure leaves the world as before the part (or
 * rebuilt, world_restored) and is this result's status, its message
 * prefixed with the world's place in the request (index) and its name. The Step stops early (OK,
 * fewer steps run) once *stop is set. out->world is left to the caller. */
void lcpd_call_world_step(lcpd_call_t *job, lcpd_sim_t *sim, const Lcpsim__V1__WorldStep *ws,
                          const Lcpsim__V1__BatchStepRequest *req, size_t index, const char *name,
                          const atomic_bool *stop, Lcpsim__V1__BatchStepResult *out);

#endif
