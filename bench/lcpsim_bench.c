/* lcpsim-bench SCENE [options]: runs a benchmark scene of DESIGN.md §7 and
 * prints one line of key=value pairs per run. */
#include "lcpsim/lcpsim.h"
#include "lcpsim/scenes.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_options {
  const char *scene;
  int32_t size; /* L for pyramid, N for pile and stack; 0 = the scene's default */
  int32_t steps;
  int32_t iterations;
  double omega;
  int runs;
  lcp_friction_model_t friction;
  lcp_solver_kind_t solver;
  int warm_start;
} bench_options;

static void usage(FILE *out) {
  fprintf(out, "usage: lcpsim-bench SCENE [options]\n"
               "scenes:\n"
               "  pyramid   L-level pyramid of 0.5 m cubes (L = 20)\n"
               "  stack     N cubes stacked (N = 10)\n"
               "  pile      N spheres and cubes dropped into a bin (N = 1000)\n"
               "options:\n"
               "  -n, --size N          L or N of the scene\n"
               "  -s, --steps N         steps per run (the scene's default)\n"
               "  -i, --iterations N    solver iterations (20)\n"
               "  -w, --omega W         SOR relaxation (1.0)\n"
               "  -f, --friction box|cone   friction model (cone)\n"
               "      --solver pgs|jacobi|direct\n"
               "      --no-warm-start\n"
               "  -r, --runs N          repeat the run N times, one line each (1)\n"
               "  -h, --help\n");
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int build_scene(lcp_world_t *world, const bench_options *o, lcp_scene_info_t *info) {
  if (strcmp(o->scene, "pyramid") == 0)
    return lcp_scene_pyramid(world, o->size ? o->size : 20, info);
  if (strcmp(o->scene, "stack") == 0)
    return lcp_scene_stack(world, o->size ? o->size : 10, info);
  if (strcmp(o->scene, "pile") == 0)
    return lcp_scene_pile(world, o->size ? o->size : 1000, info);
  return LCP_ERR_NOT_FOUND;
}

static int run_once(const bench_options *o) {
  lcp_world_settings_t s = lcp_scene_settings();
  s.iterations = o->iterations;
  s.sor_omega = o->omega;
  s.friction_model = o->friction;
  s.solver = o->solver;
  s.warm_start = o->warm_start;
  lcp_world_t *world = NULL;
  int rc = lcp_world_create(&s, &world);
  if (rc != LCP_OK) {
    fprintf(stderr, "lcpsim-bench: cannot create the world: %s\n", lcp_status_string(rc));
    return 1;
  }
  lcp_scene_info_t info;
  rc = build_scene(world, o, &info);
  if (rc == LCP_ERR_NOT_FOUND) {
    fprintf(stderr, "lcpsim-bench: unknown scene '%s'\n", o->scene);
    usage(stderr);
    lcp_world_destroy(&world);
    return 2;
  }
  if (rc != LCP_OK) {
    fprintf(stderr, "lcpsim-bench: building %s: %s\n", o->scene, lcp_world_last_error(world));
    lcp_world_destroy(&world);
    return 1;
  }
  int32_t steps = o->steps > 0 ? o->steps : info.default_steps;
  double stage_sum[LCP_STAGE_COUNT] = {0};
  double contacts = 0, iterations = 0, rows = 0, residual = 0;
  double t0 = now_seconds();
  for (int32_t i = 0; i < steps; ++i) {
    rc = lcp_world_step(world);
    if (rc != LCP_OK) {
      fprintf(stderr, "lcpsim-bench: step %d: %s\n", (int)i, lcp_world_last_error(world));
      lcp_world_destroy(&world);
      return 1;
    }
    lcp_step_stats_t st;
    lcp_world_get_stats(world, &st);
    for (int k = 0; k < LCP_STAGE_COUNT; ++k)
      stage_sum[k] += st.stage_seconds[k];
    contacts += st.contacts;
    iterations += st.iterations;
    rows += st.rows;
    residual = st.residual;
  }
  double elapsed = now_seconds() - t0;
  double p[3];
  lcp_body_get_pose(world, info.top_body, p, NULL);
  double drift = sqrt((p[0] - info.top_position[0]) * (p[0] - info.top_position[0]) +
                      (p[1] - info.top_position[1]) * (p[1] - info.top_position[1]) +
                      (p[2] - info.top_position[2]) * (p[2] - info.top_position[2]));
  printf("scene=%s size=%d bodies=%d dofs=%d steps=%d us_per_step=%.1f contacts=%.1f rows=%.1f "
         "iterations=%.2f residual=%.3g drift_m=%.4f friction=%s solver=%s",
         o->scene, (int)(o->size ? o->size : 0), (int)info.bodies, (int)info.dofs, (int)steps,
         1e6 * elapsed / steps, contacts / steps, rows / steps, iterations / steps, residual, drift,
         o->friction == LCP_FRICTION_CONE ? "cone" : "box",
         o->solver == LCP_SOLVER_PGS ? "pgs"
                                     : (o->solver == LCP_SOLVER_JACOBI ? "jacobi" : "direct"));
  for (int k = 0; k < LCP_STAGE_COUNT; ++k)
    printf(" us_%s=%.1f", lcp_stage_name((lcp_stage_t)k), 1e6 * stage_sum[k] / steps);
  printf("\n");
  fflush(stdout);
  lcp_world_destroy(&world);
  return 0;
}

int main(int argc, char **argv) {
  bench_options o = {
      .iterations = 20,
      .omega = 1.0,
      .runs = 1,
      .friction = LCP_FRICTION_CONE,
      .solver = LCP_SOLVER_PGS,
      .warm_start = 1,
  };
  enum { OPT_SOLVER = 256, OPT_NO_WARM };
  static const struct option long_options[] = {{"size", required_argument, NULL, 'n'},
                                               {"steps", required_argument, NULL, 's'},
                                               {"iterations", required_argument, NULL, 'i'},
                                               {"omega", required_argument, NULL, 'w'},
                                               {"friction", required_argument, NULL, 'f'},
                                               {"solver", required_argument, NULL, OPT_SOLVER},
                                               {"no-warm-start", no_argument, NULL, OPT_NO_WARM},
                                               {"runs", required_argument, NULL, 'r'},
                                               {"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "n:s:i:w:f:r:h", long_options, NULL)) != -1) {
    switch (c) {
    case 'n':
      o.size = atoi(optarg);
      break;
    case 's':
      o.steps = atoi(optarg);
      break;
    case 'i':
      o.iterations = atoi(optarg);
      break;
    case 'w':
      o.omega = atof(optarg);
      break;
    case 'f':
      if (strcmp(optarg, "box") == 0)
        o.friction = LCP_FRICTION_BOX;
      else if (strcmp(optarg, "cone") == 0)
        o.friction = LCP_FRICTION_CONE;
      else {
        fprintf(stderr, "lcpsim-bench: --friction must be box or cone\n");
        return 2;
      }
      break;
    case OPT_SOLVER:
      if (strcmp(optarg, "pgs") == 0)
        o.solver = LCP_SOLVER_PGS;
      else if (strcmp(optarg, "jacobi") == 0)
        o.solver = LCP_SOLVER_JACOBI;
      else if (strcmp(optarg, "direct") == 0)
        o.solver = LCP_SOLVER_DIRECT;
      else {
        fprintf(stderr, "lcpsim-bench: --solver must be pgs, jacobi or direct\n");
        return 2;
      }
      break;
    case OPT_NO_WARM:
      o.warm_start = 0;
      break;
    case 'r':
      o.runs = atoi(optarg);
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return 2;
  }
  o.scene = argv[optind];
  for (int r = 0; r < (o.runs > 0 ? o.runs : 1); ++r) {
    int rc = run_once(&o);
    if (rc != 0)
      return rc;
  }
  return 0;
}
