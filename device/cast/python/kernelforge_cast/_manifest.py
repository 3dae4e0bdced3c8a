"""The manifest checks of a .cast package, the same rules as KernelForge's own reader
(engine/cast/CastPackage.cpp, docs/cast-format.md): every key known, every name declared, every
expression tree well formed, the schema the one the tensors make. Raises PackageError naming the
manifest's JSON pointer. What this runtime does not check, and the C++ reader does: that each
tree is the parse of its text (this runtime has no parser; it evaluates the tree) and that each
op agrees with the task.json it carries.
"""

import keyword
import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ARCH = re.compile(r"(sm|compute)_[0-9]{1,4}\Z")
DTYPES = {"fp64", "fp32", "fp16", "bf16", "int64", "int32", "int16", "int8", "uint8", "bool"}
SCALAR_TYPES = {"int32", "int64", "uint32", "uint64", "fp32", "fp64"}
FUNCTIONS = {"ceil_div": 2, "round_up": 2, "min": 2, "max": 2, "abs": 1, "next_pow2": 1, "log2": 1,
             "sqrt": 1, "float": 1, "int": 1}
UNARY = {"-", "+", "!"}
BINARY = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}
CATALOG = {"add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu",
           "silu", "gelu", "softmax", "log_softmax", "layer_norm", "rms_norm", "matmul", "bmm", "transpose",
           "permute", "sum", "mean", "amax", "cumsum", "to", "clone"}
MAX_TREE_DEPTH = 200
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class ManifestError(ValueError):
    def __init__(self, pointer, why):
        super().__init__("manifest.json#%s: %s" % (pointer, why))


def _obj(v, p, required, optional=()):
    if not isinstance(v, dict):
        raise ManifestError(p, "must be an object")
    for k in required:
        if k not in v:
            raise ManifestError(p + "/" + k, "is missing")
    for k in v:
        if k not in required and k not in optional:
            raise ManifestError(p + "/" + k, "unknown key \"%s\"" % k)
    return v


def _str(v, p):
    if not isinstance(v, str):
        raise ManifestError(p, "must be a string")
    return v


def _int(v, p):
    if not isinstance(v, int) or isinstance(v, bool) or v < INT64_MIN or v > INT64_MAX:
        raise ManifestError(p, "must be a 64-bit integer")
    return v


def _list(v, p):
    if not isinstance(v, list):
        raise ManifestError(p, "must be a list")
    return v


def is_op_name(name):
    return isinstance(name, str) and len(name) <= 64 and bool(_IDENT.match(name)) and not keyword.iskeyword(name)


def check_tree(t, p, scope, depth=0):
    if depth > MAX_TREE_DEPTH:
        raise ManifestError(p, "the expression is nested more than %d levels deep" % MAX_TREE_DEPTH)
    if not isinstance(t, dict) or not 1 <= len(t) <= 2:
        raise ManifestError(p, "an expression node must be an object such as {\"int\": 4}")
    if "int" in t:
        _obj(t, p, ("int",))
        _int(t["int"], p + "/int")
    elif "real" in t:
        _obj(t, p, ("real",))
        if not isinstance(t["real"], (int, float)) or isinstance(t["real"], bool):
            raise ManifestError(p + "/real", "must be a number")
    elif "sym" in t:
        _obj(t, p, ("sym",))
        if _str(t["sym"], p + "/sym") not in scope:
            raise ManifestError(p + "/sym", "\"%s\" is neither a symbol nor a parameter of this op" % t["sym"])
    elif "op" in t or "call" in t:
        call = "call" in t
        key = "call" if call else "op"
        _obj(t, p, (key, "args"))
        name = _str(t[key], p + "/" + key)
        args = _list(t["args"], p + "/args")
        if call:
            if name not in FUNCTIONS:
                raise ManifestError(p + "/call", "\"%s\" is not a function of the expression language" % name)
            if len(args) != FUNCTIONS[name]:
                raise ManifestError(p + "/args", "%s takes %d argument(s)" % (name, FUNCTIONS[name]))
        elif not ((len(args) == 1 and name in UNARY) or (len(args) == 2 and name in BINARY)):
            raise ManifestError(p + "/op", "\"%s\" with %d operand(s) is not an operator of the expression language"
                                % (name, len(args)))
        for i, a in enumerate(args):
            check_tree(a, "%s/args/%d" % (p, i), scope, depth + 1)
    else:
        raise ManifestError(p, "an expression node has one of the keys int, real, sym, op or call")


def _expr(e, p, scope):
    _obj(e, p, ("text", "tree"))
    _str(e["text"], p + "/text")
    check_tree(e["tree"], p + "/tree", scope)


