#!/usr/bin/env bash
# tests/gpu/sanitizer_probe/probe2.sh OUTDIR — second probe: a race that is usually right, whether
# shared memory keeps a poison pattern across launches, and LibTorch's start-up under each tool.
set -uo pipefail
out=${1:?OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
san=$(command -v compute-sanitizer || echo "$cuda/bin/compute-sanitizer")
nvcc=$(command -v nvcc || echo "$cuda/bin/nvcc")
cd "$here"
bins=$(mktemp -d)
for n in smem_race_volatile smem_poison; do "$nvcc" -O2 -lineinfo -arch=sm_90 -o "$bins/$n" "$n.cu" || echo "build $n failed"; done
"$bins/smem_race_volatile"
"$san" --tool racecheck --xml --save "$out/smem_race_volatile.racecheck.xml" --error-exitcode 86 "$bins/smem_race_volatile" > "$out/srv.txt" 2>&1; echo "racecheck volatile rc=$?"; head -5 "$out/srv.txt"
"$bins/smem_poison"
"$bins/smem_poison"
for tool in memcheck racecheck initcheck synccheck; do
  t0=$(date +%s%N)
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 "$san" --tool $tool --error-exitcode 86 --kernel-name kne=nomatch \
    python3 -c "import torch; x=torch.randn(1024,1024,device='cuda'); print(float((x@x).sum()))" > "$out/torch.$tool.txt" 2>&1
  rc=$?; t1=$(date +%s%N)
  echo "torch $tool filtered rc=$rc $(( (t1 - t0) / 1000000 ))ms $(tail -2 "$out/torch.$tool.txt" | tr '\n' '|')"
done
t0=$(date +%s%N)
python3 -c "import torch; x=torch.randn(1024,1024,device='cuda'); print(float((x@x).sum()))"
t1=$(date +%s%N); echo "torch plain $(( (t1 - t0) / 1000000 ))ms"
