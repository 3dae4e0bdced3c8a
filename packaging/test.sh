#!/usr/bin/env bash
# packaging/test.sh [ctest args...] — README command #2: set up, build (preset dev), run the tests.
#
# Runs `ctest --test-dir build/dev --output-on-failure -j2`: every test. Those labelled gpu need a
# CUDA device; without one each skips itself, saying why (`kforge verify` exits 3: no CUDA
# driver), so CI lists them as skipped rather than leaving them out. Extra arguments go to ctest
# (e.g. -R tst_expr). Finding no test at all is a failure, not
# a pass. Prints ccache's statistics at the end and exits with the build's or ctest's status.
# This is what CI runs (.ci/run): 2 cores, no GPU, no stdin.
# Then packaging/fuzz.sh runs every fuzz target for KF_FUZZ_SECONDS (20) under ASan + UBSan
# (skipped with KF_SKIP_FUZZ=1 or when ctest arguments are given).
# Environment: CCACHE_DIR (default ~/.cache/kernelforge/ccache), KF_JOBS (build jobs), KF_FUZZ_SECONDS, KF_SKIP_FUZZ.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me="test"
bdir="$KF_ROOT/build/dev"

status=0
bash "$KF_PACKAGING/build.sh" dev || status=$?

if [ $status -eq 0 ]; then
  kf_load_env   # KF_NVDISASM / KF_CUOBJDUMP reach the tests through the environment
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    kf_log "$me" "GPU found ($(nvidia-smi -L | head -n 1)): the gpu-labelled tests run for real"
  else
    kf_log "$me" "no GPU: the gpu-labelled tests skip themselves (each prints why: no CUDA driver or device)"
  fi
  ctest --test-dir "$bdir" --output-on-failure --no-tests=error -j2 "$@" || status=$?
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
