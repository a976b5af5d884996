#!/usr/bin/env bash
# Runs the GPU half of primlab on a GPU machine, from the repository root,
# with the harness binary built elsewhere (make build-release) and carried
# over. Steps run in the order given; logs, JUnit files, the bench report and
# ncu output go to $LOGS (gpu-logs) and are packed into $OUT/logs.tgz by the
# `pack` step.
#
# Receipts: each step writes its receipt into a staging folder of its own
# ($LOGS/stage/<step>/), never into receipts/. Only when the step succeeded
# (exit 0, not timed out) is that receipt copied to $OUT (default ./gpu-out)
# and, for a full run, moved over the committed receipts/<name>. A failed step
# leaves receipts/ untouched and copies nothing, so no old receipt is ever
# passed off as this run's.
#
#   scripts/gpu_run.sh info proof sweep-large cub-build bench-quick bench-topk nccl ncu check-examples check-rules check-streamed check-typed check-rows gallery python gate gate-trial pack bundle
#
# `proof` remakes exactly the gated receipts `harness receipts status` calls
# stale (sweep, then sanitize and mutants side by side) and does nothing when
# none is; `sweep`, `sanitize` and `mutants` remake one each, stale or not.
# PROOF_PARTS (e.g. "sweep sanitize", then "mutants" in a second call, after
# committing the first call's receipts) remakes only the stale parts it names,
# for a proof longer than one call: mutants alone then gets every core
# (MUTANTS_JOBS 16, not 10).
# Run the gallery in calls of its own. End each call with `bundle`.
#
# `gallery` runs scripts/check_gallery.sh: every kernel of examples/check/bugs/
# (user-kernel bugs and correct controls) through `harness check` with its
# defaults, plus `check --sanitize` for the controls and the bugs whose
# expected catcher is a sanitizer; its table is $OUT/gallery/gallery.tsv (logs
# beside it). It stays within its 590 s limit (GALLERY_BUDGET=560: runs that
# would start later are listed NOT RUN; the --sanitize runs check the plain
# cases at the sanitizer sizes only); all 77 entries need more than one
# call: split them with GALLERY_IDS="01 02 ..." and GALLERY_OUT=$OUT/gallery-1.
# Entries with a `# gallery large: SIZES` line also run `check --sizes SIZES`;
# those with `# gallery may miss: WHY` are listed, not failed, when missed.
# Its exit status is 0 only when every bug was caught and every control passed
# clean.
#
# `gate` runs the speed gate of `make gate`: `bench ab` of the carried old build
# (OLD_HARNESS, default target/gate-old/harness, its harness.digests.json beside
# it) against $H with GATE_ARGS (default --quick) after `--`; its table is
# $OUT/gate.txt and its rounds' receipts and logs $OUT/gate-ab/. Exit 1 is a
# regression or a record one build lacks (the table names it).
#
# A failing step does not stop the next one; the exit status is nonzero if
# any step failed. Each step has a wall-clock limit. HARNESS names another
# binary (default ./target/release/harness).
set -u
H=${HARNESS:-./target/release/harness}
OUT=${OUT:-gpu-out}
LOGS=gpu-logs
STAGE=$LOGS/stage
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
  return $rc
}
# A fresh staging folder for one step's receipts (left over ones removed:
# the folder is this script's own, under $LOGS).
stage_dir() {
  rm -rf "${STAGE:?}/$1"
  mkdir -p "$STAGE/$1"
  echo "$STAGE/$1"
}
# After a step that exited 0: copy its staged receipt FILE to $OUT/AS and,
# when DEST is given, move it over DEST (the committed receipt). A missing
# file fails the step: it succeeded without writing what it should.
deliver() {
  local name=$1 file=$2 as=$3 dest=${4:-}
  if [ ! -f "$file" ]; then
    echo "=== $name: exit 0 but no receipt at $file; nothing copied"
    status=1
    return
  fi
  cp "$file" "$OUT/$as"
  if [ -n "$dest" ]; then
    mv "$file" "$dest.tmp-$$" && mv "$dest.tmp-$$" "$dest"
    echo "=== $name: receipt $dest (copy in $OUT/$as)"
  else
    echo "=== $name: receipt $OUT/$as"
  fi
}
# Whether `harness CMD` takes option OPT (older binaries lack some).
takes() { "$H" "$1" --help 2>/dev/null | grep -q -- "$2"; }
# ncu on the first launch of one kernel inside a one-case sweep.
ncu_step() {
  local id=$1 kernel=$2
  shift 2
  step "ncu-$id" 60 ncu --clock-control none --kernel-name "regex:$kernel" --launch-count 1 \
    --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size \
    "$H" sweep --gpu-only --seed 1 "$@"
  cp "$LOGS/ncu-$id.log" "$LOGS/ncu/$id.txt"
}
for s in "$@"; do
  case "$s" in
    info)
      { nvidia-smi; nvcc --version; compute-sanitizer --version; python3 -c 'import torch; print("torch", torch.__version__)'; } >"$OUT/machine.txt" 2>&1 ;;
    sweep)
      # --require-gpu: a sweep whose GPU checks were skipped fails the step.
      d=$(stage_dir sweep)
      extra=()
      takes sweep --junit && extra+=(--junit "$LOGS/sweep.junit.xml")
      # The gate requires the seed derived from the sources (receipts seed).
      step sweep 585 "$H" sweep --require-gpu --seed "$("$H" receipts seed sweep)" --receipt "$d/sweep.json" "${extra[@]}" &&
        deliver sweep "$d/sweep.json" sweep.json receipts/sweep.json ;;
    sweep-large)
      # The large-offset cases: every primitive at 2^32 + 333 and 2^33 + 555
      # (sweep::sizes::LARGE_OFFSET_SIZES), one size after the other (within a size an
      # input past 2^32 takes the sweep's whole host budget, so those inputs run one at a
      # time). Cases a primitive cannot take (32-bit sizes) or whose buffers
      # exceed the card are skipped with the reason and counted so; the log's table
      # says which ran. The scan at 2^33 + 555 needs an H200 (103 GB). Inputs past 2^32
      # run one at a time, about a minute each at 2^32 + 333 on the H100: reduce, scan,
      # float_reduce and exact_sum (8 inputs) took 541 s there; at 2^33 + 555 float_reduce
      # alone 140 s, exact_sum alone 110 s, reduce alone 69 s (scan skipped for memory);
      # arg_reduce alone at 2^32 + 333 188 s (4 inputs), histogram alone 104 s (3
      # inputs); softmax alone there needs about 480 s (its rows and their sampled exact
      # softmax are slow to make): its dtypes ran in calls of their own
      # (SWEEP_LARGE_VARIANTS=bf16.rows 251 s, then f32.rows 227 s, limit 280 each).
      # Give each size, or a few primitives, a call of its own
      # (SWEEP_LARGE_SIZES=4294967629, then 8589935147).
      # SWEEP_LARGE_PRIMITIVES (e.g. "reduce scan float_reduce exact_sum") runs only
      # those: the catalogue's fixed-shape cases (top-k rows, rejections), which run at
      # any --sizes, then stay out of the call (most of the 1976 cases at 2^32 + 333).
      # SWEEP_LARGE_VARIANTS (e.g. "bf16.rows") keeps only the cases whose variant
      # contains one of them (sweep --variant), to split a primitive over calls; the
      # log is then named sweep-large-<n>-<variants>.log.
      mkdir -p "$OUT/sweep-large"
      only=()
      for p in ${SWEEP_LARGE_PRIMITIVES:-}; do only+=(--primitive "$p"); done
      for v in ${SWEEP_LARGE_VARIANTS:-}; do only+=(--variant "$v"); done
      tag=${SWEEP_LARGE_VARIANTS:+-$(echo $SWEEP_LARGE_VARIANTS | tr ' ' '+')}
      for n in ${SWEEP_LARGE_SIZES:-4294967629 8589935147}; do
        TAIL=30 step "sweep-large-$n$tag" "${SWEEP_LARGE_LIMIT:-540}" "$H" sweep --gpu-only --sizes "$n" ${only[@]+"${only[@]}"}
        cp "$LOGS/sweep-large-$n$tag.log" "$OUT/sweep-large/" 2>/dev/null
      done ;;
    sweep-quick)
      # A partial run: its receipt goes to $OUT only, never to receipts/.
      d=$(stage_dir sweep-quick)
      extra=()
      takes sweep --require-gpu && extra+=(--require-gpu)
      takes sweep --junit && extra+=(--junit "$LOGS/sweep-quick.junit.xml")
      step sweep-quick 240 "$H" sweep --quick --receipt "$d/sweep-quick.json" "${extra[@]}" &&
        deliver sweep-quick "$d/sweep-quick.json" sweep-quick.json ;;
    sanitize)
      d=$(stage_dir sanitize)
      extra=()
      takes sanitize --junit && extra+=(--junit "$LOGS/sanitize.junit.xml")
      # 338 s on the H100 beside mutants once top-k joined (2026-12-06).
      step sanitize "${SANITIZE_LIMIT:-560}" "$H" sanitize --jobs "${SANITIZE_JOBS:-6}" --log-dir "$LOGS/sanitize" --receipt "$d/sanitize.json" "${extra[@]}" &&
        deliver sanitize "$d/sanitize.json" sanitize.json receipts/sanitize.json ;;
    mutants)
      d=$(stage_dir mutants)
      # MUTANTS_TIMEOUT bounds one (build, check) run; MUTANTS_LIMIT the whole step. The
      # top-k control's racecheck (61x4097 rows, every variant) alone needs 240 to 300 s
      # beside a sanitize run, so one run may take 480 s.
      TAIL=40 step mutants "${MUTANTS_LIMIT:-585}" "$H" mutants --jobs "${MUTANTS_JOBS:-6}" --timeout-secs "${MUTANTS_TIMEOUT:-480}" --log-dir "$LOGS/mutants" --receipt "$d/mutants.json" &&
        deliver mutants "$d/mutants.json" mutants.json receipts/mutants.json ;;
    proof)
      # Remakes exactly the gated receipts these sources made stale (harness
      # receipts status), each at the seed the gate requires, and says how
      # long each part took: the sweep alone (it holds the GPU and the host's
      # cores), then sanitize and mutants side by side (two pools of
      # compute-sanitizer processes). Each part is this script's own step, so
      # a failed part leaves its committed receipt as it was.
      started=$SECONDS proof_failed=0
      # This script's own logs of an earlier proof on this machine would be read as this one's.
      rm -f "$LOGS/proof-sanitize.out" "$LOGS/proof-mutants.out"
      "$H" receipts status | tee "$OUT/proof-status.txt"
      stale=$("$H" receipts status --names)
      rc=$?
      if [ $rc -eq 2 ] || { [ $rc -ne 0 ] && [ -z "$stale" ]; }; then
        echo "=== proof: cannot tell which receipts are stale (exit $rc); nothing remade"
        status=1
        continue
      fi
      if [ -z "$stale" ]; then
        echo "=== proof: every gated receipt is fresh for these sources; nothing to remake"
        continue
      fi
      if [ -n "${PROOF_PARTS:-}" ]; then
        named=$(printf '%s\n' $stale | grep -xF "$(printf '%s\n' $PROOF_PARTS)")
        later=$(printf '%s\n' $stale | grep -vxF "$(printf '%s\n' $PROOF_PARTS)")
        echo "=== proof: PROOF_PARTS=\"$PROOF_PARTS\": remaking $(echo ${named:-nothing}); left stale for a later call: $(echo ${later:-nothing})"
        stale=$named
        [ -z "$stale" ] && continue
      fi
      wants() { printf '%s\n' "$stale" | grep -qx "$1"; }
      times=""
      if wants sweep; then
        part=$SECONDS
        "$0" sweep || { status=1; proof_failed=1; }
        times="$times sweep $((SECONDS - part)) s;"
        # A failed sweep means these sources cannot land, so sanitize and mutants would only
        # spend the call's device time; PROOF_AFTER_FAILED_SWEEP=1 runs them anyway.
        if [ "$proof_failed" != 0 ] && [ "${PROOF_AFTER_FAILED_SWEEP:-0}" != 1 ]; then
          echo "=== proof: the sweep failed; sanitize and mutants not run (PROOF_AFTER_FAILED_SWEEP=1 runs them)" | tee -a "$OUT/proof-status.txt"
          stale=sweep
        fi
      fi
      part=$SECONDS
      # The device tool kills a call at 600 s and then nothing comes back, so the two
      # parts get what is left of PROOF_BUDGET (default 570 s) after the sweep, unless
      # SANITIZE_LIMIT / MUTANTS_LIMIT / MUTANTS_TIMEOUT say otherwise: a part its own
      # limit stops still leaves its log, and the other part's receipt.
      left=$(( ${PROOF_BUDGET:-570} - (SECONDS - started) ))
      [ "$left" -lt 60 ] && left=60
      sanitize_limit=${SANITIZE_LIMIT:-$left} mutants_limit=${MUTANTS_LIMIT:-$left}
      mutants_timeout=${MUTANTS_TIMEOUT:-$((mutants_limit - 10))}
      # Mutants is throughput-bound (4,609 job-seconds at 10 jobs: 462 s on the H100,
      # session 11): alone it takes the 16 cores sanitize would have shared.
      mutants_jobs=${MUTANTS_JOBS:-10}
      wants sanitize || mutants_jobs=${MUTANTS_JOBS:-16}
      side=$(printf '%s\n' $stale | grep -vx sweep | paste -sd ' ')
      case "$side" in
        "sanitize mutants") side="sanitize and mutants side by side" ;;
        ?*) side="$side alone" ;;
      esac
      [ -n "$side" ] && echo "=== proof: $side, limits sanitize $sanitize_limit s, mutants $mutants_limit s (one mutants check $mutants_timeout s, $mutants_jobs jobs)"
      pids=()
      if wants sanitize; then
        SANITIZE_LIMIT=$sanitize_limit SANITIZE_JOBS=${SANITIZE_JOBS:-6} "$0" sanitize >"$LOGS/proof-sanitize.out" 2>&1 &
        pids+=($!)
      fi
      if wants mutants; then
        MUTANTS_LIMIT=$mutants_limit MUTANTS_TIMEOUT=$mutants_timeout MUTANTS_JOBS=$mutants_jobs "$0" mutants >"$LOGS/proof-mutants.out" 2>&1 &
        pids+=($!)
      fi
      for pid in "${pids[@]}"; do wait "$pid" || { status=1; proof_failed=1; }; done
      for f in "$LOGS/proof-sanitize.out" "$LOGS/proof-mutants.out"; do [ -f "$f" ] && cat "$f"; done
      [ ${#pids[@]} -gt 0 ] && times="$times $side $((SECONDS - part)) s;"
      # "remade" only when every part passed: a failed part's receipt records a failure.
      verdict="remade"
      [ "$proof_failed" != 0 ] && verdict="ran, NOT ALL PASSED,"
      echo "=== proof: $verdict $(echo $stale) in $((SECONDS - started)) s:$times see the exits above" | tee -a "$OUT/proof-status.txt" ;;
    cub-build)
      # Against the pinned CCCL when its wheel was carried here (target/cccl/*.whl, from
      # scripts/install_cccl.sh on the build machine; this machine reaches no registry),
      # else against the toolkit's own. In the background: nvcc takes about a minute;
      # bench waits for it.
      cccl=()
      if inc=$(scripts/install_cccl.sh --offline 2>>"$LOGS/cub-build.log"); then
        cccl=(-I"$inc")
        export PRIMLAB_CCCL_INCLUDE=$inc
        echo "cub-build: against the CCCL headers in $inc" | tee -a "$LOGS/cub-build.log"
      else
        echo "cub-build: no CCCL wheel carried (target/cccl/*.whl): against the toolkit's CCCL" | tee -a "$LOGS/cub-build.log"
      fi
      (nvcc -O3 -std=c++17 -arch=sm_90 "${cccl[@]}" -o target/cub_bench scripts/baselines/cub_bench.cu >>"$LOGS/cub-build.log" 2>&1; echo "exit $?" >>"$LOGS/cub-build.log") &
      CUB_PID=$! ;;
    bench|bench-quick)
      [ -n "${CUB_PID:-}" ] && wait "$CUB_PID"
      [ -x target/cub_bench ] && export PRIMLAB_CUB_BENCH=$PWD/target/cub_bench
      d=$(stage_dir "$s")
      flags=(--crossover --out "$LOGS/${s/bench/report}" --receipt "$d/bench.json")
      if [ "$s" = bench-quick ]; then
        # A partial run: its receipt goes to $OUT only, never to receipts/.
        TAIL=60 step "$s" 170 "$H" bench "${flags[@]}" --quick &&
          deliver "$s" "$d/bench.json" bench-quick.json
      else
        # A full run took 170 s of its own on the H200 (2026-12-02) and a
        # 170 s limit killed it during the PyTorch baseline: leave room.
        TAIL=60 step "$s" 360 "$H" bench "${flags[@]}" &&
          deliver "$s" "$d/bench.json" bench.json receipts/bench.json
      fi ;;
    bench-topk)
      # Top-k alone (a partial run: its receipt goes to $OUT only): the decoder shapes and
      # whole arrays beside torch.topk and, with the CCCL wheel carried (cub-build first),
      # CUB's DeviceTopK; the report in $LOGS/report-topk.
      [ -n "${CUB_PID:-}" ] && wait "$CUB_PID"
      [ -x target/cub_bench ] && export PRIMLAB_CUB_BENCH=$PWD/target/cub_bench
      d=$(stage_dir bench-topk)
      TAIL=60 step bench-topk 300 "$H" bench --primitive topk --out "$LOGS/report-topk" --receipt "$d/bench.json" &&
        deliver bench-topk "$d/bench.json" bench-topk.json ;;
    nccl)
      # NCCL_GPUS (default 1) ranks, one per GPU; never NVLink multicast.
      export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
      eval "$(scripts/nccl_env.sh)"
      g=${NCCL_GPUS:-1}
      step nccl-sweep 45 "$H" sweep --gpu-only --gpus "$g" --variant sharded --sizes 1,4099,262145,16777216 --receipt "$LOGS/sweep-gpus$g-sharded.json"
      PRIMLAB_RECEIPTS=$LOGS TAIL=40 step nccl-bench 60 "$H" bench --gpus "$g" --quick ;;
    gallery)
      # The gallery of user-kernel bugs; gallery.tsv is rewritten after every run.
      # GALLERY_IDS (e.g. "01 02 10 11") runs only those entries, into
      # GALLERY_OUT (default $OUT/gallery; it must be new or empty).
      # shellcheck disable=SC2086
      TAIL=60 step gallery 590 env HARNESS="$H" GALLERY_BUDGET=${GALLERY_BUDGET:-560} \
        GALLERY_SANITIZE_SIZES=${GALLERY_SANITIZE_SIZES:-1,31,33,257,513,4099,262145} \
        scripts/check_gallery.sh "${GALLERY_OUT:-$OUT/gallery}" ${GALLERY_IDS:-} ;;
    ncu)
      # One file per bench target id (the report quotes receipts/ncu/<id>.txt);
      # scan_2p28_copy is the same kernel as scan_2p28.
      ncu_step scan_2p28 scan_decoupled_lookback_exclusive_i32 --primitive scan --variant decoupled_lookback.exclusive.i32 --sizes 268435456
      cp "$LOGS/ncu/scan_2p28.txt" "$LOGS/ncu/scan_2p28_copy.txt"
      ncu_step scan_2p20 scan_decoupled_lookback_exclusive_i32 --primitive scan --variant decoupled_lookback.exclusive.i32 --sizes 1048576
      ncu_step reduce_2p28 reduce_single_pass_i32 --primitive reduce --variant single_pass.i32 --sizes 268435456
      ncu_step compact_2p28 compact_single_pass_positive --primitive compact --variant single_pass.positive --sizes 268435456
      ncu_step exact_sum_2p28 exact_sum_f32 --primitive exact_sum --variant correctly_rounded.f32 --sizes 268435456
      ncu_step exact_sum_2p20 exact_sum_f32 --primitive exact_sum --variant correctly_rounded.f32 --sizes 1048576 ;;
    check-examples)
      # examples/check: the correct CUDA scan passes `check --sanitize --bench`,
      # the planted bug fails with exactly the line its README states, the CUDA
      # compaction passes `check --sanitize --bench`, the PTX
      # reduce passes `check --sanitize`, and the Triton reduce runs end to end
      # through cases export / verify. Each expectation not met fails its step
      # with a line saying which. Receipts go to $OUT only.
      d=$(stage_dir check-examples)
      ex=examples/check
      step check-scan 420 "$H" check --manifest "$ex/scan_cuda/check.toml" --seed 0x5eed --sanitize --bench --out "$d/scan_cuda" &&
        deliver check-scan "$d/scan_cuda/receipt.json" check-scan_cuda.json
      bug_line=$(sed -n 's/^    \(scan\/three_pass_bug.*\)$/\1/p' "$ex/scan_cuda_bug/README.md")
      step check-bug 300 bash -c 'out=$("$1" check --manifest "$2" --seed 0x5eed --out "$3" 2>&1); rc=$?; printf "%s\n" "$out" | grep -v "^\[check\]"
        [ -n "$4" ] || { echo "EXPECTATION NOT MET: no expected line in the README"; exit 1; }
        [ "$rc" -eq 1 ] || { echo "EXPECTATION NOT MET: the planted bug exited $rc, not 1 (a found failure)"; exit 1; }
        printf "%s\n" "$out" | grep -qxF -- "FAIL $4" || { echo "EXPECTATION NOT MET: no line FAIL $4"; exit 1; }
        echo "planted bug caught as expected: $4"' _ "$H" "$ex/scan_cuda_bug/check.toml" "$d/scan_cuda_bug" "$bug_line" &&
        deliver check-bug "$d/scan_cuda_bug/receipt.json" check-scan_cuda_bug.json
      step check-compact 420 "$H" check --manifest "$ex/compact_cuda/check.toml" --seed 0x5eed --sanitize --bench --out "$d/compact_cuda" &&
        deliver check-compact "$d/compact_cuda/receipt.json" check-compact_cuda.json
      step check-ptx 300 "$H" check --manifest "$ex/reduce_ptx/check.toml" --seed 0x5eed --sanitize --out "$d/reduce_ptx" &&
        deliver check-ptx "$d/reduce_ptx/receipt.json" check-reduce_ptx.json
      step check-triton 300 bash -c 'set -e; "$1" cases export --primitive reduce --contract sum.i32 --seed 0x5eed "$2"
        python3 examples/check/triton_reduce/run_cases.py "$2"
        "$1" cases verify "$2" | tee "$3"' _ "$H" "$d/triton-cases" "$d/triton-verify.txt" &&
        deliver check-triton "$d/triton-verify.txt" check-triton-verify.txt ;;
    check-rules)
      # The named rules on the GPU: the kernels of gallery entries 61 and 71,
      # written to torch.histc's and torch.softmax's rules, pass those rules
      # (examples/check/*_rule_cuda) and fail ours with a line naming the rule
      # they would pass. Receipts go to $OUT only.
      d=$(stage_dir check-rules)
      ex=examples/check
      for r in histc_rule_cuda softmax_nan_rule_cuda; do
        step "check-$r" 300 "$H" check --manifest "$ex/$r/check.toml" --seed 0x5eed --out "$d/$r" &&
          deliver "check-$r" "$d/$r/receipt.json" "check-$r.json"
      done
      for b in 61_hist_upper_inclusive 71_softmax_all_masked_nan; do
        step "check-ours-$b" 300 bash -c 'out=$("$1" check --manifest "$2" --seed 0x5eed --out "$3" 2>&1); rc=$?
          printf "%s\n" "$out" | grep -v "^\[check\]" | grep -m 3 "^FAIL"
          [ "$rc" -eq 1 ] || { echo "EXPECTATION NOT MET: exited $rc, not 1 (a found failure)"; exit 1; }
          printf "%s\n" "$out" | grep -q "would pass under" || { echo "EXPECTATION NOT MET: no line names the rule"; exit 1; }
          echo "fails our contract naming the rule it follows"' _ "$H" "$ex/bugs/$b/check.toml" "$d/$b"
      done ;;
    check-typed)
      # Typed contracts (cases/typed) on the GPU: the gallery's typed controls
      # (07 float scan, 08 bfloat16 sum, 09 bfloat16 argmax, 17 uint32 max scan, 28 float16
      # sum, 38 uint32 argmax, 74 bfloat16 softmax, 76 float16 softmax) pass with the
      # defaults and its typed bugs (16, 18, 27, 29, 36, 37, 75, 77) fail with a FAIL line; then
      # PyTorch's cumsum, sum, cummax and argmax under typed contracts from
      # Python (install the wheel first: the python step). Receipts go to $OUT only.
      d=$(stage_dir check-typed)
      for b in 07_fscan_control 08_bf16sum_control 09_bf16argmax_control 17_u32maxscan_control 28_f16sum_control \
        38_u32argmax_control 74_bf16softmax_control 76_f16softmax_control; do
        step "check-typed-$b" 300 "$H" check --manifest "examples/check/bugs/$b/check.toml" --seed 0x5eed --out "$d/$b"
      done
      for b in 16_fscan_truncated_carries 18_u32maxscan_signed_compare 27_bf16sum_bf16_accumulator 29_f16sum_bit_trick_widen \
        36_bf16argmax_signed_zero 37_u32argmax_int32_key 75_bf16softmax_truncated_output 77_f16softmax_half_row_sum; do
        step "check-typed-$b" 300 bash -c 'out=$("$1" check --manifest "$2" --seed 0x5eed --out "$3" 2>&1); rc=$?
          printf "%s\n" "$out" | grep -v "^\[check\]" | grep -m 3 -A 3 "^FAIL"
          [ "$rc" -eq 1 ] || { echo "EXPECTATION NOT MET: exited $rc, not 1 (a found failure)"; exit 1; }
          echo "fails as expected"' _ "$H" "examples/check/bugs/$b/check.toml" "$d/$b"
      done
      TAIL=60 step python-typed 300 python3 -m pytest -v -s -p no:cacheprovider --timeout 120 examples/python/test_torch_typed.py ;;
    check-rows)
      # Row contracts (cases/typed/rows) on the GPU: the gallery's row controls (91 layer
      # norm, 94 bfloat16 RMS norm, 95 cross-entropy mean) pass with the defaults and its row
      # bugs (92 one-pass variance, 93 no eps, 96 no max shift, 97 a mean counting ignored
      # rows, 98 a bfloat16-accumulated mean) fail with a FAIL line; then PyTorch's F.layer_norm, F.rms_norm and
      # F.cross_entropy under framework="torch" and a one-pass Triton layer norm from Python
      # (install the wheel first: the python step). Receipts go to $OUT only.
      d=$(stage_dir check-rows)
      for b in 91_layernorm_control 94_rmsnorm_control 95_cross_entropy_control; do
        step "check-rows-$b" 300 "$H" check --manifest "examples/check/bugs/$b/check.toml" --seed 0x5eed --out "$d/$b"
      done
      for b in 92_layernorm_one_pass_variance 93_layernorm_no_eps 96_cross_entropy_no_max_shift \
        97_cross_entropy_mean_counts_ignored 98_bf16layernorm_bf16_mean_partials; do
        step "check-rows-$b" 300 bash -c 'out=$("$1" check --manifest "$2" --seed 0x5eed --out "$3" 2>&1); rc=$?
          printf "%s\n" "$out" | grep -v "^\[check\]" | grep -m 3 -A 3 "^FAIL"
          [ "$rc" -eq 1 ] || { echo "EXPECTATION NOT MET: exited $rc, not 1 (a found failure)"; exit 1; }
          echo "fails as expected"' _ "$H" "examples/check/bugs/$b/check.toml" "$d/$b"
      done
      TAIL=60 step python-rows 300 python3 -m pytest -v -s -p no:cacheprovider --timeout 120 examples/python/test_torch_rows.py ;;
    check-streamed)
      # Past 2^31 a case is made and judged a piece at a time (check/streamed):
      # the correct CUDA scan and compaction pass at 2^31 + 1000 with every
      # family there (--deep), gallery bug 20 (an int index that wraps past
      # 2^31) fails there with check=sum, and bug 26 (an unsigned tile offset
      # that wraps past 2^32) fails at 2^32 + 1000. The four run side by side;
      # each log ends with its wall time and the peak host memory of its
      # largest process.
      d=$(stage_dir check-streamed)
      step check-streamed 560 bash -c 'peak="import resource, subprocess, sys, time
