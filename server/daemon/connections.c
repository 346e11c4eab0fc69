/* SPDX-License-Identifier: Apache-2.0 */
#include "connections.h"

#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How often the idle timeout is looked at. */
#define IDLE_SCAN_NS 250000000u
/* A connection holding less than this is never shut down for memory: what
 * every client holds while it talks. */
#define MEMORY_MIN_BACKLOG ((uint64_t)1 << 20)

void lcpd_connections_init(lcpd_connections_t *c, int max_clients, double idle_timeout_s,
                           uint64_t reply_backlog, uint64_t max_memory) {
  *c = (lcpd_connections_t){.max_clients = max_clients,
                            .idle_timeout_ns = (uint64_t)(idle_timeout_s * 1e9),
                            .reply_backlog = reply_backlog,
                            .max_memory = max_memory,
                            .statm_fd = -1};
  c->page_size = sysconf(_SC_PAGESIZE);
  if (max_memory) {
    c->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (c->statm_fd < 0)
      LCPD_WARN("cannot read /proc/self/statm (%s): the memory bound is not watched",
                strerror(errno));
  }
}

void lcpd_connections_destroy(lcpd_connections_t *c) {
  if (c->refused || c->closed_idle || c->closed_memory || c->closed_other)
    LCPD_INFO("connections: %" PRIu64 " refused (--max-clients), %" PRIu64
              " closed idle (--idle-timeout), %" PRIu64
              " closed for memory (--max-memory), %" PRIu64 " closed for leaving replies unread",
              c->refused, c->closed_idle, c->closed_memory, c->closed_other);
  free(c->by_fd);
  if (c->statm_fd >= 0)
    close(c->statm_fd);
  *c = (lcpd_connections_t){.statm_fd = -1};
}

/* The entry of fd, the table grown to hold it; NULL when it cannot be. */
static lcpd_connection_t *entry(lcpd_connections_t *c, int fd) {
  if (fd < 0)
    return NULL;
  if (fd >= c->capacity) {
    int capacity = c->capacity ? c->capacity : 64;
    while (capacity <= fd)
      capacity *= 2;
    lcpd_connection_t *grown = realloc(c->by_fd, (size_t)capacity * sizeof *grown);
    if (!grown)
      return NULL;
    memset(grown + c->capacity, 0, (size_t)(capacity - c->capacity) * sizeof *grown);
    c->by_fd = grown;
    c->capacity = capacity;
  }
  return &c->by_fd[fd];
}

/* "127.0.0.1:40000" (or "[::1]:40000", or "local"): the descriptor's peer. */
static void peer_address(int fd, char *out, size_t size) {
  struct sockaddr_storage address;
  socklen_t length = sizeof address;
  char host[INET6_ADDRSTRLEN] = "";
  if (getpeername(fd, (struct sockaddr *)&address, &length) != 0) {
    snprintf(out, size, "gone");
  } else if (address.ss_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)&address;
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    snprintf(out, size, "%s:%u", host, (unsigned)ntohs(in->sin_port));
  } else if (address.ss_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&address;
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    snprintf(out, size, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
  } else {
    snprintf(out, size, "local");
  }
}

static void open_entry(lcpd_connections_t *c, lcpd_connection_t *e, int fd, uint64_t now) {
  *e = (lcpd_connection_t){.open = true, .since_ns = now, .active_ns = now};
  peer_address(fd, e->address, sizeof e->address);
  c->count++;
}

