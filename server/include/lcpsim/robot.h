/* SPDX-License-Identifier: Apache-2.0 */
/* Articulated robots: trees of links joined by revolute,
 * continuous, prismatic and fixed joints, on a fixed or floating base, in
 * reduced (joint-space) coordinates, simulated by Featherstone's algorithms
 * and solved in the same LCP as contacts.
 *
 * A robot is described by an lcp_robot_def_t (built by hand or loaded from
 * URDF by lcpsim/urdf.h) and added to a world with lcp_robot_add().
 *
 * Coordinates. q holds, for a floating base, the base position (3) and
 * orientation quaternion (w, x, y, z) first, then one value per movable joint
 * in link order; qd holds the base twist (linear velocity of the base origin,
 * then angular velocity, both in world axes) first, then the joint rates.
 * A fixed-base robot has only the joint values. */
#ifndef LCPSIM_ROBOT_H
#define LCPSIM_ROBOT_H

#include "lcpsim/lcpsim.h"

#ifdef __cplusplus
extern "C" {
#endif
LCP_API_BEGIN

#define LCP_NAME_MAX 64

typedef enum lcp_joint_type {
  LCP_JOINT_FIXED = 0,
  LCP_JOINT_REVOLUTE = 1,   /* about axis, with limits */
  LCP_JOINT_CONTINUOUS = 2, /* about axis, no position limits */
  LCP_JOINT_PRISMATIC = 3,  /* along axis, with limits */
} lcp_joint_type_t;

typedef struct lcp_link_def {
  char name[LCP_NAME_MAX];
  /* The joint that attaches this link to its parent. Link 0 is the base and
   * has no joint (its joint fields are ignored). */
  char joint_name[LCP_NAME_MAX];
  int32_t parent; /* index of the parent link, < this link's index; -1 for link 0 */
  lcp_joint_type_t joint_type;
  double origin_position[3];    /* joint frame in the parent link frame (URDF <origin>) */
  double origin_orientation[4]; /* w, x, y, z */
  double axis[3];               /* joint axis in the joint frame; unit length */
  /* The link frame is the joint frame moved by the joint value. */
  double mass;           /* kg, > 0 (a massless link must be fixed to its parent) */
  double com[3];         /* centre of mass in the link frame */
  double inertia[9];     /* about the centre of mass, link axes, row-major, SPD */
  double lower, upper;   /* position limits (rad or m); revolute and prismatic only */
  double effort_limit;   /* N·m or N; > 0, or 0 for none */
  double velocity_limit; /* rad/s or m/s; > 0, or 0 for none */
  double damping;        /* N·m·s/rad or N·s/m, ≥ 0 */
  double friction;       /* Coulomb joint friction, N·m or N, ≥ 0 */
  int32_t first_geom;    /* this link's geoms: geoms[first_geom .. first_geom + geom_count) */
  int32_t geom_count;
} lcp_link_def_t;

/* A frame: a named pose fixed to a link (see "frames" at the end). */
typedef struct lcp_frame_def {
  char name[LCP_NAME_MAX];
  int32_t link;          /* the link it is fixed to */
  double position[3];    /* in the link frame */
  double orientation[4]; /* w, x, y, z; normalised when the robot is added */
} lcp_frame_def_t;

typedef struct lcp_robot_def {
  char name[LCP_NAME_MAX];
  bool floating_base;
  int32_t link_count;
  lcp_link_def_t *links; /* link_count, parents before children */
  int32_t geom_count;
  lcp_geom_def_t *geoms; /* geom poses are in their link's frame; hull_points owned (malloc) */
  bool self_collision;   /* links collide with each other (never parent/child pairs) */
  int32_t frame_count;
  lcp_frame_def_t *frames; /* frame_count (malloc; owned, freed with the def); may be NULL */
} lcp_robot_def_t;

/* Frees what lcp_robot_def_alloc or the URDF loader allocated and NULLs *def. */
void lcp_robot_def_free(lcp_robot_def_t **def);
/* A zeroed definition with room for the given links and geoms (each link
 * default: fixed joint, identity origin, axis z, 1 kg, unit inertia). */
int lcp_robot_def_alloc(int32_t link_count, int32_t geom_count, lcp_robot_def_t **out);

/* An opaque, generation-checked id like a body's (lcp_body_id, lcpsim.h). */
typedef int32_t lcp_robot_id;

/* Adds a robot with its base at the given pose (ignored parts of a fixed base
 * are its fixed pose), all joints at 0 (clamped into their limits). */
int lcp_robot_add(lcp_world_t *world, const lcp_robot_def_t *def, const double base_position[3],
                  const double base_orientation[4], lcp_robot_id *out_id);
int lcp_robot_remove(lcp_world_t *world, lcp_robot_id id);
int lcp_robot_find(const lcp_world_t *world, const char *name, lcp_robot_id *out_id);
int32_t lcp_world_robot_count(const lcp_world_t *world);
int32_t lcp_world_robot_ids(const lcp_world_t *world, lcp_robot_id *out, int32_t capacity);

typedef struct lcp_robot_info {
  char name[LCP_NAME_MAX];
  bool floating_base;
  int32_t link_count;
  int32_t joint_count; /* movable joints (= dofs without the base) */
  int32_t nq;          /* length of q */
  int32_t nv;          /* length of qd */
} lcp_robot_info_t;
int lcp_robot_get_info(const lcp_world_t *world, lcp_robot_id id, lcp_robot_info_t *out);

typedef struct lcp_joint_info {
  char name[LCP_NAME_MAX];
  char child_link[LCP_NAME_MAX];
  lcp_joint_type_t type;
  int32_t q_index; /* in q */
  int32_t v_index; /* in qd */
  double axis[3];
  double lower, upper;
  bool has_limits;
  double effort_limit, velocity_limit, damping, friction;
} lcp_joint_info_t;
/* Movable joints, index 0 .. joint_count − 1 in link order. */
int lcp_robot_get_joint(const lcp_world_t *world, lcp_robot_id id, int32_t joint,
                        lcp_joint_info_t *out);
int lcp_robot_find_joint(const lcp_world_t *world, lcp_robot_id id, const char *name,
                         int32_t *out_joint);
int lcp_robot_find_link(const lcp_world_t *world, lcp_robot_id id, const char *name,
                        int32_t *out_link);

int lcp_robot_get_q(const lcp_world_t *world, lcp_robot_id id, double *q, int32_t nq);
int lcp_robot_set_q(lcp_world_t *world, lcp_robot_id id, const double *q, int32_t nq);
int lcp_robot_get_qd(const lcp_world_t *world, lcp_robot_id id, double *qd, int32_t nv);
int lcp_robot_set_qd(lcp_world_t *world, lcp_robot_id id, const double *qd, int32_t nv);

/* World pose of a link frame, and its twist (linear velocity of the link
 * frame origin, angular velocity; world axes). */
int lcp_robot_get_link_pose(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                            double position[3], double orientation[4]);
int lcp_robot_get_link_velocity(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                                double linear[3], double angular[3]);

/* Generalised forces (length nv: base wrench in world axes for a floating
 * base — force at the base origin, then torque — then joint forces) acting
 * during the next step only. They add up. */
int lcp_robot_apply_generalized_force(lcp_world_t *world, lcp_robot_id id, const double *f,
                                      int32_t nv);
/* A world force at a world point of a link, for the next step only. */
int lcp_robot_apply_link_force(lcp_world_t *world, lcp_robot_id id, int32_t link,
                               const double force[3], const double point[3]);

/* Joint-space mass matrix M(q) (nv × nv, row-major) by the composite-rigid-
 * body algorithm, and inverse dynamics τ = M(q) q̈ + C(q, q̇) q̇ + g(q) by
 * recursive Newton–Euler with the world's gravity, at the current state. */
int lcp_robot_mass_matrix(const lcp_world_t *world, lcp_robot_id id, double *M, int32_t nv);
int lcp_robot_inverse_dynamics(const lcp_world_t *world, lcp_robot_id id, const double *qdd,
                               double *tau, int32_t nv);
/* Unconstrained joint accelerations for the current state and the given
 * generalised forces, by the articulated-body algorithm (no contacts).
 * These three leave the world as it was; each works in a workspace of its
 * own (LCP_ERR_NO_MEMORY when it cannot have one). */
int lcp_robot_forward_dynamics(const lcp_world_t *world, lcp_robot_id id, const double *tau,
                               double *qdd, int32_t nv);

/* ---- joint control ----
 * Every movable joint has a controller, solved inside the step's LCP as one
 * soft row on the joint velocity, so stiff gains stay stable (implicit PD):
 *   position: τ = kp (q* − q⁺) + kd (qd* − qd⁺), with q⁺ = q + h qd⁺;
 *   velocity: τ = kd (qd* − qd⁺);
 *   torque:   τ = the given torque;
 * each clamped to |τ| ≤ effort limit; off: no controller (a passive joint).
 * Gains are physical: N·m/rad and N·m·s/rad (N/m and N·s/m for prismatic
 * joints). A joint that was never given a controller is off. */
typedef enum lcp_control_mode {
  LCP_CONTROL_OFF = 0,
  LCP_CONTROL_POSITION = 1,
  LCP_CONTROL_VELOCITY = 2,
  LCP_CONTROL_TORQUE = 3,
} lcp_control_mode_t;

typedef struct lcp_joint_control {
  lcp_control_mode_t mode;
  double position;     /* q*, rad or m (position mode) */
  double velocity;     /* qd*, rad/s or m/s (position and velocity modes) */
  double kp;           /* ≥ 0 (position mode; kp = 0 is a pure damper) */
  double kd;           /* ≥ 0; position mode needs kp + kd > 0, velocity mode kd > 0 */
  double torque;       /* N·m or N (torque mode) */
  double effort_limit; /* > 0 caps |τ|; 0 takes the joint's own (URDF) limit, or none */
} lcp_joint_control_t;

/* Off, zero targets and gains, effort limit from the joint. */
lcp_joint_control_t lcp_joint_control_default(void);

/* Sets the controller of one joint (index as lcp_robot_get_joint), of one
 * joint by name, or of all joint_count joints at once. Checked whole before
 * anything changes: a NaN, a negative gain or an unknown mode is
 * LCP_ERR_INVALID_ARGUMENT and leaves every controller as it was. */
int lcp_robot_set_joint_control(lcp_world_t *world, lcp_robot_id id, int32_t joint,
                                const lcp_joint_control_t *control);
int lcp_robot_set_joint_control_by_name(lcp_world_t *world, lcp_robot_id id, const char *joint,
                                        const lcp_joint_control_t *control);
int lcp_robot_set_controls(lcp_world_t *world, lcp_robot_id id, const lcp_joint_control_t *controls,
                           int32_t joint_count);
int lcp_robot_get_joint_control(const lcp_world_t *world, lcp_robot_id id, int32_t joint,
                                lcp_joint_control_t *out);

/* The joint force each joint's controller applied during the last step (λ/h
 * of its row after clamping, or the clamped torque; 0 when off), joint order.
 * Part of the state (snapshots keep it). */
int lcp_robot_get_applied_torques(const lcp_world_t *world, lcp_robot_id id, double *tau,
                                  int32_t joint_count);

/* Gravity compensation: when on, the Newton–Euler gravity torque g(q) of the
 * robot is added to its joints as a feed-forward force every step. Off by
 * default. */
int lcp_robot_set_gravity_compensation(lcp_world_t *world, lcp_robot_id id, bool on);
/* Whether it is on (LCP_ERR_NOT_FOUND: no such robot). */
int lcp_robot_get_gravity_compensation(const lcp_world_t *world, lcp_robot_id id, bool *on);

/* ---- sensors ----
 * Readings of the state and of the last step, computed when asked (nothing
 * here costs a step anything). Accelerations are the last step's: the
 * step keeps q̈ = (qd⁺ − qd)/h per robot (part of the state, kept by
 * snapshots), and every acceleration below is derived from it at the
 * current configuration and velocity. Forces from contacts are the last
 * step's impulses divided by the timestep h. Spatial pairs are linear part
 * first, world axes unless said otherwise. */

/* A link's twist in its own frame: Rᵀ v of the link frame origin and Rᵀ ω,
 * R the link's world orientation. */
int lcp_robot_get_link_velocity_local(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                                      double linear[3], double angular[3]);

/* The last step's joint-space acceleration q̈ = (qd⁺ − qd)/h (nv). */
int lcp_robot_get_qdd(const lcp_world_t *world, lcp_robot_id id, double *qdd, int32_t nv);

/* Every link's acceleration, 6 per link (link_count × 6): the classical
 * acceleration of the link frame origin (the second time derivative of its
 * world position), then the angular acceleration, world axes. By the usual
 * recursion from the base, with s the joint's world axis and r the child
 * origin less the parent's:
 *   α_c = α_p + s q̈ + ω_p × s q̇                        (revolute),
 *   a_c = a_p + α_p × r + ω_p × (ω_p × r)
 *         + s q̈ + 2 ω_p × s q̇                          (the last two: prismatic). */
int lcp_robot_get_link_accelerations(const lcp_world_t *world, lcp_robot_id id,
                                     double *accelerations, int32_t link_count);

/* Joint reaction wrenches, 6 per link (link_count × 6): the wrench the
 * parent transmits to the subtree of each link through its joint (the
 * actuation along the joint's axis included), force then torque about the
 * link frame origin (the joint's origin), world axes. By Newton–Euler on
 * the subtree with the last step's accelerations, its gravity, the external
 * wrenches applied during the step and its contacts' forces:
 *   f_joint = Σ_{i ∈ subtree} (m_i a_ci − m_i g, I_i α_i + ω_i × I_i ω_i
 *             + c_i × (m_i a_ci − m_i g)) − (external and contact wrenches),
 * moments about the world origin, then moved to the joint origin o by
 * τ_o = τ − o × f. Link 0 gets the wrench the world gives the base: the
 * support reaction of a fixed base, about zero for a floating one. Contact
 * torsion (the spin friction of a patch) is not included. Evaluated at the
 * state after the step with the step's q̈ (the step itself solved at the
 * state before it): exact at rest and in steady motion, within O(h) of the
 * step's own balance while the configuration changes. */
int lcp_robot_get_joint_wrenches(const lcp_world_t *world, lcp_robot_id id, double *wrenches,
                                 int32_t link_count);

/* The last step's contact forces on each link, 12 per link (link_count ×
 * 12): the normal force and its torque about the link frame origin, then
 * the friction force and its torque; world axes, N and N·m (impulses / h). */
int lcp_robot_get_contact_wrenches(const lcp_world_t *world, lcp_robot_id id, double *wrenches,
                                   int32_t link_count);
/* The same for a free body, about its centre of mass: normal[6], friction[6]. */
int lcp_body_get_contact_wrench(const lcp_world_t *world, lcp_body_id id, double normal[6],
                                double friction[6]);
/* A contact's friction impulse as a world vector: friction_impulse[0] t1 +
 * friction_impulse[1] t2, (t1, t2) the tangents of its normal, the impulse
 * on side b (side a gets its opposite), N·s. */
void lcp_contact_friction_vector(const lcp_contact_info_t *contact, double impulse[3]);

/* Kinetic energy ½ q̇ᵀ M q̇ (½ m v·v + ½ ω·I ω for a body), J, and potential
 * energy −Σ m g·c in the world's gravity (zero at the world origin), J. */
int lcp_robot_get_energy(const lcp_world_t *world, lcp_robot_id id, double *kinetic,
                         double *potential);
int lcp_body_get_energy(const lcp_world_t *world, lcp_body_id id, double *kinetic,
                        double *potential);

/* An IMU: a site on a link reading specific force (what an accelerometer
 * reads: f = Rᵀ (a_site − g), +|g| upward at rest) and angular rate ω_s =
 * Rᵀ ω, R the site's world orientation, with bias and Gaussian white noise
 * added per axis. The noise is drawn from a counter-based generator keyed
 * by (seed, the world's step count, axis): a reading depends on the state
 * alone, so snapshots and replays read the same noise. */
/* The largest bias (m/s² or rad/s) and noise an IMU takes: far beyond any
 * sensor's, and small enough that a reading stays finite. Its site's offset
 * from the link is bounded by LCP_STATE_MAX_POSITION. */
#define LCP_IMU_MAX_BIAS 1e6
#define LCP_IMU_MAX_NOISE 1e6

typedef struct lcp_imu_def {
  char name[LCP_NAME_MAX];
  lcp_robot_id robot;
  int32_t link;
  double position[3];    /* site origin in the link frame, m */
  double orientation[4]; /* site axes in the link frame, w, x, y, z */
  double accel_noise;    /* standard deviation, m/s², in [0, LCP_IMU_MAX_NOISE] */
  double gyro_noise;     /* standard deviation, rad/s, in [0, LCP_IMU_MAX_NOISE] */
  double accel_bias[3];  /* m/s², site axes; each within ±LCP_IMU_MAX_BIAS */
  double gyro_bias[3];   /* rad/s, site axes; each within ±LCP_IMU_MAX_BIAS */
  uint64_t seed;
} lcp_imu_def_t;

/* No robot, link 0, at the link origin, no noise or bias, seed 0. */
lcp_imu_def_t lcp_imu_def_default(void);

/* IMU ids are indices in creation order. An IMU names a robot: when the
 * robot is removed, reading the IMU is LCP_ERR_NOT_FOUND. Names are unique
 * (an empty name is allowed and not looked up). */
typedef int32_t lcp_imu_id;
int lcp_imu_add(lcp_world_t *world, const lcp_imu_def_t *def, lcp_imu_id *out_id);
int32_t lcp_world_imu_count(const lcp_world_t *world);
int lcp_imu_get_def(const lcp_world_t *world, lcp_imu_id id, lcp_imu_def_t *out);
int lcp_imu_find(const lcp_world_t *world, const char *name, lcp_imu_id *out_id);
int lcp_imu_read(const lcp_world_t *world, lcp_imu_id id, double specific_force[3],
                 double angular_rate[3]);

/* ---- frames ----
 * A frame is a named pose fixed to a link: a foot, a tool flange, a camera
 * mount. The URDF loader makes one of every link it merges into its parent
 * across a fixed joint (lcpsim/urdf.h): the link's mass and geoms go to the
 * parent for the dynamics, its name and pose stay as a frame. Frames carry
 * no mass and cost nothing in the step; a frame's world pose is its link's
 * pose composed with the fixed offset, X_world_frame = X_world_link ∘
 * X_link_frame. Frame names are unique within a robot, and differ from its
 * link names. Frames are part of the model: snapshots do not hold them. */

/* Appends a frame to def (the array grows; def owns it). name must be
 * non-empty and shorter than LCP_NAME_MAX; link in [0, link_count);
 * orientation NULL for the identity. LCP_ERR_INVALID_ARGUMENT otherwise. */
int lcp_robot_def_add_frame(lcp_robot_def_t *def, const char *name, int32_t link,
                            const double position[3], const double orientation[4]);

typedef struct lcp_frame_info {
  char name[LCP_NAME_MAX];
  char link_name[LCP_NAME_MAX]; /* the link it is fixed to */
  int32_t link;
  double position[3]; /* offset in the link frame */
  double orientation[4];
} lcp_frame_info_t;

/* Number of frames of a robot (0 when it has none). */
int lcp_robot_get_frame_count(const lcp_world_t *world, lcp_robot_id id, int32_t *out_count);
/* Frame index by name; LCP_ERR_NOT_FOUND when there is none of that name. */
int lcp_robot_find_frame(const lcp_world_t *world, lcp_robot_id id, const char *name,
                         int32_t *out_frame);
int lcp_robot_get_frame(const lcp_world_t *world, lcp_robot_id id, int32_t frame,
                        lcp_frame_info_t *out);
/* World pose of a frame at the current state. */
int lcp_robot_get_frame_pose(const lcp_world_t *world, lcp_robot_id id, int32_t frame,
                             double position[3], double orientation[4]);

/* World axis-aligned box around all the robot's collision geoms at the current
 * state (what placing a robot on the ground needs); LCP_ERR_NOT_FOUND when
 * the robot has no geoms. */
int lcp_robot_get_aabb(const lcp_world_t *world, lcp_robot_id id, double lo[3], double hi[3]);

/* ---- run-time edits: robot state and dynamics ---- */

/* Sets q (nq values) and qd (nv values); either may be NULL (with its count
 * 0) to keep it. Checked whole (lengths, finite values, a normalisable base
 * quaternion, normalised on entry) before anything changes. The next step
 * starts from exactly this state: the warm-start impulses of the robot's
 * contacts and joint rows are dropped and qd is the velocity at the state's
 * time, so setting a state gives the same step as restoring a snapshot
 * taken after setting it. */
int lcp_robot_set_state(lcp_world_t *world, lcp_robot_id id, const double *q, int32_t nq,
                        const double *qd, int32_t nv);

/* A world force at a world point of a link (NULL point: the link frame's
 * origin) and a world torque (NULL: none), for the next step only. */
int lcp_robot_apply_link_wrench(lcp_world_t *world, lcp_robot_id id, int32_t link,
                                const double force[3], const double point[3],
                                const double torque[3]);

/* Mass properties of a link as the dynamics use them: mass, centre of mass
 * in the link frame, inertia about it in link axes (row-major). */
int lcp_robot_get_link_mass(const lcp_world_t *world, lcp_robot_id id, int32_t link, double *mass,
                            double com[3], double inertia[9]);
/* Friction and restitution of a link's first geom (LCP_ERR_NOT_FOUND: none). */
int lcp_robot_get_link_material(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                                double *friction, double *restitution);

/* One change of a dynamics edit (lcp_world_edit_dynamics): what it
 * addresses and which of its fields it sets (the others keep their value). */
typedef enum lcp_edit_target {
  LCP_EDIT_BODY = 0,  /* body */
  LCP_EDIT_LINK = 1,  /* robot, index = link */
  LCP_EDIT_JOINT = 2, /* robot, index = movable joint (lcp_robot_get_joint's index) */
} lcp_edit_target_t;

enum {
  LCP_EDIT_MASS = 1u << 0,           /* body, link: kg; > 0 (≥ 0 on a link fixed to its parent) */
  LCP_EDIT_INERTIA = 1u << 1,        /* body, link: symmetric positive definite */
  LCP_EDIT_COM = 1u << 2,            /* link only: in the link frame */
  LCP_EDIT_FRICTION = 1u << 3,       /* body, link: μ ≥ 0 of each of its geoms */
  LCP_EDIT_RESTITUTION = 1u << 4,    /* body, link: e in [0, 1] of each of its geoms */
  LCP_EDIT_DAMPING = 1u << 5,        /* joint: ≥ 0 */
  LCP_EDIT_JOINT_FRICTION = 1u << 6, /* joint: Coulomb friction ≥ 0 */
  LCP_EDIT_LIMITS = 1u << 7,         /* joint (revolute, prismatic): lower ≤ upper */
  LCP_EDIT_EFFORT_LIMIT = 1u << 8,   /* joint: ≥ 0, 0 for none */
  LCP_EDIT_VELOCITY_LIMIT = 1u << 9, /* joint: ≥ 0, 0 for none */
};

typedef struct lcp_dynamics_edit {
  lcp_edit_target_t target;
  lcp_body_id body;   /* LCP_EDIT_BODY */
  lcp_robot_id robot; /* LCP_EDIT_LINK, LCP_EDIT_JOINT */
  int32_t index;      /* the link or the joint */
  uint32_t fields;    /* LCP_EDIT_* bits */
  double mass;
  double inertia[9];
  double com[3];
  double friction, restitution;
  double damping, joint_friction, lower, upper, effort_limit, velocity_limit;
} lcp_dynamics_edit_t;

/* Applies count edits all or nothing: every edit is resolved and checked
 * (with the values it keeps) before any is applied. An object addressed
 * twice is refused. On failure returns the error, writes the index of the
 * failing edit to *failed_edit (when not NULL) and changes nothing. These
 * are model changes: snapshots (the state) neither keep nor undo them. */
int lcp_world_edit_dynamics(lcp_world_t *world, const lcp_dynamics_edit_t *edits, int32_t count,
                            int32_t *failed_edit);

/* Gives to's model every value lcp_world_edit_dynamics can change, as from
 * has it now: each free body's mass and inertia, each link's mass, centre of
 * mass and inertia, each geom's friction and restitution, each movable
 * joint's limits, effort and velocity limits, damping and friction. The
 * values are copied, not recomputed, so to then steps as from would,
 * bitwise, from the same state. from must have to's layout: the same
 * bodies, geoms and robots (names, links, joints) under the same ids in the
 * same order, as a world built by the same calls in the same order has;
 * LCP_ERR_MISMATCH otherwise, with nothing changed. States are not touched. */
int lcp_world_copy_dynamics(lcp_world_t *to, const lcp_world_t *from);

LCP_API_END
#ifdef __cplusplus
}
#endif
#endif
