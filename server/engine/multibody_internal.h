/* SPDX-License-Identifier: Apache-2.0 */
/* The multibody kernel's spatial algebra and workspace, shared by the
 * algorithms (multibody.c) and the model and data setup (multibody_model.c).
 * Conventions: multibody.c. */
#ifndef LCP_MULTIBODY_INTERNAL_H
#define LCP_MULTIBODY_INTERNAL_H

#include "multibody.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- spatial algebra ---- */

/* The helpers below must inline: returned through memory, a 48-byte spatial
 * vector costs more than its arithmetic. */
#if defined(__GNUC__)
#define MB_INLINE static inline __attribute__((always_inline))
#else
#define MB_INLINE static inline
#endif

typedef struct sv {
  vec3 l, a; /* linear, angular */
} sv;

/* 3×3 matrix as rows */
typedef struct blk {
  vec3 x, y, z;
} blk;

/* symmetric 3×3 */
typedef struct sym3 {
  double xx, yy, zz, xy, xz, yz;
} sym3;

/* Symmetric 6×6 [[A, B], [Bᵀ, C]]. */
typedef struct sm {
  sym3 A;
  blk B;
  sym3 C;
} sm;

/* Rigid-body spatial inertia about O: mass, first moment h = m c, rotational
 * inertia Ī about O. */
typedef struct rigid6 {
  double m;
  vec3 h;
  sym3 I;
} rigid6;

static const sv sv_zero = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};

MB_INLINE sv sv_add(sv x, sv y) { return (sv){v3_add(x.l, y.l), v3_add(x.a, y.a)}; }
MB_INLINE sv sv_sub(sv x, sv y) { return (sv){v3_sub(x.l, y.l), v3_sub(x.a, y.a)}; }
MB_INLINE sv sv_scale(sv x, double s) { return (sv){v3_scale(x.l, s), v3_scale(x.a, s)}; }
/* x + s y */
MB_INLINE sv sv_madd(sv x, sv y, double s) {
  return (sv){v3_madd(x.l, y.l, s), v3_madd(x.a, y.a, s)};
}
MB_INLINE double sv_dot(sv x, sv y) { return v3_dot(x.l, y.l) + v3_dot(x.a, y.a); }
/* v × m */
MB_INLINE sv sv_crm(sv v, sv m) {
  return (sv){v3_add(v3_cross(v.a, m.l), v3_cross(v.l, m.a)), v3_cross(v.a, m.a)};
}
/* v ×* f */
MB_INLINE sv sv_crf(sv v, sv f) {
  return (sv){v3_cross(v.a, f.l), v3_add(v3_cross(v.a, f.a), v3_cross(v.l, f.l))};
}
MB_INLINE sv sv_load(const double *p) { return (sv){{p[0], p[1], p[2]}, {p[3], p[4], p[5]}}; }
MB_INLINE void sv_store(sv x, double *p) {
  p[0] = x.l.x;
  p[1] = x.l.y;
  p[2] = x.l.z;
  p[3] = x.a.x;
  p[4] = x.a.y;
  p[5] = x.a.z;
}

MB_INLINE vec3 sym3_mulv(const sym3 *a, vec3 v) {
  return (vec3){a->xx * v.x + a->xy * v.y + a->xz * v.z, a->xy * v.x + a->yy * v.y + a->yz * v.z,
                a->xz * v.x + a->yz * v.y + a->zz * v.z};
}
/* p += a − s u uᵀ */
MB_INLINE void sym3_acc_rank1(sym3 *p, const sym3 *a, vec3 u, double s) {
  const vec3 su = v3_scale(u, s);
  p->xx += a->xx - su.x * u.x;
  p->yy += a->yy - su.y * u.y;
  p->zz += a->zz - su.z * u.z;
  p->xy += a->xy - su.x * u.y;
  p->xz += a->xz - su.x * u.z;
  p->yz += a->yz - su.y * u.z;
}
MB_INLINE void sym3_acc(sym3 *p, const sym3 *a) {
  p->xx += a->xx;
  p->yy += a->yy;
  p->zz += a->zz;
  p->xy += a->xy;
  p->xz += a->xz;
  p->yz += a->yz;
}

MB_INLINE vec3 blk_mulv(const blk *b, vec3 v) {
  return (vec3){v3_dot(b->x, v), v3_dot(b->y, v), v3_dot(b->z, v)};
}
/* bᵀ v */
MB_INLINE vec3 blk_tmulv(const blk *b, vec3 v) {
  return v3_add(v3_add(v3_scale(b->x, v.x), v3_scale(b->y, v.y)), v3_scale(b->z, v.z));
}
/* p += b − s u wᵀ (row by row) */
MB_INLINE void blk_acc_rank1(blk *p, const blk *b, vec3 u, vec3 w, double s) {
  p->x = v3_add(p->x, v3_madd(b->x, w, -s * u.x));
  p->y = v3_add(p->y, v3_madd(b->y, w, -s * u.y));
  p->z = v3_add(p->z, v3_madd(b->z, w, -s * u.z));
}
MB_INLINE void blk_acc(blk *p, const blk *b) {
  p->x = v3_add(p->x, b->x);
  p->y = v3_add(p->y, b->y);
  p->z = v3_add(p->z, b->z);
}

MB_INLINE sv sm_apply(const sm *M, sv s) {
  return (sv){v3_add(sym3_mulv(&M->A, s.l), blk_mulv(&M->B, s.a)),
              v3_add(blk_tmulv(&M->B, s.l), sym3_mulv(&M->C, s.a))};
}

