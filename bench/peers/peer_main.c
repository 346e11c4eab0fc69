/* SPDX-License-Identifier: Apache-2.0 */
/* The measuring loop of the peer programs: the options, steps, timing and
 * key=value line of lcpsim-bench, around another engine's world. */
#include "peer.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out, const peer_engine *engine) {
  fprintf(out,
          "usage: lcpsim-bench-%s SCENE [options]\n"
          "  runs lcpsim-bench's SCENE in %s and prints one key=value line per run\n"
          "scenes: %s\n"
          "options:\n"
          "  -n, --size N          L of the pyramid, N of the pile (20, 1000)\n"
          "  -s, --steps N         steps per run (the scene's default)\n"
          "  -i, --iterations N    solver iterations (the scene's: 20)\n"
          "  -r, --runs N          repeat the run N times, one line each (1)\n"
          "%s"
          "      --scenes          print the scenes this engine runs and exit\n"
          "  -h, --help\n",
          engine->name, engine->name, engine->scenes, engine->option_help);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool runs_scene(const peer_engine *engine, const char *scene) {
  size_t n = strlen(scene);
  for (const char *s = engine->scenes; (s = strstr(s, scene)) != NULL; s += n)
    if ((s == engine->scenes || s[-1] == ' ') && (s[n] == '\0' || s[n] == ' '))
      return true;
  return false;
}

static double distance(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
              (a[2] - b[2]) * (a[2] - b[2]));
}

/* What a run measures besides the time. */
typedef struct run_figures {
  double contacts;
  double track_sq; /* arm: Σ (q − q*)² over steps and joints */
  int64_t track_count;
  double feet_settled[LCP_SCENE_MAX_FEET][3]; /* quadruped */
  double *links_before_last;                  /* chain: link origins before the last step */
} run_figures;

static const double origin[3] = {0.0, 0.0, 0.0};

static void record_links(const peer_engine *engine, void *world, const peer_scene *scene,
                         double *positions) {
  for (int32_t l = 0; l < scene->robot->link_count; ++l)
    engine->point(world, l, origin, positions + 3 * l);
}

/* Prints the scene's figures, as lcpsim-bench names them. */
static void print_figures(const peer_engine *engine, void *world, const peer_scene *scene,
                          const run_figures *f, int32_t steps) {
  if (scene->kind == PEER_SCENE_PYRAMID || scene->kind == PEER_SCENE_PILE) {
    double p[3];
    engine->point(world, scene->top_solid, origin, p);
    printf(" drift_m=%.4f", distance(p, scene->solids[scene->top_solid].position));
  } else if (scene->kind == PEER_SCENE_ARM) {
    /* the tip: the last link's far end, one link pitch (its joint's offset
     * from the previous one) up its axis */
    int32_t last = scene->robot->link_count - 1;
    double tip[3];
    engine->point(world, last, scene->robot->links[last].origin_position, tip);
    printf(" track_err_rad=%.4f tip_z_m=%.3f",
           sqrt(f->track_sq / (double)(f->track_count ? f->track_count : 1)), tip[2]);
  } else if (scene->kind == PEER_SCENE_CHAIN) {
    /* the speed of each link origin over the last step */
    double fastest = 0.0;
    for (int32_t l = 0; l < scene->robot->link_count && steps > 0; ++l) {
      double p[3];
      engine->point(world, l, origin, p);
      fastest = fmax(fastest, distance(p, f->links_before_last + 3 * l) / scene->settings.timestep);
    }
    printf(" rest_speed=%.3g", fastest);
  } else if (scene->kind == PEER_SCENE_QUADRUPED) {
    double base[3], slide = 0.0;
    engine->point(world, 0, origin, base);
    for (int32_t k = 0; k < scene->foot_count; ++k) {
      double p[3];
      engine->point(world, scene->foot_link[k], scene->foot_offset[k], p);
      slide = fmax(slide, hypot(p[0] - f->feet_settled[k][0], p[1] - f->feet_settled[k][1]));
    }
    printf(" height_err_m=%.4f foot_slide_m=%.2g", fabs(base[2] - scene->stand_height), slide);
  }
}

