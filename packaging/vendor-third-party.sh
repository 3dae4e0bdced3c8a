#!/usr/bin/env bash
# packaging/vendor-third-party.sh [dir] — copy the dependencies that the GPU server lacks (headers,
# and the libzip, yaml-cpp and pugixml libraries) from this development machine into a folder that travels with the checkout.
#
#   dir   destination; default $KF_THIRD_PARTY_DIR, else <repo>/third_party (git-ignored).
#
# Copies from /usr/include (packages nlohmann-json3-dev, libcli11-dev, libxxhash-dev, which
# setup.sh installs): nlohmann/ (json.hpp, json_fwd.hpp and the rest), CLI/ (CLI11) and
# xxhash.h, plus each package's copyright file under LICENSES/ and their versions in
# VERSIONS.txt. Replaces only those entries in the folder; running it again refreshes them.
# Then build there with: packaging/gpu-server.sh <dir>  (which passes -DKF_THIRD_PARTY_DIR=<dir>).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=vendor-third-party
dest=${1:-${KF_THIRD_PARTY_DIR:-$KF_ROOT/third_party}}
src=/usr/include

# header or folder in /usr/include, and the Debian package that provides it
entries=(nlohmann CLI xxhash.h)
packages=(nlohmann-json3-dev libcli11-dev libxxhash-dev libzip-dev libzip4 libyaml-cpp-dev libyaml-cpp0.7
          libpugixml-dev libpugixml1v5)

for e in "${entries[@]}"; do
  [ -e "$src/$e" ] || kf_die "$me" "$src/$e not found: run packaging/setup.sh (installs ${packages[*]})"
done
[ -f "$src/nlohmann/json_fwd.hpp" ] || kf_die "$me" "$src/nlohmann/json_fwd.hpp not found"
[ -f "$src/CLI/CLI.hpp" ] || kf_die "$me" "$src/CLI/CLI.hpp not found"

mkdir -p "$dest/LICENSES"
dest=$(cd "$dest" && pwd)
for e in "${entries[@]}"; do
  rm -rf "${dest:?}/$e"
  cp -R "$src/$e" "$dest/$e"
  kf_log "$me" "copied $src/$e"
done
# libzip (.cast packages) is a shared library: its headers under include/, the library under lib/
# (a copy named libzip.so for the linker and libzip.so.4 for the loader; it needs only libc,
# zlib, libbz2 and OpenSSL 3, which the server has).
zipso=$(readlink -f /usr/lib/x86_64-linux-gnu/libzip.so 2>/dev/null || true)
[ -f "$zipso" ] && [ -f "$src/zip.h" ] && [ -f "$src/zipconf.h" ] ||
  kf_die "$me" "libzip not found: run packaging/setup.sh (installs libzip-dev)"
rm -rf "${dest:?}/include" "${dest:?}/lib"
mkdir -p "$dest/include" "$dest/lib"
cp "$src/zip.h" "$src/zipconf.h" "$dest/include/"
cp "$zipso" "$dest/lib/libzip.so"
cp "$zipso" "$dest/lib/libzip.so.4"
kf_log "$me" "copied libzip ($zipso)"
# yaml-cpp (skills and GPU MODE task.yml, engine/agent) likewise: its headers folder and the
# library as libyaml-cpp.so and libyaml-cpp.so.0.7 (it needs only the C++ runtime).
yamlso=$(readlink -f /usr/lib/x86_64-linux-gnu/libyaml-cpp.so 2>/dev/null || true)
[ -f "$yamlso" ] && [ -f "$src/yaml-cpp/yaml.h" ] ||
  kf_die "$me" "yaml-cpp not found: run packaging/setup.sh (installs libyaml-cpp-dev)"
cp -R "$src/yaml-cpp" "$dest/include/yaml-cpp"
cp "$yamlso" "$dest/lib/libyaml-cpp.so"
cp "$yamlso" "$dest/lib/$(basename "$yamlso" | sed -E 's/^(libyaml-cpp\.so\.[0-9]+\.[0-9]+).*/\1/')"
kf_log "$me" "copied yaml-cpp ($yamlso)"
# pugixml (compute-sanitizer's XML, engine/sanitize) likewise: its two headers, and the library as
# libpugixml.so and libpugixml.so.1 (it needs only the C++ runtime).
pugiso=$(readlink -f /usr/lib/x86_64-linux-gnu/libpugixml.so 2>/dev/null || true)
[ -f "$pugiso" ] && [ -f "$src/pugixml.hpp" ] && [ -f "$src/pugiconfig.hpp" ] ||
  kf_die "$me" "pugixml not found: run packaging/setup.sh (installs libpugixml-dev)"
cp "$src/pugixml.hpp" "$src/pugiconfig.hpp" "$dest/include/"
cp "$pugiso" "$dest/lib/libpugixml.so"
cp "$pugiso" "$dest/lib/libpugixml.so.1"
kf_log "$me" "copied pugixml ($pugiso)"
for p in "${packages[@]}"; do
  if [ -f "/usr/share/doc/$p/copyright" ]; then
    cp "/usr/share/doc/$p/copyright" "$dest/LICENSES/$p.copyright"
  fi
done
{
  echo "# Copied by packaging/vendor-third-party.sh on $(date -u +%Y-%m-%dT%H:%MZ) from $(hostname)"
  dpkg-query -W -f='${Package} ${Version}\n' "${packages[@]}" 2>/dev/null || true
} >"$dest/VERSIONS.txt"

kf_log "$me" "$(du -sh "$dest" | cut -f1) in $dest; ship it with the checkout to the GPU server (packaging/gpu-server.sh looks in <repo>/third_party unless told otherwise)"
kf_log "$me" ok
