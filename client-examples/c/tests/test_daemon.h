/* SPDX-License-Identifier: Apache-2.0 */
/* Test support: a live lcpsimd of the test's own on ephemeral ports, and an endpoint where
 * nothing listens. */
#ifndef LCPSIM_TEST_DAEMON_H
#define LCPSIM_TEST_DAEMON_H

#include "lcpsim_client.h"

#include <stddef.h>
#include <sys/types.h>

typedef struct {
  pid_t pid;
  char rep[128]; /* the request endpoint, e.g. tcp://127.0.0.1:40123 */
  char pub[128]; /* the state stream's endpoint */
  char stdout_path[64];
} test_daemon_t;

/* Starts `daemon_path --bind tcp://127.0.0.1:0 --pub tcp://127.0.0.1:0` and reads the endpoints
 * from the first line it prints. 0 on success, -1 (with a message on stderr) otherwise. */
int test_daemon_start(const char *daemon_path, test_daemon_t *daemon);
/* The same with more arguments (NULL-terminated; NULL: none). */
int test_daemon_start_args(const char *daemon_path, const char *const *args, test_daemon_t *daemon);

/* Sends SIGTERM and waits (SIGKILL after 10 s); returns the exit status, or 128 + the signal
 * that ended it. */
int test_daemon_stop(test_daemon_t *daemon);

/* A TCP endpoint on 127.0.0.1 that refuses connections: a port bound but not listening, held by
 * the returned socket (close it when done) so nothing else can take it meanwhile. */
int test_refusing_endpoint(char *endpoint, size_t size);

/* A live daemon and a client connected to its request endpoint. */
typedef struct {
  test_daemon_t daemon;
  lcpsim_client_t *client;
} test_live_t;

/* Starts the daemon and connects a client (20 s timeout): 0, or -1 with nothing left running. */
int test_live_start(const char *daemon_path, test_live_t **out);
/* Closes the client and stops the daemon; 0 when it exited cleanly. Sets *live to NULL. */
int test_live_stop(test_live_t **live);

/* Milliseconds on a monotonic clock. */
double test_now_ms(void);

#endif
