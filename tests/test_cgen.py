"""The generated C++ preamble (``qrita.core.cgen``) says what the Python spec says.

* the text is deterministic, names its generator and the spec fingerprint in its
  first line, and holds every translated function, key mapping and LUT;
* the translator refuses Python it cannot follow (loudly, naming the function);
* compiled with ``g++`` as host C++, the translated state-machine functions, the
  LUT index functions, the key mapping and the LUT values agree with
  ``qrita.core`` on random and edge-case inputs (exhaustively for 16-bit keys).
"""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest

from qrita.core import cgen, keys, lut, search, spec
from qrita.core.fingerprint import spec_fingerprint

GXX = shutil.which("g++")


def test_preamble_is_deterministic_and_stamped():
    text = cgen.preamble()
    cgen.preamble.cache_clear()
    assert cgen.preamble() == text
    first = text.splitlines()[0]
    assert "GENERATED" in first and "qrita.core.cgen" in first and spec_fingerprint() in first
    assert f'#define QRITA_SPEC_FINGERPRINT "{spec_fingerprint()}"' in text


def test_preamble_holds_everything_kernels_use():
    text = cgen.preamble()
    for fn in cgen.TRANSLATED_FUNCTIONS:
        assert f"R qrita_{fn.__name__}(" in text, fn.__name__
    for dtype in spec.GPU_DTYPES:
        assert f"qrita_key_from_bits_{dtype}(" in text and f"qrita_bits_from_key_{dtype}(" in text
        kc = keys.KEY_CONSTANTS[dtype]
        assert f"#define QRITA_{dtype.upper()}_KEY_NEG_INF {kc.key_neg_inf:#x}u" in text
    assert f"qrita_topk_delta[{spec.TOPK_LUT_SIZE}]" in text and f"qrita_topp_delta[{spec.TOPP_LUT_SIZE}]" in text
    assert f"#define QRITA_NUM_PIVOTS {spec.NUM_PIVOTS}" in text
    assert f"#define QRITA_MAX_ROUNDS_32 {search.max_rounds(32, spec.NUM_PIVOTS)}" in text
    assert f'#define QRITA_LUT_CHECKSUM "{lut.lut_checksum()}"' in text


def test_every_portable_search_function_is_translated():
    # a new "Portable." function in qrita.core.search must reach the C side too
    portable = {
        name
        for name, fn in vars(search).items()
        if callable(fn)
        and getattr(fn, "__module__", "") == search.__name__
        and (fn.__doc__ or "").startswith("Portable.")
    }
    assert portable <= {fn.__name__ for fn in cgen.TRANSLATED_FUNCTIONS}


# --- the translator refuses what it cannot follow ----------------------------------------------


def _loop(a):
    for _ in range(a):
        a = a - 1
    return a


def _nested_first_assignment(a):
    if a > 0:
        b = 1
    return b  # noqa: F821 - deliberately Python-only scoping


def _chained(a, b, c):
    return a < b < c


def _unknown_call(a):
    return abs(a)


def _modulo(a, b):
    return a % b


UNSUPPORTED_GLOBAL = "text"


def _string_global(a):
    return a + UNSUPPORTED_GLOBAL


@pytest.mark.parametrize("fn", [_loop, _nested_first_assignment, _chained, _unknown_call, _modulo, _string_global])
def test_translator_refuses_unsupported_python(fn):
    with pytest.raises(cgen.CgenError, match=fn.__name__):
        cgen.translate_function(fn)


def _supported(a, b):
    c = a // b
    if a > b and not b == 0:
        c += 1
    elif a == b or b < 0:
        c = -c
    else:
        c = max(c, 0)
    return c if c != 3 else int(math.ceil(a / 2))


def test_translator_output_shape():
    text = cgen.translate_function(_supported)
    assert text.startswith(
        "template <typename R, typename T_a, typename T_b>\nQRITA_DEVICE R qrita__supported(T_a a, T_b b) {"
    )
    assert "qrita_floordiv(a, b)" in text and "ceil(" in text and "qrita_max(c, 0)" in text
    assert "} else if (" in text and "&&" in text and "||" in text


# --- the translation evaluated by a C++ compiler ----------------------------------------------------

