/* SPDX-License-Identifier: Apache-2.0 */
/* The C client against a daemon with CURVE on (lcpsimd --curve-secret-key): key files load, a
 * controller's key steps, an observer's key reads and subscribes but its Step is
 * PERMISSION_DENIED and changes nothing, an unknown key and a wrong server key get no reply (a
 * timeout); the ping example connects with key files.
 *
 *   test_c_auth PATH_TO_LCPSIMD PATH_TO_PING
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka needs these first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lcpsim_client.h"
#include "test_daemon.h"

/* How long a refused client waits for the reply that must not come. */
#define REFUSED_TIMEOUT_MS 1500

static const char *daemon_path, *ping_path;

typedef struct {
  char dir[64];
  char path[8][128]; /* key files, see key_path */
  test_daemon_t daemon;
} fixture_t;

enum { SERVER, CONTROLLER, OBSERVER, STRANGER };
static const char *const KEY_NAMES[] = {"server", "controller", "observer", "stranger"};

/* The file of a key: public (NAME.pub) or the pair (NAME.key). */
static const char *key_path(fixture_t *f, int who, bool pair) { return f->path[2 * who + pair]; }

static int run_command(const char *command) {
  int status = system(command);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int start(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "/tmp/lcpsim-c-auth-XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  char command[1024];
  for (int who = SERVER; who <= STRANGER; ++who) {
    snprintf(command, sizeof command, "'%s' --gen-keys '%s/%s' --key-role %s >/dev/null",
             daemon_path, f->dir, KEY_NAMES[who], who == OBSERVER ? "observer" : "controller");
    assert_int_equal(run_command(command), 0);
    snprintf(f->path[2 * who], sizeof f->path[0], "%s/%s.pub", f->dir, KEY_NAMES[who]);
    snprintf(f->path[2 * who + 1], sizeof f->path[0], "%s/%s.key", f->dir, KEY_NAMES[who]);
  }
  /* The allow-list: a directory of the controller's and the observer's .pub files. */
  snprintf(command, sizeof command, "mkdir '%s/allow' && cp '%s' '%s' '%s/allow/'", f->dir,
           key_path(f, CONTROLLER, false), key_path(f, OBSERVER, false), f->dir);
  assert_int_equal(run_command(command), 0);
  char allow[128];
  snprintf(allow, sizeof allow, "%s/allow", f->dir);
  const char *args[] = {"--curve-secret-key", key_path(f, SERVER, true), "--authorized-keys", allow,
                        NULL};
  assert_int_equal(test_daemon_start_args(daemon_path, args, &f->daemon), 0);
  *state = f;
  return 0;
}

static int stop(void **state) {
  fixture_t *f = *state;
  int status = test_daemon_stop(&f->daemon);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", f->dir);
  run_command(command);
  free(f);
  return status == 0 ? 0 : -1;
}

static lcpsim_client_t *connect_as(fixture_t *f, int who, int server, int timeout_ms) {
  lcpsim_curve_keys_t keys;
  char why[512];
  if (lcpsim_curve_keys_load(key_path(f, server, false), key_path(f, who, true), &keys, why,
                             sizeof why) != LCPSIM_OK)
    fail_msg("%s", why);
  lcpsim_client_t *client = NULL;
  assert_int_equal(lcpsim_client_connect_secure(f->daemon.rep, timeout_ms, &keys, &client),
                   LCPSIM_OK);
  return client;
}

static uint64_t step_count(lcpsim_client_t *client) {
  lcpsim_state_t *state = NULL;
  assert_int_equal(lcpsim_client_get_state(client, LCPSIM_WITHOUT_CONTACTS, &state), LCPSIM_OK);
  uint64_t count = state->step_count;
  lcpsim_state_destroy(&state);
  return count;
}

static void test_key_files(void **state) {
  fixture_t *f = *state;
  char public_key[LCPSIM_KEY_SIZE], secret_key[LCPSIM_KEY_SIZE], why[512];
  assert_int_equal(
      lcpsim_read_key_file(key_path(f, CONTROLLER, true), public_key, secret_key, why, sizeof why),
      LCPSIM_OK);
  assert_int_equal(strlen(public_key), 40);
  assert_int_equal(strlen(secret_key), 40);
  char from_pub[LCPSIM_KEY_SIZE];
  assert_int_equal(
      lcpsim_read_key_file(key_path(f, CONTROLLER, false), from_pub, secret_key, why, sizeof why),
      LCPSIM_OK);
  assert_string_equal(from_pub, public_key);
  assert_string_equal(secret_key, ""); /* a .pub holds no secret */
  /* A pair needs a secret key: the .pub is refused as the client's file. */
  lcpsim_curve_keys_t keys;
  assert_int_equal(lcpsim_curve_keys_load(key_path(f, SERVER, false),
                                          key_path(f, CONTROLLER, false), &keys, why, sizeof why),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(why, "secret-key"));
  /* A malformed line is named by file and line. */
  char bad[128];
  snprintf(bad, sizeof bad, "%s/bad.key", f->dir);
  FILE *file = fopen(bad, "w");
  fputs("# comment\npublic-key = \"too short\"\n", file);
  fclose(file);
  assert_int_equal(lcpsim_read_key_file(bad, public_key, NULL, why, sizeof why),
                   LCPSIM_ERR_INVALID_ARGUMENT);
  char needle[160];
  snprintf(needle, sizeof needle, "%s:2:", bad);
  assert_non_null(strstr(why, needle));
}

static void test_controller_steps(void **state) {
  fixture_t *f = *state;
  lcpsim_client_t *client = connect_as(f, CONTROLLER, SERVER, 20000);
  uint64_t before = step_count(client);
  assert_int_equal(lcpsim_client_step(client, 3, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_OK);
  assert_int_equal(step_count(client), before + 3);
  lcpsim_client_destroy(&client);
}

static void test_observer_reads_only(void **state) {
  fixture_t *f = *state;
  lcpsim_client_t *client = connect_as(f, OBSERVER, SERVER, 20000);
  char version[64];
  assert_int_equal(lcpsim_client_ping(client, version, sizeof version), LCPSIM_OK);
  uint64_t before = step_count(client);
  assert_int_equal(lcpsim_client_step(client, 3, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                   LCPSIM_ERR_PERMISSION_DENIED);
  assert_non_null(strstr(lcpsim_client_last_error(client), "observer"));
  assert_string_equal(lcpsim_status_name(LCPSIM_ERR_PERMISSION_DENIED), "PERMISSION_DENIED");
  assert_int_equal(lcpsim_client_reset(client), LCPSIM_ERR_PERMISSION_DENIED);
  assert_int_equal(step_count(client), before);
  lcpsim_client_destroy(&client);
}

static void test_observer_subscribes(void **state) {
  fixture_t *f = *state;
  lcpsim_client_t *controller = connect_as(f, CONTROLLER, SERVER, 20000);
  lcpsim_curve_keys_t keys;
  char why[512];
  assert_int_equal(lcpsim_curve_keys_load(key_path(f, SERVER, false), key_path(f, OBSERVER, true),
                                          &keys, why, sizeof why),
                   LCPSIM_OK);
  lcpsim_subscriber_t *subscriber = NULL;
  assert_int_equal(lcpsim_subscriber_new_secure(f->daemon.pub, &keys, &subscriber), LCPSIM_OK);
  assert_int_equal(lcpsim_client_subscribe(controller, 1, LCPSIM_WITHOUT_CONTACTS), LCPSIM_OK);
  /* The subscription takes effect once connected: step until a state comes. */
  lcpsim_state_t *got = NULL;
  for (int i = 0; i < 400 && !got; ++i) {
    assert_int_equal(lcpsim_client_step(controller, 1, NULL, 0, LCPSIM_WITHOUT_CONTACTS, NULL),
                     LCPSIM_OK);
    if (lcpsim_subscriber_receive(subscriber, 25, &got) != LCPSIM_OK)
      got = NULL;
  }
  assert_non_null(got);
  assert_true(got->step_count > 0);
  lcpsim_state_destroy(&got);
  assert_int_equal(lcpsim_client_subscribe(controller, 0, LCPSIM_WITHOUT_CONTACTS), LCPSIM_OK);
  lcpsim_subscriber_destroy(&subscriber);
  lcpsim_client_destroy(&controller);
}

static void test_refused_keys_time_out(void **state) {
  fixture_t *f = *state;
  /* A key not on the allow-list, then the wrong server key, then no key at all. */
  lcpsim_client_t *clients[3] = {
      connect_as(f, STRANGER, SERVER, REFUSED_TIMEOUT_MS),
      connect_as(f, CONTROLLER, STRANGER, REFUSED_TIMEOUT_MS),
      NULL,
  };
  assert_int_equal(lcpsim_client_connect(f->daemon.rep, REFUSED_TIMEOUT_MS, &clients[2]),
                   LCPSIM_OK);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(lcpsim_client_ping(clients[i], NULL, 0), LCPSIM_ERR_TIMEOUT);
    assert_int_equal(lcpsim_client_reset(clients[i]), LCPSIM_ERR_TIMEOUT);
    lcpsim_client_destroy(&clients[i]);
  }
}

static void test_ping_example_with_keys(void **state) {
  fixture_t *f = *state;
  char command[1024];
  snprintf(command, sizeof command,
           "'%s' --timeout-ms 10000 --server-key '%s' --client-key '%s' %s >/dev/null", ping_path,
           key_path(f, SERVER, false), key_path(f, OBSERVER, true), f->daemon.rep);
  assert_int_equal(run_command(command), 0);
  snprintf(command, sizeof command, "'%s' --timeout-ms %d %s >/dev/null 2>&1", ping_path,
           REFUSED_TIMEOUT_MS, f->daemon.rep);
  assert_int_equal(run_command(command), 1);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PATH_TO_LCPSIMD PATH_TO_PING\n", argv[0]);
    return 2;
  }
  daemon_path = argv[1];
  ping_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_key_files),
      cmocka_unit_test(test_controller_steps),
      cmocka_unit_test(test_observer_reads_only),
      cmocka_unit_test(test_observer_subscribes),
      cmocka_unit_test(test_refused_keys_time_out),
      cmocka_unit_test(test_ping_example_with_keys),
  };
  return cmocka_run_group_tests(tests, start, stop);
}
