/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd under load: 16 clients at once (8 REQ, 8 DEALER, each in its own
 * thread) sending 1000 requests each, and a state subscriber that stops
 * reading while the daemon publishes every step. */
#include "daemon_harness.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* Sockets a test opened, closed by teardown also when an assertion ended
 * the test early (else terminating the context would wait for them). */
static void *test_sockets[8];

static void *track(void *socket) {
  for (size_t i = 0; i < sizeof test_sockets / sizeof test_sockets[0]; ++i)
    if (!test_sockets[i])
      return test_sockets[i] = socket;
  fail_msg("more than 8 sockets in one test");
  return NULL;
}

static int teardown(void **state) {
  daemon_proc *d = *state;
  for (size_t i = 0; i < sizeof test_sockets / sizeof test_sockets[0]; ++i)
    close_socket(&test_sockets[i]);
  daemon_stop(d);
  free(d);
  test_context_destroy();
  return 0;
}

/* ---- 16 concurrent clients ---- */

enum { CLIENTS = 16, REQUESTS = 1000, DEALER_WINDOW = 8 };
enum { KIND_PING, KIND_STATE, KIND_STEP, KINDS };

/* One client's run. Threads do not call cmocka (its failures jump): they
 * write what went wrong into `error`, which the test asserts empty. */
typedef struct client_run {
  void *context;
  const char *endpoint;
  bool dealer;
  int index;
  int steps_sent;
  double seconds;
  char error[256];
} client_run;

static uint64_t request_id(const client_run *run, int i) {
  return (uint64_t)(run->index + 1) * 1000000u + (uint64_t)i;
}

static int request_kind(const client_run *run, int i) { return (i + run->index) % KINDS; }

/* Packs request i of the run into buffer; returns its size. */
static size_t pack_request(const client_run *run, int i, unsigned char *buffer) {
  uint64_t id = request_id(run, i);
  Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__GetStateRequest get = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  r.id = id;
  switch (request_kind(run, i)) {
  case KIND_PING:
    /* The payload names the request, so that a misrouted reply shows. */
    ping.payload.data = (uint8_t *)&id;
    ping.payload.len = sizeof id;
    r.call_case = LCPSIM__V1__REQUEST__CALL_PING;
    r.ping = &ping;
    break;
  case KIND_STATE:
    r.call_case = LCPSIM__V1__REQUEST__CALL_GET_STATE;
    r.get_state = &get;
    break;
  default:
    step.steps = 1;
    r.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
    r.step = &step;
    break;
  }
  return lcpsim__v1__request__pack(&r, buffer);
}

