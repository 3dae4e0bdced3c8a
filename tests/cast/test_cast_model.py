"""Models in a .cast package, run by the Python runtime without a GPU (CTest cast_model_python).

tst_cast exports model.cast: the fixture kernels (vector_add fp32, fused_add_rms_norm_fp16) and
two toy models from make_toy_models.py (toy16: embedding -> add -> RMSNorm -> linear -> GELU ->
softmax in fp16 with an input description; toy32: the same in fp32 with its sample inputs). On
CPU a cast:: op runs its reference ops, so a substituted model must equal the original exactly.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings
import zipfile

import torch
from torch._subclasses.fake_tensor import FakeTensor

import kernelforge_cast
from kernelforge_cast import _model
from kernelforge_cast._run import KernelFailure

PACKAGE = os.environ.get("KF_CAST_MODEL_PACKAGE", "")
MODELS = os.environ.get("KF_CAST_MODELS", "")
KFORGE = os.environ.get("KF_KFORGE_BIN", "")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def rewrite(src, dst, edit):
    """Copies package ``src`` to ``dst`` with ``edit(name, bytes) -> bytes`` applied to each entry."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, edit(info.filename, zin.read(info.filename)))


def rewrite_model(src, dst, model, edit_inner):
    """Copies package ``src`` to ``dst`` with the model archive ``model`` rewritten by
    ``edit_inner(entries: list of (name, bytes)) -> list``, its hash in the manifest fixed up as a
    forger would (a package is integrity-checked, not signed: the model rules must hold anyway)."""
    import hashlib
    import io
    with zipfile.ZipFile(src) as zin:
        entries = [(i.filename, zin.read(i.filename)) for i in zin.infolist()]
    files = dict(entries)
    with zipfile.ZipFile(io.BytesIO(files[model])) as inner:
        inner_entries = edit_inner([(i.filename, inner.read(i.filename)) for i in inner.infolist()])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in inner_entries:
            out.writestr(name, data)
    files[model] = buf.getvalue()
    manifest = json.loads(files["manifest.json"])
    for f in manifest["files"]:
        if f["path"] == model:
            f["sha256"] = hashlib.sha256(files[model]).hexdigest()
            f["bytes"] = len(files[model])
    files["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name, _ in entries:
            zout.writestr(name, files[name])


def by_node(report):
    return {r["node"]: r for r in report}


@unittest.skipUnless(PACKAGE and os.path.exists(PACKAGE), "needs the model package tst_cast exports (KF_CAST_MODEL_PACKAGE)")
class ModelPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        warnings.simplefilter("ignore", RuntimeWarning)   # "CPU tensors run the reference ops", said once
        cls.pkg = kernelforge_cast.load(PACKAGE)
        cls.tmp = tempfile.mkdtemp(prefix="kf-model-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_fp16_substitutes_exactly_the_fused_add_rms_norm(self):
        ev = self.pkg.run_model("toy16", device="cpu", runs=2, warmup=1, check=True)
        sites = by_node(ev["substitution"])
        self.assertEqual(sites["add"]["status"], "substituted")
        self.assertEqual(sites["add"]["cast_op"], "fused_add_rms_norm_fp16")
        self.assertEqual(sites["rms_norm"]["cast_op"], "fused_add_rms_norm_fp16")
        self.assertEqual(sites["gelu"]["status"], "kept")
        self.assertIn("no packaged kernel implements gelu", sites["gelu"]["reason"])
        self.assertEqual(sites["softmax"]["status"], "kept")
        self.assertEqual(len(ev["substitution"]), 4)   # linear and embedding are no catalog op's
        self.assertEqual(ev["scope"], "model-level, end to end")
        self.assertGreater(ev["speedup"], 0)
        self.assertEqual(ev["check"]["fp64"], "ran")
        for out in ev["check"]["outputs"]:
            self.assertEqual(out["kernels_vs_original"]["max_abs"], 0.0)   # reference ops on CPU
            self.assertLess(out["original_vs_fp64"]["max_abs"], 1e-2)
        _model.check_model_run(ev, "", "toy16", lambda p, why: self.fail("%s: %s" % (p, why)))

    def test_fp32_keeps_every_site_with_its_reason(self):
        ev = self.pkg.run_model("toy32", device="cpu", runs=2, warmup=0)
        sites = by_node(ev["substitution"])
        self.assertTrue(all(r["status"] == "kept" for r in ev["substitution"]))
        self.assertIn("a has 2 dimension(s), the kernel takes 1", sites["add"]["reason"])
        self.assertIn("x is fp32, the kernel takes fp16", sites["rms_norm"]["reason"])

    def test_no_kernels_equals_the_original_model(self):
        from make_toy_models import Toy
        torch.manual_seed(0)
        original = Toy(torch.float16).eval()
        entry, program = _model.open_model(self.pkg.manifest, self.pkg.files, "toy16")
        args, kwargs = _model.make_inputs(entry, self.pkg.files, program, torch.device("cpu"), seed=3)
        self.assertEqual(args[0].dtype, torch.int64)
        self.assertTrue(bool((args[0] >= 0).all()) and bool((args[0] < 96).all()))
        want = original(*args)
        got = program.module()(*args)
        substituted, _ = self.pkg.substitute(program.module())
        for w, g, s in zip(want, got, substituted(*args)):
            self.assertTrue(torch.equal(w, g))
            self.assertTrue(torch.equal(w, s))
        ev = self.pkg.run_model("toy16", device="cpu", runs=1, warmup=0, kernels=False)
        self.assertNotIn("with_kernels_ms", ev)
        self.assertIsNone(ev["speedup"])
        self.assertTrue(all(r["status"] == "kept" for r in ev["substitution"]))
        self.assertIn("--no-kernels (cast::fused_add_rms_norm_fp16 would run here)", by_node(ev["substitution"])["add"]["reason"])

    def test_a_kernel_that_raises_is_an_error_unless_fallback_is_allowed(self):
        op = self.pkg.op("fused_add_rms_norm_fp16")
        real_bind = op.bind

        def failing_bind(tensors, check_ranges=True):   # a fault injected by this test, at run time only
            if check_ranges and not any(isinstance(t, FakeTensor) or t.device.type == "meta" for t in tensors):
                raise RuntimeError("injected launch failure")
            return real_bind(tensors, check_ranges)

        op.bind = failing_bind
        try:
            with self.assertRaises(KernelFailure) as e:
                self.pkg.run_model("toy16", device="cpu", runs=2, warmup=1)
            self.assertIn("cast::fused_add_rms_norm_fp16 raised", str(e.exception))
            self.assertIn("--allow-fallback", str(e.exception))
            said = []
            ev = self.pkg.run_model("toy16", device="cpu", runs=3, warmup=2, allow_fallback=True, warn=said.append)
        finally:
            del op.bind
        self.assertEqual(ev["fallbacks"], {"fused_add_rms_norm_fp16": 5})   # every pass, counted
        self.assertEqual(len(said), 1)                                     # said once
        self.assertIn("injected launch failure", said[0])

    def test_cli_prints_and_writes_the_evidence(self):
        evidence = os.path.join(self.tmp, "run.json")
        r = subprocess.run([sys.executable, "-m", "kernelforge_cast", "run", PACKAGE, "--device", "cpu", "--runs", "2",
                            "--check", "--evidence", evidence], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        for text in ("substitution: 2 of 4 candidate call sites run packaged kernels", "end-to-end speedup",
                     "model-level, end to end", "fallbacks: none", "check (fp64 reference: ran)"):
            self.assertIn(text, r.stdout)
        with open(evidence) as f:
            ev = json.load(f)
        _model.check_model_run(ev, "", "toy16", lambda p, why: self.fail("%s: %s" % (p, why)))
        r = subprocess.run([sys.executable, "-m", "kernelforge_cast", "run", PACKAGE, "--model", "nope", "--device", "cpu"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no model 'nope'", r.stderr)

    def test_tampered_model_packages_are_refused(self):
        cases = {
            "weights": (lambda n, b: b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 0x40]) + b[len(b) // 2 + 1:]
                        if n == "models/toy16/model.pt2" else b, "does not match its SHA-256"),
            "missing op": (lambda n, b: json.dumps(self._uses(json.loads(b), "flash_attention")).encode()
                           if n == "manifest.json" else b, "cast::flash_attention, which this package does not hold"),
        }
        for name, (edit, message) in cases.items():
            with self.subTest(name):
                path = os.path.join(self.tmp, name + ".cast")
                rewrite(PACKAGE, path, edit)
                with self.assertRaises(kernelforge_cast.PackageError) as e:
                    kernelforge_cast.load(path)
                self.assertIn(message, str(e.exception))

    @unittest.skipUnless(KFORGE and os.path.exists(os.path.join(os.path.dirname(KFORGE), "kforge-cast")),
                         "needs kforge and kforge-cast (LibTorch)")
    def test_kforge_runs_a_torchscript_model_in_the_cpp_runtime(self):
        evidence = os.path.join(self.tmp, "ts.json")
        r = subprocess.run([KFORGE, "cast", "run", PACKAGE, "--model", "toy16ts", "--device", "cpu", "--runs", "2",
                            "--check", "--json"], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        ev = json.loads(r.stdout)
        _model.check_model_run(ev, "", "toy16ts", lambda p, why: self.fail("%s: %s" % (p, why)))
        self.assertTrue(ev["runtime"].startswith("kf_cast (LibTorch"))
        self.assertEqual(sorted((s["op"], s["status"]) for s in ev["substitution"]),
                         [("add", "substituted"), ("gelu", "kept"), ("rms_norm", "substituted"), ("softmax", "kept")])
        # The same model through the Python runtime's torch.export program gives the same errors against fp64.
        py = self.pkg.run_model("toy16", device="cpu", runs=1, warmup=0, check=True)
        for a, b in zip(ev["check"]["outputs"], py["check"]["outputs"]):
            self.assertEqual(a["kernels_vs_original"]["max_abs"], 0.0)
            self.assertAlmostEqual(a["original_vs_fp64"]["max_abs"], b["original_vs_fp64"]["max_abs"], places=6)
        del evidence

    def test_model_files_that_would_run_code_are_refused(self):
        top = lambda es: es[0][0].split("/")[0] + "/"  # noqa: E731
        cases = {
            # torch.export.load unpickles data/weights/model.pt (falling back to weights_only=False) when present
            "legacy pickled weights": (lambda es: es + [(top(es) + "data/weights/model.pt", b"\x80\x04K*.")],
                                       "not part of a torch.export program"),
            "a pickled payload": (lambda es: [(n, d.replace(b'"use_pickle": false', b'"use_pickle": true', 1)
                                               if n.endswith("model_weights_config.json") else d) for n, d in es],
                                  "is stored as a pickle"),
            "the weights config twice": (lambda es: es + [e for e in es if e[0].endswith("model_weights_config.json")],
                                         "appears twice"),
            "native code": (lambda es: es + [(top(es) + "data/aotinductor/model/model.so", b"\x7fELF")],
                            "not accepted"),
            # A config that names the legacy file, so that the allow-list would let it through.
            "a config blessing the legacy pickle": (
                lambda es: [(n, d.replace(b'"path_name": "weight_0"', b'"path_name": "model.pt"', 1)
                             if n.endswith("model_weights_config.json") else d) for n, d in es]
                + [(top(es) + "data/weights/model.pt", b"\x80\x04K*.")],
                "names the payload 'model.pt'"),
        }
        for name, (edit, message) in cases.items():
            with self.subTest(name):
                path = os.path.join(self.tmp, name.replace(" ", "_") + ".cast")
                rewrite_model(PACKAGE, path, "models/toy16/model.pt2", edit)
                with self.assertRaises(kernelforge_cast.PackageError) as e:
                    kernelforge_cast.load(path)
                self.assertIn(message, str(e.exception))
                if KFORGE and os.path.exists(KFORGE):   # the C++ reader refuses it too
                    r = subprocess.run([KFORGE, "cast", "check", path], capture_output=True, text=True, timeout=60)
                    self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                    self.assertIn(message, r.stderr)

    @staticmethod
    def _uses(manifest, op):
        manifest["models"][0]["uses"].append(op)
        return manifest

    @unittest.skipUnless(KFORGE and os.path.exists(KFORGE), "needs kforge (KF_KFORGE_BIN)")
    def test_kforge_runs_and_records_the_model(self):
        path = os.path.join(self.tmp, "recorded.cast")
        shutil.copy(PACKAGE, path)
        r = subprocess.run([KFORGE, "cast", "run", path, "--device", "cpu", "--runs", "2", "--record"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("recorded this run", r.stderr)
        r = subprocess.run([KFORGE, "cast", "inspect", path], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("model run (model-level, end to end)", r.stdout)
        self.assertIn("2 of 4", r.stdout)
        self.assertEqual(len(kernelforge_cast.load(path).models[0]["runs"]), 1)


if __name__ == "__main__":
    unittest.main()
