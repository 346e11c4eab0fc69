/* SPDX-License-Identifier: Apache-2.0 */
/* Sensors (lcpsim/robot.h, "sensors"): an IMU at rest reads +g up and no
 * rate, on a spinning link the rate and the centripetal specific force, in
 * free fall nothing; the joint reaction of a hanging and of a held link is
 * its weight and the moment of it; a standing quadruped's foot normal forces
 * carry its weight; a box at rest on a slope gets its weight back from its
 * contacts' normal and friction forces; energies follow their formulas; IMU
 * noise is a function of the seed and the state. */
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
#include <stdlib.h>
#include <string.h>

#define G 9.81

/* A fixed base (a 1 kg cube at base_z) and one link of mass `mass` with its
 * centre of mass at `com` in its frame, on a joint of type `type` about
 * `axis` at the base origin. */
static lcp_robot_def_t *one_link_robot(lcp_joint_type_t type, const double axis[3], double mass,
                                       const double com[3]) {
  lcp_robot_def_t *def = NULL;
  assert_int_equal(lcp_robot_def_alloc(2, 0, &def), LCP_OK);
  strcpy(def->name, "arm");
  strcpy(def->links[0].name, "base");
  def->links[0].inertia[0] = def->links[0].inertia[4] = def->links[0].inertia[8] = 1.0 / 6.0;
  lcp_link_def_t *l = &def->links[1];
  strcpy(l->name, "link");
  strcpy(l->joint_name, "joint");
  l->parent = 0;
  l->joint_type = type;
  memcpy(l->axis, axis, sizeof l->axis);
  l->mass = mass;
  memcpy(l->com, com, sizeof l->com);
  /* anisotropic, with a product of inertia, so that ω × I ω is not zero */
  l->inertia[0] = 0.02, l->inertia[4] = 0.05, l->inertia[8] = 0.04;
  l->inertia[2] = l->inertia[6] = 0.01;
  return def;
}

static lcp_world_t *new_world(void) {
  lcp_world_t *w = NULL;
  lcp_world_settings_t s = lcp_world_settings_default();
  s.gravity[2] = -G;
  assert_int_equal(lcp_world_create(&s, &w), LCP_OK);
  return w;
}

static lcp_robot_id add_robot(lcp_world_t *w, lcp_robot_def_t *def, double z) {
  const double p[3] = {0.3, -0.2, z}, q[4] = {1, 0, 0, 0};
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(w, def, p, q, &id), LCP_OK);
  lcp_robot_def_free(&def);
  return id;
}

static lcp_imu_id add_imu(lcp_world_t *w, lcp_robot_id robot, int32_t link, const double pos[3],
                          const double rpy[3]) {
  lcp_imu_def_t imu = lcp_imu_def_default();
  imu.robot = robot;
  imu.link = link;
  memcpy(imu.position, pos, sizeof imu.position);
  lcp_quat_from_rpy(rpy, imu.orientation);
  lcp_imu_id id;
  assert_int_equal(lcp_imu_add(w, &imu, &id), LCP_OK);
  return id;
}

static void test_imu_at_rest(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double z_axis[3] = {0, 0, 1}, com[3] = {0.2, 0.1, 0.0};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_CONTINUOUS, z_axis, 2.0, com), 1.0);
  const double at[3] = {0.4, 0.1, 0.05}, level[3] = {0, 0, 0}, turned[3] = {0.3, -0.5, 1.1};
  lcp_imu_id flat = add_imu(w, r, 1, at, level), tilted = add_imu(w, r, 1, at, turned);
  for (int i = 0; i < 200; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double f[3], rate[3];
  assert_int_equal(lcp_imu_read(w, flat, f, rate), LCP_OK);
  ASSERT_NEAR(f[0], 0.0, 1e-6);
  ASSERT_NEAR(f[1], 0.0, 1e-6);
  ASSERT_NEAR(f[2], G, 1e-6);
  for (int k = 0; k < 3; ++k)
    ASSERT_NEAR(rate[k], 0.0, 1e-6);
  /* a turned site reads the same specific force in its own axes: Rᵀ (0, 0, g) */
  double q[4], up[3] = {0, 0, G}, expected[3];
  lcp_quat_from_rpy(turned, q);
  double q_inv[4] = {q[0], -q[1], -q[2], -q[3]};
  lcp_quat_rotate(q_inv, up, expected);
  assert_int_equal(lcp_imu_read(w, tilted, f, rate), LCP_OK);
  for (int k = 0; k < 3; ++k) {
    ASSERT_NEAR(f[k], expected[k], 1e-6);
    ASSERT_NEAR(rate[k], 0.0, 1e-6);
  }
  lcp_world_destroy(&w);
}

