/* SPDX-License-Identifier: Apache-2.0 */
/* The world's internal layout, shared by world.c (API, bodies, geoms, and
 * the services below), world_snapshot.c (state snapshots), robot.c
 * (robots), and step.c and rows.c (the step pipeline). Every function
 * declared here is defined in world.c, but lcp__robot_control_valid (robot.c).
 *
 * Model / state split: `model` is what the world is — bodies'
 * mass properties, geoms, settings; `state` is what it is doing — poses,
 * velocities, pending forces, the warm-start cache, time. A snapshot is the
 * state alone. Everything a step derives (world transforms, boxes, rows) lives
 * in the per-step arena and is gone when the step ends.
 */
#ifndef LCP_WORLD_INTERNAL_H
#define LCP_WORLD_INTERNAL_H

#include "arena.h"
#include "broadphase.h"
#include "collide.h"
#include "id_pool.h"
#include "lcp_math.h"
#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"
#include "multibody.h"

#include <stdint.h>

typedef struct body_model {
  lcp_body_id id;
  lcp_body_type_t type;
  double mass;
  double inv_mass;        /* 0 for static bodies */
  mat3 inertia_local;     /* about the centre of mass, body axes */
  mat3 inv_inertia_local; /* zero for static bodies */
} body_model;

typedef struct body_state {
  vec3 position;
  quat orientation;
  vec3 linear_velocity;
  vec3 angular_velocity;
  vec3 force;  /* pending until the next step */
  vec3 torque; /* pending until the next step */
} body_state;

typedef struct geom_model {
  lcp_geom_id id;
  lcp_body_id body;   /* owner when a free body's geom, else LCP_NULL_ID */
  lcp_robot_id robot; /* owner when a robot link's geom, else LCP_NULL_ID */
  int32_t link;       /* the link of that robot */
  xform local;        /* geom frame in the body frame */
  shape shape;
  hull *hull; /* owned; shape.hull points here */
  double friction;
  double restitution;
  double reach_radius; /* farthest point from the body's or link's frame origin, m */
  uint32_t category_bits;
  uint32_t collide_mask;
} geom_model;

/* Per movable joint of a robot: what the URDF said about it. */
typedef struct joint_model {
  char name[LCP_NAME_MAX];
  int32_t link; /* the child link the joint moves */
  lcp_joint_type_t type;
  bool has_limits;
  double lower, upper, effort_limit, velocity_limit, damping, friction;
} joint_model;

/* A named pose fixed to a link (lcpsim/robot.h, frames): what remains of a
 * URDF link merged into its parent by a fixed joint. */
typedef struct frame_model {
  char name[LCP_NAME_MAX];
  int32_t link;
  xform in_link; /* the frame's pose in its link's frame */
} frame_model;

typedef struct robot_model {
  lcp_robot_id id;
  char name[LCP_NAME_MAX];
  mb_model mb;
  bool self_collision;
  char (*link_names)[LCP_NAME_MAX]; /* [mb.link_count] */
  joint_model *joints;              /* [mb.joint_count], in link order */
  frame_model *frames;              /* [frame_count] */
  int32_t frame_count;
} robot_model;

/* The rows a joint can have, for the warm-start impulses kept per joint. */
enum {
  JOINT_ROW_LOWER = 0,    /* lower bound: q ≥ lower, qd ≥ −velocity limit */
  JOINT_ROW_UPPER = 1,    /* upper bound: q ≤ upper, qd ≤ velocity limit */
  JOINT_ROW_DAMPING = 2,  /* viscous damping b (URDF <dynamics damping>) */
  JOINT_ROW_FRICTION = 3, /* Coulomb joint friction (URDF <dynamics friction>) */
  JOINT_ROW_CONTROL = 4,  /* the position / velocity controller (implicit PD) */
  JOINT_ROW_KINDS = 5
};

typedef struct robot_state {
  double *q;              /* [nq] */
  double *qd;             /* [nv] */
  double *force;          /* [nv] pending generalised forces for the next step */
  double *link_wrench;    /* [6 link_count] pending world wrenches about link origins */
  double *applied_torque; /* [joint_count] the controllers' joint force of the last step */
  double *joint_impulse;  /* [JOINT_ROW_KINDS joint_count] last step's row impulses (warm start) */
  lcp_joint_control_t *control; /* [joint_count] */
  bool gravity_compensation;
  /* qd is the velocity at the state's time (after a free step, or set by
   * the user) rather than the last step's velocity (step.c: velocity Verlet
   * while no row touches the robot). */
  bool velocity_synchronized;
  /* The last step's, for the sensors (sensors.c): q̈ = (qd⁺ − qd)/h, and
   * the external wrenches that acted (link_wrench, the base's generalised
   * force added to link 0). */
  double *qdd;              /* [nv] */
  double *step_link_wrench; /* [6 link_count] */
} robot_state;

