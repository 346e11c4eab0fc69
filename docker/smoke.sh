#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docker/smoke.sh — builds the lcpsim image from docker/Dockerfile and checks it
# end to end: the daemon started from the image (its own ENTRYPOINT and CMD)
# becomes healthy (the image's HEALTHCHECK, and compose's GET /healthz), the
# host's C `ping` and Python `arm_sine.py` talk to it, its HTTP port serves
# /healthz, /metrics and the browser viewer's page (GET / and the files the page
# loads; the image has the bundled page and no Node.js), and SIGTERM stops it
# with exit code 0. The daemon runs with CURVE on: keys made
# here are mounted where compose mounts its secrets (/run/secrets/), the
# clients connect with a controller's key, and a ping without a key gets no
# answer.
#
# Builder: a Docker engine when one answers (`docker info`), else buildah
# (`buildah bud --isolation chroot`, no daemon needed), installed with apt-get
# when missing. When the debian:bookworm and debian:bookworm-slim base images
# cannot be pulled, they are made locally with debootstrap (variant minbase)
# from the mirror this machine's own apt sources name, and tagged under the
# same names. The base images and the built layers stay in the builder's store,
# so a second run reuses them.
#
# Usage: docker/smoke.sh [--no-install]
#   --no-install  never install a builder; exit 77 (skipped) when none is there
# Environment:
#   LCPSIM_IMAGE          image tag to build and run (default lcpsim:smoke)
#   LCPSIM_BUILD_DIR      host build directory holding client-examples/c/ping
#                         (default: <repo>/build; built there when missing)
#   LCPSIM_DEBIAN_MIRROR  Debian mirror for debootstrap (default: from apt sources)
#   LCPSIM_SMOKE_STEPS    steps arm_sine.py runs (default 500)
# Exit: 0 passed, 1 failed, 77 skipped (no container builder).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${LCPSIM_IMAGE:-lcpsim:smoke}
BUILD_DIR=${LCPSIM_BUILD_DIR:-$ROOT/build}
STEPS=${LCPSIM_SMOKE_STEPS:-500}
PYTHON=/usr/bin/python3
INSTALL=1
[ "${1:-}" = "--no-install" ] && INSTALL=0

SKIP=77
T0=$(date +%s.%N)
STAGE_NAME=""
STAGE_T=$T0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lcpsim-smoke.XXXXXX")
SERVER_PID=""
DAEMON_PID=""
CTR=""

log() { printf 'smoke: %s\n' "$*"; }
fail() {
  printf 'smoke: FAILED: %s\n' "$*" >&2
  exit 1
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
stage() {
  stage_end
  STAGE_NAME=$1
  STAGE_T=$(date +%s.%N)
  log "== $STAGE_NAME"
}
stage_end() {
  if [ -n "$STAGE_NAME" ]; then
    log "-- $STAGE_NAME: $(elapsed "$STAGE_T") s"
    STAGE_NAME=""
  fi
}

cleanup() {
  rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    [ -n "$DAEMON_PID" ] && kill -KILL "$DAEMON_PID" 2>/dev/null
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "$CTR" ]; then
    case $BUILDER in
      docker) docker rm -f "$CTR" >/dev/null 2>&1 || true ;;
      buildah) buildah rm "$CTR" >/dev/null 2>&1 || true ;;
    esac
  fi
  rm -rf "$WORK"
  exit $rc
}
BUILDER=""
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---------------------------------------------------------------- builder ---
stage "builder"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  BUILDER=docker
elif command -v buildah >/dev/null 2>&1; then
  BUILDER=buildah
