/* SPDX-License-Identifier: Apache-2.0 */
/* Robots stepped in the world: Featherstone multibodies in
 * the same LCP as contacts. Pendulum period, energy of an undamped chain,
 * momentum of a floating robot,
 * joint limits and damping as rows,
 * robot–body contact in both directions, and the API's promises around a
 * step: the scratch arena is empty after every call, and a const query
 * changes nothing (checked on the bytes of the state). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "scenes.h"
#include "test_util.h"
#include "world_internal.h" /* the scratch arena's used size */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A serial chain along x: link 0 is the base (a 1 kg cube), link i ≥ 1 a
 * slender rod of length `length` and mass `mass` whose joint sits at the end
 * of link i − 1 (at the base origin for link 1), revolute about `axes[i−1]`
 * (0: x, 1: y, 2: z). */
typedef struct chain_spec {
  int32_t links; /* movable links */
  double length, mass;
  const int *axes;
  bool floating;
  bool geoms;          /* a box 0.08 m thick around each rod */
  double lower, upper; /* joint limits (equal: none) */
  double damping;
} chain_spec;

static lcp_robot_def_t *make_chain(const chain_spec *spec) {
  lcp_robot_def_t *def = NULL;
  int32_t n = spec->links + 1;
  assert_int_equal(lcp_robot_def_alloc(n, spec->geoms ? spec->links : 0, &def), LCP_OK);
  strcpy(def->name, "chain");
  def->floating_base = spec->floating;
  strcpy(def->links[0].name, "base");
  def->links[0].inertia[0] = def->links[0].inertia[4] = def->links[0].inertia[8] = 1.0 / 6.0;
  for (int32_t i = 1; i < n; ++i) {
    lcp_link_def_t *l = &def->links[i];
    snprintf(l->name, sizeof l->name, "link%d", (int)i);
    snprintf(l->joint_name, sizeof l->joint_name, "joint%d", (int)i);
    l->parent = i - 1;
    l->joint_type = spec->lower < spec->upper ? LCP_JOINT_REVOLUTE : LCP_JOINT_CONTINUOUS;
    l->lower = spec->lower;
    l->upper = spec->upper;
    l->damping = spec->damping;
    l->origin_position[0] = i == 1 ? 0.0 : spec->length;
    l->axis[0] = l->axis[1] = l->axis[2] = 0.0;
    l->axis[spec->axes[i - 1]] = 1.0;
    l->mass = spec->mass;
    l->com[0] = 0.5 * spec->length;
    double across = spec->mass * spec->length * spec->length / 12.0;
    memset(l->inertia, 0, sizeof l->inertia);
    l->inertia[0] = 1e-4 * spec->mass;
    l->inertia[4] = l->inertia[8] = across;
    if (spec->geoms) {
      lcp_geom_def_t *g = &def->geoms[i - 1];
      g->type = LCP_SHAPE_BOX;
      g->half_extents[0] = 0.5 * spec->length;
      g->half_extents[1] = g->half_extents[2] = 0.04;
      g->local_position[0] = 0.5 * spec->length;
      l->first_geom = i - 1;
      l->geom_count = 1;
    }
  }
  return def;
}

/* Mass and centre of mass (link frame) of each link, for energies. */
static void link_mass_com(const lcp_robot_def_t *def, int32_t link, double *m, double c[3]) {
  *m = def->links[link].mass;
  memcpy(c, def->links[link].com, sizeof(double) * 3);
}

static void rotate(const double q[4], const double v[3], double out[3]) {
  /* v + 2 w (u × v) + 2 u × (u × v), u = (x, y, z) */
  double u[3] = {q[1], q[2], q[3]}, w = q[0];
  double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]),
                 2 * (u[0] * v[1] - u[1] * v[0])};
  out[0] = v[0] + w * t[0] + (u[1] * t[2] - u[2] * t[1]);
  out[1] = v[1] + w * t[1] + (u[2] * t[0] - u[0] * t[2]);
  out[2] = v[2] + w * t[2] + (u[0] * t[1] - u[1] * t[0]);
}

