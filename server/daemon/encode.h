/* The world's State written straight into lcpsim.v1 wire bytes, for the
 * replies that carry one (Step with return_state, GetState) and for the
 * state stream. Building the protobuf-c tree (lcpd_new_state) and packing it
 * cost more than the step of a small world: protobuf-c sizes every nested
 * message once per level above it. The bytes are exactly those that packing
 * lcpd_new_state's tree gives (tests/daemon/test_daemon_encode.c checks
 * that), so clients see no difference. */
#ifndef LCPD_ENCODE_H
#define LCPD_ENCODE_H

#include "sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer, kept from one message to the next. */
typedef struct lcpd_wire {
  unsigned char *data;
  size_t size;     /* bytes written */
  size_t capacity; /* bytes allocated */
  size_t limit;    /* most bytes a message may have */
  bool failed;     /* over the limit or out of memory: the bytes are unusable */
  /* Scratch for the engine's arrays (q, qd, torques, contacts). */
  void *scratch;
  size_t scratch_capacity;
} lcpd_wire_t;

/* The most memory a wire keeps between messages (lcpd_call_finish frees a
 * larger buffer). */
#define LCPD_WIRE_KEEP_BYTES ((size_t)1 << 20)

void lcpd_wire_init(lcpd_wire_t *wire, size_t limit);
void lcpd_wire_destroy(lcpd_wire_t *wire);
/* Empties the buffer (keeps its memory). */
void lcpd_wire_reset(lcpd_wire_t *wire);

/* Appends the State message's fields (not a length-prefixed field: the
 * bytes of a whole State), as lcpd_new_state builds it, with `sequence`. */
void lcpd_encode_state(lcpd_wire_t *wire, const lcpd_sim_t *sim, bool include_contacts,
                       uint64_t sequence);

/* Appends a whole Reply with status OK: a StepReply (time, step count and,
 * with `state`, the State) or a GetStateReply. */
void lcpd_encode_step_reply(lcpd_wire_t *wire, uint64_t id, const lcpd_sim_t *sim, bool state,
                            bool include_contacts);
void lcpd_encode_get_state_reply(lcpd_wire_t *wire, uint64_t id, const lcpd_sim_t *sim,
                                 bool include_contacts);

#endif
