/* SPDX-License-Identifier: Apache-2.0 */
/* In-engine implicit PD joint control: the controller is one
 * soft row of the step's LCP,
 *
 *     λ = h τ,  τ = kp (q* − q − h qd⁺) + kd (qd* − qd⁺),  |λ| ≤ h τmax
 *
 * i.e. w = qd⁺, w_ref = (kp (q* − q) + kd qd*)/(h kp + kd), cfm = 1/(h (h kp + kd)).
 * Stability at stiff gains (against an explicit controller), exactness
 * against the backward-Euler recurrence, the effort limit, holding a 7-dof
 * arm under gravity, pressing against contact, velocity and torque modes,
 * bad input, and snapshots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81

/* A fixed base (1 kg cube) and one link on a joint at the base origin. */
static lcp_robot_def_t *one_link_def(int32_t geom_count) {
  lcp_robot_def_t *def = NULL;
  assert_int_equal(lcp_robot_def_alloc(2, geom_count, &def), LCP_OK);
  strcpy(def->name, "one");
  def->floating_base = false;
  strcpy(def->links[0].name, "base");
  def->links[0].inertia[0] = def->links[0].inertia[4] = def->links[0].inertia[8] = 1.0 / 6.0;
  lcp_link_def_t *l = &def->links[1];
  strcpy(l->name, "link");
  strcpy(l->joint_name, "joint");
  l->parent = 0;
  l->joint_type = LCP_JOINT_CONTINUOUS;
  return def;
}

/* A link spinning about z, its own principal axis through its centre of
 * mass: the inertia seen by the joint is the constant `inertia`, and there
 * is no Coriolis term (ω × I ω = 0). */
static lcp_robot_def_t *spinner_def(double inertia) {
  lcp_robot_def_t *def = one_link_def(0);
  lcp_link_def_t *l = &def->links[1];
  l->axis[0] = l->axis[1] = 0.0;
  l->axis[2] = 1.0;
  l->mass = 1.0;
  memset(l->com, 0, sizeof l->com);
  memset(l->inertia, 0, sizeof l->inertia);
  l->inertia[0] = l->inertia[4] = l->inertia[8] = inertia;
  return def;
}

/* A slender rod of length `length` and mass `mass` along the link x axis,
 * hinged at its end about `axis` (1: y, 2: z); inertia about the hinge
 * m L²/3. Its geom (frictionless): a sphere of radius `tip` at its far end
 * (x = length) when tip > 0, else a box of half thickness `half` around the
 * whole rod when half > 0, else none. */
static lcp_robot_def_t *rod_def(double length, double mass, int axis, double tip, double half) {
  lcp_robot_def_t *def = one_link_def(tip > 0.0 || half > 0.0 ? 1 : 0);
  lcp_link_def_t *l = &def->links[1];
  l->axis[0] = l->axis[1] = l->axis[2] = 0.0;
  l->axis[axis] = 1.0;
  l->mass = mass;
  l->com[0] = 0.5 * length;
  memset(l->inertia, 0, sizeof l->inertia);
  l->inertia[0] = 1e-4 * mass;
  l->inertia[4] = l->inertia[8] = mass * length * length / 12.0;
  if (def->geom_count > 0) {
    lcp_geom_def_t *g = &def->geoms[0];
    if (tip > 0.0) {
      *g = test_sphere_def(tip, 0.0);
      g->local_position[0] = length;
    } else {
      *g = test_box_def(0.5 * length, half, half, 0.0);
      g->local_position[0] = 0.5 * length;
    }
    l->first_geom = 0;
    l->geom_count = 1;
  }
  return def;
}

static lcp_robot_id add_robot(lcp_world_t *w, const lcp_robot_def_t *def) {
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
  return id;
}

static lcp_joint_control_t position_control(double target, double kp, double kd) {
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_POSITION;
  c.position = target;
  c.kp = kp;
  c.kd = kd;
  return c;
}

static double get_q1(const lcp_world_t *w, lcp_robot_id id) {
  double q;
  assert_int_equal(lcp_robot_get_q(w, id, &q, 1), LCP_OK);
  return q;
}

static double get_qd1(const lcp_world_t *w, lcp_robot_id id) {
  double qd;
  assert_int_equal(lcp_robot_get_qd(w, id, &qd, 1), LCP_OK);
  return qd;
}

static double get_applied1(const lcp_world_t *w, lcp_robot_id id) {
  double tau;
  assert_int_equal(lcp_robot_get_applied_torques(w, id, &tau, 1), LCP_OK);
  return tau;
}

static lcp_robot_def_t *load_arm7(void) {
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.floating_base = 0;
  lcp_robot_def_t *def = NULL;
  char error[256] = "";
  int rc = lcp_urdf_load_file(LCP_TEST_ROBOTS_DIR "/arm7.urdf", &opt, &def, error, sizeof error);
  if (rc != LCP_OK)
    print_message("arm7.urdf: %s\n", error);
  assert_int_equal(rc, LCP_OK);
  return def;
}

/* arm7 on its fixed base, 0.1 m above the world origin. */
static lcp_robot_id add_arm7(lcp_world_t *w, const lcp_robot_def_t *def) {
  const double base[3] = {0.0, 0.0, 0.1};
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, base, NULL, &id), LCP_OK);
  return id;
}

