"""The torch.compile harness judges agreement as `kforge verify` does (CTest baseline_judge, on CPU):
against the float64 golden result, within the task's tolerance or no worse than eager's own error
plus one ulp (docs/verification.md, correctness rule 7), so a fused program that rounds once is
not called a disagreement; eager alone only where there is no golden result, and the shape says so.

The candidate's cubin needs CUDA; here its launches are a CPU stand-in that computes the
candidate's values (gpu.baseline.compile runs the real cubin). The check is the harness's own.
"""

import types
import unittest
from unittest import mock

import torch

from kernelforge_baseline import _bench, _judge, _task
from kernelforge_cast import _reference

SAMPLING = {"warmup": 1, "min_samples": 3, "max_samples": 6, "target_spread": 0.5, "time_cap_ms": 2000}
SHAPE = {"label": "rows", "dims": {"B": 8, "D": 1024}}


def ln_gelu_task(dtype="fp16"):
    """residual add -> LayerNorm -> GELU, the chain a fused kernel computes in fp32 and rounds once."""
    return {"name": "ln_gelu", "inputs": [{"name": n, "dtype": dtype, "shape": s} for n, s in
                                          (("x", ["B", "D"]), ("residual", ["B", "D"]), ("w", ["D"]), ("b", ["D"]))],
            "outputs": [{"name": "y", "dtype": dtype, "shape": ["B", "D"]}],
            "reference": {"tape": [{"op": "add", "inputs": ["x", "residual"], "output": "h"},
                                   {"op": "layer_norm", "inputs": ["h", "w", "b"], "output": "n"},
                                   {"op": "gelu", "inputs": ["n"], "output": "y"}]}}


def fused(x, residual, w, b):
    """The chain in fp32, rounded once to the task's dtype: what a fused kernel writes."""
    h = x.float() + residual.float()
    n = torch.nn.functional.layer_norm(h, [h.shape[-1]], w.float(), b.float())
    return (torch.nn.functional.gelu(n).to(x.dtype),)


def off_by(value, dtype="fp16"):
    module = _task.reference_module(ln_gelu_task(dtype))
    return lambda *xs: tuple(t + value for t in module(*xs))


def launches(fn):
    """A stand-in for the candidate's launches (_bench._Launches): fn on the input set."""
    class CpuLaunches:
        def __init__(self, op, sets, torch_):
            self.sets, self.out = sets, {}

        def prepare(self, k):
            pass

        def run(self, k):
            self.out[k] = fn(*self.sets[k])

        def outputs(self, k, count):
            return list(self.out[k])[:count]
    return CpuLaunches


def bench_shape(task, candidate=None, modes=()):
    op = types.SimpleNamespace(outputs=[o["name"] for o in task["outputs"]]) if candidate else None
    with mock.patch.object(_bench, "_Launches", launches(candidate)):
        return _bench.bench_shape(torch, task, SHAPE, modes, "cpu", op, SAMPLING, 0, lambda text: None)


class Candidate(unittest.TestCase):
    def test_the_candidate_is_judged_against_the_float64_result(self):
        def eager32(*xs):
            return _task.reference_module(ln_gelu_task("fp32"))(*xs)

        rows = [
            # name, task, candidate, agrees
            ("fp16 fused, rounded once: more accurate than eager", ln_gelu_task(), fused, True),
            ("fp16 eager itself", ln_gelu_task(), lambda *xs: _task.reference_module(ln_gelu_task())(*xs), True),
            ("fp16 off by a constant", ln_gelu_task(), off_by(0.25), False),
            ("fp32 eager itself", ln_gelu_task("fp32"), eager32, True),
            ("fp32 fused", ln_gelu_task("fp32"), fused, True),
            ("fp32 off by 0.1 %", ln_gelu_task("fp32"), lambda *xs: tuple(t * 1.001 for t in eager32(*xs)), False),
        ]
        for name, task, candidate, agrees in rows:
            with self.subTest(name):
                out = bench_shape(task, candidate)
                check = out["candidate_check"]
                self.assertEqual(check["against"], "float64")
                self.assertEqual(out["flags"], [])
                self.assertEqual((check["passed"], out["measured"]), (agrees, agrees), out["reason"])
                if agrees:
                    self.assertEqual(out["reason"], "")
                    self.assertEqual(out["candidate"]["samples"], out["eager"]["samples"])
                else:
                    self.assertIsNone(out["candidate"])
                    self.assertIn("the candidate disagrees with the float64 result beyond the task's tolerance and "
                                  "eager's own error in this harness on y (", out["reason"])

    def test_a_fused_fp16_candidate_fails_against_eager_alone(self):
        # Why the float64 result is needed: the same candidate judged against eager's fp16 result
        # (the harness's old rule) disagrees at the elements where eager's own roundings land.
        xs = _task.make_inputs(ln_gelu_task(), SHAPE["dims"], "cpu", 0)
        eager = _task.reference_module(ln_gelu_task())(*xs)
        self.assertFalse(_judge.check_outputs(ln_gelu_task(), fused(*xs), eager)["passed"])
        golden, note = _judge.golden_outputs(ln_gelu_task(), xs)
        self.assertEqual(note, "")
        check = _judge.check_outputs(ln_gelu_task(), fused(*xs), eager, golden)
        self.assertTrue(check["passed"])
        y = check["outputs"][0]
        self.assertLess(y["max_abs"], y["eager_max_abs"])     # it is closer to the truth than eager


