/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's public helpers that programs built on it share instead of
 * keeping copies: the one check of world settings (its messages name the
 * field, the rule and the value), the quaternion functions and FNV-1a. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/lcpsim.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

/* The settings with one field changed fail with exactly this message. */
static void expect_invalid(lcp_world_settings_t s, const char *message) {
  char why[128];
  assert_int_equal(lcp_world_settings_validate(&s, why, sizeof why), LCP_ERR_INVALID_ARGUMENT);
  assert_string_equal(why, message);
}

static void test_settings_rules_and_messages(void **state) {
  (void)state;
  const lcp_world_settings_t d = lcp_world_settings_default();
  char why[128] = "untouched";
  assert_int_equal(lcp_world_settings_validate(&d, why, sizeof why), LCP_OK);
  assert_string_equal(why, "");
  lcp_world_settings_t s = d;
  s.timestep = -0.01;
  expect_invalid(s, "timestep must be > 0 (got -0.01)");
  s.timestep = NAN;
  expect_invalid(s, "timestep must be > 0 (got nan)");
  s.timestep = 2.0;
  expect_invalid(s, "timestep must be <= 1 s (got 2)");
  s = d;
  s.gravity[1] = INFINITY;
  expect_invalid(s, "gravity must be finite (got 0 inf -9.81)");
  s = d;
  s.iterations = 0;
  expect_invalid(s, "iterations must be >= 1 (got 0)");
  s.iterations = 100001;
  expect_invalid(s, "iterations must be <= 100000 (got 100001)");
  s = d;
  s.sor_omega = 2.0;
  expect_invalid(s, "sor_omega must be in (0, 2) (got 2)");
  s = d;
  s.baumgarte_beta = 1.5;
  expect_invalid(s, "baumgarte_beta must be in [0, 1] (got 1.5)");
  s = d;
  s.baumgarte_slop = -1e-3;
  expect_invalid(s, "baumgarte_slop must be finite and >= 0 (got -0.001)");
  s = d;
  s.cfm = NAN;
  expect_invalid(s, "cfm must be finite and >= 0 (got nan)");
  s = d;
  s.contact_margin = INFINITY;
  expect_invalid(s, "contact_margin must be finite and >= 0 (got inf)");
  s = d;
  s.friction_model = (lcp_friction_model_t)7;
  expect_invalid(s, "friction_model must be box or cone (got 7)");
  s = d;
  s.solver = (lcp_solver_kind_t)9;
  expect_invalid(s, "solver must be pgs, jacobi or direct (got 9)");
  s = d;
  s.residual_tolerance = -1.0;
  expect_invalid(s, "residual_tolerance must be finite and >= 0 (got -1)");
  s = d;
  s.direct_max_rows = 0;
  expect_invalid(s, "direct_max_rows must be >= 1 (got 0)");
  /* No message wanted, or a short buffer: the code alone, a cut message. */
  s = d;
  s.iterations = -3;
  assert_int_equal(lcp_world_settings_validate(&s, NULL, 0), LCP_ERR_INVALID_ARGUMENT);
  char short_why[11];
  assert_int_equal(lcp_world_settings_validate(&s, short_why, sizeof short_why),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_string_equal(short_why, "iterations");
  /* The world refuses the same settings with the same words. */
  lcp_world_t *world = NULL;
  assert_int_equal(lcp_world_create(&s, &world), LCP_ERR_INVALID_ARGUMENT);
  assert_null(world);
  assert_int_equal(lcp_world_create(&d, &world), LCP_OK);
  assert_int_equal(lcp_world_set_settings(world, &s), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(world), "iterations must be >= 1 (got -3)"));
  lcp_world_destroy(&world);
}

static void assert_vec3_near(const double a[3], const double b[3], double tolerance) {
  for (int k = 0; k < 3; ++k)
    assert_true(fabs(a[k] - b[k]) <= tolerance);
}

