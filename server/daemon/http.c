/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd's HTTP side.
 *
 * Why libwebsockets: it is a C library packaged by Debian
 * (libwebsockets-dev, with libwebsockets-evlib-uv for libuv), maintained
 * since 2010, with HTTP/1.1, WebSocket (RFC 6455: masking, fragmentation,
 * close codes, UTF-8 checks) and file serving in one, and it joins an event
 * loop it does not own (LWS_SERVER_OPTION_LIBUV with foreign_loops): the
 * daemon keeps one thread and one loop, so the stream is built from the
 * world between requests with no locks. The alternatives were a hand-written
 * HTTP/WebSocket server (more code to get the protocol edge cases right),
 * civetweb or mongoose (their own threads or poll loop, not libuv; neither is
 * in Debian as a library with a libuv backend), or libh2o (HTTP only).
 *
 * The stream: a timer at LCPD_HTTP_MAX_HZ builds at most one State per
 * period (two when some viewers asked for contacts and some did not), shared
 * by every viewer due one; the simulation never waits for it. Each viewer
 * holds at most one unsent State: a newer one replaces it, and the one
 * replaced counts as dropped. libwebsockets keeps the unsent tail of the
 * message being written (at most one), so a viewer that never reads holds
 * at most two messages of the daemon's memory.
 *
 * A replay (lcpsimd --replay FILE --http): each viewer has a player of its
 * own (player.h) over the one recording the daemon mapped, ticking at the
 * viewer's rate and giving it the last State due; the same rule of one
 * unsent State holds, and a scene waits whole before the States of it. */
#define _XOPEN_SOURCE 700 /* realpath (an XSI interface in glibc) */

#include "http.h"

#include "convert.h"
#include "log.h"
#include "memory.h"
#include "recording.h"
#include "scene_view.h"

#include "lcpsim/urdf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing (also without libwebsockets, for the tests) ---- */

bool lcpd_http_split_address(const char *address, char *host, size_t host_size, int *port) {
  const char *colon = strrchr(address, ':');
  if (!colon || colon == address)
    return false;
  const char *start = address, *stop = colon;
  if (address[0] == '[') {
    if (colon[-1] != ']')
      return false;
    start++;
    stop--;
  }
  size_t length = (size_t)(stop - start);
  if (length == 0 || length >= host_size)
    return false;
  char *end = NULL;
  long value = strtol(colon + 1, &end, 10);
  if (colon[1] == '\0' || *end != '\0' || value < 0 || value > 65535)
    return false;
  memcpy(host, start, length);
  host[length] = '\0';
  *port = (int)value;
  return true;
}

static const char *skip_space(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* A JSON string without escapes (the control messages' keys and values
 * need none) into out. */
static const char *parse_word(const char *p, const char *end, char *out, size_t out_size) {
  if (p >= end || *p != '"')
    return NULL;
  size_t n = 0;
  for (p++; p < end && *p != '"'; p++) {
    if (*p == '\\' || n + 1 >= out_size)
      return NULL;
    out[n++] = *p;
  }
  if (p >= end)
    return NULL;
  out[n] = '\0';
  return p + 1;
}

static const char *parse_number(const char *p, const char *end, double *out) {
  char buffer[64];
  size_t n = 0;
  while (p + n < end && n < sizeof buffer - 1 && strchr("+-0123456789.eE", p[n]))
    n++;
  if (n == 0)
    return NULL;
  memcpy(buffer, p, n);
  buffer[n] = '\0';
  char *stop = NULL;
  /* A number past a double's range is infinite (strtod's HUGE_VAL): valid
   * JSON, refused by the command that reads it. */
  *out = strtod(buffer, &stop);
  if (*stop != '\0')
    return NULL;
  return p + n;
}

static const char *parse_bool(const char *p, const char *end, bool *out) {
  if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
    *out = true;
    return p + 4;
  }
  if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
    *out = false;
    return p + 5;
  }
  return NULL;
}

bool lcpd_http_parse_control(const char *text, size_t length, lcpd_http_control_t *control) {
  const char *p = text, *end = text + length;
  *control = (lcpd_http_control_t){0};
  bool has_command = false;
  p = skip_space(p, end);
  if (p >= end || *p++ != '{')
    return false;
  p = skip_space(p, end);
  if (p < end && *p == '}')
    return false;
  for (;;) {
    char key[16], word[16];
    p = parse_word(skip_space(p, end), end, key, sizeof key);
    if (!p)
      return false;
    p = skip_space(p, end);
    if (p >= end || *p++ != ':')
      return false;
    p = skip_space(p, end);
    if (strcmp(key, "cmd") == 0) {
      p = parse_word(p, end, word, sizeof word);
      if (!p)
        return false;
      if (strcmp(word, "play") == 0)
        control->command = LCPD_HTTP_PLAY;
      else if (strcmp(word, "pause") == 0)
        control->command = LCPD_HTTP_PAUSE;
      else if (strcmp(word, "seek") == 0)
        control->command = LCPD_HTTP_SEEK;
      else if (strcmp(word, "speed") == 0)
        control->command = LCPD_HTTP_SPEED;
      else if (strcmp(word, "contacts") == 0)
        control->command = LCPD_HTTP_CONTACTS;
      else
        return false;
      has_command = true;
    } else if (strcmp(key, "t") == 0) {
      p = parse_number(p, end, &control->time);
      control->has_time = true;
    } else if (strcmp(key, "speed") == 0) {
      p = parse_number(p, end, &control->speed);
      control->has_speed = true;
    } else if (strcmp(key, "on") == 0) {
      p = parse_bool(p, end, &control->on);
      control->has_on = true;
    } else {
      return false;
    }
    if (!p)
      return false;
    p = skip_space(p, end);
    if (p < end && *p == ',') {
      p++;
      continue;
    }
    if (p < end && *p == '}')
      break;
    return false;
  }
  p = skip_space(p + 1, end);
  if (p != end || !has_command)
    return false;
  switch (control->command) {
  case LCPD_HTTP_SEEK:
    return control->has_time;
  case LCPD_HTTP_SPEED:
    return control->has_speed;
  case LCPD_HTTP_CONTACTS:
    return control->has_on;
  default:
    return true;
  }
}

