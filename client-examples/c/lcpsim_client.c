/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: see lcpsim_client.h. This file: the client itself (connect, destroy, timeout),
 * the call machinery every call goes through (send a request, wait for its reply until a
 * deadline, take or discard what comes) and the results' helpers. */
#include "lcpsim_client_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

const char *lcpsim_status_name(int code) {
  switch (code) {
  case LCPSIM_OK:
    return "OK";
  case LCPSIM_ERR_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case LCPSIM_ERR_NOT_FOUND:
    return "NOT_FOUND";
  case LCPSIM_ERR_FAILED_PRECONDITION:
    return "FAILED_PRECONDITION";
  case LCPSIM_ERR_RESOURCE_EXHAUSTED:
    return "RESOURCE_EXHAUSTED";
  case LCPSIM_ERR_INTERNAL:
    return "INTERNAL";
  case LCPSIM_ERR_PERMISSION_DENIED:
    return "PERMISSION_DENIED";
  case LCPSIM_ERR_USAGE:
    return "USAGE";
  case LCPSIM_ERR_NO_MEMORY:
    return "NO_MEMORY";
  case LCPSIM_ERR_TRANSPORT:
    return "TRANSPORT";
  case LCPSIM_ERR_TIMEOUT:
    return "TIMEOUT";
  case LCPSIM_ERR_PROTOCOL:
    return "PROTOCOL";
  default:
    return "UNKNOWN";
  }
}

int lcpc_fail(lcpsim_client_t *client, int code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(client->last_error, sizeof client->last_error, format, args);
  va_end(args);
  return code;
}

const char *lcpsim_client_last_error(const lcpsim_client_t *client) {
  return client ? client->last_error : "no client";
}

/* ---- results ---- */

void lcpc_message_destroy(void *message_ptr) {
  ProtobufCMessage **message = message_ptr;
  if (message && *message) {
    protobuf_c_message_free_unpacked(*message, NULL);
    *message = NULL;
  }
}

void lcpsim_info_destroy(lcpsim_info_t **info) { lcpc_message_destroy(info); }
void lcpsim_robot_info_destroy(lcpsim_robot_info_t **robot) { lcpc_message_destroy(robot); }
void lcpsim_settings_destroy(lcpsim_settings_t **settings) { lcpc_message_destroy(settings); }
void lcpsim_state_destroy(lcpsim_state_t **state) { lcpc_message_destroy(state); }

const lcpsim_robot_info_t *lcpsim_info_find_robot(const lcpsim_info_t *info, const char *name) {
  if (!info || !name)
    return NULL;
  for (size_t i = 0; i < info->n_robots; ++i)
    if (strcmp(info->robots[i]->name, name) == 0)
      return info->robots[i];
  return NULL;
}

const lcpsim_robot_state_t *lcpsim_state_find_robot(const lcpsim_state_t *state, const char *name) {
  if (!state || !name)
    return NULL;
  for (size_t i = 0; i < state->n_robots; ++i)
    if (strcmp(state->robots[i]->name, name) == 0)
      return state->robots[i];
  return NULL;
}

const lcpsim_imu_reading_t *lcpsim_state_find_imu(const lcpsim_state_t *state, const char *name) {
  if (!state || !name)
    return NULL;
  for (size_t i = 0; i < state->n_robots; ++i)
    for (size_t j = 0; j < state->robots[i]->n_imus; ++j)
      if (strcmp(state->robots[i]->imus[j]->name, name) == 0)
        return state->robots[i]->imus[j];
  return NULL;
}

/* ---- the client ---- */

int lcpsim_client_connect(const char *endpoint, int timeout_ms, lcpsim_client_t **client) {
  return lcpsim_client_connect_secure(endpoint, timeout_ms, NULL, client);
}

int lcpc_endpoint_is_ipv6(const char *endpoint) {
  return endpoint && strncmp(endpoint, "tcp://[", 7) == 0;
}

