/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd: the opt-in sensors over the wire. A Step with no sensors asked
 * encodes none of their fields; with each group asked, that group comes
 * back (and only it) with the values the physics says: an IMU on the fixed
 * base reads +g up, a box at rest on the ground gets its weight from its
 * contacts; IMUs come from the scene file and from AddImu, which checks
 * its input, and Reset keeps only the scene's; two daemons read the same
 * noise. */
#include "daemon_harness.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#define G 9.81
#define BOX_MASS 0.5

typedef struct fixture {
  daemon_proc daemon;
  void *client;
  char scene[512];
} fixture;

/* The arm on its fixed base with a level IMU on the base and a noisy one
 * on link 3, and a box on the ground out of the arm's reach. */
static void write_scene(char *path, size_t size) {
  char text[2048];
  snprintf(text, sizeof text,
           "<lcpsim version=\"1\">\n"
           "  <settings timestep=\"0.004166666666666667\" gravity=\"0 0 -9.81\"/>\n"
           "  <ground friction=\"0.8\"/>\n"
           "  <robot name=\"arm7\" urdf=\"%s/arm7.urdf\" base=\"fixed\" xyz=\"0 0 0.1\"/>\n"
           "  <imu name=\"base_imu\" robot=\"arm7\" link=\"base_link\" xyz=\"0.02 0 0.05\"/>\n"
           "  <imu name=\"arm_imu\" robot=\"arm7\" link=\"link3\" rpy=\"0 0.3 0\"\n"
           "       noise=\"0.05 0.01\" bias=\"0.1 0 0 0 0 0.02\" seed=\"7\"/>\n"
           "  <body name=\"box\" shape=\"box\" size=\"0.1 0.1 0.1\" xyz=\"3 0 0.0505\"\n"
           "        mass=\"0.5\" friction=\"0.6\"/>\n"
           "</lcpsim>\n",
           robots_dir());
  write_temp_file("sensors.xml", text, path, size);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  write_scene(f->scene, sizeof f->scene);
  const char *args[] = {"--world", f->scene, NULL};
  daemon_start(&f->daemon, args);
  f->client = connect_req(f->daemon.rep);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  close_socket(&f->client);
  daemon_stop(&f->daemon);
  remove_temp_file(f->scene);
  free(f);
  test_context_destroy();
  return 0;
}

/* A Step of `steps` returning the state with contacts and these sensors
 * (NULL: the field unset). */
static Lcpsim__V1__Reply *step_sensing(void *client, uint64_t id, int32_t steps,
                                       Lcpsim__V1__Sensors *sensors) {
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = steps;
  step.return_state = true;
  step.include_contacts = true;
  step.sensors = sensors;
  Lcpsim__V1__Request request = request_of(id, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  Lcpsim__V1__Reply *reply = rpc(client, &request);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_STEP);
  assert_non_null(reply->step->state);
  return reply;
}

static const Lcpsim__V1__RobotState *arm_of(const Lcpsim__V1__State *s) {
  assert_int_equal(s->n_robots, 1);
  assert_string_equal(s->robots[0]->name, "arm7");
  return s->robots[0];
}

static const Lcpsim__V1__BodyState *box_of(const Lcpsim__V1__State *s) {
  for (size_t i = 0; i < s->n_bodies; ++i)
    if (strcmp(s->bodies[i]->name, "box") == 0)
      return s->bodies[i];
  fail_msg("no box in the state");
  return NULL;
}

/* The groups present in a state, as the bits of the Sensors fields (1:
 * link_twists ... 7: solver_stats). */
static unsigned groups_present(const Lcpsim__V1__State *s) {
  const Lcpsim__V1__RobotState *arm = arm_of(s);
  const Lcpsim__V1__BodyState *box = box_of(s);
  unsigned bits = 0;
  if (arm->n_link_twists || arm->n_link_twists_local)
    bits |= 1u << 1;
  if (arm->n_link_accelerations || arm->n_qdd)
    bits |= 1u << 2;
  if (arm->n_imus)
    bits |= 1u << 3;
  if (arm->n_joint_wrenches)
    bits |= 1u << 4;
  bool friction = false;
  for (size_t i = 0; i < s->n_contacts; ++i)
    friction |= s->contacts[i]->friction_impulse != NULL;
  if (arm->n_link_contact_wrenches || box->contact_wrench || friction)
    bits |= 1u << 5;
  if (arm->energy || box->energy)
    bits |= 1u << 6;
  if (s->solver_stats)
    bits |= 1u << 7;
  return bits;
}

