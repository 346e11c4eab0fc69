/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: a small blocking C client for lcpsimd (proto/lcpsim/v1/lcpsim.proto).
 *
 * One function per call of the protocol. Every call waits for its reply at most the client's
 * timeout and returns LCPSIM_OK (0) or a negative code: a server Status code c > 0 comes back as
 * -c (LCPSIM_ERR_NOT_FOUND, ...), the client's own failures as codes from -100 down
 * (LCPSIM_ERR_TIMEOUT, ...). After a failure lcpsim_client_last_error() says why (for a server
 * error, the server's message).
 *
 * Inputs are plain C structs; results are the protocol's protobuf-c messages (typedef'd below),
 * owned by the caller and freed with the matching _destroy. A zeroed input struct means "leave
 * everything as it is", so designated initializers name only what a call changes.
 *
 * A call that timed out may still be applied by the server; its late reply is recognised by its
 * request id and discarded, so the client stays usable. Requests go out only over a live
 * connection (ZMQ_IMMEDIATE), never queued for a daemon that is not there yet. One client is one
 * DEALER socket: use it from one thread at a time.
 */
#ifndef LCPSIM_CLIENT_H
#define LCPSIM_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lcpsim/export.h"
#include "lcpsim/v1/lcpsim.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif
LCP_API_BEGIN

enum {
  LCPSIM_OK = 0,
  /* The server's Status codes, negated. */
  LCPSIM_ERR_INVALID_ARGUMENT = -1,
  LCPSIM_ERR_NOT_FOUND = -2,
  LCPSIM_ERR_FAILED_PRECONDITION = -3,
  LCPSIM_ERR_RESOURCE_EXHAUSTED = -4,
  LCPSIM_ERR_INTERNAL = -5,
  LCPSIM_ERR_PERMISSION_DENIED = -6, /* the client's key is an observer's: reads only */
  /* The client's own. */
  LCPSIM_ERR_USAGE = -100,     /* the call itself was wrong: a NULL pointer, a bad count */
  LCPSIM_ERR_NO_MEMORY = -101, /* an allocation failed */
  LCPSIM_ERR_TRANSPORT = -102, /* ZeroMQ failed: a malformed endpoint, a closed context */
  LCPSIM_ERR_TIMEOUT = -103,   /* no reply within the timeout */
  LCPSIM_ERR_PROTOCOL = -104,  /* the reply could not be decoded or answers another call */
};

/* The name of a code ("NOT_FOUND", "TIMEOUT", ...); "UNKNOWN" for other values. */
const char *lcpsim_status_name(int code);

/* ---- results: the protocol's messages ---- */

typedef Lcpsim__V1__GetInfoReply lcpsim_info_t;
typedef Lcpsim__V1__RobotInfo lcpsim_robot_info_t;
typedef Lcpsim__V1__JointInfo lcpsim_joint_info_t;
typedef Lcpsim__V1__BodyInfo lcpsim_body_info_t;
typedef Lcpsim__V1__Settings lcpsim_settings_t;
typedef Lcpsim__V1__State lcpsim_state_t;
typedef Lcpsim__V1__RobotState lcpsim_robot_state_t;
typedef Lcpsim__V1__BodyState lcpsim_body_state_t;
typedef Lcpsim__V1__Contact lcpsim_contact_t;
/* Sensor readings (each present only when its LCPSIM_SENSOR_* flag was asked for):
 * lcpsim_robot_state_t: imus[n_imus], joint_wrenches[n_joint_wrenches],
 * link_contact_wrenches[n_link_contact_wrenches], energy, link_twists, link_twists_local,
 * link_accelerations, qdd; lcpsim_body_state_t: contact_wrench, energy; lcpsim_state_t:
 * solver_stats; lcpsim_contact_t: friction_impulse. */
typedef Lcpsim__V1__ImuReading lcpsim_imu_reading_t;
typedef Lcpsim__V1__JointWrench lcpsim_joint_wrench_t;
typedef Lcpsim__V1__ContactWrench lcpsim_contact_wrench_t;
typedef Lcpsim__V1__Energy lcpsim_energy_t;
typedef Lcpsim__V1__SolverStats lcpsim_solver_stats_t;

void lcpsim_info_destroy(lcpsim_info_t **info);
void lcpsim_robot_info_destroy(lcpsim_robot_info_t **robot);
void lcpsim_settings_destroy(lcpsim_settings_t **settings);
void lcpsim_state_destroy(lcpsim_state_t **state);

