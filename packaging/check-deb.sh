#!/usr/bin/env bash
# packaging/check-deb.sh <kernelforge_*.deb> — static checks of a built package, no install:
# its control fields (Depends names the Debian libraries and nothing of LibTorch or CUDA), the
# files of the layout (docs/packaging.md), programs stripped and without a RUNPATH (LibTorch is
# found at run time, never at the build machine's venv), the man page renders and lists the
# subcommands, and the desktop files validate. Prints one line per check; exits 1 on the first
# failure. package.sh runs it after cpack.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=check-deb
deb=${1:?usage: check-deb.sh <kernelforge_*.deb>}
[ -f "$deb" ] || kf_die "$me" "$deb does not exist"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = kernelforge ] || kf_die "$me" "Package is $(field Package), not kernelforge"
[ "$(field Section)" = devel ] || kf_die "$me" "Section is $(field Section), not devel"
depends=$(field Depends)
for lib in libqt6widgets6 libqt6charts6 libqscintilla2-qt6 libzip4 libcurl4 libyaml-cpp0.7 \
           libpugixml1v5 libstdc++6 libc6; do
  grep -q "\b$lib\b" <<<"$depends" || kf_die "$me" "Depends lacks $lib (the programs link it): $depends"
done
if grep -Eiq 'torch|nvidia|cuda' <<<"$depends"; then
  kf_die "$me" "Depends names LibTorch or CUDA, which are found at run time: $depends"
fi
grep -q python3-venv <<<"$(field Recommends)" || kf_die "$me" "Recommends lacks python3-venv (kernelforge-setup-libtorch needs it)"
kf_log "$me" "control: Depends has the $(tr ',' '\n' <<<"$depends" | wc -l) libraries' packages, none of LibTorch or CUDA"

dpkg-deb -x "$deb" "$tmp/root"
dpkg-deb -e "$deb" "$tmp/control"
r="$tmp/root"
for f in usr/bin/kernelforge usr/bin/kforge usr/sbin/kernelforge-setup-libtorch \
         usr/libexec/kernelforge/kforge-runner usr/libexec/kernelforge/kforge-runner.bin \
         usr/libexec/kernelforge/kforge-cast usr/libexec/kernelforge/kforge-cast.bin \
         usr/share/kernelforge/examples/vector_add/task.json usr/share/kernelforge/templates/task/task.json \
         usr/share/kernelforge/skills/README.md usr/share/kernelforge/prelude/kf/prelude.cuh \
         usr/share/kernelforge/screenshots/vector_add-oob.fixture.json \
         usr/share/kernelforge/python/cast/kernelforge_cast/__main__.py \
         usr/share/kernelforge/python/baseline/kernelforge_baseline/__main__.py \
         usr/share/kernelforge/python/agent/kernelforge_import/__main__.py \
         usr/share/kernelforge/python-requirements.txt \
         usr/share/applications/dev.kernelforge.KernelForge.desktop \
         usr/share/metainfo/dev.kernelforge.KernelForge.metainfo.xml \
         usr/share/icons/hicolor/scalable/apps/dev.kernelforge.KernelForge.svg \
         usr/share/man/man1/kforge.1.gz; do
  [ -e "$r/$f" ] || kf_die "$me" "the package lacks /$f"
done
if find "$r" -name __pycache__ | grep -q .; then kf_die "$me" "the package carries __pycache__ folders"; fi
kf_log "$me" "layout: programs, launchers, data, harnesses, desktop files and man page present"

elfs=$(find "$r" -type f -exec sh -c 'head -c 4 "$1" | grep -q "ELF" && echo "$1"' _ {} \;)
[ "$(wc -l <<<"$elfs")" -ge 5 ] || kf_die "$me" "expected at least 5 ELF files (4 programs and libkf_cast), found: $elfs"
while read -r f; do
  if readelf -d "$f" | grep -Eq '\((RPATH|RUNPATH)\)'; then
    kf_die "$me" "/${f#"$r"/} has a RUNPATH ($(readelf -d "$f" | grep -E 'RPATH|RUNPATH')): LibTorch must come from the configured location"
  fi
  if readelf -S "$f" | grep -q '\.debug_info'; then
    kf_die "$me" "/${f#"$r"/} is not stripped"
  fi
done <<<"$elfs"
kf_log "$me" "programs: $(wc -l <<<"$elfs") ELF files, stripped, none with a RUNPATH"

man=$(MANWIDTH=100 man -l "$r/usr/share/man/man1/kforge.1.gz" 2>/dev/null | col -b)
for sub in compile verify bench profile promote cast validate runners; do
  grep -q "kforge $sub" <<<"$man" || kf_die "$me" "the man page does not document 'kforge $sub'"
done
kf_log "$me" "man: kforge.1 renders ($(wc -l <<<"$man") lines) and documents the subcommands"

if command -v desktop-file-validate >/dev/null 2>&1 && command -v appstreamcli >/dev/null 2>&1; then
  desktop-file-validate "$r/usr/share/applications/dev.kernelforge.KernelForge.desktop" ||
    kf_die "$me" "the installed desktop file is not valid"
  appstreamcli validate --no-net "$r/usr/share/metainfo/dev.kernelforge.KernelForge.metainfo.xml" >/dev/null ||
    kf_die "$me" "the installed metainfo fails appstreamcli validate"
  kf_log "$me" "desktop: the desktop entry and the AppStream metainfo validate"
fi
for s in postinst postrm; do
  [ -x "$tmp/control/$s" ] || kf_die "$me" "the package has no executable $s"
done
kf_log "$me" "ok: $(basename "$deb")"
