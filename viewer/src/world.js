// SPDX-License-Identifier: Apache-2.0
// The three.js objects of one lcpsim Scene, posed by States.
//
// lcpsim's frames: z is up; a Pose is a position and a unit quaternion (w, x, y, z), unset
// orientation meaning identity. A geom's pose is in its link's or body's frame, so each link
// and each body is a group posed from the State, its geoms children posed once from the Scene.
import * as THREE from "three";

const colours = {
  ground: 0xc8cdc4,
  grid: 0x8e958b,
  worldGeom: 0x9aa0a6,
  robot: 0xe0893a,
  staticBody: 0x9c7650,
  bodies: [0x2f6fd6, 0x2aa876, 0xc94a9a, 0x7a5cd6, 0x1f9eb8, 0xc9a227],
  contact: 0xd62828,
};

const PLANE_SIZE = 40; // m: a plane is infinite; this much of it is drawn
const AXES_SIZE = 0.12; // m: the length of a frame's axes

export function setPose(object, pose) {
  const p = pose && pose.position;
  object.position.set(p ? p.x : 0, p ? p.y : 0, p ? p.z : 0);
  const q = pose && pose.orientation;
  // An unset orientation (or an all-zero one, which no rotation has) is the identity.
  if (q && (q.w !== 0 || q.x !== 0 || q.y !== 0 || q.z !== 0))
    object.quaternion.set(q.x, q.y, q.z, q.w).normalize();
  else object.quaternion.identity();
}

function convexGeometry(geom) {
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.Float32BufferAttribute(geom.vertices, 3));
  geometry.setIndex(geom.triangles);
  // One normal per face: a hull is drawn faceted, as it collides.
  const faceted = geometry.toNonIndexed();
  faceted.computeVertexNormals();
  geometry.dispose();
  return faceted;
}

// three.js builds capsules and cylinders along y; lcpsim's lie along the geom's z axis, and a
// +90° turn about x takes y to z.
function alongZ(geometry) {
  return geometry.rotateX(Math.PI / 2);
}

// Lines every GRID_STEP metres over the drawn plane, a millimetre above it so the two never
// fight for depth. Each line is cut into GRID_STEP-long pieces: a line running from in front
// of the camera to behind it is clipped badly by some software rasterisers (SwiftShader, what
// a machine without a GPU draws WebGL with) and vanishes whole.
const GRID_STEP = 0.5;
function gridLines() {
  const half = PLANE_SIZE / 2;
  const n = Math.round(PLANE_SIZE / GRID_STEP);
  const points = [];
  for (let i = 0; i <= n; ++i) {
    const k = -half + i * GRID_STEP;
    for (let j = 0; j < n; ++j) {
      const a = -half + j * GRID_STEP, b = a + GRID_STEP;
      points.push(a, k, 0.001, b, k, 0.001, k, a, 0.001, k, b, 0.001);
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute("position", new THREE.Float32BufferAttribute(points, 3));
  return new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ color: colours.grid }));
}

function planeObject(material) {
  const group = new THREE.Group();
  const ground = new THREE.Mesh(new THREE.PlaneGeometry(PLANE_SIZE, PLANE_SIZE), material);
  group.add(ground);
  group.add(gridLines());
  return group;
}

