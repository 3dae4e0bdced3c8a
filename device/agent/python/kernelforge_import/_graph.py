"""What a traced reference's graph may not hold: random ops (refused, with the problem line that
calls them) and devices fixed at trace time. Tracing records every device= of a factory op as the
constant device it ran on ("cpu" here), so the trace would create tensors on the CPU when the
runner feeds it CUDA inputs; each such argument is rewired to follow the graph's first tensor
input, unless the problem's own line names the CPU (refused)."""

import os
import re

from ._errors import Refusal

# aten kind -> what the user wrote. Dropout-like ops are random only with train/training true.
RANDOM = {
    "aten::rand": "torch.rand", "aten::randn": "torch.randn", "aten::rand_like": "torch.rand_like",
    "aten::randn_like": "torch.randn_like", "aten::randint": "torch.randint",
    "aten::randint_like": "torch.randint_like", "aten::randperm": "torch.randperm",
    "aten::bernoulli": "torch.bernoulli", "aten::bernoulli_": "Tensor.bernoulli_",
    "aten::normal": "torch.normal", "aten::normal_": "Tensor.normal_", "aten::multinomial": "torch.multinomial",
    "aten::uniform_": "Tensor.uniform_", "aten::exponential_": "Tensor.exponential_",
    "aten::geometric_": "Tensor.geometric_", "aten::cauchy_": "Tensor.cauchy_",
    "aten::log_normal_": "Tensor.log_normal_", "aten::random_": "Tensor.random_", "aten::poisson": "torch.poisson",
    "aten::dropout": "dropout", "aten::dropout_": "dropout", "aten::native_dropout": "dropout",
    "aten::feature_dropout": "dropout", "aten::alpha_dropout": "alpha_dropout",
    "aten::feature_alpha_dropout": "alpha_dropout", "aten::rrelu": "rrelu", "aten::rrelu_with_noise": "rrelu",
}
_TRAINING_ARGS = ("train", "training")
_FRAME = re.compile(r"^(.*)\((\d+)\): \S+$")
_CPU_PIN = re.compile(r"""device\s*=\s*(torch\.device\(\s*)?['"]cpu|\.cpu\(\s*\)|\.to\(\s*['"]cpu""")


def nodes(block):
    """Every node of a graph or block, nested blocks included."""
    for node in block.nodes():
        yield node
        for sub in node.blocks():
            yield from nodes(sub)


def _arg_names(node):
    try:
        schema = node.schema()
    except RuntimeError:
        return []
    if "(" not in schema or ") ->" not in schema:
        return []
    args = schema[schema.index("(") + 1:schema.rindex(") ->")]
    return [a.strip().split(" ")[-1].split("=")[0] for a in args.split(",") if a.strip() not in ("", "*")]


def _constant(value):
    node = value.node()
    return (True, value.toIValue()) if node.kind() == "prim::Constant" else (False, None)


def source_line(node, path):
    """The line of ``path`` that made ``node`` (the innermost frame in that file), or None."""
    want = os.path.realpath(str(path))
    for text in str(node.sourceRange()).splitlines():
        m = _FRAME.match(text.strip())
        if m and os.path.realpath(m.group(1)) == want:
            return int(m.group(2))
    return None


def find_random(traced, path, who="forward"):
    """Refuses the first random op of the traced graph, naming the line of ``path`` that calls it."""
    for node in nodes(traced.inlined_graph):
        name = RANDOM.get(node.kind())
        if name is None:
            continue
        names = _arg_names(node)
        flag = next((i for i, n in enumerate(names) if n in _TRAINING_ARGS), None)
        if flag is not None and flag < node.inputsSize():
            known, value = _constant(node.inputsAt(flag))
            if known and not value:
                continue
            name = "%s with training=True" % name
        raise Refusal(path, "%s calls %s (a random op): KernelForge needs a deterministic reference" % (who, name),
                      source_line(node, path))


def _graphs(traced):
    seen = set()
    for module in traced.modules():
        try:
            graph = module.graph
        except (AttributeError, RuntimeError):
            continue
        if id(graph) not in seen:
            seen.add(id(graph))
            yield graph


def unpin_devices(traced, path, lines):
    """Rewires every constant device argument to ``prim::device(first tensor input)``; refuses one
    whose source line in ``path`` (text in ``lines``) names the CPU. Returns how many it rewired."""
    count = 0
    for graph in _graphs(traced):
        tensors = [v for v in list(graph.inputs())[1:] if v.type().kind() == "TensorType"]
        for node in list(nodes(graph)):
            names = _arg_names(node)
            if "device" not in names or names.index("device") >= node.inputsSize():
                continue
            i = names.index("device")
            value = node.inputsAt(i)
            known, device = _constant(value)
            if not known or device is None or value.type().kind() != "DeviceObjType":
                continue
            line = source_line(node, path)
            if line is not None and 0 < line <= len(lines) and _CPU_PIN.search(lines[line - 1]):
                raise Refusal(path, "forward puts a tensor on the CPU (%s): the reference must follow its "
                                    "inputs' device" % node.kind().split("::")[-1], line)
            if not tensors:
                continue
            get = graph.create("prim::device", [tensors[0]])
            get.output().setType(value.type())
            get.insertBefore(node)
            node.replaceInput(i, get.output())
            count += 1
    return count


def is_device_error(exc):
    """Whether running on meta failed because a tensor was made on another device."""
    text = str(exc)
    return "cpu" in text and "meta" in text and "device" in text
