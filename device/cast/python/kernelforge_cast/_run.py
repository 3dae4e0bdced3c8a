"""Running a package's model with and without its kernels, measured end to end.

The model is loaded twice from the package: once as exported (the baseline) and once with its
graph rewritten by ``Package.substitute``. Both run on the same inputs; warm-up passes are not
timed; on CUDA each pass is timed with CUDA events, the two models alternating so that clocks and
caches drift the same way for both. The result is model-level evidence (``RUN_SCOPE``), never an
op's microbenchmark.
"""

import datetime
import math
import platform

import torch

from ._archive import PackageError
from ._model import RUN_SCOPE, open_model, make_inputs


class KernelFailure(RuntimeError):
    """A packaged kernel raised during a model run without --allow-fallback."""


def _dtype_name(dtype):
    """fp16, bf16, ... as the manifest writes dtypes (the torch name for others)."""
    from ._substitute import DTYPE_NAMES
    return DTYPE_NAMES.get(dtype, str(dtype).replace("torch.", ""))


def _stats(times):
    s = sorted(times)
    q = lambda f: s[min(len(s) - 1, max(0, int(round(f * (len(s) - 1)))))]  # noqa: E731
    return {"median": q(0.5), "min": s[0], "max": s[-1], "p10": q(0.1), "p90": q(0.9)}


def _flat_tensors(out):
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    return [t for t in leaves if isinstance(t, torch.Tensor)]


def _guard(cast_op, counts, warn):
    """A graph target that calls cast::<op> and, when it raises, its reference ops — counted and
    said once per op."""
    target = getattr(torch.ops.cast, cast_op.name).default

    def call(*args):
        try:
            return target(*args)
        except Exception as e:  # noqa: BLE001 - any failure of the kernel falls back, loudly
            if cast_op.name not in counts:
                warn("cast::%s raised (%s); --allow-fallback: running its reference ops instead, counted"
                     % (cast_op.name, str(e).splitlines()[0] if str(e) else type(e).__name__))
            counts[cast_op.name] = counts.get(cast_op.name, 0) + 1
            out = cast_op.reference(args)
            return out[0] if len(out) == 1 else out

    call.__name__ = "cast_fallback_" + cast_op.name
    call.__qualname__ = call.__name__
    return call


def _strict(cast_op):
    target = getattr(torch.ops.cast, cast_op.name).default

    def call(*args):
        try:
            return target(*args)
        except Exception as e:  # noqa: BLE001 - re-raised with the op named
            raise KernelFailure("cast::%s raised during the model run: %s (run with --allow-fallback to fall back "
                                "to its reference ops, counted)" % (cast_op.name, e)) from e

    call.__name__ = "cast_strict_" + cast_op.name
    call.__qualname__ = call.__name__
    return call


def _wrap_calls(gm, package, allow_fallback, counts, warn):
    by_target = {getattr(torch.ops.cast, n).default: package.op(n) for n in package.names}
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in by_target:
            op = by_target[node.target]
            node.target = _guard(op, counts, warn) if allow_fallback else _strict(op)
    gm.recompile()


def _errors(got, ref):
    """Max and RMS difference over the elements where both are finite, and whether the two have
    their non-finite values (NaN, ±Inf) in the same places."""
    g, r = got.detach().to(torch.float64), ref.detach().to(torch.float64)
    both = torch.isfinite(g) & torch.isfinite(r)
    d = (g - r)[both]
    alike = bool(torch.equal(torch.isnan(g), torch.isnan(r)) and torch.equal(torch.isinf(g), torch.isinf(r))
                 and torch.equal(g[torch.isinf(g)], r[torch.isinf(r)]))
    return {"max_abs": d.abs().max().item() if d.numel() else 0.0,
            "rms": math.sqrt((d * d).mean().item()) if d.numel() else 0.0,
            "finite_alike": alike}


