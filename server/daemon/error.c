/* SPDX-License-Identifier: Apache-2.0 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int lcpd_fail(lcpd_error_t *error, int code, const char *fmt, ...) {
  if (error) {
    error->code = code;
    va_list args;
    va_start(args, fmt);
    vsnprintf(error->message, sizeof error->message, fmt, args);
    va_end(args);
    /* A message cut short may end inside a character; replies carry only
     * UTF-8. */
    lcpd_utf8_repair(error->message);
  }
  return code;
}

int lcpd_error_prefix(lcpd_error_t *error, const char *fmt, ...) {
  if (!error)
    return LCP_ERR_INVALID_ARGUMENT;
  char message[sizeof error->message];
  snprintf(message, sizeof message, "%s", error->message);
  va_list args;
  va_start(args, fmt);
  int length = vsnprintf(error->message, sizeof error->message, fmt, args);
  va_end(args);
  if (length >= 0 && (size_t)length < sizeof error->message)
    snprintf(error->message + length, sizeof error->message - (size_t)length, "%s", message);
  lcpd_utf8_repair(error->message);
  return error->code;
}

/* ---- UTF-8 ---- */

/* The length of the well-formed UTF-8 sequence at s (of at most n bytes),
 * by the table of well-formed byte sequences in the Unicode Standard
 * (chapter 3, "UTF-8"): no overlong forms, no surrogates (U+D800 to U+DFFF),
 * nothing above U+10FFFF. 0 when the bytes there are not one. */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80)
    return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xbf; /* the second byte's range */
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0)
      low = 0xa0; /* overlong below U+0800 */
    else if (c == 0xed)
      high = 0x9f; /* surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0)
      low = 0x90; /* overlong below U+10000 */
    else if (c == 0xf4)
      high = 0x8f; /* above U+10FFFF */
  } else {
    return 0; /* a continuation byte, an overlong lead (C0, C1) or F5 to FF */
  }
  if (n < length || s[1] < low || s[1] > high)
    return 0;
  for (size_t k = 2; k < length; ++k)
    if (s[k] < 0x80 || s[k] > 0xbf)
      return 0;
  return length;
}

bool lcpd_utf8_valid(const char *text, size_t size) {
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i < size;) {
    size_t length = utf8_sequence(s + i, size - i);
    if (length == 0)
      return false;
    i += length;
  }
  return true;
}

void lcpd_utf8_repair(char *text) {
  unsigned char *s = (unsigned char *)text;
  size_t size = strlen(text);
  for (size_t i = 0; i < size;) {
    size_t length = utf8_sequence(s + i, size - i);
    if (length == 0) {
      s[i++] = '?';
      continue;
    }
    i += length;
  }
}

const char *lcpd_quote(char *buffer, size_t size, const char *name) {
  static const char ellipsis[] = "\xe2\x80\xa6"; /* … */
  if (size < sizeof ellipsis + 1) {
    if (size)
      buffer[0] = '\0';
    return buffer;
  }
  /* The most bytes of quoted text, the ellipsis and the NUL left out. */
  size_t cap =
      size - sizeof ellipsis < LCPD_QUOTE_BYTES ? size - sizeof ellipsis : LCPD_QUOTE_BYTES;
  const unsigned char *s = (const unsigned char *)(name ? name : "");
  size_t n = strlen((const char *)s), used = 0;
  for (size_t i = 0; i < n;) {
    char piece[8];
    size_t piece_length, length = utf8_sequence(s + i, n - i);
    unsigned code = length == 2 ? (unsigned)((s[i] & 0x1fu) << 6 | (s[i + 1] & 0x3fu)) : 0;
    if (length == 0 || (length == 1 && (s[i] < 0x20 || s[i] == 0x7f || s[i] == '\\'))) {
      /* a byte that is not text, a control character or the escape itself */
      piece_length = (size_t)snprintf(piece, sizeof piece, "\\x%02x", s[i]);
      length = 1;
    } else if (length == 2 && code < 0xa0) {
      /* a C1 control character (U+0080 to U+009F) */
      piece_length = (size_t)snprintf(piece, sizeof piece, "\\u%04x", code);
    } else {
      memcpy(piece, s + i, length);
      piece_length = length;
    }
    if (used + piece_length > cap) {
      memcpy(buffer + used, ellipsis, sizeof ellipsis);
      return buffer;
    }
    memcpy(buffer + used, piece, piece_length);
    used += piece_length;
    i += length;
  }
  buffer[used] = '\0';
  return buffer;
}
