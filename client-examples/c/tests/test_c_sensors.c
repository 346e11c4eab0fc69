/* SPDX-License-Identifier: Apache-2.0 */
/* The C client's reusable state buffer and sensors against a live lcpsimd
 * (the built-in world: 'arm7', a table and a box): a state decoded into a
 * buffer kept across 300 ticks encodes to the same bytes as the same state
 * decoded afresh; an IMU on the fixed base reads the specific force
 * R^T (a - g) = (0, 0, +9.81) m/s^2 and no rotation; energy and solver
 * statistics come exactly when asked for. */
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

static const char *daemon_path;

typedef test_live_t live_t;

static int start_live(void **state) { return test_live_start(daemon_path, (test_live_t **)state); }

static int stop_live(void **state) { return test_live_stop((test_live_t **)state); }

/* The state's wire encoding, malloc'd. */
static uint8_t *encode(const lcpsim_state_t *state, size_t *size) {
  *size = lcpsim__v1__state__get_packed_size(state);
  uint8_t *bytes = malloc(*size ? *size : 1);
  assert_non_null(bytes);
  lcpsim__v1__state__pack(state, bytes);
  return bytes;
}

static void assert_same_state(const lcpsim_state_t *a, const lcpsim_state_t *b) {
  size_t size_a = 0, size_b = 0;
  uint8_t *bytes_a = encode(a, &size_a);
  uint8_t *bytes_b = encode(b, &size_b);
  assert_int_equal(size_a, size_b);
  assert_memory_equal(bytes_a, bytes_b, size_a);
  free(bytes_a);
  free(bytes_b);
}

/* 300 ticks of a moving arm (the box falling onto the table, so the contacts change in number):
 * each tick's Step state, decoded into the one buffer, equals that world's GetState decoded
 * afresh, and a GetState into a second buffer equals it too. */
static void reused_buffer_matches_fresh_states(void **state) {
  live_t *live = *state;
  lcpsim_client_t *c = live->client;
  lcpsim_body_state_change_t lift = {
      .name = "box", .has_pose = true, .pose = {.position = {0.6, 0.0, 0.9}}};
  assert_int_equal(lcpsim_client_set_body_state(c, &lift), LCPSIM_OK);
  lcpsim_state_buffer_t *buffer = NULL, *other = NULL;
  assert_int_equal(lcpsim_state_buffer_new(&buffer), LCPSIM_OK);
  assert_int_equal(lcpsim_state_buffer_new(&other), LCPSIM_OK);
  const unsigned sensors = LCPSIM_SENSOR_ALL;
  size_t most_contacts = 0;
  for (int tick = 0; tick < 300; ++tick) {
    double position = 0.8 * sin(0.05 * tick);
    lcpsim_target_t target = {.robot = "arm7",
                              .mode = LCPSIM_MODE_POSITION,
                              .position = &position,
                              .n_position = 1,
                              .indices = (const int32_t[]){1},
                              .n_indices = 1,
                              .kp = (const double[]){200.0},
                              .n_kp = 1,
                              .kd = (const double[]){5.0},
                              .n_kd = 1};
    const lcpsim_state_t *stepped = NULL;
    assert_int_equal(
        lcpsim_client_step_into(c, 1, &target, 1, LCPSIM_WITH_CONTACTS, sensors, buffer, &stepped),
        LCPSIM_OK);
    assert_int_equal(stepped->step_count, (uint64_t)tick + 1);
    lcpsim_state_t *fresh = NULL;
    assert_int_equal(lcpsim_client_get_state_sensors(c, LCPSIM_WITH_CONTACTS, sensors, &fresh),
                     LCPSIM_OK);
    assert_same_state(stepped, fresh);
    const lcpsim_state_t *again = NULL;
    assert_int_equal(lcpsim_client_get_state_into(c, LCPSIM_WITH_CONTACTS, sensors, other, &again),
                     LCPSIM_OK);
    assert_same_state(again, fresh);
    if (fresh->n_contacts > most_contacts)
      most_contacts = fresh->n_contacts;
    lcpsim_state_destroy(&fresh);
  }
  /* The box landed: the states differed in size along the way. */
  assert_true(most_contacts > 0);
  assert_true(lcpsim_state_buffer_capacity(buffer) > 0);
  /* A failed call leaves no state behind. */
  const lcpsim_state_t *failed = (const lcpsim_state_t *)buffer;
  lcpsim_target_t unknown = {.robot = "nobody"};
  assert_int_equal(
      lcpsim_client_step_into(c, 1, &unknown, 1, LCPSIM_WITHOUT_CONTACTS, 0, buffer, &failed),
      LCPSIM_ERR_NOT_FOUND);
  assert_null(failed);
  lcpsim_state_buffer_destroy(&buffer);
  lcpsim_state_buffer_destroy(&other);
  assert_null(buffer);
}

