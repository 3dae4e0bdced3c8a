#!/usr/bin/env bash
# packaging/gpu-server.sh [third_party_dir] [ctest args...] — build and run the GPU suite on the
# GPU server (see /work/shared/design/GPU-MACHINE.md: Ubuntu 24.04, CUDA 13 in /usr/local/cuda,
# PyTorch in python3, CMake + Ninja on PATH; no Qt, no nlohmann/CLI11/xxHash, no network).
#
#   third_party_dir  copied headers (packaging/vendor-third-party.sh makes it on a development
#                    machine); default $KF_THIRD_PARTY_DIR, else <repo>/third_party.
#   ctest args       passed on, e.g. -R verify.
#
# One go: records the environment, configures the Qt-free targets (preset gpu-server:
# KF_BUILD_GUI=OFF, Release) against python3's PyTorch and the CUDA toolkit, builds with every
# core, runs `ctest -L gpu` one test at a time (tests that time kernels must not share the GPU)
# and prints a results table. Exits with ctest's status (or 1 when configure/build fail).
# Installs nothing and needs no network.
#
# If OUT names a directory, full logs and reports go there: environment.log, configure.log,
# build.log, ctest.log, ctest-junit.xml, results.log (the table), results.json and ctest's
# LastTest.log (every test's full output). The tests see OUT in their environment too.
# Environment: KF_THIRD_PARTY_DIR, KF_PYTHON (default python3), KF_JOBS (default nproc), OUT.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=gpu-server
third_party=${KF_THIRD_PARTY_DIR:-$KF_ROOT/third_party}
if [ $# -gt 0 ]; then third_party=$1; shift; fi
python=${KF_PYTHON:-python3}
jobs=${KF_JOBS:-$(nproc)}
bdir="$KF_ROOT/build/gpu-server"
out=${OUT:-}
if [ -n "$out" ]; then
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
fi
junit="${out:-$bdir}/ctest-junit.xml"

# logged <name> <command...>: run it; with OUT set, also keep its output in $OUT/<name>.log.
logged() {
  local name=$1
  shift
  if [ -n "$out" ]; then "$@" 2>&1 | tee "$out/$name.log"; else "$@"; fi
}

# --- checks ------------------------------------------------------------------------------------
for tool in cmake ninja "$python"; do
  command -v "$tool" >/dev/null 2>&1 || kf_die "$me" "$tool not found on PATH"
done
for h in nlohmann/json.hpp nlohmann/json_fwd.hpp CLI/CLI.hpp xxhash.h; do
  [ -f "$third_party/$h" ] || kf_die "$me" "$third_party/$h missing: run packaging/vendor-third-party.sh on a development machine and copy its folder here (or pass the folder as the first argument)"
done
third_party=$(cd "$third_party" && pwd)
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) ||
  kf_die "$me" "'$python -c \"import torch\"' failed: this script needs PyTorch in $python (set KF_PYTHON)"

# --- environment -------------------------------------------------------------------------------
# shellcheck disable=SC2317  # called through logged
environment() {
  echo "date:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host:      $(hostname)"
  echo "commit:    $(git -C "$KF_ROOT" rev-parse -q --verify HEAD 2>/dev/null || echo unknown)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>&1 |
      sed 's/^/gpu:       /'
  else
    echo "gpu:       nvidia-smi not found"
  fi
  echo "cuda:      $( (nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>/dev/null | sed -n 's/.*release /release /p')"
  echo "torch:     $("$python" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1)"
  echo "cmake:     $(cmake --version | head -n 1)"
  echo "ninja:     $(ninja --version)"
  echo "compiler:  $(c++ --version 2>/dev/null | head -n 1)"
  echo "cores:     $(nproc)"
}
kf_log "$me" "environment"
logged environment environment

# --- configure and build -----------------------------------------------------------------------
cd "$KF_ROOT"
kf_log "$me" "configure: preset gpu-server, third-party headers from $third_party"
logged configure cmake --preset gpu-server -DKF_BUILD_GUI=OFF \
  "-DKF_THIRD_PARTY_DIR=$third_party" "-DCMAKE_PREFIX_PATH=$torch_prefix" ||
  kf_die "$me" "configure failed${out:+ (log: $out/configure.log)}"

kf_log "$me" "build: -j $jobs"
logged build cmake --build "$bdir" -j "$jobs" ||
  kf_die "$me" "build failed${out:+ (log: $out/build.log)}"

# --- GPU tests ---------------------------------------------------------------------------------
kf_log "$me" "test: ctest -L gpu, one at a time"
rm -f "$junit"
status=0
logged ctest ctest --test-dir "$bdir" -L gpu --output-on-failure --no-tests=error -j1 \
  --output-junit "$junit" "$@" || status=$?
if [ -n "$out" ] && [ -f "$bdir/Testing/Temporary/LastTest.log" ]; then
  cp "$bdir/Testing/Temporary/LastTest.log" "$out/LastTest.log"
fi

# --- results table -----------------------------------------------------------------------------
# shellcheck disable=SC2317  # called through logged
table() {
  "$python" - "$junit" "${out:+$out/results.json}" <<'PY'
import json, sys, xml.etree.ElementTree as ET
path, json_out = sys.argv[1], sys.argv[2]
try:
    cases = ET.parse(path).getroot().iter("testcase")
except (OSError, ET.ParseError) as e:
    print(f"no results: {e}")
    sys.exit(0)
rows = []
for c in cases:
    status, note = "PASS", ""
    for tag, name in (("failure", "FAIL"), ("error", "FAIL"), ("skipped", "SKIP")):
        el = c.find(tag)
        if el is not None:
            status, note = name, (el.get("message") or "").strip()
            break
    if c.get("status") in ("notrun", "disabled") and status == "PASS":
        status = "NOT RUN"
    rows.append({"name": c.get("name"), "status": status,
                 "seconds": float(c.get("time") or 0), "note": note})
if not rows:
    print("no tests labelled gpu were found")
else:
    w = max(len(r["name"]) for r in rows)
    print(f"{'test':<{w}}  {'result':<7}  {'seconds':>8}  note")
    for r in rows:
        print(f"{r['name']:<{w}}  {r['status']:<7}  {r['seconds']:>8.2f}  {r['note'][:80]}")
    counts = {s: sum(r["status"] == s for r in rows) for s in ("PASS", "FAIL", "SKIP", "NOT RUN")}
    print(", ".join(f"{n} {s.lower()}" for s, n in counts.items() if n) + f" of {len(rows)}")
if json_out:
    with open(json_out, "w") as f:
        json.dump({"junit": path, "tests": rows}, f, indent=2)
PY
}
printf '\n'
kf_log "$me" "results (ctest exit $status)"
logged results table
exit $status
