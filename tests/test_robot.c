/* SPDX-License-Identifier: Apache-2.0 */
/* Robots in a world through the public API: adding the shipped arm, joint
 * and link queries, setting q, the mass matrix and inverse dynamics at the
 * current state, bad input refused with the world unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "id_pool.h"
#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static lcp_robot_def_t *load_arm(void) {
  lcp_urdf_options_t o = lcp_urdf_options_default();
  o.floating_base = 0;
  lcp_robot_def_t *def = NULL;
  char err[256];
  assert_int_equal(lcp_urdf_load_file(LCP_TEST_ROBOTS_DIR "/arm7.urdf", &o, &def, err, sizeof err),
                   LCP_OK);
  return def;
}

static void test_arm_in_world(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_robot_def_t *def = load_arm();
  lcp_robot_id id;
  const double base[3] = {0.5, -0.2, 0.1};
  assert_int_equal(lcp_robot_add(w, def, base, NULL, &id), LCP_OK);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, id, &info), LCP_OK);
  assert_int_equal(info.joint_count, 7);
  assert_int_equal(info.nq, 7);
  assert_false(info.floating_base);
  lcp_robot_id found;
  assert_int_equal(lcp_robot_find(w, info.name, &found), LCP_OK);
  assert_int_equal(found, id);
  /* The same name twice is refused. */
  assert_int_equal(lcp_robot_add(w, def, base, NULL, NULL), LCP_ERR_INVALID_ARGUMENT);

  /* Link 0 sits at the base pose; with all joints at 0 the arm stands
   * straight up, so the last link is above the base by the joint offsets. */
  double p0[3], plast[3];
  assert_int_equal(lcp_robot_get_link_pose(w, id, 0, p0, NULL), LCP_OK);
  for (int k = 0; k < 3; ++k)
    assert_true(fabs(p0[k] - base[k]) < 1e-12);
  assert_int_equal(lcp_robot_get_link_pose(w, id, info.link_count - 1, plast, NULL), LCP_OK);
  assert_true(fabs(plast[0] - base[0]) < 1e-12 && plast[2] > base[2] + 1.0);

  /* Turning the second joint (about y) by 90° lays the arm over: the last
   * link comes down towards the base height. */
  lcp_joint_info_t j;
  assert_int_equal(lcp_robot_get_joint(w, id, 1, &j), LCP_OK);
  assert_true(fabs(j.axis[1]) > 0.99);
  int32_t by_name;
  assert_int_equal(lcp_robot_find_joint(w, id, j.name, &by_name), LCP_OK);
  assert_int_equal(by_name, 1);
  double q[7] = {0, (0.5 * 3.14159265358979323846), 0, 0, 0, 0, 0};
  assert_int_equal(lcp_robot_set_q(w, id, q, 7), LCP_OK);
  double laid[3];
  assert_int_equal(lcp_robot_get_link_pose(w, id, info.link_count - 1, laid, NULL), LCP_OK);
  assert_true(laid[2] < plast[2] - 1.0);

  /* Mass matrix: symmetric, positive diagonal; inverse dynamics at rest
   * with zero acceleration is the gravity torque, zero about the vertical
   * first joint. */
  double M[49], tau[7];
  assert_int_equal(lcp_robot_mass_matrix(w, id, M, 7), LCP_OK);
  for (int r = 0; r < 7; ++r) {
    assert_true(M[r * 7 + r] > 0.0);
    for (int c = 0; c < 7; ++c)
      assert_true(fabs(M[r * 7 + c] - M[c * 7 + r]) < 1e-12);
  }
  assert_int_equal(lcp_robot_inverse_dynamics(w, id, NULL, tau, 7), LCP_OK);
  assert_true(fabs(tau[0]) < 1e-9);
  assert_true(fabs(tau[1]) > 1.0); /* holding the laid-over arm */

  /* Bad input: wrong length, NaN, unknown names; state unchanged. */
  uint64_t hash = lcp_world_state_hash(w);
  assert_int_equal(lcp_robot_set_q(w, id, q, 6), LCP_ERR_INVALID_ARGUMENT);
  q[3] = NAN;
  assert_int_equal(lcp_robot_set_q(w, id, q, 7), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_robot_find_joint(w, id, "no_such_joint", &by_name), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_get_joint(w, id, 7, &j), LCP_ERR_NOT_FOUND);
  assert_true(lcp_world_state_hash(w) == hash);

  /* Snapshots carry the robot's state. */
  size_t size = lcp_world_state_size(w);
  unsigned char buf[4096];
  assert_true(size <= sizeof buf);
  assert_int_equal(lcp_world_save_state(w, buf, sizeof buf, &size), LCP_OK);
  double q2[7] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  assert_int_equal(lcp_robot_set_q(w, id, q2, 7), LCP_OK);
  assert_false(lcp_world_state_hash(w) == hash);
  assert_int_equal(lcp_world_restore_state(w, buf, size), LCP_OK);
  assert_true(lcp_world_state_hash(w) == hash);

  assert_int_equal(lcp_robot_remove(w, id), LCP_OK);
  assert_int_equal(lcp_world_robot_count(w), 0);
  assert_int_equal(lcp_robot_get_info(w, id, &info), LCP_ERR_NOT_FOUND);
  lcp_robot_def_free(&def);
  assert_null(def);
  lcp_world_destroy(&w);
}

