/* SPDX-License-Identifier: Apache-2.0 */
/* The calls of lcpsim.v1: one request in, one reply out. A request is
 * decoded by protobuf-c within a byte budget, checked whole (every number
 * finite, every name and index resolved, every count in range) and only then
 * applied, so a bad request changes nothing. A long Step runs in slices so
 * that the event loop keeps answering signals and the calls that touch no
 * part of the world a Step changes (Ping, GetInfo, CancelStep); the server
 * holds every other request until the Step is over, which keeps requests
 * whole and in arrival order. */
#ifndef LCPD_HANDLERS_H
#define LCPD_HANDLERS_H

#include "error.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LCPD_SERVER_VERSION "lcpsimd " LCP_VERSION_STRING

/* The default of lcpsimd --max-steps-per-request: a day of simulated time
 * at a 1 ms step. */
#define LCPD_DEFAULT_MAX_STEPS_PER_REQUEST 86400000

/* All the mesh files of one LoadModel together (docs/security.md, Files),
 * and of each robot of a scene a CreateWorld reads. */
#define LCPD_MAX_LOAD_MODEL_MESH_BYTES ((size_t)8 << 20)
#define LCPD_MAX_LOAD_MODEL_MESH_FILES 1024

typedef struct lcpd_call {
  uint64_t slice_ns; /* how long a Step may run before yielding to the loop */
  int32_t max_steps; /* the most steps one Step may ask for */
  /* The request being served, decoded by protobuf-c into request_arena,
   * whose limit is the decode budget: the bytes the decoded request may
   * occupy. NULL when it could not be decoded. */
  lcpd_arena_t request_arena;
  Lcpsim__V1__Request *request;
  /* Its reply, built in reply_arena (the reply may also point into the
   * request) and packed by protobuf-c. */
  lcpd_arena_t reply_arena;
  Lcpsim__V1__Reply reply;
  Lcpsim__V1__Status status;
  /* What went wrong; both arenas report their refusals here. The reply's
   * status message is this message. */
  lcpd_error_t error;
  /* A Step still running. */
  bool stepping;
  int32_t steps_done, steps_total;
  bool cancelled; /* a CancelStep stopped it */
  /* The world before the request, restored if a step fails: undo_size bytes
   * (0: none) in a buffer of undo_capacity kept from request to request. */
  unsigned char *undo;
  size_t undo_size, undo_capacity;
  uint32_t undo_steps_since_publish; /* the stream's count, put back with the world */
  /* A BatchStep's world before its part (restore, states, targets, steps),
   * restored when the part fails: kept as undo is. */
  unsigned char *batch_undo;
  size_t batch_undo_size, batch_undo_capacity;
  /* The world could not be put back after the request failed and was
   * rebuilt from the start-up scene: the reply says so (INTERNAL, with
   * Status.world_restored). */
  bool world_restored;
  /* A result packed elsewhere (a BatchStep's, by its worker threads):
   * Reply field packed_field (call->reply's own result is unset), the
   * concatenation of packed_parts (each a whole encoded field entry of
   * that message), packed_size bytes in all. packed_count 0: none. */
  uint32_t packed_field;
  const ProtobufCBinaryData *packed_parts;
  size_t packed_count, packed_size;
  /* Failures injected for tests, from the environment variable
   * LCPSIMD_TEST_FAULTS read at start: "step" fails the last step of every
   * Step, "undo" fails every undo. Never set otherwise. */
  unsigned test_faults;
} lcpd_call_t;

enum { LCPD_FAULT_STEP = 1u, LCPD_FAULT_UNDO = 2u };

void lcpd_call_init(lcpd_call_t *call, size_t decode_budget, size_t reply_limit, uint64_t slice_ns,
                    int32_t max_steps);
/* Decodes and serves one request. Returns true when call->reply is ready,
 * false when a Step goes on: call lcpd_call_resume until it returns true. */
bool lcpd_call_start(lcpd_call_t *call, lcpd_sim_t *sim, const void *data, size_t size);
bool lcpd_call_resume(lcpd_call_t *call, lcpd_sim_t *sim);
/* lcpd_call_start in two halves: lcpd_call_decode returns false when the
 * request does not decode (call->reply is then the error), and
 * lcpd_call_serve serves what was decoded. */