static void cross(const double a[3], const double b[3], double out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Kinetic energy ½ qdᵀ M qd from the mass matrix, potential −Σ m g·c. */
static double robot_energy(lcp_world_t *w, lcp_robot_id id, const lcp_robot_def_t *def) {
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, id, &info), LCP_OK);
  double M[64 * 64], qd[64];
  assert_true(info.nv <= 64);
  assert_int_equal(lcp_robot_mass_matrix(w, id, M, info.nv), LCP_OK);
  assert_int_equal(lcp_robot_get_qd(w, id, qd, info.nv), LCP_OK);
  double kinetic = 0.0;
  for (int i = 0; i < info.nv; ++i)
    for (int j = 0; j < info.nv; ++j)
      kinetic += 0.5 * qd[i] * M[i * info.nv + j] * qd[j];
  lcp_world_settings_t s;
  lcp_world_get_settings(w, &s);
  double potential = 0.0;
  for (int32_t l = 0; l < info.link_count; ++l) {
    double p[3], q[4], m, c[3], cw[3];
    assert_int_equal(lcp_robot_get_link_pose(w, id, l, p, q), LCP_OK);
    link_mass_com(def, l, &m, c);
    rotate(q, c, cw);
    for (int k = 0; k < 3; ++k)
      potential -= m * s.gravity[k] * (p[k] + cw[k]);
  }
  return kinetic + potential;
}

/* Total linear momentum and angular momentum about the world origin. */
static void robot_momentum(lcp_world_t *w, lcp_robot_id id, const lcp_robot_def_t *def,
                           double linear[3], double angular[3]) {
  memset(linear, 0, sizeof(double) * 3);
  memset(angular, 0, sizeof(double) * 3);
  for (int32_t l = 0; l < def->link_count; ++l) {
    double p[3], q[4], v[3], om[3], m, c[3], cw[3], vc[3], t[3];
    assert_int_equal(lcp_robot_get_link_pose(w, id, l, p, q), LCP_OK);
    assert_int_equal(lcp_robot_get_link_velocity(w, id, l, v, om), LCP_OK);
    link_mass_com(def, l, &m, c);
    rotate(q, c, cw);
    cross(om, cw, t);
    for (int k = 0; k < 3; ++k)
      vc[k] = v[k] + t[k];
    double pos[3] = {p[0] + cw[0], p[1] + cw[1], p[2] + cw[2]};
    double mv[3] = {m * vc[0], m * vc[1], m * vc[2]};
    cross(pos, mv, t);
    /* I_world ω = R I Rᵀ ω */
    double qc[4] = {q[0], -q[1], -q[2], -q[3]}, wl[3], Iw[3], Iwl[3];
    rotate(qc, om, wl);
    const double *I = def->links[l].inertia;
    for (int r = 0; r < 3; ++r)
      Iwl[r] = I[3 * r] * wl[0] + I[3 * r + 1] * wl[1] + I[3 * r + 2] * wl[2];
    rotate(q, Iwl, Iw);
    for (int k = 0; k < 3; ++k) {
      linear[k] += mv[k];
      angular[k] += t[k] + Iw[k];
    }
  }
}

/* A point mass on a (nearly) massless rod: period 2π√(I/(m g d)), I about
 * the pivot, to 0.2 % at h = 1 ms from 5°. */
