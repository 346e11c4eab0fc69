/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd: the lcpsim simulation daemon. Parses the command
 * line, builds the world, serves it until SIGINT or SIGTERM. */
#define _XOPEN_SOURCE 700 /* realpath (an XSI interface in glibc) */

#include "auth.h"
#include "handlers.h"
#include "log.h"
#include "recording.h"
#include "replay.h"
#include "scene.h"
#include "scene_file.h"
#include "server.h"
#include "sim.h"

#include "lcpsim/urdf.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define DEFAULT_BIND "tcp://127.0.0.1:5555"
#define DEFAULT_PUB "tcp://127.0.0.1:5556"
#define DEFAULT_MAX_MESSAGE_BYTES (16 * 1024 * 1024)
/* --busy-poll-us: after a reply the daemon polls its socket for this long
 * before it sleeps in the event loop, so a client in a control loop, which
 * sends its next request well within it, is answered without the wake-up
 * latency of a sleeping thread (README.md, Performance, has the figures). An
 * idle daemon does not poll at all. */
#define DEFAULT_BUSY_POLL_US 100
/* The most a reply or a published state may occupy while it is built. */
#define REPLY_LIMIT_BYTES ((size_t)512 << 20)
/* --max-clients, --idle-timeout (0: none) and --max-memory (Redis's
 * maxclients, timeout and maxmemory play the same parts). */
#define DEFAULT_MAX_CLIENTS 1000
#define DEFAULT_IDLE_TIMEOUT_S 0
/* In an AddressSanitizer build the resident memory is mostly the
 * sanitizer's (shadow memory and the quarantine of freed blocks, hundreds of
 * MiB after a long run), not what peers made the daemon hold: the watch
 * would close healthy connections, so it is off unless asked for. */
#if defined(__SANITIZE_ADDRESS__)
#define LCPD_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LCPD_ADDRESS_SANITIZER 1
#endif
#endif
#ifdef LCPD_ADDRESS_SANITIZER
#define DEFAULT_MAX_MEMORY_MIB 0
#else
#define DEFAULT_MAX_MEMORY_MIB 256
#endif
/* Descriptors kept free beyond --max-clients: files, the event loop, ZeroMQ's
 * own, and connections accepted only to be refused. */
#define DESCRIPTOR_HEADROOM 64
#define MAX_URDFS 64
#define MAX_PACKAGES 256
#define MAX_MODEL_PATHS 64
#define MAX_AUTHORIZED_KEYS 16

/* A --urdf option with the --urdf-pose and --urdf-name that follow it. */
typedef struct urdf_option {
  const char *path;
  const char *name; /* NULL: the URDF's, made unique */
  bool has_pose;    /* false: resting on the ground */
  double position[3];
  double orientation[4];
} urdf_option;

typedef struct options {
  const char *bind;
  const char *pub;
  const char *world;
  urdf_option urdfs[MAX_URDFS];
  int urdf_count;
  lcp_urdf_package_t packages[MAX_PACKAGES]; /* --package-path NAME=DIR */
  int package_count;
  const char *model_paths[MAX_MODEL_PATHS]; /* --model-path DIR */
  int model_path_count;
  bool mode_given;
  lcpd_mode_t mode;
  bool rate_given;
  double rate;
  bool timestep_given;
  double timestep;
  long long max_message_bytes;
  long long max_decode_bytes; /* 0: derived from max_message_bytes */
  long long busy_poll_us;
  long long max_steps_per_request;
  long long max_clients;
  double idle_timeout_s;
  long long max_memory_mib;
  long long workers; /* 0: uv_available_parallelism() */
  long long max_worlds;
  long long max_world_bytes; /* 0: 3/4 of --max-memory, else 1 GiB */
  lcpd_log_level_t log_level;
  /* Authentication (auth.h). */
  const char *curve_secret_key;
  const char *authorized_keys[MAX_AUTHORIZED_KEYS];
  int authorized_keys_count;
  bool insecure;
  const char *gen_keys;   /* --gen-keys NAME: write keys and exit */
  const char *http;       /* --http HOST:PORT; NULL: off */
  const char *viewer_dir; /* --viewer-dir DIR */
  lcpd_role_t key_role;
  /* Recordings (recording.h) and replay (replay.h). */
  const char *record, *record_dir, *replay;
  long long record_every, record_max_bytes;
  bool record_contacts;
  double replay_speed;
} options;

