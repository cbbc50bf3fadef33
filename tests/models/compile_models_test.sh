#!/usr/bin/env bash
# Models exported from PyTorch (export_models.py: ResNet-18, MobileNetV2,
# the transformer encoder; opset 17) built by `lathe compile MODEL.onnx`
# into one static library each, called from a C program on PyTorch's input,
# its output compared with PyTorch's (compare_tensors, rtol 1e-3, atol
# 1e-4).
#
#   compile_models_test.sh LATHE COMPARE_TENSORS PYTHON EXPORT_MODELS_PY [--tuned]
#
# Without --tuned: default schedules (no database), so what is checked is
# the library, not the tuning. With --tuned: each model is first tuned with
# a few trials per task (`lathe tune MODEL.onnx`, a search too short to be
# fast, long enough that every task has a record of the space's schedules),
# then built with `--db --require-tuned` (every kernel a tuned record's) and
# run by `lathe run --db`, both compared with PyTorch: tuned kernels, weights
# packed at build or load time and the blocked layouts, against PyTorch's
# own outputs. The header must name at least one weight embedded packed.
#
# Skipped (exit 77) when PYTHON cannot import torch, torchvision and onnx,
# or there is no C compiler.
set -euo pipefail
lathe=$1
compare=$2
python=$3
export_models=$4
tuned=0
[[ ${5:-} == --tuned ]] && tuned=1

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
  db=()
  if [[ $tuned -eq 1 ]]; then
    tasks=$("$lathe" tasks "$case_dir/model.onnx" --json 2> /dev/null \
      | "$python" -c 'import json, sys; print(len(json.load(sys.stdin)["tasks"]))') \
      || fail "$name: lathe tasks"
    start=$(date +%s)
    "$lathe" tune "$case_dir/model.onnx" --db "$name/tuned.db" \
      --trials $((2 * tasks)) --batch 2 --min-time 0.005 --measure-rounds 1 \
      --population 16 --generations 1 --no-default > "$name/tune.txt" 2>&1 \
      || fail "$name: lathe tune: $(tail -5 "$name/tune.txt")"
    echo "$name: $tasks tasks tuned in $(( $(date +%s) - start ))s"
    db=(--db "$name/tuned.db" --require-tuned)
  fi
  start=$(date +%s)
  "$lathe" compile "$case_dir/model.onnx" "${db[@]}" --function "$name" -o "$name/m.a" \
    --header "$name/m.h" 2> "$name/compile.txt" || fail "$name: $(cat "$name/compile.txt")"
  seconds=$(( $(date +%s) - start ))
  if [[ $tuned -eq 1 ]] && ! grep -q "packed at build time" "$name/m.h"; then
    fail "$name: no weight of the tuned library is embedded packed"
  fi
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
  if [[ $tuned -eq 1 ]]; then
    "$lathe" run "$case_dir/model.onnx" --db "$name/tuned.db" --input "$data/input_0.pb" \
      --output-dir "$name/run" --json > "$name/run.json" 2> "$name/run.txt" \
      || fail "$name: lathe run --db: $(cat "$name/run.txt")"
    "$python" - "$name/run.json" <<'PY' || fail "$name: lathe run did not use a tuned kernel for every task"
import json, sys
kernels = json.load(open(sys.argv[1]))["kernels"]
sys.exit(0 if kernels["tuned"] == kernels["distinct"] > 0 else 1)
PY
    "$compare" "$name/run/output_0.pb" "$data/output_0.pb" \
      || fail "$name: lathe run --db differs from PyTorch"
  fi
  echo "PASS $name: compiled in ${seconds}s, $(stat -c %s "$name/m.a") bytes"
done
