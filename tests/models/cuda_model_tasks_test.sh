#!/usr/bin/env bash
# A model tuned for a GPU starts from its tasks' CUDA defaults: every
# distinct task (`lathe tasks`) of the models gets a default GPU program
# that NVRTC compiles, ptxas assembles and that, run on the CPU, computes
# what the task's reference computes (cuda_check_specs). No GPU needed.
#
#   cuda_model_tasks_test.sh LATHE CUDA_CHECK_SPECS torch PYTHON EXPORT_MODELS_PY
#   cuda_model_tasks_test.sh LATHE CUDA_CHECK_SPECS node [NODE_DIR]
#
# torch: ResNet-18, MobileNetV2 and the transformer encoder, exported at
# test time (export_models.py, opset 17). node: every case of the ONNX
# backend node suite (Debian's libonnx-testdata) that `lathe tasks` takes;
# the others use an operator, attribute or dtype Lathe does not have, or
# take a shape from an input, which `lathe tasks` does not have (the CPU
# suite, onnx_node_suite_test.sh, runs those through `lathe run`).
#
# Skipped (exit 77) when the models cannot be made (no torch, no test
# data), or NVRTC or ptxas is missing (cuda_check_specs says so).
set -euo pipefail
lathe=$1
check_specs=$2
source_kind=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The specs of a model's tasks, one per line: `lathe tasks` prints
# "COUNT  FLOPS  ANCHOR  SPEC" after its '#' lines.
task_specs() {
  "$lathe" tasks "$1" | sed -E '/^#/d; s/^[0-9]+  [^ ]+  [^ ]+  //'
}

models=()
case $source_kind in
torch)
  python=$4
  export_models=$5
  if ! "$python" -c 'import torch, torchvision, onnx' 2> /dev/null; then
    echo "SKIP: $python cannot import torch, torchvision and onnx"
    exit 77
  fi
  "$python" "$export_models" "$work/models" --opsets 17 > "$work/export.txt" \
    2>&1 || fail "export_models.py: $(cat "$work/export.txt")"
  for name in resnet18 mobilenet_v2 encoder; do
    models+=("$work/models/${name}_opset17/model.onnx")
  done
  for model in "${models[@]}"; do
    task_specs "$model" >> "$work/specs.txt" || fail "lathe tasks $model"
  done
  ;;
node)
  node_dir=${4:-/usr/share/libonnx-testdata/data/node}
  if [[ ! -d "$node_dir" ]]; then
    echo "SKIP: $node_dir not found (install libonnx-testdata)"
    exit 77
  fi
  refused=0
  for model in "$node_dir"/*/model.onnx; do
    models+=("$model")
    if ! task_specs "$model" >> "$work/specs.txt" 2> "$work/tasks.err"; then
      grep -qiE 'unsupported|not supported|does not support|only the default ONNX domain|must be a constant' \
        "$work/tasks.err" || fail "lathe tasks $model: $(cat "$work/tasks.err")"
      refused=$((refused + 1))
    fi
  done
  echo "node suite: ${#models[@]} cases, $refused refused by lathe tasks"
  ;;
*)
  fail "unknown source $source_kind (torch or node)"
  ;;
esac

sort -u "$work/specs.txt" > "$work/distinct.txt"
count=$(wc -l < "$work/distinct.txt")
[[ $count -gt 0 ]] || fail "no tasks in ${#models[@]} models"
echo "${#models[@]} models, $count distinct tasks"
rc=0
"$check_specs" "$work/distinct.txt" || rc=$?
exit $rc