int lcpsim_client_connect_secure(const char *endpoint, int timeout_ms,
                                 const lcpsim_curve_keys_t *keys, lcpsim_client_t **client) {
  if (!endpoint || !client)
    return LCPSIM_ERR_USAGE;
  *client = NULL;
  lcpsim_client_t *self = calloc(1, sizeof *self);
  if (!self)
    return LCPSIM_ERR_NO_MEMORY;
  self->timeout_ms = timeout_ms;
  self->context = zmq_ctx_new();
  self->socket = self->context ? zmq_socket(self->context, ZMQ_DEALER) : NULL;
  if (!self->socket) {
    int code = lcpc_fail(self, LCPSIM_ERR_TRANSPORT, "zmq socket: %s", zmq_strerror(errno));
    lcpsim_client_destroy(&self);
    return code;
  }
  /* Pending requests must not keep destroy waiting for a daemon that is gone. */
  int linger = 0;
  /* Queue a request only on a live connection, so one sent while the daemon is down times out
   * here instead of being delivered, and applied, whenever the daemon comes back. */
  int immediate = 1;
  /* An IPv6 address (tcp://[::1]:5555, or one lcpsim_resolve_endpoints found for an AAAA
   * record) connects only with ZMQ_IPV6. Only for a bracketed host: with the option a host name
   * may resolve to its IPv6 address first (localhost to ::1) where the daemon listens on IPv4. */
  int ipv6 = lcpc_endpoint_is_ipv6(endpoint);
  zmq_setsockopt(self->socket, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(self->socket, ZMQ_IMMEDIATE, &immediate, sizeof immediate);
  zmq_setsockopt(self->socket, ZMQ_IPV6, &ipv6, sizeof ipv6);
  if (lcpc_set_curve(self->socket, keys) != 0 || zmq_connect(self->socket, endpoint) != 0) {
    /* Nothing to report the message through: the caller gets no client. */
    lcpsim_client_destroy(&self);
    return LCPSIM_ERR_TRANSPORT;
  }
  *client = self;
  return LCPSIM_OK;
}

void lcpsim_client_destroy(lcpsim_client_t **client) {
  if (!client || !*client)
    return;
  lcpsim_client_t *self = *client;
  if (self->socket)
    zmq_close(self->socket);
  if (self->context)
    zmq_ctx_term(self->context);
  free(self->stashed_step_reply);
  free(self);
  *client = NULL;
}

void lcpsim_client_set_timeout(lcpsim_client_t *client, int timeout_ms) {
  if (client)
    client->timeout_ms = timeout_ms;
}

int64_t lcpc_monotonic_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Milliseconds left before `deadline` for zmq_poll: -1 (forever) when there is no deadline. */
static long remaining_ms(int64_t deadline) {
  if (deadline < 0)
    return -1;
  int64_t left = deadline - lcpc_monotonic_ms();
  return left > 0 ? (long)left : 0;
}

/* Waits for `events` on the socket until the deadline: 1 ready, 0 timed out, -1 failed. */
int lcpc_wait_for(void *socket, short events, int64_t deadline) {
  for (;;) {
    zmq_pollitem_t item = {.socket = socket, .events = events};
    int ready = zmq_poll(&item, 1, remaining_ms(deadline));
    if (ready > 0)
      return 1;
    if (ready == 0)
      return 0;
    if (errno != EINTR)
      return -1;
  }
}

/* Receives one whole message; returns its last frame (the payload; a DEALER's message is the empty
 * delimiter and the payload) in `payload`, and how many frames it had. */
int lcpc_receive_message(void *socket, zmq_msg_t *payload, int *frames) {
  *frames = 0;
  for (;;) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, socket, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return -1;
    }
    ++*frames;
    bool more = zmq_msg_more(&frame);
    zmq_msg_close(payload);
    zmq_msg_init(payload);
    zmq_msg_move(payload, &frame);
    zmq_msg_close(&frame);
    if (!more)
      return 0;
  }
}

static const char *call_name(Lcpsim__V1__Request__CallCase call) {
  const ProtobufCFieldDescriptor *field =
      protobuf_c_message_descriptor_get_field(&lcpsim__v1__request__descriptor, (unsigned)call);
  return field ? field->name : "call";
}

int64_t lcpc_call_deadline(const lcpsim_client_t *client) {
  return client->timeout_ms < 0 ? -1 : lcpc_monotonic_ms() + client->timeout_ms;
}

