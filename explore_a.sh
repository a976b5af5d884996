#!/usr/bin/env bash
# Device call A3: float bitwise replay, new scan (warp exchange, 5/SM) correctness, tile shapes vs CUB at 2^28, check examples.
set -u
export PRIMLAB_KERNEL_CACHE=/tmp/kc
H=target/release/harness
mkdir -p "$OUT"
( nvcc -O3 -std=c++17 -arch=sm_90 -I kernels/cuda -o /tmp/sts scripts/baselines/scan_tile_sweep.cu > /tmp/nvcc_sts.log 2>&1; echo "rc=$?" >> /tmp/nvcc_sts.log ) &
NV=$!
echo "== sweep float"; timeout 150 $H sweep --gpu-only --require-gpu --primitive float_reduce --seed 9 > "$OUT/sweep_float.log" 2>&1; echo "rc=$?"; grep -m5 FAIL "$OUT/sweep_float.log"; tail -2 "$OUT/sweep_float.log"
echo "== sweep scan/compact"; timeout 120 $H sweep --gpu-only --require-gpu --primitive scan --primitive compact --sizes 1,31,33,511,513,4095,4096,4097,8191,8193,65537,262145,1048577,16777217,268435456 --seed 11 > "$OUT/sweep_scan.log" 2>&1; echo "rc=$?"; grep -m5 FAIL "$OUT/sweep_scan.log"; tail -2 "$OUT/sweep_scan.log"
wait $NV; tail -1 /tmp/nvcc_sts.log
echo "== tiles"; timeout 150 /tmp/sts > "$OUT/tiles.txt" 2>&1; echo "tiles rc=$?"; grep -E "n=2\^(20|24|28)" "$OUT/tiles.txt"
echo "== check examples"; TAIL=12 OUT=/tmp/ce timeout 400 scripts/gpu_run.sh check-examples; echo "check-examples rc=$?"
tar czf "$OUT/logs.tgz" gpu-logs /tmp/ce; ls /tmp/ce
