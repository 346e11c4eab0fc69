/* SPDX-License-Identifier: Apache-2.0 */
/* The C client's worlds against a live lcpsimd (the built-in world: 'arm7', a table and a box):
 * lcpsim_client_set_world addresses one world and leaves the others; CreateWorld, ListWorlds,
 * DestroyWorld; a BatchStep over four worlds equals the same Steps made one world at a time,
 * bit for bit, a reset inside it included; a world not found fails alone; BatchStep decoded into
 * a state buffer gives, bit for bit, what the malloc'd reply gives, and keeps it until the
 * buffer's next use; the started and finished halves of BatchStep on two daemons at once, one
 * finished into a buffer; a world's own state stream. */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "lcpsim_client.h"
#include "test_daemon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

static const char *daemon_path;

enum { JOINTS = 7, WORLDS = 4 };

static int start_live(void **state) {
  static const char *const args[] = {"--workers", "2", "--max-worlds", "16", NULL};
  test_live_t *live = calloc(1, sizeof *live);
  if (!live || test_daemon_start_args(daemon_path, args, &live->daemon) != 0) {
    free(live);
    return -1;
  }
  if (lcpsim_client_connect(live->daemon.rep, 30000, &live->client) != LCPSIM_OK) {
    test_daemon_stop(&live->daemon);
    free(live);
    return -1;
  }
  *state = live;
  return 0;
}

static int stop_live(void **state) { return test_live_stop((test_live_t **)state); }

static uint64_t step_count_of(lcpsim_client_t *c) {
  lcpsim_state_t *s = NULL;
  assert_int_equal(lcpsim_client_get_state(c, LCPSIM_WITHOUT_CONTACTS, &s), LCPSIM_OK);
  uint64_t count = s->step_count;
  lcpsim_state_destroy(&s);
  return count;
}

static void create(lcpsim_client_t *c, const char *name) {
  lcpsim_world_source_t source = {.name = name, .copy_of = "default"};
  lcpsim_world_info_t *info = NULL;
  assert_int_equal(lcpsim_client_create_world(c, &source, &info), LCPSIM_OK);
  assert_string_equal(info->name, name);
  assert_int_equal(info->robot_count, 1);
  lcpsim_world_info_destroy(&info);
}

