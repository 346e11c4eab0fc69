/* SPDX-License-Identifier: Apache-2.0 */
/* Files a remote peer names (LoadModel): read only below the model roots
 * (--model-path, the package directories), only regular data files, never
 * quoted back, and XML with a DOCTYPE refused before any entity is expanded.
 * Each refusal names the rule broken, leaves the world as it was (state hash
 * and robot count), and another client's Ping is answered meanwhile.
 *
 * Times are measured and printed; the only bound asserted on them is a hang
 * detector (HANG_SECONDS): a FIFO or /proc/kmsg would block forever and an
 * entity blowup took about a minute before these rules. The times bounded
 * are own times (own_clock in daemon_harness.h): the wall time less what
 * the daemon's and this test's main threads spent waiting for a CPU held by
 * other processes, so that a machine busy with other builds and tests does
 * not fail them, while a daemon that blocks or computes that long does. */
// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include "daemon_harness.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HANG_SECONDS 1.0

#define ASSERT_CONTAINS(haystack, needle)                                                          \
  do {                                                                                             \
    if (!strstr((haystack), (needle)))                                                             \
      fail_msg("'%s' does not contain '%s'", (haystack), (needle));                                \
  } while (0)

#define ASSERT_LACKS(haystack, needle)                                                             \
  do {                                                                                             \
    if (strstr((haystack), (needle)))                                                              \
      fail_msg("'%s' quotes '%s'", (haystack), (needle));                                          \
  } while (0)

#define OUTSIDE_MESSAGE                                                                            \
  ": no such file below the model roots (a path must resolve, symbolic links and '..' followed, "  \
  "to a file below a --model-path or package directory)"

static const char *const TETRA_STL =
    "solid t\n"
    "facet normal 0 0 -1\nouter loop\nvertex 0 0 0\nvertex 0.1 0 0\n"
    "vertex 0 0.1 0\nendloop\nendfacet\n"
    "facet normal 0 -1 0\nouter loop\nvertex 0 0 0\nvertex 0 0 0.1\n"
    "vertex 0.1 0 0\nendloop\nendfacet\n"
    "facet normal -1 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0.1 0\n"
    "vertex 0 0 0.1\nendloop\nendfacet\n"
    "facet normal 1 1 1\nouter loop\nvertex 0.1 0 0\nvertex 0 0 0.1\n"
    "vertex 0 0.1 0\nendloop\nendfacet\n"
    "endsolid t\n";

/* A one-link robot whose collision is the mesh named (printf into it). */
#define MESH_ROBOT                                                                                 \
  "<robot name='m'><link name='a'><inertial><mass value='1'/>"                                     \
  "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>"                          \
  "<collision><geometry><mesh filename='%s'/></geometry></collision></link></robot>"

typedef struct fixture {
  char top[64];      /* a fresh directory: root/ and outside/ in it */
  char root[128];    /* the --model-path */
  char package[160]; /* root/pkg, also --package-path pkg=... */
  char outside[128]; /* files that exist but are outside every root */
  char package_arg[200];
  daemon_proc daemon;
  void *client, *other, *dealer;
  uint64_t next_id;
  double slowest; /* the longest refusal seen, for the report */
} fixture;

static void write_file(const char *path, const char *content) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(content, 1, strlen(content), f), strlen(content));
  fclose(f);
}

