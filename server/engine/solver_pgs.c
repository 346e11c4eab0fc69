/* SPDX-License-Identifier: Apache-2.0 */
/* Projected Gauss–Seidel with over-relaxation (SOR): the driver.
 *
 * The matrix splitting A = B + C with B = L + ω⁻¹D iterates
 * λ ← LCP(B, b + Cλ); with a diagonal D this is one clamped scalar update
 * per row (pgs_item), and only A_ii is ever formed, because
 * w_i = J_i·v − target_i with v = u_free + M⁻¹Jᵀλ kept current (Cottle,
 * Pang and Stone, "The Linear Complementarity Problem", on splitting
 * methods; Catto, "Iterative Dynamics with Temporal Coherence", for the
 * velocity form). It converges for 0 < ω < 2 when A is positive definite.
 *
 * The setup is one pass over the rows in order, which sorts them into:
 *
 * - contact units (contact_kernels.h): a manifold's points on one or two
 *   bodies, swept four units at a time. Units are coloured (below) and
 *   kept in runs; a run's groups are swept colour by colour;
 * - robot blocks (robot_blocks.h): a robot's coupled joint rows, each
 *   block solved exactly per sweep;
 * - items: every other row (solver_internal.h), swept one by one.
 *
 * and lists them as ops in sweep order. A sweep runs the ops in turn: it is
 * Gauss–Seidel over the rows in that order, and the same order every time,
 * so the result is deterministic to the bit. PGS_MODE_BASELINE_VECTORS and
 * PGS_MODE_NO_BLOCKS (solver.h) are the references the tests compare with. */
#include "contact_kernels.h"
#include "robot_blocks.h"
#include "solver_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- colouring and runs of units ---- */

/* Units are coloured greedily in row order (the order in which the rows
 * are swept is the solver's to choose): each takes the smallest colour that no
 * earlier unit on one of its velocity entries took, so the units of one
 * colour are pairwise disjoint. A sweep takes the colours in turn, each in
 * row order: the dependency chain of a sweep is then a few colours long
 * instead of the longest chain of units sharing bodies in row order (326 of
 * the 1180 units of the L = 20 pyramid), and the groups of a colour overlap
 * in the processor. A unit finding all COLORS taken gets COLORS: those go
 * one unit per group, in row order, after the rest. */
enum { COLORS = 64 };
enum { RUN_UNITS_MAX = 1024 };

static int32_t unit_color(uint64_t *used, const side_layout *l) {
  uint64_t taken = 0;
  for (int32_t k = 0; k < l->sides; ++k)
    for (int32_t c = 0; c < 6; ++c)
      taken |= used[l->dof[k] + c];
  int32_t color = 0;
  while (color < COLORS && (taken >> color & 1u))
    ++color;
  if (color < COLORS)
    for (int32_t k = 0; k < l->sides; ++k)
      for (int32_t c = 0; c < 6; ++c)
        used[l->dof[k] + c] |= (uint64_t)1 << color;
  return color;
}

/* Groups are filled as the units are found, one open group per bucket
 * (colour, form, points): a unit goes into the last group of its bucket, or a new
 * one when that is full. A run's groups are kept in staging and copied into
 * the setup's group list bucket by bucket when the run ends (at an item or
 * the last row): colour by colour, 2-point before 1-point groups, each
 * bucket in row order. */
/* per colour: coefficient groups of 2 and 1 points, point groups of 1 to
 * POINT_MAX points, the larger first */
enum { KINDS = 2 + POINT_MAX, BUCKETS = KINDS * (COLORS + 1) };
typedef struct unit_staging {
  lane_group *groups; /* this run's groups, in creation order */
  int32_t *next;      /* next group of the same bucket, −1 at the end */
  int32_t count;
  /* −1: the bucket is empty; set for a colour's buckets when the colour
   * takes its first unit of a run (colors_used, last_color_used), so that
   * a solve does not clear all of them for the few colours it uses */
  int32_t head[BUCKETS], tail[BUCKETS];
  /* colours with a group in this run (bit c for c < COLORS; COLORS apart),
   * so that ending a run visits only their buckets */
  uint64_t colors_used;
  bool last_color_used;
  int32_t dofs_used; /* velocity entries whose colour masks are set */
  int32_t *dof_list; /* their first entries (6 each) */
  /* contact points make point units, whose groups get their records when
   * the run ends (contact_fill_fn); else every contact goes the
   * coefficient way */
  bool point_units;
} unit_staging;

