/* SPDX-License-Identifier: Apache-2.0 */
#include "auth.h"

#include "log.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

/* A draft option of libzmq 4.3 (zmq.h declares it only with
 * ZMQ_BUILD_DRAFT_API): a socket with a ZAP domain refuses every peer when no
 * ZAP handler answers, instead of letting it in unchecked. */
#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#endif

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
/* A key file is a few lines; anything larger is not one. */
#define MAX_KEY_FILE_BYTES (64 * 1024)
#define MAX_LINE 1024
/* The most keys an allow-list holds. */
#define MAX_ALLOWED_KEYS 65536
/* A refused address is logged at most once in this long. */
#define REFUSAL_LOG_INTERVAL_NS (60ull * 1000000000ull)

const char *lcpd_role_name(lcpd_role_t role) {
  return role == LCPD_ROLE_OBSERVER ? "observer" : "controller";
}

static bool parse_role(const char *text, lcpd_role_t *role) {
  if (strcmp(text, "controller") == 0)
    *role = LCPD_ROLE_CONTROLLER;
  else if (strcmp(text, "observer") == 0)
    *role = LCPD_ROLE_OBSERVER;
  else
    return false;
  return true;
}

/* A 40-character Z85 key to its 32 bytes. */
static bool decode_key(const char *text, uint8_t key[32]) {
  return strlen(text) == 40 && zmq_z85_decode(key, text) != NULL;
}

/* ---- key files ---- */

typedef struct key_file {
  char public_key[LCPD_Z85_KEY_SIZE];
  char secret_key[LCPD_Z85_KEY_SIZE];
  bool has_public, has_secret, has_role;
  lcpd_role_t role;
} key_file;

static char *trim(char *text) {
  while (isspace((unsigned char)*text))
    ++text;
  size_t length = strlen(text);
  while (length > 0 && isspace((unsigned char)text[length - 1]))
    text[--length] = '\0';
  return text;
}

/* Opens a key or allow-list file for reading, refusing what is not a small
 * regular file. */
static FILE *open_small_file(const char *path, lcpd_error_t *error) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > MAX_KEY_FILE_BYTES) {
    lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: not a regular file of at most %d bytes", path,
              MAX_KEY_FILE_BYTES);
    close(fd);
    return NULL;
  }
  FILE *file = fdopen(fd, "r");
  if (!file) {
    lcpd_fail(error, LCP_ERR_NO_MEMORY, "%s: %s", path, strerror(errno));
    close(fd);
  }
  return file;
}

/* Reads the next line into line (without its newline); returns 0 at the
 * end, 1 for a line, -1 when the line is too long (error filled). */
static int next_line(FILE *file, char *line, size_t size, const char *path, int number,
                     lcpd_error_t *error) {
  if (!fgets(line, (int)size, file))
    return 0;
  size_t length = strlen(line);
  if (length > 0 && line[length - 1] == '\n')
    line[--length] = '\0';
  else if (!feof(file)) {
    lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s:%d: line longer than %zu characters", path,
              number, size - 2);
    return -1;
  }
  return 1;
}

/* Calls parse on each line of a small text file (without its newline),
 * stopping at the first error. */
typedef int (*line_parser)(void *context, char *line, const char *path, int number,
                           lcpd_error_t *error);

static int read_lines(const char *path, line_parser parse, void *context, lcpd_error_t *error) {
  FILE *file = open_small_file(path, error);
  if (!file)
    return error->code;
  char buffer[MAX_LINE + 2];
  int number = 0, rc = LCP_OK, got;
  while (rc == LCP_OK && (got = next_line(file, buffer, sizeof buffer, path, ++number, error)) > 0)
    rc = parse(context, buffer, path, number, error);
  if (rc == LCP_OK && got < 0)
    rc = error->code;
  fclose(file);
  return rc;
}

/* One line of a key file: `name = "value"` (quotes optional), a comment or
 * blank. */
