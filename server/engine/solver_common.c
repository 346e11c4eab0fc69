/* SPDX-License-Identifier: Apache-2.0 */
/* What every solver reads off a problem: its checks, the entries of
 * A = J M⁻¹ Jᵀ it needs (A_ii with the degenerate test, A_ij), the contact
 * points' coefficients, and the generic rows as items.
 *
 *     w = A λ + b,  A = J M⁻¹ Jᵀ (+ diag cfm),  b = J u_free − target
 *     λ_i = lo_i ⇒ w_i ≥ 0;  λ_i = hi_i ⇒ w_i ≤ 0;  lo_i < λ_i < hi_i ⇒ w_i = 0
 *
 * Friction rows come in (ROW_FRICTION_1, ROW_FRICTION_2) pairs whose bounds
 * follow the total current impulse Σλn of their normal rows (a contact
 * patch's points; isotropic Coulomb friction on the patch, as PhysX's patch
 * friction): box model |λt_k| ≤ μΣλn per row; cone model
 * |(λt1, λt2)| ≤ μΣλn; a ROW_TORSION row |λτ| ≤ μ_τΣλn. A friction row's
 * own lo/hi are not used; a negative λn counts as 0. */
#include "solver_internal.h"

#include "lcp_math.h"

#include <math.h>
#include <string.h>

/* ---- A from the rows ---- */

/* Σ a_k b_k over the dof indices both segments cover: a covers
 * [a_off, a_off + a_n), b covers [b_off, b_off + b_n). Blocks of different
 * lengths (a body's 6 against a robot's n) overlap in any sub-range. */
static double overlap_dot(const double *a, int32_t a_off, int32_t a_n, const double *b,
                          int32_t b_off, int32_t b_n) {
  int32_t start = a_off > b_off ? a_off : b_off;
  int32_t a_end = a_off + a_n, b_end = b_off + b_n;
  int32_t end = a_end < b_end ? a_end : b_end;
  double sum = 0.0;
  for (int32_t k = start; k < end; ++k)
    sum += a[k - a_off] * b[k - b_off];
  return sum;
}

/* J_i · M⁻¹J_jᵀ = A_ij: every side of row i against every side of row j,
 * also two sides on overlapping ranges of velocity entries (a contact of
 * two links of one robot), which give their cross terms too. */
double lcp__solver_row_cross(const solver_problem *p, const solver_row *ri, const solver_row *rj) {
  double sum = 0.0;
  for (int a = 0; a < 2; ++a) {
    if (ri->dof_count[a] <= 0)
      continue;
    for (int c = 0; c < 2; ++c) {
      if (rj->dof_count[c] <= 0)
        continue;
      const double *ja = p->J + ri->coef_offset[a], *tc = p->MinvJt + rj->coef_offset[c];
      if (ri->dof_offset[a] == rj->dof_offset[c] && ri->dof_count[a] == rj->dof_count[c])
        sum += side_dot(ja, tc, ri->dof_count[a]); /* the common case: the same block */
      else
        sum += overlap_dot(ja, ri->dof_offset[a], ri->dof_count[a], tc, rj->dof_offset[c],
                           rj->dof_count[c]);
    }
  }
  return sum;
}

double lcp__solver_row_velocity(const solver_problem *p, const solver_row *r, const double *v) {
  double sum = -r->target;
  for (int a = 0; a < 2; ++a)
    for (int32_t k = 0; k < r->dof_count[a]; ++k)
      sum += p->J[r->coef_offset[a] + k] * v[r->dof_offset[a] + k];
  return sum;
}

void lcp__solver_row_apply(const solver_problem *p, const solver_row *r, double *v, double s) {
  for (int a = 0; a < 2; ++a)
    for (int32_t k = 0; k < r->dof_count[a]; ++k)
      v[r->dof_offset[a] + k] += p->MinvJt[r->coef_offset[a] + k] * s;
}

/* A row's bounds (bounded: not a friction row) and its cfm, target and
 * impulse: LCP_ERR_INVALID_ARGUMENT for bounds the wrong way round or a
 * negative cfm; *numeric set for a value that is not a number (or not
 * finite). */
