/* SPDX-License-Identifier: Apache-2.0 */
/* Recordings: a live run recorded with --record keeps bitwise the States the
 * stream sent (10,000 steps), reads back with the daemon's reader and with
 * Python's protobuf, and replays (lcpsimd --replay) bitwise too; the Record
 * call starts and stops a recording below --record-dir only, never over an
 * existing file. */
#define _GNU_SOURCE /* realpath, mkdtemp, symlink */
#include "daemon_harness.h"
#include "player.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#define STEPS 10000
#define BATCH 100

static void *subscribe_states(const char *endpoint, const char *topic) {
  void *s = zmq_socket(test_context(), ZMQ_SUB);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof zero); /* no limit: keep what arrives */
  zmq_setsockopt(s, ZMQ_SUBSCRIBE, topic, strlen(topic));
  assert_int_equal(zmq_connect(s, endpoint), 0);
  return s;
}

static void call_subscribe(void *c, uint64_t id, uint32_t every) {
  Lcpsim__V1__SubscribeRequest sub = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  sub.every_steps = every;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, &sub);
  Lcpsim__V1__Reply *reply = rpc(c, &r);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
}

/* The serialized States received, as the frames' bytes after the topic. */
typedef struct received {
  unsigned char **bytes;
  size_t *sizes;
  size_t count, capacity;
} received;

static void receive_all(void *sub, received *out, int timeout_ms, const char *topic) {
  size_t topic_length = strlen(topic);
  unsigned char *frame;
  long size;
  while ((size = receive_frame(sub, timeout_ms, &frame)) >= 0) {
    assert_true((size_t)size >= topic_length);
    assert_memory_equal(frame, topic, topic_length);
    if (out->count == out->capacity) {
      out->capacity = out->capacity ? 2 * out->capacity : 1024;
      out->bytes = realloc(out->bytes, out->capacity * sizeof *out->bytes);
      out->sizes = realloc(out->sizes, out->capacity * sizeof *out->sizes);
      assert_non_null(out->bytes);
      assert_non_null(out->sizes);
    }
    memmove(frame, frame + topic_length, (size_t)size - topic_length);
    out->bytes[out->count] = frame;
    out->sizes[out->count++] = (size_t)size - topic_length;
  }
}

static void received_free(received *r) {
  for (size_t i = 0; i < r->count; ++i)
    free(r->bytes[i]);
  free(r->bytes);
  free(r->sizes);
  *r = (received){0};
}

/* The recorded State of that step count (the recording has each once). */
static const lcpd_record_entry_t *recorded_step(const lcpd_recording_t *rec, uint64_t step) {
  for (size_t i = 0; i < rec->state_count; ++i)
    if (rec->states[i].step_count == step)
      return &rec->entries[rec->states[i].entry];
  return NULL;
}

/* Every State received equals, byte for byte, the recorded State of its step. */
static void assert_received_recorded(const received *got, const lcpd_recording_t *rec) {
  for (size_t i = 0; i < got->count; ++i) {
    Lcpsim__V1__State *s = lcpsim__v1__state__unpack(NULL, got->sizes[i], got->bytes[i]);
    assert_non_null(s);
    const lcpd_record_entry_t *e = recorded_step(rec, s->step_count);
    if (!e)
      fail_msg("step %llu was sent but not recorded", (unsigned long long)s->step_count);
    assert_int_equal(e->message_size, got->sizes[i]);
    assert_memory_equal(e->message, got->bytes[i], got->sizes[i]);
    lcpsim__v1__state__free_unpacked(s, NULL);
  }
}

static void temp_dir(char *out, size_t size) {
  snprintf(out, size, "/tmp/lcpsimd_record_XXXXXX");
  assert_non_null(mkdtemp(out));
}

static void run_python_reader(const char *path, char *out, size_t size) {
  char command[2048];
  snprintf(command, sizeof command, "PYTHONPATH='%s' '%s' '%s' '%s'", LCP_RECORD_PYTHON_PATH,
           LCP_RECORD_PYTHON, LCP_RECORD_READ_SCRIPT, path);
  FILE *p = popen(command, "r");
  assert_non_null(p);
  size_t n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  assert_int_equal(pclose(p), 0);
}

