"""The three-way benchmark: eager, torch.compile (each mode) and the candidate's cubin, timed in
one process on the same inputs with the runner's rules (docs/benchmarks.md, "The torch.compile
baseline"):

- three input sets per shape, rotated sample by sample; every side sees the same set in a sample;
- before every timed call a write of twice the L2 size, outside the timed window;
- then a spin kernel that holds the stream while Python enqueues the call (see _Clock.calibrate),
  so the window holds device time only, as the runner's does;
- CUDA events around the call alone, a device-wide synchronise after it;
- the order of the sides rotates each sample, so no side always follows another;
- warm-up calls untimed; compile time measured on the first call and reported apart;
- sampling stops at the runner's rule: at least `min_samples`, then when every side's median is
  known within `target_spread` (half its 95 % confidence interval, relative), or at `max_samples`,
  or at the per-shape time cap.

The compiled reference and the candidate are both checked on the first input set before anything
is timed, by the runner's rule (docs/verification.md, correctness rule 7): against the float64
golden result, each element within the task's tolerance or no worse than eager's own error plus
one ulp (_judge). A fused program that rounds once is more accurate than eager and agrees. A
compiled baseline that computes something else is reported and not used; a candidate that
disagrees here means this harness does not run it as the runner does, and the shape is not
measured. Where there is no golden result (integer outputs, a reference that does not run in
float64) the check is against eager, and the shape's flags say so.
"""

import math
import time

from ._judge import check_outputs, disagreement, golden_outputs, judged_against
from ._task import MODES, NotCompilable, make_inputs, reference_module, spec_task, versions

SCHEMA_VERSION = 1
INPUT_SETS = 3
DEFAULT_SAMPLING = {"warmup": 3, "min_samples": 10, "max_samples": 500, "target_spread": 0.01, "time_cap_ms": 4000}


def stats(samples):
    """The runner's timing summary (device/runner/TimingStats.cpp): median, quartiles, and the
    half-width of the median's 95 % confidence interval relative to it."""
    s = sorted(samples)
    n = len(s)
    if n == 0:
        return {"samples": 0}

    def quantile(q):
        pos = q * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    half = 0.98 * math.sqrt(n)
    j = max(1, int(math.floor(n / 2.0 - half)))
    k = min(n, int(math.ceil(1 + n / 2.0 + half)))
    median = quantile(0.5)
    return {"median_ms": median, "min_ms": s[0], "max_ms": s[-1], "iqr_ms": quantile(0.75) - quantile(0.25),
            "mean_ms": sum(s) / n, "samples": n,
            "median_rel_spread": (s[k - 1] - s[j - 1]) / 2.0 / median if median > 0 else 0.0}


def _first_line(e):
    text = str(e).strip()
    return "%s: %s" % (type(e).__name__, text.splitlines()[0][:400] if text else "")


def _tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


class _Clock:
    """Events and the L2 flush on CUDA; perf_counter and a buffer write on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device == "cuda"
        if self.cuda:
            l2 = int(getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0) or 0)
            self.flush_bytes = max(2 * l2, 8 << 20)
            self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        else:
            self.flush_bytes = 64 << 20     # larger than the last-level caches of the CI machines
        self.buffer = torch.empty(self.flush_bytes, dtype=torch.uint8, device=device)
        self.value = 0
        self.hold_cycles = 0
        self.hold_ms = 0.0

    def calibrate(self, sides):
        """How long to hold the stream before each timed call: Python enqueues a call much more
        slowly than the runner's C++ does, and without a hold the GPU would sit idle inside the
        timed window while the host is still launching (the blocking-kernel method of NVIDIA's
        nvbench). The hold is a spin kernel of twice the slowest side's enqueue time plus 50 us,
        measured here; it runs after the flush and before the start event, so it is never timed."""
        if not self.cuda:
            return
        torch = self.torch
        cycles = 1 << 22
        self.start.record()
        torch.cuda._sleep(cycles)
        self.end.record()
        torch.cuda.synchronize()
        per_ms = cycles / max(self.start.elapsed_time(self.end), 1e-3)
        host = 0.0
        for _ in range(3):
            for side in sides.values():
                side.prepare(0)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                self.start.record()
                side.run(0)
                self.end.record()
                host = max(host, time.perf_counter() - t0)
                torch.cuda.synchronize()
        self.hold_ms = 2 * host * 1e3 + 0.05
        self.hold_cycles = int(per_ms * self.hold_ms)

    def time(self, side, k):
        """One timed call of `side` on input set k: its preparation and the flush outside the
        window, the call alone inside it."""
        side.prepare(k)
        self.value = (self.value + 0x5A) & 0xFF
        self.buffer.fill_(self.value)
        if self.cuda:
            self.torch.cuda._sleep(self.hold_cycles)
            self.start.record()
            side.run(k)
            self.end.record()
            self.torch.cuda.synchronize()
            return self.start.elapsed_time(self.end)
        t0 = time.perf_counter()
        side.run(k)
        return (time.perf_counter() - t0) * 1e3


class _Call:
    """Eager or a compiled program: the module called on the set's inputs (PyTorch allocates
    their outputs, as it does in the runner's eager baseline)."""

    def __init__(self, fn, sets):
        self.fn, self.sets = fn, sets

    def prepare(self, k):
        pass

    def run(self, k):
        self.fn(*self.sets[k])


