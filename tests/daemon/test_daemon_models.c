/* SPDX-License-Identifier: Apache-2.0 */
/* Real robot files through lcpsimd: package:// meshes found through
 * --package-path, ROS_PACKAGE_PATH and LoadModel's own package fields;
 * frames listed in GetInfo and posed in GetState; bad robot files refused with
 * their file and line, the world unchanged; --urdf placement on the ground,
 * --urdf-pose and automatic names. */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "daemon_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_PACKAGE_DIR LCP_TEST_DATA_DIR "/packages/fake_robot_description"
#define MESHBOT FAKE_PACKAGE_DIR "/urdf/meshbot.urdf"

#define ASSERT_CONTAINS(haystack, needle)                                                          \
  do {                                                                                             \
    if (!strstr((haystack), (needle)))                                                             \
      fail_msg("'%s' does not contain '%s'", (haystack), (needle));                                \
  } while (0)

static const Lcpsim__V1__RobotInfo *robot_info(const Lcpsim__V1__Reply *reply, const char *name) {
  for (size_t i = 0; i < reply->get_info->n_robots; ++i)
    if (strcmp(reply->get_info->robots[i]->name, name) == 0)
      return reply->get_info->robots[i];
  fail_msg("no robot '%s'", name);
  return NULL;
}

static const Lcpsim__V1__RobotState *robot_state(const Lcpsim__V1__Reply *reply, const char *name) {
  const Lcpsim__V1__State *s = reply->get_state->state;
  for (size_t i = 0; i < s->n_robots; ++i)
    if (strcmp(s->robots[i]->name, name) == 0)
      return s->robots[i];
  fail_msg("no robot '%s' in the state", name);
  return NULL;
}

/* meshbot's frames in GetInfo, and in GetState each frame's world pose is its
 * link's pose composed with the offset GetInfo gives (checked on positions:
 * p_frame = p_link + R_link offset). */
static void check_meshbot_frames(void *c, const char *name) {
  Lcpsim__V1__Reply *info = call_get_info(c, 100);
  const Lcpsim__V1__RobotInfo *ri = robot_info(info, name);
  assert_int_equal(ri->n_links, 2);
  assert_int_equal(ri->n_frames, 3);
  const char *frames[3] = {"camera", "tool", "tip"}, *links[3] = {"base", "arm", "arm"};
  for (int f = 0; f < 3; ++f) {
    assert_string_equal(ri->frames[f]->name, frames[f]);
    assert_string_equal(ri->frames[f]->link, links[f]);
  }
  /* tip: (0, 0.01, 0.23) in the arm's frame. */
  assert_float_equal(ri->frames[2]->offset->position->y, 0.01, 1e-15);
  assert_float_equal(ri->frames[2]->offset->position->z, 0.23, 1e-15);
  Lcpsim__V1__Reply *state = call_get_state(c, 101, false);
  const Lcpsim__V1__RobotState *rs = robot_state(state, name);
  assert_int_equal(rs->n_frame_poses, 3);
  for (int f = 0; f < 3; ++f) {
    int link = strcmp(links[f], "base") == 0 ? 0 : 1;
    const Lcpsim__V1__Pose *lp = rs->link_poses[link];
    const Lcpsim__V1__Vec3 *off = ri->frames[f]->offset->position;
    double q[4] = {lp->orientation->w, lp->orientation->x, lp->orientation->y, lp->orientation->z};
    double v[3] = {off->x, off->y, off->z}, t[3];
    /* t = v + 2 w (u × v) + 2 u × (u × v), u = (x, y, z) */
    double u[3] = {q[1], q[2], q[3]};
    double uv[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                    u[0] * v[1] - u[1] * v[0]};
    double uuv[3] = {u[1] * uv[2] - u[2] * uv[1], u[2] * uv[0] - u[0] * uv[2],
                     u[0] * uv[1] - u[1] * uv[0]};
    for (int k = 0; k < 3; ++k)
      t[k] = v[k] + 2.0 * q[0] * uv[k] + 2.0 * uuv[k];
    assert_float_equal(rs->frame_poses[f]->position->x, lp->position->x + t[0], 1e-12);
    assert_float_equal(rs->frame_poses[f]->position->y, lp->position->y + t[1], 1e-12);
    assert_float_equal(rs->frame_poses[f]->position->z, lp->position->z + t[2], 1e-12);
  }
  reply_free(&state);
  reply_free(&info);
}

