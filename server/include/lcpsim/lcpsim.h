/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim engine public API.
 *
 * A world holds rigid bodies and their collision geoms. Each step detects
 * contacts (sweep and prune, then pair routines and GJK/EPA), turns them into
 * rows of one velocity-level boxed LCP and solves it by projected Gauss–Seidel
 * with over-relaxation.
 *
 * Conventions: SI units, z up, quaternions (w, x, y, z), spatial
 * vectors linear part first. Functions return LCP_OK (0) or a negative
 * lcp_status_t; on error the world is unchanged and lcp_world_last_error()
 * says what was wrong. The engine never prints; it logs through the callback
 * set with lcp_world_set_log().
 */
#ifndef LCPSIM_LCPSIM_H
#define LCPSIM_LCPSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lcpsim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
LCP_API_BEGIN

#define LCP_VERSION_MAJOR 0
#define LCP_VERSION_MINOR 1
#define LCP_VERSION_PATCH 0
#define LCP_VERSION_STRING "0.1.0"

typedef enum lcp_status {
  LCP_OK = 0,
  LCP_ERR_INVALID_ARGUMENT = -1, /* a bad value: NaN, negative mass, ... */
  LCP_ERR_NOT_FOUND = -2,        /* no live body, geom or robot with that id */
  LCP_ERR_NO_MEMORY = -3,
  LCP_ERR_MISMATCH = -4,   /* a snapshot of another world, or of another layout */
  LCP_ERR_DEGENERATE = -5, /* a hull with fewer than 4 non-coplanar points */
  LCP_ERR_STATE = -6,      /* the call is not valid in the world's current state */
  LCP_ERR_NUMERIC = -7,    /* the step produced a non-finite value or broke a state bound */
} lcp_status_t;

/* A short, static description of a status code. */
const char *lcp_status_string(int status);

/* ---- quaternions (w, x, y, z) and hashing, for programs built on the engine ---- */

/* The orientation of URDF-style roll, pitch, yaw: rotations about the fixed
 * x, y and z axes in that order, R = Rz(yaw) Ry(pitch) Rx(roll). */
void lcp_quat_from_rpy(const double rpy[3], double q[4]);
/* a ⊗ b (Hamilton product): b's rotation, then a's. out may alias a or b. */
void lcp_quat_multiply(const double a[4], const double b[4], double out[4]);
/* v rotated by the unit quaternion q. out may alias v. */
void lcp_quat_rotate(const double q[4], const double v[3], double out[3]);
/* The rotation matrix (row-major) of the unit quaternion q. */
void lcp_quat_to_matrix(const double q[4], double matrix[9]);
/* Whether q can stand for an orientation: finite and of norm > 1e-12 (the
 * engine normalises what it is given; this is the test it applies first). */
bool lcp_quat_is_valid(const double q[4]);

/* FNV-1a (Fowler, Noll, Vo) over size bytes, continuing from hash: start
 * from LCP_HASH_SEED. Not cryptographic: it tells layouts apart and catches
 * damaged copies. */
#define LCP_HASH_SEED 14695981039346656037ull
uint64_t lcp_hash_bytes(uint64_t hash, const void *data, size_t size);

/* ---- world ---- */

typedef struct lcp_world lcp_world_t;

typedef enum lcp_friction_model {
  LCP_FRICTION_BOX = 0,  /* |λt1|, |λt2| ≤ μ λn separately: a pyramid, anisotropic */
  LCP_FRICTION_CONE = 1, /* (λt1, λt2) projected on the disc of radius μ λn: isotropic */
} lcp_friction_model_t;

typedef enum lcp_solver_kind {
  LCP_SOLVER_PGS = 0,    /* projected Gauss–Seidel with over-relaxation ω (SOR) */
  LCP_SOLVER_JACOBI = 1, /* projected Jacobi, damped by ω */
  LCP_SOLVER_DIRECT = 2, /* Dantzig principal pivoting on the dense A (small problems) */
} lcp_solver_kind_t;

