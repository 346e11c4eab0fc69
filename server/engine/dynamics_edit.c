/* SPDX-License-Identifier: Apache-2.0 */
/* Run-time edits between steps: setting a body's or a robot's state (a
 * reset, a teleport) and changing mass properties, materials and joint
 * dynamics (domain randomisation).
 *
 * State edits drop the warm starts that no longer apply. The warm-start
 * cache holds, per touching geom pair, the impulses solved in the last
 * step; after a teleport they describe contacts the object no longer has
 * (or has elsewhere), and starting the solver from them would make the next
 * step depend on where the object was. So every cache entry naming one of
 * the object's geoms is removed, and a robot's joint-row impulses are
 * zeroed: the next step solves the object's rows from zero, which is also
 * what restoring a snapshot taken right after the edit does.
 *
 * Dynamics edits are model changes, checked all together before any is
 * applied. The robot's multibody model keeps each link's mass, centre of
 * mass and inertia and derives everything else (articulated inertias, the
 * mass matrix) from them in every pass, so replacing those three is all a
 * link edit needs. */
#include "state_check.h"
#include "world_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- warm starts ---- */

/* Whether the geom at slot belongs to the body (robot = LCP_NULL_ID) or to
 * the robot. */
static bool geom_owned(const geom_model *g, lcp_body_id body, lcp_robot_id robot) {
  return robot != LCP_NULL_ID ? g->robot == robot : g->body == body;
}

/* Removes the cache entries of every pair with one of the owner's geoms;
 * the others keep their order (the cache stays sorted). */
static void forget_contact_warm_starts(lcp_world_t *world, lcp_body_id body, lcp_robot_id robot) {
  world_state *state = &world->state;
  const geom_model *geoms = world->model.geoms;
  int32_t kept = 0;
  for (int32_t i = 0; i < state->cache_count; ++i) {
    const cached_manifold *c = &state->cache[i];
    if (geom_owned(&geoms[c->slot_a], body, robot) || geom_owned(&geoms[c->slot_b], body, robot))
      continue;
    state->cache[kept++] = *c;
  }
  state->cache_count = kept;
}

static bool all_finite(const double *v, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    if (!isfinite(v[i]))
      return false;
  return true;
}

static bool is_zero3(const double *v) { return v[0] == 0.0 && v[1] == 0.0 && v[2] == 0.0; }

/* ---- state ---- */

int lcp_body_set_state(lcp_world_t *world, lcp_body_id id, const double position[3],
                       const double orientation[4], const double linear[3],
                       const double angular[3]) {
  int32_t slot = id_pool_slot(&world->model.body_ids, id);
  if (slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no body with id %d", (int)id);
  if (id == LCP_WORLD_BODY)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "the world body cannot be moved");
  if (position && !all_finite(position, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "position must be finite");
  if (orientation && !lcp_quat_is_valid(orientation))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "orientation (%g, %g, %g, %g) is not a quaternion that can be "
                           "normalised (finite, norm > 1e-12)",
                           orientation[0], orientation[1], orientation[2], orientation[3]);
  if ((linear && !all_finite(linear, 3)) || (angular && !all_finite(angular, 3)))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "velocity must be finite");
  if (world->model.bodies[slot].type != LCP_BODY_DYNAMIC &&
      ((linear && !is_zero3(linear)) || (angular && !is_zero3(angular))))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "body %d is static: it takes a pose but no velocity", (int)id);
  char why[200];
  if (!lcp__motion_within_bounds(position, linear, angular, why, sizeof why))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "body %d: %s", (int)id, why);
  body_state *b = &world->state.bodies[slot];
  if (position)
    b->position = v3_from(position);
  if (orientation)
    b->orientation = q_normalize(q_from(orientation));
  if (linear && world->model.bodies[slot].type == LCP_BODY_DYNAMIC)
    b->linear_velocity = v3_from(linear);
  if (angular && world->model.bodies[slot].type == LCP_BODY_DYNAMIC)
    b->angular_velocity = v3_from(angular);
  forget_contact_warm_starts(world, id, LCP_NULL_ID);
  return LCP_OK;
}