static bool run_failed(client_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool run_failed(client_run *run, const char *fmt, ...) {
  if (run->error[0] == '\0') {
    int used = snprintf(run->error, sizeof run->error,
                        "%s client %d: ", run->dealer ? "DEALER" : "REQ", run->index);
    va_list args;
    va_start(args, fmt);
    vsnprintf(run->error + used, sizeof run->error - (size_t)used, fmt, args);
    va_end(args);
  }
  return false;
}

/* Receives the reply frame (a DEALER's delimiter first) within the reply
 * timeout and checks it answers request i. *step_count tracks the world's
 * step count as this client sees it: its own requests apply in order. */
static bool receive_checked_reply(client_run *run, void *socket, int i, uint64_t *step_count) {
  zmq_pollitem_t item = {.socket = socket, .events = ZMQ_POLLIN};
  if (zmq_poll(&item, 1, REPLY_TIMEOUT_MS) != 1)
    return run_failed(run, "no reply to request %d within %d ms", i, REPLY_TIMEOUT_MS);
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (run->dealer) {
    if (zmq_msg_recv(&msg, socket, 0) != 0 || !zmq_msg_more(&msg)) {
      zmq_msg_close(&msg);
      return run_failed(run, "reply %d: no empty delimiter frame", i);
    }
  }
  if (zmq_msg_recv(&msg, socket, 0) < 0 || zmq_msg_more(&msg)) {
    zmq_msg_close(&msg);
    return run_failed(run, "reply %d: not one frame", i);
  }
  Lcpsim__V1__Reply *reply =
      lcpsim__v1__reply__unpack(NULL, zmq_msg_size(&msg), zmq_msg_data(&msg));
  zmq_msg_close(&msg);
  if (!reply)
    return run_failed(run, "reply %d does not decode", i);
  bool ok = true;
  uint64_t id = request_id(run, i);
  int kind = request_kind(run, i);
  if (reply->id != id)
    ok = run_failed(run, "reply %d has id %llu, not %llu (lost, repeated or misrouted)", i,
                    (unsigned long long)reply->id, (unsigned long long)id);
  else if (!reply->status || reply->status->code != LCPSIM__V1__STATUS__CODE__OK)
    ok = run_failed(run, "request %d failed: %s", i,
                    reply->status ? reply->status->message : "no status");
  else if (kind == KIND_PING) {
    uint64_t echoed = 0;
    if (reply->result_case != LCPSIM__V1__REPLY__RESULT_PING ||
        reply->ping->payload.len != sizeof echoed)
      ok = run_failed(run, "reply %d is no Ping reply", i);
    else if (memcpy(&echoed, reply->ping->payload.data, sizeof echoed), echoed != id)
      ok = run_failed(run, "Ping %d echoed another request's payload", i);
  } else if (kind == KIND_STATE) {
    if (reply->result_case != LCPSIM__V1__REPLY__RESULT_GET_STATE)
      ok = run_failed(run, "reply %d is no GetState reply", i);
    else if (reply->get_state->state->step_count < *step_count)
      ok = run_failed(run, "GetState %d saw the world go back", i);
    else
      *step_count = reply->get_state->state->step_count;
  } else {
    if (reply->result_case != LCPSIM__V1__REPLY__RESULT_STEP)
      ok = run_failed(run, "reply %d is no Step reply", i);
    else if (reply->step->step_count <= *step_count)
      ok = run_failed(run, "Step %d did not move the world on", i);
    else
      *step_count = reply->step->step_count;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return ok;
}

static bool send_request(client_run *run, void *socket, int i) {
  unsigned char buffer[128];
  size_t size = pack_request(run, i, buffer);
  if (run->dealer && zmq_send(socket, "", 0, ZMQ_SNDMORE) != 0)
    return run_failed(run, "send %d: %s", i, zmq_strerror(zmq_errno()));
  if (zmq_send(socket, buffer, size, 0) != (int)size)
    return run_failed(run, "send %d: %s", i, zmq_strerror(zmq_errno()));
  run->steps_sent += request_kind(run, i) == KIND_STEP;
  return true;
}

static void *client_main(void *arg) {
  client_run *run = arg;
  void *socket = zmq_socket(run->context, run->dealer ? ZMQ_DEALER : ZMQ_REQ);
  int zero = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_connect(socket, run->endpoint) != 0) {
    run_failed(run, "connect: %s", zmq_strerror(zmq_errno()));
    zmq_close(socket);
    return NULL;
  }
  double start = now_seconds();
  uint64_t step_count = 0;
  if (run->dealer) {
    /* Up to DEALER_WINDOW requests in flight; replies come back in order. */
    int sent = 0, received = 0;
    bool ok = true;
    while (ok && received < REQUESTS) {
      while (ok && sent < REQUESTS && sent - received < DEALER_WINDOW)
        ok = send_request(run, socket, sent++);
      if (ok)
        ok = receive_checked_reply(run, socket, received++, &step_count);
    }
  } else {
    for (int i = 0; i < REQUESTS; ++i)
      if (!send_request(run, socket, i) || !receive_checked_reply(run, socket, i, &step_count))
        break;
  }
  run->seconds = now_seconds() - start;
  zmq_close(socket);
  return NULL;
}

static void test_16_clients_1000_requests_each(void **state) {
  daemon_proc *d = *state;
  client_run runs[CLIENTS];
  pthread_t threads[CLIENTS];
  double start = now_seconds();
  for (int c = 0; c < CLIENTS; ++c) {
    runs[c] = (client_run){
        .context = test_context(), .endpoint = d->rep, .dealer = c % 2 == 1, .index = c};
    assert_int_equal(pthread_create(&threads[c], NULL, client_main, &runs[c]), 0);
  }
  int steps = 0;
  double slowest = 0.0;
  for (int c = 0; c < CLIENTS; ++c) {
    pthread_join(threads[c], NULL);
    if (runs[c].error[0])
      fail_msg("%s", runs[c].error);
    steps += runs[c].steps_sent;
    slowest = runs[c].seconds > slowest ? runs[c].seconds : slowest;
  }
  double seconds = now_seconds() - start;
  /* Every Step was applied exactly once. */
  void *client = track(connect_req(d->rep));
  Lcpsim__V1__Reply *reply = call_get_state(client, 1, false);
  assert_int_equal(reply->get_state->state->step_count, steps);
  reply_free(&reply);
  print_message("16 clients x %d requests: %.2f s in all (%.0f requests/s), slowest client "
                "%.2f s, %d steps\n",
                REQUESTS, seconds, CLIENTS * REQUESTS / seconds, slowest, steps);
}

/* ---- a subscriber that stops reading ---- */

static void *subscriber(const char *endpoint, int receive_hwm, int receive_buffer) {
  void *s = zmq_socket(test_context(), ZMQ_SUB);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  if (receive_hwm > 0)
    zmq_setsockopt(s, ZMQ_RCVHWM, &receive_hwm, sizeof receive_hwm);
  if (receive_buffer > 0)
    zmq_setsockopt(s, ZMQ_RCVBUF, &receive_buffer, sizeof receive_buffer);
  zmq_setsockopt(s, ZMQ_SUBSCRIBE, "state", 5);
  assert_int_equal(zmq_connect(s, endpoint), 0);
  return s;
}

static void call_subscribe(void *client, uint32_t every) {
  Lcpsim__V1__SubscribeRequest sub = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  sub.every_steps = every;
  Lcpsim__V1__Request r = request_of(5, LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, &sub);
  Lcpsim__V1__Reply *reply = rpc(client, &r);
  assert_ok(reply, r.id, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
}

static void test_stalled_subscriber_never_blocks_the_daemon(void **state) {
  daemon_proc *d = *state;
  enum { FLOOD_CALLS = 20, FLOOD_STEPS = 1000, LOOP_STEPS = 1000 };
  /* Bound on a Ping's round trip while the stalled subscriber's queue is
   * full: generous for sanitizer builds on a loaded machine; a daemon that
   * blocked on the stream would not answer at all. */
  const double PING_BOUND_S = 1.0;
  void *client = track(connect_req(d->rep));
  /* The stalled one queues little, so that its high-water mark is reached
   * within the first few hundred states. */
  void *stalled = track(subscriber(d->pub, 16, 4096));
  void *fast = track(subscriber(d->pub, 0, 0));
  call_subscribe(client, 1);
  /* Step until both subscriptions have reached the daemon (PUB drops what
   * it sends before); the stalled subscriber reads that one state and no
   * more. */
  Lcpsim__V1__State *first_stalled = NULL, *first_fast = NULL;
  for (int tries = 0; tries < 400 && !(first_stalled && first_fast); ++tries) {
    call_step(client, 10, 1);
    if (!first_stalled)
      first_stalled = receive_state(stalled, 20);
    if (!first_fast)
      first_fast = receive_state(fast, 20);
  }
  assert_non_null(first_stalled);
  assert_non_null(first_fast);
  uint64_t stalled_from = first_stalled->sequence;
  lcpsim__v1__state__free_unpacked(first_stalled, NULL);
  lcpsim__v1__state__free_unpacked(first_fast, NULL);

  /* Many thousands of published states the stalled subscriber never reads;
   * the daemon keeps answering. */
  double worst_ping = 0.0, flood_start = now_seconds();
  for (int i = 0; i < FLOOD_CALLS; ++i) {
    call_step(client, 20 + (uint64_t)i, FLOOD_STEPS);
    double start = now_seconds();
    assert_true(call_ping(client, 100 + (uint64_t)i));
    double ping = now_seconds() - start;
    worst_ping = ping > worst_ping ? ping : worst_ping;
    /* The fast subscriber keeps up (what it missed while not reading does
     * not matter here). */
    Lcpsim__V1__State *s;
    while ((s = receive_state(fast, 0)) != NULL)
      lcpsim__v1__state__free_unpacked(s, NULL);
  }
  double flood_seconds = now_seconds() - flood_start;
  assert_true(worst_ping < PING_BOUND_S);
  Lcpsim__V1__State *s;
  while ((s = receive_state(fast, 200)) != NULL)
    lcpsim__v1__state__free_unpacked(s, NULL);

  /* A control loop of Step(1) calls still completes, and the fast
   * subscriber gets every state, in sequence. */
  Lcpsim__V1__Reply *reply = call_get_state(client, 200, false);
  uint64_t step_count = reply->get_state->state->step_count;
  reply_free(&reply);
  uint64_t sequence = 0;
  double loop_start = now_seconds();
  for (int i = 0; i < LOOP_STEPS; ++i) {
    assert_int_equal(call_step(client, 1000 + (uint64_t)i, 1), step_count + (uint64_t)i + 1);
    s = receive_state(fast, REPLY_TIMEOUT_MS);
    assert_non_null(s);
    if (i > 0)
      assert_int_equal(s->sequence, sequence + 1);
    sequence = s->sequence;
    assert_int_equal(s->step_count, step_count + (uint64_t)i + 1);
    lcpsim__v1__state__free_unpacked(s, NULL);
  }
  double loop_seconds = now_seconds() - loop_start;

  /* The stalled subscriber's queue did fill (its high-water mark and the
   * socket buffers on the way): it holds a fraction of what was published,
   * in order; the daemon dropped the rest for it. */
  uint64_t published = sequence - stalled_from, queued = 0, previous = stalled_from;
  while ((s = receive_state(stalled, 200)) != NULL) {
    queued++;
    assert_true(s->sequence > previous);
    previous = s->sequence;
    lcpsim__v1__state__free_unpacked(s, NULL);
  }
  if (queued >= published / 2)
    fail_msg("the stalled subscriber got %llu of %llu states: its queue never filled",
             (unsigned long long)queued, (unsigned long long)published);
  print_message("stalled subscriber: %llu states published, %llu queued for it; %d x Step(%d) "
                "in %.2f s, worst Ping %.1f ms; then %d Step(1) round trips with the fast "
                "subscriber in step: %.1f us each\n",
                (unsigned long long)published, (unsigned long long)queued, FLOOD_CALLS, FLOOD_STEPS,
                flood_seconds, worst_ping * 1e3, LOOP_STEPS, loop_seconds / LOOP_STEPS * 1e6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_16_clients_1000_requests_each, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stalled_subscriber_never_blocks_the_daemon, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
