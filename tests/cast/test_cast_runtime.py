"""The Python runtime of .cast packages (device/cast/python/kernelforge_cast), without a GPU.

Loads the package tst_cast exported (KF_CAST_FIXTURE), registers its ops, runs them on CPU
tensors (their reference ops), checks every argument check, traces them with fake tensors and
under torch.compile, and refuses crafted hostile archives (the same cases `kforge cast check`
refuses, so both readers are held to one set). Run by CTest as cast_python.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
import warnings
import zipfile

import torch

import kernelforge_cast
import kernelforge_cast._archive
from kernelforge_cast import PackageError, choose_image
from kernelforge_cast._expr import ExprError, evaluate

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.environ.get("KF_CAST_FIXTURE", "")
KFORGE = os.environ.get("KF_KFORGE_BIN", "")


def fixture_entries():
    with zipfile.ZipFile(FIXTURE) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def write_zip(path, entries, modes=None):
    modes = modes or {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names; that is the point
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in entries:
                info = zipfile.ZipInfo(name)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3
                info.external_attr = (modes.get(name, stat.S_IFREG | 0o644)) << 16
                z.writestr(info, data)


class ExpressionVectors(unittest.TestCase):
    def test_the_shared_vectors(self):
        with open(os.path.join(HERE, "expr-vectors.json")) as f:
            vectors = json.load(f)
        self.assertGreaterEqual(len(vectors), 20)
        for v in vectors:
            with self.subTest(v["text"]):
                if v.get("error"):
                    with self.assertRaises(ExprError):
                        evaluate(v["tree"], v["env"])
                else:
                    got = evaluate(v["tree"], v["env"])
                    self.assertEqual(type(got), type(v["value"]))
                    self.assertEqual(got, v["value"])


class ImageChoice(unittest.TestCase):
    def test_rows(self):
        full = {"sm_80", "sm_86", "sm_89", "sm_90", "compute_80"}
        rows = [
            (full, (9, 0), "sm_90"),
            (full, (8, 7), "sm_86"),    # same major, lower minor
            (full, (8, 0), "sm_80"),
            (full, (10, 0), "compute_80"),  # a later major: only PTX reaches it
            ({"sm_80", "compute_80"}, (9, 0), "compute_80"),
            (full, (7, 5), None),
            ({"sm_90"}, (10, 0), None),
        ]
        for images, (major, minor), want in rows:
            with self.subTest(images=sorted(images), cc=(major, minor)):
                arch, reason = choose_image(images, major, minor)
                self.assertEqual(arch, want, reason)
                if want is None:
                    self.assertIn("no image for sm_%d%d" % (major, minor), reason)


@unittest.skipUnless(FIXTURE and os.path.exists(FIXTURE), "needs the package tst_cast exports (KF_CAST_FIXTURE)")
class LoadedPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ops = kernelforge_cast.load(FIXTURE)

    def test_registers_every_op(self):
        self.assertEqual(sorted(self.ops.names), ["fused_add_rms_norm_fp16", "vector_add"])
        self.assertTrue(hasattr(torch.ops.cast, "vector_add"))
        info = self.ops.info()
        self.assertEqual(info["vector_add"]["schema"], "vector_add(Tensor a, Tensor b) -> Tensor")
        self.assertIn("compute_80", info["vector_add"]["images"])
        self.assertGreater(info["vector_add"]["evidence"]["geomean_speedup"], 1.25)
        self.assertIn("vector_add", repr(self.ops))
        with self.assertRaises(AttributeError):
            self.ops.softmax

    def test_loading_again_returns_the_same_ops(self):
        again = kernelforge_cast.load(FIXTURE)
        self.assertIs(again.op("vector_add"), self.ops.op("vector_add"))

    def test_cpu_runs_the_reference_and_says_so_once(self):
        a, b = torch.randn(1000), torch.randn(1000)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = self.ops.vector_add(a, b)
            c2 = torch.ops.cast.vector_add(a, b)
        self.assertTrue(torch.equal(c, a + b))
        self.assertTrue(torch.equal(c2, a + b))
        cpu_warnings = [w for w in caught if "reference ops" in str(w.message)]
        self.assertLessEqual(len(cpu_warnings), 1)

        x = torch.randn(5, 97).half()
        r = torch.randn(5, 97).half()
        w = torch.randn(97).half()
        y, h = self.ops.fused_add_rms_norm_fp16(x, r, w)
        h_ref = x + r
        y_ref = torch.nn.functional.rms_norm(h_ref, [97], w, 1e-6)
        self.assertTrue(torch.equal(h, h_ref))
        self.assertTrue(torch.equal(y, y_ref))
        self.assertEqual((y.dtype, y.shape), (torch.float16, (5, 97)))

    def test_arguments_are_checked_and_named(self):
        f = torch.ops.cast.vector_add
        rows = [
            ((torch.randn(8).half(), torch.randn(8).half()), "argument 'a' is torch.float16"),
            ((torch.randn(8), torch.randn(9)), "argument 'b' has N=9 at dim 0, but 'a' gave N=8"),
            ((torch.randn(2, 4), torch.randn(2, 4)), "argument 'a' has 2 dimension(s)"),
            ((torch.randn(0), torch.randn(0)), "N=0 (from argument 'a') is outside the range"),
        ]
        for args, message in rows:
            with self.subTest(message):
                with self.assertRaises(Exception) as ctx:
                    f(*args)
                self.assertIn(message, str(ctx.exception))
                self.assertIn("cast::vector_add", str(ctx.exception))
        g = torch.ops.cast.fused_add_rms_norm_fp16
        with self.assertRaises(Exception) as ctx:
            g(torch.randn(3, 8).half(), torch.randn(3, 8).half(), torch.randn(9).half())
        self.assertIn("argument 'w' has D=9", str(ctx.exception))

    def test_fake_tensors_propagate_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            x = torch.empty(7, 4099, dtype=torch.float16, device="cpu")
            w = torch.empty(4099, dtype=torch.float16)
            y, h = torch.ops.cast.fused_add_rms_norm_fp16(x, x, w)
            self.assertEqual((tuple(y.shape), y.dtype), ((7, 4099), torch.float16))
            self.assertEqual(tuple(h.shape), (7, 4099))

    def test_torch_compile_traces_through_the_op(self):
        def block(x, r, w, bias):
            y, h = torch.ops.cast.fused_add_rms_norm_fp16(x, r, w)
            return torch.ops.cast.vector_add(y.float().flatten(), bias), h

        compiled = torch.compile(block, fullgraph=True, backend="aot_eager", dynamic=True)
        for rows in (3, 5):
            x, r = torch.randn(rows, 64).half(), torch.randn(rows, 64).half()
            w, bias = torch.randn(64).half(), torch.randn(rows * 64)
            got = compiled(x, r, w, bias)
            want = block(x, r, w, bias)
            self.assertTrue(torch.equal(got[0], want[0]))
            self.assertTrue(torch.equal(got[1], want[1]))

    def test_opcheck(self):
        a, b = torch.randn(33), torch.randn(33)
        torch.library.opcheck(torch.ops.cast.vector_add.default, (a, b),
                              test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))

    def test_kernels_false_in_a_fresh_process(self):
        code = ("import warnings, torch, kernelforge_cast\n"
                "with warnings.catch_warnings(record=True) as w:\n"
                "    warnings.simplefilter('always')\n"
                "    ops = kernelforge_cast.load(%r, kernels=False)\n"
                "assert any('kernels=False' in str(x.message) for x in w), [str(x.message) for x in w]\n"
                "a = torch.arange(5.0)\n"
                "assert torch.equal(ops.vector_add(a, a), a + a)\n"
                "print(ops.op('vector_add').image_used() if torch.cuda.is_available() else 'cpu')\n" % FIXTURE)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)


@unittest.skipUnless(FIXTURE and os.path.exists(FIXTURE), "needs the package tst_cast exports (KF_CAST_FIXTURE)")
class HostileArchives(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.good = fixture_entries()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def manifest(self):
        return json.loads(self.good[0][1])

    def rows(self):
        m = self.good[0]
        newer = self.manifest()
        newer["schema_version"] = 3
        changed = list(self.good)
        i = next(k for k, (n, _) in enumerate(changed) if n.endswith("vector_add/bin/sm_90.cubin"))
        name, data = changed[i]
        changed[i] = (name, data[:100] + bytes([data[100] ^ 1]) + data[101:])
        def edited(edit):
            mm = self.manifest()
            edit(mm)
            return [("manifest.json", json.dumps(mm).encode())] + self.good[1:]

        deep_text = self.good[0][1].replace(b'"gates": [', b'"gates": ' + b"[" * 100000 + b"]" * 100000 + b', "x": [', 1)

        tampered = [
            ("launch arg names another buffer", edited(lambda mm: mm["ops"][0]["launches"][0]["args"].__setitem__(
                0, {"tensor": "elsewhere"})), {}, "not an input, output or scratch buffer", "/ops/0/launches/0/args/0/tensor"),
            ("unknown symbol", edited(lambda mm: mm["ops"][0]["launches"][0]["grid"].__setitem__(
                0, {"text": "Q", "tree": {"sym": "Q"}})), {}, "neither a symbol nor a parameter", "/tree/sym"),
            ("unknown key", edited(lambda mm: mm["ops"][0].__setitem__("preload", "os.system")), {}, "unknown key",
             "/ops/0/preload"),
            ("schema edited", edited(lambda mm: mm["ops"][0].__setitem__("schema", "vector_add(Tensor a) -> Tensor")),
             {}, "the inputs and outputs make", "/ops/0/schema"),
            ("image outside the package", edited(lambda mm: mm["ops"][0]["images"].__setitem__("sm_90", "/usr/lib/x.cubin")),
             {}, "not a file of the package", "/ops/0/images/sm_90"),
            ("unknown operator", edited(lambda mm: mm["ops"][0]["launches"][0]["grid"].__setitem__(
                0, {"text": "N", "tree": {"op": "**", "args": [{"sym": "N"}, {"int": 2}]}})), {},
             "not an operator of the expression language", "/tree/op"),
            ("integer beyond 64 bits", edited(lambda mm: mm["ops"][0]["launches"][0]["grid"].__setitem__(
                0, {"text": "N", "tree": {"int": 2 ** 70}})), {}, "64-bit integer", "/tree/int"),
            ("symbol named like a parameter", edited(lambda mm: mm["ops"][0]["parameters"].__setitem__("N", 3)), {},
             "names a parameter and also a symbol", "/parameters/N"),
            ("two ops with one name", edited(lambda mm: mm["ops"][1].__setitem__("name", "vector_add")), {},
             "two ops are named", "/ops/1/name"),
            ("nested 100000 levels", [("manifest.json", deep_text)] + self.good[1:], {}, "nested", "manifest.json"),
            ("a key twice", [("manifest.json", self.good[0][1].replace(b'"format"', b'"format": "x", "format"', 1))]
             + self.good[1:], {}, "appears twice", "manifest.json"),
        ]
        return tampered + [
            ("parent folder", [m, ("ops/../../etc/passwd", b"x")], {}, "climbs out of the package", "ops/../../etc/passwd"),
            ("absolute path", [m, ("/etc/passwd", b"x")], {}, "absolute path", "/etc/passwd"),
            ("backslash", [m, ("ops\\..\\x", b"x")], {}, "backslash", "ops\\..\\x"),
            ("symbolic link", [m, ("ops/link", b"/etc/passwd")], {"ops/link": stat.S_IFLNK | 0o777},
             "symbolic link", "ops/link"),
            ("duplicate name", [m, ("ops/a", b"1"), ("ops/a", b"2")], {}, "appears twice", "ops/a"),
            ("name in other case", [m, ("MANIFEST.JSON", b"{}")], {}, "only in case", "MANIFEST.JSON"),
            ("zip bomb", [m, ("ops/zeros.bin", bytes(64 << 20))], {}, "zip bomb", "ops/zeros.bin"),
            ("hash mismatch", changed, {}, "does not match its SHA-256", name),
            ("unlisted file", self.good + [("ops/vector_add/extra.so", b"\x7fELF")], {}, "does not list",
             "ops/vector_add/extra.so"),
            ("newer schema", [("manifest.json", json.dumps(newer).encode())] + self.good[1:], {},
             "upgrade kernelforge-cast", "schema_version"),
            ("manifest not first", [self.good[1], m] + self.good[2:], {}, "first entry is not manifest.json",
             self.good[1][0]),
        ]

    def test_each_is_refused_naming_the_entry(self):
        for label, entries, modes, message, entry in self.rows():
            with self.subTest(label):
                path = os.path.join(self.dir, label.replace(" ", "_") + ".cast")
                write_zip(path, entries, modes)
                with self.assertRaises(PackageError) as ctx:
                    kernelforge_cast.load(path)
                self.assertIn(message, str(ctx.exception))
                self.assertIn(entry, str(ctx.exception))
                if KFORGE:
                    r = subprocess.run([KFORGE, "cast", "check", path], capture_output=True, text=True, timeout=120)
                    self.assertEqual(r.returncode, 1, label + ": " + r.stdout + r.stderr)

    def test_not_a_zip(self):
        path = os.path.join(self.dir, "garbage.cast")
        with open(path, "wb") as f:
            f.write(b"x" * 1000)
        with self.assertRaises(PackageError) as ctx:
            kernelforge_cast.load(path)
        self.assertIn("not a readable zip archive", str(ctx.exception))


# Loads PATH in a child with 512 MiB more address space than it starts with: an unbounded read of
# /dev/zero fails there (MemoryError) instead of filling the machine.
_BOUNDED_LOAD = """
import resource, sys
import kernelforge_cast
with open("/proc/self/status") as f:
    vm = next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))
