"""The launch-plan expression language, evaluated from the manifest's JSON trees.

Same semantics as KernelForge's C++ evaluator (engine/task/Expr.cpp): 64-bit integers that stay
exact (``/`` and ``%`` truncate toward zero as in C, overflow is an error), doubles otherwise,
comparisons and ``&& || !`` give 0 or 1. tests/cast/expr-vectors.json holds the cases both
evaluators are checked against.
"""

import math

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class ExprError(ValueError):
    pass


def _checked(v):
    if v < INT64_MIN or v > INT64_MAX:
        raise ExprError("integer overflow")
    return v


def _tdiv(a, b):
    """C division of integers: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v):
    return float(v)


def evaluate(node, env):
    """Value of the tree ``node`` with symbols from ``env`` (name -> int or float)."""
    if "int" in node:
        return int(node["int"])
    if "real" in node:
        return float(node["real"])
    if "sym" in node:
        name = node["sym"]
        if name not in env:
            raise ExprError("unknown symbol '%s'; known symbols: %s" % (name, ", ".join(sorted(env))))
        return env[name]
    args = node["args"]
    if "op" in node:
        op = node["op"]
        if len(args) == 1:
            a = evaluate(args[0], env)
            if op == "!":
                return 1 if _num(a) == 0.0 else 0
            if op == "+":
                return a
            return _checked(-a) if _is_int(a) else -a
        if op in ("&&", "||"):
            a = _num(evaluate(args[0], env)) != 0.0
            if op == "&&" and not a:
                return 0
            if op == "||" and a:
                return 1
            return 1 if _num(evaluate(args[1], env)) != 0.0 else 0
        a = evaluate(args[0], env)
        b = evaluate(args[1], env)
        if op in ("==", "!=", "<", "<=", ">", ">="):
            if not (_is_int(a) and _is_int(b)):
                a, b = _num(a), _num(b)
            r = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
            return 1 if r else 0
        if _is_int(a) and _is_int(b):
            if op == "+":
                return _checked(a + b)
            if op == "-":
                return _checked(a - b)
            if op == "*":
                return _checked(a * b)
            if b == 0:
                raise ExprError("division by zero" if op == "/" else "modulo by zero")
            if a == INT64_MIN and b == -1:
                raise ExprError("integer overflow")
            q = _tdiv(a, b)
            return q if op == "/" else a - b * q
        x, y = _num(a), _num(b)
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if y == 0.0:
            raise ExprError("division by zero" if op == "/" else "modulo by zero")
        if op == "/":
            return x / y
        return math.fmod(x, y) if math.isfinite(x) else math.nan   # C's fmod(inf, y) is NaN
    fn = node["call"]
    arity = {"ceil_div": 2, "round_up": 2, "min": 2, "max": 2, "abs": 1, "next_pow2": 1, "log2": 1,
             "sqrt": 1, "float": 1, "int": 1}
    if fn not in arity:
        raise ExprError("unknown function '%s'" % fn)
    if len(args) != arity[fn]:
        raise ExprError("%s takes %d argument(s), got %d" % (fn, arity[fn], len(args)))
    v = [evaluate(a, env) for a in args]

    def need_ints():
        if not all(_is_int(x) for x in v):
            raise ExprError(fn + " needs integer arguments")

    if fn in ("ceil_div", "round_up"):
        need_ints()
        a, b = v
        if b <= 0:
            raise ExprError("%s: the divisor must be positive, got %d" % (fn, b))
        q = _tdiv(a, b) + (1 if a >= 0 and a % b != 0 else 0)
        return q if fn == "ceil_div" else _checked(q * b)
    if fn in ("min", "max"):
        if _is_int(v[0]) and _is_int(v[1]):
            return min(v) if fn == "min" else max(v)
        x, y = _num(v[0]), _num(v[1])
        return min(x, y) if fn == "min" else max(x, y)
    if fn == "abs":
        if _is_int(v[0]):
            if v[0] == INT64_MIN:
                raise ExprError("integer overflow: abs(%d) does not fit in int64" % v[0])
            return abs(v[0])
        return math.fabs(v[0])
    if fn == "next_pow2":
        need_ints()
        p = 1
        while p < v[0]:
            if p > INT64_MAX // 2:
                raise ExprError("integer overflow")
            p *= 2
        return p
    if fn == "log2":
        if _is_int(v[0]):
            if v[0] <= 0:
                raise ExprError("log2 of a non-positive integer")
            return v[0].bit_length() - 1
        x = v[0]
        return math.log2(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    if fn == "sqrt":
        x = _num(v[0])
        return math.sqrt(x) if x >= 0 else math.nan
    if fn == "float":
        return _num(v[0])
    if _is_int(v[0]):
        return v[0]
    x = v[0]
    if not math.isfinite(x) or abs(x) > 9.2e18:
        raise ExprError("int() of a value out of range")
    return int(x)


def evaluate_int(node, env, what):
    v = evaluate(node, env)
    if not _is_int(v):
        raise ExprError("%s is not an integer (%r)" % (what, v))
    return v
