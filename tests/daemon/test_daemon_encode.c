/* The daemon writes States straight to wire bytes (server/daemon/encode.c)
 * rather than packing a protobuf-c tree: those bytes must be exactly what
 * protobuf-c packs from the tree lcpd_new_state builds of the same world
 * (zero fields left out, -0.0 too; lengths of 128 bytes and more), for a
 * State, a Step reply and a GetState reply, with and without contacts; and
 * a state over the byte limit must fail rather than be cut short. */
#include "convert.h"
#include "encode.h"
#include "scene.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct fixture {
  lcpd_sim_t sim;
  lcpd_arena_t arena;
  lcpd_wire_t wire;
  jmp_buf on_failure;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  lcpd_scene_t scene;
  char error[512];
  lcpd_scene_init(&scene);
  if (lcpd_scene_builtin(&scene, error, sizeof error) != 0)
    fail_msg("built-in scene: %s", error);
  if (lcpd_sim_init(&f->sim, &scene, error, sizeof error) != 0)
    fail_msg("built-in world: %s", error);
  /* A body moving at -0.0 along x (protobuf-c leaves -0.0 out as a zero),
   * with a long name. */
  lcpd_body_spec_t spec = lcpd_body_spec_default();
  memset(spec.name, 'n', LCP_NAME_MAX - 1);
  spec.name[LCP_NAME_MAX - 1] = '\0';
  spec.position[0] = 3.0;
  spec.position[2] = 0.5;
  spec.linear_velocity[0] = -0.0;
  spec.linear_velocity[1] = 0.25;
  if (lcpd_sim_add_body(&f->sim, &spec, NULL, error, sizeof error) != 0)
    fail_msg("spawn: %s", error);
  lcpd_arena_init(&f->arena, (size_t)64 << 20);
  lcpd_wire_init(&f->wire, (size_t)64 << 20);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  lcpd_wire_destroy(&f->wire);
  lcpd_arena_destroy(&f->arena);
  lcpd_sim_destroy(&f->sim);
  free(f);
  return 0;
}

static void step(fixture *f, int n) {
  char error[512];
  for (int i = 0; i < n; ++i)
    assert_int_equal(lcpd_sim_step(&f->sim, error, sizeof error), 0);
}

/* Packs a tree with protobuf-c and compares with the wire's bytes. */
static void assert_same_bytes(const ProtobufCMessage *tree, const lcpd_wire_t *wire) {
  assert_false(wire->failed);
  size_t size = protobuf_c_message_get_packed_size(tree);
  unsigned char *packed = malloc(size ? size : 1);
  assert_int_equal(protobuf_c_message_pack(tree, packed), size);
  assert_int_equal(wire->size, size);
  assert_memory_equal(wire->data, packed, size);
  free(packed);
}

static Lcpsim__V1__State *tree_state(fixture *f, bool contacts, uint64_t sequence) {
  if (setjmp(f->on_failure) != 0)
    fail_msg("the arena ran out");
  f->arena.on_failure = &f->on_failure;
  Lcpsim__V1__State *s = lcpd_new_state(&f->arena, &f->sim, contacts);
  f->arena.on_failure = NULL;
  s->sequence = sequence;
  return s;
}

static void check_state(fixture *f, bool contacts, uint64_t sequence) {
  lcpd_wire_reset(&f->wire);
  lcpd_encode_state(&f->wire, &f->sim, contacts, sequence);
  assert_same_bytes(&tree_state(f, contacts, sequence)->base, &f->wire);
  lcpd_arena_reset(&f->arena);
}

static void check_replies(fixture *f, bool contacts, uint64_t id) {
  Lcpsim__V1__Status status = LCPSIM__V1__STATUS__INIT;
  Lcpsim__V1__Reply reply = LCPSIM__V1__REPLY__INIT;
  reply.id = id;
  reply.status = &status;
  /* Step, with and without the state. */
  Lcpsim__V1__StepReply step_reply = LCPSIM__V1__STEP_REPLY__INIT;
  step_reply.time = lcp_world_time(f->sim.live.world);
  step_reply.step_count = lcp_world_step_count(f->sim.live.world);
  reply.result_case = LCPSIM__V1__REPLY__RESULT_STEP;
  reply.step = &step_reply;
  lcpd_wire_reset(&f->wire);
  lcpd_encode_step_reply(&f->wire, id, &f->sim, false, contacts);
  assert_same_bytes(&reply.base, &f->wire);
  step_reply.state = tree_state(f, contacts, 0);
  lcpd_wire_reset(&f->wire);
  lcpd_encode_step_reply(&f->wire, id, &f->sim, true, contacts);
  assert_same_bytes(&reply.base, &f->wire);
  /* GetState. */
  Lcpsim__V1__GetStateReply get_reply = LCPSIM__V1__GET_STATE_REPLY__INIT;
  get_reply.state = step_reply.state;
  reply.result_case = LCPSIM__V1__REPLY__RESULT_GET_STATE;
  reply.get_state = &get_reply;
  lcpd_wire_reset(&f->wire);
  lcpd_encode_get_state_reply(&f->wire, id, &f->sim, contacts);
  assert_same_bytes(&reply.base, &f->wire);
  lcpd_arena_reset(&f->arena);
}

/* At rest before the first step: many zeros, time 0, no contacts yet. */
static void test_initial_state(void **state) {
  fixture *f = *state;
  check_state(f, false, 0);
  check_state(f, true, 1);
  check_replies(f, false, 0);
  check_replies(f, true, 1);
}

/* Moving, with the box resting on the table and the body falling, then on
 * the ground (contacts), and ids and step counts of several varint sizes. */
static void test_moving_state(void **state) {
  fixture *f = *state;
  for (int round = 0; round < 6; ++round) {
    step(f, round == 0 ? 1 : 150);
    for (int contacts = 0; contacts < 2; ++contacts) {
      check_state(f, contacts, (uint64_t)1 << (7 * round));
      check_replies(f, contacts, ((uint64_t)1 << (9 * round)) + 5);
    }
  }
  assert_true(lcp_world_get_contacts(f->sim.live.world, NULL, 0) > 0);
}

/* Over the limit: failed, never a message cut short. */
static void test_limit(void **state) {
  fixture *f = *state;
  lcpd_wire_t small;
  lcpd_wire_init(&small, 200);
  lcpd_encode_state(&small, &f->sim, true, 0);
  assert_true(small.failed);
  lcpd_wire_reset(&small);
  assert_false(small.failed);
  lcpd_encode_step_reply(&small, 7, &f->sim, false, false);
  assert_false(small.failed);
  lcpd_wire_destroy(&small);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_initial_state),
      cmocka_unit_test(test_moving_state),
      cmocka_unit_test(test_limit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