static void test_no_sensors_encode_nothing(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *unset = step_sensing(f->client, 1, 50, NULL);
  assert_true(unset->step->state->n_contacts > 0);
  assert_int_equal(groups_present(unset->step->state), 0);
  /* all flags false: the same bytes as no Sensors at all */
  Lcpsim__V1__Sensors none = LCPSIM__V1__SENSORS__INIT;
  Lcpsim__V1__Reply *empty = step_sensing(f->client, 2, 0, &none);
  Lcpsim__V1__Reply *again = step_sensing(f->client, 3, 0, NULL);
  assert_int_equal(groups_present(empty->step->state), 0);
  size_t a = lcpsim__v1__state__get_packed_size(empty->step->state);
  size_t b = lcpsim__v1__state__get_packed_size(again->step->state);
  assert_int_equal(a, b);
  reply_free(&unset);
  reply_free(&empty);
  reply_free(&again);
}

static void expect_vec3(const Lcpsim__V1__Vec3 *v, double x, double y, double z, double tol) {
  assert_non_null(v);
  assert_true(fabs(v->x - x) <= tol && fabs(v->y - y) <= tol && fabs(v->z - z) <= tol);
}

static void test_each_group_alone(void **state) {
  fixture *f = *state;
  /* the box settles on the ground */
  reply_free((Lcpsim__V1__Reply *[]){step_sensing(f->client, 10, 240, NULL)});
  for (unsigned group = 1; group <= 7; ++group) {
    Lcpsim__V1__Sensors sensors = LCPSIM__V1__SENSORS__INIT;
    sensors.link_twists = group == 1;
    sensors.link_accelerations = group == 2;
    sensors.imus = group == 3;
    sensors.joint_wrenches = group == 4;
    sensors.contact_wrenches = group == 5;
    sensors.energy = group == 6;
    sensors.solver_stats = group == 7;
    /* a Step and a GetState give the same group */
    Lcpsim__V1__Reply *reply = step_sensing(f->client, 20 + group, 1, &sensors);
    Lcpsim__V1__GetStateRequest get = LCPSIM__V1__GET_STATE_REQUEST__INIT;
    get.sensors = &sensors;
    Lcpsim__V1__Request request = request_of(40 + group, LCPSIM__V1__REQUEST__CALL_GET_STATE, &get);
    Lcpsim__V1__Reply *got = rpc(f->client, &request);
    assert_ok(got, 40 + group, LCPSIM__V1__REPLY__RESULT_GET_STATE);
    const Lcpsim__V1__State *s = reply->step->state;
    assert_int_equal(groups_present(s), 1u << group);
    assert_int_equal(groups_present(got->get_state->state), 1u << group);
    const Lcpsim__V1__RobotState *arm = arm_of(s);
    const Lcpsim__V1__BodyState *box = box_of(s);
    switch (group) {
    case 1:
      assert_int_equal(arm->n_link_twists, arm->n_link_poses);
      assert_int_equal(arm->n_link_twists_local, arm->n_link_poses);
      expect_vec3(arm->link_twists[0]->linear, 0, 0, 0, 0.0); /* the fixed base */
      break;
    case 2:
      assert_int_equal(arm->n_link_accelerations, arm->n_link_poses);
      assert_int_equal(arm->n_qdd, arm->n_qd);
      expect_vec3(arm->link_accelerations[0]->linear, 0, 0, 0, 0.0);
      break;
    case 3: {
      assert_int_equal(arm->n_imus, 2);
      assert_string_equal(arm->imus[0]->name, "base_imu");
      assert_string_equal(arm->imus[0]->link, "base_link");
      expect_vec3(arm->imus[0]->specific_force, 0, 0, G, 1e-6);
      expect_vec3(arm->imus[0]->angular_rate, 0, 0, 0, 1e-6);
      assert_string_equal(arm->imus[1]->link, "link3");
      break;
    }
    case 4:
      assert_int_equal(arm->n_joint_wrenches, arm->n_applied_torque);
      assert_string_equal(arm->joint_wrenches[0]->joint, "joint1");
      assert_non_null(arm->joint_wrenches[0]->world);
      assert_non_null(arm->joint_wrenches[0]->local);
      break;
    case 5: {
      assert_int_equal(arm->n_link_contact_wrenches, arm->n_link_poses);
      /* the ground holds the box up: its weight, all in the normal part */
      const Lcpsim__V1__ContactWrench *w = box->contact_wrench;
      expect_vec3(w->normal->force, 0, 0, BOX_MASS * G, 0.01 * BOX_MASS * G);
      expect_vec3(w->friction->force, 0, 0, 0, 0.01 * BOX_MASS * G);
      for (size_t i = 0; i < s->n_contacts; ++i)
        assert_non_null(s->contacts[i]->friction_impulse);
      break;
    }
    case 6:
      assert_non_null(arm->energy);
      assert_non_null(box->energy);
      assert_true(fabs(box->energy->potential - BOX_MASS * G * box->pose->position->z) < 1e-9);
      assert_true(box->energy->kinetic < 1e-6);
      break;
    case 7:
      assert_true(s->solver_stats->contacts >= 4); /* the box's face on the ground */
      assert_true(s->solver_stats->rows > 0 && s->solver_stats->iterations > 0);
      break;
    }
    reply_free(&reply);
    reply_free(&got);
  }
}

