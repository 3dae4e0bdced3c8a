"""Which dims of a KernelBench problem's tensors are symbols, found by perturbation: every int
constant of the file is bumped (value+1, value+3) in the module's globals and get_inputs() drawn
again on the meta device (and the model run there for the outputs). A dim that follows exactly one
constant becomes that constant's symbol; a dim that never moves is a literal; a dim that moves
otherwise (2*dim, dim-1) stays at its value. A constant that changes get_init_inputs() builds
weights, so its symbol is fixed; the model is built again on meta at each such bump (at twice the
value when it refuses both bumps), and a parameter or buffer dim that follows the constant is
its symbol."""

import torch

from . import _devices
from ._errors import Refusal
from ._kbparams import collect

BUMPS = (1, 3)


def _shapes(tensors):
    return [tuple(t.shape) if isinstance(t, torch.Tensor) else None for t in tensors]


def meta_outputs(problem, inputs, model=None):
    """The output shapes of forward on meta tensors, or None when the model cannot run there."""
    from ._check import flat_outputs
    try:
        model = model if model is not None else problem.model("meta")
        with torch.no_grad(), _devices.on("meta"):
            out = model(*inputs)
        return _shapes(flat_outputs(out, problem.path, None))
    except Exception:  # noqa: BLE001 - meta is only a shortcut; the real runs decide
        return None


class Analysis:
    """``inputs``/``outputs``: per tensor, per dim, ("const", key) or ("lit", value); ``outputs``
    is None when the model does not run on meta. ``params`` maps each parameter or buffer's
    qualified name to its dims the same way (None when the model cannot be built on meta).
    ``init`` holds the constants that feed the model's construction, ``moved`` the (role, tensor,
    dim, constants) that move but follow none."""

    def __init__(self):
        self.inputs, self.outputs, self.init, self.moved, self.meta_inputs = [], None, set(), [], True
        self.params = None


def _build(problem):
    try:
        return problem.model("meta")
    except Exception:  # noqa: BLE001 - a model that cannot be built on meta: shapes come from real runs
        return None


def _state_shapes(model, names):
    """The shapes of ``model``'s states in the order of ``names`` (None for one it lacks)."""
    shapes = {s.name: tuple(s.tensor.shape) for s in collect(model)}
    return [shapes.get(n) for n in names]


def _draw(problem):
    try:
        return problem.inputs("meta"), True
    except Refusal:
        return problem.inputs("cpu"), False


def _classify(base, seen, constants, init):
    """One tensor list's dims: ``seen`` maps key -> [(bumped value, shapes or None)]."""
    result, moved = [], []
    for ti, shape in enumerate(base):
        dims = []
        for di, b in enumerate(shape or ()):
            movers, followers = set(), set()
            for key, runs in seen.items():
                obs = [(v, s[ti][di] if s is not None and s[ti] is not None and len(s[ti]) == len(shape) else None)
                       for v, s in runs if s is not False]
                if any(o != b for _, o in obs):
                    movers.add(key)
                if obs and b == constants[key] and all(o == v for v, o in obs):
                    followers.add(key)
            # Constants that build the model are never varied: they count only when alone.
            varied = movers - init or movers
            if len(varied) == 1 and varied <= followers:
                dims.append(("const", next(iter(varied))))
            else:
                dims.append(("lit", b))
                if movers - init:
                    moved.append((ti, di, sorted(movers - init, key=str)))
        result.append(dims)
    return result, moved


class _Base:
    """What the unbumped problem gives: init signature, meta model, inputs, outputs, states."""

    def __init__(self, problem, a):
        self.inputs, a.meta_inputs = _draw(problem)
        self.init = problem.init_signature()
        self.model = _build(problem)
        self.outputs = meta_outputs(problem, self.inputs, self.model) if self.model is not None and a.meta_inputs else None
        self.names = [s.name for s in collect(self.model)] if self.model is not None else None
        self.states = _state_shapes(self.model, self.names) if self.model is not None else None


def _bump(problem, a, base, key, v, runs_in, runs_out, runs_p):
    """Observes the shapes with constant ``key`` at ``v``; False when the model had to be built
    again and could not be."""
    problem.set(key, v)
    try:
        try:
            init_changed = problem.init_signature() != base.init
        except Refusal:
            init_changed = True
        bumped = base.model
        if init_changed:
            a.init.add(key)
            bumped = _build(problem) if base.model is not None else None
        if base.states is not None:
            runs_p.append((v, False if bumped is None else _state_shapes(bumped, base.names)))
        try:
            xs = problem.inputs("meta" if a.meta_inputs else "cpu")
        except Refusal:
            runs_in.append((v, False))       # unknown: this value breaks get_inputs
            runs_out.append((v, False))
            return bumped is not None
        shapes = _shapes(xs)
        runs_in.append((v, shapes if len(shapes) == len(base.inputs) else None))
        if base.outputs is not None:
            out = meta_outputs(problem, xs, bumped) if bumped is not None else None
            runs_out.append((v, False if out is None else out if len(out) == len(base.outputs) else None))
        return bumped is not None
    finally:
        problem.restore()


def analyse(problem):
    a = Analysis()
    base = _Base(problem, a)
    seen_in, seen_out, seen_p = {}, {}, {}
    for key, value in problem.constants.items():
        if value < 0:
            continue
        runs_in, runs_out, runs_p = [], [], []
        built = [_bump(problem, a, base, key, value + bump, runs_in, runs_out, runs_p) for bump in BUMPS]
        if base.model is not None and not any(built) and value > 1:
            # The model refuses value+1 and value+3 (a divisibility check, say): try twice the value.
            _bump(problem, a, base, key, 2 * value, runs_in, runs_out, runs_p)
        seen_in[key], seen_out[key], seen_p[key] = runs_in, runs_out, runs_p
    a.inputs, moved = _classify(_shapes(base.inputs), seen_in, problem.constants, a.init)
    a.moved = [("input",) + m for m in moved]
    if base.outputs is not None:
        a.outputs, moved = _classify(base.outputs, seen_out, problem.constants, a.init)
        a.moved += [("output",) + m for m in moved]
    if base.states is not None:
        dims, _ = _classify(base.states, seen_p, problem.constants, a.init)
        a.params = dict(zip(base.names, dims))
    return a
