"""A KernelBench problem file loaded as a private module: its int constants (to perturb), its
inputs drawn on a chosen device, and its Model built seeded and in eval mode."""

import importlib.util
import inspect
import itertools
import os
import sys

import torch

from . import _devices, _phase
from ._check import a_type
from ._errors import Refusal, refuse_exception

_counter = itertools.count()


def _signature(value):
    """A comparable summary of get_init_inputs(): numbers as they are, tensors by shape and values."""
    if isinstance(value, torch.Tensor):
        small = value.numel() <= 4096 and value.device.type != "meta"
        return ("tensor", tuple(value.shape), str(value.dtype), tuple(value.flatten().tolist()) if small else None)
    if isinstance(value, (list, tuple)):
        return tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _signature(v)) for k, v in value.items())
    return repr(value)


class Problem:
    """The loaded file. ``constants`` maps (name, index or None) -> int value; ``set`` changes one
    in the module's globals, ``restore`` puts every one back."""

    def __init__(self, path, dtype=None):
        self.path = os.path.abspath(path)
        self.dtype = dtype
        name = "_kforge_problem_%d" % next(_counter)
        spec = importlib.util.spec_from_file_location(name, self.path)
        if spec is None:
            raise Refusal(path, "is not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            _phase.problem("running the problem file's top-level code")
            with _devices.on("cpu"):
                spec.loader.exec_module(module)
        except SyntaxError as e:
            raise Refusal(path, "is not valid Python (%s)" % e.msg, e.lineno)
        except BaseException as e:  # noqa: BLE001 - the problem's own code, whatever it raises
            if isinstance(e, KeyboardInterrupt):
                raise
            raise refuse_exception(path, "importing the problem", e)
        self.module = module
        self.Model = getattr(module, "Model", None)
        if not isinstance(self.Model, type) or not issubclass(self.Model, torch.nn.Module):
            raise Refusal(path, "defines no class Model (a torch.nn.Module)")
        if not callable(getattr(module, "get_inputs", None)):
            raise Refusal(path, "defines no get_inputs()")
        self.constants = {}
        for key, value in vars(module).items():
            if key.startswith("_"):
                continue
            if type(value) is int:
                self.constants[(key, None)] = value
            elif isinstance(value, tuple):
                for i, v in enumerate(value):
                    if type(v) is int:
                        self.constants[(key, i)] = v
        self._saved = {k: v for k, v in vars(module).items() if k in {n for n, _ in self.constants}}

    def forward_line(self):
        try:
            return inspect.getsourcelines(self.Model.forward)[1]
        except (OSError, TypeError):
            return None

    def forward_params(self):
        """The names of forward's inputs, and whether it takes *args."""
        sig = inspect.signature(self.Model.forward)
        params = list(sig.parameters.values())[1:]
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return names, any(p.kind == p.VAR_POSITIONAL for p in params)

    def set(self, key, value):
        name, index = key
        if index is None:
            self.module.__dict__[name] = value
        else:
            old = list(self.module.__dict__[name])
            old[index] = value
            self.module.__dict__[name] = tuple(old)

    def restore(self):
        self.module.__dict__.update(self._saved)

    def _call(self, what, fn, device):
        _phase.problem("calling " + what)
        try:
            with _devices.on(device):
                return fn()
        except Exception as e:  # noqa: BLE001
            raise refuse_exception(self.path, what, e)

    def init_inputs(self):
        fn = getattr(self.module, "get_init_inputs", None)
        if fn is None:
            return []
        value = self._call("get_init_inputs()", fn, "cpu")
        if not isinstance(value, (list, tuple)):
            raise Refusal(self.path, "get_init_inputs() returns %s, not a list" % a_type(value))
        return list(value)

    def init_signature(self):
        return _signature(self.init_inputs())

    def inputs(self, device="cpu"):
        """get_inputs() drawn on ``device`` (seeded), float tensors cast to the chosen dtype."""
        torch.manual_seed(0)
        value = self._call("get_inputs()", self.module.get_inputs, device)
        if not isinstance(value, (list, tuple)):
            raise Refusal(self.path, "get_inputs() returns %s, not a list" % a_type(value))
        value = [v.to(device) if isinstance(v, torch.Tensor) else v for v in value]
        if self.dtype is not None:
            value = [v.to(self.dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in value]
        return value

    def model(self, device="cpu"):
        """Model(*get_init_inputs()) built after torch.manual_seed(42), in eval mode."""
        init = self.init_inputs()
        torch.manual_seed(42)
        model = self._call("Model(*get_init_inputs())", lambda: self.Model(*init), device)
        if not isinstance(model, torch.nn.Module):
            raise Refusal(self.path, "Model(...) is %s, not a torch.nn.Module" % a_type(model))
        model = model.to(device).eval()
        return model.to(self.dtype) if self.dtype is not None else model
