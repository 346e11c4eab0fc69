/* SPDX-License-Identifier: Apache-2.0 */
/* Penetration recovery, speculative contacts and restitution: bodies and
 * robots that start deep inside the ground rise out of it no faster than
 * the push-out bound and come to rest without gaining energy; a fast body
 * neither tunnels through a thin plate nor bounces off it unless given a
 * restitution, and then bounces to e² times its drop height. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"
#include "scenes.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double G = 9.81;

/* Kinetic plus potential energy of a free body. */
static double body_energy(lcp_world_t *w, lcp_body_id id) {
  double m, I[9], x[3], q[4], v[3], om[3];
  lcp_body_get_mass(w, id, &m, I);
  lcp_body_get_pose(w, id, x, q);
  lcp_body_get_velocity(w, id, v, om);
  /* ω in body axes: Rᵀω */
  double wb[3];
  double qw = q[0], qx = q[1], qy = q[2], qz = q[3];
  double R[3][3] = {
      {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)},
      {2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)},
      {2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)}};
  for (int r = 0; r < 3; ++r)
    wb[r] = R[0][r] * om[0] + R[1][r] * om[1] + R[2][r] * om[2];
  double rot = 0.0;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      rot += wb[r] * I[3 * r + c] * wb[c];
  return 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * rot + m * G * x[2];
}

/* A 1 m cube (1 kg) whose bottom starts 0.4 m below the ground, tilted
 * a little so that its corners are at different depths. */
static void test_box_deep_in_ground_rises_and_rests(void **state) {
  (void)state;
  lcp_world_settings_t s = lcp_world_settings_default();
  lcp_world_t *w = test_create_world(&s);
  test_add_plane(w, 0.8, NULL);
  lcp_geom_def_t box = test_box_def(0.5, 0.5, 0.5, 0.8);
  const double depth = 0.4;
  lcp_body_id id = test_add_solid(w, &box, 1.0, (double[]){0.0, 0.0, 0.5 - depth},
                                  (double[]){0.9997, 0.0175, 0.0, 0.0});
  const double mass = 1.0, h = s.timestep;
  double e0 = body_energy(w, id);
  /* Lifting the cube out of the ground necessarily adds m g depth of
   * potential energy; nothing else may be added. */
  double allowed = e0 + mass * G * (depth + 0.01);
  double x[3], q[4], v[3], om[3], prev_z = 0.5 - depth, top_rise = 0.0, top_speed = 0.0,
                                  top_energy = -INFINITY;
  for (int i = 0; i < (int)(2.0 / h); ++i) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    lcp_body_get_pose(w, id, x, q);
    lcp_body_get_velocity(w, id, v, om);
    double rise = (x[2] - prev_z) / h;
    prev_z = x[2];
    top_rise = fmax(top_rise, rise);
    top_speed = fmax(top_speed, v[2]);
    top_energy = fmax(top_energy, body_energy(w, id) - allowed);
    /* the positions rise at most at the push-out speed (the bound, plus
     * what rotation adds to the centre's speed: 5 %) and the velocity kept
     * is not the push-out's: at most what gravity gives in a step */
    assert_true(rise <= 1.05 * s.max_push_speed + G * h);
    assert_true(v[2] <= G * h + 1e-9);
    assert_true(body_energy(w, id) <= allowed);
  }
  print_message("box 0.4 m deep: fastest rise %.3f m/s (bound %.1f), largest kept upward speed "
                "%.2g m/s, energy margin %.3g J, rest z %.5f\n",
                top_rise, s.max_push_speed, top_speed, top_energy, x[2]);
  /* at rest on the ground after 2 s: within the slop of 0.5 m, still */
  assert_true(fabs(x[2] - 0.5) < 2.0 * s.baumgarte_slop);
  assert_true(test_norm3(v) < 1e-3 && test_norm3(om) < 1e-3);
  lcp_world_destroy(&w);
}

/* The shipped quadruped added at the origin with its legs straight: its
 * feet start 0.4 m inside the ground (the README's --urdf example). */
typedef struct robot_energy {
  lcp_robot_def_t *def;
  lcp_robot_id id;
  int32_t nv, nq, joints;
  double *M, *qd, *q, *tau;
} robot_energy;

/* The lowest world z of a sphere, capsule or box geom of a link at pose
 * (p, q); other shapes by their bounding sphere. */