int lcp_robot_set_state(lcp_world_t *world, lcp_robot_id id, const double *q, int32_t nq,
                        const double *qd, int32_t nv) {
  int32_t slot = id_pool_slot(&world->model.robot_ids, id);
  if (slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no robot with id %d", (int)id);
  const robot_model *rm = &world->model.robots[slot];
  const mb_model *mb = &rm->mb;
  if (q && nq != mb->nq)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "q has %d values, robot '%s' needs %d",
                           (int)nq, rm->name, (int)mb->nq);
  if (qd && nv != mb->nv)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "qd has %d values, robot '%s' needs %d",
                           (int)nv, rm->name, (int)mb->nv);
  if (q && !all_finite(q, nq))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "q must be finite");
  if (qd && !all_finite(qd, nv))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "qd must be finite");
  if (q && mb->floating && !lcp_quat_is_valid(&q[3]))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "the base quaternion q[3..7) = (%g, %g, %g, %g) cannot be normalised",
                           q[3], q[4], q[5], q[6]);
  robot_state *st = &world->state.robots[slot];
  char why[200];
  if (!lcp__robot_motion_within_bounds(rm, q ? q : st->q, qd ? qd : st->qd, why, sizeof why))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "robot '%s': %s", rm->name, why);
  if (q) {
    memcpy(st->q, q, (size_t)nq * sizeof(double));
    if (mb->floating)
      q_store(q_normalize(q_from(&st->q[3])), &st->q[3]);
  }
  if (qd) {
    memcpy(st->qd, qd, (size_t)nv * sizeof(double));
    st->velocity_synchronized = true;
  }
  memset(st->joint_impulse, 0, (size_t)JOINT_ROW_KINDS * (size_t)mb->joint_count * sizeof(double));
  /* qdd is the last step's (qd⁺ − qd)/h; after an edit it describes no motion of this state, so
   * accelerometers read the state as unaccelerated until the next step. */
  memset(st->qdd, 0, (size_t)mb->nv * sizeof(double));
  forget_contact_warm_starts(world, LCP_NULL_ID, id);
  lcp__mb_kinematics(mb, st->q, st->qd, &world->robot_data[slot]);
  return LCP_OK;
}

/* ---- wrenches ---- */

int lcp_robot_apply_link_wrench(lcp_world_t *world, lcp_robot_id id, int32_t link,
                                const double force[3], const double point[3],
                                const double torque[3]) {
  int32_t slot = id_pool_slot(&world->model.robot_ids, id);
  if (slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no robot with id %d", (int)id);
  const robot_model *rm = &world->model.robots[slot];
  if (link < 0 || link >= rm->mb.link_count)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "robot '%s' has no link %d", rm->name,
                           (int)link);
  if (!force || !all_finite(force, 3) || (point && !all_finite(point, 3)) ||
      (torque && !all_finite(torque, 3)))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "force, point and torque must be finite");
  lcp__world_ensure_robot_kinematics(world);
  /* The pending wrench is kept about the link frame's origin o:
   * τ_o = τ + (point − o) × f. */
  vec3 f = v3_from(force);
  vec3 r = point ? v3_sub(v3_from(point), world->robot_data[slot].link_x[link].p) : v3_zero();
  vec3 t = v3_cross(r, f);
  if (torque)
    t = v3_add(t, v3_from(torque));
  double *w = &world->state.robots[slot].link_wrench[6 * link];
  w[0] += f.x, w[1] += f.y, w[2] += f.z, w[3] += t.x, w[4] += t.y, w[5] += t.z;
  return LCP_OK;
}

/* ---- reading mass properties and materials ---- */

int lcp_robot_get_link_mass(const lcp_world_t *world, lcp_robot_id id, int32_t link, double *mass,
                            double com[3], double inertia[9]) {
  int32_t slot = id_pool_slot(&world->model.robot_ids, id);
  if (slot < 0)
    return LCP_ERR_NOT_FOUND;
  const mb_model *mb = &world->model.robots[slot].mb;
  if (link < 0 || link >= mb->link_count)
    return LCP_ERR_NOT_FOUND;
  const mb_link *l = &mb->links[link];
  if (mass)
    *mass = l->mass;
  if (com)
    v3_store(l->com, com);
  if (inertia)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        inertia[3 * i + j] = l->inertia.m[i][j];
  return LCP_OK;
}

/* The first geom of a body (robot = LCP_NULL_ID) or of a robot's link. */
static const geom_model *first_geom(const lcp_world_t *world, lcp_body_id body, lcp_robot_id robot,
                                    int32_t link) {
  for (int32_t g = 0; g < world->model.geom_count; ++g) {
    const geom_model *geom = &world->model.geoms[g];
    if (geom_owned(geom, body, robot) && (robot == LCP_NULL_ID || geom->link == link))
      return geom;
  }
  return NULL;
}

