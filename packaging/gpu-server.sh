#!/usr/bin/env bash
# packaging/gpu-server.sh [third_party_dir] [ctest args...] — build, test and time on the GPU server
# (see docs/gpu-validation.md for the server: Ubuntu 24.04, CUDA 13 in /usr/local/cuda, PyTorch in
# python3, CMake + Ninja on PATH; no Qt, no nlohmann/CLI11/xxHash, no network).
#
#   third_party_dir  copied headers and libraries (packaging/vendor-third-party.sh makes it on a
#                    development machine); default $KF_THIRD_PARTY_DIR, else <repo>/third_party.
#   ctest args       passed on, e.g. -R broken (the folder may be left out before them).
#
# One go, within a time budget (KF_DEADLINE_S, default 540 s = 9 minutes on 16 cores):
#   1. records the environment (GPU, driver, CUDA, torch, commit);
#   2. configures the Qt-free build (preset gpu-server: KF_BUILD_GUI=OFF, Release) against
#      python3's PyTorch (torch.utils.cmake_prefix_path) and the third-party headers, and builds
#      only kforge, kforge-runner, kforge-cast and the bench_* tools, with every core;
#   3. runs the GPU suite, `ctest -L gpu --output-on-failure -j1` (tests that use the GPU must not
#      share it; tests/gpu/README.md lists them);
#   4. runs the benchmarks (not pass/fail): streaming-copy bandwidth, timing fidelity against an
#      independent harness, edit-to-verdict latency and compile latency, each capped so the whole
#      run ends within the budget (a benchmark that no longer fits is skipped and says so);
#   5. prints a results table: every GPU test with its result and the benchmark summaries.
# Exits with ctest's status (1 when configure or build fail). Installs nothing, needs no network.
#
# Files: if OUT names a directory, everything goes there, as at most six files:
#   build.log     environment, configure and build output
#   ctest.log     the ctest run;  LastTest.log  every test's full output
#   bench.log     the benchmarks' output
#   reports.json  machine-readable: environment, test results, each test's kforge JSON, benchmark
#                 results, phase times
#   results.txt   the final table
# Without OUT they land in build/gpu-server/gpu-run/.
# Environment: KF_THIRD_PARTY_DIR, KF_PYTHON (default python3), KF_JOBS (default nproc),
# KF_DEADLINE_S (540), KF_BENCH_RESERVE_S (time kept for the benchmarks, 170), KF_LATENCY_REPS
# (edits per example, 3), KF_GPU_VERIFY_ARGS / KF_GPU_BENCH_ARGS (extra kforge arguments for the
# tests; KF_GPU_BENCH_ARGS defaults to --time-cap-ms 1000), KF_BENCH_ARGS (extra `kforge bench`
# arguments for the benchmarks), KF_SKIP_BENCH=1, KF_BUILD_TARGETS (space-separated; default
# kforge, kforge-runner and every bench_* target), OUT.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=gpu-server
t_start=$SECONDS
deadline=${KF_DEADLINE_S:-540}
bench_reserve=${KF_BENCH_RESERVE_S:-170}
third_party=${KF_THIRD_PARTY_DIR:-$KF_ROOT/third_party}
# The first argument is the headers' folder unless it is already a ctest option.
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then third_party=$1; shift; fi
python=${KF_PYTHON:-python3}
jobs=${KF_JOBS:-$(nproc)}
bdir="$KF_ROOT/build/gpu-server"
work="$bdir/gpu-run"  # intermediate files: junit, benchmark JSON
out=${OUT:-}
if [ -n "$out" ]; then
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
fi
logs=${out:-$work}
mkdir -p "$work" "$logs"
rm -f "$work"/*.json "$work"/*.xml "$work"/phases.txt
for f in build.log ctest.log LastTest.log bench.log reports.json results.txt; do rm -f "$logs/$f"; done

# logged <file> <command...>: run it, its output on the terminal and appended to $logs/<file>.
logged() {
  local file=$1
  shift
  "$@" 2>&1 | tee -a "$logs/$file"
}
left() { echo $((deadline - (SECONDS - t_start))); }
phase_start=$SECONDS
phase() { # phase <name>: record how long the phase that just ended took
  echo "$1 $((SECONDS - phase_start))" >>"$work/phases.txt"
  phase_start=$SECONDS
}

# --- checks ------------------------------------------------------------------------------------
for tool in cmake ninja "$python"; do
  command -v "$tool" >/dev/null 2>&1 || kf_die "$me" "$tool not found on PATH"
done
for h in nlohmann/json.hpp nlohmann/json_fwd.hpp CLI/CLI.hpp xxhash.h include/zip.h include/zipconf.h lib/libzip.so.4 include/yaml-cpp/yaml.h lib/libyaml-cpp.so.0.7 \
         include/pugixml.hpp lib/libpugixml.so.1; do
  [ -f "$third_party/$h" ] || kf_die "$me" "$third_party/$h missing: run packaging/vendor-third-party.sh on a development machine and copy its folder here (or pass the folder as the first argument)"
done
third_party=$(cd "$third_party" && pwd)
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null) ||
  kf_die "$me" "'$python -c \"import torch\"' failed: this script needs PyTorch in $python (set KF_PYTHON)"

# --- environment -------------------------------------------------------------------------------
environment() {
  echo "date:      $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host:      $(hostname)"
  echo "commit:    $(git -C "$KF_ROOT" rev-parse -q --verify HEAD 2>/dev/null || echo unknown)$(
    [ -n "$(git -C "$KF_ROOT" status --porcelain 2>/dev/null | head -n 1)" ] && echo ' (with uncommitted changes)')"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 |
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
  echo "budget:    ${deadline} s (benchmarks keep ${bench_reserve} s)"
}
kf_log "$me" "environment"
environment 2>&1 | tee "$work/environment.txt" | tee -a "$logs/build.log"
phase environment

# --- configure and build -----------------------------------------------------------------------
cd "$KF_ROOT"
kf_log "$me" "configure: preset gpu-server (no GUI), torch from $torch_prefix, headers from $third_party" | tee -a "$logs/build.log"
logged build.log cmake --preset gpu-server -DKF_BUILD_GUI=OFF -DKF_BUILD_TESTS=ON \
  "-DKF_THIRD_PARTY_DIR=$third_party" "-DCMAKE_PREFIX_PATH=$torch_prefix" ||
  kf_die "$me" "configure failed (log: $logs/build.log)"

if [ -n "${KF_BUILD_TARGETS:-}" ]; then
  read -r -a targets <<<"$KF_BUILD_TARGETS"
else
  targets=(kforge)
  target_list=$(cmake --build "$bdir" --target help 2>/dev/null || true)
  if grep -q '^kforge-runner:' <<<"$target_list"; then
    targets+=(kforge-runner)
  else
    kf_log "$me" "warning: no kforge-runner target (LibTorch not found?): the GPU tests will skip" | tee -a "$logs/build.log"
  fi
  # kforge-cast: the LibTorch half of `kforge cast run` (gpu.cast.e2e runs it).
  if grep -q '^kforge-cast:' <<<"$target_list"; then
    targets+=(kforge-cast)
  fi
  while read -r t; do targets+=("$t"); done < <(sed -n 's/^\(bench_[A-Za-z0-9_]*\):.*/\1/p' <<<"$target_list")
