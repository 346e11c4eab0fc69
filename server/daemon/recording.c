/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* O_NOFOLLOW, O_DIRECTORY, realpath */
#include "recording.h"

#include "convert.h"
#include "handlers.h"
#include "log.h"
#include "scene_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

size_t lcpd_pack_delimited(const ProtobufCMessage *message, unsigned char *out) {
  size_t size = protobuf_c_message_get_packed_size(message);
  size_t n = 0;
  uint64_t v = size;
  do {
    out[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return n + protobuf_c_message_pack(message, out + n);
}

void lcpd_recorder_init(lcpd_recorder_t *recorder, const lcpd_recorder_options_t *options) {
  *recorder = (lcpd_recorder_t){.options = *options, .fd = -1};
  lcpd_arena_init(&recorder->arena, options->state_limit, &recorder->arena_error);
}

bool lcpd_recorder_active(const lcpd_recorder_t *recorder) { return recorder->fd >= 0; }

/* Writes the buffer to the file; false (and the recording closed) when the
 * file refuses it. */
static bool flush(lcpd_recorder_t *r) {
  size_t done = 0;
  while (done < r->buffer_used) {
    ssize_t n = write(r->fd, r->buffer + done, r->buffer_used - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      LCPD_ERROR("recording %s: cannot write: %s; the recording stops", r->path,
                 n < 0 ? strerror(errno) : "no progress");
      r->buffer_used = 0;
      close(r->fd);
      r->fd = -1;
      return false;
    }
    done += (size_t)n;
  }
  r->buffer_used = 0;
  return true;
}

static void close_recording(lcpd_recorder_t *r, lcpd_sim_t *sim) {
  if (r->fd >= 0 && flush(r)) {
    if (close(r->fd) != 0)
      LCPD_ERROR("recording %s: closing: %s", r->path, strerror(errno));
    r->fd = -1;
    LCPD_INFO("recording %s: %llu states, %llu bytes", r->path,
              (unsigned long long)r->states_written, (unsigned long long)r->bytes_written);
  }
  if (sim->recorder == r)
    sim->record_step = NULL;
  lcpd_arena_reset(&r->arena);
}

/* Appends one RecordEntry; false when the recording stopped (a write
 * error, the size cap). */
static bool write_entry(lcpd_recorder_t *r, lcpd_sim_t *sim, const Lcpsim__V1__RecordEntry *entry) {
  size_t need = LCPD_VARINT_MAX + lcpsim__v1__record_entry__get_packed_size(entry);
  if (r->options.max_bytes && r->bytes_written + need > r->options.max_bytes) {
    LCPD_WARN("recording %s: the next entry would pass the cap of %llu bytes; the recording stops",
              r->path, (unsigned long long)r->options.max_bytes);
    close_recording(r, sim);
    return false;
  }
  if (r->buffer_capacity - r->buffer_used < need && !flush(r)) {
    close_recording(r, sim);
    return false;
  }
  if (r->buffer_capacity < need) {
    unsigned char *grown = realloc(r->buffer, need);
    if (!grown) {
      LCPD_ERROR("recording %s: out of memory for a %zu-byte entry; the recording stops", r->path,
                 need);
      close_recording(r, sim);
      return false;
    }
    r->buffer = grown;
    r->buffer_capacity = need;
  }
  size_t n = lcpd_pack_delimited(&entry->base, r->buffer + r->buffer_used);
  r->buffer_used += n;
  r->bytes_written += n;
  return true;
}

static bool write_scene(lcpd_recorder_t *r, lcpd_sim_t *sim) {
  Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
  lcpd_error_t error = {0};
  entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_SCENE;
  entry.scene = lcpd_new_scene_reply(&r->arena, sim, &error);
  if (!entry.scene) {
    LCPD_ERROR("recording %s: the scene needs %s; the recording stops", r->path, error.message);
    close_recording(r, sim);
    return false;
  }
  r->scene_revision = entry.scene->scene->revision;
  r->scene_written = true;
  bool ok = write_entry(r, sim, &entry);
  lcpd_arena_reset(&r->arena);
  return ok;
}

static void write_state(lcpd_recorder_t *r, lcpd_sim_t *sim, uint64_t sequence) {
  if ((!r->scene_written || r->scene_revision != lcpd_sim_scene_revision(sim)) &&
      !write_scene(r, sim))
    return;
  Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
  entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_STATE;
  entry.state = lcpd_new_state_sensed(&r->arena, sim, r->contacts, NULL, sequence);
  if (!entry.state) {
    LCPD_ERROR("recording %s: a state needs %s; the recording stops", r->path,
               r->arena_error.message);
    close_recording(r, sim);
    return;
  }
  /* As the stream sets it (replies leave it 0, as their sequence). */
  entry.state->scene_revision = lcpd_sim_scene_revision(sim);
  if (write_entry(r, sim, &entry))
    r->states_written++;
  lcpd_arena_reset(&r->arena);
}

static void on_step(lcpd_sim_t *sim, bool published) {
  lcpd_recorder_t *r = sim->recorder;
  if (++r->steps_since < r->every)
    return;
  r->steps_since = 0;
  write_state(r, sim, published ? sim->publish_sequence : 0);
}

void lcpd_record_header_init(Lcpsim__V1__RecordHeader *header, const lcpd_sim_t *sim,
                             char started[LCPD_UTC_TEXT]) {
  time_t now = time(NULL);
  struct tm utc;
  strftime(started, LCPD_UTC_TEXT, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
  lcpsim__v1__record_header__init(header);
  header->magic = (char *)LCPD_RECORD_MAGIC;
  header->format_version = LCPD_RECORD_FORMAT_VERSION;
  header->server_version = (char *)LCPD_SERVER_VERSION;
  header->timestep = lcpd_sim_timestep(sim);
  header->started_utc = started;
}

/* The recording is open on fd: the header, the scene and the state now. */
static int begin(lcpd_recorder_t *r, lcpd_sim_t *sim, int fd, const char *path, uint32_t every,
                 bool contacts, lcpd_error_t *error) {
  if (!r->buffer) {
    if (!(r->buffer = malloc(LCPD_RECORD_BUFFER_BYTES))) {
      close(fd);
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "out of memory for the recording's buffer");
    }
    r->buffer_capacity = LCPD_RECORD_BUFFER_BYTES;
  }
  r->fd = fd;
  snprintf(r->path, sizeof r->path, "%s", path);
  r->every = every ? every : 1;
  r->steps_since = 0;
  r->contacts = contacts;
  r->states_written = r->bytes_written = 0;
  r->scene_written = false;
  r->buffer_used = 0;
  char started[LCPD_UTC_TEXT];
  Lcpsim__V1__RecordHeader header;
  lcpd_record_header_init(&header, sim, started);
  Lcpsim__V1__RecordEntry entry = LCPSIM__V1__RECORD_ENTRY__INIT;
  entry.entry_case = LCPSIM__V1__RECORD_ENTRY__ENTRY_HEADER;
  entry.header = &header;
  sim->recorder = r;
  if (!write_entry(r, sim, &entry))
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot write the recording's header");
  write_state(r, sim, 0);
  if (r->fd < 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY,
                     "cannot write the recording's scene and first state (see the log)");
  sim->record_step = on_step;
  LCPD_INFO("recording to %s: a state every %u steps%s", r->path, r->every,
            contacts ? ", with contacts" : "");
  return LCP_OK;
}

int lcpd_recorder_start_local(lcpd_recorder_t *recorder, lcpd_sim_t *sim, const char *path,
                              uint32_t every, bool contacts, lcpd_error_t *error) {
  if (lcpd_recorder_active(recorder))
    return lcpd_fail(error, LCP_ERR_STATE, "a recording to %s is in progress", recorder->path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot create the recording %s: %s", path,
                     strerror(errno));
  return begin(recorder, sim, fd, path, every, contacts, error);
}

/* Splits path into the realpath of its directory, which must be dir or
 * below it, and a plain last component; opens the new file there. */
static int open_below(const char *dir, const char *path, char *resolved, size_t resolved_size,
                      lcpd_error_t *error) {
  char joined[PATH_MAX];
  if (path[0] == '\0')
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "record.path is empty");
  int n = path[0] == '/' ? snprintf(joined, sizeof joined, "%s", path)
                         : snprintf(joined, sizeof joined, "%s/%s", dir, path);
  if (n < 0 || (size_t)n >= sizeof joined)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "record.path is too long");
  char *slash = strrchr(joined, '/');
  const char *base = slash + 1;
  if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "record.path must name a file, not '%s'",
                     LCPD_QUOTE(path));
  *slash = '\0';
  char *parent = realpath(joined[0] ? joined : "/", NULL);
  size_t dir_length = strlen(dir);
  bool below = parent && strncmp(parent, dir, dir_length) == 0 &&
               (parent[dir_length] == '\0' || parent[dir_length] == '/');
  if (!below) {
    free(parent);
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "record.path '%s' is not in the record directory (--record-dir)",
                     LCPD_QUOTE(path));
  }
  n = snprintf(resolved, resolved_size, "%s/%s", parent, base);
  int dir_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free(parent);
  if (n < 0 || (size_t)n >= resolved_size || dir_fd < 0) {
    if (dir_fd >= 0)
      close(dir_fd);
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot open the directory of '%s'",
                     LCPD_QUOTE(path));
  }
  int fd = openat(dir_fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  int saved = errno;
  close(dir_fd);
  if (fd < 0)
    return lcpd_fail(
        error, LCP_ERR_INVALID_ARGUMENT, "cannot create the recording '%s': %s", LCPD_QUOTE(path),
        saved == EEXIST ? "the file exists (a recording never replaces a file)" : strerror(saved));
  return fd;
}

