/* SPDX-License-Identifier: Apache-2.0 */
/* The engine's quaternion maths (lcp_math.h) offered to programs built on
 * it, so that the model loader and the daemon do not keep copies of it. */
#include "lcp_math.h"

#include "lcpsim/lcpsim.h"

#include <math.h>
#include <string.h>

void lcp_quat_from_rpy(const double rpy[3], double q[4]) {
  /* qz(yaw) ⊗ qy(pitch) ⊗ qx(roll), written out. */
  double cr = cos(0.5 * rpy[0]), sr = sin(0.5 * rpy[0]);
  double cp = cos(0.5 * rpy[1]), sp = sin(0.5 * rpy[1]);
  double cy = cos(0.5 * rpy[2]), sy = sin(0.5 * rpy[2]);
  q[0] = cr * cp * cy + sr * sp * sy;
  q[1] = sr * cp * cy - cr * sp * sy;
  q[2] = cr * sp * cy + sr * cp * sy;
  q[3] = cr * cp * sy - sr * sp * cy;
}

void lcp_quat_multiply(const double a[4], const double b[4], double out[4]) {
  q_store(q_mul(q_from(a), q_from(b)), out);
}

void lcp_quat_rotate(const double q[4], const double v[3], double out[3]) {
  v3_store(q_rotate(q_from(q), v3_from(v)), out);
}

void lcp_quat_to_matrix(const double q[4], double matrix[9]) {
  mat3 R = q_to_mat3(q_from(q));
  memcpy(matrix, R.m, sizeof R.m);
}

bool lcp_quat_is_valid(const double q[4]) {
  quat r = q_from(q);
  return q_is_finite(r) && q_norm(r) > 1e-12;
}
