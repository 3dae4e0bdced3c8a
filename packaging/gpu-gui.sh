#!/usr/bin/env bash
# packaging/gpu-gui.sh [bundle.tar.xz] — the workbench end to end on the GPU server.
#
# Unpacks the bundle made by packaging/gui-bundle.sh on a development machine (the server has no
# Qt), points it at the kforge-runner built by packaging/gpu-server.sh, and
#   1. runs the screenshot tour with real runs: open the example workspace, break and fix a
#      kernel, then Verify (F5) and Benchmark (F6) through the real runner on the GPU, Promote,
#      edit, verify, benchmark and promote again (v2), show the registry's evidence, chart and
#      diff, saving a PNG of each view; then `kforge registry list` and `check` on that registry;
#   2. runs bench_ui --gpu: launch-to-interactive and the longest event-loop stall while
#      compiling the examples and verifying on the GPU.
# Output goes to $OUT/gui (default build/gpu-server/gpu-run/gui): the PNGs and gui.log.
# KF_THEME=dark (or light) runs the tour in that theme, into $OUT/gui-dark; KF_SKIP_BENCH_UI=1
# leaves out step 2.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
me=gpu-gui
bundle=${1:-$KF_ROOT/.carry/gui-bundle.tar.xz}
runner=${KF_RUNNER:-$KF_ROOT/build/gpu-server/app/cli/kforge-runner}
out=${OUT:-$KF_ROOT/build/gpu-server/gpu-run}/gui${KF_THEME:+-$KF_THEME}
[ -f "$bundle" ] || kf_die "$me" "$bundle missing: run packaging/gui-bundle.sh on a development machine and carry it here"
[ -x "$runner" ] || kf_die "$me" "$runner missing: build kforge-runner first (packaging/gpu-server.sh does)"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle"
# shellcheck source=/dev/null
. "$work/gui-bundle/env.sh"
export KF_RUNNER="$runner"
# A 1920×1080 screen rather than the offscreen platform's 800×600: the window takes its first-start
# place (90 % of the screen), which is what the README's screenshots show.
printf '{"screens":[{"name":"kf","x":0,"y":0,"width":%d,"height":%d,"logicalDpi":96,"logicalBaseDpi":96,"dpr":1}]}\n' \
  "${KF_SCREEN_W:-1920}" "${KF_SCREEN_H:-1080}" >"$work/screen.json"
export QT_QPA_PLATFORM="offscreen:configfile=$work/screen.json"
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" XDG_RUNTIME_DIR="$work/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
if [ -n "${KF_THEME:-}" ]; then
  mkdir -p "$XDG_CONFIG_HOME/KernelForge"
  printf '[ui]\ntheme=%s\n' "$KF_THEME" >"$XDG_CONFIG_HOME/KernelForge/KernelForge.conf"
fi
examples="$work/examples"  # a copy: the tour edits kernels and F5 saves before it runs
cp -r "$KF_ROOT/resources/examples" "$examples"
log="$out/gui.log"
: >"$log"
kf_log "$me" "screenshot tour with real runs (log: $log)"
timeout 300 kernelforge --screenshot "$out" --screenshot-run "$examples" 2>&1 | grep -v propagateSizeHints | tee -a "$log" || true
# What the tour promoted, checked by the CLI against the files and hashes.
kforge_bin=$(dirname "$runner")/kforge
if [ -x "$kforge_bin" ]; then
  kf_log "$me" "registry written by the workbench: list and check"
  { "$kforge_bin" registry list --registry "$XDG_DATA_HOME/KernelForge/registry"
    "$kforge_bin" registry check --registry "$XDG_DATA_HOME/KernelForge/registry"; echo "registry check exit $?"; } 2>&1 | tee -a "$log" || true
fi
if [ "${KF_SKIP_BENCH_UI:-0}" != 1 ]; then
  kf_log "$me" "bench_ui --gpu"
  timeout 240 bench_ui --gpu --runs 5 --kernelforge "$(command -v kernelforge)" --runner "$runner" --workspace "$examples" 2>&1 \
    | grep -v propagateSizeHints | tee -a "$log" || true
fi
ls -la "$out" | tee -a "$log"