try:
    kernelforge_cast.load(sys.argv[1])
except kernelforge_cast.PackageError as e:
    print("refused:", e)
    sys.exit(0)
print("loaded")
"""


class SpecialFiles(unittest.TestCase):
    """A package path that is no regular file is refused by name before a byte is read: no hang on
    a FIFO, no endless read of /dev/zero, no read of a file larger than a package may be."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.mkfifo(os.path.join(self.dir, "pipe.cast"))
        os.symlink("/dev/zero", os.path.join(self.dir, "zero.cast"))
        os.symlink("pipe.cast", os.path.join(self.dir, "pipe-link.cast"))
        with open(os.path.join(self.dir, "huge.cast"), "wb") as f:
            f.truncate(kernelforge_cast._archive.MAX_PACKAGE_BYTES + 1)   # sparse: no disk used

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_each_is_refused_naming_the_path(self):
        rows = [
            ("/dev/zero", "/dev/zero", "not a regular file but a character device"),
            ("a link to /dev/zero", os.path.join(self.dir, "zero.cast"), "not a regular file but a character device"),
            ("a FIFO", os.path.join(self.dir, "pipe.cast"), "not a regular file but a named pipe (FIFO)"),
            ("a link to a FIFO", os.path.join(self.dir, "pipe-link.cast"), "named pipe (FIFO)"),
            ("a folder", self.dir, "not a regular file but a folder"),
            ("larger than a package may be", os.path.join(self.dir, "huge.cast"), "a package may have at most"),
        ]
        for label, path, message in rows:
            with self.subTest(label):
                try:
                    r = subprocess.run([sys.executable, "-c", _BOUNDED_LOAD, path], capture_output=True, text=True,
                                       timeout=60)
                except subprocess.TimeoutExpired:
                    self.fail("%s: the load did not finish in 60 s" % label)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-2000:])
                self.assertIn("refused: " + path + ": it ", r.stdout)
                self.assertIn(message, r.stdout)

    def test_in_this_process_a_value_error(self):
        # (a folder: a regression on /dev/zero or a FIFO must not take this test process with it)
        with self.assertRaises(ValueError) as ctx:
            kernelforge_cast.load(self.dir)
        self.assertIn(self.dir + ": it is not a regular file but a folder", str(ctx.exception))

    @unittest.skipUnless(FIXTURE and os.path.exists(FIXTURE), "needs the package tst_cast exports (KF_CAST_FIXTURE)")
    def test_a_link_to_a_package_still_loads(self):
        link = os.path.join(self.dir, "linked.cast")
        os.symlink(FIXTURE, link)
        self.assertIn("vector_add", kernelforge_cast.load(link).names)


if __name__ == "__main__":
    unittest.main()