/* The robot of that name in `info` or `state`, or NULL. */
const lcpsim_robot_info_t *lcpsim_info_find_robot(const lcpsim_info_t *info, const char *name);
const lcpsim_robot_state_t *lcpsim_state_find_robot(const lcpsim_state_t *state, const char *name);
/* The reading of the IMU of that name in `state` (any robot's), or NULL. */
const lcpsim_imu_reading_t *lcpsim_state_find_imu(const lcpsim_state_t *state, const char *name);

/* ---- inputs ---- */

typedef enum {
  LCPSIM_MODE_KEEP = 0, /* leave each joint's mode as it is */
  LCPSIM_MODE_OFF = 1,
  LCPSIM_MODE_POSITION = 2, /* tau = kp (q* - q) + kd (qd* - qd), |tau| <= effort limit */
  LCPSIM_MODE_VELOCITY = 3, /* tau = kd (qd* - qd) */
  LCPSIM_MODE_TORQUE = 4,   /* tau = torque, |tau| <= effort limit */
} lcpsim_mode_t;

typedef enum {
  LCPSIM_GRAVITY_COMPENSATION_KEEP = 0,
  LCPSIM_GRAVITY_COMPENSATION_ON,
  LCPSIM_GRAVITY_COMPENSATION_OFF,
} lcpsim_gravity_compensation_t;

/* Joint controller targets for one robot (SetTargetRequest). The joints addressed are `joints` by
 * name, or else `indices` in joint order, or else (both empty) all joints in joint order. Each
 * value array has 0 entries (keep the joint's value), 1 (the same value for every addressed
 * joint) or one per addressed joint. */
typedef struct {
  const char *robot;
  const char *const *joints;
  size_t n_joints;
  const int32_t *indices;
  size_t n_indices;
  lcpsim_mode_t mode;
  const double *position; /* q*, rad or m */
  size_t n_position;
  const double *velocity; /* qd*, rad/s or m/s */
  size_t n_velocity;
  const double *kp; /* N·m/rad or N/m */
  size_t n_kp;
  const double *kd; /* N·m·s/rad or N·s/m */
  size_t n_kd;
  const double *effort_limit; /* > 0; 0: the URDF's limit */
  size_t n_effort_limit;
  const double *torque; /* N·m or N, for LCPSIM_MODE_TORQUE */
  size_t n_torque;
  lcpsim_gravity_compensation_t gravity_compensation;
} lcpsim_target_t;

/* A pose: position in m, orientation (w, x, y, z); an all-zero orientation means identity. */
typedef struct {
  double position[3];
  double orientation[4];
} lcpsim_pose_t;

typedef enum {
  LCPSIM_BASE_DEFAULT = 0, /* as the URDF says */
  LCPSIM_BASE_FIXED = 1,
  LCPSIM_BASE_FLOATING = 2,
} lcpsim_base_t;

/* A robot to load: exactly one of urdf_path (on the daemon's machine) and urdf_text. */
typedef struct {
  const char *urdf_path;
  const char *urdf_text;
  const char *name; /* NULL or "": the URDF's */
  lcpsim_pose_t base_pose;
  lcpsim_base_t base;
  bool self_collision;
} lcpsim_model_t;

typedef enum {
  LCPSIM_SHAPE_SPHERE = 1,   /* radius */
  LCPSIM_SHAPE_BOX = 2,      /* half_extents */
  LCPSIM_SHAPE_CAPSULE = 3,  /* radius, half_length along the body's z axis */
  LCPSIM_SHAPE_CYLINDER = 4, /* radius, half_length along the body's z axis */
} lcpsim_shape_t;

/* A free body to spawn. */
typedef struct {
  const char *name; /* unique; NULL or "": the server makes one up */
  lcpsim_shape_t shape;
  double radius;
  double half_length;
  double half_extents[3];
  lcpsim_pose_t pose;
  double linear_velocity[3];  /* m/s */
  double angular_velocity[3]; /* rad/s */
  double mass;                /* kg, > 0 unless is_static */
  bool is_static;
  double friction;    /* 0: the server's default */
  double restitution; /* e in [0, 1]; 0: none */
} lcpsim_body_t;

typedef enum {
  LCPSIM_FRICTION_CONE = 0,
  LCPSIM_FRICTION_BOX = 1,
} lcpsim_friction_model_t;

