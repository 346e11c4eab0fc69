/* SPDX-License-Identifier: Apache-2.0 */
/* URDF loading with libxml2 (lcpsim/urdf.h).
 *
 * Three passes: read the document into flat tables of links, joints and
 * geoms (every value checked where it is read, so each error carries the line
 * of its element); resolve names into a tree and order it depth-first from
 * the root; then merge fixed joints and build the lcp_robot_def_t. */
#define _XOPEN_SOURCE 700 /* realpath (an XSI interface in glibc) */

#include "lcpsim/urdf.h"

#include "mesh.h"
#include "safe_file.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small rigid-transform algebra, on the engine's quaternion functions ---- */

typedef struct xform {
  double p[3];
  double q[4]; /* w, x, y, z */
} xform;

static xform xf_identity(void) { return (xform){{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0, 0.0}}; }

static void mat_vec(const double R[9], const double v[3], double out[3]) {
  double r[3] = {R[0] * v[0] + R[1] * v[1] + R[2] * v[2], R[3] * v[0] + R[4] * v[1] + R[5] * v[2],
                 R[6] * v[0] + R[7] * v[1] + R[8] * v[2]};
  memcpy(out, r, sizeof r);
}

/* R I Rᵀ: an inertia tensor re-expressed in rotated axes. */
static void rotate_inertia(const double R[9], const double I[9], double out[9]) {
  double t[9], r[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      t[3 * i + j] = R[3 * i] * I[j] + R[3 * i + 1] * I[3 + j] + R[3 * i + 2] * I[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r[3 * i + j] =
          t[3 * i] * R[3 * j] + t[3 * i + 1] * R[3 * j + 1] + t[3 * i + 2] * R[3 * j + 2];
  memcpy(out, r, sizeof r);
}

/* a ∘ b: b's frame given in a's frame, expressed in a's parent frame. */
static xform xf_compose(const xform *a, const xform *b) {
  xform r;
  double R[9];
  lcp_quat_to_matrix(a->q, R);
  mat_vec(R, b->p, r.p);
  for (int k = 0; k < 3; ++k)
    r.p[k] += a->p[k];
  lcp_quat_multiply(a->q, b->q, r.q);
  double n = sqrt(r.q[0] * r.q[0] + r.q[1] * r.q[1] + r.q[2] * r.q[2] + r.q[3] * r.q[3]);
  for (int k = 0; k < 4; ++k)
    r.q[k] /= n;
  return r;
}

/* Symmetric 3×3 positive semidefinite (strict: positive definite) by its
 * principal minors, with a tolerance relative to the trace so that round-off
 * in a file's last digit does not reject a valid inertia. */
static bool inertia_ok(const double I[9], bool strict) {
  double tr = I[0] + I[4] + I[8];
  if (!(tr > 0.0))
    return !strict && tr == 0.0 && I[0] == 0.0 && I[4] == 0.0 && I[8] == 0.0 && I[1] == 0.0 &&
           I[2] == 0.0 && I[5] == 0.0;
  double t1 = 1e-12 * tr, t2 = t1 * tr, t3 = t2 * tr;
  double m2[3] = {I[0] * I[4] - I[1] * I[3], I[0] * I[8] - I[2] * I[6], I[4] * I[8] - I[5] * I[7]};
  double det = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
               I[2] * (I[3] * I[7] - I[4] * I[6]);
  if (strict)
    return I[0] > t1 && m2[0] > t2 && det > t3;
  return I[0] >= -t1 && I[4] >= -t1 && I[8] >= -t1 && m2[0] >= -t2 && m2[1] >= -t2 &&
         m2[2] >= -t2 && det >= -t3;
}

/* ---- the flat tables read from the document ---- */

typedef enum ujoint_type {
  UJ_FIXED,
  UJ_REVOLUTE,
  UJ_CONTINUOUS,
  UJ_PRISMATIC,
  UJ_FLOATING
} ujoint_type;

typedef struct ulink {
  char name[LCP_NAME_MAX];
  long line;
  bool has_inertial;
  long inertial_line;
  double mass, com[3], inertia[9]; /* link frame; inertia about the com */
  int32_t parent_joint;            /* -1: none (a root) */
} ulink;

typedef struct ujoint {
  char name[LCP_NAME_MAX];
  long line;
  ujoint_type type;
  char parent_name[LCP_NAME_MAX], child_name[LCP_NAME_MAX];
  long parent_line, child_line;
  int32_t parent, child;
  xform origin;
  double axis[3];
  double lower, upper, effort, velocity, damping, friction;
} ujoint;

typedef struct ugeom {
  int32_t link;
  lcp_geom_def_t def; /* hull_points malloc'd, owned until moved into the def */
} ugeom;

typedef struct loader {
  const char *file;     /* for messages: the path, or "<string>" */
  const char *base_dir; /* relative mesh paths; NULL: working directory */
  lcp_urdf_options_t opt;
  /* Whether messages may quote the document's text (its XML errors, root
   * element, values that do not parse): not for a file a remote peer named
   * (lcp_urdf_options_t, files). */
  bool quote_document;
  size_t mesh_bytes;  /* read so far, for opt.max_total_mesh_bytes */
  int32_t mesh_files; /* read so far, for opt.max_mesh_files */
  char *error;
  size_t error_size;
  bool failed;
  char robot_name[LCP_NAME_MAX];
  long robot_line;
  ulink *links;
  int32_t link_count, link_cap;
  ujoint *joints;
  int32_t joint_count, joint_cap;
  ugeom *geoms;
  int32_t geom_count, geom_cap;
} loader;

static void loader_free(loader *L) {
  for (int32_t i = 0; i < L->geom_count; ++i)
    free((void *)L->geoms[i].def.hull_points);
  free(L->links);
  free(L->joints);
  free(L->geoms);
}

/* Records the first error as "FILE:LINE: message" and returns status. */
static int fail(loader *L, long line, int status, const char *fmt, ...) {
  if (!L->failed && L->error && L->error_size > 0) {
    int n = line > 0 ? snprintf(L->error, L->error_size, "%s:%ld: ", L->file, line)
                     : snprintf(L->error, L->error_size, "%s: ", L->file);
    if (n >= 0 && (size_t)n < L->error_size) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(L->error + n, L->error_size - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  L->failed = true;
  return status;
}

static void warn(loader *L, long line, const char *fmt, ...) {
  if (!L->opt.log)
    return;
  char msg[512];
  int n = snprintf(msg, sizeof msg, "%s:%ld: ", L->file, line);
  if (n < 0 || (size_t)n >= sizeof msg)
    n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  L->opt.log(L->opt.log_user, LCP_LOG_WARNING, msg);
}

static int grow(void **items, int32_t *cap, int32_t need, size_t item_size) {
  if (need <= *cap)
    return LCP_OK;
  if (need > INT32_MAX / 2)
    return LCP_ERR_NO_MEMORY;
  int32_t n = *cap ? *cap : 8;
  while (n < need)
    n *= 2;
  void *p = realloc(*items, (size_t)n * item_size);
  if (!p)
    return LCP_ERR_NO_MEMORY;
  *items = p;
  *cap = n;
  return LCP_OK;
}

/* ---- reading elements and attributes ---- */

static long line_of(const xmlNode *n) { return xmlGetLineNo(n); }

/* Element n is <name> without a namespace prefix (xacro:..., drake:... are
 * not URDF). */
static bool is_element(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !(n->ns && n->ns->prefix) &&
         strcmp((const char *)n->name, name) == 0;
}

/* "<prefix:name>" for messages. */
static void element_label(const xmlNode *n, char *buf, size_t size) {
  if (n->ns && n->ns->prefix)
    snprintf(buf, size, "<%s:%s>", (const char *)n->ns->prefix, (const char *)n->name);
  else
    snprintf(buf, size, "<%s>", (const char *)n->name);
}

static void warn_ignored(loader *L, const xmlNode *n, const char *context, bool known) {
  char label[96];
  element_label(n, label, sizeof label);
  if (known)
    warn(L, line_of(n), "%s is not supported by lcpsim; ignored", label);
  else
    warn(L, line_of(n), "unknown element %s in %s; ignored", label, context);
}

/* The one child <name> of n, NULL if none; a second one is an error. */
static int only_child(loader *L, const xmlNode *n, const char *name, const char *owner,
                      xmlNode **out) {
  *out = NULL;
  for (xmlNode *c = n->children; c; c = c->next)
    if (is_element(c, name)) {
      if (*out)
        return fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT, "%s has a second <%s>", owner, name);
      *out = c;
    }
  return LCP_OK;
}

/* Attribute value (xmlFree it) or NULL when absent; required → error. */
static int get_attr(loader *L, const xmlNode *n, const char *attr, bool required, xmlChar **out) {
  *out = xmlGetNoNsProp(n, (const xmlChar *)attr);
  if (!*out && required)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT, "<%s> is missing attribute '%s'",
                (const char *)n->name, attr);
  return LCP_OK;
}

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Exactly count whitespace-separated finite numbers; names the attribute and
 * the bad text otherwise. "nan", "inf", "1e999" and "1.0abc" are rejected. */
static int parse_numbers(loader *L, const xmlNode *n, const char *attr, const char *text,
                         double *out, int count) {
  const char *p = text;
  int got = 0;
  for (;;) {
    while (is_space(*p))
      ++p;
    if (!*p)
      break;
    const char *start = p;
    while (*p && !is_space(*p))
      ++p;
    int len = (int)(p - start);
    char *end = NULL;
    double x = strtod(start, &end);
    if ((end != p || !isfinite(x)) && !L->quote_document)
      return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                  "<%s> attribute '%s': not a finite number", (const char *)n->name, attr);
    if (end != p || !isfinite(x))
      return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                  "<%s> attribute '%s': '%.*s' is not a finite number", (const char *)n->name, attr,
                  len > 40 ? 40 : len, start);
    if (got < count)
      out[got] = x;
    ++got;
  }
  if (got != count)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                "<%s> attribute '%s': expected %d number%s, found %d%s%.40s%s",
                (const char *)n->name, attr, count, count == 1 ? "" : "s", got,
                L->quote_document ? " ('" : "", L->quote_document ? text : "",
                L->quote_document ? "')" : "");
  return LCP_OK;
}