static void set_world_addresses_one_world(void **state) {
  lcpsim_client_t *c = ((test_live_t *)*state)->client;
  create(c, "one");
  assert_int_equal(lcpsim_client_set_world(c, "one"), LCPSIM_OK);
  assert_string_equal(lcpsim_client_world(c), "one");
  assert_int_equal(lcpsim_client_step(c, 12, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL), LCPSIM_OK);
  assert_int_equal(step_count_of(c), 12);
  assert_int_equal(lcpsim_client_set_world(c, "default"), LCPSIM_OK);
  assert_string_equal(lcpsim_client_world(c), "");
  assert_int_equal(step_count_of(c), 0);
  lcpsim_world_list_t *list = NULL;
  assert_int_equal(lcpsim_client_list_worlds(c, &list), LCPSIM_OK);
  assert_int_equal(list->n_worlds, 2);
  assert_string_equal(list->worlds[0]->name, "default");
  assert_string_equal(list->worlds[1]->name, "one");
  assert_int_equal(list->worlds[1]->step_count, 12);
  assert_int_equal(list->max_worlds, 16);
  lcpsim_world_list_destroy(&list);
  assert_int_equal(lcpsim_client_destroy_world(c, "one"), LCPSIM_OK);
  assert_int_equal(lcpsim_client_set_world(c, "one"), LCPSIM_OK);
  assert_int_equal(lcpsim_client_step(c, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_ERR_NOT_FOUND);
  lcpsim_client_set_world(c, NULL);
  assert_int_equal(lcpsim_client_destroy_world(c, "default"), LCPSIM_ERR_FAILED_PRECONDITION);
  char too_long[80];
  memset(too_long, 'a', sizeof too_long - 1);
  too_long[sizeof too_long - 1] = '\0';
  assert_int_equal(lcpsim_client_set_world(c, too_long), LCPSIM_ERR_USAGE);
}

/* World w's position targets at tick t. */
static void positions_of(int w, int t, double positions[JOINTS]) {
  for (int j = 0; j < JOINTS; ++j)
    positions[j] = 0.4 * sin(0.07 * t + 0.5 * w + 0.8 * j);
}

/* Tick t's steps of the worlds `names`: world w steps `steps` times after position targets
 * (positions_of) with gains *kp and *kd; `positions` and `targets` hold what the steps point to. */
static void tick_steps(int t, const char *const names[WORLDS], int steps, const double *kp,
                       const double *kd, double positions[WORLDS][JOINTS],
                       lcpsim_target_t targets[WORLDS], lcpsim_world_step_t out[WORLDS]) {
  for (int w = 0; w < WORLDS; ++w) {
    positions_of(w, t, positions[w]);
    targets[w] = (lcpsim_target_t){.robot = "arm7",
                                   .mode = LCPSIM_MODE_POSITION,
                                   .position = positions[w],
                                   .n_position = JOINTS,
                                   .kp = kp,
                                   .n_kp = 1,
                                   .kd = kd,
                                   .n_kd = 1};
    out[w] = (lcpsim_world_step_t){
        .world = names[w], .steps = steps, .targets = &targets[w], .n_targets = 1};
  }
}

static void batch_equals_one_by_one(void **state) {
  lcpsim_client_t *c = ((test_live_t *)*state)->client;
  const char *batched[WORLDS] = {"b0", "b1", "b2", "b3"};
  const char *single[WORLDS] = {"s0", "s1", "s2", "s3"};
  for (int w = 0; w < WORLDS; ++w) {
    create(c, batched[w]);
    create(c, single[w]);
  }
  uint8_t *start = NULL;
  size_t start_size = 0;
  lcpsim_client_set_world(c, "b0");
  assert_int_equal(lcpsim_client_save_state(c, NULL, &start, &start_size, NULL), LCPSIM_OK);
  lcpsim_client_set_world(c, NULL);
  const double kp = 120.0, kd = 11.0, q0[JOINTS] = {0.2, -0.1, 0.3, -0.5, 0.1, 0.4, -0.2};
  const lcpsim_robot_state_change_t reset = {.robot = "arm7", .q = q0, .n_q = JOINTS};
  for (int t = 0; t < 25; ++t) {
    double positions[WORLDS][JOINTS];
    lcpsim_target_t targets[WORLDS];
    lcpsim_world_step_t steps[WORLDS];
    tick_steps(t, batched, 3, &kp, &kd, positions, targets, steps);
    /* At tick 10 world 2 is reset: the start snapshot restored and q set. */
    if (t == 10) {
      steps[2].restore_snapshot = start;
      steps[2].restore_snapshot_size = start_size;
      steps[2].robot_states = &reset;
      steps[2].n_robot_states = 1;
    }
    lcpsim_batch_reply_t *reply = NULL;
    assert_int_equal(
        lcpsim_client_batch_step(c, steps, WORLDS, LCPSIM_BATCH_RETURN_STATE, 0, &reply),
        LCPSIM_OK);
    assert_int_equal(reply->n_results, WORLDS);
    for (int w = 0; w < WORLDS; ++w) {
      const lcpsim_batch_result_t *result = reply->results[w];
      assert_string_equal(result->world, batched[w]);
      assert_int_equal(lcpsim_batch_result_code(result), LCPSIM_OK);
      lcpsim_client_set_world(c, single[w]);
      if (t == 10 && w == 2) {
        assert_int_equal(lcpsim_client_restore_state(c, start, start_size, NULL), LCPSIM_OK);
        assert_int_equal(lcpsim_client_set_robot_state(c, &reset), LCPSIM_OK);
      }
      lcpsim_state_t *alone = NULL;
      assert_int_equal(lcpsim_client_step(c, 3, &targets[w], 1, LCPSIM_WITHOUT_CONTACTS, &alone),
                       LCPSIM_OK);
      const lcpsim_robot_state_t *a = lcpsim_state_find_robot(alone, "arm7");
      const lcpsim_robot_state_t *b = lcpsim_state_find_robot(result->state, "arm7");
      assert_non_null(a);
      assert_non_null(b);
      assert_int_equal(a->n_q, b->n_q);
      assert_memory_equal(a->q, b->q, a->n_q * sizeof *a->q);
      assert_memory_equal(a->qd, b->qd, a->n_qd * sizeof *a->qd);
      assert_int_equal(alone->step_count, result->step_count);
      lcpsim_state_destroy(&alone);
    }
    lcpsim_client_set_world(c, NULL);
    lcpsim_batch_reply_destroy(&reply);
  }
  free(start);
}

static void failures_are_per_world(void **state) {
  lcpsim_client_t *c = ((test_live_t *)*state)->client;
  create(c, "here");
  const lcpsim_world_step_t steps[] = {{.world = "here", .steps = 4},
                                       {.world = "nowhere", .steps = 4}};
  lcpsim_batch_reply_t *reply = NULL;
  assert_int_equal(lcpsim_client_batch_step(c, steps, 2, LCPSIM_BATCH_RETURN_SNAPSHOT, 0, &reply),
                   LCPSIM_OK);
  assert_int_equal(lcpsim_batch_result_code(reply->results[0]), LCPSIM_OK);
  assert_int_equal(reply->results[0]->step_count, 4);
  assert_true(reply->results[0]->snapshot.len > 0);
  assert_int_equal(lcpsim_batch_result_code(reply->results[1]), LCPSIM_ERR_NOT_FOUND);
  /* A snapshot from a BatchStep makes a copy that continues alike. */
  lcpsim_world_source_t source = {.name = "copy",
                                  .copy_of = "default",
                                  .snapshot = reply->results[0]->snapshot.data,
                                  .snapshot_size = reply->results[0]->snapshot.len};
  assert_int_equal(lcpsim_client_create_world(c, &source, NULL), LCPSIM_OK);
  lcpsim_batch_reply_destroy(&reply);
  lcpsim_client_set_world(c, "copy");
  assert_int_equal(step_count_of(c), 4);
  lcpsim_client_set_world(c, NULL);
  /* The same world twice: the request refused as a whole. */
  const lcpsim_world_step_t twice[] = {{.world = "here", .steps = 1}, {.world = "here"}};
  assert_int_equal(lcpsim_client_batch_step(c, twice, 2, 0, 0, &reply),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_null(reply);
}

/* A BatchStepResult packed with its world's name left out (results of two worlds alike then
 * pack alike); the caller frees the bytes. */
static uint8_t *pack_result(const lcpsim_batch_result_t *result, size_t *size) {
  lcpsim_batch_result_t copy = *result;
  lcpsim_state_t state = LCPSIM__V1__STATE__INIT;
  copy.world = "";
  if (result->state) {
    state = *result->state;
    state.world = "";
    copy.state = &state;
  }
  *size = lcpsim__v1__batch_step_result__get_packed_size(&copy);
  uint8_t *bytes = malloc(*size ? *size : 1);
  assert_non_null(bytes);
  lcpsim__v1__batch_step_result__pack(&copy, bytes);
  return bytes;
}

static void assert_results_equal(const lcpsim_batch_result_t *a, const lcpsim_batch_result_t *b) {
  size_t a_size = 0, b_size = 0;
  uint8_t *a_bytes = pack_result(a, &a_size), *b_bytes = pack_result(b, &b_size);
  assert_int_equal(a_size, b_size);
  assert_memory_equal(a_bytes, b_bytes, a_size);
  free(a_bytes);
  free(b_bytes);
}

/* Worlds m0..m3 stepped by lcpsim_client_batch_step and i0..i3 by lcpsim_client_batch_step_into,
 * alike (targets, a reset from the last tick's snapshot, contacts, sensors, snapshots): every
 * result the same, bit for bit; the buffer's reply unchanged by a call made before the buffer's
 * next use. */
static void batch_into_equals_batch(void **state) {
  lcpsim_client_t *c = ((test_live_t *)*state)->client;
  const char *malloced[WORLDS] = {"m0", "m1", "m2", "m3"};
  const char *buffered[WORLDS] = {"i0", "i1", "i2", "i3"};
  for (int w = 0; w < WORLDS; ++w) {
    create(c, malloced[w]);
    create(c, buffered[w]);
  }
  lcpsim_state_buffer_t *buffer = NULL;
  assert_int_equal(lcpsim_state_buffer_new(&buffer), LCPSIM_OK);
  const unsigned flags =
      LCPSIM_BATCH_RETURN_STATE | LCPSIM_BATCH_WITH_CONTACTS | LCPSIM_BATCH_RETURN_SNAPSHOT;
  const unsigned sensors = LCPSIM_SENSOR_ENERGY | LCPSIM_SENSOR_JOINT_WRENCHES |
                           LCPSIM_SENSOR_LINK_TWISTS | LCPSIM_SENSOR_SOLVER_STATS;
  const double kp = 90.0, kd = 9.0;
  lcpsim_batch_reply_t *last_malloced = NULL;
  const lcpsim_batch_reply_t *last_buffered = NULL;
  for (int t = 0; t < 20; ++t) {
    double positions[WORLDS][JOINTS];
    lcpsim_target_t targets[WORLDS];
    lcpsim_world_step_t m_steps[WORLDS], i_steps[WORLDS];
    tick_steps(t, malloced, 2, &kp, &kd, positions, targets, m_steps);
    for (int w = 0; w < WORLDS; ++w) {
      i_steps[w] = m_steps[w];
      i_steps[w].world = buffered[w];
    }
    /* At tick 12 world 1 takes world 0's state from the last tick's snapshot: the buffered
     * world's snapshot read from the reply the buffer still holds while the request is sent. */
    if (t == 12) {
      m_steps[1].restore_snapshot = last_malloced->results[0]->snapshot.data;
      m_steps[1].restore_snapshot_size = last_malloced->results[0]->snapshot.len;
      i_steps[1].restore_snapshot = last_buffered->results[0]->snapshot.data;
      i_steps[1].restore_snapshot_size = last_buffered->results[0]->snapshot.len;
    }
    const lcpsim_batch_reply_t *in_buffer = NULL;
    assert_int_equal(
        lcpsim_client_batch_step_into(c, i_steps, WORLDS, flags, sensors, buffer, &in_buffer),
        LCPSIM_OK);
    assert_non_null(in_buffer);
    assert_int_equal(in_buffer->n_results, WORLDS);
    /* Packed now, compared after another call: the buffer's reply outlives other calls. */
    size_t first_size = 0;
    uint8_t *first = pack_result(in_buffer->results[3], &first_size);
    lcpsim_batch_reply_t *malloced_reply = NULL;
    assert_int_equal(lcpsim_client_batch_step(c, m_steps, WORLDS, flags, sensors, &malloced_reply),
                     LCPSIM_OK);
    lcpsim_batch_reply_destroy(&last_malloced);
    last_malloced = malloced_reply;
    assert_int_equal(last_malloced->n_results, WORLDS);
    for (int w = 0; w < WORLDS; ++w) {
      assert_string_equal(in_buffer->results[w]->world, buffered[w]);
      assert_int_equal(lcpsim_batch_result_code(in_buffer->results[w]), LCPSIM_OK);
      assert_int_equal(lcpsim_batch_result_code(last_malloced->results[w]), LCPSIM_OK);
      assert_non_null(in_buffer->results[w]->state);
      assert_true(in_buffer->results[w]->snapshot.len > 0);
      assert_results_equal(last_malloced->results[w], in_buffer->results[w]);
    }
    size_t again_size = 0;
    uint8_t *again = pack_result(in_buffer->results[3], &again_size);
    assert_int_equal(first_size, again_size);
    assert_memory_equal(first, again, first_size);
    free(first);
    free(again);
    last_buffered = in_buffer;
  }
  for (int w = 0; w < WORLDS; ++w)
    assert_int_equal(last_buffered->results[w]->step_count, 2 * 20);
  lcpsim_batch_reply_destroy(&last_malloced);
  /* A request refused as a whole leaves no reply; a missing buffer is the caller's mistake. */
  const lcpsim_world_step_t twice[] = {{.world = "i0", .steps = 1}, {.world = "i0"}};
  const lcpsim_batch_reply_t *refused = last_buffered;
  assert_int_equal(lcpsim_client_batch_step_into(c, twice, 2, 0, 0, buffer, &refused),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_null(refused);
  assert_int_equal(lcpsim_client_batch_step_into(c, twice, 1, 0, 0, NULL, &refused),
                   LCPSIM_ERR_USAGE);
  lcpsim_state_buffer_destroy(&buffer);
}

static void started_batches_on_two_daemons(void **state) {
  lcpsim_client_t *first = ((test_live_t *)*state)->client;
  test_live_t *other = NULL;
  assert_int_equal(start_live((void **)&other), 0);
  /* _start does not wait for a connection: a new client makes a call first. */
  assert_int_equal(lcpsim_client_ping(other->client, NULL, 0), LCPSIM_OK);
  lcpsim_client_t *clients[2] = {first, other->client};
  uint64_t ids[2] = {0, 0};
  const lcpsim_world_step_t step = {.steps = 30};
  for (int d = 0; d < 2; ++d)
    assert_int_equal(
        lcpsim_client_batch_step_start(clients[d], &step, 1, LCPSIM_BATCH_RETURN_STATE, 0, &ids[d]),
        LCPSIM_OK);
  /* The first daemon's reply malloc'd, the other's decoded into a buffer. */
  lcpsim_state_buffer_t *buffer = NULL;
  assert_int_equal(lcpsim_state_buffer_new(&buffer), LCPSIM_OK);
  lcpsim_batch_reply_t *malloced = NULL;
  const lcpsim_batch_reply_t *replies[2] = {NULL, NULL};
  int waiting = 2;
  while (waiting > 0) {
    zmq_pollitem_t items[2] = {
        {.socket = lcpsim_client_zmq_socket(first), .events = ZMQ_POLLIN},
        {.socket = lcpsim_client_zmq_socket(other->client), .events = ZMQ_POLLIN}};
    assert_true(zmq_poll(items, 2, 30000) > 0);
    for (int d = 0; d < 2; ++d) {
      if (!(items[d].revents & ZMQ_POLLIN) || replies[d])
        continue;
      int code =
          d == 0 ? lcpsim_client_batch_step_finish(clients[d], ids[d], 0, &malloced)
                 : lcpsim_client_batch_step_finish_into(clients[d], ids[d], 0, buffer, &replies[d]);
      if (d == 0)
        replies[d] = malloced;
      assert_true(code == LCPSIM_OK || code == LCPSIM_ERR_TIMEOUT);
      waiting -= code == LCPSIM_OK;
    }
  }
  /* Two daemons' default worlds stepped alike end alike. */
  for (int d = 0; d < 2; ++d)
    assert_int_equal(replies[d]->results[0]->step_count, 30);
  assert_results_equal(replies[0]->results[0], replies[1]->results[0]);
  lcpsim_batch_reply_destroy(&malloced);
  lcpsim_state_buffer_destroy(&buffer);
  assert_int_equal(test_live_stop(&other), 0);
}

static void world_stream(void **state) {
  test_live_t *live = *state;
  lcpsim_client_t *c = live->client;
  create(c, "streamed");
  lcpsim_subscriber_t *stream = NULL;
  assert_int_equal(lcpsim_subscriber_new_world(live->daemon.pub, NULL, "streamed", &stream),
                   LCPSIM_OK);
  lcpsim_client_set_world(c, "streamed");
  assert_int_equal(lcpsim_client_subscribe(c, 1, LCPSIM_WITHOUT_CONTACTS), LCPSIM_OK);
  lcpsim_state_t *received = NULL;
  /* The first states may go before the subscription is connected: step until one comes. */
  for (int i = 0; i < 200 && !received; ++i) {
    assert_int_equal(lcpsim_client_step(c, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL), LCPSIM_OK);
    if (lcpsim_subscriber_receive(stream, 50, &received) != LCPSIM_OK)
      received = NULL;
  }
  lcpsim_client_set_world(c, NULL);
  assert_non_null(received);
  assert_string_equal(received->world, "streamed");
  lcpsim_state_destroy(&received);
  lcpsim_subscriber_destroy(&stream);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LCPSIMD\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(set_world_addresses_one_world, start_live, stop_live),
      cmocka_unit_test_setup_teardown(batch_equals_one_by_one, start_live, stop_live),
      cmocka_unit_test_setup_teardown(failures_are_per_world, start_live, stop_live),
      cmocka_unit_test_setup_teardown(batch_into_equals_batch, start_live, stop_live),
      cmocka_unit_test_setup_teardown(started_batches_on_two_daemons, start_live, stop_live),
      cmocka_unit_test_setup_teardown(world_stream, start_live, stop_live),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
