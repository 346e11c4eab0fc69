/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd's HTTP side (--http ADDR): the viewer's page and files, the
 * WebSocket stream of the world for it (/ws), /metrics and /healthz, served
 * by libwebsockets on the daemon's own libuv loop (docs/viewer.md). The
 * stream is the live world, or a recording each viewer plays, pauses,
 * seeks and speeds up on its own (lcpsimd --replay FILE --http). */
#ifndef LCPD_HTTP_H
#define LCPD_HTTP_H

#include "connections.h"
#include "error.h"
#include "metrics.h"
#include "player.h"
#include "sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* The largest message a viewer may send (a control message is tens of
 * bytes); a larger one closes its connection (1009, message too big). */
#define LCPD_HTTP_MAX_VIEWER_MESSAGE ((size_t)64 << 10)
/* The fastest state rate of the stream (a ?hz=N query may lower it). */
#define LCPD_HTTP_MAX_HZ 60

typedef struct lcpd_http_options {
  const char *address;    /* "HOST:PORT"; port 0 picks a free one */
  const char *viewer_dir; /* the page's files; NULL: the installed or built viewer */
  /* Replay (lcpsimd --replay FILE --http): the recording each viewer plays
   * on its own (not owned; it outlives the HTTP side), and the speed a
   * viewer starts at. NULL: the live world. */
  const lcpd_recording_t *replay;
  double replay_speed;
} lcpd_http_options_t;

/* A control message from a viewer: {"cmd":"play"|"pause"|"seek"|"speed"|
 * "contacts", "t":seconds, "speed":x, "on":bool}. seek needs t, speed needs
 * speed, contacts needs on; any command may carry the others. */
typedef enum lcpd_http_command {
  LCPD_HTTP_PLAY,
  LCPD_HTTP_PAUSE,
  LCPD_HTTP_SEEK,
  LCPD_HTTP_SPEED,
  LCPD_HTTP_CONTACTS,
} lcpd_http_command_t;

typedef struct lcpd_http_control {
  lcpd_http_command_t command;
  bool has_time, has_speed, has_on;
  double time;  /* s, "t" (a number too large for a double is infinite) */
  double speed; /* "speed" */
  bool on;      /* "on" */
} lcpd_http_control_t;

typedef struct lcpd_http lcpd_http_t;

/* Binds the address and serves on loop. sim is the world streamed (NULL
 * with options->replay); connections (may be NULL) counts the ZeroMQ peers
 * for /metrics. */
int lcpd_http_open(lcpd_http_t **out, uv_loop_t *loop, lcpd_sim_t *sim,
                   const lcpd_connections_t *connections, const lcpd_http_options_t *options,
                   lcpd_error_t *error);
/* "http://127.0.0.1:PORT", the port as bound. */
const char *lcpd_http_url(const lcpd_http_t *http);
lcpd_metrics_t *lcpd_http_metrics(lcpd_http_t *http);
/* Starts closing everything on the loop (shutdown): the loop then runs
 * until the last handle is closed. */
void lcpd_http_close_handles(lcpd_http_t *http);
/* Frees what is left, after the loop has run the close callbacks. */
void lcpd_http_free(lcpd_http_t *http);

/* The parsed control message, or false for text that is not one (not a
 * JSON object of those keys, an unknown command, a command without the
 * value it needs). Values are not checked: a seek to an infinite time or a
 * speed <= 0 parses, and is for the receiver to refuse. */
bool lcpd_http_parse_control(const char *text, size_t length, lcpd_http_control_t *control);
/* Splits "HOST:PORT" ("[::1]:PORT" for IPv6) into host and port; false when
 * malformed. */
bool lcpd_http_split_address(const char *address, char *host, size_t host_size, int *port);

#endif
