/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-batch-bench: robot-steps per second over the wire with BatchStep,
 * next to the same arm stepped in-process on one thread and to MuJoCo's
 * arm on one thread, all in the same run.
 *
 *   lcpsim-batch-bench --start-daemon LCPSIMD [--workers 1,2] [--worlds 1,16,64,256]
 *                      [--rounds N] [--robot-steps N] [--steps 1,10] [--in-flight 1,2]
 *                      [--no-state]
 *                      [--mujoco PEER | --no-mujoco] [--daemon-arg ARG]...
 *
 * The scene is lcpsim-bench's and MuJoCo's arm scene (scene=arm): the 7-dof
 * arm arm7 alone on a fixed base 0.1 m over the ground, h = 1 ms, 20
 * iterations, every joint under implicit PD (kp 100, kd 10). For each
 * worker count W, a daemon of its own (--workers W) is started on
 * ephemeral ports and given worlds made from that scene's text
 * (CreateWorld scene_text, ARM_SCENE below); then one client sends
 * BatchStep requests over K of them at a time, each world with position
 * targets for the arm's 7 joints (q*_i(t) = 0.5 sin(2π·0.5·t + i + 0.1·k)
 * for world k, kp 100, kd 10), S steps each (one line per S of --steps:
 * 1 is a control tick every physics step, 10 a 100 Hz controller over 1 kHz
 * physics, as a vector environment with a frame skip sends) and, unless
 * --no-state, its state returned. With one request in flight at a time
 * (in_flight=1), the daemon waits while this client reads a reply and
 * writes the next request; with two (in_flight=2), two connections take
 * turns over worlds of their own, K each, and the next BatchStep waits at
 * the daemon while the client reads the last reply, as a trainer stepping
 * two halves of its environments in turn does.
 *
 * The in-process reference builds the same scene text with the daemon's own
 * scene and world code (lcpsimd_world) and steps it on this thread with
 * the same targets, set once every S steps as the daemon sets them, without
 * protobuf or sockets: one world (the reference), and K worlds in
 * turn, as one thread steps a batch of K, whose data no longer stays in
 * the caches from one step to the next. MuJoCo's rate is the one
 * lcpsim-bench-mujoco (bench/peers, cmake -DLCP_BENCH_PEERS=ON) prints for
 * its arm scene, the same arm.
 *
 * The configurations take turns, a slice of --robot-steps each, for
 * --rounds rounds, so that all of them see the same minutes of a machine
 * whose load changes. One line per configuration:
 *
 *   bench=batch mode=inprocess scene=arm threads=1 worlds=1 steps=S robot_steps_per_s=...
 *     us_STAGE=...
 *   bench=batch mode=inprocess scene=arm threads=1 worlds=K steps=S robot_steps_per_s=...
 *     ratio_inprocess=...
 *   bench=batch mode=mujoco scene=arm threads=1 worlds=1 robot_steps_per_s=...
 *   bench=batch mode=wire scene=arm workers=W worlds=K steps=S in_flight=F robot_steps_per_s=...
 *     ratio_inprocess=... ratio_inprocess_same_worlds=... ratio_mujoco=... us_per_call=...
 *     round_trip_us=... client_encode_us=... client_decode_us=... overhead_us=...
 *     request_bytes=... reply_bytes=...
 *
 * robot_steps_per_s over the wire counts the round trips only (request
 * sent to reply received) with one in flight, and the whole run with two; ratio_inprocess and
 * ratio_mujoco are it over the one-world in-process rate (with the same S) and MuJoCo's;
 * ratio_inprocess_same_worlds over the in-process rate of K worlds in turn.
 * client_encode_us and client_decode_us are this client's own protobuf
 * work per call, outside the round trip; us_per_call includes them.
 * overhead_us is round_trip_us less the time the K worlds' steps take
 * in-process (in turn) spread over min(W, K) threads: what the wire, the
 * daemon's decoding and encoding, and the threads' hand-offs cost per call.
 * A last line per S and F names the goal at K = 64, W = 2 and whether
 * this run met it. */
#include "bench_daemon.h"
#include "lcpsim/v1/lcpsim.pb-c.h"

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"
#include "scene_file.h"
#include "sim.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

/* lcpsim-bench's arm scene (lcp_scene_arm) as scene text: the settings
 * are the engine's defaults but for h and the iterations, as there. That
 * scene also gives the arm's links μ 0.8 where the URDF leaves 0.5; the arm
 * never touches the ground, so no step depends on it. */
#define ARM_SCENE                                                                                  \
  "<?xml version=\"1.0\"?>\n"                                                                      \
  "<lcpsim version=\"1\">\n"                                                                       \
  "  <settings timestep=\"0.001\" iterations=\"20\"/>\n"                                           \
  "  <ground friction=\"0.8\"/>\n"                                                                 \
  "  <robot name=\"arm7\" urdf=\"arm7.urdf\" base=\"fixed\" xyz=\"0 0 0.1\"/>\n"                   \
  "</lcpsim>\n"
#define ARM_NAME "arm7"
#define ARM_JOINTS 7
#define ARM_KP 100.0
#define ARM_KD 10.0
#define TWO_PI 6.283185307179586
#define TIMEOUT_MS 60000
#define MAX_WORKER_COUNTS 4
#define MAX_WORLD_COUNTS 8
#define MAX_STEP_COUNTS 4
#define MAX_IN_FLIGHT 2 /* BatchSteps in flight at once */
#define MAX_WORLDS 4096
#define MAX_DAEMON_ARGS 32
/* The goal the issue sets at K = 64 worlds and 2 worker threads. */
#define GOAL_WORLDS 64
#define GOAL_WORKERS 2
#define GOAL_RATIO_INPROCESS 1.5
#define GOAL_RATIO_MUJOCO 3.0

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Joint `joint`'s target in world `world` at time t: the same sine for every
 * world, each a phase of its own so that their states differ. */
static double arm_target(int joint, int world, double t) {
  return 0.5 * sin(TWO_PI * 0.5 * t + (double)joint + 0.1 * (double)world);
}

