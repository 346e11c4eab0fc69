/* SPDX-License-Identifier: Apache-2.0 */
/* Integration-test harness: starts a real lcpsimd on ephemeral ports and
 * talks to it over real ZeroMQ sockets. */
#ifndef LCPD_TEST_HARNESS_H
#define LCPD_TEST_HARNESS_H

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a test waits for a reply: generous, for sanitizer builds. */
#define REPLY_TIMEOUT_MS 10000

typedef struct daemon_proc {
  pid_t pid;
  int stdout_fd;
  char rep[256]; /* the bound endpoints, from the first line of output */
  char pub[256];
} daemon_proc;

/* Starts lcpsimd with --bind/--pub on port 0 and the given extra arguments
 * (NULL-terminated, may be NULL); fails the test when it does not print its
 * endpoints in time. */
void daemon_start(daemon_proc *d, const char *const *args);
/* Sends SIGTERM (or the given signal) and waits for the exit; returns the
 * exit status as waitpid gives it and the seconds it took in *seconds. */
int daemon_signal_and_wait(daemon_proc *d, int signal_number, double *seconds);
/* daemon_signal_and_wait, and in *own_seconds the exit's own time (see
 * own_clock): the wall time less the time the daemon's main thread, which
 * runs the exit, stood ready to run while other processes held the CPUs. */
int daemon_signal_and_wait_own(daemon_proc *d, int signal_number, double *seconds,
                               double *own_seconds);
/* SIGTERM, and asserts a clean exit 0 within a second of the exit's own
 * time (on a quiet machine, of wall time). */
void daemon_stop(daemon_proc *d);

/* Runs lcpsimd with the given arguments to completion (for options that
 * make it exit): returns the exit status; its stdout and stderr go to the
 * buffers (NUL-terminated, cut to size). */
int daemon_run_to_exit(const char *const *args, char *out, size_t out_size, char *err,
                       size_t err_size);

/* The ZeroMQ context every test shares (created on first use). */
void *test_context(void);
void test_context_destroy(void);
/* A REQ (or DEALER) socket connected to endpoint, linger 0. */
void *connect_req(const char *endpoint);
void *connect_dealer(const char *endpoint);
void close_socket(void **socket);
/* Sends a request on a DEALER, REQ-style (an empty delimiter first); the
 * reply comes with receive_reply. */
void dealer_send(void *dealer, const Lcpsim__V1__Request *request);
/* Sends a Ping on a DEALER and asserts that the next reply is its answer. A
 * peer's requests are read in order and a Ping is answered at once, even
 * while a Step runs: the requests sent before it have then been read. */
void dealer_ping(void *dealer, uint64_t id);
/* Sends a Step of `steps` on a DEALER, then a Ping (id: the Step's plus
 * 1,000,000), and takes the Ping's reply: a peer's requests are read in
 * order and a Ping is answered at once while a Step runs, so the Step is
 * then running, whatever the machine's load. The Step's reply comes later
 * with receive_reply. */
void start_step(void *dealer, uint64_t id, int32_t steps);
/* Sleeps ms milliseconds. */
void sleep_ms(int ms);

/* Sends a request on a REQ socket and waits for its reply (asserted to
 * arrive and decode). Free with reply_free. */
Lcpsim__V1__Reply *rpc(void *req_socket, const Lcpsim__V1__Request *request);
/* The same with raw bytes as the request frame. */
Lcpsim__V1__Reply *rpc_raw(void *req_socket, const void *data, size_t size);
/* The next reply on a REQ or DEALER socket (asserted to arrive within
 * REPLY_TIMEOUT_MS and decode). */
Lcpsim__V1__Reply *receive_reply(void *socket);
/* Receives one frame on any socket within timeout_ms into a malloc'd buffer;
 * returns its size, or -1 on timeout. For DEALERs, skips the empty
 * delimiter frame. */
