/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-bench-bullet SCENE [options]: lcpsim-bench's scenes in Bullet
 * (Debian's libbullet, 3.24), one key=value line per run like lcpsim-bench's.
 * pyramid and pile are btRigidBody bodies under the sequential impulse
 * solver; chain, arm and quadruped are btMultiBody (Featherstone, reduced
 * coordinates, as lcpsim's robots) under the multibody constraint solver.
 *
 * The world is built from the scene lcpsim builds (peer.h): the same shapes,
 * masses, inertias, joint frames and axes, base pose, initial joint values
 * and friction (each object carries √μ and Bullet multiplies the two, giving
 * lcpsim's geometric mean); the same timestep (one stepSimulation call, no
 * substeps), gravity, 20 solver iterations and steps; up to 4 points a pair,
 * as lcpsim's manifolds; no sleeping, no velocity damping; no self-collision
 * of a robot.
 *
 * What cannot match:
 * - Friction. Bullet's default, kept here, is one friction row a point,
 *   along the sliding velocity (any tangent when there is none) and bounded
 *   by μ times the normal impulse: a cone while the point slides, a single
 *   direction while it sticks; lcpsim solves two rows projected on the cone.
 *   Bullet's second row (SOLVER_USE_2_FRICTION_DIRECTIONS, a box) makes its
 *   pyramid slower and its top cube drift centimetres, so it is left off.
 *   Contacts are stabilised by split impulse at Bullet's defaults (ERP 0.2,
 *   no slop), with its warm start (factor 0.85); all 20 iterations run.
 * - Collision margins. Bullet rounds a box's or a cylinder's edges by its
 *   margin (0.04 m by default); smaller shapes (the pile's 0.1 m cubes, the
 *   bin's walls, the quadruped's legs and trunk) get a fifth of their
 *   smallest half-size instead, so that they are not turned into spheres.
 * - The PD controllers are explicit: τ = kp (q* − q) − kd q̇ from the state
 *   at the start of the step, clamped to the joint's effort, added as a
 *   joint torque; lcpsim's are implicit rows of its LCP. Explicit damping
 *   is stable only while kd h / I < 2 for the joint's inertia I: the arm's
 *   last joints (I ≈ 0.001 kg·m² about their z axes) are past it at kd = 10,
 *   h = 1 ms, and the arm falls apart; tip_z_m shows where it ends. Bullet's
 *   joint motors (btMultiBodyJointMotor) take dimensionless gains, not
 *   N·m/rad, so they cannot hold the scene's kp and kd either.
 * - Joint limits are left out (a btMultiBodyJointLimitConstraint adds two
 *   rows a joint every step); no scene here comes near one.
 * - Single precision by default (Debian's "bullet"); -DLCP_BENCH_BULLET_DOUBLE=ON
 *   links "bullet-float64". */
#include "peer.h"

#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

struct BulletWorld {
  const peer_scene *scene = nullptr;
  btDefaultCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher{&configuration};
  btDbvtBroadphase broadphase;
  std::unique_ptr<btConstraintSolver> solver;
  /* owned here, destroyed after the world (members go in reverse order) */
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btCollisionObject>> objects;
  std::unique_ptr<btMultiBody> robot;
  std::unique_ptr<btDiscreteDynamicsWorld> world;
  std::vector<btRigidBody *> solids;
  std::vector<double> targets;
  std::string description;
};

btVector3 vec(const double v[3]) {
  return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2]));
}

/* (w, x, y, z) to Bullet's (x, y, z, w) */
btQuaternion quat(const double q[4]) {
  return btQuaternion(btScalar(q[1]), btScalar(q[2]), btScalar(q[3]), btScalar(q[0]));
}

bool diagonal(const double I[9]) {
  double scale = std::fabs(I[0]) + std::fabs(I[4]) + std::fabs(I[8]);
  return std::fabs(I[1]) + std::fabs(I[2]) + std::fabs(I[3]) + std::fabs(I[5]) + std::fabs(I[6]) +
             std::fabs(I[7]) <=
         1e-12 * scale;
}

