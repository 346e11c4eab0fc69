/* SPDX-License-Identifier: Apache-2.0 */
#include "convert.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

lcpd_code_t lcpd_code_of(int lcp_status) {
  switch (lcp_status) {
  case LCP_OK:
    return LCPSIM__V1__STATUS__CODE__OK;
  case LCP_ERR_INVALID_ARGUMENT:
  case LCP_ERR_DEGENERATE:
    return LCPSIM__V1__STATUS__CODE__INVALID_ARGUMENT;
  case LCP_ERR_NOT_FOUND:
    return LCPSIM__V1__STATUS__CODE__NOT_FOUND;
  case LCP_ERR_NO_MEMORY:
    return LCPSIM__V1__STATUS__CODE__RESOURCE_EXHAUSTED;
  case LCP_ERR_MISMATCH:
  case LCP_ERR_STATE:
    return LCPSIM__V1__STATUS__CODE__FAILED_PRECONDITION;
  default:
    return LCPSIM__V1__STATUS__CODE__INTERNAL;
  }
}

const char *lcpd_code_name(lcpd_code_t code) {
  const ProtobufCEnumValue *value =
      protobuf_c_enum_descriptor_get_value(&lcpsim__v1__status__code__descriptor, (int)code);
  return value ? value->name : "UNKNOWN";
}

/* ---- every number finite, every string UTF-8 ---- */

typedef struct path_buffer {
  char *text;
  size_t size;
} path_buffer;

/* Appends to the path; returns the old length so the caller can cut back.
 * Without a path (NULL: the first, fast walk) does nothing. */
static size_t path_push(path_buffer *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static size_t path_push(path_buffer *path, const char *fmt, ...) {
  if (!path)
    return 0;
  size_t length = strlen(path->text);
  if (length + 1 < path->size) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(path->text + length, path->size - length, fmt, args);
    va_end(args);
  }
  return length;
}

static lcpd_values_t message_values(const ProtobufCMessage *message, path_buffer *path, int depth);

static lcpd_values_t value_check(const ProtobufCFieldDescriptor *field, const void *value,
                                 path_buffer *path, int depth) {
  switch (field->type) {
  case PROTOBUF_C_TYPE_DOUBLE: {
    double x;
    memcpy(&x, value, sizeof x);
    return isfinite(x) ? LCPD_VALUES_OK : LCPD_VALUE_NOT_FINITE;
  }
  case PROTOBUF_C_TYPE_FLOAT: {
    float x;
    memcpy(&x, value, sizeof x);
    return isfinite(x) ? LCPD_VALUES_OK : LCPD_VALUE_NOT_FINITE;
  }
  case PROTOBUF_C_TYPE_STRING: {
    const char *text;
    memcpy(&text, value, sizeof text);
    return !text || lcpd_utf8_valid(text, strlen(text)) ? LCPD_VALUES_OK : LCPD_VALUE_NOT_UTF8;
  }
  case PROTOBUF_C_TYPE_MESSAGE: {
    const ProtobufCMessage *child;
    memcpy(&child, value, sizeof child);
    return child ? message_values(child, path, depth + 1) : LCPD_VALUES_OK;
  }
  default:
    return LCPD_VALUES_OK;
  }
}

static lcpd_values_t message_values(const ProtobufCMessage *message, path_buffer *path, int depth) {
  const ProtobufCMessageDescriptor *descriptor = message->descriptor;
  const unsigned char *base = (const unsigned char *)message;
  for (unsigned i = 0; i < descriptor->n_fields; ++i) {
    const ProtobufCFieldDescriptor *field = &descriptor->fields[i];
    if (field->type != PROTOBUF_C_TYPE_DOUBLE && field->type != PROTOBUF_C_TYPE_FLOAT &&
        field->type != PROTOBUF_C_TYPE_STRING && field->type != PROTOBUF_C_TYPE_MESSAGE)
      continue;
    if (field->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
      /* Members of a oneof share storage: only the set one may be read. */
      uint32_t set_case;
      memcpy(&set_case, base + field->quantifier_offset, sizeof set_case);
      if (set_case != field->id)
        continue;
    }
    size_t mark = path_push(path, "%s%s", depth ? "." : "", field->name);
    lcpd_values_t bad = LCPD_VALUES_OK;
    if (field->label == PROTOBUF_C_LABEL_REPEATED) {
      size_t count;
      memcpy(&count, base + field->quantifier_offset, sizeof count);
      const unsigned char *array;
      memcpy(&array, base + field->offset, sizeof array);
      size_t element = field->type == PROTOBUF_C_TYPE_DOUBLE  ? sizeof(double)
                       : field->type == PROTOBUF_C_TYPE_FLOAT ? sizeof(float)
                                                              : sizeof(void *);
      for (size_t k = 0; k < count && bad == LCPD_VALUES_OK; ++k) {
        size_t item_mark = path_push(path, "[%zu]", k);
        bad = value_check(field, array + k * element, path, depth);
        if (path && bad == LCPD_VALUES_OK)
          path->text[item_mark] = '\0';
      }
    } else {
      bad = value_check(field, base + field->offset, path, depth);
    }
    if (bad != LCPD_VALUES_OK)
      return bad;
    if (path)
      path->text[mark] = '\0';
  }
  return LCPD_VALUES_OK;
}

