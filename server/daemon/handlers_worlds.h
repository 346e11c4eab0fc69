/* SPDX-License-Identifier: Apache-2.0 */
/* The calls about worlds: CreateWorld, DestroyWorld and ListWorlds (the
 * fourth, BatchStep, is batch.h's). Each returns LCP_OK with the call's
 * reply ready, or a negative lcp_status_t with call->error filled and
 * nothing changed. */
#ifndef LCPD_HANDLERS_WORLDS_H
#define LCPD_HANDLERS_WORLDS_H

#include "handlers.h"
#include "worlds.h"

int lcpd_handle_create_world(lcpd_call_t *call, lcpd_worlds_t *worlds,
                             const Lcpsim__V1__CreateWorldRequest *req);
int lcpd_handle_destroy_world(lcpd_call_t *call, lcpd_worlds_t *worlds,
                              const Lcpsim__V1__DestroyWorldRequest *req);
int lcpd_handle_list_worlds(lcpd_call_t *call, const lcpd_worlds_t *worlds, uint32_t workers);

#endif
