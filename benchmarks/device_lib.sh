# Shell functions for the device scripts under docs/bench/ (sourced: `. benchmarks/device_lib.sh`), so that
# each script holds only what it runs.  They expect $OUT (the device's output folder), $P (the probe log
# under it) and T0=$SECONDS set by the script (device_start sets them).

# device_start SHA LABEL: a device script's start: the Python environment, SHA, T0 and P, then device_probe
device_start() {
  export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
  SHA=${1:?commit SHA}
  T0=$SECONDS
  P=$OUT/probe.log
  device_probe "$SHA" "$2"
}

# device_probe SHA LABEL: the commit, the GPU and the library versions, as the first lines of $P
device_probe() {
  { echo "== commit $1 $2"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
    python3 - <<'PY'
import importlib
found = []
for name in ("torch", "triton", "cupy", "numba", "numba_cuda"):
    try:
        found.append(f"{name} {importlib.import_module(name).__version__}")
    except Exception:  # not on this machine
        pass
print(", ".join(found))
PY
  } > "$P" 2>&1
}

# run_suite NAME BACKENDS LIMIT_S PYTEST_ARGS...: one pytest process (QRITA_TEST_BACKENDS=BACKENDS), its log in
# /tmp/suite_NAME.log, its exit status and the elapsed time appended to $P
run_suite() {
  local name=$1 backends=$2 limit=$3
  shift 3
  QRITA_TEST_BACKENDS=$backends timeout "$limit" python3 -m pytest -v -p no:cacheprovider -rfE "$@" \
    > "/tmp/suite_$name.log" 2>&1
  echo "$name rc=$? t=$((SECONDS - T0))" >> "$P"
}

# summarize_suites NAME...: passed / skipped / failed counts, failures and pytest's last lines of each run into
# $OUT/suite.log, then every test outcome of the first one
summarize_suites() {
  local f
  for f in "$@"; do
    echo "== $f passed=$(grep -c PASSED "/tmp/suite_$f.log") skipped=$(grep -c SKIPPED "/tmp/suite_$f.log") failed=$(grep -c FAILED "/tmp/suite_$f.log")"
    grep -E "FAILED|ERROR|Error" "/tmp/suite_$f.log" | head -20 | cut -c1-300
    tail -2 "/tmp/suite_$f.log" | cut -c1-300
  done > "$OUT/suite.log"
  grep -v -i warn "/tmp/suite_$1.log" | grep -E "PASSED|FAILED|ERROR|SKIPPED" | cut -c1-200 >> "$OUT/suite.log"
}

# run_bench NAME SHA BUDGET_S HARNESS_ARGS...: `qrita.bench --full` into $OUT/NAME (its results.{json,md}) with
# a time budget (killed 20 s after it), its exit status, elapsed time and last lines appended to $P
run_bench() {
  local name=$1 sha=$2 budget=$3
  shift 3
  mkdir -p "$OUT/$name"
  QRITA_GIT_COMMIT=$sha timeout -s ABRT $((budget + 20)) python3 -m qrita.bench --full --out "$OUT/$name" \
    --budget-s "$budget" --vocabs 131072 --no-plots "$@" > "/tmp/bench_$name.log" 2>&1
  echo "$name rc=$? t=$((SECONDS - T0))" >> "$P"
  tail -5 "/tmp/bench_$name.log" >> "$P"
}

# numba_gpu_suites LIMIT_S [PYTEST_ARGS...]: the Numba backend's GPU tests and its conformance suite at real shapes (three -k
# processes), side by side, summarised into $OUT/suite.log
numba_gpu_suites() {
  run_suite backend "" "$1" "${@:2}" -m gpu tests/test_numba_backend.py &
  run_suite conf32 numba "$1" "${@:2}" -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
  run_suite conf16 numba "$1" "${@:2}" -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
  run_suite confrest numba "$1" "${@:2}" -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
  wait
  summarize_suites backend conf32 conf16 confrest
}

# numba_gpu_suites_fi LIMIT_S: numba_gpu_suites, with FlashInfer's JIT build beside them where the wheels were
# carried (.whl/), for a later masked_fi harness run on the same machine
numba_gpu_suites_fi() {
  [ -d .whl ] && flashinfer_warmup flashinfer float32,bfloat16 300
  numba_gpu_suites "$1"
}

# issue6_rows SHA BUDGET_S PROFILE_LIMIT_S OPTIONS...: issue 6's masking rows (Numba / torch.topk / FlashInfer /
# Triton, top-k 50 in place, LLM-like and Gaussian, fp32 and bf16, B = 64 and 256; FlashInfer from /tmp/site) into
# $OUT/masked_fi, then Numba's B=64 kernel profiles (torch.profiler, LLM-like top-k 50 masked, fp32 and bf16, each
# option set given, PROFILE_LIMIT_S a dtype) into $OUT/profile.log
issue6_rows() {
  local sha=$1 budget=$2 limit=$3 dt o
  shift 3
  local opts=()
  for o in "$@"; do opts+=(--options "$o"); done
  PYTHONPATH=/tmp/site:. run_bench masked_fi "$sha" "$budget" --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
    --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256
  { for dt in float32 bfloat16; do
      timeout "$limit" python3 benchmarks/profile_triton.py --backend numba --B 64 --dist hllm --dtype $dt --cases k50 \
        "${opts[@]}"
    done
  } > "$OUT/profile.log" 2>&1
  echo "profiles rc=$? t=$((SECONDS - T0))" >> "$P"
}

