#!/usr/bin/env python3
"""GPU end-to-end checks, driven through the kforge CLI (CTest label "gpu"; tests/gpu/README.md).

    kf_gpu_check.py --kforge PATH [--report-dir DIR] [--name TEST] CASE [--task DIR]

Runs one `kforge verify|bench ... --json`, checks its exit code and inspects the reports
(docs/report-schema.md): verdicts, the structured failure fields (guard_violations,
modified_inputs, unwritten, non_finite_mismatches, runs_agree, launch_error, error) and the
failure text. Prints what it ran, one line per report and one line per check; exits 0 when every
check holds, 1 when one does not, and 77 (CTest's SKIP_RETURN_CODE) when kforge exits 3 without a
report (an environment error: no GPU, no driver, no runner).

Cases (CASE):
  example.verify  --task DIR   every candidate of an example task passes; exit 0
  example.bench   --task DIR   every candidate is timed on every benchmark shape; exit 0
  broken.<what>                a deliberately broken candidate fails for the right reason
  control.<what>               the correct candidate of a test task passes
  recover.<what>               a crashing/hanging candidate fails, and the correct candidate
                               after it in the same invocation passes (runner restarted)
  stream_copy.verify           the streaming-copy probe is correct
  profile.stream_copy          `kforge profile`: the streaming copy runs DRAM above 80 % of peak
                               with achieved occupancy close to theoretical; the baseline too
  profile.softmax              `kforge profile`: the example softmax and LibTorch's, side by side
  profile.register_pressure    `kforge profile`: a register-heavy copy's occupancy is limited by
                               registers as the calculator predicts; launch bounds double it
  tasks.compile                every test task's candidates compile with no error and no
                               warning (`kforge compile`; no GPU needed)
  endpoint.staged              verify through an endpoint with shared_fs false: the task's files
                               are staged, a --dump streams back (docs/runners.md)
`--list` prints them. Only the standard library is used.

Environment: KF_GPU_VERIFY_ARGS / KF_GPU_BENCH_ARGS (extra kforge arguments, shell-split, e.g.
"--time-cap-ms 1000"), KF_GPU_CHECK_TIMEOUT (seconds for one kforge run; default 1200).
"""

import argparse
import json
import os
import shlex
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = os.path.join(HERE, "tasks")
SKIP = 77

# Words that must appear (any one of them, case-insensitive) in the text of a failing report.
WORDS = {
    "guard": ["guard", "out of bounds", "out-of-bounds", "past the end", "canary"],
    "unwritten": ["unwritten", "not written", "never written", "sentinel"],
    "nan": ["nan", "non-finite", "not finite", "non finite"],
    "modified": ["modified", "changed", "overwr", "wrote to input", "written to input"],
    "timeout": ["timeout", "timed out", "time out", "watchdog", "did not finish", "hang", "hung"],
    "illegal": ["illegal", "memory access", "invalid address", "out of range address", "fault"],
    "mismatch": ["tolerance", "mismatch", "differ", "disagree", "wrong"],
}


class Check:
    """Collects check results; a failed one makes the test fail, a note is informational."""

    def __init__(self):
        self.failures = 0
        self.failed = []

    def ok(self, cond, what):
        print(("  ok    " if cond else "  FAIL  ") + what)
        if not cond:
            self.failures += 1
            self.failed.append(what)
        return cond

    def note(self, what):
        print("  note  " + what)


# --- report helpers -----------------------------------------------------------------------------

def base(path):
    return os.path.basename(str(path or ""))


def reports_of(doc):
    if isinstance(doc, dict):
        r = doc.get("reports")
        if isinstance(r, list):
            return [x for x in r if isinstance(x, dict)]
        if doc.get("kind") in ("correctness", "performance"):
            return [doc]
    return []


def report_for(reports, file):
    for r in reports:
        if base((r.get("candidate") or {}).get("file")) == file:
            return r
    return None


def trials(report):
    for s in report.get("shapes") or []:
        for t in s.get("trials") or []:
            yield s, t


def outputs(trial, name=None):
    for o in trial.get("outputs") or []:
        if name is None or o.get("output") == name:
            yield o


def text_of(report):
    """Every sentence of a report a user would read about its failure, lower-cased."""
    parts = [report.get("summary", "")]
    err = report.get("error")
    if isinstance(err, dict):
        parts += [str(err.get(k, "")) for k in ("what", "why", "hint")]
    elif err:
        parts.append(str(err))
    for s in report.get("shapes") or []:
        parts.append(str(s.get("failure", "")))
        for t in s.get("trials") or []:
            parts += [str(t.get("failure", "")), str(t.get("launch_error", ""))]
    return " ".join(p for p in parts if p).lower()


def mentions(text, key):
    return any(w in text for w in WORDS[key])


def shape_str(s):
    return ", ".join(f"{k}={v}" for k, v in (s.get("shape") or {}).items())


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def idx(i):
    """An element index as a list ([i] for a 1-D index given as a plain number)."""
    return list(i) if isinstance(i, (list, tuple)) else [i]


def describe(report):
    cand = base((report.get("candidate") or {}).get("file")) or "?"
    line = f"  report {cand}: {report.get('kind', '?')} verdict={report.get('verdict', '?')}"
    if num(report.get("duration_ms")):
        line += f" ({report['duration_ms']:.0f} ms)"
    print(line)
    if report.get("summary"):
        print(f"    summary: {report['summary']}")
    err = report.get("error")
    if err:
        print(f"    error: {json.dumps(err)}")
    shown = 0
    for s, t in trials(report):
        if t.get("passed") is False and shown < 3:
            print(f"    [{shape_str(s)}] trial {t.get('trial')}: {t.get('failure') or t.get('launch_error')}")
            shown += 1


def task_json(task_dir):
    with open(os.path.join(task_dir, "task.json")) as f:
        return json.load(f)


def same_shape(a, b):
    return {k: v for k, v in a.items() if k != "label"} == {k: v for k, v in b.items() if k != "label"}


# --- running kforge -----------------------------------------------------------------------------

def run_kforge(kforge, argv, env_args, timeout):
    cmd = [kforge] + argv + (shlex.split(os.environ.get(env_args, "")) if env_args else [])
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, e.stdout or "", (e.stderr or "") + f"\n(killed after {timeout} s)"
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
    secs = time.monotonic() - t0
    print(f"exit {rc} after {secs:.1f} s")
    if err.strip():
        tail = err.strip().splitlines()[-25:]
        print("stderr (last lines):\n  " + "\n  ".join(tail))
    doc = None
    try:
        doc = json.loads(out) if out.strip() else None
    except ValueError:
        # tolerate log lines before the document: parse from the first line that opens an object
        lines = out.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("{"):
                try:
                    doc = json.loads("\n".join(lines[i:]))
                    break
                except ValueError:
                    continue
    if doc is None and out.strip():
        print("stdout is not JSON (first 400 chars):\n" + out[:400])
    return rc, doc, err, secs


def save(report_dir, name, payload):
    if not report_dir:
        return
    os.makedirs(report_dir, exist_ok=True)
    with open(os.path.join(report_dir, name + ".json"), "w") as f:
        json.dump(payload, f, indent=1)


# --- case definitions ---------------------------------------------------------------------------
# Each case: command, task folder, candidate (None: every candidate of the task), expected exit
# code, and a check function (c: Check, reports, task) -> None.

def expect_all_shapes(c, report, task, passed):
    """Every test shape of the task is in the report, and each passed (or failed) as expected."""
    shapes = report.get("shapes") or []
    for want in task["shapes"]["tests"]:
        got = [s for s in shapes if same_shape(s.get("shape") or {}, want)]
        label = ", ".join(f"{k}={v}" for k, v in want.items() if k != "label")
        if not c.ok(bool(got), f"test shape {label} is in the report"):
            continue
        if passed is not None:
            c.ok(got[0].get("passed") is passed, f"shape {label}: passed == {passed}")


def expect_trials_per_shape(c, report, minimum=3):
    counts = [len(s.get("trials") or []) for s in report.get("shapes") or []]
    c.ok(bool(counts) and min(counts) >= minimum,
         f"at least {minimum} trials per shape (docs/verification.md rule 6): {sorted(set(counts))}")


def failing_trials(report):
    return [(s, t) for s, t in trials(report) if t.get("passed") is False]


