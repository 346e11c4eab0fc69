/* SPDX-License-Identifier: Apache-2.0 */
/* The peers' scene descriptions are lcpsim-bench's scenes: each description,
 * rebuilt in lcpsim from nothing but what the peers read, steps bit for bit
 * like the world lcpsim's own scene builder makes (same state hash), and its
 * settings are lcpsim-bench's defaults. A wrong shape, wall, mass, joint,
 * base pose, gain or target in the description changes the trajectory. */
#include "peer.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cmocka's assert_float_equal works in float */
static void assert_near(double actual, double expected, double tolerance) {
  if (!(fabs(actual - expected) <= tolerance))
    fail_msg("%.17g is not within %g of %.17g", actual, tolerance, expected);
}

static lcp_world_t *new_world(const lcp_world_settings_t *settings) {
  lcp_world_t *world = NULL;
  assert_int_equal(lcp_world_create(settings, &world), LCP_OK);
  return world;
}

/* ---- body scenes ---- */

static lcp_world_t *lcpsim_body_scene(const peer_scene *s) {
  lcp_world_settings_t settings = lcp_scene_settings();
  lcp_world_t *world = new_world(&settings);
  lcp_scene_info_t info;
  int rc = s->kind == PEER_SCENE_PYRAMID ? lcp_scene_pyramid(world, s->size, &info)
                                         : lcp_scene_pile(world, s->size, &info);
  assert_int_equal(rc, LCP_OK);
  return world;
}

static lcp_world_t *rebuilt_body_scene(const peer_scene *s) {
  lcp_world_t *world = new_world(&s->settings);
  assert_int_equal(lcp_scene_ground(world, s->ground_friction, NULL), LCP_OK);
  for (int32_t i = 0; i < s->fixture_count; ++i)
    assert_int_equal(lcp_geom_add(world, LCP_WORLD_BODY, &s->fixtures[i], NULL), LCP_OK);
  for (int32_t i = 0; i < s->solid_count; ++i) {
    const peer_solid *solid = &s->solids[i];
    lcp_body_def_t body = lcp_body_def_default();
    body.mass = solid->mass;
    memcpy(body.inertia, solid->inertia, sizeof body.inertia);
    memcpy(body.position, solid->position, sizeof body.position);
    memcpy(body.orientation, solid->orientation, sizeof body.orientation);
    lcp_body_id id;
    assert_int_equal(lcp_body_add(world, &body, &id), LCP_OK);
    assert_int_equal(lcp_geom_add(world, id, &solid->shape, NULL), LCP_OK);
  }
  return world;
}

/* Every geom of the two worlds (ids in creation order) has the same body and
 * bounding box: the walls, and each body's shape as far as its box tells. */
static void assert_same_geoms(const lcp_world_t *a, const lcp_world_t *b, int32_t geoms) {
  int32_t seen = 0;
  for (lcp_geom_id id = 0; id < geoms + 8; ++id) {
    lcp_body_id body_a, body_b;
    int rc = lcp_geom_get_body(a, id, &body_a);
    assert_int_equal(lcp_geom_get_body(b, id, &body_b), rc);
    if (rc != LCP_OK)
      continue;
    seen++;
    assert_int_equal(body_a, body_b);
    double lo_a[3], hi_a[3], lo_b[3], hi_b[3];
    assert_int_equal(lcp_geom_get_aabb(a, id, lo_a, hi_a), LCP_OK);
    assert_int_equal(lcp_geom_get_aabb(b, id, lo_b, hi_b), LCP_OK);
    assert_memory_equal(lo_a, lo_b, sizeof lo_a);
    assert_memory_equal(hi_a, hi_b, sizeof hi_a);
  }
  assert_int_equal(seen, geoms);
}

static void check_body_scene(const char *name, int32_t size, int32_t default_steps, int32_t steps) {
  peer_scene s;
  char error[512] = "";
  assert_int_equal(peer_scene_build(name, size, &s, error, sizeof error), LCP_OK);
  assert_int_equal(s.size, size);
  assert_int_equal(s.steps, default_steps);
  assert_int_equal(s.settings.iterations, 20);
  assert_true(s.settings.timestep == 1.0 / 240.0);
  lcp_world_t *a = lcpsim_body_scene(&s), *b = rebuilt_body_scene(&s);
  assert_same_geoms(a, b, 1 + s.fixture_count + s.solid_count);
  for (int32_t i = 0; i < steps; ++i) {
    assert_int_equal(lcp_world_step(a), LCP_OK);
    assert_int_equal(lcp_world_step(b), LCP_OK);
  }
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
  peer_scene_free(&s);
}

static void test_pyramid(void **state) {
  (void)state;
  check_body_scene("pyramid", 8, 480, 120);
}

static void test_pile(void **state) {
  (void)state;
  /* 300 steps: the outer columns of the grid reach the walls */
  check_body_scene("pile", 400, 1000, 300);
}

/* ---- robot scenes ---- */

static lcp_world_t *lcpsim_robot_scene(peer_scene_kind kind, lcp_robot_scene_t *scene) {
  lcp_world_settings_t settings = lcp_scene_robot_settings();
  lcp_world_t *world = new_world(&settings);
  int rc = kind == PEER_SCENE_ARM ? lcp_scene_arm(world, scene)
           : kind == PEER_SCENE_CHAIN
               ? lcp_scene_chain(world, scene)
               : lcp_scene_quadruped(world, PEER_QUADRUPED_KP, PEER_QUADRUPED_KD,
                                     PEER_QUADRUPED_LIFT, scene);
  assert_int_equal(rc, LCP_OK);
  return world;
}

