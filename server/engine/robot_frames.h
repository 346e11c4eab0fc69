/* SPDX-License-Identifier: Apache-2.0 */
/* A robot's frames (lcpsim/robot.h, frames): checked and copied from its
 * definition when the robot is added. */
#ifndef LCP_ROBOT_FRAMES_H
#define LCP_ROBOT_FRAMES_H

#include "world_internal.h"

#include <stddef.h>

/* Checks def's frames: valid links, finite offsets, non-zero quaternions,
 * names non-empty, unique and unlike every link name. LCP_ERR_INVALID_ARGUMENT
 * with the reason in why. */
int lcp__robot_frames_check(const lcp_robot_def_t *def, char *why, size_t why_size);

/* Copies def's frames (checked) into model->frames; LCP_ERR_NO_MEMORY. */
int lcp__robot_frames_copy(robot_model *model, const lcp_robot_def_t *def);

#endif
