"""kernelforge_import: turns a community problem into a KernelForge task proposal.

    python -m kernelforge_import kernelbench problem.py --out DIR [--dtype fp32|fp16|bf16] [--arch sm_90]
    python -m kernelforge_import gpumode FOLDER --spec SPEC.json --out DIR [--arch sm_90]

DIR receives proposal.json (a task.json object of schema version 1 without "candidates", plus the
notes the user should read), reference.pt (the reference traced to TorchScript; a KernelBench
model's parameters and buffers are among its inputs, not inside it), originals/ (the
problem files as given) and samples/ (inputs and eager outputs at up to two test shapes, as .npy).
Importing this package does not import torch; __main__ does, after checking it can.
"""

__version__ = "1.0.0"
__all__ = ["import_kernelbench", "import_gpumode"]


def import_kernelbench(path, out, dtype=None, arch="sm_90"):
    """Writes the proposal for a KernelBench problem file; raises Refusal when it cannot be mapped."""
    from ._kernelbench import import_problem
    return import_problem(path, out, dtype, arch)


def import_gpumode(folder, spec, out, arch="sm_90"):
    """Writes the proposal for a GPU MODE problem folder; ``spec`` is task.yml's content as a dict."""
    from ._gpumode import import_folder
    return import_folder(folder, spec, out, arch)
