"""Generate the C++ preamble that CUDA/HIP kernels (``backend="cupy"``) compile with.

Everything the kernels take from the spec comes from here, generated from
:mod:`qrita.core` at import time, so a change to the spec reaches the C code
with no copy-paste (and changes :func:`~qrita.core.spec_fingerprint`, which
keys the kernel caches):

* the constants of :mod:`qrita.core.spec` and :mod:`qrita.core.search`
  (``QRITA_<NAME>`` macros);
* the key mapping of :mod:`qrita.core.keys` for every GPU dtype
  (``qrita_key_from_bits_<dtype>`` / ``qrita_bits_from_key_<dtype>``, built
  from :data:`~qrita.core.keys.KEY_CONSTANTS`);
* the LUTs of :mod:`qrita.core.lut` as ``__constant__`` float arrays (the
  exact float32 values) and their index functions;
* the state-machine functions of :mod:`qrita.core.search`, translated from
  their Python AST by :func:`translate_function` into templated
  ``__device__`` functions named ``qrita_<name>``.

The translator knows a deliberately small subset of Python, the one the
portable functions are written in: parameters, assignments to local names
(first assignment at the function's top level), ``+= -= *=``, ``if/elif/else``,
``return``, ``a if c else b``, arithmetic, comparisons (not chained),
``and/or/not``, numeric constants, module-level numeric constants (inlined),
and the calls ``int``, ``float``, ``min``, ``max``, ``math.ceil``,
``math.floor`` and ``math.log2``.  Anything else raises :class:`CgenError`
naming the function and line, so a spec change the C side cannot follow fails
loudly instead of drifting.

C++ semantics of the translation (the callers' side of the contract):

* every translated function is ``template <typename R, typename T0, ...>
  R qrita_<name>(T0 a0, ...)``: the caller names the return type ``R`` and
  passes arguments wide enough for Python's unbounded ints (64-bit keys, so
  ``(hi - lo) * j`` cannot overflow);
* ``/`` is true division in ``double``; ``//`` is floor division on integers
  (:c:func:`qrita_floordiv`, exact for either sign);
* ``int(x)`` truncates to ``long long`` (saturating where Python's int would
  not fit) and ``float(x)`` converts to ``double`` as in Python; ``math.ceil``/``floor``/``log2`` work in ``double``.

The first line of :func:`preamble` says the text is generated and carries the
spec fingerprint.  The preamble also compiles as plain host C++ (``g++``):
``tests/test_cgen.py`` evaluates the translated functions there against the
Python originals.
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import textwrap
from collections.abc import Callable

import numpy as np

from . import keys, lut, search, spec
from .fingerprint import spec_fingerprint

__all__ = ["CgenError", "TRANSLATED_FUNCTIONS", "preamble", "translate_function"]


class CgenError(ValueError):
    """A spec function uses Python the C++ translator does not know."""


# The functions of qrita.core that kernels call, in the order they are emitted.
TRANSLATED_FUNCTIONS: tuple[Callable, ...] = (
    search.pivot,
    search.classify_pivot,
    search.narrow_lo,
    search.narrow_hi,
    search.snap_hi,
    search.topk_num_ties,
    search.topp_num_ties,
    lut.topk_lut_index,
    lut.topp_lut_index,
)

# Key widths the GPU dtypes use, for the round bounds.
_GPU_KEY_WIDTHS = sorted({spec.DTYPE_BITS[d][0] for d in spec.GPU_DTYPES})


# --------------------------------------------------------------------------------------------
# Python AST -> C++
# --------------------------------------------------------------------------------------------

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_AUGOPS = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*="}


class _Translator:
    def __init__(self, fn: Callable):
        self.fn = fn
        self.name = fn.__name__
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef):
            raise CgenError(f"{self.name}: not a plain function")
        self.node = node
        self.first_line = fn.__code__.co_firstlineno - 1
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            self.fail(node, "only plain positional parameters are supported")
        self.params = [a.arg for a in args.args]
        self.locals: set[str] = set()
        self.globals = fn.__globals__

    def fail(self, node, why: str):
        line = self.first_line + getattr(node, "lineno", 1)
        raise CgenError(f"cannot translate {self.fn.__module__}.{self.name} (line {line}): {why}")

    # --- statements -------------------------------------------------------------------------
    def translate(self) -> str:
        body = self.node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        tparams = ", ".join(["typename R"] + [f"typename T_{p}" for p in self.params])
        params = ", ".join(f"T_{p} {p}" for p in self.params)
        lines = [f"template <{tparams}>", f"QRITA_DEVICE R qrita_{self.name}({params}) {{"]
        lines += self.block(body, 1, top=True)
        lines.append("}")
        return "\n".join(lines)

    def block(self, stmts, depth: int, top: bool) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out += self.stmt(s, depth, top)
        return out

    def stmt(self, s, depth: int, top: bool) -> list[str]:
        ind = "    " * depth
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1 or not isinstance(s.targets[0], ast.Name):
                self.fail(s, "only `name = expr` assignments are supported")
            name = s.targets[0].id
            value = self.expr(s.value)
            if name in self.params or name in self.locals:
                return [f"{ind}{name} = {value};"]
            if not top:
                self.fail(s, f"the first assignment of {name!r} must be at the function's top level")
            self.locals.add(name)
            return [f"{ind}auto {name} = {value};"]
        if isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name) or type(s.op) not in _AUGOPS:
                self.fail(s, "only `name += / -= / *= expr` is supported")
            name = s.target.id
            if name not in self.params and name not in self.locals:
                self.fail(s, f"{name!r} is used before it is assigned")
            return [f"{ind}{name} {_AUGOPS[type(s.op)]} {self.expr(s.value)};"]
        if isinstance(s, ast.If):
            out = [f"{ind}if ({self.expr(s.test)}) {{"]
            out += self.block(s.body, depth + 1, top=False)
            orelse = s.orelse
            while len(orelse) == 1 and isinstance(orelse[0], ast.If):
                out.append(f"{ind}}} else if ({self.expr(orelse[0].test)}) {{")
                out += self.block(orelse[0].body, depth + 1, top=False)
                orelse = orelse[0].orelse
            if orelse:
                out.append(f"{ind}}} else {{")
                out += self.block(orelse, depth + 1, top=False)
            out.append(f"{ind}}}")
            return out
        if isinstance(s, ast.Return):
            if s.value is None:
                self.fail(s, "a bare `return` has no value to give")
            return [f"{ind}return (R)({self.expr(s.value)});"]
        if isinstance(s, ast.Pass):
            return []
        self.fail(s, f"statement {type(s).__name__} is not supported")
        return []  # pragma: no cover

    # --- expressions ------------------------------------------------------------------------
    def expr(self, e) -> str:
        if isinstance(e, ast.Constant):
            return self.constant(e, e.value)
        if isinstance(e, ast.Name):
            if e.id in self.params or e.id in self.locals:
                return e.id
            if e.id in ("True", "False"):
                return e.id.lower()
            value = self.globals.get(e.id)
            if isinstance(value, (bool, int, float)) and not isinstance(value, type):
                return self.constant(e, value)
            self.fail(e, f"name {e.id!r} is neither a parameter, a local nor a numeric module constant")
        if isinstance(e, ast.BinOp):
            left, right = self.expr(e.left), self.expr(e.right)
            if type(e.op) in _BINOPS:
                return f"({left} {_BINOPS[type(e.op)]} {right})"
            if isinstance(e.op, ast.Div):
                return f"((double)({left}) / (double)({right}))"
            if isinstance(e.op, ast.FloorDiv):
                return f"qrita_floordiv({left}, {right})"
            self.fail(e, f"operator {type(e.op).__name__} is not supported")
        if isinstance(e, ast.UnaryOp):
            operand = self.expr(e.operand)
            if isinstance(e.op, ast.USub):
                return f"(-{operand})"
            if isinstance(e.op, ast.UAdd):
                return f"(+{operand})"
            if isinstance(e.op, ast.Not):
                return f"(!{operand})"
            self.fail(e, f"unary operator {type(e.op).__name__} is not supported")
        if isinstance(e, ast.BoolOp):
            op = " && " if isinstance(e.op, ast.And) else " || "
            return "(" + op.join(self.expr(v) for v in e.values) + ")"
        if isinstance(e, ast.Compare):
            if len(e.ops) != 1 or type(e.ops[0]) not in _CMPOPS:
                self.fail(e, "only single comparisons (<, <=, >, >=, ==, !=) are supported")
            return f"({self.expr(e.left)} {_CMPOPS[type(e.ops[0])]} {self.expr(e.comparators[0])})"
        if isinstance(e, ast.IfExp):
            return f"(({self.expr(e.test)}) ? ({self.expr(e.body)}) : ({self.expr(e.orelse)}))"
        if isinstance(e, ast.Call):
            return self.call(e)
        self.fail(e, f"expression {type(e).__name__} is not supported")
        return ""  # pragma: no cover

    def call(self, e: ast.Call) -> str:
        if e.keywords:
            self.fail(e, "keyword arguments are not supported")
        f = e.func
        if isinstance(f, ast.Name):
            name = f.id
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math":
            name = f"math.{f.attr}"
        else:
            self.fail(e, "only int, float, min, max, math.ceil, math.floor and math.log2 can be called")
        args = [self.expr(a) for a in e.args]
        one = {
            "int": "qrita_int({0})",
            "float": "((double)({0}))",
            "math.ceil": "ceil((double)({0}))",
            "math.floor": "floor((double)({0}))",
            "math.log2": "log2((double)({0}))",
        }
        if name in one:
            if len(args) != 1:
                self.fail(e, f"{name}() takes one argument here")
            return one[name].format(args[0])
        if name in ("min", "max"):
            if len(args) != 2:
                self.fail(e, f"{name}() takes two arguments here")
            return f"qrita_{name}({args[0]}, {args[1]})"
        self.fail(e, f"call of {name}() is not supported")
        return ""  # pragma: no cover

    def constant(self, node, value) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                self.fail(node, f"integer constant {value} does not fit in 64 bits")
            return f"{value}LL" if abs(value) >= 2**31 else str(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                self.fail(node, "non-finite float constants are not supported")
            return repr(value) if ("." in repr(value) or "e" in repr(value)) else repr(value) + ".0"
        self.fail(node, f"constant {value!r} is not numeric")
        return ""  # pragma: no cover


def translate_function(fn: Callable) -> str:
    """C++ source of ``fn`` as ``template <typename R, ...> R qrita_<name>(...)``."""
    return _Translator(fn).translate()


# --------------------------------------------------------------------------------------------
# The preamble
# --------------------------------------------------------------------------------------------

_HEADER = r"""
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define QRITA_DEVICE __device__ __forceinline__
#define QRITA_CONSTANT __constant__
#else  /* plain host C++ (tests/test_cgen.py) */
#include <cmath>
#define QRITA_DEVICE inline
#define QRITA_CONSTANT
using std::ceil;
using std::floor;
using std::log2;
#endif

