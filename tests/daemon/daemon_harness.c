/* SPDX-License-Identifier: Apache-2.0 */
/* pthread_timedjoin_np (a GNU extension) bounds the wait for a context a failed test left. */
#define _GNU_SOURCE
#include "daemon_harness.h"

#include "lcpsim/lcpsim.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

extern char **environ;

double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

const char *robots_dir(void) { return LCP_TEST_ROBOTS_DIR; }
const char *daemon_scenes_dir(void) { return LCP_TEST_SCENES_DIR; }

/* ---- the daemon process ---- */

/* Daemons started and not yet reaped. A test that fails an assertion jumps
 * past its daemon_stop; the daemon would then outlive the test program and
 * keep its output pipe open, and ctest waits for that pipe until its
 * timeout. They are killed when the program exits. */
#define MAX_LIVE_DAEMONS 64
static pid_t live_daemons[MAX_LIVE_DAEMONS];

static void kill_live_daemons(void) {
  for (int i = 0; i < MAX_LIVE_DAEMONS; ++i)
    if (live_daemons[i] > 0) {
      kill(live_daemons[i], SIGKILL);
      waitpid(live_daemons[i], NULL, 0);
      live_daemons[i] = 0;
    }
}

static void track_daemon(pid_t pid, bool live) {
  static bool registered;
  if (!registered)
    registered = atexit(kill_live_daemons) == 0;
  for (int i = 0; i < MAX_LIVE_DAEMONS; ++i)
    if (live ? live_daemons[i] == 0 : live_daemons[i] == pid) {
      live_daemons[i] = live ? pid : 0;
      return;
    }
}

