/* SPDX-License-Identifier: Apache-2.0 */
/* The world as a viewer draws it: every geom of the world body, of each
 * robot's links and of each free body, with its shape and its pose in its
 * owner's frame (lcpsim.v1 Scene), read from the engine's geoms (what the
 * step collides, whatever added them: the start-up scene, LoadModel, Spawn,
 * a Reset's rebuild). The GetScene call, the recordings and the viewer's
 * WebSocket send it. */
#ifndef LCPD_SCENE_VIEW_H
#define LCPD_SCENE_VIEW_H

#include "error.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

/* GetInfo's reply: the names, joints, frames and settings of the world. */
Lcpsim__V1__GetInfoReply *lcpd_new_info_reply(lcpd_arena_t *arena, const lcpd_sim_t *sim);

/* GetScene's reply: the Scene (revision lcpd_sim_scene_revision) and the
 * GetInfoReply of the same world, built in arena. NULL when the arena
 * refuses (error says why, LCP_ERR_NO_MEMORY) or the engine does not know
 * a geom it listed (LCP_ERR_STATE). */
Lcpsim__V1__GetSceneReply *lcpd_new_scene_reply(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                                lcpd_error_t *error);

#endif