typedef struct lcp_world_settings {
  double timestep;       /* h, s; in [LCP_MIN_TIMESTEP, 1] */
  double gravity[3];     /* m/s²; |g| ≤ LCP_MAX_GRAVITY */
  int32_t iterations;    /* maximum solver sweeps; ≥ 1 */
  double sor_omega;      /* ω of SOR (0, 2); damping of Jacobi */
  double baumgarte_beta; /* [0, 1]: fraction of the penetration beyond slop removed per step */
  double baumgarte_slop; /* m; penetration left alone */
  double cfm;            /* constraint force mixing added to every contact row's diagonal */
  double contact_margin; /* m; contacts are made this far before touching (speculative) */
  lcp_friction_model_t friction_model;
  lcp_solver_kind_t solver;
  bool warm_start;           /* start from the last step's impulses of persistent contacts */
  double residual_tolerance; /* stop sweeping when the largest row correction (m/s) is below */
  int32_t direct_max_rows;   /* the direct solver refuses problems larger than this */
  /* m/s (rad/s for a revolute limit): positional correction (contacts and
   * joint limits) never separates faster than this; ≥ 0 */
  double max_push_speed;
  /* of the iterations, the last ones solve the velocities again without
   * the positional correction (the positions moved with the corrected
   * velocities): a push-out leaves no velocity behind; ≥ 0, and at least
   * one iteration always corrects */
  int32_t relax_iterations;
  /* m/s: contacts approaching slower than this are plastic whatever their
   * restitution; ≥ 0 */
  double restitution_threshold;
  /* hold joints within the URDF velocity limits (rows, like the limits) */
  bool enforce_velocity_limits;
} lcp_world_settings_t;

/* The shortest timestep, s: rates computed as differences over a step
 * (joint accelerations, contact forces λ/h) stay finite above it. */
#define LCP_MIN_TIMESTEP 1e-6

/* The largest gravity a world takes, m/s²: a hundred times the Earth's,
 * enough for any robot on any planet, while 1e12 (which overflows a
 * pendulum's state within steps) is refused as a setting. */
#define LCP_MAX_GRAVITY 1e3

/* The defaults: h = 1/240 s, g = (0, 0, -9.81), 20 iterations, ω = 1.0, β = 0.2,
 * slop = 1 mm, cfm = 1e-9, margin = 2 mm, cone friction, PGS, warm start on,
 * tolerance 1e-7 m/s, direct_max_rows = 600, max_push_speed = 3 m/s,
 * relax_iterations = 4, restitution_threshold = 1 m/s, velocity limits enforced. */
lcp_world_settings_t lcp_world_settings_default(void);

/* Checks every field against its rule (the ranges above). Returns LCP_OK, or
 * LCP_ERR_INVALID_ARGUMENT and, in why (when not NULL), the first bad field's
 * name, its rule and its value: "timestep must be > 0 (got -0.01)". */
int lcp_world_settings_validate(const lcp_world_settings_t *settings, char *why, size_t why_size);

int lcp_world_create(const lcp_world_settings_t *settings, lcp_world_t **out_world);
/* Frees the world and sets *world to NULL. Accepts NULL and a pointer to NULL. */
void lcp_world_destroy(lcp_world_t **world);

int lcp_world_set_settings(lcp_world_t *world, const lcp_world_settings_t *settings);
void lcp_world_get_settings(const lcp_world_t *world, lcp_world_settings_t *out);

typedef enum lcp_log_level {
  LCP_LOG_ERROR = 0,
  LCP_LOG_WARNING = 1,
  LCP_LOG_INFO = 2,
  LCP_LOG_DEBUG = 3,
} lcp_log_level_t;
typedef void (*lcp_log_fn)(void *user, lcp_log_level_t level, const char *message);
void lcp_world_set_log(lcp_world_t *world, lcp_log_fn fn, void *user);