int lcpd_recorder_start_remote(lcpd_recorder_t *recorder, lcpd_sim_t *sim, const char *path,
                               uint32_t every, bool contacts, lcpd_error_t *error) {
  if (!recorder->options.record_dir)
    return lcpd_fail(error, LCP_ERR_STATE,
                     "this daemon records only what its command line asks (start it with "
                     "--record-dir DIR to allow the Record call)");
  if (lcpd_recorder_active(recorder))
    return lcpd_fail(error, LCP_ERR_STATE, "a recording to %s is in progress", recorder->path);
  char resolved[PATH_MAX];
  int fd = open_below(recorder->options.record_dir, path, resolved, sizeof resolved, error);
  if (fd < 0)
    return error->code;
  return begin(recorder, sim, fd, resolved, every, contacts, error);
}

int lcpd_recorder_stop(lcpd_recorder_t *recorder, lcpd_sim_t *sim, lcpd_error_t *error) {
  if (!lcpd_recorder_active(recorder))
    return LCP_OK;
  close_recording(recorder, sim);
  if (recorder->fd >= 0)
    return lcpd_fail(error, LCP_ERR_STATE, "the recording %s could not be closed", recorder->path);
  return LCP_OK;
}

void lcpd_recorder_destroy(lcpd_recorder_t *recorder, lcpd_sim_t *sim) {
  lcpd_recorder_stop(recorder, sim, NULL);
  if (sim->recorder == recorder)
    sim->recorder = NULL;
  free(recorder->buffer);
  lcpd_arena_destroy(&recorder->arena);
  recorder->buffer = NULL;
}

int lcpd_handle_record(lcpd_sim_t *sim, lcpd_arena_t *arena, const Lcpsim__V1__RecordRequest *req,
                       void **result, lcpd_error_t *error) {
  lcpd_recorder_t *recorder = sim->recorder;
  Lcpsim__V1__RecordReply *out = LCPD_NEW(arena, Lcpsim__V1__RecordReply);
  if (!out)
    return LCP_ERR_NO_MEMORY;
  lcpsim__v1__record_reply__init(out);
  if (!recorder)
    return lcpd_fail(error, LCP_ERR_STATE, "this daemon cannot record");
  int rc = req->stop ? lcpd_recorder_stop(recorder, sim, error)
                     : lcpd_recorder_start_remote(recorder, sim, req->path, req->every_steps,
                                                  req->include_contacts, error);
  if (rc != LCP_OK)
    return rc;
  if (!(out->path = lcpd_arena_strdup(arena, recorder->path)))
    return LCP_ERR_NO_MEMORY;
  out->states_written = recorder->states_written;
  out->bytes_written = recorder->bytes_written;
  out->recording = lcpd_recorder_active(recorder);
  *result = out;
  return LCP_OK;
}
