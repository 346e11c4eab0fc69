/* SPDX-License-Identifier: Apache-2.0 */
/* The rotational update of a free rigid body (rigid_rotation.h).
 *
 * After the solve no torque acts until the next step, so the orientation
 * follows the torque-free motion from the solved angular velocity ω. With R
 * the orientation (world_from_body), I the body-frame inertia and
 * π = I Rᵀ ω the angular momentum in body axes, that motion is
 *
 *   L = R π constant (world angular momentum),   π̇ = π × I⁻¹ π (Euler),
 *
 * the flow of the energy H(π) = ½ πᵀ I⁻¹ π. Moving R along ω for h and
 * re-deriving ω from L at the new R keeps L but not H: the orientation
 * runs ahead along the old ω, and a spin near the intermediate principal
 * axis gains energy at every step and flips far too often.
 *
 * Here the step is a symplectic splitting (R. McLachlan, "Explicit
 * Lie–Poisson integration and the Euler equations"; A. Dullweber,
 * B. Leimkuhler and R. McLachlan, "Symplectic splitting methods for rigid
 * body molecular dynamics"). In principal axes H = T₁ + T₂ + T₃ with
 * T_a = π_a² / (2 I_a), and the flow of one T_a alone over a time τ is a
 * rotation of the body about its principal axis e_a, π_a being constant:
 *
 *   R ← R Rot_a(θ),   π ← Rot_a(θ)ᵀ π,   θ = τ π_a / I_a,
 *
 * which leaves R π = L, |π| and T_a unchanged. The step composes these
 * symmetrically (Strang):
 *
 *   T_s(h/2) ∘ T_m(h/2) ∘ T_l(h) ∘ T_m(h/2) ∘ T_s(h/2),
 *
 * s, m, l the axes of the smallest, middle and largest moment. Of the six
 * orders of the axes this one (the full middle step about the largest
 * moment, whose sub-rotation is the slowest) gave the smallest energy
 * error on boxes of several shapes spun near each axis.
 *
 * Each rotation is taken by its Cayley form, tan(θ'/2) = τ π_a / (2 I_a),
 * so no sine or cosine is evaluated: θ' = θ (1 − θ²/12 + …). A rotation
 * about e_a by an angle that depends on π_a alone is still the exact flow
 * of a Hamiltonian of π_a alone (one whose rate is θ'/τ), so every
 * sub-step is a Lie–Poisson map that keeps L exactly, and the composition
 * is symplectic, time-reversible (θ' is odd in τ) and second order.
 * Backward error analysis then gives a modified energy H + O(h²) that the
 * step conserves over exponentially long times: the energy error stays
 * bounded and does not drift, and the tumbling keeps its period to O(h²).
 *
 * The alternative, an implicit gyroscopic step in ω (backward Euler,
 * I (ω⁺ − ω) + h ω⁺ × I ω⁺ = 0, solved by Newton steps), is stable but
 * first order and dissipative: a tumbling body slows down, its
 * intermediate-axis flips come late, and |L| changes unless rescaled.
 *
 * The new angular velocity comes from the L before the sub-flows, at the
 * new orientation: ω⁺ = R⁺ I⁻¹ R⁺ᵀ L. The world angular momentum of the
 * state is then the solved one to rounding, whatever rounding the sub-flows'
 * π collected. A body whose inertia is not diagonal in its own axes is
 * split in its principal frame, I = V D Vᵀ, found by Jacobi rotations. */
#include "rigid_rotation.h"

#include <stdbool.h>

/* A symmetric 3×3 converges to rounding in a handful of sweeps. */
#define JACOBI_MAX_SWEEPS 16

static bool is_diagonal(const mat3 *a) {
  return a->m[0][1] == 0.0 && a->m[0][2] == 0.0 && a->m[1][0] == 0.0 && a->m[1][2] == 0.0 &&
         a->m[2][0] == 0.0 && a->m[2][1] == 0.0;
}

/* a = V diag(d) Vᵀ for a symmetric a by cyclic Jacobi rotations, V a
 * rotation (det +1) whose columns are the principal axes. Each rotation
 * Jᵀ a J in the (p, r) plane, by φ with t = tan φ the smaller root of
 * t² + 2ζt − 1 = 0, ζ = (a_rr − a_pp) / (2 a_pr), zeroes a_pr. */
