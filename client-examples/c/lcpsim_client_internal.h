/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of the C client library share; not installed, not part of the API.
 *
 * The library's files: lcpsim_client.c (the client and the call machinery every call goes
 * through), lcpsim_client_keys.c (CURVE keys), lcpsim_client_messages.c (request messages from
 * the caller's structs), lcpsim_client_buffer.c (the state buffer), lcpsim_client_state.c (Step,
 * GetState, SetTarget), lcpsim_client_scene.c (the world's contents and settings),
 * lcpsim_client_edit.c (editing between steps, sensors), lcpsim_client_worlds.c (worlds,
 * BatchStep), lcpsim_subscriber.c (the state stream) and lcpsim_pool.c (many daemons).
 *
 * Names with external linkage that are not the API start with lcpc_; the library is built with
 * hidden visibility, so only the API's lcpsim_ names are exported from the shared library. */
#ifndef LCPSIM_CLIENT_INTERNAL_H
#define LCPSIM_CLIENT_INTERNAL_H

#include "lcpsim_client.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---- the call machinery (lcpsim_client.c) ---- */

/* Sets the client's last error and returns `code`. */
int lcpc_fail(lcpsim_client_t *client, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Frees a decoded message and sets the caller's pointer to NULL. */
void lcpc_message_destroy(void *message_ptr);
/* Whether a tcp:// endpoint's host is an IPv6 address (in brackets): such a socket needs ZMQ_IPV6.
 */
int lcpc_endpoint_is_ipv6(const char *endpoint);
int64_t lcpc_monotonic_ms(void);
/* Waits for `events` on the socket until the deadline (-1: none): 1 ready, 0 timed out, -1
 * failed. */
int lcpc_wait_for(void *socket, short events, int64_t deadline);
/* Receives one whole message; its last frame in `payload`, its frame count in `frames`. */
int lcpc_receive_message(void *socket, zmq_msg_t *payload, int *frames);
/* Now plus the client's timeout, or -1 when it waits forever. */
int64_t lcpc_call_deadline(const lcpsim_client_t *client);
/* NULL, "" and "default" all name the default world. */
bool lcpc_is_default_world(const char *world);
/* Sends `request` with a new id (set here) and the client's world, without waiting for the
 * reply. */
int lcpc_send_request(lcpsim_client_t *client, request_t *request, int64_t deadline);
/* Checks a decoded reply: OK keeps it in `*reply`; an error status or another call's result
 * frees it (with `allocator`) and returns the code. */
int lcpc_accept_reply(lcpsim_client_t *client, reply_t *received, int call_case, const char *name,
                      ProtobufCAllocator *allocator, reply_t **reply);
/* Waits for the reply to request `id` (of call `call_case`), decoded with `allocator` (NULL:
 * malloc). */
int lcpc_receive_reply(lcpsim_client_t *client, uint64_t id, int call_case,
                       ProtobufCAllocator *allocator, int64_t deadline, reply_t **reply);
/* Sends `request` and waits for its reply, decoded with `allocator` (NULL: malloc). */
int lcpc_call_with(lcpsim_client_t *client, request_t *request, ProtobufCAllocator *allocator,
                   reply_t **reply);
/* lcpc_call_with, decoding with malloc. */
int lcpc_call(lcpsim_client_t *client, request_t *request, reply_t **reply);
/* Sends a request whose reply carries nothing the caller needs. */
int lcpc_call_for_status(lcpsim_client_t *client, request_t *request);
/* The ZeroMQ context of the client's socket (each client has its own), for sockets that must
 * share it: an inproc monitor of the client's socket. */
void *lcpc_client_zmq_context(lcpsim_client_t *client);
/* Frees `reply` (malloc'd) and fails with LCPSIM_ERR_PROTOCOL: "the reply has no `what`". */
int lcpc_missing(lcpsim_client_t *client, reply_t *reply, const char *what);

/* ---- editing (lcpsim_client_edit.c) ---- */

/* Sends a SetDynamics of the client's world without waiting for its reply (the pool waits for
 * it together with its monitor of the connection); its id in `*request_id`. */
int lcpc_send_set_dynamics(lcpsim_client_t *client, const lcpsim_body_dynamics_t *bodies,
                           size_t n_bodies, const lcpsim_joint_dynamics_t *joints, size_t n_joints,
                           int64_t deadline, uint64_t *request_id);

/* ---- CURVE keys (lcpsim_client_keys.c) ---- */

/* Makes socket a CURVE client with keys (NULL: leaves it plain); -1 when ZeroMQ refuses. */
int lcpc_set_curve(void *socket, const lcpsim_curve_keys_t *keys);

/* ---- request messages (lcpsim_client_messages.c) ---- */

/* The protobuf-c form of a target; it points into `target`, which must outlive it. */
Lcpsim__V1__SetTargetRequest lcpc_target_message(const lcpsim_target_t *target);
/* No array of the target is NULL with a nonzero count. */
bool lcpc_target_is_valid(const lcpsim_target_t *target);
/* The protocol's Sensors message for a set of LCPSIM_SENSOR_* flags. */
Lcpsim__V1__Sensors lcpc_sensors_message(unsigned sensors);

/* The message parts of a pose; they live in the caller's frame. */
typedef struct {
  Lcpsim__V1__Pose pose;
  Lcpsim__V1__Vec3 position;
  Lcpsim__V1__Quat orientation;
} lcpc_pose_message_t;

void lcpc_pose_message(const lcpsim_pose_t *pose, lcpc_pose_message_t *out);
Lcpsim__V1__Vec3 lcpc_vec3_message(const double v[3]);

/* Allocations that live until one request is packed, freed together: the sub-messages of a
 * request built from the caller's structs. After a failed allocation `failed` is set and every
 * later one returns NULL. */
typedef struct {
  void **blocks;
  size_t count, capacity;
  bool failed;
} lcpc_scratch_t;

void *lcpc_scratch_alloc(lcpc_scratch_t *scratch, size_t count, size_t size);
void lcpc_scratch_free(lcpc_scratch_t *scratch);

bool lcpc_robot_state_change_is_valid(const lcpsim_robot_state_change_t *change);
/* The SetRobotStateRequest of `change` into `set`, its parts allocated from `scratch` (check
 * scratch->failed). */
void lcpc_robot_state_message(lcpc_scratch_t *scratch, const lcpsim_robot_state_change_t *change,
                              Lcpsim__V1__SetRobotStateRequest *set);
/* The SetBodyStateRequest of `change` into `set`, its parts allocated from `scratch`. */
void lcpc_body_state_message(lcpc_scratch_t *scratch, const lcpsim_body_state_change_t *change,
                             Lcpsim__V1__SetBodyStateRequest *set);

/* ---- the state buffer (lcpsim_client_buffer.c) ---- */

/* Makes the whole buffer free again (what was decoded into it is gone) and returns the
 * allocator that decodes into it. */
ProtobufCAllocator *lcpc_state_buffer_reset(lcpsim_state_buffer_t *buffer);
/* The same allocator, the buffer left as it is. */
ProtobufCAllocator *lcpc_state_buffer_allocator(lcpsim_state_buffer_t *buffer);

#endif
