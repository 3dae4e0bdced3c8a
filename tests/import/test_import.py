"""kernelforge_import (device/agent/python/kernelforge_import) on KernelForge's own fixtures
(tests/data/import): every KernelBench and GPU MODE problem becomes the expected proposal, or is
refused with exit status 2 and one line naming the construct. Each proposal's reference.pt,
loaded back, reproduces the eager outputs stored as samples, and the samples' .npy files read
back with a reader that needs no NumPy (import_support.read_npy).

    cd tests/import && PYTHONPATH=../../device/agent/python python -m unittest -v test_import

Most imports run in this process through __main__.main (torch is imported once); the command
line itself (PYTHONSAFEPATH, one stderr line, exit status 3) runs as a subprocess.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import import_support as S  # noqa: E402
from import_support import GM, KB, PACKAGE, SPECS, Imported, ProposalChecks, read_npy, write_problem  # noqa: E402
import torch  # noqa: E402

from kernelforge_import import _npy  # noqa: E402

HOSTILE = os.path.join(S.DATA, "hostile")
KB_TOL = {"rtol": 1e-4, "atol": 1e-4, "atol_mode": "absolute"}


def setUpModule():
    S.start()


def tearDownModule():
    S.finish()


def shapes(task):
    return {t["name"]: t["shape"] for t in task["inputs"] + task["outputs"]}


class KernelBench(ProposalChecks):
    def test_elementwise_constants_become_free_symbols(self):
        p, _ = self.imported("kernelbench", "ew_gelu_bias")
        task = p["task"]
        self.assertEqual((task["name"], task["architectures"]), ("ew_gelu_bias", ["sm_90"]))
        self.assertEqual(task["description"], "Adds a bias vector to every row of x, then applies GELU (tanh approximation).")
        self.assertEqual(shapes(task), {"x": ["BATCH_SIZE", "DIM"], "bias": ["DIM"], "y": ["BATCH_SIZE", "DIM"]})
        self.assertEqual(task["symbols"], {"BATCH_SIZE": {"min": 1, "max": 129}, "DIM": {"min": 1, "max": 1000}})
        self.assertEqual(task["outputs"][0]["tolerance"], KB_TOL)
        self.assertEqual(task["shapes"]["benchmarks"], [{"label": "problem", "BATCH_SIZE": 96, "DIM": 1000}])
        tests = task["shapes"]["tests"]
        self.assertTrue(3 <= len(tests) <= 6)
        self.assertEqual([t["label"] for t in tests], ["t%d" % i for i in range(len(tests))])
        for s in ("BATCH_SIZE", "DIM"):
            self.assertIn(1, [t[s] for t in tests])
            self.assertTrue(all(t[s] * 4 * 1000 <= 4 << 22 for t in tests))
        self.assertEqual(task["cost"], {"bytes": "4 * BATCH_SIZE * DIM + 4 * DIM + 4 * BATCH_SIZE * DIM"})
        self.assertEqual(task["reference"]["inputs"], ["x", "bias"])
        self.assertEqual(p["originals"], ["ew_gelu_bias.py"])
        self.assertNotIn("distributions", task["inputs"][0])
        self.assertEqual(p["notes"], [])

    def test_reduction_keeps_the_reduced_dim_literal(self):
        task = self.imported("kernelbench", "row_sum")[0]["task"]
        self.assertEqual(shapes(task), {"x": ["BATCH_SIZE", "ROWS", "COLS"], "y": ["BATCH_SIZE", 1, "COLS"]})
        self.assertEqual(set(task["symbols"]), {"BATCH_SIZE", "ROWS", "COLS"})   # reduce_dim builds the model
        self.assertEqual(task["cost"]["bytes"], "4 * BATCH_SIZE * ROWS * COLS + 4 * BATCH_SIZE * COLS")
        self.assertEqual(task["description"], "Sums a 3-D tensor over dimension 1, keeping the reduced dimension.")

    def test_weight_shapes_are_fixed_and_the_batch_is_free(self):
        p, _ = self.imported("kernelbench", "linear_relu")
        task = p["task"]
        self.assertEqual(shapes(task), {"x": ["BATCH_SIZE", "IN_FEATURES"], "linear_weight": ["OUT_FEATURES", "IN_FEATURES"],
                                        "linear_bias": ["OUT_FEATURES"], "y": ["BATCH_SIZE", "OUT_FEATURES"]})
        self.assertEqual(task["reference"]["inputs"], ["x", "linear_weight", "linear_bias"])
        self.assertEqual(task["symbols"], {"BATCH_SIZE": {"min": 1, "max": 129}, "IN_FEATURES": {"min": 96, "max": 96},
                                           "OUT_FEATURES": {"min": 40, "max": 40}})
        self.assertEqual(task["shapes"]["benchmarks"],
                         [{"label": "problem", "BATCH_SIZE": 50, "IN_FEATURES": 96, "OUT_FEATURES": 40}])
        bound = 96 ** -0.5   # nn.Linear draws U(-1/sqrt(in), 1/sqrt(in))
        for t in task["inputs"][1:]:
            self.assertEqual(t["dtype"], "fp32")
            (d,) = t["distributions"]
            self.assertEqual(d["kind"], "uniform")
            self.assertTrue(-bound - 1e-3 <= d["low"] < -0.09 and 0.09 < d["high"] <= bound + 1e-3, d)
        self.assertEqual(task["cost"]["bytes"], "4 * BATCH_SIZE * IN_FEATURES + 4 * OUT_FEATURES * IN_FEATURES + "
                                                "4 * OUT_FEATURES + 4 * BATCH_SIZE * OUT_FEATURES")
        notes = " ".join(p["notes"])
        self.assertIn("IN_FEATURES stays 96: get_init_inputs()", notes)
        self.assertIn("OUT_FEATURES stays 40", notes)
        self.assertIn("2 parameter and buffer tensors (3880 values", notes)
        self.assertIn("linear.weight as linear_weight, uniform [", notes)
        self.assertNotIn("inside reference.pt", notes)
        self.assertEqual(task["outputs"][0]["tolerance"], KB_TOL)

    def test_parameters_are_inputs_not_constants(self):
        p, out = self.imported("kernelbench", "linear_relu")
        ref = S.load_pt(os.path.join(out, "reference.pt"))
        self.assertEqual(list(ref.parameters()) + list(ref.buffers()), [])
        self.assertEqual(ref.code.split(")")[0].split(), ["def", "forward(self,", "x:", "Tensor,", "linear_weight:",
                                                           "Tensor,", "linear_bias:", "Tensor"])
        self.assertEqual(len(p["samples"]), 2)
        # The seeded parameters are written once; both samples name the same files.
        for name in ("linear_weight", "linear_bias"):
            self.assertEqual({s["inputs"][name] for s in p["samples"]}, {"samples/t0/inputs/%s.npy" % name})
        self.assertNotEqual(p["samples"][0]["inputs"]["x"], p["samples"][1]["inputs"]["x"])
        for i in range(len(p["samples"])):
            (x, w, b), (y,) = self.sample(out, p, i)
            self.assertEqual((tuple(w.shape), tuple(b.shape)), ((40, 96), (40,)))
            with torch.no_grad():
                self.assertTrue(torch.equal(ref(x, w, b), y))
                # The seeded weights are nn.Linear's after torch.manual_seed(42).
                torch.manual_seed(42)
                linear = torch.nn.Linear(96, 40)
                self.assertTrue(torch.equal(w, linear.weight) and torch.equal(b, linear.bias))
                g = torch.Generator().manual_seed(7)
                w2, b2 = torch.rand(w.shape, generator=g) * 0.2 - 0.1, torch.rand(b.shape, generator=g) * 0.2 - 0.1
                got = ref(x, w2, b2)
                self.assertFalse(torch.allclose(got, y))
                torch.testing.assert_close(got, torch.relu(x @ w2.t() + b2), rtol=1e-5, atol=1e-5)
                self.assertFalse(torch.allclose(ref(x, w, b2), y))

    def test_sequential_batchnorm_and_integer_buffer_become_inputs(self):
        p, out = self.imported("kernelbench", "mlp_batchnorm")
        task = p["task"]
        self.assertEqual(shapes(task), {
            "x": ["BATCH_SIZE", "IN_FEATURES"], "offset": ["OUT_FEATURES"], "p0_weight": ["HIDDEN", "IN_FEATURES"],
            "p0_bias": ["HIDDEN"], "p1_weight": ["HIDDEN"], "p1_bias": ["HIDDEN"], "p1_running_mean": ["HIDDEN"],
            "p1_running_var": ["HIDDEN"], "p3_weight": ["OUT_FEATURES", "HIDDEN"], "p3_bias": ["OUT_FEATURES"],
            "y": ["BATCH_SIZE", "OUT_FEATURES"]})
        self.assertEqual(task["symbols"]["HIDDEN"], {"min": 48, "max": 48})   # sizes only parameters
        dists = {t["name"]: t.get("distributions") for t in task["inputs"]}
        self.assertEqual(dists["offset"], [{"kind": "int_range", "low": -3, "high": 8}])
        self.assertEqual(dists["p1_weight"], [{"kind": "uniform", "low": 0.5, "high": 1.5}])    # all ones
        self.assertEqual(dists["p1_bias"], [{"kind": "uniform", "low": -0.5, "high": 0.5}])     # all zeros
        self.assertTrue(0.5 <= dists["p1_running_var"][0]["low"] < dists["p1_running_var"][0]["high"] <= 2.0)
        self.assertEqual(task["inputs"][1]["dtype"], "int64")
        self.assertIn("forward does not read 1.num_batches_tracked, so it is not a task input", p["notes"])
        self.assertIn("8 * OUT_FEATURES + 4 * HIDDEN * IN_FEATURES", task["cost"]["bytes"])
        ref = S.load_pt(os.path.join(out, "reference.pt"))
        xs, (y,) = self.sample(out, p)
        names = [t["name"] for t in task["inputs"]]
        with torch.no_grad():
            self.assertTrue(torch.equal(ref(*xs), y))
            for name in ("offset", "p1_running_mean", "p1_running_var", "p3_bias"):
                changed = list(xs)
                changed[names.index(name)] = xs[names.index(name)] + 1
                self.assertFalse(torch.allclose(ref(*changed), y), name)

    def test_tied_weights_name_clashes_and_a_parameter_read_as_a_number(self):
        text = ("import torch\nclass Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.emb = torch.nn.Embedding(10, 6)\n        self.head = torch.nn.Linear(6, 10, bias=False)\n"
                "        self.head.weight = self.emb.weight\n"
                "    def forward(self, idx, emb_weight):\n        return self.head(self.emb(idx) * emb_weight)\n"
                "b = 5\nn = 7\ndef get_inputs():\n    return [torch.randint(0, 10, (b, n)), torch.rand(6)]\n")
        out = tempfile.mkdtemp(dir=Imported.root)
        rc, err = S.run_main(["kernelbench", write_problem(text), "--out", out])
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "proposal.json")) as f:
            p = json.load(f)
        self.check_proposal(out, p, "kernelbench")
        self.assertEqual(shapes(p["task"]), {"idx": ["B", "N"], "emb_weight": [6], "emb_weight_2": [10, 6],
                                             "y": ["B", "N", 10]})
        number = ("import torch\nclass Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                  "        self.scale = torch.nn.Parameter(torch.tensor(2.0))\n"
                  "    def forward(self, x):\n        return x * float(self.scale)\n"
                  "def get_inputs():\n    return [torch.randn(4, 5)]\n")
        rc, err = S.run_main(["kernelbench", write_problem(number), "--out", tempfile.mkdtemp(dir=Imported.root)])
        self.assertEqual(rc, 2, err)
        self.assertIn("problem.py:6: the trace of forward does not follow the model's scale", err)

    def test_tuple_constants_and_a_positive_input(self):
        p, _ = self.imported("kernelbench", "scaled_layernorm")
        task = p["task"]
        self.assertEqual(shapes(task)["x"], ["BATCH_SIZE", "NORMALIZED_SHAPE_0", "NORMALIZED_SHAPE_1"])
        self.assertEqual(task["symbols"]["NORMALIZED_SHAPE_1"], {"min": 40, "max": 40})
        dist = task["inputs"][0]["distributions"]
        self.assertEqual(dist[0]["kind"], "uniform")
        self.assertTrue(0.5 >= dist[0]["low"] > 0 and 1.5 <= dist[0]["high"] < 1.6, dist)
        self.assertTrue(task["description"].startswith("Layer normalisation over the last two dimensions"))
        self.assertTrue(any("only positive values" in n for n in p["notes"]))
        # LayerNorm's affine weights start all ones and all zeros: drawn around those values.
        self.assertEqual(task["inputs"][1:], [
            {"name": "norm_weight", "dtype": "fp32", "shape": ["NORMALIZED_SHAPE_0", "NORMALIZED_SHAPE_1"],
             "distributions": [{"kind": "uniform", "low": 0.5, "high": 1.5}]},
            {"name": "norm_bias", "dtype": "fp32", "shape": ["NORMALIZED_SHAPE_0", "NORMALIZED_SHAPE_1"],
             "distributions": [{"kind": "uniform", "low": -0.5, "high": 0.5}]}])
        self.assertTrue(any("norm.weight as norm_weight, uniform [0.5, 1.5] (all its values are 1)" in n
                            for n in p["notes"]), p["notes"])

    def test_dtype_casts_inputs_model_and_tolerance(self):
        for dtype in ("fp16", "bf16"):
            with self.subTest(dtype):
                p, out = self.imported("kernelbench", "linear_relu", "--dtype", dtype)
                task = p["task"]
                self.assertEqual([t["dtype"] for t in task["inputs"] + task["outputs"]], [dtype] * 4)
                self.assertEqual(task["outputs"][0]["tolerance"], {"rtol": 1e-2, "atol": 1e-2, "atol_mode": "absolute"})
                self.assertTrue(task["cost"]["bytes"].startswith("2 * BATCH_SIZE * IN_FEATURES + 2 * OUT_FEATURES"))
                if dtype == "bf16":
                    self.assertEqual(p["samples"][0]["upcast"], ["x", "linear_weight", "linear_bias", "y"])
                    self.assertEqual(read_npy(os.path.join(out, p["samples"][0]["inputs"]["linear_weight"]))[1], "<f4")

    def test_refusals_name_the_construct_and_line(self):
        self.refused("kernelbench", "dropout_train", "dropout_train.py:10:", "dropout with training=True", "random op")
        self.refused("kernelbench", "rand_in_forward", "torch.randn", "deterministic", line=8)
        self.refused("kernelbench", "int_output", "forward returns an int", "outputs are tensors", line=7)
        self.refused("kernelbench", "dict_input", "forward input 1 (operands) is a dict", line=7)

    def test_problems_that_do_not_load(self):
        cases = [
            ("import torch\nx = 1 / 0\n", ["problem.py:2:", "importing the problem raised ZeroDivisionError"]),
            ("import torch\ndef get_inputs():\n    return []\n", ["defines no class Model"]),
            ("import torch\nclass Model(torch.nn.Module):\n    pass\n", ["defines no get_inputs()"]),
            ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
             "def get_inputs():\n    raise ValueError('no data')\n", ["problem.py:6:", "get_inputs() raised ValueError: no data"]),
            ("import torch\nclass Model(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
             "        assert n > 3, 'n too small'\n    def forward(self, x):\n        return x\n"
             "def get_inputs():\n    return [torch.randn(3)]\ndef get_init_inputs():\n    return [2]\n",
             ["problem.py:5:", "Model(*get_init_inputs()) raised AssertionError: n too small"]),
            ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x, k):\n        return x * k\n"
             "def get_inputs():\n    return [torch.randn(3), 2]\n", ["problem.py:3:", "forward input 2 (k) is an int"]),
            ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x, (x, x)\n"
             "def get_inputs():\n    return [torch.randn(3)]\n", ["output 2 is a tuple inside a tuple"]),
        ]
        for text, words in cases:
            with self.subTest(words[-1]):
                out = tempfile.mkdtemp(dir=Imported.root)
                rc, err = S.run_main(["kernelbench", write_problem(text), "--out", out])
                self.assertEqual(rc, 2, err)
                self.assertEqual(err.count("\n"), 1, err)
                for w in words:
                    self.assertIn(w, err)

    def test_factory_devices_follow_the_input_and_a_cpu_pin_is_refused(self):
        follow = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                  "        return x + torch.ones(x.shape[-1], device='cuda')\n"
                  "n = 5\ndef get_inputs():\n    return [torch.randn(3, n)]\n")
        out = tempfile.mkdtemp(dir=Imported.root)
        rc, err = S.run_main(["kernelbench", write_problem(follow), "--out", out])
        self.assertEqual(rc, 0, err)
        ref = S.load_pt(os.path.join(out, "reference.pt"), map_location="meta")
        self.assertEqual(ref(torch.empty(4, 9, device="meta")).shape, (4, 9))   # no CPU tensor inside
        with open(os.path.join(out, "proposal.json")) as f:
            self.assertTrue(any("first input's device" in n for n in json.load(f)["notes"]))
        pinned = follow.replace("device='cuda'", "device='cpu'")
        rc, err = S.run_main(["kernelbench", write_problem(pinned), "--out", tempfile.mkdtemp(dir=Imported.root)])
        self.assertEqual(rc, 2, err)
        self.assertIn("problem.py:4: forward puts a tensor on the CPU", err)

    def test_odd_failures_give_multiple_of_and_two_outputs_are_y0_y1(self):
        text = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                "        z = x.view(x.shape[0], -1, 2).flip(-1).reshape(x.shape[0], -1)\n"
                "        return z, x.sum(1)\nb = 4\nn = 64\ndef get_inputs():\n    return [torch.randn(b, n)]\n")
        out = tempfile.mkdtemp(dir=Imported.root)
        rc, err = S.run_main(["kernelbench", write_problem(text), "--out", out])
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "proposal.json")) as f:
            p = json.load(f)
        self.check_proposal(out, p, "kernelbench")
        self.assertEqual(shapes(p["task"]), {"x": ["B", "N"], "y0": ["B", "N"], "y1": ["B"]})
        self.assertEqual(p["task"]["symbols"]["N"], {"min": 2, "max": 64, "multiple_of": 2})
        self.assertTrue(any("multiple of 2" in n for n in p["notes"]), p["notes"])

    def test_a_huge_problem_shape_is_checked_on_meta_only(self):
        text = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
                "rows = 1 << 15\ncols = 1 << 14\ndef get_inputs():\n    return [torch.randn(rows, cols)]\n")
        out = tempfile.mkdtemp(dir=Imported.root)
        rc, err = S.run_main(["kernelbench", write_problem(text), "--out", out])
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "proposal.json")) as f:
            p = json.load(f)
        self.check_proposal(out, p, "kernelbench")
        self.assertEqual(p["task"]["shapes"]["benchmarks"], [{"label": "problem", "ROWS": 1 << 15, "COLS": 1 << 14}])
        self.assertTrue(any("checked on the meta device only" in n for n in p["notes"]), p["notes"])
        for t in p["task"]["shapes"]["tests"]:
            self.assertLessEqual(t["ROWS"] * t["COLS"], 1 << 22)

    def test_a_dim_that_is_twice_a_constant_fixes_it(self):
        text = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x, w):\n"
                "        return x * w[: x.shape[1]]\nb = 6\nd = 10\n"
                "def get_inputs():\n    return [torch.randn(b, d), torch.randn(2 * d)]\n")
        out = tempfile.mkdtemp(dir=Imported.root)
        rc, err = S.run_main(["kernelbench", write_problem(text), "--out", out])
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "proposal.json")) as f:
            p = json.load(f)
        self.assertEqual(shapes(p["task"]), {"x": ["B", "D"], "w": [20], "y": ["B", "D"]})
        self.assertEqual(p["task"]["symbols"]["D"], {"min": 10, "max": 10})
        self.assertTrue(any("equals none of them" in n for n in p["notes"]), p["notes"])


def gm_folder(reference, task_py=True, utils=True):
    """A GPU MODE-style folder (<tmp>/p) with ``reference`` as reference.py; the spec's files
    point at ../utils.py like the fixtures'."""
    root = tempfile.mkdtemp(dir=Imported.root)
    folder = os.path.join(root, "p")
    os.mkdir(folder)
    with open(os.path.join(folder, "reference.py"), "w") as f:
        f.write(reference)
    if task_py:
        with open(os.path.join(GM, "vecadd_py", "task.py")) as src, open(os.path.join(folder, "task.py"), "w") as f:
            f.write(src.read())
    if utils:
        with open(os.path.join(GM, "utils.py")) as src, open(os.path.join(root, "utils.py"), "w") as f:
            f.write(src.read())
    return folder


