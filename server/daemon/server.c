/* SPDX-License-Identifier: Apache-2.0 */
#include "server.h"

#include "convert.h"
#include "handlers_worlds.h"
#include "log.h"
#include "request_lists.h"
#include "router.h"
#include "stream.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a Step runs before the loop gets a turn (signals, timers) and
 * the requests that came meanwhile are read: a Ping waits at most about
 * this long. */
#define STEP_SLICE_NS 5000000u
/* How long one wake-up may spend serving requests (a batch of cheap ones
 * ends sooner) before signals and timers get their turn. */
#define DRAIN_BUDGET_NS 20000000u
/* Realtime mode: the most wall time one timer tick spends stepping, and the
 * lag beyond which the clock is re-anchored rather than caught up. */
#define REALTIME_TICK_BUDGET_NS 20000000u
#define REALTIME_MAX_LAG_S 0.5

static void schedule(lcpd_server_t *server, bool known_empty);
static void on_drain_idle(uv_idle_t *handle);
static void sync_realtime(lcpd_server_t *server);

/* ---- the ROUTER ---- */

/* Re-reads ZMQ_EVENTS: ZMQ_FD only signals edges, so whether a message is
 * waiting must be asked after every send and receive. */
static bool router_readable(lcpd_server_t *server) {
  int events = 0;
  size_t size = sizeof events;
  if (zmq_getsockopt(server->router, ZMQ_EVENTS, &events, &size) != 0)
    return false;
  return (events & ZMQ_POLLIN) != 0;
}

/* Sends the envelope back, then the reply frame. A peer that went away
 * costs nothing; a peer whose queue is full is told later that this reply
 * was dropped (and replies to it wait behind that). */
static void send_reply(lcpd_server_t *server, const lcpd_call_t *call, lcpd_incoming_t *in) {
  if (server->dropped_count && lcpd_dropped_pending(server, in)) {
    lcpd_dropped_tell(server, in);
    if (lcpd_dropped_pending(server, in)) {
      lcpd_dropped_remember(server, in, call->reply.id);
      return;
    }
  }
  zmq_msg_t frame;
  size_t size = lcpd_call_reply_size(call);
  if (zmq_msg_init_size(&frame, size) != 0) {
    LCPD_ERROR("out of memory for a %zu-byte reply", size);
    lcpd_incoming_close(in);
    return;
  }
  lcpd_call_reply_write(call, zmq_msg_data(&frame));
  int error = lcpd_router_send(server, in, &frame);
  if (error == EAGAIN && in->envelope_count) {
    zmq_msg_close(&frame);
    lcpd_dropped_remember(server, in, call->reply.id);
    return;
  }
  if (error != 0) {
    LCPD_DEBUG("reply not sent: %s", zmq_strerror(error));
    if (in->envelope_count)
      zmq_msg_close(&frame);
  }
  lcpd_incoming_close(in);
}

/* Logs the outcome of a call, sends its reply and ends it. */
static void answer(lcpd_server_t *server, lcpd_call_t *call, lcpd_incoming_t *in) {
  char peer[64];
  /* The arguments cost something (formatting the peer's id): only when logged. */
  if (call->status.code == LCPSIM__V1__STATUS__CODE__OK) {
    if (lcpd_log_enabled(LCPD_LOG_DEBUG))
      LCPD_DEBUG("request %llu (%s) from %s: OK", (unsigned long long)call->reply.id,
                 lcpd_call_name(call), lcpd_peer_name(in, peer, sizeof peer));
  } else {
    LCPD_INFO("request %llu (%s) from %s: %s: %s", (unsigned long long)call->reply.id,
              lcpd_call_name(call), lcpd_peer_name(in, peer, sizeof peer),
              lcpd_code_name(call->status.code), call->status.message);
  }
  if (server->metrics)
    lcpd_metrics_request(server->metrics, lcpd_call_name(call), lcpd_code_name(call->status.code));
  send_reply(server, call, in);
  lcpd_call_finish(call);
}

static void complete_call(lcpd_server_t *server) {
  answer(server, &server->call, &server->current);
  server->call_running = false;
  /* The call may have changed the mode, the rate or the time. */
  sync_realtime(server);
}

/* Receives one multipart message into *in. Returns 0 when no message was
 * waiting, 1 when *in holds one, -1 when one was read and dropped. A
 * non-blocking receive that finds nothing has processed the socket's
 * pending commands, as reading ZMQ_EVENTS does, so ZMQ_FD signals the next
 * message again; no extra ZMQ_EVENTS round per message is needed. */