_HARNESS = r"""
#include <cstdio>
#include <cstring>
#include "preamble.h"
typedef unsigned long long u64;
typedef long long i64;
long long qrita__supported_call(long long a, long long b);
int main() {
    char op[64];
    while (std::scanf("%63s", op) == 1) {
        if (!std::strcmp(op, "pivot")) {
            u64 lo, hi, j, P;
            std::scanf("%llu %llu %llu %llu", &lo, &hi, &j, &P);
            std::printf("%llu\n", qrita_pivot<u64>(lo, hi, j, P));
        } else if (!std::strcmp(op, "classify")) {
            u64 c, w, t; int f;
            std::scanf("%llu %llu %llu %d", &c, &w, &t, &f);
            std::printf("%d\n", qrita_classify_pivot<int>(c, w, t, f));
        } else if (!std::strcmp(op, "classify_f")) {
            double c, w, t; int f;
            std::scanf("%la %la %la %d", &c, &w, &t, &f);
            std::printf("%d\n", qrita_classify_pivot<int>(c, w, t, f));
        } else if (!std::strcmp(op, "narrow_lo")) {
            u64 lo, z; int s;
            std::scanf("%llu %d %llu", &lo, &s, &z);
            std::printf("%llu\n", qrita_narrow_lo<u64>(lo, s, z));
        } else if (!std::strcmp(op, "narrow_hi")) {
            u64 hi, t; int s;
            std::scanf("%llu %d %llu", &hi, &s, &t);
            std::printf("%llu\n", qrita_narrow_hi<u64>(hi, s, t));
        } else if (!std::strcmp(op, "snap_hi")) {
            u64 hi, lo, z;
            std::scanf("%llu %llu %llu", &hi, &lo, &z);
            std::printf("%llu\n", qrita_snap_hi<u64>(hi, lo, z));
        } else if (!std::strcmp(op, "topk_ties")) {
            i64 k, a, n; int t;
            std::scanf("%lld %lld %lld %d", &k, &a, &n, &t);
            std::printf("%lld\n", qrita_topk_num_ties<i64>(k, a, n, t));
        } else if (!std::strcmp(op, "topp_ties")) {
            double target, above, w; i64 n; int t;
            std::scanf("%la %la %la %lld %d", &target, &above, &w, &n, &t);
            std::printf("%lld\n", qrita_topp_num_ties<i64>(target, above, w, n, t));
        } else if (!std::strcmp(op, "topk_lut")) {
            i64 k, v;
            std::scanf("%lld %lld", &k, &v);
            std::printf("%d\n", qrita_topk_lut_index<int>(k, v));
        } else if (!std::strcmp(op, "topp_lut")) {
            double p;
            std::scanf("%la", &p);
            std::printf("%d\n", qrita_topp_lut_index<int>(p));
        } else if (!std::strcmp(op, "key")) {
            char dt[16]; unsigned u;
            std::scanf("%15s %u", dt, &u);
            unsigned k = !std::strcmp(dt, "float32") ? qrita_key_from_bits_float32(u)
                       : !std::strcmp(dt, "float16") ? qrita_key_from_bits_float16((unsigned short)u)
                                                     : qrita_key_from_bits_bfloat16((unsigned short)u);
            std::printf("%u\n", k);
        } else if (!std::strcmp(op, "bits")) {
            char dt[16]; unsigned k;
            std::scanf("%15s %u", dt, &k);
            unsigned b = !std::strcmp(dt, "float32") ? qrita_bits_from_key_float32(k)
                       : !std::strcmp(dt, "float16") ? (unsigned)qrita_bits_from_key_float16(k)
                                                     : (unsigned)qrita_bits_from_key_bfloat16(k);
            std::printf("%u\n", b);
        } else if (!std::strcmp(op, "lut")) {
            int which, i;
            std::scanf("%d %d", &which, &i);
            float v = which == 0 ? qrita_topk_delta[i] : qrita_topp_delta[i];
            unsigned u;
            std::memcpy(&u, &v, 4);
            std::printf("%u\n", u);
        } else if (!std::strcmp(op, "floordiv")) {
            i64 a, b;
            std::scanf("%lld %lld", &a, &b);
            std::printf("%lld\n", (i64)qrita_floordiv(a, b));
        } else {
            std::printf("unknown op %s\n", op);
            return 2;
        }
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    if GXX is None:
        pytest.skip("g++ not found: cannot compile the generated preamble as host C++")
    d = tmp_path_factory.mktemp("cgen")
    (d / "preamble.h").write_text(cgen.preamble())
    (d / "harness.cpp").write_text(_HARNESS.replace("long long qrita__supported_call(long long a, long long b);\n", ""))
    exe = d / "harness"
    proc = subprocess.run(
        [GXX, "-std=c++17", "-O1", "-Wall", "-o", str(exe), str(d / "harness.cpp")], capture_output=True, text=True
    )
    assert proc.returncode == 0, f"g++ failed on the generated preamble:\n{proc.stderr}"

    def run(lines: list[str]) -> list[str]:
        out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
        got = out.stdout.split("\n")[:-1]
        assert len(got) == len(lines), out.stdout[-500:]
        return got

    return run


def _h(x: float) -> str:
    return float(x).hex()


def test_state_machine_functions_match_python(harness):
    rng = np.random.default_rng(5)
    lines, want = [], []
    for _ in range(3000):
        lo = int(rng.integers(0, 2**32 - 2))
        hi = lo + 1 + int(rng.integers(0, min(2**32 - 1 - lo, 2**20) if rng.random() < 0.5 else 2**32 - 1 - lo))
        P = int(rng.choice([1, 3, 7, 255]))
        j = int(rng.integers(1, P + 1))
        lines.append(f"pivot {lo} {hi} {j} {P}")
        want.append(search.pivot(lo, hi, j, P))
        zmn = int(rng.integers(lo, hi + 1))
        state = int(rng.integers(0, 3))
        lines.append(f"narrow_lo {lo} {state} {zmn}")
        want.append(search.narrow_lo(lo, state, zmn))
        lines.append(f"narrow_hi {hi} {state} {zmn}")
        want.append(search.narrow_hi(hi, state, zmn))
        zmx = int(rng.integers(0, 2**32))
        lines.append(f"snap_hi {hi} {lo} {zmx}")
        want.append(search.snap_hi(hi, lo, zmx))
        c = int(rng.integers(0, 10**6))
        w = int(rng.integers(0, c + 1))
        t = int(rng.integers(1, 10**6))
        f = int(rng.random() < 0.1)
        lines.append(f"classify {c} {w} {t} {f}")
        want.append(search.classify_pivot(c, w, t, bool(f)))
        cf, wf, tf = rng.random() * 10, rng.random(), rng.random() * 10
        wf = min(wf, cf)
        lines.append(f"classify_f {_h(cf)} {_h(wf)} {_h(tf)} {f}")
        want.append(search.classify_pivot(cf, wf, tf, bool(f)))
        n_eq = int(rng.integers(1, 100))
        above = int(rng.integers(0, 50))
        k = above + int(rng.integers(1, n_eq + 1))
        ta = int(rng.integers(0, 2))
        lines.append(f"topk_ties {k} {above} {n_eq} {ta}")
        want.append(search.topk_num_ties(k, above, n_eq, ta))
        weight = float(rng.choice([0.0, rng.random(), 1.0, 1e-300]))
        mass_above = rng.random() * 5
        target = mass_above + rng.random() * (n_eq * max(weight, 1e-3)) * 1.5
        lines.append(f"topp_ties {_h(target)} {_h(mass_above)} {_h(weight)} {n_eq} {ta}")
        want.append(search.topp_num_ties(target, mass_above, weight, n_eq, ta))
    # exact-division cases: ceil must not round a whole number up
    for n in range(1, 50):
        lines.append(f"topp_ties {_h(3.0 + n * 0.25)} {_h(3.0)} {_h(0.25)} 60 0")
        want.append(search.topp_num_ties(3.0 + n * 0.25, 3.0, 0.25, 60, 0))
    for a in range(-20, 21):
        for b in (-7, -3, -1, 1, 2, 5):
            lines.append(f"floordiv {a} {b}")
            want.append(a // b)
    got = harness(lines)
    bad = [(line, g, w) for line, g, w in zip(lines, got, want, strict=True) if int(g) != int(w)]
    assert not bad, bad[:10]


def test_lut_index_functions_match_python(harness):
    rng = np.random.default_rng(6)
    lines, want = [], []
    for V in (2, 7, 1000, 32000, 128256, 151936, 262144, 2**31 - 1):
        ks = {1, 2, 3, V - 1, V // 2, V // 3, max(1, V // 256)} | {int(k) for k in rng.integers(1, V, 50)}
        for k in sorted(kk for kk in ks if 0 < kk < V):
            lines.append(f"topk_lut {k} {V}")
            want.append(lut.topk_lut_index(k, V))
    for p in [1e-12, 0.001, 0.5, 0.9, 0.95, 0.99, 0.999999, 1 / 255, 128 / 255] + list(rng.random(300)):
        lines.append(f"topp_lut {_h(p)}")
        want.append(lut.topp_lut_index(p))
    got = harness(lines)
    bad = [(line, g, w) for line, g, w in zip(lines, got, want, strict=True) if int(g) != int(w)]
    assert not bad, bad[:10]


@pytest.mark.parametrize("dtype", spec.GPU_DTYPES)
def test_key_mapping_matches_core(harness, dtype):
    kc = keys.KEY_CONSTANTS[dtype]
    if kc.width == 16:
        bits = np.arange(2**16, dtype=np.uint32)
    else:
        rng = np.random.default_rng(8)
        specials = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F7FFFFF, 0x00000001, 0x80000001]
        bits = np.concatenate([np.asarray(specials, np.uint32), rng.integers(0, 2**32, 20000, dtype=np.uint32)])
    want_keys = keys.keys_from_bits(bits.astype(kc.uint), dtype).astype(np.int64)
    got = np.asarray(harness([f"key {dtype} {int(b)}" for b in bits]), dtype=np.int64)
    np.testing.assert_array_equal(got, want_keys)
    valid = want_keys != keys.KEY_NAN
    k = want_keys[valid]
    want_bits = keys.bits_from_keys(k.astype(kc.uint), dtype).astype(np.int64)
    got_bits = np.asarray(harness([f"bits {dtype} {int(x)}" for x in k]), dtype=np.int64)
    np.testing.assert_array_equal(got_bits, want_bits)


def test_lut_values_are_bit_exact(harness):
    lines = [f"lut 0 {i}" for i in range(spec.TOPK_LUT_SIZE)] + [f"lut 1 {i}" for i in range(spec.TOPP_LUT_SIZE)]
    got = np.asarray(harness(lines), dtype=np.uint32)
    want = np.concatenate([lut.TOPK_DELTA.view(np.uint32), lut.TOPP_DELTA.view(np.uint32)])
    np.testing.assert_array_equal(got, want)
