#!/usr/bin/env bash
# The docker sandbox's base image: a Debian bookworm rootfs with python3, built from
# Debian packages (no registry is needed) and cached in the repo's ignored .cache/.
#
#   bash scripts/setup_sandbox.sh          # build .cache/sandbox/rootfs.tar once (~2 min)
#   DOCKER_HOST=unix:///path/docker.sock bash scripts/setup_sandbox.sh
#                                          # ...and `docker import` it if an engine answers
#
# Idempotent: a second run finds the cached tar (and the imported image) and returns.
# Needs root (or fakeroot-capable mmdebstrap) and the Debian mirror apt already uses.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="$repo/.cache/sandbox"
tar="$cache/rootfs.tar"
image=${PODIUM_SANDBOX_IMAGE:-podium-sandbox:bookworm}
suite=bookworm

# Use the mirror apt is configured with (deb822 .sources first, then sources.list).
mirror=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' \
  | grep -v security | head -n1 || true)
if [ -z "$mirror" ]; then
  mirror=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    | awk '{print $2}' | grep -v security | head -n1 || true)
fi
if [ -z "$mirror" ]; then
  echo "no Debian mirror found in apt's sources; set one in /etc/apt/sources.list" >&2
  exit 1
fi

mkdir -p "$cache"
if [ ! -s "$tar" ]; then
  echo "building sandbox rootfs from $mirror ($suite, python3) into $tar"
  mode=root
  [ "$(id -u)" -eq 0 ] || mode=auto
  # Written beside the target and renamed, so an interrupted build leaves no half tar.
  mmdebstrap --quiet --mode="$mode" --variant=essential --include=python3 \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$suite" "$cache/rootfs.partial.tar" "$mirror"
  mv "$cache/rootfs.partial.tar" "$tar"
fi

# Import into an engine only when one is reachable; the test fixture imports into its
# private dockerd itself.
if command -v docker >/dev/null 2>&1 && docker version >/dev/null 2>&1; then
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    docker import "$tar" "$image" >/dev/null
    echo "imported $image"
  fi
fi
echo "sandbox rootfs ready: $tar"
