/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation of robot definitions (lcpsim/robot.h). */
#include "lcpsim/robot.h"

#include <stdlib.h>
#include <string.h>

int lcp_robot_def_alloc(int32_t link_count, int32_t geom_count, lcp_robot_def_t **out) {
  if (!out || link_count < 1 || geom_count < 0)
    return LCP_ERR_INVALID_ARGUMENT;
  *out = NULL;
  lcp_robot_def_t *def = calloc(1, sizeof *def);
  if (!def)
    return LCP_ERR_NO_MEMORY;
  def->links = calloc((size_t)link_count, sizeof(lcp_link_def_t));
  def->geoms = calloc(geom_count > 0 ? (size_t)geom_count : 1, sizeof(lcp_geom_def_t));
  if (!def->links || !def->geoms) {
    lcp_robot_def_free(&def);
    return LCP_ERR_NO_MEMORY;
  }
  def->link_count = link_count;
  def->geom_count = geom_count;
  for (int32_t i = 0; i < link_count; ++i) {
    lcp_link_def_t *l = &def->links[i];
    l->parent = i - 1;
    l->joint_type = LCP_JOINT_FIXED;
    l->origin_orientation[0] = 1.0;
    l->axis[2] = 1.0;
    l->mass = 1.0;
    l->inertia[0] = l->inertia[4] = l->inertia[8] = 1.0;
  }
  for (int32_t i = 0; i < geom_count; ++i)
    def->geoms[i] = lcp_geom_def_default();
  *out = def;
  return LCP_OK;
}

void lcp_robot_def_free(lcp_robot_def_t **def) {
  if (!def || !*def)
    return;
  for (int32_t i = 0; i < (*def)->geom_count; ++i)
    free((void *)(*def)->geoms[i].hull_points); /* hull points are owned by the def */
  free((*def)->links);
  free((*def)->geoms);
  free(*def);
  *def = NULL;
}
