#!/usr/bin/env python3
"""Test fixture (tst_compilebaseline): a scripted stand-in for `python -m kernelforge_baseline`,
so the plumbing kforge owns — the spec it writes, the cubin, PYTHONPATH, reading the result back —
is tested without torch or a GPU. It is a double, never the real harness: the real one is
tests/baseline (CPU) and gpu.baseline.compile (H100).

Invoked as the "python" of CompileBaselineOptions: argv = [-m, kernelforge_baseline, bench, SPEC,
--out, RESULT]. $KF_SCRIPTED_HARNESS picks the behaviour: measured | crash | garbage;
$KF_SCRIPTED_HARNESS_SPEC, if set, names a file to copy the spec to.
"""

import json
import os
import sys

spec_path, out = sys.argv[4], sys.argv[6]
mode = os.environ.get("KF_SCRIPTED_HARNESS", "measured")
if mode == "crash":
    print("Segmentation fault (scripted)", file=sys.stderr)
    os.kill(os.getpid(), 9)
if mode == "garbage":
    with open(out, "w") as f:
        f.write('{"schema_version": 1, "measured": true, "shapes": [{"label": "", "measured": true}]}')
    sys.exit(0)
with open(spec_path) as f:
    spec = json.load(f)
if os.environ.get("KF_SCRIPTED_HARNESS_SPEC"):  # the test reads the spec kforge wrote
    with open(os.environ["KF_SCRIPTED_HARNESS_SPEC"], "w") as f:
        json.dump(spec, f)
problems = []
if not os.path.isfile(spec["task"]):
    problems.append("task %s missing" % spec["task"])
cand = spec["candidate"]
if os.path.getsize(cand["image"]) < 100:
    problems.append("cubin too small")
if not all(l["lowered"] and l["grid"] and l["block"] for l in cand["op"]["launches"]):
    problems.append("launches without lowered names or geometry")
if not any(os.path.isfile(os.path.join(p, "kernelforge_baseline", "__main__.py"))
           for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p):
    problems.append("PYTHONPATH lacks the harness folder")
shapes = []
for i, s in enumerate(spec["shapes"]):
    eager = 0.2 + 0.01 * i
    shapes.append({"label": s["label"], "dims": s["dims"], "measured": True, "reason": "",
                   "eager": {"median_ms": eager, "samples": 20, "median_rel_spread": 0.01},
                   "candidate": {"median_ms": 0.1, "samples": 20},
                   "compiled": {m: {"measured": True, "reason": "", "compile_s": 1.5,
                                    "timing": {"median_ms": 0.12 if m == "default" else 0.11, "samples": 20}}
                                for m in spec["modes"]}})
result = {"schema_version": 1, "measured": not problems, "reason": "; ".join(problems), "device": "cuda",
          "gpu": "scripted", "modes": spec["modes"], "torch": "2.11.0", "triton": "3.6.0", "python": "3.12",
          "candidate_image": "cubin %s (forced)" % cand["arch"], "shapes": shapes if not problems else []}
with open(out, "w") as f:
    json.dump(result, f)
