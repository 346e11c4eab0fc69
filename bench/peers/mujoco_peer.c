/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-bench-mujoco SCENE [options]: lcpsim-bench's pyramid, chain, arm
 * and quadruped in MuJoCo (the C API of Debian's libmujoco, 2.2), one
 * key=value line per run like lcpsim-bench's.
 *
 * The model is MJCF written here from the scene lcpsim builds (peer.h): the
 * same shapes, masses, inertias (explicit <inertial>, none from the geoms),
 * joint frames, axes and limits, base pose and initial joint values; the same
 * timestep, gravity, solver iteration cap (20) and steps; friction μ on every
 * geom (MuJoCo takes the larger of two geoms' μ, lcpsim their geometric mean:
 * the same where both carry the scene's one μ, as here); no self-collision
 * of a robot (contype/conaffinity), as lcpsim's scenes.
 *
 * What cannot match:
 * - The contact model. MuJoCo's contacts are soft (solref 0.02 s, solimp
 *   0.9–0.95, its defaults) and solved as a convex optimisation, by Newton's
 *   method by default (--solver pgs|cg), with an elliptic cone by default
 *   here, lcpsim's friction model (--cone pyramidal, MuJoCo's own default,
 *   linearises it); lcpsim solves a hard velocity-level LCP by projected
 *   Gauss–Seidel with Baumgarte stabilisation. The solver stops before 20
 *   iterations at MuJoCo's tolerance (1e-8), lcpsim at its own (1e-7 m/s).
 * - The PD controllers. The kp part is a position actuator (force limited to
 *   the joint's effort), the kd part joint damping, which the Euler
 *   integrator (default; --integrator implicit) treats implicitly; lcpsim's
 *   controller is one implicit row of its LCP, kp and kd together, clamped
 *   to the effort as a whole. The damping here is not clamped.
 * - The pile: MuJoCo 2.2 sizes its constraint arrays for the worst case
 *   (njmax × njmax doubles), gigabytes for the 1000 bodies; it is left out. */
#include "peer.h"

#include <mujoco/mujoco.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct mujoco_world {
  mjModel *model;
  mjData *data;
  const peer_scene *scene;
  int *body;     /* MuJoCo body of each solid or robot link */
  int *qpos_adr; /* qpos index of each movable joint */
  char description[128];
} mujoco_world;

static void report_warning(const char *message) { fprintf(stderr, "mujoco: %s\n", message); }

static void report_error(const char *message) {
  fprintf(stderr, "mujoco: %s\n", message);
  exit(1);
}

static const char *choice(const char *given, const char *fallback) {
  return given && *given ? given : fallback;
}

/* Maps a lower-case option value onto MuJoCo's MJCF spelling. */
static const char *mjcf_word(const char *value, const char *const *words, int count) {
  for (int i = 0; i < count; ++i)
    if (strcasecmp(value, words[i]) == 0)
      return words[i];
  return NULL;
}

static void write_quat(FILE *f, const char *key, const double q[4]) {
  fprintf(f, " %s=\"%.17g %.17g %.17g %.17g\"", key, q[0], q[1], q[2], q[3]);
}

static void write_vec(FILE *f, const char *key, const double v[3]) {
  fprintf(f, " %s=\"%.17g %.17g %.17g\"", key, v[0], v[1], v[2]);
}

/* A geom in its body's frame; `collision` is its contype/conaffinity. */
static int write_geom(FILE *f, const lcp_geom_def_t *g, const char *collision) {
  switch (g->type) {
  case LCP_SHAPE_BOX:
    fprintf(f, "<geom type=\"box\"");
    write_vec(f, "size", g->half_extents);
    break;
  case LCP_SHAPE_SPHERE:
    fprintf(f, "<geom type=\"sphere\" size=\"%.17g\"", g->radius);
    break;
  case LCP_SHAPE_CAPSULE:
  case LCP_SHAPE_CYLINDER:
    fprintf(f, "<geom type=\"%s\" size=\"%.17g %.17g\"",
            g->type == LCP_SHAPE_CAPSULE ? "capsule" : "cylinder", g->radius, g->half_length);
    break;
  default:
    return -1;
  }
  write_vec(f, "pos", g->local_position);
  write_quat(f, "quat", g->local_orientation);
  fprintf(f, " friction=\"%.17g 0.005 0.0001\" %s/>\n", g->friction, collision);
  return 0;
}

