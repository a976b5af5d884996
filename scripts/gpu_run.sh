#!/usr/bin/env bash
# Runs the GPU half of primlab on a GPU machine, from the repository root,
# with the harness binary built elsewhere (make build-release) and carried
# over. Steps run in the order given; receipts go to receipts/ and are copied
# to $OUT (default ./gpu-out); logs, the bench report and ncu output are
# packed into $OUT/logs.tgz by the `pack` step.
#
#   scripts/gpu_run.sh info sweep sanitize mutants cub-build bench-quick nccl ncu pack
#
# A failing step does not stop the next one; the exit status is nonzero if
# any step failed. Each step has a wall-clock limit.
set -u
H=./target/release/harness
OUT=${OUT:-gpu-out}
LOGS=gpu-logs
mkdir -p "$OUT" "$LOGS/ncu" receipts
export PRIMLAB_KERNEL_CACHE=${PRIMLAB_KERNEL_CACHE:-/tmp/primlab-kernel-cache}
status=0
step() {
  local name=$1 limit=$2
  shift 2
  echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*"
  local started=$SECONDS
  timeout --signal=INT --kill-after=10 "$limit" "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  tail -n "${TAIL:-25}" "$LOGS/$name.log"
  echo "=== $name: exit $rc after $((SECONDS - started))s"
  [ $rc -eq 0 ] || status=1
}
# ncu on the first launch of one kernel inside a one-case sweep.
ncu_step() {
  local id=$1 kernel=$2
  shift 2
  step "ncu-$id" 60 ncu --clock-control none --kernel-name "regex:$kernel" --launch-count 1 \
    --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size \
    "$H" sweep --gpu-only --seed 1 "$@"
  cp "$LOGS/ncu-$id.log" "$LOGS/ncu/$id.txt"
}
for s in "$@"; do
  case "$s" in
    info)
      { nvidia-smi; nvcc --version; compute-sanitizer --version; python3 -c 'import torch; print("torch", torch.__version__)'; } >"$OUT/machine.txt" 2>&1 ;;
    sweep) step sweep 520 "$H" sweep --json receipts/sweep.json; cp receipts/sweep.json "$OUT/" ;;
    sweep-quick) step sweep-quick 240 "$H" sweep --quick --json "$OUT/sweep-quick.json" ;;
    sanitize) step sanitize 300 "$H" sanitize --jobs 6 --log-dir "$LOGS/sanitize"; cp receipts/sanitize.json "$OUT/" ;;
    mutants) TAIL=40 step mutants 100 "$H" mutants --jobs 6 --timeout-secs 80 --log-dir "$LOGS/mutants"; cp receipts/mutants.json "$OUT/" ;;
    cub-build)
      # In the background: nvcc takes about a minute; bench waits for it.
      (nvcc -O3 -std=c++17 -arch=sm_90 -o target/cub_bench scripts/baselines/cub_bench.cu >"$LOGS/cub-build.log" 2>&1; echo "exit $?" >>"$LOGS/cub-build.log") &
      CUB_PID=$! ;;
    bench|bench-quick)
      [ -n "${CUB_PID:-}" ] && wait "$CUB_PID"
      [ -x target/cub_bench ] && export PRIMLAB_CUB_BENCH=$PWD/target/cub_bench
      flags=(--crossover --report "$LOGS/report")
      [ "$s" = bench-quick ] && flags+=(--quick)
      TAIL=60 step "$s" 170 "$H" bench "${flags[@]}"; cp receipts/bench.json "$OUT/" ;;
    nccl)
      # NCCL_GPUS (default 1) ranks, one per GPU; never NVLink multicast.
      export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
      eval "$(scripts/nccl_env.sh)"
      g=${NCCL_GPUS:-1}
      step nccl-sweep 45 "$H" sweep --gpu-only --gpus "$g" --variant sharded --sizes 1,4099,262145,16777216 --json "$LOGS/sweep-gpus$g-sharded.json"
      PRIMLAB_RECEIPTS=$LOGS TAIL=40 step nccl-bench 60 "$H" bench --gpus "$g" --quick ;;
    ncu)
      ncu_step scan_2p28_copy scan_decoupled_lookback_exclusive_i32 --primitive scan --variant decoupled_lookback.exclusive.i32 --sizes 268435456
      ncu_step compact_2p28 compact_single_pass_positive --primitive compact --variant single_pass.positive --sizes 268435456 ;;
    pack) tar czf "$OUT/logs.tgz" "$LOGS" ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