#if !defined(LCPD_HAVE_LWS)

int lcpd_http_open(lcpd_http_t **out, uv_loop_t *loop, lcpd_sim_t *sim,
                   const lcpd_connections_t *connections, const lcpd_http_options_t *options,
                   lcpd_error_t *error) {
  (void)loop, (void)sim, (void)connections, (void)options;
  *out = NULL;
  return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                   "--http: this lcpsimd was built without libwebsockets (LCP_HTTP=OFF; install "
                   "libwebsockets-dev and libwebsockets-evlib-uv and rebuild)");
}
const char *lcpd_http_url(const lcpd_http_t *http) {
  (void)http;
  return "";
}
lcpd_metrics_t *lcpd_http_metrics(lcpd_http_t *http) {
  (void)http;
  return NULL;
}
void lcpd_http_close_handles(lcpd_http_t *http) { (void)http; }
void lcpd_http_free(lcpd_http_t *http) { (void)http; }

#else

#include <libwebsockets.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>

#define FRAME_PERIOD_MS (1000 / LCPD_HTTP_MAX_HZ)
#define SAMPLE_PERIOD_MS 1000
/* A control message is tens of bytes; text beyond this is not one. */
#define CONTROL_MAX 256
/* What a State or a scene may occupy while it is built. */
#define FRAME_BUILD_LIMIT ((size_t)256 << 20)

/* A packed RecordEntry, shared by the viewers it is sent to. */
typedef struct frame {
  int references;
  uint64_t scene_revision;
  size_t length;
  unsigned char bytes[]; /* LWS_PRE bytes for libwebsockets, then the message */
} frame_t;

typedef struct viewer viewer_t;
struct viewer {
  struct lws *wsi;
  viewer_t *next;
  uint64_t period_ns, next_due_ns;
  bool contacts;
  bool header_sent, scene_sent;
  uint64_t scene_revision; /* of the scene sent */
  uint64_t last_step;      /* of the last State given */
  uint64_t last_change;    /* the sim's change_count at the last State given */
  bool state_given;
  frame_t *pending; /* the latest State not yet written */
  size_t received;  /* bytes of the message being received */
  char control[CONTROL_MAX];
  bool binary;
  /* Replay: this viewer's playback (allocated: its timer outlives the
   * connection's memory until the loop closes it), the scene to write
   * before the pending State, and the recorded scenes (their entries'
   * bytes) queued and last written. */
  lcpd_player_t *player;
  frame_t *scene_pending;
  const unsigned char *scene_pending_entry, *scene_written_entry;
  bool start_paused; /* ?paused=1 */
  bool failed;       /* a scene could not be queued: the connection closes */
};

typedef struct http_reply {
  unsigned char *buffer; /* LWS_PRE + body */
  size_t length;
  bool close_after;
  bool head; /* a HEAD request: the headers only */
} http_reply_t;

/* One per connection (libwebsockets allocates it zeroed): an HTTP request
 * or a viewer. */
typedef struct session {
  bool is_viewer;
  http_reply_t reply;
  viewer_t viewer;
} session_t;

struct lcpd_http {
  struct lws_context *context;
  uv_loop_t *loop;
  lcpd_sim_t *sim;
  const lcpd_connections_t *connections;
  char url[128];
  char viewer_dir[PATH_MAX]; /* "" when none was found */
  uv_timer_t frame_timer, sample_timer;
  bool timers_open, frame_timer_running;
  viewer_t *viewers;
  int viewer_count;
  uint64_t stream_sequence;
  frame_t *scene_frame; /* of scene_frame->scene_revision */
  lcpd_arena_t arena;
  lcpd_error_t arena_error;
  lcpd_metrics_t metrics;
  double start_time_s;
  /* Replay: the recording the viewers play (NULL: live), the speed they
   * start at, and its header marked as a replay's. */
  const lcpd_recording_t *replay;
  double replay_speed;
  frame_t *replay_header;
  struct lws_protocols protocols[2];
};

