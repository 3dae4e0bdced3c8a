"""GPU MODE problem folder -> proposal. The keys of the tests/benchmarks entries are the symbols;
every tensor dim must equal one key across all entries or be constant. Tests run on the CPU
(entries over 2^22 elements skipped), benchmarks are drawn on meta for their shapes only."""

import os
import shutil
import tempfile
import warnings

import torch

from . import _devices, _phase, _task, _writer
from . import _gpumode_data as gd
from . import _gpumode_files as gf
from ._check import all_close, clones, flat_outputs, identical
from ._errors import Refusal, last_line
from ._graph import find_random, unpin_devices

CAP = 1 << 22
_USED = {"files", "lang", "description", "tests", "benchmarks"}


def import_folder(folder, spec, out, arch="sm_90"):
    folder = os.path.abspath(folder)
    yml = os.path.join(folder, "task.yml")
    notes = _task.Notes()
    if not isinstance(spec, dict):
        raise Refusal(yml, "the spec is not a map")
    lang = spec.get("lang", "py")
    if lang != "py":
        raise Refusal(yml, "lang: %s keeps the reference in C++; KernelForge imports Python references (lang: py)" % lang)
    tmp = tempfile.mkdtemp(prefix="kforge-gpumode-")
    try:
        originals = gf.layout(folder, spec, tmp, notes)
        with gf.importable(tmp):
            imp = _Import(folder, spec, tmp, notes)
            imp.draw()
            imp.name_and_shape()
            imp.build()
            imp.check()
            return imp.write(out, arch, originals)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _dims(shapes, entries, keys, what, path, notes, line=None):
    """Per dim of one tensor: ("sym", key) or ("lit", value), from its shape at every entry."""
    known = [(e, s) for e, s in zip(entries, shapes) if s is not None]
    ranks = {len(s) for _, s in known}
    if len(ranks) > 1:
        raise Refusal(path, "%s has %s dims in different entries" % (what, " and ".join(map(str, sorted(ranks)))), line)
    dims = []
    for d in range(ranks.pop() if ranks else 0):
        vals = [s[d] for _, s in known]
        match = [k for k in keys if all(e[k] == v for (e, _), v in zip(known, vals))]
        if match:
            dims.append(("sym", match[0]))
            if len(match) > 1:
                notes.add("%s dim %d equals %s in every entry; it is taken as %s" % (what, d, " and ".join(match), match[0]))
        elif len(set(vals)) == 1:
            dims.append(("lit", vals[0]))
        else:
            raise Refusal(path, "%s dim %d is %s across the entries: it equals none of their keys (%s) and is not "
                                "constant" % (what, d, ", ".join(map(str, vals)), ", ".join(keys) or "none"), line)
    return dims


