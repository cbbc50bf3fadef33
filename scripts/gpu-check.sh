#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU and the CUDA 13 toolkit
# but none of Lathe's build dependencies (the device machines): runs the
# self-contained lathe-gpu-check built elsewhere (tools/CMakeLists.txt:
# `bash scripts/build.sh --target gpu_check_bundle` makes
# build/release/gpu-check/, the binary and the shared libraries it needs).
#
#   bash scripts/gpu-check.sh [BUNDLE_DIR [RESULTS_DIR [STEPS]]]
#     BUNDLE_DIR defaults to build/release/gpu-check; the tuning runs'
#     databases go to RESULTS_DIR (default: a temporary folder, removed);
#     STEPS (default 1-7) picks steps by number, as "1-4", "5" or "6,7":
#     run in a few calls to a lent machine, each call's log comes back even
#     when a later call's machine is lost.
#
# For every registry operator at a medium shape and a custom matmul: the
# default GPU schedule compiled by NVRTC, run on the GPU, checked against the
# CPU reference, timed with CUDA events (one PASS/FAIL line each), and
# small models (a CNN, a ResNet block, host steps between kernels) run as
# `lathe run MODEL --target cuda` runs them, checked against the host
# (tools/model_check.h); then fp32
# GEMM 4096^3 against cublasSgemm (tensor cores off), with the ratio; then
# the shared-memory tile's fixed parameters varied (K chunk, register tile
# and its groups), each against cublasSgemm, and the ResNet-50 3x3
# convolution's default (batch 1 and 16) with its first eight ranked tiles
# and without one, each against cuDNN; then
# a kernel for builds (softmax) emitted, compiled with the machine's g++
# against the driver (tools/host_entry_check.cc) and checked on the GPU;
# then candidates measured through a LocalRunner and its confined CUDA
# worker processes, faults included (tools/runner_check.h: what `lathe tune
# --target cuda` and `lathe runner --target cuda` do), and a tuning job
# through a tuner daemon and a remote runner on loopback gRPC measuring in
# those workers (tools/service_check.h); then short tuning runs (the GPU
# design space, the search and its cost model, every candidate checked and
# timed on the GPU; the peer timed first, so each line of the tuning curve
# gives its ratio even if the step is cut short): fp32 GEMM 4096^3 (1000
# trials or 190 s, then the best against cublasSgemm) and the ResNet-50 3x3
# convolution (C=K=128, 28x28, batch 1 and 16; 300 trials or 45 s each, then
# the best against cuDNN; a tuning run ends at the first batch boundary
# past its budget, and a batch of convolution candidates, whose NVRTC
# compiles take seconds each, can take half a minute). Each step is bounded
# by `timeout`, 15 minutes in all at worst (about eight
# expected on an H100 or H200).
# Exit status: the first failing step's
# (lathe-gpu-check: 1 a failure, 2 no driver or no GPU), else 0.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="${1:-$root/build/release/gpu-check}"
binary="$bundle/lathe-gpu-check"
results="${2:-}"
steps="${3:-1-7}"
# Whether step $1 is among $steps (comma-separated numbers and ranges).
want() {
  local part
  for part in ${steps//,/ }; do
    if [[ "$part" == *-* ]]; then
      (( $1 >= ${part%-*} && $1 <= ${part#*-} )) && return 0
    elif [[ "$part" == "$1" ]]; then
      return 0
    fi
  done
  return 1
}
if [[ ! "$steps" =~ ^[1-7]([-,][1-7])*$ ]]; then
  echo "gpu-check: error: steps '$steps' are not numbers 1-7 like 1-4 or 6,7" >&2
  exit 1
fi

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

ops_status=0 model_status=0 gemm_status=0 host_status=0 runner_status=0 service_status=0
tune_gemm_status=0 tune_conv_status=0 tune_conv16_status=0
if want 1; then
  echo "gpu-check: step 1/7: every operator's default GPU schedule, checked and timed; models on the GPU"
  timeout 60 "$binary" --gemm 0
  ops_status=$?
  timeout 60 "$binary" --model
  model_status=$?
fi
if want 2; then
  echo "gpu-check: step 2/7: Lathe's default GPU schedules and their variants: fp32 GEMM 4096^3 against cublasSgemm, the ResNet-50 3x3 convolution (batch 1 and 16) against cuDNN"
  timeout 150 "$binary" --ops 'matmul:M=64,N=64,K=64' --gemm 4096 --gemm-variants \
    --conv-variants 'conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1;conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1'
  gemm_status=$?
fi
if want 3; then
  echo "gpu-check: step 3/7: a kernel for builds (emitted, compiled with g++ -lcuda, run)"
  work=$(mktemp -d)
  host_status=1
  if timeout 20 "$binary" --source softmax:M=4,N=512 --emit "$work" --name softmax_4x512 &&
     timeout 40 g++ -std=c++17 -O2 -I/usr/local/cuda/include -I"$work" \
       "$root/tools/host_entry_check.cc" "$work/softmax_4x512.cc" \
       -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcuda \
       -o "$work/host_entry_check"; then
    timeout 20 "$work/host_entry_check"
    host_status=$?
  else
    echo "FAIL host entry point: could not emit or compile it"
  fi
  rm -rf "$work"
fi
if [[ -z "$results" ]]; then
  results=$(mktemp -d)
  trap 'rm -rf "$results"' EXIT
fi
mkdir -p "$results"
if want 4; then
  echo "gpu-check: step 4/7: candidates through a LocalRunner and confined CUDA workers, faults included; a job through a daemon and a remote runner"
  timeout 60 "$binary" --runner-check
  runner_status=$?
  timeout 150 "$binary" --service-check
  service_status=$?
fi
if want 5; then
  echo "gpu-check: step 5/7: tuning fp32 GEMM 4096^3 (1000 trials or 190 s), the best against cublasSgemm"
  timeout 220 "$binary" --tune matmul:M=4096,N=4096,K=4096 --trials 1000 \
    --time-budget 190 --db "$results/gemm4096.db"
  tune_gemm_status=$?
fi
if want 6; then
  echo "gpu-check: step 6/7: tuning the ResNet-50 3x3 convolution, batch 1 (300 trials or 45 s), the best against cuDNN"
  timeout 120 "$binary" --tune conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1 \
    --trials 300 --time-budget 45 --db "$results/conv3x3.db"
  tune_conv_status=$?
fi
if want 7; then
  echo "gpu-check: step 7/7: the same convolution, batch 16 (300 trials or 45 s), the best against cuDNN"
  timeout 120 "$binary" --tune conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1 \
    --trials 300 --time-budget 45 --db "$results/conv3x3_b16.db"
  tune_conv16_status=$?
fi
echo "gpu-check: steps $steps: operators exit $ops_status, models exit $model_status," \
     "cuBLAS comparison exit $gemm_status," \
     "host entry point exit $host_status, runner check exit $runner_status" \
     "(daemon and remote runner: $service_status)," \
     "GEMM tuning exit $tune_gemm_status," \
     "convolution tuning exit $tune_conv_status (batch 16: $tune_conv16_status)"
for status in $ops_status $model_status $gemm_status $host_status $runner_status $service_status $tune_gemm_status \
              $tune_conv_status $tune_conv16_status; do
  if [[ $status -ne 0 ]]; then exit $status; fi
done
exit 0
