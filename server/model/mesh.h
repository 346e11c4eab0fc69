/* SPDX-License-Identifier: Apache-2.0 */
/* Collision meshes for URDF: STL by the reader in stl.c, every other format
 * (OBJ, COLLADA .dae, and what else assimp reads) through assimp; and the
 * test of whether a mesh is convex, since the engine collides with the
 * convex hull of a mesh's vertices. */
#ifndef LCP_MODEL_MESH_H
#define LCP_MODEL_MESH_H

#include "safe_file.h"

#include "lcpsim/urdf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A mesh's distinct vertices (count × 3 doubles) and its triangles
 * (triangle_count × 3 vertex indices), both malloc'd. Errors are
 * LCP_ERR_NOT_FOUND (no such file), LCP_ERR_INVALID_ARGUMENT (unreadable or
 * no triangles) with a message in error, LCP_ERR_NO_MEMORY. */
typedef struct lcp__mesh {
  double *points;
  int32_t count;
  int32_t *triangles;
  int32_t triangle_count;
} lcp__mesh_t;

/* How a mesh file is read: which files may be (rules, lcp_file_read), the
 * largest (max_bytes, 0: LCP_FILE_MAX_MESH_BYTES), and whether messages may
 * quote the file's bytes (quote_content: false for files a remote peer
 * named, whose contents must not leak into a reply). */
typedef struct lcp__mesh_read {
  const lcp_file_rules_t *rules;
  size_t max_bytes;
  bool quote_content;
  size_t bytes_read; /* out: the file's size, once read */
  /* Polled while a large mesh is parsed (lcp_urdf_options_t, interrupted);
   * NULL: never. */
  bool (*interrupted)(void *user);
  void *interrupted_user;
} lcp__mesh_read_t;

/* Whether the load the mesh belongs to was interrupted (how may be NULL). */
bool lcp__mesh_interrupted(const lcp__mesh_read_t *how);

/* Reads the mesh file at path (read through lcp_file_read, so assimp never
 * opens a file itself: a file a mesh refers to, such as an OBJ's material
 * library, is not read). Messages begin with path. */
int lcp__mesh_load(const char *path, lcp__mesh_read_t *how, lcp__mesh_t *out, char *error,
                   size_t error_size);
void lcp__mesh_free(lcp__mesh_t *mesh);

/* The STL reader on a file's bytes (data[size] is a NUL), with the
 * triangles kept (lcp_stl_load drops them); triangles and triangle_count may
 * be NULL. label names the file in messages; how (may be NULL: quoting
 * allowed, never interrupted) as above. */
int lcp__stl_parse_mesh(const char *label, const char *data, size_t size,
                        const lcp__mesh_read_t *how, double **points, int32_t *count,
                        int32_t **triangles, int32_t *triangle_count, char *error,
                        size_t error_size);

typedef enum lcp__convexity {
  LCP__MESH_CONVEX = 0,
  LCP__MESH_NOT_CONVEX = 1,
  LCP__MESH_UNCHECKED = 2, /* too large to test in reasonable time */
} lcp__convexity_t;

/* Whether the mesh bounds a convex solid: every triangle's plane has all the
 * vertices on one side of it (within a tolerance relative to the mesh's
 * size), which for a closed surface is convexity. Winding is not trusted. */
lcp__convexity_t lcp__mesh_convexity(const lcp__mesh_t *mesh);

#endif