static void set_peer_controls(lcp_world_t *world, lcp_robot_id robot, const peer_scene *s,
                              double t) {
  double targets[32];
  assert_true(s->joint_count <= 32);
  peer_scene_targets(s, t, targets);
  for (int32_t j = 0; j < s->joint_count; ++j) {
    /* the effort limit stays the joint's own, which the peers read */
    assert_true(s->effort[j] == s->robot->links[s->joint_link[j]].effort_limit);
    lcp_joint_control_t c = lcp_joint_control_default();
    c.mode = LCP_CONTROL_POSITION;
    c.kp = s->kp[j];
    c.kd = s->kd[j];
    c.position = targets[j];
    assert_int_equal(lcp_robot_set_joint_control(world, robot, j, &c), LCP_OK);
  }
}

static lcp_world_t *rebuilt_robot_scene(const peer_scene *s, lcp_robot_id *robot) {
  lcp_world_t *world = new_world(&s->settings);
  assert_int_equal(lcp_scene_ground(world, s->ground_friction, NULL), LCP_OK);
  assert_int_equal(lcp_robot_add(world, s->robot, s->base_position, s->base_orientation, robot),
                   LCP_OK);
  double q[64];
  int32_t base = s->robot->floating_base ? 7 : 0;
  assert_true(base + s->joint_count <= 64);
  memcpy(q, s->base_position, sizeof s->base_position);
  memcpy(q + 3, s->base_orientation, sizeof s->base_orientation);
  memcpy(q + base, s->joint_initial, (size_t)s->joint_count * sizeof *q);
  assert_int_equal(lcp_robot_set_q(world, *robot, q, base + s->joint_count), LCP_OK);
  if (s->controlled)
    set_peer_controls(world, *robot, s, 0.0);
  return world;
}

static void check_robot_scene(const char *name, int32_t default_steps, int32_t steps) {
  peer_scene s;
  char error[512] = "";
  assert_int_equal(peer_scene_build(name, 0, &s, error, sizeof error), LCP_OK);
  assert_int_equal(s.steps, default_steps);
  assert_int_equal(s.settings.iterations, 20);
  assert_true(s.settings.timestep == 1e-3);
  lcp_robot_scene_t scene;
  lcp_robot_id robot;
  lcp_world_t *a = lcpsim_robot_scene(s.kind, &scene), *b = rebuilt_robot_scene(&s, &robot);
  for (int32_t i = 0; i < steps; ++i) {
    if (s.kind == PEER_SCENE_ARM) {
      assert_int_equal(lcp_scene_arm_set_targets(a, scene.robot, lcp_world_time(a)), LCP_OK);
      set_peer_controls(b, robot, &s, lcp_world_time(b));
    }
    assert_int_equal(lcp_world_step(a), LCP_OK);
    assert_int_equal(lcp_world_step(b), LCP_OK);
  }
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  /* the feet the quadruped's figures are measured at are the scene's */
  for (int32_t k = 0; k < scene.foot_count; ++k) {
    double expected[3], p[3], r[3], rotation[4];
    assert_int_equal(lcp_scene_foot_position(a, &scene, k, expected), LCP_OK);
    assert_int_equal(lcp_robot_get_link_pose(b, robot, s.foot_link[k], p, rotation), LCP_OK);
    peer_quat_rotate(rotation, s.foot_offset[k], r);
    for (int c = 0; c < 3; ++c)
      assert_near(p[c] + r[c], expected[c], 1e-12);
  }
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
  peer_scene_free(&s);
}

static void test_chain(void **state) {
  (void)state;
  check_robot_scene("chain", 5000, 1500);
}

static void test_arm(void **state) {
  (void)state;
  check_robot_scene("arm", 10000, 1500);
}

static void test_quadruped(void **state) {
  (void)state;
  peer_scene s;
  char error[512] = "";
  assert_int_equal(peer_scene_build("quadruped", 0, &s, error, sizeof error), LCP_OK);
  assert_int_equal(s.foot_count, 4);
  assert_true(s.controlled);
  for (int32_t j = 0; j < s.joint_count; ++j) {
    assert_true(s.kp[j] == PEER_QUADRUPED_KP && s.kd[j] == PEER_QUADRUPED_KD);
    assert_true(s.effort[j] == 35.0);
  }
  /* the lowest foot starts PEER_QUADRUPED_LIFT above the ground */
  assert_near(s.base_position[2], s.stand_height + PEER_QUADRUPED_LIFT, 1e-12);
  peer_scene_free(&s);
  check_robot_scene("quadruped", 5000, 1500);
}

static void test_unknown_scene(void **state) {
  (void)state;
  peer_scene s;
  char error[512] = "";
  assert_int_equal(peer_scene_build("stack", 0, &s, error, sizeof error), LCP_ERR_NOT_FOUND);
  assert_non_null(strstr(error, "stack"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pyramid),   cmocka_unit_test(test_pile),
      cmocka_unit_test(test_chain),     cmocka_unit_test(test_arm),
      cmocka_unit_test(test_quadruped), cmocka_unit_test(test_unknown_scene),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
