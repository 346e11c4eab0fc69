/* SPDX-License-Identifier: Apache-2.0 */
#include "scene_file.h"

#include "log.h"

#include "lcpsim/urdf.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
  const char *path; /* for messages */
  const char *base; /* relative URDF paths are relative to its directory; NULL: as given */
  lcpd_error_t *error;
  lcpd_scene_t *scene;
  const lcp_urdf_options_t *urdf_options; /* NULL: the defaults */
} reader;

/* The error, as "FILE:LINE: what". */
static int fail_at(reader *r, const xmlNode *node, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(reader *r, const xmlNode *node, int code, const char *fmt, ...) {
  char what[sizeof r->error->message];
  va_list args;
  va_start(args, fmt);
  vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  return lcpd_fail(r->error, code, "%s:%ld: %s", r->path, node ? xmlGetLineNo((xmlNode *)node) : 0L,
                   what);
}

#define BAD LCP_ERR_INVALID_ARGUMENT

static bool named(const xmlNode *node, const char *name) {
  return xmlStrcmp(node->name, (const xmlChar *)name) == 0;
}

/* Every attribute of node must be one of the names given (NULL-terminated):
 * a misspelt attribute is an error, not silently a default. */
static int check_attributes(reader *r, const xmlNode *node, const char *const *known) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    bool found = false;
    for (const char *const *k = known; *k && !found; ++k)
      found = xmlStrcmp(a->name, (const xmlChar *)*k) == 0;
    if (!found) {
      char list[256] = "";
      size_t used = 0;
      for (const char *const *k = known; *k && used + 1 < sizeof list; ++k)
        used +=
            (size_t)snprintf(list + used, sizeof list - used, "%s%s", k == known ? "" : ", ", *k);
      return fail_at(r, node, BAD, "<%s> has no attribute '%s' (it has: %s)", node->name, a->name,
                     list);
    }
  }
  return LCP_OK;
}

/* The attribute's value copied into buffer; false when absent. */
static bool attribute(const xmlNode *node, const char *name, char *buffer, size_t size) {
  xmlChar *value = xmlGetProp((xmlNode *)node, (const xmlChar *)name);
  if (!value)
    return false;
  snprintf(buffer, size, "%s", (const char *)value);
  xmlFree(value);
  return true;
}

/* Reads exactly count finite numbers separated by spaces; leaves out alone
 * when the attribute is absent. */
static int read_numbers(reader *r, const xmlNode *node, const char *name, double *out, int count) {
  char text[512];
  if (!attribute(node, name, text, sizeof text))
    return LCP_OK;
  const char *p = text;
  double values[8];
  int n = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
      ++p;
    if (*p == '\0')
      break;
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(v) || n == count)
      return fail_at(r, node, BAD, "<%s %s=\"%s\">: expected %d finite number%s", node->name, name,
                     text, count, count == 1 ? "" : "s");
    values[n++] = v;
    p = end;
  }
  if (n != count)
    return fail_at(r, node, BAD, "<%s %s=\"%s\">: expected %d finite number%s", node->name, name,
                   text, count, count == 1 ? "" : "s");
  memcpy(out, values, (size_t)count * sizeof *out);
  return LCP_OK;
}

static int read_bool(reader *r, const xmlNode *node, const char *name, bool *out) {
  char text[64];
  if (!attribute(node, name, text, sizeof text))
    return LCP_OK;
  if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
    *out = true;
  else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
    *out = false;
  else
    return fail_at(r, node, BAD, "<%s %s=\"%s\">: expected true or false", node->name, name, text);
  return LCP_OK;
}

static int read_name(reader *r, const xmlNode *node, char out[LCP_NAME_MAX], bool required) {
  char text[512];
  if (!attribute(node, "name", text, sizeof text)) {
    if (required)
      return fail_at(r, node, BAD, "<%s> needs a name", node->name);
    return LCP_OK;
  }
  if (text[0] == '\0' || strlen(text) >= LCP_NAME_MAX)
    return fail_at(r, node, BAD, "<%s name=\"%s\">: a name has 1 to %d bytes", node->name, text,
                   LCP_NAME_MAX - 1);
  if (lcpd_scene_has_name(r->scene, text))
    return fail_at(r, node, BAD, "the name '%s' is used twice", text);
  memcpy(out, text, strlen(text) + 1); /* fits: checked above */
  return LCP_OK;
}

