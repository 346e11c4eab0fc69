/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd as a process: command line, scene files, clean exit on SIGINT and
 * SIGTERM (also mid-Step and under a flood), realtime mode. */
#include "daemon_harness.h"

#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <zmq.h>

#include <cmocka.h>

static int teardown(void **state) {
  (void)state;
  test_context_destroy();
  return 0;
}

static void sleep_seconds(double s) {
  struct timespec t = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  nanosleep(&t, NULL);
}

static void assert_clean_exit_within_a_second(daemon_proc *d, int signal_number) {
  double seconds = 0;
  int status = daemon_signal_and_wait(d, signal_number, &seconds);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_true(seconds < 1.0);
}

/* ---- command line ---- */

static char out[65536], err[65536];

static void test_help_and_version(void **state) {
  (void)state;
  const char *help[] = {"--help", NULL};
  int status = daemon_run_to_exit(help, out, sizeof out, err, sizeof err);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_non_null(strstr(out, "usage: lcpsimd"));
  const char *options[] = {"--bind",      "--pub",          "--world",    "--urdf",
                           "--mode",      "--rate",         "--timestep", "--max-message-bytes",
                           "--log-level", "--busy-poll-us", "--help",     "--version"};
  for (size_t i = 0; i < sizeof options / sizeof options[0]; ++i)
    assert_non_null(strstr(out, options[i]));
  const char *version[] = {"--version", NULL};
  status = daemon_run_to_exit(version, out, sizeof out, err, sizeof err);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_non_null(strstr(out, "lcpsimd 0.1.0"));
}

static void expect_usage_error(const char *const *args, const char *needle) {
  int status = daemon_run_to_exit(args, out, sizeof out, err, sizeof err);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 2);
  if (!strstr(err, needle))
    fail_msg("stderr '%s' does not contain '%s'", err, needle);
}

static void test_bad_command_lines(void **state) {
  (void)state;
  expect_usage_error((const char *[]){"--bogus", NULL}, "unknown option '--bogus'");
  expect_usage_error((const char *[]){"--mode", "fast", NULL}, "--mode must be lockstep or");
  expect_usage_error((const char *[]){"--rate", "-1", NULL}, "--rate must be > 0 (got -1)");
  expect_usage_error((const char *[]){"--rate", "fast", NULL}, "--rate must be a number > 0");
  expect_usage_error((const char *[]){"--timestep", "0", NULL}, "--timestep must be");
  expect_usage_error((const char *[]){"--max-message-bytes", "lots", NULL},
                     "--max-message-bytes must be");
  expect_usage_error((const char *[]){"--log-level", "loud", NULL}, "--log-level must be");
  expect_usage_error((const char *[]){"--world", NULL}, "needs a value");
  expect_usage_error((const char *[]){"--busy-poll-us", "-1", NULL},
                     "--busy-poll-us must be a whole number from 0 to 10000");
  expect_usage_error((const char *[]){"--busy-poll-us", "10001", NULL},
                     "--busy-poll-us must be a whole number from 0 to 10000");
  expect_usage_error((const char *[]){"extra", NULL}, "unexpected argument 'extra'");
}

static void expect_start_failure(const char *const *args, const char *needle) {
  int status = daemon_run_to_exit(args, out, sizeof out, err, sizeof err);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  assert_string_equal(out, ""); /* no endpoints line */
  if (!strstr(err, needle))
    fail_msg("stderr '%s' does not contain '%s'", err, needle);
}

