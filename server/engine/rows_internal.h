/* SPDX-License-Identifier: Apache-2.0 */
/* What the row builders share (rows.c, contact_rows.c, joint_rows.c): the
 * writer the rows go through, the empty side, and the positional targets.
 * The rows and their form are described at the top of rows.c. */
#ifndef LCP_ROWS_INTERNAL_H
#define LCP_ROWS_INTERNAL_H

#include "step_context.h"

/* Where the rows go. */
typedef struct row_writer {
  solver_problem *p;
  solver_contact *contacts; /* the problem's, writable */
  int32_t row;              /* the next row */
  int64_t coef;             /* the next coefficient */
  double *scratch;          /* 2 nv of the widest robot: a self-contact's other link */
  double *responses;        /* 12 nv: a patch's link responses (contact_rows.c) */
} row_writer;

static inline void write_absent_side(solver_row *row, int side) {
  row->dof_offset[side] = 0;
  row->dof_count[side] = 0;
  row->coef_offset[side] = 0;
}

/* Baumgarte stabilisation with slop (Baumgarte, "Stabilization of
 * Constraints and Integrals of Motion in Dynamical Systems"; the slop as in
 * Catto's "Iterative Dynamics with Temporal Coherence") for a depth (> 0
 * penetrating): the target velocity pushes out what is beyond the slop over
 * a few steps, never faster than the push-out bound v_push (PhysX's
 * maximum depenetration velocity, Box2D's maximum push-out speed):
 *
 *     target = min(β (depth − slop)/h, v_push),
 *
 * and a gap (depth < 0) lets the sides approach by exactly the gap in this
 * step, target = depth/h (a speculative contact). The main iterations
 * solve with this target and the positions move with their velocities. */
static inline double rows_position_target(const lcp_world_settings_t *s, double depth) {
  if (depth > s->baumgarte_slop)
    return fmin(s->baumgarte_beta * (depth - s->baumgarte_slop) / s->timestep, s->max_push_speed);
  if (depth < 0.0)
    return depth / s->timestep;
  return 0.0;
}

/* The same row's target in the relax iterations (the velocities kept):
 * the speculative part alone, depth/h for a gap and 0 otherwise, so a
 * push-out moves the positions and leaves no velocity behind (Catto's
 * "soft step" relax in Box2D v3; Bullet's split impulse does the same
 * with a second solve). */
static inline double rows_relax_target(const lcp_world_settings_t *s, double depth) {
  return depth < 0.0 ? depth / s->timestep : 0.0;
}

/* ---- contact_rows.c ---- */

/* How many coefficients the contact rows of the step's manifolds take,
 * and the widest robot among their sides (for the writer's scratch). */
int64_t lcp__contact_rows_coefficients(const lcp_world_t *world, const step_context *ctx);
/* The rows of every manifold, in manifold order, through w; returns how
 * many points were warm-started. */
int32_t lcp__contact_rows_build(const lcp_world_t *world, step_context *ctx, row_writer *w);

/* ---- joint_rows.c ---- */

/* The rows of robot `robot`'s movable joints, through w. */
void lcp__joint_rows_build(lcp_world_t *world, step_context *ctx, int32_t robot, row_writer *w);

#endif