static void principal_axes(const mat3 *a_in, mat3 *axes, double moments[3]) {
  static const int planes[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  mat3 a = *a_in, v = m3_identity();
  for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; ++sweep) {
    double off = a.m[0][1] * a.m[0][1] + a.m[0][2] * a.m[0][2] + a.m[1][2] * a.m[1][2];
    double diag = a.m[0][0] * a.m[0][0] + a.m[1][1] * a.m[1][1] + a.m[2][2] * a.m[2][2];
    if (off <= 1e-34 * diag)
      break;
    for (int k = 0; k < 3; ++k) {
      int p = planes[k][0], r = planes[k][1];
      double apr = a.m[p][r];
      if (apr == 0.0)
        continue;
      double zeta = (a.m[r][r] - a.m[p][p]) / (2.0 * apr);
      /* |ζ| so large that ζ² overflows: t = 0, nothing left to rotate */
      double t = copysign(1.0, zeta) / (fabs(zeta) + sqrt(zeta * zeta + 1.0));
      double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
      mat3 J = m3_identity();
      J.m[p][p] = J.m[r][r] = c;
      J.m[p][r] = s;
      J.m[r][p] = -s;
      mat3 aj = m3_mul(&a, &J), jt = m3_transpose(&J);
      a = m3_mul(&jt, &aj);
      a.m[p][r] = a.m[r][p] = 0.0;
      v = m3_mul(&v, &J);
    }
  }
  if (m3_det(&v) < 0.0)
    for (int i = 0; i < 3; ++i)
      v.m[i][2] = -v.m[i][2];
  *axes = v;
  for (int i = 0; i < 3; ++i)
    moments[i] = a.m[i][i];
}

/* The unit quaternion of a rotation matrix (the inverse of q_to_mat3),
 * from its largest component so that no division is by a small number. */
static quat quat_of_rotation(const mat3 *R) {
  const double(*m)[3] = R->m;
  double trace = m[0][0] + m[1][1] + m[2][2];
  quat q;
  if (trace >= m[0][0] && trace >= m[1][1] && trace >= m[2][2]) {
    double s = 2.0 * sqrt(1.0 + trace); /* 4w */
    q = (quat){0.25 * s, (m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s};
  } else if (m[0][0] >= m[1][1] && m[0][0] >= m[2][2]) {
    double s = 2.0 * sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]); /* 4x */
    q = (quat){(m[2][1] - m[1][2]) / s, 0.25 * s, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s};
  } else if (m[1][1] >= m[2][2]) {
    double s = 2.0 * sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]); /* 4y */
    q = (quat){(m[0][2] - m[2][0]) / s, (m[0][1] + m[1][0]) / s, 0.25 * s, (m[1][2] + m[2][1]) / s};
  } else {
    double s = 2.0 * sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]); /* 4z */
    q = (quat){(m[1][0] - m[0][1]) / s, (m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, 0.25 * s};
  }
  return q_normalize(q);
}

/* q_mul for quaternions whose vector parts are written in a basis of
 * handedness sigma (+1 right-handed, −1 left-handed), where the cross
 * product changes sign. */
static inline quat turn_mul(quat a, quat b, double sigma) {
  vec3 u = {a.x, a.y, a.z}, v = {b.x, b.y, b.z};
  vec3 c = v3_scale(v3_cross(u, v), sigma);
  vec3 r = v3_add(v3_add(v3_scale(v, a.w), v3_scale(u, b.w)), c);
  return (quat){a.w * b.w - v3_dot(u, v), r.x, r.y, r.z};
}

/* The momentum part of one sub-flow about axis a by θ, tan(θ/2) = t:
 * π ← Rot_a(θ)ᵀ π on its two other components (u1, u2), taken so that
 * (a, 1, 2) is cyclic; in a basis of handedness sigma the turn is by σθ. */
static inline void plane_turn(double t, double sigma, double *u1, double *u2) {
  double k = 1.0 / (1.0 + t * t);
  double c = (1.0 - t * t) * k, s = sigma * 2.0 * t * k;
  double a = *u1, b = *u2;
  *u1 = c * a + s * b;
  *u2 = c * b - s * a;
}

