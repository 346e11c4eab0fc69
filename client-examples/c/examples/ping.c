/* SPDX-License-Identifier: Apache-2.0 */
/* ping: one Ping round trip to lcpsimd within a timeout. Exit status 0 when the daemon answered,
 * 1 when it did not (it serves as a Docker HEALTHCHECK), 2 for a wrong command line.
 *
 *   ping [--timeout-ms MS] [--server-key FILE --client-key FILE] [ENDPOINT]
 *                                         (defaults 1000 ms, tcp://127.0.0.1:5555)
 *
 * With --server-key (the daemon's NAME.pub) and --client-key (this client's NAME.key) it connects
 * with CURVE, as a daemon started with --curve-secret-key requires. The environment variables
 * LCPSIM_SERVER_KEY and LCPSIM_CLIENT_KEY give the same files when the options are not given.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lcpsim_client.h"

static int usage(const char *program) {
  fprintf(stderr, "usage: %s [--timeout-ms MS] [--server-key FILE --client-key FILE] [ENDPOINT]\n",
          program);
  return 2;
}

int main(int argc, char **argv) {
  long timeout_ms = 1000;
  const char *server_key = getenv("LCPSIM_SERVER_KEY"), *client_key = getenv("LCPSIM_CLIENT_KEY");
  static const struct option options[] = {{"timeout-ms", required_argument, NULL, 't'},
                                          {"server-key", required_argument, NULL, 's'},
                                          {"client-key", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  for (int option; (option = getopt_long(argc, argv, "t:h", options, NULL)) != -1;) {
    char *end = NULL;
    switch (option) {
    case 't':
      timeout_ms = strtol(optarg, &end, 10);
      if (*end != '\0' || timeout_ms <= 0 || timeout_ms > 3600000)
        return usage(argv[0]);
      break;
    case 's':
      server_key = optarg;
      break;
    case 'c':
      client_key = optarg;
      break;
    default:
      return usage(argv[0]);
    }
  }
  if (argc - optind > 1)
    return usage(argv[0]);
  const char *endpoint = optind < argc ? argv[optind] : "tcp://127.0.0.1:5555";

  if ((server_key && *server_key) != (client_key && *client_key)) {
    fprintf(stderr, "ping: --server-key and --client-key go together\n");
    return 2;
  }
  lcpsim_curve_keys_t keys;
  bool curve = server_key && *server_key;
  char why[512];
  if (curve && lcpsim_curve_keys_load(server_key, client_key, &keys, why, sizeof why) != 0) {
    fprintf(stderr, "ping: %s\n", why);
    return 2;
  }
  lcpsim_client_t *client = NULL;
  if (lcpsim_client_connect_secure(endpoint, (int)timeout_ms, curve ? &keys : NULL, &client) !=
      LCPSIM_OK) {
    fprintf(stderr, "ping: cannot connect to %s\n", endpoint);
    return 1;
  }
  char version[64];
  int code = lcpsim_client_ping(client, version, sizeof version);
  if (code == LCPSIM_OK)
    printf("ping: %s answered (%s)\n", endpoint, version);
  else
    fprintf(stderr, "ping: %s: %s (%s)\n", endpoint, lcpsim_status_name(code),
            lcpsim_client_last_error(client));
  lcpsim_client_destroy(&client);
  return code == LCPSIM_OK ? 0 : 1;
}
