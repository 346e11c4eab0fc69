/* SPDX-License-Identifier: Apache-2.0 */
/* Featherstone multibody kernel (multibody.h): the recursive algorithms.
 * The spatial algebra and the workspace are in multibody_internal.h, the
 * model's checks and the data's allocation in multibody_model.c.
 *
 * Representation. Every spatial quantity is kept in world axes about one
 * reference point O, the base origin of the current state ("absolute
 * coordinates": Featherstone, Rigid Body Dynamics Algorithms (RBDA) section 2.9 and
 * the efficiency discussion of chapter 10). In a single frame the
 * parent-to-child transforms of the recursions are the identity, so
 * articulated inertias, bias forces and accelerations pass between links by
 * plain addition: no 6×6 coordinate transforms at all, which is what makes the
 * passes cheap. The price is rotating each link's inertia into world axes once
 * per kinematics pass. O is the base origin rather than the world origin so
 * that moments stay small (and accurate) when a robot is far from the origin.
 *
 * Spatial vectors are linear first: a motion vector is
 * [v_O; ω] (v_O the velocity of the body-fixed point at O), a force vector is
 * [f; n_O] (n_O the moment about O). Cross products in that order:
 *   v ×  m = [ω × m_v + v × m_ω ; ω × m_ω]
 *   v ×* f = [ω × f ; ω × n + v × f]
 * A rigid inertia about O is (m, h = m c, Ī = I_c + m(|c|²E − c cᵀ)), with c
 * the centre of mass relative to O:  I v = [m v + ω × h ; h × v + Ī ω].
 *
 * Gravity enters as a fictitious acceleration of the base, a₀' = a₀ − a_g
 * with a_g = [g; 0] (RBDA section 5.3), so no link carries a gravity force.
 *
 * Floating base. Its coordinates are the world velocity of the base origin and
 * the world angular velocity; with O at the base origin that is exactly the
 * base's spatial velocity, so its motion subspace is the 6×6 identity. The
 * spatial acceleration at a fixed point differs from the derivative of the
 * classical velocity of the moving base origin by ω × v (RBDA section 2.11), which is
 * applied where base accelerations enter or leave the algorithms.
 *
 * Fixed joints carry no dof: in the recursions a fixed child's articulated
 * inertia and bias are added to its parent unprojected and it takes its
 * parent's acceleration.
 *
 * Speed. The hot loops work on small value types (a spatial vector is two
 * vec3, a 6×6 block matrix three 3×3 blocks, the diagonal ones stored
 * symmetric) written out without inner loops, so that the compiler keeps them
 * in registers. The articulated-body pass uses the bias-acceleration form
 * (see below), which needs no I^a c product. The joint factors that the
 * impulse responses read (S, U, U/D, 1/D) are packed per dof, so fixed links
 * drop out of those passes, and the responses, which are latency-bound
 * chains from one dof to the next, form their 6-term dot products one level
 * ahead (mu, sigma below). The floating root keeps its inverse articulated
 * inertia, so the root step of a response is one product, not a chain of
 * divisions.
 *
 * Contract details (multibody.h):
 *  - A fixed base sits at links[0].parent_from_joint, its world pose
 *    (identity after lcp__mb_model_init; the owner sets it). For a floating base
 *    that field is unused: q holds the pose.
 *  - lcp__mb_kinematics accepts qd = NULL (zero velocities).
 *  - lcp__mb_forward_dynamics, lcp__mb_mass_matrix and lcp__mb_inverse_dynamics run the
 *    kinematics themselves (lcp__mb_mass_matrix with zero velocities), so d holds
 *    their state afterwards. lcp__mb_mass_matrix and lcp__mb_inverse_dynamics leave the
 *    factors of the last lcp__mb_forward_dynamics alone: responses stay valid for
 *    that q.
 *  - lcp__mb_model_init accepts massless links on fixed joints (their inertia
 *    must be positive semidefinite); a moving link, the floating base
 *    included, needs mass > 0 and a positive definite inertia. */
#include "multibody_internal.h"

#include <string.h>

/* ---- kinematics (RBDA section 4.1, in absolute coordinates) ---- */

/* Poses, motion subspaces, velocities, bias accelerations and world inertias,
 * root to leaves. With aba set, also the first pass of the articulated-body
 * algorithm, fused here while the link's inertia and velocities are at hand. */
