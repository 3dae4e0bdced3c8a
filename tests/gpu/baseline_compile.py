#!/usr/bin/env python3
"""GPU end-to-end check of the torch.compile baseline (CTest gpu.baseline.compile;
docs/gpu-validation.md), through the CLI:

    baseline_compile.py --kforge PATH [--examples a,b,...] [--time-cap-ms MS] [--json FILE]

For each example, `kforge bench EXAMPLE --baseline compile --json`: the runner times the
candidate against eager LibTorch; the harness compiles the reference with torch.compile in both
modes, judges it against the float64 result as the runner does, and times eager, both modes and
the candidate's cubin in one process. Checks, per candidate and shape: the compiled baseline
was measured in both modes (or its reason is one the tool gives for a reference it cannot
compile); every speedup is a positive number; the harness's eager and candidate medians are
within 3 % of the runner's (the fidelity of the harness, measured against an independent one).
Prints the table for docs/gpu-validation.md. Exits 0 when every check holds, 1 when one fails,
77 without a GPU.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from gpucheck import SKIP, Checks, run  # noqa: E402

EXAMPLES = ["vector_add", "softmax_fp32", "rms_norm_fp16", "fused_add_rms_norm_fp16", "layer_norm_bf16",
            "cumsum_fp32", "transpose_fp32", "gemm_fp16"]
MODES = ("default", "max-autotune-no-cudagraphs")


def fmt(v, unit=""):
    return "-" if v is None else ("%.4g%s" % (v, unit))


def table_row(r):
    return "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s %% |" % (
        r["example"], r["candidate"], r["shape"], fmt(r["eager_ms"]), fmt(r["default_ms"]),
        fmt(r["max-autotune-no-cudagraphs_ms"]), fmt(r["candidate_ms"]), fmt(r["speedup"], "×"),
        fmt(r["vs_compile"], "×"), fmt(r["eager_gap_pct"]), fmt(r["candidate_gap_pct"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--examples", default=os.environ.get("KF_BASELINE_EXAMPLES") or ",".join(EXAMPLES))
    ap.add_argument("--time-cap-ms", default="1000")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print("skip: %s" % e)
        return SKIP
    if not torch.cuda.is_available():
        print("skip: no CUDA device")
        return SKIP
    c = Checks()
    rows = c.results["rows"] = []
    for name in a.examples.split(","):
        p = run([a.kforge, "bench", os.path.join(ROOT, "resources", "examples", name), "--baseline", "compile",
                 "--time-cap-ms", a.time_cap_ms, "--json"], timeout=900)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            c.check(False, "%s: kforge bench printed no JSON (exit %d): %s" % (name, p.returncode, p.stderr[-600:]))
            continue
        c.check(p.returncode == 0, "%s: kforge bench --baseline compile exits 0 (got %d)" % (name, p.returncode))
        for r in doc["reports"]:
            cand = r.get("candidate", {}).get("file", "?")
            cb = r.get("compile_baseline") or {}
            c.check(cb.get("measured") is True, "%s/%s: torch.compile measured (%s)" % (name, cand, cb.get("reason") or "ok"))
            for s in r.get("shapes", []):
                cmp_ = s.get("compile") or {}
                modes = cmp_.get("modes") or {}
                row = {"example": name, "candidate": cand, "shape": s.get("label"),
                       "eager_ms": s["baseline"].get("median_ms"), "candidate_ms": s["candidate"].get("median_ms"),
                       "speedup": s.get("speedup"), "vs_compile": cmp_.get("speedup"), "best_mode": cmp_.get("best_mode"),
                       "eager_gap_pct": cmp_.get("eager_gap_pct"), "candidate_gap_pct": cmp_.get("candidate_gap_pct"),
                       "harness_eager_ms": cmp_.get("eager_ms"), "harness_candidate_ms": cmp_.get("candidate_ms")}
                for m in MODES:
                    row[m + "_ms"] = (modes.get(m) or {}).get("median_ms")
                    row[m + "_compile_s"] = (modes.get(m) or {}).get("compile_s")
                rows.append(row)
                print(table_row(row), flush=True)   # as it comes: a run cut short still leaves its rows
                where = "%s/%s %s" % (name, cand, s.get("label"))
                for m in MODES:
                    c.check((modes.get(m) or {}).get("measured") is True,
                            "%s: %s measured (%s)" % (where, m, (modes.get(m) or {}).get("reason") or "ok"))
                c.check((cmp_.get("speedup") or 0) > 0, "%s: a speedup over torch.compile (%s)" % (where, fmt(cmp_.get("speedup"), "x")))
                for side in ("eager", "candidate"):
                    gap = cmp_.get(side + "_gap_pct")
                    c.check(gap is not None and abs(gap) <= 3.0,
                            "%s: the harness's %s median within 3 %% of the runner's (%s %%)" % (where, side, fmt(gap)))
    print("\n| example | candidate | shape | eager (ms) | compile default (ms) | compile max-autotune (ms) | candidate (ms) | vs eager | vs torch.compile | harness gap eager / candidate |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(table_row(r))
    c.results["torch"] = torch.__version__
    return c.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
