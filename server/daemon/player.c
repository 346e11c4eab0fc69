/* SPDX-License-Identifier: Apache-2.0 */
#include "player.h"

#include "recording.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ---- */

/* A protobuf varint at *p (below end); false when cut short or longer
 * than 10 bytes. */
static bool read_varint(const unsigned char **p, const unsigned char *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    unsigned char byte = *(*p)++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

static int fail_at(lcpd_error_t *error, const char *path, size_t index, const char *why) {
  return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: entry %zu: %s", path, index, why);
}

static bool grow(void **array, size_t *capacity, size_t need, size_t element) {
  if (need <= *capacity)
    return true;
  size_t wanted = *capacity ? 2 * *capacity : 256;
  void *grown = realloc(*array, wanted * element);
  if (!grown)
    return false;
  *array = grown;
  *capacity = wanted;
  return true;
}

/* Checks one entry (decoded whole by protobuf-c) and indexes it. */
static int index_entry(lcpd_recording_t *r, const char *path, lcpd_record_entry_t *e,
                       size_t *state_capacity, size_t *last_scene, double *timeline,
                       double *last_time, lcpd_error_t *error) {
  size_t index = r->entry_count;
  Lcpsim__V1__RecordEntry *m = lcpsim__v1__record_entry__unpack(NULL, e->size, e->bytes);
  if (!m)
    return fail_at(error, path, index, "not an lcpsim.v1 RecordEntry");
  /* The message inside: the oneof's one field, tag and length first. */
  const unsigned char *p = e->bytes, *end = e->bytes + e->size;
  uint64_t tag = 0, length = 0;
  bool framed = read_varint(&p, end, &tag) && (tag & 7) == 2 && read_varint(&p, end, &length) &&
                length <= (uint64_t)(end - p);
  e->kind = m->entry_case;
  e->message = p;
  e->message_size = framed ? (size_t)length : 0;
  int rc = LCP_OK;
  if (!framed || (tag >> 3) != (uint64_t)m->entry_case)
    rc = fail_at(error, path, index, "a RecordEntry holds one header, scene or state");
  else if (index == 0 && (m->entry_case != LCPSIM__V1__RECORD_ENTRY__ENTRY_HEADER ||
                          strcmp(m->header->magic, LCPD_RECORD_MAGIC) != 0))
    rc = fail_at(error, path, index, "not an lcpsim recording (no RecordHeader first)");
  else if (index == 0 && m->header->format_version != LCPD_RECORD_FORMAT_VERSION)
    rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                   "%s: recording format %u; this daemon reads format %u", path,
                   m->header->format_version, LCPD_RECORD_FORMAT_VERSION);
  else if (index > 0 && m->entry_case == LCPSIM__V1__RECORD_ENTRY__ENTRY_HEADER)
    rc = fail_at(error, path, index, "a second RecordHeader");
  else if (m->entry_case == LCPSIM__V1__RECORD_ENTRY__ENTRY_STATE && *last_scene == SIZE_MAX)
    rc = fail_at(error, path, index, "a State before any scene");
  if (rc == LCP_OK) {
    if (index == 0) {
      r->format_version = m->header->format_version;
      r->timestep = m->header->timestep;
    } else if (m->entry_case == LCPSIM__V1__RECORD_ENTRY__ENTRY_SCENE) {
      *last_scene = index;
      r->scene_count++;
    } else if (!grow((void **)&r->states, state_capacity, r->state_count + 1, sizeof *r->states)) {
      rc = lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for the recording's index");
    } else {
      double t = m->state->time;
      /* The timeline goes on where the recorded time jumped back. */
      *timeline = r->state_count == 0 ? t : *timeline + (t > *last_time ? t - *last_time : 0.0);
      *last_time = t;
      r->states[r->state_count++] = (lcpd_recording_state_t){.entry = index,
                                                             .scene = *last_scene,
                                                             .time = *timeline,
                                                             .step_count = m->state->step_count};
    }
  }
  lcpsim__v1__record_entry__free_unpacked(m, NULL);
  return rc;
}

int lcpd_recording_open(lcpd_recording_t *r, const char *path, lcpd_error_t *error) {
  *r = (lcpd_recording_t){0};
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0)
      close(fd);
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot open the recording %s", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s is empty", path);
  }
  void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot map the recording %s", path);
  r->data = map;
  r->size = (size_t)st.st_size;
  size_t entry_capacity = 0, state_capacity = 0, last_scene = SIZE_MAX;
  double timeline = 0.0, last_time = 0.0;
  const unsigned char *p = r->data, *end = r->data + r->size;
  int rc = LCP_OK;
  while (rc == LCP_OK && p < end) {
    uint64_t length;
    if (!read_varint(&p, end, &length) || length > (uint64_t)(end - p)) {
      r->truncated = true; /* the last entry was cut short */
      break;
    }
    if (!grow((void **)&r->entries, &entry_capacity, r->entry_count + 1, sizeof *r->entries)) {
      rc = lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for the recording's index");
      break;
    }
    lcpd_record_entry_t *e = &r->entries[r->entry_count];
    *e = (lcpd_record_entry_t){.bytes = p, .size = (size_t)length};
    rc = index_entry(r, path, e, &state_capacity, &last_scene, &timeline, &last_time, error);
    if (rc == LCP_OK)
      r->entry_count++;
    p += length;
  }
  if (rc == LCP_OK && r->entry_count == 0)
    rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: not an lcpsim recording", path);
  if (rc != LCP_OK)
    lcpd_recording_close(r);
  return rc;
}

