/* SPDX-License-Identifier: Apache-2.0 */
/* Sensors (lcpsim/robot.h, "sensors"): readings derived, when asked, from
 * the state and from what the last step kept of itself — each robot's q̈ =
 * (qd⁺ − qd)/h and the external wrenches that acted (step.c), and the
 * contact list with its impulses. Nothing here runs inside the step.
 *
 * Accelerations come from the base by the recursion of rigid-body
 * kinematics in world axes (Featherstone, "Rigid Body Dynamics Algorithms",
 * chapter 5, written with classical rather than spatial accelerations);
 * joint reaction wrenches by the backward (Newton–Euler) pass of recursive
 * Newton–Euler over the same accelerations, with the contacts' forces as
 * external forces. */
#include "world_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const robot_model *robot_at(const lcp_world_t *world, lcp_robot_id id, int32_t *slot) {
  if (!world)
    return NULL;
  *slot = id_pool_slot(&world->model.robot_ids, id);
  return *slot < 0 ? NULL : &world->model.robots[*slot];
}

static int body_at(const lcp_world_t *world, lcp_body_id id, int32_t *slot) {
  if (!world)
    return LCP_ERR_INVALID_ARGUMENT;
  *slot = id_pool_slot(&world->model.body_ids, id);
  return *slot < 0 ? LCP_ERR_NOT_FOUND : LCP_OK;
}

/* The checks of a query writing per-link arrays: a live robot, an output,
 * link_count its links; then its kinematics current. */
static int links_query(const lcp_world_t *world, lcp_robot_id id, const void *out,
                       int32_t link_count, int32_t *slot) {
  const robot_model *r = robot_at(world, id, slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!out || link_count != r->mb.link_count)
    return LCP_ERR_INVALID_ARGUMENT;
  lcp__world_ensure_robot_kinematics(world);
  return LCP_OK;
}

/* ---- twists and accelerations ---- */

int lcp_robot_get_link_velocity_local(const lcp_world_t *world, lcp_robot_id id, int32_t link,
                                      double linear[3], double angular[3]) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (link < 0 || link >= r->mb.link_count || !linear || !angular)
    return LCP_ERR_INVALID_ARGUMENT;
  lcp__world_ensure_robot_kinematics(world);
  const mb_data *d = &world->robot_data[slot];
  v3_store(xf_inv_vector(&d->link_x[link], d->link_v[link]), linear);
  v3_store(xf_inv_vector(&d->link_x[link], d->link_w[link]), angular);
  return LCP_OK;
}

int lcp_robot_get_qdd(const lcp_world_t *world, lcp_robot_id id, double *qdd, int32_t nv) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!qdd || nv != r->mb.nv)
    return LCP_ERR_INVALID_ARGUMENT;
  memcpy(qdd, world->state.robots[slot].qdd, sizeof(double) * (size_t)nv);
  return LCP_OK;
}

/* Classical accelerations of links 0 .. last (parents come first, so the
 * recursion needs no more): acc[6 l ..] = (a of the link origin, α). The
 * equations are those of lcp_robot_get_link_accelerations (robot.h). */
static void link_accelerations(const robot_model *r, const robot_state *st, const mb_data *d,
                               int32_t last, vec3 *linear, vec3 *angular) {
  const mb_model *mb = &r->mb;
  for (int32_t l = 0; l <= last; ++l) {
    const mb_link *link = &mb->links[l];
    if (link->parent < 0) {
      linear[l] = mb->floating ? v3_from(st->qdd) : v3_zero();
      angular[l] = mb->floating ? v3_from(st->qdd + 3) : v3_zero();
      continue;
    }
    int32_t p = link->parent;
    vec3 w_p = d->link_w[p];
    vec3 rel = v3_sub(d->link_x[l].p, d->link_x[p].p);
    vec3 a =
        v3_add(linear[p], v3_add(v3_cross(angular[p], rel), v3_cross(w_p, v3_cross(w_p, rel))));
    vec3 alpha = angular[p];
    if (link->v_index >= 0) {
      vec3 s = m3_mulv(&d->link_x[l].R, link->axis);
      double rate = st->qd[link->v_index], accel = st->qdd[link->v_index];
      vec3 s_rate = v3_cross(w_p, v3_scale(s, rate));
      if (link->joint_type == LCP_JOINT_PRISMATIC)
        a = v3_add(v3_madd(a, s, accel), v3_scale(s_rate, 2.0));
      else
        alpha = v3_add(v3_madd(alpha, s, accel), s_rate);
    }
    linear[l] = a;
    angular[l] = alpha;
  }
}

