/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd's resource limits under a hostile or careless peer: a request over
 * --max-message-bytes in all its frames, a multipart message of 300 frames
 * of 8 MiB, 60 Pings of 15 MiB queued behind a long Step, a client that
 * never reads its replies, 2,000 idle connections, and a Step carrying
 * 200,000 targets. Throughout, the daemon's peak resident memory (VmHWM)
 * stays under --max-memory (256 MiB by default), another client's Ping is
 * answered within 100 ms, each offender gets a clear refusal (a reply with
 * RESOURCE_EXHAUSTED, or its connection closed with the reason logged), and
 * the world is as before. SIGTERM ends the daemon within a second whatever
 * it is doing.
 *
 * Times are own times (own_clock in daemon_harness.h): the wall time less
 * what the daemon's and this test's main threads spent waiting for a CPU
 * held by other processes, so that the bounds hold on a 2-core machine
 * running other builds and tests, while a daemon slow on its own fails them.
 *
 * In a sanitizer build, AddressSanitizer's shadow memory and its
 * quarantine of freed blocks are part of the resident memory: the memory
 * bound is then not asserted (the daemon runs with --max-memory 0) and the
 * sizes are smaller; everything else is asserted the same. */
#include "daemon_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* The daemon's default --max-memory, in KiB as /proc reports. */
#define MEMORY_BOUND_KIB (256 * 1024)
/* The responsiveness the daemon promises another client meanwhile. */
#define PING_BOUND_S 0.100
/* Long enough never to end by itself in a test (a cancel ends it). */
#define ENDLESS_STEPS 80000000
#define MIB ((size_t)1 << 20)

/* ---- the daemon process, seen from /proc ---- */

/* A "VmHWM:" or "VmRSS:" line of /proc/PID/status, in KiB. */
static long status_kib(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  long value = -1;
  size_t length = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, length) == 0 && line[length] == ':')
      value = strtol(line + length + 1, NULL, 10);
  fclose(f);
  assert_true(value >= 0);
  return value;
}

/* User plus system CPU time of the process, in seconds. */
static double cpu_seconds(pid_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  /* After the command name's closing parenthesis: state is field 3, utime
   * and stime are fields 14 and 15. */
  const char *p = strrchr(text, ')');
  assert_non_null(p);
  unsigned long long utime = 0, stime = 0;
  assert_int_equal(
      sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime), 2);
  return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static int open_descriptors(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
  DIR *dir = opendir(path);
  assert_non_null(dir);
  int count = 0;
  for (struct dirent *e; (e = readdir(dir));)
    count += e->d_name[0] != '.';
  closedir(dir);
  return count;
}

/* The seconds all of a process's threads but `except` (0: none) have run
 * on a CPU and stood ready to run waiting for one (/proc/PID/task/TID/
 * schedstat). A thread that ends takes its share with it. */
static void threads_schedstat(pid_t pid, pid_t except, double *running, double *waiting) {
  char path[320];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *dir = opendir(path);
  assert_non_null(dir);
  *running = *waiting = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == (int)except)
      continue;
    snprintf(path, sizeof path, "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue; /* the thread ended */
    unsigned long long run_ns = 0, wait_ns = 0;
    if (fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2) {
      *running += 1e-9 * (double)run_ns;
      *waiting += 1e-9 * (double)wait_ns;
    }
    fclose(f);
  }
  closedir(dir);
}

/* Returns once, over a tenth of a second, the daemon's threads and this
 * process's ZeroMQ I/O threads have neither run for more than 5 ms nor
 * stood ready to run for more than 50 ms: all they were sent is read and
 * answered or refused. A loaded machine delays this rather than faking it:
 * a thread with work is at every moment either on a CPU or waiting for
 * one, so its two sums cover the whole tenth. What an idle daemon still
 * does is its 10 ms timer (memory watch, idle timeout), well under a
 * millisecond of CPU in a tenth. */
static void wait_until_quiet(pid_t daemon) {
  double start = now_seconds();
  for (;;) {
    double run[2], wait[2], own_run[2], own_wait[2];
    threads_schedstat(daemon, 0, &run[0], &wait[0]);
    threads_schedstat(getpid(), getpid(), &own_run[0], &own_wait[0]);
    sleep_ms(100);
    threads_schedstat(daemon, 0, &run[1], &wait[1]);
    threads_schedstat(getpid(), getpid(), &own_run[1], &own_wait[1]);
    double ran = run[1] - run[0] + own_run[1] - own_run[0];
    double waited = wait[1] - wait[0] + own_wait[1] - own_wait[0];
    if (ran >= 0 && waited >= 0 && ran < 0.005 && waited < 0.050)
      return;
    if (now_seconds() - start > 60.0)
      fail_msg("the daemon was still busy after 60 s");
  }
}

