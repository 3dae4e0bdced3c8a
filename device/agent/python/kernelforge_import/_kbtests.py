"""Test shapes for a KernelBench problem: the model is built once; for each shape binding the
symbols' constants are set, get_inputs() drawn on the CPU, forward run eagerly and the trace
checked against it. A free symbol is tried at 1, 3, 7, 17, 129 and its problem value (capped to
2^22 test elements); a symbol whose variation changes what the trace computes is fixed."""

import math
import warnings

import torch

from . import _devices, _kbparams, _phase, _task
from ._check import all_close, clones, flat_outputs, identical
from ._errors import Refusal, last_line, refuse_exception
from ._graph import find_random, unpin_devices

CAP = 1 << 22          # test elements
BENCH_CAP = 1 << 28    # above this the problem's shape is checked on meta only
TRIES = (1, 3, 7, 17, 129)
BASES = (17, 16, 64, 128)


def why(e):
    """An exception in a few words for a note."""
    return (e.message if isinstance(e, Refusal) else last_line(e))[:160]


class Symbol:
    def __init__(self, key, value, fixed=False):
        self.key, self.value, self.fixed = key, value, fixed
        self.values, self.multiple_of, self.min = [value], 1, value


class Run:
    def __init__(self, binding, inputs=None, outputs=None, error=None, traced_ok=None):
        self.binding, self.inputs, self.outputs, self.error, self.traced_ok = binding, inputs, outputs, error, traced_ok

    @property
    def ok(self):
        return self.error is None and self.traced_ok is not False


class Runner:
    """``states``: the model's parameters and buffers that the traced reference takes after the
    problem's inputs (trace() drops those forward never reads)."""

    def __init__(self, problem, model, names, syms, in_shapes, tols):
        self.problem, self.model, self.names, self.syms, self.in_shapes = problem, model, names, syms, in_shapes
        self.tols, self.line = tols, problem.forward_line()
        self.states = _kbparams.collect(model)

    def state_values(self):
        return [s.tensor.clone() for s in self.states]

    def elements(self, binding):
        return sum(math.prod(binding[d] if isinstance(d, str) else d for d in shape) for shape in self.in_shapes)

    def bench(self):
        return {n: s.value for n, s in self.syms.items()}

    def eager(self, inputs):
        _phase.problem("running Model.forward")
        with torch.no_grad(), _devices.on("cpu"):
            out = self.model(*clones(inputs))
        return flat_outputs(out, self.problem.path, self.line)

    def run(self, binding, traced=None):
        for name, s in self.syms.items():
            self.problem.set(s.key, binding[name])
        try:
            try:
                xs = self.problem.inputs("cpu")
                _phase.problem("running Model.forward")
                with torch.no_grad(), _devices.on("cpu"):
                    out = self.model(*clones(xs))
            except Exception as e:  # noqa: BLE001 - get_inputs or forward failing at this shape
                return Run(binding, error=e)
            outs = flat_outputs(out, self.problem.path, self.line)
            ok = None
            if traced is not None:
                try:
                    with torch.no_grad(), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        got = traced(*clones(xs), *self.state_values())
                        ok = all_close(flat_outputs(got, self.problem.path, None), outs, self.tols)
                except Exception:  # noqa: BLE001 - a trace that cannot run this shape keeps one
                    ok = False
            return Run(binding, xs, outs, None, ok)
        finally:
            self.problem.restore()

    def _trace(self, base):
        _phase.problem("tracing Model.forward with torch.jit.trace")
        try:
            with _devices.on("cpu"):
                return _kbparams.trace(self.model, self.states, base.inputs, self.names)
        except Exception as e:  # noqa: BLE001
            raise Refusal(self.problem.path, "torch.jit.trace of forward raised %s" % last_line(e)[:300], self.line)

    def trace(self, base, lines, notes):
        """Traces forward at ``base`` with the states as inputs; refuses random ops, a forward that
        is not deterministic and a trace that keeps a state's values; retraces without the states
        forward never reads; unpins devices."""
        self.states = _kbparams.collect(self.model)
        _kbparams.name_inputs(self.states, set(self.names) | set(self.syms))
        traced = self._trace(base)
        find_random(traced, self.problem.path)
        if not identical(self.eager(base.inputs), base.outputs):
            raise Refusal(self.problem.path, "forward returns different outputs on two runs with the same inputs: "
                                             "KernelForge needs a deterministic reference", self.line)
        self._check_states(base, traced)
        dropped = _kbparams.unused(traced, len(base.inputs), self.states)
        if dropped:
            self.states = [s for s in self.states if s not in dropped]
            traced = self._trace(base)
            notes.add("forward does not read %s, so %s not a task input" % (
                ", ".join(s.name for s in dropped), "it is" if len(dropped) == 1 else "they are"))
        pinned = unpin_devices(traced, self.problem.path, lines)
        if pinned:
            notes.add("forward creates %d tensor(s) whose device the trace fixed; the reference makes them on its "
                      "first input's device" % pinned)
        return traced

    def _agree(self, base, traced, states, values):
        """Whether the trace and forward agree with ``values`` in place of ``states``."""
        own = [v if s not in states else values[states.index(s)] for s, v in zip(self.states, self.state_values())]
        try:
            with _kbparams.swapped(self.states, own):
                want = self.eager(base.inputs)
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = flat_outputs(traced(*clones(base.inputs), *own), self.problem.path, None)
        except Exception:  # noqa: BLE001 - other values that forward cannot run: not the trace's fault
            return True
        return all_close(got, want, self.tols)

    def specs(self):
        """Per state: its dtype name and {"distributions": ...} (may be None) and the note's words."""
        out = []
        for s in self.states:
            dt = _task.dtype_name(s.tensor.dtype, self.problem.path, "%s %s" % (s.kind, s.name))
            dists, how = _kbparams.distributions(dt, s.tensor)
            out.append((dt, dists, how))
        return out

    def _check_states(self, base, traced):
        """Refuses a trace that keeps a state's values as constants (forward reading it as a Python
        number, say): with other values drawn for the states it must still match forward."""
        if not self.states:
            return
        dists = [_kbparams.distributions(_task.DTYPES.get(s.tensor.dtype), s.tensor)[0] for s in self.states]
        values = _kbparams.draw(self.states, dists)
        if self._agree(base, traced, self.states, values):
            return
        bad = [s.name for s, v in zip(self.states, values) if not self._agree(base, traced, [s], [v])]
        raise Refusal(self.problem.path, "the trace of forward does not follow the model's %s: with other values it "
                                         "differs from forward (does forward read it as a Python number?)"
                      % (", ".join(bad[:5]) or "parameters and buffers"), self.line)


