/* SPDX-License-Identifier: Apache-2.0 */
/* Small vectors of doubles for the solver's kernels: two lanes (a body's
 * six velocities as three pairs) and four lanes (four contact units swept
 * at once, contact_kernels.c).
 *
 * This header is the only place that knows how they are made. With GCC and
 * Clang they are the compilers' vector extensions: SSE2 on x86-64 and NEON
 * on arm64, both part of every baseline, and AVX2 in functions compiled for
 * it (SIMD_TARGET_AVX2) and chosen at run time (simd_cpu_has_avx2).
 * Elsewhere, or with LCP_SIMD_SCALAR defined, they are structs and loops.
 *
 * Every operation is IEEE arithmetic lane by lane, without fused
 * multiply-adds (d4_madd is a multiply, then an add), so a kernel gives the
 * same bits with any of them: the choice is one of speed only. Loads and
 * stores go through memcpy, so data need not be aligned. */
#ifndef LCP_SIMD_H
#define LCP_SIMD_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(LCP_SIMD_SCALAR)
#define SIMD_VECTOR_EXTENSIONS 1
#else
#define SIMD_VECTOR_EXTENSIONS 0
#endif

/* Runtime dispatch to AVX2 code: x86 with GCC or Clang. */
#if SIMD_VECTOR_EXTENSIONS && (defined(__x86_64__) || defined(__i386__))
#define SIMD_AVX2_DISPATCH 1
#define SIMD_TARGET_AVX2 __attribute__((target("avx2")))
static inline bool simd_cpu_has_avx2(void) { return __builtin_cpu_supports("avx2"); }
#else
#define SIMD_AVX2_DISPATCH 0
#define SIMD_TARGET_AVX2
static inline bool simd_cpu_has_avx2(void) { return false; }
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SIMD_INLINE inline __attribute__((always_inline))
#define simd_prefetch_read(p) __builtin_prefetch((p), 0, 3)
#define simd_prefetch_write(p) __builtin_prefetch((p), 1, 3)
#else
#define SIMD_INLINE inline
#define simd_prefetch_read(p) ((void)(p))
#define simd_prefetch_write(p) ((void)(p))
#endif

/* The index of the lowest set bit of x ≠ 0. */
static inline int simd_lowest_bit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzll(x);
#else
  int k = 0;
  while (!(x >> k & 1u))
    ++k;
  return k;
#endif
}

#if SIMD_VECTOR_EXTENSIONS

/* GCC notes that 32-byte vector arguments would change the ABI without
 * AVX; the functions taking them are all inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef double lcp_d2 __attribute__((vector_size(16)));
typedef long long lcp_m2 __attribute__((vector_size(16)));
typedef double lcp_d4 __attribute__((vector_size(32)));
typedef long long lcp_m4 __attribute__((vector_size(32))); /* lanes all ones or all zeros */

