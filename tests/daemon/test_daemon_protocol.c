/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's protocol memory (server/daemon/memory.c, convert.c), in
 * process: the arena refuses past its limit with an error rather than a
 * jump, and is whole again after a reset; protobuf-c decodes a request into
 * it and stops at the limit that guards against a small message unpacking
 * into a huge tree; the State builder either builds the whole State or
 * returns NULL, and what it builds carries the world's values. */
#include "convert.h"
#include "memory.h"
#include "scene.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_arena_limit_and_reset(void **state) {
  (void)state;
  lcpd_error_t error = {0};
  lcpd_arena_t arena;
  lcpd_arena_init(&arena, 1000, &error);
  /* Zeroed, aligned for any type, counted rounded up to the alignment. */
  unsigned char *first = lcpd_arena_alloc(&arena, 100);
  assert_non_null(first);
  assert_int_equal((uintptr_t)first % sizeof(max_align_t), 0);
  for (int i = 0; i < 100; ++i)
    assert_int_equal(first[i], 0);
  memset(first, 0xff, 100);
  while (lcpd_arena_alloc(&arena, 100))
    continue;
  /* Refused when, and only when, the next 100 bytes (rounded up) would pass
   * the limit. */
  const size_t rounded =
      (100 + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  assert_true(arena.used <= 1000 && arena.used + rounded > 1000);
  assert_int_equal(error.code, LCP_ERR_NO_MEMORY);
  assert_string_equal(error.message, "more than the 1000 bytes of memory allowed");
  /* One allocation over the whole limit, and an array whose size overflows. */
  error = (lcpd_error_t){0};
  lcpd_arena_reset(&arena);
  assert_null(lcpd_arena_alloc(&arena, 1001));
  assert_int_equal(error.code, LCP_ERR_NO_MEMORY);
  assert_null(lcpd_arena_array(&arena, SIZE_MAX / 2, 8));
  /* After a reset the memory is handed out again, zeroed. */
  assert_int_equal(arena.used, 0);
  unsigned char *again = lcpd_arena_alloc(&arena, 100);
  assert_non_null(again);
  for (int i = 0; i < 100; ++i)
    assert_int_equal(again[i], 0);
  /* An empty array is a valid pointer. */
  assert_non_null(lcpd_arena_array(&arena, 0, sizeof(double)));
  lcpd_arena_destroy(&arena);
}

/* A Request with a Step of `targets` empty SetTargetRequests: 2 bytes each
 * on the wire, a whole struct each once decoded. */
static size_t pack_step_of_empty_targets(size_t targets, unsigned char **out) {
  Lcpsim__V1__SetTargetRequest empty = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  Lcpsim__V1__SetTargetRequest **list = malloc(targets * sizeof *list);
  for (size_t i = 0; i < targets; ++i)
    list[i] = &empty;
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.n_targets = targets;
  step.targets = list;
  Lcpsim__V1__Request request = LCPSIM__V1__REQUEST__INIT;
  request.id = 7;
  request.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  request.step = &step;
  size_t size = lcpsim__v1__request__get_packed_size(&request);
  *out = malloc(size);
  lcpsim__v1__request__pack(&request, *out);
  free(list);
  return size;
}

static void test_decoding_within_the_limit(void **state) {
  (void)state;
  unsigned char *bytes;
  size_t size = pack_step_of_empty_targets(2000, &bytes);
  assert_int_equal(size, 2 + 3 + 2 * 2000);
  size_t tree = 2000 * (sizeof(Lcpsim__V1__SetTargetRequest) + sizeof(void *));
  lcpd_error_t error = {0};
  lcpd_arena_t arena;
  /* Under the tree's size: refused, and said so. */
  lcpd_arena_init(&arena, tree / 2, &error);
  assert_null(lcpsim__v1__request__unpack(&arena.allocator, size, bytes));
  assert_int_equal(error.code, LCP_ERR_NO_MEMORY);
  lcpd_arena_destroy(&arena);
  /* With room: the tree protobuf-c builds, which packs to the same bytes. */
  error = (lcpd_error_t){0};
  lcpd_arena_init(&arena, 4 * tree, &error);
  Lcpsim__V1__Request *request = lcpsim__v1__request__unpack(&arena.allocator, size, bytes);
  assert_non_null(request);
  assert_int_equal(error.code, LCP_OK);
  assert_int_equal(request->id, 7);
  assert_int_equal(request->step->n_targets, 2000);
  unsigned char *again = malloc(size);
  assert_int_equal(lcpsim__v1__request__pack(request, again), size);
  assert_memory_equal(again, bytes, size);
  free(again);
  /* Malformed bytes are refused without touching the error. */
  bytes[3] ^= 0x7f; /* the step's length */
  assert_null(lcpsim__v1__request__unpack(&arena.allocator, size, bytes));
  assert_int_equal(error.code, LCP_OK);
  lcpd_arena_destroy(&arena);
  free(bytes);
}