/* What one configuration measured, over all its rounds. */
typedef struct tally {
  double seconds;        /* the steps', or the round trips' */
  double robot_steps;    /* one world stepped once is one */
  double calls;          /* BatchStep requests */
  double encode, decode; /* client's protobuf work, outside `seconds` */
  size_t request_bytes, reply_bytes;
} tally;

static double rate(const tally *t) { return t->seconds > 0.0 ? t->robot_steps / t->seconds : 0.0; }

/* ---- lcpsimd processes ---- */

/* Starts `path` with the given worker count and room for max_worlds
 * worlds. Called before this process makes a ZeroMQ context. */
static bool daemon_start(lcpd_bench_daemon_t *d, const char *path, int workers, int max_worlds,
                         const char **extra, int extra_count) {
  char workers_text[16], worlds_text[16];
  snprintf(workers_text, sizeof workers_text, "%d", workers);
  snprintf(worlds_text, sizeof worlds_text, "%d", max_worlds);
  const char *args[4 + MAX_DAEMON_ARGS] = {"--workers", workers_text, "--max-worlds", worlds_text};
  for (int i = 0; i < extra_count; ++i)
    args[4 + i] = extra[i];
  if (lcpd_bench_daemon_start(d, path, args, 4 + extra_count, "lcpsim-batch-bench"))
    return true;
  fprintf(stderr, "lcpsim-batch-bench: (a daemon without --workers and --max-worlds cannot run "
                  "this bench)\n");
  return false;
}

/* ---- the client ---- */

/* Where a reply is decoded: protobuf-c allocates every sub-message of a
 * reply (a BatchStep's over 64 worlds has thousands), and a block taken
 * in one piece and reused from call to call costs a pointer bump each,
 * where malloc and free cost far more. A reply lives until the next call. */
typedef struct reply_block {
  struct reply_block *next;
  size_t used, capacity;
  max_align_t data[];
} reply_block;

typedef struct reply_arena {
  ProtobufCAllocator allocator;
  reply_block *blocks; /* the one allocated from; older ones follow */
  size_t total;        /* the blocks' capacity together */
} reply_arena;

static reply_block *reply_block_new(size_t capacity) {
  reply_block *block = malloc(sizeof *block + capacity);
  if (block)
    *block = (reply_block){.capacity = capacity};
  return block;
}

static void *reply_arena_alloc(void *data, size_t size) {
  reply_arena *arena = data;
  size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  reply_block *block = arena->blocks;
  if (!block || block->capacity - block->used < size) {
    size_t capacity = arena->total > size ? arena->total : size;
    reply_block *grown = reply_block_new(capacity);
    if (!grown)
      return NULL;
    grown->next = block;
    arena->blocks = block = grown;
    arena->total += capacity;
  }
  void *memory = (char *)block->data + block->used;
  block->used += size;
  return memory;
}

static void reply_arena_free(void *data, void *pointer) {
  (void)data;
  (void)pointer; /* all of it at the next reset */
}

static void reply_arena_release(reply_arena *arena) {
  while (arena->blocks) {
    reply_block *next = arena->blocks->next;
    free(arena->blocks);
    arena->blocks = next;
  }
  arena->total = 0;
}

/* Forgets the last reply; what it took in several blocks is one next time. */
static void reply_arena_reset(reply_arena *arena) {
  if (arena->blocks && arena->blocks->next) {
    size_t total = arena->total;
    reply_arena_release(arena);
    arena->blocks = reply_block_new(total);
    arena->total = arena->blocks ? total : 0;
  }
  if (arena->blocks)
    arena->blocks->used = 0;
}

typedef struct client {
  void *socket;
  uint64_t next_id;
  double sent; /* when the request in flight was sent */
  unsigned char *buffer;
  size_t capacity;
  reply_arena replies;
} client;

/* Sends r (the first half of call). With `t`, the encoding goes to
 * t->encode. */
static bool request_send(client *c, Lcpsim__V1__Request *r, tally *t) {
  double start = now_seconds();
  r->id = c->next_id++;
  size_t size = lcpsim__v1__request__get_packed_size(r);
  if (size > c->capacity) {
    free(c->buffer);
    c->capacity = 2 * size;
    c->buffer = malloc(c->capacity);
    if (!c->buffer) {
      c->capacity = 0;
      return NULL;
    }
  }
  lcpsim__v1__request__pack(r, c->buffer);
  c->sent = now_seconds();
  if (t) {
    t->encode += c->sent - start;
    t->request_bytes = size;
  }
  if (zmq_send(c->socket, c->buffer, size, 0) != (int)size) {
    fprintf(stderr, "lcpsim-batch-bench: cannot send within %d ms: %s\n", TIMEOUT_MS,
            zmq_strerror(errno));
    return false;
  }
  return true;
}

/* The reply to r, sent by request_send, checked for its id and an OK status
 * (NULL, with a message, otherwise), valid until the next reply on c. With
 * `t`, the round trip (from the end of the encoding) goes to t->seconds and
 * the decoding to t->decode. */
static Lcpsim__V1__Reply *reply_receive(client *c, const Lcpsim__V1__Request *r, tally *t) {
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  if (zmq_msg_recv(&msg, c->socket, 0) < 0) {
    fprintf(stderr, "lcpsim-batch-bench: no reply within %d ms: %s\n", TIMEOUT_MS,
            zmq_strerror(errno));
    zmq_msg_close(&msg);
    return NULL;
  }
  double received = now_seconds();
  reply_arena_reset(&c->replies);
  size_t reply_size = zmq_msg_size(&msg);
  Lcpsim__V1__Reply *reply =
      lcpsim__v1__reply__unpack(&c->replies.allocator, reply_size, zmq_msg_data(&msg));
  zmq_msg_close(&msg);
  if (t) {
    t->seconds += received - c->sent;
    t->decode += now_seconds() - received;
    t->reply_bytes = reply_size;
  }
  if (!reply || reply->id != r->id || (reply->status && reply->status->code != 0)) {
    fprintf(stderr, "lcpsim-batch-bench: request %llu failed%s%s\n", (unsigned long long)r->id,
            reply && reply->status ? ": " : "",
            reply && reply->status ? reply->status->message : "");
    return NULL;
  }
  return reply;
}

