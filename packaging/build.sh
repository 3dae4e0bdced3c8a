#!/usr/bin/env bash
# packaging/build.sh [preset] — set up the machine, configure with a CMake preset, build with Ninja.
#
#   preset   one of CMakePresets.json's configure presets (dev, dev-asan, release); default dev.
#            The build lands in build/<preset>.
#
# Runs setup.sh first, passes the venv's LibTorch CMake package as CMAKE_PREFIX_PATH and, when
# KF_THIRD_PARTY_DIR is set, that folder of copied headers. Configure runs only when the build
# folder is new or those arguments changed (Ninja re-runs CMake itself when a CMakeLists.txt
# changes), so an up-to-date tree is a quick no-op.
# Environment: KF_THIRD_PARTY_DIR, KF_JOBS (parallel jobs, default nproc), CCACHE_DIR
# (default ~/.cache/kernelforge/ccache, shared by every clone; packaging/common.sh), KF_STAGE_LOG
# (where the setup, configure and build stages' times go; packaging/test.sh prints them).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=build
preset=${1:-dev}
jobs=${KF_JOBS:-$(nproc)}
bdir="$KF_ROOT/build/$preset"

kf_stage_begin setup
bash "$KF_PACKAGING/setup.sh"
kf_load_env
kf_stage_end setup

# KF_THIRD_PARTY_DIR is always passed, empty when unset, so that unsetting it takes effect.
configure_args=(--preset "$preset" "-DCMAKE_PREFIX_PATH=$KF_TORCH_CMAKE_PREFIX"
                "-DKF_THIRD_PARTY_DIR=${KF_THIRD_PARTY_DIR:-}")

# The arguments of the last successful configure, so a change (another venv, a third-party
# folder) configures again.
stamp="$bdir/.kf-configure-args"
want=$(printf '%s\n' "${configure_args[@]}")
cd "$KF_ROOT"
kf_stage_begin configure
if [ -f "$bdir/build.ninja" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  kf_log "$me" "configure: build/$preset is configured"
else
  kf_log "$me" "configure: cmake ${configure_args[*]}"
  rm -f "$stamp"
  cmake "${configure_args[@]}"
  printf '%s\n' "$want" >"$stamp"
fi
kf_stage_end configure

kf_log "$me" "ninja -C build/$preset -j $jobs"
kf_stage_begin build
ninja -C "$bdir" -j "$jobs"
kf_stage_end build
kf_log "$me" ok