static void assert_memory_bounded(const char *what, pid_t pid) {
  long peak = status_kib(pid, "VmHWM");
  printf("# %s: peak resident memory %ld MiB\n", what, peak / 1024);
  if (!SANITIZED)
    assert_true(peak < MEMORY_BOUND_KIB);
}

/* ---- another client's Pings ---- */

typedef struct prober {
  void *req;
  pid_t daemon;
  uint64_t id;
  int pings, late;
  double worst, worst_wall;
} prober;

static void probe(prober *p) {
  double wall = now_seconds();
  own_clock clock = own_clock_start(p->daemon);
  assert_true(call_ping(p->req, ++p->id));
  double took = own_clock_seconds(&clock);
  wall = now_seconds() - wall;
  p->worst = took > p->worst ? took : p->worst;
  p->worst_wall = wall > p->worst_wall ? wall : p->worst_wall;
  p->late += took >= PING_BOUND_S;
  p->pings++;
}

/* Within the bound of own time, but for one in `allowed` (at least one):
 * own time still counts the ZeroMQ I/O threads' waits for a CPU, and where
 * this test's own client moves hundreds of megabytes through the same
 * cores, its I/O thread's work; there one in 20, else one in 50. */
static void assert_probes_answered(const char *what, const prober *p, int allowed) {
  printf("# %s: %d Pings from another client, %d took 100 ms or more of own time, the slowest "
         "%.1f ms (%.1f ms of wall time)\n",
         what, p->pings, p->late, p->worst * 1e3, p->worst_wall * 1e3);
  assert_true(p->pings >= 5);
  assert_true(p->late * allowed <= p->pings || p->late <= 1);
}

/* ---- fixtures ---- */

typedef struct fixture {
  daemon_proc d;
  bool done; /* the test ran to its end, its sockets closed */
} fixture;

static int start_with(void **state, const char *const *extra) {
  fixture *f = calloc(1, sizeof *f);
  const char *args[16];
  int n = 0;
  if (SANITIZED) {
    args[n++] = "--max-memory";
    args[n++] = "0";
  }
  for (int i = 0; extra && extra[i]; ++i)
    args[n++] = extra[i];
  args[n] = NULL;
  daemon_start(&f->d, args);
  *state = f;
  return 0;
}

static int setup(void **state) { return start_with(state, NULL); }

/* The idle fixture's --idle-timeout, in seconds. */
#define IDLE_TIMEOUT_S 3.0

static int setup_idle(void **state) {
  return start_with(state, (const char *[]){"--max-clients", "1000", "--idle-timeout", "3", NULL});
}

static int teardown(void **state) {
  fixture *f = *state;
  if (f->d.pid > 0)
    daemon_stop(&f->d);
  /* A test that failed left sockets open, and terminating the context
   * would wait for them for ever: it is left to the process's exit. */
  if (f->done)
    test_context_destroy();
  free(f);
  return 0;
}

/* ---- sockets ---- */

/* Watches a client socket's connection for ZMQ_EVENT_DISCONNECTED. */
static void *watch_disconnects(void *socket, const char *name) {
  char endpoint[64];
  snprintf(endpoint, sizeof endpoint, "inproc://%s", name);
  assert_int_equal(zmq_socket_monitor(socket, endpoint, ZMQ_EVENT_DISCONNECTED), 0);
  void *pair = zmq_socket(test_context(), ZMQ_PAIR);
  int zero = 0;
  zmq_setsockopt(pair, ZMQ_LINGER, &zero, sizeof zero);
  assert_int_equal(zmq_connect(pair, endpoint), 0);
  return pair;
}

static bool disconnected(void *pair, int timeout_ms) {
  zmq_pollitem_t item = {.socket = pair, .events = ZMQ_POLLIN};
  if (zmq_poll(&item, 1, timeout_ms) <= 0)
    return false;
  zmq_msg_t frame;
  zmq_msg_init(&frame);
  while (zmq_msg_recv(&frame, pair, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&frame)) {
  }
  zmq_msg_close(&frame);
  return true;
}

static void stop_watching(void *socket, void **pair) {
  zmq_socket_monitor(socket, NULL, 0);
  close_socket(pair);
}

/* A Ping request with a payload of size bytes, packed into a new buffer. */
static unsigned char *packed_ping(uint64_t id, size_t payload_size, size_t *size) {
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  unsigned char *payload = calloc(1, payload_size ? payload_size : 1);
  assert_non_null(payload);
  ping.payload.data = payload;
  ping.payload.len = payload_size;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  *size = lcpsim__v1__request__get_packed_size(&r);
  unsigned char *data = malloc(*size);
  assert_non_null(data);
  lcpsim__v1__request__pack(&r, data);
  free(payload);
  return data;
}

