/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark scenes of lcpsim-bench, described for other engines, and the
 * measuring loop every peer program shares.
 *
 * A peer program (lcpsim-bench-bullet, -ode, -mujoco) turns a peer_scene into
 * its engine's world through a peer_engine and hands it to peer_main(), which
 * parses the same options as lcpsim-bench, times the same steps and prints the
 * same key=value line. The peer_scene is read out of lcpsim's own scene
 * builders (server/model/scenes.c), so a peer never restates a position, a
 * mass or an inertia: the robots come from the same URDF loader, the bodies'
 * poses and mass properties from a world lcp_scene_pyramid() or
 * lcp_scene_pile() filled, the initial joint values, base pose and controller
 * gains from the robot scene lcpsim built. What a world cannot tell (the
 * shape of each free body, the bin's walls, the chain's links) is written
 * here from the scene's definition, and test_peer_scenes checks that the
 * description, rebuilt in lcpsim, steps bit for bit like lcpsim's scene. */
#ifndef LCPSIM_BENCH_PEER_H
#define LCPSIM_BENCH_PEER_H

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"
#include "scenes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum peer_scene_kind {
  PEER_SCENE_PYRAMID,
  PEER_SCENE_PILE,
  PEER_SCENE_CHAIN,
  PEER_SCENE_ARM,
  PEER_SCENE_QUADRUPED,
} peer_scene_kind;

/* A free body of a body scene: its one geom (pose in the body frame, whose
 * origin is the centre of mass) and its state at rest. */
typedef struct peer_solid {
  lcp_geom_def_t shape;
  double mass;
  double inertia[9]; /* about the centre of mass, body axes, row-major */
  double position[3];
  double orientation[4]; /* w, x, y, z */
} peer_solid;

typedef struct peer_scene {
  peer_scene_kind kind;
  const char *name;
  int32_t size; /* L of the pyramid, N of the pile; 0 for robots */
  /* lcpsim-bench's settings for the scene (h, g, 20 iterations, the
   * Baumgarte β and slop, cfm, ω), and its steps */
  lcp_world_settings_t settings;
  int32_t steps;
  double ground_friction; /* the plane z = 0 */

  /* body scenes (pyramid, pile) */
  int32_t solid_count;
  peer_solid *solids;
  int32_t fixture_count;
  lcp_geom_def_t *fixtures; /* static geoms besides the ground, world frame */
  int32_t top_solid;        /* the body whose drift is reported */

  /* robot scenes (chain, arm, quadruped): the robot as lcpsim loads it; every
   * geom carries the scene's friction. No self-collision. */
  lcp_robot_def_t *robot;
  double base_position[3]; /* of link 0's frame */
  double base_orientation[4];
  int32_t joint_count;   /* movable joints, link order */
  int32_t *joint_link;   /* link index of each movable joint */
  double *joint_initial; /* joint values at the start */
  /* joint PD position control, τ = kp (q* − q) − kd q̇ clamped to ±effort;
   * controlled is false when the joints are passive (chain) */
  bool controlled;
  double *kp, *kd, *effort;
  double *hold_target; /* the targets lcpsim's scene set (the arm's are for t = 0) */
  /* quadruped: feet (centres of the foot spheres in their links' frames),
   * their radius, the trunk height of the standing pose */
  int32_t foot_count;
  int32_t foot_link[LCP_SCENE_MAX_FEET];
  double foot_offset[LCP_SCENE_MAX_FEET][3];
  double stand_height;
} peer_scene;

/* lcpsim-bench's quadruped controller: kp, kd, and the height of the lowest
 * foot above the ground at the start. */
#define PEER_QUADRUPED_KP 300.0
#define PEER_QUADRUPED_KD 10.0
#define PEER_QUADRUPED_LIFT 0.002

/* Fills out for the scene `name` (pyramid, pile, chain, arm, quadruped) with
 * size L or N (0: lcpsim-bench's default). Returns LCP_OK, or an lcpsim error
 * with a message in error. */
int peer_scene_build(const char *name, int32_t size, peer_scene *out, char *error,
                     size_t error_size);
void peer_scene_free(peer_scene *scene);

/* Joint position targets q* at time t (arm: the scene's sine targets;
 * quadruped: the standing pose), joint_count values. */
void peer_scene_targets(const peer_scene *scene, double t, double *targets);

/* R(q) v for a unit quaternion (w, x, y, z). */
void peer_quat_rotate(const double q[4], const double v[3], double out[3]);
/* a ∘ b */
void peer_quat_multiply(const double a[4], const double b[4], double out[4]);

/* ---- the measuring loop ---- */

typedef struct peer_options {
  const char *scene;
  int32_t size;       /* 0: the scene's default */
  int32_t steps;      /* 0: the scene's default */
  int32_t iterations; /* 0: the scene's (20) */
  int32_t runs;
  /* engine options; NULL / 0 when not given */
  const char *solver;
  const char *cone;
  const char *integrator;
  double omega;
} peer_options;

/* One engine. Every callback gets the world create() returned. */
typedef struct peer_engine {
  const char *name;        /* the engine= value */
  const char *scenes;      /* the scenes it runs, space-separated */
  const char *option_help; /* usage lines of the engine options it reads */
  /* Builds the scene with `iterations` solver iterations; NULL on failure
   * with a message in error. */
  void *(*create)(const peer_scene *scene, const peer_options *options, char *error,
                  size_t error_size);
  void (*destroy)(void *world);
  /* Joint position targets for the next step (controlled robots only). */
  void (*set_targets)(void *world, const double *targets);
  /* One step; returns the contacts (points) it used, or −1 on failure. */
  int (*step)(void *world);
  /* Joint values, joint_count of them (robots only). */
  void (*joint_positions)(void *world, double *q);
  /* World position of a point given in the frame of a robot link (link frame
   * as in lcp_robot_def_t), or of a solid of a body scene (body frame). */
  void (*point)(void *world, int32_t link_or_solid, const double local[3], double out[3]);
  /* " solver=... friction=..." describing how it ran, appended to the line. */
  const char *(*describe)(void *world);
} peer_engine;

int peer_main(int argc, char **argv, const peer_engine *engine);

#ifdef __cplusplus
}
#endif
#endif
