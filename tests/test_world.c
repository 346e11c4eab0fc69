/* SPDX-License-Identifier: Apache-2.0 */
/* The world API: bodies and geoms, bad input refused with the world
 * unchanged, determinism and state snapshots (issue 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "id_pool.h"
#include "lcpsim/lcpsim.h"
#include "scenes.h"
#include "test_util.h"
#include "world_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lcp_world_t *pile_world(int32_t n) {
  lcp_world_settings_t s = lcp_scene_settings();
  lcp_world_t *w = test_create_world(&s);
  assert_int_equal(lcp_scene_pile(w, n, NULL), LCP_OK);
  return w;
}

/* Two runs of the pile scene give bitwise identical state hashes. */
static void test_pile_is_deterministic(void **state) {
  (void)state;
  lcp_world_t *a = pile_world(300), *b = pile_world(300);
  assert_int_equal(lcp_world_state_hash(a), lcp_world_state_hash(b));
  test_step_n(a, 400);
  test_step_n(b, 400);
  lcp_step_stats_t st;
  lcp_world_get_stats(a, &st);
  assert_true(st.contacts > 100); /* the pile really piled up */
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
  assert_null(a);
}

/* Snapshot mid-run, carry on, restore, carry on again: the same hash as the
 * uninterrupted run, and as a fresh world restored from the snapshot. */
static void test_snapshot_restore_is_bitwise(void **state) {
  (void)state;
  lcp_world_t *w = pile_world(200);
  test_step_n(w, 150);
  size_t size = lcp_world_state_size(w);
  void *snap = malloc(size);
  size_t written = 0;
  assert_int_equal(lcp_world_save_state(w, snap, size, &written), LCP_OK);
  assert_int_equal(written, size);
  test_step_n(w, 150);
  uint64_t uninterrupted = lcp_world_state_hash(w);
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_OK);
  assert_true(lcp_world_time(w) == 150.0 / 240.0 ||
              fabs(lcp_world_time(w) - 150.0 / 240.0) < 1e-12);
  test_step_n(w, 150);
  assert_true(lcp_world_state_hash(w) == uninterrupted);

  lcp_world_t *fresh = pile_world(200);
  assert_int_equal(lcp_world_restore_state(fresh, snap, size), LCP_OK);
  test_step_n(fresh, 150);
  assert_true(lcp_world_state_hash(fresh) == uninterrupted);
  lcp_world_destroy(&fresh);

  /* A snapshot of another world is refused, and nothing changes. */
  lcp_world_t *other = pile_world(201);
  uint64_t before = lcp_world_state_hash(other);
  assert_int_equal(lcp_world_restore_state(other, snap, size), LCP_ERR_MISMATCH);
  assert_true(lcp_world_state_hash(other) == before);
  /* A truncated or corrupted one too. */
  assert_int_equal(lcp_world_restore_state(w, snap, size - 1), LCP_ERR_INVALID_ARGUMENT);
  ((unsigned char *)snap)[0] ^= 0xff;
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_ERR_INVALID_ARGUMENT);
  lcp_world_destroy(&other);
  lcp_world_destroy(&w);
  free(snap);
}

/* A snapshot taken before the geoms changed is refused after, even when the
 * counts of bodies and geoms are the same again (the layout the snapshot
 * names is recomputed when the model changes, not kept from before). */
static void test_snapshot_refused_after_geoms_change(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_body_def_t def = lcp_body_def_default();
  def.position[2] = 1.0;
  lcp_body_id body;
  lcp_geom_id geom;
  assert_int_equal(lcp_body_add(w, &def, &body), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  assert_int_equal(lcp_geom_add(w, body, &box, &geom), LCP_OK);
  size_t size = lcp_world_state_size(w), written = 0;
  void *snap = malloc(size);
  assert_int_equal(lcp_world_save_state(w, snap, size, &written), LCP_OK);
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_OK);
  /* the body's box becomes a sphere: one body, one geom, as before */
  assert_int_equal(lcp_geom_remove(w, geom), LCP_OK);
  lcp_geom_def_t sphere = test_sphere_def(0.1, 0.5);
  assert_int_equal(lcp_geom_add(w, body, &sphere, NULL), LCP_OK);
  assert_int_equal(lcp_world_state_size(w), size);
  uint64_t before = lcp_world_state_hash(w);
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_ERR_MISMATCH);
  assert_true(lcp_world_state_hash(w) == before);
  /* a snapshot of the world as it is now is taken back */
  assert_int_equal(lcp_world_save_state(w, snap, size, &written), LCP_OK);
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_OK);
  lcp_world_destroy(&w);
  free(snap);
}