/* poses_only: the link poses and velocities (link_x, link_v, link_w) and
 * nothing else, for queries of a state; the world inertias, motion subspaces
 * and bias accelerations, which only the kernel's other passes read (each
 * after a pass of its own), are left as they were. */
MB_INLINE void kinematics_pass(const mb_model *restrict m, const double *restrict q,
                               const double *restrict qd, mb_data *restrict d, bool aba,
                               const double *restrict link_wrench, bool poses_only) {
  mb_work *w = d->work;
  mb_lw *restrict lw = w->lw;
  mb_dof *restrict dof = w->dof;
  xform *restrict Xs = d->link_x;
  const mb_link *restrict links = m->links;
  const int32_t n = m->link_count;

  if (m->floating) {
    const quat r = q_normalize(q_from(q + 3));
    Xs[0] = (xform){v3_from(q), r, q_to_mat3(r)};
  } else {
    Xs[0] = links[0].parent_from_joint;
  }
  const vec3 O = Xs[0].p;
  w->origin = O;
  mb_lw *b = &lw[0];
  b->b = sv_zero;
  b->v = (m->floating && qd) ? sv_load(qd) : sv_zero;
  /* with O at the base origin the base's spatial linear velocity is its origin's */
  d->link_v[0] = b->v.l;
  d->link_w[0] = b->v.a;
  if (!poses_only)
    rigid_world(&links[0], &Xs[0].R, O, O, &b->I);
  if (aba && m->floating) {
    sv pA = sv_crf(b->v, rigid_apply(&b->I, b->v));
    if (link_wrench)
      pA = sv_sub(pA, sv_load(link_wrench)); /* the base origin is O */
    b->pA = pA;
    sm_from_rigid(&b->IA, &b->I);
  }

  for (int32_t i = 1; i < n; ++i) {
    const mb_link *L = &links[i];
    mb_lw *k = &lw[i];
    const mb_lw *P = &lw[L->parent];
    const xform *Xp = &Xs[L->parent];
    const xform *J = &L->parent_from_joint;
    /* joint frame in world, then the link frame moved by the joint value */
    quat r = q_mul(Xp->q, J->q);
    vec3 pos = xf_point(Xp, J->p);
    const lcp_joint_type_t type = L->joint_type;
    const double qi = L->q_index >= 0 ? q[L->q_index] : 0.0;
    if (type == LCP_JOINT_REVOLUTE || type == LCP_JOINT_CONTINUOUS) {
      const double s = sin(0.5 * qi), cs = cos(0.5 * qi);
      r = q_mul(r, (quat){cs, L->axis.x * s, L->axis.y * s, L->axis.z * s});
    }
    const mat3 R = q_to_mat3(r);
    sv v = P->v, bias = P->b;
    if (k->dof >= 0) {
      /* the axis is the same in the joint and the link frame */
      const vec3 a = m3_mulv(&R, L->axis);
      sv S;
      if (type == LCP_JOINT_PRISMATIC) {
        pos = v3_madd(pos, a, qi);
        S = (sv){a, v3_zero()};
      } else { /* rotation about the line through pos: v_O = (pos − O) × a */
        S = (sv){v3_cross(v3_sub(pos, O), a), a};
      }
      const sv vj = sv_scale(S, qd ? qd[L->v_index] : 0.0);
      if (!poses_only) {
        dof[k->dof].S = S;
        /* Ṡ q̇ = v × S q̇ for an axis fixed in the link (RBDA section 2.10); the
         * parent's velocity gives the same product since S × S = 0 */
        bias = sv_add(bias, sv_crm(v, vj));
      }
      v = sv_add(v, vj);
    }
    xform *X = &Xs[i];
    X->p = pos;
    X->q = r;
    X->R = R;
    k->v = v;
    d->link_w[i] = v.a;
    d->link_v[i] = v3_add(v.l, v3_cross(v.a, v3_sub(pos, O)));
    if (poses_only)
      continue;
    k->b = bias;
    rigid_world(L, &R, pos, O, &k->I);
    if (aba) {
      /* the force this link needs at q̈ = 0: I b + v ×* I v − f_ext */
      sv pA = sv_add(rigid_apply(&k->I, bias), sv_crf(v, rigid_apply(&k->I, v)));
      if (link_wrench) {
        const double *fw = link_wrench + 6 * i;
        const vec3 f = v3_from(fw);
        /* torque about the link origin moved to O */
        const vec3 t = v3_add(v3_from(fw + 3), v3_cross(v3_sub(pos, O), f));
        pA = sv_sub(pA, (sv){f, t});
      }
      k->pA = pA;
      sm_from_rigid(&k->IA, &k->I);
    }
  }
}

