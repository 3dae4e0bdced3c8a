#!/usr/bin/env python3
"""Streaming-copy bandwidth: how close does a plain float4 copy get to the card's peak?

    stream_copy_bandwidth.py [--kforge PATH] [--json-out FILE] [--target-pct 90] [--peak-gbs 3350]

Runs `kforge bench tests/gpu/tasks/stream_copy --json` (fp32 copy, reference `clone`; benchmark
shapes 64M and 256M elements, i.e. 256 MiB and 1 GiB each way) and prints, per shape, the
candidate's and LibTorch's median, achieved GB/s (8 bytes per element), the report's
pct_peak_bandwidth and the achieved bandwidth as a share of the nominal peak (3.35 TB/s for an
H100 SXM; --peak-gbs), against the target of 90 %. Not a pass/fail test: exits 0 when it
measured, 3 when kforge reports no GPU, 1 otherwise. KF_BENCH_ARGS (shell-split) goes to kforge.
Standard library only.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def find_kforge():
    for b in ("gpu-server", "dev", "h-gpu"):
        p = os.path.join(ROOT, "build", b, "app", "cli", "kforge")
        if os.access(p, os.X_OK):
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kforge", default=os.environ.get("KFORGE") or find_kforge())
    ap.add_argument("--json-out")
    ap.add_argument("--target-pct", type=float, default=90.0)
    ap.add_argument("--peak-gbs", type=float, default=3350.0, help="nominal peak for the target (H100 SXM: 3350)")
    a = ap.parse_args()
    if not a.kforge:
        ap.error("kforge not found: pass --kforge or set KFORGE")
    task = os.path.join(HERE, "tasks", "stream_copy")
    cmd = [a.kforge, "bench", task, "--baseline", "eager", "--json"] + shlex.split(os.environ.get("KF_BENCH_ARGS", ""))
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    reports = doc.get("reports") or []
    if not reports:
        print(f"stream_copy_bandwidth: kforge bench exited {p.returncode} without a report")
        print("  " + "\n  ".join(p.stderr.strip().splitlines()[-10:]))
        return 3 if p.returncode == 3 else 1

    rows = []
    for r in reports:
        envr = r.get("environment") or {}
        peak = envr.get("peak_bandwidth_gbs")
        for s in r.get("shapes") or []:
            n = (s.get("shape") or {}).get("N")
            cm = (s.get("candidate") or {}).get("median_ms")
            bm = (s.get("baseline") or {}).get("median_ms")
            nbytes = s.get("bytes") or (8 * n if isinstance(n, int) else None)
            gbs = s.get("achieved_gbs")
            if gbs is None and nbytes and cm:
                gbs = nbytes / (cm * 1e-3) / 1e9
            base_gbs = nbytes / (bm * 1e-3) / 1e9 if nbytes and bm else None
            rows.append({"candidate": (r.get("candidate") or {}).get("file", ""), "shape": s.get("shape"), "label": s.get("label", ""), "bytes": nbytes,
                         "candidate_ms": cm, "baseline_ms": bm, "achieved_gbs": gbs, "baseline_gbs": base_gbs,
                         "pct_peak_bandwidth": s.get("pct_peak_bandwidth"), "report_peak_gbs": peak,
                         "pct_of_nominal": gbs / a.peak_gbs * 100 if gbs else None,
                         "meets_target": bool(gbs) and gbs >= a.target_pct / 100 * a.peak_gbs,
                         "flags": s.get("flags") or [], "verdict": r.get("verdict"),
                         "gpu": envr.get("gpu")})

    def f(x, w=9, p=1):
        return f"{x:{w}.{p}f}" if isinstance(x, (int, float)) else f"{'n/a':>{w}}"

    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "?")
    print()
    print(f"streaming copy on {gpu}: target >= {a.target_pct:.0f} % of {a.peak_gbs:.0f} GB/s "
          f"= {a.target_pct / 100 * a.peak_gbs:.0f} GB/s (kforge exit {p.returncode})")
    print(f"{'candidate':<18} {'shape':<14} {'MiB/way':>8} {'copy ms':>9} {'GB/s':>9} {'%peak':>7} {'%3.35T':>7}  "
          f"{'clone ms':>9} {'GB/s':>9}  target  flags")
    for r in rows:
        mib = r["bytes"] / 2 / 2**20 if r["bytes"] else None
        print(f"{r['candidate']:<18} {'N=' + str((r['shape'] or {}).get('N')):<14} {f(mib, 8, 0)} {f(r['candidate_ms'], 9, 4)} "
              f"{f(r['achieved_gbs'], 9, 0)} {f(r['pct_peak_bandwidth'], 7, 1)} {f(r['pct_of_nominal'], 7, 1)}  "
              f"{f(r['baseline_ms'], 9, 4)} {f(r['baseline_gbs'], 9, 0)}  {'ok' if r['meets_target'] else 'MISS':<6}  "
              f"{','.join(r['flags'])}")
    if rows and rows[0].get("report_peak_gbs"):
        print(f"(the report's peak: {rows[0]['report_peak_gbs']} GB/s)")
    if a.json_out:
        with open(a.json_out, "w") as fh:
            json.dump({"benchmark": "stream_copy_bandwidth", "target_pct": a.target_pct, "nominal_peak_gbs": a.peak_gbs,
                       "kforge_exit": p.returncode, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
