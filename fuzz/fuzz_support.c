/* SPDX-License-Identifier: Apache-2.0 */
#include "fuzz_support.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The files put into the directory, removed at exit (a fixed few: each
 * harness writes its input under one name, and copies a handful of files). */
#define MAX_TEMP_FILES 16

static char temp_dir[PATH_MAX];
static char temp_paths[MAX_TEMP_FILES][PATH_MAX];
static int temp_count;

static void remove_temp_dir(void) {
  for (int i = 0; i < temp_count; ++i)
    unlink(temp_paths[i]);
  if (temp_dir[0])
    rmdir(temp_dir);
}

static void die(const char *what, const char *path) {
  fprintf(stderr, "fuzz harness: %s %s\n", what, path);
  abort();
}

const char *lcp__fuzz_temp_dir(void) {
  if (temp_dir[0])
    return temp_dir;
  const char *base = getenv("TMPDIR");
  if (!base || !base[0])
    base = "/tmp";
  snprintf(temp_dir, sizeof temp_dir, "%s/lcpsim-fuzz-XXXXXX", base);
  if (!mkdtemp(temp_dir))
    die("cannot make a temporary directory like", temp_dir);
  atexit(remove_temp_dir);
  return temp_dir;
}

static const char *temp_path(const char *name) {
  char path[PATH_MAX];
  int length = snprintf(path, sizeof path, "%s/%s", lcp__fuzz_temp_dir(), name);
  if (length < 0 || (size_t)length >= sizeof path)
    die("a path too long in", lcp__fuzz_temp_dir());
  for (int i = 0; i < temp_count; ++i)
    if (strcmp(temp_paths[i], path) == 0)
      return temp_paths[i];
  if (temp_count == MAX_TEMP_FILES)
    die("too many temporary files at", path);
  memcpy(temp_paths[temp_count], path, sizeof path);
  return temp_paths[temp_count++];
}

const char *lcp__fuzz_temp_file(const char *name, const void *data, size_t size) {
  const char *path = temp_path(name);
  FILE *file = fopen(path, "wb");
  if (!file)
    die("cannot write", path);
  bool ok = fwrite(data, 1, size, file) == size;
  if (fclose(file) != 0 || !ok)
    die("cannot write", path);
  return path;
}

char *lcp__fuzz_read_file(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    die("cannot read", path);
  size_t capacity = 4096, used = 0;
  char *data = malloc(capacity);
  for (;;) {
    if (!data)
      die("out of memory reading", path);
    used += fread(data + used, 1, capacity - used - 1, file);
    if (used < capacity - 1)
      break;
    capacity *= 2;
    data = realloc(data, capacity);
  }
  bool failed = ferror(file);
  fclose(file);
  if (failed)
    die("cannot read", path);
  data[used] = '\0';
  *size = used;
  return data;
}

void lcp__fuzz_copy_to_temp(const char *path, const char *name) {
  size_t size;
  char *data = lcp__fuzz_read_file(path, &size);
  lcp__fuzz_temp_file(name, data, size);
  free(data);
}
