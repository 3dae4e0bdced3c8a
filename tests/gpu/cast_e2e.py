#!/usr/bin/env python3
"""GPU end-to-end check of .cast packages (CTest gpu.cast.e2e; docs/gpu-validation.md).

    cast_e2e.py --kforge PATH [--work DIR] [--json FILE]

1. `kforge promote` two examples (softmax_fp32, fused_add_rms_norm_fp16, optimized.cu) into a
   fresh registry: verify + benchmark + gates on this GPU;
2. `kforge cast export` them for sm_80, sm_86, sm_89, sm_90 + PTX, and a second package with only
   sm_80 (cubin + compute_80 PTX), whose ops are named *_ptx;
3. makes the runner save inputs and outputs: a copy of each task whose *reference* is changed
   (softmax -> log_softmax, rms_norm eps 0.5) fails every shape, so `kforge verify --dump` writes
   each shape's inputs and the kernel's actual outputs (the kernel and its task parameters are
   untouched);
4. loads both packages with kernelforge_cast in this plain PyTorch process and checks, per saved
   case, that cast::<op> on the same inputs gives outputs bit-identical to the runner's;
5. calls the ops from a torch.compile'd function (inductor) and checks it against eager;
6. times the call overhead on a one-row softmax: a raw cuLaunchKernel through ctypes of the same
   cubin function with arguments packed once, the op through torch.ops.cast, and torch.softmax.
Exits 0 when every check holds, 1 when one fails, 77 when there is no GPU.
"""

import argparse
import ctypes
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "device", "cast", "python"))

SKIP = 77
failures = []
results = {"checks": [], "overhead_us": {}, "ops": {}}


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    results["checks"].append({"ok": bool(ok), "what": what})
    if not ok:
        failures.append(what)


