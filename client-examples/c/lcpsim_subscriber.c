/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: the state stream: Subscribe, and a subscriber to the daemon's PUB socket. */
#include "lcpsim_client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

int lcpsim_client_subscribe(lcpsim_client_t *client, unsigned every_steps,
                            lcpsim_contacts_t contacts) {
  return lcpsim_client_subscribe_sensors(client, every_steps, contacts, 0);
}

int lcpsim_client_subscribe_sensors(lcpsim_client_t *client, unsigned every_steps,
                                    lcpsim_contacts_t contacts, unsigned sensors) {
  if (!client)
    return LCPSIM_ERR_USAGE;
  Lcpsim__V1__Sensors sensors_wanted = lcpc_sensors_message(sensors);
  Lcpsim__V1__SubscribeRequest subscribe = LCPSIM__V1__SUBSCRIBE_REQUEST__INIT;
  subscribe.every_steps = every_steps;
  subscribe.include_contacts = contacts == LCPSIM_WITH_CONTACTS;
  subscribe.sensors = sensors ? &sensors_wanted : NULL;
  request_t request = LCPSIM__V1__REQUEST__INIT;
  request.call_case = LCPSIM__V1__REQUEST__CALL_SUBSCRIBE;
  request.subscribe = &subscribe;
  return lcpc_call_for_status(client, &request);
}

/* The topic prefix of every frame on the daemon's PUB socket. */
static const char STATE_TOPIC[] = "state";

struct lcpsim_subscriber {
  void *context;
  void *socket;
  /* The world's topic: "state", or "w/NAME/state". */
  char topic[80];
  size_t topic_length;
};

/* ---- the state stream ---- */

int lcpsim_subscriber_new(const char *endpoint, lcpsim_subscriber_t **subscriber) {
  return lcpsim_subscriber_new_secure(endpoint, NULL, subscriber);
}

int lcpsim_subscriber_new_secure(const char *endpoint, const lcpsim_curve_keys_t *keys,
                                 lcpsim_subscriber_t **subscriber) {
  return lcpsim_subscriber_new_world(endpoint, keys, NULL, subscriber);
}

int lcpsim_subscriber_new_world(const char *endpoint, const lcpsim_curve_keys_t *keys,
                                const char *world, lcpsim_subscriber_t **subscriber) {
  if (!endpoint || !subscriber || (world && strlen(world) > 63))
    return LCPSIM_ERR_USAGE;
  *subscriber = NULL;
  lcpsim_subscriber_t *self = calloc(1, sizeof *self);
  if (!self)
    return LCPSIM_ERR_NO_MEMORY;
  if (lcpc_is_default_world(world))
    snprintf(self->topic, sizeof self->topic, "%s", STATE_TOPIC);
  else
    snprintf(self->topic, sizeof self->topic, "w/%s/%s", world, STATE_TOPIC);
  self->topic_length = strlen(self->topic);
  self->context = zmq_ctx_new();
  self->socket = self->context ? zmq_socket(self->context, ZMQ_SUB) : NULL;
  int linger = 0, ipv6 = lcpc_endpoint_is_ipv6(endpoint); /* as the client's */
  if (!self->socket || zmq_setsockopt(self->socket, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
      zmq_setsockopt(self->socket, ZMQ_IPV6, &ipv6, sizeof ipv6) != 0 ||
      zmq_setsockopt(self->socket, ZMQ_SUBSCRIBE, self->topic, self->topic_length) != 0 ||
      lcpc_set_curve(self->socket, keys) != 0 || zmq_connect(self->socket, endpoint) != 0) {
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
  int64_t deadline = timeout_ms < 0 ? -1 : lcpc_monotonic_ms() + timeout_ms;
  for (;;) {
    int waited = lcpc_wait_for(subscriber->socket, ZMQ_POLLIN, deadline);
    if (waited == 0)
      return LCPSIM_ERR_TIMEOUT;
    if (waited < 0)
      return LCPSIM_ERR_TRANSPORT;
    zmq_msg_t payload;
    zmq_msg_init(&payload);
    int frames = 0;
    if (lcpc_receive_message(subscriber->socket, &payload, &frames) != 0) {
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