static SIMD_INLINE lcp_d2 d2_load(const double *p) {
  lcp_d2 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static SIMD_INLINE void d2_store(double *p, lcp_d2 v) { memcpy(p, &v, sizeof v); }
static SIMD_INLINE lcp_d2 d2_splat(double x) { return (lcp_d2){x, x}; }
static SIMD_INLINE lcp_d2 d2_add(lcp_d2 a, lcp_d2 b) { return a + b; }
static SIMD_INLINE lcp_d2 d2_mul(lcp_d2 a, lcp_d2 b) { return a * b; }
static SIMD_INLINE lcp_d2 d2_abs(lcp_d2 x) {
  return (lcp_d2)((lcp_m2)x & (lcp_m2){INT64_MAX, INT64_MAX});
}
/* lane 0 + lane 1 */
static SIMD_INLINE double d2_sum(lcp_d2 v) { return v[0] + v[1]; }

static SIMD_INLINE lcp_d4 d4_load(const double *p) {
  lcp_d4 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static SIMD_INLINE void d4_store(double *p, lcp_d4 v) { memcpy(p, &v, sizeof v); }
static SIMD_INLINE lcp_d4 d4_splat(double x) { return (lcp_d4){x, x, x, x}; }
static SIMD_INLINE double d4_lane(lcp_d4 v, int k) { return v[k]; }
static SIMD_INLINE lcp_d4 d4_add(lcp_d4 a, lcp_d4 b) { return a + b; }
static SIMD_INLINE lcp_d4 d4_sub(lcp_d4 a, lcp_d4 b) { return a - b; }
static SIMD_INLINE lcp_d4 d4_mul(lcp_d4 a, lcp_d4 b) { return a * b; }
static SIMD_INLINE lcp_d4 d4_div(lcp_d4 a, lcp_d4 b) { return a / b; }
static SIMD_INLINE lcp_d4 d4_neg(lcp_d4 a) { return -a; }
static SIMD_INLINE lcp_d4 d4_abs(lcp_d4 x) {
  return (lcp_d4)((lcp_m4)x & (lcp_m4){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX});
}
static SIMD_INLINE lcp_m4 d4_gt(lcp_d4 a, lcp_d4 b) { return a > b; }
static SIMD_INLINE lcp_m4 d4_lt(lcp_d4 a, lcp_d4 b) { return a < b; }
static SIMD_INLINE lcp_m4 d4_eq(lcp_d4 a, lcp_d4 b) { return a == b; }
/* m ? a : b lane-wise */
static SIMD_INLINE lcp_d4 d4_select(lcp_m4 m, lcp_d4 a, lcp_d4 b) {
  return (lcp_d4)((m & (lcp_m4)a) | (~m & (lcp_m4)b));
}
static SIMD_INLINE lcp_m4 m4_and(lcp_m4 a, lcp_m4 b) { return a & b; }
static SIMD_INLINE lcp_m4 m4_or(lcp_m4 a, lcp_m4 b) { return a | b; }
static SIMD_INLINE lcp_m4 m4_andnot(lcp_m4 a, lcp_m4 b) { return a & ~b; }
static SIMD_INLINE bool m4_any(lcp_m4 m) { return (m[0] | m[1] | m[2] | m[3]) != 0; }
/* lanes 0 .. n − 1 set */
static SIMD_INLINE lcp_m4 m4_first(long long n) {
  return (lcp_m4){0, 1, 2, 3} < (lcp_m4){n, n, n, n};
}

/* sqrt lane by lane: by halves with SSE2 (sqrtpd), else lane by lane */
#if defined(__SSE2__)
#include <emmintrin.h>
static SIMD_INLINE lcp_d4 d4_sqrt(lcp_d4 a) {
  lcp_d2 lo = _mm_sqrt_pd(__builtin_shufflevector(a, a, 0, 1));
  lcp_d2 hi = _mm_sqrt_pd(__builtin_shufflevector(a, a, 2, 3));
  return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
}
#else
static SIMD_INLINE lcp_d4 d4_sqrt(lcp_d4 a) {
  lcp_d4 r;
  for (int k = 0; k < 4; ++k)
    r[k] = sqrt(a[k]);
  return r;
}
#endif

/* x = (p0[0], p1[0], p2[0], p3[0]), y = (p0[1], p1[1], p2[1], p3[1]): two
 * components of four lanes' data (a 4×2 transpose) */
static SIMD_INLINE void d4_load_pairs(const double *p0, const double *p1, const double *p2,
                                      const double *p3, lcp_d4 *x, lcp_d4 *y) {
  lcp_d2 a = d2_load(p0), b = d2_load(p1), e = d2_load(p2), f = d2_load(p3);
  lcp_d2 x01 = __builtin_shufflevector(a, b, 0, 2), x23 = __builtin_shufflevector(e, f, 0, 2);
  lcp_d2 y01 = __builtin_shufflevector(a, b, 1, 3), y23 = __builtin_shufflevector(e, f, 1, 3);
  *x = __builtin_shufflevector(x01, x23, 0, 1, 2, 3);
  *y = __builtin_shufflevector(y01, y23, 0, 1, 2, 3);
}
/* the transpose back */
static SIMD_INLINE void d4_store_pairs(double *p0, double *p1, double *p2, double *p3, lcp_d4 x,
                                       lcp_d4 y) {
  lcp_d2 xl = __builtin_shufflevector(x, x, 0, 1), yl = __builtin_shufflevector(y, y, 0, 1);
  lcp_d2 xh = __builtin_shufflevector(x, x, 2, 3), yh = __builtin_shufflevector(y, y, 2, 3);
  d2_store(p0, __builtin_shufflevector(xl, yl, 0, 2));
  d2_store(p1, __builtin_shufflevector(xl, yl, 1, 3));
  d2_store(p2, __builtin_shufflevector(xh, yh, 0, 2));
  d2_store(p3, __builtin_shufflevector(xh, yh, 1, 3));
}

#else /* portable scalar lanes */

typedef struct lcp_d2 {
  double v[2];
} lcp_d2;
typedef struct lcp_d4 {
  double v[4];
} lcp_d4;
typedef struct lcp_m4 {
  long long v[4];
} lcp_m4;

static SIMD_INLINE lcp_d2 d2_load(const double *p) {
  lcp_d2 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static SIMD_INLINE void d2_store(double *p, lcp_d2 v) { memcpy(p, &v, sizeof v); }
static SIMD_INLINE lcp_d2 d2_splat(double x) { return (lcp_d2){{x, x}}; }
static SIMD_INLINE lcp_d2 d2_add(lcp_d2 a, lcp_d2 b) {
  return (lcp_d2){{a.v[0] + b.v[0], a.v[1] + b.v[1]}};
}
static SIMD_INLINE lcp_d2 d2_mul(lcp_d2 a, lcp_d2 b) {
  return (lcp_d2){{a.v[0] * b.v[0], a.v[1] * b.v[1]}};
}
static SIMD_INLINE lcp_d2 d2_abs(lcp_d2 x) { return (lcp_d2){{fabs(x.v[0]), fabs(x.v[1])}}; }
static SIMD_INLINE double d2_sum(lcp_d2 v) { return v.v[0] + v.v[1]; }

#define SIMD_D4_LANEWISE(name, expr)                                                               \
  static SIMD_INLINE lcp_d4 name(lcp_d4 a, lcp_d4 b) {                                             \
    lcp_d4 r;                                                                                      \
    for (int k = 0; k < 4; ++k)                                                                    \
      r.v[k] = (expr);                                                                             \
    return r;                                                                                      \
  }
SIMD_D4_LANEWISE(d4_add, a.v[k] + b.v[k])
SIMD_D4_LANEWISE(d4_sub, a.v[k] - b.v[k])
SIMD_D4_LANEWISE(d4_mul, a.v[k] * b.v[k])
SIMD_D4_LANEWISE(d4_div, a.v[k] / b.v[k])
#undef SIMD_D4_LANEWISE

static SIMD_INLINE lcp_d4 d4_load(const double *p) {
  lcp_d4 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static SIMD_INLINE void d4_store(double *p, lcp_d4 v) { memcpy(p, &v, sizeof v); }
static SIMD_INLINE lcp_d4 d4_splat(double x) { return (lcp_d4){{x, x, x, x}}; }
static SIMD_INLINE double d4_lane(lcp_d4 v, int k) { return v.v[k]; }
static SIMD_INLINE lcp_d4 d4_neg(lcp_d4 a) {
  return (lcp_d4){{-a.v[0], -a.v[1], -a.v[2], -a.v[3]}};
}
static SIMD_INLINE lcp_d4 d4_abs(lcp_d4 x) {
  return (lcp_d4){{fabs(x.v[0]), fabs(x.v[1]), fabs(x.v[2]), fabs(x.v[3])}};
}
static SIMD_INLINE lcp_d4 d4_sqrt(lcp_d4 x) {
  return (lcp_d4){{sqrt(x.v[0]), sqrt(x.v[1]), sqrt(x.v[2]), sqrt(x.v[3])}};
}
static SIMD_INLINE lcp_m4 d4_gt(lcp_d4 a, lcp_d4 b) {
  lcp_m4 m;
  for (int k = 0; k < 4; ++k)
    m.v[k] = a.v[k] > b.v[k] ? -1 : 0;
  return m;
}
static SIMD_INLINE lcp_m4 d4_lt(lcp_d4 a, lcp_d4 b) { return d4_gt(b, a); }
static SIMD_INLINE lcp_m4 d4_eq(lcp_d4 a, lcp_d4 b) {
  lcp_m4 m;
  for (int k = 0; k < 4; ++k)
    m.v[k] = a.v[k] == b.v[k] ? -1 : 0;
  return m;
}
static SIMD_INLINE lcp_d4 d4_select(lcp_m4 m, lcp_d4 a, lcp_d4 b) {
  lcp_d4 r;
  for (int k = 0; k < 4; ++k)
    r.v[k] = m.v[k] ? a.v[k] : b.v[k];
  return r;
}
static SIMD_INLINE lcp_m4 m4_and(lcp_m4 a, lcp_m4 b) {
  return (lcp_m4){{a.v[0] & b.v[0], a.v[1] & b.v[1], a.v[2] & b.v[2], a.v[3] & b.v[3]}};
}
static SIMD_INLINE lcp_m4 m4_or(lcp_m4 a, lcp_m4 b) {
  return (lcp_m4){{a.v[0] | b.v[0], a.v[1] | b.v[1], a.v[2] | b.v[2], a.v[3] | b.v[3]}};
}
static SIMD_INLINE lcp_m4 m4_andnot(lcp_m4 a, lcp_m4 b) {
  return (lcp_m4){{a.v[0] & ~b.v[0], a.v[1] & ~b.v[1], a.v[2] & ~b.v[2], a.v[3] & ~b.v[3]}};
}
static SIMD_INLINE bool m4_any(lcp_m4 m) { return (m.v[0] | m.v[1] | m.v[2] | m.v[3]) != 0; }
static SIMD_INLINE lcp_m4 m4_first(long long n) {
  return (lcp_m4){{0 < n ? -1 : 0, 1 < n ? -1 : 0, 2 < n ? -1 : 0, 3 < n ? -1 : 0}};
}
static SIMD_INLINE void d4_load_pairs(const double *p0, const double *p1, const double *p2,
                                      const double *p3, lcp_d4 *x, lcp_d4 *y) {
  *x = (lcp_d4){{p0[0], p1[0], p2[0], p3[0]}};
  *y = (lcp_d4){{p0[1], p1[1], p2[1], p3[1]}};
}
static SIMD_INLINE void d4_store_pairs(double *p0, double *p1, double *p2, double *p3, lcp_d4 x,
                                       lcp_d4 y) {
  p0[0] = x.v[0], p1[0] = x.v[1], p2[0] = x.v[2], p3[0] = x.v[3];
  p0[1] = y.v[0], p1[1] = y.v[1], p2[1] = y.v[2], p3[1] = y.v[3];
}

#endif

/* Built from the above, the same for both. */

/* a + b c (a multiply, then an add: never fused) */
static SIMD_INLINE lcp_d4 d4_madd(lcp_d4 a, lcp_d4 b, lcp_d4 c) { return d4_add(a, d4_mul(b, c)); }
/* a − b c */
static SIMD_INLINE lcp_d4 d4_msub(lcp_d4 a, lcp_d4 b, lcp_d4 c) { return d4_sub(a, d4_mul(b, c)); }
/* a > b ? a : b and a < b ? a : b: the values of maxpd and minpd (b when
 * either is a NaN, b for ±0 against ∓0), so that a clamp as d4_max(lo, x)
 * keeps a NaN x */
static SIMD_INLINE lcp_d4 d4_max(lcp_d4 a, lcp_d4 b) { return d4_select(d4_gt(a, b), a, b); }
static SIMD_INLINE lcp_d4 d4_min(lcp_d4 a, lcp_d4 b) { return d4_select(d4_lt(a, b), a, b); }
/* clamp(x, lo, hi), a NaN x staying NaN */
static SIMD_INLINE lcp_d4 d4_clamp(lcp_d4 x, lcp_d4 lo, lcp_d4 hi) {
  return d4_min(hi, d4_max(lo, x));
}
/* the lanes where x is finite: x − x is 0 there, NaN elsewhere */
static SIMD_INLINE lcp_m4 d4_finite(lcp_d4 x) { return d4_eq(d4_sub(x, x), d4_splat(0.0)); }

#endif
