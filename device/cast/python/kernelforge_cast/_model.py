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

from ._archive import PackageError, read_archive, strict_json

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


_PAYLOAD_NAME = {"weights": re.compile(r"weight_[0-9]{1,9}\Z"), "constants": re.compile(r"tensor_[0-9]{1,9}\Z")}


def _payload_config(entries, name, origin, kind):
    """The payload files a weights or constants config names, after checking that none is a
    pickle or a custom object (torch would unpickle those without weights_only) and that each has
    the name torch.export.save gives (weight_N, tensor_N): a config may not bless another file,
    such as the legacy model.pt that torch unpickles before it reads the config."""
    if name not in entries:
        _bad(origin, name, "is missing; torch.export.save writes it, and without it torch falls back to "
                           "loading a pickle")
    cfg = strict_json(entries[name], "%s: %s" % (origin, name))
    if not isinstance(cfg, dict) or not isinstance(cfg.get("config"), dict):
        _bad(origin, name, "is not a payload configuration ({\"config\": {...}})")
    files = set()
    for fqn, meta in cfg["config"].items():
        if not isinstance(meta, dict):
            _bad(origin, name, "the entry for \"%s\" is not an object" % fqn)
        pickled = meta.get("use_pickle", False)
        if not isinstance(pickled, bool):
            _bad(origin, name, "\"%s\": use_pickle is not true or false" % fqn)
        if pickled:
            _bad(origin, name, "\"%s\" is stored as a pickle; loading it would run code from the file" % fqn)
        path = meta.get("path_name", "")
        if not isinstance(path, str) or not path:
            _bad(origin, name, "\"%s\" names no payload file" % fqn)
        if path.startswith("custom_obj_"):
            _bad(origin, name, "\"%s\" is a custom object; loading it would run code from the file" % fqn)
        if not _PAYLOAD_NAME[kind].match(path):
            _bad(origin, name, "\"%s\" names the payload %r; torch.export.save names them %s" % (
                fqn, path, "weight_N" if kind == "weights" else "tensor_N"))
        files.add(path)
    return files