static void test_record_10000_steps_bitwise(void **state) {
  (void)state;
  char dir[64], path[128];
  temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/run.lcprec", dir);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--record", path, NULL});
  void *c = connect_req(d.rep);
  void *sub = subscribe_states(d.pub, "state");
  call_subscribe(c, 1, 1);
  /* PUB/SUB drops what is sent before the subscription reaches the daemon:
   * a step until the stream arrives, then the rest in batches, reading
   * what the stream sent after each. */
  received got = {0};
  uint64_t stepped = 0;
  while (got.count == 0 && stepped < 200) {
    stepped = call_step(c, 2, 1);
    receive_all(sub, &got, 20, "state");
  }
  assert_true(got.count > 0);
  while (stepped < STEPS) {
    int32_t n = STEPS - stepped < BATCH ? (int32_t)(STEPS - stepped) : BATCH;
    stepped = call_step(c, 3, n);
    receive_all(sub, &got, 5, "state");
  }
  receive_all(sub, &got, 200, "state");
  assert_int_equal(stepped, STEPS);
  close_socket(&c);
  /* SIGTERM ends the recording whole. */
  daemon_stop(&d);
  lcpd_recording_t rec;
  lcpd_error_t error = {0};
  if (lcpd_recording_open(&rec, path, &error) != LCP_OK)
    fail_msg("%s", error.message);
  /* The header, the scene, the state at the start and one per step. */
  assert_false(rec.truncated);
  assert_int_equal(rec.scene_count, 1);
  assert_int_equal(rec.state_count, STEPS + 1);
  assert_int_equal(rec.entry_count, STEPS + 3);
  for (size_t i = 0; i < rec.state_count; ++i)
    assert_int_equal(rec.states[i].step_count, i);
  /* The states carry the revision of the scene recorded before them. */
  const lcpd_record_entry_t *scene_entry = &rec.entries[rec.states[STEPS].scene];
  const lcpd_record_entry_t *last = &rec.entries[rec.states[STEPS].entry];
  Lcpsim__V1__GetSceneReply *scene =
      lcpsim__v1__get_scene_reply__unpack(NULL, scene_entry->message_size, scene_entry->message);
  Lcpsim__V1__State *last_state =
      lcpsim__v1__state__unpack(NULL, last->message_size, last->message);
  assert_non_null(scene);
  assert_non_null(last_state);
  assert_int_equal(last_state->scene_revision, scene->scene->revision);
  lcpsim__v1__get_scene_reply__free_unpacked(scene, NULL);
  lcpsim__v1__state__free_unpacked(last_state, NULL);
  /* Most of the stream arrived (it may drop under load; not asserted beyond some). */
  print_message("the subscriber received %zu of %d states\n", got.count, STEPS);
  assert_received_recorded(&got, &rec);
  /* Python's protobuf reads every entry. */
  char out[512];
  run_python_reader(path, out, sizeof out);
  char expected[256];
  snprintf(expected, sizeof expected,
           "entries=%d headers=1 scenes=1 states=%d first_step=0 last_step=%d "
           "magic=lcpsim-recording version=1\n",
           STEPS + 3, STEPS + 1, STEPS);
  assert_string_equal(out, expected);
  received_free(&got);

  /* The replay publishes the recorded States, bitwise. */
  daemon_proc r;
  daemon_start(&r, (const char *[]){"--replay", path, "--replay-speed", "10", NULL});
  assert_string_equal(r.rep, "-");
  void *replayed = subscribe_states(r.pub, "state");
  receive_all(replayed, &got, 2000, "state");
  print_message("the replay's subscriber received %zu states\n", got.count);
  assert_true(got.count > 0);
  assert_received_recorded(&got, &rec);
  /* In step order. */
  for (size_t i = 1; i < got.count; ++i) {
    Lcpsim__V1__State *a = lcpsim__v1__state__unpack(NULL, got.sizes[i - 1], got.bytes[i - 1]);
    Lcpsim__V1__State *b = lcpsim__v1__state__unpack(NULL, got.sizes[i], got.bytes[i]);
    assert_true(a->step_count < b->step_count);
    lcpsim__v1__state__free_unpacked(a, NULL);
    lcpsim__v1__state__free_unpacked(b, NULL);
  }
  close_socket(&replayed);
  int status = daemon_signal_and_wait(&r, SIGTERM, NULL);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  received_free(&got);
  close_socket(&sub);
  lcpd_recording_close(&rec);
  unlink(path);
  rmdir(dir);
}

