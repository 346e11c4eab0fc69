/* SPDX-License-Identifier: Apache-2.0 */
/* A program of another project, built against an installed lcpsim (the
 * install_consumer test builds it with find_package(lcpsim) and with
 * pkg-config, and installs it beside lcpsimd).
 *
 *   lcpsim-consumer [ENDPOINT]
 *
 * It checks, and exits 1 naming the first failure:
 * - the shipped robots' lookup, run from the installed bin directory with
 *   LCPSIM_ROBOTS_DIR unset, finds the installed robots, where the package
 *   (EXPECTED_ROBOTS_DIR, from lcpsim_ROBOTS_DIR or pkg-config's robotsdir)
 *   says they are;
 * - the engine: a 0.2 m, 1 kg cube dropped from 0.5 m rests on the ground
 *   plane after 2 s, its centre 0.1 m up within 2 mm;
 * - the model: arm7.urdf from there has 7 joints and, bolted down under PD
 *   control with gravity compensation, holds 0.3 rad at every joint within
 *   0.01 rad after 2 s;
 * - with ENDPOINT (and the C client): the installed lcpsimd there answers a
 *   Ping and serves its built-in world, the 7-joint arm7 among its robots; a
 *   Ping request of the protocol library round-trips through its packing. */
#define _XOPEN_SOURCE 700 /* realpath */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"
#ifdef CONSUMER_WITH_CLIENT
#include "lcpsim/v1/lcpsim.pb-c.h"
#include "lcpsim_client.h"
#endif

#define CHECK(condition, ...)                                                                      \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      fprintf(stderr, "lcpsim-consumer: ");                                                        \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define ARM_JOINTS 7

static void check_robots_dir(void) {
  char dir[4096], error[2048];
  int rc = lcp_shipped_robots_dir(dir, sizeof dir, error, sizeof error);
  CHECK(rc == LCP_OK, "no shipped robots: %s", error);
  char *expected = realpath(EXPECTED_ROBOTS_DIR, NULL);
  CHECK(expected, "the package's robots directory %s does not exist", EXPECTED_ROBOTS_DIR);
  CHECK(strcmp(dir, expected) == 0, "the robots were found in %s, the package says %s", dir,
        expected);
  printf("lcpsim-consumer: shipped robots in %s\n", dir);
  free(expected);
}

static lcp_world_t *world_with_ground(void) {
  lcp_world_settings_t settings = lcp_world_settings_default();
  lcp_world_t *world = NULL;
  CHECK(lcp_world_create(&settings, &world) == LCP_OK, "lcp_world_create");
  lcp_geom_def_t ground = lcp_geom_def_default();
  ground.type = LCP_SHAPE_PLANE;
  CHECK(lcp_geom_add(world, LCP_WORLD_BODY, &ground, NULL) == LCP_OK, "the ground plane: %s",
        lcp_world_last_error(world));
  return world;
}

static void step_for(lcp_world_t *world, double seconds) {
  lcp_world_settings_t settings;
  lcp_world_get_settings(world, &settings);
  for (long i = 0; i < lround(seconds / settings.timestep); ++i)
    CHECK(lcp_world_step(world) == LCP_OK, "step: %s", lcp_world_last_error(world));
}

static void check_cube_drop(void) {
  lcp_world_t *world = world_with_ground();
  lcp_geom_def_t cube = lcp_geom_def_default();
  cube.type = LCP_SHAPE_BOX;
  cube.half_extents[0] = cube.half_extents[1] = cube.half_extents[2] = 0.1;
  lcp_body_def_t body = lcp_body_def_default();
  body.mass = 1.0;
  for (int i = 0; i < 9; ++i) /* a solid cube: m a² / 6 about each axis, side a = 0.2 m */
    body.inertia[i] = i % 4 == 0 ? 1.0 * 0.2 * 0.2 / 6.0 : 0.0;
  body.position[2] = 0.5;
  lcp_body_id id;
  CHECK(lcp_body_add(world, &body, &id) == LCP_OK, "the cube: %s", lcp_world_last_error(world));
  CHECK(lcp_geom_add(world, id, &cube, NULL) == LCP_OK, "the cube's box: %s",
        lcp_world_last_error(world));
  step_for(world, 2.0);
  double position[3], linear[3], angular[3];
  CHECK(lcp_body_get_pose(world, id, position, NULL) == LCP_OK, "the cube's pose");
  CHECK(lcp_body_get_velocity(world, id, linear, angular) == LCP_OK, "the cube's velocity");
  CHECK(fabs(position[2] - 0.1) < 0.002, "the cube rests at z = %.4f m, not 0.1 m", position[2]);
  CHECK(fabs(linear[2]) < 0.01, "the cube still moves at %.4f m/s", linear[2]);
  printf("lcpsim-consumer: the dropped cube rests at z = %.4f m\n", position[2]);
  lcp_world_destroy(&world);
}

