"""Generic substitution: a model's graph with every call site a packaged kernel implements
replaced by the cast:: operator — no monkey-patching, no per-op code.

A package op's reference (its catalog op or op tape, the one its kernel was verified against) is
the pattern. Each call_function node of an exported graph whose ATen op maps to a catalog op is a
candidate; a tape matches connected nodes (add → rms_norm). A match must agree on the attributes
(dim, eps, approximate, ...), and each call site's tensors must fit the kernel: dtype, rank,
contiguity, fixed extents, the symbol ranges and constraints it was verified for. Every candidate
that does not match is kept and reported with the reason.
"""

import operator

import torch

from ._expr import ExprError
from ._reference import DTYPES

aten = torch.ops.aten

# ATen overload -> (catalog op, attribute reader(args, kwargs) -> (tensor args, attrs) or None when
# the call uses something the catalog op cannot express).
def _binary(name):
    def read(args, kwargs):
        if kwargs.get("alpha", 1) != 1 or len(args) != 2:
            return None
        if not isinstance(args[1], torch.fx.Node):   # x op scalar: the catalog's "scalar" attribute
            return [args[0]], {"scalar": args[1]}
        return [args[0], args[1]], {}
    return name, read


def _unary(name):
    return name, lambda args, kwargs: ([args[0]], {}) if len(args) == 1 and not kwargs else None


def _softmax(name):
    def read(args, kwargs):
        dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
        if dtype not in (None, False):
            return None
        return [args[0]], {"dim": args[1]}
    return name, read


def _norm(name, eps_default, has_bias):
    def read(args, kwargs):
        x, shape = args[0], args[1]
        rest = list(args[2:])
        weight = rest.pop(0) if rest else kwargs.get("weight")
        bias = (rest.pop(0) if rest else kwargs.get("bias")) if has_bias else None
        eps = rest.pop(0) if rest else kwargs.get("eps", eps_default)
        tensors = [x] + ([weight] if weight is not None else []) + ([bias] if bias is not None else [])
        if bias is not None and weight is None:
            return None
        return tensors, {"eps": eps, "normalized_dims": len(shape)}
    return name, read


ATEN_TO_CATALOG = {
    aten.add.Tensor: _binary("add"), aten.sub.Tensor: _binary("sub"),
    aten.mul.Tensor: _binary("mul"), aten.div.Tensor: _binary("div"),
    aten.neg.default: _unary("neg"), aten.abs.default: _unary("abs"), aten.exp.default: _unary("exp"),
    aten.log.default: _unary("log"), aten.sqrt.default: _unary("sqrt"), aten.rsqrt.default: _unary("rsqrt"),
    aten.tanh.default: _unary("tanh"), aten.sigmoid.default: _unary("sigmoid"), aten.relu.default: _unary("relu"),
    aten.silu.default: _unary("silu"),
    aten.gelu.default: ("gelu", lambda a, k: ([a[0]], {"approximate": a[1] if len(a) > 1 else k.get("approximate", "none")})),
    aten.softmax.int: _softmax("softmax"), aten.log_softmax.int: _softmax("log_softmax"),
    aten._softmax.default: _softmax("softmax"), aten._log_softmax.default: _softmax("log_softmax"),
    aten.rms_norm.default: _norm("rms_norm", None, False),
    aten.layer_norm.default: _norm("layer_norm", 1e-5, True),
    aten.mm.default: ("matmul", lambda a, k: ([a[0], a[1]], {})),
    aten.matmul.default: ("matmul", lambda a, k: ([a[0], a[1]], {})),
    aten.bmm.default: ("bmm", lambda a, k: ([a[0], a[1]], {})),
}

# Catalog defaults, so an attribute a task leaves out compares equal to the call's explicit value.
DEFAULTS = {"softmax": {"dim": -1}, "log_softmax": {"dim": -1}, "gelu": {"approximate": "none"},
            "layer_norm": {"eps": 1e-5, "normalized_dims": 1}, "rms_norm": {"eps": None, "normalized_dims": 1}}
DTYPE_NAMES = {t: name for name, t in DTYPES.items()}


def _step_of(node):
    """(catalog op, tensor argument nodes, attrs) of a call site, or None."""
    if node.op != "call_function" or node.target not in ATEN_TO_CATALOG:
        return None
    name, read = ATEN_TO_CATALOG[node.target]
    got = read(list(node.args), dict(node.kwargs))
    if got is None or not all(isinstance(t, torch.fx.Node) for t in got[0]):
        return None
    return name, got[0], got[1]