static void path_in(char *out, size_t size, const char *dir, const char *name) {
  int n = snprintf(out, size, "%s/%s", dir, name);
  assert_true(n > 0 && (size_t)n < size);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  snprintf(f->top, sizeof f->top, "/tmp/lcpsimd_files_XXXXXX");
  assert_non_null(mkdtemp(f->top));
  path_in(f->root, sizeof f->root, f->top, "root");
  path_in(f->outside, sizeof f->outside, f->top, "outside");
  path_in(f->package, sizeof f->package, f->root, "pkg");
  assert_int_equal(mkdir(f->root, 0755), 0);
  assert_int_equal(mkdir(f->outside, 0755), 0);
  assert_int_equal(mkdir(f->package, 0755), 0);
  char path[512];
  path_in(path, sizeof path, f->package, "tetra.stl");
  write_file(path, TETRA_STL);
  path_in(path, sizeof path, f->outside, "secret.stl");
  write_file(path, TETRA_STL);
  path_in(path, sizeof path, f->outside, "secret.urdf");
  write_file(path, "<robot name='SECRETROBOT'><link name='a'/></robot>\n");
  snprintf(f->package_arg, sizeof f->package_arg, "pkg=%s", f->package);
  daemon_start(&f->daemon,
               (const char *[]){"--model-path", f->root, "--package-path", f->package_arg, NULL});
  f->client = connect_req(f->daemon.rep);
  f->other = connect_req(f->daemon.rep);
  f->dealer = connect_dealer(f->daemon.rep);
  f->next_id = 1000;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  printf("the slowest refusal took %.2f ms (Ping answered meanwhile)\n", 1e3 * f->slowest);
  close_socket(&f->client);
  close_socket(&f->other);
  close_socket(&f->dealer);
  daemon_stop(&f->daemon);
  char command[256];
  snprintf(command, sizeof command, "rm -rf '%s'", f->top);
  assert_int_equal(system(command), 0);
  free(f);
  return 0;
}

static size_t robot_count(void *socket) {
  Lcpsim__V1__Reply *info = call_get_info(socket, 7);
  size_t n = info->get_info->n_robots;
  reply_free(&info);
  return n;
}

/* Sends the LoadModel on the DEALER and a Ping from another client at once;
 * both are answered, the load with the code and a message containing needle
 * (and not `forbidden`, when given); the world is as before. Returns the
 * reply's message in out. */
static void expect_refused(fixture *f, Lcpsim__V1__LoadModelRequest *load,
                           Lcpsim__V1__Status__Code code, const char *needle, const char *forbidden,
                           char *out, size_t out_size) {
  uint64_t before = world_hash(f->client);
  size_t robots = robot_count(f->client);
  uint64_t id = ++f->next_id;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, load);
  own_clock clock = own_clock_start(f->daemon.pid);
  dealer_send(f->dealer, &r);
  assert_true(call_ping(f->other, id + 500000));
  Lcpsim__V1__Reply *reply = receive_reply(f->dealer);
  double took = own_clock_seconds(&clock);
  assert_error(reply, id, code, needle);
  if (forbidden)
    ASSERT_LACKS(reply->status->message, forbidden);
  if (out)
    snprintf(out, out_size, "%s", reply->status->message);
  reply_free(&reply);
  if (!(took < HANG_SECONDS))
    fail_msg("the refusal took %.3f s", took);
  if (took > f->slowest)
    f->slowest = took;
  assert_true(world_hash(f->client) == before);
  assert_int_equal(robot_count(f->client), robots);
}

static void by_path(Lcpsim__V1__LoadModelRequest *load, const char *path) {
  *load = (Lcpsim__V1__LoadModelRequest)LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load->source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
  load->urdf_path = (char *)path;
}

static void by_text(Lcpsim__V1__LoadModelRequest *load, const char *text) {
  *load = (Lcpsim__V1__LoadModelRequest)LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load->source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load->urdf_text = (char *)text;
}

/* The message of a path outside the roots, after the path: the same for a
 * path that exists, one that does not, a device and /proc, so that it tells
 * nothing about the file. */
static void expect_outside(fixture *f, const char *path) {
  Lcpsim__V1__LoadModelRequest load;
  by_path(&load, path);
  char message[1024], expected[1024];
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__NOT_FOUND, OUTSIDE_MESSAGE, "SECRET", message,
                 sizeof message);
  snprintf(expected, sizeof expected, "load_model: %s" OUTSIDE_MESSAGE, path);
  assert_string_equal(message, expected);
}

