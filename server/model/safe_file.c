/* SPDX-License-Identifier: Apache-2.0 */
/* Reading files and XML documents safely (lcpsim/urdf.h, "reading files
 * safely"): every file read on behalf of a model goes through here, so the
 * rules (regular files only, bounded size and reads, confinement below the
 * model roots, no DOCTYPE) hold for all of them alike. */
#define _GNU_SOURCE /* O_NOFOLLOW, realpath */

#include "safe_file.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* statfs f_type of the pseudo file systems whose files are not data (from
 * linux/magic.h, spelt out so as not to depend on the kernel headers). */
#define PROC_FILESYSTEM_MAGIC 0x9fa0
#define SYSFS_FILESYSTEM_MAGIC 0x62656572

int lcp__model_error(char *error, size_t error_size, int status, const char *fmt, ...) {
  if (error && error_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, error_size, fmt, ap);
    va_end(ap);
  }
  return status;
}

/* Whether the resolved path lies below the resolved root, component by
 * component: /a/b/c is below /a/b, /a/bc is not; the root itself is not a
 * file below it. */
static bool below(const char *path, const char *root) {
  size_t n = strlen(root);
  while (n > 1 && root[n - 1] == '/')
    --n;
  if (n == 1 && root[0] == '/')
    return path[0] == '/' && path[1] != '\0';
  return strncmp(path, root, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

/* Whether the resolved path lies below one of the roots (or, with
 * or_equal, is one of them). */
static bool below_any_root(const char *resolved, const lcp_file_rules_t *rules, bool or_equal) {
  for (int32_t i = 0; i < rules->root_count; ++i) {
    if (!rules->roots[i])
      continue;
    char *root = realpath(rules->roots[i], NULL);
    bool inside = root && (below(resolved, root) || (or_equal && strcmp(resolved, root) == 0));
    free(root);
    if (inside)
      return true;
  }
  return false;
}

bool lcp__file_dir_allowed(const char *dir, const lcp_file_rules_t *rules) {
  if (!rules || !rules->confined)
    return true;
  char *resolved = dir ? realpath(dir, NULL) : NULL;
  bool allowed = resolved && below_any_root(resolved, rules, true);
  free(resolved);
  return allowed;
}

/* The realpath of a confined path when it lies below a root, else NULL. A
 * relative path is looked for below each root in order; the first root
 * where it resolves decides. */
static char *confine(const char *path, const lcp_file_rules_t *rules) {
  if (path[0] == '/') {
    char *resolved = realpath(path, NULL);
    if (resolved && !below_any_root(resolved, rules, false)) {
      free(resolved);
      return NULL;
    }
    return resolved;
  }
  for (int32_t i = 0; i < rules->root_count; ++i) {
    if (!rules->roots[i])
      continue;
    size_t a = strlen(rules->roots[i]), b = strlen(path);
    char *joined = malloc(a + b + 2);
    if (!joined)
      return NULL;
    memcpy(joined, rules->roots[i], a);
    joined[a] = '/';
    memcpy(joined + a + 1, path, b + 1);
    char *resolved = realpath(joined, NULL);
    free(joined);
    if (!resolved)
      continue;
    if (below_any_root(resolved, rules, false))
      return resolved;
    free(resolved);
    return NULL;
  }
  return NULL;
}

/* The message of a confined path that is not a file below the roots: one
 * for every case, so that it tells nothing about the file. */
#define OUTSIDE_THE_ROOTS                                                                          \
  ": no such file below the model roots (a path must resolve, symbolic links and '..' followed, "  \
  "to a file below a --model-path or package directory)"

/* The file open on fd is still below the roots: a directory of the path
 * swapped for a symbolic link between the check and the open (a race only
 * a local user with write access to a root can run) is caught here. When
 * /proc is not mounted there is nothing to ask, and the check before the
 * open stands alone. */
static bool opened_below_roots(int fd, const lcp_file_rules_t *rules) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0)
    return true;
  if ((size_t)n >= sizeof target - 1)
    return false;
  target[n] = '\0';
  return below_any_root(target, rules, false);
}

static const char *kind_of(mode_t mode) {
  return S_ISDIR(mode)    ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
                          : "not a regular file";
}

