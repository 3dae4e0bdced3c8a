"""A task's reference as a torch.nn.Module (as LibTorch runs it, and as the runner's float64 golden
run does) and seeded inputs for one shape: what the compiled baseline is built from and checked
with (the check itself is _judge)."""

import platform

# torch.compile modes measured. None with CUDA graphs: the candidate and eager are timed per
# launch, and a graph replay would time something else.
MODES = ("default", "max-autotune-no-cudagraphs")

# The floating dtypes: their outputs are judged against a float64 golden result.
FLOATING = ("fp64", "fp32", "fp16", "bf16")


class NotCompilable(ValueError):
    """The task's reference cannot be compiled; the message says why."""


def _torch():
    import torch
    return torch


def _dtypes(torch):
    return {"fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
            "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
            "uint8": torch.uint8, "bool": torch.bool}


def spec_task(spec):
    """The spec's task, a TorchScript reference carrying the op tape kforge read from it
    (engine/cast/CompileBaselineRun.cpp: reference_tape, or reference_tape_refused with why)."""
    task = spec["task"]
    ref = task.get("reference")
    if isinstance(ref, dict) and "torchscript" in ref:
        ref = dict(ref)
        if "reference_tape" in spec:
            ref["tape"] = spec["reference_tape"]
        elif "reference_tape_refused" in spec:
            ref["tape_refused"] = spec["reference_tape_refused"]
        task = dict(task, reference=ref)
    return task


def _steps(task):
    """The reference as a list of tape steps: {op, inputs, attrs, output}."""
    ref = task.get("reference")
    outputs = [o["name"] for o in task["outputs"]]
    if not isinstance(ref, dict):
        raise NotCompilable("the task has no reference")
    if "torchscript" in ref and "tape" not in ref:
        # kforge's spec brings a scripted module's op tape (reference_tape, __main__._load_spec).
        why = ("whose forward cannot be read as an op tape (%s)" % ref["tape_refused"] if "tape_refused" in ref
               else "and no op tape of it came with the spec")
        raise NotCompilable("the reference is a TorchScript module %s: torch.compile traces Python code, and a "
                            "scripted module runs as TorchScript under it, uncompiled" % why)
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


def _golden_steps(task, steps):
    """The steps as the runner's float64 golden run takes them (device/runner/TorchBridgeReference.cpp):
    a cast to a floating dtype casts to float64, and rms_norm without eps keeps the epsilon of
    float (the accumulation type of fp32/fp16/bf16) unless an input is fp64."""
    eps = None if any(i["dtype"] == "fp64" for i in task["inputs"]) else 1.1920928955078125e-07
    out = []
    for s in steps:
        attrs = dict(s["attrs"])
        if s["op"] == "to" and attrs.get("dtype") in FLOATING:
            attrs["dtype"] = "fp64"
        if s["op"] == "rms_norm" and attrs.get("eps") is None and eps is not None:
            attrs["eps"] = eps
        out.append(dict(s, attrs=attrs))
    return out


def reference_module(task, golden=False):
    """A torch.nn.Module computing the task's outputs from its inputs (in task order), with the
    catalog semantics of the .cast runtime's reference (the runner's mapping). golden: the
    runner's float64 golden reference instead, to be called on upcast() inputs; its floating
    outputs are float64."""
    torch = _torch()
    from kernelforge_cast._reference import OPS
    steps = _steps(task)
    for s in steps:
        if s["op"] not in OPS:
            raise NotCompilable("the reference uses \"%s\", which this tool does not know" % s["op"])
    if golden:
        steps = _golden_steps(task, steps)
    dtypes = _dtypes(torch)
    inputs = [i["name"] for i in task["inputs"]]
    outputs = [(o["name"], torch.float64 if golden and o["dtype"] in FLOATING else dtypes[o["dtype"]])
               for o in task["outputs"]]

    class TaskReference(torch.nn.Module):
        def forward(self, *xs):
            values = dict(zip(inputs, xs))
            for s in steps:
                values[s["output"]] = OPS[s["op"]]([values[n] for n in s["inputs"]], s["attrs"])
            return tuple(values[n].to(dtype) if values[n].dtype != dtype else values[n] for n, dtype in outputs)

    return TaskReference()


def upcast(xs):
    """The inputs of a float64 golden run: floating tensors as float64, the others as they are."""
    torch = _torch()
    return tuple(x.to(torch.float64) if x.is_floating_point() else x for x in xs)


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


def versions(torch):
    v = {"torch": torch.__version__, "triton": None, "python": platform.python_version()}
    try:
        import triton
        v["triton"] = triton.__version__
    except ImportError:
        pass
    return v