static void test_paths_outside_the_roots(void **state) {
  fixture *f = *state;
  char path[512];
  expect_outside(f, "/etc/passwd");
  expect_outside(f, "/proc/self/environ");
  expect_outside(f, "/proc/self/pagemap");
  expect_outside(f, "/proc/kmsg");
  expect_outside(f, "/dev/zero");
  expect_outside(f, "/dev/null");
  expect_outside(f, "/nonexistent/robot.urdf");
  path_in(path, sizeof path, f->root, "missing.urdf");
  expect_outside(f, path);
  /* ".." out of the root, to a file that exists. */
  path_in(path, sizeof path, f->root, "../outside/secret.urdf");
  expect_outside(f, path);
  expect_outside(f, "../outside/secret.urdf"); /* relative: below each root */
  expect_outside(f, "pkg/../../outside/secret.urdf");
  /* Symbolic links inside the root to a file and a device outside it. */
  char target[512];
  path_in(path, sizeof path, f->root, "escape.urdf");
  path_in(target, sizeof target, f->outside, "secret.urdf");
  assert_int_equal(symlink(target, path), 0);
  expect_outside(f, path);
  expect_outside(f, "escape.urdf");
  path_in(path, sizeof path, f->root, "zero.urdf");
  assert_int_equal(symlink("/dev/zero", path), 0);
  expect_outside(f, path);
  /* A root "/a/b" does not contain "/a/bc": a sibling directory named like
   * the root with a suffix. */
  char sibling[512];
  snprintf(sibling, sizeof sibling, "%s2", f->root);
  assert_int_equal(mkdir(sibling, 0755), 0);
  path_in(path, sizeof path, sibling, "robot.urdf");
  write_file(path, "<robot name='r'><link name='a'/></robot>\n");
  expect_outside(f, path);
}

/* Inside the roots the rule a file breaks is named. */
static void test_files_inside_the_roots_that_are_not_data(void **state) {
  fixture *f = *state;
  Lcpsim__V1__LoadModelRequest load;
  char path[512];
  path_in(path, sizeof path, f->root, "fifo.urdf");
  assert_int_equal(mkfifo(path, 0644), 0);
  by_path(&load, path);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "fifo.urdf: a FIFO, not a regular file", NULL, NULL, 0);
  by_path(&load, "fifo.urdf");
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "a FIFO, not a regular file",
                 NULL, NULL, 0);
  by_path(&load, f->package);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "a directory, not a regular file", NULL, NULL, 0);
  path_in(path, sizeof path, f->root, "empty.urdf");
  write_file(path, "");
  by_path(&load, path);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "an empty file (0 bytes)",
                 NULL, NULL, 0);
  /* One byte over the 8 MiB a URDF may have (sparse: nothing is written). */
  path_in(path, sizeof path, f->root, "large.urdf");
  FILE *large = fopen(path, "wb");
  assert_non_null(large);
  assert_int_equal(ftruncate(fileno(large), (8 << 20) + 1), 0);
  fclose(large);
  by_path(&load, path);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "larger than the 8388608 bytes a file of this kind may have", NULL, NULL, 0);
}

/* Nothing of a file a peer named comes back in a reply: not its text, its
 * root element, an entity's name, a bad value, nor a mesh's bytes. */
