#!/usr/bin/env python3
"""Wall time of `kforge bench` against its time-cap promise.

For each example task, one `kforge bench <task> --time-cap-ms CAP --json` (every candidate, every
benchmark shape) is timed from outside. The promise (docs/verification.md, timing rule 3): the
runner spends at most N x CAP + 3 s on N timed shapes; the rest of the wall time is kforge's own
start, the compile and the runner's start. Each shape's own `wall_ms` comes from its report.
Prints a table; writes rows with --json-out. Not a pass/fail test.
"""
import argparse, json, os, subprocess, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--cap-ms", type=float, default=1000.0)
    ap.add_argument("--json-out")
    ap.add_argument("--budget-s", type=float, default=150.0)
    ap.add_argument("tasks", nargs="*", help="task folders (default: every example)")
    a = ap.parse_args()
    examples = os.path.join(ROOT, "resources", "examples")
    tasks = a.tasks or [os.path.join(examples, d) for d in sorted(os.listdir(examples))
                        if os.path.exists(os.path.join(examples, d, "task.json"))]
    rows, start = [], time.time()
    for task in tasks:
        name = os.path.basename(os.path.normpath(task))
        if time.time() - start > a.budget_s:
            print(f"{name}: skipped (budget of {a.budget_s:.0f} s spent)")
            continue
        cmd = [a.kforge, "bench", task, "--baseline", "eager", "--time-cap-ms", str(int(a.cap_ms)), "--json"]
        t0 = time.time()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wall = time.time() - t0
        try:
            reports = json.loads(p.stdout)["reports"]
        except (ValueError, KeyError):
            print(f"{name}: no report (exit {p.returncode}): {p.stderr.strip().splitlines()[-1:]}")
            if p.returncode == 3:
                return 3
            continue
        shapes = [s for r in reports for s in (r.get("shapes") or [])]
        shape_s = sum((s.get("wall_ms") or 0) for s in shapes) / 1000.0
        n = len(shapes)
        promise = n * a.cap_ms / 1000.0 + 3.0
        row = {"task": name, "candidates": len(reports), "shapes": n, "wall_s": round(wall, 2),
               "runner_shapes_s": round(shape_s, 2), "overhead_s": round(wall - shape_s, 2),
               "promise_s": promise, "within": shape_s <= promise,
               "unstable": sum(1 for s in shapes if s.get("unstable")),
               "stopped_by": sorted({s.get("stopped_by", "?") for s in shapes}),
               "verdicts": sorted({r.get("verdict", "?") for r in reports})}
        rows.append(row)
    print(f"kforge bench wall time, --time-cap-ms {a.cap_ms:.0f}: promise N x cap + 3 s of runner time for N shapes")
    print(f"{'task':<26} {'cand':>4} {'N':>3} {'wall s':>7} {'shapes s':>8} {'other s':>7} {'promise':>7}  "
          f"within  unstable  stopped by")
    for r in rows:
        print(f"{r['task']:<26} {r['candidates']:>4} {r['shapes']:>3} {r['wall_s']:7.2f} {r['runner_shapes_s']:8.2f} "
              f"{r['overhead_s']:7.2f} {r['promise_s']:7.1f}  {'ok' if r['within'] else 'MISS':<6}  {r['unstable']:>8}  "
              f"{','.join(r['stopped_by'])}")
    if a.json_out:
        with open(a.json_out, "w") as fh:
            json.dump({"benchmark": "bench_wall_time", "cap_ms": a.cap_ms, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
