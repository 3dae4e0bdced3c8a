"""The pieces of a task.json object (docs/task-schema.md) both formats share: dtype names,
symbol names, tolerances, input distributions, the cost expression and the name/description."""

import math
import re

import torch

DTYPES = {torch.float64: "fp64", torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
          torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8",
          torch.uint8: "uint8", torch.bool: "bool"}
BY_NAME = {v: k for k, v in DTYPES.items()}
# PyTorch's assert_close defaults, as the schema's tolerance defaults.
ASSERT_CLOSE = {"fp64": (1e-7, 1e-7), "fp32": (1.3e-6, 1e-5), "fp16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}
_RESERVED = {"ceil_div", "round_up", "min", "max", "abs", "next_pow2", "log2", "sqrt", "float", "int"}


def dtype_name(dtype, path=None, what=None):
    name = DTYPES.get(dtype)
    if name is None:
        from ._errors import Refusal
        raise Refusal(path, "%s is %s, which KernelForge has no dtype for (use one of %s)"
                      % (what, str(dtype).replace("torch.", ""), ", ".join(DTYPES.values())))
    return name


def is_float(name):
    return name in ASSERT_CLOSE


def symbol_name(raw, taken):
    """``raw`` upper-cased when it is lower-case, made unique against ``taken`` (and added to it)."""
    name = raw.upper() if raw.islower() else raw
    if not name.isidentifier() or name.lower() in _RESERVED:
        name = "S_" + re.sub(r"\W", "_", name)
    base, n = name, 2
    while name in taken:
        name, n = "%s_%d" % (base, n), n + 1
    taken.add(name)
    return name


def tolerance(rtol, atol):
    return {"rtol": float(rtol), "atol": float(atol), "atol_mode": "absolute"}


def kernelbench_tolerance(task_dtype, out_dtype):
    """KernelBench compares with allclose at 1e-4 in fp32 and 1e-2 in half types."""
    half = {"fp16", "bf16"}
    t = 1e-2 if (task_dtype in half or out_dtype in half) else 1e-4
    return tolerance(t, t)


def default_tolerance(out_dtype):
    rtol, atol = ASSERT_CLOSE[out_dtype]
    return tolerance(rtol, atol)


def round_out(x, up):
    if x == 0 or not math.isfinite(x):
        return float(x)
    scale = 10 ** (math.floor(math.log10(abs(x))) - 3)
    return float("%.6g" % ((math.ceil if up else math.floor)(x / scale) * scale))


def distributions(name, dtype, lo, hi):
    """(distributions or None for the defaults, a note or None) for an input whose drawn values
    spanned [lo, hi]: integers keep that range, all-positive floats a uniform draw over it."""
    if dtype == "bool" or lo is None:
        return None, None
    if not is_float(dtype):
        return [{"kind": "int_range", "low": int(lo), "high": int(hi)}], None
    if lo > 0 and hi > lo and math.isfinite(hi):
        low, high = max(round_out(lo, False), lo / 2), round_out(hi, True)
        return ([{"kind": "uniform", "low": low, "high": high}],
                "input %s: the problem draws only positive values (%.4g to %.4g), so it is drawn uniformly from "
                "[%g, %g] instead of the default signed distributions" % (name, lo, hi, low, high))
    return None, None


def value_range(t):
    """(min, max) of a tensor's finite values, or (None, None)."""
    if t.numel() == 0 or t.dtype == torch.bool:
        return None, None
    v = t.detach().double()
    v = v[torch.isfinite(v)]
    if v.numel() == 0:
        return None, None
    return v.min().item(), v.max().item()


def cost_bytes(tensors):
    """"4 * B * D + 256 * B": the bytes of every (dtype name, shape) in ``tensors``."""
    terms = []
    for dtype, shape in tensors:
        size = 1 if dtype == "bool" else torch.empty((), dtype=BY_NAME[dtype]).element_size()
        factors = []
        for d in shape:
            if isinstance(d, int):
                size *= d
            else:
                factors.append(d)
        terms.append(" * ".join([str(size)] + factors))
    return " + ".join(terms) if terms else "0"


def output_names(count, taken):
    """y, or y0, y1, ...; "out" or "result" when an input already has such a name."""
    for stem in ("y", "out", "result"):
        names = [stem] if count == 1 else ["%s%d" % (stem, i) for i in range(count)]
        if not taken.intersection(names):
            return names
    return ["kf_out%d" % i for i in range(count)]


def task_name(stem):
    name = re.sub(r"[^A-Za-z0-9_-]", "_", stem).strip("_") or "imported"
    return name[:200]


def first_paragraph(text):
    if not text:
        return ""
    for para in re.split(r"\n\s*\n", text.strip()):
        words = " ".join(para.split())
        if words:
            return words
    return ""


class Notes(list):
    """The proposal's notes: one sentence each, in the order they were found, without repeats."""

    def add(self, text):
        if text not in self:
            self.append(text)