static void cancel_step(void *dealer, uint64_t step_id) {
  Lcpsim__V1__CancelStepRequest cancel = LCPSIM__V1__CANCEL_STEP_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(step_id + 1, LCPSIM__V1__REQUEST__CALL_CANCEL_STEP, &cancel);
  dealer_send(dealer, &r);
  Lcpsim__V1__Reply *reply = receive_reply(dealer);
  assert_ok(reply, step_id, LCPSIM__V1__REPLY__RESULT_STEP);
  assert_true(reply->step->cancelled);
  reply_free(&reply);
  reply = receive_reply(dealer);
  assert_ok(reply, step_id + 1, LCPSIM__V1__REPLY__RESULT_CANCEL_STEP);
  reply_free(&reply);
}

static int endpoint_port(const char *endpoint) {
  const char *colon = strrchr(endpoint, ':');
  assert_non_null(colon);
  return atoi(colon + 1);
}

/* A plain TCP connection to the daemon that says nothing. */
static int raw_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int rc = connect(fd, (struct sockaddr *)&address, sizeof address);
  assert_true(rc == 0 || errno == EINPROGRESS);
  return fd;
}

/* Whether the daemon has closed a raw connection (its greeting read and
 * dropped on the way). */
static bool raw_closed(int fd) {
  char buffer[256];
  for (;;) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n > 0)
      continue;
    if (n == 0)
      return true;
    /* ENOTCONN: still connecting. */
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ENOTCONN;
  }
}

/* ---- a request over the bound in all its frames ---- */

static void test_a_request_over_the_bound_in_all_its_frames_is_refused(void **state) {
  fixture *f = *state;
  void *c = connect_req(f->d.rep);
  uint64_t before = world_hash(c);
  /* Three frames of 8 MiB: each under the 16 MiB of --max-message-bytes,
   * 24 MiB together. A REQ socket sends them after its delimiter. */
  static unsigned char frame[8 << 20];
  for (int i = 0; i < 3; ++i)
    assert_int_equal(zmq_send_const(c, frame, sizeof frame, i < 2 ? ZMQ_SNDMORE : 0),
                     (int)sizeof frame);
  unsigned char *data = NULL;
  long size = receive_frame(c, REPLY_TIMEOUT_MS, &data);
  assert_true(size > 0);
  Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, (size_t)size, data);
  free(data);
  assert_error(reply, 0, LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED,
               "more than the 16777216 one request may have (the daemon's --max-message-bytes)");
  reply_free(&reply);
  /* Many small frames: refused as not one frame. */
  for (int i = 0; i < 40; ++i)
    assert_int_equal(zmq_send(c, "x", 1, i < 39 ? ZMQ_SNDMORE : 0), 1);
  size = receive_frame(c, REPLY_TIMEOUT_MS, &data);
  reply = lcpsim__v1__reply__unpack(NULL, (size_t)size, data);
  free(data);
  assert_error(reply, 0, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "(got 40)");
  reply_free(&reply);
  assert_true(world_hash(c) == before);
  close_socket(&c);
  f->done = true;
}

/* ---- a multipart message of 300 frames of 8 MiB ---- */

static void test_a_huge_multipart_message_is_cut_off(void **state) {
  fixture *f = *state;
  void *c = connect_req(f->d.rep);
  uint64_t before = world_hash(c);
  prober p = {.req = c, .daemon = f->d.pid, .id = 100};
  void *attacker = connect_dealer(f->d.rep);
  void *watch = watch_disconnects(attacker, "multipart-attacker");
  /* zmq_send_const: the 300 frames share one buffer in this process. */
  static unsigned char frame[8 << 20];
  const int frames = SANITIZED ? 60 : 300;
  assert_int_equal(zmq_send(attacker, "", 0, ZMQ_SNDMORE), 0);
  for (int i = 0; i < frames; ++i)
    assert_int_equal(
        zmq_send_const(attacker, frame, sizeof frame, i < frames - 1 ? ZMQ_SNDMORE : 0),
        (int)sizeof frame);
  /* Cut off when the daemon's memory passes three quarters of the bound;
   * or, in a sanitizer build (no memory watch), refused when whole. */
  double start = now_seconds();
  bool cut = false, refused = false;
  while (!cut && !refused && now_seconds() - start < 30.0) {
    probe(&p);
    cut = disconnected(watch, 10);
    zmq_pollitem_t item = {.socket = attacker, .events = ZMQ_POLLIN};
    if (!cut && zmq_poll(&item, 1, 0) == 1) {
      Lcpsim__V1__Reply *reply = receive_reply(attacker);
      assert_error(reply, 0, LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED, "--max-message-bytes");
      reply_free(&reply);
      refused = true;
    }
  }
  printf("# %d x 8 MiB in one message: %s after %.2f s\n", frames,
         cut       ? "the connection was closed"
         : refused ? "refused"
                   : "neither",
         now_seconds() - start);
  assert_true(SANITIZED ? cut || refused : cut);
  for (int i = 0; i < 10; ++i)
    probe(&p);
  assert_probes_answered("a huge multipart message", &p, 20);
  assert_memory_bounded("a huge multipart message", f->d.pid);
  stop_watching(attacker, &watch);
  close_socket(&attacker);
  assert_true(world_hash(c) == before);
  close_socket(&c);
  f->done = true;
}