bool lcpd_call_decode(lcpd_call_t *call, const void *data, size_t size);
bool lcpd_call_serve(lcpd_call_t *call, lcpd_sim_t *sim);
/* Whether the decoded call may be served while a Step runs: it reads or
 * changes nothing a Step changes (Ping, GetInfo). */
bool lcpd_call_is_free(const lcpd_call_t *call);
/* Whether the decoded call may change anything (the world, its settings,
 * its snapshot slots, the state stream, a running Step): every call but
 * Ping, GetInfo and GetState. An observer may make only those. */
bool lcpd_call_mutates(const lcpd_call_t *call);
/* Whether the decoded call is a CancelStep, and the Step id it names (0:
 * whichever runs). */
bool lcpd_call_is_cancel(const lcpd_call_t *call, uint64_t *step_id);
/* Stops a running Step (call->stepping) after the steps done so far: its
 * reply is ready, OK with cancelled set. */
void lcpd_call_cancel_step(lcpd_call_t *call, lcpd_sim_t *sim);
/* Answers the decoded CancelStep in call: what was cancelled (nothing when
 * stepped is NULL, else that Step's call after lcpd_call_cancel_step). */
void lcpd_call_reply_cancel(lcpd_call_t *call, const lcpd_call_t *stepped);
/* The reply's bytes: its size, then the bytes themselves into a buffer of
 * that size. */
size_t lcpd_call_reply_size(const lcpd_call_t *call);
void lcpd_call_reply_write(const lcpd_call_t *call, void *buffer);
/* Answers a request with code, a negative lcp_status_t, and message: one
 * that is not even a frame to decode (id 0), or one decoded and refused
 * unserved (its id). */
void lcpd_call_reject(lcpd_call_t *call, int code, const char *message);
/* Ends the request: frees what it decoded and its reply (the buffers kept
 * for the next request stay). */
void lcpd_call_finish(lcpd_call_t *call);
/* Frees everything, the kept buffers too. */
void lcpd_call_destroy(lcpd_call_t *call);
/* The reply is result (of the Reply's result_case), status OK. */
void lcpd_call_reply_ok(lcpd_call_t *call, Lcpsim__V1__Reply__ResultCase result_case, void *result);
/* The reply is OK with its result (Reply field `field`, a message) the
 * concatenation of parts, each an encoded entry of that message's fields
 * (lcpd_encode_field_header): how a BatchStep's results, packed by the
 * worker threads, make the reply. The parts must live until the reply is
 * written. */
void lcpd_call_reply_packed(lcpd_call_t *call, uint32_t field, const ProtobufCBinaryData *parts,
                            size_t count);
/* The header of a length-delimited field: its tag (field number, wire type
 * 2) and the length, into out (at most 15 bytes); returns its size. */
size_t lcpd_encode_field_header(uint32_t field, uint64_t length, uint8_t *out);
/* The reply is call->error (filled by the caller) as its status. */
void lcpd_call_reply_error(lcpd_call_t *call);
/* An arena's refusal (reported in call->error) as the call's error, naming
 * the call; returns LCP_ERR_NO_MEMORY. */
int lcpd_call_out_of_memory(lcpd_call_t *call);
/* The calls RestoreState and Step served on a call of their own (a
 * BatchStep's world, batch_world.h): as the dispatcher serves them,
 * call->error filled on failure. lcpd_call_step leaves call->stepping set
 * while steps remain: lcpd_call_step_slice runs the next slice. */
int lcpd_call_restore_state(lcpd_call_t *call, lcpd_sim_t *sim,
                            const Lcpsim__V1__RestoreStateRequest *req);
int lcpd_call_step(lcpd_call_t *call, lcpd_sim_t *sim, const Lcpsim__V1__StepRequest *req);
int lcpd_call_step_slice(lcpd_call_t *call, lcpd_sim_t *sim);
/* The world could not be put back after the call failed (why): it is
 * rebuilt from the start-up scene and the call's error says so. */
void lcpd_call_world_lost(lcpd_call_t *call, lcpd_sim_t *sim, const char *why);

/* The name of a call case ("step"), for logs. */
const char *lcpd_call_name(const lcpd_call_t *call);

#endif
