/* lcpsim-rpc-bench: the cost of one request to a running lcpsimd, next to a
 * bare ZeroMQ REQ/REP echo of the same bytes on the same machine (DESIGN.md
 * §7). Starts no daemon: point it at one.
 *
 *   lcpsim-rpc-bench [--endpoint tcp://127.0.0.1:5555] [--bytes N] [--calls N]
 *
 * prints scene=rpc endpoint=tcp bytes=N calls=N us_per_call=X echo_us=Y ratio=X/Y */
#include "lcpsim/v1/lcpsim.pb-c.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#define TIMEOUT_MS 5000
#define WARMUP_CALLS 200

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *open_req(void *context, const char *endpoint) {
  void *s = zmq_socket(context, ZMQ_REQ);
  int zero = 0, timeout = TIMEOUT_MS;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
  if (zmq_connect(s, endpoint) != 0) {
    fprintf(stderr, "lcpsim-rpc-bench: cannot connect to %s: %s\n", endpoint, zmq_strerror(errno));
    zmq_close(s);
    return NULL;
  }
  return s;
}

/* One Ping round trip; false (with a message) when it fails. */
static bool ping_once(void *socket, const unsigned char *request, size_t size, size_t payload,
                      uint64_t id) {
  if (zmq_send(socket, request, size, 0) != (int)size) {
    fprintf(stderr, "lcpsim-rpc-bench: send: %s\n", zmq_strerror(errno));
    return false;
  }
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (zmq_msg_recv(&msg, socket, 0) < 0) {
    fprintf(stderr, "lcpsim-rpc-bench: no reply within %d ms: %s\n", TIMEOUT_MS,
            zmq_strerror(errno));
    zmq_msg_close(&msg);
    return false;
  }
  Lcpsim__V1__Reply *reply =
      lcpsim__v1__reply__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
  zmq_msg_close(&msg);
  bool ok = reply && reply->id == id && (!reply->status || reply->status->code == 0) &&
            reply->result_case == LCPSIM__V1__REPLY__RESULT_PING &&
            reply->ping->payload.len == payload;
  if (!ok)
    fprintf(stderr, "lcpsim-rpc-bench: bad reply to Ping %llu%s%s\n", (unsigned long long)id,
            reply && reply->status ? ": " : "",
            reply && reply->status ? reply->status->message : "");
  if (reply)
    lcpsim__v1__reply__free_unpacked(reply, NULL);
  return ok;
}

/* Mean seconds per Ping of `payload` bytes to the daemon. */
static double time_daemon(void *context, const char *endpoint, size_t payload, int calls) {
  void *socket = open_req(context, endpoint);
  if (!socket)
    return -1.0;
  unsigned char *bytes = calloc(1, payload ? payload : 1);
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  ping.payload.data = bytes;
  ping.payload.len = payload;
  Lcpsim__V1__Request request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_PING;
  request.ping = &ping;
  /* Packed once per call, as a client would. */
  size_t capacity = lcpsim__v1__request__get_packed_size(&request) + 16;
  unsigned char *packed = malloc(capacity);
  double seconds = -1.0, start = 0.0;
  bool ok = true;
  for (int i = 0; ok && i < WARMUP_CALLS + calls; ++i) {
    if (i == WARMUP_CALLS)
      start = now_seconds();
    request.id = (uint64_t)i + 1;
    size_t size = lcpsim__v1__request__pack(&request, packed);
    ok = ping_once(socket, packed, size, payload, request.id);
  }
  if (ok)
    seconds = (now_seconds() - start) / calls;
  free(packed);
  free(bytes);
  zmq_close(socket);
  return seconds;
}

typedef struct echo_server {
  void *context;
  void *socket;
} echo_server;

/* Sends back every message until the context shuts down. */
static void *echo_main(void *arg) {
  echo_server *echo = arg;
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  while (zmq_msg_recv(&msg, echo->socket, 0) >= 0)
    if (zmq_msg_send(&msg, echo->socket, 0) < 0)
      break;
  zmq_msg_close(&msg);
  zmq_close(echo->socket);
  return NULL;
}

