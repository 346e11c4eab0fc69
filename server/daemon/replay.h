/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd --replay FILE: plays a recording (player.h) to the state stream's
 * PUB socket, as the live daemon publishes: each State on the topic
 * "state", each scene (a GetSceneReply) on the topic "scene", the header on
 * "header". With --http, the viewer's page, /ws, /metrics and /healthz are
 * served too, and each viewer of /ws plays the recording on its own (play,
 * pause, seek, speed: http.h). The first line of output is the live
 * daemon's, "lcpsimd listening rep=- pub=ENDPOINT [http=URL]", followed by
 * the recording's summary ("replay states=N duration=S scenes=K"). Without
 * --http the daemon exits when the recording has played to the PUB socket;
 * with it, on SIGINT or SIGTERM only (either way on those). */
#ifndef LCPD_REPLAY_H
#define LCPD_REPLAY_H

#include "http.h"

typedef struct lcpd_replay_options {
  const char *path;
  const char *pub_endpoint;
  double speed; /* timeline seconds per wall-clock second */
  /* --http: where to serve the viewers (its replay fields are set here);
   * NULL: no HTTP side. */
  const lcpd_http_options_t *http;
} lcpd_replay_options_t;

/* Returns the process's exit status: 0 when played (or stopped by a
 * signal), 1 on a bad file or socket (logged). */
int lcpd_replay_run(const lcpd_replay_options_t *options);

#endif