/* ---- 60 Pings of 15 MiB queued behind a long Step ---- */

static void test_big_pings_queued_behind_a_long_step(void **state) {
  fixture *f = *state;
  void *c = connect_req(f->d.rep);
  prober p = {.req = c, .daemon = f->d.pid, .id = 100};
  void *stepper = connect_dealer(f->d.rep);
  start_step(stepper, 1, ENDLESS_STEPS);
  /* A client that reads slowly: its own queue takes two replies. */
  void *pinger = zmq_socket(test_context(), ZMQ_DEALER);
  int two = 2, zero = 0;
  zmq_setsockopt(pinger, ZMQ_RCVHWM, &two, sizeof two);
  zmq_setsockopt(pinger, ZMQ_LINGER, &zero, sizeof zero);
  assert_int_equal(zmq_connect(pinger, f->d.rep), 0);
  const int count = 60;
  const size_t payload = SANITIZED ? 4 * MIB : 15 * MIB;
  unsigned char *pings[60];
  size_t sizes[60];
  for (int i = 0; i < count; ++i) {
    pings[i] = packed_ping((uint64_t)(1000 + i), payload, &sizes[i]);
    assert_int_equal(zmq_send(pinger, "", 0, ZMQ_SNDMORE), 0);
    assert_int_equal(zmq_send_const(pinger, pings[i], sizes[i], 0), (int)sizes[i]);
  }
  /* The daemon serves what it can while the Step runs. */
  double start = now_seconds();
  while (now_seconds() - start < 3.0) {
    probe(&p);
    sleep_ms(10);
  }
  assert_memory_bounded("60 big Pings", f->d.pid);
  /* Then the client reads: every Ping is answered in order, echoed, or
   * refused unserved because the client left its replies unread. */
  int echoed = 0, refused = 0;
  for (int i = 0; i < count; ++i) {
    unsigned char *data = NULL;
    long size = receive_frame(pinger, 30000, &data);
    assert_true(size > 0);
    Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, (size_t)size, data);
    free(data);
    assert_non_null(reply);
    if (reply->status && reply->status->code != LCPSIM__V1__STATUS__CODE__OK) {
      assert_error(reply, (uint64_t)(1000 + i), LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED,
                   "replies unread");
      refused++;
    } else {
      assert_ok(reply, (uint64_t)(1000 + i), LCPSIM__V1__REPLY__RESULT_PING);
      assert_int_equal(reply->ping->payload.len, payload);
      echoed++;
    }
    reply_free(&reply);
    if (i % 10 == 0)
      probe(&p);
  }
  printf("# 60 x %zu MiB Pings: %d echoed, %d refused\n", payload / MIB, echoed, refused);
  assert_true(echoed >= 1);
  assert_true(refused >= 1);
  for (int i = 0; i < count; ++i)
    free(pings[i]);
  cancel_step(stepper, 1);
  assert_probes_answered("60 big Pings", &p, 20);
  assert_memory_bounded("60 big Pings", f->d.pid);
  close_socket(&pinger);
  close_socket(&stepper);
  close_socket(&c);
  f->done = true;
}

/* ---- a client that never reads ---- */

/* A DEALER whose own queue takes one reply and its kernel a few KiB, so
 * that the daemon's queue for it fills; watched for disconnection. A send
 * that makes no progress for send_timeout_ms ends the sending (once the
 * daemon closed the connection, a client whose queue is full does not
 * notice until it reads). */