static int parse_key_line(void *context, char *text, const char *path, int number,
                          lcpd_error_t *error) {
  key_file *out = context;
  char *line = trim(text);
  if (line[0] == '\0' || line[0] == '#')
    return LCP_OK;
  char *equals = strchr(line, '=');
  if (!equals)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s:%d: expected `name = \"value\"` (public-key, secret-key or role)", path,
                     number);
  *equals = '\0';
  char *name = trim(line), *value = trim(equals + 1);
  size_t length = strlen(value);
  if (length >= 2 && value[0] == '"' && value[length - 1] == '"') {
    value[length - 1] = '\0';
    ++value;
  }
  uint8_t key[32];
  if (strcmp(name, "public-key") == 0 || strcmp(name, "secret-key") == 0) {
    bool secret = name[0] == 's';
    if (!decode_key(value, key))
      return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                       "%s:%d: %s must be 40 characters of Z85 (lcpsimd --gen-keys writes them)",
                       path, number, name);
    if (secret ? out->has_secret : out->has_public)
      return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s:%d: a second %s", path, number, name);
    snprintf(secret ? out->secret_key : out->public_key, LCPD_Z85_KEY_SIZE, "%s", value);
    *(secret ? &out->has_secret : &out->has_public) = true;
    return LCP_OK;
  }
  if (strcmp(name, "role") == 0) {
    out->has_role = true;
    if (!parse_role(value, &out->role))
      return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                       "%s:%d: role must be controller or observer", path, number);
    return LCP_OK;
  }
  return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                   "%s:%d: unknown name '%.40s' (public-key, secret-key or role)", path, number,
                   name);
}

static int read_key_file(const char *path, key_file *out, lcpd_error_t *error) {
  *out = (key_file){.role = LCPD_ROLE_CONTROLLER};
  return read_lines(path, parse_key_line, out, error);
}

static int read_server_key(lcpd_auth_t *auth, const char *path, lcpd_error_t *error) {
  key_file file;
  int rc = read_key_file(path, &file, error);
  if (rc != LCP_OK)
    return rc;
  if (!file.has_secret)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s: no secret-key line (--curve-secret-key takes the NAME.key file that "
                     "lcpsimd --gen-keys NAME writes)",
                     path);
  if (zmq_curve_public(auth->server_public, file.secret_key) != 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: cannot derive the public key: %s", path,
                     zmq_strerror(errno));
  if (file.has_public && strcmp(file.public_key, auth->server_public) != 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s: public-key is not the public key of secret-key", path);
  snprintf(auth->server_secret, sizeof auth->server_secret, "%s", file.secret_key);
  struct stat info;
  if (stat(path, &info) == 0 && (info.st_mode & 077))
    LCPD_WARN("%s: the secret key file can be read by others (mode %03o; chmod 600 it)", path,
              (unsigned)(info.st_mode & 0777));
  return LCP_OK;
}

/* ---- the allow-list ---- */

static int allow_key(lcpd_auth_t *auth, const uint8_t key[32], lcpd_role_t role, const char *where,
                     lcpd_error_t *error) {
  for (size_t i = 0; i < auth->key_count; ++i) {
    if (memcmp(auth->keys[i].key, key, 32) != 0)
      continue;
    if (auth->keys[i].role != role)
      return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                       "%s: the key is listed before as %s, here as %s", where,
                       lcpd_role_name(auth->keys[i].role), lcpd_role_name(role));
    return LCP_OK;
  }
  if (auth->key_count == MAX_ALLOWED_KEYS)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: more than %d keys", where,
                     MAX_ALLOWED_KEYS);
  if ((auth->key_count & (auth->key_count - 1)) == 0) { /* 0, 1, 2, 4, ...: grow */
    size_t capacity = auth->key_count ? 2 * auth->key_count : 1;
    lcpd_allowed_key_t *keys = realloc(auth->keys, capacity * sizeof *keys);
    if (!keys)
      return lcpd_fail(error, LCP_ERR_NO_MEMORY, "%s: out of memory", where);
    auth->keys = keys;
  }
  memcpy(auth->keys[auth->key_count].key, key, 32);
  auth->keys[auth->key_count++].role = role;
  return LCP_OK;
}

/* One line of an allow-list file: `<40-character Z85 public key>
 * controller|observer [# comment]`. A Z85 key may itself begin with '#', so
 * a line is a comment only when its first word is not a key. */