static void log_limited(lcpd_connections_t *c, int kind, uint64_t now, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void log_limited(lcpd_connections_t *c, int kind, uint64_t now, const char *fmt, ...) {
  if (c->last_log_ns[kind] && now - c->last_log_ns[kind] < 1000000000u) {
    c->left_out[kind]++;
    return;
  }
  char line[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  if (c->left_out[kind])
    LCPD_WARN("%s (and %u more like it in the last second)", line, c->left_out[kind]);
  else
    LCPD_WARN("%s", line);
  c->last_log_ns[kind] = now;
  c->left_out[kind] = 0;
}

/* Ends the connection on fd: ZeroMQ reads the end of the stream, drops the
 * connection with what it queued for it, and closes the descriptor. False
 * when the descriptor is no longer the connection recorded. */
static bool shut_down(lcpd_connections_t *c, int fd) {
  lcpd_connection_t *e = &c->by_fd[fd];
  char now_address[64];
  peer_address(fd, now_address, sizeof now_address);
  if (strcmp(now_address, e->address) != 0 || shutdown(fd, SHUT_RDWR) != 0) {
    /* Closed by ZeroMQ meanwhile (its event is on the way) or reused. */
    e->open = false;
    c->count--;
    return false;
  }
  e->closing = true;
  c->count--;
  return true;
}

void lcpd_connections_accepted(lcpd_connections_t *c, int fd, uint64_t now) {
  lcpd_connection_t *e = entry(c, fd);
  if (!e)
    return;
  if (e->open && e->accepted) {
    /* A DISCONNECTED that never came: the descriptor was reused. */
    if (!e->closing)
      c->count--;
    e->open = false;
  }
  if (!e->open)
    open_entry(c, e, fd, now);
  e->accepted = true;
  if (c->max_clients > 0 && c->count > c->max_clients) {
    if (shut_down(c, fd)) {
      c->refused++;
      log_limited(c, LCPD_CONN_LOG_FULL, now,
                  "refused a connection from %s: %d clients are connected, the most "
                  "--max-clients allows",
                  e->address, c->max_clients);
    }
  }
}

void lcpd_connections_disconnected(lcpd_connections_t *c, int fd) {
  if (fd < 0 || fd >= c->capacity || !c->by_fd[fd].open)
    return;
  lcpd_connection_t *e = &c->by_fd[fd];
  if (e->closing)
    c->freeing -= e->freeing;
  else
    c->count--;
  *e = (lcpd_connection_t){0};
}

void lcpd_connections_request(lcpd_connections_t *c, int fd, uint64_t wire_bytes, int frames,
                              uint64_t now) {
  lcpd_connection_t *e = entry(c, fd);
  if (!e)
    return;
  /* Its request can be read before its ACCEPTED event is. */
  if (!e->open)
    open_entry(c, e, fd, now);
  e->bytes_in += wire_bytes + (uint64_t)frames * c->frame_overhead;
  e->active_ns = now;
}

void lcpd_connections_replied(lcpd_connections_t *c, int fd, uint64_t wire_bytes, int frames) {
  if (fd >= 0 && fd < c->capacity && c->by_fd[fd].open)
    c->by_fd[fd].bytes_out += wire_bytes + (uint64_t)frames * c->frame_overhead;
}

static bool tcp_info(int fd, struct tcp_info *info) {
  socklen_t length = sizeof *info;
  memset(info, 0, sizeof *info);
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &length) == 0 &&
         length >=
             offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info->tcpi_bytes_received;
}

bool lcpd_connections_reply_backlog(lcpd_connections_t *c, int fd, uint64_t *unread) {
  *unread = 0;
  if (!c->reply_backlog || fd < 0 || fd >= c->capacity || !c->by_fd[fd].open)
    return false;
  lcpd_connection_t *e = &c->by_fd[fd];
  /* acked_out is an old look: bytes_out - acked_out bounds what is unread. */
  if (e->bytes_out - e->acked_out <= c->reply_backlog)
    return false;
  struct tcp_info info;
  if (!tcp_info(fd, &info))
    return false;
  /* The kernel counts the ZMTP greeting and handshake too. */
  e->acked_out = info.tcpi_bytes_acked < e->bytes_out ? info.tcpi_bytes_acked : e->bytes_out;
  *unread = e->bytes_out - e->acked_out;
  return *unread > c->reply_backlog;
}

static uint64_t resident_bytes(lcpd_connections_t *c) {
  char text[128];
  ssize_t n = pread(c->statm_fd, text, sizeof text - 1, 0);
  if (n <= 0)
    return 0;
  text[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (sscanf(text, "%llu %llu", &size, &resident) != 2)
    return 0;
  return (uint64_t)resident * (uint64_t)c->page_size;
}

/* What the connection makes the daemon hold: the bytes it sent that were
 * not read as requests yet (in ZeroMQ's queues, or in a multipart message
 * not whole yet), plus its replies not yet acknowledged. */
static uint64_t held_for(const lcpd_connection_t *e, int fd) {
  struct tcp_info info;
  if (!tcp_info(fd, &info))
    return 0;
  uint64_t in = info.tcpi_bytes_received > e->bytes_in ? info.tcpi_bytes_received - e->bytes_in : 0;
  uint64_t out = e->bytes_out > info.tcpi_bytes_acked ? e->bytes_out - info.tcpi_bytes_acked : 0;
  return in + out;
}

static void watch_memory(lcpd_connections_t *c, uint64_t now) {
  uint64_t line = c->max_memory / 4 * 3;
  uint64_t resident = resident_bytes(c);
  /* What closing connections hold is on its way out. */
  uint64_t counted = resident > c->freeing ? resident - c->freeing : 0;
  while (counted > line) {
    int worst = -1;
    uint64_t worst_held = 0;
    for (int fd = 0; fd < c->capacity; ++fd) {
      const lcpd_connection_t *e = &c->by_fd[fd];
      if (!e->open || e->closing)
        continue;
      uint64_t held = held_for(e, fd);
      if (held > worst_held) {
        worst = fd;
        worst_held = held;
      }
    }
    if (worst < 0 || worst_held < MEMORY_MIN_BACKLOG)
      return;
    lcpd_connection_t *e = &c->by_fd[worst];
    if (shut_down(c, worst)) {
      e->freeing = worst_held;
      c->freeing += worst_held;
      c->closed_memory++;
      log_limited(c, LCPD_CONN_LOG_MEMORY, now,
                  "closed the connection from %s: it made the daemon hold %" PRIu64
                  " MiB (requests not yet whole or read, replies not yet taken) while the "
                  "resident memory is %" PRIu64 " MiB, over three quarters of --max-memory "
                  "(%" PRIu64 " MiB)",
                  e->address, worst_held >> 20, resident >> 20, c->max_memory >> 20);
    }
    counted = counted > worst_held ? counted - worst_held : 0;
  }
}

static void close_idle(lcpd_connections_t *c, uint64_t now) {
  for (int fd = 0; fd < c->capacity; ++fd) {
    lcpd_connection_t *e = &c->by_fd[fd];
    if (!e->open || e->closing)
      continue;
    uint64_t since = e->active_ns > c->idle_since_ns ? e->active_ns : c->idle_since_ns;
    if (now - since < c->idle_timeout_ns)
      continue;
    if (shut_down(c, fd)) {
      c->closed_idle++;
      log_limited(c, LCPD_CONN_LOG_IDLE, now,
                  "closed the connection from %s: no request for %.0f s (--idle-timeout)",
                  e->address, (double)(now - since) * 1e-9);
    }
  }
}

void lcpd_connections_close(lcpd_connections_t *c, int fd, uint64_t now, const char *why) {
  if (fd < 0 || fd >= c->capacity || !c->by_fd[fd].open || c->by_fd[fd].closing)
    return;
  if (shut_down(c, fd)) {
    c->closed_other++;
    log_limited(c, LCPD_CONN_LOG_OTHER, now, "closed the connection from %s: %s",
                c->by_fd[fd].address, why);
  }
}

void lcpd_connections_tick(lcpd_connections_t *c, uint64_t now, bool step_running) {
  if (c->statm_fd >= 0)
    watch_memory(c, now);
  if (!c->idle_timeout_ns)
    return;
  if (step_running) {
    /* Clients waiting for a Step (or for requests held behind it) are not
     * idle: the clocks start again when it is over. */
    c->idle_since_ns = now;
    return;
  }
  if (now - c->last_idle_scan_ns < IDLE_SCAN_NS)
    return;
  c->last_idle_scan_ns = now;
  close_idle(c, now);
}