static void test_pendulum_period(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, true);
  const int axes[1] = {1};
  chain_spec spec = {.links = 1, .length = 2.0, .mass = 1.0, .axes = axes};
  lcp_robot_def_t *def = make_chain(&spec);
  /* hang it: the rod points along −z when the joint is at 0 */
  def->links[1].origin_orientation[0] = sqrt(0.5);
  def->links[1].origin_orientation[2] = sqrt(0.5);
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
  double q0 = 5.0 * TEST_PI / 180.0;
  assert_int_equal(lcp_robot_set_q(w, id, &q0, 1), LCP_OK);
  const lcp_link_def_t *rod = &def->links[1];
  double d = rod->com[0], inertia = rod->inertia[4] + rod->mass * d * d;
  double expected = 2.0 * TEST_PI * sqrt(inertia / (rod->mass * 9.81 * d));
  /* Upward zero crossings of q, interpolated. */
  double crossings[4];
  int found = 0;
  double q_prev = q0;
  for (int step = 1; step <= 20000 && found < 4; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double q;
    assert_int_equal(lcp_robot_get_q(w, id, &q, 1), LCP_OK);
    if (q_prev < 0.0 && q >= 0.0)
      crossings[found++] = 1e-3 * (step - 1 + q_prev / (q_prev - q));
    q_prev = q;
  }
  assert_int_equal(found, 4);
  double period = (crossings[3] - crossings[0]) / 3.0;
  print_message("pendulum period %.6f s, expected %.6f s, error %.4f %%\n", period, expected,
                100.0 * (period / expected - 1.0));
  assert_true(fabs(period / expected - 1.0) < 0.002);
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

/* An undamped 5-link chain released horizontal keeps its energy to 1 % over
 * 10 s at h = 1 ms (no contacts). */
static void test_chain_energy(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, true);
  const int axes[5] = {1, 1, 1, 1, 1};
  chain_spec spec = {.links = 5, .length = 0.3, .mass = 1.0, .axes = axes};
  lcp_robot_def_t *def = make_chain(&spec);
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
  double e0 = robot_energy(w, id, def), scale = 0.0;
  /* the energy's scale: the drop of the chain's centre of mass, ~ m g L */
  for (int32_t l = 1; l <= 5; ++l)
    scale += 9.81 * def->links[l].mass * spec.length * (l - 0.5);
  double worst = 0.0;
  for (int step = 0; step < 10000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    if (step % 10 == 0) {
      double e = robot_energy(w, id, def);
      worst = fmax(worst, fabs(e - e0));
    }
  }
  print_message("chain energy: worst |E - E0| = %.3e J of %.3f J (%.3f %%)\n", worst, scale,
                100.0 * worst / scale);
  assert_true(worst < 0.01 * scale);
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

/* A floating robot in zero gravity driving its joints keeps its total
 * momentum to 1e-9 relative (internal forces only). */
static void test_floating_momentum(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, false);
  const int axes[4] = {1, 0, 2, 1};
  chain_spec spec = {.links = 4, .length = 0.3, .mass = 0.7, .axes = axes, .floating = true};
  lcp_robot_def_t *def = make_chain(&spec);
  lcp_robot_id id;
  const double base[3] = {0.3, -0.2, 1.0};
  assert_int_equal(lcp_robot_add(w, def, base, NULL, &id), LCP_OK);
  double qd[10] = {0.1, -0.2, 0.05, 0.3, -0.1, 0.2, 1.0, -0.5, 0.7, 0.2};
  assert_int_equal(lcp_robot_set_qd(w, id, qd, 10), LCP_OK);
  /* joints driven by position controllers toward moving targets */
  double p0[3], l0[3];
  robot_momentum(w, id, def, p0, l0);
  double worst_p = 0.0, worst_l = 0.0;
  for (int step = 0; step < 2000; ++step) {
    for (int32_t j = 0; j < 4; ++j) {
      lcp_joint_control_t c = lcp_joint_control_default();
      c.mode = LCP_CONTROL_POSITION;
      c.position = 0.8 * sin(0.004 * step + j);
      c.kp = 50.0;
      c.kd = 2.0;
      assert_int_equal(lcp_robot_set_joint_control(w, id, j, &c), LCP_OK);
    }
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double p[3], l[3], dp[3], dl[3];
    robot_momentum(w, id, def, p, l);
    for (int k = 0; k < 3; ++k) {
      dp[k] = p[k] - p0[k];
      dl[k] = l[k] - l0[k];
    }
    worst_p = fmax(worst_p, test_norm3(dp) / test_norm3(p0));
    worst_l = fmax(worst_l, test_norm3(dl) / test_norm3(l0));
  }
  print_message("floating momentum: relative drift linear %.2e angular %.2e\n", worst_p, worst_l);
  assert_true(worst_p < 1e-9);
  assert_true(worst_l < 1e-9);
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