static int parse_allow_line(void *context, char *line, const char *path, int number,
                            lcpd_error_t *error) {
  lcpd_auth_t *auth = context;
  char *save = NULL;
  char *word = strtok_r(line, " \t\r", &save);
  uint8_t key[32];
  if (!word)
    return LCP_OK;
  if (!decode_key(word, key)) {
    if (word[0] == '#')
      return LCP_OK;
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s:%d: expected `<40-character Z85 public key> controller|observer`", path,
                     number);
  }
  char *role_word = strtok_r(NULL, " \t\r", &save);
  char *rest = strtok_r(NULL, "", &save);
  lcpd_role_t role;
  if (!role_word || !parse_role(role_word, &role))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s:%d: the key must be followed by its role, controller or observer", path,
                     number);
  if (rest && trim(rest)[0] != '\0' && trim(rest)[0] != '#')
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s:%d: after the role only a comment may follow (starting with #)", path,
                     number);
  char where[4096 + 32];
  snprintf(where, sizeof where, "%s:%d", path, number);
  return allow_key(auth, key, role, where, error);
}

static bool is_pub_file(const char *path) {
  size_t length = strlen(path);
  return length >= 4 && strcmp(path + length - 4, ".pub") == 0;
}

/* A NAME.pub file: its public-key and role (controller when none is named). */
static int read_pub_file(lcpd_auth_t *auth, const char *path, lcpd_error_t *error) {
  key_file file;
  uint8_t key[32];
  int rc = read_key_file(path, &file, error);
  if (rc != LCP_OK)
    return rc;
  if (file.has_secret)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "%s: holds a secret-key; an allow-list holds public keys only", path);
  if (!file.has_public || !decode_key(file.public_key, key))
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: no public-key line", path);
  return allow_key(auth, key, file.role, path, error);
}

/* Every *.pub file in the directory. */
static int read_allow_directory(lcpd_auth_t *auth, const char *path, lcpd_error_t *error) {
  DIR *dir = opendir(path);
  if (!dir)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: cannot open: %s", path, strerror(errno));
  int rc = LCP_OK;
  struct dirent *entry;
  while (rc == LCP_OK && (entry = readdir(dir)) != NULL) {
    if (!is_pub_file(entry->d_name))
      continue;
    char file_path[4096];
    if ((size_t)snprintf(file_path, sizeof file_path, "%s/%s", path, entry->d_name) >=
        sizeof file_path) {
      rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s/%s: path too long", path, entry->d_name);
      break;
    }
    rc = read_pub_file(auth, file_path, error);
  }
  closedir(dir);
  return rc;
}

int lcpd_auth_load(lcpd_auth_t *auth, const char *secret_key_file,
                   const char *const *authorized_keys, int list_count, lcpd_error_t *error) {
  *auth = (lcpd_auth_t){0};
  int rc = read_server_key(auth, secret_key_file, error);
  for (int i = 0; rc == LCP_OK && i < list_count; ++i) {
    struct stat info;
    if (stat(authorized_keys[i], &info) != 0)
      rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "--authorized-keys %s: %s",
                     authorized_keys[i], strerror(errno));
    else if (S_ISDIR(info.st_mode))
      rc = read_allow_directory(auth, authorized_keys[i], error);
    else if (is_pub_file(authorized_keys[i]))
      rc = read_pub_file(auth, authorized_keys[i], error);
    else
      rc = read_lines(authorized_keys[i], parse_allow_line, auth, error);
  }
  if (rc == LCP_OK && auth->key_count == 0)
    rc = lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                   "--authorized-keys: no keys (a file of `<public key> controller|observer` "
                   "lines, or a directory of .pub files)");
  if (rc != LCP_OK)
    lcpd_auth_close(auth);
  return rc;
}

/* ---- key generation ---- */

static int write_new_file(const char *path, int mode, const char *text, lcpd_error_t *error) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: %s%s", path, strerror(errno),
                     errno == EEXIST ? " (lcpsimd --gen-keys never overwrites a key)" : "");
  size_t length = strlen(text);
  bool ok = fchmod(fd, (mode_t)mode) == 0 && write(fd, text, length) == (ssize_t)length;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(path);
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "%s: cannot write: %s", path,
                     strerror(errno));
  }
  return LCP_OK;
}

