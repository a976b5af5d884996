#!/usr/bin/env bash
# Makes NCCL loadable by the harness (cudarc, dynamic loading) and prints the
# shell lines that say so. Use:   eval "$(scripts/nccl_env.sh)"
#
# Why: cudarc dlopen()s NCCL only as libnccl.so, libnccl.so.13, ... (see
# `cudarc::get_lib_name_candidates("nccl")`), never as libnccl.so.2, the one
# file NCCL installs (the nvidia-nccl-cu13 wheel ships only
# site-packages/nvidia/nccl/lib/libnccl.so.2). This script finds
# libnccl.so.2, links target/nccl-lib/libnccl.so to it, and prints
#   export LD_LIBRARY_PATH=<repo>/target/nccl-lib:...;
#   export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1;
# (the harness forces the last three itself too: no NVLink multicast).
#
# Where it looks, in order: $NCCL_LIB_DIR; the Python package nvidia.nccl
# (a namespace package: found through its __path__, it has no __file__);
# any site-packages/nvidia/*/lib of python3; the ldconfig cache; /usr and
# /opt. Diagnostics go to stderr; exit 1 (and no export) if none is found.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
linkdir="$root/target/nccl-lib"
soname=libnccl.so.2

found=""
consider() {
  local dir=$1
  if [ -z "$found" ] && [ -n "$dir" ] && [ -e "$dir/$soname" ]; then
    found="$(cd "$dir" && pwd)/$soname"
  fi
}

consider "${NCCL_LIB_DIR:-}"
if [ -z "$found" ] && command -v python3 >/dev/null 2>&1; then
  while IFS= read -r dir; do consider "$dir"; done < <(python3 - <<'PY' 2>/dev/null || true
import glob, importlib.util, os, site, sys
dirs = []
try:
    spec = importlib.util.find_spec("nvidia.nccl")
    if spec is not None:
        for p in (spec.submodule_search_locations or []):
            dirs.append(os.path.join(p, "lib"))
except Exception:
    pass
roots = []
try:
    roots += site.getsitepackages()
except Exception:
    pass
try:
    roots.append(site.getusersitepackages())
except Exception:
    pass
roots += [p for p in sys.path if p.endswith("-packages")]
for r in roots:
    dirs += sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib")))
print("\n".join(dirs))
PY
)
fi
if [ -z "$found" ] && command -v ldconfig >/dev/null 2>&1; then
  path="$(ldconfig -p 2>/dev/null | awk -v s="$soname" '$1 == s { print $NF; exit }')"
  [ -n "$path" ] && consider "$(dirname "$path")"
fi
if [ -z "$found" ]; then
  path="$(find /usr /opt -maxdepth 6 -name "$soname" 2>/dev/null | head -n 1 || true)"
  [ -n "$path" ] && consider "$(dirname "$path")"
fi
if [ -z "$found" ]; then
  echo "nccl_env.sh: $soname not found (looked in \$NCCL_LIB_DIR, python3's nvidia.nccl and site-packages/nvidia/*/lib, ldconfig, /usr, /opt)." >&2
  echo "nccl_env.sh: install NCCL (python3 -m pip install nvidia-nccl-cu13) or set NCCL_LIB_DIR to the directory of $soname." >&2
  exit 1
fi

mkdir -p "$linkdir"
ln -sfn "$found" "$linkdir/libnccl.so"
echo "nccl_env.sh: $linkdir/libnccl.so -> $found" >&2
printf 'export LD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}";\n' "$linkdir"
printf 'export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1;\n'