lcpd_values_t lcpd_check_values(const ProtobufCMessage *message, char *path, size_t path_size) {
  path[0] = '\0';
  /* Formatting the path of every value visited cost more than the rest of
   * a control tick's decoding: walk without it, and again with it only to
   * name a value at fault. */
  if (message_values(message, NULL, 0) == LCPD_VALUES_OK)
    return LCPD_VALUES_OK;
  path_buffer buffer = {path, path_size};
  return message_values(message, &buffer, 0);
}

/* ---- reading ---- */

void lcpd_read_vec3(const Lcpsim__V1__Vec3 *v, double out[3]) {
  out[0] = v ? v->x : 0.0;
  out[1] = v ? v->y : 0.0;
  out[2] = v ? v->z : 0.0;
}

int lcpd_read_pose(const Lcpsim__V1__Pose *pose, double position[3], double orientation[4],
                   const char *field, lcpd_error_t *error) {
  lcpd_read_vec3(pose ? pose->position : NULL, position);
  const Lcpsim__V1__Quat *q = pose ? pose->orientation : NULL;
  if (!q) {
    orientation[0] = 1.0;
    orientation[1] = orientation[2] = orientation[3] = 0.0;
    return LCP_OK;
  }
  orientation[0] = q->w;
  orientation[1] = q->x;
  orientation[2] = q->y;
  orientation[3] = q->z;
  if (!lcp_quat_is_valid(orientation))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s.orientation must be a non-zero quaternion (w, x, y, z)", field);
  return LCP_OK;
}

int lcpd_read_shape(const Lcpsim__V1__Shape *shape, lcpd_shape_t *out, lcpd_error_t *error) {
  if (!shape)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "spawn.shape is missing");
  *out = (lcpd_shape_t){.radius = shape->radius, .half_length = shape->half_length};
  lcpd_read_vec3(shape->half_extents, out->half_extents);
  switch (shape->type) {
  case LCPSIM__V1__SHAPE__TYPE__SPHERE:
    out->type = LCP_SHAPE_SPHERE;
    return LCP_OK;
  case LCPSIM__V1__SHAPE__TYPE__BOX:
    out->type = LCP_SHAPE_BOX;
    return LCP_OK;
  case LCPSIM__V1__SHAPE__TYPE__CAPSULE:
    out->type = LCP_SHAPE_CAPSULE;
    return LCP_OK;
  case LCPSIM__V1__SHAPE__TYPE__CYLINDER:
    out->type = LCP_SHAPE_CYLINDER;
    return LCP_OK;
  default:
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "spawn.shape.type must be SPHERE, BOX, CAPSULE or CYLINDER (got %d)",
                     (int)shape->type);
  }
}

/* ---- building (NULL when the arena refuses) ---- */

Lcpsim__V1__Vec3 *lcpd_new_vec3(lcpd_arena_t *arena, const double v[3]) {
  Lcpsim__V1__Vec3 *m = LCPD_NEW(arena, Lcpsim__V1__Vec3);
  if (!m)
    return NULL;
  lcpsim__v1__vec3__init(m);
  m->x = v[0];
  m->y = v[1];
  m->z = v[2];
  return m;
}

Lcpsim__V1__Pose *lcpd_new_pose(lcpd_arena_t *arena, const double position[3],
                                const double orientation[4]) {
  Lcpsim__V1__Pose *m = LCPD_NEW(arena, Lcpsim__V1__Pose);
  Lcpsim__V1__Vec3 *p = lcpd_new_vec3(arena, position);
  Lcpsim__V1__Quat *q = LCPD_NEW(arena, Lcpsim__V1__Quat);
  if (!m || !p || !q)
    return NULL;
  lcpsim__v1__pose__init(m);
  lcpsim__v1__quat__init(q);
  q->w = orientation[0];
  q->x = orientation[1];
  q->y = orientation[2];
  q->z = orientation[3];
  m->position = p;
  m->orientation = q;
  return m;
}

