#!/usr/bin/env bash
# Top-k speed probe (issue 37), one device call: where the grid schedule's time goes
# on a whole array, and candidate builds timed against the current one.
#
#   OUT=$OUT scripts/topk_probe.sh     (on the GPU machine; carry target/exp/harness-*)
#
# target/exp/harness-A is the current build; CANDIDATES (default: every other
# target/exp/harness-<X>, as "X Y") the candidates, timed in that order. Steps, each under its own time limit so that one slow step cannot take the
# others' time:
#   1. every candidate's top-k cases of the sweep (a candidate whose output is wrong is
#      not timed: its timings would be of a broken kernel);
#   2. ncu of A's and one correct candidate's (NCU_CANDIDATE, else the last) grid launches on a whole array of 2^28
#      and on one decoder shape (SHAPE, default 1x128256), each the first top-k record of
#      a quick bench: its first call's launches (a build from before session 14 ignores
#      --shape for top-k, so its "shape" profile is [1, 32000], the quick run's first);
#      With NCU_SOURCE=1, also the second level's pass at 2^28 instruction by
#      instruction (ncu's source page, SASS, as CSV: where its issue slots go);
#      NCU=0 skips every profile.
#   3. `bench ab` of A against each correct candidate: whole arrays 2^20-2^28 and the
#      decoder shapes [1, 32000], [1, 128256] and [64, 128256], the grid schedule only.
#      AB_PAIRS ("OLD:NEW ...", e.g. "A:B13 B13:B15") names the pairs instead; a pair
#      whose new build failed its sweep is not timed.
# Results: $OUT/topk-probe/ (logs, ncu text, the ab tables), then $OUT/topk-probe.tgz.
set -u
OUT=${OUT:-gpu-out}
P=$OUT/topk-probe
mkdir -p "$P"
A=target/exp/harness-A
candidates=()
if [ -n "${CANDIDATES:-}" ]; then
  for x in $CANDIDATES; do candidates+=("target/exp/harness-$x"); done
else
  for b in target/exp/harness-*; do [ "$b" != "$A" ] && candidates+=("$b"); done
fi
METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size

timed() { # name limit command...: runs, logs, records the exit status
  local name=$1 limit=$2
  shift 2
  echo "=== $name ($(date -u +%T), limit ${limit}s): $*"
  timeout "$limit" "$@" >"$P/$name.log" 2>&1
  local rc=$?
  echo "exit $rc" >>"$P/$name.log"
  echo "=== $name: exit $rc"
  tail -n "${TAIL:-4}" "$P/$name.log"
  return $rc
}

correct=()
for b in "${candidates[@]}"; do
  x=${b##*/harness-}
  timed "sweep-$x" "${SWEEP_LIMIT:-90}" "$b" sweep --gpu-only --primitive topk && correct+=("$b")
done

ncu_topk() { # log-name binary bench-args...: the grid launches of the first top-k record of a quick bench
  local name=$1 bin=$2
  shift 2
  timed "$name" "${NCU_LIMIT:-70}" ncu --clock-control none --kernel-name regex:topk_grid --launch-count 12 \
    --metrics "$METRICS" "$bin" bench --no-baselines --primitive topk --variant grid_threshold_select \
    "$@" --quick --out "/tmp/topk-probe-$name"
}
profile() { # tag binary: a whole array of 2^28, then one decoder shape (SHAPE, default 1x128256)
  local shape=${SHAPE:-1x128256}
  ncu_topk "ncu-$1-2p28" "$2" --sizes 268435456
  ncu_topk "ncu-$1-$shape" "$2" --shape "$shape"
}
ncu_source() { # tag binary: the second level's pass at 2^28, each SASS instruction's counters
  timed "ncu-source-$1-2p28" "${NCU_LIMIT:-70}" ncu --clock-control none --kernel-name topk_grid_collect_histogram_f32 \
    --launch-count 1 --section SourceCounters --section InstructionStats --page source --print-source sass --csv \
    "$2" bench --no-baselines --primitive topk --variant grid_threshold_select --sizes 268435456 --quick \
    --out "/tmp/topk-probe-source-$1"
}
# NCU_A=0 skips profiling A (when its profile is already in the receipts).
if [ "${NCU:-1}" = 1 ] && [ "${NCU_A:-1}" = 1 ]; then
  profile A "$A"
  [ -n "${NCU_SOURCE:-}" ] && ncu_source A "$A"
fi
# The candidate profiled: NCU_CANDIDATE (X of harness-X) if it passed, else the last that did.
if [ "${NCU:-1}" = 1 ] && [ ${#correct[@]} -gt 0 ]; then
  pick=${correct[${#correct[@]}-1]}
  for b in "${correct[@]}"; do [ "${b##*/harness-}" = "${NCU_CANDIDATE:-}" ] && pick=$b; done
  profile "${pick##*/harness-}" "$pick"
  [ -n "${NCU_SOURCE:-}" ] && ncu_source "${pick##*/harness-}" "$pick"
fi

pairs=${AB_PAIRS:-}
if [ -z "$pairs" ]; then
  for b in ${correct[@]+"${correct[@]}"}; do pairs="$pairs A:${b##*/harness-}"; done
fi
for pair in $pairs; do
  old=${pair%%:*} new=${pair##*:}
  case " ${correct[*]-} " in *" target/exp/harness-$new "*) ;; *) echo "=== ab $old vs $new: $new not timed (its sweep failed or did not run)"; continue ;; esac
  TAIL=40 timed "ab-$old-vs-$new" "${AB_LIMIT:-130}" "target/exp/harness-$old" bench ab "target/exp/harness-$old" \
    "target/exp/harness-$new" --rounds 4 --min-rounds 3 --out "/tmp/topk-probe-ab-$old-$new" -- --primitive topk \
    --variant grid_threshold_select --sizes 1048576,16777216,268435456 --shape 1x32000 --shape 1x128256 \
    --shape 64x128256 --quick
done
tar czf "$OUT/topk-probe.tgz" -C "$OUT" topk-probe
echo "=== topk-probe: $P"
