#!/usr/bin/env bash
# Issue 36's device checks as one prepared command, for a session that is lent a GPU.
#
# Here (once, on the developer's machine): fetch the wheels the device image lacks into .whl/
#   bash tools/gpu_check.sh wheels
# There (the device tool's `run`, carry [".whl"], timeout_s 600; about 9-10 min on an H200):
#   bash tools/gpu_check.sh
# It writes at most 8 files under $OUT (the tool brings back no more):
#   devices.txt      jax, the devices and nvidia-smi's first lines
#   hlo_ops-gpu.json operations per round of the compiled loop body on the GPU (oslr and the
#                    plain JAX scan): about one kernel each (benchmarks/hlo_ops.py)
#   anchors-4096-gpu.json, anchors-65536-gpu.json
#                    oslr against the plain JAX scan, wall time, T = 200 (benchmarks/anchor_ratios.py)
#   tests.log        the default test run on the GPU (-n 8), with the GPU-only and the
#                    cross-process checks of the reproducibility paragraph (README) added
#   steps.log        each step's exit status and seconds
# `GPU_CHECK_DRY=1 bash tools/gpu_check.sh` runs the same steps at toy sizes (on a CPU too: a
# check of the plumbing before a device's minutes are spent on it).
# Commit what it measured: `python -m benchmarks.anchor_ratios --render ... --out benchmarks`
# renders the anchors files into ANCHORS-gpu.md; copy hlo_ops-gpu.json beside hlo_ops.json.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "wheels" ]; then
    # pure-Python wheels (and rpds-py's manylinux build) of what the image lacks: mpax for the
    # Dantzig selector, nbformat (imported by tests/test_notebooks.py) and their needs
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d .whl \
        mpax==0.2.4 nbformat fastjsonschema jsonschema jsonschema-specifications referencing \
        rpds-py jupyter-core platformdirs traitlets
    exit
fi

OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
if [ -z "${GPU_CHECK_DRY:-}" ] && ls .whl/*.whl > /dev/null 2>&1; then  # (cp312 wheels)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD/src:$PWD

step() {  # step NAME SECONDS COMMAND...: run with a time limit, log its status and seconds
    local name=$1 limit=$2 t0=$SECONDS
    shift 2
    timeout "$limit" "$@"
    echo "$name: exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/steps.log"
}

{ python3 -c "import jax, jaxlib; print('jax', jax.__version__, jaxlib.__version__, jax.devices())"
  nvidia-smi | head -12; } > "$OUT/devices.txt" 2>&1

if [ -n "${GPU_CHECK_DRY:-}" ]; then
    sizes="64 128" horizon=20 tests=(tests/test_metrics.py tests/test_anchors.py) hlo=(--runs 16 --horizon 20)
else
    sizes="4096 65536" horizon=200 tests=() hlo=()
fi
mkdir -p "$OUT/hlo"
step hlo_ops 120 python3 -m benchmarks.hlo_ops "${hlo[@]}" --out "$OUT/hlo"
cp "$OUT"/hlo/hlo_ops*.json "$OUT/" 2>/dev/null; rm -r "$OUT/hlo"
for runs in $sizes; do
    mkdir -p "$OUT/a$runs"
    step "anchors-$runs" 150 python3 -m benchmarks.anchor_ratios --runs "$runs" \
        --horizon "$horizon" --repeats 3 --sides jax_plain --out "$OUT/a$runs"
    for f in "$OUT/a$runs"/anchors*.json; do
        [ -e "$f" ] && mv "$f" "$OUT/$(basename "$f" .json | sed "s/^anchors/anchors-$runs/").json"
    done
    rm -rf "$OUT/a$runs"
done
# the default run, then the cross-process checks that live behind -m slow
step tests 300 python3 -m pytest -q -p no:benchmark -n 8 -p no:cacheprovider "${tests[@]}" \
    > "$OUT/tests.log" 2>&1
step cross-process 120 python3 -m pytest -q -p no:benchmark -n 2 -p no:cacheprovider -m slow \
    tests/test_distributed.py \
    "tests/test_checkpoint.py::test_checkpoint__process_killed_right_after_a_rename_resumes_bit_identical" \
    >> "$OUT/tests.log" 2>&1
tail -3 "$OUT/tests.log"
cat "$OUT/steps.log"