/* ---- stability at stiff gains ----
 * I = 1e-4 kg·m², kp = 1e6, kd = 1e3, h = 1 ms: ω = √(kp/I) = 1e5 rad/s,
 * ω h = 100 and h kd / I = 1e4. The implicit row is unconditionally
 * stable; the same law evaluated explicitly from the state before the step
 * multiplies qd by about 1 − h kd / I ≈ −1e4 per step. */
static void test_stiff_gains_stable_implicit_unstable_explicit(void **state) {
  (void)state;
  const double inertia = 1e-4, kp = 1e6, kd = 1e3, h = 1e-3, target = 1.0;
  lcp_robot_def_t *def = spinner_def(inertia);

  /* implicit: the controller's row in the LCP */
  lcp_world_t *w = test_new_world(h, false);
  lcp_robot_id id = add_robot(w, def);
  lcp_joint_control_t c = position_control(target, kp, kd);
  c.effort_limit = 1e12;
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
  double worst = 0.0, q = 0.0;
  int reached = -1;
  for (int step = 1; step <= 1000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    q = get_q1(w, id);
    assert_true(isfinite(q));
    worst = fmax(worst, fabs(q));
    if (reached < 0 && fabs(q - target) < 0.01)
      reached = step;
  }
  print_message("implicit kp=1e6 kd=1e3 I=1e-4 h=1ms: within 0.01 rad of the target after %d "
                "steps, final error %.3e rad, max |q| %.6f rad\n",
                reached, fabs(q - target), worst);
  assert_true(reached > 0);
  assert_true(fabs(q - target) < 0.01);
  assert_true(worst < 2.0);
  lcp_world_destroy(&w);

  /* explicit: the same gains as a torque from the state before the step */
  w = test_new_world(h, false);
  id = add_robot(w, def);
  int diverged = -1;
  double q_last = 0.0, first[3] = {NAN, NAN, NAN};
  for (int step = 1; step <= 1000 && diverged < 0; ++step) {
    double qn = get_q1(w, id), qdn = get_qd1(w, id);
    lcp_joint_control_t t = lcp_joint_control_default();
    t.mode = LCP_CONTROL_TORQUE;
    t.torque = kp * (target - qn) - kd * qdn;
    t.effort_limit = 1e12;
    if (!isfinite(t.torque) || lcp_robot_set_joint_control(w, id, 0, &t) != LCP_OK ||
        lcp_world_step(w) != LCP_OK) {
      diverged = step;
      break;
    }
    q_last = get_q1(w, id);
    if (!isfinite(q_last) || fabs(q_last) > 1e3)
      diverged = step;
  }
  /* and the growth: three steps of the same law from a 1 µrad error */
  double q_small = 1.0 - 1e-6;
  assert_int_equal(lcp_robot_set_q(w, id, &q_small, 1), LCP_OK);
  double zero = 0.0;
  assert_int_equal(lcp_robot_set_qd(w, id, &zero, 1), LCP_OK);
  for (int k = 0; k < 3; ++k) {
    lcp_joint_control_t t = lcp_joint_control_default();
    t.mode = LCP_CONTROL_TORQUE;
    t.torque = kp * (target - get_q1(w, id)) - kd * get_qd1(w, id);
    t.effort_limit = 1e12;
    assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &t), LCP_OK);
    assert_int_equal(lcp_world_step(w), LCP_OK);
    first[k] = fabs(target - get_q1(w, id));
  }
  print_message("explicit torque, same gains: diverged (|q| > 1e3, NaN or step error) at step %d, "
                "|q| %.3e rad; from a 1e-6 rad error the error grows to %.3e, %.3e, %.3e rad\n",
                diverged, fabs(q_last), first[0], first[1], first[2]);
  assert_true(first[2] > 1e3 * first[0] && first[0] > 1e-6);
  assert_true(diverged > 0 && diverged <= 1000);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* ---- exactness ----
 * With a constant inertia I and no other force, the row is exact: one step
 * is the backward-Euler recurrence of the PD law
 *   I qd⁺ = I qd + h (kp (q* − q − h qd⁺) + kd (qd* − qd⁺)),  q⁺ = q + h qd⁺. */
static double run_against_recurrence(double inertia, double kp, double kd, double target,
                                     double target_velocity, double q0, double qd0, int steps,
                                     double *worst_continuous) {
  const double h = 1e-3;
  lcp_robot_def_t *def = spinner_def(inertia);
  lcp_world_t *w = test_new_world(h, false);
  lcp_robot_id id = add_robot(w, def);
  assert_int_equal(lcp_robot_set_q(w, id, &q0, 1), LCP_OK);
  assert_int_equal(lcp_robot_set_qd(w, id, &qd0, 1), LCP_OK);
  lcp_joint_control_t c = position_control(target, kp, kd);
  c.velocity = target_velocity;
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
  double q = q0, qd = qd0, worst = 0.0;
  double omega = sqrt(kp / inertia), e0 = target - q0;
  if (worst_continuous)
    *worst_continuous = 0.0;
  for (int step = 1; step <= steps; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    qd = (inertia * qd + h * (kp * (target - q) + kd * target_velocity)) /
         (inertia + h * h * kp + h * kd);
    q = q + h * qd;
    double qe = get_q1(w, id), qde = get_qd1(w, id);
    worst = fmax(worst, fmax(fabs(qe - q), fabs(qde - qd)));
    if (worst_continuous) {
      /* critically damped: e(t) = e0 (1 + ω t) e^{−ω t} */
      double t = step * h;
      double e = e0 * (1.0 + omega * t) * exp(-omega * t);
      *worst_continuous = fmax(*worst_continuous, fabs((target - qe) - e) / fabs(e0));
    }
  }
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
  return worst;
}