typedef enum {
  LCPSIM_LOCKSTEP = 0, /* the world moves only on Step */
  LCPSIM_REALTIME = 1, /* the daemon steps at rate x wall clock */
} lcpsim_sim_mode_t;

/* Settings to change; only the fields whose has_ flag is set are sent. */
typedef struct {
  bool has_timestep;
  double timestep; /* s */
  bool has_gravity;
  double gravity[3]; /* m/s^2 */
  bool has_iterations;
  int iterations;
  bool has_sor_omega;
  double sor_omega;
  bool has_friction_model;
  lcpsim_friction_model_t friction_model;
  bool has_mode;
  lcpsim_sim_mode_t mode;
  bool has_rate;
  double rate; /* simulated seconds per wall-clock second, in real-time mode */
  bool has_max_push_speed;
  double max_push_speed; /* m/s: positional correction separates no faster */
  bool has_relax_iterations;
  int relax_iterations; /* the last iterations solve without positional correction */
  bool has_restitution_threshold;
  double restitution_threshold; /* m/s: slower impacts do not bounce */
  bool has_enforce_velocity_limits;
  bool enforce_velocity_limits; /* hold joints within their URDF velocity limits */
} lcpsim_settings_change_t;

typedef enum {
  LCPSIM_WITHOUT_CONTACTS = 0,
  LCPSIM_WITH_CONTACTS = 1,
} lcpsim_contacts_t;

/* Readings a state may carry (the protocol's Sensors message), OR'd together; 0 asks for none,
 * which costs the daemon nothing. Forces and accelerations are those of the last step. */
enum {
  LCPSIM_SENSOR_LINK_TWISTS = 1u << 0,        /* link_twists, link_twists_local */
  LCPSIM_SENSOR_LINK_ACCELERATIONS = 1u << 1, /* link_accelerations, qdd */
  LCPSIM_SENSOR_IMUS = 1u << 2,               /* imus */
  LCPSIM_SENSOR_JOINT_WRENCHES = 1u << 3,     /* joint_wrenches */
  /* link_contact_wrenches, a body's contact_wrench, with contacts friction_impulse */
  LCPSIM_SENSOR_CONTACT_WRENCHES = 1u << 4,
  LCPSIM_SENSOR_ENERGY = 1u << 5,       /* a robot's and a body's energy */
  LCPSIM_SENSOR_SOLVER_STATS = 1u << 6, /* the state's solver_stats */
  LCPSIM_SENSOR_ALL = (1u << 7) - 1,
};

/* An IMU site on a robot's link (AddImuRequest). A zeroed pose is the link frame. */
typedef struct {
  const char *name; /* unique among IMUs */
  const char *robot;
  const char *link;
  lcpsim_pose_t pose;   /* the site in the link frame */
  double accel_noise;   /* standard deviation, m/s^2, >= 0 */
  double gyro_noise;    /* standard deviation, rad/s, >= 0 */
  double accel_bias[3]; /* m/s^2, site axes */
  double gyro_bias[3];  /* rad/s, site axes */
  uint64_t seed;        /* the noise is a function of (seed, step count) */
} lcpsim_imu_t;

/* ---- the client ---- */

typedef struct lcpsim_client lcpsim_client_t;

/* Connects to the daemon's request socket (e.g. "tcp://127.0.0.1:5555"). ZeroMQ connects in the
 * background, so this fails only for a malformed endpoint; a daemon that is not there shows as
 * LCPSIM_ERR_TIMEOUT on the first call. timeout_ms bounds each call; -1 waits forever. */
int lcpsim_client_connect(const char *endpoint, int timeout_ms, lcpsim_client_t **client);

/* ---- CURVE keys: a daemon started with --curve-secret-key ---- */

/* A Z85 key: 40 characters and a NUL. */
#define LCPSIM_KEY_SIZE 41

/* What a CURVE client needs: the daemon's public key and this client's key pair (its public key
 * on the daemon's allow-list). */
typedef struct {
  char server_public_key[LCPSIM_KEY_SIZE];
  char public_key[LCPSIM_KEY_SIZE];
  char secret_key[LCPSIM_KEY_SIZE];
} lcpsim_curve_keys_t;