static int read_pose(reader *r, const xmlNode *node, double position[3], double orientation[4]) {
  double rpy[3] = {0, 0, 0};
  int rc = read_numbers(r, node, "xyz", position, 3);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "rpy", rpy, 3);
  if (rc == LCP_OK)
    lcp_quat_from_rpy(rpy, orientation);
  return rc;
}

/* A count read as a number: whole and within int32_t; its range is the
 * engine's to check. */
static int whole_number(reader *r, const xmlNode *node, const char *name, double value,
                        int32_t *out) {
  if (!(fabs(value) <= INT32_MAX && value == floor(value)))
    return fail_at(r, node, BAD, "<%s %s=\"%g\">: expected a whole number", node->name, name,
                   value);
  *out = (int32_t)value;
  return LCP_OK;
}

/* A coefficient of restitution: absent leaves *out alone. */
static int read_restitution(reader *r, const xmlNode *node, double *out) {
  int rc = read_numbers(r, node, "restitution", out, 1);
  if (rc == LCP_OK && !(*out >= 0.0 && *out <= 1.0))
    rc = fail_at(r, node, BAD, "<%s restitution=\"%g\">: must be in [0, 1]", node->name, *out);
  return rc;
}

static int read_settings(reader *r, const xmlNode *node) {
  static const char *const known[] = {"timestep",
                                      "iterations",
                                      "gravity",
                                      "friction",
                                      "sor_omega",
                                      "baumgarte_beta",
                                      "baumgarte_slop",
                                      "mode",
                                      "rate",
                                      "max_push_speed",
                                      "relax_iterations",
                                      "restitution_threshold",
                                      "velocity_limits",
                                      NULL};
  int rc = check_attributes(r, node, known);
  if (rc != LCP_OK)
    return rc;
  lcp_world_settings_t *s = &r->scene->settings;
  double iterations = s->iterations, relax_iterations = s->relax_iterations;
  if ((rc = read_numbers(r, node, "timestep", &s->timestep, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "iterations", &iterations, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "relax_iterations", &relax_iterations, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "max_push_speed", &s->max_push_speed, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "restitution_threshold", &s->restitution_threshold, 1)) !=
          LCP_OK ||
      (rc = read_bool(r, node, "velocity_limits", &s->enforce_velocity_limits)) != LCP_OK ||
      (rc = read_numbers(r, node, "gravity", s->gravity, 3)) != LCP_OK ||
      (rc = read_numbers(r, node, "sor_omega", &s->sor_omega, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "baumgarte_beta", &s->baumgarte_beta, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "baumgarte_slop", &s->baumgarte_slop, 1)) != LCP_OK ||
      (rc = read_numbers(r, node, "rate", &r->scene->rate, 1)) != LCP_OK)
    return rc;
  if ((rc = whole_number(r, node, "iterations", iterations, &s->iterations)) != LCP_OK ||
      (rc = whole_number(r, node, "relax_iterations", relax_iterations, &s->relax_iterations)) !=
          LCP_OK)
    return rc;
  char text[64];
  if (attribute(node, "friction", text, sizeof text)) {
    if (strcmp(text, "cone") == 0)
      s->friction_model = LCP_FRICTION_CONE;
    else if (strcmp(text, "box") == 0)
      s->friction_model = LCP_FRICTION_BOX;
    else
      return fail_at(r, node, BAD, "<settings friction=\"%s\">: expected cone or box", text);
  }
  if (attribute(node, "mode", text, sizeof text)) {
    if (strcmp(text, "lockstep") == 0)
      r->scene->mode = LCPD_MODE_LOCKSTEP;
    else if (strcmp(text, "realtime") == 0)
      r->scene->mode = LCPD_MODE_REALTIME;
    else
      return fail_at(r, node, BAD, "<settings mode=\"%s\">: expected lockstep or realtime", text);
  }
  lcpd_error_t why;
  if (lcpd_settings_validate(s, r->scene->rate, &why) != LCP_OK)
    return fail_at(r, node, why.code, "<settings>: %s", why.message);
  return LCP_OK;
}

static int read_ground(reader *r, const xmlNode *node) {
  static const char *const known[] = {"friction", "restitution", NULL};
  int rc = check_attributes(r, node, known);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "friction", &r->scene->ground_friction, 1);
  if (rc == LCP_OK && !(r->scene->ground_friction >= 0))
    rc = fail_at(r, node, BAD, "<ground friction=\"%g\">: must be >= 0", r->scene->ground_friction);
  if (rc == LCP_OK)
    rc = read_restitution(r, node, &r->scene->ground_restitution);
  r->scene->has_ground = true;
  return rc;
}