static void test_exact_backward_euler(void **state) {
  (void)state;
  /* ω = √(kp/I) = 20 rad/s, kd = 2 √(kp I): critical damping */
  const double inertia = 0.01, kp = 20.0 * 20.0 * inertia, kd = 2.0 * sqrt(kp * inertia);
  double continuous;
  double worst = run_against_recurrence(inertia, kp, kd, 1.0, 0.0, 0.0, 0.0, 1000, &continuous);
  print_message("critically damped (omega=20, kd=%.3f): max |q - recurrence| %.3e, "
                "max |e - e_continuous| / e0 = %.3f %%\n",
                kd, worst, 100.0 * continuous);
  assert_true(worst < 1e-9);
  assert_true(continuous < 0.02);
  /* moving target, under-damped, from a moving start */
  double worst2 = run_against_recurrence(0.05, 30.0, 0.3, 0.5, 0.2, -0.3, 1.0, 2000, NULL);
  print_message("moving target (qd* = 0.2), kp=30 kd=0.3 I=0.05: max |q - recurrence| %.3e\n",
                worst2);
  assert_true(worst2 < 1e-9);
}

/* ---- effort limit ----
 * A horizontal rod (m = 2 kg, L = 0.5 m) about y, PD to q* = 0 with
 * kp = 100, kd = 10: gravity torque m g L/2 = 4.905 N·m against τmax = 2 N·m,
 * so it sags far beyond the unlimited sag m g (L/2)/kp = 0.049 rad. The row
 * is boxed (|λ| ≤ h τmax): the applied torque is the PD law evaluated at
 * the step's outcome, τ_PD = kp (q* − q − h qd⁺) + kd (qd* − qd⁺), clamped
 * to ±τmax — exactly τmax in magnitude whenever |τ_PD| > τmax. At every step
 * the torque the link actually received, I_pivot (qd⁺ − qd)/h − m g (L/2)
 * cos q (the rest of the Euler step), is the reported one and never more
 * than τmax. Once through the control's limit, once through the joint's own
 * (control effort 0). */
static void test_effort_limit(void **state) {
  (void)state;
  const double h = 1e-3, L = 0.5, m = 2.0, tau_max = 2.0, kp = 100.0, kd = 10.0;
  const double gravity_torque = m * G * 0.5 * L, pivot = m * L * L / 3.0;
  /* variant 0: the limit on the controller, 1: on the joint, 2: on the
   * controller with gravity compensation, whose feed-forward g(q) shares
   * the same motor limit (the total applied torque stays within it). */
  for (int variant = 0; variant < 3; ++variant) {
    int via_joint = variant == 1;
    lcp_robot_def_t *def = rod_def(L, m, 1, 0.0, 0.0);
    def->links[1].effort_limit = via_joint ? tau_max : 50.0;
    lcp_world_t *w = test_new_world(h, true);
    lcp_robot_id id = add_robot(w, def);
    lcp_joint_control_t c = position_control(0.0, kp, kd);
    c.effort_limit = via_joint ? 0.0 : tau_max;
    assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
    assert_int_equal(lcp_robot_set_gravity_compensation(w, id, variant == 2), LCP_OK);
    double worst_saturation = 0.0, worst_law = 0.0, worst_link = 0.0, worst_mismatch = 0.0;
    double q_max = 0.0, worst_applied = 0.0;
    int saturated = 0;
    const int steps = 2000;
    double q = 0.0, qd = 0.0;
    for (int step = 1; step <= steps; ++step) {
      double q_before = q, qd_before = qd;
      assert_int_equal(lcp_world_step(w), LCP_OK);
      q = get_q1(w, id);
      qd = get_qd1(w, id);
      q_max = fmax(q_max, q);
      double applied = get_applied1(w, id);
      worst_applied = fmax(worst_applied, fabs(applied));
      double pd = kp * (c.position - q_before - h * qd) + kd * (c.velocity - qd);
      double clamped = fmin(fmax(pd, -tau_max), tau_max);
      worst_law = fmax(worst_law, fabs(applied - clamped));
      if (fabs(pd) > tau_max * (1.0 + 1e-6)) {
        ++saturated;
        worst_saturation = fmax(worst_saturation, fabs(fabs(applied) - tau_max));
      }
      double link_torque = pivot * (qd - qd_before) / h - gravity_torque * cos(q_before);
      worst_link = fmax(worst_link, fabs(link_torque));
      worst_mismatch = fmax(worst_mismatch, fabs(link_torque - applied));
    }
    print_message("effort limit %.1f N.m via the %s%s (gravity torque %.3f): sagged to %.3f rad "
                  "(unlimited sag %.3f); saturated %d of %d steps with ||applied| - tau_max| <= "
                  "%.2e; |applied - clamp(PD law)| <= %.2e; max |applied| %.15f; max link torque "
                  "%.15f, max |link torque - reported| %.2e\n",
                  tau_max, via_joint ? "joint" : "control",
                  variant == 2 ? ", gravity compensation on" : "", gravity_torque, q_max,
                  gravity_torque / kp, saturated, steps, worst_saturation, worst_law, worst_applied,
                  worst_link, worst_mismatch);
    assert_true(q_max > 0.5);
    if (variant < 2) { /* the PD law alone is what is clamped */
      assert_true(saturated > steps / 2);
      assert_true(worst_saturation < 1e-9);
      assert_true(worst_law < 1e-9);
    } else { /* saturated: feed-forward and PD together at the limit */
      assert_true(fabs(worst_applied - tau_max) < 1e-9);
    }
    assert_true(worst_applied <= tau_max * (1.0 + 1e-12));
    assert_true(worst_link <= tau_max + 1e-9);
    assert_true(worst_mismatch < 1e-9);
    lcp_world_destroy(&w);
    lcp_robot_def_free(&def);
  }
}