static int read_request(lcpd_server_t *server, lcpd_incoming_t *in) {
  zmq_msg_t parts[LCPD_MAX_ENVELOPE + 2];
  int kept = 0, total = 0;
  size_t bytes = 0;
  uint64_t wire = 0;
  int fd = -1;
  bool more = true;
  /* Frames beyond those kept are received into this one message, counted
   * and dropped (the request is refused below). */
  zmq_msg_t part;
  zmq_msg_init(&part);
  while (more) {
    if (zmq_msg_recv(&part, server->router, ZMQ_DONTWAIT) < 0) {
      int error = errno;
      if (total == 0) {
        zmq_msg_close(&part);
        return error != EAGAIN ? -1 : 0; /* a transport error: look again */
      }
      /* Parts of a message arrive together, so this is a transport error. */
      LCPD_WARN("a request broke off after %d frames: %s", total, zmq_strerror(error));
      break;
    }
    more = zmq_msg_more(&part);
    size_t size = zmq_msg_size(&part);
    if (total == 0)
      fd = zmq_msg_get(&part, ZMQ_SRCFD); /* the routing id is not on the wire */
    else
      wire += lcpd_wire_bytes(size);
    bytes += size;
    total++;
    /* Every frame carries its connection's metadata: the last one's names
     * the sender's role (a message cut short keeps the lesser role). */
    if (total == 1)
      in->role = server->auth ? LCPD_ROLE_OBSERVER : LCPD_ROLE_CONTROLLER;
    if (!more && server->auth)
      in->role = lcpd_auth_role_of(&part);
    if (kept < (int)(sizeof parts / sizeof parts[0])) {
      zmq_msg_init(&parts[kept]);
      zmq_msg_move(&parts[kept++], &part);
    }
  }
  zmq_msg_close(&part);
  if (kept == 0)
    return -1;
  lcpd_connections_request(&server->connections, fd, wire, total - 1, uv_hrtime());
  /* parts[0] is the peer's identity (added by the ROUTER); the envelope runs
   * to the first empty frame (REQ, and DEALERs that imitate REQ). A DEALER
   * that sends no delimiter gets its reply without one. */
  int delimiter = -1;
  for (int i = 1; i < kept && delimiter < 0; ++i)
    if (zmq_msg_size(&parts[i]) == 0)
      delimiter = i;
  int envelope = delimiter >= 0 ? delimiter + 1 : 1;
  if (envelope > LCPD_MAX_ENVELOPE) {
    LCPD_WARN("dropped a request with %d routing frames (at most %d)", envelope, LCPD_MAX_ENVELOPE);
    for (int i = 0; i < kept; ++i)
      zmq_msg_close(&parts[i]);
    return -1;
  }
  for (int i = 0; i < envelope; ++i) {
    zmq_msg_init(&in->envelope[i]);
    zmq_msg_move(&in->envelope[i], &parts[i]);
    zmq_msg_close(&parts[i]);
  }
  in->envelope_count = envelope;
  in->body_frames = total - envelope;
  in->fd = fd;
  in->bytes = bytes;
  if (in->body_frames == 1) {
    zmq_msg_init(&in->body);
    zmq_msg_move(&in->body, &parts[envelope]);
  }
  for (int i = envelope; i < kept; ++i)
    zmq_msg_close(&parts[i]);
  server->requests++;
  return 1;
}

/* Whether a request may be served: it is one frame after its envelope, no
 * larger than --max-message-bytes in all, and its client reads its replies.
 * Otherwise it is still answered, so that a REQ client is not left waiting,
 * and *call holds the refusal. */
static bool admit(lcpd_server_t *server, lcpd_call_t *call, const lcpd_incoming_t *in) {
  char message[256];
  if (server->max_message_bytes >= 0 && in->bytes > (uint64_t)server->max_message_bytes) {
    snprintf(message, sizeof message,
             "the request has %zu bytes in its frames, more than the %lld one request may have "
             "(the daemon's --max-message-bytes)",
             in->bytes, (long long)server->max_message_bytes);
    lcpd_call_reject(call, LCP_ERR_NO_MEMORY, message);
    return false;
  }
  if (in->body_frames != 1) {
    snprintf(message, sizeof message, "a request is one frame after the envelope (got %d)",
             in->body_frames);
    lcpd_call_reject(call, LCP_ERR_INVALID_ARGUMENT, message);
    return false;
  }
  uint64_t unread = 0;
  bool dropped = server->dropped_count && lcpd_dropped_pending(server, in);
  if (dropped || lcpd_connections_reply_backlog(&server->connections, in->fd, &unread)) {
    if (dropped)
      snprintf(message, sizeof message,
               "refused unserved: replies to this client were dropped because it left them "
               "unread; read the replies waiting before sending more requests");
    else
      snprintf(message, sizeof message,
               "refused unserved: this client leaves %llu bytes of replies unread, more than the "
               "%llu allowed; read the replies waiting before sending more requests",
               (unsigned long long)unread, (unsigned long long)server->connections.reply_backlog);
    /* With its id, so that the client can match the refusal (read from
     * the bytes: decoding a large request only to refuse it costs time). */
    lcpd_call_reject(call, LCP_ERR_NO_MEMORY, message);
    call->reply.id =
        lcpd_request_id(zmq_msg_data((zmq_msg_t *)&in->body), zmq_msg_size((zmq_msg_t *)&in->body));
    return false;
  }
  return true;
}

/* Refuses a decoded call the sender's role does not allow (an observer's
 * call that changes something); returns true when it did, with the reply
 * ready and nothing changed. */
static bool deny(lcpd_call_t *call, lcpd_role_t role) {
  if (role == LCPD_ROLE_CONTROLLER || !lcpd_call_mutates(call))
    return false;
  char message[192];
  snprintf(message, sizeof message,
           "%s: permission denied: an %s key may only call ping, get_info, get_state, get_scene "
           "and list_worlds (and read the state stream)",
           lcpd_call_name(call), lcpd_role_name(role));
  lcpd_call_reject(call, LCP_ERR_STATE, message);
  call->status.code = LCPSIM__V1__STATUS__CODE__PERMISSION_DENIED;
  return true;
}

/* Answers a call with call->error (filled) as its status; true. */
static bool refused(lcpd_call_t *call) {
  lcpd_call_reply_error(call);
  return true;
}

/* The world a decoded call names in Request.world (the default world when
 * it names none); NULL, with the call refused, when there is none. */
static lcpd_world_t *route(lcpd_server_t *server, lcpd_call_t *call) {
  const char *name = call->request->world;
  if (name[0] == '\0')
    return lcpd_worlds_default(&server->worlds);
  lcpd_world_t *world = lcpd_worlds_find(&server->worlds, name);
  if (!world) {
    lcpd_fail(&call->error, LCP_ERR_NOT_FOUND,
              "%s: request.world: no world named '%s' (ListWorlds lists them)",
              lcpd_call_name(call), LCPD_QUOTE(name));
    refused(call);
  }
  return world;
}

/* Serves a decoded call: the calls about worlds here, the others on the
 * world they name (*sim gets it). Returns true when the reply is ready,
 * false while a Step or a BatchStep goes on. */
