/* SPDX-License-Identifier: Apache-2.0 */
/* World settings: the defaults and the one place their rules are checked.
 * Every program that takes settings from outside (the daemon's command line,
 * its scene files and its SetSettings call) asks lcp_world_settings_validate,
 * so that a rule is stated once and its message names the field and the
 * value at fault. */
#include "lcpsim/lcpsim.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

lcp_world_settings_t lcp_world_settings_default(void) {
  return (lcp_world_settings_t){
      .timestep = 1.0 / 240.0,
      .gravity = {0.0, 0.0, -9.81},
      .iterations = 20,
      .sor_omega = 1.0,
      .baumgarte_beta = 0.2,
      .baumgarte_slop = 0.001,
      .cfm = 1e-9,
      .contact_margin = 0.002,
      .friction_model = LCP_FRICTION_CONE,
      .solver = LCP_SOLVER_PGS,
      .warm_start = true,
      .residual_tolerance = 1e-7,
      .direct_max_rows = 600,
      .max_push_speed = 3.0,
      .relax_iterations = 4,
      .restitution_threshold = 1.0,
      .enforce_velocity_limits = true,
  };
}

static int invalid(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int invalid(char *why, size_t why_size, const char *fmt, ...) {
  if (why && why_size) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(why, why_size, fmt, args);
    va_end(args);
  }
  return LCP_ERR_INVALID_ARGUMENT;
}

static bool finite_at_least(double x, double lowest) { return isfinite(x) && x >= lowest; }

int lcp_world_settings_validate(const lcp_world_settings_t *s, char *why, size_t why_size) {
  if (why && why_size)
    why[0] = '\0';
  if (!s)
    return invalid(why, why_size, "the settings are missing (NULL)");
  /* NaN fails every comparison: each test is written so that it does too. */
  if (!(s->timestep > 0.0))
    return invalid(why, why_size, "timestep must be > 0 (got %g)", s->timestep);
  if (!(s->timestep >= LCP_MIN_TIMESTEP))
    return invalid(why, why_size, "timestep must be >= %g s (got %g)", LCP_MIN_TIMESTEP,
                   s->timestep);
  if (!(s->timestep <= 1.0))
    return invalid(why, why_size, "timestep must be <= 1 s (got %g)", s->timestep);
  if (!(isfinite(s->gravity[0]) && isfinite(s->gravity[1]) && isfinite(s->gravity[2])))
    return invalid(why, why_size, "gravity must be finite (got %g %g %g)", s->gravity[0],
                   s->gravity[1], s->gravity[2]);
  double g = sqrt(s->gravity[0] * s->gravity[0] + s->gravity[1] * s->gravity[1] +
                  s->gravity[2] * s->gravity[2]);
  if (!(g <= LCP_MAX_GRAVITY))
    return invalid(why, why_size, "gravity's magnitude must be <= %g m/s² (got %g)",
                   LCP_MAX_GRAVITY, g);
  if (s->iterations < 1)
    return invalid(why, why_size, "iterations must be >= 1 (got %d)", (int)s->iterations);
  if (s->iterations > 100000)
    return invalid(why, why_size, "iterations must be <= 100000 (got %d)", (int)s->iterations);
  if (!(s->sor_omega > 0.0 && s->sor_omega < 2.0))
    return invalid(why, why_size, "sor_omega must be in (0, 2) (got %g)", s->sor_omega);
  if (!(s->baumgarte_beta >= 0.0 && s->baumgarte_beta <= 1.0))
    return invalid(why, why_size, "baumgarte_beta must be in [0, 1] (got %g)", s->baumgarte_beta);
  if (!finite_at_least(s->baumgarte_slop, 0.0))
    return invalid(why, why_size, "baumgarte_slop must be finite and >= 0 (got %g)",
                   s->baumgarte_slop);
  if (!finite_at_least(s->cfm, 0.0))
    return invalid(why, why_size, "cfm must be finite and >= 0 (got %g)", s->cfm);
  if (!finite_at_least(s->contact_margin, 0.0))
    return invalid(why, why_size, "contact_margin must be finite and >= 0 (got %g)",
                   s->contact_margin);
  if (s->friction_model != LCP_FRICTION_BOX && s->friction_model != LCP_FRICTION_CONE)
    return invalid(why, why_size, "friction_model must be box or cone (got %d)",
                   (int)s->friction_model);
  if (s->solver != LCP_SOLVER_PGS && s->solver != LCP_SOLVER_JACOBI &&
      s->solver != LCP_SOLVER_DIRECT)
    return invalid(why, why_size, "solver must be pgs, jacobi or direct (got %d)", (int)s->solver);
  if (!finite_at_least(s->residual_tolerance, 0.0))
    return invalid(why, why_size, "residual_tolerance must be finite and >= 0 (got %g)",
                   s->residual_tolerance);
  if (s->direct_max_rows < 1)
    return invalid(why, why_size, "direct_max_rows must be >= 1 (got %d)", (int)s->direct_max_rows);
  if (!finite_at_least(s->max_push_speed, 0.0))
    return invalid(why, why_size, "max_push_speed must be finite and >= 0 (got %g)",
                   s->max_push_speed);
  if (s->relax_iterations < 0 || s->relax_iterations > 100000)
    return invalid(why, why_size, "relax_iterations must be in [0, 100000] (got %d)",
                   (int)s->relax_iterations);
  if (!finite_at_least(s->restitution_threshold, 0.0))
    return invalid(why, why_size, "restitution_threshold must be finite and >= 0 (got %g)",
                   s->restitution_threshold);
  return LCP_OK;
}