/* A link held horizontal by nothing falls onto its upper limit and stays
 * there: violation < 0.01 rad after settling. */
static void test_joint_limit_holds(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, true);
  const int axes[1] = {1};
  chain_spec spec = {
      .links = 1, .length = 0.5, .mass = 2.0, .axes = axes, .lower = -0.3, .upper = 0.2};
  lcp_robot_def_t *def = make_chain(&spec);
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
  /* about +y, the rod along +x turns down for q > 0: gravity drives q up */
  double worst_after = 0.0, q = 0.0, qd = 0.0;
  for (int step = 0; step < 3000; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    assert_int_equal(lcp_robot_get_q(w, id, &q, 1), LCP_OK);
    if (step >= 1000)
      worst_after = fmax(worst_after, q - spec.upper);
  }
  assert_int_equal(lcp_robot_get_qd(w, id, &qd, 1), LCP_OK);
  print_message("joint limit: q = %.5f (upper %.2f), worst violation after 1 s %.2e rad\n", q,
                spec.upper, worst_after);
  assert_true(worst_after < 0.01);
  assert_true(q > spec.upper - 0.01);
  assert_true(fabs(qd) < 1e-3);
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

/* Joint damping is a row: a damped pendulum's swing decays, an undamped one's
 * does not (same start). */
static void test_joint_damping_row(void **state) {
  (void)state;
  double amplitude[2];
  for (int damped = 0; damped < 2; ++damped) {
    lcp_world_t *w = test_new_world(1e-3, true);
    const int axes[1] = {1};
    chain_spec spec = {
        .links = 1, .length = 0.5, .mass = 1.0, .axes = axes, .damping = damped ? 0.2 : 0.0};
    lcp_robot_def_t *def = make_chain(&spec);
    lcp_robot_id id;
    assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
    amplitude[damped] = 0.0;
    for (int step = 0; step < 3000; ++step) {
      assert_int_equal(lcp_world_step(w), LCP_OK);
      double q;
      assert_int_equal(lcp_robot_get_q(w, id, &q, 1), LCP_OK);
      if (step >= 2000)
        amplitude[damped] = fmax(amplitude[damped], fabs(q - TEST_PI / 2));
    }
    lcp_robot_def_free(&def);
    lcp_world_destroy(&w);
  }
  print_message("swing amplitude in the third second: undamped %.3f rad, damped %.3f rad\n",
                amplitude[0], amplitude[1]);
  assert_true(amplitude[0] > 1.4);
  assert_true(amplitude[1] < 0.5 * amplitude[0]);
}

/* Self-collision: a chain folded so that its first and third links overlap
 * by 8 mm (gravity off). With self-collision on, the two links touch and are
 * pushed apart; off, no contact is made (and parent/child pairs never are). */