/* The lane of a new unit of `points` points and colour `color`: the open
 * group of its bucket, or a new group (record uninitialised: every lane
 * that takes a unit writes all its fields, the rest are zeroed at the end
 * of the run). NULL when out of memory. */
static lane_group *unit_slot(unit_staging *st, arena *scratch, int32_t color, int32_t form,
                             int32_t points, double *dummy_v, int32_t *lane) {
  int32_t b = KINDS * color + (form == FORM_COEFS ? (points == 1) : 2 + POINT_MAX - points);
  int32_t per_group = color == COLORS ? 1 : LANES;
  bool color_open = color < COLORS ? (st->colors_used >> color & 1u) != 0 : st->last_color_used;
  if (!color_open) /* the colour's first unit in this run: its buckets start empty */
    for (int32_t k = KINDS * color; k < KINDS * (color + 1); ++k)
      st->head[k] = st->tail[k] = -1;
  int32_t t = st->tail[b];
  if (t >= 0 && st->groups[t].lanes_used < per_group) {
    *lane = st->groups[t].lanes_used++;
    return &st->groups[t];
  }
  int32_t k = st->count++;
  lane_group *g = &st->groups[k];
  g->rec = g->lam = NULL;
  if (form == FORM_COEFS || !st->point_units) {
    g->rec = ARENA_NEW(scratch, double, LANES *lcp__contact_unit_fields(form, points));
    g->lam = ARENA_NEW(scratch, double, LANES *lcp__contact_unit_rows(form, points));
    if (!g->rec || !g->lam)
      return NULL;
  }
  for (int32_t l = 0; l < LANES; ++l) {
    g->v[0][l] = g->v[1][l] = dummy_v;
    g->row[l] = -1;
    g->count[l] = 0;
    g->contact[l] = -1;
  }
  g->points = points;
  g->form = form;
  g->lanes_used = 1;
  st->next[k] = -1;
  if (t >= 0)
    st->next[t] = k;
  else
    st->head[b] = k;
  if (color < COLORS)
    st->colors_used |= (uint64_t)1 << color;
  else
    st->last_color_used = true;
  st->tail[b] = k;
  *lane = 0;
  return g;
}

/* ---- the setup ---- */

/* The sweep runs ops in order: a range of items, of groups or of blocks. */
enum { OP_ITEMS = 0, OP_GROUPS = 1, OP_BLOCKS = 2 };
typedef struct sweep_op {
  int32_t kind;
  int32_t begin, end;
} sweep_op;

typedef struct pgs_setup {
  solver_items items; /* generic rows; items.lam also holds the blocks' impulses */
  sweep_op *ops;      /* in sweep order */
  int32_t op_count;
  lane_group *groups;
  int32_t group_count;
  contact_sweep_fn sweep_groups;
  row_block *blocks;
  int32_t block_count;
  dantzig_work *dz;            /* Dantzig's work space for the largest block */
  const double *relax_targets; /* the rows' targets in the relax iterations; NULL: none ran */
} pgs_setup;

/* Appends item, group or block k to the ops, extending the last op when it
 * is a range of the same kind ending at k. */
static void ops_add(pgs_setup *s, int32_t kind, int32_t index) {
  sweep_op *last = s->op_count > 0 ? &s->ops[s->op_count - 1] : NULL;
  if (last && last->kind == kind && last->end == index) {
    last->end = index + 1;
    return;
  }
  s->ops[s->op_count++] = (sweep_op){kind, index, index + 1};
}

/* How the contact points given as solver_contact are set up. */
typedef enum pgs_points {
  /* as point units, their groups filled four lanes at a time when their
   * run ends */
  POINTS_AS_UNITS = 0,
  /* from their rows' coefficients (written first), as any row: the
   * fallback when a point unit turns out degenerate */
  POINTS_AS_COEFFICIENTS = 1,
} pgs_points;

