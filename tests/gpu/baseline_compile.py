#!/usr/bin/env python3
"""GPU check of the torch.compile baseline's compile step (CTest gpu.baseline.compile).

    baseline_compile.py [--json FILE] [--examples a,b,...]

For each example (first benchmark shape) and each mode: compile the task's reference ahead of
time with Inductor (kernelforge_baseline), check it against eager (the tool's own check), and
time eager and compiled on the same inputs with CUDA events, an L2 flush before every call and
the two alternating, median of 30 after 5 warm-up. This is a preview of the second baseline's
numbers, not the runner's measurement (the runner will time the same packages with its own
harness); it says how strong the baseline a fused kernel must beat is.
Exits 0 when every compile and check holds, 1 when one fails, 77 without a GPU or Triton.
"""

import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "device", "baseline", "python"))
sys.path.insert(0, os.path.join(ROOT, "device", "cast", "python"))

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--work", default=None)
    # One example by default: each AOTInductor compile takes 60-90 s on the server (run 53).
    ap.add_argument("--examples", default="fused_add_rms_norm_fp16")
    a = ap.parse_args()
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as e:
        print("skip: %s" % e)
        return SKIP
    if not torch.cuda.is_available():
        print("skip: no CUDA device")
        return SKIP
    from kernelforge_baseline import _compile, compile_baseline
    work = a.work or os.path.join(os.getcwd(), "baseline-compile")
    os.makedirs(work, exist_ok=True)
    rows, failures = [], []
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for name in a.examples.split(","):
        folder = os.path.join(ROOT, "resources", "examples", name)
        with open(os.path.join(folder, "task.json")) as f:
            task = json.load(f)
        shape = task["shapes"]["benchmarks"][0]
        label = shape["label"]
        dims = {k: v for k, v in shape.items() if k != "label"}
        inputs = _compile.make_inputs(task, dims, "cuda", 1)
        eager = _compile.reference_module(task).eval()
        row = {"task": name, "shape": label, "dims": dims}
        programs = {"eager": eager}
        for mode in _compile.MODES:
            r = compile_baseline(folder, label, mode, "cuda", os.path.join(work, "%s-%s-%s.pt2" % (name, label, mode)))
            row[mode] = {"measured": r["measured"], "reason": r["reason"], "compile_s": r["compile_s"],
                         "triton": r["triton"], "check": r["check"]}
            print("%-26s %-12s %-28s %s" % (name, label, mode, ("compiled in %.1f s, matches eager" % r["compile_s"])
                                            if r["measured"] else "NOT MEASURED: " + r["reason"]), flush=True)
            if not r["measured"]:
                failures.append("%s %s: %s" % (name, mode, r["reason"]))
                continue
            programs[mode] = torch._inductor.aoti_load_package(r["package"])
        times = {k: [] for k in programs}
        with torch.no_grad():
            for i in range(35):
                for k in (list(programs) if i % 2 == 0 else list(reversed(list(programs)))):
                    flush.zero_()
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    programs[k](*inputs)
                    end.record()
                    end.synchronize()
                    if i >= 5:
                        times[k].append(start.elapsed_time(end))
        for k, t in times.items():
            row.setdefault(k, {})["median_ms"] = statistics.median(t)
        rows.append(row)
        print("  medians (ms): " + ", ".join("%s %.4f" % (k, row[k]["median_ms"]) for k in times)
              + "".join("; %s is %.2f× eager" % (m, row["eager"]["median_ms"] / row[m]["median_ms"])
                        for m in _compile.MODES if "median_ms" in row.get(m, {})), flush=True)
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "failures": failures, "torch": torch.__version__}, f, indent=2)
    print("\n%d example(s), %d failure(s)" % (len(rows), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
