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

#endif