int lcpd_keys_generate(const char *name, lcpd_role_t role, lcpd_error_t *error) {
  char public_key[LCPD_Z85_KEY_SIZE], secret_key[LCPD_Z85_KEY_SIZE];
  if (zmq_curve_keypair(public_key, secret_key) != 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot make a key pair: %s",
                     zmq_strerror(errno));
  char key_path[4096], pub_path[4096], text[512];
  if ((size_t)snprintf(key_path, sizeof key_path, "%s.key", name) >= sizeof key_path ||
      (size_t)snprintf(pub_path, sizeof pub_path, "%s.pub", name) >= sizeof pub_path)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "--gen-keys: the name is too long");
  snprintf(text, sizeof text,
           "# lcpsim CURVE key pair (lcpsimd --gen-keys). Keep this file secret: whoever\n"
           "# holds it is this peer.\n"
           "public-key = \"%s\"\n"
           "secret-key = \"%s\"\n",
           public_key, secret_key);
  int rc = write_new_file(key_path, 0600, text, error);
  if (rc != LCP_OK)
    return rc;
  snprintf(text, sizeof text,
           "# lcpsim CURVE public key (lcpsimd --gen-keys): give it to the daemon's\n"
           "# --authorized-keys, or to clients as the server's key.\n"
           "public-key = \"%s\"\n%s",
           public_key, role == LCPD_ROLE_OBSERVER ? "role = observer\n" : "");
  rc = write_new_file(pub_path, 0644, text, error);
  if (rc != LCP_OK)
    unlink(key_path);
  return rc;
}

/* ---- refused peers, rate-limited in the log ---- */

static uint64_t now_ns(void) { return uv_hrtime(); }

/* Logs a refusal from address (what: the reason; detail: more to print)
 * unless one from the same address was logged in the last minute, in which
 * case it is counted and the count goes with the next line logged. */
static void log_refusal(lcpd_auth_t *auth, const char *address, const char *what,
                        const char *detail) {
  uint64_t now = now_ns();
  char key[sizeof auth->refusals[0].address];
  snprintf(key, sizeof key, "%s", address);
  lcpd_refusal_log_t *entry = NULL, *oldest = &auth->refusals[0];
  for (int i = 0; i < LCPD_AUTH_LOG_ADDRESSES && !entry; ++i) {
    lcpd_refusal_log_t *e = &auth->refusals[i];
    if (e->logged_ns && strcmp(e->address, key) == 0)
      entry = e;
    else if (e->logged_ns < oldest->logged_ns)
      oldest = e;
  }
  if (entry && now - entry->logged_ns < REFUSAL_LOG_INTERVAL_NS) {
    entry->suppressed++;
    return;
  }
  if (!entry) {
    entry = oldest;
    if (entry->logged_ns && entry->suppressed)
      LCPD_WARN("refused %llu more connections from %s, not logged one by one",
                (unsigned long long)entry->suppressed, entry->address);
    snprintf(entry->address, sizeof entry->address, "%s", key);
    entry->suppressed = 0;
  }
  if (entry->suppressed)
    LCPD_WARN("refused a connection from %s: %s%s (and %llu more in the last minute, not "
              "logged)",
              address, what, detail, (unsigned long long)entry->suppressed);
  else
    LCPD_WARN("refused a connection from %s: %s%s (logged once a minute per address)", address,
              what, detail);
  entry->logged_ns = now ? now : 1;
  entry->suppressed = 0;
}

/* ---- the ZAP handler ---- */

#define ZAP_FRAMES 9

/* Copies a frame's bytes as a printable string (others become '?'). */
static void frame_text(zmq_msg_t *frame, char *out, size_t size) {
  size_t length = zmq_msg_size(frame);
  if (length >= size)
    length = size - 1;
  const unsigned char *data = zmq_msg_data(frame);
  for (size_t i = 0; i < length; ++i)
    out[i] = data[i] >= 0x20 && data[i] < 0x7f ? (char)data[i] : '?';
  out[length] = '\0';
}

static bool frame_is(zmq_msg_t *frame, const char *text) {
  size_t length = strlen(text);
  return zmq_msg_size(frame) == length && memcmp(zmq_msg_data(frame), text, length) == 0;
}

