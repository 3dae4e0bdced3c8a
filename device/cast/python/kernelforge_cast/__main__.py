"""python -m kernelforge_cast run PACKAGE [--model NAME] [--device cuda|cpu] [--runs N] [--warmup N]
[--no-kernels] [--check] [--allow-fallback] [--json] [--evidence FILE]

Runs the model a .cast package carries with its verified kernels substituted and without them,
and prints what was substituted (and why the rest was not), the time per pass of both, the
end-to-end speedup and, with --check, the outputs' errors against the unsubstituted model and an
fp64 run. Exit status: 0 done, 1 the package or a kernel failed, 2 a usage error, 3 no GPU.
"""

import argparse
import json
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kernelforge_cast",
                                     description="Run the model of a KernelForge .cast package with and without its kernels.")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the package's model, timed, with and without its kernels")
    r.add_argument("package", help="the .cast file")
    r.add_argument("--model", help="which model (default: the first)")
    r.add_argument("--device", choices=("cuda", "cpu"), help="default: cuda when there is a GPU")
    r.add_argument("--runs", type=int, default=20, help="timed passes of each model (default 20)")
    r.add_argument("--warmup", type=int, default=5, help="untimed passes first (default 5)")
    r.add_argument("--seed", type=int, default=0, help="seed of generated inputs (default 0)")
    r.add_argument("--no-kernels", action="store_true", help="run only the model as exported")
    r.add_argument("--check", action="store_true",
                   help="compare outputs with the unsubstituted model and with an fp64 run")
    r.add_argument("--allow-fallback", action="store_true",
                   help="a kernel that raises falls back to its reference ops (said once per op, counted)")
    r.add_argument("--json", action="store_true", help="print the run's evidence as JSON")
    r.add_argument("--evidence", help="also write the evidence to this file (`kforge cast run --record` stores it)")
    a = parser.parse_args(argv)
    if a.runs < 1 or a.warmup < 0:
        parser.error("--runs is at least 1 and --warmup at least 0")

    import torch
    import kernelforge_cast
    from ._run import KernelFailure, format_evidence

    if a.device == "cuda" and not torch.cuda.is_available():
        print("kernelforge_cast: --device cuda, but this PyTorch sees no CUDA GPU", file=sys.stderr)
        return 3
    warned = []
    say = lambda text: (warned.append(text), print("kernelforge_cast: " + text, file=sys.stderr))  # noqa: E731
    try:
        package = kernelforge_cast.load(a.package)
        ev = package.run_model(a.model, device=a.device, runs=a.runs, warmup=a.warmup, kernels=not a.no_kernels,
                               check=a.check, allow_fallback=a.allow_fallback, seed=a.seed, warn=say)
    except kernelforge_cast.PackageError as e:
        print("kernelforge_cast: %s" % e, file=sys.stderr)
        return 1
    except KernelFailure as e:
        print("kernelforge_cast: %s" % e, file=sys.stderr)
        return 1
    if a.evidence:
        import os
        import tempfile
        folder = os.path.dirname(os.path.abspath(a.evidence))
        with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, suffix=".tmp") as f:
            json.dump(ev, f, indent=2, allow_nan=False)
            f.write("\n")
        os.replace(f.name, a.evidence)
    if a.json:
        print(json.dumps(ev, indent=2, allow_nan=False))
    else:
        print(format_evidence(ev))
    nonfinite = any(not e["finite_alike"] for o in (ev["check"] or {}).get("outputs", [])
                    for k, e in o.items() if k == "kernels_vs_original")
    return 1 if nonfinite else 0


if __name__ == "__main__":
    sys.exit(main())
