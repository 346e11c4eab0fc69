/* SPDX-License-Identifier: Apache-2.0 */
#include "server.h"

#include "convert.h"
#include "log.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static const char STATE_TOPIC[] = "state"; /* sent without its NUL */
#define STATE_TOPIC_LENGTH (sizeof STATE_TOPIC - 1)

/* How long a Step runs before the loop gets a turn (signals, timers). */
#define STEP_SLICE_NS 20000000u
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

static void close_envelope(lcpd_server_t *server) {
  for (int i = 0; i < server->envelope_count; ++i)
    zmq_msg_close(&server->envelope[i]);
  server->envelope_count = 0;
}

/* "a1b2c3d4e5": the peer's routing id, for logs. */
static const char *peer_name(lcpd_server_t *server, char *buffer, size_t size) {
  buffer[0] = '\0';
  if (server->envelope_count == 0)
    return buffer;
  const unsigned char *id = zmq_msg_data(&server->envelope[0]);
  size_t length = zmq_msg_size(&server->envelope[0]);
  size_t used = 0;
  for (size_t i = 0; i < length && used + 3 <= size; ++i)
    used += (size_t)snprintf(buffer + used, size - used, "%02x", id[i]);
  return buffer;
}

/* Sends the envelope back, then the reply frame. A peer that went away
 * costs nothing: the ROUTER (not mandatory) drops what cannot be routed. */
static void send_reply(lcpd_server_t *server) {
  lcpd_call_t *call = &server->call;
  zmq_msg_t frame;
  size_t size = lcpd_call_reply_size(call);
  if (zmq_msg_init_size(&frame, size) != 0) {
    LCPD_ERROR("out of memory for a %zu-byte reply", size);
    close_envelope(server);
    return;
  }
  lcpd_call_reply_write(call, zmq_msg_data(&frame));
  for (int i = 0; i < server->envelope_count; ++i) {
    if (zmq_msg_send(&server->envelope[i], server->router, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
      LCPD_DEBUG("reply not sent: %s", zmq_strerror(errno));
      zmq_msg_close(&frame);
      for (int k = i; k < server->envelope_count; ++k)
        zmq_msg_close(&server->envelope[k]);
      server->envelope_count = 0;
      return;
    }
  }
  server->envelope_count = 0;
  if (zmq_msg_send(&frame, server->router, ZMQ_DONTWAIT) < 0) {
    LCPD_DEBUG("reply not sent: %s", zmq_strerror(errno));
    zmq_msg_close(&frame);
  }
}

static void complete_call(lcpd_server_t *server) {
  lcpd_call_t *call = &server->call;
  char peer[64];
  /* The arguments cost something (formatting the peer's id): only when logged. */
  if (call->status.code == LCPSIM__V1__STATUS__CODE__OK) {
    if (lcpd_log_enabled(LCPD_LOG_DEBUG))
      LCPD_DEBUG("request %llu (%s) from %s: OK", (unsigned long long)call->reply.id,
                 lcpd_call_name(call), peer_name(server, peer, sizeof peer));
  } else {
    LCPD_INFO("request %llu (%s) from %s: %s: %s", (unsigned long long)call->reply.id,
              lcpd_call_name(call), peer_name(server, peer, sizeof peer),
              lcpd_code_name(call->status.code), call->status.message);
  }
  send_reply(server);
  lcpd_call_finish(call);
  server->call_running = false;
  /* The call may have changed the mode, the rate or the time. */
  sync_realtime(server);
}

/* Receives one multipart message and serves it (or starts serving it).
 * Returns false when no message was waiting. A non-blocking receive that
 * finds nothing has processed the socket's pending commands, as reading
 * ZMQ_EVENTS does, so ZMQ_FD signals the next message again; no extra
 * ZMQ_EVENTS round per message is needed. */
static bool receive_request(lcpd_server_t *server) {
  zmq_msg_t parts[LCPD_MAX_ENVELOPE + 2];
  int kept = 0, total = 0;
  bool more = true;
  while (more) {
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, server->router, ZMQ_DONTWAIT) < 0) {
      int error = errno;
      zmq_msg_close(&part);
      if (total == 0)
        return error != EAGAIN; /* nothing waiting (or a transport error: look again) */
      /* Parts of a message arrive together, so this is a transport error. */
      LCPD_WARN("a request broke off after %d frames: %s", total, zmq_strerror(error));
      break;
    }
    more = zmq_msg_more(&part);
    total++;
    if (kept < (int)(sizeof parts / sizeof parts[0])) {
      zmq_msg_init(&parts[kept]);
      zmq_msg_move(&parts[kept++], &part);
    }
    /* Parts beyond those kept are counted, not kept: refused below. */
    zmq_msg_close(&part);
  }
  if (kept == 0)
    return true;
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
    return true;
  }
  for (int i = 0; i < envelope; ++i) {
    zmq_msg_init(&server->envelope[i]);
    zmq_msg_move(&server->envelope[i], &parts[i]);
    zmq_msg_close(&parts[i]);
  }
  server->envelope_count = envelope;
  int body_frames = total - envelope;
  server->requests++;
  lcpd_call_t *call = &server->call;
  bool done;
  if (body_frames != 1) {
    /* Still answered, so that a REQ client is not left waiting. */
    char message[128];
    snprintf(message, sizeof message, "a request is one frame after the envelope (got %d)",
             body_frames);
    lcpd_call_reject(call, LCP_ERR_INVALID_ARGUMENT, message);
    done = true;
  } else {
    zmq_msg_t *body = &parts[envelope];
    done = lcpd_call_start(call, server->sim, zmq_msg_data(body), zmq_msg_size(body));
  }
  /* protobuf-c copied what it needs out of the frame. */
  for (int i = envelope; i < kept; ++i)
    zmq_msg_close(&parts[i]);
  server->call_running = true;
  if (done)
    complete_call(server);
  return true;
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
    if (!lcpd_call_resume(&server->call, server->sim)) {
      schedule(server, false);
      return;
    }
    complete_call(server);
  }
  uint64_t start = uv_hrtime();
  bool empty = false;
  for (int served = 0; served < LCPD_DRAIN_BATCH && !server->call_running; ++served) {
    if (server->stopping)
      break;
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
  bool more = server->call_running || (!known_empty && router_readable(server));
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
  uint64_t sequence = ++sim->publish_sequence;
  Lcpsim__V1__State *state =
      lcpd_new_state(&server->publish_arena, sim, sim->publish_contacts, sequence);
  if (!state) {
    LCPD_ERROR("state stream: state %llu needs %s; not published", (unsigned long long)sequence,
               server->publish_error.message);
  } else {
    size_t size = lcpsim__v1__state__get_packed_size(state);
    zmq_msg_t frame;
    if (zmq_msg_init_size(&frame, STATE_TOPIC_LENGTH + size) == 0) {
      unsigned char *data = zmq_msg_data(&frame);
      memcpy(data, STATE_TOPIC, STATE_TOPIC_LENGTH);
      lcpsim__v1__state__pack(state, data + STATE_TOPIC_LENGTH);
      /* PUB never blocks: a subscriber that cannot keep up loses states. */
      if (zmq_msg_send(&frame, server->publisher, ZMQ_DONTWAIT) < 0) {
        LCPD_DEBUG("state %llu not published: %s", (unsigned long long)sequence,
                   zmq_strerror(errno));
        zmq_msg_close(&frame);
      }
    } else {
      LCPD_ERROR("state stream: out of memory for a %zu-byte state", size);
    }
  }
  lcpd_arena_reset(&server->publish_arena);
}