/* Reads count numbers from an attribute; *found (may be NULL) says whether it
 * was there. Absent and not required: out is left as it was. */
static int attr_numbers(loader *L, const xmlNode *n, const char *attr, bool required, double *out,
                        int count, bool *found) {
  xmlChar *v;
  int rc = get_attr(L, n, attr, required, &v);
  if (found)
    *found = v != NULL;
  if (rc != LCP_OK || !v)
    return rc;
  rc = parse_numbers(L, n, attr, (const char *)v, out, count);
  xmlFree(v);
  return rc;
}

static int attr_number_min(loader *L, const xmlNode *n, const char *attr, bool required,
                           double *out, double min, bool strict) {
  bool found;
  int rc = attr_numbers(L, n, attr, required, out, 1, &found);
  if (rc != LCP_OK || !found)
    return rc;
  if (strict ? !(*out > min) : !(*out >= min))
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                "<%s> attribute '%s' must be %s %g, not %g", (const char *)n->name, attr,
                strict ? ">" : ">=", min, *out);
  return LCP_OK;
}

/* A name attribute into a fixed buffer: non-empty and short enough. */
static int attr_name(loader *L, const xmlNode *n, const char *attr, char out[LCP_NAME_MAX]) {
  xmlChar *v;
  int rc = get_attr(L, n, attr, true, &v);
  if (rc != LCP_OK)
    return rc;
  size_t len = strlen((const char *)v);
  if (len == 0)
    rc = fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT, "<%s> attribute '%s' is empty",
              (const char *)n->name, attr);
  else if (len >= LCP_NAME_MAX)
    rc = L->quote_document ? fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                                  "<%s> attribute '%s': '%.40s...' is longer than %d characters",
                                  (const char *)n->name, attr, (const char *)v, LCP_NAME_MAX - 1)
                           : fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                                  "<%s> attribute '%s' is longer than %d characters",
                                  (const char *)n->name, attr, LCP_NAME_MAX - 1);
  else
    memcpy(out, v, len + 1);
  xmlFree(v);
  return rc;
}

/* <origin xyz rpy>, both optional (zero). */
static int read_origin(loader *L, const xmlNode *n, xform *out) {
  *out = xf_identity();
  if (!n)
    return LCP_OK;
  double rpy[3] = {0.0, 0.0, 0.0};
  int rc = attr_numbers(L, n, "xyz", false, out->p, 3, NULL);
  if (rc == LCP_OK)
    rc = attr_numbers(L, n, "rpy", false, rpy, 3, NULL);
  if (rc == LCP_OK)
    lcp_quat_from_rpy(rpy, out->q);
  return rc;
}

static int origin_child(loader *L, const xmlNode *n, const char *owner, xform *out) {
  xmlNode *o;
  int rc = only_child(L, n, "origin", owner, &o);
  return rc != LCP_OK ? rc : read_origin(L, o, out);
}

/* ---- meshes ---- */

static char *join_path(const char *dir, const char *rel) {
  size_t a = strlen(dir), b = strlen(rel);
  char *s = malloc(a + b + 2);
  if (!s)
    return NULL;
  memcpy(s, dir, a);
  size_t k = a;
  if (a > 0 && dir[a - 1] != '/')
    s[k++] = '/';
  memcpy(s + k, rel, b + 1);
  return s;
}

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

static bool is_directory(const char *path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

/* The <name> of a package.xml (format 1, 2 or 3: <package><name>NAME</name>),
 * into out; false when the file is missing, malformed or has none. Read by
 * the file rules and parsed silently: a broken package.xml only means the
 * package is not found by it. */
static bool package_xml_name(const loader *L, const char *dir, char *out, size_t out_size) {
  char *path = join_path(dir, "package.xml");
  char *text = NULL;
  size_t size = 0;
  xmlDoc *doc = NULL;
  long line;
  if (path && lcp_file_read(path, &L->opt.files, L->opt.max_document_bytes, &text, &size, NULL,
                            NULL, 0) == LCP_OK)
    lcp_xml_read(text, size, false, &doc, &line, NULL, 0);
  free(text);
  free(path);
  bool found = false;
  const xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
  if (root && is_element(root, "package"))
    for (const xmlNode *c = root->children; c && !found; c = c->next)
      if (is_element(c, "name")) {
        xmlChar *name = xmlNodeGetContent(c);
        if (name) {
          /* Trim the whitespace around the name. */
          const char *t = (const char *)name;
          while (is_space(*t))
            ++t;
          size_t n = strlen(t);
          while (n > 0 && is_space(t[n - 1]))
            --n;
          if (n > 0 && n < out_size) {
            memcpy(out, t, n);
            out[n] = '\0';
            found = true;
          }
          xmlFree(name);
        }
      }
  if (doc)
    xmlFreeDoc(doc);
  return found;
}

/* Whether directory dir is the package `name`: by its package.xml, else by
 * its last path component. */
static bool is_package(const loader *L, const char *dir, const char *name) {
  char declared[256];
  if (package_xml_name(L, dir, declared, sizeof declared))
    return strcmp(declared, name) == 0;
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/')
    --len;
  size_t n = strlen(name);
  return len >= n && strncmp(dir + len - n, name, n) == 0 && (len == n || dir[len - n - 1] == '/');
}

static int skip_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* The directory of package `name` (lcpsim/urdf.h, lcp_urdf_options), malloc'd
 * into *out, or NULL when there is none. */
static int find_package_dir(loader *L, const char *name, char **out) {
  *out = NULL;
  /* Confined, a directory outside the roots is as if it were not given. */
  for (int32_t i = 0; i < L->opt.package_count; ++i) {
    const lcp_urdf_package_t *p = &L->opt.packages[i];
    if (p->name && p->dir && strcmp(p->name, name) == 0 &&
        lcp__file_dir_allowed(p->dir, &L->opt.files))
      return (*out = join_path("", p->dir)) ? LCP_OK : LCP_ERR_NO_MEMORY;
  }
  for (int32_t i = 0; i < L->opt.package_path_count; ++i) {
    const char *root = L->opt.package_paths[i];
    if (!root || !lcp__file_dir_allowed(root, &L->opt.files) || !is_directory(root))
      continue;
    if (is_package(L, root, name))
      return (*out = join_path("", root)) ? LCP_OK : LCP_ERR_NO_MEMORY;
    char *candidate = join_path(root, name);
    if (!candidate)
      return LCP_ERR_NO_MEMORY;
    if (is_directory(candidate)) {
      *out = candidate;
      return LCP_OK;
    }
    free(candidate);
    /* A package whose directory is named otherwise: alphabetical order, so the
     * same tree always gives the same package. */
    struct dirent **entries = NULL;
    int n = scandir(root, &entries, skip_hidden, alphasort);
    for (int k = 0; k < n; ++k) {
      if (!*out) {
        char *dir = join_path(root, entries[k]->d_name);
        char declared[256];
        if (dir && is_directory(dir) && package_xml_name(L, dir, declared, sizeof declared) &&
            strcmp(declared, name) == 0)
          *out = dir;
        else
          free(dir);
      }
      free(entries[k]);
    }
    free(entries);
    if (*out)
      return LCP_OK;
  }
  return LCP_OK;
}

/* The package's directory; confined, as a realpath, so that the files in
 * it are named by absolute paths (a relative one would be looked for below
 * the roots). */
static int find_package(loader *L, const char *name, char **out) {
  int rc = find_package_dir(L, name, out);
  if (rc == LCP_OK && *out && L->opt.files.confined) {
    char *resolved = realpath(*out, NULL);
    free(*out);
    *out = resolved; /* NULL when it vanished: not found */
  }
  return rc;
}

/* "NAME=DIR, ..., DIR, ..." for the message of an unknown package. */
static void describe_package_search(const loader *L, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i < L->opt.package_count && used < size; ++i) {
    const lcp_urdf_package_t *p = &L->opt.packages[i];
    int n = snprintf(buf + used, size - used, "%s%s=%s%s", used ? ", " : "",
                     p->name ? p->name : "(null)", p->dir ? p->dir : "(null)",
                     p->dir && !lcp__file_dir_allowed(p->dir, &L->opt.files)
                         ? " (not below the model roots)"
                         : "");
    used += n > 0 ? (size_t)n : 0;
  }
  for (int32_t i = 0; i < L->opt.package_path_count && used < size; ++i) {
    const char *root = L->opt.package_paths[i];
    /* Confined, whether a directory exists outside the roots is not told. */
    const char *note = !root ? ""
                       : !lcp__file_dir_allowed(root, &L->opt.files)
                           ? " (not below the model roots)"
                       : !is_directory(root) ? " (not a directory)"
                                             : "";
    int n =
        snprintf(buf + used, size - used, "%s%s%s", used ? ", " : "", root ? root : "(null)", note);
    used += n > 0 ? (size_t)n : 0;
  }
}

