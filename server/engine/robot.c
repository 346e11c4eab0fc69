/* SPDX-License-Identifier: Apache-2.0 */
/* Robots in a world (lcpsim/robot.h): adding and removing them, their state
 * in joint space, queries, and the multibody algorithms at the current state.
 * The step that moves them is in step.c; what the world keeps of its robots
 * (storage, kinematics cache) is in world.c, which this file is built on. */
#include "robot_frames.h"
#include "world_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_robot(lcp_world_t *world, lcp_robot_id id, int32_t *slot) {
  *slot = id_pool_slot(&world->model.robot_ids, id);
  if (*slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no robot with id %d", (int)id);
  return LCP_OK;
}

static bool finite_array(const double *v, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    if (!isfinite(v[i]))
      return false;
  return true;
}

/* Makes room for one more robot in the three parallel arrays. */
static int reserve_robot(lcp_world_t *world) {
  world_model *m = &world->model;
  if (m->robot_count < m->robot_capacity)
    return LCP_OK;
  int32_t cap = m->robot_capacity ? 2 * m->robot_capacity : 4;
  robot_model *models = realloc(m->robots, (size_t)cap * sizeof *models);
  if (!models)
    return LCP_ERR_NO_MEMORY;
  m->robots = models;
  robot_state *states = realloc(world->state.robots, (size_t)cap * sizeof *states);
  if (!states)
    return LCP_ERR_NO_MEMORY;
  world->state.robots = states;
  mb_data *data = realloc(world->robot_data, (size_t)cap * sizeof *data);
  if (!data)
    return LCP_ERR_NO_MEMORY;
  world->robot_data = data;
  m->robot_capacity = cap;
  return LCP_OK;
}