/* Bad bodies and geoms are refused with an error code and a message, and the
 * world is unchanged (same bodies, same state hash). */
static void test_bad_input_is_refused(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id good = test_add_solid(w, &box, 1.0, (double[]){0, 0, 1}, NULL);
  assert_int_not_equal(good, LCP_NULL_ID);
  uint64_t hash = lcp_world_state_hash(w);
  int32_t bodies = lcp_world_body_count(w);
  lcp_body_id id = 12345;

  lcp_body_def_t def = lcp_body_def_default();
  def.mass = 0.0;
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "mass"));
  def.mass = -1.0;
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  def = lcp_body_def_default();
  def.inertia[8] = -1.0; /* not positive definite */
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "inertia"));
  def = lcp_body_def_default();
  def.inertia[1] = 2.0; /* not symmetric */
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  def = lcp_body_def_default();
  def.inertia[1] = def.inertia[3] = 1.0; /* symmetric, singular */
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  def = lcp_body_def_default();
  def.position[1] = NAN;
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lcp_world_last_error(w), "position"));
  def = lcp_body_def_default();
  def.orientation[0] = INFINITY;
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  def = lcp_body_def_default();
  def.orientation[0] = 0.0;
  assert_int_equal(lcp_body_add(w, &def, &id), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(id, 12345); /* nothing written on failure */

  /* Degenerate hulls: too few points, coplanar points, collinear points. */
  lcp_geom_def_t hull = lcp_geom_def_default();
  hull.type = LCP_SHAPE_HULL;
  const double three[] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  hull.hull_points = three;
  hull.hull_point_count = 3;
  assert_int_equal(lcp_geom_add(w, good, &hull, NULL), LCP_ERR_DEGENERATE);
  const double flat[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.5, 0.5, 0};
  hull.hull_points = flat;
  hull.hull_point_count = 5;
  assert_int_equal(lcp_geom_add(w, good, &hull, NULL), LCP_ERR_DEGENERATE);
  const double line[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
  hull.hull_points = line;
  hull.hull_point_count = 4;
  assert_int_equal(lcp_geom_add(w, good, &hull, NULL), LCP_ERR_DEGENERATE);
  const double nan_points[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, NAN};
  hull.hull_points = nan_points;
  assert_int_equal(lcp_geom_add(w, good, &hull, NULL), LCP_ERR_INVALID_ARGUMENT);

  /* Other bad geoms and calls. */
  lcp_geom_def_t g = test_sphere_def(-1.0, 0.5);
  assert_int_equal(lcp_geom_add(w, good, &g, NULL), LCP_ERR_INVALID_ARGUMENT);
  g = test_sphere_def(0.1, NAN);
  assert_int_equal(lcp_geom_add(w, good, &g, NULL), LCP_ERR_INVALID_ARGUMENT);
  g = lcp_geom_def_default();
  g.type = LCP_SHAPE_PLANE;
  assert_int_equal(lcp_geom_add(w, good, &g, NULL), LCP_ERR_INVALID_ARGUMENT); /* dynamic */
  g = test_sphere_def(0.1, 0.5);
  assert_int_equal(lcp_geom_add(w, 999, &g, NULL), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_set_pose(w, good, (double[]){0, NAN, 0}, (double[]){1, 0, 0, 0}),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_set_velocity(w, good, (double[]){0, 0, INFINITY}, (double[]){0, 0, 0}),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_apply_force_at_center(w, good, (double[]){NAN, 0, 0}),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_remove(w, LCP_WORLD_BODY), LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_body_remove(w, 777), LCP_ERR_NOT_FOUND);
  lcp_world_settings_t s = lcp_world_settings_default();
  s.timestep = -1.0;
  assert_int_equal(lcp_world_set_settings(w, &s), LCP_ERR_INVALID_ARGUMENT);
  s = lcp_world_settings_default();
  s.sor_omega = 2.0;
  assert_int_equal(lcp_world_set_settings(w, &s), LCP_ERR_INVALID_ARGUMENT);
  lcp_world_get_settings(w, &s);
  assert_true(s.timestep > 0.0 && s.sor_omega < 2.0);

  assert_int_equal(lcp_world_body_count(w), bodies);
  assert_true(lcp_world_state_hash(w) == hash);
  lcp_world_destroy(&w);
}

/* Ids are never reused (c takes a's index, not its id); removing a body
 * removes its geoms and contacts. */
static void test_bodies_and_geoms(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id a = test_add_solid(w, &box, 1.0, (double[]){0, 0, 0.1}, NULL);
  lcp_body_id b = test_add_solid(w, &box, 1.0, (double[]){1, 0, 0.1}, NULL);
  assert_true(a != LCP_NULL_ID && a != LCP_WORLD_BODY && b != LCP_NULL_ID && b != a);
  test_step_n(w, 5);
  assert_true(lcp_world_get_contacts(w, NULL, 0) >= 8);
  assert_int_equal(lcp_body_remove(w, a), LCP_OK);
  double p[3];
  assert_int_equal(lcp_body_get_pose(w, a, p, NULL), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_get_pose(w, b, p, NULL), LCP_OK);
  assert_true(fabs(p[0] - 1.0) < 1e-9);
  lcp_body_id c = test_add_solid(w, &box, 1.0, (double[]){2, 0, 0.1}, NULL);
  assert_true(c != LCP_NULL_ID && c != a && c != b);
  assert_int_equal(lcp_body_get_pose(w, a, p, NULL), LCP_ERR_NOT_FOUND);
  test_step_n(w, 5);
  lcp_contact_info_t contacts[32];
  int32_t n = lcp_world_get_contacts(w, contacts, 32);
  assert_true(n >= 8);
  for (int32_t i = 0; i < n; ++i)
    assert_true(contacts[i].body_b == b || contacts[i].body_b == c);
  lcp_body_id ids[8];
  assert_int_equal(lcp_world_body_ids(w, ids, 8), 3);
  assert_int_equal(ids[0], LCP_WORLD_BODY);
  assert_int_equal(ids[1], b);
  assert_int_equal(ids[2], c);
  /* Forces: a force at the centre accelerates without spin; off-centre spins. */
  lcp_world_settings_t s = lcp_world_settings_default();
  s.gravity[2] = 0.0;
  lcp_world_t *z = test_create_world(&s);
  lcp_body_id f = test_add_solid(z, &box, 2.0, (double[]){0, 0, 0}, NULL);
  assert_int_equal(lcp_body_apply_force(z, f, (double[]){4, 0, 0}, (double[]){0, 0.1, 0}), LCP_OK);
  test_step_n(z, 1);
  double v[3], om[3];
  lcp_body_get_velocity(z, f, v, om);
  assert_true(fabs(v[0] - 2.0 * s.timestep) < 1e-12); /* F/m h */
  assert_true(om[2] < 0.0);                           /* (0, 0.1, 0) × (4, 0, 0) = −0.4 z */
  test_step_n(z, 1);                                  /* forces last one step */
  double v2[3];
  lcp_body_get_velocity(z, f, v2, NULL);
  assert_true(fabs(v2[0] - v[0]) < 1e-12);
  lcp_world_destroy(&z);
  lcp_world_destroy(&w);
  lcp_world_destroy(&w); /* destroying twice through the NULLed pointer is harmless */
}

/* The index of an id (the part id_pool.h packs in the low bits): the tests
 * look inside ids only to know that an index was reused. */
static uint32_t index_of(int32_t id) { return (uint32_t)id & ID_INDEX_MASK; }

/* Ids no live object has, refused by body and geom calls alike: garbage,
 * and the index of a live object's id (a body's or a geom's) under other
 * generations. */
static void assert_bad_ids_refused(lcp_world_t *w, int32_t live) {
  const int32_t generation_step = (int32_t)(UINT32_C(1) << ID_INDEX_BITS);
  const int32_t bad[] = {LCP_NULL_ID,
                         -7,
                         INT32_MIN,
                         INT32_MAX,
                         999999,
                         live + generation_step,
                         live + 5 * generation_step};
  double p[3];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    assert_int_equal(lcp_body_get_pose(w, bad[i], p, NULL), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_body_apply_force_at_center(w, bad[i], (double[]){1, 0, 0}),
                     LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_body_remove(w, bad[i]), LCP_ERR_NOT_FOUND);
    lcp_body_id owner;
    assert_int_equal(lcp_geom_get_body(w, bad[i], &owner), LCP_ERR_NOT_FOUND);
    assert_int_equal(lcp_geom_remove(w, bad[i]), LCP_ERR_NOT_FOUND);
  }
}

