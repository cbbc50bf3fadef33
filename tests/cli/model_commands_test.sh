#!/usr/bin/env bash
# `lathe run`, `lathe graph` and `lathe tasks` on tiny ONNX models made at
# test time (tests/models/tiny_models.py): outputs compared with numpy's,
# the summary line and --json, and every bad input refused with one line on
# stderr, a non-zero exit and no output files left behind.
# Usage: model_commands_test.sh LATHE PYTHON TINY_MODELS COMPARE_TENSORS CASE
# (exit 77, a skip, when PYTHON has no onnx module).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
python=$2
tiny_models=$3
compare=$4
case_name=$5
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

skip_without_onnx "$python"
# No result files (nor temporaries) in folder $1.
expect_no_outputs() {
  if compgen -G "$1/output_*" > /dev/null; then fail "outputs left: $(ls "$1")"; fi
}
# Runs model $1 on its inputs into folder $1/out and compares every output.
run_and_compare() {
  local m=$1; shift
  local inputs=()
  for f in $(ls -v "$m"/input_*.pb); do inputs+=(--input "$f"); done
  "$lathe" run "$m/model.onnx" "${inputs[@]}" --output-dir "$m/out" "$@" \
    > "$m/stdout.txt" 2> "$m/stderr.txt" || fail "run $m: $(cat "$m/stderr.txt")"
  for expected in $(ls -v "$m"/expected_*.pb); do
    local n=${expected##*/expected_}
    "$compare" "$m/out/output_$n" "$expected" || fail "$m output_$n differs"
  done
}

case $case_name in
run_writes_outputs)
  make_model add_relu
  run_and_compare add_relu
  [ -f add_relu/out/output_1.pb ] || fail "no output_1.pb"
  [ "$(wc -l < add_relu/stderr.txt)" -eq 1 ] || fail "stderr: $(cat add_relu/stderr.txt)"
  grep -qE '^[0-9]+ kernels: 0 tuned, [0-9]+ default schedule; [0-9]+ host steps$' \
    add_relu/stderr.txt || fail "summary: $(cat add_relu/stderr.txt)"
  if compgen -G "add_relu/out/*.partial*" > /dev/null; then fail "temporaries left"; fi
  ;;
run_on_the_gpu)
  # --target cuda runs the model on this machine's GPU (api/gpu_model.h):
  # outputs compared as on the CPU. Without one, one line that says why
  # (no driver, or a driver and no GPU), and no outputs.
  make_model add_relu
  make_model conv_bias_add_relu
  if "$lathe" run add_relu/model.onnx --input add_relu/input_0.pb \
      --input add_relu/input_1.pb --output-dir probe --target cuda > out.txt 2> err.txt; then
    run_and_compare add_relu --target cuda
    run_and_compare conv_bias_add_relu --target cuda
    "$lathe" bench conv_bias_add_relu/model.onnx --target cuda --runs 3 > bench.txt ||
      fail "bench on the GPU"
  else
    [ "$(wc -l < err.txt)" -eq 1 ] || fail "not one line: $(cat err.txt)"
    grep -qE '^lathe: error: (no CUDA driver|.*cuInit|.*no GPU)' err.txt ||
      fail "no GPU, but: $(cat err.txt)"
    expect_no_outputs probe
    expect_error "^lathe: error: $(sed 's/^lathe: error: //; s/[][\.*^$]/./g' err.txt)" \
      "$lathe" bench add_relu/model.onnx --target cuda
  fi
  expect_error "^lathe: error: --threads sets a CPU target's threads; a cuda target has none" \
    "$lathe" bench add_relu/model.onnx --target cuda --threads 2
  ;;
run_json)
  make_model twin_convs
  run_and_compare twin_convs --json
  grep -qE '"peak_intermediate_bytes": [1-9][0-9]*' twin_convs/stdout.txt \
    || fail "json: $(cat twin_convs/stdout.txt)"
  grep -qF '"kernels": {"distinct": 1, "tuned": 0, "default": 1, "steps": 2}' \
    twin_convs/stdout.txt || fail "json kernels: $(cat twin_convs/stdout.txt)"
  "$python" -c 'import json,sys; json.load(open(sys.argv[1]))' twin_convs/stdout.txt \
    || fail "not JSON: $(cat twin_convs/stdout.txt)"
  ;;