btVector3 diagonal_of(const double I[9]) {
  return btVector3(btScalar(I[0]), btScalar(I[4]), btScalar(I[8]));
}

/* Bullet's default margin, or a fifth of the shape's smallest half-size when
 * that is smaller. */
btScalar margin_for(double smallest_half_size) {
  return btScalar(std::fmin(0.04, 0.2 * smallest_half_size));
}

/* The geom's shape with its z axis (a capsule's or a cylinder's axis) along
 * axis 0, 1 or 2 of the frame it is placed in. */
btCollisionShape *make_shape(BulletWorld &w, const lcp_geom_def_t &g, int axis = 2) {
  btCollisionShape *shape = nullptr;
  const btScalar r = btScalar(g.radius), segment = btScalar(2.0 * g.half_length);
  double half[3] = {g.radius, g.radius, g.radius};
  half[axis] = g.half_length;
  switch (g.type) {
  case LCP_SHAPE_BOX:
    shape = new btBoxShape(vec(g.half_extents));
    shape->setMargin(
        margin_for(std::fmin(g.half_extents[0], std::fmin(g.half_extents[1], g.half_extents[2]))));
    break;
  case LCP_SHAPE_SPHERE:
    shape = new btSphereShape(r);
    break;
  case LCP_SHAPE_CAPSULE:
    shape = axis == 0   ? static_cast<btCollisionShape *>(new btCapsuleShapeX(r, segment))
            : axis == 1 ? static_cast<btCollisionShape *>(new btCapsuleShape(r, segment))
                        : new btCapsuleShapeZ(r, segment);
    break;
  case LCP_SHAPE_CYLINDER:
    shape = axis == 0   ? static_cast<btCollisionShape *>(new btCylinderShapeX(vec(half)))
            : axis == 1 ? static_cast<btCollisionShape *>(new btCylinderShape(vec(half)))
                        : new btCylinderShapeZ(vec(half));
    /* Bullet keeps the outer size and moves the inner cylinder */
    shape->setMargin(margin_for(std::fmin(g.radius, g.half_length)));
    break;
  default:
    return nullptr;
  }
  w.shapes.emplace_back(shape);
  return shape;
}

/* The axis of the body frame a geom's z axis lies along when the geom sits
 * at `centre` and only turns its z axis onto one of the frame's (what a
 * capsule's or cylinder's symmetry allows without a compound); −1 if not. */
int aligned_axis(const lcp_geom_def_t &g, const double centre[3]) {
  if (g.local_position[0] != centre[0] || g.local_position[1] != centre[1] ||
      g.local_position[2] != centre[2])
    return -1;
  if (g.local_orientation[0] == 1.0)
    return 2;
  if (g.type != LCP_SHAPE_CAPSULE && g.type != LCP_SHAPE_CYLINDER)
    return -1;
  const double z[3] = {0.0, 0.0, 1.0};
  double turned[3];
  peer_quat_rotate(g.local_orientation, z, turned);
  for (int k = 0; k < 3; ++k)
    if (std::fabs(std::fabs(turned[k]) - 1.0) < 1e-12)
      return k;
  return -1;
}

/* The shape of a link's geoms in its centre-of-mass frame: the geom's own
 * when there is one at the centre along a frame axis; else a compound. */
btCollisionShape *link_shape(BulletWorld &w, const lcp_robot_def_t &def,
                             const lcp_link_def_t &link) {
  int axis = link.geom_count == 1 ? aligned_axis(def.geoms[link.first_geom], link.com) : -1;
  if (axis >= 0)
    return make_shape(w, def.geoms[link.first_geom], axis);
  auto *compound = new btCompoundShape();
  w.shapes.emplace_back(compound);
  for (int32_t g = link.first_geom; g < link.first_geom + link.geom_count; ++g) {
    const lcp_geom_def_t &geom = def.geoms[g];
    btCollisionShape *child = make_shape(w, geom);
    if (!child)
      return nullptr;
    const double offset[3] = {geom.local_position[0] - link.com[0],
                              geom.local_position[1] - link.com[1],
                              geom.local_position[2] - link.com[2]};
    compound->addChildShape(btTransform(quat(geom.local_orientation), vec(offset)), child);
  }
  return compound;
}