static void frame_release(frame_t *frame) {
  if (frame && --frame->references == 0)
    free(frame);
}

/* The RecordEntry packed into a new frame (NULL when out of memory). */
static frame_t *frame_pack(const Lcpsim__V1__RecordEntry *entry, uint64_t scene_revision) {
  size_t length = lcpsim__v1__record_entry__get_packed_size(entry);
  frame_t *frame = malloc(sizeof *frame + LWS_PRE + length);
  if (!frame)
    return NULL;
  frame->references = 1;
  frame->scene_revision = scene_revision;
  frame->length = length;
  lcpsim__v1__record_entry__pack(entry, frame->bytes + LWS_PRE);
  return frame;
}

static frame_t *header_frame(lcpd_http_t *http) {
  char started[LCPD_UTC_TEXT];
  Lcpsim__V1__RecordHeader header;
  lcpd_record_header_init(&header, http->sim, started);
  Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
  entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_HEADER;
  entry.header = &header;
  return frame_pack(&entry, 0);
}

/* The scene of the current revision, built once per revision. */
static frame_t *current_scene(lcpd_http_t *http) {
  uint64_t revision = lcpd_sim_scene_revision(http->sim);
  if (http->scene_frame && http->scene_frame->scene_revision == revision)
    return http->scene_frame;
  frame_release(http->scene_frame);
  http->scene_frame = NULL;
  lcpd_error_t error = {0};
  Lcpsim__V1__GetSceneReply *scene = lcpd_new_scene_reply(&http->arena, http->sim, &error);
  if (scene) {
    Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
    entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_SCENE;
    entry.scene = scene;
    http->scene_frame = frame_pack(&entry, revision);
  } else {
    LCPD_ERROR("viewer stream: no scene: %s",
               error.message[0] ? error.message : http->arena_error.message);
  }
  lcpd_arena_reset(&http->arena);
  return http->scene_frame;
}

static frame_t *state_frame(lcpd_http_t *http, bool contacts) {
  uint64_t revision = lcpd_sim_scene_revision(http->sim);
  Lcpsim__V1__State *state =
      lcpd_new_state(&http->arena, http->sim, contacts, ++http->stream_sequence);
  frame_t *frame = NULL;
  if (state) {
    state->scene_revision = revision;
    Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
    entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_STATE;
    entry.state = state;
    frame = frame_pack(&entry, revision);
  } else {
    LCPD_ERROR("viewer stream: no state: %s", http->arena_error.message);
  }
  lcpd_arena_reset(&http->arena);
  return frame;
}

/* ---- a replay ---- */

static int write_frame(struct lws *wsi, frame_t *frame);

/* Recorded RecordEntry bytes, copied into a frame (the mapped file has no
 * room for libwebsockets' LWS_PRE bytes before them). */
static frame_t *frame_copy(const unsigned char *bytes, size_t length) {
  frame_t *frame = malloc(sizeof *frame + LWS_PRE + length);
  if (!frame)
    return NULL;
  *frame = (frame_t){.references = 1, .length = length};
  memcpy(frame->bytes + LWS_PRE, bytes, length);
  return frame;
}

/* The recorded header, marked as a replay's, with the timeline's length. */
static frame_t *replay_header_frame(const lcpd_recording_t *recording) {
  const lcpd_record_entry_t *first = &recording->entries[0];
  Lcpsim__V1__RecordHeader *header =
      lcpsim__v1__record_header__unpack(NULL, first->message_size, first->message);
  if (!header)
    return NULL;
  header->replay = true;
  header->duration = lcpd_recording_end_time(recording) - lcpd_recording_start_time(recording);
  Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
  entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_HEADER;
  entry.header = header;
  frame_t *frame = frame_pack(&entry, 0);
  lcpsim__v1__record_header__free_unpacked(header, NULL);
  return frame;
}

static void drop_pending(lcpd_http_t *http, viewer_t *v) {
  if (!v->pending)
    return;
  http->metrics.viewer_frames_dropped++;
  frame_release(v->pending);
  v->pending = NULL;
}

/* A viewer's player's sink. A scene is queued whole (never dropped) unless
 * it is the one the viewer has; the State before it, not yet written, is
 * dropped: it is of the scene before, or a seek replaces it. A State
 * replaces the one not yet written, as in the live stream. */
static void replay_emit(void *user, const lcpd_record_entry_t *entry) {
  viewer_t *v = user;
  lcpd_http_t *http = lws_context_user(lws_get_context(v->wsi));
  if (entry->kind == LCPSIM__V1__RECORD_ENTRY__ENTRY_SCENE) {
    drop_pending(http, v);
    frame_release(v->scene_pending);
    v->scene_pending = NULL;
    v->scene_pending_entry = NULL;
    if (entry->bytes != v->scene_written_entry) {
      v->scene_pending = frame_copy(entry->bytes, entry->size);
      v->scene_pending_entry = entry->bytes;
      v->failed |= !v->scene_pending;
    }
  } else if (entry->kind == LCPSIM__V1__RECORD_ENTRY__ENTRY_STATE) {
    frame_t *frame = frame_copy(entry->bytes, entry->size);
    if (!frame)
      return; /* out of memory: as a State dropped */
    drop_pending(http, v);
    v->pending = frame;
  }
  lws_callback_on_writable(v->wsi);
}