static void test_bad_scene_files_name_file_and_line(void **state) {
  (void)state;
  expect_start_failure((const char *[]){"--world", "/nonexistent/scene.xml", NULL},
                       "/nonexistent/scene.xml:0: cannot open the scene file");
  struct {
    const char *text;
    const char *error; /* after "FILE:" */
  } cases[] = {
      {"<lcpsim>\n  <ground/>\n  <body name=\"b\" shape=\"box\" size=\"1 1\"/>\n</lcpsim>\n",
       ":3: <body size=\"1 1\">: expected 3 finite numbers"},
      {"<lcpsim>\n\n  <body name=\"b\" shape=\"box\" size=\"1 1 1\" fricton=\"1\"/>\n</lcpsim>\n",
       ":3: <body> has no attribute 'fricton'"},
      {"<lcpsim>\n  <settings timestep=\"-1\"/>\n</lcpsim>\n",
       ":2: <settings>: timestep must be > 0 (got -1)"},
      {"<lcpsim>\n  <robot urdf=\"missing.urdf\"/>\n</lcpsim>\n", ":2: robot 'missing.urdf':"},
      {"<lcpsim>\n  <wall/>\n</lcpsim>\n", ":2: unknown element <wall>"},
      /* unclosed: found at the end tag that does not match it */
      {"<lcpsim>\n  <ground>\n</lcpsim>\n", ":3: malformed XML: Opening and ending tag mismatch"},
      {"<world/>\n", ":1: the root element must be <lcpsim>"},
      {"<lcpsim>\n  <body name=\"b\" shape=\"sphere\" size=\"0.1\"/>\n"
       "  <body name=\"b\" shape=\"sphere\" size=\"0.1\"/>\n</lcpsim>\n",
       ":3: the name 'b' is used twice"},
      {"<lcpsim>\n  <body name=\"b\" shape=\"cone\" size=\"0.1\"/>\n</lcpsim>\n",
       ":2: <body shape=\"cone\">"},
      {"<lcpsim>\n  <body name=\"b\" shape=\"sphere\" size=\"nan\"/>\n</lcpsim>\n",
       ":2: <body size=\"nan\">: expected 1 finite number"},
      {"<lcpsim>\n\n  <body name=\"b\" shape=\"sphere\" size=\"0.1\" restitution=\"1.5\"/>\n"
       "</lcpsim>\n",
       ":3: <body restitution=\"1.5\">: must be in [0, 1]"},
      {"<lcpsim>\n  <ground restitution=\"-0.5\"/>\n</lcpsim>\n",
       ":2: <ground restitution=\"-0.5\">: must be in [0, 1]"},
      {"<lcpsim>\n  <ground restitution=\"half\"/>\n</lcpsim>\n",
       ":2: <ground restitution=\"half\">: expected 1 finite number"},
      {"<lcpsim>\n  <settings max_push_speed=\"-1\"/>\n</lcpsim>\n",
       ":2: <settings>: max_push_speed must be finite and >= 0 (got -1)"},
      {"<lcpsim>\n  <settings restitution_threshold=\"-2\"/>\n</lcpsim>\n",
       ":2: <settings>: restitution_threshold must be finite and >= 0 (got -2)"},
      {"<lcpsim>\n  <settings relax_iterations=\"2.5\"/>\n</lcpsim>\n",
       ":2: <settings relax_iterations=\"2.5\">: expected a whole number"},
      {"<lcpsim>\n  <settings relax_iterations=\"-1\"/>\n</lcpsim>\n",
       ":2: <settings>: relax_iterations must be in [0, 100000] (got -1)"},
      {"<lcpsim>\n  <settings velocity_limits=\"off\"/>\n</lcpsim>\n",
       ":2: <settings velocity_limits=\"off\">: expected true or false"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[1024], needle[1200];
    write_temp_file("scene.xml", cases[i].text, path, sizeof path);
    snprintf(needle, sizeof needle, "%s%s", path, cases[i].error);
    expect_start_failure((const char *[]){"--world", path, NULL}, needle);
    remove_temp_file(path);
  }
  expect_start_failure((const char *[]){"--bind", "nonsense://here", NULL},
                       "cannot bind the request socket to nonsense://here");
}

/* ---- scene files ---- */

static void test_example_scene_is_the_builtin_world(void **state) {
  (void)state;
  daemon_proc builtin, scene;
  daemon_start(&builtin, NULL);
  char path[1024];
  snprintf(path, sizeof path, "%s/arm_table.xml", daemon_scenes_dir());
  daemon_start(&scene, (const char *[]){"--world", path, NULL});
  void *a = connect_req(builtin.rep), *b = connect_req(scene.rep);
  /* Bit for bit the same world (names, bodies, state), also after a second
   * of simulated time. */
  assert_true(world_hash(a) == world_hash(b));
  call_step(a, 1, 240);
  call_step(b, 1, 240);
  assert_true(world_hash(a) == world_hash(b));
  close_socket(&a);
  close_socket(&b);
  daemon_stop(&builtin);
  daemon_stop(&scene);
}

static void test_scene_file_features(void **state) {
  (void)state;
  char text[2048], path[1024];
  snprintf(
      text, sizeof text,
      "<?xml version=\"1.0\"?>\n"
      "<lcpsim version=\"1\">\n"
      "  <!-- every element and most attributes -->\n"
      "  <settings timestep=\"0.002\" iterations=\"35\" gravity=\"0 0 -1.62\"\n"
      "            friction=\"box\" sor_omega=\"1.2\" mode=\"lockstep\" rate=\"2\"\n"
      "            max_push_speed=\"1.5\" relax_iterations=\"2\" restitution_threshold=\"0.5\"\n"
      "            velocity_limits=\"false\"/>\n"
      "  <ground friction=\"0.9\" restitution=\"0.2\"/>\n"
      "  <robot name=\"left\" urdf=\"%s/arm7.urdf\" base=\"fixed\" xyz=\"0 0.5 0.1\"/>\n"
      "  <robot name=\"pendulum\" urdf=\"%s/pendulum2.urdf\" base=\"floating\"\n"
      "         xyz=\"1 0 2\" rpy=\"0 0 1.5707963267948966\"/>\n"
      "  <body name=\"pill\" shape=\"capsule\" size=\"0.05 0.3\" xyz=\"-1 0 1\"\n"
      "        rpy=\"1.5707963267948966 0 0\" mass=\"2\" friction=\"0.3\"/>\n"
      "  <body name=\"can\" shape=\"cylinder\" size=\"0.04 0.12\" xyz=\"-1 1 0.06\"/>\n"
      "  <body name=\"post\" shape=\"box\" size=\"0.1 0.1 1\" xyz=\"2 2 0.5\" static=\"true\"/>\n"
      "  <body name=\"ball\" shape=\"sphere\" size=\"0.1\" xyz=\"0 -2 1\"\n"
      "        linear_velocity=\"1 0 0\" angular_velocity=\"0 0 3\"/>\n"
      "</lcpsim>\n",
      robots_dir(), robots_dir());
  write_temp_file("features.xml", text, path, sizeof path);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--world", path, NULL});
  remove_temp_file(path);
  void *c = connect_req(d.rep);
  Lcpsim__V1__Reply *reply = call_get_info(c, 1);
  const Lcpsim__V1__GetInfoReply *info = reply->get_info;
  assert_float_equal(info->settings->timestep, 0.002, 0.0);
  assert_int_equal(info->settings->iterations, 35);
  assert_float_equal(info->settings->gravity->z, -1.62, 0.0);
  assert_int_equal(info->settings->friction_model,
                   LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_BOX);
  assert_float_equal(info->settings->sor_omega, 1.2, 0.0);
  assert_float_equal(info->settings->rate, 2.0, 0.0);
  assert_float_equal(info->settings->max_push_speed, 1.5, 0.0);
  assert_int_equal(info->settings->relax_iterations, 2);
  assert_float_equal(info->settings->restitution_threshold, 0.5, 0.0);
  assert_false(info->settings->enforce_velocity_limits);
  assert_int_equal(info->n_robots, 2);
  assert_string_equal(info->robots[0]->name, "left");
  assert_false(info->robots[0]->floating_base);
  assert_string_equal(info->robots[1]->name, "pendulum");
  assert_true(info->robots[1]->floating_base);
  assert_int_equal(info->n_bodies, 4);
  assert_int_equal(info->bodies[0]->shape->type, LCPSIM__V1__SHAPE__TYPE__CAPSULE);
  assert_float_equal(info->bodies[0]->shape->half_length, 0.15, 1e-15);
  assert_float_equal(info->bodies[0]->mass, 2.0, 0.0);
  assert_int_equal(info->bodies[1]->shape->type, LCPSIM__V1__SHAPE__TYPE__CYLINDER);
  assert_float_equal(info->bodies[1]->mass, 1.0, 0.0); /* the default */
  assert_true(info->bodies[2]->is_static);
  assert_float_equal(info->bodies[2]->shape->half_extents->z, 0.5, 0.0);
  reply_free(&reply);
  reply = call_get_state(c, 2, false);
  const Lcpsim__V1__State *s = reply->get_state->state;
  assert_float_equal(s->robots[0]->base_pose->position->y, 0.5, 1e-12);
  /* The pendulum's base turned a quarter about z: q = (cos π/4, 0, 0, sin π/4). */
  assert_float_equal(s->robots[1]->base_pose->orientation->z, sqrt(0.5), 1e-12);
  assert_float_equal(s->robots[1]->base_pose->position->z, 2.0, 1e-12);
  /* The capsule lies along y: rotated a quarter about x. */
  assert_float_equal(s->bodies[0]->pose->orientation->x, sqrt(0.5), 1e-12);
  assert_float_equal(s->bodies[3]->twist->linear->x, 1.0, 0.0);
  assert_float_equal(s->bodies[3]->twist->angular->z, 3.0, 0.0);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
}

/* Restitution from a scene file, on a body and on the ground: a ball of
 * radius 0.1 m dropped 1 m rises to e² h (within 5 %) where its own or the
 * ground's e is 0.5 (a contact takes the larger of the two), and stays down
 * where both are 0. */
static void test_scene_file_restitution(void **state) {
  (void)state;
  const double drop = 1.0, radius = 0.1, e = 0.5;
  static const char *const scenes[2] = {
      "<lcpsim>\n  <ground/>\n"
      "  <body name=\"bouncy\" shape=\"sphere\" size=\"0.1\" xyz=\"0 -0.5 1.1\""
      " restitution=\"0.5\"/>\n"
      "  <body name=\"plain\" shape=\"sphere\" size=\"0.1\" xyz=\"0 0.5 1.1\"/>\n"
      "</lcpsim>\n",
      "<lcpsim>\n  <ground restitution=\"0.5\"/>\n"
      "  <body name=\"plain\" shape=\"sphere\" size=\"0.1\" xyz=\"0 0.5 1.1\"/>\n"
      "</lcpsim>\n",
  };
  for (int s = 0; s < 2; ++s) {
    char path[1024];
    write_temp_file("bounce.xml", scenes[s], path, sizeof path);
    daemon_proc d;
    daemon_start(&d, (const char *[]){"--world", path, NULL});
    remove_temp_file(path);
    void *c = connect_req(d.rep);
    const char *const bouncy_ground[1] = {"plain"};
    const char *const plain_ground[2] = {"bouncy", "plain"};
    drop_record drops[2];
    record_drops(c, s == 0 ? plain_ground : bouncy_ground, 2 - s, 360, drops);
    assert_float_equal(drops[0].rebound - radius, e * e * drop, 0.05 * e * e * drop);
    if (s == 0)
      assert_true(drops[1].rebound - radius < 0.001);
    close_socket(&c);
    daemon_stop(&d);
  }
}

static void test_urdf_and_timestep_options(void **state) {
  (void)state;
  char urdf[1024], scene[1024];
  snprintf(urdf, sizeof urdf, "%s/pendulum2.urdf", robots_dir());
  snprintf(scene, sizeof scene, "%s/arm_table.xml", daemon_scenes_dir());
  /* --urdf alone: the ground and that robot, nothing built in. */
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--urdf", urdf, "--timestep", "0.01", NULL});
  void *c = connect_req(d.rep);
  Lcpsim__V1__Reply *reply = call_get_info(c, 1);
  assert_int_equal(reply->get_info->n_robots, 1);
  assert_string_equal(reply->get_info->robots[0]->name, "pendulum2");
  assert_int_equal(reply->get_info->n_bodies, 0);
  assert_float_equal(reply->get_info->settings->timestep, 0.01, 0.0);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
  /* --world and --urdf: the scene, then the robot. */
  daemon_start(&d, (const char *[]){"--world", scene, "--urdf", urdf, NULL});
  c = connect_req(d.rep);
  reply = call_get_info(c, 2);
  assert_int_equal(reply->get_info->n_robots, 2);
  assert_string_equal(reply->get_info->robots[0]->name, "arm7");
  assert_string_equal(reply->get_info->robots[1]->name, "pendulum2");
  assert_int_equal(reply->get_info->n_bodies, 2);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
  /* The same robot twice: the second gets a free name of its own. */
  daemon_start(&d, (const char *[]){"--urdf", urdf, "--urdf", urdf, NULL});
  c = connect_req(d.rep);
  reply = call_get_info(c, 3);
  assert_int_equal(reply->get_info->n_robots, 2);
  assert_string_equal(reply->get_info->robots[0]->name, "pendulum2");
  assert_string_equal(reply->get_info->robots[1]->name, "pendulum2_2");
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
  /* A name given with --urdf-name that is taken is a clash, refused at start
   * with a free name suggested. */
  expect_start_failure(
      (const char *[]){"--urdf", urdf, "--urdf", urdf, "--urdf-name", "pendulum2", NULL},
      "--urdf-name pendulum2: the name is taken by another robot or body (a free one: "
      "'pendulum2_2')");
}

/* ---- signals ---- */

static void test_sigterm_and_sigint_exit_cleanly(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, NULL);
  void *c = connect_req(d.rep);
  call_step(c, 1, 10);
  close_socket(&c);
  assert_clean_exit_within_a_second(&d, SIGTERM);
  daemon_start(&d, NULL);
  assert_clean_exit_within_a_second(&d, SIGINT);
}

