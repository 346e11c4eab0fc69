/* SPDX-License-Identifier: Apache-2.0 */
/* Small fixed-size linear algebra for the engine: 3-vectors, quaternions
 * (w, x, y, z), 3x3 matrices (row-major) and rigid transforms.
 * Everything is static inline so the compiler can keep it in registers in the
 * solver and narrow-phase loops. Conventions: docs/architecture.md, "Conventions". */
#ifndef LCP_MATH_H
#define LCP_MATH_H

#include <math.h>
#include <stdbool.h>

typedef struct vec3 {
  double x, y, z;
} vec3;

typedef struct quat {
  double w, x, y, z;
} quat;

/* Row-major: m[row][column]. */
typedef struct mat3 {
  double m[3][3];
} mat3;

/* A rigid transform: x_world = R x_local + p. R is kept alongside q so that
 * the hot loops do not rebuild it. */
typedef struct xform {
  vec3 p;
  quat q;
  mat3 R;
} xform;

#define LCP_PI 3.14159265358979323846

static inline vec3 v3(double x, double y, double z) { return (vec3){x, y, z}; }
static inline vec3 v3_zero(void) { return (vec3){0.0, 0.0, 0.0}; }
static inline vec3 v3_add(vec3 a, vec3 b) { return (vec3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static inline vec3 v3_sub(vec3 a, vec3 b) { return (vec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static inline vec3 v3_scale(vec3 a, double s) { return (vec3){a.x * s, a.y * s, a.z * s}; }
static inline vec3 v3_neg(vec3 a) { return (vec3){-a.x, -a.y, -a.z}; }
/* a + s b */
static inline vec3 v3_madd(vec3 a, vec3 b, double s) {
  return (vec3){a.x + s * b.x, a.y + s * b.y, a.z + s * b.z};
}
static inline vec3 v3_mul(vec3 a, vec3 b) { return (vec3){a.x * b.x, a.y * b.y, a.z * b.z}; }
static inline double v3_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline vec3 v3_cross(vec3 a, vec3 b) {
  return (vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline double v3_len2(vec3 a) { return v3_dot(a, a); }
static inline double v3_len(vec3 a) { return sqrt(v3_dot(a, a)); }
static inline vec3 v3_min(vec3 a, vec3 b) {
  return (vec3){fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z)};
}
static inline vec3 v3_max(vec3 a, vec3 b) {
  return (vec3){fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z)};
}
static inline vec3 v3_abs(vec3 a) { return (vec3){fabs(a.x), fabs(a.y), fabs(a.z)}; }
static inline double v3_get(vec3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }
static inline void v3_set(vec3 *a, int i, double s) {
  if (i == 0)
    a->x = s;
  else if (i == 1)
    a->y = s;
  else
    a->z = s;
}
/* Unit vector along a; returns false (and a zero vector) when |a| is below tiny. */
static inline bool v3_normalize(vec3 a, vec3 *out, double tiny) {
  double l = v3_len(a);
  if (!(l > tiny)) {
    *out = v3_zero();
    return false;
  }
  *out = v3_scale(a, 1.0 / l);
  return true;
}
/* Component of d normal to the unit vector n: d − (d·n) n. */
static inline vec3 v3_perp(vec3 d, vec3 n) { return v3_madd(d, n, -v3_dot(d, n)); }
static inline bool v3_is_finite(vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }
static inline vec3 v3_from(const double a[3]) { return (vec3){a[0], a[1], a[2]}; }
static inline void v3_store(vec3 a, double out[3]) {
  out[0] = a.x;
  out[1] = a.y;
  out[2] = a.z;
}

/* Two unit vectors t1, t2 completing n to a right-handed orthonormal basis.
 * Deterministic in n alone, so the tangent frame of a persistent contact only
 * moves when its normal moves (warm starting of friction rows relies on it). */
static inline void v3_tangent_basis(vec3 n, vec3 *t1, vec3 *t2) {
  if (fabs(n.x) >= 0.57735026918962576) {
    double inv = 1.0 / sqrt(n.x * n.x + n.y * n.y);
    *t1 = (vec3){n.y * inv, -n.x * inv, 0.0};
  } else {
    double inv = 1.0 / sqrt(n.y * n.y + n.z * n.z);
    *t1 = (vec3){0.0, n.z * inv, -n.y * inv};
  }
  *t2 = v3_cross(n, *t1);
}

/* ---- 3x3 matrices ---- */
static inline mat3 m3_identity(void) {
  return (mat3){{{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}}};
}
static inline mat3 m3_zero(void) { return (mat3){{{0.0}}}; }
static inline mat3 m3_diag(vec3 d) {
  return (mat3){{{d.x, 0.0, 0.0}, {0.0, d.y, 0.0}, {0.0, 0.0, d.z}}};
}
static inline vec3 m3_row(const mat3 *a, int i) {
  return (vec3){a->m[i][0], a->m[i][1], a->m[i][2]};
}
static inline vec3 m3_col(const mat3 *a, int j) {
  return (vec3){a->m[0][j], a->m[1][j], a->m[2][j]};
}
static inline vec3 m3_mulv(const mat3 *a, vec3 v) {
  return (vec3){a->m[0][0] * v.x + a->m[0][1] * v.y + a->m[0][2] * v.z,
                a->m[1][0] * v.x + a->m[1][1] * v.y + a->m[1][2] * v.z,
                a->m[2][0] * v.x + a->m[2][1] * v.y + a->m[2][2] * v.z};
}
/* Aᵀ v */
static inline vec3 m3_tmulv(const mat3 *a, vec3 v) {
  return (vec3){a->m[0][0] * v.x + a->m[1][0] * v.y + a->m[2][0] * v.z,
                a->m[0][1] * v.x + a->m[1][1] * v.y + a->m[2][1] * v.z,
                a->m[0][2] * v.x + a->m[1][2] * v.y + a->m[2][2] * v.z};
}
static inline mat3 m3_mul(const mat3 *a, const mat3 *b) {
  mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[i][j] = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] + a->m[i][2] * b->m[2][j];
  return r;
}
static inline mat3 m3_transpose(const mat3 *a) {
  mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[i][j] = a->m[j][i];
  return r;
}
static inline mat3 m3_add(const mat3 *a, const mat3 *b) {
  mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[i][j] = a->m[i][j] + b->m[i][j];
  return r;
}
static inline mat3 m3_scale(const mat3 *a, double s) {
  mat3 r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[i][j] = a->m[i][j] * s;
  return r;
}
static inline double m3_det(const mat3 *a) {
  return a->m[0][0] * (a->m[1][1] * a->m[2][2] - a->m[1][2] * a->m[2][1]) -
         a->m[0][1] * (a->m[1][0] * a->m[2][2] - a->m[1][2] * a->m[2][0]) +
         a->m[0][2] * (a->m[1][0] * a->m[2][1] - a->m[1][1] * a->m[2][0]);
}
/* Inverse by the adjugate; returns false when |det| <= tiny. */
static inline bool m3_inverse(const mat3 *a, mat3 *out, double tiny) {
  double d = m3_det(a);
  if (!(fabs(d) > tiny))
    return false;
  double s = 1.0 / d;
  const double(*m)[3] = a->m;
  out->m[0][0] = (m[1][1] * m[2][2] - m[1][2] * m[2][1]) * s;
  out->m[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) * s;
  out->m[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) * s;
  out->m[1][0] = (m[1][2] * m[2][0] - m[1][0] * m[2][2]) * s;
  out->m[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) * s;
  out->m[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) * s;
  out->m[2][0] = (m[1][0] * m[2][1] - m[1][1] * m[2][0]) * s;
  out->m[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) * s;
  out->m[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) * s;
  return true;
}
/* R A Rᵀ: a body-frame tensor expressed in the world frame. */
static inline mat3 m3_rotate_tensor(const mat3 *R, const mat3 *a) {
  mat3 t = m3_mul(R, a);
  mat3 rt = m3_transpose(R);
  return m3_mul(&t, &rt);
}
/* [a]x, the cross-product matrix: [a]x b = a × b. */
static inline mat3 m3_skew(vec3 a) {
  return (mat3){{{0.0, -a.z, a.y}, {a.z, 0.0, -a.x}, {-a.y, a.x, 0.0}}};
}
static inline mat3 m3_from(const double a[9]) {
  return (mat3){{{a[0], a[1], a[2]}, {a[3], a[4], a[5]}, {a[6], a[7], a[8]}}};
}

/* ---- quaternions (w, x, y, z), Hamilton product ---- */
static inline quat q_identity(void) { return (quat){1.0, 0.0, 0.0, 0.0}; }
static inline quat q_mul(quat a, quat b) {
  return (quat){
      a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
      a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
static inline quat q_conj(quat a) { return (quat){a.w, -a.x, -a.y, -a.z}; }
static inline double q_norm(quat a) { return sqrt(a.w * a.w + a.x * a.x + a.y * a.y + a.z * a.z); }
static inline quat q_normalize(quat a) {
  double n = q_norm(a);
  if (!(n > 0.0))
    return q_identity();
  double s = 1.0 / n;
  return (quat){a.w * s, a.x * s, a.y * s, a.z * s};
}
static inline quat q_from_axis_angle(vec3 axis, double angle) {
  vec3 u;
  if (!v3_normalize(axis, &u, 1e-300))
    return q_identity();
  double s = sin(0.5 * angle);
  return (quat){cos(0.5 * angle), u.x * s, u.y * s, u.z * s};
}
static inline vec3 q_rotate(quat q, vec3 v) {
  /* v + 2 w (u × v) + 2 u × (u × v), u the vector part */
  vec3 u = {q.x, q.y, q.z};
  vec3 t = v3_scale(v3_cross(u, v), 2.0);
  return v3_add(v3_madd(v, t, q.w), v3_cross(u, t));
}
static inline mat3 q_to_mat3(quat q) {
  double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return (mat3){{{1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy)},
                 {2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx)},
                 {2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy)}}};
}
/* Integrate q by the world-frame angular velocity w over h:
 * q̇ = ½ (0, w) ⊗ q, then renormalise. */
static inline quat q_integrate(quat q, vec3 w, double h) {
  quat dq = q_mul((quat){0.0, w.x, w.y, w.z}, q);
  double s = 0.5 * h;
  quat r = {q.w + s * dq.w, q.x + s * dq.x, q.y + s * dq.y, q.z + s * dq.z};
  return q_normalize(r);
}
static inline bool q_is_finite(quat q) {
  return isfinite(q.w) && isfinite(q.x) && isfinite(q.y) && isfinite(q.z);
}
static inline quat q_from(const double a[4]) { return (quat){a[0], a[1], a[2], a[3]}; }
static inline void q_store(quat q, double out[4]) {
  out[0] = q.w;
  out[1] = q.x;
  out[2] = q.y;
  out[3] = q.z;
}

/* ---- transforms ---- */
static inline xform xf_identity(void) { return (xform){v3_zero(), q_identity(), m3_identity()}; }
static inline xform xf_make(vec3 p, quat q) { return (xform){p, q, q_to_mat3(q)}; }
static inline vec3 xf_point(const xform *t, vec3 local) {
  return v3_add(m3_mulv(&t->R, local), t->p);
}
static inline vec3 xf_vector(const xform *t, vec3 local) { return m3_mulv(&t->R, local); }
/* world point → local */
static inline vec3 xf_inv_point(const xform *t, vec3 world) {
  return m3_tmulv(&t->R, v3_sub(world, t->p));
}
static inline vec3 xf_inv_vector(const xform *t, vec3 world) { return m3_tmulv(&t->R, world); }
/* a ∘ b: first b then a (world_from_b = world_from_a · a_from_b). */
static inline xform xf_mul(const xform *a, const xform *b) {
  return xf_make(xf_point(a, b->p), q_normalize(q_mul(a->q, b->q)));
}

#endif