/* ---- realtime mode ---- */

static double world_timestep(const lcpd_sim_t *sim) {
  lcp_world_settings_t s;
  lcp_world_get_settings(sim->live.world, &s);
  return s.timestep;
}

static void anchor_realtime(lcpd_server_t *server) {
  server->anchor_wall_ns = uv_hrtime();
  server->anchor_sim_time = lcp_world_time(server->sim->live.world);
  server->anchor_epoch = server->sim->time_epoch;
  server->anchor_rate = server->sim->rate;
  server->anchor_timestep = world_timestep(server->sim);
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
  double h = world_timestep(sim);
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
  if (server->router)
    zmq_close(server->router);
  if (server->publisher)
    zmq_close(server->publisher);
  server->router = server->publisher = NULL;
  if (server->zmq_context)
    zmq_ctx_term(server->zmq_context);
  server->zmq_context = NULL;
}

int lcpd_server_open(lcpd_server_t *server, lcpd_sim_t *sim, const lcpd_server_options_t *options,
                     lcpd_error_t *error) {
  *server = (lcpd_server_t){.sim = sim, .busy_poll_ns = options->busy_poll_ns};
  lcpd_call_init(&server->call, options->decode_budget, options->reply_limit, STEP_SLICE_NS);
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
  int zero = 0;
  /* Shut down at once: nothing waits for unsent replies or states. */
  zmq_setsockopt(server->router, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(server->publisher, ZMQ_LINGER, &zero, sizeof zero);
  /* Replies to peers that went away are dropped, never an error. */
  zmq_setsockopt(server->router, ZMQ_ROUTER_MANDATORY, &zero, sizeof zero);
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
  rc = uv_poll_init(&server->loop, &server->router_poll, fd);
  server->handles_open = true;
  server->drain_idle.data = server->sigint.data = server->sigterm.data = server;
  server->realtime_timer.data = server->router_poll.data = server;
  if (rc == 0)
    rc = uv_poll_start(&server->router_poll, UV_READABLE, on_router_poll);
  if (rc == 0)
    rc = uv_signal_start(&server->sigint, on_signal, SIGINT);
  if (rc == 0)
    rc = uv_signal_start(&server->sigterm, on_signal, SIGTERM);
  if (rc != 0) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot watch the request socket or signals: %s",
              uv_strerror(rc));
    lcpd_server_close(server);
    return error->code;
  }
  sim->publish = publish_state;
  sim->publish_user = server;
  return LCP_OK;
}

int lcpd_server_run(lcpd_server_t *server) {
  sync_realtime(server);
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
  if (server->call_running)
    lcpd_call_finish(&server->call);
  server->call_running = false;
  close_envelope(server);
  lcpd_call_destroy(&server->call);
  lcpd_arena_destroy(&server->publish_arena);
  if (server->sim) {
    server->sim->publish = NULL;
    server->sim->publish_user = NULL;
  }
  close_sockets(server);
}
