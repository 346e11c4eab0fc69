/* SPDX-License-Identifier: Apache-2.0 */
#include "test_daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double test_now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec * 1e3 + (double)now.tv_nsec * 1e-6;
}

static void sleep_ms(long ms) {
  struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

/* Copies the value after `key` (up to a blank or the end of the line) into `out`. */
static int find_value(const char *line, const char *key, char *out, size_t size) {
  const char *start = strstr(line, key);
  if (!start)
    return -1;
  start += strlen(key);
  size_t length = strcspn(start, " \t\r\n");
  if (length == 0 || length >= size)
    return -1;
  memcpy(out, start, length);
  out[length] = '\0';
  return 0;
}

int test_daemon_start(const char *daemon_path, test_daemon_t *daemon) {
  return test_daemon_start_args(daemon_path, NULL, daemon);
}

int test_daemon_start_args(const char *daemon_path, const char *const *args,
                           test_daemon_t *daemon) {
  memset(daemon, 0, sizeof *daemon);
  const char *argv[32] = {daemon_path, "--bind", "tcp://127.0.0.1:0", "--pub", "tcp://127.0.0.1:0"};
  int argc = 5;
  for (int i = 0; args && args[i] && argc < 31; ++i)
    argv[argc++] = args[i];
  argv[argc] = NULL;
  /* stdout goes to a file rather than a pipe: the daemon can never block on a full pipe or die
   * of SIGPIPE once the first line has been read. */
  snprintf(daemon->stdout_path, sizeof daemon->stdout_path, "/tmp/lcpsimd-test-XXXXXX");
  int out = mkstemp(daemon->stdout_path);
  if (out < 0) {
    perror("mkstemp");
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    close(out);
    return -1;
  }
  if (pid == 0) {
    dup2(out, STDOUT_FILENO);
    close(out);
    execv(daemon_path, (char *const *)argv);
    perror(daemon_path);
    _exit(127);
  }
  close(out);
  daemon->pid = pid;
  /* Generous: an ASan build of the daemon on a loaded machine starts slowly. */
  const double deadline = test_now_ms() + 30000.0;
  char line[512];
  while (test_now_ms() < deadline) {
    FILE *file = fopen(daemon->stdout_path, "r");
    bool complete = false;
    if (file) {
      complete = fgets(line, sizeof line, file) && strchr(line, '\n');
      fclose(file);
    }
    if (complete) {
      if (find_value(line, "rep=", daemon->rep, sizeof daemon->rep) != 0 ||
          find_value(line, "pub=", daemon->pub, sizeof daemon->pub) != 0) {
        fprintf(stderr, "test_daemon: unexpected first line: %s", line);
        test_daemon_stop(daemon);
        return -1;
      }
      return 0;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      fprintf(stderr, "test_daemon: %s exited (status 0x%x) before printing its endpoints\n",
              daemon_path, status);
      daemon->pid = 0;
      unlink(daemon->stdout_path);
      return -1;
    }
    sleep_ms(10);
  }
  fprintf(stderr, "test_daemon: %s printed no endpoints within 30 s\n", daemon_path);
  test_daemon_stop(daemon);
  return -1;
}

int test_daemon_stop(test_daemon_t *daemon) {
  if (daemon->pid <= 0)
    return -1;
  kill(daemon->pid, SIGTERM);
  int status = 0;
  const double deadline = test_now_ms() + 10000.0;
  pid_t done = 0;
  while ((done = waitpid(daemon->pid, &status, WNOHANG)) == 0 && test_now_ms() < deadline)
    sleep_ms(5);
  if (done == 0) {
    fprintf(stderr, "test_daemon: no exit 10 s after SIGTERM; killing it\n");
    kill(daemon->pid, SIGKILL);
    waitpid(daemon->pid, &status, 0);
  }
  daemon->pid = 0;
  unlink(daemon->stdout_path);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int test_refusing_endpoint(char *endpoint, size_t size) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
      getsockname(fd, (struct sockaddr *)&address, &length) != 0) {
    close(fd);
    return -1;
  }
  snprintf(endpoint, size, "tcp://127.0.0.1:%u", (unsigned)ntohs(address.sin_port));
  return fd;
}

int test_live_start(const char *daemon_path, test_live_t **out) {
  test_live_t *live = calloc(1, sizeof *live);
  if (!live || test_daemon_start(daemon_path, &live->daemon) != 0) {
    free(live);
    return -1;
  }
  if (lcpsim_client_connect(live->daemon.rep, 20000, &live->client) != LCPSIM_OK) {
    test_daemon_stop(&live->daemon);
    free(live);
    return -1;
  }
  *out = live;
  return 0;
}

int test_live_stop(test_live_t **live) {
  lcpsim_client_destroy(&(*live)->client);
  int status = test_daemon_stop(&(*live)->daemon);
  free(*live);
  *live = NULL;
  return status == 0 ? 0 : -1;
}