/* Reads exactly the bytes of an open regular file of `expected` bytes, and
 * one more to see whether it grew. */
static int read_bounded(int fd, const char *path, size_t expected, char **data, char *error,
                        size_t error_size) {
  char *buffer = malloc(expected + 2);
  if (!buffer)
    return LCP_ERR_NO_MEMORY;
  size_t got = 0;
  while (got < expected + 1) {
    ssize_t n = read(fd, buffer + got, expected + 1 - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      free(buffer);
      return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: read error", path);
    }
    if (n == 0)
      break;
    got += (size_t)n;
  }
  if (got != expected) {
    free(buffer);
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "%s: the file changed size while it was read", path);
  }
  buffer[got] = '\0';
  *data = buffer;
  return LCP_OK;
}

int lcp_file_read(const char *path, const lcp_file_rules_t *rules, size_t max_bytes, char **data,
                  size_t *size, char **resolved, char *error, size_t error_size) {
  if (error && error_size > 0)
    error[0] = '\0';
  if (resolved)
    *resolved = NULL;
  if (!path || !data || !size)
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "lcp_file_read: NULL argument");
  *data = NULL;
  *size = 0;
  if (max_bytes == 0)
    max_bytes = LCP_FILE_MAX_DOCUMENT_BYTES;
  bool confined = rules && rules->confined;
  if (path[0] == '\0')
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "an empty path");
  char *opened;
  if (confined) {
    /* One message for "missing" and "outside": it must not tell which. */
    opened = confine(path, rules);
    if (!opened)
      return lcp__model_error(error, error_size, LCP_ERR_NOT_FOUND, "%s" OUTSIDE_THE_ROOTS, path);
  } else if (!(opened = strdup(path))) {
    return LCP_ERR_NO_MEMORY;
  }
  /* stat before open: opening a device or a FIFO may itself do something. */
  struct stat info;
  int rc = LCP_OK;
  if (stat(opened, &info) != 0) {
    bool missing = errno == ENOENT || errno == ENOTDIR;
    rc = lcp__model_error(error, error_size, missing ? LCP_ERR_NOT_FOUND : LCP_ERR_INVALID_ARGUMENT,
                          "%s: cannot open the file (%s)", path,
                          missing ? "no such file" : "not readable");
  } else if (!S_ISREG(info.st_mode)) {
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                          "%s: %s, not a regular file (only regular files are read)", path,
                          kind_of(info.st_mode));
  }
  int fd = -1;
  if (rc == LCP_OK) {
    /* Confined, the path opened has no symbolic link left (realpath): one
     * that appears now is a race, refused by O_NOFOLLOW. */
    fd = open(opened, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (confined ? O_NOFOLLOW : 0));
    if (fd < 0)
      rc = lcp__model_error(
          error, error_size, errno == ENOENT ? LCP_ERR_NOT_FOUND : LCP_ERR_INVALID_ARGUMENT,
          "%s: cannot open the file (%s)", path, errno == ENOENT ? "no such file" : "not readable");
  }
  if (rc == LCP_OK && confined && !opened_below_roots(fd, rules))
    rc = lcp__model_error(error, error_size, LCP_ERR_NOT_FOUND, "%s" OUTSIDE_THE_ROOTS, path);
  struct statfs fs;
  if (rc == LCP_OK && fstat(fd, &info) != 0)
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "%s: cannot be examined",
                          path);
  if (rc == LCP_OK && !S_ISREG(info.st_mode))
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                          "%s: %s, not a regular file (only regular files are read)", path,
                          kind_of(info.st_mode));
  if (rc == LCP_OK && fstatfs(fd, &fs) == 0 &&
      (fs.f_type == PROC_FILESYSTEM_MAGIC || fs.f_type == SYSFS_FILESYSTEM_MAGIC))
    rc = lcp__model_error(
        error, error_size, LCP_ERR_INVALID_ARGUMENT,
        "%s: a file of /proc or /sys, not a data file (such files are never read)", path);
  if (rc == LCP_OK && info.st_size == 0)
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                          "%s: an empty file (0 bytes)", path);
  if (rc == LCP_OK && (uint64_t)info.st_size > (uint64_t)max_bytes)
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                          "%s: larger than the %zu bytes a file of this kind may have", path,
                          max_bytes);
  if (rc == LCP_OK) {
    rc = read_bounded(fd, path, (size_t)info.st_size, data, error, error_size);
    if (rc == LCP_OK)
      *size = (size_t)info.st_size;
  }
  if (fd >= 0)
    close(fd);
  if (rc == LCP_OK && resolved)
    *resolved = opened;
  else
    free(opened);
  return rc;
}