btScalar bullet_friction(double mu) { return btScalar(std::sqrt(mu)); }

void add_ground(BulletWorld &w) {
  auto *plane = new btStaticPlaneShape(btVector3(0, 0, 1), 0);
  w.shapes.emplace_back(plane);
  btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, plane);
  info.m_friction = bullet_friction(w.scene->ground_friction);
  auto *ground = new btRigidBody(info);
  w.objects.emplace_back(ground);
  w.world->addRigidBody(ground);
}

void configure_solver(BulletWorld &w, const peer_options &o) {
  btContactSolverInfo &info = w.world->getSolverInfo();
  info.m_numIterations = o.iterations > 0 ? o.iterations : w.scene->settings.iterations;
  w.world->setGravity(vec(w.scene->settings.gravity));
}

bool build_bodies(BulletWorld &w, const peer_options &o, std::string &why) {
  const peer_scene &s = *w.scene;
  w.solver = std::make_unique<btSequentialImpulseConstraintSolver>();
  w.world = std::make_unique<btDiscreteDynamicsWorld>(&w.dispatcher, &w.broadphase, w.solver.get(),
                                                      &w.configuration);
  configure_solver(w, o);
  add_ground(w);
  for (int32_t i = 0; i < s.fixture_count; ++i) {
    const lcp_geom_def_t &g = s.fixtures[i];
    lcp_geom_def_t centred = g;
    centred.local_position[0] = centred.local_position[1] = centred.local_position[2] = 0.0;
    btCollisionShape *shape = make_shape(w, centred);
    if (!shape)
      return why = "a shape not built here", false;
    btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape);
    info.m_friction = bullet_friction(g.friction);
    info.m_startWorldTransform = btTransform(quat(g.local_orientation), vec(g.local_position));
    auto *wall = new btRigidBody(info);
    w.objects.emplace_back(wall);
    w.world->addRigidBody(wall);
  }
  for (int32_t i = 0; i < s.solid_count; ++i) {
    const peer_solid &b = s.solids[i];
    static const double at_centre[3] = {0.0, 0.0, 0.0};
    if (!diagonal(b.inertia) || aligned_axis(b.shape, at_centre) != 2)
      return why = "a body whose inertia is not diagonal in its geom's frame", false;
    btCollisionShape *shape = make_shape(w, b.shape);
    if (!shape)
      return why = "a shape not built here", false;
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(b.mass), nullptr, shape,
                                                  diagonal_of(b.inertia));
    info.m_friction = bullet_friction(b.shape.friction);
    info.m_startWorldTransform = btTransform(quat(b.orientation), vec(b.position));
    auto *body = new btRigidBody(info);
    body->setActivationState(DISABLE_DEACTIVATION);
    w.objects.emplace_back(body);
    w.world->addRigidBody(body);
    w.solids.push_back(body);
  }
  w.description = " solver=si friction=slip";
  return true;
}

