#!/usr/bin/env bash
# The tiny ONNX models (tiny_models.py: fused convolutions, Winograd, batch
# norm folded, PyTorch's shape chains, views, dense layers, MobileNet's
# inverted residuals, attention scores) run through api::GpuModel on an
# emulated GPU (gpu_model_emulated.cc), each output compared with numpy's.
# Usage: gpu_tiny_models_test.sh GPU_MODEL_EMULATED PYTHON TINY_MODELS
# (exit 77, a skip, when PYTHON has no onnx module).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../cli" && pwd)/expect.sh"
runner=$1
python=$2
tiny_models=$3
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
skip_without_onnx "$python"
models=(conv_bias_add_relu batchnorm winograd_block shape_chain twin_convs add_relu
        reshape_by_input conv_relu_gemm wide_gemm inverted_residual inverted_residual_24
        attention_scores)
for m in "${models[@]}"; do make_model "$m"; done
status=0
"$runner" "${models[@]}" || status=$?
[ "$status" -ne 77 ] || exit 77
[ "$status" -eq 0 ] || fail "a model differs on the emulated GPU"
