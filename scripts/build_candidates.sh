#!/usr/bin/env bash
# Builds the binaries a device call compares, on the build machine (no GPU): A, this
# checkout's HEAD, and each candidate, HEAD with its patches applied. Unlanded kernel work
# lives only as patches in receipts/ (a branch on the build machine is lost with it), so
# this is how a session gets its candidates back.
#
#   scripts/build_candidates.sh NAME=PATCH[,PATCH...] ...
#   e.g. scripts/build_candidates.sh B13=receipts/topk/2026-12-08-b13-b15/b13.patch \
#          B15=receipts/topk/2026-12-08-b13-b15/b13.patch,receipts/topk/2026-12-08-b13-b15/b15-on-b13.patch
#
# Each tree is HEAD exported (git archive: uncommitted changes are not in it) into
# target/candidates/NAME/src, patched there, and built with one target folder for all
# (target/candidates/target: the dependencies build once). Results:
#   target/exp/harness-A, target/exp/harness-NAME (stripped),
#   target/exp/BUILDS.txt (each binary's commit, patches and sources hash),
#   target/next/next.tar.xz (those files packed, alone in their folder so that carrying it
#   takes nothing else: carry ["target/next"], then tar xJf target/next/next.tar.xz -C target).
# Removes only what an earlier run made: target/candidates/*/src and the target/exp files
# it names. Stops at the first patch that does not apply or build that fails.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,19p' "$0"; exit 2; }
root=$(git rev-parse --show-toplevel)
cd "$root"
head=$(git rev-parse --short=12 HEAD)
dir=target/candidates
mkdir -p "$dir" target/exp
builds=target/exp/BUILDS.txt
: >"$builds"

build() { # name patches...: export HEAD, apply the patches in order, build, copy, record
  local name=$1
  shift
  local src=$dir/$name/src
  rm -rf "$src"
  mkdir -p "$src"
  git archive --format=tar HEAD | tar -x -C "$src"
  for p in "$@"; do
    [ -f "$p" ] || { echo "build_candidates: $name: no patch $p" >&2; exit 1; }
    patch -p1 --forward --no-backup-if-mismatch --quiet -d "$src" <"$p" ||
      { echo "build_candidates: $name: $p does not apply to HEAD $head" >&2; exit 1; }
  done
  echo "=== build_candidates: building $name (HEAD $head${*:+ + $*})"
  (cd "$src" && CARGO_TARGET_DIR="$root/$dir/target" cargo build --release -q -p harness)
  cp "$dir/target/release/harness" "target/exp/harness-$name"
  strip "target/exp/harness-$name"
  # The binary names the sources it was built from; run in its own tree it must agree.
  local sources
  sources=$(cd "$src" && "$root/target/exp/harness-$name" receipts status 2>&1 | sed -n 's/^receipts: sources \([0-9a-f]*\).*/\1/p' | head -n 1 || true)
  [ -n "$sources" ] || { echo "build_candidates: $name: its receipts status names no sources" >&2; exit 1; }
  echo "$name: HEAD $head${*:+, patches $*}; sources $sources" | tee -a "$builds"
}

# Every argument is checked before anything is built.
for spec in "$@"; do
  name=${spec%%=*}
  [ -n "$name" ] && [ "$name" != "$spec" ] && [ "$name" != A ] ||
    { echo "build_candidates: '$spec' is not NAME=PATCH[,PATCH...] (NAME not A)" >&2; exit 2; }
done
build A
built=(harness-A)
for spec in "$@"; do
  IFS=, read -r -a list <<<"${spec#*=}"
  build "${spec%%=*}" "${list[@]}"
  built+=("harness-${spec%%=*}")
done
mkdir -p target/next
tar cJf target/next/next.tar.xz -C target/exp BUILDS.txt "${built[@]}" --transform 's,^,exp/,'
ls -l target/next/next.tar.xz
echo "build_candidates: carry [\"target/next\"] and run: tar xJf target/next/next.tar.xz -C target && ..."
