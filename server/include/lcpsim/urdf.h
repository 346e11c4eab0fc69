/* SPDX-License-Identifier: Apache-2.0 */
/* URDF loading, with libxml2.
 *
 * What a loaded robot is:
 * - Links in depth-first order from the root, children in the document order
 *   of their joints, so every leg or chain is a contiguous run of links and of
 *   joint values in q.
 * - Every fixed joint is merged away by default: the child's mass, centre of
 *   mass and inertia are combined with its parent's (parallel-axis theorem),
 *   its collision geoms are re-expressed in the parent frame, and the joints
 *   below it are re-attached to the parent. The merged link stays as a frame
 *   of the robot (lcpsim/robot.h, frames): its name, the kept link it is
 *   fixed to and its pose in that link's frame, in depth-first link order.
 *   keep_fixed_links keeps such links as real links instead (no frames).
 * - <collision> geometry: box, sphere, cylinder (axis = the geom's z, as in
 *   URDF), capsule (non-standard; radius, and length = the distance between
 *   the two hemisphere centres; axis z), and meshes: STL (binary or ASCII,
 *   read here), and OBJ, COLLADA (.dae) and the other formats assimp reads.
 *   A mesh becomes the convex hull of its vertices (scale applied, COLLADA
 *   <unit> applied, its up axis not: the file's coordinates are the link's);
 *   a mesh that does not bound a convex solid is replaced by its hull with a
 *   warning. Geoms get the
 *   defaults of lcp_geom_def_default() (μ = 0.5, e = 0, category 1, mask
 *   all), except what the link's <contact> element gives, in the convention
 *   PyBullet reads: <contact><lateral_friction value="μ"/><restitution
 *   value="e"/></contact> (μ ≥ 0, e in [0, 1]) holds for all the link's
 *   collision geoms; its other children are ignored with a warning.
 *   <visual> is ignored; so are <material> and the like.
 * - Joints: revolute, continuous, prismatic, fixed, and floating between a
 *   massless root (e.g. "world") and the base. planar and anything else is an
 *   error. <limit> is required for revolute and prismatic (effort and velocity
 *   required, lower/upper default 0, as in the URDF specification).
 * - <mimic>, <calibration>, <safety_controller>, <transmission>, <gazebo> and
 *   any other element the loader does not understand are ignored with a
 *   warning ("FILE:LINE: ...") through the log callback.
 *
 * Base:
 * - floating_base = 1 / 0 forces a floating / fixed base.
 * - floating_base = -1 takes it from the file, as Gazebo, Drake and PyBullet
 *   read URDF: a massless root link named "world" welded (or jointed) to the
 *   robot means a fixed base; a floating joint from a massless root means a
 *   floating base; a robot not attached to a "world" link is free (floating).
 * - A massless root "world" of a fixed base stays link 0, an anchor of mass 0
 *   whose frame is where lcp_robot_add puts the base (what is welded to it is
 *   merged into it, so its offsets are kept). A massless root joined to the
 *   robot by a floating joint is dropped, and the floating joint's child is
 *   link 0 (the floating joint's origin is not kept: lcp_robot_add gives the
 *   base pose).
 *
 * Errors return LCP_ERR_INVALID_ARGUMENT (bad or unsupported content),
 * LCP_ERR_NOT_FOUND (the URDF file or a mesh file does not exist, or a
 * package:// URI names a package found nowhere) or
 * LCP_ERR_NO_MEMORY, with a message "FILE:LINE: what is wrong" in error
 * ("<string>" stands for FILE when loading from a string). *out is NULL on
 * error. The loader never prints and keeps no global state (libxml2 errors are
 * captured, not printed); numbers are read with strtod, so the C locale's
 * decimal point is assumed. */
#ifndef LCPSIM_URDF_H
#define LCPSIM_URDF_H

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"

