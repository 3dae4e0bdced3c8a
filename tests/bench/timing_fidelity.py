#!/usr/bin/env python3
"""Timing fidelity: does `kforge bench` report the time an independent harness measures?

    timing_fidelity.py [--kforge PATH] [--samples 200] [--json-out FILE] [TASK_DIR:CANDIDATE ...]

Default pairs: resources/examples/vector_add:optimized.cu and resources/examples/softmax_fp32:optimized.cu.
For each pair, at the task's first benchmark shape:

 1. `kforge compile TASK --candidate C --arch sm_XY --json --ptx` gives the exact cubin kforge
    built (cubin_base64), the lowered kernel names and the launch plan evaluated at that shape
    (grid, block, dynamic shared memory).
 2. `kforge bench TASK --candidate C --json` gives kforge's median for that shape (candidate and
    LibTorch baseline).
 3. This script loads the same cubin with the CUDA driver API (ctypes, libcuda.so.1), launches it
    on PyTorch tensors (data_ptr) with the same plan, and times it its own way: before each
    sample the L2 is flushed (a buffer of twice the L2 size is zeroed) and the input set
    alternates; CUDA events around each call on the current stream, then a synchronise; 10
    warm-up calls; median of --samples. The LibTorch op of the task's reference is timed the
    same way, interleaved sample by sample (order swapped every sample), when this script knows
    the op.
 4. It prints both medians and the difference in percent (target: within 3 %).

Needs PyTorch with CUDA (python3 on the GPU server) and a GPU. Not a pass/fail test: exits 0
when it measured, 3 when there is no GPU, 1 on any other failure. KF_BENCH_ARGS (shell-split)
is passed to `kforge bench` (e.g. "--time-cap-ms 3000").
"""

import argparse
import ast
import base64
import ctypes
import json
import math
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_PAIRS = ["resources/examples/vector_add:optimized.cu", "resources/examples/softmax_fp32:optimized.cu"]
TARGET_PCT = 3.0


def find_kforge():
    for b in ("gpu-server", "dev", "h-gpu"):
        p = os.path.join(ROOT, "build", b, "app", "cli", "kforge")
        if os.access(p, os.X_OK):
            return p
    return None


# --- the task expression language (integers exact, `/` truncates on integers) ------------------

def _c_div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _c_mod(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _c_div(a, b)
    return math.fmod(a, b)


FUNCS = {
    "ceil_div": lambda a, b: -(-a // b),
    "round_up": lambda a, b: -(-a // b) * b,
    "min": min, "max": max, "abs": abs,
    "next_pow2": lambda a: 1 if a <= 1 else 1 << (int(a) - 1).bit_length(),
    "log2": lambda a: int(a).bit_length() - 1 if isinstance(a, int) else math.log2(a),
    "sqrt": math.sqrt, "float": float, "int": int,
}


def eval_expr(expr, env):
    if isinstance(expr, (int, float)):
        return expr
    src = str(expr).replace("&&", " and ").replace("||", " or ")
    src = "".join(" not " if ch == "!" and nxt != "=" else ch for ch, nxt in zip(src, src[1:] + " "))

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            return {ast.USub: lambda: -v, ast.UAdd: lambda: v, ast.Not: lambda: int(not v)}[type(n.op)]()
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: _c_div(a, b), ast.Mod: lambda: _c_mod(a, b)}
            return ops[type(n.op)]()
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return int(all(vals)) if isinstance(n.op, ast.And) else int(any(vals))
        if isinstance(n, ast.Compare):
            a = ev(n.left)
            for op, r in zip(n.ops, n.comparators):
                b = ev(r)
                ok = {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b,
                      ast.Eq: a == b, ast.NotEq: a != b}[type(op)]
                if not ok:
                    return 0
                a = b
            return 1
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in FUNCS:
            return FUNCS[n.func.id](*[ev(x) for x in n.args])
        raise ValueError(f"unsupported expression: {expr!r}")

    return ev(ast.parse(src.strip(), mode="eval"))


# --- CUDA driver API through ctypes -------------------------------------------------------------

class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        L = self.lib
        L.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        L.cuInit.argtypes = [ctypes.c_uint]
        L.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        L.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        L.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        L.cuModuleUnload.argtypes = [ctypes.c_void_p]
        L.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        L.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        self.check(L.cuInit(0), "cuInit")
        ctx = ctypes.c_void_p()
        self.check(L.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise RuntimeError("no current CUDA context: initialise PyTorch's CUDA first")

    def check(self, res, what):
        if res != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorString(res, ctypes.byref(s))
            raise RuntimeError(f"{what} failed: {res} ({(s.value or b'?').decode()})")

    def load(self, cubin):
        mod = ctypes.c_void_p()
        buf = ctypes.create_string_buffer(cubin, len(cubin))
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), buf), "cuModuleLoadData")
        return mod

    def function(self, mod, name):
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), f"cuModuleGetFunction({name})")
        return fn

    def launch(self, fn, grid, block, smem, stream, params):
        self.check(self.lib.cuLaunchKernel(fn, *grid, *block, smem, stream, params, None), "cuLaunchKernel")


