"""GPU end-to-end check of `kforge generate` (CTest gpu.generate; docs/generate.md,
docs/gpu-validation.md), through the CLI:

    generate_check.py --kforge PATH [--tasks DIR,DIR,...] [--bench] [--held-out N]
                      [--time-cap-ms MS] [--extra ARG ...] [--json FILE]

For every task (default: the examples and tests/data/generate/*): copy the task to a temporary
folder, `kforge generate COPY --name gen_check.cu`, then `kforge verify COPY --candidate
gen_check.cu --held-out N` (every test shape and N held-out shapes must pass). A task whose
reference the generator does not support must be refused with exit 2 and one sentence naming the
step. With --bench, `kforge bench COPY --candidate gen_check.cu --baseline eager`: the speedup
over LibTorch and the share of the DRAM peak per benchmark shape, printed as the table in
docs/gpu-validation.md. Exits 0 when every check holds, 1 when one fails, 77 without a GPU.
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

UNSUPPORTED = {"cumsum_fp32": "cumsum", "transpose_fp32": "transpose", "gemm_fp16": "matmul"}


def default_tasks():
    tasks = sorted(glob.glob(os.path.join(ROOT, "resources", "examples", "*", "task.json")))
    tasks += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "generate", "*", "task.json")))
    return [os.path.dirname(t) for t in tasks]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--tasks", default=os.environ.get("KF_GENERATE_TASKS", ""))
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--held-out", default="4")
    ap.add_argument("--time-cap-ms", default="1000")
    ap.add_argument("--extra", action="append", default=[], help="extra kforge generate argument")
    ap.add_argument("--json")
    a = ap.parse_args()
    tasks = [t if os.path.isabs(t) else os.path.join(ROOT, t) for t in a.tasks.split(",") if t] or default_tasks()
    c = Checks()
    rows = c.results["rows"] = []
    work = tempfile.mkdtemp(prefix="kf-generate-")
    no_gpu = False
    try:
        for src in tasks:
            name = os.path.basename(src)
            copy = os.path.join(work, name)
            shutil.copytree(src, copy)
            g = run([a.kforge, "generate", copy, "--name", "gen_check.cu", "--json"] + a.extra)
            if name in UNSUPPORTED:
                c.check(g.returncode == 2 and UNSUPPORTED[name] + " is not supported" in g.stderr,
                        "%s: refused, naming %s (exit %d: %s)" % (name, UNSUPPORTED[name], g.returncode, g.stderr.strip()[-300:]))
                continue
            if not c.check(g.returncode == 0, "%s: generated (exit %d) %s" % (name, g.returncode, g.stderr.strip()[-600:])):
                continue
            summary = json.loads(g.stdout)
            c.check(summary["compile"].get("status") == "clean",
                    "%s: compiles cleanly (%s)" % (name, json.dumps(summary["compile"])))
            v = run([a.kforge, "verify", copy, "--candidate", "gen_check.cu", "--held-out", a.held_out, "--json"], timeout=900)
            if v.returncode == 3 and not v.stdout.strip():
                no_gpu = True
                print("skip: %s" % v.stderr.strip()[-400:])
                break
            try:
                doc = json.loads(v.stdout)
                rep = doc["reports"][0]
            except (ValueError, KeyError, IndexError):
                c.check(False, "%s: kforge verify printed no report (exit %d): %s" % (name, v.returncode, v.stderr[-600:]))
                continue
            failing = []
            for s in rep.get("shapes", []):
                if s.get("passed") is False:
                    why = next((t.get("failure") or t.get("launch_error") for t in s.get("trials", [])
                                if not t.get("passed")), "")
                    failing.append("%s %s: %s" % (s.get("label"), json.dumps(s.get("shape")), why))
            c.check(v.returncode == 0 and rep.get("verdict") == "pass",
                    "%s: the generated candidate passes verify on %d shapes (verdict %s, failing: %s) %s" % (
                        name, len(rep.get("shapes", [])), rep.get("verdict"), "; ".join(failing) or "none",
                        "" if rep.get("verdict") == "pass" else rep.get("summary", "")[:400]))
            if not a.bench or rep.get("verdict") != "pass":
                continue
            b = run([a.kforge, "bench", copy, "--candidate", "gen_check.cu", "--baseline", "eager",
                     "--time-cap-ms", a.time_cap_ms, "--json"], timeout=900)
            try:
                brep = json.loads(b.stdout)["reports"][0]
            except (ValueError, KeyError, IndexError):
                c.check(False, "%s: kforge bench printed no report (exit %d): %s" % (name, b.returncode, b.stderr[-600:]))
                continue
            speedups = []
            for s in brep.get("shapes", []):
                row = {"task": name, "shape": s.get("label"), "eager_ms": s["baseline"].get("median_ms"),
                       "generated_ms": s["candidate"].get("median_ms"), "speedup": s.get("speedup"),
                       "pct_peak_bandwidth": s.get("pct_peak_bandwidth"), "achieved_gbs": s.get("achieved_gbs")}
                rows.append(row)
                if s.get("speedup"):
                    speedups.append(s["speedup"])
                print("| %s | %s | %.4g | %.4g | %.2f× | %.0f %% |" % (
                    name, row["shape"], row["eager_ms"] or 0, row["generated_ms"] or 0, row["speedup"] or 0,
                    row["pct_peak_bandwidth"] or 0), flush=True)
            geo = math.exp(sum(math.log(x) for x in speedups) / len(speedups)) if speedups else 0
            c.results.setdefault("geomean", {})[name] = geo
            c.check(geo > 0, "%s: benchmarked, geomean speedup over LibTorch %.2f×" % (name, geo))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if no_gpu and not c.failures:
        return SKIP
    if rows:
        print("\n| task | shape | LibTorch (ms) | generated (ms) | speedup | DRAM peak |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print("| %s | %s | %.4g | %.4g | %.2f× | %.0f %% |" % (r["task"], r["shape"], r["eager_ms"] or 0,
                                                               r["generated_ms"] or 0, r["speedup"] or 0,
                                                               r["pct_peak_bandwidth"] or 0))
    return c.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