void lcp__mb_kinematics(const mb_model *m, const double *q, const double *qd, mb_data *d) {
  kinematics_pass(m, q, qd, d, false, NULL, false);
}

void lcp__mb_link_kinematics(const mb_model *m, const double *q, const double *qd, mb_data *d) {
  kinematics_pass(m, q, qd, d, false, NULL, true);
}

/* ---- articulated-body algorithm (RBDA section 7.3) ----
 *
 * Bias-acceleration form. Let b_i be the acceleration link i would have with
 * all q̈ = 0 and a still base (the sum of the velocity products v × S q̇ from
 * the root), and ã_i = a_i' − b_i the rest, so ã_i = ã_parent + S_i q̈_i with
 * no velocity term. Link i's equation f_i = I_i a_i' + v ×* I v − f_ext
 * becomes f_i = I_i ã_i + p_i with p_i = I_i b_i + v ×* I v − f_ext: the
 * articulated-body recursion for ã has no velocity-product term, so the
 * backward pass needs no I^a c product, and its forward pass is the one of
 * the impulse responses. */

/* Cholesky of a 6×6 SPD matrix: lower factor in L (row-major, upper zero). */
static void chol6(const double *A, double *L) {
  for (int j = 0; j < 6; ++j) {
    double s = A[j * 6 + j];
    for (int k = 0; k < j; ++k)
      s -= L[j * 6 + k] * L[j * 6 + k];
    const double djj = sqrt(s), inv = 1.0 / djj;
    L[j * 6 + j] = djj;
    for (int i = j + 1; i < 6; ++i) {
      double t = A[i * 6 + j];
      for (int k = 0; k < j; ++k)
        t -= L[i * 6 + k] * L[j * 6 + k];
      L[i * 6 + j] = t * inv;
      L[j * 6 + i] = 0.0;
    }
  }
}

/* The inverse of an SPD 6×6 matrix from its Cholesky factor, L⁻ᵀ L⁻¹, as a
 * symmetric block matrix: the root's velocity change from a bias is then one
 * matrix-vector product with independent rows (a triangular solve is a chain
 * of divisions, and the responses call it every time). */
static void chol6_inverse(const double *L, sm *out) {
  double Li[36] = {0}, X[36];
  for (int j = 0; j < 6; ++j) { /* columns of L⁻¹ by forward substitution */
    for (int i = j; i < 6; ++i) {
      double s = i == j ? 1.0 : 0.0;
      for (int k = j; k < i; ++k)
        s -= L[i * 6 + k] * Li[k * 6 + j];
      Li[i * 6 + j] = s / L[i * 6 + i];
    }
  }
  for (int i = 0; i < 6; ++i) /* X = L⁻ᵀ L⁻¹ */
    for (int j = 0; j < 6; ++j) {
      double s = 0.0;
      for (int k = i > j ? i : j; k < 6; ++k)
        s += Li[k * 6 + i] * Li[k * 6 + j];
      X[i * 6 + j] = s;
    }
  out->A = (sym3){X[0], X[7], X[14], X[1], X[2], X[8]};
  out->B = (blk){{X[3], X[4], X[5]}, {X[9], X[10], X[11]}, {X[15], X[16], X[17]}};
  out->C = (sym3){X[21], X[28], X[35], X[22], X[23], X[29]};
}

static void sm_to_array(const sm *M, double *A) {
  const sym3 *a = &M->A, *c = &M->C;
  const blk *b = &M->B;
  /* clang-format off */
  const double r[36] = {a->xx,  a->xy,  a->xz,  b->x.x, b->x.y, b->x.z,
                        a->xy,  a->yy,  a->yz,  b->y.x, b->y.y, b->y.z,
                        a->xz,  a->yz,  a->zz,  b->z.x, b->z.y, b->z.z,
                        b->x.x, b->y.x, b->z.x, c->xx,  c->xy,  c->xz,
                        b->x.y, b->y.y, b->z.y, c->xy,  c->yy,  c->yz,
                        b->x.z, b->y.z, b->z.z, c->xz,  c->yz,  c->zz};
  /* clang-format on */
  memcpy(A, r, sizeof r);
}

