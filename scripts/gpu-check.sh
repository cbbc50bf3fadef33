#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU and the CUDA 13 toolkit
# but none of Lathe's build dependencies (the device machines): runs the
# self-contained lathe-gpu-check built elsewhere (tools/CMakeLists.txt:
# `bash scripts/build.sh --target gpu_check_bundle` makes
# build/release/gpu-check/, the binary and the shared libraries it needs).
#
#   bash scripts/gpu-check.sh [BUNDLE_DIR]     (default build/release/gpu-check)
#
# For every registry operator at a medium shape and a custom matmul: the
# default GPU schedule compiled by NVRTC, run on the GPU, checked against the
# CPU reference, timed with CUDA events (one PASS/FAIL line each); then fp32
# GEMM 4096^3 against cublasSgemm (tensor cores off), with the ratio.
# Finishes in well under 8 minutes on an H100 (each step is bounded by
# `timeout`). Exit status: lathe-gpu-check's (0 all passed, 1 a failure, 2
# no driver or no GPU).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="${1:-$root/build/release/gpu-check}"
binary="$bundle/lathe-gpu-check"

echo "gpu-check: $(date -u +%FT%TZ) on $(hostname)"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
else
  echo "gpu-check: nvidia-smi not found"
fi
if [[ ! -x "$binary" ]]; then
  echo "gpu-check: error: $binary not found; build it with" \
       "'bash scripts/build.sh --target gpu_check_bundle' and carry" \
       "build/release/gpu-check" >&2
  exit 1
fi
# NVRTC, its builtins and cuBLAS(Lt) live in the toolkit's library folders,
# which the loader may not search by itself.
for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d "$dir" ]] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
echo "gpu-check: LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"

echo "gpu-check: step 1/2: every operator's default GPU schedule, checked and timed"
timeout 300 "$binary" --gemm 0
ops_status=$?
echo "gpu-check: step 2/2: fp32 GEMM 4096^3, Lathe's default GPU schedule against cublasSgemm"
timeout 150 "$binary" --ops 'matmul:M=64,N=64,K=64' --gemm 4096
gemm_status=$?
echo "gpu-check: not run: a short GPU tuning run (no GPU design space yet)"
echo "gpu-check: operators exit $ops_status, cuBLAS comparison exit $gemm_status"
if [[ $ops_status -ne 0 ]]; then exit $ops_status; fi
exit $gemm_status