static void *slow_reader(const char *endpoint, const char *name, int send_timeout_ms,
                         void **watch) {
  void *client = zmq_socket(test_context(), ZMQ_DEALER);
  int one = 1, zero = 0, small = 4096;
  zmq_setsockopt(client, ZMQ_RCVHWM, &one, sizeof one);
  zmq_setsockopt(client, ZMQ_RCVBUF, &small, sizeof small);
  zmq_setsockopt(client, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(client, ZMQ_SNDTIMEO, &send_timeout_ms, sizeof send_timeout_ms);
  assert_int_equal(zmq_connect(client, endpoint), 0);
  *watch = watch_disconnects(client, name);
  return client;
}

/* Sends Pings 1 to count with payloads of payload bytes, without reading;
 * returns how many went. */
static int send_pings(void *client, int count, size_t payload, prober *p) {
  int sent = 0;
  for (uint64_t id = 1; id <= (uint64_t)count; ++id) {
    size_t size;
    unsigned char *ping = packed_ping(id, payload, &size);
    bool ok = zmq_send(client, "", 0, ZMQ_SNDMORE) == 0;
    ok = ok && zmq_send(client, ping, size, 0) == (int)size;
    free(ping);
    if (!ok)
      break;
    sent++;
    if (id % 500 == 0)
      probe(p);
  }
  /* Another client is served meanwhile. */
  for (int i = 0; i < 50; ++i) {
    probe(p);
    sleep_ms(10);
  }
  /* The daemon has read them all and done what it does with a client that
   * does not read. */
  wait_until_quiet(p->daemon);
  return sent;
}

typedef struct outcome {
  int echoed, told, refused, missing;
  bool closed;
} outcome;

/* Reads every reply now: each is an echo, or tells of a dropped reply by
 * its request's id, or refuses a request unserved; each id once. Reads
 * until every request is answered or, once the daemon has closed the
 * connection, until what reached this side is read (it is at once; 100 ms
 * is room for the socket's own bookkeeping). While the connection is open,
 * a reply that has not come within REPLY_TIMEOUT_MS of the one before is
 * missing. */
static outcome read_replies(void *client, void *watch, int sent) {
  bool *seen = calloc((size_t)sent + 1, sizeof *seen);
  outcome o = {0};
  for (int answered = 0; answered < sent;) {
    zmq_pollitem_t items[2] = {{.socket = client, .events = ZMQ_POLLIN},
                               {.socket = watch, .events = ZMQ_POLLIN}};
    int ready = zmq_poll(items, o.closed ? 1 : 2, o.closed ? 100 : REPLY_TIMEOUT_MS);
    assert_true(ready >= 0);
    if (ready == 0)
      break;
    if (!o.closed && (items[1].revents & ZMQ_POLLIN))
      o.closed = disconnected(watch, 0);
    if (!(items[0].revents & ZMQ_POLLIN))
      continue;
    unsigned char *data = NULL;
    long got = receive_frame(client, 0, &data);
    if (got < 0)
      continue;
    answered++;
    Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, (size_t)got, data);
    free(data);
    assert_non_null(reply);
    assert_true(reply->id >= 1 && reply->id <= (uint64_t)sent);
    assert_false(seen[reply->id]);
    seen[reply->id] = true;
    if (reply->status && reply->status->code == LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED) {
      if (strstr(reply->status->message, "was dropped"))
        o.told++;
      else if (strstr(reply->status->message, "refused unserved"))
        o.refused++;
      else
        fail_msg("unexpected refusal: %s", reply->status->message);
    } else {
      assert_ok(reply, reply->id, LCPSIM__V1__REPLY__RESULT_PING);
      o.echoed++;
    }
    reply_free(&reply);
  }
  for (int id = 1; id <= sent; ++id)
    o.missing += !seen[id];
  free(seen);
  if (!o.closed)
    o.closed = disconnected(watch, 0);
  return o;
}

static void print_outcome(const char *what, int sent, const outcome *o) {
  printf("# %s, %d Pings: %d echoed, %d refused unserved, %d told dropped, %d missing, %s\n", what,
         sent, o->echoed, o->refused, o->told, o->missing,
         o->closed ? "disconnected" : "still connected");
}

static void test_a_client_that_never_reads_is_told_or_disconnected(void **state) {
  fixture *f = *state;
  void *c = connect_req(f->d.rep);
  uint64_t before = world_hash(c);
  prober p = {.req = c, .daemon = f->d.pid, .id = 100};
  /* Pings of 64 KiB: once 32 MiB of replies wait unread, the next requests
   * are refused unserved; once the daemon's queue for the client holds
   * 1000 replies, further replies are dropped, and the client is told of
   * each when it reads. */
  void *watch;
  /* Never closed, it sends them all: a send held up for REPLY_TIMEOUT_MS is
   * a hang. */
  void *client = slow_reader(f->d.rep, "slow-reader", REPLY_TIMEOUT_MS, &watch);
  int sent = send_pings(client, 1500, 64 << 10, &p);
  assert_int_equal(sent, 1500);
  outcome o = read_replies(client, watch, sent);
  print_outcome("a client that reads late", sent, &o);
  assert_true(o.echoed >= 1 && o.refused >= 1 && o.told >= 1);
  assert_int_equal(o.missing, 0);
  assert_false(o.closed);
  stop_watching(client, &watch);
  close_socket(&client);
  /* Pings of 1 KiB as fast as it can send: more are dropped than the
   * daemon keeps to tell of (1024), and it is disconnected. Nothing is
   * lost silently: a reply is missing only when the client was closed. Its
   * sending ends when a send has waited 2 s: once the daemon has closed it
   * (the daemon reads a connection it keeps within milliseconds, loaded
   * or not). */
  client = slow_reader(f->d.rep, "non-reader", 2000, &watch);
  sent = send_pings(client, 12000, 1024, &p);
  o = read_replies(client, watch, sent);
  print_outcome("a client that never reads", sent, &o);
  assert_true(o.told + o.refused > 0 || o.closed);
  if (o.missing)
    assert_true(o.closed);
  stop_watching(client, &watch);
  close_socket(&client);
  assert_probes_answered("a client that never reads", &p, 50);
  assert_memory_bounded("a client that never reads", f->d.pid);
  assert_true(world_hash(c) == before);
  close_socket(&c);
  f->done = true;
}

