/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsimd --replay FILE: plays a recording (player.h) to the state stream's
 * PUB socket, as the live daemon publishes: each State on the topic
 * "state", each scene (a GetSceneReply) on the topic "scene", the header on
 * "header". The first line of output is the live daemon's, "lcpsimd
 * listening rep=- pub=ENDPOINT", followed by the recording's summary
 * ("replay states=N duration=S scenes=K"); the daemon exits when the recording has played, or on
 * SIGINT or SIGTERM. */
#ifndef LCPD_REPLAY_H
#define LCPD_REPLAY_H

typedef struct lcpd_replay_options {
  const char *path;
  const char *pub_endpoint;
  double speed; /* timeline seconds per wall-clock second */
} lcpd_replay_options_t;

/* Returns the process's exit status: 0 when played, 1 on a bad file or
 * socket (logged). */
int lcpd_replay_run(const lcpd_replay_options_t *options);

#endif