/* ---- XML ---- */

#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_ptr;
#else
typedef xmlErrorPtr xml_error_ptr;
#endif

/* What the hardened parse saw, hung on the parser context's _private. */
typedef struct xml_guard {
  bool doctype;   /* a DOCTYPE was met: the parse was stopped there */
  bool too_deep;  /* an element deeper than LCP_XML_MAX_DEPTH: stopped */
  long stop_line; /* where it was stopped */
  bool have_error;
  int error_code;
  long error_line;
  char message[256];
} xml_guard;

/* SAX: a DOCTYPE stops the parse before its internal subset (where
 * entities would be declared) is read. */
static void refuse_doctype(void *context, const xmlChar *name, const xmlChar *external_id,
                           const xmlChar *system_id) {
  (void)name;
  (void)external_id;
  (void)system_id;
  xmlParserCtxtPtr ctxt = context;
  xml_guard *guard = ctxt->_private;
  guard->doctype = true;
  guard->stop_line = xmlSAX2GetLineNumber(ctxt);
  xmlStopParser(ctxt);
}

/* SAX: the default element handler, unless the element is too deep
 * (nameNr counts the open elements above it). */
static void start_element_bounded(void *context, const xmlChar *localname, const xmlChar *prefix,
                                  const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                                  int nb_attributes, int nb_defaulted, const xmlChar **attributes) {
  xmlParserCtxtPtr ctxt = context;
  xml_guard *guard = ctxt->_private;
  if (ctxt->nameNr + 1 > LCP_XML_MAX_DEPTH) {
    guard->too_deep = true;
    guard->stop_line = xmlSAX2GetLineNumber(ctxt);
    xmlStopParser(ctxt);
    return;
  }
  xmlSAX2StartElementNs(context, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                        nb_defaulted, attributes);
}

static void capture_error(void *user, xml_error_ptr e) {
  xml_guard *guard = user;
  if (guard->have_error || !e || e->level < XML_ERR_ERROR)
    return;
  guard->have_error = true;
  guard->error_code = e->code;
  guard->error_line = e->line;
  snprintf(guard->message, sizeof guard->message, "%s", e->message ? e->message : "malformed XML");
  size_t n = strlen(guard->message);
  while (n > 0 && (guard->message[n - 1] == '\n' || guard->message[n - 1] == ' '))
    guard->message[--n] = '\0';
}

static void ignore_generic_error(void *user, const char *fmt, ...) {
  (void)user;
  (void)fmt;
}

/* libxml2's error kinds in words that quote nothing of the document. */
static const char *error_kind(int code) {
  switch (code) {
  case XML_ERR_DOCUMENT_EMPTY:
    return "no root element (the document is empty or not XML)";
  case XML_ERR_DOCUMENT_START:
    return "not an XML document (no element at the start)";
  case XML_ERR_DOCUMENT_END:
    return "extra content after the root element";
  case XML_ERR_TAG_NAME_MISMATCH:
    return "an end tag does not match its start tag";
  case XML_ERR_TAG_NOT_FINISHED:
  case XML_ERR_GT_REQUIRED:
    return "an unfinished tag";
  case XML_ERR_UNDECLARED_ENTITY:
  case XML_WAR_UNDECLARED_ENTITY:
    return "a reference to an undefined entity";
  case XML_ERR_ENTITYREF_SEMICOL_MISSING:
  case XML_ERR_ENTITYREF_NO_NAME:
    return "a malformed entity or character reference";
  case XML_ERR_INVALID_CHAR:
  case XML_ERR_INVALID_CHARREF:
  case XML_ERR_INVALID_DEC_CHARREF:
  case XML_ERR_INVALID_HEX_CHARREF:
    return "a character not allowed in XML";
  case XML_ERR_UNKNOWN_ENCODING:
  case XML_ERR_UNSUPPORTED_ENCODING:
  case XML_ERR_INVALID_ENCODING:
    return "text that is not in the declared encoding";
  case XML_ERR_ATTRIBUTE_REDEFINED:
    return "an attribute given twice";
  case XML_ERR_ATTRIBUTE_WITHOUT_VALUE:
  case XML_ERR_ATTRIBUTE_NOT_STARTED:
  case XML_ERR_ATTRIBUTE_NOT_FINISHED:
  case XML_ERR_LT_IN_ATTRIBUTE:
    return "a malformed attribute";
  case XML_ERR_NAME_REQUIRED:
  case XML_ERR_SPACE_REQUIRED:
    return "a malformed tag";
  case XML_ERR_COMMENT_NOT_FINISHED:
    return "an unfinished comment";
  case XML_ERR_RESERVED_XML_NAME:
  case XML_ERR_XMLDECL_NOT_FINISHED:
  case XML_ERR_XMLDECL_NOT_STARTED:
    return "a malformed XML declaration";
  default:
    return "not well-formed XML";
  }
}