def find_base(runner, free):
    """The first binding of the free symbols (17, 16, 64, 128, then the problem's values) where
    forward runs; fixed symbols keep their values."""
    bench, last = runner.bench(), None
    for option in BASES + (None,):
        b = dict(bench)
        for s in free:
            b[s] = bench[s] if option is None else min(option, bench[s])
        cap = BENCH_CAP if option is None else CAP
        if runner.elements(b) > cap:
            continue
        r = runner.run(b)
        if r.error is None:
            return r
        last = r.error
    if last is None:
        raise Refusal(runner.problem.path, "the problem's shape has %d input elements and no symbol can shrink it: "
                                           "too large to check on the CPU" % runner.elements(bench))
    if isinstance(last, Refusal):
        raise last
    raise refuse_exception(runner.problem.path, "forward", last)


def _capped(runner, base, s):
    b, hi = dict(base), runner.syms[s].value
    b[s] = hi
    if runner.elements(b) <= CAP:
        return hi
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        b[s] = mid
        lo, hi = (mid, hi) if runner.elements(b) <= CAP else (lo, mid - 1)
    return lo


def probe(runner, s, base, traced, runs, notes):
    """Tries values of free symbol ``s``; returns False when ``s`` had to be fixed."""
    sym = runner.syms[s]
    ok, failed = {base.binding[s]}, {}

    def attempt(v):
        b = dict(base.binding, **{s: v})
        if v < 1 or v in ok or v in failed or runner.elements(b) > CAP:
            return v in ok
        r = runner.run(b, traced)
        runs.append(r)
        if r.error is not None:
            failed[v] = r.error
        elif not r.traced_ok:
            sym.fixed = True
            notes.add("%s: the traced reference differs from forward at %s = %d (the trace keeps a shape), so %s "
                      "is fixed at %d" % (s, s, v, s, sym.value))
            return None
        else:
            ok.add(v)
        return v in ok

    for v in TRIES + (_capped(runner, base.binding, s),):
        if attempt(v) is None:
            return False
    odd = [v for v in list(failed) + list(ok) if v % 2]
    if odd and all(v in failed for v in odd):
        for m in range(2, 17):
            if sym.value % m == 0 and all(attempt(k * m) for k in (1, 3, 7)):
                sym.multiple_of = m
                attempt(17 * m)
                attempt(_capped(runner, base.binding, s) // m * m)
                notes.add("%s: forward fails at odd values (%s = %d: %s), so %s is a multiple of %d"
                          % (s, s, min(failed), why(failed[min(failed)]), s, m))
                break
    if sym.fixed:
        return False
    sym.values = sorted(v for v in ok if v % sym.multiple_of == 0)
    if not sym.values:
        sym.fixed = True
        notes.add("%s: forward runs at no small value, so %s is fixed at %d" % (s, s, sym.value))
        return False
    sym.min = min(sym.values)
    if sym.multiple_of == 1 and failed and min(failed) < sym.min:
        notes.add("%s: forward fails at %s = %d (%s), so %s starts at %d"
                  % (s, s, min(failed), why(failed[min(failed)]), s, sym.min))
    return True


def mixed(runner, free, base, traced, notes):
    """3-6 test bindings mixing the values that worked; each must run and match the trace."""
    if not free:
        return [base]
    vals = {s: runner.syms[s].values for s in free}
    n = min(6, max(3, max(len(v) for v in vals.values())))
    tests, seen = [], set()
    for k in range(n):
        b = dict(base.binding)
        for j, s in enumerate(free):
            b[s] = vals[s][(k + j) % len(vals[s])]
        while runner.elements(b) > CAP:
            big = max(free, key=lambda s: b[s])
            smaller = [v for v in vals[big] if v < b[big]]
            if not smaller:
                break
            b[big] = smaller[-1]
        key = tuple(sorted(b.items()))
        if key in seen or runner.elements(b) > CAP:
            continue
        seen.add(key)
        r = base if b == base.binding else runner.run(b, traced)
        if r.ok:
            tests.append(r)
        else:
            because = why(r.error) if r.error is not None else "the trace differs from forward"
            notes.add("skipped test shape %s: %s" % (", ".join("%s=%d" % kv for kv in b.items()), because))
    return tests or [base]