/* An IMU on the fixed base at rest: specific force R^T (a - g) with a = 0 and g = (0, 0, -9.81)
 * is +9.81 along the site's z (up), to 1e-9 m/s^2; no rotation. */
static void imu_at_rest_reads_gravity_up(void **state) {
  live_t *live = *state;
  lcpsim_client_t *c = live->client;
  lcpsim_imu_t imu = {.name = "base_imu", .robot = "arm7", .link = "base_link"};
  assert_int_equal(lcpsim_client_add_imu(c, &imu), LCPSIM_OK);
  /* The same name again is refused. */
  assert_true(lcpsim_client_add_imu(c, &imu) < 0);
  lcpsim_state_buffer_t *buffer = NULL;
  assert_int_equal(lcpsim_state_buffer_new(&buffer), LCPSIM_OK);
  const lcpsim_state_t *s = NULL;
  assert_int_equal(lcpsim_client_step_into(c, 5, NULL, 0, LCPSIM_WITHOUT_CONTACTS,
                                           LCPSIM_SENSOR_IMUS, buffer, &s),
                   LCPSIM_OK);
  const lcpsim_imu_reading_t *reading = lcpsim_state_find_imu(s, "base_imu");
  assert_non_null(reading);
  assert_string_equal(reading->link, "base_link");
  assert_non_null(reading->specific_force);
  assert_true(fabs(reading->specific_force->x) < 1e-9);
  assert_true(fabs(reading->specific_force->y) < 1e-9);
  assert_true(fabs(reading->specific_force->z - 9.81) < 1e-9);
  assert_non_null(reading->angular_rate);
  assert_true(fabs(reading->angular_rate->x) + fabs(reading->angular_rate->y) +
                  fabs(reading->angular_rate->z) <
              1e-12);
  /* Not asked for: absent. */
  assert_int_equal(lcpsim_client_get_state_into(c, LCPSIM_WITHOUT_CONTACTS, 0, buffer, &s),
                   LCPSIM_OK);
  assert_null(lcpsim_state_find_imu(s, "base_imu"));
  lcpsim_state_buffer_destroy(&buffer);
}

/* Energy, joint wrenches and solver statistics: present when asked for, absent when not; the
 * kinetic energy of a robot at rest is 0 and never negative. */
static void energy_only_when_asked(void **state) {
  live_t *live = *state;
  lcpsim_client_t *c = live->client;
  lcpsim_state_t *s = NULL;
  assert_int_equal(lcpsim_client_step_sensors(c, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, 0, &s),
                   LCPSIM_OK);
  const lcpsim_robot_state_t *arm = lcpsim_state_find_robot(s, "arm7");
  assert_null(arm->energy);
  assert_int_equal(arm->n_joint_wrenches, 0);
  assert_int_equal(arm->n_imus, 0);
  assert_null(s->solver_stats);
  for (size_t i = 0; i < s->n_bodies; ++i)
    assert_null(s->bodies[i]->energy);
  lcpsim_state_destroy(&s);

  unsigned wanted =
      LCPSIM_SENSOR_ENERGY | LCPSIM_SENSOR_JOINT_WRENCHES | LCPSIM_SENSOR_SOLVER_STATS;
  assert_int_equal(lcpsim_client_get_state_sensors(c, LCPSIM_WITHOUT_CONTACTS, wanted, &s),
                   LCPSIM_OK);
  arm = lcpsim_state_find_robot(s, "arm7");
  assert_non_null(arm->energy);
  assert_true(arm->energy->kinetic >= 0.0);
  assert_true(isfinite(arm->energy->potential));
  assert_true(arm->n_joint_wrenches > 0);
  assert_non_null(arm->joint_wrenches[0]->world);
  assert_non_null(s->solver_stats);
  assert_true(s->solver_stats->iterations >= 0);
  for (size_t i = 0; i < s->n_bodies; ++i)
    assert_non_null(s->bodies[i]->energy);
  lcpsim_state_destroy(&s);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s LCPSIMD\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(reused_buffer_matches_fresh_states, start_live, stop_live),
      cmocka_unit_test_setup_teardown(imu_at_rest_reads_gravity_up, start_live, stop_live),
      cmocka_unit_test_setup_teardown(energy_only_when_asked, start_live, stop_live),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