static void test_self_collision(void **state) {
  (void)state;
  for (int enabled = 0; enabled < 2; ++enabled) {
    lcp_world_t *w = test_new_world(1e-3, false);
    const int axes[3] = {1, 1, 1};
    chain_spec spec = {.links = 3, .length = 0.3, .mass = 1.0, .axes = axes, .geoms = true};
    lcp_robot_def_t *def = make_chain(&spec);
    def->self_collision = enabled;
    lcp_robot_id id;
    assert_int_equal(lcp_robot_add(w, def, NULL, NULL, &id), LCP_OK);
    /* link 2 folds back under link 1; link 3 turns back along +x, its box
     * 72 mm below link 1's axis: the 80 mm thick boxes overlap by 8 mm */
    const double q[3] = {0.0, 2.9, -2.9};
    assert_int_equal(lcp_robot_set_q(w, id, q, 3), LCP_OK);
    int32_t first_contacts = -1, link13 = 0;
    double deepest_end = 0.0;
    for (int step = 0; step < 1000; ++step) {
      assert_int_equal(lcp_world_step(w), LCP_OK);
      lcp_contact_info_t contacts[16];
      int32_t n = lcp_world_get_contacts(w, contacts, 16);
      if (step == 0)
        first_contacts = n;
      for (int32_t c = 0; c < n && c < 16; ++c) {
        const lcp_contact_info_t *ci = &contacts[c];
        assert_int_equal(ci->robot_a, id);
        assert_int_equal(ci->robot_b, id);
        /* never a link with its parent or child */
        assert_true(abs(ci->link_a - ci->link_b) >= 2);
        link13 += (ci->link_a == 1 && ci->link_b == 3) || (ci->link_a == 3 && ci->link_b == 1);
        if (step == 999)
          deepest_end = fmax(deepest_end, ci->depth);
      }
    }
    print_message("self-collision %s: %d contacts at the first step, deepest at the end %.4f m\n",
                  enabled ? "on" : "off", (int)first_contacts, deepest_end);
    if (enabled) {
      assert_true(first_contacts > 0);
      assert_true(link13 > 0);
      assert_true(deepest_end < 0.002);
    } else {
      assert_int_equal(first_contacts, 0);
    }
    lcp_robot_def_free(&def);
    lcp_world_destroy(&w);
  }
}

/* Both directions in one solve: a robot's link drives a free box along a
 * frictionless floor, and a box dropped on a held link moves the joint. */
static void test_robot_pushes_box(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, true);
  assert_int_equal(test_add_plane(w, 0.0, NULL), LCP_OK);
  /* a single rod along +x turning about z, 0.1 m above the floor */
  const int axes[1] = {2};
  chain_spec spec = {.links = 1, .length = 0.6, .mass = 1.0, .axes = axes, .geoms = true};
  lcp_robot_def_t *def = make_chain(&spec);
  lcp_robot_id id;
  const double base[3] = {0.0, 0.0, 0.1};
  assert_int_equal(lcp_robot_add(w, def, base, NULL, &id), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.05, 0.05, 0.1, 0.0);
  const double at[3] = {0.45, 0.2, 0.1};
  lcp_body_id b = test_add_solid(w, &box, 0.5, at, NULL);
  assert_true(b != LCP_NULL_ID);
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_POSITION;
  c.position = 1.2; /* sweeps +x → +y, through the box */
  c.kp = 200.0;
  c.kd = 20.0;
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
  test_step_n(w, 1500);
  double p[3];
  assert_int_equal(lcp_body_get_pose(w, b, p, NULL), LCP_OK);
  double moved = test_dist3(p, at);
  print_message("box pushed by the link: moved %.3f m\n", moved);
  assert_true(moved > 0.05);
  /* the box stays out of the rod (its centre is beyond the rod's reach in y
   * or past its tip) */
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