static void log_urdf_warning(void *user, lcp_log_level_t level, const char *message) {
  (void)user;
  lcpd_log(level <= LCP_LOG_WARNING ? LCPD_LOG_WARNING : LCPD_LOG_DEBUG, "%s", message);
}

static int read_robot(reader *r, const xmlNode *node) {
  static const char *const known[] = {"name", "urdf", "xyz", "rpy", "base", "self_collision", NULL};
  int rc = check_attributes(r, node, known);
  char name[LCP_NAME_MAX] = "";
  double position[3] = {0, 0, 0}, orientation[4] = {1, 0, 0, 0};
  bool self_collision = false;
  if (rc == LCP_OK)
    rc = read_name(r, node, name, false);
  if (rc == LCP_OK)
    rc = read_pose(r, node, position, orientation);
  if (rc == LCP_OK)
    rc = read_bool(r, node, "self_collision", &self_collision);
  if (rc != LCP_OK)
    return rc;
  lcp_urdf_options_t options = r->urdf_options ? *r->urdf_options : lcp_urdf_options_default();
  options.log = log_urdf_warning;
  char text[64];
  if (attribute(node, "base", text, sizeof text)) {
    if (strcmp(text, "fixed") == 0)
      options.floating_base = 0;
    else if (strcmp(text, "floating") == 0)
      options.floating_base = 1;
    else if (strcmp(text, "default") != 0)
      return fail_at(r, node, BAD, "<robot base=\"%s\">: expected fixed, floating or default",
                     text);
  }
  char urdf[4096];
  if (!attribute(node, "urdf", urdf, sizeof urdf) || urdf[0] == '\0')
    return fail_at(r, node, BAD, "<robot> needs a urdf file");
  /* Relative to the scene file's directory. */
  char path[8192];
  const char *slash = r->base ? strrchr(r->base, '/') : NULL;
  if (urdf[0] == '/' || !slash)
    snprintf(path, sizeof path, "%s", urdf);
  else
    snprintf(path, sizeof path, "%.*s/%s", (int)(slash - r->base), r->base, urdf);
  lcp_robot_def_t *def = NULL;
  char why[sizeof r->error->message];
  rc = lcp_urdf_load_file(path, &options, &def, why, sizeof why);
  if (rc != LCP_OK)
    return fail_at(r, node, rc, "robot '%s': %s", name[0] ? name : urdf, why);
  if (name[0])
    snprintf(def->name, sizeof def->name, "%s", name);
  else if (lcpd_scene_has_name(r->scene, def->name)) {
    char taken[LCP_NAME_MAX];
    snprintf(taken, sizeof taken, "%s", def->name);
    lcp_robot_def_free(&def);
    return fail_at(r, node, BAD, "the name '%s' (from %s) is used twice; give the robot a name",
                   taken, urdf);
  }
  def->self_collision = self_collision;
  lcpd_error_t added;
  rc = lcpd_scene_add_robot(r->scene, def, position, orientation, &added);
  if (rc != LCP_OK)
    return fail_at(r, node, rc, "%s", added.message);
  return LCP_OK;
}

