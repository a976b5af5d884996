#!/usr/bin/env bash
# Puts the CCCL headers (CUB, Thrust, libcu++) of the pinned release into
# target/cccl/include/ from the nvidia-cuda-cccl wheel, so cub_bench can be built
# against the newest CUB instead of the toolkit's (CCCL 3.0.1 in CUDA 13.0).
# Prints the include directory on its last line.
#
#   scripts/install_cccl.sh             download the wheel (build machine), then extract
#   scripts/install_cccl.sh --offline   only extract a wheel already in target/cccl/ (the GPU
#                                       machine, which reaches no package registry: carry
#                                       the target/cccl/*.whl file there)
#
# Runs once: target/cccl/.version-<version> marks a complete install. The wheel is
# header-only; the headers build with nvcc 13.0 (the H200 machine's). They live
# under target/ because the verdict hash walks every .cuh of the tree but
# target/ (CUB's headers decide no verdict of ours).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/target/cccl"
# nvidia-cuda-cccl 13.3.5.0.6 holds CCCL 3.5.0 (its cuda/std/__cccl/version.h: CCCL_VERSION 3005000).
version="13.3.5.0.6"
cccl="3.5.0"
cccl_macro="3005000"
stamp="$dest/.version-$version"
include="$dest/include"
offline=0
[ "${1:-}" = "--offline" ] && offline=1
if [ -f "$stamp" ] && [ -f "$include/cub/version.cuh" ]; then
  echo "$include"
  exit 0
fi
mkdir -p "$dest"
wheel="$(ls "$dest"/nvidia_cuda_cccl-"$version"-*.whl 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ]; then
  if [ "$offline" = 1 ]; then
    echo "install_cccl: no nvidia_cuda_cccl-$version wheel in target/cccl/ (run scripts/install_cccl.sh on a" \
      "machine with the package registry, then carry target/cccl/*.whl)" >&2
    exit 1
  fi
  echo "install_cccl: downloading nvidia-cuda-cccl==$version (CCCL $cccl) into target/cccl/" >&2
  if ! PIP_ROOT_USER_ACTION=ignore python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    -d "$dest" "nvidia-cuda-cccl==$version" >&2; then
    echo "install_cccl: pip could not download nvidia-cuda-cccl==$version (above)" >&2
    exit 1
  fi
  wheel="$(ls "$dest"/nvidia_cuda_cccl-"$version"-*.whl | head -n 1)"
fi
staging="$dest/include.installing-$$"
trap 'rm -rf "$staging"' EXIT
rm -rf "$staging"
python3 - "$wheel" "$staging" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefix = "nvidia/cu13/include/cccl/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(f"install_cccl: {wheel} holds no {prefix}")
    for name in names:
        target = out + "/" + name[len(prefix):]
        import os
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(name) as src, open(target, "wb") as dst:
            dst.write(src.read())
PY
grep -q "define CCCL_VERSION $cccl_macro\$" "$staging/cuda/std/__cccl/version.h" ||
  { echo "install_cccl: the wheel's headers are not CCCL $cccl" >&2; exit 1; }
# target/cccl/include is this script's own folder: replaced whole.
rm -rf "$include"
mv "$staging" "$include"
trap - EXIT
touch "$stamp"
echo "$include"