static void test_package_path_option(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--package-path", "fake_robot=" FAKE_PACKAGE_DIR, "--urdf",
                                    MESHBOT, NULL});
  void *c = connect_req(d.rep);
  check_meshbot_frames(c, "meshbot");
  /* It stays where the ground holds it: its lowest point on z = 0 at the
   * start, and still on it after half a second. */
  Lcpsim__V1__Reply *s = call_get_state(c, 1, false);
  assert_float_equal(robot_state(s, "meshbot")->base_pose->position->z, (float)0.05, 1e-12);
  reply_free(&s);
  call_step(c, 2, 120);
  check_meshbot_frames(c, "meshbot");
  s = call_get_state(c, 3, false);
  double z = robot_state(s, "meshbot")->base_pose->position->z;
  if (!(z > 0.04 && z < 0.06))
    fail_msg("meshbot's base at z = %g after 0.5 s", z);
  reply_free(&s);
  close_socket(&c);
  daemon_stop(&d);
}

/* A scene file's robots find package:// meshes through --package-path as --urdf's do; without
 * it the daemon does not start, naming the scene file's line. */
static void test_scene_file_packages(void **state) {
  (void)state;
  char scene[512];
  write_temp_file("meshbot_scene.xml",
                  "<lcpsim version=\"1\">\n"
                  "  <ground/>\n"
                  "  <robot name=\"meshbot\" urdf=\"" MESHBOT "\" xyz=\"0 0 0.05\"/>\n"
                  "</lcpsim>\n",
                  scene, sizeof scene);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--package-path", "fake_robot=" FAKE_PACKAGE_DIR, "--world",
                                    scene, NULL});
  void *c = connect_req(d.rep);
  check_meshbot_frames(c, "meshbot");
  close_socket(&c);
  daemon_stop(&d);

  char out[4096], err[8192];
  int status = daemon_run_to_exit((const char *[]){"--world", scene, NULL}, out, sizeof out, err,
                                  sizeof err);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  ASSERT_CONTAINS(err, "meshbot_scene.xml:3:");
  ASSERT_CONTAINS(err, "unknown package 'fake_robot'");
  remove_temp_file(scene);
}