fi
kf_log "$me" "build: ${targets[*]} with -j $jobs" | tee -a "$logs/build.log"
logged build.log cmake --build "$bdir" -j "$jobs" --target "${targets[@]}" ||
  kf_die "$me" "build failed (log: $logs/build.log)"
kforge="$bdir/app/cli/kforge"
phase build

# --- GPU tests ---------------------------------------------------------------------------------
# The example benchmarks in the suite check that bench works, not the last percent: a 1 s cap per
# shape keeps them inside the budget (the benchmarks below keep kforge's defaults). An explicitly
# empty KF_GPU_BENCH_ARGS turns the cap off.
export KF_GPU_BENCH_ARGS="${KF_GPU_BENCH_ARGS---time-cap-ms 1000 --baseline eager}"
# ctest's --stop-time shortens each test's timeout so that none runs past the suite's share of
# the budget (ctest kills a test's whole process tree); `timeout` is only a backstop.
if [ "${KF_SKIP_BENCH:-0}" = 1 ]; then
  test_time=$(left)
else
  test_time=$(($(left) - bench_reserve))
fi
if [ "$test_time" -lt 60 ]; then test_time=60; fi
stop_at=$(date -d "@$(($(date +%s) + test_time))" +%H:%M:%S)
kf_log "$me" "test: ctest -L gpu, one at a time, until $stop_at ($test_time s)" | tee -a "$logs/ctest.log"
status=0
rm -rf "$bdir/tests/gpu/reports"
ctest --test-dir "$bdir" -N -L gpu "$@" >"$work/tests.txt" 2>&1 || true
logged ctest.log timeout --signal=TERM --kill-after=10 $((test_time + 60)) \
  ctest --test-dir "$bdir" -L gpu --output-on-failure --no-tests=error -j1 --stop-time "$stop_at" \
  --output-junit "$work/ctest-junit.xml" "$@" || status=$?
