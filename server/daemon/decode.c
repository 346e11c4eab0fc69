#include "decode.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Wire types (protobuf encoding). */
enum { VARINT = 0, FIXED64 = 1, LENGTH = 2 };

/* Field numbers of lcpsim.proto. */
enum { REQUEST_ID = 1, REQUEST_STEP = 12 };
enum { STEP_STEPS = 1, STEP_TARGETS = 2, STEP_RETURN_STATE = 3, STEP_INCLUDE_CONTACTS = 4 };
enum {
  TARGET_ROBOT = 1,
  TARGET_MODE = 3,
  TARGET_POSITION = 4, /* 4 to 9: the arrays of doubles */
  TARGET_TORQUE = 9,
  TARGET_GRAVITY_COMPENSATION = 11,
};

typedef struct reader {
  const unsigned char *p, *end;
} reader;

/* A varint of at most `most` bytes: protobuf-c takes values of up to 10,
 * and keys and lengths of up to 5. */
static bool read_varint_of(reader *r, uint64_t *out, int most) {
  uint64_t v = 0;
  for (int shift = 0; shift < 7 * most && r->p < r->end; shift += 7) {
    unsigned char byte = *r->p++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

static bool read_varint(reader *r, uint64_t *out) { return read_varint_of(r, out, 10); }

/* The next field's number and wire type: 1, or 0 at the end, or -1 for a
 * key that is not one. */
static int read_key(reader *r, uint32_t *field, int *type) {
  uint64_t key;
  if (r->p >= r->end)
    return 0;
  if (!read_varint_of(r, &key, 5) || key >> 32 || (key >> 3) == 0)
    return -1;
  *field = (uint32_t)(key >> 3);
  *type = (int)(key & 7);
  return 1;
}

/* A bool as encoders write it: one byte, 0 or 1. */
static bool read_bool(reader *r, protobuf_c_boolean *out) {
  if (r->p >= r->end || *r->p > 1)
    return false;
  *out = *r->p++;
  return true;
}

/* A length-delimited field's contents. */
static bool read_length(reader *r, reader *inner) {
  uint64_t length;
  if (!read_varint_of(r, &length, 5) || length > (uint64_t)(r->end - r->p))
    return false;
  *inner = (reader){r->p, r->p + length};
  r->p += length;
  return true;
}

static void *take(lcpd_budget_t *budget, size_t size) {
  return budget->allocator.alloc(budget->allocator.allocator_data, size ? size : 1);
}

/* A packed array of finite doubles, little-endian on the wire. */
static bool read_doubles(lcpd_budget_t *budget, reader *r, size_t *count, double **values) {
  reader in;
  if (!read_length(r, &in))
    return false;
  size_t bytes = (size_t)(in.end - in.p);
  if (bytes == 0 || bytes % 8)
    return false;
  size_t n = bytes / 8;
  double *out = take(budget, bytes);
  if (!out)
    return false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(out, in.p, bytes);
#else
  for (size_t k = 0; k < n; ++k) {
    uint64_t bits = 0;
    for (int b = 7; b >= 0; --b)
      bits = bits << 8 | in.p[8 * k + (size_t)b];
    memcpy(&out[k], &bits, sizeof bits);
  }
#endif
  for (size_t k = 0; k < n; ++k)
    if (!isfinite(out[k]))
      return false;
  *count = n;
  *values = out;
  return true;
}

/* A string of printable ASCII (other strings go the general way). */
static bool read_string(lcpd_budget_t *budget, reader *r, char **out) {
  reader in;
  if (!read_length(r, &in))
    return false;
  size_t length = (size_t)(in.end - in.p);
  for (size_t k = 0; k < length; ++k)
    if (in.p[k] < 0x20 || in.p[k] > 0x7e)
      return false;
  char *text = take(budget, length + 1);
  if (!text)
    return false;
  memcpy(text, in.p, length);
  text[length] = '\0';
  *out = text;
  return true;
}

static bool read_target(lcpd_budget_t *budget, reader *r, Lcpsim__V1__SetTargetRequest *t) {
  uint32_t seen = 0, field;
  int type, more;
  while ((more = read_key(r, &field, &type)) > 0) {
    if (field >= 32 || seen & (UINT32_C(1) << field))
      return false;
    seen |= UINT32_C(1) << field;
    if (field == TARGET_ROBOT && type == LENGTH) {
      if (!read_string(budget, r, &t->robot))
        return false;
    } else if (field == TARGET_MODE && type == VARINT) {
      uint64_t v;
      if (!read_varint(r, &v))
        return false;
      t->mode = (Lcpsim__V1__SetTargetRequest__Mode)(int32_t)(uint32_t)v;
    } else if (field >= TARGET_POSITION && field <= TARGET_TORQUE && type == LENGTH) {
      size_t *count[] = {&t->n_position, &t->n_velocity,     &t->n_kp,
                         &t->n_kd,       &t->n_effort_limit, &t->n_torque};
      double **values[] = {&t->position, &t->velocity,     &t->kp,
                           &t->kd,       &t->effort_limit, &t->torque};
      int k = (int)field - TARGET_POSITION;
      if (!read_doubles(budget, r, count[k], values[k]))
        return false;
    } else if (field == TARGET_GRAVITY_COMPENSATION && type == VARINT) {
      if (!read_bool(r, &t->gravity_compensation))
        return false;
      t->gravity_compensation_value_case =
          LCPSIM__V1__SET_TARGET_REQUEST__GRAVITY_COMPENSATION_VALUE_GRAVITY_COMPENSATION;
    } else {
      return false; /* joints, indices, or a field or type this does not read */
    }
  }
  return more == 0;
}

/* The targets' contents, found by a first pass that counts them. */
#define MAX_TICK_TARGETS 64

static bool read_step(lcpd_budget_t *budget, reader *r, Lcpsim__V1__StepRequest *step) {
  reader targets[MAX_TICK_TARGETS];
  size_t target_count = 0;
  uint32_t seen = 0, field;
  int type, more;
  while ((more = read_key(r, &field, &type)) > 0) {
    if (field == STEP_TARGETS && type == LENGTH) {
      if (target_count == MAX_TICK_TARGETS || !read_length(r, &targets[target_count]))
        return false;
      target_count++;
      continue;
    }
    if (field >= 32 || seen & (UINT32_C(1) << field) || type != VARINT)
      return false;
    seen |= UINT32_C(1) << field;
    if (field == STEP_STEPS) {
      uint64_t v;
      if (!read_varint(r, &v))
        return false;
      step->steps = (int32_t)(uint32_t)v; /* protobuf-c's int32: the low 32 bits */
    } else if (field == STEP_RETURN_STATE) {
      if (!read_bool(r, &step->return_state))
        return false;
    } else if (field == STEP_INCLUDE_CONTACTS) {
      if (!read_bool(r, &step->include_contacts))
        return false;
    } else {
      return false;
    }
  }
  if (more < 0)
    return false;
  if (target_count) {
    step->targets = take(budget, target_count * sizeof *step->targets);
    if (!step->targets)
      return false;
    for (size_t k = 0; k < target_count; ++k) {
      Lcpsim__V1__SetTargetRequest *t = take(budget, sizeof *t);
      if (!t)
        return false;
      lcpsim__v1__set_target_request__init(t);
      if (!read_target(budget, &targets[k], t))
        return false;
      step->targets[k] = t;
    }
    step->n_targets = target_count;
  }
  return true;
}

Lcpsim__V1__Request *lcpd_decode_step_tick(lcpd_budget_t *budget, const void *data, size_t size) {
  reader r = {data, (const unsigned char *)data + size};
  Lcpsim__V1__Request *request = take(budget, sizeof *request);
  if (!request)
    return NULL;
  lcpsim__v1__request__init(request);
  bool have_id = false;
  reader step_bytes = {NULL, NULL};
  uint32_t field;
  int type, more;
  while ((more = read_key(&r, &field, &type)) > 0) {
    if (field == REQUEST_ID && type == VARINT && !have_id) {
      if (!read_varint(&r, &request->id))
        return NULL;
      have_id = true;
    } else if (field == REQUEST_STEP && type == LENGTH && !step_bytes.p) {
      if (!read_length(&r, &step_bytes))
        return NULL;
    } else {
      return NULL;
    }
  }
  if (more < 0 || !step_bytes.p)
    return NULL;
  Lcpsim__V1__StepRequest *step = take(budget, sizeof *step);
  if (!step)
    return NULL;
  lcpsim__v1__step_request__init(step);
  if (!read_step(budget, &step_bytes, step))
    return NULL;
  request->call_case = LCPSIM__V1__REQUEST__CALL_STEP;
  request->step = step;
  return request;
}
