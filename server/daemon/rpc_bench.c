/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-rpc-bench: the cost of one request to a running lcpsimd, next to a
 * bare ZeroMQ REQ/REP echo with the same request and reply sizes on the same
 * machine. Starts no daemon: point it at one (the built-in
 * world, in lockstep mode, for the default call).
 *
 *   lcpsim-rpc-bench [--endpoint tcp://127.0.0.1:5555] [--call step|ping]
 *                    [--robot arm7] [--bytes N] [--calls N] [--sensors GROUP,...]
 *
 * --call step (the default): a control tick, Step(1) with position targets
 * for every joint of the robot (q*_i(t) = 0.5 sin(2π·0.5·t + i), kp 100,
 * kd 10) and return_state, with the sensor groups given by --sensors (names of
 * the Sensors message's fields, or all). --call ping: a Ping with an N-byte
 * payload.
 *
 * Prints scene=rpc endpoint=tcp bytes=N calls=N us_per_call=X echo_us=Y
 * ratio=X/Y, then call=, request_bytes=, reply_bytes= and client_us=. bytes
 * is request plus reply bytes of one round trip; us_per_call and echo_us
 * are mean round trips, from sending the request to having the reply,
 * measured in alternating blocks so that both see the same machine load;
 * client_us is the client's own encoding and decoding per call, outside
 * both.
 *
 * --curve (with --start-daemon): a second daemon of the same arguments with
 * CURVE on (--curve-secret-key, and an allow-list of this client's key) is
 * timed in the same alternating blocks: curve_us is its mean round trip and
 * curve_ratio = curve_us / us_per_call, the cost of authentication and
 * encryption on the same call.
 *
 * --viewers N (with --start-daemon): a second daemon of the same arguments
 * with --http on (added unless given) and N WebSocket viewers of its /ws
 * stream, N - 1 reading everything and one never reading, is timed in the
 * same alternating blocks: viewer_us is its mean round trip and
 * viewer_ratio = viewer_us / us_per_call, what the viewers cost the control
 * tick. */
#include "bench_daemon.h"
#include "lcpsim/v1/lcpsim.pb-c.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define TIMEOUT_MS 5000
#define WARMUP_CALLS 200
#define BLOCKS 20
#define MAX_JOINTS 64

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CURVE keys for --curve: the daemon's pair and this client's. */
typedef struct curve_keys {
  char server_public[41], server_secret[41];
  char client_public[41], client_secret[41];
} curve_keys;

/* A REQ connected to endpoint; with CURVE when keys is not NULL. */
static void *open_req_keyed(void *context, const char *endpoint, const curve_keys *keys) {
  void *s = zmq_socket(context, ZMQ_REQ);
  int zero = 0, timeout = TIMEOUT_MS;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
  if (keys) {
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, keys->server_public, 40);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, keys->client_public, 40);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, keys->client_secret, 40);
  }
  if (zmq_connect(s, endpoint) != 0) {
    fprintf(stderr, "lcpsim-rpc-bench: cannot connect to %s: %s\n", endpoint, zmq_strerror(errno));
    zmq_close(s);
    return NULL;
  }
  return s;
}

static void *open_req(void *context, const char *endpoint) {
  return open_req_keyed(context, endpoint, NULL);
}

/* Writes the daemon's key file and the allow-list of the client's key into
 * a new directory dir; their paths go to key_file and allow_file. */
static bool write_curve_files(const curve_keys *keys, char dir[64], char key_file[96],
                              char allow_file[96]) {
  snprintf(dir, 64, "/tmp/lcpsim-rpc-bench-XXXXXX");
  if (!mkdtemp(dir))
    return false;
  snprintf(key_file, 96, "%s/server.key", dir);
  snprintf(allow_file, 96, "%s/allowed", dir);
  FILE *key = fopen(key_file, "w"), *allow = fopen(allow_file, "w");
  bool ok = key && allow;
  if (key) {
    ok = fchmod(fileno(key), 0600) == 0 && ok; /* the daemon warns of a readable secret */
    ok = fprintf(key, "secret-key = \"%s\"\n", keys->server_secret) > 0 && ok;
    ok = fclose(key) == 0 && ok;
  }
  if (allow) {
    ok = fprintf(allow, "%s controller\n", keys->client_public) > 0 && ok;
    ok = fclose(allow) == 0 && ok;
  }
  return ok;
}

