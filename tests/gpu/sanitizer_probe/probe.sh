#!/usr/bin/env bash
# tests/gpu/sanitizer_probe/probe.sh OUTDIR — on a GPU machine: build the defect programs here with
# nvcc -lineinfo, run each under every compute-sanitizer tool with XML output, and keep the XML,
# exit codes and timings (the fixtures of tst_sanitizer come from such a run). Also records the
# tool's version and options, and whether sshd and srun exist.
set -uo pipefail
out=${1:?OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cuda=${CUDA_HOME:-/usr/local/cuda}
san=$(command -v compute-sanitizer || echo "$cuda/bin/compute-sanitizer")
nvcc=$(command -v nvcc || echo "$cuda/bin/nvcc")
{
  echo "== version"; "$san" --version
  echo "== which"; command -v sshd srun ssh || true; ls /usr/sbin/sshd 2>&1
  echo "== nvidia-smi -L"; nvidia-smi -L
  echo "== help"; "$san" --help
  echo "== help racecheck/initcheck/synccheck"; "$san" --tool racecheck --help 2>&1 | grep -iE "race|init|sync|kernel|xml|save|launch" | head -60
} > "$out/env.txt" 2>&1
cd "$here"
bins=$(mktemp -d)
for f in *.cu; do
  n=${f%.cu}
  "$nvcc" -O2 -lineinfo -arch=sm_90 -o "$bins/$n" "$f" >> "$out/build.txt" 2>&1 || echo "build $n failed" >> "$out/build.txt"
done
: > "$out/runs.txt"
for n in clean smem_race uninit_smem uninit_global oob_read divergent_sync; do
  for tool in memcheck racecheck initcheck synccheck; do
    t0=$(date +%s%N)
    timeout 120 "$san" --tool "$tool" --xml --save "$out/$n.$tool.xml" --print-limit 100 --error-exitcode 86 \
      --launch-timeout 60 "$bins/$n" > "$out/$n.$tool.stdout" 2>&1
    rc=$?
    t1=$(date +%s%N)
    printf '%s %s rc=%s %sms :: %s\n' "$n" "$tool" "$rc" "$(( (t1 - t0) / 1000000 ))" "$(tr '\n' '|' < "$out/$n.$tool.stdout" | cut -c1-300)" >> "$out/runs.txt"
  done
done
# Which name does --kernel-name match: the mangled one or the demangled one?
for pat in "regex:^shift_add" "regex:^_Z9shift_add" "kns=shift_add" "regex:shift_add"; do
  "$san" --tool memcheck --error-exitcode 86 --kernel-name "$pat" "$bins/oob_read" > "$out/filter.stdout" 2>&1
  echo "filter $pat rc=$?" >> "$out/runs.txt"
done
# racecheck's full hazard report, for the format
"$san" --tool racecheck --racecheck-report all --xml --save "$out/smem_race.racecheck-all.xml" "$bins/smem_race" > /dev/null 2>&1
echo "racecheck-all rc=$?" >> "$out/runs.txt"
# LibTorch under the sanitizer: start-up cost with every kernel filtered out, and with the caching allocator off.
for tool in memcheck racecheck initcheck; do
  t0=$(date +%s%N)
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 "$san" --tool $tool --error-exitcode 86 --kernel-name regex:^nomatch$ \
    python3 -c "import torch; x=torch.randn(4096,4096,device='cuda'); print(float((x@x).sum()))" > "$out/torch.$tool.stdout" 2>&1
  rc=$?
  t1=$(date +%s%N)
  printf 'torch %s filtered rc=%s %sms\n' "$tool" "$rc" "$(( (t1 - t0) / 1000000 ))" >> "$out/runs.txt"
done
t0=$(date +%s%N)
timeout 200 python3 -c "import torch; x=torch.randn(4096,4096,device='cuda'); print(float((x@x).sum()))" > /dev/null 2>&1
t1=$(date +%s%N)
printf 'torch plain %sms\n' "$(( (t1 - t0) / 1000000 ))" >> "$out/runs.txt"
cat "$out/runs.txt"