/* A removed body's id is refused by every call taking a body, even once a
 * new body has its index; the new body's id works, and the stale id
 * touches nothing of it. */
static void test_stale_body_id_refused(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_body_id ids[2];
  assert_int_equal(lcp_world_body_ids(w, ids, 2), 1);
  assert_int_equal(ids[0], LCP_WORLD_BODY);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id old = test_add_solid(w, &box, 1.0, (double[]){1, 0, 0}, NULL);
  lcp_body_id keep = test_add_solid(w, &box, 1.0, (double[]){2, 0, 0}, NULL);
  assert_int_equal(lcp_body_remove(w, old), LCP_OK);
  lcp_body_id fresh = test_add_solid(w, &box, 3.0, (double[]){3, 0, 0}, NULL);
  assert_true(fresh != LCP_NULL_ID && fresh != old && fresh != keep);
  assert_int_equal(index_of(fresh), index_of(old)); /* the index was reused */

  uint64_t hash = lcp_world_state_hash(w);
  double p[3], v[3], m;
  double q[4] = {1, 0, 0, 0}, zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  lcp_body_type_t type;
  assert_int_equal(lcp_body_get_pose(w, old, p, NULL), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_set_pose(w, old, one, q), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_get_velocity(w, old, v, NULL), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_set_velocity(w, old, one, zero), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_get_mass(w, old, &m, NULL), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_get_type(w, old, &type), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_apply_force(w, old, one, zero), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_apply_force_at_center(w, old, one), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_apply_torque(w, old, one), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_geom_add(w, old, &box, NULL), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_body_remove(w, old), LCP_ERR_NOT_FOUND);
  assert_non_null(strstr(lcp_world_last_error(w), "no body"));
  assert_bad_ids_refused(w, fresh);
  assert_true(lcp_world_state_hash(w) == hash); /* nothing reached the new body */

  assert_int_equal(lcp_body_get_pose(w, fresh, p, NULL), LCP_OK);
  assert_true(p[0] == 3.0);
  assert_int_equal(lcp_body_get_mass(w, fresh, &m, NULL), LCP_OK);
  assert_true(m == 3.0);
  assert_int_equal(lcp_body_get_pose(w, keep, p, NULL), LCP_OK);
  assert_true(p[0] == 2.0);
  assert_int_equal(lcp_world_body_ids(w, ids, 2), 2);
  assert_int_equal(lcp_world_body_count(w), 3);
  lcp_body_id all[3];
  assert_int_equal(lcp_world_body_ids(w, all, 3), 3);
  assert_int_equal(all[0], LCP_WORLD_BODY);
  assert_int_equal(all[1], keep);
  assert_int_equal(all[2], fresh); /* creation order */
  assert_int_equal(lcp_body_remove(w, fresh), LCP_OK);
  assert_int_equal(lcp_body_get_pose(w, fresh, p, NULL), LCP_ERR_NOT_FOUND);
  lcp_world_destroy(&w);
}