elif [ "$INSTALL" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  log "no Docker engine and no buildah: installing buildah"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends buildah >/dev/null
  BUILDER=buildah
else
  log "SKIPPED: no Docker engine answers and buildah is not installed"
  exit $SKIP
fi
if [ "$BUILDER" = buildah ] && [ "$(id -u)" != 0 ]; then
  log "SKIPPED: buildah with --isolation chroot needs root here"
  exit $SKIP
fi
if [ "$BUILDER" = buildah ] && ! buildah info >/dev/null 2>&1; then
  log "SKIPPED: buildah is installed but cannot work here (buildah info fails)"
  exit $SKIP
fi
log "builder: $BUILDER ($($BUILDER --version | head -n 1))"

# Runs a command at low priority: the machine is shared.
nice_run() { nice -n 10 "$@"; }

image_exists() {
  case $BUILDER in
    docker) docker image inspect "$1" >/dev/null 2>&1 ;;
    buildah) buildah inspect --type image "$1" >/dev/null 2>&1 ;;
  esac
}
image_pull() {
  case $BUILDER in
    docker) docker pull -q "$1" >/dev/null 2>&1 ;;
    buildah) buildah pull -q "docker.io/library/$1" >/dev/null 2>&1 ;;
  esac
}

# ------------------------------------------------------------ base images ---
# The Debian mirror and security mirror this machine's apt uses, read from
# /etc/apt/sources.list, *.list (one-line form) and *.sources (deb822 form).
# Prints "URI SUITE" pairs for the deb (binary) entries that are enabled.
apt_entries() {
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '$1 == "deb" {
           i = 2
           if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
           print $i, $(i + 1)
         }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush(   i, j, nu, ns, u, s) {
           if (types ~ /(^| )deb( |$)/ && enabled != "no") {
             nu = split(uris, u, " "); ns = split(suites, s, " ")
             for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
           }
           types = uris = suites = ""; enabled = "yes"
         }
         BEGIN { enabled = "yes" }
         /^[ \t]*#/ { next }
         /^[ \t]*$/ { flush(); next }
         { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
           if (key == "types") types = $0
           else if (key == "uris") uris = $0
           else if (key == "suites") suites = $0
           else if (key == "enabled") enabled = tolower($0) }
         END { flush() }' "$f"
  done
}
DEBIAN_SUITES='^(bullseye|bookworm|trixie|forky|sid|stable|testing|unstable|oldstable)'
find_mirrors() {
  MIRROR=${LCPSIM_DEBIAN_MIRROR:-}
  SECURITY_MIRROR=""
  entries=$(apt_entries)
  if [ -z "$MIRROR" ]; then
    MIRROR=$(printf '%s\n' "$entries" | awk -v re="$DEBIAN_SUITES\$" '$2 ~ re { print $1; exit }')
  fi
  SECURITY_MIRROR=$(printf '%s\n' "$entries" | awk -v re="${DEBIAN_SUITES}-security\$" '$2 ~ re { print $1; exit }')
  [ -n "$MIRROR" ] || fail "no Debian mirror in this machine's apt sources (set LCPSIM_DEBIAN_MIRROR)"
}

# The apt sources written into a locally made base image: the same mirrors.
write_image_sources() {
  rootfs=$1
  rm -f "$rootfs/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\n' "$MIRROR"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [ -n "$SECURITY_MIRROR" ]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\n' "$SECURITY_MIRROR"
      printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
  } >"$rootfs/etc/apt/sources.list.d/debian.sources"
}