/* I v */
MB_INLINE sv rigid_apply(const rigid6 *I, sv v) {
  return (sv){v3_add(v3_scale(v.l, I->m), v3_cross(v.a, I->h)),
              v3_add(v3_cross(I->h, v.l), sym3_mulv(&I->I, v.a))};
}

MB_INLINE void rigid_add(rigid6 *a, const rigid6 *b) {
  a->m += b->m;
  a->h = v3_add(a->h, b->h);
  sym3_acc(&a->I, &b->I);
}

/* The block matrix of a rigid inertia: A = m E, B = −[h]×, C = Ī. */
MB_INLINE void sm_from_rigid(sm *M, const rigid6 *I) {
  const double m = I->m;
  const vec3 h = I->h;
  M->A = (sym3){m, m, m, 0.0, 0.0, 0.0};
  M->B = (blk){{0.0, h.z, -h.y}, {-h.z, 0.0, h.x}, {h.y, -h.x, 0.0}};
  M->C = I->I;
}

/* The rigid inertia of a link about O in world axes from its pose. */
MB_INLINE void rigid_world(const mb_link *L, const mat3 *R, vec3 pos, vec3 O, rigid6 *out) {
  const double m = L->mass;
  if (m == 0.0) { /* a massless frame: nothing to rotate */
    *out = (rigid6){0.0, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}};
    return;
  }
  const vec3 c = v3_add(m3_mulv(R, L->com), v3_sub(pos, O));
  const vec3 i0 = m3_row(&L->inertia, 0), i1 = m3_row(&L->inertia, 1), i2 = m3_row(&L->inertia, 2);
  const vec3 r0 = m3_row(R, 0), r1 = m3_row(R, 1), r2 = m3_row(R, 2);
  /* T = R I_c (rows), then R I_c Rᵀ = rows of T dotted with rows of R */
  const vec3 t0 = v3_add(v3_add(v3_scale(i0, r0.x), v3_scale(i1, r0.y)), v3_scale(i2, r0.z));
  const vec3 t1 = v3_add(v3_add(v3_scale(i0, r1.x), v3_scale(i1, r1.y)), v3_scale(i2, r1.z));
  const vec3 t2 = v3_add(v3_add(v3_scale(i0, r2.x), v3_scale(i1, r2.y)), v3_scale(i2, r2.z));
  /* parallel axes: + m (|c|² E − c cᵀ) */
  const vec3 h = v3_scale(c, m);
  out->m = m;
  out->h = h;
  out->I = (sym3){v3_dot(t0, r0) + h.y * c.y + h.z * c.z,
                  v3_dot(t1, r1) + h.x * c.x + h.z * c.z,
                  v3_dot(t2, r2) + h.x * c.x + h.y * c.y,
                  v3_dot(t0, r1) - h.x * c.y,
                  v3_dot(t0, r2) - h.x * c.z,
                  v3_dot(t1, r2) - h.y * c.z};
}

/* Per-link workspace. */
typedef struct mb_lw {
  int32_t parent;
  int32_t dof;  /* this link's joint dof (v_index less the base's 6), −1 for none */
  int32_t mdof; /* the nearest dof at or above this link, −1 for none (the root) */
  int32_t pad;
  /* kinematics */
  sv v; /* spatial velocity */
  sv b; /* bias acceleration: a at q̈ = 0, still base, no gravity (Σ v × S q̇) */
  rigid6 I;
  /* articulated-body pass */
  sm IA;
  sv pA;
  /* Newton–Euler and composite-rigid-body scratch */
  sv ra;
  sv f;
  rigid6 Ic;
} mb_lw;

/* Per-dof workspace (movable joints only, in link order, so parents come
 * first): the joint factors of the last articulated-body pass, which is all
 * the impulse responses read, packed densely so that fixed links drop out of
 * those passes. */
typedef struct mb_dof {
  sv S;            /* motion subspace (world, about O) */
  sv U;            /* I^A S */
  sv UD;           /* U / D */
  sv ra;           /* acceleration (ã) or velocity change of the forward passes */
  double Dinv;     /* 1 / (Sᵀ I^A S) */
  double mu;       /* U·S_parent: how the parent dof's motion loads this joint */
  double sigma;    /* S_parent·U/D = mu/D: how this joint's u loads the parent dof */
  double u;        /* τ − Sᵀp^A of the articulated-body pass */
  double ru;       /* u of a test impulse; zero between calls */
  double x;        /* the dof's result in the forward passes */
  int32_t parent;  /* parent dof, −1 for the root */
  int32_t gparent; /* the parent dof's parent, −1 for the root */
  int32_t link;
  int32_t pad;
} mb_dof;

/* The most impulses whose responses are found in one pass. */
enum { RESPONSE_MAX = 4 };

typedef struct mb_work {
  vec3 origin;  /* O: the base origin of the last lcp__mb_kinematics */
  sm root_inv;  /* inverse of the root's articulated inertia (floating base) */
  sv root_ra;   /* the root's ã or velocity change in the forward passes */
  int32_t ndof; /* movable joints */
  int32_t v0;   /* velocity index of dof 0: 6 for a floating base, else 0 */
  mb_lw *lw;
  mb_dof *dof;
  double (*ru_n)[RESPONSE_MAX]; /* [ndof] per-impulse u of the responses to several impulses */
  sv (*ra_n)[RESPONSE_MAX];     /* [ndof] per-impulse velocity change of the same */
} mb_work;

#endif
