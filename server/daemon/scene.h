/* What a world is made of, as loaded at start-up: the settings, the ground,
 * robots (loaded URDF definitions with their base poses) and free bodies.
 * The daemon builds its world from one at start and again on Reset. It comes
 * from a scene file (scene_file.h), from --urdf, or from the built-in world. */
#ifndef LCPD_SCENE_H
#define LCPD_SCENE_H

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
  double friction; /* μ */
} lcpd_body_spec_t;

typedef struct lcpd_robot_spec {
  lcp_robot_def_t *def; /* owned; def->name is the robot's name */
  double position[3];
  double orientation[4];
} lcpd_robot_spec_t;

typedef struct lcpd_scene {
  lcp_world_settings_t settings;
  lcpd_mode_t mode;
  double rate; /* realtime mode: simulated seconds per wall-clock second */
  bool has_ground;
  double ground_friction;
  lcpd_robot_spec_t *robots;
  int32_t robot_count;
  lcpd_body_spec_t *bodies;
  int32_t body_count;
} lcpd_scene_t;

/* An empty scene: default settings, lockstep at rate 1, no ground. */
void lcpd_scene_init(lcpd_scene_t *scene);
/* Frees the robot definitions and the arrays; the scene is empty again. */
void lcpd_scene_clear(lcpd_scene_t *scene);

/* Takes ownership of def (freed on failure too). Returns 0 or a negative
 * lcp_status_t with the reason in error. */
int lcpd_scene_add_robot(lcpd_scene_t *scene, lcp_robot_def_t *def, const double position[3],
                         const double orientation[4], char *error, size_t error_size);
int lcpd_scene_add_body(lcpd_scene_t *scene, const lcpd_body_spec_t *body, char *error,
                        size_t error_size);
/* Whether a robot or body of that name is in the scene. */
bool lcpd_scene_has_name(const lcpd_scene_t *scene, const char *name);

/* The built-in world: ground (μ 0.8), the shipped 7-dof arm on a fixed base
 * at the origin, a static table in front of it and a 0.1 m box on the table
 * within the arm's reach. */
int lcpd_scene_builtin(lcpd_scene_t *scene, char *error, size_t error_size);

/* A body spec with defaults: a dynamic 1 kg box of 0.1 m at the origin, at
 * rest, μ 0.5. */
lcpd_body_spec_t lcpd_body_spec_default(void);

/* Checks a body spec (name length, finite values, positive sizes and mass,
 * non-zero quaternion, friction ≥ 0); on failure writes what is wrong, naming
 * the field, and returns LCP_ERR_INVALID_ARGUMENT. */
int lcpd_body_spec_validate(const lcpd_body_spec_t *body, char *error, size_t error_size);

/* The engine definitions of a body spec: the body (mass and inertia of a
 * uniform solid of the shape) and its one geom. */
int lcpd_body_spec_defs(const lcpd_body_spec_t *body, lcp_body_def_t *body_def,
                        lcp_geom_def_t *geom_def);

/* Orientation (w, x, y, z) of URDF-style fixed-axis roll, pitch, yaw. */
void lcpd_quat_from_rpy(const double rpy[3], double q[4]);

#endif
