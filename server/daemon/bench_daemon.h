/* SPDX-License-Identifier: Apache-2.0 */
/* An lcpsimd that a bench starts and stops (lcpsim-rpc-bench,
 * lcpsim-batch-bench): on ephemeral loopback ports, with the endpoints it
 * bound read from its first line ("lcpsimd listening rep=... pub=...
 * [http=http://HOST:PORT]"), and stopped with SIGTERM, which it must
 * answer by exiting cleanly. */
#ifndef LCPD_BENCH_DAEMON_H
#define LCPD_BENCH_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct lcpd_bench_daemon {
  pid_t pid;  /* -1: not running */
  int output; /* the read end of its stdout, kept open until it stops */
  char rep[256];
  char pub[256];
  char http[256]; /* HOST:PORT with --http; "" without */
} lcpd_bench_daemon_t;

/* Starts path with --bind and --pub on 127.0.0.1 port 0 and --log-level
 * warning, then the extra arguments. False, with a message on stderr
 * prefixed by who, when it does not start or prints no first line. */
bool lcpd_bench_daemon_start(lcpd_bench_daemon_t *daemon, const char *path,
                             const char *const *extra, int extra_count, const char *who);
/* SIGTERM and wait; true when it exited with status 0 (or was not running). */
bool lcpd_bench_daemon_stop(lcpd_bench_daemon_t *daemon, const char *who);

#endif
