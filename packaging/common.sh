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

# Compiler cache under the repo's build/ unless the user chose one.
export CCACHE_DIR="${CCACHE_DIR:-$KF_ROOT/build/.ccache}"
