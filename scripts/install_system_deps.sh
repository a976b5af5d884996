#!/usr/bin/env bash
# Installs the system packages a fresh Debian/Ubuntu machine lacks for this
# workspace: m4 (rug's bundled GMP/MPFR build stops without it) and a C
# toolchain. Skips what is already there; never needs a GPU.
set -euo pipefail
missing=()
command -v m4 >/dev/null 2>&1 || missing+=(m4)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-pip)
if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: all present (m4, cc, make, python3)"
  exit 0
fi
echo "system packages: installing ${missing[*]}"
sudo_cmd=""
if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq "${missing[@]}"