/* The header first, then the scene queued, then the State: one message per
 * call, as libwebsockets writes. */
static int replay_writeable(lcpd_http_t *http, viewer_t *v) {
  if (v->failed) {
    LCPD_ERROR("viewer: out of memory for a scene of the replay; closing its connection");
    return -1;
  }
  int rc = 0;
  if (!v->header_sent) {
    v->header_sent = true;
    rc = write_frame(v->wsi, http->replay_header);
  } else if (v->scene_pending) {
    frame_t *scene = v->scene_pending;
    v->scene_pending = NULL;
    v->scene_written_entry = v->scene_pending_entry;
    rc = write_frame(v->wsi, scene);
    frame_release(scene);
  } else if (v->pending) {
    frame_t *state = v->pending;
    v->pending = NULL;
    rc = write_frame(v->wsi, state);
    frame_release(state);
    if (rc == 0)
      http->metrics.viewer_frames_sent++;
  }
  if (rc == 0 && (v->scene_pending || v->pending))
    lws_callback_on_writable(v->wsi);
  return rc;
}

static void free_player(lcpd_player_t *player) { free(player); }

static void replay_stop(viewer_t *v) {
  if (v->player)
    lcpd_player_close(v->player, free_player);
  v->player = NULL;
}

/* The viewer's own playback: from the start at the replay's speed, or
 * paused at the first State (?paused=1), which is sent either way. Its
 * player ticks at the viewer's rate and gives it the last State due. */
static int replay_start(lcpd_http_t *http, viewer_t *v) {
  lcpd_player_t *player = malloc(sizeof *player);
  lcpd_error_t error = {0};
  if (!player || lcpd_player_init(player, http->loop, http->replay, &error) != LCP_OK) {
    free(player);
    LCPD_ERROR("viewer: cannot start its replay: %s",
               error.message[0] ? error.message : "out of memory");
    return -1;
  }
  player->latest_only = true;
  player->tick_ms = v->period_ns / 1000000u;
  lcpd_player_set_sink(player, replay_emit, NULL, v);
  lcpd_player_set_speed(player, http->replay_speed);
  v->player = player;
  lcpd_player_seek(player, lcpd_recording_start_time(http->replay));
  if (!v->start_paused)
    lcpd_player_play(player);
  return 0;
}

/* A control message of a viewer of a replay. A value out of range (a
 * speed <= 0 or infinite, an infinite time) makes the command ignored. */
static void replay_control(lcpd_http_t *http, viewer_t *v, const lcpd_http_control_t *c) {
  lcpd_player_t *player = v->player;
  if (!player)
    return; /* closing */
  if (c->has_speed && lcpd_player_set_speed(player, c->speed) != LCP_OK) {
    LCPD_WARN("viewer: speed %g ignored (a speed is a finite number > 0)", c->speed);
    return;
  }
  switch (c->command) {
  case LCPD_HTTP_PLAY:
    /* Play at the end starts over, as a media player does. */
    if (lcpd_player_at_end(player))
      lcpd_player_seek(player, lcpd_recording_start_time(http->replay));
    lcpd_player_play(player);
    break;
  case LCPD_HTTP_PAUSE:
    lcpd_player_pause(player);
    break;
  case LCPD_HTTP_SEEK:
    if (!isfinite(c->time))
      LCPD_WARN("viewer: seek to %g ignored (not a finite time)", c->time);
    else
      lcpd_player_seek(player, c->time);
    break;
  case LCPD_HTTP_SPEED:
    break; /* set above */
  case LCPD_HTTP_CONTACTS:
    LCPD_DEBUG("viewer: contacts in a replay are the recording's");
    break;
  }
}

/* ---- the stream's timer ---- */

static void on_frame_timer(uv_timer_t *timer) {
  lcpd_http_t *http = timer->data;
  uint64_t now = uv_hrtime();
  uint64_t step = lcp_world_step_count(http->sim->live.world);
  uint64_t change = http->sim->change_count;
  frame_t *built[2] = {NULL, NULL}; /* without, with contacts */
  for (viewer_t *v = http->viewers; v; v = v->next) {
    if (!v->scene_sent || now < v->next_due_ns ||
        (v->state_given && v->last_step == step && v->last_change == change))
      continue;
    frame_t **frame = &built[v->contacts];
    if (!*frame)
      *frame = state_frame(http, v->contacts);
    if (!*frame)
      continue;
    if (v->pending) {
      http->metrics.viewer_frames_dropped++;
      frame_release(v->pending);
    }
    (*frame)->references++;
    v->pending = *frame;
    v->last_step = step;
    v->last_change = change;
    v->state_given = true;
    /* Due again one period after this one was due, or from now when late. */
    v->next_due_ns += v->period_ns;
    if (v->next_due_ns < now)
      v->next_due_ns = now;
    lws_callback_on_writable(v->wsi);
  }
  frame_release(built[0]);
  frame_release(built[1]);
}

