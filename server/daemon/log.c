/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static lcpd_log_level_t threshold = LCPD_LOG_INFO;

void lcpd_log_set_level(lcpd_log_level_t level) { threshold = level; }

bool lcpd_log_enabled(lcpd_log_level_t level) { return level <= threshold; }

bool lcpd_log_parse_level(const char *name, lcpd_log_level_t *out) {
  static const struct {
    const char *name;
    lcpd_log_level_t level;
  } names[] = {{"error", LCPD_LOG_ERROR},
               {"warning", LCPD_LOG_WARNING},
               {"warn", LCPD_LOG_WARNING},
               {"info", LCPD_LOG_INFO},
               {"debug", LCPD_LOG_DEBUG}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].level;
      return true;
    }
  }
  return false;
}

void lcpd_log(lcpd_log_level_t level, const char *fmt, ...) {
  if (!lcpd_log_enabled(level))
    return;
  static const char *const labels[] = {"error", "warn ", "info ", "debug"};
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm utc;
  gmtime_r(&now.tv_sec, &utc);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  /* Format the whole line first so that it reaches stderr in one write and
   * lines of concurrent writers never interleave. Newlines inside a message
   * (from a client's string) are flattened to keep one line per event. */
  char line[2048];
  int head =
      snprintf(line, sizeof line, "%s.%03ldZ %s ", stamp, now.tv_nsec / 1000000L, labels[level]);
  va_list args;
  va_start(args, fmt);
  vsnprintf(line + head, sizeof line - (size_t)head - 1, fmt, args);
  va_end(args);
  for (char *c = line + head; *c; ++c)
    if (*c == '\n' || *c == '\r')
      *c = ' ';
  size_t length = strlen(line);
  line[length] = '\n';
  fwrite(line, 1, length + 1, stderr);
}
