"""GPU end-to-end check of `kforge tune` (CTest gpu.tune.*; docs/tune.md, docs/gpu-validation.md):

    tune_check.py --kforge PATH [--tasks DIR,DIR,...] [--budget-s S] [--json FILE]

For every task (default: the examples whose optimized.cu has a "tune" block): copy it to a
temporary folder and run `kforge tune COPY --budget-s S --json`. Checks: exit 0; a winner; every
point that was timed passed verify first, and no point that failed verify was timed; the winner
was written back as a candidate and its verify passed and its bench (against eager and
torch.compile) is "ok"; the search's cost is in the report and the wall time within the budget
plus the evidence runs. Prints one row per benchmark shape: the untuned and tuned times, the
speedups over eager and torch.compile, the share of HBM peak. Exits 0 when every check holds, 1
when one fails, 77 without a GPU.
"""

import argparse
import glob
import json
import math
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from gpucheck import SKIP, Checks, run  # noqa: E402


def default_tasks():
    out = []
    for t in sorted(glob.glob(os.path.join(ROOT, "resources", "examples", "*", "task.json"))):
        with open(t) as f:
            if any("tune" in c for c in json.load(f).get("candidates", [])):
                out.append(os.path.dirname(t))
    return out


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0


def check_task(c, a, src, work, rows):
    name = os.path.basename(src)
    copy = os.path.join(work, name)
    shutil.copytree(src, copy)
    r = run([a.kforge, "tune", copy, "--budget-s", a.budget_s, "--json"], timeout=int(float(a.budget_s)) + 900)
    if r.returncode == 3 and not r.stdout.strip():
        print("skip: %s" % r.stderr.strip()[-400:])
        return False
    try:
        doc = json.loads(r.stdout)
        tune = doc["tune"]
    except (ValueError, KeyError):
        c.check(False, "%s: kforge tune printed no document (exit %d): %s" % (name, r.returncode, r.stderr[-800:]))
        return True
    c.check(r.returncode == 0, "%s: kforge tune exit 0 (exit %d) %s" % (name, r.returncode, r.stderr.strip()[-400:]))
    c.check(tune.get("winner") is not None, "%s: a winner (%s)" % (name, tune.get("winner")))
    timed_unverified = [p["label"] for p in tune["points"] if p.get("geomean_ms") is not None and p.get("verified") is not True]
    c.check(not timed_unverified, "%s: every timed point passed verify first (offenders: %s)" % (name, timed_unverified))
    failed_timed = [p["label"] for p in tune["points"] if p["stage"] == "verify_failed" and p.get("geomean_ms") is not None]
    c.check(not failed_timed, "%s: no point that failed verify was timed (%s)" % (name, failed_timed))
    cost = tune["cost"]
    c.check(cost["wall_s"] <= float(a.budget_s) * 1.25 + 30,
            "%s: the search took %.1f s for a budget of %s s" % (name, cost["wall_s"], a.budget_s))
    reports = doc.get("reports", [])
    kinds = {rep.get("kind"): rep for rep in reports}
    ver, bench = kinds.get("correctness"), kinds.get("performance")
    c.check(ver is not None and ver.get("verdict") == "pass", "%s: the written-back winner %s passes verify" % (name, doc.get("written")))
    c.check(bench is not None and bench.get("verdict") == "ok", "%s: its bench is ok" % name)
    start = tune["points"][0]
    win = next((p for p in tune["points"] if p["stage"] == "winner"), None)
    cb = (bench or {}).get("compile_baseline") or {}
    for i, s in enumerate((bench or {}).get("shapes", [])):
        comp = s.get("compile") or {}
        rows.append({"task": name, "shape": s.get("label") or json.dumps(s.get("shape")),
                     "start": start["label"], "start_ms": (start.get("shape_ms") or [None] * (i + 1))[i],
                     "winner": win["label"] if win else None, "tuned_ms": s["candidate"].get("median_ms"),
                     "eager_ms": s["baseline"].get("median_ms"), "vs_eager": s.get("speedup"),
                     "compile_ms": comp.get("best_ms"), "vs_compile": comp.get("speedup"), "compile_mode": comp.get("best_mode"),
                     "compile_reason": comp.get("reason") or cb.get("reason"),
                     "pct_peak": s.get("pct_peak_bandwidth"), "bytes": s.get("bytes"), "tune_wall_s": cost["wall_s"],
                     "points": cost["points"], "timed": cost["timed"], "verified": cost["verified"]})
    print("%s: winner %s; %d points, %d compiled, %d pruned, %d verified (%d failed), %d timed, wall %.1f s" % (
        name, tune.get("winner"), cost["points"], cost["compiled"], cost["pruned"], cost["verified"], cost["verify_failed"],
        cost["timed"], cost["wall_s"]), flush=True)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--tasks", default=os.environ.get("KF_TUNE_TASKS", ""))
    ap.add_argument("--budget-s", default=os.environ.get("KF_TUNE_BUDGET_S", "120"))
    ap.add_argument("--json")
    a = ap.parse_args()
    tasks = [t if os.path.isabs(t) else os.path.join(ROOT, t) for t in a.tasks.split(",") if t] or default_tasks()
    c = Checks()
    rows = c.results["rows"] = []
    work = tempfile.mkdtemp(prefix="kf-tune-")
    try:
        for src in tasks:
            if not check_task(c, a, src, work, rows):
                if not c.failures:
                    return SKIP
                break
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n| task | shape | tuned point | tuned (ms) | eager (ms) | vs eager | torch.compile (ms, mode) | vs compile | HBM peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        comp = "%.4g (%s)" % (r["compile_ms"], r["compile_mode"]) if r["compile_ms"] else "not measured: %s" % (r["compile_reason"] or "")[:80]
        print("| %s | %s | %s | %.4g | %.4g | %.2f× | %s | %s | %.0f %% |" % (
            r["task"], r["shape"], r["winner"], r["tuned_ms"] or 0, r["eager_ms"] or 0, r["vs_eager"] or 0, comp,
            "%.2f×" % r["vs_compile"] if r["vs_compile"] else "-", r["pct_peak"] or 0))
    comps = [r["vs_compile"] for r in rows if r["vs_compile"]]
    if comps:
        print("\ngeomean vs torch.compile over %d shapes: %.3f×; lowest %.3f×" % (len(comps), geomean(comps), min(comps)))
    return c.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
