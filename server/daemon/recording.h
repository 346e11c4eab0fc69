/* SPDX-License-Identifier: Apache-2.0 */
/* Recordings: the world description and the state stream written to a file
 * as it runs (lcpsim.v1 RecordEntry messages, each preceded by its length as
 * a protobuf varint): a RecordHeader, a GetSceneReply, then a State every
 * `every` steps, with a new GetSceneReply before the first State of a new
 * scene revision. The States are built as the state stream builds them
 * (lcpd_new_state_sensed, without sensors), and carry the stream's sequence
 * when the stream published the same step (else 0): with the same contacts
 * setting, a recorded State is bitwise the State the stream sent.
 *
 * Writes go to a buffer, written to the file with write(2) when full and
 * when the recording stops (the Record call, a size cap, the daemon's exit
 * on SIGINT or SIGTERM): a step costs a copy into memory, and a write of
 * the buffer's size once per LCPD_RECORD_BUFFER_BYTES. A write error stops
 * the recording (logged); the stepping goes on. */
#ifndef LCPD_RECORDING_H
#define LCPD_RECORDING_H

#include "error.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define LCPD_RECORD_MAGIC "lcpsim-recording"
#define LCPD_RECORD_FORMAT_VERSION 1u
#define LCPD_RECORD_BUFFER_BYTES ((size_t)1 << 20)

typedef struct lcpd_recorder_options {
  /* The directory (a realpath) below which the Record call may write; NULL:
   * the Record call may only stop a recording. */
  const char *record_dir;
  uint64_t max_bytes; /* a recording stops when it would grow past this (0: no cap) */
  size_t state_limit; /* bytes a State or scene entry may occupy while built */
} lcpd_recorder_options_t;

struct lcpd_recorder {
  lcpd_recorder_options_t options;
  int fd; /* -1: not recording */
  char path[PATH_MAX];
  uint32_t every;
  uint32_t steps_since;
  bool contacts;
  uint64_t states_written;
  uint64_t bytes_written;  /* into the buffer and the file */
  uint64_t scene_revision; /* of the last scene written */
  bool scene_written;
  unsigned char *buffer;
  size_t buffer_used, buffer_capacity;
  lcpd_arena_t arena;
  lcpd_error_t arena_error;
};

void lcpd_recorder_init(lcpd_recorder_t *recorder, const lcpd_recorder_options_t *options);
/* Stops any recording (flushed) and frees the recorder. */
void lcpd_recorder_destroy(lcpd_recorder_t *recorder, lcpd_sim_t *sim);

/* Starts recording sim to path, which the caller chose (the command line's
 * --record: created or truncated, no directory rule), writing the header,
 * the scene and the state now; then a state every `every` steps (0: 1).
 * LCP_ERR_STATE when a recording runs. */
int lcpd_recorder_start_local(lcpd_recorder_t *recorder, lcpd_sim_t *sim, const char *path,
                              uint32_t every, bool contacts, lcpd_error_t *error);
/* The same for the Record call: path (relative to the record directory, or
 * absolute) must name a new file in that directory or below it, reached
 * without symbolic links at its last component; an existing file is
 * refused. LCP_ERR_INVALID_ARGUMENT for a path outside the directory or an
 * existing file, LCP_ERR_STATE when there is no record directory. */
int lcpd_recorder_start_remote(lcpd_recorder_t *recorder, lcpd_sim_t *sim, const char *path,
                               uint32_t every, bool contacts, lcpd_error_t *error);
/* Flushes and closes the recording in progress (none: LCP_OK, nothing
 * done). The counts of the last recording stay readable in the recorder. */
int lcpd_recorder_stop(lcpd_recorder_t *recorder, lcpd_sim_t *sim, lcpd_error_t *error);
bool lcpd_recorder_active(const lcpd_recorder_t *recorder);

/* The Record call. */
int lcpd_handle_record(lcpd_sim_t *sim, lcpd_arena_t *arena, const Lcpsim__V1__RecordRequest *req,
                       void **result, lcpd_error_t *error);

/* A varint-prefixed message written into out (of room for
 * LCPD_VARINT_MAX + its packed size); returns the bytes written. */
#define LCPD_VARINT_MAX 10
size_t lcpd_pack_delimited(const ProtobufCMessage *message, unsigned char *out);

/* The text of started_utc: "YYYY-MM-DDTHH:MM:SSZ" and its end. */
#define LCPD_UTC_TEXT 32
/* The RecordHeader of a recording or a viewer's stream of sim's world,
 * started now: its strings point to constants and to started (filled). */
void lcpd_record_header_init(Lcpsim__V1__RecordHeader *header, const lcpd_sim_t *sim,
                             char started[LCPD_UTC_TEXT]);

#endif