static int read_body(reader *r, const xmlNode *node) {
  static const char *const known[] = {"name",
                                      "shape",
                                      "size",
                                      "xyz",
                                      "rpy",
                                      "mass",
                                      "static",
                                      "friction",
                                      "restitution",
                                      "linear_velocity",
                                      "angular_velocity",
                                      NULL};
  int rc = check_attributes(r, node, known);
  lcpd_body_spec_t body = lcpd_body_spec_default();
  if (rc == LCP_OK)
    rc = read_name(r, node, body.name, true);
  if (rc == LCP_OK)
    rc = read_pose(r, node, body.position, body.orientation);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "mass", &body.mass, 1);
  if (rc == LCP_OK)
    rc = read_bool(r, node, "static", &body.is_static);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "friction", &body.friction, 1);
  if (rc == LCP_OK)
    rc = read_restitution(r, node, &body.restitution);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "linear_velocity", body.linear_velocity, 3);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "angular_velocity", body.angular_velocity, 3);
  if (rc != LCP_OK)
    return rc;
  char shape[64];
  if (!attribute(node, "shape", shape, sizeof shape))
    return fail_at(r, node, BAD, "<body> needs a shape (box, sphere, capsule or cylinder)");
  if (!xmlHasProp((xmlNode *)node, (const xmlChar *)"size"))
    return fail_at(r, node, BAD, "<body> needs a size");
  double size[3] = {0, 0, 0};
  lcpd_shape_t *s = &body.shape;
  if (strcmp(shape, "box") == 0) {
    rc = read_numbers(r, node, "size", size, 3);
    *s = (lcpd_shape_t){.type = LCP_SHAPE_BOX,
                        .half_extents = {size[0] / 2, size[1] / 2, size[2] / 2}};
  } else if (strcmp(shape, "sphere") == 0) {
    rc = read_numbers(r, node, "size", size, 1);
    *s = (lcpd_shape_t){.type = LCP_SHAPE_SPHERE, .radius = size[0]};
  } else if (strcmp(shape, "capsule") == 0 || strcmp(shape, "cylinder") == 0) {
    rc = read_numbers(r, node, "size", size, 2);
    *s = (lcpd_shape_t){.type = shape[1] == 'a' ? LCP_SHAPE_CAPSULE : LCP_SHAPE_CYLINDER,
                        .radius = size[0],
                        .half_length = size[1] / 2};
  } else {
    return fail_at(r, node, BAD, "<body shape=\"%s\">: expected box, sphere, capsule or cylinder",
                   shape);
  }
  if (rc != LCP_OK)
    return rc;
  lcpd_error_t added;
  rc = lcpd_scene_add_body(r->scene, &body, &added);
  if (rc != LCP_OK)
    return fail_at(r, node, rc, "%s", added.message);
  return LCP_OK;
}

/* A name-like attribute (the IMU's own name, its robot's and link's): 1 to
 * LCP_NAME_MAX − 1 bytes, required. */
static int read_required_text(reader *r, const xmlNode *node, const char *name,
                              char out[LCP_NAME_MAX]) {
  char text[512];
  if (!attribute(node, name, text, sizeof text) || text[0] == '\0' || strlen(text) >= LCP_NAME_MAX)
    return fail_at(r, node, BAD, "<%s> needs a %s of 1 to %d bytes", node->name, name,
                   LCP_NAME_MAX - 1);
  memcpy(out, text, strlen(text) + 1);
  return LCP_OK;
}

/* <imu name robot link xyz rpy noise="σ_accel σ_gyro" bias="accel (3) gyro
 * (3)" seed/>: after its robot. */
static int read_imu(reader *r, const xmlNode *node) {
  static const char *const known[] = {"name",  "robot", "link", "xyz", "rpy",
                                      "noise", "bias",  "seed", NULL};
  lcpd_imu_spec_t imu = {.orientation = {1, 0, 0, 0}};
  double noise[2] = {0, 0}, bias[6] = {0, 0, 0, 0, 0, 0};
  int rc = check_attributes(r, node, known);
  if (rc == LCP_OK)
    rc = read_required_text(r, node, "name", imu.name);
  if (rc == LCP_OK)
    rc = read_required_text(r, node, "robot", imu.robot);
  if (rc == LCP_OK)
    rc = read_required_text(r, node, "link", imu.link);
  if (rc == LCP_OK)
    rc = read_pose(r, node, imu.position, imu.orientation);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "noise", noise, 2);
  if (rc == LCP_OK)
    rc = read_numbers(r, node, "bias", bias, 6);
  if (rc != LCP_OK)
    return rc;
  if (!(noise[0] >= 0.0 && noise[1] >= 0.0))
    return fail_at(r, node, BAD, "<imu noise=\"%g %g\">: standard deviations must be >= 0",
                   noise[0], noise[1]);
  char text[64];
  if (attribute(node, "seed", text, sizeof text)) {
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || text[0] == '-')
      return fail_at(r, node, BAD, "<imu seed=\"%s\">: expected a whole number in [0, 2^64)", text);
    imu.seed = (uint64_t)seed;
  }
  imu.accel_noise = noise[0];
  imu.gyro_noise = noise[1];
  memcpy(imu.accel_bias, bias, sizeof imu.accel_bias);
  memcpy(imu.gyro_bias, bias + 3, sizeof imu.gyro_bias);
  lcpd_error_t added;
  rc = lcpd_scene_add_imu(r->scene, &imu, &added);
  if (rc != LCP_OK)
    return fail_at(r, node, rc, "%s", added.message);
  return LCP_OK;
}