static bool serve_decoded(lcpd_server_t *server, lcpd_call_t *call, lcpd_sim_t **sim) {
  const Lcpsim__V1__Request *r = call->request;
  lcpd_worlds_t *worlds = &server->worlds;
  int rc;
  switch (r->call_case) {
  case LCPSIM__V1__REQUEST__CALL_CREATE_WORLD:
  case LCPSIM__V1__REQUEST__CALL_DESTROY_WORLD:
  case LCPSIM__V1__REQUEST__CALL_LIST_WORLDS:
  case LCPSIM__V1__REQUEST__CALL_BATCH_STEP:
    if (r->world[0]) {
      lcpd_fail(&call->error, LCP_ERR_INVALID_ARGUMENT,
                "%s names its worlds in its own fields: request.world must be empty (got '%s')",
                lcpd_call_name(call), LCPD_QUOTE(r->world));
      return refused(call);
    }
    break;
  default: {
    lcpd_world_t *world = route(server, call);
    if (!world)
      return true;
    *sim = world->sim;
    return lcpd_call_serve(call, world->sim);
  }
  }
  if (r->call_case == LCPSIM__V1__REQUEST__CALL_BATCH_STEP) {
    /* The default world is read on this thread by the HTTP side, the
     * recorder and the realtime clock: when any of them may, its part of
     * the batch is stepped here. */
    bool default_here = server->http || server->sim->record_step ||
                        server->sim->mode == LCPD_MODE_REALTIME || server->sim->step_observer;
    return lcpd_batch_start(&server->batch, call, worlds, default_here);
  }
  if (r->call_case == LCPSIM__V1__REQUEST__CALL_CREATE_WORLD)
    rc = lcpd_handle_create_world(call, worlds, r->create_world);
  else if (r->call_case == LCPSIM__V1__REQUEST__CALL_DESTROY_WORLD)
    rc = lcpd_handle_destroy_world(call, worlds, r->destroy_world);
  else
    rc = lcpd_handle_list_worlds(call, worlds, (uint32_t)server->batch.workers);
  return rc == LCP_OK || refused(call);
}

/* Serves the request in server->current (or starts serving it). */
static void serve_current(lcpd_server_t *server) {
  lcpd_incoming_t *in = &server->current;
  lcpd_call_t *call = &server->call;
  server->call_sim = server->sim;
  bool done = !admit(server, call, in) ||
              !lcpd_call_decode(call, zmq_msg_data(&in->body), zmq_msg_size(&in->body)) ||
              deny(call, in->role) || serve_decoded(server, call, &server->call_sim);
  /* protobuf-c copied what it needs out of the frame. */
  if (in->body_frames == 1)
    zmq_msg_close(&in->body);
  in->body_frames = 0;
  server->call_running = true;
  if (done)
    complete_call(server);
}

/* Receives one request and serves it (or starts serving it). Returns false
 * when no message was waiting. */
static bool receive_request(lcpd_server_t *server) {
  int got = read_request(server, &server->current);
  if (got > 0)
    serve_current(server);
  return got != 0;
}

/* ---- requests that come while a Step runs ---- */

/* Holds server->side until the Step is over; false when the hold is full. */
static bool hold(lcpd_server_t *server) {
  size_t bytes = zmq_msg_size(&server->side.body);
  if (server->held_count >= LCPD_MAX_HELD || server->held_bytes + bytes > LCPD_MAX_HELD_BYTES)
    return false;
  if (server->held_count == server->held_capacity) {
    size_t capacity = server->held_capacity ? 2 * server->held_capacity : 16;
    lcpd_incoming_t **ring = malloc(capacity * sizeof *ring);
    if (!ring)
      return false;
    for (size_t i = 0; i < server->held_count; ++i)
      ring[i] = server->held[(server->held_first + i) % server->held_capacity];
    free(server->held);
    server->held = ring;
    server->held_first = 0;
    server->held_capacity = capacity;
  }
  lcpd_incoming_t *entry = malloc(sizeof *entry);
  if (!entry)
    return false;
  lcpd_incoming_move(entry, &server->side);
  server->held[(server->held_first + server->held_count) % server->held_capacity] = entry;
  server->held_count++;
  server->held_bytes += bytes;
  return true;
}

/* Moves the first held request into server->current. */
static void unhold(lcpd_server_t *server) {
  lcpd_incoming_t *entry = server->held[server->held_first];
  server->held_first = (server->held_first + 1) % server->held_capacity;
  server->held_count--;
  server->held_bytes -= entry->body_frames == 1 ? zmq_msg_size(&entry->body) : 0;
  lcpd_incoming_move(&server->current, entry);
  free(entry);
}

static void drop_held(lcpd_server_t *server) {
  while (server->held_count) {
    unhold(server);
    lcpd_incoming_close(&server->current);
  }
  free(server->held);
  server->held = NULL;
  server->held_capacity = server->held_first = 0;
}

/* A CancelStep read while a Step runs: stops it when it is the sender's
 * own (and has the id named, if one is). */
static void serve_cancel(lcpd_server_t *server, uint64_t step_id) {
  lcpd_call_t *side = &server->side_call, *step = &server->call;
  if (server->batch.running) {
    /* A BatchStep is not cancelled: its worlds' steps end soon enough
     * (each at most --max-steps-per-request). */
    lcpd_call_reply_cancel(side, NULL);
  } else if (!lcpd_same_peer(&server->side, &server->current)) {
    char message[160];
    snprintf(message, sizeof message,
             "cancel_step: the running Step (request %llu) was sent by another client; only "
             "its sender can cancel it",
             (unsigned long long)step->request->id);
    lcpd_call_reject(side, LCP_ERR_STATE, message);
  } else if (step_id != 0 && step_id != step->request->id) {
    lcpd_call_reply_cancel(side, NULL);
  } else {
    lcpd_call_cancel_step(step, server->call_sim);
    lcpd_call_reply_cancel(side, step);
    complete_call(server);
  }
  answer(server, side, &server->side);
}

