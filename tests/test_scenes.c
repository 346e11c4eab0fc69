/* SPDX-License-Identifier: Apache-2.0 */
/* The robot scenes of server/model/scenes.c ("arm", "chain",
 * and the quadruped) as physics checks: the shipped quadruped dropped on the
 * ground comes to rest without its feet sinking in, stands under PD control
 * without sagging or sliding; the chain comes to rest flat on the plane; the
 * arm tracks its sine targets as the kp = 100, kd = 10 dynamics say. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "scenes.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static lcp_world_t *robot_world(void) {
  lcp_world_settings_t s = lcp_scene_robot_settings();
  lcp_world_t *w = test_create_world(&s);
  return w;
}

/* The largest linear speed of any link frame origin, m/s. */
static double max_link_speed(const lcp_world_t *w, const lcp_robot_scene_t *scene) {
  double fastest = 0.0;
  for (int32_t l = 0; l < scene->bodies; ++l) {
    double v[3], omega[3];
    assert_int_equal(lcp_robot_get_link_velocity(w, scene->robot, l, v, omega), LCP_OK);
    fastest = fmax(fastest, test_norm3(v));
  }
  return fastest;
}

/* The deepest contact of the last step on a link carrying a foot, and over
 * all of the robot's contacts; returns how many of the last step's contacts
 * are on links carrying feet (*others: on other links). */
static int32_t contact_depths(const lcp_world_t *w, const lcp_robot_scene_t *scene, double *foot,
                              double *any, int32_t *others) {
  lcp_contact_info_t contacts[64];
  int32_t n = lcp_world_get_contacts(w, contacts, 64);
  assert_true(n <= 64);
  int32_t on_feet = 0;
  *others = 0;
  for (int32_t i = 0; i < n; ++i) {
    const lcp_contact_info_t *c = &contacts[i];
    int32_t link = c->robot_a == scene->robot ? c->link_a : c->link_b;
    bool is_foot = false;
    *any = fmax(*any, c->depth);
    for (int32_t f = 0; f < scene->foot_count; ++f)
      if (link == scene->foot_link[f]) {
        *foot = fmax(*foot, c->depth);
        is_foot = true;
      }
    on_feet += is_foot;
    *others += !is_foot;
  }
  return on_feet;
}

/* The quadruped dropped from 5 cm with its joints held in the standing pose
 * (kp = 300, kd = 10) lands on its feet and comes to rest within 3 s: every
 * link slower than 1 cm/s, and no contact ever deeper than the Baumgarte
 * slop + 2 mm (the 2 mm speculative margin catches the landing feet). */
static void test_quadruped_drop_comes_to_rest(void **state) {
  (void)state;
  lcp_world_t *w = robot_world();
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_quadruped(w, 300.0, 10.0, 0.05, &scene), LCP_OK);
  assert_int_equal(scene.foot_count, 4);
  lcp_world_settings_t s;
  lcp_world_get_settings(w, &s);
  double foot_depth = -INFINITY, any_depth = -INFINITY;
  int32_t on_feet = 0, others = 0;
  for (int step = 0; step < 3000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    on_feet = contact_depths(w, &scene, &foot_depth, &any_depth, &others);
  }
  double speed = max_link_speed(w, &scene);
  double base[3];
  assert_int_equal(lcp_robot_get_link_pose(w, scene.robot, 0, base, NULL), LCP_OK);
  print_message("quadruped drop: max link speed %.2e m/s at 3 s, deepest foot contact %.3f mm, "
                "deepest contact %.3f mm (negative: a gap; slop %.1f mm), %d contacts on the feet "
                "and %d elsewhere "
                "at the end, trunk z %.4f m (stand %.4f m)\n",
                speed, 1e3 * foot_depth, 1e3 * any_depth, 1e3 * s.baumgarte_slop, (int)on_feet,
                (int)others, base[2], scene.stand_height);
  assert_true(speed < 1e-2);
  /* it stands on its four feet (one sphere–plane point each) */
  assert_int_equal(on_feet, 4);
  assert_int_equal(others, 0);
  assert_true(any_depth <= s.baumgarte_slop + 0.002);
  assert_true(fabs(base[2] - scene.stand_height) < 0.01);
  lcp_world_destroy(&w);
}

/* The passive quadruped (all controllers off) dropped from 5 cm collapses
 * onto its trunk and joint limits and comes to rest within 4 s, no contact
 * deeper than slop + 2 mm. */