static void send_text(void *socket, const void *data, size_t size, bool more) {
  if (zmq_send(socket, data, size, (more ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) < 0)
    LCPD_ERROR("ZAP handler: cannot reply: %s", zmq_strerror(errno));
}

/* Answers one ZAP request (RFC 27): version, request id, domain, address,
 * routing id, mechanism, credentials. Returns false when none was waiting. */
static bool serve_zap_request(lcpd_auth_t *auth) {
  zmq_msg_t frames[ZAP_FRAMES];
  int count = 0;
  bool more = true;
  while (more) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, auth->zap, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      if (count == 0)
        return false;
      break;
    }
    more = zmq_msg_more(&frame);
    if (count < ZAP_FRAMES) {
      zmq_msg_init(&frames[count]);
      zmq_msg_move(&frames[count++], &frame);
    }
    zmq_msg_close(&frame);
  }
  const char *status = "400", *text = "not allowed", *user = "";
  char address[64] = "an unknown address";
  if (count >= 4)
    frame_text(&frames[3], address, sizeof address);
  if (count < 7 || !frame_is(&frames[0], "1.0")) {
    LCPD_ERROR("ZAP handler: a malformed request (%d frames)", count);
  } else if (!frame_is(&frames[2], LCPD_ZAP_DOMAIN) || !frame_is(&frames[5], "CURVE") ||
             zmq_msg_size(&frames[6]) != 32) {
    log_refusal(auth, address, "not a CURVE handshake in the lcpsim domain", "");
  } else {
    const uint8_t *key = zmq_msg_data(&frames[6]);
    char z85[LCPD_Z85_KEY_SIZE];
    zmq_z85_encode(z85, key, 32);
    const lcpd_allowed_key_t *allowed = NULL;
    for (size_t i = 0; i < auth->key_count && !allowed; ++i)
      if (memcmp(auth->keys[i].key, key, 32) == 0)
        allowed = &auth->keys[i];
    if (allowed) {
      status = "200";
      text = "OK";
      user = lcpd_role_name(allowed->role);
      LCPD_DEBUG("peer %s: key %s, %s", address, z85, user);
    } else {
      /* Rate-limited per address, whichever key it tries. */
      char detail[64];
      snprintf(detail, sizeof detail, " (%s)", z85);
      log_refusal(auth, address, "its public key is not in the allow-list", detail);
    }
  }
  /* The reply: version, request id, status code and text, user id, metadata. */
  send_text(auth->zap, "1.0", 3, true);
  if (count >= 2)
    send_text(auth->zap, zmq_msg_data(&frames[1]), zmq_msg_size(&frames[1]), true);
  else
    send_text(auth->zap, "", 0, true);
  send_text(auth->zap, status, 3, true);
  send_text(auth->zap, text, strlen(text), true);
  send_text(auth->zap, user, strlen(user), true);
  send_text(auth->zap, "", 0, false);
  for (int i = 0; i < count; ++i)
    zmq_msg_close(&frames[i]);
  return true;
}

/* ZMQ_FD signals edges only: read until nothing waits, then make sure by
 * asking ZMQ_EVENTS (a send may have taken the edge). */
static bool socket_readable(void *socket) {
  int events = 0;
  size_t size = sizeof events;
  return zmq_getsockopt(socket, ZMQ_EVENTS, &events, &size) == 0 && (events & ZMQ_POLLIN);
}

static void serve_zap(lcpd_auth_t *auth) {
  do {
    while (serve_zap_request(auth)) {
    }
  } while (socket_readable(auth->zap));
}

/* ---- handshake monitors ---- */

/* Handshakes that fail before the ZAP handler sees them: a peer without
 * CURVE (a plain-text client) or one that does not know the server's public
 * key. libzmq names the bound endpoint, not the peer, in these events. */