/* Reads a key file as `lcpsimd --gen-keys NAME` writes them (`public-key = "..."`,
 * `secret-key = "..."` lines; # comments): public_key and secret_key (either may be NULL) get
 * the file's keys, "" for one it lacks (a public key is derived from the secret key when only
 * that is there). LCPSIM_ERR_INVALID_ARGUMENT for a file that cannot be read or is malformed,
 * with why (may be NULL) naming the file and line. */
int lcpsim_read_key_file(const char *path, char public_key[LCPSIM_KEY_SIZE],
                         char secret_key[LCPSIM_KEY_SIZE], char *why, size_t why_size);
/* keys from the daemon's public key file (its NAME.pub, or NAME.key) and this client's key pair
 * file (NAME.key). */
int lcpsim_curve_keys_load(const char *server_key_file, const char *client_key_file,
                           lcpsim_curve_keys_t *keys, char *why, size_t why_size);
/* lcpsim_client_connect with CURVE (keys NULL: without). A daemon that does not allow the key,
 * or whose public key is not keys->server_public_key, never answers: calls time out. */
int lcpsim_client_connect_secure(const char *endpoint, int timeout_ms,
                                 const lcpsim_curve_keys_t *keys, lcpsim_client_t **client);
void lcpsim_client_destroy(lcpsim_client_t **client);
void lcpsim_client_set_timeout(lcpsim_client_t *client, int timeout_ms);

/* What the last failed call said; "" after a success. Valid until the next call. */
const char *lcpsim_client_last_error(const lcpsim_client_t *client);

/* A round trip that checks the echo. server_version (may be NULL) gets at most
 * version_size - 1 characters of the daemon's version. */
int lcpsim_client_ping(lcpsim_client_t *client, char *server_version, size_t version_size);

/* Robots (joints, limits), named free bodies and settings. */
int lcpsim_client_get_info(lcpsim_client_t *client, lcpsim_info_t **info);

/* ---- the scene and recordings ---- */

/* What the world looks like (lcpsim.v1 GetSceneReply: every geom of the ground, of each robot's
 * links and of each free body, with the GetInfo of the same world); the caller destroys it. */
typedef Lcpsim__V1__GetSceneReply lcpsim_scene_t;
void lcpsim_scene_destroy(lcpsim_scene_t **scene);
int lcpsim_client_get_scene(lcpsim_client_t *client, lcpsim_scene_t **scene);

typedef struct {
  char path[4096]; /* the file, as the daemon resolved it */
  uint64_t states_written;
  uint64_t bytes_written;
  bool recording; /* a recording runs after the call */
} lcpsim_record_result_t;

/* Starts recording to path on the daemon's machine, below its --record-dir (a new file; relative:
 * to that directory), a state every every_steps steps (0: 1). result may be NULL. */
int lcpsim_client_record_start(lcpsim_client_t *client, const char *path, uint32_t every_steps,
                               bool include_contacts, lcpsim_record_result_t *result);
/* Ends the recording in progress (none: nothing to do); result gets its counts. */
int lcpsim_client_record_stop(lcpsim_client_t *client, lcpsim_record_result_t *result);

/* Applies `targets` (all or none), then steps `steps` >= 0 times. With `state` not NULL, the reply
 * carries the state after the steps, which the caller destroys. */
int lcpsim_client_step(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                       size_t n_targets, lcpsim_contacts_t contacts, lcpsim_state_t **state);

/* As lcpsim_client_step, with the readings `sensors` (LCPSIM_SENSOR_* flags) in the state. */
int lcpsim_client_step_sensors(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                               size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                               lcpsim_state_t **state);

int lcpsim_client_set_target(lcpsim_client_t *client, const lcpsim_target_t *target);

int lcpsim_client_get_state(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                            lcpsim_state_t **state);
int lcpsim_client_get_state_sensors(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                                    unsigned sensors, lcpsim_state_t **state);

/* ---- a state buffer reused across ticks ----
 *
 * A control loop need not allocate a state per tick: lcpsim_client_step_into and
 * lcpsim_client_get_state_into decode the state into a buffer the caller keeps. The buffer owns
 * the state: `*state` stays valid until the next _into call with the same buffer (which reuses
 * the memory) or the buffer's destroy; never pass it to lcpsim_state_destroy. The buffer grows to
 * the largest state seen and then decodes without allocating. One buffer serves one state at a
 * time; keep two buffers to hold two states. After a failure `*state` is NULL. A BatchStep's
 * reply can be decoded into a buffer too (lcpsim_client_batch_step_into). */
