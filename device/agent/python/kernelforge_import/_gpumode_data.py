"""GPU MODE entries and data: which keys of the tests/benchmarks entries are symbols, what
generate_input(**entry) returns (drawn on the CPU for tests, on meta for benchmarks), and the
module that calls ref_kernel on task inputs, making every preallocated output itself."""

import math

import torch

from . import _devices, _phase
from ._check import a_type, clones, flat_outputs
from ._errors import Refusal, refuse_exception


def kwargs_text(entry):
    return ", ".join("%s=%r" % kv for kv in entry.items())


def entries(spec, yml, notes):
    """(tests, benchmarks, integer keys): non-integer keys that differ between entries keep only
    the entries that agree with the first benchmark (or test) on them."""
    lists = {}
    for field in ("tests", "benchmarks"):
        value = spec.get(field) or []
        if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
            raise Refusal(yml, "%s is not a list of maps" % field)
        lists[field] = value
    tests, benches = lists["tests"], lists["benchmarks"]
    if not tests:
        raise Refusal(yml, "tests lists no entry: a task needs at least one test shape")
    every = tests + benches
    keys = list(dict.fromkeys(k for e in every for k in e))
    int_keys = [k for k in keys if k != "seed" and all(type(e.get(k)) is int for e in every)]
    varying = [k for k in keys if k != "seed" and k not in int_keys and len({repr(e.get(k)) for e in every}) > 1]
    if varying:
        first = (benches or tests)[0]
        keep = [e for e in every if all(repr(e.get(k)) == repr(first.get(k)) for k in varying)]
        tests, benches = [e for e in tests if e in keep], [e for e in benches if e in keep]
        notes.add("entries differ in %s, which sizes no tensor as an integer: only those with %s were kept"
                  % (", ".join(varying), kwargs_text({k: first.get(k) for k in varying})))
        if not tests:
            raise Refusal(yml, "no test entry has %s like the benchmarks" % kwargs_text({k: first.get(k) for k in varying}))
    seeds = [e["seed"] for e in tests + benches if "seed" in e]
    if seeds:
        notes.add("the entries' seed values (%s) are not used: KernelForge draws its own inputs"
                  % ", ".join(str(s) for s in seeds))
    return tests, benches, int_keys


def parts(data, path, line, entry):
    """generate_input's result as (list of tensors, "single" | "tuple" | "list")."""
    if isinstance(data, torch.Tensor):
        return [data], "single"
    if isinstance(data, (tuple, list)) and data:
        for i, d in enumerate(data):
            if not isinstance(d, torch.Tensor):
                raise Refusal(path, "generate_input(%s) returns %s as part %d of the data: KernelForge inputs are "
                                    "tensors" % (kwargs_text(entry), a_type(d), i + 1), line)
        return list(data), type(data).__name__
    raise Refusal(path, "generate_input(%s) returns %s: KernelForge inputs are tensors"
                  % (kwargs_text(entry), a_type(data)), line)


def generate(ref, entry, device, path, line):
    torch.manual_seed(0)
    _phase.problem("calling generate_input(%s)" % kwargs_text(entry))
    try:
        with _devices.on(device):
            data = ref.generate_input(**entry)
    except Exception as e:  # noqa: BLE001 - the problem's own code
        raise refuse_exception(path, "generate_input(%s)" % kwargs_text(entry), e)
    return parts(data, path, line, entry)


def pack(xs, kind):
    return xs[0] if kind == "single" else tuple(xs) if kind == "tuple" else list(xs)


def call(ref, xs, kind, device, path, line):
    """ref_kernel on ``xs`` themselves (not copies): its outputs as a list of tensors. On the CPU
    an exception is refused; on meta it propagates (the caller falls back)."""
    _phase.problem("calling ref_kernel")
    try:
        with torch.no_grad(), _devices.on(device):
            out = ref.ref_kernel(pack(xs, kind))
    except Exception as e:  # noqa: BLE001 - the problem's own code
        if device == "meta":
            raise
        raise refuse_exception(path, "ref_kernel at shapes %s" % ", ".join(str(tuple(x.shape)) for x in xs), e)
    return flat_outputs(out, path, line, "ref_kernel")


def elements(xs):
    return sum(math.prod(x.shape) for x in xs)


def written_in_place(ref, xs, kind, path, line):
    """(outputs, {output index: data index}) for outputs that are a data tensor written in place."""
    mine = clones(xs)
    outs = call(ref, mine, kind, "cpu", path, line)
    same = {}
    for j, o in enumerate(outs):
        for i, x in enumerate(mine):
            if o.data_ptr() == x.data_ptr() and o.shape == x.shape and o.dtype == x.dtype and o.numel():
                same[j] = i
    return outs, same


class Reference(torch.nn.Module):
    """forward(*inputs) -> ref_kernel(data): ``inputs`` fill the data positions in ``positions``;
    each preallocated position p is made by ``alloc[p] = (input index, dims, dtype or None)``, a
    dim being ("in", input, dim) or ("lit", value), zero-filled on its source input's device."""

    def __init__(self, fn, count, kind, positions, alloc):
        super().__init__()
        self.fn, self.count, self.kind, self.positions, self.alloc = fn, count, kind, positions, alloc

    def forward(self, *xs):
        data = [None] * self.count
        for k, p in enumerate(self.positions):
            data[p] = xs[k]
        for p, (src, dims, dtype) in self.alloc.items():
            shape = [xs[a].size(b) if kind == "in" else a for kind, a, b in dims]
            data[p] = xs[src].new_zeros(shape) if dtype is None else xs[src].new_zeros(shape, dtype=dtype)
        return self.fn(pack(data, self.kind))