/* A link spinning at ω about the vertical: the IMU reads ω about its z and,
 * r from the axis, the centripetal ω² r inward plus g up; the link's local
 * twist and its acceleration say the same. */
static void test_imu_spinning(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double z_axis[3] = {0, 0, 1}, com[3] = {0.25, 0.05, 0.02};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_CONTINUOUS, z_axis, 3.0, com), 1.0);
  const double at[3] = {0.3, 0.0, 0.1}, level[3] = {0, 0, 0};
  lcp_imu_id imu = add_imu(w, r, 1, at, level);
  const double omega = 4.0;
  double qd[1] = {omega};
  assert_int_equal(lcp_robot_set_qd(w, r, qd, 1), LCP_OK);
  for (int i = 0; i < 333; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double f[3], rate[3];
  assert_int_equal(lcp_imu_read(w, imu, f, rate), LCP_OK);
  ASSERT_NEAR(rate[0], 0.0, 1e-6);
  ASSERT_NEAR(rate[1], 0.0, 1e-6);
  ASSERT_NEAR(rate[2], omega, 1e-6);
  /* in the site's axes (the link's) the centre is at −x: ω² r toward it */
  ASSERT_NEAR(f[0], -omega * omega * 0.3, 1e-6);
  ASSERT_NEAR(f[1], 0.0, 1e-6);
  ASSERT_NEAR(f[2], G, 1e-6);
  double v[3], wl[3];
  assert_int_equal(lcp_robot_get_link_velocity_local(w, r, 1, v, wl), LCP_OK);
  ASSERT_NEAR(wl[2], omega, 1e-9);
  ASSERT_NEAR(v[0] * v[0] + v[1] * v[1] + v[2] * v[2], 0.0, 1e-18); /* the origin is on the axis */
  double acc[12];
  assert_int_equal(lcp_robot_get_link_accelerations(w, r, acc, 2), LCP_OK);
  for (int k = 0; k < 6; ++k)
    ASSERT_NEAR(acc[6 + k], 0.0, 1e-6); /* no angular acceleration, origin on the axis */
  /* The joint holds the link on its circle: F = m (ω × (ω × c) − g) and,
   * about the joint's origin, τ = ω × I ω + c × F (world axes: I = R I_c Rᵀ,
   * c = R c_local). */
  double position[3], q[4], R[9];
  assert_int_equal(lcp_robot_get_link_pose(w, r, 1, position, q), LCP_OK);
  lcp_quat_to_matrix(q, R);
  mat3 Rm = m3_from(R);
  vec3 c = m3_mulv(&Rm, v3_from(com)), wv = v3(0.0, 0.0, omega);
  const double inertia[9] = {0.02, 0, 0.01, 0, 0.05, 0, 0.01, 0, 0.04};
  mat3 I_local = m3_from(inertia), I = m3_rotate_tensor(&Rm, &I_local);
  vec3 F = v3_scale(v3_sub(v3_cross(wv, v3_cross(wv, c)), v3(0.0, 0.0, -G)), 3.0);
  vec3 tau = v3_add(v3_cross(wv, m3_mulv(&I, wv)), v3_cross(c, F));
  double wrench[12];
  assert_int_equal(lcp_robot_get_joint_wrenches(w, r, wrench, 2), LCP_OK);
  ASSERT_VEC_NEAR(v3_from(wrench + 6), F, 1e-6);
  ASSERT_VEC_NEAR(v3_from(wrench + 9), tau, 1e-6);
  lcp_world_destroy(&w);
}