static void on_sample_timer(uv_timer_t *timer) {
  lcpd_http_t *http = timer->data;
  /* A replay steps nothing: its rate stays 0. */
  lcpd_metrics_sample(&http->metrics, http->sim ? lcpd_sim_timestep(http->sim) : 0.0, uv_hrtime());
}

/* The live stream's timer runs while viewers watch; a replay's viewers
 * have their own players. */
static void viewers_changed(lcpd_http_t *http) {
  if (!http->timers_open || !http->sim)
    return;
  if (http->viewer_count > 0 && !http->frame_timer_running) {
    uv_timer_start(&http->frame_timer, on_frame_timer, FRAME_PERIOD_MS, FRAME_PERIOD_MS);
    http->frame_timer_running = true;
  } else if (http->viewer_count == 0 && http->frame_timer_running) {
    uv_timer_stop(&http->frame_timer);
    http->frame_timer_running = false;
  }
}

/* ---- a viewer ---- */

static int write_frame(struct lws *wsi, frame_t *frame) {
  int written = lws_write(wsi, frame->bytes + LWS_PRE, frame->length, LWS_WRITE_BINARY);
  return written < 0 ? -1 : 0;
}

static int viewer_writeable(lcpd_http_t *http, viewer_t *v) {
  if (!v->header_sent) {
    frame_t *header = header_frame(http);
    if (!header)
      return -1;
    int rc = write_frame(v->wsi, header);
    frame_release(header);
    v->header_sent = true;
    lws_callback_on_writable(v->wsi);
    return rc;
  }
  uint64_t revision = lcpd_sim_scene_revision(http->sim);
  if (!v->scene_sent || v->scene_revision != revision) {
    frame_t *scene = current_scene(http);
    if (!scene)
      return -1;
    if (v->pending && v->pending->scene_revision != revision) {
      /* Of the scene before: the next State follows the new scene. */
      http->metrics.viewer_frames_dropped++;
      frame_release(v->pending);
      v->pending = NULL;
      v->state_given = false;
    }
    v->scene_sent = true;
    v->scene_revision = revision;
    if (!v->state_given)
      v->next_due_ns = uv_hrtime();
    lws_callback_on_writable(v->wsi);
    return write_frame(v->wsi, scene);
  }
  if (!v->pending)
    return 0;
  frame_t *frame = v->pending;
  v->pending = NULL;
  int rc = write_frame(v->wsi, frame);
  frame_release(frame);
  if (rc == 0)
    http->metrics.viewer_frames_sent++;
  return rc;
}

/* A ?name=1 or ?name=true query argument. */
static bool query_flag(struct lws *wsi, const char *name) {
  char buffer[64];
  const char *value = lws_get_urlarg_by_name(wsi, name, buffer, sizeof buffer);
  return value && (strcmp(value, "1") == 0 || strcmp(value, "true") == 0);
}

static void viewer_options(struct lws *wsi, viewer_t *v) {
  char buffer[64];
  int hz = LCPD_HTTP_MAX_HZ;
  /* lws_get_urlarg_by_name copies "name=value" into the buffer and returns
   * where the value starts in it. */
  const char *value = lws_get_urlarg_by_name(wsi, "hz=", buffer, sizeof buffer);
  if (value) {
    int asked = atoi(value);
    if (asked >= 1 && asked < hz)
      hz = asked;
  }
  v->period_ns = 1000000000u / (uint64_t)hz;
  v->contacts = query_flag(wsi, "contacts=");
  v->start_paused = query_flag(wsi, "paused=");
}

static int close_with(struct lws *wsi, enum lws_close_status status, const char *why) {
  lws_close_reason(wsi, status, (unsigned char *)why, strlen(why));
  return -1;
}

static int viewer_receive(lcpd_http_t *http, struct lws *wsi, viewer_t *v, const void *data,
                          size_t length) {
  if (lws_is_first_fragment(wsi) && v->received == 0)
    v->binary = lws_frame_is_binary(wsi);
  if (v->received + length > LCPD_HTTP_MAX_VIEWER_MESSAGE)
    return close_with(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message larger than 64 KiB");
  if (v->received + length < CONTROL_MAX)
    memcpy(v->control + v->received, data, length);
  v->received += length;
  if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) > 0)
    return 0;
  size_t total = v->received;
  v->received = 0;
  if (v->binary)
    return close_with(wsi, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, "binary messages not accepted");
  lcpd_http_control_t control;
  if (total >= CONTROL_MAX || !lcpd_http_parse_control(v->control, total, &control))
    return close_with(wsi, LWS_CLOSE_STATUS_INVALID_PAYLOAD, "not a control message");
  if (http->replay)
    replay_control(http, v, &control);
  else if (control.command == LCPD_HTTP_CONTACTS)
    v->contacts = control.on;
  else
    LCPD_DEBUG("viewer: play, pause, seek and speed are for a replay; the stream is live");
  return 0;
}

/* ---- HTTP ---- */

