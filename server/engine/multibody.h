/* SPDX-License-Identifier: Apache-2.0 */
/* Featherstone multibody kernel (R. Featherstone, "Rigid Body Dynamics Algorithms"):
 * a tree of links in reduced coordinates, with the articulated-body algorithm
 * (forward dynamics, O(n)), the composite-rigid-body algorithm (joint-space
 * mass matrix), recursive Newton–Euler (inverse dynamics), and the pieces the
 * LCP needs: Jacobian rows of points on links and the response M⁻¹Jᵀ of a row,
 * O(n) each, from the factors of the last articulated-body pass.
 *
 * Model / data split as MuJoCo: mb_model is what the robot is (built once
 * from an lcp_robot_def_t); mb_data holds everything derived from a state
 * (q, qd), sized once for its model so that no call allocates.
 *
 * Coordinates (see lcpsim/robot.h): q = [base position (3), base quaternion
 * w,x,y,z (4)] for a floating base, then one value per movable joint;
 * qd = [base linear velocity of the base origin (3), base angular velocity
 * (3)], world axes, for a floating base, then joint rates. Spatial vectors
 * are linear part first. Gravity is a world vector.
 *
 * A fixed base sits at links[0].parent_from_joint (its world pose; identity
 * after lcp__mb_model_init, set by the owner). lcp__mb_kinematics accepts qd = NULL
 * (zero velocities). lcp__mb_forward_dynamics, lcp__mb_mass_matrix (with zero
 * velocities) and lcp__mb_inverse_dynamics run the kinematics themselves, so d
 * holds their poses afterwards; the last two leave the forward-dynamics
 * factors intact. Massless links are accepted on fixed joints only.
 */
#ifndef LCP_MULTIBODY_H
#define LCP_MULTIBODY_H

#include "lcp_math.h"
#include "lcpsim/robot.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mb_link {
  int32_t parent; /* -1 for the base (link 0) */
  lcp_joint_type_t joint_type;
  xform parent_from_joint; /* joint frame in the parent link frame */
  vec3 axis;               /* unit, joint frame */
  double mass;
  vec3 com;        /* link frame */
  mat3 inertia;    /* about com, link axes */
  int32_t q_index; /* -1 for a fixed joint and for the base */
  int32_t v_index; /* -1 for a fixed joint and for the base */
} mb_link;

typedef struct mb_model {
  bool floating;
  int32_t link_count;
  int32_t joint_count; /* movable joints */
  int32_t nq, nv;
  mb_link *links; /* parents before children */
} mb_model;

/* Builds the model from a definition, checking it: a tree with link 0 the
 * only root and parents before children, positive masses and SPD inertias,
 * unit-normalisable axes and quaternions, finite numbers. On error returns
 * LCP_ERR_INVALID_ARGUMENT with a message in err (naming the link) and leaves
 * *out empty. */
int lcp__mb_model_init(mb_model *out, const lcp_robot_def_t *def, char *err, size_t err_size);
void lcp__mb_model_free(mb_model *m);
/* Whether a row-major inertia is symmetric (within rounding) and positive
 * definite (strict) or semidefinite, by Cholesky pivots relative to its
 * trace: the test lcp__mb_model_init applies to every link. */
bool lcp__mb_inertia_ok(const double *I, bool strict);

/* Derived quantities of one state; opaque beyond what is listed. */
typedef struct mb_data {
  xform *link_x; /* [link_count] world pose of each link frame */
  vec3 *link_v;  /* [link_count] world linear velocity of each link frame origin */
  vec3 *link_w;  /* [link_count] world angular velocity */
  void *work;    /* the kernel's own workspace (articulated inertias, factors, ...) */
  size_t work_size;
} mb_data;

int lcp__mb_data_init(mb_data *d, const mb_model *m);
void lcp__mb_data_free(mb_data *d);

/* Link poses and velocities from (q, qd). */
void lcp__mb_kinematics(const mb_model *m, const double *q, const double *qd, mb_data *d);
/* Only link_x, link_v and link_w of lcp__mb_kinematics (bit for bit), for
 * reading a state's poses: the rest of d is left as it was, so the
 * functions below that use "the last lcp__mb_kinematics" need a full pass. */
void lcp__mb_link_kinematics(const mb_model *m, const double *q, const double *qd, mb_data *d);