static int read_material(const geom_model *geom, double *friction, double *restitution) {
  if (!geom)
    return LCP_ERR_NOT_FOUND;
  if (friction)
    *friction = geom->friction;
  if (restitution)
    *restitution = geom->restitution;
  return LCP_OK;
}

int lcp_body_get_material(const lcp_world_t *world, lcp_body_id id, double *friction,
                          double *restitution) {
  if (id_pool_slot(&world->model.body_ids, id) < 0)
    return LCP_ERR_NOT_FOUND;
  return read_material(first_geom(world, id, LCP_NULL_ID, -1), friction, restitution);
}

int lcp_robot_get_link_material(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                                double *friction, double *restitution) {
  if (id_pool_slot(&world->model.robot_ids, id) < 0)
    return LCP_ERR_NOT_FOUND;
  return read_material(first_geom(world, LCP_NULL_ID, id, link), friction, restitution);
}

/* ---- dynamics edits ---- */

/* An edit resolved against the world: its slots and the values it leaves
 * (the edit's fields over the current ones). */
typedef struct resolved_edit {
  int32_t body_slot, robot_slot;
  double mass;
  double inertia[9];
  double com[3];
  double friction, restitution;
  joint_model joint;
  bool movable; /* a link that moves: mass > 0 and a definite inertia */
} resolved_edit;

static const uint32_t MASS_FIELDS = LCP_EDIT_MASS | LCP_EDIT_INERTIA | LCP_EDIT_COM;
static const uint32_t MATERIAL_FIELDS = LCP_EDIT_FRICTION | LCP_EDIT_RESTITUTION;
static const uint32_t JOINT_FIELDS = LCP_EDIT_DAMPING | LCP_EDIT_JOINT_FRICTION | LCP_EDIT_LIMITS |
                                     LCP_EDIT_EFFORT_LIMIT | LCP_EDIT_VELOCITY_LIMIT;

static bool has_geom(const lcp_world_t *world, const lcp_dynamics_edit_t *e) {
  return e->target == LCP_EDIT_BODY ? first_geom(world, e->body, LCP_NULL_ID, -1) != NULL
                                    : first_geom(world, LCP_NULL_ID, e->robot, e->index) != NULL;
}

static int check_material(lcp_world_t *world, const lcp_dynamics_edit_t *e, resolved_edit *r) {
  if (!(e->fields & MATERIAL_FIELDS))
    return LCP_OK;
  if (!has_geom(world, e))
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND,
                           "friction and restitution belong to geoms, and it has none");
  if ((e->fields & LCP_EDIT_FRICTION) && !(isfinite(e->friction) && e->friction >= 0.0))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "friction must be >= 0 (got %g)",
                           e->friction);
  if ((e->fields & LCP_EDIT_RESTITUTION) && !(e->restitution >= 0.0 && e->restitution <= 1.0))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "restitution must be in [0, 1] (got %g)", e->restitution);
  r->friction = e->friction;
  r->restitution = e->restitution;
  return LCP_OK;
}

/* The edit's mass and inertia over the current ones, checked: mass > 0 and
 * a definite inertia on what moves, mass ≥ 0 and a semidefinite inertia on
 * a link fixed to its parent (the multibody model's rules). */
static int check_mass(lcp_world_t *world, const lcp_dynamics_edit_t *e, resolved_edit *r) {
  if (e->fields & LCP_EDIT_MASS)
    r->mass = e->mass;
  if (e->fields & LCP_EDIT_INERTIA)
    memcpy(r->inertia, e->inertia, sizeof r->inertia);
  if (e->fields & LCP_EDIT_COM)
    memcpy(r->com, e->com, sizeof r->com);
  if (!isfinite(r->mass) || !(r->movable ? r->mass > 0.0 : r->mass >= 0.0))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "mass must be %s (got %g)",
                           r->movable ? "> 0" : ">= 0", r->mass);
  if (!all_finite(r->com, 3))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "centre of mass must be finite");
  if (!all_finite(r->inertia, 9) || !lcp__mb_inertia_ok(r->inertia, r->movable))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "inertia [%g %g %g; %g %g %g; %g %g %g] is not symmetric positive %s",
                           r->inertia[0], r->inertia[1], r->inertia[2], r->inertia[3],
                           r->inertia[4], r->inertia[5], r->inertia[6], r->inertia[7],
                           r->inertia[8], r->movable ? "definite" : "semidefinite");
  return LCP_OK;
}

