#!/usr/bin/env bash
# packaging/package.sh — build the Debian package build/package/kernelforge_<version>_<arch>.deb.
#
# Runs setup.sh, configures build/package with the preset package (dev's RelWithDebInfo flags,
# so the compiler cache of a dev build hits; no tests; prefix /usr), builds, then cpack (DEB:
# stripped programs, Depends computed from what they link, cmake/KfPackage.cmake), checks the
# package (packaging/check-deb.sh) and prints its path. Quick when nothing changed: ninja has no
# work and the .deb is newer than everything that goes into it.
# Environment: KF_JOBS (parallel jobs, default nproc), CCACHE_DIR (default ~/.cache/kernelforge/ccache).
# Install it with `sudo apt install ./build/package/kernelforge_*.deb`; test it on a clean
# Debian 12 root with packaging/test-deb.sh (docs/packaging.md).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=package
bdir="$KF_ROOT/build/package"

bash "$KF_PACKAGING/build.sh" package

cd "$bdir"
deb=$(ls -t "$bdir"/kernelforge_*.deb 2>/dev/null | head -n 1 || true)
if [ -n "$deb" ]; then
  # Everything that goes into the package: the built programs and man page, and the installed
  # sources (resources, harnesses, packaging/deb, the install rules).
  newer=$(find "$bdir/app" "$bdir/device" "$bdir/man" "$bdir/CMakeCache.txt" "$KF_ROOT/resources" \
               "$KF_ROOT/device/cast/python" "$KF_ROOT/device/baseline/python" "$KF_ROOT/device/agent/python" \
               "$KF_ROOT/packaging/deb" "$KF_ROOT/packaging/python-requirements.txt" \
               "$KF_ROOT/cmake/KfPackage.cmake" "$KF_ROOT/cmake/KfDebDepends.cmake" \
               -newer "$deb" \( -type f -o -type l \) -print -quit 2>/dev/null || true)
  if [ -z "$newer" ]; then
    kf_log "$me" "up to date: ${deb#"$KF_ROOT"/}"
    exit 0
  fi
  kf_log "$me" "cpack: ${newer#"$KF_ROOT"/} changed"
fi

kf_log "$me" "cpack -G DEB (install, strip, dpkg-shlibdeps, dpkg-deb)"
rm -f "$bdir"/kernelforge_*.deb
log="$bdir/cpack.log"
if ! cpack -G DEB --config "$bdir/CPackConfig.cmake" -B "$bdir" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  kf_die "$me" "cpack failed (full output: ${log#"$KF_ROOT"/})"
fi
grep -h 'kernelforge.deb Depends' "$log" | sed "s/^[- ]*/$me: /" || true
deb=$(ls -t "$bdir"/kernelforge_*.deb | head -n 1)
bash "$KF_PACKAGING/check-deb.sh" "$deb"
kf_log "$me" "ok: ${deb#"$KF_ROOT"/} ($(du -h "$deb" | cut -f1))"