/* Articulated-body algorithm: joint accelerations qdd [nv] for generalised
 * forces tau [nv] (NULL = 0), world wrenches on links link_wrench
 * [link_count × 6] (force, then torque about the link frame origin, world
 * axes; NULL = none), and gravity. Calls lcp__mb_kinematics itself. Keeps the
 * articulated inertias and their factors in d for mb_response_*. */
void lcp__mb_forward_dynamics(const mb_model *m, const double *q, const double *qd,
                              const double *tau, const double *link_wrench, vec3 gravity,
                              mb_data *d, double *qdd);

/* The Jacobian row J [nv] of a point on a link: J·qd = dir·v(point) +
 * ang_dir·ω(link), for world vectors dir and ang_dir (either may be zero).
 * Uses the poses of the last lcp__mb_kinematics. O(depth of the link). */
void lcp__mb_point_jacobian_row(const mb_model *m, const mb_data *d, int32_t link, vec3 point,
                                vec3 dir, vec3 ang_dir, double *J);

/* Response dqd = M⁻¹ Jᵀ of a unit world impulse: the linear impulse dir at
 * point plus the angular impulse ang_dir, applied to link. Uses the factors
 * of the last lcp__mb_forward_dynamics (same q): O(n), no velocity or gravity
 * terms. Equals M⁻¹ · lcp__mb_point_jacobian_row(...)ᵀ. */
void lcp__mb_response_point(const mb_model *m, mb_data *d, int32_t link, vec3 point, vec3 dir,
                            vec3 ang_dir, double *dqd);

/* lcp__mb_response_point for three linear impulses dirs[0..2] at one point (no
 * angular part), into dqd[k nv .. (k + 1) nv): one pass for the three. */
void lcp__mb_response_point3(const mb_model *m, mb_data *d, int32_t link, vec3 point,
                             const vec3 dirs[3], double *dqd);
/* The same and, at dqd[3 nv .. 4 nv), the response to a pure angular
 * impulse about spin (lcp__mb_response_point with dir 0, ang_dir spin), all
 * in one pass: a contact patch's normal and tangents and its torsion. */
void lcp__mb_response_point3_spin(const mb_model *m, mb_data *d, int32_t link, vec3 point,
                                  const vec3 dirs[3], vec3 spin, double *dqd);

/* Response dqd = M⁻¹ e_k of a unit generalised impulse on velocity index k
 * (a joint, or a base coordinate): column k of M⁻¹. O(n). */
void lcp__mb_response_dof(const mb_model *m, mb_data *d, int32_t v_index, double *dqd);

/* Composite-rigid-body algorithm: M(q) [nv × nv], row-major, symmetric. */
void lcp__mb_mass_matrix(const mb_model *m, const double *q, mb_data *d, double *M);

/* Recursive Newton–Euler: tau [nv] = M qdd + C qd + g for the given qdd
 * (NULL = 0) and gravity. */
void lcp__mb_inverse_dynamics(const mb_model *m, const double *q, const double *qd,
                              const double *qdd, vec3 gravity, mb_data *d, double *tau);

/* q ← q ⊕ h qd: joints and base position add; the base quaternion is
 * integrated with the world angular velocity and renormalised. */
void lcp__mb_integrate_positions(const mb_model *m, double *q, const double *qd, double h);

/* Kinetic energy ½ qdᵀ M qd, potential energy −Σ m g·c, and total momentum
 * (linear, and angular about the world origin) of the links at (q, qd), from
 * the last lcp__mb_kinematics. */
double lcp__mb_kinetic_energy(const mb_model *m, const mb_data *d);
double lcp__mb_potential_energy(const mb_model *m, const mb_data *d, vec3 gravity);
void lcp__mb_momentum(const mb_model *m, const mb_data *d, vec3 *linear, vec3 *angular);

/* Total mass and world centre of mass from the last lcp__mb_kinematics. */
void lcp__mb_center_of_mass(const mb_model *m, const mb_data *d, double *mass, vec3 *com);

/* Floating base only: sets the base twist qd[0..6) at configuration q so
 * that the total momentum (linear, and angular about the world origin) with
 * the joint rates in qd equals the given one, then runs the kinematics.
 * O(n): two kinematics passes and a 3×3 solve. */
void lcp__mb_set_base_velocity_for_momentum(const mb_model *m, const double *q, double *qd,
                                            vec3 linear, vec3 angular, mb_data *d);

#endif