static pid_t spawn_daemon(const char *const *args, int stdout_fd, int stderr_fd) {
  const char *argv[64];
  int argc = 0;
  argv[argc++] = LCPSIMD_PATH;
  for (int i = 0; args && args[i]; ++i) {
    assert_true(argc < 63);
    argv[argc++] = args[i];
  }
  argv[argc] = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  if (stderr_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
  pid_t pid;
  int rc = posix_spawn(&pid, LCPSIMD_PATH, &actions, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  assert_int_equal(rc, 0);
  return pid;
}

void daemon_start(daemon_proc *d, const char *const *extra) {
  const char *args[48] = {"--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0"};
  int n = 4;
  for (int i = 0; extra && extra[i]; ++i) {
    assert_true(n < 47);
    args[n++] = extra[i];
  }
  args[n] = NULL;
  int pipe_fds[2];
  assert_int_equal(pipe(pipe_fds), 0);
  d->pid = spawn_daemon(args, pipe_fds[1], -1);
  track_daemon(d->pid, true);
  close(pipe_fds[1]);
  d->stdout_fd = pipe_fds[0];
  /* The first line names the endpoints. */
  char line[1024];
  size_t length = 0;
  double deadline = now_seconds() + 30.0;
  while (length + 1 < sizeof line) {
    struct pollfd p = {.fd = d->stdout_fd, .events = POLLIN};
    int wait_ms = (int)((deadline - now_seconds()) * 1000.0);
    if (wait_ms <= 0 || poll(&p, 1, wait_ms) <= 0)
      fail_msg("lcpsimd printed no endpoints in time");
    char c;
    ssize_t got = read(d->stdout_fd, &c, 1);
    if (got <= 0)
      fail_msg("lcpsimd exited before printing its endpoints");
    if (c == '\n')
      break;
    line[length++] = c;
  }
  line[length] = '\0';
  int matched = sscanf(line, "lcpsimd listening rep=%255s pub=%255s", d->rep, d->pub);
  if (matched != 2)
    fail_msg("unexpected first line from lcpsimd: '%s'", line);
}

/* ---- time the machine's load does not stretch ---- */

double cpu_wait_seconds(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  /* Nanoseconds on a CPU, then nanoseconds ready to run waiting for one. */
  unsigned long long running_ns = 0, waiting_ns = 0;
  int fields = fscanf(f, "%llu %llu", &running_ns, &waiting_ns);
  fclose(f);
  assert_int_equal(fields, 2);
  return 1e-9 * (double)waiting_ns;
}

double cpu_run_seconds(pid_t pid) {
  clockid_t clock;
  assert_int_equal(clock_getcpuclockid(pid, &clock), 0);
  struct timespec t;
  assert_int_equal(clock_gettime(clock, &t), 0);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

own_clock own_clock_start(pid_t daemon) {
  own_clock c = {.daemon = daemon};
  c.waited = cpu_wait_seconds(getpid()) + cpu_wait_seconds(daemon);
  c.wall = now_seconds();
  return c;
}

double own_clock_seconds(const own_clock *c) {
  double wall = now_seconds() - c->wall;
  double waited = cpu_wait_seconds(getpid()) + cpu_wait_seconds(c->daemon) - c->waited;
  return wall > waited ? wall - waited : 0.0;
}

int daemon_signal_and_wait_own(daemon_proc *d, int signal_number, double *seconds,
                               double *own_seconds) {
  double waited = cpu_wait_seconds(d->pid);
  double start = now_seconds();
  assert_int_equal(kill(d->pid, signal_number), 0);
  /* Waited for without reaping (WNOWAIT) until it exits: the exited
   * process's main thread still shows its scheduler statistics. */
  for (;;) {
    siginfo_t info = {0};
    assert_int_equal(waitid(P_PID, (id_t)d->pid, &info, WEXITED | WNOHANG | WNOWAIT), 0);
    if (info.si_pid == d->pid)
      break;
    if (now_seconds() - start > 10.0) {
      kill(d->pid, SIGKILL);
      waitpid(d->pid, NULL, 0);
      track_daemon(d->pid, false);
      fail_msg("lcpsimd did not exit within 10 s of signal %d", signal_number);
    }
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
  }
  double wall = now_seconds() - start;
  waited = cpu_wait_seconds(d->pid) - waited;
  int status = 0;
  assert_int_equal(waitpid(d->pid, &status, 0), d->pid);
  if (seconds)
    *seconds = wall;
  if (own_seconds)
    *own_seconds = wall > waited ? wall - waited : 0.0;
  track_daemon(d->pid, false);
  close(d->stdout_fd);
  d->pid = 0;
  return status;
}

int daemon_signal_and_wait(daemon_proc *d, int signal_number, double *seconds) {
  return daemon_signal_and_wait_own(d, signal_number, seconds, NULL);
}

void daemon_stop(daemon_proc *d) {
  double seconds = 0, own_seconds = 0;
  int status = daemon_signal_and_wait_own(d, SIGTERM, &seconds, &own_seconds);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  if (!(own_seconds < 1.0))
    fail_msg("lcpsimd exited %.3f s after SIGTERM (%.3f s of it its own)", seconds, own_seconds);
}

int daemon_run_to_exit(const char *const *args, char *out, size_t out_size, char *err,
                       size_t err_size) {
  int out_pipe[2], err_pipe[2];
  assert_int_equal(pipe(out_pipe), 0);
  assert_int_equal(pipe(err_pipe), 0);
  pid_t pid = spawn_daemon(args, out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  struct {
    int fd;
    char *buffer;
    size_t size, used;
  } streams[2] = {{out_pipe[0], out, out_size, 0}, {err_pipe[0], err, err_size, 0}};
  int open_streams = 2;
  double deadline = now_seconds() + 30.0;
  while (open_streams > 0) {
    struct pollfd p[2];
    int n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i)
      if (streams[i].fd >= 0) {
        p[n] = (struct pollfd){.fd = streams[i].fd, .events = POLLIN};
        which[n++] = i;
      }
    int wait_ms = (int)((deadline - now_seconds()) * 1000.0);
    if (wait_ms <= 0 || poll(p, (nfds_t)n, wait_ms) <= 0) {
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
      fail_msg("lcpsimd did not exit in time");
    }
    for (int k = 0; k < n; ++k) {
      if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      int i = which[k];
      char chunk[4096];
      ssize_t got = read(streams[i].fd, chunk, sizeof chunk);
      if (got <= 0) {
        close(streams[i].fd);
        streams[i].fd = -1;
        open_streams--;
        continue;
      }
      size_t room = streams[i].size - 1 - streams[i].used;
      size_t take = (size_t)got < room ? (size_t)got : room;
      memcpy(streams[i].buffer + streams[i].used, chunk, take);
      streams[i].used += take;
    }
  }
  out[streams[0].used] = '\0';
  err[streams[1].used] = '\0';
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

/* ---- sockets ---- */

static void *context;

void *test_context(void) {
  if (!context)
    context = zmq_ctx_new();
  assert_non_null(context);
  return context;
}

static void *terminate_context(void *arg) {
  zmq_ctx_term(arg);
  return NULL;
}

/* zmq_ctx_term waits until every socket is closed. A test that failed an assertion jumped past
 * its own zmq_close calls, and waiting for them would hang the whole test program instead of
 * reporting the failure; so the term runs on a thread given a few seconds, and after that the
 * context is left to the process's exit. */
void test_context_destroy(void) {
  if (!context)
    return;
  pthread_t thread;
  if (pthread_create(&thread, NULL, terminate_context, context) != 0) {
    zmq_ctx_term(context);
  } else {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    if (pthread_timedjoin_np(thread, NULL, &deadline) != 0) {
      fprintf(stderr, "daemon_harness: sockets left open (a failed test?); not waiting for them\n");
      pthread_detach(thread);
    }
  }
  context = NULL;
}

static void *connect_socket(int type, const char *endpoint) {
  void *s = zmq_socket(test_context(), type);
  assert_non_null(s);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  assert_int_equal(zmq_connect(s, endpoint), 0);
  return s;
}

void *connect_req(const char *endpoint) { return connect_socket(ZMQ_REQ, endpoint); }
void *connect_dealer(const char *endpoint) { return connect_socket(ZMQ_DEALER, endpoint); }

void dealer_send(void *dealer, const Lcpsim__V1__Request *request) {
  size_t size = lcpsim__v1__request__get_packed_size(request);
  unsigned char *data = malloc(size ? size : 1);
  assert_non_null(data);
  lcpsim__v1__request__pack(request, data);
  assert_int_equal(zmq_send(dealer, "", 0, ZMQ_SNDMORE), 0);
  assert_int_equal(zmq_send(dealer, data, size, 0), (int)size);
  free(data);
}

void dealer_ping(void *dealer, uint64_t id) {
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  dealer_send(dealer, &r);
  Lcpsim__V1__Reply *reply = receive_reply(dealer);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_PING);
  reply_free(&reply);
}

void start_step(void *dealer, uint64_t id, int32_t steps) {
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = steps;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  dealer_send(dealer, &r);
  dealer_ping(dealer, id + 1000000);
}

void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

void close_socket(void **socket) {
  if (*socket)
    zmq_close(*socket);
  *socket = NULL;
}

long receive_frame(void *socket, int timeout_ms, unsigned char **out) {
  *out = NULL;
  for (;;) {
    zmq_pollitem_t item = {.socket = socket, .events = ZMQ_POLLIN};
    int ready = zmq_poll(&item, 1, timeout_ms);
    assert_true(ready >= 0);
    if (ready == 0)
      return -1;
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    assert_true(zmq_msg_recv(&msg, socket, 0) >= 0);
    size_t size = zmq_msg_size(&msg);
    bool more = zmq_msg_more(&msg);
    if (size == 0 && more) { /* a DEALER's delimiter */
      zmq_msg_close(&msg);
      continue;
    }
    *out = malloc(size ? size : 1);
    assert_non_null(*out);
    memcpy(*out, zmq_msg_data(&msg), size);
    zmq_msg_close(&msg);
    assert_false(more); /* replies and states are one frame */
    return (long)size;
  }
}

Lcpsim__V1__Reply *receive_reply(void *socket) {
  unsigned char *frame;
  long size = receive_frame(socket, REPLY_TIMEOUT_MS, &frame);
  if (size < 0)
    fail_msg("no reply within %d ms", REPLY_TIMEOUT_MS);
  Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, (size_t)size, frame);
  free(frame);
  assert_non_null(reply);
  return reply;
}

Lcpsim__V1__Reply *rpc_raw(void *socket, const void *data, size_t size) {
  assert_true(zmq_send(socket, data, size, 0) == (int)size);
  return receive_reply(socket);
}

Lcpsim__V1__Reply *rpc(void *socket, const Lcpsim__V1__Request *request) {
  size_t size = lcpsim__v1__request__get_packed_size(request);
  unsigned char *data = malloc(size ? size : 1);
  assert_non_null(data);
  lcpsim__v1__request__pack(request, data);
  Lcpsim__V1__Reply *reply = rpc_raw(socket, data, size);
  free(data);
  return reply;
}

void reply_free(Lcpsim__V1__Reply **reply) {
  if (*reply)
    lcpsim__v1__reply__free_unpacked(*reply, NULL);
  *reply = NULL;
}

Lcpsim__V1__State *receive_state(void *subscriber, int timeout_ms) {
  unsigned char *frame;
  long size = receive_frame(subscriber, timeout_ms, &frame);
  if (size < 0)
    return NULL;
  assert_true(size >= 5);
  assert_memory_equal(frame, "state", 5);
  Lcpsim__V1__State *s = lcpsim__v1__state__unpack(NULL, (size_t)size - 5, frame + 5);
  free(frame);
  assert_non_null(s);
  return s;
}

Lcpsim__V1__Request request_of(uint64_t id, Lcpsim__V1__Request__CallCase call, void *body) {
  Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
  r.id = id;
  r.call_case = call;
  r.ping = body; /* every member of the oneof is a message pointer */
  return r;
}

void assert_ok(const Lcpsim__V1__Reply *reply, uint64_t id, Lcpsim__V1__Reply__ResultCase result) {
  assert_non_null(reply);
  if (reply->status && reply->status->code != LCPSIM__V1__STATUS__CODE__OK)
    fail_msg("request %llu failed: %d %s", (unsigned long long)id, (int)reply->status->code,
             reply->status->message);
  assert_int_equal(reply->id, id);
  assert_int_equal(reply->result_case, result);
}

void assert_error(const Lcpsim__V1__Reply *reply, uint64_t id, Lcpsim__V1__Status__Code code,
                  const char *needle) {
  assert_non_null(reply);
  assert_non_null(reply->status);
  if (reply->status->code != code)
    fail_msg("request %llu: expected code %d, got %d (%s)", (unsigned long long)id, (int)code,
             (int)reply->status->code, reply->status->message);
  assert_int_equal(reply->id, id);
  assert_int_equal(reply->result_case, LCPSIM__V1__REPLY__RESULT__NOT_SET);
  if (needle && !strstr(reply->status->message, needle))
    fail_msg("request %llu: message '%s' does not contain '%s'", (unsigned long long)id,
             reply->status->message, needle);
}

/* ---- common calls ---- */

Lcpsim__V1__Reply *call_get_state(void *socket, uint64_t id, bool contacts) {
  Lcpsim__V1__GetStateRequest get = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  get.include_contacts = contacts;
  Lcpsim__V1__Request request = request_of(id, LCPSIM__V1__REQUEST__CALL_GET_STATE, &get);
  Lcpsim__V1__Reply *reply = rpc(socket, &request);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_GET_STATE);
  assert_non_null(reply->get_state->state);
  return reply;
}

Lcpsim__V1__Reply *call_get_info(void *socket, uint64_t id) {
  Lcpsim__V1__GetInfoRequest get = LCPSIM__V1__GET_INFO_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(id, LCPSIM__V1__REQUEST__CALL_GET_INFO, &get);
  Lcpsim__V1__Reply *reply = rpc(socket, &request);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_GET_INFO);
  return reply;
}

