"""A KernelBench model's parameters and buffers as task inputs. The reference is traced as a
wrapper whose forward takes (*problem inputs, *state tensors) and runs the model with each state
tensor swapped in for the module attribute it replaces (torch.func.functional_call refuses to run
under torch.jit.trace, so the swap is done here, on the modules' _parameters/_buffers dicts, and
undone at once). The model is kept out of the wrapper's submodules, so the trace holds no
parameter or buffer: a candidate kernel receives every tensor the reference reads.

A tensor shared by several attributes (tied weights) is one input under its first name. Float
tensors are drawn uniformly over the range of their seeded values (half to one and a half times
the value when all are equal, [-0.5, 0.5] when all are 0), integer ones over their observed
range; bool ones keep the defaults."""

import contextlib
import re
import warnings

import torch

from . import _task


class State:
    """One parameter or buffer: ``name`` its qualified name ("linear.weight"), ``kind``
    "parameter" or "buffer", ``places`` the (module, dict name, key) slots that hold it."""

    def __init__(self, name, kind, tensor):
        self.name, self.kind, self.tensor, self.places = name, kind, tensor, []
        self.input = None    # the task input name, once chosen


def collect(model):
    """Every parameter and buffer of ``model``, in registration order, tied tensors once."""
    states, seen = [], {}
    for prefix, module in model.named_modules(remove_duplicate=False):
        for kind, slot in (("parameter", "_parameters"), ("buffer", "_buffers")):
            for key, t in getattr(module, slot).items():
                if t is None:
                    continue
                if id(t) not in seen:
                    seen[id(t)] = State(prefix + "." + key if prefix else key, kind, t)
                    states.append(seen[id(t)])
                seen[id(t)].places.append((module, slot, key))
    return states


def loose_tensors(model):
    """Qualified names of plain tensor attributes (neither parameters nor buffers)."""
    return ["%s.%s" % (p, k) if p else k for p, m in model.named_modules()
            for k, v in vars(m).items() if isinstance(v, torch.Tensor) and not k.startswith("_")]


@contextlib.contextmanager
def swapped(states, values):
    """Runs the block with each state's slots holding the matching value instead."""
    saved = []
    try:
        for s, v in zip(states, values):
            for module, slot, key in s.places:
                d = getattr(module, slot)
                saved.append((d, key, d[key]))
                d[key] = v
        yield
    finally:
        for d, key, old in reversed(saved):
            d[key] = old


class Wrapper(torch.nn.Module):
    """forward(*inputs, *states): the model's forward with the states swapped in. The model sits
    in __dict__, not in _modules, so tracing records none of its tensors as attributes."""

    def __init__(self, model, states, count):
        super().__init__()
        self.__dict__["_kf_model"] = (model, list(states), count)

    def forward(self, *args):
        model, states, count = self.__dict__["_kf_model"]
        with swapped(states, args[count:]):
            return model(*args[:count])


def trace(model, states, inputs, names):
    """The wrapper traced at ``inputs`` with the states' own values (the caller catches errors);
    its arguments are named ``names`` and then the states' input names."""
    wrapper = Wrapper(model, states, len(inputs))
    args = tuple(t.clone() for t in inputs) + tuple(s.tensor.clone() for s in states)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(wrapper, args, check_trace=False)
    assert not list(traced.parameters()) and not list(traced.buffers()), "the trace kept model tensors"
    _name_graph(traced, list(names) + [s.input for s in states])
    return traced


def unused(traced, count, states):
    """The states whose graph input the traced forward never reads."""
    graph_inputs = list(traced.graph.inputs())[1 + count:]
    return [s for s, v in zip(states, graph_inputs) if not v.uses()]


def _name_graph(traced, names):
    """Gives the traced forward's arguments the task's input names (what reference.pt's code shows);
    it must run before the trace is run or printed, which fix the names."""
    for value, name in zip(list(traced.graph.inputs())[1:], names):
        try:
            value.setDebugName(name)
        except RuntimeError:
            pass


def name_inputs(states, taken):
    """Sets each state's input name: "linear.weight" -> linear_weight, "0.bias" -> p0_bias,
    made unique against ``taken`` (and added to it)."""
    for s in states:
        base = re.sub(r"\W", "_", s.name)
        if not base.isidentifier():
            base = "p" + base
        name, n = base, 2
        while name in taken:
            name, n = "%s_%d" % (base, n), n + 1
        taken.add(name)
        s.input = name