int lcp_robot_add(lcp_world_t *world, const lcp_robot_def_t *def, const double base_position[3],
                  const double base_orientation[4], lcp_robot_id *out_id) {
  if (!def || !def->links || def->link_count < 1)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "robot definition is empty");
  double zero[3] = {0, 0, 0}, identity[4] = {1, 0, 0, 0};
  if (!base_position)
    base_position = zero;
  if (!base_orientation)
    base_orientation = identity;
  if (!finite_array(base_position, 3) || !finite_array(base_orientation, 4) ||
      !(q_norm(q_from(base_orientation)) > 1e-12))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "robot base pose must be finite with a non-zero quaternion");
  if (def->name[0] == '\0' || memchr(def->name, '\0', LCP_NAME_MAX) == NULL)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "robot needs a name");
  lcp_robot_id existing;
  if (lcp_robot_find(world, def->name, &existing) == LCP_OK)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "a robot named '%s' exists already",
                           def->name);
  for (int32_t i = 0; i < def->link_count; ++i) {
    const lcp_link_def_t *l = &def->links[i];
    if (l->first_geom < 0 || l->geom_count < 0 || l->first_geom + l->geom_count > def->geom_count)
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "link '%s': geom range out of bounds",
                             l->name);
  }
  char frame_why[200];
  if (lcp__robot_frames_check(def, frame_why, sizeof frame_why) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "robot '%s': %s", def->name, frame_why);
  if (reserve_robot(world) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory adding a robot");

  robot_model model = {.self_collision = def->self_collision};
  robot_state state = {0};
  mb_data data = {0};
  char err[200] = "";
  int rc = lcp__mb_model_init(&model.mb, def, err, sizeof err);
  if (rc != LCP_OK)
    return lcp__world_fail(world, rc, "robot '%s': %s", def->name, err);
  const mb_model *mb = &model.mb;
  model.link_names = calloc((size_t)mb->link_count, sizeof *model.link_names);
  model.joints = calloc((size_t)(mb->joint_count > 0 ? mb->joint_count : 1), sizeof *model.joints);
  state.q = calloc((size_t)mb->nq + 1, sizeof(double));
  state.qd = calloc((size_t)mb->nv + 1, sizeof(double));
  state.force = calloc((size_t)mb->nv + 1, sizeof(double));
  state.link_wrench = calloc(6 * (size_t)mb->link_count, sizeof(double));
  size_t joints = (size_t)mb->joint_count + 1;
  state.applied_torque = calloc(joints, sizeof(double));
  state.joint_impulse = calloc(JOINT_ROW_KINDS * joints, sizeof(double));
  state.control = calloc(joints, sizeof(lcp_joint_control_t));
  state.qdd = calloc((size_t)mb->nv + 1, sizeof(double));
  state.step_link_wrench = calloc(6 * (size_t)mb->link_count, sizeof(double));
  state.velocity_synchronized = true;
  if (!model.link_names || !model.joints || !state.q || !state.qd || !state.force ||
      !state.link_wrench || !state.applied_torque || !state.joint_impulse || !state.control ||
      !state.qdd || !state.step_link_wrench || lcp__robot_frames_copy(&model, def) != LCP_OK ||
      lcp__mb_data_init(&data, mb) != LCP_OK) {
    lcp__world_free_robot(&model, &state, &data);
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory adding a robot");
  }
  memcpy(model.name, def->name, LCP_NAME_MAX);
  int32_t j = 0;
  for (int32_t i = 0; i < mb->link_count; ++i) {
    const lcp_link_def_t *l = &def->links[i];
    memcpy(model.link_names[i], l->name, LCP_NAME_MAX);
    model.link_names[i][LCP_NAME_MAX - 1] = '\0';
    if (mb->links[i].v_index < 0)
      continue;
    state.control[j] = lcp_joint_control_default();
    joint_model *jm = &model.joints[j++];
    memcpy(jm->name, l->joint_name, LCP_NAME_MAX);
    jm->name[LCP_NAME_MAX - 1] = '\0';
    jm->link = i;
    jm->type = l->joint_type;
    jm->has_limits = l->joint_type != LCP_JOINT_CONTINUOUS && l->lower <= l->upper &&
                     (l->lower != 0.0 || l->upper != 0.0);
    jm->lower = l->lower;
    jm->upper = l->upper;
    jm->effort_limit = l->effort_limit;
    jm->velocity_limit = l->velocity_limit;
    jm->damping = l->damping;
    jm->friction = l->friction;
    /* Start at 0, or at the nearest limit when 0 is outside the range. */
    double q0 = 0.0;
    if (jm->has_limits)
      q0 = fmin(fmax(q0, jm->lower), jm->upper);
    state.q[mb->links[i].q_index] = q0;
  }
  if (mb->floating) {
    for (int k = 0; k < 3; ++k)
      state.q[k] = base_position[k];
    quat qb = q_normalize(q_from(base_orientation));
    q_store(qb, &state.q[3]);
  }
  /* A fixed base sits where it is put: its pose becomes the base's parent
   * frame, folded into the base link's joint origin by the kernel's model. */
  if (!mb->floating) {
    xform base = xf_make(v3_from(base_position), q_normalize(q_from(base_orientation)));
    model.mb.links[0].parent_from_joint = xf_mul(&base, &model.mb.links[0].parent_from_joint);
  }
  int32_t slot = world->model.robot_count;
  if (lcp__id_pool_add(&world->model.robot_ids, slot, &model.id) != LCP_OK) {
    lcp__world_free_robot(&model, &state, &data);
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "no room for another robot (memory or ids)");
  }
  world->model.robots[slot] = model;
  world->state.robots[slot] = state;
  world->robot_data[slot] = data;
  world->model.robot_count++;
  world->layout_hash_valid = false;
  lcp__mb_kinematics(&world->model.robots[slot].mb, state.q, state.qd, &world->robot_data[slot]);
  /* Geoms, owned by their links. */
  for (int32_t i = 0; i < def->link_count; ++i) {
    const lcp_link_def_t *l = &def->links[i];
    for (int32_t g = l->first_geom; g < l->first_geom + l->geom_count; ++g) {
      rc = lcp__world_add_geom(world, &def->geoms[g], LCP_NULL_ID, model.id, i, NULL);
      if (rc != LCP_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", world->last_error);
        lcp_robot_remove(world, model.id);
        return lcp__world_fail(world, rc, "robot '%s', link '%s': %s", def->name, l->name, why);
      }
    }
  }
  if (out_id)
    *out_id = model.id;
  return LCP_OK;
}

