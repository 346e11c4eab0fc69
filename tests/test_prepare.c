/* lcp_world_prepare_step: the stages before the solve run ahead of the
 * step, and the step's result is bitwise what it would have been without.
 * Between the two, the controllers' targets, gains and effort limits may
 * change and the prepared work is kept (the controller rows are rebuilt);
 * a change of mode or of the feed-forward torque, and any other change to
 * the world, drops it. Each case runs a world that prepares beside one that
 * does not, with the same calls in the same order, and compares their state
 * hashes after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "scenes.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JOINTS 16

typedef struct scene {
  lcp_world_t *world;
  lcp_robot_scene_t robot;
  int32_t joints;
  lcp_body_id box;
} scene;

/* The quadruped (floating base, contacts on its feet, PD on every joint)
 * landing from 2 cm, and a free box landing beside it: link contacts, body
 * contacts and controller rows in one problem. */
static scene make_scene(void) {
  scene s = {0};
  lcp_world_settings_t settings = lcp_scene_robot_settings();
  assert_int_equal(lcp_world_create(&settings, &s.world), LCP_OK);
  assert_int_equal(lcp_scene_quadruped(s.world, 300.0, 10.0, 0.02, &s.robot), LCP_OK);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(s.world, s.robot.robot, &info), LCP_OK);
  s.joints = info.joint_count;
  assert_true(s.joints > 0 && s.joints <= MAX_JOINTS);
  lcp_geom_def_t box = test_box_def(0.05, 0.05, 0.05, 0.8);
  s.box = test_add_solid(s.world, &box, 0.5, (double[]){0.6, 0.0, 0.06}, NULL);
  assert_int_not_equal(s.box, LCP_NULL_ID);
  return s;
}

/* Position targets about the standing pose, moving with the step k. */
static void set_targets(const scene *s, int k, double phase) {
  lcp_joint_control_t c[MAX_JOINTS];
  for (int32_t j = 0; j < s->joints; ++j) {
    assert_int_equal(lcp_robot_get_joint_control(s->world, s->robot.robot, j, &c[j]), LCP_OK);
    c[j].mode = LCP_CONTROL_POSITION;
    c[j].position = lcp_scene_quadruped_stand_angle(s->world, s->robot.robot, j) +
                    0.2 * sin(0.05 * k + j + phase);
    c[j].kp = 300.0 + 10.0 * (k % 3);
    c[j].kd = 10.0;
  }
  assert_int_equal(lcp_robot_set_controls(s->world, s->robot.robot, c, s->joints), LCP_OK);
}

static bool step_was_prepared(const lcp_world_t *w) {
  lcp_step_stats_t st;
  lcp_world_get_stats(w, &st);
  return st.prepared;
}

/* A control loop: the prepared world is prepared with one set of targets,
 * then given the tick's own targets and gains (as a server does when the
 * next Step arrives), and stepped; the other is given the same targets and
 * stepped. Bitwise the same state every step, and the prepared work is
 * used every step. */
static void test_prepared_control_loop_is_bitwise(void **state) {
  (void)state;
  scene a = make_scene(), b = make_scene();
  int32_t contacts_seen = 0;
  for (int k = 0; k < 600; ++k) {
    set_targets(&a, k, 0.0);
    assert_int_equal(lcp_world_prepare_step(a.world), LCP_OK);
    assert_int_equal(lcp_world_prepare_step(a.world), LCP_OK); /* twice: still once */
    set_targets(&a, k, 1.0);
    set_targets(&b, k, 1.0);
    assert_int_equal(lcp_world_step(a.world), LCP_OK);
    assert_int_equal(lcp_world_step(b.world), LCP_OK);
    assert_true(step_was_prepared(a.world));
    assert_false(step_was_prepared(b.world));
    assert_true(lcp_world_state_hash(a.world) == lcp_world_state_hash(b.world));
    lcp_step_stats_t st;
    lcp_world_get_stats(a.world, &st);
    if (st.contacts > contacts_seen)
      contacts_seen = st.contacts;
  }
  /* The feet and the box were on the ground: contact rows were prepared. */
  assert_true(contacts_seen >= 5);
  lcp_world_destroy(&a.world);
  lcp_world_destroy(&b.world);
}

/* What happens between the preparation and the step, on step k: each is
 * done to both worlds; `kept` says whether the prepared work survives. */
typedef struct change {
  const char *name;
  void (*apply)(const scene *s, int k);
  bool kept;
} change;

static void change_effort_limit(const scene *s, int k) {
  (void)k;
  lcp_joint_control_t c;
  assert_int_equal(lcp_robot_get_joint_control(s->world, s->robot.robot, 1, &c), LCP_OK);
  c.effort_limit = 5.0; /* tight: the controller row's bounds bind */
  assert_int_equal(lcp_robot_set_joint_control(s->world, s->robot.robot, 1, &c), LCP_OK);
}

