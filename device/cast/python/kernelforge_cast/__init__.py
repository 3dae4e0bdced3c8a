"""kernelforge_cast: load a KernelForge .cast package and call its verified kernels as PyTorch
operators, ``torch.ops.cast.<name>``. Needs only PyTorch.

    import kernelforge_cast
    ops = kernelforge_cast.load("ops.cast")
    y = ops.softmax_fp32(x)                  # the same as torch.ops.cast.softmax_fp32(x)
    ops.info()["softmax_fp32"]["evidence"]   # what the registry measured

Per call, on a CUDA tensor the op runs the package's cubin for the GPU's architecture, else a
compatible cubin (same major version), else its PTX compiled by the driver, else the reference
PyTorch ops with one warning. On CPU tensors it runs the reference ops (one warning). A fake
(meta) implementation lets torch.compile and FakeTensor tracing propagate shapes.
"""

import threading
import warnings

import torch

from ._archive import PackageError
from ._package import open_package
from ._ops import CastOp, choose_image

__all__ = ["load", "Package", "PackageError", "choose_image"]
__version__ = "1.0.0"

_lock = threading.Lock()
_defined = {}        # op name -> (registry ID, images' hashes, CastOp)
_libraries = []      # torch.library.Library objects live as long as the process


class Package:
    """A loaded package: ``ops.<name>`` is ``torch.ops.cast.<name>``; ``info()`` the evidence."""

    def __init__(self, path, manifest, ops, files):
        self.path = str(path)
        self.manifest = manifest
        self.files = files          # path -> bytes, every one checked against the manifest
        self.name = manifest["package"]["name"]
        self.version = manifest["package"]["version"]
        self._ops = ops

    @property
    def names(self):
        return list(self._ops)

    def __getattr__(self, name):
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return getattr(torch.ops.cast, name)
        raise AttributeError("package %s has no op %r (it has: %s)" % (self.__dict__.get("name"), name, ", ".join(ops)))

    def __dir__(self):
        return list(super().__dir__()) + list(self._ops)

    def op(self, name):
        """The CastOp behind cast::<name> (image choice, bound shapes, reference)."""
        return self._ops[name]

    def substitute(self, model, example_inputs=None):
        """A copy of ``model``'s graph with every call site one of this package's kernels implements
        replaced by its cast:: operator, and the report (one entry per candidate call site:
        node, op, status "substituted" or "kept", cast_op, reason).

        ``model``: a torch.export.ExportedProgram, a torch.fx.GraphModule (rewritten in place), or
        an nn.Module with ``example_inputs`` (exported first). No monkey-patching: the graph is
        rewritten, matched by op, attributes, dtypes, layout and the kernels' shape constraints."""
        from ._substitute import substitute
        if isinstance(model, torch.export.ExportedProgram):
            gm = model.module()
        elif isinstance(model, torch.fx.GraphModule):
            gm = model
        else:
            if example_inputs is None:
                raise ValueError("substitute(module) needs example_inputs to export it")
            gm = torch.export.export(model, tuple(example_inputs)).module()
        report = substitute(gm, list(self._ops.values()))
        return gm, report

    @property
    def models(self):
        """The models the package carries (their manifest entries)."""
        return list(self.manifest.get("models") or [])

    def run_model(self, model=None, **options):
        """Runs a carried model with and without the kernels; returns its model-level evidence.
        Options: device, runs, warmup, kernels, check, allow_fallback, seed (see ``_run.run_model``)."""
        from ._run import run_model
        return run_model(self, model, **options)

    def info(self):
        """Per op: registry ID, schema, images, the image this process's GPU uses, evidence."""
        out = {}
        for name, op in self._ops.items():
            entry = {"registry_id": op.manifest["registry_id"], "schema": op.manifest["schema"],
                     "task": op.manifest["task_name"], "images": sorted(op.images),
                     "evidence": op.manifest["evidence"]}
            if torch.cuda.is_available():
                entry["runs_as"] = op.image_used()
            out[name] = entry
        return out

    def __repr__(self):
        return "<kernelforge_cast.Package %s %s: %s>" % (self.name, self.version, ", ".join("cast::" + n for n in self._ops))


def load(path, kernels=True, image=None):
    """Checks the package at ``path`` completely, then registers every op as torch.ops.cast.<name>.

    kernels=False runs every op's reference PyTorch ops instead of its kernels (said once).
    image="compute_80" (or "sm_86") forces that image on every GPU, e.g. to try the PTX path.
    Loading the same package again returns the ops already registered; a different op under a
    name already taken is an error (export it under another name with `--name ID=NAME`).
    """
    manifest, files = open_package(path)
    if not kernels:
        warnings.warn("kernelforge_cast: %s loaded with kernels=False: its cast:: ops run their reference "
                      "PyTorch ops" % path, RuntimeWarning, stacklevel=2)
    ops = {}
    sha = {f["path"]: f["sha256"] for f in manifest["files"]}
    with _lock:
        fresh = []
        for op in manifest["ops"]:
            name = op["name"]
            identity = (op["registry_id"], tuple(sorted((a, sha[p]) for a, p in op["images"].items())))
            if name in _defined:
                if _defined[name][0] != identity:
                    raise PackageError("%s: cast::%s is already registered by another package (%s); export this one "
                                       "under another name with `kforge cast export ... --name %s=OTHER`"
                                       % (path, name, _defined[name][2].package, op["registry_id"]))
                existing = _defined[name][2]
                if existing.use_kernels != kernels or existing.force_image != image:
                    raise PackageError("%s: cast::%s is already registered with kernels=%s, image=%s"
                                       % (path, name, existing.use_kernels, existing.force_image))
                ops[name] = existing
                continue
            if hasattr(torch.ops.cast, name):
                raise PackageError("%s: an operator cast::%s exists already (registered outside kernelforge_cast)"
                                   % (path, name))
            fresh.append((op, identity))
        if fresh:
            # Every op is built before anything is registered; the Library is kept before the first
            # registration, so what registered stays registered and known even if a later one fails.
            built = [(op, identity, CastOp(str(path), op, files, kernels, image)) for op, identity in fresh]
            lib = torch.library.Library("cast", "FRAGMENT")
            _libraries.append(lib)
            for op, identity, cast_op in built:
                lib.define(op["schema"])
                _defined[op["name"]] = (identity, None, cast_op)
                lib.impl(op["name"], cast_op.cuda_impl, "CUDA")
                lib.impl(op["name"], cast_op.cpu_impl, "CPU")
                torch.library.register_fake("cast::" + op["name"], cast_op.fake_impl, lib=lib)
                ops[op["name"]] = cast_op
    return Package(path, manifest, ops, files)