/* The message of the last failed call on this world ("" when none). */
const char *lcp_world_last_error(const lcp_world_t *world);

/* ---- bodies ---- */

/* Ids of bodies, geoms and robots (lcp_robot_id, lcpsim/robot.h) are opaque
 * handles: compare them for equality, store them, send them; do not order
 * them or compute with them. Each is a non-negative int32 (it fits a uint32
 * on the wire), never LCP_NULL_ID.
 *
 * What the 32 bits hold, for reading logs rather than for use: bits 0-19 an
 * index, bits 20-30 that index's generation, bit 31 clear. Removing an
 * object frees its index for a later object of the same kind under the next
 * generation, so a removed object's id is refused (LCP_ERR_NOT_FOUND) even
 * after its index names another object; an index whose generation is
 * exhausted is retired, so an id is never reused within a world. A world
 * holds up to 2^20 live objects of each kind.
 *
 * Ids are assigned deterministically: the same sequence of calls on a new
 * world gives the same ids, removals included. */
typedef int32_t lcp_body_id;
typedef int32_t lcp_geom_id;
#define LCP_NULL_ID (-1)

/* Every world has one static body, fixed at the origin, whose id is 0 in
 * every world: attach the ground plane and other fixed scenery to it. */
#define LCP_WORLD_BODY 0

typedef enum lcp_body_type {
  LCP_BODY_STATIC = 0,  /* infinite mass, never moves (its pose may be set) */
  LCP_BODY_DYNAMIC = 1, /* moved by forces and contacts */
} lcp_body_type_t;

typedef struct lcp_body_def {
  lcp_body_type_t type;
  double mass;                /* kg; > 0 for dynamic bodies */
  double inertia[9];          /* kg·m², about the centre of mass, body axes, row-major, SPD */
  double position[3];         /* of the centre of mass (the body's origin), world */
  double orientation[4];      /* w, x, y, z; normalised on entry */
  double linear_velocity[3];  /* world, m/s */
  double angular_velocity[3]; /* world, rad/s */
} lcp_body_def_t;

/* Dynamic, 1 kg, unit inertia, at the origin, at rest. */
lcp_body_def_t lcp_body_def_default(void);

int lcp_body_add(lcp_world_t *world, const lcp_body_def_t *def, lcp_body_id *out_id);
/* Removes the body and its geoms. The world body (id 0) cannot be removed. */
int lcp_body_remove(lcp_world_t *world, lcp_body_id id);
int32_t lcp_world_body_count(const lcp_world_t *world); /* including the world body */
/* The ids of all bodies in creation order; returns how many were written. */
int32_t lcp_world_body_ids(const lcp_world_t *world, lcp_body_id *out_ids, int32_t capacity);

int lcp_body_get_pose(const lcp_world_t *world, lcp_body_id id, double position[3],
                      double orientation[4]);
int lcp_body_set_pose(lcp_world_t *world, lcp_body_id id, const double position[3],
                      const double orientation[4]);
int lcp_body_get_velocity(const lcp_world_t *world, lcp_body_id id, double linear[3],
                          double angular[3]);
int lcp_body_set_velocity(lcp_world_t *world, lcp_body_id id, const double linear[3],
                          const double angular[3]);
/* Mass properties as defined (mass 0 and zero inertia for static bodies). */
int lcp_body_get_mass(const lcp_world_t *world, lcp_body_id id, double *mass, double inertia[9]);
int lcp_body_get_type(const lcp_world_t *world, lcp_body_id id, lcp_body_type_t *type);

/* Forces act during the next step only and are then cleared. point is a world
 * point; the force at it also adds the torque (point − centre) × force. */
int lcp_body_apply_force(lcp_world_t *world, lcp_body_id id, const double force[3],
                         const double point[3]);
int lcp_body_apply_force_at_center(lcp_world_t *world, lcp_body_id id, const double force[3]);
int lcp_body_apply_torque(lcp_world_t *world, lcp_body_id id, const double torque[3]);

