/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-bench-ode SCENE [options]: lcpsim-bench's pyramid, pile and chain
 * in ODE (Debian's libode, 0.16, double precision) with its quickstep
 * solver, one key=value line per run like lcpsim-bench's.
 *
 * The world is built from the scene lcpsim builds (peer.h): the same shapes,
 * masses, inertias, poses, friction (the geometric mean of two geoms' μ, as
 * lcpsim) and initial state; the same timestep, gravity, iteration count and
 * steps; and the settings ODE shares with lcpsim's solver at lcpsim's values:
 * error reduction β = 0.2 (ERP), penetration slop 1 mm (contact surface
 * layer), cfm 1e-9, SOR relaxation ω = 1 (ODE's own default is 1.3; --omega).
 * Up to 4 contact points a pair, as lcpsim's manifolds. The chain is 20
 * bodies joined by hinges (maximal coordinates; ODE has no reduced-coordinate
 * robots) that do not collide with each other, as lcpsim's chain.
 *
 * What cannot match: ODE's friction is a box (dContactApprox1: each of two
 * tangent directions bounded by μ times the normal impulse, lcpsim's
 * --friction box), not lcpsim's default cone; quickstep runs all its
 * iterations (no tolerance); ODE's collision routines make other contact
 * points than lcpsim's (box against box, the capsules against the plane).
 * The arm and the quadruped need joint PD control, which ODE offers only as
 * an explicit torque; they are left to the other peers. */
#include "peer.h"

#include <ode/ode.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS_PER_PAIR 4

typedef struct ode_world {
  dWorldID world;
  dSpaceID space;
  dJointGroupID contact_joints;
  const peer_scene *scene;
  dBodyID *body;      /* of each solid or robot link */
  double (*com)[3];   /* each body's centre of mass in its link's frame (0 for solids) */
  double *friction;   /* μ of each geom (the geoms' data point here) */
  int32_t geom_count; /* geoms made so far */
  int step_contacts;
  char description[96];
} ode_world;

/* Geoms of free bodies and scenery collide with all; a robot's parts with
 * those only (category 2 is not in their collide bits). */
#define SCENERY_CATEGORY 1ul
#define ROBOT_CATEGORY 2ul

static void near_callback(void *data, dGeomID a, dGeomID b) {
  ode_world *w = data;
  dBodyID body_a = dGeomGetBody(a), body_b = dGeomGetBody(b);
  if (!body_a && !body_b)
    return;
  if (body_a && body_b && dAreConnectedExcluding(body_a, body_b, dJointTypeContact))
    return;
  dContact contact[MAX_POINTS_PER_PAIR];
  int n = dCollide(a, b, MAX_POINTS_PER_PAIR, &contact[0].geom, sizeof contact[0]);
  double mu = sqrt(*(const double *)dGeomGetData(a) * *(const double *)dGeomGetData(b));
  for (int i = 0; i < n; ++i) {
    memset(&contact[i].surface, 0, sizeof contact[i].surface);
    contact[i].surface.mode = dContactApprox1;
    contact[i].surface.mu = mu;
    dJointID joint = dJointCreateContact(w->world, w->contact_joints, &contact[i]);
    dJointAttach(joint, body_a, body_b);
  }
  w->step_contacts += n;
}

/* A geom of `shape` on body (NULL: static, in world coordinates), offset by
 * the shape's pose minus `centre` (the body's centre of mass in the frame the
 * shape's pose is given in). */
static int add_geom(ode_world *w, dBodyID body, const lcp_geom_def_t *shape, const double centre[3],
                    unsigned long category) {
  dGeomID g;
  switch (shape->type) {
  case LCP_SHAPE_BOX:
    g = dCreateBox(w->space, 2.0 * shape->half_extents[0], 2.0 * shape->half_extents[1],
                   2.0 * shape->half_extents[2]);
    break;
  case LCP_SHAPE_SPHERE:
    g = dCreateSphere(w->space, shape->radius);
    break;
  case LCP_SHAPE_CAPSULE:
    g = dCreateCapsule(w->space, shape->radius, 2.0 * shape->half_length);
    break;
  case LCP_SHAPE_CYLINDER:
    g = dCreateCylinder(w->space, shape->radius, 2.0 * shape->half_length);
    break;
  default:
    return -1;
  }
  w->friction[w->geom_count] = shape->friction;
  dGeomSetData(g, &w->friction[w->geom_count++]);
  dGeomSetCategoryBits(g, category);
  dGeomSetCollideBits(g, category == ROBOT_CATEGORY ? SCENERY_CATEGORY : ~0ul);
  const double *p = shape->local_position;
  const double *q = shape->local_orientation;
  dQuaternion rotation = {q[0], q[1], q[2], q[3]};
  if (!body) {
    dGeomSetPosition(g, p[0], p[1], p[2]);
    dGeomSetQuaternion(g, rotation);
    return 0;
  }
  dGeomSetBody(g, body);
  dGeomSetOffsetPosition(g, p[0] - centre[0], p[1] - centre[1], p[2] - centre[2]);
  dGeomSetOffsetQuaternion(g, rotation);
  return 0;
}

static dBodyID add_body(ode_world *w, double mass, const double I[9], const double position[3],
                        const double orientation[4]) {
  dBodyID b = dBodyCreate(w->world);
  dMass m;
  dMassSetParameters(&m, mass, 0.0, 0.0, 0.0, I[0], I[4], I[8], I[1], I[2], I[5]);
  dBodySetMass(b, &m);
  dBodySetPosition(b, position[0], position[1], position[2]);
  dQuaternion q = {orientation[0], orientation[1], orientation[2], orientation[3]};
  dBodySetQuaternion(b, q);
  return b;
}

/* The robot as bodies at the links' initial poses (frames composed down the
 * tree: origin, then the joint's rotation), joined by hinges at the joint
 * frames' origins about the joints' axes. */
static int build_robot(ode_world *w, char *error, size_t error_size) {
  const peer_scene *s = w->scene;
  const lcp_robot_def_t *def = s->robot;
  if (!def->floating_base) {
    snprintf(error, error_size, "a fixed base is not built here");
    return -1;
  }
  double(*position)[3] = calloc((size_t)def->link_count, sizeof *position);
  double(*rotation)[4] = calloc((size_t)def->link_count, sizeof *rotation);
  double *angle = calloc((size_t)def->link_count, sizeof *angle);
  int rc = position && rotation && angle ? 0 : -1;
  for (int32_t j = 0; j < s->joint_count && rc == 0; ++j)
    angle[s->joint_link[j]] = s->joint_initial[j];
  for (int32_t i = 0; i < def->link_count && rc == 0; ++i) {
    const lcp_link_def_t *link = &def->links[i];
    if (i == 0) {
      memcpy(position[0], s->base_position, sizeof position[0]);
      memcpy(rotation[0], s->base_orientation, sizeof rotation[0]);
    } else {
      if (link->joint_type != LCP_JOINT_REVOLUTE && link->joint_type != LCP_JOINT_CONTINUOUS) {
        snprintf(error, error_size, "link %d: only hinges are built here", (int)i);
        rc = -1;
        break;
      }
      double offset[3], joint_frame[4];
      peer_quat_rotate(rotation[link->parent], link->origin_position, offset);
      for (int k = 0; k < 3; ++k)
        position[i][k] = position[link->parent][k] + offset[k];
      peer_quat_multiply(rotation[link->parent], link->origin_orientation, joint_frame);
      double half = 0.5 * angle[i],
             turn[4] = {cos(half), sin(half) * link->axis[0], sin(half) * link->axis[1],
                        sin(half) * link->axis[2]};
      peer_quat_multiply(joint_frame, turn, rotation[i]);
    }
    double centre[3];
    peer_quat_rotate(rotation[i], link->com, centre);
    for (int k = 0; k < 3; ++k)
      centre[k] += position[i][k];
    w->body[i] = add_body(w, link->mass, link->inertia, centre, rotation[i]);
    memcpy(w->com[i], link->com, sizeof w->com[i]);
    for (int32_t g = link->first_geom; g < link->first_geom + link->geom_count && rc == 0; ++g)
      rc = add_geom(w, w->body[i], &def->geoms[g], link->com, ROBOT_CATEGORY);
    if (i == 0 || rc != 0)
      continue;
    double axis[3];
    peer_quat_rotate(rotation[i], link->axis, axis);
    dJointID hinge = dJointCreateHinge(w->world, 0);
    dJointAttach(hinge, w->body[link->parent], w->body[i]);
    dJointSetHingeAnchor(hinge, position[i][0], position[i][1], position[i][2]);
    dJointSetHingeAxis(hinge, axis[0], axis[1], axis[2]);
    if (link->joint_type == LCP_JOINT_REVOLUTE && link->lower <= link->upper) {
      /* ODE measures the angle from the pose at attachment */
      dJointSetHingeParam(hinge, dParamLoStop, link->lower - angle[i]);
      dJointSetHingeParam(hinge, dParamHiStop, link->upper - angle[i]);
    }
  }
  if (rc != 0 && !error[0])
    snprintf(error, error_size, "out of memory, or a shape not built here");
  free(position);
  free(rotation);
  free(angle);
  return rc;
}

static void ode_destroy(void *handle) {
  ode_world *w = handle;
  if (!w)
    return;
  if (w->contact_joints)
    dJointGroupDestroy(w->contact_joints);
  if (w->space)
    dSpaceDestroy(w->space);
  if (w->world)
    dWorldDestroy(w->world);
  free(w->body);
  free(w->com);
  free(w->friction);
  free(w);
  dCloseODE();
}

static void *ode_create(const peer_scene *s, const peer_options *o, char *error,
                        size_t error_size) {
  dInitODE2(0);
  ode_world *w = calloc(1, sizeof *w);
  int32_t bodies = s->robot ? s->robot->link_count : s->solid_count;
  int32_t geoms = 1 + s->fixture_count + (s->robot ? s->robot->geom_count : s->solid_count);
  if (w) {
    w->body = calloc((size_t)bodies, sizeof *w->body);
    w->com = calloc((size_t)bodies, sizeof *w->com);
    w->friction = calloc((size_t)geoms, sizeof *w->friction);
  }
  if (!w || !w->body || !w->com || !w->friction) {
    snprintf(error, error_size, "out of memory");
    ode_destroy(w);
    return NULL;
  }
  w->scene = s;
  const lcp_world_settings_t *ls = &s->settings;
  double omega = o->omega > 0.0 ? o->omega : ls->sor_omega;
  w->world = dWorldCreate();
  dWorldSetGravity(w->world, ls->gravity[0], ls->gravity[1], ls->gravity[2]);
  dWorldSetERP(w->world, ls->baumgarte_beta);
  dWorldSetCFM(w->world, ls->cfm);
  dWorldSetContactSurfaceLayer(w->world, ls->baumgarte_slop);
  dWorldSetQuickStepNumIterations(w->world, o->iterations > 0 ? o->iterations : ls->iterations);
  dWorldSetQuickStepW(w->world, omega);
  w->space = dHashSpaceCreate(0);
  w->contact_joints = dJointGroupCreate(0);
  dGeomID ground = dCreatePlane(w->space, 0.0, 0.0, 1.0, 0.0);
  w->friction[w->geom_count] = s->ground_friction;
  dGeomSetData(ground, &w->friction[w->geom_count++]);
  dGeomSetCategoryBits(ground, SCENERY_CATEGORY);
  static const double at_centre[3] = {0.0, 0.0, 0.0};
  int rc = 0;
  for (int32_t i = 0; i < s->fixture_count && rc == 0; ++i)
    rc = add_geom(w, NULL, &s->fixtures[i], at_centre, SCENERY_CATEGORY);
  for (int32_t i = 0; i < s->solid_count && rc == 0; ++i) {
    const peer_solid *b = &s->solids[i];
    w->body[i] = add_body(w, b->mass, b->inertia, b->position, b->orientation);
    rc = add_geom(w, w->body[i], &b->shape, at_centre, SCENERY_CATEGORY);
  }
  if (rc != 0)
    snprintf(error, error_size, "a shape not built here");
  else if (s->robot)
    rc = build_robot(w, error, error_size);
  if (rc != 0) {
    ode_destroy(w);
    return NULL;
  }
  snprintf(w->description, sizeof w->description, " solver=quickstep friction=box omega=%g", omega);
  return w;
}

static void ode_set_targets(void *handle, const double *targets) {
  (void)handle;
  (void)targets; /* no controlled scene runs here */
}

static int ode_step(void *handle) {
  ode_world *w = handle;
  w->step_contacts = 0;
  dSpaceCollide(w->space, w, near_callback);
  int ok = dWorldQuickStep(w->world, w->scene->settings.timestep);
  dJointGroupEmpty(w->contact_joints);
  return ok ? w->step_contacts : -1;
}

static void ode_joint_positions(void *handle, double *q) {
  (void)handle;
  (void)q; /* no scene here measures joints */
}

static void ode_point(void *handle, int32_t index, const double local[3], double out[3]) {
  ode_world *w = handle;
  const double *centre = w->com[index]; /* zero for a solid */
  dVector3 p;
  dBodyGetRelPointPos(w->body[index], local[0] - centre[0], local[1] - centre[1],
                      local[2] - centre[2], p);
  memcpy(out, p, 3 * sizeof *out);
}

static const char *ode_describe(void *handle) { return ((ode_world *)handle)->description; }

int main(int argc, char **argv) {
  const peer_engine engine = {
      .name = "ode",
      .scenes = "pyramid pile chain",
      .option_help = "      --omega W             quickstep's SOR relaxation (lcpsim's: 1)\n",
      .create = ode_create,
      .destroy = ode_destroy,
      .set_targets = ode_set_targets,
      .step = ode_step,
      .joint_positions = ode_joint_positions,
      .point = ode_point,
      .describe = ode_describe,
  };
  return peer_main(argc, argv, &engine);
}