class Compiled(unittest.TestCase):
    def test_a_compiled_reference_that_fuses_is_measured(self):
        # A stand-in for Inductor's fused program (the chain in fp32, rounded once), then Inductor itself.
        with mock.patch.object(torch, "compile", lambda module, **kw: fused):
            out = bench_shape(ln_gelu_task(), modes=("default",))
        e = out["compiled"]["default"]
        self.assertTrue(e["measured"], e["reason"])
        self.assertEqual(e["check"]["against"], "float64")
        out = bench_shape(ln_gelu_task(), modes=("default",))
        e = out["compiled"]["default"]
        self.assertTrue(e["measured"], e["reason"])

    def test_a_compiled_reference_off_by_a_constant_is_not_used(self):
        with mock.patch.object(torch, "compile", lambda module, **kw: off_by(0.25)):
            out = bench_shape(ln_gelu_task(), modes=("default",))
        e = out["compiled"]["default"]
        self.assertFalse(e["measured"])
        self.assertIsNone(e["timing"])
        self.assertIn("disagrees with the float64 result beyond the task's tolerance and eager's own error on y (8192 "
                      "of 8192 elements)", e["reason"])


class WithoutGolden(unittest.TestCase):
    def test_eager_is_the_truth_only_where_float64_cannot_run_and_the_shape_says_so(self):
        ints = {"name": "ints", "inputs": [{"name": "x", "dtype": "int32", "shape": ["B", "D"]}],
                "outputs": [{"name": "y", "dtype": "int32", "shape": ["B", "D"]}],
                "reference": {"op": "add", "inputs": ["x", "x"]}}

        def no_double(xs, a):
            if xs[0].dtype == torch.float64:
                raise RuntimeError("no float64 kernel")
            return torch.nn.functional.gelu(xs[0])

        rows = [("integer outputs", ints, lambda x: (x + x,), {}, "integer outputs are compared exactly with eager's"),
                ("a reference that fails in float64", ln_gelu_task("fp32"), lambda *xs: _task.reference_module(
                    ln_gelu_task("fp32"))(*xs), {"gelu": no_double},
                 "the reference does not run in float64 (RuntimeError: no float64 kernel); compared with eager's "
                 "result instead")]
        for name, task, candidate, ops, note in rows:
            with self.subTest(name), mock.patch.dict(_reference.OPS, ops):
                out = bench_shape(task, candidate)
                self.assertTrue(out["measured"], out["reason"])
                self.assertEqual(out["candidate_check"]["against"], "eager")
                self.assertEqual(out["candidate_check"]["note"], note)
                self.assertEqual(out["flags"], ["checked against eager, not a float64 result: " + note])
        with mock.patch.dict(_reference.OPS, {"gelu": no_double}):
            out = bench_shape(ln_gelu_task("fp32"), off_by(0.25, "fp32"))
        self.assertIn("the candidate disagrees with eager beyond the task's tolerance in this harness on y (",
                      out["reason"])