static void usage(FILE *out) {
  fprintf(out,
          "usage: lcpsimd [OPTION]...\n"
          "Serve an lcpsim physics world over ZeroMQ + protobuf (package lcpsim.v1).\n"
          "\n"
          "  --bind ENDPOINT          request socket (ROUTER) [" DEFAULT_BIND "]\n"
          "  --pub ENDPOINT           state stream (PUB) [" DEFAULT_PUB "]\n"
          "                           port 0 picks a free port; the first line of output\n"
          "                           names the endpoints as bound\n"
          "  --world FILE             load a scene file (README.md, 'Scene files')\n"
          "  --urdf FILE              add a robot from a URDF file (repeatable; base fixed or\n"
          "                           floating as the file says); unless --urdf-pose\n"
          "                           follows, upright, resting on the ground, in a row\n"
          "                           along +y with the others; a name that is taken gets\n"
          "                           a suffix (quadruped_2)\n"
          "  --urdf-pose X,Y,Z[,ROLL,PITCH,YAW]\n"
          "                           base pose of the preceding --urdf (m, rad)\n"
          "  --urdf-name NAME         name of the preceding --urdf's robot\n"
          "  --package-path NAME=DIR  package://NAME/... is DIR/... (repeatable); then the\n"
          "                           directories of ROS_PACKAGE_PATH are searched\n"
          "  --model-path DIR         LoadModel reads URDF and mesh files only below DIR\n"
          "                           (repeatable; symbolic links and '..' resolved) and\n"
          "                           below the package directories [the shipped robots']\n"
          "  --mode lockstep|realtime step when asked (default) or at rate x wall clock\n"
          "  --rate R                 realtime mode: simulated seconds per second [1]\n"
          "  --timestep H             step length in seconds [the scene's, else 1/240]\n"
          "  --max-message-bytes N    largest request, all its frames together; a larger\n"
          "                           one is refused, and a peer sending a larger frame\n"
          "                           is disconnected [%d]\n"
          "  --max-decode-bytes N     memory a decoded request may use [4 x the above + 1 MiB]\n"
          "  --log-level LEVEL        error, warning, info (default) or debug\n"
          "  --busy-poll-us N         lockstep mode: after answering, look for the next\n"
          "                           request for up to N microseconds (yielding the CPU\n"
          "                           between looks) before sleeping; 0 turns it off [%d]\n"
          "  --max-steps-per-request N  the most steps one Step request may ask for; a\n"
          "                           larger one is refused [%d]\n"
          "  --max-clients N          connections at once; one more is closed when it\n"
          "                           comes (kept below the descriptor limit) [%d]\n"
          "  --idle-timeout S         close a connection that sent no request for S\n"
          "                           seconds (not while a Step runs); 0: never [%d]\n"
          "  --max-memory MIB         resident memory bound: above 3/4 of it, the connection\n"
          "                           making the daemon hold the most (requests not yet\n"
          "                           read, replies not yet taken) is closed; 0: no watch\n"
          "                           [%d]\n"
          "\n"
          "Worlds (docs/worlds.md):\n"
          "  --workers N              BatchStep's worker threads, 1 to %d [the cores this\n"
          "                           process may use]\n"
          "  --max-worlds N           the most worlds, the default one counted [%d]\n"
          "  --max-world-memory BYTES the most memory all worlds may hold together, counted\n"
          "                           from their sizes (docs/worlds.md) [3/4 of --max-memory\n"
          "                           when that is not 0, else 1 GiB]\n"
          "\n"
          "HTTP (docs/viewer.md):\n"
          "  --http HOST:PORT         serve the browser viewer, its WebSocket (/ws), /metrics\n"
          "                           and /healthz there (127.0.0.1:8080; port 0 picks one,\n"
          "                           named on the first line as http=URL); off by default.\n"
          "                           No authentication: beyond the loopback only with\n"
          "                           --insecure\n"
          "  --viewer-dir DIR         the viewer's files [share/lcpsim/viewer]\n"
          "\n"
          "Authentication (docs/security.md):\n"
          "  --curve-secret-key FILE  CURVE on both sockets with the server key pair in FILE\n"
          "                           (a NAME.key from --gen-keys); needs --authorized-keys\n"
          "  --authorized-keys PATH   the allow-list: a file of lines `<public key> ROLE` (ROLE:\n"
          "                           controller or observer), a NAME.pub, or a directory of\n"
          "                           .pub files (role = observer in a .pub makes it an\n"
          "                           observer; else controller); repeatable, the keys add up\n"
          "  --insecure               allow binding a non-loopback address without CURVE\n"
          "  --gen-keys NAME          write a new key pair to NAME.key (secret, mode 0600) and\n"
          "                           NAME.pub (public), then exit\n"
          "  --key-role ROLE          with --gen-keys: observer writes `role = observer` into\n"
          "                           NAME.pub [controller]\n"
          "\n"
          "Recordings (docs/viewer.md, 'Recordings'):\n"
          "  --record FILE            record the world and its states to FILE from the start\n"
          "                           (created or replaced)\n"
          "  --record-every K         a state every K steps [1]\n"
          "  --record-contacts        the states carry their contacts\n"
          "  --record-dir DIR         the Record call may write new files below DIR (none\n"
          "                           by default: it may only stop a recording)\n"
          "  --record-max-bytes N     a recording stops before it grows past N bytes [none]\n"
          "  --replay FILE            play a recording to --pub instead of simulating; exits\n"
          "                           when played\n"
          "  --replay-speed X         simulated seconds per second of the replay [1]\n"
          "\n"
          "Other:\n"
          "  --help                   show this and exit\n"
          "  --version                show the version and exit\n"
          "\n"
          "With neither --world nor --urdf it serves a built-in world: ground, the 7-dof arm\n"
          "'arm7' on a fixed base, a table and a box on it.\n",
          DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_BUSY_POLL_US, LCPD_DEFAULT_MAX_STEPS_PER_REQUEST,
          DEFAULT_MAX_CLIENTS, DEFAULT_IDLE_TIMEOUT_S, DEFAULT_MAX_MEMORY_MIB, LCPD_MAX_WORKERS,
          LCPD_DEFAULT_MAX_WORLDS);
}

static bool parse_double(const char *text, double *out) {
  char *end;
  errno = 0;
  double value = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(value))
    return false;
  *out = value;
  return true;
}

static bool parse_count(const char *text, long long *out) {
  char *end;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 1)
    return false;
  *out = value;
  return true;
}

/* "x,y,z" or "x,y,z,roll,pitch,yaw" (finite numbers). */
static bool parse_pose(const char *text, double position[3], double orientation[4]) {
  double v[6] = {0, 0, 0, 0, 0, 0};
  int count = 0;
  const char *p = text;
  for (;;) {
    if (count == 6)
      return false;
    char *end;
    errno = 0;
    v[count] = strtod(p, &end);
    if (errno != 0 || end == p || !isfinite(v[count]))
      return false;
    ++count;
    if (*end == '\0')
      break;
    if (*end != ',')
      return false;
    p = end + 1;
  }
  if (count != 3 && count != 6)
    return false;
  memcpy(position, v, 3 * sizeof *v);
  lcp_quat_from_rpy(&v[3], orientation);
  return true;
}