static int read_root(reader *r, const xmlNode *root) {
  if (!root || !named(root, "lcpsim"))
    return fail_at(r, root, BAD, "the root element must be <lcpsim>");
  static const char *const known[] = {"version", NULL};
  int rc = check_attributes(r, root, known);
  char version[32];
  if (rc == LCP_OK && attribute(root, "version", version, sizeof version) &&
      strcmp(version, "1") != 0)
    return fail_at(r, root, BAD, "<lcpsim version=\"%s\">: this daemon reads version 1", version);
  bool seen_settings = false, seen_ground = false;
  for (const xmlNode *node = root->children; rc == LCP_OK && node; node = node->next) {
    if (node->type == XML_TEXT_NODE) {
      for (const xmlChar *c = node->content; c && *c; ++c)
        if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
          return fail_at(r, node, BAD, "unexpected text inside <lcpsim>");
      continue;
    }
    if (node->type != XML_ELEMENT_NODE)
      continue; /* comments, processing instructions */
    if (named(node, "settings")) {
      if (seen_settings)
        return fail_at(r, node, BAD, "a second <settings>");
      seen_settings = true;
      rc = read_settings(r, node);
    } else if (named(node, "ground")) {
      if (seen_ground)
        return fail_at(r, node, BAD, "a second <ground>");
      seen_ground = true;
      rc = read_ground(r, node);
    } else if (named(node, "robot")) {
      rc = read_robot(r, node);
    } else if (named(node, "body")) {
      rc = read_body(r, node);
    } else if (named(node, "imu")) {
      rc = read_imu(r, node);
    } else {
      rc =
          fail_at(r, node, BAD,
                  "unknown element <%s> (expected settings, ground, robot, body, imu)", node->name);
    }
  }
  return rc;
}

/* Parses a scene document already read. */
static int parse_scene(reader *r, const char *text, size_t size) {
  xmlDoc *doc = NULL;
  long line = 0;
  char why[sizeof r->error->message];
  int rc = lcp_xml_read(text, size, true, &doc, &line, why, sizeof why);
  if (rc != LCP_OK) {
    rc = lcpd_fail(r->error, rc, "%s:%ld: %s", r->path, line, why);
  } else {
    rc = read_root(r, xmlDocGetRootElement(doc));
    xmlFreeDoc(doc);
  }
  if (rc != LCP_OK)
    lcpd_scene_clear(r->scene);
  return rc;
}

int lcpd_scene_file_load(const char *path, const lcp_urdf_options_t *urdf_options,
                         lcpd_scene_t *scene, lcpd_error_t *error) {
  return lcpd_scene_file_load_confined(path, NULL, urdf_options, scene, error);
}

int lcpd_scene_file_load_confined(const char *path, const lcp_file_rules_t *rules,
                                  const lcp_urdf_options_t *urdf_options, lcpd_scene_t *scene,
                                  lcpd_error_t *error) {
  lcpd_scene_init(scene);
  /* The operator's file: read by the file rules (a regular file of at most
   * LCP_FILE_MAX_DOCUMENT_BYTES, read without blocking) and parsed with the
   * XML hardening (no DOCTYPE, no network, bounded depth); its messages may
   * quote it. A client's (rules confined): below the model roots. */
  char *text = NULL, *resolved = NULL, why[sizeof error->message];
  size_t size = 0;
  int rc = lcp_file_read(path, rules, LCP_FILE_MAX_DOCUMENT_BYTES, &text, &size, &resolved, why,
                         sizeof why);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "%s:0: cannot open the scene file: %s", path, why);
  reader r = {
      .path = path, .base = resolved, .error = error, .scene = scene, .urdf_options = urdf_options};
  rc = parse_scene(&r, text, size);
  free(text);
  free(resolved);
  return rc;
}

int lcpd_scene_text_load(const char *label, const char *text, size_t size,
                         const lcp_urdf_options_t *urdf_options, lcpd_scene_t *scene,
                         lcpd_error_t *error) {
  lcpd_scene_init(scene);
  reader r = {.path = label, .error = error, .scene = scene, .urdf_options = urdf_options};
  return parse_scene(&r, text, size);
}
