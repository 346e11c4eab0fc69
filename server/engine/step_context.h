/* SPDX-License-Identifier: Apache-2.0 */
/* What a step derives from the world, shared by the step's stages
 * (step.c) and the row construction (rows.c). All of it lives in the
 * scratch arena and is gone when the step returns. */
#ifndef LCP_STEP_CONTEXT_H
#define LCP_STEP_CONTEXT_H

#include "solver.h"
#include "world_internal.h"

#include <math.h>
#include <stdint.h>

/* Arrays are indexed by body slot [body_count] or geom slot [geom_count]
 * unless noted. */
typedef struct step_context {
  const lcp_world_settings_t *settings;
  int32_t body_count;
  int32_t geom_count;
  xform *body_x;           /* [body_count] world pose of the centre of mass */
  mat3 *inv_inertia_world; /* [body_count] R I⁻¹ Rᵀ; zero for static bodies */
  int32_t *body_dof;       /* [body_count] offset in the velocity vector, -1 if static */
  int32_t *geom_body;      /* [geom_count] body slot; -1 for a robot link's geom */
  int32_t *geom_robot;     /* [geom_count] robot slot; -1 for a body's geom */
  int32_t *geom_link;      /* [geom_count] the robot link, or -1 */
  uint8_t *geom_static;    /* [geom_count] nothing can move it (static body, fixed base link) */
  int32_t robot_count;
  int32_t *robot_dof;          /* [robot_count] offset of the robot's qd in the velocity vector */
  uint8_t **link_moves;        /* [robot_count][link_count] some dof moves the link */
  double **feedforward;        /* [robot_count][joint_count] joint force applied outside the rows:
                                  torque mode and gravity compensation, within the effort limit */
  int32_t **joint_rows;        /* [robot_count][JOINT_ROW_KINDS joint_count] row index or -1 */
  double (*robot_momentum)[6]; /* [robot_count] floating bases: momentum due at the step's end,
                                  before constraint impulses (linear; angular about the origin) */
  double **robot_tau;          /* [robot_count][nv] generalised forces of the step (no rows) */
  double **robot_qdd;          /* [robot_count][nv] ABA accelerations at the step's start */
  uint8_t *robot_free;         /* [robot_count] no row touches it: velocity Verlet this step */
  xform *geom_x;               /* [geom_count] */
  vec3 *geom_lo, *geom_hi;     /* [geom_count] margin-inflated world boxes */
  double *geom_reach;          /* [geom_count] how far the geom can move this step, at most */
  int32_t pair_count;
  sap_pair *pairs; /* [pair_count] geom slots, a < b */
  int32_t manifold_count;
  manifold *manifolds;    /* [manifold_count] */
  int32_t *manifold_pair; /* [manifold_count] index into pairs */
  int32_t *manifold_row;  /* [manifold_count] first row: 3 rows per point */
  int32_t contact_count;
  solver_problem problem;
  double *u_free;  /* [dof_count] velocities before constraints */
  uint8_t *pushed; /* [body_count] a constraint impulse acted on it this step */
  int32_t warm_started;
  int32_t iterations; /* the solve's sweeps */
  double residual;    /* the solve's last residual */
} step_context;

/* n elements of type from the arena (at least one, so that NULL means out
 * of memory). */
#define STEP_NEW(a, type, n) ARENA_NEW(a, type, (n) > 0 ? (n) : 1)

/* A joint's effort limit: its controller's when set (> 0), else the URDF's,
 * else none. */
static inline double joint_effort_limit(const joint_model *joint,
                                        const lcp_joint_control_t *control) {
  if (control->effort_limit > 0.0)
    return control->effort_limit;
  return joint->effort_limit > 0.0 ? joint->effort_limit : INFINITY;
}

/* ---- rows.c ---- */

/* Does any row touch robot r this step: a contact on one of its links, or
 * a joint row (limit, damping, friction, controller)? */
bool lcp__rows_robot_touched(const lcp_world_t *world, const step_context *ctx, int32_t r);
/* After a solve: when a joint's solved velocity takes it past a position
 * or velocity limit that has no row (momentum passed on from a joint
 * stopped at its limit), the joint rows are made again with the rows it
 * needs, warm-started from the solve, and *added is set: the problem is
 * to be solved again (joint_rows.c). LCP_OK or LCP_ERR_NO_MEMORY. */
int lcp__joint_rows_complete(lcp_world_t *world, step_context *ctx, bool *added);
/* The LCP of the step into ctx->problem, from the free velocities in
 * ctx->u_free: a contact point's normal and friction rows, each joint's
 * limit, damping, friction and controller rows, their warm starts. */
int lcp__rows_build(lcp_world_t *world, step_context *ctx);

#endif
