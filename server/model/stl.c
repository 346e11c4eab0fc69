/* SPDX-License-Identifier: Apache-2.0 */
/* STL reading for URDF collision meshes (lcpsim/urdf.h): binary and ASCII.
 *
 * A collision mesh becomes a convex hull of its vertices, so the distinct
 * vertices are what lcp_stl_load returns; the triangles (as indices into
 * them) are kept only for the loader's convexity check (mesh.h). Normals and
 * the solid's name are read, to check the file, and dropped.
 *
 * STL keeps this reader of its own rather than going through assimp with the
 * other formats: it reports a bad number with its line, and tells binary
 * from ASCII files by their size (a binary file may begin with "solid"). */
#include "mesh.h"

#include "lcpsim/urdf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lcp__mesh_interrupted(const lcp__mesh_read_t *how) {
  return how && how->interrupted && how->interrupted(how->interrupted_user);
}

/* How often the parsers poll for an interruption, in triangles. */
#define INTERRUPT_POLL_TRIANGLES 16384

static int interrupted_error(const char *path, char *error, size_t error_size) {
  return lcp__model_error(error, error_size, LCP_ERR_STATE, "%s: interrupted", path);
}

typedef struct vertex_key {
  double p[3];
  int32_t index;
} vertex_key;

static int compare_keys(const void *a, const void *b) {
  const vertex_key *u = a, *v = b;
  for (int k = 0; k < 3; ++k) {
    if (u->p[k] < v->p[k])
      return -1;
    if (u->p[k] > v->p[k])
      return 1;
  }
  return (u->index > v->index) - (u->index < v->index);
}

/* Keeps the first appearance of every vertex, in file order, so the result
 * does not depend on the sort (deterministic either way). Exact equality is
 * right here: STL repeats shared vertices bit for bit. index_of (may be NULL)
 * gets, for every raw vertex, the index of its distinct vertex. */
static int dedup(const double *raw, int32_t n, double **points, int32_t *count, int32_t *index_of) {
  vertex_key *keys = malloc((size_t)n * sizeof *keys);
  int32_t *first = malloc((size_t)n * sizeof *first); /* the run's first raw vertex */
  int32_t *out_index = malloc((size_t)n * sizeof *out_index);
  if (!keys || !first || !out_index) {
    free(keys);
    free(first);
    free(out_index);
    return LCP_ERR_NO_MEMORY;
  }
  for (int32_t i = 0; i < n; ++i) {
    memcpy(keys[i].p, &raw[3 * i], sizeof keys[i].p);
    keys[i].index = i;
  }
  qsort(keys, (size_t)n, sizeof *keys, compare_keys);
  int32_t distinct = 0, run = -1;
  for (int32_t i = 0; i < n; ++i) {
    const double *a = keys[i].p, *b = i > 0 ? keys[i - 1].p : NULL;
    if (!b || a[0] != b[0] || a[1] != b[1] || a[2] != b[2]) {
      run = keys[i].index; /* equal keys are sorted by index: the first comes first */
      ++distinct;
    }
    first[keys[i].index] = run;
  }
  free(keys);
  double *out = malloc((size_t)distinct * 3 * sizeof *out);
  if (!out) {
    free(first);
    free(out_index);
    return LCP_ERR_NO_MEMORY;
  }
  int32_t j = 0;
  for (int32_t i = 0; i < n; ++i)
    if (first[i] == i) {
      memcpy(&out[3 * j], &raw[3 * i], 3 * sizeof *out);
      out_index[i] = j++;
    }
  if (index_of)
    for (int32_t i = 0; i < n; ++i)
      index_of[i] = out_index[first[i]];
  free(first);
  free(out_index);
  *points = out;
  *count = distinct;
  return LCP_OK;
}

static float read_f32_le(const unsigned char *b) {
  uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static int parse_binary(const char *path, const unsigned char *data, uint32_t triangles,
                        const lcp__mesh_read_t *how, double *raw, char *error, size_t error_size) {
  for (uint32_t t = 0; t < triangles; ++t) {
    if (t % INTERRUPT_POLL_TRIANGLES == INTERRUPT_POLL_TRIANGLES - 1 && lcp__mesh_interrupted(how))
      return interrupted_error(path, error, error_size);
    /* 12 bytes of normal, 3 × 12 bytes of vertices, 2 bytes of attributes. */
    const unsigned char *tri = data + 84 + 50 * (size_t)t;
    for (int v = 0; v < 3; ++v)
      for (int k = 0; k < 3; ++k) {
        double x = read_f32_le(tri + 12 + 12 * v + 4 * k);
        if (!isfinite(x))
          return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                                  "%s: triangle %u has a non-finite vertex coordinate", path,
                                  (unsigned)t);
        raw[9 * (size_t)t + 3 * (size_t)v + (size_t)k] = x;
      }
  }
  return LCP_OK;
}

