#!/usr/bin/env python3
"""GPU checks of `kforge verify|bench --pool` (docs/runners.md, "Pools"); standard library only.

Cases (each a CTest test, label gpu):
  two_local_verify   two local endpoints on GPU 0 verify a task's candidates together: both take
                     items, the reports equal a one-endpoint run with the same --seed (verdicts,
                     per-shape results, seeds), each names its endpoint.
  two_local_bench    the same two endpoints benchmark: their timings never overlap (one GPU).
  template           a command-template endpoint (sh -c around the runner) beside a local one.
  kill               one endpoint's runner is killed (SIGKILL) mid-verification: its candidate finishes
                     on the other endpoint or on the restarted one, every candidate has its report,
                     the endpoint shows one restart.
  gpus_all           "gpus": "all" expands to one endpoint per GPU (pinned by UUID); with one GPU
                     that is one endpoint, with several the pool spreads over them.
Exit 77 (skip) when kforge exits 3 without reports (no GPU).
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


def write_runners(folder, runner, victim_marker=None):
    eps = [
        {"name": "gpu0-a", "kind": "local", "runner": runner, "env": {"CUDA_VISIBLE_DEVICES": "0"}},
        {"name": "gpu0-b", "kind": "local", "runner": runner, "env": {"CUDA_VISIBLE_DEVICES": "0"}},
        {"name": "tmpl", "kind": "command", "runner": runner, "shared_fs": True,
         "command": ["sh", "-c", "exec \"$0\"", "{runner}"], "env": {"CUDA_VISIBLE_DEVICES": "0"}},
        {"name": "victim", "kind": "local", "runner": runner,
         "env": {"CUDA_VISIBLE_DEVICES": "0", "KF_POOL_VICTIM": "1"}},
        {"name": "node", "kind": "local", "runner": runner, "gpus": "all", "pool": False},
    ]
    doc = {"schema_version": 1, "endpoints": eps,
           "pools": {"twolocal": ["gpu0-a", "gpu0-b"], "template": ["tmpl", "gpu0-a"], "kill": ["victim", "gpu0-a"]}}
    path = os.path.join(folder, "runners.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    # "gpus": "all" on its own (the only pool:true entry of this file).
    all_path = os.path.join(folder, "runners-all.json")
    with open(all_path, "w") as f:
        json.dump({"schema_version": 1, "endpoints": [{"name": "node", "kind": "local", "runner": runner, "gpus": "all"}]}, f)
    return path, all_path


def run(kforge, argv, timeout=540, during=None):
    cmd = [kforge] + argv
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watcher = None
    if during:
        watcher = threading.Thread(target=during, args=(p,), daemon=True)
        watcher.start()
    out, err = p.communicate(timeout=timeout)
    secs = time.monotonic() - t0
    print(f"exit {p.returncode} after {secs:.1f} s")
    if err.strip():
        print("stderr (last lines):\n  " + "\n  ".join(err.strip().splitlines()[-30:]))
    doc = None
    try:
        doc = json.loads(out) if out.strip() else None
    except ValueError:
        print("stdout is not JSON:\n" + out[:600])
    return p.returncode, doc, err, secs


class Check:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, what):
        print(("  ok    " if cond else "  FAIL  ") + what, flush=True)
        if not cond:
            self.failed += 1
        return cond

    def note(self, what):
        print("  note  " + what, flush=True)


def essence(report):
    """What a report says about the candidate, without where, when and how long."""
    shapes = []
    for s in report.get("shapes", []):
        shapes.append((json.dumps(s.get("shape"), sort_keys=True), s.get("set"), s.get("passed"),
                       [t.get("seed") for t in s.get("trials", [])], [t.get("passed") for t in s.get("trials", [])]))
    return {"candidate": report.get("candidate", {}).get("file"), "verdict": report.get("verdict"),
            "seeds": report.get("seeds"), "shapes": shapes, "task_hash": report.get("task", {}).get("hash")}


def overlapping(items):
    n = 0
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            a, b = items[i], items[j]
            if a["endpoint"] != b["endpoint"] and a["started_ms"] < b["ended_ms"] and b["started_ms"] < a["ended_ms"]:
                n += 1
    return n


def pool_block(c, doc, names):
    pool = (doc or {}).get("pool", {})
    eps = {e["name"]: e for e in pool.get("endpoints", [])}
    c.ok(sorted(eps) == sorted(names), f"the pool block lists {sorted(names)} (found {sorted(eps)})")
    for e in eps.values():
        print(f"    {e['name']}: host {e['host']} gpu {e['gpu']} uuid {e['gpu_uuid']} items {e['items']} "
              f"restarts {e['restarts']} lost {e['lost']} busy {e['busy_ms']:.0f} ms {e['why']}")
    return pool, eps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--runner", default=os.environ.get("KF_RUNNER", ""))
    ap.add_argument("--report-dir", default="")
    a = ap.parse_args()
    runner = a.runner or os.path.join(os.path.dirname(a.kforge), "kforge-runner")
    c = Check()
    with tempfile.TemporaryDirectory() as tmp:
        runners, runners_all = write_runners(tmp, runner)
        broken = os.path.join(HERE, "tasks", "broken_add")
        seed = ["--seed", "0x5eed"]

        if a.case == "two_local_verify":
            rc1, one, _, t1 = run(a.kforge, ["verify", broken, "--json", "--runner-endpoint", "gpu0-a", "--runners", runners] + seed)
            if rc1 == 3 and not (one or {}).get("reports"):
                return 77
            rc2, pooled, _, t2 = run(a.kforge, ["verify", broken, "--json", "--pool", runners + ":twolocal"] + seed)
            c.ok(rc1 == rc2, f"the pool's exit code equals one endpoint's ({rc2} vs {rc1})")
            r1 = [essence(r) for r in (one or {}).get("reports", [])]
            r2 = [essence(r) for r in (pooled or {}).get("reports", [])]
            c.ok(len(r1) == 7 and r1 == r2, f"7 reports, in task order, identical but for placement and times ({len(r1)}, {len(r2)})")
            pool, eps = pool_block(c, pooled, ["gpu0-a", "gpu0-b"])
            c.ok(all(e["items"] > 0 for e in eps.values()), "both endpoints on the one GPU took candidates")
            for r, item in zip((pooled or {}).get("reports", []), pool.get("items", [])):
                c.ok(r.get("placement", {}).get("endpoint") == item["endpoint"], f"{item['candidate']}: the signed placement "
                     f"names {item['endpoint']}")
            c.note(f"one endpoint {t1:.1f} s, two endpoints on one GPU {t2:.1f} s; "
                   f"overlapping verifications: {overlapping(pool.get('items', []))}")
        elif a.case == "two_local_bench":
            vec = os.path.join(ROOT, "resources", "examples", "vector_add")
            rc, doc, _, secs = run(a.kforge, ["bench", vec, "--json", "--pool", runners + ":twolocal", "--baseline", "eager"])
            if rc == 3 and not (doc or {}).get("reports"):
                return 77
            c.ok(rc == 0, f"exit 0 (got {rc})")
            pool, eps = pool_block(c, doc, ["gpu0-a", "gpu0-b"])
            items = pool.get("items", [])
            c.ok(len(items) == 2 and all("started_ms" in i for i in items), "each candidate has its interval")
            c.ok(overlapping(items) == 0, "no two benchmarks on the one GPU overlapped")
            for i in items:
                print(f"    {i['candidate']} on {i['endpoint']}: {i['started_ms']:.0f}-{i['ended_ms']:.0f} ms")
            c.ok(all(r.get("verdict") == "ok" for r in (doc or {}).get("reports", [])), "every benchmark ok")
        elif a.case == "template":
            vec = os.path.join(ROOT, "resources", "examples", "vector_add")
            rc, doc, _, secs = run(a.kforge, ["verify", vec, "--json", "--pool", runners + ":template"])
            if rc == 3 and not (doc or {}).get("reports"):
                return 77
            c.ok(rc == 0, f"exit 0 (got {rc})")
            pool, eps = pool_block(c, doc, ["tmpl", "gpu0-a"])
            c.ok(all(r.get("verdict") == "pass" for r in (doc or {}).get("reports", [])), "every candidate passes")
            c.ok(sum(e["items"] for e in eps.values()) == 2, "two candidates ran")
        elif a.case == "kill":
            killed = []

            def killer(proc):
                # The victim endpoint's runner: a child of kforge with KF_POOL_VICTIM=1 in its
                # environment. Kill it once, after it has been up for a while (mid-request).
                seen = {}
                while proc.poll() is None and not killed:
                    for pid in os.listdir("/proc"):
                        if not pid.isdigit():
                            continue
                        try:
                            with open(f"/proc/{pid}/environ", "rb") as f:
                                env = f.read()
                            with open(f"/proc/{pid}/cmdline", "rb") as f:
                                cmdline = f.read()
                        except OSError:
                            continue
                        if b"KF_POOL_VICTIM=1" in env and b"kforge-runner" in cmdline:
                            seen.setdefault(pid, time.monotonic())
                            if time.monotonic() - seen[pid] > 2:
                                os.kill(int(pid), signal.SIGKILL)
                                killed.append(pid)
                                print(f"  (killed runner {pid} of endpoint victim)", flush=True)
                                break
                    time.sleep(0.2)

            # tests/gpu/tasks/slow_add: four correct kernels of about 150 ms a launch, so each
            # verification takes seconds and the kill (2 s after the victim's runner appeared)
            # lands while it works.
            slow = os.path.join(HERE, "tasks", "slow_add")
            rc, doc, err, secs = run(a.kforge, ["verify", slow, "--json", "--pool", runners + ":kill"], during=killer)
            if rc == 3 and not (doc or {}).get("reports"):
                return 77
            c.ok(bool(killed), "the victim's runner was killed mid-run")
            reports = (doc or {}).get("reports", [])
            c.ok(len(reports) == 4 and all(r.get("verdict") == "pass" for r in reports),
                 f"every candidate has its report, and passes ({[r.get('verdict') for r in reports]})")
            pool, eps = pool_block(c, doc, ["victim", "gpu0-a"])
            v = eps.get("victim", {})
            c.ok(v.get("restarts") == 1 and not v.get("lost"), "the victim was restarted once and stayed in the pool")
            retried = [i for i in pool.get("items", []) if i.get("attempt", 1) > 1]
            c.ok(len(retried) == 1, f"one candidate ran again ({[(i['candidate'], i['endpoint']) for i in retried]})")
            c.ok("lost during" in err, "stderr says the endpoint was lost")
            c.note(f"the whole run took {secs:.1f} s")
        elif a.case == "gpus_all":
            vec = os.path.join(ROOT, "resources", "examples", "vector_add")
            rc, doc, _, secs = run(a.kforge, ["verify", vec, "--json", "--pool", runners_all])
            if rc == 3 and not (doc or {}).get("reports"):
                return 77
            c.ok(rc == 0, f"exit 0 (got {rc})")
            eps = (doc or {}).get("pool", {}).get("endpoints", [])
            uuids = {e["gpu_uuid"] for e in eps}
            c.ok(len(eps) >= 1 and all(e["name"].startswith("node/") for e in eps), f"node expanded to {[e['name'] for e in eps]}")
            c.ok(len(uuids) == len(eps), "each expanded endpoint reached a GPU of its own")
        else:
            print("unknown case " + a.case)
            return 2
    print("FAILED" if c.failed else "PASSED")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