class Rule(unittest.TestCase):
    """Element rows of rule 7, as engine/verify/Compare.cpp classify() judges them."""

    def judge(self, got, eager, golden=None, dtype="fp16", tolerance=None):
        spec = {"name": "y", "dtype": dtype}
        if tolerance:
            spec["tolerance"] = tolerance
        t = {"fp16": torch.float16, "fp32": torch.float32}[dtype]
        return _judge.check_outputs({"outputs": [spec]}, (torch.tensor(got, dtype=t),), (torch.tensor(eager, dtype=t),),
                                    None if golden is None else (torch.tensor(golden, dtype=torch.float64),))

    def test_the_tolerance_defaults_are_the_runners(self):
        spec = {"name": "y", "dtype": "fp16"}
        self.assertEqual(_judge._tolerance(spec), (1e-3, 1e-5, "rms"))
        self.assertEqual(_judge._tolerance({"name": "i", "dtype": "int32"}), (0.0, 0.0, "absolute"))
        self.assertEqual(_judge._tolerance(dict(spec, tolerance={"rtol": 0.01})), (0.01, 1e-5, "rms"))

    def test_ulp_is_the_runners(self):
        x = torch.tensor([1.0, 1.5, 0.75, 0.0, 2.0 ** -20, float("inf"), float("nan"), 65504.0], dtype=torch.float64)
        self.assertEqual(_judge.ulp_at("fp16", x).tolist(),
                         [2 ** -10, 2 ** -10, 2 ** -11, 2 ** -24, 2 ** -24, 2 ** -24, 2 ** -24, 32.0])
        self.assertEqual(_judge.ulp_at("fp32", x[:1]).tolist(), [2 ** -23])
        self.assertEqual(_judge.ulp_at("bf16", x[:1]).tolist(), [2 ** -7])
        self.assertEqual(_judge.ulp_at("int32", x[:1]).tolist(), [0.0])

    def test_elements(self):
        zero = {"rtol": 0.0, "atol": 0.0, "atol_mode": "absolute"}
        inf, nan = float("inf"), float("nan")
        rows = [
            # name, got, eager, golden, tolerance, passes
            ("one ulp off passes whatever the tolerance", [1.0 + 2 ** -10], [1.0], None, zero, True),
            ("two ulps off fails at a zero tolerance", [1.0 + 2 ** -9], [1.0], None, zero, False),
            ("no worse than eager's error plus one ulp", [1.0 + 3 * 2 ** -10], [1.0 + 2 ** -9], [1.0], zero, True),
            ("worse than eager's error plus one ulp", [1.0 + 2 ** -8], [1.0 + 2 ** -9], [1.0], zero, False),
            ("eager's error on the other side counts the same", [1.0 - 2 ** -9], [1.0 + 2 ** -9], [1.0], zero, True),
            ("atol scales with the reference's RMS", [100.5, 100.0], [100.0, 100.0], None,
             {"rtol": 0.0, "atol": 0.01, "atol_mode": "rms"}, True),
            ("an absolute atol does not", [100.5, 100.0], [100.0, 100.0], None,
             {"rtol": 0.0, "atol": 0.01, "atol_mode": "absolute"}, False),
            ("an infinity where eager has it passes", [1.0, inf], [1.0, inf], [1.0, 70000.0], None, True),
            ("NaN where both are finite fails", [1.0, nan], [1.0, 2.0], [1.0, 2.0], None, False),
            ("NaN where the float64 result is NaN passes", [nan], [nan], [nan], None, True),
            ("a finite value where eager and float64 are infinite fails", [65504.0], [inf], [inf], None, False),
        ]
        for name, got, eager, golden, tol, passes in rows:
            with self.subTest(name):
                self.assertEqual(self.judge(got, eager, golden, tolerance=tol)["passed"], passes)

    def test_shapes_and_counts(self):
        task = {"outputs": [{"name": "y", "dtype": "fp32"}]}
        w = torch.tensor([1.0, 2.0, 3.0])
        shape = _judge.check_outputs(task, (w.reshape(3, 1),), (w,))
        self.assertFalse(shape["passed"])
        self.assertIn("shape [3, 1]", shape["outputs"][0]["why"])
        self.assertEqual(_judge.disagreement(shape), "y (shape [3, 1], eager [3])")
        count = _judge.check_outputs(task, (), (w,))
        self.assertFalse(count["passed"])
        self.assertIn("returned 0 outputs, eager 1", count["why"])

    def test_golden_steps_are_the_runners(self):
        task = {"inputs": [{"name": "x", "dtype": "fp16", "shape": [4]}],
                "outputs": [{"name": "y", "dtype": "fp16", "shape": [4]},
                            {"name": "i", "dtype": "int32", "shape": [4]}],
                "reference": {"tape": [{"op": "to", "inputs": ["x"], "attrs": {"dtype": "fp32"}, "output": "f"},
                                       {"op": "rms_norm", "inputs": ["f"], "output": "y"},
                                       {"op": "to", "inputs": ["x"], "attrs": {"dtype": "int32"}, "output": "i"}]}}
        xs = (torch.tensor([1.0, -2.0, 3.0, 0.5], dtype=torch.float16),)
        golden, note = _judge.golden_outputs(task, xs)
        self.assertEqual(note, "")
        self.assertEqual([t.dtype for t in golden], [torch.float64, torch.int32])
        # rms_norm without eps keeps float's epsilon in float64, as the runner's golden run does.
        x = xs[0].double()
        want = x / torch.sqrt((x * x).mean() + torch.finfo(torch.float32).eps)
        self.assertTrue(torch.equal(golden[0], want))


if __name__ == "__main__":
    unittest.main()
