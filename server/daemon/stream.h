/* SPDX-License-Identifier: Apache-2.0 */
/* The state stream's messages: one frame, the topic then the packed State.
 * The default world's topic is "state" (its State names no world); another
 * world's is "w/NAME/state", with State.world = NAME, so that a subscriber
 * picks worlds by ZeroMQ's prefix matching. */
#ifndef LCPD_STREAM_H
#define LCPD_STREAM_H

#include "memory.h"
#include "sim.h"

#include <stdbool.h>
#include <zmq.h>

/* The world's topic (without a NUL) into buffer; returns its length. */
size_t lcpd_stream_topic(const lcpd_sim_t *sim, char *buffer, size_t size);

/* The next state of sim's stream (its publish_sequence is counted up),
 * built in arena (reset before it returns) into *frame. false when the
 * arena or the system refused (logged). */
bool lcpd_stream_frame(lcpd_sim_t *sim, lcpd_arena_t *arena, const lcpd_error_t *arena_error,
                       zmq_msg_t *frame);

#endif
