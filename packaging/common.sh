# shellcheck shell=bash
# packaging/common.sh — shared by the packaging scripts; source it, do not run it.
#
# Defines KF_ROOT (the repository root, wherever the caller's cwd is), KF_ENV_FILE (written by
# setup.sh: venv, LibTorch CMake package, nvdisasm/cuobjdump), a one-line logger and the
# ccache location. Everything here is cheap: no network, no package manager.

# shellcheck disable=SC2034  # used by the scripts that source this file
KF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KF_PACKAGING="$KF_ROOT/packaging"
KF_VENV="$KF_ROOT/.venv"
KF_ENV_FILE="$KF_ROOT/build/kf-env.sh"

# kf_log <script> <message>: one line per step, prefixed with the script's name.
kf_log() {
  printf '%s: %s\n' "$1" "$2"
}

# kf_die <script> <message>: print to stderr and stop.
kf_die() {
  printf '%s: error: %s\n' "$1" "$2" >&2
  exit 1
}

# kf_load_env: export what setup.sh recorded (KF_TORCH_CMAKE_PREFIX, KF_NVDISASM, KF_CUOBJDUMP).
# A value the user already exported wins over the recorded one.
kf_load_env() {
  [ -f "$KF_ENV_FILE" ] || kf_die kf "$KF_ENV_FILE is missing: run packaging/setup.sh"
  # shellcheck source=/dev/null
  . "$KF_ENV_FILE"
}

# Stage timing. A script marks where each stage begins and ends; when KF_STAGE_LOG names a file
# (packaging/test.sh sets it), the marks go there as "begin <stage> <epoch s>" and
# "end <stage> <epoch s> <exit status>". A stage that has a begin and no end stopped the script
# (set -e): the reader takes its end as the time it found out.
kf_stage_begin() {
  [ -z "${KF_STAGE_LOG:-}" ] || printf 'begin %s %s\n' "$1" "${EPOCHREALTIME/,/.}" >>"$KF_STAGE_LOG"
}
# kf_stage_end <stage> [exit status, default 0]
kf_stage_end() {
  [ -z "${KF_STAGE_LOG:-}" ] || printf 'end %s %s %s\n' "$1" "${EPOCHREALTIME/,/.}" "${2:-0}" >>"$KF_STAGE_LOG"
}

# The compiler cache lives outside the clone, so a fresh clone on a machine that has built the
# project before compiles from the cache: paths are hashed relative to the clone (base_dir) and
# the build folder's own path is left out of the hash (hash_dir), so clones in different folders
# share entries; a path of the clone inside a -D string is not rewritten, so none may be on a
# compile line that many files share (docs/test-loop.md). Each variable is the user's to override.
export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kernelforge/ccache}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$KF_ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
# pip's download cache is outside the clone too (pip's default, ~/.cache/pip), so a second clone's
# setup installs the pinned wheels without downloading them again.
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}"