typedef struct lcpsim_state_buffer lcpsim_state_buffer_t;

int lcpsim_state_buffer_new(lcpsim_state_buffer_t **buffer);
void lcpsim_state_buffer_destroy(lcpsim_state_buffer_t **buffer);
/* The bytes the buffer holds for decoding. */
size_t lcpsim_state_buffer_capacity(const lcpsim_state_buffer_t *buffer);

int lcpsim_client_step_into(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                            size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                            lcpsim_state_buffer_t *buffer, const lcpsim_state_t **state);
int lcpsim_client_get_state_into(lcpsim_client_t *client, lcpsim_contacts_t contacts,
                                 unsigned sensors, lcpsim_state_buffer_t *buffer,
                                 const lcpsim_state_t **state);

/* Loads a robot; `robot` (may be NULL) receives its description. */
int lcpsim_client_load_model(lcpsim_client_t *client, const lcpsim_model_t *model,
                             lcpsim_robot_info_t **robot);

/* Spawns a free body; `id` and `name` (each may be NULL) receive its id and its name (malloc'd,
 * the caller frees it). */
int lcpsim_client_spawn(lcpsim_client_t *client, const lcpsim_body_t *body, uint32_t *id,
                        char **name);

/* Removes a body or a robot by name. */
int lcpsim_client_remove(lcpsim_client_t *client, const char *name);

/* Back to the world as the daemon loaded it at start-up. */
int lcpsim_client_reset(lcpsim_client_t *client);

/* Takes a snapshot of the world's state. With `slot` not NULL or "", the daemon also keeps it
 * under that name. `snapshot` (may be NULL) receives a malloc'd copy of the bytes, which the
 * caller frees, and `size` its length; `time` (may be NULL) the simulated time. */
int lcpsim_client_save_state(lcpsim_client_t *client, const char *slot, uint8_t **snapshot,
                             size_t *size, double *time);
int lcpsim_client_restore_state(lcpsim_client_t *client, const uint8_t *snapshot, size_t size,
                                double *time);
int lcpsim_client_restore_slot(lcpsim_client_t *client, const char *slot, double *time);

/* Changes the settings given; `settings` (may be NULL) receives them as they now are. */
int lcpsim_client_set_settings(lcpsim_client_t *client, const lcpsim_settings_change_t *change,
                               lcpsim_settings_t **settings);

/* Asks the daemon to publish the state every `every_steps` steps on its PUB socket (0 stops). */
int lcpsim_client_subscribe(lcpsim_client_t *client, unsigned every_steps,
                            lcpsim_contacts_t contacts);
/* The same, each published state carrying the readings of `sensors` (LCPSIM_SENSOR_* flags). */
int lcpsim_client_subscribe_sensors(lcpsim_client_t *client, unsigned every_steps,
                                    lcpsim_contacts_t contacts, unsigned sensors);

/* ---- the state stream ---- */

typedef struct lcpsim_subscriber lcpsim_subscriber_t;

/* Connects to the daemon's PUB socket (e.g. "tcp://127.0.0.1:5556"). As with any ZeroMQ
 * subscription, states published before the connection is made are not seen. */
int lcpsim_subscriber_new(const char *endpoint, lcpsim_subscriber_t **subscriber);
/* The same with CURVE (keys NULL: without); a controller's or an observer's key. */
int lcpsim_subscriber_new_secure(const char *endpoint, const lcpsim_curve_keys_t *keys,
                                 lcpsim_subscriber_t **subscriber);
void lcpsim_subscriber_destroy(lcpsim_subscriber_t **subscriber);

/* Waits at most timeout_ms (-1: forever) for the next published state; the caller destroys it. */
int lcpsim_subscriber_receive(lcpsim_subscriber_t *subscriber, int timeout_ms,
                              lcpsim_state_t **state);

/* ---- editing the world between steps ---- */

/* One joint's state by name; only the values whose has_ flag is set are sent. */
typedef struct {
  const char *name;
  bool has_position;
  double position; /* rad or m */
  bool has_velocity;
  double velocity; /* rad/s or m/s */
} lcpsim_joint_state_t;

/* SetRobotState: all or nothing; what is not given is kept. q and qd are full vectors (nq and nv
 * values) or empty; joints by name; the base pose and twist of a floating base. */