static Lcpsim__V1__Reply *add_imu(void *client, uint64_t id, const char *name, const char *robot,
                                  const char *link, double noise) {
  Lcpsim__V1__AddImuRequest add = LCPSIM__V1__ADD_IMU_REQUEST__INIT;
  add.name = (char *)name;
  add.robot = (char *)robot;
  add.link = (char *)link;
  add.accel_noise = noise;
  Lcpsim__V1__Request request = request_of(id, LCPSIM__V1__REQUEST__CALL_ADD_IMU, &add);
  return rpc(client, &request);
}

static size_t imu_count(void *client, uint64_t id) {
  Lcpsim__V1__Sensors sensors = LCPSIM__V1__SENSORS__INIT;
  sensors.imus = true;
  Lcpsim__V1__Reply *r = step_sensing(client, id, 0, &sensors);
  size_t n = arm_of(r->step->state)->n_imus;
  reply_free(&r);
  return n;
}

static void test_add_imu_and_reset(void **state) {
  fixture *f = *state;
  Lcpsim__V1__Reply *r = add_imu(f->client, 60, "tool_imu", "arm7", "link7", 0.0);
  assert_ok(r, 60, LCPSIM__V1__REPLY__RESULT_ADD_IMU);
  reply_free(&r);
  assert_int_equal(imu_count(f->client, 61), 3);
  r = add_imu(f->client, 62, "tool_imu", "arm7", "link7", 0.0);
  assert_error(r, 62, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "exists already");
  reply_free(&r);
  r = add_imu(f->client, 63, "x", "arm7", "no_such_link", 0.0);
  assert_error(r, 63, LCPSIM__V1__STATUS__CODE__NOT_FOUND, "has no link 'no_such_link'");
  reply_free(&r);
  r = add_imu(f->client, 64, "x", "nobody", "link1", 0.0);
  assert_error(r, 64, LCPSIM__V1__STATUS__CODE__NOT_FOUND, "no robot 'nobody'");
  reply_free(&r);
  r = add_imu(f->client, 65, "x", "arm7", "link1", -1.0);
  assert_error(r, 65, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "noise");
  reply_free(&r);
  assert_int_equal(imu_count(f->client, 66), 3);
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(67, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
  r = rpc(f->client, &request);
  assert_ok(r, 67, LCPSIM__V1__REPLY__RESULT_RESET);
  reply_free(&r);
  assert_int_equal(imu_count(f->client, 68), 2);
}

/* A second daemon on the same scene reads, step for step, the same noisy
 * IMU bits; the noise is there (the readings are not the noiseless ones). */
static void test_noise_is_the_same_in_two_daemons(void **state) {
  fixture *f = *state;
  daemon_proc other;
  const char *args[] = {"--world", f->scene, NULL};
  daemon_start(&other, args);
  void *client = connect_req(other.rep);
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(70, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
  Lcpsim__V1__Reply *r = rpc(f->client, &request);
  assert_ok(r, 70, LCPSIM__V1__REPLY__RESULT_RESET);
  reply_free(&r);
  Lcpsim__V1__Sensors sensors = LCPSIM__V1__SENSORS__INIT;
  sensors.imus = true;
  double previous = NAN;
  for (int i = 0; i < 5; ++i) {
    Lcpsim__V1__Reply *a = step_sensing(f->client, 80 + (uint64_t)i, 3, &sensors);
    Lcpsim__V1__Reply *b = step_sensing(client, 80 + (uint64_t)i, 3, &sensors);
    const Lcpsim__V1__ImuReading *ia = arm_of(a->step->state)->imus[1];
    const Lcpsim__V1__ImuReading *ib = arm_of(b->step->state)->imus[1];
    const Lcpsim__V1__Vec3 *va[2] = {ia->specific_force, ia->angular_rate};
    const Lcpsim__V1__Vec3 *vb[2] = {ib->specific_force, ib->angular_rate};
    for (int k = 0; k < 2; ++k) {
      const double xa[3] = {va[k]->x, va[k]->y, va[k]->z}, xb[3] = {vb[k]->x, vb[k]->y, vb[k]->z};
      assert_memory_equal(xa, xb, sizeof xa);
    }
    assert_true(ia->specific_force->y != previous);
    previous = ia->specific_force->y;
    reply_free(&a);
    reply_free(&b);
  }
  close_socket(&client);
  daemon_stop(&other);
}

/* A bad <imu> stops the daemon with the file, the line and what is wrong. */
static void test_bad_imu_elements(void **state) {
  (void)state;
  char robot[512];
  snprintf(robot, sizeof robot,
           "<lcpsim>\n  <robot name=\"arm7\" urdf=\"%s/arm7.urdf\" base=\"fixed\"/>\n",
           robots_dir());
  struct {
    const char *imu;
    const char *error; /* after "FILE:" */
  } cases[] = {
      {"  <imu name=\"i\" robot=\"arm7\" link=\"link1\" nosie=\"1 1\"/>",
       ":3: <imu> has no attribute 'nosie'"},
      {"  <imu name=\"i\" robot=\"dog\" link=\"link1\"/>", ":3: imu 'i': no robot 'dog' before it"},
      {"  <imu name=\"i\" robot=\"arm7\" link=\"paw\"/>",
       ":3: imu 'i': robot 'arm7' has no link 'paw'"},
      {"  <imu robot=\"arm7\" link=\"link1\"/>", ":3: <imu> needs a name"},
      {"  <imu name=\"i\" robot=\"arm7\" link=\"link1\" noise=\"-1 0\"/>",
       ":3: <imu noise=\"-1 0\">: standard deviations must be >= 0"},
      {"  <imu name=\"i\" robot=\"arm7\" link=\"link1\" bias=\"1 2 3\"/>",
       ":3: <imu bias=\"1 2 3\">: expected 6 finite numbers"},
      {"  <imu name=\"i\" robot=\"arm7\" link=\"link1\" seed=\"-3\"/>", ":3: <imu seed=\"-3\">"},
      {"  <imu name=\"i\" robot=\"arm7\" link=\"link1\"/>\n  <imu name=\"i\" robot=\"arm7\" "
       "link=\"link2\"/>",
       ":4: the imu name 'i' is used twice"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char text[2048], path[512], out[512], err[2048], needle[600];
    snprintf(text, sizeof text, "%s%s\n</lcpsim>\n", robot, cases[i].imu);
    write_temp_file("bad_imu.xml", text, path, sizeof path);
    const char *args[] = {"--world", path, NULL};
    int status = daemon_run_to_exit(args, out, sizeof out, err, sizeof err);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    snprintf(needle, sizeof needle, "%s%s", path, cases[i].error);
    if (!strstr(err, needle))
      fail_msg("stderr '%s' does not contain '%s'", err, needle);
    remove_temp_file(path);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_no_sensors_encode_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_each_group_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(test_add_imu_and_reset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_noise_is_the_same_in_two_daemons, setup, teardown),
      cmocka_unit_test(test_bad_imu_elements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
