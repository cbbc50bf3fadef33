#!/usr/bin/env bash
# Models exported from PyTorch at test time (export_models.py: ResNet-18,
# MobileNetV2 and a 2-layer transformer encoder, random weights, opsets 13
# and 17) run through `lathe run`, each output compared with PyTorch's
# (compare_tensors, rtol 1e-3, atol 1e-4).
#
#   torch_models_test.sh LATHE COMPARE_TENSORS PYTHON EXPORT_MODELS_PY
#
# Skipped (exit 77) when PYTHON cannot import torch, torchvision and onnx.
set -euo pipefail
lathe=$1
compare=$2
python=$3
export_models=$4

if ! "$python" -c 'import torch, torchvision, onnx' 2> /dev/null; then
  echo "SKIP: $python cannot import torch, torchvision and onnx (install python3-torch, python3-torchvision, python3-onnx)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" "$export_models" "$work/models" > "$work/export.txt" 2>&1 \
  || { cat "$work/export.txt"; echo "FAIL: export_models.py"; exit 1; }

failed=0
count=0
for model in $(find "$work/models" -name model.onnx | sort); do
  case_dir=$(dirname "$model")
  name=${case_dir#"$work/models/"}
  data=$case_dir
  [[ -d "$case_dir/test_data_set_0" ]] && data=$case_dir/test_data_set_0
  inputs=()
  for f in $(ls -v "$data"/input_*.pb); do inputs+=(--input "$f"); done
  out="$work/out/$name"
  count=$((count + 1))
  if ! "$lathe" run "$model" "${inputs[@]}" --output-dir "$out" --json \
      > "$work/run.json" 2> "$work/run.err"; then
    echo "FAIL $name: $(cat "$work/run.err")"
    failed=$((failed + 1))
    continue
  fi
  ok=1
  for expected in $(ls -v "$data"/output_*.pb); do
    if ! "$compare" "$out/$(basename "$expected")" "$expected"; then ok=0; fi
  done
  summary=$(tr -d '\n' < "$work/run.json" | grep -oE '"(peak_intermediate_bytes|unshared_intermediate_bytes|load_s|run_s)": [0-9.]*' | tr '\n' ' ' || true)
  if [[ $ok -eq 1 ]]; then
    echo "PASS $name: $(cat "$work/run.err") $summary"
  else
    echo "FAIL $name: outputs differ from PyTorch's"
    failed=$((failed + 1))
  fi
done
[[ $count -gt 0 ]] || { echo "FAIL: export_models.py wrote no model.onnx"; exit 1; }
echo "torch models: $count ran, $((count - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