Lcpsim__V1__Twist *lcpd_new_twist(lcpd_arena_t *arena, const double linear[3],
                                  const double angular[3]) {
  Lcpsim__V1__Twist *m = LCPD_NEW(arena, Lcpsim__V1__Twist);
  Lcpsim__V1__Vec3 *l = lcpd_new_vec3(arena, linear), *a = lcpd_new_vec3(arena, angular);
  if (!m || !l || !a)
    return NULL;
  lcpsim__v1__twist__init(m);
  m->linear = l;
  m->angular = a;
  return m;
}

Lcpsim__V1__Shape *lcpd_new_shape(lcpd_arena_t *arena, const lcpd_shape_t *shape) {
  Lcpsim__V1__Shape *m = LCPD_NEW(arena, Lcpsim__V1__Shape);
  if (!m)
    return NULL;
  lcpsim__v1__shape__init(m);
  switch (shape->type) {
  case LCP_SHAPE_SPHERE:
    m->type = LCPSIM__V1__SHAPE__TYPE__SPHERE;
    m->radius = shape->radius;
    break;
  case LCP_SHAPE_BOX:
    m->type = LCPSIM__V1__SHAPE__TYPE__BOX;
    m->half_extents = lcpd_new_vec3(arena, shape->half_extents);
    if (!m->half_extents)
      return NULL;
    break;
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    m->type = shape->type == LCP_SHAPE_CAPSULE ? LCPSIM__V1__SHAPE__TYPE__CAPSULE
                                               : LCPSIM__V1__SHAPE__TYPE__CYLINDER;
    m->radius = shape->radius;
    m->half_length = shape->half_length;
    break;
  default:
    break;
  }
  return m;
}

Lcpsim__V1__Settings *lcpd_new_settings(lcpd_arena_t *arena, const lcpd_sim_t *sim) {
  lcp_world_settings_t s;
  lcp_world_get_settings(sim->live.world, &s);
  Lcpsim__V1__Settings *m = LCPD_NEW(arena, Lcpsim__V1__Settings);
  Lcpsim__V1__Vec3 *gravity = lcpd_new_vec3(arena, s.gravity);
  if (!m || !gravity)
    return NULL;
  lcpsim__v1__settings__init(m);
  m->timestep = s.timestep;
  m->gravity = gravity;
  m->iterations = s.iterations;
  m->sor_omega = s.sor_omega;
  m->friction_model = s.friction_model == LCP_FRICTION_BOX
                          ? LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_BOX
                          : LCPSIM__V1__SETTINGS__FRICTION_MODEL__FRICTION_CONE;
  m->mode = sim->mode == LCPD_MODE_REALTIME ? LCPSIM__V1__SETTINGS__MODE__MODE_REALTIME
                                            : LCPSIM__V1__SETTINGS__MODE__MODE_LOCKSTEP;
  m->rate = sim->rate;
  m->baumgarte_beta = s.baumgarte_beta;
  m->baumgarte_slop = s.baumgarte_slop;
  m->max_push_speed = s.max_push_speed;
  m->relax_iterations = s.relax_iterations;
  m->restitution_threshold = s.restitution_threshold;
  m->enforce_velocity_limits = s.enforce_velocity_limits;
  return m;
}

static Lcpsim__V1__JointInfo__Type joint_type(lcp_joint_type_t type) {
  switch (type) {
  case LCP_JOINT_REVOLUTE:
    return LCPSIM__V1__JOINT_INFO__TYPE__REVOLUTE;
  case LCP_JOINT_CONTINUOUS:
    return LCPSIM__V1__JOINT_INFO__TYPE__CONTINUOUS;
  case LCP_JOINT_PRISMATIC:
    return LCPSIM__V1__JOINT_INFO__TYPE__PRISMATIC;
  default:
    return LCPSIM__V1__JOINT_INFO__TYPE__FIXED;
  }
}

static Lcpsim__V1__JointInfo *new_joint_info(lcpd_arena_t *arena, const lcp_joint_info_t *ji,
                                             int32_t index) {
  Lcpsim__V1__JointInfo *m = LCPD_NEW(arena, Lcpsim__V1__JointInfo);
  if (!m)
    return NULL;
  lcpsim__v1__joint_info__init(m);
  m->name = lcpd_arena_strdup(arena, ji->name);
  m->child_link = lcpd_arena_strdup(arena, ji->child_link);
  m->axis = lcpd_new_vec3(arena, ji->axis);
  if (!m->name || !m->child_link || !m->axis)
    return NULL;
  m->type = joint_type(ji->type);
  m->index = index;
  m->has_limits = ji->has_limits;
  m->lower = ji->lower;
  m->upper = ji->upper;
  m->effort_limit = ji->effort_limit;
  m->velocity_limit = ji->velocity_limit;
  m->damping = ji->damping;
  m->friction = ji->friction;
  return m;
}