/* ASCII tokens: whitespace-separated words, with the line of each. */
typedef struct ascii_reader {
  const char *path;
  const char *p;
  int line;
  bool quote_content; /* whether a message may quote the word found */
  const lcp__mesh_read_t *how;
  char *error;
  size_t error_size;
} ascii_reader;

static void skip_space(ascii_reader *r) {
  while (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n' || *r->p == '\f' ||
         *r->p == '\v') {
    if (*r->p == '\n')
      ++r->line;
    ++r->p;
  }
}

static bool is_space_or_end(char c) {
  return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Consumes the word if it is the next token (case-insensitive, as some
 * exporters write "FACET NORMAL"). */
static bool accept_word(ascii_reader *r, const char *word) {
  skip_space(r);
  size_t n = strlen(word);
  for (size_t i = 0; i < n; ++i) {
    char c = r->p[i];
    if (c >= 'A' && c <= 'Z')
      c = (char)(c - 'A' + 'a');
    if (c != word[i])
      return false;
  }
  if (!is_space_or_end(r->p[n]))
    return false;
  r->p += n;
  return true;
}

/* "expected X, found Y"; Y (the file's next word) only when it may be
 * quoted. */
static int unexpected(ascii_reader *r, const char *expected) {
  int len = 0;
  while (!is_space_or_end(r->p[len]) && len < 32)
    ++len;
  if (!r->quote_content)
    return lcp__model_error(r->error, r->error_size, LCP_ERR_INVALID_ARGUMENT,
                            "%s:%d: expected %s%s%s, found %s", r->path, r->line,
                            expected[0] == 'a' ? "" : "'", expected, expected[0] == 'a' ? "" : "'",
                            len ? "something else" : "the end of the file");
  return lcp__model_error(r->error, r->error_size, LCP_ERR_INVALID_ARGUMENT,
                          "%s:%d: expected %s%s%s, found '%.*s'", r->path, r->line,
                          expected[0] == 'a' ? "" : "'", expected, expected[0] == 'a' ? "" : "'",
                          len, len ? r->p : "end of file");
}

static int expect_word(ascii_reader *r, const char *word) {
  if (accept_word(r, word))
    return LCP_OK;
  return unexpected(r, word);
}

static int expect_number(ascii_reader *r, double *out) {
  skip_space(r);
  char *end = NULL;
  double x = strtod(r->p, &end);
  if (end == r->p || !is_space_or_end(*end) || !isfinite(x))
    return unexpected(r, "a finite number");
  r->p = end;
  *out = x;
  return LCP_OK;
}

static void skip_line(ascii_reader *r) {
  while (*r->p && *r->p != '\n')
    ++r->p;
}

static int parse_ascii(const char *path, const char *text, const lcp__mesh_read_t *how,
                       double **raw, int32_t *n, char *error, size_t error_size) {
  ascii_reader r = {path, text, 1, !how || how->quote_content, how, error, error_size};
  size_t cap = 0, len = 0;
  double *v = NULL;
  int rc = LCP_OK;
  /* One or more solids, each "solid name ... endsolid name". */
  bool any_solid = false;
  while (rc == LCP_OK) {
    skip_space(&r);
    if (*r.p == '\0' && any_solid)
      break;
    if ((rc = expect_word(&r, "solid")) != LCP_OK)
      break;
    any_solid = true;
    skip_line(&r); /* the solid's name */
    while (rc == LCP_OK && !accept_word(&r, "endsolid")) {
      double x[3];
      if (len % (9 * INTERRUPT_POLL_TRIANGLES) == 9 * INTERRUPT_POLL_TRIANGLES - 9 &&
          lcp__mesh_interrupted(how)) {
        rc = interrupted_error(path, error, error_size);
        break;
      }
      if ((rc = expect_word(&r, "facet")) != LCP_OK || (rc = expect_word(&r, "normal")) != LCP_OK)
        break;
      for (int k = 0; k < 3 && rc == LCP_OK; ++k)
        rc = expect_number(&r, &x[k]);
      if (rc != LCP_OK || (rc = expect_word(&r, "outer")) != LCP_OK ||
          (rc = expect_word(&r, "loop")) != LCP_OK)
        break;
      for (int corner = 0; corner < 3 && rc == LCP_OK; ++corner) {
        if ((rc = expect_word(&r, "vertex")) != LCP_OK)
          break;
        if (len + 3 > cap) {
          size_t bigger_cap = cap ? 2 * cap : 96;
          if (bigger_cap > (size_t)INT32_MAX) {
            rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                                  "%s: too many vertices", path);
            break;
          }
          double *bigger = realloc(v, bigger_cap * sizeof *v);
          if (!bigger) {
            rc = LCP_ERR_NO_MEMORY;
            break;
          }
          v = bigger;
          cap = bigger_cap;
        }
        for (int k = 0; k < 3 && rc == LCP_OK; ++k)
          rc = expect_number(&r, &v[len + (size_t)k]);
        len += 3;
      }
      if (rc == LCP_OK && (rc = expect_word(&r, "endloop")) == LCP_OK)
        rc = expect_word(&r, "endfacet");
    }
    if (rc == LCP_OK)
      skip_line(&r); /* the name after endsolid */
  }
  if (rc == LCP_OK && len == 0)
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: no triangles", path);
  if (rc != LCP_OK) {
    free(v);
    return rc;
  }
  *raw = v;
  *n = (int32_t)(len / 3);
  return LCP_OK;
}