static int check_row_values(const solver_row *r, bool bounded, bool *numeric) {
  if (bounded) {
    if (isnan(r->lo) || isnan(r->hi))
      *numeric = true;
    else if (r->lo > r->hi)
      return LCP_ERR_INVALID_ARGUMENT;
  }
  if (!isfinite(r->cfm) || !isfinite(r->target) || !isfinite(r->relax_target) ||
      !isfinite(r->bounce) || !isfinite(r->lambda))
    *numeric = true;
  else if (r->cfm < 0.0)
    return LCP_ERR_INVALID_ARGUMENT;
  return LCP_OK;
}

int lcp__solver_check_problem(const solver_problem *p) {
  if (!p || p->row_count < 0 || p->dof_count < 0)
    return LCP_ERR_INVALID_ARGUMENT;
  if (p->row_count > 0 && (!p->rows || !p->J || !p->MinvJt))
    return LCP_ERR_INVALID_ARGUMENT;
  if (p->dof_count > 0 && !p->velocity)
    return LCP_ERR_INVALID_ARGUMENT;
  bool numeric = false;
  for (int32_t i = 0; i < p->dof_count; ++i)
    numeric |= !isfinite(p->velocity[i]);
  for (int32_t i = 0; i < p->row_count; ++i) {
    const solver_row *r = &p->rows[i];
    int kind = (int)r->kind;
    if (kind < ROW_BILATERAL || kind > ROW_TORSION)
      return LCP_ERR_INVALID_ARGUMENT;
    for (int a = 0; a < 2; ++a) {
      if (r->dof_count[a] < 0)
        return LCP_ERR_INVALID_ARGUMENT;
      if (r->dof_count[a] > 0 &&
          (r->dof_offset[a] < 0 || r->coef_offset[a] < 0 ||
           (int64_t)r->dof_offset[a] + r->dof_count[a] > (int64_t)p->dof_count))
        return LCP_ERR_INVALID_ARGUMENT;
    }
    if (is_friction(r->kind)) {
      if (r->normal_count < 1 || r->normal_row < 0 ||
          (int64_t)r->normal_row + r->normal_count > (int64_t)p->row_count ||
          (i >= r->normal_row && i < r->normal_row + r->normal_count))
        return LCP_ERR_INVALID_ARGUMENT;
      for (int32_t j = 0; j < r->normal_count; ++j)
        if (is_friction(p->rows[r->normal_row + j].kind))
          return LCP_ERR_INVALID_ARGUMENT;
      if (!isfinite(r->mu))
        numeric = true;
      else if (r->mu < 0.0)
        return LCP_ERR_INVALID_ARGUMENT;
    }
    int rc = check_row_values(r, !is_friction(r->kind), &numeric);
    if (rc != LCP_OK)
      return rc;
  }
  if (p->contact_count < 0 ||
      (p->contact_count > 0 && (!p->contacts || !p->body_inv_mass || !p->body_inv_inertia)))
    return LCP_ERR_INVALID_ARGUMENT;
  int32_t next_row = 0;
  for (int32_t k = 0; k < p->contact_count; ++k) {
    const solver_contact *c = &p->contacts[k];
    const int32_t K = c->point_count;
    if (K < 1 || K > SOLVER_PATCH_MAX_POINTS || c->row < next_row ||
        c->row > p->row_count - solver_patch_rows(K))
      return LCP_ERR_INVALID_ARGUMENT;
    next_row = c->row + solver_patch_rows(K);
    const solver_row *r = &p->rows[c->row];
    for (int32_t q = 0; q < K; ++q)
      if (is_friction(r[q].kind))
        return LCP_ERR_INVALID_ARGUMENT;
    for (int32_t m = K; m < solver_patch_rows(K); ++m)
      if (r[m].kind != (m == K       ? ROW_FRICTION_1
                        : m == K + 1 ? ROW_FRICTION_2
                                     : ROW_TORSION) ||
          r[m].normal_row != c->row || r[m].normal_count != K)
        return LCP_ERR_INVALID_ARGUMENT;
    for (int s = 0; s < 2; ++s) {
      int32_t dof = c->dof[s];
      if (dof != -1 && (dof < 0 || dof % 6 != 0 || dof > p->dof_count - 6))
        return LCP_ERR_INVALID_ARGUMENT;
      for (int32_t m = 0; m < solver_patch_rows(K); ++m)
        if (r[m].dof_count[s] != (dof >= 0 ? 6 : 0) || (dof >= 0 && r[m].dof_offset[s] != dof))
          return LCP_ERR_INVALID_ARGUMENT;
    }
  }
  return numeric ? LCP_ERR_NUMERIC : LCP_OK;
}