int lcp_xml_read(const char *data, size_t size, bool quote_content, struct _xmlDoc **doc,
                 long *line, char *error, size_t error_size) {
  if (error && error_size > 0)
    error[0] = '\0';
  *doc = NULL;
  *line = 0;
  if (!data || size > INT_MAX)
    return lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                            "the document is too large");
  xmlInitParser();
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (!ctxt)
    return LCP_ERR_NO_MEMORY;
  xml_guard guard = {0};
  ctxt->_private = &guard;
  ctxt->sax->internalSubset = refuse_doctype;
  ctxt->sax->startElementNs = start_element_bounded;
  /* The error handlers are per thread in libxml2: ours for this parse only,
   * so that nothing reaches stderr; then the caller's again. */
  xmlStructuredErrorFunc old_structured = xmlStructuredError;
  void *old_structured_ctx = xmlStructuredErrorContext;
  xmlGenericErrorFunc old_generic = xmlGenericError;
  void *old_generic_ctx = xmlGenericErrorContext;
  xmlSetStructuredErrorFunc(&guard, capture_error);
  xmlSetGenericErrorFunc(NULL, ignore_generic_error);
  /* No network; no DTD loaded, no default attributes from one, no entity
   * substituted (XML_PARSE_NOENT, DTDLOAD, DTDATTR and HUGE all left off). */
  xmlDoc *parsed = xmlCtxtReadMemory(ctxt, data, (int)size, NULL, NULL,
                                     XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR |
                                         XML_PARSE_BIG_LINES);
  bool well_formed = ctxt->wellFormed != 0;
  if (!guard.have_error) {
    xml_error_ptr e = xmlCtxtGetLastError(ctxt);
    if (e && e->level >= XML_ERR_ERROR)
      capture_error(&guard, e);
  }
  xmlFreeParserCtxt(ctxt);
  xmlSetStructuredErrorFunc(old_structured_ctx, old_structured);
  xmlSetGenericErrorFunc(old_generic_ctx, old_generic);
  int rc = LCP_OK;
  if (guard.doctype) {
    *line = guard.stop_line;
    rc = lcp__model_error(
        error, error_size, LCP_ERR_INVALID_ARGUMENT,
        "a DOCTYPE is not allowed (no DTD or entity declarations: the document needs "
        "none)");
  } else if (guard.too_deep) {
    *line = guard.stop_line;
    rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT,
                          "elements nested more than %d deep", LCP_XML_MAX_DEPTH);
  } else if (!parsed || !well_formed) {
    *line = guard.have_error ? guard.error_line : 0;
    if (guard.have_error && guard.error_code == XML_ERR_NO_MEMORY)
      rc = LCP_ERR_NO_MEMORY;
    else if (quote_content && guard.have_error)
      rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "malformed XML: %s",
                            guard.message);
    else
      rc = lcp__model_error(error, error_size, LCP_ERR_INVALID_ARGUMENT, "malformed XML: %s",
                            guard.have_error ? error_kind(guard.error_code) : "not well-formed");
  }
  if (rc != LCP_OK) {
    if (parsed)
      xmlFreeDoc(parsed);
    return rc;
  }
  *doc = parsed;
  return LCP_OK;
}