static void change_mode(const scene *s, int k) {
  (void)k;
  lcp_joint_control_t c;
  assert_int_equal(lcp_robot_get_joint_control(s->world, s->robot.robot, 2, &c), LCP_OK);
  c.mode = LCP_CONTROL_TORQUE;
  c.torque = 1.5;
  assert_int_equal(lcp_robot_set_joint_control(s->world, s->robot.robot, 2, &c), LCP_OK);
}

static void change_gravity_compensation(const scene *s, int k) {
  assert_int_equal(lcp_robot_set_gravity_compensation(s->world, s->robot.robot, k % 2 == 0),
                   LCP_OK);
}

static void change_box_force(const scene *s, int k) {
  (void)k;
  assert_int_equal(lcp_body_apply_force_at_center(s->world, s->box, (double[]){2.0, 0.0, 0.0}),
                   LCP_OK);
}

static void change_robot_force(const scene *s, int k) {
  (void)k;
  assert_int_equal(lcp_robot_apply_link_force(s->world, s->robot.robot, 0,
                                              (double[]){0.0, 5.0, 0.0}, (double[]){0, 0, 0.3}),
                   LCP_OK);
}

static void change_box_pose(const scene *s, int k) {
  (void)k;
  assert_int_equal(
      lcp_body_set_velocity(s->world, s->box, (double[]){0.1, 0.0, 0.0}, (double[]){0.0, 0.0, 0.5}),
      LCP_OK);
}

static void change_settings(const scene *s, int k) {
  lcp_world_settings_t settings;
  lcp_world_get_settings(s->world, &settings);
  settings.iterations = 10 + k % 7;
  assert_int_equal(lcp_world_set_settings(s->world, &settings), LCP_OK);
}

static void query_mass_matrix(const scene *s, int k) {
  (void)k;
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(s->world, s->robot.robot, &info), LCP_OK);
  double *M = malloc(sizeof(double) * (size_t)(info.nv * info.nv));
  assert_int_equal(lcp_robot_mass_matrix(s->world, s->robot.robot, M, info.nv), LCP_OK);
  free(M);
}

static void restore_itself(const scene *s, int k) {
  (void)k;
  size_t size = lcp_world_state_size(s->world), written = 0;
  void *snapshot = malloc(size);
  assert_int_equal(lcp_world_save_state(s->world, snapshot, size, &written), LCP_OK);
  assert_int_equal(lcp_world_restore_state(s->world, snapshot, size), LCP_OK);
  free(snapshot);
}

static void test_changes_between_prepare_and_step(void **state) {
  (void)state;
  static const change changes[] = {
      {"targets and gains only", NULL, true},
      {"an effort limit", change_effort_limit, true},
      {"a mode (position to torque)", change_mode, false},
      {"gravity compensation", change_gravity_compensation, false},
      {"a force on the box", change_box_force, false},
      {"a force on a link", change_robot_force, false},
      {"the box's velocity", change_box_pose, false},
      {"the settings", change_settings, false},
      {"a mass-matrix query", query_mass_matrix, false},
      {"a restore of the world's own state", restore_itself, false},
  };
  for (size_t c = 0; c < sizeof changes / sizeof changes[0]; ++c) {
    scene a = make_scene(), b = make_scene();
    for (int k = 0; k < 200; ++k) {
      set_targets(&a, k, 0.0);
      set_targets(&b, k, 0.0);
      assert_int_equal(lcp_world_prepare_step(a.world), LCP_OK);
      set_targets(&a, k, 0.5);
      set_targets(&b, k, 0.5);
      /* From step 100 on: the change, made after the preparation. */
      if (k >= 100 && changes[c].apply) {
        changes[c].apply(&a, k);
        changes[c].apply(&b, k);
      }
      assert_int_equal(lcp_world_step(a.world), LCP_OK);
      assert_int_equal(lcp_world_step(b.world), LCP_OK);
      bool expected = k < 100 || changes[c].kept;
      if (step_was_prepared(a.world) != expected)
        fail_msg("%s: step %d %s the prepared work", changes[c].name, k,
                 expected ? "dropped" : "kept");
      if (lcp_world_state_hash(a.world) != lcp_world_state_hash(b.world))
        fail_msg("%s: step %d differs from the unprepared world", changes[c].name, k);
    }
    lcp_world_destroy(&a.world);
    lcp_world_destroy(&b.world);
  }
}

/* A world of many free bodies (the sweep-and-prune broad phase, which keeps
 * its sort order from step to step): preparing and then dropping the work
 * every step leaves the run bitwise as one that never prepared. */
