#!/usr/bin/env bash
# packaging/test.sh [ctest args...] — README command #2: set up, build (preset dev), run the tests.
#
# Runs `ctest --test-dir build/dev --output-on-failure -j2`: every test. Those labelled gpu need a
# CUDA device; without one each skips itself, saying why (`kforge verify` exits 3: no CUDA
# driver), so CI lists them as skipped rather than leaving them out. Extra arguments go to ctest
# (e.g. -R tst_expr). Finding no test at all is a failure, not
# a pass. Prints ccache's statistics at the end and exits with the build's or ctest's status.
# This is what CI runs (.ci/run): 2 cores, no GPU, no stdin.
# Then packaging/fuzz.sh runs every fuzz target for KF_FUZZ_SECONDS (5) under ASan + UBSan, two at
# a time on two cores (skipped with KF_SKIP_FUZZ=1 or when ctest arguments are given).
# Ends with a table of each stage's wall time (setup, configure, build, ctest, fuzz build, fuzz
# run), also when a stage failed.
# Environment: CCACHE_DIR (default ~/.cache/kernelforge/ccache), KF_JOBS (build jobs), KF_FUZZ_SECONDS, KF_SKIP_FUZZ.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me="test"
bdir="$KF_ROOT/build/dev"

# Each stage's begin and end marks (packaging/common.sh, kf_stage_begin), printed as a table when
# the script ends, however it ends.
KF_STAGE_LOG=$(mktemp "${TMPDIR:-/tmp}/kf-stages.XXXXXX")
export KF_STAGE_LOG
print_stages() {
  local now=${EPOCHREALTIME/,/.}
  kf_log "$me" "wall time per stage:"
  awk -v now="$now" '
    $1 == "begin" { name = $2; for (i = 3; i < NF; i++) name = name " " $i
                    order[++n] = name; t0[name] = $NF }
    $1 == "end"   { name = $2; for (i = 3; i < NF - 1; i++) name = name " " $i
                    t1[name] = $(NF - 1); rc[name] = $NF }
    END { total = 0
          for (i = 1; i <= n; i++) { s = order[i]
            if (s in t1) { d = t1[s] - t0[s]; st = (rc[s] == 0) ? "ok" : "failed (exit " rc[s] ")" }
            else { d = now - t0[s]; st = "stopped" }
            total += d
            printf "  %-10s %8.1f s  %s\n", s, d, st }
          printf "  %-10s %8.1f s\n", "total", total }' "$KF_STAGE_LOG"
  rm -f "$KF_STAGE_LOG"
}
trap print_stages EXIT

status=0
bash "$KF_PACKAGING/build.sh" dev || status=$?

if [ $status -eq 0 ]; then
  kf_load_env   # KF_NVDISASM / KF_CUOBJDUMP reach the tests through the environment
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    kf_log "$me" "GPU found ($(nvidia-smi -L | head -n 1)): the gpu-labelled tests run for real"
  else
    kf_log "$me" "no GPU: the gpu-labelled tests skip themselves (each prints why: no CUDA driver or device)"
  fi
  kf_stage_begin ctest
  ctest_status=0
  ctest --test-dir "$bdir" --output-on-failure --no-tests=error -j2 "$@" || ctest_status=$?
  kf_stage_end ctest $ctest_status
  [ $ctest_status -eq 0 ] || status=$ctest_status
  # The readers of outside input under libFuzzer with ASan + UBSan (tests/fuzz, docs/reliability.md).
  # Only for a whole-suite run: `packaging/test.sh -R tst_expr` runs just that test.
  if [ $# -eq 0 ] && [ "${KF_SKIP_FUZZ:-0}" != 1 ]; then
    bash "$KF_PACKAGING/fuzz.sh" || status=$?
  fi
else
  kf_log "$me" "build failed (exit $status): no tests run"
fi

if command -v ccache >/dev/null 2>&1; then
  kf_log "$me" "ccache ($CCACHE_DIR):"
  ccache -s | sed 's/^/  /'
fi
kf_log "$me" "exit $status"
exit $status
