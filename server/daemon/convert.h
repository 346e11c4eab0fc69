/* SPDX-License-Identifier: Apache-2.0 */
/* Between the engine and the protocol: status codes, checks of decoded
 * numbers, and the protocol messages that describe the world, built in an
 * arena. A builder returns NULL when the arena refuses an allocation (the
 * arena has reported it, memory.h). */
#ifndef LCPD_CONVERT_H
#define LCPD_CONVERT_H

#include "error.h"
#include "memory.h"
#include "sim.h"

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef Lcpsim__V1__Status__Code lcpd_code_t;

/* The status code of an lcpd_error_t's code (a negative lcp_status_t). */
lcpd_code_t lcpd_code_of(int lcp_status);
const char *lcpd_code_name(lcpd_code_t code);

/* What lcpd_check_values found. */
typedef enum lcpd_values {
  LCPD_VALUES_OK = 0,
  LCPD_VALUE_NOT_FINITE, /* a double or float is NaN or infinite */
  LCPD_VALUE_NOT_UTF8,   /* a string is not well-formed UTF-8 (lcpd_utf8_valid) */
} lcpd_values_t;

/* Walks every double, float and string of a decoded message tree (repeated
 * fields, map entries, the set member of each oneof, nested messages), by
 * the message's descriptors. Returns the first fault and writes the path of
 * the value at fault ("step.targets[1].position[0]") into path, or
 * LCPD_VALUES_OK. */
lcpd_values_t lcpd_check_values(const ProtobufCMessage *message, char *path, size_t path_size);

/* ---- reading (values were checked by lcpd_check_values) ---- */

/* An unset vector is zero. */
void lcpd_read_vec3(const Lcpsim__V1__Vec3 *v, double out[3]);
/* An unset pose is the origin; an unset orientation the identity. A
 * quaternion that is no orientation (lcp_quat_is_valid) is an error naming
 * `field`. */
int lcpd_read_pose(const Lcpsim__V1__Pose *pose, double position[3], double orientation[4],
                   const char *field, lcpd_error_t *error);
/* The shape's type and sizes (the sizes are checked with the rest of a
 * body, lcpd_body_spec_validate). */
int lcpd_read_shape(const Lcpsim__V1__Shape *shape, lcpd_shape_t *out, lcpd_error_t *error);

/* ---- building ---- */

Lcpsim__V1__Vec3 *lcpd_new_vec3(lcpd_arena_t *arena, const double v[3]);
Lcpsim__V1__Pose *lcpd_new_pose(lcpd_arena_t *arena, const double position[3],
                                const double orientation[4]);
Lcpsim__V1__Twist *lcpd_new_twist(lcpd_arena_t *arena, const double linear[3],
                                  const double angular[3]);
Lcpsim__V1__Shape *lcpd_new_shape(lcpd_arena_t *arena, const lcpd_shape_t *shape);
Lcpsim__V1__Settings *lcpd_new_settings(lcpd_arena_t *arena, const lcpd_sim_t *sim);
Lcpsim__V1__RobotInfo *lcpd_new_robot_info(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                           const lcpd_robot_t *robot);
Lcpsim__V1__BodyInfo *lcpd_new_body_info(lcpd_arena_t *arena, const lcpd_body_t *body);
/* The whole state (sequence: 0 in replies, the stream's count in published
 * states). */
Lcpsim__V1__State *lcpd_new_state(lcpd_arena_t *arena, const lcpd_sim_t *sim, bool include_contacts,
                                  uint64_t sequence);
/* The same with the readings sensors asks for (NULL: none, as
 * lcpd_new_state): each flag adds its fields, an unset one nothing. */
/* The readings a Sensors asks for as bits (field k of Sensors is bit k − 1; NULL: 0), kept where
 * the request is not (the state stream's choice), and back: NULL when bits is 0, else *out. */
uint32_t lcpd_sensors_bits(const Lcpsim__V1__Sensors *sensors);
const Lcpsim__V1__Sensors *lcpd_sensors_from_bits(uint32_t bits, Lcpsim__V1__Sensors *out);

Lcpsim__V1__State *lcpd_new_state_sensed(lcpd_arena_t *arena, const lcpd_sim_t *sim,
                                         bool include_contacts, const Lcpsim__V1__Sensors *sensors,
                                         uint64_t sequence);

#endif