int lcp__solver_check_iterative(const solver_settings *settings, const solver_problem *p,
                                const arena *scratch) {
  if (!settings || !scratch)
    return LCP_ERR_INVALID_ARGUMENT;
  if (!(settings->omega > 0.0) || !isfinite(settings->omega))
    return LCP_ERR_INVALID_ARGUMENT;
  return lcp__solver_check_problem(p);
}

/* Writes the coefficients of one patch row's side s: direction d at arm
 * (lin = true), or the spin about d alone (lin = false, torsion). */
static void expand_side(const solver_problem *p, const solver_contact *c, const solver_row *r,
                        int s, vec3 d, const double arm[3], bool lin_part) {
  double sign = s == 0 ? -1.0 : 1.0;
  int32_t body = c->dof[s] / 6;
  mat3 inv_inertia;
  memcpy(&inv_inertia, p->body_inv_inertia[body], sizeof inv_inertia);
  double inv_mass = lin_part ? p->body_inv_mass[body] : 0.0;
  vec3 lin = lin_part ? v3_scale(d, sign) : v3_zero();
  vec3 ang = v3_scale(lin_part ? v3_cross(v3_from(arm), d) : d, sign);
  vec3 response = m3_mulv(&inv_inertia, ang);
  double *j = p->J + r->coef_offset[s], *t = p->MinvJt + r->coef_offset[s];
  j[0] = lin.x, j[1] = lin.y, j[2] = lin.z, j[3] = ang.x, j[4] = ang.y, j[5] = ang.z;
  t[0] = lin.x * inv_mass, t[1] = lin.y * inv_mass, t[2] = lin.z * inv_mass;
  t[3] = response.x, t[4] = response.y, t[5] = response.z;
}

void lcp__solver_contact_expand(const solver_problem *p, const solver_contact *c) {
  const int32_t K = c->point_count;
  for (int32_t m = 0; m < solver_patch_rows(K); ++m) {
    const solver_row *r = &p->rows[c->row + m];
    int dir = m < K ? 0 : m == K ? 1 : m == K + 1 ? 2 : 0;
    vec3 d = v3_from(c->dir[dir]);
    for (int s = 0; s < 2; ++s) {
      if (c->dof[s] < 0)
        continue;
      if (m < K)
        expand_side(p, c, r, s, d, c->point_arm[m][s], true);
      else
        expand_side(p, c, r, s, d, c->arm[s], m < K + 2);
    }
  }
}

void lcp__solver_contacts_expand_all(const solver_problem *p) {
  for (int32_t k = 0; k < p->contact_count; ++k)
    lcp__solver_contact_expand(p, &p->contacts[k]);
}

/* Σ a_k b_k and Σ |a_k b_k| over the overlap of two segments (as overlap_dot). */
static double overlap_dot_abs(const double *a, int32_t a_off, int32_t a_n, const double *b,
                              int32_t b_off, int32_t b_n, double *abs_sum) {
  int32_t start = a_off > b_off ? a_off : b_off;
  int32_t a_end = a_off + a_n, b_end = b_off + b_n;
  int32_t end = a_end < b_end ? a_end : b_end;
  double sum = 0.0, sa = 0.0;
  for (int32_t k = start; k < end; ++k) {
    double x = a[k - a_off] * b[k - b_off];
    sum += x;
    sa += fabs(x);
  }
  *abs_sum += sa;
  return sum;
}