static Lcpsim__V1__Reply *record(void *c, uint64_t id, const char *path, bool stop,
                                 uint32_t every) {
  Lcpsim__V1__RecordRequest body = LCPSIM__V1__RECORD_REQUEST__INIT;
  body.path = (char *)(path ? path : "");
  body.stop = stop;
  body.every_steps = every;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_RECORD, &body);
  return rpc(c, &r);
}

static void test_record_call(void **state) {
  (void)state;
  char dir[64], outside[64], path[PATH_MAX + 16], link_path[256];
  temp_dir(dir, sizeof dir);
  temp_dir(outside, sizeof outside);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--record-dir", dir, NULL});
  void *c = connect_req(d.rep);
  uint64_t before = world_hash_all(c);
  /* Start (relative to the directory), every 2 steps; stop. */
  Lcpsim__V1__Reply *reply = record(c, 1, "a.lcprec", false, 2);
  assert_ok(reply, 1, LCPSIM__V1__REPLY__RESULT_RECORD);
  assert_true(reply->record->recording);
  char resolved[PATH_MAX];
  assert_non_null(realpath(dir, resolved));
  snprintf(path, sizeof path, "%s/a.lcprec", resolved);
  assert_string_equal(reply->record->path, path);
  reply_free(&reply);
  /* One recording at a time. */
  reply = record(c, 2, "b.lcprec", false, 1);
  assert_error(reply, 2, LCPSIM__V1__STATUS__CODE__FAILED_PRECONDITION, "in progress");
  reply_free(&reply);
  call_step(c, 3, 10);
  reply = record(c, 4, NULL, true, 0);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_RECORD);
  assert_false(reply->record->recording);
  assert_int_equal(reply->record->states_written, 1 + 10 / 2);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal((uint64_t)st.st_size, reply->record->bytes_written);
  reply_free(&reply);
  lcpd_recording_t rec;
  lcpd_error_t error = {0};
  assert_int_equal(lcpd_recording_open(&rec, path, &error), LCP_OK);
  assert_int_equal(rec.state_count, 6);
  assert_int_equal(rec.states[5].step_count, 10);
  lcpd_recording_close(&rec);

  /* Refused: an existing file, paths outside the directory, through a link
   * out of it, a link as the file. Nothing else changes. */
  uint64_t after_steps = world_hash_all(c);
  snprintf(link_path, sizeof link_path, "%s/out", dir);
  assert_int_equal(symlink(outside, link_path), 0);
  char link_file[300], outside_file[300];
  snprintf(link_file, sizeof link_file, "%s/ln.lcprec", dir);
  snprintf(outside_file, sizeof outside_file, "%s/target.lcprec", outside);
  assert_int_equal(symlink(outside_file, link_file), 0);
  char absolute_outside[300];
  snprintf(absolute_outside, sizeof absolute_outside, "%s/x.lcprec", outside);
  const struct {
    const char *path;
    const char *needle;
  } refused[] = {
      {"a.lcprec", "exists"},
      {"../x.lcprec", "not in the record directory"},
      {absolute_outside, "not in the record directory"},
      {"out/x.lcprec", "not in the record directory"},
      {"ln.lcprec", "exists"},
      {"", "empty"},
      {"sub/", "must name a file"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
    reply = record(c, 10 + i, refused[i].path, false, 1);
    assert_error(reply, 10 + i, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, refused[i].needle);
    reply_free(&reply);
  }
  assert_int_equal(access(outside_file, F_OK), -1);
  assert_int_equal(access(absolute_outside, F_OK), -1);
  assert_int_equal(world_hash_all(c), after_steps);
  assert_true(after_steps != before);
  /* Stop with none running: fine, and says none runs. */
  reply = record(c, 30, NULL, true, 0);
  assert_ok(reply, 30, LCPSIM__V1__REPLY__RESULT_RECORD);
  assert_false(reply->record->recording);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
  unlink(link_file);
  unlink(link_path);
  unlink(path);
  rmdir(dir);
  rmdir(outside);

  /* Without --record-dir the Record call cannot start a recording. */
  daemon_start(&d, (const char *[]){NULL});
  c = connect_req(d.rep);
  reply = record(c, 1, "/tmp/x.lcprec", false, 1);
  assert_error(reply, 1, LCPSIM__V1__STATUS__CODE__FAILED_PRECONDITION, "--record-dir");
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
}

