/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim-bench SCENE [options]: runs a benchmark scene (README.md, "Performance") and
 * prints one line of key=value pairs per run. */
#include "lcpsim/lcpsim.h"
#include "scenes.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* A scene runs twice: once with the engine's per-stage timing on, for the
 * us_<stage> figures (stage_sum), and once as a user runs it, without, for
 * us_per_step and the rest, which that timing would inflate (seven clock
 * reads a step). */
typedef struct bench_pass {
  bool profile;                      /* this is the stage-timing run: print nothing */
  double stage_sum[LCP_STAGE_COUNT]; /* the stage-timing run's sums, seconds */
} bench_pass;

static void usage(FILE *out) {
  fprintf(out, "usage: lcpsim-bench SCENE [options]\n"
               "scenes:\n"
               "  pyramid   L-level pyramid of 0.5 m cubes (L = 20)\n"
               "  stack     N cubes stacked (N = 20)\n"
               "  drop      N spheres and cubes dropped 5 m onto a 2 cm plate (N = 100)\n"
               "  pile      N spheres and cubes dropped into a bin (N = 1000)\n"
               "  arm       7-dof arm tracking sine targets under PD (10000 steps)\n"
               "  chain     20-link floating capsule chain dropped on a plane (5000 steps)\n"
               "  quadruped quadruped standing under PD control (5000 steps)\n"
               "  rpc       Step(1, arm targets, state) round trips to an lcpsimd it starts,\n"
               "            against a bare ZeroMQ REQ/REP echo (options: lcpsim-bench rpc --help)\n"
               "  batch     BatchStep over K copies of the built-in world on 1 and 2 threads,\n"
               "            against it in-process and MuJoCo (lcpsim-bench batch --help)\n"
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

/* L or N of a body scene: the option, else the scene's default */
static int scene_size(const bench_options *o) {
  if (o->size)
    return (int)o->size;
  if (strcmp(o->scene, "pyramid") == 0)
    return 20;
  if (strcmp(o->scene, "stack") == 0)
    return 20;
  if (strcmp(o->scene, "drop") == 0)
    return 100;
  if (strcmp(o->scene, "pile") == 0)
    return 1000;
  return 0;
}

static int build_scene(lcp_world_t *world, const bench_options *o, lcp_scene_info_t *info) {
  if (strcmp(o->scene, "pyramid") == 0)
    return lcp_scene_pyramid(world, scene_size(o), info);
  if (strcmp(o->scene, "stack") == 0)
    return lcp_scene_stack(world, scene_size(o), info);
  if (strcmp(o->scene, "pile") == 0)
    return lcp_scene_pile(world, scene_size(o), info);
  if (strcmp(o->scene, "drop") == 0)
    return lcp_scene_drop(world, scene_size(o), info);
  return LCP_ERR_NOT_FOUND;
}

typedef enum robot_scene { NOT_ROBOT, ARM, CHAIN, QUADRUPED } robot_scene;

static robot_scene robot_scene_of(const char *name) {
  if (strcmp(name, "arm") == 0)
    return ARM;
  if (strcmp(name, "chain") == 0)
    return CHAIN;
  if (strcmp(name, "quadruped") == 0)
    return QUADRUPED;
  return NOT_ROBOT;
}

/* Quadruped gains: stiff enough that the knees (≈ 6 N·m each in the stance)
 * droop by a few hundredths of a radian, well inside the 35 N·m effort. */
#define BENCH_QUADRUPED_KP 300.0
#define BENCH_QUADRUPED_KD 10.0
#define BENCH_QUADRUPED_LIFT 0.002

static int build_robot_scene(lcp_world_t *world, robot_scene kind, lcp_robot_scene_t *scene) {
  switch (kind) {
  case ARM:
    return lcp_scene_arm(world, scene);
  case CHAIN:
    return lcp_scene_chain(world, scene);
  case QUADRUPED:
    return lcp_scene_quadruped(world, BENCH_QUADRUPED_KP, BENCH_QUADRUPED_KD, BENCH_QUADRUPED_LIFT,
                               scene);
  default:
    return LCP_ERR_NOT_FOUND;
  }
}

/* What a robot scene measures on top of the common keys. */
typedef struct robot_measure {
  double track_sq;                        /* arm: Σ (q − q*)² over steps and joints */
  int64_t track_count;                    /* arm: terms in track_sq */
  double feet_ref[LCP_SCENE_MAX_FEET][3]; /* quadruped: foot positions after settling */
} robot_measure;

static void print_common(const bench_options *o, int32_t bodies, int32_t dofs, int32_t steps,
                         double elapsed, const double *stage_sum, double contacts, double rows,
                         double iterations, double residual) {
  printf(
      "scene=%s bodies=%d dofs=%d steps=%d us_per_step=%.2f contacts=%.1f rows=%.1f "
      "iterations=%.2f residual=%.3g friction=%s solver=%s",
      o->scene, (int)bodies, (int)dofs, (int)steps, 1e6 * elapsed / steps, contacts / steps,
      rows / steps, iterations / steps, residual, o->friction == LCP_FRICTION_CONE ? "cone" : "box",
      o->solver == LCP_SOLVER_PGS ? "pgs" : (o->solver == LCP_SOLVER_JACOBI ? "jacobi" : "direct"));
  for (int k = 0; k < LCP_STAGE_COUNT; ++k)
    printf(" us_%s=%.2f", lcp_stage_name((lcp_stage_t)k), 1e6 * stage_sum[k] / steps);
}

static int run_robot_once(const bench_options *o, robot_scene kind, lcp_world_t *world,
                          bench_pass *pass) {
  lcp_robot_scene_t scene;
  int rc = build_robot_scene(world, kind, &scene);
  if (rc != LCP_OK) {
    fprintf(stderr, "lcpsim-bench: building %s: %s (%s)\n", o->scene, lcp_status_string(rc),
            lcp_world_last_error(world));
    return 1;
  }
  int32_t steps = o->steps > 0 ? o->steps : scene.default_steps;
  /* The quadruped's feet are measured from the end of the first second (or
   * of the first fifth of a shorter run), when the drop has settled. */
  int32_t settle = steps / 5 < 1000 ? steps / 5 : 1000;
  robot_measure m = {0};
  double q[64];
  lcp_robot_info_t info;
  lcp_robot_get_info(world, scene.robot, &info);
  if (info.nq > 64) {
    fprintf(stderr, "lcpsim-bench: robot too large\n");
    return 1;
  }
  int32_t first_joint_q = info.nq - info.joint_count;
  double *stage_sum = pass->stage_sum;
  double contacts = 0, iterations = 0, rows = 0, residual = 0;
  double t0 = now_seconds();
  for (int32_t i = 0; i < steps; ++i) {
    if (kind == ARM)
      lcp_scene_arm_set_targets(world, scene.robot, lcp_world_time(world));
    rc = lcp_world_step(world);
    if (rc != LCP_OK) {
      fprintf(stderr, "lcpsim-bench: step %d: %s\n", (int)i, lcp_world_last_error(world));
      return 1;
    }
    lcp_step_stats_t st;
    lcp_world_get_stats(world, &st);
    for (int k = 0; pass->profile && k < LCP_STAGE_COUNT; ++k)
      stage_sum[k] += st.stage_seconds[k];
    contacts += st.contacts;
    iterations += st.iterations;
    rows += st.rows;
    residual = st.residual;
    if (kind == ARM) {
      double t = lcp_world_time(world);
      lcp_robot_get_q(world, scene.robot, q, info.nq);
      for (int32_t j = 0; j < info.joint_count; ++j) {
        double e = q[first_joint_q + j] - lcp_scene_arm_target(j, t);
        m.track_sq += e * e;
        m.track_count++;
      }
    } else if (kind == QUADRUPED && i + 1 == settle) {
      for (int32_t f = 0; f < scene.foot_count; ++f)
        lcp_scene_foot_position(world, &scene, f, m.feet_ref[f]);
    }
  }
  double elapsed = now_seconds() - t0;
  if (pass->profile)
    return 0;
  print_common(o, scene.bodies, scene.dofs, steps, elapsed, stage_sum, contacts, rows, iterations,
               residual);
  if (kind == ARM) {
    printf(" track_err_rad=%.4f", sqrt(m.track_sq / (double)(m.track_count ? m.track_count : 1)));
  } else if (kind == CHAIN) {
    double fastest = 0.0;
    for (int32_t l = 0; l < scene.bodies; ++l) {
      double v[3], w[3];
      lcp_robot_get_link_velocity(world, scene.robot, l, v, w);
      fastest = fmax(fastest, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    }
    printf(" rest_speed=%.3g", fastest);
  } else if (kind == QUADRUPED) {
    double base[3], slide = 0.0;
    lcp_robot_get_link_pose(world, scene.robot, 0, base, NULL);
    for (int32_t f = 0; f < scene.foot_count; ++f) {
      double p[3];
      lcp_scene_foot_position(world, &scene, f, p);
      slide = fmax(slide, hypot(p[0] - m.feet_ref[f][0], p[1] - m.feet_ref[f][1]));
    }
    printf(" height_err_m=%.4f foot_slide_m=%.2g", fabs(base[2] - scene.stand_height), slide);
  }
  printf("\n");
  fflush(stdout);
  return 0;
}

/* The drop scene's figures: the deepest contact of the run and, at its end,
 * the fastest body. */
typedef struct drop_measure {
  double deepest, fastest;
  lcp_contact_info_t *contacts;
  int32_t capacity;
} drop_measure;

static int drop_measure_step(const lcp_world_t *world, drop_measure *m) {
  int32_t n = lcp_world_get_contacts(world, NULL, 0);
  if (n > m->capacity) {
    free(m->contacts);
    m->capacity = 2 * n;
    m->contacts = malloc(sizeof(lcp_contact_info_t) * (size_t)m->capacity);
    if (!m->contacts) {
      fprintf(stderr, "lcpsim-bench: out of memory\n");
      return LCP_ERR_NO_MEMORY;
    }
  }
  n = lcp_world_get_contacts(world, m->contacts, m->capacity);
  for (int32_t k = 0; k < n; ++k)
    m->deepest = fmax(m->deepest, m->contacts[k].depth);
  m->fastest = 0.0;
  lcp_body_id ids[1024];
  int32_t bodies = lcp_world_body_ids(world, ids, 1024);
  for (int32_t k = 0; k < bodies && k < 1024; ++k) {
    double v[3];
    if (lcp_body_get_velocity(world, ids[k], v, NULL) == LCP_OK)
      m->fastest = fmax(m->fastest, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
  }
  return LCP_OK;
}

/* Bodies of the drop scene that ended below the plate (its bottom face is
 * at z = −0.02 m). */
static int drop_tunnelled(const lcp_world_t *world) {
  lcp_body_id ids[1024];
  int32_t bodies = lcp_world_body_ids(world, ids, 1024), below = 0;
  for (int32_t k = 0; k < bodies && k < 1024; ++k) {
    double p[3];
    if (lcp_body_get_pose(world, ids[k], p, NULL) == LCP_OK && p[2] < -0.02)
      ++below;
  }
  return below;
}

static int run_once(const bench_options *o, bench_pass *pass) {
  robot_scene kind = robot_scene_of(o->scene);
  lcp_world_settings_t s = kind == NOT_ROBOT ? lcp_scene_settings() : lcp_scene_robot_settings();
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
  lcp_world_set_stage_timing(world, pass->profile);
  if (kind != NOT_ROBOT) {
    int result = run_robot_once(o, kind, world, pass);
    lcp_world_destroy(&world);
    return result;
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
  double *stage_sum = pass->stage_sum;
  double contacts = 0, iterations = 0, rows = 0, residual = 0;
  const bool drop = strcmp(o->scene, "drop") == 0;
  drop_measure dm = {0};
  double t0 = now_seconds(), measuring = 0.0;
  for (int32_t i = 0; i < steps; ++i) {
    rc = lcp_world_step(world);
    if (rc != LCP_OK) {
      fprintf(stderr, "lcpsim-bench: step %d: %s\n", (int)i, lcp_world_last_error(world));
      lcp_world_destroy(&world);
      return 1;
    }
    if (drop) {
      /* its figures are read between steps, outside the timing */
      double t = now_seconds();
      if (drop_measure_step(world, &dm) != LCP_OK) {
        lcp_world_destroy(&world);
        return 1;
      }
      measuring += now_seconds() - t;
    }
    lcp_step_stats_t st;
    lcp_world_get_stats(world, &st);
    for (int k = 0; pass->profile && k < LCP_STAGE_COUNT; ++k)
      stage_sum[k] += st.stage_seconds[k];
    contacts += st.contacts;
    iterations += st.iterations;
    rows += st.rows;
    residual = st.residual;
  }
  double elapsed = now_seconds() - t0 - measuring;
  if (pass->profile) {
    free(dm.contacts);
    lcp_world_destroy(&world);
    return 0;
  }
  double p[3];
  lcp_body_get_pose(world, info.top_body, p, NULL);
  double drift = sqrt((p[0] - info.top_position[0]) * (p[0] - info.top_position[0]) +
                      (p[1] - info.top_position[1]) * (p[1] - info.top_position[1]) +
                      (p[2] - info.top_position[2]) * (p[2] - info.top_position[2]));
  printf("scene=%s size=%d bodies=%d dofs=%d steps=%d us_per_step=%.1f contacts=%.1f rows=%.1f "
         "iterations=%.2f residual=%.3g drift_m=%.4f friction=%s solver=%s",
         o->scene, scene_size(o), (int)info.bodies, (int)info.dofs, (int)steps,
         1e6 * elapsed / steps, contacts / steps, rows / steps, iterations / steps, residual, drift,
         o->friction == LCP_FRICTION_CONE ? "cone" : "box",
         o->solver == LCP_SOLVER_PGS ? "pgs"
                                     : (o->solver == LCP_SOLVER_JACOBI ? "jacobi" : "direct"));
  for (int k = 0; k < LCP_STAGE_COUNT; ++k)
    printf(" us_%s=%.1f", lcp_stage_name((lcp_stage_t)k), 1e6 * stage_sum[k] / steps);
  if (drop)
    printf(" deepest_mm=%.2f tunnelled=%d rest_speed=%.3g", 1e3 * dm.deepest, drop_tunnelled(world),
           dm.fastest);
  printf("\n");
  fflush(stdout);
  lcp_world_destroy(&world);
  return 0;
}

/* lcpsim-bench rpc|batch [options]: the measurements are lcpsim-rpc-bench's
 * and lcpsim-batch-bench's (they need ZeroMQ and protobuf-c, which the
 * engine's benchmark does not link), run with daemons of their own: lcpsimd
 * with its built-in world on ephemeral ports, stopped at the end.
 * LCPSIM_RPC_BENCH, LCPSIM_BATCH_BENCH and LCPSIMD name other binaries than
 * those of this build. */
static int run_daemon_bench(const char *name, const char *bench_variable, const char *bench_path,
                            int argc, char **argv) {
#if defined(LCP_LCPSIMD_PATH)
  const char *bench = getenv(bench_variable), *daemon = getenv("LCPSIMD");
  bench = bench && *bench ? bench : bench_path;
  daemon = daemon && *daemon ? daemon : LCP_LCPSIMD_PATH;
  if (!bench) {
    fprintf(stderr, "lcpsim-bench %s: this build has no lcpsim-%s-bench\n", name, name);
    return 1;
  }
  bool help = false;
  for (int i = 2; i < argc; ++i)
    help = help || strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
  enum { MAX_ARGS = 64 };
  if (argc > MAX_ARGS) {
    fprintf(stderr, "lcpsim-bench %s: too many arguments\n", name);
    return 2;
  }
  const char *args[MAX_ARGS + 4];
  int n = 0;
  args[n++] = bench;
  if (!help) {
    args[n++] = "--start-daemon";
    args[n++] = daemon;
  }
  for (int i = 2; i < argc; ++i)
    args[n++] = argv[i];
  args[n] = NULL;
  fflush(stdout);
  execv(bench, (char *const *)args);
  fprintf(stderr, "lcpsim-bench %s: cannot run %s: %s\n", name, bench, strerror(errno));
  return 1;
#else
  (void)bench_variable;
  (void)bench_path;
  (void)argc;
  (void)argv;
  fprintf(stderr,
          "lcpsim-bench %s: this build has no daemon (ZeroMQ, protobuf-c or libuv missing)\n",
          name);
  return 1;
#endif
}

#ifndef LCP_RPC_BENCH_PATH
#define LCP_RPC_BENCH_PATH NULL
#endif
#ifndef LCP_BATCH_BENCH_PATH
#define LCP_BATCH_BENCH_PATH NULL
#endif

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "rpc") == 0)
    return run_daemon_bench("rpc", "LCPSIM_RPC_BENCH", LCP_RPC_BENCH_PATH, argc, argv);
  if (argc > 1 && strcmp(argv[1], "batch") == 0)
    return run_daemon_bench("batch", "LCPSIM_BATCH_BENCH", LCP_BATCH_BENCH_PATH, argc, argv);
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
    bench_pass pass = {.profile = true};
    int rc = run_once(&o, &pass);
    pass.profile = false;
    if (rc == 0)
      rc = run_once(&o, &pass);
    if (rc != 0)
      return rc;
  }
  return 0;
}
