"""The runner's correctness rule 7 (docs/verification.md) for the harness: the compiled reference
and the candidate are judged against the task's float64 golden result with eager's own error as
LibTorch's, exactly as `kforge verify` judges a candidate (engine/verify/Compare.cpp classify(),
device/runner/TorchBridgeCompare.cpp judgeWith()). Without a golden result (integer outputs, a
reference that does not run in float64) the comparison is with eager's result, and says so.
"""

import math

from ._task import FLOATING, reference_module, upcast

# The runner's defaults per dtype (engine/task/Task.cpp, Tolerance::defaultFor): rtol, atol;
# atol is scaled by the reference's RMS unless the task says "absolute".
DEFAULT_TOLERANCE = {"fp64": (1e-7, 1e-7), "fp32": (1.3e-6, 1e-5), "fp16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5)}

# Mantissa bits and smallest normal exponent of each floating dtype (engine/verify/Compare.cpp ulpAt).
_ULP = {"fp64": (52, -1022), "fp32": (23, -126), "fp16": (10, -14), "bf16": (7, -126)}

AGAINST_GOLDEN = "float64"
AGAINST_EAGER = "eager"


def _torch():
    import torch
    return torch


def _tolerance(spec):
    rtol, atol = DEFAULT_TOLERANCE.get(spec["dtype"], (0.0, 0.0))
    mode = "rms" if spec["dtype"] in DEFAULT_TOLERANCE else "absolute"
    tol = spec.get("tolerance")
    if isinstance(tol, dict):
        rtol, atol = float(tol.get("rtol", rtol)), float(tol.get("atol", atol))
        mode = tol.get("atol_mode", "rms")
    return rtol, atol, mode


def ulp_at(dtype, x):
    """One unit in the last place of `dtype` at the magnitude of each element of the float64
    tensor x: 2^(floor(log2 |x|) - mantissa bits), the exponent clamped to the smallest normal
    one (zero and non-finite values take it); zeros for integer dtypes."""
    torch = _torch()
    if dtype not in _ULP:
        return torch.zeros_like(x)
    mantissa, min_exp = _ULP[dtype]
    a = x.abs()
    normal = torch.isfinite(a) & a.ne(0)
    exponent = torch.where(normal, torch.frexp(a).exponent.to(torch.float64) - 1.0, torch.full_like(a, float(min_exp)))
    return torch.exp2(exponent.clamp_min(float(min_exp)) - mantissa)


def golden_outputs(task, inputs):
    """(outputs, note): the task's reference in float64 on the upcast inputs, the runner's golden
    run; outputs is None where there is none, and note says why (the runner's words)."""
    torch = _torch()
    if not any(o["dtype"] in FLOATING for o in task["outputs"]):
        return None, "integer outputs are compared exactly with eager's"
    try:
        with torch.no_grad():
            r = reference_module(task, golden=True).eval()(*upcast(inputs))
        r = tuple(r) if isinstance(r, (list, tuple)) else (r,)
    except Exception as e:  # noqa: BLE001 - whatever stops the float64 run is the note
        text = str(e).strip()
        return None, ("the reference does not run in float64 (%s: %s); compared with eager's result instead"
                      % (type(e).__name__, text.splitlines()[0][:300] if text else ""))
    for spec, t in zip(task["outputs"], r):
        if spec["dtype"] in FLOATING and t.dtype != torch.float64:
            return None, ("converted to float64 the reference still returns %s as %s; compared with eager's result "
                          "instead" % (spec["name"], t.dtype))
    return r, ""


def _judge(spec, got, lib, gold):
    """One output: the runner's classify() over every element. `gold` is None without a golden
    result; then `lib` (eager) is the truth and LibTorch's error allowance does not apply."""
    torch = _torch()
    rtol, atol, mode = _tolerance(spec)
    a = got.detach().to("cpu", torch.float64).reshape(-1)
    lib = lib.detach().to("cpu", torch.float64).reshape(-1)
    if gold is None:
        truth = lib
    else:
        gold = gold.detach().to("cpu", torch.float64).reshape(-1)
        # LibTorch's value where the golden one is not finite but LibTorch's is.
        truth = torch.where(torch.isfinite(gold) | ~torch.isfinite(lib), gold, lib)
    tf = torch.isfinite(truth)
    if mode == "rms":
        atol *= math.sqrt(float((truth[tf] ** 2).mean())) if bool(tf.any()) else 0.0
    ulp = ulp_at(spec["dtype"], truth)
    tol_allowed = torch.maximum(atol + rtol * truth.abs(), ulp)
    allowed = tol_allowed
    lerr = torch.zeros_like(truth)
    if gold is not None:
        lf = torch.isfinite(lib)
        lerr = torch.where(lf & tf, (lib - truth).abs(), lerr)
        allowed = torch.where(lf, torch.maximum(tol_allowed, lerr + ulp), tol_allowed)
    af = torch.isfinite(a)
    pair = af & tf
    err = torch.where(pair, (a - truth).abs(), torch.zeros_like(a))
    same = (torch.isnan(a) & torch.isnan(truth)) | a.eq(truth)
    if gold is not None:
        same |= ~af & ((torch.isnan(a) & torch.isnan(lib)) | a.eq(lib))
    bad = (pair & (err > allowed)) | (~pair & ~same)
    r = {"name": spec["name"], "against": AGAINST_EAGER if gold is None else AGAINST_GOLDEN,
         "max_abs": float(err.max()) if a.numel() else 0.0, "mismatches": int(bad.sum()), "elements": a.numel(),
         "passed": not bool(bad.any())}
    if gold is not None:
        r["eager_max_abs"] = float(lerr.max()) if a.numel() else 0.0
        r["rescued"] = int((pair & (err <= allowed) & (err > tol_allowed)).sum())
    return r


def check_outputs(task, got, eager, golden=None, note=""):
    """Each output of `got` judged as the runner judges a candidate: against `golden` (the float64
    result, golden_outputs()) with `eager` as LibTorch's result, or against `eager` alone where
    there is no golden result (an integer output; golden None, `note` says why). The same shapes
    and as many outputs as eager, too."""
    if len(got) != len(eager):
        return {"outputs": [], "passed": False, "against": AGAINST_EAGER,
                "why": "it returned %d outputs, eager %d" % (len(got), len(eager))}
    outputs = []
    for i, (spec, g, w) in enumerate(zip(task["outputs"], got, eager)):
        if tuple(g.shape) != tuple(w.shape):
            outputs.append({"name": spec["name"], "max_abs": 0.0, "mismatches": w.numel(), "passed": False,
                            "why": "shape %s, eager %s" % (list(g.shape), list(w.shape))})
            continue
        gold = golden[i] if golden is not None and spec["dtype"] in FLOATING else None
        outputs.append(_judge(spec, g, w, gold))
    against = AGAINST_GOLDEN if any(o.get("against") == AGAINST_GOLDEN for o in outputs) else AGAINST_EAGER
    r = {"outputs": outputs, "passed": all(o["passed"] for o in outputs), "against": against}
    if note:
        r["note"] = note
    return r


def disagreement(check):
    """The outputs a failed check names: "y (12 of 291 elements)", or why the outputs cannot be
    compared at all."""
    bad = ["%s (%s)" % (o["name"], o["why"] if "why" in o else "%d of %d elements" % (o["mismatches"], o["elements"]))
           for o in check["outputs"] if not o["passed"]]
    return ", ".join(bad) or check.get("why", "")


def judged_against(check):
    """How a check judged, in words for a reason."""
    if check["against"] == AGAINST_GOLDEN:
        return "the float64 result beyond the task's tolerance and eager's own error"
    return "eager beyond the task's tolerance"
