/* SPDX-License-Identifier: Apache-2.0 */
/* CURVE authentication and roles (lcpsimd --curve-secret-key,
 * --authorized-keys): a peer without an allowed key gets no reply to any
 * request and changes nothing; an observer reads and subscribes, and every
 * call of its that could change something is refused with
 * PERMISSION_DENIED, leaving the world bitwise as it was; key files are
 * written by --gen-keys and malformed ones are refused naming file and line;
 * a non-loopback bind needs CURVE or --insecure. */
#include "daemon_harness.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <setjmp.h>

#include <cmocka.h>

/* How long a refused peer is watched for a reply that must not come. No
 * timing is asserted: a longer wait only makes the test stricter. */
#define SILENCE_MS 1500

typedef struct key_pair {
  char public_key[41];
  char secret_key[41];
} key_pair;

/* The keys of one test daemon: its own, two allowed clients and a stranger,
 * with the allow-list as a file of `<key> <role>` lines. */
typedef struct curve_fixture {
  char dir[64];
  char server_key_file[128];
  char allow_file[128];
  char observers_file[128];
  key_pair server, controller, observer, stranger;
  daemon_proc daemon;
} curve_fixture;

static void new_pair(key_pair *pair) {
  assert_int_equal(zmq_curve_keypair(pair->public_key, pair->secret_key), 0);
}

static void write_file(const char *path, const char *text) {
  FILE *file = fopen(path, "w");
  assert_non_null(file);
  assert_int_equal(fputs(text, file) >= 0, 1);
  assert_int_equal(fclose(file), 0);
}

static void make_temp_dir(char *dir, size_t size) {
  snprintf(dir, size, "/tmp/lcpsim-auth-XXXXXX");
  assert_non_null(mkdtemp(dir));
}

static void remove_tree(const char *dir) {
  char command[256];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  assert_int_equal(system(command), 0);
}

static int setup_curve(void **state) {
  curve_fixture *f = calloc(1, sizeof *f);
  make_temp_dir(f->dir, sizeof f->dir);
  new_pair(&f->server);
  new_pair(&f->controller);
  new_pair(&f->observer);
  new_pair(&f->stranger);
  char text[512];
  snprintf(f->server_key_file, sizeof f->server_key_file, "%s/server.key", f->dir);
  snprintf(text, sizeof text, "# the daemon's\nsecret-key = \"%s\"\n", f->server.secret_key);
  write_file(f->server_key_file, text);
  /* Two allow-lists (--authorized-keys twice): their keys add up. */
  snprintf(f->allow_file, sizeof f->allow_file, "%s/allowed", f->dir);
  snprintf(text, sizeof text, "# lcpsim allow-list\n\n%s controller # the controller\n",
           f->controller.public_key);
  write_file(f->allow_file, text);
  snprintf(f->observers_file, sizeof f->observers_file, "%s/observers", f->dir);
  snprintf(text, sizeof text, "%s observer\n", f->observer.public_key);
  write_file(f->observers_file, text);
  const char *args[] = {"--curve-secret-key",
                        f->server_key_file,
                        "--authorized-keys",
                        f->allow_file,
                        "--authorized-keys",
                        f->observers_file,
                        NULL};
  daemon_start(&f->daemon, args);
  *state = f;
  return 0;
}

static int teardown_curve(void **state) {
  curve_fixture *f = *state;
  daemon_stop(&f->daemon);
  remove_tree(f->dir);
  free(f);
  test_context_destroy();
  return 0;
}

/* A socket of type connected to endpoint with CURVE (server_key NULL: plain). */
static void *connect_keyed(int type, const char *endpoint, const char *server_key,
                           const key_pair *client) {
  void *socket = zmq_socket(test_context(), type);
  assert_non_null(socket);
  int zero = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero);
  if (server_key) {
    assert_int_equal(zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, server_key, 40), 0);
    assert_int_equal(zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, client->public_key, 40), 0);
    assert_int_equal(zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, client->secret_key, 40), 0);
  }
  if (type == ZMQ_SUB)
    assert_int_equal(zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "state", 5), 0);
  assert_int_equal(zmq_connect(socket, endpoint), 0);
  return socket;
}

static void *connect_as(const curve_fixture *f, const key_pair *client) {
  return connect_keyed(ZMQ_REQ, f->daemon.rep, f->server.public_key, client);
}

static uint64_t step_count(void *socket) {
  Lcpsim__V1__Reply *reply = call_get_state(socket, 77, false);
  uint64_t count = reply->get_state->state->step_count;
  reply_free(&reply);
  return count;
}

