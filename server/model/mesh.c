/* SPDX-License-Identifier: Apache-2.0 */
/* Collision meshes (mesh.h): STL by stl.c, the other formats by assimp. */
#include "mesh.h"

#include "lcpsim/lcpsim.h"

#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool has_suffix_ci(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  if (a < b)
    return false;
  for (size_t i = 0; i < b; ++i) {
    char c = s[a - b + i];
    if (c >= 'A' && c <= 'Z')
      c = (char)(c - 'A' + 'a');
    if (c != suffix[i])
      return false;
  }
  return true;
}

void lcp__mesh_free(lcp__mesh_t *mesh) {
  free(mesh->points);
  free(mesh->triangles);
  memset(mesh, 0, sizeof *mesh);
}

/* Every triangle of every mesh of the scene, its vertices in the scene's
 * root frame (aiProcess_PreTransformVertices bakes the node transforms, the
 * COLLADA <unit> scale among them, into the vertices). Vertices are kept per
 * mesh as assimp joined them; duplicates across meshes do no harm to a hull. */
static int from_scene(const char *path, const struct aiScene *scene, lcp__mesh_t *out, char *error,
                      size_t error_size) {
  uint64_t vertices = 0, triangles = 0;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const struct aiMesh *mesh = scene->mMeshes[m];
    if (!(mesh->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
      continue;
    vertices += mesh->mNumVertices;
    for (unsigned f = 0; f < mesh->mNumFaces; ++f)
      triangles += mesh->mFaces[f].mNumIndices == 3;
  }
  if (triangles == 0)
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: no triangles", path);
  if (vertices > (uint64_t)INT32_MAX / 3 || triangles > (uint64_t)INT32_MAX / 3)
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: too many triangles",
                            path);
  out->points = malloc((size_t)vertices * 3 * sizeof *out->points);
  out->triangles = malloc((size_t)triangles * 3 * sizeof *out->triangles);
  if (!out->points || !out->triangles) {
    lcp__mesh_free(out);
    return LCP_ERR_NO_MEMORY;
  }
  int32_t base = 0, t = 0;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const struct aiMesh *mesh = scene->mMeshes[m];
    if (!(mesh->mPrimitiveTypes & aiPrimitiveType_TRIANGLE))
      continue;
    for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
      const struct aiVector3D *p = &mesh->mVertices[v];
      double *q = &out->points[3 * (size_t)(base + (int32_t)v)];
      q[0] = p->x, q[1] = p->y, q[2] = p->z;
      if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2])) {
        lcp__mesh_free(out);
        return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                                "%s: a vertex has a non-finite coordinate", path);
      }
    }
    for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
      const struct aiFace *face = &mesh->mFaces[f];
      if (face->mNumIndices != 3)
        continue; /* points and lines of a mixed mesh bound nothing */
      for (int k = 0; k < 3; ++k)
        out->triangles[3 * (size_t)t + (size_t)k] = base + (int32_t)face->mIndices[k];
      ++t;
    }
    base += (int32_t)mesh->mNumVertices;
  }
  out->count = base;
  out->triangle_count = t;
  return LCP_OK;
}

/* ---- assimp on bytes already read ----
 * assimp is given an aiFileIO that serves the one file, from memory, under
 * a made-up name with the file's extension (which tells assimp the format),
 * and refuses every other name: a mesh's references to other files (an
 * OBJ's mtllib, say) are never opened, so assimp reads nothing the file
 * rules did not allow. */

typedef struct memory_file {
  const char *data;
  size_t size, position;
} memory_file;

static size_t memory_read(struct aiFile *file, char *buffer, size_t size, size_t count) {
  memory_file *m = (memory_file *)file->UserData;
  if (size == 0)
    return 0;
  size_t items = (m->size - m->position) / size;
  if (items > count)
    items = count;
  memcpy(buffer, m->data + m->position, items * size);
  m->position += items * size;
  return items;
}

static size_t memory_write(struct aiFile *file, const char *buffer, size_t size, size_t count) {
  (void)file, (void)buffer, (void)size, (void)count;
  return 0;
}

static size_t memory_tell(struct aiFile *file) { return ((memory_file *)file->UserData)->position; }

static size_t memory_size(struct aiFile *file) { return ((memory_file *)file->UserData)->size; }

static enum aiReturn memory_seek(struct aiFile *file, size_t offset, enum aiOrigin origin) {
  memory_file *m = (memory_file *)file->UserData;
  size_t base = origin == aiOrigin_SET ? 0 : origin == aiOrigin_CUR ? m->position : m->size;
  if (offset > m->size - base)
    return aiReturn_FAILURE;
  m->position = base + offset;
  return aiReturn_SUCCESS;
}

static void memory_flush(struct aiFile *file) { (void)file; }

typedef struct memory_io {
  const char *name; /* the one name served */
  const char *data;
  size_t size;
} memory_io;

static struct aiFile *memory_open(struct aiFileIO *io, const char *name, const char *mode) {
  const memory_io *source = (const memory_io *)io->UserData;
  if (strcmp(name, source->name) != 0 || !mode || mode[0] != 'r')
    return NULL;
  struct aiFile *file = calloc(1, sizeof *file);
  memory_file *m = calloc(1, sizeof *m);
  if (!file || !m) {
    free(file);
    free(m);
    return NULL;
  }
  *m = (memory_file){source->data, source->size, 0};
  *file = (struct aiFile){memory_read, memory_write, memory_tell,  memory_size,
                          memory_seek, memory_flush, (aiUserData)m};
  return file;
}

