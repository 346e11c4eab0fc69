/* SPDX-License-Identifier: Apache-2.0 */
/* The state a step leaves is checked (lcpsim.h, LCP_STATE_MAX_*): a step
 * that would leave a body or a robot non-finite, too far or too fast fails
 * with LCP_ERR_NUMERIC naming it, and the world is bitwise as before the
 * step (its snapshot bytes, its contacts, its time). Gravity is bounded as
 * a setting; a state within the bounds steps as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"
#include "test_models.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The world's snapshot bytes (malloc'd) and their size. */
static unsigned char *snapshot(const lcp_world_t *w, size_t *size) {
  *size = lcp_world_state_size(w);
  unsigned char *bytes = malloc(*size);
  assert_non_null(bytes);
  assert_int_equal(lcp_world_save_state(w, bytes, *size, size), LCP_OK);
  return bytes;
}

/* Asserts the step fails with LCP_ERR_NUMERIC, its message containing
 * needle, and leaves the snapshot bytes and the contacts as they were. */
static void assert_step_refused(lcp_world_t *w, const char *needle) {
  size_t size_before, size_after;
  unsigned char *before = snapshot(w, &size_before);
  lcp_contact_info_t contacts_before[16], contacts_after[16];
  int32_t n_before = lcp_world_get_contacts(w, contacts_before, 16);
  double time = lcp_world_time(w);
  assert_int_equal(lcp_world_step(w), LCP_ERR_NUMERIC);
  const char *why = lcp_world_last_error(w);
  print_message("refused: %s\n", why);
  assert_non_null(strstr(why, needle));
  unsigned char *after = snapshot(w, &size_after);
  assert_int_equal(size_before, size_after);
  assert_memory_equal(before, after, size_before);
  int32_t n_after = lcp_world_get_contacts(w, contacts_after, 16);
  assert_int_equal(n_before, n_after);
  if (n_before > 0)
    assert_memory_equal(contacts_before, contacts_after,
                        (size_t)(n_before < 16 ? n_before : 16) * sizeof *contacts_before);
  assert_true(lcp_world_time(w) == time);
  free(before);
  free(after);
}

/* A box resting on the ground (contacts kept), and a ball given a speed
 * beyond the bound: the step is refused and changes nothing; slowed to
 * within the bound, it steps again. */
static void test_too_fast_body_refused_bitwise(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1.0 / 240.0, true);
  assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id resting = test_add_solid(w, &box, 1.0, (double[3]){0, 0, 0.1}, NULL);
  lcp_geom_def_t ball = test_sphere_def(0.05, 0.5);
  lcp_body_id fast = test_add_solid(w, &ball, 1.0, (double[3]){3, 0, 2}, NULL);
  assert_true(resting != LCP_NULL_ID && fast != LCP_NULL_ID);
  test_step_n(w, 20);
  assert_true(lcp_world_get_contacts(w, NULL, 0) > 0);
  const double beyond[3] = {2.0 * LCP_STATE_MAX_LINEAR_SPEED, 0, 0}, spin[3] = {0, 0, 0};
  assert_int_equal(lcp_body_set_velocity(w, fast, beyond, spin), LCP_OK);
  assert_step_refused(w, "speed");
  char id[32];
  snprintf(id, sizeof id, "body id %u", (unsigned)fast);
  assert_non_null(strstr(lcp_world_last_error(w), id));
  const double within[3] = {1.0, 0, 0};
  assert_int_equal(lcp_body_set_velocity(w, fast, within, spin), LCP_OK);
  test_step_n(w, 5);
  lcp_world_destroy(&w);
}

/* A ball moving out at a speed within the bound crosses the position
 * bound: the step that would take it past is refused; a spin beyond the
 * angular bound is refused too. */
static void test_far_and_spinning_body_refused(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(0.01, false);
  lcp_geom_def_t ball = test_sphere_def(0.05, 0.5);
  lcp_body_id id =
      test_add_solid(w, &ball, 1.0, (double[3]){LCP_STATE_MAX_POSITION - 5.0, 0, 0}, NULL);
  const double out[3] = {1000.0, 0, 0}, none[3] = {0, 0, 0};
  assert_int_equal(lcp_body_set_velocity(w, id, out, none), LCP_OK);
  assert_step_refused(w, "position x");
  const double home[3] = {0, 0, 0}, unit[4] = {1, 0, 0, 0};
  assert_int_equal(lcp_body_set_pose(w, id, home, unit), LCP_OK);
  const double spin[3] = {0, 0, 2.0 * LCP_STATE_MAX_ANGULAR_SPEED};
  assert_int_equal(lcp_body_set_velocity(w, id, none, spin), LCP_OK);
  assert_step_refused(w, "angular speed");
  lcp_world_destroy(&w);
}

static const char PENDULUM[] = TEST_FLOATING_PENDULUM_URDF;

/* Gravity 1e12 is refused as a setting; at the largest gravity allowed, a
 * joint rate beyond the bound is refused when it is set (a world whose every
 * step would fail is never made), the world as before, and a fast base
 * leaves the position bound after some steps, each step before it kept and
 * the one that would cross refused. */
static void test_floating_pendulum(void **state) {
  (void)state;
  lcp_world_settings_t s = lcp_world_settings_default();
  s.gravity[2] = -1e12;
  char why[128];
  assert_int_equal(lcp_world_settings_validate(&s, why, sizeof why), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(why, "gravity"));
  s.gravity[2] = -LCP_MAX_GRAVITY;
  assert_int_equal(lcp_world_settings_validate(&s, NULL, 0), LCP_OK);
  lcp_world_t *w = test_create_world(&s);
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.floating_base = 1;
  lcp_robot_def_t *def = NULL;
  char error[256];
  assert_int_equal(lcp_urdf_load_string(PENDULUM, NULL, &options, &def, error, sizeof error),
                   LCP_OK);
  lcp_robot_id robot;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &robot), LCP_OK);
  lcp_robot_def_free(&def);
  test_step_n(w, 10);
  double qd[7] = {0};
  assert_int_equal(lcp_robot_get_qd(w, robot, qd, 7), LCP_OK);
  qd[6] = 2.0 * LCP_STATE_MAX_ANGULAR_SPEED;
  const uint64_t hash = lcp_world_state_hash(w);
  assert_int_equal(lcp_robot_set_qd(w, robot, qd, 7), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "robot 'pendulum'"));
  assert_true(lcp_world_state_hash(w) == hash);
  qd[6] = 0.0;
  qd[0] = 0.9 * LCP_STATE_MAX_LINEAR_SPEED;
  assert_int_equal(lcp_robot_set_qd(w, robot, qd, 7), LCP_OK);
  int kept = 0;
  while (kept < 1000 && lcp_world_step(w) == LCP_OK)
    kept++;
  print_message("base at %g m/s: %d steps kept, then: %s\n", qd[0], kept, lcp_world_last_error(w));
  double q[8];
  assert_int_equal(lcp_robot_get_q(w, robot, q, 8), LCP_OK);
  assert_true(kept > 100 && kept < 1000);
  assert_true(fabs(q[0]) <= LCP_STATE_MAX_POSITION);
  assert_step_refused(w, "base's position x");
  lcp_world_destroy(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_too_fast_body_refused_bitwise),
      cmocka_unit_test(test_far_and_spinning_body_refused),
      cmocka_unit_test(test_floating_pendulum),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