/* ---- one request of every call, each one that would change the world
 * (or the daemon) when a controller sent it ---- */

typedef struct every_call {
  Lcpsim__V1__PingRequest ping;
  Lcpsim__V1__GetInfoRequest get_info;
  Lcpsim__V1__GetStateRequest get_state;
  Lcpsim__V1__StepRequest step;
  Lcpsim__V1__SetTargetRequest set_target;
  double position;
  Lcpsim__V1__LoadModelRequest load_model;
  char urdf_path[512];
  Lcpsim__V1__SpawnRequest spawn;
  Lcpsim__V1__Shape shape;
  Lcpsim__V1__Pose pose;
  Lcpsim__V1__Vec3 position3, gravity, force;
  Lcpsim__V1__RemoveRequest remove;
  Lcpsim__V1__ResetRequest reset;
  Lcpsim__V1__SaveStateRequest save_state;
  Lcpsim__V1__RestoreStateRequest restore_state;
  Lcpsim__V1__SetSettingsRequest set_settings;
  Lcpsim__V1__SubscribeRequest subscribe;
  Lcpsim__V1__SetRobotStateRequest set_robot_state;
  double q[7];
  Lcpsim__V1__SetBodyStateRequest set_body_state;
  Lcpsim__V1__ApplyWrenchRequest apply_wrench;
  Lcpsim__V1__SetDynamicsRequest set_dynamics;
  Lcpsim__V1__BodyDynamics body_dynamics;
  Lcpsim__V1__BodyDynamics *body_dynamics_list[1];
  Lcpsim__V1__AddImuRequest add_imu;
  Lcpsim__V1__CancelStepRequest cancel_step;
} every_call;

static void every_call_init(every_call *c) {
  *c = (every_call){0};
  lcpsim__v1__ping_request__init(&c->ping);
  lcpsim__v1__get_info_request__init(&c->get_info);
  lcpsim__v1__get_state_request__init(&c->get_state);
  lcpsim__v1__step_request__init(&c->step);
  c->step.steps = 5;
  lcpsim__v1__set_target_request__init(&c->set_target);
  c->set_target.robot = "arm7";
  c->set_target.mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
  c->position = 0.5;
  c->set_target.n_position = 1;
  c->set_target.position = &c->position;
  lcpsim__v1__load_model_request__init(&c->load_model);
  snprintf(c->urdf_path, sizeof c->urdf_path, "%s/arm7.urdf", robots_dir());
  c->load_model.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  c->load_model.urdf_path = c->urdf_path;
  c->load_model.name = "second_arm";
  lcpsim__v1__vec3__init(&c->position3);
  c->position3.x = 3;
  c->position3.z = 1;
  lcpsim__v1__pose__init(&c->pose);
  c->pose.position = &c->position3;
  lcpsim__v1__shape__init(&c->shape);
  c->shape.type = LCPSIM__V1__SHAPE__TYPE__BOX;
  c->shape.half_extents = &c->position3;
  lcpsim__v1__spawn_request__init(&c->spawn);
  c->spawn.name = "intruder";
  c->spawn.shape = &c->shape;
  c->spawn.pose = &c->pose;
  c->spawn.mass = 1;
  lcpsim__v1__remove_request__init(&c->remove);
  c->remove.name = "box";
  lcpsim__v1__reset_request__init(&c->reset);
  lcpsim__v1__save_state_request__init(&c->save_state);
  c->save_state.slot = "observer-slot";
  lcpsim__v1__restore_state_request__init(&c->restore_state);
  c->restore_state.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  c->restore_state.slot = "start";
  lcpsim__v1__vec3__init(&c->gravity);
  c->gravity.z = 9.81; /* upside down */
  lcpsim__v1__set_settings_request__init(&c->set_settings);
  c->set_settings.gravity = &c->gravity;
  lcpsim__v1__subscribe_request__init(&c->subscribe);
  c->subscribe.every_steps = 1;
  lcpsim__v1__set_robot_state_request__init(&c->set_robot_state);
  c->set_robot_state.robot = "arm7";
  for (int i = 0; i < 7; ++i)
    c->q[i] = 0.3;
  c->set_robot_state.n_q = 7;
  c->set_robot_state.q = c->q;
  lcpsim__v1__set_body_state_request__init(&c->set_body_state);
  c->set_body_state.body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
  c->set_body_state.name = "box";
  c->set_body_state.pose = &c->pose;
  lcpsim__v1__vec3__init(&c->force);
  c->force.z = 100;
  lcpsim__v1__apply_wrench_request__init(&c->apply_wrench);
  c->apply_wrench.target = "box";
  c->apply_wrench.force = &c->force;
  c->apply_wrench.duration = LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD;
  lcpsim__v1__body_dynamics__init(&c->body_dynamics);
  c->body_dynamics.body = "box";
  c->body_dynamics.mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
  c->body_dynamics.mass = 50;
  c->body_dynamics_list[0] = &c->body_dynamics;
  lcpsim__v1__set_dynamics_request__init(&c->set_dynamics);
  c->set_dynamics.n_bodies = 1;
  c->set_dynamics.bodies = c->body_dynamics_list;
  lcpsim__v1__add_imu_request__init(&c->add_imu);
  c->add_imu.name = "spy";
  c->add_imu.robot = "arm7";
  lcpsim__v1__cancel_step_request__init(&c->cancel_step);
}