static void check_arm(void) {
  char path[4096], error[2048];
  CHECK(lcp_shipped_robot_path("arm7.urdf", path, sizeof path, error, sizeof error) == LCP_OK, "%s",
        error);
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.floating_base = 0;
  lcp_robot_def_t *def = NULL;
  CHECK(lcp_urdf_load_file(path, &options, &def, error, sizeof error) == LCP_OK, "%s", error);
  lcp_world_t *world = world_with_ground();
  const double base[3] = {0.0, 0.0, 0.1};
  lcp_robot_id arm;
  CHECK(lcp_robot_add(world, def, base, NULL, &arm) == LCP_OK, "the arm: %s",
        lcp_world_last_error(world));
  lcp_robot_def_free(&def);
  lcp_robot_info_t info;
  CHECK(lcp_robot_get_info(world, arm, &info) == LCP_OK, "the arm's info");
  CHECK(info.joint_count == ARM_JOINTS, "arm7 has %d joints, not 7", (int)info.joint_count);

  lcp_joint_control_t hold = lcp_joint_control_default();
  hold.mode = LCP_CONTROL_POSITION;
  hold.position = 0.3;
  hold.kp = 1e3;
  hold.kd = 50.0;
  for (int32_t j = 0; j < ARM_JOINTS; ++j)
    CHECK(lcp_robot_set_joint_control(world, arm, j, &hold) == LCP_OK, "joint %d's control",
          (int)j);
  CHECK(lcp_robot_set_gravity_compensation(world, arm, true) == LCP_OK, "gravity compensation");
  step_for(world, 2.0);
  double q[ARM_JOINTS];
  CHECK(lcp_robot_get_q(world, arm, q, ARM_JOINTS) == LCP_OK, "the arm's q");
  for (int j = 0; j < ARM_JOINTS; ++j)
    CHECK(fabs(q[j] - 0.3) < 0.01, "joint %d is at %.4f rad, not 0.3", j, q[j]);
  printf("lcpsim-consumer: arm7 holds 0.3 rad at its 7 joints\n");
  lcp_world_destroy(&world);
}

#ifdef CONSUMER_WITH_CLIENT
static void check_daemon(const char *endpoint) {
  /* The protocol library alone: a Ping request packed and unpacked. */
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  uint8_t payload[3] = {1, 2, 3}, packed[16];
  ping.payload.data = payload;
  ping.payload.len = sizeof payload;
  size_t size = lcpsim__v1__ping_request__pack(&ping, packed);
  Lcpsim__V1__PingRequest *back = lcpsim__v1__ping_request__unpack(NULL, size, packed);
  CHECK(back && back->payload.len == 3 && back->payload.data[2] == 3, "PingRequest round trip");
  lcpsim__v1__ping_request__free_unpacked(back, NULL);

  lcpsim_client_t *client = NULL;
  CHECK(lcpsim_client_connect(endpoint, 5000, &client) == LCPSIM_OK, "connect to %s", endpoint);
  char version[64];
  int rc = lcpsim_client_ping(client, version, sizeof version);
  CHECK(rc == LCPSIM_OK, "ping %s: %s", endpoint, lcpsim_client_last_error(client));
  lcpsim_info_t *info = NULL;
  CHECK(lcpsim_client_get_info(client, &info) == LCPSIM_OK, "get_info: %s",
        lcpsim_client_last_error(client));
  bool arm_found = false;
  for (size_t i = 0; i < info->n_robots; ++i)
    arm_found |= strcmp(info->robots[i]->name, "arm7") == 0 && info->robots[i]->n_joints == 7;
  CHECK(arm_found, "the daemon's built-in world has no 7-joint arm7");
  printf("lcpsim-consumer: %s at %s serves arm7\n", version, endpoint);
  lcpsim_info_destroy(&info);
  lcpsim_client_destroy(&client);
}
#endif

int main(int argc, char **argv) {
  check_robots_dir();
  check_cube_drop();
  check_arm();
  if (argc > 1) {
#ifdef CONSUMER_WITH_CLIENT
    check_daemon(argv[1]);
#else
    CHECK(0, "built without the C client: no daemon to talk to at %s", argv[1]);
#endif
  }
  printf("lcpsim-consumer: all checks passed\n");
  return 0;
}
