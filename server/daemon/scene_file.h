/* SPDX-License-Identifier: Apache-2.0 */
/* Scene files (--world FILE): settings, ground, robots by URDF path with
 * poses, and primitive bodies, in a small XML format read with libxml2.
 * The format is described in README.md, "Scene files". */
#ifndef LCPD_SCENE_FILE_H
#define LCPD_SCENE_FILE_H

#include "scene.h"

#include "lcpsim/urdf.h"

#include <stddef.h>

/* Reads a scene file into *scene (initialised here). Relative URDF paths are
 * relative to the scene file's directory; its robots are loaded with
 * urdf_options (package:// lookup and the like; NULL: the defaults), each
 * <robot base> overriding the base type. On error the scene is empty and
 * the message "FILE:LINE: what". */
int lcpd_scene_file_load(const char *path, const lcp_urdf_options_t *urdf_options,
                         lcpd_scene_t *scene, lcpd_error_t *error);

/* The same, with the file read by rules (NULL: not confined; a client's
 * request: confined below the model roots, as LoadModel's files). Relative
 * URDF paths are relative to the file's resolved directory. */
int lcpd_scene_file_load_confined(const char *path, const lcp_file_rules_t *rules,
                                  const lcp_urdf_options_t *urdf_options, lcpd_scene_t *scene,
                                  lcpd_error_t *error);
/* A scene document given as text (size bytes); label names it in messages
 * ("LABEL:LINE: what"). Relative URDF paths are as urdf_options' file rules
 * take them (confined: tried below each root). */
int lcpd_scene_text_load(const char *label, const char *text, size_t size,
                         const lcp_urdf_options_t *urdf_options, lcpd_scene_t *scene,
                         lcpd_error_t *error);

#endif