static void test_ros_package_path(void **state) {
  (void)state;
  /* A directory of packages, after one that does not exist. */
  setenv("ROS_PACKAGE_PATH", "/nonexistent/ros:" LCP_TEST_DATA_DIR "/packages", 1);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--urdf", MESHBOT, "--urdf-name", "viaros", NULL});
  unsetenv("ROS_PACKAGE_PATH");
  void *c = connect_req(d.rep);
  check_meshbot_frames(c, "viaros");
  /* LoadModel finds the package the same way. */
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  load.urdf_path = (char *)MESHBOT;
  Lcpsim__V1__Request r = request_of(5, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  Lcpsim__V1__Reply *reply = rpc(c, &r);
  assert_ok(reply, 5, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  assert_string_equal(reply->load_model->robot->name, "meshbot");
  assert_int_equal(reply->load_model->robot->n_frames, 3);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
  /* Without any package path the daemon does not start, and says why. */
  char out[256], err[4096];
  int status = daemon_run_to_exit((const char *[]){"--urdf", MESHBOT, NULL}, out, sizeof out, err,
                                  sizeof err);
  assert_int_not_equal(status, 0);
  ASSERT_CONTAINS(err, "meshbot.urdf:17: mesh file 'package://fake_robot/meshes/box.obj' not "
                       "found: unknown package 'fake_robot' (no package paths were given");
}

static Lcpsim__V1__Reply *load_text(void *c, uint64_t id, const char *text, const char *name,
                                    size_t n_packages,
                                    Lcpsim__V1__LoadModelRequest__PackagesEntry **packages) {
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)text;
  load.name = (char *)name;
  load.n_packages = n_packages;
  load.packages = packages;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  return rpc(c, &r);
}

static void test_load_model_packages_and_names(void **state) {
  (void)state;
  daemon_proc d;
  /* The request's package directory must be below a model root. */
  daemon_start(&d, (const char *[]){"--model-path", LCP_TEST_DATA_DIR "/packages", NULL});
  void *c = connect_req(d.rep);
  Lcpsim__V1__LoadModelRequest__PackagesEntry entry =
      LCPSIM__V1__LOAD_MODEL_REQUEST__PACKAGES_ENTRY__INIT;
  entry.key = (char *)"fake_robot";
  entry.value = (char *)FAKE_PACKAGE_DIR;
  Lcpsim__V1__LoadModelRequest__PackagesEntry *packages[1] = {&entry};
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  load.urdf_path = (char *)MESHBOT;
  load.n_packages = 1;
  load.packages = packages;
  /* Loaded twice without a name: meshbot, then meshbot_2. */
  const char *expected[2] = {"meshbot", "meshbot_2"};
  for (int i = 0; i < 2; ++i) {
    Lcpsim__V1__Request r =
        request_of(10 + (uint64_t)i, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
    Lcpsim__V1__Reply *reply = rpc(c, &r);
    assert_ok(reply, 10 + (uint64_t)i, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
    assert_string_equal(reply->load_model->robot->name, expected[i]);
    reply_free(&reply);
  }
  check_meshbot_frames(c, "meshbot_2");
  /* A chosen name that is taken: refused, a free one suggested. */
  load.name = (char *)"meshbot";
  Lcpsim__V1__Request r = request_of(12, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  Lcpsim__V1__Reply *reply = rpc(c, &r);
  assert_error(reply, 12, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
               "load_model.name: the name 'meshbot' is taken by another robot or body (a free "
               "one: 'meshbot_3')");
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
}

/* Each bad robot file is refused with its line and cause, and the world is
 * as it was: same robots, same state bytes. */
static void test_bad_robot_files_leave_the_world(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--model-path", LCP_TEST_DATA_DIR "/packages", NULL});
  void *c = connect_req(d.rep);
  call_step(c, 1, 5);
  uint64_t before = world_hash(c);
  Lcpsim__V1__Reply *info = call_get_info(c, 2);
  size_t robots = info->get_info->n_robots;
  reply_free(&info);
  Lcpsim__V1__LoadModelRequest__PackagesEntry entry =
      LCPSIM__V1__LOAD_MODEL_REQUEST__PACKAGES_ENTRY__INIT;
  entry.key = (char *)"fake_robot";
  entry.value = (char *)FAKE_PACKAGE_DIR;
  Lcpsim__V1__LoadModelRequest__PackagesEntry *packages[1] = {&entry};
  static const struct {
    const char *text;
    Lcpsim__V1__Status__Code code;
    const char *needle;
  } cases[] = {
      {"<robot name='r'><link name='a'/>\n<joint name='j' type='fixed'><parent link='a'/>\n"
       "<child link='camera'/></joint></robot>",
       LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
       "load_model: <string>:3: joint 'j': child link 'camera' not found"},
      {"<robot name='r'><link name='a'><inertial><mass value='1'/>\n"
       "<inertia ixx='1' ixy='2' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link></robot>",
       LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
       "load_model: <string>:2: link 'a': <inertia> is not positive semidefinite"},
      {"<robot name='r'><link name='a'>\n<contact><lateral_friction value='-0.5'/></contact>"
       "</link></robot>",
       LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
       "load_model: <string>:2: <lateral_friction> attribute 'value' must be >= 0, not -0.5"},
      {"<robot name='r'><link name='a'><collision><geometry>\n"
       "<mesh filename='package://wrong_robot/meshes/box.obj'/></geometry></collision></link>"
       "</robot>",
       LCPSIM__V1__STATUS__CODE__NOT_FOUND,
       "load_model: <string>:2: mesh file 'package://wrong_robot/meshes/box.obj' not found: "
       "unknown package 'wrong_robot' (searched fake_robot="},
      {"<robot name='r'><link name='a'><collision><geometry>\n\n"
       "<mesh filename='package://fake_robot/meshes/broken.obj'/></geometry></collision></link>"
       "</robot>",
       LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
       "load_model: <string>:3: mesh 'package://fake_robot/meshes/broken.obj': "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    Lcpsim__V1__Reply *reply = load_text(c, 10 + i, cases[i].text, "", 1, packages);
    assert_error(reply, 10 + i, cases[i].code, cases[i].needle);
    reply_free(&reply);
    assert_true(world_hash(c) == before);
  }
  info = call_get_info(c, 3);
  assert_int_equal(info->get_info->n_robots, robots);
  reply_free(&info);
  close_socket(&c);
  daemon_stop(&d);
}

/* The README's example: the quadruped from --urdf, with no pose, stands on
 * its four feet (the lowest geoms at its initial joint values) on the ground,
 * then, with no controller, settles on the ground: never inside it by more
 * than the contact slop, never in the air. */
static void test_urdf_rests_on_the_ground(void **state) {
  (void)state;
  char urdf[1024];
  snprintf(urdf, sizeof urdf, "%s/quadruped.urdf", robots_dir());
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--urdf", urdf, "--timestep", "0.001", "--urdf", urdf,
                                    "--urdf-pose", "2,0,1,0,0,1.5707963267948966", NULL});
  void *c = connect_req(d.rep);
  Lcpsim__V1__Reply *info = call_get_info(c, 1);
  const Lcpsim__V1__RobotInfo *ri = robot_info(info, "quadruped");
  assert_int_equal(ri->n_frames, 4);
  robot_info(info, "quadruped_2");
  Lcpsim__V1__Reply *s = call_get_state(c, 2, false);
  const Lcpsim__V1__RobotState *q = robot_state(s, "quadruped");
  for (size_t f = 0; f < 4; ++f) {
    ASSERT_CONTAINS(ri->frames[f]->name, "_foot");
    /* The foot spheres (r = 0.025 m) touch z = 0. */
    assert_float_equal(q->frame_poses[f]->position->z, 0.025, 1e-12);
  }
  /* --urdf-pose: the base exactly there, turned 90° about z. */
  const Lcpsim__V1__Pose *p2 = robot_state(s, "quadruped_2")->base_pose;
  assert_float_equal(p2->position->x, 2.0, 0.0);
  assert_float_equal(p2->position->z, 1.0, 0.0);
  assert_float_equal(p2->orientation->w, sqrt(0.5), 1e-15);
  assert_float_equal(p2->orientation->z, sqrt(0.5), 1e-15);
  reply_free(&s);
  reply_free(&info);
  /* 2 s in 0.1 s slices: the lowest foot never more than 5 mm in the ground
   * nor, once down, off it; the trunk (0.1 m thick) never in the ground. */
  double lowest_foot = INFINITY;
  for (int slice = 0; slice < 20; ++slice) {
    call_step(c, 10 + (uint64_t)slice, 100);
    s = call_get_state(c, 100 + (uint64_t)slice, true);
    q = robot_state(s, "quadruped");
    lowest_foot = INFINITY;
    for (size_t f = 0; f < 4; ++f)
      lowest_foot = fmin(lowest_foot, q->frame_poses[f]->position->z);
    if (!(lowest_foot > 0.025 - 0.005 && lowest_foot < 0.025 + 0.005))
      fail_msg("t = %.1f s: lowest foot at z = %g", 0.1 * (slice + 1), lowest_foot);
    if (!(q->base_pose->position->z > 0.05 - 0.005))
      fail_msg("t = %.1f s: trunk centre at z = %g", 0.1 * (slice + 1), q->base_pose->position->z);
    reply_free(&s);
  }
  /* At rest at the end. */
  s = call_get_state(c, 200, false);
  q = robot_state(s, "quadruped");
  double vz = q->base_twist->linear->z;
  if (!(fabs(vz) < 0.05))
    fail_msg("the trunk still moves at %g m/s after 2 s", vz);
  reply_free(&s);
  close_socket(&c);
  daemon_stop(&d);
}

/* Robots without a pose stand in a row along +y, 0.25 m apart: the
 * quadruped's feet (spheres of 0.025 m, at y = ±0.18 in the trunk) are its
 * outermost geoms, so the gap between the two robots' feet is 0.25 m. */
static void test_urdf_row(void **state) {
  (void)state;
  char urdf[1024];
  snprintf(urdf, sizeof urdf, "%s/quadruped.urdf", robots_dir());
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--urdf", urdf, "--urdf", urdf, NULL});
  void *c = connect_req(d.rep);
  Lcpsim__V1__Reply *s = call_get_state(c, 1, false);
  const Lcpsim__V1__RobotState *a = robot_state(s, "quadruped"), *b = robot_state(s, "quadruped_2");
  double a_max = -INFINITY, b_min = INFINITY;
  for (size_t f = 0; f < 4; ++f) {
    a_max = fmax(a_max, a->frame_poses[f]->position->y);
    b_min = fmin(b_min, b->frame_poses[f]->position->y);
  }
  assert_float_equal(a->base_pose->position->y, 0.0, 0.0);
  assert_float_equal((b_min - 0.025) - (a_max + 0.025), 0.25, 1e-12);
  assert_float_equal(b->base_pose->position->z, a->base_pose->position->z, 0.0);
  reply_free(&s);
  close_socket(&c);
  daemon_stop(&d);
}

static void test_urdf_option_errors(void **state) {
  (void)state;
  char out[256], err[4096];
  static const struct {
    const char *args[6];
    const char *needle;
  } cases[] = {
      {{"--urdf-pose", "0,0,1", NULL}, "--urdf-pose applies to the --urdf before it"},
      {{"--urdf", MESHBOT, "--urdf-pose", "0,0", NULL}, "--urdf-pose must be x,y,z or"},
      {{"--urdf", MESHBOT, "--urdf-pose", "0,0,1,nan,0,0", NULL}, "--urdf-pose must be"},
      {{"--package-path", "fake_robot", NULL}, "--package-path must be NAME=DIR"},
      {{"--package-path", "fake_robot=/nonexistent/dir", NULL},
       "'/nonexistent/dir' is not a directory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    int status = daemon_run_to_exit(cases[i].args, out, sizeof out, err, sizeof err);
    assert_int_not_equal(status, 0);
    ASSERT_CONTAINS(err, cases[i].needle);
  }
}

static int teardown(void **state) {
  (void)state;
  unsetenv("ROS_PACKAGE_PATH");
  test_context_destroy();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_package_path_option, teardown),
      cmocka_unit_test_teardown(test_scene_file_packages, teardown),
      cmocka_unit_test_teardown(test_ros_package_path, teardown),
      cmocka_unit_test_teardown(test_load_model_packages_and_names, teardown),
      cmocka_unit_test_teardown(test_bad_robot_files_leave_the_world, teardown),
      cmocka_unit_test_teardown(test_urdf_rests_on_the_ground, teardown),
      cmocka_unit_test_teardown(test_urdf_row, teardown),
      cmocka_unit_test_teardown(test_urdf_option_errors, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