/* ---- the 7-dof arm holding a pose under gravity ----
 * At rest the row gives kp (q* − q) = g(q) (qd⁺ = 0): the error of
 * each joint is its gravity torque over kp. */
static void run_arm_hold(int32_t iterations, int steps, const double *pose, double *q_out,
                         double *gravity_out, int *iterations_first, double *residual_first,
                         int *iterations_max_late, double *iterations_mean,
                         double *residual_max_late) {
  const double kp = 1e4, kd = 100.0;
  lcp_robot_def_t *def = load_arm7();
  lcp_world_t *w = test_new_world(1e-3, true);
  lcp_world_settings_t s;
  lcp_world_get_settings(w, &s);
  s.iterations = iterations;
  assert_int_equal(lcp_world_set_settings(w, &s), LCP_OK);
  lcp_robot_id id = add_arm7(w, def);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, id, &info), LCP_OK);
  assert_int_equal(info.joint_count, 7);
  assert_int_equal(info.nv, 7);
  assert_int_equal(lcp_robot_set_q(w, id, pose, 7), LCP_OK);
  lcp_joint_control_t c[7];
  for (int j = 0; j < 7; ++j)
    c[j] = position_control(pose[j], kp, kd);
  assert_int_equal(lcp_robot_set_controls(w, id, c, 7), LCP_OK);
  long sum = 0;
  *iterations_max_late = 0;
  *residual_max_late = 0.0;
  for (int step = 1; step <= steps; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    lcp_step_stats_t st;
    lcp_world_get_stats(w, &st);
    sum += st.iterations;
    if (step == 1) {
      *iterations_first = st.iterations;
      *residual_first = st.residual;
    } else {
      *iterations_max_late =
          st.iterations > *iterations_max_late ? st.iterations : *iterations_max_late;
      *residual_max_late = fmax(*residual_max_late, st.residual);
    }
  }
  *iterations_mean = (double)sum / steps;
  assert_int_equal(lcp_robot_get_q(w, id, q_out, 7), LCP_OK);
  double zero[7] = {0};
  assert_int_equal(lcp_robot_set_qd(w, id, zero, 7), LCP_OK);
  assert_int_equal(lcp_robot_inverse_dynamics(w, id, zero, gravity_out, 7), LCP_OK);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

static void test_arm7_holds_pose(void **state) {
  (void)state;
  const double kp = 1e4;
  const double pose[7] = {0.3, 0.8, 0.5, -0.9, 0.4, 0.6, 0.2};
  double q[7], g[7], iter_mean, res_first, res_late;
  int iter_first, iter_late;
  run_arm_hold(20, 2000, pose, q, g, &iter_first, &res_first, &iter_late, &iter_mean, &res_late);
  int substantial = 0;
  for (int j = 0; j < 7; ++j) {
    double error = pose[j] - q[j], expected = g[j] / kp;
    if (fabs(g[j]) > 1e-3) {
      ++substantial;
      double rel = fabs(error - expected) / fabs(expected);
      print_message("joint%d: gravity torque %9.4f N.m, error %.6e rad, g/kp %.6e rad, "
                    "off by %.4f %%\n",
                    j + 1, g[j], error, expected, 100.0 * rel);
      assert_true(rel < 0.02);
    } else {
      print_message("joint%d: gravity torque %9.2e N.m, error %.3e rad (absolute)\n", j + 1, g[j],
                    error);
      assert_true(fabs(error) < 1e-6);
    }
  }
  assert_true(substantial >= 5);
  print_message("solver at 20 iterations, tolerance 1e-7: step 1 used %d (residual %.2e); "
                "mean %.2f per step over 2 s; after step 1 at most %d, residual at most %.2e\n",
                iter_first, res_first, iter_mean, iter_late, res_late);
  /* How many sweeps the PD rows need to meet the tolerance, given room. */
  double q2[7], g2[7];
  run_arm_hold(1000, 300, pose, q2, g2, &iter_first, &res_first, &iter_late, &iter_mean, &res_late);
  print_message("solver with up to 1000 iterations: step 1 (cold) needed %d (residual %.2e); "
                "later steps (warm) at most %d, mean %.2f over 300 steps\n",
                iter_first, res_first, iter_late, iter_mean);
}

/* With gravity compensation the feed-forward g(q) cancels gravity at every
 * q, so the PD row, started from q = 0, settles on its target with no error
 * and no PD torque: the applied joint torque is the feed-forward alone,
 * g(q*) (robot.h). The arm's slowest mode (joint 2 carries the whole arm,
 * M ≈ 6 kg·m²) decays at kd/(2M) ≈ 8 s⁻¹, hence 5 s. */
