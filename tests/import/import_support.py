"""Helpers of test_import.py: the specs kforge would hand over, a .npy reader without NumPy, the
importer run in this process (each fixture once), and the checks every proposal must pass."""

import ast
import contextlib
import io
import json
import math
import os
import shutil
import tempfile
import textwrap
import unittest
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
warnings.filterwarnings("ignore", message="`torch.jit.load` is deprecated")
import torch  # noqa: E402

from kernelforge_import.__main__ import main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "import")
KB = os.path.join(DATA, "kernelbench")
GM = os.path.join(DATA, "gpumode")
PACKAGE = os.path.join(ROOT, "device", "agent", "python")

# The task.yml files as kforge hands them over (--spec): written out here, since this venv has no
# YAML reader; the task.yml files stay the source of truth for the C++ tests.
FILES = [{"name": "submission.py", "source": "@SUBMISSION@"}, {"name": "task.py", "source": "task.py"},
         {"name": "utils.py", "source": "../utils.py"}, {"name": "reference.py", "source": "reference.py"}]
SPECS = {
    "vecadd_py": {
        "files": FILES, "lang": "py",
        "description": "Adds two fp16 vectors element by element.\n\nThe submission returns a new tensor.\n",
        "config": {"main": "eval.py"},
        "tests": [{"size": 127, "seed": 11}, {"size": 1000, "seed": 12}, {"size": 4099, "seed": 13}],
        "benchmarks": [{"size": 1048576, "seed": 21}, {"size": 67108864, "seed": 22}],
        "test_timeout": 60, "ranking_by": "geom"},
    "rowmax_py": {
        "files": FILES, "lang": "py", "description": "The largest value of every row of a float32 matrix.\n",
        "tests": [{"rows": 1, "cols": 33, "seed": 1}, {"rows": 7, "cols": 500, "seed": 2},
                  {"rows": 129, "cols": 1023, "seed": 3}, {"rows": 4096, "cols": 2048, "seed": 4}],
        "benchmarks": [{"rows": 8192, "cols": 8192, "seed": 5}]},
    "gemm_prealloc_py": {
        "files": FILES, "lang": "py",
        "description": "c = a @ b in float32, written into the c that generate_input allocates.\n",
        "tests": [{"m": 1, "n": 5, "k": 3, "seed": 7}, {"m": 17, "n": 33, "k": 65, "seed": 8},
                  {"m": 100, "n": 36, "k": 129, "seed": 9}],
        "benchmarks": [{"m": 4096, "n": 4096, "k": 1024, "seed": 10}]},
    "custom_check_py": {
        "files": FILES, "lang": "py", "description": "Softmax over the last dimension of a batch of float32 rows.",
        "tests": [{"batch": 3, "dim": 17, "seed": 31}, {"batch": 16, "dim": 1000, "seed": 32}],
        "benchmarks": [{"batch": 4096, "dim": 4096, "seed": 33}]},
}

DESCRS = {"<f8": torch.float64, "<f4": torch.float32, "<f2": torch.float16, "<i8": torch.int64, "<i4": torch.int32,
          "<i2": torch.int16, "|i1": torch.int8, "|u1": torch.uint8, "|b1": torch.bool}
TOP_KEYS = {"schema_version", "format", "torch_version", "task", "originals", "samples", "notes"}
TASK_KEYS = {"schema_version", "name", "description", "architectures", "parameters", "symbols", "constraints",
             "inputs", "outputs", "shapes", "reference", "compile", "cost"}


def read_npy(path):
    """(tensor, descr) of a .npy file in the layout docs/tensor-files.md describes."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x93NUMPY\x01\x00", path
    n = int.from_bytes(data[8:10], "little")
    text = data[10:10 + n].decode("latin1")
    assert (10 + n) % 64 == 0 and text.endswith("\n"), "header of %s is not padded to 64 bytes" % path
    header = ast.literal_eval(text)
    assert set(header) == {"descr", "fortran_order", "shape"} and header["fortran_order"] is False
    dtype, shape = DESCRS[header["descr"]], tuple(header["shape"])
    body = data[10 + n:]
    size = torch.empty((), dtype=dtype).element_size()
    assert len(body) == math.prod(shape) * size, "%s holds %d bytes for %s" % (path, len(body), shape)
    flat = torch.frombuffer(bytearray(body), dtype=dtype) if body else torch.empty(0, dtype=dtype)
    return flat.reshape(shape), header["descr"]


def load_pt(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # torch 2.11 deprecates torch.jit
        return torch.jit.load(path, **kw)


def run_main(args):
    """(exit status, stderr) of __main__.main in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(args)
    return rc, err.getvalue()


class Imported:
    """Each fixture imported once; tests share the results."""
    root = None
    cache = {}

    @classmethod
    def get(cls, fmt, name, *extra):
        key = (fmt, name) + tuple(json.dumps(e, sort_keys=True) if isinstance(e, dict) else e for e in extra)
        if key not in cls.cache:
            out = tempfile.mkdtemp(dir=cls.root)
            if fmt == "kernelbench":
                args = ["kernelbench", os.path.join(KB, name + ".py"), "--out", out] + list(extra)
            else:
                spec = os.path.join(out, "..", os.path.basename(out) + ".spec.json")
                with open(spec, "w") as f:
                    json.dump(extra[0] if extra else SPECS[name], f)
                folder = name if os.path.isabs(name) else os.path.join(GM, name)
                args = ["gpumode", folder, "--spec", spec, "--out", out]
            rc, err = run_main(args)
            proposal = None
            if rc == 0:
                with open(os.path.join(out, "proposal.json")) as f:
                    proposal = json.load(f)
            cls.cache[key] = (rc, err, out, proposal)
        return cls.cache[key]