run_fused_models)
  for m in conv_bias_add_relu winograd_block batchnorm shape_chain inverted_residual \
      inverted_residual_24 attention_scores; do
    make_model $m
    run_and_compare $m
  done
  ;;
run_symbolic_shape)
  make_model symbolic_batch
  expect_error '"x".*batch' "$lathe" run symbolic_batch/model.onnx \
    --input symbolic_batch/input_0.pb --output-dir out
  expect_no_outputs out
  run_and_compare symbolic_batch --shape x=2,3
  expect_error '^lathe: error: --shape "x=2,a"' "$lathe" run symbolic_batch/model.onnx \
    --input symbolic_batch/input_0.pb --output-dir out --shape x=2,a
  ;;
run_bad_model_files)
  make_model add_relu
  head -c 40 add_relu/model.onnx > truncated.onnx
  expect_error '^lathe: error: .*truncated.onnx' "$lathe" run truncated.onnx \
    --input add_relu/input_0.pb --input add_relu/input_1.pb --output-dir out
  echo 'not a model at all' > text.onnx
  expect_error '^lathe: error: .*text.onnx' "$lathe" run text.onnx \
    --input add_relu/input_0.pb --input add_relu/input_1.pb --output-dir out
  expect_error '^lathe: error: .*missing.onnx' "$lathe" run missing.onnx \
    --input add_relu/input_0.pb --output-dir out
  : > empty.onnx
  expect_error '^lathe: error: .*empty.onnx' "$lathe" run empty.onnx \
    --input add_relu/input_0.pb --output-dir out
  expect_no_outputs out
  ;;
run_bad_inputs)
  make_model add_relu
  make_model conv_bias_add_relu
  # Missing: the second input is named.
  expect_error '^lathe: error: missing input 1 "b"' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --output-dir out
  # One too many.
  expect_error '^lathe: error: the model takes 2 input' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --input add_relu/input_1.pb --input add_relu/input_1.pb \
    --output-dir out
  # Wrong shape: conv's residual [1,4,8,8] given where a [2,3] goes.
  expect_error '"b" must be f32\[2,3\]' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --input conv_bias_add_relu/input_1.pb --output-dir out
  # Wrong dtype: an int64 tensor.
  "$python" - <<'PY'
import numpy as np
from onnx import numpy_helper
open("int.pb", "wb").write(numpy_helper.from_array(np.zeros((2, 3), np.int64), "b").SerializeToString())
PY
  expect_error '"b" must be f32\[2,3\], the file holds int64' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --input int.pb --output-dir out
  # A truncated and a missing input file.
  head -c 10 add_relu/input_1.pb > cut.pb
  expect_error '^lathe: error: --input cut.pb' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --input cut.pb --output-dir out
  expect_error '^lathe: error: --input nothing.pb' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --input nothing.pb --output-dir out
  expect_no_outputs out
  ;;
run_unsupported_op)
  make_model unsupported_op
  expect_error 'node det: operator Det (opset 17) is not supported' "$lathe" run unsupported_op/model.onnx \
    --input unsupported_op/input_0.pb --output-dir out
  expect_no_outputs out
  expect_error 'det.*Det' "$lathe" graph unsupported_op/model.onnx
  expect_error 'det.*Det' "$lathe" tasks unsupported_op/model.onnx
  make_model lathe_own_op
  expect_error 'node wit: operator WinogradInputTransform (opset 17) is not supported' \
    "$lathe" run lathe_own_op/model.onnx --input lathe_own_op/input_0.pb --output-dir out
  expect_no_outputs out
  ;;
run_unsupported_attribute)
  make_model unsupported_attribute
  expect_error 'node bn (BatchNormalization): attribute training_mode=1 is not supported' \
    "$lathe" run unsupported_attribute/model.onnx --input unsupported_attribute/input_0.pb \
    --output-dir out
  expect_no_outputs out
  ;;
