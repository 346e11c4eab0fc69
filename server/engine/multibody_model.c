/* SPDX-License-Identifier: Apache-2.0 */
/* The multibody model (multibody.h) built from a robot definition, with its
 * checks, and the data a state's algorithms work in (multibody.c). */
#include "multibody_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- model ---- */

static int fail(char *err, size_t err_size, const char *fmt, ...) {
  if (err && err_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
  }
  return LCP_ERR_INVALID_ARGUMENT;
}

static bool all_finite(const double *a, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(a[i]))
      return false;
  return true;
}

/* Symmetric within rounding, and positive definite (strict) or semidefinite:
 * Cholesky pivots, with a tolerance relative to the trace. */
bool lcp__mb_inertia_ok(const double *I, bool strict) {
  double scale = fabs(I[0]) + fabs(I[4]) + fabs(I[8]);
  for (int i = 0; i < 9; ++i)
    scale = fmax(scale, fabs(I[i]));
  if (scale == 0.0)
    return !strict;
  double tol = 1e-9 * scale;
  if (fabs(I[1] - I[3]) > tol || fabs(I[2] - I[6]) > tol || fabs(I[5] - I[7]) > tol)
    return false;
  double a = I[0], b = 0.5 * (I[1] + I[3]), c = 0.5 * (I[2] + I[6]);
  double d = I[4], e = 0.5 * (I[5] + I[7]), f = I[8];
  if (strict) {
    double piv = 1e-12 * scale;
    if (!(a > piv))
      return false;
    double l21 = b / a, l31 = c / a;
    double d2 = d - l21 * b;
    if (!(d2 > piv))
      return false;
    double l32 = (e - l31 * b) / d2;
    double d3 = f - l31 * c - l32 * l32 * d2;
    return d3 > piv;
  }
  /* semidefinite: every principal minor ≥ −tolerance */
  double t2 = tol * scale, t3 = t2 * scale;
  if (a < -tol || d < -tol || f < -tol)
    return false;
  if (a * d - b * b < -t2 || a * f - c * c < -t2 || d * f - e * e < -t2)
    return false;
  double det = a * (d * f - e * e) - b * (b * f - e * c) + c * (b * e - d * c);
  return det >= -t3;
}

int lcp__mb_model_init(mb_model *out, const lcp_robot_def_t *def, char *err, size_t err_size) {
  if (err && err_size > 0)
    err[0] = '\0';
  if (!out)
    return fail(err, err_size, "no model to fill");
  memset(out, 0, sizeof *out);
  if (!def || !def->links || def->link_count < 1)
    return fail(err, err_size, "robot definition without links");
  const int32_t n = def->link_count;
  const int nl = LCP_NAME_MAX;

  for (int32_t i = 0; i < n; ++i) {
    const lcp_link_def_t *L = &def->links[i];
    const char *nm = L->name;
    if (i == 0) {
      if (L->parent != -1)
        return fail(err, err_size, "link 0 '%.*s': the base must have parent -1 (has %d)", nl, nm,
                    (int)L->parent);
    } else {
      if (L->parent == -1)
        return fail(err, err_size,
                    "link %d '%.*s': a second root (parent -1); only link 0 may be a root", (int)i,
                    nl, nm);
      if (L->parent < 0 || L->parent >= i)
        return fail(err, err_size,
                    "link %d '%.*s': parent %d is not an earlier link (parents before children)",
                    (int)i, nl, nm, (int)L->parent);
      if (L->joint_type != LCP_JOINT_FIXED && L->joint_type != LCP_JOINT_REVOLUTE &&
          L->joint_type != LCP_JOINT_CONTINUOUS && L->joint_type != LCP_JOINT_PRISMATIC)
        return fail(err, err_size, "link %d '%.*s': unknown joint type %d", (int)i, nl, nm,
                    (int)L->joint_type);
      if (!all_finite(L->origin_position, 3) || !all_finite(L->origin_orientation, 4))
        return fail(err, err_size, "link %d '%.*s': joint origin is not finite", (int)i, nl, nm);
      if (!(q_norm(q_from(L->origin_orientation)) > 1e-9))
        return fail(err, err_size, "link %d '%.*s': joint origin quaternion is zero", (int)i, nl,
                    nm);
      const double lim[6] = {L->lower,          L->upper,   L->effort_limit,
                             L->velocity_limit, L->damping, L->friction};
      for (int k = 0; k < 6; ++k)
        if (isnan(lim[k]))
          return fail(err, err_size, "link %d '%.*s': NaN in the joint limits or gains", (int)i, nl,
                      nm);
      if (L->joint_type != LCP_JOINT_FIXED) {
        if (!all_finite(L->axis, 3))
          return fail(err, err_size, "link %d '%.*s': joint axis is not finite", (int)i, nl, nm);
        if (!(v3_len(v3_from(L->axis)) > 1e-9))
          return fail(err, err_size, "link %d '%.*s': zero joint axis", (int)i, nl, nm);
      }
    }
    /* The floating base moves like a movable link; a fixed base does not move. */
    bool movable = i == 0 ? def->floating_base : L->joint_type != LCP_JOINT_FIXED;
    if (!isfinite(L->mass) || !all_finite(L->com, 3) || !all_finite(L->inertia, 9))
      return fail(err, err_size, "link %d '%.*s': mass, centre of mass or inertia not finite",
                  (int)i, nl, nm);
    if (movable && !(L->mass > 0.0))
      return fail(err, err_size,
                  "link %d '%.*s': mass %g must be > 0 on a moving link (a massless link must be "
                  "fixed to its parent)",
                  (int)i, nl, nm, L->mass);
    if (L->mass < 0.0)
      return fail(err, err_size, "link %d '%.*s': negative mass %g", (int)i, nl, nm, L->mass);
    if (!lcp__mb_inertia_ok(L->inertia, movable))
      return fail(err, err_size, "link %d '%.*s': inertia is not symmetric positive %s", (int)i, nl,
                  nm, movable ? "definite" : "semidefinite");
  }

  mb_link *links = calloc((size_t)n, sizeof *links);
  if (!links)
    return LCP_ERR_NO_MEMORY;
  int32_t joints = 0;
  const int32_t q0 = def->floating_base ? 7 : 0, v0 = def->floating_base ? 6 : 0;
  for (int32_t i = 0; i < n; ++i) {
    const lcp_link_def_t *L = &def->links[i];
    mb_link *k = &links[i];
    k->parent = i == 0 ? -1 : L->parent;
    k->joint_type = i == 0 ? LCP_JOINT_FIXED : L->joint_type;
    /* Link 0: the world pose of a fixed base (identity until the owner sets it). */
    k->parent_from_joint =
        i == 0 ? xf_identity()
               : xf_make(v3_from(L->origin_position), q_normalize(q_from(L->origin_orientation)));
    k->axis = v3(0.0, 0.0, 1.0);
    if (i > 0 && L->joint_type != LCP_JOINT_FIXED)
      v3_normalize(v3_from(L->axis), &k->axis, 0.0);
    k->mass = L->mass;
    k->com = v3_from(L->com);
    mat3 I = m3_from(L->inertia), It = m3_transpose(&I);
    k->inertia = m3_add(&I, &It);
    k->inertia = m3_scale(&k->inertia, 0.5); /* exactly symmetric */
    if (i > 0 && L->joint_type != LCP_JOINT_FIXED) {
      k->q_index = q0 + joints;
      k->v_index = v0 + joints;
      ++joints;
    } else {
      k->q_index = -1;
      k->v_index = -1;
    }
  }
  out->floating = def->floating_base;
  out->link_count = n;
  out->joint_count = joints;
  out->nq = q0 + joints;
  out->nv = v0 + joints;
  out->links = links;
  return LCP_OK;
}