/* The file a <mesh filename> names: package://NAME/REST in package NAME
 * (lcpsim/urdf.h), file:// and absolute paths as they are, others relative to
 * the URDF's directory. *out is malloc'd. */
static int resolve_mesh(loader *L, const xmlNode *n, const char *uri, char **out) {
  *out = NULL;
  if (strncmp(uri, "package://", 10) == 0) {
    const char *name = uri + 10, *slash = strchr(name, '/');
    if (!slash || slash == name || !slash[1])
      return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                  "mesh filename '%s' is not package://NAME/PATH", uri);
    char package[LCP_NAME_MAX * 4];
    size_t name_len = (size_t)(slash - name);
    if (name_len >= sizeof package)
      return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                  "mesh filename '%.80s...': the package name is too long", uri);
    memcpy(package, name, name_len);
    package[name_len] = '\0';
    if (L->opt.package_count <= 0 && L->opt.package_path_count <= 0)
      return fail(L, line_of(n), LCP_ERR_NOT_FOUND,
                  "mesh file '%s' not found: unknown package '%s' (no package paths were given: "
                  "--package-path %s=DIR or ROS_PACKAGE_PATH)",
                  uri, package, package);
    char *dir = NULL;
    int rc = find_package(L, package, &dir);
    if (rc != LCP_OK)
      return rc;
    if (!dir) {
      char searched[768];
      describe_package_search(L, searched, sizeof searched);
      return fail(L, line_of(n), LCP_ERR_NOT_FOUND,
                  "mesh file '%s' not found: unknown package '%s' (searched %s)", uri, package,
                  searched);
    }
    char *path = join_path(dir, slash + 1);
    if (!path) {
      free(dir);
      return LCP_ERR_NO_MEMORY;
    }
    if (!L->opt.files.confined && !file_exists(path)) {
      rc = fail(L, line_of(n), LCP_ERR_NOT_FOUND,
                "mesh file '%s' not found: package '%s' is %s, which has no %s", uri, package, dir,
                path);
      free(path);
      free(dir);
      return rc;
    }
    free(dir);
    *out = path;
    return LCP_OK;
  }
  const char *path = uri;
  if (strncmp(uri, "file://", 7) == 0)
    path = uri + 7;
  if (L->opt.files.confined && path[0] != '/' && !L->base_dir)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                "mesh filename '%s': a relative path in a URDF given as text has no directory to "
                "be relative to (use package://NAME/PATH or an absolute path below the model "
                "roots)",
                uri);
  char *resolved =
      path[0] == '/' || !L->base_dir ? join_path("", path) : join_path(L->base_dir, path);
  if (!resolved)
    return LCP_ERR_NO_MEMORY;
  if (!L->opt.files.confined && !file_exists(resolved)) {
    int rc = fail(L, line_of(n), LCP_ERR_NOT_FOUND, "mesh file '%s' not found", resolved);
    free(resolved);
    return rc;
  }
  *out = resolved;
  return LCP_OK;
}

/* A hull needs 4 points that span a volume; checked here so the error names
 * the mesh instead of surfacing later from lcp_geom_add. */
static bool spans_volume(const double *p, int32_t n) {
  if (n < 4)
    return false;
  double ext = 0.0;
  for (int32_t i = 0; i < 3 * n; ++i)
    ext = fmax(ext, fabs(p[i] - p[i % 3]));
  if (!(ext > 0.0))
    return false;
  /* Greedy: farthest from p0, farthest from the line, farthest from the plane. */
  int32_t b = 0;
  double best = 0.0;
  for (int32_t i = 1; i < n; ++i) {
    double d = 0.0;
    for (int k = 0; k < 3; ++k)
      d += (p[3 * i + k] - p[k]) * (p[3 * i + k] - p[k]);
    if (d > best)
      best = d, b = i;
  }
  double u[3] = {p[3 * b] - p[0], p[3 * b + 1] - p[1], p[3 * b + 2] - p[2]};
  double nrm[3] = {0.0, 0.0, 0.0};
  best = 0.0;
  for (int32_t i = 1; i < n; ++i) {
    double v[3] = {p[3 * i] - p[0], p[3 * i + 1] - p[1], p[3 * i + 2] - p[2]};
    double w[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    double d = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    if (d > best)
      best = d, memcpy(nrm, w, sizeof w);
  }
  double nn = sqrt(best);
  if (!(nn > 1e-12 * ext * ext))
    return false;
  for (int32_t i = 1; i < n; ++i) {
    double v[3] = {p[3 * i] - p[0], p[3 * i + 1] - p[1], p[3 * i + 2] - p[2]};
    double h = (v[0] * nrm[0] + v[1] * nrm[1] + v[2] * nrm[2]) / nn;
    if (fabs(h) > 1e-9 * ext)
      return true;
  }
  return false;
}

static int read_mesh(loader *L, const xmlNode *n, lcp_geom_def_t *g) {
  xmlChar *uri;
  int rc = get_attr(L, n, "filename", true, &uri);
  if (rc != LCP_OK)
    return rc;
  double scale[3] = {1.0, 1.0, 1.0};
  xmlChar *scale_text = xmlGetNoNsProp(n, (const xmlChar *)"scale");
  if (scale_text) {
    /* URDF says three numbers; one (uniform) is common enough to accept. */
    int words = 0;
    for (const char *p = (const char *)scale_text; *p;) {
      while (is_space(*p))
        ++p;
      if (*p)
        ++words;
      while (*p && !is_space(*p))
        ++p;
    }
    rc = parse_numbers(L, n, "scale", (const char *)scale_text, scale, words == 1 ? 1 : 3);
    if (words == 1)
      scale[1] = scale[2] = scale[0];
    xmlFree(scale_text);
    if (rc == LCP_OK && (scale[0] == 0.0 || scale[1] == 0.0 || scale[2] == 0.0))
      rc = fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT, "<mesh> attribute 'scale' has a zero");
  }
  char *path = NULL;
  if (rc == LCP_OK)
    rc = resolve_mesh(L, n, (const char *)uri, &path);
  lcp__mesh_t mesh = {0};
  if (rc == LCP_OK) {
    char why[400];
    size_t limit = L->opt.max_mesh_bytes ? L->opt.max_mesh_bytes : LCP_FILE_MAX_MESH_BYTES;
    size_t total = L->opt.max_total_mesh_bytes;
    bool budget_limits = total && total - L->mesh_bytes < limit;
    if (budget_limits)
      limit = total - L->mesh_bytes;
    lcp__mesh_read_t how = {&L->opt.files,          limit,
                            !L->opt.files.confined, 0,
                            L->opt.interrupted,     L->opt.interrupted_user};
    if (lcp__mesh_interrupted(&how))
      rc = lcp__model_error(why, sizeof why, LCP_ERR_STATE, "interrupted");
    else if (L->opt.max_mesh_files > 0 && L->mesh_files >= L->opt.max_mesh_files)
      rc = lcp__model_error(why, sizeof why, LCP_ERR_INVALID_ARGUMENT,
                            "more than the %d mesh files one load may read",
                            (int)L->opt.max_mesh_files);
    else if (limit == 0)
      rc = lcp__model_error(why, sizeof why, LCP_ERR_INVALID_ARGUMENT,
                            "the meshes read before it have all the %zu bytes one load may read",
                            total);
    else
      rc = lcp__mesh_load(path, &how, &mesh, why, sizeof why);
    L->mesh_bytes += how.bytes_read;
    ++L->mesh_files;
    if (rc == LCP_ERR_INVALID_ARGUMENT && budget_limits && limit > 0 && how.bytes_read == 0 &&
        strstr(why, "larger than"))
      rc = lcp__model_error(why, sizeof why, LCP_ERR_INVALID_ARGUMENT,
                            "larger than the %zu bytes left of the %zu all meshes of one load may "
                            "have",
                            limit, total);
    if (rc == LCP_ERR_NO_MEMORY)
      L->failed = true;
    else if (rc != LCP_OK)
      rc = fail(L, line_of(n), rc, "mesh '%s': %s", (const char *)uri, why);
  }
  if (rc == LCP_OK) {
    for (int32_t i = 0; i < mesh.count; ++i)
      for (int k = 0; k < 3; ++k)
        mesh.points[3 * i + k] *= scale[k];
    if (!spans_volume(mesh.points, mesh.count))
      rc = fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                "mesh '%s': its %d vertices do not span a volume (a convex hull needs 4 that are "
                "not coplanar)",
                (const char *)uri, (int)mesh.count);
  }
  if (rc == LCP_OK) {
    lcp__convexity_t convexity = lcp__mesh_convexity(&mesh);
    if (convexity == LCP__MESH_NOT_CONVEX)
      warn(L, line_of(n),
           "mesh '%s' is not convex: it collides as its convex hull (%d vertices, %d triangles)",
           (const char *)uri, (int)mesh.count, (int)mesh.triangle_count);
    else if (convexity == LCP__MESH_UNCHECKED)
      warn(L, line_of(n),
           "mesh '%s' (%d vertices, %d triangles) is too large to check for convexity: it "
           "collides as its convex hull",
           (const char *)uri, (int)mesh.count, (int)mesh.triangle_count);
    g->type = LCP_SHAPE_HULL;
    g->hull_points = mesh.points;
    g->hull_point_count = mesh.count;
    mesh.points = NULL; /* now the geom's */
  }
  lcp__mesh_free(&mesh);
  free(path);
  xmlFree(uri);
  return rc;
}

