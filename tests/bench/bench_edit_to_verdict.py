#!/usr/bin/env python3
"""Edit-to-verdict latency with a warm runner, as the workbench sees it.

For each example task, one `kforge verify <task> --candidate optimized.cu --repeat N --json` runs N
rounds in one process with one warm runner: each round edits the source (so the compile cache
misses), compiles it and verifies every test shape. Round 1 pays NVRTC's and the runner's first
use and is reported apart; the median of the other rounds is the warm latency (target 200 ms; round 1 target 600 ms).
Prints a table; writes rows (task, compile_ms, runner_ms, warm_ms, e2e_ms, meets_target) with
--json-out. Not a pass/fail test.
"""
import argparse, json, os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--candidate", default="optimized.cu")
    ap.add_argument("--target-ms", type=float, default=200.0)
    ap.add_argument("--first-target-ms", type=float, default=600.0)
    ap.add_argument("--json-out")
    ap.add_argument("--budget-s", type=float, default=120.0)
    a = ap.parse_args()
    examples = os.path.join(ROOT, "resources", "examples")
    tasks = sorted(d for d in os.listdir(examples) if os.path.exists(os.path.join(examples, d, "task.json")))
    rows, start = [], time.time()
    for t in tasks:
        if time.time() - start > a.budget_s:
            print(f"{t}: skipped (budget of {a.budget_s:.0f} s spent)")
            continue
        cmd = [a.kforge, "verify", os.path.join(examples, t), "--candidate", a.candidate, "--repeat", str(a.rounds), "--json"]
        t0 = time.time()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        e2e = (time.time() - t0) * 1000
        try:
            rep = json.loads(p.stdout)["reports"][0]
            rounds = rep["edit_to_verdict"]
        except (ValueError, KeyError, IndexError):
            print(f"{t}: no latency data (exit {p.returncode}): {p.stderr.strip().splitlines()[-1:]}")
            if p.returncode == 3:
                return 3
            continue
        warm = rounds[1:] or rounds
        med = lambda k: statistics.median(r[k] for r in warm)
        row = {"task": t, "compile_ms": med("compile_ms"), "runner_ms": med("runner_ms"), "warm_ms": med("total_ms"),
               "first_round_ms": rounds[0]["total_ms"], "e2e_ms": e2e / len(rounds), "rounds": len(rounds),
               "verdicts": sorted({r["verdict"] for r in rounds}),
               "phase_ms": rep.get("phase_ms") or {}}
        row["meets_target"] = row["warm_ms"] <= a.target_ms and row["first_round_ms"] <= a.first_target_ms
        rows.append(row)
    print(f"edit-to-verdict with a warm runner, {a.candidate}, median of rounds 2..{a.rounds} (ms); target {a.target_ms:.0f}")
    print(f"{'task':<26} {'compile':>8} {'runner':>8} {'warm':>8} {'round 1':>8}  target  verdicts")
    for r in rows:
        print(f"{r['task']:<26} {r['compile_ms']:8.1f} {r['runner_ms']:8.1f} {r['warm_ms']:8.1f} {r['first_round_ms']:8.1f}  "
              f"{'ok' if r['meets_target'] else 'MISS':<6}  {','.join(r['verdicts'])}")
    for r in rows:
        if r["phase_ms"]:
            print(f"  {r['task']}: runner phases of the last round (ms): " +
                  ", ".join(f"{k} {v}" for k, v in r["phase_ms"].items()))
    if rows:
        print(f"median over tasks: {statistics.median(r['warm_ms'] for r in rows):.1f} ms")
    if a.json_out:
        with open(a.json_out, "w") as fh:
            json.dump({"benchmark": "edit_to_verdict", "target_ms": a.target_ms, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
