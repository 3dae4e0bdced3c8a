"""KernelBench problem file -> proposal: constants perturbed into symbols (_kbshapes), test
shapes searched and the trace checked at each (_kbtests), the model's parameters and buffers made
inputs (_kbparams), then the task assembled and written (_writer). The tolerance is
KernelBench's allclose: 1e-4 in fp32, 1e-2 in half types."""

import inspect
import os

import torch

from . import _kbparams, _task, _writer
from ._check import a_type
from ._errors import Refusal, refuse_exception
from ._kbload import Problem
from ._kbshapes import analyse
from ._kbtests import BENCH_CAP, Runner, Symbol, find_base, mixed, probe


def _input_names(problem, xs):
    params, varargs = problem.forward_params()
    line = problem.forward_line()
    if not xs:
        raise Refusal(problem.path, "get_inputs() returns no inputs: a task needs at least one input tensor")
    if len(xs) > len(params) and not varargs:
        raise Refusal(problem.path, "get_inputs() returns %d values but forward takes %d inputs" % (len(xs), len(params)),
                      line)
    names = params[:len(xs)] + ["x%d" % i for i in range(len(params), len(xs))]
    for i, (name, x) in enumerate(zip(names, xs)):
        if not isinstance(x, torch.Tensor):
            raise Refusal(problem.path, "forward input %d (%s) is %s: KernelForge inputs are tensors"
                          % (i + 1, name, a_type(x)), line)
        _task.dtype_name(x.dtype, problem.path, "forward input %d (%s)" % (i + 1, name))
    return names


def _raw_name(problem, key):
    name, index = key
    if index is None or sum(type(v) is int for v in problem.module.__dict__[name]) == 1:
        return name
    return "%s_%d" % (name, index)


def _symbols(problem, a, names, notes):
    """Symbol per constant that some dim follows; fixed when it builds weights, appears only in
    outputs, or moves a dim it is not."""
    used_in = {}
    for role, dims in (("input", a.inputs), ("output", a.outputs or []), ("param", (a.params or {}).values())):
        for shape in dims:
            for kind, v in shape:
                if kind == "const":
                    used_in.setdefault(v, set()).add(role)
    taken, syms, by_key = set(names), {}, {}
    for key, value in problem.constants.items():
        if key in used_in:
            name = _task.symbol_name(_raw_name(problem, key), taken)
            syms[name], by_key[key] = Symbol(key, value), name
    for key in problem.constants:
        if key not in by_key:
            continue
        s = by_key[key]
        if key in a.init:
            syms[s].fixed = True
            notes.add("%s stays %d: get_init_inputs() builds the model from it" % (s, syms[s].value))
        elif "input" not in used_in[key]:
            syms[s].fixed = True
            notes.add("%s stays %d: it sizes only outputs" % (s, syms[s].value))
    for role, ti, di, movers in a.moved:
        movers = [k for k in movers if k in by_key]
        if not movers:
            continue
        tensor = names[ti] if role == "input" else str(ti + 1)
        fixed = [by_key[k] for k in movers if not syms[by_key[k]].fixed]
        for s in fixed:
            syms[s].fixed = True
        notes.add("%s %s dim %d changes with %s but equals none of them, so it is a literal%s"
                  % (role, tensor, di, ", ".join(_raw_name(problem, k) for k in movers),
                     " and %s stay%s fixed" % (", ".join(fixed), "s" if len(fixed) == 1 else "") if fixed else ""))

    def entry(kind, v):
        return by_key[v] if kind == "const" else v
    in_shapes = [[entry(*d) for d in shape] for shape in a.inputs]
    out_shapes = None if a.outputs is None else [[entry(*d) for d in shape] for shape in a.outputs]
    state_shapes = {n: [entry(*d) for d in shape] for n, shape in (a.params or {}).items()}
    return syms, in_shapes, out_shapes, state_shapes


