#!/usr/bin/env bash
# packaging/setup.sh — prepare a Debian 12 / Ubuntu development machine for KernelForge.
#
#   1. apt: compilers, CMake, Ninja, ccache, Qt 6 (+Charts, OpenGL, tools), QScintilla,
#      nlohmann/json, CLI11, xxHash, Xvfb and a font. Skipped when dpkg-query finds them all.
#      Uses sudo only when not root (non-interactively under CI or without a terminal).
#   2. <repo>/.venv with the pins in packaging/python-requirements.txt, installed --no-deps (a new
#      clone links it to a venv shared by every clone with the same pins, under ~/.cache/kernelforge):
#      LibTorch (torch 2.11.0 without its multi-GB CUDA wheels), nvdisasm and cuobjdump.
#      Skipped when every pin is already installed.
#   3. build/kf-env.sh: where the LibTorch CMake package, nvdisasm and cuobjdump are, for the
#      other scripts (build.sh passes the first to CMake; run.sh and test.sh export the rest).
#
# Idempotent; a second run takes well under a second. Prints one line per step, then "setup: ok";
# what apt and pip print goes to build/setup-logs/ (shown when they fail).
# Environment: KF_PYTHON (interpreter for the venv, default python3).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=setup
requirements="$KF_PACKAGING/python-requirements.txt"
logdir="$KF_ROOT/build/setup-logs"

# quietly <name> <command...>: run it with its output in build/setup-logs/<name>.log, so a step
# stays one line; on failure show the log's tail and stop.
quietly() {
  local log="$logdir/$1.log"
  shift
  mkdir -p "$logdir"
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    kf_die "$me" "failed: $* (full output: ${log#"$KF_ROOT"/})"
  fi
}

# --- 1. system packages ------------------------------------------------------------------------
apt_packages=(
  build-essential cmake ninja-build ccache
  lld                     # the linker (cmake/KfCompilerSetup.cmake): most of a warm build is linking
  qt6-base-dev qt6-charts-dev qt6-tools-dev
  libqt6opengl6-dev       # Qt6Charts' CMake package needs Qt6OpenGL(Widgets); only "recommended"
  libqscintilla2-qt6-dev libxkbcommon-dev
  nlohmann-json3-dev libcli11-dev libxxhash-dev
  libdtl-dev              # the registry browser's source diff (header-only Myers diff)
  libzip-dev              # .cast packages: the zip archives kforge cast export writes and checks
  libcurl4-openssl-dev    # HTTP(S) to language models: kernel synthesis (engine/synth)
  libyaml-cpp-dev         # YAML: skill front matter and GPU MODE task.yml (engine/agent)
  libpugixml-dev          # XML: compute-sanitizer's reports (engine/sanitize)
  bubblewrap              # bwrap: `kforge import` runs a problem's Python without network or your files (engine/core/Sandbox)
  python3-numpy           # tests only: NumPy reads the .npy tensor files we write, and we read its
  libgl-dev
  xvfb xauth fonts-dejavu-core   # headless GUI runs and screenshots
  dbus-daemon                    # a private bus for tst_theme's scripted desktop portal
  clang-14 libclang-rt-14-dev llvm-14   # tests only: libFuzzer, ASan + UBSan and the symbolizer (tests/fuzz)
  help2man dpkg-dev       # the package: kforge.1 from kforge --help; dpkg-shlibdeps for its Depends
  desktop-file-utils appstream libxml2-utils librsvg2-bin   # tests only: the desktop files (label package)
)
python=${KF_PYTHON:-python3}
# A new clone shares one venv per set of pins: <cache>/kernelforge/venv/<hash of the pins and the
# interpreter>, linked as <repo>/.venv, so its setup is a link, not a 770 MB install. A .venv
# that is already there (a folder or a link) is used as it is. KF_VENV_DIR overrides the folder.
if [ ! -e "$KF_VENV" ] && [ ! -L "$KF_VENV" ] && command -v "$python" >/dev/null 2>&1; then
  pins_key=$( { cat "$requirements"; "$python" -c 'import sys; print(sys.version, sys.executable)'; } | sha256sum | cut -c1-16)
  shared_venv=${KF_VENV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kernelforge/venv/$pins_key}
  mkdir -p "$(dirname "$shared_venv")"
  ln -s "$shared_venv" "$KF_VENV"
  kf_log "$me" "venv: $KF_VENV -> $shared_venv (shared by every clone with these pins)"
fi
vpy="$KF_VENV/bin/python"
need_venv=0
"$vpy" -c '' >/dev/null 2>&1 || need_venv=1
if [ $need_venv -eq 1 ]; then
  if ! command -v "$python" >/dev/null 2>&1; then
    apt_packages+=(python3 python3-venv)
  elif ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    apt_packages+=(python3-venv)   # Debian's python3 splits venv/ensurepip out
  fi
fi

command -v dpkg-query >/dev/null 2>&1 ||
  kf_die "$me" "dpkg-query not found: this script supports Debian and Ubuntu; install the packages listed in ${BASH_SOURCE[0]} by hand"

installed=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${apt_packages[@]}" 2>/dev/null |
            awk '$1 == "ii" { print $2 }') || true