/* ---- 2,000 idle connections ---- */

/* How many of the raw connections the daemon has closed. *young gets how
 * many of those were connected less than IDLE_TIMEOUT_S before the count
 * ended: the daemon cannot have closed them for idleness (its clock starts
 * at the accept, after the connect), only refused them. */
static int count_closed(const int *fds, const double *connected, int count, int *young) {
  int closed = 0;
  *young = 0;
  bool *is_closed = calloc((size_t)count, sizeof *is_closed);
  assert_non_null(is_closed);
  for (int i = 0; i < count; ++i)
    closed += is_closed[i] = raw_closed(fds[i]);
  double end = now_seconds();
  for (int i = 0; i < count; ++i)
    *young += is_closed[i] && end - connected[i] < IDLE_TIMEOUT_S;
  free(is_closed);
  return closed;
}

static void test_idle_connections_are_bounded(void **state) {
  fixture *f = *state;
  void *c = connect_req(f->d.rep);
  prober p = {.req = c, .daemon = f->d.pid, .id = 100};
  probe(&p); /* connected before the crowd: one of the 1,000 */
  uint64_t before = world_hash(c);
  struct rlimit limit;
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  enum { CROWD = 2000 };
  if (limit.rlim_cur < CROWD + 200)
    skip();
  int port = endpoint_port(f->d.rep);
  static int fds[CROWD];
  static double connected[CROWD];
  for (int i = 0; i < CROWD; ++i) {
    connected[i] = now_seconds();
    fds[i] = raw_connect(port);
    if (i % 200 == 0)
      probe(&p);
  }
  /* 1,000 clients with the prober: those over --max-clients are closed as
   * they come, the others held; the daemon neither runs out of descriptors
   * nor spins. None is closed for idleness before the timeout: at most the
   * 1,001 refused are closed while younger than that (more may be closed
   * idle when a loaded machine took seconds to connect them all). */
  enum { REFUSED = CROWD - 999 };
  int closed = 0, young = 0, most_young = 0, most_descriptors = 0;
  double start = now_seconds();
  while (now_seconds() - start < 10.0) {
    probe(&p);
    int descriptors = open_descriptors(f->d.pid);
    most_descriptors = descriptors > most_descriptors ? descriptors : most_descriptors;
    closed = count_closed(fds, connected, CROWD, &young);
    most_young = young > most_young ? young : most_young;
    if (closed >= REFUSED)
      break;
    sleep_ms(20);
  }
  printf("# %d idle connections: %d closed within %.1f s\n", CROWD, closed, now_seconds() - start);
  assert_true(closed >= REFUSED);
  double cpu_start = cpu_seconds(f->d.pid);
  start = now_seconds();
  while (now_seconds() - start < 1.5) {
    probe(&p);
    int descriptors = open_descriptors(f->d.pid);
    most_descriptors = descriptors > most_descriptors ? descriptors : most_descriptors;
    sleep_ms(20);
  }
  double cpu_share = (cpu_seconds(f->d.pid) - cpu_start) / (now_seconds() - start);
  printf("# holding them, the daemon used %.1f %% of a CPU and at most %d descriptors\n",
         100.0 * cpu_share, most_descriptors);
  /* 1,000 connections, the daemon's own (ZeroMQ's signals, the event
   * loop), and connections accepted only to be closed at once: while the
   * crowd arrives, a loaded machine holds a few hundred of those between the
   * accept and ZeroMQ's close (1276 in all was seen under a full CI run);
   * what must not happen is the excess being held, which would need about
   * 2,000. */
  assert_true(most_descriptors <= 1000 + 500);
  assert_true(cpu_share < 0.5);
  /* After the idle timeout the rest are closed too, the last within two
   * and a half timeouts of its connect (the daemon looks four times a
   * second; the rest is room for a loaded machine): before the 10 s after
   * which ZeroMQ closes a connection that never sent its greeting, so that
   * it is the idle timeout that closes them. The prober, which keeps
   * talking, is not closed. */
  start = now_seconds();
  while (closed < CROWD && now_seconds() - connected[CROWD - 1] < 2.5 * IDLE_TIMEOUT_S) {
    probe(&p);
    sleep_ms(20);
    closed = count_closed(fds, connected, CROWD, &young);
    most_young = young > most_young ? young : most_young;
  }
  printf("# %d of %d closed after %.1f s more (--idle-timeout 3), %.1f s after the last "
         "connected; at most %d closed younger than the timeout\n",
         closed, CROWD, now_seconds() - start, now_seconds() - connected[CROWD - 1], most_young);
  assert_int_equal(closed, CROWD);
  assert_true(most_young <= REFUSED);
  for (int i = 0; i < CROWD; ++i)
    close(fds[i]);
  assert_probes_answered("2,000 idle connections", &p, 50);
  assert_memory_bounded("2,000 idle connections", f->d.pid);
  /* A newcomer is served again. */
  void *newcomer = connect_req(f->d.rep);
  assert_true(call_ping(newcomer, 1));
  close_socket(&newcomer);
  assert_true(world_hash(c) == before);
  close_socket(&c);
  f->done = true;
}