int lcp_robot_remove(lcp_world_t *world, lcp_robot_id id) {
  int32_t slot;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  world_model *m = &world->model;
  for (int32_t g = m->geom_count - 1; g >= 0; --g)
    if (m->geoms[g].robot == id)
      lcp__world_remove_geom_slot(world, g);
  lcp__world_free_robot(&m->robots[slot], &world->state.robots[slot], &world->robot_data[slot]);
  int32_t tail = m->robot_count - slot - 1;
  memmove(&m->robots[slot], &m->robots[slot + 1], (size_t)tail * sizeof *m->robots);
  memmove(&world->state.robots[slot], &world->state.robots[slot + 1],
          (size_t)tail * sizeof *world->state.robots);
  memmove(&world->robot_data[slot], &world->robot_data[slot + 1],
          (size_t)tail * sizeof *world->robot_data);
  m->robot_count--;
  world->layout_hash_valid = false;
  lcp__id_pool_remove(&m->robot_ids, id);
  for (int32_t s = slot; s < m->robot_count; ++s)
    id_pool_move(&m->robot_ids, m->robots[s].id, s);
  return LCP_OK;
}

int lcp_robot_find(const lcp_world_t *world, const char *name, lcp_robot_id *out_id) {
  if (!name)
    return LCP_ERR_INVALID_ARGUMENT;
  for (int32_t i = 0; i < world->model.robot_count; ++i)
    if (strncmp(world->model.robots[i].name, name, LCP_NAME_MAX) == 0) {
      if (out_id)
        *out_id = world->model.robots[i].id;
      return LCP_OK;
    }
  return LCP_ERR_NOT_FOUND;
}

int32_t lcp_world_robot_count(const lcp_world_t *world) { return world->model.robot_count; }

int32_t lcp_world_robot_ids(const lcp_world_t *world, lcp_robot_id *out, int32_t capacity) {
  int32_t n = world->model.robot_count < capacity ? world->model.robot_count : capacity;
  for (int32_t i = 0; i < n; ++i)
    out[i] = world->model.robots[i].id;
  return n;
}

/* The robot at slot, or NULL; for the const queries. */
static const robot_model *robot_at(const lcp_world_t *world, lcp_robot_id id, int32_t *slot) {
  *slot = id_pool_slot(&world->model.robot_ids, id);
  return *slot < 0 ? NULL : &world->model.robots[*slot];
}

int lcp_robot_get_info(const lcp_world_t *world, lcp_robot_id id, lcp_robot_info_t *out) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  memcpy(out->name, r->name, LCP_NAME_MAX);
  out->floating_base = r->mb.floating;
  out->link_count = r->mb.link_count;
  out->joint_count = r->mb.joint_count;
  out->nq = r->mb.nq;
  out->nv = r->mb.nv;
  return LCP_OK;
}

int lcp_robot_get_joint(const lcp_world_t *world, lcp_robot_id id, int32_t joint,
                        lcp_joint_info_t *out) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (joint < 0 || joint >= r->mb.joint_count)
    return LCP_ERR_NOT_FOUND;
  const joint_model *j = &r->joints[joint];
  const mb_link *l = &r->mb.links[j->link];
  memset(out, 0, sizeof *out);
  memcpy(out->name, j->name, LCP_NAME_MAX);
  memcpy(out->child_link, r->link_names[j->link], LCP_NAME_MAX);
  out->type = j->type;
  out->q_index = l->q_index;
  out->v_index = l->v_index;
  v3_store(l->axis, out->axis);
  out->lower = j->lower;
  out->upper = j->upper;
  out->has_limits = j->has_limits;
  out->effort_limit = j->effort_limit;
  out->velocity_limit = j->velocity_limit;
  out->damping = j->damping;
  out->friction = j->friction;
  return LCP_OK;
}