/* Whether a free call (GetInfo) names a world a worker thread is stepping:
 * then it waits for the batch, as the calls that are not free do. */
static bool stepped_on_a_worker(lcpd_server_t *server, const lcpd_call_t *call) {
  if (!server->batch.running || call->request->call_case == LCPSIM__V1__REQUEST__CALL_PING)
    return false;
  const lcpd_world_t *world = lcpd_worlds_find(&server->worlds, call->request->world);
  return world && world->busy;
}

/* Reads what came while a Step runs, at most a batch: answers what may be
 * answered now and holds the rest. */
static void serve_during_step(lcpd_server_t *server) {
  lcpd_call_t *side = &server->side_call;
  uint64_t start = uv_hrtime();
  for (int read = 0; read < LCPD_DRAIN_BATCH && server->call_running; ++read) {
    /* Large requests take time to decode and answer: the Step's next slice
     * and the loop get their turn after a budget. */
    if (read > 0 && uv_hrtime() - start > DRAIN_BUDGET_NS)
      return;
    int got = read_request(server, &server->side);
    if (got == 0)
      return;
    if (got < 0)
      continue;
    if (admit(server, side, &server->side) &&
        lcpd_call_decode(side, zmq_msg_data(&server->side.body),
                         zmq_msg_size(&server->side.body))) {
      uint64_t step_id;
      /* GetInfo reads what requests held before it may change. */
      lcpd_sim_t *unused;
      if (lcpd_call_is_free(side) &&
          (server->held_count == 0 || side->request->call_case == LCPSIM__V1__REQUEST__CALL_PING) &&
          !stepped_on_a_worker(server, side)) {
        serve_decoded(server, side, &unused);
      } else if (deny(side, server->side.role)) {
        /* Answered at once: an observer's call is never held. */
      } else if (lcpd_call_is_cancel(side, &step_id)) {
        serve_cancel(server, step_id);
        continue;
      } else {
        /* Decoded again when its turn comes. */
        lcpd_call_finish(side);
        if (hold(server))
          continue;
        char message[192];
        snprintf(message, sizeof message,
                 "%zu requests (%zu bytes) already wait for a running Step; send this one "
                 "again when the Step is over",
                 server->held_count, server->held_bytes);
        lcpd_call_decode(side, zmq_msg_data(&server->side.body), zmq_msg_size(&server->side.body));
        lcpd_call_reject(side, LCP_ERR_NO_MEMORY, message);
      }
    }
    answer(server, side, &server->side);
  }
}

/* After the last waiting request, looks for the next one for up to
 * busy_poll_ns before the loop sleeps: a client in a control loop sends its
 * next request within tens of microseconds, and catching it here saves the
 * wake-up from epoll (a thread sleeping and being woken on another CPU) and
 * finds the caches warm. Each look yields the CPU, so that on a machine with
 * few cores the client and the ZeroMQ I/O threads still run. Returns true
 * when a request is waiting. */
static bool busy_poll(lcpd_server_t *server) {
  if (!server->busy_poll_ns || server->stopping || server->sim->mode == LCPD_MODE_REALTIME)
    return false;
  uint64_t until = uv_hrtime() + server->busy_poll_ns;
  do {
    sched_yield();
    if (router_readable(server))
      return true;
  } while (!server->stopping && uv_hrtime() < until);
  return false;
}

/* Serves waiting requests, at most a batch, then lets the loop run. */
static void drain(lcpd_server_t *server) {
  if (server->stopping)
    return;
  if (server->call_running) {
    /* A Step runs: first what came meanwhile (a CancelStep may end it),
     * then its next slice. */
    serve_during_step(server);
    if (server->call_running && server->batch.running) {
      /* The workers run; their end is the batch's callback. */
      schedule(server, false);
      return;
    }
    if (server->call_running) {
      if (!lcpd_call_resume(&server->call, server->call_sim)) {
        schedule(server, false);
        return;
      }
      complete_call(server);
    }
  }
  uint64_t start = uv_hrtime();
  bool empty = false;
  for (int served = 0; served < LCPD_DRAIN_BATCH && !server->call_running; ++served) {
    if (server->stopping)
      break;
    /* What was held for a Step goes first, in the order it came. */
    if (server->held_count) {
      unhold(server);
      serve_current(server);
      if (uv_hrtime() - start > DRAIN_BUDGET_NS)
        break;
      continue;
    }
    if (!receive_request(server)) {
      /* A request that comes within the busy poll is served in this batch
       * (the batch and the time budget still bound the callback); past the
       * budget, the idle handle serves it on the next loop turn. */
      if (served > 0 && busy_poll(server)) {
        if (uv_hrtime() - start <= DRAIN_BUDGET_NS)
          continue;
        break;
      }
      empty = true;
      break;
    }
    if (uv_hrtime() - start > DRAIN_BUDGET_NS)
      break;
  }
  schedule(server, empty);
}

/* Keeps the idle handle running while there is work, so the next loop turn
 * continues it after signals and timers had theirs. known_empty: a receive
 * just found no message waiting (so ZMQ_EVENTS need not be asked). */
static void schedule(lcpd_server_t *server, bool known_empty) {
  if (server->stopping)
    return;
  /* While a BatchStep's workers run, only new requests are work for the
   * loop (the held ones wait for the batch's end, which schedules again). */
  bool waiting = server->batch.running;
  bool more = (!waiting && (server->call_running || server->held_count)) ||
              (!known_empty && router_readable(server));
  if (more && !uv_is_active((uv_handle_t *)&server->drain_idle))
    uv_idle_start(&server->drain_idle, on_drain_idle);
  else if (!more && uv_is_active((uv_handle_t *)&server->drain_idle))
    uv_idle_stop(&server->drain_idle);
}

