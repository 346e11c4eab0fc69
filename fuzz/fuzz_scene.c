/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the scene file loader (server/daemon/scene_file.c, lcpsimd --world)
 * and the daemon building its world from what it accepts: the scene is
 * turned into a world (lcpd_sim_init), stepped a few times and reset.
 *
 * The loader reads a path only, so each input is written to scene.xml in the
 * harness's temporary directory, next to pendulum2.urdf and arm7.urdf (the
 * shipped robots) and cube.stl, which relative URDF paths in the seed corpus name.
 * The loader still opens absolute paths a scene names: it has no mode
 * without file access. */
#include "fuzz_support.h"
#include "log.h"
#include "scene.h"
#include "scene_file.h"
#include "sim.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Steps of the loaded world: contacts and joint rows built and solved, and
 * the harness still fast. */
#define STEPS 3

static void initialise(void) {
  static bool done;
  if (done)
    return;
  done = true;
  lcpd_log_set_level(LCPD_LOG_ERROR);
  lcp__fuzz_copy_to_temp(LCP_FUZZ_ROBOTS_DIR "/pendulum2.urdf", "pendulum2.urdf");
  lcp__fuzz_copy_to_temp(LCP_FUZZ_ROBOTS_DIR "/arm7.urdf", "arm7.urdf");
  lcp__fuzz_copy_to_temp(LCP_FUZZ_MESHES_DIR "/cube_binary.stl", "cube.stl");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  initialise();
  const char *path = lcp__fuzz_temp_file("scene.xml", data, size);
  lcpd_scene_t scene;
  lcpd_error_t error = {0};
  if (lcpd_scene_file_load(path, NULL, &scene, &error) != LCP_OK) {
    /* A refusal leaves an empty scene and says why. */
    if (scene.robot_count || scene.body_count || scene.imu_count || !error.message[0]) {
      fprintf(stderr, "fuzz_scene: a failed load left a scene or no message\n");
      abort();
    }
    lcpd_scene_clear(&scene);
    return 0;
  }
  lcpd_sim_t sim;
  if (lcpd_sim_init(&sim, &scene, &error) != LCP_OK) {
    lcpd_scene_clear(&scene);
    return 0;
  }
  for (int i = 0; i < STEPS; ++i)
    if (lcpd_sim_step(&sim, &error) != LCP_OK)
      break;
  lcpd_sim_reset(&sim, &error);
  lcpd_sim_destroy(&sim);
  lcpd_scene_clear(&scene);
  return 0;
}