static void test_sigterm_during_a_long_step(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, NULL);
  void *dealer = connect_dealer(d.rep);
  /* Hours of stepping (the most steps a request may ask for by default):
   * the Step runs in slices, so the signal is seen. */
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 86400000;
  Lcpsim__V1__Request r = request_of(2, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  unsigned char data[64];
  size_t size = lcpsim__v1__request__pack(&r, data);
  zmq_send(dealer, "", 0, ZMQ_SNDMORE);
  zmq_send(dealer, data, size, 0);
  sleep_seconds(0.2);
  close_socket(&dealer);
  assert_clean_exit_within_a_second(&d, SIGTERM);
}

/* A DEALER that sends `count` Pings without reading a reply. */
static void *flood(const char *endpoint, int count) {
  void *dealer = connect_dealer(endpoint);
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
  r.call_case = LCPSIM__V1__REQUEST__CALL_PING;
  r.ping = &ping;
  unsigned char data[64];
  for (int i = 0; i < count; ++i) {
    r.id = (uint64_t)i + 1;
    size_t size = lcpsim__v1__request__pack(&r, data);
    zmq_send(dealer, "", 0, ZMQ_SNDMORE);
    zmq_send(dealer, data, size, 0);
  }
  return dealer;
}

static void test_sigterm_under_a_flood(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, NULL);
  void *dealers[4];
  for (int i = 0; i < 4; ++i)
    dealers[i] = flood(d.rep, 20000);
  sleep_seconds(0.1);
  assert_clean_exit_within_a_second(&d, SIGTERM);
  for (int i = 0; i < 4; ++i)
    close_socket(&dealers[i]);
}

