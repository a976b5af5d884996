#!/usr/bin/env bash
# Puts NVRTC (libnvrtc.so.13, CUDA 13.0) into .nvrtc/ from the nvidia-cuda-nvrtc
# wheel, so every kernel can be compiled for sm_80 and sm_90 on a machine with
# no GPU and no CUDA toolkit. Prints the library directory on its last line.
# The version matches the H200 machine's toolkit (nvcc V13.0.88).
#
# Runs once: .nvrtc/.version-<version> marks a complete install, and a run
# that finds it does nothing. The wheel is installed with `pip --target` into
# a new folder beside .nvrtc/ that replaces it only once complete, so an
# interrupted install leaves no half-filled .nvrtc/. (`--target` installs into
# that folder alone, which Debian's "externally managed" Python allows.)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.nvrtc"
libdir="$dest/nvidia/cu13/lib"
version="13.0.88"
stamp="$dest/.version-$version"
if [ -f "$libdir/libnvrtc.so.13" ] && [ -f "$stamp" ]; then
  echo "$libdir"
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
  echo "install_nvrtc: python3 with pip is needed to install NVRTC; run scripts/install_system_deps.sh" \
    "(or: apt-get install python3 python3-pip)" >&2
  exit 1
fi
staging="$root/.nvrtc.installing-$$"
trap 'rm -rf "$staging"' EXIT
echo "install_nvrtc: installing nvidia-cuda-nvrtc==$version into .nvrtc/" >&2
if ! PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
  --no-warn-script-location --target "$staging" "nvidia-cuda-nvrtc==$version" >&2; then
  echo "install_nvrtc: pip could not install nvidia-cuda-nvrtc==$version (above)" >&2
  exit 1
fi
test -f "$staging/nvidia/cu13/lib/libnvrtc.so.13" ||
  { echo "install_nvrtc: libnvrtc.so.13 missing from the nvidia-cuda-nvrtc==$version wheel" >&2; exit 1; }
touch "$staging/.version-$version"
# .nvrtc/ is this script's own folder (git-ignored): an older or partial
# install there is replaced whole.
rm -rf "$dest"
mv "$staging" "$dest"
trap - EXIT
echo "$libdir"