# Container-friendly apt and dpkg settings, as Debian's own images have them:
# no package cache kept; the slim image also leaves out documentation, manual
# pages and translations.
write_image_config() {
  rootfs=$1
  slim=$2
  cat >"$rootfs/etc/apt/apt.conf.d/90-container" <<'EOF'
// Keep images small: drop downloaded packages and caches after each install.
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  if [ "$slim" = 1 ]; then
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/90-slim" <<'EOF'
# Slim image: no documentation (but the copyright files), manuals or translations.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
    for d in man groff info lintian linda locale; do
      rm -rf "${rootfs:?}/usr/share/$d"
      mkdir -p "$rootfs/usr/share/$d"
    done
  fi
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log \
    "$rootfs"/var/log/apt/* "$rootfs/var/cache/ldconfig/aux-cache"
}

# Imports a root file system as an image named $2.
import_rootfs() {
  rootfs=$1
  name=$2
  case $BUILDER in
    docker)
      tar -C "$rootfs" -cf - . | docker import -c 'CMD ["bash"]' - "$name" >/dev/null
      ;;
    buildah)
      c=$(buildah from scratch)
      m=$(buildah mount "$c")
      tar -C "$rootfs" -cf - . | tar -C "$m" -xpf -
      buildah umount "$c" >/dev/null
      buildah config --cmd '["bash"]' \
        --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --os linux --arch "$(dpkg --print-architecture 2>/dev/null || echo amd64)" "$c"
      buildah commit -q --rm "$c" "docker.io/library/$name" >/dev/null
      ;;
  esac
}

stage "base images"
need=""
for b in debian:bookworm debian:bookworm-slim; do
  if image_exists "$b" || image_exists "docker.io/library/$b"; then
    log "$b: in the $BUILDER store"
  elif image_pull "$b"; then
    log "$b: pulled"
  else
    need="$need $b"
  fi
done
if [ -n "$need" ]; then
  log "cannot pull$need: making them with debootstrap"
  if ! command -v debootstrap >/dev/null 2>&1; then
    [ "$INSTALL" = 1 ] || fail "debootstrap is missing (apt-get install debootstrap)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  find_mirrors
  log "mirror: $MIRROR${SECURITY_MIRROR:+ (security: $SECURITY_MIRROR)}"
  base=$WORK/rootfs
  keyring=""
  [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] &&
    keyring=--keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  # shellcheck disable=SC2086
  nice_run debootstrap --variant=minbase $keyring bookworm "$base" "$MIRROR" \
    >"$WORK/debootstrap.log" 2>&1 || {
    tail -n 20 "$WORK/debootstrap.log" >&2
    fail "debootstrap"
  }
  write_image_sources "$base"
  for b in $need; do
    case $b in
      debian:bookworm)
        write_image_config "$base" 0
        import_rootfs "$base" "$b"
        ;;
    esac
  done
  for b in $need; do
    case $b in
      debian:bookworm-slim)
        write_image_config "$base" 1
        import_rootfs "$base" "$b"
        ;;
    esac
  done
  if grep -q " $base/" /proc/mounts; then
    fail "$base still has file systems mounted in it"
  fi
  rm -rf "$base"
  for b in $need; do log "$b: made locally"; done
fi

# ------------------------------------------------------------------ image ---
stage "image $IMAGE"
# The build stage's npm ci fetches the viewer's packages: on a network that
# intercepts TLS it needs the CA bundle this machine's npm uses (its cafile,
# or LCPSIM_NPM_CAFILE), given as the build secret npm_cafile.
NPM_CAFILE=${LCPSIM_NPM_CAFILE:-}
if [ -z "$NPM_CAFILE" ] && command -v npm >/dev/null 2>&1; then
  NPM_CAFILE=$(npm config get cafile 2>/dev/null || true)
fi
case $NPM_CAFILE in null | undefined) NPM_CAFILE="" ;; esac
BUILD_SECRET=""
if [ -n "$NPM_CAFILE" ] && [ -r "$NPM_CAFILE" ]; then
  BUILD_SECRET="--secret id=npm_cafile,src=$NPM_CAFILE"
  log "npm's CA bundle for the build: $NPM_CAFILE"
fi
case $BUILDER in
  docker)
    # shellcheck disable=SC2086
    nice_run docker build $BUILD_SECRET -f "$ROOT/docker/Dockerfile" -t "$IMAGE" "$ROOT" >"$WORK/build.log" 2>&1 || {
      tail -n 40 "$WORK/build.log" >&2
      fail "docker build"
    }
    size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
    ;;
  buildah)
    # --layers keeps every step's layer: a rebuild with unchanged inputs is a
    # cache hit. --format docker keeps HEALTHCHECK (OCI images drop it).
    # shellcheck disable=SC2086
    nice_run buildah bud --isolation chroot --format docker --layers --force-rm --pull=false \
      --ignorefile "$ROOT/docker/Dockerfile.dockerignore" $BUILD_SECRET \
      -f "$ROOT/docker/Dockerfile" -t "$IMAGE" "$ROOT" >"$WORK/build.log" 2>&1 || {
      tail -n 40 "$WORK/build.log" >&2
      fail "buildah bud"
    }
    # buildah prints the size for people ("129 MB", units of 1000): to bytes.
    size=$(buildah images --format '{{.Size}}' "$IMAGE" | head -n 1 | awk '
      { n = $1; u = toupper($2); f = 1
        if (u == "KB") f = 1e3; else if (u == "MB") f = 1e6; else if (u == "GB") f = 1e9
        printf "%d", n * f }')
    cached=$(grep -c -- '--> Using cache' "$WORK/build.log" || true)
    log "steps taken from the layer cache: $cached"
    ;;
esac
grep -E 'tests passed|tests failed' "$WORK/build.log" | sed 's/^/smoke: image build: /' || true
MAX_MB=${LCPSIM_IMAGE_MAX_MB:-150}
size_mb=$(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1e6 }')
log "image size: $size_mb MB (limit $MAX_MB MB)"
awk -v s="$size_mb" -v m="$MAX_MB" 'BEGIN { exit !(s > 0 && s < m) }' ||
  fail "the runtime image is $size_mb MB, not under $MAX_MB MB"

# ----------------------------------------------------------- host clients ---
stage "host clients"
PING=${LCPSIM_PING:-$BUILD_DIR/client-examples/c/ping}
if [ ! -x "$PING" ]; then
  [ "$INSTALL" = 1 ] && "$ROOT/scripts/install-deps.sh"
  log "building the C ping client in $BUILD_DIR"
  cmake -S "$ROOT" -B "$BUILD_DIR" >/dev/null
  nice_run cmake --build "$BUILD_DIR" --target c_ping -j 2 >/dev/null
fi
[ -x "$PING" ] || fail "no C ping client at $PING"
[ -x "$PYTHON" ] || fail "no $PYTHON (Debian's python3 with python3-zmq and python3-protobuf)"
ARM_SINE_PY=$ROOT/client-examples/python/arm_sine.py
[ -f "$ARM_SINE_PY" ] || fail "no $ARM_SINE_PY"
log "ping: $PING"

# ------------------------------------------------------------------- keys ---
stage "CURVE keys"
# The server's key pair, a controller's, and the allow-list, in the format of
# lcpsimd --gen-keys; mounted as the secrets compose.yaml names. Readable by
# the containers' user (these keys live only as long as this test).
SECRETS=$WORK/secrets
mkdir -p "$SECRETS"
"$PYTHON" - "$SECRETS" <<'PY' || fail "cannot make CURVE keys (python3-zmq with CURVE)"
import os, sys, zmq
out = sys.argv[1]
def pair(name):
    public, secret = (k.decode() for k in zmq.curve_keypair())
    with open(os.path.join(out, name + ".key"), "w") as f:
        f.write('public-key = "%s"\nsecret-key = "%s"\n' % (public, secret))
    with open(os.path.join(out, name + ".pub"), "w") as f:
        f.write('public-key = "%s"\n' % public)
    return public
pair("server")
client = pair("client")
with open(os.path.join(out, "lcpsim_authorized_keys"), "w") as f:
    f.write("%s controller # the smoke test's clients\n" % client)
os.replace(os.path.join(out, "server.key"), os.path.join(out, "lcpsim_server_key"))
PY
chmod 755 "$SECRETS"
chmod 644 "$SECRETS"/*
SERVER_PUB=$SECRETS/server.pub
CLIENT_KEY=$SECRETS/client.key
log "keys in $SECRETS (mounted at /run/secrets)"

# --------------------------------------------------------------- daemon -----
# The image's own configuration: what `docker run IMAGE` would start.
case $BUILDER in
  docker) docker image inspect -f '{{json .Config}}' "$IMAGE" >"$WORK/config.json" ;;
  buildah) buildah inspect --type image "$IMAGE" >"$WORK/config.json" ;;
esac
# Prints a field of the image configuration, one word a line.
config_field() {
  "$PYTHON" - "$WORK/config.json" "$1" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
if "Docker" in config:  # buildah inspect: the Docker-format configuration inside
    config = config["Docker"]["config"]
field = sys.argv[2]
if field == "Healthcheck":
    value = (config.get("Healthcheck") or {}).get("Test") or []
elif field == "ExposedPorts":
    value = sorted(config.get("ExposedPorts") or {})
else:
    value = config.get(field)
if isinstance(value, list):
    print("\n".join(value))
elif value:
    print(value)
PY
}
ENTRYPOINT=$(config_field Entrypoint | tr '\n' ' ')
CMD=$(config_field Cmd | tr '\n' ' ')
HEALTH=$(config_field Healthcheck | tr '\n' ' ')
IMAGE_USER=$(config_field User)
log "ENTRYPOINT: $ENTRYPOINT CMD: $CMD"
log "HEALTHCHECK: $HEALTH"
log "USER: $IMAGE_USER EXPOSE: $(config_field ExposedPorts | tr '\n' ' ')"
[ "$ENTRYPOINT" = "lcpsim-entrypoint " ] || fail "ENTRYPOINT is not [\"lcpsim-entrypoint\"]"
case $HEALTH in
  "CMD lcpsim-entrypoint health "*) ;;
  *) fail "HEALTHCHECK does not run lcpsim-entrypoint health" ;;
esac
case $IMAGE_USER in
  "" | root | 0 | 0:*) fail "the image runs as root" ;;
esac

# True when nothing on this machine listens on TCP port $1.
port_free() {
  "$PYTHON" -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("0.0.0.0", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"
}

# The process of the daemon under `buildah run` (chroot isolation shares the
# host's process table): the descendant of $1 named lcpsimd.
find_daemon_pid() {
  "$PYTHON" - "$1" <<'PY'
import os, sys
children = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    ppid = stat[stat.rindex(")") + 2:].split()[1]
    children.setdefault(ppid, []).append((pid, stat[stat.index("(") + 1:stat.rindex(")")]))
todo = [sys.argv[1]]
while todo:
    for pid, comm in children.get(todo.pop(), []):
        if comm == "lcpsimd":
            print(pid)
            sys.exit(0)
        todo.append(pid)
sys.exit(1)
PY
}

# Runs a command in the running container.
in_container() {
  case $BUILDER in
    docker) docker exec "$CTR" "$@" ;;
    buildah) buildah run --isolation chroot -v "$SECRETS:/run/secrets:ro" "$CTR" -- "$@" ;;
  esac
}

stage "start the daemon from the image"
case $BUILDER in
  docker)
    CTR=lcpsim-smoke-$$
    docker run -d --name "$CTR" -p 127.0.0.1::5555 -p 127.0.0.1::5556 -p 127.0.0.1::8080 \
      -v "$SECRETS:/run/secrets:ro" "$IMAGE" >/dev/null ||
      fail "docker run"
    REP=tcp://$(docker port "$CTR" 5555/tcp | head -n 1)
    PUB=tcp://$(docker port "$CTR" 5556/tcp | head -n 1)
    HTTP=http://$(docker port "$CTR" 8080/tcp | head -n 1)
    ;;
  buildah)
    CTR=$(buildah from --pull=false --name "lcpsim-smoke-$$" "$IMAGE")
    uid=$(buildah run --isolation chroot "$CTR" -- id -u)
    log "the container runs as uid $uid"
    [ "$uid" != 0 ] || fail "the container runs as root"
    # Host networking (chroot isolation has no network namespace): the image's
    # CMD binds 5555 and 5556; when another program holds them, bind ephemeral
    # loopback ports instead, with the same ENTRYPOINT.
    if port_free 5555 && port_free 5556 && port_free 8080; then
      # shellcheck disable=SC2086
      set -- $ENTRYPOINT $CMD
    else
      log "port 5555, 5556 or 8080 is taken on this machine: binding ephemeral ports instead"
      # shellcheck disable=SC2086
      set -- $ENTRYPOINT --bind tcp://127.0.0.1:0 --pub tcp://127.0.0.1:0 --http 127.0.0.1:0
    fi
    log "buildah run: $*"
    buildah run --isolation chroot -v "$SECRETS:/run/secrets:ro" "$CTR" -- "$@" \
      >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    i=0
    until grep -q 'listening' "$WORK/server.log" 2>/dev/null; do
      i=$((i + 1))
      [ $i -le 300 ] || fail "lcpsimd printed no endpoints in 30 s: $(cat "$WORK/server.log")"
      kill -0 "$SERVER_PID" 2>/dev/null || fail "lcpsimd exited: $(cat "$WORK/server.log")"
      sleep 0.1
    done
    line=$(grep -m 1 'listening' "$WORK/server.log")
    REP=$(printf '%s\n' "$line" | sed -n 's/.*rep=\([^ ]*\).*/\1/p' | sed 's#//0\.0\.0\.0:#//127.0.0.1:#')
    PUB=$(printf '%s\n' "$line" | sed -n 's/.*pub=\([^ ]*\).*/\1/p' | sed 's#//0\.0\.0\.0:#//127.0.0.1:#')
    HTTP=$(printf '%s\n' "$line" | sed -n 's/.*http=\([^ ]*\).*/\1/p' | sed 's#//0\.0\.0\.0:#//127.0.0.1:#')
    DAEMON_PID=$(find_daemon_pid "$SERVER_PID") || fail "no lcpsimd process under buildah run"
    log "lcpsimd: pid $DAEMON_PID, uid $(awk '/^Uid:/ { print $2 }' "/proc/$DAEMON_PID/status")"
    ;;
esac
log "endpoints: rep=$REP pub=$PUB http=$HTTP"
[ -n "$HTTP" ] || fail "the image's lcpsimd serves no HTTP (--http)"
case $BUILDER in
  docker) docker logs "$CTR" 2>&1 | grep -m 1 'lcpsim-entrypoint' >"$WORK/mode.log" || true ;;
  buildah) grep -m 1 'lcpsim-entrypoint' "$WORK/server.log" >"$WORK/mode.log" || true ;;