/* The same for geoms: a removed geom's id is refused once a new geom has
 * its index, and removing through the stale id leaves the new geom alone. */
static void test_stale_geom_id_refused(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_body_def_t def = lcp_body_def_default();
  lcp_body_id body;
  assert_int_equal(lcp_body_add(w, &def, &body), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_geom_def_t sphere = test_sphere_def(0.3, 0.5);
  lcp_geom_id old, fresh;
  assert_int_equal(lcp_geom_add(w, body, &box, &old), LCP_OK);
  assert_int_equal(lcp_geom_remove(w, old), LCP_OK);
  assert_int_equal(lcp_geom_add(w, LCP_WORLD_BODY, &sphere, &fresh), LCP_OK);
  assert_true(fresh != old);
  assert_int_equal(index_of(fresh), index_of(old));

  double lo[3], hi[3];
  lcp_body_id owner = 12345;
  assert_int_equal(lcp_geom_get_body(w, old, &owner), LCP_ERR_NOT_FOUND);
  assert_int_equal(owner, 12345);
  assert_int_equal(lcp_geom_get_aabb(w, old, lo, hi), LCP_ERR_NOT_FOUND);
  assert_int_equal(lcp_geom_remove(w, old), LCP_ERR_NOT_FOUND);
  assert_non_null(strstr(lcp_world_last_error(w), "no geom"));
  assert_bad_ids_refused(w, fresh);

  /* the new geom is there, on its own body, with its own shape */
  assert_int_equal(lcp_geom_get_body(w, fresh, &owner), LCP_OK);
  assert_int_equal(owner, LCP_WORLD_BODY);
  assert_int_equal(lcp_geom_get_aabb(w, fresh, lo, hi), LCP_OK);
  assert_true(fabs(hi[0] - 0.3) < 1e-12 && fabs(lo[0] + 0.3) < 1e-12);
  assert_int_equal(lcp_geom_remove(w, fresh), LCP_OK);
  assert_int_equal(lcp_geom_get_aabb(w, fresh, lo, hi), LCP_ERR_NOT_FOUND);
  lcp_world_destroy(&w);
}

/* Runs one sequence of adds and removes, and stepping in between. */
static lcp_world_t *churned_world(lcp_body_id out_ids[8], int32_t *out_count) {
  lcp_world_t *w = test_create_world(NULL);
  assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id b[6];
  for (int i = 0; i < 6; ++i)
    b[i] = test_add_solid(w, &box, 1.0, (double[]){0.5 * i, 0, 0.2}, NULL);
  test_step_n(w, 20);
  assert_int_equal(lcp_body_remove(w, b[1]), LCP_OK);
  assert_int_equal(lcp_body_remove(w, b[4]), LCP_OK);
  assert_int_equal(lcp_body_remove(w, b[2]), LCP_OK);
  for (int i = 0; i < 2; ++i)
    assert_true(test_add_solid(w, &box, 1.0, (double[]){0.5 * i, 1, 0.2}, NULL) != LCP_NULL_ID);
  test_step_n(w, 20);
  *out_count = lcp_world_body_ids(w, out_ids, 8);
  return w;
}

/* Id assignment is deterministic, removals included: the same calls on two
 * worlds give the same ids, and one world's snapshot restores into the
 * other (the snapshot's layout names the ids). */
static void test_ids_are_deterministic(void **state) {
  (void)state;
  lcp_body_id ids_a[8], ids_b[8];
  int32_t count_a, count_b;
  lcp_world_t *a = churned_world(ids_a, &count_a);
  lcp_world_t *b = churned_world(ids_b, &count_b);
  assert_int_equal(count_a, 6); /* the world body, 6 added, 3 removed, 2 added */
  assert_int_equal(count_b, count_a);
  for (int32_t i = 0; i < count_a; ++i)
    assert_int_equal(ids_a[i], ids_b[i]);
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  test_step_n(a, 10);
  size_t size = lcp_world_state_size(a);
  void *snap = malloc(size);
  assert_int_equal(lcp_world_save_state(a, snap, size, NULL), LCP_OK);
  assert_int_equal(lcp_world_restore_state(b, snap, size), LCP_OK);
  assert_true(lcp_world_state_hash(a) == lcp_world_state_hash(b));
  free(snap);
  lcp_world_destroy(&a);
  lcp_world_destroy(&b);
}

/* A snapshot taken before a body was removed and another added under its
 * index is refused after: the new body has another id. */
static void test_snapshot_refused_after_body_replaced(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id old = test_add_solid(w, &box, 1.0, (double[]){0, 0, 1}, NULL);
  size_t size = lcp_world_state_size(w);
  void *snap = malloc(size);
  assert_int_equal(lcp_world_save_state(w, snap, size, NULL), LCP_OK);
  assert_int_equal(lcp_body_remove(w, old), LCP_OK);
  lcp_body_id fresh = test_add_solid(w, &box, 1.0, (double[]){0, 0, 1}, NULL);
  assert_int_equal(index_of(fresh), index_of(old));
  assert_int_equal(lcp_world_state_size(w), size);
  uint64_t before = lcp_world_state_hash(w);
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_ERR_MISMATCH);
  assert_true(lcp_world_state_hash(w) == before);
  free(snap);
  lcp_world_destroy(&w);
}