static const struct {
  const char *extension, *type;
} CONTENT_TYPES[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".ico", "image/x-icon"},
    {".wasm", "application/wasm"},
    {".txt", "text/plain; charset=utf-8"},
    {".glb", "model/gltf-binary"},
    {".gltf", "model/gltf+json"},
};

static const char *content_type(const char *path) {
  const char *dot = strrchr(path, '.');
  if (dot && !strchr(dot, '/'))
    for (size_t i = 0; i < sizeof CONTENT_TYPES / sizeof CONTENT_TYPES[0]; ++i)
      if (strcmp(dot, CONTENT_TYPES[i].extension) == 0)
        return CONTENT_TYPES[i].type;
  return "application/octet-stream";
}

/* Sends the headers now and body (taken over, malloc'ed or NULL) when
 * writable. */
static int reply(struct lws *wsi, session_t *s, unsigned status, const char *type, char *body,
                 size_t length, bool close_after) {
  unsigned char headers[LWS_PRE + 1024];
  unsigned char *start = headers + LWS_PRE, *p = start, *end = headers + sizeof headers - 1;
  s->reply.buffer = malloc(LWS_PRE + length + 1);
  if (!s->reply.buffer) {
    free(body);
    return -1;
  }
  memcpy(s->reply.buffer + LWS_PRE, body, length);
  free(body);
  s->reply.length = length;
  s->reply.close_after = close_after;
  if (lws_add_http_common_headers(wsi, status, type, length, &p, end) ||
      lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                  (const unsigned char *)"no-store", 8, &p, end) ||
      (status == HTTP_STATUS_METHOD_NOT_ALLOWED &&
       lws_add_http_header_by_name(
           wsi, (const unsigned char *)"allow:", (const unsigned char *)"GET", 3, &p, end)) ||
      lws_finalize_write_http_header(wsi, start, &p, end))
    return -1;
  lws_callback_on_writable(wsi);
  return 0;
}

static int reply_text(struct lws *wsi, session_t *s, unsigned status, const char *text,
                      bool close_after) {
  size_t length = strlen(text);
  char *body = malloc(length + 1);
  if (!body)
    return -1;
  memcpy(body, text, length + 1);
  return reply(wsi, s, status, "text/plain; charset=utf-8", body, length, close_after);
}

static int serve_metrics(lcpd_http_t *http, struct lws *wsi, session_t *s) {
  lcpd_metrics_gauges_t gauges = {
      .clients = http->connections ? (int64_t)http->connections->count : 0,
      .stream_subscribers = http->viewer_count,
      .process_start_s = http->start_time_s,
  };
  lcpd_metrics_process_memory(&gauges.resident_bytes, &gauges.virtual_bytes);
  size_t length = 0;
  char *text = lcpd_metrics_render(&http->metrics, &gauges, &length);
  if (!text)
    return reply_text(wsi, s, HTTP_STATUS_INTERNAL_SERVER_ERROR, "out of memory\n", false);
  return reply(wsi, s, HTTP_STATUS_OK, "text/plain; version=0.0.4; charset=utf-8", text, length,
               false);
}

/* A file below the viewer directory: no ".." component, no hidden files,
 * a regular file whose real path is still below the directory. */
static int serve_file(lcpd_http_t *http, struct lws *wsi, session_t *s, const char *uri) {
  if (http->viewer_dir[0] == '\0')
    return reply_text(wsi, s, HTTP_STATUS_NOT_FOUND,
                      "no viewer files: this lcpsimd found no share/lcpsim/viewer (pass "
                      "--viewer-dir DIR)\n",
                      false);
  const char *relative = strcmp(uri, "/") == 0 ? "/index.html" : uri;
  if (strstr(relative, "/.") || strchr(relative, '\\'))
    return reply_text(wsi, s, HTTP_STATUS_NOT_FOUND, "not found\n", false);
  char path[PATH_MAX + 512], real[PATH_MAX];
  int n = snprintf(path, sizeof path, "%s%s", http->viewer_dir, relative);
  struct stat info;
  size_t dir_length = strlen(http->viewer_dir);
  if (n < 0 || (size_t)n >= sizeof path || stat(path, &info) != 0 || !S_ISREG(info.st_mode) ||
      !realpath(path, real) || strncmp(real, http->viewer_dir, dir_length) != 0 ||
      real[dir_length] != '/')
    return reply_text(wsi, s, HTTP_STATUS_NOT_FOUND, "not found\n", false);
  int rc = lws_serve_http_file(wsi, real, content_type(real), NULL, 0);
  if (rc < 0 || (rc > 0 && lws_http_transaction_completed(wsi)))
    return -1;
  return 0;
}