/* A_ii of row r (0 when it is degenerate: below DEGENERATE_RATIO of the
 * sum of its terms' sizes), or −1 when not finite: a non-finite
 * coefficient always makes A_ii non-finite (x·∞ = ±∞, 0·∞ = NaN). */
static double row_a(const solver_problem *p, const solver_row *r) {
  double a = 0.0, scale = 0.0;
  for (int s = 0; s < 2; ++s) {
    const double *j = p->J + r->coef_offset[s], *t = p->MinvJt + r->coef_offset[s];
    for (int32_t k = 0; k < r->dof_count[s]; ++k) {
      double x = j[k] * t[k];
      a += x;
      scale += fabs(x);
    }
  }
  const int32_t o0 = r->dof_offset[0], n0 = r->dof_count[0];
  const int32_t o1 = r->dof_offset[1], n1 = r->dof_count[1];
  if (n0 > 0 && n1 > 0 && o0 < o1 + n1 && o1 < o0 + n0) {
    /* two sides on overlapping ranges: their cross terms belong to A_ii */
    const double *j0 = p->J + r->coef_offset[0], *t0 = p->MinvJt + r->coef_offset[0];
    const double *j1 = p->J + r->coef_offset[1], *t1 = p->MinvJt + r->coef_offset[1];
    a += overlap_dot_abs(j0, o0, n0, t1, o1, n1, &scale);
    a += overlap_dot_abs(j1, o1, n1, t0, o0, n0, &scale);
  }
  if (!isfinite(a) || !isfinite(scale))
    return -1.0;
  return a > DEGENERATE_RATIO * scale ? a : 0.0;
}

/* A_ii + cfm_i from row_a's a (−1 stays −1; a degenerate soft row keeps
 * its cfm). */
static double diag_of(double a, double cfm) {
  if (a < 0.0)
    return -1.0;
  double d = a + cfm;
  return d > 0.0 ? d : 0.0;
}

double lcp__solver_row_diag(const solver_problem *p, const solver_row *r) {
  return diag_of(row_a(p, r), r->cfm);
}

double lcp__solver_pair_lambda_max(const solver_problem *p, int32_t i, double d1, double d2) {
  const solver_row *r = p->rows;
  double a = 0.5 * (lcp__solver_row_cross(p, &r[i], &r[i + 1]) +
                    lcp__solver_row_cross(p, &r[i + 1], &r[i]));
  double h = 0.5 * (d1 - d2);
  return 0.5 * (d1 + d2) + sqrt(h * h + a * a);
}

/* Does any row's relax target differ from its target, and may any row
 * bounce? When none does, relax iterations would solve the same problem
 * again: all the iterations are main ones, and the positions move with the
 * final velocity (which keeps, e.g., the angular momentum of colliding
 * bodies exact when no positional correction acts). */
static bool problem_has_relax(const solver_problem *p, bool *bounces) {
  bool relax = false;
  *bounces = false;
  for (int32_t i = 0; i < p->row_count; ++i) {
    relax |= p->rows[i].relax_target != p->rows[i].target;
    *bounces |= p->rows[i].bounce > 0.0;
  }
  return relax || *bounces;
}

void lcp__solver_split_iterations(const solver_settings *settings, const solver_problem *p,
                                  int32_t *main_iterations, int32_t *relax_iterations,
                                  bool *bounces) {
  int32_t total = settings->max_iterations, relax = settings->relax_iterations;
  *bounces = false;
  if (relax > 0 && !problem_has_relax(p, bounces))
    relax = 0;
  relax = relax < 0 ? 0 : relax;
  relax = relax > total - 1 ? total - 1 : relax;
  relax = relax < 0 ? 0 : relax;
  *main_iterations = total - relax;
  *relax_iterations = relax;
}