void lcp__rigid_rotation_step(quat orientation, const mat3 *inertia, const mat3 *inv_inertia,
                              vec3 angular_velocity, double h, quat *out_orientation,
                              vec3 *out_angular_velocity) {
  /* A body with equal principal moments (a sphere, a cube) keeps its
   * world ω under no torque and turns uniformly about it. The splitting
   * below only approximates that turn; one Cayley turn (1, hω/2),
   * normalised, is as accurate (angle 2 atan(h|ω|/2)), keeps L = I ω and
   * the energy exactly, and costs a fraction. */
  if (is_diagonal(inertia) && inertia->m[0][0] == inertia->m[1][1] &&
      inertia->m[1][1] == inertia->m[2][2]) {
    vec3 half = v3_scale(angular_velocity, 0.5 * h);
    *out_orientation = q_normalize(q_mul((quat){1.0, half.x, half.y, half.z}, orientation));
    *out_angular_velocity = angular_velocity;
    return;
  }
  mat3 R = q_to_mat3(orientation);
  vec3 pi_body = m3_mulv(inertia, m3_tmulv(&R, angular_velocity));
  vec3 L = m3_mulv(&R, pi_body);
  /* π and the moments in principal axes; V = body_from_principal */
  double pi[3], moments[3];
  bool principal = is_diagonal(inertia);
  quat body_from_principal = q_identity();
  if (principal) {
    for (int i = 0; i < 3; ++i)
      moments[i] = inertia->m[i][i];
    pi[0] = pi_body.x, pi[1] = pi_body.y, pi[2] = pi_body.z;
  } else {
    mat3 V;
    principal_axes(inertia, &V, moments);
    vec3 p = m3_tmulv(&V, pi_body);
    pi[0] = p.x, pi[1] = p.y, pi[2] = p.z;
    body_from_principal = quat_of_rotation(&V);
  }
  /* The sub-flows in the axes sorted by moment, u = (π_s, π_m, π_l): the
   * indices are then constants and the values stay in registers. The
   * sorted basis is left-handed when (s, m, l) is an odd permutation. */
  int s = 0, m = 1, l = 2, swap;
  double sigma = 1.0;
  if (moments[m] < moments[s])
    swap = s, s = m, m = swap, sigma = -sigma;
  if (moments[l] < moments[m])
    swap = m, m = l, l = swap, sigma = -sigma;
  if (moments[m] < moments[s])
    swap = s, s = m, m = swap, sigma = -sigma;
  double u0 = pi[s], u1 = pi[m], u2 = pi[l];
  /* tan(θ/2) = (τ/2) π_a / I_a with τ = h/2, h, h/2 */
  double rate_s = 0.25 * h / moments[s], rate_m = 0.25 * h / moments[m];
  double rate_l = 0.5 * h / moments[l];
  double t1 = rate_s * u0;
  plane_turn(t1, sigma, &u1, &u2);
  double t2 = rate_m * u1;
  plane_turn(t2, sigma, &u2, &u0);
  double t3 = rate_l * u2;
  plane_turn(t3, sigma, &u0, &u1);
  double t4 = rate_m * u1;
  plane_turn(t4, sigma, &u2, &u0);
  double t5 = rate_s * u0; /* the last sub-flow's π is not needed */
  /* The turn of the principal axes (old from new), the product of the five
   * Cayley quaternions (1, t e_a), normalised once with q below. */
  quat turn = turn_mul((quat){1.0, t1, 0.0, 0.0}, (quat){1.0, 0.0, t2, 0.0}, sigma);
  turn = turn_mul(turn, (quat){1.0, 0.0, 0.0, t3}, sigma);
  turn = turn_mul(turn, (quat){1.0, 0.0, t4, 0.0}, sigma);
  turn = turn_mul(turn, (quat){1.0, t5, 0.0, 0.0}, sigma);
  double axis_part[3];
  axis_part[s] = turn.x, axis_part[m] = turn.y, axis_part[l] = turn.z;
  turn = (quat){turn.w, axis_part[0], axis_part[1], axis_part[2]};
  quat q;
  if (principal)
    q = q_mul(orientation, turn);
  else
    q = q_mul(q_mul(orientation, body_from_principal), q_mul(turn, q_conj(body_from_principal)));
  q = q_normalize(q);
  mat3 R_new = q_to_mat3(q);
  *out_orientation = q;
  *out_angular_velocity = m3_mulv(&R_new, m3_mulv(inv_inertia, m3_tmulv(&R_new, L)));
}
