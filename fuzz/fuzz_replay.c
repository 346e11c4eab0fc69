/* SPDX-License-Identifier: Apache-2.0 */
/* Runs a harness on saved inputs without libFuzzer, so that the regression
 * inputs (and the seed corpus) are ordinary tests of every build, gcc's and
 * the sanitizer build's included:
 *   fuzz_replay_TARGET FILE|DIR...
 * A directory's files are run in name order (dot files and README.md are
 * skipped). A crash or a sanitizer report fails the test; otherwise the exit
 * status is 0, or 1 when an argument cannot be read. */
#include "fuzz_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path) {
  size_t size;
  char *data = lcp__fuzz_read_file(path, &size);
  printf("replay %s (%zu bytes)\n", path, size);
  fflush(stdout);
  /* A copy of exactly the input's size, so that reading past it is caught
   * by AddressSanitizer as libFuzzer's own buffers would catch it. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy)
    return 1;
  memcpy(copy, data, size);
  free(data);
  LLVMFuzzerTestOneInput(copy, size);
  free(copy);
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir_path) {
  DIR *dir = opendir(dir_path);
  if (!dir) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", dir_path);
    return 1;
  }
  char **names = NULL;
  size_t count = 0, capacity = 0;
  struct dirent *entry;
  while ((entry = readdir(dir))) {
    if (entry->d_name[0] == '.' || strcmp(entry->d_name, "README.md") == 0)
      continue;
    if (count == capacity) {
      capacity = capacity ? 2 * capacity : 64;
      char **grown = realloc(names, capacity * sizeof *names);
      if (!grown)
        abort();
      names = grown;
    }
    size_t length = strlen(dir_path) + strlen(entry->d_name) + 2;
    names[count] = malloc(length);
    if (!names[count])
      abort();
    snprintf(names[count++], length, "%s/%s", dir_path, entry->d_name);
  }
  closedir(dir);
  if (count > 0)
    qsort(names, count, sizeof *names, compare_names);
  int failed = 0;
  for (size_t i = 0; i < count; ++i) {
    struct stat info;
    if (stat(names[i], &info) == 0 && S_ISREG(info.st_mode))
      failed |= replay_file(names[i]);
    free(names[i]);
  }
  free(names);
  printf("%zu inputs in %s\n", count, dir_path);
  return failed;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat info;
    if (stat(argv[i], &info) != 0) {
      fprintf(stderr, "fuzz_replay: no such file or directory: %s\n", argv[i]);
      failed = 1;
    } else if (S_ISDIR(info.st_mode)) {
      failed |= replay_dir(argv[i]);
    } else {
      failed |= replay_file(argv[i]);
    }
  }
  return failed;
}