static void remove_curve_files(const char *dir, const char *key_file, const char *allow_file) {
  unlink(key_file);
  unlink(allow_file);
  rmdir(dir);
}

/* ---- the daemon's side ---- */

typedef enum { CALL_STEP, CALL_PING } call_kind;

typedef struct daemon_bench {
  call_kind kind;
  void *socket;
  uint64_t next_id;
  double client_seconds; /* packing and checking, outside the round trips */
  size_t request_bytes, reply_bytes;
  /* Step */
  double h;
  int32_t joints;
  double position[MAX_JOINTS], kp, kd;
  Lcpsim__V1__SetTargetRequest target;
  Lcpsim__V1__SetTargetRequest *targets[1];
  Lcpsim__V1__StepRequest step;
  Lcpsim__V1__Sensors sensors;
  bool with_sensors;
  /* Ping */
  unsigned char *payload;
  Lcpsim__V1__PingRequest ping;
  Lcpsim__V1__Request request;
  unsigned char *packed;
  size_t packed_capacity;
} daemon_bench;

/* One round trip's reply, decoded; NULL (with a message) when it fails. */
static Lcpsim__V1__Reply *round_trip(void *socket, const unsigned char *request, size_t size,
                                     double *seconds, size_t *reply_size) {
  double start = now_seconds();
  if (zmq_send(socket, request, size, 0) != (int)size) {
    fprintf(stderr, "lcpsim-rpc-bench: send: %s\n", zmq_strerror(errno));
    return NULL;
  }
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (zmq_msg_recv(&msg, socket, 0) < 0) {
    fprintf(stderr, "lcpsim-rpc-bench: no reply within %d ms: %s\n", TIMEOUT_MS,
            zmq_strerror(errno));
    zmq_msg_close(&msg);
    return NULL;
  }
  *seconds += now_seconds() - start;
  *reply_size = zmq_msg_size(&msg);
  Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, *reply_size, zmq_msg_data(&msg));
  zmq_msg_close(&msg);
  if (!reply)
    fprintf(stderr, "lcpsim-rpc-bench: a reply does not decode\n");
  return reply;
}

/* Sends one request and checks its reply; adds the round trip to *seconds. */
static bool daemon_call(daemon_bench *b, double *seconds) {
  double start = now_seconds();
  Lcpsim__V1__Request *r = &b->request;
  r->id = b->next_id++;
  if (b->kind == CALL_STEP) {
    /* The next tick's targets, as a control loop computes them. */
    double t = (double)(r->id % 100000u) * b->h;
    for (int32_t i = 0; i < b->joints; ++i)
      b->position[i] = 0.5 * sin(2.0 * 3.141592653589793 * 0.5 * t + (double)i);
  }
  size_t size = lcpsim__v1__request__get_packed_size(r);
  if (size > b->packed_capacity) {
    free(b->packed);
    b->packed_capacity = 2 * size;
    b->packed = malloc(b->packed_capacity);
  }
  lcpsim__v1__request__pack(r, b->packed);
  double trip = 0.0;
  size_t reply_size = 0;
  double packed_at = now_seconds();
  Lcpsim__V1__Reply *reply = round_trip(b->socket, b->packed, size, &trip, &reply_size);
  double received_at = packed_at + trip;
  if (!reply)
    return false;
  bool ok = reply->id == r->id && (!reply->status || reply->status->code == 0);
  if (ok && b->kind == CALL_STEP)
    ok = reply->result_case == LCPSIM__V1__REPLY__RESULT_STEP && reply->step->state &&
         reply->step->state->n_robots > 0;
  else if (ok)
    ok = reply->result_case == LCPSIM__V1__REPLY__RESULT_PING &&
         reply->ping->payload.len == b->ping.payload.len;
  if (!ok)
    fprintf(stderr, "lcpsim-rpc-bench: bad reply to request %llu%s%s\n", (unsigned long long)r->id,
            reply->status ? ": " : "", reply->status ? reply->status->message : "");
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  *seconds += trip;
  b->client_seconds += (packed_at - start) + (now_seconds() - received_at);
  b->request_bytes = size;
  b->reply_bytes = reply_size;
  return ok;
}

