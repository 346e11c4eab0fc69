/* SPDX-License-Identifier: Apache-2.0 */
/* The file rules of lcp_file_read (lcpsim/urdf.h), for the model library's
 * own use. */
#ifndef LCP_MODEL_SAFE_FILE_H
#define LCP_MODEL_SAFE_FILE_H

#include "lcpsim/urdf.h"

#include <stdbool.h>

/* Whether dir may be searched for files under the rules: always when they
 * do not confine; confined, when dir (symbolic links and ".." resolved) is
 * one of the roots or lies below one. */
bool lcp__file_dir_allowed(const char *dir, const lcp_file_rules_t *rules);

/* Writes the message (printf-style) into error (may be NULL) and returns
 * status: the error reporting of the file rules and the mesh readers. */
int lcp__model_error(char *error, size_t error_size, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
