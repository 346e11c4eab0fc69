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
  lcpd_player_t player;
  void *publisher;
  uint64_t sent, dropped;
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

static void close_all(replay *r) {
  lcpd_player_close(&r->player);
  uv_close((uv_handle_t *)&r->sigint, NULL);
  uv_close((uv_handle_t *)&r->sigterm, NULL);
}

static void on_end(void *user) {
  replay *r = user;
  LCPD_INFO("replay finished: %llu entries sent, %llu dropped", (unsigned long long)r->sent,
            (unsigned long long)r->dropped);
  close_all(r);
}

static void on_signal(uv_signal_t *handle, int signal_number) {
  LCPD_INFO("%s: replay stopped", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  close_all(handle->data);
}

int lcpd_replay_run(const lcpd_replay_options_t *o) {
  replay r = {0};
  lcpd_error_t error = {0};
  if (uv_loop_init(&r.loop) != 0) {
    LCPD_ERROR("cannot start the event loop");
    return 1;
  }
  if (lcpd_player_open(&r.player, &r.loop, o->path, &error) != LCP_OK) {
    LCPD_ERROR("%s", error.message);
    uv_loop_close(&r.loop);
    return 1;
  }
  const lcpd_recording_t *rec = &r.player.recording;
  void *context = zmq_ctx_new();
  r.publisher = context ? zmq_socket(context, ZMQ_PUB) : NULL;
  char bound[256] = "";
  size_t bound_size = sizeof bound;
  if (!r.publisher || zmq_bind(r.publisher, o->pub_endpoint) != 0 ||
      zmq_getsockopt(r.publisher, ZMQ_LAST_ENDPOINT, bound, &bound_size) != 0) {
    LCPD_ERROR("cannot bind the state stream socket to %s: %s", o->pub_endpoint,
               zmq_strerror(errno));
    lcpd_player_close(&r.player);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    uv_loop_close(&r.loop);
    if (r.publisher)
      zmq_close(r.publisher);
    if (context)
      zmq_ctx_term(context);
    return 1;
  }
  double duration = lcpd_recording_end_time(rec) - lcpd_recording_start_time(rec);
  /* The first line as the live daemon's (no request socket: "rep=-"),
   * with the recording's summary after it. */
  printf("lcpsimd listening rep=- pub=%s replay states=%zu duration=%.17g scenes=%zu\n", bound,
         rec->state_count, duration, rec->scene_count);
  fflush(stdout);
  LCPD_INFO("replay of %s: %zu states over %g s of simulated time, %zu scenes, timestep %g s%s; "
            "at %g x",
            o->path, rec->state_count, duration, rec->scene_count, rec->timestep,
            rec->truncated ? " (its last entry was cut short and is left out)" : "", o->speed);
  uv_signal_init(&r.loop, &r.sigint);
  uv_signal_init(&r.loop, &r.sigterm);
  r.sigint.data = r.sigterm.data = &r;
  uv_signal_start(&r.sigint, on_signal, SIGINT);
  uv_signal_start(&r.sigterm, on_signal, SIGTERM);
  lcpd_player_set_sink(&r.player, publish, on_end, &r);
  lcpd_player_set_speed(&r.player, o->speed);
  lcpd_player_emit_header(&r.player);
  lcpd_player_play(&r.player);
  uv_run(&r.loop, UV_RUN_DEFAULT);
  uv_loop_close(&r.loop);
  /* What is queued goes out before the socket closes, for a second at most. */
  int linger_ms = 1000;
  zmq_setsockopt(r.publisher, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
  zmq_close(r.publisher);
  zmq_ctx_term(context);
  return 0;
}
