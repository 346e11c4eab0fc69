/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmark scenes (lcpsim-bench), also used by the physics tests and by
 * the daemon (its ground plane). Internal: the library lcpsim_scenes is built
 * from them but not installed. Each adds its bodies to an existing world (it
 * does not change the world's settings; lcp_scene_settings() gives the ones
 * the benchmarks use). */
#ifndef LCPSIM_MODEL_SCENES_H
#define LCPSIM_MODEL_SCENES_H

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lcp_scene_info {
  int32_t bodies;         /* dynamic bodies added */
  int32_t dofs;           /* 6 per free body */
  lcp_body_id top_body;   /* the body whose drift the benchmark reports */
  double top_position[3]; /* its initial position */
  int32_t default_steps;  /* steps of the benchmark run */
} lcp_scene_info_t;

/* Settings of the benchmark table: h = 1/240 s, 20 iterations. */
lcp_world_settings_t lcp_scene_settings(void);

/* Ground plane z = 0 on the world body with friction mu. */
int lcp_scene_ground(lcp_world_t *world, double mu, lcp_geom_id *out_geom);

/* pyramid L: L levels of 0.5 m, 1 kg cubes; level k has L − k cubes centred
 * in x, spacing 0.5 m, y = 0, resting on the ground; μ = 0.6. */
int lcp_scene_pyramid(lcp_world_t *world, int32_t levels, lcp_scene_info_t *info);

/* stack N: N cubes of 0.5 m, 1 kg on top of each other on the ground; μ = 0.6. */
int lcp_scene_stack(lcp_world_t *world, int32_t count, lcp_scene_info_t *info);

/* drop N: N bodies alternating spheres (radius 0.1 m) and cubes (0.2 m), 1 kg,
 * in a square grid (at most 10 × 10 per layer, 0.4 m apart, layers 0.4 m apart)
 * whose lowest layer starts 5 m above a static plate 2 cm thick (4 m × 4 m,
 * top face at z = 0), dropped: they meet the plate at about 10 m/s, 4 cm
 * per step at h = 1/240 s, twice its thickness; μ = 0.5, no restitution.
 * The top body is the first. */
int lcp_scene_drop(lcp_world_t *world, int32_t count, lcp_scene_info_t *info);

/* pile N: N bodies alternating spheres (radius 0.05 m) and cubes (0.1 m), 0.1 kg,
 * in a grid above a 2 m × 2 m walled bin, dropped; μ = 0.5. */
int lcp_scene_pile(lcp_world_t *world, int32_t count, lcp_scene_info_t *info);

/* ---- robot scenes: chain, arm and quadruped ----
 * Defined as the other engines' versions of the same benchmarks define them.
 * Each adds a ground plane and one robot to an existing world and does not
 * change the world's settings: lcp_scene_robot_settings() gives the ones the
 * benchmarks use (h = 1 ms, 20 iterations). The arm and the quadruped are the
 * shipped robots, found with lcp_shipped_robot_path(). */

#define LCP_SCENE_MAX_FEET 4

typedef struct lcp_robot_scene {
  lcp_robot_id robot;
  lcp_geom_id ground;
  int32_t bodies;        /* links, the fixed base of the arm included */
  int32_t dofs;          /* nv of the robot */
  int32_t joint_count;   /* movable joints */
  int32_t default_steps; /* steps of the benchmark run */
  /* quadruped only (foot_count = 0 otherwise): the links carrying the foot
   * spheres (fixed foot joints are merged into the calves), the foot
   * centres in those link frames, and the nominal trunk height of the
   * standing pose over flat ground. */
  int32_t foot_count;
  int32_t foot_link[LCP_SCENE_MAX_FEET];
  double foot_offset[LCP_SCENE_MAX_FEET][3];
  double stand_height;
} lcp_robot_scene_t;

/* h = 1 ms, 20 iterations, otherwise the world defaults. */
lcp_world_settings_t lcp_scene_robot_settings(void);

/* arm: arm7.urdf on a fixed base at z = 0.1 m over the ground plane (μ = 0.8):
 * 7 capsule links (0.3 m, radius 0.04 m, 1 kg), revolute axes z, y, z, ...;
 * every joint under implicit PD position control, kp = 100 N·m/rad,
 * kd = 10 N·m·s/rad, velocity target 0 (as Bullet's explicit PD and MuJoCo's
 * position actuator with joint damping do it), targets set for t = 0.
 * No self-collision. default_steps = 10000. */
int lcp_scene_arm(lcp_world_t *world, lcp_robot_scene_t *out);

/* The arm's target of joint i (0-based) at time t: 0.5 sin(2π·0.5·t + i). */
double lcp_scene_arm_target(int32_t joint, double t);

/* Sets every joint's position target of the arm to lcp_scene_arm_target(i, t),
 * keeping kp = 100, kd = 10, velocity target 0. Call it before each step with
 * t = lcp_world_time(world). */
int lcp_scene_arm_set_targets(lcp_world_t *world, lcp_robot_id arm, double t);

/* chain: 20 capsule links (0.2 m between the hemisphere centres, radius
 * 0.04 m, 0.5 kg, solid-capsule inertia) along x on a floating base; link i
 * spans x = 0.21 i .. 0.21 i + 0.2 (plus the caps) and joint i (i = 1..19)
 * sits at x = 0.21 i, continuous, about x for odd i and y for even i (as in
 * Bullet and MuJoCo); the base frame starts at (0, 0, 0.5) at rest, over the
 * ground plane;
 * μ = 0.8 everywhere. Self-collision off, as Bullet's btMultiBody default
 * (MuJoCo collides non-adjacent links; parent/child pairs never collide in
 * any of the three): the dropped chain lands and stays flat, no two
 * non-adjacent links ever touch, and turning it on gives the same contacts
 * and rest state at the cost of more narrow phase. default_steps = 5000. */
int lcp_scene_chain(lcp_world_t *world, lcp_robot_scene_t *out);

/* quadruped: quadruped.urdf (floating base) standing on the ground plane,
 * μ = 0.8 at the feet and the ground, started at rest in the standing pose
 * (hip 0, thigh 0.8, calf −1.6 rad) with its feet `lift` m above the ground
 * (lift ≥ 0; the trunk at stand_height + lift), each joint under implicit PD
 * control holding that pose with gains kp, kd (effort limit 35 N·m from the
 * URDF). kp = kd = 0 leaves the joints passive (controllers off).
 * default_steps = 5000. */
int lcp_scene_quadruped(lcp_world_t *world, double kp, double kd, double lift,
                        lcp_robot_scene_t *out);

/* The standing pose of the quadruped's joint i (0-based, URDF link order). */
double lcp_scene_quadruped_stand_angle(const lcp_world_t *world, lcp_robot_id robot, int32_t joint);

/* World position of foot k of a scene made by lcp_scene_quadruped. */
int lcp_scene_foot_position(const lcp_world_t *world, const lcp_robot_scene_t *scene, int32_t foot,
                            double position[3]);

#ifdef __cplusplus
}
#endif
#endif
