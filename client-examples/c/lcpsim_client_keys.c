/* SPDX-License-Identifier: Apache-2.0 */
/* lcpsim_client: CURVE keys, read from the files `lcpsimd --gen-keys` writes and set on a
 * socket. */
#include "lcpsim_client_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

static int key_file_error(char *why, size_t why_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int key_file_error(char *why, size_t why_size, const char *format, ...) {
  if (why && why_size) {
    va_list args;
    va_start(args, format);
    vsnprintf(why, why_size, format, args);
    va_end(args);
  }
  return LCPSIM_ERR_INVALID_ARGUMENT;
}

static char *trim_space(char *text) {
  while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
    ++text;
  size_t length = strlen(text);
  while (length > 0 && strchr(" \t\r\n", text[length - 1]))
    text[--length] = '\0';
  return text;
}

int lcpsim_read_key_file(const char *path, char public_key[LCPSIM_KEY_SIZE],
                         char secret_key[LCPSIM_KEY_SIZE], char *why, size_t why_size) {
  if (!path)
    return LCPSIM_ERR_USAGE;
  char found_public[LCPSIM_KEY_SIZE] = "", found_secret[LCPSIM_KEY_SIZE] = "";
  FILE *file = fopen(path, "r");
  if (!file)
    return key_file_error(why, why_size, "%s: %s", path, strerror(errno));
  char buffer[1024];
  int number = 0, code = LCPSIM_OK;
  while (code == LCPSIM_OK && fgets(buffer, sizeof buffer, file)) {
    ++number;
    char *line = trim_space(buffer);
    if (line[0] == '\0' || line[0] == '#')
      continue;
    char *equals = strchr(line, '=');
    if (!equals) {
      code = key_file_error(why, why_size, "%s:%d: expected `name = \"value\"`", path, number);
      break;
    }
    *equals = '\0';
    char *name = trim_space(line), *value = trim_space(equals + 1);
    size_t length = strlen(value);
    if (length >= 2 && value[0] == '"' && value[length - 1] == '"') {
      value[length - 1] = '\0';
      ++value;
    }
    uint8_t decoded[32];
    bool is_public = strcmp(name, "public-key") == 0, is_secret = strcmp(name, "secret-key") == 0;
    if (strcmp(name, "role") == 0)
      continue;
    if (!is_public && !is_secret)
      code = key_file_error(why, why_size, "%s:%d: unknown name (public-key, secret-key, role)",
                            path, number);
    else if (strlen(value) != 40 || !zmq_z85_decode(decoded, value))
      code = key_file_error(why, why_size, "%s:%d: %s must be 40 characters of Z85", path, number,
                            name);
    else
      memcpy(is_public ? found_public : found_secret, value, LCPSIM_KEY_SIZE);
  }
  fclose(file);
  if (code != LCPSIM_OK)
    return code;
  if (!found_public[0] && found_secret[0] && zmq_curve_public(found_public, found_secret) != 0)
    return key_file_error(why, why_size, "%s: cannot derive the public key", path);
  if (public_key)
    memcpy(public_key, found_public, LCPSIM_KEY_SIZE);
  if (secret_key)
    memcpy(secret_key, found_secret, LCPSIM_KEY_SIZE);
  return LCPSIM_OK;
}

int lcpsim_curve_keys_load(const char *server_key_file, const char *client_key_file,
                           lcpsim_curve_keys_t *keys, char *why, size_t why_size) {
  if (!server_key_file || !client_key_file || !keys)
    return LCPSIM_ERR_USAGE;
  memset(keys, 0, sizeof *keys);
  int code = lcpsim_read_key_file(server_key_file, keys->server_public_key, NULL, why, why_size);
  if (code == LCPSIM_OK)
    code = lcpsim_read_key_file(client_key_file, keys->public_key, keys->secret_key, why, why_size);
  if (code == LCPSIM_OK && !keys->server_public_key[0])
    code = key_file_error(why, why_size, "%s: no public-key", server_key_file);
  if (code == LCPSIM_OK && !keys->secret_key[0])
    code = key_file_error(why, why_size, "%s: no secret-key (give the NAME.key file)",
                          client_key_file);
  return code;
}

/* Makes socket a CURVE client with keys (NULL: leaves it plain). */
int lcpc_set_curve(void *socket, const lcpsim_curve_keys_t *keys) {
  if (!keys)
    return 0;
  if (zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, keys->server_public_key, 40) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, keys->public_key, 40) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, keys->secret_key, 40) != 0)
    return -1;
  return 0;
}