static int serve_http(lcpd_http_t *http, struct lws *wsi, session_t *s) {
  char uri[1024];
  /* GET, or HEAD: the same reply without its body (health probes use HEAD). */
  s->reply.head = lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0;
  enum lws_token_indexes method = s->reply.head ? WSI_TOKEN_HEAD_URI : WSI_TOKEN_GET_URI;
  if (lws_hdr_total_length(wsi, method) <= 0) {
    /* Any other method: refused, and the connection closed (a request
     * body is not read). */
    return reply_text(wsi, s, HTTP_STATUS_METHOD_NOT_ALLOWED, "method not allowed\n", true);
  }
  if (lws_hdr_copy(wsi, uri, sizeof uri, method) < 0)
    return reply_text(wsi, s, HTTP_STATUS_NOT_FOUND, "not found\n", false);
  if (strcmp(uri, "/healthz") == 0)
    return reply_text(wsi, s, HTTP_STATUS_OK, "ok\n", false);
  if (strcmp(uri, "/metrics") == 0)
    return serve_metrics(http, wsi, s);
  if (strcmp(uri, "/ws") == 0)
    return reply_text(wsi, s, HTTP_STATUS_BAD_REQUEST, "/ws is a WebSocket\n", false);
  return serve_file(http, wsi, s, uri);
}

static int http_writeable(struct lws *wsi, session_t *s) {
  if (!s->reply.buffer)
    return 0;
  int written = s->reply.head ? 0
                              : lws_write(wsi, s->reply.buffer + LWS_PRE, s->reply.length,
                                          LWS_WRITE_HTTP_FINAL);
  free(s->reply.buffer);
  s->reply.buffer = NULL;
  if (written < 0 || s->reply.close_after)
    return -1;
  return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int on_lws(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                  size_t length) {
  lcpd_http_t *http = lws_context_user(lws_get_context(wsi));
  session_t *s = user;
  switch (reason) {
  case LWS_CALLBACK_HTTP:
    return serve_http(http, wsi, s);
  case LWS_CALLBACK_HTTP_WRITEABLE:
    return http_writeable(wsi, s);
  case LWS_CALLBACK_HTTP_FILE_COMPLETION:
    return lws_http_transaction_completed(wsi) ? -1 : 0;
  case LWS_CALLBACK_CLOSED_HTTP:
    if (s) {
      free(s->reply.buffer);
      s->reply.buffer = NULL;
    }
    return 0;
  case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
    char uri[64];
    if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) < 0 || strcmp(uri, "/ws") != 0)
      return 1; /* a WebSocket only on /ws */
    return 0;
  }
  case LWS_CALLBACK_ESTABLISHED: {
    viewer_t *v = &s->viewer;
    s->is_viewer = true;
    *v = (viewer_t){.wsi = wsi, .next = http->viewers};
    viewer_options(wsi, v);
    v->next_due_ns = uv_hrtime();
    if (http->replay && replay_start(http, v) != 0) {
      s->is_viewer = false;
      return -1;
    }
    http->viewers = v;
    http->viewer_count++;
    viewers_changed(http);
    lws_callback_on_writable(wsi);
    LCPD_DEBUG("viewer connected (%d now)", http->viewer_count);
    return 0;
  }
  case LWS_CALLBACK_SERVER_WRITEABLE:
    if (!s || !s->is_viewer)
      return 0;
    return http->replay ? replay_writeable(http, &s->viewer) : viewer_writeable(http, &s->viewer);
  case LWS_CALLBACK_RECEIVE:
    return s && s->is_viewer ? viewer_receive(http, wsi, &s->viewer, in, length) : -1;
  case LWS_CALLBACK_CLOSED:
    if (s && s->is_viewer) {
      for (viewer_t **link = &http->viewers; *link; link = &(*link)->next) {
        if (*link == &s->viewer) {
          *link = s->viewer.next;
          break;
        }
      }
      replay_stop(&s->viewer);
      frame_release(s->viewer.pending);
      frame_release(s->viewer.scene_pending);
      s->viewer.pending = s->viewer.scene_pending = NULL;
      s->is_viewer = false;
      http->viewer_count--;
      viewers_changed(http);
      LCPD_DEBUG("viewer gone (%d now)", http->viewer_count);
    }
    return 0;
  default:
    return 0;
  }
}

static void lws_log(int level, const char *line) {
  size_t length = strlen(line);
  while (length && line[length - 1] == '\n')
    length--;
  if (level & LLL_ERR)
    LCPD_ERROR("http: %.*s", (int)length, line);
  else if (level & LLL_WARN)
    LCPD_WARN("http: %.*s", (int)length, line);
  else
    LCPD_DEBUG("http: %.*s", (int)length, line);
}

/* The viewer's files: --viewer-dir, else the shipped robots' sibling
 * directory (share/lcpsim/viewer next to share/lcpsim/robots, found the
 * same way: the install the program belongs to, or its build tree). */
static void find_viewer_dir(lcpd_http_t *http, const char *given) {
  char robots[PATH_MAX], candidate[PATH_MAX + 16], error[512];
  const char *dir = given;
  if (!dir) {
    if (lcp_shipped_robots_dir(robots, sizeof robots, error, sizeof error) != LCP_OK)
      return;
    char *slash = strrchr(robots, '/');
    if (!slash)
      return;
    *slash = '\0';
    snprintf(candidate, sizeof candidate, "%s/viewer", robots);
    dir = candidate;
  }
  struct stat info;
  if (stat(dir, &info) != 0 || !S_ISDIR(info.st_mode) || !realpath(dir, http->viewer_dir)) {
    http->viewer_dir[0] = '\0';
    if (given)
      LCPD_WARN("--viewer-dir %s is not a directory: the page is not served", given);
    else
      LCPD_WARN("no viewer files found (%s): the page is not served; --viewer-dir DIR names them",
                dir);
  }
}