Lcpsim__V1__RobotInfo *lcpd_new_robot_info(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                           const lcpd_robot_t *robot) {
  const lcp_world_t *world = sim->live.world;
  lcp_robot_info_t info = {0};
  lcp_robot_get_info(world, robot->id, &info);
  size_t joints = info.joint_count > 0 ? (size_t)info.joint_count : 0;
  Lcpsim__V1__RobotInfo *m = LCPD_NEW(arena, Lcpsim__V1__RobotInfo);
  if (!m)
    return NULL;
  lcpsim__v1__robot_info__init(m);
  m->name = lcpd_arena_strdup(arena, robot->name);
  m->joints = lcpd_arena_array(arena, joints, sizeof *m->joints);
  m->links = lcpd_arena_array(arena, (size_t)robot->link_count, sizeof *m->links);
  if (!m->name || !m->joints || !m->links)
    return NULL;
  m->floating_base = info.floating_base;
  m->nq = info.nq;
  m->nv = info.nv;
  m->n_joints = joints;
  for (size_t j = 0; j < joints; ++j) {
    lcp_joint_info_t ji = {0};
    lcp_robot_get_joint(world, robot->id, (int32_t)j, &ji);
    if (!(m->joints[j] = new_joint_info(arena, &ji, (int32_t)j)))
      return NULL;
  }
  m->n_links = (size_t)robot->link_count;
  for (int32_t k = 0; k < robot->link_count; ++k)
    if (!(m->links[k] = lcpd_arena_strdup(arena, robot->link_names[k])))
      return NULL;
  int32_t frames = 0;
  lcp_robot_get_frame_count(world, robot->id, &frames);
  if (frames > 0 && !(m->frames = lcpd_arena_array(arena, (size_t)frames, sizeof *m->frames)))
    return NULL;
  m->n_frames = (size_t)frames;
  for (int32_t k = 0; k < frames; ++k) {
    lcp_frame_info_t fi;
    lcp_robot_get_frame(world, robot->id, k, &fi);
    Lcpsim__V1__FrameInfo *f = LCPD_NEW(arena, Lcpsim__V1__FrameInfo);
    if (!f)
      return NULL;
    lcpsim__v1__frame_info__init(f);
    f->name = lcpd_arena_strdup(arena, fi.name);
    f->link = lcpd_arena_strdup(arena, fi.link_name);
    f->offset = lcpd_new_pose(arena, fi.position, fi.orientation);
    if (!f->name || !f->link || !f->offset)
      return NULL;
    m->frames[k] = f;
  }
  return m;
}

Lcpsim__V1__BodyInfo *lcpd_new_body_info(lcpd_arena_t *arena, const lcpd_body_t *body) {
  Lcpsim__V1__BodyInfo *m = LCPD_NEW(arena, Lcpsim__V1__BodyInfo);
  if (!m)
    return NULL;
  lcpsim__v1__body_info__init(m);
  m->name = lcpd_arena_strdup(arena, body->name);
  m->shape = lcpd_new_shape(arena, &body->shape);
  if (!m->name || !m->shape)
    return NULL;
  m->id = (uint32_t)body->id;
  m->is_static = body->is_static;
  m->mass = body->mass;
  return m;
}

static double *new_doubles(lcpd_arena_t *arena, int32_t count) {
  return lcpd_arena_array(arena, count > 0 ? (size_t)count : 0, sizeof(double));
}

/* ---- sensors (the Sensors block of lcpsim.proto) ---- */

static Lcpsim__V1__Wrench *new_wrench(lcpd_arena_t *arena, const double w[6]) {
  Lcpsim__V1__Wrench *m = LCPD_NEW(arena, Lcpsim__V1__Wrench);
  if (!m)
    return NULL;
  lcpsim__v1__wrench__init(m);
  m->force = lcpd_new_vec3(arena, w);
  m->torque = lcpd_new_vec3(arena, w + 3);
  return m->force && m->torque ? m : NULL;
}

static Lcpsim__V1__ContactWrench *new_contact_wrench(lcpd_arena_t *arena, const double normal[6],
                                                     const double friction[6]) {
  Lcpsim__V1__ContactWrench *m = LCPD_NEW(arena, Lcpsim__V1__ContactWrench);
  if (!m)
    return NULL;
  lcpsim__v1__contact_wrench__init(m);
  m->normal = new_wrench(arena, normal);
  m->friction = new_wrench(arena, friction);
  return m->normal && m->friction ? m : NULL;
}

