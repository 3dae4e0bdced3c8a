#!/usr/bin/env bash
# packaging/check-desktop-files.sh — the desktop integration the package installs
# (resources/desktop), checked from the source tree: the desktop entry under
# desktop-file-validate, the AppStream metainfo under `appstreamcli validate --no-net`, the icon
# well-formed and renderable, and one application id across the three. CTest runs it (label
# package); exits 77 (CTest's skip) when a validator is missing.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=check-desktop-files
dir="$KF_ROOT/resources/desktop"
id=dev.kernelforge.KernelForge
for tool in desktop-file-validate appstreamcli xmllint rsvg-convert; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    kf_log "$me" "skipped: $tool not found (packaging/setup.sh installs it)"
    exit 77
  fi
done
for f in "$id.desktop" "$id.metainfo.xml" "$id.svg"; do
  [ -f "$dir/$f" ] || kf_die "$me" "resources/desktop/$f is missing (the package installs it under that name)"
done

desktop-file-validate "$dir/$id.desktop" || kf_die "$me" "resources/desktop/$id.desktop is not a valid desktop entry (above)"
grep -qx "Icon=$id" "$dir/$id.desktop" || kf_die "$me" "$id.desktop: Icon= must be $id, the icon's installed name"
grep -qx "Exec=kernelforge" "$dir/$id.desktop" || kf_die "$me" "$id.desktop: Exec= must start the installed kernelforge"

appstreamcli validate --no-net "$dir/$id.metainfo.xml" >/dev/null ||
  { appstreamcli validate --no-net "$dir/$id.metainfo.xml" >&2 || true;
    kf_die "$me" "resources/desktop/$id.metainfo.xml fails appstreamcli validate (above)"; }
grep -q "<id>$id</id>" "$dir/$id.metainfo.xml" || kf_die "$me" "$id.metainfo.xml: <id> must be $id"
grep -q "<launchable type=\"desktop-id\">$id.desktop</launchable>" "$dir/$id.metainfo.xml" ||
  kf_die "$me" "$id.metainfo.xml: <launchable> must name $id.desktop"
version=$(sed -n 's/^project(KernelForge VERSION \([0-9.]*\).*/\1/p' "$KF_ROOT/CMakeLists.txt")
grep -q "<release version=\"$version\"" "$dir/$id.metainfo.xml" ||
  kf_die "$me" "$id.metainfo.xml: no <release version=\"$version\"> (the project's version in CMakeLists.txt)"

xmllint --noout "$dir/$id.svg" || kf_die "$me" "resources/desktop/$id.svg is not well-formed XML (above)"
grep -q 'viewBox="0 0 128 128"' "$dir/$id.svg" || kf_die "$me" "$id.svg: the icon must be square (viewBox 0 0 128 128)"
png=$(mktemp --suffix=.png)
trap 'rm -f "$png"' EXIT
rsvg-convert -w 64 -h 64 "$dir/$id.svg" -o "$png" || kf_die "$me" "$id.svg does not render (rsvg-convert, above)"
[ "$(stat -c %s "$png")" -gt 500 ] || kf_die "$me" "$id.svg renders to an almost empty picture"
kf_log "$me" "ok: $id .desktop, .metainfo.xml and .svg"
