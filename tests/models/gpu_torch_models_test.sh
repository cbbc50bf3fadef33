#!/usr/bin/env bash
# The models exported from PyTorch (export_models.py: ResNet-18,
# MobileNetV2 and a 2-layer transformer encoder, opset 17) run through
# api::GpuModel on an emulated GPU (gpu_model_emulated.cc: every kernel's
# default GPU schedule compiled by NVRTC, then run on the CPU), each output
# compared with PyTorch's (rtol 1e-3, atol 1e-4).
#
#   gpu_torch_models_test.sh GPU_MODEL_EMULATED PYTHON EXPORT_MODELS_PY
#
# Skipped (exit 77) when PYTHON cannot import torch, torchvision and onnx,
# or without NVRTC.
set -euo pipefail
runner=$1
python=$2
export_models=$3

if ! "$python" -c 'import torch, torchvision, onnx' 2> /dev/null; then
  echo "SKIP: $python cannot import torch, torchvision and onnx (install python3-torch, python3-torchvision, python3-onnx)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$export_models" "$work/models" --opsets 17 > "$work/export.txt" 2>&1 \
  || { cat "$work/export.txt"; echo "FAIL: export_models.py"; exit 1; }
status=0
"$runner" $(find "$work/models" -name model.onnx -printf '%h\n' | sort) || status=$?
[ "$status" -ne 77 ] || exit 77
[ "$status" -eq 0 ] || { echo "FAIL: a model differs on the emulated GPU"; exit 1; }
