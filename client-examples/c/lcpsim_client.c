/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: see lcpsim_client.h. */
#include "lcpsim_client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

typedef Lcpsim__V1__Request request_t;
typedef Lcpsim__V1__Reply reply_t;

struct lcpsim_client {
  void *context;
  void *socket;
  int timeout_ms;
  uint64_t last_id;
  /* A Step sent by lcpsim_client_step_start whose reply has not been taken yet (0: none), and its
   * reply's bytes when another call received it first. */
  uint64_t pending_step_id;
  bool pending_step_state;
  uint8_t *stashed_step_reply;
  size_t stashed_step_reply_size;
  /* Request.world of every call but those about worlds ("": the default world). */
  char world[64];
  char last_error[512];
};

struct lcpsim_subscriber {
  void *context;
  void *socket;
  /* The world's topic: "state", or "w/NAME/state". */
  char topic[80];
  size_t topic_length;
};

/* The topic prefix of every frame on the daemon's PUB socket. */
static const char STATE_TOPIC[] = "state";

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

static int fail(lcpsim_client_t *client, int code, const char *format, ...) {
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

static void message_destroy(void *message_ptr) {
  ProtobufCMessage **message = message_ptr;
  if (message && *message) {
    protobuf_c_message_free_unpacked(*message, NULL);
    *message = NULL;
  }
}

void lcpsim_info_destroy(lcpsim_info_t **info) { message_destroy(info); }
void lcpsim_robot_info_destroy(lcpsim_robot_info_t **robot) { message_destroy(robot); }
void lcpsim_settings_destroy(lcpsim_settings_t **settings) { message_destroy(settings); }
void lcpsim_state_destroy(lcpsim_state_t **state) { message_destroy(state); }

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

/* ---- the client ---- */

int lcpsim_client_connect(const char *endpoint, int timeout_ms, lcpsim_client_t **client) {
  return lcpsim_client_connect_secure(endpoint, timeout_ms, NULL, client);
}

/* ---- CURVE keys ---- */

static int key_file_error(char *why, size_t why_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int key_file_error(char *why, size_t why_size, const char *format, ...) {
  if (why && why_size) {
    va_list args;
    va_start(args, format);
    vsnprintf(why, why_size, format, args);
    va_end(args);
  }
  return LCPSIM_ERR_INVALID_ARGUMENT;
}

static char *trim_space(char *text) {
  while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
    ++text;
  size_t length = strlen(text);
  while (length > 0 && strchr(" \t\r\n", text[length - 1]))
    text[--length] = '\0';
  return text;
}

int lcpsim_read_key_file(const char *path, char public_key[LCPSIM_KEY_SIZE],
                         char secret_key[LCPSIM_KEY_SIZE], char *why, size_t why_size) {
  if (!path)
    return LCPSIM_ERR_USAGE;
  char found_public[LCPSIM_KEY_SIZE] = "", found_secret[LCPSIM_KEY_SIZE] = "";
  FILE *file = fopen(path, "r");
  if (!file)
    return key_file_error(why, why_size, "%s: %s", path, strerror(errno));
  char buffer[1024];
  int number = 0, code = LCPSIM_OK;
  while (code == LCPSIM_OK && fgets(buffer, sizeof buffer, file)) {
    ++number;
    char *line = trim_space(buffer);
    if (line[0] == '\0' || line[0] == '#')
      continue;
    char *equals = strchr(line, '=');
    if (!equals) {
      code = key_file_error(why, why_size, "%s:%d: expected `name = \"value\"`", path, number);
      break;
    }
    *equals = '\0';
    char *name = trim_space(line), *value = trim_space(equals + 1);
    size_t length = strlen(value);
    if (length >= 2 && value[0] == '"' && value[length - 1] == '"') {
      value[length - 1] = '\0';
      ++value;
    }
    uint8_t decoded[32];
    bool is_public = strcmp(name, "public-key") == 0, is_secret = strcmp(name, "secret-key") == 0;
    if (strcmp(name, "role") == 0)
      continue;
    if (!is_public && !is_secret)
      code = key_file_error(why, why_size, "%s:%d: unknown name (public-key, secret-key, role)",
                            path, number);
    else if (strlen(value) != 40 || !zmq_z85_decode(decoded, value))
      code = key_file_error(why, why_size, "%s:%d: %s must be 40 characters of Z85", path, number,
                            name);
    else
      memcpy(is_public ? found_public : found_secret, value, LCPSIM_KEY_SIZE);
  }
  fclose(file);
  if (code != LCPSIM_OK)
    return code;
  if (!found_public[0] && found_secret[0] && zmq_curve_public(found_public, found_secret) != 0)
    return key_file_error(why, why_size, "%s: cannot derive the public key", path);
  if (public_key)
    memcpy(public_key, found_public, LCPSIM_KEY_SIZE);
  if (secret_key)
    memcpy(secret_key, found_secret, LCPSIM_KEY_SIZE);
  return LCPSIM_OK;
}

int lcpsim_curve_keys_load(const char *server_key_file, const char *client_key_file,
                           lcpsim_curve_keys_t *keys, char *why, size_t why_size) {
  if (!server_key_file || !client_key_file || !keys)
    return LCPSIM_ERR_USAGE;
  memset(keys, 0, sizeof *keys);
  int code = lcpsim_read_key_file(server_key_file, keys->server_public_key, NULL, why, why_size);
  if (code == LCPSIM_OK)
    code = lcpsim_read_key_file(client_key_file, keys->public_key, keys->secret_key, why, why_size);
  if (code == LCPSIM_OK && !keys->server_public_key[0])
    code = key_file_error(why, why_size, "%s: no public-key", server_key_file);
  if (code == LCPSIM_OK && !keys->secret_key[0])
    code = key_file_error(why, why_size, "%s: no secret-key (give the NAME.key file)",
                          client_key_file);
  return code;
}

/* Makes socket a CURVE client with keys (NULL: leaves it plain). */
static int set_curve(void *socket, const lcpsim_curve_keys_t *keys) {
  if (!keys)
    return 0;
  if (zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, keys->server_public_key, 40) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, keys->public_key, 40) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, keys->secret_key, 40) != 0)
    return -1;
  return 0;
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
    int code = fail(self, LCPSIM_ERR_TRANSPORT, "zmq socket: %s", zmq_strerror(errno));
    lcpsim_client_destroy(&self);
    return code;
  }
  /* Pending requests must not keep destroy waiting for a daemon that is gone. */
  int linger = 0;
  /* Queue a request only on a live connection, so one sent while the daemon is down times out
   * here instead of being delivered, and applied, whenever the daemon comes back. */
  int immediate = 1;
  zmq_setsockopt(self->socket, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(self->socket, ZMQ_IMMEDIATE, &immediate, sizeof immediate);
  if (set_curve(self->socket, keys) != 0 || zmq_connect(self->socket, endpoint) != 0) {
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

static int64_t monotonic_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Milliseconds left before `deadline` for zmq_poll: -1 (forever) when there is no deadline. */
static long remaining_ms(int64_t deadline) {
  if (deadline < 0)
    return -1;
  int64_t left = deadline - monotonic_ms();
  return left > 0 ? (long)left : 0;
}

/* Waits for `events` on the socket until the deadline: 1 ready, 0 timed out, -1 failed. */
static int wait_for(void *socket, short events, int64_t deadline) {
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
static int receive_message(void *socket, zmq_msg_t *payload, int *frames) {
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

static int64_t call_deadline(const lcpsim_client_t *client) {
  return client->timeout_ms < 0 ? -1 : monotonic_ms() + client->timeout_ms;
}

/* The calls about worlds name their worlds in their own fields: Request.world stays empty. */
static bool names_its_worlds(Lcpsim__V1__Request__CallCase call) {
  return call == LCPSIM__V1__REQUEST__CALL_CREATE_WORLD ||
         call == LCPSIM__V1__REQUEST__CALL_DESTROY_WORLD ||
         call == LCPSIM__V1__REQUEST__CALL_LIST_WORLDS ||
         call == LCPSIM__V1__REQUEST__CALL_BATCH_STEP;
}

/* Sends `request` with a new id (set here) and the client's world, without waiting for the
 * reply. */
static int send_request(lcpsim_client_t *client, request_t *request, int64_t deadline) {
  client->last_error[0] = '\0';
  const char *name = call_name(request->call_case);
  request->id = ++client->last_id;
  if (!names_its_worlds(request->call_case))
    request->world = client->world;
  size_t size = lcpsim__v1__request__get_packed_size(request);
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes)
    return fail(client, LCPSIM_ERR_NO_MEMORY, "%s: out of memory", name);
  lcpsim__v1__request__pack(request, bytes);
  int waited = wait_for(client->socket, ZMQ_POLLOUT, deadline);
  int sent = -1;
  if (waited > 0 && zmq_send(client->socket, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0)
    sent = zmq_send(client->socket, bytes, size, ZMQ_DONTWAIT);
  free(bytes);
  if (waited == 0)
    return fail(client, LCPSIM_ERR_TIMEOUT, "%s: no connection to the daemon within %d ms", name,
                client->timeout_ms);
  if (sent < 0)
    return fail(client, LCPSIM_ERR_TRANSPORT, "%s: send: %s", name, zmq_strerror(errno));
  return LCPSIM_OK;
}

/* Checks a decoded reply to request `id` of call `call_case`: OK keeps it in `*reply`; an error
 * status or another call's result frees it and returns the code. */
static int accept_reply(lcpsim_client_t *client, reply_t *received, int call_case, const char *name,
                        ProtobufCAllocator *allocator, reply_t **reply) {
  if (received->status && received->status->code != LCPSIM__V1__STATUS__CODE__OK) {
    int code = -(int)received->status->code;
    fail(client, code, "%s", received->status->message);
    lcpsim__v1__reply__free_unpacked(received, allocator);
    /* A code this client does not know still reads as a server error, never as OK. */
    return code < 0 ? code : LCPSIM_ERR_PROTOCOL;
  }
  if ((int)received->result_case != call_case) {
    int result = (int)received->result_case;
    lcpsim__v1__reply__free_unpacked(received, allocator);
    return fail(client, LCPSIM_ERR_PROTOCOL, "%s: the reply answers another call (result %d)", name,
                result);
  }
  *reply = received;
  return LCPSIM_OK;
}

/* Waits for the reply to request `id` (of call `call_case`), decoded with `allocator`. The reply
 * of a pending started Step that comes meanwhile is kept for lcpsim_client_step_finish; replies to
 * earlier, timed-out requests are discarded. */
static int receive_reply(lcpsim_client_t *client, uint64_t id, int call_case,
                         ProtobufCAllocator *allocator, int64_t deadline, reply_t **reply) {
  *reply = NULL;
  const char *name = call_name((Lcpsim__V1__Request__CallCase)call_case);
  int waited = 0;
  for (;;) {
    waited = wait_for(client->socket, ZMQ_POLLIN, deadline);
    if (waited == 0)
      return fail(client, LCPSIM_ERR_TIMEOUT, "%s: no reply within %d ms", name,
                  client->timeout_ms);
    if (waited < 0)
      return fail(client, LCPSIM_ERR_TRANSPORT, "%s: poll: %s", name, zmq_strerror(errno));
    zmq_msg_t payload;
    zmq_msg_init(&payload);
    int frames = 0;
    if (receive_message(client->socket, &payload, &frames) != 0) {
      zmq_msg_close(&payload);
      if (errno == EAGAIN)
        continue;
      return fail(client, LCPSIM_ERR_TRANSPORT, "%s: receive: %s", name, zmq_strerror(errno));
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
      return fail(client, LCPSIM_ERR_PROTOCOL, "%s: undecodable reply (%d frames)", name, frames);
    /* Id 0 answers a request the daemon could not decode; with one request outstanding at a
     * time, that is this one. Any other id is the late reply to a request that timed out. */
    bool undecoded = received->id == 0 && received->status &&
                     received->status->code != LCPSIM__V1__STATUS__CODE__OK;
    if (received->id != id && !undecoded) {
      lcpsim__v1__reply__free_unpacked(received, allocator);
      continue;
    }
    return accept_reply(client, received, call_case, name, allocator, reply);
  }
}

/* Sends `request` (its id set here) and waits for its reply: OK with the reply, which answers the
 * same call, in `*reply` (the caller frees it with the same allocator), or a negative code with
 * last_error set. Replies are decoded with `allocator` (NULL: malloc). */
static int call_with(lcpsim_client_t *client, request_t *request, ProtobufCAllocator *allocator,
                     reply_t **reply) {
  *reply = NULL;
  int64_t deadline = call_deadline(client);
  int code = send_request(client, request, deadline);
  if (code != LCPSIM_OK)
    return code;
  return receive_reply(client, request->id, (int)request->call_case, allocator, deadline, reply);
}

static int call(lcpsim_client_t *client, request_t *request, reply_t **reply) {
  return call_with(client, request, NULL, reply);
}

static int missing(lcpsim_client_t *client, reply_t *reply, const char *what) {
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no %s", what);
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
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  const Lcpsim__V1__PingReply *pong = reply->ping;
  if (!pong || pong->payload.len != (size_t)length ||
      memcmp(pong->payload.data, payload, (size_t)length) != 0) {
    lcpsim__v1__reply__free_unpacked(reply, NULL);
    return fail(client, LCPSIM_ERR_PROTOCOL, "ping: the payload did not come back");
  }
  if (server_version && version_size > 0)
    snprintf(server_version, version_size, "%s", pong->server_version);
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_get_info(lcpsim_client_t *client, lcpsim_info_t **info) {
  if (!client || !info)
    return LCPSIM_ERR_USAGE;
  *info = NULL;
  Lcpsim__V1__GetInfoRequest get_info = LCPSIM__V1__GET_INFO_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_GET_INFO;
  request.get_info = &get_info;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->get_info)
    return missing(client, reply, "info");
  /* Every sub-message of an unpacked message is its own allocation: hand this one over. */
  *info = reply->get_info;
  reply->get_info = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

void lcpsim_scene_destroy(lcpsim_scene_t **scene) { message_destroy(scene); }

int lcpsim_client_get_scene(lcpsim_client_t *client, lcpsim_scene_t **scene) {
  if (!client || !scene)
    return LCPSIM_ERR_USAGE;
  *scene = NULL;
  Lcpsim__V1__GetSceneRequest get_scene = LCPSIM__V1__GET_SCENE_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_GET_SCENE;
  request.get_scene = &get_scene;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->get_scene || !reply->get_scene->scene)
    return missing(client, reply, "scene");
  *scene = reply->get_scene;
  reply->get_scene = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

static int record_call(lcpsim_client_t *client, Lcpsim__V1__RecordRequest *record,
                       lcpsim_record_result_t *result) {
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_RECORD;
  request.record = record;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->record)
    return missing(client, reply, "record");
  if (result) {
    *result = (lcpsim_record_result_t){.states_written = reply->record->states_written,
                                       .bytes_written = reply->record->bytes_written,
                                       .recording = reply->record->recording};
    snprintf(result->path, sizeof result->path, "%s", reply->record->path);
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_record_start(lcpsim_client_t *client, const char *path, uint32_t every_steps,
                               bool include_contacts, lcpsim_record_result_t *result) {
  if (!client || !path)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RecordRequest record = LCPSIM__V1__RECORD_REQUEST__INIT;
  record.path = (char *)path;
  record.every_steps = every_steps;
  record.include_contacts = include_contacts;
  return record_call(client, &record, result);
}

int lcpsim_client_record_stop(lcpsim_client_t *client, lcpsim_record_result_t *result) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RecordRequest record = LCPSIM__V1__RECORD_REQUEST__INIT;
  record.stop = true;
  return record_call(client, &record, result);
}

/* The protobuf-c form of a target; it points into `target`, which must outlive it. */
static Lcpsim__V1__SetTargetRequest target_message(const lcpsim_target_t *target) {
  Lcpsim__V1__SetTargetRequest message = LCPSIM__V1__SET_TARGET_REQUEST__INIT;
  /* protobuf-c only reads these arrays when packing; the casts drop const for its field types. */
  message.robot = (char *)(target->robot ? target->robot : "");
  message.n_joints = target->n_joints;
  message.joints = (char **)target->joints;
  message.n_indices = target->n_indices;
  message.indices = (int32_t *)target->indices;
  message.mode = (Lcpsim__V1__SetTargetRequest__Mode)target->mode;
  message.n_position = target->n_position;
  message.position = (double *)target->position;
  message.n_velocity = target->n_velocity;
  message.velocity = (double *)target->velocity;
  message.n_kp = target->n_kp;
  message.kp = (double *)target->kp;
  message.n_kd = target->n_kd;
  message.kd = (double *)target->kd;
  message.n_effort_limit = target->n_effort_limit;
  message.effort_limit = (double *)target->effort_limit;
  message.n_torque = target->n_torque;
  message.torque = (double *)target->torque;
  if (target->gravity_compensation != LCPSIM_GRAVITY_COMPENSATION_KEEP) {
    message.gravity_compensation_value_case =
        LCPSIM__V1__SET_TARGET_REQUEST__GRAVITY_COMPENSATION_VALUE_GRAVITY_COMPENSATION;
    message.gravity_compensation =
        target->gravity_compensation == LCPSIM_GRAVITY_COMPENSATION_ON ? 1 : 0;
  }
  return message;
}

static bool target_is_valid(const lcpsim_target_t *target) {
  return (target->joints || target->n_joints == 0) && (target->indices || target->n_indices == 0) &&
         (target->position || target->n_position == 0) &&
         (target->velocity || target->n_velocity == 0) && (target->kp || target->n_kp == 0) &&
         (target->kd || target->n_kd == 0) &&
         (target->effort_limit || target->n_effort_limit == 0) &&
         (target->torque || target->n_torque == 0);
}

/* The protocol's Sensors message for a set of LCPSIM_SENSOR_* flags. */
static Lcpsim__V1__Sensors sensors_message(unsigned sensors) {
  Lcpsim__V1__Sensors message = LCPSIM__V1__SENSORS__INIT;
  message.link_twists = (sensors & LCPSIM_SENSOR_LINK_TWISTS) != 0;
  message.link_accelerations = (sensors & LCPSIM_SENSOR_LINK_ACCELERATIONS) != 0;
  message.imus = (sensors & LCPSIM_SENSOR_IMUS) != 0;
  message.joint_wrenches = (sensors & LCPSIM_SENSOR_JOINT_WRENCHES) != 0;
  message.contact_wrenches = (sensors & LCPSIM_SENSOR_CONTACT_WRENCHES) != 0;
  message.energy = (sensors & LCPSIM_SENSOR_ENERGY) != 0;
  message.solver_stats = (sensors & LCPSIM_SENSOR_SOLVER_STATS) != 0;
  return message;
}

/* Takes a Step's reply: with want_state, `*state` points into `*reply` (decoded with
 * `allocator`), which the caller frees once done with both. */
static int take_step_reply(lcpsim_client_t *client, bool want_state, ProtobufCAllocator *allocator,
                           reply_t **reply, lcpsim_state_t **state) {
  if (want_state) {
    if (!(*reply)->step || !(*reply)->step->state) {
      lcpsim__v1__reply__free_unpacked(*reply, allocator);
      *reply = NULL;
      return fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no state");
    }
    *state = (*reply)->step->state;
  }
  return LCPSIM_OK;
}

/* A Step; with want_state, `*state` points into `*reply` (decoded with `allocator`), which the
 * caller frees once done with both. With `started` not NULL the Step is only sent: `*started`
 * gets its id and no reply is awaited. */
static int step_call(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                     size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                     bool want_state, ProtobufCAllocator *allocator, reply_t **reply,
                     lcpsim_state_t **state, uint64_t *started) {
  *reply = NULL;
  *state = NULL;
  for (size_t i = 0; i < n_targets; ++i)
    if (!target_is_valid(&targets[i]))
      return fail(client, LCPSIM_ERR_USAGE, "step: target %zu has an array of NULL", i);
  Lcpsim__V1__SetTargetRequest *messages = calloc(n_targets ? n_targets : 1, sizeof *messages);
  Lcpsim__V1__SetTargetRequest **pointers = calloc(n_targets ? n_targets : 1, sizeof *pointers);
  if (!messages || !pointers) {
    free(messages);
    free(pointers);
    return fail(client, LCPSIM_ERR_NO_MEMORY, "step: out of memory");
  }
  for (size_t i = 0; i < n_targets; ++i) {
    messages[i] = target_message(&targets[i]);
    pointers[i] = &messages[i];
  }
  Lcpsim__V1__Sensors sensors_wanted = sensors_message(sensors);
  Lcpsim__V1__StepRequest step = LCPSIM__V1__STEP_REQUEST__INIT;
  step.steps = steps;
  step.n_targets = n_targets;
  step.targets = pointers;
  step.return_state = want_state;
  step.include_contacts = want_state && contacts == LCPSIM_WITH_CONTACTS;
  /* Unset when none is wanted, so a plain control tick sends what it sent before. */
  step.sensors = want_state && sensors ? &sensors_wanted : NULL;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  request.step = &step;
  int code = started ? send_request(client, &request, call_deadline(client))
                     : call_with(client, &request, allocator, reply);
  free(messages);
  free(pointers);
  if (code != LCPSIM_OK || started) {
    if (started && code == LCPSIM_OK)
      *started = request.id;
    return code;
  }
  return take_step_reply(client, want_state, allocator, reply, state);
}

int lcpsim_client_step(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                       size_t n_targets, lcpsim_contacts_t contacts, lcpsim_state_t **state) {
  return lcpsim_client_step_sensors(client, steps, targets, n_targets, contacts, 0, state);
}

int lcpsim_client_step_sensors(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                               size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                               lcpsim_state_t **state) {
  if (!client || (n_targets > 0 && !targets))
    return LCPSIM_ERR_USAGE;
  if (state)
    *state = NULL;
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = step_call(client, steps, targets, n_targets, contacts, sensors, state != NULL, NULL,
                       &reply, &decoded, NULL);
  if (code != LCPSIM_OK)
    return code;
  if (state) {
    /* Every sub-message of an unpacked message is its own allocation: hand this one over. */
    *state = decoded;
    reply->step->state = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

/* Sends a request whose reply carries nothing the caller needs. */
static int call_for_status(lcpsim_client_t *client, request_t *request) {
  reply_t *reply = NULL;
  int code = call(client, request, &reply);
  if (code == LCPSIM_OK)
    lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

int lcpsim_client_set_target(lcpsim_client_t *client, const lcpsim_target_t *target) {
  if (!client || !target)
    return LCPSIM_ERR_USAGE;
  if (!target_is_valid(target))
    return fail(client, LCPSIM_ERR_USAGE, "set_target: an array is NULL");
  Lcpsim__V1__SetTargetRequest set_target = target_message(target);
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_TARGET;
  request.set_target = &set_target;
  return call_for_status(client, &request);
}

static int get_state_call(lcpsim_client_t *client, lcpsim_contacts_t contacts, unsigned sensors,
                          ProtobufCAllocator *allocator, reply_t **reply, lcpsim_state_t **state) {
  *reply = NULL;
  *state = NULL;
  Lcpsim__V1__Sensors sensors_wanted = sensors_message(sensors);
  Lcpsim__V1__GetStateRequest get_state = LCPSIM__V1__GET_STATE_REQUEST__INIT;
  get_state.include_contacts = contacts == LCPSIM_WITH_CONTACTS;
  get_state.sensors = sensors ? &sensors_wanted : NULL;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_GET_STATE;
  request.get_state = &get_state;
  int code = call_with(client, &request, allocator, reply);
  if (code != LCPSIM_OK)
    return code;
  if (!(*reply)->get_state || !(*reply)->get_state->state) {
    lcpsim__v1__reply__free_unpacked(*reply, allocator);
    *reply = NULL;
    return fail(client, LCPSIM_ERR_PROTOCOL, "the reply has no state");
  }
  *state = (*reply)->get_state->state;
  return LCPSIM_OK;
}

int lcpsim_client_get_state(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                            lcpsim_state_t **state) {
  return lcpsim_client_get_state_sensors(client, contacts, 0, state);
}

int lcpsim_client_get_state_sensors(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                                    unsigned sensors, lcpsim_state_t **state) {
  if (!client || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = get_state_call(client, contacts, sensors, NULL, &reply, &decoded);
  if (code != LCPSIM_OK)
    return code;
  *state = decoded;
  reply->get_state->state = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

/* ---- a state buffer reused across ticks ---- */

/* An arena: protobuf-c allocates the decoded reply from its blocks and frees nothing; a reset
 * makes the whole arena free again. After a reset that found more than one block, the blocks are
 * merged into one of their total size, so a steady loop decodes its states with no malloc. */
typedef struct arena_block {
  struct arena_block *next;
  size_t capacity;
  size_t used;
  max_align_t data[]; /* aligned for any decoded field */
} arena_block_t;

struct lcpsim_state_buffer {
  ProtobufCAllocator allocator;
  arena_block_t *blocks; /* the block allocated from first; older ones follow */
  size_t total_capacity;
};

enum { ARENA_FIRST_BLOCK = 16384 };

static arena_block_t *arena_block_new(size_t capacity) {
  arena_block_t *block = malloc(sizeof *block + capacity);
  if (block)
    *block = (arena_block_t){.capacity = capacity};
  return block;
}

static void *arena_alloc(void *data, size_t size) {
  lcpsim_state_buffer_t *buffer = data;
  const size_t alignment = sizeof(max_align_t);
  size = (size + alignment - 1) / alignment * alignment;
  arena_block_t *block = buffer->blocks;
  if (!block || block->capacity - block->used < size) {
    size_t capacity = buffer->total_capacity > size ? buffer->total_capacity : size;
    arena_block_t *grown = arena_block_new(capacity);
    if (!grown)
      return NULL;
    grown->next = block;
    buffer->blocks = block = grown;
    buffer->total_capacity += capacity;
  }
  void *memory = (char *)block->data + block->used;
  block->used += size;
  return memory;
}

/* Memory goes back at the next reset. */
static void arena_free(void *data, void *pointer) {
  (void)data;
  (void)pointer;
}

static void arena_release(lcpsim_state_buffer_t *buffer) {
  for (arena_block_t *block = buffer->blocks; block;) {
    arena_block_t *next = block->next;
    free(block);
    block = next;
  }
  buffer->blocks = NULL;
  buffer->total_capacity = 0;
}

static void arena_reset(lcpsim_state_buffer_t *buffer) {
  if (buffer->blocks && buffer->blocks->next) {
    size_t total = buffer->total_capacity;
    arena_release(buffer);
    buffer->blocks = arena_block_new(total); /* on failure the next allocation tries again */
    buffer->total_capacity = buffer->blocks ? total : 0;
  }
  if (buffer->blocks)
    buffer->blocks->used = 0;
}

int lcpsim_state_buffer_new(lcpsim_state_buffer_t **buffer) {
  if (!buffer)
    return LCPSIM_ERR_USAGE;
  *buffer = calloc(1, sizeof **buffer);
  if (!*buffer)
    return LCPSIM_ERR_NO_MEMORY;
  (*buffer)->allocator = (ProtobufCAllocator){arena_alloc, arena_free, *buffer};
  (*buffer)->blocks = arena_block_new(ARENA_FIRST_BLOCK);
  (*buffer)->total_capacity = (*buffer)->blocks ? ARENA_FIRST_BLOCK : 0;
  return LCPSIM_OK;
}

void lcpsim_state_buffer_destroy(lcpsim_state_buffer_t **buffer) {
  if (!buffer || !*buffer)
    return;
  arena_release(*buffer);
  free(*buffer);
  *buffer = NULL;
}

size_t lcpsim_state_buffer_capacity(const lcpsim_state_buffer_t *buffer) {
  return buffer ? buffer->total_capacity : 0;
}

int lcpsim_client_step_into(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                            size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                            lcpsim_state_buffer_t *buffer, const lcpsim_state_t **state) {
  if (!client || (n_targets > 0 && !targets) || !buffer || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  arena_reset(buffer);
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = step_call(client, steps, targets, n_targets, contacts, sensors, true,
                       &buffer->allocator, &reply, &decoded, NULL);
  *state = decoded;
  return code;
}

int lcpsim_client_get_state_into(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                                 unsigned sensors, lcpsim_state_buffer_t *buffer,
                                 const lcpsim_state_t **state) {
  if (!client || !buffer || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  arena_reset(buffer);
  reply_t *reply = NULL;
  lcpsim_state_t *decoded = NULL;
  int code = get_state_call(client, contacts, sensors, &buffer->allocator, &reply, &decoded);
  *state = decoded;
  return code;
}

/* The message parts of a pose; they live in the caller's frame. */
typedef struct {
  Lcpsim__V1__Pose pose;
  Lcpsim__V1__Vec3 position;
  Lcpsim__V1__Quat orientation;
} pose_message_t;

static void pose_message(const lcpsim_pose_t *pose, pose_message_t *out) {
  *out = (pose_message_t){.pose = LCPSIM__V1__POSE__INIT,
                          .position = LCPSIM__V1__VEC3__INIT,
                          .orientation = LCPSIM__V1__QUAT__INIT};
  out->position.x = pose->position[0];
  out->position.y = pose->position[1];
  out->position.z = pose->position[2];
  out->pose.position = &out->position;
  const double *q = pose->orientation;
  if (q[0] != 0.0 || q[1] != 0.0 || q[2] != 0.0 || q[3] != 0.0) {
    out->orientation.w = q[0];
    out->orientation.x = q[1];
    out->orientation.y = q[2];
    out->orientation.z = q[3];
    out->pose.orientation = &out->orientation;
  }
}

int lcpsim_client_load_model(lcpsim_client_t *client, const lcpsim_model_t *model,
                             lcpsim_robot_info_t **robot) {
  if (!client || !model)
    return LCPSIM_ERR_USAGE;
  if (robot)
    *robot = NULL;
  if ((model->urdf_path != NULL) == (model->urdf_text != NULL))
    return fail(client, LCPSIM_ERR_USAGE, "load_model: give exactly one of urdf_path, urdf_text");
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  if (model->urdf_path) {
    load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_PATH;
    load.urdf_path = (char *)model->urdf_path;
  } else {
    load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
    load.urdf_text = (char *)model->urdf_text;
  }
  load.name = (char *)(model->name ? model->name : "");
  pose_message_t base_pose;
  pose_message(&model->base_pose, &base_pose);
  load.base_pose = &base_pose.pose;
  load.base_type = (Lcpsim__V1__LoadModelRequest__Base)model->base;
  load.self_collision = model->self_collision;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_LOAD_MODEL;
  request.load_model = &load;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (robot) {
    if (!reply->load_model || !reply->load_model->robot)
      return missing(client, reply, "robot");
    *robot = reply->load_model->robot;
    reply->load_model->robot = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

static Lcpsim__V1__Vec3 vec3_message(const double v[3]) {
  Lcpsim__V1__Vec3 message = LCPSIM__V1__VEC3__INIT;
  message.x = v[0];
  message.y = v[1];
  message.z = v[2];
  return message;
}

int lcpsim_client_spawn(lcpsim_client_t *client, const lcpsim_body_t *body, uint32_t *id,
                        char **name) {
  if (!client || !body)
    return LCPSIM_ERR_USAGE;
  if (name)
    *name = NULL;
  Lcpsim__V1__Vec3 half_extents = vec3_message(body->half_extents);
  Lcpsim__V1__Shape shape = LCPSIM__V1__SHAPE__INIT;
  shape.type = (Lcpsim__V1__Shape__Type)body->shape;
  shape.radius = body->radius;
  shape.half_length = body->half_length;
  shape.half_extents = &half_extents;
  pose_message_t pose;
  pose_message(&body->pose, &pose);
  Lcpsim__V1__Vec3 linear = vec3_message(body->linear_velocity);
  Lcpsim__V1__Vec3 angular = vec3_message(body->angular_velocity);
  Lcpsim__V1__Twist twist = LCPSIM__V1__TWIST__INIT;
  twist.linear = &linear;
  twist.angular = &angular;
  Lcpsim__V1__SpawnRequest spawn = LCPSIM__V1__SPAWN_REQUEST__INIT;
  spawn.name = (char *)(body->name ? body->name : "");
  spawn.shape = &shape;
  spawn.pose = &pose.pose;
  spawn.twist = &twist;
  spawn.mass = body->mass;
  spawn.is_static = body->is_static;
  spawn.friction = body->friction;
  spawn.restitution = body->restitution;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SPAWN;
  request.spawn = &spawn;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->spawn)
    return missing(client, reply, "body");
  if (id)
    *id = reply->spawn->id;
  if (name) {
    *name = strdup(reply->spawn->name);
    if (!*name)
      code = fail(client, LCPSIM_ERR_NO_MEMORY, "spawn: out of memory");
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

int lcpsim_client_remove(lcpsim_client_t *client, const char *name) {
  if (!client || !name)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)name;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_REMOVE;
  request.remove = &remove;
  return call_for_status(client, &request);
}

int lcpsim_client_reset(lcpsim_client_t *client) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_RESET;
  request.reset = &reset;
  return call_for_status(client, &request);
}

int lcpsim_client_save_state(lcpsim_client_t *client, const char *slot, uint8_t **snapshot,
                             size_t *size, double *time) {
  if (!client || (snapshot && !size))
    return LCPSIM_ERR_USAGE;
  if (snapshot) {
    *snapshot = NULL;
    *size = 0;
  }
  Lcpsim__V1__SaveStateRequest save = LCPSIM__V1__SAVE_STATE_REQUEST__INIT;
  save.slot = (char *)(slot ? slot : "");
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SAVE_STATE;
  request.save_state = &save;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->save_state)
    return missing(client, reply, "snapshot");
  const ProtobufCBinaryData *bytes = &reply->save_state->snapshot;
  if (snapshot) {
    *snapshot = malloc(bytes->len ? bytes->len : 1);
    if (*snapshot) {
      if (bytes->len)
        memcpy(*snapshot, bytes->data, bytes->len);
      *size = bytes->len;
    } else {
      code = fail(client, LCPSIM_ERR_NO_MEMORY, "save_state: out of memory");
    }
  }
  if (time)
    *time = reply->save_state->time;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return code;
}

static int restore(lcpsim_client_t *client, Lcpsim__V1__RestoreStateRequest *restore_state,
                   double *time) {
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_RESTORE_STATE;
  request.restore_state = restore_state;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (time)
    *time = reply->restore_state ? reply->restore_state->time : 0.0;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_restore_state(lcpsim_client_t *client, const uint8_t *snapshot, size_t size,
                                double *time) {
  if (!client || (!snapshot && size > 0))
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RestoreStateRequest restore_state = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore_state.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
  restore_state.snapshot.data = (uint8_t *)snapshot;
  restore_state.snapshot.len = size;
  return restore(client, &restore_state, time);
}

int lcpsim_client_restore_slot(lcpsim_client_t *client, const char *slot, double *time) {
  if (!client || !slot)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__RestoreStateRequest restore_state = LCPSIM__V1__RESTORE_STATE_REQUEST__INIT;
  restore_state.source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
  restore_state.slot = (char *)slot;
  return restore(client, &restore_state, time);
}

int lcpsim_client_set_settings(lcpsim_client_t *client, const lcpsim_settings_change_t *change,
                               lcpsim_settings_t **settings) {
  if (!client || !change)
    return LCPSIM_ERR_USAGE;
  if (settings)
    *settings = NULL;
  Lcpsim__V1__SetSettingsRequest set = LCPSIM__V1__SET_SETTINGS_REQUEST__INIT;
  Lcpsim__V1__Vec3 gravity = vec3_message(change->gravity);
  if (change->has_timestep) {
    set.timestep_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__TIMESTEP_VALUE_TIMESTEP;
    set.timestep = change->timestep;
  }
  if (change->has_gravity)
    set.gravity = &gravity;
  if (change->has_iterations) {
    set.iterations_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__ITERATIONS_VALUE_ITERATIONS;
    set.iterations = change->iterations;
  }
  if (change->has_sor_omega) {
    set.sor_omega_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__SOR_OMEGA_VALUE_SOR_OMEGA;
    set.sor_omega = change->sor_omega;
  }
  if (change->has_friction_model) {
    set.friction_model_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__FRICTION_MODEL_VALUE_FRICTION_MODEL;
    set.friction_model = (Lcpsim__V1__Settings__FrictionModel)change->friction_model;
  }
  if (change->has_mode) {
    set.mode_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__MODE_VALUE_MODE;
    set.mode = (Lcpsim__V1__Settings__Mode)change->mode;
  }
  if (change->has_rate) {
    set.rate_value_case = LCPSIM__V1__SET_SETTINGS_REQUEST__RATE_VALUE_RATE;
    set.rate = change->rate;
  }
  if (change->has_max_push_speed) {
    set.max_push_speed_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__MAX_PUSH_SPEED_VALUE_MAX_PUSH_SPEED;
    set.max_push_speed = change->max_push_speed;
  }
  if (change->has_relax_iterations) {
    set.relax_iterations_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__RELAX_ITERATIONS_VALUE_RELAX_ITERATIONS;
    set.relax_iterations = change->relax_iterations;
  }
  if (change->has_restitution_threshold) {
    set.restitution_threshold_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__RESTITUTION_THRESHOLD_VALUE_RESTITUTION_THRESHOLD;
    set.restitution_threshold = change->restitution_threshold;
  }
  if (change->has_enforce_velocity_limits) {
    set.enforce_velocity_limits_value_case =
        LCPSIM__V1__SET_SETTINGS_REQUEST__ENFORCE_VELOCITY_LIMITS_VALUE_ENFORCE_VELOCITY_LIMITS;
    set.enforce_velocity_limits = change->enforce_velocity_limits;
  }
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_SETTINGS;
  request.set_settings = &set;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (settings) {
    if (!reply->set_settings || !reply->set_settings->settings)
      return missing(client, reply, "settings");
    *settings = reply->set_settings->settings;
    reply->set_settings->settings = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_subscribe(lcpsim_client_t *client, unsigned every_steps,
                            lcpsim_contacts_t contacts) {
  return lcpsim_client_subscribe_sensors(client, every_steps, contacts, 0);
}

int lcpsim_client_subscribe_sensors(lcpsim_client_t *client, unsigned every_steps,
                                    lcpsim_contacts_t contacts, unsigned sensors) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__Sensors sensors_wanted = sensors_message(sensors);
  Lcpsim__V1__SubscribeRequest subscribe = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  subscribe.every_steps = every_steps;
  subscribe.include_contacts = contacts == LCPSIM_WITH_CONTACTS;
  subscribe.sensors = sensors ? &sensors_wanted : NULL;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SUBSCRIBE;
  request.subscribe = &subscribe;
  return call_for_status(client, &request);
}

/* ---- the state stream ---- */

int lcpsim_subscriber_new(const char *endpoint, lcpsim_subscriber_t **subscriber) {
  return lcpsim_subscriber_new_secure(endpoint, NULL, subscriber);
}

int lcpsim_subscriber_new_secure(const char *endpoint, const lcpsim_curve_keys_t *keys,
                                 lcpsim_subscriber_t **subscriber) {
  return lcpsim_subscriber_new_world(endpoint, keys, NULL, subscriber);
}

static bool is_default_world(const char *world) {
  return !world || world[0] == '\0' || strcmp(world, "default") == 0;
}

int lcpsim_subscriber_new_world(const char *endpoint, const lcpsim_curve_keys_t *keys,
                                const char *world, lcpsim_subscriber_t **subscriber) {
  if (!endpoint || !subscriber || (world && strlen(world) > 63))
    return LCPSIM_ERR_USAGE;
  *subscriber = NULL;
  lcpsim_subscriber_t *self = calloc(1, sizeof *self);
  if (!self)
    return LCPSIM_ERR_NO_MEMORY;
  if (is_default_world(world))
    snprintf(self->topic, sizeof self->topic, "%s", STATE_TOPIC);
  else
    snprintf(self->topic, sizeof self->topic, "w/%s/%s", world, STATE_TOPIC);
  self->topic_length = strlen(self->topic);
  self->context = zmq_ctx_new();
  self->socket = self->context ? zmq_socket(self->context, ZMQ_SUB) : NULL;
  int linger = 0;
  if (!self->socket || zmq_setsockopt(self->socket, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      zmq_setsockopt(self->socket, ZMQ_SUBSCRIBE, self->topic, self->topic_length) != 0 ||
      set_curve(self->socket, keys) != 0 || zmq_connect(self->socket, endpoint) != 0) {
    lcpsim_subscriber_destroy(&self);
    return LCPSIM_ERR_TRANSPORT;
  }
  *subscriber = self;
  return LCPSIM_OK;
}

void lcpsim_subscriber_destroy(lcpsim_subscriber_t **subscriber) {
  if (!subscriber || !*subscriber)
    return;
  lcpsim_subscriber_t *self = *subscriber;
  if (self->socket)
    zmq_close(self->socket);
  if (self->context)
    zmq_ctx_term(self->context);
  free(self);
  *subscriber = NULL;
}

int lcpsim_subscriber_receive(lcpsim_subscriber_t *subscriber, int timeout_ms,
                              lcpsim_state_t **state) {
  if (!subscriber || !state)
    return LCPSIM_ERR_USAGE;
  *state = NULL;
  int64_t deadline = timeout_ms < 0 ? -1 : monotonic_ms() + timeout_ms;
  for (;;) {
    int waited = wait_for(subscriber->socket, ZMQ_POLLIN, deadline);
    if (waited == 0)
      return LCPSIM_ERR_TIMEOUT;
    if (waited < 0)
      return LCPSIM_ERR_TRANSPORT;
    zmq_msg_t payload;
    zmq_msg_init(&payload);
    int frames = 0;
    if (receive_message(subscriber->socket, &payload, &frames) != 0) {
      zmq_msg_close(&payload);
      if (errno == EAGAIN)
        continue;
      return LCPSIM_ERR_TRANSPORT;
    }
    const uint8_t *data = zmq_msg_data(&payload);
    size_t size = zmq_msg_size(&payload);
    /* The topic and the serialized State share one frame. */
    size_t topic = subscriber->topic_length;
    bool ours = frames == 1 && size >= topic && memcmp(data, subscriber->topic, topic) == 0;
    lcpsim_state_t *received =
        ours ? lcpsim__v1__state__unpack(NULL, size - topic, data + topic) : NULL;
    zmq_msg_close(&payload);
    if (!ours)
      continue;
    if (!received)
      return LCPSIM_ERR_PROTOCOL;
    *state = received;
    return LCPSIM_OK;
  }
}

/* ---- editing the world between steps ---- */

/* Allocations that live until one request is packed, freed together: the sub-messages of a
 * request built from the caller's structs. After a failed allocation `failed` is set and every
 * later one returns NULL. */
typedef struct {
  void **blocks;
  size_t count, capacity;
  bool failed;
} scratch_t;

static void *scratch_alloc(scratch_t *scratch, size_t count, size_t size) {
  if (scratch->failed)
    return NULL;
  if (scratch->count == scratch->capacity) {
    size_t capacity = scratch->capacity ? 2 * scratch->capacity : 16;
    void **blocks = realloc(scratch->blocks, capacity * sizeof *blocks);
    if (!blocks) {
      scratch->failed = true;
      return NULL;
    }
    scratch->blocks = blocks;
    scratch->capacity = capacity;
  }
  void *block = calloc(count ? count : 1, size);
  if (!block) {
    scratch->failed = true;
    return NULL;
  }
  scratch->blocks[scratch->count++] = block;
  return block;
}

static void scratch_free(scratch_t *scratch) {
  for (size_t i = 0; i < scratch->count; ++i)
    free(scratch->blocks[i]);
  free(scratch->blocks);
  *scratch = (scratch_t){0};
}

/* A twist message from two vectors, its parts allocated from `scratch`. */
static Lcpsim__V1__Twist *twist_message(scratch_t *scratch, const double linear[3],
                                        const double angular[3]) {
  Lcpsim__V1__Twist *twist = scratch_alloc(scratch, 1, sizeof *twist);
  Lcpsim__V1__Vec3 *vectors = scratch_alloc(scratch, 2, sizeof *vectors);
  if (!twist || !vectors)
    return NULL;
  lcpsim__v1__twist__init(twist);
  vectors[0] = vec3_message(linear);
  vectors[1] = vec3_message(angular);
  twist->linear = &vectors[0];
  twist->angular = &vectors[1];
  return twist;
}

static bool robot_state_change_is_valid(const lcpsim_robot_state_change_t *change) {
  return change && change->robot && (change->q || change->n_q == 0) &&
         (change->qd || change->n_qd == 0) && (change->joints || change->n_joints == 0);
}

/* The SetRobotStateRequest of `change` into `set`, its parts allocated from `scratch` (check
 * scratch->failed). */
static void robot_state_message(scratch_t *scratch, const lcpsim_robot_state_change_t *change,
                                Lcpsim__V1__SetRobotStateRequest *set) {
  lcpsim__v1__set_robot_state_request__init(set);
  set->robot = (char *)change->robot;
  set->n_q = change->n_q;
  set->q = (double *)change->q;
  set->n_qd = change->n_qd;
  set->qd = (double *)change->qd;
  Lcpsim__V1__JointState *joints = scratch_alloc(scratch, change->n_joints, sizeof *joints);
  Lcpsim__V1__JointState **pointers = scratch_alloc(scratch, change->n_joints, sizeof *pointers);
  if (!joints || !pointers)
    return;
  for (size_t i = 0; i < change->n_joints; ++i) {
    const lcpsim_joint_state_t *j = &change->joints[i];
    lcpsim__v1__joint_state__init(&joints[i]);
    joints[i].name = (char *)(j->name ? j->name : "");
    if (j->has_position) {
      joints[i].position_value_case = LCPSIM__V1__JOINT_STATE__POSITION_VALUE_POSITION;
      joints[i].position = j->position;
    }
    if (j->has_velocity) {
      joints[i].velocity_value_case = LCPSIM__V1__JOINT_STATE__VELOCITY_VALUE_VELOCITY;
      joints[i].velocity = j->velocity;
    }
    pointers[i] = &joints[i];
  }
  set->n_joints = change->n_joints;
  set->joints = pointers;
  if (change->has_base_pose) {
    pose_message_t *pose = scratch_alloc(scratch, 1, sizeof *pose);
    if (!pose)
      return;
    pose_message(&change->base_pose, pose);
    set->base_pose = &pose->pose;
  }
  if (change->has_base_twist)
    set->base_twist = twist_message(scratch, change->base_linear, change->base_angular);
}

/* The SetBodyStateRequest of `change` into `set`, its parts allocated from `scratch`. */
static void body_state_message(scratch_t *scratch, const lcpsim_body_state_change_t *change,
                               Lcpsim__V1__SetBodyStateRequest *set) {
  lcpsim__v1__set_body_state_request__init(set);
  if (change->name) {
    set->body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_NAME;
    set->name = (char *)change->name;
  } else {
    set->body_ref_case = LCPSIM__V1__SET_BODY_STATE_REQUEST__BODY_REF_ID;
    set->id = change->id;
  }
  if (change->has_pose) {
    pose_message_t *pose = scratch_alloc(scratch, 1, sizeof *pose);
    if (!pose)
      return;
    pose_message(&change->pose, pose);
    set->pose = &pose->pose;
  }
  if (change->has_twist)
    set->twist = twist_message(scratch, change->linear_velocity, change->angular_velocity);
}

int lcpsim_client_set_robot_state(lcpsim_client_t *client,
                                  const lcpsim_robot_state_change_t *change) {
  if (!client || !robot_state_change_is_valid(change))
    return LCPSIM_ERR_USAGE;
  scratch_t scratch = {0};
  Lcpsim__V1__SetRobotStateRequest set;
  robot_state_message(&scratch, change, &set);
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_ROBOT_STATE;
  request.set_robot_state = &set;
  int code = scratch.failed ? fail(client, LCPSIM_ERR_NO_MEMORY, "set_robot_state: out of memory")
                            : call_for_status(client, &request);
  scratch_free(&scratch);
  return code;
}

int lcpsim_client_set_body_state(lcpsim_client_t *client,
                                 const lcpsim_body_state_change_t *change) {
  if (!client || !change)
    return LCPSIM_ERR_USAGE;
  scratch_t scratch = {0};
  Lcpsim__V1__SetBodyStateRequest set;
  body_state_message(&scratch, change, &set);
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SET_BODY_STATE;
  request.set_body_state = &set;
  int code = scratch.failed ? fail(client, LCPSIM_ERR_NO_MEMORY, "set_body_state: out of memory")
                            : call_for_status(client, &request);
  scratch_free(&scratch);
  return code;
}

/* Sends an ApplyWrenchRequest; hold_id (may be NULL) gets the reply's. */
static int send_wrench(lcpsim_client_t *client, Lcpsim__V1__ApplyWrenchRequest *wrench,
                       uint32_t *hold_id) {
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_APPLY_WRENCH;
  request.apply_wrench = wrench;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (hold_id)
    *hold_id = reply->apply_wrench->hold_id;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_apply_wrench(lcpsim_client_t *client, const lcpsim_wrench_t *wrench,
                               uint32_t *hold_id) {
  if (!client || !wrench || !wrench->target)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__ApplyWrenchRequest apply = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  apply.target = (char *)wrench->target;
  apply.link = (char *)(wrench->link ? wrench->link : "");
  Lcpsim__V1__Vec3 force = vec3_message(wrench->force);
  Lcpsim__V1__Vec3 torque = vec3_message(wrench->torque);
  Lcpsim__V1__Vec3 point = vec3_message(wrench->point);
  apply.force = &force;
  apply.torque = &torque;
  if (wrench->has_point)
    apply.point = &point;
  apply.frame = (Lcpsim__V1__ApplyWrenchRequest__Frame)wrench->frame;
  apply.duration = wrench->hold ? LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__HOLD
                                : LCPSIM__V1__APPLY_WRENCH_REQUEST__DURATION__NEXT_STEP;
  return send_wrench(client, &apply, hold_id);
}

int lcpsim_client_clear_wrench(lcpsim_client_t *client, uint32_t hold_id) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__ApplyWrenchRequest clear = LCPSIM__V1__APPLY_WRENCH_REQUEST__INIT;
  clear.clear = hold_id;
  clear.clear_all = hold_id == 0;
  return send_wrench(client, &clear, NULL);
}

/* The message of one SetDynamics body entry (its com lives in *com). */
static void body_dynamics_message(const lcpsim_body_dynamics_t *in, Lcpsim__V1__BodyDynamics *out,
                                  Lcpsim__V1__Vec3 *com) {
  lcpsim__v1__body_dynamics__init(out);
  out->body = (char *)(in->body ? in->body : "");
  out->robot = (char *)(in->robot ? in->robot : "");
  out->link = (char *)(in->link ? in->link : "");
  if (in->has_mass) {
    out->mass_value_case = LCPSIM__V1__BODY_DYNAMICS__MASS_VALUE_MASS;
    out->mass = in->mass;
  }
  out->n_inertia = in->n_inertia;
  out->inertia = (double *)in->inertia;
  *com = vec3_message(in->com);
  if (in->has_com)
    out->com = com;
  if (in->has_friction) {
    out->friction_value_case = LCPSIM__V1__BODY_DYNAMICS__FRICTION_VALUE_FRICTION;
    out->friction = in->friction;
  }
  if (in->has_restitution) {
    out->restitution_value_case = LCPSIM__V1__BODY_DYNAMICS__RESTITUTION_VALUE_RESTITUTION;
    out->restitution = in->restitution;
  }
}

static void joint_dynamics_message(const lcpsim_joint_dynamics_t *in,
                                   Lcpsim__V1__JointDynamics *out) {
  lcpsim__v1__joint_dynamics__init(out);
  out->robot = (char *)(in->robot ? in->robot : "");
  out->joint = (char *)(in->joint ? in->joint : "");
  if (in->has_damping) {
    out->damping_value_case = LCPSIM__V1__JOINT_DYNAMICS__DAMPING_VALUE_DAMPING;
    out->damping = in->damping;
  }
  if (in->has_friction) {
    out->friction_value_case = LCPSIM__V1__JOINT_DYNAMICS__FRICTION_VALUE_FRICTION;
    out->friction = in->friction;
  }
  if (in->has_lower) {
    out->lower_value_case = LCPSIM__V1__JOINT_DYNAMICS__LOWER_VALUE_LOWER;
    out->lower = in->lower;
  }
  if (in->has_upper) {
    out->upper_value_case = LCPSIM__V1__JOINT_DYNAMICS__UPPER_VALUE_UPPER;
    out->upper = in->upper;
  }
  if (in->has_effort_limit) {
    out->effort_limit_value_case = LCPSIM__V1__JOINT_DYNAMICS__EFFORT_LIMIT_VALUE_EFFORT_LIMIT;
    out->effort_limit = in->effort_limit;
  }
  if (in->has_velocity_limit) {
    out->velocity_limit_value_case =
        LCPSIM__V1__JOINT_DYNAMICS__VELOCITY_LIMIT_VALUE_VELOCITY_LIMIT;
    out->velocity_limit = in->velocity_limit;
  }
}

int lcpsim_client_set_dynamics(lcpsim_client_t *client, const lcpsim_body_dynamics_t *bodies,
                               size_t n_bodies, const lcpsim_joint_dynamics_t *joints,
                               size_t n_joints) {
  if (!client || (n_bodies && !bodies) || (n_joints && !joints))
    return LCPSIM_ERR_USAGE;
  for (size_t i = 0; i < n_bodies; ++i)
    if (bodies[i].n_inertia > 9)
      return fail(client, LCPSIM_ERR_USAGE, "set_dynamics: bodies[%zu].n_inertia > 9", i);
  Lcpsim__V1__BodyDynamics *body_messages = calloc(n_bodies + 1, sizeof *body_messages);
  Lcpsim__V1__BodyDynamics **body_pointers = calloc(n_bodies + 1, sizeof *body_pointers);
  Lcpsim__V1__Vec3 *coms = calloc(n_bodies + 1, sizeof *coms);
  Lcpsim__V1__JointDynamics *joint_messages = calloc(n_joints + 1, sizeof *joint_messages);
  Lcpsim__V1__JointDynamics **joint_pointers = calloc(n_joints + 1, sizeof *joint_pointers);
  int code = LCPSIM_ERR_NO_MEMORY;
  if (body_messages && body_pointers && coms && joint_messages && joint_pointers) {
    Lcpsim__V1__SetDynamicsRequest set = LCPSIM__V1__SET_DYNAMICS_REQUEST__INIT;
    for (size_t i = 0; i < n_bodies; ++i) {
      body_dynamics_message(&bodies[i], &body_messages[i], &coms[i]);
      body_pointers[i] = &body_messages[i];
    }
    for (size_t i = 0; i < n_joints; ++i) {
      joint_dynamics_message(&joints[i], &joint_messages[i]);
      joint_pointers[i] = &joint_messages[i];
    }
    set.n_bodies = n_bodies;
    set.bodies = body_pointers;
    set.n_joints = n_joints;
    set.joints = joint_pointers;
    request_t request = LCPSIM__V1__REQUEST__INIT;
    request.call_case = LCPSIM__V1__REQUEST__CALL_SET_DYNAMICS;
    request.set_dynamics = &set;
    code = call_for_status(client, &request);
  } else {
    fail(client, code, "set_dynamics: out of memory");
  }
  free(body_messages);
  free(body_pointers);
  free(coms);
  free(joint_messages);
  free(joint_pointers);
  return code;
}

/* ---- sensors ---- */

int lcpsim_client_add_imu(lcpsim_client_t *client, const lcpsim_imu_t *imu) {
  if (!client || !imu || !imu->name || !imu->robot || !imu->link)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__AddImuRequest add = LCPSIM__V1__ADD_IMU_REQUEST__INIT;
  add.name = (char *)imu->name;
  add.robot = (char *)imu->robot;
  add.link = (char *)imu->link;
  pose_message_t pose;
  pose_message(&imu->pose, &pose);
  add.pose = &pose.pose;
  add.accel_noise = imu->accel_noise;
  add.gyro_noise = imu->gyro_noise;
  Lcpsim__V1__Vec3 accel_bias = vec3_message(imu->accel_bias);
  Lcpsim__V1__Vec3 gyro_bias = vec3_message(imu->gyro_bias);
  add.accel_bias = &accel_bias;
  add.gyro_bias = &gyro_bias;
  add.seed = imu->seed;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_ADD_IMU;
  request.add_imu = &add;
  return call_for_status(client, &request);
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

/* ---- a Step that can be cancelled ---- */

int lcpsim_client_step_start(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                             size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                             bool return_state, uint64_t *step_id) {
  if (!client || (n_targets > 0 && !targets))
    return LCPSIM_ERR_USAGE;
  if (client->pending_step_id != 0)
    return fail(client, LCPSIM_ERR_USAGE, "step_start: a started Step has not been finished");
  reply_t *reply = NULL;
  lcpsim_state_t *state = NULL;
  uint64_t id = 0;
  int code = step_call(client, steps, targets, n_targets, contacts, sensors, return_state, NULL,
                       &reply, &state, &id);
  if (code != LCPSIM_OK)
    return code;
  client->pending_step_id = id;
  client->pending_step_state = return_state;
  if (step_id)
    *step_id = id;
  return LCPSIM_OK;
}

int lcpsim_client_step_finish(lcpsim_client_t *client, lcpsim_step_result_t *result,
                              lcpsim_state_t **state) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  if (state)
    *state = NULL;
  if (client->pending_step_id == 0)
    return fail(client, LCPSIM_ERR_USAGE, "step_finish: no Step was started");
  reply_t *reply = NULL;
  int code;
  if (client->stashed_step_reply) {
    reply_t *received = lcpsim__v1__reply__unpack(NULL, client->stashed_step_reply_size,
                                                  client->stashed_step_reply);
    free(client->stashed_step_reply);
    client->stashed_step_reply = NULL;
    code = received ? accept_reply(client, received, LCPSIM__V1__REQUEST__CALL_STEP, "step", NULL,
                                   &reply)
                    : fail(client, LCPSIM_ERR_PROTOCOL, "step: undecodable reply");
  } else {
    code = receive_reply(client, client->pending_step_id, LCPSIM__V1__REQUEST__CALL_STEP, NULL,
                         call_deadline(client), &reply);
    /* A timeout leaves the Step pending: a later step_finish waits for it again. */
    if (code == LCPSIM_ERR_TIMEOUT)
      return code;
  }
  bool want_state = client->pending_step_state;
  client->pending_step_id = 0;
  if (code != LCPSIM_OK)
    return code;
  lcpsim_state_t *decoded = NULL;
  code = take_step_reply(client, want_state, NULL, &reply, &decoded);
  if (code != LCPSIM_OK)
    return code;
  if (result)
    *result = (lcpsim_step_result_t){.time = reply->step->time,
                                     .step_count = reply->step->step_count,
                                     .steps_run = reply->step->steps_run,
                                     .cancelled = reply->step->cancelled};
  if (state && decoded) {
    *state = decoded;
    reply->step->state = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_cancel_step(lcpsim_client_t *client, uint64_t step_id,
                              lcpsim_cancel_result_t *result) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__CancelStepRequest cancel = LCPSIM__V1__CANCEL_STEP_REQUEST__INIT;
  cancel.step_id = step_id;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_CANCEL_STEP;
  request.cancel_step = &cancel;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->cancel_step)
    return missing(client, reply, "cancel_step");
  if (result)
    *result = (lcpsim_cancel_result_t){.cancelled = reply->cancel_step->cancelled,
                                       .step_id = reply->cancel_step->step_id,
                                       .steps_run = reply->cancel_step->steps_run,
                                       .steps_requested = reply->cancel_step->steps_requested};
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

/* ---- worlds ---- */

int lcpsim_client_set_world(lcpsim_client_t *client, const char *world) {
  if (!client || (world && strlen(world) >= sizeof client->world))
    return LCPSIM_ERR_USAGE;
  snprintf(client->world, sizeof client->world, "%s", is_default_world(world) ? "" : world);
  return LCPSIM_OK;
}

const char *lcpsim_client_world(const lcpsim_client_t *client) {
  return client ? client->world : "";
}

void lcpsim_world_info_destroy(lcpsim_world_info_t **info) { message_destroy(info); }
void lcpsim_world_list_destroy(lcpsim_world_list_t **list) { message_destroy(list); }
void lcpsim_batch_reply_destroy(lcpsim_batch_reply_t **reply) { message_destroy(reply); }

int lcpsim_client_create_world(lcpsim_client_t *client, const lcpsim_world_source_t *source,
                               lcpsim_world_info_t **info) {
  if (info)
    *info = NULL;
  if (!client || !source || (source->snapshot_size && !source->snapshot) ||
      (source->scene_path != NULL) + (source->scene_text != NULL) + (source->copy_of != NULL) > 1)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__CreateWorldRequest create = LCPSIM__V1__CREATE_WORLD_REQUEST__INIT;
  create.name = (char *)(source->name ? source->name : "");
  if (source->scene_path) {
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_PATH;
    create.scene_path = (char *)source->scene_path;
  } else if (source->scene_text) {
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_SCENE_TEXT;
    create.scene_text = (char *)source->scene_text;
  } else if (source->copy_of) {
    create.source_case = LCPSIM__V1__CREATE_WORLD_REQUEST__SOURCE_COPY_OF;
    create.copy_of = (char *)source->copy_of;
  }
  create.copy_state = source->copy_state;
  create.snapshot.data = (uint8_t *)source->snapshot;
  create.snapshot.len = source->snapshot_size;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_CREATE_WORLD;
  request.create_world = &create;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->create_world || !reply->create_world->world)
    return missing(client, reply, "world");
  if (info) {
    *info = reply->create_world->world;
    reply->create_world->world = NULL;
  }
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_destroy_world(lcpsim_client_t *client, const char *name) {
  if (!client || !name)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__DestroyWorldRequest destroy = LCPSIM__V1__DESTROY_WORLD_REQUEST__INIT;
  destroy.name = (char *)name;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_DESTROY_WORLD;
  request.destroy_world = &destroy;
  return call_for_status(client, &request);
}

int lcpsim_client_list_worlds(lcpsim_client_t *client, lcpsim_world_list_t **list) {
  if (!client || !list)
    return LCPSIM_ERR_USAGE;
  *list = NULL;
  Lcpsim__V1__ListWorldsRequest list_worlds = LCPSIM__V1__LIST_WORLDS_REQUEST__INIT;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_LIST_WORLDS;
  request.list_worlds = &list_worlds;
  reply_t *reply = NULL;
  int code = call(client, &request, &reply);
  if (code != LCPSIM_OK)
    return code;
  if (!reply->list_worlds)
    return missing(client, reply, "worlds");
  *list = reply->list_worlds;
  reply->list_worlds = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

/* ---- BatchStep ---- */

int lcpsim_batch_result_code(const lcpsim_batch_result_t *result) {
  if (!result)
    return LCPSIM_ERR_USAGE;
  if (!result->status || result->status->code == LCPSIM__V1__STATUS__CODE__OK)
    return LCPSIM_OK;
  int code = -(int)result->status->code;
  return code < 0 ? code : LCPSIM_ERR_PROTOCOL;
}

static bool world_step_is_valid(const lcpsim_world_step_t *step) {
  if ((step->n_targets && !step->targets) || (step->n_robot_states && !step->robot_states) ||
      (step->n_body_states && !step->body_states) ||
      (step->restore_snapshot_size && !step->restore_snapshot) ||
      (step->restore_slot && step->restore_snapshot_size))
    return false;
  for (size_t i = 0; i < step->n_targets; ++i)
    if (!target_is_valid(&step->targets[i]))
      return false;
  for (size_t i = 0; i < step->n_robot_states; ++i)
    if (!robot_state_change_is_valid(&step->robot_states[i]))
      return false;
  return true;
}

/* One WorldStep message, its parts allocated from `scratch`. */
static Lcpsim__V1__WorldStep *world_step_message(scratch_t *scratch,
                                                 const lcpsim_world_step_t *step) {
  Lcpsim__V1__WorldStep *message = scratch_alloc(scratch, 1, sizeof *message);
  Lcpsim__V1__SetTargetRequest *targets = scratch_alloc(scratch, step->n_targets, sizeof *targets);
  Lcpsim__V1__SetTargetRequest **target_pointers =
      scratch_alloc(scratch, step->n_targets, sizeof *target_pointers);
  Lcpsim__V1__SetRobotStateRequest *robots =
      scratch_alloc(scratch, step->n_robot_states, sizeof *robots);
  Lcpsim__V1__SetRobotStateRequest **robot_pointers =
      scratch_alloc(scratch, step->n_robot_states, sizeof *robot_pointers);
  Lcpsim__V1__SetBodyStateRequest *bodies =
      scratch_alloc(scratch, step->n_body_states, sizeof *bodies);
  Lcpsim__V1__SetBodyStateRequest **body_pointers =
      scratch_alloc(scratch, step->n_body_states, sizeof *body_pointers);
  if (scratch->failed)
    return NULL;
  lcpsim__v1__world_step__init(message);
  message->world = (char *)(step->world ? step->world : "");
  message->steps = step->steps;
  for (size_t i = 0; i < step->n_targets; ++i) {
    targets[i] = target_message(&step->targets[i]);
    target_pointers[i] = &targets[i];
  }
  message->n_targets = step->n_targets;
  message->targets = target_pointers;
  for (size_t i = 0; i < step->n_robot_states; ++i) {
    robot_state_message(scratch, &step->robot_states[i], &robots[i]);
    robot_pointers[i] = &robots[i];
  }
  message->n_robot_states = step->n_robot_states;
  message->robot_states = robot_pointers;
  for (size_t i = 0; i < step->n_body_states; ++i) {
    body_state_message(scratch, &step->body_states[i], &bodies[i]);
    body_pointers[i] = &bodies[i];
  }
  message->n_body_states = step->n_body_states;
  message->body_states = body_pointers;
  if (step->restore_slot || step->restore_snapshot_size) {
    Lcpsim__V1__RestoreStateRequest *restore = scratch_alloc(scratch, 1, sizeof *restore);
    if (!restore)
      return NULL;
    lcpsim__v1__restore_state_request__init(restore);
    if (step->restore_slot) {
      restore->source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SLOT;
      restore->slot = (char *)step->restore_slot;
    } else {
      restore->source_case = LCPSIM__V1__RESTORE_STATE_REQUEST__SOURCE_SNAPSHOT;
      restore->snapshot.data = (uint8_t *)step->restore_snapshot;
      restore->snapshot.len = step->restore_snapshot_size;
    }
    message->restore = restore;
  }
  return message;
}

/* Builds the BatchStep request and sends it (started: without waiting for the connection or the
 * reply, `*reply` untouched) or calls it (`*reply` the Reply). */
static int batch_step_call(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                           size_t n_worlds, unsigned flags, unsigned sensors, uint64_t *started,
                           reply_t **reply) {
  if (!client || (n_worlds && !worlds))
    return LCPSIM_ERR_USAGE;
  for (size_t i = 0; i < n_worlds; ++i)
    if (!world_step_is_valid(&worlds[i]))
      return fail(client, LCPSIM_ERR_USAGE, "batch_step: world step %zu has an array of NULL", i);
  scratch_t scratch = {0};
  Lcpsim__V1__WorldStep **messages = scratch_alloc(&scratch, n_worlds, sizeof *messages);
  for (size_t i = 0; i < n_worlds && !scratch.failed; ++i)
    messages[i] = world_step_message(&scratch, &worlds[i]);
  if (scratch.failed) {
    scratch_free(&scratch);
    return fail(client, LCPSIM_ERR_NO_MEMORY, "batch_step: out of memory");
  }
  bool want_state = (flags & LCPSIM_BATCH_RETURN_STATE) != 0;
  Lcpsim__V1__Sensors sensors_wanted = sensors_message(sensors);
  Lcpsim__V1__BatchStepRequest batch = LCPSIM__V1__BATCH_STEP_REQUEST__INIT;
  batch.n_worlds = n_worlds;
  batch.worlds = messages;
  batch.return_state = want_state;
  batch.include_contacts = want_state && (flags & LCPSIM_BATCH_WITH_CONTACTS);
  batch.sensors = want_state && sensors ? &sensors_wanted : NULL;
  batch.return_snapshot = (flags & LCPSIM_BATCH_RETURN_SNAPSHOT) != 0;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_BATCH_STEP;
  request.batch_step = &batch;
  int code;
  if (started) {
    /* No waiting for a connection: a daemon not connected now is taken as gone. */
    code = send_request(client, &request, monotonic_ms());
    if (code == LCPSIM_OK)
      *started = request.id;
  } else {
    code = call(client, &request, reply);
  }
  scratch_free(&scratch);
  return code;
}

/* Hands the BatchStepReply of `reply` over to `*batch`. */
static int take_batch_reply(lcpsim_client_t *client, reply_t *reply, lcpsim_batch_reply_t **batch) {
  if (!reply->batch_step)
    return missing(client, reply, "batch_step results");
  *batch = reply->batch_step;
  reply->batch_step = NULL;
  lcpsim__v1__reply__free_unpacked(reply, NULL);
  return LCPSIM_OK;
}

int lcpsim_client_batch_step(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                             size_t n_worlds, unsigned flags, unsigned sensors,
                             lcpsim_batch_reply_t **reply) {
  if (!reply)
    return LCPSIM_ERR_USAGE;
  *reply = NULL;
  reply_t *received = NULL;
  int code = batch_step_call(client, worlds, n_worlds, flags, sensors, NULL, &received);
  return code == LCPSIM_OK ? take_batch_reply(client, received, reply) : code;
}

int lcpsim_client_batch_step_start(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                                   size_t n_worlds, unsigned flags, unsigned sensors,
                                   uint64_t *request_id) {
  uint64_t id = 0;
  int code = batch_step_call(client, worlds, n_worlds, flags, sensors, &id, NULL);
  if (request_id)
    *request_id = id;
  return code;
}

int lcpsim_client_batch_step_finish(lcpsim_client_t *client, uint64_t request_id, int timeout_ms,
                                    lcpsim_batch_reply_t **reply) {
  if (!client || !reply || request_id == 0)
    return LCPSIM_ERR_USAGE;
  *reply = NULL;
  int64_t deadline = timeout_ms < 0 ? -1 : monotonic_ms() + timeout_ms;
  reply_t *received = NULL;
  int code = receive_reply(client, request_id, LCPSIM__V1__REQUEST__CALL_BATCH_STEP, NULL, deadline,
                           &received);
  return code == LCPSIM_OK ? take_batch_reply(client, received, reply) : code;
}

void *lcpsim_client_zmq_socket(lcpsim_client_t *client) { return client ? client->socket : NULL; }
