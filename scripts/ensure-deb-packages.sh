#!/usr/bin/env bash
# Ensures the Debian packages named as arguments are installed. As root it installs
# the missing ones with apt-get; otherwise it names them and fails.
set -euo pipefail
missing=()
for pkg in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "nvhcq: this is not a Debian/Ubuntu system; install the equivalents of: ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  echo "nvhcq: installing missing Debian packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "nvhcq: missing Debian packages: ${missing[*]}" >&2
  echo "nvhcq: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
