#!/usr/bin/env bash
# Runs every fuzz target of the sanitizer build (build/debug/fuzz/*_fuzzer: libFuzzer, ASan, UBSan)
# for SECONDS each (default 20; FUZZ_SECONDS) over the seed corpus fuzz/make_seeds.py writes (the
# tests' own kinds of output and the peers'), the inputs found so far (build/fuzz/corpus) and the
# committed regression inputs (fuzz/regressions/TARGET). A crash, leak, undefined behaviour, hang
# or out-of-memory fails, with its input saved under build/fuzz/crashes/TARGET/ and printed in
# base64 (so a CI log keeps it): add it to fuzz/regressions/TARGET/ once fixed.
#
# A failure replays from its saved input alone: build/debug/fuzz/TARGET FILE. FUZZ_SEED sets
# libFuzzer's random seed (default: a new one each run, printed). FUZZ_WORK is the working folder
# (default build/fuzz; a fresh one starts from the seeds alone, as CI does).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FUZZ_SECONDS:-20}}
shift || true
bin=build/debug/fuzz
work=${FUZZ_WORK:-build/fuzz}
seed=${FUZZ_SEED:-0}  # 0: libFuzzer picks one
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$bin"/*_fuzzer; do targets+=("$(basename "$f")"); done
fi
if ((${#targets[@]} == 0)) || [[ ! -x "$bin/${targets[0]}" ]]; then
  echo "fuzz: no fuzz targets in $bin (build the debug preset: cmake --preset debug && cmake --build --preset debug)" >&2
  exit 1
fi

rm -rf "$work/seeds" "$work/crashes" "$work/logs"
mkdir -p "$work/seeds" "$work/crashes" "$work/logs"
.venv/bin/python fuzz/make_seeds.py "$work/seeds" >/dev/null

run_one() {
  local target=$1 seconds=$2 bin=$3 work=$4 seed=$5
  local corpus=$work/corpus/$target crashes=$work/crashes/$target
  mkdir -p "$corpus" "$crashes" "$work/seeds/$target"
  local dirs=("$corpus" "$work/seeds/$target")
  [[ -d fuzz/regressions/$target ]] && dirs+=("fuzz/regressions/$target")
  local dict=()
  case $target in zarr_* | precomputed_*) dict=(-dict=fuzz/json.dict) ;; esac
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
     "$bin/$target" "${dict[@]}" -seed="$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=2048 \
       -max_len=65536 -artifact_prefix="$crashes/" -print_final_stats=1 "${dirs[@]}" >"$work/logs/$target.log" 2>&1; then
    echo "fuzz: $target: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$work/logs/$target.log" | grep -o '[0-9]*$') runs in ${seconds}s (seed $(grep -m1 -o 'Seed: [0-9]*' "$work/logs/$target.log" | grep -o '[0-9]*$')), no failure"
  else
    echo "fuzz: $target FAILED; its log:"
    tail -n 60 "$work/logs/$target.log"
    for f in "$crashes"/*; do
      [[ -f $f ]] || continue
      echo "fuzz: $target: failing input $f ($(stat -c %s "$f") bytes), base64:"
      base64 -w 0 "$f"
      echo
    done
    return 1
  fi
}
export -f run_one

# The targets run side by side, one a core.
status=0
printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_one "$@"' _ {} "$seconds" "$bin" "$work" "$seed" || status=1
exit $status
