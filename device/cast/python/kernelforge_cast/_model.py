"""Models inside a .cast package (docs/cast-format.md, "Models"): the checks, the same rules as
KernelForge's reader (engine/cast/CastModel.cpp), and loading without running code from the file.

A model is a torch.export program (.pt2) or a TorchScript module. A .pt2 may hold only the
program's JSON, raw weight and constant payloads and its sample inputs: a pickled payload, a
custom object or an AOTInductor/ExecuTorch binary is refused before torch sees the file. Sample
inputs and a tensors file are read with ``torch.load(weights_only=True)`` first, so the load that
torch.export does afterwards never needs its unrestricted fallback.
"""

import io
import json
import re
import zipfile

from ._archive import PackageError

SCALAR_TYPES = {1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "fp16", 7: "fp32", 8: "fp64",
                12: "bool", 13: "bf16"}
DISTRIBUTIONS = {"normal", "uniform", "randint", "ones", "zeros"}
RUN_SCOPE = "model-level, end to end"
_TS_CALL = re.compile(r"(?<![A-Za-z0-9_.])torch\.(?:ops\.([A-Za-z0-9_]+)\.)?([A-Za-z0-9_]+)\(")


def _bad(origin, entry, why):
    raise PackageError("%s%s: %s" % (origin, (": " + entry) if entry else "", why))


def _targets(v, out):
    if isinstance(v, dict):
        t = v.get("target")
        if isinstance(t, str) and "inputs" in v and "outputs" in v:
            out.add(t)
        for c in v.values():
            _targets(c, out)
    elif isinstance(v, list):
        for c in v:
            _targets(c, out)


def _payload_config(z, name, origin):
    if name not in z.namelist():
        return
    try:
        cfg = json.loads(z.read(name))
    except (ValueError, RecursionError) as e:
        _bad(origin, name, "is not JSON: %s" % e)
    if not isinstance(cfg, dict) or not isinstance(cfg.get("config"), dict):
        _bad(origin, name, "is not a payload configuration ({\"config\": {...}})")
    for fqn, meta in cfg["config"].items():
        if not isinstance(meta, dict):
            _bad(origin, name, "the entry for \"%s\" is not an object" % fqn)
        if meta.get("use_pickle", False):
            _bad(origin, name, "\"%s\" is stored as a pickle; loading it would run code from the file" % fqn)
        if str(meta.get("path_name", "")).startswith("custom_obj_"):
            _bad(origin, name, "\"%s\" is a custom object; loading it would run code from the file" % fqn)


def _size(s):
    if isinstance(s, dict):
        if isinstance(s.get("as_int"), int):
            return s["as_int"]
        e = s.get("as_expr")
        if isinstance(e, dict) and isinstance(e.get("expr_str"), str):
            # A symbolic extent: "s22", or sympy's "Symbol('s22', positive=True, integer=True)".
            text = e["expr_str"]
            if text.startswith("Symbol('") and "'" in text[8:]:
                text = text[8:text.index("'", 8)]
            return text
    return "?"