static void test_box_moves_robot(void **state) {
  (void)state;
  lcp_world_t *w = test_new_world(1e-3, true);
  /* a horizontal rod about y held by a soft PD at 0 */
  const int axes[1] = {1};
  chain_spec spec = {.links = 1, .length = 0.6, .mass = 1.0, .axes = axes, .geoms = true};
  lcp_robot_def_t *def = make_chain(&spec);
  lcp_robot_id id;
  const double base[3] = {0.0, 0.0, 0.5};
  assert_int_equal(lcp_robot_add(w, def, base, NULL, &id), LCP_OK);
  assert_int_equal(lcp_robot_set_gravity_compensation(w, id, true), LCP_OK);
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_POSITION;
  c.kp = 100.0;
  c.kd = 5.0;
  assert_int_equal(lcp_robot_set_joint_control(w, id, 0, &c), LCP_OK);
  test_step_n(w, 200);
  double q_before;
  assert_int_equal(lcp_robot_get_q(w, id, &q_before, 1), LCP_OK);
  assert_true(fabs(q_before) < 1e-3);
  lcp_geom_def_t box = test_box_def(0.05, 0.05, 0.05, 0.5);
  const double at[3] = {0.5, 0.0, 0.7};
  lcp_body_id b = test_add_solid(w, &box, 2.0, at, NULL);
  double q_max = 0.0, p[3];
  for (int step = 0; step < 1500; ++step) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double q;
    assert_int_equal(lcp_robot_get_q(w, id, &q, 1), LCP_OK);
    q_max = fmax(q_max, q);
  }
  assert_int_equal(lcp_body_get_pose(w, b, p, NULL), LCP_OK);
  double q_end;
  assert_int_equal(lcp_robot_get_q(w, id, &q_end, 1), LCP_OK);
  /* resting on the rod at x ≈ 0.5: the PD holds m g x = kp Δq → Δq ≈ 0.098 */
  double expected = 2.0 * 9.81 * 0.5 / c.kp;
  print_message("box on the link: q peak %.4f, rest %.4f (statics %.4f), box z %.3f\n", q_max,
                q_end, expected, p[2]);
  assert_true(q_max > 0.05);
  assert_true(fabs(q_end - expected) < 0.2 * expected);
  assert_true(p[2] > 0.4);
  lcp_robot_def_free(&def);
  lcp_world_destroy(&w);
}

/* The quadruped standing under PD with a box dropped beside it. */
static lcp_world_t *quadruped_and_box(lcp_robot_scene_t *scene, lcp_body_id *box) {
  lcp_world_settings_t s = lcp_scene_robot_settings();
  lcp_world_t *w = test_create_world(&s);
  assert_int_equal(lcp_scene_quadruped(w, 300.0, 10.0, 0.002, scene), LCP_OK);
  lcp_geom_def_t g = test_box_def(0.05, 0.05, 0.05, 0.6);
  const double at[3] = {0.6, 0.0, 0.2};
  *box = test_add_solid(w, &g, 1.0, at, NULL);
  assert_true(*box != LCP_NULL_ID);
  return w;
}

static void save_state(const lcp_world_t *w, unsigned char *buffer, size_t capacity, size_t *size) {
  assert_int_equal(lcp_world_save_state(w, buffer, capacity, size), LCP_OK);
}

/* Every const query of the API on w, each followed by a look at the arena. */
static void query_everything(const lcp_world_t *w, const lcp_robot_scene_t *scene,
                             lcp_body_id box) {
  double p[3], q4[4], v[3], o[3], m9[9], lo[3], hi[3];
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, scene->robot, &info), LCP_OK);
  assert_true(info.nq <= 32 && info.nv <= 32);
  double q[32], qd[32], M[32 * 32], tau[32], qdd[32];
  assert_int_equal(lcp_body_get_pose(w, box, p, q4), LCP_OK);
  assert_int_equal(lcp_body_get_velocity(w, box, v, o), LCP_OK);
  assert_int_equal(lcp_body_get_mass(w, box, &p[0], m9), LCP_OK);
  assert_int_equal(lcp_robot_get_q(w, scene->robot, q, info.nq), LCP_OK);
  assert_int_equal(lcp_robot_get_qd(w, scene->robot, qd, info.nv), LCP_OK);
  for (int32_t l = 0; l < info.link_count; ++l) {
    assert_int_equal(lcp_robot_get_link_pose(w, scene->robot, l, p, q4), LCP_OK);
    assert_int_equal(lcp_robot_get_link_velocity(w, scene->robot, l, v, o), LCP_OK);
  }
  assert_int_equal(lcp_robot_mass_matrix(w, scene->robot, M, info.nv), LCP_OK);
  assert_int_equal(lcp_robot_inverse_dynamics(w, scene->robot, NULL, tau, info.nv), LCP_OK);
  assert_int_equal(lcp_robot_forward_dynamics(w, scene->robot, tau, qdd, info.nv), LCP_OK);
  assert_int_equal(lcp_robot_get_applied_torques(w, scene->robot, tau, info.joint_count), LCP_OK);
  for (int32_t f = 0; f < scene->foot_count; ++f)
    assert_int_equal(lcp_scene_foot_position(w, scene, f, p), LCP_OK);
  lcp_contact_info_t contacts[16];
  assert_true(lcp_world_get_contacts(w, contacts, 16) >= 0);
  lcp_step_stats_t stats;
  lcp_world_get_stats(w, &stats);
  lcp_body_id ids[8];
  assert_true(lcp_world_body_ids(w, ids, 8) >= 2);
  for (int32_t g = 0; g < w->model.geom_count; ++g)
    assert_int_equal(lcp_geom_get_aabb(w, w->model.geoms[g].id, lo, hi), LCP_OK);
  (void)lcp_world_state_hash(w);
  assert_int_equal(w->scratch.used_total, 0);
}

