/* SPDX-License-Identifier: Apache-2.0 */
/* The connections of the request socket, as its monitor reports them
 * (ZMQ_EVENT_ACCEPTED and ZMQ_EVENT_DISCONNECTED carry the accepted
 * descriptor) and as the requests read from them show them (zmq_msg_get
 * ZMQ_SRCFD names the descriptor a request came on). With them the daemon
 * keeps its resource limits:
 *
 * - at most max_clients connections: one more is shut down when accepted;
 * - an idle timeout: a connection that sent no request for that long is
 *   shut down (the clocks stop while a Step runs);
 * - a bound on the replies a client leaves unread: its requests are refused
 *   while more than reply_backlog bytes of replies to it wait;
 * - a bound on resident memory: ZeroMQ holds a multipart message whole
 *   before the daemon sees its first frame, and queues whole requests per
 *   connection, so a peer can make the daemon hold memory it never reads.
 *   When the resident memory passes three quarters of max_memory, the
 *   connection holding the most (the bytes it sent that the daemon has not
 *   read, plus the bytes of replies it has not acknowledged, from the
 *   kernel's TCP_INFO) is shut down, and ZeroMQ frees what it held.
 *
 * A connection is closed with shutdown(2) on its descriptor, never close(2):
 * ZeroMQ still owns the descriptor, sees the end of the stream, and closes
 * it itself (which the monitor reports). Before that, the descriptor's peer
 * address is compared with the one recorded at accept time, so a
 * descriptor that ZeroMQ closed and reused meanwhile is left alone. */
#ifndef LCPD_CONNECTIONS_H
#define LCPD_CONNECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A frame's extra bytes under CURVE: the MESSAGE command's name (8), a short
 * nonce (8), the flags byte and the MAC (16) of its box (RFC 26, CurveZMQ). */
#define LCPD_CURVE_FRAME_OVERHEAD 33

typedef struct lcpd_connection {
  bool open;          /* accepted (or a request came on it) and not disconnected */
  bool accepted;      /* its ZMQ_EVENT_ACCEPTED was seen */
  bool closing;       /* shut down by the daemon; ZeroMQ has yet to close it */
  uint64_t since_ns;  /* when it was first seen */
  uint64_t active_ns; /* when it last sent a request */
  /* ZMTP bytes (frames and their headers) of the requests read from it and
   * of the replies sent to it, and how many of the latter the peer's kernel
   * had acknowledged at the last look. */
  uint64_t bytes_in, bytes_out, acked_out;
  uint64_t freeing; /* what it held when shut down for memory */
  char address[64]; /* "127.0.0.1:40000", for logs and the reuse check */
} lcpd_connection_t;

/* Log lines about refused or closed connections: at most one a second of
 * each kind, with a count of those left out. */
enum {
  LCPD_CONN_LOG_FULL,
  LCPD_CONN_LOG_IDLE,
  LCPD_CONN_LOG_MEMORY,
  LCPD_CONN_LOG_OTHER,
  LCPD_CONN_LOG_KINDS
};

typedef struct lcpd_connections {
  lcpd_connection_t *by_fd; /* indexed by descriptor */
  int capacity;
  int count; /* open and not closing */
  int max_clients;
  uint64_t idle_timeout_ns; /* 0: none */
  uint64_t idle_since_ns;   /* idle clocks start no earlier (the last Step's end) */
  uint64_t reply_backlog;   /* bytes of unread replies beyond which requests are refused */
  uint64_t max_memory;      /* bytes of resident memory; 0: no watch */
  uint64_t freeing;         /* the sum of the closing connections' freeing */
  /* Bytes each frame costs on the wire beyond lcpd_wire_bytes: 0 with
   * ZeroMQ's NULL mechanism; under CURVE a frame travels in a MESSAGE
   * command (its name, a nonce and a MAC: 33 bytes more). Without it, the
   * difference between the kernel's count and the daemon's would grow with
   * every request of a long-lived client. */
  uint32_t frame_overhead;
  uint64_t last_idle_scan_ns;
  int statm_fd; /* /proc/self/statm, read each tick */
  long page_size;
  uint64_t last_log_ns[LCPD_CONN_LOG_KINDS];
  unsigned left_out[LCPD_CONN_LOG_KINDS];
  uint64_t refused, closed_idle, closed_memory, closed_other; /* totals, logged at exit */
} lcpd_connections_t;

void lcpd_connections_init(lcpd_connections_t *c, int max_clients, double idle_timeout_s,
                           uint64_t reply_backlog, uint64_t max_memory);
void lcpd_connections_destroy(lcpd_connections_t *c);

/* Monitor events. */
void lcpd_connections_accepted(lcpd_connections_t *c, int fd, uint64_t now_ns);
void lcpd_connections_disconnected(lcpd_connections_t *c, int fd);

/* A request of wire_bytes in frames (after the routing id) came on fd
 * (-1: not a TCP connection). */
void lcpd_connections_request(lcpd_connections_t *c, int fd, uint64_t wire_bytes, int frames,
                              uint64_t now_ns);
/* A reply of wire_bytes in frames went to fd. */
void lcpd_connections_replied(lcpd_connections_t *c, int fd, uint64_t wire_bytes, int frames);
/* Whether the client on fd leaves more than reply_backlog bytes of replies
 * unread (its unread bytes in *unread): its next request is then refused.
 * Asks the kernel only when the bytes sent since the last look could have
 * passed the bound. */
bool lcpd_connections_reply_backlog(lcpd_connections_t *c, int fd, uint64_t *unread);

/* Shuts the connection on fd down now, logging why (rate-limited). */
void lcpd_connections_close(lcpd_connections_t *c, int fd, uint64_t now_ns, const char *why);

/* Runs the memory watch and the idle timeout; called every few
 * milliseconds. step_running: a Step runs (idle clocks stand still). */
void lcpd_connections_tick(lcpd_connections_t *c, uint64_t now_ns, bool step_running);

/* The bytes a frame of size bytes occupies on the wire (ZMTP 3: a flags
 * byte and a one-byte size up to 255, else an eight-byte size). */
static inline uint64_t lcpd_wire_bytes(size_t size) { return size + (size <= 255 ? 2 : 9); }

#endif
