"""A task's reference as a torch.nn.Module, seeded inputs for one shape, and the runner's rule for
comparing outputs: what the compiled baseline is built from and checked with."""

import math
import platform

# torch.compile modes measured. None with CUDA graphs: the candidate and eager are timed per
# launch, and a graph replay would time something else.
MODES = ("default", "max-autotune-no-cudagraphs")


class NotCompilable(ValueError):
    """The task's reference cannot be compiled; the message says why."""


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
        raise NotCompilable("the reference is a TorchScript module: torch.compile traces Python code, and a "
                            "scripted module runs as TorchScript under it, uncompiled; write the reference as a "
                            "catalog op or an op tape to measure the compiled baseline")
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
    if e in params and isinstance(params[e], int):
        return int(params[e])
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


def check_outputs(task, got, want):
    """Each output against eager under the task's tolerance, the runner's rule: within atol + rtol·|ref|
    where both are finite, NaN and ±Inf in the same places, the same shape; and as many outputs."""
    torch = _torch()
    if len(got) != len(want):
        return {"outputs": [], "passed": False,
                "why": "it returned %d outputs, eager %d" % (len(got), len(want))}
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


def versions(torch):
    v = {"torch": torch.__version__, "triton": None, "python": platform.python_version()}
    try:
        import triton
        v["triton"] = triton.__version__
    except ImportError:
        pass
    return v
