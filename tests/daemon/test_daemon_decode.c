/* A control tick's Step request is decoded straight from its bytes
 * (server/daemon/decode.c) instead of by protobuf-c. For every request it
 * takes, it must build the tree protobuf-c builds: both trees pack to the
 * same bytes. Requests it does not take (other calls, targets by joint
 * name or index, a non-finite number, an unpacked array, a field given
 * twice, an unknown field, malformed bytes) it must refuse, and leave to
 * protobuf-c. Random mutations of valid requests: whatever it takes,
 * protobuf-c takes too, to the same tree. */
#include "decode.h"
#include "memory.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#define MAX_BYTES 4096

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t next(rng *r) {
  r->s = r->s * 6364136223846793005u + 1442695040888963407u;
  return r->s >> 11;
}

static double uniform(rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(next(r) >> 11) / (double)(1u << 31) / (double)(1u << 11);
}

/* Packs a Request with protobuf-c; returns its size. */
static size_t pack(const Lcpsim__V1__Request *request, unsigned char *out) {
  size_t size = lcpsim__v1__request__get_packed_size(request);
  assert_true(size <= MAX_BYTES);
  return lcpsim__v1__request__pack(request, out);
}

/* The fast decoder's tree and protobuf-c's, both packed again, are the
 * bytes given (protobuf-c writes fields in number order, as the input). */
static void expect_same_tree(const unsigned char *bytes, size_t size) {
  lcpd_budget_t budget;
  lcpd_budget_init(&budget, 1 << 20);
  Lcpsim__V1__Request *fast = lcpd_decode_step_tick(&budget, bytes, size);
  assert_non_null(fast);
  Lcpsim__V1__Request *slow = lcpsim__v1__request__unpack(NULL, size, bytes);
  assert_non_null(slow);
  unsigned char a[MAX_BYTES], b[MAX_BYTES];
  size_t na = pack(fast, a), nb = pack(slow, b);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  assert_int_equal(fast->id, slow->id);
  assert_int_equal(fast->step->steps, slow->step->steps);
  assert_int_equal(fast->step->n_targets, slow->step->n_targets);
  lcpsim__v1__request__free_unpacked(slow, NULL);
  lcpd_budget_destroy(&budget);
}

static void expect_refused(const unsigned char *bytes, size_t size, const char *what) {
  lcpd_budget_t budget;
  lcpd_budget_init(&budget, 1 << 20);
  if (lcpd_decode_step_tick(&budget, bytes, size) != NULL)
    fail_msg("the fast decoder took a request with %s", what);
  lcpd_budget_destroy(&budget);
}

/* A random control tick: up to 3 targets, each with some of the six
 * arrays (1 to 7 values), a mode, maybe gravity compensation. */
typedef struct tick {
  Lcpsim__V1__Request request;
  Lcpsim__V1__StepRequest step;
  Lcpsim__V1__SetTargetRequest target[3];
  Lcpsim__V1__SetTargetRequest *targets[3];
  double values[3][6][7];
  char names[3][16];
} tick;

static void make_tick(tick *t, rng *r) {
  memset(t, 0, sizeof *t);
  lcpsim__v1__request__init(&t->request);
  lcpsim__v1__step_request__init(&t->step);
  t->request.id = next(r) % 3 == 0 ? next(r) << 11 : next(r) % 1000;
  t->request.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  t->request.step = &t->step;
  int64_t steps[] = {0, 1, 2, 1000, -1, -2147483647 - 1, 2147483647};
  t->step.steps = (int32_t)steps[next(r) % 7];
  t->step.return_state = next(r) % 2;
  t->step.include_contacts = next(r) % 2;
  t->step.n_targets = next(r) % 4;
  t->step.targets = t->targets;
  for (size_t k = 0; k < t->step.n_targets; ++k) {
    Lcpsim__V1__SetTargetRequest *g = &t->target[k];
    lcpsim__v1__set_target_request__init(g);
    t->targets[k] = g;
    snprintf(t->names[k], sizeof t->names[k], "arm%d", (int)(next(r) % 100));
    if (next(r) % 5)
      g->robot = t->names[k];
    g->mode = (Lcpsim__V1__SetTargetRequest__Mode)(next(r) % 5);
    size_t *count[] = {&g->n_position, &g->n_velocity,     &g->n_kp,
                       &g->n_kd,       &g->n_effort_limit, &g->n_torque};
    double **values[] = {&g->position, &g->velocity, &g->kp, &g->kd, &g->effort_limit, &g->torque};
    for (int a = 0; a < 6; ++a) {
      if (next(r) % 2)
        continue;
      *count[a] = 1 + next(r) % 7;
      *values[a] = t->values[k][a];
      for (size_t i = 0; i < *count[a]; ++i)
        t->values[k][a][i] = next(r) % 7 == 0 ? -0.0 : uniform(r, -1e3, 1e3);
    }
    if (next(r) % 3 == 0) {
      g->gravity_compensation_value_case =
          LCPSIM__V1__SET_TARGET_REQUEST__GRAVITY_COMPENSATION_VALUE_GRAVITY_COMPENSATION;
      g->gravity_compensation = next(r) % 2;
    }
  }
}