// The object of one geom, posed in its parent's frame; null for an unknown type.
export function geomObject(geom, colour) {
  const material = new THREE.MeshStandardMaterial({ color: colour, roughness: 0.75, metalness: 0.05 });
  let geometry = null;
  const r = geom.radius, h = geom.half_length;
  switch (geom.type) {
    case "PLANE": {
      material.color.set(colours.ground);
      const plane = planeObject(material);
      setPose(plane, geom.pose);
      return plane;
    }
    case "SPHERE":
      geometry = new THREE.SphereGeometry(r, 32, 16);
      break;
    case "BOX": {
      const e = geom.half_extents || { x: 0, y: 0, z: 0 };
      geometry = new THREE.BoxGeometry(2 * e.x, 2 * e.y, 2 * e.z);
      break;
    }
    case "CAPSULE":
      geometry = alongZ(new THREE.CapsuleGeometry(r, 2 * h, 8, 24));
      break;
    case "CYLINDER":
      geometry = alongZ(new THREE.CylinderGeometry(r, r, 2 * h, 32));
      break;
    case "CONVEX":
      if (geom.vertices.length >= 9 && geom.triangles.length >= 3) geometry = convexGeometry(geom);
      break;
    default:
      break;
  }
  if (!geometry) {
    material.dispose();
    return null;
  }
  const mesh = new THREE.Mesh(geometry, material);
  setPose(mesh, geom.pose);
  return mesh;
}

function addGeoms(parent, geoms, colour) {
  for (const geom of geoms) {
    const object = geomObject(geom, colour);
    if (object) parent.add(object);
  }
}

function axes() {
  const helper = new THREE.AxesHelper(AXES_SIZE);
  helper.material.depthTest = false; // frames inside a link stay visible
  helper.renderOrder = 1;
  return helper;
}

function dispose(object) {
  object.traverse((child) => {
    if (child.geometry) child.geometry.dispose();
    if (child.material) child.material.dispose();
  });
}

export class WorldView {
  constructor(parent) {
    this.root = new THREE.Group();
    parent.add(this.root);
    this.revision = null;
    this.timestep = 0;
    this.robots = []; // { name, links: [Group], frames: [Group] }
    this.bodies = new Map(); // id → { name, group }
    this.frameObjects = [];
    this.framesVisible = false;
    this.contactsVisible = false;
    this.forceScale = 0.02;
    this.contactPool = [];
    this.contactGroup = new THREE.Group();
    parent.add(this.contactGroup);
  }

  // A GetSceneReply: the geoms of the world, its robots and bodies; the info's names, frames
  // and settings.
  setScene(reply) {
    dispose(this.root);
    this.root.clear();
    this.robots = [];
    this.bodies.clear();
    this.frameObjects = [];
    const scene = reply.scene || { revision: 0, world_geoms: [], robots: [], bodies: [] };
    const info = reply.info;
    this.revision = scene.revision;
    if (info && info.settings && info.settings.timestep > 0) this.timestep = info.settings.timestep;

    const world = new THREE.Group();
    addGeoms(world, scene.world_geoms, colours.worldGeom);
    this.root.add(world);

    for (const robotScene of scene.robots) {
      const robot = { name: robotScene.name, links: [], frames: [] };
      for (const link of robotScene.links) {
        const group = new THREE.Group();
        group.name = `${robotScene.name}/${link.name}`;
        addGeoms(group, link.geoms, colours.robot);
        const linkAxes = axes();
        group.add(linkAxes);
        this.frameObjects.push(linkAxes);
        this.root.add(group);
        robot.links.push(group);
      }
      const robotInfo = info ? info.robots.find((r) => r.name === robotScene.name) : null;
      for (const frame of robotInfo ? robotInfo.frames : []) {
        const frameAxes = axes();
        frameAxes.name = `${robotScene.name}/${frame.name}`;
        this.root.add(frameAxes);
        this.frameObjects.push(frameAxes);
        robot.frames.push(frameAxes);
      }
      this.robots.push(robot);
    }

    scene.bodies.forEach((body, index) => {
      const group = new THREE.Group();
      group.name = body.name;
      const colour = body.is_static ? colours.staticBody : colours.bodies[index % colours.bodies.length];
      addGeoms(group, body.geoms, colour);
      const bodyAxes = axes();
      group.add(bodyAxes);
      this.frameObjects.push(bodyAxes);
      this.root.add(group);
      this.bodies.set(body.id, { name: body.name, group });
    });
    this.setFramesVisible(this.framesVisible);
  }

  setTimestep(timestep) {
    if (timestep > 0) this.timestep = timestep;
  }