/* ---- links ---- */

static int read_geometry(loader *L, const xmlNode *geometry, lcp_geom_def_t *g) {
  const xmlNode *shape = NULL;
  for (const xmlNode *c = geometry->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE)
      continue;
    if (shape)
      return fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT, "<geometry> has more than one shape");
    shape = c;
  }
  if (!shape)
    return fail(L, line_of(geometry), LCP_ERR_INVALID_ARGUMENT, "<geometry> has no shape");
  int rc;
  if (is_element(shape, "box")) {
    double size[3];
    if ((rc = attr_numbers(L, shape, "size", true, size, 3, NULL)) != LCP_OK)
      return rc;
    if (!(size[0] > 0.0 && size[1] > 0.0 && size[2] > 0.0))
      return fail(L, line_of(shape), LCP_ERR_INVALID_ARGUMENT,
                  "<box> attribute 'size' must be positive");
    g->type = LCP_SHAPE_BOX;
    for (int k = 0; k < 3; ++k)
      g->half_extents[k] = 0.5 * size[k];
    return LCP_OK;
  }
  if (is_element(shape, "sphere")) {
    g->type = LCP_SHAPE_SPHERE;
    return attr_number_min(L, shape, "radius", true, &g->radius, 0.0, true);
  }
  if (is_element(shape, "cylinder") || is_element(shape, "capsule")) {
    /* The capsule is not standard URDF; its length, like PyBullet's and
     * Drake's, is that of the segment between the hemisphere centres. */
    double length = 0.0;
    g->type = is_element(shape, "cylinder") ? LCP_SHAPE_CYLINDER : LCP_SHAPE_CAPSULE;
    if ((rc = attr_number_min(L, shape, "radius", true, &g->radius, 0.0, true)) != LCP_OK ||
        (rc = attr_number_min(L, shape, "length", true, &length, 0.0, true)) != LCP_OK)
      return rc;
    g->half_length = 0.5 * length;
    return LCP_OK;
  }
  if (is_element(shape, "mesh"))
    return read_mesh(L, shape, g);
  char label[96];
  element_label(shape, label, sizeof label);
  return fail(L, line_of(shape), LCP_ERR_INVALID_ARGUMENT, "unsupported geometry %s", label);
}

static int read_collision(loader *L, const xmlNode *n, int32_t link) {
  xmlNode *geometry;
  xform origin;
  int rc = origin_child(L, n, "<collision>", &origin);
  if (rc == LCP_OK)
    rc = only_child(L, n, "geometry", "<collision>", &geometry);
  if (rc != LCP_OK)
    return rc;
  if (!geometry)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT, "<collision> has no <geometry>");
  if ((rc = grow((void **)&L->geoms, &L->geom_cap, L->geom_count + 1, sizeof *L->geoms)) != LCP_OK)
    return rc;
  ugeom *g = &L->geoms[L->geom_count];
  g->link = link;
  g->def = lcp_geom_def_default();
  memcpy(g->def.local_position, origin.p, sizeof origin.p);
  memcpy(g->def.local_orientation, origin.q, sizeof origin.q);
  rc = read_geometry(L, geometry, &g->def);
  if (rc == LCP_OK)
    ++L->geom_count; /* only now does the table own the hull points */
  return rc;
}

static int read_inertial(loader *L, const xmlNode *n, ulink *link) {
  xmlNode *mass, *inertia;
  xform origin;
  int rc = origin_child(L, n, "<inertial>", &origin);
  if (rc == LCP_OK)
    rc = only_child(L, n, "mass", "<inertial>", &mass);
  if (rc == LCP_OK)
    rc = only_child(L, n, "inertia", "<inertial>", &inertia);
  if (rc != LCP_OK)
    return rc;
  if (!mass)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                "link '%s': missing inertial mass (<inertial> has no <mass>)", link->name);
  if (!inertia)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT, "link '%s': <inertial> has no <inertia>",
                link->name);
  if ((rc = attr_number_min(L, mass, "value", true, &link->mass, 0.0, false)) != LCP_OK)
    return rc;
  static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
  double v[6];
  for (int k = 0; k < 6; ++k)
    if ((rc = attr_numbers(L, inertia, names[k], true, &v[k], 1, NULL)) != LCP_OK)
      return rc;
  double I[9] = {v[0], v[1], v[2], v[1], v[3], v[4], v[2], v[4], v[5]};
  if (!inertia_ok(I, false))
    return fail(L, line_of(inertia), LCP_ERR_INVALID_ARGUMENT,
                "link '%s': <inertia> is not positive semidefinite", link->name);
  /* The inertial frame's axes may be rotated: bring the tensor into link axes. */
  double R[9];
  lcp_quat_to_matrix(origin.q, R);
  rotate_inertia(R, I, link->inertia);
  memcpy(link->com, origin.p, sizeof origin.p);
  link->has_inertial = true;
  link->inertial_line = line_of(n);
  return LCP_OK;
}

/* A link's contact parameters, as PyBullet reads them (and many ROS robot
 * files carry): <contact><lateral_friction value="μ"/><restitution
 * value="e"/></contact>. has_* says whether the file gave the value. */
typedef struct link_contact {
  bool has_friction, has_restitution;
  double friction, restitution;
} link_contact;

/* <contact>'s other parameters (rolling and spinning friction, stiffness and
 * damping, solver parameters) have no counterpart here: warned about and
 * ignored, as are unknown children. */
static int read_contact(loader *L, const xmlNode *n, link_contact *out) {
  static const char *const unsupported[] = {"rolling_friction", "spinning_friction", "stiffness",
                                            "damping",          "contact_cfm",       "contact_erp",
                                            "inertia_scaling",  "friction_anchor",   NULL};
  for (const xmlNode *c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE)
      continue;
    int rc = LCP_OK;
    if (is_element(c, "lateral_friction")) {
      if (out->has_friction)
        return fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT, "<contact> has a second <%s>",
                    (const char *)c->name);
      rc = attr_number_min(L, c, "value", true, &out->friction, 0.0, false);
      out->has_friction = true;
    } else if (is_element(c, "restitution")) {
      if (out->has_restitution)
        return fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT, "<contact> has a second <%s>",
                    (const char *)c->name);
      rc = attr_number_min(L, c, "value", true, &out->restitution, 0.0, false);
      if (rc == LCP_OK && out->restitution > 1.0)
        rc = fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT,
                  "<restitution> attribute 'value' must be <= 1, not %g", out->restitution);
      out->has_restitution = true;
    } else {
      bool known = false;
      for (const char *const *u = unsupported; *u && !known; ++u)
        known = is_element(c, *u);
      warn_ignored(L, c, "<contact>", known);
    }
    if (rc != LCP_OK)
      return rc;
  }
  return LCP_OK;
}