static int check_body(lcp_world_t *world, const lcp_dynamics_edit_t *e, resolved_edit *r) {
  r->body_slot = id_pool_slot(&world->model.body_ids, e->body);
  if (r->body_slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no body with id %d", (int)e->body);
  if (e->fields & (JOINT_FIELDS | LCP_EDIT_COM))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "a body takes mass, inertia, friction and restitution (its origin is "
                           "its centre of mass, and it has no joint)");
  const body_model *m = &world->model.bodies[r->body_slot];
  if ((e->fields & MASS_FIELDS) && m->type != LCP_BODY_DYNAMIC)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "body %d is static: it has no mass to change", (int)e->body);
  if (e->fields & MASS_FIELDS) {
    r->mass = m->mass;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r->inertia[3 * i + j] = m->inertia_local.m[i][j];
    r->movable = true;
    int rc = check_mass(world, e, r);
    if (rc != LCP_OK)
      return rc;
    mat3 I = m3_from(r->inertia), inverse;
    if (!m3_inverse(&I, &inverse, 1e-300))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "inertia cannot be inverted");
  }
  return check_material(world, e, r);
}

static int find_robot_slot(lcp_world_t *world, lcp_robot_id id, int32_t *slot) {
  *slot = id_pool_slot(&world->model.robot_ids, id);
  if (*slot < 0)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "no robot with id %d", (int)id);
  return LCP_OK;
}

static int check_link(lcp_world_t *world, const lcp_dynamics_edit_t *e, resolved_edit *r) {
  int rc = find_robot_slot(world, e->robot, &r->robot_slot);
  if (rc != LCP_OK)
    return rc;
  const robot_model *rm = &world->model.robots[r->robot_slot];
  if (e->index < 0 || e->index >= rm->mb.link_count)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "robot '%s' has no link %d (it has %d)",
                           rm->name, (int)e->index, (int)rm->mb.link_count);
  if (e->fields & JOINT_FIELDS)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "link '%s': damping, joint friction and limits belong to its joint",
                           rm->link_names[e->index]);
  const mb_link *l = &rm->mb.links[e->index];
  r->mass = l->mass;
  v3_store(l->com, r->com);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r->inertia[3 * i + j] = l->inertia.m[i][j];
  r->movable = e->index == 0 ? rm->mb.floating : l->joint_type != LCP_JOINT_FIXED;
  if ((e->fields & MASS_FIELDS) && (rc = check_mass(world, e, r)) != LCP_OK)
    return rc;
  return check_material(world, e, r);
}

static int check_joint(lcp_world_t *world, const lcp_dynamics_edit_t *e, resolved_edit *r) {
  int rc = find_robot_slot(world, e->robot, &r->robot_slot);
  if (rc != LCP_OK)
    return rc;
  const robot_model *rm = &world->model.robots[r->robot_slot];
  if (e->index < 0 || e->index >= rm->mb.joint_count)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "robot '%s' has no joint %d (it has %d)",
                           rm->name, (int)e->index, (int)rm->mb.joint_count);
  r->joint = rm->joints[e->index];
  joint_model *j = &r->joint;
  if (e->fields & (MASS_FIELDS | MATERIAL_FIELDS))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "joint '%s': mass and materials belong to its link", j->name);
  const struct {
    uint32_t bit;
    const char *name;
    double value;
    double *field;
  } gains[] = {
      {LCP_EDIT_DAMPING, "damping", e->damping, &j->damping},
      {LCP_EDIT_JOINT_FRICTION, "friction", e->joint_friction, &j->friction},
      {LCP_EDIT_EFFORT_LIMIT, "effort_limit", e->effort_limit, &j->effort_limit},
      {LCP_EDIT_VELOCITY_LIMIT, "velocity_limit", e->velocity_limit, &j->velocity_limit},
  };
  for (size_t k = 0; k < sizeof gains / sizeof gains[0]; ++k) {
    if (!(e->fields & gains[k].bit))
      continue;
    if (!(isfinite(gains[k].value) && gains[k].value >= 0.0))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "joint '%s': %s must be >= 0 (got %g)", j->name, gains[k].name,
                             gains[k].value);
    *gains[k].field = gains[k].value;
  }
  if (e->fields & LCP_EDIT_LIMITS) {
    if (j->type == LCP_JOINT_CONTINUOUS)
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "joint '%s' is continuous: it has no position limits", j->name);
    if (!(isfinite(e->lower) && isfinite(e->upper) && e->lower <= e->upper))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "joint '%s': limits need lower <= upper, both finite (got %g, %g)",
                             j->name, e->lower, e->upper);
    j->lower = e->lower;
    j->upper = e->upper;
    j->has_limits = true;
  }
  return LCP_OK;
}