/* A floating chain falling freely with its joints at rest: every link
 * accelerates at g, and an IMU on it reads nothing. */
static void test_free_fall(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double y_axis[3] = {0, 1, 0}, com[3] = {0.3, 0.0, 0.0};
  lcp_robot_def_t *def = one_link_robot(LCP_JOINT_CONTINUOUS, y_axis, 1.5, com);
  def->floating_base = true;
  lcp_robot_id r = add_robot(w, def, 10.0);
  const double at[3] = {0.5, 0.1, 0.0}, rpy[3] = {0.2, 0.4, 0.6};
  lcp_imu_id imu = add_imu(w, r, 1, at, rpy);
  for (int i = 0; i < 50; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double acc[12];
  assert_int_equal(lcp_robot_get_link_accelerations(w, r, acc, 2), LCP_OK);
  for (int l = 0; l < 2; ++l) {
    ASSERT_NEAR(acc[6 * l + 0], 0.0, 1e-9);
    ASSERT_NEAR(acc[6 * l + 1], 0.0, 1e-9);
    ASSERT_NEAR(acc[6 * l + 2], -G, 1e-9);
    for (int k = 3; k < 6; ++k)
      ASSERT_NEAR(acc[6 * l + k], 0.0, 1e-9);
  }
  double f[3], rate[3];
  assert_int_equal(lcp_imu_read(w, imu, f, rate), LCP_OK);
  for (int k = 0; k < 3; ++k) {
    ASSERT_NEAR(f[k], 0.0, 1e-9);
    ASSERT_NEAR(rate[k], 0.0, 1e-9);
  }
  lcp_world_destroy(&w);
}

/* The link's weight m g and its moment c × (−m g) about the joint (the
 * link frame's origin), world axes: what the parent must give it. */
static void expect_weight(const double wrench[6], double m, const double c[3]) {
  const double F[3] = {0.0, 0.0, m * G};
  ASSERT_NEAR(wrench[0], F[0], 1e-6);
  ASSERT_NEAR(wrench[1], F[1], 1e-6);
  ASSERT_NEAR(wrench[2], F[2], 1e-6);
  ASSERT_NEAR(wrench[3], c[1] * F[2] - c[2] * F[1], 1e-6);
  ASSERT_NEAR(wrench[4], c[2] * F[0] - c[0] * F[2], 1e-6);
  ASSERT_NEAR(wrench[5], c[0] * F[1] - c[1] * F[0], 1e-6);
}

static void test_joint_wrench_hanging(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double y_axis[3] = {0, 1, 0}, below[3] = {0.0, 0.0, -0.5};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_CONTINUOUS, y_axis, 2.0, below), 1.0);
  for (int i = 0; i < 100; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double wrench[12];
  assert_int_equal(lcp_robot_get_joint_wrenches(w, r, wrench, 2), LCP_OK);
  expect_weight(wrench + 6, 2.0, below);
  /* the world holds up the base and the link: 3 kg */
  ASSERT_NEAR(wrench[2], 3.0 * G, 1e-6);
  lcp_world_destroy(&w);
}

/* A swinging link accelerates; once its state is set by hand, the last step's acceleration no
 * longer belongs to it: qdd reads zero, and a level IMU at the joint reads g up, until the next
 * step measures a new one. */
