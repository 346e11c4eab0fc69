/* SPDX-License-Identifier: Apache-2.0 */
#include "request_lists.h"

#include <stdio.h>
#include <string.h>

/* Messages nest no deeper than this in lcpsim.v1; deeper bytes are left to
 * the decoder. */
#define MAX_DEPTH 16
/* The fields of one message counted at once. */
#define MAX_FIELDS 128

typedef struct scan {
  uint64_t total;
  uint64_t id;
  char *message;
  size_t message_size;
} scan;

/* Reads a varint at *p (before end); false when it runs past end or is
 * longer than ten bytes. */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    uint8_t byte = *(*p)++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

/* How many scalars a packed list of type type holds in size bytes. */
static uint64_t packed_count(ProtobufCType type, const uint8_t *p, size_t size) {
  switch (type) {
  case PROTOBUF_C_TYPE_DOUBLE:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_SFIXED64:
    return size / 8;
  case PROTOBUF_C_TYPE_FLOAT:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_SFIXED32:
    return size / 4;
  default: {
    /* Varints: one ends at each byte without its high bit. */
    uint64_t count = 0;
    for (size_t i = 0; i < size; ++i)
      count += !(p[i] & 0x80);
    return count;
  }
  }
}

static bool is_packable(ProtobufCType type) {
  return type != PROTOBUF_C_TYPE_STRING && type != PROTOBUF_C_TYPE_BYTES &&
         type != PROTOBUF_C_TYPE_MESSAGE;
}

/* Counts one message's lists (and those of the messages in it). path is
 * the field path so far ("step"), for the message; NULL: no message (the
 * paths are formatted only to name a list at fault, on a second walk). */
static bool scan_message(const ProtobufCMessageDescriptor *descriptor, const uint8_t *p,
                         const uint8_t *end, int depth, const char *path, scan *s) {
  uint32_t counts[MAX_FIELDS] = {0};
  while (p < end) {
    uint64_t tag;
    if (!read_varint(&p, end, &tag))
      return true;
    uint32_t number = (uint32_t)(tag >> 3);
    int wire = (int)(tag & 7);
    const ProtobufCFieldDescriptor *field =
        number ? protobuf_c_message_descriptor_get_field(descriptor, number) : NULL;
    uint64_t entries = 0;
    switch (wire) {
    case 0: {
      uint64_t value;
      if (!read_varint(&p, end, &value))
        return true;
      if (depth == 0 && number == 1 && s->total == 0)
        s->id = value;
      entries = 1;
      break;
    }
    case 1:
    case 5: {
      size_t width = wire == 1 ? 8 : 4;
      if ((size_t)(end - p) < width)
        return true;
      p += width;
      entries = 1;
      break;
    }
    case 2: {
      uint64_t length;
      if (!read_varint(&p, end, &length) || length > (uint64_t)(end - p))
        return true;
      const uint8_t *inner = p;
      p += length;
      entries = 1;
      if (field && field->label == PROTOBUF_C_LABEL_REPEATED && is_packable(field->type))
        entries = packed_count(field->type, inner, (size_t)length);
      if (field && field->type == PROTOBUF_C_TYPE_MESSAGE && depth + 1 < MAX_DEPTH) {
        char inner_path[160];
        if (path)
          snprintf(inner_path, sizeof inner_path, "%s%s%s", path, *path ? "." : "", field->name);
        if (!scan_message(field->descriptor, inner, inner + length, depth + 1,
                          path ? inner_path : NULL, s))
          return false;
      }
      break;
    }
    default:
      return true; /* groups are not in lcpsim.v1: the decoder refuses them */
    }
    if (!field || field->label != PROTOBUF_C_LABEL_REPEATED)
      continue;
    size_t index = (size_t)(field - descriptor->fields);
    if (index >= MAX_FIELDS)
      continue;
    counts[index] += entries > UINT32_MAX ? UINT32_MAX : (uint32_t)entries;
    s->total += entries;
    if (counts[index] > LCPD_MAX_LIST_ENTRIES) {
      if (path)
        snprintf(s->message, s->message_size,
                 "%s%s%s has more than the %d entries one list of a request may have; send "
                 "several requests",
                 path, *path ? "." : "", field->name, LCPD_MAX_LIST_ENTRIES);
      return false;
    }
    if (s->total > LCPD_MAX_REQUEST_ENTRIES) {
      if (path)
        snprintf(s->message, s->message_size,
                 "the request's lists have more than the %d entries one request may have in all "
                 "(at %s%s%s); send several requests",
                 LCPD_MAX_REQUEST_ENTRIES, path, *path ? "." : "", field->name);
      return false;
    }
  }
  return true;
}

bool lcpd_request_lists_fit(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data,
                            size_t size, uint64_t *id, char *message, size_t message_size) {
  scan s = {.message = message, .message_size = message_size};
  bool fit = scan_message(descriptor, data, data + size, 0, NULL, &s);
  if (!fit) {
    /* Again, the same way, to say where. */
    s = (scan){.message = message, .message_size = message_size};
    scan_message(descriptor, data, data + size, 0, "", &s);
  }
  *id = fit ? 0 : s.id;
  return fit;
}

uint64_t lcpd_request_id(const uint8_t *data, size_t size) {
  const uint8_t *p = data, *end = data + size;
  uint64_t tag, id;
  if (!read_varint(&p, end, &tag) || tag != ((1u << 3) | 0) || !read_varint(&p, end, &id))
    return 0;
  return id;
}