/* The calls about worlds name their worlds in their own fields: Request.world stays empty. */
static bool names_its_worlds(Lcpsim__V1__Request__CallCase call) {
  return call == LCPSIM__V1__REQUEST__CALL_CREATE_WORLD ||
         call == LCPSIM__V1__REQUEST__CALL_DESTROY_WORLD ||
         call == LCPSIM__V1__REQUEST__CALL_LIST_WORLDS ||
         call == LCPSIM__V1__REQUEST__CALL_BATCH_STEP;
}

bool lcpc_is_default_world(const char *world) {
  return !world || world[0] == '\0' || strcmp(world, "default") == 0;
}

/* Sends `request` with a new id (set here) and the client's world, without waiting for the
 * reply. */
int lcpc_send_request(lcpsim_client_t *client, request_t *request, int64_t deadline) {
  client->last_error[0] = '\0';
  const char *name = call_name(request->call_case);
  request->id = ++client->last_id;
  if (!names_its_worlds(request->call_case))
    request->world = client->world;
  size_t size = lcpsim__v1__request__get_packed_size(request);
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes)
    return lcpc_fail(client, LCPSIM_ERR_NO_MEMORY, "%s: out of memory", name);
  lcpsim__v1__request__pack(request, bytes);
  int waited = lcpc_wait_for(client->socket, ZMQ_POLLOUT, deadline);
  int sent = -1;
  if (waited > 0 && zmq_send(client->socket, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0)
    sent = zmq_send(client->socket, bytes, size, ZMQ_DONTWAIT);
  free(bytes);
  if (waited == 0)
    return lcpc_fail(client, LCPSIM_ERR_TIMEOUT, "%s: no connection to the daemon within %d ms",
                     name, client->timeout_ms);
  if (sent < 0)
    return lcpc_fail(client, LCPSIM_ERR_TRANSPORT, "%s: send: %s", name, zmq_strerror(errno));
  return LCPSIM_OK;
}

/* Checks a decoded reply to request `id` of call `call_case`: OK keeps it in `*reply`; an error
 * status or another call's result frees it and returns the code. */
int lcpc_accept_reply(lcpsim_client_t *client, reply_t *received, int call_case, const char *name,
                      ProtobufCAllocator *allocator, reply_t **reply) {
  if (received->status && received->status->code != LCPSIM__V1__STATUS__CODE__OK) {
    int code = -(int)received->status->code;
    lcpc_fail(client, code, "%s", received->status->message);
    lcpsim__v1__reply__free_unpacked(received, allocator);
    /* A code this client does not know still reads as a server error, never as OK. */
    return code < 0 ? code : LCPSIM_ERR_PROTOCOL;
  }
  if ((int)received->result_case != call_case) {
    int result = (int)received->result_case;
    lcpsim__v1__reply__free_unpacked(received, allocator);
    return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "%s: the reply answers another call (result %d)",
                     name, result);
  }
  *reply = received;
  return LCPSIM_OK;
}

/* Waits for the reply to request `id` (of call `call_case`), decoded with `allocator`. The reply
 * of a pending started Step that comes meanwhile is kept for lcpsim_client_step_finish; replies to
 * earlier, timed-out requests are discarded. */