static void test_set_state_clears_accelerations(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double y_axis[3] = {0, 1, 0}, out[3] = {0.5, 0.0, 0.0}, origin[3] = {0, 0, 0},
               level[3] = {0, 0, 0};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_REVOLUTE, y_axis, 2.0, out), 1.0);
  lcp_imu_id imu = add_imu(w, r, 1, origin, level);
  for (int i = 0; i < 10; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double qdd[1];
  assert_int_equal(lcp_robot_get_qdd(w, r, qdd, 1), LCP_OK);
  assert_true(fabs(qdd[0]) > 1.0); /* falling from horizontal: about 3g/(2L) */
  const double q[1] = {0.0}, qd[1] = {0.0};
  assert_int_equal(lcp_robot_set_state(w, r, q, 1, qd, 1), LCP_OK);
  assert_int_equal(lcp_robot_get_qdd(w, r, qdd, 1), LCP_OK);
  assert_true(qdd[0] == 0.0);
  double f[3], rate[3];
  assert_int_equal(lcp_imu_read(w, imu, f, rate), LCP_OK);
  for (int k = 0; k < 3; ++k) {
    ASSERT_NEAR(f[k], k == 2 ? G : 0.0, 1e-9);
    ASSERT_NEAR(rate[k], 0.0, 1e-12);
  }
  assert_int_equal(lcp_world_step(w), LCP_OK);
  assert_int_equal(lcp_robot_get_qdd(w, r, qdd, 1), LCP_OK);
  assert_true(fabs(qdd[0]) > 1.0);
  lcp_world_destroy(&w);
}

/* A link held level by its joint's controller: the reaction is its weight
 * and the moment of it, whose part along the axis is the controller's
 * torque. */
static void test_joint_wrench_held(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double y_axis[3] = {0, 1, 0}, out[3] = {0.5, 0.1, 0.05};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_REVOLUTE, y_axis, 2.0, out), 1.0);
  lcp_joint_control_t c = lcp_joint_control_default();
  c.mode = LCP_CONTROL_POSITION;
  c.kp = 2000.0;
  c.kd = 100.0;
  assert_int_equal(lcp_robot_set_joint_control(w, r, 0, &c), LCP_OK);
  for (int i = 0; i < 4000; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double wrench[12], tau;
  assert_int_equal(lcp_robot_get_joint_wrenches(w, r, wrench, 2), LCP_OK);
  double q[1];
  assert_int_equal(lcp_robot_get_q(w, r, q, 1), LCP_OK);
  /* the centre of mass in world axes, turned by the small sag q about y */
  const double c_world[3] = {out[0] * cos(q[0]) + out[2] * sin(q[0]), out[1],
                             -out[0] * sin(q[0]) + out[2] * cos(q[0])};
  expect_weight(wrench + 6, 2.0, c_world);
  assert_int_equal(lcp_robot_get_applied_torques(w, r, &tau, 1), LCP_OK);
  ASSERT_NEAR(wrench[6 + 4], tau, 1e-6);
  lcp_world_destroy(&w);
}

/* Standing on its four feet under PD, the quadruped's contact normal
 * forces add up to its weight; the floating base's own reaction is ~0. */
static void test_quadruped_normals_carry_weight(void **state) {
  (void)state;
  lcp_world_t *w = NULL;
  lcp_world_settings_t s = lcp_scene_robot_settings();
  assert_int_equal(lcp_world_create(&s, &w), LCP_OK);
  lcp_robot_scene_t scene;
  assert_int_equal(lcp_scene_quadruped(w, 300.0, 10.0, 0.002, &scene), LCP_OK);
  for (int i = 0; i < 3000; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(w, scene.robot, &info), LCP_OK);
  double *M = test_doubles(info.nv * info.nv);
  assert_int_equal(lcp_robot_mass_matrix(w, scene.robot, M, info.nv), LCP_OK);
  double weight = M[0] * -s.gravity[2]; /* M's first entry is the total mass */
  double *wrenches = test_doubles(12 * info.link_count);
  assert_int_equal(lcp_robot_get_contact_wrenches(w, scene.robot, wrenches, info.link_count),
                   LCP_OK);
  double total = 0.0, feet = 0.0;
  for (int32_t l = 0; l < info.link_count; ++l)
    total += wrenches[12 * l + 2];
  for (int32_t k = 0; k < scene.foot_count; ++k)
    feet += wrenches[12 * scene.foot_link[k] + 2];
  print_message("quadruped: weight %.6f N, normal forces %.6f N (feet %.6f N)\n", weight, total,
                feet);
  ASSERT_NEAR(feet, weight, 0.005 * weight);
  ASSERT_NEAR(total, feet, 1e-12);
  double *joint = test_doubles(6 * info.link_count);
  assert_int_equal(lcp_robot_get_joint_wrenches(w, scene.robot, joint, info.link_count), LCP_OK);
  ASSERT_NEAR(joint[2], 0.0, 0.005 * weight);
  free(M);
  free(wrenches);
  free(joint);
  lcp_world_destroy(&w);
}

