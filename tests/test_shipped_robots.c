/* SPDX-License-Identifier: Apache-2.0 */
/* The shipped robots are found at run time (lcp_shipped_robots_dir): through
 * LCPSIM_ROBOTS_DIR when it is set, else, for a program of the build tree,
 * the copy the build makes under <build>/share/lcpsim/robots. (The installed
 * tree's lookup, relative to the program, is tested by install_consumer.) */
#define _XOPEN_SOURCE 700 /* realpath, setenv, unsetenv */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lcpsim/urdf.h"

/* The path with symbolic links and ".." resolved (the test fails if it does not exist). */
static void resolved(const char *path, char out[4096]) {
  char *real = realpath(path, NULL);
  assert_non_null(real);
  assert_true(strlen(real) < 4096);
  strcpy(out, real);
  free(real);
}

/* The whole content of a file (malloc'd), its length in *size. */
static char *read_all(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  assert_non_null(file);
  assert_int_equal(fseek(file, 0, SEEK_END), 0);
  long length = ftell(file);
  assert_true(length > 0);
  rewind(file);
  char *bytes = malloc((size_t)length);
  assert_non_null(bytes);
  assert_int_equal(fread(bytes, 1, (size_t)length, file), (size_t)length);
  fclose(file);
  *size = (size_t)length;
  return bytes;
}

/* Without the variable, a program of the build tree finds the build's copy,
 * and each shipped file there is byte for byte the source's. */
static void test_build_tree_copy_without_environment(void **state) {
  (void)state;
  assert_int_equal(unsetenv("LCPSIM_ROBOTS_DIR"), 0);
  char dir[4096], error[1024], expected[4096];
  assert_int_equal(lcp_shipped_robots_dir(dir, sizeof dir, error, sizeof error), LCP_OK);
  assert_string_equal(error, "");
  resolved(LCP_TEST_BUILD_ROBOTS_DIR, expected);
  assert_string_equal(dir, expected);

  static const char *const robots[] = {"arm7.urdf", "pendulum2.urdf", "quadruped.urdf"};
  for (size_t i = 0; i < sizeof robots / sizeof robots[0]; ++i) {
    char path[4096], source[4096], in_dir[4200];
    assert_int_equal(lcp_shipped_robot_path(robots[i], path, sizeof path, error, sizeof error),
                     LCP_OK);
    snprintf(in_dir, sizeof in_dir, "%s/%s", dir, robots[i]);
    assert_string_equal(path, in_dir);
    snprintf(source, sizeof source, "%s/%s", LCP_TEST_ROBOTS_DIR, robots[i]);
    size_t copy_size, source_size;
    char *copy_bytes = read_all(path, &copy_size), *source_bytes = read_all(source, &source_size);
    assert_int_equal(copy_size, source_size);
    assert_memory_equal(copy_bytes, source_bytes, source_size);
    free(copy_bytes);
    free(source_bytes);
  }
}

/* LCPSIM_ROBOTS_DIR wins over every other place. */
static void test_environment_names_the_directory(void **state) {
  (void)state;
  assert_int_equal(setenv("LCPSIM_ROBOTS_DIR", LCP_TEST_ROBOTS_DIR, 1), 0);
  char dir[4096], error[1024], expected[4096], path[4096];
  assert_int_equal(lcp_shipped_robots_dir(dir, sizeof dir, error, sizeof error), LCP_OK);
  resolved(LCP_TEST_ROBOTS_DIR, expected);
  assert_string_equal(dir, expected);
  assert_int_equal(lcp_shipped_robot_path("arm7.urdf", path, sizeof path, error, sizeof error),
                   LCP_OK);
  lcp_robot_def_t *arm = NULL;
  assert_int_equal(lcp_urdf_load_file(path, NULL, &arm, error, sizeof error), LCP_OK);
  assert_int_equal(arm->link_count, 8); /* the base and 7 links */
  lcp_robot_def_free(&arm);
  assert_int_equal(unsetenv("LCPSIM_ROBOTS_DIR"), 0);
}

/* A variable naming no directory is an error that names it: the lookup does
 * not fall back to other robots. */
static void test_wrong_environment_is_an_error(void **state) {
  (void)state;
  const char *missing = LCP_TEST_DATA_DIR "/no-such-directory";
  assert_int_equal(setenv("LCPSIM_ROBOTS_DIR", missing, 1), 0);
  char dir[4096], error[1024];
  assert_int_equal(lcp_shipped_robots_dir(dir, sizeof dir, error, sizeof error), LCP_ERR_NOT_FOUND);
  assert_non_null(strstr(error, "LCPSIM_ROBOTS_DIR"));
  assert_non_null(strstr(error, missing));
  assert_string_equal(dir, "");
  assert_int_equal(unsetenv("LCPSIM_ROBOTS_DIR"), 0);
}

/* A file the directory does not hold, and buffers too small. */
static void test_missing_file_and_small_buffers(void **state) {
  (void)state;
  assert_int_equal(unsetenv("LCPSIM_ROBOTS_DIR"), 0);
  char dir[4096], path[4096], error[1024], small[4];
  assert_int_equal(lcp_shipped_robots_dir(dir, sizeof dir, NULL, 0), LCP_OK);
  assert_int_equal(
      lcp_shipped_robot_path("no_such_robot.urdf", path, sizeof path, error, sizeof error),
      LCP_ERR_NOT_FOUND);
  assert_non_null(strstr(error, "no_such_robot.urdf"));
  assert_non_null(strstr(error, dir));
  assert_int_equal(lcp_shipped_robots_dir(small, sizeof small, error, sizeof error),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_shipped_robot_path("arm7.urdf", small, sizeof small, error, sizeof error),
                   LCP_ERR_INVALID_ARGUMENT);
  assert_int_equal(lcp_shipped_robot_path("", path, sizeof path, error, sizeof error),
                   LCP_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_build_tree_copy_without_environment),
      cmocka_unit_test(test_environment_names_the_directory),
      cmocka_unit_test(test_wrong_environment_is_an_error),
      cmocka_unit_test(test_missing_file_and_small_buffers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
