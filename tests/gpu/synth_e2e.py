"""GPU end-to-end check of kernel synthesis (CTest gpu.synth.e2e; docs/synthesis.md,
docs/gpu-validation.md), through the CLI and the real runner:

    synth_e2e.py --kforge PATH [--out DIR] [--json FILE]

The model is the scripted model server (tests/fixtures/model_server.py, a test fixture) with
replies written here, in the order a real model might send them:
  1. the interview: a task for "fused residual add + RMS norm in fp16" (the example task's spec);
  2. codegen: a fused kernel that forgets to divide the sum of squares by D (wrong on the GPU);
  3. correctness, after the verifier's evidence came back: the correct fused kernel
     (resources/examples/fused_add_rms_norm_fp16/optimized.cu);
  4. polish: the same kernel with a tidied header.
`kforge synth --yes` must end with the correct kernel added to the new task, its first verify a
FAIL with evidence fed back to the model, the second a PASS over every shape set with held-out
shapes, a benchmark over eager LibTorch, and the polished version kept only if still correct.
Afterwards a plain `kforge verify --held-out 4` of the added candidate passes. Exits 0 when
every check holds, 1 when one fails, 77 without a GPU.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from gpucheck import SKIP, Checks, run  # noqa: E402

EXAMPLE = os.path.join(ROOT, "resources", "examples", "fused_add_rms_norm_fp16")


def reply(source, plan, words):
    return "%s\n\n```cuda\n%s```\n\n```json\n%s\n```\n" % (words, source, json.dumps(plan, indent=2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--out", default="")
    ap.add_argument("--json")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="kf-synth-e2e-")
    os.makedirs(out, exist_ok=True)
    c = Checks()

    with open(os.path.join(EXAMPLE, "task.json")) as f:
        example = json.load(f)
    plan = next(x for x in example["candidates"] if x["file"] == "optimized.cu")
    plan = {k: v for k, v in plan.items() if k != "file"}
    with open(os.path.join(EXAMPLE, "optimized.cu")) as f:
        good = f.read()
    wrong = good.replace("rsqrtf(sum_sq / D + eps)", "rsqrtf(sum_sq + eps)")
    assert wrong != good, "the example kernel changed: update the mutation"
    spec = dict(example, name="synth_add_rms_norm", candidates=[])
    polished = "// Tidied by the scripted model: fused residual add + RMS norm, one warp per row.\n" + good

    script = [
        {"format": "openai", "chunks": 4, "usage": {"in": 9000, "out": 1500},
         "text": "```json\n%s\n```\nASSUMPTION: fp16 storage, fp32 accumulation\nASSUMPTION: eps = 1e-6 as in the example\n"
                 % json.dumps(spec, indent=2)},
        {"format": "openai", "chunks": 8, "usage": {"in": 14000, "out": 2500},
         "text": reply(wrong, plan, "One warp per row, h kept in registers.")},
        {"format": "openai", "chunks": 8, "usage": {"in": 16000, "out": 2500},
         "text": reply(good, plan, "The sum of squares must be divided by D before eps: fixed.")},
        {"format": "openai", "chunks": 4, "usage": {"in": 12000, "out": 2500},
         "text": reply(polished, plan, "Tidied.")},
    ]
    script_path = os.path.join(out, "model-script.json")
    with open(script_path, "w") as f:
        json.dump(script, f)
    log_path = os.path.join(out, "model-requests.jsonl")
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "fixtures", "model_server.py"), "--script",
                               script_path, "--log", log_path], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline().strip()
        if not c.check(line.startswith("PORT "), "the scripted model server listens (%s)" % line):
            return c.finish(a.json)
        port = int(line.split()[1])
        task = os.path.join(out, "synth_add_rms_norm")
        shutil.rmtree(task, ignore_errors=True)
        p = run([a.kforge, "synth", "a fused fp16 residual add + RMS norm over rows of D, D a multiple of 8 on the fast path",
                 "--task-dir", task, "--base-url", "http://127.0.0.1:%d/v1" % port, "--model", "scripted-model",
                 "--price-in", "3", "--price-out", "15", "--max-attempts", "3", "--name", "synth.cu", "--yes", "--json"],
                timeout=1500)
        with open(os.path.join(out, "synth.out"), "w") as f:
            f.write(p.stdout + "\n--- stderr ---\n" + p.stderr)
        res = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
        if p.returncode == 3 and "no GPU" in p.stderr:
            print("skip: " + (res.get("reason") or p.stderr[-400:]))
            return SKIP
        c.check(p.returncode == 0 and res.get("outcome") == "candidate",
                "kforge synth: exit %d, outcome %s: %s" % (p.returncode, res.get("outcome"), res.get("reason")))
        run_dir = res.get("run_dir") or ""
        trace = {}
        if run_dir and os.path.exists(os.path.join(run_dir, "synthesis.json")):
            with open(os.path.join(run_dir, "synthesis.json")) as f:
                trace = json.load(f)
            shutil.copytree(run_dir, os.path.join(out, "run"), dirs_exist_ok=True)
        stages = {s["stage"]: s for s in trace.get("stages", [])}
        c.results["stages"] = {k: {"status": v.get("status"), "attempts": v.get("attempts"), "reason": v.get("reason")}
                               for k, v in stages.items()}
        c.results["totals"] = trace.get("totals")
        c.check(stages.get("interview", {}).get("status") == "done", "interview: the proposed task was accepted and frozen")
        cg = stages.get("codegen", {}).get("steps", [])
        first = cg[0] if cg else {}
        c.check(first.get("compile") == "ok" and first.get("verify") == "fail",
                "codegen: the first kernel compiled and the GPU verifier failed it (%s)" % first.get("result"))
        corr = stages.get("correctness", {}).get("steps", [])
        second = corr[0] if corr else {}
        c.check(second.get("verify") == "pass" and (second.get("speedup") or 0) > 1.10,
                "correctness: the fixed kernel passed every shape set with held-out shapes, %.2fx over eager"
                % (second.get("speedup") or 0))
        c.results["speedup"] = second.get("speedup")
        reqs = [json.loads(x) for x in open(log_path) if x.strip()]
        fed = "".join(m.get("content", "") for m in reqs[2]["body"]["messages"]) if len(reqs) > 2 else ""
        c.check("verifier rejected it" in fed and "FAIL" in fed, "the verifier's evidence went back to the model")
        pol = stages.get("polish", {}).get("steps", [])
        c.check(pol and pol[0].get("kept") is True, "polish: the tidied kernel was re-verified, re-benchmarked and kept (%s)"
                % (pol[0].get("result") if pol else "no step"))
        with open(os.path.join(task, "task.json")) as f:
            t = json.load(f)
        c.check([x["file"] for x in t["candidates"]] == ["synth.cu"], "the task lists the synthesized candidate")
        v = run([a.kforge, "verify", task, "--candidate", "synth.cu", "--shapes", "all", "--held-out", "4", "--json"], timeout=900)
        with open(os.path.join(out, "verify.json"), "w") as f:
            f.write(v.stdout)
        try:
            rep = json.loads(v.stdout)["reports"][0]
        except (ValueError, KeyError, IndexError):
            rep = {}
        c.check(v.returncode == 0 and rep.get("verdict") == "pass",
                "an independent verify of synth.cu passes (%d shapes)" % len(rep.get("shapes", [])))
    finally:
        server.kill()
    return c.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