/* Finds the robot and its joint count (GetInfo) and sets up the request. */
static bool daemon_setup(daemon_bench *b, const char *robot, size_t payload) {
  lcpsim__v1__request__init(&b->request);
  b->next_id = 1u << 20; /* ids of the same encoded length throughout */
  if (b->kind == CALL_PING) {
    b->payload = calloc(1, payload ? payload : 1);
    lcpsim__v1__ping_request__init(&b->ping);
    b->ping.payload.data = b->payload;
    b->ping.payload.len = payload;
    b->request.call_case = LCPSIM__V1__REQUEST__CALL_PING;
    b->request.ping = &b->ping;
    return true;
  }
  Lcpsim__V1__GetInfoRequest get = LCPSIM__V1__GET_INFO_REQUEST__INIT;
  b->request.call_case = LCPSIM__V1__REQUEST__CALL_GET_INFO;
  b->request.get_info = &get;
  b->request.id = 1;
  unsigned char packed[64];
  size_t size = lcpsim__v1__request__pack(&b->request, packed), reply_size;
  double ignored = 0.0;
  Lcpsim__V1__Reply *reply = round_trip(b->socket, packed, size, &ignored, &reply_size);
  if (!reply)
    return false;
  bool ok = reply->result_case == LCPSIM__V1__REPLY__RESULT_GET_INFO;
  if (ok) {
    const Lcpsim__V1__GetInfoReply *info = reply->get_info;
    ok = false;
    for (size_t i = 0; i < info->n_robots; ++i)
      if (strcmp(info->robots[i]->name, robot) == 0) {
        b->joints = (int32_t)info->robots[i]->n_joints;
        ok = b->joints > 0 && b->joints <= MAX_JOINTS;
      }
    b->h = info->settings ? info->settings->timestep : 1e-3;
    if (info->settings && info->settings->mode == LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME) {
      fprintf(stderr, "lcpsim-rpc-bench: the daemon is in realtime mode; --call step needs "
                      "lockstep mode\n");
      lcpsim__v1__reply__free_unpacked(reply, NULL);
      return false;
    }
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  if (!ok) {
    fprintf(stderr, "lcpsim-rpc-bench: the daemon has no robot '%s' with 1 to %d joints\n", robot,
            MAX_JOINTS);
    return false;
  }
  b->kp = 100.0;
  b->kd = 10.0;
  lcpsim__v1__set_target_request__init(&b->target);
  b->target.robot = (char *)robot;
  b->target.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  b->target.position = b->position;
  b->target.n_position = (size_t)b->joints;
  b->target.kp = &b->kp;
  b->target.n_kp = 1;
  b->target.kd = &b->kd;
  b->target.n_kd = 1;
  b->targets[0] = &b->target;
  lcpsim__v1__step_request__init(&b->step);
  b->step.steps = 1;
  b->step.n_targets = 1;
  b->step.targets = b->targets;
  b->step.return_state = true;
  if (b->with_sensors)
    b->step.sensors = &b->sensors;
  lcpsim__v1__request__init(&b->request);
  b->request.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  b->request.step = &b->step;
  return true;
}

/* ---- the echo ---- */

/* The echo runs in a process of its own, as the daemon does, with its own
 * ZeroMQ context and I/O thread: a REP that answers every request with
 * reply_size bytes. It is forked before this process opens any ZeroMQ
 * context, learns the reply size through a pipe, and sends back the
 * endpoint it bound. */
typedef struct echo_process {
  pid_t pid;
  int to_child, from_child;
} echo_process;

static _Noreturn void echo_child(int in, int out) {
  size_t reply_size = 0;
  if (read(in, &reply_size, sizeof reply_size) != (ssize_t)sizeof reply_size)
    _exit(0);
  unsigned char *reply = calloc(1, reply_size ? reply_size : 1);
  void *context = zmq_ctx_new();
  void *socket = zmq_socket(context, ZMQ_REP);
  int zero = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero);
  char endpoint[256] = "";
  size_t size = sizeof endpoint;
  if (zmq_bind(socket, "tcp://127.0.0.1:*") != 0 ||
      zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, endpoint, &size) != 0)
    endpoint[0] = '\0';
  if (write(out, endpoint, sizeof endpoint) != (ssize_t)sizeof endpoint || !endpoint[0])
    _exit(1);
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  while (zmq_msg_recv(&msg, socket, 0) >= 0)
    if (zmq_send(socket, reply, reply_size, 0) < 0)
      break;
  _exit(0);
}