SCALAR_TYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint32": ctypes.c_uint32,
                "uint64": ctypes.c_uint64, "fp32": ctypes.c_float, "fp64": ctypes.c_double}


def torch_dtype(torch, name):
    return {"fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
            "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
            "uint8": torch.uint8, "bool": torch.bool}[name]


def make_input(torch, spec, shape):
    dt = torch_dtype(torch, spec["dtype"])
    if dt.is_floating_point:
        return torch.randn(shape, device="cuda", dtype=torch.float32).to(dt)
    if dt == torch.bool:
        return torch.randint(0, 2, shape, device="cuda").bool()
    return torch.randint(-100 if dt != torch.uint8 else 0, 101, shape, device="cuda", dtype=dt)


def reference_fn(torch, task, inputs):
    """The task's LibTorch reference as a callable, for the single-op forms this script knows."""
    ref = task["reference"]
    if "op" not in ref:
        return None
    op, attrs = ref["op"], ref.get("attrs", {})
    args = [inputs[n] for n in ref["inputs"]]
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}
    unary = {"neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
             "rsqrt": torch.rsqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu,
             "clone": lambda x: x.clone()}
    if op in binary:
        other = args[1] if len(args) > 1 else attrs.get("scalar")
        return lambda: binary[op](args[0], other)
    if op in unary:
        return lambda: unary[op](args[0])
    if op in ("softmax", "log_softmax"):
        f = torch.softmax if op == "softmax" else torch.log_softmax
        return lambda: f(args[0], attrs.get("dim", -1))
    if op == "transpose":
        return lambda: args[0].transpose(attrs["dim0"], attrs["dim1"]).contiguous()
    return None


def parse_shape(s):
    out = {}
    for tok in str(s).replace(",", " ").split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = int(v)
    return out


def run_json(cmd):
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        doc = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        doc = None
    if p.returncode != 0 or doc is None:
        tail = "\n  ".join(p.stderr.strip().splitlines()[-10:])
        print(f"  exit {p.returncode}" + (f"\n  {tail}" if tail else ""))
    return p.returncode, doc