int lcp_robot_find_joint(const lcp_world_t *world, lcp_robot_id id, const char *name,
                         int32_t *out_joint) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || !name)
    return LCP_ERR_NOT_FOUND;
  for (int32_t j = 0; j < r->mb.joint_count; ++j)
    if (strncmp(r->joints[j].name, name, LCP_NAME_MAX) == 0) {
      *out_joint = j;
      return LCP_OK;
    }
  return LCP_ERR_NOT_FOUND;
}

int lcp_robot_find_link(const lcp_world_t *world, lcp_robot_id id, const char *name,
                        int32_t *out_link) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || !name)
    return LCP_ERR_NOT_FOUND;
  for (int32_t i = 0; i < r->mb.link_count; ++i)
    if (strncmp(r->link_names[i], name, LCP_NAME_MAX) == 0) {
      *out_link = i;
      return LCP_OK;
    }
  return LCP_ERR_NOT_FOUND;
}

int lcp_robot_get_q(const lcp_world_t *world, lcp_robot_id id, double *q, int32_t nq) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!q || nq != r->mb.nq)
    return LCP_ERR_INVALID_ARGUMENT;
  memcpy(q, world->state.robots[slot].q, (size_t)nq * sizeof(double));
  return LCP_OK;
}

int lcp_robot_get_qd(const lcp_world_t *world, lcp_robot_id id, double *qd, int32_t nv) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!qd || nv != r->mb.nv)
    return LCP_ERR_INVALID_ARGUMENT;
  memcpy(qd, world->state.robots[slot].qd, (size_t)nv * sizeof(double));
  return LCP_OK;
}

/* The older one-vector setters are lcp_robot_set_state with the other vector kept, so that every
 * state edit drops the same warm starts and stale readings. */
int lcp_robot_set_q(lcp_world_t *world, lcp_robot_id id, const double *q, int32_t nq) {
  if (!q)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "q is NULL");
  return lcp_robot_set_state(world, id, q, nq, NULL, 0);
}

int lcp_robot_set_qd(lcp_world_t *world, lcp_robot_id id, const double *qd, int32_t nv) {
  if (!qd)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "qd is NULL");
  return lcp_robot_set_state(world, id, NULL, 0, qd, nv);
}

int lcp_robot_get_link_pose(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                            double position[3], double orientation[4]) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || link < 0 || link >= r->mb.link_count)
    return LCP_ERR_NOT_FOUND;
  lcp__world_ensure_robot_kinematics(world);
  const xform *x = &world->robot_data[slot].link_x[link];
  if (position)
    v3_store(x->p, position);
  if (orientation)
    q_store(x->q, orientation);
  return LCP_OK;
}

int lcp_robot_get_link_velocity(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                                double linear[3], double angular[3]) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || link < 0 || link >= r->mb.link_count)
    return LCP_ERR_NOT_FOUND;
  lcp__world_ensure_robot_kinematics(world);
  if (linear)
    v3_store(world->robot_data[slot].link_v[link], linear);
  if (angular)
    v3_store(world->robot_data[slot].link_w[link], angular);
  return LCP_OK;
}

int lcp_robot_apply_generalized_force(lcp_world_t *world, lcp_robot_id id, const double *f,
                                      int32_t nv) {
  int32_t slot;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  const mb_model *mb = &world->model.robots[slot].mb;
  if (!f || nv != mb->nv || !finite_array(f, nv))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "generalised force must have %d finite values", (int)mb->nv);
  double *acc = world->state.robots[slot].force;
  for (int32_t i = 0; i < nv; ++i)
    acc[i] += f[i];
  return LCP_OK;
}