/* The state of the pass over the rows. */
typedef struct pgs_builder {
  pgs_setup *out;
  solver_problem *p;
  arena *scratch;
  double omega;
  bool cone;
  bool use_blocks;
  contact_fill_fn fill;
  uint8_t *refs;      /* [row_count] friction rows naming each row as their normal (to 255) */
  uint64_t *used;     /* [dof_count] the colours taken on each velocity entry in this run */
  uint8_t *placeable; /* [contact_count] will be (a point of) a point unit; NULL: none */
  double *bdiag;      /* [BLOCK_MAX] a block's A_ii + cfm_i */
  int32_t ci;         /* the next contact */
  unit_staging st;
} pgs_builder;

enum { RUN_REDO = 1 }; /* a point group has a degenerate lane */

/* Ends a run: fills the point groups (their records allocated one after
 * the other, in sweep order) and zeroes the empty lanes of the others (all
 * their updates are then 0 + 0, on the dummy velocity), appends the groups
 * to the setup bucket by bucket, and clears the run's colour masks.
 * LCP_OK, LCP_ERR_NO_MEMORY or RUN_REDO. */
static int run_end(pgs_builder *b) {
  unit_staging *st = &b->st;
  pgs_setup *s = b->out;
  for (int32_t color = 0; color <= COLORS; ++color) {
    if (color < COLORS) {
      uint64_t from_here = st->colors_used >> color;
      if (!from_here) {
        color = COLORS - 1; /* the loop goes on to the last colour */
        continue;
      }
      color += simd_lowest_bit(from_here);
    } else if (!st->last_color_used) {
      break;
    }
    for (int32_t bucket = KINDS * color; bucket < KINDS * (color + 1); ++bucket) {
      for (int32_t k = st->head[bucket]; k >= 0; k = st->next[k]) {
        lane_group *g = &st->groups[k];
        int32_t fields = lcp__contact_unit_fields(g->form, g->points);
        if (!g->rec) {
          g->rec = ARENA_NEW(b->scratch, double, LANES *fields);
          g->lam = ARENA_NEW(b->scratch, double, LANES *lcp__contact_unit_rows(g->form, g->points));
          if (!g->rec || !g->lam)
            return LCP_ERR_NO_MEMORY;
          if (!b->fill(b->p, g, b->omega, b->cone, s->items.dummy_v))
            return RUN_REDO;
        } else {
          for (int32_t l = g->lanes_used; l < LANES; ++l) {
            for (int32_t f = 0; f < fields; ++f)
              g->rec[LANES * f + l] = 0.0;
            for (int32_t f = 0; f < lcp__contact_unit_rows(g->form, g->points); ++f)
              g->lam[LANES * f + l] = 0.0;
          }
        }
        s->groups[s->group_count] = *g;
        ops_add(s, OP_GROUPS, s->group_count++);
      }
      st->head[bucket] = st->tail[bucket] = -1;
    }
  }
  st->colors_used = 0;
  st->last_color_used = false;
  st->count = 0;
  for (int32_t u = 0; u < st->dofs_used; ++u)
    memset(b->used + st->dof_list[u], 0, 6 * sizeof(uint64_t));
  st->dofs_used = 0;
  return LCP_OK;
}

/* The units before other rows are swept before them: the run ends. */
static int run_end_if_open(pgs_builder *b) { return b->st.count > 0 ? run_end(b) : LCP_OK; }

/* Colours a new unit on the sides in l and keeps its entries for clearing
 * at the run's end; its lane in a group of that colour. NULL when out of
 * memory. */
static lane_group *unit_place(pgs_builder *b, const side_layout *l, int32_t form, int32_t points,
                              int32_t *lane) {
  int32_t color = unit_color(b->used, l);
  for (int32_t k = 0; k < l->sides; ++k)
    if (color < COLORS)
      b->st.dof_list[b->st.dofs_used++] = l->dof[k];
  return unit_slot(&b->st, b->scratch, color, form, points, b->out->items.dummy_v, lane);
}