class _Import:
    def __init__(self, folder, spec, tmp, notes):
        self.folder, self.spec, self.notes = folder, spec, notes
        self.yml = os.path.join(folder, "task.yml")
        self.path = os.path.join(tmp, "reference.py")
        self.ref, self.src = gf.load_reference(self.path), gf.Source(self.path)
        self.line = self.src.line("ref_kernel")
        self.tests, self.benches, self.keys = gd.entries(spec, self.yml, notes)
        self.every = self.tests + self.benches

    def draw(self):
        """Every entry's data on meta; the tests under CAP again on the CPU, with ref_kernel's outputs."""
        gline = self.src.line("generate_input")
        self.drawn = [gd.generate(self.ref, e, "meta", self.path, gline) for e in self.every]
        self.kind = self.drawn[0][1]
        for e, (xs, kind) in zip(self.every, self.drawn):
            if (kind, len(xs)) != (self.kind, len(self.drawn[0][0])):
                raise Refusal(self.path, "generate_input(%s) returns %d tensor(s) as a %s, unlike the first entry's %d"
                              % (gd.kwargs_text(e), len(xs), kind, len(self.drawn[0][0])), gline)
        self.small = [i for i in range(len(self.tests)) if gd.elements(self.drawn[i][0]) <= CAP]
        if not self.small:
            self.small = [min(range(len(self.tests)), key=lambda i: gd.elements(self.drawn[i][0]))]
        if len(self.small) < len(self.tests):
            self.notes.add("test entries over %d elements were skipped: %s" % (CAP, "; ".join(
                gd.kwargs_text(e) for i, e in enumerate(self.tests) if i not in self.small)))
        self.real = {i: gd.generate(self.ref, self.tests[i], "cpu", self.path, gline)[0] for i in self.small}
        self.first_outs, self.inplace = gd.written_in_place(self.ref, self.real[self.small[0]], self.kind, self.path,
                                                            self.line)
        self.expected = {i: gd.call(self.ref, clones(self.real[i]), self.kind, "cpu", self.path, self.line)
                         for i in self.small}
        self.out_shapes = []
        for i, (xs, _) in enumerate(self.drawn):
            if i in self.expected:
                self.out_shapes.append([tuple(o.shape) for o in self.expected[i]])
                continue
            try:
                outs = gd.call(self.ref, xs, self.kind, "meta", self.path, self.line)
                self.out_shapes.append([tuple(o.shape) for o in outs])
            except Exception:  # noqa: BLE001 - meta is a shortcut; the tests decide then
                self.out_shapes.append(None)
        if any(s is None for s in self.out_shapes):
            self.notes.add("ref_kernel does not run on the meta device: output shapes are checked at the tests only")

    def name_and_shape(self):
        count = len(self.drawn[0][0])
        self.count = count
        self.positions = [p for p in range(count) if p not in self.inplace.values()]
        names = self.src.data_names()
        if self.kind == "single":
            names = names if names and len(names) == 1 else ["x"]
        elif not names or len(names) != count or len(set(names)) != count:
            names = ["a%d" % i for i in range(count)]
        self.data_names = names
        self.in_names = [names[p] for p in self.positions]
        ret, n = self.src.return_names(), len(self.first_outs)
        fallback = _task.output_names(n, set(names))
        self.out_names = []
        for j in range(n):
            if j in self.inplace:
                name = names[self.inplace[j]]
                self.notes.add("%s is preallocated by generate_input and written in place by ref_kernel: it is an "
                               "output, and the reference allocates it zero-filled" % name)
            elif ret and len(ret) == n and ret[j] not in self.in_names + self.out_names:
                name = ret[j]
            else:
                name = fallback[j]
            self.out_names.append(name)
        self.data_dims = [_dims([tuple(xs[p].shape) for xs, _ in self.drawn], self.every, self.keys, names[p],
                                self.path, self.notes, self.src.line("generate_input")) for p in range(count)]
        self.out_dims = [_dims([s[j] if s else None for s in self.out_shapes], self.every, self.keys,
                               self.out_names[j], self.path, self.notes, self.line) for j in range(n)]
        used = [k for k in self.keys if any(d == ("sym", k) for dims in self.data_dims + self.out_dims for d in dims)]
        if len(used) < len(self.keys):
            self.notes.add("entry keys %s size no tensor: they are not symbols"
                           % ", ".join(k for k in self.keys if k not in used))
        taken = set(self.in_names) | set(self.out_names)
        self.sym = {k: _task.symbol_name(k, taken) for k in used}

    def shape(self, dims):
        return [self.sym[v] if kind == "sym" else v for kind, v in dims]

    def build(self):
        """The module the trace is made of: preallocated outputs sized from the inputs' dims."""
        alloc, xs = {}, self.real[self.small[0]]
        for j, p in self.inplace.items():
            same = [k for k, q in enumerate(self.positions) if xs[q].dtype == self.first_outs[j].dtype]
            dims = []
            for d, (kind, v) in enumerate(self.data_dims[p]):
                where = [(k, e) for k, q in enumerate(self.positions)
                         for e, dd in enumerate(self.data_dims[q]) if kind == "sym" and dd == (kind, v)]
                if where:
                    dims.append(("in", where[0][0], where[0][1]))
                elif kind == "lit" or len({e[v] for e in self.every}) == 1:
                    dims.append(("lit", v if kind == "lit" else self.every[0][v], None))
                else:
                    raise Refusal(self.path, "%s dim %d (%s) is the size of no input: the reference cannot allocate %s"
                                  % (self.data_names[p], d, v, self.data_names[p]), self.line)
            alloc[p] = (same[0] if same else 0, dims, None if same else self.first_outs[j].dtype)
        if not self.positions:
            raise Refusal(self.path, "ref_kernel writes every tensor of its data in place: a task needs at least one "
                                     "input", self.line)
        self.module = gd.Reference(self.ref.ref_kernel, self.count, self.kind, self.positions, alloc)
        self.inputs = {i: [self.real[i][p] for p in self.positions] for i in self.small}

    def tolerances(self):
        how, kwargs, _ = self.src.checker()
        if how == "match":
            rtol, atol = gf.utils_defaults()
            rtol, atol = kwargs.get("rtol", rtol), kwargs.get("atol", atol)
        elif how == "custom":
            self.notes.add("check_implementation is hand-written: the outputs use PyTorch's default tolerances for "
                           "their dtype; compare them with the checker")
        else:
            self.notes.add("reference.py defines no check_implementation: the outputs use PyTorch's default "
                           "tolerances for their dtype")
        tols = []
        for o in self.first_outs:
            dt = _task.dtype_name(o.dtype, self.path, "ref_kernel's output")
            if not _task.is_float(dt):
                tols.append(None)
            else:
                tols.append(_task.tolerance(rtol, atol) if how == "match" else _task.default_tolerance(dt))
        return tols

    def eager(self, module, xs):
        _phase.problem("running ref_kernel")
        with torch.no_grad(), _devices.on("cpu"):
            return flat_outputs(module(*clones(xs)), self.path, self.line, "ref_kernel")

    def check(self):
        self.tols = self.tolerances()
        first = self.small[0]
        with torch.no_grad(), warnings.catch_warnings(), _devices.on("cpu"):
            warnings.simplefilter("ignore")
            try:
                self.traced = torch.jit.trace(self.module, tuple(clones(self.inputs[first])), check_trace=False)
            except Exception as e:  # noqa: BLE001
                raise Refusal(self.path, "torch.jit.trace of ref_kernel raised %s" % last_line(e)[:300], self.line)
        find_random(self.traced, self.path, "ref_kernel")
        with open(self.path, encoding="utf-8", errors="replace") as f:
            pinned = unpin_devices(self.traced, self.path, f.read().splitlines())
        if pinned:
            self.notes.add("ref_kernel creates %d tensor(s) whose device the trace fixed; the reference makes them on "
                           "its first input's device" % pinned)
        if not identical(self.eager(self.module, self.inputs[first]), self.eager(self.module, self.inputs[first])):
            raise Refusal(self.path, "ref_kernel returns different outputs on two runs with the same data: KernelForge "
                                     "needs a deterministic reference", self.line)
        for i in self.small:
            mine = self.eager(self.module, self.inputs[i])
            if not all_close(mine, self.expected[i], self.tols):
                names = [self.data_names[p] for p in self.inplace.values()]
                why = ("ref_kernel reads %s, which generate_input preallocated, before it writes it: the reference "
                       "cannot start it from zeros" % ", ".join(names)) if names else \
                    "ref_kernel's outputs differ from run to run"
                raise Refusal(self.path, why, self.line)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                traced = self.eager(self.traced, self.inputs[i])
            if not all_close(traced, self.expected[i], self.tols):
                raise Refusal(self.path, "the traced ref_kernel differs from ref_kernel at %s: a shape is fixed in the "
                                         "trace" % gd.kwargs_text(self.tests[i]), self.line)

    def binding(self, entry, label):
        return dict({"label": label}, **{s: entry[k] for k, s in self.sym.items()})

    def write(self, out, arch, originals):
        inputs = []
        for k, (name, p) in enumerate(zip(self.in_names, self.positions)):
            x = self.real[self.small[0]][p]
            spec = {"name": name, "dtype": _task.dtype_name(x.dtype, self.path, "input %s" % name),
                    "shape": self.shape(self.data_dims[p])}
            ranges = [r for r in (_task.value_range(self.inputs[i][k]) for i in self.small) if r[0] is not None]
            lo = min(r[0] for r in ranges) if ranges else None
            hi = max(r[1] for r in ranges) if ranges else None
            dists, note = _task.distributions(name, spec["dtype"], lo, hi)
            if dists:
                spec["distributions"] = dists
            if note:
                self.notes.add(note)
            inputs.append(spec)
        outputs = []
        for name, o, dims, tol in zip(self.out_names, self.first_outs, self.out_dims, self.tols):
            spec = {"name": name, "dtype": _task.dtype_name(o.dtype, self.path, "output %s" % name),
                    "shape": self.shape(dims)}
            if tol:
                spec["tolerance"] = tol
            outputs.append(spec)
        symbols = {s: {"min": min(e[k] for e in self.every), "max": max(e[k] for e in self.every)}
                   for k, s in self.sym.items()}
        unused = sorted(k for k in self.spec if k not in _USED)
        if unused:
            self.notes.add("task.yml keys KernelForge does not use: %s" % ", ".join(unused))
        task = {
            "schema_version": 1,
            "name": _task.task_name(os.path.basename(self.folder)),
            "description": _task.first_paragraph(self.spec.get("description") or "") or
            "Imported from %s (GPU MODE format)" % os.path.basename(self.folder),
            "architectures": [arch],
            "symbols": symbols,
            "inputs": inputs,
            "outputs": outputs,
            "shapes": {"tests": [self.binding(self.tests[i], "t%d" % n) for n, i in enumerate(self.small)],
                       "benchmarks": [self.binding(e, "bench%d" % n) for n, e in enumerate(self.benches)]},
            "reference": {"torchscript": "reference.pt", "inputs": self.in_names},
            "cost": {"bytes": _task.cost_bytes([(s["dtype"], s["shape"]) for s in inputs + outputs])},
        }
        order = sorted(range(len(self.small)), key=lambda n: (gd.elements(self.inputs[self.small[n]]), n))[:2]
        samples = [{"label": "t%d" % n, "shape": {s: self.tests[self.small[n]][k] for k, s in self.sym.items()},
                    "inputs": list(zip(self.in_names, self.inputs[self.small[n]])),
                    "expected": list(zip(self.out_names, self.expected[self.small[n]]))} for n in sorted(order)]
        meta = None
        if self.benches:
            xs = self.drawn[len(self.tests)][0]
            meta = [xs[p] for p in self.positions]
        return _writer.write(out, "gpumode", task, self.traced, originals, samples, self.notes, self.path, meta)
