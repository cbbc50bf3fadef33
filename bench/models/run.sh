#!/usr/bin/env bash
# End-to-end model latency, batch 1, Lathe beside ONNX Runtime and PyTorch
# in the same run (bench/README.md, "Models").
#
#   bash bench/models/run.sh [--db tuned.db] [--compatible] [--runs N] [--models "resnet18 mobilenet_v2 encoder"] [--per-task]
#
# --compatible: Lathe's kernels may come from records of another thread count
# (a database tuned at one thread serves the two-thread row).
# --per-task: after the table, where each model's time goes task by task on
# both sides (`lathe bench MODEL.onnx --json` against ONNX Runtime's profiler:
# ort_profile.js, joined by per_task.py), for each thread count.
#
# Exports the models with PyTorch (tests/models/export_models.py, opset 13,
# random weights), installs npm's onnxruntime-node 1.30.0 into
# build/ort/ once (ONNXRUNTIME_NODE_INSTALL=skip: its install script would
# fetch GPU providers), then for 1 and 2 threads alternates Lathe
# (bench_model_latency), ONNX Runtime (ort_latency.js) and PyTorch
# (torch_latency.py, Debian's python3-torch) three times each and prints a
# table of medians and the ratios (a peer's time over Lathe's: above 1,
# Lathe is faster).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build_dir="${LATHE_BUILD_DIR:-build/release}"
db=""
compatible=0
runs=40
models="resnet18 mobilenet_v2 encoder"
per_task=0
per_task_tables=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --compatible) compatible=1; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --per-task) per_task=1; shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_bin="$build_dir/bench/bench_model_latency"
if [[ ! -x "$bench_bin" ]]; then
  echo "run.sh: $bench_bin is missing: bash scripts/build.sh --target bench_model_latency" >&2
  exit 1
fi
source bench/models/common.sh
ensure_ort
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 tests/models/export_models.py "$work" --opsets 13 \
  --models "${models// /,}" >/dev/null

printf '| model | threads | Lathe (ms) | ONNX Runtime (ms) | PyTorch (ms) | ORT time / Lathe time | PyTorch time / Lathe time |\n'
printf '|---|---|---|---|---|---|---|\n'
for model in $models; do
  dir="$work/${model}_opset13"
  shape_args=$(graph_input_shapes "$dir/model.onnx")
  for threads in 1 2; do
    lathe_times=() ort_times=() torch_times=()
    for _ in 1 2 3; do
      lathe_args=("$dir/model.onnx" --threads "$threads" --runs "$runs")
      [[ -n "$db" ]] && lathe_args+=(--db "$db")
      [[ $compatible -eq 1 ]] && lathe_args+=(--compatible)
      lathe_times+=("$("$bench_bin" "${lathe_args[@]}" | sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p')")
      ort_times+=("$(ort_median_ms "$dir/model.onnx" "$threads" "$runs")")
      torch_times+=("$(/usr/bin/python3 bench/models/torch_latency.py "$model" "$threads" "$runs" \
        | sed -n 's/.*"median_ms": *\([0-9.e+-]*\).*/\1/p')")
    done
    lathe_ms=$(printf '%s\n' "${lathe_times[@]}" | median)
    ort_ms=$(printf '%s\n' "${ort_times[@]}" | median)
    torch_ms=$(printf '%s\n' "${torch_times[@]}" | median)
    ratio=$(awk -v a="$ort_ms" -v b="$lathe_ms" 'BEGIN {printf "%.2f", a / b}')
    torch_ratio=$(awk -v a="$torch_ms" -v b="$lathe_ms" 'BEGIN {printf "%.2f", a / b}')
    printf '| %s | %d | %.2f | %.2f | %.2f | %s | %s |\n' "$model" "$threads" "$lathe_ms" \
      "$ort_ms" "$torch_ms" "$ratio" "$torch_ratio"
    if [[ $per_task -eq 1 ]]; then
      task_args=("$dir/model.onnx" --threads "$threads" --runs "$runs" --json)
      [[ -n "$db" ]] && task_args+=(--db "$db")
      [[ $compatible -eq 1 ]] && task_args+=(--compatible)
      "$build_dir/cli/lathe" bench "${task_args[@]}" > "$work/lathe_tasks.json"
      NODE_PATH="$ort_dir/node_modules" node bench/models/ort_profile.js \
        "$dir/model.onnx" "$threads" "$runs" "$work/ort_nodes.json" $shape_args
      per_task_tables+=$'\n'"### $model, $threads thread(s)"$'\n\n'
      per_task_tables+="$(/usr/bin/python3 bench/models/per_task.py \
        "$work/lathe_tasks.json" "$work/ort_nodes.json")"$'\n'
    fi
  done
done
if [[ $per_task -eq 1 ]]; then
  printf '%s' "$per_task_tables"
fi