/* Checks, and the setup's and the pass's memory. */
static int builder_init(pgs_builder *b, const solver_settings *settings, solver_problem *p,
                        arena *scratch, pgs_points points, pgs_setup *out) {
  int rc = lcp__solver_check_iterative(settings, p, scratch);
  if (rc != LCP_OK)
    return rc;
  const int32_t n = p->row_count;
  size_t rows = n > 0 ? (size_t)n : 1, max_units = rows / 3 + 1;
  const bool baseline_only = settings->pgs_mode == PGS_MODE_BASELINE_VECTORS;
  /* field by field: the staging's bucket lists (a few kilobytes) are set
   * per colour as colours are used (unit_slot) */
  b->out = out;
  b->p = p;
  b->scratch = scratch;
  b->omega = settings->omega;
  b->cone = settings->friction_model == LCP_FRICTION_CONE;
  b->use_blocks = settings->pgs_mode != PGS_MODE_NO_BLOCKS;
  b->fill = lcp__contact_pick_point_fill(baseline_only);
  b->placeable = NULL;
  b->ci = 0;
  unit_staging *st = &b->st;
  st->count = 0;
  st->colors_used = 0;
  st->last_color_used = false;
  st->dofs_used = 0;
  *out = (pgs_setup){.sweep_groups = lcp__contact_pick_sweep(b->cone, baseline_only, false)};
  if (lcp__solver_items_init(&out->items, n, scratch) != LCP_OK)
    return LCP_ERR_NO_MEMORY;
  out->ops = ARENA_NEW(scratch, sweep_op, rows);
  out->blocks = b->use_blocks ? ARENA_NEW(scratch, row_block, rows / 2 + 1) : NULL;
  b->bdiag = b->use_blocks ? ARENA_NEW(scratch, double, BLOCK_MAX) : NULL;
  out->groups = ARENA_NEW(scratch, lane_group, max_units);
  st->groups = ARENA_NEW(scratch, lane_group, max_units);
  st->next = ARENA_NEW(scratch, int32_t, max_units);
  st->dof_list = ARENA_NEW(scratch, int32_t, 2 * max_units);
  st->point_units = points == POINTS_AS_UNITS;
  b->refs = lcp__arena_calloc(scratch, rows, 1);
  b->used =
      lcp__arena_calloc(scratch, p->dof_count > 0 ? (size_t)p->dof_count : 1, sizeof(uint64_t));
  if (!out->ops || (b->use_blocks && (!out->blocks || !b->bdiag)) || !out->groups || !st->groups ||
      !st->next || !st->dof_list || !b->refs || !b->used)
    return LCP_ERR_NO_MEMORY;
  /* a friction row refers to each of its normals (a patch's: all of them) */
  for (int32_t i = 0; i < n; ++i)
    if (is_friction(p->rows[i].kind))
      for (int32_t j = 0; j < p->rows[i].normal_count; ++j)
        if (b->refs[p->rows[i].normal_row + j] < 255)
          b->refs[p->rows[i].normal_row + j]++;
  return LCP_OK;
}

/* Contact points: the ones that will not be point units get their
 * coefficients now (another row may read their normal's before the pass
 * reaches them); with POINTS_AS_COEFFICIENTS, all of them. Whether a point
 * will be a unit is found once, as a large problem's rows are not in the
 * cache for a second look. */
static int builder_expand_contacts(pgs_builder *b) {
  const solver_problem *p = b->p;
  if (b->st.point_units && p->contact_count > 0) {
    b->placeable = ARENA_NEW(b->scratch, uint8_t, p->contact_count);
    if (!b->placeable)
      return LCP_ERR_NO_MEMORY;
  }
  for (int32_t k = 0; k < p->contact_count; ++k) {
    bool unit = b->st.point_units && lcp__contact_point_unit_placeable(p, b->refs, &p->contacts[k]);
    if (b->placeable)
      b->placeable[k] = unit;
    if (!unit)
      lcp__solver_contact_expand(p, &p->contacts[k]);
  }
  return LCP_OK;
}

/* The row where the next contact point starts (row_count after the last). */
static int32_t next_contact_row(const pgs_builder *b) {
  return b->ci < b->p->contact_count ? b->p->contacts[b->ci].row : b->p->row_count;
}

/* Row i starts a contact patch that is a point unit: placed now, computed
 * when the run ends (contact_fill_fn). *taken: its rows, 0 when row i is
 * no point unit's. */
static int place_point_unit(pgs_builder *b, int32_t i, int32_t *taken) {
  *taken = 0;
  const int32_t ci = b->ci;
  if (next_contact_row(b) != i || ci >= b->p->contact_count)
    return LCP_OK;
  const solver_contact *c = &b->p->contacts[ci];
  ++b->ci;
  if (!(b->placeable && b->placeable[ci]))
    return LCP_OK; /* not a unit: its rows (expanded) go another way */
  side_layout sl = {.sides = 0, .dof = {-1, -1}};
  for (int s = 0; s < 2; ++s)
    if (c->dof[s] >= 0)
      sl.dof[sl.sides++] = c->dof[s];
  int32_t lane;
  lane_group *g = unit_place(b, &sl, FORM_POINTS, c->point_count, &lane);
  if (!g)
    return LCP_ERR_NO_MEMORY;
  g->contact[lane] = ci;
  *taken = solver_patch_rows(c->point_count);
  return LCP_OK;
}

