/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_pool: see lcpsim_pool.h. */
#include "lcpsim_pool.h"

#include "lcpsim_client_internal.h"

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <zmq.h>

/* ---- resolving a name to every address ---- */

static char *copy_text(const char *text) {
  size_t size = strlen(text) + 1;
  char *copy = malloc(size);
  if (copy)
    memcpy(copy, text, size);
  return copy;
}

void lcpsim_endpoints_free(char **endpoints, size_t count) {
  for (size_t i = 0; endpoints && i < count; ++i)
    free(endpoints[i]);
  free(endpoints);
}

/* Appends `endpoint` to the list unless it is there already. */
static int add_endpoint(char ***list, size_t *count, const char *endpoint) {
  for (size_t i = 0; i < *count; ++i)
    if (strcmp((*list)[i], endpoint) == 0)
      return LCPSIM_OK;
  char **grown = realloc(*list, (*count + 1) * sizeof *grown);
  if (!grown)
    return LCPSIM_ERR_NO_MEMORY;
  *list = grown;
  if (!(grown[*count] = copy_text(endpoint)))
    return LCPSIM_ERR_NO_MEMORY;
  ++*count;
  return LCPSIM_OK;
}

int lcpsim_resolve_endpoints(const char *endpoint, char ***endpoints, size_t *count) {
  if (!endpoint || !endpoints || !count)
    return LCPSIM_ERR_USAGE;
  *endpoints = NULL;
  *count = 0;
  /* tcp://HOST:PORT, HOST possibly [v6]; anything else is taken as it is. */
  char host[256], port[16];
  const char *rest = strncmp(endpoint, "tcp://", 6) == 0 ? endpoint + 6 : NULL;
  const char *colon = rest ? strrchr(rest, ':') : NULL;
  size_t host_length = colon ? (size_t)(colon - rest) : 0;
  if (!colon || host_length == 0 || host_length >= sizeof host || strlen(colon + 1) == 0 ||
      strlen(colon + 1) >= sizeof port)
    return add_endpoint(endpoints, count, endpoint);
  memcpy(host, rest, host_length);
  host[host_length] = '\0';
  snprintf(port, sizeof port, "%s", colon + 1);
  if (host[0] == '[' && host[host_length - 1] == ']') {
    memmove(host, host + 1, host_length - 2);
    host[host_length - 2] = '\0';
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *found = NULL;
  if (getaddrinfo(host, port, &hints, &found) != 0)
    return LCPSIM_ERR_NOT_FOUND;
  int code = LCPSIM_OK;
  for (const struct addrinfo *a = found; a && code == LCPSIM_OK; a = a->ai_next) {
    char address[128], text[192];
    if (getnameinfo(a->ai_addr, a->ai_addrlen, address, sizeof address, NULL, 0, NI_NUMERICHOST))
      continue;
    snprintf(text, sizeof text, a->ai_family == AF_INET6 ? "tcp://[%s]:%s" : "tcp://%s:%s", address,
             port);
    code = add_endpoint(endpoints, count, text);
  }
  freeaddrinfo(found);
  if (code != LCPSIM_OK) {
    lcpsim_endpoints_free(*endpoints, *count);
    *endpoints = NULL;
    *count = 0;
  }
  return code;
}

/* ---- the pool ---- */

/* A SetDynamics as given, its entries and their names copied. */
typedef struct {
  lcpsim_body_dynamics_t *bodies;
  size_t n_bodies;
  lcpsim_joint_dynamics_t *joints;
  size_t n_joints;
} dynamics_edit_t;

/* What a world was given since its snapshot, in order: a tick (its steps and its target, the
 * target's arrays copied) or a dynamics edit. */
typedef struct {
  bool is_edit;
  int steps;
  bool has_target;
  lcpsim_target_t target;
  dynamics_edit_t edit;
} logged_t;

typedef struct {
  char name[64];
  size_t daemon;
  uint8_t *snapshot;
  size_t snapshot_size;
  uint64_t snapshot_step;
  /* Every dynamics edit made before the snapshot, in order: a snapshot holds the state, not the
   * model, so a world created again from it needs them all again, before the ticks since. Kept
   * whole rather than merged: each edit is checked against the values the earlier ones left (a
   * joint's lower limit alone against its upper one), so only the same edits in the same order
   * are sure to be accepted and to leave the same model. */
  dynamics_edit_t *edits;
  size_t n_edits, edits_capacity;
  logged_t *log; /* the ticks and edits since the snapshot */
  size_t n_log, log_capacity;
} world_t;

/* Why a daemon was taken as failed (lcpsim_pool_move_t.reason). */
static const char CONNECTION_LOST[] = "connection lost";
static const char NO_CONNECTION[] = "no connection";
static const char NO_REPLY[] = "no reply within the timeout";
static const char TRANSPORT_FAILED[] = "transport error";

typedef struct {
  char *endpoint;
  lcpsim_client_t *client;
  bool alive;
  /* A PAIR socket receiving the events of the client socket's monitor (NULL: not watched), and
   * whether the daemon is connected as far as they say. */
  void *monitor;
  bool connected;
  const char *failure; /* why it was taken as failed */
  uint64_t request_id;
  lcpsim_batch_reply_t *reply; /* of the round in progress */
  size_t *sent;                /* the worlds of the BatchStep in flight, in its order */
  size_t n_sent;
} daemon_t;

struct lcpsim_pool {
  daemon_t *daemons;
  size_t n_daemons;
  world_t *worlds;
  size_t n_worlds;
  char *copy_of, *scene_path, *scene_text;
  int snapshot_every;
  int timeout_ms;
  uint64_t ticks;
  /* This tick's replies (results point into them), freed at the next tick. */
  lcpsim_batch_reply_t **replies;
  size_t n_replies, replies_capacity;
  const lcpsim_batch_result_t **results;
  lcpsim_pool_move_t *moves;
  size_t n_moves, moves_capacity;
  const char **failed;
  size_t n_failed;
  char last_error[512];
};

static int pool_fail(lcpsim_pool_t *pool, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int pool_fail(lcpsim_pool_t *pool, int code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(pool->last_error, sizeof pool->last_error, format, args);
  va_end(args);
  return code;
}

const char *lcpsim_pool_last_error(const lcpsim_pool_t *pool) {
  return pool ? pool->last_error : "no pool";
}

static void *copy_array(const void *values, size_t count, size_t size) {
  if (!count)
    return NULL;
  void *copy = malloc(count * size);
  if (copy)
    memcpy(copy, values, count * size);
  return copy;
}

static void target_free(lcpsim_target_t *target) {
  free((char *)target->robot);
  for (size_t i = 0; i < target->n_joints; ++i)
    free((char *)target->joints[i]);
  free((void *)target->joints);
  free((void *)target->indices);
  free((void *)target->position);
  free((void *)target->velocity);
  free((void *)target->kp);
  free((void *)target->kd);
  free((void *)target->effort_limit);
  free((void *)target->torque);
  *target = (lcpsim_target_t){0};
}

/* A deep copy of `in` into `out` (every array its own allocation). */
static bool target_copy(const lcpsim_target_t *in, lcpsim_target_t *out) {
  *out = *in;
  out->robot = copy_text(in->robot);
  char **joints = in->n_joints ? calloc(in->n_joints, sizeof *joints) : NULL;
  bool ok = out->robot && (joints || !in->n_joints);
  for (size_t i = 0; ok && i < in->n_joints; ++i)
    ok = (joints[i] = copy_text(in->joints[i])) != NULL;
  out->joints = (const char *const *)joints;
  out->indices = copy_array(in->indices, in->n_indices, sizeof *in->indices);
  out->position = copy_array(in->position, in->n_position, sizeof(double));
  out->velocity = copy_array(in->velocity, in->n_velocity, sizeof(double));
  out->kp = copy_array(in->kp, in->n_kp, sizeof(double));
  out->kd = copy_array(in->kd, in->n_kd, sizeof(double));
  out->effort_limit = copy_array(in->effort_limit, in->n_effort_limit, sizeof(double));
  out->torque = copy_array(in->torque, in->n_torque, sizeof(double));
  ok = ok && (out->indices || !in->n_indices) && (out->position || !in->n_position) &&
       (out->velocity || !in->n_velocity) && (out->kp || !in->n_kp) && (out->kd || !in->n_kd) &&
       (out->effort_limit || !in->n_effort_limit) && (out->torque || !in->n_torque);
  if (!ok)
    target_free(out);
  return ok;
}

static void edit_free(dynamics_edit_t *edit) {
  for (size_t i = 0; i < edit->n_bodies; ++i) {
    free((char *)edit->bodies[i].body);
    free((char *)edit->bodies[i].robot);
    free((char *)edit->bodies[i].link);
  }
  for (size_t i = 0; i < edit->n_joints; ++i) {
    free((char *)edit->joints[i].robot);
    free((char *)edit->joints[i].joint);
  }
  free(edit->bodies);
  free(edit->joints);
  *edit = (dynamics_edit_t){0};
}

/* `*copy`: a copy of `name`, or NULL for NULL; false when out of memory. */
static bool copy_name(const char *name, const char **copy) {
  *copy = name ? copy_text(name) : NULL;
  return !name || *copy;
}

/* A deep copy of a SetDynamics's entries into `out`: the caller's arrays and names are not kept. */
static bool edit_copy(const lcpsim_body_dynamics_t *bodies, size_t n_bodies,
                      const lcpsim_joint_dynamics_t *joints, size_t n_joints,
                      dynamics_edit_t *out) {
  *out = (dynamics_edit_t){.bodies = n_bodies ? calloc(n_bodies, sizeof *bodies) : NULL,
                           .n_bodies = n_bodies,
                           .joints = n_joints ? calloc(n_joints, sizeof *joints) : NULL,
                           .n_joints = n_joints};
  bool ok = (out->bodies || !n_bodies) && (out->joints || !n_joints);
  if (!ok) {
    free(out->bodies);
    free(out->joints);
    *out = (dynamics_edit_t){0};
    return false;
  }
  /* The values come with the struct, each name on its own; the entries not reached on a failure
   * stay zeroed, their names NULL, so that edit_free frees only copies. */
  for (size_t i = 0; ok && i < n_bodies; ++i) {
    lcpsim_body_dynamics_t *body = &out->bodies[i];
    *body = bodies[i];
    body->body = body->robot = body->link = NULL;
    ok = copy_name(bodies[i].body, &body->body) && copy_name(bodies[i].robot, &body->robot) &&
         copy_name(bodies[i].link, &body->link);
  }
  for (size_t i = 0; ok && i < n_joints; ++i) {
    lcpsim_joint_dynamics_t *joint = &out->joints[i];
    *joint = joints[i];
    joint->robot = joint->joint = NULL;
    ok = copy_name(joints[i].robot, &joint->robot) && copy_name(joints[i].joint, &joint->joint);
  }
  if (!ok)
    edit_free(out);
  return ok;
}

static void logged_free(logged_t *entry) {
  if (entry->is_edit)
    edit_free(&entry->edit);
  else if (entry->has_target)
    target_free(&entry->target);
}

/* Room in the world's kept edits for those of its log, so that taking a snapshot cannot fail
 * half-way. */
static int reserve_edits(world_t *world) {
  size_t needed = world->n_edits;
  for (size_t i = 0; i < world->n_log; ++i)
    needed += world->log[i].is_edit;
  if (needed <= world->edits_capacity)
    return LCPSIM_OK;
  size_t capacity = world->edits_capacity ? 2 * world->edits_capacity : 8;
  capacity = capacity < needed ? needed : capacity;
  dynamics_edit_t *grown = realloc(world->edits, capacity * sizeof *grown);
  if (!grown)
    return LCPSIM_ERR_NO_MEMORY;
  world->edits = grown;
  world->edits_capacity = capacity;
  return LCPSIM_OK;
}

/* A new snapshot was taken: the ticks logged before it are of no more use, the edits are kept
 * (moved, in order, after those kept already; reserve_edits made room). */
static void log_settle(world_t *world) {
  for (size_t i = 0; i < world->n_log; ++i) {
    if (world->log[i].is_edit)
      world->edits[world->n_edits++] = world->log[i].edit;
    else
      logged_free(&world->log[i]);
  }
  world->n_log = 0;
}

/* A new entry at the end of the world's log, zeroed; NULL when out of memory. */
static logged_t *log_grow(world_t *world) {
  if (world->n_log == world->log_capacity) {
    size_t capacity = world->log_capacity ? 2 * world->log_capacity : 16;
    logged_t *grown = realloc(world->log, capacity * sizeof *grown);
    if (!grown)
      return NULL;
    world->log = grown;
    world->log_capacity = capacity;
  }
  logged_t *entry = &world->log[world->n_log];
  *entry = (logged_t){0};
  return entry;
}

static int log_append(world_t *world, int steps, const lcpsim_target_t *target) {
  logged_t *entry = log_grow(world);
  if (!entry)
    return LCPSIM_ERR_NO_MEMORY;
  entry->steps = steps;
  if (target && target->robot) {
    if (!target_copy(target, &entry->target))
      return LCPSIM_ERR_NO_MEMORY;
    entry->has_target = true;
  }
  ++world->n_log;
  return LCPSIM_OK;
}

static void release_replies(lcpsim_pool_t *pool) {
  for (size_t i = 0; i < pool->n_replies; ++i)
    lcpsim_batch_reply_destroy(&pool->replies[i]);
  pool->n_replies = 0;
}

static int keep_reply(lcpsim_pool_t *pool, lcpsim_batch_reply_t *reply) {
  if (pool->n_replies == pool->replies_capacity) {
    size_t capacity = pool->replies_capacity ? 2 * pool->replies_capacity : 8;
    lcpsim_batch_reply_t **grown = realloc(pool->replies, capacity * sizeof *grown);
    if (!grown) {
      lcpsim_batch_reply_destroy(&reply);
      return LCPSIM_ERR_NO_MEMORY;
    }
    pool->replies = grown;
    pool->replies_capacity = capacity;
  }
  pool->replies[pool->n_replies++] = reply;
  return LCPSIM_OK;
}

static int create_on(lcpsim_pool_t *pool, size_t world, size_t daemon) {
  world_t *w = &pool->worlds[world];
  lcpsim_world_source_t source = {.name = w->name,
                                  .copy_of = pool->copy_of,
                                  .scene_path = pool->scene_path,
                                  .scene_text = pool->scene_text,
                                  .snapshot = w->snapshot,
                                  .snapshot_size = w->snapshot_size};
  int code = lcpsim_client_create_world(pool->daemons[daemon].client, &source, NULL);
  if (code != LCPSIM_OK)
    return pool_fail(pool, code, "world %s not created on %s: %s", w->name,
                     pool->daemons[daemon].endpoint,
                     lcpsim_client_last_error(pool->daemons[daemon].client));
  w->daemon = daemon;
  return LCPSIM_OK;
}

/* The WorldStep of world `world`'s logged tick `entry`. */
static lcpsim_world_step_t world_step_of(const lcpsim_pool_t *pool, size_t world, size_t entry) {
  const world_t *w = &pool->worlds[world];
  const logged_t *logged = &w->log[entry];
  return (lcpsim_world_step_t){.world = w->name,
                               .steps = logged->steps,
                               .targets = logged->has_target ? &logged->target : NULL,
                               .n_targets = logged->has_target ? 1 : 0};
}

/* Watches daemon d's connection: ZeroMQ's socket monitor publishes the client socket's
 * connection events on an inproc endpoint of its context, read here by a PAIR socket without
 * blocking, so that a daemon whose connection drops is taken as failed at once rather than at
 * the tick's timeout. The client has connected already: its connection counts as up until an
 * event says otherwise. Without a monitor the timeout still finds a dead daemon. */
static void watch_connection(lcpsim_pool_t *pool, size_t d) {
  daemon_t *daemon = &pool->daemons[d];
  void *socket = lcpsim_client_zmq_socket(daemon->client);
  char address[64];
  snprintf(address, sizeof address, "inproc://lcpsim-pool-monitor-%zu", d);
  daemon->connected = true;
  if (zmq_socket_monitor(socket, address,
                         ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CLOSED) != 0)
    return;
  void *monitor = zmq_socket(lcpc_client_zmq_context(daemon->client), ZMQ_PAIR);
  int linger = 0;
  if (!monitor || zmq_setsockopt(monitor, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      zmq_connect(monitor, address) != 0) {
    if (monitor)
      zmq_close(monitor);
    zmq_socket_monitor(socket, NULL, 0);
    return;
  }
  daemon->monitor = monitor;
}

static void stop_watching(daemon_t *daemon) {
  if (!daemon->monitor)
    return;
  zmq_close(daemon->monitor);
  daemon->monitor = NULL;
  zmq_socket_monitor(lcpsim_client_zmq_socket(daemon->client), NULL, 0);
}

/* Reads the monitor's pending events (each a message of two frames: the event number and value,
 * then the peer's address); whether the last one leaves the daemon connected. A drop followed by
 * a reconnection is no failure. */
static bool still_connected(daemon_t *daemon) {
  while (daemon->monitor) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, daemon->monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      break;
    }
    uint16_t event = 0;
    if (zmq_msg_size(&frame) >= sizeof event)
      memcpy(&event, zmq_msg_data(&frame), sizeof event);
    bool more = zmq_msg_more(&frame);
    zmq_msg_close(&frame);
    /* The rest of the message, sent as one with its first frame. */
    while (more) {
      zmq_msg_init(&frame);
      more = zmq_msg_recv(&frame, daemon->monitor, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&frame);
      zmq_msg_close(&frame);
    }
    if (event == ZMQ_EVENT_CONNECTED)
      daemon->connected = true;
    else if (event == ZMQ_EVENT_DISCONNECTED || event == ZMQ_EVENT_CLOSED)
      daemon->connected = false;
  }
  return daemon->connected;
}

/* Sends daemon d the BatchStep of `n` worlds' last logged ticks without waiting. */
static int start_round(lcpsim_pool_t *pool, size_t d, const size_t *worlds, size_t n,
                       unsigned flags) {
  daemon_t *daemon = &pool->daemons[d];
  lcpsim_world_step_t *steps = calloc(n ? n : 1, sizeof *steps);
  size_t *sent = realloc(daemon->sent, (n ? n : 1) * sizeof *sent);
  if (!steps || !sent) {
    free(steps);
    return LCPSIM_ERR_NO_MEMORY;
  }
  daemon->sent = sent;
  for (size_t i = 0; i < n; ++i) {
    sent[i] = worlds[i];
    steps[i] = world_step_of(pool, worlds[i], pool->worlds[worlds[i]].n_log - 1);
  }
  daemon->n_sent = n;
  int code =
      lcpsim_client_batch_step_start(daemon->client, steps, n, flags, 0, &daemon->request_id);
  free(steps);
  return code;
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for the replies of the daemons in `started` (their `reply` set); those whose connection
 * drops meanwhile, or without a reply by the timeout, are marked in `failed`. A reply refused as a
 * whole is an error of the pool. */
static int wait_round(lcpsim_pool_t *pool, const bool *started, bool *failed) {
  /* Each daemon waited for: its client's socket, then its monitor's. */
  zmq_pollitem_t *items = calloc(2 * pool->n_daemons, sizeof *items);
  size_t *owner = calloc(2 * pool->n_daemons, sizeof *owner);
  if (!items || !owner) {
    free(items);
    free(owner);
    return LCPSIM_ERR_NO_MEMORY;
  }
  int64_t deadline = now_ms() + pool->timeout_ms;
  int code = LCPSIM_OK;
  for (;;) {
    size_t n = 0;
    for (size_t d = 0; d < pool->n_daemons; ++d)
      if (started[d] && !failed[d] && !pool->daemons[d].reply) {
        items[n] = (zmq_pollitem_t){.socket = lcpsim_client_zmq_socket(pool->daemons[d].client),
                                    .events = ZMQ_POLLIN};
        owner[n++] = d;
        if (pool->daemons[d].monitor) {
          items[n] = (zmq_pollitem_t){.socket = pool->daemons[d].monitor, .events = ZMQ_POLLIN};
          owner[n++] = d;
        }
      }
    int64_t left = deadline - now_ms();
    if (n == 0 || left <= 0) {
      for (size_t i = 0; i < n; ++i)
        if (!failed[owner[i]]) {
          failed[owner[i]] = true;
          pool->daemons[owner[i]].failure = NO_REPLY;
        }
      break;
    }
    if (zmq_poll(items, (int)n, (long)left) < 0)
      continue; /* EINTR */
    for (size_t i = 0; i < n && code == LCPSIM_OK; ++i) {
      daemon_t *daemon = &pool->daemons[owner[i]];
      if (!(items[i].revents & ZMQ_POLLIN) || failed[owner[i]] || daemon->reply)
        continue;
      if (items[i].socket == daemon->monitor) {
        if (!still_connected(daemon)) {
          failed[owner[i]] = true;
          daemon->failure = CONNECTION_LOST;
        }
        continue;
      }
      int got =
          lcpsim_client_batch_step_finish(daemon->client, daemon->request_id, 0, &daemon->reply);
      if (got == LCPSIM_ERR_TRANSPORT || got == LCPSIM_ERR_PROTOCOL) {
        failed[owner[i]] = true;
        daemon->failure = TRANSPORT_FAILED;
      } else if (got != LCPSIM_OK && got != LCPSIM_ERR_TIMEOUT)
        code = pool_fail(pool, got, "%s refused a BatchStep: %s", daemon->endpoint,
                         lcpsim_client_last_error(daemon->client));
    }
    if (code != LCPSIM_OK)
      break;
  }
  free(items);
  free(owner);
  return code;
}

/* Takes daemon d's reply: each world's result, its snapshot kept when the round asked. */
static int take_round(lcpsim_pool_t *pool, size_t d, bool snapshot) {
  daemon_t *daemon = &pool->daemons[d];
  lcpsim_batch_reply_t *reply = daemon->reply;
  daemon->reply = NULL;
  if (reply->n_results != daemon->n_sent) {
    size_t results = reply->n_results;
    lcpsim_batch_reply_destroy(&reply);
    return pool_fail(pool, LCPSIM_ERR_PROTOCOL, "%s: %zu results for %zu worlds", daemon->endpoint,
                     results, daemon->n_sent);
  }
  int code = keep_reply(pool, reply);
  for (size_t i = 0; i < daemon->n_sent && code == LCPSIM_OK; ++i) {
    const lcpsim_batch_result_t *result = reply->results[i];
    world_t *w = &pool->worlds[daemon->sent[i]];
    int status = lcpsim_batch_result_code(result);
    if (status != LCPSIM_OK)
      return pool_fail(pool, status, "world %s on %s: %s", w->name, daemon->endpoint,
                       result->status ? result->status->message : "");
    pool->results[daemon->sent[i]] = result;
    if (snapshot) {
      uint8_t *copy = copy_array(result->snapshot.data, result->snapshot.len, 1);
      if ((!copy && result->snapshot.len) || reserve_edits(w) != LCPSIM_OK) {
        free(copy);
        return LCPSIM_ERR_NO_MEMORY;
      }
      free(w->snapshot);
      w->snapshot = copy;
      w->snapshot_size = result->snapshot.len;
      w->snapshot_step = result->step_count;
      log_settle(w);
    }
  }
  return code;
}

/* send_edit's answer when the daemon has failed (its `failure` set): not an lcpsim code. */
enum { DAEMON_FAILED = 1 };

/* Sends a SetDynamics of world `world` to its daemon and waits for the answer, watching the
 * connection as a tick does: LCPSIM_OK when applied; DAEMON_FAILED when the daemon has no
 * connection, loses it meanwhile, does not answer within the timeout or breaks the transport;
 * else the daemon's refusal, with its message. */
static int send_edit(lcpsim_pool_t *pool, size_t world, const dynamics_edit_t *edit) {
  const world_t *w = &pool->worlds[world];
  daemon_t *daemon = &pool->daemons[w->daemon];
  /* Request.world is the client's: it names this world for this call only, the pool's other
   * calls naming their worlds themselves. Sent without waiting for a connection: a daemon with
   * none has failed, as when a tick is sent. */
  uint64_t id = 0;
  lcpsim_client_set_world(daemon->client, w->name);
  int code = lcpc_send_set_dynamics(daemon->client, edit->bodies, edit->n_bodies, edit->joints,
                                    edit->n_joints, lcpc_monotonic_ms(), &id);
  lcpsim_client_set_world(daemon->client, NULL);
  if (code == LCPSIM_ERR_TIMEOUT || code == LCPSIM_ERR_TRANSPORT) {
    daemon->failure = still_connected(daemon) ? NO_CONNECTION : CONNECTION_LOST;
    return DAEMON_FAILED;
  }
  if (code != LCPSIM_OK)
    return pool_fail(pool, code, "world %s: %s", w->name, lcpsim_client_last_error(daemon->client));
  int64_t deadline = now_ms() + pool->timeout_ms;
  for (;;) {
    zmq_pollitem_t items[2] = {
        {.socket = lcpsim_client_zmq_socket(daemon->client), .events = ZMQ_POLLIN},
        {.socket = daemon->monitor, .events = ZMQ_POLLIN}};
    int64_t left = deadline - now_ms();
    if (left <= 0) {
      daemon->failure = NO_REPLY;
      return DAEMON_FAILED;
    }
    if (zmq_poll(items, daemon->monitor ? 2 : 1, (long)left) < 0)
      continue; /* EINTR */
    if ((items[1].revents & ZMQ_POLLIN) && !still_connected(daemon)) {
      daemon->failure = CONNECTION_LOST;
      return DAEMON_FAILED;
    }
    if (!(items[0].revents & ZMQ_POLLIN))
      continue;
    reply_t *reply = NULL;
    code = lcpc_receive_reply(daemon->client, id, LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS, NULL,
                              lcpc_monotonic_ms(), &reply);
    if (code == LCPSIM_OK) {
      lcpsim__v1__reply__free_unpacked(reply, NULL);
      return LCPSIM_OK;
    }
    if (code == LCPSIM_ERR_TIMEOUT)
      continue; /* what came was the late reply of an earlier call, dropped */
    if (code == LCPSIM_ERR_TRANSPORT || code == LCPSIM_ERR_PROTOCOL) {
      daemon->failure = TRANSPORT_FAILED;
      return DAEMON_FAILED;
    }
    return pool_fail(pool, code, "world %s on %s: %s", w->name, daemon->endpoint,
                     lcpsim_client_last_error(daemon->client));
  }
}

static size_t load_of(const lcpsim_pool_t *pool, size_t d) {
  size_t load = 0;
  for (size_t i = 0; i < pool->n_worlds; ++i)
    load += pool->worlds[i].daemon == d;
  return load;
}

static int record_move(lcpsim_pool_t *pool, size_t world, size_t from, size_t to) {
  if (pool->n_moves == pool->moves_capacity) {
    size_t capacity = pool->moves_capacity ? 2 * pool->moves_capacity : 64;
    lcpsim_pool_move_t *grown = realloc(pool->moves, capacity * sizeof *grown);
    if (!grown)
      return LCPSIM_ERR_NO_MEMORY;
    pool->moves = grown;
    pool->moves_capacity = capacity;
  }
  pool->moves[pool->n_moves++] =
      (lcpsim_pool_move_t){.world = world,
                           .source = pool->daemons[from].endpoint,
                           .destination = pool->daemons[to].endpoint,
                           .from_step = pool->worlds[world].snapshot_step,
                           .reason = pool->daemons[from].failure};
  return LCPSIM_OK;
}

/* Brings world i, just created again from its snapshot, to where its first `upto` logged entries
 * left it: every edit made before the snapshot, in order, then the ticks and edits logged since,
 * each in its place (an edit made between two ticks is applied between their replays). */
static int replay(lcpsim_pool_t *pool, size_t i, size_t upto) {
  const world_t *w = &pool->worlds[i];
  daemon_t *daemon = &pool->daemons[w->daemon];
  int code = LCPSIM_OK;
  for (size_t e = 0; code == LCPSIM_OK && e < w->n_edits; ++e)
    code = send_edit(pool, i, &w->edits[e]);
  for (size_t e = 0; code == LCPSIM_OK && e < upto; ++e) {
    if (w->log[e].is_edit) {
      code = send_edit(pool, i, &w->log[e].edit);
      continue;
    }
    lcpsim_world_step_t step = world_step_of(pool, i, e);
    lcpsim_batch_reply_t *reply = NULL;
    code = lcpsim_client_batch_step(daemon->client, &step, 1, 0, 0, &reply);
    if (code == LCPSIM_OK)
      code = lcpsim_batch_result_code(reply->results[0]);
    lcpsim_batch_reply_destroy(&reply);
  }
  if (code == LCPSIM_OK)
    return LCPSIM_OK;
  return pool_fail(pool, code == DAEMON_FAILED ? LCPSIM_ERR_TRANSPORT : code,
                   "world %s: replaying on %s failed: %s", w->name, daemon->endpoint,
                   code == DAEMON_FAILED ? daemon->failure
                                         : lcpsim_client_last_error(daemon->client));
}

/* Moves the worlds of failed daemon `d` to the least loaded live daemons, from their snapshots,
 * and replays their logs there. In a tick (`again` not NULL) the last logged entry is that tick:
 * it is left for the next round (`again[world]` set). */
static int move_worlds_of(lcpsim_pool_t *pool, size_t d, bool *again) {
  pool->daemons[d].alive = false;
  /* A dead daemon's socket tries to reconnect for ever: its events are of no more use. */
  stop_watching(&pool->daemons[d]);
  pool->failed[pool->n_failed++] = pool->daemons[d].endpoint;
  for (size_t i = 0; i < pool->n_worlds; ++i) {
    if (pool->worlds[i].daemon != d)
      continue;
    size_t best = pool->n_daemons;
    for (size_t o = 0; o < pool->n_daemons; ++o)
      if (pool->daemons[o].alive &&
          (best == pool->n_daemons || load_of(pool, o) < load_of(pool, best)))
        best = o;
    if (best == pool->n_daemons)
      return pool_fail(pool, LCPSIM_ERR_TRANSPORT, "no daemon left (the last, %s, failed)",
                       pool->daemons[d].endpoint);
    if (!pool->worlds[i].snapshot_size)
      return pool_fail(pool, LCPSIM_ERR_TRANSPORT, "world %s: %s failed before its first snapshot",
                       pool->worlds[i].name, pool->daemons[d].endpoint);
    int code = create_on(pool, i, best);
    if (code == LCPSIM_OK)
      code = record_move(pool, i, d, best);
    size_t n_log = pool->worlds[i].n_log;
    if (code == LCPSIM_OK)
      code = replay(pool, i, again && n_log ? n_log - 1 : n_log);
    if (code != LCPSIM_OK)
      return code;
    if (again)
      again[i] = n_log > 0;
  }
  return LCPSIM_OK;
}

/* Sends the last logged tick of the worlds marked in `todo` (cleared as they are answered),
 * round after round until every one is answered, moving the worlds of the daemons that fail. */
static int run_rounds(lcpsim_pool_t *pool, bool *todo, unsigned flags) {
  size_t n = pool->n_worlds, nd = pool->n_daemons;
  size_t *worlds = calloc(n ? n : 1, sizeof *worlds);
  bool *started = calloc(nd, sizeof *started), *failed = calloc(nd, sizeof *failed);
  int code = worlds && started && failed ? LCPSIM_OK : LCPSIM_ERR_NO_MEMORY;
  bool snapshot = (flags & LCPSIM_BATCH_RETURN_SNAPSHOT) != 0;
  for (;;) {
    bool any = false;
    for (size_t d = 0; d < nd && code == LCPSIM_OK; ++d) {
      started[d] = failed[d] = false;
      size_t count = 0;
      for (size_t i = 0; i < n; ++i)
        if (todo[i] && pool->worlds[i].daemon == d)
          worlds[count++] = i;
      if (count == 0 || !pool->daemons[d].alive)
        continue;
      any = true;
      int sent = start_round(pool, d, worlds, count, flags);
      if (sent == LCPSIM_ERR_NO_MEMORY)
        code = sent;
      started[d] = sent == LCPSIM_OK;
      failed[d] = sent != LCPSIM_OK;
      /* No connection to send on: one the monitor saw drop, or none at all. */
      if (failed[d])
        pool->daemons[d].failure =
            still_connected(&pool->daemons[d]) ? NO_CONNECTION : CONNECTION_LOST;
    }
    if (code != LCPSIM_OK || !any)
      break;
    code = wait_round(pool, started, failed);
    for (size_t d = 0; d < nd && code == LCPSIM_OK; ++d) {
      if (!started[d] || failed[d] || !pool->daemons[d].reply)
        continue;
      for (size_t i = 0; i < pool->daemons[d].n_sent; ++i)
        todo[pool->daemons[d].sent[i]] = false;
      code = take_round(pool, d, snapshot);
    }
    for (size_t d = 0; d < nd && code == LCPSIM_OK; ++d)
      if (failed[d]) {
        lcpsim_batch_reply_destroy(&pool->daemons[d].reply);
        code = move_worlds_of(pool, d, todo);
      }
    if (code != LCPSIM_OK)
      break;
  }
  free(worlds);
  free(started);
  free(failed);
  return code;
}

int lcpsim_pool_step(lcpsim_pool_t *pool, int steps, const lcpsim_target_t *targets, unsigned flags,
                     const lcpsim_batch_result_t *const **results) {
  if (!pool)
    return LCPSIM_ERR_USAGE;
  pool->last_error[0] = '\0';
  release_replies(pool);
  ++pool->ticks;
  bool *todo = calloc(pool->n_worlds ? pool->n_worlds : 1, sizeof *todo);
  if (!todo)
    return LCPSIM_ERR_NO_MEMORY;
  int code = LCPSIM_OK;
  for (size_t i = 0; i < pool->n_worlds && code == LCPSIM_OK; ++i) {
    code = log_append(&pool->worlds[i], steps, targets ? &targets[i] : NULL);
    todo[i] = true;
    pool->results[i] = NULL;
  }
  bool snapshot = pool->ticks % (uint64_t)pool->snapshot_every == 0;
  if (code == LCPSIM_OK)
    code = run_rounds(pool, todo,
                      (flags & (LCPSIM_BATCH_RETURN_STATE | LCPSIM_BATCH_WITH_CONTACTS)) |
                          (snapshot ? LCPSIM_BATCH_RETURN_SNAPSHOT : 0u));
  free(todo);
  if (results)
    *results = code == LCPSIM_OK ? pool->results : NULL;
  return code;
}

int lcpsim_pool_set_dynamics(lcpsim_pool_t *pool, size_t world,
                             const lcpsim_body_dynamics_t *bodies, size_t n_bodies,
                             const lcpsim_joint_dynamics_t *joints, size_t n_joints) {
  if (!pool || world >= pool->n_worlds || (n_bodies && !bodies) || (n_joints && !joints))
    return LCPSIM_ERR_USAGE;
  pool->last_error[0] = '\0';
  world_t *w = &pool->worlds[world];
  /* The log's room is made before the edit is sent, so that an edit the daemon applied is always
   * recorded; the entry counts only then, so a move meanwhile does not replay it. */
  logged_t *entry = log_grow(w);
  if (!entry || !edit_copy(bodies, n_bodies, joints, n_joints, &entry->edit))
    return pool_fail(pool, LCPSIM_ERR_NO_MEMORY, "world %s: out of memory", w->name);
  entry->is_edit = true;
  int code;
  /* A failed daemon's worlds move first, as in a tick; the edit goes to the world's new daemon. */
  while ((code = send_edit(pool, world, &entry->edit)) == DAEMON_FAILED)
    if ((code = move_worlds_of(pool, w->daemon, NULL)) != LCPSIM_OK)
      break;
  if (code == LCPSIM_OK)
    ++w->n_log;
  else
    logged_free(entry);
  return code;
}

int lcpsim_pool_new(const char *const *endpoints, size_t n_endpoints, size_t n_worlds,
                    const lcpsim_pool_options_t *options, lcpsim_pool_t **out) {
  if (!endpoints || n_endpoints == 0 || !out)
    return LCPSIM_ERR_USAGE;
  *out = NULL;
  lcpsim_pool_options_t o = options ? *options : (lcpsim_pool_options_t){0};
  if ((o.copy_of != NULL) + (o.scene_path != NULL) + (o.scene_text != NULL) > 1)
    return LCPSIM_ERR_USAGE;
  lcpsim_pool_t *pool = calloc(1, sizeof *pool);
  if (!pool)
    return LCPSIM_ERR_NO_MEMORY;
  pool->snapshot_every = o.snapshot_every > 0 ? o.snapshot_every : 10;
  pool->timeout_ms = o.timeout_ms > 0 ? o.timeout_ms : 10000;
  pool->copy_of =
      !o.scene_path && !o.scene_text ? copy_text(o.copy_of ? o.copy_of : "default") : NULL;
  pool->scene_path = o.scene_path ? copy_text(o.scene_path) : NULL;
  pool->scene_text = o.scene_text ? copy_text(o.scene_text) : NULL;
  pool->daemons = calloc(n_endpoints, sizeof *pool->daemons);
  pool->failed = calloc(n_endpoints, sizeof *pool->failed);
  pool->worlds = calloc(n_worlds ? n_worlds : 1, sizeof *pool->worlds);
  pool->results = calloc(n_worlds ? n_worlds : 1, sizeof *pool->results);
  int code = pool->daemons && pool->failed && pool->worlds && pool->results &&
                     (pool->copy_of || pool->scene_path || pool->scene_text)
                 ? LCPSIM_OK
                 : LCPSIM_ERR_NO_MEMORY;
  pool->n_daemons = code == LCPSIM_OK ? n_endpoints : 0;
  pool->n_worlds = code == LCPSIM_OK ? n_worlds : 0;
  for (size_t d = 0; d < pool->n_daemons && code == LCPSIM_OK; ++d) {
    daemon_t *daemon = &pool->daemons[d];
    daemon->endpoint = copy_text(endpoints[d]);
    daemon->alive = true;
    code = daemon->endpoint ? lcpsim_client_connect(endpoints[d], pool->timeout_ms, &daemon->client)
                            : LCPSIM_ERR_NO_MEMORY;
    if (code != LCPSIM_OK)
      pool_fail(pool, code, "cannot connect to %s", endpoints[d]);
    else
      watch_connection(pool, d);
  }
  for (size_t i = 0; i < pool->n_worlds && code == LCPSIM_OK; ++i) {
    snprintf(pool->worlds[i].name, sizeof pool->worlds[i].name, "%.40s%zu",
             o.prefix ? o.prefix : "pool", i);
    code = create_on(pool, i, i % n_endpoints);
  }
  /* The first snapshots: a round of zero steps. */
  bool *todo = code == LCPSIM_OK ? calloc(pool->n_worlds ? pool->n_worlds : 1, sizeof *todo) : NULL;
  if (code == LCPSIM_OK && !todo)
    code = LCPSIM_ERR_NO_MEMORY;
  for (size_t i = 0; i < pool->n_worlds && code == LCPSIM_OK; ++i) {
    code = log_append(&pool->worlds[i], 0, NULL);
    todo[i] = true;
  }
  if (code == LCPSIM_OK)
    code = run_rounds(pool, todo, LCPSIM_BATCH_RETURN_SNAPSHOT);
  free(todo);
  release_replies(pool);
  if (code != LCPSIM_OK) {
    lcpsim_pool_destroy(&pool);
    return code;
  }
  *out = pool;
  return LCPSIM_OK;
}

void lcpsim_pool_destroy(lcpsim_pool_t **pool) {
  if (!pool || !*pool)
    return;
  lcpsim_pool_t *self = *pool;
  for (size_t i = 0; i < self->n_worlds; ++i) {
    world_t *w = &self->worlds[i];
    daemon_t *daemon = &self->daemons[w->daemon];
    if (daemon->alive && daemon->client &&
        lcpsim_client_destroy_world(daemon->client, w->name) == LCPSIM_ERR_TIMEOUT)
      daemon->alive = false; /* gone: nothing more to free there */
    for (size_t e = 0; e < w->n_log; ++e)
      logged_free(&w->log[e]);
    for (size_t e = 0; e < w->n_edits; ++e)
      edit_free(&w->edits[e]);
    free(w->log);
    free(w->edits);
    free(w->snapshot);
  }
  release_replies(self);
  for (size_t d = 0; d < self->n_daemons; ++d) {
    lcpsim_batch_reply_destroy(&self->daemons[d].reply);
    /* Before the client: its context waits for every socket of its own to close. */
    stop_watching(&self->daemons[d]);
    lcpsim_client_destroy(&self->daemons[d].client);
    free(self->daemons[d].endpoint);
    free(self->daemons[d].sent);
  }
  free(self->daemons);
  free(self->worlds);
  free(self->results);
  free(self->replies);
  free(self->moves);
  free((void *)self->failed);
  free(self->copy_of);
  free(self->scene_path);
  free(self->scene_text);
  free(self);
  *pool = NULL;
}

size_t lcpsim_pool_world_count(const lcpsim_pool_t *pool) { return pool ? pool->n_worlds : 0; }

const char *lcpsim_pool_world_name(const lcpsim_pool_t *pool, size_t world) {
  return pool && world < pool->n_worlds ? pool->worlds[world].name : NULL;
}

const char *lcpsim_pool_world_endpoint(const lcpsim_pool_t *pool, size_t world) {
  return pool && world < pool->n_worlds ? pool->daemons[pool->worlds[world].daemon].endpoint : NULL;
}

size_t lcpsim_pool_moves(const lcpsim_pool_t *pool, const lcpsim_pool_move_t **moves) {
  if (moves)
    *moves = pool ? pool->moves : NULL;
  return pool ? pool->n_moves : 0;
}

size_t lcpsim_pool_failed(const lcpsim_pool_t *pool, const char *const **endpoints) {
  if (endpoints)
    *endpoints = pool ? pool->failed : NULL;
  return pool ? pool->n_failed : 0;
}