long receive_frame(void *socket, int timeout_ms, unsigned char **out);
void reply_free(Lcpsim__V1__Reply **reply);
/* The next published state on a SUB socket within timeout_ms (NULL when
 * none came). Asserts the framing: one frame, the topic "state", then a
 * State that decodes. Free with lcpsim__v1__state__free_unpacked. */
Lcpsim__V1__State *receive_state(void *subscriber, int timeout_ms);

/* A Request carrying one call (body is the call's message). */
Lcpsim__V1__Request request_of(uint64_t id, Lcpsim__V1__Request__CallCase call, void *body);

/* Asserts the reply is OK with the given result case and id. */
void assert_ok(const Lcpsim__V1__Reply *reply, uint64_t id, Lcpsim__V1__Reply__ResultCase result);
/* Asserts the reply is an error with the code and id, and that its message
 * contains `needle` (when not NULL). */
void assert_error(const Lcpsim__V1__Reply *reply, uint64_t id, Lcpsim__V1__Status__Code code,
                  const char *needle);

/* ---- common calls (each asserts success) ---- */

Lcpsim__V1__Reply *call_get_state(void *socket, uint64_t id, bool contacts);
Lcpsim__V1__Reply *call_get_info(void *socket, uint64_t id);
/* Steps n steps with no targets; returns the world's step count after. */
uint64_t call_step(void *socket, uint64_t id, int32_t steps);
/* A hash of the world's whole state: the bytes of a SaveState snapshot
 * (time, poses, velocities, joint controllers, warm-start cache). */
uint64_t world_hash(void *socket);
/* world_hash and the bytes of GetInfo's reply (robots, bodies, settings)
 * and GetState's (with contacts): everything a client can read of the
 * world. */
uint64_t world_hash_all(void *socket);
bool call_ping(void *socket, uint64_t id);
/* Whether every double of a decoded message tree is finite. */
bool message_all_finite(const ProtobufCMessage *message);

/* What dropped bodies do, from Step replies one step at a time: each named
 * body's lowest height before it first rises (its landing) and the highest
 * one after (its rebound; -INFINITY when it never rose by more than 1e-9 m). */
typedef struct drop_record {
  double lowest;
  double rebound;
} drop_record;
void record_drops(void *socket, const char *const *names, int count, int32_t steps,
                  drop_record *out);

/* Writes content to a new file called name in a new directory under /tmp;
 * its path goes to path. remove_temp_file removes both. */
void write_temp_file(const char *name, const char *content, char *path, size_t size);
void remove_temp_file(const char *path);

/* CLOCK_MONOTONIC in seconds. */
double now_seconds(void);

/* The seconds a process's main thread has stood ready to run while other
 * tasks held the CPUs (the scheduler's run delay, /proc/PID/schedstat). */
double cpu_wait_seconds(pid_t pid);
/* The CPU seconds a process has used, all its threads, to the nanosecond
 * and up to date while it runs (its CPU-time clock; /proc/PID/stat counts
 * clock ticks, and schedstat lags a running thread by up to a tick). */
double cpu_run_seconds(pid_t pid);

/* A stopwatch of the time the daemon and this test are answerable for: the
 * wall time since the start, less the time this test's main thread and the
 * daemon's main thread (the one that steps, reads requests and handles
 * signals) stood ready to run while other processes held the CPUs. A
 * wall-clock bound on a machine busy with other builds and tests measures
 * that other work; this one does not, while a daemon that is slow itself
 * (computing, or sleeping, before it answers) still shows in full. The
 * reading may be low by a few scheduler turns: the kernel adds a wait when
 * it ends, so one in progress at the start counts whole, and a moment when
 * both threads wait counts twice. */
typedef struct own_clock {
  pid_t daemon;
  double wall, waited;
} own_clock;
own_clock own_clock_start(pid_t daemon);
double own_clock_seconds(const own_clock *clock);

/* Paths from the build. */
const char *robots_dir(void);
const char *daemon_scenes_dir(void);

#endif