/* Returns -1 to exit 0 (help, version), 0 to run, 2 on a usage error. */
static int parse_options(int argc, char **argv, options *o) {
  enum {
    OPT_BIND = 256,
    OPT_PUB,
    OPT_WORLD,
    OPT_URDF,
    OPT_URDF_POSE,
    OPT_URDF_NAME,
    OPT_PACKAGE_PATH,
    OPT_MODEL_PATH,
    OPT_MODE,
    OPT_RATE,
    OPT_TIMESTEP,
    OPT_MAX_MESSAGE,
    OPT_MAX_DECODE,
    OPT_LOG_LEVEL,
    OPT_BUSY_POLL,
    OPT_MAX_STEPS,
    OPT_CURVE_SECRET_KEY,
    OPT_AUTHORIZED_KEYS,
    OPT_INSECURE,
    OPT_GEN_KEYS,
    OPT_KEY_ROLE,
    OPT_MAX_CLIENTS,
    OPT_IDLE_TIMEOUT,
    OPT_MAX_MEMORY,
    OPT_WORKERS,
    OPT_MAX_WORLDS,
    OPT_MAX_WORLD_MEMORY,
    OPT_RECORD,
    OPT_RECORD_EVERY,
    OPT_RECORD_CONTACTS,
    OPT_RECORD_DIR,
    OPT_RECORD_MAX_BYTES,
    OPT_REPLAY,
    OPT_REPLAY_SPEED,

    OPT_HTTP,
    OPT_VIEWER_DIR,
    OPT_HELP,
    OPT_VERSION
  };
  static const struct option long_options[] = {
      {"bind", required_argument, NULL, OPT_BIND},
      {"pub", required_argument, NULL, OPT_PUB},
      {"world", required_argument, NULL, OPT_WORLD},
      {"urdf", required_argument, NULL, OPT_URDF},
      {"urdf-pose", required_argument, NULL, OPT_URDF_POSE},
      {"urdf-name", required_argument, NULL, OPT_URDF_NAME},
      {"package-path", required_argument, NULL, OPT_PACKAGE_PATH},
      {"model-path", required_argument, NULL, OPT_MODEL_PATH},
      {"mode", required_argument, NULL, OPT_MODE},
      {"rate", required_argument, NULL, OPT_RATE},
      {"timestep", required_argument, NULL, OPT_TIMESTEP},
      {"max-message-bytes", required_argument, NULL, OPT_MAX_MESSAGE},
      {"max-decode-bytes", required_argument, NULL, OPT_MAX_DECODE},
      {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
      {"busy-poll-us", required_argument, NULL, OPT_BUSY_POLL},
      {"max-steps-per-request", required_argument, NULL, OPT_MAX_STEPS},
      {"curve-secret-key", required_argument, NULL, OPT_CURVE_SECRET_KEY},
      {"authorized-keys", required_argument, NULL, OPT_AUTHORIZED_KEYS},
      {"insecure", no_argument, NULL, OPT_INSECURE},
      {"gen-keys", required_argument, NULL, OPT_GEN_KEYS},
      {"key-role", required_argument, NULL, OPT_KEY_ROLE},
      {"max-clients", required_argument, NULL, OPT_MAX_CLIENTS},
      {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
      {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
      {"workers", required_argument, NULL, OPT_WORKERS},
      {"max-worlds", required_argument, NULL, OPT_MAX_WORLDS},
      {"max-world-memory", required_argument, NULL, OPT_MAX_WORLD_MEMORY},
      {"record", required_argument, NULL, OPT_RECORD},
      {"record-every", required_argument, NULL, OPT_RECORD_EVERY},
      {"record-contacts", no_argument, NULL, OPT_RECORD_CONTACTS},
      {"record-dir", required_argument, NULL, OPT_RECORD_DIR},
      {"record-max-bytes", required_argument, NULL, OPT_RECORD_MAX_BYTES},
      {"replay", required_argument, NULL, OPT_REPLAY},
      {"replay-speed", required_argument, NULL, OPT_REPLAY_SPEED},

      {"http", required_argument, NULL, OPT_HTTP},
      {"viewer-dir", required_argument, NULL, OPT_VIEWER_DIR},
      {"help", no_argument, NULL, OPT_HELP},
      {"version", no_argument, NULL, OPT_VERSION},
      {NULL, 0, NULL, 0},
  };
  *o = (options){.bind = DEFAULT_BIND,
                 .pub = DEFAULT_PUB,
                 .max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES,
                 .busy_poll_us = DEFAULT_BUSY_POLL_US,
                 .max_steps_per_request = LCPD_DEFAULT_MAX_STEPS_PER_REQUEST,
                 .max_clients = DEFAULT_MAX_CLIENTS,
                 .max_worlds = LCPD_DEFAULT_MAX_WORLDS,
                 .idle_timeout_s = DEFAULT_IDLE_TIMEOUT_S,
                 .max_memory_mib = DEFAULT_MAX_MEMORY_MIB,
                 .record_every = 1,
                 .replay_speed = 1.0,
                 .log_level = LCPD_LOG_INFO};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_BIND:
      o->bind = optarg;
      break;
    case OPT_PUB:
      o->pub = optarg;
      break;
    case OPT_WORLD:
      o->world = optarg;
      break;
    case OPT_URDF:
      if (o->urdf_count == MAX_URDFS) {
        fprintf(stderr, "lcpsimd: at most %d --urdf options\n", MAX_URDFS);
        return 2;
      }
      o->urdfs[o->urdf_count++] = (urdf_option){.path = optarg};
      break;
    case OPT_URDF_POSE:
    case OPT_URDF_NAME: {
      const char *option = c == OPT_URDF_POSE ? "--urdf-pose" : "--urdf-name";
      if (o->urdf_count == 0) {
        fprintf(stderr, "lcpsimd: %s applies to the --urdf before it, and there is none\n", option);
        return 2;
      }
      urdf_option *u = &o->urdfs[o->urdf_count - 1];
      if (c == OPT_URDF_NAME) {
        if (u->name) {
          fprintf(stderr, "lcpsimd: --urdf %s has a second --urdf-name\n", u->path);
          return 2;
        }
        if (optarg[0] == '\0' || strlen(optarg) >= LCP_NAME_MAX) {
          fprintf(stderr, "lcpsimd: --urdf-name must have 1 to %d characters, not '%s'\n",
                  LCP_NAME_MAX - 1, optarg);
          return 2;
        }
        u->name = optarg;
      } else {
        if (u->has_pose) {
          fprintf(stderr, "lcpsimd: --urdf %s has a second --urdf-pose\n", u->path);
          return 2;
        }
        if (!parse_pose(optarg, u->position, u->orientation)) {
          fprintf(stderr,
                  "lcpsimd: --urdf-pose must be x,y,z or x,y,z,roll,pitch,yaw (m, rad), not "
                  "'%s'\n",
                  optarg);
          return 2;
        }
        u->has_pose = true;
      }
      break;
    }
    case OPT_PACKAGE_PATH: {
      const char *equals = strchr(optarg, '=');
      if (!equals || equals == optarg || !equals[1]) {
        fprintf(stderr, "lcpsimd: --package-path must be NAME=DIR, not '%s'\n", optarg);
        return 2;
      }
      if (o->package_count == MAX_PACKAGES) {
        fprintf(stderr, "lcpsimd: at most %d --package-path options\n", MAX_PACKAGES);
        return 2;
      }
      /* NAME=DIR split in place: getopt's argv is ours to write. */
      char *name = optarg;
      name[equals - optarg] = '\0';
      struct stat info;
      if (stat(equals + 1, &info) != 0 || !S_ISDIR(info.st_mode)) {
        fprintf(stderr, "lcpsimd: --package-path %s=%s: '%s' is not a directory\n", name,
                equals + 1, equals + 1);
        return 2;
      }
      o->packages[o->package_count++] = (lcp_urdf_package_t){name, equals + 1};
      break;
    }
    case OPT_MODEL_PATH: {
      struct stat info;
      if (o->model_path_count == MAX_MODEL_PATHS) {
        fprintf(stderr, "lcpsimd: at most %d --model-path options\n", MAX_MODEL_PATHS);
        return 2;
      }
      if (stat(optarg, &info) != 0 || !S_ISDIR(info.st_mode)) {
        fprintf(stderr, "lcpsimd: --model-path %s: not a directory\n", optarg);
        return 2;
      }
      o->model_paths[o->model_path_count++] = optarg;
      break;
    }
    case OPT_MODE:
      o->mode_given = true;
      if (strcmp(optarg, "lockstep") == 0) {
        o->mode = LCPD_MODE_LOCKSTEP;
      } else if (strcmp(optarg, "realtime") == 0) {
        o->mode = LCPD_MODE_REALTIME;
      } else {
        fprintf(stderr, "lcpsimd: --mode must be lockstep or realtime, not '%s'\n", optarg);
        return 2;
      }
      break;
    case OPT_RATE:
      o->rate_given = true;
      if (!parse_double(optarg, &o->rate)) {
        fprintf(stderr, "lcpsimd: --rate must be a number > 0, not '%s'\n", optarg);
        return 2;
      }
      break;
    case OPT_TIMESTEP:
      o->timestep_given = true;
      if (!parse_double(optarg, &o->timestep)) {
        fprintf(stderr, "lcpsimd: --timestep must be a number of seconds, not '%s'\n", optarg);
        return 2;
      }
      break;
    case OPT_MAX_MESSAGE:
      if (!parse_count(optarg, &o->max_message_bytes)) {
        fprintf(stderr, "lcpsimd: --max-message-bytes must be a whole number > 0, not '%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_MAX_DECODE:
      if (!parse_count(optarg, &o->max_decode_bytes)) {
        fprintf(stderr, "lcpsimd: --max-decode-bytes must be a whole number > 0, not '%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_LOG_LEVEL:
      if (!lcpd_log_parse_level(optarg, &o->log_level)) {
        fprintf(stderr, "lcpsimd: --log-level must be error, warning, info or debug, not '%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_BUSY_POLL: {
      char *end;
      errno = 0;
      o->busy_poll_us = strtoll(optarg, &end, 10);
      if (errno != 0 || end == optarg || *end != '\0' || o->busy_poll_us < 0 ||
          o->busy_poll_us > LCPD_MAX_BUSY_POLL_US) {
        fprintf(stderr, "lcpsimd: --busy-poll-us must be a whole number from 0 to %d, not '%s'\n",
                LCPD_MAX_BUSY_POLL_US, optarg);
        return 2;
      }
      break;
    }
    case OPT_MAX_STEPS:
      if (!parse_count(optarg, &o->max_steps_per_request) || o->max_steps_per_request > INT32_MAX) {
        fprintf(stderr,
                "lcpsimd: --max-steps-per-request must be a whole number from 1 to %d, not '%s'\n",
                INT32_MAX, optarg);
        return 2;
      }
      break;
    case OPT_CURVE_SECRET_KEY:
      o->curve_secret_key = optarg;
      break;
    case OPT_AUTHORIZED_KEYS:
      if (o->authorized_keys_count == MAX_AUTHORIZED_KEYS) {
        fprintf(stderr, "lcpsimd: at most %d --authorized-keys options\n", MAX_AUTHORIZED_KEYS);
        return 2;
      }
      o->authorized_keys[o->authorized_keys_count++] = optarg;
      break;
    case OPT_INSECURE:
      o->insecure = true;
      break;
    case OPT_HTTP:
      o->http = optarg;
      break;
    case OPT_VIEWER_DIR:
      o->viewer_dir = optarg;
      break;
    case OPT_GEN_KEYS:
      o->gen_keys = optarg;
      break;
    case OPT_KEY_ROLE:
      if (strcmp(optarg, "controller") != 0 && strcmp(optarg, "observer") != 0) {
        fprintf(stderr, "lcpsimd: --key-role must be controller or observer, not '%s'\n", optarg);
        return 2;
      }
      o->key_role = optarg[0] == 'o' ? LCPD_ROLE_OBSERVER : LCPD_ROLE_CONTROLLER;
      break;
    case OPT_MAX_CLIENTS:
      if (!parse_count(optarg, &o->max_clients) || o->max_clients > 1000000) {
        fprintf(stderr,
                "lcpsimd: --max-clients must be a whole number from 1 to 1000000, not "
                "'%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_IDLE_TIMEOUT:
      if (!parse_double(optarg, &o->idle_timeout_s) || o->idle_timeout_s < 0 ||
          o->idle_timeout_s > 1e6) {
        fprintf(stderr,
                "lcpsimd: --idle-timeout must be seconds from 0 (never) to 1e6, not "
                "'%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_MAX_MEMORY: {
      char *end;
      errno = 0;
      o->max_memory_mib = strtoll(optarg, &end, 10);
      if (errno != 0 || end == optarg || *end != '\0' || o->max_memory_mib < 0 ||
          o->max_memory_mib > (1LL << 30)) {
        fprintf(stderr,
                "lcpsimd: --max-memory must be a whole number of MiB (0: no watch), not "
                "'%s'\n",
                optarg);
        return 2;
      }
      break;
    }
    case OPT_WORKERS:
      if (!parse_count(optarg, &o->workers) || o->workers > LCPD_MAX_WORKERS) {
        fprintf(stderr, "lcpsimd: --workers must be a whole number from 1 to %d, not '%s'\n",
                LCPD_MAX_WORKERS, optarg);
        return 2;
      }
      break;
    case OPT_MAX_WORLDS:
      if (!parse_count(optarg, &o->max_worlds) || o->max_worlds > 1000000) {
        fprintf(stderr,
                "lcpsimd: --max-worlds must be a whole number from 1 to 1000000 (the default "
                "world counted), not '%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_MAX_WORLD_MEMORY:
      if (!parse_count(optarg, &o->max_world_bytes)) {
        fprintf(stderr, "lcpsimd: --max-world-memory must be a whole number of bytes, not '%s'\n",
                optarg);
        return 2;
      }
      break;
    case OPT_RECORD:
      o->record = optarg;
      break;
    case OPT_RECORD_DIR:
      o->record_dir = optarg;
      break;
    case OPT_REPLAY:
      o->replay = optarg;
      break;
    case OPT_RECORD_CONTACTS:
      o->record_contacts = true;
      break;
    case OPT_RECORD_EVERY:
    case OPT_RECORD_MAX_BYTES:
      if (!parse_count(optarg, c == OPT_RECORD_EVERY ? &o->record_every : &o->record_max_bytes) ||
          (c == OPT_RECORD_EVERY && o->record_every > UINT32_MAX)) {
        fprintf(stderr, "lcpsimd: %s must be a whole number > 0, not '%s'\n",
                c == OPT_RECORD_EVERY ? "--record-every" : "--record-max-bytes", optarg);
        return 2;
      }
      break;
    case OPT_REPLAY_SPEED:
      if (!parse_double(optarg, &o->replay_speed) || !(o->replay_speed > 0)) {
        fprintf(stderr, "lcpsimd: --replay-speed must be a number > 0, not '%s'\n", optarg);
        return 2;
      }
      break;
    case OPT_HELP:
      usage(stdout);
      return -1;
    case OPT_VERSION:
      printf("lcpsimd %s (protocol lcpsim.v1)\n", LCP_VERSION_STRING);
      return -1;
    default:
      if (optopt >= OPT_BIND)
        fprintf(stderr, "lcpsimd: option '%s' needs a value\n", argv[optind - 1]);
      else
        fprintf(stderr, "lcpsimd: unknown option '%s'\n", argv[optind - 1]);
      fprintf(stderr, "Try 'lcpsimd --help'.\n");
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "lcpsimd: unexpected argument '%s'\nTry 'lcpsimd --help'.\n", argv[optind]);
    return 2;
  }
  if (!o->curve_secret_key != !o->authorized_keys_count) {
    fprintf(stderr, "lcpsimd: --curve-secret-key and --authorized-keys go together: CURVE needs "
                    "the server's key pair and the allow-list of clients' keys\n");
    return 2;
  }
  /* The settings the options give, by the rules every way in applies; the
   * options are named after the settings, as the messages are. */
  lcp_world_settings_t settings = lcp_world_settings_default();
  if (o->timestep_given)
    settings.timestep = o->timestep;
  lcpd_error_t error;
  if (lcpd_settings_validate(&settings, o->rate_given ? o->rate : 1.0, &error) != LCP_OK) {
    fprintf(stderr, "lcpsimd: --%s\n", error.message);
    return 2;
  }
  return 0;
}

static void log_urdf_warning(void *user, lcp_log_level_t level, const char *message) {
  (void)user;
  lcpd_log(level <= LCP_LOG_WARNING ? LCPD_LOG_WARNING : LCPD_LOG_DEBUG, "%s", message);
}

/* The box around a robot's collision geoms when it is added at the origin,
 * at its initial joint values; found in a scratch world (the robot's own, so
 * nothing else in the scene is disturbed). A robot without geoms: a point. */
static int robot_box(const lcp_robot_def_t *def, double lo[3], double hi[3], lcpd_error_t *error) {
  lcp_world_t *scratch = NULL;
  lcp_world_settings_t settings = lcp_world_settings_default();
  int rc = lcp_world_create(&settings, &scratch);
  if (rc != LCP_OK)
    return lcpd_fail(error, rc, "robot '%s': cannot place it (no memory)", def->name);
  const double origin[3] = {0, 0, 0}, identity[4] = {1, 0, 0, 0};
  lcp_robot_id id;
  rc = lcp_robot_add(scratch, def, origin, identity, &id);
  if (rc == LCP_OK)
    rc = lcp_robot_get_aabb(scratch, id, lo, hi);
  if (rc == LCP_ERR_NOT_FOUND) { /* no collision geometry */
    rc = LCP_OK;
    memset(lo, 0, 3 * sizeof *lo);
    memset(hi, 0, 3 * sizeof *hi);
  }
  if (rc != LCP_OK)
    lcpd_fail(error, rc, "robot '%s': %s", def->name, lcp_world_last_error(scratch));
  lcp_world_destroy(&scratch);
  return rc;
}

/* Robots given without --urdf-pose stand in a row along +y, this far apart
 * (box to box), so that no two start inside each other. */
#define URDF_ROW_GAP 0.25

/* The package:// lookup of --urdf and LoadModel: --package-path, then the
 * directories of ROS_PACKAGE_PATH. */
typedef struct package_config {
  char **ros_paths; /* lcp_urdf_split_package_path's block */
  int32_t ros_path_count;
} package_config;

static void set_packages(lcp_urdf_options_t *urdf_options, const options *o,
                         const package_config *packages) {
  urdf_options->packages = o->packages;
  urdf_options->package_count = o->package_count;
  urdf_options->package_paths = (const char *const *)packages->ros_paths;
  urdf_options->package_path_count = packages->ros_path_count;
}

/* The roots LoadModel's files must lie below (sim.h, model_roots), as
 * realpaths: --model-path, else the shipped robots' directory; then every
 * package directory the daemon knows (--package-path, ROS_PACKAGE_PATH),
 * so that their package:// meshes can be read. */
typedef struct model_roots {
  char **paths;
  int32_t count;
} model_roots;

static void model_roots_free(model_roots *roots) {
  for (int32_t i = 0; i < roots->count; ++i)
    free(roots->paths[i]);
  free(roots->paths);
  *roots = (model_roots){0};
}

static void add_model_root(model_roots *roots, const char *dir) {
  char *resolved = realpath(dir, NULL);
  struct stat info;
  if (!resolved || stat(resolved, &info) != 0 || !S_ISDIR(info.st_mode)) {
    free(resolved);
    return;
  }
  roots->paths[roots->count++] = resolved;
}

static int build_model_roots(const options *o, const package_config *packages, model_roots *roots) {
  size_t most =
      (size_t)o->model_path_count + 1 + (size_t)o->package_count + (size_t)packages->ros_path_count;
  *roots = (model_roots){calloc(most, sizeof(char *)), 0};
  if (!roots->paths)
    return LCP_ERR_NO_MEMORY;
  for (int i = 0; i < o->model_path_count; ++i)
    add_model_root(roots, o->model_paths[i]);
  if (o->model_path_count == 0) {
    char dir[4096], why[1024];
    if (lcp_shipped_robots_dir(dir, sizeof dir, why, sizeof why) == LCP_OK)
      add_model_root(roots, dir);
    else
      LCPD_WARN("LoadModel by path: %s", why);
  }
  for (int i = 0; i < o->package_count; ++i)
    add_model_root(roots, o->packages[i].dir);
  for (int32_t i = 0; i < packages->ros_path_count; ++i)
    add_model_root(roots, packages->ros_paths[i]);
  for (int32_t i = 0; i < roots->count; ++i)
    LCPD_DEBUG("LoadModel may read files below %s", roots->paths[i]);
  return LCP_OK;
}

static bool scene_name_taken(const void *scene, const char *name) {
  return lcpd_scene_has_name(scene, name);
}

/* One --urdf into the scene: loaded, named, placed. *row_end is where the
 * row of robots placed without a pose ends in y (-INFINITY before the first). */
static int add_urdf(const options *o, const package_config *packages, const urdf_option *u,
                    lcpd_scene_t *scene, double *row_end, lcpd_error_t *error) {
  lcp_urdf_options_t urdf_options = lcp_urdf_options_default();
  urdf_options.log = log_urdf_warning;
  set_packages(&urdf_options, o, packages);
  lcp_robot_def_t *def = NULL;
  int rc = lcp_urdf_load_file(u->path, &urdf_options, &def, error->message, sizeof error->message);
  if (rc != LCP_OK) {
    error->code = rc;
    return rc;
  }
  char name[LCP_NAME_MAX];
  if (u->name && lcpd_scene_has_name(scene, u->name)) {
    bool found = lcpd_unique_name(u->name, scene_name_taken, scene, name);
    rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                   "--urdf %s --urdf-name %s: the name is taken by another robot or body%s%s%s",
                   u->path, u->name, found ? " (a free one: '" : "", found ? name : "",
                   found ? "')" : "");
    lcp_robot_def_free(&def);
    return rc;
  }
  if (u->name)
    snprintf(def->name, sizeof def->name, "%s", u->name);
  else if (lcpd_unique_name(def->name, scene_name_taken, scene, name))
    snprintf(def->name, sizeof def->name, "%s", name);
  double position[3] = {0, 0, 0}, orientation[4] = {1, 0, 0, 0};
  if (u->has_pose) {
    memcpy(position, u->position, sizeof position);
    memcpy(orientation, u->orientation, sizeof orientation);
  } else {
    /* Upright, its lowest geom resting on the ground z = 0, beside the robots
     * placed before it. */
    double lo[3], hi[3];
    if ((rc = robot_box(def, lo, hi, error)) != LCP_OK) {
      lcp_robot_def_free(&def);
      return rc;
    }
    if (scene->has_ground)
      position[2] = -lo[2];
    if (isfinite(*row_end))
      position[1] = *row_end + URDF_ROW_GAP - lo[1];
    *row_end = position[1] + hi[1];
  }
  return lcpd_scene_add_robot(scene, def, position, orientation, error);
}

/* The world to serve, from the options. */
static int build_scene(const options *o, const package_config *packages, lcpd_scene_t *scene,
                       lcpd_error_t *error) {
  int rc;
  if (o->world) {
    /* The scene's robots find package:// meshes as --urdf's do. */
    lcp_urdf_options_t urdf_options = lcp_urdf_options_default();
    set_packages(&urdf_options, o, packages);
    rc = lcpd_scene_file_load(o->world, &urdf_options, scene, error);
  } else if (o->urdf_count == 0) {
    rc = lcpd_scene_builtin(scene, error);
  } else {
    lcpd_scene_init(scene);
    scene->has_ground = true;
    rc = LCP_OK;
  }
  double row_end = -INFINITY;
  for (int i = 0; rc == LCP_OK && i < o->urdf_count; ++i)
    rc = add_urdf(o, packages, &o->urdfs[i], scene, &row_end, error);
  if (rc != LCP_OK) {
    lcpd_scene_clear(scene);
    return rc;
  }
  if (o->timestep_given)
    scene->settings.timestep = o->timestep;
  if (o->mode_given)
    scene->mode = o->mode;
  if (o->rate_given)
    scene->rate = o->rate;
  return LCP_OK;
}

/* --gen-keys NAME: the key pair's files. */
static int generate_keys(const options *o) {
  lcpd_error_t error = {0};
  if (lcpd_keys_generate(o->gen_keys, o->key_role, &error) != LCP_OK) {
    fprintf(stderr, "lcpsimd: --gen-keys: %s\n", error.message);
    return 1;
  }
  printf("lcpsimd: wrote %s.key (secret: keep it, mode 0600) and %s.pub (public, %s)\n",
         o->gen_keys, o->gen_keys, lcpd_role_name(o->key_role));
  return 0;
}

/* Without CURVE, a socket bound beyond the loopback lets anyone who reaches
 * the port control the world: only with --insecure, said out loud. */
static bool check_exposure(const options *o, bool curve) {
  const char *endpoints[2] = {o->bind, o->pub};
  for (int i = 0; i < 2; ++i) {
    if (curve || lcpd_endpoint_is_local(endpoints[i]))
      continue;
    if (!o->insecure) {
      LCPD_ERROR("%s %s is not a loopback address and CURVE is off: anyone who can reach it "
                 "could control the simulator. Make keys (lcpsimd --gen-keys server; lcpsimd "
                 "--gen-keys client) and pass --curve-secret-key server.key --authorized-keys "
                 "client.pub, or pass --insecure to serve it unauthenticated",
                 i == 0 ? "--bind" : "--pub", endpoints[i]);
      return false;
    }
    LCPD_WARN("INSECURE: %s %s is served without authentication (--insecure)",
              i == 0 ? "--bind" : "--pub", endpoints[i]);
  }
  /* The HTTP side has no CURVE: beyond the loopback it needs --insecure
   * whatever the ZeroMQ sockets use. */
  char host[256], endpoint[300];
  int port;
  if (o->http && lcpd_http_split_address(o->http, host, sizeof host, &port)) {
    snprintf(endpoint, sizeof endpoint, strchr(host, ':') ? "tcp://[%s]:%d" : "tcp://%s:%d", host,
             port);
    if (!lcpd_endpoint_is_local(endpoint)) {
      if (!o->insecure) {
        LCPD_ERROR("--http %s is not a loopback address: the HTTP side has no authentication, "
                   "and anyone who can reach it sees the world and the metrics. Pass "
                   "--insecure to serve it anyway (or keep it on 127.0.0.1 and forward the port)",
                   o->http);
        return false;
      }
      LCPD_WARN("INSECURE: --http %s is served without authentication (--insecure)", o->http);
    }
  }
  return true;
}

/* The server's keys and the allow-list (lcpd_auth_close frees them). */
static bool load_auth(const options *o, lcpd_auth_t *auth) {
  lcpd_error_t error = {0};
  if (lcpd_auth_load(auth, o->curve_secret_key, o->authorized_keys, o->authorized_keys_count,
                     &error) != LCP_OK) {
    LCPD_ERROR("%s", error.message);
    return false;
  }
  size_t observers = 0;
  for (size_t i = 0; i < auth->key_count; ++i)
    observers += auth->keys[i].role == LCPD_ROLE_OBSERVER;
  LCPD_INFO("CURVE on: server public key %s; allow-list%s %s: %zu controller and %zu observer "
            "keys",
            auth->server_public, o->authorized_keys_count > 1 ? "s" : "", o->authorized_keys[0],
            auth->key_count - observers, observers);
  return true;
}

/* Raises the descriptor limit to its hard limit (each connection holds a
 * descriptor) and keeps --max-clients below it: ZeroMQ retries a refused
 * accept(2) at once, so running out of descriptors would spin a core. */
static int fit_clients_to_descriptors(long long wanted) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return (int)wanted;
  if (limit.rlim_cur < limit.rlim_max) {
    struct rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? (rlim_t)1 << 20 : limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
      limit = raised;
  }
  long long room = (long long)limit.rlim_cur - DESCRIPTOR_HEADROOM;
  if (room < 1)
    room = 1;
  if (wanted > room) {
    LCPD_WARN("--max-clients %lld is more than the descriptor limit (%llu) leaves room for; "
              "serving at most %lld clients",
              wanted, (unsigned long long)limit.rlim_cur, room);
    return (int)room;
  }
  return (int)wanted;
}

int main(int argc, char **argv) {
  options o;
  int parsed = parse_options(argc, argv, &o);
  if (parsed != 0)
    return parsed < 0 ? 0 : parsed;
  lcpd_log_set_level(o.log_level);
  if (o.gen_keys)
    return generate_keys(&o);
  if (!check_exposure(&o, o.curve_secret_key != NULL))
    return 1;
  if (o.replay)
    return lcpd_replay_run(
        &(lcpd_replay_options_t){.path = o.replay, .pub_endpoint = o.pub, .speed = o.replay_speed});
  /* A buffer of a large request or reply is mapped and unmapped on its own
   * rather than left in the heap when freed, so the memory a peer made the
   * daemon hold is given back (glibc otherwise raises this threshold to the
   * largest block freed). */
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  int max_clients = fit_clients_to_descriptors(o.max_clients);

  lcpd_error_t error = {0};
  package_config packages = {0};
  if (lcp_urdf_split_package_path(getenv("ROS_PACKAGE_PATH"), &packages.ros_paths,
                                  &packages.ros_path_count) != LCP_OK) {
    LCPD_ERROR("out of memory");
    return 1;
  }
  lcpd_scene_t scene;
  if (build_scene(&o, &packages, &scene, &error) != LCP_OK) {
    LCPD_ERROR("%s", error.message);
    free(packages.ros_paths);
    return 1;
  }
  lcpd_sim_t sim;
  if (lcpd_sim_init(&sim, &scene, &error) != LCP_OK) {
    LCPD_ERROR("cannot build the world: %s", error.message);
    free(packages.ros_paths);
    return 1;
  }
  sim.packages = o.packages;
  sim.package_count = o.package_count;
  sim.package_paths = (const char *const *)packages.ros_paths;
  sim.package_path_count = packages.ros_path_count;
  model_roots roots;
  if (build_model_roots(&o, &packages, &roots) != LCP_OK) {
    LCPD_ERROR("out of memory");
    lcpd_sim_destroy(&sim);
    free(packages.ros_paths);
    return 1;
  }
  sim.model_roots = (const char *const *)roots.paths;
  sim.model_root_count = roots.count;
  lcpd_auth_t auth;
  if (o.curve_secret_key && !load_auth(&o, &auth)) {
    lcpd_sim_destroy(&sim);
    model_roots_free(&roots);
    free(packages.ros_paths);
    return 1;
  }
  size_t max_message = (size_t)o.max_message_bytes;
  lcpd_server_options_t server_options = {
      .bind_endpoint = o.bind,
      .pub_endpoint = o.pub,
      .max_message_bytes = (int64_t)o.max_message_bytes,
      .decode_budget =
          o.max_decode_bytes ? (size_t)o.max_decode_bytes : 4 * max_message + ((size_t)1 << 20),
      .reply_limit = REPLY_LIMIT_BYTES,
      .busy_poll_ns = (uint64_t)o.busy_poll_us * 1000u,
      .max_steps_per_request = (int32_t)o.max_steps_per_request,
      .auth = o.curve_secret_key ? &auth : NULL, /* closed with the server */
      .max_clients = max_clients,
      .idle_timeout_s = o.idle_timeout_s,
      .max_memory = (uint64_t)o.max_memory_mib << 20,
      .max_worlds = (uint32_t)o.max_worlds,
      .max_world_bytes = (uint64_t)o.max_world_bytes,
      .workers = (int)o.workers,
  };
  char *record_dir = o.record_dir ? realpath(o.record_dir, NULL) : NULL;
  if (o.record_dir && !record_dir) {
    LCPD_ERROR("--record-dir %s: %s", o.record_dir, strerror(errno));
    lcpd_sim_destroy(&sim);
    model_roots_free(&roots);
    free(packages.ros_paths);
    return 1;
  }
  lcpd_recorder_t recorder;
  lcpd_recorder_init(&recorder,
                     &(lcpd_recorder_options_t){.record_dir = record_dir,
                                                .max_bytes = (uint64_t)o.record_max_bytes,
                                                .state_limit = REPLY_LIMIT_BYTES});
  sim.recorder = &recorder;

  lcpd_http_options_t http_options = {.address = o.http, .viewer_dir = o.viewer_dir};
  if (o.http)
    server_options.http = &http_options;
  lcpd_server_t server;
  if (lcpd_server_open(&server, &sim, &server_options, &error) != LCP_OK ||
      (o.record && lcpd_recorder_start_local(&recorder, &sim, o.record, (uint32_t)o.record_every,
                                             o.record_contacts, &error) != LCP_OK)) {
    LCPD_ERROR("%s", error.message);
    if (server.loop_open)
      lcpd_server_close(&server);
    lcpd_recorder_destroy(&recorder, &sim);
    free(record_dir);
    lcpd_sim_destroy(&sim);
    model_roots_free(&roots);
    free(packages.ros_paths);
    return 1;
  }
  /* The first line of output: tests and scripts read the bound endpoints
   * (ephemeral ports included) from it. */
  printf("lcpsimd listening rep=%s pub=%s%s%s\n", server.router_endpoint, server.publisher_endpoint,
         server.http ? " http=" : "", server.http ? lcpd_http_url(server.http) : "");
  fflush(stdout);
  LCPD_INFO("lcpsimd %s: %d robots, %d bodies, timestep %g s, %s mode; requests on %s, states "
            "on %s",
            LCP_VERSION_STRING, sim.live.robot_count, sim.live.body_count,
            sim.scene.settings.timestep, sim.mode == LCPD_MODE_REALTIME ? "realtime" : "lockstep",
            server.router_endpoint, server.publisher_endpoint);
  lcpd_server_run(&server);
  /* The recording is complete on SIGINT and SIGTERM too: the server's run
   * returns on both. */
  lcpd_recorder_destroy(&recorder, &sim);
  free(record_dir);
  lcpd_server_close(&server);
  lcpd_sim_destroy(&sim);
  model_roots_free(&roots);
  free(packages.ros_paths);
  LCPD_INFO("stopped");
  return 0;
}