/* A box at rest on a 0.2 rad slope (μ = 0.8 holds it): its contacts'
 * normal and friction forces add up to its weight, the friction along the
 * slope, the normal force m g cos θ. */
static void test_box_on_slope(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double theta = 0.2;
  lcp_geom_def_t plane = lcp_geom_def_default();
  plane.type = LCP_SHAPE_PLANE;
  const double tilt[3] = {theta, 0.0, 0.0};
  lcp_quat_from_rpy(tilt, plane.local_orientation);
  plane.friction = 0.8;
  assert_int_equal(lcp_geom_add(w, LCP_WORLD_BODY, &plane, NULL), LCP_OK);
  lcp_body_def_t bd = lcp_body_def_default();
  bd.mass = 2.0;
  bd.position[2] = 0.1 / cos(theta) + 0.001;
  memcpy(bd.orientation, plane.local_orientation, sizeof bd.orientation);
  lcp_body_id box;
  assert_int_equal(lcp_body_add(w, &bd, &box), LCP_OK);
  lcp_geom_def_t g = lcp_geom_def_default();
  g.type = LCP_SHAPE_BOX;
  g.half_extents[0] = g.half_extents[1] = g.half_extents[2] = 0.1;
  g.friction = 0.8;
  assert_int_equal(lcp_geom_add(w, box, &g, NULL), LCP_OK);
  for (int i = 0; i < 600; ++i)
    assert_int_equal(lcp_world_step(w), LCP_OK);
  double normal[6], friction[6];
  assert_int_equal(lcp_body_get_contact_wrench(w, box, normal, friction), LCP_OK);
  double weight = 2.0 * G;
  print_message("slope: normal (%.6f %.6f %.6f) friction (%.6f %.6f %.6f)\n", normal[0], normal[1],
                normal[2], friction[0], friction[1], friction[2]);
  ASSERT_NEAR(normal[0] + friction[0], 0.0, 1e-3 * weight);
  ASSERT_NEAR(normal[1] + friction[1], 0.0, 1e-3 * weight);
  ASSERT_NEAR(normal[2] + friction[2], weight, 1e-3 * weight);
  double n_len = sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
  double f_len =
      sqrt(friction[0] * friction[0] + friction[1] * friction[1] + friction[2] * friction[2]);
  ASSERT_NEAR(n_len, weight * cos(theta), 1e-3 * weight);
  ASSERT_NEAR(f_len, weight * sin(theta), 1e-3 * weight);
  /* each contact's friction vector is tangential */
  lcp_contact_info_t contacts[8];
  int32_t n = lcp_world_get_contacts(w, contacts, 8);
  assert_true(n > 0 && n <= 8);
  for (int32_t k = 0; k < n; ++k) {
    double f[3];
    lcp_contact_friction_vector(&contacts[k], f);
    const double *nn = contacts[k].normal;
    ASSERT_NEAR(f[0] * nn[0] + f[1] * nn[1] + f[2] * nn[2], 0.0, 1e-12);
  }
  lcp_world_destroy(&w);
}