/* Row i starts a point given by coefficients that a unit can take: one
 * point, or two sharing their linear parts; their warm start applied to
 * velocity and their lane filled now. */
static int place_coefficient_unit(pgs_builder *b, int32_t i, int32_t *taken) {
  *taken = 0;
  solver_problem *p = b->p;
  side_layout l[UNIT_MAX_POINTS][3];
  double ud[3 * UNIT_MAX_POINTS], ul[3 * UNIT_MAX_POINTS];
  if (!lcp__contact_unit_point_at(p, b->refs, i, l[0], ud))
    return LCP_OK;
  int32_t points = 1;
  if (next_contact_row(b) != i + 3 && lcp__contact_unit_point_at(p, b->refs, i + 3, l[1], ud + 3) &&
      lcp__contact_same_sides(&l[0][0], &l[1][0]) && lcp__contact_same_linear(p, l[0], l[1]))
    points = 2;
  int32_t lane;
  lane_group *g = unit_place(b, &l[0][0], FORM_COEFS, points, &lane);
  if (!g)
    return LCP_ERR_NO_MEMORY;
  for (int32_t q = 0; q < points; ++q) {
    lcp__contact_unit_warm(&p->rows[i + 3 * q], b->cone, ul + 3 * q);
    for (int32_t m = 0; m < 3; ++m) {
      double x = ul[3 * q + m];
      if (x == 0.0)
        continue;
      for (int32_t s = 0; s < l[q][m].sides; ++s)
        axpy6(p->velocity + l[q][m].dof[s], p->MinvJt + l[q][m].coef[s], x);
    }
  }
  lcp__contact_unit_fill(p, ud, ul, b->omega, b->cone, i, points, l, g, g->rec, lane,
                         b->out->items.dummy_v);
  *taken = 3 * points;
  return LCP_OK;
}

/* Row i starts a robot block. A block ends before the next contact point's
 * rows (not yet expanded); one whose K has no Cholesky factor is solved by
 * Dantzig's method alone (robot_blocks.h). A patch's normal rows on a robot link (consecutive,
 * on one side) are not made a block: their distribution among the points
 * moves nothing (for a rigid link they have rank 3) and an exact solve
 * per sweep costs more than the rows. */
static int place_block(pgs_builder *b, int32_t i, int32_t *taken) {
  *taken = 0;
  pgs_setup *s = b->out;
  if (b->p->rows[i].kind == ROW_NORMAL)
    return LCP_OK;
  int32_t m = b->use_blocks ? lcp__robot_block_rows(b->p, i, next_contact_row(b), b->bdiag) : 0;
  if (m == 0)
    return LCP_OK;
  row_block *block = &s->blocks[s->block_count];
  int rc = lcp__robot_block_init(block, b->p, i, m, b->bdiag, s->items.lam, b->scratch);
  if (rc != LCP_OK || (rc = run_end_if_open(b)) != LCP_OK)
    return rc;
  ops_add(s, OP_BLOCKS, s->block_count++);
  *taken = m;
  return LCP_OK;
}

/* Row i (and, for a cone pair, i + 1) as items, or skipped when degenerate. */
static int place_items(pgs_builder *b, int32_t i, int32_t *taken) {
  pgs_setup *s = b->out;
  double d = lcp__solver_row_diag(b->p, &b->p->rows[i]);
  if (d < 0.0)
    return LCP_ERR_NUMERIC;
  if (!(d > 0.0)) {
    lcp__solver_items_skip(&s->items, b->p, i);
    *taken = 1;
    return LCP_OK;
  }
  int rc = run_end_if_open(b);
  if (rc != LCP_OK)
    return rc;
  const int32_t first = s->items.count;
  int n = lcp__solver_items_add(&s->items, b->p, i, d, b->omega, b->cone);
  if (n < 0)
    return n;
  for (int32_t k = first; k < s->items.count; ++k)
    ops_add(s, OP_ITEMS, k);
  *taken = n;
  return LCP_OK;
}