static void test_dropped_preparation_changes_nothing(void **state) {
  (void)state;
  lcp_world_settings_t settings = lcp_scene_settings();
  lcp_world_t *a = NULL, *b = NULL;
  assert_int_equal(lcp_world_create(&settings, &a), LCP_OK);
  assert_int_equal(lcp_world_create(&settings, &b), LCP_OK);
  assert_int_equal(lcp_scene_pile(a, 120, NULL), LCP_OK);
  assert_int_equal(lcp_scene_pile(b, 120, NULL), LCP_OK);
  lcp_body_id ids[4];
  assert_int_equal(lcp_world_body_ids(a, ids, 4) >= 2, true);
  for (int k = 0; k < 300; ++k) {
    assert_int_equal(lcp_world_prepare_step(a), LCP_OK);
    /* a zero force still counts as a change: the work is dropped */
    assert_int_equal(lcp_body_apply_force_at_center(a, ids[1], (double[]){0, 0, 0}), LCP_OK);
    assert_int_equal(lcp_world_step(a), LCP_OK);
    assert_int_equal(lcp_world_step(b), LCP_OK);
    assert_false(step_was_prepared(a));
    assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  }
  lcp_step_stats_t st;
  lcp_world_get_stats(a, &st);
  assert_true(st.contacts > 50);
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
}

/* A free multibody (the chain in the air: no row touches it) has its
 * free velocity from forward dynamics at the mid-step velocity, which
 * leaves the links' velocities there. Queries after a preparation, after
 * the preparation is dropped, and after the step must still give the
 * state's: bitwise those of a world never prepared. */
static void expect_same_link_velocities(lcp_world_t *a, lcp_world_t *b, lcp_robot_id robot,
                                        int32_t links) {
  for (int32_t l = 0; l < links; ++l) {
    double va[3], wa[3], vb[3], wb[3];
    assert_int_equal(lcp_robot_get_link_velocity(a, robot, l, va, wa), LCP_OK);
    assert_int_equal(lcp_robot_get_link_velocity(b, robot, l, vb, wb), LCP_OK);
    assert_memory_equal(va, vb, sizeof va);
    assert_memory_equal(wa, wb, sizeof wa);
  }
}

static void test_queries_after_preparation(void **state) {
  (void)state;
  lcp_world_settings_t settings = lcp_scene_robot_settings();
  lcp_world_t *a = NULL, *b = NULL;
  lcp_robot_scene_t chain_a, chain_b;
  assert_int_equal(lcp_world_create(&settings, &a), LCP_OK);
  assert_int_equal(lcp_world_create(&settings, &b), LCP_OK);
  assert_int_equal(lcp_scene_chain(a, &chain_a), LCP_OK);
  assert_int_equal(lcp_scene_chain(b, &chain_b), LCP_OK);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(a, chain_a.robot, &info), LCP_OK);
  /* falling and turning, in the air */
  double qd[64] = {0};
  assert_true(info.nv <= 64);
  for (int32_t k = 0; k < info.nv; ++k)
    qd[k] = 0.3 * sin(1.0 + k);
  assert_int_equal(lcp_robot_set_qd(a, chain_a.robot, qd, info.nv), LCP_OK);
  assert_int_equal(lcp_robot_set_qd(b, chain_b.robot, qd, info.nv), LCP_OK);
  for (int k = 0; k < 5; ++k) {
    assert_int_equal(lcp_world_step(a), LCP_OK);
    assert_int_equal(lcp_world_step(b), LCP_OK);
  }
  lcp_step_stats_t st;
  lcp_world_get_stats(a, &st);
  assert_int_equal(st.rows, 0); /* free: the mid-step passes ran */
  assert_int_equal(lcp_world_prepare_step(a), LCP_OK);
  expect_same_link_velocities(a, b, chain_a.robot, info.link_count);
  lcp_world_settings_t same;
  lcp_world_get_settings(a, &same);
  assert_int_equal(lcp_world_set_settings(a, &same), LCP_OK); /* drops the preparation */
  expect_same_link_velocities(a, b, chain_a.robot, info.link_count);
  assert_int_equal(lcp_world_prepare_step(a), LCP_OK);
  assert_int_equal(lcp_world_step(a), LCP_OK);
  assert_int_equal(lcp_world_step(b), LCP_OK);
  assert_true(step_was_prepared(a));
  expect_same_link_velocities(a, b, chain_a.robot, info.link_count);
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prepared_control_loop_is_bitwise),
      cmocka_unit_test(test_changes_between_prepare_and_step),
      cmocka_unit_test(test_dropped_preparation_changes_nothing),
      cmocka_unit_test(test_queries_after_preparation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