uint64_t call_step(void *socket, uint64_t id, int32_t steps) {
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = steps;
  Lcpsim__V1__Request request = request_of(id, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  Lcpsim__V1__Reply *reply = rpc(socket, &request);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_STEP);
  uint64_t count = reply->step->step_count;
  reply_free(&reply);
  return count;
}

uint64_t world_hash(void *socket) {
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(424242, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save);
  Lcpsim__V1__Reply *reply = rpc(socket, &request);
  assert_ok(reply, 424242, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  uint64_t h = lcp_hash_bytes(LCP_HASH_SEED, reply->save_state->snapshot.data,
                              reply->save_state->snapshot.len);
  reply_free(&reply);
  return h;
}

uint64_t world_hash_all(void *socket) {
  uint64_t h = world_hash(socket);
  Lcpsim__V1__Reply *info = call_get_info(socket, 424243);
  Lcpsim__V1__Reply *state = call_get_state(socket, 424244, true);
  unsigned char *bytes = malloc(lcpsim__v1__get_info_reply__get_packed_size(info->get_info) +
                                lcpsim__v1__get_state_reply__get_packed_size(state->get_state));
  assert_non_null(bytes);
  size_t n = lcpsim__v1__get_info_reply__pack(info->get_info, bytes);
  h = lcp_hash_bytes(h, bytes, n);
  n = lcpsim__v1__get_state_reply__pack(state->get_state, bytes);
  h = lcp_hash_bytes(h, bytes, n);
  free(bytes);
  reply_free(&info);
  reply_free(&state);
  return h;
}

bool message_all_finite(const ProtobufCMessage *message) {
  const ProtobufCMessageDescriptor *d = message->descriptor;
  const unsigned char *base = (const unsigned char *)message;
  for (unsigned i = 0; i < d->n_fields; ++i) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type != PROTOBUF_C_TYPE_DOUBLE && f->type != PROTOBUF_C_TYPE_MESSAGE)
      continue;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      uint32_t set_case;
      memcpy(&set_case, base + f->quantifier_offset, sizeof set_case);
      if (set_case != f->id)
        continue;
    }
    size_t count = 1;
    const unsigned char *values = base + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      memcpy(&count, base + f->quantifier_offset, sizeof count);
      memcpy(&values, base + f->offset, sizeof values);
    }
    for (size_t k = 0; k < count; ++k) {
      if (f->type == PROTOBUF_C_TYPE_DOUBLE) {
        double x;
        memcpy(&x, values + k * sizeof x, sizeof x);
        if (!isfinite(x))
          return false;
      } else {
        const ProtobufCMessage *child;
        memcpy(&child, values + k * sizeof child, sizeof child);
        if (child && !message_all_finite(child))
          return false;
      }
    }
  }
  return true;
}