static void test_energy(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  lcp_body_def_t bd = lcp_body_def_default();
  bd.mass = 3.0;
  bd.inertia[0] = 0.1, bd.inertia[4] = 0.2, bd.inertia[8] = 0.3;
  bd.position[0] = 1.0, bd.position[2] = 2.0;
  const double rpy[3] = {0.3, 0.2, 0.1};
  lcp_quat_from_rpy(rpy, bd.orientation);
  bd.linear_velocity[0] = 1.0, bd.linear_velocity[1] = -2.0;
  bd.angular_velocity[2] = 3.0;
  lcp_body_id b;
  assert_int_equal(lcp_body_add(w, &bd, &b), LCP_OK);
  double kinetic, potential;
  assert_int_equal(lcp_body_get_energy(w, b, &kinetic, &potential), LCP_OK);
  /* ω about world z in body axes: Rᵀ e_z, the third row of R */
  double R[9];
  lcp_quat_to_matrix(bd.orientation, R);
  double wb[3] = {3.0 * R[6], 3.0 * R[7], 3.0 * R[8]};
  double rot = 0.5 * (0.1 * wb[0] * wb[0] + 0.2 * wb[1] * wb[1] + 0.3 * wb[2] * wb[2]);
  ASSERT_NEAR(kinetic, 0.5 * 3.0 * 5.0 + rot, 1e-12);
  ASSERT_NEAR(potential, 3.0 * G * 2.0, 1e-12);
  /* a robot at rest: potential of its two masses, the base's at its origin */
  const double y_axis[3] = {0, 1, 0}, below[3] = {0.0, 0.0, -0.5};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_CONTINUOUS, y_axis, 2.0, below), 1.0);
  assert_int_equal(lcp_robot_get_energy(w, r, &kinetic, &potential), LCP_OK);
  ASSERT_NEAR(kinetic, 0.0, 1e-12);
  ASSERT_NEAR(potential, 1.0 * G * 1.0 + 2.0 * G * 0.5, 1e-12);
  double qd[1] = {2.0};
  assert_int_equal(lcp_robot_set_qd(w, r, qd, 1), LCP_OK);
  assert_int_equal(lcp_robot_get_energy(w, r, &kinetic, &potential), LCP_OK);
  /* ½ (I_yy + m d²) q̇² */
  ASSERT_NEAR(kinetic, 0.5 * (0.05 + 2.0 * 0.25) * 4.0, 1e-12);
  lcp_world_destroy(&w);
}

/* Noise is a function of seed and state: two worlds read the same, another
 * seed reads otherwise, a restored snapshot reads again what it read; over
 * many steps the noise has the given mean (the bias) and deviation. */
static void test_imu_noise_deterministic(void **state) {
  (void)state;
  const double z_axis[3] = {0, 0, 1}, com[3] = {0.2, 0.0, 0.0};
  lcp_world_t *w[3];
  lcp_imu_id imu[3];
  for (int k = 0; k < 3; ++k) {
    w[k] = new_world();
    lcp_robot_id r = add_robot(w[k], one_link_robot(LCP_JOINT_CONTINUOUS, z_axis, 1.0, com), 1.0);
    lcp_imu_def_t def = lcp_imu_def_default();
    def.robot = r;
    def.link = 1;
    def.accel_noise = 0.05;
    def.gyro_noise = 0.01;
    def.accel_bias[0] = 0.2;
    def.gyro_bias[2] = -0.03;
    def.seed = k < 2 ? 42 : 43;
    strcpy(def.name, "imu");
    assert_int_equal(lcp_imu_add(w[k], &def, &imu[k]), LCP_OK);
    assert_int_equal(lcp_imu_add(w[k], &def, NULL), LCP_ERR_INVALID_ARGUMENT); /* name taken */
  }
  const int n = 4000;
  double sum[6] = {0}, sum2[6] = {0};
  size_t size = lcp_world_state_size(w[0]);
  void *snapshot = test_alloc(size, 1);
  double kept_f[3], kept_rate[3];
  for (int i = 0; i < n; ++i) {
    double f[3][3], rate[3][3];
    for (int k = 0; k < 3; ++k) {
      assert_int_equal(lcp_world_step(w[k]), LCP_OK);
      assert_int_equal(lcp_imu_read(w[k], imu[k], f[k], rate[k]), LCP_OK);
    }
    assert_memory_equal(f[0], f[1], sizeof f[0]);
    assert_memory_equal(rate[0], rate[1], sizeof rate[0]);
    assert_true(f[0][0] != f[2][0] && rate[0][1] != rate[2][1]);
    if (i == 100) {
      assert_int_equal(lcp_world_save_state(w[0], snapshot, size, NULL), LCP_OK);
      memcpy(kept_f, f[0], sizeof kept_f);
      memcpy(kept_rate, rate[0], sizeof kept_rate);
    }
    const double expected[6] = {0.0, 0.0, G, 0.0, 0.0, 0.0};
    for (int k = 0; k < 6; ++k) {
      double e = (k < 3 ? f[0][k] : rate[0][k - 3]) - expected[k];
      sum[k] += e;
      sum2[k] += e * e;
    }
  }
  const double bias[6] = {0.2, 0.0, 0.0, 0.0, 0.0, -0.03};
  for (int k = 0; k < 6; ++k) {
    double sigma = k < 3 ? 0.05 : 0.01;
    double mean = sum[k] / n, deviation = sqrt(sum2[k] / n - mean * mean);
    /* the mean of n draws is within 5 standard errors of the bias */
    ASSERT_NEAR(mean, bias[k], 5.0 * sigma / sqrt(n));
    ASSERT_NEAR(deviation, sigma, 0.1 * sigma);
  }
  assert_int_equal(lcp_world_restore_state(w[0], snapshot, size), LCP_OK);
  double f[3], rate[3];
  assert_int_equal(lcp_imu_read(w[0], imu[0], f, rate), LCP_OK);
  assert_memory_equal(f, kept_f, sizeof f);
  assert_memory_equal(rate, kept_rate, sizeof rate);
  free(snapshot);
  for (int k = 0; k < 3; ++k)
    lcp_world_destroy(&w[k]);
}

static void test_imu_bad_input(void **state) {
  (void)state;
  lcp_world_t *w = new_world();
  const double z_axis[3] = {0, 0, 1}, com[3] = {0.2, 0.0, 0.0};
  lcp_robot_id r = add_robot(w, one_link_robot(LCP_JOINT_CONTINUOUS, z_axis, 1.0, com), 1.0);
  lcp_imu_def_t def = lcp_imu_def_default();
  assert_int_equal(lcp_imu_add(w, &def, NULL), LCP_ERR_NOT_FOUND);
  def.robot = r;
  def.link = 2;
  assert_int_equal(lcp_imu_add(w, &def, NULL), LCP_ERR_INVALID_ARGUMENT);
  def.link = 1;
  def.accel_noise = -1.0;
  assert_int_equal(lcp_imu_add(w, &def, NULL), LCP_ERR_INVALID_ARGUMENT);
  def.accel_noise = 0.0;
  def.orientation[0] = 0.0;
  assert_int_equal(lcp_imu_add(w, &def, NULL), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_world_imu_count(w), 0);
  def.orientation[0] = 1.0;
  lcp_imu_id id;
  assert_int_equal(lcp_imu_add(w, &def, &id), LCP_OK);
  assert_int_equal(lcp_robot_remove(w, r), LCP_OK);
  double f[3], rate[3];
  assert_int_equal(lcp_imu_read(w, id, f, rate), LCP_ERR_NOT_FOUND);
  lcp_world_destroy(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_imu_at_rest),
      cmocka_unit_test(test_imu_spinning),
      cmocka_unit_test(test_free_fall),
      cmocka_unit_test(test_joint_wrench_hanging),
      cmocka_unit_test(test_joint_wrench_held),
      cmocka_unit_test(test_set_state_clears_accelerations),
      cmocka_unit_test(test_quadruped_normals_carry_weight),
      cmocka_unit_test(test_box_on_slope),
      cmocka_unit_test(test_energy),
      cmocka_unit_test(test_imu_noise_deterministic),
      cmocka_unit_test(test_imu_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
