#!/usr/bin/env bash
# Runs the gallery of user-kernel bugs (examples/check/bugs/<nn>_<name>/) through
# `harness check` with its defaults, and says which bugs were caught.
#
#   scripts/check_gallery.sh [OUT_DIR] [ID ...]
#
# OUT_DIR (default gpu-out/gallery) must be absent or empty; nothing in it is
# ever deleted. IDs (e.g. 10 24 03) pick gallery entries, run in that order;
# default all, in id order.
# For every entry:
#   harness check --manifest M --out OUT_DIR/<id>/check            (defaults: no --seed)
# and, for the controls and for every entry whose check.toml names a
# sanitizer in its `expected catcher:` line,
#   harness check --manifest M --sanitize --out OUT_DIR/<id>/sanitize
# and, for every entry whose check.toml has a `# gallery large: SIZES` line (a
# bug whose catcher is a size past the defaults, such as an index that wraps
# past 2^31 or 2^32),
#   harness check --manifest M --sizes SIZES --out OUT_DIR/<id>/large
# A bug is caught when any of its runs catches it. A bug whose check.toml has a
# `# gallery may miss: WHY` line (no check can be sure to see it) is still run
# and tabled; its miss is listed by name with WHY and does not fail the gallery.
# Each run's output goes to OUT_DIR/<id>/<run>.log; OUT_DIR/gallery.tsv has one
# row per run:
#   id kind run exit seconds caught what verdict seed first_fail
# kind: bug | control. caught: yes (exit 1 with a FAIL line, a FAIL
# divergence line of the static pass, a sanitizer FAIL or a wrong answer
# inside a sanitizer's run), no (exit 0), error (anything else: 2, 124 = our timeout, 137,
# exit 1 without any FAIL line such as "cannot run: no GPU", or not run).
# what: the first FAIL line's check= value (family= if it has none), or the
# sanitizer tool(s) that reported. verdict: CAUGHT / MISSED / NOT RUN for a
# bug; OK (exit 0, and sanitizers clean when run) / FALSE ALARM / NOT RUN for
# a control. seed: the seed check drew (rerun with --seed). A run that could
# not finish is never counted as caught.
#
# Environment:
#   HARNESS                 the harness binary (default ./target/release/harness)
#   GALLERY_JOBS            checks at a time (default 3)
#   GALLERY_GPUS            the GPUs to spread the runs over, round robin by
#                           CUDA_VISIBLE_DEVICES: a list ("1,2,3") or a count
#                           N for 0..N-1 (default: every GPU nvidia-smi lists)
#   GALLERY_TIMEOUT         wall limit of one check, seconds (default 420)
#   GALLERY_BUDGET          wall limit of the whole gallery, seconds (default none):
#                           a run that would start after it is recorded NOT RUN,
#                           and no run is given more than what is left
#   GALLERY_SIZES           when set, --sizes for the plain checks of every entry
#                           not named in GALLERY_FULL_IDS: such a run is named
#                           `fast` in the table, not `check` (a quicker pass
#                           when the device time cannot hold every default
#                           check; the defaults' large sizes then run only for
#                           the entries named in GALLERY_FULL_IDS)
#   GALLERY_FULL_IDS        entries (ids as above) whose plain check keeps the
#                           defaults when GALLERY_SIZES is set
#   GALLERY_SANITIZE_SIZES  --sizes for the plain-check part of the --sanitize
#                           runs (default: none, the defaults; the sanitizer
#                           child always uses its own sizes)
#   GALLERY_LARGE           0: leave out the `large` runs (default 1)
#   GALLERY_DIR             the gallery (default examples/check/bugs of this tree)
# Exit status: 0 when every bug was caught (but those that may miss) and every
# control was OK, 1 otherwise, 2 for bad arguments.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GALLERY=${GALLERY_DIR:-$ROOT/examples/check/bugs}
OUTDIR=${1:-gpu-out/gallery}
[ $# -gt 0 ] && shift
H=${HARNESS:-./target/release/harness}
JOBS=${GALLERY_JOBS:-3}
LIMIT=${GALLERY_TIMEOUT:-420}
BUDGET=${GALLERY_BUDGET:-0}

case "$H" in /*) ;; */*) H=$PWD/$H ;; esac
if [ ! -x "$H" ] && ! command -v "$H" >/dev/null 2>&1; then
  echo "check_gallery: no harness binary at $H (set HARNESS)" >&2
  exit 2