def _size(s):
    if isinstance(s, dict):
        v = s.get("as_int")
        if isinstance(v, int) and not isinstance(v, bool):
            return v
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
    has_sample_inputs, prefix, program}. The file goes through the package's own archive checks
    first. Raises PackageError for anything the rules refuse (the same as engine/cast/CastModel.cpp)."""
    entries, names = read_archive(io.BytesIO(data), origin)
    if "/" not in names[0]:
        _bad(origin, names[0], "entries of a torch archive live under one top folder")
    prefix = names[0].split("/", 1)[0] + "/"
    for n in names:
        if not n.startswith(prefix):
            _bad(origin, n, "is outside the archive's top folder \"%s\"" % prefix)
    info = {"prefix": prefix, "graph_ops": [], "cast_ops": [], "inputs": [], "torch_version": "",
            "has_sample_inputs": False, "program": None, "entries": entries}
    if entries.get(prefix + "archive_format") == b"pt2":
        info["format"] = "torch.export"
        program = prefix + "models/model.json"
        if program not in entries:
            _bad(origin, prefix + "models/", "the archive holds no program models/model.json (torch.export.save "
                                             "writes one program, named model)")
        weights = _payload_config(entries, prefix + "data/weights/model_weights_config.json", origin, "weights")
        constants = _payload_config(entries, prefix + "data/constants/model_constants_config.json", origin, "constants")
        allowed = {prefix + n for n in ("archive_format", "archive_version", "byteorder", ".data/version",
                                        ".data/serialization_id", "models/model.json",
                                        "data/weights/model_weights_config.json",
                                        "data/constants/model_constants_config.json", "data/sample_inputs/model.pt")}
        allowed |= {prefix + "data/weights/" + f for f in weights}
        allowed |= {prefix + "data/constants/" + f for f in constants}
        for n in names:
            if n not in allowed and not n.startswith(prefix + "extra/"):
                _bad(origin, n, "holds \"%s\", which is not part of a torch.export program as torch.export.save "
                                "writes it (pickled payloads and compiled AOTInductor or ExecuTorch artefacts are "
                                "not accepted)" % n[len(prefix):])
        info["has_sample_inputs"] = prefix + "data/sample_inputs/model.pt" in entries
        info["program"] = "model"
        ep = strict_json(entries[program], "%s: %s" % (origin, program))
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
            user = spec["user_input"]
            arg = user.get("arg") if isinstance(user, dict) else None
            tensor = arg.get("as_tensor") if isinstance(arg, dict) else None
            tname = tensor.get("name") if isinstance(tensor, dict) else None
            if not isinstance(tname, str) or not tname:
                info["inputs"].append({"name": "(not a tensor)", "dtype": "scalar", "shape": []})
                continue
            meta = values.get(tname) if isinstance(values.get(tname), dict) else {}
            code = meta.get("dtype")
            code = code if isinstance(code, int) and not isinstance(code, bool) else 0
            sizes = meta.get("sizes") if isinstance(meta.get("sizes"), list) else []
            info["inputs"].append({"name": tname, "dtype": SCALAR_TYPES.get(code, "scalar type %d" % code),
                                   "shape": [_size(s) for s in sizes]})
    elif prefix + "data.pkl" in entries and prefix + "constants.pkl" in entries:
        info["format"] = "torchscript"
        calls = set()
        for n in names:
            rel = n[len(prefix):]
            if rel.startswith("code/") and rel.endswith(".py"):
                for ns, fn in _TS_CALL.findall(entries[n].decode("utf-8", "replace")):
                    calls.add("%s.%s" % (ns or "aten", fn))
        info["graph_ops"] = sorted(calls)
    else:
        _bad(origin, "", "is neither a torch.export program (.pt2) nor a TorchScript module")
    for op in info["graph_ops"]:
        for p in ("torch.ops.cast.", "cast."):
            if op.startswith(p):
                info["cast_ops"].append(op[len(p):].split(".")[0])
                break
    return info


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_input_spec(spec, p, fail):
    """{"inputs": [{name, dtype, shape, distribution, low, high}]}; ``fail(pointer, why)`` raises.
    The rules of engine/cast/CastModelCheck.cpp checkInputSpec."""
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
        if not isinstance(t["name"], str):
            fail(tp + "/name", "must be a string")
        if not isinstance(t["dtype"], str) or t["dtype"] not in DTYPE_NAMES:
            fail(tp + "/dtype", "unknown dtype %r" % (t["dtype"],))
        if not isinstance(t["shape"], list) or not all(isinstance(e, int) and not isinstance(e, bool)
                                                       and 0 <= e <= 2 ** 31 for e in t["shape"]):
            fail(tp + "/shape", "is a list of extents 0 to 2^31")
        elements = 1
        for e in t["shape"]:
            elements *= max(e, 1)
            if elements > 2 ** 34:
                fail(tp + "/shape", "more than 2^34 elements")
        dist = t.get("distribution", "normal")
        if not isinstance(dist, str) or dist not in DISTRIBUTIONS:
            fail(tp + "/distribution", "is one of normal, uniform, randint, ones, zeros")
        for k in ("low", "high"):
            if k in t and not _number(t[k]):
                fail(tp + "/" + k, "must be a number")
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
        sample = info["entries"][info["prefix"] + "data/sample_inputs/model.pt"]
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
        spec = strict_json(files[entry["example"]["file"]], entry["example"]["file"])
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
    if not isinstance(v, dict) or set(v) != {"median", "min", "max", "p10", "p90"}:
        fail(p, "is {median, min, max, p10, p90}")
    for k, x in v.items():
        if not _number(x) or x < 0:
            fail(p + "/" + k, "is a time in ms, not negative")
    if not v["min"] <= v["p10"] <= v["median"] <= v["p90"] <= v["max"]:
        fail(p, "needs min <= p10 <= median <= p90 <= max")


def _check_errors(e, p, fail):
    if not isinstance(e, dict) or set(e) != {"max_abs", "rms", "finite_alike"}:
        fail(p, "is {max_abs, rms, finite_alike}")
    for k in ("max_abs", "rms"):
        if not _number(e[k]) or e[k] < 0:
            fail(p + "/" + k, "is a number, not negative")
    if not isinstance(e["finite_alike"], bool):
        fail(p + "/finite_alike", "is true or false")


def _check_tensor_list(v, p, fail):
    if not isinstance(v, list):
        fail(p, "must be a list")
    for i, t in enumerate(v):
        tp = "%s/%d" % (p, i)
        if not isinstance(t, dict) or set(t) != {"name", "dtype", "shape"} or not isinstance(t["name"], str) or \
                not isinstance(t["dtype"], str) or not isinstance(t["shape"], list) or \
                not all(isinstance(e, int) and not isinstance(e, bool) and e >= 0 for e in t["shape"]):
            fail(tp, "is {name, dtype, shape} with a list of extents")


def check_model_run(run, p, model, fail):
    """A model run's evidence (what ``run --evidence`` writes) for model ``model``: the rules of
    engine/cast/CastModelCheck.cpp checkModelRun, numbers that agree with each other included."""
    keys = {"scope", "model", "package", "created_at", "device", "gpu", "torch", "cuda_driver", "runtime", "inputs",
            "runs", "warmup", "with_kernels_ms", "without_kernels_ms", "speedup", "substitution", "fallbacks", "check"}
    if not isinstance(run, dict):
        fail(p, "must be an object")
    for k in run:
        if k not in keys:
            fail(p + "/" + k, "unknown key \"%s\"" % k)
    for k in keys - {"with_kernels_ms"}:
        if k not in run:
            fail(p + "/" + k, "is missing")
    if run["scope"] != RUN_SCOPE:
        fail(p + "/scope", "a model run's scope is \"%s\"" % RUN_SCOPE)
    if run["model"] != model:
        fail(p + "/model", "is the run of another model, not \"%s\"" % model)
    pkg = run["package"]
    if not isinstance(pkg, dict) or set(pkg) != {"name", "version"} or not all(isinstance(v, str) for v in pkg.values()):
        fail(p + "/package", "is {name, version}, both strings")
    for k in ("created_at", "device", "gpu", "torch", "cuda_driver", "runtime"):
        if not isinstance(run[k], str):
            fail(p + "/" + k, "must be a string")
    _check_tensor_list(run["inputs"], p + "/inputs", fail)
    for k, lo in (("runs", 1), ("warmup", 0)):
        if not isinstance(run[k], int) or isinstance(run[k], bool) or run[k] < lo:
            fail(p + "/" + k, "is an integer >= %d" % lo)
    _check_timing(run["without_kernels_ms"], p + "/without_kernels_ms", fail)
    if "with_kernels_ms" in run:
        _check_timing(run["with_kernels_ms"], p + "/with_kernels_ms", fail)
        w, wo = run["with_kernels_ms"]["median"], run["without_kernels_ms"]["median"]
        if not _number(run["speedup"]) or w <= 0 or abs(run["speedup"] - wo / w) > 1e-6 * max(1.0, wo / w):
            fail(p + "/speedup", "is not the ratio of the two medians (without / with)")
    elif run["speedup"] is not None:
        fail(p + "/speedup", "is null when the model ran without kernels only")
    if not isinstance(run["substitution"], list):
        fail(p + "/substitution", "must be a list")
    substituted = set()
    for i, s in enumerate(run["substitution"]):
        sp = "%s/substitution/%d" % (p, i)
        if not isinstance(s, dict) or set(s) != {"node", "op", "status", "cast_op", "reason"} or \
                not all(isinstance(v, str) for v in s.values()):
            fail(sp, "is {node, op, status, cast_op, reason}, all strings")
        if s["status"] not in ("substituted", "kept"):
            fail(sp + "/status", "is \"substituted\" or \"kept\"")
        if (s["status"] == "substituted") != bool(s["cast_op"]):
            fail(sp + "/cast_op", "names the op exactly when the site was substituted")
        if s["cast_op"]:
            substituted.add(s["cast_op"])
    fb = run["fallbacks"]
    if not isinstance(fb, dict):
        fail(p + "/fallbacks", "maps op names to counts")
    for k, v in fb.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1 or k not in substituted:
            fail(p + "/fallbacks/" + k, "is a count of at least 1 for an op substituted in this run")
    c = run["check"]
    if c is not None:
        if not isinstance(c, dict) or set(c) != {"fp64", "outputs"} or not isinstance(c["fp64"], str) or \
                not isinstance(c["outputs"], list):
            fail(p + "/check", "is null or {fp64, outputs}")
        for i, o in enumerate(c["outputs"]):
            op = "%s/check/outputs/%d" % (p, i)
            extra = {"kernels_vs_original", "kernels_vs_fp64", "original_vs_fp64"}
            if not isinstance(o, dict) or not {"index", "dtype", "shape"} <= set(o) or set(o) - {"index", "dtype", "shape"} - extra:
                fail(op, "is {index, dtype, shape} and the errors measured")
            if not isinstance(o["index"], int) or isinstance(o["index"], bool) or o["index"] < 0 or \
                    not isinstance(o["dtype"], str) or not isinstance(o["shape"], list) or \
                    not all(isinstance(e, int) and not isinstance(e, bool) and e >= 0 for e in o["shape"]):
                fail(op, "needs an index, a dtype and a list of extents")
            for k in extra & set(o):
                _check_errors(o[k], op + "/" + k, fail)


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
        if not isinstance(e["uses"], list) or not all(isinstance(u, str) for u in e["uses"]):
            fail(p + "/uses", "must be a list of op names")
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
                    spec = strict_json(entries[f], f)
                except PackageError as err:
                    fail(p + "/example/file", str(err))
                check_input_spec(spec, "", lambda q, why: fail(p + "/example/file", "%s#%s: %s" % (f, q, why)))
        else:
            fail(p + "/example/kind", "is \"program\", \"shapes\" or \"tensors\"")
        if not isinstance(e["runs"], list):
            fail(p + "/runs", "must be a list")
        for j, r in enumerate(e["runs"]):
            f = need_file(r, "%s/runs/%d" % (p, j))
            try:
                run = strict_json(entries[f], f)
            except PackageError as err:
                fail("%s/runs/%d" % (p, j), str(err))
            check_model_run(run, "", e["name"], lambda q, why, f=f, j=j: fail("%s/runs/%d" % (p, j), "%s#%s: %s" % (f, q, why)))


__all__ = ["inspect_model", "check_input_spec", "check_model_run", "check_models", "open_model", "make_inputs",
           "RUN_SCOPE"]