typedef struct {
  const char *robot;
  const double *q;
  size_t n_q;
  const double *qd;
  size_t n_qd;
  const lcpsim_joint_state_t *joints;
  size_t n_joints;
  bool has_base_pose;
  lcpsim_pose_t base_pose;
  bool has_base_twist;
  double base_linear[3];  /* m/s, world axes, of the base origin */
  double base_angular[3]; /* rad/s, world axes */
} lcpsim_robot_state_change_t;

/* SetBodyState: a free body by name (or, when name is NULL, by id). */
typedef struct {
  const char *name;
  uint32_t id;
  bool has_pose;
  lcpsim_pose_t pose;
  bool has_twist;
  double linear_velocity[3];
  double angular_velocity[3];
} lcpsim_body_state_change_t;

typedef enum {
  LCPSIM_FRAME_WORLD = 0, /* world axes and coordinates */
  LCPSIM_FRAME_LOCAL = 1, /* the body's or the link's frame */
} lcpsim_frame_t;

/* ApplyWrench: a force and a torque on a body or a robot's link (link NULL or "": the base), at
 * a point (has_point unset: the centre of mass or the link origin), for the next step only or
 * held until cleared. */
typedef struct {
  const char *target;
  const char *link;
  double force[3];  /* N */
  double torque[3]; /* N·m */
  bool has_point;
  double point[3];
  lcpsim_frame_t frame;
  bool hold;
} lcpsim_wrench_t;

/* SetDynamics entries: a free body (body) or a robot's link (robot and link); only the values
 * whose has_ flag (or n_inertia: 9 row-major, 3 the diagonal) is set are sent. */
typedef struct {
  const char *body;
  const char *robot;
  const char *link;
  bool has_mass;
  double mass;
  size_t n_inertia;
  double inertia[9];
  bool has_com;
  double com[3];
  bool has_friction;
  double friction;
  bool has_restitution;
  double restitution;
} lcpsim_body_dynamics_t;

typedef struct {
  const char *robot;
  const char *joint;
  bool has_damping;
  double damping;
  bool has_friction;
  double friction;
  bool has_lower;
  double lower;
  bool has_upper;
  double upper;
  bool has_effort_limit;
  double effort_limit;
  bool has_velocity_limit;
  double velocity_limit;
} lcpsim_joint_dynamics_t;

int lcpsim_client_set_robot_state(lcpsim_client_t *client,
                                  const lcpsim_robot_state_change_t *change);
int lcpsim_client_set_body_state(lcpsim_client_t *client, const lcpsim_body_state_change_t *change);
/* hold_id (may be NULL) gets the held wrench's id, or 0 for the next step only. */
int lcpsim_client_apply_wrench(lcpsim_client_t *client, const lcpsim_wrench_t *wrench,
                               uint32_t *hold_id);
/* Clears the held wrench of that id; 0 clears them all. */
int lcpsim_client_clear_wrench(lcpsim_client_t *client, uint32_t hold_id);
/* All or nothing. */
int lcpsim_client_set_dynamics(lcpsim_client_t *client, const lcpsim_body_dynamics_t *bodies,
                               size_t n_bodies, const lcpsim_joint_dynamics_t *joints,
                               size_t n_joints);

/* ---- sensors ---- */

/* Adds an IMU; its readings come with LCPSIM_SENSOR_IMUS (lcpsim_state_find_imu). */
int lcpsim_client_add_imu(lcpsim_client_t *client, const lcpsim_imu_t *imu);

/* ---- a Step that can be cancelled ----
 *
 * The daemon takes a CancelStep only from the Step's own socket, and a synchronous step call
 * cannot send while it waits. So a Step to be cancelled is started (sent, not awaited), may be
 * cancelled by lcpsim_client_cancel_step on the same client, and is finished by
 * lcpsim_client_step_finish, which waits for its reply (at most the timeout; after
 * LCPSIM_ERR_TIMEOUT the Step stays pending and step_finish may be called again). One Step may be
 * pending at a time. Other calls may be made meanwhile: Ping and GetInfo are answered at once, the
 * daemon holds the rest until the Step is over; the Step's reply, if it comes during another call,
 * is kept for step_finish. */

typedef struct {
  double time;
  uint64_t step_count;
  int32_t steps_run; /* of the steps requested: all of them unless cancelled */
  bool cancelled;
} lcpsim_step_result_t;