void lcp__solver_relax_targets(const solver_problem *p, double *targets) {
  /* (a row's impulse is read only when it may bounce) */
  for (int32_t i = 0; i < p->row_count; ++i) {
    const solver_row *r = &p->rows[i];
    double t = r->relax_target;
    /* Restitution (Newton's impact law) applies to a contact that hit:
     * its separating speed after the step is e times its approach speed. */
    if (r->bounce > 0.0 && r->lambda > 0.0 && r->bounce > t)
      t = r->bounce;
    targets[i] = t;
  }
}

void lcp__solver_set_result(solver_result *result, int32_t iterations, double residual) {
  if (result) {
    result->iterations = iterations;
    result->residual = residual;
  }
}

int lcp__solver_check_finite_output(const solver_problem *p) {
  for (int32_t i = 0; i < p->dof_count; ++i)
    if (!isfinite(p->velocity[i]))
      return LCP_ERR_NUMERIC;
  for (int32_t i = 0; i < p->row_count; ++i)
    if (!isfinite(p->rows[i].lambda))
      return LCP_ERR_NUMERIC;
  return LCP_OK;
}

/* ---- generic rows as items ---- */

static const double zeros6[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};

int lcp__solver_items_init(solver_items *s, int32_t row_count, arena *scratch) {
  size_t rows = row_count > 0 ? (size_t)row_count : 1;
  s->count = 0;
  s->lam = ARENA_NEW(scratch, double, rows);
  s->items = ARENA_NEW(scratch, pgs_item, rows);
  s->dummy_v = lcp__arena_calloc(scratch, 6, sizeof(double));
  return s->lam && s->items && s->dummy_v ? LCP_OK : LCP_ERR_NO_MEMORY;
}

static void item_set_step(pgs_item *it, double step, const solver_row *r) {
  it->step = step;
  it->keep = 1.0 - step * r->cfm;
  it->bias = step * r->target;
}

static void fill_item(pgs_item *it, const solver_problem *p, int32_t i, double diag, double omega,
                      double *dummy_v) {
  const solver_row *r = &p->rows[i];
  bool fast = true;
  for (int s = 0; s < 2; ++s) {
    int32_t n = r->dof_count[s];
    if (n > 0) {
      it->v[s] = p->velocity + r->dof_offset[s];
      it->J[s] = p->J + r->coef_offset[s];
      it->T[s] = p->MinvJt + r->coef_offset[s];
    } else {
      it->v[s] = dummy_v;
      it->J[s] = zeros6;
      it->T[s] = zeros6;
      n = 0;
    }
    it->n[s] = n;
    fast &= n == 0 || n == 6;
  }
  it->kind = fast ? IT_FAST : IT_GENERAL;
  it->diag = diag;
  item_set_step(it, omega / diag, r);
  it->row = i;
  if (is_friction(r->kind)) {
    it->lo = 0.0;
    it->hi = 0.0;
    it->mu = r->mu;
    it->normal = r->normal_row;
    it->normal_count = r->normal_count;
  } else {
    it->lo = r->lo;
    it->hi = r->hi;
    it->mu = 0.0;
    it->normal = i;
    it->normal_count = 1;
  }
}

/* The clamped warm start Σλn of a friction row's normals: each normal's
 * into its fixed bounds (0 when degenerate), negatives counting as 0. */
static double warm_normal_sum(const solver_problem *p, const solver_row *r) {
  double sum = 0.0;
  for (int32_t j = 0; j < r->normal_count; ++j) {
    const solver_row *nr = &p->rows[r->normal_row + j];
    double n = lcp__solver_row_diag(p, nr) > 0.0 ? clampd(nr->lambda, nr->lo, nr->hi) : 0.0;
    sum += n > 0.0 ? n : 0.0;
  }
  return sum;
}

/* The warm start of a generic row from the row itself (its normals' for
 * friction), clamped into its bounds: the normal's into its fixed bounds,
 * the friction row's into ±μΣλn with those clamped λn. */
static double item_warm(const solver_problem *p, int32_t i, double diag) {
  const solver_row *r = &p->rows[i];
  if (!(diag > 0.0))
    return 0.0;
  if (!is_friction(r->kind))
    return clampd(r->lambda, r->lo, r->hi);
  double bound = r->mu * warm_normal_sum(p, r);
  return clampd(r->lambda, -bound, bound);
}

