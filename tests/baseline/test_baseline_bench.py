"""The torch.compile baseline's harness (device/baseline/python/kernelforge_baseline) on CPU
(CTest baseline_bench): the task's reference compiled by Inductor in each mode, checked against
the float64 result as the runner checks (test_baseline_judge.py), and timed beside eager with
the runner's sampling rule; every way it cannot be measured is said, never skipped. The candidate side needs CUDA and is proven by gpu.baseline.compile.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import unittest
from unittest import mock

import torch

import kernelforge_baseline
from kernelforge_baseline import _bench, _judge
from kernelforge_baseline import __main__ as kernelforge_main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUSED = os.path.join(ROOT, "resources", "examples", "fused_add_rms_norm_fp16")
SAMPLING = {"warmup": 1, "min_samples": 5, "max_samples": 40, "target_spread": 0.05, "time_cap_ms": 3000}


def fused_task(reference=None):
    with open(os.path.join(FUSED, "task.json")) as f:
        task = json.load(f)
    if reference is not None:
        task["reference"] = reference
    return task


def spec(task=None, modes=("default", "max-autotune-no-cudagraphs"), device="cpu", **more):
    s = {"task": task or fused_task(), "shapes": [{"label": "primes", "dims": {"B": 3, "D": 97}}],
         "modes": list(modes), "device": device, "sampling": SAMPLING, "seed": 0, "files": {}}
    s.update(more)
    return s


class Bench(unittest.TestCase):
    def test_compiles_checks_and_times_every_mode_beside_eager(self):
        r = kernelforge_baseline.bench(spec())
        self.assertTrue(r["measured"], r["reason"])
        self.assertEqual((r["device"], r["torch"], r["input_sets"]), ("cpu", torch.__version__, 3))
        shape = r["shapes"][0]
        self.assertTrue(shape["measured"], shape["reason"])
        self.assertIsNone(shape["candidate"])
        self.assertGreaterEqual(shape["eager"]["samples"], SAMPLING["min_samples"])
        self.assertIn(shape["stopped_by"], ("spread", "time_cap", "max_samples"))
        for mode in ("default", "max-autotune-no-cudagraphs"):
            with self.subTest(mode):
                e = shape["compiled"][mode]
                self.assertTrue(e["measured"], e["reason"])
                self.assertGreater(e["compile_s"], 0)       # reported apart from the timing
                self.assertTrue(e["check"]["passed"])
                self.assertEqual([o["name"] for o in e["check"]["outputs"]], ["y", "h"])
                # every side timed in every sample, on the same rotation of input sets
                self.assertEqual(e["timing"]["samples"], shape["eager"]["samples"])
                self.assertGreater(e["timing"]["median_ms"], 0)

    def test_not_measured_says_why(self):
        cases = [
            (spec(fused_task({"torchscript": "reference.pt", "inputs": ["x", "residual", "w"]})),
             "TorchScript module and no op tape of it came with the spec"),
            (spec(fused_task({"torchscript": "reference.pt", "inputs": ["x", "residual", "w"]}),
                  reference_tape_refused="forward calls aten::sort"),
             "cannot be read as an op tape (forward calls aten::sort)"),
            (spec(fused_task({"op": "fft", "inputs": ["x"]})), "does not know"),
            (spec(modes=("fastest",)), "unknown mode fastest"),
            (spec(candidate={"op": {}, "arch": "sm_90", "image": "k.cubin"}), "runs only on CUDA"),
            (spec(device="tpu"), "not 'tpu'"),
        ]
        if not torch.cuda.is_available():
            cases.append((spec(device="cuda"), "no CUDA device"))
        for s, why in cases:
            with self.subTest(why):
                r = kernelforge_baseline.bench(s)
                self.assertFalse(r["measured"])
                self.assertIn(why, r["reason"])

    def test_a_torchscript_reference_is_compiled_from_its_op_tape(self):
        # kforge sends the tape it read from the scripted module (engine/cast/CompileBaselineRun.cpp).
        with open(os.path.join(ROOT, "tests", "data", "generate", "gen_script_scale_softmax_fp32", "task.json")) as f:
            task = json.load(f)
        tape = [{"op": "mul", "inputs": ["x"], "attrs": {"scalar": 0.125}, "output": "s"},
                {"op": "softmax", "inputs": ["s"], "attrs": {"dim": -1}, "output": "y"}]
        r = kernelforge_baseline.bench(spec(task, modes=("default",), shapes=[{"label": "rows", "dims": {"B": 3, "D": 33}}],
                                            reference_tape=tape))
        self.assertTrue(r["measured"], r["reason"])
        e = r["shapes"][0]["compiled"]["default"]
        self.assertTrue(e["measured"], e["reason"])
        self.assertTrue(e["check"]["passed"])
        self.assertEqual(task["reference"], {"torchscript": "scale_softmax.pt", "inputs": ["x"]})  # the spec's task is not edited

    def test_a_compiled_baseline_that_disagrees_is_not_used(self):
        # A stand-in for a miscompiled program (this test's double, not Inductor): the eager
        # outputs plus one. It must be reported, never timed.
        def wrong_compile(module, **kw):
            return lambda *xs: tuple(t + 1 for t in module(*xs))

        with mock.patch.object(torch, "compile", wrong_compile):
            r = kernelforge_baseline.bench(spec(modes=("default",)))
        self.assertFalse(r["measured"])
        e = r["shapes"][0]["compiled"]["default"]
        self.assertFalse(e["measured"])
        self.assertIsNone(e["timing"])
        self.assertIn("disagrees with the float64 result beyond the task's tolerance and eager's own error on "
                      "y (291 of 291 elements), h (291 of 291 elements)", e["reason"])
        self.assertIn("primes (default): the compiled reference disagrees", r["reason"])

    def test_a_compile_that_fails_is_reported(self):
        def broken(module, **kw):
            def run(*xs):
                raise RuntimeError("backend exploded\nmore")
            return run

        with mock.patch.object(torch, "compile", broken):
            r = kernelforge_baseline.bench(spec(modes=("default",)))
        self.assertFalse(r["measured"])
        self.assertIn("could not compile the reference: RuntimeError: backend exploded", r["reason"])
        self.assertNotIn("more", r["reason"])

    def test_stats_are_the_runners(self):
        s = _bench.stats([float(v) for v in range(10, 0, -1)])
        self.assertEqual((s["median_ms"], s["min_ms"], s["max_ms"], s["samples"]), (5.5, 1.0, 10.0, 10))
        self.assertAlmostEqual(s["iqr_ms"], 4.5)
        # n=10: ranks j = floor(5 - 0.98*sqrt(10)) = 1 and k = ceil(6 + 0.98*sqrt(10)) = 10 (capped)
        self.assertAlmostEqual(s["median_rel_spread"], (10 - 1) / 2 / 5.5)
        self.assertEqual(_bench.stats([]), {"samples": 0})

    def test_sampling_stops_by_the_runners_rule(self):
        class Clock:
            def __init__(self, times):
                self.times, self.calls = times, []

            def time(self, side, k):
                self.calls.append((side, k))
                return self.times[side]

        steady = Clock({"a": 1.0, "b": 2.0})
        times, why = _bench._sample(steady, {"a": "a", "b": "b"}, 3, SAMPLING, float("inf"))
        self.assertEqual((why, len(times["a"]), len(times["b"])), ("spread", 5, 5))
        # The order rotates each sample and both sides get the same input set in a sample.
        self.assertEqual(steady.calls[:6], [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2)])
        noisy = Clock({"a": 1.0, "b": 2.0})
        noisy.time = lambda side, k, n=iter(range(10**6)): float(next(n) % 7 + 1)
        times, why = _bench._sample(noisy, {"a": "a", "b": "b"}, 1, SAMPLING, float("inf"))
        self.assertEqual((why, len(times["a"])), ("max_samples", SAMPLING["max_samples"]))
        times, why = _bench._sample(noisy, {"a": "a"}, 1, SAMPLING, 0.0)
        self.assertEqual((why, len(times["a"])), ("time_cap", 3))

    def test_without_a_float64_result_the_check_is_against_eager(self):
        # (test_baseline_judge.py judges against the float64 result.)
        task = {"outputs": [{"name": "y", "dtype": "fp32"}]}
        w = torch.tensor([1.0, float("inf"), 2.0])
        self.assertTrue(_judge.check_outputs(task, (w.clone(),), (w,))["passed"])
        for got, why in ((torch.tensor([1.0, float("-inf"), 2.0]), "an infinity of the other sign"),
                         (torch.tensor([1.0, 5.0, 2.0]), "a number where eager has an infinity"),
                         (torch.tensor([1.0, float("inf"), 2.1]), "a finite value off by 5 %")):
            with self.subTest(why):
                self.assertFalse(_judge.check_outputs(task, (got,), (w,))["passed"])
        shape = _judge.check_outputs(task, (w.reshape(3, 1),), (w,))
        self.assertFalse(shape["passed"])
        self.assertIn("shape [3, 1]", shape["outputs"][0]["why"])
        count = _judge.check_outputs(task, (), (w,))
        self.assertFalse(count["passed"])
        self.assertIn("returned 0 outputs, eager 1", count["why"])

    def test_cli(self):
        args = ["bench", "--task", FUSED, "--device", "cpu", "--quiet"]
        run = [sys.executable, "-m", "kernelforge_baseline"] + args
        r = subprocess.run(run + ["--shape", "nope"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read the spec: the task has no shape labelled 'nope'", r.stderr)
        # The measured run in this process: a new Python would spend ~30 s on Inductor's CPU
        # checks before its first compile; the process boundary is proven by the runs around it.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = kernelforge_main.main(args + ["--shape", "primes", "--mode", "default", "--json"])
        self.assertEqual(code, 0)
        result = json.loads(out.getvalue())
        self.assertEqual(result["modes"], ["default"])
        self.assertTrue(result["shapes"][0]["compiled"]["default"]["measured"])
        r = subprocess.run([sys.executable, "-m", "kernelforge_baseline", "bench"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