/* The energy of a robot or a body, by the engine's getter of its kind. */
static Lcpsim__V1__Energy *new_energy(lcpd_arena_t *arena, const lcp_world_t *world, int32_t id,
                                      int (*get)(const lcp_world_t *, int32_t, double *,
                                                 double *)) {
  Lcpsim__V1__Energy *m = LCPD_NEW(arena, Lcpsim__V1__Energy);
  if (!m)
    return NULL;
  lcpsim__v1__energy__init(m);
  get(world, id, &m->kinetic, &m->potential);
  return m;
}

/* An array of n message pointers, or NULL. */
static void *new_pointers(lcpd_arena_t *arena, int32_t n) {
  return lcpd_arena_array(arena, n > 0 ? (size_t)n : 0, sizeof(void *));
}

static bool add_link_twists(lcpd_arena_t *arena, const lcp_world_t *world,
                            const lcpd_robot_t *robot, Lcpsim__V1__RobotState *m) {
  int32_t n = robot->link_count;
  if (!(m->link_twists = new_pointers(arena, n)) ||
      !(m->link_twists_local = new_pointers(arena, n)))
    return false;
  for (int32_t l = 0; l < n; ++l) {
    double v[3] = {0}, w[3] = {0};
    lcp_robot_get_link_velocity(world, robot->id, l, v, w);
    if (!(m->link_twists[l] = lcpd_new_twist(arena, v, w)))
      return false;
    lcp_robot_get_link_velocity_local(world, robot->id, l, v, w);
    if (!(m->link_twists_local[l] = lcpd_new_twist(arena, v, w)))
      return false;
  }
  m->n_link_twists = m->n_link_twists_local = (size_t)n;
  return true;
}

static bool add_link_accelerations(lcpd_arena_t *arena, const lcp_world_t *world,
                                   const lcpd_robot_t *robot, const lcp_robot_info_t *info,
                                   Lcpsim__V1__RobotState *m) {
  int32_t n = robot->link_count;
  double *acc = new_doubles(arena, 6 * n);
  m->qdd = new_doubles(arena, info->nv);
  if (!acc || !m->qdd || !(m->link_accelerations = new_pointers(arena, n)))
    return false;
  lcp_robot_get_qdd(world, robot->id, m->qdd, info->nv);
  m->n_qdd = (size_t)info->nv;
  lcp_robot_get_link_accelerations(world, robot->id, acc, n);
  for (int32_t l = 0; l < n; ++l) {
    Lcpsim__V1__Acceleration *a = LCPD_NEW(arena, Lcpsim__V1__Acceleration);
    if (!a)
      return false;
    lcpsim__v1__acceleration__init(a);
    a->linear = lcpd_new_vec3(arena, acc + 6 * l);
    a->angular = lcpd_new_vec3(arena, acc + 6 * l + 3);
    if (!a->linear || !a->angular)
      return false;
    m->link_accelerations[l] = a;
  }
  m->n_link_accelerations = (size_t)n;
  return true;
}

/* Per movable joint: its child link's reaction wrench, in world axes and
 * turned into the child link's (Rᵀ f, Rᵀ τ). */
static bool add_joint_wrenches(lcpd_arena_t *arena, const lcp_world_t *world,
                               const lcpd_robot_t *robot, const lcp_robot_info_t *info,
                               Lcpsim__V1__RobotState *m) {
  double *all = new_doubles(arena, 6 * robot->link_count);
  if (!all || !(m->joint_wrenches = new_pointers(arena, info->joint_count)))
    return false;
  lcp_robot_get_joint_wrenches(world, robot->id, all, robot->link_count);
  for (int32_t j = 0; j < info->joint_count; ++j) {
    lcp_joint_info_t ji;
    int32_t link = 0;
    lcp_robot_get_joint(world, robot->id, j, &ji);
    lcp_robot_find_link(world, robot->id, ji.child_link, &link);
    double position[3], q[4], local[6];
    lcp_robot_get_link_pose(world, robot->id, link, position, q);
    const double inverse[4] = {q[0], -q[1], -q[2], -q[3]};
    lcp_quat_rotate(inverse, all + 6 * link, local);
    lcp_quat_rotate(inverse, all + 6 * link + 3, local + 3);
    Lcpsim__V1__JointWrench *w = LCPD_NEW(arena, Lcpsim__V1__JointWrench);
    if (!w)
      return false;
    lcpsim__v1__joint_wrench__init(w);
    w->joint = lcpd_arena_strdup(arena, ji.name);
    w->world = new_wrench(arena, all + 6 * link);
    w->local = new_wrench(arena, local);
    if (!w->joint || !w->world || !w->local)
      return false;
    m->joint_wrenches[j] = w;
  }
  m->n_joint_wrenches = (size_t)info->joint_count;
  return true;
}