def nondiscriminating(report):
    """Shapes whose negative control (rule 8) says an all-zero or constant output would pass, as
    (shape text, output, elements). A one-element output always matches its own mean, so those
    are returned separately: they say nothing about the task's tolerance."""
    real, trivial = [], []
    for s in report.get("shapes") or []:
        elements = {}
        for t in s.get("trials") or []:
            for o in outputs(t):
                elements.setdefault(o.get("output"), o.get("elements"))
        for nc in s.get("negative_control") or []:
            if nc.get("discriminates") is False:
                n = elements.get(nc.get("output"))
                (trivial if isinstance(n, int) and n <= 1 else real).append((shape_str(s), nc.get("output"), n))
    return real, trivial


def expect_discriminates(c, r):
    real, trivial = nondiscriminating(r)
    c.ok(not real, "every shape with more than one output element discriminates (rule 8: zeros and the "
                   "reference mean fail)" + (f"; not: {real[:4]}" if real else ""))
    if trivial:
        c.note(f"one-element outputs cannot discriminate a constant (their mean is the answer): "
               f"{[x[0] for x in trivial][:4]}; report-level discriminates = {r.get('discriminates')}")
    elif r.get("discriminates") is False:
        c.note("report-level discriminates is false")


def check_fail_common(c, r, words):
    c.ok(r.get("verdict") == "fail", f"verdict is fail (got {r.get('verdict')!r})")
    text = text_of(r)
    c.ok(mentions(text, words), f"failure text mentions one of {WORDS[words]}")
    return text


def check_pass(c, r, task, trials_min=3):
    c.ok(r.get("verdict") == "pass", f"verdict is pass (got {r.get('verdict')!r})")
    expect_discriminates(c, r)
    expect_all_shapes(c, r, task, True)
    expect_trials_per_shape(c, r, trials_min)


def check_oob(c, r, task):
    check_fail_common(c, r, "guard")
    expect_all_shapes(c, r, task, False)
    bad = []
    for s, t in failing_trials(r):
        g = [v for v in t.get("guard_violations") or [] if v.get("buffer") == "c" and v.get("side") == "after"]
        # c[N] covers bytes 0..3 past the end; the first changed canary byte is one of them (byte 0
        # unless the random canary already held the written byte there).
        if not g or any(not 0 <= v.get("offset_bytes", 0) <= 3 for v in g):
            bad.append(f"{shape_str(s)} trial {t.get('trial')}: {t.get('guard_violations')}")
    c.ok(failing_trials(r) and not bad,
         "every failing trial has a guard violation on c, side after, offset 0..3 (the element c[N])" + (f"; not: {bad[:3]}" if bad else ""))


def check_unwritten(c, r, task):
    check_fail_common(c, r, "unwritten")
    for s in r.get("shapes") or []:
        n = (s.get("shape") or {}).get("N")
        if not isinstance(n, int):
            continue
        tail = n % 4
        c.ok(s.get("passed") is (tail == 0), f"N={n}: passed == {tail == 0} (N % 4 == {tail})")
        if tail == 0:
            continue
        bad = []
        for t in s.get("trials") or []:
            for o in outputs(t, "c"):
                first = o.get("first_unwritten") or []
                if o.get("unwritten") != tail or not first or idx(first[0]) != [n - tail]:
                    bad.append(f"trial {t.get('trial')}: unwritten={o.get('unwritten')} first={first[:2]}")
        c.ok(not bad, f"N={n}: unwritten == {tail}, first at [{n - tail}]" + (f"; got {bad[:2]}" if bad else ""))
    for s, t in failing_trials(r):
        if t.get("guard_violations"):
            c.ok(False, f"no guard violation expected ({shape_str(s)}: {t['guard_violations']})")
            break


