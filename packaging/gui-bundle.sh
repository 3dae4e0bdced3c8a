#!/usr/bin/env bash
# packaging/gui-bundle.sh [build_dir] [out_file] — pack the workbench for a machine without Qt.
#
# The GPU server has no Qt (docs/gpu-validation.md), so its end-to-end GUI check runs a bundle made
# here: kernelforge and bench_ui (stripped), every shared library they and Qt's offscreen
# platform plugin load (found with ldd; glibc and the C++ runtime are left to the host, which has
# newer ones), the plugin, DejaVu fonts with a fonts.conf, and env.sh that points the loader,
# Qt and fontconfig at them. Written as one tar.xz (default .carry/gui-bundle.tar.xz, ignored by
# git) for packaging/gpu-gui.sh to unpack and run with QT_QPA_PLATFORM=offscreen.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
me=gui-bundle
bdir=${1:-$KF_ROOT/build/dev}
out=${2:-$KF_ROOT/.carry/gui-bundle.tar.xz}
for b in app/gui/kernelforge tests/bench/bench_ui; do
  [ -x "$bdir/$b" ] || kf_die "$me" "$bdir/$b not built: cmake --build $bdir --target kernelforge bench_ui"
done
plugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/gui-bundle"
mkdir -p "$root/bin" "$root/lib" "$root/plugins/platforms" "$root/fonts"
strip -o "$root/bin/kernelforge" "$bdir/app/gui/kernelforge"
strip -o "$root/bin/bench_ui" "$bdir/tests/bench/bench_ui"
cp "$plugins/platforms/libqoffscreen.so" "$root/plugins/platforms/"
# Libraries the host provides itself (and must: they are tied to its kernel and compiler).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libgcc_s\.so|libstdc\+\+\.so)'
for f in "$root/bin/kernelforge" "$root/bin/bench_ui" "$root/plugins/platforms/libqoffscreen.so"; do
  ldd "$f" | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] && continue
  cp -L "$path" "$root/lib/$name"
done
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf \
   /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf "$root/fonts/"
cat >"$root/fonts.conf" <<'CONF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir prefix="relative">fonts</dir>
  <cachedir>/tmp/kernelforge-fontconfig-cache</cachedir>
</fontconfig>
CONF
cat >"$root/env.sh" <<'ENV'
# Source me: the bundle's libraries, Qt plugin and fonts first.
KF_BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$KF_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_PLUGIN_PATH="$KF_BUNDLE/plugins"
export QT_QPA_PLATFORM=offscreen
export FONTCONFIG_FILE="$KF_BUNDLE/fonts.conf"
export PATH="$KF_BUNDLE/bin:$PATH"
ENV
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" gui-bundle
kf_log "$me" "$(du -h "$out" | cut -f1) in $out ($(ls "$root/lib" | wc -l) libraries)"
