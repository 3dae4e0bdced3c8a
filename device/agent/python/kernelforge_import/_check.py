"""Outputs as a flat list of tensors, and the comparisons the importer makes: traced against
eager (within the task's tolerance) and eager against itself (exactly, NaN where NaN)."""

import torch

from ._errors import Refusal


def a_type(value):
    """"an int", "a dict", "None": how a message names a non-tensor value."""
    if value is None:
        return "None"
    name = type(value).__name__
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def flat_outputs(out, path, line, who="forward"):
    """``out`` as a list of tensors; refuses anything but a tensor or a flat tuple/list of them."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and out:
        for i, o in enumerate(out):
            if isinstance(o, (tuple, list, dict)):
                raise Refusal(path, "%s output %d is %s inside a %s: KernelForge outputs are a tensor or a flat "
                                    "tuple of tensors" % (who, i + 1, a_type(o), type(out).__name__), line)
            if not isinstance(o, torch.Tensor):
                raise Refusal(path, "%s output %d is %s: KernelForge outputs are tensors" % (who, i + 1, a_type(o)),
                              line)
        return list(out)
    what = "an empty %s" % type(out).__name__ if isinstance(out, (tuple, list)) else a_type(out)
    raise Refusal(path, "%s returns %s: KernelForge outputs are tensors" % (who, what), line)


def close(actual, expected, tol):
    """Same shape and dtype, NaN/Inf in the same places, and |a - e| <= atol + rtol |e|
    (``tol`` is a task tolerance dict or None for an exact match)."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return False
    if actual.is_floating_point() or actual.is_complex():
        a, e = actual.detach().double(), expected.detach().double()
        rtol, atol = (tol["rtol"], tol["atol"]) if tol else (0.0, 0.0)
        return bool(torch.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True))
    return bool(torch.equal(actual, expected))


def all_close(actual, expected, tols):
    return len(actual) == len(expected) and all(close(a, e, t) for a, e, t in zip(actual, expected, tols))


def identical(a, b):
    return all_close(a, b, [None] * len(a))


def clones(tensors):
    return [t.clone() for t in tensors]