/* ---- geoms ---- */

typedef enum lcp_shape_type {
  LCP_SHAPE_PLANE = 0,   /* the geom frame's z = 0 plane, solid below (z < 0); static bodies only */
  LCP_SHAPE_SPHERE = 1,  /* radius */
  LCP_SHAPE_BOX = 2,     /* half_extents */
  LCP_SHAPE_CAPSULE = 3, /* radius, half_length: segment along the geom's z axis */
  LCP_SHAPE_CYLINDER = 4, /* radius, half_length along the geom's z axis */
  LCP_SHAPE_HULL = 5,     /* convex hull of hull_points (≥ 4 non-coplanar) */
  LCP_SHAPE_COUNT = 6
} lcp_shape_type_t;

typedef struct lcp_geom_def {
  lcp_shape_type_t type;
  double local_position[3];    /* geom frame in the body frame */
  double local_orientation[4]; /* w, x, y, z */
  double radius;
  double half_length;
  double half_extents[3];
  const double *hull_points; /* hull_point_count × 3, geom frame; copied */
  int32_t hull_point_count;
  double friction; /* μ ≥ 0; a contact uses the geometric mean of its two geoms' μ */
  /* e in [0, 1]: a contact's separating speed after an impact is e times
   * its approach speed (the larger e of its two geoms); approaches slower
   * than the settings' restitution_threshold stay plastic. 0: none */
  double restitution;
  uint32_t category_bits; /* what this geom is */
  uint32_t collide_mask;  /* what it collides with: a and b collide when
                             (a.category & b.mask) && (b.category & a.mask) */
} lcp_geom_def_t;

/* A unit sphere at the body origin, μ = 0.5, category 1, mask all. */
lcp_geom_def_t lcp_geom_def_default(void);

int lcp_geom_add(lcp_world_t *world, lcp_body_id body, const lcp_geom_def_t *def,
                 lcp_geom_id *out_id);
int lcp_geom_remove(lcp_world_t *world, lcp_geom_id id);
int lcp_geom_get_body(const lcp_world_t *world, lcp_geom_id id, lcp_body_id *out_body);
/* World axis-aligned bounding box of the geom at the body's current pose. */
int lcp_geom_get_aabb(const lcp_world_t *world, lcp_geom_id id, double lo[3], double hi[3]);

/* What a geom looks like, for drawing it (a viewer, a recording): its owner,
 * its shape and sizes, and its pose in the owner's frame (the free body's,
 * or the robot link's). The ids of all live geoms come in creation order
 * from lcp_world_geom_ids. */
typedef struct lcp_geom_info {
  lcp_body_id body; /* its body (LCP_WORLD_BODY: fixed scenery); LCP_NULL_ID on a link */
  int32_t robot;    /* lcp_robot_id of the robot whose link it is on, else LCP_NULL_ID */
  int32_t link;     /* that link's index (lcp_robot_info_t order), else -1 */
  lcp_shape_type_t type;
  double local_position[3];
  double local_orientation[4]; /* w, x, y, z */
  double radius;
  double half_length;
  double half_extents[3];
  int32_t hull_vertex_count;   /* LCP_SHAPE_HULL: of the hull as built (lcp_geom_get_hull) */
  int32_t hull_triangle_count; /* LCP_SHAPE_HULL: its faces cut into triangles */
} lcp_geom_info_t;

int32_t lcp_world_geom_count(const lcp_world_t *world);
/* The ids of all geoms in creation order; returns how many were written. */
int32_t lcp_world_geom_ids(const lcp_world_t *world, lcp_geom_id *out_ids, int32_t capacity);
int lcp_geom_get_info(const lcp_world_t *world, lcp_geom_id id, lcp_geom_info_t *out);
/* The convex hull the engine collides a LCP_SHAPE_HULL geom with: its
 * vertices (x, y, z each, geom frame; hull_vertex_count of them) and its
 * faces as triangles (three vertex indices each, counter-clockwise seen
 * from outside; hull_triangle_count of them). The arrays must have room for
 * the counts lcp_geom_get_info gives (LCP_ERR_INVALID_ARGUMENT otherwise, or
 * for a geom of another shape). */
