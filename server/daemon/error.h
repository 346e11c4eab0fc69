/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's one error convention. A function that can fail takes an
 * lcpd_error_t * (its last argument; NULL when the caller wants no message),
 * fills it and returns its code, a negative lcp_status_t; it returns LCP_OK
 * (0) on success. Allocation failures are errors like any other
 * (LCP_ERR_NO_MEMORY) and travel back the same way. A request's error
 * becomes its reply's status: the code through lcpd_code_of (convert.h),
 * the message as it is, naming the field, the name or the file at fault. */
#ifndef LCPD_ERROR_H
#define LCPD_ERROR_H

#include "lcpsim/lcpsim.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct lcpd_error {
  int code; /* LCP_OK, or a negative lcp_status_t */
  char message[768];
} lcpd_error_t;

/* Records code and the formatted message in error (when not NULL); returns
 * code, so that `return lcpd_fail(error, ...);` reads well. */
int lcpd_fail(lcpd_error_t *error, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Puts context in front of the message already recorded in error (not
 * NULL): "spawn: " before "the name 'box' is taken". Returns the recorded
 * code. */
int lcpd_error_prefix(lcpd_error_t *error, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Whether size bytes are well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF): the rule for every string of a
 * request. */
bool lcpd_utf8_valid(const char *text, size_t size);
/* Replaces, in place, every byte of text that is not part of a well-formed
 * UTF-8 sequence by '?' (a message cut inside a character, or a name read
 * from a file that is not UTF-8): what a reply carries is always UTF-8. */
void lcpd_utf8_repair(char *text);

/* A name given by a request (or read from a file), made safe to quote in a
 * message: control characters (C0, DEL, C1), bytes that are not UTF-8 and
 * the backslash are escaped (\x1b, \u0085), and a name longer than
 * LCPD_QUOTE_BYTES is cut on a character's boundary and ends with "…".
 * Writes into buffer (LCPD_QUOTE_SIZE bytes hold any result) and returns
 * it. LCPD_QUOTE(name) does it in a temporary buffer, for a format's
 * argument: lcpd_fail(error, code, "no robot named '%s'", LCPD_QUOTE(name)). */
#define LCPD_QUOTE_BYTES 64
#define LCPD_QUOTE_SIZE (LCPD_QUOTE_BYTES + 8)
const char *lcpd_quote(char *buffer, size_t size, const char *name);
#define LCPD_QUOTE(name) lcpd_quote((char[LCPD_QUOTE_SIZE]){0}, LCPD_QUOTE_SIZE, (name))

#endif