def run(cmd, expect=(0,)):
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    print("$ %s  -> %d (%.1f s)" % (" ".join(cmd), p.returncode, time.time() - t), flush=True)
    if p.returncode not in expect:
        print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--work")
    ap.add_argument("--json")
    ap.add_argument("--bench-cast", help="the bench_cast program (the C++ runtime in a LibTorch program)")
    a = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print("skip: %s" % e)
        return SKIP
    if not torch.cuda.is_available():
        print("skip: no CUDA device for PyTorch")
        return SKIP
    import kernelforge_cast

    work = a.work or tempfile.mkdtemp(prefix="kf-cast-e2e-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    reg = os.path.join(work, "registry")
    env_args = ["--registry", reg]
    tasks = {"softmax_fp32": ("softmax_fp32", lambda t: t["reference"].update(op="log_softmax")),
             "fused_add_rms_norm_fp16": ("fused_add_rms_norm_fp16",
                                         lambda t: t["reference"]["tape"][1]["attrs"].update(eps=0.5))}
    ids = {}
    for name in tasks:
        p = run([a.kforge, "promote", os.path.join(ROOT, "resources", "examples", name), "--candidate", "optimized.cu",
                 "--json", "--time-cap-ms", "1000"] + env_args)
        if p.returncode == 3 and "GPU" in p.stderr:
            print("skip: " + p.stderr.strip())
            return SKIP
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = {}
        check(p.returncode == 0 and out.get("id"), "promote %s: %s" % (name, out.get("id") or p.stderr.strip()[-300:]))
        if out.get("id"):
            ids[name] = out["id"]
    if len(ids) != 2:
        return finish(a)

    pkg = os.path.join(work, "ops.cast")
    p = run([a.kforge, "cast", "export", ids["softmax_fp32"], ids["fused_add_rms_norm_fp16"], "-o", pkg, "--json"] + env_args)
    check(p.returncode == 0, "export both for sm_80,sm_86,sm_89,sm_90 + PTX")
    if p.returncode == 0:
        results["export"] = json.loads(p.stdout)
    pkg80 = os.path.join(work, "ptx80.cast")
    p = run([a.kforge, "cast", "export", ids["softmax_fp32"], ids["fused_add_rms_norm_fp16"], "-o", pkg80, "--arch", "sm_80",
             "--name", ids["softmax_fp32"] + "=softmax_fp32_ptx", "--name", ids["fused_add_rms_norm_fp16"] + "=fused_ptx"]
            + env_args)
    check(p.returncode == 0, "export an sm_80-only package (cubin sm_80 + PTX compute_80)")
    for f in (pkg, pkg80):
        check(run([a.kforge, "cast", "check", f]).returncode == 0, "kforge cast check " + os.path.basename(f))

    # `kforge cast run`: the package loaded as a LibTorch program would, each op against its reference.
    p = run([a.kforge, "cast", "run", pkg, "--runs", "5"])
    print(p.stdout)
    check(p.returncode == 0 and "every output within" in p.stdout, "kforge cast run: both ops within tolerance on every test shape")
    p = run([a.kforge, "cast", "run", pkg, "--runs", "5", "--json"])
    try:
        results["cast_run"] = json.loads(p.stdout)
    except ValueError:
        pass

    ops = kernelforge_cast.load(pkg)
    ops80 = kernelforge_cast.load(pkg80)
    major, minor = torch.cuda.get_device_capability()
    for n in ops.names:
        used = ops.op(n).image_used()
        results["ops"][n] = used
        check(used.startswith("cubin sm_%d%d" % (major, minor)), "cast::%s runs as %s" % (n, used))
    for n in ops80.names:
        used = ops80.op(n).image_used()
        results["ops"][n] = used
        want = "PTX compute_80" if major != 8 else "cubin sm_80"
        check(used.startswith(want), "cast::%s (sm_80-only package) runs as %s" % (n, used))

    # The runner's outputs for inputs it chose: dumped from a copy whose reference disagrees.
    all_cases = []
    for name, (op, edit) in tasks.items():
        copy = os.path.join(work, "tasks", name)
        shutil.copytree(os.path.join(ROOT, "resources", "examples", name), copy)
        with open(os.path.join(copy, "task.json")) as f:
            t = json.load(f)
        edit(t)
        with open(os.path.join(copy, "task.json"), "w") as f:
            json.dump(t, f, indent=2)
        dump = os.path.join(work, "dump", name)
        p = run([a.kforge, "verify", copy, "--candidate", "optimized.cu", "--dump", dump, "--json"], expect=(1,))
        check(p.returncode == 1, "%s with a changed reference fails, so the runner dumps every shape" % name)
        cases = sorted(c for c in glob.glob(os.path.join(dump, "**", "case.json"), recursive=True))
        check(len(cases) >= 3, "%s: %d case folders with the runner's inputs and outputs" % (name, len(cases)))
        all_cases += [(op, os.path.dirname(c)) for c in cases]
        same = same80 = total = 0
        worst80 = 0.0
        for case_file in cases:
            case = os.path.dirname(case_file)
            with open(case_file) as f:
                meta = json.load(f)
            inputs = [t["name"] for t in ops.manifest["ops"][0 if name == "softmax_fp32" else 1]["inputs"]]
            outputs = [t["name"] for t in ops.manifest["ops"][0 if name == "softmax_fp32" else 1]["outputs"]]
            xs = [torch.from_numpy(np.load(os.path.join(case, "inputs", n + ".npy"))).cuda() for n in inputs]
            got = getattr(ops, op)(*xs)
            got80 = getattr(ops80, "softmax_fp32_ptx" if name == "softmax_fp32" else "fused_ptx")(*xs)
            got = got if isinstance(got, tuple) else (got,)
            got80 = got80 if isinstance(got80, tuple) else (got80,)
            torch.cuda.synchronize()
            for i, n in enumerate(outputs):
                actual = np.load(os.path.join(case, "actual", n + ".npy"))
                mine = got[i].cpu().numpy()
                total += 1
                if mine.shape == actual.shape and mine.tobytes() == actual.tobytes():
                    same += 1
                else:
                    print("  differs: %s %s %s" % (name, os.path.basename(case), n))
                m80 = got80[i].cpu().numpy()
                if m80.tobytes() == actual.tobytes():
                    same80 += 1
                else:
                    worst80 = max(worst80, float(np.max(np.abs(m80.astype(np.float64) - actual.astype(np.float64)))))
            del meta
        check(total > 0 and same == total, "%s: cubin outputs bit-identical to the runner's in %d of %d outputs"
              % (name, same, total))
        results["ops"][name + " ptx bit-identical"] = "%d of %d (largest difference %.3g)" % (same80, total, worst80)
        print("note  %s: PTX-path outputs bit-identical in %d of %d (largest difference %.3g)" % (name, same80, total, worst80))

    # torch.compile (inductor) around the ops.
    def block(x, r, w):
        y, h = torch.ops.cast.fused_add_rms_norm_fp16(x, r, w)
        return torch.ops.cast.softmax_fp32(y.float() * 2.0), h

    x = torch.randn(64, 1024, device="cuda", dtype=torch.float16)
    r = torch.randn_like(x)
    w = torch.randn(1024, device="cuda", dtype=torch.float16)
    try:
        compiled = torch.compile(block, fullgraph=True)
        got = compiled(x, r, w)
        want = block(x, r, w)
        check(torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]),
              "a torch.compile'd (inductor, fullgraph) function calling cast:: ops matches eager bit for bit")
    except Exception as e:  # noqa: BLE001 - reported as a failed check
        check(False, "torch.compile around cast:: ops: %s: %s" % (type(e).__name__, e))

    substitution(torch, ops)
    overhead(torch, ops)
    if a.bench_cast and os.path.exists(a.bench_cast):
        out = os.path.join(work, "bench_cast.json")
        cmd = [a.bench_cast, pkg]
        for op, case in all_cases:
            cmd += ["--case", "%s=%s" % (op, case)]
        p = run(cmd + ["--overhead", "softmax_fp32", "--json", out], expect=(0, 1))
        print(p.stdout)
        if os.path.exists(out):
            with open(out) as f:
                b = json.load(f)
            same = sum(1 for c in b["cases"] if c["bit_identical"])
            check(same == len(b["cases"]) and same > 0,
                  "LibTorch program (kf_cast): outputs bit-identical to the runner's in %d of %d" % (same, len(b["cases"])))
            results["cpp"] = b
            cpp = b["overhead_us"].get("cast op minus raw launch (C++)")
            if cpp is not None:
                print("note  C++ call overhead above a raw launch: %.2f µs (goal ≤ 3)" % cpp)
        else:
            check(False, "bench_cast ran: " + p.stderr[-500:])
    else:
        check(False, "bench_cast (the LibTorch program) was not built")
    return finish(a)