static int read_link(loader *L, const xmlNode *n) {
  int rc = grow((void **)&L->links, &L->link_cap, L->link_count + 1, sizeof *L->links);
  if (rc != LCP_OK)
    return rc;
  int32_t index = L->link_count;
  ulink *link = &L->links[index];
  memset(link, 0, sizeof *link);
  link->line = line_of(n);
  link->parent_joint = -1;
  if ((rc = attr_name(L, n, "name", link->name)) != LCP_OK)
    return rc;
  ++L->link_count;
  bool inertial_seen = false, contact_seen = false;
  link_contact contact = {0};
  const int32_t first_geom = L->geom_count;
  for (const xmlNode *c = n->children; c && rc == LCP_OK; c = c->next) {
    if (c->type != XML_ELEMENT_NODE)
      continue;
    if (is_element(c, "inertial")) {
      if (inertial_seen)
        return fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT, "link '%s' has a second <inertial>",
                    link->name);
      inertial_seen = true;
      rc = read_inertial(L, c, &L->links[index]);
    } else if (is_element(c, "collision")) {
      rc = read_collision(L, c, index);
    } else if (is_element(c, "contact")) {
      if (contact_seen)
        return fail(L, line_of(c), LCP_ERR_INVALID_ARGUMENT, "link '%s' has a second <contact>",
                    L->links[index].name);
      contact_seen = true;
      rc = read_contact(L, c, &contact);
    } else if (!is_element(c, "visual")) { /* visuals are for viewers: silently ignored */
      warn_ignored(L, c, "<link>", false);
    }
  }
  /* The link's contact parameters hold for all its collision geoms, those
   * written before <contact> too. */
  for (int32_t g = first_geom; rc == LCP_OK && g < L->geom_count; ++g) {
    if (contact.has_friction)
      L->geoms[g].def.friction = contact.friction;
    if (contact.has_restitution)
      L->geoms[g].def.restitution = contact.restitution;
  }
  return rc;
}

/* ---- joints ---- */

static int read_link_ref(loader *L, const xmlNode *joint, const char *what, ujoint *j, char *name,
                         long *line) {
  xmlNode *ref;
  int rc = only_child(L, joint, what, "<joint>", &ref);
  if (rc != LCP_OK)
    return rc;
  if (!ref)
    return fail(L, line_of(joint), LCP_ERR_INVALID_ARGUMENT, "joint '%s' has no <%s>", j->name,
                what);
  *line = line_of(ref);
  return attr_name(L, ref, "link", name);
}

static int read_limit(loader *L, const xmlNode *n, ujoint *j) {
  int rc;
  if (j->type == UJ_FIXED || j->type == UJ_FLOATING)
    return LCP_OK; /* nothing to limit */
  if ((rc = attr_number_min(L, n, "effort", true, &j->effort, 0.0, false)) != LCP_OK ||
      (rc = attr_number_min(L, n, "velocity", true, &j->velocity, 0.0, false)) != LCP_OK)
    return rc;
  if (j->type == UJ_CONTINUOUS)
    return LCP_OK; /* lower and upper mean nothing for a continuous joint */
  if ((rc = attr_numbers(L, n, "lower", false, &j->lower, 1, NULL)) != LCP_OK ||
      (rc = attr_numbers(L, n, "upper", false, &j->upper, 1, NULL)) != LCP_OK)
    return rc;
  if (j->lower > j->upper)
    return fail(L, line_of(n), LCP_ERR_INVALID_ARGUMENT,
                "joint '%s': <limit> lower %g is above upper %g", j->name, j->lower, j->upper);
  return LCP_OK;
}

static int read_joint(loader *L, const xmlNode *n) {
  int rc = grow((void **)&L->joints, &L->joint_cap, L->joint_count + 1, sizeof *L->joints);
  if (rc != LCP_OK)
    return rc;
  ujoint *j = &L->joints[L->joint_count];
  memset(j, 0, sizeof *j);
  j->line = line_of(n);
  j->parent = j->child = -1;
  j->origin = xf_identity();
  j->axis[0] = 1.0; /* the URDF default axis */
  if ((rc = attr_name(L, n, "name", j->name)) != LCP_OK)
    return rc;
  xmlChar *type;
  if ((rc = get_attr(L, n, "type", true, &type)) != LCP_OK)
    return rc;
  const char *t = (const char *)type;
  if (strcmp(t, "revolute") == 0)
    j->type = UJ_REVOLUTE;
  else if (strcmp(t, "continuous") == 0)
    j->type = UJ_CONTINUOUS;
  else if (strcmp(t, "prismatic") == 0)
    j->type = UJ_PRISMATIC;
  else if (strcmp(t, "fixed") == 0)
    j->type = UJ_FIXED;
  else if (strcmp(t, "floating") == 0)
    j->type = UJ_FLOATING;
  else if (strcmp(t, "planar") == 0)
    rc = fail(L, j->line, LCP_ERR_INVALID_ARGUMENT, "joint '%s': type 'planar' is not supported",
              j->name);
  else
    rc = L->quote_document ? fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
                                  "joint '%s': unknown joint type '%.40s'", j->name, t)
                           : fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
                                  "joint '%s': unknown joint type", j->name);
  xmlFree(type);
  if (rc != LCP_OK)
    return rc;

  bool movable = j->type == UJ_REVOLUTE || j->type == UJ_CONTINUOUS || j->type == UJ_PRISMATIC;
  xmlNode *axis, *limit, *dynamics;
  if ((rc = origin_child(L, n, "<joint>", &j->origin)) != LCP_OK ||
      (rc = read_link_ref(L, n, "parent", j, j->parent_name, &j->parent_line)) != LCP_OK ||
      (rc = read_link_ref(L, n, "child", j, j->child_name, &j->child_line)) != LCP_OK ||
      (rc = only_child(L, n, "axis", "<joint>", &axis)) != LCP_OK ||
      (rc = only_child(L, n, "limit", "<joint>", &limit)) != LCP_OK ||
      (rc = only_child(L, n, "dynamics", "<joint>", &dynamics)) != LCP_OK)
    return rc;
  if (axis) {
    if ((rc = attr_numbers(L, axis, "xyz", true, j->axis, 3, NULL)) != LCP_OK)
      return rc;
    double len = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
    if (!(len > 1e-12)) {
      if (movable)
        return fail(L, line_of(axis), LCP_ERR_INVALID_ARGUMENT, "joint '%s': zero <axis>", j->name);
      j->axis[0] = 1.0, j->axis[1] = j->axis[2] = 0.0;
    } else {
      for (int k = 0; k < 3; ++k)
        j->axis[k] /= len;
    }
  }
  if (limit)
    rc = read_limit(L, limit, j);
  else if (j->type == UJ_REVOLUTE || j->type == UJ_PRISMATIC)
    rc = fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
              "joint '%s': a %s joint needs a <limit> (effort, velocity, lower, upper)", j->name,
              j->type == UJ_REVOLUTE ? "revolute" : "prismatic");
  if (rc == LCP_OK && dynamics && movable &&
      ((rc = attr_number_min(L, dynamics, "damping", false, &j->damping, 0.0, false)) != LCP_OK ||
       (rc = attr_number_min(L, dynamics, "friction", false, &j->friction, 0.0, false)) != LCP_OK))
    return rc;
  if (rc != LCP_OK)
    return rc;
  ++L->joint_count;
  for (const xmlNode *c = n->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || is_element(c, "origin") || is_element(c, "parent") ||
        is_element(c, "child") || is_element(c, "axis") || is_element(c, "limit") ||
        is_element(c, "dynamics"))
      continue;
    bool known = is_element(c, "mimic") || is_element(c, "calibration") ||
                 is_element(c, "safety_controller");
    warn_ignored(L, c, "<joint>", known);
  }
  return LCP_OK;
}

/* ---- the document ---- */

/* The document, parsed with the hardening of lcp_xml_read (no DOCTYPE, no
 * network, bounded depth). */
static int parse_xml(loader *L, const char *buffer, size_t size, xmlDoc **out) {
  *out = NULL;
  size_t limit =
      L->opt.max_document_bytes ? L->opt.max_document_bytes : LCP_FILE_MAX_DOCUMENT_BYTES;
  if (size > limit)
    return fail(L, 0, LCP_ERR_INVALID_ARGUMENT,
                "the document has %zu bytes, more than the %zu a URDF may have", size, limit);
  char why[300];
  long line = 0;
  int rc = lcp_xml_read(buffer, size, L->quote_document, out, &line, why, sizeof why);
  if (rc == LCP_ERR_NO_MEMORY)
    return rc;
  if (rc != LCP_OK)
    return fail(L, line, rc, "%s", why);
  return LCP_OK;
}

static int read_robot(loader *L, const xmlDoc *doc) {
  const xmlNode *root = xmlDocGetRootElement(doc);
  if (!root)
    return fail(L, 0, LCP_ERR_INVALID_ARGUMENT, "empty document");
  L->robot_line = line_of(root);
  if (!is_element(root, "robot")) {
    if (!L->quote_document)
      return fail(L, L->robot_line, LCP_ERR_INVALID_ARGUMENT,
                  "the root element is not <robot>: not a URDF document");
    char label[96];
    element_label(root, label, sizeof label);
    return fail(L, L->robot_line, LCP_ERR_INVALID_ARGUMENT, "the root element is %s, not <robot>",
                label);
  }
  int rc = attr_name(L, root, "name", L->robot_name);
  int32_t elements = 0;
  for (const xmlNode *c = root->children; c && rc == LCP_OK; c = c->next) {
    if (c->type != XML_ELEMENT_NODE)
      continue;
    /* A large document takes a while: poll for an interruption now and then. */
    if (++elements % 256 == 0 && L->opt.interrupted && L->opt.interrupted(L->opt.interrupted_user))
      return fail(L, line_of(c), LCP_ERR_STATE, "interrupted");
    if (is_element(c, "link"))
      rc = read_link(L, c);
    else if (is_element(c, "joint"))
      rc = read_joint(L, c);
    else if (is_element(c, "transmission") || is_element(c, "gazebo"))
      warn_ignored(L, c, "<robot>", true);
    else if (!is_element(c, "material")) /* materials only colour visuals */
      warn_ignored(L, c, "<robot>", false);
  }
  if (rc == LCP_OK && L->link_count == 0)
    rc =
        fail(L, L->robot_line, LCP_ERR_INVALID_ARGUMENT, "robot '%s' has no <link>", L->robot_name);
  return rc;
}