/* Scratch for n links' accelerations, or NULL. */
static vec3 *new_vectors(int32_t n) { return malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof(vec3)); }

int lcp_robot_get_link_accelerations(const lcp_world_t *world, lcp_robot_id id,
                                     double *accelerations, int32_t link_count) {
  int32_t slot;
  int rc = links_query(world, id, accelerations, link_count, &slot);
  if (rc != LCP_OK)
    return rc;
  const robot_model *r = &world->model.robots[slot];
  vec3 *linear = new_vectors(link_count);
  if (!linear)
    return LCP_ERR_NO_MEMORY;
  vec3 *angular = linear + link_count;
  link_accelerations(r, &world->state.robots[slot], &world->robot_data[slot], link_count - 1,
                     linear, angular);
  for (int32_t l = 0; l < link_count; ++l) {
    v3_store(linear[l], accelerations + 6 * l);
    v3_store(angular[l], accelerations + 6 * l + 3);
  }
  free(linear);
  return LCP_OK;
}

/* ---- contact forces ---- */

void lcp_contact_friction_vector(const lcp_contact_info_t *contact, double impulse[3]) {
  vec3 t1, t2;
  /* the tangents the friction rows were built on (contact_rows.c) */
  v3_tangent_basis(v3_from(contact->normal), &t1, &t2);
  vec3 f = v3_add(v3_scale(t1, contact->friction_impulse[0]),
                  v3_scale(t2, contact->friction_impulse[1]));
  v3_store(f, impulse);
}

/* Adds a force at point, as a wrench about `about`, to out[6]. */
static void add_force_at(double out[6], vec3 force, vec3 point, vec3 about) {
  vec3 torque = v3_cross(v3_sub(point, about), force);
  out[0] += force.x, out[1] += force.y, out[2] += force.z;
  out[3] += torque.x, out[4] += torque.y, out[5] += torque.z;
}

/* Adds the forces of contact c on its side b (side 1) or a (side 0), as
 * wrenches about `about`: the normal force ±n λn / h to normal[6], the
 * friction force ±λt / h to friction[6]. */
static void add_contact(const lcp_contact_info_t *c, int side, double h, vec3 about,
                        double normal[6], double friction[6]) {
  double f[3], sign = side ? 1.0 : -1.0;
  lcp_contact_friction_vector(c, f);
  vec3 point = v3_from(c->position);
  add_force_at(normal, v3_scale(v3_from(c->normal), sign * c->normal_impulse / h), point, about);
  add_force_at(friction, v3_scale(v3_from(f), sign / h), point, about);
}

int lcp_robot_get_contact_wrenches(const lcp_world_t *world, lcp_robot_id id, double *wrenches,
                                   int32_t link_count) {
  int32_t slot;
  int rc = links_query(world, id, wrenches, link_count, &slot);
  if (rc != LCP_OK)
    return rc;
  const mb_data *d = &world->robot_data[slot];
  double h = world->model.settings.timestep;
  memset(wrenches, 0, 12 * sizeof(double) * (size_t)link_count);
  for (int32_t k = 0; k < world->contact_count; ++k) {
    const lcp_contact_info_t *c = &world->contacts[k];
    for (int side = 0; side < 2; ++side) {
      int32_t robot = side ? c->robot_b : c->robot_a, link = side ? c->link_b : c->link_a;
      if (robot == id && link >= 0 && link < link_count)
        add_contact(c, side, h, d->link_x[link].p, wrenches + 12 * link, wrenches + 12 * link + 6);
    }
  }
  return LCP_OK;
}