static void on_router_poll(uv_poll_t *handle, int status, int events) {
  (void)events;
  lcpd_server_t *server = handle->data;
  if (status < 0)
    LCPD_WARN("poll on the request socket: %s", uv_strerror(status));
  drain(server);
}

static void on_drain_idle(uv_idle_t *handle) { drain(handle->data); }

/* ---- the state stream ---- */

static void publish_state(lcpd_sim_t *sim, void *user) {
  lcpd_server_t *server = user;
  zmq_msg_t frame;
  if (lcpd_stream_frame(sim, &server->publish_arena, &server->publish_error, &frame) &&
      zmq_msg_send(&frame, server->publisher, ZMQ_DONTWAIT) < 0) {
    /* PUB never blocks: a subscriber that cannot keep up loses states. */
    LCPD_DEBUG("state %llu not published: %s", (unsigned long long)sim->publish_sequence,
               zmq_strerror(errno));
    zmq_msg_close(&frame);
  }
}

/* ---- BatchStep ---- */

static void send_stream_frame(void *user, zmq_msg_t *frame) {
  lcpd_server_t *server = user;
  if (zmq_msg_send(frame, server->publisher, ZMQ_DONTWAIT) < 0)
    zmq_msg_close(frame);
}

/* The workers are done: the reply goes, and what was held is served. */
static void on_batch_over(void *user) {
  lcpd_server_t *server = user;
  if (server->stopping || !server->call_running)
    return;
  complete_call(server);
  schedule(server, false);
}

/* ---- realtime mode ---- */

static void anchor_realtime(lcpd_server_t *server) {
  server->anchor_wall_ns = uv_hrtime();
  server->anchor_sim_time = lcp_world_time(server->sim->live.world);
  server->anchor_epoch = server->sim->time_epoch;
  server->anchor_rate = server->sim->rate;
  server->anchor_timestep = lcpd_sim_timestep(server->sim);
}

static void on_realtime_tick(uv_timer_t *handle) {
  lcpd_server_t *server = handle->data;
  lcpd_sim_t *sim = server->sim;
  if (server->stopping || server->call_running)
    return;
  const lcp_world_t *world = sim->live.world;
  uint64_t start = uv_hrtime();
  double h = server->anchor_timestep;
  double elapsed = (double)(start - server->anchor_wall_ns) * 1e-9;
  double target = server->anchor_sim_time + elapsed * server->anchor_rate;
  while (lcp_world_time(world) + 0.5 * h <= target) {
    lcpd_error_t error;
    if (lcpd_sim_step(sim, &error) != LCP_OK) {
      LCPD_ERROR("realtime: %s; back to lockstep mode", error.message);
      sim->mode = LCPD_MODE_LOCKSTEP;
      sync_realtime(server);
      return;
    }
    /* Leave the rest for the next tick so that requests are served. */
    if (uv_hrtime() - start > REALTIME_TICK_BUDGET_NS)
      break;
  }
  double lag = target - lcp_world_time(world);
  if (lag > REALTIME_MAX_LAG_S * server->anchor_rate) {
    /* The world cannot keep up with the rate: follow the wall clock from
     * here rather than run flat out to catch up. */
    uint64_t now = uv_hrtime();
    if (now - server->last_lag_warning_ns > 1000000000u) {
      LCPD_WARN("realtime: %.3f s of simulated time behind at rate %g; steps take longer "
                "than the rate allows",
                lag, server->anchor_rate);
      server->last_lag_warning_ns = now;
    }
    anchor_realtime(server);
  }
}

/* Starts, stops or re-anchors the realtime clock after anything that may
 * have changed the mode, the rate, the timestep or the time. */
static void sync_realtime(lcpd_server_t *server) {
  lcpd_sim_t *sim = server->sim;
  bool want = sim->mode == LCPD_MODE_REALTIME;
  if (!want) {
    if (server->realtime_on) {
      uv_timer_stop(&server->realtime_timer);
      server->realtime_on = false;
      LCPD_INFO("mode: lockstep");
    }
    return;
  }
  double h = lcpd_sim_timestep(sim);
  if (server->realtime_on && server->anchor_epoch == sim->time_epoch &&
      server->anchor_rate == sim->rate && server->anchor_timestep == h)
    return;
  anchor_realtime(server);
  /* A tick per step when steps are long enough, else every millisecond
   * with several steps per tick; at most 50 ms between ticks so requests
   * see time move smoothly. */
  double period_ms = h / sim->rate * 1000.0;
  uint64_t period = period_ms < 1.0 ? 1 : period_ms > 50.0 ? 50 : (uint64_t)period_ms;
  uv_timer_start(&server->realtime_timer, on_realtime_tick, period, period);
  if (!server->realtime_on)
    LCPD_INFO("mode: realtime at rate %g (a tick every %llu ms)", sim->rate,
              (unsigned long long)period);
  server->realtime_on = true;
}

/* ---- connections ---- */

/* How often the memory watch, the idle timeout and the retries of dropped
 * replies run: the memory watch must catch a peer filling ZeroMQ's queues
 * at loopback speed before it has filled much. */
#define WATCH_PERIOD_MS 10
/* The request socket's monitor: its events come on this in-process PAIR. */
#define MONITOR_ENDPOINT "inproc://lcpsimd-connections"

/* Reads the monitor's events: (event, value) in a first frame, the
 * endpoint in a second. */