def distributions(dtype, t):
    """(distributions or None, words for the note) for a state tensor of dtype name ``dtype``."""
    lo, hi = _task.value_range(t)
    if dtype in ("bool", None) or lo is None:
        return None, "the default draw"
    if not _task.is_float(dtype):
        return [{"kind": "int_range", "low": int(lo), "high": int(hi)}], "int_range [%d, %d]" % (lo, hi)
    if lo == hi:
        low, high = (lo * 0.5, lo * 1.5) if lo > 0 else (lo * 1.5, lo * 0.5) if lo < 0 else (-0.5, 0.5)
        how = "uniform [%g, %g] (all its values are %g)" % (low, high, lo)
    else:
        low, high = _task.round_out(lo, False), _task.round_out(hi, True)
        how = "uniform [%g, %g]" % (low, high)
    return [{"kind": "uniform", "low": low, "high": high}], how


def draw(states, dists, seed=1234):
    """Other values for the states, from their task distributions (a check that the trace reads
    them): uniform or int_range where given, random bits for bool, N(0, 1) otherwise."""
    g = torch.Generator().manual_seed(seed)
    values = []
    for s, d in zip(states, dists):
        t, dist = s.tensor, (d or [None])[0]
        if t.dtype == torch.bool:
            v = torch.randint(0, 2, t.shape, generator=g).bool()
        elif dist is not None and dist["kind"] == "int_range":
            v = torch.randint(dist["low"], dist["high"] + 1, t.shape, generator=g, dtype=t.dtype)
        elif dist is not None:
            v = torch.rand(t.shape, generator=g, dtype=torch.float64) * (dist["high"] - dist["low"]) + dist["low"]
        else:
            v = torch.randn(t.shape, generator=g, dtype=torch.float64)
        values.append(v.to(t.dtype))
    return values


def state_shape(tensor, dims, syms, init):
    """A parameter's shape: the analysis' dims when they hold at the built model (symbols only
    where fixed), else each dim the one fixed init symbol of that value, or a literal."""
    shape = list(tensor.shape)
    if dims is not None and len(dims) == len(shape) and all(
            (syms[d].value if isinstance(d, str) else d) == v and (not isinstance(d, str) or syms[d].fixed)
            for d, v in zip(dims, shape)):
        return dims
    by_value = {}
    for n, sym in syms.items():
        if sym.fixed and sym.key in init:
            by_value.setdefault(sym.value, []).append(n)
    return [by_value[v][0] if len(by_value.get(v, ())) == 1 else v for v in shape]


def task_inputs(runner, analysis, state_shapes, taken, notes):
    """The task inputs for the states the trace takes, after the problem's inputs (their names
    are added to ``taken``)."""
    states = runner.states
    taken.update(s.input for s in states)
    specs, words = [], []
    for s, (dt, dists, how) in zip(states, runner.specs()):
        spec = {"name": s.input, "dtype": dt,
                "shape": state_shape(s.tensor, state_shapes.get(s.name), runner.syms, analysis.init)}
        if dists:
            spec["distributions"] = dists
        specs.append(spec)
        words.append("%s as %s, %s" % (s.name, s.input, how))
    if states:
        if analysis.params is None:
            notes.add("the model cannot be built on the meta device, so parameter dims are symbols only where they "
                      "equal one fixed symbol's value")
        more = " and %d more" % (len(words) - 12) if len(words) > 12 else ""
        notes.add("the model's %d parameter and buffer tensor%s (%d values, seeded with torch.manual_seed(42)) are task "
                  "inputs after the problem's inputs; the samples hold the seeded values, verification draws others: %s%s"
                  % (len(states), "" if len(states) == 1 else "s", sum(s.tensor.numel() for s in states),
                     "; ".join(words[:12]), more))
    loose = loose_tensors(runner.model)
    if loose:
        notes.add("the model holds tensor attributes that are neither parameters nor buffers (%s): whatever forward "
                  "reads of them stays inside reference.pt as constants" % ", ".join(loose[:5]))
    return specs