static bool echo_fork(echo_process *echo) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0)
    return false;
  echo->pid = fork();
  if (echo->pid < 0)
    return false;
  if (echo->pid == 0) {
    close(down[1]);
    close(up[0]);
    echo_child(down[0], up[1]);
  }
  close(down[0]);
  close(up[1]);
  echo->to_child = down[1];
  echo->from_child = up[0];
  return true;
}

/* Tells the echo its reply size; returns its endpoint in `endpoint`. */
static bool echo_start(echo_process *echo, size_t reply_size, char endpoint[256]) {
  if (write(echo->to_child, &reply_size, sizeof reply_size) != (ssize_t)sizeof reply_size ||
      read(echo->from_child, endpoint, 256) != 256 || !endpoint[0]) {
    fprintf(stderr, "lcpsim-rpc-bench: the echo process did not start\n");
    return false;
  }
  endpoint[255] = '\0';
  return true;
}

static void echo_stop(echo_process *echo) {
  close(echo->to_child); /* an echo not yet started exits on this */
  close(echo->from_child);
  kill(echo->pid, SIGTERM);
  waitpid(echo->pid, NULL, 0);
}

/* One echo round trip of request_size bytes out, reply_size back. */
static bool echo_call(void *socket, const unsigned char *request, size_t request_size,
                      size_t reply_size, double *seconds) {
  double start = now_seconds();
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  bool ok = zmq_send(socket, request, request_size, 0) == (int)request_size &&
            zmq_msg_recv(&msg, socket, 0) >= 0 && zmq_msg_size(&msg) == reply_size;
  *seconds += now_seconds() - start;
  zmq_msg_close(&msg);
  if (!ok)
    fprintf(stderr, "lcpsim-rpc-bench: the echo failed: %s\n", zmq_strerror(errno));
  return ok;
}

/* ---- a daemon of our own (--start-daemon) ---- */

#define MAX_DAEMON_ARGS 32
/* Who writes the messages. */
#define WHO "lcpsim-rpc-bench"

/* ---- WebSocket viewers (--viewers) ---- */

#define MAX_VIEWERS 64

typedef struct viewers {
  int fds[MAX_VIEWERS];
  int count;
  pthread_t reader;
  bool reading;
  volatile bool stop;
} viewers_t;

/* A TCP connection to host:port (IPv4) that has asked for /ws and read the
 * 101 reply; -1 on failure. */
