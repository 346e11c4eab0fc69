#!/bin/sh
# docker/smoke.sh — builds the lcpsim image from docker/Dockerfile and checks it
# end to end: the daemon started from the image (its own ENTRYPOINT and CMD)
# becomes healthy, the host's C `ping` and Python `arm_sine.py` talk to it, and
# SIGTERM stops it with exit code 0.
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
    stop_server KILL >/dev/null 2>&1 || true
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
stage_end
log "total $(elapsed "$T0") s"
