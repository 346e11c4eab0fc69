/* SPDX-License-Identifier: Apache-2.0 */
/* Read-only queries of the geoms as the engine holds them: their owners,
 * shapes and sizes, poses in their owners' frames, and the hulls as built,
 * so that what a viewer draws is what the step collides. */
#include "world_internal.h"

int32_t lcp_world_geom_count(const lcp_world_t *world) { return world->model.geom_count; }

int32_t lcp_world_geom_ids(const lcp_world_t *world, lcp_geom_id *out_ids, int32_t capacity) {
  int32_t n = world->model.geom_count < capacity ? world->model.geom_count : capacity;
  for (int32_t i = 0; i < n; ++i)
    out_ids[i] = world->model.geoms[i].id;
  return n;
}

/* A convex polygon of k vertices is cut into the fan of k - 2 triangles
 * from its first vertex, which keeps the polygon's winding. */
static int32_t hull_triangle_count(const hull *h) {
  int32_t count = 0;
  for (int32_t f = 0; f < h->face_count; ++f)
    count += h->faces[f].vertex_count - 2;
  return count;
}

int lcp_geom_get_info(const lcp_world_t *world, lcp_geom_id id, lcp_geom_info_t *out) {
  int32_t slot = id_pool_slot(&world->model.geom_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const geom_model *g = &world->model.geoms[slot];
  *out = (lcp_geom_info_t){.body = g->body,
                           .robot = g->robot,
                           .link = g->robot == LCP_NULL_ID ? -1 : g->link,
                           .type = g->shape.type,
                           .radius = g->shape.radius,
                           .half_length = g->shape.half_length};
  v3_store(g->local.p, out->local_position);
  q_store(g->local.q, out->local_orientation);
  v3_store(g->shape.half_extents, out->half_extents);
  if (g->shape.type == LCP_SHAPE_HULL && g->hull) {
    out->hull_vertex_count = g->hull->vertex_count;
    out->hull_triangle_count = hull_triangle_count(g->hull);
  }
  return LCP_OK;
}

int lcp_geom_get_hull(const lcp_world_t *world, lcp_geom_id id, double *vertices,
                      int32_t vertex_capacity, int32_t *triangles, int32_t triangle_capacity) {
  int32_t slot = id_pool_slot(&world->model.geom_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const hull *h = world->model.geoms[slot].hull;
  if (world->model.geoms[slot].shape.type != LCP_SHAPE_HULL || !h ||
      vertex_capacity < h->vertex_count || triangle_capacity < hull_triangle_count(h))
    return LCP_ERR_INVALID_ARGUMENT;
  for (int32_t i = 0; i < h->vertex_count; ++i)
    v3_store(h->vertices[i], vertices + 3 * i);
  int32_t t = 0;
  for (int32_t f = 0; f < h->face_count; ++f) {
    const int32_t *loop = h->face_vertices + h->faces[f].first_index;
    for (int32_t k = 1; k + 1 < h->faces[f].vertex_count; ++k, ++t) {
      triangles[3 * t] = loop[0];
      triangles[3 * t + 1] = loop[k];
      triangles[3 * t + 2] = loop[k + 1];
    }
  }
  return LCP_OK;
}
