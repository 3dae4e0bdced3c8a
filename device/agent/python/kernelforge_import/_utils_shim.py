"""The utils.py written next to a GPU MODE reference whose task.yml points at a utils.py that is
not there (the problem folder was copied without its parent). It offers the helpers reference.py
files import; match_reference's rtol/atol defaults are what the importer falls back to."""

SOURCE = '''"""Stand-in for GPU MODE's utils.py, written by kernelforge_import."""
import random

import torch


def set_seed(seed=42):
    random.seed(seed)
    torch.manual_seed(seed)


class DeterministicContext:
    def __enter__(self):
        self._saved = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        return self

    def __exit__(self, *exc):
        torch.use_deterministic_algorithms(self._saved)
        return False


def verbose_allclose(received, expected, rtol=1e-05, atol=1e-08, max_print=5):
    if received.shape != expected.shape:
        return ["SIZE MISMATCH"]
    diff = torch.abs(received.double() - expected.double())
    bad = ~(diff <= atol + rtol * torch.abs(expected.double()))
    bad |= torch.isnan(received) != torch.isnan(expected)
    if not bad.any():
        return []
    return ["Number of mismatched elements: %d" % int(bad.sum())]


def match_reference(data, output, reference, rtol=1e-05, atol=1e-08):
    expected = reference(data)
    reasons = verbose_allclose(output, expected, rtol=rtol, atol=atol)
    return (False, "mismatch: " + " ".join(reasons)) if reasons else (True, "")


def make_match_reference(reference, **kwargs):
    def wrapped(data, output):
        return match_reference(data, output, reference=reference, **kwargs)
    return wrapped


def clear_l2_cache():
    pass
'''