static void test_gravity_compensation_removes_sag(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_arm7();
  lcp_world_t *w = test_new_world(1e-3, true);
  lcp_robot_id id = add_arm7(w, def);
  const double pose[7] = {0.3, 0.8, 0.5, -0.9, 0.4, 0.6, 0.2};
  lcp_joint_control_t c[7];
  for (int j = 0; j < 7; ++j)
    c[j] = position_control(pose[j], 1e4, 100.0);
  assert_int_equal(lcp_robot_set_controls(w, id, c, 7), LCP_OK);
  assert_int_equal(lcp_robot_set_gravity_compensation(w, id, true), LCP_OK);
  test_step_n(w, 5000);
  double q[7], tau[7], gravity[7], worst = 0.0, worst_tau = 0.0;
  assert_int_equal(lcp_robot_get_q(w, id, q, 7), LCP_OK);
  assert_int_equal(lcp_robot_get_applied_torques(w, id, tau, 7), LCP_OK);
  assert_int_equal(lcp_robot_inverse_dynamics(w, id, NULL, gravity, 7), LCP_OK);
  for (int j = 0; j < 7; ++j) {
    worst = fmax(worst, fabs(q[j] - pose[j]));
    worst_tau = fmax(worst_tau, fabs(tau[j] - gravity[j]));
  }
  print_message("gravity compensation, from q = 0 to the pose: max |q - q*| %.3e rad after 5 s, "
                "max |applied torque - g(q)| (the PD part) %.3e N.m\n",
                worst, worst_tau);
  assert_true(worst < 1e-9);
  assert_true(worst_tau < 1e-5);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* ---- pressing against contact ---- */

/* The rod starts 0.05 rad clear of the box, under PD control towards `inside`. */
static void start_pressing(lcp_world_t *w, lcp_robot_id id, double inside, double kp, double kd) {
  double q0 = -0.05;
  assert_int_equal(lcp_robot_set_q(w, id, &q0, 1), LCP_OK);
  lcp_joint_control_t c = position_control(inside, kp, kd);
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
}

/* Whether the contact touches link 1 (the rod) of the robot. */
static bool on_link1(const lcp_contact_info_t *ci, lcp_robot_id id) {
  return (ci->robot_a == id && ci->link_a == 1) || (ci->robot_b == id && ci->link_b == 1);
}

/* No gravity. A rod (L = 0.5 m) turning about z carries a sphere at its tip
 * that touches a fixed box face (normal along y) at q = 0; the target is
 * 0.1 rad inside the box. At rest kp (q* − q) = F L, so the contact force is
 * kp · 0.1 / L = 20 N (q ≈ 0 at rest). */
static void test_presses_against_contact(void **state) {
  (void)state;
  const double h = 1e-3, L = 0.5, r = 0.05, kp = 100.0, kd = 10.0, inside = 0.1;
  lcp_robot_def_t *def = rod_def(L, 1.0, 2, r, 0.0);
  lcp_world_t *w = test_new_world(h, false);
  lcp_robot_id id = add_robot(w, def);
  lcp_geom_def_t box = test_box_def(0.1, 0.05, 0.1, 0.0);
  box.local_position[0] = L;
  box.local_position[1] = r + 0.05; /* its −y face at y = r: the sphere touches at q = 0 */
  assert_int_equal(lcp_geom_add(w, LCP_WORLD_BODY, &box, NULL), LCP_OK);
  start_pressing(w, id, inside, kp, kd);
  const int steps = 3000;
  double fmin_late = INFINITY, fmax_late = 0.0, force = 0.0, depth = 0.0;
  for (int step = 1; step <= steps; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    lcp_contact_info_t contacts[8];
    int32_t n = lcp_world_get_contacts(w, contacts, 8);
    assert_true(n <= 8);
    force = 0.0;
    for (int32_t k = 0; k < n; ++k)
      if (on_link1(&contacts[k], id)) {
        force += contacts[k].normal_impulse / h;
        depth = contacts[k].depth;
      }
    if (step > steps - 100) {
      fmin_late = fmin(fmin_late, force);
      fmax_late = fmax(fmax_late, force);
    }
  }
  double q = get_q1(w, id), applied = get_applied1(w, id);
  double expected = kp * inside / L;
  double jitter = (fmax_late - fmin_late) / expected;
  print_message("pressing 0.1 rad into a box: contact force %.6f N (expected kp*0.1/L = %.3f N, "
                "off %.4f %%), q %.3e rad, depth %.3e m, applied torque %.6f N.m, force range "
                "over the last 100 steps %.3e (%.2e %%)\n",
                force, expected, 100.0 * fabs(force / expected - 1.0), q, depth, applied,
                fmax_late - fmin_late, 100.0 * jitter);
  assert_true(fabs(force / expected - 1.0) < 0.02);
  assert_true(jitter < 0.01);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* The same with a box-shaped rod (0.08 m thick, frictionless) whose tip
 * end lies on a fixed box's face over x ∈ [0.45, 0.5]: several contact
 * points at different levers, so the balance is one of torques: at rest
 * Σ F_i (p_i × n_i)·z = kp (q* − q) ≈ kp · 0.1, and the force and torque
 * are steady. */
static void test_box_link_presses_box(void **state) {
  (void)state;
  const double h = 1e-3, L = 0.5, kp = 100.0, kd = 10.0, inside = 0.1;
  lcp_robot_def_t *def = rod_def(L, 1.0, 2, 0.0, 0.04);
  lcp_world_t *w = test_new_world(h, false);
  lcp_robot_id id = add_robot(w, def);
  lcp_geom_def_t box = test_box_def(0.1, 0.05, 0.1, 0.0);
  box.local_position[0] = L + 0.05;
  box.local_position[1] = 0.04 + 0.05; /* its −y face on the rod's +y face at q = 0 */
  assert_int_equal(lcp_geom_add(w, LCP_WORLD_BODY, &box, NULL), LCP_OK);
  start_pressing(w, id, inside, kp, kd);
  const int steps = 3000;
  double force = 0.0, torque = 0.0;
  double f_lo = INFINITY, f_hi = 0.0, t_lo = INFINITY, t_hi = 0.0;
  int32_t points = 0;
  for (int step = 1; step <= steps; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    lcp_contact_info_t contacts[16];
    int32_t n = lcp_world_get_contacts(w, contacts, 16);
    assert_true(n <= 16);
    force = torque = 0.0;
    points = 0;
    for (int32_t k = 0; k < n; ++k) {
      const lcp_contact_info_t *ci = &contacts[k];
      if (!on_link1(ci, id))
        continue;
      double f = ci->normal_impulse / h;
      ++points;
      force += f;
      /* z moment about the joint axis (through the origin) */
      torque += f * fabs(ci->position[0] * ci->normal[1] - ci->position[1] * ci->normal[0]);
    }
    if (step > steps - 100) {
      f_lo = fmin(f_lo, force), f_hi = fmax(f_hi, force);
      t_lo = fmin(t_lo, torque), t_hi = fmax(t_hi, torque);
    }
  }
  double q = get_q1(w, id), expected = kp * inside;
  print_message("box rod on a box: %d contact points, contact torque %.6f N.m (kp*0.1 = %.3f, "
                "off %.4f %%), force %.4f N (kp*0.1/L = %.3f), q %.3e rad; over the last 100 "
                "steps torque range %.2e %%, force range %.2e %%\n",
                (int)points, torque, expected, 100.0 * fabs(torque / expected - 1.0), force,
                expected / L, q, 100.0 * (t_hi - t_lo) / expected,
                100.0 * (f_hi - f_lo) / (expected / L));
  assert_true(points >= 1);
  assert_true(fabs(torque / expected - 1.0) < 0.02);
  assert_true(force > 0.98 * expected / L && force < 1.02 * expected / (L - 0.05));
  assert_true((t_hi - t_lo) < 0.01 * expected);
  assert_true((f_hi - f_lo) < 0.01 * force);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* ---- velocity and torque modes ---- */

/* Velocity mode (kp = 0): qd⁺ = (I qd + h kd qd*)/(I + h kd) → qd*. */
static void test_velocity_mode(void **state) {
  (void)state;
  const double inertia = 0.01, kd = 0.5, target = 3.0;
  lcp_robot_def_t *def = spinner_def(inertia);
  lcp_world_t *w = test_new_world(1e-3, false);
  lcp_robot_id id = add_robot(w, def);
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_VELOCITY;
  c.velocity = target;
  c.kd = kd;
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
  double worst_late = 0.0;
  for (int step = 1; step <= 2000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    if (step > 1000)
      worst_late = fmax(worst_late, fabs(get_qd1(w, id) - target));
  }
  double applied = get_applied1(w, id);
  print_message("velocity mode qd* = %.1f rad/s: max |qd - qd*| in the second second %.3e, "
                "applied torque %.3e N.m, q after 2 s %.6f rad\n",
                target, worst_late, applied, get_q1(w, id));
  assert_true(worst_late < 1e-6);
  assert_true(fabs(applied) < 1e-6);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* Torque mode: I q̈ = τ, with q̈ = (qd⁺ − qd)/h, and τ clamped to the limit. */
static void test_torque_mode(void **state) {
  (void)state;
  const double inertia = 0.01, h = 1e-3;
  lcp_robot_def_t *def = spinner_def(inertia);
  lcp_world_t *w = test_new_world(h, false);
  lcp_robot_id id = add_robot(w, def);
  const double torques[2] = {0.3, -0.8}, limits[2] = {0.0, 0.5}, expect[2] = {0.3, -0.5};
  for (int k = 0; k < 2; ++k) {
    lcp_joint_control_t c = lcp_joint_control_default();
    c.mode = LCP_CONTROL_TORQUE;
    c.torque = torques[k];
    c.effort_limit = limits[k];
    assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
    double worst = 0.0, worst_reported = 0.0;
    for (int step = 0; step < 500; ++step) {
      double qd = get_qd1(w, id);
      assert_int_equal(lcp_world_step(w), LCP_OK);
      double tau = inertia * (get_qd1(w, id) - qd) / h;
      worst = fmax(worst, fabs(tau - expect[k]));
      worst_reported = fmax(worst_reported, fabs(get_applied1(w, id) - expect[k]));
    }
    print_message("torque mode %.2f N.m (limit %.2f): max |I qdd - tau| %.3e N.m, max |reported "
                  "- tau| %.3e\n",
                  torques[k], limits[k], worst, worst_reported);
    assert_true(worst < 1e-9);
    assert_true(worst_reported < 1e-12);
  }
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* ---- bad input ---- */

static bool same_control(const lcp_joint_control_t *a, const lcp_joint_control_t *b) {
  return a->mode == b->mode && a->position == b->position && a->velocity == b->velocity &&
         a->kp == b->kp && a->kd == b->kd && a->torque == b->torque &&
         a->effort_limit == b->effort_limit;
}

static void assert_controls(const lcp_world_t *w, lcp_robot_id id, const lcp_joint_control_t *c) {
  for (int32_t j = 0; j < 7; ++j) {
    lcp_joint_control_t now;
    assert_int_equal(lcp_robot_get_joint_control(w, id, j, &now), LCP_OK);
    assert_true(same_control(&now, &c[j]));
  }
}

static void test_bad_input(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_arm7();
  lcp_world_t *w = test_new_world(1e-3, true);
  lcp_robot_id id = add_robot(w, def);
  lcp_joint_control_t set[7];
  for (int j = 0; j < 7; ++j) {
    set[j] = position_control(0.1 * j, 100.0 + j, 10.0 + j);
    set[j].velocity = 0.01 * j;
    set[j].effort_limit = 20.0 + j;
  }
  set[6].mode = LCP_CONTROL_TORQUE;
  set[6].torque = 0.5;
  assert_int_equal(lcp_robot_set_controls(w, id, set, 7), LCP_OK);
  assert_controls(w, id, set);

  const lcp_joint_control_t good = position_control(0.5, 50.0, 5.0);
  const int nbad = 10;
  for (int k = 0; k < nbad; ++k) {
    lcp_joint_control_t bad = good;
    switch (k) {
    case 0:
      bad.position = NAN;
      break;
    case 1:
      bad.velocity = INFINITY;
      break;
    case 2:
      bad.kp = -1.0;
      break;
    case 3:
      bad.kd = -0.5;
      break;
    case 4:
      bad.torque = -INFINITY;
      break;
    case 5:
      bad.effort_limit = -1.0;
      break;
    case 6:
      bad.mode = (lcp_control_mode_t)7;
      break;
    case 7:
      bad.mode = (lcp_control_mode_t)-1;
      break;
    case 8:
      bad.kp = bad.kd = 0.0;
      break; /* position mode needs kp + kd > 0 */
    default:
      bad.mode = LCP_CONTROL_VELOCITY, bad.kd = 0.0;
      break; /* velocity needs kd > 0 */
    }
    assert_int_equal(lcp_robot_set_joint_control(w, id, 2, &bad), LCP_ERR_INVALID_ARGUMENT);
    assert_int_equal(lcp_robot_set_joint_control_by_name(w, id, "joint3", &bad),
                     LCP_ERR_INVALID_ARGUMENT);
    lcp_joint_control_t all[7];
    for (int j = 0; j < 7; ++j)
      all[j] = good;
    all[k % 7] = bad; /* one bad entry spoils the whole call */
    assert_int_equal(lcp_robot_set_controls(w, id, all, 7), LCP_ERR_INVALID_ARGUMENT);
    assert_controls(w, id, set);
  }
  assert_int_equal(lcp_robot_set_joint_control(w, id, 2, NULL), LCP_ERR_INVALID_ARGUMENT);
  /* wrong joint index, name, robot, count */
  assert_int_equal(lcp_robot_set_joint_control(w, id, -1, &good), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_set_joint_control(w, id, 7, &good), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_set_joint_control_by_name(w, id, "joint8", &good), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_set_joint_control_by_name(w, id, "link3", &good), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_set_joint_control_by_name(w, id, NULL, &good), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_set_joint_control(w, id + 1, 0, &good), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_set_controls(w, id, set, 6), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_robot_set_controls(w, id, NULL, 7), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "NULL"));
  lcp_joint_control_t out;
  assert_int_equal(lcp_robot_get_joint_control(w, id, 7, &out), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_robot_get_joint_control(w, id, -1, &out), LCP_ERR_NOT_FOUND);
  assert_controls(w, id, set);
  print_message("bad input: %d bad controls refused by all three setters (INVALID_ARGUMENT), "
                "wrong index/name/robot refused (NOT_FOUND); last error: \"%s\"\n",
                nbad, lcp_world_last_error(w));
  /* a good call by name still works and touches only its joint */
  assert_int_equal(lcp_robot_set_joint_control_by_name(w, id, "joint3", &good), LCP_OK);
  set[2] = good;
  assert_controls(w, id, set);
  assert_int_equal(lcp_world_step(w), LCP_OK);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

/* A snapshot's bytes are a function of the state alone: two worlds given the
 * same controls through structs whose padding bytes differ (0xAA against
 * 0x55 under the fields), and stepped alike with the arm's links touching
 * the ground (so the warm-start cache holds contact points), save byte for
 * byte the same snapshot, and so hash alike across processes. */
static void fill_controls(lcp_joint_control_t *c, int pattern) {
  memset(c, pattern, 7 * sizeof *c);
  for (int j = 0; j < 7; ++j) {
    c[j].mode = LCP_CONTROL_POSITION;
    c[j].position = j == 1 ? 1.6 : 0.0; /* the shoulder lays the arm on the ground */
    c[j].velocity = 0.0;
    c[j].kp = 200.0;
    c[j].kd = 20.0;
    c[j].torque = 0.0;
    c[j].effort_limit = 0.0;
  }
}

static void test_snapshot_bytes_are_the_state(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_arm7();
  unsigned char *bytes[2] = {NULL, NULL};
  size_t used[2] = {0, 0};
  int32_t contacts[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    lcp_world_t *w = test_new_world(1e-3, true);
    lcp_geom_def_t ground = lcp_geom_def_default();
    ground.type = LCP_SHAPE_PLANE;
    assert_int_equal(lcp_geom_add(w, LCP_WORLD_BODY, &ground, NULL), LCP_OK);
    lcp_robot_id id = add_arm7(w, def);
    lcp_joint_control_t c[7];
    fill_controls(c, k == 0 ? 0xAA : 0x55);
    assert_int_equal(lcp_robot_set_controls(w, id, c, 7), LCP_OK);
    test_step_n(w, 1500);
    contacts[k] = lcp_world_get_contacts(w, NULL, 0);
    size_t size = lcp_world_state_size(w);
    bytes[k] = malloc(size);
    assert_non_null(bytes[k]);
    assert_int_equal(lcp_world_save_state(w, bytes[k], size, &used[k]), LCP_OK);
    lcp_world_destroy(&w);
  }
  print_message("snapshot: %zu bytes, %d contact points\n", used[0], (int)contacts[0]);
  assert_true(contacts[0] > 0);
  assert_int_equal(used[0], used[1]);
  assert_memory_equal(bytes[0], bytes[1], used[0]);
  free(bytes[0]);
  free(bytes[1]);
  lcp_robot_def_free(&def);
}

/* ---- snapshots ----
 * Controls, applied torques and the controller rows' warm start are state
 * (the model/state split): save, step 100, change the controls, restore, step 100
 * again → bitwise the same q, qd and applied torques. */
static void test_snapshot_with_controllers(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_arm7();
  lcp_world_t *w = test_new_world(1e-3, true);
  lcp_robot_id id = add_arm7(w, def);
  lcp_joint_control_t c[7];
  for (int j = 0; j < 7; ++j)
    c[j] = position_control(0.4 * sin(1.0 + j), 1e3, 30.0);
  c[4].mode = LCP_CONTROL_VELOCITY;
  c[4].velocity = 0.7;
  c[6].mode = LCP_CONTROL_TORQUE;
  c[6].torque = 0.05;
  c[1].effort_limit = 5.0; /* saturates against gravity */
  assert_int_equal(lcp_robot_set_controls(w, id, c, 7), LCP_OK);
  assert_int_equal(lcp_robot_set_gravity_compensation(w, id, false), LCP_OK);
  test_step_n(w, 50);
  double applied_saved[7];
  assert_int_equal(lcp_robot_get_applied_torques(w, id, applied_saved, 7), LCP_OK);
  size_t size = lcp_world_state_size(w), used;
  void *snapshot = malloc(size);
  assert_non_null(snapshot);
  assert_int_equal(lcp_world_save_state(w, snapshot, size, &used), LCP_OK);

  double q1[7], qd1[7], tau1[7], q2[7], qd2[7], tau2[7];
  test_step_n(w, 100);
  assert_int_equal(lcp_robot_get_q(w, id, q1, 7), LCP_OK);
  assert_int_equal(lcp_robot_get_qd(w, id, qd1, 7), LCP_OK);
  assert_int_equal(lcp_robot_get_applied_torques(w, id, tau1, 7), LCP_OK);
  uint64_t hash1 = lcp_world_state_hash(w);

  /* disturb what the snapshot must bring back */
  lcp_joint_control_t off[7];
  for (int j = 0; j < 7; ++j)
    off[j] = lcp_joint_control_default();
  assert_int_equal(lcp_robot_set_controls(w, id, off, 7), LCP_OK);
  assert_int_equal(lcp_robot_set_gravity_compensation(w, id, true), LCP_OK);
  assert_int_equal(lcp_world_step(w), LCP_OK);

  assert_int_equal(lcp_world_restore_state(w, snapshot, used), LCP_OK);
  double applied_restored[7];
  assert_int_equal(lcp_robot_get_applied_torques(w, id, applied_restored, 7), LCP_OK);
  assert_memory_equal(applied_restored, applied_saved, sizeof applied_saved);
  assert_controls(w, id, c);
  test_step_n(w, 100);
  assert_int_equal(lcp_robot_get_q(w, id, q2, 7), LCP_OK);
  assert_int_equal(lcp_robot_get_qd(w, id, qd2, 7), LCP_OK);
  assert_int_equal(lcp_robot_get_applied_torques(w, id, tau2, 7), LCP_OK);
  print_message("snapshot: q after 100 steps %.17g %.17g ... (both runs), applied joint2 %.6f "
                "N.m (limit 5), state hashes %016llx / %016llx\n",
                q1[0], q1[1], tau1[1], (unsigned long long)hash1,
                (unsigned long long)lcp_world_state_hash(w));
  assert_memory_equal(q1, q2, sizeof q1);
  assert_memory_equal(qd1, qd2, sizeof qd1);
  assert_memory_equal(tau1, tau2, sizeof tau1);
  assert_true(hash1 == lcp_world_state_hash(w));
  free(snapshot);
  lcp_world_destroy(&w);
  lcp_robot_def_free(&def);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stiff_gains_stable_implicit_unstable_explicit),
      cmocka_unit_test(test_exact_backward_euler),
      cmocka_unit_test(test_effort_limit),
      cmocka_unit_test(test_arm7_holds_pose),
      cmocka_unit_test(test_gravity_compensation_removes_sag),
      cmocka_unit_test(test_presses_against_contact),
      cmocka_unit_test(test_box_link_presses_box),
      cmocka_unit_test(test_velocity_mode),
      cmocka_unit_test(test_torque_mode),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_snapshot_with_controllers),
      cmocka_unit_test(test_snapshot_bytes_are_the_state),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
