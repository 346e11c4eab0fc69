/* A control tick's request decoded straight from its wire bytes: the
 * Request carrying a StepRequest whose targets name their robot and give
 * a mode, arrays of numbers (packed, as every protobuf encoder writes them)
 * and gravity compensation — what a client in a control loop sends every
 * few milliseconds. protobuf-c's generic unpacking walks descriptors for
 * every field; this reads the few fields such a request has, and checks
 * each number is finite as it reads it (lcpd_all_finite need not walk the
 * tree again).
 *
 * Anything else — another call, targets by joint name or index, a field
 * this does not know, a field given twice, numbers not packed, a string
 * that is not plain ASCII, a non-finite number, malformed bytes — makes it
 * return NULL, and the request goes to protobuf-c (whose answer, error
 * messages included, is then the only one). What it returns is the tree
 * protobuf-c would have built from the same bytes (test_daemon_decode). */
#ifndef LCPD_DECODE_H
#define LCPD_DECODE_H

#include "memory.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stddef.h>

/* The Request in budget's memory, or NULL (nothing the caller must free:
 * reset the budget before decoding the same bytes another way). */
Lcpsim__V1__Request *lcpd_decode_step_tick(lcpd_budget_t *budget, const void *data, size_t size);

#endif