/* Python's a // b for integers of either sign. */
template <typename A, typename B>
QRITA_DEVICE auto qrita_floordiv(A a, B b) -> decltype(a / b) {
    auto q = a / b;
    if ((a % b != 0) && ((a > 0) != (b > 0))) q -= 1;
    return q;
}
/* Python's int(x): truncation; a float beyond the int64 range saturates (a C cast would be
   undefined there), NaN gives 0. */
QRITA_DEVICE long long qrita_int(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775807.0) return 9223372036854775807LL;
    if (x <= -9223372036854775808.0) return (-9223372036854775807LL - 1);
    return (long long)x;
}
QRITA_DEVICE long long qrita_int(float x) { return qrita_int((double)x); }
QRITA_DEVICE long long qrita_int(int x) { return x; }
QRITA_DEVICE long long qrita_int(long x) { return x; }
QRITA_DEVICE long long qrita_int(long long x) { return x; }
QRITA_DEVICE long long qrita_int(unsigned int x) { return x; }
QRITA_DEVICE long long qrita_int(unsigned long x) { return (long long)x; }
QRITA_DEVICE long long qrita_int(unsigned long long x) { return (long long)x; }
template <typename A, typename B>
QRITA_DEVICE auto qrita_min(A a, B b) -> decltype(a + b) { return (b < a) ? b : a; }
template <typename A, typename B>
QRITA_DEVICE auto qrita_max(A a, B b) -> decltype(a + b) { return (a < b) ? b : a; }
"""


def _c_float(value: float) -> str:
    """A C float literal that reads back as exactly this float32."""
    text = f"{float(np.float32(value)):.9g}"
    if "e" not in text and "." not in text and "n" not in text:
        text += ".0"
    return text + "f"


def _constants() -> list[str]:
    names = [
        "TIES_LOWEST_INDEX",
        "TIES_ALL",
        "SAMPLE_SIZE",
        "TOPK_LUT_SIZE",
        "TOPK_LUT_STEPS_PER_OCTAVE",
        "TOPP_LUT_SIZE",
        "NUM_PIVOTS",
        "CANDIDATE_CAPACITY",
    ]
    out = ["/* qrita.core.spec */"]
    out += [f"#define QRITA_{n} {int(getattr(spec, n))}" for n in names]
    out += [
        f"#define QRITA_TOPP_EPS {spec.TOPP_EPS!r}",
        "/* qrita.core.search: classify_pivot results and round bounds */",
        f"#define QRITA_BELOW {search.BELOW}",
        f"#define QRITA_STOP {search.STOP}",
        f"#define QRITA_ABOVE {search.ABOVE}",
    ]
    for width in _GPU_KEY_WIDTHS:
        out.append(f"#define QRITA_MAX_ROUNDS_{width} {search.max_rounds(width, spec.NUM_PIVOTS)}")
    out.append(f"#define QRITA_KEY_NAN {keys.KEY_NAN}")
    return out


def _key_functions() -> list[str]:
    out = ["/* qrita.core.keys: order-preserving keys (-0.0 -> key of +0.0, NaN -> QRITA_KEY_NAN) */"]
    for dtype in spec.GPU_DTYPES:
        kc = keys.KEY_CONSTANTS[dtype]
        ctype = "unsigned short" if kc.width == 16 else "unsigned int"
        up = dtype.upper()
        out += [
            f"#define QRITA_{up}_WIDTH {kc.width}",
            f"#define QRITA_{up}_SIGN {kc.sign:#x}u",
            f"#define QRITA_{up}_MASK {kc.mask:#x}u",
            f"#define QRITA_{up}_EXP_MASK {kc.exp_mask:#x}u",
            f"#define QRITA_{up}_FRAC_MASK {kc.frac_mask:#x}u",
            f"#define QRITA_{up}_POS_INF_BITS {kc.pos_inf_bits:#x}u",
            f"#define QRITA_{up}_NEG_INF_BITS {kc.neg_inf_bits:#x}u",
            f"#define QRITA_{up}_KEY_NEG_INF {kc.key_neg_inf:#x}u",
            f"#define QRITA_{up}_KEY_POS_INF {kc.key_pos_inf:#x}u",
            f"QRITA_DEVICE unsigned int qrita_key_from_bits_{dtype}({ctype} bits) {{",
            "    unsigned int u = bits;",
            "    /* keys_from_bits' arithmetic, without branches (kernels key every entry they read):",
            "       negatives flip every bit, the rest the sign; -0.0 moves up to +0.0; NaN -> KEY_NAN */",
            f"    unsigned int key = u ^ (((0u - (u >> (QRITA_{up}_WIDTH - 1))) & QRITA_{up}_MASK) | QRITA_{up}_SIGN);",
            f"    key += key == QRITA_{up}_SIGN - 1u ? 1u : 0u;",
            f"    return (u & (QRITA_{up}_MASK ^ QRITA_{up}_SIGN)) > QRITA_{up}_EXP_MASK ? QRITA_KEY_NAN : key;",
            "}",
            f"QRITA_DEVICE {ctype} qrita_bits_from_key_{dtype}(unsigned int key) {{",
            f"    return ({ctype})((key & QRITA_{up}_SIGN) ? (key ^ QRITA_{up}_SIGN) : ((~key) & QRITA_{up}_MASK));",
            "}",
        ]
    return out


def _luts() -> list[str]:
    out = ["/* qrita.core.lut: exact float32 tables */"]
    for name, table in (("topk_delta", lut.TOPK_DELTA), ("topp_delta", lut.TOPP_DELTA)):
        values = [_c_float(v) for v in table]
        rows = [", ".join(values[i : i + 8]) for i in range(0, len(values), 8)]
        out.append(f"QRITA_CONSTANT float qrita_{name}[{len(values)}] = {{")
        out += [f"    {r}," for r in rows]
        out.append("};")
    out.append(f'#define QRITA_LUT_CHECKSUM "{lut.lut_checksum()}"')
    return out


@functools.cache
def preamble() -> str:
    """The generated C++ preamble (deterministic text; first line names the generator and fingerprint)."""
    fp = spec_fingerprint()
    parts = [
        f"// GENERATED by qrita.core.cgen from qrita.core (spec fingerprint {fp}); do not edit.",
        "#ifndef QRITA_PREAMBLE_INCLUDED",
        "#define QRITA_PREAMBLE_INCLUDED",
        f'#define QRITA_SPEC_FINGERPRINT "{fp}"',
        _HEADER.strip("\n"),
        *_constants(),
        *_key_functions(),
        *_luts(),
        "/* qrita.core.search / qrita.core.lut: translated from the Python AST */",
    ]
    for fn in TRANSLATED_FUNCTIONS:
        parts.append(f"/* {fn.__module__}.{fn.__name__} */")
        parts.append(translate_function(fn))
    parts.append("#endif  /* QRITA_PREAMBLE_INCLUDED */")
    return "\n".join(parts) + "\n"