int lcpc_receive_reply(lcpsim_client_t *client, uint64_t id, int call_case,
                       ProtobufCAllocator *allocator, int64_t deadline, reply_t **reply) {
  *reply = NULL;
  const char *name = call_name((Lcpsim__V1__Request__CallCase)call_case);
  int waited = 0;
  for (;;) {
    waited = lcpc_wait_for(client->socket, ZMQ_POLLIN, deadline);
    if (waited == 0)
      return lcpc_fail(client, LCPSIM_ERR_TIMEOUT, "%s: no reply within %d ms", name,
                       client->timeout_ms);
    if (waited < 0)
      return lcpc_fail(client, LCPSIM_ERR_TRANSPORT, "%s: poll: %s", name, zmq_strerror(errno));
    zmq_msg_t payload;
    zmq_msg_init(&payload);
    int frames = 0;
    if (lcpc_receive_message(client->socket, &payload, &frames) != 0) {
      zmq_msg_close(&payload);
      if (errno == EAGAIN)
        continue;
      return lcpc_fail(client, LCPSIM_ERR_TRANSPORT, "%s: receive: %s", name, zmq_strerror(errno));
    }
    reply_t *received = frames == 2 ? lcpsim__v1__reply__unpack(allocator, zmq_msg_size(&payload),
                                                                zmq_msg_data(&payload))
                                    : NULL;
    if (received && received->id != id && received->id == client->pending_step_id &&
        !client->stashed_step_reply) {
      /* Kept as bytes: `allocator` may be an arena that the next call resets. */
      size_t size = zmq_msg_size(&payload);
      client->stashed_step_reply = malloc(size ? size : 1);
      if (client->stashed_step_reply) {
        memcpy(client->stashed_step_reply, zmq_msg_data(&payload), size);
        client->stashed_step_reply_size = size;
      }
    }
    zmq_msg_close(&payload);
    if (!received)
      return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "%s: undecodable reply (%d frames)", name,
                       frames);
    /* Id 0 answers a request the daemon could not decode; with one request outstanding at a
     * time, that is this one. Any other id is the late reply to a request that timed out. */
    bool undecoded = received->id == 0 && received->status &&
                     received->status->code != LCPSIM__V1__STATUS__CODE__OK;
    if (received->id != id && !undecoded) {
      lcpsim__v1__reply__free_unpacked(received, allocator);
      continue;
    }
    return lcpc_accept_reply(client, received, call_case, name, allocator, reply);
  }
}

/* Sends `request` (its id set here) and waits for its reply: OK with the reply, which answers the
 * same call, in `*reply` (the caller frees it with the same allocator), or a negative code with
 * last_error set. Replies are decoded with `allocator` (NULL: malloc). */
int lcpc_call_with(lcpsim_client_t *client, request_t *request, ProtobufCAllocator *allocator,
                   reply_t **reply) {
  *reply = NULL;
  int64_t deadline = lcpc_call_deadline(client);
  int code = lcpc_send_request(client, request, deadline);
  if (code != LCPSIM_OK)
    return code;
  return lcpc_receive_reply(client, request->id, (int)request->call_case, allocator, deadline,
                            reply);
}

int lcpc_call(lcpsim_client_t *client, request_t *request, reply_t **reply) {
  return lcpc_call_with(client, request, NULL, reply);
}

int lcpc_missing(lcpsim_client_t *client, reply_t *reply, const char *what) {
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no %s", what);
}

/* Sends a request whose reply carries nothing the caller needs. */
int lcpc_call_for_status(lcpsim_client_t *client, request_t *request) {
  reply_t *reply = NULL;
  int code = lcpc_call(client, request, &reply);
  if (code == LCPSIM_OK)
    lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

int lcpsim_client_ping(lcpsim_client_t *client, char *server_version, size_t version_size) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  /* A payload that differs per call, so the echo shows the daemon read this very request. */
  char payload[32];
  int length =
      snprintf(payload, sizeof payload, "ping %llu", (unsigned long long)(client->last_id + 1));
  Lcpsim__V1__PingRequest ping = LCPSIM__V1__PING_REQUEST__INIT;
  ping.payload.data = (uint8_t *)payload;
  ping.payload.len = (size_t)length;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_PING;
  request.ping = &ping;
  reply_t *reply = NULL;
  int code = lcpc_call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  const Lcpsim__V1__PingReply *pong = reply->ping;
  if (!pong || pong->payload.len != (size_t)length ||
      memcmp(pong->payload.data, payload, (size_t)length) != 0) {
    lcpsim__v1__reply__free_unpacked(reply, NULL);
    return lcpc_fail(client, LCPSIM_ERR_PROTOCOL, "ping: the payload did not come back");
  }
  if (server_version && version_size > 0)
    snprintf(server_version, version_size, "%s", pong->server_version);
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

void *lcpsim_client_zmq_socket(lcpsim_client_t *client) { return client ? client->socket : NULL; }

void *lcpc_client_zmq_context(lcpsim_client_t *client) { return client ? client->context : NULL; }