/* ---- 200,000 targets ---- */

/* A Step(0) carrying count targets on arm7: target i sets joint i % 7's
 * position to target_value(round, i) in POSITION mode. */
static double target_value(int round, int i) { return 0.01 * round + 1e-4 * (double)(i % 1000); }

/* The daemon's CPU time for the request goes to *seconds (its I/O thread
 * receives it, its main thread decodes and plans; it does nothing else
 * meanwhile): a measure of its work that the machine's other load does not
 * stretch. */
static Lcpsim__V1__Reply *step_with_targets(void *socket, pid_t daemon, uint64_t id, int round,
                                            int count, double *seconds) {
  Lcpsim__V1__SetTargetRequest *targets = calloc((size_t)count, sizeof *targets);
  Lcpsim__V1__SetTargetRequest **list = calloc((size_t)count, sizeof *list);
  int32_t *indices = malloc((size_t)count * sizeof *indices);
  double *values = malloc((size_t)count * sizeof *values);
  static double kp = 100, kd = 10;
  assert_true(targets && list && indices && values);
  for (int i = 0; i < count; ++i) {
    lcpsim__v1__set_target_request__init(&targets[i]);
    targets[i].robot = "arm7";
    targets[i].mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
    indices[i] = i % 7;
    values[i] = target_value(round, i);
    targets[i].n_indices = 1;
    targets[i].indices = &indices[i];
    targets[i].n_position = 1;
    targets[i].position = &values[i];
    targets[i].n_kp = targets[i].n_kd = 1;
    targets[i].kp = &kp;
    targets[i].kd = &kd;
    list[i] = &targets[i];
  }
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.n_targets = (size_t)count;
  step.targets = list;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  double start = cpu_run_seconds(daemon);
  Lcpsim__V1__Reply *reply = rpc(socket, &r);
  *seconds = cpu_run_seconds(daemon) - start;
  free(targets);
  free(list);
  free(indices);
  free(values);
  return reply;
}

static void test_too_many_targets_are_refused_and_planning_is_linear(void **state) {
  fixture *f = *state;
  void *c = connect_req(f->d.rep);
  uint64_t before = world_hash(c);
  double seconds;
  Lcpsim__V1__Reply *reply = step_with_targets(c, f->d.pid, 1, 0, 200000, &seconds);
  printf("# a Step with 200000 targets refused after %.1f ms of the daemon's CPU\n", seconds * 1e3);
  assert_error(reply, 1, LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED,
               "step.targets has more than the 4096 entries one list of a request may have");
  reply_free(&reply);
  assert_true(world_hash(c) == before);
  /* 4,096 are planned; the last target of each joint is what stays, as if
   * they had been sent one by one (each round's values differ, so a target
   * planned from the world rather than from the request's earlier targets
   * would show). Planning time (the daemon's CPU time) grows with the
   * count, not its square: ten times the targets cost far less than a
   * hundred times (the best of three of each, past a cache-cold first). */
  double small = 1e9, large = 1e9;
  for (int round = 0; round < 3; ++round) {
    reply = step_with_targets(c, f->d.pid, 2, 2 * round, 400, &seconds);
    assert_ok(reply, 2, LCPSIM__V1__REPLY__RESULT_STEP);
    reply_free(&reply);
    small = seconds < small ? seconds : small;
    reply = step_with_targets(c, f->d.pid, 3, 2 * round + 1, 4096, &seconds);
    assert_ok(reply, 3, LCPSIM__V1__REPLY__RESULT_STEP);
    reply_free(&reply);
    large = seconds < large ? seconds : large;
  }
  printf("# Step(0) with 400 targets %.2f ms, with 4096 targets %.2f ms of the daemon's CPU\n",
         small * 1e3, large * 1e3);
  assert_true(large < 40.0 * small + 0.005);
  uint64_t many = world_hash(c);
  /* The same controllers from one target per joint: the last ones. */
  Lcpsim__V1__SetTargetRequest set = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  set.robot = "arm7";
  set.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  double positions[7], kp = 100, kd = 10;
  for (int j = 0; j < 7; ++j)
    for (int i = 4095; i >= 0; --i)
      if (i % 7 == j) {
        positions[j] = target_value(5, i);
        break;
      }
  set.n_position = 7;
  set.position = positions;
  set.n_kp = set.n_kd = 1;
  set.kp = &kp;
  set.kd = &kd;
  Lcpsim__V1__Request r = request_of(4, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &set);
  reply = rpc(c, &r);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_SET_TARGET);
  reply_free(&reply);
  assert_true(world_hash(c) == many);
  /* SetTarget's joints too are capped. */
  int32_t *indices = calloc(5000, sizeof *indices);
  set = (Lcpsim__V1__SetTargetRequest)LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  set.robot = "arm7";
  set.n_indices = 5000;
  set.indices = indices;
  r = request_of(5, LCPSIM__V1__REQUEST__CALL_SET_TARGET, &set);
  reply = rpc(c, &r);
  assert_error(reply, 5, LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED,
               "set_target.indices has more than the 4096 entries");
  reply_free(&reply);
  free(indices);
  assert_true(world_hash(c) == many);
  close_socket(&c);
  f->done = true;
}

