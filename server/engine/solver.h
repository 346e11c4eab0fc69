/* SPDX-License-Identifier: Apache-2.0 */
/* The boxed LCP solvers: their interface. PGS (solver_pgs.c) is the
 * step's; Jacobi (solver_jacobi.c) and the direct solver (solver_direct.c,
 * Dantzig's method: the reference) are the others.
 *
 * The problem is given by rows, not by the matrix A: row i has a Jacobian row
 * J_i over the velocity vector u (free bodies: 6 entries each, [v, ω] world;
 * robots: their joint velocities) and the response M⁻¹J_iᵀ. A row
 * touches at most two contiguous blocks of u (its two sides: two bodies, a
 * body and a robot, ...). With v = u_free + M⁻¹Jᵀλ kept up to date,
 *
 *     w_i = J_i v − target_i = (A λ + b)_i,  A = J M⁻¹ Jᵀ,  b = J u_free − target
 *
 * so only the diagonal A_ii = J_i · M⁻¹J_iᵀ is ever formed, and
 * each projected Gauss–Seidel update is
 *
 *     λ_i ← clamp(λ_i − ω (w_i + cfm_i λ_i) / (A_ii + cfm_i), lo_i, hi_i)
 *     v   += M⁻¹J_iᵀ (λ_i,new − λ_i,old).
 *
 * cfm_i makes the row soft: it solves w_i + cfm_i λ_i = 0 in the interior.
 */
#ifndef LCP_SOLVER_H
#define LCP_SOLVER_H

#include "arena.h"
#include "lcpsim/lcpsim.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum row_kind {
  ROW_BILATERAL = 0,  /* fixed bounds lo, hi */
  ROW_NORMAL = 1,     /* contact normal: fixed bounds, usually [0, ∞) */
  ROW_FRICTION_1 = 2, /* first tangent of a contact; bounds from its normal row */
  ROW_FRICTION_2 = 3, /* second tangent; always the row right after its ROW_FRICTION_1 */
  /* torsional friction of a contact patch about its normal: |λ| ≤ μ_τ Σλn
   * (box-bounded in both friction models; mu holds μ r, r the patch's
   * torsional radius) */
  ROW_TORSION = 4,
} row_kind;

typedef struct solver_row {
  /* Side k covers velocity entries [dof_offset[k], dof_offset[k] + dof_count[k]);
   * dof_count[k] == 0 means the side is absent (a static body). Its J and
   * M⁻¹Jᵀ coefficients are at coef_offset[k] in problem->J / problem->MinvJt. */
  int32_t dof_offset[2];
  int32_t dof_count[2];
  int32_t coef_offset[2];
  row_kind kind;
  /* Friction and torsion rows: their bound is μ Σ λn over the normal rows
   * normal_row, ..., normal_row + normal_count − 1 (a contact patch's
   * points: Coulomb's bound on the patch's total normal impulse; 1 for a
   * single point). */
  int32_t normal_row;
  int32_t normal_count;
  double mu;     /* friction rows: bound is μ Σλn; torsion rows: μ r */
  double target; /* desired w (bias: Baumgarte, speculative gap, PD target) */
  /* The relax iterations' target (solver_settings.relax_iterations): the
   * velocity-level part of target alone, without positional correction. */
  double relax_target;
  /* Restitution: when > 0 and the row's impulse after the main iterations
   * is > 0 (it hit), the relax target is max(relax_target, bounce), the
   * separating speed e·|approach speed| (contact normals only). */
  double bounce;
  double cfm;    /* ≥ 0 */
  double lo, hi; /* bounds for bilateral and normal rows; lo ≤ 0 ≤ hi is not required */
  double lambda; /* in: warm start; out: the solution */
} solver_row;

/* A contact patch on free bodies (a manifold: point_count points sharing
 * one normal) given by its geometry instead of by coefficients. Its rows
 * are, with K = point_count:
 *
 *   row .. row + K − 1   each point's normal (or bilateral) row, direction
 *                        d_0 at the point's arms point_arm[q];
 *   row + K, row + K + 1 ROW_FRICTION_1/2 along d_1, d_2 at the patch centre
 *                        (arms arm), normal_row == row, normal_count == K;
 *   row + K + 2          for K ≥ 2: ROW_TORSION about d_0, normal_row ==
 *                        row, normal_count == K.
 *
 * complete except that their J and M⁻¹Jᵀ coefficients are not written; for
 * direction d at arms r_A, r_B they are
 *
 *     J = [−d, −r_A × d | d, r_B × d],
 *     M⁻¹Jᵀ = [−d/m_A, −I_A⁻¹(r_A × d) | d/m_B, I_B⁻¹(r_B × d)],
 *
 * and for the torsion row J = [0, −d_0 | 0, d_0] (relative spin about the
 * normal), M⁻¹Jᵀ = [0, −I_A⁻¹d_0 | 0, I_B⁻¹d_0]; side A at velocity
 * entries dof[0], side B at dof[1]; the rows' side fields say the same (a
 * side with dof −1 is absent: the row's dof_count 0 there). The solver
 * sweeps such patches from the directions and arms alone, and writes the
 * coefficients at the rows' coef_offset only when it needs them (other
 * solvers, or a patch its contact path does not take). A single point is
 * a patch of K = 1: rows normal, friction 1, friction 2 at its own arms. */
enum { SOLVER_PATCH_MAX_POINTS = 4 };
typedef struct solver_contact {
  int32_t row;
  int32_t point_count; /* K, 1 to SOLVER_PATCH_MAX_POINTS */
  int32_t dof[2];      /* a multiple of 6: body dof / 6's mass properties below; −1: absent */
  double dir[3][3];    /* d_0 (normal), d_1, d_2 */
  double arm[2][3];    /* r_A, r_B of the patch centre (the friction rows) */
  double point_arm[SOLVER_PATCH_MAX_POINTS][2][3]; /* r_A, r_B of each point */
} solver_contact;