/* The forward pass shared by the articulated-body algorithm (u = τ − Sᵀp^A)
 * and the impulse responses (u = ru): from the root's ra, each dof's
 *   x = (u − U·ra_parent)/D,   ra = ra_parent + S x.
 * U·ra_parent = U·ra_grandparent + mu·x_parent, so the 6-term dot product
 * waits on the grandparent, not the parent, and the chain from one dof to the
 * next is a multiply and a subtract (this pass is latency-bound otherwise).
 * Writes x into out[v0 + j]. */
MB_INLINE void forward_dofs(mb_work *restrict w, bool impulse, double *restrict out) {
  mb_dof *restrict dof = w->dof;
  const int32_t nd = w->ndof;
  const sv root = w->root_ra;
  out += w->v0;
  for (int32_t j = 0; j < nd; ++j) {
    mb_dof *f = &dof[j];
    const int32_t p = f->parent;
    double u;
    if (impulse) {
      u = f->ru;
      f->ru = 0.0; /* leave the workspace clean for the next call */
    } else {
      u = f->u;
    }
    double x;
    sv ap;
    if (p < 0) {
      ap = root;
      x = f->Dinv * (u - sv_dot(f->U, ap));
    } else {
      const mb_dof *pf = &dof[p];
      const sv agp = f->gparent < 0 ? root : dof[f->gparent].ra;
      x = f->Dinv * (u - sv_dot(f->U, agp) - f->mu * pf->x);
      ap = pf->ra;
    }
    f->x = x;
    f->ra = sv_madd(ap, f->S, x);
    out[j] = x;
  }
}

void lcp__mb_forward_dynamics(const mb_model *m, const double *q, const double *qd,
                              const double *tau, const double *link_wrench, vec3 gravity,
                              mb_data *d, double *qdd) {
  kinematics_pass(m, q, qd, d, true, link_wrench, false);
  mb_work *w = d->work;
  mb_lw *restrict lw = w->lw;
  mb_dof *restrict dof = w->dof;
  const int32_t n = m->link_count;
  const bool floating = m->floating;

  /* Pass 2, leaves to root: project out each joint's dof and hand the rest
   * of the articulated inertia and bias to the parent (one frame: no
   * transforms). A fixed base receives nothing: its acceleration is known. */
  for (int32_t i = n - 1; i >= 1; --i) {
    mb_lw *k = &lw[i];
    const int32_t p = k->parent;
    const bool to_parent = floating || p != 0;
    mb_lw *P = &lw[p];
    if (k->dof >= 0) {
      mb_dof *f = &dof[k->dof];
      const sv S = f->S;
      const sv U = sm_apply(&k->IA, S);
      const double Dinv = 1.0 / sv_dot(S, U);
      const double u = (tau ? tau[w->v0 + k->dof] : 0.0) - sv_dot(S, k->pA);
      const sv UD = sv_scale(U, Dinv);
      f->U = U;
      f->UD = UD;
      f->Dinv = Dinv;
      f->u = u;
      f->mu = f->parent >= 0 ? sv_dot(U, dof[f->parent].S) : 0.0;
      f->sigma = f->mu * Dinv;
      if (to_parent) {
        /* I^a = I^A − U Uᵀ/D,  p^a = p^A + U u/D */
        P->pA = sv_add(P->pA, sv_madd(k->pA, UD, u));
        sym3_acc_rank1(&P->IA.A, &k->IA.A, U.l, Dinv);
        blk_acc_rank1(&P->IA.B, &k->IA.B, U.l, U.a, Dinv);
        sym3_acc_rank1(&P->IA.C, &k->IA.C, U.a, Dinv);
      }
    } else if (to_parent) {
      P->pA = sv_add(P->pA, k->pA);
      sym3_acc(&P->IA.A, &k->IA.A);
      blk_acc(&P->IA.B, &k->IA.B);
      sym3_acc(&P->IA.C, &k->IA.C);
    }
  }

  /* Pass 3, root to leaves: ã, and q̈. */
  if (floating) {
    sv pA = lw[0].pA;
    if (tau)
      pA = sv_sub(pA, sv_load(tau)); /* the base wrench is a force on the root */
    double A[36], L[36];
    sm_to_array(&lw[0].IA, A);
    chol6(A, L);
    chol6_inverse(L, &w->root_inv);
    const sv a0 = sv_scale(sm_apply(&w->root_inv, pA), -1.0); /* b₀ = 0: a₀ − a_g */
    w->root_ra = a0;
    /* back to the classical acceleration of the base origin */
    const sv v0 = lw[0].v;
    v3_store(v3_add(v3_add(a0.l, gravity), v3_cross(v0.a, v0.l)), qdd);
    v3_store(a0.a, qdd + 3);
  } else {
    w->root_ra = (sv){v3_neg(gravity), v3_zero()};
  }
  forward_dofs(w, false, qdd);
}