static double geom_lowest(const lcp_geom_def_t *geom, const double p[3], const double q[4]) {
  double centre[3], lowest = INFINITY;
  lcp_quat_rotate(q, geom->local_position, centre);
  double gq[4];
  lcp_quat_multiply(q, geom->local_orientation, gq);
  /* the corners of the box, or the ends of the capsule's segment (along z) */
  for (int k = 0; k < 8; ++k) {
    double corner[3] = {0.0, 0.0, 0.0}, world[3];
    if (geom->type == LCP_SHAPE_BOX)
      for (int a = 0; a < 3; ++a)
        corner[a] = (k >> a & 1 ? 1.0 : -1.0) * geom->half_extents[a];
    else if (geom->type == LCP_SHAPE_CAPSULE || geom->type == LCP_SHAPE_CYLINDER)
      corner[2] = (k & 1 ? 1.0 : -1.0) * geom->half_length;
    lcp_quat_rotate(gq, corner, world);
    double reach = geom->type == LCP_SHAPE_BOX ? 0.0 : geom->radius;
    lowest = fmin(lowest, p[2] + centre[2] + world[2] - reach);
  }
  return lowest;
}

static double robot_kinetic(lcp_world_t *w, robot_energy *r) {
  assert_int_equal(lcp_robot_mass_matrix(w, r->id, r->M, r->nv), LCP_OK);
  assert_int_equal(lcp_robot_get_qd(w, r->id, r->qd, r->nv), LCP_OK);
  double e = 0.0;
  for (int32_t i = 0; i < r->nv; ++i)
    for (int32_t k = 0; k < r->nv; ++k)
      e += 0.5 * r->qd[i] * r->M[i * r->nv + k] * r->qd[k];
  return e;
}

static double robot_potential(lcp_world_t *w, robot_energy *r) {
  double e = 0.0;
  for (int32_t l = 0; l < r->def->link_count; ++l) {
    double p[3], q[4], c[3];
    assert_int_equal(lcp_robot_get_link_pose(w, r->id, l, p, q), LCP_OK);
    lcp_quat_rotate(q, r->def->links[l].com, c);
    e += r->def->links[l].mass * G * (p[2] + c[2]);
  }
  return e;
}

static double robot_mass(const robot_energy *r) {
  double m = 0.0;
  for (int32_t l = 0; l < r->def->link_count; ++l)
    m += r->def->links[l].mass;
  return m;
}