/* ---- SIGTERM whatever the daemon does ---- */

static void test_sigterm_within_a_second_whatever_the_daemon_does(void **state) {
  fixture *f = *state;
  /* A long Step, requests held behind it, a huge multipart message
   * arriving, a large request being decoded, and a crowd of connections. */
  void *stepper = connect_dealer(f->d.rep);
  start_step(stepper, 1, ENDLESS_STEPS);
  void *reader = connect_dealer(f->d.rep);
  Lcpsim__V1__GetStateRequest get = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(2, LCPSIM__V1__REQUEST__CALL_GET_STATE, &get);
  dealer_send(reader, &r);
  int port = endpoint_port(f->d.rep);
  enum { CROWD = 500 };
  int fds[CROWD];
  for (int i = 0; i < CROWD; ++i)
    fds[i] = raw_connect(port);
  void *attacker = connect_dealer(f->d.rep);
  static unsigned char frame[8 << 20];
  assert_int_equal(zmq_send(attacker, "", 0, ZMQ_SNDMORE), 0);
  for (int i = 0; i < 100; ++i)
    zmq_send_const(attacker, frame, sizeof frame, i < 99 ? ZMQ_SNDMORE : 0);
  void *decoder = connect_dealer(f->d.rep);
  size_t size;
  unsigned char *big = packed_ping(3, 15 * MIB, &size);
  for (int i = 0; i < 4; ++i) {
    zmq_send(decoder, "", 0, ZMQ_SNDMORE);
    zmq_send_const(decoder, big, size, 0);
  }
  sleep_ms(150);
  double seconds = 0, own_seconds = 0;
  int status = daemon_signal_and_wait_own(&f->d, SIGTERM, &seconds, &own_seconds);
  printf("# SIGTERM under load: exited in %.0f ms (%.0f ms of own time)\n", seconds * 1e3,
         own_seconds * 1e3);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_true(own_seconds < 1.0);
  for (int i = 0; i < CROWD; ++i)
    close(fds[i]);
  close_socket(&attacker);
  close_socket(&decoder);
  close_socket(&reader);
  close_socket(&stepper);
  free(big);
  f->done = true;
}

/* ---- the options ---- */

static void test_the_options(void **state) {
  (void)state;
  static char out[8192], err[4096];
  int status =
      daemon_run_to_exit((const char *[]){"--help", NULL}, out, sizeof out, err, sizeof err);
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_non_null(strstr(out, "--max-clients N"));
  assert_non_null(strstr(out, "--idle-timeout S"));
  assert_non_null(strstr(out, "--max-memory MIB"));
  assert_non_null(strstr(out, "largest request, all its frames together"));
  const char *bad[][2] = {{"--max-clients", "0"},   {"--max-clients", "many"},
                          {"--idle-timeout", "-1"}, {"--idle-timeout", "soon"},
                          {"--max-memory", "-5"},   {"--max-memory", "1G"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    status = daemon_run_to_exit((const char *[]){bad[i][0], bad[i][1], NULL}, out, sizeof out, err,
                                sizeof err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
    assert_non_null(strstr(err, bad[i][0]));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_a_request_over_the_bound_in_all_its_frames_is_refused,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_huge_multipart_message_is_cut_off, setup, teardown),
      cmocka_unit_test_setup_teardown(test_big_pings_queued_behind_a_long_step, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_client_that_never_reads_is_told_or_disconnected, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_idle_connections_are_bounded, setup_idle, teardown),
      cmocka_unit_test_setup_teardown(test_too_many_targets_are_refused_and_planning_is_linear,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_sigterm_within_a_second_whatever_the_daemon_does, setup,
                                      teardown),
      cmocka_unit_test(test_the_options),
  };
  /* TEST_FILTER=pattern runs the matching tests only. */
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
