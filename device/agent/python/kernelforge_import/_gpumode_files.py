"""A GPU MODE problem folder laid out the way its task.yml's `files` say (sources relative to the
folder, `@SUBMISSION@` skipped, a utils.py shim when it is missing), imported as modules, and
read with ast: the names ref_kernel gives the parts of `data`, what it returns, and the tolerance
`check_implementation = make_match_reference(ref_kernel, rtol=..., atol=...)` asks for."""

import ast
import contextlib
import importlib.util
import inspect
import os
import shutil
import sys

from . import _phase, _utils_shim
from ._errors import Refusal, refuse_exception

DEFAULT_RTOL, DEFAULT_ATOL = 1e-5, 1e-8


def layout(folder, spec, tmp, notes):
    """Copies the files into ``tmp``; returns [(source path, flat name)] for originals/."""
    yml = os.path.join(folder, "task.yml")
    originals = [(yml, "task.yml")] if os.path.isfile(yml) else []
    for i, f in enumerate(spec.get("files") or []):
        if not isinstance(f, dict) or not isinstance(f.get("name"), str) or not isinstance(f.get("source"), str):
            raise Refusal(yml, "files[%d] is not a {name, source} map" % i)
        name, source = f["name"], f["source"]
        if source == "@SUBMISSION@":
            continue
        flat = os.path.basename(name)
        if not flat or flat != name.replace("\\", "/").split("/")[-1] or name.startswith(("/", "..")):
            raise Refusal(yml, "files[%d] name %r is not a file name" % (i, name))
        # A source stays in the problem's folder or its parent (GPU MODE's ../utils.py), and is not
        # a link: task.yml must not pull other files of the machine into the task and its prompt.
        src = os.path.normpath(os.path.join(folder, source))
        allowed = os.path.dirname(os.path.normpath(os.path.abspath(folder)))
        if os.path.isabs(source) or os.path.commonpath([allowed, os.path.abspath(src)]) != allowed:
            raise Refusal(yml, "files[%d] source %r is outside the problem's folder and its parent" % (i, source))
        if os.path.islink(src):
            raise Refusal(yml, "files[%d] source %r is a symbolic link" % (i, source))
        if os.path.isfile(src):
            shutil.copyfile(src, os.path.join(tmp, flat))
            if flat not in {n for _, n in originals}:
                originals.append((src, flat))
        elif flat == "utils.py":
            notes.add("utils.py (%s) is not there: a stand-in with make_match_reference, verbose_allclose, "
                      "DeterministicContext and set_seed was used" % source)
        elif flat in ("reference.py", "task.py"):
            raise Refusal(yml, "files[%d]: %s (%s) does not exist" % (i, name, source))
    if not os.path.isfile(os.path.join(tmp, "reference.py")):
        src = os.path.join(folder, "reference.py")
        if not os.path.isfile(src):
            raise Refusal(yml, "there is no reference.py")
        shutil.copyfile(src, os.path.join(tmp, "reference.py"))
        originals.append((src, "reference.py"))
    if not os.path.isfile(os.path.join(tmp, "utils.py")):
        with open(os.path.join(tmp, "utils.py"), "w", encoding="utf-8") as f:
            f.write(_utils_shim.SOURCE)
    return originals


@contextlib.contextmanager
def importable(tmp):
    """``tmp`` first on sys.path; the top-level modules its files define are forgotten after."""
    names = [os.path.splitext(n)[0] for n in os.listdir(tmp) if n.endswith(".py")]
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    sys.path.insert(0, tmp)
    try:
        yield
    finally:
        sys.path.remove(tmp)
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def load_reference(path):
    spec = importlib.util.spec_from_file_location("reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference"] = module
    _phase.problem("running reference.py's top-level code")
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise Refusal(path, "is not valid Python (%s)" % e.msg, e.lineno)
    except Exception as e:  # noqa: BLE001 - the problem's own code
        raise refuse_exception(path, "importing reference.py", e)
    for name in ("ref_kernel", "generate_input"):
        if not callable(getattr(module, name, None)):
            raise Refusal(path, "defines no %s()" % name)
    return module


class Source:
    """reference.py's syntax tree, for what the code says rather than what it computes."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.tree = ast.parse(f.read(), path)
        self.fn = next((n for n in self.tree.body if isinstance(n, ast.FunctionDef) and n.name == "ref_kernel"), None)

    def line(self, name):
        node = next((n for n in self.tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name), None)
        return node.lineno if node else None

    def data_names(self):
        """Names from ``a, b = data`` (or ``x = data``) in ref_kernel, else None."""
        if self.fn is None or not self.fn.args.args:
            return None
        param = self.fn.args.args[0].arg
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.value, ast.Name) and node.value.id == param:
                t = node.targets[0]
                if isinstance(t, ast.Name):
                    return [t.id]
                if isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts):
                    return [e.id for e in t.elts]
        return None

    def return_names(self):
        """The names ref_kernel's last top-level ``return`` gives, else None."""
        ret = next((n for n in reversed(self.fn.body) if isinstance(n, ast.Return)), None) if self.fn else None
        if ret is None or ret.value is None:
            return None
        if isinstance(ret.value, ast.Name):
            return [ret.value.id]
        if isinstance(ret.value, ast.Tuple) and all(isinstance(e, ast.Name) for e in ret.value.elts):
            return [e.id for e in ret.value.elts]
        return None

    def checker(self):
        """("match", {rtol, atol given as literals}, line), ("custom", None, line) or ("missing", None, None)."""
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "check_implementation":
                return "custom", None, node.lineno
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "check_implementation"
                                                    for t in node.targets):
                call = node.value
                func = getattr(call, "func", None)
                fname = getattr(func, "id", None) or getattr(func, "attr", None)
                if isinstance(call, ast.Call) and fname == "make_match_reference":
                    kwargs = {}
                    for kw in call.keywords:
                        if kw.arg in ("rtol", "atol"):
                            try:
                                kwargs[kw.arg] = float(ast.literal_eval(kw.value))
                            except (ValueError, TypeError, SyntaxError):
                                pass
                    return "match", kwargs, node.lineno
                return "custom", None, node.lineno
        return "missing", None, None


def utils_defaults():
    """rtol/atol defaults of the imported utils' make_match_reference, else match_reference."""
    utils = sys.modules.get("utils")
    found = {}
    for fname in ("make_match_reference", "match_reference"):
        fn = getattr(utils, fname, None)
        try:
            params = inspect.signature(fn).parameters if fn else {}
        except (TypeError, ValueError):
            params = {}
        for k in ("rtol", "atol"):
            p = params.get(k)
            if k not in found and p is not None and isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                found[k] = float(p.default)
    return found.get("rtol", DEFAULT_RTOL), found.get("atol", DEFAULT_ATOL)
