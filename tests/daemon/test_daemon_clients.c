/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd with many clients at once: REQ and DEALER clients interleave,
 * every reply carries its request's id and reaches its own client, requests
 * apply whole and in arrival order, and a client that goes away mid-request
 * costs nothing. */
#include "daemon_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include <cmocka.h>

static int setup(void **state) {
  daemon_proc *d = calloc(1, sizeof *d);
  daemon_start(d, NULL);
  *state = d;
  return 0;
}

static int teardown(void **state) {
  daemon_proc *d = *state;
  daemon_stop(d);
  free(d);
  test_context_destroy();
  return 0;
}

enum { KIND_PING, KIND_STEP, KIND_STATE, KINDS };

/* A request and the messages it points to. */
typedef struct mixed_request {
  Lcpsim__V1__Request request;
  Lcpsim__V1__PingRequest ping;
  Lcpsim__V1__StepRequest step;
  Lcpsim__V1__GetStateRequest get;
  uint64_t payload;
} mixed_request;

/* The request number i of client c: a mix of calls, a Ping's payload naming
 * its id so that a misrouted reply shows. */
static void make_request(uint64_t id, int kind, mixed_request *m) {
  m->ping = (Lcpsim__V1__PingRequest)LCPSIM__V1__PING_REQUEST__INIT;
  m->step = (Lcpsim__V1__StepRequest)LCPSIM__V1__STEP_REQUEST__INIT;
  m->get = (Lcpsim__V1__GetStateRequest)LCPSIM__V1__GET_STATE_REQUEST__INIT;
  if (kind == KIND_PING) {
    m->payload = id;
    m->ping.payload.data = (uint8_t *)&m->payload;
    m->ping.payload.len = sizeof m->payload;
    m->request = request_of(id, LCPSIM__V1__REQUEST__CALL_PING, &m->ping);
  } else if (kind == KIND_STEP) {
    m->step.steps = 1;
    m->request = request_of(id, LCPSIM__V1__REQUEST__CALL_STEP, &m->step);
  } else {
    m->request = request_of(id, LCPSIM__V1__REQUEST__CALL_GET_STATE, &m->get);
  }
}

/* Checks a reply to request `id` of `kind`; returns the step count it saw
 * (0 for a Ping). */
static uint64_t check_reply(const Lcpsim__V1__Reply *reply, uint64_t id, int kind) {
  if (kind == KIND_PING) {
    assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_PING);
    uint64_t echoed;
    assert_int_equal(reply->ping->payload.len, sizeof echoed);
    memcpy(&echoed, reply->ping->payload.data, sizeof echoed);
    assert_true(echoed == id);
    return 0;
  }
  if (kind == KIND_STEP) {
    assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_STEP);
    return reply->step->step_count;
  }
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_GET_STATE);
  return reply->get_state->state->step_count;
}

static void test_req_and_dealer_clients_interleave(void **state) {
  daemon_proc *d = *state;
  enum { DEALERS = 3, REQS = 3, ROUNDS = 30 };
  void *dealers[DEALERS], *reqs[REQS];
  for (int c = 0; c < DEALERS; ++c)
    dealers[c] = connect_dealer(d->rep);
  for (int c = 0; c < REQS; ++c)
    reqs[c] = connect_req(d->rep);
  int steps_sent = 0;
  /* Each DEALER pipelines all its requests at once; the REQ clients go one
   * request at a time in between. */
  for (int c = 0; c < DEALERS; ++c) {
    for (int i = 0; i < ROUNDS; ++i) {
      mixed_request m;
      int kind = (i + c) % KINDS;
      make_request((uint64_t)(c + 1) * 1000 + (uint64_t)i, kind, &m);
      dealer_send(dealers[c], &m.request);
      steps_sent += kind == KIND_STEP;
    }
  }
  for (int i = 0; i < ROUNDS; ++i) {
    for (int c = 0; c < REQS; ++c) {
      mixed_request m;
      int kind = (i + c) % KINDS;
      uint64_t id = (uint64_t)(c + 1) * 100000 + (uint64_t)i;
      make_request(id, kind, &m);
      Lcpsim__V1__Reply *reply = rpc(reqs[c], &m.request);
      check_reply(reply, id, kind);
      reply_free(&reply);
      steps_sent += kind == KIND_STEP;
    }
  }
  /* Every DEALER gets its own replies, in the order it sent the requests,
   * and sees the world move forward: requests from one client apply in
   * arrival order. */
  for (int c = 0; c < DEALERS; ++c) {
    uint64_t last_count = 0;
    for (int i = 0; i < ROUNDS; ++i) {
      Lcpsim__V1__Reply *reply = receive_reply(dealers[c]);
      int kind = (i + c) % KINDS;
      uint64_t count = check_reply(reply, (uint64_t)(c + 1) * 1000 + (uint64_t)i, kind);
      if (kind != KIND_PING) {
        assert_true(count >= last_count);
        if (kind == KIND_STEP)
          assert_true(count > last_count);
        last_count = count;
      }
      reply_free(&reply);
    }
  }
  /* Every Step was applied exactly once. */
  Lcpsim__V1__Reply *reply = call_get_state(reqs[0], 1, false);
  assert_int_equal(reply->get_state->state->step_count, steps_sent);
  reply_free(&reply);
  for (int c = 0; c < DEALERS; ++c)
    close_socket(&dealers[c]);
  for (int c = 0; c < REQS; ++c)
    close_socket(&reqs[c]);
}