static void test_contents_are_never_quoted(void **state) {
  fixture *f = *state;
  Lcpsim__V1__LoadModelRequest load;
  char path[512], text[2048];
  static const struct {
    const char *name, *content, *needle;
  } files[] = {
      {"text.urdf", "SECRET-TOKEN-1234 and not XML\n", ":1: malformed XML: no root element"},
      {"element.urdf", "<SECRETROOT>\n</SECRETROOT>\n", ":1: the root element is not <robot>"},
      {"entity.urdf", "<robot name='r'>\n<link name='a'/>&SECRETENTITY;</robot>\n",
       ":2: malformed XML: a reference to an undefined entity"},
      {"mismatch.urdf", "<robot name='r'>\n<SECRETTAG></robot>\n",
       ":2: malformed XML: an end tag does not match its start tag"},
      {"number.urdf",
       "<robot name='r'><link name='a'>\n<inertial><mass value='SECRETMASS'/>"
       "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link></robot>\n",
       ":2: <mass> attribute 'value': not a finite number"},
      {"type.urdf",
       "<robot name='r'><link name='a'/><link name='b'/>\n<joint name='j' type='SECRETTYPE'>"
       "<parent link='a'/><child link='b'/></joint></robot>\n",
       ":2: joint 'j': unknown joint type"},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
    path_in(path, sizeof path, f->root, files[i].name);
    write_file(path, files[i].content);
    by_path(&load, files[i].name);
    expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, files[i].needle, "SECRET",
                   NULL, 0);
  }
  /* Meshes: an "STL" and an OBJ that are neither, named from urdf_text. */
  path_in(path, sizeof path, f->package, "garbage.stl");
  write_file(path, "SECRETSTL-BYTES solid? no: these are not triangles at all, not even close, "
                   "and this line is long enough to pass 84 bytes\n");
  snprintf(text, sizeof text, MESH_ROBOT, "package://pkg/garbage.stl");
  by_text(&load, text);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "not an STL file", "SECRET",
                 NULL, 0);
  path_in(path, sizeof path, f->package, "ascii.stl");
  write_file(path, "solid x\nfacet SECRETWORD\n");
  snprintf(text, sizeof text, MESH_ROBOT, "package://pkg/ascii.stl");
  by_text(&load, text);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "expected 'normal', found something else", "SECRET", NULL, 0);
  path_in(path, sizeof path, f->package, "garbage.obj");
  write_file(path, "v SECRETOBJ 1 2\nf 1 2 SECRETFACE\n");
  snprintf(text, sizeof text, MESH_ROBOT, "package://pkg/garbage.obj");
  by_text(&load, text);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "garbage.obj", "SECRET",
                 NULL, 0);
}

