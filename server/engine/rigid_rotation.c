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
 * re-deriving ω from L at the new R keeps L but not H: for a spin near the
 * intermediate principal axis the explicit step feeds energy into the
 * tumbling at every step and the body spins up.
 *
 * Here the step is a symplectic splitting (R. McLachlan, "Explicit
 * Lie–Poisson integration and the Euler equations"; A. Dullweber,
 * B. Leimkuhler and R. McLachlan, "Symplectic splitting methods for rigid
 * body molecular dynamics"). In principal axes H = T₁ + T₂ + T₃ with
 * T_a = π_a² / (2 I_a), and the flow of one T_a alone over a time τ is
 * exact and closed-form: the body turns about its principal axis e_a at the
 * constant rate π_a / I_a,
 *
 *   R ← R Rot_a(θ),   π ← Rot_a(θ)ᵀ π,   θ = τ π_a / I_a,
 *
 * which leaves R π = L, |π| and T_a unchanged. The step composes these
 * symmetrically (Strang):
 *
 *   T_s(h/2) ∘ T_m(h/2) ∘ T_l(h) ∘ T_m(h/2) ∘ T_s(h/2),
 *
 * s, m, l the axes of the smallest, middle and largest moment. The map is a
 * composition of exact Hamiltonian flows, so it is a Lie–Poisson
 * (symplectic) map, time-reversible and second order; backward error
 * analysis gives a modified energy H + O(h²) that it conserves over
 * exponentially long times, so the energy error stays bounded and does not
 * drift, and the tumbling keeps its period to O(h²). Of the six orders of
 * the axes, this one (the full middle step about the slowest sub-rotation,
 * the largest moment) gave the smallest energy error on boxes of several
 * shapes spun near each axis.
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

/* The exact flow of T_a = π_a² / (2 I_a) over tau: the body turns by
 * θ = tau π_a / I_a about its principal axis a, and π, in the turned axes,
 * by −θ: π ← Rot_a(θ)ᵀ π. Returns the turn Rot_a(θ) as a quaternion
 * (cos θ/2, sin θ/2 e_a); the sine and cosine of θ come from the half
 * angle's. */
static quat principal_flow(double pi[3], const double moments[3], int a, double tau) {
  double half = 0.5 * tau * pi[a] / moments[a];
  double s = sin(half), c = cos(half);
  double cos_t = 1.0 - 2.0 * s * s, sin_t = 2.0 * s * c;
  int b = a == 2 ? 0 : a + 1, d = a == 0 ? 2 : a - 1; /* (a, b, d) cyclic */
  double pb = pi[b], pd = pi[d];
  pi[b] = cos_t * pb + sin_t * pd;
  pi[d] = cos_t * pd - sin_t * pb;
  double turn[3] = {0.0, 0.0, 0.0};
  turn[a] = s;
  return (quat){c, turn[0], turn[1], turn[2]};
}

void lcp__rigid_rotation_step(quat orientation, const mat3 *inertia, const mat3 *inv_inertia,
                              vec3 angular_velocity, double h, quat *out_orientation,
                              vec3 *out_angular_velocity) {
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
  /* the axes by moment: smallest, middle, largest (ties keep axis order) */
  int s = 0, m = 1, l = 2, t;
  if (moments[m] < moments[s])
    t = s, s = m, m = t;
  if (moments[l] < moments[m])
    t = m, m = l, l = t;
  if (moments[m] < moments[s])
    t = s, s = m, m = t;
  const int axis[5] = {s, m, l, m, s};
  const double part[5] = {0.5, 0.5, 1.0, 0.5, 0.5};
  quat turn = q_identity(); /* old principal axes from new */
  for (int k = 0; k < 5; ++k)
    turn = q_mul(turn, principal_flow(pi, moments, axis[k], part[k] * h));
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
