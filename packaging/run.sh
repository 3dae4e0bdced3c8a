#!/usr/bin/env bash
# packaging/run.sh [args...] — README command #1: set up, build (preset dev), open the examples.
#
# When the GUI has been built (build/dev/app/gui/kernelforge), starts it, passing any extra
# arguments along. On first start the workbench copies the bundled example workspace
# (resources/examples) to the user's data folder and opens that copy; later starts open the most
# recent workspace. It needs a display: without
# DISPLAY or WAYLAND_DISPLAY (and without a QT_QPA_PLATFORM of your choice) it says so and
# suggests xvfb-run or the offscreen platform.
# Until then it runs the headless engine instead: `kforge compile <task>` for every task folder
# (a folder with task.json) in resources/examples, extra arguments appended to each call, and
# prints a summary. Exits non-zero when a task fails to compile.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

me=run
bdir="$KF_ROOT/build/dev"
examples="$KF_ROOT/resources/examples"
gui="$bdir/app/gui/kernelforge"
cli="$bdir/app/cli/kforge"

bash "$KF_PACKAGING/build.sh" dev
kf_load_env   # KF_NVDISASM / KF_CUOBJDUMP, for the SASS view

if [ -x "$gui" ]; then
  if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    kf_die "$me" "no display (DISPLAY and WAYLAND_DISPLAY are unset). Run it under a virtual one:
    xvfb-run -a packaging/run.sh
or without any window, e.g. to save screenshots:
    QT_QPA_PLATFORM=offscreen packaging/run.sh"
  fi
  kf_log "$me" "starting ${gui#"$KF_ROOT"/} (first start: a copy of resources/examples; then the last workspace)"
  exec "$gui" "$@"
fi

[ -x "$cli" ] || kf_die "$me" "neither ${gui#"$KF_ROOT"/} nor ${cli#"$KF_ROOT"/} was built"
kf_log "$me" "no GUI in this build yet: compiling every example task with ${cli#"$KF_ROOT"/}"

tasks=()
while IFS= read -r f; do tasks+=("$(dirname "$f")"); done \
  < <(find "$examples" -mindepth 2 -maxdepth 2 -name task.json | LC_ALL=C sort)
[ ${#tasks[@]} -gt 0 ] || kf_die "$me" "no task folders (with task.json) in resources/examples"

results=()
failed=0
for t in "${tasks[@]}"; do
  name=${t#"$examples"/}
  printf '\n=== %s\n' "$name"
  if "$cli" compile "$t" "$@"; then
    results+=("ok      $name")
  else
    rc=$?
    results+=("FAILED  $name (exit $rc)")
    failed=$((failed + 1))
  fi
done

printf '\n'
kf_log "$me" "${#tasks[@]} tasks, $failed failed:"
printf '  %s\n' "${results[@]}"
[ $failed -eq 0 ]
