/* SPDX-License-Identifier: Apache-2.0 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int lcpd_fail(lcpd_error_t *error, int code, const char *fmt, ...) {
  if (error) {
    error->code = code;
    va_list args;
    va_start(args, fmt);
    vsnprintf(error->message, sizeof error->message, fmt, args);
    va_end(args);
  }
  return code;
}

int lcpd_error_prefix(lcpd_error_t *error, const char *fmt, ...) {
  if (!error)
    return LCP_ERR_INVALID_ARGUMENT;
  char message[sizeof error->message];
  snprintf(message, sizeof message, "%s", error->message);
  va_list args;
  va_start(args, fmt);
  int length = vsnprintf(error->message, sizeof error->message, fmt, args);
  va_end(args);
  if (length >= 0 && (size_t)length < sizeof error->message)
    snprintf(error->message + length, sizeof error->message - (size_t)length, "%s", message);
  return error->code;
}
