/* SPDX-License-Identifier: Apache-2.0 */
/* The ROUTER's side of a request: its frames (the envelope: the peer's
 * routing id and delimiter; the body) kept, moved and closed; replies sent
 * back along the envelope; and the replies that could not be queued because
 * a peer left its replies unread, kept so that the peer is told. */
#include "router.h"

#include "connections.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lcpd_incoming_close(lcpd_incoming_t *in) {
  for (int i = 0; i < in->envelope_count; ++i)
    zmq_msg_close(&in->envelope[i]);
  in->envelope_count = 0;
  if (in->body_frames == 1)
    zmq_msg_close(&in->body);
  in->body_frames = 0;
}

/* Moves a request's frames from one place to another (from is left empty). */
void lcpd_incoming_move(lcpd_incoming_t *to, lcpd_incoming_t *from) {
  for (int i = 0; i < from->envelope_count; ++i) {
    zmq_msg_init(&to->envelope[i]);
    zmq_msg_move(&to->envelope[i], &from->envelope[i]);
    zmq_msg_close(&from->envelope[i]);
  }
  to->envelope_count = from->envelope_count;
  to->body_frames = from->body_frames;
  to->role = from->role;
  to->fd = from->fd;
  to->bytes = from->bytes;
  if (from->body_frames == 1) {
    zmq_msg_init(&to->body);
    zmq_msg_move(&to->body, &from->body);
    zmq_msg_close(&from->body);
  }
  from->envelope_count = 0;
  from->body_frames = 0;
}

/* "a1b2c3d4e5": the peer's routing id, for logs. */
const char *lcpd_peer_name(const lcpd_incoming_t *in, char *buffer, size_t size) {
  buffer[0] = '\0';
  if (in->envelope_count == 0)
    return buffer;
  const unsigned char *id = zmq_msg_data((zmq_msg_t *)&in->envelope[0]);
  size_t length = zmq_msg_size(&in->envelope[0]);
  size_t used = 0;
  for (size_t i = 0; i < length && used + 3 <= size; ++i)
    used += (size_t)snprintf(buffer + used, size - used, "%02x", id[i]);
  return buffer;
}

/* Whether two requests came from the same peer (the ROUTER's routing id). */
bool lcpd_same_peer(const lcpd_incoming_t *a, const lcpd_incoming_t *b) {
  if (a->envelope_count == 0 || b->envelope_count == 0)
    return false;
  size_t size = zmq_msg_size(&a->envelope[0]);
  return size == zmq_msg_size(&b->envelope[0]) &&
         memcmp(zmq_msg_data((zmq_msg_t *)&a->envelope[0]),
                zmq_msg_data((zmq_msg_t *)&b->envelope[0]), size) == 0;
}

/* Sends the envelope, then frame. Returns 0, or the errno of a send that
 * failed: with ZMQ_ROUTER_MANDATORY the routing id's send fails whole
 * (EAGAIN: the peer's queue is full; EHOSTUNREACH: the peer is gone), and
 * then the envelope is still in *in and frame still open. */
