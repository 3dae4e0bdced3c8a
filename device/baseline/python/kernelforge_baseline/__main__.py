"""python -m kernelforge_baseline compile TASK --shape LABEL [--mode M] [--device D] [--out F] [--json]
python -m kernelforge_baseline check PACKAGE TASK_JSON --shape LABEL --device D   (what compile runs in a child)

Exit status: 0 compiled and checked; 1 not measured (the reason is printed); 2 a usage error.
"""

import argparse
import json
import sys

from ._compile import MODES, check_package, compile_baseline


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m kernelforge_baseline",
                                description="Compile a KernelForge task's reference with Inductor (AOT) for one shape.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="compile the reference for one shape and check it against eager")
    c.add_argument("task", help="the task folder or its task.json")
    c.add_argument("--shape", required=True, help="the label of a benchmark (or test) shape")
    c.add_argument("--mode", choices=MODES, default="default")
    c.add_argument("--device", choices=("cuda", "cpu"))
    c.add_argument("--out", help="the package to write (default: <task>-<shape>-<mode>.pt2 here)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--json", action="store_true", help="print the result as JSON")
    k = sub.add_parser("check", help="load a compiled package and compare it with eager (run in a child process)")
    k.add_argument("package")
    k.add_argument("task", help="the task.json")
    k.add_argument("--shape", required=True)
    k.add_argument("--device", choices=("cuda", "cpu"), required=True)
    k.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.command == "check":
        try:
            print(json.dumps({"check": check_package(a.package, a.task, a.shape, a.device, a.seed)}, allow_nan=False))
            return 0
        except Exception as e:  # noqa: BLE001 - reported to the parent as text
            print(json.dumps({"error": "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")}))
            return 1
    r = compile_baseline(a.task, a.shape, a.mode, a.device, a.out, a.seed)
    if a.json:
        print(json.dumps(r, indent=2, allow_nan=False))
    elif r["measured"]:
        print("compiled %s at %s (%s, %s) in %.1f s: %s; matches eager (%s)"
              % (r["task"], r["shape"]["label"], r["mode"], r["device"], r["compile_s"], r["package"],
                 ", ".join("%s max %.3g" % (o["name"], o["max_abs"]) for o in r["check"]["outputs"])))
    else:
        print("compile baseline: not measured: %s" % r["reason"], file=sys.stderr)
    return 0 if r["measured"] else 1


if __name__ == "__main__":
    sys.exit(main())