/* Sends r and returns its reply (request_send, then reply_receive). */
static Lcpsim__V1__Reply *call(client *c, Lcpsim__V1__Request *r, tally *t) {
  return request_send(c, r, t) ? reply_receive(c, r, t) : NULL;
}

/* The timestep of world `world`, after checking that it is in lockstep
 * mode and has the arm with its 7 joints. */
static bool query_info(client *c, const char *world, double *timestep) {
  Lcpsim__V1__GetInfoRequest get = LCPSIM__V1__GET_INFO_REQUEST__INIT;
  Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
  r.world = (char *)world;
  r.call_case = LCPSIM__V1__REQUEST__CALL_GET_INFO;
  r.get_info = &get;
  Lcpsim__V1__Reply *reply = call(c, &r, NULL);
  if (!reply)
    return false;
  bool ok = reply->result_case == LCPSIM__V1__REPLY__RESULT_GET_INFO && reply->get_info->settings &&
            reply->get_info->settings->mode != LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME;
  bool arm = false;
  for (size_t i = 0; ok && i < reply->get_info->n_robots; ++i)
    arm = arm || (strcmp(reply->get_info->robots[i]->name, ARM_NAME) == 0 &&
                  reply->get_info->robots[i]->n_joints == ARM_JOINTS);
  if (ok)
    *timestep = reply->get_info->settings->timestep;
  if (!ok || !arm)
    fprintf(stderr,
            "lcpsim-batch-bench: world %s must be in lockstep mode with robot " ARM_NAME
            " of 7 joints\n",
            world);
  return ok && arm;
}

/* Worlds batch0, batch1, ... made from the arm scene's text. */
static bool create_worlds(client *c, int count) {
  for (int i = 0; i < count; ++i) {
    char name[32];
    snprintf(name, sizeof name, "batch%d", i);
    Lcpsim__V1__CreateWorldRequest create = LCPSIM__V1__CREATE_WORLD_REQUEST__INIT;
    create.name = name;
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_TEXT;
    create.scene_text = ARM_SCENE;
    Lcpsim__V1__Request r = LCPSIM__V1__REQUEST__INIT;
    r.call_case = LCPSIM__V1__REQUEST__CALL_CREATE_WORLD;
    r.create_world = &create;
    Lcpsim__V1__Reply *reply = call(c, &r, NULL);
    if (!reply)
      return false;
  }
  return true;
}

/* One daemon's BatchStep over its first `worlds` copies: the request's
 * messages, built once, and the targets rewritten before each call. */
typedef struct batch {
  client *c;
  int first, worlds, steps; /* worlds batch<first> to batch<first + worlds - 1> */
  double timestep;
  uint64_t *world_steps; /* steps run so far, per world (shared by a daemon's batches) */
  char (*names)[32];
  double *position; /* worlds × ARM_JOINTS */
  double kp, kd;
  Lcpsim__V1__SetTargetRequest *targets;
  Lcpsim__V1__SetTargetRequest **target_lists;
  Lcpsim__V1__WorldStep *world_steps_messages;
  Lcpsim__V1__WorldStep **world_list;
  Lcpsim__V1__BatchStepRequest request;
  Lcpsim__V1__Request envelope;
} batch;

static void batch_free(batch *b) {
  free(b->names);
  free(b->position);
  free(b->targets);
  free(b->target_lists);
  free(b->world_steps_messages);
  free(b->world_list);
}

static bool batch_init(batch *b, client *c, int first, int worlds, int steps, bool return_state,
                       double timestep, uint64_t *world_steps) {
  *b = (batch){.c = c,
               .first = first,
               .worlds = worlds,
               .steps = steps,
               .timestep = timestep,
               .world_steps = world_steps,
               .kp = ARM_KP,
               .kd = ARM_KD};
  size_t n = (size_t)worlds;
  b->names = calloc(n, sizeof *b->names);
  b->position = calloc(n * ARM_JOINTS, sizeof *b->position);
  b->targets = calloc(n, sizeof *b->targets);
  b->target_lists = calloc(n, sizeof *b->target_lists);
  b->world_steps_messages = calloc(n, sizeof *b->world_steps_messages);
  b->world_list = calloc(n, sizeof *b->world_list);
  if (!b->names || !b->position || !b->targets || !b->target_lists || !b->world_steps_messages ||
      !b->world_list) {
    batch_free(b);
    return false;
  }
  for (size_t k = 0; k < n; ++k) {
    snprintf(b->names[k], sizeof b->names[k], "batch%zu", k + (size_t)first);
    Lcpsim__V1__SetTargetRequest *t = &b->targets[k];
    lcpsim__v1__set_target_request__init(t);
    t->robot = ARM_NAME;
    t->mode = LCPSIM__V1__SET_TARGET_REQUEST__MODE__POSITION;
    t->position = b->position + k * ARM_JOINTS;
    t->n_position = ARM_JOINTS;
    t->kp = &b->kp;
    t->n_kp = 1;
    t->kd = &b->kd;
    t->n_kd = 1;
    b->target_lists[k] = t;
    Lcpsim__V1__WorldStep *w = &b->world_steps_messages[k];
    lcpsim__v1__world_step__init(w);
    w->world = b->names[k];
    w->steps = steps;
    w->n_targets = 1;
    w->targets = &b->target_lists[k];
    b->world_list[k] = w;
  }
  lcpsim__v1__batch_step_request__init(&b->request);
  b->request.n_worlds = n;
  b->request.worlds = b->world_list;
  b->request.return_state = return_state;
  lcpsim__v1__request__init(&b->envelope);
  b->envelope.call_case = LCPSIM__V1__REQUEST__CALL_BATCH_STEP;
  b->envelope.batch_step = &b->request;
  return true;
}

