#!/usr/bin/env bash
# The one prepared script for a lent NVIDIA GPU machine: minitf's OpenCL numbers next to
# PyTorch's on the same card, then the OpenCL tests, everything saved under $OUT.
#
# On the device (from the repository root, with .whl/ carried; see benchmarks/README.md):
#
#     bash benchmarks/gpu_device_check.sh
#
# Here, as a dry run on PoCL (no wheel install, no ICD setup, .venv's Python):
#
#     OUT=$(mktemp -d) CHECK_SIZE=262144 CHECK_SKIP_2048=1 CHECK_REPEAT=2 CHECK_STEPS=3 \
#         bash benchmarks/gpu_device_check.sh --local
#
# Why each step exists:
# - The device has no internet and no pyopencl or minitf: benchmarks/prepare_device_wheels.sh
#   put their wheels in .whl/, installed here into /tmp/site.  PYTHONPATH=/tmp/site makes the
#   INSTALLED minitf the one imported (and importlib.metadata find its dist-info, which declares
#   the plugins' entry points); Python runs with -P where the current directory would otherwise
#   put the source tree first.  setup.log records which files were imported.
# - The pyopencl wheel's ICD loader looks for drivers in /etc/OpenCL/vendors, which the device
#   lacks; OCL_ICD_VENDORS points it at a folder naming NVIDIA's libnvidia-opencl.so.1.
# - The device time is short (15 minutes, start-up included), so the numbers come first
#   (bench_opencl.py, torch_reference.py, then compare_gpu_goals.py -> goals.txt), the tests
#   after them, and every step runs under `timeout`, capped by what is left of a deadline
#   (CHECK_DEADLINE_S, 480 s): a step that hangs costs its own results, not the others'.
# - At most 8 files come back from $OUT: setup.log, bench_opencl.log, minitf.json,
#   torch_reference.log, torch.json, goals.txt, tests.log, minitf_compiled.json.
# - The GEMM autotuner stays ON for the benchmarks (the tests turn it off in conftest.py); its
#   cache and pyopencl's go under XDG_CACHE_HOME, set to /tmp on the device so it is writable.
#
# Reduced sizes for a dry run (defaults are the goals' sizes): CHECK_SIZE (floats per vector
# in the add chain, 4194304), CHECK_REPEAT (5), CHECK_STEPS (MLP steps per repeat, 20),
# CHECK_SKIP_2048=1 (matmul at 1024^2 only), CHECK_TESTS (the test files to run); and
# CHECK_TORCH_PYTHON, the Python that has PyTorch (default: the one running everything else);
# CHECK_OPENCL_ICD, the driver library named in the ICD file (default libnvidia-opencl.so.1;
# libpocl.so.2 rehearses the device path on this machine).
set -uo pipefail   # no -e: a failed step must not stop the ones after it

: "${OUT:?set OUT to the folder whose files come back}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
LOCAL=0
[ "${1:-}" = "--local" ] && LOCAL=1
DEADLINE=${CHECK_DEADLINE_S:-480}
TORCH_PY=${CHECK_TORCH_PYTHON:-}
SIZES=(--size "${CHECK_SIZE:-4194304}" --repeat "${CHECK_REPEAT:-5}" --steps "${CHECK_STEPS:-20}")
[ -n "${CHECK_SKIP_2048:-}" ] && SIZES+=(--skip-2048)
TESTS=${CHECK_TESTS:-"tests/test_opencl.py tests/test_opencl_api.py tests/test_opencl_compiled_step.py tests/test_opencl_gemm.py tests/test_xla_fusion.py"}

# step NAME CAP_SECONDS LOG COMMAND...: run COMMAND under timeout (CAP, or what is left of the
# deadline if less), its output appended to $OUT/LOG and shown.
step() {
    local name=$1 cap=$2 log=$3
    shift 3
    local left=$((DEADLINE - SECONDS))
    [ "$left" -lt "$cap" ] && cap=$left
    if [ "$cap" -lt 20 ]; then
        echo "== $name: skipped, ${left}s left of the ${DEADLINE}s deadline" | tee -a "$OUT/$log"
        return
    fi
    echo "== $name (timeout ${cap}s, at ${SECONDS}s)" | tee -a "$OUT/$log"
    timeout "$cap" "$@" 2>&1 | tee -a "$OUT/$log"
    echo "== $name: exit ${PIPESTATUS[0]} after ${SECONDS}s" | tee -a "$OUT/$log"
}

if [ "$LOCAL" = 1 ]; then
    PY=".venv/bin/python"
