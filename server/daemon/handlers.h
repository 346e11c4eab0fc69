/* The calls of lcpsim.v1: one request in, one reply out. A request is
 * decoded with a byte budget, checked whole (every number finite, every name
 * and index resolved, every count in range) and only then applied, so a bad
 * request changes nothing. A long Step runs in slices so that the event loop
 * keeps answering signals; no other request is taken meanwhile, which keeps
 * requests whole and in arrival order. */
#ifndef LCPD_HANDLERS_H
#define LCPD_HANDLERS_H

#include "encode.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LCPD_SERVER_VERSION "lcpsimd " LCP_VERSION_STRING

typedef struct lcpd_call {
  /* Limits, set once by lcpd_call_init. */
  size_t decode_budget; /* bytes the decoded request may occupy */
  uint64_t slice_ns;    /* how long a Step may run before yielding to the loop */
  /* The request being served. */
  lcpd_budget_t budget;
  Lcpsim__V1__Request *request; /* NULL when it could not be decoded */
  /* Its reply, built in arena (which may also point into request). */
  lcpd_arena_t arena;
  Lcpsim__V1__Reply reply;
  Lcpsim__V1__Status status;
  char status_message[768];
  /* Replies carrying a State are written straight to bytes here instead
   * (encoded: wire holds the whole Reply; `reply` has its id, status and
   * result case, for logs). */
  lcpd_wire_t wire;
  bool encoded;
  /* A Step still running. */
  bool stepping;
  int32_t steps_done, steps_total;
  /* The world before the request, restored if a step fails: undo_size bytes
   * (0: none) in a buffer of undo_capacity kept from request to request. */
  unsigned char *undo;
  size_t undo_size, undo_capacity;
} lcpd_call_t;

void lcpd_call_init(lcpd_call_t *call, size_t decode_budget, size_t reply_limit, uint64_t slice_ns);
/* Decodes and serves one request. Returns true when call->reply is ready,
 * false when a Step goes on: call lcpd_call_resume until it returns true. */
bool lcpd_call_start(lcpd_call_t *call, lcpd_sim_t *sim, const void *data, size_t size);
/* The reply's bytes: its size, then the bytes themselves into a buffer of
 * that size. */
size_t lcpd_call_reply_size(lcpd_call_t *call);
void lcpd_call_reply_write(lcpd_call_t *call, void *buffer);
/* Answers a request that is not even a frame to decode (id 0). */
void lcpd_call_reject(lcpd_call_t *call, Lcpsim__V1__Status__Code code, const char *message);
bool lcpd_call_resume(lcpd_call_t *call, lcpd_sim_t *sim);
/* Frees the request and its reply; the call can serve the next request. */
/* Ends the request: frees what it decoded and its reply (the buffers kept
 * for the next request stay). */
void lcpd_call_finish(lcpd_call_t *call);
/* Frees everything, the kept buffers too. */
void lcpd_call_destroy(lcpd_call_t *call);
/* The name of a call case ("step"), for logs. */
const char *lcpd_call_name(const lcpd_call_t *call);

#endif
