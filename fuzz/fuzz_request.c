/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes request decoding and handling (server/daemon/handlers.c) in
 * process: a world like lcpsimd's default one is built for each input, the
 * input is cut into requests, and each is decoded and served as the server
 * serves it (a Step that yields is resumed until its reply is ready), with
 * no socket in between.
 *
 * An input is a sequence of frames, each a 2-byte little-endian length
 * followed by that many bytes of an encoded lcpsim.v1.Request (a length past
 * the end takes what is left); at most MAX_REQUESTS are served. A sequence
 * reaches the states one request leaves for the next (a robot loaded, then
 * targeted, stepped and saved; a setting changed, then a Step).
 *
 * Every reply must encode and decode again as an lcpsim.v1.Reply carrying
 * the request's id and a status, and by default three more rules of the
 * protocol: "utf8", every string of a reply is valid UTF-8; "finite", every
 * number of a reply is finite; "unchanged", a request answered with an error
 * leaves the world's snapshot bitwise as it was. LCP_FUZZ_STRICT in the
 * environment chooses them instead: a comma-separated list of their names, "1"
 * for all three, "0" for none. LCP_FUZZ_VERBOSE=1 prints each call's
 * status (to see what a seed or a regression input reaches). */
#include "fuzz_support.h"
#include "handlers.h"
#include "log.h"
#include "scene.h"
#include "sim.h"

#include "lcpsim/urdf.h"
#include "lcpsim/v1/lcpsim.pb-c.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQUESTS 16
/* The most steps one Step may ask for here (lcpsimd's --max-steps-per-request
 * is far larger): a fuzzed Step of millions would stall the fuzzer without
 * reaching any code that a few steps do not. */
#define MAX_STEPS 64
/* As lcpsimd's defaults: 4 × a 16 MiB message + 1 MiB to decode into, and
 * 512 MiB for a reply; a Step yields every 5 ms. */
#define DECODE_BUDGET ((size_t)(4 * 16 + 1) << 20)
#define REPLY_LIMIT ((size_t)512 << 20)
#define SLICE_NS 5000000u

static char *arm7_urdf, *pendulum2_urdf;
static bool strict_utf8, strict_finite, strict_unchanged, verbose;

static void fail(const char *fmt, const char *detail) {
  fprintf(stderr, "fuzz_request: ");
  fprintf(stderr, fmt, detail);
  fprintf(stderr, "\n");
  abort();
}

static void initialise(void) {
  static bool done;
  if (done)
    return;
  done = true;
  /* Load warnings and request logs would flood the fuzzer's output; errors
   * (a world that could not be put back) stay visible. */
  lcpd_log_set_level(LCPD_LOG_ERROR);
  size_t size;
  arm7_urdf = lcp__fuzz_read_file(LCP_FUZZ_ROBOTS_DIR "/arm7.urdf", &size);
  pendulum2_urdf = lcp__fuzz_read_file(LCP_FUZZ_ROBOTS_DIR "/pendulum2.urdf", &size);
  const char *strict_env = getenv("LCP_FUZZ_STRICT");
  if (!strict_env)
    strict_env = "1";
  {
    strict_utf8 = strcmp(strict_env, "1") == 0 || strstr(strict_env, "utf8");
    strict_finite = strcmp(strict_env, "1") == 0 || strstr(strict_env, "finite");
    strict_unchanged = strcmp(strict_env, "1") == 0 || strstr(strict_env, "unchanged");
  }
  const char *verbose_env = getenv("LCP_FUZZ_VERBOSE");
  verbose = verbose_env && strcmp(verbose_env, "1") == 0;
}

static void add_robot(lcpd_scene_t *scene, const char *urdf, int floating_base,
                      const double position[3]) {
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.floating_base = floating_base;
  lcp_robot_def_t *def = NULL;
  char why[512];
  if (lcp_urdf_load_string(urdf, NULL, &options, &def, why, sizeof why) != LCP_OK)
    fail("a shipped robot does not load: %s", why);
  const double identity[4] = {1, 0, 0, 0};
  lcpd_error_t error = {0};
  if (lcpd_scene_add_robot(scene, def, position, identity, &error) != LCP_OK)
    fail("cannot add a robot: %s", error.message);
}

/* The world: the ground, arm7 on a fixed base (lcpsimd's default robot),
 * pendulum2 with a floating base, a static table and a box on it. */
static void build_world(lcpd_sim_t *sim) {
  lcpd_scene_t scene;
  lcpd_scene_init(&scene);
  scene.has_ground = true;
  scene.ground_friction = 0.8;
  add_robot(&scene, arm7_urdf, 0, (const double[3]){0, 0, 0.1});
  add_robot(&scene, pendulum2_urdf, 1, (const double[3]){-1, 0, 1.5});
  lcpd_error_t error = {0};
  lcpd_body_spec_t table = lcpd_body_spec_default();
  snprintf(table.name, sizeof table.name, "table");
  table.is_static = true;
  table.shape.half_extents[0] = 0.3;
  table.shape.half_extents[1] = 0.4;
  table.shape.half_extents[2] = 0.2;
  table.position[0] = 0.75;
  table.position[2] = 0.2;
  lcpd_body_spec_t box = lcpd_body_spec_default();
  snprintf(box.name, sizeof box.name, "box");
  box.mass = 0.5;
  box.position[0] = 0.6;
  box.position[2] = 0.45;
  if (lcpd_scene_add_body(&scene, &table, &error) != LCP_OK ||
      lcpd_scene_add_body(&scene, &box, &error) != LCP_OK)
    fail("cannot add a body: %s", error.message);
  if (lcpd_sim_init(sim, &scene, &error) != LCP_OK)
    fail("cannot build the world: %s", error.message);
}

