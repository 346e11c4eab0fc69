/* SPDX-License-Identifier: Apache-2.0 */
/* Who may talk to the daemon. With --curve-secret-key the request (ROUTER)
 * and state (PUB) sockets are CURVE servers (ZeroMQ RFC 26, CurveZMQ): a peer
 * must know the server's public key and prove that it holds the secret key of
 * a public key in the allow-list (--authorized-keys). The allow-list is
 * checked by a ZAP handler (ZeroMQ RFC 27) on inproc://zeromq.zap.01, served
 * from the daemon's own event loop; it names the peer's role in the
 * connection's User-Id, which every message from that peer carries:
 *
 *   controller  every call
 *   observer    Ping, GetInfo, GetState and the state stream only; any other
 *               call is refused with PERMISSION_DENIED and changes nothing
 *
 * A peer whose key is not allowed completes no handshake, so it can send
 * nothing and receives nothing; the log says so once a minute per address.
 *
 * Key files are text: comment lines start with '#', others are
 * `name = "value"` (quotes optional) with the names public-key and
 * secret-key (40-character Z85, ZeroMQ RFC 32) and, in a .pub file of an
 * allow-list directory, role. */
#ifndef LCPD_AUTH_H
#define LCPD_AUTH_H

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* A Z85 key: 40 characters and a NUL. */
#define LCPD_Z85_KEY_SIZE 41
/* The ZAP domain the sockets name and the handler accepts. */
#define LCPD_ZAP_DOMAIN "lcpsim"

typedef enum lcpd_role {
  LCPD_ROLE_CONTROLLER = 0, /* every call (also: no authentication at all) */
  LCPD_ROLE_OBSERVER = 1,   /* reads only */
} lcpd_role_t;

typedef struct lcpd_allowed_key {
  uint8_t key[32]; /* the public key, binary */
  lcpd_role_t role;
} lcpd_allowed_key_t;

/* Refused peers, for the log: one line per address a minute, then a count
 * of the ones not logged. */
#define LCPD_AUTH_LOG_ADDRESSES 64
typedef struct lcpd_refusal_log {
  char address[96];
  uint64_t logged_ns; /* 0: a free entry */
  uint64_t suppressed;
} lcpd_refusal_log_t;

typedef struct lcpd_auth {
  char server_secret[LCPD_Z85_KEY_SIZE];
  char server_public[LCPD_Z85_KEY_SIZE];
  lcpd_allowed_key_t *keys;
  size_t key_count;
  /* The ZAP handler (a REP socket) and the handshake monitors of the two
   * sockets (PAIR sockets), each watched in the loop through its ZMQ_FD. */
  void *zap;
  void *monitors[2];
  uv_poll_t zap_poll;
  uv_poll_t monitor_polls[2];
  bool polls_open;
  lcpd_refusal_log_t refusals[LCPD_AUTH_LOG_ADDRESSES];
} lcpd_auth_t;

/* Reads the server's key pair and the allow-lists (each a file of
 * `<key> <role>` lines, one NAME.pub file, or a directory of .pub files;
 * their keys add up). A malformed file is an error
 * naming the file and the line. */
int lcpd_auth_load(lcpd_auth_t *auth, const char *secret_key_file,
                   const char *const *authorized_keys, int list_count, lcpd_error_t *error);
/* Binds the ZAP handler in the context; before any CURVE socket binds. */
int lcpd_auth_open(lcpd_auth_t *auth, void *context, lcpd_error_t *error);
/* Makes socket a CURVE server in the ZAP domain (index 0: requests, 1:
 * states). With watch_handshakes its failed handshakes are watched here;
 * a socket has one monitor, so the request socket's are read by the
 * server's monitor, which passes them to lcpd_auth_handshake_failed. */
int lcpd_auth_secure_socket(lcpd_auth_t *auth, void *context, void *socket, int index,
                            bool watch_handshakes, lcpd_error_t *error);
/* Logs (rate-limited) a handshake that failed before the ZAP handler saw
 * it: a monitor's ZMQ_EVENT_HANDSHAKE_FAILED_* event, its value and the
 * bound endpoint it names. */
void lcpd_auth_handshake_failed(lcpd_auth_t *auth, uint16_t event, uint32_t value,
                                const char *endpoint);
/* Serves the ZAP handler and the monitors from the loop. */
int lcpd_auth_watch(lcpd_auth_t *auth, uv_loop_t *loop, lcpd_error_t *error);
/* Closes the loop's handles (their close callbacks run in the loop). */
void lcpd_auth_close_handles(lcpd_auth_t *auth);
/* Closes the sockets (before the context ends) and frees the allow-list. */
void lcpd_auth_close(lcpd_auth_t *auth);
/* The role a received frame's connection was given (controller when the
 * frame carries none: no authentication). */
lcpd_role_t lcpd_auth_role_of(void *frame);
const char *lcpd_role_name(lcpd_role_t role);

/* --gen-keys: writes NAME.key (both keys, mode 0600) and NAME.pub (the
 * public key, with `role = observer` when role is observer); refuses to
 * overwrite either. */
int lcpd_keys_generate(const char *name, lcpd_role_t role, lcpd_error_t *error);

/* Whether binding endpoint keeps the socket on this machine: tcp:// on
 * 127.0.0.0/8, ::1, localhost or the interface lo; ipc://, inproc:// (and a
 * transport libzmq does not know, which it refuses to bind). Every other
 * tcp:// address and every other networked transport (udp, pgm, epgm, norm,
 * ws, wss, tipc, vmci) is not. */
bool lcpd_endpoint_is_local(const char *endpoint);

#endif
