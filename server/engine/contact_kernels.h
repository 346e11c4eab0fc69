/* SPDX-License-Identifier: Apache-2.0 */
/* Contact units and the 4-lane kernels that set them up and sweep them
 * (contact_kernels.c); PGS (solver_pgs.c) decides which rows make units and
 * in which groups and order they are swept.
 *
 * A unit is either a contact patch given by geometry (a solver_contact:
 * a manifold's normal rows and its patch friction rows, FORM_POINTS) or
 * consecutive single points given by coefficients, each a non-friction
 * row and its ROW_FRICTION_1/2 pair, on the same one or two 6-wide sides
 * (bodies) with the same directions (FORM_COEFS). A group is LANES units
 * on pairwise disjoint velocity entries, swept together, one unit per
 * lane. */
#ifndef LCP_CONTACT_KERNELS_H
#define LCP_CONTACT_KERNELS_H

#include "solver_internal.h"

#include <stdbool.h>
#include <stdint.h>

enum { LANES = 4 };
/* A unit of points given by coefficients (FORM_COEFS) has one or two
 * points; a solver_contact patch (FORM_POINTS) up to POINT_MAX. */
enum { UNIT_MAX_POINTS = 2, POINT_MAX = SOLVER_PATCH_MAX_POINTS };
enum { FORM_COEFS = 0, FORM_POINTS = 1 };

typedef struct lane_group {
  double *rec;          /* lcp__contact_unit_fields(form, points) fields of LANES doubles */
  double *lam;          /* [lcp__contact_unit_rows][LANES]: the units' impulses */
  double *v[2][LANES];  /* velocity of each side of each lane */
  int32_t row[LANES];   /* first row of each lane's unit; −1: empty lane */
  int32_t count[LANES]; /* points of each lane's unit */
  /* FORM_POINTS: each lane's patch (index into problem->contacts), for
   * the fill */
  int32_t contact[LANES];
  int32_t points; /* 1 or 2 (coefficients), 1 to POINT_MAX (points): the group's kind, */
  int32_t form;   /*   and FORM_* */
  int32_t lanes_used;
} lane_group;

/* How many fields (of LANES doubles each) a group's record has. */
int32_t lcp__contact_unit_fields(int32_t form, int32_t points);
/* How many rows (consecutive, from its first) a unit of `points` points
 * has: 3 per point given by coefficients, solver_patch_rows for a patch. */
int32_t lcp__contact_unit_rows(int32_t form, int32_t points);

/* The present sides of a row, in side order, when each is 6 wide (a body). */
typedef struct side_layout {
  int32_t sides; /* 1 or 2 */
  int32_t dof[2];
  int32_t coef[2]; /* the row's coefficient offsets */
} side_layout;

bool lcp__contact_same_sides(const side_layout *a, const side_layout *b);
/* Is row i the first of a point a coefficient unit can take: a
 * non-friction row followed by its two friction rows (ROW_FRICTION_1,
 * ROW_FRICTION_2, both with normal_row i, and no other row with normal_row
 * i: refs[i] == 2, so the unit keeps its impulses to itself during the
 * sweep), none degenerate, all on the same 6-wide sides? l[m] gets row
 * i + m's layout, diag[m] its A_ii + cfm_i. */
bool lcp__contact_unit_point_at(const solver_problem *p, const uint8_t *refs, int32_t i,
                                side_layout l[3], double diag[3]);
/* Does the point with layouts l share the linear parts (first 3
 * coefficients of each side, in J and M⁻¹Jᵀ) of the point with layouts l0? */
bool lcp__contact_same_linear(const solver_problem *p, const side_layout l0[3],
                              const side_layout l[3]);
/* The warm start of a unit's point whose rows start at r: the normal
 * clamped into its bounds, the friction pair into ±μλn (box) or onto the
 * disc of radius μλn (cone). */
void lcp__contact_unit_warm(const solver_row *r, bool cone, double *lam);
/* Writes lane k of group g's record (rec) for the coefficient unit of
 * `points` points at row i0 (layouts l, 3 per point), with its rows'
 * A_ii + cfm_i in diag and their warm start in lam (both from i0). */
void lcp__contact_unit_fill(const solver_problem *p, const double *diag, const double *lam,
                            double omega, bool cone, int32_t i0, int32_t points,
                            const side_layout (*l)[3], lane_group *g, double *rec, int32_t k,
                            double *dummy_v);
/* Can patch c be a point unit? Its normals' λ must be referred to by its
 * own friction rows only, its sides must be apart, and its rows those a
 * patch record holds (the step's contacts): the normals bounded by
 * [0, ∞), one cfm for all its rows, one μ for the tangents, no friction
 * target. */
bool lcp__contact_point_unit_placeable(const solver_problem *p, const uint8_t *refs,
                                       const solver_contact *c);

/* Rewrites the bias fields (step·target) of group g's lanes for new row
 * targets, targets[row] for every row of its units (the relax iterations). */
void lcp__contact_group_retarget(lane_group *g, const double *targets);

/* Sweeps count groups once; folds into *res the largest |Δλ_i|·(A_ii + cfm_i)
 * and into *acc their sum (non-finite as soon as an update is). */
typedef void (*contact_sweep_fn)(const lane_group *g, int32_t count, double *res, double *acc);
/* Fills a group of patch units (g->contact set, records and impulses
 * allocated), four lanes at once: their records, their warm starts clamped
 * and applied to velocity. false when a used lane's A_kk is not finite or
 * degenerate (the caller then sets the problem up without point units). */
typedef bool (*contact_fill_fn)(const solver_problem *p, lane_group *g, double omega, bool cone,
                                double *dummy_v);
/* Records above this many bytes do not stay in the cache between sweeps:
 * the sweep then asks for the groups ahead of time (prefetch). */
enum { CONTACT_PREFETCH_BYTES = 2 << 20 };
/* The kernels for the friction model, compiled for the widest vector
 * instructions the processor has (unless baseline_only): the results are
 * bitwise the same either way. */
contact_sweep_fn lcp__contact_pick_sweep(bool cone, bool baseline_only, bool prefetch);
contact_fill_fn lcp__contact_pick_point_fill(bool baseline_only);

#endif
