"""The reference as a module, its AOTInductor package for one shape, and the check against eager."""

import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time

MODES = ("default", "max-autotune-no-cudagraphs")
# Inductor settings of each mode. AOTInductor never uses CUDA graphs, so max-autotune here is
# torch.compile's "max-autotune-no-cudagraphs": autotuned GEMMs and pointwise/reduction configs.
INDUCTOR_CONFIGS = {
    "default": {},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "max_autotune_pointwise": True, "max_autotune_gemm": True},
}


class NotCompilable(ValueError):
    """The task's reference cannot be compiled; the message says why."""


class CompileResult(dict):
    """What `compile` reports (printed with --json): measured or not, and why."""


def _torch():
    import torch
    return torch


def _dtypes(torch):
    return {"fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
            "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
            "uint8": torch.uint8, "bool": torch.bool}


def _steps(task):
    """The reference as a list of tape steps: {op, inputs, attrs, output}."""
    ref = task.get("reference")
    outputs = [o["name"] for o in task["outputs"]]
    if not isinstance(ref, dict):
        raise NotCompilable("the task has no reference")
    if "torchscript" in ref:
        raise NotCompilable("the reference is a TorchScript module, which torch.export (and so torch.compile "
                            "ahead of time) does not take; write it as a catalog op or an op tape to measure "
                            "the compiled baseline")
    if "op" in ref:
        return [{"op": ref["op"], "inputs": ref.get("inputs") or [i["name"] for i in task["inputs"]],
                 "attrs": ref.get("attrs") or {}, "output": outputs[0]}]
    if "tape" in ref:
        steps = []
        for i, s in enumerate(ref["tape"]):
            out = s.get("output") or (outputs[0] if i == len(ref["tape"]) - 1 else None)
            steps.append({"op": s["op"], "inputs": s["inputs"], "attrs": s.get("attrs") or {}, "output": out})
        return steps
    raise NotCompilable("the reference is none of op, tape or torchscript")


def reference_module(task):
    """A torch.nn.Module computing the task's outputs from its inputs (in task order), with the
    catalog semantics of the .cast runtime's reference (the runner's mapping)."""
    torch = _torch()
    from kernelforge_cast._reference import OPS
    steps = _steps(task)
    for s in steps:
        if s["op"] not in OPS:
            raise NotCompilable("the reference uses \"%s\", which this tool does not know" % s["op"])
    dtypes = _dtypes(torch)
    inputs = [i["name"] for i in task["inputs"]]
    outputs = [(o["name"], dtypes[o["dtype"]]) for o in task["outputs"]]

    class TaskReference(torch.nn.Module):
        def forward(self, *xs):
            values = dict(zip(inputs, xs))
            for s in steps:
                values[s["output"]] = OPS[s["op"]]([values[n] for n in s["inputs"]], s["attrs"])
            return tuple(values[n].to(dtype) if values[n].dtype != dtype else values[n] for n, dtype in outputs)

    return TaskReference()


def _extent(e, dims, params):
    if isinstance(e, int):
        return e
    if isinstance(e, str) and e.isdigit():
        return int(e)
    if e in dims:
        return int(dims[e])
    raise NotCompilable("the extent %r is not a symbol of the shape" % (e,))


def find_shape(task, label):
    """(label, {symbol: value}) of the benchmark (else test) shape called `label`."""
    shapes = task.get("shapes", {})
    for kind in ("benchmarks", "tests"):
        for s in shapes.get(kind, []):
            if s.get("label") == label:
                return label, {k: v for k, v in s.items() if k != "label"}
    raise NotCompilable("the task has no shape labelled %r" % label)


def make_inputs(task, dims, device, seed):
    torch = _torch()
    dtypes = _dtypes(torch)
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in task["inputs"]:
        shape = [_extent(e, dims, task.get("parameters", {})) for e in i["shape"]]
        dtype = dtypes[i["dtype"]]
        if dtype.is_floating_point:
            x = torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)
        elif dtype == torch.bool:
            x = torch.randint(0, 2, shape, generator=g).to(torch.bool)
        else:
            x = torch.randint(0, 8, shape, generator=g).to(dtype)
        out.append(x.to(device))
    return tuple(out)