class _Launches:
    """The candidate as the runner times it: outputs and scratch allocated once per input set,
    zeroed scratch cleared before the flush, and only the kernel launches in the timed window
    (the .cast runtime's per-call checks and allocations are Python work the runner does not
    have, and they would show when a kernel is short)."""

    def __init__(self, op, sets, torch):
        from kernelforge_cast import _driver
        from kernelforge_cast._ops import _raw_stream
        index = sets[0][0].device.index
        key = (index,) + tuple(t.shape for t in sets[0])
        outputs, scratch, self.slots, self.launches = op._bound(key, sets[0])
        self.per_set = []
        for inputs in sets:
            outs = [torch.empty(shape, dtype=dtype, device=inputs[0].device) for shape, dtype in outputs]
            buffers = [torch.zeros(max(count, 1), dtype=dtype, device=inputs[0].device) for count, dtype, _ in scratch]
            zeroed = [b for b, (_, _, zero) in zip(buffers, scratch) if zero]
            self.per_set.append(([t.data_ptr() for t in list(inputs) + outs + buffers], zeroed, outs + buffers))
        self.stream = _raw_stream(index)
        self.launch = _driver.launcher()
        self.raise_for = _driver.raise_for

    def outputs(self, k, count):
        return self.per_set[k][2][:count]

    def prepare(self, k):
        pointers, zeroed, _ = self.per_set[k]
        for slot, p in zip(self.slots, pointers):
            slot.value = p
        for b in zeroed:
            b.zero_()

    def run(self, k):
        for fn, gx, gy, gz, bx, by, bz, shared, params, _ in self.launches:
            rc = self.launch(fn, gx, gy, gz, bx, by, bz, shared, self.stream, params, None)
            if rc:
                self.raise_for(rc, "cuLaunchKernel")


def _candidate_op(candidate, files):
    from kernelforge_cast._ops import CastOp
    op = CastOp(None, candidate["op"], files, use_kernels=True, force_image=candidate["arch"])
    how = op.image_used()
    if how.startswith("reference ops"):
        raise RuntimeError("the candidate's image does not load here: %s" % how)
    return op


def _sample(clock, sides, sets, cfg, deadline):
    """Timed samples of every side (name -> _Call or _Launches; `sets` input sets, rotated) until the runner's stopping rule; returns
    ({name: [ms...]}, stopped_by)."""
    names = list(sides)
    times = {n: [] for n in names}
    for n in range(cfg["max_samples"]):
        k = n % len(names)
        for name in names[k:] + names[:k]:
            times[name].append(clock.time(sides[name], n % sets))
        if n + 1 >= cfg["min_samples"]:
            if all(stats(t)["median_rel_spread"] <= cfg["target_spread"] for t in times.values()):
                return times, "spread"
        if time.monotonic() > deadline and n + 1 >= min(cfg["min_samples"], 3):
            return times, "time_cap"
    return times, "max_samples"


def _compile_mode(torch, module, mode, inputs, device, check):
    """(entry, compiled function or None): the module compiled in `mode` and checked on `inputs`."""
    entry = {"measured": False, "reason": "", "compile_s": None, "check": None, "timing": None}
    try:
        torch._dynamo.reset()
        fn = torch.compile(module, mode=None if mode == "default" else mode, dynamic=False, fullgraph=True)
        t0 = time.perf_counter()
        got = _tuple(fn(*inputs))
        if device == "cuda":
            torch.cuda.synchronize()
        entry["compile_s"] = round(time.perf_counter() - t0, 3)
    except Exception as e:  # noqa: BLE001 - Inductor's many failure types are reported
        entry["reason"] = "torch.compile could not compile the reference: %s" % _first_line(e)
        return entry, None
    entry["check"] = check(got)
    if not entry["check"]["passed"]:
        entry["reason"] = ("the compiled reference disagrees with %s on %s, so it is not used as a baseline"
                           % (judged_against(entry["check"]), disagreement(entry["check"])))
        return entry, None
    return entry, fn