/* How many rows a patch of K points has: K normals, two tangents, and the
 * torsion row when K ≥ 2. */
static inline int32_t solver_patch_rows(int32_t points) { return points + 2 + (points >= 2); }

typedef struct solver_problem {
  int32_t row_count;
  solver_row *rows;
  double *J;      /* coefficients */
  double *MinvJt; /* same layout as J */
  int32_t dof_count;
  /* in: u_free (velocities after external forces, before constraints);
   * out: u_free + M⁻¹Jᵀλ for the returned λ. */
  double *velocity;
  /* Optional out [dof_count] (NULL: not wanted): the velocity after the
   * main iterations, with the positional targets: the velocity the
   * positions move with. Without relax iterations, the final velocity. */
  double *position_velocity;
  /* Optional (contact_count 0: none): contact points in increasing row
   * order, and the mass properties of the bodies they name: entry k for the
   * body at velocity entries [6k, 6k + 6), its inverse mass and world
   * inverse inertia (row-major 3×3). The coefficients of the points' rows
   * may be written by the solver (the arrays must have room at their
   * coef_offset). */
  int32_t contact_count;
  const solver_contact *contacts;
  const double *body_inv_mass;
  const double (*body_inv_inertia)[9];
} solver_problem;

/* How PGS sweeps the rows. The step always uses PGS_MODE_FULL; the other
 * modes are the references tests compare it with. */
typedef enum solver_pgs_mode {
  /* contact points in 4-lane units, a robot's coupled joint rows as exact
   * blocks, the vector code the processor runs fastest */
  PGS_MODE_FULL = 0,
  /* the same with the baseline vector code even where a wider one is
   * available: the results must be bitwise PGS_MODE_FULL's */
  PGS_MODE_BASELINE_VECTORS = 1,
  /* every generic row alone, also consecutive rows on one range that
   * PGS_MODE_FULL solves together as a block (plain projected Gauss–Seidel
   * on them, whose convergence the blocks are measured against) */
  PGS_MODE_NO_BLOCKS = 2,
} solver_pgs_mode;

typedef struct solver_settings {
  int32_t max_iterations;
  double omega;     /* SOR relaxation for PGS; damping for Jacobi */
  double tolerance; /* stop when the largest |Δλ_i|·(A_ii + cfm_i) of a sweep is below */
  lcp_friction_model_t friction_model;
  solver_pgs_mode pgs_mode; /* PGS_MODE_FULL but in tests */
  /* Of max_iterations, the last ones are relax iterations (Catto's soft
   * step in Box2D v3): every row's target is replaced by its relax target
   * (solver_row.relax_target and bounce), the positional correction is
   * dropped, and the velocity solved again from where the main iterations
   * left it. At least one main iteration is always done, and there are no
   * relax iterations when every row's relax target is its target. */
  int32_t relax_iterations;
} solver_settings;

typedef struct solver_result {
  int32_t iterations; /* sweeps done */
  /* largest |Δλ_i|·(A_ii + cfm_i) of the last sweep, m/s (the friction rows
   * of a contact point swept from its geometry take their normal's
   * A_nn + cfm_n as the scale) */
  double residual;
} solver_result;

/* Each solver starts from the rows' lambda (warm start; zero for a cold start),
 * first adding M⁻¹Jᵀλ to velocity, and leaves the solution in the rows
 * (the relax iterations' solution when there are any).
 * Friction rows with ROW_FRICTION_1/2 pairs are bounded per row by μΣλn in
 * the box model, and projected together onto the disc of radius μΣλn in
 * the cone model; torsion rows per row by μ_τΣλn in both. PGS then gives
 * each patch's normals the symmetric distribution (lcp__solver_patches_even).
 * Return LCP_OK, LCP_ERR_NO_MEMORY, or LCP_ERR_NUMERIC when a non-finite
 * value appears. */
int lcp__solver_pgs(const solver_settings *settings, solver_problem *problem, solver_result *result,
                    arena *scratch);
int lcp__solver_jacobi(const solver_settings *settings, solver_problem *problem,
                       solver_result *result, arena *scratch);
/* Forms the dense A and b from the rows and solves the boxed LCP exactly by
 * Dantzig's principal pivoting (friction bounds by an outer fixed-point loop
 * on the normal impulses). LCP_ERR_STATE when row_count exceeds max_rows. */
int lcp__solver_direct(const solver_settings *settings, solver_problem *problem,
                       solver_result *result, arena *scratch, int32_t max_rows);

/* Dense boxed LCP by Dantzig's algorithm: finds λ with lo ≤ λ ≤ hi and
 * w = Aλ + b complementary to the bounds. A is n×n
 * row-major, symmetric positive semidefinite with a positive diagonal;
 * requires lo_i ≤ 0 ≤ hi_i. lambda is output only. */
int lcp__dantzig_dense(int32_t n, const double *A, const double *b, const double *lo,
                       const double *hi, double *lambda, arena *scratch);

/* The iterations split into main and relax ones (relax_iterations); no
 * relax iterations when no row of p has a relax target other than its
 * target and none may bounce. *bounces: some row may bounce (its relax
 * target then depends on its impulse). */
void lcp__solver_split_iterations(const solver_settings *settings, const solver_problem *p,
                                  int32_t *main_iterations, int32_t *relax_iterations,
                                  bool *bounces);
/* The relax target of each row into targets[row_count]: relax_target, or
 * max(relax_target, bounce) for a row with bounce > 0 whose impulse (in
 * the rows' lambda) is > 0. */
void lcp__solver_relax_targets(const solver_problem *p, double *targets);

#endif
