/* SPDX-License-Identifier: Apache-2.0 */
/* A robot's frames: named poses fixed to its links (lcpsim/robot.h). */
#include "robot_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool name_ok(const char *name) {
  return name[0] != '\0' && memchr(name, '\0', LCP_NAME_MAX) != NULL;
}

int lcp__robot_frames_check(const lcp_robot_def_t *def, char *why, size_t why_size) {
  if (def->frame_count < 0 || (def->frame_count > 0 && !def->frames)) {
    snprintf(why, why_size, "bad frame list (count %d)", (int)def->frame_count);
    return LCP_ERR_INVALID_ARGUMENT;
  }
  for (int32_t i = 0; i < def->frame_count; ++i) {
    const lcp_frame_def_t *f = &def->frames[i];
    if (!name_ok(f->name)) {
      snprintf(why, why_size, "frame %d needs a name shorter than %d bytes", (int)i, LCP_NAME_MAX);
      return LCP_ERR_INVALID_ARGUMENT;
    }
    if (f->link < 0 || f->link >= def->link_count) {
      snprintf(why, why_size, "frame '%s': link %d is not one of the robot's %d links", f->name,
               (int)f->link, (int)def->link_count);
      return LCP_ERR_INVALID_ARGUMENT;
    }
    if (!isfinite(f->position[0]) || !isfinite(f->position[1]) || !isfinite(f->position[2]) ||
        !lcp_quat_is_valid(f->orientation)) {
      snprintf(why, why_size, "frame '%s': its offset must be finite with a non-zero quaternion",
               f->name);
      return LCP_ERR_INVALID_ARGUMENT;
    }
    /* Names are few (a frame per merged link): quadratic checks are cheap. */
    for (int32_t k = 0; k < i; ++k)
      if (strncmp(def->frames[k].name, f->name, LCP_NAME_MAX) == 0) {
        snprintf(why, why_size, "two frames are named '%s'", f->name);
        return LCP_ERR_INVALID_ARGUMENT;
      }
    for (int32_t k = 0; k < def->link_count; ++k)
      if (strncmp(def->links[k].name, f->name, LCP_NAME_MAX) == 0) {
        snprintf(why, why_size, "frame '%s' has the name of a link", f->name);
        return LCP_ERR_INVALID_ARGUMENT;
      }
  }
  return LCP_OK;
}

int lcp__robot_frames_copy(robot_model *model, const lcp_robot_def_t *def) {
  model->frames = NULL;
  model->frame_count = 0;
  if (def->frame_count == 0)
    return LCP_OK;
  model->frames = calloc((size_t)def->frame_count, sizeof *model->frames);
  if (!model->frames)
    return LCP_ERR_NO_MEMORY;
  for (int32_t i = 0; i < def->frame_count; ++i) {
    const lcp_frame_def_t *f = &def->frames[i];
    frame_model *m = &model->frames[i];
    memcpy(m->name, f->name, LCP_NAME_MAX);
    m->link = f->link;
    m->in_link = xf_make(v3_from(f->position), q_normalize(q_from(f->orientation)));
  }
  model->frame_count = def->frame_count;
  return LCP_OK;
}

static const robot_model *robot_at(const lcp_world_t *world, lcp_robot_id id, int32_t *slot) {
  *slot = world ? id_pool_slot(&world->model.robot_ids, id) : -1;
  return *slot < 0 ? NULL : &world->model.robots[*slot];
}

int lcp_robot_get_frame_count(const lcp_world_t *world, lcp_robot_id id, int32_t *out_count) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!out_count)
    return LCP_ERR_INVALID_ARGUMENT;
  *out_count = r->frame_count;
  return LCP_OK;
}

int lcp_robot_find_frame(const lcp_world_t *world, lcp_robot_id id, const char *name,
                         int32_t *out_frame) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || !name)
    return LCP_ERR_NOT_FOUND;
  for (int32_t i = 0; i < r->frame_count; ++i)
    if (strncmp(r->frames[i].name, name, LCP_NAME_MAX) == 0) {
      if (out_frame)
        *out_frame = i;
      return LCP_OK;
    }
  return LCP_ERR_NOT_FOUND;
}

int lcp_robot_get_frame(const lcp_world_t *world, lcp_robot_id id, int32_t frame,
                        lcp_frame_info_t *out) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || frame < 0 || frame >= r->frame_count)
    return LCP_ERR_NOT_FOUND;
  if (!out)
    return LCP_ERR_INVALID_ARGUMENT;
  const frame_model *f = &r->frames[frame];
  memset(out, 0, sizeof *out);
  memcpy(out->name, f->name, LCP_NAME_MAX);
  memcpy(out->link_name, r->link_names[f->link], LCP_NAME_MAX);
  out->link = f->link;
  v3_store(f->in_link.p, out->position);
  q_store(f->in_link.q, out->orientation);
  return LCP_OK;
}

int lcp_robot_get_frame_pose(const lcp_world_t *world, lcp_robot_id id, int32_t frame,
                             double position[3], double orientation[4]) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || frame < 0 || frame >= r->frame_count)
    return LCP_ERR_NOT_FOUND;
  lcp__world_ensure_robot_kinematics(world);
  const frame_model *f = &r->frames[frame];
  xform x = xf_mul(&world->robot_data[slot].link_x[f->link], &f->in_link);
  if (position)
    v3_store(x.p, position);
  if (orientation)
    q_store(x.q, orientation);
  return LCP_OK;
}

int lcp_robot_get_aabb(const lcp_world_t *world, lcp_robot_id id, double lo[3], double hi[3]) {
  int32_t slot;
  if (!robot_at(world, id, &slot))
    return LCP_ERR_NOT_FOUND;
  vec3 l = v3(INFINITY, INFINITY, INFINITY), u = v3(-INFINITY, -INFINITY, -INFINITY);
  bool any = false;
  for (int32_t g = 0; g < world->model.geom_count; ++g) {
    const geom_model *gm = &world->model.geoms[g];
    if (gm->robot != id)
      continue;
    xform x = lcp__world_geom_pose(world, gm);
    vec3 gl, gu;
    lcp__shape_aabb(&gm->shape, &x, &gl, &gu);
    l = v3_min(l, gl);
    u = v3_max(u, gu);
    any = true;
  }
  if (!any)
    return LCP_ERR_NOT_FOUND;
  if (lo)
    v3_store(l, lo);
  if (hi)
    v3_store(u, hi);
  return LCP_OK;
}