#ifdef __cplusplus
extern "C" {
#endif
LCP_API_BEGIN

/* ---- reading files safely ----
 * Every file the model library reads (URDF, package.xml, STL and the other
 * mesh formats; lcpsimd's scene files too) is read by lcp_file_read:
 * - opened with O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY after a stat
 *   (so that a FIFO, a device or a directory is refused before it is even
 *   opened), then checked on the descriptor with fstat: only a regular file,
 *   not on procfs or sysfs (whose files say they are regular and have size 0
 *   or a made-up size), not empty, at most max_bytes long; it is read in
 *   full, never past its size + 1 bytes (a file that grows while it is read
 *   is refused). Nothing it does can block or run long.
 * - confined (files named by a remote peer, e.g. lcpsimd's LoadModel): the
 *   path, symbolic links and ".." resolved (realpath), must lie below one of
 *   roots, component by component (/a/bc is not below /a/b). A relative path
 *   is tried below each root in order. A path that does not resolve and one
 *   that resolves outside every root get the same error (LCP_ERR_NOT_FOUND,
 *   the same message), which tells nothing of whether the file exists, may
 *   be read or how large it is; inside the roots, the rule a file breaks is
 *   named (not a regular file, too large, empty).
 * Errors: LCP_ERR_NOT_FOUND (no such file; confined: no such file below the
 * roots), LCP_ERR_INVALID_ARGUMENT (a rule broken, named in error; the
 * message begins with the path as given), LCP_ERR_NO_MEMORY. */
typedef struct lcp_file_rules {
  const char *const *roots; /* directories; resolved with realpath when used */
  int32_t root_count;
  bool confined;
} lcp_file_rules_t;

/* The size limits used when a limit of 0 is given: documents (URDF,
 * package.xml, scene files) and collision meshes. */
#define LCP_FILE_MAX_DOCUMENT_BYTES ((size_t)8 << 20)
#define LCP_FILE_MAX_MESH_BYTES ((size_t)64 << 20)

/* Reads the file into *data (malloc'd, size + 1 bytes, NUL-terminated) and
 * its size into *size. rules may be NULL (not confined). resolved (may be
 * NULL) gets the path opened, malloc'd: the realpath when confined, else a
 * copy of path. max_bytes 0 means LCP_FILE_MAX_DOCUMENT_BYTES. */
int lcp_file_read(const char *path, const lcp_file_rules_t *rules, size_t max_bytes, char **data,
                  size_t *size, char **resolved, char *error, size_t error_size);

/* The deepest element nesting an XML document may have (URDF needs 5). */
#define LCP_XML_MAX_DEPTH 64

/* Parses an XML document from memory with libxml2, hardened: no network,
 * no DTD loaded, no entity substituted, and any document with a DOCTYPE is
 * refused as soon as the parser reaches it, before its internal subset is
 * read (URDF and scene files never need one, and entity declarations are
 * what the "billion laughs" and quadratic-blowup attacks are made of);
 * elements nested deeper than LCP_XML_MAX_DEPTH are refused; size must fit
 * an int. Nothing is printed. On success *doc is the document (an xmlDocPtr;
 * free it with xmlFreeDoc). On error *doc is NULL, *line the line of the
 * error (0 when unknown), and error says what is wrong: libxml2's own
 * message when quote_content is true, else a description of the error's
 * kind that quotes nothing from the document. LCP_ERR_INVALID_ARGUMENT,
 * LCP_ERR_NO_MEMORY. */
struct _xmlDoc;
int lcp_xml_read(const char *data, size_t size, bool quote_content, struct _xmlDoc **doc,
                 long *line, char *error, size_t error_size);

/* A ROS package by name: package://NAME/REST is the file DIR/REST. */
typedef struct lcp_urdf_package {
  const char *name;
  const char *dir;
} lcp_urdf_package_t;

typedef struct lcp_urdf_options {
  /* Where package://NAME/REST URIs point. The package NAME is, first of all:
   *  1. the dir of the first entry of packages with that name (the daemon's
   *     --package-path NAME=DIR);
   *  2. else, for each of package_paths in order (as ROS_PACKAGE_PATH lists
   *     them), P itself when P is a package of that name (P holds a
   *     package.xml whose <name> is NAME, or P's last component is NAME),
   *     else P/NAME when it is a directory (P is a directory of packages),
   *     else a subdirectory of P (in name order) holding a package.xml whose
   *     <name> is NAME.
   * An unknown NAME is LCP_ERR_NOT_FOUND, its message naming the package
   * and every place searched; so is a file missing from a found package. */
  const lcp_urdf_package_t *packages;
  int32_t package_count;
  const char *const *package_paths;
  int32_t package_path_count;
  /* -1: as the file says (see above); 0: fixed base; 1: floating base. */
  int floating_base;
  /* Keep the links of fixed joints as links of their own (massless ones get
   * mass 0) instead of merging them into their parents. */
  bool keep_fixed_links;
  /* Which files may be read: the URDF file (lcp_urdf_load_file), meshes and
   * package.xml files. Confined (a URDF from a remote peer): every file
   * must resolve below one of files.roots; a relative mesh path of a URDF
   * given as a string is refused (it has no directory to be relative to);
   * the package directories given must themselves be below the roots (files
   * found through them are checked either way); and messages quote nothing
   * read from a file that is not yet known to be a URDF (no libxml2 message,
   * no root element, no bytes of a mesh) nor any value that fails to parse.
   * The names of links and joints of a document whose root is <robot> are
   * still quoted: they are what a successful load would publish. */
  lcp_file_rules_t files;
  /* Size limits: the URDF file (and package.xml) and each mesh file; 0: the
   * LCP_FILE_MAX_* defaults. A URDF given as a string has the same limit. */
  size_t max_document_bytes;
  size_t max_mesh_bytes;
  /* The most bytes all the mesh files of one load may have together; 0: no
   * such limit. This bounds the time a load takes (reading, and the hulls
   * built from the vertices), which lcpsimd needs for a LoadModel. */
  size_t max_total_mesh_bytes;
  /* The most mesh files one load may read; 0: no such limit. */
  int32_t max_mesh_files;
  /* Polled while a load runs (between elements, between mesh files and
   * while a mesh is parsed); once it returns true the load stops with
   * LCP_ERR_STATE and "interrupted". lcpsimd stops a LoadModel this way when
   * it is asked to exit. NULL: never. */
  bool (*interrupted)(void *user);
  void *interrupted_user;
  /* Warnings go here ("FILE:LINE: ..."); NULL drops them. */
  lcp_log_fn log;
  void *log_user;
} lcp_urdf_options_t;

/* No package paths, floating_base = -1, fixed links merged, no log. */
lcp_urdf_options_t lcp_urdf_options_default(void);

/* Loads a URDF file. Relative mesh paths are relative to the file's directory.
 * options may be NULL (the defaults). error may be NULL. The result is freed
 * with lcp_robot_def_free(). The robot's self_collision is false. */
int lcp_urdf_load_file(const char *path, const lcp_urdf_options_t *options, lcp_robot_def_t **out,
                       char *error, size_t error_size);

/* The same from a NUL-terminated string. Relative mesh paths are relative to
 * base_dir, or to the working directory when base_dir is NULL. */
int lcp_urdf_load_string(const char *xml, const char *base_dir, const lcp_urdf_options_t *options,
                         lcp_robot_def_t **out, char *error, size_t error_size);

/* Splits a ROS_PACKAGE_PATH-style list (directories separated by ':'; empty
 * entries skipped) into *paths (one malloc'd block holding the pointers and
 * the strings: free(*paths) frees all), *count of them. NULL or "" gives
 * none. LCP_ERR_NO_MEMORY, LCP_ERR_INVALID_ARGUMENT. */
int lcp_urdf_split_package_path(const char *list, char ***paths, int32_t *count);

/* Reads an STL file (binary or ASCII, told apart by size and content) and
 * returns its distinct vertices, count × 3 doubles, in order of first
 * appearance, in *points (malloc'd; the caller frees it). */
int lcp_stl_load(const char *path, double **points, int32_t *count, char *error, size_t error_size);

/* ---- the shipped robots (arm7.urdf, quadruped.urdf, pendulum2.urdf) ----
 * Their directory is looked up at run time; the first of these wins:
 *  1. the environment variable LCPSIM_ROBOTS_DIR, when set (and then only it:
 *     a value that is not a directory is an error);
 *  2. <the running program's directory>/../share/lcpsim/robots: an installed
 *     lcpsimd finds the robots of its own installed tree, wherever it was
 *     moved ("../share" is the install's datadir relative to its bindir);
 *  3. share/lcpsim/robots in the program's directory or any directory above
 *     it: a build tree, into which the build copies the robots;
 *  4. <datadir>/lcpsim/robots of the install lcpsim was configured for
 *     (/usr/local/share/lcpsim/robots by default): programs of other projects
 *     linking an installed lcpsim.
 * The program's directory is read from /proc/self/exe (Linux). */

/* Writes the directory (symbolic links and ".." resolved) into dir.
 * LCP_ERR_NOT_FOUND when none of the places is a directory, with a message in
 * error naming each place looked at; LCP_ERR_INVALID_ARGUMENT when dir is
 * NULL or too small. error may be NULL. */
int lcp_shipped_robots_dir(char *dir, size_t dir_size, char *error, size_t error_size);

/* Writes the path of the shipped robot file `name` (e.g. "arm7.urdf") into
 * path; LCP_ERR_NOT_FOUND when the directory or the file in it is missing. */
int lcp_shipped_robot_path(const char *name, char *path, size_t path_size, char *error,
                           size_t error_size);

LCP_API_END
#ifdef __cplusplus
}
#endif
#endif