static void on_monitor_poll(uv_poll_t *handle, int status, int events) {
  (void)status;
  (void)events;
  lcpd_server_t *server = handle->data;
  for (;;) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, server->monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return;
    }
    uint16_t event = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&frame) >= 6) {
      memcpy(&event, zmq_msg_data(&frame), sizeof event);
      memcpy(&value, (unsigned char *)zmq_msg_data(&frame) + 2, sizeof value);
    }
    char endpoint[64] = "";
    while (zmq_msg_more(&frame) && zmq_msg_recv(&frame, server->monitor, ZMQ_DONTWAIT) >= 0) {
      size_t size =
          zmq_msg_size(&frame) < sizeof endpoint - 1 ? zmq_msg_size(&frame) : sizeof endpoint - 1;
      memcpy(endpoint, zmq_msg_data(&frame), size);
      endpoint[size] = '\0';
    }
    zmq_msg_close(&frame);
    if (event == ZMQ_EVENT_ACCEPTED)
      lcpd_connections_accepted(&server->connections, (int)value, uv_hrtime());
    else if (event == ZMQ_EVENT_DISCONNECTED)
      lcpd_connections_disconnected(&server->connections, (int)value);
    else if (server->auth && (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
                              event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL))
      lcpd_auth_handshake_failed(server->auth, event, value, endpoint);
  }
}

static void on_watch(uv_timer_t *handle) {
  lcpd_server_t *server = handle->data;
  if (server->stopping)
    return;
  lcpd_connections_tick(&server->connections, uv_hrtime(), server->call_running);
  if (server->dropped_count)
    lcpd_dropped_tell(server, NULL);
  /* Asking ZMQ_EVENTS lets the socket process its pending commands, among
   * them the end of connections the watch closed (only then does ZeroMQ
   * free what it queued for them); a send above may also have taken the
   * edge ZMQ_FD would have signalled a waiting request with. */
  schedule(server, false);
}

/* Watches the request socket's connections (before it binds, so that none
 * is missed). */
static int open_monitor(lcpd_server_t *server, lcpd_error_t *error) {
  /* A socket has one monitor: under CURVE it also carries the failed
   * handshakes the allow-list's log reports. */
  int events = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED;
  if (server->auth)
    events |= ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL;
  if (zmq_socket_monitor(server->router, MONITOR_ENDPOINT, events) != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot monitor the request socket: %s",
                     zmq_strerror(errno));
  server->monitor = zmq_socket(server->zmq_context, ZMQ_PAIR);
  /* No event may be lost (a lost DISCONNECTED would count a connection
   * for ever): the monitor's queue has no limit. */
  int zero = 0;
  if (!server->monitor || zmq_setsockopt(server->monitor, ZMQ_RCVHWM, &zero, sizeof zero) != 0 ||
      zmq_setsockopt(server->monitor, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
      zmq_connect(server->monitor, MONITOR_ENDPOINT) != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot read the request socket's monitor: %s",
                     zmq_strerror(errno));
  return LCP_OK;
}

/* ---- signals and shutdown ---- */

static void close_handle(uv_handle_t *handle) {
  if (handle->loop && !uv_is_closing(handle))
    uv_close(handle, NULL);
}

static void close_handles(lcpd_server_t *server) {
  if (!server->handles_open)
    return;
  close_handle((uv_handle_t *)&server->router_poll);
  close_handle((uv_handle_t *)&server->drain_idle);
  close_handle((uv_handle_t *)&server->sigint);
  close_handle((uv_handle_t *)&server->sigterm);
  close_handle((uv_handle_t *)&server->realtime_timer);
  if (server->auth)
    lcpd_auth_close_handles(server->auth);
  close_handle((uv_handle_t *)&server->monitor_poll);
  close_handle((uv_handle_t *)&server->watch_timer);
  lcpd_http_close_handles(server->http);
  if (server->batch_open)
    lcpd_batch_close_handles(&server->batch);
  server->handles_open = false;
}

static void on_signal(uv_signal_t *handle, int signal_number) {
  lcpd_server_t *server = handle->data;
  LCPD_INFO("%s: shutting down after %llu requests", signal_number == SIGINT ? "SIGINT" : "SIGTERM",
            (unsigned long long)server->requests);
  server->stopping = true;
  /* With every handle closed, uv_run returns. */
  close_handles(server);
}

/* ---- open, run, close ---- */

/* Whether a tcp:// endpoint names an IPv6 address: its host is in brackets. */
static int bind_is_ipv6(const char *endpoint) {
  return endpoint && strncmp(endpoint, "tcp://[", 7) == 0;
}

static int bind_socket(void *socket, const char *endpoint, char *bound, size_t bound_size,
                       const char *what, lcpd_error_t *error) {
  if (zmq_bind(socket, endpoint) != 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot bind the %s socket to %s: %s", what,
                     endpoint, zmq_strerror(errno));
  size_t size = bound_size;
  if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, bound, &size) != 0)
    snprintf(bound, bound_size, "%s", endpoint);
  return LCP_OK;
}

static void close_sockets(lcpd_server_t *server) {
  if (server->router && server->monitor)
    zmq_socket_monitor(server->router, NULL, 0); /* stops the monitor first */
  if (server->monitor)
    zmq_close(server->monitor);
  server->monitor = NULL;
  if (server->router)
    zmq_close(server->router);
  if (server->publisher)
    zmq_close(server->publisher);
  server->router = server->publisher = NULL;
  /* The ZAP handler and the monitors are sockets of the same context. */
  if (server->auth)
    lcpd_auth_close(server->auth);
  if (server->zmq_context)
    zmq_ctx_term(server->zmq_context);
  server->zmq_context = NULL;
}

