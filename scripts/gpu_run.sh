#!/usr/bin/env bash
# Runs the GPU half of primlab on a GPU machine, from the repository root,
# with the harness binary built elsewhere (make build-release) and carried
# over. Steps run in the order given; every step's console output and every
# receipt is copied to $OUT (default ./gpu-out), logs packed into logs.tgz.
#
#   scripts/gpu_run.sh info sweep sanitize mutants bench pack
#
# Steps: info, sweep, sweep-quick, sanitize, mutants, bench, bench-quick,
# ncu, pack. A failing step does not stop the next one; the exit status is
# nonzero if any step failed.
set -u
H=./target/release/harness
OUT=${OUT:-gpu-out}
LOGS=gpu-logs
mkdir -p "$OUT" "$LOGS" receipts
status=0
step() {
  local name=$1 limit=$2
  shift 2
  echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*"
  local started=$SECONDS
  timeout --signal=INT --kill-after=20 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  tail -n 60 "$LOGS/$name.log"
  echo "=== $name: exit $rc after $((SECONDS - started))s"
  [ $rc -eq 0 ] || status=1
}
for s in "$@"; do
  case "$s" in
    info)
      { nvidia-smi; nvcc --version; compute-sanitizer --version; python3 -c 'import torch; print("torch", torch.__version__)'; } >"$OUT/machine.txt" 2>&1
      head -n 20 "$OUT/machine.txt" ;;
    sweep) step sweep 420 "$H" sweep --json receipts/sweep.json; cp receipts/sweep.json "$OUT/" 2>/dev/null ;;
    sweep-quick) step sweep-quick 240 "$H" sweep --quick --json "$OUT/sweep-quick.json" ;;
    sanitize) step sanitize 420 "$H" sanitize --jobs 8 --log-dir "$LOGS/sanitize"; cp receipts/sanitize.json "$OUT/" 2>/dev/null ;;
    mutants) step mutants 420 "$H" mutants --log-dir "$LOGS/mutants"; cp receipts/mutants.json "$OUT/" 2>/dev/null ;;
    bench) step bench 420 "$H" bench; cp receipts/bench.json "$OUT/" 2>/dev/null ;;
    bench-quick) step bench-quick 200 "$H" bench --quick --receipt "$OUT/bench-quick.json" ;;
    pack) tar czf "$OUT/logs.tgz" "$LOGS" ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