static bool add_link_contact_wrenches(lcpd_arena_t *arena, const lcp_world_t *world,
                                      const lcpd_robot_t *robot, Lcpsim__V1__RobotState *m) {
  int32_t n = robot->link_count;
  double *all = new_doubles(arena, 12 * n);
  if (!all || !(m->link_contact_wrenches = new_pointers(arena, n)))
    return false;
  lcp_robot_get_contact_wrenches(world, robot->id, all, n);
  for (int32_t l = 0; l < n; ++l)
    if (!(m->link_contact_wrenches[l] = new_contact_wrench(arena, all + 12 * l, all + 12 * l + 6)))
      return false;
  m->n_link_contact_wrenches = (size_t)n;
  return true;
}

static bool add_imus(lcpd_arena_t *arena, const lcp_world_t *world, const lcpd_robot_t *robot,
                     Lcpsim__V1__RobotState *m) {
  int32_t count = lcp_world_imu_count(world), mine = 0;
  lcp_imu_def_t def;
  for (int32_t i = 0; i < count; ++i)
    mine += lcp_imu_get_def(world, i, &def) == LCP_OK && def.robot == robot->id;
  if (mine == 0)
    return true;
  if (!(m->imus = new_pointers(arena, mine)))
    return false;
  for (int32_t i = 0; i < count; ++i) {
    double f[3], rate[3];
    if (lcp_imu_get_def(world, i, &def) != LCP_OK || def.robot != robot->id ||
        lcp_imu_read(world, i, f, rate) != LCP_OK)
      continue;
    Lcpsim__V1__ImuReading *r = LCPD_NEW(arena, Lcpsim__V1__ImuReading);
    if (!r)
      return false;
    lcpsim__v1__imu_reading__init(r);
    r->name = lcpd_arena_strdup(arena, def.name);
    r->link = lcpd_arena_strdup(
        arena, def.link >= 0 && def.link < robot->link_count ? robot->link_names[def.link] : "");
    r->specific_force = lcpd_new_vec3(arena, f);
    r->angular_rate = lcpd_new_vec3(arena, rate);
    if (!r->name || !r->link || !r->specific_force || !r->angular_rate)
      return false;
    m->imus[m->n_imus++] = r;
  }
  return true;
}

static bool add_robot_sensors(lcpd_arena_t *arena, const lcp_world_t *world,
                              const lcpd_robot_t *robot, const lcp_robot_info_t *info,
                              const Lcpsim__V1__Sensors *sensors, Lcpsim__V1__RobotState *m) {
  if (sensors->link_twists && !add_link_twists(arena, world, robot, m))
    return false;
  if (sensors->link_accelerations && !add_link_accelerations(arena, world, robot, info, m))
    return false;
  if (sensors->joint_wrenches && !add_joint_wrenches(arena, world, robot, info, m))
    return false;
  if (sensors->contact_wrenches && !add_link_contact_wrenches(arena, world, robot, m))
    return false;
  if (sensors->imus && !add_imus(arena, world, robot, m))
    return false;
  return !sensors->energy ||
         (m->energy = new_energy(arena, world, robot->id, lcp_robot_get_energy));
}

static bool add_body_sensors(lcpd_arena_t *arena, const lcp_world_t *world, const lcpd_body_t *body,
                             const Lcpsim__V1__Sensors *sensors, Lcpsim__V1__BodyState *m) {
  if (sensors->contact_wrenches) {
    double normal[6] = {0}, friction[6] = {0};
    lcp_body_get_contact_wrench(world, body->id, normal, friction);
    if (!(m->contact_wrench = new_contact_wrench(arena, normal, friction)))
      return false;
  }
  return !sensors->energy || (m->energy = new_energy(arena, world, body->id, lcp_body_get_energy));
}

static Lcpsim__V1__SolverStats *new_solver_stats(lcpd_arena_t *arena, const lcp_world_t *world) {
  Lcpsim__V1__SolverStats *m = LCPD_NEW(arena, Lcpsim__V1__SolverStats);
  if (!m)
    return NULL;
  lcpsim__v1__solver_stats__init(m);
  lcp_step_stats_t stats;
  lcp_world_get_stats(world, &stats);
  m->pairs = stats.pairs;
  m->manifolds = stats.manifolds;
  m->contacts = stats.contacts;
  m->rows = stats.rows;
  m->iterations = stats.iterations;
  m->residual = stats.residual;
  m->warm_started = stats.warm_started;
  return m;
}