def _as_fp64(program, device):
    """The exported graph computing in fp64: floating weights and every floating dtype argument
    (casts such as ``.float()``) made fp64, the exported dtype assertions and input-dtype check
    dropped. Shape guards stay. Raises when the graph cannot run so (said in the check)."""
    m = program.module().to(device).to(torch.float64)
    for key, hook in list(m._forward_pre_hooks.items()):
        if getattr(hook, "__name__", "") == "_check_input_constraints_pre_hook":
            del m._forward_pre_hooks[key]
    widen = lambda a: torch.float64 if isinstance(a, torch.dtype) and a.is_floating_point else a  # noqa: E731
    for node in list(m.graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is torch.ops.aten._assert_tensor_metadata.default and not node.users:
            m.graph.erase_node(node)
            continue
        node.args = tuple(widen(a) for a in node.args)
        node.kwargs = {k: widen(v) for k, v in node.kwargs.items()}
    m.recompile()
    return m


def _check(program, original, substituted, args, kwargs, device):
    with torch.inference_mode():
        ref = _flat_tensors(original(*args, **kwargs))
        got = _flat_tensors(substituted(*args, **kwargs)) if substituted is not None else None
    result = {"outputs": [], "fp64": "ran"}
    ref64 = None
    try:
        m64 = _as_fp64(program, device)
        cast = lambda v: v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v  # noqa: E731
        with torch.inference_mode():
            ref64 = _flat_tensors(m64(*[cast(a) for a in args], **{k: cast(v) for k, v in kwargs.items()}))
        if len(ref64) != len(ref):
            raise RuntimeError("the fp64 run returned %d tensors, not %d" % (len(ref64), len(ref)))
    except Exception as e:  # noqa: BLE001 - the model does not allow fp64; said in the result
        ref64 = None
        result["fp64"] = "not possible: %s" % (str(e).splitlines()[0] if str(e) else type(e).__name__)
    if got is not None and len(got) != len(ref):
        raise KernelFailure("the model with the kernels returned %d tensors, the model as exported %d"
                            % (len(got), len(ref)))
    for i, r in enumerate(ref):
        o = {"index": i, "dtype": _dtype_name(r.dtype), "shape": list(r.shape)}
        if got is not None:
            o["kernels_vs_original"] = _errors(got[i], r)
        if ref64 is not None:
            o["original_vs_fp64"] = _errors(r, ref64[i])
            if got is not None:
                o["kernels_vs_fp64"] = _errors(got[i], ref64[i])
        result["outputs"].append(o)
    return result


def run_model(package, model=None, device=None, runs=20, warmup=5, kernels=True, check=False,
              allow_fallback=False, seed=0, warn=print):
    """Runs model ``model`` of the loaded ``package`` (a kernelforge_cast.Package) and returns its
    model-level evidence (docs/cast-format.md, "Model runs")."""
    entry, program = open_model(package.manifest, package.files, model)
    if entry["format"] != "torch.export":
        raise PackageError("%s: model %s is a TorchScript module; the C++ runtime runs it (`kforge cast run`)"
                           % (package.path, entry["name"]))
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise PackageError("--device cuda: this PyTorch sees no CUDA GPU")
    # Weights, constants and every device burnt into the graph (e.g. the exporter's own tensor
    # metadata assertions) move to where the model runs.
    from torch.export.passes import move_to_device_pass
    program = move_to_device_pass(program, dev)
    args, kwargs = make_inputs(entry, package.files, program, dev, seed)
    original = program.module().to(dev)
    substituted, report, counts = None, [], {}
    if kernels:
        substituted, report = package.substitute(program.module().to(dev))
        _wrap_calls(substituted, package, allow_fallback, counts, warn)
    else:
        probe, report = package.substitute(program.module())
        del probe
        for r in report:   # what would be substituted, said as such
            if r["status"] == "substituted":
                r["status"], r["reason"] = "kept", "--no-kernels (cast::%s would run here)" % r["cast_op"]
                r["cast_op"] = ""

    cuda = dev.type == "cuda"

    def timed(fn):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args, **kwargs)
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        import time
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        return (time.perf_counter() - t0) * 1e3

    t_orig, t_sub = [], []
    with torch.inference_mode():
        for _ in range(warmup):
            original(*args, **kwargs)
            if substituted is not None:
                substituted(*args, **kwargs)
        for _ in range(runs):
            t_orig.append(timed(original))
            if substituted is not None:
                t_sub.append(timed(substituted))
    without = _stats(t_orig)
    with_k = _stats(t_sub) if t_sub else None
    evidence = {
        "scope": RUN_SCOPE,
        "model": entry["name"],
        "package": {"name": package.name, "version": package.version},
        "created_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": "cuda:%d" % (dev.index if dev.index is not None else torch.cuda.current_device()) if cuda else "cpu",
        "gpu": torch.cuda.get_device_name(dev) if cuda else "",
        "torch": torch.__version__,
        "cuda_driver": _driver_version() if cuda else "",
        "runtime": "kernelforge_cast (Python %s)" % platform.python_version(),
        "inputs": _describe_inputs(entry, args, kwargs),
        "runs": runs, "warmup": warmup,
        "without_kernels_ms": without,
        "speedup": (without["median"] / with_k["median"]) if with_k and with_k["median"] > 0 else None,
        "substitution": report,
        "fallbacks": counts,
        "check": _check(program, original, substituted, args, kwargs, dev) if check else None,
    }
    if with_k is not None:
        evidence["with_kernels_ms"] = with_k
    return evidence