static void memory_close(struct aiFileIO *io, struct aiFile *file) {
  (void)io;
  if (file) {
    free(file->UserData);
    free(file);
  }
}

/* The extension of path's last component, "" when it has none. */
static const char *extension_of(const char *path) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  return dot && dot != base ? dot + 1 : "";
}

static int load_with_assimp(const char *path, const char *data, size_t size, bool quote_content,
                            lcp__mesh_t *out, char *error, size_t error_size) {
  const char *extension = extension_of(path);
  if (!extension[0] || strlen(extension) > 16 || strchr(extension, '/'))
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "%s: no file extension to tell the mesh's format by", path);
  char name[32];
  snprintf(name, sizeof name, "mesh.%s", extension);
  memory_io source = {name, data, size};
  struct aiFileIO io = {memory_open, memory_close, (aiUserData)&source};
  struct aiPropertyStore *props = aiCreatePropertyStore();
  if (!props)
    return LCP_ERR_NO_MEMORY;
  /* A URDF mesh is in its link's frame as written: a COLLADA file's up axis
   * is not turned into assimp's y-up (RViz and Gazebo read them this way). */
  aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
  /* Only positions are needed: no normals, colours, texture coordinates. */
  aiSetImportPropertyInteger(
      props, AI_CONFIG_PP_RVC_FLAGS,
      aiComponent_NORMALS | aiComponent_TANGENTS_AND_BITANGENTS | aiComponent_COLORS |
          aiComponent_TEXCOORDS | aiComponent_BONEWEIGHTS | aiComponent_ANIMATIONS |
          aiComponent_TEXTURES | aiComponent_LIGHTS | aiComponent_CAMERAS | aiComponent_MATERIALS);
  const unsigned flags = aiProcess_RemoveComponent | aiProcess_Triangulate |
                         aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices |
                         aiProcess_SortByPType;
  const struct aiScene *scene = aiImportFileExWithProperties(name, flags, &io, props);
  aiReleasePropertyStore(props);
  if (!scene) {
    const char *why = aiGetErrorString();
    if (!quote_content) /* assimp's messages may quote the file */
      return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                              "%s: cannot read the mesh (not a valid .%s file)", path, extension);
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "%s: cannot read the mesh (%s)", path,
                            why && why[0] ? why : "assimp gave no reason");
  }
  int rc = from_scene(path, scene, out, error, error_size);
  aiReleaseImport(scene);
  return rc;
}

int lcp__mesh_load(const char *path, lcp__mesh_read_t *how, lcp__mesh_t *out, char *error,
                   size_t error_size) {
  memset(out, 0, sizeof *out);
  if (error && error_size > 0)
    error[0] = '\0';
  size_t max_bytes = how && how->max_bytes ? how->max_bytes : LCP_FILE_MAX_MESH_BYTES;
  bool quote_content = !how || how->quote_content;
  char *data = NULL;
  size_t size = 0;
  int rc = lcp_file_read(path, how ? how->rules : NULL, max_bytes, &data, &size, NULL, error,
                         error_size);
  if (rc != LCP_OK)
    return rc;
  if (how)
    how->bytes_read = size;
  if (has_suffix_ci(path, ".stl"))
    rc = lcp__stl_parse_mesh(path, data, size, how, &out->points, &out->count, &out->triangles,
                             &out->triangle_count, error, error_size);
  else
    rc = load_with_assimp(path, data, size, quote_content, out, error, error_size);
  free(data);
  return rc;
}

/* Above this many vertex-plane tests, the check would take too long for a
 * load; such meshes are taken as not convex (they become hulls either way). */
#define CONVEXITY_TEST_LIMIT 200000000.0

lcp__convexity_t lcp__mesh_convexity(const lcp__mesh_t *mesh) {
  if ((double)mesh->count * (double)mesh->triangle_count > CONVEXITY_TEST_LIMIT)
    return LCP__MESH_UNCHECKED;
  const double *p = mesh->points;
  double extent = 0.0;
  for (int32_t i = 0; i < mesh->count; ++i)
    for (int k = 0; k < 3; ++k)
      extent = fmax(extent, fabs(p[3 * i + k] - p[k]));
  /* Coordinates of meshes are written with about 6 significant digits. */
  double tol = 1e-6 * extent;
  for (int32_t t = 0; t < mesh->triangle_count; ++t) {
    const double *a = &p[3 * mesh->triangles[3 * t]], *b = &p[3 * mesh->triangles[3 * t + 1]],
                 *c = &p[3 * mesh->triangles[3 * t + 2]];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]},
           v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len > 1e-12 * extent * extent))
      continue; /* a sliver has no plane of its own */
    double above = 0.0, below = 0.0;
    for (int32_t i = 0; i < mesh->count; ++i) {
      double h =
          ((p[3 * i] - a[0]) * n[0] + (p[3 * i + 1] - a[1]) * n[1] + (p[3 * i + 2] - a[2]) * n[2]) /
          len;
      above = fmax(above, h);
      below = fmin(below, h);
      if (above > tol && below < -tol)
        return LCP__MESH_NOT_CONVEX;
    }
  }
  return LCP__MESH_CONVEX;
}
