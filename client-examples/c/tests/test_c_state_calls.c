/* SPDX-License-Identifier: Apache-2.0 */
/* The C client's SetRobotState, SetBodyState, ApplyWrench and SetDynamics
 * against a live lcpsimd (the built-in world: 'arm7', a table and a box):
 * values set read back exactly; a held force's impulse is the momentum it
 * gives a one-link floating robot (gravity off), and twice its mass halves
 * the speed; a bad SetDynamics is refused whole. */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "lcpsim_client.h"
#include "test_daemon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *daemon_path;

typedef test_live_t live_t;

static int start_live(void **state) { return test_live_start(daemon_path, (test_live_t **)state); }

static int stop_live(void **state) { return test_live_stop((test_live_t **)state); }

static void set_state_reads_back(void **state) {
  live_t *live = *state;
  lcpsim_client_t *c = live->client;
  const lcpsim_joint_state_t joints[] = {{.name = "joint2", .has_position = true, .position = 0.4},
                                         {.name = "joint4", .has_velocity = true, .velocity = 0.1}};
  lcpsim_robot_state_change_t change = {.robot = "arm7", .joints = joints, .n_joints = 2};
  assert_int_equal(lcpsim_client_set_robot_state(c, &change), LCPSIM_OK);
  lcpsim_body_state_change_t box = {
      .name = "box", .has_pose = true, .pose = {.position = {0.6, 0.05, 0.5}}};
  assert_int_equal(lcpsim_client_set_body_state(c, &box), LCPSIM_OK);
  lcpsim_state_t *s = NULL;
  assert_int_equal(lcpsim_client_get_state(c, LCPSIM_WITHOUT_CONTACTS, &s), LCPSIM_OK);
  const lcpsim_robot_state_t *arm = lcpsim_state_find_robot(s, "arm7");
  assert_true(arm->q[1] == 0.4 && arm->qd[3] == 0.1);
  for (size_t i = 0; i < s->n_bodies; ++i)
    if (strcmp(s->bodies[i]->name, "box") == 0)
      assert_true(s->bodies[i]->pose->position->y == 0.05);
  lcpsim_state_destroy(&s);
  /* Wrong length: refused, naming the field. */
  const double short_q[3] = {0, 0, 0};
  lcpsim_robot_state_change_t bad = {.robot = "arm7", .q = short_q, .n_q = 3};
  assert_int_equal(lcpsim_client_set_robot_state(c, &bad), LCPSIM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcpsim_client_last_error(c), "set_robot_state.q has 3 values"));
}

static const char *PUCK_URDF =
    "<robot name='puck'><link name='body'><inertial><mass value='2'/>"
    "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial>"
    "</link></robot>";

static double puck_speed_y(lcpsim_client_t *c) {
  lcpsim_state_t *s = NULL;
  assert_int_equal(lcpsim_client_get_state(c, LCPSIM_WITHOUT_CONTACTS, &s), LCPSIM_OK);
  double vy = lcpsim_state_find_robot(s, "puck")->base_twist->linear->y;
  lcpsim_state_destroy(&s);
  return vy;
}

static void held_wrench_impulse_and_mass(void **state) {
  live_t *live = *state;
  lcpsim_client_t *c = live->client;
  lcpsim_settings_change_t no_gravity = {.has_gravity = true};
  lcpsim_settings_t *settings = NULL;
  assert_int_equal(lcpsim_client_set_settings(c, &no_gravity, &settings), LCPSIM_OK);
  const double h = settings->timestep;
  lcpsim_settings_destroy(&settings);
  lcpsim_model_t puck = {
      .urdf_text = PUCK_URDF, .base = LCPSIM_BASE_FLOATING, .base_pose = {.position = {0, 0, 3}}};
  assert_int_equal(lcpsim_client_load_model(c, &puck, NULL), LCPSIM_OK);
  lcpsim_wrench_t push = {.target = "puck", .force = {0, 6, 0}, .hold = true};
  uint32_t hold = 0;
  assert_int_equal(lcpsim_client_apply_wrench(c, &push, &hold), LCPSIM_OK);
  assert_true(hold > 0);
  assert_int_equal(lcpsim_client_step(c, 24, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL), LCPSIM_OK);
  assert_int_equal(lcpsim_client_clear_wrench(c, hold), LCPSIM_OK);
  assert_int_equal(lcpsim_client_step(c, 5, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL), LCPSIM_OK);
  assert_true(fabs(2.0 * puck_speed_y(c) - 6.0 * 24 * h) < 1e-9);

  /* Twice the mass, from rest: half the speed for the same impulse. */
  lcpsim_body_dynamics_t heavier = {.robot = "puck",
                                    .link = "body",
                                    .has_mass = true,
                                    .mass = 4.0,
                                    .n_inertia = 3,
                                    .inertia = {0.02, 0.02, 0.02}};
  assert_int_equal(lcpsim_client_set_dynamics(c, &heavier, 1, NULL, 0), LCPSIM_OK);
  lcpsim_robot_state_change_t rest = {.robot = "puck", .has_base_twist = true};
  assert_int_equal(lcpsim_client_set_robot_state(c, &rest), LCPSIM_OK);
  push.hold = false;
  assert_int_equal(lcpsim_client_apply_wrench(c, &push, &hold), LCPSIM_OK);
  assert_int_equal(hold, 0);
  assert_int_equal(lcpsim_client_step(c, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL), LCPSIM_OK);
  assert_true(fabs(4.0 * puck_speed_y(c) - 6.0 * h) < 1e-9);

  /* A bad entry after a good one: refused whole, naming the entry. */
  lcpsim_body_dynamics_t entries[2] = {
      {.robot = "puck", .link = "body", .has_mass = true, .mass = 8.0},
      {.body = "box", .has_restitution = true, .restitution = 3.0}};
  assert_int_equal(lcpsim_client_set_dynamics(c, entries, 2, NULL, 0), LCPSIM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcpsim_client_last_error(c), "set_dynamics.bodies[1]"));
  assert_int_equal(lcpsim_client_set_robot_state(c, &rest), LCPSIM_OK);
  assert_int_equal(lcpsim_client_apply_wrench(c, &push, NULL), LCPSIM_OK);
  assert_int_equal(lcpsim_client_step(c, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL), LCPSIM_OK);
  assert_true(fabs(4.0 * puck_speed_y(c) - 6.0 * h) < 1e-9); /* still 4 kg */
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PATH_TO_LCPSIMD\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(set_state_reads_back, start_live, stop_live),
      cmocka_unit_test_setup_teardown(held_wrench_impulse_and_mass, start_live, stop_live),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