if [ $status -eq 124 ] || [ $status -eq 137 ]; then
  echo "$me: the GPU suite ran past its $test_time s and was stopped" | tee -a "$logs/ctest.log"
fi
if [ -f "$bdir/Testing/Temporary/LastTest.log" ]; then
  cp "$bdir/Testing/Temporary/LastTest.log" "$logs/LastTest.log"
fi
phase tests

# --- benchmarks --------------------------------------------------------------------------------
# bench <name> <cap s> <command...>: run it if it still fits, capped at min(cap, time left - 15 s).
bench() {
  local name=$1 cap=$2 rc=0 avail
  shift 2
  avail=$(($(left) - 15))
  if [ "${KF_SKIP_BENCH:-0}" = 1 ]; then
    echo "== $name: skipped (KF_SKIP_BENCH=1)" | tee -a "$logs/bench.log"
    return 0
  fi
  if [ "$avail" -lt 20 ]; then
    echo "== $name: skipped, $((avail + 15)) s of the budget left" | tee -a "$logs/bench.log"
    return 0
  fi
  [ "$cap" -le "$avail" ] || cap=$avail
  echo "== $name (at most $cap s)" | tee -a "$logs/bench.log"
  logged bench.log timeout --signal=TERM --kill-after=10 "$cap" "$@" || rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "== $name: stopped after $cap s" | tee -a "$logs/bench.log"
  fi
  echo | tee -a "$logs/bench.log"
  return 0
}
export PYTHONUNBUFFERED=1
bench "streaming-copy bandwidth" 60 \
  "$python" tests/gpu/stream_copy_bandwidth.py --kforge "$kforge" --json-out "$work/stream_copy.json"
bench "timing fidelity" 90 \
  "$python" tests/bench/timing_fidelity.py --kforge "$kforge" --samples 200 --json-out "$work/timing_fidelity.json"
bench "bench wall time" 150 \
  "$python" tests/bench/bench_wall_time.py --kforge "$kforge" --cap-ms 1000 --budget-s 120 --json-out "$work/bench_wall_time.json"
bench "edit-to-verdict latency" 150 \
  "$python" tests/bench/bench_edit_to_verdict.py --kforge "$kforge" --rounds 6 --budget-s 120 --json-out "$work/verify_latency.json"
if [ -x "$bdir/tests/bench/bench_compile" ]; then
  bench "compile latency" 40 "$bdir/tests/bench/bench_compile" --repeats 3
fi
phase benchmarks

# --- results -----------------------------------------------------------------------------------
kf_log "$me" "results (ctest exit $status)"
"$python" - "$logs/ctest.log" "$bdir/tests/gpu/reports" "$work" "$logs/reports.json" "$deadline" <<'PY' | tee "$logs/results.txt"
import glob, json, os, re, sys
ctest_log, report_dir, work, json_out, deadline = sys.argv[1:6]

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

# Tests: ctest's own lines ("3/32 Test #12: name ....***Failed  1.2 sec"), notes from the checker.
rows = []
line_re = re.compile(r"^\s*\d+/\d+\s+Test\s+#\d+:\s+(\S+)\s+\.*\s*(?:\*\*\*)?(.+?)\s+([\d.]+)\s+sec")
try:
    lines = open(ctest_log, errors="replace").read().splitlines()
except OSError:
    lines = []
for line in lines:
    m = line_re.match(line)
    if m:
        name, result, secs = m.group(1), m.group(2).strip(), float(m.group(3))
        result = {"Passed": "PASS", "Failed": "FAIL", "Skipped": "SKIP", "Timeout": "TIMEOUT"}.get(result, result.upper())
        rep = load(os.path.join(report_dir, name + ".json")) or {}
        rows.append({"name": name, "result": result, "seconds": secs, "note": rep.get("note", ""),
                     "report": rep})
# Tests that never started (the suite's time ran out): listed, not silently missing.
try:
    listed = re.findall(r"Test\s+#\d+:\s+(\S+)", open(os.path.join(work, "tests.txt")).read())
except OSError:
    listed = []
seen = {r["name"] for r in rows}
for name in listed:
    if name not in seen:
        rows.append({"name": name, "result": "NOT RUN", "seconds": 0.0, "note": "not started (time budget?)",
                     "report": {}})