fi
if [ -e "$OUTDIR" ] && [ -n "$(ls -A "$OUTDIR" 2>/dev/null)" ]; then
  echo "check_gallery: $OUTDIR is not empty; give a new folder (nothing is deleted)" >&2
  exit 2
fi
mkdir -p "$OUTDIR" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)

# The entries: every <nn>_<name>/check.toml, or those whose id is named.
entries=()
if [ $# -eq 0 ]; then
  for d in "$GALLERY"/[0-9][0-9]_*/; do
    d=${d%/}
    [ -f "$d/check.toml" ] && entries+=("$(basename "$d")")
  done
else
  # In the order given (the most wanted first, when a budget may cut the rest).
  for a in "$@"; do
    for d in "$GALLERY"/[0-9][0-9]_*/; do
      d=${d%/}
      id=$(basename "$d")
      [ -f "$d/check.toml" ] && { [ "${id%%_*}" = "$a" ] || [ "$id" = "$a" ]; } && entries+=("$id")
    done
  done
fi
if [ ${#entries[@]} -eq 0 ]; then
  echo "check_gallery: no gallery entry under $GALLERY matches" >&2
  exit 2
fi

kind_of() { grep -q '^# CONTROL' "$GALLERY/$1/check.toml" && echo control || echo bug; }
wants_sanitize() {
  [ "$(kind_of "$1")" = control ] || grep -q '^# expected catcher:.*sanitize:' "$GALLERY/$1/check.toml"
}
# The sizes of an entry's `large` run (`# gallery large: SIZES`), empty for none.
large_sizes() { sed -n 's/^# gallery large: *\([^ ]*\).*/\1/p' "$GALLERY/$1/check.toml" | head -n 1; }
# Why an entry may miss (`# gallery may miss: WHY`), empty when it must be caught.
may_miss() { sed -n 's/^# gallery may miss: *//p' "$GALLERY/$1/check.toml" | head -n 1; }

# The run list, each run with the GPU it runs on (round robin).
GPUS=${GALLERY_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
case "$GPUS" in
  *,*) read -r -a GPU_LIST <<<"${GPUS//,/ }" ;;
  *) [ "${GPUS:-0}" -ge 1 ] 2>/dev/null || GPUS=1; GPU_LIST=($(seq 0 $((GPUS - 1)))) ;;
esac
GPUS="${GPU_LIST[*]}"
jobs_file=$OUTDIR/jobs.txt
: >"$jobs_file"
k=0
gpu_of() { echo "${GPU_LIST[$((k % ${#GPU_LIST[@]}))]}"; }
# Each entry's runs side by side (its plain check, then its sanitizer run).
full_defaults() {
  local want
  for want in ${GALLERY_FULL_IDS:-}; do [ "${1%%_*}" = "$want" ] || [ "$1" = "$want" ] && return 0; done
  return 1
}
for id in "${entries[@]}"; do
  plain=check
  [ -n "${GALLERY_SIZES:-}" ] && ! full_defaults "$id" && plain=fast
  echo "$id $plain $(gpu_of)" >>"$jobs_file"
  k=$((k + 1))
  wants_sanitize "$id" && { echo "$id sanitize $(gpu_of)" >>"$jobs_file"; k=$((k + 1)); }
  [ "${GALLERY_LARGE:-1}" != 0 ] && [ -n "$(large_sizes "$id")" ] && { echo "$id large $(gpu_of)" >>"$jobs_file"; k=$((k + 1)); }
done

START=$(date +%s)
export H LIMIT BUDGET START GALLERY OUTDIR
export -f large_sizes
export GALLERY_SANITIZE_SIZES=${GALLERY_SANITIZE_SIZES:-} GALLERY_SIZES=${GALLERY_SIZES:-}

# One run: writes OUTDIR/<id>/<run>.log and OUTDIR/<id>/<run>.row (one TSV row).
run_one() {
  local id=$1 run=$2
  export CUDA_VISIBLE_DEVICES=${3:-0}
  local dir=$OUTDIR/$id
  mkdir -p "$dir"
  local log=$dir/$run.log row=$dir/$run.row
  local kind
  kind=$(grep -q '^# CONTROL' "$GALLERY/$id/check.toml" && echo control || echo bug)
  local limit=$LIMIT now
  now=$(date +%s)
  if [ "$BUDGET" -gt 0 ]; then
    local left=$((START + BUDGET - now))
    if [ "$left" -lt 30 ]; then
      printf '%s\t%s\t%s\t-\t0\terror\tnot run: gallery budget spent\tNOT RUN\t-\t\n' "$id" "$kind" "$run" >"$row"
      write_table
      return 0
    fi
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  local args=(check --manifest "$GALLERY/$id/check.toml" --out "$dir/$run")
  [ "$run" = fast ] && args+=(--sizes "$GALLERY_SIZES")
  [ "$run" = large ] && args+=(--sizes "$(large_sizes "$id")")
  if [ "$run" = sanitize ]; then
    args+=(--sanitize)
    [ -n "$GALLERY_SANITIZE_SIZES" ] && args+=(--sizes "$GALLERY_SANITIZE_SIZES")
  fi
  echo "[gallery] $(date -u +%H:%M:%S) start $id $run on GPU $CUDA_VISIBLE_DEVICES (limit ${limit}s)"
  local t0=$SECONDS
  timeout --signal=INT --kill-after=10 "$limit" "$H" "${args[@]}" >"$log" 2>&1
  local rc=$?
  local secs=$((SECONDS - t0))
  local first what caught verdict tools
  first=$(grep -m1 '^FAIL ' "$log" | tr '\t' ' ')
  # The static pass fails a kernel before any case: `check: FAIL divergence at ...`.
  local divergence
  divergence=$(grep -m1 '^check: FAIL divergence at ' "$log" | sed 's/^check: //' | tr '\t' ' ')
  tools=$(sed -n 's/^check --sanitize: \([a-z]*\): FAIL.*/\1/p' "$log" | paste -sd, -)
  # A wrong answer found inside a tool's run (its scheduling exposed the bug).
  local wrong
  wrong=$(sed -n 's/^check --sanitize: \([a-z]*\): .*wrong answers (not the tool.s finding).*/\1/p' "$log" | paste -sd, -)
  if [ -n "$first" ]; then
    what=$(printf '%s' "$first" | sed -n 's/.* check=\(.*\) index=.*/\1/p')
    [ -z "$what" ] && what=$(printf '%s' "$first" | sed -n 's/.* \(family=[^ ]*\).*/\1/p')
  elif [ -n "$divergence" ]; then
    first=$divergence
    what=divergence
  else
    what=
  fi
  if [ -n "$tools" ]; then
    what="sanitize:$tools${what:+; $what}"
    [ -z "$first" ] && first=$(grep -m1 '^check --sanitize: [a-z]*: FAIL' "$log" | tr '\t' ' ')
  fi
  if [ -n "$wrong" ]; then
    what="${what:+$what; }wrong answers under $wrong"
    [ -z "$first" ] && first=$(grep -m1 '^check --sanitize: [a-z]*: .*wrong answers' "$log" | tr '\t' ' ')
  fi
  if [ "$rc" -eq 0 ]; then
    caught=no
  elif [ "$rc" -eq 1 ] && [ -n "$first" ]; then
    caught=yes
  else
    caught=error
    case "$rc" in
      124) what="could not run: timed out after ${limit}s${what:+ ($what)}" ;;
      137) what="could not run: killed${what:+ ($what)}" ;;
      *) what="could not run: exit $rc: $(grep -v '^\[' "$log" | tail -n 1 | cut -c1-160 | tr '\t' ' ')" ;;
    esac
  fi
  if [ "$kind" = bug ]; then
    case $caught in yes) verdict=CAUGHT ;; no) verdict=MISSED ;; *) verdict="NOT RUN" ;; esac
  else
    case $caught in no) verdict=OK ;; yes) verdict="FALSE ALARM" ;; *) verdict="NOT RUN" ;; esac
  fi
  local seed
  seed=$(sed -n 's/^check: seed \(0x[0-9a-f]*\).*/\1/p' "$log" | head -n 1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$kind" "$run" "$rc" "$secs" "$caught" "$what" "$verdict" \
    "${seed:--}" "$(printf '%s' "$first" | cut -c1-400)" >"$row"
  echo "[gallery] $(date -u +%H:%M:%S) done  $id $run: exit $rc after ${secs}s, $verdict${what:+ ($what)}"
  write_table
}
export -f run_one