bool build_robot(BulletWorld &w, const peer_options &o, std::string &why) {
  const peer_scene &s = *w.scene;
  const lcp_robot_def_t &def = *s.robot;
  for (int32_t i = 0; i < def.link_count; ++i)
    if (!diagonal(def.links[i].inertia))
      return why = "link " + std::to_string(i) + ": inertia not diagonal in the link frame", false;
  auto *solver = new btMultiBodyConstraintSolver();
  w.solver.reset(solver);
  w.world = std::make_unique<btMultiBodyDynamicsWorld>(&w.dispatcher, &w.broadphase, solver,
                                                       &w.configuration);
  configure_solver(w, o);
  add_ground(w);
  const lcp_link_def_t &base = def.links[0];
  w.robot = std::make_unique<btMultiBody>(def.link_count - 1, btScalar(base.mass),
                                          diagonal_of(base.inertia), !def.floating_base, false);
  btMultiBody &mb = *w.robot;
  for (int32_t i = 1; i < def.link_count; ++i) {
    const lcp_link_def_t &link = def.links[i];
    const lcp_link_def_t &parent = def.links[link.parent];
    const double pivot[3] = {link.origin_position[0] - parent.com[0],
                             link.origin_position[1] - parent.com[1],
                             link.origin_position[2] - parent.com[2]};
    /* Bullet's frames are the links' centre-of-mass frames, turned as the
     * links; parent-to-child rotation at q = 0 is the origin's inverse */
    btQuaternion parent_to_this = quat(link.origin_orientation).inverse();
    switch (link.joint_type) {
    case LCP_JOINT_REVOLUTE:
    case LCP_JOINT_CONTINUOUS:
      mb.setupRevolute(i - 1, btScalar(link.mass), diagonal_of(link.inertia), link.parent - 1,
                       parent_to_this, vec(link.axis), vec(pivot), vec(link.com), true);
      break;
    case LCP_JOINT_PRISMATIC:
      mb.setupPrismatic(i - 1, btScalar(link.mass), diagonal_of(link.inertia), link.parent - 1,
                        parent_to_this, vec(link.axis), vec(pivot), vec(link.com), true);
      break;
    case LCP_JOINT_FIXED:
      mb.setupFixed(i - 1, btScalar(link.mass), diagonal_of(link.inertia), link.parent - 1,
                    parent_to_this, vec(pivot), vec(link.com));
      break;
    }
  }
  mb.finalizeMultiDof();
  mb.setLinearDamping(0);
  mb.setAngularDamping(0);
  mb.setHasSelfCollision(false);
  btQuaternion base_rotation = quat(s.base_orientation);
  mb.setBasePos(vec(s.base_position) + quatRotate(base_rotation, vec(base.com)));
  mb.setWorldToBaseRot(base_rotation.inverse());
  for (int32_t j = 0; j < s.joint_count; ++j)
    mb.setJointPos(s.joint_link[j] - 1, btScalar(s.joint_initial[j]));
  static_cast<btMultiBodyDynamicsWorld &>(*w.world).addMultiBody(&mb);
  for (int32_t i = 0; i < def.link_count; ++i) {
    const lcp_link_def_t &link = def.links[i];
    if (link.geom_count == 0)
      continue;
    btCollisionShape *shape = link_shape(w, def, link);
    if (!shape)
      return why = "a shape not built here", false;
    auto *collider = new btMultiBodyLinkCollider(&mb, i - 1);
    w.objects.emplace_back(collider);
    collider->setCollisionShape(shape);
    collider->setFriction(bullet_friction(def.geoms[link.first_geom].friction));
    /* no self-collision: a robot's parts meet only the scenery (static),
     * sorted out in the broadphase; a fixed base is scenery itself, touching
     * the ground without a contact */
    int group = btBroadphaseProxy::DefaultFilter, mask = btBroadphaseProxy::StaticFilter;
    if (i == 0 && !def.floating_base) {
      collider->setCollisionFlags(collider->getCollisionFlags() |
                                  btCollisionObject::CF_STATIC_OBJECT);
      group = btBroadphaseProxy::StaticFilter;
      mask = 0;
    }
    if (i == 0)
      mb.setBaseCollider(collider);
    else
      mb.getLink(i - 1).m_collider = collider;
    w.world->addCollisionObject(collider, group, mask);
  }
  btAlignedObjectArray<btQuaternion> rotations;
  btAlignedObjectArray<btVector3> origins;
  mb.forwardKinematics(rotations, origins);
  mb.updateCollisionObjectWorldTransforms(rotations, origins);
  w.targets.assign(size_t(s.joint_count), 0.0);
  w.description = s.controlled ? " solver=multibody friction=slip pd=explicit"
                               : " solver=multibody friction=slip";
  return true;
}

