#!/usr/bin/env bash
# `lathe bench MODEL.onnx` on tiny ONNX models made at test time
# (tests/models/tiny_models.py): the JSON report's fields, shares that sum
# to 100%, per-task counts equal to `lathe tasks`', kernels from a database
# reported as tuned, and every bad input refused with one line on stderr.
# Usage: bench_model_test.sh LATHE PYTHON TINY_MODELS CASE
# (exit 77, a skip, when PYTHON has no onnx module).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
python=$2
tiny_models=$3
case_name=$4
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

skip_without_onnx "$python"
# Checks bench.json against tasks.json (`lathe tasks --json` of the same
# model); $1: the origin every task must have.
check_report() {
  "$python" - "$1" <<'PY' || fail "report: $(cat bench.json)"
import json, sys
origin = sys.argv[1]
b = json.load(open("bench.json"))
t = json.load(open("tasks.json"))
for key in ("model", "target", "threads", "runs", "warmup_runs", "median_ms",
            "min_ms", "p90_ms", "max_ms", "mean_ms", "stddev_ms", "steps_ms",
            "between_steps_ms", "kernels", "host_steps", "alias_steps", "tasks", "host"):
    assert key in b, key
assert b["runs"] == 5, b["runs"]
assert 0 < b["min_ms"] <= b["median_ms"] <= b["max_ms"], b
assert b["steps_ms"] > 0 and b["between_steps_ms"] >= 0, b
# The same tasks, in the same order, with the same counts as `lathe tasks`.
assert [(x["spec"], x["count"]) for x in b["tasks"]] == \
    [(x["spec"], x["count"]) for x in t["tasks"]], (b["tasks"], t["tasks"])
assert b["kernels"]["steps"] == t["kernel_calls"] == sum(x["count"] for x in b["tasks"])
assert b["kernels"]["distinct"] == len(t["tasks"])
assert all(x["origin"] == origin for x in b["tasks"]), b["tasks"]
assert b["kernels"]["tuned" if origin == "tuned" else "default"] == len(t["tasks"])
# Each share is its time over the steps' total; together they make 100%.
total = sum(x["ms"] for x in b["tasks"]) + b["host"]["ms"]
assert abs(total - b["steps_ms"]) <= 1e-5 * len(b["tasks"]) + 1e-6, (total, b["steps_ms"])
shares = [x["share_pct"] for x in b["tasks"]] + [b["host"]["share_pct"]]
assert abs(sum(shares) - 100) <= 0.05 * len(shares), shares
for x in b["tasks"]:
    assert x["ms"] > 0, x
    assert abs(x["share_pct"] - 100 * x["ms"] / b["steps_ms"]) <= 0.051, x
assert b["host"]["steps"] == b["host_steps"] + b["alias_steps"]
# Every step in execution order, with the ONNX nodes it covers: the kernel
# steps' times, summed per spec, are the tasks' times; every node of the
# model is in exactly one step.
kernels = [x for x in b["steps"] if x["kind"] == "kernel"]
assert len(kernels) == b["kernels"]["steps"], b["steps"]
assert len(b["steps"]) - len(kernels) == b["host"]["steps"], b["steps"]
for task in b["tasks"]:
    ms = sum(x["ms"] for x in kernels if x["spec"] == task["spec"])
    assert abs(ms - task["ms"]) <= 1e-5 * task["count"] + 1e-6, (task, ms)
nodes = [n for x in b["steps"] for n in x["nodes"]]
assert len(nodes) == len(set(nodes)) and all(nodes), nodes
import onnx
model = onnx.load(b["model"])
assert set(nodes) <= {n.name for n in model.graph.node}, (nodes, model.graph.node)
# A kernel step's last value is its output: another step's input or a
# model output.
outputs = {o.name for o in model.graph.output}
inputs = {i for x in model.graph.node for i in x.input}
assert all(x["values"] and (x["values"][-1] in outputs or x["values"][-1] in inputs)
           for x in kernels), kernels
PY
}

case $case_name in
json)
  # twin_convs: one task occurring twice; add_relu: two tasks.
  for m in twin_convs add_relu; do
    make_model $m
    "$lathe" tasks $m/model.onnx --json > tasks.json || fail "tasks $m"
    "$lathe" bench $m/model.onnx --json --runs 5 --threads 1 > bench.json 2> err.txt \
      || fail "bench $m: $(cat err.txt)"
    check_report default
  done
  ;;
text)
  make_model add_relu
  "$lathe" bench add_relu/model.onnx --runs 3 --threads 1 > out.txt 2> err.txt \
    || fail "bench: $(cat err.txt)"
  grep -qE '^time +median [0-9.]+ [mun]?s +min ' out.txt || fail "time: $(cat out.txt)"
  grep -qE '^kernels +2 calls per run, 2 distinct: 0 tuned, 2 default' out.txt \
    || fail "kernels: $(cat out.txt)"
  # One row per task and the host row.
  [ "$(grep -cE '^[0-9.]+%  [0-9.]+  1  default  ' out.txt)" -eq 2 ] || fail "rows: $(cat out.txt)"
  grep -qE '^[0-9.]+%  [0-9.]+  [0-9]+  host  -  \(host steps and views\)$' out.txt \
    || fail "host row: $(cat out.txt)"
  ;;
symbolic_shape)
  make_model symbolic_batch
  expect_error '"x".*batch' "$lathe" bench symbolic_batch/model.onnx --runs 1
  "$lathe" tasks symbolic_batch/model.onnx --shape x=2,3 --json > tasks.json || fail "tasks"
  "$lathe" bench symbolic_batch/model.onnx --shape x=2,3 --runs 5 --json > bench.json \
    2> err.txt || fail "bench: $(cat err.txt)"
  check_report default
  ;;
errors)
  make_model symbolic_batch
  expect_error '^lathe: error: .*missing.onnx' "$lathe" bench missing.onnx
  echo 'not a model at all' > text.onnx
  expect_error '^lathe: error: .*text.onnx' "$lathe" bench text.onnx
  expect_error '^lathe: error: --shape "x=2,a"' "$lathe" bench symbolic_batch/model.onnx \
    --shape x=2,a
  expect_error '^lathe: error: --trace is for one kernel' "$lathe" bench \
    symbolic_batch/model.onnx --shape x=2,3 --trace t.json
  expect_error '^lathe: error: --runs is for a model' "$lathe" bench matmul:M=8,N=8,K=8 \
    --runs 3
  expect_error '^lathe: error: .*tuned.db' "$lathe" bench symbolic_batch/model.onnx \
    --shape x=2,3 --db /nonexistent/folder/tuned.db
  expect_error '^lathe: error: --runs' "$lathe" bench symbolic_batch/model.onnx \
    --shape x=2,3 --runs 0
  ;;
tuned_kernels)
  # The tasks tuned briefly into a database are reported as tuned.
  make_model add_relu
  "$lathe" tasks add_relu/model.onnx --json > tasks.json || fail "tasks"
  "$python" -c 'import json; print("\n".join(t["spec"] for t in json.load(open("tasks.json"))["tasks"]))' \
    > specs.txt
  "$lathe" tune --workloads-file specs.txt --db tuned.db --trials 4 --batch 2 \
    --population 4 --generations 1 --min-time 0.005 --measure-rounds 1 > tune.txt 2>&1 \
    || fail "tune: $(cat tune.txt)"
  "$lathe" bench add_relu/model.onnx --db tuned.db --runs 5 --json > bench.json 2> err.txt \
    || fail "bench: $(cat err.txt)"
  check_report tuned
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok
