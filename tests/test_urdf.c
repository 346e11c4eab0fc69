/* SPDX-License-Identifier: Apache-2.0 */
/* URDF and STL loading (server/model/urdf.c, stl.c): the shipped robots, values
 * read back exactly, fixed-joint merging, meshes, package://, base selection,
 * and broken files, each with its file, line and cause. */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "lcpsim/urdf.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ASSERT_CONTAINS(haystack, needle)                                                          \
  do {                                                                                             \
    if (!strstr((haystack), (needle)))                                                             \
      fail_msg("'%s' does not contain '%s'", (haystack), (needle));                                \
  } while (0)

static void path_of(char *buf, size_t size, const char *dir, const char *name) {
  snprintf(buf, size, "%s/%s", dir, name);
}

static lcp_robot_def_t *load_ok(const char *dir, const char *name, int floating) {
  char path[512], err[512];
  path_of(path, sizeof path, dir, name);
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.floating_base = floating;
  lcp_robot_def_t *def = NULL;
  int rc = lcp_urdf_load_file(path, &opt, &def, err, sizeof err);
  if (rc != LCP_OK)
    fail_msg("%s: %d %s", name, rc, err);
  assert_non_null(def);
  return def;
}

static int32_t movable_joints(const lcp_robot_def_t *def) {
  int32_t n = 0;
  for (int32_t i = 1; i < def->link_count; ++i)
    n += def->links[i].joint_type != LCP_JOINT_FIXED;
  return n;
}

static int32_t find_link(const lcp_robot_def_t *def, const char *name) {
  for (int32_t i = 0; i < def->link_count; ++i)
    if (strcmp(def->links[i].name, name) == 0)
      return i;
  fail_msg("no link '%s'", name);
  return -1;
}

static void assert_parents_first(const lcp_robot_def_t *def) {
  assert_int_equal(def->links[0].parent, -1);
  int32_t geoms = 0;
  for (int32_t i = 1; i < def->link_count; ++i) {
    assert_true(def->links[i].parent >= 0 && def->links[i].parent < i);
  }
  for (int32_t i = 0; i < def->link_count; ++i) {
    assert_int_equal(def->links[i].first_geom, geoms);
    geoms += def->links[i].geom_count;
  }
  assert_int_equal(geoms, def->geom_count);
}

/* ---- small kinematics for the standing pose ---- */

static void qmul(const double a[4], const double b[4], double o[4]) {
  double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(o, r, sizeof r);
}

static void qrot(const double q[4], const double v[3], double o[3]) {
  double p[4] = {0.0, v[0], v[1], v[2]}, c[4] = {q[0], -q[1], -q[2], -q[3]}, t[4];
  qmul(q, p, t);
  qmul(t, c, t);
  o[0] = t[1], o[1] = t[2], o[2] = t[3];
}

/* Link frames in the base frame for joint values q (one per movable joint,
 * in link order). */
static void forward_kinematics(const lcp_robot_def_t *def, const double *q, double (*pos)[3],
                               double (*rot)[4]) {
  pos[0][0] = pos[0][1] = pos[0][2] = 0.0;
  rot[0][0] = 1.0, rot[0][1] = rot[0][2] = rot[0][3] = 0.0;
  int32_t k = 0;
  for (int32_t i = 1; i < def->link_count; ++i) {
    const lcp_link_def_t *l = &def->links[i];
    double o[3], r[4];
    qrot(rot[l->parent], l->origin_position, o);
    qmul(rot[l->parent], l->origin_orientation, r);
    for (int c = 0; c < 3; ++c)
      pos[i][c] = pos[l->parent][c] + o[c];
    if (l->joint_type == LCP_JOINT_REVOLUTE || l->joint_type == LCP_JOINT_CONTINUOUS) {
      double a = q[k++], s = sin(0.5 * a);
      double j[4] = {cos(0.5 * a), s * l->axis[0], s * l->axis[1], s * l->axis[2]};
      qmul(r, j, rot[i]);
    } else {
      memcpy(rot[i], r, sizeof r);
    }
  }
}

/* ---- shipped robots ---- */

static void test_arm7(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_ok(LCP_TEST_ROBOTS_DIR, "arm7.urdf", 0);
  assert_string_equal(def->name, "arm7");
  assert_false(def->floating_base);
  assert_false(def->self_collision);
  assert_int_equal(def->link_count, 8);
  assert_int_equal(movable_joints(def), 7);
  assert_int_equal(def->geom_count, 8);
  assert_parents_first(def);
  assert_string_equal(def->links[0].name, "base_link");
  assert_int_equal(def->geoms[0].type, LCP_SHAPE_CYLINDER);
  ASSERT_NEAR(def->geoms[0].local_position[2], -0.05, 1e-15);
  for (int32_t i = 1; i <= 7; ++i) {
    const lcp_link_def_t *l = &def->links[i];
    assert_int_equal(l->parent, i - 1);
    assert_int_equal(l->joint_type, LCP_JOINT_REVOLUTE);
    /* Axes alternate z, y, z, ... starting with z. */
    ASSERT_NEAR(l->axis[2], i % 2 ? 1.0 : 0.0, 0.0);
    ASSERT_NEAR(l->axis[1], i % 2 ? 0.0 : 1.0, 0.0);
    ASSERT_NEAR(l->origin_position[2], i == 1 ? 0.0 : 0.3, 0.0);
    ASSERT_NEAR(l->mass, 1.0, 0.0);
    ASSERT_NEAR(l->com[2], 0.15, 0.0);
    ASSERT_NEAR(l->effort_limit, 100.0, 0.0);
    ASSERT_NEAR(l->velocity_limit, 5.0, 0.0);
    ASSERT_NEAR(l->upper, -l->lower, 0.0);
    ASSERT_NEAR(l->upper,
                i == 7  ? 175.0 * TEST_PI / 180.0
                : i % 2 ? 170.0 * TEST_PI / 180.0
                        : 2.0 * TEST_PI / 3.0,
                1e-12);
    const lcp_geom_def_t *g = &def->geoms[l->first_geom];
    assert_int_equal(l->geom_count, 1);
    assert_int_equal(g->type, LCP_SHAPE_CAPSULE);
    ASSERT_NEAR(g->radius, 0.04, 0.0);
    ASSERT_NEAR(g->half_length, 0.15, 0.0);
    ASSERT_NEAR(g->local_position[2], 0.15, 0.0);
    /* The inertia is that of the solid capsule the geom describes. */
    double m, I[9], c[3];
    assert_int_equal(lcp_geom_def_mass_properties(g, 1.0, &m, I, c), LCP_OK);
    for (int k = 0; k < 9; ++k)
      ASSERT_NEAR(l->inertia[k], I[k] / m, 1e-15);
  }
  lcp_robot_def_free(&def);
  assert_null(def);
}

static void test_quadruped(void **state) {
  (void)state;
  for (int floating = -1; floating <= 1; floating += 2) { /* as the file says, and forced */
    lcp_robot_def_t *def = load_ok(LCP_TEST_ROBOTS_DIR, "quadruped.urdf", floating);
    assert_true(def->floating_base);
    assert_int_equal(def->link_count, 13); /* the feet are merged into the calves */
    assert_int_equal(movable_joints(def), 12);
    assert_int_equal(def->geom_count, 17);
    assert_parents_first(def);
    assert_string_equal(def->links[0].name, "trunk");
    double total = 0.0;
    for (int32_t i = 0; i < def->link_count; ++i)
      total += def->links[i].mass;
    ASSERT_NEAR(total, 16.2, 1e-12);
    /* Depth first: each leg's three joints are consecutive. */
    static const char *const order[] = {"FL_hip",   "FL_thigh", "FL_calf",  "FR_hip",
                                        "FR_thigh", "FR_calf",  "RL_hip",   "RL_thigh",
                                        "RL_calf",  "RR_hip",   "RR_thigh", "RR_calf"};
    for (int i = 0; i < 12; ++i)
      assert_string_equal(def->links[i + 1].name, order[i]);
    int32_t calf = find_link(def, "FL_calf");
    ASSERT_NEAR(def->links[calf].mass, 0.55, 1e-15);
    ASSERT_NEAR(def->links[calf].com[2], (0.5 * -0.1 + 0.05 * -0.2) / 0.55, 1e-15);
    assert_int_equal(def->links[calf].geom_count, 2);
    const lcp_geom_def_t *foot = &def->geoms[def->links[calf].first_geom + 1];
    assert_int_equal(foot->type, LCP_SHAPE_SPHERE);
    ASSERT_NEAR(foot->local_position[2], -0.2, 0.0);

    /* Nominal stance (hip 0, thigh 0.8, calf -1.6): every foot right below
     * its thigh joint, the trunk origin 0.3037 m above the ground. */
    double q[12], pos[13][3], rot[13][4];
    for (int leg = 0; leg < 4; ++leg)
      q[3 * leg] = 0.0, q[3 * leg + 1] = 0.8, q[3 * leg + 2] = -1.6;
    forward_kinematics(def, q, pos, rot);
    for (int leg = 0; leg < 4; ++leg) {
      int32_t c = 3 * leg + 3, t = 3 * leg + 2;
      double f[3];
      qrot(rot[c], foot->local_position, f);
      for (int k = 0; k < 3; ++k)
        f[k] += pos[c][k];
      ASSERT_NEAR(f[0], pos[t][0], 1e-12);
      ASSERT_NEAR(f[1], pos[t][1], 1e-12);
      ASSERT_NEAR(-(f[2] - foot->radius), 0.4 * cos(0.8) + 0.025, 1e-12);
      ASSERT_NEAR(0.4 * cos(0.8) + 0.025, 0.30368, 1e-5);
      assert_true(def->links[c].lower <= -1.6 && -1.6 <= def->links[c].upper);
      assert_true(def->links[t].lower <= 0.8 && 0.8 <= def->links[t].upper);
      ASSERT_NEAR(def->links[c].effort_limit, 35.0, 0.0);
    }
    lcp_robot_def_free(&def);
  }
  lcp_robot_def_t *def = load_ok(LCP_TEST_ROBOTS_DIR, "quadruped.urdf", 0);
  assert_false(def->floating_base);
  lcp_robot_def_free(&def);
}

static void test_pendulum2(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_ok(LCP_TEST_ROBOTS_DIR, "pendulum2.urdf", 0);
  assert_false(def->floating_base);
  assert_int_equal(def->link_count, 3);
  assert_int_equal(movable_joints(def), 2);
  assert_parents_first(def);
  for (int32_t i = 1; i <= 2; ++i) {
    const lcp_link_def_t *l = &def->links[i];
    assert_int_equal(l->joint_type, LCP_JOINT_REVOLUTE);
    ASSERT_NEAR(l->axis[1], 1.0, 0.0);
    ASSERT_NEAR(l->mass, 1.0, 0.0);
    ASSERT_NEAR(l->com[2], -0.25, 0.0);
    ASSERT_NEAR(l->inertia[0], (0.04 * 0.04 + 0.25) / 12.0, 1e-15);
    ASSERT_NEAR(l->origin_position[2], i == 1 ? 0.0 : -0.5, 0.0);
  }
  lcp_robot_def_free(&def);
}

/* ---- values ---- */

static void test_values(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_ok(LCP_TEST_DATA_DIR "/urdf", "values.urdf", 0);
  assert_int_equal(def->link_count, 4);
  assert_int_equal(def->geom_count, 4);
  const lcp_link_def_t *base = &def->links[0], *arm = &def->links[1];
  /* Base: com at the inertial origin; yaw 90° swaps ixx and iyy. */
  ASSERT_NEAR(base->mass, 2.5, 0.0);
  ASSERT_NEAR(base->com[0], 0.1, 0.0);
  ASSERT_NEAR(base->com[1], 0.2, 0.0);
  ASSERT_NEAR(base->com[2], 0.3, 0.0);
  const double base_I[9] = {2, 0, 0, 0, 1, 0, 0, 0, 3};
  for (int k = 0; k < 9; ++k)
    ASSERT_NEAR(base->inertia[k], base_I[k], 1e-12);
  assert_int_equal(base->geom_count, 0); /* the visual is not a geom */

  /* The joint: rpy (0.1, 0.2, 0.3) is Rz(0.3) Ry(0.2) Rx(0.1); this quaternion
   * was computed from that matrix, independently of the loader's formula. */
  assert_string_equal(arm->name, "arm");
  assert_string_equal(arm->joint_name, "hinge");
  assert_int_equal(arm->joint_type, LCP_JOINT_REVOLUTE);
  assert_int_equal(arm->parent, 0);
  const double p[3] = {1, 2, 3};
  const double q[4] = {0.9833474432563558, 0.0342707985504821, 0.10602051106179562,
                       0.14357217502739186};
  for (int k = 0; k < 3; ++k)
    ASSERT_NEAR(arm->origin_position[k], p[k], 0.0);
  for (int k = 0; k < 4; ++k)
    ASSERT_NEAR(arm->origin_orientation[k], q[k], 1e-12);
  ASSERT_NEAR(arm->axis[0], 0.0, 0.0); /* (0 0 2) normalised */
  ASSERT_NEAR(arm->axis[2], 1.0, 0.0);
  ASSERT_NEAR(arm->lower, -1.5, 0.0);
  ASSERT_NEAR(arm->upper, 2.25, 0.0);
  ASSERT_NEAR(arm->effort_limit, 12.5, 0.0);
  ASSERT_NEAR(arm->velocity_limit, 3.5, 0.0);
  ASSERT_NEAR(arm->damping, 0.75, 0.0);
  ASSERT_NEAR(arm->friction, 0.125, 0.0);
  /* Inertia with roll 90°: R I Rᵀ, R = [[1,0,0],[0,0,-1],[0,1,0]], by hand. */
  ASSERT_NEAR(arm->mass, 1.5, 0.0);
  ASSERT_NEAR(arm->com[2], 0.5, 0.0);
  const double arm_I[9] = {0.1, -0.02, 0.01, -0.02, 0.3, -0.03, 0.01, -0.03, 0.2};
  for (int k = 0; k < 9; ++k)
    ASSERT_NEAR(arm->inertia[k], arm_I[k], 1e-12);

  /* Shapes. */
  assert_int_equal(arm->geom_count, 4);
  const lcp_geom_def_t *g = &def->geoms[arm->first_geom];
  assert_int_equal(g[0].type, LCP_SHAPE_BOX);
  ASSERT_NEAR(g[0].half_extents[0], 0.05, 0.0);
  ASSERT_NEAR(g[0].half_extents[1], 0.1, 0.0);
  ASSERT_NEAR(g[0].half_extents[2], 0.2, 0.0);
  ASSERT_NEAR(g[0].local_position[2], 0.5, 0.0);
  ASSERT_NEAR(g[0].local_orientation[0], 1.0, 0.0);
  assert_int_equal(g[1].type, LCP_SHAPE_SPHERE);
  ASSERT_NEAR(g[1].radius, 0.05, 0.0);
  assert_int_equal(g[2].type, LCP_SHAPE_CYLINDER);
  ASSERT_NEAR(g[2].radius, 0.03, 0.0);
  ASSERT_NEAR(g[2].half_length, 0.3, 0.0);
  ASSERT_NEAR(g[2].local_orientation[0], sqrt(0.5), 1e-15);
  ASSERT_NEAR(g[2].local_orientation[1], sqrt(0.5), 1e-15);
  assert_int_equal(g[3].type, LCP_SHAPE_CAPSULE);
  ASSERT_NEAR(g[3].radius, 0.02, 0.0);
  ASSERT_NEAR(g[3].half_length, 0.2, 0.0);
  ASSERT_NEAR(g[3].friction, lcp_geom_def_default().friction, 0.0);

  /* Continuous: no position limits; axis defaults to x. Prismatic: limits. */
  const lcp_link_def_t *rotor = &def->links[find_link(def, "rotor")];
  assert_int_equal(rotor->joint_type, LCP_JOINT_CONTINUOUS);
  ASSERT_NEAR(rotor->axis[0], 1.0, 0.0);
  ASSERT_NEAR(rotor->lower, 0.0, 0.0);
  ASSERT_NEAR(rotor->upper, 0.0, 0.0);
  ASSERT_NEAR(rotor->effort_limit, 4.0, 0.0);
  ASSERT_NEAR(rotor->velocity_limit, 30.0, 0.0);
  ASSERT_NEAR(rotor->damping, 0.0, 0.0);
  const lcp_link_def_t *carriage = &def->links[find_link(def, "carriage")];
  assert_int_equal(carriage->joint_type, LCP_JOINT_PRISMATIC);
  assert_int_equal(carriage->parent, 1);
  ASSERT_NEAR(carriage->axis[1], 1.0, 0.0);
  ASSERT_NEAR(carriage->lower, -0.25, 0.0);
  ASSERT_NEAR(carriage->upper, 0.5, 0.0);
  ASSERT_NEAR(carriage->origin_position[2], 1.0, 0.0);
  lcp_robot_def_free(&def);
}

/* ---- fixed joints ---- */

static void test_merge_fixed(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_ok(LCP_TEST_DATA_DIR "/urdf", "merge.urdf", 0);
  assert_int_equal(def->link_count, 2); /* base (+ sensor) and arm (+ tip) */
  const lcp_link_def_t *base = &def->links[0], *arm = &def->links[1];
  assert_string_equal(base->name, "base");
  assert_string_equal(arm->name, "arm");
  /* Sensor: 1 kg with its com at (1, 0.5, 0) in base axes (origin (1,0,0),
   * yaw 90°, com 0.5 along its x); base: 2 kg at 0. */
  ASSERT_NEAR(base->mass, 3.0, 1e-12);
  ASSERT_NEAR(base->com[0], 1.0 / 3.0, 1e-12);
  ASSERT_NEAR(base->com[1], 1.0 / 6.0, 1e-12);
  ASSERT_NEAR(base->com[2], 0.0, 1e-12);
  /* Parallel axis by hand: diag(0.1,0.2,0.3) + diag(0.02,0.01,0.03) (the
   * sensor's rotated) + reduced mass (2·1/3) × (|r|² E − r rᵀ), r = (1, 0.5, 0). */
  const double I[9] = {0.12 + 1.0 / 6.0, -1.0 / 3.0, 0.0, -1.0 / 3.0,
                       0.21 + 2.0 / 3.0, 0.0,        0.0, 0.0,
                       0.33 + 5.0 / 6.0};
  for (int k = 0; k < 9; ++k)
    ASSERT_NEAR(base->inertia[k], I[k], 1e-12);
  /* Base geoms: its own sphere, then the sensor's box moved into base frame. */
  assert_int_equal(base->geom_count, 2);
  const lcp_geom_def_t *box = &def->geoms[base->first_geom + 1];
  assert_int_equal(box->type, LCP_SHAPE_BOX);
  ASSERT_NEAR(box->local_position[0], 1.0, 1e-12);
  ASSERT_NEAR(box->local_position[1], 0.0, 1e-12);
  ASSERT_NEAR(box->local_position[2], 0.1, 1e-12);
  ASSERT_NEAR(box->local_orientation[0], sqrt(0.5), 1e-12);
  ASSERT_NEAR(box->local_orientation[3], sqrt(0.5), 1e-12);
  /* The elbow (0,1,0) in sensor frame = (1,0,0) + Rz90 (0,1,0) = (0,0,0). */
  assert_int_equal(arm->parent, 0);
  assert_string_equal(arm->joint_name, "elbow");
  ASSERT_NEAR(arm->origin_position[0], 0.0, 1e-12);
  ASSERT_NEAR(arm->origin_position[1], 0.0, 1e-12);
  ASSERT_NEAR(arm->origin_orientation[0], sqrt(0.5), 1e-12);
  ASSERT_NEAR(arm->origin_orientation[3], sqrt(0.5), 1e-12);
  /* The massless tip gives the arm its sphere, 0.5 m up, and no mass. */
  ASSERT_NEAR(arm->mass, 1.0, 0.0);
  assert_int_equal(arm->geom_count, 1);
  ASSERT_NEAR(def->geoms[arm->first_geom].local_position[2], 0.5, 0.0);
  ASSERT_NEAR(def->geoms[arm->first_geom].radius, 0.02, 0.0);
  lcp_robot_def_free(&def);

  /* keep_fixed_links: four links, the welded ones with fixed joints. */
  char path[512], err[512];
  path_of(path, sizeof path, LCP_TEST_DATA_DIR "/urdf", "merge.urdf");
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.floating_base = 0;
  opt.keep_fixed_links = true;
  assert_int_equal(lcp_urdf_load_file(path, &opt, &def, err, sizeof err), LCP_OK);
  assert_int_equal(def->link_count, 4);
  assert_parents_first(def);
  int32_t tip = find_link(def, "tip"), sensor = find_link(def, "sensor");
  assert_int_equal(def->links[tip].joint_type, LCP_JOINT_FIXED);
  ASSERT_NEAR(def->links[tip].mass, 0.0, 0.0);
  ASSERT_NEAR(def->links[sensor].mass, 1.0, 0.0);
  ASSERT_NEAR(def->links[sensor].origin_orientation[3], sqrt(0.5), 1e-15);
  assert_int_equal(def->links[find_link(def, "arm")].parent, sensor);
  lcp_robot_def_free(&def);
}

/* ---- meshes ---- */

static bool has_point(const double *p, int32_t n, double x, double y, double z) {
  for (int32_t i = 0; i < n; ++i)
    if (p[3 * i] == x && p[3 * i + 1] == y && p[3 * i + 2] == z)
      return true;
  return false;
}

static void test_mesh(void **state) {
  (void)state;
  lcp_robot_def_t *def = load_ok(LCP_TEST_DATA_DIR "/urdf", "mesh.urdf", 0);
  assert_int_equal(def->geom_count, 2);
  const lcp_geom_def_t *cube = &def->geoms[0], *tetra = &def->geoms[1];
  /* Binary cube of edge 1, scale 2: the 8 corners at ±1, each once. */
  assert_int_equal(cube->type, LCP_SHAPE_HULL);
  assert_int_equal(cube->hull_point_count, 8);
  for (int c = 0; c < 8; ++c)
    assert_true(has_point(cube->hull_points, 8, c & 1 ? 1.0 : -1.0, c & 2 ? 1.0 : -1.0,
                          c & 4 ? 1.0 : -1.0));
  /* ASCII tetrahedron, scale (1 2 3), in order of first appearance. */
  assert_int_equal(tetra->type, LCP_SHAPE_HULL);
  assert_int_equal(tetra->hull_point_count, 4);
  const double expected[12] = {0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 3};
  for (int k = 0; k < 12; ++k)
    ASSERT_NEAR(tetra->hull_points[k], expected[k], 0.0);
  ASSERT_NEAR(tetra->local_position[2], 1.0, 0.0);
  /* The hull is a real solid: mass properties of the unit-density cube. */
  double m, I[9], c[3];
  assert_int_equal(lcp_geom_def_mass_properties(cube, 1.0, &m, I, c), LCP_OK);
  ASSERT_NEAR(m, 8.0, 1e-9);
  lcp_robot_def_free(&def);
}

static void test_stl_direct(void **state) {
  (void)state;
  double *points = NULL;
  int32_t count = 0;
  char err[512];
  assert_int_equal(
      lcp_stl_load(LCP_TEST_DATA_DIR "/meshes/cube_binary.stl", &points, &count, err, sizeof err),
      LCP_OK);
  assert_int_equal(count, 8);
  assert_true(has_point(points, count, 0.5, -0.5, 0.5));
  free(points);
  assert_int_equal(
      lcp_stl_load(LCP_TEST_DATA_DIR "/meshes/nothing.stl", &points, &count, err, sizeof err),
      LCP_ERR_NOT_FOUND);
  assert_null(points);
  ASSERT_CONTAINS(err, "nothing.stl");
  /* A text file that is not STL. */
  assert_int_equal(
      lcp_stl_load(LCP_TEST_DATA_DIR "/urdf/values.urdf", &points, &count, err, sizeof err),
      LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "not an STL file");
  /* A bad number in an ASCII STL names its line. */
  char tmp[] = "/tmp/test_urdf_XXXXXX";
  int fd = mkstemp(tmp);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs("solid x\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 nan\n", f);
  fclose(f);
  assert_int_equal(lcp_stl_load(tmp, &points, &count, err, sizeof err), LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, ":5: expected a finite number, found 'nan'");
  unlink(tmp);
}

static void test_package(void **state) {
  (void)state;
  char path[512], err[512];
  path_of(path, sizeof path, LCP_TEST_DATA_DIR "/urdf", "package.urdf");
  const char *const paths[2] = {"/nonexistent/packages", LCP_TEST_DATA_DIR};
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.package_paths = paths;
  opt.package_path_count = 2;
  lcp_robot_def_t *def = NULL;
  int rc = lcp_urdf_load_file(path, &opt, &def, err, sizeof err);
  if (rc != LCP_OK)
    fail_msg("%s", err);
  assert_int_equal(def->geoms[0].type, LCP_SHAPE_HULL);
  assert_int_equal(def->geoms[0].hull_point_count, 4);
  assert_true(has_point(def->geoms[0].hull_points, 4, 0.0, 0.0, 1.0));
  lcp_robot_def_free(&def);
  /* The package directory itself as a path works too. */
  const char *const self[1] = {LCP_TEST_DATA_DIR "/meshes/"};
  opt.package_paths = self;
  opt.package_path_count = 1;
  assert_int_equal(lcp_urdf_load_file(path, &opt, &def, err, sizeof err), LCP_OK);
  lcp_robot_def_free(&def);
  /* Not in any package path; no package paths at all. */
  opt.package_paths = paths;
  opt.package_path_count = 1;
  assert_int_equal(lcp_urdf_load_file(path, &opt, &def, err, sizeof err), LCP_ERR_NOT_FOUND);
  assert_null(def);
  ASSERT_CONTAINS(err, "package.urdf:11: mesh file 'package://meshes/tetra_ascii.stl' not found: "
                       "unknown package 'meshes' (searched /nonexistent/packages (not a "
                       "directory))");
  assert_int_equal(lcp_urdf_load_file(path, NULL, &def, err, sizeof err), LCP_ERR_NOT_FOUND);
  ASSERT_CONTAINS(err, "package.urdf:11:");
  ASSERT_CONTAINS(err, "no package paths");
}

/* ---- base selection ---- */

static void test_world_link(void **state) {
  (void)state;
  /* Welded to world: fixed; world is link 0 and carries the base 0.5 m up. */
  lcp_robot_def_t *def = load_ok(LCP_TEST_DATA_DIR "/urdf", "world_fixed.urdf", -1);
  assert_false(def->floating_base);
  assert_int_equal(def->link_count, 2);
  assert_string_equal(def->links[0].name, "world");
  ASSERT_NEAR(def->links[0].mass, 3.0, 0.0);
  ASSERT_NEAR(def->links[0].com[2], 0.5, 0.0);
  ASSERT_NEAR(def->geoms[0].local_position[2], 0.5, 0.0);
  ASSERT_NEAR(def->links[1].origin_position[2], 0.5, 0.0);
  lcp_robot_def_free(&def);
  /* Asked to float: world is dropped and the welded link is the base. */
  def = load_ok(LCP_TEST_DATA_DIR "/urdf", "world_fixed.urdf", 1);
  assert_true(def->floating_base);
  assert_string_equal(def->links[0].name, "base");
  ASSERT_NEAR(def->geoms[0].local_position[2], 0.0, 0.0);
  ASSERT_NEAR(def->links[1].origin_position[2], 0.0, 0.0);
  lcp_robot_def_free(&def);
  /* A floating joint from world: floating unless told otherwise. */
  def = load_ok(LCP_TEST_DATA_DIR "/urdf", "world_floating.urdf", -1);
  assert_true(def->floating_base);
  assert_int_equal(def->link_count, 1);
  assert_string_equal(def->links[0].name, "body");
  lcp_robot_def_free(&def);
  def = load_ok(LCP_TEST_DATA_DIR "/urdf", "world_floating.urdf", 0);
  assert_false(def->floating_base);
  lcp_robot_def_free(&def);
  /* No world link: free, as the file says. */
  def = load_ok(LCP_TEST_ROBOTS_DIR, "arm7.urdf", -1);
  assert_true(def->floating_base);
  lcp_robot_def_free(&def);
}

/* ---- broken files ---- */

typedef struct broken_case {
  const char *file;
  int status;
  const char *where; /* "name.urdf:LINE:" */
  const char *what[3];
} broken_case;

static void test_broken_files(void **state) {
  (void)state;
  static const broken_case cases[] = {
      {"broken_no_mass.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_no_mass.urdf:15: ",
       {"missing inertial mass", "'l1'", NULL}},
      {"broken_joint_type.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_joint_type.urdf:15: ",
       {"unknown joint type 'ball'", "ball_joint", NULL}},
      {"broken_number.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_number.urdf:10: ",
       {"<origin> attribute 'xyz'", "'1.0abc' is not a finite number", NULL}},
      {"broken_parent.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_parent.urdf:10: ",
       {"parent link 'bsae' not found", "joint 'j1'", NULL}},
      {"broken_loop.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_loop.urdf:16: ",
       {"loop in the tree", "link 'b' is its own ancestor", "'c_b'"}},
      {"broken_two_parents.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_two_parents.urdf:14: ",
       {"link 'b' has two parents", "'a_b' (line 10)", "'base_b'"}},
      {"broken_mesh.urdf",
       LCP_ERR_NOT_FOUND,
       "broken_mesh.urdf:10: ",
       {"mesh file '", "/meshes/missing_part.stl' not found", NULL}},
      {"broken_xml.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_xml.urdf:8: ",
       {"malformed XML", "tag mismatch", "lnk"}},
      {"broken_duplicate.urdf",
       LCP_ERR_INVALID_ARGUMENT,
       "broken_duplicate.urdf:20: ",
       {"duplicate link name 'base'", "first defined at line 3", NULL}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[512], err[512] = "untouched";
    path_of(path, sizeof path, LCP_TEST_DATA_DIR "/urdf", cases[i].file);
    lcp_robot_def_t *def = (lcp_robot_def_t *)&def; /* must be reset to NULL */
    lcp_urdf_options_t opt = lcp_urdf_options_default();
    opt.floating_base = 0;
    int rc = lcp_urdf_load_file(path, &opt, &def, err, sizeof err);
    if (rc != cases[i].status)
      fail_msg("%s: status %d, expected %d (%s)", cases[i].file, rc, cases[i].status, err);
    assert_null(def);
    ASSERT_CONTAINS(err, path); /* the file as given, then the line */
    ASSERT_CONTAINS(err, cases[i].where);
    for (int k = 0; k < 3 && cases[i].what[k]; ++k)
      ASSERT_CONTAINS(err, cases[i].what[k]);
  }
  /* A missing file, and an error buffer of NULL or of size 1. */
  lcp_robot_def_t *def = NULL;
  char err[512], tiny[1] = {'x'};
  assert_int_equal(
      lcp_urdf_load_file(LCP_TEST_DATA_DIR "/urdf/absent.urdf", NULL, &def, err, sizeof err),
      LCP_ERR_NOT_FOUND);
  ASSERT_CONTAINS(err, "absent.urdf: cannot open the file (no such file)");
  assert_int_equal(
      lcp_urdf_load_file(LCP_TEST_DATA_DIR "/urdf/broken_xml.urdf", NULL, &def, NULL, 0),
      LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(
      lcp_urdf_load_file(LCP_TEST_DATA_DIR "/urdf/broken_xml.urdf", NULL, &def, tiny, sizeof tiny),
      LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(tiny[0], '\0');
}

/* libxml2 must not print: its errors come back in the message only. */
static void test_libxml_is_silent(void **state) {
  (void)state;
  fflush(stderr);
  int saved = dup(2);
  char tmp[] = "/tmp/test_urdf_stderr_XXXXXX";
  int fd = mkstemp(tmp);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  lcp_robot_def_t *def = NULL;
  char err[512];
  int rc1 =
      lcp_urdf_load_file(LCP_TEST_DATA_DIR "/urdf/broken_xml.urdf", NULL, &def, err, sizeof err);
  int rc2 = lcp_urdf_load_string("<robot name='x'><link name='a'>&undefined;</link></robot>", NULL,
                                 NULL, &def, err, sizeof err);
  int rc3 = lcp_urdf_load_string("<?xml version='1.0' encoding='no-such-encoding'?><robot/>", NULL,
                                 NULL, &def, err, sizeof err);
  int rc4 = lcp_urdf_load_string("\xff\xfe<robot/>", NULL, NULL, &def, err, sizeof err);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  off_t size = lseek(fd, 0, SEEK_END);
  close(fd);
  unlink(tmp);
  assert_int_equal(rc1, LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rc2, LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rc3, LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rc4, LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(size, 0);
}

/* ---- hardening: DOCTYPE, depth, file rules ---- */

/* URDF never needs a DOCTYPE: any is refused at its line, before the
 * internal subset is read, so no entity is ever declared or expanded; a
 * harmless one (no subset) too. */
static void test_doctype_refused(void **state) {
  (void)state;
  static const char *const documents[] = {
      "<?xml version='1.0'?>\n<!DOCTYPE robot>\n<robot name='r'><link name='a'/></robot>",
      "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY n 'a'>]>\n"
      "<robot name='r'><link name='&n;'/></robot>",
      "<?xml version='1.0'?>\n<!DOCTYPE robot SYSTEM 'file:///etc/passwd'>\n"
      "<robot name='r'><link name='a'/></robot>",
      "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>\n"
      "<robot name='&x;'><link name='a'/></robot>",
  };
  for (size_t i = 0; i < sizeof documents / sizeof documents[0]; ++i) {
    lcp_robot_def_t *def = NULL;
    char err[512];
    assert_int_equal(lcp_urdf_load_string(documents[i], NULL, NULL, &def, err, sizeof err),
                     LCP_ERR_INVALID_ARGUMENT);
    assert_null(def);
    ASSERT_CONTAINS(err, "<string>:2: a DOCTYPE is not allowed");
  }
  /* The same document without its DOCTYPE loads (a fixed base: the link
   * has no mass). */
  lcp_urdf_options_t fixed = lcp_urdf_options_default();
  fixed.floating_base = 0;
  lcp_robot_def_t *def = NULL;
  char err[512];
  assert_int_equal(lcp_urdf_load_string("<?xml version='1.0'?>\n<robot name='r'><link "
                                        "name='a'/></robot>",
                                        NULL, &fixed, &def, err, sizeof err),
                   LCP_OK);
  lcp_robot_def_free(&def);
}

/* Elements nested LCP_XML_MAX_DEPTH deep are read; one more is refused. */
static void test_depth_limit(void **state) {
  (void)state;
  for (int depth = LCP_XML_MAX_DEPTH; depth <= LCP_XML_MAX_DEPTH + 1; ++depth) {
    /* <robot> is level 1, <link> level 2, then <visual>s (ignored). */
    char doc[4096] = "<robot name='r'><link name='a'>";
    for (int i = 2; i < depth; ++i)
      strcat(doc, "<visual>");
    for (int i = 2; i < depth; ++i)
      strcat(doc, "</visual>");
    strcat(doc, "</link></robot>");
    lcp_robot_def_t *def = NULL;
    char err[512];
    lcp_urdf_options_t fixed = lcp_urdf_options_default();
    fixed.floating_base = 0;
    int rc = lcp_urdf_load_string(doc, NULL, &fixed, &def, err, sizeof err);
    if (depth == LCP_XML_MAX_DEPTH) {
      assert_int_equal(rc, LCP_OK);
      lcp_robot_def_free(&def);
    } else {
      assert_int_equal(rc, LCP_ERR_INVALID_ARGUMENT);
      ASSERT_CONTAINS(err, "<string>:1: elements nested more than 64 deep");
    }
  }
}

/* What lcp_file_read refuses, and why. */
static void test_file_rules(void **state) {
  (void)state;
  char dir[] = "/tmp/test_urdf_files_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fifo[128], empty[128], file[128], sibling[128], err[512];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(empty, sizeof empty, "%s/empty", dir);
  snprintf(file, sizeof file, "%s/a/file", dir);
  snprintf(sibling, sizeof sibling, "%s/ab", dir);
  assert_int_equal(mkfifo(fifo, 0644), 0);
  FILE *f = fopen(empty, "wb");
  assert_non_null(f);
  fclose(f);
  char a_dir[128];
  snprintf(a_dir, sizeof a_dir, "%s/a", dir);
  assert_int_equal(mkdir(a_dir, 0755), 0);
  assert_int_equal(mkdir(sibling, 0755), 0);
  f = fopen(file, "wb");
  assert_non_null(f);
  fputs("0123456789", f);
  fclose(f);
  static const struct {
    const char *path, *needle;
  } refused[] = {
      {"/dev/zero", "a character device, not a regular file"},
      {"/dev/null", "a character device, not a regular file"},
      {"/proc/self/environ", "a file of /proc or /sys"},
      {"/proc/self/pagemap", "a file of /proc or /sys"},
      {"/sys/kernel/mm/transparent_hugepage/enabled", "a file of /proc or /sys"},
      {"/tmp", "a directory, not a regular file"},
  };
  char *data = NULL;
  size_t size = 0;
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    if (access(refused[i].path, F_OK) != 0)
      continue; /* not on this machine */
    assert_int_equal(lcp_file_read(refused[i].path, NULL, 0, &data, &size, NULL, err, sizeof err),
                     LCP_ERR_INVALID_ARGUMENT);
    ASSERT_CONTAINS(err, refused[i].needle);
    assert_null(data);
  }
  assert_int_equal(lcp_file_read(fifo, NULL, 0, &data, &size, NULL, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "a FIFO, not a regular file");
  assert_int_equal(lcp_file_read(empty, NULL, 0, &data, &size, NULL, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "an empty file (0 bytes)");
  assert_int_equal(lcp_file_read(file, NULL, 9, &data, &size, NULL, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "larger than the 9 bytes");
  /* Confined below dir/a: the file by absolute and relative path; not
   * dir/ab (a string prefix of nothing here, but a sibling), not a path
   * out through "..", and one message for missing and outside. */
  const char *roots[] = {a_dir};
  lcp_file_rules_t rules = {roots, 1, true};
  char *resolved = NULL;
  assert_int_equal(lcp_file_read(file, &rules, 0, &data, &size, &resolved, err, sizeof err),
                   LCP_OK);
  assert_int_equal(size, 10);
  assert_string_equal(data, "0123456789");
  free(data);
  free(resolved);
  assert_int_equal(lcp_file_read("file", &rules, 0, &data, &size, NULL, err, sizeof err), LCP_OK);
  free(data);
  char escape[256], sibling_file[256];
  snprintf(escape, sizeof escape, "%s/../empty", a_dir);
  snprintf(sibling_file, sizeof sibling_file, "%s/x", sibling);
  f = fopen(sibling_file, "wb");
  assert_non_null(f);
  fputs("x", f);
  fclose(f);
  const char *roots_a[] = {a_dir};
  /* A root written as a prefix of the sibling: dir/a does not hold dir/ab/x. */
  lcp_file_rules_t prefix_rules = {roots_a, 1, true};
  const char *outside[] = {escape, sibling_file, "/etc/passwd", "../empty", "missing", fifo};
  for (size_t i = 0; i < sizeof outside / sizeof outside[0]; ++i) {
    assert_int_equal(
        lcp_file_read(outside[i], &prefix_rules, 0, &data, &size, NULL, err, sizeof err),
        LCP_ERR_NOT_FOUND);
    char expected[512];
    snprintf(expected, sizeof expected, "%s: no such file below the model roots", outside[i]);
    ASSERT_CONTAINS(err, expected);
  }
  unlink(sibling_file);
  rmdir(sibling);
  unlink(file);
  rmdir(a_dir);
  unlink(empty);
  unlink(fifo);
  rmdir(dir);
}

/* Confined, nothing of a file is quoted: not libxml2's message (which would
 * name the entity), not the root element, not a bad value. */
static void test_confined_messages(void **state) {
  (void)state;
  char dir[] = "/tmp/test_urdf_quote_XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const struct {
    const char *text, *needle;
  } files[] = {
      {"<robot name='r'>&SECRET;</robot>", ":1: malformed XML: a reference to an undefined entity"},
      {"<SECRET/>", ":1: the root element is not <robot>"},
      {"<robot name='r'><link name='a'><inertial><mass value='SECRET'/><inertia ixx='1' iyy='1' "
       "izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link></robot>",
       ":1: <mass> attribute 'value': not a finite number"},
  };
  const char *roots[] = {dir};
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.files = (lcp_file_rules_t){roots, 1, true};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/r.urdf", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(files[i].text, f);
    fclose(f);
    lcp_robot_def_t *def = NULL;
    assert_int_equal(lcp_urdf_load_file(path, &options, &def, err, sizeof err),
                     LCP_ERR_INVALID_ARGUMENT);
    ASSERT_CONTAINS(err, files[i].needle);
    if (strstr(err, "SECRET"))
      fail_msg("'%s' quotes the file", err);
    /* Not confined (the operator's file), the detail is kept. */
    assert_int_equal(lcp_urdf_load_file(path, NULL, &def, err, sizeof err),
                     LCP_ERR_INVALID_ARGUMENT);
    ASSERT_CONTAINS(err, "SECRET");
    unlink(path);
  }
  rmdir(dir);
}

/* ---- warnings ---- */

typedef struct log_sink {
  int count;
  char text[8][256];
} log_sink;

static void collect(void *user, lcp_log_level_t level, const char *message) {
  log_sink *sink = user;
  assert_int_equal(level, LCP_LOG_WARNING);
  if (sink->count < 8)
    snprintf(sink->text[sink->count], sizeof sink->text[0], "%s", message);
  ++sink->count;
}

static void test_warnings(void **state) {
  (void)state;
  log_sink sink = {0};
  char path[512], err[512];
  path_of(path, sizeof path, LCP_TEST_DATA_DIR "/urdf", "warnings.urdf");
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.log = collect;
  opt.log_user = &sink;
  lcp_robot_def_t *def = NULL;
  assert_int_equal(lcp_urdf_load_file(path, &opt, &def, err, sizeof err), LCP_OK);
  assert_int_equal(def->link_count, 2);
  lcp_robot_def_free(&def);
  assert_int_equal(sink.count, 3);
  ASSERT_CONTAINS(sink.text[0], "warnings.urdf:14: <mimic> is not supported");
  ASSERT_CONTAINS(sink.text[1], "warnings.urdf:22: <transmission> is not supported");
  ASSERT_CONTAINS(sink.text[2], "warnings.urdf:25: <gazebo> is not supported");
  /* Without a callback the same load is quiet and fine. */
  assert_int_equal(lcp_urdf_load_file(path, NULL, &def, err, sizeof err), LCP_OK);
  lcp_robot_def_free(&def);
  /* Unknown elements are warned about too; visuals and materials are not. */
  sink.count = 0;
  opt.floating_base = 0; /* the one link is massless */
  assert_int_equal(lcp_urdf_load_string("<robot name='r'>\n<material name='m'/>\n<link name='a'>\n"
                                        "<visual/>\n<sensor/>\n</link>\n<foo/>\n</robot>",
                                        NULL, &opt, &def, err, sizeof err),
                   LCP_OK);
  lcp_robot_def_free(&def);
  assert_int_equal(sink.count, 2);
  ASSERT_CONTAINS(sink.text[0], "<string>:5: unknown element <sensor> in <link>");
  ASSERT_CONTAINS(sink.text[1], "<string>:7: unknown element <foo> in <robot>");
}

/* ---- strings, and errors read from them ---- */

/* A one-link robot (fixed base) whose link has two box collisions around
 * the given <contact> element (so it applies to geoms on either side of it),
 * and a second link welded to it with a collision of its own and no
 * <contact>; the <contact> element starts on line 4. */
static int load_contact(const char *contact, lcp_log_fn log, void *log_user, lcp_robot_def_t **def,
                        char *err, size_t size) {
  char xml[2048];
  snprintf(xml, sizeof xml,
           "<robot name='c'>\n"
           "<link name='a'>\n"
           "<collision><geometry><box size='1 1 1'/></geometry></collision>\n"
           "%s\n"
           "<collision><geometry><sphere radius='0.5'/></geometry></collision>\n"
           "</link>\n"
           "<joint name='w' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
           "<link name='b'><collision><geometry><sphere radius='0.1'/></geometry></collision>"
           "</link>\n"
           "</robot>\n",
           contact);
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.floating_base = 0;
  opt.log = log;
  opt.log_user = log_user;
  return lcp_urdf_load_string(xml, NULL, &opt, def, err, size);
}

static void expect_contact_error(const char *contact, const char *where, const char *what) {
  lcp_robot_def_t *def = NULL;
  char err[512] = "";
  int rc = load_contact(contact, NULL, NULL, &def, err, sizeof err);
  if (rc != LCP_ERR_INVALID_ARGUMENT)
    fail_msg("expected an error containing '%s', got %d '%s'", what, rc, err);
  assert_null(def);
  ASSERT_CONTAINS(err, where);
  ASSERT_CONTAINS(err, what);
}

static void test_contact(void **state) {
  (void)state;
  lcp_robot_def_t *def = NULL;
  char err[512];
  log_sink sink = {0};
  /* PyBullet's convention: lateral_friction is the geoms' μ, restitution
   * their e; both hold for all of the link's collisions and for no other
   * link's. Other children are warned about and ignored. */
  assert_int_equal(load_contact("<contact><restitution value='0.5'/>"
                                "<lateral_friction value='0.8'/>\n"
                                "<rolling_friction value='0.01'/><bogus/></contact>",
                                collect, &sink, &def, err, sizeof err),
                   LCP_OK);
  assert_int_equal(def->geom_count, 3); /* b is merged into a */
  int32_t from_a = 0;
  for (int32_t g = 0; g < def->geom_count; ++g) {
    const lcp_geom_def_t *gd = &def->geoms[g];
    if (gd->type == LCP_SHAPE_SPHERE && gd->radius == 0.1) { /* b's */
      assert_true(gd->friction == lcp_geom_def_default().friction);
      assert_true(gd->restitution == 0.0);
    } else {
      assert_true(gd->friction == 0.8);
      assert_true(gd->restitution == 0.5);
      ++from_a;
    }
  }
  assert_int_equal(from_a, 2);
  lcp_robot_def_free(&def);
  assert_int_equal(sink.count, 2);
  ASSERT_CONTAINS(sink.text[0], "<string>:5: <rolling_friction> is not supported");
  ASSERT_CONTAINS(sink.text[1], "<string>:5: unknown element <bogus> in <contact>");

  /* One of the two alone leaves the other at its default. */
  assert_int_equal(load_contact("<contact><restitution value='1'/></contact>", NULL, NULL, &def,
                                err, sizeof err),
                   LCP_OK);
  assert_true(def->geoms[0].restitution == 1.0);
  assert_true(def->geoms[0].friction == lcp_geom_def_default().friction);
  lcp_robot_def_free(&def);

  expect_contact_error("<contact><restitution value='1.5'/></contact>",
                       "<string>:4: ", "<restitution> attribute 'value' must be <= 1, not 1.5");
  expect_contact_error("<contact><restitution value='-0.1'/></contact>",
                       "<string>:4: ", "<restitution> attribute 'value' must be >= 0, not -0.1");
  expect_contact_error("<contact>\n<restitution value='nan'/></contact>", "<string>:5: ",
                       "<restitution> attribute 'value': 'nan' is not a finite number");
  expect_contact_error("<contact><lateral_friction value='-1'/></contact>",
                       "<string>:4: ", "<lateral_friction> attribute 'value' must be >= 0, not -1");
  expect_contact_error("<contact><lateral_friction/></contact>",
                       "<string>:4: ", "<lateral_friction> is missing attribute 'value'");
  expect_contact_error("<contact><restitution value='0'/><restitution value='0'/></contact>",
                       "<string>:4: ", "<contact> has a second <restitution>");
  expect_contact_error("<contact/><contact/>", "<string>:4: ", "link 'a' has a second <contact>");
}

static const char *const INERTIAL =
    "<inertial><mass value='1'/>"
    "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial>";

/* A robot "base" → joint "j" (the given type and extra joint body) → "l1",
 * with l1's body given; line 3 is the joint, line 4 the link. */
static int load_pair(const char *type, const char *joint_body, const char *link_body,
                     lcp_robot_def_t **def, char *err, size_t size) {
  char xml[2048];
  snprintf(xml, sizeof xml,
           "<robot name='pair'>\n"
           "<link name='base'>%s</link>\n"
           "<joint name='j' type='%s'><parent link='base'/><child link='l1'/>%s</joint>\n"
           "<link name='l1'>%s</link>\n"
           "</robot>\n",
           INERTIAL, type, joint_body, link_body);
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.floating_base = 0;
  return lcp_urdf_load_string(xml, NULL, &opt, def, err, size);
}

static void expect_pair_error(const char *type, const char *joint_body, const char *link_body,
                              const char *where, const char *what) {
  lcp_robot_def_t *def = NULL;
  char err[512] = "";
  int rc = load_pair(type, joint_body, link_body, &def, err, sizeof err);
  if (rc != LCP_ERR_INVALID_ARGUMENT)
    fail_msg("expected an error containing '%s', got %d '%s'", what, rc, err);
  assert_null(def);
  ASSERT_CONTAINS(err, where);
  ASSERT_CONTAINS(err, what);
}

static void test_string(void **state) {
  (void)state;
  lcp_robot_def_t *def = NULL;
  char err[512];
  const char *limit = "<limit lower='-1' upper='1' effort='1' velocity='1'/>";
  assert_int_equal(load_pair("revolute", limit, INERTIAL, &def, err, sizeof err), LCP_OK);
  assert_int_equal(def->link_count, 2);
  assert_string_equal(def->name, "pair");
  lcp_robot_def_free(&def);

  expect_pair_error("planar", "", INERTIAL, "<string>:3: ", "type 'planar' is not supported");
  expect_pair_error("revolute", "", INERTIAL, "<string>:3: ", "needs a <limit>");
  expect_pair_error("prismatic", "<limit lower='0' upper='1' effort='1'/>", INERTIAL,
                    "<string>:3: ", "<limit> is missing attribute 'velocity'");
  expect_pair_error("revolute", "<limit lower='1' upper='-1' effort='1' velocity='1'/>", INERTIAL,
                    "<string>:3: ", "lower 1 is above upper -1");
  expect_pair_error("continuous", "<axis xyz='0 0 0'/>", INERTIAL, "<string>:3: ", "zero <axis>");
  expect_pair_error("continuous", "<axis xyz='0 1'/>", INERTIAL,
                    "<string>:3: ", "<axis> attribute 'xyz': expected 3 numbers, found 2");
  expect_pair_error("continuous", "<origin rpy='0 nan 0'/>", INERTIAL,
                    "<string>:3: ", "<origin> attribute 'rpy': 'nan' is not a finite number");
  expect_pair_error("continuous", "<origin xyz='0 inf 0'/>", INERTIAL,
                    "<string>:3: ", "'inf' is not a finite number");
  expect_pair_error("continuous", "<dynamics damping='-1'/>", INERTIAL,
                    "<string>:3: ", "'damping' must be >= 0");
  expect_pair_error("continuous", "", "",
                    "<string>:4: ", "link 'l1' has no <inertial> but is moved by joint 'j'");
  expect_pair_error("continuous", "",
                    "<inertial><mass value='0'/>"
                    "<inertia ixx='0' ixy='0' ixz='0' iyy='0' iyz='0' izz='0'/></inertial>",
                    "<string>:4: ", "link 'l1' has zero mass but is moved by joint 'j'");
  expect_pair_error("continuous", "",
                    "<inertial><mass value='1'/>"
                    "<inertia ixx='-1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial>",
                    "<string>:4: ", "not positive semidefinite");
  expect_pair_error("continuous", "", "<inertial><mass value='1'/></inertial>",
                    "<string>:4: ", "<inertial> has no <inertia>");
  expect_pair_error("continuous", "",
                    "<inertial><mass value='1.0abc'/>"
                    "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial>",
                    "<string>:4: ", "<mass> attribute 'value': '1.0abc' is not a finite number");
  expect_pair_error("continuous", "",
                    "<inertial><mass/>"
                    "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial>",
                    "<string>:4: ", "<mass> is missing attribute 'value'");
  expect_pair_error("floating", "", INERTIAL,
                    "<string>:3: ", "a floating joint must join a massless root link");
  expect_pair_error("fixed", "", "<collision><geometry><box size='1 1'/></geometry></collision>",
                    "<string>:4: ", "<box> attribute 'size': expected 3 numbers, found 2 ('1 1')");
  expect_pair_error("fixed", "",
                    "<collision><geometry><sphere radius='-1'/></geometry></collision>",
                    "<string>:4: ", "<sphere> attribute 'radius' must be > 0");
  expect_pair_error("fixed", "", "<collision><geometry><cone/></geometry></collision>",
                    "<string>:4: ", "unsupported geometry <cone>");
  expect_pair_error("fixed", "", "<collision><origin/></collision>",
                    "<string>:4: ", "<collision> has no <geometry>");
  assert_int_equal(load_pair("fixed", "",
                             "<collision><geometry><mesh filename='x.dae'/></geometry></collision>",
                             &def, err, sizeof err),
                   LCP_ERR_NOT_FOUND);
  ASSERT_CONTAINS(err, "<string>:4: mesh file 'x.dae' not found");
  /* A mesh file that exists but is in no format assimp reads. */
  lcp_urdf_options_t fixed = lcp_urdf_options_default();
  fixed.floating_base = 0;
  assert_int_equal(lcp_urdf_load_string("<robot name='r'><link name='a'><collision><geometry>\n"
                                        "<mesh filename='urdf/values.urdf'/>"
                                        "</geometry></collision></link></robot>",
                                        LCP_TEST_DATA_DIR, &fixed, &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "<string>:2: mesh 'urdf/values.urdf': ");
  ASSERT_CONTAINS(err, "/urdf/values.urdf: cannot read the mesh (");

  /* Document-level problems. */
  const struct {
    const char *xml, *where, *what;
  } docs[] = {
      {"<robot name='r'>\n<link name='a'>\n</robot>", "<string>:3: ", "malformed XML"},
      {"", "<string>:1: ", "malformed XML: Document is empty"},
      {"<model name='r'/>", "<string>:1: ", "the root element is <model>, not <robot>"},
      {"<robot/>", "<string>:1: ", "<robot> is missing attribute 'name'"},
      {"<robot name='r'/>", "<string>:1: ", "robot 'r' has no <link>"},
      {"<robot name='r'>\n<link name=''/>\n</robot>", "<string>:2: ", "attribute 'name' is empty"},
      {"<robot name='r'>\n<link name='a'/>\n<link name='b'/>\n</robot>",
       "<string>:3: ", "links 'a' and 'b' are both roots"},
      {"<robot name='r'>\n<link name='a'/>\n<joint name='j' type='fixed'>\n"
       "<parent link='a'/><child link='a'/></joint>\n</robot>",
       "<string>:3: ", "joint 'j' joins link 'a' to itself"},
      {"<robot name='r'>\n<link name='a'/>\n<joint name='j' type='fixed'>\n"
       "<parent link='a'/>\n<child link='b'/></joint>\n</robot>",
       "<string>:5: ", "child link 'b' not found"},
      {"<robot name='r'>\n<link name='a'/>\n<joint name='j' type='fixed'>\n<child link='a'/>\n"
       "</joint>\n</robot>",
       "<string>:3: ", "joint 'j' has no <parent>"},
      {"<robot name='r'>\n<link name='a'/>\n<link name='b'/>\n"
       "<joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
       "<joint name='j' type='fixed'><parent link='b'/><child link='a'/></joint>\n</robot>",
       "<string>:5: ", "duplicate joint name 'j' (first defined at line 4)"},
      {"<robot name='r'>\n<link name='a'>\n<inertial/>\n<inertial/>\n</link>\n</robot>",
       "<string>:3: ", "missing inertial mass"},
      {"<robot name='r'>\n<link name='0123456789012345678901234567890123456789012345678901234"
       "567890123'/>\n</robot>",
       "<string>:2: ", "longer than 63 characters"},
  };
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; ++i) {
    int rc = lcp_urdf_load_string(docs[i].xml, NULL, NULL, &def, err, sizeof err);
    if (rc != LCP_ERR_INVALID_ARGUMENT)
      fail_msg("document %zu: %d '%s'", i, rc, err);
    assert_null(def);
    ASSERT_CONTAINS(err, docs[i].where);
    ASSERT_CONTAINS(err, docs[i].what);
  }

  /* A floating base must have mass; 'world' cannot float with a hinge. */
  assert_int_equal(lcp_urdf_load_string("<robot name='r'><link name='a'/></robot>", NULL, NULL,
                                        &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "link 'a' has no mass, but it is the floating base");
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.floating_base = 1;
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<robot name='r'>\n<link name='world'/>\n<joint name='j' type='revolute'>"
           "<parent link='world'/><child link='a'/>"
           "<limit effort='1' velocity='1'/></joint>\n<link name='a'>%s</link>\n</robot>",
           INERTIAL);
  assert_int_equal(lcp_urdf_load_string(xml, NULL, &opt, &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "<string>:3: a floating base was asked for");
  opt.floating_base = 0;
  assert_int_equal(lcp_urdf_load_string(xml, NULL, &opt, &def, err, sizeof err), LCP_OK);
  assert_int_equal(def->link_count, 2);
  ASSERT_NEAR(def->links[0].mass, 0.0, 0.0); /* the anchor */
  lcp_robot_def_free(&def);
  /* Bad arguments. */
  opt.floating_base = 2;
  assert_int_equal(lcp_urdf_load_string(xml, NULL, &opt, &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_urdf_load_string(NULL, NULL, NULL, &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_urdf_load_string(xml, NULL, NULL, NULL, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  /* A relative mesh from a string resolves against base_dir. */
  assert_int_equal(lcp_urdf_load_string("<robot name='r'><link name='a'><collision><geometry>"
                                        "<mesh filename='meshes/tetra_ascii.stl' scale='2'/>"
                                        "</geometry></collision></link></robot>",
                                        LCP_TEST_DATA_DIR, NULL, &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT); /* massless floating base: the mesh itself loaded */
  ASSERT_CONTAINS(err, "no mass");
  opt.floating_base = 0;
  assert_int_equal(lcp_urdf_load_string("<robot name='r'><link name='a'><collision><geometry>"
                                        "<mesh filename='meshes/tetra_ascii.stl' scale='2'/>"
                                        "</geometry></collision></link></robot>",
                                        LCP_TEST_DATA_DIR, &opt, &def, err, sizeof err),
                   LCP_OK);
  assert_true(has_point(def->geoms[0].hull_points, 4, 0.0, 0.0, 2.0));
  lcp_robot_def_free(&def);
}

/* ---- package:// in a ROS package, meshes through assimp, frames ---- */

#define FAKE_PACKAGE_DIR LCP_TEST_DATA_DIR "/packages/fake_robot_description"
#define MESHBOT FAKE_PACKAGE_DIR "/urdf/meshbot.urdf"

typedef struct collected_log {
  char text[4096];
  int count;
} collected_log;

static void collect_log(void *user, lcp_log_level_t level, const char *message) {
  (void)level;
  collected_log *log = user;
  size_t used = strlen(log->text);
  snprintf(log->text + used, sizeof log->text - used, "%s\n", message);
  ++log->count;
}

static double max_abs_coordinate(const lcp_geom_def_t *g, int k) {
  double m = 0.0;
  for (int32_t i = 0; i < g->hull_point_count; ++i)
    m = fmax(m, fabs(g->hull_points[3 * i + k]));
  return m;
}

/* meshbot as its comment describes it: two links (camera merged into base,
 * tool and tip into arm), four mesh geoms, three frames. */
static void check_meshbot(const lcp_robot_def_t *def) {
  assert_int_equal(def->link_count, 2);
  assert_string_equal(def->links[0].name, "base");
  assert_string_equal(def->links[1].name, "arm");
  assert_int_equal(def->geom_count, 4);
  for (int32_t g = 0; g < 4; ++g)
    assert_int_equal(def->geoms[g].type, LCP_SHAPE_HULL);
  /* base: the OBJ box, its 8 corners as written (assimp reads floats). */
  const lcp_geom_def_t *box = &def->geoms[def->links[0].first_geom];
  assert_int_equal(box->hull_point_count, 8);
  assert_true(has_point(box->hull_points, 8, (float)0.1, (float)0.05, (float)0.05));
  assert_true(has_point(box->hull_points, 8, (float)-0.1, (float)-0.05, (float)-0.05));
  /* camera (merged into base): the COLLADA cube, 1 unit of 0.05 m a side, up
   * axis kept: ±0.025 m on each axis (float precision), at the camera's pose. */
  const lcp_geom_def_t *cube = &def->geoms[def->links[0].first_geom + 1];
  assert_int_equal(cube->hull_point_count, 8);
  for (int k = 0; k < 3; ++k) {
    ASSERT_NEAR(max_abs_coordinate(cube, k), 0.025, 1e-8);
    for (int32_t i = 0; i < 8; ++i)
      ASSERT_NEAR(fabs(cube->hull_points[3 * i + k]), 0.025, 1e-8);
  }
  ASSERT_NEAR(cube->local_position[0], 0.1, 1e-15);
  ASSERT_NEAR(cube->local_position[2], 0.05, 1e-15);
  ASSERT_NEAR(cube->local_orientation[0], cos(0.25), 1e-15);
  ASSERT_NEAR(cube->local_orientation[2], sin(0.25), 1e-15);
  /* arm: the dented cube (all 9 vertices; the engine takes the hull), then
   * the STL tetrahedron at half scale, 0.2 m up and turned about z. */
  const lcp_geom_def_t *dented = &def->geoms[def->links[1].first_geom];
  assert_int_equal(dented->hull_point_count, 9);
  assert_true(has_point(dented->hull_points, 9, 0.0, 0.0, 0.0));
  assert_true(has_point(dented->hull_points, 9, (float)0.05, (float)0.05, (float)0.05));
  const lcp_geom_def_t *tetra = &def->geoms[def->links[1].first_geom + 1];
  assert_int_equal(tetra->hull_point_count, 4);
  assert_true(has_point(tetra->hull_points, 4, 0.05, 0.0, 0.0));
  ASSERT_NEAR(tetra->local_position[2], 0.2, 1e-15);
  /* Frames: the merged links in depth-first order, on the links they went to,
   * with their offsets composed (tip = tool ∘ (0.01, 0, 0.03) = (0, 0.01, 0.23)). */
  assert_int_equal(def->frame_count, 3);
  const char *names[3] = {"camera", "tool", "tip"};
  const int32_t links[3] = {0, 1, 1};
  const double positions[3][3] = {{0.1, 0.0, 0.05}, {0.0, 0.0, 0.2}, {0.0, 0.01, 0.23}};
  const double orientations[3][4] = {{cos(0.25), 0.0, sin(0.25), 0.0},
                                     {cos(TEST_PI / 4), 0.0, 0.0, sin(TEST_PI / 4)},
                                     {cos(TEST_PI / 4), 0.0, 0.0, sin(TEST_PI / 4)}};
  for (int f = 0; f < 3; ++f) {
    assert_string_equal(def->frames[f].name, names[f]);
    assert_int_equal(def->frames[f].link, links[f]);
    for (int k = 0; k < 3; ++k)
      ASSERT_NEAR(def->frames[f].position[k], positions[f][k], 1e-15);
    for (int k = 0; k < 4; ++k)
      ASSERT_NEAR(def->frames[f].orientation[k], orientations[f][k], 1e-15);
  }
}

static void test_package_meshes(void **state) {
  (void)state;
  char err[1024];
  lcp_robot_def_t *def = NULL;
  collected_log log = {"", 0};
  /* 1. The package by name (--package-path fake_robot=DIR). */
  const lcp_urdf_package_t packages[2] = {{"other", "/nonexistent"},
                                          {"fake_robot", FAKE_PACKAGE_DIR}};
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  opt.packages = packages;
  opt.package_count = 2;
  opt.log = collect_log;
  opt.log_user = &log;
  if (lcp_urdf_load_file(MESHBOT, &opt, &def, err, sizeof err) != LCP_OK)
    fail_msg("%s", err);
  check_meshbot(def);
  lcp_robot_def_free(&def);
  /* The dented cube, and only it, is warned about, at its <mesh> line. */
  assert_int_equal(log.count, 1);
  ASSERT_CONTAINS(log.text, "meshbot.urdf:49: mesh 'package://fake_robot/meshes/dented.obj' is "
                            "not convex: it collides as its convex hull");
  /* 2. A directory of packages (ROS_PACKAGE_PATH): the package's directory
   * has another name, its package.xml says fake_robot. */
  opt = lcp_urdf_options_default();
  const char *const of_packages[2] = {"/nonexistent", LCP_TEST_DATA_DIR "/packages"};
  opt.package_paths = of_packages;
  opt.package_path_count = 2;
  if (lcp_urdf_load_file(MESHBOT, &opt, &def, err, sizeof err) != LCP_OK)
    fail_msg("%s", err);
  check_meshbot(def);
  lcp_robot_def_free(&def);
  /* 3. The package root itself. */
  const char *const root[1] = {FAKE_PACKAGE_DIR "/"};
  opt.package_paths = root;
  opt.package_path_count = 1;
  if (lcp_urdf_load_file(MESHBOT, &opt, &def, err, sizeof err) != LCP_OK)
    fail_msg("%s", err);
  check_meshbot(def);
  lcp_robot_def_free(&def);
  /* 4. Wrong package: the name and every place searched. */
  const char *const elsewhere[1] = {LCP_TEST_DATA_DIR "/meshes"};
  opt.packages = packages;
  opt.package_count = 1;
  opt.package_paths = elsewhere;
  assert_int_equal(lcp_urdf_load_file(MESHBOT, &opt, &def, err, sizeof err), LCP_ERR_NOT_FOUND);
  assert_null(def);
  ASSERT_CONTAINS(err, "meshbot.urdf:17: mesh file 'package://fake_robot/meshes/box.obj' not "
                       "found: unknown package 'fake_robot' (searched other=/nonexistent, ");
  ASSERT_CONTAINS(err, "/tests/data/meshes)");
  /* 5. A file the package does not have. */
  opt = lcp_urdf_options_default();
  opt.packages = &packages[1];
  opt.package_count = 1;
  assert_int_equal(lcp_urdf_load_string("<robot name='r'>\n<link name='a'><collision><geometry>\n"
                                        "<mesh filename='package://fake_robot/meshes/nothing.obj'/>"
                                        "</geometry></collision></link></robot>",
                                        NULL, &opt, &def, err, sizeof err),
                   LCP_ERR_NOT_FOUND);
  ASSERT_CONTAINS(err, "<string>:3: mesh file 'package://fake_robot/meshes/nothing.obj' not "
                       "found: package 'fake_robot' is ");
  ASSERT_CONTAINS(err, "fake_robot_description/meshes/nothing.obj");
  /* 6. A mesh assimp cannot read. */
  assert_int_equal(lcp_urdf_load_string("<robot name='r'>\n<link name='a'><collision><geometry>\n\n"
                                        "<mesh filename='package://fake_robot/meshes/broken.obj'/>"
                                        "</geometry></collision></link></robot>",
                                        NULL, &opt, &def, err, sizeof err),
                   LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(err, "<string>:4: mesh 'package://fake_robot/meshes/broken.obj': ");
  ASSERT_CONTAINS(err, "broken.obj");
  assert_null(def);
}

static void test_split_package_path(void **state) {
  (void)state;
  char **paths = NULL;
  int32_t count = -1;
  assert_int_equal(lcp_urdf_split_package_path("/a/b::/c:", &paths, &count), LCP_OK);
  assert_int_equal(count, 2);
  assert_string_equal(paths[0], "/a/b");
  assert_string_equal(paths[1], "/c");
  free(paths);
  assert_int_equal(lcp_urdf_split_package_path(":", &paths, &count), LCP_OK);
  assert_int_equal(count, 0);
  assert_null(paths);
  assert_int_equal(lcp_urdf_split_package_path(NULL, &paths, &count), LCP_OK);
  assert_int_equal(count, 0);
}

/* Rotation of v by the unit quaternion q (w, x, y, z). */
static void rotate(const double q[4], const double v[3], double out[3]) {
  lcp_quat_rotate(q, v, out);
}

static void test_frames_in_world(void **state) {
  (void)state;
  char err[1024];
  lcp_robot_def_t *def = NULL;
  lcp_urdf_options_t opt = lcp_urdf_options_default();
  const lcp_urdf_package_t package = {"fake_robot", FAKE_PACKAGE_DIR};
  opt.packages = &package;
  opt.package_count = 1;
  if (lcp_urdf_load_file(MESHBOT, &opt, &def, err, sizeof err) != LCP_OK)
    fail_msg("%s", err);
  lcp_world_t *world = NULL;
  lcp_world_settings_t settings = lcp_world_settings_default();
  assert_int_equal(lcp_world_create(&settings, &world), LCP_OK);
  const double base_p[3] = {1.0, 2.0, 3.0}, base_q[4] = {1.0, 0.0, 0.0, 0.0};
  lcp_robot_id id;
  assert_int_equal(lcp_robot_add(world, def, base_p, base_q, &id), LCP_OK);
  int32_t count = -1;
  assert_int_equal(lcp_robot_get_frame_count(world, id, &count), LCP_OK);
  assert_int_equal(count, 3);
  int32_t tip = -1, none = -7;
  assert_int_equal(lcp_robot_find_frame(world, id, "tip", &tip), LCP_OK);
  assert_int_equal(tip, 2);
  assert_int_equal(lcp_robot_find_frame(world, id, "nose", &none), LCP_ERR_NOT_FOUND);
  assert_int_equal(none, -7);
  /* A merged link is no link. */
  int32_t link = -1;
  assert_int_equal(lcp_robot_find_link(world, id, "tip", &link), LCP_ERR_NOT_FOUND);
  lcp_frame_info_t info;
  assert_int_equal(lcp_robot_get_frame(world, id, tip, &info), LCP_OK);
  assert_string_equal(info.name, "tip");
  assert_string_equal(info.link_name, "arm");
  assert_int_equal(info.link, 1);
  assert_int_equal(lcp_robot_get_frame(world, id, 3, &info), LCP_ERR_NOT_FOUND);
  /* The arm at q = 0.3 about y: the tip is at the arm's origin (the base's
   * (-0.1, 0, 0.05)) plus R_y(0.3) (0, 0.01, 0.23). */
  double q[8];
  assert_int_equal(lcp_robot_get_q(world, id, q, 8), LCP_OK);
  q[7] = 0.3;
  assert_int_equal(lcp_robot_set_q(world, id, q, 8), LCP_OK);
  double p[3], o[4];
  assert_int_equal(lcp_robot_get_frame_pose(world, id, tip, p, o), LCP_OK);
  ASSERT_NEAR(p[0], 0.9 + 0.23 * sin(0.3), 1e-14);
  ASSERT_NEAR(p[1], 2.01, 1e-14);
  ASSERT_NEAR(p[2], 3.05 + 0.23 * cos(0.3), 1e-14);
  /* Its orientation: R_y(0.3) then the tool's 90° about z. */
  double x_axis[3] = {1.0, 0.0, 0.0}, turned[3];
  rotate(o, x_axis, turned);
  ASSERT_NEAR(turned[0], 0.0, 1e-14);
  ASSERT_NEAR(turned[1], 1.0, 1e-14);
  ASSERT_NEAR(turned[2], 0.0, 1e-14);
  /* The camera on the base: (1.1, 2, 3.05). */
  assert_int_equal(lcp_robot_get_frame_pose(world, id, 0, p, o), LCP_OK);
  ASSERT_NEAR(p[0], 1.1, 1e-14);
  ASSERT_NEAR(p[1], 2.0, 1e-14);
  ASSERT_NEAR(p[2], 3.05, 1e-14);
  /* The robot's box: the OBJ box's bottom is lowest, 0.05 below the base
   * (float precision), its +x end 0.1 ahead, the camera cube reaching past it
   * to 0.1 + 0.025 (cos 0.5 + sin 0.5). */
  double lo[3], hi[3];
  assert_int_equal(lcp_robot_get_aabb(world, id, lo, hi), LCP_OK);
  ASSERT_NEAR(lo[2], 3.0 - (float)0.05, 1e-12);
  ASSERT_NEAR(hi[0], 1.1 + 0.025 * (cos(0.5) + sin(0.5)), 1e-8);

  /* Bad frames in a definition: refused, nothing added, the reason named. */
  lcp_robot_def_t *bad = NULL;
  assert_int_equal(lcp_robot_def_alloc(2, 0, &bad), LCP_OK);
  snprintf(bad->name, sizeof bad->name, "bad");
  snprintf(bad->links[0].name, sizeof bad->links[0].name, "l0");
  snprintf(bad->links[1].name, sizeof bad->links[1].name, "l1");
  assert_int_equal(lcp_robot_def_add_frame(bad, "f", 2, NULL, NULL), LCP_ERR_INVALID_ARGUMENT);
  const double zero_q[4] = {0, 0, 0, 0};
  assert_int_equal(lcp_robot_def_add_frame(bad, "f", 1, NULL, zero_q), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_robot_def_add_frame(bad, "", 1, NULL, NULL), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(bad->frame_count, 0);
  assert_int_equal(lcp_robot_def_add_frame(bad, "l1", 1, NULL, NULL), LCP_OK);
  int32_t robots = lcp_world_robot_count(world);
  assert_int_equal(lcp_robot_add(world, bad, NULL, NULL, NULL), LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(lcp_world_last_error(world), "frame 'l1' has the name of a link");
  snprintf(bad->frames[0].name, sizeof bad->frames[0].name, "f");
  assert_int_equal(lcp_robot_def_add_frame(bad, "f", 0, NULL, NULL), LCP_OK);
  assert_int_equal(lcp_robot_add(world, bad, NULL, NULL, NULL), LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(lcp_world_last_error(world), "two frames are named 'f'");
  bad->frames[1].link = 5; /* written by hand, past the check of add_frame */
  snprintf(bad->frames[1].name, sizeof bad->frames[1].name, "g");
  assert_int_equal(lcp_robot_add(world, bad, NULL, NULL, NULL), LCP_ERR_INVALID_ARGUMENT);
  ASSERT_CONTAINS(lcp_world_last_error(world), "frame 'g': link 5 is not one of the robot's 2");
  assert_int_equal(lcp_world_robot_count(world), robots);
  lcp_robot_def_free(&bad);
  lcp_world_destroy(&world);
  lcp_robot_def_free(&def);
}

/* Each bad input names its file and line. */
static void test_bad_robot_inputs(void **state) {
  (void)state;
  char err[1024];
  lcp_robot_def_t *def = NULL;
  static const struct {
    const char *xml;
    const char *expected;
  } cases[] = {
      /* A joint naming a link (frame) that does not exist. */
      {"<robot name='r'><link name='a'/>\n<joint name='j' type='fixed'><parent link='a'/>\n"
       "<child link='camera'/></joint></robot>",
       "<string>:3: joint 'j': child link 'camera' not found"},
      /* An inertia that is not positive (semi)definite. */
      {"<robot name='r'><link name='a'><inertial><mass value='1'/>\n"
       "<inertia ixx='1' ixy='2' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link></robot>",
       "<string>:2: link 'a': <inertia> is not positive semidefinite"},
      /* Negative friction: contact, and joint. */
      {"<robot name='r'><link name='a'>\n<contact><lateral_friction value='-0.1'/></contact>"
       "</link></robot>",
       "<string>:2: <lateral_friction> attribute 'value' must be >= 0, not -0.1"},
      {"<robot name='r'><link name='a'/><link name='b'><inertial><mass value='1'/><inertia "
       "ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>\n"
       "<joint name='j' type='continuous'><parent link='a'/><child link='b'/>\n"
       "<limit effort='1' velocity='1'/><dynamics friction='-2'/></joint></robot>",
       "<string>:3: <dynamics> attribute 'friction' must be >= 0, not -2"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    int rc = lcp_urdf_load_string(cases[i].xml, NULL, NULL, &def, err, sizeof err);
    if (rc != LCP_ERR_INVALID_ARGUMENT)
      fail_msg("case %zu: %d (%s)", i, rc, err);
    assert_null(def);
    ASSERT_CONTAINS(err, cases[i].expected);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arm7),
      cmocka_unit_test(test_quadruped),
      cmocka_unit_test(test_pendulum2),
      cmocka_unit_test(test_values),
      cmocka_unit_test(test_merge_fixed),
      cmocka_unit_test(test_mesh),
      cmocka_unit_test(test_stl_direct),
      cmocka_unit_test(test_package),
      cmocka_unit_test(test_world_link),
      cmocka_unit_test(test_broken_files),
      cmocka_unit_test(test_libxml_is_silent),
      cmocka_unit_test(test_doctype_refused),
      cmocka_unit_test(test_depth_limit),
      cmocka_unit_test(test_file_rules),
      cmocka_unit_test(test_confined_messages),
      cmocka_unit_test(test_warnings),
      cmocka_unit_test(test_string),
      cmocka_unit_test(test_contact),
      cmocka_unit_test(test_package_meshes),
      cmocka_unit_test(test_split_package_path),
      cmocka_unit_test(test_frames_in_world),
      cmocka_unit_test(test_bad_robot_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