def _infer_outputs(runner, runs, base, free):
    """Output shapes from real runs: ([shapes], []) or (None, symbols to fix)."""
    shapes, fix = [], set()
    for ti, t in enumerate(base.outputs):
        shape = []
        for di in range(t.dim()):
            vals = [r.outputs[ti].shape[di] if r.outputs[ti].dim() == t.dim() else None for r in runs]
            if all(v == vals[0] for v in vals):
                shape.append(vals[0])
                continue
            cands = [s for s in free if all(r.binding[s] == v for r, v in zip(runs, vals))]
            if cands:
                shape.append(cands[0])
                continue
            movers = set()
            for r, v in zip(runs, vals):
                diff = [s for s in free if r.binding[s] != base.binding[s]]
                if len(diff) == 1 and v != t.shape[di]:
                    movers.add(diff[0])
            fix |= movers or set(free)
        shapes.append(shape)
    return (None, sorted(fix)) if fix else (shapes, [])


def _shape_of(shape, binding):
    return tuple(binding[d] if isinstance(d, str) else d for d in shape)


def _outputs(runner, predicted, runs, base, free):
    if predicted is not None and len(predicted) == len(base.outputs) and all(
            _shape_of(p, r.binding) == tuple(o.shape) for r in runs for p, o in zip(predicted, r.outputs)):
        return predicted, []
    return _infer_outputs(runner, runs, base, free)


def _search(problem, runner, lines, notes, task_dtype, predicted):
    while True:
        free = [n for n, s in runner.syms.items() if not s.fixed]
        base = find_base(runner, free)
        out_dtypes = [_task.dtype_name(o.dtype, problem.path, "forward output %d" % (i + 1))
                      for i, o in enumerate(base.outputs)]
        runner.tols = [_task.kernelbench_tolerance(task_dtype, d) if _task.is_float(d) else None for d in out_dtypes]
        traced = runner.trace(base, lines, notes)
        if not runner.run(base.binding, traced).traced_ok:
            raise Refusal(problem.path, "the trace of forward does not reproduce forward at the shape it was traced at",
                          runner.line)
        runs = [base]
        if not all(probe(runner, s, base, traced, runs, notes) for s in free):
            continue
        tests = mixed(runner, free, base, traced, notes)
        runs = [r for r in runs if r.ok] + tests
        out_shapes, fix = _outputs(runner, predicted, runs, base, free)
        if not fix:
            return traced, base, tests, out_shapes
        for s in fix:
            runner.syms[s].fixed = True
        notes.add("an output dim changes with %s but equals no symbol, so %s stay%s fixed"
                  % (", ".join(fix), ", ".join(fix), "s" if len(fix) == 1 else ""))
        predicted = None


def _description(problem):
    for doc in (problem.module.__doc__, inspect.getdoc(problem.Model) if problem.Model.__doc__ else None):
        text = _task.first_paragraph(doc)
        if text:
            return text
    return "Imported from %s (KernelBench format)" % os.path.basename(problem.path)


def _samples(tests, names, states, out_names, elements):
    """The two smallest tests; ``states``: [(input name, seeded value)] after the problem's inputs."""
    chosen = sorted(range(len(tests)), key=lambda i: (elements(tests[i].binding), i))[:2]
    return [{"label": "t%d" % i, "shape": dict(tests[i].binding),
             "inputs": list(zip(names, tests[i].inputs)) + states, "expected": list(zip(out_names, tests[i].outputs))}
            for i in sorted(chosen)]


