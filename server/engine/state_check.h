/* SPDX-License-Identifier: Apache-2.0 */
/* The check of a state after a step, and the backup that undoes a step whose
 * state fails it (state_check.c). */
#ifndef LCP_STATE_CHECK_H
#define LCP_STATE_CHECK_H

#include "arena.h"
#include "world_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a step's integration overwrites, copied into the step's scratch. */
typedef struct step_backup {
  body_state *bodies;    /* [body_count] */
  double *robot_doubles; /* every robot's snapshot parts, in robot order */
  uint8_t *synchronized; /* [robot_count] velocity_synchronized */
} step_backup;

int lcp__step_backup_save(const lcp_world_t *world, arena *a, step_backup *out);
/* Puts the bodies' and robots' states back bitwise as saved. */
void lcp__step_backup_restore(lcp_world_t *world, const step_backup *backup);

/* LCP_OK when every body's and robot's state is finite and, when bounds is
 * set, within LCP_STATE_MAX_POSITION, LCP_STATE_MAX_LINEAR_SPEED and
 * LCP_STATE_MAX_ANGULAR_SPEED; otherwise LCP_ERR_NUMERIC and, in why, the
 * body or robot and the value at fault. */
int lcp__state_check(const lcp_world_t *world, bool bounds, char *why, size_t size);

/* The same bounds for a state an edit is about to set, so that an edit
 * cannot leave a world whose every step fails: a position (3 values) and a
 * linear and an angular velocity, each NULL when not set; a robot's q [nq]
 * and qd [nv]. false with the reason in why. */
bool lcp__motion_within_bounds(const double *position, const double *linear, const double *angular,
                               char *why, size_t size);
bool lcp__robot_motion_within_bounds(const robot_model *rm, const double *q, const double *qd,
                                     char *why, size_t size);

#endif