/* A rotation by angle about axis k (0: x, 1: y, 2: z). */
static void axis_quat(int k, double angle, double q[4]) {
  q[0] = cos(0.5 * angle);
  q[1] = q[2] = q[3] = 0.0;
  q[1 + k] = sin(0.5 * angle);
}

static void test_quaternions(void **state) {
  (void)state;
  /* Yaw a quarter turn: x goes to y, to round-off. */
  const double x[3] = {1, 0, 0}, y[3] = {0, 1, 0};
  double q[4], v[3];
  lcp_quat_from_rpy((const double[3]){0, 0, TEST_PI / 2}, q);
  lcp_quat_rotate(q, x, v);
  assert_vec3_near(v, y, 1e-15);
  /* Fixed-axis roll, pitch, yaw: qz(yaw) ⊗ qy(pitch) ⊗ qx(roll). */
  const double rpy[3] = {0.3, -1.1, 2.5};
  double qx[4], qy[4], qz[4], composed[4];
  axis_quat(0, rpy[0], qx);
  axis_quat(1, rpy[1], qy);
  axis_quat(2, rpy[2], qz);
  lcp_quat_multiply(qy, qx, composed);
  lcp_quat_multiply(qz, composed, composed); /* out aliasing b */
  lcp_quat_from_rpy(rpy, q);
  for (int k = 0; k < 4; ++k)
    assert_true(fabs(q[k] - composed[k]) <= 1e-15);
  /* a ⊗ b rotates by b, then by a; the matrix rotates as the quaternion. */
  const double p[3] = {0.2, -0.7, 1.3};
  double a[4], ab[4], by_b[3], by_a_then[3], by_ab[3], R[9];
  lcp_quat_from_rpy((const double[3]){-0.4, 0.9, 0.1}, a);
  lcp_quat_multiply(a, q, ab);
  lcp_quat_rotate(q, p, by_b);
  lcp_quat_rotate(a, by_b, by_a_then);
  lcp_quat_rotate(ab, p, by_ab);
  assert_vec3_near(by_ab, by_a_then, 1e-14);
  lcp_quat_to_matrix(ab, R);
  const double by_matrix[3] = {R[0] * p[0] + R[1] * p[1] + R[2] * p[2],
                               R[3] * p[0] + R[4] * p[1] + R[5] * p[2],
                               R[6] * p[0] + R[7] * p[1] + R[8] * p[2]};
  assert_vec3_near(by_matrix, by_ab, 1e-14);
  /* out may alias v. */
  memcpy(v, p, sizeof v);
  lcp_quat_rotate(ab, v, v);
  assert_vec3_near(v, by_ab, 0.0);
  /* Orientations: finite, norm above 1e-12 (any scale is normalised). */
  assert_true(lcp_quat_is_valid((const double[4]){2, 0, 0, 0}));
  assert_true(lcp_quat_is_valid((const double[4]){0, 0, 1e-11, 0}));
  assert_false(lcp_quat_is_valid((const double[4]){0, 0, 0, 0}));
  assert_false(lcp_quat_is_valid((const double[4]){1e-13, 0, 0, 0}));
  assert_false(lcp_quat_is_valid((const double[4]){1, NAN, 0, 0}));
  assert_false(lcp_quat_is_valid((const double[4]){1, 0, INFINITY, 0}));
}

/* FNV-1a's published 64-bit test vectors, and continuing a hash. */
static void test_hash(void **state) {
  (void)state;
  assert_true(lcp_hash_bytes(LCP_HASH_SEED, "", 0) == 0xcbf29ce484222325ull);
  assert_true(lcp_hash_bytes(LCP_HASH_SEED, "a", 1) == 0xaf63dc4c8601ec8cull);
  assert_true(lcp_hash_bytes(LCP_HASH_SEED, "foobar", 6) == 0x85944171f73967e8ull);
  assert_true(lcp_hash_bytes(lcp_hash_bytes(LCP_HASH_SEED, "foo", 3), "bar", 3) ==
              0x85944171f73967e8ull);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_settings_rules_and_messages),
      cmocka_unit_test(test_quaternions),
      cmocka_unit_test(test_hash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