/* A snapshot whose warm-start cache names geom slots the world does not have,
 * or more points than a manifold holds, is refused, and nothing changes. In
 * a world without robots the cache is the snapshot's last bytes. */
static void test_snapshot_with_bad_contact_refused(void **state) {
  (void)state;
  lcp_world_t *w = test_create_world(NULL);
  assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  assert_true(test_add_solid(w, &box, 1.0, (double[]){0, 0, 0.1}, NULL) != LCP_NULL_ID);
  test_step_n(w, 10);
  size_t size = lcp_world_state_size(w);
  unsigned char *snap = malloc(size);
  assert_int_equal(lcp_world_save_state(w, snap, size, NULL), LCP_OK);
  unsigned char *last = snap + size - sizeof(cached_manifold);
  cached_manifold good;
  memcpy(&good, last, sizeof good);
  assert_int_equal(good.slot_a, 0); /* the plane */
  assert_int_equal(good.slot_b, 1); /* the box */
  assert_int_equal(good.point_count, 4);
  test_step_n(w, 1);
  uint64_t before = lcp_world_state_hash(w);
  const cached_manifold bad[] = {
      {.slot_a = 0, .slot_b = 2, .point_count = 4},  /* no geom at slot 2 */
      {.slot_a = 1, .slot_b = 0, .point_count = 4},  /* out of order */
      {.slot_a = -1, .slot_b = 1, .point_count = 4}, /* no slot -1 */
      {.slot_a = 0, .slot_b = 1, .point_count = MANIFOLD_MAX_POINTS + 1},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    memcpy(last, &bad[i], sizeof bad[i]);
    assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_ERR_INVALID_ARGUMENT);
    assert_true(lcp_world_state_hash(w) == before);
  }
  memcpy(last, &good, sizeof good);
  assert_int_equal(lcp_world_restore_state(w, snap, size), LCP_OK);
  free(snap);
  lcp_world_destroy(&w);
}