  setFramesVisible(visible) {
    this.framesVisible = visible;
    for (const object of this.frameObjects) object.visible = visible;
  }

  setContactsVisible(visible) {
    this.contactsVisible = visible;
    this.contactGroup.visible = visible;
  }

  // What the follow menu offers: [{ key, label }].
  followables() {
    const list = [];
    for (const robot of this.robots) list.push({ key: `robot:${robot.name}`, label: `robot ${robot.name}` });
    for (const [id, body] of this.bodies) list.push({ key: `body:${id}`, label: body.name || `body ${id}` });
    return list;
  }

  // The world position of what `key` names (its base link for a robot), or null.
  followPosition(key) {
    if (key.startsWith("robot:")) {
      const robot = this.robots.find((r) => `robot:${r.name}` === key);
      return robot && robot.links.length ? robot.links[0].position : null;
    }
    if (key.startsWith("body:")) {
      const body = this.bodies.get(Number(key.slice(5)));
      return body ? body.group.position : null;
    }
    return null;
  }

  // The key of the robot or body called `name`, or "".
  keyOfName(name) {
    if (this.robots.some((r) => r.name === name)) return `robot:${name}`;
    for (const [id, body] of this.bodies) if (body.name === name) return `body:${id}`;
    return "";
  }

  applyState(state) {
    state.robots.forEach((robotState, index) => {
      let robot = this.robots[index];
      if (!robot || robot.name !== robotState.name) robot = this.robots.find((r) => r.name === robotState.name);
      if (!robot) return;
      const links = Math.min(robot.links.length, robotState.link_poses.length);
      for (let i = 0; i < links; ++i) setPose(robot.links[i], robotState.link_poses[i]);
      const frames = Math.min(robot.frames.length, robotState.frame_poses.length);
      for (let i = 0; i < frames; ++i) setPose(robot.frames[i], robotState.frame_poses[i]);
    });
    for (const bodyState of state.bodies) {
      const body = this.bodies.get(bodyState.id);
      if (body) setPose(body.group, bodyState.pose);
    }
    this.showContacts(state.contacts);
  }

  // Each contact: a dot at its point and an arrow along its normal (from a to b, the push on
  // b) whose length is the normal force, impulse / timestep, times forceScale.
  showContacts(contacts) {
    while (this.contactPool.length < contacts.length) {
      const dot = new THREE.Mesh(
        new THREE.SphereGeometry(0.008, 12, 8),
        new THREE.MeshBasicMaterial({ color: colours.contact, depthTest: false }),
      );
      const arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 0.1, colours.contact);
      // Contacts lie on surfaces and their arrows point into a solid: both are drawn over
      // everything, as the frames are.
      arrow.line.material.depthTest = false;
      arrow.cone.material.depthTest = false;
      dot.renderOrder = arrow.renderOrder = 2;
      const entry = { dot, arrow };
      this.contactGroup.add(dot, arrow);
      this.contactPool.push(entry);
    }
    const direction = new THREE.Vector3();
    this.contactPool.forEach((entry, i) => {
      const contact = contacts[i];
      entry.dot.visible = entry.arrow.visible = Boolean(contact);
      if (!contact) return;
      const p = contact.position || { x: 0, y: 0, z: 0 };
      const n = contact.normal || { x: 0, y: 0, z: 1 };
      entry.dot.position.set(p.x, p.y, p.z);
      const force = this.timestep > 0 ? contact.normal_impulse / this.timestep : 0;
      const length = force * this.forceScale;
      direction.set(n.x, n.y, n.z);
      if (length <= 1e-4 || direction.lengthSq() === 0) {
        entry.arrow.visible = false;
        return;
      }
      entry.arrow.position.copy(entry.dot.position);
      entry.arrow.setDirection(direction.normalize());
      entry.arrow.setLength(length, Math.min(0.3 * length, 0.05), Math.min(0.15 * length, 0.025));
    });
  }
}