t = time.time(); rc = subprocess.run(sys.argv[1:]).returncode
print(f\"wall {time.time() - t:.1f} s, peak host memory {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6:.2f} GB\")
sys.exit(rc)"
        run() { python3 -c "$peak" "$1" check --manifest "examples/check/$2/check.toml" --seed 0x5eed --sizes 2147484648 \
          --deep --out "$3/${2##*/}" >"$4/check-streamed-${2##*/}.log" 2>&1; }
        run "$1" scan_cuda "$2" "$3" & a=$!
        run "$1" compact_cuda "$2" "$3" & b=$!
        run "$1" bugs/20_reduce_int_index_overflow "$2" "$3" & c=$!
        run26() { python3 -c "$peak" "$1" check --manifest examples/check/bugs/26_reduce_unsigned_tile_offset/check.toml \
          --seed 0x5eed --sizes 4294968296 --out "$2/26" >"$3/check-streamed-26_reduce_unsigned_tile_offset.log" 2>&1; }
        run26 "$1" "$2" "$3" & e=$!
        wait $a; ra=$?; wait $b; rb=$?; wait $c; rc=$?; wait $e; re=$?
        for l in scan_cuda compact_cuda 20_reduce_int_index_overflow 26_reduce_unsigned_tile_offset; do
          echo "--- $l"; grep -v "^\[check\]" "$3/check-streamed-$l.log" | tail -n 6; done
        ok=0
        [ "$ra" -eq 0 ] || { echo "EXPECTATION NOT MET: the scan exited $ra, not 0"; ok=1; }
        [ "$rb" -eq 0 ] || { echo "EXPECTATION NOT MET: the compaction exited $rb, not 0"; ok=1; }
        [ "$rc" -eq 1 ] && grep -q "check=sum" "$3/check-streamed-20_reduce_int_index_overflow.log" ||
          { echo "EXPECTATION NOT MET: bug 20 exited $rc without a check=sum failure"; ok=1; }
        [ "$re" -eq 1 ] && grep -q "n=4294968296.*check=sum" "$3/check-streamed-26_reduce_unsigned_tile_offset.log" ||
          { echo "EXPECTATION NOT MET: bug 26 exited $re without a check=sum failure past 2^32"; ok=1; }
        exit $ok' _ "$H" "$d" "$LOGS"
      # The streamed path at the default large sizes (PRIMLAB_STREAM_FROM=2^24) beside the
      # whole one, for the same cases: both pass, and each log ends with its wall time.
      # STREAMED_COMPARE=0 leaves this half out (a short device budget).
      [ "${STREAMED_COMPARE:-1}" = 0 ] && continue
      for m in scan_cuda compact_cuda; do
        for from in 2^24 2^40; do
          step "check-stream-from-${from/^/p}-$m" 300 env PRIMLAB_STREAM_FROM="$from" python3 -c 'import subprocess, sys, time
t = time.time(); rc = subprocess.run(sys.argv[1:]).returncode; print(f"wall {time.time() - t:.1f} s"); sys.exit(rc)' \
            "$H" check --manifest "examples/check/$m/check.toml" --seed 0x5eed --sizes 2^24,2^28,2^28+1 --out "$d/from-${from/^/p}-$m"
        done
      done ;;
    python)
      # The primlab wheel (make python on the build machine; carry
      # target/wheels) installed into this machine's Python without its
      # dependencies, then the GPU examples of examples/python: the Triton
      # sum per case, and the torch.empty defences (a Triton and a torch sum
      # accumulating into torch.empty fail every check; with torch.zeros they
      # pass all three runs), and torch's softmax, histc and argmax under the
      # named rules that state PyTorch's behaviour.
      step python-install 120 bash -c 'python3 -m pip install --quiet --no-deps --force-reinstall target/wheels/primlab-*.whl'
      TAIL=60 step python 400 python3 -m pytest -v -s -p no:cacheprovider --timeout 120 \
        examples/python/test_empty_outputs.py examples/python/test_triton_reduce.py examples/python/test_torch_rules.py ;;
    gate)
      old=${OLD_HARNESS:-target/gate-old/harness}
      d=$(stage_dir gate)
      # shellcheck disable=SC2086
      TAIL=80 step gate "${GATE_LIMIT:-590}" "$H" bench ab "$old" "$H" --out "$d/ab" -- ${GATE_ARGS:---quick}
      # The table is wanted whatever the verdict: a FAIL names its records.
      cp "$LOGS/gate.log" "$OUT/gate.txt"
      [ -d "$d/ab" ] && cp -r "$d/ab" "$OUT/gate-ab"
      echo "=== gate: table in $OUT/gate.txt" ;;
    gate-trial)
      # A trial of the speed gate itself, on the builds of `make gate-trial` ($H and
      # PLANTED_HARNESS, default target/gate-planted/harness, each with its digests):
      # three unchanged pairs through `bench ab` (exit 0: ab times the control primitive
      # alone, the digests being equal), the planted slowdown through `ab` (exit 1,
      # naming the f32 sum's two_pass records), then `compare` on receipts of
      # three processes (two unchanged runs: exit 0; unchanged against planted: exit 1)
      # and of one process (exit 2, naming bench ab). Everything in $OUT/gate-trial/.
      p=${PLANTED_HARNESS:-target/gate-planted/harness}
      TAIL=40 step gate-trial "${GATE_TRIAL_LIMIT:-590}" env HARNESS="$H" EXPECT_ab_planted=1 \
        EXPECT_compare_planted=1 EXPECT_compare_single=2 \
        scripts/speed_gate_trial.sh "$OUT/gate-trial" \
        ab:ab-unchanged-1:"$H":"$H" ab:ab-unchanged-2:"$H":"$H" ab:ab-unchanged-3:"$H":"$H" \
        ab:ab-planted:"$H":"$p" processes:p-unchanged-1:"$H":3 processes:p-unchanged-2:"$H":3 \
        processes:p-planted:"$p":3 single:s-unchanged:"$H" single:s-planted:"$p" \
        compare:compare-unchanged:p-unchanged-1:p-unchanged-2 compare:compare-planted:p-unchanged-1:p-planted \
        compare:compare-single:s-unchanged:s-planted ;;
    pack) tar czf "$OUT/logs.tgz" "$LOGS" ;;
    bundle)
      # The device tool brings back only a few files a call: everything this
      # script put in $OUT goes into one archive (the copies are removed; the
      # receipts themselves are in receipts/ and in the archive).
      (cd "$OUT" && files=$(ls -A | grep -vx 'bundle.tgz') && [ -n "$files" ] &&
        tar czf bundle.tgz $files && rm -rf $files) ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
