/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's world: the engine world, the names of what is in it, the
 * scene it was built from (for Reset), snapshot slots, the state stream's
 * settings and the stepping mode. Knows nothing of sockets or protobuf. */
#ifndef LCPD_SIM_H
#define LCPD_SIM_H

#include "held_wrench.h"
#include "scene.h"

#include "lcpsim/lcpsim.h"
#include "lcpsim/robot.h"
#include "lcpsim/urdf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A named free body (the world body and the ground are not listed). */
typedef struct lcpd_body {
  char name[LCP_NAME_MAX];
  lcp_body_id id;
  lcpd_shape_t shape;
  bool is_static;
  double mass;
} lcpd_body_t;

typedef struct lcpd_robot {
  char name[LCP_NAME_MAX];
  lcp_robot_id id;
  int32_t link_count;
  char (*link_names)[LCP_NAME_MAX]; /* link_count, the engine's link order */
} lcpd_robot_t;

/* The world and its names: rebuilt whole on Reset. */
typedef struct lcpd_live {
  lcp_world_t *world;
  lcpd_robot_t *robots;
  int32_t robot_count;
  lcpd_body_t *bodies;
  int32_t body_count;
} lcpd_live_t;

/* What was added to or removed from the world since it was built from its
 * start-up scene, in order: replayed on a copy of the world (CreateWorld
 * copy_of) after that scene, so that the copy has the same robots and
 * bodies under the same engine ids. Reset forgets them, as it forgets what
 * they made. */
typedef enum lcpd_edit_kind {
  LCPD_EDIT_ROBOT,
  LCPD_EDIT_BODY,
  LCPD_EDIT_IMU,
  LCPD_EDIT_REMOVE,
} lcpd_edit_kind_t;

typedef struct lcpd_edit {
  lcpd_edit_kind_t kind;
  union {
    lcpd_robot_spec_t robot; /* its def owned */
    lcpd_body_spec_t body;   /* named */
    lcpd_imu_spec_t imu;
    char removed[LCP_NAME_MAX];
  } as;
} lcpd_edit_t;

typedef struct lcpd_slot {
  char name[LCP_NAME_MAX];
  unsigned char *data;
  size_t size;
} lcpd_slot_t;

/* Limits on the snapshots kept in the daemon. */
#define LCPD_MAX_SLOTS 256
#define LCPD_MAX_SLOT_BYTES ((size_t)256 << 20)

typedef struct lcpd_sim lcpd_sim_t;
/* Called after a step when the stream is due a state. */
typedef void (*lcpd_publish_fn)(lcpd_sim_t *sim, void *user);
/* Called after every step while a recording runs (recording.h), with
 * whether the stream published a state of that step. */
typedef struct lcpd_recorder lcpd_recorder_t;
typedef void (*lcpd_record_fn)(lcpd_sim_t *sim, bool published);

/* Called after every step with its duration in ns (the metrics of --http). */
typedef void (*lcpd_step_observer_fn)(void *user, uint64_t step_ns);

struct lcpd_sim {
  lcpd_scene_t scene; /* as loaded at start-up; owned */
  /* The world's name in the daemon (worlds.h): NULL for the default world,
   * whose states go out on the topic "state" and name no world. */
  const char *world_name;
  /* The robots and bodies added and removed since the scene was built. */
  lcpd_edit_t *edits;
  int32_t edit_count, edit_capacity;
  size_t edit_bytes; /* what their robot definitions hold */
  lcpd_live_t live;
  lcpd_mode_t mode;
  double rate;
  /* Bumped whenever simulated time jumps (Reset, RestoreState), so that the
   * realtime clock re-anchors. */
  uint64_t time_epoch;
  /* The state stream. */
  uint32_t publish_every; /* 0: off */
  bool publish_contacts;
  uint32_t publish_sensors; /* lcpd_sensors_bits of the Subscribe's Sensors; 0: none */
  uint32_t steps_since_publish;
  uint64_t publish_sequence; /* of the last published state */
  lcpd_publish_fn publish;
  void *publish_user;
  /* Named snapshots. */
  lcpd_slot_t *slots;
  int32_t slot_count;
  size_t slot_bytes;
  uint32_t next_body_number; /* for made-up body names */
  /* Where LoadModel finds package:// files after the request's own: the
   * command line's --package-path NAME=DIR, then ROS_PACKAGE_PATH's
   * directories (lcp_urdf_options_t). Not owned: main's, for the daemon's life. */
  const lcp_urdf_package_t *packages;
  int32_t package_count;
  const char *const *package_paths;
  int32_t package_path_count;
  /* The directories below which LoadModel may read files (--model-path, or
   * the shipped robots' directory; then the package directories above), as
   * realpaths. Not owned: main's. */
  const char *const *model_roots;
  int32_t model_root_count;
  lcpd_held_wrenches_t held_wrenches; /* applied before every step (ApplyWrench HOLD) */
  /* Counts the changes of what the world is made of (robots and bodies
   * added or removed, Reset, RestoreState): the Scene.revision. */
  uint64_t scene_revision;
  /* Counts the requests that succeeded and may have changed the world
   * (every call but the read-only ones): a viewer is sent a new State when
   * this or the step count moved, so that a state set without a step (a
   * body moved, a robot posed) shows at once. */
  uint64_t change_count;
  /* The recording (recording.h): NULL when the daemon records nothing;
   * record_step is set while a recording runs. Not owned: main's. */
  lcpd_recorder_t *recorder;
  lcpd_record_fn record_step;