/* ---- Jacobian rows and responses ---- */

/* The spatial force about O of a unit impulse: linear dir at point, angular ang_dir. */
MB_INLINE sv impulse_force(vec3 O, vec3 point, vec3 dir, vec3 ang_dir) {
  return (sv){dir, v3_add(v3_cross(v3_sub(point, O), dir), ang_dir)};
}

void lcp__mb_point_jacobian_row(const mb_model *m, const mb_data *d, int32_t link, vec3 point,
                                vec3 dir, vec3 ang_dir, double *J) {
  const mb_work *w = d->work;
  const mb_dof *dof = w->dof;
  const sv f = impulse_force(w->origin, point, dir, ang_dir);
  memset(J, 0, (size_t)m->nv * sizeof(double));
  /* J_j = S_jᵀ f: the power of the unit impulse per unit rate of joint j */
  for (int32_t j = w->lw[link].mdof; j >= 0; j = dof[j].parent)
    J[w->v0 + j] = sv_dot(dof[j].S, f);
  if (m->floating)
    sv_store(f, J);
}

/* Test-impulse passes: the articulated-body algorithm with zero velocity,
 * zero gravity and no load but the impulse (RBDA section 7.3). With no velocity terms and no other
 * loads only the dofs from the loaded link to the root see a bias, so the backward pass walks that
 * path alone, reusing U and D of the last forward dynamics; the forward pass then spreads the
 * velocity change over the whole tree. p is the bias entering dof j (with its own load); ru of j
 * may hold a joint impulse. As in the forward pass, S_parent·p is formed from the p before this
 * dof's contribution, plus sigma·u, so the dot product is off the critical path. */
static void response_pass(const mb_model *m, mb_data *d, int32_t j, sv p, double *dqd) {
  mb_work *w = d->work;
  mb_dof *restrict dof = w->dof;
  if (j >= 0) {
    double sp = sv_dot(dof[j].S, p);
    for (;;) {
      mb_dof *f = &dof[j];
      /* u = ru − Sᵀp;  p^a = p + U u/D */
      const double u = f->ru - sp;
      f->ru = u;
      const int32_t pj = f->parent;
      if (pj >= 0)
        sp = sv_dot(dof[pj].S, p) + f->sigma * u;
      p = sv_madd(p, f->UD, u);
      if (pj < 0)
        break;
      j = pj;
    }
  }
  if (m->floating) {
    w->root_ra = sv_scale(sm_apply(&w->root_inv, p), -1.0);
    sv_store(w->root_ra, dqd); /* an impulse: no ω × v term */
  } else {
    w->root_ra = sv_zero;
  }
  forward_dofs(w, true, dqd);
}

void lcp__mb_response_point(const mb_model *m, mb_data *d, int32_t link, vec3 point, vec3 dir,
                            vec3 ang_dir, double *dqd) {
  const mb_work *w = d->work;
  /* an applied force enters the bias with a minus sign */
  const sv f = impulse_force(w->origin, point, dir, ang_dir);
  response_pass(m, d, w->lw[link].mdof, sv_scale(f, -1.0), dqd);
}

/* The same two passes as response_pass, for `count` (≤ RESPONSE_MAX)
 * impulses p[k] on link at once, the responses at dqd + k nv: the chains
 * are independent, so they overlap in the pipeline. */
