"""Generic substitution (kernelforge_cast.Package.substitute) on an exported model, no GPU.

A transformer-style block (residual add -> RMSNorm -> linear -> GELU -> softmax) is exported with
torch.export in fp16 and fp32; the package tst_cast exports holds vector_add (fp32, 1-D) and
fused_add_rms_norm_fp16. Exactly the matching call sites are replaced, every other candidate is
kept with its reason, and the rewritten model computes what the original does (on CPU the cast::
ops run their reference ops). Run by CTest as cast_substitute.
"""

import os
import unittest
import warnings

import torch

import kernelforge_cast

FIXTURE = os.environ.get("KF_CAST_FIXTURE", "")


class Block(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(d))
        self.lin = torch.nn.Linear(d, d)
        self.d, self.eps = d, eps

    def forward(self, x, r):
        h = x + r
        y = torch.nn.functional.rms_norm(h, [self.d], self.w, self.eps)
        z = torch.nn.functional.gelu(self.lin(y))
        return torch.softmax(z, -1), h


class Adder(torch.nn.Module):
    def forward(self, a, b):
        return (a + b) * 2.0


def by_op(report):
    return {(r["op"], r["status"]): r for r in report}


@unittest.skipUnless(FIXTURE and os.path.exists(FIXTURE), "needs the package tst_cast exports (KF_CAST_FIXTURE)")
class Substitution(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ops = kernelforge_cast.load(FIXTURE)

    def run_both(self, model, inputs):
        ep = torch.export.export(model, inputs)
        gm, report = self.ops.substitute(ep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = gm(*inputs)
        want = model(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, (tuple, list)) else (got,)
        for g, w in zip(got, want):
            self.assertTrue(torch.equal(g, w))
        return gm, report

    def test_fused_add_rms_norm_replaces_two_nodes_in_fp16(self):
        torch.manual_seed(0)
        model = Block(64).half()
        x, r = torch.randn(8, 64).half(), torch.randn(8, 64).half()
        gm, report = self.run_both(model, (x, r))
        ops = by_op(report)
        self.assertEqual(ops[("add", "substituted")]["cast_op"], "fused_add_rms_norm_fp16")
        self.assertEqual(ops[("rms_norm", "substituted")]["cast_op"], "fused_add_rms_norm_fp16")
        self.assertIn("no packaged kernel implements softmax", ops[("softmax", "kept")]["reason"])
        self.assertIn("no packaged kernel implements gelu", ops[("gelu", "kept")]["reason"])
        targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
        self.assertIn("cast.fused_add_rms_norm_fp16.default", targets)
        self.assertNotIn("aten.rms_norm.default", targets)

    def test_fp32_keeps_every_site_and_says_why(self):
        model = Block(64)
        x, r = torch.randn(8, 64), torch.randn(8, 64)
        gm, report = self.run_both(model, (x, r))
        self.assertEqual([r for r in report if r["status"] == "substituted"], [])
        add = by_op(report)[("add", "kept")]["reason"]
        self.assertIn("cast::vector_add: a has 2 dimension(s), the kernel takes 1", add)
        rms = by_op(report)[("rms_norm", "kept")]["reason"]
        self.assertIn("cast::fused_add_rms_norm_fp16: x is fp32, the kernel takes fp16", rms)

    def test_attributes_must_agree(self):
        model = Block(64, eps=1e-5).half()
        _, report = self.run_both(model, (torch.randn(4, 64).half(), torch.randn(4, 64).half()))
        self.assertIn("eps 1e-05, kernel 1e-06", by_op(report)[("rms_norm", "kept")]["reason"])

    def test_one_dimensional_add_becomes_vector_add(self):
        a, b = torch.randn(1000), torch.randn(1000)
        gm, report = self.run_both(Adder(), (a, b))
        self.assertEqual(by_op(report)[("add", "substituted")]["cast_op"], "vector_add")
        self.assertIn("mul", [r["op"] for r in report if r["status"] == "kept"])

    def test_module_with_example_inputs(self):
        gm, report = self.ops.substitute(Adder(), (torch.randn(7), torch.randn(7)))
        self.assertEqual(by_op(report)[("add", "substituted")]["cast_op"], "vector_add")
        with self.assertRaises(ValueError):
            self.ops.substitute(Adder())


if __name__ == "__main__":
    unittest.main()