static void write_inertial(FILE *f, double mass, const double com[3], const double I[9]) {
  fprintf(f, "<inertial mass=\"%.17g\"", mass);
  write_vec(f, "pos", com);
  fprintf(f, " fullinertia=\"%.17g %.17g %.17g %.17g %.17g %.17g\"/>\n", I[0], I[4], I[8], I[1],
          I[2], I[5]);
}

/* Whether some link's principal moments break A + B ≥ C, which MuJoCo
 * refuses unless told to raise C's partners (balanceinertia). Only for
 * diagonal inertias, which every scene here has. */
static bool needs_balance(const peer_scene *s) {
  for (int32_t i = 0; s->robot && i < s->robot->link_count; ++i) {
    const double *I = s->robot->links[i].inertia;
    if (I[0] > I[4] + I[8] || I[4] > I[0] + I[8] || I[8] > I[0] + I[4])
      return true;
  }
  return false;
}

/* Scenery and free bodies collide with everything; a robot's geoms with
 * those only, not with each other. */
#define SCENERY "contype=\"1\" conaffinity=\"1\""
#define ROBOT_PART "contype=\"1\" conaffinity=\"0\""

static int write_link(FILE *f, const peer_scene *s, int32_t i) {
  const lcp_robot_def_t *def = s->robot;
  const lcp_link_def_t *link = &def->links[i];
  fprintf(f, "<body name=\"l%d\"", (int)i);
  write_vec(f, "pos", i == 0 ? s->base_position : link->origin_position);
  write_quat(f, "quat", i == 0 ? s->base_orientation : link->origin_orientation);
  fprintf(f, ">\n");
  write_inertial(f, link->mass, link->com, link->inertia);
  if (i == 0 && def->floating_base)
    fprintf(f, "<freejoint/>\n");
  for (int32_t j = 0; j < s->joint_count && i > 0; ++j) {
    if (s->joint_link[j] != i)
      continue;
    bool slide = link->joint_type == LCP_JOINT_PRISMATIC;
    fprintf(f, "<joint name=\"j%d\" type=\"%s\"", (int)j, slide ? "slide" : "hinge");
    write_vec(f, "axis", link->axis);
    if (link->joint_type != LCP_JOINT_CONTINUOUS && link->lower <= link->upper)
      fprintf(f, " limited=\"true\" range=\"%.17g %.17g\"", link->lower, link->upper);
    fprintf(f, " damping=\"%.17g\"/>\n", s->controlled ? s->kd[j] : 0.0);
  }
  for (int32_t g = link->first_geom; g < link->first_geom + link->geom_count; ++g)
    if (write_geom(f, &def->geoms[g], ROBOT_PART) != 0)
      return -1;
  for (int32_t c = i + 1; c < def->link_count; ++c)
    if (def->links[c].parent == i && write_link(f, s, c) != 0)
      return -1;
  fprintf(f, "</body>\n");
  return 0;
}