int lcp__stl_parse_mesh(const char *path, const char *data, size_t size,
                        const lcp__mesh_read_t *how, double **points, int32_t *count,
                        int32_t **triangles, int32_t *triangle_count, char *error,
                        size_t error_size) {
  if (error && error_size > 0)
    error[0] = '\0';
  if (!path || !data || !points || !count)
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "lcp_stl_load: NULL argument");
  *points = NULL;
  *count = 0;
  if (triangles)
    *triangles = NULL;
  if (triangle_count)
    *triangle_count = 0;
  int rc = LCP_OK;
  const unsigned char *bytes = (const unsigned char *)data;
  double *raw = NULL;
  int32_t n = 0;
  /* Binary files may also begin with "solid" (many exporters write it into
   * the header), so the size test comes first: a binary STL is exactly
   * 84 + 50 × triangles bytes. */
  uint32_t binary_triangles = 0;
  if (size >= 84)
    binary_triangles = (uint32_t)bytes[80] | (uint32_t)bytes[81] << 8 | (uint32_t)bytes[82] << 16 |
                       (uint32_t)bytes[83] << 24;
  if (size >= 84 && (uint64_t)size == 84 + 50 * (uint64_t)binary_triangles) {
    if (binary_triangles == 0)
      rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: no triangles", path);
    else if ((uint64_t)binary_triangles * 9 > (uint64_t)INT32_MAX)
      rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: too many triangles",
                            path);
    else if (!(raw = malloc((size_t)binary_triangles * 9 * sizeof *raw)))
      rc = LCP_ERR_NO_MEMORY;
    else {
      rc = parse_binary(path, bytes, binary_triangles, how, raw, error, error_size);
      n = (int32_t)binary_triangles * 3;
    }
  } else {
    const char *p = data;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      ++p;
    if (strncmp(p, "solid", 5) == 0 && strlen(data) == size)
      rc = parse_ascii(path, data, how, &raw, &n, error, error_size);
    else if (size >= 84 && (!how || how->quote_content))
      rc = lcp__model_error(
          error, error_size, LCP_ERR_INVALID_ARGUMENT,
          "%s: not an STL file (binary STL of %u triangles needs %llu bytes, the file "
          "has %zu)",
          path, (unsigned)binary_triangles, 84 + 50 * (unsigned long long)binary_triangles, size);
    else
      rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: not an STL file",
                            path);
  }
  /* Every three raw vertices are a triangle: its corners' distinct indices. */
  int32_t *corners = NULL;
  if (rc == LCP_OK && triangles && !(corners = malloc((size_t)(n > 0 ? n : 1) * sizeof *corners)))
    rc = LCP_ERR_NO_MEMORY;
  if (rc == LCP_OK && lcp__mesh_interrupted(how))
    rc = interrupted_error(path, error, error_size);
  if (rc == LCP_OK)
    rc = dedup(raw, n, points, count, corners);
  free(raw);
  if (rc == LCP_OK && triangles) {
    *triangles = corners;
    if (triangle_count)
      *triangle_count = n / 3;
  } else {
    free(corners);
  }
  return rc;
}

int lcp_stl_load(const char *path, double **points, int32_t *count, char *error,
                 size_t error_size) {
  if (!points || !count)
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "lcp_stl_load: NULL argument");
  *points = NULL;
  *count = 0;
  char *data = NULL;
  size_t size = 0;
  int rc =
      lcp_file_read(path, NULL, LCP_FILE_MAX_MESH_BYTES, &data, &size, NULL, error, error_size);
  if (rc == LCP_OK)
    rc = lcp__stl_parse_mesh(path, data, size, NULL, points, count, NULL, NULL, error, error_size);
  free(data);
  return rc;
}