int lcp_geom_get_hull(const lcp_world_t *world, lcp_geom_id id, double *vertices,
                      int32_t vertex_capacity, int32_t *triangles, int32_t triangle_capacity);

/* Mass and inertia of a solid of the given density with this shape: the
 * inertia about the geom's centre of mass in the axes of the body it is placed
 * on (the shape's own axes turned by local_orientation), and that centre in
 * body coordinates (local_position plus the turned shape centroid). Planes have
 * none (LCP_ERR_INVALID_ARGUMENT). */
int lcp_geom_def_mass_properties(const lcp_geom_def_t *def, double density, double *mass,
                                 double inertia[9], double center[3]);

/* ---- stepping ---- */

/* The bounds of a state a step may leave, beyond which nothing physical is
 * being simulated any more (a step diverged): every component of a dynamic
 * body's or a floating base's position, and a prismatic joint's position,
 * within ±LCP_STATE_MAX_POSITION m (1000 km, where doubles still resolve
 * 0.1 nm); their linear speeds (prismatic joint rates) up to
 * LCP_STATE_MAX_LINEAR_SPEED m/s; angular speeds (revolute and continuous
 * joint rates) up to LCP_STATE_MAX_ANGULAR_SPEED rad/s, MuJoCo's bound on
 * any velocity (mjMAXVAL), as a stiff explicit controller on a light link
 * legitimately spins that fast for a few steps. A diverging state grows
 * by orders of magnitude per step, so the bounds catch it within a step
 * or two of leaving physics, long before it overflows. */
#define LCP_STATE_MAX_POSITION 1e6
#define LCP_STATE_MAX_LINEAR_SPEED 1e6
#define LCP_STATE_MAX_ANGULAR_SPEED 1e10

/* Advances the world by one timestep. A step that fails returns a negative
 * code and leaves the world's state bitwise as it was (time, poses,
 * velocities, pending forces, contacts): LCP_ERR_NUMERIC when the solver
 * or the integration produced a non-finite number or a state beyond the
 * bounds above (lcp_world_last_error names the body or robot and the value;
 * the log says it too), LCP_ERR_NO_MEMORY when scratch memory ran out. */
int lcp_world_step(lcp_world_t *world);
double lcp_world_time(const lcp_world_t *world);
uint64_t lcp_world_step_count(const lcp_world_t *world);

/* The stages of a step, in order. */
typedef enum lcp_stage {
  LCP_STAGE_KINEMATICS = 0,
  LCP_STAGE_BROADPHASE = 1,
  LCP_STAGE_NARROWPHASE = 2,
  LCP_STAGE_ROWS = 3,
  LCP_STAGE_SOLVE = 4,
  LCP_STAGE_INTEGRATE = 5,
  LCP_STAGE_COUNT = 6
} lcp_stage_t;
/* "kinematics", "broadphase", ... : the names used in benchmark output. */
const char *lcp_stage_name(lcp_stage_t stage);

typedef struct lcp_step_stats {
  int32_t pairs;        /* candidate pairs from the broad phase */
  int32_t manifolds;    /* touching pairs */
  int32_t contacts;     /* contact points */
  int32_t rows;         /* LCP rows */
  int32_t iterations;   /* solver sweeps used */
  double residual;      /* largest row correction of the last sweep, m/s */
  int32_t warm_started; /* contact points that reused last step's impulses */
  /* each stage's wall time: 0 unless lcp_world_set_stage_timing is on */
  double stage_seconds[LCP_STAGE_COUNT];
  double step_seconds;
} lcp_step_stats_t;
void lcp_world_get_stats(const lcp_world_t *world, lcp_step_stats_t *out);
/* Whether the steps time each stage into lcp_step_stats_t.stage_seconds
 * (off when a world is created; step_seconds is always timed). A clock read
 * costs a visible part of a small robot's step, so the per-stage breakdown
 * is for profiling tools that ask for it. Not part of the state. */