/* Removing a geom made before the others moves their slots down; the warm
 * start, kept per pair of geom slots, follows them. A static body far from
 * the rest changes nothing in the physics, so a world that loses it
 * mid-run goes on bitwise as a world that never had it. */
static void test_warm_start_survives_earlier_removal(void **state) {
  (void)state;
  lcp_world_t *with = NULL, *without = NULL;
  assert_int_equal(lcp_world_create(NULL, &with), LCP_OK);
  assert_int_equal(lcp_world_create(NULL, &without), LCP_OK);
  lcp_geom_def_t box = test_box_def(0.1, 0.1, 0.1, 0.5);
  lcp_body_id far = LCP_NULL_ID;
  lcp_body_id stacked[2][3];
  for (int k = 0; k < 2; ++k) {
    lcp_world_t *w = k == 0 ? with : without;
    assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
    if (k == 0) {
      lcp_body_def_t def = lcp_body_def_default();
      def.type = LCP_BODY_STATIC;
      def.position[0] = 50.0;
      assert_int_equal(lcp_body_add(w, &def, &far), LCP_OK);
      assert_int_equal(lcp_geom_add(w, far, &box, NULL), LCP_OK);
    }
    for (int i = 0; i < 3; ++i)
      stacked[k][i] = test_add_solid(w, &box, 1.0, (double[]){0.01 * i, 0, 0.1 + 0.2 * i}, NULL);
  }
  test_step_n(with, 60);
  test_step_n(without, 60);
  assert_int_equal(lcp_body_remove(with, far), LCP_OK);
  test_step_n(with, 1);
  test_step_n(without, 1);
  lcp_step_stats_t st;
  lcp_world_get_stats(with, &st);
  assert_true(st.contacts >= 12);                 /* box on ground, box on box, box on box */
  assert_int_equal(st.warm_started, st.contacts); /* every point found its impulses */
  test_step_n(with, 60);
  test_step_n(without, 60);
  for (int i = 0; i < 3; ++i) {
    double pa[3], pb[3];
    assert_int_equal(lcp_body_get_pose(with, stacked[0][i], pa, NULL), LCP_OK);
    assert_int_equal(lcp_body_get_pose(without, stacked[1][i], pb, NULL), LCP_OK);
    assert_memory_equal(pa, pb, sizeof pa);
  }
  lcp_world_destroy(&with);
  lcp_world_destroy(&without);
}

