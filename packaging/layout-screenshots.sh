#!/usr/bin/env bash
# packaging/layout-screenshots.sh [out-dir] — the workbench as a first start sees it on three
# screens: 1280×800, 1920×1080 and 2560×1440 at HiDPI scale 2 (and 1920×1080 in the dark theme).
#
# Each shot is a fresh profile (no saved geometry, settings or workspace) on an Xvfb screen of
# that size, so the window takes its first-start place: 90 % of the screen, the editor in the
# middle (docs/workbench.md). Runs the built kernelforge's screenshot tour without a runner and
# keeps its first view as layout-<size>.png in out-dir (default docs/screenshots).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
me=layout-screenshots
out=${1:-$KF_ROOT/docs/screenshots}
app=${KF_KERNELFORGE:-$KF_ROOT/build/dev/app/gui/kernelforge}
[ -x "$app" ] || kf_die "$me" "$app missing: build it first (packaging/build.sh)"
command -v Xvfb >/dev/null || kf_die "$me" "Xvfb missing: apt install xvfb (packaging/setup.sh does)"
mkdir -p "$out"

shoot() { # name width height scale theme
  local name=$1 w=$2 h=$3 scale=$4 theme=$5
  local work display=:$((90 + RANDOM % 100))
  work=$(mktemp -d)
  mkdir -p "$work/config/KernelForge" "$work/run" && chmod 700 "$work/run"
  [ "$theme" = system ] || printf '[ui]\ntheme=%s\n' "$theme" >"$work/config/KernelForge/KernelForge.conf"
  Xvfb "$display" -screen 0 "${w}x${h}x24" -nolisten tcp >/dev/null 2>&1 &
  local xvfb=$!
  for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
  kf_log "$me" "$name: ${w}x${h}, scale $scale, theme $theme"
  DISPLAY=$display QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=$scale XDG_CONFIG_HOME="$work/config" \
    XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" XDG_RUNTIME_DIR="$work/run" \
    timeout 180 "$app" --no-runner --screenshot "$work/shots" >"$work/log" 2>&1 || true
  kill "$xvfb" 2>/dev/null || true
  wait "$xvfb" 2>/dev/null || true
  if [ -f "$work/shots/workbench.png" ]; then
    cp "$work/shots/workbench.png" "$out/$name.png"
    kf_log "$me" "saved $out/$name.png"
  else
    cat "$work/log" >&2
    rm -rf "$work"
    kf_die "$me" "$name: the tour saved no workbench.png"
  fi
  rm -rf "$work"
}

shoot layout-1280x800 1280 800 1 system
shoot layout-1920x1080 1920 1080 1 system
shoot layout-2560x1440-hidpi 2560 1440 2 system
shoot layout-1920x1080-dark 1920 1080 1 dark