# run_ab SET LIMIT_S: benchmarks/numba_ab.py --set SET into $OUT/ab_SET.json, its exit status and elapsed time
# appended to $P
run_ab() {
  timeout "$2" python3 benchmarks/numba_ab.py "$OUT/ab_$1.json" --set "$1" > "/tmp/ab_$1.log" 2>&1
  echo "ab $1 rc=$? t=$((SECONDS - T0))" >> "$P"
}

# flashinfer_install: the carried wheels (.whl/, named in the run's `carry`) into /tmp/site (on PYTHONPATH after)
flashinfer_install() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> "$P" 2>&1
}

# flashinfer_warmup PROVIDERS DTYPES LIMIT_S: flashinfer_install, then build FlashInfer's JIT modules for the
# harness's PROVIDERS and DTYPES in the background (pid in $FI; a later plain `wait` waits for it too); the
# build stays in FlashInfer's cache for the next calls on the same warm machine
flashinfer_warmup() {
  flashinfer_install
  (PYTHONPATH=/tmp/site:. timeout "$3" python3 -c "import sys; sys.argv[1:] = ['$1', '$2']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1
   echo "flashinfer warm-up rc=$? t=$((SECONDS - T0))" >> "$P") &
  FI=$!
}

# triton_gpu_suites LIMIT_S SMALL_K: the Triton GPU suites side by side (conformance at real shapes in three -k
# processes, the backend's and the sampler's GPU tests, and the backend's small-shape tests selected by -k SMALL_K),
# summarised into $OUT/suite.log
triton_gpu_suites() {
  run_suite backend triton "$1" -m gpu tests/test_triton_backend.py &
  run_suite conf32 triton "$1" -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
  run_suite conf16 triton "$1" -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
  run_suite confrest triton "$1" -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
  run_suite sampling triton "$1" -m gpu tests/test_sampling.py &
  run_suite small "" "$1" -m "not gpu" -k "$2" tests/test_triton_backend.py &
  wait
  echo "suite t=$((SECONDS - T0))" >> "$P"
  summarize_suites backend conf32 conf16 confrest sampling small
}

# sweep_set NAME SET BUDGET_S: on a quiet GPU benchmarks/sweep_triton.py --set SET into $OUT/NAME.json (its log in
# /tmp/NAME.log), its exit status and elapsed time appended to $P
sweep_set() {
  timeout $(($3 + 20)) python3 benchmarks/sweep_triton.py --set "$2" --budget-s "$3" --out "$OUT/$1.json" > "/tmp/$1.log" 2>&1
  echo "$1 rc=$? t=$((SECONDS - T0))" >> "$P"
}

# triton_ab_suites SET END_S SMALL_K: on a quiet GPU benchmarks/sweep_triton.py --set SET (a 150 s budget) into
# $OUT/SET.json, then triton_gpu_suites until END_S seconds from the start (at least 60) with SMALL_K, then the
# sweep's last lines into $P
triton_ab_suites() {
  sweep_set "$1" "$1" 150
  local left=$(($2 - (SECONDS - T0)))
  [ $left -lt 60 ] && left=60
  triton_gpu_suites $left "$3"
  grep -v -i warning "/tmp/$1.log" | tail -40 >> "$P"
}

# suites_with_defaults SMALL_K VAR=VALUE...: triton_gpu_suites until $SUITES_END (default 560) s from the start (at
# least 60) with SMALL_K, with launch.py's defaults `VAR = ...` set to VALUE by seds on the device's disposable copy
# of the tree (the lines logged into $P) and put back after
suites_with_defaults() {
  local file=qrita/backends/triton/launch.py k=$1 pair left
  shift
  cp "$file" /tmp/launch.py.orig
  for pair in "$@"; do
    sed -i "s/^${pair%%=*} = .*\$/${pair%%=*} = ${pair#*=}/" "$file"
    grep -n "^${pair%%=*} = " "$file" >> "$P"
  done
  left=$((${SUITES_END:-560} - (SECONDS - T0)))
  [ $left -lt 60 ] && left=60
  triton_gpu_suites $left "$k"
  cp /tmp/launch.py.orig "$file"
}

# sweep_tails NAME...: the last lines of each sweep's log (/tmp/NAME.log) into $P
sweep_tails() {
  local f
  for f in "$@"; do echo "== $f"; grep -v -i warning "/tmp/$f.log" | tail -30; done >> "$P"
}
