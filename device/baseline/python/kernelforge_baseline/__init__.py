"""kernelforge_baseline: a task's reference under torch.compile (Inductor), timed beside eager and
the candidate's cubin in one process with the runner's rules, so a speedup can be stated against
what a user gets from one line of Python (docs/benchmarks.md, "The torch.compile baseline").

    python -m kernelforge_baseline bench SPEC.json | --task TASK [--shape L] [--mode M] [--device D]

The reference (a catalog op or an op tape, with the runner's semantics) becomes a torch.nn.Module
compiled for each shape (static shapes) in each mode. Its output, and the candidate's, is checked
before it is timed as the runner checks a candidate: against the float64 golden result, within
the task's tolerance or no worse than eager's own error plus one ulp: a compiled baseline that
computes something else is reported, never used. Compile time is reported apart. Where torch or
Triton is missing, or the reference cannot be compiled (a TorchScript module), the result says
"not measured" and why.
"""

from ._bench import bench, stats
from ._task import MODES, NotCompilable, reference_module

__all__ = ["bench", "stats", "reference_module", "MODES", "NotCompilable"]
__version__ = "2.0.0"