static void test_state_is_whole_or_nothing(void **state) {
  (void)state;
  lcpd_error_t error = {0};
  lcpd_scene_t scene;
  lcpd_sim_t sim;
  if (lcpd_scene_builtin(&scene, &error) != LCP_OK || lcpd_sim_init(&sim, &scene, &error) != 0)
    fail_msg("built-in world: %s", error.message);
  for (int i = 0; i < 120; ++i)
    assert_int_equal(lcpd_sim_step(&sim, &error), LCP_OK);
  const lcp_world_t *world = sim.live.world;
  assert_true(lcp_world_get_contacts(world, NULL, 0) > 0);
  /* Every limit below what the State needs gives NULL and the error; from
   * there on, the whole State. */
  lcpd_arena_t arena;
  size_t needed = 0;
  for (size_t limit = 256; !needed; limit += 256) {
    error = (lcpd_error_t){0};
    lcpd_arena_init(&arena, limit, &error);
    Lcpsim__V1__State *s = lcpd_new_state(&arena, &sim, true, 9);
    if (s)
      needed = arena.used;
    else
      assert_int_equal(error.code, LCP_ERR_NO_MEMORY);
    lcpd_arena_destroy(&arena);
    assert_true(limit < ((size_t)1 << 20));
  }
  lcpd_arena_init(&arena, needed, &error);
  Lcpsim__V1__State *s = lcpd_new_state(&arena, &sim, true, 9);
  assert_non_null(s);
  /* Packed and read back, it holds the world's values. */
  size_t size = lcpsim__v1__state__get_packed_size(s);
  unsigned char *bytes = malloc(size);
  lcpsim__v1__state__pack(s, bytes);
  Lcpsim__V1__State *back = lcpsim__v1__state__unpack(NULL, size, bytes);
  assert_non_null(back);
  assert_int_equal(back->sequence, 9);
  assert_int_equal(back->step_count, 120);
  assert_true(back->time == lcp_world_time(world));
  assert_int_equal(back->n_robots, 1);
  const lcpd_robot_t *arm = &sim.live.robots[0];
  assert_string_equal(back->robots[0]->name, arm->name);
  double q[16];
  lcp_robot_info_t info;
  assert_int_equal(lcp_robot_get_info(world, arm->id, &info), LCP_OK);
  assert_int_equal(back->robots[0]->n_q, (size_t)info.nq);
  lcp_robot_get_q(world, arm->id, q, info.nq);
  assert_memory_equal(back->robots[0]->q, q, (size_t)info.nq * sizeof *q);
  assert_int_equal(back->robots[0]->n_link_poses, (size_t)arm->link_count);
  assert_int_equal(back->n_bodies, 2);
  for (size_t b = 0; b < back->n_bodies; ++b) {
    double position[3], orientation[4];
    lcp_body_get_pose(world, sim.live.bodies[b].id, position, orientation);
    assert_string_equal(back->bodies[b]->name, sim.live.bodies[b].name);
    assert_true(back->bodies[b]->pose->position->z == position[2]);
    assert_true(back->bodies[b]->pose->orientation->w == orientation[0]);
  }
  /* The box rests on the table: a contact names both. */
  assert_int_equal(back->n_contacts, (size_t)lcp_world_get_contacts(world, NULL, 0));
  bool box_on_table = false;
  for (size_t c = 0; c < back->n_contacts; ++c) {
    const char *a = back->contacts[c]->a, *b = back->contacts[c]->b;
    box_on_table = box_on_table || (strcmp(a, "box") == 0 && strcmp(b, "table") == 0) ||
                   (strcmp(a, "table") == 0 && strcmp(b, "box") == 0);
  }
  assert_true(box_on_table);
  lcpsim__v1__state__free_unpacked(back, NULL);
  free(bytes);
  lcpd_arena_destroy(&arena);
  lcpd_sim_destroy(&sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arena_limit_and_reset),
      cmocka_unit_test(test_decoding_within_the_limit),
      cmocka_unit_test(test_state_is_whole_or_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
