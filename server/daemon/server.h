/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's event loop (libuv) and sockets (ZeroMQ): a ROUTER for
 * requests, read through its ZMQ_FD in a uv_poll_t; a PUB for the state
 * stream; uv_signal for SIGINT and SIGTERM; a uv_timer for realtime mode. */
#ifndef LCPD_SERVER_H
#define LCPD_SERVER_H

#include "auth.h"
#include "batch.h"
#include "connections.h"
#include "handlers.h"
#include "http.h"
#include "memory.h"
#include "sim.h"
#include "worlds.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include <zmq.h>

typedef struct lcpd_server_options {
  const char *bind_endpoint;     /* the ROUTER */
  const char *pub_endpoint;      /* the PUB */
  int64_t max_message_bytes;     /* ZMQ_MAXMSGSIZE of the ROUTER; -1: no limit */
  size_t decode_budget;          /* bytes a decoded request may occupy */
  size_t reply_limit;            /* bytes a reply (or a published state) may occupy */
  uint64_t busy_poll_ns;         /* after the last request, look for the next this long
                                    before sleeping in the event loop (0: never) */
  int32_t max_steps_per_request; /* the most steps one Step may ask for */
  lcpd_auth_t *auth;             /* CURVE and the allow-list; NULL: none (everyone controls) */
  int max_clients;               /* connections at once (0: no limit) */
  double idle_timeout_s;         /* close a connection silent this long (0: never) */
  uint64_t max_memory;           /* resident bytes watched (0: not watched) */

  /* --http: the viewer, /metrics, /healthz; NULL: off. */
  const lcpd_http_options_t *http;

  /* Worlds (worlds.h) and BatchStep (batch.h): the most worlds, the default
   * one counted (0: LCPD_DEFAULT_MAX_WORLDS); the most bytes all worlds
   * may hold (0: 3/4 of max_memory when it is set, else
   * LCPD_DEFAULT_MAX_WORLD_BYTES); BatchStep's worker threads (0: as many
   * as the cores the daemon may use). */
  uint32_t max_worlds;
  uint64_t max_world_bytes;
  int workers;
} lcpd_server_options_t;

/* The longest --busy-poll-us: signals and timers wait at most this long. */
#define LCPD_MAX_BUSY_POLL_US 10000

/* Routing frames kept per request (the peer's identity, any frames a proxy
 * added, the empty delimiter). */
#define LCPD_MAX_ENVELOPE 16
/* Requests served per wake-up before yielding to signals and timers. */
#define LCPD_DRAIN_BATCH 64
/* Requests held while a Step runs, and their bytes; beyond either, a
 * request is refused at once (RESOURCE_EXHAUSTED). */
#define LCPD_MAX_HELD 1024
#define LCPD_MAX_HELD_BYTES ((size_t)64 << 20)
/* ZeroMQ's queue of whole requests per connection (ZMQ_RCVHWM) holds at
 * most this many bytes of the largest requests, and 16 to 1000 requests
 * (ZeroMQ's default): 16 of the default 16 MiB. Beyond what the memory
 * watch allows, the connection is closed (connections.h). */
#define LCPD_RECEIVE_QUEUE_BYTES ((int64_t)256 << 20)
/* Replies whose peer's queue was full (ZMQ_SNDHWM), kept to tell the peer
 * when it reads again: at most this many for one peer, and in all; a peer
 * with one more dropped is disconnected. */
#define LCPD_MAX_DROPPED_PER_PEER 1024
#define LCPD_MAX_DROPPED 4096
/* A request as read from the ROUTER: its routing envelope and its body. */
typedef struct lcpd_incoming {
  zmq_msg_t envelope[LCPD_MAX_ENVELOPE];
  int envelope_count;
  zmq_msg_t body; /* open when body_frames is 1 */
  int body_frames;
  lcpd_role_t role; /* the sender's, from its connection's ZAP User-Id */
  int fd;           /* the connection it came on (ZMQ_SRCFD; -1: unknown) */
  size_t bytes;     /* of all its frames, the envelope's too */
} lcpd_incoming_t;

/* A reply that was dropped because its peer's queue was full, and the
 * request it answered: the peer is told with an error reply of that id. */
typedef struct lcpd_dropped {
  lcpd_incoming_t to; /* the envelope */
  uint64_t id;
} lcpd_dropped_t;

typedef struct lcpd_server {
  lcpd_sim_t *sim;      /* the default world's */
  lcpd_worlds_t worlds; /* every world by name, the default one first */
  lcpd_sim_t *call_sim; /* the world the call being served addresses */
  lcpd_batch_t batch;   /* BatchStep's jobs and worker threads */
  bool batch_open;
  lcpd_auth_t *auth; /* NULL: no authentication */
  uv_loop_t loop;
  void *zmq_context;
  void *router;
  void *publisher;
  char router_endpoint[256]; /* as bound (ephemeral ports resolved) */
  char publisher_endpoint[256];
  uv_poll_t router_poll;
  uv_idle_t drain_idle; /* set while requests wait or a Step is running */
  uv_signal_t sigint, sigterm;
  uv_timer_t realtime_timer;
  bool loop_open;
  bool handles_open;
  bool stopping;
  /* The request being served. */
  lcpd_call_t call;
  bool call_running;
  lcpd_incoming_t current;
  uint64_t requests;
  /* While a Step runs: a request read meanwhile is decoded into side_call
   * and answered at once if it may be (Ping; GetInfo while none is held;
   * CancelStep), else held, in arrival order, until the Step is over. */
  lcpd_call_t side_call;
  lcpd_incoming_t side;
  lcpd_incoming_t **held; /* a ring of held_capacity */
  size_t held_first, held_count, held_capacity, held_bytes;
  /* Limits: the whole request's bytes, the connections (their monitor's
   * PAIR socket read through its ZMQ_FD), replies dropped at a full queue,
   * and a timer for the memory watch, idle connections and retries. */
  int64_t max_message_bytes;
  lcpd_connections_t connections;
  void *monitor;
  uv_poll_t monitor_poll;
  uv_timer_t watch_timer;
  lcpd_dropped_t *dropped[LCPD_MAX_DROPPED];
  int dropped_count;
  uint64_t dropped_total, dropped_disconnected, last_drop_log_ns;
  /* Realtime mode: simulated time follows anchor_sim + rate (wall − anchor_wall). */
  bool realtime_on;
  uint64_t anchor_wall_ns;
  double anchor_sim_time;
  uint64_t anchor_epoch;
  double anchor_rate, anchor_timestep;
  uint64_t last_lag_warning_ns;
  uint64_t busy_poll_ns; /* lcpd_server_options_t.busy_poll_ns */
  /* Published states are built here. */
  lcpd_arena_t publish_arena;
  lcpd_error_t publish_error; /* what publish_arena refused */
  /* --http (NULL when off): the HTTP side on this loop, and its counters. */
  lcpd_http_t *http;
  lcpd_metrics_t *metrics;
} lcpd_server_t;

/* Binds the sockets and sets up the loop. On failure everything opened is
 * closed again. */
int lcpd_server_open(lcpd_server_t *server, lcpd_sim_t *sim, const lcpd_server_options_t *options,
                     lcpd_error_t *error);
/* Serves until SIGINT or SIGTERM. */
int lcpd_server_run(lcpd_server_t *server);
/* Closes the sockets and the loop. */
void lcpd_server_close(lcpd_server_t *server);

#endif