typedef struct call_entry {
  Lcpsim__V1__Request__CallCase call_case;
  const char *name; /* as the daemon names it in a refusal */
  void *body;
  bool mutates;
} call_entry;

static int every_call_list(every_call *c, call_entry *out) {
  call_entry list[] = {
      {LCPSIM__V1__REQUEST__CALL_PING, "ping", &c->ping, false},
      {LCPSIM__V1__REQUEST__CALL_GET_INFO, "get_info", &c->get_info, false},
      {LCPSIM__V1__REQUEST__CALL_GET_STATE, "get_state", &c->get_state, false},
      {LCPSIM__V1__REQUEST__CALL_STEP, "step", &c->step, true},
      {LCPSIM__V1__REQUEST__CALL_SET_TARGET, "set_target", &c->set_target, true},
      {LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, "load_model", &c->load_model, true},
      {LCPSIM__V1__REQUEST__CALL_SPAWN, "spawn", &c->spawn, true},
      {LCPSIM__V1__REQUEST__CALL_REMOVE, "remove", &c->remove, true},
      {LCPSIM__V1__REQUEST__CALL_RESET, "reset", &c->reset, true},
      {LCPSIM__V1__REQUEST__CALL_SAVE_STATE, "save_state", &c->save_state, true},
      {LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, "restore_state", &c->restore_state, true},
      {LCPSIM__V1__REQUEST__CALL_SET_SETTINGS, "set_settings", &c->set_settings, true},
      {LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, "subscribe", &c->subscribe, true},
      {LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE, "set_robot_state", &c->set_robot_state, true},
      {LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE, "set_body_state", &c->set_body_state, true},
      {LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH, "apply_wrench", &c->apply_wrench, true},
      {LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS, "set_dynamics", &c->set_dynamics, true},
      {LCPSIM__V1__REQUEST__CALL_ADD_IMU, "add_imu", &c->add_imu, true},
      {LCPSIM__V1__REQUEST__CALL_CANCEL_STEP, "cancel_step", &c->cancel_step, true},
  };
  int count = (int)(sizeof list / sizeof list[0]);
  memcpy(out, list, sizeof list);
  return count;
}

/* The controller's view of everything an observer must not change: the
 * world's snapshot hash, its step count, the snapshot slots (a slot the
 * observer tried to write must not exist). */
typedef struct world_view {
  uint64_t hash, steps;
} world_view;

static world_view view(void *controller) {
  return (world_view){world_hash(controller), step_count(controller)};
}

static void assert_no_slot(void *controller, const char *slot) {
  Lcpsim__V1__RestoreStateRequest restore = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  restore.slot = (char *)slot;
  Lcpsim__V1__Request request = request_of(91, LCPSIM__V1__REQUEST__CALL_RESTORE_STATE, &restore);
  Lcpsim__V1__Reply *reply = rpc(controller, &request);
  assert_error(reply, 91, LCPSIM__V1__STATUS__CODE__NOT_FOUND, NULL);
  reply_free(&reply);
}

/* ---- peers without an allowed key ---- */

/* Sends one request of every call on a DEALER, then watches it: nothing may
 * come back. A DEALER whose handshake was refused has no pipe until it
 * reconnects, and a send then waits for one: each send waits at most
 * SEND_WAIT_MS, and a request that could not be queued is as unanswered as
 * one the daemon dropped. */