void lcpd_recording_close(lcpd_recording_t *r) {
  if (r->data)
    munmap(r->data, r->size);
  free(r->entries);
  free(r->states);
  *r = (lcpd_recording_t){0};
}

double lcpd_recording_start_time(const lcpd_recording_t *r) {
  return r->state_count ? r->states[0].time : 0.0;
}

double lcpd_recording_end_time(const lcpd_recording_t *r) {
  return r->state_count ? r->states[r->state_count - 1].time : 0.0;
}

size_t lcpd_recording_state_at(const lcpd_recording_t *r, double t) {
  /* The timeline never decreases: the first state later than t, less one. */
  size_t lo = 0, hi = r->state_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->states[mid].time <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? lo - 1 : 0;
}

/* ---- playing ---- */

static void emit_entry(lcpd_player_t *p, size_t index) {
  if (p->emit)
    p->emit(p->user, &p->recording->entries[index]);
}

/* The state at index i, preceded by its scene when another was emitted last. */
static void emit_state(lcpd_player_t *p, size_t i) {
  const lcpd_recording_state_t *s = &p->recording->states[i];
  if (p->scene_emitted != s->scene) {
    emit_entry(p, s->scene);
    p->scene_emitted = s->scene;
  }
  emit_entry(p, s->entry);
}

double lcpd_player_time(const lcpd_player_t *p) {
  if (!p->playing)
    return p->anchor_time;
  return p->anchor_time + p->speed * (double)(uv_hrtime() - p->anchor_wall_ns) * 1e-9;
}

bool lcpd_player_at_end(const lcpd_player_t *p) { return p->next >= p->recording->state_count; }

static void anchor(lcpd_player_t *p, double t) {
  p->anchor_time = t;
  p->anchor_wall_ns = uv_hrtime();
}

static void on_tick(uv_timer_t *timer) {
  lcpd_player_t *p = timer->data;
  double now = lcpd_player_time(p);
  const lcpd_recording_t *r = p->recording;
  size_t due = p->next;
  while (due < r->state_count && r->states[due].time <= now)
    due++;
  if (due > p->next) {
    size_t first = p->latest_only ? due - 1 : p->next;
    p->next = due;
    for (size_t i = first; i < due && p->playing; ++i)
      emit_state(p, i);
  }
  if (p->playing && p->next >= r->state_count) {
    lcpd_player_pause(p);
    anchor(p, lcpd_recording_end_time(r));
    if (p->on_end)
      p->on_end(p->user);
  }
}

int lcpd_player_init(lcpd_player_t *p, uv_loop_t *loop, const lcpd_recording_t *recording,
                     lcpd_error_t *error) {
  *p = (lcpd_player_t){.recording = recording,
                       .speed = 1.0,
                       .tick_ms = LCPD_PLAYER_TICK_MS,
                       .scene_emitted = SIZE_MAX};
  if (uv_timer_init(loop, &p->timer) != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot start the player's timer");
  p->timer.data = p;
  p->timer_open = true;
  anchor(p, lcpd_recording_start_time(recording));
  return LCP_OK;
}

void lcpd_player_set_sink(lcpd_player_t *p, lcpd_player_emit_fn emit, lcpd_player_end_fn on_end,
                          void *user) {
  p->emit = emit;
  p->on_end = on_end;
  p->user = user;
}

void lcpd_player_emit_header(lcpd_player_t *p) { emit_entry(p, 0); }

void lcpd_player_play(lcpd_player_t *p) {
  if (p->playing || !p->timer_open)
    return;
  anchor(p, p->anchor_time);
  p->playing = true;
  uint64_t tick = p->tick_ms ? p->tick_ms : LCPD_PLAYER_TICK_MS;
  uv_timer_start(&p->timer, on_tick, 0, tick);
}

void lcpd_player_pause(lcpd_player_t *p) {
  if (!p->playing)
    return;
  anchor(p, lcpd_player_time(p));
  p->playing = false;
  uv_timer_stop(&p->timer);
}

void lcpd_player_seek(lcpd_player_t *p, double t) {
  const lcpd_recording_t *r = p->recording;
  if (r->state_count == 0 || !isfinite(t))
    return;
  size_t i = lcpd_recording_state_at(r, t);
  double start = lcpd_recording_start_time(r), end = lcpd_recording_end_time(r);
  p->scene_emitted = SIZE_MAX; /* a seek always sends the scene in force */
  p->next = i + 1;
  anchor(p, t < start ? start : t > end ? end : t);
  emit_state(p, i);
}

int lcpd_player_set_speed(lcpd_player_t *p, double x) {
  if (!(isfinite(x) && x > 0.0))
    return LCP_ERR_INVALID_ARGUMENT;
  anchor(p, lcpd_player_time(p));
  p->speed = x;
  return LCP_OK;
}

static void on_timer_closed(uv_handle_t *handle) {
  lcpd_player_t *p = handle->data;
  if (p->on_closed)
    p->on_closed(p);
}

void lcpd_player_close(lcpd_player_t *p, lcpd_player_closed_fn on_closed) {
  p->playing = false;
  p->emit = NULL;
  p->on_end = NULL;
  if (p->timer_open) {
    uv_timer_stop(&p->timer);
    p->on_closed = on_closed;
    uv_close((uv_handle_t *)&p->timer, on_timer_closed);
    p->timer_open = false;
  } else if (on_closed) {
    on_closed(p);
  }
}