static bool same_object(const lcp_dynamics_edit_t *a, const lcp_dynamics_edit_t *b) {
  if (a->target != b->target)
    return false;
  return a->target == LCP_EDIT_BODY ? a->body == b->body
                                    : a->robot == b->robot && a->index == b->index;
}

static int check_edit(lcp_world_t *world, const lcp_dynamics_edit_t *edits, int32_t i,
                      resolved_edit *r) {
  const lcp_dynamics_edit_t *e = &edits[i];
  for (int32_t k = 0; k < i; ++k)
    if (same_object(&edits[k], e))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "it addresses the same object as edit %d", (int)k);
  *r = (resolved_edit){.body_slot = -1, .robot_slot = -1};
  switch (e->target) {
  case LCP_EDIT_BODY:
    return check_body(world, e, r);
  case LCP_EDIT_LINK:
    return check_link(world, e, r);
  case LCP_EDIT_JOINT:
    return check_joint(world, e, r);
  }
  return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "unknown target %d", (int)e->target);
}

static void set_material(lcp_world_t *world, const lcp_dynamics_edit_t *e, const resolved_edit *r) {
  for (int32_t g = 0; g < world->model.geom_count; ++g) {
    geom_model *geom = &world->model.geoms[g];
    bool mine = e->target == LCP_EDIT_BODY ? geom->robot == LCP_NULL_ID && geom->body == e->body
                                           : geom->robot == e->robot && geom->link == e->index;
    if (!mine)
      continue;
    if (e->fields & LCP_EDIT_FRICTION)
      geom->friction = r->friction;
    if (e->fields & LCP_EDIT_RESTITUTION)
      geom->restitution = r->restitution;
  }
}

/* Applies a checked edit: nothing here can fail. */
static void apply_edit(lcp_world_t *world, const lcp_dynamics_edit_t *e, const resolved_edit *r) {
  if (e->target == LCP_EDIT_BODY && (e->fields & MASS_FIELDS)) {
    body_model *m = &world->model.bodies[r->body_slot];
    m->mass = r->mass;
    m->inv_mass = 1.0 / r->mass;
    m->inertia_local = m3_from(r->inertia);
    m3_inverse(&m->inertia_local, &m->inv_inertia_local, 1e-300);
  } else if (e->target == LCP_EDIT_LINK && (e->fields & MASS_FIELDS)) {
    mb_link *l = &world->model.robots[r->robot_slot].mb.links[e->index];
    l->mass = r->mass;
    l->com = v3_from(r->com);
    /* Exactly symmetric, as the model is built. */
    mat3 I = m3_from(r->inertia), It = m3_transpose(&I);
    l->inertia = m3_add(&I, &It);
    l->inertia = m3_scale(&l->inertia, 0.5);
  } else if (e->target == LCP_EDIT_JOINT) {
    world->model.robots[r->robot_slot].joints[e->index] = r->joint;
  }
  if (e->fields & MATERIAL_FIELDS)
    set_material(world, e, r);
}

int lcp_world_edit_dynamics(lcp_world_t *world, const lcp_dynamics_edit_t *edits, int32_t count,
                            int32_t *failed_edit) {
  if (failed_edit)
    *failed_edit = -1;
  if (count < 0 || (count > 0 && !edits))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "no edits to apply");
  /* Checked first, all of them: an edit resolved here is resolved again
   * when applied (nothing changes in between), so nothing is kept. */
  for (int32_t i = 0; i < count; ++i) {
    resolved_edit r;
    int rc = check_edit(world, edits, i, &r);
    if (rc != LCP_OK) {
      char why[sizeof world->last_error];
      snprintf(why, sizeof why, "%s", world->last_error);
      if (failed_edit)
        *failed_edit = i;
      return lcp__world_fail(world, rc, "edit %d: %s", (int)i, why);
    }
  }
  for (int32_t i = 0; i < count; ++i) {
    resolved_edit r;
    check_edit(world, edits, i, &r);
    apply_edit(world, &edits[i], &r);
  }
  /* A robot's kinematics do not depend on masses; its next pass (every
   * step's and every dynamics query's) uses the new ones. */
  return LCP_OK;
}