SMALL = {"files": S.FILES[1:], "lang": "py", "tests": [{"size": 5, "seed": 1}, {"size": 9, "seed": 2}],
         "benchmarks": [{"size": 100000, "seed": 3}]}


class GpuMode(ProposalChecks):
    def test_vector_add(self):
        p, _ = self.imported("gpumode", "vecadd_py")
        task = p["task"]
        self.assertEqual((task["name"], task["description"]), ("vecadd_py", "Adds two fp16 vectors element by element."))
        self.assertEqual(shapes(task), {"x": ["SIZE"], "y": ["SIZE"], "out": ["SIZE"]})   # "y" is taken by an input
        self.assertEqual([t["dtype"] for t in task["inputs"] + task["outputs"]], ["fp16"] * 3)
        self.assertEqual(task["symbols"], {"SIZE": {"min": 127, "max": 67108864}})
        self.assertEqual(task["outputs"][0]["tolerance"], {"rtol": 1e-3, "atol": 1e-3, "atol_mode": "absolute"})
        self.assertEqual(task["shapes"], {
            "tests": [{"label": "t0", "SIZE": 127}, {"label": "t1", "SIZE": 1000}, {"label": "t2", "SIZE": 4099}],
            "benchmarks": [{"label": "bench0", "SIZE": 1048576}, {"label": "bench1", "SIZE": 67108864}]})
        self.assertEqual(p["originals"], ["task.yml", "task.py", "utils.py", "reference.py"])
        self.assertEqual([s["label"] for s in p["samples"]], ["t0", "t1"])
        notes = " ".join(p["notes"])
        self.assertIn("seed values (11, 12, 13, 21, 22) are not used", notes)
        self.assertIn("config, ranking_by, test_timeout", notes)

    def test_single_tensor_data_and_utils_default_tolerance(self):
        p, _ = self.imported("gpumode", "rowmax_py")
        task = p["task"]
        self.assertEqual(shapes(task), {"x": ["ROWS", "COLS"], "y": ["ROWS"]})
        # make_match_reference(ref_kernel) without rtol/atol: utils.match_reference's defaults
        self.assertEqual(task["outputs"][0]["tolerance"], {"rtol": 2e-5, "atol": 1e-6, "atol_mode": "absolute"})
        self.assertEqual([t["ROWS"] for t in task["shapes"]["tests"]], [1, 7, 129])   # 4096 x 2048 is over 2^22
        self.assertTrue(any("rows=4096, cols=2048" in n for n in p["notes"]))
        self.assertEqual(task["symbols"], {"ROWS": {"min": 1, "max": 8192}, "COLS": {"min": 33, "max": 8192}})

    def test_preallocated_output_is_an_output(self):
        p, _ = self.imported("gpumode", "gemm_prealloc_py")
        task = p["task"]
        self.assertEqual(task["reference"]["inputs"], ["a", "b"])
        self.assertEqual(shapes(task), {"a": ["M", "K"], "b": ["K", "N"], "c": ["M", "N"]})
        self.assertEqual(task["outputs"][0]["tolerance"], {"rtol": 1e-4, "atol": 1e-4, "atol_mode": "absolute"})
        self.assertTrue(any("c is preallocated" in n for n in p["notes"]))
        self.assertEqual(task["cost"]["bytes"], "4 * M * K + 4 * K * N + 4 * M * N")

    def test_hand_written_checker_gets_dtype_defaults(self):
        p, _ = self.imported("gpumode", "custom_check_py")
        task = p["task"]
        self.assertEqual(shapes(task), {"logits": ["BATCH", "DIM"], "y": ["BATCH", "DIM"]})
        self.assertEqual(task["outputs"][0]["tolerance"], {"rtol": 1.3e-6, "atol": 1e-5, "atol_mode": "absolute"})
        self.assertTrue(any("hand-written" in n for n in p["notes"]))

    def test_missing_utils_gets_a_stand_in(self):
        ref = ("import torch\nfrom utils import make_match_reference\n\ndef ref_kernel(data):\n    a, b = data\n"
               "    out = a * b\n    return out\n\ndef generate_input(size, seed):\n"
               "    return torch.rand(size) + 0.25, torch.randint(-5, 9, (size,))\n\n"
               "check_implementation = make_match_reference(ref_kernel, atol=1e-2)\n")
        p, _ = self.imported("gpumode", gm_folder(ref, utils=False), SMALL)
        task = p["task"]
        self.assertEqual([(t["name"], t["dtype"]) for t in task["inputs"]], [("a", "fp32"), ("b", "int64")])
        self.assertEqual(task["outputs"][0]["name"], "out")
        self.assertEqual(task["outputs"][0]["tolerance"], {"rtol": 1e-5, "atol": 1e-2, "atol_mode": "absolute"})
        self.assertEqual(task["inputs"][0]["distributions"][0]["kind"], "uniform")
        b = task["inputs"][1]["distributions"][0]
        self.assertEqual(b["kind"], "int_range")
        self.assertTrue(-5 <= b["low"] <= b["high"] <= 8)
        self.assertTrue(any("stand-in" in n for n in p["notes"]))

    def test_refusals(self):
        head = "import torch\n\ndef generate_input(size, seed):\n"
        cases = [
            ("def ref_kernel(data):\n    x, = data\n    return x.sum(1)\n\n" + head +
             "    return (torch.randn(size, 2 * size, device='cuda'),)\n",
             "reference.py:9: x dim 1 is 10, 18, 200000 across the entries: it equals none of their keys (size)"),
            ("def ref_kernel(data):\n    x, = data\n    return x + torch.rand_like(x)\n\n" + head +
             "    return (torch.randn(size),)\n", "reference.py:5: ref_kernel calls torch.rand_like (a random op)"),
            ("def ref_kernel(data):\n    a, c = data\n    c += a\n    return c\n\n" + head +
             "    return torch.randn(size), torch.randn(size)\n", "ref_kernel reads c, which generate_input preallocated"),
            ("def ref_kernel(data):\n    a, n = data\n    return a * n\n\n" + head +
             "    return torch.randn(size), 3\n", "generate_input(size=5, seed=1) returns an int as part 2 of the data"),
            ("def ref_kernel(data):\n    return data\n", "reference.py: defines no generate_input()"),
        ]
        for ref, words in cases:
            with self.subTest(words):
                rc, err, _, _ = Imported.get("gpumode", gm_folder("import torch\n\n" + ref), SMALL)
                self.assertEqual(rc, 2, err)
                self.assertEqual(err, "kernelforge_import: %s" % err.split("kernelforge_import: ", 1)[1])
                self.assertIn(words, err)
                self.assertEqual(err.count("\n"), 1)

    def test_sources_outside_the_problem_are_refused(self):
        # task.yml must not pull other files of the machine into the task (and so into a prompt).
        for source in ("/etc/hostname", "../../../etc/hostname"):
            files = [dict(f) for f in SPECS["vecadd_py"]["files"]] + [{"name": "notes.md", "source": source}]
            rc, err, _, _ = Imported.get("gpumode", os.path.join(GM, "vecadd_py"), dict(SPECS["vecadd_py"], files=files))
            self.assertEqual(rc, 2, err)
            self.assertIn("is outside the problem's folder and its parent", err)

    def test_lang_cu_is_refused(self):
        rc, err, _, _ = Imported.get("gpumode", os.path.join(GM, "vecadd_py"), dict(SPECS["vecadd_py"], lang="cu"))
        self.assertEqual(rc, 2)
        self.assertTrue(err.startswith("kernelforge_import: task.yml: lang: cu keeps the reference in C++"), err)