def inspect_model(data, origin):
    """What a model file is and calls: {format, torch_version, inputs, graph_ops, cast_ops,
    has_sample_inputs, prefix, program}. Raises PackageError for anything the rules refuse."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = z.namelist()
    except (zipfile.BadZipFile, ValueError) as e:
        _bad(origin, "", "is not a torch archive: %s" % e)
    if not names:
        _bad(origin, "", "the archive is empty")
    if "/" not in names[0]:
        _bad(origin, names[0], "entries of a torch archive live under one top folder")
    prefix = names[0].split("/", 1)[0] + "/"
    for n in names:
        if not n.startswith(prefix):
            _bad(origin, n, "is outside the archive's top folder \"%s\"" % prefix)
    info = {"prefix": prefix, "graph_ops": [], "cast_ops": [], "inputs": [], "torch_version": "",
            "has_sample_inputs": False, "program": None}
    if prefix + "archive_format" in names and z.read(prefix + "archive_format") == b"pt2":
        info["format"] = "torch.export"
        program = None
        for n in names:
            rel = n[len(prefix):]
            allowed = rel in ("archive_format", "archive_version", "byteorder", ".data/version",
                              ".data/serialization_id") or rel.startswith(
                ("data/weights/", "data/constants/", "data/sample_inputs/", "extra/")) or (
                rel.startswith("models/") and rel.endswith(".json") and len(rel) > 12)
            if not allowed:
                _bad(origin, n, "holds \"%s\", which is not part of a torch.export program (compiled AOTInductor or "
                                "ExecuTorch artefacts are not accepted: they are native code)" % rel)
            if rel.startswith("data/constants/custom_obj_"):
                _bad(origin, n, "is a custom object; loading it would run code from the file")
            if rel.startswith("models/"):
                if program is not None:
                    _bad(origin, n, "the archive holds more than one program; a package model is one")
                program = n
        if program is None:
            _bad(origin, prefix + "models/", "the archive holds no program (models/<name>.json)")
        name = program[len(prefix) + 7:-5]
        _payload_config(z, prefix + "data/weights/%s_weights_config.json" % name, origin)
        _payload_config(z, prefix + "data/constants/%s_constants_config.json" % name, origin)
        info["has_sample_inputs"] = prefix + "data/sample_inputs/%s.pt" % name in names
        info["program"] = name
        try:
            ep = json.loads(z.read(program))
        except (ValueError, RecursionError) as e:
            _bad(origin, program, "is not JSON: %s" % e)
        gm = ep.get("graph_module") if isinstance(ep, dict) else None
        graph = gm.get("graph") if isinstance(gm, dict) else None
        sig = gm.get("signature") if isinstance(gm, dict) else None
        if not isinstance(graph, dict) or not isinstance(sig, dict) or not isinstance(graph.get("nodes"), list):
            _bad(origin, program, "is not a serialized ExportedProgram (no graph_module.graph.nodes)")
        if isinstance(ep.get("torch_version"), str):
            info["torch_version"] = ep["torch_version"]
        targets = set()
        _targets(graph["nodes"], targets)
        info["graph_ops"] = sorted(targets)
        values = graph.get("tensor_values") if isinstance(graph.get("tensor_values"), dict) else {}
        for spec in sig.get("input_specs", []) if isinstance(sig.get("input_specs"), list) else []:
            if not isinstance(spec, dict) or "user_input" not in spec:
                continue
            arg = spec["user_input"].get("arg", {}) if isinstance(spec["user_input"], dict) else {}
            tname = arg.get("as_tensor", {}).get("name", "") if isinstance(arg, dict) and isinstance(
                arg.get("as_tensor"), dict) else ""
            if not tname:
                info["inputs"].append({"name": "(not a tensor)", "dtype": "scalar", "shape": []})
                continue
            meta = values.get(tname, {}) if isinstance(values.get(tname), dict) else {}
            code = meta.get("dtype", 0) if isinstance(meta.get("dtype"), int) else 0
            sizes = meta.get("sizes") if isinstance(meta.get("sizes"), list) else []
            info["inputs"].append({"name": tname, "dtype": SCALAR_TYPES.get(code, "scalar type %d" % code),
                                   "shape": [_size(s) for s in sizes]})
    elif prefix + "data.pkl" in names and prefix + "constants.pkl" in names:
        info["format"] = "torchscript"
        calls = set()
        for n in names:
            rel = n[len(prefix):]
            if rel.startswith("code/") and rel.endswith(".py"):
                for ns, fn in _TS_CALL.findall(z.read(n).decode("utf-8", "replace")):
                    calls.add("%s.%s" % (ns or "aten", fn))
        info["graph_ops"] = sorted(calls)
    else:
        _bad(origin, "", "is neither a torch.export program (.pt2) nor a TorchScript module")
    for op in info["graph_ops"]:
        for p in ("torch.ops.cast.", "cast."):
            if op.startswith(p):
                info["cast_ops"].append(op[len(p):].split(".")[0])
    return info


def check_input_spec(spec, p, fail):
    """{"inputs": [{name, dtype, shape, distribution, low, high}]}; ``fail(pointer, why)`` raises."""
    from ._manifest import DTYPES as DTYPE_NAMES
    if not isinstance(spec, dict) or set(spec) != {"inputs"} or not isinstance(spec["inputs"], list):
        fail(p, "is {\"inputs\": [...]}")
    if not spec["inputs"]:
        fail(p + "/inputs", "lists at least one input")
    for i, t in enumerate(spec["inputs"]):
        tp = "%s/inputs/%d" % (p, i)
        if not isinstance(t, dict) or not {"name", "dtype", "shape"} <= set(t) or \
                set(t) - {"name", "dtype", "shape", "distribution", "low", "high"}:
            fail(tp, "an input is {name, dtype, shape, distribution, low, high}")
        if t["dtype"] not in DTYPE_NAMES:
            fail(tp + "/dtype", "unknown dtype %r" % (t["dtype"],))
        if not isinstance(t["shape"], list) or not all(isinstance(e, int) and not isinstance(e, bool)
                                                       and 0 <= e <= 2 ** 31 for e in t["shape"]):
            fail(tp + "/shape", "is a list of extents 0 to 2^31")
        dist = t.get("distribution", "normal")
        if dist not in DISTRIBUTIONS:
            fail(tp + "/distribution", "is one of normal, uniform, randint, ones, zeros")
        if dist == "randint" and "high" not in t:
            fail(tp, "a randint input needs \"high\" (exclusive), e.g. the vocabulary size")
        lo, hi = t.get("low", 0), t.get("high", 1)
        if dist in ("uniform", "randint") and not lo < hi:
            fail(tp, "needs low < high")


def open_model(manifest, files, name=None):
    """(entry, ExportedProgram or ScriptModule) of model ``name`` (default: the first)."""
    import torch
    models = manifest.get("models") or []
    if not models:
        raise PackageError("the package carries no model (export one with `kforge cast export ... --model FILE`)")
    entry = models[0] if name is None else next((m for m in models if m["name"] == name), None)
    if entry is None:
        raise PackageError("the package has no model %r (it has: %s)" % (name, ", ".join(m["name"] for m in models)))
    data = files[entry["file"]]
    info = inspect_model(data, entry["file"])
    if entry["format"] == "torchscript":
        return entry, torch.jit.load(io.BytesIO(data), map_location="cpu")
    if info["has_sample_inputs"]:
        sample = zipfile.ZipFile(io.BytesIO(data)).read(info["prefix"] + "data/sample_inputs/%s.pt" % info["program"])
        if sample:
            try:
                torch.load(io.BytesIO(sample), weights_only=True)
            except Exception as e:  # noqa: BLE001 - any refusal of the restricted loader
                raise PackageError("%s: its sample inputs are not plain tensors (%s); export them with --inputs"
                                   % (entry["file"], str(e).splitlines()[0])) from None
    import warnings
    with warnings.catch_warnings():
        # torch.export.load maps the weights from our read-only bytes; they are never written.
        warnings.filterwarnings("ignore", message="The given buffer is not writable")
        return entry, torch.export.load(io.BytesIO(data))


def make_inputs(entry, files, program, device, seed=0):
    """The model's inputs as (args tuple, kwargs dict), on ``device``."""
    import torch
    from ._reference import DTYPES
    kind = entry["example"]["kind"]
    if kind == "program":
        args, kwargs = program.example_inputs
    elif kind == "tensors":
        loaded = torch.load(io.BytesIO(files[entry["example"]["file"]]), weights_only=True)
        if isinstance(loaded, torch.Tensor):
            loaded = (loaded,)
        if isinstance(loaded, dict):
            args, kwargs = (), loaded
        elif isinstance(loaded, (tuple, list)):
            args, kwargs = tuple(loaded), {}
        else:
            raise PackageError("%s: holds %s; a tuple, list or dict of tensors is expected"
                               % (entry["example"]["file"], type(loaded).__name__))
    else:
        spec = json.loads(files[entry["example"]["file"]])
        g = torch.Generator().manual_seed(seed)
        args = []
        for t in spec["inputs"]:
            dtype, shape, dist = DTYPES[t["dtype"]], t["shape"], t.get("distribution", "normal")
            lo, hi = t.get("low", 0), t.get("high", 1)
            if dist == "randint":
                x = torch.randint(int(lo), int(hi), shape, generator=g, dtype=torch.int64).to(dtype)
            elif dist == "ones":
                x = torch.ones(shape, dtype=dtype)
            elif dist == "zeros":
                x = torch.zeros(shape, dtype=dtype)
            elif dist == "uniform":
                x = (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
            else:
                x = torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
            args.append(x)
        args, kwargs = tuple(args), {}
    move = lambda v: v.to(device) if isinstance(v, torch.Tensor) else v  # noqa: E731
    return tuple(move(a) for a in args), {k: move(v) for k, v in kwargs.items()}


def _check_timing(v, p, fail):
    if v is None:
        return
    if not isinstance(v, dict) or set(v) != {"median", "min", "max", "p10", "p90"}:
        fail(p, "is {median, min, max, p10, p90} or null")
    for k, x in v.items():
        if not isinstance(x, (int, float)) or isinstance(x, bool) or x < 0:
            fail(p + "/" + k, "is a time in ms, not negative")


def check_model_run(run, p, model, fail):
    """A model run's evidence (what ``run --evidence`` writes) for model ``model``."""
    keys = {"scope", "model", "package", "created_at", "device", "gpu", "torch", "cuda_driver", "runtime", "inputs",
            "runs", "warmup", "with_kernels_ms", "without_kernels_ms", "speedup", "substitution", "fallbacks", "check"}
    optional = {"with_kernels_ms", "without_kernels_ms"}
    if not isinstance(run, dict):
        fail(p, "must be an object")
    for k in run:
        if k not in keys:
            fail(p + "/" + k, "unknown key \"%s\"" % k)
    for k in keys - optional:
        if k not in run:
            fail(p + "/" + k, "is missing")
    if run["scope"] != RUN_SCOPE:
        fail(p + "/scope", "a model run's scope is \"%s\"" % RUN_SCOPE)
    if run["model"] != model:
        fail(p + "/model", "is the run of another model, not \"%s\"" % model)
    if not isinstance(run["package"], dict) or set(run["package"]) != {"name", "version"}:
        fail(p + "/package", "is {name, version}")
    for k in ("created_at", "device", "gpu", "torch", "cuda_driver", "runtime"):
        if not isinstance(run[k], str):
            fail(p + "/" + k, "must be a string")
    if not isinstance(run["inputs"], list):
        fail(p + "/inputs", "must be a list")
    for k, lo in (("runs", 1), ("warmup", 0)):
        if not isinstance(run[k], int) or isinstance(run[k], bool) or run[k] < lo:
            fail(p + "/" + k, "is an integer >= %d" % lo)
    _check_timing(run.get("with_kernels_ms"), p + "/with_kernels_ms", fail)
    _check_timing(run.get("without_kernels_ms"), p + "/without_kernels_ms", fail)
    if run["speedup"] is not None and (not isinstance(run["speedup"], (int, float)) or isinstance(run["speedup"], bool)):
        fail(p + "/speedup", "is a number, or null when only one side was timed")
    if not isinstance(run["substitution"], list):
        fail(p + "/substitution", "must be a list")
    for i, s in enumerate(run["substitution"]):
        sp = "%s/substitution/%d" % (p, i)
        if not isinstance(s, dict) or set(s) != {"node", "op", "status", "cast_op", "reason"} or \
                not all(isinstance(v, str) for v in s.values()):
            fail(sp, "is {node, op, status, cast_op, reason}, all strings")
        if s["status"] not in ("substituted", "kept"):
            fail(sp + "/status", "is \"substituted\" or \"kept\"")
    if not isinstance(run["fallbacks"], dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in run["fallbacks"].values()):
        fail(p + "/fallbacks", "maps op names to counts")
    if run["check"] is not None and not isinstance(run["check"], dict):
        fail(p + "/check", "is null or the comparison's result")


def check_models(m, entries, fail):
    """The models of a schema 2 manifest, against the files they name. ``fail(pointer, why)`` raises."""
    models = m.get("models")
    if not isinstance(models, list) or not models:
        fail("/models", "a schema 2 package holds at least one model (without models it is schema 1)")
    op_names = {op["name"] for op in m["ops"]}
    listed = {f["path"] for f in m["files"]}
    seen = set()
    keys = {"name", "format", "file", "torch_version", "inputs", "graph_ops", "uses", "example", "runs"}

    def need_file(v, fp):
        if not isinstance(v, str) or v not in listed:
            fail(fp, "names %r, which is not a file of the package" % (v,))
        return v

    from ._manifest import is_op_name
    for i, e in enumerate(models):
        p = "/models/%d" % i
        if not isinstance(e, dict):
            fail(p, "must be an object")
        for k in e:
            if k not in keys:
                fail(p + "/" + k, "unknown key \"%s\"" % k)
        for k in keys:
            if k not in e:
                fail(p + "/" + k, "is missing")
        if not is_op_name(e["name"]):
            fail(p + "/name", "%r is not an identifier" % (e["name"],))
        if e["name"] in seen:
            fail(p + "/name", "two models are named \"%s\"" % e["name"])
        seen.add(e["name"])
        if e["format"] not in ("torch.export", "torchscript"):
            fail(p + "/format", "is \"torch.export\" or \"torchscript\"")
        path = need_file(e["file"], p + "/file")
        try:
            info = inspect_model(entries[path], path)
        except PackageError as err:
            fail(p + "/file", str(err))
        if info["format"] != e["format"]:
            fail(p + "/format", "says \"%s\" but the file is a %s model" % (e["format"], info["format"]))
        if e["torch_version"] != info["torch_version"]:
            fail(p + "/torch_version", "says %r; the file was written by %r" % (e["torch_version"], info["torch_version"]))
        if e["graph_ops"] != info["graph_ops"]:
            fail(p + "/graph_ops", "is not the list of operators the model file calls (the manifest or the file was edited)")
        if e["inputs"] != info["inputs"]:
            fail(p + "/inputs", "is not the inputs the model file was exported with")
        for c in info["cast_ops"]:
            if c not in op_names:
                fail(p + "/file", "the model calls cast::%s, which this package does not hold" % c)
        if not isinstance(e["uses"], list):
            fail(p + "/uses", "must be a list")
        for j, u in enumerate(e["uses"]):
            if u not in op_names:
                fail("%s/uses/%d" % (p, j), "the model uses cast::%s, which this package does not hold" % (u,))
        ex = e["example"]
        if not isinstance(ex, dict) or set(ex) != {"kind", "file"}:
            fail(p + "/example", "is {kind, file}")
        if ex["kind"] == "program":
            if ex["file"] is not None:
                fail(p + "/example/file", "is null: the program's own sample inputs are used")
            if not info["has_sample_inputs"]:
                fail(p + "/example/kind", "the model file carries no sample inputs; export with --inputs")
        elif ex["kind"] in ("shapes", "tensors"):
            f = need_file(ex["file"], p + "/example/file")
            if ex["kind"] == "shapes":
                try:
                    spec = json.loads(entries[f])
                except (ValueError, RecursionError) as err:
                    fail(p + "/example/file", "%s is not JSON: %s" % (f, err))
                check_input_spec(spec, "", lambda q, why: fail(p + "/example/file", "%s#%s: %s" % (f, q, why)))
        else:
            fail(p + "/example/kind", "is \"program\", \"shapes\" or \"tensors\"")
        if not isinstance(e["runs"], list):
            fail(p + "/runs", "must be a list")
        for j, r in enumerate(e["runs"]):
            f = need_file(r, "%s/runs/%d" % (p, j))
            try:
                run = json.loads(entries[f])
            except (ValueError, RecursionError) as err:
                fail("%s/runs/%d" % (p, j), "%s is not JSON: %s" % (f, err))
            check_model_run(run, "", e["name"], lambda q, why, f=f, j=j: fail("%s/runs/%d" % (p, j), "%s#%s: %s" % (f, q, why)))


__all__ = ["inspect_model", "check_input_spec", "check_model_run", "check_models", "open_model", "make_inputs",
           "RUN_SCOPE"]