void *bullet_create(const peer_scene *scene, const peer_options *options, char *error,
                    size_t error_size) {
  auto w = std::make_unique<BulletWorld>();
  w->scene = scene;
  std::string why;
  bool ok = scene->robot ? build_robot(*w, *options, why) : build_bodies(*w, *options, why);
  if (!ok) {
    std::snprintf(error, error_size, "%s", why.c_str());
    return nullptr;
  }
  w->description += sizeof(btScalar) == sizeof(double) ? " precision=double" : " precision=float";
  return w.release();
}

void bullet_destroy(void *handle) { delete static_cast<BulletWorld *>(handle); }

void bullet_set_targets(void *handle, const double *targets) {
  auto &w = *static_cast<BulletWorld *>(handle);
  w.targets.assign(targets, targets + w.scene->joint_count);
}

/* The explicit PD torques of the step about to run. */
void apply_controls(BulletWorld &w) {
  const peer_scene &s = *w.scene;
  for (int32_t j = 0; j < s.joint_count; ++j) {
    int link = s.joint_link[j] - 1;
    double q = w.robot->getJointPos(link), qd = w.robot->getJointVel(link);
    double tau = s.kp[j] * (w.targets[j] - q) - s.kd[j] * qd;
    tau = std::fmax(-s.effort[j], std::fmin(s.effort[j], tau));
    w.robot->addJointTorque(link, btScalar(tau));
  }
}

int bullet_step(void *handle) {
  auto &w = *static_cast<BulletWorld *>(handle);
  if (w.scene->controlled)
    apply_controls(w);
  w.world->stepSimulation(btScalar(w.scene->settings.timestep), 0);
  int contacts = 0;
  for (int m = 0; m < w.dispatcher.getNumManifolds(); ++m)
    contacts += w.dispatcher.getManifoldByIndexInternal(m)->getNumContacts();
  if (w.robot && !std::isfinite(w.robot->getBasePos().z()))
    return -1;
  return contacts;
}

void bullet_joint_positions(void *handle, double *q) {
  auto &w = *static_cast<BulletWorld *>(handle);
  for (int32_t j = 0; j < w.scene->joint_count; ++j)
    q[j] = w.robot->getJointPos(w.scene->joint_link[j] - 1);
}

void bullet_point(void *handle, int32_t index, const double local[3], double out[3]) {
  auto &w = *static_cast<BulletWorld *>(handle);
  btVector3 p;
  if (!w.robot) {
    p = w.solids[index]->getWorldTransform() * vec(local);
  } else {
    const double *com = w.scene->robot->links[index].com;
    const double in_com_frame[3] = {local[0] - com[0], local[1] - com[1], local[2] - com[2]};
    if (index == 0)
      p = w.robot->getBasePos() +
          quatRotate(w.robot->getWorldToBaseRot().inverse(), vec(in_com_frame));
    else
      p = w.robot->localPosToWorld(index - 1, vec(in_com_frame));
  }
  for (int k = 0; k < 3; ++k)
    out[k] = double(p[k]);
}

const char *bullet_describe(void *handle) {
  return static_cast<BulletWorld *>(handle)->description.c_str();
}

} // namespace

int main(int argc, char **argv) {
  peer_engine engine = {};
  engine.name = "bullet";
  engine.scenes = "pyramid pile chain arm quadruped";
  engine.option_help = "";
  engine.create = bullet_create;
  engine.destroy = bullet_destroy;
  engine.set_targets = bullet_set_targets;
  engine.step = bullet_step;
  engine.joint_positions = bullet_joint_positions;
  engine.point = bullet_point;
  engine.describe = bullet_describe;
  return peer_main(argc, argv, &engine);
}