typedef struct {
  bool cancelled; /* false: no Step of this client (with that id) was running */
  uint64_t step_id;
  int32_t steps_run;
  int32_t steps_requested;
} lcpsim_cancel_result_t;

/* Sends a Step (as lcpsim_client_step_sensors; with return_state the reply carries the state) and
 * returns without waiting; step_id (may be NULL) gets its request id. */
int lcpsim_client_step_start(lcpsim_client_t *client, int steps, const lcpsim_target_t *targets,
                             size_t n_targets, lcpsim_contacts_t contacts, unsigned sensors,
                             bool return_state, uint64_t *step_id);
/* Waits for the started Step's reply. result and state (each may be NULL) receive what it says;
 * the state (with return_state) is the caller's to destroy. */
int lcpsim_client_step_finish(lcpsim_client_t *client, lcpsim_step_result_t *result,
                              lcpsim_state_t **state);
/* Cancels this client's running Step with that id (0: whichever runs); its steps run so far are
 * kept. result (may be NULL) receives the reply. */
int lcpsim_client_cancel_step(lcpsim_client_t *client, uint64_t step_id,
                              lcpsim_cancel_result_t *result);

/* ---- worlds ----
 *
 * A daemon holds one or more worlds, each named (the default world, the one it starts with, is
 * "default"). A client addresses one world at a time: lcpsim_client_set_world makes every later
 * call of the client (step, get_state, set_target, save_state, ...) name that world in
 * Request.world; NULL, "" or "default" go back to the default world. The calls about worlds
 * (create, destroy, list, batch step) name their worlds themselves. */

/* The world this client's calls address from now on (at most 63 bytes of [A-Za-z0-9_.-]);
 * LCPSIM_ERR_USAGE for a longer name. */
int lcpsim_client_set_world(lcpsim_client_t *client, const char *world);
/* The world the client addresses ("" is the default world). */
const char *lcpsim_client_world(const lcpsim_client_t *client);

/* What a new world is made of: at most one of scene_path (a scene file below the daemon's model
 * roots), scene_text (a scene file's text) or copy_of (an existing world's name; with copy_state
 * also its state). snapshot (may be NULL) is restored into it once built: how a world moves from
 * one daemon to another. name NULL or "": the daemon makes one up. */
typedef struct {
  const char *name;
  const char *scene_path;
  const char *scene_text;
  const char *copy_of;
  bool copy_state;
  const uint8_t *snapshot;
  size_t snapshot_size;
} lcpsim_world_source_t;

/* name, time, step_count, robot_count, body_count, memory_bytes. */
typedef Lcpsim__V1__WorldInfo lcpsim_world_info_t;
/* worlds[n_worlds] (the default world first), max_worlds, max_world_bytes, workers. */
typedef Lcpsim__V1__ListWorldsReply lcpsim_world_list_t;
void lcpsim_world_info_destroy(lcpsim_world_info_t **info);
void lcpsim_world_list_destroy(lcpsim_world_list_t **list);

/* Creates a world; `info` (may be NULL) receives its WorldInfo (its name among them). Past the
 * daemon's limits: LCPSIM_ERR_RESOURCE_EXHAUSTED. */
int lcpsim_client_create_world(lcpsim_client_t *client, const lcpsim_world_source_t *source,
                               lcpsim_world_info_t **info);
/* Destroys a world (not the default one: LCPSIM_ERR_FAILED_PRECONDITION). */
int lcpsim_client_destroy_world(lcpsim_client_t *client, const char *name);
int lcpsim_client_list_worlds(lcpsim_client_t *client, lcpsim_world_list_t **list);

/* ---- BatchStep: many worlds stepped in one request ----
 *
 * Each world's step is applied in this order: restore (restore_slot, or restore_snapshot when
 * restore_snapshot_size > 0), robot_states, body_states, targets, then `steps` steps. The daemon
 * steps the worlds in parallel; each world's result is bitwise what the same calls made one by
 * one would give. A world that fails (not found, a bad target) fails alone and is left as it
 * was; see each result's status. */
typedef struct {
  const char *world; /* NULL or "": the default world */
  int steps;
  const lcpsim_target_t *targets;
  size_t n_targets;
  const char *restore_slot;
  const uint8_t *restore_snapshot;
  size_t restore_snapshot_size;
  const lcpsim_robot_state_change_t *robot_states;
  size_t n_robot_states;
  const lcpsim_body_state_change_t *body_states;
  size_t n_body_states;
} lcpsim_world_step_t;