class Npy(unittest.TestCase):
    def test_every_dtype_round_trips_without_numpy(self):
        cases = [torch.randn(3, 5, dtype=torch.float64), torch.randn(7), torch.randn(2, 3, 4).half(),
                 torch.arange(-5, 5, dtype=torch.int64), torch.arange(6, dtype=torch.int32).reshape(2, 3),
                 torch.arange(-3, 3, dtype=torch.int16), torch.arange(-4, 4, dtype=torch.int8),
                 torch.arange(0, 200, 50, dtype=torch.uint8), torch.tensor([True, False, True]),
                 torch.tensor(2.5), torch.empty(0, 4), torch.randn(4, 6).t()]
        folder = tempfile.mkdtemp(dir=Imported.root)
        for i, t in enumerate(cases):
            with self.subTest(dtype=t.dtype, shape=tuple(t.shape)):
                path = os.path.join(folder, "%d.npy" % i)
                self.assertFalse(_npy.write(path, t))
                back, _ = read_npy(path)
                self.assertTrue(torch.equal(back, t.contiguous()))

    def test_bf16_is_written_upcast_to_f4(self):
        t = torch.randn(5, 3).bfloat16()
        path = os.path.join(tempfile.mkdtemp(dir=Imported.root), "b.npy")
        self.assertTrue(_npy.write(path, t))
        back, descr = read_npy(path)
        self.assertEqual(descr, "<f4")
        self.assertTrue(torch.equal(back.bfloat16(), t))

    def test_header_is_the_engine_writers(self):
        # engine/verify/Npy.cpp, npyHeaderBytes: the same dict text and padding.
        h = _npy.header("<f4", (3, 4))
        self.assertEqual((len(h) % 64, h[-1:]), (0, b"\n"))
        self.assertIn(b"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", h)
        self.assertIn(b"'shape': (7,), }", _npy.header("|b1", (7,)))
        self.assertIn(b"'shape': (), }", _npy.header("<f8", ()))