/* Sends a BatchStep over b's worlds, their targets those of their time. */
static bool batch_send(batch *b, tally *t) {
  double start = now_seconds();
  for (int k = 0; k < b->worlds; ++k) {
    int world = b->first + k;
    double time = (double)b->world_steps[world] * b->timestep;
    for (int j = 0; j < ARM_JOINTS; ++j)
      b->position[k * ARM_JOINTS + j] = arm_target(j, world, time);
  }
  t->encode += now_seconds() - start;
  return request_send(b->c, &b->envelope, t);
}

/* The reply to batch_send's BatchStep, every world's result checked. */
static bool batch_receive(batch *b, tally *t) {
  Lcpsim__V1__Reply *reply = reply_receive(b->c, &b->envelope, t);
  if (!reply)
    return false;
  double checked = now_seconds();
  bool ok = reply->result_case == LCPSIM__V1__REPLY__RESULT_BATCH_STEP &&
            reply->batch_step->n_results == (size_t)b->worlds;
  for (int k = 0; ok && k < b->worlds; ++k) {
    const Lcpsim__V1__BatchStepResult *result = reply->batch_step->results[k];
    ok = (!result->status || result->status->code == 0) && result->steps_run == b->steps &&
         (!b->request.return_state || (result->state && result->state->n_robots == 1));
    if (!ok)
      fprintf(stderr, "lcpsim-batch-bench: world %s: %s\n", b->names[k],
              result->status && result->status->message ? result->status->message
                                                        : "an incomplete result");
    b->world_steps[b->first + k] += (uint64_t)b->steps;
  }
  if (!ok && reply->result_case != LCPSIM__V1__REPLY__RESULT_BATCH_STEP)
    fprintf(stderr, "lcpsim-batch-bench: the reply is not a BatchStepReply\n");
  t->decode += now_seconds() - checked;
  t->robot_steps += (double)b->worlds * b->steps;
  t->calls += 1.0;
  return ok;
}

/* One BatchStep, one request in flight: t->seconds counts its round trip. */
static bool batch_call(batch *b, tally *t) { return batch_send(b, t) && batch_receive(b, t); }

/* `calls` BatchSteps, taking turns over a and b (each over worlds of its
 * own, on a connection of its own to the same daemon), two in flight: b's
 * request is sent before a's reply comes, and a's next one as soon as its
 * reply is read, so the daemon has the next batch while this client reads
 * a reply and writes a request, as a trainer that steps two halves of its
 * environments in turn. t->seconds counts the whole run, this client's
 * encoding and decoding included, since they overlap the daemon's work. */
static bool batch_pair_run(batch *a, batch *b, long calls, tally *t) {
  tally per_call = {0};
  double start = now_seconds();
  bool ok = batch_send(a, &per_call) && (calls < 2 || batch_send(b, &per_call));
  for (long i = 0; ok && i < calls; ++i) {
    batch *x = i % 2 ? b : a;
    ok = batch_receive(x, &per_call) && (i + 2 >= calls || batch_send(x, &per_call));
  }
  t->seconds += now_seconds() - start;
  t->robot_steps += per_call.robot_steps;
  t->calls += per_call.calls;
  t->encode += per_call.encode;
  t->decode += per_call.decode;
  t->request_bytes = per_call.request_bytes;
  t->reply_bytes = per_call.reply_bytes;
  return ok;
}

typedef batch batch_table[MAX_WORKER_COUNTS][MAX_WORLD_COUNTS][MAX_STEP_COUNTS];

/* `calls` BatchSteps of configuration (d, k, s) with `in_flight` of them
 * in flight at once: batch_call, or batch_pair_run over the two
 * connections' batches. */
static bool wire_run(batch_table *batches, int in_flight, int d, int k, int s, long calls,
                     tally *t) {
  bool ok = true;
  if (in_flight == 2)
    return batch_pair_run(&batches[0][d][k][s], &batches[1][d][k][s], calls, t);
  for (long i = 0; ok && i < calls; ++i)
    ok = batch_call(&batches[0][d][k][s], t);
  return ok;
}

/* ---- the in-process reference: the daemon's own world code, one thread ---- */

typedef struct inprocess {
  lcpd_sim_t sim;
  double stage_seconds[LCP_STAGE_COUNT]; /* the engine's own timing of its stages */
  bool stage_timing;                     /* whether the engine times the stages now */
  uint64_t timed_steps;                  /* the steps stage_seconds covers */
  double contacts;
  lcp_robot_id arm;
  lcp_joint_control_t controls[ARM_JOINTS];
  double timestep;
  uint64_t steps;
  bool ready;
} inprocess;

static bool inprocess_init(inprocess *p) {
  lcpd_error_t error;
  lcpd_scene_t scene;
  char robots[4096], why[1024];
  if (lcp_shipped_robots_dir(robots, sizeof robots, why, sizeof why) != LCP_OK) {
    fprintf(stderr, "lcpsim-batch-bench: %s\n", why);
    return false;
  }
  /* The URDF found as the daemon finds it: below the shipped robots. */
  const char *roots[1] = {robots};
  lcp_urdf_options_t options = lcp_urdf_options_default();
  options.files = (lcp_file_rules_t){roots, 1, true};
  if (lcpd_scene_text_load("arm scene", ARM_SCENE, strlen(ARM_SCENE), &options, &scene, &error) !=
          LCP_OK ||
      lcpd_sim_init(&p->sim, &scene, &error) != LCP_OK) {
    fprintf(stderr, "lcpsim-batch-bench: the arm scene: %s\n", error.message);
    return false;
  }
  p->ready = true;
  lcpd_robot_t *arm = lcpd_sim_find_robot(&p->sim, ARM_NAME);
  lcp_world_t *world = p->sim.live.world;
  bool ok = arm != NULL;
  for (int32_t j = 0; ok && j < ARM_JOINTS; ++j)
    ok = lcp_robot_get_joint_control(world, arm->id, j, &p->controls[j]) == LCP_OK;
  if (!ok) {
    fprintf(stderr, "lcpsim-batch-bench: the arm scene has no " ARM_NAME "\n");
    return false;
  }
  p->arm = arm->id;
  lcp_world_settings_t settings;
  lcp_world_get_settings(world, &settings);
  p->timestep = settings.timestep;
  for (int32_t j = 0; j < ARM_JOINTS; ++j) {
    p->controls[j].mode = LCP_CONTROL_POSITION;
    p->controls[j].kp = ARM_KP;
    p->controls[j].kd = ARM_KD;
  }
  return true;
}