/* Mesh files named in urdf_text obey the same rules. */
static void test_mesh_paths_from_text(void **state) {
  fixture *f = *state;
  Lcpsim__V1__LoadModelRequest load;
  char text[2048], uri[512];
  const char *outside_uris[] = {"/etc/passwd",
                                "file:///dev/zero",
                                "/proc/self/environ",
                                "package://pkg/../../outside/secret.stl",
                                "package://pkg/../../../../../../etc/passwd",
                                NULL};
  for (int i = 0; outside_uris[i]; ++i) {
    snprintf(text, sizeof text, MESH_ROBOT, outside_uris[i]);
    by_text(&load, text);
    expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__NOT_FOUND, OUTSIDE_MESSAGE, NULL, NULL, 0);
  }
  /* An absolute path through the root and ".." back out of it. */
  snprintf(uri, sizeof uri, "%s/../outside/secret.stl", f->root);
  snprintf(text, sizeof text, MESH_ROBOT, uri);
  by_text(&load, text);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__NOT_FOUND, OUTSIDE_MESSAGE, NULL, NULL, 0);
  /* A relative path has nothing to be relative to. */
  snprintf(text, sizeof text, MESH_ROBOT, "pkg/tetra.stl");
  by_text(&load, text);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "a relative path in a URDF given as text has no directory to be relative to", NULL,
                 NULL, 0);
  /* A FIFO in the package. */
  char path[512];
  path_in(path, sizeof path, f->package, "fifo.stl");
  assert_int_equal(mkfifo(path, 0644), 0);
  snprintf(text, sizeof text, MESH_ROBOT, "package://pkg/fifo.stl");
  by_text(&load, text);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT, "a FIFO, not a regular file",
                 NULL, NULL, 0);
  /* A package the request names in a directory outside the roots. */
  Lcpsim__V1__LoadModelRequest__PackagesEntry entry =
      LCPSIM__V1__LOAD_MODEL_REQUEST__PACKAGES_ENTRY__INIT;
  entry.key = (char *)"evil";
  entry.value = f->outside;
  Lcpsim__V1__LoadModelRequest__PackagesEntry *packages[1] = {&entry};
  snprintf(text, sizeof text, MESH_ROBOT, "package://evil/secret.stl");
  by_text(&load, text);
  load.n_packages = 1;
  load.packages = packages;
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__NOT_FOUND,
                 "unknown package 'evil' (searched evil=", NULL, NULL, 0);
  /* The same rules let a mesh below the roots through. */
  snprintf(text, sizeof text, MESH_ROBOT, "package://pkg/tetra.stl");
  by_text(&load, text);
  load.name = (char *)"tetra";
  Lcpsim__V1__Request r = request_of(99, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  Lcpsim__V1__Reply *reply = rpc(f->client, &r);
  assert_ok(reply, 99, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  reply_free(&reply);
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"tetra";
  r = request_of(100, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  reply = rpc(f->client, &r);
  assert_ok(reply, 100, LCPSIM__V1__REPLY__RESULT_REMOVE);
  reply_free(&reply);
}

/* The daemon's peak resident memory (VmHWM), in kB. */
static long peak_memory_kb(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *status = fopen(path, "r");
  assert_non_null(status);
  long kb = -1;
  while (fgets(line, sizeof line, status))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
      break;
  fclose(status);
  assert_true(kb > 0);
  return kb;
}

/* An entity of 10,000 bytes referenced 10,000 times (100 MB expanded, from
 * a 40 KB request) and the "billion laughs" (10^9 expanded): both refused at
 * their DOCTYPE, before any entity is read, with the daemon's peak memory
 * growing by less than the 16 MiB asserted. */
static void test_entity_expansion_is_refused(void **state) {
  fixture *f = *state;
  Lcpsim__V1__LoadModelRequest load;
  long peak_before = peak_memory_kb(f->daemon.pid);
  size_t entity = 10000, references = 10000;
  char *quadratic = malloc(entity + 4 * references + 256);
  assert_non_null(quadratic);
  char *p = quadratic;
  p += sprintf(p, "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY a '");
  memset(p, 'x', entity);
  p += entity;
  p += sprintf(p, "'>]>\n<robot name='r'><link name='");
  for (size_t i = 0; i < references; ++i)
    p += sprintf(p, "&a;");
  sprintf(p, "'/></robot>\n");
  by_text(&load, quadratic);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "<string>:2: a DOCTYPE is not allowed", NULL, NULL, 0);
  free(quadratic);

  char laughs[2048];
  p = laughs;
  p += sprintf(p, "<?xml version='1.0'?>\n<!DOCTYPE robot [\n<!ENTITY lol0 'lol'>\n");
  for (int level = 1; level <= 9; ++level) {
    p += sprintf(p, "<!ENTITY lol%d '", level);
    for (int k = 0; k < 10; ++k)
      p += sprintf(p, "&lol%d;", level - 1);
    p += sprintf(p, "'>\n");
  }
  sprintf(p, "]>\n<robot name='&lol9;'><link name='a'/></robot>\n");
  by_text(&load, laughs);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "<string>:2: a DOCTYPE is not allowed", NULL, NULL, 0);
  long growth = peak_memory_kb(f->daemon.pid) - peak_before;
  printf("peak memory grew by %ld kB over both blowups\n", growth);
  assert_true(growth < 16 * 1024);

  /* A file below the roots: the same. */
  char path[512];
  path_in(path, sizeof path, f->root, "laughs.urdf");
  write_file(path, laughs);
  by_path(&load, "laughs.urdf");
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "laughs.urdf:2: a DOCTYPE is not allowed", "lol", NULL, 0);
  /* Nesting beyond the limit. */
  char deep[2048] = "<robot name='r'>";
  for (int i = 0; i < 100; ++i)
    strcat(deep, "<a>");
  for (int i = 0; i < 100; ++i)
    strcat(deep, "</a>");
  strcat(deep, "</robot>");
  by_text(&load, deep);
  expect_refused(f, &load, LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT,
                 "elements nested more than 64 deep", NULL, NULL, 0);
}

/* The bound on the exit after SIGTERM: a second, as the daemon promises;
 * a sanitizer build runs the load several times slower, and gets more. */
