/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the URDF loader (lcp_urdf_load_string) and, for what it accepts,
 * the engine taking the robot in: the definition is added to a world with a
 * ground plane and stepped a few times, so that whatever the loader lets
 * through is either refused by lcp_robot_add or simulated.
 *
 * The input is the document. Its length picks the loader's options
 * (floating_base -1, 0 or 1; fixed links merged or kept), so that mutations
 * reach every combination without a framing the text would have to carry.
 * Relative mesh paths resolve in the harness's temporary directory, which
 * holds cube.stl (binary) and tetra.stl (ASCII); no ROS package is known, so
 * package:// URIs are refused. The loader still opens absolute mesh paths:
 * it has no mode without file access. */
#include "fuzz_support.h"

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps of the loaded robot: enough for contacts and the joint rows to be
 * built and solved, few enough to keep the harness fast. */
#define STEPS 3

static void check_log(void *user, lcp_log_level_t level, const char *message) {
  (void)user;
  (void)level;
  /* A warning is a whole, terminated message. */
  if (!message || !message[0]) {
    fprintf(stderr, "fuzz_urdf: an empty warning\n");
    abort();
  }
}

static void initialise(void) {
  static bool done;
  if (done)
    return;
  done = true;
  lcp__fuzz_copy_to_temp(LCP_FUZZ_MESHES_DIR "/cube_binary.stl", "cube.stl");
  lcp__fuzz_copy_to_temp(LCP_FUZZ_MESHES_DIR "/tetra_ascii.stl", "tetra.stl");
}

static void simulate(const lcp_robot_def_t *def) {
  lcp_world_t *world = NULL;
  lcp_world_settings_t settings = lcp_world_settings_default();
  if (lcp_world_create(&settings, &world) != LCP_OK)
    return;
  lcp_geom_def_t ground = lcp_geom_def_default();
  ground.type = LCP_SHAPE_PLANE;
  lcp_geom_id ground_id;
  lcp_geom_add(world, LCP_WORLD_BODY, &ground, &ground_id);
  const double position[3] = {0, 0, 1}, orientation[4] = {1, 0, 0, 0};
  lcp_robot_id robot;
  if (lcp_robot_add(world, def, position, orientation, &robot) == LCP_OK) {
    for (int i = 0; i < STEPS; ++i)
      if (lcp_world_step(world) != LCP_OK)
        break;
  }
  lcp_world_destroy(&world);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  initialise();
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.floating_base = (int)(size % 3) - 1;
  options.keep_fixed_links = (size / 3) % 2 == 1;
  options.log = check_log;
  /* Meshes the input names are read as a remote peer's would be: only below
   * the harness's own directory, so that no input reaches the machine's
   * files. */
  const char *roots[1] = {lcp__fuzz_temp_dir()};
  options.files = (lcp_file_rules_t){roots, 1, true};
  lcp_robot_def_t *def = NULL;
  char error[1024];
  int rc = lcp_urdf_load_string(text, lcp__fuzz_temp_dir(), &options, &def, error, sizeof error);
  free(text);
  if (rc != LCP_OK) {
    if (def || !error[0]) {
      fprintf(stderr, "fuzz_urdf: a failed load (%d) left a robot or no message\n", rc);
      abort();
    }
    return 0;
  }
  if (!def) {
    fprintf(stderr, "fuzz_urdf: a load returned LCP_OK without a robot\n");
    abort();
  }
  simulate(def);
  lcp_robot_def_free(&def);
  return 0;
}
