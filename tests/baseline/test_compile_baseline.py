"""The torch.compile baseline's compile step (device/baseline/python/kernelforge_baseline), on CPU
(CTest baseline_compile): Inductor compiles a task's reference ahead of time for one shape, the
result is checked against eager, and every way it cannot be measured is said, not skipped.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import torch

import kernelforge_baseline
from kernelforge_baseline import _compile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUSED = os.path.join(ROOT, "resources", "examples", "fused_add_rms_norm_fp16")


def task_with(reference):
    with open(os.path.join(FUSED, "task.json")) as f:
        task = json.load(f)
    task["reference"] = reference
    return task


class CompileBaseline(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kf-baseline-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write_task(self, task, name):
        path = os.path.join(self.tmp.name, name + ".json")
        with open(path, "w") as f:
            json.dump(task, f)
        return path

    def test_compiles_the_reference_and_matches_eager(self):
        out = os.path.join(self.tmp.name, "fused-primes.pt2")
        r = kernelforge_baseline.compile_baseline(FUSED, "primes", "default", "cpu", out)
        self.assertTrue(r["measured"], r["reason"])
        self.assertEqual(r["shape"], {"label": "primes", "dims": {"B": 3, "D": 97}})
        self.assertTrue(os.path.isfile(r["package"]))
        self.assertGreater(r["compile_s"], 0)           # reported apart from any timing
        self.assertEqual(r["torch"], torch.__version__)
        self.assertTrue(r["check"]["passed"])
        self.assertEqual([o["name"] for o in r["check"]["outputs"]], ["y", "h"])
        # The package runs the reference: the same outputs as eager on fresh inputs.
        compiled = torch._inductor.aoti_load_package(r["package"])
        with open(os.path.join(FUSED, "task.json")) as f:
            task = json.load(f)
        inputs = _compile.make_inputs(task, {"B": 3, "D": 97}, "cpu", 5)
        want = _compile.reference_module(task)(*inputs)
        for g, w in zip(compiled(*inputs), want):
            torch.testing.assert_close(g, w, rtol=1e-2, atol=1e-2)

    def test_not_measured_says_why(self):
        script = self.write_task(task_with({"torchscript": "reference.pt", "inputs": ["x", "residual", "w"]}), "script")
        unknown = self.write_task(task_with({"op": "fft", "inputs": ["x"]}), "unknown")
        cases = [
            ((script, "primes", "default", "cpu"), "TorchScript module"),
            ((unknown, "primes", "default", "cpu"), "does not know"),
            ((FUSED, "no-such-shape", "default", "cpu"), "no shape labelled 'no-such-shape'"),
            ((FUSED, "primes", "fastest", "cpu"), "unknown mode"),
            ((os.path.join(self.tmp.name, "missing.json"), "primes", "default", "cpu"), "cannot read"),
        ]
        if not torch.cuda.is_available():
            cases.append(((FUSED, "primes", "default", "cuda"), "no CUDA device"))
        for args, why in cases:
            with self.subTest(why):
                r = kernelforge_baseline.compile_baseline(*args)
                self.assertFalse(r["measured"])
                self.assertIn(why, r["reason"])
                self.assertIsNone(r["package"])

    def test_a_compiled_baseline_that_disagrees_is_not_used(self):
        # A stand-in for a miscompiled program (this test's double, not Inductor): it returns the
        # eager outputs plus one, and must be reported rather than timed.
        def compile_and_package(ep, package_path, inductor_configs):
            open(package_path, "wb").close()
            return package_path

        def load_package(path):
            with open(os.path.join(FUSED, "task.json")) as f:
                module = _compile.reference_module(json.load(f))
            return lambda *xs: tuple(t + 1 for t in module(*xs))

        with mock.patch.object(torch._inductor, "aoti_compile_and_package", compile_and_package), \
                mock.patch.object(torch._inductor, "aoti_load_package", load_package):
            r = kernelforge_baseline.compile_baseline(FUSED, "primes", "max-autotune-no-cudagraphs", "cpu",
                                                      os.path.join(self.tmp.name, "wrong.pt2"), isolate=False)
        self.assertFalse(r["measured"])
        self.assertIn("disagrees with eager on y, h", r["reason"])
        self.assertFalse(r["check"]["passed"])
        self.assertGreater(r["check"]["outputs"][0]["mismatches"], 0)

    def test_a_package_that_crashes_or_fails_to_load_is_reported(self):
        # Loading runs native code, so it happens in a child; a stand-in child (this test's double)
        # that dies of SIGSEGV, and a real child given a file that is no package.
        def compile_and_package(ep, package_path, inductor_configs):
            with open(package_path, "wb") as f:
                f.write(b"not a package")
            return package_path

        crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
        with mock.patch.object(torch._inductor, "aoti_compile_and_package", compile_and_package):
            with mock.patch.object(_compile, "_child_command", lambda *a: crash):
                r = kernelforge_baseline.compile_baseline(FUSED, "primes", "default", "cpu",
                                                          os.path.join(self.tmp.name, "crash.pt2"))
            self.assertFalse(r["measured"])
            self.assertIn("crashed the process that loaded it (signal 11)", r["reason"])
            r = kernelforge_baseline.compile_baseline(FUSED, "primes", "default", "cpu",
                                                      os.path.join(self.tmp.name, "garbage.pt2"))
        self.assertFalse(r["measured"])
        self.assertIn("the compiled package does not run: RuntimeError: Failed to initialize zip archive", r["reason"])
        self.assertIsNone(r["package"])

    def test_the_check_is_the_runners_rule(self):
        spec = {"name": "y", "dtype": "fp16"}                       # no tolerance: the runner's fp16 default
        self.assertEqual(_compile._tolerance(spec), (1e-3, 1e-5, "rms"))
        self.assertEqual(_compile._tolerance({"name": "i", "dtype": "int32"}), (0.0, 0.0, "absolute"))
        self.assertEqual(_compile._tolerance(dict(spec, tolerance={"rtol": 0.01})), (0.01, 1e-5, "rms"))
        task = {"outputs": [{"name": "y", "dtype": "fp32"}]}
        w = torch.tensor([1.0, float("inf"), 2.0])
        ok = _compile._check(task, (w.clone(),), (w,))
        self.assertTrue(ok["passed"])
        for got, why in ((torch.tensor([1.0, float("-inf"), 2.0]), "an infinity of the other sign"),
                         (torch.tensor([1.0, 5.0, 2.0]), "a number where eager has an infinity"),
                         (torch.tensor([1.0, float("inf"), 2.1]), "a finite value off by 5 %")):
            with self.subTest(why):
                self.assertFalse(_compile._check(task, (got,), (w,))["passed"])
        shape = _compile._check(task, (w.reshape(3, 1),), (w,))
        self.assertFalse(shape["passed"])
        self.assertIn("shape [3, 1]", shape["outputs"][0]["why"])
        count = _compile._check(task, (), (w,))
        self.assertFalse(count["passed"])
        self.assertIn("returned 0 outputs, eager 1", count["why"])

    def test_cli(self):
        env = dict(os.environ)
        r = subprocess.run([sys.executable, "-m", "kernelforge_baseline", "compile", FUSED, "--shape", "nope",
                            "--device", "cpu"], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 1)
        self.assertIn("compile baseline: not measured: the task has no shape labelled 'nope'", r.stderr)
        r = subprocess.run([sys.executable, "-m", "kernelforge_baseline", "compile", FUSED, "--shape", "nope",
                            "--device", "cpu", "--json"], capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(json.loads(r.stdout)["measured"], False)


if __name__ == "__main__":
    unittest.main()