void lcp_world_set_stage_timing(lcp_world_t *world, bool on);

typedef struct lcp_contact_info {
  lcp_geom_id geom_a, geom_b;
  lcp_body_id body_a, body_b; /* LCP_NULL_ID for a robot link's geom */
  int32_t robot_a, robot_b;   /* the robot (lcp_robot_id) of a link's geom, else LCP_NULL_ID */
  int32_t link_a, link_b;     /* that link's index, else -1 */
  double position[3];         /* world */
  double normal[3];           /* from a to b */
  double depth;               /* > 0 penetrating */
  double normal_impulse;
  double friction_impulse[2];
} lcp_contact_info_t;
/* Contacts of the last step; returns the total count (may exceed capacity). */
int32_t lcp_world_get_contacts(const lcp_world_t *world, lcp_contact_info_t *out, int32_t capacity);

/* ---- state snapshots (the model/state split) ----
 * A snapshot is the whole state: time, poses, velocities, pending forces,
 * the warm-start cache, and what the last step reported (its contacts and
 * its statistics, without timings). A state that is not finite is never
 * saved (LCP_ERR_NUMERIC) nor restored (LCP_ERR_INVALID_ARGUMENT).
 * Restoring it and stepping gives bitwise what stepping from the moment it
 * was taken gave. It can only be restored into a world with the same bodies
 * and geoms (LCP_ERR_MISMATCH otherwise). */
size_t lcp_world_state_size(const lcp_world_t *world);
int lcp_world_save_state(const lcp_world_t *world, void *buffer, size_t capacity, size_t *out_size);
int lcp_world_restore_state(lcp_world_t *world, const void *buffer, size_t size);

/* The heap bytes the world holds: its model (bodies, geoms and their hulls,
 * robots), its state, its caches and the step's scratch memory as the last
 * step left it. Counted from the sizes of its arrays (allocator overheads
 * aside); grows when bodies are added and while contacts accumulate. */
size_t lcp_world_memory_size(const lcp_world_t *world);

/* A 64-bit hash (FNV-1a) of the bits of the state: equal states, equal hashes. */
uint64_t lcp_world_state_hash(const lcp_world_t *world);

/* ---- run-time edits of a body: state, mass, material ----
 * The edits a user makes between steps (a reset, a teleport, domain
 * randomisation). Each is checked whole before anything changes. */

/* Sets a body's pose and twist (world axes; any of the four may be NULL to
 * keep it). The next step starts from exactly this state: contacts are
 * detected afresh, as every step does, and the warm-start impulses of the
 * body's contacts are dropped, since they were solved for where it was.
 * A static body takes a pose only (a non-NULL velocity must be zero). */
int lcp_body_set_state(lcp_world_t *world, lcp_body_id id, const double position[3],
                       const double orientation[4], const double linear[3],
                       const double angular[3]);
/* Mass (kg, > 0) and inertia (about the centre of mass, body axes,
 * row-major, symmetric positive definite) of a dynamic body. The body's
 * origin stays its centre of mass. */
int lcp_body_set_mass(lcp_world_t *world, lcp_body_id id, double mass, const double inertia[9]);
/* Friction μ (≥ 0) and restitution e ([0, 1]) of every geom of the body;
 * the getter reads its first geom's (LCP_ERR_NOT_FOUND: no geom). */
int lcp_body_set_material(lcp_world_t *world, lcp_body_id id, double friction, double restitution);
int lcp_body_get_material(const lcp_world_t *world, lcp_body_id id, double *friction,
                          double *restitution);

LCP_API_END
#ifdef __cplusplus
}
#endif
#endif