def check_op(op, p, files, names):
    _obj(op, p, ("name", "registry_id", "task_name", "schema", "inputs", "outputs", "parameters", "symbols",
                 "constraints", "launches", "scratch", "reference", "images", "sources", "task", "evidence"))
    name = op["name"]
    if not is_op_name(name):
        raise ManifestError(p + "/name", "%r cannot name an operator" % (name,))
    if name in names:
        raise ManifestError(p + "/name", "two ops are named \"%s\"" % name)
    names.add(name)
    _str(op["registry_id"], p + "/registry_id")
    _str(op["task_name"], p + "/task_name")
    tensors, symbols_used = set(), set()
    for key in ("inputs", "outputs"):
        lst = _list(op[key], p + "/" + key)
        if not lst:
            raise ManifestError(p + "/" + key, "an op needs at least one")
        for i, t in enumerate(lst):
            tp = "%s/%s/%d" % (p, key, i)
            _obj(t, tp, ("name", "dtype", "shape"))
            if not is_op_name(t["name"]) or t["name"] in tensors:
                raise ManifestError(tp + "/name", "%r is not a new identifier" % (t["name"],))
            tensors.add(t["name"])
            if t["dtype"] not in DTYPES:
                raise ManifestError(tp + "/dtype", "unknown dtype %r" % (t["dtype"],))
            for d, e in enumerate(_list(t["shape"], tp + "/shape")):
                if isinstance(e, str):
                    if key == "inputs":
                        symbols_used.add(e)
                    elif e not in symbols_used:
                        raise ManifestError("%s/shape/%d" % (tp, d), "symbol \"%s\" is no input's extent" % e)
                elif _int(e, "%s/shape/%d" % (tp, d)) < 0:
                    raise ManifestError("%s/shape/%d" % (tp, d), "an extent cannot be negative")
    want = "%s(%s) -> %s" % (name, ", ".join("Tensor " + t["name"] for t in op["inputs"]),
                             "Tensor" if len(op["outputs"]) == 1 else "(" + ", ".join("Tensor" for _ in op["outputs"]) + ")")
    if op["schema"] != want:
        raise ManifestError(p + "/schema", "is %r but the inputs and outputs make %r" % (op["schema"], want))
    params = _obj(op["parameters"], p + "/parameters", tuple(op["parameters"]) if isinstance(op["parameters"], dict) else ())
    scope = set()
    for k, v in params.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool) or (isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX):
            raise ManifestError(p + "/parameters/" + k, "a parameter is a 64-bit integer or a double")
        if k in symbols_used or k in tensors:
            raise ManifestError(p + "/parameters/" + k, "\"%s\" names a parameter and also a symbol or tensor" % k)
        scope.add(k)
    declared = set()
    for i, s in enumerate(_list(op["symbols"], p + "/symbols")):
        sp = "%s/symbols/%d" % (p, i)
        _obj(s, sp, ("name", "min", "max", "multiple_of"))
        if s["name"] not in symbols_used or s["name"] in tensors:
            raise ManifestError(sp + "/name", "symbol %r is no input's extent, or names a tensor" % (s["name"],))
        if _int(s["min"], sp + "/min") > _int(s["max"], sp + "/max") or _int(s["multiple_of"], sp + "/multiple_of") < 1:
            raise ManifestError(sp, "needs min <= max and multiple_of >= 1")
        declared.add(s["name"])
    for sym in symbols_used - declared:
        raise ManifestError(p + "/symbols", "symbol \"%s\" of a tensor's shape has no range here" % sym)
    scope |= declared
    for i, c in enumerate(_list(op["constraints"], p + "/constraints")):
        _expr(c, "%s/constraints/%d" % (p, i), scope)
    buffers = set(tensors)
    for i, s in enumerate(_list(op["scratch"], p + "/scratch")):
        sp = "%s/scratch/%d" % (p, i)
        _obj(s, sp, ("name", "dtype", "count", "zero"))
        if not is_op_name(s["name"]) or s["name"] in buffers or s["name"] in scope:
            raise ManifestError(sp + "/name", "%r is not a new identifier" % (s["name"],))
        buffers.add(s["name"])
        if s["dtype"] not in DTYPES:
            raise ManifestError(sp + "/dtype", "unknown dtype")
        _expr(s["count"], sp + "/count", scope)
        if not isinstance(s["zero"], bool):
            raise ManifestError(sp + "/zero", "must be true or false")
    launches = _list(op["launches"], p + "/launches")
    if not launches:
        raise ManifestError(p + "/launches", "an op launches at least one kernel")
    for i, l in enumerate(launches):
        lp = "%s/launches/%d" % (p, i)
        _obj(l, lp, ("kernel", "lowered", "grid", "block", "shared_bytes", "args"))
        _str(l["kernel"], lp + "/kernel")
        if not 1 <= len(_str(l["lowered"], lp + "/lowered")) <= 4096:
            raise ManifestError(lp + "/lowered", "a lowered kernel name is 1 to 4096 characters")
        for key in ("grid", "block"):
            dims = _list(l[key], lp + "/" + key)
            if len(dims) != 3:
                raise ManifestError(lp + "/" + key, "lists exactly 3 expressions")
            for d, e in enumerate(dims):
                _expr(e, "%s/%s/%d" % (lp, key, d), scope)
        _expr(l["shared_bytes"], lp + "/shared_bytes", scope)
        for a, arg in enumerate(_list(l["args"], lp + "/args")):
            ap = "%s/args/%d" % (lp, a)
            if isinstance(arg, dict) and "tensor" in arg:
                _obj(arg, ap, ("tensor",))
                if arg["tensor"] not in buffers:
                    raise ManifestError(ap + "/tensor", "%r is not an input, output or scratch buffer" % (arg["tensor"],))
            else:
                _obj(arg, ap, ("scalar", "type"))
                _expr(arg["scalar"], ap + "/scalar", scope)
                if arg["type"] not in SCALAR_TYPES:
                    raise ManifestError(ap + "/type", "%r is not a scalar type" % (arg["type"],))

    def need_file(v, fp):
        if not isinstance(v, str) or v not in files:
            raise ManifestError(fp, "names %r, which is not a file of the package" % (v,))

    ref = op["reference"]
    if not isinstance(ref, dict) or ref.get("kind") not in ("tape", "torchscript"):
        raise ManifestError(p + "/reference/kind", "is \"tape\" or \"torchscript\"")
    if ref["kind"] == "tape":
        _obj(ref, p + "/reference", ("kind", "steps"))
        steps = _list(ref["steps"], p + "/reference/steps")
        if not steps:
            raise ManifestError(p + "/reference/steps", "a tape has at least one step")
        for i, s in enumerate(steps):
            sp = "%s/reference/steps/%d" % (p, i)
            _obj(s, sp, ("op", "inputs", "output"), ("attrs",))
            if s["op"] not in CATALOG:
                raise ManifestError(sp + "/op", "%r is not an op of the reference catalog" % (s["op"],))
            if not all(isinstance(x, str) for x in _list(s["inputs"], sp + "/inputs")):
                raise ManifestError(sp + "/inputs", "must be a list of names")
            if not isinstance(s.get("attrs", {}), dict):
                raise ManifestError(sp + "/attrs", "must be an object")
            _str(s["output"], sp + "/output")
    else:
        _obj(ref, p + "/reference", ("kind", "file", "inputs"))
        need_file(ref["file"], p + "/reference/file")
        names_in = {t["name"] for t in op["inputs"]}
        for n in _list(ref["inputs"], p + "/reference/inputs"):
            if n not in names_in:
                raise ManifestError(p + "/reference/inputs", "%r is not an input of the op" % (n,))
    images = op["images"]
    if not isinstance(images, dict) or not images:
        raise ManifestError(p + "/images", "an op carries at least one cubin or PTX")
    for arch, path in images.items():
        if not _ARCH.match(arch):
            raise ManifestError(p + "/images/" + arch, "%r is not an architecture" % arch)
        need_file(path, p + "/images/" + arch)
    for i, path in enumerate(_list(op["sources"], p + "/sources")):
        need_file(path, "%s/sources/%d" % (p, i))
    need_file(op["task"], p + "/task")
    ev = _obj(op["evidence"], p + "/evidence", ("correctness", "performance", "promotion"),
              ("gpu", "arch", "torch", "promoted_at", "baseline", "geomean_speedup", "min_speedup", "threshold",
               "per_shape", "gates", "scope", "unsigned_evidence_accepted", "registry_signature",
               "compile_speedup", "compile_threshold"))
    for k in ("correctness", "performance", "promotion"):
        need_file(ev[k], p + "/evidence/" + k)


def check_manifest(m, files):
    """``m``: the parsed manifest; ``files``: the set of listed file paths."""
    _obj(m, "", ("format", "schema_version", "package", "kernelforge_version", "created_at", "nvrtc_version",
                 "architectures", "ptx", "ops", "files"))
    _obj(m["package"], "/package", ("name", "version"))
    _str(m["package"]["name"], "/package/name")
    _str(m["package"]["version"], "/package/version")
    for a in _list(m["architectures"], "/architectures"):
        if not isinstance(a, str) or not a.startswith("sm_") or not _ARCH.match(a):
            raise ManifestError("/architectures", "%r is not an sm_XY architecture" % (a,))
    if m["ptx"] is not None and not (isinstance(m["ptx"], str) and _ARCH.match(m["ptx"])):
        raise ManifestError("/ptx", "is a compute_XY architecture or null")
    names = set()
    ops = _list(m["ops"], "/ops")
    if not ops:
        raise ManifestError("/ops", "a package holds at least one op")
    for i, op in enumerate(ops):
        check_op(op, "/ops/%d" % i, files, names)