/* ---- busy poll ---- */

/* Off and at its longest, the busy poll changes no result; a request that
 * comes during the poll, and one after it gave up (ZMQ_EVENTS was read
 * meanwhile, which consumes ZMQ_FD's edge), are both answered; and the
 * daemon still stops within a second on SIGTERM while a client keeps it
 * busy. */
static void test_busy_poll(void **state) {
  (void)state;
  daemon_proc off, longest;
  daemon_start(&off, (const char *[]){"--busy-poll-us", "0", NULL});
  daemon_start(&longest, (const char *[]){"--busy-poll-us", "10000", NULL});
  void *a = connect_req(off.rep), *b = connect_req(longest.rep);
  for (uint64_t i = 1; i <= 50; ++i) {
    call_step(a, i, 2);
    call_step(b, i, 2);
  }
  assert_true(world_hash(a) == world_hash(b));
  for (uint64_t i = 100; i < 110; ++i) {
    /* 0, 5 and 20 ms apart: within the 10 ms poll and after it. */
    sleep_seconds(i % 3 == 0 ? 0.0 : i % 3 == 1 ? 0.005 : 0.02);
    assert_true(call_ping(b, i));
  }
  close_socket(&a);
  close_socket(&b);
  daemon_stop(&off);
  void *dealers[2];
  for (int i = 0; i < 2; ++i)
    dealers[i] = flood(longest.rep, 20000);
  sleep_seconds(0.1);
  assert_clean_exit_within_a_second(&longest, SIGTERM);
  for (int i = 0; i < 2; ++i)
    close_socket(&dealers[i]);
}