/* ---- the tree ---- */

typedef struct name_index {
  const char *name;
  int32_t index;
} name_index;

static int compare_names(const void *a, const void *b) {
  const name_index *u = a, *v = b;
  int c = strcmp(u->name, v->name);
  return c ? c : (u->index > v->index) - (u->index < v->index);
}

static int32_t find_name(const name_index *sorted, int32_t n, const char *name) {
  int32_t lo = 0, hi = n;
  while (lo < hi) { /* the first entry not below name */
    int32_t mid = lo + (hi - lo) / 2;
    if (strcmp(sorted[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && strcmp(sorted[lo].name, name) == 0 ? sorted[lo].index : -1;
}

/* Sorted names for lookup; the duplicate that comes latest in the document
 * order among the first pair is reported at its own line. */
static int index_names(loader *L, const char *what, int32_t n,
                       const char *(*name_of)(loader *, int32_t),
                       long (*line_of_item)(loader *, int32_t), name_index **out) {
  *out = malloc((size_t)(n > 0 ? n : 1) * sizeof **out);
  if (!*out)
    return LCP_ERR_NO_MEMORY;
  for (int32_t i = 0; i < n; ++i)
    (*out)[i] = (name_index){name_of(L, i), i};
  qsort(*out, (size_t)n, sizeof **out, compare_names);
  int32_t dup = -1, first = -1;
  for (int32_t i = 1; i < n; ++i)
    if (strcmp((*out)[i].name, (*out)[i - 1].name) == 0 && (dup < 0 || (*out)[i].index < dup)) {
      dup = (*out)[i].index;
      first = (*out)[i - 1].index;
    }
  if (dup >= 0)
    return fail(L, line_of_item(L, dup), LCP_ERR_INVALID_ARGUMENT,
                "duplicate %s name '%s' (first defined at line %ld)", what, name_of(L, dup),
                line_of_item(L, first));
  return LCP_OK;
}

static const char *link_name_of(loader *L, int32_t i) { return L->links[i].name; }
static long link_line_of(loader *L, int32_t i) { return L->links[i].line; }
static const char *joint_name_of(loader *L, int32_t i) { return L->joints[i].name; }
static long joint_line_of(loader *L, int32_t i) { return L->joints[i].line; }

/* Joints → parent/child indices; every link one parent at most; one root. */
static int link_tree(loader *L, int32_t *out_root) {
  name_index *links = NULL, *joints = NULL;
  int rc = index_names(L, "link", L->link_count, link_name_of, link_line_of, &links);
  if (rc == LCP_OK)
    rc = index_names(L, "joint", L->joint_count, joint_name_of, joint_line_of, &joints);
  for (int32_t i = 0; i < L->joint_count && rc == LCP_OK; ++i) {
    ujoint *j = &L->joints[i];
    j->parent = find_name(links, L->link_count, j->parent_name);
    j->child = find_name(links, L->link_count, j->child_name);
    if (j->parent < 0)
      rc = fail(L, j->parent_line, LCP_ERR_INVALID_ARGUMENT,
                "joint '%s': parent link '%s' not found", j->name, j->parent_name);
    else if (j->child < 0)
      rc = fail(L, j->child_line, LCP_ERR_INVALID_ARGUMENT, "joint '%s': child link '%s' not found",
                j->name, j->child_name);
    else if (j->parent == j->child)
      rc = fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
                "loop in the tree: joint '%s' joins link '%s' to itself", j->name, j->child_name);
    else if (L->links[j->child].parent_joint >= 0) {
      const ujoint *other = &L->joints[L->links[j->child].parent_joint];
      rc = fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
                "link '%s' has two parents: joint '%s' (line %ld) and joint '%s' (a loop: URDF "
                "must be a tree)",
                j->child_name, other->name, other->line, j->name);
    } else
      L->links[j->child].parent_joint = i;
  }
  free(links);
  free(joints);
  if (rc != LCP_OK)
    return rc;
  int32_t root = -1;
  for (int32_t i = 0; i < L->link_count; ++i) {
    if (L->links[i].parent_joint >= 0)
      continue;
    if (root >= 0)
      return fail(L, L->links[i].line, LCP_ERR_INVALID_ARGUMENT,
                  "links '%s' and '%s' are both roots (no joint has them as child): a robot is "
                  "one tree",
                  L->links[root].name, L->links[i].name);
    root = i;
  }
  if (root < 0)
    return fail(L, L->joint_count > 0 ? L->joints[0].line : L->robot_line, LCP_ERR_INVALID_ARGUMENT,
                "loop in the tree: every link is a joint's child, so there is no root link");
  *out_root = root;
  return LCP_OK;
}

/* Depth-first preorder from the root, children in document order of their
 * joints, so each chain is contiguous. order gets link indices; returns how
 * many links were reached. */
static int order_links(loader *L, int32_t root, int32_t *order, int32_t *reached) {
  int32_t n = L->link_count, m = L->joint_count;
  int32_t *start = calloc((size_t)n + 1, sizeof *start);
  int32_t *by_parent = malloc((size_t)(m > 0 ? m : 1) * sizeof *by_parent);
  int32_t *stack = malloc((size_t)n * sizeof *stack);
  if (!start || !by_parent || !stack) {
    free(start);
    free(by_parent);
    free(stack);
    return LCP_ERR_NO_MEMORY;
  }
  /* Counting sort of joints by parent, stable: document order within. */
  for (int32_t i = 0; i < m; ++i)
    ++start[L->joints[i].parent + 1];
  for (int32_t i = 0; i < n; ++i)
    start[i + 1] += start[i];
  int32_t *fill = stack; /* borrowed as the insertion cursor before the walk */
  memcpy(fill, start, (size_t)n * sizeof *fill);
  for (int32_t i = 0; i < m; ++i)
    by_parent[fill[L->joints[i].parent]++] = i;
  int32_t count = 0, top = 0;
  stack[top++] = root;
  while (top > 0) {
    int32_t link = stack[--top];
    order[count++] = link;
    /* Push children last-first so the first child is visited first. */
    for (int32_t k = start[link + 1] - 1; k >= start[link]; --k)
      stack[top++] = L->joints[by_parent[k]].child;
  }
  free(start);
  free(by_parent);
  free(stack);
  *reached = count;
  return LCP_OK;
}

/* Links not reached from the root have one parent each, so following parents
 * from one of them must come back to a link already seen: a loop. */
static int report_loop(loader *L, const int32_t *order, int32_t reached) {
  unsigned char *seen = calloc((size_t)L->link_count, 1);
  if (!seen)
    return LCP_ERR_NO_MEMORY;
  for (int32_t i = 0; i < reached; ++i)
    seen[order[i]] = 1;
  int32_t link = 0;
  while (seen[link])
    ++link;
  memset(seen, 0, (size_t)L->link_count);
  while (!seen[link]) {
    seen[link] = 1;
    link = L->joints[L->links[link].parent_joint].parent;
  }
  free(seen);
  const ujoint *j = &L->joints[L->links[link].parent_joint];
  return fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
              "loop in the tree: link '%s' is its own ancestor (through joint '%s')",
              L->links[link].name, j->name);
}

static bool massless(const ulink *l) { return !l->has_inertial || l->mass == 0.0; }

static const char *joint_type_name(ujoint_type t) {
  switch (t) {
  case UJ_FIXED:
    return "fixed";
  case UJ_REVOLUTE:
    return "revolute";
  case UJ_CONTINUOUS:
    return "continuous";
  case UJ_PRISMATIC:
    return "prismatic";
  case UJ_FLOATING:
    return "floating";
  }
  return "?";
}

/* Which link is link 0 and whether it floats (lcpsim/urdf.h, "Base"). */
static int choose_base(loader *L, int32_t root, int32_t *base, bool *floating) {
  const ulink *r = &L->links[root];
  int32_t children = 0, first_child_joint = -1, floating_joint = -1;
  for (int32_t i = 0; i < L->joint_count; ++i)
    if (L->joints[i].parent == root && children++ == 0)
      first_child_joint = i;
  /* A floating joint anywhere else would be a 6-dof joint inside the tree,
   * which the multibody does not have. */
  for (int32_t i = 0; i < L->joint_count; ++i) {
    const ujoint *j = &L->joints[i];
    if (j->type != UJ_FLOATING)
      continue;
    if (j->parent != root || !massless(r) || children != 1)
      return fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
                  "joint '%s': a floating joint must join a massless root link (such as 'world') "
                  "to the robot, as the root's only joint",
                  j->name);
    floating_joint = i;
  }
  int want = L->opt.floating_base;
  if (floating_joint >= 0) {
    *base = L->joints[floating_joint].child;
    *floating = want != 0;
    return LCP_OK;
  }
  bool anchor = strcmp(r->name, "world") == 0 && massless(r);
  if (anchor && want == 1) {
    const ujoint *j = first_child_joint >= 0 ? &L->joints[first_child_joint] : NULL;
    if (children != 1)
      return fail(L, r->line, LCP_ERR_INVALID_ARGUMENT,
                  "a floating base was asked for, but root link 'world' has %d joints, not one",
                  (int)children);
    if (j->type != UJ_FIXED)
      return fail(L, j->line, LCP_ERR_INVALID_ARGUMENT,
                  "a floating base was asked for, but joint '%s' attaches the robot to 'world' "
                  "with a %s joint",
                  j->name, joint_type_name(j->type));
    *base = j->child;
    *floating = true;
    return LCP_OK;
  }
  *base = root;
  *floating = anchor ? false : want != 0;
  return LCP_OK;
}