# gallery.tsv from whatever rows exist, rewritten (atomically) after every run,
# so that it is there even if the gallery is killed.
write_table() {
  local tsv=$OUTDIR/gallery.tsv tmp=$OUTDIR/.gallery.tsv.$$
  printf 'id\tkind\trun\texit\tseconds\tcaught\twhat\tverdict\tseed\tfirst_fail\n' >"$tmp"
  local id run kind
  while read -r id run _; do
    if [ -f "$OUTDIR/$id/$run.row" ]; then
      cat "$OUTDIR/$id/$run.row" >>"$tmp"
    else
      kind=$(grep -q '^# CONTROL' "$GALLERY/$id/check.toml" && echo control || echo bug)
      printf '%s\t%s\t%s\t-\t0\terror\tnot run: interrupted or not finished\tNOT RUN\t-\t\n' "$id" "$kind" "$run" >>"$tmp"
    fi
  done <"$OUTDIR/jobs.txt"
  mv -f "$tmp" "$tsv"
}
export -f write_table

# The final table and the counts; the exit status.
summarise() {
  write_table
  local tsv=$OUTDIR/gallery.tsv bugs caught controls ok id allowed=0 why
  # Bugs that may miss: out of the count, each miss listed with its reason.
  local must=$OUTDIR/.must_catch
  : >"$must"
  for id in $(awk -F'\t' 'NR > 1 && $2 == "bug" {print $1}' "$tsv" | sort -u); do
    why=$(may_miss "$id")
    if [ -z "$why" ]; then
      echo "$id" >>"$must"
    elif ! awk -F'\t' -v id="$id" '$1 == id && $8 == "CAUGHT" {f = 1} END {exit !f}' "$tsv"; then
      allowed=$((allowed + 1))
      echo "[gallery] $id missed, as it may: $why"
    fi
  done
  bugs=$(wc -l <"$must")
  caught=$(awk -F'\t' 'NR == FNR {must[$1] = 1; next} FNR > 1 && $2 == "bug" && $8 == "CAUGHT" && ($1 in must) {print $1}' \
    "$must" "$tsv" | sort -u | wc -l)
  rm -f "$must"
  controls=$(awk -F'\t' 'NR > 1 && $2 == "control" {print $1}' "$tsv" | sort -u | wc -l)
  # A control is OK only when every one of its runs is OK.
  ok=$(awk -F'\t' 'NR > 1 && $2 == "control" {n[$1]++; if ($8 == "OK") k[$1]++} END {c = 0; for (i in n) if (k[i] == n[i]) c++; print c}' "$tsv")
  echo "[gallery] bugs caught: $caught of $bugs$([ "$allowed" -gt 0 ] && echo " (and $allowed that may miss, missed)"); controls OK: $ok of $controls; table $tsv"
  [ "$caught" -eq "$bugs" ] && [ "$ok" -eq "$controls" ]
}

XARGS_PID=
interrupted() {
  echo "[gallery] interrupted: summarising the runs that finished" >&2
  trap - INT TERM
  # Stop starting runs (xargs, by its id); runs already started end within their own limit.
  [ -n "$XARGS_PID" ] && kill -TERM "$XARGS_PID" 2>/dev/null
  summarise
  exit 1
}
trap interrupted INT TERM

echo "[gallery] ${#entries[@]} entries, $(wc -l <"$jobs_file") runs, $JOBS at a time on GPU(s) $GPUS, ${LIMIT}s each$([ "$BUDGET" -gt 0 ] && echo ", ${BUDGET}s in all"), harness $H, out $OUTDIR"
# In the background, so that a signal reaches the trap at once.
xargs -P "$JOBS" -L 1 bash -c 'run_one "$1" "$2" "$3"' _ <"$jobs_file" &
XARGS_PID=$!
wait "$XARGS_PID"
summarise