/* After every step (and a step that fails) the scratch arena holds nothing,
 * and every const query leaves the state's bytes as they were: a world
 * queried after each step ends bitwise where a world never queried does. */
static void test_scratch_empty_and_queries_const(void **state) {
  (void)state;
  lcp_robot_scene_t scene_a, scene_b;
  lcp_body_id box_a, box_b;
  lcp_world_t *a = quadruped_and_box(&scene_a, &box_a);
  lcp_world_t *b = quadruped_and_box(&scene_b, &box_b);
  size_t capacity = lcp_world_state_size(a) + 4096;
  unsigned char *before = malloc(capacity), *after = malloc(capacity);
  assert_non_null(before);
  assert_non_null(after);
  int contact_steps = 0;
  for (int step = 0; step < 300; ++step) {
    assert_int_equal(lcp_world_step(a), LCP_OK);
    assert_int_equal(lcp_world_step(b), LCP_OK);
    assert_int_equal(a->scratch.used_total, 0);
    size_t n_before, n_after;
    save_state(a, before, capacity, &n_before);
    query_everything(a, &scene_a, box_a);
    save_state(a, after, capacity, &n_after);
    assert_int_equal(n_before, n_after);
    assert_memory_equal(before, after, n_before);
    lcp_step_stats_t st;
    lcp_world_get_stats(a, &st);
    contact_steps += st.contacts > 0;
  }
  assert_true(contact_steps > 100); /* feet and box on the ground: contact rows solved */
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  /* a step that fails (the direct solver refuses this many rows) leaves the
   * arena empty and the state as it was */
  lcp_world_settings_t s;
  lcp_world_get_settings(a, &s);
  s.solver = LCP_SOLVER_DIRECT;
  s.direct_max_rows = 1;
  assert_int_equal(lcp_world_set_settings(a, &s), LCP_OK);
  size_t n_before, n_after;
  save_state(a, before, capacity, &n_before);
  assert_int_not_equal(lcp_world_step(a), LCP_OK);
  assert_int_equal(a->scratch.used_total, 0);
  save_state(a, after, capacity, &n_after);
  assert_int_equal(n_before, n_after);
  assert_memory_equal(before, after, n_before);
  query_everything(a, &scene_a, box_a);
  free(before);
  free(after);
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pendulum_period),
      cmocka_unit_test(test_chain_energy),
      cmocka_unit_test(test_floating_momentum),
      cmocka_unit_test(test_joint_limit_holds),
      cmocka_unit_test(test_joint_damping_row),
      cmocka_unit_test(test_robot_pushes_box),
      cmocka_unit_test(test_box_moves_robot),
      cmocka_unit_test(test_self_collision),
      cmocka_unit_test(test_scratch_empty_and_queries_const),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
