/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the STL reader (server/model/stl.c) and what a URDF collision mesh
 * goes through after it: the convexity test and the engine's quickhull. The
 * reader parses the bytes in memory, as it does a file's once read. */
#include "fuzz_support.h"
#include "hull.h"
#include "mesh.h"

#include "lcpsim/lcpsim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* The parser reads data[size] as a NUL, as a file read by lcp_file_read ends. */
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  lcp__mesh_t mesh = {0};
  char error[512];
  int rc = lcp__stl_parse_mesh("input.stl", text, size, NULL, &mesh.points, &mesh.count,
                               &mesh.triangles, &mesh.triangle_count, error, sizeof error);
  free(text);
  if (rc != LCP_OK) {
    /* A refusal returns nothing and says why. */
    if (mesh.points || mesh.triangles || !error[0]) {
      fprintf(stderr, "fuzz_stl: a failed load (%d) left output or no message\n", rc);
      abort();
    }
    return 0;
  }
  for (int32_t t = 0; t < 3 * mesh.triangle_count; ++t) {
    if (mesh.triangles[t] < 0 || mesh.triangles[t] >= mesh.count) {
      fprintf(stderr, "fuzz_stl: triangle corner %d is vertex %d of %d\n", t, mesh.triangles[t],
              mesh.count);
      abort();
    }
  }
  (void)lcp__mesh_convexity(&mesh);
  vec3 *points = malloc((size_t)mesh.count * sizeof *points);
  if (points) {
    for (int32_t i = 0; i < mesh.count; ++i)
      points[i] = (vec3){mesh.points[3 * i], mesh.points[3 * i + 1], mesh.points[3 * i + 2]};
    hull h;
    if (lcp__hull_build(points, mesh.count, &h) == LCP_OK)
      lcp__hull_free(&h);
    free(points);
  }
  lcp__mesh_free(&mesh);
  return 0;
}