/* ---- building the definition ---- */

typedef struct merge_state {
  int32_t *target;    /* the kept link each link's contents go to; -1: dropped */
  xform *in_target;   /* each link's frame in its target's frame */
  int32_t *new_index; /* index in the def of a kept link; -1 otherwise */
} merge_state;

static int build_def(loader *L, const int32_t *order, int32_t root, int32_t base, bool floating,
                     lcp_robot_def_t **out) {
  int32_t n = L->link_count;
  merge_state s = {malloc((size_t)n * sizeof(int32_t)), malloc((size_t)n * sizeof(xform)),
                   malloc((size_t)n * sizeof(int32_t))};
  double *mass = calloc((size_t)n, sizeof *mass), *com = calloc((size_t)n * 3, sizeof *com),
         *inertia = calloc((size_t)n * 9, sizeof *inertia);
  /* Links merged into a kept link, chained in preorder from it; and each
   * link's geoms (document order) by a counting sort. */
  int32_t *merged_next = malloc((size_t)n * sizeof(int32_t)),
          *merged_last = malloc((size_t)n * sizeof(int32_t)),
          *geom_start = calloc((size_t)n + 1, sizeof(int32_t)),
          *geom_by_link = malloc((size_t)(L->geom_count > 0 ? L->geom_count : 1) * sizeof(int32_t));
  lcp_robot_def_t *def = NULL;
  int rc = LCP_OK;
  if (!s.target || !s.in_target || !s.new_index || !mass || !com || !inertia || !merged_next ||
      !merged_last || !geom_start || !geom_by_link) {
    rc = LCP_ERR_NO_MEMORY;
    goto done;
  }
  for (int32_t i = 0; i < n; ++i)
    s.target[i] = s.new_index[i] = merged_next[i] = -1;
  for (int32_t g = 0; g < L->geom_count; ++g)
    ++geom_start[L->geoms[g].link + 1];
  for (int32_t i = 0; i < n; ++i)
    geom_start[i + 1] += geom_start[i];
  memcpy(merged_last, geom_start, (size_t)n * sizeof(int32_t)); /* borrowed as a cursor */
  for (int32_t g = 0; g < L->geom_count; ++g)
    geom_by_link[merged_last[L->geoms[g].link]++] = g;
  if (base != root && L->geom_count > 0)
    for (int32_t g = 0; g < L->geom_count; ++g)
      if (L->geoms[g].link == root) {
        warn(L, L->links[root].line,
             "collision geometry of link '%s' ignored: it is dropped, as the floating joint's "
             "parent",
             L->links[root].name);
        break;
      }

  /* Targets and frames, parents first (order is a preorder). */
  int32_t kept = 0;
  for (int32_t k = 0; k < n; ++k) {
    int32_t i = order[k];
    if (i == base) {
      s.target[i] = i;
      s.in_target[i] = xf_identity();
      s.new_index[i] = kept++;
      merged_last[i] = i;
      continue;
    }
    if (L->links[i].parent_joint < 0)
      continue; /* the dropped root */
    const ujoint *j = &L->joints[L->links[i].parent_joint];
    int32_t p = j->parent;
    if (s.target[p] < 0)
      continue; /* below the dropped root only through the base: cannot happen */
    if (j->type == UJ_FIXED && !L->opt.keep_fixed_links) {
      int32_t t = s.target[p];
      s.target[i] = t;
      s.in_target[i] = xf_compose(&s.in_target[p], &j->origin);
      merged_next[merged_last[t]] = i;
      merged_last[t] = i;
    } else {
      s.target[i] = i;
      s.in_target[i] = xf_identity();
      s.new_index[i] = kept++;
      merged_last[i] = i;
    }
  }

  /* Mass properties: total mass and centre first, then inertias about it. */
  for (int32_t i = 0; i < n; ++i) {
    int32_t t = s.target[i];
    if (t < 0 || !(L->links[i].mass > 0.0))
      continue;
    double c[3], R[9];
    lcp_quat_to_matrix(s.in_target[i].q, R);
    mat_vec(R, L->links[i].com, c);
    mass[t] += L->links[i].mass;
    for (int k = 0; k < 3; ++k)
      com[3 * t + k] += L->links[i].mass * (c[k] + s.in_target[i].p[k]);
  }
  for (int32_t t = 0; t < n; ++t)
    if (mass[t] > 0.0)
      for (int k = 0; k < 3; ++k)
        com[3 * t + k] /= mass[t];
  for (int32_t i = 0; i < n; ++i) {
    int32_t t = s.target[i];
    double m = L->links[i].mass;
    if (t < 0 || !(m > 0.0))
      continue;
    double c[3], R[9], I[9];
    lcp_quat_to_matrix(s.in_target[i].q, R);
    mat_vec(R, L->links[i].com, c);
    rotate_inertia(R, L->links[i].inertia, I);
    double d[3];
    for (int k = 0; k < 3; ++k)
      d[k] = c[k] + s.in_target[i].p[k] - com[3 * t + k];
    double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    /* Parallel-axis theorem: I + m (|d|² E − d dᵀ). */
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        inertia[9 * t + 3 * a + b] += I[3 * a + b] + m * ((a == b ? dd : 0.0) - d[a] * d[b]);
  }

  /* What moves must have mass and a positive definite inertia. */
  for (int32_t k = 0; k < n; ++k) {
    int32_t i = order[k];
    if (s.new_index[i] < 0)
      continue;
    const ulink *l = &L->links[i];
    const ujoint *j = i == base || l->parent_joint < 0 ? NULL : &L->joints[l->parent_joint];
    bool movable = j ? j->type != UJ_FIXED : floating;
    if (!movable)
      continue;
    if (!(mass[i] > 0.0)) {
      if (!j)
        rc = fail(L, l->line, LCP_ERR_INVALID_ARGUMENT,
                  "link '%s' has no mass, but it is the floating base", l->name);
      else if (!l->has_inertial)
        rc = fail(L, l->line, LCP_ERR_INVALID_ARGUMENT,
                  "link '%s' has no <inertial> but is moved by joint '%s'", l->name, j->name);
      else
        rc = fail(L, l->line, LCP_ERR_INVALID_ARGUMENT,
                  "link '%s' has zero mass but is moved by joint '%s'", l->name, j->name);
      goto done;
    }
    if (!inertia_ok(&inertia[9 * i], true)) {
      rc = fail(L, l->has_inertial ? l->inertial_line : l->line, LCP_ERR_INVALID_ARGUMENT,
                "link '%s': its inertia (with the links fixed to it) is not positive definite, "
                "but it moves",
                l->name);
      goto done;
    }
  }

  int32_t geom_total = 0;
  for (int32_t g = 0; g < L->geom_count; ++g)
    if (s.target[L->geoms[g].link] >= 0)
      ++geom_total;
  /* Allocated as lcp_robot_def_alloc does (calloc'd def, links, geoms), which
   * is what lcp_robot_def_free undoes; every field is filled below. */
  def = calloc(1, sizeof *def);
  if (def) {
    def->links = calloc((size_t)kept, sizeof *def->links);
    def->geoms = calloc((size_t)(geom_total > 0 ? geom_total : 1), sizeof *def->geoms);
  }
  if (!def || !def->links || !def->geoms) {
    rc = LCP_ERR_NO_MEMORY;
    goto done;
  }
  def->link_count = kept;
  def->geom_count = geom_total;
  snprintf(def->name, sizeof def->name, "%s", L->robot_name);
  def->floating_base = floating;
  def->self_collision = false;

  int32_t geom_next = 0;
  for (int32_t k = 0; k < n; ++k) {
    int32_t i = order[k];
    int32_t li = s.new_index[i];
    if (li < 0)
      continue;
    const ulink *l = &L->links[i];
    lcp_link_def_t *d = &def->links[li];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", l->name);
    d->mass = mass[i];
    memcpy(d->com, &com[3 * i], sizeof d->com);
    memcpy(d->inertia, &inertia[9 * i], sizeof d->inertia);
    d->origin_orientation[0] = 1.0;
    d->axis[0] = 1.0;
    d->joint_type = LCP_JOINT_FIXED;
    d->parent = -1;
    if (i != base) {
      const ujoint *j = &L->joints[l->parent_joint];
      /* The joint frame, re-expressed in the kept parent's frame. */
      xform origin = xf_compose(&s.in_target[j->parent], &j->origin);
      snprintf(d->joint_name, sizeof d->joint_name, "%s", j->name);
      d->parent = s.new_index[s.target[j->parent]];
      memcpy(d->origin_position, origin.p, sizeof origin.p);
      memcpy(d->origin_orientation, origin.q, sizeof origin.q);
      memcpy(d->axis, j->axis, sizeof d->axis);
      d->joint_type = j->type == UJ_REVOLUTE     ? LCP_JOINT_REVOLUTE
                      : j->type == UJ_CONTINUOUS ? LCP_JOINT_CONTINUOUS
                      : j->type == UJ_PRISMATIC  ? LCP_JOINT_PRISMATIC
                                                 : LCP_JOINT_FIXED;
      if (j->type != UJ_FIXED) {
        if (j->type != UJ_CONTINUOUS) {
          d->lower = j->lower;
          d->upper = j->upper;
        }
        d->effort_limit = j->effort;
        d->velocity_limit = j->velocity;
        d->damping = j->damping;
        d->friction = j->friction;
      }
    }
    /* Geoms of this link, then of the links merged into it, in link order. */
    d->first_geom = geom_next;
    for (int32_t src = i; src >= 0; src = merged_next[src])
      for (int32_t e = geom_start[src]; e < geom_start[src + 1]; ++e) {
        int32_t g = geom_by_link[e];
        lcp_geom_def_t gd = L->geoms[g].def;
        xform local = {{gd.local_position[0], gd.local_position[1], gd.local_position[2]},
                       {gd.local_orientation[0], gd.local_orientation[1], gd.local_orientation[2],
                        gd.local_orientation[3]}};
        xform moved = xf_compose(&s.in_target[src], &local);
        memcpy(gd.local_position, moved.p, sizeof moved.p);
        memcpy(gd.local_orientation, moved.q, sizeof moved.q);
        def->geoms[geom_next++] = gd;
        L->geoms[g].def.hull_points = NULL; /* now the def's */
      }
    d->geom_count = geom_next - d->first_geom;
  }

  /* Every merged link stays as a frame on the kept link it went into, in
   * link order (order is the depth-first preorder). */
  for (int32_t k = 0; k < n && rc == LCP_OK; ++k) {
    int32_t i = order[k], t = s.target[i];
    if (t < 0 || t == i)
      continue;
    rc = lcp_robot_def_add_frame(def, L->links[i].name, s.new_index[t], s.in_target[i].p,
                                 s.in_target[i].q);
    if (rc != LCP_OK && rc != LCP_ERR_NO_MEMORY)
      rc = fail(L, L->links[i].line, rc, "link '%s' cannot be kept as a frame", L->links[i].name);
  }

done:
  free(merged_next);
  free(merged_last);
  free(geom_start);
  free(geom_by_link);
  free(s.target);
  free(s.in_target);
  free(s.new_index);
  free(mass);
  free(com);
  free(inertia);
  if (rc != LCP_OK)
    lcp_robot_def_free(&def);
  *out = def;
  return rc;
}

