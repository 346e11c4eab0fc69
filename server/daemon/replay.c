/* SPDX-License-Identifier: Apache-2.0 */
#include "replay.h"

#include "log.h"
#include "player.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

typedef struct replay {
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  lcpd_recording_t recording; /* shared by the PUB player and the viewers' */
  lcpd_player_t player;       /* to the PUB socket */
  lcpd_http_t *http;
  void *context, *publisher;
  uint64_t sent, dropped;
  bool closing;
} replay;

static void publish(void *user, const lcpd_record_entry_t *entry) {
  replay *r = user;
  const char *topic = entry->kind == LCPSIM__V1__RECORD_ENTRY__ENTRY_STATE   ? "state"
                      : entry->kind == LCPSIM__V1__RECORD_ENTRY__ENTRY_SCENE ? "scene"
                                                                             : "header";
  size_t topic_length = strlen(topic);
  zmq_msg_t frame;
  if (zmq_msg_init_size(&frame, topic_length + entry->message_size) != 0) {
    r->dropped++;
    return;
  }
  memcpy(zmq_msg_data(&frame), topic, topic_length);
  memcpy((char *)zmq_msg_data(&frame) + topic_length, entry->message, entry->message_size);
  /* As the live stream: a subscriber that cannot keep up loses entries. */
  if (zmq_msg_send(&frame, r->publisher, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&frame);
    r->dropped++;
  } else {
    r->sent++;
  }
}

/* Every handle on the loop: uv_run then returns. */
static void close_all(replay *r) {
  if (r->closing)
    return;
  r->closing = true;
  lcpd_player_close(&r->player, NULL);
  uv_close((uv_handle_t *)&r->sigint, NULL);
  uv_close((uv_handle_t *)&r->sigterm, NULL);
  lcpd_http_close_handles(r->http);
}

static void on_end(void *user) {
  replay *r = user;
  LCPD_INFO("replay to the state stream finished: %llu entries sent, %llu dropped%s",
            (unsigned long long)r->sent, (unsigned long long)r->dropped,
            r->http ? "; the viewers' replays are served until SIGINT or SIGTERM" : "");
  if (!r->http)
    close_all(r);
}

static void on_signal(uv_signal_t *handle, int signal_number) {
  LCPD_INFO("%s: replay stopped", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  close_all(handle->data);
}

/* Closes what open_all opened; the loop has run every close callback. */
static void free_all(replay *r) {
  lcpd_http_free(r->http);
  r->http = NULL;
  lcpd_recording_close(&r->recording);
  if (r->publisher) {
    /* What is queued goes out before the socket closes, for a second at most. */
    int linger_ms = 1000;
    zmq_setsockopt(r->publisher, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
    zmq_close(r->publisher);
  }
  if (r->context)
    zmq_ctx_term(r->context);
}

/* The recording, its PUB player, the socket bound (its endpoint into
 * bound) and the HTTP side. On failure, logged and what was opened left for
 * close_all and free_all. */
static bool open_all(replay *r, const lcpd_replay_options_t *o, char *bound, size_t bound_size) {
  lcpd_error_t error = {0};
  if (lcpd_recording_open(&r->recording, o->path, &error) != LCP_OK ||
      lcpd_player_init(&r->player, &r->loop, &r->recording, &error) != LCP_OK) {
    LCPD_ERROR("%s", error.message);
    return false;
  }
  r->context = zmq_ctx_new();
  r->publisher = r->context ? zmq_socket(r->context, ZMQ_PUB) : NULL;
  if (!r->publisher || zmq_bind(r->publisher, o->pub_endpoint) != 0 ||
      zmq_getsockopt(r->publisher, ZMQ_LAST_ENDPOINT, bound, &bound_size) != 0) {
    LCPD_ERROR("cannot bind the state stream socket to %s: %s", o->pub_endpoint,
               zmq_strerror(errno));
    return false;
  }
  if (o->http) {
    lcpd_http_options_t http = *o->http;
    http.replay = &r->recording;
    http.replay_speed = o->speed;
    if (lcpd_http_open(&r->http, &r->loop, NULL, NULL, &http, &error) != LCP_OK) {
      LCPD_ERROR("%s", error.message);
      return false;
    }
  }
  return true;
}

int lcpd_replay_run(const lcpd_replay_options_t *o) {
  replay r = {0};
  if (uv_loop_init(&r.loop) != 0) {
    LCPD_ERROR("cannot start the event loop");
    return 1;
  }
  uv_signal_init(&r.loop, &r.sigint);
  uv_signal_init(&r.loop, &r.sigterm);
  r.sigint.data = r.sigterm.data = &r;
  char bound[256] = "";
  bool opened = open_all(&r, o, bound, sizeof bound);
  if (!opened) {
    close_all(&r);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    uv_loop_close(&r.loop);
    free_all(&r);
    return 1;
  }
  const lcpd_recording_t *rec = &r.recording;
  double duration = lcpd_recording_end_time(rec) - lcpd_recording_start_time(rec);
  /* The first line as the live daemon's (no request socket: "rep=-"),
   * with the recording's summary after it. */
  printf("lcpsimd listening rep=- pub=%s%s%s replay states=%zu duration=%.17g scenes=%zu\n", bound,
         r.http ? " http=" : "", r.http ? lcpd_http_url(r.http) : "", rec->state_count, duration,
         rec->scene_count);
  fflush(stdout);
  LCPD_INFO("replay of %s: %zu states over %g s of simulated time, %zu scenes, timestep %g s%s; "
            "at %g x",
            o->path, rec->state_count, duration, rec->scene_count, rec->timestep,
            rec->truncated ? " (its last entry was cut short and is left out)" : "", o->speed);
  uv_signal_start(&r.sigint, on_signal, SIGINT);
  uv_signal_start(&r.sigterm, on_signal, SIGTERM);
  lcpd_player_set_sink(&r.player, publish, on_end, &r);
  lcpd_player_set_speed(&r.player, o->speed);
  lcpd_player_emit_header(&r.player);
  lcpd_player_play(&r.player);
  uv_run(&r.loop, UV_RUN_DEFAULT);
  int rc = uv_loop_close(&r.loop);
  if (rc != 0)
    LCPD_ERROR("event loop still busy at exit: %s", uv_strerror(rc));
  free_all(&r);
  return 0;
}
