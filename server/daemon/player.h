/* SPDX-License-Identifier: Apache-2.0 */
/* Replay of a recording (recording.h): the file is mapped and indexed once
 * (the offset of every entry, the time of every State, the scene in force
 * for each), then players on libuv timers, any number sharing that one
 * index, each hand the entries to its sink as the recording's time passes: play, pause, seek and
 * speed. The sink gets each RecordEntry's bytes as recorded (the viewer's WebSocket sends them as
 * they are) and the message inside it.
 *
 * Times are on the replay's timeline: the States' times, made to continue
 * rather than jump back where the recorded world was reset or restored
 * (each step adds its positive time difference). Without such jumps the
 * timeline is State.time. */
#ifndef LCPD_PLAYER_H
#define LCPD_PLAYER_H

#include "error.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef Lcpsim__V1__RecordEntry__EntryCase lcpd_entry_kind_t;

/* One entry of a recording, pointing into the mapped file. */
typedef struct lcpd_record_entry {
  lcpd_entry_kind_t kind;
  const unsigned char *bytes; /* the RecordEntry, serialized (no length prefix) */
  size_t size;
  const unsigned char *message; /* the RecordHeader, GetSceneReply or State inside it */
  size_t message_size;
} lcpd_record_entry_t;

typedef struct lcpd_recording_state {
  size_t entry; /* its index in entries */
  size_t scene; /* the index in entries of the scene in force */
  double time;  /* on the timeline */
  uint64_t step_count;
} lcpd_recording_state_t;

/* A recording, read and checked: every entry decodes as an lcpsim.v1
 * RecordEntry, the first is a RecordHeader of this format, a scene comes
 * before the first State. A last entry cut short (a daemon killed while
 * writing) is left out and said so in `truncated`. */
typedef struct lcpd_recording {
  unsigned char *data; /* mapped */
  size_t size;
  lcpd_record_entry_t *entries;
  size_t entry_count;
  lcpd_recording_state_t *states;
  size_t state_count;
  size_t scene_count;
  uint32_t format_version;
  double timestep;
  bool truncated;
} lcpd_recording_t;

int lcpd_recording_open(lcpd_recording_t *recording, const char *path, lcpd_error_t *error);
void lcpd_recording_close(lcpd_recording_t *recording);
/* The timeline's start and end (0 and 0 without states). */
double lcpd_recording_start_time(const lcpd_recording_t *recording);
double lcpd_recording_end_time(const lcpd_recording_t *recording);
/* The index in states of the last State at or before time t on the
 * timeline (the first State when t is before it); the recording has one. */
size_t lcpd_recording_state_at(const lcpd_recording_t *recording, double t);

typedef void (*lcpd_player_emit_fn)(void *user, const lcpd_record_entry_t *entry);
typedef void (*lcpd_player_end_fn)(void *user);
typedef struct lcpd_player lcpd_player_t;
typedef void (*lcpd_player_closed_fn)(lcpd_player_t *player);

/* One playback of a recording: its own position, speed and timer. Many
 * players may share one recording (each viewer of a replay has its own);
 * the recording outlives them. */
struct lcpd_player {
  const lcpd_recording_t *recording; /* not owned */
  uv_timer_t timer;
  bool timer_open;
  lcpd_player_emit_fn emit;
  lcpd_player_end_fn on_end;
  lcpd_player_closed_fn on_closed;
  void *user;
  bool playing;
  /* Each tick emits only the last State due (after its scene when that
   * changed): a sink showing States at the tick's rate, which would keep
   * only the last anyway. Otherwise every State due is emitted in order. */
  bool latest_only;
  uint64_t tick_ms;     /* how often a playing player looks at the clock */
  double speed;         /* timeline seconds per wall-clock second */
  size_t next;          /* the next state to emit, index into recording->states */
  size_t scene_emitted; /* entry index of the last scene emitted (SIZE_MAX: none) */
  double anchor_time;   /* the timeline's time at anchor_wall_ns */
  uint64_t anchor_wall_ns;
};

/* The tick's default: 60 Hz, a display's rate. */
#define LCPD_PLAYER_TICK_MS 16

/* A paused player of recording (opened, with at least its header) on loop,
 * at the first State. Emits nothing until play or seek. */
int lcpd_player_init(lcpd_player_t *player, uv_loop_t *loop, const lcpd_recording_t *recording,
                     lcpd_error_t *error);
/* The sink of every entry emitted, and what to call when playing reaches
 * the recording's end. */
void lcpd_player_set_sink(lcpd_player_t *player, lcpd_player_emit_fn emit,
                          lcpd_player_end_fn on_end, void *user);
/* Emits the header, as a sink that joins late wants it first. */
void lcpd_player_emit_header(lcpd_player_t *player);
/* Plays from where it is: every State whose time has come, each preceded by
 * its scene when the scene changes (latest_only: the last of them). */
void lcpd_player_play(lcpd_player_t *player);
void lcpd_player_pause(lcpd_player_t *player);
/* Emits the scene in force at t, then the State at or before t; playing
 * goes on from there if it was playing. */
void lcpd_player_seek(lcpd_player_t *player, double t);
/* x > 0 and finite (else LCP_ERR_INVALID_ARGUMENT): timeline seconds per
 * wall-clock second. */
int lcpd_player_set_speed(lcpd_player_t *player, double x);
/* The timeline's time the player is at. */
double lcpd_player_time(const lcpd_player_t *player);
/* Whether the last State has been emitted (playing it stopped there). */
bool lcpd_player_at_end(const lcpd_player_t *player);
/* Stops the timer and closes it on the loop's next run, which then calls
 * on_closed (may be NULL): the player's memory must last until then. The
 * recording is left alone. */
void lcpd_player_close(lcpd_player_t *player, lcpd_player_closed_fn on_closed);

#endif
