/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation of robot definitions (lcpsim/robot.h). */
#include "lcpsim/robot.h"

#include <stdint.h>

#include <math.h>
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
  free((*def)->frames);
  free(*def);
  *def = NULL;
}

int lcp_robot_def_add_frame(lcp_robot_def_t *def, const char *name, int32_t link,
                            const double position[3], const double orientation[4]) {
  if (!def || !name || name[0] == '\0' || strlen(name) >= LCP_NAME_MAX || link < 0 ||
      link >= def->link_count || def->frame_count < 0 || def->frame_count == INT32_MAX)
    return LCP_ERR_INVALID_ARGUMENT;
  double p[3] = {0.0, 0.0, 0.0}, q[4] = {1.0, 0.0, 0.0, 0.0};
  if (position)
    memcpy(p, position, sizeof p);
  if (orientation)
    memcpy(q, orientation, sizeof q);
  if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]) || !lcp_quat_is_valid(q))
    return LCP_ERR_INVALID_ARGUMENT;
  lcp_frame_def_t *frames =
      realloc(def->frames, (size_t)(def->frame_count + 1) * sizeof *def->frames);
  if (!frames)
    return LCP_ERR_NO_MEMORY;
  def->frames = frames;
  lcp_frame_def_t *f = &frames[def->frame_count++];
  memset(f, 0, sizeof *f);
  memcpy(f->name, name, strlen(name) + 1);
  f->link = link;
  memcpy(f->position, p, sizeof p);
  memcpy(f->orientation, q, sizeof q);
  return LCP_OK;
}
