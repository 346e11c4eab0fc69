#include "encode.h"

#include "convert.h"

#include "lcpsim/robot.h"
#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Wire types and field keys of lcpsim.proto (field number << 3 | type). */
enum { VARINT = 0, FIXED64 = 1, LENGTH = 2 };
#define KEY(field, type) ((uint32_t)(field) << 3 | (uint32_t)(type))

void lcpd_wire_init(lcpd_wire_t *wire, size_t limit) { *wire = (lcpd_wire_t){.limit = limit}; }

void lcpd_wire_destroy(lcpd_wire_t *wire) {
  free(wire->data);
  free(wire->scratch);
  *wire = (lcpd_wire_t){.limit = wire->limit};
}

void lcpd_wire_reset(lcpd_wire_t *wire) {
  wire->size = 0;
  wire->failed = false;
}

/* Room for `more` bytes after the written ones; false (and failed) when the
 * message would pass the limit or memory runs out. The usual case, room
 * already there, is checked inline. */
static bool reserve_grow(lcpd_wire_t *w, size_t more);
static inline bool reserve(lcpd_wire_t *w, size_t more) {
  if (!w->failed && more <= w->capacity - w->size && w->size + more <= w->limit)
    return true;
  return reserve_grow(w, more);
}

static bool reserve_grow(lcpd_wire_t *w, size_t more) {
  if (w->failed)
    return false;
  if (more > w->limit || w->size > w->limit - more) {
    w->failed = true;
    return false;
  }
  size_t need = w->size + more;
  if (need <= w->capacity)
    return true;
  size_t capacity = w->capacity ? w->capacity : 4096;
  while (capacity < need)
    capacity *= 2;
  unsigned char *grown = realloc(w->data, capacity);
  if (!grown) {
    w->failed = true;
    return false;
  }
  w->data = grown;
  w->capacity = capacity;
  return true;
}

static size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static unsigned char *put_varint_at(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

static inline void put_varint(lcpd_wire_t *w, uint64_t v) {
  if (reserve(w, 10))
    w->size = (size_t)(put_varint_at(w->data + w->size, v) - w->data);
}

/* Little-endian, whatever the host's order (on a little-endian host one
 * 8-byte copy; compilers do not merge the byte loop into one store). */
static unsigned char *put_double_at(unsigned char *p, double x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &x, 8);
#else
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  for (int i = 0; i < 8; ++i)
    p[i] = (unsigned char)(bits >> (8 * i));
#endif
  return p + 8;
}

/* proto3 scalars are left out when zero, as protobuf-c does (-0.0 too: it
 * compares with == 0). */
static void field_double(lcpd_wire_t *w, uint32_t field, double x) {
  if (x == 0.0 || !reserve(w, 9))
    return;
  unsigned char *p = w->data + w->size;
  *p++ = (unsigned char)KEY(field, FIXED64);
  w->size = (size_t)(put_double_at(p, x) - w->data);
}

static void field_varint(lcpd_wire_t *w, uint32_t field, uint64_t v) {
  if (v == 0)
    return;
  put_varint(w, KEY(field, VARINT));
  put_varint(w, v);
}

/* A nested message: its key and a one-byte length now, the length fixed up
 * by end_message (moving the contents when it needs more bytes). */
static size_t begin_message(lcpd_wire_t *w, uint32_t field) {
  put_varint(w, KEY(field, LENGTH));
  if (!reserve(w, 1))
    return 0;
  w->size++;
  return w->size;
}

static void end_message(lcpd_wire_t *w, size_t start) {
  if (w->failed)
    return;
  size_t length = w->size - start;
  size_t extra = varint_size(length) - 1;
  if (extra && !reserve(w, extra))
    return;
  if (extra)
    memmove(w->data + start + extra, w->data + start, length);
  put_varint_at(w->data + start - 1, length);
  w->size += extra;
}

/* The small messages of a State are written with one room check each:
 * their keys are one byte (fields 1 to 15) and their lengths too (at most
 * 69 bytes). The writers below take and return the write position. */
static unsigned char *double_at(unsigned char *p, uint32_t field, double x) {
  if (x == 0.0)
    return p;
  *p++ = (unsigned char)KEY(field, FIXED64);
  return put_double_at(p, x);
}

enum { VEC3_MOST = 2 + 3 * 9, QUAT_MOST = 2 + 4 * 9, POSE_MOST = 2 + VEC3_MOST + QUAT_MOST };

static unsigned char *vec3_at(unsigned char *p, uint32_t field, const double v[3]) {
  *p++ = (unsigned char)KEY(field, LENGTH);
  unsigned char *length = p++;
  p = double_at(p, 1, v[0]);
  p = double_at(p, 2, v[1]);
  p = double_at(p, 3, v[2]);
  *length = (unsigned char)(p - length - 1);
  return p;
}

