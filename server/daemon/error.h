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

#endif
