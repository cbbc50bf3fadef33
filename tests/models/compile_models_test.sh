#!/usr/bin/env bash
# Models exported from PyTorch (export_models.py: ResNet-18, MobileNetV2,
# the transformer encoder; opset 17) built by `lathe compile MODEL.onnx`
# into one static library each, called from a C program on PyTorch's input,
# its output compared with PyTorch's (compare_tensors, rtol 1e-3, atol
# 1e-4). Default schedules (no database): what is checked is the library,
# not the tuning.
#
#   compile_models_test.sh LATHE COMPARE_TENSORS PYTHON EXPORT_MODELS_PY
#
# Skipped (exit 77) when PYTHON cannot import torch, torchvision and onnx,
# or there is no C compiler.
set -euo pipefail
lathe=$1
compare=$2
python=$3
export_models=$4

if ! "$python" -c 'import torch, torchvision, onnx' 2> /dev/null; then
  echo "SKIP: $python cannot import torch, torchvision and onnx"
  exit 77
fi
command -v cc > /dev/null || { echo "SKIP: no C compiler (cc)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$python" "$export_models" models --opsets 17 > export.txt 2>&1 \
  || fail "export_models.py: $(cat export.txt)"

for name in resnet18 mobilenet_v2 encoder; do
  case_dir=models/${name}_opset17
  data=$case_dir/test_data_set_0
  [ -f "$case_dir/model.onnx" ] || fail "no $case_dir/model.onnx"
  mkdir "$name"
  # The element counts of the one input and the one output, and the input
  # as raw floats.
  read -r in_n out_n < <("$python" - "$data" "$name" <<'PY'
import sys
import numpy as np, onnx
from onnx import numpy_helper
data, name = sys.argv[1], sys.argv[2]
x = numpy_helper.to_array(onnx.load_tensor(data + "/input_0.pb")).astype(np.float32)
y = numpy_helper.to_array(onnx.load_tensor(data + "/output_0.pb"))
x.tofile(name + "/input.raw")
print(x.size, y.size)
PY
)
  start=$(date +%s)
  "$lathe" compile "$case_dir/model.onnx" --function "$name" -o "$name/m.a" \
    --header "$name/m.h" 2> "$name/compile.txt" || fail "$name: $(cat "$name/compile.txt")"
  seconds=$(( $(date +%s) - start ))
  cat > "$name/check.c" <<C
#include <stdio.h>
#include <stdlib.h>
#include "m.h"
int main(void) {
  float* x = malloc(sizeof(float) * $in_n);
  float* y = malloc(sizeof(float) * $out_n);
  FILE* f = fopen("input.raw", "rb");
  if (!x || !y || !f || fread(x, sizeof(float), $in_n, f) != $in_n) return 10;
  fclose(f);
  if ($name(x, y) != 0) return 11;
  f = fopen("output.raw", "wb");
  if (!f || fwrite(y, sizeof(float), $out_n, f) != $out_n || fclose(f)) return 12;
  return 0;
}
C
  cc -std=c99 -O1 -Wall -Werror -o "$name/check" "$name/check.c" "$name/m.a" -lpthread -lm \
    || fail "$name: cannot link"
  (cd "$name" && ./check) || fail "$name: the entry failed ($?)"
  "$python" - "$data" "$name" <<'PY' || fail "$name: cannot convert the output"
import sys
import numpy as np, onnx
from onnx import numpy_helper
data, name = sys.argv[1], sys.argv[2]
ref = onnx.load_tensor(data + "/output_0.pb")
y = np.fromfile(name + "/output.raw", np.float32).reshape(numpy_helper.to_array(ref).shape)
open(name + "/output_0.pb", "wb").write(numpy_helper.from_array(y, ref.name).SerializeToString())
PY
  "$compare" "$name/output_0.pb" "$data/output_0.pb" || fail "$name: differs from PyTorch"
  echo "PASS $name: compiled in ${seconds}s, $(stat -c %s "$name/m.a") bytes"
done