esac
sed 's/^/smoke: /' "$WORK/mode.log"
grep -q 'CURVE on' "$WORK/mode.log" || fail "the entrypoint did not start lcpsimd with CURVE"

stage "wait for health"
case $BUILDER in
  docker)
    i=0
    while :; do
      health=$(docker inspect -f '{{.State.Health.Status}}' "$CTR")
      [ "$health" = healthy ] && break
      [ "$(docker inspect -f '{{.State.Running}}' "$CTR")" = true ] ||
        fail "the container stopped: $(docker logs "$CTR" 2>&1 | tail -n 20)"
      i=$((i + 1))
      [ $i -le 120 ] || fail "not healthy after 120 s ($health)"
      sleep 1
    done
    ;;
  buildah)
    # The image's HEALTHCHECK command, run in the container as Docker would,
    # aimed at the port the daemon bound.
    port=${REP##*:}
    # shellcheck disable=SC2046
    set -- $(printf '%s\n' "$HEALTH" | sed "s/^CMD //; s#tcp://127.0.0.1:5555#tcp://127.0.0.1:$port#")
    i=0
    until buildah run --isolation chroot -v "$SECRETS:/run/secrets:ro" "$CTR" -- "$@" \
      >/dev/null 2>&1; do
      kill -0 "$SERVER_PID" 2>/dev/null || fail "lcpsimd exited: $(cat "$WORK/server.log")"
      i=$((i + 1))
      [ $i -le 60 ] || fail "the health check did not pass in 60 tries"
      sleep 1
    done
    ;;
esac
log "healthy"
# compose.yaml's health check adds GET /healthz (lcpsim-entrypoint healthz:
# the image has no curl); inside the container the HTTP port is 8080, or under
# buildah (the host's network) the port bound.
case $BUILDER in
  docker) http_inside=127.0.0.1:8080 ;;
  buildah) http_inside=127.0.0.1:${HTTP##*:} ;;
esac
in_container lcpsim-entrypoint healthz "$http_inside" ||
  fail "lcpsim-entrypoint healthz $http_inside (compose's health check) failed"
log "lcpsim-entrypoint healthz $http_inside: ok"

stage "the image's files: the viewer's page, no Node.js"
in_container sh -c 'cd /usr/local/share/lcpsim/viewer && ls -l index.html viewer.js' >"$WORK/viewer-files.log" 2>&1 || {
  cat "$WORK/viewer-files.log" >&2
  fail "no viewer page at /usr/local/share/lcpsim/viewer in the image"
}
sed 's/^/smoke: /' "$WORK/viewer-files.log"
if in_container sh -c 'command -v node || command -v nodejs || command -v npm' >/dev/null 2>&1; then
  fail "the runtime image has Node.js or npm (only the build stage needs them)"
fi
log "no node or npm in the runtime image"

stage "C ping from the host"
"$PING" --timeout-ms 2000 --server-key "$SERVER_PUB" --client-key "$CLIENT_KEY" "$REP" ||
  fail "ping $REP with the client's key"
# Without a key: no answer (CURVE is on).
if "$PING" --timeout-ms 1000 "$REP" >/dev/null 2>&1; then
  fail "a ping without a key was answered"
fi
log "a ping without a key got no answer"

stage "Python arm_sine.py from the host ($STEPS steps)"
PYTHONPATH="$ROOT/client-examples/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$PYTHON" "$ARM_SINE_PY" --steps "$STEPS" --server-key "$SERVER_PUB" --client-key "$CLIENT_KEY" \
  "$REP" >"$WORK/arm_sine.out" 2>&1 || {
  cat "$WORK/arm_sine.out" >&2
  fail "arm_sine.py"
}
head -n 1 "$WORK/arm_sine.out" | sed 's/^/smoke: /'
tail -n 1 "$WORK/arm_sine.out" | sed 's/^/smoke: /'
lines=$(grep -c '^time=' "$WORK/arm_sine.out" || true)
[ "$lines" -eq $((STEPS / 100)) ] || fail "arm_sine.py printed $lines state lines, not $((STEPS / 100))"

stage "HTTP: /healthz, /metrics and the viewer's page"
"$PYTHON" - "$HTTP" "$STEPS" <<'PY' || fail "/healthz or /metrics"
import sys, urllib.request
url, steps = sys.argv[1], int(sys.argv[2])
with urllib.request.urlopen(url + "/healthz", timeout=10) as r:
    assert r.status == 200 and r.read() == b"ok\n", "/healthz is not 200 ok"
with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
    text = r.read().decode()
values = {}
try:
    from prometheus_client.parser import text_string_to_metric_families
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values.setdefault(sample.name, 0)
            values[sample.name] += sample.value
except ImportError:  # no python3-prometheus-client: the plain lines
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name = line.split("{")[0].split(" ")[0]
            values[name] = values.get(name, 0) + float(line.rsplit(" ", 1)[1])
assert values["lcpsim_steps_total"] >= steps, values["lcpsim_steps_total"]
assert values["lcpsim_requests_total"] >= 1, values["lcpsim_requests_total"]
print("smoke: /healthz ok; /metrics: %d steps, %d requests" % (values["lcpsim_steps_total"],
                                                             values["lcpsim_requests_total"]))
PY
"$PYTHON" - "$HTTP" <<'PY' || fail "the viewer's page (GET / and what it loads)"
import sys, urllib.parse, urllib.request
from html.parser import HTMLParser
url = sys.argv[1] + "/"

class References(HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts, self.styles = [], []
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.scripts.append(attrs["src"])
        if tag == "link" and attrs.get("rel") == "stylesheet" and attrs.get("href"):
            self.styles.append(attrs["href"])

with urllib.request.urlopen(url, timeout=10) as r:
    assert r.status == 200, "GET / is %d" % r.status
    assert r.headers["Content-Type"].startswith("text/html"), r.headers["Content-Type"]
    page_bytes = r.read()
    page = page_bytes.decode()
references = References()
references.feed(page)
assert references.scripts, "the page references no script: %r" % page[:200]
for path, kind in [(p, "javascript") for p in references.scripts] + [(p, "css") for p in references.styles]:
    with urllib.request.urlopen(urllib.parse.urljoin(url, path), timeout=10) as r:
        body = r.read()
        assert r.status == 200, "GET %s is %d" % (path, r.status)
        assert kind in r.headers["Content-Type"], (path, r.headers["Content-Type"])
        assert body, "GET %s is empty" % path
        print("smoke: GET /%s: 200, %s, %d bytes" % (path.lstrip("/"), r.headers["Content-Type"], len(body)))
print("smoke: GET /: 200, text/html, %d bytes" % len(page_bytes))
PY

stage "compose's arm-sine client: the python-client image (200 steps)"
case $BUILDER in
  docker)
    # shellcheck disable=SC2086
    nice_run docker build $BUILD_SECRET -f "$ROOT/docker/Dockerfile" --target python-client -t "$IMAGE-python-client" \
      "$ROOT" >"$WORK/build-client.log" 2>&1 || {
      tail -n 40 "$WORK/build-client.log" >&2
      fail "docker build --target python-client"
    }
    # In the daemon container's network namespace, as compose's service reaches it by name.
    docker run --rm --network "container:$CTR" -v "$SECRETS:/run/secrets:ro" \
      "$IMAGE-python-client" arm_sine.py --steps 200 --server-key /run/secrets/server.pub \
      --client-key /run/secrets/client.key tcp://127.0.0.1:5555 >"$WORK/client.out" 2>&1 || {
      cat "$WORK/client.out" >&2
      fail "arm_sine.py in the python-client image"
    }
    ;;
  buildah)
    # shellcheck disable=SC2086
    nice_run buildah bud --isolation chroot --format docker --layers --force-rm --pull=false \
      --ignorefile "$ROOT/docker/Dockerfile.dockerignore" $BUILD_SECRET --target python-client \
      -f "$ROOT/docker/Dockerfile" -t "$IMAGE-python-client" "$ROOT" >"$WORK/build-client.log" 2>&1 || {
      tail -n 40 "$WORK/build-client.log" >&2
      fail "buildah bud --target python-client"
    }
    client=$(buildah from --pull=false "$IMAGE-python-client")
    code=0
    buildah run --isolation chroot -v "$SECRETS:/run/secrets:ro" "$client" -- python3 arm_sine.py \
      --steps 200 --server-key /run/secrets/server.pub --client-key /run/secrets/client.key \
      "$REP" >"$WORK/client.out" 2>&1 || code=$?
    buildah rm "$client" >/dev/null
    [ "$code" = 0 ] || {
      cat "$WORK/client.out" >&2
      fail "arm_sine.py in the python-client image"
    }
    ;;
esac
tail -n 1 "$WORK/client.out" | sed 's/^/smoke: /'
[ "$(grep -c '^time=' "$WORK/client.out")" -eq 2 ] || fail "arm_sine.py in the python-client image printed no state"

stage "SIGTERM"
case $BUILDER in
  docker)
    docker stop -t 10 "$CTR" >/dev/null
    code=$(docker inspect -f '{{.State.ExitCode}}' "$CTR")
    ;;
  buildah)
    # What `docker stop` does: SIGTERM to the container's main process.
    kill -TERM "$DAEMON_PID"
    code=0
    wait "$SERVER_PID" || code=$?
    SERVER_PID=""
    ;;
esac
log "lcpsimd exit code: $code"
[ "$code" = 0 ] || fail "lcpsimd exited with $code after SIGTERM"
stage_end
log "PASSED in $(elapsed "$T0") s"