def start():
    Imported.root = tempfile.mkdtemp(prefix="kf-import-test-")


def finish():
    shutil.rmtree(Imported.root, ignore_errors=True)


class ProposalChecks(unittest.TestCase):
    def imported(self, fmt, name, *extra):
        rc, err, out, proposal = Imported.get(fmt, name, *extra)
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")
        self.check_proposal(out, proposal, fmt)
        return proposal, out

    def refused(self, fmt, name, *words, line=None):
        rc, err, _, _ = Imported.get(fmt, name)
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertTrue(err.startswith("kernelforge_import: "), err)
        for w in words:
            self.assertIn(w, err)
        if line is not None:
            self.assertRegex(err, r"^kernelforge_import: [\w.]+:%d: " % line)
        return err

    def check_proposal(self, out, p, fmt):
        """What kforge's strict reader needs: the keys, every binding inside its symbols' ranges, and
        samples that reference.pt reproduces."""
        self.assertEqual(set(p), TOP_KEYS)
        self.assertEqual((p["schema_version"], p["format"], p["torch_version"]), (1, fmt, torch.__version__))
        task = p["task"]
        self.assertLessEqual(set(task), TASK_KEYS)
        self.assertNotIn("candidates", task)
        self.assertRegex(task["name"], r"^[A-Za-z0-9_-]+$")
        syms = task["symbols"]
        for t in task["inputs"] + task["outputs"]:
            self.assertTrue(t["name"].isidentifier())
            for d in t["shape"]:
                self.assertTrue(isinstance(d, int) and d >= 0 or d in syms, (t["name"], d))
        names = [t["name"] for t in task["inputs"] + task["outputs"]]
        self.assertEqual(len(names), len(set(names)))
        self.assertFalse(set(names) & set(syms))
        self.assertEqual(task["reference"], {"torchscript": "reference.pt", "inputs": [t["name"] for t in task["inputs"]]})
        bindings = task["shapes"]["tests"] + task["shapes"]["benchmarks"]
        self.assertGreaterEqual(len(task["shapes"]["tests"]), 1)
        for b in bindings:
            self.assertEqual(set(b) - {"label"}, set(syms), b)
            for s, r in syms.items():
                self.assertTrue(r["min"] <= b[s] <= r["max"], (s, b))
                self.assertEqual(b[s] % r.get("multiple_of", 1), 0)
        for o in p["originals"]:
            self.assertTrue(os.path.isfile(os.path.join(out, "originals", o)), o)
        self.assertLessEqual(len(p["samples"]), 2)
        self.assertGreaterEqual(len(p["samples"]), 1)
        reference = load_pt(os.path.join(out, "reference.pt"))
        # Every tensor the reference reads is a task input: no parameter or buffer stays inside.
        self.assertEqual(list(reference.parameters()) + list(reference.buffers()), [])
        self.assertEqual(len(list(reference.graph.inputs())), 1 + len(task["inputs"]))
        dtypes = {"fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
                  "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}
        for s in p["samples"]:
            self.assertLessEqual(set(s), {"label", "shape", "inputs", "expected", "upcast"})
            self.assertIn(s["label"], [b["label"] for b in task["shapes"]["tests"]])
            upcast = set(s.get("upcast", []))
            xs = []
            for t in task["inputs"]:
                x, _ = read_npy(os.path.join(out, s["inputs"][t["name"]]))
                self.assertEqual(list(x.shape), [s["shape"][d] if isinstance(d, str) else d for d in t["shape"]])
                xs.append(x.to(dtypes[t["dtype"]]) if t["name"] in upcast else x)
            with torch.no_grad():
                got = reference(*xs)
            got = list(got) if isinstance(got, (tuple, list)) else [got]
            self.assertEqual(len(got), len(task["outputs"]))
            for t, g in zip(task["outputs"], got):
                e, descr = read_npy(os.path.join(out, s["expected"][t["name"]]))
                self.assertEqual(list(e.shape), [s["shape"][d] if isinstance(d, str) else d for d in t["shape"]])
                if t["name"] in upcast:
                    self.assertEqual((t["dtype"], descr), ("bf16", "<f4"))
                    e = e.to(torch.bfloat16)
                self.assertEqual(g.dtype, dtypes[t["dtype"]])
                tol = t.get("tolerance", {"rtol": 0, "atol": 0})
                torch.testing.assert_close(g, e, rtol=tol["rtol"], atol=tol["atol"], equal_nan=True)

    def sample(self, out, p, index=0):
        """The sample's inputs (bf16 restored) in the task's order, and its expected outputs."""
        s, task = p["samples"][index], p["task"]
        upcast = set(s.get("upcast", []))

        def load(role, t):
            x, _ = read_npy(os.path.join(out, s[role][t["name"]]))
            return x.to(torch.bfloat16) if t["name"] in upcast else x
        return [load("inputs", t) for t in task["inputs"]], [load("expected", t) for t in task["outputs"]]


def write_problem(text, name="problem.py"):
    """A KernelBench problem file with ``text`` in a folder of its own."""
    folder = tempfile.mkdtemp(dir=Imported.root)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return path