bool call_ping(void *socket, uint64_t id) {
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(id, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  Lcpsim__V1__Reply *reply = rpc(socket, &request);
  bool ok = reply->status && reply->status->code == LCPSIM__V1__STATUS__CODE__OK &&
            reply->id == id && reply->result_case == LCPSIM__V1__REPLY__RESULT_PING;
  reply_free(&reply);
  return ok;
}

static double body_height(const Lcpsim__V1__State *state, const char *name) {
  for (size_t i = 0; i < state->n_bodies; ++i)
    if (strcmp(state->bodies[i]->name, name) == 0)
      return state->bodies[i]->pose->position->z;
  fail_msg("no body '%s' in the state", name);
  return NAN;
}

void record_drops(void *socket, const char *const *names, int count, int32_t steps,
                  drop_record *out) {
  double previous[8];
  bool rising[8];
  assert_true(count <= 8);
  Lcpsim__V1__Reply *reply = call_get_state(socket, 424243, false);
  for (int k = 0; k < count; ++k) {
    previous[k] = body_height(reply->get_state->state, names[k]);
    rising[k] = false;
    out[k] = (drop_record){.lowest = previous[k], .rebound = -INFINITY};
  }
  reply_free(&reply);
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 1;
  step.return_state = true;
  for (int32_t i = 0; i < steps; ++i) {
    Lcpsim__V1__Request request = request_of(424244, LCPSIM__V1__REQUEST__CALL_STEP, &step);
    reply = rpc(socket, &request);
    assert_ok(reply, 424244, LCPSIM__V1__REPLY__RESULT_STEP);
    for (int k = 0; k < count; ++k) {
      double z = body_height(reply->step->state, names[k]);
      rising[k] = rising[k] || z > previous[k] + 1e-9;
      if (!rising[k] && z < out[k].lowest)
        out[k].lowest = z;
      if (rising[k] && z > out[k].rebound)
        out[k].rebound = z;
      previous[k] = z;
    }
    reply_free(&reply);
  }
}

void write_temp_file(const char *name, const char *content, char *path, size_t size) {
  char dir[] = "/tmp/lcpsimd_test_XXXXXX";
  assert_non_null(mkdtemp(dir));
  snprintf(path, size, "%s/%s", dir, name);
  FILE *file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(content, 1, strlen(content), file), strlen(content));
  fclose(file);
}

void remove_temp_file(const char *path) {
  unlink(path);
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = '\0';
    rmdir(dir);
  }
}