class CommandLine(unittest.TestCase):
    """As kforge starts it: PYTHONSAFEPATH=1, cwd a temp folder, PYTHONPATH the package."""

    def run_cli(self, args, pythonpath=PACKAGE):
        env = dict(os.environ, PYTHONSAFEPATH="1", PYTHONPATH=pythonpath, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-m", "kernelforge_import"] + args, cwd=tempfile.mkdtemp(dir=Imported.root),
                              env=env, capture_output=True, text=True, timeout=120)

    @staticmethod
    def phases(stderr):
        """The phase lines (_phase.py) and the other lines of stderr, apart."""
        lines = stderr.splitlines(keepends=True)
        phase = [x for x in lines if x.startswith("kernelforge_import: phase: ")]
        return phase, "".join(x for x in lines if x not in phase)

    def test_imports_a_problem(self):
        out = tempfile.mkdtemp(dir=Imported.root)
        r = self.run_cli(["kernelbench", os.path.join(KB, "ew_gelu_bias.py"), "--out", out, "--arch", "sm_80"])
        phases, rest = self.phases(r.stderr)
        self.assertEqual((r.returncode, rest), (0, ""))
        self.assertEqual(phases[0], "kernelforge_import: phase: problem: running the problem file's top-level code\n")
        self.assertEqual(phases[-1], "kernelforge_import: phase: importer: writing the proposal\n")
        with open(os.path.join(out, "proposal.json")) as f:
            self.assertEqual(json.load(f)["task"]["architectures"], ["sm_80"])

    def test_a_refusal_is_status_2_and_one_stderr_line(self):
        out = tempfile.mkdtemp(dir=Imported.root)
        r = self.run_cli(["kernelbench", os.path.join(KB, "rand_in_forward.py"), "--out", out])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(self.phases(r.stderr)[1], "kernelforge_import: rand_in_forward.py:8: forward calls torch.randn "
                                                   "(a random op): KernelForge needs a deterministic reference\n")
        self.assertFalse(os.path.exists(os.path.join(out, "proposal.json")))

    def test_a_crash_in_the_problem_follows_its_phase(self):
        r = self.run_cli(["kernelbench", os.path.join(HOSTILE, "segfault.py"), "--out", tempfile.mkdtemp(dir=Imported.root)])
        self.assertEqual(r.returncode, -signal.SIGSEGV, r.stderr)
        self.assertEqual(self.phases(r.stderr)[0][-1], "kernelforge_import: phase: problem: calling get_inputs()\n")

    def test_sys_exit_in_the_problem_is_a_refusal(self):
        problem = os.path.join(tempfile.mkdtemp(dir=Imported.root), "exits.py")
        with open(problem, "w") as f:
            f.write("import sys\nimport torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return x\n\n\ndef get_inputs():\n    sys.exit(5)\n")
        r = self.run_cli(["kernelbench", problem, "--out", tempfile.mkdtemp(dir=Imported.root)])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(self.phases(r.stderr)[1],
                         "kernelforge_import: exits.py: the problem's code called sys.exit(5) while calling get_inputs()\n")

    def test_no_torch_is_status_3(self):
        fake = tempfile.mkdtemp(dir=Imported.root)
        with open(os.path.join(fake, "torch.py"), "w") as f:
            f.write("raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
        r = self.run_cli(["kernelbench", os.path.join(KB, "ew_gelu_bias.py"), "--out", tempfile.mkdtemp(dir=Imported.root)],
                         pythonpath=fake + os.pathsep + PACKAGE)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stderr, "kernelforge_import: torch cannot be imported (libtorch_cpu.so: cannot open shared "
                                   "object file)\n")


if __name__ == "__main__":
    unittest.main()