/* The pass over the rows: each row is placed as a point unit, a
 * coefficient unit, a block or an item, in that order of preference; the
 * warm start is clamped and applied to velocity (v = u_free + M⁻¹Jᵀλ) as
 * each row is met (point units': when their run ends). Non-finite
 * coefficients (A_ii) give LCP_ERR_NUMERIC, possibly after some of the warm
 * start went into velocity. LCP_OK, an error or RUN_REDO. */
static int setup_pass(const solver_settings *settings, solver_problem *p, arena *scratch,
                      pgs_points points, pgs_setup *out) {
  pgs_builder b;
  int rc = builder_init(&b, settings, p, scratch, points, out);
  if (rc == LCP_OK)
    rc = builder_expand_contacts(&b);
  for (int32_t i = 0; rc == LCP_OK && i < p->row_count;) {
    /* A run is coloured as a whole, and a sweep takes it colour by colour:
     * a run much longer than the cache holds would be read once per colour
     * from memory. Runs are cut at RUN_UNITS_MAX units (contacts come in
     * spatial order, so a run covers a neighbourhood). */
    if (b.st.count >= RUN_UNITS_MAX && (rc = run_end(&b)) != LCP_OK)
      break;
    int32_t taken = 0;
    rc = place_point_unit(&b, i, &taken);
    if (rc == LCP_OK && taken == 0)
      rc = place_coefficient_unit(&b, i, &taken);
    if (rc == LCP_OK && taken == 0)
      rc = place_block(&b, i, &taken);
    if (rc == LCP_OK && taken == 0)
      rc = place_items(&b, i, &taken);
    i += taken;
  }
  if (rc == LCP_OK)
    rc = run_end_if_open(&b);
  if (rc != LCP_OK)
    return rc;
  size_t record_bytes = 0;
  for (int32_t k = 0; k < out->group_count; ++k)
    record_bytes += sizeof(double) * LANES *
                    (size_t)lcp__contact_unit_fields(out->groups[k].form, out->groups[k].points);
  if (record_bytes > CONTACT_PREFETCH_BYTES)
    out->sweep_groups =
        lcp__contact_pick_sweep(b.cone, settings->pgs_mode == PGS_MODE_BASELINE_VECTORS, true);
  if (out->block_count > 0) {
    int32_t largest = 0;
    for (int32_t k = 0; k < out->block_count; ++k)
      largest = out->blocks[k].m > largest ? out->blocks[k].m : largest;
    out->dz = lcp__dantzig_work_new(largest, scratch);
    if (!out->dz)
      return LCP_ERR_NO_MEMORY;
  }
  return LCP_OK;
}

/* Sets the problem up with the point groups filled four lanes at a time,
 * or, when one of their points turns out degenerate (RUN_REDO), again from
 * the velocity as it was, every contact from its coefficients
 * (lcp__solver_row_diag then finds such a row degenerate and keeps its impulse
 * 0). Without contact points, only the second way applies. */
static int pgs_prepare(const solver_settings *settings, solver_problem *p, arena *scratch,
                       pgs_setup *out) {
  if (!p || p->contact_count <= 0 || p->dof_count <= 0 || !p->velocity)
    return setup_pass(settings, p, scratch, POINTS_AS_COEFFICIENTS, out);
  double *saved = ARENA_NEW(scratch, double, p->dof_count);
  if (!saved)
    return LCP_ERR_NO_MEMORY;
  memcpy(saved, p->velocity, sizeof(double) * (size_t)p->dof_count);
  int rc = setup_pass(settings, p, scratch, POINTS_AS_UNITS, out);
  if (rc != RUN_REDO)
    return rc;
  memcpy(p->velocity, saved, sizeof(double) * (size_t)p->dof_count);
  return setup_pass(settings, p, scratch, POINTS_AS_COEFFICIENTS, out);
}

/* The impulses into the rows: the units' from their groups, the items'
 * and the blocks' from lam (degenerate rows were set to 0 by the setup). */
