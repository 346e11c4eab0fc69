/* SPDX-License-Identifier: Apache-2.0 */
/* The id pool behind body, geom and robot ids (server/engine/id_pool.h):
 * generations, the order in which freed indices come back, retirement of an
 * exhausted index, and a full table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "id_pool.h"
#include "lcpsim/lcpsim.h"

static uint32_t index_of(int32_t id) { return (uint32_t)id & ID_INDEX_MASK; }
static uint32_t generation_of(int32_t id) { return (uint32_t)id >> ID_INDEX_BITS; }

/* The first id is 0 (the world body's); a freed index comes back under the
 * next generation, the most recently freed first; stale ids resolve to
 * nothing. */
static void test_generations_and_reuse(void **state) {
  (void)state;
  id_pool pool;
  lcp__id_pool_init(&pool);
  int32_t a, b, c;
  assert_int_equal(lcp__id_pool_add(&pool, 10, &a), LCP_OK);
  assert_int_equal(lcp__id_pool_add(&pool, 11, &b), LCP_OK);
  assert_int_equal(lcp__id_pool_add(&pool, 12, &c), LCP_OK);
  assert_int_equal(a, 0);
  assert_int_equal(id_pool_slot(&pool, b), 11);
  lcp__id_pool_remove(&pool, a);
  lcp__id_pool_remove(&pool, c);
  assert_int_equal(id_pool_slot(&pool, a), -1);
  assert_int_equal(id_pool_slot(&pool, c), -1);
  /* the id the next add will hand out is not live before it is handed out */
  int32_t c_next = (int32_t)((generation_of(c) + 1) << ID_INDEX_BITS | index_of(c));
  assert_int_equal(id_pool_slot(&pool, c_next), -1);
  int32_t d, e, f;
  assert_int_equal(lcp__id_pool_add(&pool, 20, &d), LCP_OK);
  assert_int_equal(lcp__id_pool_add(&pool, 21, &e), LCP_OK);
  assert_int_equal(lcp__id_pool_add(&pool, 22, &f), LCP_OK);
  assert_int_equal(d, c_next); /* last freed, first reused */
  assert_int_equal(index_of(e), index_of(a));
  assert_int_equal(generation_of(e), generation_of(a) + 1);
  assert_int_equal(index_of(f), 3); /* no free index left: a new one */
  assert_int_equal(id_pool_slot(&pool, a), -1);
  assert_int_equal(id_pool_slot(&pool, c), -1);
  assert_int_equal(id_pool_slot(&pool, d), 20);
  assert_int_equal(id_pool_slot(&pool, e), 21);
  id_pool_move(&pool, e, 5);
  assert_int_equal(id_pool_slot(&pool, e), 5);
  assert_int_equal(id_pool_slot(&pool, -1), -1);
  assert_int_equal(id_pool_slot(&pool, INT32_MIN), -1);
  assert_int_equal(id_pool_slot(&pool, INT32_MAX), -1);
  lcp__id_pool_destroy(&pool);
}

/* One index used over and over goes through every generation once and is
 * then retired: no id repeats, every id stays non-negative, and the next
 * object gets a fresh index. */
static void test_exhausted_index_is_retired(void **state) {
  (void)state;
  id_pool pool;
  lcp__id_pool_init(&pool);
  int32_t previous = -1;
  for (uint32_t g = 0; g <= ID_GENERATION_MAX; ++g) {
    int32_t id;
    assert_int_equal(lcp__id_pool_add(&pool, 7, &id), LCP_OK);
    assert_true(id >= 0);
    assert_int_equal(index_of(id), 0);
    assert_int_equal(generation_of(id), g);
    assert_true(id != previous);
    assert_int_equal(id_pool_slot(&pool, id), 7);
    if (previous >= 0)
      assert_int_equal(id_pool_slot(&pool, previous), -1);
    lcp__id_pool_remove(&pool, id);
    previous = id;
  }
  int32_t last_of_index0 = previous, next;
  assert_int_equal(lcp__id_pool_add(&pool, 8, &next), LCP_OK);
  assert_int_equal(index_of(next), 1);
  assert_int_equal(generation_of(next), 0);
  /* the retired index resolves to nothing under any generation */
  for (uint32_t g = 0; g <= ID_GENERATION_MAX; ++g)
    assert_int_equal(id_pool_slot(&pool, (int32_t)(g << ID_INDEX_BITS)), -1);
  assert_int_equal(id_pool_slot(&pool, last_of_index0), -1);
  lcp__id_pool_destroy(&pool);
}

/* When every index is live the pool refuses another id and is unchanged;
 * a removal makes room again. */
static void test_full_pool_refuses(void **state) {
  (void)state;
  id_pool pool;
  lcp__id_pool_init(&pool);
  const int32_t n = (int32_t)(ID_INDEX_MASK + 1u);
  int32_t id = -1;
  for (int32_t i = 0; i < n; ++i)
    assert_int_equal(lcp__id_pool_add(&pool, i, &id), LCP_OK);
  assert_int_equal(id, (int32_t)ID_INDEX_MASK); /* the last index, generation 0 */
  int32_t refused = 12345;
  assert_int_equal(lcp__id_pool_add(&pool, 0, &refused), LCP_ERR_NO_MEMORY);
  assert_int_equal(refused, 12345);
  assert_int_equal(pool.count, n);
  assert_int_equal(id_pool_slot(&pool, id), n - 1);
  lcp__id_pool_remove(&pool, 77);
  int32_t again;
  assert_int_equal(lcp__id_pool_add(&pool, 3, &again), LCP_OK);
  assert_int_equal(index_of(again), 77);
  assert_int_equal(generation_of(again), 1);
  lcp__id_pool_destroy(&pool);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_generations_and_reuse),
      cmocka_unit_test(test_exhausted_index_is_retired),
      cmocka_unit_test(test_full_pool_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