static void test_quadruped_passive_drop_comes_to_rest(void **state) {
  (void)state;
  lcp_world_t *w = robot_world();
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_quadruped(w, 0.0, 0.0, 0.05, &scene), LCP_OK);
  lcp_world_settings_t s;
  lcp_world_get_settings(w, &s);
  double foot_depth = -INFINITY, any_depth = -INFINITY;
  int32_t others = 0;
  for (int step = 0; step < 4000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    contact_depths(w, &scene, &foot_depth, &any_depth, &others);
  }
  double speed = max_link_speed(w, &scene);
  double base[3];
  assert_int_equal(lcp_robot_get_link_pose(w, scene.robot, 0, base, NULL), LCP_OK);
  print_message("passive quadruped drop: max link speed %.2e m/s at 4 s, deepest foot contact "
                "%.3f mm, deepest contact %.3f mm, trunk z %.4f m\n",
                speed, 1e3 * foot_depth, 1e3 * any_depth, base[2]);
  assert_true(speed < 1e-2);
  assert_true(any_depth <= s.baumgarte_slop + 0.002);
  assert_true(base[2] > 0.0 && base[2] < scene.stand_height);
  lcp_world_destroy(&w);
}

/* Standing under PD control (kp = 300, kd = 10) for 10 s from 2 mm above
 * the ground: after the first second the trunk stays within 1 cm of the
 * standing height and no foot moves more than 1 cm in x, y between the end
 * of the first second and any moment of the last. */
static void test_quadruped_stands(void **state) {
  (void)state;
  lcp_world_t *w = robot_world();
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_quadruped(w, 300.0, 10.0, 0.002, &scene), LCP_OK);
  /* Four feet, so the loop below runs over the whole of feet[] and no further. */
  assert_int_equal(scene.foot_count, LCP_SCENE_MAX_FEET);
  double feet[LCP_SCENE_MAX_FEET][3], worst_height = 0.0, worst_slide = 0.0;
  for (int step = 1; step <= 10000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    if (step < 1000)
      continue;
    double base[3];
    assert_int_equal(lcp_robot_get_link_pose(w, scene.robot, 0, base, NULL), LCP_OK);
    worst_height = fmax(worst_height, fabs(base[2] - scene.stand_height));
    for (int32_t f = 0; f < LCP_SCENE_MAX_FEET; ++f) {
      double p[3];
      assert_int_equal(lcp_scene_foot_position(w, &scene, f, p), LCP_OK);
      if (step == 1000)
        memcpy(feet[f], p, sizeof p);
      else if (step > 9000)
        worst_slide = fmax(worst_slide, hypot(p[0] - feet[f][0], p[1] - feet[f][1]));
    }
  }
  double tau[12];
  assert_int_equal(lcp_robot_get_applied_torques(w, scene.robot, tau, 12), LCP_OK);
  double peak = 0.0;
  for (int j = 0; j < 12; ++j)
    peak = fmax(peak, fabs(tau[j]));
  print_message("quadruped stands 10 s: worst height error %.2f mm (stand %.4f m), worst foot "
                "slide %.2e m, largest joint torque %.2f N·m\n",
                1e3 * worst_height, scene.stand_height, worst_slide, peak);
  assert_true(worst_height < 0.01);
  assert_true(worst_slide < 0.01);
  assert_true(peak < 35.0);
  lcp_world_destroy(&w);
}

/* The chain dropped from 0.5 m lies still and flat on the plane after 5 s:
 * every link slower than 1 cm/s and every joint (a point on a capsule axis)
 * one radius above the ground, within 3 mm. */
static void test_chain_comes_to_rest(void **state) {
  (void)state;
  lcp_world_t *w = robot_world();
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_chain(w, &scene), LCP_OK);
  assert_int_equal(scene.bodies, 20);
  assert_int_equal(scene.dofs, 25);
  test_step_n(w, 5000);
  double speed = max_link_speed(w, &scene), worst_height = 0.0;
  for (int32_t l = 0; l < scene.bodies; ++l) {
    double p[3];
    assert_int_equal(lcp_robot_get_link_pose(w, scene.robot, l, p, NULL), LCP_OK);
    worst_height = fmax(worst_height, fabs(p[2] - 0.04));
  }
  print_message("chain at 5 s: max link speed %.2e m/s, worst axis height error %.2f mm\n", speed,
                1e3 * worst_height);
  assert_true(speed < 1e-2);
  assert_true(worst_height < 0.003);
  lcp_world_destroy(&w);
}

/* The chain's links are solid capsules along their x axis: the last joint
 * (joint 19, about x, through the capsule's axis) turns only the last link,
 * so its diagonal entry of M(q) is that link's moment of inertia about its
 * own axis, the capsule's axial one:
 *   I_axial = ½ m_c r² + 2 · (2/5) m_h r²,
 * with the cylinder's m_c = ρπr²L and each hemisphere's m_h = (2/3)ρπr³ for
 * the density ρ that gives the link 0.5 kg (r = 0.04 m, L = 0.2 m); and the
 * entry of the joint before it (about y, across the capsule) is larger. */