/* ---- entry points ---- */

int lcp_urdf_split_package_path(const char *list, char ***paths, int32_t *count) {
  if (!paths || !count)
    return LCP_ERR_INVALID_ARGUMENT;
  *paths = NULL;
  *count = 0;
  if (!list || !list[0])
    return LCP_OK;
  size_t len = strlen(list);
  int32_t n = 1;
  for (const char *p = list; *p; ++p)
    n += *p == ':';
  /* One block: n pointers, then a copy of the list with the ':'s as NULs. */
  char **block = malloc((size_t)n * sizeof(char *) + len + 1);
  if (!block)
    return LCP_ERR_NO_MEMORY;
  char *text = (char *)(block + n);
  memcpy(text, list, len + 1);
  int32_t kept = 0;
  for (char *start = text;;) {
    char *end = strchr(start, ':');
    if (end)
      *end = '\0';
    if (*start)
      block[kept++] = start;
    if (!end)
      break;
    start = end + 1;
  }
  if (kept == 0) {
    free(block);
    return LCP_OK;
  }
  *paths = block;
  *count = kept;
  return LCP_OK;
}

lcp_urdf_options_t lcp_urdf_options_default(void) {
  lcp_urdf_options_t o;
  memset(&o, 0, sizeof o);
  o.floating_base = -1;
  return o;
}

static int load(loader *L, const char *xml, size_t size, lcp_robot_def_t **out) {
  xmlDoc *doc = NULL;
  int32_t *order = NULL;
  int rc = parse_xml(L, xml, size, &doc);
  if (rc == LCP_OK)
    rc = read_robot(L, doc);
  if (doc)
    xmlFreeDoc(doc); /* everything needed was copied out, lines included */
  int32_t root = -1, base = -1, reached = 0;
  bool floating = false;
  if (rc == LCP_OK)
    rc = link_tree(L, &root);
  if (rc == LCP_OK && !(order = malloc((size_t)L->link_count * sizeof *order)))
    rc = LCP_ERR_NO_MEMORY;
  if (rc == LCP_OK)
    rc = order_links(L, root, order, &reached);
  if (rc == LCP_OK && reached < L->link_count)
    rc = report_loop(L, order, reached);
  if (rc == LCP_OK)
    rc = choose_base(L, root, &base, &floating);
  if (rc == LCP_OK)
    rc = build_def(L, order, root, base, floating, out);
  free(order);
  loader_free(L);
  if (rc == LCP_ERR_NO_MEMORY && !L->failed)
    fail(L, 0, rc, "out of memory");
  return rc;
}

static int start(loader *L, const char *file, const char *base_dir,
                 const lcp_urdf_options_t *options, lcp_robot_def_t **out, char *error,
                 size_t error_size) {
  memset(L, 0, sizeof *L);
  L->file = file;
  L->base_dir = base_dir;
  L->opt = options ? *options : lcp_urdf_options_default();
  L->error = error;
  L->error_size = error_size;
  if (error && error_size > 0)
    error[0] = '\0';
  if (!out)
    return fail(L, 0, LCP_ERR_INVALID_ARGUMENT, "no output pointer");
  *out = NULL;
  if (L->opt.floating_base < -1 || L->opt.floating_base > 1)
    return fail(L, 0, LCP_ERR_INVALID_ARGUMENT, "floating_base must be -1, 0 or 1, not %d",
                L->opt.floating_base);
  if (L->opt.package_path_count < 0 || (L->opt.package_path_count > 0 && !L->opt.package_paths))
    return fail(L, 0, LCP_ERR_INVALID_ARGUMENT, "bad package path list");
  if (L->opt.package_count < 0 || (L->opt.package_count > 0 && !L->opt.packages))
    return fail(L, 0, LCP_ERR_INVALID_ARGUMENT, "bad package list");
  return LCP_OK;
}

int lcp_urdf_load_string(const char *xml, const char *base_dir, const lcp_urdf_options_t *options,
                         lcp_robot_def_t **out, char *error, size_t error_size) {
  loader L;
  int rc = start(&L, "<string>", base_dir, options, out, error, error_size);
  if (rc != LCP_OK)
    return rc;
  if (!xml)
    return fail(&L, 0, LCP_ERR_INVALID_ARGUMENT, "no document (NULL)");
  L.quote_document = true; /* the caller's own text */
  return load(&L, xml, strlen(xml), out);
}

int lcp_urdf_load_file(const char *path, const lcp_urdf_options_t *options, lcp_robot_def_t **out,
                       char *error, size_t error_size) {
  loader L;
  int rc = start(&L, path ? path : "(null)", NULL, options, out, error, error_size);
  if (rc != LCP_OK)
    return rc;
  if (!path)
    return fail(&L, 0, LCP_ERR_INVALID_ARGUMENT, "no path (NULL)");
  /* A file a remote peer named is not quoted: it may not be a URDF at all. */
  L.quote_document = !L.opt.files.confined;
  char *text = NULL, *opened = NULL;
  size_t size = 0;
  rc = lcp_file_read(path, &L.opt.files, L.opt.max_document_bytes, &text, &size, &opened, error,
                     error_size);
  if (rc != LCP_OK) {
    L.failed = true; /* the message (beginning with the path) is lcp_file_read's */
    return rc == LCP_ERR_NO_MEMORY ? fail(&L, 0, rc, "out of memory") : rc;
  }
  path = opened;
  /* Relative mesh paths are relative to the file's directory. */
  const char *slash = strrchr(path, '/');
  char *dir = NULL;
  if (slash) {
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    dir = malloc(len + 1);
    if (!dir) {
      free(text);
      free(opened);
      return fail(&L, 0, LCP_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(dir, path, len);
    dir[len] = '\0';
  }
  L.base_dir = dir;
  rc = load(&L, text, size, out);
  free(dir);
  free(text);
  free(opened);
  return rc;
}