/* The player: a seek emits the scene in force, then the State at or before
 * the time asked. */
typedef struct sink {
  lcpd_entry_kind_t kinds[8];
  const unsigned char *messages[8];
  int count;
} sink;

static void collect(void *user, const lcpd_record_entry_t *entry) {
  sink *s = user;
  if (s->count < 8) {
    s->kinds[s->count] = entry->kind;
    s->messages[s->count++] = entry->message;
  }
}

static void test_player_seek(void **state) {
  (void)state;
  char dir[64], path[128];
  temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/seek.lcprec", dir);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--record", path, "--record-every", "3", NULL});
  void *c = connect_req(d.rep);
  call_step(c, 1, 30);
  close_socket(&c);
  daemon_stop(&d);
  uv_loop_t loop;
  uv_loop_init(&loop);
  lcpd_recording_t recording;
  lcpd_player_t player;
  lcpd_error_t error = {0};
  assert_int_equal(lcpd_recording_open(&recording, path, &error), LCP_OK);
  assert_int_equal(lcpd_player_init(&player, &loop, &recording, &error), LCP_OK);
  const lcpd_recording_t *rec = &recording;
  assert_int_equal(rec->state_count, 11); /* steps 0, 3, ..., 30 */
  sink s = {0};
  lcpd_player_set_sink(&player, collect, NULL, &s);
  /* Between the states of steps 6 and 9: the state of step 6. */
  double t = 0.5 * (rec->states[2].time + rec->states[3].time);
  lcpd_player_seek(&player, t);
  assert_int_equal(s.count, 2);
  assert_int_equal(s.kinds[0], LCPSIM__V1__RECORD_ENTRY__ENTRY_SCENE);
  assert_int_equal(s.kinds[1], LCPSIM__V1__RECORD_ENTRY__ENTRY_STATE);
  assert_ptr_equal(s.messages[1], rec->entries[rec->states[2].entry].message);
  /* Before the first: the first; after the last: the last. */
  lcpd_player_seek(&player, -1.0);
  assert_ptr_equal(s.messages[3], rec->entries[rec->states[0].entry].message);
  lcpd_player_seek(&player, 1e9);
  assert_ptr_equal(s.messages[5], rec->entries[rec->states[10].entry].message);
  assert_int_equal(lcpd_player_set_speed(&player, 0.0), LCP_ERR_INVALID_ARGUMENT);
  lcpd_player_close(&player, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  lcpd_recording_close(&recording);
  /* Not a recording: refused. */
  FILE *f = fopen(path, "wb");
  fputs("not a recording", f);
  fclose(f);
  assert_int_equal(lcpd_recording_open(&recording, path, &error), LCP_ERR_INVALID_ARGUMENT);
  unlink(path);
  rmdir(dir);
}

/* --record-max-bytes: the recording stops before the entry that would pass
 * the cap, and what it wrote reads whole. */
static void test_size_cap(void **state) {
  (void)state;
  char dir[64], path[128];
  temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/capped.lcprec", dir);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--record", path, "--record-max-bytes", "20000", NULL});
  void *c = connect_req(d.rep);
  call_step(c, 1, 200);
  close_socket(&c);
  daemon_stop(&d);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true(st.st_size <= 20000);
  lcpd_recording_t rec;
  lcpd_error_t error = {0};
  assert_int_equal(lcpd_recording_open(&rec, path, &error), LCP_OK);
  assert_false(rec.truncated);
  /* Fewer states than steps, in order from the start; the next would not fit. */
  assert_true(rec.state_count > 1 && rec.state_count < 201);
  for (size_t i = 0; i < rec.state_count; ++i)
    assert_int_equal(rec.states[i].step_count, i);
  size_t last = rec.entries[rec.entry_count - 1].size;
  assert_true((uint64_t)st.st_size + last > 20000 - 10);
  lcpd_recording_close(&rec);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_10000_steps_bitwise),
      cmocka_unit_test(test_record_call),
      cmocka_unit_test(test_player_seek),
      cmocka_unit_test(test_size_cap),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  test_context_destroy();
  return failed;
}
