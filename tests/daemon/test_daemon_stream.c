/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd's state stream: one frame per state, "state" then a serialized
 * State, every k steps, with a sequence number that grows by one. */
#include "daemon_harness.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include <cmocka.h>

typedef struct fixture {
  daemon_proc daemon;
  void *client;
  void *subscriber;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  daemon_start(&f->daemon, NULL);
  f->client = connect_req(f->daemon.rep);
  f->subscriber = zmq_socket(test_context(), ZMQ_SUB);
  int zero = 0;
  zmq_setsockopt(f->subscriber, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(f->subscriber, ZMQ_SUBSCRIBE, "state", 5);
  assert_int_equal(zmq_connect(f->subscriber, f->daemon.pub), 0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  close_socket(&f->client);
  close_socket(&f->subscriber);
  daemon_stop(&f->daemon);
  free(f);
  test_context_destroy();
  return 0;
}

static void subscribe_sensed(fixture *f, uint32_t every, bool contacts,
                             Lcpsim__V1__Sensors *sensors) {
  Lcpsim__V1__SubscribeRequest sub = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  sub.every_steps = every;
  sub.include_contacts = contacts;
  sub.sensors = sensors;
  Lcpsim__V1__Request r = request_of(900 + every, LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, &sub);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, r.id, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
}

static void subscribe(fixture *f, uint32_t every, bool contacts) {
  subscribe_sensed(f, every, contacts, NULL);
}

/* PUB/SUB drops what is sent before the subscription reaches the daemon:
 * step until a state arrives, then drain what was sent meanwhile. Returns
 * the last state seen. */
static Lcpsim__V1__State *join_stream(fixture *f, uint32_t every) {
  Lcpsim__V1__State *last = NULL;
  for (int tries = 0; tries < 200 && !last; ++tries) {
    call_step(f->client, 1, (int32_t)every);
    last = receive_state(f->subscriber, 50);
  }
  assert_non_null(last);
  Lcpsim__V1__State *more;
  while ((more = receive_state(f->subscriber, 100)) != NULL) {
    lcpsim__v1__state__free_unpacked(last, NULL);
    last = more;
  }
  return last;
}

static void test_states_every_k_steps_with_consecutive_sequence(void **state) {
  fixture *f = *state;
  enum { K = 5, STATES = 12 };
  subscribe(f, K, false);
  Lcpsim__V1__State *last = join_stream(f, K);
  uint64_t sequence = last->sequence, step_count = last->step_count;
  assert_true(sequence >= 1);
  lcpsim__v1__state__free_unpacked(last, NULL);

  call_step(f->client, 2, K * STATES);
  for (int i = 1; i <= STATES; ++i) {
    Lcpsim__V1__State *s = receive_state(f->subscriber, REPLY_TIMEOUT_MS);
    assert_non_null(s);
    assert_int_equal(s->sequence, sequence + (uint64_t)i);
    assert_int_equal(s->step_count, step_count + (uint64_t)(K * i));
    assert_int_equal(s->n_robots, 1);
    assert_int_equal(s->n_bodies, 2);
    assert_int_equal(s->n_contacts, 0); /* not asked for */
    lcpsim__v1__state__free_unpacked(s, NULL);
  }
  assert_null(receive_state(f->subscriber, 200));
}

static void test_contacts_on_request_and_stop(void **state) {
  fixture *f = *state;
  subscribe(f, 1, true);
  Lcpsim__V1__State *last = join_stream(f, 1);
  lcpsim__v1__state__free_unpacked(last, NULL);
  call_step(f->client, 3, 1);
  Lcpsim__V1__State *s = receive_state(f->subscriber, REPLY_TIMEOUT_MS);
  assert_non_null(s);
  /* The box rests on the table. */
  assert_true(s->n_contacts >= 3);
  lcpsim__v1__state__free_unpacked(s, NULL);

  subscribe(f, 0, false);
  call_step(f->client, 4, 10);
  assert_null(receive_state(f->subscriber, 300));
}

/* A subscription may ask for readings: each published state carries them, the same to the bit as
 * a GetState asking for them at that step; the box resting on the table pushes down its weight. */
static void test_sensors_on_the_stream(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Sensors sensors = LCPSIM__V1__SENSORS__INIT;
  sensors.energy = true;
  sensors.contact_wrenches = true;
  sensors.solver_stats = true;
  subscribe_sensed(f, 1, false, &sensors);
  Lcpsim__V1__State *last = join_stream(f, 1);
  lcpsim__v1__state__free_unpacked(last, NULL);
  call_step(f->client, 5, 1);
  Lcpsim__V1__State *s = receive_state(f->subscriber, REPLY_TIMEOUT_MS);
  assert_non_null(s);

  Lcpsim__V1__GetStateRequest get = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  get.sensors = &sensors;
  Lcpsim__V1__Request r = request_of(6, LCPSIM__V1__REQUEST__CALL_GET_STATE, &get);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, r.id, LCPSIM__V1__REPLY__RESULT_GET_STATE);
  const Lcpsim__V1__State *g = reply->get_state->state;
  assert_int_equal(s->step_count, g->step_count);
  assert_non_null(s->solver_stats);
  assert_int_equal(s->solver_stats->rows, g->solver_stats->rows);
  assert_true(s->solver_stats->contacts >= 3);
  assert_int_equal(s->n_robots, 1);
  assert_non_null(s->robots[0]->energy);
  assert_memory_equal(&s->robots[0]->energy->kinetic, &g->robots[0]->energy->kinetic,
                      sizeof(double));
  assert_memory_equal(&s->robots[0]->energy->potential, &g->robots[0]->energy->potential,
                      sizeof(double));
  int box = -1;
  for (size_t i = 0; i < s->n_bodies; ++i)
    if (strcmp(s->bodies[i]->name, "box") == 0)
      box = (int)i;
  assert_true(box >= 0);
  const Lcpsim__V1__ContactWrench *pushed = s->bodies[box]->contact_wrench;
  assert_non_null(pushed);
  assert_memory_equal(&pushed->normal->force->z, &g->bodies[box]->contact_wrench->normal->force->z,
                      sizeof(double));
  /* the table holds the 0.5 kg box up: m g, to 1 % */
  assert_true(fabs(pushed->normal->force->z - 0.5 * 9.81) < 0.01 * 0.5 * 9.81);
  lcpsim__v1__state__free_unpacked(s, NULL);
  reply_free(&reply);

  /* asking again without readings takes them off the stream */
  subscribe(f, 1, false);
  last = join_stream(f, 1);
  assert_null(last->solver_stats);
  assert_null(last->robots[0]->energy);
  lcpsim__v1__state__free_unpacked(last, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_states_every_k_steps_with_consecutive_sequence, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_contacts_on_request_and_stop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sensors_on_the_stream, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