/* ---- strict checks ---- */

/* RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF. */
static bool valid_utf8(const unsigned char *s) {
  while (*s) {
    unsigned c = *s++;
    int more;
    unsigned lowest;
    if (c < 0x80)
      continue;
    if (c >= 0xc2 && c <= 0xdf) {
      more = 1;
      lowest = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      lowest = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      lowest = 0x10000;
    } else {
      return false;
    }
    unsigned code = c & (0x3fu >> more);
    for (int k = 0; k < more; ++k) {
      if ((*s & 0xc0) != 0x80)
        return false;
      code = code << 6 | (*s++ & 0x3fu);
    }
    if (code < lowest || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      return false;
  }
  return true;
}

/* Every string (strict_utf8) and every double (strict_finite) of a decoded
 * message, nested messages and map entries (repeated entry messages in
 * protobuf-c) included. */
static void check_fields(const ProtobufCMessage *message) {
  const ProtobufCMessageDescriptor *descriptor = message->descriptor;
  const char *base = (const char *)message;
  for (unsigned i = 0; i < descriptor->n_fields; ++i) {
    const ProtobufCFieldDescriptor *field = &descriptor->fields[i];
    const bool is_string = field->type == PROTOBUF_C_TYPE_STRING;
    const bool is_double = field->type == PROTOBUF_C_TYPE_DOUBLE;
    if (!is_string && !is_double && field->type != PROTOBUF_C_TYPE_MESSAGE)
      continue;
    if ((field->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
        *(const uint32_t *)(base + field->quantifier_offset) != field->id)
      continue;
    size_t count = 1;
    const char *values = base + field->offset;
    if (field->label == PROTOBUF_C_LABEL_REPEATED) {
      count = *(const size_t *)(base + field->quantifier_offset);
      values = *(const char *const *)(base + field->offset);
    }
    for (size_t k = 0; k < count; ++k) {
      if (is_double) {
        if (strict_finite && !isfinite(((const double *)values)[k]))
          fail("a reply's number %s is not finite", field->name);
        continue;
      }
      const void *value = ((const void *const *)values)[k];
      if (!value)
        continue;
      if (!is_string)
        check_fields(value);
      else if (strict_utf8 && !valid_utf8(value))
        fail("a reply's string field %s is not valid UTF-8", field->name);
    }
  }
}

/* The world's snapshot, in a malloc'd buffer of *size bytes (NULL when the
 * world cannot be saved). */
static unsigned char *snapshot(const lcpd_sim_t *sim, size_t *size) {
  *size = lcpd_sim_snapshot_size(sim);
  unsigned char *bytes = malloc(*size ? *size : 1);
  lcpd_error_t error = {0};
  if (bytes && lcpd_sim_snapshot_write(sim, bytes, *size, &error) != LCP_OK) {
    free(bytes);
    bytes = NULL;
  }
  return bytes;
}

/* ---- one request ---- */

static void check_reply(const lcpd_call_t *call) {
  size_t size = lcpd_call_reply_size(call);
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes)
    return;
  lcpd_call_reply_write(call, bytes);
  Lcpsim__V1__Reply *reply = lcpsim__v1__reply__unpack(NULL, size, bytes);
  free(bytes);
  if (!reply)
    fail("a reply does not decode (%s)", lcpd_call_name(call));
  if (!reply->status)
    fail("a reply has no status (%s)", lcpd_call_name(call));
  if (call->request && reply->id != call->request->id)
    fail("a reply does not carry its request's id (%s)", lcpd_call_name(call));
  if (strict_utf8 || strict_finite)
    check_fields(&reply->base);
  lcpsim__v1__reply__free_unpacked(reply, NULL);
}

static void serve(lcpd_call_t *call, lcpd_sim_t *sim, const uint8_t *data, size_t size) {
  size_t before_size = 0;
  unsigned char *before = strict_unchanged ? snapshot(sim, &before_size) : NULL;
  bool ready = lcpd_call_start(call, sim, data, size);
  while (!ready)
    ready = lcpd_call_resume(call, sim);
  check_reply(call);
  if (verbose)
    fprintf(stderr, "%s: status %d %s\n", lcpd_call_name(call), (int)call->status.code,
            call->status.message ? call->status.message : "");
  if (before && call->status.code != LCPSIM__V1__STATUS__CODE__OK) {
    size_t after_size = 0;
    unsigned char *after = snapshot(sim, &after_size);
    if (!after || after_size != before_size || memcmp(before, after, before_size) != 0)
      fail("a request answered with an error changed the world: %s", call->status.message);
    free(after);
  }
  free(before);
  lcpd_call_finish(call);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  initialise();
  lcpd_sim_t sim;
  build_world(&sim);
  lcpd_call_t call;
  lcpd_call_init(&call, DECODE_BUDGET, REPLY_LIMIT, SLICE_NS, MAX_STEPS);
  for (int served = 0; size > 0 && served < MAX_REQUESTS; ++served) {
    size_t length = size;
    if (size >= 2) {
      length = (size_t)data[0] | (size_t)data[1] << 8;
      data += 2;
      size -= 2;
      if (length > size)
        length = size;
    }
    serve(&call, &sim, data, length);
    data += length;
    size -= length;
  }
  lcpd_call_destroy(&call);
  lcpd_sim_destroy(&sim);
  return 0;
}