/* ---- realtime mode ---- */

/* Simulated seconds per wall-clock second over `seconds` of wall clock:
 * simulated time from GetState at t0 and about t0 + seconds. */
static double measured_rate_over(void *client, double seconds) {
  Lcpsim__V1__Reply *reply = call_get_state(client, 1, false);
  double sim0 = reply->get_state->state->time, wall0 = now_seconds();
  reply_free(&reply);
  sleep_seconds(seconds);
  reply = call_get_state(client, 2, false);
  double sim1 = reply->get_state->state->time, wall1 = now_seconds();
  reply_free(&reply);
  double rate = (sim1 - sim0) / (wall1 - wall0);
  print_message("realtime: %.4f simulated s per wall-clock s over %.2f s\n", rate, wall1 - wall0);
  return rate;
}

static double measured_rate(void *client) { return measured_rate_over(client, 1.0); }

static void test_realtime_follows_the_wall_clock(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--mode", "realtime", "--rate", "1", NULL});
  void *c = connect_req(d.rep);
  /* Within 5 % of the wall clock over 2 s. */
  double rate = measured_rate_over(c, 2.0);
  assert_true(rate >= 0.95 && rate <= 1.05);

  /* Stepping by request is for lockstep mode; targets alone may apply. */
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 1;
  Lcpsim__V1__Request r = request_of(3, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  Lcpsim__V1__Reply *reply = rpc(c, &r);
  assert_error(reply, 3, LCPSIM__V1__STATUS__CODE__FAILED_PRECONDITION, "realtime mode");
  reply_free(&reply);
  step.steps = 0;
  reply = rpc(c, &r);
  assert_ok(reply, 3, LCPSIM__V1__REPLY__RESULT_STEP);
  reply_free(&reply);

  /* A new rate by SetSettings; then lockstep stops the clock. */
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.rate_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__RATE_VALUE_RATE;
  set.rate = 0.5;
  r.id = 4;
  r.call_case = LCPSIM__V1__REQUEST__CALL_SET_SETTINGS;
  r.set_settings = &set;
  reply = rpc(c, &r);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  reply_free(&reply);
  rate = measured_rate(c);
  assert_true(rate >= 0.475 && rate <= 0.525);
  set = (Lcpsim__V1__SetSettingsRequest)LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  set.mode_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__MODE_VALUE_MODE;
  set.mode = LCPSIM__V1__SETTINGS__MODE__MODE_LOCKSTEP;
  reply = rpc(c, &r);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_SET_SETTINGS);
  reply_free(&reply);
  reply = call_get_state(c, 5, false);
  double t0 = reply->get_state->state->time;
  reply_free(&reply);
  sleep_seconds(0.2);
  reply = call_get_state(c, 6, false);
  assert_float_equal(reply->get_state->state->time, t0, 0.0);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
}

