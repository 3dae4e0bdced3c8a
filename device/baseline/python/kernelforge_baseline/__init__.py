"""kernelforge_baseline: a task's LibTorch reference compiled by torch.compile's Inductor, ahead
of time, so the runner can time it as a second baseline beside eager LibTorch (docs/benchmarks.md,
"The torch.compile baseline").

    python -m kernelforge_baseline compile TASK --shape LABEL [--mode default|max-autotune-no-cudagraphs]
        [--device cuda|cpu] [--out model.pt2] [--json]

For one shape of the task the reference (one catalog op or an op tape, with the same semantics as
the runner's) becomes a torch.nn.Module, is exported with torch.export for exactly that shape,
and is compiled into an AOTInductor package. The compiled program is then run on seeded inputs
and checked against the eager reference under the task's tolerances: a compiled baseline that
computes something else is reported, never used. The compile time is reported apart from any
timing. Where torch, Triton (CUDA) or a C++ compiler is missing, or the reference cannot be
compiled (a TorchScript module), the result says "not measured" and why.
"""

from ._compile import CompileResult, compile_baseline, reference_module, NotCompilable

__all__ = ["compile_baseline", "reference_module", "CompileResult", "NotCompilable"]
__version__ = "1.0.0"
