#!/usr/bin/env python3
"""GPU end-to-end check of model packages (CTest gpu.cast.model; docs/gpu-validation.md).

    cast_model_e2e.py --kforge PATH [--work DIR] [--json FILE] [--tokens T (default 16384)]

1. `kforge promote` the examples a transformer block can use — rms_norm_fp16,
   fused_add_rms_norm_fp16, softmax_fp32, layer_norm_bf16, gemm_fp16 — into a fresh registry:
   verify + benchmark + gates on this GPU. An example the gates refuse (e.g. a GEMM slower than
   cuBLAS) is reported and left out, as a user's would be.
2. builds a transformer-style block of our own (residual add -> RMSNorm -> x @ W -> GELU ->
   RMSNorm -> fp32 softmax and bf16 LayerNorm heads; d = 4096, seeded weights, nothing
   downloaded), exports it with torch.export (the token count dynamic) and traces it to
   TorchScript;
3. `kforge cast export` the promoted kernels with both models and an input description;
4. `kforge cast run --check --record` each model: the torch.export program through the Python
   runtime, the TorchScript one through kf_cast in a LibTorch program (kforge-cast); and once
   with --no-kernels. Checks: the expected call sites substituted, no fallback, outputs close to
   the unsubstituted model and no further from fp64 than it is; the end-to-end speedup is
   recorded as measured, whatever it is.
Exits 0 when every check holds, 1 when one fails, 77 when there is no GPU.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "device", "cast", "python"))

SKIP = 77
failures = []
results = {"checks": [], "promoted": {}, "runs": {}}
EXAMPLES = ["fused_add_rms_norm_fp16", "rms_norm_fp16", "softmax_fp32", "layer_norm_bf16", "gemm_fp16"]
D = 4096


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    results["checks"].append({"ok": bool(ok), "what": what})
    if not ok:
        failures.append(what)


def run(cmd, env=None):
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    print("$ %s  -> %d (%.1f s)" % (" ".join(cmd), p.returncode, time.time() - t), flush=True)
    return p


def block_class(torch):
    F = torch.nn.functional

    class Block(torch.nn.Module):
        """A transformer-style block: every op a promoted example could replace, and some none does."""

        def __init__(self, d):
            super().__init__()
            g = torch.Generator().manual_seed(24)
            self.w1 = torch.nn.Parameter((torch.rand(d, generator=g) + 0.5).half())
            self.w_up = torch.nn.Parameter((torch.randn(d, d, generator=g) / d ** 0.5).half())
            self.w2 = torch.nn.Parameter((torch.rand(d, generator=g) + 0.5).half())
            self.ln_w = torch.nn.Parameter((torch.rand(d, generator=g) + 0.5).bfloat16())
            self.ln_b = torch.nn.Parameter((torch.randn(d, generator=g) * 0.1).bfloat16())
            self.d = d

        def forward(self, x, r):
            h = x + r                                          # fused_add_rms_norm_fp16
            y = F.rms_norm(h, [self.d], self.w1, 1e-6)         # (with the add)
            u = F.gelu(y @ self.w_up)                          # gemm_fp16 (if promoted); gelu: no kernel
            z = F.rms_norm(u, [self.d], self.w2, 1e-6)         # rms_norm_fp16
            p = torch.softmax(z.float(), -1)                   # softmax_fp32
            n = F.layer_norm(z.to(torch.bfloat16), [self.d], self.ln_w, self.ln_b, 1e-5)   # layer_norm_bf16
            return p, n, h

    return Block


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--work")
    ap.add_argument("--json")
    ap.add_argument("--tokens", type=int, default=16384)
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print("skip: %s" % e)
        return SKIP
    if not torch.cuda.is_available():
        print("skip: no CUDA device for PyTorch")
        return SKIP
    work = a.work or tempfile.mkdtemp(prefix="kf-cast-model-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    reg = ["--registry", os.path.join(work, "registry")]

    ids = {}
    for name in EXAMPLES:
        p = run([a.kforge, "promote", os.path.join(ROOT, "resources", "examples", name), "--candidate", "optimized.cu",
                 "--json", "--time-cap-ms", "1000", "--baseline", "eager"] + reg)
        if p.returncode == 3 and "GPU" in p.stderr:
            print("skip: " + p.stderr.strip())
            return SKIP
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = {}
        if p.returncode == 0 and out.get("id"):
            ids[name] = out["id"]
            results["promoted"][name] = {"id": out["id"], "geomean": out.get("geomean_speedup")}
        else:
            failed = [g for g in out.get("gates") or [] if isinstance(g, dict) and not g.get("passed")]
            why = ("; ".join("%s: %s" % (g.get("title"), g.get("detail")) for g in failed)
                   or p.stderr.strip()[-400:] or p.stdout[-400:])
            results["promoted"][name] = {"refused": why}
            print("note  %s not promoted (exit %d): %s" % (name, p.returncode, why))
    check("fused_add_rms_norm_fp16" in ids and "softmax_fp32" in ids,
          "promote: at least the fused add+RMSNorm and the softmax pass the gates (%s)" % ", ".join(sorted(ids)))
    if not ids:
        return finish(a)

    # The block, exported with a dynamic token count (small sample inputs) and traced.
    Block = block_class(torch)
    model = Block(D).eval()
    small = (torch.randn(64, D).half(), torch.randn(64, D).half())
    T = torch.export.Dim("T", min=1, max=1 << 20)
    ep = torch.export.export(model, small, dynamic_shapes={"x": {0: T}, "r": {0: T}})
    torch.export.save(ep, os.path.join(work, "block.pt2"))
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(model, small), os.path.join(work, "block.ts"))
    with open(os.path.join(work, "inputs.json"), "w") as f:
        json.dump({"inputs": [{"name": "x", "dtype": "fp16", "shape": [a.tokens, D]},
                              {"name": "r", "dtype": "fp16", "shape": [a.tokens, D]}]}, f)

    pkg = os.path.join(work, "model.cast")
    p = run([a.kforge, "cast", "export"] + list(ids.values()) + [
        "-o", pkg, "--model", "block=" + os.path.join(work, "block.pt2"), "--inputs", "block=" + os.path.join(work, "inputs.json"),
        "--model", "block_ts=" + os.path.join(work, "block.ts"), "--inputs", "block_ts=" + os.path.join(work, "inputs.json"),
        "--json"] + reg)
    check(p.returncode == 0, "export %d kernels with the block (torch.export) and its TorchScript twin" % len(ids))
    if p.returncode != 0:
        print(p.stderr[-2000:])
        return finish(a)
    results["export"] = json.loads(p.stdout)
    check(run([a.kforge, "cast", "check", pkg]).returncode == 0, "kforge cast check model.cast")

    expected = {"add": "fused_add_rms_norm_fp16" in ids, "softmax": "softmax_fp32" in ids,
                "layer_norm": "layer_norm_bf16" in ids, "matmul": "gemm_fp16" in ids}
    env = dict(os.environ, KF_CAST_PYTHON=sys.executable)
    for model_name, runtime in (("block", "Python"), ("block_ts", "LibTorch")):
        p = run([a.kforge, "cast", "run", pkg, "--model", model_name, "--runs", "30", "--warmup", "10", "--check",
                 "--record", "--json"] + reg, env=env)
        ok = p.returncode == 0
        check(ok, "%s: kforge cast run --check --record through the %s runtime" % (model_name, runtime))
        if not ok:
            print(p.stdout[-3000:], p.stderr[-3000:], sep="\n")
            continue
        ev = json.loads(p.stdout)
        results["runs"][model_name] = ev
        subs = {}
        for s in ev["substitution"]:
            subs.setdefault(s["op"], []).append(s)
        for op, want in expected.items():
            got = any(s["status"] == "substituted" for s in subs.get(op, []))
            check(got == want, "%s: %s %s" % (model_name, op, "substituted" if want else "kept (no promoted kernel)"))
        rms_sites = [s for s in subs.get("rms_norm", []) if s["status"] == "substituted"]
        check(len(rms_sites) == ("fused_add_rms_norm_fp16" in ids) + ("rms_norm_fp16" in ids),
              "%s: both RMSNorms substituted by the kernels promoted for them (%s)"
              % (model_name, ", ".join(s["cast_op"] for s in rms_sites)))
        check(not ev["fallbacks"], "%s: no kernel fell back" % model_name)
        check(ev["check"]["fp64"] == "ran", "%s: the fp64 reference ran (%s)" % (model_name, ev["check"]["fp64"]))
        for o in ev["check"]["outputs"]:
            k, orig, vs = o.get("kernels_vs_fp64", {}), o.get("original_vs_fp64", {}), o["kernels_vs_original"]
            check(vs["finite_alike"], "%s: output %d (%s) finite where the unsubstituted model's is" % (model_name, o["index"], o["dtype"]))
            print("note  %s output %d (%s) against the unsubstituted model: max %.3g, rms %.3g"
                  % (model_name, o["index"], o["dtype"], vs["max_abs"], vs["rms"]))
            # The accuracy that matters: against fp64, the kernels may not be worse than the model's
            # own ATen ops (a rounding difference upstream moves single elements by an ulp of a
            # 16-bit type, so the direct difference alone judges nothing).
            if k and orig:
                check(k["rms"] <= 2 * orig["rms"] + 1e-6 and k["max_abs"] <= 2 * orig["max_abs"] + 1e-6,
                      "%s: output %d no further from fp64 than the model itself (rms %.3g vs %.3g, max %.3g vs %.3g)"
                      % (model_name, o["index"], k["rms"], orig["rms"], k["max_abs"], orig["max_abs"]))
        print("note  %s end to end: with kernels %.4f ms, without %.4f ms, speedup %.3f× (model-level)"
              % (model_name, ev["with_kernels_ms"]["median"], ev["without_kernels_ms"]["median"], ev["speedup"]))
    p = run([a.kforge, "cast", "run", pkg, "--model", "block", "--runs", "5", "--no-kernels"], env=env)
    check(p.returncode == 0 and "not run (--no-kernels)" in p.stdout, "--no-kernels runs the model as exported only")
    # --record also put each run beside the registry versions whose kernels ran in it.
    beside = os.path.join(work, "registry", "model-runs", ids["fused_add_rms_norm_fp16"])
    stored = sorted(os.listdir(beside)) if os.path.isdir(beside) else []
    check(len(stored) == 2, "both model runs stored beside the fused kernel's registry version (%s)" % ", ".join(stored))
    p = run([a.kforge, "cast", "inspect", pkg])
    check(p.returncode == 0 and p.stdout.count("model-level, end to end") >= 2,
          "kforge cast inspect shows both recorded model runs")
    print(p.stdout[p.stdout.find("\nmodel "):p.stdout.find("\nfiles")])
    return finish(a)


def finish(a):
    results["failures"] = failures
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    print("\n%d checks, %d failed" % (len(results["checks"]), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