static void quadruped_deep_in_ground(bool controlled) {
  lcp_world_settings_t s = lcp_world_settings_default();
  s.timestep = 1e-3;
  lcp_world_t *w = test_create_world(&s);
  test_add_plane(w, 0.8, NULL);
  char path[4096];
  char why[512];
  assert_int_equal(lcp_shipped_robot_path("quadruped.urdf", path, sizeof path, why, sizeof why),
                   LCP_OK);
  robot_energy r = {0};
  lcp_urdf_options_t options = lcp_urdf_options_default();
  assert_int_equal(lcp_urdf_load_file(path, &options, &r.def, why, sizeof why), LCP_OK);
  assert_int_equal(lcp_robot_add(w, r.def, (double[]){0.0, 0.0, 0.0}, NULL, &r.id), LCP_OK);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, r.id, &info), LCP_OK);
  r.nv = info.nv, r.nq = info.nq, r.joints = info.joint_count;
  r.M = test_doubles(r.nv * r.nv);
  r.qd = test_doubles(r.nv);
  r.q = test_doubles(r.nq);
  r.tau = test_doubles(r.joints);
  if (controlled)
    for (int32_t j = 0; j < r.joints; ++j) {
      lcp_joint_control_t c = lcp_joint_control_default();
      c.mode = LCP_CONTROL_POSITION;
      c.kp = 300.0;
      c.kd = 10.0;
      c.position = lcp_scene_quadruped_stand_angle(w, r.id, j);
      assert_int_equal(lcp_robot_set_joint_control(w, r.id, j, &c), LCP_OK);
    }
  /* how deep the robot's lowest point starts: the lift the ground must
   * give it at most */
  double lowest = INFINITY;
  for (int32_t l = 0; l < r.def->link_count; ++l) {
    const lcp_link_def_t *link = &r.def->links[l];
    double p[3], q[4];
    lcp_robot_get_link_pose(w, r.id, l, p, q);
    for (int32_t g = link->first_geom; g < link->first_geom + link->geom_count; ++g)
      lowest = fmin(lowest, geom_lowest(&r.def->geoms[g], p, q));
  }
  double e0 = robot_kinetic(w, &r) + robot_potential(w, &r);
  double work = 0.0, top_base_speed = 0.0, top_excess = -INFINITY;
  const double mass = robot_mass(&r), h = s.timestep;
  int steps = (int)(2.0 / h), rest_step = -1;
  for (int i = 0; i < steps; ++i) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    assert_int_equal(lcp_robot_get_q(w, r.id, r.q, r.nq), LCP_OK);
    assert_int_equal(lcp_robot_get_applied_torques(w, r.id, r.tau, r.joints), LCP_OK);
    double kinetic = robot_kinetic(w, &r);
    /* the controllers' work τ·qd h at the velocity kept (the joints'
     * velocities follow the base's 6) */
    for (int32_t j = 0; j < r.joints; ++j)
      work += r.tau[j] * r.qd[6 + j] * h;
    double base_speed = r.qd[2]; /* the base's world-frame linear velocity, z */
    top_base_speed = fmax(top_base_speed, base_speed);
    double e = kinetic + robot_potential(w, &r);
    /* lifting the robot out of the ground adds at most m g (its depth):
     * nothing beyond that and the controllers' work. (Under PD the
     * push-out bends the joints it moves the feet through, and the
     * controllers give that back as work: it is counted there.) */
    double excess = e - (e0 + mass * G * fmax(-lowest, 0.0) + fmax(work, 0.0));
    top_excess = fmax(top_excess, excess);
    assert_true(excess <= 1e-6 * fabs(e0) + 1e-6);
    assert_true(base_speed <= s.max_push_speed + G * h);
    if (rest_step < 0 && kinetic < 1e-4 * mass && i > 10)
      rest_step = i;
    if (kinetic >= 1e-4 * mass)
      rest_step = -1;
  }
  print_message("quadruped %s, lowest point %.3f m: top base speed %.3f m/s, energy excess %.3g J, "
                "at rest from t = %.3f s, base z %.4f\n",
                controlled ? "under PD" : "limp", lowest, top_base_speed, top_excess,
                rest_step < 0 ? -1.0 : rest_step * h, r.q[2]);
  /* at rest within the 2 s, on (not in) the ground: every link above
   * −(slop + a foot's radius) */
  assert_true(rest_step >= 0);
  for (int32_t l = 0; l < r.def->link_count; ++l) {
    double p[3], q[4];
    lcp_robot_get_link_pose(w, r.id, l, p, q);
    assert_true(p[2] > -0.05);
  }
  free(r.M), free(r.qd), free(r.q), free(r.tau);
  lcp_robot_def_free(&r.def);
  lcp_world_destroy(&w);
}

static void test_quadruped_deep_in_ground_under_pd(void **state) {
  (void)state;
  quadruped_deep_in_ground(true);
}

static void test_quadruped_deep_in_ground_limp(void **state) {
  (void)state;
  quadruped_deep_in_ground(false);
}

/* A sphere (r = 0.1 m) dropped from 5 m onto a static plate 2 cm thick,
 * at h = 1/240 s: it meets the plate at 9.9 m/s, 4 cm per step, twice the
 * plate's thickness. Returns the deepest penetration and the highest
 * rebound of the sphere's bottom above the plate after the first impact;
 * *below: whether it ever went below the plate (tunnelled). */
static void drop_on_plate(double restitution, double *deepest, double *rebound, bool *below) {
  lcp_world_settings_t s = lcp_world_settings_default();
  lcp_world_t *w = test_create_world(&s);
  lcp_body_def_t plate = lcp_body_def_default();
  plate.type = LCP_BODY_STATIC;
  lcp_body_id plate_id;
  assert_int_equal(lcp_body_add(w, &plate, &plate_id), LCP_OK);
  lcp_geom_def_t slab = test_box_def(1.0, 1.0, 0.01, 0.5);
  slab.local_position[2] = -0.01; /* top face at z = 0 */
  assert_int_equal(lcp_geom_add(w, plate_id, &slab, NULL), LCP_OK);
  const double radius = 0.1, height = 5.0;
  lcp_geom_def_t ball = test_sphere_def(radius, 0.5);
  ball.restitution = restitution;
  lcp_body_id id = test_add_solid(w, &ball, 1.0, (double[]){0.0, 0.0, height + radius}, NULL);
  *deepest = 0.0, *rebound = 0.0, *below = false;
  bool hit = false;
  for (int i = 0; i < (int)(4.0 / s.timestep); ++i) {
    assert_int_equal(lcp_world_step(w), LCP_OK);
    double x[3], v[3];
    lcp_body_get_pose(w, id, x, NULL);
    lcp_body_get_velocity(w, id, v, NULL);
    double bottom = x[2] - radius;
    *deepest = fmax(*deepest, -bottom);
    *below |= x[2] < -0.02;
    if (!hit && v[2] >= 0.0 && i > 0)
      hit = true;
    if (hit)
      *rebound = fmax(*rebound, bottom);
  }
  lcp_world_destroy(&w);
}

