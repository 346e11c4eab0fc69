/* SPDX-License-Identifier: Apache-2.0 */
/* The rotational update of a free rigid body over one step: the torque-free
 * motion from the angular velocity the solve left, integrated so that the
 * world angular momentum is kept exactly and the kinetic energy has no
 * drift (rigid_rotation.c says how and why). */
#ifndef LCP_RIGID_ROTATION_H
#define LCP_RIGID_ROTATION_H

#include "lcp_math.h"

/* From the orientation (world_from_body) and the world angular velocity ω
 * after the solve, the orientation and world angular velocity a step h
 * later under no torque, for a body of body-frame inertia I (symmetric
 * positive definite, not necessarily diagonal) and its inverse. The world
 * angular momentum R I Rᵀ ω is the same before and after (to rounding). */
void lcp__rigid_rotation_step(quat orientation, const mat3 *inertia, const mat3 *inv_inertia,
                              vec3 angular_velocity, double h, quat *out_orientation,
                              vec3 *out_angular_velocity);

#endif