static void test_ticks_decode_as_protobuf_c(void **state) {
  (void)state;
  rng r = {7};
  tick *t = malloc(sizeof *t);
  unsigned char bytes[MAX_BYTES];
  for (int c = 0; c < 2000; ++c) {
    make_tick(t, &r);
    expect_same_tree(bytes, pack(&t->request, bytes));
  }
  free(t);
}

static void test_other_requests_are_refused(void **state) {
  (void)state;
  rng r = {11};
  tick *t = malloc(sizeof *t);
  unsigned char bytes[MAX_BYTES];
  size_t n;

  /* another call */
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__Request other = LCPSIM__V1__REQUEST__INIT;
  other.id = 5;
  other.call_case = LCPSIM__V1__REQUEST__CALL_PING;
  other.ping = &ping;
  expect_refused(bytes, pack(&other, bytes), "a Ping");
  /* no call at all */
  other.call_case = LCPSIM__V1__REQUEST__CALL__NOT_SET;
  expect_refused(bytes, pack(&other, bytes), "no call");

  /* targets by joint name, by index */
  do
    make_tick(t, &r);
  while (t->step.n_targets == 0);
  char *names[] = {"j1", "j2"};
  t->target[0].n_joints = 2;
  t->target[0].joints = names;
  expect_refused(bytes, pack(&t->request, bytes), "joints by name");
  t->target[0].n_joints = 0;
  int32_t indices[] = {0, 3};
  t->target[0].n_indices = 2;
  t->target[0].indices = indices;
  expect_refused(bytes, pack(&t->request, bytes), "joint indices");
  t->target[0].n_indices = 0;

  /* a non-finite number (protobuf-c then finds it and names it) */
  double bad[] = {1.0, NAN};
  t->target[0].n_kp = 2;
  t->target[0].kp = bad;
  expect_refused(bytes, pack(&t->request, bytes), "a NaN");
  bad[1] = -INFINITY;
  expect_refused(bytes, pack(&t->request, bytes), "an infinity");
  t->target[0].n_kp = 0;
  /* a robot name that is not printable ASCII */
  t->target[0].robot = (char *)"arm\xc3\xa9";
  expect_refused(bytes, pack(&t->request, bytes), "a non-ASCII name");
  t->target[0].robot = (char *)"arm7";
  expect_same_tree(bytes, pack(&t->request, bytes));

  /* hand-written bytes: Request{id 1, step {steps 1, targets {...}}} */
  const unsigned char unpacked[] = {
      0x08, 0x01, 0x62, 0x0d, 0x08, 0x01, 0x12, 0x09, 0x21,
      0,    0,    0,    0,    0,    0,    0xf0, 0x3f}; /* position = 1.0, unpacked */
  expect_refused(unpacked, sizeof unpacked, "an unpacked array");
  Lcpsim__V1__Request *general = lcpsim__v1__request__unpack(NULL, sizeof unpacked, unpacked);
  assert_non_null(general); /* protobuf-c takes it */
  lcpsim__v1__request__free_unpacked(general, NULL);
  const unsigned char twice[] = {0x08, 0x01, 0x08, 0x02, 0x62, 0x02, 0x08, 0x01};
  expect_refused(twice, sizeof twice, "the id twice");
  const unsigned char unknown[] = {0x08, 0x01, 0x62, 0x04, 0x08, 0x01, 0x78, 0x01};
  expect_refused(unknown, sizeof unknown, "an unknown field in the step");
  const unsigned char bool2[] = {0x08, 0x01, 0x62, 0x02, 0x18, 0x02};
  expect_refused(bool2, sizeof bool2, "a bool of 2");
  const unsigned char ok[] = {0x08, 0x01, 0x62, 0x04, 0x08, 0x01, 0x18, 0x01};
  expect_same_tree(ok, sizeof ok);
  /* keys and lengths of more than 5 bytes, which protobuf-c refuses: the
   * id's key in 6 bytes, the step's length in 6 bytes */
  const unsigned char long_key[] = {0x88, 0x80, 0x80, 0x80, 0x80, 0x00,
                                    0x05, 0x62, 0x02, 0x08, 0x01};
  expect_refused(long_key, sizeof long_key, "a 6-byte key");
  assert_null(lcpsim__v1__request__unpack(NULL, sizeof long_key, long_key));
  const unsigned char long_length[] = {0x08, 0x05, 0x62, 0x82, 0x80, 0x80,
                                       0x80, 0x80, 0x00, 0x08, 0x01};
  expect_refused(long_length, sizeof long_length, "a 6-byte length");
  assert_null(lcpsim__v1__request__unpack(NULL, sizeof long_length, long_length));
  /* in 5 bytes both are still keys and lengths, as protobuf-c reads them */
  const unsigned char five[] = {0x88, 0x80, 0x80, 0x80, 0x00, 0x05, 0x62,
                                0x82, 0x80, 0x80, 0x80, 0x00, 0x08, 0x01};
  expect_same_tree(five, sizeof five);
  /* cut short anywhere: refused, or a shorter request protobuf-c reads alike */
  make_tick(t, &r);
  n = pack(&t->request, bytes);
  for (size_t cut = 0; cut < n; ++cut) {
    lcpd_budget_t budget;
    lcpd_budget_init(&budget, 1 << 20);
    if (lcpd_decode_step_tick(&budget, bytes, cut))
      expect_same_tree(bytes, cut);
    lcpd_budget_destroy(&budget);
  }
  /* over the byte budget: refused (protobuf-c then reports the budget) */
  make_tick(t, &r);
  t->step.n_targets = 0;
  n = pack(&t->request, bytes);
  lcpd_budget_t tiny;
  lcpd_budget_init(&tiny, 16);
  assert_null(lcpd_decode_step_tick(&tiny, bytes, n));
  assert_true(tiny.exhausted);
  lcpd_budget_destroy(&tiny);
  free(t);
}

/* Random byte mutations of valid ticks: when the fast decoder takes the
 * bytes, protobuf-c takes them too, to the same tree. */
static void test_mutations_agree(void **state) {
  (void)state;
  rng r = {23};
  tick *t = malloc(sizeof *t);
  unsigned char bytes[MAX_BYTES];
  int taken = 0;
  for (int c = 0; c < 20000; ++c) {
    make_tick(t, &r);
    size_t n = pack(&t->request, bytes);
    int flips = 1 + (int)(next(&r) % 3);
    for (int f = 0; f < flips; ++f)
      bytes[next(&r) % n] ^= (unsigned char)(1u << (next(&r) % 8));
    lcpd_budget_t budget;
    lcpd_budget_init(&budget, 1 << 20);
    if (lcpd_decode_step_tick(&budget, bytes, n)) {
      taken++;
      expect_same_tree(bytes, n);
    }
    lcpd_budget_destroy(&budget);
  }
  print_message("mutated ticks taken by the fast decoder: %d of 20000\n", taken);
  assert_true(taken > 1000);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ticks_decode_as_protobuf_c),
      cmocka_unit_test(test_other_requests_are_refused),
      cmocka_unit_test(test_mutations_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