static void test_dealer_without_delimiter(void **state) {
  daemon_proc *d = *state;
  void *dealer = connect_dealer(d->rep);
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(55, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  unsigned char data[64];
  size_t size = lcpsim__v1__request__pack(&r, data);
  assert_int_equal(zmq_send(dealer, data, size, 0), (int)size);
  /* The reply comes back as it was asked: one frame, no delimiter. */
  zmq_pollitem_t item = {.socket = dealer, .events = ZMQ_POLLIN};
  assert_int_equal(zmq_poll(&item, 1, REPLY_TIMEOUT_MS), 1);
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  assert_true(zmq_msg_recv(&msg, dealer, 0) > 0);
  assert_false(zmq_msg_more(&msg));
  Lcpsim__V1__Reply *reply =
      lcpsim__v1__reply__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
  zmq_msg_close(&msg);
  assert_ok(reply, 55, LCPSIM__V1__REPLY__RESULT_PING);
  reply_free(&reply);
  close_socket(&dealer);
}

/* A step count that keeps this daemon busy for about `seconds` (measured,
 * so that "while it runs" holds on fast and slow builds alike). Leaves the
 * world `*count` steps on. */
static int32_t steps_lasting(void *client, double seconds, uint64_t *count) {
  double start = now_seconds();
  *count = call_step(client, 1, 2000);
  double per_step = (now_seconds() - start) / 2000.0;
  double n = seconds / (per_step > 1e-7 ? per_step : 1e-7);
  return n < 2000 ? 2000 : n > 5e6 ? 5000000 : (int32_t)n;
}

static void send_step(void *dealer, uint64_t id, int32_t steps) {
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = steps;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  dealer_send(dealer, &r);
}

static void test_client_gone_mid_request(void **state) {
  daemon_proc *d = *state;
  /* A Step of about half a second, and its client leaves while it runs. */
  void *next = connect_req(d->rep);
  uint64_t before;
  int32_t steps = steps_lasting(next, 0.5, &before);
  void *leaver = connect_dealer(d->rep);
  send_step(leaver, 60, steps);
  sleep_ms(50);
  close_socket(&leaver);
  /* The request was applied whole, and the daemon serves the next client. */
  assert_true(call_ping(next, 61));
  Lcpsim__V1__Reply *reply = call_get_state(next, 62, false);
  assert_int_equal(reply->get_state->state->step_count, before + (uint64_t)steps);
  reply_free(&reply);
  close_socket(&next);
}

static void test_requests_wait_for_a_running_step(void **state) {
  daemon_proc *d = *state;
  void *reader = connect_req(d->rep);
  uint64_t before;
  int32_t steps = steps_lasting(reader, 0.5, &before);
  uint64_t after = before + (uint64_t)steps;
  void *stepper = connect_dealer(d->rep);
  send_step(stepper, 70, steps);
  sleep_ms(50);
  /* Sent while the Step runs (in slices, between which the loop turns):
   * served after it, never halfway through. */
  Lcpsim__V1__Reply *reply = call_get_state(reader, 71, false);
  assert_int_equal(reply->get_state->state->step_count, after);
  reply_free(&reply);
  reply = receive_reply(stepper);
  assert_ok(reply, 70, LCPSIM__V1__REPLY__RESULT_STEP);
  assert_int_equal(reply->step->step_count, after);
  reply_free(&reply);
  close_socket(&reader);
  close_socket(&stepper);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_req_and_dealer_clients_interleave, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dealer_without_delimiter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_client_gone_mid_request, setup, teardown),
      cmocka_unit_test_setup_teardown(test_requests_wait_for_a_running_step, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