static void pgs_write_impulses(solver_problem *p, const pgs_setup *s) {
  for (int32_t k = 0; k < s->group_count; ++k) {
    const lane_group *g = &s->groups[k];
    for (int32_t lane = 0; lane < g->lanes_used; ++lane)
      for (int32_t r = 0; r < lcp__contact_unit_rows(g->form, g->count[lane]); ++r)
        p->rows[g->row[lane] + r].lambda = g->lam[LANES * r + lane];
  }
  lcp__solver_items_finish(&s->items, p);
  for (int32_t k = 0; k < s->block_count; ++k)
    for (int32_t r = 0; r < s->blocks[k].m; ++r)
      p->rows[s->blocks[k].first + r].lambda = s->items.lam[s->blocks[k].first + r];
}

/* The solution into the rows, each patch's normal impulses in their
 * symmetric distribution. */
static void pgs_finish(solver_problem *p, const pgs_setup *s) {
  pgs_write_impulses(p, s);
  lcp__solver_patches_even(p, PATCH_W_TOLERANCE, s->relax_targets);
}

/* ---- the sweeps ---- */

/* The update of one item from jv = J_i·v: its new λ into lam, the residual
 * terms folded into *res and *acc. Returns Δλ. */
static inline double item_solve(const pgs_item *a, double *lam, double jv, double *res,
                                double *acc) {
  double l = lam[a->row];
  double x = item_update(a, lam, jv);
  double dl = x - l;
  lam[a->row] = x;
  double r = fabs(dl) * a->diag;
  *res = r > *res ? r : *res;
  *acc += r;
  return dl;
}

/* The update of a cone pair (a, a + 1) from w1 = J_a·v, w2 = J_b·v: as
 * item_solve, Δλ of both into d. */
static inline void pair_solve(const pgs_item *a, double *lam, double w1, double w2, double *res,
                              double *acc, double d[2]) {
  const pgs_item *b = a + 1;
  double l1 = lam[a->row], l2 = lam[b->row], x1, x2;
  pair_update(a, b, lam, w1, w2, &x1, &x2);
  d[0] = x1 - l1, d[1] = x2 - l2;
  lam[a->row] = x1;
  lam[b->row] = x2;
  double r1 = fabs(d[0]) * a->diag, r2 = fabs(d[1]) * b->diag;
  double r = r1 > r2 ? r1 : r2;
  *res = r > *res ? r : *res;
  *acc += r1 + r2;
}

/* Gauss–Seidel over a range of items in row order. Folds into *res the
 * residual, the largest |Δλ_i|·(A_ii + cfm_i), and into *sum their sum,
 * which turns non-finite as soon as any update does (the clamps below would
 * hide a NaN in λ, not in Δλ). Fast items and pairs (6-wide or absent
 * sides) take the straight-line kernels. */
static void pgs_items(const pgs_item *items, int32_t count, double *lam, double *res_io,
                      double *sum_io) {
  double res = *res_io, acc = *sum_io;
  for (int32_t k = 0; k < count;) {
    const pgs_item *a = &items[k], *b = a + 1;
    double *v0 = a->v[0], *v1 = a->v[1], d[2];
    switch (a->kind) {
    case IT_FAST: {
      double dl = item_solve(a, lam, dot12(a->J[0], v0, a->J[1], v1), &res, &acc);
      axpy6(v0, a->T[0], dl);
      axpy6(v1, a->T[1], dl);
      k += 1;
      break;
    }
    case IT_GENERAL:
      item_apply(a, item_solve(a, lam, item_jv(a), &res, &acc));
      k += 1;
      break;
    case IT_PAIR_FAST:
      pair_solve(a, lam, dot12(a->J[0], v0, a->J[1], v1), dot12(b->J[0], v0, b->J[1], v1), &res,
                 &acc, d);
      axpy6x2(v0, a->T[0], d[0], b->T[0], d[1]);
      axpy6x2(v1, a->T[1], d[0], b->T[1], d[1]);
      k += 2;
      break;
    default: /* IT_PAIR_GENERAL */
      pair_solve(a, lam, item_jv(a), item_jv(b), &res, &acc, d);
      item_apply(a, d[0]);
      item_apply(b, d[1]);
      k += 2;
      break;
    }
  }
  *res_io = res;
  *sum_io = acc;
}

/* One Gauss–Seidel sweep: the ops in order. Returns the residual; *sum as
 * in pgs_items. *solved: the sweep was one block alone, solved exactly
 * (block Gauss–Seidel with a single block is a direct solve of the whole
 * problem: a further sweep would change λ by rounding only). */