def substitution(torch, ops):
    """A block built here (residual add -> RMSNorm -> linear -> softmax), exported, its matching
    call sites replaced by the package's kernels (Package.substitute): which were replaced, the
    outputs against the original, and both timed end to end with CUDA events."""

    class Block(torch.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(d))
            self.lin = torch.nn.Linear(d, d)

        def forward(self, x, r):
            h = x + r
            y = torch.nn.functional.rms_norm(h, [x.shape[-1]], self.w, 1e-6)
            return torch.softmax(self.lin(y).float(), -1), h

    torch.manual_seed(0)
    model = Block(4096).half().cuda().eval()
    # 16384 rows: GPU-bound (at 2048 rows the exported module's Python wrapper, ~0.2 ms, hid the kernels).
    x = torch.randn(16384, 4096, device="cuda", dtype=torch.float16)
    r = torch.randn_like(x)
    with torch.no_grad():
        gm, report = ops.substitute(model, (x, r))
        done = sorted((e["op"], e["cast_op"]) for e in report if e["status"] == "substituted")
        print("substitution:\n" + "\n".join("  %(op)-10s %(node)-12s %(status)-11s %(cast_op)s%(reason)s" % e for e in report))
        check(done == [("add", "fused_add_rms_norm_fp16"), ("rms_norm", "fused_add_rms_norm_fp16"),
                       ("softmax", "softmax_fp32")],
              "the block's add + rms_norm and its softmax are replaced by the package's kernels (%s)" % done)
        want = model(x, r)
        got = gm(x, r)
        err = (got[0] - want[0]).abs().max().item()
        check(torch.equal(got[1], want[1]) and err < 1e-3,
              "the substituted block's outputs: h bit-identical, softmax within %.2g of the original" % err)

        def timed(f):
            for _ in range(5):
                f(x, r)
            ms = []
            for _ in range(30):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                f(x, r)
                b.record()
                torch.cuda.synchronize()
                ms.append(a.elapsed_time(b))
            ms.sort()
            return ms[len(ms) // 2]

        # The exported module without substitution: the same wrapper (input checks, unflattening)
        # as the substituted one, so the ratio is the kernels' and not the wrapper's.
        plain = torch.export.export(model, (x, r)).module()
        eager, exported, cast = timed(model), timed(plain), timed(gm)
    results["model_preview"] = {"eager_ms": eager, "exported_ms": exported, "substituted_ms": cast,
                                "speedup_vs_exported": exported / cast, "softmax_max_abs_error": err,
                                "substituted": done}
    print("note  a 16384x4096 fp16 block end to end (model level, same inputs, median of 30): eager module %.3f ms, "
          "exported module %.3f ms, exported with the package's kernels %.3f ms (%.2fx against the exported)"
          % (eager, exported, cast, exported / cast))


def overhead(torch, ops):
    from kernelforge_cast import _driver
    op = ops.op("softmax_fp32")
    x = torch.randn(1, 32, device="cuda")
    y = torch.empty_like(x)
    n = 20000

    def per_call(fn):
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n // 5):
                fn()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t) / (n // 5) * 1e6)
        return statistics.median(samples)

    # The raw launch: the function the op loaded, its plan for this shape, arguments packed once.
    torch.ops.cast.softmax_fp32(x)   # loads the module and makes the plan for this shape
    functions, _ = op._functions(torch.cuda.current_device())
    outputs, scratch, launches = op._plan(torch.cuda.current_device(), (x,))
    i, grid, block, shared, args, array = launches[0]
    ptrs = [ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr())]
    params = array(*[ctypes.addressof(ptrs[a]) if isinstance(a, int) else ctypes.addressof(a) for a in args])
    stream = torch.cuda.current_stream().cuda_stream
    fn = functions[i]
    rows = {
        "raw cuLaunchKernel (ctypes, packed once)": lambda: _driver.launch(fn, grid, block, shared, stream, params),
        "torch.ops.cast.softmax_fp32(x)": lambda: torch.ops.cast.softmax_fp32(x),
        "torch.softmax(x, -1) (aten)": lambda: torch.softmax(x, -1),
    }
    for label, f in rows.items():
        results["overhead_us"][label] = round(per_call(f), 2)
    raw = results["overhead_us"]["raw cuLaunchKernel (ctypes, packed once)"]
    cast = results["overhead_us"]["torch.ops.cast.softmax_fp32(x)"]
    results["overhead_us"]["cast op minus raw launch"] = round(cast - raw, 2)
    print("\ncall overhead, µs per call (median of 5 × %d calls, 1×32 fp32 softmax):" % (n // 5))
    for k, v in results["overhead_us"].items():
        print("  %-45s %8.2f" % (k, v))
    print("note  Python call overhead above a raw launch: %.2f µs (goal ≤ 15)" % (cast - raw))


def finish(a):
    results["failures"] = failures
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    print("\n%d checks, %d failed" % (len(results["checks"]), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
