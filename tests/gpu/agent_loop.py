"""GPU end-to-end check of the agent loop (CTest gpu.agent.loop; docs/agents.md,
docs/gpu-validation.md), through the CLI:

    agent_loop.py --kforge PATH [--out DIR] [--json FILE] [--time-cap-ms MS]

1. `kforge import kernelbench tests/gpu/agent/residual_rmsnorm.py`: our own KernelBench-style
   problem (residual add, RMS norm, learned weight) becomes a task with a traced reference whose
   weight is an input;
2. `kforge prompt` renders the agent's task (every section present, the skills named);
3. `kforge candidate add` takes back tests/gpu/agent/agent.cu, the kernel written from that
   prompt with its plan fenced in the header;
4. `kforge verify --shapes all --held-out 4` passes; `kforge bench` measures it against eager
   LibTorch (and torch.compile when the machine has it); `kforge promote` puts it in a fresh
   registry through the gates;
5. a GPU MODE problem (tests/data/import/gpumode/vecadd_py) is imported, `kforge generate`
   writes its candidate from the traced reference, and verify passes.
The prompt, the task folders and every command's JSON are kept under --out. Exits 0 when every
check holds, 1 when one fails, 77 without a GPU.
"""

import argparse
import json
import re
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from gpucheck import SKIP, Checks, run  # noqa: E402


def report(p):
    try:
        return json.loads(p.stdout)["reports"][0]
    except (ValueError, KeyError, IndexError):
        return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--out", default="")
    ap.add_argument("--json")
    ap.add_argument("--time-cap-ms", default="2000")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="kf-agent-loop-")
    os.makedirs(out, exist_ok=True)
    c = Checks()
    task = os.path.join(out, "residual_rmsnorm")
    shutil.rmtree(task, ignore_errors=True)

    def keep(name, p):
        with open(os.path.join(out, name), "w") as f:
            f.write(p.stdout + ("\n--- stderr ---\n" + p.stderr if p.stderr else ""))

    p = run([a.kforge, "import", "kernelbench", os.path.join(HERE, "agent", "residual_rmsnorm.py"), "-o", task, "--json"])
    keep("import.json", p)
    if not c.check(p.returncode == 0, "import the KernelBench-style problem (exit %d) %s" % (p.returncode, p.stderr[-400:])):
        return c.finish(a.json)
    prompt = os.path.join(out, "prompt.md")
    p = run([a.kforge, "prompt", task, "-o", prompt])
    text = open(prompt).read() if os.path.exists(prompt) else ""
    sections = re.findall(r"^## (\d+)\. ", text, re.M)
    c.check(p.returncode == 0 and sections == [str(i) for i in range(1, 13)] and "## 12. Skills" in text and "132 SMs" in text,
            "render the prompt: 12 sections, %d bytes, %s" % (len(text), p.stderr.strip().splitlines()[-1:] or ""))
    shutil.copy(os.path.join(HERE, "agent", "agent.cu"), os.path.join(task, "agent.cu"))
    p = run([a.kforge, "candidate", "add", task, os.path.join(task, "agent.cu"), "--json"])
    keep("candidate-add.json", p)
    added = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    c.check(p.returncode == 0 and added.get("added") and "sm_90" in added.get("compiled_for", []),
            "candidate add: compiled for %s, %d scan warning(s) %s" % (added.get("compiled_for"),
                                                                      len(added.get("static_scan", [])), p.stderr[-300:]))

    v = run([a.kforge, "verify", task, "--candidate", "agent.cu", "--shapes", "all", "--held-out", "4", "--json"], timeout=900)
    keep("verify.json", v)
    if v.returncode == 3 and not v.stdout.strip():
        print("skip: " + v.stderr.strip()[-400:])
        return SKIP
    rep = report(v)
    c.check(v.returncode == 0 and rep.get("verdict") == "pass",
            "verify on every test, benchmark and 4 held-out shapes: %s (%d shapes) %s" % (
                rep.get("verdict"), len(rep.get("shapes", [])), rep.get("summary", "")[:300]))
    b = run([a.kforge, "bench", task, "--candidate", "agent.cu", "--time-cap-ms", a.time_cap_ms, "--json"], timeout=900)
    keep("bench.json", b)
    brep = report(b)
    for s in brep.get("shapes", []):
        c.results.setdefault("bench", []).append({
            "shape": s.get("label"), "eager_ms": s["baseline"].get("median_ms"), "agent_ms": s["candidate"].get("median_ms"),
            "speedup": s.get("speedup"), "pct_peak_bandwidth": s.get("pct_peak_bandwidth")})
        print("| %s | eager %.4g ms | agent %.4g ms | %.2f× | %.0f %% of DRAM peak |" % (
            s.get("label"), s["baseline"].get("median_ms") or 0, s["candidate"].get("median_ms") or 0,
            s.get("speedup") or 0, s.get("pct_peak_bandwidth") or 0), flush=True)
    geo = brep.get("geomean_speedup")
    c.results["bench_geomean"] = geo
    c.results["compile_geomean"] = (brep.get("compile_baseline") or {}).get("geomean_speedup")
    c.check(b.returncode == 0 and brep.get("verdict") == "ok", "bench: verdict %s, geomean %s" % (brep.get("verdict"), geo))
    reg = os.path.join(out, "registry")
    shutil.rmtree(reg, ignore_errors=True)
    p = run([a.kforge, "promote", task, "--candidate", "agent.cu", "--registry", reg, "--time-cap-ms", a.time_cap_ms,
             "--json"], timeout=1200)
    keep("promote.json", p)
    promoted = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    c.results["promoted"] = promoted.get("id")
    c.check(p.returncode == 0 and promoted.get("id"), "promote: %s %s" % (promoted.get("id"), p.stderr.strip()[-400:]))
    if promoted.get("id"):
        p = run([a.kforge, "prompt", task, "--registry", reg])
        c.check("Current best for this task on sm_90: `%s`" % promoted["id"] in p.stdout,
                "the next prompt names the promoted kernel as the one to beat")

    gm = os.path.join(out, "vecadd_py")
    shutil.rmtree(gm, ignore_errors=True)
    p = run([a.kforge, "import", "gpumode", os.path.join(ROOT, "tests", "data", "import", "gpumode", "vecadd_py"), "-o", gm])
    if c.check(p.returncode == 0, "import the GPU MODE problem (exit %d) %s" % (p.returncode, p.stderr[-300:])):
        g = run([a.kforge, "generate", gm, "--name", "gen.cu"])
        if c.check(g.returncode == 0, "generate a candidate from its traced reference %s" % g.stderr[-300:]):
            v = run([a.kforge, "verify", gm, "--candidate", "gen.cu", "--held-out", "4", "--json"], timeout=900)
            keep("gpumode-verify.json", v)
            rep = report(v)
            c.check(v.returncode == 0 and rep.get("verdict") == "pass",
                    "verify the generated GPU MODE candidate: %s %s" % (rep.get("verdict"), rep.get("summary", "")[:300]))
    return c.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