def _val(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _attrs_agree(op_name, step_attrs, call_attrs, rank):
    want = dict(DEFAULTS.get(op_name, {}))
    want.update(step_attrs or {})
    for k, v in call_attrs.items():
        w = want.get(k, None)
        if k == "dim" and isinstance(v, int) and isinstance(w, int) and rank:
            v, w = v % rank, w % rank
        if v != w:
            return "%s %r, kernel %r" % (k, v, w)
    return None


class _Match:
    def __init__(self):
        self.nodes = []          # matched graph nodes, one per tape step
        self.inputs = {}         # op input name -> graph node


def _match_step(op, steps, k, node, m, step_nodes):
    """Does tape step k match `node` (binding op inputs in m)? Returns a reason when not."""
    step = steps[k]
    got = _step_of(node)
    if got is None or got[0] != step["op"]:
        return "not a %s" % step["op"]
    name, args, attrs = got
    if len(args) != len(step["inputs"]):
        return "%d tensor arguments, the kernel's %s takes %d" % (len(args), name, len(step["inputs"]))
    val = _val(args[0])
    why = _attrs_agree(name, step.get("attrs"), attrs, val.dim() if val is not None else 0)
    if why:
        return why
    outputs_by_name = {s["output"]: i for i, s in enumerate(steps[:k])}
    for arg, ref_name in zip(args, step["inputs"]):
        if ref_name in outputs_by_name:
            j = outputs_by_name[ref_name]
            if step_nodes[j] is None:
                step_nodes[j] = arg
                why = _match_step(op, steps, j, arg, m, step_nodes)
                if why:
                    return why
            elif step_nodes[j] is not arg:
                return "the pattern's steps are connected differently"
        else:
            if ref_name in m.inputs and m.inputs[ref_name] is not arg:
                return "input %s would be two different values" % ref_name
            m.inputs[ref_name] = arg
    return None


def _fits(cast_op, m):
    """Why the bound tensors do not fit the kernel, or None."""
    vals = []
    for name, dtype, dname, shape in cast_op.inputs:
        v = _val(m.inputs.get(name))
        if v is None:
            return "no shape information for %s" % name
        if v.dtype != dtype:
            return "%s is %s, the kernel takes %s" % (name, DTYPE_NAMES.get(v.dtype, v.dtype), dname)
        if v.dim() != len(shape):
            return "%s has %d dimension(s), the kernel takes %d" % (name, v.dim(), len(shape))
        try:
            if not v.is_contiguous():
                return "%s is not contiguous" % name
        except Exception:  # noqa: BLE001 - a symbolic layout: the call checks it
            pass
        vals.append(v)
    if any(not isinstance(s, int) for v in vals for s in v.shape):
        return None   # symbolic extents: every call checks them (ValueError naming the argument)
    try:
        cast_op.bind(vals)
    except ValueError as e:
        return str(e).split(": ", 1)[-1]
    except ExprError as e:
        return str(e)
    return None


def substitute(gm, cast_ops):
    """Rewrites ``gm`` (a torch.fx.GraphModule, e.g. ExportedProgram.module()) in place.
    ``cast_ops``: the CastOp objects of a loaded package. Returns the report: one dict per
    candidate call site with node, op, status ("substituted" or "kept"), cast_op and reason."""
    graph = gm.graph
    report = []
    claimed = set()
    order = {n: i for i, n in enumerate(graph.nodes)}
    # Longer tapes first, so a fused add → rms_norm wins over a plain add of the same nodes.
    ops = sorted(cast_ops, key=lambda o: -len(o.manifest["reference"].get("steps", [])))
    candidates = [n for n in graph.nodes if _step_of(n) is not None]
    reasons = {}
    for cast_op in ops:
        ref = cast_op.manifest["reference"]
        if ref["kind"] != "tape":
            continue
        steps = ref["steps"]
        output_names = [t[0] for t in cast_op.outputs]
        for node in candidates:
            if node in claimed:
                continue
            m = _Match()
            step_nodes = [None] * len(steps)
            step_nodes[-1] = node
            why = _match_step(cast_op, steps, len(steps) - 1, node, m, step_nodes)
            if why is None and any(s is None or s in claimed for s in step_nodes):
                why = "part of another substitution"
            if why is None and len(set(step_nodes)) != len(step_nodes):
                why = "two steps of the pattern would be one call"
            if why is None:
                # An intermediate value the op does not return must not be used outside the pattern.
                for s, sn in zip(steps, step_nodes):
                    if s["output"] not in output_names and any(u not in step_nodes for u in sn.users):
                        why = "%s's result is used elsewhere and the kernel does not return it" % s["op"]
            if why is None:
                # The op runs where the pattern ends: a result it returns may not be used earlier.
                last = max(step_nodes, key=lambda n: order[n])
                for s, sn in zip(steps, step_nodes):
                    if s["output"] in output_names and any(u not in step_nodes and order[u] < order[last] for u in sn.users):
                        why = "%s's result is used before the pattern ends" % s["op"]
            if why is None:
                why = _fits(cast_op, m)
            if why is not None:
                if _step_of(node)[0] == steps[-1]["op"]:
                    reasons.setdefault(node, []).append("cast::%s: %s" % (cast_op.name, why))
                continue
            names = [(sn.name, _step_of(sn)[0]) for sn in step_nodes]
            last = max(step_nodes, key=lambda n: order[n])
            with graph.inserting_before(last):
                args = tuple(m.inputs[name] for name, _, _, _ in cast_op.inputs)
                call = graph.call_function(getattr(torch.ops.cast, cast_op.name).default, args)
                produced = {}
                for i, out in enumerate(output_names):
                    produced[out] = call if len(output_names) == 1 else graph.call_function(operator.getitem, (call, i))
            for s, sn in zip(steps, step_nodes):
                if s["output"] in produced:
                    sn.replace_all_uses_with(produced[s["output"]])
            for sn in sorted(step_nodes, key=lambda n: -order[n]):
                if not sn.users:
                    graph.erase_node(sn)
            claimed.update(step_nodes)
            order = {n: i for i, n in enumerate(graph.nodes)}   # the graph changed: new nodes, erased ones
            for node_name, op_name in names:
                report.append({"node": node_name, "op": op_name, "status": "substituted",
                               "cast_op": cast_op.name, "reason": ""})
    for node in candidates:
        if node in claimed:
            continue
        report.append({"node": node.name, "op": _step_of(node)[0], "status": "kept", "cast_op": "",
                       "reason": "; ".join(reasons.get(node, [])) or "no packaged kernel implements %s" % _step_of(node)[0]})
    graph.lint()
    gm.recompile()
    return report


def format_report(report):
    """The report as aligned text lines."""
    lines = []
    for r in report:
        lines.append("  %-12s %-18s %-11s %s" % (r["op"], r["node"], r["status"],
                                                  ("cast::" + r["cast_op"]) if r["cast_op"] else r["reason"]))
    return "\n".join(lines)


__all__ = ["substitute", "format_report"]
