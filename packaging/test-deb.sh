#!/usr/bin/env bash
# packaging/test-deb.sh [kernelforge_*.deb] — the package on a clean Debian 12: run by hand, as
# root, with network (Debian's mirror). Default: the newest build/package/kernelforge_*.deb.
#
#   1. mmdebstrap: a minimal bookworm root (variant apt) in a temporary folder.
#   2. `apt install ./kernelforge_*.deb` there: apt resolves the declared Depends from the mirror;
#      every program's libraries then resolve (ldd), LibTorch's excepted.
#   3. The missing-LibTorch sentence of the installed runner and kforge-cast launchers, and of
#      `kforge verify` through the runner; kforge compile's sentence when NVRTC is missing.
#   4. With this machine's CUDA toolkit (/usr/local/cuda, bind-mounted read-only: the package loads
#      NVRTC at run time and depends on no CUDA package): `kforge compile` of an installed example,
#      and the installed `kernelforge --screenshot` tour under xvfb-run (xvfb and xauth installed
#      after the package) on the bundled examples; its workbench.png becomes
#      docs/screenshots/installed-deb.png.
#   5. `apt purge kernelforge`: no file that `dpkg -L` listed remains, nor /etc/kernelforge.
# Prints a summary; exits 1 on any failure. KF_KEEP_ROOT=1 keeps the root for a look.
# Environment: KF_DEBIAN_MIRROR (default http://deb.debian.org/debian), KF_CUDA_HOME
# (default /usr/local/cuda).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=test-deb
deb=${1:-$(ls -t "$KF_ROOT"/build/package/kernelforge_*.deb 2>/dev/null | head -n 1 || true)}
[ -n "$deb" ] && [ -f "$deb" ] || kf_die "$me" "no package: run packaging/package.sh, or pass the .deb"
deb=$(readlink -f "$deb")
[ "$(id -u)" -eq 0 ] || kf_die "$me" "needs root (mmdebstrap, chroot, mounts): sudo $0 $*"
command -v mmdebstrap >/dev/null 2>&1 || kf_die "$me" "mmdebstrap not found: apt-get install mmdebstrap"
mirror=${KF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cuda=${KF_CUDA_HOME:-/usr/local/cuda}

work=$(mktemp -d /tmp/kf-test-deb.XXXXXX)
root="$work/root"
logs="$work/logs"
mkdir -p "$logs"
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  if [ "${KF_KEEP_ROOT:-0}" = 1 ]; then kf_log "$me" "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

passed=()
step_start=$SECONDS
pass() { passed+=("$1 ($((SECONDS - step_start)) s)"); kf_log "$me" "pass: $1 ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
fail() { kf_die "$me" "FAILED: $1"; }
# quietly <log> <command...>: output to $logs/<log>.log, its tail shown on failure.
quietly() {
  local log="$logs/$1.log"
  shift
  if ! "$@" >"$log" 2>&1; then tail -n 30 "$log" >&2; return 1; fi
}
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}
mount_in() { # mount_in <mount options...> <source> <target inside root>
  local target="$root${*: -1}"
  mkdir -p "$target"
  mount "${@:1:$#-1}" "$target"
  mounts+=("$target")
}

# --- 1. a clean bookworm ---------------------------------------------------------------------
kf_log "$me" "mmdebstrap: bookworm (variant apt) from $mirror"
quietly mmdebstrap mmdebstrap --variant=apt --include=ca-certificates bookworm "$root" \
  "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
  "deb ${mirror%/debian}/debian-security bookworm-security main" ||
  fail "mmdebstrap could not make a bookworm root (is $mirror reachable?)"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount_in -t proc proc /proc
mount_in -t sysfs sys /sys
mount_in --bind /dev /dev
mount_in --bind /dev/pts /dev/pts
base_packages=$(in_root dpkg-query -W -f='.\n' | wc -l)
pass "clean Debian 12 root: $base_packages packages"

# --- 2. install with apt ---------------------------------------------------------------------
cp "$deb" "$root/tmp/"
name=$(basename "$deb")
quietly apt-update in_root apt-get -q update || fail "apt-get update in the root"
quietly apt-install in_root sh -c "cd /tmp && apt-get -q install -y ./$name" ||
  fail "apt install ./$name (log above: a Depends apt cannot satisfy?)"
pulled=$(grep -c '^Setting up ' "$logs/apt-install.log" || true)
in_root dpkg -L kernelforge | sort >"$work/files"
in_root sh -c 'for f in $(dpkg -L kernelforge); do [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"; done' >"$work/plain-files"
pass "apt install ./$name: $pulled packages set up, $(wc -l <"$work/plain-files") files of kernelforge"

missing=$(in_root sh -c 'for f in /usr/bin/kernelforge /usr/bin/kforge /usr/libexec/kernelforge/*.bin; do
  ldd "$f" | sed -n "s|^\t*\([^ ]*\) => not found|$f: \1|p"; done' | grep -Ev ': lib(torch|c10|cuda|cudart|nvrtc|cupti|nvToolsExt|cublas|cudnn|kineto|gomp-|shm)[^ ]*$' || true)
[ -z "$missing" ] || fail "libraries the Depends did not bring: $missing"
in_root kforge --version >"$logs/version.log" 2>&1 || fail "kforge --version: $(cat "$logs/version.log")"
pass "every library resolves but LibTorch's; $(cat "$logs/version.log")"

# --- 3. the sentences when LibTorch or NVRTC is missing ----------------------------------------
expect_sentence() { # expect_sentence <label> <exit code> <text...> -- <command...>
  local label=$1 want=$2
  shift 2
  local texts=()
  while [ "$1" != -- ]; do texts+=("$1"); shift; done
  shift
  local out rc=0
  out=$(in_root "$@" 2>&1) || rc=$?
  [ "$rc" = "$want" ] || fail "$label: exit $rc, expected $want; it said: $out"
  for t in "${texts[@]}"; do
    grep -qF -- "$t" <<<"$out" || fail "$label: its message lacks \"$t\"; it said: $out"
  done
  printf '%s\n' "$out" | tail -n 1 >"$logs/$label.txt"
}
expect_sentence runner-no-config 3 /etc/kernelforge/libtorch KF_LIBTORCH_DIR kernelforge-setup-libtorch -- \
  /usr/libexec/kernelforge/kforge-runner
expect_sentence cast-no-config 3 /etc/kernelforge/libtorch kernelforge-setup-libtorch -- /usr/libexec/kernelforge/kforge-cast run x.cast
mkdir -p "$root/etc/kernelforge"
echo /opt/no-torch-here >"$root/etc/kernelforge/libtorch"
expect_sentence runner-bad-config 3 "/opt/no-torch-here (from /etc/kernelforge/libtorch) holds no libtorch.so" -- \
  /usr/libexec/kernelforge/kforge-runner
expect_sentence runner-bad-env 3 "/nowhere (from \$KF_LIBTORCH_DIR) holds no libtorch.so" -- \
  env KF_LIBTORCH_DIR=/nowhere /usr/libexec/kernelforge/kforge-runner
expect_sentence compile-no-nvrtc 3 libnvrtc -- kforge compile /usr/share/kernelforge/examples/vector_add --arch sm_90
in_root kernelforge-setup-libtorch --help >/dev/null || fail "kernelforge-setup-libtorch --help"
pass "missing LibTorch: one sentence from the runner and kforge-cast launchers; missing NVRTC: kforge compile says so"

# --- 4. with a CUDA toolkit: kforge compile and the workbench ----------------------------------
if [ -f "$cuda/lib64/libnvrtc.so" ] || ls "$cuda"/lib64/libnvrtc.so.* >/dev/null 2>&1; then
  mount_in --bind -o ro "$(readlink -f "$cuda")" /usr/local/cuda
  # What the toolkit's installer does (/etc/ld.so.conf.d/*cuda*.conf): NVRTC opens its builtins
  # library by name.
  echo /usr/local/cuda/lib64 >"$root/etc/ld.so.conf.d/zz-kf-test-cuda.conf"
  in_root ldconfig
  out=$(in_root kforge compile /usr/share/kernelforge/examples/vector_add --arch sm_90 2>&1) ||
    fail "kforge compile of the installed vector_add: $out"
  printf '%s\n' "$out" >"$logs/compile.txt"
  # verify compiles first (NVRTC), then starts the runner: its sentence must reach the user.
  expect_sentence verify-no-torch 3 kernelforge-setup-libtorch -- kforge verify /usr/share/kernelforge/examples/vector_add
  pass "kforge compile /usr/share/kernelforge/examples/vector_add --arch sm_90: $(grep -c 'registers' <<<"$out" || true) builds reported"
else
  kf_log "$me" "no CUDA toolkit at $cuda: kforge compile and the workbench's compile panels are not exercised"
fi

quietly apt-x in_root apt-get -q install -y --no-install-recommends xvfb xauth fonts-dejavu-core ||
  fail "apt install xvfb xauth"
quietly screenshot in_root timeout 600 xvfb-run -a -s "-screen 0 1600x1000x24" \
  kernelforge --no-runner --screenshot /tmp/kf-shots || fail "kernelforge --screenshot under xvfb-run"
[ -s "$root/tmp/kf-shots/workbench.png" ] || fail "the tour saved no workbench.png: $(tail -n 5 "$logs/screenshot.log")"
[ -f "$root/root/.local/share/KernelForge/KernelForge/examples/vector_add/task.json" ] ||
  fail "the workbench did not copy the installed examples to ~/.local/share/KernelForge/KernelForge/examples"
mkdir -p "$KF_ROOT/docs/screenshots"
cp "$root/tmp/kf-shots/workbench.png" "$KF_ROOT/docs/screenshots/installed-deb.png"
pass "kernelforge --screenshot under xvfb-run: $(ls "$root/tmp/kf-shots" | wc -l) pictures, workbench.png kept as docs/screenshots/installed-deb.png"
if [ "${mounts[-1]}" = "$root/usr/local/cuda" ]; then
  umount "$root/usr/local/cuda"
  unset 'mounts[-1]'
  rm -f "$root/etc/ld.so.conf.d/zz-kf-test-cuda.conf"
  in_root ldconfig
fi

# --- 5. purge --------------------------------------------------------------------------------
quietly purge in_root apt-get -q purge -y kernelforge || fail "apt purge kernelforge"
left=$(while read -r f; do [ -e "$root$f" ] && echo "$f"; done <"$work/plain-files" || true)
[ -z "$left" ] || fail "files of the package left after purge: $left"
for d in /usr/share/kernelforge /usr/libexec/kernelforge /etc/kernelforge; do
  [ ! -e "$root$d" ] || fail "$d is left after purge"
done
in_root dpkg-query -W -f='${db:Status-Abbrev}' kernelforge 2>/dev/null | grep -q '^ii' && fail "dpkg still lists kernelforge"
pass "apt purge kernelforge: none of its $(wc -l <"$work/plain-files") files, /usr/share/kernelforge, /usr/libexec/kernelforge or /etc/kernelforge left"

echo
echo "$me: summary for $name ($(du -h "$deb" | cut -f1))"
for p in "${passed[@]}"; do echo "  pass: $p"; done
echo "  runner without LibTorch: $(cat "$logs/runner-no-config.txt")"
echo "$me: ok"