/* Mean seconds per round trip of `payload` raw bytes through a REP echo in
 * a thread of this process, over TCP on the loopback. */
static double time_echo(size_t payload, int calls) {
  echo_server echo = {.context = zmq_ctx_new()};
  echo.socket = zmq_socket(echo.context, ZMQ_REP);
  int zero = 0;
  zmq_setsockopt(echo.socket, ZMQ_LINGER, &zero, sizeof zero);
  char endpoint[256];
  size_t size = sizeof endpoint;
  if (zmq_bind(echo.socket, "tcp://127.0.0.1:*") != 0 ||
      zmq_getsockopt(echo.socket, ZMQ_LAST_ENDPOINT, endpoint, &size) != 0) {
    fprintf(stderr, "lcpsim-rpc-bench: cannot bind the echo: %s\n", zmq_strerror(errno));
    zmq_close(echo.socket);
    zmq_ctx_term(echo.context);
    return -1.0;
  }
  pthread_t thread;
  pthread_create(&thread, NULL, echo_main, &echo);
  void *socket = open_req(echo.context, endpoint);
  unsigned char *bytes = calloc(1, payload ? payload : 1);
  double seconds = -1.0, start = 0.0;
  bool ok = socket != NULL;
  for (int i = 0; ok && i < WARMUP_CALLS + calls; ++i) {
    if (i == WARMUP_CALLS)
      start = now_seconds();
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    ok = zmq_send(socket, bytes, payload, 0) == (int)payload &&
         zmq_msg_recv(&msg, socket, 0) >= 0 && zmq_msg_size(&msg) == payload;
    zmq_msg_close(&msg);
  }
  if (ok)
    seconds = (now_seconds() - start) / calls;
  else
    fprintf(stderr, "lcpsim-rpc-bench: the echo failed: %s\n", zmq_strerror(errno));
  free(bytes);
  if (socket)
    zmq_close(socket);
  zmq_ctx_shutdown(echo.context);
  pthread_join(thread, NULL);
  zmq_ctx_term(echo.context);
  return seconds;
}

int main(int argc, char **argv) {
  const char *endpoint = "tcp://127.0.0.1:5555";
  long bytes = 64, calls = 10000;
  static const struct option options[] = {
      {"endpoint", required_argument, NULL, 'e'},
      {"bytes", required_argument, NULL, 'b'},
      {"calls", required_argument, NULL, 'n'},
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
    case 'h':
      printf("usage: lcpsim-rpc-bench [--endpoint ENDPOINT] [--bytes N] [--calls N]\n"
             "Times N Ping calls with an N-byte payload against a running lcpsimd\n"
             "(default tcp://127.0.0.1:5555, 64 bytes, 10000 calls) and a bare ZeroMQ\n"
             "REQ/REP echo of the same size.\n");
      return 0;
    default:
      fprintf(stderr, "usage: lcpsim-rpc-bench [--endpoint ENDPOINT] [--bytes N] [--calls N]\n");
      return 2;
    }
  }
  void *context = zmq_ctx_new();
  double daemon_seconds = time_daemon(context, endpoint, (size_t)bytes, (int)calls);
  zmq_ctx_term(context);
  if (daemon_seconds < 0)
    return 1;
  double echo_seconds = time_echo((size_t)bytes, (int)calls);
  if (echo_seconds < 0)
    return 1;
  const char *colon = strstr(endpoint, "://");
  int transport = colon ? (int)(colon - endpoint) : (int)strlen(endpoint);
  printf("scene=rpc endpoint=%.*s bytes=%ld calls=%ld us_per_call=%.2f echo_us=%.2f ratio=%.2f\n",
         transport, endpoint, bytes, calls, daemon_seconds * 1e6, echo_seconds * 1e6,
         daemon_seconds / echo_seconds);
  return 0;
}
