#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages lcpsim needs to build and test, when they are
# missing. Run as root (or with sudo available). Does nothing when all are there.
# Usage: install-deps.sh [--build-only] [--bench-peers]
set -eu
# Engine and tests: a C compiler, cmake, cmocka, libxml2 (URDF), assimp (URDF
# collision meshes in OBJ, COLLADA and other formats). Daemon and
# clients: libzmq, protobuf-c (runtime and protoc-c), protoc (Python code),
# libuv; the Python client runs on Debian's python3 with python3-zmq and
# python3-protobuf (python3-numpy for its arrays, which the tests check),
# and its package test pip-installs it into a venv
# (python3-venv; python3-wheel builds the wheel).
PACKAGES="build-essential cmake pkg-config libcmocka-dev libxml2-dev libassimp-dev libzmq3-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libuv1-dev python3 python3-zmq python3-protobuf python3-numpy python3-venv python3-wheel clang libfuzzer-14-dev libwebsockets-dev libwebsockets-evlib-uv python3-websocket python3-prometheus-client"
# --build-only (the Docker image's build stage) stops here. Otherwise also:
# the image's smoke test (docker/smoke.sh) builds it with buildah when no
# Docker engine runs, on Debian base images made with debootstrap; the Node.js
# client's tests need Node.js and npm — Debian's, unless a Node.js with npm is
# installed already (a second one would conflict with it).
case " $* " in *" --build-only "*) ;; *)
  PACKAGES="$PACKAGES buildah debootstrap"
  PACKAGES="$PACKAGES chromium" # headless, for the viewer's browser test (tests/viewer)
  command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"
  # The Kubernetes manifests' offline check (tests/kubernetes): python3-yaml and kubectl,
  # Debian's kubernetes-client unless a kubectl is there already (both would be /usr/bin/kubectl).
  PACKAGES="$PACKAGES python3-yaml"
  command -v kubectl >/dev/null 2>&1 || PACKAGES="$PACKAGES kubernetes-client"
esac
# --bench-peers: Bullet, ODE, MuJoCo and a C++ compiler, for the bench's
# programs that run its scenes in those engines (cmake -DLCP_BENCH_PEERS=ON).
case " $* " in *" --bench-peers "*) PACKAGES="$PACKAGES libbullet-dev libode-dev libmujoco-dev g++" ;; esac
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
