/* SPDX-License-Identifier: Apache-2.0 */
/* lcpd-lockstep-reference STEPS: prints the in-process reference run's
 * final state (lockstep_reference.h), for tests of clients in other
 * languages:
 *   h <timestep as %a>
 *   step_count <n>
 *   q <q_0 as %a> ...
 *   values <every value of the flat state as %a> ... */
#include "lockstep_reference.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2 || atoi(argv[1]) < 0) {
    fprintf(stderr, "usage: lcpd-lockstep-reference STEPS\n");
    return 2;
  }
  static lockstep_state_t state;
  double h;
  char error[512];
  if (lockstep_reference_run(atoi(argv[1]), &state, &h, error, sizeof error) != 0) {
    fprintf(stderr, "lcpd-lockstep-reference: %s\n", error);
    return 1;
  }
  printf("h %a\nstep_count %llu\nq", h, (unsigned long long)state.step_count);
  for (size_t i = 0; i < state.q_count; ++i)
    printf(" %a", state.values[state.q_offset + i]);
  printf("\nvalues");
  for (size_t i = 0; i < state.count; ++i)
    printf(" %a", state.values[i]);
  printf("\n");
  return 0;
}
