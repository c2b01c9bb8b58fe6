#!/usr/bin/env bash
# Debian packages the tests need: a real browser, a real sandbox, a real Docker engine.
set -euo pipefail
packages=(chromium bubblewrap docker.io mmdebstrap postgresql libseccomp2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing system packages: ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