int lcpd_server_open(lcpd_server_t *server, lcpd_sim_t *sim, const lcpd_server_options_t *options,
                     lcpd_error_t *error) {
  *server = (lcpd_server_t){.sim = sim,
                            .auth = options->auth,
                            .busy_poll_ns = options->busy_poll_ns,
                            .max_message_bytes = options->max_message_bytes};
  /* Replies a client leaves unread: twice the largest request, at least
   * 16 MiB (a GetState of a large world is a large reply). */
  uint64_t reply_backlog =
      options->max_message_bytes > 0 ? 2 * (uint64_t)options->max_message_bytes : 0;
  if (reply_backlog < ((uint64_t)16 << 20))
    reply_backlog = (uint64_t)16 << 20;
  lcpd_connections_init(&server->connections, options->max_clients, options->idle_timeout_s,
                        reply_backlog, options->max_memory);
  if (server->auth)
    server->connections.frame_overhead = LCPD_CURVE_FRAME_OVERHEAD;
  lcpd_call_init(&server->call, options->decode_budget, options->reply_limit, STEP_SLICE_NS,
                 options->max_steps_per_request);
  lcpd_call_init(&server->side_call, options->decode_budget, options->reply_limit, STEP_SLICE_NS,
                 options->max_steps_per_request);
  lcpd_arena_init(&server->publish_arena, options->reply_limit, &server->publish_error);
  server->zmq_context = zmq_ctx_new();
  /* What the system refuses (contexts, sockets, descriptors) is reported
   * as LCP_ERR_NO_MEMORY, a bad option or endpoint as
   * LCP_ERR_INVALID_ARGUMENT. */
  if (!server->zmq_context)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot create a ZeroMQ context: %s",
                     zmq_strerror(errno));
  server->router = zmq_socket(server->zmq_context, ZMQ_ROUTER);
  server->publisher = zmq_socket(server->zmq_context, ZMQ_PUB);
  if (!server->router || !server->publisher) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot create the sockets: %s", zmq_strerror(errno));
    close_sockets(server);
    return error->code;
  }
  /* CURVE: the ZAP handler is bound before the sockets, so that no peer
   * connects while none answers (ZMQ_ZAP_ENFORCE_DOMAIN refuses it then). */
  if (server->auth && (lcpd_auth_open(server->auth, server->zmq_context, error) != LCP_OK ||
                       lcpd_auth_secure_socket(server->auth, server->zmq_context, server->router, 0,
                                               false, error) != LCP_OK ||
                       lcpd_auth_secure_socket(server->auth, server->zmq_context, server->publisher,
                                               1, true, error) != LCP_OK)) {
    close_sockets(server);
    return error->code;
  }
  int zero = 0, one = 1;
  /* Shut down at once: nothing waits for unsent replies or states. */
  zmq_setsockopt(server->router, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(server->publisher, ZMQ_LINGER, &zero, sizeof zero);
  /* An IPv6 address binds only with ZMQ_IPV6 (tcp://[::1]:5555; tcp://[::]:5555
   * takes both families, for a dual-stack cluster). Only then: with it an IPv4
   * bind is reported as an IPv4-mapped IPv6 endpoint, which a client without
   * the option cannot connect to. */
  int ipv6_router = bind_is_ipv6(options->bind_endpoint);
  int ipv6_publisher = bind_is_ipv6(options->pub_endpoint);
  zmq_setsockopt(server->router, ZMQ_IPV6, &ipv6_router, sizeof ipv6_router);
  zmq_setsockopt(server->publisher, ZMQ_IPV6, &ipv6_publisher, sizeof ipv6_publisher);
  /* A reply that cannot be queued is an error (EAGAIN: the peer's queue is
   * full; EHOSTUNREACH: the peer is gone) rather than dropped unseen, so
   * that a client that does not read is told. */
  zmq_setsockopt(server->router, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
  /* ZeroMQ's queue of whole requests per connection: at most
   * LCPD_RECEIVE_QUEUE_BYTES of the largest, but at least 16 requests: the
   * socket tells ZeroMQ's I/O thread it may read again each time half the
   * mark has been read, a wake-up of that thread that a control loop would
   * pay every other request with a mark of 4. */
  int64_t largest = options->max_message_bytes > 0 ? options->max_message_bytes : INT32_MAX;
  int64_t queued = LCPD_RECEIVE_QUEUE_BYTES / largest;
  int receive_hwm = queued < 16 ? 16 : queued > 1000 ? 1000 : (int)queued;
  zmq_setsockopt(server->router, ZMQ_RCVHWM, &receive_hwm, sizeof receive_hwm);
  /* Dead peers: a ZMTP PING every 10 s; no traffic for 30 s closes the
   * connection. A peer that never finishes its handshake goes after 10 s. */
  int heartbeat_ms = 10000, heartbeat_timeout_ms = 30000, handshake_ms = 10000;
  zmq_setsockopt(server->router, ZMQ_HEARTBEAT_IVL, &heartbeat_ms, sizeof heartbeat_ms);
  zmq_setsockopt(server->router, ZMQ_HEARTBEAT_TIMEOUT, &heartbeat_timeout_ms,
                 sizeof heartbeat_timeout_ms);
  zmq_setsockopt(server->router, ZMQ_HANDSHAKE_IVL, &handshake_ms, sizeof handshake_ms);
  /* Connections that come at once wait in the kernel's accept queue rather
   * than retrying their SYN seconds later. */
  int backlog = 1024;
  zmq_setsockopt(server->router, ZMQ_BACKLOG, &backlog, sizeof backlog);
  if (open_monitor(server, error) != LCP_OK) {
    close_sockets(server);
    return error->code;
  }
  if (options->max_message_bytes >= 0 &&
      zmq_setsockopt(server->router, ZMQ_MAXMSGSIZE, &options->max_message_bytes,
                     sizeof options->max_message_bytes) != 0) {
    lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot set ZMQ_MAXMSGSIZE: %s",
              zmq_strerror(errno));
    close_sockets(server);
    return error->code;
  }
  if (bind_socket(server->router, options->bind_endpoint, server->router_endpoint,
                  sizeof server->router_endpoint, "request", error) != 0 ||
      bind_socket(server->publisher, options->pub_endpoint, server->publisher_endpoint,
                  sizeof server->publisher_endpoint, "state stream", error) != 0) {
    close_sockets(server);
    return error->code;
  }
  int fd = -1;
  size_t fd_size = sizeof fd;
  if (zmq_getsockopt(server->router, ZMQ_FD, &fd, &fd_size) != 0) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot get the request socket's ZMQ_FD: %s",
              zmq_strerror(errno));
    close_sockets(server);
    return error->code;
  }
  int rc = uv_loop_init(&server->loop);
  if (rc != 0) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot start the event loop: %s", uv_strerror(rc));
    close_sockets(server);
    return error->code;
  }
  server->loop_open = true;
  uv_idle_init(&server->loop, &server->drain_idle);
  uv_signal_init(&server->loop, &server->sigint);
  uv_signal_init(&server->loop, &server->sigterm);
  uv_timer_init(&server->loop, &server->realtime_timer);
  uv_timer_init(&server->loop, &server->watch_timer);
  int monitor_fd = -1;
  fd_size = sizeof monitor_fd;
  zmq_getsockopt(server->monitor, ZMQ_FD, &monitor_fd, &fd_size);
  rc = uv_poll_init(&server->loop, &server->monitor_poll, monitor_fd);
  if (rc == 0)
    rc = uv_poll_init(&server->loop, &server->router_poll, fd);
  server->handles_open = true;
  server->drain_idle.data = server->sigint.data = server->sigterm.data = server;
  server->realtime_timer.data = server->router_poll.data = server;
  server->monitor_poll.data = server->watch_timer.data = server;
  if (rc == 0)
    rc = uv_poll_start(&server->router_poll, UV_READABLE, on_router_poll);
  if (rc == 0)
    rc = uv_poll_start(&server->monitor_poll, UV_READABLE, on_monitor_poll);
  if (rc == 0)
    rc = uv_timer_start(&server->watch_timer, on_watch, WATCH_PERIOD_MS, WATCH_PERIOD_MS);
  if (rc == 0)
    rc = uv_signal_start(&server->sigint, on_signal, SIGINT);
  if (rc == 0)
    rc = uv_signal_start(&server->sigterm, on_signal, SIGTERM);
  if (rc == 0 && server->auth && lcpd_auth_watch(server->auth, &server->loop, error) != LCP_OK) {
    lcpd_server_close(server);
    return error->code;
  }
  if (rc != 0) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot watch the request socket or signals: %s",
              uv_strerror(rc));
    lcpd_server_close(server);
    return error->code;
  }
  if (options->http) {
    if (lcpd_http_open(&server->http, &server->loop, sim, &server->connections, options->http,
                       error) != LCP_OK) {
      lcpd_server_close(server);
      return error->code;
    }
    server->metrics = lcpd_http_metrics(server->http);
  }
  sim->publish = publish_state;
  sim->publish_user = server;
  uint64_t max_world_bytes = options->max_world_bytes;
  if (!max_world_bytes)
    max_world_bytes =
        options->max_memory ? options->max_memory / 4 * 3 : LCPD_DEFAULT_MAX_WORLD_BYTES;
  int workers = options->workers ? options->workers : (int)uv_available_parallelism();
  if (workers > LCPD_MAX_WORKERS)
    workers = LCPD_MAX_WORKERS;
  if (lcpd_worlds_init(&server->worlds, sim,
                       options->max_worlds ? options->max_worlds : LCPD_DEFAULT_MAX_WORLDS,
                       max_world_bytes, error) != LCP_OK) {
    lcpd_server_close(server);
    return error->code;
  }
  if (lcpd_batch_open(&server->batch, &server->loop, workers, options->reply_limit,
                      options->max_steps_per_request, STEP_SLICE_NS, on_batch_over,
                      send_stream_frame, server, error) != LCP_OK) {
    lcpd_server_close(server);
    return error->code;
  }
  server->batch_open = true;
  return LCP_OK;
}