/* A removed robot's id is refused by every call taking a robot, even once a
 * new robot has its index (the low bits of an id, id_pool.h); the
 * new robot's id works, and the stale id touches nothing of it. */
static void test_stale_robot_id_refused(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_robot_def_t *def = load_arm();
  lcp_robot_id old, other, fresh;
  assert_int_equal(lcp_robot_add(w, def, (double[]){0, 0, 0}, NULL, &old), LCP_OK);
  char name[LCP_NAME_MAX];
  memcpy(name, def->name, LCP_NAME_MAX);
  snprintf(def->name, LCP_NAME_MAX, "other");
  assert_int_equal(lcp_robot_add(w, def, (double[]){2, 0, 0}, NULL, &other), LCP_OK);
  assert_int_equal(lcp_robot_remove(w, old), LCP_OK);
  memcpy(def->name, name, LCP_NAME_MAX); /* the name is free again */
  const double base[3] = {0, 3, 0};
  assert_int_equal(lcp_robot_add(w, def, base, NULL, &fresh), LCP_OK);
  assert_true(fresh != old && fresh != other && fresh != LCP_NULL_ID);
  assert_int_equal((uint32_t)fresh & ID_INDEX_MASK, (uint32_t)old & ID_INDEX_MASK);

  uint64_t hash = lcp_world_state_hash(w);
  lcp_robot_info_t info;
  double q[7] = {0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3}, M[49], p[3];
  int32_t index;
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_VELOCITY;
  c.kd = 1.0;
  const int32_t generation_step = (int32_t)(UINT32_C(1) << ID_INDEX_BITS);
  const lcp_robot_id bad[] = {
      old, LCP_NULL_ID, -3, INT32_MIN, INT32_MAX, 4242, fresh + generation_step};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    lcp_robot_id id = bad[i];
    assert_int_equal(lcp_robot_get_info(w, id, &info), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_find_link(w, id, "link0", &index), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_get_q(w, id, q, 7), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_set_q(w, id, q, 7), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_set_qd(w, id, q, 7), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_get_link_pose(w, id, 0, p, NULL), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_apply_generalized_force(w, id, q, 7), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_mass_matrix(w, id, M, 7), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_robot_remove(w, id), LCP_ERR_NOT_FOUND);
  }
  assert_true(lcp_world_state_hash(w) == hash); /* nothing reached the new robot */
  assert_int_equal(lcp_world_robot_count(w), 2);

  lcp_robot_id found;
  assert_int_equal(lcp_robot_find(w, name, &found), LCP_OK);
  assert_int_equal(found, fresh);
  lcp_robot_id ids[2];
  assert_int_equal(lcp_world_robot_ids(w, ids, 2), 2);
  assert_int_equal(ids[0], other); /* creation order */
  assert_int_equal(ids[1], fresh);
  assert_int_equal(lcp_robot_get_link_pose(w, fresh, 0, p, NULL), LCP_OK);
  for (int k = 0; k < 3; ++k)
    assert_true(p[k] == base[k]);
  assert_int_equal(lcp_robot_set_q(w, fresh, q, 7), LCP_OK);
  assert_int_equal(lcp_robot_remove(w, fresh), LCP_OK);
  assert_int_equal(lcp_robot_get_info(w, fresh, &info), LCP_ERR_NOT_FOUND);
  /* other moved down to the first slot and is still itself */
  assert_int_equal(lcp_robot_get_link_pose(w, other, 0, p, NULL), LCP_OK);
  assert_true(p[0] == 2.0 && p[1] == 0.0 && p[2] == 0.0);
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_arm_in_world),
                                     cmocka_unit_test(test_stale_robot_id_refused)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
