"""What the GPU end-to-end scripts share: a list of checks that prints each as it is made, a
command runner that prints what it ran, and the exit codes CTest reads (0 all held, 1 one
failed, 77 skipped)."""

import json
import os
import subprocess
import time

SKIP = 77


class Checks:
    def __init__(self):
        self.results = {"checks": []}
        self.failures = []

    def check(self, ok, what):
        print(("ok    " if ok else "FAIL  ") + what, flush=True)
        self.results["checks"].append({"ok": bool(ok), "what": what})
        if not ok:
            self.failures.append(what)
        return ok

    def finish(self, json_path=None):
        if json_path:
            os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
            with open(json_path, "w") as f:
                json.dump(dict(self.results, failures=self.failures), f, indent=2)
        print("\n%d check(s), %d failure(s)" % (len(self.results["checks"]), len(self.failures)))
        for f in self.failures:
            print("  FAIL " + f)
        return 1 if self.failures else 0


def run(cmd, env=None, timeout=900):
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    print("$ %s  -> %d (%.1f s)" % (" ".join(cmd), p.returncode, time.time() - t), flush=True)
    return p
