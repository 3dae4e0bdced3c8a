#!/usr/bin/env python3
"""The runner pool across every GPU of one host (docs/runners.md, "Pools"): a benchmark that
prints figures, not a pass/fail test. Standard library only.

    pool_scaling.py --kforge build/gpu-server/app/cli/kforge [--out DIR]

1. One endpoint per GPU ("gpus": [0, …, N-1] in a runners.json), pools p1 … pN of the first k.
2. `kforge verify --pool` over every candidate of the example tasks and the GPU suite's broken
   ones (at least 32), with a fixed --seed: a warm-up, then 1, 2, …, N endpoints, wall time each,
   scaling = t1 / tk. The merged reports must equal the one-endpoint run's in content (verdicts,
   per-shape results, seeds) and order.
3. `kforge bench --pool` over the examples on N endpoints: every benchmark ran alone on its GPU
   (no two intervals on one GPU UUID overlap) and each report's placement names host, GPU UUID,
   CUDA_VISIBLE_DEVICES and endpoint.
4. The verify run again on N endpoints with endpoint gpu/0's runner killed (SIGKILL) 3 s in: it is
   restarted once, every candidate has exactly one report, equal to the one-endpoint run's.
Exit 0 when every check held, 1 otherwise, 77 without a GPU.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TASKS = sorted(os.path.join(ROOT, "resources", "examples", d) for d in os.listdir(os.path.join(ROOT, "resources", "examples"))
               if os.path.isfile(os.path.join(ROOT, "resources", "examples", d, "task.json")))
BROKEN = [os.path.join(HERE, "tasks", t) for t in ("broken_add", "sanitize_cases", "small_add", "race_sum",
                                                   "multiple_of_block_then_correct", "register_pressure")]


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def run(kforge, argv, during=None, timeout=580):
    cmd = [kforge] + argv
    print("$ kforge " + " ".join(a if len(a) < 60 else "…" + a[-40:] for a in argv), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if during:
        threading.Thread(target=during, args=(p,), daemon=True).start()
    out, err = p.communicate(timeout=timeout)
    secs = time.monotonic() - t0
    doc = None
    try:
        doc = json.loads(out)
    except ValueError:
        print("stdout is not JSON:\n" + out[:400])
    print(f"  exit {p.returncode} after {secs:.1f} s", flush=True)
    if p.returncode not in (0, 1):
        print("  stderr: " + "\n  ".join(err.strip().splitlines()[-15:]))
    return p.returncode, doc, err, secs


def essence(r):
    shapes = [(json.dumps(s.get("shape"), sort_keys=True), s.get("set"), s.get("passed"),
               [t.get("seed") for t in s.get("trials", [])], [t.get("passed") for t in s.get("trials", [])])
              for s in r.get("shapes", [])]
    return (r.get("task", {}).get("name"), r.get("candidate", {}).get("file"), r.get("verdict"), r.get("seeds"), shapes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--runner", default=os.environ.get("KF_RUNNER", ""))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    runner = a.runner or os.path.join(os.path.dirname(a.kforge), "kforge-runner")
    n = gpu_count()
    if n < 1:
        print("no GPU")
        return 77
    failed = []

    def check(cond, what):
        print(("  ok    " if cond else "  FAIL  ") + what, flush=True)
        if not cond:
            failed.append(what)

    results = {"gpus": n, "verify": {}, "checks": failed}
    with tempfile.TemporaryDirectory() as tmp:
        runners = os.path.join(tmp, "runners.json")
        pools = {f"p{k}": [f"gpu/{i}" for i in range(k)] for k in range(1, n + 1)}
        with open(runners, "w") as f:
            json.dump({"schema_version": 1, "endpoints": [{"name": "gpu", "kind": "local", "runner": runner,
                                                           "gpus": list(range(n))}], "pools": pools}, f)
        tasks = TASKS + BROKEN
        seed = ["--seed", "0x22"]
        verify = ["verify"] + tasks + ["--json", "--trials", "3"] + seed

        # warm-up: compile cache and driver state, so every timed run starts alike
        run(a.kforge, verify + ["--pool", runners + f":p{n}"])
        single = None
        times = {}
        # The same candidates verified more thoroughly (every shape, the benchmark ones too): more
        # GPU work per candidate, so the runners' start-up weighs less.
        thorough = {}
        for k in range(1, n + 1):
            rc, doc, err, secs = run(a.kforge, verify + ["--shapes", "all", "--pool", runners + f":p{k}"])
            thorough[k] = secs
        for k in range(1, n + 1):
            rc, doc, err, secs = run(a.kforge, verify + ["--pool", runners + f":p{k}"])
            if rc == 3 and not (doc or {}).get("reports"):
                return 77
            reports = (doc or {}).get("reports", [])
            times[k] = secs
            if k == 1:
                single = [essence(r) for r in reports]
                check(len(single) >= 32, f"{len(single)} candidates over {len(tasks)} tasks (at least 32)")
            else:
                check([essence(r) for r in reports] == single,
                      f"{k} endpoints: the merged reports equal the one-endpoint run's in content and order")
            per = {e["name"]: e["items"] for e in (doc or {}).get("pool", {}).get("endpoints", [])}
            print(f"  {k} endpoint(s): {secs:.1f} s, candidates per endpoint {per}")
        for k in range(1, n + 1):
            results["verify"][k] = {"wall_s": round(times[k], 2), "scaling": round(times[1] / times[k], 2),
                                    "all_shapes_wall_s": round(thorough[k], 2), "all_shapes_scaling": round(thorough[1] / thorough[k], 2)}
        check(times[1] / times[n] >= 0.85 * n, f"verify scaling at {n} GPUs: {times[1] / times[n]:.2f} (target {0.85 * n:.2f})")

        # benchmarks: each alone on its GPU
        rc, doc, err, secs = run(a.kforge, ["bench"] + TASKS + ["--json", "--time-cap-ms", "500", "--baseline", "eager",
                                                               "--pool", runners + f":p{n}"])
        items = (doc or {}).get("pool", {}).get("items", [])
        eps = {e["name"]: e for e in (doc or {}).get("pool", {}).get("endpoints", [])}
        by_gpu = {}
        for it in items:
            by_gpu.setdefault(eps.get(it["endpoint"], {}).get("gpu_uuid"), []).append(it)
        overlaps = 0
        for group in by_gpu.values():
            for i in range(len(group)):
                for j in range(i + 1, len(group)):
                    x, y = group[i], group[j]
                    if x["started_ms"] < y["ended_ms"] and y["started_ms"] < x["ended_ms"]:
                        overlaps += 1
        check(overlaps == 0, f"bench: {len(items)} benchmarks on {len(by_gpu)} GPUs, none shared its GPU")
        placements = [r.get("placement", {}) for r in (doc or {}).get("reports", [])]
        check(all(p.get("host") and p.get("gpu_uuid") and p.get("endpoint") and p.get("visible_devices") != "" for p in placements),
              "every benchmark's signed placement names host, GPU UUID, CUDA_VISIBLE_DEVICES and endpoint")
        results["bench"] = {"wall_s": round(secs, 2), "benchmarks": len(items), "gpus": len(by_gpu),
                            "per_endpoint": {k: v["items"] for k, v in eps.items()}}
        for p in placements[:3]:
            print(f"    placement: {p}")

        # one endpoint killed mid-run
        killed = []

        def killer(proc):
            seen = None
            while proc.poll() is None and not killed:
                for pid in os.listdir("/proc"):
                    if not pid.isdigit():
                        continue
                    try:
                        with open(f"/proc/{pid}/stat") as f:
                            ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                        with open(f"/proc/{pid}/environ", "rb") as f:
                            env = f.read().split(b"\0")
                    except (OSError, ValueError, IndexError):
                        continue
                    if ppid == proc.pid and b"CUDA_VISIBLE_DEVICES=0" in env:
                        seen = seen or time.monotonic()
                        if time.monotonic() - seen > 3:
                            os.kill(int(pid), signal.SIGKILL)
                            killed.append(pid)
                            print(f"  (killed runner {pid} of gpu/0)", flush=True)
                        break
                time.sleep(0.1)

        rc, doc, err, secs = run(a.kforge, verify + ["--pool", runners + f":p{n}"], during=killer)
        check(bool(killed), "gpu/0's runner was killed mid-run")
        reports = (doc or {}).get("reports", [])
        check([essence(r) for r in reports] == single, "after the kill: every candidate once, equal to the one-endpoint run")
        eps = {e["name"]: e for e in (doc or {}).get("pool", {}).get("endpoints", [])}
        g0 = eps.get("gpu/0", {})
        check(g0.get("restarts") == 1 and not g0.get("lost"), f"gpu/0 restarted once ({g0.get('restarts')}), still in the pool")
        retried = [(i["task"], i["candidate"], i["endpoint"]) for i in (doc or {}).get("pool", {}).get("items", []) if i["attempt"] > 1]
        check(len(retried) == 1, f"one candidate ran again: {retried}")
        results["kill"] = {"wall_s": round(secs, 2), "retried": retried, "restarts": g0.get("restarts")}

    print("\n| endpoints (GPUs) | verify, test shapes | scaling | verify, every shape | scaling |\n|---|---|---|---|---|")
    for k, v in results["verify"].items():
        print(f"| {k} | {v['wall_s']:.1f} s | {v['scaling']:.2f}× | {v['all_shapes_wall_s']:.1f} s | {v['all_shapes_scaling']:.2f}× |")
    print(json.dumps(results, indent=1))
    if a.out:
        with open(os.path.join(a.out, "pool_scaling.json"), "w") as f:
            json.dump(results, f, indent=1)
    print("FAILED: " + "; ".join(failed) if failed else "PASSED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