static unsigned char *pose_at(unsigned char *p, uint32_t field, const double position[3],
                              const double orientation[4]) {
  *p++ = (unsigned char)KEY(field, LENGTH);
  unsigned char *length = p++;
  p = vec3_at(p, 1, position);
  *p++ = (unsigned char)KEY(2, LENGTH);
  unsigned char *quat_length = p++;
  for (uint32_t k = 0; k < 4; ++k)
    p = double_at(p, k + 1, orientation[k]);
  *quat_length = (unsigned char)(p - quat_length - 1);
  *length = (unsigned char)(p - length - 1);
  return p;
}

static unsigned char *twist_at(unsigned char *p, uint32_t field, const double linear[3],
                               const double angular[3]) {
  *p++ = (unsigned char)KEY(field, LENGTH);
  unsigned char *length = p++;
  p = vec3_at(p, 1, linear);
  p = vec3_at(p, 2, angular);
  *length = (unsigned char)(p - length - 1);
  return p;
}

enum { TWIST_MOST = 2 + 2 * VEC3_MOST, FIELD_HEAD_MOST = 1 + 10 };

/* A string field (left out when empty), with room already made. */
static unsigned char *string_at(unsigned char *p, uint32_t field, const char *text, size_t size) {
  if (size == 0)
    return p;
  *p++ = (unsigned char)KEY(field, LENGTH);
  p = put_varint_at(p, size);
  memcpy(p, text, size);
  return p + size;
}

static void field_string(lcpd_wire_t *w, uint32_t field, const char *text) {
  size_t size = strlen(text);
  if (reserve(w, FIELD_HEAD_MOST + size))
    w->size = (size_t)(string_at(w->data + w->size, field, text, size) - w->data);
}

/* A packed repeated double (left out when empty), with room already made. */
static unsigned char *doubles_at(unsigned char *p, uint32_t field, const double *x, size_t n) {
  if (n == 0)
    return p;
  *p++ = (unsigned char)KEY(field, LENGTH);
  p = put_varint_at(p, 8 * (uint64_t)n);
  for (size_t i = 0; i < n; ++i)
    p = put_double_at(p, x[i]);
  return p;
}

static void message_vec3(lcpd_wire_t *w, uint32_t field, const double v[3]) {
  if (reserve(w, VEC3_MOST))
    w->size = (size_t)(vec3_at(w->data + w->size, field, v) - w->data);
}

/* At least `bytes` of scratch, aligned for doubles and contacts. */
static void *scratch(lcpd_wire_t *w, size_t bytes) {
  if (bytes <= w->scratch_capacity)
    return w->scratch;
  void *grown = realloc(w->scratch, bytes);
  if (!grown) {
    w->failed = true;
    return NULL;
  }
  w->scratch = grown;
  w->scratch_capacity = bytes;
  return grown;
}

/* As new_robot_state in convert.c. Its size is bounded by its counts: one
 * room check, then the fields written unchecked. */
static void message_robot_state(lcpd_wire_t *w, const lcp_world_t *world,
                                const lcpd_robot_t *robot) {
  lcp_robot_info_t info = {0};
  lcp_robot_get_info(world, robot->id, &info);
  int32_t nq = info.nq > 0 ? info.nq : 0, nv = info.nv > 0 ? info.nv : 0;
  int32_t nj = info.joint_count > 0 ? info.joint_count : 0;
  int32_t links = robot->link_count > 0 ? robot->link_count : 0;
  size_t values_count = (size_t)nq + (size_t)nv + (size_t)nj;
  double *values = scratch(w, sizeof(double) * (values_count > 0 ? values_count : 1));
  if (!values)
    return;
  double *q = values, *qd = q + nq, *torques = qd + nv;
  memset(values, 0, sizeof(double) * values_count);
  lcp_robot_get_q(world, robot->id, q, info.nq);
  lcp_robot_get_qd(world, robot->id, qd, info.nv);
  lcp_robot_get_applied_torques(world, robot->id, torques, info.joint_count);
  size_t name = strlen(robot->name);
  size_t most = 4 * FIELD_HEAD_MOST + name + 8 * values_count + POSE_MOST + TWIST_MOST +
                (size_t)links * POSE_MOST;
  size_t m = begin_message(w, 3);
  if (!reserve(w, most))
    return;
  unsigned char *p = w->data + w->size;
  p = string_at(p, 1, robot->name, name);
  p = doubles_at(p, 2, q, (size_t)nq);
  p = doubles_at(p, 3, qd, (size_t)nv);
  p = doubles_at(p, 4, torques, (size_t)nj);
  double position[3] = {0}, orientation[4] = {1, 0, 0, 0}, linear[3] = {0}, angular[3] = {0};
  lcp_robot_get_link_pose(world, robot->id, 0, position, orientation);
  lcp_robot_get_link_velocity(world, robot->id, 0, linear, angular);
  p = pose_at(p, 5, position, orientation);
  p = twist_at(p, 6, linear, angular);
  for (int32_t k = 0; k < links; ++k) {
    lcp_robot_get_link_pose(world, robot->id, k, position, orientation);
    p = pose_at(p, 7, position, orientation);
  }
  w->size = (size_t)(p - w->data);
  end_message(w, m);
}