int lcpd_router_send(lcpd_server_t *server, lcpd_incoming_t *in, zmq_msg_t *frame) {
  /* On the wire: the frames after the routing id. */
  uint64_t wire = lcpd_wire_bytes(zmq_msg_size(frame));
  int frames = in->envelope_count; /* the reply's, after the routing id */
  for (int i = 1; i < in->envelope_count; ++i)
    wire += lcpd_wire_bytes(zmq_msg_size(&in->envelope[i]));
  for (int i = 0; i < in->envelope_count; ++i) {
    if (zmq_msg_send(&in->envelope[i], server->router, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
      int error = errno;
      if (i == 0)
        return error;
      /* Not after the routing id was taken; but if it were, the message
       * cannot be completed: what was queued is dropped with the rest. */
      for (int k = i; k < in->envelope_count; ++k)
        zmq_msg_close(&in->envelope[k]);
      in->envelope_count = 0;
      zmq_msg_close(frame);
      return error;
    }
  }
  in->envelope_count = 0;
  if (zmq_msg_send(frame, server->router, ZMQ_DONTWAIT) < 0) {
    int error = errno;
    zmq_msg_close(frame);
    return error;
  }
  lcpd_connections_replied(&server->connections, in->fd, wire, frames);
  return 0;
}

/* A reply of request id whose peer's queue was full: kept (the envelope
 * moved out of *in) so that the peer is told. */
void lcpd_dropped_remember(lcpd_server_t *server, lcpd_incoming_t *in, uint64_t id) {
  server->dropped_total++;
  uint64_t now = uv_hrtime();
  char peer[64];
  if (now - server->last_drop_log_ns >= 1000000000u) {
    LCPD_WARN("the reply to request %llu for %s was dropped: the client does not read its "
              "replies (its queue is full); it is told when it reads again (%llu dropped so far)",
              (unsigned long long)id, lcpd_peer_name(in, peer, sizeof peer),
              (unsigned long long)server->dropped_total);
    server->last_drop_log_ns = now;
  }
  int pending = 0;
  for (int i = 0; i < server->dropped_count; ++i)
    pending += lcpd_same_peer(&server->dropped[i]->to, in);
  lcpd_dropped_t *entry = NULL;
  if (pending < LCPD_MAX_DROPPED_PER_PEER && server->dropped_count < LCPD_MAX_DROPPED)
    entry = malloc(sizeof *entry);
  if (!entry) {
    /* It would not be told of all of them: it is disconnected instead, and
     * what was kept for it goes. */
    server->dropped_disconnected++;
    lcpd_connections_close(&server->connections, in->fd, now,
                           "it left its replies unread until more were dropped than the daemon "
                           "keeps to tell it of");
    int kept = 0;
    for (int i = 0; i < server->dropped_count; ++i) {
      if (lcpd_same_peer(&server->dropped[i]->to, in)) {
        lcpd_incoming_close(&server->dropped[i]->to);
        free(server->dropped[i]);
      } else {
        server->dropped[kept++] = server->dropped[i];
      }
    }
    server->dropped_count = kept;
    lcpd_incoming_close(in);
    return;
  }
  lcpd_incoming_move(&entry->to, in);
  entry->id = id;
  server->dropped[server->dropped_count++] = entry;
}

/* The error reply that tells a peer the reply to request id was dropped. */
static bool dropped_notice(uint64_t id, zmq_msg_t *frame) {
  char message[256];
  snprintf(message, sizeof message,
           "the reply to request %llu was dropped: this client left so many replies unread that "
           "its queue was full; the request was served (any change it made stands: ask "
           "GetState); read replies before sending more requests",
           (unsigned long long)id);
  Lcpsim__V1__Status status = LCPSIM__V1__STATUS__INIT;
  status.code = LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED;
  status.message = message;
  Lcpsim__V1__Reply reply = LCPSIM__V1__REPLY__INIT;
  reply.id = id;
  reply.status = &status;
  size_t size = lcpsim__v1__reply__get_packed_size(&reply);
  if (zmq_msg_init_size(frame, size) != 0)
    return false;
  lcpsim__v1__reply__pack(&reply, zmq_msg_data(frame));
  return true;
}

/* Whether a reply to the peer of *in was dropped and the peer not told yet. */
bool lcpd_dropped_pending(const lcpd_server_t *server, const lcpd_incoming_t *in) {
  for (int i = 0; i < server->dropped_count; ++i)
    if (lcpd_same_peer(&server->dropped[i]->to, in))
      return true;
  return false;
}

/* Tells peers of their dropped replies, in order, as far as their queues
 * have room (only the peer of *only when it is not NULL). A peer that is
 * gone is forgotten. */
void lcpd_dropped_tell(lcpd_server_t *server, const lcpd_incoming_t *only) {
  int kept = 0;
  const lcpd_incoming_t *full[LCPD_MAX_DROPPED];
  int full_count = 0;
  for (int i = 0; i < server->dropped_count; ++i) {
    lcpd_dropped_t *entry = server->dropped[i];
    bool skip = only && !lcpd_same_peer(&entry->to, only);
    for (int k = 0; k < full_count && !skip; ++k)
      skip = lcpd_same_peer(&entry->to, full[k]);
    zmq_msg_t frame;
    if (!skip && dropped_notice(entry->id, &frame)) {
      int error = lcpd_router_send(server, &entry->to, &frame);
      if (error == EAGAIN) {
        zmq_msg_close(&frame);
        full[full_count++] = &entry->to;
      } else {
        if (error != 0 && entry->to.envelope_count)
          zmq_msg_close(&frame);
        lcpd_incoming_close(&entry->to);
        free(entry);
        continue;
      }
    }
    server->dropped[kept++] = entry;
  }
  server->dropped_count = kept;
}