missing=()
for p in "${apt_packages[@]}"; do
  grep -qxF "$p" <<<"$installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  kf_log "$me" "apt: all ${#apt_packages[@]} packages already installed"
else
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      kf_die "$me" "not root and no sudo: install as root: apt-get install ${missing[*]}"
    if [ -n "${CI:-}" ] || [ ! -t 0 ]; then sudo=(sudo -n); else sudo=(sudo); fi
  fi
  kf_log "$me" "apt: installing ${#missing[@]} packages: ${missing[*]}"
  quietly apt-update "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q update
  quietly apt-install "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -q install -y --no-install-recommends "${missing[@]}"
fi

# --- 2. Python venv ----------------------------------------------------------------------------
if [ $need_venv -eq 1 ]; then
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    kf_die "$me" "$python is $("$python" --version 2>&1); torch 2.11 needs Python >= 3.10 (set KF_PYTHON)"
  kf_log "$me" "venv: creating $KF_VENV with $("$python" --version 2>&1)"
  "$python" -m venv --clear "$(readlink -f "$KF_VENV")"
else
  kf_log "$me" "venv: $KF_VENV exists"
fi

# Prints the pins from the requirements file that the venv does not satisfy, one per line.
unmet_pins() {
  "$vpy" - "$requirements" <<'PY'
import sys
from importlib import metadata
for line in open(sys.argv[1]):
    pin = line.split("#", 1)[0].strip()
    if not pin:
        continue
    name, want = pin.split("==")
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        have = None
    if have is None or have.split("+")[0] != want:
        print(pin)
PY
}

unmet=$(unmet_pins)
if [ -z "$unmet" ]; then
  kf_log "$me" "pip: all pins in packaging/python-requirements.txt already installed"
else
  size_hint=""
  grep -q '^torch==' <<<"$unmet" && size_hint=" (torch and its 3 CUDA libraries: ~770 MB download)"
  kf_log "$me" "pip: installing $(wc -l <<<"$unmet") pinned packages --no-deps$size_hint"
  quietly pip "$vpy" -m pip install --disable-pip-version-check --no-input --progress-bar off \
    --no-deps -r "$requirements"
  unmet=$(unmet_pins)
  [ -z "$unmet" ] || kf_die "$me" "pip finished but these pins are still unmet: $unmet"
  # Not needed by the build (CMake reads torch/share/cmake directly), but say whether it works.
  if "$vpy" -W ignore -c 'import torch' >/dev/null 2>&1; then
    kf_log "$me" "pip: import torch works without the CUDA wheels"
  else
    kf_log "$me" "pip: warning: 'import torch' fails in the venv (LibTorch for CMake is still there)"
  fi
fi

# --- 3. record where things are ----------------------------------------------------------------
site=""
for d in "$KF_VENV"/lib/python3*/site-packages; do site=$d; done
torch_cmake="$site/torch/share/cmake"
[ -f "$torch_cmake/Torch/TorchConfig.cmake" ] ||
  kf_die "$me" "no Torch CMake package at $torch_cmake; delete $KF_VENV and run again"

# find_tool <name>: the wheel's binary (nvidia/cu13/bin/<name> today; searched if that moves).
find_tool() {
  local known="$site/nvidia/cu13/bin/$1"
  if [ -x "$known" ]; then
    printf '%s\n' "$known"
  else
    find "$site/nvidia" -path "*/bin/$1" -type f -perm -u+x 2>/dev/null | head -n 1
  fi
}
nvdisasm=$(find_tool nvdisasm)
cuobjdump=$(find_tool cuobjdump)
if [ -z "$nvdisasm" ] || [ -z "$cuobjdump" ]; then
  kf_die "$me" "nvdisasm/cuobjdump missing from the venv; delete $KF_VENV and run again"
fi

mkdir -p "$(dirname "$KF_ENV_FILE")"
# shellcheck disable=SC2016  # the ${...} are for the file, not expanded now
new_env=$(
  echo "# Written by packaging/setup.sh; sourced by build.sh, run.sh and test.sh. Do not edit."
  echo "# A variable already set in the environment wins."
  printf 'export KF_TORCH_CMAKE_PREFIX=%q\n' "$torch_cmake"
  printf 'if [ -z "${KF_NVDISASM:-}" ]; then export KF_NVDISASM=%q; fi\n' "$nvdisasm"
  printf 'if [ -z "${KF_CUOBJDUMP:-}" ]; then export KF_CUOBJDUMP=%q; fi\n' "$cuobjdump"
)
if [ ! -f "$KF_ENV_FILE" ] || [ "$(cat "$KF_ENV_FILE")" != "$new_env" ]; then
  printf '%s\n' "$new_env" >"$KF_ENV_FILE.tmp"
  mv "$KF_ENV_FILE.tmp" "$KF_ENV_FILE"
fi
kf_log "$me" "env: ${KF_ENV_FILE#"$KF_ROOT"/} (torch CMake: ${torch_cmake#"$KF_ROOT"/}; nvdisasm: ${nvdisasm#"$KF_ROOT"/})"
kf_log "$me" ok
