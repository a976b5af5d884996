#!/usr/bin/env bash
# Puts NVRTC (libnvrtc.so.13, CUDA 13.0) into .nvrtc/ from the nvidia-cuda-nvrtc
# wheel, so every kernel can be compiled for sm_80 and sm_90 on a machine with
# no GPU and no CUDA toolkit. Prints the library directory on its last line.
# The version matches the H200 machine's toolkit (nvcc V13.0.88).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.nvrtc"
libdir="$dest/nvidia/cu13/lib"
version="13.0.88"
if [ -f "$libdir/libnvrtc.so.13" ] && [ -f "$dest/.version-$version" ]; then
  echo "$libdir"
  exit 0
fi
rm -rf "$dest"
python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest" "nvidia-cuda-nvrtc==$version" >&2
touch "$dest/.version-$version"
test -f "$libdir/libnvrtc.so.13" || { echo "libnvrtc.so.13 missing after install" >&2; exit 1; }
echo "$libdir"
