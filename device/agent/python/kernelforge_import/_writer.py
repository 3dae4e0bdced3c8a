"""Writes a proposal into the --out folder: reference.pt, originals/, samples/ and, last,
proposal.json. Before the proposal is written, the saved reference is loaded back and must
reproduce the eager outputs at every sample, and must run on meta tensors at a benchmark shape
(a tensor pinned to the CPU inside it would fail there, as it would on the GPU)."""

import json
import os
import shutil
import warnings

import torch

from . import _npy, _phase
from ._check import all_close, clones, flat_outputs
from ._errors import Refusal, last_line
from ._graph import is_device_error


def _run(module, inputs):
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return module(*inputs)


def check_saved(pt, problem, samples, tols, meta_inputs, notes, meta_only=True):
    """Refuses a saved reference that does not reproduce the samples or that pins a device; notes
    what the runner's fp64 (golden) mode cannot do with it, and, when ``meta_only`` (the benchmark
    shape was not run for real), that the meta run failed for another reason."""
    loaded = torch.jit.load(pt)
    for s in samples:
        got = flat_outputs(_run(loaded, clones([t for _, t in s["inputs"]])), problem, None, "reference.pt")
        if not all_close(got, [t for _, t in s["expected"]], tols):
            raise Refusal(problem, "the saved TorchScript reference does not reproduce the eager outputs at test "
                                   "shape %s" % s["label"])
    if meta_inputs is not None:
        try:
            _run(torch.jit.load(pt, map_location="meta"), meta_inputs)
        except Exception as e:  # noqa: BLE001 - any failure is reported
            if is_device_error(e):
                raise Refusal(problem, "the traced reference creates a tensor on a fixed device (%s): it must "
                                       "follow its inputs' device" % last_line(e).split("\n")[0])
            if meta_only:
                notes.append("the benchmark shape could not be checked on the meta device (%s)" % last_line(e)[:200])
    if samples:
        s = samples[0]
        try:
            golden = torch.jit.load(pt).to(torch.float64)
            xs = [t.double() if t.is_floating_point() else t for _, t in s["inputs"]]
            outs = flat_outputs(_run(golden, xs), problem, None, "reference.pt")
            narrow = [n for (n, e), o in zip(s["expected"], outs) if e.is_floating_point() and o.dtype != torch.float64]
            if narrow:
                notes.append("converted to fp64 the reference still returns %s in a narrower type (it casts "
                             "inside): the runner's fp64 golden mode cannot use it" % ", ".join(narrow))
        except Exception as e:  # noqa: BLE001
            notes.append("the reference does not run in fp64 (%s): the runner's fp64 golden mode cannot use it"
                         % last_line(e)[:200])


def _write_samples(out, samples):
    """A tensor object that several samples share as an input (a model's parameter) is written
    once, under the first sample that has it, and the others name that file."""
    entries, written = [], {}
    for s in samples:
        entry = {"label": s["label"], "shape": s["shape"], "inputs": {}, "expected": {}}
        upcast = []
        for role, key in (("inputs", "inputs"), ("expected", "expected")):
            folder = os.path.join(out, "samples", s["label"], role)
            os.makedirs(folder, exist_ok=True)
            for name, t in s[key]:
                key = (role, id(t))
                if key not in written:
                    rel = "samples/%s/%s/%s.npy" % (s["label"], role, name)
                    written[key] = (rel, _npy.write(os.path.join(out, rel), t), t)
                rel, up, _ = written[key]
                if up:
                    upcast.append(name)
                entry[role][name] = rel
        if upcast:
            entry["upcast"] = upcast
        entries.append(entry)
    return entries


def write(out, fmt, task, traced, originals, samples, notes, problem, meta_inputs=None, meta_only=True):
    """``originals``: [(source path, flat name)]; ``samples``: [{label, shape, inputs: [(name,
    tensor)], expected: [(name, tensor)]}]; ``notes`` may grow while the reference is checked."""
    _phase.importer("writing the proposal")
    pt = os.path.join(out, task["reference"]["torchscript"])
    torch.jit.save(traced, pt)
    tols = [o.get("tolerance") for o in task["outputs"]]
    check_saved(pt, problem, samples, tols, meta_inputs, notes, meta_only)
    os.makedirs(os.path.join(out, "originals"), exist_ok=True)
    names = []
    for src, name in originals:
        shutil.copyfile(src, os.path.join(out, "originals", name))
        names.append(name)
    proposal = {"schema_version": 1, "format": fmt, "torch_version": torch.__version__, "task": task,
                "originals": names, "samples": _write_samples(out, samples), "notes": notes}
    with open(os.path.join(out, "proposal.json"), "w", encoding="utf-8") as f:
        json.dump(proposal, f, indent=2, allow_nan=False)
        f.write("\n")
    return proposal