/* The normal impulse of one contact point kept for the next step's warm
 * start. */
typedef struct cached_point {
  uint32_t feature_id;
  double normal_impulse;
} cached_point;

typedef struct cached_manifold {
  /* The geoms' slots, not their ids: slots keep creation order, as the
   * step's pairs do, so slot_a < slot_b and the cache is sorted by (a, b).
   * Removing a geom renumbers the slots after it (lcp__world_remove_geom_slot). */
  int32_t slot_a, slot_b;
  int32_t point_count;
  cached_point points[MANIFOLD_MAX_POINTS];
  /* the patch's friction impulses: along its two tangents at its centre,
   * and about its normal (torsion; 0 for a single point) */
  double friction_impulse[3];
} cached_manifold;

typedef struct world_model {
  lcp_world_settings_t settings;
  int32_t body_count; /* creation order; slot 0 is the world body */
  int32_t body_capacity;
  body_model *bodies;
  int32_t geom_count; /* creation order */
  int32_t geom_capacity;
  geom_model *geoms;
  int32_t robot_count; /* creation order */
  int32_t robot_capacity;
  robot_model *robots;
  /* id → slot in the arrays above, one pool per kind */
  id_pool body_ids;
  id_pool geom_ids;
  id_pool robot_ids;
} world_model;

typedef struct world_state {
  double time;
  uint64_t step_count;
  body_state *bodies; /* parallel to model.bodies (same capacity) */
  int32_t cache_count;
  int32_t cache_capacity;
  cached_manifold *cache;
  robot_state *robots; /* parallel to model.robots (same capacity) */
} world_state;

struct lcp_world {
  world_model model;
  world_state state;
  sap broadphase;
  arena scratch;
  mb_data *robot_data;         /* parallel to model.robots: kinematics of the current state, */
  bool robot_kinematics_stale; /* unless this is set (after a step: refreshed when read) */
  /* The layout hash of snapshots (world_snapshot.c), valid until bodies, geoms or
   * robots are added or removed. */
  uint64_t layout_hash;
  bool layout_hash_valid;
  lcp_step_stats_t stats;
  bool stage_timing; /* lcp_world_set_stage_timing */
  /* the last step's contacts, for lcp_world_get_contacts */
  int32_t contact_count;
  int32_t contact_capacity;
  lcp_contact_info_t *contacts;
  /* IMU sites (sensors.c): model, creation order */
  int32_t imu_count;
  int32_t imu_capacity;
  lcp_imu_def_t *imus;
  lcp_log_fn log_fn;
  void *log_user;
  char last_error[256];
};

/* A snapshot holds, after the bodies and the cache, every robot's doubles
 * (q, qd, force, link_wrench, applied_torque, joint_impulse, and the
 * last step's qdd and step_link_wrench for the sensors) in robot order,
 * then every robot's controls (joint_count records and a flag word: bit 0
 * gravity compensation, bit 1 velocity_synchronized). The doubles' parts of
 * one robot (state_check.c); a step's backup copies the same parts. */
typedef struct robot_snapshot_part {
  double *data;
  size_t count;
} robot_snapshot_part;
enum { ROBOT_SNAPSHOT_PARTS = 8 };
int lcp__robot_state_parts(const robot_model *r, robot_state *st,
                           robot_snapshot_part out[ROBOT_SNAPSHOT_PARTS]);

/* Records a formatted error message for lcp_world_last_error and returns code. */
int lcp__world_fail(lcp_world_t *world, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void lcp__world_log(const lcp_world_t *world, lcp_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void lcp__world_remove_geom_slot(lcp_world_t *world, int32_t slot);
/* Frees a robot's model and state arrays. */
void lcp__world_free_robot(robot_model *model, robot_state *state, mb_data *data);
/* Adds a geom owned by a free body (robot = LCP_NULL_ID) or by a robot link. */
int lcp__world_add_geom(lcp_world_t *world, const lcp_geom_def_t *def, lcp_body_id body,
                        lcp_robot_id robot, int32_t link, lcp_geom_id *out_id);
/* Would lcp_robot_set_joint_control accept this control? */
bool lcp__robot_control_valid(const lcp_joint_control_t *control);
/* Recomputes every robot's link poses and velocities from its q, qd. */
void lcp__world_refresh_robot_kinematics(lcp_world_t *world);
/* Refreshes them when a step left them stale; every read of robot_data's
 * poses and velocities outside the step goes through it. */
void lcp__world_ensure_robot_kinematics(const lcp_world_t *world);
/* World pose of a geom for the current state (robots: from their kinematics). */
xform lcp__world_geom_pose(const lcp_world_t *world, const geom_model *g);
/* Grows a heap array to hold at least need elements (geometric growth). */
int lcp__world_reserve(void **array, int32_t *capacity, int32_t need, size_t element_size);

#endif