static double pgs_sweep(const pgs_setup *s, double *sum, bool *solved) {
  double res = 0.0, acc = 0.0;
  *solved = false;
  for (int32_t k = 0; k < s->op_count; ++k) {
    const sweep_op *op = &s->ops[k];
    switch (op->kind) {
    case OP_ITEMS:
      pgs_items(s->items.items + op->begin, op->end - op->begin, s->items.lam, &res, &acc);
      break;
    case OP_BLOCKS:
      for (int32_t b = op->begin; b < op->end; ++b) {
        bool exact = lcp__robot_block_sweep(&s->blocks[b], s->dz, s->items.lam, &res, &acc);
        *solved = exact && s->op_count == 1 && op->end - op->begin == 1;
      }
      break;
    default: /* OP_GROUPS */
      s->sweep_groups(s->groups + op->begin, op->end - op->begin, &res, &acc);
      break;
    }
  }
  *sum = acc;
  return res;
}

/* The relax iterations' targets into the setup: the items' and the
 * units' biases (step·target) and the blocks' targets, from
 * lcp__solver_relax_targets (which reads the impulses of the main
 * iterations, written into the rows first when a row may bounce). */
static int pgs_retarget(solver_problem *p, pgs_setup *s, bool bounces, arena *scratch) {
  double *targets = ARENA_NEW(scratch, double, p->row_count > 0 ? p->row_count : 1);
  if (!targets)
    return LCP_ERR_NO_MEMORY;
  if (bounces) /* only a bounce depends on the impulses */
    pgs_write_impulses(p, s);
  lcp__solver_relax_targets(p, targets);
  for (int32_t k = 0; k < s->items.count; ++k) {
    pgs_item *it = &s->items.items[k];
    it->bias = it->step * targets[it->row];
  }
  for (int32_t k = 0; k < s->block_count; ++k)
    for (int32_t r = 0; r < s->blocks[k].m; ++r)
      s->blocks[k].target[r] = targets[s->blocks[k].first + r];
  for (int32_t k = 0; k < s->group_count; ++k)
    lcp__contact_group_retarget(&s->groups[k], targets);
  s->relax_targets = targets;
  return LCP_OK;
}

/* Up to `iterations` sweeps, fewer when the residual falls below the
 * tolerance or a sweep solved the problem exactly (pgs_sweep: the residual
 * is then 0, the correction a next sweep would make in exact arithmetic).
 * LCP_ERR_NUMERIC as soon as a sweep's sum is not finite. */
static int pgs_iterate(const solver_settings *settings, const pgs_setup *s, int32_t iterations,
                       int32_t *it, double *res) {
  for (int32_t k = 0; s->op_count > 0 && k < iterations; ++k) {
    double sum;
    bool solved;
    *res = pgs_sweep(s, &sum, &solved);
    ++*it;
    if (!isfinite(sum))
      return LCP_ERR_NUMERIC;
    if (solved)
      *res = 0.0;
    if (*res < settings->tolerance)
      break;
  }
  return LCP_OK;
}

int lcp__solver_pgs(const solver_settings *settings, solver_problem *problem, solver_result *result,
                    arena *scratch) {
  lcp__solver_set_result(result, 0, 0.0);
  if (!settings || !problem || !scratch)
    return LCP_ERR_INVALID_ARGUMENT;
  pgs_setup s;
  int rc = pgs_prepare(settings, problem, scratch, &s);
  if (rc != LCP_OK)
    return rc;
  int32_t main_iterations, relax_iterations, it = 0;
  bool bounces;
  lcp__solver_split_iterations(settings, problem, &main_iterations, &relax_iterations, &bounces);
  double res = 0.0;
  rc = pgs_iterate(settings, &s, main_iterations, &it, &res);
  if (rc == LCP_OK && problem->position_velocity)
    memcpy(problem->position_velocity, problem->velocity,
           sizeof(double) * (size_t)problem->dof_count);
  if (rc == LCP_OK && relax_iterations > 0 && s.op_count > 0) {
    rc = pgs_retarget(problem, &s, bounces, scratch);
    if (rc == LCP_OK)
      rc = pgs_iterate(settings, &s, relax_iterations, &it, &res);
  }
  pgs_finish(problem, &s);
  lcp__solver_set_result(result, it, res);
  return rc != LCP_OK ? rc : lcp__solver_check_finite_output(problem);
}