static void test_drop_on_thin_plate_plastic(void **state) {
  (void)state;
  double deepest, rebound;
  bool below;
  drop_on_plate(0.0, &deepest, &rebound, &below);
  print_message("drop 5 m, e = 0: deepest %.2f mm, rebound %.3f mm%s\n", 1e3 * deepest,
                1e3 * rebound, below ? ", TUNNELLED" : "");
  assert_false(below);
  assert_true(deepest < 0.005);
  assert_true(rebound < 0.001);
}

static void test_drop_on_thin_plate_restitution(void **state) {
  (void)state;
  double deepest, rebound;
  bool below;
  const double e = 0.5, height = 5.0;
  drop_on_plate(e, &deepest, &rebound, &below);
  print_message("drop 5 m, e = %.1f: deepest %.2f mm, rebound %.4f m (e²h = %.4f, %+.2f %%)\n", e,
                1e3 * deepest, rebound, e * e * height,
                100.0 * (rebound - e * e * height) / (e * e * height));
  assert_false(below);
  assert_true(deepest < 0.005);
  assert_true(fabs(rebound - e * e * height) < 0.05 * e * e * height);
}

/* A stack of 20 unit cubes (1 m, 1 kg) at h = 1/240 s and 20 iterations
 * stands 10 s with its top cube within 1 cm of where it started. */
static void test_stack_of_twenty_unit_cubes_stands(void **state) {
  (void)state;
  lcp_world_settings_t s = lcp_world_settings_default();
  assert_int_equal(s.iterations, 20);
  lcp_world_t *w = test_create_world(&s);
  test_add_plane(w, 0.6, NULL);
  lcp_geom_def_t cube = test_box_def(0.5, 0.5, 0.5, 0.6);
  lcp_body_id top = LCP_NULL_ID;
  for (int k = 0; k < 20; ++k)
    top = test_add_solid(w, &cube, 1.0, (double[]){0.0, 0.0, 0.5 + k}, NULL);
  double start[3], end[3];
  lcp_body_get_pose(w, top, start, NULL);
  test_step_n(w, (int)(10.0 / s.timestep));
  lcp_body_get_pose(w, top, end, NULL);
  double drift = test_dist3(start, end);
  print_message("stack of 20 unit cubes: top drift %.2f mm after 10 s\n", 1e3 * drift);
  assert_true(drift < 0.01);
  lcp_world_destroy(&w);
}

/* The L = 20 pyramid of the benchmark (480 steps, h = 1/240 s, 20
 * iterations): its top cube drifts no more than the 2.1 mm it drifted
 * before the push-out bound, the relax iterations and speculative contacts
 * (to 0.1 mm). */
static void test_pyramid_drift_no_worse(void **state) {
  (void)state;
  lcp_world_settings_t s = lcp_scene_settings();
  lcp_world_t *w = test_create_world(&s);
  lcp_scene_info_t info;
  assert_int_equal(lcp_scene_pyramid(w, 20, &info), LCP_OK);
  test_step_n(w, info.default_steps);
  double end[3];
  lcp_body_get_pose(w, info.top_body, end, NULL);
  double drift = test_dist3(info.top_position, end);
  print_message("pyramid 20: top drift %.2f mm after %d steps\n", 1e3 * drift, info.default_steps);
  assert_true(drift < 0.0022);
  lcp_world_destroy(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_deep_in_ground_rises_and_rests),
      cmocka_unit_test(test_quadruped_deep_in_ground_under_pd),
      cmocka_unit_test(test_quadruped_deep_in_ground_limp),
      cmocka_unit_test(test_drop_on_thin_plate_plastic),
      cmocka_unit_test(test_drop_on_thin_plate_restitution),
      cmocka_unit_test(test_stack_of_twenty_unit_cubes_stands),
      cmocka_unit_test(test_pyramid_drift_no_worse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