def _describe_inputs(entry, args, kwargs):
    names = [t["name"] for t in entry["inputs"]]
    values = list(args) + list(kwargs.values())
    if len(names) != len(values):
        names = ["arg%d" % i for i in range(len(args))] + list(kwargs)
    return [{"name": n, "dtype": _dtype_name(v.dtype), "shape": list(v.shape)}
            for n, v in zip(names, values) if isinstance(v, torch.Tensor)]


def _driver_version():
    try:
        from . import _driver
        v = _driver.driver_version()
        return "%d.%d" % (v // 1000, (v % 1000) // 10)
    except Exception:  # noqa: BLE001 - a version we cannot read is left empty
        return ""


def format_evidence(ev, kernels_timed=True):
    """The run as text lines for a terminal."""
    from ._substitute import format_report
    lines = []
    subs = [r for r in ev["substitution"] if r["status"] == "substituted"]
    sites = {r["node"] for r in ev["substitution"]}
    lines.append("model %s from %s %s on %s (%s), torch %s" % (
        ev["model"], ev["package"]["name"], ev["package"]["version"], ev["gpu"] or "CPU", ev["device"], ev["torch"]))
    lines.append("inputs: " + "; ".join("%s %s %s" % (i["name"], i["dtype"], i["shape"]) for i in ev["inputs"]))
    lines.append("")
    lines.append("substitution: %d of %d candidate call sites run packaged kernels" % (len(subs), len(sites)))
    if ev["substitution"]:
        lines.append("  %-12s %-18s %-11s %s" % ("op", "node", "status", "kernel / reason"))
        lines.append(format_report(ev["substitution"]))
    lines.append("")
    unit = "CUDA events" if ev["gpu"] else "wall clock"
    lines.append("time per pass, ms (%d runs after %d warm-up, %s, same inputs):" % (ev["runs"], ev["warmup"], unit))
    lines.append("  %-16s %9s %9s %9s %9s %9s" % ("", "median", "p10", "p90", "min", "max"))
    for label, key in (("with kernels", "with_kernels_ms"), ("without kernels", "without_kernels_ms")):
        t = ev.get(key)
        if t:
            lines.append("  %-16s %9.4f %9.4f %9.4f %9.4f %9.4f" % (label, t["median"], t["p10"], t["p90"], t["min"], t["max"]))
        else:
            lines.append("  %-16s %9s" % (label, "not run (--no-kernels)"))
    if ev["speedup"] is not None:
        lines.append("end-to-end speedup: %.3f× (%s; the ops' own speedups in `inspect` are op-level microbenchmarks)"
                     % (ev["speedup"], RUN_SCOPE))
    if ev["fallbacks"]:
        lines.append("FALLBACKS: " + ", ".join("cast::%s fell back %d time(s)" % kv for kv in sorted(ev["fallbacks"].items())))
    else:
        lines.append("fallbacks: none")
    c = ev.get("check")
    if c:
        lines.append("")
        lines.append("check (fp64 reference: %s):" % c["fp64"])
        for o in c["outputs"]:
            parts = []
            for key, label in (("kernels_vs_original", "kernels vs original"), ("kernels_vs_fp64", "kernels vs fp64"),
                               ("original_vs_fp64", "original vs fp64")):
                if key in o:
                    e = o[key]
                    parts.append("%s max %.3g rms %.3g%s" % (label, e["max_abs"], e["rms"],
                                                            "" if e["finite_alike"] else " (NON-FINITE DIFFERS)"))
            lines.append("  output %d %s %s: %s" % (o["index"], o["dtype"], o["shape"], "; ".join(parts)))
    return "\n".join(lines)


__all__ = ["run_model", "format_evidence", "KernelFailure"]
