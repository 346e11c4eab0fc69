/* SPDX-License-Identifier: Apache-2.0 */
/* What the fuzz harnesses share: the libFuzzer entry point they define, and a
 * private temporary directory in which the loaders that read only from paths
 * (scene files, STL meshes) are given their input. A harness touches no other
 * part of the filesystem but what it reads once at start (the shipped robots
 * and the test meshes, copied into the temporary directory). */
#ifndef LCP_FUZZ_SUPPORT_H
#define LCP_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point, defined by each harness; fuzz_replay.c calls it
 * too, for the regression inputs, without libFuzzer. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's temporary directory, made on first use (under TMPDIR, else
 * /tmp) and removed with every file put there when the process exits. Aborts
 * when it cannot be made: a harness without it would test nothing. */
const char *lcp__fuzz_temp_dir(void);

/* Writes size bytes into the file `name` of the temporary directory
 * (replacing it) and returns its path, valid until the next call with the
 * same name. Aborts on a write error. */
const char *lcp__fuzz_temp_file(const char *name, const void *data, size_t size);

/* Reads a whole file into a NUL-terminated malloc'd buffer (*size without the
 * NUL); aborts when it cannot (the harness's fixed inputs must be there). */
char *lcp__fuzz_read_file(const char *path, size_t *size);

/* Copies a file into the temporary directory under `name`. */
void lcp__fuzz_copy_to_temp(const char *path, const char *name);

#endif
