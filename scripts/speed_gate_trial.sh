#!/usr/bin/env bash
# The GPU half of a speed-gate trial: does the gate stay quiet on unchanged
# code and catch a planted slowdown? Run it on the GPU machine, from the
# repository root, with the builds to compare carried over; judge the
# receipts it leaves with `harness bench compare` (that part needs no GPU).
#
#   scripts/speed_gate_trial.sh OUTDIR STEP...
#
# Steps, run in the order given (a failing one does not stop the next):
#   cub                   build the CUB baseline program (target/cub_bench)
#   quick:NAME:BINARY     `BINARY bench --quick` with the baselines, receipt
#                         OUTDIR/NAME.json (the references compare leans on)
#   ab:NAME:OLD:NEW       `harness bench ab OLD NEW -- $AB_ARGS` (default
#                         `--quick`), its table in OUTDIR/NAME.txt and its
#                         rounds under OUTDIR/NAME/
#   processes:NAME:BINARY:K  `BINARY bench --quick --no-baselines --primitive
#                         $TRIAL_PRIMITIVE (default float_reduce, where
#                         scripts/speed_gate_planted.diff plants) --processes K`,
#                         receipt OUTDIR/NAME.json (what compare judges)
#   single:NAME:BINARY    the same in one process (compare must refuse it)
#   compare:NAME:OLD:NEW  `$HARNESS bench compare OUTDIR/OLD.json
#                         OUTDIR/NEW.json` (HARNESS default
#                         target/release/harness), its table in OUTDIR/NAME.txt
#
# After a step, EXPECT_<NAME> (the NAME with - as _) names the exit status it
# should have: the line `expected exit E: met` or `NOT MET` follows, and a
# step that meets its expectation does not fail the script (a planted
# slowdown's ab exits 1 when it is caught). Without one, only 0 passes.
#
# Every step has a wall-clock limit (STEP_LIMIT, default 170 s) and its
# log, exit status and seconds go to OUTDIR/steps.tsv as it ends, so a call
# cut short still says what ran. After each step everything in OUTDIR so far
# is packed into OUTDIR.so-far.tgz, removed once the last step has ended: a
# device call cut short (by its time or its budget) brings back that one
# archive, where the loose files would pass the count of files a call
# returns (the first H100 rerun lost its unchanged receipts so). OUTDIR must be new or empty: the script
# never writes over what it did not create.
set -u
out=${1:?usage: scripts/speed_gate_trial.sh OUTDIR STEP...}
shift
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "speed_gate_trial: $out holds files already; name a new or empty folder" >&2
  exit 2
fi
mkdir -p "$out"
export PRIMLAB_KERNEL_CACHE=${PRIMLAB_KERNEL_CACHE:-/tmp/primlab-kernel-cache}
limit=${STEP_LIMIT:-170}
status=0
# run NAME COMMAND...: the command under the limit, its output in NAME.log.
run() {
  local name=$1
  shift
  local started=$SECONDS
  echo "=== $name ($(date -u +%H:%M:%S)): $*"
  timeout --signal=INT --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - started))" >>"$out/steps.tsv"
  tail -n "${TAIL:-8}" "$out/$name.log"
  echo "=== $name: exit $rc after $((SECONDS - started)) s"
  local expect_var="EXPECT_${name//-/_}"
  local expected=${!expect_var:-0}
  if [ "$rc" -eq "$expected" ]; then
    echo "=== $name: expected exit $expected: met"
  else
    echo "=== $name: expected exit $expected: NOT MET"
    status=1
  fi
}
for s in "$@"; do
  IFS=: read -r kind name a b <<<"$s"
  case "$kind" in
    cub)
      run cub-build nvcc -O3 -std=c++17 -arch=sm_90 -o target/cub_bench scripts/baselines/cub_bench.cu ;;
    quick)
      [ -x target/cub_bench ] && export PRIMLAB_CUB_BENCH=$PWD/target/cub_bench
      run "$name" "$a" bench --quick --receipt "$out/$name.json" --out "$out/$name-report" ;;
    ab)
      # shellcheck disable=SC2086
      TAIL=30 run "$name" "$a" bench ab "$a" "$b" --out "$out/$name" -- ${AB_ARGS:---quick}
      cp "$out/$name.log" "$out/$name.txt" ;;
    processes|single)
      many=()
      [ "$kind" = processes ] && many=(--processes "$b")
      run "$name" "$a" bench --quick --no-baselines --primitive "${TRIAL_PRIMITIVE:-float_reduce}" "${many[@]}" \
        --receipt "$out/$name.json" --out "$out/$name-report" ;;
    compare)
      TAIL=20 run "$name" "${HARNESS:-target/release/harness}" bench compare "$out/$a.json" "$out/$b.json"
      cp "$out/$name.log" "$out/$name.txt" ;;
    *)
      echo "speed_gate_trial: unknown step $s" >&2
      status=1 ;;
  esac
  tar czf "$out.so-far.tgz" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null
done
rm -f "$out.so-far.tgz"
exit $status