else
    PY="python3"
    if $PY -m pip --version > /dev/null 2>&1; then
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site .whl/*.whl 2>&1 | tee -a "$OUT/setup.log"
    else   # a venv made without pip: a wheel is a zip laid out as site-packages
        for wheel in .whl/*.whl; do $PY -m zipfile -e "$wheel" /tmp/site; done
    fi
    export PYTHONPATH=/tmp/site
    mkdir -p /tmp/ocl-vendors
    echo "${CHECK_OPENCL_ICD:-libnvidia-opencl.so.1}" > /tmp/ocl-vendors/nvidia.icd
    export OCL_ICD_VENDORS=/tmp/ocl-vendors
    export XDG_CACHE_HOME=/tmp/xdg-cache
fi

{
    echo "== setup ($([ "$LOCAL" = 1 ] && echo local dry run || echo device))"
    date -u
    nvidia-smi -L 2>&1 || echo "(no nvidia-smi)"
    $PY -P - <<'EOF'
import importlib.metadata, sys
print("python", sys.version.split()[0])
try:
    import pyopencl as cl
    for platform in cl.get_platforms():
        print("OpenCL platform:", platform.name, "|", platform.version)
        for device in platform.get_devices():
            print("  device:", device.name, "|", device.version,
                  "| %d compute units, %d MiB" % (device.max_compute_units,
                                                  device.global_mem_size >> 20))
except Exception as error:  # the log must say why, and the script go on
    print("pyopencl: %s: %s" % (type(error).__name__, error))
import minitf, minitf_opencl_gpu
from minitf.registry import get_registry
print("minitf from", minitf.__file__)
print("minitf_opencl_gpu from", minitf_opencl_gpu.__file__)
print("minitf entry points:", sorted(e.name for e in importlib.metadata.entry_points(group="minitf")))
factory = get_registry().device_factory("GPU")
print("GPU device:", factory.describe(0) if factory else get_registry().unavailable_devices())
EOF
    # The wheel is a snapshot of the tree when prepare_device_wheels.sh ran; the tests come
    # from the tree as carried now.  A difference would fail tests for no fault of the code.
    [ "$LOCAL" = 1 ] || $PY -P - <<'EOF'
import filecmp, pathlib
site = pathlib.Path("/tmp/site")
SOURCES = {"minitf": "minitf", "minitf_numpy_cpu": "plugins/numpy_cpu",
           "minitf_opencl_gpu": "plugins/opencl_gpu",
           "minitf_opencl_gpu/opencl_kernels": "opencl_kernels"}
def files(root, skip=()):
    return {p.relative_to(root) for p in root.rglob("*") if p.suffix in (".py", ".cl")
            and "__pycache__" not in p.parts and not any(p.is_relative_to(root / s) for s in skip)}
stale = []
for installed, source in SOURCES.items():
    skip = [k[len(installed) + 1:] for k in SOURCES if k.startswith(installed + "/")]
    wheel, tree = files(site / installed, skip), files(pathlib.Path(source))
    stale += [source + "/" + str(p) for p in sorted(wheel ^ tree)]
    stale += [source + "/" + str(p) for p in sorted(wheel & tree)
              if not filecmp.cmp(site / installed / p, pathlib.Path(source) / p, shallow=False)]
print("installed minitf matches the source tree" if not stale else
      "WARNING: the minitf wheel is stale (rerun prepare_device_wheels.sh): %d files differ: %s"
      % (len(stale), " ".join(stale[:10])))
EOF
} 2>&1 | tee -a "$OUT/setup.log"

# The goals' numbers first: minitf, then PyTorch on the same GPU, then the ratios.
step "bench_opencl.py" 200 bench_opencl.log \
    $PY benchmarks/bench_opencl.py "${SIZES[@]}" --json "$OUT/minitf.json"
step "torch_reference.py" 100 torch_reference.log \
    ${TORCH_PY:-$PY} benchmarks/torch_reference.py "${SIZES[@]}" --json "$OUT/torch.json"
$PY benchmarks/compare_gpu_goals.py --minitf "$OUT/minitf.json" --torch "$OUT/torch.json" \
    2>&1 | tee "$OUT/goals.txt"

# The OpenCL tests, with the installed minitf (printed after the run, from sys.modules).
# shellcheck disable=SC2086  # TESTS is a list of paths
step "OpenCL tests" 300 tests.log $PY -P -c '
import sys, pytest
code = pytest.main(sys.argv[1:])
import minitf, minitf_opencl_gpu
print("tests ran minitf from %s and its OpenCL plugin from %s"
      % (minitf.__file__, minitf_opencl_gpu.__file__))
sys.exit(code)' -q -p no:cacheprovider -x --timeout 120 $TESTS

# If time is left: the compiled step's case (f), which has the 784-512-512-10 MLP.
step "bench_opencl.py --only-compiled" 120 bench_opencl.log \
    $PY benchmarks/bench_opencl.py "${SIZES[@]}" --only-compiled --json "$OUT/minitf_compiled.json"
if [ -f "$OUT/minitf_compiled.json" ]; then
    $PY benchmarks/compare_gpu_goals.py --minitf "$OUT/minitf.json" \
        --minitf "$OUT/minitf_compiled.json" --torch "$OUT/torch.json" 2>&1 | tee "$OUT/goals.txt"
fi
echo "== done after ${SECONDS}s; results in $OUT:"
ls -l "$OUT"
