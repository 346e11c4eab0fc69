#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lcpsim-entrypoint: the Docker image's entrypoint. Starts lcpsimd with the
# given arguments, and says on stderr which way it runs:
#
#   CURVE       when the server's key file and the allow-list are there
#               (compose secrets lcpsim_server_key and lcpsim_authorized_keys,
#               mounted at /run/secrets/): --curve-secret-key and
#               --authorized-keys, plus an observer key of the container's own
#               that the health check uses;
#   INSECURE    when LCPSIM_INSECURE=1 and there are no keys: --insecure, no
#               authentication at all;
#   neither     lcpsimd as given, which refuses a non-loopback --bind or --pub
#               and says how to make keys.
#
# --http (the image's CMD serves it on 0.0.0.0:8080): the HTTP side has no
# authentication (it is read-only: the viewer's page and stream, /metrics,
# /healthz), so lcpsimd serves it beyond the loopback only with --insecure.
# Under CURVE the entrypoint adds --insecure for it (which changes nothing for
# the CURVE sockets) and says so; publish the port only where the world may
# be watched.
#
#   lcpsim-entrypoint health [PING OPTIONS]   the health check: lcpsim-ping,
#                                            with the health key under CURVE
#   lcpsim-entrypoint healthz [HOST:PORT]    GET /healthz from lcpsimd --http
#                                            (default 127.0.0.1:8080): 0 when it
#                                            answers 200 within 5 s. The image has
#                                            no curl or wget: bash's /dev/tcp.
#   lcpsim-entrypoint --gen-keys NAME ...    lcpsimd --gen-keys, nothing else
#
# Environment: LCPSIM_SERVER_KEY (default /run/secrets/lcpsim_server_key),
# LCPSIM_AUTHORIZED_KEYS (default /run/secrets/lcpsim_authorized_keys, a file
# or a directory), LCPSIM_INSECURE, LCPSIM_HEALTH_KEY (the health key's NAME,
# default /tmp/lcpsim-health).
set -eu
SERVER_KEY=${LCPSIM_SERVER_KEY:-/run/secrets/lcpsim_server_key}
AUTHORIZED_KEYS=${LCPSIM_AUTHORIZED_KEYS:-/run/secrets/lcpsim_authorized_keys}
HEALTH=${LCPSIM_HEALTH_KEY:-/tmp/lcpsim-health}

say() { printf 'lcpsim-entrypoint: %s\n' "$*" >&2; }

if [ "${1:-}" = health ]; then
  shift
  if [ -f "$HEALTH.key" ] && [ -f "$SERVER_KEY" ]; then
    exec lcpsim-ping --server-key "$SERVER_KEY" --client-key "$HEALTH.key" "$@"
  fi
  exec lcpsim-ping "$@"
fi
if [ "${1:-}" = healthz ]; then
  address=${2:-127.0.0.1:8080}
  # shellcheck disable=SC2016
  exec bash -c '
    exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "GET /healthz HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n" "$1" "$2" >&3
    IFS= read -r -t 5 status <&3 || { echo "lcpsim-entrypoint: /healthz: no answer" >&2; exit 1; }
    case $status in "HTTP/1."?" 200 "*) exit 0 ;; esac
    echo "lcpsim-entrypoint: /healthz: $status" >&2
    exit 1' healthz "${address%:*}" "${address##*:}"
fi
case ${1:-} in
  --gen-keys | --gen-keys=* | --help | --version) exec lcpsimd "$@" ;;
esac

http=
for arg in "$@"; do
  case $arg in --http | --http=*) http=yes ;; esac
done

if [ -f "$SERVER_KEY" ] && [ -e "$AUTHORIZED_KEYS" ]; then
  # A fresh observer key for the health check, allowed beside the mounted list.
  rm -f "$HEALTH.key" "$HEALTH.pub"
  lcpsimd --gen-keys "$HEALTH" --key-role observer >/dev/null
  say "CURVE on: server key $SERVER_KEY, allow-list $AUTHORIZED_KEYS (and the health check's observer key $HEALTH.pub)"
  http_insecure=
  if [ -n "$http" ]; then
    http_insecure=--insecure
    say "HTTP (--http) has no authentication: anyone who reaches its port sees the world and the metrics (read-only)"
  fi
  exec lcpsimd --curve-secret-key "$SERVER_KEY" --authorized-keys "$AUTHORIZED_KEYS" \
    --authorized-keys "$HEALTH.pub" $http_insecure "$@"
fi
if [ "${LCPSIM_INSECURE:-0}" = 1 ]; then
  say "INSECURE: no keys at $SERVER_KEY and $AUTHORIZED_KEYS, and LCPSIM_INSECURE=1: serving WITHOUT authentication (--insecure); anyone who reaches the ports controls the simulator"
  exec lcpsimd --insecure "$@"
fi
say "no keys at $SERVER_KEY and $AUTHORIZED_KEYS: mount them (compose secrets lcpsim_server_key and lcpsim_authorized_keys; docs/security.md), or set LCPSIM_INSECURE=1 to serve without authentication"
exec lcpsimd "$@"
