/* SPDX-License-Identifier: Apache-2.0 */
/* The lists a request carries, counted on its wire bytes before it is
 * decoded: protobuf-c allocates every entry of a list (every target, every
 * name), so a request of a few megabytes holding hundreds of thousands of
 * small entries would take a long time and much memory to decode, only to
 * be refused. Counting walks the bytes once, led by the message
 * descriptors, and allocates nothing. */
#ifndef LCPD_REQUEST_LISTS_H
#define LCPD_REQUEST_LISTS_H

#include <protobuf-c/protobuf-c.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most entries one list (repeated field) of a request may have, and
 * the most all its lists together may have. */
#define LCPD_MAX_LIST_ENTRIES 4096
#define LCPD_MAX_REQUEST_ENTRIES 65536

/* Whether the message of type descriptor in data has no list longer than
 * LCPD_MAX_LIST_ENTRIES and no more than LCPD_MAX_REQUEST_ENTRIES entries
 * in all. When not, message says which list ("step.targets has 200000
 * entries, more than the 4096 ...") and *id is the value of field 1 if it
 * is a varint before the list (the request's id), else 0. Bytes that are
 * not a well-formed message pass: decoding refuses them. */
bool lcpd_request_lists_fit(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data,
                            size_t size, uint64_t *id, char *message, size_t message_size);

/* The request's id (field 1) when it is the first field of data, as
 * every protobuf encoder writes it; else 0. */
uint64_t lcpd_request_id(const uint8_t *data, size_t size);

#endif