int lcp_body_get_contact_wrench(const lcp_world_t *world, lcp_body_id id, double normal[6],
                                double friction[6]) {
  int32_t slot;
  int rc = body_at(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (!normal || !friction)
    return LCP_ERR_INVALID_ARGUMENT;
  vec3 center = world->state.bodies[slot].position;
  double h = world->model.settings.timestep;
  memset(normal, 0, 6 * sizeof(double));
  memset(friction, 0, 6 * sizeof(double));
  for (int32_t k = 0; k < world->contact_count; ++k) {
    const lcp_contact_info_t *c = &world->contacts[k];
    for (int side = 0; side < 2; ++side) {
      if ((side ? c->body_b : c->body_a) == id)
        add_contact(c, side, h, center, normal, friction);
    }
  }
  return LCP_OK;
}

/* ---- joint reaction wrenches ---- */

int lcp_robot_get_joint_wrenches(const lcp_world_t *world, lcp_robot_id id, double *wrenches,
                                 int32_t link_count) {
  int32_t slot;
  int rc = links_query(world, id, wrenches, link_count, &slot);
  if (rc != LCP_OK)
    return rc;
  const robot_model *r = &world->model.robots[slot];
  vec3 *linear = new_vectors(link_count);
  double *contact = malloc(12 * sizeof(double) * (size_t)link_count);
  if (!linear || !contact) {
    free(linear);
    free(contact);
    return LCP_ERR_NO_MEMORY;
  }
  vec3 *angular = linear + link_count;
  const mb_model *mb = &r->mb;
  const robot_state *st = &world->state.robots[slot];
  const mb_data *d = &world->robot_data[slot];
  vec3 g = v3_from(world->model.settings.gravity);
  link_accelerations(r, st, d, link_count - 1, linear, angular);
  lcp_robot_get_contact_wrenches(world, id, contact, link_count);
  /* Each link's wrench about its own origin o: what it needs, m (a_c − g)
   * at its centre of mass c and I α + ω × I ω, less the external wrenches
   * (step_link_wrench and contacts, both about o already). */
  for (int32_t l = 0; l < link_count; ++l) {
    const mb_link *link = &mb->links[l];
    const xform *x = &d->link_x[l];
    vec3 w = d->link_w[l];
    vec3 rc = m3_mulv(&x->R, link->com);
    vec3 a_c = v3_add(linear[l], v3_add(v3_cross(angular[l], rc), v3_cross(w, v3_cross(w, rc))));
    vec3 force = v3_scale(v3_sub(a_c, g), link->mass);
    mat3 I = m3_rotate_tensor(&x->R, &link->inertia);
    vec3 torque = v3_add(m3_mulv(&I, angular[l]), v3_cross(w, m3_mulv(&I, w)));
    torque = v3_add(torque, v3_cross(rc, force));
    double *out = wrenches + 6 * l;
    const double *ext = st->step_link_wrench + 6 * l, *cn = contact + 12 * l, *cf = cn + 6;
    for (int k = 0; k < 3; ++k) {
      out[k] = v3_get(force, k) - ext[k] - cn[k] - cf[k];
      out[3 + k] = v3_get(torque, k) - ext[3 + k] - cn[3 + k] - cf[3 + k];
    }
  }
  /* children into parents, each moved from its origin to the parent's:
   * τ_p = τ + (o − o_p) × f */
  for (int32_t l = link_count - 1; l > 0; --l) {
    int32_t p = mb->links[l].parent;
    add_force_at(wrenches + 6 * p, v3_from(wrenches + 6 * l), d->link_x[l].p, d->link_x[p].p);
    double *out = wrenches + 6 * p + 3;
    out[0] += wrenches[6 * l + 3], out[1] += wrenches[6 * l + 4], out[2] += wrenches[6 * l + 5];
  }
  free(linear);
  free(contact);
  return LCP_OK;
}

/* ---- energy ---- */

int lcp_robot_get_energy(const lcp_world_t *world, lcp_robot_id id, double *kinetic,
                         double *potential) {
  int32_t slot;
  const robot_model *r = robot_at(world, id, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  if (!kinetic || !potential)
    return LCP_ERR_INVALID_ARGUMENT;
  lcp__world_ensure_robot_kinematics(world);
  const mb_data *d = &world->robot_data[slot];
  *kinetic = lcp__mb_kinetic_energy(&r->mb, d);
  *potential = lcp__mb_potential_energy(&r->mb, d, v3_from(world->model.settings.gravity));
  return LCP_OK;
}

int lcp_body_get_energy(const lcp_world_t *world, lcp_body_id id, double *kinetic,
                        double *potential) {
  int32_t slot;
  int rc = body_at(world, id, &slot);
  if (rc != LCP_OK)
    return rc;
  if (!kinetic || !potential)
    return LCP_ERR_INVALID_ARGUMENT;
  const body_model *m = &world->model.bodies[slot];
  const body_state *s = &world->state.bodies[slot];
  if (m->type != LCP_BODY_DYNAMIC) {
    *kinetic = *potential = 0.0;
    return LCP_OK;
  }
  /* ½ m v·v + ½ ω_b·I ω_b with ω_b the angular velocity in body axes */
  vec3 w_body = q_rotate(q_conj(s->orientation), s->angular_velocity);
  *kinetic = 0.5 * m->mass * v3_len2(s->linear_velocity) +
             0.5 * v3_dot(w_body, m3_mulv(&m->inertia_local, w_body));
  *potential = -m->mass * v3_dot(v3_from(world->model.settings.gravity), s->position);
  return LCP_OK;
}

/* ---- IMUs ---- */

lcp_imu_def_t lcp_imu_def_default(void) {
  return (lcp_imu_def_t){.robot = LCP_NULL_ID, .orientation = {1.0, 0.0, 0.0, 0.0}};
}

static bool finite3(const double v[3]) {
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

int lcp_imu_add(lcp_world_t *world, const lcp_imu_def_t *def, lcp_imu_id *out_id) {
  if (!world || !def)
    return LCP_ERR_INVALID_ARGUMENT;
  int32_t slot;
  const robot_model *r = robot_at(world, def->robot, &slot);
  if (!r)
    return lcp__world_fail(world, LCP_ERR_NOT_FOUND, "imu: no robot with id %d", (int)def->robot);
  if (def->link < 0 || def->link >= r->mb.link_count)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "imu: link %d is not a link of robot '%s' (it has %d)", (int)def->link,
                           r->name, (int)r->mb.link_count);
  if (memchr(def->name, '\0', LCP_NAME_MAX) == NULL)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "imu: name is not terminated");
  if (!finite3(def->position) || !lcp_quat_is_valid(def->orientation) ||
      !finite3(def->accel_bias) || !finite3(def->gyro_bias))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "imu '%s': pose and biases must be finite, with a non-zero quaternion",
                           def->name);
  if (!(def->accel_noise >= 0.0) || !(def->gyro_noise >= 0.0) || !isfinite(def->accel_noise) ||
      !isfinite(def->gyro_noise))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "imu '%s': noise must be finite and >= 0 (got %g and %g)", def->name,
                           def->accel_noise, def->gyro_noise);
  /* Bounded so that a reading (the site's acceleration, at most the state's
   * bounds allow, plus bias and noise) stays finite. */
  for (int k = 0; k < 3; ++k)
    if (!(fabs(def->position[k]) <= LCP_STATE_MAX_POSITION) ||
        !(fabs(def->accel_bias[k]) <= LCP_IMU_MAX_BIAS) ||
        !(fabs(def->gyro_bias[k]) <= LCP_IMU_MAX_BIAS))
      return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                             "imu '%s': its offset must be within %g m and its biases within %g",
                             def->name, LCP_STATE_MAX_POSITION, LCP_IMU_MAX_BIAS);
  if (!(def->accel_noise <= LCP_IMU_MAX_NOISE && def->gyro_noise <= LCP_IMU_MAX_NOISE))
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT,
                           "imu '%s': noise must be <= %g (got %g and %g)", def->name,
                           LCP_IMU_MAX_NOISE, def->accel_noise, def->gyro_noise);
  lcp_imu_id existing;
  if (def->name[0] != '\0' && lcp_imu_find(world, def->name, &existing) == LCP_OK)
    return lcp__world_fail(world, LCP_ERR_INVALID_ARGUMENT, "an imu named '%s' exists already",
                           def->name);
  if (lcp__world_reserve((void **)&world->imus, &world->imu_capacity, world->imu_count + 1,
                         sizeof *world->imus) != LCP_OK)
    return lcp__world_fail(world, LCP_ERR_NO_MEMORY, "out of memory adding an imu");
  lcp_imu_def_t *imu = &world->imus[world->imu_count];
  *imu = *def;
  q_store(q_normalize(q_from(def->orientation)), imu->orientation);
  if (out_id)
    *out_id = world->imu_count;
  world->imu_count++;
  return LCP_OK;
}