double lcp__solver_friction_bound(const solver_row *r, const double *lam, const int32_t *pos) {
  double sum = 0.0;
  for (int32_t j = 0; j < r->normal_count; ++j) {
    int32_t at = pos ? pos[r->normal_row + j] : r->normal_row + j;
    double n = at >= 0 ? lam[at] : 0.0;
    sum += n > 0.0 ? n : 0.0;
  }
  return r->mu * sum;
}

void lcp__solver_items_skip(solver_items *s, solver_problem *p, int32_t i) {
  s->lam[i] = 0.0;
  p->rows[i].lambda = 0.0;
}

int lcp__solver_items_add(solver_items *s, solver_problem *p, int32_t i, double d0, double omega,
                          bool cone) {
  const int32_t first = s->count;
  double d1 = -1.0;
  if (cone && i + 1 < p->row_count && p->rows[i].kind == ROW_FRICTION_1 &&
      p->rows[i + 1].kind == ROW_FRICTION_2 && p->rows[i + 1].normal_row == p->rows[i].normal_row &&
      p->rows[i + 1].normal_count == p->rows[i].normal_count) {
    d1 = lcp__solver_row_diag(p, &p->rows[i + 1]);
    if (d1 < 0.0)
      return LCP_ERR_NUMERIC;
  }
  int32_t taken;
  if (d1 > 0.0) { /* a cone pair */
    pgs_item *a = &s->items[s->count], *b = &s->items[s->count + 1];
    fill_item(a, p, i, d0, omega, s->dummy_v);
    fill_item(b, p, i + 1, d1, omega, s->dummy_v);
    double step = omega / lcp__solver_pair_lambda_max(p, i, d0, d1);
    item_set_step(a, step, &p->rows[i]);
    item_set_step(b, step, &p->rows[i + 1]);
    bool fused =
        a->kind == IT_FAST && b->kind == IT_FAST && a->v[0] == b->v[0] && a->v[1] == b->v[1];
    a->kind = b->kind = fused ? IT_PAIR_FAST : IT_PAIR_GENERAL;
    /* the pair's warm start onto the disc of radius μΣλn, λn the normals'
     * clamped warm starts */
    double bound = p->rows[i].mu * warm_normal_sum(p, &p->rows[i]);
    double l1 = p->rows[i].lambda, l2 = p->rows[i + 1].lambda;
    double len = sqrt(l1 * l1 + l2 * l2);
    double f = len > bound ? bound / len : 1.0;
    s->lam[i] = l1 * f;
    s->lam[i + 1] = l2 * f;
    s->count += 2;
    taken = 2;
  } else {
    fill_item(&s->items[s->count++], p, i, d0, omega, s->dummy_v);
    s->lam[i] = item_warm(p, i, d0);
    taken = 1;
  }
  for (int32_t k = first; k < s->count; ++k) {
    const pgs_item *it = &s->items[k];
    double x = s->lam[it->row];
    if (x != 0.0)
      item_apply(it, x);
  }
  return taken;
}

void lcp__solver_items_finish(const solver_items *s, solver_problem *p) {
  for (int32_t k = 0; k < s->count; ++k)
    p->rows[s->items[k].row].lambda = s->lam[s->items[k].row];
}

