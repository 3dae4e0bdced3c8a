#!/usr/bin/env bash
# packaging/fuzz.sh [seconds per target] — build the fuzz targets (preset fuzz: clang, libFuzzer,
# ASan + UBSan) and run each for a bounded time. Part of README command #2 (packaging/test.sh).
#
# For every target in tests/fuzz: first every kept crasher in tests/fuzz/regressions/<target>/
# is replayed (each must now pass), then libFuzzer runs from a working copy of the seed corpus
# tests/fuzz/corpus/<target>/ for the time given (default $KF_FUZZ_SECONDS, else 5 s, the test
# loop's share; `KF_FUZZ_SECONDS=300 packaging/fuzz.sh` fuzzes longer; inputs up to 64 KiB). A
# crash, leak, timeout (10 s per input) or sanitizer report fails the run; the crashing input is
# left in build/fuzz/crashes/<target>/ with the command that replays it.
# Targets run side by side, as many at once as build jobs (KF_JOBS, default: the cores).
# Prints executions per target at the end (docs/reliability.md records them).
# Environment: KF_FUZZ_SECONDS, KF_JOBS, CCACHE_DIR, KF_STAGE_LOG (packaging/common.sh).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=fuzz
seconds=${1:-${KF_FUZZ_SECONDS:-5}}
bdir="$KF_ROOT/build/fuzz"
if ! command -v clang++-14 >/dev/null 2>&1; then
  kf_die "$me" "clang++-14 not found: run packaging/setup.sh (it installs clang-14 and libclang-rt-14-dev)"
fi
kf_load_env
kf_log "$me" "configuring and building the fuzz targets (ASan + UBSan) in build/fuzz"
kf_stage_begin "fuzz build"
mkdir -p "$bdir"
cd "$KF_ROOT"
if [ ! -f "$bdir/build.ninja" ]; then
  if ! cmake --preset fuzz "-DKF_THIRD_PARTY_DIR=${KF_THIRD_PARTY_DIR:-}" >"$bdir/configure.log" 2>&1; then
    tail -n 40 "$bdir/configure.log" >&2
    kf_die "$me" "configure failed (build/fuzz/configure.log)"
  fi
fi
# Configure again first if CMake must (a new fuzz_*.cpp joins fuzz-targets.txt), then build only
# the fuzz targets and what they link: not kforge, the runner or the device code.
ninja -C "$bdir" build.ninja >"$bdir/regenerate.log" 2>&1 ||
  kf_die "$me" "configure failed (build/fuzz/regenerate.log)"
mapfile -t targets < <(grep -v '^$' "$bdir/fuzz-targets.txt")
if ! ninja -C "$bdir" -j "${KF_JOBS:-$(nproc)}" "${targets[@]}" >"$bdir/build.log" 2>&1; then
  grep -E 'error|FAILED' "$bdir/build.log" | head -n 40 >&2
  kf_die "$me" "build failed (build/fuzz/build.log)"
fi
kf_stage_end "fuzz build"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
symbolizer=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
[ -n "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

# One target: replay its kept crashers, then fuzz it. Writes its summary line to
# $bdir/<target>.summary ("ok ..." or "FAIL ...").
fuzz_one() {
  local target=$1
  local exe="$bdir/tests/fuzz/$target"
  local seeds="$KF_ROOT/tests/fuzz/corpus/$target"
  local kept="$KF_ROOT/tests/fuzz/regressions/$target"
  local work="$bdir/corpus/$target"
  local crashes="$bdir/crashes/$target"
  local out="$bdir/$target.summary"
  mkdir -p "$work" "$crashes"
  [ -d "$seeds" ] && cp -n "$seeds"/* "$work"/ 2>/dev/null || true
  if [ -d "$kept" ] && [ -n "$(ls -A "$kept" 2>/dev/null)" ]; then
    if ! "$exe" "$kept"/* >"$bdir/$target.regressions.log" 2>&1; then
      kf_log "$me" "$target: a kept crasher fails again (see $bdir/$target.regressions.log)"
      tail -n 30 "$bdir/$target.regressions.log" >&2
      printf '%-18s FAIL  a kept crasher fails again: %s\n' "$target" "$bdir/$target.regressions.log" >"$out"
      return
    fi
  fi
  local log="$bdir/$target.log"
  if "$exe" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$crashes/" "$work" >"$log" 2>&1; then
    local runs
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
    printf '%-18s ok    %10s executions in %s s\n' "$target" "$runs" "$seconds" >"$out"
  else
    printf '%-18s FAIL  see %s\n' "$target" "$log" >"$out"
    kf_log "$me" "$target failed; the input is in $crashes (replay: $exe <file>)"
    grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$log" | head -n 20 >&2 || true
  fi
}

# libFuzzer uses one core per target: run as many targets at once as there are build jobs.
jobs=${KF_JOBS:-$(nproc)}
kf_log "$me" "${#targets[@]} targets, $seconds s each, $jobs at a time: about $(( (${#targets[@]} + jobs - 1) / jobs * seconds )) s (KF_FUZZ_SECONDS=N for longer)"
kf_stage_begin "fuzz run"
rm -f "$bdir"/*.summary
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait

status=0
summary=()
for target in "${targets[@]}"; do
  line=$(cat "$bdir/$target.summary" 2>/dev/null || printf '%-18s FAIL  it stopped before reporting' "$target")
  summary+=("$line")
  case "$line" in *" ok "*) ;; *) status=1 ;; esac
done
kf_stage_end "fuzz run" $status
kf_log "$me" "results:"
printf '  %s\n' "${summary[@]}"
kf_log "$me" "exit $status"
exit $status