# The runner's defaults per dtype (engine/task/Task.cpp, Tolerance::defaultFor): rtol, atol;
# atol is scaled by the reference's RMS unless the task says "absolute".
DEFAULT_TOLERANCE = {"fp64": (1e-7, 1e-7), "fp32": (1.3e-6, 1e-5), "fp16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}


def _tolerance(spec):
    rtol, atol = DEFAULT_TOLERANCE.get(spec["dtype"], (0.0, 0.0))
    mode = "rms" if spec["dtype"] in DEFAULT_TOLERANCE else "absolute"
    tol = spec.get("tolerance")
    if isinstance(tol, dict):
        rtol, atol = float(tol.get("rtol", rtol)), float(tol.get("atol", atol))
        mode = tol.get("atol_mode", "rms")
    return rtol, atol, mode


def _check(task, got, want):
    """Each output against eager under the task's tolerance, the runner's rule: within atol + rtol·|ref|
    where both are finite, NaN and ±Inf in the same places, the same shape; and as many outputs."""
    torch = _torch()
    if len(got) != len(want):
        return {"outputs": [], "passed": False,
                "why": "the compiled program returned %d outputs, eager %d" % (len(got), len(want))}
    outputs = []
    for spec, g, w in zip(task["outputs"], got, want):
        if tuple(g.shape) != tuple(w.shape):
            outputs.append({"name": spec["name"], "max_abs": 0.0, "mismatches": w.numel(), "passed": False,
                            "why": "shape %s, eager %s" % (list(g.shape), list(w.shape))})
            continue
        rtol, atol, mode = _tolerance(spec)
        g64, w64 = g.detach().double().cpu(), w.detach().double().cpu()
        finite = torch.isfinite(g64) & torch.isfinite(w64)
        if mode == "rms" and bool(torch.isfinite(w64).any()):
            atol *= math.sqrt(float((w64[torch.isfinite(w64)] ** 2).mean()))
        diff = (g64 - w64).abs()
        bad = (diff > atol + rtol * w64.abs()) & finite
        bad |= torch.isnan(g64) != torch.isnan(w64)
        bad |= torch.isinf(g64) != torch.isinf(w64)
        bad |= torch.isinf(g64) & torch.isinf(w64) & (g64 != w64)
        outputs.append({"name": spec["name"], "max_abs": float(diff[finite].max()) if bool(finite.any()) else 0.0,
                        "mismatches": int(bad.sum()), "passed": not bool(bad.any())})
    return {"outputs": outputs, "passed": all(o["passed"] for o in outputs)}


def _versions(torch, device):
    v = {"torch": torch.__version__, "triton": None, "python": platform.python_version()}
    try:
        import triton
        v["triton"] = triton.__version__
    except ImportError:
        pass
    return v


def check_package(package, task_path, shape, device, seed=0):
    """Loads `package`, runs it on the seeded inputs of `shape` and compares it with eager: the
    check's result (what `python -m kernelforge_baseline check` prints)."""
    torch = _torch()
    with open(task_path, encoding="utf-8") as f:
        task = json.load(f)
    _, dims = find_shape(task, shape)
    inputs = make_inputs(task, dims, device, seed)
    with torch.no_grad():
        want = reference_module(task).eval()(*inputs)
        got = torch._inductor.aoti_load_package(package)(*inputs)
    got = tuple(got) if isinstance(got, (list, tuple)) else (got,)
    return _check(task, got, want)


def _child_command(package, task_path, shape, device, seed):
    return [sys.executable, "-m", "kernelforge_baseline", "check", package, task_path, "--shape", shape,
            "--device", device, "--seed", str(seed)]


def _check_in_child(package, task_path, shape, device, seed):
    """check_package in a separate process: loading a compiled package runs native code, and a
    package that crashes its process must be reported, not take the caller down. Returns
    (check or None, reason)."""
    import kernelforge_cast
    env = dict(os.environ)
    paths = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             os.path.dirname(os.path.dirname(os.path.abspath(kernelforge_cast.__file__)))]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    try:
        p = subprocess.run(_child_command(package, task_path, shape, device, seed), capture_output=True, text=True,
                           env=env, timeout=1800)
    except subprocess.TimeoutExpired:
        return None, "the compiled package did not finish its check within 30 minutes"
    if p.returncode < 0:
        return None, ("the compiled package crashed the process that loaded it (signal %d), so it is not used"
                      % -p.returncode)
    # The answer is the last line: native code may print to stdout before it.
    lines = p.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else {}
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    if p.returncode != 0 or not isinstance(answer.get("check"), dict):
        why = answer.get("error") or (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return None, "the compiled package does not run: %s" % why[:500]
    return answer["check"], ""


def compile_baseline(task_path, shape, mode="default", device=None, out=None, seed=0, isolate=True):
    """Compiles the reference of the task at `task_path` (a task.json or its folder) for one shape.
    Returns a CompileResult; never raises for a baseline that cannot be measured (it says why).
    `isolate`: load and check the package in a child process (the default; a test of the check
    itself may run it in this one)."""
    result = CompileResult(schema_version=1, measured=False, reason="", mode=mode, shape=None, device=device,
                           torch=None, triton=None, compile_s=None, package=None, check=None)
    if mode not in MODES:
        result["reason"] = "unknown mode %r (one of %s)" % (mode, ", ".join(MODES))
        return result
    try:
        torch = _torch()
    except ImportError as e:
        result["reason"] = "PyTorch is not installed for this Python (%s)" % e
        return result
    path = os.path.join(task_path, "task.json") if os.path.isdir(task_path) else task_path
    try:
        with open(path, encoding="utf-8") as f:
            task = json.load(f)
    except (OSError, ValueError) as e:
        result["reason"] = "cannot read %s: %s" % (path, e)
        return result
    result["task"] = task.get("name", "")
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    result["device"] = device
    if device not in ("cuda", "cpu"):
        result["reason"] = "the device is \"cuda\" (the current GPU) or \"cpu\", not %r" % device
        return result
    result.update(_versions(torch, device))
    if device == "cuda":
        if not torch.cuda.is_available():
            result["reason"] = "this PyTorch sees no CUDA device"
            return result
        if result["triton"] is None:
            result["reason"] = "Triton is not installed: Inductor generates its CUDA kernels with Triton"
            return result
    if shutil.which(os.environ.get("CXX", "g++")) is None and shutil.which("c++") is None:
        result["reason"] = "no C++ compiler: AOTInductor compiles its wrapper with one"
        return result
    try:
        label, dims = find_shape(task, shape)
        result["shape"] = {"label": label, "dims": dims}
        module = reference_module(task).eval()
        inputs = make_inputs(task, dims, device, seed)
        with torch.no_grad():
            want = module(*inputs)
            t0 = time.perf_counter()
            ep = torch.export.export(module, inputs)
            out = out or os.path.join(os.getcwd(), "%s-%s-%s.pt2" % (task.get("name", "task"), label, mode))
            package = torch._inductor.aoti_compile_and_package(ep, package_path=out,
                                                               inductor_configs=dict(INDUCTOR_CONFIGS[mode]))
            result["compile_s"] = time.perf_counter() - t0
            if not isolate:
                compiled = torch._inductor.aoti_load_package(package)
                got = compiled(*inputs)
    except NotCompilable as e:
        result["reason"] = str(e)
        return result
    except Exception as e:  # noqa: BLE001 - Inductor's many failure types: reported, not raised
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        result["reason"] = "Inductor could not compile the reference: %s: %s" % (type(e).__name__, first[:500])
        return result
    if isolate:
        check, why = _check_in_child(os.path.abspath(package), os.path.abspath(path), label, device, seed)
        if check is None:
            result["reason"] = why
            return result
        result["check"] = check
    else:
        got = tuple(got) if isinstance(got, (list, tuple)) else (got,)
        result["check"] = _check(task, got, want)
    result["package"] = os.path.abspath(package)
    if not result["check"]["passed"]:
        bad = [o["name"] for o in result["check"]["outputs"] if not o["passed"]]
        result["reason"] = ("the compiled reference disagrees with eager on %s beyond the task's tolerance, so it "
                            "is not used as a baseline" % (", ".join(bad) or result["check"].get("why", "its outputs")))
        return result
    result["measured"] = True
    return result