/* ---- the symmetric distribution of a patch's normal impulses ----
 *
 * For the normal rows of one patch (one normal n, points p_i), Jᵀλ is
 * [−n Σλ_i, −(Σλ_i r_A,i) × n | n Σλ_i, (Σλ_i r_B,i) × n], and a point's
 * offset along n drops out of r × n: it depends on Σλ_i and Σλ_i p_i⊥
 * only (p_i⊥ = (x_i, y_i), the point in the contact plane). A rigid face's
 * normal rows thus have rank 3 and any λ with the same three sums is as
 * good a solution; Gauss–Seidel picks one by the order of its sweep. The
 * minimum-norm nonnegative one,
 *
 *     min ½|λ|²  subject to  A λ = b, λ ≥ 0,  A = [1; x; y] (3×K),
 *
 * is unique, and symmetric for a symmetric load (the load's symmetry maps
 * it to a solution of the same norm). Its optimality conditions are
 * λ_i = max(0, a_i·μ) for a multiplier μ ∈ R³ with A λ = b: the dual,
 * max_μ b·μ − ½ Σ max(0, a_i·μ)², is concave and piecewise quadratic, and
 * its Newton step from μ with active set S = {i : a_i·μ > 0} is
 * μ ← G_S⁻¹ b, G_S = Σ_{i∈S} a_i a_iᵀ (a semismooth Newton method, as for
 * projections onto a simplex). It stops when S repeats: then λ_S = A_Sᵀμ
 * meets A λ = b exactly and a_i·μ ≤ 0 off S, the optimality conditions. */

enum { EVEN_MAX_NEWTON = 8 };

/* μ = G⁻¹ b for the symmetric 3×3 G (row-major), or (G + ε tr(G) I)⁻¹ b
 * when G is near singular (collinear points, b in its range): the tiny ε
 * gives the least-norm μ to rounding. false when not finite. */
static bool solve_gram3(const double G[9], const double b[3], double mu[3]) {
  double tr = G[0] + G[4] + G[8];
  double e = 0.0;
  {
    double c00 = G[4] * G[8] - G[5] * G[5], c01 = G[2] * G[5] - G[1] * G[8];
    double c02 = G[1] * G[5] - G[2] * G[4];
    double det = G[0] * c00 + G[1] * c01 + G[2] * c02;
    if (!(fabs(det) > 1e-9 * tr * tr * tr))
      e = 1e-12 * tr;
  }
  double a = G[0] + e, bb = G[1], c = G[2], d = G[4] + e, f = G[5], g = G[8] + e;
  /* cofactors of the symmetric [[a, bb, c], [bb, d, f], [c, f, g]] */
  double c00 = d * g - f * f, c01 = c * f - bb * g, c02 = bb * f - c * d;
  double c11 = a * g - c * c, c12 = bb * c - a * f, c22 = a * d - bb * bb;
  double det = a * c00 + bb * c01 + c * c02;
  if (!(fabs(det) > 0.0) || !isfinite(det))
    return false;
  mu[0] = (c00 * b[0] + c01 * b[1] + c02 * b[2]) / det;
  mu[1] = (c01 * b[0] + c11 * b[1] + c12 * b[2]) / det;
  mu[2] = (c02 * b[0] + c12 * b[1] + c22 * b[2]) / det;
  return isfinite(mu[0] + mu[1] + mu[2]);
}