/* World p (world number `index` of its set): its targets set, then `count`
 * steps, as a BatchStep's world with `count` steps does. */
static bool inprocess_step(inprocess *p, int index, int64_t count) {
  lcpd_error_t error;
  double time = (double)p->steps * p->timestep;
  for (int j = 0; j < ARM_JOINTS; ++j)
    p->controls[j].position = arm_target(j, index, time);
  if (lcp_robot_set_controls(p->sim.live.world, p->arm, p->controls, ARM_JOINTS) != LCP_OK) {
    fprintf(stderr, "lcpsim-batch-bench: in-process targets refused\n");
    return false;
  }
  for (int64_t i = 0; i < count; ++i, ++p->steps) {
    if (lcpd_sim_step(&p->sim, &error) != LCP_OK) {
      fprintf(stderr, "lcpsim-batch-bench: in-process step failed: %s\n", error.message);
      return false;
    }
    lcp_step_stats_t stats;
    lcp_world_get_stats(p->sim.live.world, &stats);
    for (int k = 0; p->stage_timing && k < LCP_STAGE_COUNT; ++k)
      p->stage_seconds[k] += stats.stage_seconds[k];
    p->timed_steps += p->stage_timing;
    p->contacts += stats.contacts;
  }
  return true;
}

/* robot_steps steps over `count` worlds in turn, steps_per_world at a time,
 * as a BatchStep over them steps them on one thread: with more worlds than
 * the caches hold, each world's step starts with its data out of cache. */
static bool inprocess_run(inprocess *worlds, int count, int64_t robot_steps, int steps_per_world,
                          tally *t) {
  double start = now_seconds();
  int64_t done = 0;
  while (done < robot_steps)
    for (int k = 0; k < count && done < robot_steps; ++k, done += steps_per_world)
      if (!inprocess_step(&worlds[k], k, steps_per_world))
        return false;
  t->seconds += now_seconds() - start;
  t->robot_steps += (double)done;
  return true;
}

/* ---- MuJoCo, through lcpsim-bench-mujoco ---- */

/* Runs `peer arm -s count` and adds the stepping time it prints. */
static bool mujoco_run(const char *peer, int64_t count, tally *t) {
  char command[4200];
  snprintf(command, sizeof command, "'%s' arm -s %lld", peer, (long long)count);
  FILE *out = popen(command, "r");
  if (!out)
    return false;
  char line[2048] = "";
  double us_per_step = -1.0;
  while (fgets(line, sizeof line, out)) {
    const char *field = strstr(line, " us_per_step=");
    if (field)
      us_per_step = atof(field + strlen(" us_per_step="));
  }
  int status = pclose(out);
  if (status != 0 || !(us_per_step > 0.0)) {
    fprintf(stderr, "lcpsim-batch-bench: %s arm printed no us_per_step\n", peer);
    return false;
  }
  t->seconds += 1e-6 * us_per_step * (double)count;
  t->robot_steps += (double)count;
  return true;
}

/* ---- options ---- */

static int parse_list(const char *text, int *out, int capacity, int most) {
  int n = 0;
  const char *p = text;
  while (*p) {
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || v < 1 || v > most || n == capacity || (*end && *end != ','))
      return -1;
    out[n++] = (int)v;
    p = *end ? end + 1 : end;
  }
  return n;
}

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: lcpsim-batch-bench --start-daemon LCPSIMD [--workers 1,2] [--worlds 1,16,64,256]\n"
      "                          [--rounds N] [--robot-steps N] [--steps 1,10] [--no-state]\n"
      "                          [--mujoco PEER | --no-mujoco] [--daemon-arg ARG]...\n"
      "Robot-steps per second through BatchStep over K worlds of lcpsim-bench's arm scene\n"
      "(the 7-dof arm alone under PD, h = 1 ms), one daemon per worker count (--workers W),\n"
      "next to the same scene stepped in-process on one thread and MuJoCo's arm\n"
      "(lcpsim-bench-mujoco, PEER; LCPSIM_MUJOCO_PEER names another). The configurations\n"
      "take turns, N robot-steps each a round (--robot-steps, default 20000), for --rounds\n"
      "rounds (5). --steps: steps per world per BatchStep, one line each (1,10).\n"
      "--in-flight: BatchSteps in flight at once, one line each (1,2): with 2, two\n"
      "connections take turns over K worlds each.\n"
      "--no-state: no state returned.\n");
}

/* The goal line for S steps per world per request. */
static void print_goal(int steps, int in_flight, const tally *wire, double in_rate, double mj_rate,
                       bool mujoco, long cores, double load1) {
  double r = rate(wire), ratio_inprocess = r / in_rate, ratio_mujoco = mujoco ? r / mj_rate : 0.0;
  bool met = ratio_inprocess >= GOAL_RATIO_INPROCESS && mujoco && ratio_mujoco >= GOAL_RATIO_MUJOCO;
  printf("bench=batch goal scene=arm workers=%d worlds=%d steps=%d in_flight=%d "
         "ratio_inprocess=%.3f need_inprocess=%.1f met_inprocess=%s",
         GOAL_WORKERS, GOAL_WORLDS, steps, in_flight, ratio_inprocess, GOAL_RATIO_INPROCESS,
         ratio_inprocess >= GOAL_RATIO_INPROCESS ? "yes" : "no");
  if (mujoco)
    printf(" ratio_mujoco=%.3f need_mujoco=%.1f met_mujoco=%s", ratio_mujoco, GOAL_RATIO_MUJOCO,
           ratio_mujoco >= GOAL_RATIO_MUJOCO ? "yes" : "no");
  else
    printf(" ratio_mujoco=unmeasured need_mujoco=%.1f", GOAL_RATIO_MUJOCO);
  printf(" met=%s cores=%ld load1=%.2f\n", met ? "yes" : "no", cores, load1);
}