int lcpd_http_open(lcpd_http_t **out, uv_loop_t *loop, lcpd_sim_t *sim,
                   const lcpd_connections_t *connections, const lcpd_http_options_t *options,
                   lcpd_error_t *error) {
  *out = NULL;
  char host[256];
  int port = 0;
  if (!lcpd_http_split_address(options->address, host, sizeof host, &port))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "--http %s: expected HOST:PORT (127.0.0.1:8080; port 0 picks one)",
                     options->address);
  lcpd_http_t *http = calloc(1, sizeof *http);
  if (!http)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory");
  http->loop = loop;
  http->sim = sim;
  http->replay = options->replay;
  http->replay_speed = options->replay_speed > 0 ? options->replay_speed : 1.0;
  if (http->replay && !(http->replay_header = replay_header_frame(http->replay))) {
    free(http);
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for the replay's header");
  }
  http->connections = connections;
  http->start_time_s = (double)time(NULL);
  lcpd_arena_init(&http->arena, FRAME_BUILD_LIMIT, &http->arena_error);
  lcpd_metrics_init(&http->metrics, uv_hrtime());
  find_viewer_dir(http, options->viewer_dir);
  http->protocols[0] = (struct lws_protocols){
      .name = "lcpsim",
      .callback = on_lws,
      .per_session_data_size = sizeof(session_t),
      .rx_buffer_size = 4096,
  };
  lws_set_log_level(LLL_ERR | LLL_WARN, lws_log);
  void *foreign_loops[1] = {loop};
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = port;
  bool any = strcmp(host, "0.0.0.0") == 0 || strcmp(host, "*") == 0;
  bool ipv6 = strchr(host, ':') != NULL;
  info.iface = any ? NULL : strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
  info.protocols = http->protocols;
  info.user = http;
  info.foreign_loops = foreign_loops;
  info.pcontext = &http->context;
  info.options = LWS_SERVER_OPTION_LIBUV | LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN |
                 LWS_SERVER_OPTION_VALIDATE_UTF8 | (ipv6 ? 0 : LWS_SERVER_OPTION_DISABLE_IPV6);
  /* A connection that sends nothing goes after 10 s; slow browsers and
   * keep-alive HTTP connections close after the same idle time. */
  info.timeout_secs = 10;
  info.keepalive_timeout = 10;
  http->context = lws_create_context(&info);
  if (!http->context) {
    lcpd_arena_destroy(&http->arena);
    frame_release(http->replay_header);
    free(http);
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "--http %s: cannot serve HTTP there (address in use or not this machine's, "
                     "or libwebsockets without its libuv event library: install "
                     "libwebsockets-evlib-uv)",
                     options->address);
  }
  struct lws_vhost *vhost = lws_get_vhost_by_name(http->context, "default");
  int bound = vhost ? lws_get_vhost_listen_port(vhost) : port;
  snprintf(http->url, sizeof http->url, ipv6 ? "http://[%s]:%d" : "http://%s:%d",
           any ? "0.0.0.0" : info.iface, bound);
  uv_timer_init(loop, &http->frame_timer);
  uv_timer_init(loop, &http->sample_timer);
  http->frame_timer.data = http->sample_timer.data = http;
  http->timers_open = true;
  uv_timer_start(&http->sample_timer, on_sample_timer, SAMPLE_PERIOD_MS, SAMPLE_PERIOD_MS);
  if (sim) {
    sim->step_observer = lcpd_metrics_step;
    sim->step_observer_user = &http->metrics;
  }
  *out = http;
  return LCP_OK;
}

const char *lcpd_http_url(const lcpd_http_t *http) { return http->url; }

lcpd_metrics_t *lcpd_http_metrics(lcpd_http_t *http) { return &http->metrics; }

void lcpd_http_close_handles(lcpd_http_t *http) {
  if (!http)
    return;
  if (http->timers_open) {
    uv_close((uv_handle_t *)&http->frame_timer, NULL);
    uv_close((uv_handle_t *)&http->sample_timer, NULL);
    http->timers_open = false;
  }
  /* The replay's viewers' players first: their timers are on the loop. */
  for (viewer_t *v = http->viewers; v; v = v->next)
    replay_stop(v);
  /* On a foreign loop this starts closing libwebsockets' handles; the loop
   * runs their close callbacks, and the context is freed with the last. */
  if (http->context)
    lws_context_destroy(http->context);
}

void lcpd_http_free(lcpd_http_t *http) {
  if (!http)
    return;
  if (http->context)
    lws_context_destroy(http->context);
  if (http->sim && http->sim->step_observer_user == &http->metrics) {
    http->sim->step_observer = NULL;
    http->sim->step_observer_user = NULL;
  }
  frame_release(http->scene_frame);
  frame_release(http->replay_header);
  lcpd_arena_destroy(&http->arena);
  free(http);
}

#endif