def import_problem(path, out, dtype=None, arch="sm_90"):
    """Writes the proposal for the KernelBench problem at ``path`` into ``out``."""
    notes = _task.Notes()
    problem = Problem(path, _task.BY_NAME[dtype] if dtype else None)
    with open(problem.path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    try:
        first = problem.inputs("meta")
    except Refusal:
        first = problem.inputs("cpu")
    names = _input_names(problem, first)
    floats = [x.dtype for x in first if x.is_floating_point()]
    task_dtype = dtype or (_task.DTYPES.get(floats[0], "fp32") if floats else "fp32")
    if dtype:
        notes.add("float inputs and the model are cast to %s (--dtype)" % dtype)
    analysis = analyse(problem)
    if not analysis.meta_inputs:
        notes.add("get_inputs() does not run on the meta device; shapes were found on the CPU")
    syms, in_shapes, predicted, state_shapes = _symbols(problem, analysis, names, notes)
    model = problem.model("cpu").requires_grad_(False)
    runner = Runner(problem, model, names, syms, in_shapes, None)
    traced, base, tests, out_shapes = _search(problem, runner, lines, notes, task_dtype, predicted)

    bench = runner.bench()
    meta_inputs = None
    try:
        meta_inputs = problem.inputs("meta") + [s.tensor.to("meta") for s in runner.states]
    except Refusal:
        pass
    if runner.elements(bench) <= BENCH_CAP:
        r = base if base.binding == bench else runner.run(bench, traced)
        if r.error is not None:
            raise refuse_exception(problem.path, "forward at the problem's shape", r.error)
        if not r.traced_ok and r is not base:
            raise Refusal(problem.path, "the traced reference differs from forward at the problem's shape", runner.line)
        for i, (shape, o) in enumerate(zip(out_shapes, r.outputs)):
            if _shape_of(shape, bench) != tuple(o.shape):
                raise Refusal(problem.path, "forward output %d has shape %s at the problem's shape, not %s as the test "
                                            "shapes suggest" % (i + 1, tuple(o.shape), _shape_of(shape, bench)), runner.line)
    else:
        notes.add("the problem's shape (%d input elements) was checked on the meta device only" % runner.elements(bench))

    inputs = []
    for i, (name, shape) in enumerate(zip(names, in_shapes)):
        dt = _task.DTYPES[base.inputs[i].dtype]
        spec = {"name": name, "dtype": dt, "shape": shape}
        ranges = [_task.value_range(r.inputs[i]) for r in tests]
        ranges = [x for x in ranges if x[0] is not None]
        lo = min(x[0] for x in ranges) if ranges else None
        hi = max(x[1] for x in ranges) if ranges else None
        dists, note = _task.distributions(name, dt, lo, hi)
        if dists:
            spec["distributions"] = dists
        if note:
            notes.add(note)
        inputs.append(spec)
    taken = set(names) | set(syms)
    inputs += _kbparams.task_inputs(runner, analysis, state_shapes, taken, notes)
    out_names = _task.output_names(len(base.outputs), taken)
    outputs = []
    for name, o, shape, tol in zip(out_names, base.outputs, out_shapes, runner.tols):
        spec = {"name": name, "dtype": _task.dtype_name(o.dtype, problem.path, "output %s" % name), "shape": shape}
        if tol:
            spec["tolerance"] = tol
        outputs.append(spec)
    symbols = {}
    for n, s in syms.items():
        top = max([s.value] + [r.binding[n] for r in tests])
        symbols[n] = {"min": s.value if s.fixed else s.min, "max": s.value if s.fixed else top}
        if s.multiple_of > 1 and not s.fixed:
            symbols[n]["multiple_of"] = s.multiple_of
    task = {
        "schema_version": 1,
        "name": _task.task_name(os.path.splitext(os.path.basename(path))[0]),
        "description": _description(problem),
        "architectures": [arch],
        "symbols": symbols,
        "inputs": inputs,
        "outputs": outputs,
        "shapes": {"tests": [dict({"label": "t%d" % i}, **r.binding) for i, r in enumerate(tests)],
                   "benchmarks": [dict({"label": "problem"}, **bench)]},
        "reference": {"torchscript": "reference.pt", "inputs": [t["name"] for t in inputs]},
        "cost": {"bytes": _task.cost_bytes([(s["dtype"], s["shape"]) for s in inputs + outputs])},
    }
    states = [(s.input, s.tensor.detach().clone()) for s in runner.states]
    samples = _samples(tests, names, states, out_names, runner.elements)
    return _writer.write(out, "kernelbench", task, traced, [(problem.path, os.path.basename(problem.path))],
                         samples, notes, problem.path, meta_inputs, runner.elements(bench) > BENCH_CAP)