static Lcpsim__V1__RobotState *new_robot_state(lcpd_arena_t *arena, const lcp_world_t *world,
                                               const lcpd_robot_t *robot,
                                               const Lcpsim__V1__Sensors *sensors) {
  lcp_robot_info_t info = {0};
  lcp_robot_get_info(world, robot->id, &info);
  Lcpsim__V1__RobotState *m = LCPD_NEW(arena, Lcpsim__V1__RobotState);
  if (!m)
    return NULL;
  lcpsim__v1__robot_state__init(m);
  m->name = lcpd_arena_strdup(arena, robot->name);
  m->q = new_doubles(arena, info.nq);
  m->qd = new_doubles(arena, info.nv);
  m->applied_torque = new_doubles(arena, info.joint_count);
  m->link_poses = lcpd_arena_array(arena, (size_t)robot->link_count, sizeof *m->link_poses);
  if (!m->name || !m->q || !m->qd || !m->applied_torque || !m->link_poses)
    return NULL;
  m->n_q = (size_t)info.nq;
  lcp_robot_get_q(world, robot->id, m->q, info.nq);
  m->n_qd = (size_t)info.nv;
  lcp_robot_get_qd(world, robot->id, m->qd, info.nv);
  m->n_applied_torque = (size_t)info.joint_count;
  lcp_robot_get_applied_torques(world, robot->id, m->applied_torque, info.joint_count);
  double position[3] = {0}, orientation[4] = {1, 0, 0, 0}, linear[3] = {0}, angular[3] = {0};
  lcp_robot_get_link_pose(world, robot->id, 0, position, orientation);
  lcp_robot_get_link_velocity(world, robot->id, 0, linear, angular);
  m->base_pose = lcpd_new_pose(arena, position, orientation);
  m->base_twist = lcpd_new_twist(arena, linear, angular);
  if (!m->base_pose || !m->base_twist)
    return NULL;
  m->n_link_poses = (size_t)robot->link_count;
  for (int32_t k = 0; k < robot->link_count; ++k) {
    lcp_robot_get_link_pose(world, robot->id, k, position, orientation);
    if (!(m->link_poses[k] = lcpd_new_pose(arena, position, orientation)))
      return NULL;
  }
  if (sensors && !add_robot_sensors(arena, world, robot, &info, sensors, m))
    return NULL;
  int32_t frames = 0;
  lcp_robot_get_frame_count(world, robot->id, &frames);
  if (frames > 0 &&
      !(m->frame_poses = lcpd_arena_array(arena, (size_t)frames, sizeof *m->frame_poses)))
    return NULL;
  m->n_frame_poses = (size_t)frames;
  for (int32_t k = 0; k < frames; ++k) {
    lcp_robot_get_frame_pose(world, robot->id, k, position, orientation);
    if (!(m->frame_poses[k] = lcpd_new_pose(arena, position, orientation)))
      return NULL;
  }
  return m;
}

static Lcpsim__V1__BodyState *new_body_state(lcpd_arena_t *arena, const lcp_world_t *world,
                                             const lcpd_body_t *body,
                                             const Lcpsim__V1__Sensors *sensors) {
  double position[3] = {0}, orientation[4] = {1, 0, 0, 0}, linear[3] = {0}, angular[3] = {0};
  lcp_body_get_pose(world, body->id, position, orientation);
  lcp_body_get_velocity(world, body->id, linear, angular);
  Lcpsim__V1__BodyState *m = LCPD_NEW(arena, Lcpsim__V1__BodyState);
  if (!m)
    return NULL;
  lcpsim__v1__body_state__init(m);
  m->id = (uint32_t)body->id;
  m->name = lcpd_arena_strdup(arena, body->name);
  m->pose = lcpd_new_pose(arena, position, orientation);
  m->twist = lcpd_new_twist(arena, linear, angular);
  if (!m->name || !m->pose || !m->twist)
    return NULL;
  if (sensors && !add_body_sensors(arena, world, body, sensors, m))
    return NULL;
  return m;
}

/* A contact side's name: "robot/link", a body's name, or "world" for the
 * world body (the ground). */
static char *contact_side_name(lcpd_arena_t *arena, const lcpd_sim_t *sim, lcp_body_id body,
                               int32_t robot_id, int32_t link) {
  char name[2 * LCP_NAME_MAX + 2];
  if (robot_id != LCP_NULL_ID) {
    const lcpd_robot_t *robot = lcpd_sim_robot_by_id(sim, robot_id);
    if (robot && link >= 0 && link < robot->link_count)
      snprintf(name, sizeof name, "%s/%s", robot->name, robot->link_names[link]);
    else
      snprintf(name, sizeof name, "robot%d/link%d", robot_id, link);
  } else if (body == LCP_WORLD_BODY) {
    snprintf(name, sizeof name, "world");
  } else {
    const lcpd_body_t *named = lcpd_sim_body_by_id(sim, body);
    if (named)
      snprintf(name, sizeof name, "%s", named->name);
    else
      snprintf(name, sizeof name, "body%d", body);
  }
  return lcpd_arena_strdup(arena, name);
}