bool lcp__patch_even(int32_t K, const double *x, const double *y, const bool *active, double *lam) {
  if (K < 2 || K > SOLVER_PATCH_MAX_POINTS)
    return false;
  int32_t idx[SOLVER_PATCH_MAX_POINTS], n = 0;
  double mx = 0.0, my = 0.0;
  for (int32_t q = 0; q < K; ++q)
    if (active[q]) {
      idx[n++] = q;
      mx += x[q];
      my += y[q];
    }
  if (n < 2)
    return false;
  mx /= n, my /= n;
  /* coordinates about the points' mean, scaled to about 1: G is then as
   * well conditioned as the patch's shape lets it be */
  double h = 0.0, a[SOLVER_PATCH_MAX_POINTS][3], b[3] = {0.0, 0.0, 0.0};
  for (int32_t i = 0; i < n; ++i)
    h = fmax(h, fmax(fabs(x[idx[i]] - mx), fabs(y[idx[i]] - my)));
  for (int32_t i = 0; i < n; ++i) {
    a[i][0] = 1.0;
    a[i][1] = h > 0.0 ? (x[idx[i]] - mx) / h : 0.0;
    a[i][2] = h > 0.0 ? (y[idx[i]] - my) / h : 0.0;
    for (int k = 0; k < 3; ++k)
      b[k] += lam[idx[i]] * a[i][k];
  }
  if (!(b[0] > 0.0) || !isfinite(b[0] + b[1] + b[2]))
    return false;
  bool in[SOLVER_PATCH_MAX_POINTS];
  double s[SOLVER_PATCH_MAX_POINTS];
  for (int32_t i = 0; i < n; ++i)
    in[i] = true;
  bool settled = false;
  for (int it = 0; it < EVEN_MAX_NEWTON && !settled; ++it) {
    double G[9] = {0.0}, mu[3];
    for (int32_t i = 0; i < n; ++i)
      if (in[i])
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            G[3 * r + c] += a[i][r] * a[i][c];
    if (!solve_gram3(G, b, mu))
      return false;
    settled = true;
    for (int32_t i = 0; i < n; ++i) {
      s[i] = a[i][0] * mu[0] + a[i][1] * mu[1] + a[i][2] * mu[2];
      bool now = s[i] > 0.0;
      settled &= now == in[i];
      in[i] = now;
    }
  }
  if (!settled)
    return false; /* (a cycle: the sweep's distribution is kept) */
  double out[SOLVER_PATCH_MAX_POINTS], r[3] = {0.0, 0.0, 0.0};
  for (int32_t i = 0; i < n; ++i) {
    out[i] = in[i] ? s[i] : 0.0;
    for (int k = 0; k < 3; ++k)
      r[k] += out[i] * a[i][k];
  }
  /* A λ = b to rounding (collinear points: b must be in A's range) */
  for (int k = 0; k < 3; ++k)
    if (!(fabs(r[k] - b[k]) <= 1e-9 * b[0]))
      return false;
  /* the total exactly as it was (to its last bits), as the friction
   * bounds μΣλn were met with it */
  double f = b[0] / r[0];
  for (int32_t i = 0; i < n; ++i)
    lam[idx[i]] = out[i] * f;
  return true;
}

/* The relative velocity along n at arms r_A, r_B: n·((v_B + ω_B × r_B) −
 * (v_A + ω_A × r_A)), an absent side still. */
static double patch_normal_velocity(const solver_problem *p, const solver_contact *c, int32_t q) {
  vec3 n = v3_from(c->dir[0]);
  double w = 0.0;
  for (int s = 0; s < 2; ++s) {
    if (c->dof[s] < 0)
      continue;
    const double *u = p->velocity + c->dof[s];
    vec3 v = v3_add(v3_from(u), v3_cross(v3_from(u + 3), v3_from(c->point_arm[q][s])));
    w += (s == 0 ? -1.0 : 1.0) * v3_dot(n, v);
  }
  return w;
}

void lcp__solver_patches_even(solver_problem *p, double w_tolerance, const double *targets) {
  for (int32_t k = 0; k < p->contact_count; ++k) {
    const solver_contact *c = &p->contacts[k];
    const int32_t K = c->point_count;
    if (K < 2)
      continue;
    solver_row *r = &p->rows[c->row];
    double x[SOLVER_PATCH_MAX_POINTS], y[SOLVER_PATCH_MAX_POINTS], lam[SOLVER_PATCH_MAX_POINTS];
    bool active[SOLVER_PATCH_MAX_POINTS], plain = true;
    const int s = c->dof[1] >= 0 ? 1 : 0;
    vec3 t1 = v3_from(c->dir[1]), t2 = v3_from(c->dir[2]);
    for (int32_t q = 0; q < K; ++q) {
      plain &= r[q].kind == ROW_NORMAL && r[q].lo == 0.0 && r[q].hi == INFINITY;
      vec3 arm = v3_from(c->point_arm[q][s]);
      x[q] = v3_dot(arm, t1);
      y[q] = v3_dot(arm, t2);
      lam[q] = r[q].lambda;
      /* complementarity: a point separating (w > 0) keeps λ = 0 */
      double target = targets ? targets[c->row + q] : r[q].target;
      active[q] = lam[q] > 0.0 || patch_normal_velocity(p, c, q) - target <= w_tolerance;
    }
    if (plain && lcp__patch_even(K, x, y, active, lam))
      for (int32_t q = 0; q < K; ++q)
        r[q].lambda = lam[q];
  }
}