static char *write_mjcf(const peer_scene *s, const peer_options *o, char *error,
                        size_t error_size) {
  static const char *const solvers[] = {"Newton", "PGS", "CG"};
  static const char *const cones[] = {"elliptic", "pyramidal"};
  static const char *const integrators[] = {"Euler", "implicit", "RK4"};
  const char *solver = mjcf_word(choice(o->solver, "newton"), solvers, 3);
  const char *cone = mjcf_word(choice(o->cone, "elliptic"), cones, 2);
  const char *integrator = mjcf_word(choice(o->integrator, "euler"), integrators, 3);
  if (!solver || !cone || !integrator) {
    snprintf(error, error_size,
             "--solver newton|pgs|cg, --cone elliptic|pyramidal, "
             "--integrator euler|implicit|rk4");
    return NULL;
  }
  char *xml = NULL;
  size_t length = 0;
  FILE *f = open_memstream(&xml, &length);
  if (!f) {
    snprintf(error, error_size, "out of memory");
    return NULL;
  }
  /* Room for every contact the scene makes: up to 8 points a pair of boxes,
   * 4 rows a point (pyramidal; 3 elliptic), the joints' limit rows. */
  int32_t bodies = s->robot ? s->robot->link_count : s->solid_count;
  int contacts = 12 * bodies + 64;
  fprintf(f,
          "<mujoco model=\"%s\">\n<compiler angle=\"radian\" inertiafromgeom=\"false\" "
          "balanceinertia=\"%s\"/>\n",
          s->name, needs_balance(s) ? "true" : "false");
  fprintf(f, "<size nconmax=\"%d\" njmax=\"%d\"/>\n", contacts, 4 * contacts + 2 * s->joint_count);
  fprintf(f,
          "<option timestep=\"%.17g\" iterations=\"%d\" solver=\"%s\" cone=\"%s\" "
          "integrator=\"%s\"",
          s->settings.timestep, (int)(o->iterations > 0 ? o->iterations : s->settings.iterations),
          solver, cone, integrator);
  write_vec(f, "gravity", s->settings.gravity);
  fprintf(f,
          "/>\n<worldbody>\n<geom name=\"ground\" type=\"plane\" size=\"0 0 1\" "
          "friction=\"%.17g 0.005 0.0001\" " SCENERY "/>\n",
          s->ground_friction);
  int rc = 0;
  for (int32_t i = 0; i < s->fixture_count && rc == 0; ++i)
    rc = write_geom(f, &s->fixtures[i], SCENERY);
  for (int32_t i = 0; i < s->solid_count && rc == 0; ++i) {
    const peer_solid *b = &s->solids[i];
    static const double at_centre[3] = {0.0, 0.0, 0.0};
    fprintf(f, "<body name=\"s%d\"", (int)i);
    write_vec(f, "pos", b->position);
    write_quat(f, "quat", b->orientation);
    fprintf(f, ">\n<freejoint/>\n");
    write_inertial(f, b->mass, at_centre, b->inertia);
    rc = write_geom(f, &b->shape, SCENERY);
    fprintf(f, "</body>\n");
  }
  if (s->robot && rc == 0)
    rc = write_link(f, s, 0);
  fprintf(f, "</worldbody>\n");
  if (s->controlled) {
    fprintf(f, "<actuator>\n");
    for (int32_t j = 0; j < s->joint_count; ++j) {
      fprintf(f, "<position joint=\"j%d\" kp=\"%.17g\"", (int)j, s->kp[j]);
      if (isfinite(s->effort[j]))
        fprintf(f, " forcelimited=\"true\" forcerange=\"%.17g %.17g\"", -s->effort[j],
                s->effort[j]);
      fprintf(f, "/>\n");
    }
    fprintf(f, "</actuator>\n");
  }
  fprintf(f, "</mujoco>\n");
  if (fclose(f) != 0 || rc != 0) {
    snprintf(error, error_size, rc ? "a shape MuJoCo's MJCF here does not write" : "out of memory");
    free(xml);
    return NULL;
  }
  return xml;
}

static mjModel *load_mjcf(const char *xml, char *error, size_t error_size) {
  mjVFS *vfs = malloc(sizeof *vfs); /* megabytes: file name tables */
  if (!vfs) {
    snprintf(error, error_size, "out of memory");
    return NULL;
  }
  mj_defaultVFS(vfs);
  const char *name = "scene.xml";
  int size = (int)strlen(xml);
  mjModel *model = NULL;
  if (mj_makeEmptyFileVFS(vfs, name, size) == 0) {
    memcpy(vfs->filedata[mj_findFileVFS(vfs, name)], xml, (size_t)size);
    model = mj_loadXML(name, vfs, error, (int)error_size);
  } else {
    snprintf(error, error_size, "cannot make the model's file in MuJoCo's VFS");
  }
  mj_deleteVFS(vfs);
  free(vfs);
  return model;
}

static void mujoco_destroy(void *handle) {
  mujoco_world *w = handle;
  if (!w)
    return;
  if (w->data)
    mj_deleteData(w->data);
  if (w->model)
    mj_deleteModel(w->model);
  free(w->body);
  free(w->qpos_adr);
  free(w);
}

static int find_id(const mjModel *m, int type, char prefix, int32_t index) {
  char name[32];
  snprintf(name, sizeof name, "%c%d", prefix, (int)index);
  return mj_name2id(m, type, name);
}