static Lcpsim__V1__Contact *new_contact(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                        const lcp_contact_info_t *c, bool friction) {
  Lcpsim__V1__Contact *m = LCPD_NEW(arena, Lcpsim__V1__Contact);
  if (!m)
    return NULL;
  lcpsim__v1__contact__init(m);
  m->a = contact_side_name(arena, sim, c->body_a, c->robot_a, c->link_a);
  m->b = contact_side_name(arena, sim, c->body_b, c->robot_b, c->link_b);
  m->position = lcpd_new_vec3(arena, c->position);
  m->normal = lcpd_new_vec3(arena, c->normal);
  if (!m->a || !m->b || !m->position || !m->normal)
    return NULL;
  m->depth = c->depth;
  m->normal_impulse = c->normal_impulse;
  if (friction) {
    double impulse[3];
    lcp_contact_friction_vector(c, impulse);
    if (!(m->friction_impulse = lcpd_new_vec3(arena, impulse)))
      return NULL;
  }
  return m;
}

Lcpsim__V1__State *lcpd_new_state(lcpd_arena_t *arena, const lcpd_sim_t *sim, bool include_contacts,
                                  uint64_t sequence) {
  return lcpd_new_state_sensed(arena, sim, include_contacts, NULL, sequence);
}

/* Sensors has only bool fields; walking its descriptor keeps the bits in step with the .proto. */
uint32_t lcpd_sensors_bits(const Lcpsim__V1__Sensors *sensors) {
  const ProtobufCMessageDescriptor *d = &lcpsim__v1__sensors__descriptor;
  uint32_t bits = 0;
  for (unsigned k = 0; sensors && k < d->n_fields && k < 32; ++k) {
    const protobuf_c_boolean *on =
        (const protobuf_c_boolean *)((const char *)sensors + d->fields[k].offset);
    if (d->fields[k].type == PROTOBUF_C_TYPE_BOOL && *on)
      bits |= 1u << k;
  }
  return bits;
}

const Lcpsim__V1__Sensors *lcpd_sensors_from_bits(uint32_t bits, Lcpsim__V1__Sensors *out) {
  if (!bits)
    return NULL;
  const ProtobufCMessageDescriptor *d = &lcpsim__v1__sensors__descriptor;
  lcpsim__v1__sensors__init(out);
  for (unsigned k = 0; k < d->n_fields && k < 32; ++k)
    if (d->fields[k].type == PROTOBUF_C_TYPE_BOOL)
      *(protobuf_c_boolean *)((char *)out + d->fields[k].offset) = (bits >> k) & 1u;
  return out;
}

Lcpsim__V1__State *lcpd_new_state_sensed(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                         bool include_contacts, const Lcpsim__V1__Sensors *sensors,
                                         uint64_t sequence) {
  const lcp_world_t *world = sim->live.world;
  Lcpsim__V1__State *m = LCPD_NEW(arena, Lcpsim__V1__State);
  if (!m)
    return NULL;
  lcpsim__v1__state__init(m);
  m->time = lcp_world_time(world);
  m->step_count = lcp_world_step_count(world);
  m->sequence = sequence;
  m->robots = lcpd_arena_array(arena, (size_t)sim->live.robot_count, sizeof *m->robots);
  m->bodies = lcpd_arena_array(arena, (size_t)sim->live.body_count, sizeof *m->bodies);
  if (!m->robots || !m->bodies)
    return NULL;
  m->n_robots = (size_t)sim->live.robot_count;
  for (int32_t i = 0; i < sim->live.robot_count; ++i)
    if (!(m->robots[i] = new_robot_state(arena, world, &sim->live.robots[i], sensors)))
      return NULL;
  m->n_bodies = (size_t)sim->live.body_count;
  for (int32_t i = 0; i < sim->live.body_count; ++i)
    if (!(m->bodies[i] = new_body_state(arena, world, &sim->live.bodies[i], sensors)))
      return NULL;
  int32_t count = include_contacts ? lcp_world_get_contacts(world, NULL, 0) : 0;
  if (count > 0) {
    lcp_contact_info_t *contacts = lcpd_arena_array(arena, (size_t)count, sizeof *contacts);
    m->contacts = lcpd_arena_array(arena, (size_t)count, sizeof *m->contacts);
    if (!contacts || !m->contacts)
      return NULL;
    count = lcp_world_get_contacts(world, contacts, count);
    m->n_contacts = (size_t)count;
    for (int32_t i = 0; i < count; ++i)
      if (!(m->contacts[i] =
                new_contact(arena, sim, &contacts[i], sensors && sensors->contact_wrenches)))
        return NULL;
  }
  if (sensors && sensors->solver_stats && !(m->solver_stats = new_solver_stats(arena, world)))
    return NULL;
  return m;
}