/* The three solvers agree on a small resting contact problem. */
static void test_solvers_agree_on_resting_box(void **state) {
  (void)state;
  double z[3];
  for (int k = 0; k < 3; ++k) {
    lcp_world_settings_t s = lcp_world_settings_default();
    s.solver = (lcp_solver_kind_t)k;
    s.iterations = 200;
    s.sor_omega = k == 1 ? 0.3 : 1.0;
    lcp_world_t *w = test_create_world(&s);
    assert_int_equal(test_add_plane(w, 0.5, NULL), LCP_OK);
    lcp_geom_def_t box = test_box_def(0.2, 0.2, 0.2, 0.5);
    lcp_body_id id = test_add_solid(w, &box, 1.0, (double[]){0, 0, 0.2}, NULL);
    test_step_n(w, 240);
    double p[3];
    lcp_body_get_pose(w, id, p, NULL);
    z[k] = p[2];
    lcp_step_stats_t st;
    lcp_world_get_stats(w, &st);
    assert_int_equal(st.contacts, 4);
    lcp_contact_info_t c[4];
    lcp_world_get_contacts(w, c, 4);
    double total = 0;
    for (int i = 0; i < 4; ++i)
      total += c[i].normal_impulse;
    /* At rest the normal impulses carry the weight: Σλn = m g h. */
    assert_true(fabs(total - 9.81 * s.timestep) < 1e-6);
    lcp_world_destroy(&w);
  }
  assert_true(fabs(z[0] - z[2]) < 1e-4 && fabs(z[1] - z[2]) < 1e-4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pile_is_deterministic),
      cmocka_unit_test(test_snapshot_restore_is_bitwise),
      cmocka_unit_test(test_snapshot_refused_after_geoms_change),
      cmocka_unit_test(test_bad_input_is_refused),
      cmocka_unit_test(test_bodies_and_geoms),
      cmocka_unit_test(test_stale_body_id_refused),
      cmocka_unit_test(test_stale_geom_id_refused),
      cmocka_unit_test(test_ids_are_deterministic),
      cmocka_unit_test(test_snapshot_refused_after_body_replaced),
      cmocka_unit_test(test_snapshot_with_bad_contact_refused),
      cmocka_unit_test(test_warm_start_survives_earlier_removal),
      cmocka_unit_test(test_solvers_agree_on_resting_box),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
