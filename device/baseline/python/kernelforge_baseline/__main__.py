"""python -m kernelforge_baseline bench SPEC.json [--out RESULT.json]
python -m kernelforge_baseline bench --task TASK [--shape LABEL ...] [--mode M ...] [--device cuda|cpu] [--json]

Exit status: 0 measured; 1 not measured (the reason is printed or in the result); 2 a usage error.

A spec (what kforge writes) is a JSON object:
  task       the task.json path
  shapes     [{"label": ..., "dims": {symbol: value}}]
  modes      torch.compile modes (default: both)
  device     "cuda" or "cpu"
  sampling   {warmup, min_samples, max_samples, target_spread, time_cap_ms}
  seed       of the input sets
  candidate  {"op": launch plan in .cast manifest form, "arch": "sm_90", "image": cubin path} or null
"""

import argparse
import json
import os
import sys

from ._bench import bench
from ._task import MODES, find_shape


def _load_spec(a):
    if a.spec:
        with open(a.spec, encoding="utf-8") as f:
            spec = json.load(f)
    else:
        spec = {"task": a.task, "modes": a.mode or list(MODES), "device": a.device, "seed": 0}
    path = spec["task"]
    path = os.path.join(path, "task.json") if os.path.isdir(path) else path
    with open(path, encoding="utf-8") as f:
        spec["task"] = json.load(f)
    if not a.spec:
        benches = [s.get("label") for s in spec["task"].get("shapes", {}).get("benchmarks", [])]
        spec["shapes"] = [dict(zip(("label", "dims"), find_shape(spec["task"], label))) for label in (a.shape or benches)]
    spec["files"] = {}
    cand = spec.get("candidate")
    if cand:
        with open(cand["image"], "rb") as f:
            spec["files"][cand["image"]] = f.read()
        cand["op"]["images"] = {cand["arch"]: cand["image"]}
    return spec


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m kernelforge_baseline",
                                description="Time a KernelForge task's reference under torch.compile beside eager "
                                            "and the candidate.")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bench", help="compile, check and time the reference (and a candidate)")
    b.add_argument("spec", nargs="?", help="a spec file (what kforge bench writes)")
    b.add_argument("--task", help="without a spec: the task folder or task.json")
    b.add_argument("--shape", action="append", help="a benchmark or test shape's label (repeatable; default: the benchmarks)")
    b.add_argument("--mode", action="append", choices=MODES, help="a torch.compile mode (repeatable; default: both)")
    b.add_argument("--device", choices=("cuda", "cpu"))
    b.add_argument("--out", help="write the result (JSON) to this file")
    b.add_argument("--json", action="store_true", help="print the result as JSON")
    b.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    a = p.parse_args(argv)
    if bool(a.spec) == bool(a.task):
        p.error("give a spec file or --task, not both or neither")
    try:
        spec = _load_spec(a)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("kernelforge_baseline: cannot read the spec: %s" % e, file=sys.stderr)
        return 2
    log = (lambda text: None) if a.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    r = bench(spec, log)
    text = json.dumps(r, indent=2, allow_nan=False)
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, a.out)
    if a.json:
        print(text)
    elif not r["measured"]:
        print("compile baseline: not measured: %s" % r["reason"], file=sys.stderr)
    else:
        for s in r["shapes"]:
            parts = ["eager %.4g ms" % s["eager"]["median_ms"]] if s["measured"] else [s["reason"]]
            for mode, e in s["compiled"].items():
                parts.append("%s %s" % (mode, "%.4g ms (compiled in %.1f s)" % (e["timing"]["median_ms"], e["compile_s"])
                                        if e["measured"] else "not measured: " + e["reason"]))
            if s.get("candidate"):
                parts.append("candidate %.4g ms" % s["candidate"]["median_ms"])
            print("%s: %s" % (s["label"], "; ".join(parts)))
    return 0 if r["measured"] else 1


if __name__ == "__main__":
    sys.exit(main())