static void *mujoco_create(const peer_scene *s, const peer_options *o, char *error,
                           size_t error_size) {
  mju_user_warning = report_warning;
  mju_user_error = report_error;
  mujoco_world *w = calloc(1, sizeof *w);
  int32_t bodies = s->robot ? s->robot->link_count : s->solid_count;
  if (w) {
    w->body = calloc((size_t)bodies + 1, sizeof *w->body);
    w->qpos_adr = calloc((size_t)s->joint_count + 1, sizeof *w->qpos_adr);
  }
  if (!w || !w->body || !w->qpos_adr) {
    snprintf(error, error_size, "out of memory");
    mujoco_destroy(w);
    return NULL;
  }
  w->scene = s;
  char *xml = write_mjcf(s, o, error, error_size);
  w->model = xml ? load_mjcf(xml, error, error_size) : NULL;
  free(xml);
  w->data = w->model ? mj_makeData(w->model) : NULL;
  if (!w->data) {
    mujoco_destroy(w);
    return NULL;
  }
  for (int32_t i = 0; i < bodies; ++i)
    w->body[i] = find_id(w->model, mjOBJ_BODY, s->robot ? 'l' : 's', i);
  for (int32_t j = 0; j < s->joint_count; ++j) {
    w->qpos_adr[j] = w->model->jnt_qposadr[find_id(w->model, mjOBJ_JOINT, 'j', j)];
    w->data->qpos[w->qpos_adr[j]] = s->joint_initial[j];
  }
  /* a free base's qpos is its pose, (x, y, z, w, x, y, z), which the model's
   * body pose already gives */
  mj_forward(w->model, w->data);
  const mjOption *opt = &w->model->opt;
  const char *solver =
      opt->solver == mjSOL_NEWTON ? "newton" : (opt->solver == mjSOL_PGS ? "pgs" : "cg");
  const char *integrator = opt->integrator == mjINT_EULER
                               ? "euler"
                               : (opt->integrator == mjINT_IMPLICIT ? "implicit" : "rk4");
  snprintf(w->description, sizeof w->description, " solver=%s friction=%s integrator=%s%s", solver,
           opt->cone == mjCONE_ELLIPTIC ? "cone" : "pyramid", integrator,
           needs_balance(s) ? " inertia=balanced" : "");
  return w;
}

static void mujoco_set_targets(void *handle, const double *targets) {
  mujoco_world *w = handle;
  memcpy(w->data->ctrl, targets, (size_t)w->scene->joint_count * sizeof *targets);
}

static int mujoco_step(void *handle) {
  mujoco_world *w = handle;
  mj_step(w->model, w->data);
  for (int i = 0; i < w->model->nq; ++i)
    if (!isfinite(w->data->qpos[i]))
      return -1;
  return w->data->ncon;
}

static void mujoco_joint_positions(void *handle, double *q) {
  mujoco_world *w = handle;
  for (int32_t j = 0; j < w->scene->joint_count; ++j)
    q[j] = w->data->qpos[w->qpos_adr[j]];
}

static void mujoco_point(void *handle, int32_t index, const double local[3], double out[3]) {
  mujoco_world *w = handle;
  int b = w->body[index];
  const mjtNum *p = w->data->xpos + 3 * b, *R = w->data->xmat + 9 * b;
  for (int r = 0; r < 3; ++r)
    out[r] = p[r] + R[3 * r] * local[0] + R[3 * r + 1] * local[1] + R[3 * r + 2] * local[2];
}

static const char *mujoco_describe(void *handle) { return ((mujoco_world *)handle)->description; }

int main(int argc, char **argv) {
  const peer_engine engine = {
      .name = "mujoco",
      .scenes = "pyramid chain arm quadruped",
      .option_help = "      --solver newton|pgs|cg          MuJoCo's solver (newton)\n"
                     "      --cone elliptic|pyramidal       friction cone (elliptic)\n"
                     "      --integrator euler|implicit|rk4 (euler)\n",
      .create = mujoco_create,
      .destroy = mujoco_destroy,
      .set_targets = mujoco_set_targets,
      .step = mujoco_step,
      .joint_positions = mujoco_joint_positions,
      .point = mujoco_point,
      .describe = mujoco_describe,
  };
  return peer_main(argc, argv, &engine);
}