static inline void response_impulses(const mb_model *m, mb_data *d, int32_t link, sv *p,
                                     const int count, double *dqd) {
  mb_work *w = d->work;
  const mb_dof *restrict dof = w->dof;
  const int32_t nd = w->ndof, nv = m->nv;
  double(*restrict ru)[RESPONSE_MAX] = w->ru_n;
  sv(*restrict ra)[RESPONSE_MAX] = w->ra_n;
  for (int32_t j = 0; j < nd; ++j)
    for (int k = 0; k < count; ++k)
      ru[j][k] = 0.0;
  for (int32_t j = w->lw[link].mdof; j >= 0; j = dof[j].parent)
    for (int k = 0; k < count; ++k) {
      const double u = -sv_dot(dof[j].S, p[k]);
      ru[j][k] = u;
      p[k] = sv_madd(p[k], dof[j].UD, u);
    }
  sv root[RESPONSE_MAX];
  for (int k = 0; k < count; ++k) {
    if (m->floating) {
      root[k] = sv_scale(sm_apply(&w->root_inv, p[k]), -1.0);
      sv_store(root[k], dqd + k * nv); /* an impulse: no ω × v term */
    } else {
      root[k] = sv_zero;
    }
  }
  for (int32_t j = 0; j < nd; ++j) {
    const mb_dof *f = &dof[j];
    for (int k = 0; k < count; ++k) {
      const sv ap = f->parent < 0 ? root[k] : ra[f->parent][k];
      const double x = f->Dinv * (ru[j][k] - sv_dot(f->U, ap));
      ra[j][k] = sv_madd(ap, f->S, x);
      dqd[k * nv + w->v0 + j] = x;
    }
  }
}

void lcp__mb_response_point3(const mb_model *m, mb_data *d, int32_t link, vec3 point,
                             const vec3 dirs[3], double *dqd) {
  const mb_work *w = d->work;
  sv p[3];
  for (int k = 0; k < 3; ++k)
    p[k] = sv_scale(impulse_force(w->origin, point, dirs[k], v3_zero()), -1.0);
  response_impulses(m, d, link, p, 3, dqd);
}

void lcp__mb_response_point3_spin(const mb_model *m, mb_data *d, int32_t link, vec3 point,
                                  const vec3 dirs[3], vec3 spin, double *dqd) {
  const mb_work *w = d->work;
  sv p[4];
  for (int k = 0; k < 3; ++k)
    p[k] = sv_scale(impulse_force(w->origin, point, dirs[k], v3_zero()), -1.0);
  p[3] = sv_scale(impulse_force(w->origin, point, v3_zero(), spin), -1.0);
  response_impulses(m, d, link, p, 4, dqd);
}