int lcp_robot_apply_link_force(lcp_world_t *world, lcp_robot_id id, int32_t link,
                               const double force[3], const double point[3]) {
  int32_t slot;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (link < 0 || link >= world->model.robots[slot].mb.link_count)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "robot '%s' has no link %d",
                           world->model.robots[slot].name, (int)link);
  if (!force || !point || !finite_array(force, 3) || !finite_array(point, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "force and point must be finite");
  lcp__world_ensure_robot_kinematics(world);
  vec3 f = v3_from(force);
  vec3 r = v3_sub(v3_from(point), world->robot_data[slot].link_x[link].p);
  vec3 t = v3_cross(r, f);
  double *w = &world->state.robots[slot].link_wrench[6 * link];
  w[0] += f.x, w[1] += f.y, w[2] += f.z, w[3] += t.x, w[4] += t.y, w[5] += t.z;
  return LCP_OK;
}

/* The dynamics queries work in a multibody workspace of their own: the
 * world's robot_data belongs to the step (and to the kinematics cache), and a
 * const query leaves the world exactly as it was. */
typedef enum robot_query {
  QUERY_MASS_MATRIX,
  QUERY_INVERSE_DYNAMICS,
  QUERY_FORWARD_DYNAMICS
} robot_query;

static int robot_dynamics_query(const lcp_world_t *world, const robot_model *r, int32_t slot,
                                robot_query query, const double *in, double *out) {
  mb_data d;
  if (lcp__mb_data_init(&d, &r->mb) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  const robot_state *s = &world->state.robots[slot];
  vec3 g = v3_from(world->model.settings.gravity);
  switch (query) {
  case QUERY_MASS_MATRIX:
    lcp__mb_mass_matrix(&r->mb, s->q, &d, out);
    break;
  case QUERY_INVERSE_DYNAMICS:
    lcp__mb_inverse_dynamics(&r->mb, s->q, s->qd, in, g, &d, out);
    break;
  case QUERY_FORWARD_DYNAMICS:
    lcp__mb_forward_dynamics(&r->mb, s->q, s->qd, in, NULL, g, &d, out);
    break;
  }
  lcp__mb_data_free(&d);
  return LCP_OK;
}

int lcp_robot_mass_matrix(const lcp_world_t *world, lcp_robot_id id, double *M, int32_t nv) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!M || nv != r->mb.nv)
    return LCP_ERR_INVALID_ARGUMENT;
  return robot_dynamics_query(world, r, slot, QUERY_MASS_MATRIX, NULL, M);
}

int lcp_robot_inverse_dynamics(const lcp_world_t *world, lcp_robot_id id, const double *qdd,
                               double *tau, int32_t nv) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!tau || nv != r->mb.nv || (qdd && !finite_array(qdd, nv)))
    return LCP_ERR_INVALID_ARGUMENT;
  return robot_dynamics_query(world, r, slot, QUERY_INVERSE_DYNAMICS, qdd, tau);
}

int lcp_robot_forward_dynamics(const lcp_world_t *world, lcp_robot_id id, const double *tau,
                               double *qdd, int32_t nv) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!qdd || nv != r->mb.nv || (tau && !finite_array(tau, nv)))
    return LCP_ERR_INVALID_ARGUMENT;
  return robot_dynamics_query(world, r, slot, QUERY_FORWARD_DYNAMICS, tau, qdd);
}

/* ---- joint control ---- */

lcp_joint_control_t lcp_joint_control_default(void) {
  return (lcp_joint_control_t){.mode = LCP_CONTROL_OFF};
}

