/* SPDX-License-Identifier: Apache-2.0 */
#include "bench_daemon.h"

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The arguments before the caller's. */
#define FIXED_ARGS 7
/* The most extra arguments a bench passes. */
#define MAX_EXTRA_ARGS 64

bool lcpd_bench_daemon_start(lcpd_bench_daemon_t *daemon, const char *path,
                             const char *const *extra, int extra_count, const char *who) {
  daemon->pid = -1;
  daemon->output = -1;
  daemon->rep[0] = daemon->pub[0] = daemon->http[0] = '\0';
  if (extra_count < 0 || extra_count > MAX_EXTRA_ARGS) {
    fprintf(stderr, "%s: at most %d daemon arguments\n", who, MAX_EXTRA_ARGS);
    return false;
  }
  const char *argv[FIXED_ARGS + MAX_EXTRA_ARGS + 1] = {
      path, "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0", "--log-level", "warning"};
  for (int i = 0; i < extra_count; ++i)
    argv[FIXED_ARGS + i] = extra[i];
  argv[FIXED_ARGS + extra_count] = NULL;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  int rc = posix_spawn(&daemon->pid, path, &actions, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    fprintf(stderr, "%s: cannot run %s: %s\n", who, path, strerror(rc));
    close(pipe_fds[0]);
    daemon->pid = -1;
    return false;
  }
  daemon->output = pipe_fds[0];
  /* Byte by byte: what follows the first line stays in the pipe, unread
   * (at --log-level warning the daemon writes nothing more to stdout). */
  char line[1024];
  size_t length = 0;
  while (length < sizeof line - 1 && read(daemon->output, line + length, 1) == 1 &&
         line[length] != '\n')
    ++length;
  line[length] = '\0';
  if (sscanf(line, "lcpsimd listening rep=%255s pub=%255s", daemon->rep, daemon->pub) != 2) {
    fprintf(stderr, "%s: %s did not start (no 'lcpsimd listening' line)\n", who, path);
    lcpd_bench_daemon_stop(daemon, who);
    return false;
  }
  const char *http = strstr(line, " http=http://");
  if (http && sscanf(http, " http=http://%255s", daemon->http) != 1)
    daemon->http[0] = '\0';
  return true;
}

bool lcpd_bench_daemon_stop(lcpd_bench_daemon_t *daemon, const char *who) {
  if (daemon->pid <= 0)
    return true;
  int status = 0;
  kill(daemon->pid, SIGTERM);
  bool clean = waitpid(daemon->pid, &status, 0) == daemon->pid && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0;
  if (daemon->output >= 0)
    close(daemon->output);
  daemon->pid = -1;
  daemon->output = -1;
  if (!clean)
    fprintf(stderr, "%s: a daemon did not exit cleanly\n", who);
  return clean;
}
