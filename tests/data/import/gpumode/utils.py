"""Helpers the GPU MODE-style import fixtures use: KernelForge's own minimal version of the
functions a reference-kernels utils.py offers (seeding, deterministic algorithms, comparison)."""
import random

import torch


def set_seed(seed=42):
    random.seed(seed)
    torch.manual_seed(seed)


class DeterministicContext:
    """Runs the block with torch.use_deterministic_algorithms(True)."""

    def __enter__(self):
        self._saved = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        return self

    def __exit__(self, *exc):
        torch.use_deterministic_algorithms(self._saved)
        return False


def verbose_allclose(received, expected, rtol=1e-05, atol=1e-08):
    """An empty list when received matches expected, else lines saying how it does not."""
    if received.shape != expected.shape:
        return ["shape %s, expected %s" % (tuple(received.shape), tuple(expected.shape))]
    diff = (received.double() - expected.double()).abs()
    bad = ~(diff <= atol + rtol * expected.double().abs())
    count = int(bad.sum())
    return ["%d elements differ" % count] if count else []


def match_reference(data, output, reference, rtol=2e-05, atol=1e-06):
    reasons = verbose_allclose(output, reference(data), rtol=rtol, atol=atol)
    return (False, "; ".join(reasons)) if reasons else (True, "")


def make_match_reference(reference, **kwargs):
    def check(data, output):
        return match_reference(data, output, reference=reference, **kwargs)
    return check
