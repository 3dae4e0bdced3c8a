"""The reference of an op, run with PyTorch: the catalog op or op tape its task names, or the
TorchScript module it carries. The same mapping KernelForge's runner uses
(device/runner/TorchBridgeReference.cpp), so the fallback computes what the kernel was verified
against.
"""

import io

import torch

DTYPES = {
    "fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
    "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}


def _last_dims(x, count, op):
    if count < 1 or count > x.dim():
        raise ValueError("%s: normalized_dims is %d but the input has %d dimension(s)" % (op, count, x.dim()))
    return list(x.shape[x.dim() - count:])


def _binary(fn):
    def run(xs, a):
        if len(xs) == 2:
            return fn(xs[0], xs[1])
        return fn(xs[0], a["scalar"])
    return run


def _reduce(fn):
    def run(xs, a):
        keep = bool(a.get("keepdim", False))
        if a.get("dim") is None:
            return fn(xs[0], dim=None, keepdim=keep) if fn is not torch.amax else torch.amax(xs[0], dim=(), keepdim=keep)
        return fn(xs[0], dim=a["dim"], keepdim=keep)
    return run


OPS = {
    "add": _binary(torch.add), "sub": _binary(torch.sub), "mul": _binary(torch.mul), "div": _binary(torch.div),
    "neg": lambda xs, a: torch.neg(xs[0]), "abs": lambda xs, a: torch.abs(xs[0]),
    "exp": lambda xs, a: torch.exp(xs[0]), "log": lambda xs, a: torch.log(xs[0]),
    "sqrt": lambda xs, a: torch.sqrt(xs[0]), "rsqrt": lambda xs, a: torch.rsqrt(xs[0]),
    "tanh": lambda xs, a: torch.tanh(xs[0]), "sigmoid": lambda xs, a: torch.sigmoid(xs[0]),
    "relu": lambda xs, a: torch.relu(xs[0]), "silu": lambda xs, a: torch.nn.functional.silu(xs[0]),
    "gelu": lambda xs, a: torch.nn.functional.gelu(xs[0], approximate=a.get("approximate", "none")),
    "softmax": lambda xs, a: torch.softmax(xs[0], a.get("dim", -1)),
    "log_softmax": lambda xs, a: torch.log_softmax(xs[0], a.get("dim", -1)),
    "layer_norm": lambda xs, a: torch.nn.functional.layer_norm(
        xs[0], _last_dims(xs[0], a.get("normalized_dims", 1), "layer_norm"),
        xs[1] if len(xs) > 1 else None, xs[2] if len(xs) > 2 else None, a.get("eps", 1e-5)),
    "rms_norm": lambda xs, a: torch.nn.functional.rms_norm(
        xs[0], _last_dims(xs[0], a.get("normalized_dims", 1), "rms_norm"),
        xs[1] if len(xs) > 1 else None, a.get("eps")),
    "matmul": lambda xs, a: torch.matmul(xs[0], xs[1]),
    "bmm": lambda xs, a: torch.bmm(xs[0], xs[1]),
    "transpose": lambda xs, a: xs[0].transpose(a["dim0"], a["dim1"]).clone(memory_format=torch.contiguous_format),
    "permute": lambda xs, a: xs[0].permute(a["dims"]).clone(memory_format=torch.contiguous_format),
    "sum": _reduce(torch.sum), "mean": _reduce(torch.mean), "amax": _reduce(torch.amax),
    "cumsum": lambda xs, a: torch.cumsum(xs[0], a["dim"]),
    "to": lambda xs, a: xs[0].to(DTYPES[a["dtype"]], copy=True),
    "clone": lambda xs, a: torch.clone(xs[0], memory_format=torch.contiguous_format),
}


class Reference:
    """Computes an op's outputs from its inputs with PyTorch ops."""

    def __init__(self, op, files):
        self.op = op
        self.input_names = [t["name"] for t in op["inputs"]]
        self.outputs = [(t["name"], DTYPES[t["dtype"]]) for t in op["outputs"]]
        ref = op["reference"]
        self.kind = ref["kind"]
        self.module = None
        if self.kind == "tape":
            self.steps = ref["steps"]
            for s in self.steps:
                if s["op"] not in OPS:
                    raise ValueError("cast::%s: the reference names \"%s\", which this loader does not know"
                                     % (op["name"], s["op"]))
        else:
            self.script_inputs = ref["inputs"]
            self.script_bytes = files[ref["file"]]

    def _module(self, device):
        if self.module is None or self.module[0] != device:
            self.module = (device, torch.jit.load(io.BytesIO(self.script_bytes), map_location=device))
        return self.module[1]

    def __call__(self, inputs):
        """inputs: tensors in the op's input order. Returns a tuple in output order."""
        with torch.no_grad():
            values = dict(zip(self.input_names, inputs))
            if self.kind == "tape":
                for s in self.steps:
                    args = [values[n] for n in s["inputs"]]
                    values[s["output"]] = OPS[s["op"]](args, s.get("attrs") or {})
                results = [values[n] for n, _ in self.outputs]
            else:
                r = self._module(inputs[0].device)(*[values[n] for n in self.script_inputs])
                results = list(r) if isinstance(r, (tuple, list)) else [r]
        out = []
        for r, (_, dtype) in zip(results, self.outputs):
            if r.dtype != dtype:
                r = r.to(dtype)
            r = r.contiguous()
            if any(r.data_ptr() == x.data_ptr() for x in inputs if x.numel() and r.numel()):
                r = r.clone()
            out.append(r)
        return tuple(out)
