"""python -m kernelforge_import kernelbench PROBLEM.py --out DIR [--dtype fp32|fp16|bf16] [--arch sm_90]
python -m kernelforge_import gpumode FOLDER --spec SPEC.json --out DIR [--arch sm_90]

Exit status: 0 the proposal is in DIR; 2 the problem cannot be mapped (one line on stderr:
"kernelforge_import: <file>[:<line>]: <what>"); 3 torch cannot be imported; 1 an internal error
(a traceback, then "kernelforge_import: internal error: <its last line>"). While it works,
whatever the problem's code prints goes to stdout, so stderr holds only that line and the phase
lines of _phase.py. Any other ending (a signal, another status, no last line of ours) is the
problem's code ending this process.
"""

import argparse
import contextlib
import json
import os
import sys
import traceback
import warnings

PROG = "kernelforge_import"


def _parser():
    p = argparse.ArgumentParser(prog="python -m " + PROG,
                                description="Turn a KernelBench or GPU MODE problem into a KernelForge task proposal.")
    sub = p.add_subparsers(dest="format", required=True)
    kb = sub.add_parser("kernelbench", help="a KernelBench problem file (Model, get_inputs, get_init_inputs)")
    kb.add_argument("problem")
    kb.add_argument("--out", required=True, help="an existing, empty folder for the proposal")
    kb.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), help="cast float inputs and the model")
    kb.add_argument("--arch", default="sm_90")
    gm = sub.add_parser("gpumode", help="a GPU MODE reference-kernels problem folder")
    gm.add_argument("folder")
    gm.add_argument("--spec", required=True, help="task.yml's content as JSON")
    gm.add_argument("--out", required=True, help="an existing, empty folder for the proposal")
    gm.add_argument("--arch", default="sm_90")
    return p


def main(argv=None):
    a = _parser().parse_args(argv)
    if not os.path.isdir(a.out):
        print("%s: --out %s is not a folder" % (PROG, a.out), file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    try:
        import torch  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any failure to import torch is exit status 3
        print("%s: torch cannot be imported (%s)" % (PROG, " ".join(str(e).split()) or type(e).__name__),
              file=sys.stderr)
        return 3
    from . import _phase
    from ._errors import Refusal, last_line
    import kernelforge_import as kf
    stderr = sys.stderr
    try:
        with contextlib.redirect_stderr(sys.stdout), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if a.format == "kernelbench":
                kf.import_kernelbench(a.problem, a.out, a.dtype, a.arch)
            else:
                try:
                    with open(a.spec, encoding="utf-8") as f:
                        spec = json.load(f)
                except (OSError, ValueError) as e:
                    raise Refusal(a.spec, "cannot be read as JSON (%s)" % e)
                kf.import_gpumode(a.folder, spec, a.out, a.arch)
    except Refusal as e:
        print("%s: %s" % (PROG, e), file=stderr)
        return 2
    except SystemExit as e:  # sys.exit() in the problem's code (ours never calls it)
        where = os.path.basename(a.problem if a.format == "kernelbench" else os.path.join(a.folder, "reference.py"))
        print("%s: %s: the problem's code called sys.exit(%r) while %s" % (PROG, where, e.code, _phase.current()),
              file=stderr)
        return 2
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=stderr)
        print("%s: internal error: %s" % (PROG, last_line(e)), file=stderr)
        return 1
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: the problem's atexit handlers and the threads it left running would run, or
    # hold the interpreter, after the proposal was written.
    os._exit(status)