static int run_once(const peer_engine *engine, const peer_scene *scene,
                    const peer_options *options) {
  char error[512] = "";
  void *world = engine->create(scene, options, error, sizeof error);
  if (!world) {
    fprintf(stderr, "lcpsim-bench-%s: building %s: %s\n", engine->name, scene->name, error);
    return 1;
  }
  int32_t steps = options->steps > 0 ? options->steps : scene->steps;
  /* as lcpsim-bench: the feet are measured from the end of the first second
   * (or of the first fifth of a shorter run), when the drop has settled */
  int32_t settle = steps / 5 < 1000 ? steps / 5 : 1000;
  int32_t joints = scene->robot ? scene->joint_count : 0;
  int32_t links = scene->robot ? scene->robot->link_count : 0;
  double *scratch = calloc(2 * (size_t)joints + 3 * (size_t)links + 1, sizeof *scratch);
  if (!scratch) {
    engine->destroy(world);
    fprintf(stderr, "lcpsim-bench-%s: out of memory\n", engine->name);
    return 1;
  }
  double *targets = scratch, *q = scratch + joints;
  run_figures f = {.links_before_last = scratch + 2 * joints};
  double t0 = now_seconds();
  for (int32_t i = 0; i < steps; ++i) {
    if (scene->controlled) {
      peer_scene_targets(scene, i * scene->settings.timestep, targets);
      engine->set_targets(world, targets);
    }
    if (scene->kind == PEER_SCENE_CHAIN && i + 1 == steps)
      record_links(engine, world, scene, f.links_before_last);
    int contacts = engine->step(world);
    if (contacts < 0) {
      fprintf(stderr, "lcpsim-bench-%s: step %d failed\n", engine->name, (int)i);
      free(scratch);
      engine->destroy(world);
      return 1;
    }
    f.contacts += contacts;
    if (scene->kind == PEER_SCENE_ARM) {
      engine->joint_positions(world, q);
      peer_scene_targets(scene, (i + 1) * scene->settings.timestep, targets);
      for (int32_t j = 0; j < joints; ++j) {
        f.track_sq += (q[j] - targets[j]) * (q[j] - targets[j]);
        f.track_count++;
      }
    } else if (scene->kind == PEER_SCENE_QUADRUPED && i + 1 == settle) {
      for (int32_t k = 0; k < scene->foot_count; ++k)
        engine->point(world, scene->foot_link[k], scene->foot_offset[k], f.feet_settled[k]);
    }
  }
  double elapsed = now_seconds() - t0;
  int32_t bodies = scene->robot ? links : scene->solid_count;
  int32_t dofs = scene->robot ? (scene->robot->floating_base ? 6 : 0) + joints : 6 * bodies;
  printf("scene=%s engine=%s", scene->name, engine->name);
  if (!scene->robot)
    printf(" size=%d", (int)scene->size);
  printf(" bodies=%d dofs=%d steps=%d us_per_step=%.2f contacts=%.1f iterations=%d%s", (int)bodies,
         (int)dofs, (int)steps, steps ? 1e6 * elapsed / steps : 0.0,
         steps ? f.contacts / steps : 0.0,
         (int)(options->iterations > 0 ? options->iterations : scene->settings.iterations),
         engine->describe(world));
  print_figures(engine, world, scene, &f, steps);
  printf("\n");
  fflush(stdout);
  free(scratch);
  engine->destroy(world);
  return 0;
}

int peer_main(int argc, char **argv, const peer_engine *engine) {
  peer_options o = {.runs = 1};
  enum { OPT_SOLVER = 256, OPT_CONE, OPT_INTEGRATOR, OPT_OMEGA, OPT_SCENES };
  static const struct option long_options[] = {
      {"size", required_argument, NULL, 'n'},
      {"steps", required_argument, NULL, 's'},
      {"iterations", required_argument, NULL, 'i'},
      {"runs", required_argument, NULL, 'r'},
      {"solver", required_argument, NULL, OPT_SOLVER},
      {"cone", required_argument, NULL, OPT_CONE},
      {"integrator", required_argument, NULL, OPT_INTEGRATOR},
      {"omega", required_argument, NULL, OPT_OMEGA},
      {"scenes", no_argument, NULL, OPT_SCENES},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "n:s:i:r:h", long_options, NULL)) != -1) {
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
    case 'r':
      o.runs = atoi(optarg);
      break;
    case OPT_SOLVER:
      o.solver = optarg;
      break;
    case OPT_CONE:
      o.cone = optarg;
      break;
    case OPT_INTEGRATOR:
      o.integrator = optarg;
      break;
    case OPT_OMEGA:
      o.omega = atof(optarg);
      break;
    case OPT_SCENES:
      printf("%s\n", engine->scenes);
      return 0;
    case 'h':
      usage(stdout, engine);
      return 0;
    default:
      usage(stderr, engine);
      return 2;
    }
  }
  if (optind >= argc) {
    usage(stderr, engine);
    return 2;
  }
  o.scene = argv[optind];
  if (!runs_scene(engine, o.scene)) {
    fprintf(stderr, "lcpsim-bench-%s: does not run '%s' (it runs: %s)\n", engine->name, o.scene,
            engine->scenes);
    return 2;
  }
  peer_scene scene;
  char error[512] = "";
  if (peer_scene_build(o.scene, o.size, &scene, error, sizeof error) != LCP_OK) {
    fprintf(stderr, "lcpsim-bench-%s: %s\n", engine->name, error);
    return 1;
  }
  int rc = 0;
  for (int r = 0; r < (o.runs > 0 ? o.runs : 1) && rc == 0; ++r)
    rc = run_once(engine, &scene, &o);
  peer_scene_free(&scene);
  return rc;
}