static bool serve_monitor_event(lcpd_auth_t *auth, void *monitor) {
  zmq_msg_t frame;
  zmq_msg_init(&frame);
  if (zmq_msg_recv(&frame, monitor, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&frame);
    return false;
  }
  uint16_t event = 0;
  uint32_t value = 0;
  bool more = zmq_msg_more(&frame);
  if (zmq_msg_size(&frame) >= 6) {
    const uint8_t *data = zmq_msg_data(&frame);
    memcpy(&event, data, sizeof event);
    memcpy(&value, data + 2, sizeof value);
  }
  zmq_msg_close(&frame);
  char endpoint[64] = "";
  while (more) {
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      break;
    }
    more = zmq_msg_more(&frame);
    frame_text(&frame, endpoint, sizeof endpoint);
    zmq_msg_close(&frame);
  }
  lcpd_auth_handshake_failed(auth, event, value, endpoint);
  return true;
}

void lcpd_auth_handshake_failed(lcpd_auth_t *auth, uint16_t event, uint32_t value,
                                const char *endpoint) {
  const char *what = "a peer that did not complete the CURVE handshake (no key, or a wrong "
                     "server key)";
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
      value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    what = "a peer without CURVE (no key)";
  else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
           value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
    what = "a peer whose CURVE handshake does not decrypt (a wrong server key)";
  char where[96];
  snprintf(where, sizeof where, "a peer of %s", endpoint);
  log_refusal(auth, where, what, "");
}

static void serve_monitor(lcpd_auth_t *auth, void *monitor) {
  do {
    while (serve_monitor_event(auth, monitor)) {
    }
  } while (socket_readable(monitor));
}

static void on_zap_poll(uv_poll_t *handle, int status, int events) {
  (void)status;
  (void)events;
  serve_zap(handle->data);
}

static void on_monitor_poll(uv_poll_t *handle, int status, int events) {
  (void)status;
  (void)events;
  lcpd_auth_t *auth = handle->data;
  serve_monitor(auth, auth->monitors[handle == &auth->monitor_polls[0] ? 0 : 1]);
}

/* ---- sockets ---- */

int lcpd_auth_open(lcpd_auth_t *auth, void *context, lcpd_error_t *error) {
  auth->zap = zmq_socket(context, ZMQ_REP);
  if (!auth->zap)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot create the ZAP handler's socket: %s",
                     zmq_strerror(errno));
  int zero = 0;
  zmq_setsockopt(auth->zap, ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_bind(auth->zap, ZAP_ENDPOINT) != 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT, "cannot bind the ZAP handler to %s: %s",
                     ZAP_ENDPOINT, zmq_strerror(errno));
  return LCP_OK;
}

int lcpd_auth_secure_socket(lcpd_auth_t *auth, void *context, void *socket, int index,
                            bool watch_handshakes, lcpd_error_t *error) {
  int one = 1;
  if (zmq_setsockopt(socket, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, auth->server_secret, 40) != 0 ||
      zmq_setsockopt(socket, ZMQ_ZAP_DOMAIN, LCPD_ZAP_DOMAIN, strlen(LCPD_ZAP_DOMAIN)) != 0 ||
      zmq_setsockopt(socket, ZMQ_ZAP_ENFORCE_DOMAIN, &one, sizeof one) != 0)
    return lcpd_fail(error, LCP_ERR_INVALID_ARGUMENT,
                     "cannot make a CURVE server socket: %s (is libzmq built with CURVE?)",
                     zmq_strerror(errno));
  if (!watch_handshakes)
    return LCP_OK;
  char endpoint[64];
  snprintf(endpoint, sizeof endpoint, "inproc://lcpsimd-handshakes-%d", index);
  if (zmq_socket_monitor(socket, endpoint,
                         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot monitor handshakes: %s",
                     zmq_strerror(errno));
  auth->monitors[index] = zmq_socket(context, ZMQ_PAIR);
  if (!auth->monitors[index])
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot create a monitor socket: %s",
                     zmq_strerror(errno));
  int zero = 0;
  zmq_setsockopt(auth->monitors[index], ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_connect(auth->monitors[index], endpoint) != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot connect a monitor socket: %s",
                     zmq_strerror(errno));
  return LCP_OK;
}

static int watch(uv_loop_t *loop, uv_poll_t *poll, void *socket, uv_poll_cb callback,
                 lcpd_auth_t *auth) {
  int fd = -1;
  size_t size = sizeof fd;
  if (zmq_getsockopt(socket, ZMQ_FD, &fd, &size) != 0)
    return UV_EINVAL;
  int rc = uv_poll_init(loop, poll, fd);
  poll->data = auth;
  return rc == 0 ? uv_poll_start(poll, UV_READABLE, callback) : rc;
}