def measure(torch, drv, task_dir, cand, kforge, samples, arch):
    task = json.load(open(os.path.join(task_dir, "task.json")))
    rc, comp = run_json([kforge, "compile", task_dir, "--candidate", cand, "--arch", arch, "--json", "--ptx"])
    if not comp or not comp.get("ok"):
        raise RuntimeError(f"kforge compile failed (exit {rc})")
    build = comp["builds"][0]
    cubin = base64.b64decode(build["result"].get("cubin_base64") or "")
    if not cubin:
        raise RuntimeError("the compile result has no cubin (--ptx should include binaries)")
    launches = build["launches"]
    shape = parse_shape(launches[0].get("shape", ""))
    bench_shapes = [{k: v for k, v in s.items() if k != "label"} for s in task["shapes"]["benchmarks"]]
    if not bench_shapes or shape != bench_shapes[0]:
        raise RuntimeError(f"compile evaluated the plan at {shape}, not at the first benchmark shape {bench_shapes[:1]}")

    rc, bench = run_json([kforge, "bench", task_dir, "--baseline", "eager", "--candidate", cand, "--json"]
                         + shlex.split(os.environ.get("KF_BENCH_ARGS", "")))
    if rc == 3 and not (bench or {}).get("reports"):
        raise SystemExit(3)
    kf = None
    for r in (bench or {}).get("reports") or []:
        for s in r.get("shapes") or []:
            if {k: v for k, v in (s.get("shape") or {}).items()} == shape:
                kf = s
    if kf is None:
        raise RuntimeError(f"kforge bench (exit {rc}) has no result for {shape}")

    # Tensors for the shape: two input sets (alternated), outputs and scratch.
    env = dict(task.get("parameters", {}))
    env.update(shape)

    def dims(spec):
        return [env[d] if isinstance(d, str) else int(d) for d in spec["shape"]]

    sets = []
    for _ in range(2):
        sets.append({i["name"]: make_input(torch, i, dims(i)) for i in task["inputs"]})
    outs = {o["name"]: torch.empty(dims(o), device="cuda", dtype=torch_dtype(torch, o["dtype"])) for o in task["outputs"]}
    cinfo = next(c for c in task["candidates"] if os.path.basename(c["file"]) == cand)
    scratch = {}
    for s in cinfo.get("scratch", []):
        scratch[s["name"]] = (torch.empty(int(eval_expr(s["count"], env)), device="cuda",
                                          dtype=torch_dtype(torch, s["dtype"])), bool(s.get("zero")))

    mod = drv.load(cubin)
    plan = []
    for ldef, lres in zip(cinfo["launches"], launches):
        fn = drv.function(mod, lres["lowered_name"])
        smem = int(lres.get("dynamic_shared_bytes", 0))
        if smem > 48 * 1024:
            drv.check(drv.lib.cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute(max dynamic shared)")
        plan.append((fn, lres["grid"], lres["block"], smem, ldef["args"]))

    def params_for(tensors, args):
        objs = []
        for a in args:
            if isinstance(a, str) or (isinstance(a, dict) and "tensor" in a):
                name = a if isinstance(a, str) else a["tensor"]
                t = tensors[name] if name in tensors else scratch[name][0]
                objs.append(ctypes.c_void_p(t.data_ptr()))
            else:
                objs.append(SCALAR_TYPES[a.get("type", "int32")](eval_expr(a["scalar"], env)))
        arr = (ctypes.c_void_p * max(1, len(objs)))(*[ctypes.cast(ctypes.pointer(o), ctypes.c_void_p) for o in objs])
        return arr, objs

    calls = []  # per input set: [(fn, grid, block, smem, params, keepalive)]
    for st in sets:
        tensors = dict(st)
        tensors.update(outs)
        calls.append([(fn, g, b, sm, *params_for(tensors, args)) for fn, g, b, sm, args in plan])

    def run_candidate(k):
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        for t, zero in scratch.values():
            if zero:
                t.zero_()
        for fn, g, b, sm, arr, _ in calls[k]:
            drv.launch(fn, g, b, sm, stream, arr)

    refs = [reference_fn(torch, task, st) for st in sets]
    # Sanity: the replayed plan computes what the reference computes.
    check = "not checked (reference op unknown to this script)"
    if refs[0] is not None and len(outs) == 1:
        run_candidate(0)
        torch.cuda.synchronize()
        got, want = next(iter(outs.values())).double(), refs[0]().double()
        err = (got - want).abs().max().item()
        scale = max(want.abs().max().item(), 1e-30)
        check = f"max abs error {err:.3g} (reference max {scale:.3g})"
        if not err <= 1e-2 * scale:
            raise RuntimeError(f"the replayed launch plan computes the wrong result: {check}")

    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or 50 * 1024 * 1024
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731

    def timed(fn):
        flush.zero_()
        e0, e1 = ev(), ev()
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        return e0.elapsed_time(e1)

    for i in range(10):
        run_candidate(i % 2)
        if refs[0] is not None:
            refs[i % 2]()
    torch.cuda.synchronize()
    cand_ms, base_ms = [], []
    for i in range(samples):
        k = i % 2
        order = [0, 1] if i % 2 == 0 else [1, 0]
        for which in order:
            if which == 0:
                cand_ms.append(timed(lambda: run_candidate(k)))
            elif refs[k] is not None:
                base_ms.append(timed(refs[k]))
    torch.cuda.synchronize()

    py_c = statistics.median(cand_ms)
    py_b = statistics.median(base_ms) if base_ms else None
    kf_c = (kf.get("candidate") or {}).get("median_ms")
    kf_b = (kf.get("baseline") or {}).get("median_ms")
    pct = lambda a, b: (a - b) / b * 100.0 if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None  # noqa: E731
    return {"task": task["name"], "candidate": cand, "shape": shape, "samples": samples, "check": check,
            "python_median_ms": py_c, "kforge_median_ms": kf_c, "diff_pct": pct(py_c, kf_c),
            "python_baseline_ms": py_b, "kforge_baseline_ms": kf_b, "baseline_diff_pct": pct(py_b, kf_b),
            "kforge_samples": (kf.get("candidate") or {}).get("samples"),
            "python_iqr_ms": (statistics.quantiles(cand_ms, n=4)[2] - statistics.quantiles(cand_ms, n=4)[0])
            if len(cand_ms) >= 4 else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", nargs="*", help="TASK_DIR:CANDIDATE (default: vector_add and softmax_fp32, optimized.cu)")
    ap.add_argument("--kforge", default=os.environ.get("KFORGE") or find_kforge())
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--json-out")
    a = ap.parse_args()
    if not a.kforge:
        ap.error("kforge not found: pass --kforge or set KFORGE")
    try:
        import torch
    except ImportError as e:
        print(f"timing_fidelity: needs PyTorch ({e})", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("timing_fidelity: no CUDA device; nothing measured")
        return 3
    torch.zeros(1, device="cuda")  # make PyTorch's (primary) context current on this thread
    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    drv = Driver()
    rows, status = [], 0
    for pair in a.pairs or DEFAULT_PAIRS:
        task_dir, _, cand = pair.rpartition(":")
        task_dir = task_dir if os.path.isabs(task_dir) else os.path.join(ROOT, task_dir)
        try:
            rows.append(measure(torch, drv, task_dir, cand, a.kforge, a.samples, arch))
        except SystemExit as e:
            print("timing_fidelity: kforge bench reports no GPU")
            return int(e.code or 3)
        except Exception as e:  # report and go on with the next pair
            print(f"timing_fidelity: {pair}: {e}")
            rows.append({"task": os.path.basename(task_dir), "candidate": cand, "error": str(e)})
            status = 1

    def f(x, w=9, p=4):
        return f"{x:{w}.{p}f}" if isinstance(x, (int, float)) else f"{'n/a':>{w}}"

    print()
    print(f"timing fidelity on {torch.cuda.get_device_name(0)}: median of {a.samples} calls, L2 flushed "
          f"before each; target |diff| <= {TARGET_PCT:.0f} %")
    print(f"{'task':<16} {'shape':<18} {'python ms':>9} {'kforge ms':>9} {'diff %':>7}  "
          f"{'torch(py)':>9} {'torch(kf)':>9} {'diff %':>7}  target")
    for r in rows:
        if "error" in r:
            print(f"{r['task']:<16} error: {r['error']}")
            continue
        shape = " ".join(f"{k}={v}" for k, v in r["shape"].items())
        ok = isinstance(r["diff_pct"], float) and abs(r["diff_pct"]) <= TARGET_PCT
        r["within_target"] = ok
        print(f"{r['task']:<16} {shape:<18} {f(r['python_median_ms'])} {f(r['kforge_median_ms'])} "
              f"{f(r['diff_pct'], 7, 2)}  {f(r['python_baseline_ms'])} {f(r['kforge_baseline_ms'])} "
              f"{f(r['baseline_diff_pct'], 7, 2)}  {'ok' if ok else 'MISS'}")
        print(f"{'':<16} replay check: {r['check']}; kforge samples {r.get('kforge_samples')}")
    if a.json_out:
        with open(a.json_out, "w") as fh:
            json.dump({"benchmark": "timing_fidelity", "target_pct": TARGET_PCT, "rows": rows}, fh, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
