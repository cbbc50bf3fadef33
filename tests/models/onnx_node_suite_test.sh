#!/usr/bin/env bash
# Runs every case of the ONNX backend node suite (Debian's libonnx-testdata)
# through `lathe run` and compares each output with the reference
# (compare_tensors: rtol 1e-3, atol 1e-4). A case that lathe refuses as
# unsupported (an operator, attribute or dtype it does not have) is skipped
# and listed with the reason; any other failure, a crash or a mismatch fails
# the test. Prints how many ran, passed and were skipped.
#
#   onnx_node_suite_test.sh LATHE COMPARE_TENSORS [NODE_DIR]
#
# NODE_DIR defaults to /usr/share/libonnx-testdata/data/node; without it the
# test is skipped (exit 77). LATHE_NODE_FILTER (a grep -E pattern on the
# case name) runs a subset.
set -euo pipefail

if [[ "${1:-}" == "--one" ]]; then
  # One case: prints "PASS name", "SKIP name: reason" or "FAIL name: reason".
  lathe=$2 compare=$3 case_dir=$4 work=$5
  name=$(basename "$case_dir")
  out="$work/$name"
  mkdir -p "$out"
  set_dir="$case_dir/test_data_set_0"
  inputs=()
  while IFS= read -r f; do inputs+=(--input "$f"); done \
    < <(ls -v "$set_dir"/input_*.pb 2>/dev/null || true)
  rc=0
  timeout 300 "$lathe" run "$case_dir/model.onnx" "${inputs[@]}" \
    --output-dir "$out" > "$out/stdout.txt" 2> "$out/stderr.txt" || rc=$?
  if [[ $rc -ne 0 ]]; then
    reason=$(tr '\n' ' ' < "$out/stderr.txt" | cut -c1-300)
    if [[ $rc -eq 1 ]] && grep -qiE 'unsupported|not supported|does not support|only the default ONNX domain is supported' "$out/stderr.txt"; then
      echo "SKIP $name: $reason"
    else
      echo "FAIL $name: exit $rc: $reason"
    fi
    exit 0
  fi
  for expected in $(ls -v "$set_dir"/output_*.pb); do
    actual="$out/$(basename "$expected")"
    if [[ ! -f "$actual" ]]; then
      echo "FAIL $name: no $(basename "$expected")"
      exit 0
    fi
    if ! diff_text=$("$compare" "$actual" "$expected" 2>&1); then
      echo "FAIL $name: $(basename "$expected"): $diff_text"
      exit 0
    fi
  done
  echo "PASS $name"
  rm -rf "$out"
  exit 0
fi

lathe=$1
compare=$2
node_dir=${3:-/usr/share/libonnx-testdata/data/node}
if [[ ! -d "$node_dir" ]]; then
  echo "SKIP: $node_dir not found (install libonnx-testdata)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
filter=${LATHE_NODE_FILTER:-.}
jobs=$(nproc)

find "$node_dir" -mindepth 1 -maxdepth 1 -type d | sort | grep -E "$filter" \
  | xargs -P "$jobs" -I{} bash "$0" --one "$lathe" "$compare" {} "$work" \
  > "$work/results.txt"
sort -o "$work/results.txt" "$work/results.txt"

total=$(wc -l < "$work/results.txt")
passed=$(grep -c '^PASS ' "$work/results.txt" || true)
skipped=$(grep -c '^SKIP ' "$work/results.txt" || true)
failed=$(grep -c '^FAIL ' "$work/results.txt" || true)
echo "== skipped as unsupported ($skipped):"
grep '^SKIP ' "$work/results.txt" | sed 's/^SKIP /  /' || true
echo "== passed ($passed):"
grep '^PASS ' "$work/results.txt" | sed 's/^PASS /  /' | tr '\n' ' ' | fold -s -w 100 || true
echo
if [[ $failed -gt 0 ]]; then
  echo "== failed ($failed):"
  grep '^FAIL ' "$work/results.txt" | sed 's/^FAIL /  /'
fi

# Every operator of Lathe's list (issue 24) with a case in the suite must
# pass at least one: OP=regex of its case names.
coverage=(
  Conv='^test_conv_' ConvTranspose='^test_convtranspose' Gemm='^test_gemm_'
  MatMul='^test_matmul_' Add='^test_add' Sub='^test_sub' Mul='^test_mul'
  Div='^test_div' Pow='^test_pow' Sqrt='^test_sqrt' Exp='^test_exp'
  Log='^test_log(_example)?$' Erf='^test_erf$' Tanh='^test_tanh'
  Sigmoid='^test_sigmoid' Relu='^test_relu$' LeakyRelu='^test_leakyrelu'
  Clip='^test_clip' HardSigmoid='^test_hardsigmoid' HardSwish='^test_hardswish'
  Neg='^test_neg' Abs='^test_abs$' Reciprocal='^test_reciprocal' Max='^test_max_'
  Min='^test_min_' Sum='^test_sum_' Mean='^test_mean_' Where='^test_where_'
  Equal='^test_equal' Less='^test_less' Greater='^test_greater' Cast='^test_cast_'
  MaxPool='^test_maxpool_' AveragePool='^test_averagepool_'
  GlobalAveragePool='^test_globalaveragepool' GlobalMaxPool='^test_globalmaxpool'
  BatchNormalization='^test_batchnorm_' Softmax='^test_softmax_'
  LogSoftmax='^test_logsoftmax_' LayerNormalization='^test_layer_normalization_[^e]*$'
  ReduceMean='^test_reduce_mean_' ReduceSum='^test_reduce_sum_[^s]'
  ReduceMax='^test_reduce_max_' Transpose='^test_transpose_' Reshape='^test_reshape_'
  Flatten='^test_flatten_' Squeeze='^test_squeeze' Unsqueeze='^test_unsqueeze'
  Concat='^test_concat_' Split='^test_split_' Slice='^test_slice' Gather='^test_gather_[0-9]'
  Pad='^test_(constant|edge|reflect)_pad$' Expand='^test_expand_' Identity='^test_identity$'
  Dropout='^test_dropout_' Constant='^test_constant$' ConstantOfShape='^test_constantofshape_'
  Shape='^test_shape'
)
uncovered=0
echo "== operators (OP:passing cases/cases in the suite):"
line=""
for entry in "${coverage[@]}"; do
  op=${entry%%=*}
  pattern=${entry#*=}
  cases=$(awk '{print $2}' "$work/results.txt" | sed 's/:$//' | grep -cE "$pattern" || true)
  passing=$(grep '^PASS ' "$work/results.txt" | awk '{print $2}' | grep -cE "$pattern" || true)
  line+="$op:$passing/$cases "
  if [[ $cases -gt 0 && $passing -eq 0 ]]; then
    uncovered=$((uncovered + 1))
    echo "  no passing case for $op"
  fi
done
echo "$line" | fold -s -w 100 | sed 's/^/  /'
echo "onnx node suite: $total cases, $((passed + failed)) ran: $passed passed, $failed failed; $skipped skipped as unsupported"
[[ $failed -eq 0 && $uncovered -eq 0 ]]