#if defined(__SANITIZE_ADDRESS__)
#define SIGTERM_EXIT_SECONDS 5.0
#else
#define SIGTERM_EXIT_SECONDS 1.0
#endif

/* Waits until the daemon's main thread blocks SIGTERM, which it does only
 * while a LoadModel loads (the SigBlk mask of /proc/PID/status). */
static void wait_until_loading(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  double start = now_seconds();
  for (;;) {
    FILE *status = fopen(path, "r");
    assert_non_null(status);
    unsigned long long blocked = 0;
    while (fgets(line, sizeof line, status))
      if (sscanf(line, "SigBlk: %llx", &blocked) == 1)
        break;
    fclose(status);
    if (blocked & (1ull << (SIGTERM - 1)))
      return;
    if (now_seconds() - start > 30.0)
      fail_msg("the daemon did not start loading in 30 s");
    sleep_ms(1);
  }
}

/* SIGTERM while the daemon loads the largest mesh a LoadModel may read
 * (just under its 8 MiB of meshes, 167,000 triangles of distinct random
 * vertices, the costliest kind to deduplicate and wrap in a hull): the load
 * stops (the daemon holds the signal back while it loads, and the loader
 * polls for it) and the daemon exits cleanly within SIGTERM_EXIT_SECONDS of
 * own time. */
static void test_sigterm_during_a_large_load(void **state) {
  (void)state;
  char top[] = "/tmp/lcpsimd_files_XXXXXX";
  assert_non_null(mkdtemp(top));
  char mesh[256];
  path_in(mesh, sizeof mesh, top, "big.stl");
  uint32_t triangles = ((8u << 20) - 84) / 50;
  FILE *out = fopen(mesh, "wb");
  assert_non_null(out);
  unsigned char header[84] = {0};
  memcpy(header + 80, &triangles, 4); /* little-endian hosts only, as the build is */
  assert_int_equal(fwrite(header, 1, 84, out), 84);
  uint64_t seed = 0x9e3779b97f4a7c15u;
  for (uint32_t t = 0; t < triangles; ++t) {
    float record[12] = {0};
    for (int k = 3; k < 12; ++k) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      record[k] = (float)((double)(seed >> 11) / 9007199254740992.0 - 0.5);
    }
    unsigned char bytes[50] = {0};
    memcpy(bytes, record, 48);
    assert_int_equal(fwrite(bytes, 1, 50, out), 50);
  }
  fclose(out);
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--model-path", top, NULL});
  void *dealer = connect_dealer(d.rep);
  /* Connected before the load is sent, so that the signal finds it running. */
  dealer_ping(dealer, 2);
  char text[1024];
  snprintf(text, sizeof text, MESH_ROBOT, mesh);
  Lcpsim__V1__LoadModelRequest load;
  by_text(&load, text);
  Lcpsim__V1__Request r = request_of(1, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  dealer_send(dealer, &r);
  /* The signal finds the load running, whatever the machine's load. */
  wait_until_loading(d.pid);
  close_socket(&dealer);
  double seconds = 0, own_seconds = 0;
  int status = daemon_signal_and_wait_own(&d, SIGTERM, &seconds, &own_seconds);
  unlink(mesh);
  rmdir(top);
  printf("SIGTERM during the load: exited after %.0f ms (%.0f ms of own time)\n", 1e3 * seconds,
         1e3 * own_seconds);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  if (!(own_seconds < SIGTERM_EXIT_SECONDS))
    fail_msg("exited %.3f s after SIGTERM (%.3f s of own time)", seconds, own_seconds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_paths_outside_the_roots),
      cmocka_unit_test(test_files_inside_the_roots_that_are_not_data),
      cmocka_unit_test(test_contents_are_never_quoted),
      cmocka_unit_test(test_mesh_paths_from_text),
      cmocka_unit_test(test_entity_expansion_is_refused),
      cmocka_unit_test(test_sigterm_during_a_large_load),
  };
  int failed = cmocka_run_group_tests(tests, setup, teardown);
  test_context_destroy();
  return failed;
}