enum {
  LCPSIM_BATCH_RETURN_STATE = 1u << 0,    /* each result carries its world's state */
  LCPSIM_BATCH_WITH_CONTACTS = 1u << 1,   /* with the state: the contacts */
  LCPSIM_BATCH_RETURN_SNAPSHOT = 1u << 2, /* each result carries its world's snapshot */
};

/* results[n_results] in the request's order, each: world, status, time, step_count, steps_run,
 * state (with LCPSIM_BATCH_RETURN_STATE), snapshot (with LCPSIM_BATCH_RETURN_SNAPSHOT). */
typedef Lcpsim__V1__BatchStepReply lcpsim_batch_reply_t;
typedef Lcpsim__V1__BatchStepResult lcpsim_batch_result_t;
void lcpsim_batch_reply_destroy(lcpsim_batch_reply_t **reply);
/* A result's status as a code of this client: LCPSIM_OK or the negated Status code. */
int lcpsim_batch_result_code(const lcpsim_batch_result_t *result);

/* Steps the worlds in one BatchStep. flags: LCPSIM_BATCH_* OR'd; sensors: LCPSIM_SENSOR_* (with
 * the state). Returns LCPSIM_OK when the daemon took the request (some worlds may still have
 * failed: see lcpsim_batch_result_code), and `reply` then holds the results. */
int lcpsim_client_batch_step(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                             size_t n_worlds, unsigned flags, unsigned sensors,
                             lcpsim_batch_reply_t **reply);

/* The same in two halves, so that one thread can have BatchSteps in flight on several clients
 * (several daemons) at once: _start sends and returns at once (request_id may be NULL; the
 * connection is not waited for: LCPSIM_ERR_TIMEOUT when there is none, so make a first call,
 * e.g. a ping, on a new client), _finish waits for that
 * request's reply at most timeout_ms (-1: forever). To wait on several clients at once,
 * zmq_poll their lcpsim_client_zmq_socket for ZMQ_POLLIN and call _finish with timeout_ms 0 on
 * those ready (LCPSIM_ERR_TIMEOUT: what came was not that reply yet). One BatchStep may be in
 * flight per client; other calls must not be made on it meanwhile. */
int lcpsim_client_batch_step_start(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                                   size_t n_worlds, unsigned flags, unsigned sensors,
                                   uint64_t *request_id);
int lcpsim_client_batch_step_finish(lcpsim_client_t *client, uint64_t request_id, int timeout_ms,
                                    lcpsim_batch_reply_t **reply);

/* lcpsim_client_batch_step and _finish decoding the reply into a state buffer (see "a state
 * buffer reused across ticks") instead of a malloc per sub-message: `*reply` belongs to the
 * buffer, valid until the buffer's next use by an _into call or its destroy (never pass it to
 * lcpsim_batch_reply_destroy); after a failure it is NULL. Its results are those
 * lcpsim_client_batch_step returns, bit for bit. The buffer is reused only once the request has
 * been sent, so `worlds` may point into the reply it holds (a snapshot it returned, say). A
 * _finish_into that returns LCPSIM_ERR_TIMEOUT has reused the buffer too. */
int lcpsim_client_batch_step_into(lcpsim_client_t *client, const lcpsim_world_step_t *worlds,
                                  size_t n_worlds, unsigned flags, unsigned sensors,
                                  lcpsim_state_buffer_t *buffer,
                                  const lcpsim_batch_reply_t **reply);
int lcpsim_client_batch_step_finish_into(lcpsim_client_t *client, uint64_t request_id,
                                         int timeout_ms, lcpsim_state_buffer_t *buffer,
                                         const lcpsim_batch_reply_t **reply);
/* The client's ZeroMQ socket, for zmq_poll only (never read or write it). */
void *lcpsim_client_zmq_socket(lcpsim_client_t *client);

/* The state stream of a world other than the default one (topic "w/NAME/state"; NULL, "" or
 * "default": the default world's, topic "state"). keys: as lcpsim_subscriber_new_secure's. */
int lcpsim_subscriber_new_world(const char *endpoint, const lcpsim_curve_keys_t *keys,
                                const char *world, lcpsim_subscriber_t **subscriber);

LCP_API_END
#ifdef __cplusplus
}
#endif

#endif
