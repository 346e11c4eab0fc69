/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's log: one line per event on stderr,
 * "2025-01-31T12:00:00.123Z info  message". */
#ifndef LCPD_LOG_H
#define LCPD_LOG_H

#include <stdbool.h>

typedef enum lcpd_log_level {
  LCPD_LOG_ERROR = 0,
  LCPD_LOG_WARNING = 1,
  LCPD_LOG_INFO = 2,
  LCPD_LOG_DEBUG = 3,
} lcpd_log_level_t;

/* Events above this level are dropped (the default is info). */
void lcpd_log_set_level(lcpd_log_level_t level);
bool lcpd_log_enabled(lcpd_log_level_t level);
/* "error", "warning" (or "warn"), "info", "debug"; false for anything else. */
bool lcpd_log_parse_level(const char *name, lcpd_log_level_t *out);

void lcpd_log(lcpd_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LCPD_ERROR(...) lcpd_log(LCPD_LOG_ERROR, __VA_ARGS__)
#define LCPD_WARN(...) lcpd_log(LCPD_LOG_WARNING, __VA_ARGS__)
#define LCPD_INFO(...) lcpd_log(LCPD_LOG_INFO, __VA_ARGS__)
#define LCPD_DEBUG(...) lcpd_log(LCPD_LOG_DEBUG, __VA_ARGS__)

#endif