int lcpd_auth_watch(lcpd_auth_t *auth, uv_loop_t *loop, lcpd_error_t *error) {
  int rc = watch(loop, &auth->zap_poll, auth->zap, on_zap_poll, auth);
  auth->polls_open = true;
  for (int i = 0; i < 2 && rc == 0; ++i)
    if (auth->monitors[i])
      rc = watch(loop, &auth->monitor_polls[i], auth->monitors[i], on_monitor_poll, auth);
  if (rc != 0)
    return lcpd_fail(error, LCP_ERR_NO_MEMORY, "cannot watch the ZAP handler: %s", uv_strerror(rc));
  /* Requests may have come before the watch began: ZMQ_FD would not signal
   * them again. */
  serve_zap(auth);
  for (int i = 0; i < 2; ++i)
    if (auth->monitors[i])
      serve_monitor(auth, auth->monitors[i]);
  return LCP_OK;
}

void lcpd_auth_close_handles(lcpd_auth_t *auth) {
  if (!auth->polls_open)
    return;
  uv_poll_t *polls[] = {&auth->zap_poll, &auth->monitor_polls[0], &auth->monitor_polls[1]};
  for (size_t i = 0; i < sizeof polls / sizeof polls[0]; ++i) {
    uv_handle_t *handle = (uv_handle_t *)polls[i];
    if (handle->loop && !uv_is_closing(handle))
      uv_close(handle, NULL);
  }
  auth->polls_open = false;
}

void lcpd_auth_close(lcpd_auth_t *auth) {
  for (int i = 0; i < 2; ++i)
    if (auth->monitors[i])
      zmq_close(auth->monitors[i]);
  if (auth->zap)
    zmq_close(auth->zap);
  auth->zap = auth->monitors[0] = auth->monitors[1] = NULL;
  free(auth->keys);
  auth->keys = NULL;
  auth->key_count = 0;
  /* The secret key leaves memory with the daemon's last use of it. */
  memset(auth->server_secret, 0, sizeof auth->server_secret);
}

lcpd_role_t lcpd_auth_role_of(void *frame) {
  const char *user = zmq_msg_gets(frame, "User-Id");
  /* Every connection to a CURVE socket went through the ZAP handler, which
   * names a role; anything else gets the lesser one. */
  return user && strcmp(user, "controller") == 0 ? LCPD_ROLE_CONTROLLER : LCPD_ROLE_OBSERVER;
}

/* ---- endpoints ---- */

bool lcpd_endpoint_is_local(const char *endpoint) {
  /* The transports that reach other machines; any other (ipc, inproc, or
   * one libzmq does not know, which zmq_bind refuses) stays here. */
  static const char *const networked[] = {"tcp://", "udp://", "pgm://",  "epgm://", "norm://",
                                          "ws://",  "wss://", "tipc://", "vmci://"};
  bool network = false;
  for (size_t i = 0; i < sizeof networked / sizeof networked[0]; ++i)
    network = network || strncmp(endpoint, networked[i], strlen(networked[i])) == 0;
  if (!network)
    return true;
  if (strncmp(endpoint, "tcp://", 6) != 0)
    return false;
  const char *host = endpoint + 6;
  const char *colon = strrchr(host, ':');
  if (!colon || colon == host || strchr(host, ';'))
    return false;
  char name[256];
  size_t length = (size_t)(colon - host);
  if (host[0] == '[' && colon[-1] == ']') { /* [::1]:5555 */
    host++;
    length -= 2;
  }
  if (length >= sizeof name)
    return false;
  memcpy(name, host, length);
  name[length] = '\0';
  /* libzmq binds an interface by name too: "lo" is the loopback's. */
  if (strcmp(name, "localhost") == 0 || strcmp(name, "lo") == 0)
    return true;
  struct in_addr v4;
  struct in6_addr v6;
  if (inet_pton(AF_INET, name, &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, name, &v6) == 1)
    return memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
  return false;
}