  /* NULL unless --http: then each step is timed (two clock reads). */
  lcpd_step_observer_fn step_observer;
  void *step_observer_user;
};

/* Builds the world from scene, which the sim takes over (the caller's scene
 * is left empty, also on failure). */
int lcpd_sim_init(lcpd_sim_t *sim, lcpd_scene_t *scene, lcpd_error_t *error);
void lcpd_sim_destroy(lcpd_sim_t *sim);

/* A new world like from: built from a copy of its start-up scene, with the
 * robots and bodies added and removed since, its settings and rate, its
 * held wrenches, the packages and model roots it loads from, its dynamics
 * as SetDynamics left them (lcp_world_copy_dynamics), its snapshot slots
 * (the bytes copied), and its controllers' targets; with_state: its whole
 * engine state too (time, poses, velocities, warm starts), so that both
 * step the same afterwards, bitwise. The copy is in lockstep mode, with no
 * stream (it has a topic of its own, which nobody has subscribed to yet:
 * whoever wants its states sends it a Subscribe), no recorder and no step
 * observer. On failure *to is left destroyed. */
int lcpd_sim_copy(lcpd_sim_t *to, const lcpd_sim_t *from, bool with_state, lcpd_error_t *error);

/* Back to the world as loaded: rebuilt from the start-up scene, settings and
 * mode included. Slots and the stream settings stay. On failure the world is
 * unchanged. */
int lcpd_sim_reset(lcpd_sim_t *sim, lcpd_error_t *error);

lcpd_robot_t *lcpd_sim_find_robot(lcpd_sim_t *sim, const char *name);
lcpd_body_t *lcpd_sim_find_body(lcpd_sim_t *sim, const char *name);
/* The robot of that name; NULL with a NOT_FOUND error that names `field` and
 * says what the name is instead (a free body) or which robots there are. */
lcpd_robot_t *lcpd_sim_robot_named(lcpd_sim_t *sim, const char *name, const char *field,
                                   lcpd_error_t *error);
const lcpd_robot_t *lcpd_sim_robot_by_id(const lcpd_sim_t *sim, lcp_robot_id id);
const lcpd_body_t *lcpd_sim_body_by_id(const lcpd_sim_t *sim, lcp_body_id id);
bool lcpd_sim_name_taken(const lcpd_sim_t *sim, const char *name);

/* Adds a robot (def is copied by the engine; def->name is its name). */
int lcpd_sim_add_robot(lcpd_sim_t *sim, const lcp_robot_def_t *def, const double position[3],
                       const double orientation[4], lcpd_robot_t **out, lcpd_error_t *error);
/* Adds a body; an empty name gets one made up ("body1", ...). */
int lcpd_sim_add_body(lcpd_sim_t *sim, const lcpd_body_spec_t *spec, lcpd_body_t **out,
                      lcpd_error_t *error);
/* Adds an IMU to a robot of the world (checked by the engine: finite,
 * noise >= 0, a unique name). */
int lcpd_sim_add_imu(lcpd_sim_t *sim, const lcpd_imu_spec_t *spec, lcpd_error_t *error);
/* Removes the robot or body of that name (LCP_ERR_NOT_FOUND when none). */
int lcpd_sim_remove(lcpd_sim_t *sim, const char *name, lcpd_error_t *error);

/* Scene.revision: changes whenever robots or bodies are added or removed,
 * or the world is reset or restored. */
uint64_t lcpd_sim_scene_revision(const lcpd_sim_t *sim);

/* The world's timestep h, s. */
double lcpd_sim_timestep(const lcpd_sim_t *sim);

/* One step, then a published state when one is due. */
int lcpd_sim_step(lcpd_sim_t *sim, lcpd_error_t *error);

/* The snapshot of the world's state, wrapped with a header naming the
 * world's layout (robots and bodies by name), into a buffer of exactly
 * lcpd_sim_snapshot_size() bytes. */
size_t lcpd_sim_snapshot_size(const lcpd_sim_t *sim);
int lcpd_sim_snapshot_write(const lcpd_sim_t *sim, unsigned char *buffer, size_t size,
                            lcpd_error_t *error);
/* LCP_ERR_INVALID_ARGUMENT for bytes that are no snapshot, LCP_ERR_MISMATCH
 * for a snapshot of another world; the world is unchanged on failure. */
int lcpd_sim_restore(lcpd_sim_t *sim, const unsigned char *data, size_t size, lcpd_error_t *error);

/* The engine's state alone, to undo a request that fails halfway: no
 * header, no checksum, written into *buffer (of *capacity bytes, grown as
 * needed and kept by the caller for the next time); *size gets its length.
 * Restorable into this world, unchanged in layout, only. */
int lcpd_sim_undo_save(const lcpd_sim_t *sim, unsigned char **buffer, size_t *capacity,
                       size_t *size, lcpd_error_t *error);
int lcpd_sim_undo_restore(lcpd_sim_t *sim, const unsigned char *data, size_t size,
                          lcpd_error_t *error);

/* Keeps a copy of data under name (replacing a slot of that name). */
int lcpd_sim_slot_put(lcpd_sim_t *sim, const char *name, const unsigned char *data, size_t size,
                      lcpd_error_t *error);
const lcpd_slot_t *lcpd_sim_slot_get(const lcpd_sim_t *sim, const char *name);

#endif
