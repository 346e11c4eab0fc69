/* SPDX-License-Identifier: Apache-2.0 */
/* The lockstep reference run: the daemon's built-in world built in-process
 * with the daemon's own scene code (lcpsimd_world), its arm driven by
 * position targets q*_i(t) = 0.5 sin(2π·0.5·t + i) with kp 100, kd 10, set
 * before every step, as a client sends them with each Step(1). The state is
 * compared as a flat vector of doubles, bit for bit. */
#ifndef LCPD_LOCKSTEP_REFERENCE_H
#define LCPD_LOCKSTEP_REFERENCE_H

#include "lcpsim/v1/lcpsim.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#define LOCKSTEP_ROBOT "arm7"
#define LOCKSTEP_JOINTS 7
#define LOCKSTEP_KP 100.0
#define LOCKSTEP_KD 10.0
#define LOCKSTEP_MAX_VALUES 1024

/* The joint targets before step k (0-based), at t = k·h. */
void lockstep_targets(int64_t k, double h, double position[LOCKSTEP_JOINTS]);

/* A state as doubles, in this order: time; then per robot q, qd, applied
 * torque, link poses (position, then orientation w x y z); then per free
 * body its pose and twist (linear, angular). `q` and `q_count` pick out the
 * first robot's q. */
typedef struct lockstep_state {
  uint64_t step_count;
  size_t count;
  double values[LOCKSTEP_MAX_VALUES];
  size_t q_offset, q_count;
} lockstep_state_t;

/* Runs `steps` steps of the built-in world in-process. Returns 0, or -1 with
 * the reason in error. *h gets the world's timestep. */
int lockstep_reference_run(int steps, lockstep_state_t *out, double *h, char *error,
                           size_t error_size);

/* The same flat vector from a State message; -1 when it does not fit. */
int lockstep_state_from_message(const Lcpsim__V1__State *state, lockstep_state_t *out);

#endif