static void test_chain_links_are_capsules_along_x(void **state) {
  (void)state;
  lcp_world_t *w = robot_world();
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_chain(w, &scene), LCP_OK);
  enum { NV = 25 };
  assert_int_equal(scene.dofs, NV);
  double M[NV * NV];
  assert_int_equal(lcp_robot_mass_matrix(w, scene.robot, M, NV), LCP_OK);
  const double r = 0.04, length = 0.2, mass = 0.5;
  double rho = mass / (TEST_PI * r * r * length + 4.0 / 3.0 * TEST_PI * r * r * r);
  double m_cylinder = rho * TEST_PI * r * r * length;
  double m_hemisphere = rho * 2.0 / 3.0 * TEST_PI * r * r * r;
  double axial = 0.5 * m_cylinder * r * r + 2.0 * 0.4 * m_hemisphere * r * r;
  double last = M[(NV - 1) * NV + (NV - 1)], before = M[(NV - 2) * NV + (NV - 2)];
  print_message("chain: last joint's M entry %.6e, capsule's axial inertia %.6e\n", last, axial);
  assert_true(fabs(last - axial) <= 1e-9 * axial);
  assert_true(before > 2.0 * last);
  lcp_world_destroy(&w);
}

/* The arm tracking q*_i(t) = 0.5 sin(πt + i) with kp = 100, kd = 10 and a
 * zero velocity target. Joint 7 turns only its own axisymmetric capsule
 * (I = 7.76e-4 kg·m² about its axis, on which gravity has no moment, and
 * the other joints reach it only through that tiny I), so it is the linear
 * system I q̈ = kp (q* − q) − kd q̇: in steady state (the slow pole −kp/kd
 * = −10/s has died out after 1 s) the error amplitude is
 * 0.5 |−Iω² + i kd ω| / |kp − Iω² + i kd ω| at ω = π, RMS that / √2 =
 * 0.1060 rad; implicit Euler at h = 1 ms is within 1 % of it, so we ask 3 %.
 * Over all joints gravity (no compensation) and the heavy proximal joints
 * near their resonance √(kp/I) add more; MuJoCo 2.2.2 on the same problem
 * (MuJoCo's arm, implicit integrator) gives RMS 0.247 rad after 1 s,
 * and we ask for < 0.30 rad. */
static void test_arm_tracks_sines(void **state) {
  (void)state;
  lcp_world_t *w = robot_world();
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_arm(w, &scene), LCP_OK);
  assert_int_equal(scene.joint_count, 7);
  assert_int_equal(scene.dofs, 7);
  double sum_all = 0.0, sum_last = 0.0;
  int samples = 0;
  for (int step = 0; step < 10000; ++step) {
    assert_int_equal(lcp_scene_arm_set_targets(w, scene.robot, lcp_world_time(w)), LCP_OK);
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double t = lcp_world_time(w);
    if (t <= 1.0)
      continue;
    double q[7];
    assert_int_equal(lcp_robot_get_q(w, scene.robot, q, 7), LCP_OK);
    for (int32_t j = 0; j < 7; ++j) {
      double e = q[j] - lcp_scene_arm_target(j, t);
      sum_all += e * e;
      if (j == 6)
        sum_last += e * e;
    }
    samples++;
  }
  double rms_all = sqrt(sum_all / (7.0 * samples)), rms_last = sqrt(sum_last / samples);
  const double inertia = 7.758490566037736e-4, kp = 100.0, kd = 10.0, omega = TEST_PI;
  double re = kp - inertia * omega * omega, im = kd * omega;
  double expected_last = 0.5 * hypot(-inertia * omega * omega, im) / hypot(re, im) / sqrt(2.0);
  print_message("arm tracking after 1 s: RMS %.4f rad over all joints; joint 7 RMS %.4f rad, "
                "linear model %.4f rad\n",
                rms_all, rms_last, expected_last);
  assert_true(fabs(rms_last / expected_last - 1.0) < 0.03);
  assert_true(rms_all < 0.30);
  lcp_world_destroy(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quadruped_drop_comes_to_rest),
      cmocka_unit_test(test_quadruped_passive_drop_comes_to_rest),
      cmocka_unit_test(test_quadruped_stands),
      cmocka_unit_test(test_chain_comes_to_rest),
      cmocka_unit_test(test_chain_links_are_capsules_along_x),
      cmocka_unit_test(test_arm_tracks_sines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
