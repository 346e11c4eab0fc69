/* SPDX-License-Identifier: Apache-2.0 */
/* The ROUTER's side of a request: its frames kept, moved and sent back,
 * and the replies dropped because a peer's queue was full (router.c). */
#ifndef LCPD_ROUTER_H
#define LCPD_ROUTER_H

#include "server.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

/* Closes a request's frames (envelope and body). */
void lcpd_incoming_close(lcpd_incoming_t *in);
/* Moves a request's frames from one place to another (from is left empty). */
void lcpd_incoming_move(lcpd_incoming_t *to, lcpd_incoming_t *from);
/* "a1b2c3d4e5": the peer's routing id, for logs. */
const char *lcpd_peer_name(const lcpd_incoming_t *in, char *buffer, size_t size);
/* Whether two requests came from the same peer (the ROUTER's routing id). */
bool lcpd_same_peer(const lcpd_incoming_t *a, const lcpd_incoming_t *b);
/* Sends the envelope, then frame: 0, or the errno of the send that failed
 * (EAGAIN: the peer's queue is full, the envelope still in *in and frame
 * still open; EHOSTUNREACH: the peer is gone). */
int lcpd_router_send(lcpd_server_t *server, lcpd_incoming_t *in, zmq_msg_t *frame);
/* Keeps the reply to request id, whose peer's queue was full, so that the
 * peer is told (the envelope moves out of *in); a peer with more dropped
 * replies than are kept is disconnected instead. */
void lcpd_dropped_remember(lcpd_server_t *server, lcpd_incoming_t *in, uint64_t id);
/* Whether a reply to the peer of *in was dropped and the peer not told yet. */
bool lcpd_dropped_pending(const lcpd_server_t *server, const lcpd_incoming_t *in);
/* Tells peers of their dropped replies, in order, as far as their queues
 * have room (only the peer of *only when it is not NULL). */
void lcpd_dropped_tell(lcpd_server_t *server, const lcpd_incoming_t *only);

#endif