int lcpd_server_run(lcpd_server_t *server) {
  sync_realtime(server);
  on_monitor_poll(&server->monitor_poll, 0, 0);
  /* Requests may have queued before the poll started: ZMQ_FD would not
   * signal them again, so look once now. */
  drain(server);
  uv_run(&server->loop, UV_RUN_DEFAULT);
  return 0;
}

void lcpd_server_close(lcpd_server_t *server) {
  if (server->loop_open) {
    close_handles(server);
    /* Runs the close callbacks: the poll handle is gone before its socket. */
    uv_run(&server->loop, UV_RUN_DEFAULT);
    int rc = uv_loop_close(&server->loop);
    if (rc != 0)
      LCPD_ERROR("event loop still busy at exit: %s", uv_strerror(rc));
    server->loop_open = false;
  }
  if (server->batch_open)
    lcpd_batch_destroy(&server->batch);
  server->batch_open = false;
  if (server->call_running)
    lcpd_call_finish(&server->call);
  server->call_running = false;
  lcpd_incoming_close(&server->current);
  lcpd_incoming_close(&server->side);
  drop_held(server);
  for (int i = 0; i < server->dropped_count; ++i) {
    lcpd_incoming_close(&server->dropped[i]->to);
    free(server->dropped[i]);
  }
  server->dropped_count = 0;
  lcpd_http_free(server->http);
  server->http = NULL;
  server->metrics = NULL;
  lcpd_connections_destroy(&server->connections);
  lcpd_call_destroy(&server->call);
  lcpd_call_destroy(&server->side_call);
  lcpd_arena_destroy(&server->publish_arena);
  if (server->sim) {
    server->sim->publish = NULL;
    server->sim->publish_user = NULL;
  }
  if (server->worlds.items)
    lcpd_worlds_destroy(&server->worlds);
  close_sockets(server);
}