def bench_shape(torch, task, shape, modes, device, candidate_op, cfg, seed, log):
    """One shape: compile each mode, check everything against the float64 result, time every side."""
    label, dims = shape["label"], shape["dims"]
    out = {"label": label, "dims": dims, "measured": False, "reason": "", "eager": None, "candidate": None,
           "compiled": {}, "flags": []}
    module = reference_module(task).eval()
    sets = [make_inputs(task, dims, device, seed + i) for i in range(INPUT_SETS)]
    with torch.no_grad():
        want = _tuple(module(*sets[0]))
        golden, note = golden_outputs(task, sets[0])
        if note:
            out["flags"].append("checked against eager, not a float64 result: " + note)

        def check(got):
            return check_outputs(task, got, want, golden, note)

        sides = {"eager": _Call(module, sets)}
        for mode in modes:
            log("%s: torch.compile (%s)" % (label, mode))
            out["compiled"][mode], fn = _compile_mode(torch, module, mode, sets[0], device, check)
            if fn is not None:
                sides["compile:" + mode] = _Call(fn, sets)
        if candidate_op is not None:
            lean = _Launches(candidate_op, sets, torch)
            lean.prepare(0)
            lean.run(0)
            if device == "cuda":
                torch.cuda.synchronize()
            out["candidate_check"] = check(tuple(lean.outputs(0, len(candidate_op.outputs))))
            if not out["candidate_check"]["passed"]:
                out["reason"] = ("the candidate disagrees with %s in this harness on %s, so the harness does not run "
                                 "it as the runner does; nothing is timed"
                                 % (judged_against(out["candidate_check"]), disagreement(out["candidate_check"])))
                return out
            sides["candidate"] = lean
        clock = _Clock(torch, device)
        for _ in range(cfg["warmup"]):
            for side in sides.values():
                clock.time(side, 0)
        clock.calibrate(sides)
        log("%s: timing %s" % (label, ", ".join(sides)))
        started = time.monotonic()
        times, stopped = _sample(clock, sides, len(sets), cfg, started + cfg["time_cap_ms"] / 1e3)
    out["eager"] = stats(times["eager"])
    if "candidate" in times:
        out["candidate"] = stats(times["candidate"])
    for mode, entry in out["compiled"].items():
        if "compile:" + mode in times:
            entry["timing"] = stats(times["compile:" + mode])
            entry["measured"] = True
    out.update(measured=True, stopped_by=stopped, wall_ms=round((time.monotonic() - started) * 1e3),
               flush_bytes=clock.flush_bytes, hold_ms=round(clock.hold_ms, 3))
    return out


def bench(spec, log=lambda text: None):
    """Runs a spec (see __main__) and returns the result; never raises for a baseline that cannot
    be measured: "measured" is false and "reason" says why."""
    result = {"schema_version": SCHEMA_VERSION, "measured": False, "reason": "", "device": None, "gpu": None,
              "modes": list(spec.get("modes") or MODES), "torch": None, "triton": None, "python": None,
              "input_sets": INPUT_SETS, "sampling": None, "candidate_image": None, "shapes": []}
    try:
        import torch
    except ImportError as e:
        result["reason"] = "PyTorch is not installed for this Python (%s)" % e
        return result
    result.update(versions(torch))
    unknown = [m for m in result["modes"] if m not in MODES]
    if unknown:
        result["reason"] = "unknown mode %s (the modes are %s)" % (", ".join(unknown), ", ".join(MODES))
        return result
    cfg = dict(DEFAULT_SAMPLING)
    cfg.update({k: v for k, v in (spec.get("sampling") or {}).items() if k in DEFAULT_SAMPLING})
    result["sampling"] = cfg
    device = spec.get("device") or ("cuda" if torch.cuda.is_available() else "cpu")
    result["device"] = device
    if device == "cuda":
        if not torch.cuda.is_available():
            result["reason"] = "this PyTorch sees no CUDA device"
            return result
        if result["triton"] is None:
            result["reason"] = "Triton is not installed: Inductor generates its CUDA kernels with Triton"
            return result
        result["gpu"] = torch.cuda.get_device_name()
    elif device != "cpu":
        result["reason"] = "the device is \"cuda\" or \"cpu\", not %r" % device
        return result
    task = spec_task(spec)
    candidate_op = None
    try:
        reference_module(task)
        if spec.get("candidate"):
            if device != "cuda":
                result["reason"] = "a candidate's cubin runs only on CUDA"
                return result
            candidate_op = _candidate_op(spec["candidate"], spec["files"])
            result["candidate_image"] = candidate_op.image_used()
    except NotCompilable as e:
        result["reason"] = str(e)
        return result
    except Exception as e:  # noqa: BLE001 - a driver or plan error: reported
        result["reason"] = "the candidate cannot be launched here: %s" % _first_line(e)
        return result
    for shape in spec["shapes"]:
        try:
            result["shapes"].append(bench_shape(torch, task, shape, result["modes"], device, candidate_op, cfg,
                                                int(spec.get("seed", 0)), log))
        except Exception as e:  # noqa: BLE001 - one shape's failure is that shape's reason
            result["shapes"].append({"label": shape["label"], "dims": shape["dims"], "measured": False,
                                     "reason": "the harness failed: %s" % _first_line(e), "eager": None,
                                     "candidate": None, "compiled": {}, "flags": []})
    measured = [s for s in result["shapes"] if s["measured"]]
    if not measured:
        result["reason"] = "; ".join("%s: %s" % (s["label"], s["reason"]) for s in result["shapes"]) or "no shapes"
        return result
    if not any(e["measured"] for s in measured for e in s["compiled"].values()):
        result["reason"] = "; ".join("%s (%s): %s" % (s["label"], m, e["reason"])
                                     for s in measured for m, e in s["compiled"].items())
        return result
    result["measured"] = True
    return result