#define SEND_WAIT_MS 500
static void assert_silence(void *dealer) {
  every_call calls;
  every_call_init(&calls);
  call_entry list[32];
  int count = every_call_list(&calls, list);
  int wait_ms = SEND_WAIT_MS;
  assert_int_equal(zmq_setsockopt(dealer, ZMQ_SNDTIMEO, &wait_ms, sizeof wait_ms), 0);
  for (int i = 0; i < count; ++i) {
    Lcpsim__V1__Request request = request_of((uint64_t)(100 + i), list[i].call_case, list[i].body);
    size_t size = lcpsim__v1__request__get_packed_size(&request);
    unsigned char *data = malloc(size ? size : 1);
    assert_non_null(data);
    lcpsim__v1__request__pack(&request, data);
    if (zmq_send(dealer, "", 0, ZMQ_SNDMORE) == 0)
      assert_int_equal(zmq_send(dealer, data, size, 0), (int)size);
    else
      assert_int_equal(zmq_errno(), EAGAIN);
    free(data);
  }
  unsigned char *frame = NULL;
  long size = receive_frame(dealer, SILENCE_MS, &frame);
  if (size >= 0)
    fail_msg("a peer without an allowed key got a %ld-byte reply", size);
  free(frame);
}

static void test_peers_without_allowed_key_get_nothing(void **state) {
  curve_fixture *f = *state;
  void *controller = connect_as(f, &f->controller);
  world_view before = view(controller);
  /* A wrong server key (the client's handshake does not decrypt), no key at
   * all (a plain-text client), and the right server key with a key not on
   * the allow-list. */
  void *peers[3] = {
      connect_keyed(ZMQ_DEALER, f->daemon.rep, f->stranger.public_key, &f->controller),
      connect_keyed(ZMQ_DEALER, f->daemon.rep, NULL, NULL),
      connect_keyed(ZMQ_DEALER, f->daemon.rep, f->server.public_key, &f->stranger),
  };
  for (int i = 0; i < 3; ++i)
    assert_silence(peers[i]);
  world_view after = view(controller);
  assert_int_equal(after.hash, before.hash);
  assert_int_equal(after.steps, before.steps);
  assert_no_slot(controller, "observer-slot");
  /* The daemon is well and serves its controller. */
  assert_true(call_ping(controller, 5));
  for (int i = 0; i < 3; ++i)
    close_socket(&peers[i]);
  close_socket(&controller);
}