void lcp__mb_model_free(mb_model *m) {
  if (!m)
    return;
  free(m->links);
  memset(m, 0, sizeof *m);
}

/* ---- data ---- */

int lcp__mb_data_init(mb_data *d, const mb_model *m) {
  if (!d || !m || m->link_count < 1 || !m->links)
    return LCP_ERR_INVALID_ARGUMENT;
  memset(d, 0, sizeof *d);
  const size_t n = (size_t)m->link_count, nd = (size_t)m->joint_count;
  /* One block: header, per-link and per-dof workspaces (cache-line aligned). */
  const size_t off_lw = (sizeof(mb_work) + 63) & ~(size_t)63;
  const size_t off_dof = (off_lw + n * sizeof(mb_lw) + 63) & ~(size_t)63;
  const size_t off_ru = (off_dof + (nd + 1) * sizeof(mb_dof) + 63) & ~(size_t)63;
  const size_t off_ra = (off_ru + (nd + 1) * RESPONSE_MAX * sizeof(double) + 63) & ~(size_t)63;
  const size_t size = (off_ra + (nd + 1) * RESPONSE_MAX * sizeof(sv) + 63) & ~(size_t)63;
  unsigned char *block = aligned_alloc(64, size);
  d->link_x = calloc(n, sizeof(xform));
  d->link_v = calloc(n, sizeof(vec3));
  d->link_w = calloc(n, sizeof(vec3));
  if (!block || !d->link_x || !d->link_v || !d->link_w) {
    free(block);
    lcp__mb_data_free(d);
    return LCP_ERR_NO_MEMORY;
  }
  memset(block, 0, size);
  mb_work *w = (mb_work *)(void *)block;
  w->lw = (mb_lw *)(void *)(block + off_lw);
  w->dof = (mb_dof *)(void *)(block + off_dof);
  w->ru_n = (double(*)[RESPONSE_MAX])(void *)(block + off_ru);
  w->ra_n = (sv(*)[RESPONSE_MAX])(void *)(block + off_ra);
  w->ndof = m->joint_count;
  w->v0 = m->floating ? 6 : 0;
  for (size_t i = 0; i < n; ++i) {
    const mb_link *L = &m->links[i];
    mb_lw *k = &w->lw[i];
    k->parent = L->parent;
    const int32_t up = i == 0 ? -1 : w->lw[L->parent].mdof;
    if (i > 0 && L->v_index >= 0) {
      const int32_t j = L->v_index - w->v0;
      mb_dof *f = &w->dof[j];
      f->link = (int32_t)i;
      f->parent = up;
      f->gparent = up >= 0 ? w->dof[up].parent : -1;
      k->dof = k->mdof = j;
    } else {
      k->dof = -1;
      k->mdof = up;
    }
    d->link_x[i] = xf_identity();
  }
  d->work = block;
  d->work_size = size;
  return LCP_OK;
}

void lcp__mb_data_free(mb_data *d) {
  if (!d)
    return;
  free(d->link_x);
  free(d->link_v);
  free(d->link_w);
  free(d->work);
  memset(d, 0, sizeof *d);
}