def check_nan(c, r, task):
    check_fail_common(c, r, "nan")
    expect_all_shapes(c, r, task, False)
    bad = []
    for s, t in failing_trials(r):
        n = (s.get("shape") or {}).get("N")
        for o in outputs(t, "c"):
            first = [m.get("index") for m in o.get("first_mismatches") or []]
            if (o.get("unwritten") or 0) != 0 or (o.get("non_finite_mismatches") or 0) < 1 \
                    or (isinstance(n, int) and first and idx(first[0]) != [n // 2]):
                bad.append(f"{shape_str(s)} trial {t.get('trial')}: unwritten={o.get('unwritten')} "
                           f"non_finite={o.get('non_finite_mismatches')} first={first[:2]}")
    c.ok(failing_trials(r) and not bad,
         "every failing trial: >= 1 non-finite mismatch at [N/2], nothing unwritten (a written NaN "
         "is not the sentinel)" + (f"; not: {bad[:3]}" if bad else ""))


def check_modified(c, r, task):
    check_fail_common(c, r, "modified")
    expect_all_shapes(c, r, task, False)
    bad = [f"{shape_str(s)} trial {t.get('trial')}: {t.get('modified_inputs')}"
           for s, t in failing_trials(r) if sorted(t.get("modified_inputs") or []) != ["a"]]
    c.ok(failing_trials(r) and not bad, "every failing trial: modified_inputs == ['a']" + (f"; not: {bad[:3]}" if bad else ""))


def check_zeros(c, r, task):
    check_fail_common(c, r, "mismatch")
    expect_all_shapes(c, r, task, False)
    bad = []
    for s, t in failing_trials(r):
        for o in outputs(t, "c"):
            if (o.get("unwritten") or 0) != 0 or not (o.get("mismatches") or 0) > 0:
                bad.append(f"{shape_str(s)}: unwritten={o.get('unwritten')} mismatches={o.get('mismatches')}")
    c.ok(failing_trials(r) and not bad, "every failing trial: mismatches > 0, unwritten == 0" + (f"; not: {bad[:3]}" if bad else ""))
    expect_discriminates(c, r)


def check_stateful(c, r, task):
    check_fail_common(c, r, "mismatch")
    hits = [(s, t) for s, t in trials(r)
            if t.get("runs_agree") is False or any((o.get("mismatches") or 0) > 0 for o in outputs(t))]
    c.ok(bool(hits), "some trial has runs that disagree or mismatches (the second launch is wrong)")
    if hits:
        s, t = hits[0]
        c.note(f"first: {shape_str(s)} trial {t.get('trial')} runs_agree={t.get('runs_agree')} "
               f"failure={t.get('failure')!r}")


def check_race(c, r, task):
    check_fail_common(c, r, "mismatch")
    hits = [(s, t) for s, t in trials(r)
            if t.get("runs_agree") is False or any((o.get("mismatches") or 0) > 0 for o in outputs(t))]
    c.ok(bool(hits), "some trial has mismatches or runs that disagree")
    stray = [(s, t) for s, t in trials(r) if t.get("guard_violations") or t.get("modified_inputs")
             or t.get("launch_error") or any((o.get("unwritten") or 0) > 0 for o in outputs(t))]
    c.ok(not stray, "no guard violation, modified input, launch error or unwritten element is reported "
                    "(the race must be reported as wrong values, not misattributed)")
    failed = sum(1 for s in r.get("shapes") or [] if s.get("passed") is False)
    c.note(f"{failed} of {len(r.get('shapes') or [])} shapes failed")


def check_half(c, r, task):
    check_fail_common(c, r, "mismatch")
    expect_all_shapes(c, r, task, False)
    for s, t in failing_trials(r)[:1]:
        for o in outputs(t, "c"):
            rms, atol = o.get("reference_rms"), o.get("atol_effective")
            if num(rms) and num(atol):
                c.ok(rms < 1e-3, f"outputs are small (reference rms {rms:.3g})")
                c.ok(abs(atol - 1e-5 * rms) <= 1e-3 * 1e-5 * rms + 1e-30,
                     f"atol_effective {atol:.3g} == 1e-5 * rms (atol scales with the outputs)")
            c.ok((o.get("unwritten") or 0) == 0 and (o.get("mismatches") or 0) > 0, "mismatches > 0, unwritten == 0")


def check_half_fixed(c, r, task):
    check_pass(c, r, task)
    for s, t in list(trials(r))[:1]:
        for o in outputs(t, "c"):
            if num(o.get("atol_effective")):
                c.ok(abs(o["atol_effective"] - 1e-5) < 1e-12, f"atol_effective is the fixed 1e-5 ({o['atol_effective']})")


def check_golden_pass(c, r, task):
    """A more accurate fused kernel passes, judged against the float64 golden result."""
    check_pass(c, r, task)
    worst = {}
    for s, t in trials(r):
        for o in outputs(t, "y"):
            g = o.get("golden") or {}
            if c.ok(g.get("available") is True, f"{shape_str(s)}: the report has a golden result ({g.get('note', '')})"):
                ratio = g.get("error_ratio")
                if num(ratio):
                    key = (shape_str(s), o.get("elements") or 0)
                    worst[key] = max(worst.get(key, 0.0), ratio)
    # One element can be exactly LibTorch's value (ratio 1); with more, the fused kernel must be ahead.
    c.ok(bool(worst) and all(w <= 1.0 for w in worst.values()), "the candidate's error never exceeds LibTorch's")
    large = {k: w for k, w in worst.items() if k[1] >= 1000}
    c.ok(bool(large) and all(w < 1.0 for w in large.values()),
         "candidate error below LibTorch's on every shape of 1000 elements or more (worst ratios " +
         ", ".join(f"{k[0]}: {w:.3g}" for k, w in large.items()) + ")")
    c.note("worst error ratio per shape: " + ", ".join(f"{k[0]} {w:.3g}" for k, w in worst.items()))


def check_downgrade(c, r, task):
    """An fp32 task computed in fp16 fails even with the golden allowance."""
    check_fail_common(c, r, "mismatch")
    failed = [s for s in r.get("shapes") or [] if s.get("passed") is False]
    c.ok(len(failed) >= len(task["shapes"]["tests"]) - 1, f"{len(failed)} shapes fail (all but at most the smallest)")
    for s, t in failing_trials(r)[:1]:
        for o in outputs(t, "y"):
            g = o.get("golden") or {}
            ratio = g.get("error_ratio")
            c.ok(g.get("available") is True and (ratio == "inf" or (num(ratio) and ratio > 10)),
                 f"its error is far above LibTorch's (ratio {ratio})")


def check_time_cap(c, r, task):
    """A candidate whose timings never settle stops at the time cap, flagged unstable."""
    c.ok(r.get("kind") == "performance", "kind is performance")
    args = shlex.split(os.environ.get("KF_GPU_BENCH_ARGS", ""))
    cap = float(args[args.index("--time-cap-ms") + 1]) if "--time-cap-ms" in args[:-1] else 2000.0
    for s in r.get("shapes") or []:
        wall = s.get("wall_ms")
        c.ok(num(wall) and wall <= cap + 600, f"{shape_str(s)}: shape wall time {wall} ms <= cap {cap:.0f} ms + one sample")
        c.ok(s.get("unstable") is True and s.get("stopped_by") == "time_cap",
             f"{shape_str(s)}: stopped by the time cap and flagged unstable (stopped_by {s.get('stopped_by')!r})")
        c.ok(any("unstable" in f for f in s.get("flags") or []), f"{shape_str(s)}: an 'unstable' flag ({s.get('flags')})")


def crash_then_pass(crasher, words, extra=None):
    def check(c, reports, task):
        files = [base((r.get("candidate") or {}).get("file")) for r in reports]
        c.ok(files[:2] == [crasher, "correct.cu"], f"reports in task order: {crasher}, correct.cu (got {files})")
        r = report_for(reports, crasher)
        if c.ok(r is not None, f"a report for {crasher}"):
            c.ok(r.get("verdict") in ("fail", "error"), f"{crasher}: verdict fail or error (got {r.get('verdict')!r})")
            c.ok(any(mentions(text_of(r), w) for w in words),
                 f"{crasher}: the reason mentions one of {[x for w in words for x in WORDS[w]]}")
            if extra:
                extra(c, r, task)
        ok = report_for(reports, "correct.cu")
        if c.ok(ok is not None, "a report for correct.cu after it (same kforge invocation)"):
            c.ok(ok.get("verdict") == "pass", f"correct.cu passes after the {crasher} failure (got {ok.get('verdict')!r})")
            expect_all_shapes(c, ok, task, True)
    return check


def check_launch_faults(c, reports, task):
    """faults.launch_named (issue 23): a plan beyond the kernel's __launch_bounds__ is named before
    any launch, a stack frame the driver cannot reserve is named as local memory (not as memory
    other processes hold), and the correct candidate passes after both."""
    files = [base((r.get("candidate") or {}).get("file")) for r in reports]
    c.ok(files == ["bounded64.cu", "big_frame.cu", "correct.cu"], f"one report per candidate in task order (got {files})")
    r = report_for(reports, "bounded64.cu")
    if c.ok(r is not None, "a report for bounded64.cu"):
        t = text_of(r)
        c.ok(r.get("verdict") in ("error", "fail"), f"bounded64.cu: verdict error or fail (got {r.get('verdict')!r})")
        c.ok("256 threads" in t and "at most 64" in t and "__launch_bounds__" in t,
             "bounded64.cu: the error names 256 threads, at most 64 and __launch_bounds__")
        c.ok(t.count("invalid argument") == 0, "bounded64.cu: no bare 'invalid argument'")
        c.note("bounded64.cu: " + t[:300])
    r = report_for(reports, "big_frame.cu")
    if c.ok(r is not None, "a report for big_frame.cu"):
        t = text_of(r)
        # The driver reserves the frame for every thread the GPU can hold at once: 480 KiB x SMs x
        # threads per SM. An 80 GB H100 cannot (127 GiB); a 141 GB H200 can, and then it runs.
        env = r.get("environment") or {}
        per_sm = 1536 if env.get("compute_capability") in ("8.6", "8.7", "8.9", "12.0") else 2048
        need = 480 * 1024 * int(env.get("sm_count") or 0) * per_sm
        fits = 0 < need < int(env.get("memory_bytes") or 0) * 0.97
        if fits:
            c.note(f"big_frame.cu: this GPU holds the frame for every resident thread ({need / 2**30:.1f} GiB of "
                   f"{int(env.get('memory_bytes')) / 2**30:.1f} GiB), so the launch may succeed")
            c.ok(r.get("verdict") == "pass" or "local memory per thread" in t,
                 f"big_frame.cu: passes, or names the local memory per thread (got {r.get('verdict')!r})")
        else:
            c.ok(r.get("verdict") in ("error", "fail"), f"big_frame.cu: verdict error or fail (got {r.get('verdict')!r})")
            c.ok("local memory per thread" in t, "big_frame.cu: the error names the local memory per thread")
        c.ok("other processes" not in t, "big_frame.cu: the error does not blame other processes")
        c.note("big_frame.cu: " + t[:300])
    ok = report_for(reports, "correct.cu")
    if c.ok(ok is not None, "a report for correct.cu"):
        c.ok(ok.get("verdict") == "pass", f"correct.cu passes after both (got {ok.get('verdict')!r})")


HOLDER = r"""
import sys, torch
leave = int(float(sys.argv[1]) * 2**30)
free, total = torch.cuda.mem_get_info()
blocks, need, chunk = [], free - leave, 1 << 28
while need > 0:
    n = min(chunk, need)
    try:
        blocks.append(torch.empty(n, dtype=torch.uint8, device="cuda"))
    except RuntimeError:
        chunk //= 2
        if chunk < (1 << 20):
            break
        continue
    need -= n
free_now, _ = torch.cuda.mem_get_info()
print(f"{free_now / 2**30:.2f}", flush=True)
sys.stdin.read()
"""


def gpu_full_case(kforge, report_dir, name):
    """faults.gpu_full (issue 23): another process holds nearly all GPU memory. kforge must say the
    GPU is out of memory and how much is free, and exit 3 -- never "no GPU", never LibTorch's raw
    allocator text, never exit 1 (the kernel's fault). Then, the memory released, verify passes."""
    import subprocess
    c = Check()
    # transpose 8192 x 8192 over every shape set: 256 MiB a tensor, its float64 golden twice that,
    # so the middle holds leave room for the context but not for the run.
    task_dir = os.path.join(HERE, "..", "..", "resources", "examples", "transpose_fp32")
    argv = ["verify", task_dir, "--candidate", "optimized.cu", "--shapes", "all", "--json"]
    rc, doc, err, _ = run_kforge(kforge, argv, "", 600)
    if rc == 3 and not reports_of(doc):
        print(f"SKIP: kforge verify exited 3 without a report (no GPU?): {(err.strip().splitlines() or [''])[-1]}")
        return SKIP
    full = 0
    for leave in ("0.25", "1.0", "2.0"):
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, leave], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        free = (holder.stdout.readline() or "").strip()
        if not free:
            holder.kill()
            print("SKIP: this Python cannot hold GPU memory (no torch with CUDA)")
            return SKIP
        rc, doc, err, secs = run_kforge(kforge, argv, "", 600)
        holder.stdin.close()
        holder.wait(timeout=60)
        text = err + json.dumps(doc or {})
        print(f"  {free} GiB left free by another process: kforge exit {rc} in {secs:.1f} s")
        if rc == 0:
            c.note(f"{free} GiB free was enough for this task")
            continue
        full += 1
        c.ok(rc == 3, f"{free} GiB free: exit 3 (got {rc})")
        c.ok("the GPU is out of memory" in text and "GiB free of" in text,
             f"{free} GiB free: says the GPU is out of memory and how much is free")
        c.ok("no GPU" not in text and "Tried to allocate" not in text,
             f"{free} GiB free: neither 'no GPU' nor LibTorch's allocator text")
        line = [l for l in err.splitlines() if "out of memory" in l]
        line += [r.get("summary", "") for r in reports_of(doc) if "out of memory" in r.get("summary", "")]
        c.note((line or [text[:200]])[0][:300])
    c.ok(full >= 1, f"at least one hold filled the GPU ({full} of 3)")
    rc, doc, err, secs = run_kforge(kforge, argv, "", 600)
    c.ok(rc == 0, f"with the memory released, verify passes (exit {rc})")
    status = "pass" if c.failures == 0 else "fail"
    print(f"faults.gpu_full: {status} ({c.failures} failed check(s))")
    save(report_dir, name, {"case": "faults.gpu_full", "status": status, "failed_checks": c.failures,
                            "note": "; ".join(c.failed[:3])})
    return 0 if c.failures == 0 else 1

def staged_case(kforge, report_dir, name):
    """endpoint.staged (issue 19): `kforge verify` through a runner endpoint with shared_fs false
    (docs/runners.md). The runner starts from / with a HOME, cache and TMPDIR of its own and, where
    this machine allows it (root and `unshare -m`), in a mount namespace where an empty tmpfs
    covers the client's copy of the tasks: the only task files it can read are those it was sent.
    Every candidate of vector_add passes; a second run finds every file already on the runner; a
    broken kernel's --dump comes back into the client's folder with the report naming it."""
    import shutil
    import tempfile
    c = Check()
    runner = os.environ.get("KF_RUNNER") or os.path.join(os.path.dirname(os.path.abspath(kforge)), "kforge-runner")
    work = tempfile.mkdtemp(prefix="kf-staged-")
    client = os.path.join(work, "client")
    examples = os.path.join(HERE, "..", "..", "resources", "examples")
    shutil.copytree(os.path.join(examples, "vector_add"), os.path.join(client, "vector_add"))
    shutil.copytree(T("broken_add"), os.path.join(client, "broken_add"))
    side = {k: os.path.join(work, "runner-" + k) for k in ("home", "tmp", "cache")}
    for d in side.values():
        os.makedirs(d)
    start = 'cd / && exec "$0"'
    hidden = False
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("mount"):
        probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs kf-hidden {shlex.quote(client)} && ls -A {shlex.quote(client)}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "":
            hidden = True
            start = f"mount -t tmpfs kf-hidden {shlex.quote(client)} && cd / && exec \"$0\""
    command = (["unshare", "-m"] if hidden else []) + ["sh", "-c", start, "{runner}"]
    c.note("the client's task folders are " + ("hidden from the runner (a private mount namespace)" if hidden else
                                                 "visible to the runner (no private mount namespace here)"))
    runners = os.path.join(work, "runners.json")
    with open(runners, "w") as f:
        json.dump({"schema_version": 1, "default": "local", "endpoints": [
            {"name": "staged", "kind": "command", "command": command, "runner": runner, "shared_fs": False,
             "env": {"HOME": side["home"], "TMPDIR": side["tmp"], "XDG_CACHE_HOME": side["cache"]}}]}, f)
    endpoint = ["--runner-endpoint", "staged", "--runners", runners, "--json"]
    task = os.path.join(client, "vector_add")
    rc, doc, err, secs = run_kforge(kforge, ["verify", task] + endpoint, "KF_GPU_VERIFY_ARGS", 600)
    reports = reports_of(doc)
    if rc == 3 and not reports:
        why = (err.strip().splitlines() or ["(no message)"])[-1]
        print(f"SKIP: kforge verify exited 3 without a report (no GPU?): {why}")
        shutil.rmtree(work, ignore_errors=True)
        return SKIP
    c.ok(rc == 0, f"vector_add through the staged endpoint: exit 0 (got {rc})")
    every_candidate(check_example_verify)(c, reports, task_json(task))
    blobs = os.path.join(side["cache"], "kernelforge", "runner-files")
    held = sorted(os.listdir(blobs)) if os.path.isdir(blobs) else []
    c.ok(len(held) == 2, f"the runner holds the two candidates' sources by content ({len(held)} blobs)")
    rc, doc, err, secs2 = run_kforge(kforge, ["verify", task, "--candidate", "naive.cu"] + endpoint, "KF_GPU_VERIFY_ARGS", 600)
    c.ok(rc == 0, f"a second run passes (exit {rc}, {secs2:.1f} s; the first took {secs:.1f} s)")
    c.ok(sorted(os.listdir(blobs)) == held if os.path.isdir(blobs) else False, "and the runner's cache did not change")

    dumps = os.path.join(work, "dumps")
    broken = os.path.join(client, "broken_add")
    rc, doc, err, _ = run_kforge(kforge, ["verify", broken, "--candidate", "writes_nan.cu", "--dump", dumps] + endpoint,
                                 "KF_GPU_VERIFY_ARGS", 600)
    c.ok(rc == 1, f"writes_nan.cu fails (exit {rc})")
    r = report_for(reports_of(doc), "writes_nan.cu")
    if c.ok(r is not None, "a report for writes_nan.cu"):
        c.ok(r.get("dump_dir") == dumps, f"the report's dump_dir is the client's folder ({r.get('dump_dir')!r})")
        cases = [t.get("case") for _, t in trials(r) if t.get("case")]
        if c.ok(bool(cases), f"failing trials name their case folders ({len(cases)})"):
            for case in cases:
                folder = os.path.join(dumps, case)
                c.ok(os.path.isfile(os.path.join(folder, "case.json")), f"{case}/case.json arrived")
                c.ok(os.path.isfile(os.path.join(folder, "inputs", "a.npy")), f"{case}/inputs/a.npy arrived")
    left = [e for e in os.listdir(side["tmp"]) if e.startswith("kf-runner-")]
    c.ok(not left, f"the runner removed its private folder when it ended ({left})")
    status = "pass" if c.failures == 0 else "fail"
    print(f"endpoint.staged: {status} ({c.failures} failed check(s))")
    save(report_dir, name, {"case": "endpoint.staged", "status": status, "failed_checks": c.failures, "hidden": hidden,
                            "note": "; ".join(c.failed[:3])})
    shutil.rmtree(work, ignore_errors=True)
    return 0 if c.failures == 0 else 1


def multiple_of_block_extra(c, r, task):
    crashed = any(t.get("launch_error") for _, t in trials(r)) or r.get("verdict") == "error"
    for s in r.get("shapes") or []:
        n = (s.get("shape") or {}).get("N")
        if not isinstance(n, int):
            continue
        if n % 256 != 0:
            c.ok(s.get("passed") is False, f"N={n} (not a multiple of 256) fails")
        elif not crashed:
            # Stray writes of a failing shape land in guards; a multiple of 256 writes none.
            if s.get("passed") is not True:
                c.note(f"N={n} (a multiple of 256) did not pass: {[t.get('failure') for t in s.get('trials') or []][:1]}")
    if not crashed:
        g = [t for _, t in trials(r) if any(v.get("buffer") == "c" and v.get("side") == "after"
                                            for v in t.get("guard_violations") or [])]
        c.ok(bool(g), "no crash, so the stray writes show as guard violations on c, side after")


def single(check, file):
    def wrap(c, reports, task):
        r = report_for(reports, file)
        if c.ok(r is not None, f"a report for {file}"):
            check(c, r, task)
    return wrap


def every_candidate(check):
    def wrap(c, reports, task):
        for cand in task["candidates"]:
            r = report_for(reports, cand["file"])
            print(f" {cand['file']}:")
            if c.ok(r is not None, f"a report for {cand['file']}"):
                check(c, r, task, cand)
    return wrap


def check_example_verify(c, r, task, cand):
    check_pass(c, r, task)


def check_example_bench(c, r, task, cand):
    c.ok(r.get("kind") == "performance", "kind is performance")
    c.ok(r.get("verdict") == "ok", f"verdict is ok (got {r.get('verdict')!r})")
    shapes = r.get("shapes") or []
    want = task["shapes"].get("benchmarks") or []
    c.ok(len(shapes) >= len(want) and len(want) > 0, f"{len(shapes)} timed shapes for {len(want)} benchmark shapes")
    for s in shapes:
        sp = s.get("speedup")
        cm = (s.get("candidate") or {}).get("median_ms")
        bm = (s.get("baseline") or {}).get("median_ms")
        c.ok(num(sp) and sp > 0 and num(cm) and cm > 0 and num(bm) and bm > 0,
             f"[{shape_str(s)}] candidate {cm} ms, baseline {bm} ms, speedup {sp}")
        rc = s.get("recheck") or {}
        if rc:
            c.ok(rc.get("passed") is not False, f"[{shape_str(s)}] re-check of timed calls passed")
        if s.get("flags"):
            c.note(f"[{shape_str(s)}] flags: {s['flags']}")
    c.ok(num(r.get("geomean_speedup")), f"geomean_speedup {r.get('geomean_speedup')}")
    print_bench_table(task, cand, r)


def profile_side(r, side):
    return ((r.get("profile") or {}).get(side)) or {}


def first_kernel(r):
    kernels = profile_side(r, "candidate").get("kernels") or [{}]
    return kernels[0]


def check_profile_common(c, r):
    c.ok(r.get("kind") == "profile", "kind is profile")
    c.ok(r.get("verdict") == "ok", f"verdict is ok (got {r.get('verdict')!r}: {r.get('summary', '')[:200]})")
    counters = r.get("counters") or {}
    c.ok(counters.get("available") is True, f"counters available (problem: {counters.get('problem', '')!r})")
    c.ok(isinstance(counters.get("passes"), int) and counters["passes"] >= 1, f"passes >= 1 (got {counters.get('passes')})")
    k = first_kernel(r)
    st = k.get("static") or {}
    m = k.get("metrics") or {}
    print(f"  chip {counters.get('chip')} passes {counters.get('passes')}; kernel {k.get('demangled') or k.get('name')}: "
          f"regs {st.get('registers')} theoretical {st.get('theoretical_occupancy_pct')} % ({st.get('limiter')}); "
          f"achieved {m.get('achieved_occupancy_pct')} %, DRAM {m.get('dram_throughput_pct')} %, SM {m.get('sm_throughput_pct')} %, "
          f"{m.get('duration_ns')} ns, {(m.get('dram_read_bytes') or 0) + (m.get('dram_write_bytes') or 0):.4g} DRAM bytes")
    for key in ("achieved_occupancy_pct", "dram_throughput_pct", "sm_throughput_pct", "duration_ns", "dram_read_bytes"):
        c.ok(isinstance(m.get(key), (int, float)), f"metric {key} present")
    c.ok(st.get("registers", 0) > 0, "registers from cuFuncGetAttribute")
    ceil = r.get("ceilings") or {}
    c.ok((ceil.get("dram_gbs") or 0) > 500, f"a DRAM ceiling (got {ceil.get('dram_gbs')} GB/s from {ceil.get('dram_source')})")
    return k, st, m


def check_profile_stream(c, r, task):
    k, st, m = check_profile_common(c, r)
    if not m:
        return
    c.ok(m["dram_throughput_pct"] > 80, f"DRAM throughput above 80 % of peak (got {m['dram_throughput_pct']:.1f} %)")
    # Bytes the counters saw against what the copy must move (read x, write y): within 10 %.
    shape = r.get("shape") or {}
    need = 8.0 * shape.get("N", 0)
    seen = (m.get("dram_read_bytes") or 0) + (m.get("dram_write_bytes") or 0)
    c.ok(need > 0 and abs(seen - need) / need < 0.10, f"DRAM bytes {seen:.4g} within 10 % of 8 N = {need:.4g}")
    theo = st.get("theoretical_occupancy_pct") or 0
    c.ok(theo > 0 and m["achieved_occupancy_pct"] >= 0.70 * theo and m["achieved_occupancy_pct"] <= theo + 1.0,
         f"achieved occupancy {m['achieved_occupancy_pct']:.1f} % close to theoretical {theo:.1f} % (70-100 %)")
    # LibTorch's clone is a cudaMemcpy on the copy engine, not a kernel: the baseline side is
    # there and honestly empty (run 18 on the H100).
    base = profile_side(r, "baseline")
    c.ok("kernels" in base and base["kernels"] == [], "the baseline (a device-to-device memcpy) launched no kernels")


def check_profile_softmax(c, r, task):
    k, st, m = check_profile_common(c, r)
    base = profile_side(r, "baseline")
    bk = base.get("kernels") or []
    if c.ok(len(bk) >= 1, f"the LibTorch softmax was profiled: {len(bk)} kernel(s)"):
        bm = bk[0].get("metrics") or {}
        print(f"  baseline: achieved {bm.get('achieved_occupancy_pct')} %, DRAM {bm.get('dram_throughput_pct')} %, "
              f"{bm.get('duration_ns')} ns")
        # Both read B x D floats and write as many: the same DRAM traffic within a factor of 1.5.
        cb = (m.get("dram_read_bytes") or 0) + (m.get("dram_write_bytes") or 0)
        bb = (bm.get("dram_read_bytes") or 0) + (bm.get("dram_write_bytes") or 0)
        c.ok(cb > 0 and bb > 0 and max(cb, bb) / min(cb, bb) < 1.5, f"candidate {cb:.4g} and baseline {bb:.4g} DRAM bytes agree")


def check_register_pressure(c, reports, task):
    byfile = {f: report_for(reports, f) for f in ("copy_deep.cu", "copy_deep_bounded.cu")}
    for f, r in byfile.items():
        print(f" {f}:")
        if not c.ok(r is not None, f"a report for {f}"):
            return
        k, st, m = check_profile_common(c, r)
        c.ok(st.get("limiter") == "registers", f"{f}: theoretical occupancy limited by registers (got {st.get('limiter')!r})")
        theo = st.get("theoretical_occupancy_pct") or 0
        # The calculator's blocks per SM from the registers cuFuncGetAttribute reports.
        regs = st.get("registers", 0)
        per_block = -(-regs // 8) * 8 * 256
        blocks = 65536 // per_block if per_block else 0
        c.ok(abs(theo - 100.0 * blocks * 8 / 64) < 0.01, f"{f}: {regs} regs x 256 threads -> {blocks} blocks/SM = {theo} %")
        if m:
            ach = m["achieved_occupancy_pct"]
            c.ok(ach <= theo + 1.0 and ach >= 0.75 * theo, f"{f}: achieved {ach:.1f} % at or just below theoretical {theo:.1f} %")
    deep, bounded = (first_kernel(byfile[f]).get("static") or {} for f in ("copy_deep.cu", "copy_deep_bounded.cu"))
    c.ok((bounded.get("theoretical_occupancy_pct") or 0) >= 2 * (deep.get("theoretical_occupancy_pct") or 1),
         "__launch_bounds__(256, 4) at least doubles the theoretical occupancy")
    c.ok((bounded.get("local_bytes") or 0) > 0, f"... and spills to local memory ({bounded.get('local_bytes')} B/thread)")


def print_bench_table(task, cand, r):
    for s in r.get("shapes") or []:
        cm = (s.get("candidate") or {}).get("median_ms")
        bm = (s.get("baseline") or {}).get("median_ms")
        print(f"    {task['name']:<26} {cand['file']:<14} {shape_str(s):<22} "
              f"cand {cm if cm is not None else '?':>10} ms  torch {bm if bm is not None else '?':>10} ms  "
              f"speedup {s.get('speedup')}  %peak-bw {s.get('pct_peak_bandwidth')}")


def T(name):
    return os.path.join(TASKS, name)


def sanitizer_of(c, r):
    """The report's compute-sanitizer section, printed; None (a failed check) when it did not run."""
    san = r.get("sanitizer")
    if not c.ok(isinstance(san, dict), "the report has a sanitizer section"):
        return None
    tools = san.get("tools") or []
    print(f"    compute-sanitizer {san.get('tool_version')} on {san.get('shapes')}: {san.get('duration_ms')} ms; "
          + ", ".join(f"{t.get('tool')} {t.get('duration_ms')} ms findings {t.get('findings')} ignored {t.get('ignored')}"
                      + (f" ERROR {t.get('error')}" if t.get("error") else "") for t in tools))
    for f in (san.get("findings") or [])[:5]:
        w = f.get("where") or {}
        print(f"    finding: {f.get('tool')} {f.get('kind')} in {w.get('kernel')} at line {w.get('line')}: {f.get('description')}")
    c.ok(san.get("ran") is True, f"compute-sanitizer ran (reason {san.get('reason')!r})")
    return san


def check_sanitizer_clean(c, r, task, cand=None):
    check_pass(c, r, task)
    san = sanitizer_of(c, r)
    if san:
        tools = san.get("tools") or []
        c.ok(sorted(t.get("tool") for t in tools) == ["initcheck", "memcheck", "racecheck", "synccheck"], "all four tools ran")
        c.ok(all(t.get("ran") and not t.get("error") for t in tools), "every tool ran without an error")
        c.ok(not san.get("findings"), f"no findings (got {len(san.get('findings') or [])})")
        c.ok((san.get("duration_ms") or 0) <= 30000, f"the sanitizer step took {san.get('duration_ms')} ms (budget 30 s)")


def sanitizer_finds(tool, kind):
    def check(c, r, task):
        c.ok(r.get("verdict") == "fail", f"verdict is fail (got {r.get('verdict')!r})")
        san = sanitizer_of(c, r)
        if not san:
            return
        hits = [f for f in san.get("findings") or [] if f.get("tool") == tool and f.get("kind") == kind]
        if c.ok(bool(hits), f"{tool} reports {kind}"):
            w = hits[0].get("where") or {}
            c.ok((w.get("line") or 0) > 0, f"with a source line ({w.get('file')}:{w.get('line')})")
            c.ok(tool in (r.get("summary") or ""), f"the summary names {tool}: {r.get('summary')!r}")
        # Every shape passed the plain comparison: only the tool sees the defect.
        c.ok(all(s.get("passed") for s in r.get("shapes") or []), "every shape passed the comparison")
    return check


def check_uninit_smem(c, r, task):
    c.ok(r.get("verdict") == "fail", f"verdict is fail (got {r.get('verdict')!r})")
    fails = list(failing_trials(r))
    c.ok(bool(fails), "a trial failed")
    text = json.dumps(r)
    c.ok("nan" in text.lower() or "disagree" in text.lower(), "the failure shows NaN or runs that disagree")


CASES = {
    # name: (command, task dir or None for --task, candidate or None, expected exit, check)
    "example.verify": ("verify", None, None, 0, every_candidate(check_example_verify)),
    "example.bench": ("bench", None, None, 0, every_candidate(check_example_bench)),
    "control.correct_add": ("verify", T("broken_add"), "correct.cu", 0, single(check_pass, "correct.cu")),
    "control.block_sum": ("verify", T("race_sum"), "block_sum.cu", 0, single(check_pass, "block_sum.cu")),
    "control.small_add": ("verify", T("small_add"), "correct.cu", 0, single(check_pass, "correct.cu")),
    "control.half_precision_passes_fixed_atol":
        ("verify", T("small_add_fixed_atol"), "half_precision.cu", 0, single(check_half_fixed, "half_precision.cu")),
    "broken.oob_write": ("verify", T("broken_add"), "oob_write.cu", 1, single(check_oob, "oob_write.cu")),
    "broken.unwritten_tail": ("verify", T("broken_add"), "unwritten_tail.cu", 1, single(check_unwritten, "unwritten_tail.cu")),
    "broken.writes_nan": ("verify", T("broken_add"), "writes_nan.cu", 1, single(check_nan, "writes_nan.cu")),
    "broken.modifies_input": ("verify", T("broken_add"), "modifies_input.cu", 1, single(check_modified, "modifies_input.cu")),
    "broken.all_zeros": ("verify", T("broken_add"), "all_zeros.cu", 1, single(check_zeros, "all_zeros.cu")),
    "broken.stateful_global": ("verify", T("broken_add"), "stateful_global.cu", 1, single(check_stateful, "stateful_global.cu")),
    "broken.shared_race": ("verify", T("race_sum"), "racy_block_sum.cu", 1, single(check_race, "racy_block_sum.cu")),
    "broken.half_precision": ("verify", T("small_add"), "half_precision.cu", 1, single(check_half, "half_precision.cu")),
    "bench.time_cap": ("bench", T("bimodal_add"), "bimodal.cu", 0, single(check_time_cap, "bimodal.cu")),
    "golden.fused_bias_gelu": ("verify", T("bias_gelu_fp16"), "fused_fp32.cu", 0, single(check_golden_pass, "fused_fp32.cu")),
    "control.bias_gelu_fp32": ("verify", T("bias_gelu_fp32"), "fused.cu", 0, single(check_pass, "fused.cu")),
    "broken.precision_downgrade":
        ("verify", T("bias_gelu_fp32"), "fp16_inside.cu", 1, single(check_downgrade, "fp16_inside.cu")),
    "recover.after_hang": ("verify", T("hang_then_correct"), None, 1, crash_then_pass("hang.cu", ["timeout"])),
    "recover.after_illegal_address":
        ("verify", T("illegal_address_then_correct"), None, 1, crash_then_pass("illegal_address.cu", ["illegal"])),
    "recover.after_multiple_of_block":
        ("verify", T("multiple_of_block_then_correct"), None, 1,
         crash_then_pass("multiple_of_block.cu", ["guard", "illegal"], multiple_of_block_extra)),
    "stream_copy.verify": ("verify", T("stream_copy"), None, 0, every_candidate(check_example_verify)),
    "faults.launch_named": ("verify", T("launch_faults"), None, 1, check_launch_faults),
    # A correct fp16 RMSNorm over 40 trials: an error of one fp16 ulp (a subnormal 5.96e-8 once
    # failed trial 7 or 31) is within the tolerance's ulp floor.
    "golden.rms_norm_fp16_40_trials":
        ("verify", os.path.join(HERE, "..", "..", "resources", "examples", "rms_norm_fp16"), "optimized.cu", 0,
         single(check_pass, "optimized.cu")),
    "sanitize.clean": ("verify", T("sanitize_cases"), "correct.cu", 0, single(check_sanitizer_clean, "correct.cu")),
    "sanitize.oob_read": ("verify", T("sanitize_cases"), "oob_read.cu", 1,
                          single(sanitizer_finds("memcheck", "oob_read"), "oob_read.cu")),
    "sanitize.lane_race": ("verify", T("sanitize_cases"), "lane_race.cu", 1,
                           single(sanitizer_finds("racecheck", "shared_race"), "lane_race.cu")),
    "sanitize.divergent_sync": ("verify", T("sanitize_cases"), "divergent_sync.cu", 1,
                                single(sanitizer_finds("synccheck", "barrier_divergent"), "divergent_sync.cu")),
    "poison.uninit_smem": ("verify", T("sanitize_cases"), "uninit_smem.cu", 1, single(check_uninit_smem, "uninit_smem.cu")),
    "sanitize.examples": ("verify", None, None, 0, every_candidate(check_sanitizer_clean)),
    "profile.stream_copy": ("profile", T("stream_copy"), "copy_vec4.cu", 0, single(check_profile_stream, "copy_vec4.cu")),
    "profile.register_pressure": ("profile", T("register_pressure"), None, 0, check_register_pressure),
    "profile.softmax": ("profile", os.path.join(HERE, "..", "..", "resources", "examples", "softmax_fp32"), "optimized.cu", 0,
                        single(check_profile_softmax, "optimized.cu")),
}


# Extra kforge arguments per case. The hang needs no 10 s default watchdog to be caught: 5 s is
# still far beyond the microseconds its correct twin takes, and it keeps the suite short.
EXTRA_ARGS = {"recover.after_hang": ["--launch-timeout-ms", "5000"], "golden.rms_norm_fp16_40_trials": ["--trials", "40"],
              "sanitize.clean": ["--sanitize"], "sanitize.oob_read": ["--sanitize"], "sanitize.lane_race": ["--sanitize"],
              "sanitize.divergent_sync": ["--sanitize"], "sanitize.examples": ["--sanitize"]}


def compile_tasks(kforge):
    """tasks.compile: the broken kernels must be broken at run time only."""
    c = Check()
    for name in sorted(os.listdir(TASKS)):
        task_dir = os.path.join(TASKS, name)
        if not os.path.isfile(os.path.join(task_dir, "task.json")):
            continue
        # The path relative to the repository (ctest's working directory): the compile cache's key
        # holds the source's path, so every clone of the repository shares the entries.
        rc, doc, err, _ = run_kforge(kforge, ["compile", os.path.relpath(task_dir), "--json"], "", 600)
        if rc == 3:
            print(f"SKIP: kforge compile exited 3 (no NVRTC?): {(err.strip().splitlines() or [''])[-1]}")
            return SKIP
        builds = (doc or {}).get("builds") or []
        c.ok(rc == 0 and bool(builds), f"{name}: kforge compile exit 0 with builds (got {rc})")
        for b in builds:
            r = b.get("result") or {}
            c.ok(r.get("success") is True and r.get("warning_count", 0) == 0,
                 f"{b.get('label')} [{b.get('arch')}]: compiled, {r.get('error_count')} error(s), "
                 f"{r.get('warning_count')} warning(s)")
    print(f"tasks.compile: {'pass' if c.failures == 0 else 'fail'} ({c.failures} failed check(s))")
    return 0 if c.failures == 0 else 1


def promote_case(kforge, case, task_dir, candidate, report_dir, name):
    """promote.*: `kforge promote` end to end on the GPU into a fresh registry, then `registry
    check` and `registry show`. promote.ok must land with held-out shapes in its evidence;
    promote.refused (a kernel no faster than LibTorch) must be refused by a speedup gate."""
    import shutil
    import tempfile
    c = Check()
    with tempfile.TemporaryDirectory(prefix="kf-registry-") as tmp:
        work = os.path.join(tmp, os.path.basename(task_dir.rstrip("/")))
        shutil.copytree(task_dir, work)
        reg = os.path.join(tmp, "registry")
        argv = ["promote", work, "--candidate", candidate, "--registry", reg, "--json"]
        rc, doc, err, secs = run_kforge(kforge, argv, "", 1200)
        if rc == 3:
            why = (err.strip().splitlines() or ["(no message)"])[-1]
            print(f"SKIP: kforge promote exited 3 (no GPU?): {why}")
            save(report_dir, name, {"case": case, "status": "skip", "exit": rc, "note": why})
            return SKIP
        doc = doc or {}
        gates = {g.get("gate"): g for g in doc.get("gates") or []}
        for g in doc.get("gates") or []:
            mark = "ok  " if g.get("passed") else "--  " if g.get("not_run") else "FAIL"
            print(f"  {mark} {g.get('title')}: {g.get('detail')}")
        # A gate that did not run (the sanitizer gate on a host without compute-sanitizer, under the
        # default policy) does not block; every other gate must have passed.
        blocking = [k for k, g in gates.items() if not g.get("passed") and not g.get("not_run")]
        if case == "promote.ok":
            c.ok(rc == 0 and doc.get("ok") is True, f"promoted (exit {rc}, {doc.get('verdict')})")
            c.ok(len(gates) == 9 and not blocking and all(g.get("passed") for k, g in gates.items() if k != "sanitizer"),
                 f"all 9 gates passed or, the sanitizer gate, did not run (blocking: {blocking})")
            san = gates.get("sanitizer") or {}
            print(f"    sanitizer gate: {'passed' if san.get('passed') else 'not run'}: {san.get('detail')}")
            folder = doc.get("folder") or ""
            try:
                with open(os.path.join(folder, "promotion.json")) as f:
                    promo = json.load(f)
            except (OSError, ValueError):
                promo = {}
            c.ok(len(promo.get("held_out_shapes") or []) >= 1, "promotion.json lists the held-out shapes it passed")
            c.ok("not an end-to-end model speedup" in (promo.get("evidence_scope") or ""), "the evidence scope is stated")
            c.ok(bool((promo.get("environment") or {}).get("gpu")), "the GPU is recorded")
            rc2, chk, err2, _ = run_kforge(kforge, ["registry", "check", "--registry", reg, "--json"], "", 120)
            c.ok(rc2 == 0 and (chk or {}).get("ok") is True and (chk or {}).get("kernels") == 1,
                 f"registry check is clean (exit {rc2})")
            rc3, lst, _, _ = run_kforge(kforge, ["registry", "list", "--registry", reg, "--json"], "", 120)
            ids = [k.get("id") for k in (lst or {}).get("kernels") or []]
            c.ok(ids == [doc.get("id")], f"registry list shows {doc.get('id')} (got {ids})")
            note = f"{doc.get('id')}: " + "; ".join(g.get("detail", "") for k, g in gates.items()
                                                    if k in ("held_out", "geomean_speedup"))
        elif case == "promote.sanitizer_refused":
            c.ok(rc == 1 and doc.get("ok") is False, f"refused with exit 1 (got {rc})")
            co = gates.get("correctness") or {}
            c.ok(co.get("passed") is True, f"the correctness gate passed (every shape right): {co.get('detail')!r}")
            sg = gates.get("sanitizer") or {}
            c.ok(blocking[:1] == ["sanitizer"] and (sg.get("detail") or "").startswith("compute-sanitizer "),
                 f"refused by the sanitizer gate for a compute-sanitizer finding: {sg.get('detail')!r}")
            note = sg.get("detail") or ""
        else:
            failed = blocking
            c.ok(rc == 1 and doc.get("ok") is False, f"refused with exit 1 (got {rc})")
            c.ok(bool(failed) and failed[0] in ("per_shape_speedup", "geomean_speedup"),
                 f"refused by a speedup gate (first failure: {failed[:1]})")
            c.ok(not os.path.exists(os.path.join(reg, "verified_kernels.json")) or
                 not json.load(open(os.path.join(reg, "verified_kernels.json"))).get("kernels"),
                 "nothing was written to the registry")
            note = doc.get("verdict", "")
    status = "pass" if c.failures == 0 else "fail"
    print(f"{case}: {status} ({c.failures} failed check(s), kforge took {secs:.1f} s)")
    save(report_dir, name, {"case": case, "status": status, "exit": rc, "seconds": round(secs, 2),
                            "failed_checks": c.failures, "note": note, "output": doc, "stderr_tail": err[-4000:]})
    return 0 if c.failures == 0 else 1


def read_npy(path):
    """A .npy file with the standard library only: (descr, shape, raw bytes). Proves the files are
    readable outside KernelForge without NumPy."""
    import ast
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", f"{path}: no .npy magic"
    major = data[6]
    hlen = struct.unpack("<H", data[8:10])[0] if major == 1 else struct.unpack("<I", data[8:12])[0]
    start = 10 if major == 1 else 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    body = data[start + hlen:]
    assert (start + hlen) % 64 == 0, f"{path}: data not 64-byte aligned"
    return header["descr"], tuple(header["shape"]), body


def failing_case_tools(kforge, case, report_dir, name):
    """inspect.dump, repro.roundtrip.*, shrink.tail_block: the failing-case tools end to end."""
    import shutil
    import tempfile
    c = Check()
    note = ""
    secs = 0.0
    doc = None
    err = ""
    rc = None
    with tempfile.TemporaryDirectory(prefix="kf-case-") as tmp:
        if case == "inspect.dump":
            dump = os.path.join(tmp, "dump")
            rc, doc, err, secs = run_kforge(kforge, ["verify", T("broken_add"), "--candidate", "unwritten_tail.cu",
                                                     "--dump", dump, "--json"], "", 600)
            if rc == 3:
                return skip(report_dir, name, case, rc, err)
            r = (reports_of(doc) or [{}])[0]
            c.ok(rc == 1 and r.get("dump_dir") == dump, f"failed (exit {rc}) with dump_dir {r.get('dump_dir')}")
            checked = 0
            for s in r.get("shapes") or []:
                n = (s.get("shape") or {}).get("N")
                saved = [t for t in s.get("trials") or [] if t.get("case")]
                if n % 4 == 0:
                    c.ok(not saved, f"N={n} passed and saved nothing")
                    continue
                if not c.ok(len(saved) == 1 and not saved[0].get("passed"),
                            f"N={n}: exactly the first failing trial was saved (first_failing)"):
                    continue
                folder = os.path.join(dump, saved[0]["case"])
                with open(os.path.join(folder, "case.json")) as f:
                    meta = json.load(f)
                descr, shape, body = read_npy(os.path.join(folder, "actual", "c.npy"))
                c.ok(descr == "<f4" and shape == (n,), f"N={n}: actual/c.npy is <f4 {shape}")
                sentinel = bytes.fromhex(meta["outputs"][0]["sentinel_hex"][0])
                tail = [body[4 * i:4 * i + 4] == sentinel for i in range(4 * (n // 4), n)]
                head = [body[4 * i:4 * i + 4] == sentinel for i in range(0, min(n, 4 * (n // 4)))]
                c.ok(all(tail) and not any(head), f"N={n}: the sentinel sits at exactly {4 * (n // 4)}..{n - 1}")
                _, eshape, ebody = read_npy(os.path.join(folder, "expected", "c.npy"))
                _, ashape, abody = read_npy(os.path.join(folder, "inputs", "a.npy"))
                _, bshape, bbody = read_npy(os.path.join(folder, "inputs", "b.npy"))
                e = struct.unpack(f"<{n}d", ebody)
                a_ = struct.unpack(f"<{n}f", abody)
                b_ = struct.unpack(f"<{n}f", bbody)
                worst = max(abs(e[i] - (a_[i] + b_[i])) for i in range(n))
                c.ok(worst < 1e-5, f"N={n}: expected == a + b from the saved inputs (max diff {worst:.2e})")
                checked += 1
            c.ok(checked >= 3, f"{checked} saved cases checked")
            note = f"{checked} cases checked"
        elif case.startswith("repro.roundtrip"):
            cand = case.split(".")[-1] + ".cu"
            bundle = os.path.join(tmp, "bundle")
            rc, doc, err, secs = run_kforge(kforge, ["verify", T("broken_add"), "--candidate", cand,
                                                     "--export-repro", bundle, "--json"], "", 600)
            if rc == 3:
                return skip(report_dir, name, case, rc, err)
            c.ok(rc == 1 and os.path.isfile(os.path.join(bundle, "repro.json")), f"failed (exit {rc}) and exported a bundle")
            rc2, doc2, err2, secs2 = run_kforge(kforge, ["verify", "--repro", bundle, "--json"], "", 600)
            rep = (doc2 or {}).get("repro") or {}
            c.ok(rc2 == 1, f"the re-run fails again (exit {rc2})")
            c.ok(rep.get("reproduced") is True, f"reproduced: {rep.get('summary')}")
            c.ok(rep.get("same_mismatch_set") is True, "the same elements are wrong")
            c.ok(rep.get("actual_bitwise_equal") is True, "the outputs are bit-for-bit equal")
            c.ok((rep.get("reference_drift") or {}).get("elements") == 0, "the reference did not drift")
            c.ok((doc2 or {}).get("inputs") == "file" and (doc2 or {}).get("mode") == "repro",
                 "the re-run used the saved inputs (inputs: file, mode: repro)")
            # Moving the bundle must not matter; editing its task must be refused.
            moved = os.path.join(tmp, "moved")
            shutil.move(bundle, moved)
            with open(os.path.join(moved, "task", "task.json"), "a") as f:
                f.write("\n")
            rc3, _, err3, _ = run_kforge(kforge, ["verify", "--repro", moved], "", 120)
            c.ok(rc3 == 1, f"whitespace in task.json changes no hash: the moved bundle still runs (exit {rc3})")
            with open(os.path.join(moved, "task", cand), "a") as f:
                f.write("// edited\n")
            rc4, _, err4, _ = run_kforge(kforge, ["verify", "--repro", moved], "", 120)
            c.ok(rc4 == 2 and "edited" in err4, f"an edited bundle source is refused (exit {rc4})")
            secs += secs2
            doc = {"export": doc, "repro": doc2}
            note = rep.get("summary", "")
        elif case == "shrink.tail_block":
            rc, doc, err, secs = run_kforge(kforge, ["verify", T("tail_block"), "--shrink", "--json"], "", 900)
            if rc == 3:
                return skip(report_dir, name, case, rc, err)
            sh = (doc or {}).get("shrink") or {}
            smallest = (sh.get("smallest") or {})
            n = smallest.get("N") if isinstance(smallest, dict) and "N" in smallest else (smallest.get("values") or {}).get("N")
            c.ok(rc == 1, f"exit 1 (a failing shape) (got {rc})")
            c.ok(n == 257, f"the smallest failing N is 257 (got {n})")
            c.ok(sh.get("minimal") is True, "1-minimal: N=256 passes")
            conf = (doc or {}).get("confirmation") or {}
            c.ok(conf.get("verdict") == "fail", "the confirmation run fails at the smallest shape")
            note = f"{sh.get('start')} -> {smallest}; {sh.get('probes')} shapes in {sh.get('requests')} requests"
    status = "pass" if c.failures == 0 else "fail"
    print(f"{case}: {status} ({c.failures} failed check(s), kforge took {secs:.1f} s) {note}")
    save(report_dir, name, {"case": case, "status": status, "exit": rc, "seconds": round(secs, 2),
                            "failed_checks": c.failures, "note": note, "output": doc, "stderr_tail": err[-4000:]})
    return 0 if c.failures == 0 else 1


def skip(report_dir, name, case, rc, err):
    why = (err.strip().splitlines() or ["(no message)"])[-1]
    print(f"SKIP: kforge exited 3 (no GPU?): {why}")
    save(report_dir, name, {"case": case, "status": "skip", "exit": rc, "note": why})
    return SKIP


FAILING_CASE_TOOLS = ["inspect.dump", "repro.roundtrip.unwritten_tail", "repro.roundtrip.writes_nan", "shrink.tail_block"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", nargs="?")
    ap.add_argument("--kforge", help="the kforge executable")
    ap.add_argument("--task", help="task folder (example.* and promote.* cases)")
    ap.add_argument("--candidate", help="candidate file (promote.* cases; default optimized.cu)")
    ap.add_argument("--report-dir", help="write the kforge JSON (and this check's verdict) here")
    ap.add_argument("--name", help="file name for the saved report (default: the case)")
    ap.add_argument("--list", action="store_true", help="print the case names")
    a = ap.parse_args()
    if a.list:
        print("\n".join(list(CASES) + ["tasks.compile", "promote.ok", "promote.refused", "promote.sanitizer_refused", "faults.gpu_full", "endpoint.staged"] + FAILING_CASE_TOOLS))
        return 0
    if a.case == "tasks.compile" and a.kforge:
        return compile_tasks(a.kforge)
    if a.case in ("promote.ok", "promote.refused", "promote.sanitizer_refused") and a.kforge and a.task:
        return promote_case(a.kforge, a.case, a.task, a.candidate or "optimized.cu", a.report_dir, a.name or a.case)
    if a.case == "faults.gpu_full" and a.kforge:
        return gpu_full_case(a.kforge, a.report_dir, a.name or a.case)
    if a.case == "endpoint.staged" and a.kforge:
        return staged_case(a.kforge, a.report_dir, a.name or a.case)
    if a.case in FAILING_CASE_TOOLS and a.kforge:
        return failing_case_tools(a.kforge, a.case, a.report_dir, a.name or a.case)
    if a.case not in CASES or not a.kforge:
        ap.error(f"give --kforge and one of: {', '.join(CASES)}")
    command, task_dir, candidate, want_rc, check = CASES[a.case]
    task_dir = task_dir or a.task
    if not task_dir:
        ap.error(f"{a.case} needs --task")
    task = task_json(task_dir)

    argv = [command, task_dir] + (["--candidate", candidate] if candidate else []) + ["--json"] \
        + EXTRA_ARGS.get(a.case, [])
    timeout = float(os.environ.get("KF_GPU_CHECK_TIMEOUT", "1200"))
    env_args = "KF_GPU_BENCH_ARGS" if command == "bench" else "KF_GPU_VERIFY_ARGS"
    rc, doc, err, secs = run_kforge(a.kforge, argv, env_args, timeout)
    reports = reports_of(doc)
    name = a.name or a.case

    if rc == 3 and not reports:
        why = (err.strip().splitlines() or ["(no message)"])[-1]
        print(f"SKIP: kforge {command} exited 3 (environment error, e.g. no GPU) without a report: {why}")
        save(a.report_dir, name, {"case": a.case, "status": "skip", "exit": rc, "note": why,
                                  "stderr_tail": err[-4000:]})
        return SKIP

    for r in reports:
        describe(r)
    c = Check()
    if rc == 2:
        print("  hint  exit 2 is a usage error: does this kforge have the `%s` command and these options?" % command)
    c.ok(rc == want_rc, f"exit code {want_rc} (got {rc})")
    if c.ok(bool(reports), "the JSON output has reports"):
        if isinstance(doc, dict) and "ok" in doc:
            c.ok(doc["ok"] is (want_rc == 0), f"top-level ok == {want_rc == 0}")
        check(c, reports, task)
    status = "pass" if c.failures == 0 else "fail"
    print(f"{a.case}: {status} ({c.failures} failed check(s), kforge took {secs:.1f} s)")
    save(a.report_dir, name, {"case": a.case, "status": status, "exit": rc, "seconds": round(secs, 2),
                              "failed_checks": c.failures, "note": "; ".join(c.failed[:3]), "output": doc,
                              "stderr_tail": err[-4000:]})
    return 0 if c.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