static int viewer_connect(const char *host_port, bool small_buffer) {
  char host[64];
  int port = 0;
  const char *colon = strrchr(host_port, ':');
  if (!colon || (size_t)(colon - host_port) >= sizeof host)
    return -1;
  memcpy(host, host_port, (size_t)(colon - host_port));
  host[colon - host_port] = '\0';
  port = atoi(colon + 1);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  if (small_buffer) {
    int size = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  static const char request[] = "GET /ws HTTP/1.1\r\nHost: lcpsim\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\n"
                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                "Sec-WebSocket-Version: 13\r\n\r\n";
  char reply[1024];
  size_t length = 0;
  if (inet_pton(AF_INET, host, &address.sin_addr) != 1 ||
      connect(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
      write(fd, request, sizeof request - 1) != (ssize_t)(sizeof request - 1)) {
    close(fd);
    return -1;
  }
  /* The reply's headers only, byte by byte, so that no frame is consumed
   * by a viewer meant never to read one. */
  while (length < sizeof reply - 1 && read(fd, reply + length, 1) == 1) {
    reply[++length] = '\0';
    if (length >= 4 && memcmp(reply + length - 4, "\r\n\r\n", 4) == 0)
      break;
  }
  if (length < 12 || strncmp(reply, "HTTP/1.1 101", 12) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Reads and discards every viewer's bytes but the first's (the stalled one). */
static void *viewers_read(void *user) {
  viewers_t *v = user;
  struct pollfd polls[MAX_VIEWERS];
  char buffer[65536];
  while (!v->stop) {
    int n = 0;
    for (int i = 1; i < v->count; ++i)
      polls[n++] = (struct pollfd){.fd = v->fds[i], .events = POLLIN};
    if (poll(polls, (nfds_t)n, 50) <= 0)
      continue;
    for (int i = 0; i < n; ++i)
      if (polls[i].revents & (POLLIN | POLLHUP | POLLERR))
        if (read(polls[i].fd, buffer, sizeof buffer) <= 0)
          polls[i].fd = -1;
  }
  return NULL;
}

static bool viewers_open(viewers_t *v, const char *host_port, int count) {
  for (v->count = 0; v->count < count; ++v->count) {
    v->fds[v->count] = viewer_connect(host_port, v->count == 0);
    if (v->fds[v->count] < 0) {
      fprintf(stderr, "lcpsim-rpc-bench: WebSocket viewer %d cannot connect to %s/ws\n",
              v->count + 1, host_port);
      return false;
    }
  }
  v->reading = pthread_create(&v->reader, NULL, viewers_read, v) == 0;
  return v->reading;
}

static void viewers_close(viewers_t *v) {
  v->stop = true;
  if (v->reading)
    pthread_join(v->reader, NULL);
  v->reading = false;
  for (int i = 0; i < v->count; ++i)
    close(v->fds[i]);
  v->count = 0;
}

/* Sets the flags named in a comma-separated list ("all": every one). */
static bool parse_sensors(const char *list, Lcpsim__V1__Sensors *out) {
  static const char *const names[] = {"link_twists",    "link_accelerations", "imus",
                                      "joint_wrenches", "contact_wrenches",   "energy",
                                      "solver_stats"};
  protobuf_c_boolean *flags[] = {&out->link_twists,    &out->link_accelerations, &out->imus,
                                 &out->joint_wrenches, &out->contact_wrenches,   &out->energy,
                                 &out->solver_stats};
  char copy[256];
  snprintf(copy, sizeof copy, "%s", list);
  for (char *save = NULL, *name = strtok_r(copy, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    bool known = false;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
      if (strcmp(name, names[k]) == 0 || strcmp(name, "all") == 0) {
        *flags[k] = true;
        known = true;
      }
    if (!known)
      return false;
  }
  return true;
}

static void usage(FILE *out) {
  fprintf(out, "usage: lcpsim-rpc-bench [--endpoint ENDPOINT] [--call step|ping] [--robot NAME]\n"
               "                        [--bytes N] [--calls N] [--sensors GROUP,...]\n"
               "                        [--start-daemon LCPSIMD [--daemon-arg ARG]...]\n"
               "Times N calls (default 10000) against a running lcpsimd (default\n"
               "tcp://127.0.0.1:5555) and a bare ZeroMQ REQ/REP echo with the same request and\n"
               "reply sizes. --call step (default): Step(1) with position targets for every\n"
               "joint of the robot (default arm7) and the state returned; the daemon must be in\n"
               "lockstep mode; --sensors GROUP,... also asks for those sensor groups\n"
               "(link_twists, link_accelerations, imus, joint_wrenches, contact_wrenches,\n"
               "energy, solver_stats, or all). --call ping: a Ping with an N-byte payload\n"
               "(default 64).\n"
               "--start-daemon LCPSIMD: start that lcpsimd on ephemeral TCP ports (with any\n"
               "--daemon-arg ARG, repeatable, e.g. --daemon-arg=--busy-poll-us=0), measure\n"
               "against it instead of --endpoint, then stop it.\n"
               "--curve (with --start-daemon): also a second lcpsimd with CURVE on, timed in\n"
               "the same blocks (curve_us, curve_ratio = curve_us / us_per_call).\n"
               "--viewers N (with --start-daemon): also a second lcpsimd with --http and N\n"
               "WebSocket viewers (one never reading), timed in the same blocks (viewer_us,\n"
               "viewer_ratio = viewer_us / us_per_call).\n");
}

int main(int argc, char **argv) {
  const char *endpoint = "tcp://127.0.0.1:5555", *robot = "arm7", *daemon_path = NULL;
  const char *daemon_args[MAX_DAEMON_ARGS];
  int daemon_arg_count = 0;
  long bytes = 64, calls = 10000;
  call_kind kind = CALL_STEP;
  const char *sensors = NULL;
  bool curve = false;
  long viewer_count = 0;
  Lcpsim__V1__Sensors sensor_flags = LCPSIM__V1__SENSORS__INIT;
  static const struct option options[] = {
      {"endpoint", required_argument, NULL, 'e'},
      {"call", required_argument, NULL, 'c'},
      {"robot", required_argument, NULL, 'r'},
      {"bytes", required_argument, NULL, 'b'},
      {"calls", required_argument, NULL, 'n'},
      {"start-daemon", required_argument, NULL, 's'},
      {"daemon-arg", required_argument, NULL, 'a'},
      {"sensors", required_argument, NULL, 'S'},
      {"curve", no_argument, NULL, 'C'},
      {"viewers", required_argument, NULL, 'V'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
    char *end = NULL;
    switch (c) {
    case 'e':
      endpoint = optarg;
      break;
    case 'c':
      if (strcmp(optarg, "step") == 0) {
        kind = CALL_STEP;
      } else if (strcmp(optarg, "ping") == 0) {
        kind = CALL_PING;
      } else {
        fprintf(stderr, "lcpsim-rpc-bench: --call must be step or ping\n");
        return 2;
      }
      break;
    case 'r':
      robot = optarg;
      break;
    case 'b':
      bytes = strtol(optarg, &end, 10);
      if (*end || bytes < 0 || bytes > (1L << 26)) {
        fprintf(stderr, "lcpsim-rpc-bench: --bytes must be 0 to 67108864\n");
        return 2;
      }
      break;
    case 'n':
      calls = strtol(optarg, &end, 10);
      if (*end || calls < 1 || calls > 100000000L) {
        fprintf(stderr, "lcpsim-rpc-bench: --calls must be 1 to 100000000\n");
        return 2;
      }
      break;
    case 's':
      daemon_path = optarg;
      break;
    case 'a':
      if (daemon_arg_count == MAX_DAEMON_ARGS) {
        fprintf(stderr, "lcpsim-rpc-bench: at most %d --daemon-arg\n", MAX_DAEMON_ARGS);
        return 2;
      }
      daemon_args[daemon_arg_count++] = optarg;
      break;
    case 'S':
      sensors = optarg;
      if (!parse_sensors(optarg, &sensor_flags)) {
        fprintf(stderr, "lcpsim-rpc-bench: --sensors: unknown group in '%s'\n", optarg);
        return 2;
      }
      break;
    case 'C':
      curve = true;
      break;
    case 'V':
      viewer_count = strtol(optarg, &end, 10);
      if (*end != '\0' || viewer_count < 1 || viewer_count > MAX_VIEWERS) {
        fprintf(stderr, "lcpsim-rpc-bench: --viewers must be 1 to %d\n", MAX_VIEWERS);
        return 2;
      }
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }

  if (optind < argc) {
    fprintf(stderr, "lcpsim-rpc-bench: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
  }
  /* A daemon that prints nothing but its first line never fills the pipe;
   * SIGPIPE would only come from a daemon that went away. */
  signal(SIGPIPE, SIG_IGN);
  if ((curve || viewer_count) && !daemon_path) {
    fprintf(stderr, "lcpsim-rpc-bench: --curve and --viewers need --start-daemon\n");
    return 2;
  }
  lcpd_bench_daemon_t plain = {.pid = -1}, curved = {.pid = -1}, viewed = {.pid = -1};
  if (viewer_count) {
    /* The same daemon with --http on, for the viewers. */
    const char *viewer_args[MAX_DAEMON_ARGS + 1];
    bool has_http = false;
    for (int i = 0; i < daemon_arg_count; ++i) {
      viewer_args[i] = daemon_args[i];
      has_http = has_http || strncmp(daemon_args[i], "--http", 6) == 0;
    }
    int n = daemon_arg_count;
    if (!has_http)
      viewer_args[n++] = "--http=127.0.0.1:0";
    if (!lcpd_bench_daemon_start(&viewed, daemon_path, viewer_args, n, WHO))
      return 1;
    if (!viewed.http[0]) {
      fprintf(stderr, WHO ": %s serves no HTTP (built without LCP_HTTP?)\n", daemon_path);
      lcpd_bench_daemon_stop(&viewed, WHO);
      return 1;
    }
  }
  curve_keys keys;
  char curve_dir[64] = "", curve_key_file[96], curve_allow_file[96];
  if (curve) {
    /* The same daemon with CURVE on: its keys, its allow-list, its ports. */
    const char *curve_args[MAX_DAEMON_ARGS + 4];
    memcpy(curve_args, daemon_args, (size_t)daemon_arg_count * sizeof *daemon_args);
    if (zmq_curve_keypair(keys.server_public, keys.server_secret) != 0 ||
        zmq_curve_keypair(keys.client_public, keys.client_secret) != 0 ||
        !write_curve_files(&keys, curve_dir, curve_key_file, curve_allow_file)) {
      fprintf(stderr, "lcpsim-rpc-bench: cannot make CURVE keys\n");
      lcpd_bench_daemon_stop(&viewed, WHO);
      return 1;
    }
    curve_args[daemon_arg_count] = "--curve-secret-key";
    curve_args[daemon_arg_count + 1] = curve_key_file;
    curve_args[daemon_arg_count + 2] = "--authorized-keys";
    curve_args[daemon_arg_count + 3] = curve_allow_file;
    bool started =
        lcpd_bench_daemon_start(&curved, daemon_path, curve_args, daemon_arg_count + 4, WHO);
    remove_curve_files(curve_dir, curve_key_file, curve_allow_file); /* read at start-up */
    if (!started) {
      lcpd_bench_daemon_stop(&viewed, WHO);
      return 1;
    }
  }
  if (daemon_path) {
    if (!lcpd_bench_daemon_start(&plain, daemon_path, daemon_args, daemon_arg_count, WHO)) {
      lcpd_bench_daemon_stop(&curved, WHO);
      lcpd_bench_daemon_stop(&viewed, WHO);
      return 1;
    }
    endpoint = plain.rep;
  }
  echo_process echo;
  if (!echo_fork(&echo)) {
    fprintf(stderr, "lcpsim-rpc-bench: cannot start the echo process: %s\n", strerror(errno));
    lcpd_bench_daemon_stop(&plain, WHO);
    lcpd_bench_daemon_stop(&curved, WHO);
    lcpd_bench_daemon_stop(&viewed, WHO);
    return 1;
  }
  /* The daemon first, to learn the sizes the echo imitates. */
  void *context = zmq_ctx_new();
  daemon_bench b = {.kind = kind,
                    .socket = open_req(context, endpoint),
                    .sensors = sensor_flags,
                    .with_sensors = sensors != NULL};
  bool ok = b.socket && daemon_setup(&b, robot, (size_t)bytes);
  double daemon_seconds = 0.0, echo_seconds = 0.0, ignored = 0.0;
  for (int i = 0; ok && i < WARMUP_CALLS; ++i)
    ok = daemon_call(&b, &ignored);
  b.client_seconds = 0.0;
  daemon_bench cb = {.kind = kind, .sensors = sensor_flags, .with_sensors = sensors != NULL};
  double curve_seconds = 0.0;
  if (ok && curve) {
    cb.socket = open_req_keyed(context, curved.rep, &keys);
    ok = cb.socket && daemon_setup(&cb, robot, (size_t)bytes);
    for (int i = 0; ok && i < WARMUP_CALLS; ++i)
      ok = daemon_call(&cb, &ignored);
  }
  daemon_bench vb = {.kind = kind, .sensors = sensor_flags, .with_sensors = sensors != NULL};
  double viewer_seconds = 0.0;
  viewers_t viewers = {.count = 0};
  if (ok && viewer_count) {
    vb.socket = open_req(context, viewed.rep);
    ok = vb.socket && daemon_setup(&vb, robot, (size_t)bytes) &&
         viewers_open(&viewers, viewed.http, (int)viewer_count);
    for (int i = 0; ok && i < WARMUP_CALLS; ++i)
      ok = daemon_call(&vb, &ignored);
  }

  unsigned char *echo_request = calloc(1, b.request_bytes ? b.request_bytes : 1);
  void *echo_socket = NULL;
  char echo_endpoint[256];
  /* The sizes of the warm-up's last round trip (a reply's length may change
   * by a byte or two as the step count grows). */
  size_t echo_request_bytes = b.request_bytes, echo_reply_bytes = b.reply_bytes;
  if (ok) {
    ok = echo_start(&echo, echo_reply_bytes, echo_endpoint);
    if (ok) {
      echo_socket = open_req(context, echo_endpoint);
      ok = echo_socket != NULL;
    }
  }
  for (int i = 0; ok && i < WARMUP_CALLS; ++i)
    ok = echo_call(echo_socket, echo_request, echo_request_bytes, echo_reply_bytes, &ignored);

  /* Alternating blocks: both sides see the same load on a shared machine. */
  long done = 0;
  for (int block = 0; ok && block < BLOCKS; ++block) {
    long n = calls * (block + 1) / BLOCKS - done;
    for (long i = 0; ok && i < n; ++i)
      ok = daemon_call(&b, &daemon_seconds);
    for (long i = 0; ok && curve && i < n; ++i)
      ok = daemon_call(&cb, &curve_seconds);
    for (long i = 0; ok && viewer_count && i < n; ++i)
      ok = daemon_call(&vb, &viewer_seconds);
    for (long i = 0; ok && i < n; ++i)
      ok =
          echo_call(echo_socket, echo_request, echo_request_bytes, echo_reply_bytes, &echo_seconds);
    done += n;
  }

  if (echo_socket)
    zmq_close(echo_socket);
  if (b.socket)
    zmq_close(b.socket);
  if (cb.socket)
    zmq_close(cb.socket);
  if (vb.socket)
    zmq_close(vb.socket);
  viewers_close(&viewers);
  zmq_ctx_term(context);
  echo_stop(&echo);
  free(echo_request);
  free(b.packed);
  free(b.payload);
  free(cb.packed);
  free(cb.payload);
  free(vb.packed);
  free(vb.payload);
  if (!lcpd_bench_daemon_stop(&viewed, WHO))
    ok = false;
  if (!lcpd_bench_daemon_stop(&plain, WHO))
    ok = false;
  if (!lcpd_bench_daemon_stop(&curved, WHO))
    ok = false;
  if (!ok)
    return 1;
  const char *colon = strstr(endpoint, "://");
  int transport = colon ? (int)(colon - endpoint) : (int)strlen(endpoint);
  double x = daemon_seconds / (double)calls, y = echo_seconds / (double)calls;
  printf("scene=rpc endpoint=%.*s bytes=%zu calls=%ld us_per_call=%.2f echo_us=%.2f ratio=%.3f "
         "call=%s request_bytes=%zu reply_bytes=%zu client_us=%.2f%s%s",
         transport, endpoint, b.request_bytes + b.reply_bytes, calls, x * 1e6, y * 1e6, x / y,
         kind == CALL_STEP ? "step" : "ping", b.request_bytes, b.reply_bytes,
         b.client_seconds / (double)calls * 1e6, sensors ? " sensors=" : "",
         sensors ? sensors : "");
  if (curve)
    printf(" curve_us=%.2f curve_ratio=%.3f", curve_seconds / (double)calls * 1e6,
           curve_seconds / daemon_seconds);
  if (viewer_count)
    printf(" viewers=%ld viewer_us=%.2f viewer_ratio=%.3f", viewer_count,
           viewer_seconds / (double)calls * 1e6, viewer_seconds / daemon_seconds);
  printf("\n");
  return 0;
}