print()
if rows:
    w = max(len(r["name"]) for r in rows)
    print(f"GPU suite ({len(rows)} tests)")
    print(f"  {'test':<{w}}  {'result':<7}  {'seconds':>7}  note")
    for r in rows:
        print(f"  {r['name']:<{w}}  {r['result']:<7}  {r['seconds']:>7.1f}  {r['note'][:90]}")
    counts = {}
    for r in rows:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    print("  " + ", ".join(f"{n} {k.lower()}" for k, n in counts.items()) + f" of {len(rows)}")
else:
    print("GPU suite: no test results (see ctest.log)")

def fmt(x, p=1):
    return f"{x:.{p}f}" if isinstance(x, (int, float)) else "n/a"

benches = {}
print()
sc = load(os.path.join(work, "stream_copy.json"))
benches["stream_copy_bandwidth"] = sc
print("Streaming copy (target: >= 90 % of 3350 GB/s)")
for r in (sc or {}).get("rows", []):
    print(f"  {r.get('candidate', '')} N={r['shape'].get('N')}: {fmt(r['achieved_gbs'], 0)} GB/s, {fmt(r['pct_peak_bandwidth'])} % of the "
          f"report's peak, {fmt(r['pct_of_nominal'])} % of 3350; clone {fmt(r['baseline_gbs'], 0)} GB/s  "
          f"{'ok' if r['meets_target'] else 'MISS'}")
if not sc:
    print("  not measured (see bench.log)")
tf = load(os.path.join(work, "timing_fidelity.json"))
benches["timing_fidelity"] = tf
print("Timing fidelity (target: |kforge - independent harness| <= 3 %)")
for r in (tf or {}).get("rows", []):
    if "error" in r:
        print(f"  {r['task']}: error: {r['error']}")
        continue
    shape = " ".join(f"{k}={v}" for k, v in r["shape"].items())
    print(f"  {r['task']} {r['candidate']} {shape}: harness {fmt(r['python_median_ms'], 4)} ms, kforge "
          f"{fmt(r['kforge_median_ms'], 4)} ms, diff {fmt(r['diff_pct'], 2)} %; torch {fmt(r['python_baseline_ms'], 4)} "
          f"vs {fmt(r['kforge_baseline_ms'], 4)} ms ({fmt(r['baseline_diff_pct'], 2)} %)  "
          f"{'ok' if r.get('within_target') else 'MISS'}")
if not tf:
    print("  not measured (see bench.log)")
vl = load(os.path.join(work, "verify_latency.json"))
benches["verify_latency"] = vl
print("Edit-to-verdict latency, optimized.cu (targets: warm <= 200 ms, first round <= 600 ms)")
for r in (vl or {}).get("rows", []):
    print(f"  {r['task']:<26} warm {fmt(r['warm_ms']):>7} ms (compile {fmt(r['compile_ms'])}, runner "
          f"{fmt(r['runner_ms'])}); first round {fmt(r.get('first_round_ms', r.get('e2e_ms')))} ms  {'ok' if r['meets_target'] else 'MISS'}")
if not vl:
    print("  not measured (see bench.log)")

bw = load(os.path.join(work, "bench_wall_time.json"))
benches["bench_wall_time"] = bw
print("kforge bench wall time, --time-cap-ms 1000 (promise: runner time <= N x cap + 3 s)")
for r in (bw or {}).get("rows", []):
    print(f"  {r['task']:<26} {r['shapes']:>2} shapes: wall {fmt(r['wall_s'], 2)} s, shapes {fmt(r['runner_shapes_s'], 2)} s, "
          f"other {fmt(r['overhead_s'], 2)} s; promise {fmt(r['promise_s'])} s  {'ok' if r['within'] else 'MISS'}"
          f"  unstable {r['unstable']}")
if not bw:
    print("  not measured (see bench.log)")

phases = {}
try:
    for line in open(os.path.join(work, "phases.txt")):
        k, v = line.split()
        phases[k] = int(v)
except OSError:
    pass
print()
print("time: " + ", ".join(f"{k} {v} s" for k, v in phases.items()) + f"; total {sum(phases.values())} s of {deadline} s")

env = ""
try:
    env = open(os.path.join(work, "environment.txt")).read()
except OSError:
    pass
doc = {"environment": env.splitlines(), "phases_s": phases,
       "tests": [{k: v for k, v in r.items() if k != "report"} for r in rows],
       "test_reports": {r["name"]: r["report"] for r in rows if r["report"]},
       "benchmarks": benches}
with open(json_out, "w") as f:
    json.dump(doc, f, indent=1)
PY
exit $status