void lcp__mb_response_dof(const mb_model *m, mb_data *d, int32_t v_index, double *dqd) {
  mb_work *w = d->work;
  const int32_t j = v_index - w->v0;
  if (j < 0) {
    /* a base coordinate: a unit wrench component on the root */
    double e[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    e[v_index] = -1.0;
    response_pass(m, d, -1, sv_load(e), dqd);
  } else {
    w->dof[j].ru = 1.0;
    response_pass(m, d, j, sv_zero, dqd);
  }
}

/* ---- composite-rigid-body algorithm (RBDA section 6.2) ---- */

void lcp__mb_mass_matrix(const mb_model *m, const double *q, mb_data *d, double *M) {
  kinematics_pass(m, q, NULL, d, false, NULL, false);
  mb_work *w = d->work;
  mb_lw *restrict lw = w->lw;
  const mb_dof *dof = w->dof;
  const int32_t n = m->link_count, nv = m->nv, v0 = w->v0;
  const bool floating = m->floating;
  for (int32_t i = 0; i < n; ++i)
    lw[i].Ic = lw[i].I;
  /* composite inertias: in one frame, a plain sum over the subtree */
  for (int32_t i = n - 1; i >= 1; --i)
    if (floating || lw[i].parent != 0)
      rigid_add(&lw[lw[i].parent].Ic, &lw[i].Ic);
  memset(M, 0, (size_t)nv * (size_t)nv * sizeof(double));
  for (int32_t j = 0; j < w->ndof; ++j) {
    const int32_t vi = v0 + j;
    const sv F = rigid_apply(&lw[dof[j].link].Ic, dof[j].S);
    M[vi * nv + vi] = sv_dot(dof[j].S, F);
    for (int32_t k = dof[j].parent; k >= 0; k = dof[k].parent)
      M[vi * nv + v0 + k] = M[(v0 + k) * nv + vi] = sv_dot(dof[k].S, F);
    if (floating) {
      double f[6];
      sv_store(F, f);
      for (int r = 0; r < 6; ++r)
        M[vi * nv + r] = M[r * nv + vi] = f[r];
    }
  }
  if (floating) {
    sm B;
    double A[36];
    sm_from_rigid(&B, &lw[0].Ic);
    sm_to_array(&B, A);
    for (int r = 0; r < 6; ++r)
      for (int s = 0; s < 6; ++s)
        M[r * nv + s] = A[6 * r + s];
  }
}

/* ---- recursive Newton–Euler (RBDA section 5.3) ---- */

void lcp__mb_inverse_dynamics(const mb_model *m, const double *q, const double *qd,
                              const double *qdd, vec3 gravity, mb_data *d, double *tau) {
  kinematics_pass(m, q, qd, d, false, NULL, false);
  mb_work *w = d->work;
  mb_lw *restrict lw = w->lw;
  const mb_dof *dof = w->dof;
  const int32_t n = m->link_count;
  const bool floating = m->floating;
  /* ã (acceleration relative to free fall, less the bias b), in ra */
  mb_lw *b = &lw[0];
  if (floating) {
    sv a0 = qdd ? sv_load(qdd) : sv_zero;
    /* classical acceleration of the base origin → spatial, then − a_g */
    a0.l = v3_sub(v3_sub(a0.l, v3_cross(b->v.a, b->v.l)), gravity);
    b->ra = a0;
  } else {
    b->ra = (sv){v3_neg(gravity), v3_zero()};
  }
  for (int32_t i = floating ? 0 : 1; i < n; ++i) {
    mb_lw *k = &lw[i];
    if (i > 0) {
      /* ã = ã_parent + S q̈ */
      sv a = lw[k->parent].ra;
      if (k->dof >= 0 && qdd)
        a = sv_madd(a, dof[k->dof].S, qdd[w->v0 + k->dof]);
      k->ra = a;
    }
    /* f = I (ã + b) + v ×* I v */
    k->f = sv_add(rigid_apply(&k->I, sv_add(k->ra, k->b)), sv_crf(k->v, rigid_apply(&k->I, k->v)));
  }
  for (int32_t i = n - 1; i >= 1; --i) {
    mb_lw *k = &lw[i];
    if (k->dof >= 0)
      tau[w->v0 + k->dof] = sv_dot(dof[k->dof].S, k->f);
    if (floating || k->parent != 0)
      lw[k->parent].f = sv_add(lw[k->parent].f, k->f);
  }
  if (floating)
    sv_store(b->f, tau);
}

/* ---- integration, energy, momentum ---- */

void lcp__mb_integrate_positions(const mb_model *m, double *q, const double *qd, double h) {
  int32_t oq = 0, ov = 0;
  if (m->floating) {
    for (int k = 0; k < 3; ++k)
      q[k] += h * qd[k];
    q_store(q_integrate(q_from(q + 3), v3_from(qd + 3), h), q + 3);
    oq = 7;
    ov = 6;
  }
  for (int32_t j = 0; j < m->joint_count; ++j)
    q[oq + j] += h * qd[ov + j];
}

double lcp__mb_kinetic_energy(const mb_model *m, const mb_data *d) {
  const mb_lw *lw = ((const mb_work *)d->work)->lw;
  double e = 0.0;
  for (int32_t i = m->floating ? 0 : 1; i < m->link_count; ++i)
    e += sv_dot(lw[i].v, rigid_apply(&lw[i].I, lw[i].v));
  return 0.5 * e;
}

double lcp__mb_potential_energy(const mb_model *m, const mb_data *d, vec3 gravity) {
  const mb_work *w = d->work;
  double e = 0.0, mass = 0.0;
  for (int32_t i = 0; i < m->link_count; ++i) {
    e -= v3_dot(gravity, w->lw[i].I.h);
    mass += w->lw[i].I.m;
  }
  /* h is about O; move the reference to the world origin */
  return e - mass * v3_dot(gravity, w->origin);
}

void lcp__mb_momentum(const mb_model *m, const mb_data *d, vec3 *linear, vec3 *angular) {
  const mb_work *w = d->work;
  sv s = sv_zero;
  for (int32_t i = m->floating ? 0 : 1; i < m->link_count; ++i)
    s = sv_add(s, rigid_apply(&w->lw[i].I, w->lw[i].v));
  if (linear)
    *linear = s.l;
  /* about O → about the world origin: L_0 = L_O + O × P */
  if (angular)
    *angular = v3_add(s.a, v3_cross(w->origin, s.l));
}

void lcp__mb_center_of_mass(const mb_model *m, const mb_data *d, double *mass, vec3 *com) {
  const mb_work *w = d->work;
  double total = 0.0;
  vec3 first = v3_zero();
  for (int32_t i = 0; i < m->link_count; ++i) {
    total += w->lw[i].I.m;
    first = v3_add(first, w->lw[i].I.h);
  }
  *mass = total;
  /* h is the first moment about O */
  *com = total > 0.0 ? v3_add(w->origin, v3_scale(first, 1.0 / total)) : w->origin;
}

void lcp__mb_set_base_velocity_for_momentum(const mb_model *m, const double *q, double *qd,
                                            vec3 linear, vec3 angular, mb_data *d) {
  if (!m->floating)
    return;
  /* Momentum is linear in qd: with the base still, the joint rates carry
   * h_j; a base twist (v_O, ω) adds the momentum of the whole robot moved
   * rigidly, C (v_O, ω) with C the sum of the links' inertias about O:
   *   P = m v_O + ω × c₁,  L_O = c₁ × v_O + Ī ω   (c₁ = m c − m O: first moment).
   * Solving for the twist that brings the total to the target:
   *   I_c ω = ΔL − c₁ × ΔP / m, I_c = Ī − (|c₁|² E − c₁ c₁ᵀ)/m (about the
   *   centre of mass), then v_O = (ΔP − ω × c₁) / m. */
  double base[6];
  for (int k = 0; k < 6; ++k) {
    base[k] = qd[k];
    qd[k] = 0.0;
  }
  lcp__mb_kinematics(m, q, qd, d);
  const mb_work *w = d->work;
  rigid6 C = {0};
  sv held = sv_zero;
  for (int32_t i = 0; i < m->link_count; ++i) {
    rigid_add(&C, &w->lw[i].I);
    held = sv_add(held, rigid_apply(&w->lw[i].I, w->lw[i].v));
  }
  /* the target about O: L_O = L_origin − O × P */
  vec3 dP = v3_sub(linear, held.l);
  vec3 dL = v3_sub(v3_sub(angular, v3_cross(w->origin, linear)), held.a);
  vec3 c1 = C.h;
  double inv_m = 1.0 / C.m, cc = v3_dot(c1, c1);
  mat3 Ic = {{{C.I.xx - (cc - c1.x * c1.x) * inv_m, C.I.xy + c1.x * c1.y * inv_m,
               C.I.xz + c1.x * c1.z * inv_m},
              {C.I.xy + c1.x * c1.y * inv_m, C.I.yy - (cc - c1.y * c1.y) * inv_m,
               C.I.yz + c1.y * c1.z * inv_m},
              {C.I.xz + c1.x * c1.z * inv_m, C.I.yz + c1.y * c1.z * inv_m,
               C.I.zz - (cc - c1.z * c1.z) * inv_m}}};
  mat3 Ic_inv;
  if (!m3_inverse(&Ic, &Ic_inv, 0.0)) { /* no rotational inertia: keep the twist */
    memcpy(qd, base, sizeof base);
    lcp__mb_kinematics(m, q, qd, d);
    return;
  }
  vec3 omega = m3_mulv(&Ic_inv, v3_sub(dL, v3_scale(v3_cross(c1, dP), inv_m)));
  vec3 v = v3_scale(v3_sub(dP, v3_cross(omega, c1)), inv_m);
  v3_store(v, qd);
  v3_store(omega, qd + 3);
  lcp__mb_kinematics(m, q, qd, d);
}