/* A subscriber without an allowed key receives no state. */
static void test_stream_needs_allowed_key(void **state) {
  curve_fixture *f = *state;
  void *controller = connect_as(f, &f->controller);
  void *observer_sub = connect_keyed(ZMQ_SUB, f->daemon.pub, f->server.public_key, &f->observer);
  void *stranger_sub = connect_keyed(ZMQ_SUB, f->daemon.pub, f->server.public_key, &f->stranger);
  void *plain_sub = connect_keyed(ZMQ_SUB, f->daemon.pub, NULL, NULL);
  Lcpsim__V1__SubscribeRequest subscribe = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  subscribe.every_steps = 1;
  Lcpsim__V1__Request request = request_of(2, LCPSIM__V1__REQUEST__CALL_SUBSCRIBE, &subscribe);
  Lcpsim__V1__Reply *reply = rpc(controller, &request);
  assert_ok(reply, 2, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
  /* The observer's subscription takes effect once it is connected: step
   * until a state comes (a bounded number of tries). */
  Lcpsim__V1__State *got = NULL;
  for (int i = 0; i < 400 && !got; ++i) {
    call_step(controller, (uint64_t)(10 + i), 1);
    got = receive_state(observer_sub, 25);
  }
  assert_non_null(got);
  lcpsim__v1__state__free_unpacked(got, NULL);
  /* Steps published after the observer's first state: the others see none. */
  for (int i = 0; i < 20; ++i)
    call_step(controller, (uint64_t)(500 + i), 1);
  assert_null(receive_state(stranger_sub, SILENCE_MS));
  assert_null(receive_state(plain_sub, 10));
  subscribe.every_steps = 0;
  reply = rpc(controller, &request);
  assert_ok(reply, 2, LCPSIM__V1__REPLY__RESULT_SUBSCRIBE);
  reply_free(&reply);
  close_socket(&plain_sub);
  close_socket(&stranger_sub);
  close_socket(&observer_sub);
  close_socket(&controller);
}

/* ---- the observer ---- */

static void test_observer_may_read_only(void **state) {
  curve_fixture *f = *state;
  void *controller = connect_as(f, &f->controller);
  void *observer = connect_as(f, &f->observer);
  /* A slot the observer's RestoreState names, and a world that moved. */
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  save.slot = "start";
  Lcpsim__V1__Request request = request_of(1, LCPSIM__V1__REQUEST__CALL_SAVE_STATE, &save);
  Lcpsim__V1__Reply *reply = rpc(controller, &request);
  assert_ok(reply, 1, LCPSIM__V1__REPLY__RESULT_SAVE_STATE);
  reply_free(&reply);
  call_step(controller, 2, 10);

  every_call calls;
  every_call_init(&calls);
  call_entry list[32];
  int count = every_call_list(&calls, list);
  for (int i = 0; i < count; ++i) {
    world_view before = view(controller);
    uint64_t id = (uint64_t)(1000 + i);
    request = request_of(id, list[i].call_case, list[i].body);
    reply = rpc(observer, &request);
    if (list[i].mutates) {
      assert_error(reply, id, LCPSIM__V1__STATUS__CODE__PERMISSION_DENIED, "observer");
      if (!strstr(reply->status->message, list[i].name))
        fail_msg("the refusal of %s does not name the call: %s", list[i].name,
                 reply->status->message);
    } else {
      assert_non_null(reply->status);
      assert_int_equal(reply->status->code, LCPSIM__V1__STATUS__CODE__OK);
    }
    reply_free(&reply);
    world_view after = view(controller);
    if (after.hash != before.hash || after.steps != before.steps)
      fail_msg("the observer's %s changed the world", list[i].name);
  }
  assert_no_slot(controller, "observer-slot");
  /* The stream stayed off: a controller's step publishes nothing. */
  void *sub = connect_keyed(ZMQ_SUB, f->daemon.pub, f->server.public_key, &f->observer);
  call_step(controller, 3, 5);
  assert_null(receive_state(sub, 300));
  close_socket(&sub);
  close_socket(&observer);
  close_socket(&controller);
}

/* While a controller's Step runs, an observer's CancelStep and Reset are
 * refused (at once or when their turn comes) and the Step runs to its end. */
static void test_observer_during_step(void **state) {
  curve_fixture *f = *state;
  void *controller = connect_keyed(ZMQ_DEALER, f->daemon.rep, f->server.public_key, &f->controller);
  void *observer = connect_keyed(ZMQ_DEALER, f->daemon.rep, f->server.public_key, &f->observer);
  void *reader = connect_as(f, &f->controller);
  uint64_t steps_before = step_count(reader);
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = 4000;
  Lcpsim__V1__Request request = request_of(7, LCPSIM__V1__REQUEST__CALL_STEP, &step);
  dealer_send(controller, &request);
  Lcpsim__V1__CancelStepRequest cancel = LCPSIM__V1__CANCEL_STEP_REQUEST__INIT;
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  Lcpsim__V1__Request cancel_request =
      request_of(8, LCPSIM__V1__REQUEST__CALL_CANCEL_STEP, &cancel);
  Lcpsim__V1__Request reset_request = request_of(9, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
  dealer_send(observer, &cancel_request);
  dealer_send(observer, &reset_request);
  for (uint64_t id = 8; id <= 9; ++id) {
    Lcpsim__V1__Reply *reply = receive_reply(observer);
    assert_error(reply, reply->id, LCPSIM__V1__STATUS__CODE__PERMISSION_DENIED, "observer");
    assert_true(reply->id == 8 || reply->id == 9);
    reply_free(&reply);
  }
  Lcpsim__V1__Reply *reply = receive_reply(controller);
  assert_ok(reply, 7, LCPSIM__V1__REPLY__RESULT_STEP);
  assert_false(reply->step->cancelled);
  reply_free(&reply);
  assert_int_equal(step_count(reader), steps_before + 4000);
  close_socket(&reader);
  close_socket(&observer);
  close_socket(&controller);
}

/* ---- the log of refused peers ---- */

static int count_lines_with(const char *text, const char *needle) {
  int count = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
    count++;
  return count;
}

/* Refused peers are logged once per address a minute: several unknown keys
 * from 127.0.0.1, each reconnecting and failing again, make one line; so do
 * several plain-text peers. */
static void test_refusals_logged_once_per_peer(void **state) {
  (void)state;
  curve_fixture *f = NULL; /* setup_curve makes it */
  char log_path[] = "/tmp/lcpsim-auth-log-XXXXXX";
  int log_fd = mkstemp(log_path);
  assert_true(log_fd >= 0);
  /* The daemon inherits this process's stderr: pointed at the file while
   * it starts. */
  int saved = dup(STDERR_FILENO);
  dup2(log_fd, STDERR_FILENO);
  setup_curve((void **)&f);
  dup2(saved, STDERR_FILENO);
  close(saved);
  key_pair strangers[3];
  void *peers[6];
  for (int i = 0; i < 3; ++i) {
    new_pair(&strangers[i]);
    peers[i] = connect_keyed(ZMQ_DEALER, f->daemon.rep, f->server.public_key, &strangers[i]);
    peers[3 + i] = connect_keyed(ZMQ_DEALER, f->daemon.rep, NULL, NULL);
  }
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(1, LCPSIM__V1__REQUEST__CALL_PING, &ping);
  for (int i = 0; i < 6; ++i)
    dealer_send(peers[i], &request);
  unsigned char *frame = NULL;
  for (int i = 0; i < 6; ++i)
    assert_true(receive_frame(peers[i], i == 0 ? SILENCE_MS : 10, &frame) < 0);
  for (int i = 0; i < 6; ++i)
    close_socket(&peers[i]);
  char rep[256];
  snprintf(rep, sizeof rep, "%s", f->daemon.rep);
  teardown_curve((void **)&f);
  char text[65536] = "";
  ssize_t got = pread(log_fd, text, sizeof text - 1, 0);
  close(log_fd);
  unlink(log_path);
  assert_true(got > 0);
  assert_int_equal(count_lines_with(text, "refused a connection from 127.0.0.1: its public key"),
                   1);
  /* Handshakes that fail before the allow-list is asked are reported by
   * libzmq with the daemon's endpoint, not the peer's address. */
  char plain[320];
  snprintf(plain, sizeof plain, "refused a connection from a peer of %s", rep);
  if (count_lines_with(text, plain) != 1)
    fail_msg("expected one line '%s' in the log:\n%s", plain, text);
}

/* ---- key files and start-up rules ---- */

static int run(const char *const *args, char *err, size_t err_size) {
  char out[4096];
  return daemon_run_to_exit(args, out, sizeof out, err, err_size);
}

static void assert_start_fails(const char *const *args, const char *needle) {
  char err[8192];
  int status = run(args, err, sizeof err);
  assert_true(status != 0);
  if (!strstr(err, needle))
    fail_msg("expected '%s' in the error, got: %s", needle, err);
}

static void test_gen_keys(void **state) {
  (void)state;
  char dir[64], name[128], path[160], err[4096];
  make_temp_dir(dir, sizeof dir);
  snprintf(name, sizeof name, "%s/peer", dir);
  const char *args[] = {"--gen-keys", name, "--key-role", "observer", NULL};
  assert_int_equal(run(args, err, sizeof err), 0);
  struct stat info;
  snprintf(path, sizeof path, "%s.key", name);
  assert_int_equal(stat(path, &info), 0);
  assert_int_equal(info.st_mode & 0777, 0600);
  FILE *file = fopen(path, "r");
  char text[1024] = "";
  assert_true(fread(text, 1, sizeof text - 1, file) > 0);
  fclose(file);
  key_pair pair;
  const char *pub = strstr(text, "public-key = \""), *sec = strstr(text, "secret-key = \"");
  assert_non_null(pub);
  assert_non_null(sec);
  memcpy(pair.public_key, pub + 14, 40);
  memcpy(pair.secret_key, sec + 14, 40);
  pair.public_key[40] = pair.secret_key[40] = '\0';
  char derived[41];
  assert_int_equal(zmq_curve_public(derived, pair.secret_key), 0);
  assert_string_equal(derived, pair.public_key);
  snprintf(path, sizeof path, "%s.pub", name);
  assert_int_equal(stat(path, &info), 0);
  assert_int_equal(info.st_mode & 0777, 0644);
  file = fopen(path, "r");
  memset(text, 0, sizeof text);
  assert_true(fread(text, 1, sizeof text - 1, file) > 0);
  fclose(file);
  assert_non_null(strstr(text, pair.public_key));
  assert_null(strstr(text, pair.secret_key));
  assert_non_null(strstr(text, "role = observer"));
  /* Never over an existing key. */
  assert_start_fails(args, "never overwrites");
  /* The pair works: a directory allow-list of that .pub makes an observer. */
  char server[128], allow[128];
  snprintf(server, sizeof server, "%s/server", dir);
  const char *server_args[] = {"--gen-keys", server, NULL};
  assert_int_equal(run(server_args, err, sizeof err), 0);
  snprintf(allow, sizeof allow, "%s/allow", dir);
  assert_int_equal(mkdir(allow, 0700), 0);
  char from[160], to[160];
  snprintf(from, sizeof from, "%s.pub", name);
  snprintf(to, sizeof to, "%s/peer.pub", allow);
  assert_int_equal(rename(from, to), 0);
  snprintf(path, sizeof path, "%s.key", server);
  const char *daemon_args[] = {"--curve-secret-key", path, "--authorized-keys", allow, NULL};
  daemon_proc d;
  daemon_start(&d, daemon_args);
  file = fopen(path, "r");
  memset(text, 0, sizeof text);
  assert_true(fread(text, 1, sizeof text - 1, file) > 0);
  fclose(file);
  char server_public[41];
  memcpy(server_public, strstr(text, "public-key = \"") + 14, 40);
  server_public[40] = '\0';
  void *observer = connect_keyed(ZMQ_REQ, d.rep, server_public, &pair);
  assert_true(call_ping(observer, 1));
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  Lcpsim__V1__Request request = request_of(2, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
  Lcpsim__V1__Reply *reply = rpc(observer, &request);
  assert_error(reply, 2, LCPSIM__V1__STATUS__CODE__PERMISSION_DENIED, "reset");
  reply_free(&reply);
  close_socket(&observer);
  daemon_stop(&d);
  test_context_destroy();
  remove_tree(dir);
}

static void test_key_file_errors(void **state) {
  (void)state;
  char dir[64], server[128], allow[128], bad[128], text[512];
  make_temp_dir(dir, sizeof dir);
  key_pair s, c;
  new_pair(&s);
  new_pair(&c);
  snprintf(server, sizeof server, "%s/server.key", dir);
  snprintf(text, sizeof text, "secret-key = \"%s\"\n", s.secret_key);
  write_file(server, text);
  snprintf(allow, sizeof allow, "%s/allowed", dir);
  const char *args[] = {"--curve-secret-key", server, "--authorized-keys", allow, NULL};
  char needle[256];

  /* A role that is neither, on line 3. */
  snprintf(text, sizeof text, "# keys\n%s controller\n%s admin\n", c.public_key, s.public_key);
  write_file(allow, text);
  snprintf(needle, sizeof needle, "%s:3:", allow);
  assert_start_fails(args, needle);
  /* A key that is not 40 characters of Z85, on line 1. */
  write_file(allow, "not-a-key controller\n");
  snprintf(needle, sizeof needle, "%s:1:", allow);
  assert_start_fails(args, needle);
  /* A key without its role, on line 2. */
  snprintf(text, sizeof text, "\n%s\n", c.public_key);
  write_file(allow, text);
  snprintf(needle, sizeof needle, "%s:2:", allow);
  assert_start_fails(args, needle);
  /* Words after the role that are not a comment. */
  snprintf(text, sizeof text, "%s observer extra\n", c.public_key);
  write_file(allow, text);
  snprintf(needle, sizeof needle, "%s:1:", allow);
  assert_start_fails(args, needle);
  /* An empty allow-list. */
  write_file(allow, "# nobody\n");
  assert_start_fails(args, "no keys");

  /* The server's key file: a bad secret key on line 2. */
  snprintf(text, sizeof text, "%s controller\n", c.public_key);
  write_file(allow, text);
  snprintf(bad, sizeof bad, "%s/bad.key", dir);
  write_file(bad, "# mine\nsecret-key = \"short\"\n");
  const char *bad_args[] = {"--curve-secret-key", bad, "--authorized-keys", allow, NULL};
  snprintf(needle, sizeof needle, "%s:2:", bad);
  assert_start_fails(bad_args, needle);
  /* A public key file where the secret one belongs. */
  snprintf(text, sizeof text, "public-key = \"%s\"\n", s.public_key);
  write_file(bad, text);
  assert_start_fails(bad_args, "no secret-key");
  /* A public key that does not belong to the secret key. */
  snprintf(text, sizeof text, "public-key = \"%s\"\nsecret-key = \"%s\"\n", c.public_key,
           s.secret_key);
  write_file(bad, text);
  assert_start_fails(bad_args, "is not the public key of secret-key");
  /* An unknown name. */
  write_file(bad, "\n\n\nsecret = 1\n");
  snprintf(needle, sizeof needle, "%s:4:", bad);
  assert_start_fails(bad_args, needle);

  /* A directory allow-list: a .pub with a secret key, a .pub with a bad role. */
  char keys_dir[128], pub[192];
  snprintf(keys_dir, sizeof keys_dir, "%s/keys", dir);
  assert_int_equal(mkdir(keys_dir, 0700), 0);
  snprintf(pub, sizeof pub, "%s/leak.pub", keys_dir);
  snprintf(text, sizeof text, "secret-key = \"%s\"\n", c.secret_key);
  write_file(pub, text);
  const char *dir_args[] = {"--curve-secret-key", server, "--authorized-keys", keys_dir, NULL};
  assert_start_fails(dir_args, "holds a secret-key");
  /* One .pub file as the allow-list: read as a key file too. */
  const char *pub_args[] = {"--curve-secret-key", server, "--authorized-keys", pub, NULL};
  assert_start_fails(pub_args, "holds a secret-key");
  snprintf(text, sizeof text, "public-key = \"%s\"\nrole = root\n", c.public_key);
  write_file(pub, text);
  snprintf(needle, sizeof needle, "%s:2:", pub);
  assert_start_fails(dir_args, needle);

  /* One without the other. */
  const char *half[] = {"--curve-secret-key", server, NULL};
  assert_start_fails(half, "go together");
  remove_tree(dir);
}

static void test_non_loopback_needs_curve_or_insecure(void **state) {
  (void)state;
  const char *exposed[] = {"--bind", "tcp://0.0.0.0:0", "--pub", "tcp://127.0.0.1:0", NULL};
  assert_start_fails(exposed, "--insecure");
  assert_start_fails(exposed, "--gen-keys");
  const char *exposed_pub[] = {"--bind", "tcp://127.0.0.1:0", "--pub", "tcp://*:0", NULL};
  assert_start_fails(exposed_pub, "--pub tcp://*:0");
  /* With --insecure it serves (a ping over the loopback). */
  daemon_proc d;
  const char *insecure[] = {"--bind", "tcp://0.0.0.0:0", "--insecure", NULL};
  daemon_start(&d, insecure);
  const char *port = strrchr(d.rep, ':');
  char endpoint[64];
  snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1%s", port);
  void *req = connect_req(endpoint);
  assert_true(call_ping(req, 1));
  close_socket(&req);
  daemon_stop(&d);
  /* Loopback names need neither. */
  char ipc[64];
  snprintf(ipc, sizeof ipc, "ipc:///tmp/lcpsim-auth-test-%d", (int)getpid());
  const char *local[] = {"--bind", "tcp://lo:0", "--pub", ipc, NULL};
  daemon_start(&d, local);
  daemon_stop(&d);
  /* With CURVE it serves, and only keyed peers. */
  char dir[64], server[128], allow[128], text[256];
  make_temp_dir(dir, sizeof dir);
  key_pair s, c;
  new_pair(&s);
  new_pair(&c);
  snprintf(server, sizeof server, "%s/server.key", dir);
  snprintf(text, sizeof text, "secret-key = %s\n", s.secret_key); /* quotes are optional */
  write_file(server, text);
  snprintf(allow, sizeof allow, "%s/allowed", dir);
  snprintf(text, sizeof text, "%s controller\n", c.public_key);
  write_file(allow, text);
  const char *curve[] = {"--bind",
                         "tcp://0.0.0.0:0",
                         "--pub",
                         "tcp://0.0.0.0:0",
                         "--curve-secret-key",
                         server,
                         "--authorized-keys",
                         allow,
                         NULL};
  daemon_start(&d, curve);
  port = strrchr(d.rep, ':');
  snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1%s", port);
  req = connect_keyed(ZMQ_REQ, endpoint, s.public_key, &c);
  assert_true(call_ping(req, 1));
  close_socket(&req);
  daemon_stop(&d);
  test_context_destroy();
  remove_tree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_peers_without_allowed_key_get_nothing, setup_curve,
                                      teardown_curve),
      cmocka_unit_test_setup_teardown(test_stream_needs_allowed_key, setup_curve, teardown_curve),
      cmocka_unit_test_setup_teardown(test_observer_may_read_only, setup_curve, teardown_curve),
      cmocka_unit_test_setup_teardown(test_observer_during_step, setup_curve, teardown_curve),
      cmocka_unit_test(test_refusals_logged_once_per_peer),
      cmocka_unit_test(test_gen_keys),
      cmocka_unit_test(test_key_file_errors),
      cmocka_unit_test(test_non_loopback_needs_curve_or_insecure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
