/* SPDX-License-Identifier: Apache-2.0 */
/* Where the shipped robots are, found at run time (urdf.h). The places and
 * their order are documented at lcp_shipped_robots_dir; the build sets:
 *   LCP_BINDIR_TO_DATADIR     the install's datadir relative to its bindir ("../share")
 *   LCP_DATADIR_NAME          the datadir's name under a prefix or a build tree ("share")
 *   LCP_INSTALL_FULL_DATADIR  the configured install's datadir ("/usr/local/share") */
#define _XOPEN_SOURCE 700 /* realpath (an XSI interface in glibc) */

#include "lcpsim/urdf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROBOTS_SUBDIR "lcpsim/robots"
#define ROBOTS_DIR_ENV "LCPSIM_ROBOTS_DIR"
#define PATH_CAPACITY 4096

/* A message built piece by piece into the caller's buffer (which may be NULL
 * or too small: the message is then dropped or cut). */
typedef struct message {
  char *text;
  size_t size, length;
} message_t;

static void message_add(message_t *m, const char *format, ...) {
  if (!m->text || m->size == 0 || m->length >= m->size - 1)
    return;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(m->text + m->length, m->size - m->length, format, args);
  va_end(args);
  if (n > 0)
    m->length += (size_t)n < m->size - m->length ? (size_t)n : m->size - m->length - 1;
}

static bool is_directory(const char *path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

/* Copies the directory found into out (resolving "..", "." and symbolic links
 * when it can) and clears the error. */
static int found(const char *path, char *out, size_t out_size, message_t *error) {
  error->length = 0;
  if (error->text && error->size > 0)
    error->text[0] = '\0';
  char *resolved = realpath(path, NULL);
  const char *source = resolved ? resolved : path;
  size_t length = strlen(source);
  int rc = LCP_OK;
  if (length < out_size) {
    memcpy(out, source, length + 1);
  } else {
    message_add(error, "the path of the shipped robots (%s) is longer than the %zu bytes given",
                source, out_size);
    rc = LCP_ERR_INVALID_ARGUMENT;
  }
  free(resolved);
  return rc;
}

/* The directory of the running program, or false (with why in error). */
static bool program_directory(char dir[PATH_CAPACITY], message_t *error) {
  ssize_t length = readlink("/proc/self/exe", dir, PATH_CAPACITY - 1);
  if (length <= 0 || length >= PATH_CAPACITY - 1) {
    message_add(error, "; the running program's path is unknown (/proc/self/exe: %s)",
                length < 0 ? strerror(errno) : "too long");
    return false;
  }
  dir[length] = '\0';
  *strrchr(dir, '/') = '\0'; /* readlink gives an absolute path: there is a '/' */
  return true;
}

int lcp_shipped_robots_dir(char *dir, size_t dir_size, char *error, size_t error_size) {
  message_t why = {.text = error, .size = error_size};
  if (error && error_size > 0)
    error[0] = '\0';
  if (!dir || dir_size == 0) {
    message_add(&why, "no buffer for the directory of the shipped robots");
    return LCP_ERR_INVALID_ARGUMENT;
  }
  dir[0] = '\0';

  /* 1. The environment, when set, and nothing else: a wrong value is a
   * mistake to report, not a reason to use other robots. */
  const char *from_environment = getenv(ROBOTS_DIR_ENV);
  if (from_environment && from_environment[0] != '\0') {
    if (is_directory(from_environment))
      return found(from_environment, dir, dir_size, &why);
    message_add(&why, "%s=%s is not a directory", ROBOTS_DIR_ENV, from_environment);
    return LCP_ERR_NOT_FOUND;
  }

  /* The message names every place looked at, in order. */
  message_add(&why, "no directory of shipped robots: %s is not set", ROBOTS_DIR_ENV);
  char program[PATH_CAPACITY], candidate[2 * PATH_CAPACITY];
  if (program_directory(program, &why)) {
    /* 2. The installed tree the program belongs to. */
    snprintf(candidate, sizeof candidate, "%s/%s/%s", program, LCP_BINDIR_TO_DATADIR,
             ROBOTS_SUBDIR);
    if (is_directory(candidate))
      return found(candidate, dir, dir_size, &why);
    message_add(&why, "; not in %s", candidate);

    /* 3. A build tree: the build copies the robots to <build>/share/lcpsim/robots,
     * and its programs are in <build> or below it. */
    char above[PATH_CAPACITY];
    memcpy(above, program, strlen(program) + 1);
    for (;;) {
      snprintf(candidate, sizeof candidate, "%s/%s/%s", above, LCP_DATADIR_NAME, ROBOTS_SUBDIR);
      if (is_directory(candidate))
        return found(candidate, dir, dir_size, &why);
      char *slash = strrchr(above, '/');
      if (!slash)
        break;
      *slash = '\0';
    }
    message_add(&why, ", nor as %s/%s in %s or a directory above it", LCP_DATADIR_NAME,
                ROBOTS_SUBDIR, program);
  }

  /* 4. Where `cmake --install` puts them with the configured prefix. */
  snprintf(candidate, sizeof candidate, "%s/%s", LCP_INSTALL_FULL_DATADIR, ROBOTS_SUBDIR);
  if (is_directory(candidate))
    return found(candidate, dir, dir_size, &why);
  message_add(&why, ", nor in %s", candidate);
  return LCP_ERR_NOT_FOUND;
}

int lcp_shipped_robot_path(const char *name, char *path, size_t path_size, char *error,
                           size_t error_size) {
  message_t why = {.text = error, .size = error_size};
  if (!name || name[0] == '\0' || !path || path_size == 0) {
    if (error && error_size > 0)
      error[0] = '\0';
    message_add(&why, "lcp_shipped_robot_path needs a file name and a buffer");
    return LCP_ERR_INVALID_ARGUMENT;
  }
  char dir[PATH_CAPACITY];
  int rc = lcp_shipped_robots_dir(dir, sizeof dir, error, error_size);
  if (rc != LCP_OK)
    return rc;
  int length = snprintf(path, path_size, "%s/%s", dir, name);
  if (length < 0 || (size_t)length >= path_size) {
    message_add(&why, "the path %s/%s is longer than the %zu bytes given", dir, name, path_size);
    path[0] = '\0';
    return LCP_ERR_INVALID_ARGUMENT;
  }
  struct stat info;
  if (stat(path, &info) != 0 || !S_ISREG(info.st_mode)) {
    message_add(&why, "no shipped robot %s in %s", name, dir);
    return LCP_ERR_NOT_FOUND;
  }
  return LCP_OK;
}
