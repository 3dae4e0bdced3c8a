#!/bin/sh
# Installed as <prefix>/libexec/kernelforge/kforge-runner and .../kforge-cast (cmake/KfPackage.cmake):
# finds LibTorch, then runs the real program <name>.bin beside it with LibTorch on the loader's
# path. The programs carry no path to LibTorch: it is wherever the user put it (docs/packaging.md).
#
# Where LibTorch is: $KF_LIBTORCH_DIR, else the first line of /etc/kernelforge/libtorch (written by
# kernelforge-setup-libtorch): a folder holding libtorch.so, i.e. a torch wheel's torch/lib.
# Exit 3 (the machine cannot do it, as kforge's exit codes say) with one sentence when it is missing.
set -eu
self=$(readlink -f "$0")
name=${self##*/}
here=${self%/*}
conf=${KF_LIBTORCH_CONFIG:-/etc/kernelforge/libtorch}
setup="run 'sudo kernelforge-setup-libtorch' to install the pinned torch 2.11.0, or write the folder that holds libtorch.so (a torch wheel's torch/lib) into $conf or \$KF_LIBTORCH_DIR"

dir=${KF_LIBTORCH_DIR:-}
from="\$KF_LIBTORCH_DIR"
if [ -z "$dir" ]; then
  if [ ! -r "$conf" ]; then
    echo "$name: LibTorch is not set up: $conf does not exist and \$KF_LIBTORCH_DIR is not set; $setup." >&2
    exit 3
  fi
  dir=$(sed -n '/^[[:space:]]*[^#[:space:]]/{s/^[[:space:]]*//;s/[[:space:]]*$//;p;q;}' "$conf")
  from=$conf
  if [ -z "$dir" ]; then
    echo "$name: LibTorch is not set up: $conf names no folder; $setup." >&2
    exit 3
  fi
fi
if [ ! -f "$dir/libtorch.so" ]; then
  echo "$name: LibTorch not found: $dir (from $from) holds no libtorch.so; $setup." >&2
  exit 3
fi

# The CUDA libraries LibTorch and the program need (libcudart, cuBLAS, cuDNN, ...) come from the
# wheel's nvidia/*/lib folders beside torch/ when pip installed them, else from a CUDA toolkit,
# whose folder goes last so a wheel's copy wins. The program itself links libcudart, and the
# loader looks for a program's libraries on its own path, not on LibTorch's RUNPATH.
path=$dir
for wheel in "$dir"/../../nvidia/*/lib; do
  [ -d "$wheel" ] && path="$path:$(cd "$wheel" && pwd)"
done
cuda=${CUDA_HOME:-/usr/local/cuda}/lib64
[ -d "$cuda" ] && path="$path:$cuda"
LD_LIBRARY_PATH="$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$here/$name.bin" "$@"