int32_t lcp_world_imu_count(const lcp_world_t *world) { return world ? world->imu_count : 0; }

int lcp_imu_get_def(const lcp_world_t *world, lcp_imu_id id, lcp_imu_def_t *out) {
  if (!world || !out)
    return LCP_ERR_INVALID_ARGUMENT;
  if (id < 0 || id >= world->imu_count)
    return LCP_ERR_NOT_FOUND;
  *out = world->imus[id];
  return LCP_OK;
}

int lcp_imu_find(const lcp_world_t *world, const char *name, lcp_imu_id *out_id) {
  if (!world || !name || name[0] == '\0')
    return LCP_ERR_INVALID_ARGUMENT;
  for (int32_t i = 0; i < world->imu_count; ++i)
    if (strncmp(world->imus[i].name, name, LCP_NAME_MAX) == 0) {
      if (out_id)
        *out_id = i;
      return LCP_OK;
    }
  return LCP_ERR_NOT_FOUND;
}

/* SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators"): a bijective mix of a 64-bit counter. */
static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* A standard normal draw for (seed, step, channel), by Box–Muller from two
 * uniforms in (0, 1]: z = √(−2 ln u₁) cos(2π u₂). */
static double gaussian(uint64_t seed, uint64_t step, uint32_t channel) {
  uint64_t key = splitmix64(seed ^ splitmix64(step ^ ((uint64_t)channel << 56)));
  double u1 = ((double)(splitmix64(key) >> 11) + 1.0) * 0x1.0p-53;
  double u2 = (double)(splitmix64(key ^ 0x5DEECE66Dull) >> 11) * 0x1.0p-53;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int lcp_imu_read(const lcp_world_t *world, lcp_imu_id id, double specific_force[3],
                 double angular_rate[3]) {
  if (!world || !specific_force || !angular_rate)
    return LCP_ERR_INVALID_ARGUMENT;
  if (id < 0 || id >= world->imu_count)
    return LCP_ERR_NOT_FOUND;
  const lcp_imu_def_t *imu = &world->imus[id];
  int32_t slot;
  const robot_model *r = robot_at(world, imu->robot, &slot);
  if (!r)
    return LCP_ERR_NOT_FOUND;
  vec3 *linear = new_vectors(imu->link + 1);
  if (!linear)
    return LCP_ERR_NO_MEMORY;
  vec3 *angular = linear + imu->link + 1;
  lcp__world_ensure_robot_kinematics(world);
  const mb_data *d = &world->robot_data[slot];
  link_accelerations(r, &world->state.robots[slot], d, imu->link, linear, angular);
  const xform *x = &d->link_x[imu->link];
  vec3 w = d->link_w[imu->link];
  /* the site's acceleration a + α × r + ω × (ω × r), r = R p from the link
   * origin; the site's axes R R_s */
  vec3 rel = m3_mulv(&x->R, v3_from(imu->position));
  vec3 a = v3_add(linear[imu->link],
                  v3_add(v3_cross(angular[imu->link], rel), v3_cross(w, v3_cross(w, rel))));
  free(linear);
  quat site = q_mul(x->q, q_from(imu->orientation));
  vec3 f = q_rotate(q_conj(site), v3_sub(a, v3_from(world->model.settings.gravity)));
  vec3 rate = q_rotate(q_conj(site), w);
  uint64_t step = world->state.step_count;
  for (int k = 0; k < 3; ++k) {
    double accel_noise =
        imu->accel_noise > 0.0 ? imu->accel_noise * gaussian(imu->seed, step, k) : 0.0;
    double gyro_noise =
        imu->gyro_noise > 0.0 ? imu->gyro_noise * gaussian(imu->seed, step, 3 + k) : 0.0;
    specific_force[k] = v3_get(f, k) + imu->accel_bias[k] + accel_noise;
    angular_rate[k] = v3_get(rate, k) + imu->gyro_bias[k] + gyro_noise;
  }
  return LCP_OK;
}