shape_from_input_values)
  # graph and tasks have no input values: the Reshape's shape is unknown, a
  # one-line refusal naming the node; run folds the int64 input and runs.
  make_model reshape_by_input
  expect_error 'reshape (Reshape)' "$lathe" graph reshape_by_input/model.onnx
  expect_error 'reshape (Reshape)' "$lathe" tasks reshape_by_input/model.onnx
  run_and_compare reshape_by_input
  ;;
run_keeps_old_outputs_on_failure)
  # A failed run writes nothing: what was there stays as it was.
  make_model add_relu
  run_and_compare add_relu
  cp add_relu/out/output_0.pb before.pb
  expect_error 'missing input' "$lathe" run add_relu/model.onnx \
    --input add_relu/input_0.pb --output-dir add_relu/out
  cmp before.pb add_relu/out/output_0.pb || fail "output_0.pb changed"
  if compgen -G "add_relu/out/*.partial*" > /dev/null; then fail "temporaries left"; fi
  ;;
run_uses_tuned_kernels)
  # The tasks `lathe tasks` lists, tuned briefly, answer `lathe run --db`.
  make_model add_relu
  "$lathe" tasks add_relu/model.onnx --json > tasks.json || fail "tasks"
  "$python" -c 'import json; print("\n".join(t["spec"] for t in json.load(open("tasks.json"))["tasks"]))' \
    > specs.txt
  "$lathe" tune --workloads-file specs.txt --db tuned.db --trials 4 --batch 2 \
    --population 4 --generations 1 --min-time 0.005 --measure-rounds 1 > tune.txt 2>&1 \
    || fail "tune: $(cat tune.txt)"
  run_and_compare add_relu --db tuned.db
  grep -qx '2 kernels: 2 tuned, 0 default schedule; 0 host steps' add_relu/stderr.txt \
    || fail "summary: $(cat add_relu/stderr.txt)"
  # Another target (host takes every CPU) has no records: the default
  # schedules answer.
  other_threads=1
  [ "$(nproc)" -gt 1 ] || other_threads=2
  run_and_compare add_relu --db tuned.db --target "host -num-threads=$other_threads"
  grep -qx '2 kernels: 0 tuned, 2 default schedule; 0 host steps' add_relu/stderr.txt \
    || fail "summary: $(cat add_relu/stderr.txt)"
  ;;
graph_prints_passes_and_partition)
  make_model conv_bias_add_relu
  "$lathe" graph conv_bias_add_relu/model.onnx > out.txt 2> err.txt || fail "graph: $(cat err.txt)"
  for heading in '# imported' '# after passes' '# partition: '; do
    grep -q "^$heading" out.txt || fail "no '$heading': $(cat out.txt)"
  done
  grep -q '^kernel 0: Conv+Add+Relu (conv, add, relu)' out.txt || fail "partition: $(cat out.txt)"
  "$lathe" graph conv_bias_add_relu/model.onnx --print-after-each > each.txt 2> err.txt \
    || fail "graph --print-after-each: $(cat err.txt)"
  [ "$(grep -c '^# after ' each.txt)" -ge 2 ] || fail "passes: $(cat each.txt)"
  ;;
tasks_counts_identical_groups)
  make_model twin_convs
  "$lathe" tasks twin_convs/model.onnx --json > tasks.json 2> err.txt || fail "tasks: $(cat err.txt)"
  "$python" - <<'PY' || fail "tasks: $(cat tasks.json)"
import json
t = json.load(open("tasks.json"))
assert len(t["tasks"]) == 1, t
task = t["tasks"][0]
assert task["count"] == 2 and task["anchor"] == "Conv", task
assert task["spec"].startswith("custom:"), task
# 2 * C * R * S * K * H * W multiply-adds (+ bias and relu).
assert task["flops"] >= 2 * 4 * 9 * 4 * 36, task
assert t["kernel_calls"] == 2
PY
  "$lathe" tasks twin_convs/model.onnx > tasks.txt || fail "tasks"
  grep -q '^# 1 tasks, 2 kernel calls' tasks.txt || fail "tasks: $(cat tasks.txt)"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