int lcp_body_set_mass(lcp_world_t *world, lcp_body_id id, double mass, const double inertia[9]) {
  lcp_dynamics_edit_t e = {.target = LCP_EDIT_BODY,
                           .body = id,
                           .fields = LCP_EDIT_MASS | LCP_EDIT_INERTIA,
                           .mass = mass};
  if (!inertia)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "inertia is NULL");
  memcpy(e.inertia, inertia, sizeof e.inertia);
  return lcp_world_edit_dynamics(world, &e, 1, NULL);
}

int lcp_body_set_material(lcp_world_t *world, lcp_body_id id, double friction, double restitution) {
  const lcp_dynamics_edit_t e = {.target = LCP_EDIT_BODY,
                                 .body = id,
                                 .fields = LCP_EDIT_FRICTION | LCP_EDIT_RESTITUTION,
                                 .friction = friction,
                                 .restitution = restitution};
  return lcp_world_edit_dynamics(world, &e, 1, NULL);
}

/* ---- copying the dynamics of a world of the same layout ---- */

/* Whether the two worlds hold the same objects in the same slots: what
 * copying model values slot by slot needs to mean what it says. */
static bool same_layout(const world_model *a, const world_model *b) {
  if (a->body_count != b->body_count || a->geom_count != b->geom_count ||
      a->robot_count != b->robot_count)
    return false;
  for (int32_t i = 0; i < a->body_count; ++i)
    if (a->bodies[i].id != b->bodies[i].id || a->bodies[i].type != b->bodies[i].type)
      return false;
  for (int32_t i = 0; i < a->geom_count; ++i) {
    const geom_model *ga = &a->geoms[i], *gb = &b->geoms[i];
    if (ga->id != gb->id || ga->body != gb->body || ga->robot != gb->robot || ga->link != gb->link)
      return false;
  }
  for (int32_t i = 0; i < a->robot_count; ++i) {
    const robot_model *ra = &a->robots[i], *rb = &b->robots[i];
    if (ra->id != rb->id || strcmp(ra->name, rb->name) != 0 ||
        ra->mb.link_count != rb->mb.link_count || ra->mb.joint_count != rb->mb.joint_count ||
        ra->mb.floating != rb->mb.floating)
      return false;
    for (int32_t j = 0; j < ra->mb.joint_count; ++j)
      if (ra->joints[j].type != rb->joints[j].type || ra->joints[j].link != rb->joints[j].link)
        return false;
  }
  return true;
}

int lcp_world_copy_dynamics(lcp_world_t *to, const lcp_world_t *from) {
  if (!same_layout(&to->model, &from->model))
    return lcp__world_fail(to, LCP_ERR_MISMATCH,
                           "the worlds' bodies, geoms or robots differ: dynamics are copied "
                           "between worlds of the same layout only");
  /* Exactly the fields apply_edit writes, so that every edit ever made on
   * from, and nothing else, carries over. */
  for (int32_t i = 0; i < to->model.body_count; ++i) {
    body_model *t = &to->model.bodies[i];
    const body_model *f = &from->model.bodies[i];
    t->mass = f->mass;
    t->inv_mass = f->inv_mass;
    t->inertia_local = f->inertia_local;
    t->inv_inertia_local = f->inv_inertia_local;
  }
  for (int32_t i = 0; i < to->model.geom_count; ++i) {
    to->model.geoms[i].friction = from->model.geoms[i].friction;
    to->model.geoms[i].restitution = from->model.geoms[i].restitution;
  }
  for (int32_t i = 0; i < to->model.robot_count; ++i) {
    robot_model *t = &to->model.robots[i];
    const robot_model *f = &from->model.robots[i];
    for (int32_t k = 0; k < t->mb.link_count; ++k) {
      t->mb.links[k].mass = f->mb.links[k].mass;
      t->mb.links[k].com = f->mb.links[k].com;
      t->mb.links[k].inertia = f->mb.links[k].inertia;
    }
    for (int32_t j = 0; j < t->mb.joint_count; ++j) {
      joint_model *tj = &t->joints[j];
      const joint_model *fj = &f->joints[j];
      tj->has_limits = fj->has_limits;
      tj->lower = fj->lower;
      tj->upper = fj->upper;
      tj->effort_limit = fj->effort_limit;
      tj->velocity_limit = fj->velocity_limit;
      tj->damping = fj->damping;
      tj->friction = fj->friction;
    }
  }
  return LCP_OK;
}
