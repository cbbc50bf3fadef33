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
# GEMM 4096^3 against cublasSgemm (tensor cores off), with the ratio; then
# a kernel for builds (softmax) emitted, compiled with the machine's g++
# against the driver (tools/host_entry_check.cc) and checked on the GPU.
# Each step is bounded by `timeout`, 8 minutes in all at worst (about a
# minute or two expected on an H100). Exit status: the first failing step's
# (lathe-gpu-check: 1 a failure, 2 no driver or no GPU), else 0.
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

echo "gpu-check: step 1/3: every operator's default GPU schedule, checked and timed"
timeout 240 "$binary" --gemm 0
ops_status=$?
echo "gpu-check: step 2/3: fp32 GEMM 4096^3, Lathe's default GPU schedule and its shared-tile variants against cublasSgemm"
timeout 180 "$binary" --ops 'matmul:M=64,N=64,K=64' --gemm 4096 --gemm-variants
gemm_status=$?
echo "gpu-check: step 3/3: a kernel for builds (emitted, compiled with g++ -lcuda, run)"
work=$(mktemp -d)
host_status=1
if timeout 30 "$binary" --source softmax:M=4,N=512 --emit "$work" --name softmax_4x512 &&
   timeout 60 g++ -std=c++17 -O2 -I/usr/local/cuda/include -I"$work" \
     "$root/tools/host_entry_check.cc" "$work/softmax_4x512.cc" \
     -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcuda \
     -o "$work/host_entry_check"; then
  timeout 30 "$work/host_entry_check"
  host_status=$?
else
  echo "FAIL host entry point: could not emit or compile it"
fi
rm -rf "$work"
echo "gpu-check: not run: a short GPU tuning run (no GPU design space yet)"
echo "gpu-check: operators exit $ops_status, cuBLAS comparison exit $gemm_status," \
     "host entry point exit $host_status"
for status in $ops_status $gemm_status $host_status; do
  if [[ $status -ne 0 ]]; then exit $status; fi
done
exit 0
