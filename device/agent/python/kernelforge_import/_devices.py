"""Running problem code that asks for CUDA on a machine that may have none: a TorchFunctionMode
sends every device= argument, .cuda() and .to("cuda") to one target device ("cpu" for tensors
that are computed, "meta" for shapes only), and torch.Generator(device="cuda") becomes a CPU
generator. Problems are written for a GPU; KernelForge only needs their shapes and values."""

import contextlib

import torch
from torch.overrides import TorchFunctionMode

_Generator = torch.Generator


def _is_device(a):
    if isinstance(a, torch.device):
        return True
    if isinstance(a, str):
        try:
            torch.device(a)
            return True
        except (RuntimeError, ValueError):
            return False
    return False


class Redirect(TorchFunctionMode):
    """Every device a torch call names becomes ``target``; on meta, generators are dropped (a CPU
    generator cannot draw meta tensors, and meta tensors hold no values)."""

    def __init__(self, target):
        super().__init__()
        self.target = torch.device(target)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "cuda" and args and isinstance(args[0], torch.Tensor):
            return args[0].to(self.target)
        if kwargs.get("device") is not None:
            kwargs["device"] = self.target
        if self.target.type == "meta" and kwargs.get("generator") is not None:
            kwargs.pop("generator")
        if name == "to":
            args = tuple(self.target if _is_device(a) else a for a in args)
        if name in ("pin_memory", "record_stream"):
            return args[0]
        return func(*args, **kwargs)


class _CpuGenerator(_Generator):
    """torch.Generator(device="cuda") as a CPU generator (an instance of the real class)."""

    def __new__(cls, device=None):
        return _Generator.__new__(cls, "cpu")

    def __init__(self, device=None):
        pass


@contextlib.contextmanager
def on(target):
    """Runs the block with tensors created on ``target`` ("cpu" or "meta") whatever it names."""
    saved = (torch.Generator, torch.cuda.synchronize)
    torch.Generator = _CpuGenerator
    torch.cuda.synchronize = lambda *a, **k: None
    try:
        with Redirect(target), torch.device(target):
            yield
    finally:
        torch.Generator, torch.cuda.synchronize = saved