int main(int argc, char **argv) {
  const char *daemon_path = NULL, *mujoco = NULL;
#ifdef LCP_MUJOCO_PEER_PATH
  mujoco = LCP_MUJOCO_PEER_PATH;
#endif
  if (getenv("LCPSIM_MUJOCO_PEER") && *getenv("LCPSIM_MUJOCO_PEER"))
    mujoco = getenv("LCPSIM_MUJOCO_PEER");
  const char *daemon_args[MAX_DAEMON_ARGS];
  int daemon_arg_count = 0;
  int worker_counts[MAX_WORKER_COUNTS] = {1, 2}, worker_count_n = 2;
  int world_counts[MAX_WORLD_COUNTS] = {1, 16, 64, 256}, world_count_n = 4;
  int step_counts[MAX_STEP_COUNTS] = {1, 10}, step_count_n = 2;
  int in_flights[MAX_IN_FLIGHT] = {1, 2}, in_flight_n = 2;
  long rounds = 5, robot_steps = 20000;
  bool return_state = true;
  static const struct option options[] = {
      {"start-daemon", required_argument, NULL, 's'},
      {"workers", required_argument, NULL, 'w'},
      {"worlds", required_argument, NULL, 'k'},
      {"rounds", required_argument, NULL, 'r'},
      {"robot-steps", required_argument, NULL, 'n'},
      {"steps", required_argument, NULL, 'S'},
      {"in-flight", required_argument, NULL, 'f'},
      {"no-state", no_argument, NULL, 'N'},
      {"mujoco", required_argument, NULL, 'm'},
      {"no-mujoco", no_argument, NULL, 'M'},
      {"daemon-arg", required_argument, NULL, 'a'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
    char *end = NULL;
    switch (c) {
    case 's':
      daemon_path = optarg;
      break;
    case 'w':
      worker_count_n = parse_list(optarg, worker_counts, MAX_WORKER_COUNTS, 256);
      if (worker_count_n < 1) {
        fprintf(stderr, "lcpsim-batch-bench: --workers: 1 to %d counts of 1 to 256\n",
                MAX_WORKER_COUNTS);
        return 2;
      }
      break;
    case 'k':
      world_count_n = parse_list(optarg, world_counts, MAX_WORLD_COUNTS, MAX_WORLDS);
      if (world_count_n < 1) {
        fprintf(stderr, "lcpsim-batch-bench: --worlds: 1 to %d counts of 1 to %d\n",
                MAX_WORLD_COUNTS, MAX_WORLDS);
        return 2;
      }
      break;
    case 'S':
      step_count_n = parse_list(optarg, step_counts, MAX_STEP_COUNTS, 100000);
      if (step_count_n < 1) {
        fprintf(stderr, "lcpsim-batch-bench: --steps: 1 to %d counts of 1 to 100000\n",
                MAX_STEP_COUNTS);
        return 2;
      }
      break;
    case 'f':
      in_flight_n = parse_list(optarg, in_flights, MAX_IN_FLIGHT, MAX_IN_FLIGHT);
      if (in_flight_n < 1) {
        fprintf(stderr, "lcpsim-batch-bench: --in-flight: 1, 2 or 1,2\n");
        return 2;
      }
      break;
    case 'r':
    case 'n': {
      long v = strtol(optarg, &end, 10);
      if (*end || v < 1 || v > 100000000L) {
        fprintf(stderr, "lcpsim-batch-bench: %s must be 1 to 100000000\n", argv[optind - 1]);
        return 2;
      }
      *(c == 'r' ? &rounds : &robot_steps) = v;
      break;
    }
    case 'N':
      return_state = false;
      break;
    case 'm':
      mujoco = optarg;
      break;
    case 'M':
      mujoco = NULL;
      break;
    case 'a':
      if (daemon_arg_count == MAX_DAEMON_ARGS) {
        fprintf(stderr, "lcpsim-batch-bench: at most %d --daemon-arg\n", MAX_DAEMON_ARGS);
        return 2;
      }
      daemon_args[daemon_arg_count++] = optarg;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind < argc || !daemon_path) {
    fprintf(stderr, "lcpsim-batch-bench: %s\n",
            optind < argc ? "unexpected argument" : "--start-daemon LCPSIMD is needed");
    usage(stderr);
    return 2;
  }
  if (mujoco && access(mujoco, X_OK) != 0) {
    fprintf(stderr, "lcpsim-batch-bench: no MuJoCo peer at %s\n", mujoco);
    mujoco = NULL;
  }
  int most_worlds = 0, most_in_flight = 1;
  for (int i = 0; i < world_count_n; ++i)
    most_worlds = world_counts[i] > most_worlds ? world_counts[i] : most_worlds;
  for (int i = 0; i < in_flight_n; ++i)
    most_in_flight = in_flights[i] > most_in_flight ? in_flights[i] : most_in_flight;
  /* With two in flight, the second BatchStep is over worlds of its own. */
  int daemon_worlds = most_in_flight * most_worlds;
  signal(SIGPIPE, SIG_IGN);

  /* The daemons first, before any ZeroMQ context; the default world counts
   * towards --max-worlds. */
  lcpd_bench_daemon_t daemons[MAX_WORKER_COUNTS];
  int started = 0;
  bool ok = true;
  for (; ok && started < worker_count_n; ++started)
    ok = daemon_start(&daemons[started], daemon_path, worker_counts[started], daemon_worlds + 1,
                      daemon_args, daemon_arg_count);
  if (!ok)
    --started;

  void *context = zmq_ctx_new();
  /* Per daemon, one connection per BatchStep in flight; connection c steps
   * worlds c·most_worlds onwards. */
  client clients[MAX_IN_FLIGHT][MAX_WORKER_COUNTS] = {{{0}}};
  uint64_t *world_steps[MAX_WORKER_COUNTS] = {0};
  static batch batches[MAX_IN_FLIGHT][MAX_WORKER_COUNTS][MAX_WORLD_COUNTS][MAX_STEP_COUNTS];
  /* wire[f - 1]: f BatchSteps in flight */
  static tally wire[MAX_IN_FLIGHT][MAX_WORKER_COUNTS][MAX_WORLD_COUNTS][MAX_STEP_COUNTS];
  int batch_ready = 0; /* daemons whose batches are all built */
  double timestep = 0.0;
  for (int d = 0; ok && d < worker_count_n; ++d) {
    for (int c = 0; ok && c < most_in_flight; ++c) {
      client *cl = &clients[c][d];
      cl->next_id = 1;
      cl->replies.allocator =
          (ProtobufCAllocator){reply_arena_alloc, reply_arena_free, &cl->replies};
      cl->socket = zmq_socket(context, ZMQ_REQ);
      int zero = 0, timeout = TIMEOUT_MS;
      zmq_setsockopt(cl->socket, ZMQ_LINGER, &zero, sizeof zero);
      zmq_setsockopt(cl->socket, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
      zmq_setsockopt(cl->socket, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
      ok = zmq_connect(cl->socket, daemons[d].rep) == 0;
    }
    ok = ok && create_worlds(&clients[0][d], daemon_worlds) &&
         query_info(&clients[0][d], "batch0", &timestep);
    world_steps[d] = ok ? calloc((size_t)daemon_worlds, sizeof *world_steps[d]) : NULL;
    ok = ok && world_steps[d] != NULL;
    int built = 0, per_connection = world_count_n * step_count_n;
    for (; ok && built < most_in_flight * per_connection; ++built) {
      int c = built / per_connection, k = built % per_connection / step_count_n,
          s = built % step_count_n;
      ok = batch_init(&batches[c][d][k][s], &clients[c][d], c * most_worlds, world_counts[k],
                      step_counts[s], return_state, timestep, world_steps[d]);
    }
    if (!ok) {
      for (int i = 0; i < built; ++i)
        batch_free(
            &batches[i / per_connection][d][i % per_connection / step_count_n][i % step_count_n]);
    } else {
      batch_ready = d + 1;
    }
  }

  /* In-process: world 0 alone (the reference), and worlds 1 to most_worlds
   * for the runs over K worlds. */
  inprocess *local = calloc((size_t)most_worlds + 1, sizeof *local);
  int local_ready = 0;
  ok = ok && local != NULL;
  for (; ok && local_ready <= most_worlds; ++local_ready)
    ok = inprocess_init(&local[local_ready]);
  if (local && local_ready > 0 && !local[local_ready - 1].ready)
    --local_ready;
  inprocess *reference = local, *cold = local ? local + 1 : NULL;
  tally in_process[MAX_WORLD_COUNTS][MAX_STEP_COUNTS] = {{{0}}}, mujoco_tally = {0}, ignored = {0};
  /* A warm-up: each configuration once, a tenth of a round's share. */
  for (int d = 0; ok && d < worker_count_n; ++d)
    for (int k = 0; ok && k < world_count_n; ++k)
      for (int s = 0; ok && s < step_count_n; ++s)
        for (int f = 0; ok && f < in_flight_n; ++f)
          ok = wire_run(batches, in_flights[f], d, k, s,
                        robot_steps / 10 / (world_counts[k] * step_counts[s]) + 2, &ignored);
  for (int k = 0; ok && k < world_count_n; ++k)
    for (int s = 0; ok && s < step_count_n; ++s)
      ok = inprocess_run(world_counts[k] == 1 ? reference : cold, world_counts[k],
                         robot_steps / 10 + step_counts[s], step_counts[s], &ignored);
  if (ok && mujoco && !mujoco_run(mujoco, robot_steps / 10 + 1, &ignored))
    mujoco = NULL;

  for (long round = 0; ok && round < rounds; ++round) {
    for (int k = 0; ok && k < world_count_n; ++k)
      for (int s = 0; ok && s < step_count_n; ++s)
        ok = inprocess_run(world_counts[k] == 1 ? reference : cold, world_counts[k], robot_steps,
                           step_counts[s], &in_process[k][s]);
    if (ok && mujoco && !mujoco_run(mujoco, robot_steps, &mujoco_tally))
      mujoco = NULL;
    for (int d = 0; ok && d < worker_count_n; ++d)
      for (int k = 0; ok && k < world_count_n; ++k)
        for (int s = 0; ok && s < step_count_n; ++s)
          for (int f = 0; ok && f < in_flight_n; ++f) {
            long per_call = (long)world_counts[k] * step_counts[s];
            ok = wire_run(batches, in_flights[f], d, k, s, (robot_steps + per_call - 1) / per_call,
                          &wire[in_flights[f] - 1][d][k][s]);
          }
  }
  /* The reference when K = 1 was not among the counts. */
  tally reference_tally[MAX_STEP_COUNTS] = {{0}};
  int reference_k = -1;
  for (int k = 0; k < world_count_n; ++k)
    reference_k = world_counts[k] == 1 ? k : reference_k;
  for (int s = 0; ok && s < step_count_n; ++s) {
    if (reference_k >= 0)
      reference_tally[s] = in_process[reference_k][s];
    else
      for (long round = 0; ok && round < rounds; ++round)
        ok = inprocess_run(reference, 1, robot_steps, step_counts[s], &reference_tally[s]);
  }
  /* The us_<stage> figures: a pass of their own after the timed ones, since
   * timing each stage costs clock reads the rates above must not include
   * (the daemon's worlds do not time their stages). */
  if (ok && local_ready > 0) {
    tally untimed = {0};
    lcp_world_set_stage_timing(reference->sim.live.world, reference->stage_timing = true);
    ok = inprocess_run(reference, 1, robot_steps, 1, &untimed);
    lcp_world_set_stage_timing(reference->sim.live.world, reference->stage_timing = false);
  }
  double timestep_in_process = reference ? reference->timestep : 0.0;
  double stage_seconds[LCP_STAGE_COUNT] = {0}, contacts = 0.0, reference_steps = 1.0;
  double timed_steps = 1.0;
  if (local_ready > 0) {
    memcpy(stage_seconds, reference->stage_seconds, sizeof stage_seconds);
    contacts = reference->contacts;
    reference_steps = reference->steps ? (double)reference->steps : 1.0;
    timed_steps = reference->timed_steps ? (double)reference->timed_steps : 1.0;
  }

  for (int c = 0; c < most_in_flight; ++c)
    for (int d = 0; d < batch_ready; ++d)
      for (int k = 0; k < world_count_n; ++k)
        for (int s = 0; s < step_count_n; ++s)
          batch_free(&batches[c][d][k][s]);
  for (int d = 0; d < worker_count_n; ++d) {
    for (int c = 0; c < most_in_flight; ++c) {
      if (clients[c][d].socket)
        zmq_close(clients[c][d].socket);
      free(clients[c][d].buffer);
      reply_arena_release(&clients[c][d].replies);
    }
    free(world_steps[d]);
  }
  zmq_ctx_term(context);
  for (int d = 0; d < started; ++d)
    ok = lcpd_bench_daemon_stop(&daemons[d], "lcpsim-batch-bench") && ok;
  for (int i = 0; i < local_ready; ++i)
    lcpd_sim_destroy(&local[i].sim);
  free(local);
  if (!ok)
    return 1;

  double load[3] = {0, 0, 0};
  FILE *loadavg = fopen("/proc/loadavg", "r");
  if (loadavg) {
    if (fscanf(loadavg, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
      load[0] = load[1] = load[2] = 0.0;
    fclose(loadavg);
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  double mj_rate = rate(&mujoco_tally);
  for (int s = 0; s < step_count_n; ++s) {
    double in_rate = rate(&reference_tally[s]);
    printf("bench=batch mode=inprocess scene=arm threads=1 worlds=1 steps=%d robot_steps=%.0f "
           "robot_steps_per_s=%.0f us_per_robot_step=%.3f",
           step_counts[s], reference_tally[s].robot_steps, in_rate, 1e6 / in_rate);
    if (s == 0) {
      printf(" timestep=%.6g contacts=%.1f", timestep_in_process, contacts / reference_steps);
      for (int k = 0; k < LCP_STAGE_COUNT; ++k)
        printf(" us_%s=%.2f", lcp_stage_name((lcp_stage_t)k), 1e6 * stage_seconds[k] / timed_steps);
    }
    printf(" cores=%ld load1=%.2f\n", cores, load[0]);
  }
  for (int s = 0; s < step_count_n; ++s)
    for (int k = 0; k < world_count_n; ++k)
      if (world_counts[k] > 1)
        printf("bench=batch mode=inprocess scene=arm threads=1 worlds=%d steps=%d robot_steps=%.0f "
               "robot_steps_per_s=%.0f us_per_robot_step=%.3f ratio_inprocess=%.3f\n",
               world_counts[k], step_counts[s], in_process[k][s].robot_steps,
               rate(&in_process[k][s]), 1e6 / rate(&in_process[k][s]),
               rate(&in_process[k][s]) / rate(&reference_tally[s]));
  if (mujoco)
    printf("bench=batch mode=mujoco scene=arm threads=1 worlds=1 steps=1 robot_steps=%.0f "
           "robot_steps_per_s=%.0f us_per_robot_step=%.3f\n",
           mujoco_tally.robot_steps, mj_rate, 1e6 / mj_rate);
  else
    printf("bench=batch mode=mujoco available=no how=\"cmake -DLCP_BENCH_PEERS=ON (libmujoco-dev), "
           "build lcpsim-bench-mujoco, or --mujoco PATH\"\n");
  int goal_d = -1, goal_k = -1;
  for (int f = 0; f < in_flight_n; ++f)
    for (int s = 0; s < step_count_n; ++s)
      for (int d = 0; d < worker_count_n; ++d)
        for (int k = 0; k < world_count_n; ++k) {
          int in_flight = in_flights[f];
          const tally *t = &wire[in_flight - 1][d][k][s];
          double in_rate = rate(&reference_tally[s]);
          double r = rate(t), per_call = t->calls > 0.0 ? 1.0 / t->calls : 0.0;
          printf("bench=batch mode=wire scene=arm workers=%d worlds=%d steps=%d in_flight=%d "
                 "state=%s robot_steps_per_s=%.0f ratio_inprocess=%.3f "
                 "ratio_inprocess_same_worlds=%.3f",
                 worker_counts[d], world_counts[k], step_counts[s], in_flight,
                 return_state ? "yes" : "no", r, r / in_rate, r / rate(&in_process[k][s]));
          if (mujoco)
            printf(" ratio_mujoco=%.3f", r / mj_rate);
          if (in_flight == 1) {
            int threads = worker_counts[d] < world_counts[k] ? worker_counts[d] : world_counts[k];
            double ideal = (double)world_counts[k] * (double)step_counts[s] /
                           rate(&in_process[k][s]) / threads;
            printf(" calls=%.0f us_per_call=%.1f round_trip_us=%.1f client_encode_us=%.1f "
                   "client_decode_us=%.1f overhead_us=%.1f",
                   t->calls, 1e6 * (t->seconds + t->encode + t->decode) * per_call,
                   1e6 * t->seconds * per_call, 1e6 * t->encode * per_call,
                   1e6 * t->decode * per_call, 1e6 * (t->seconds * per_call - ideal));
          } else {
            /* the run's time over its calls: the client's work overlaps */
            printf(" calls=%.0f us_per_call=%.1f client_encode_us=%.1f client_decode_us=%.1f",
                   t->calls, 1e6 * t->seconds * per_call, 1e6 * t->encode * per_call,
                   1e6 * t->decode * per_call);
          }
          printf(" request_bytes=%zu reply_bytes=%zu\n", t->request_bytes, t->reply_bytes);
          if (worker_counts[d] == GOAL_WORKERS && world_counts[k] == GOAL_WORLDS)
            goal_d = d, goal_k = k;
        }
  for (int f = 0; f < in_flight_n; ++f)
    for (int s = 0; goal_d >= 0 && s < step_count_n; ++s)
      print_goal(step_counts[s], in_flights[f], &wire[in_flights[f] - 1][goal_d][goal_k][s],
                 rate(&reference_tally[s]), mj_rate, mujoco != NULL, cores, load[0]);
  return 0;
}