static void test_realtime_keeps_time_under_a_flood(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--mode", "realtime", NULL});
  /* Requests pour in faster than they are served; the timer still gets its
   * turns because the daemon serves a bounded batch per wake-up. */
  void *dealers[2] = {flood(d.rep, 50000), flood(d.rep, 50000)};
  void *c = connect_req(d.rep);
  double rate = measured_rate_over(c, 2.0);
  assert_true(rate >= 0.95 && rate <= 1.05);
  close_socket(&c);
  close_socket(&dealers[0]);
  close_socket(&dealers[1]);
  daemon_stop(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_help_and_version, teardown),
      cmocka_unit_test_teardown(test_bad_command_lines, teardown),
      cmocka_unit_test_teardown(test_bad_scene_files_name_file_and_line, teardown),
      cmocka_unit_test_teardown(test_example_scene_is_the_builtin_world, teardown),
      cmocka_unit_test_teardown(test_scene_file_features, teardown),
      cmocka_unit_test_teardown(test_scene_file_restitution, teardown),
      cmocka_unit_test_teardown(test_urdf_and_timestep_options, teardown),
      cmocka_unit_test_teardown(test_sigterm_and_sigint_exit_cleanly, teardown),
      cmocka_unit_test_teardown(test_sigterm_during_a_long_step, teardown),
      cmocka_unit_test_teardown(test_sigterm_under_a_flood, teardown),
      cmocka_unit_test_teardown(test_busy_poll, teardown),
      cmocka_unit_test_teardown(test_realtime_follows_the_wall_clock, teardown),
      cmocka_unit_test_teardown(test_realtime_keeps_time_under_a_flood, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