/* NULL when the control is acceptable, else what is wrong with it. */
static const char *control_problem(const lcp_joint_control_t *c) {
  if (!c)
    return "control is NULL";
  if (c->mode < LCP_CONTROL_OFF || c->mode > LCP_CONTROL_TORQUE)
    return "unknown control mode";
  double v[6] = {c->position, c->velocity, c->kp, c->kd, c->torque, c->effort_limit};
  if (!finite_array(v, 6))
    return "control values must be finite";
  if (c->kp < 0.0 || c->kd < 0.0)
    return "gains must be >= 0";
  if (c->effort_limit < 0.0)
    return "effort limit must be >= 0 (0: the joint's own)";
  if (c->mode == LCP_CONTROL_POSITION && !(c->kp + c->kd > 0.0))
    return "position control needs kp + kd > 0";
  if (c->mode == LCP_CONTROL_VELOCITY && !(c->kd > 0.0))
    return "velocity control needs kd > 0";
  return NULL;
}

int lcp_robot_set_controls(lcp_world_t *world, lcp_robot_id id, const lcp_joint_control_t *controls,
                           int32_t joint_count) {
  int32_t slot;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  const robot_model *r = &world->model.robots[slot];
  if (!controls)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "controls is NULL");
  if (joint_count != r->mb.joint_count)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "robot '%s' has %d joints, not %d",
                           r->name, (int)r->mb.joint_count, (int)joint_count);
  for (int32_t j = 0; j < joint_count; ++j) {
    const char *why = control_problem(&controls[j]);
    if (why)
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "joint '%s': %s", r->joints[j].name,
                             why);
  }
  memcpy(world->state.robots[slot].control, controls,
         (size_t)joint_count * sizeof(lcp_joint_control_t));
  return LCP_OK;
}

int lcp_robot_set_joint_control(lcp_world_t *world, lcp_robot_id id, int32_t joint,
                                const lcp_joint_control_t *control) {
  int32_t slot;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  const robot_model *r = &world->model.robots[slot];
  if (joint < 0 || joint >= r->mb.joint_count)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "robot '%s' has no joint %d", r->name,
                           (int)joint);
  const char *why = control_problem(control);
  if (why)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "joint '%s': %s", r->joints[joint].name,
                           why);
  world->state.robots[slot].control[joint] = *control;
  return LCP_OK;
}

int lcp_robot_set_joint_control_by_name(lcp_world_t *world, lcp_robot_id id, const char *joint,
                                        const lcp_joint_control_t *control) {
  int32_t slot, index;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (lcp_robot_find_joint(world, id, joint, &index) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "robot '%s' has no joint named '%s'",
                           world->model.robots[slot].name, joint ? joint : "(null)");
  return lcp_robot_set_joint_control(world, id, index, control);
}

int lcp_robot_get_joint_control(const lcp_world_t *world, lcp_robot_id id, int32_t joint,
                                lcp_joint_control_t *out) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r || joint < 0 || joint >= r->mb.joint_count)
    return LCP_ERR_NOT_FOUND;
  if (!out)
    return LCP_ERR_INVALID_ARGUMENT;
  *out = world->state.robots[slot].control[joint];
  return LCP_OK;
}

int lcp_robot_get_applied_torques(const lcp_world_t *world, lcp_robot_id id, double *tau,
                                  int32_t joint_count) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!tau || joint_count != r->mb.joint_count)
    return LCP_ERR_INVALID_ARGUMENT;
  memcpy(tau, world->state.robots[slot].applied_torque, (size_t)joint_count * sizeof(double));
  return LCP_OK;
}

int lcp_robot_set_gravity_compensation(lcp_world_t *world, lcp_robot_id id, bool on) {
  int32_t slot;
  int rc = find_robot(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  world->state.robots[slot].gravity_compensation = on;
  return LCP_OK;
}

int lcp_robot_get_gravity_compensation(const lcp_world_t *world, lcp_robot_id id, bool *on) {
  int32_t slot;
  if (!robot_at(world, id, &slot) || !on)
    return LCP_ERR_NOT_FOUND;
  *on = world->state.robots[slot].gravity_compensation;
  return LCP_OK;
}

bool lcp__robot_control_valid(const lcp_joint_control_t *control) {
  return control_problem(control) == NULL;
}
