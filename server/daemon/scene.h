/* SPDX-License-Identifier: Apache-2.0 */
/* What a world is made of, as loaded at start-up: the settings, the ground,
 * robots (loaded URDF definitions with their base poses) and free bodies.
 * The daemon builds its world from one at start and again on Reset. It comes
 * from a scene file (scene_file.h), from --urdf, or from the built-in world. */
#ifndef LCPD_SCENE_H
#define LCPD_SCENE_H

#include "error.h"

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum lcpd_mode {
  LCPD_MODE_LOCKSTEP = 0, /* the world moves when a client sends Step */
  LCPD_MODE_REALTIME = 1, /* the daemon steps at rate × wall clock */
} lcpd_mode_t;

/* A primitive body shape. Sizes follow the engine: radius, half_length
 * (capsule and cylinder, along the body's z axis), half_extents (box). */
typedef struct lcpd_shape {
  lcp_shape_type_t type; /* LCP_SHAPE_SPHERE, _BOX, _CAPSULE or _CYLINDER */
  double radius;
  double half_length;
  double half_extents[3];
} lcpd_shape_t;

typedef struct lcpd_body_spec {
  char name[LCP_NAME_MAX];
  lcpd_shape_t shape;
  double position[3];
  double orientation[4]; /* w, x, y, z */
  double linear_velocity[3];
  double angular_velocity[3];
  double mass; /* kg; ignored when is_static */
  bool is_static;
  double friction;    /* μ */
  double restitution; /* e in [0, 1] */
} lcpd_body_spec_t;

typedef struct lcpd_robot_spec {
  lcp_robot_def_t *def; /* owned; def->name is the robot's name */
  double position[3];
  double orientation[4];
} lcpd_robot_spec_t;

/* An IMU site on a robot's link (lcp_imu_def_t by names): the scene file's
 * <imu> and the AddImu call. */
typedef struct lcpd_imu_spec {
  char name[LCP_NAME_MAX];
  char robot[LCP_NAME_MAX];
  char link[LCP_NAME_MAX];
  double position[3];    /* in the link frame */
  double orientation[4]; /* w, x, y, z */
  double accel_noise, gyro_noise;
  double accel_bias[3], gyro_bias[3];
  uint64_t seed;
} lcpd_imu_spec_t;

typedef struct lcpd_scene {
  lcp_world_settings_t settings;
  lcpd_mode_t mode;
  double rate; /* realtime mode: simulated seconds per wall-clock second */
  bool has_ground;
  double ground_friction;
  double ground_restitution; /* e in [0, 1] */
  lcpd_robot_spec_t *robots;
  int32_t robot_count;
  lcpd_body_spec_t *bodies;
  int32_t body_count;
  lcpd_imu_spec_t *imus; /* added after the robots */
  int32_t imu_count;
} lcpd_scene_t;

/* An empty scene: default settings, lockstep at rate 1, no ground. */
void lcpd_scene_init(lcpd_scene_t *scene);
/* Frees the robot definitions and the arrays; the scene is empty again. */
void lcpd_scene_clear(lcpd_scene_t *scene);

/* A name free by taken(): base itself, else base_2, base_3, ... (cut so
 * that it fits LCP_NAME_MAX). false when none up to base_9999 is free. */
bool lcpd_unique_name(const char *base, bool (*taken)(const void *context, const char *name),
                      const void *context, char out[LCP_NAME_MAX]);
bool lcpd_scene_name_taken(const void *scene, const char *name); /* for lcpd_unique_name */

/* Takes ownership of def (freed on failure too). */
int lcpd_scene_add_robot(lcpd_scene_t *scene, lcp_robot_def_t *def, const double position[3],
                         const double orientation[4], lcpd_error_t *error);
int lcpd_scene_add_body(lcpd_scene_t *scene, const lcpd_body_spec_t *body, lcpd_error_t *error);
/* An IMU on a robot of the scene, on a link of it, with a name no other
 * IMU of the scene has. */
int lcpd_scene_add_imu(lcpd_scene_t *scene, const lcpd_imu_spec_t *imu, lcpd_error_t *error);
/* Whether a robot or body of that name is in the scene. */
bool lcpd_scene_has_name(const lcpd_scene_t *scene, const char *name);

/* A deep copy of a robot definition (its links, geoms with their hull
 * points, and frames), freed with lcp_robot_def_free. */
int lcpd_robot_def_copy(const lcp_robot_def_t *from, lcp_robot_def_t **out);
/* The bytes a robot definition holds (what a world's memory estimate counts
 * for it: the engine keeps as much again in its model). */
size_t lcpd_robot_def_bytes(const lcp_robot_def_t *def);
/* A deep copy of a scene: robot definitions copied, not shared (*to is
 * empty on failure). */
int lcpd_scene_copy(const lcpd_scene_t *from, lcpd_scene_t *to, lcpd_error_t *error);

/* The built-in world: ground (μ 0.8), the shipped 7-dof arm on a fixed base
 * at the origin, a static table in front of it and a 0.1 m box on the table
 * within the arm's reach. */
int lcpd_scene_builtin(lcpd_scene_t *scene, lcpd_error_t *error);

/* The engine's settings with the daemon's rate, checked by the engine's
 * rules (lcp_world_settings_validate) and the rate's (> 0): every way
 * settings come in (command line, scene file, SetSettings, the world's
 * creation) asks this. The message starts with the setting's name:
 * "timestep must be > 0 (got -0.01)". */
int lcpd_settings_validate(const lcp_world_settings_t *settings, double rate, lcpd_error_t *error);

/* A body spec with defaults: a dynamic 1 kg box of 0.1 m at the origin, at
 * rest, μ 0.5. */
lcpd_body_spec_t lcpd_body_spec_default(void);

/* Checks a body spec: a name that fits (it may be empty), finite values,
 * positive sizes and mass, a usable quaternion, friction >= 0, restitution
 * in [0, 1]. The message names the field after `field_prefix` ("spawn."
 * gives "spawn.mass must be > 0 ..."), with the field names of lcpsim.v1's
 * SpawnRequest (shape.radius, pose.orientation, twist, mass, friction,
 * restitution). */
int lcpd_body_spec_validate(const lcpd_body_spec_t *body, const char *field_prefix,
                            lcpd_error_t *error);

/* The engine definitions of a body spec: the body (mass and inertia of a
 * uniform solid of the shape) and its one geom. */
int lcpd_body_spec_defs(const lcpd_body_spec_t *body, lcp_body_def_t *body_def,
                        lcp_geom_def_t *geom_def);

#endif