/* A contact side's name (lcpd_contact_side_name) as string field `field`. */
static void contact_side(lcpd_wire_t *w, uint32_t field, const lcpd_sim_t *sim, lcp_body_id body,
                         int32_t robot_id, int32_t link) {
  char name[LCPD_CONTACT_SIDE_NAME_MAX];
  lcpd_contact_side_name(name, sizeof name, sim, body, robot_id, link);
  field_string(w, field, name);
}

void lcpd_encode_state(lcpd_wire_t *w, const lcpd_sim_t *sim, bool include_contacts,
                       uint64_t sequence) {
  const lcp_world_t *world = sim->live.world;
  field_double(w, 1, lcp_world_time(world));
  field_varint(w, 2, lcp_world_step_count(world));
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    message_robot_state(w, world, &sim->live.robots[i]);
  for (int32_t i = 0; i < sim->live.body_count; ++i) {
    const lcpd_body_t *body = &sim->live.bodies[i];
    double position[3] = {0}, orientation[4] = {1, 0, 0, 0}, linear[3] = {0}, angular[3] = {0};
    lcp_body_get_pose(world, body->id, position, orientation);
    lcp_body_get_velocity(world, body->id, linear, angular);
    /* one room check: its size is bounded by its name's length */
    size_t name = strlen(body->name);
    size_t m = begin_message(w, 4);
    if (!reserve(w, 2 * FIELD_HEAD_MOST + name + POSE_MOST + TWIST_MOST))
      return;
    unsigned char *p = w->data + w->size;
    uint32_t id = (uint32_t)body->id;
    if (id) {
      *p++ = (unsigned char)KEY(1, VARINT);
      p = put_varint_at(p, id);
    }
    p = string_at(p, 2, body->name, name);
    p = pose_at(p, 3, position, orientation);
    p = twist_at(p, 4, linear, angular);
    w->size = (size_t)(p - w->data);
    end_message(w, m);
  }
  if (include_contacts) {
    int32_t count = lcp_world_get_contacts(world, NULL, 0);
    lcp_contact_info_t *contacts = count > 0 ? scratch(w, (size_t)count * sizeof *contacts) : NULL;
    if (contacts)
      count = lcp_world_get_contacts(world, contacts, count);
    for (int32_t i = 0; contacts && i < count; ++i) {
      const lcp_contact_info_t *c = &contacts[i];
      size_t m = begin_message(w, 5);
      contact_side(w, 1, sim, c->body_a, c->robot_a, c->link_a);
      contact_side(w, 2, sim, c->body_b, c->robot_b, c->link_b);
      message_vec3(w, 3, c->position);
      message_vec3(w, 4, c->normal);
      field_double(w, 5, c->depth);
      field_double(w, 6, c->normal_impulse);
      end_message(w, m);
    }
  }
  field_varint(w, 6, sequence);
}

/* Reply { id = 1; status = 2 (OK: an empty Status); <result> }. */
static void reply_head(lcpd_wire_t *w, uint64_t id) {
  field_varint(w, 1, id);
  size_t status = begin_message(w, 2);
  end_message(w, status);
}

void lcpd_encode_step_reply(lcpd_wire_t *w, uint64_t id, const lcpd_sim_t *sim, bool state,
                            bool include_contacts) {
  reply_head(w, id);
  size_t m = begin_message(w, LCPSIM__V1__REPLY__RESULT_STEP);
  field_double(w, 1, lcp_world_time(sim->live.world));
  field_varint(w, 2, lcp_world_step_count(sim->live.world));
  if (state) {
    size_t s = begin_message(w, 3);
    lcpd_encode_state(w, sim, include_contacts, 0);
    end_message(w, s);
  }
  end_message(w, m);
}

void lcpd_encode_get_state_reply(lcpd_wire_t *w, uint64_t id, const lcpd_sim_t *sim,
                                 bool include_contacts) {
  reply_head(w, id);
  size_t m = begin_message(w, LCPSIM__V1__REPLY__RESULT_GET_STATE);
  size_t s = begin_message(w, 1);
  lcpd_encode_state(w, sim, include_contacts, 0);
  end_message(w, s);
  end_message(w, m);
}
