#!/usr/bin/env bash
# `lathe tune MODEL.onnx` and `lathe submit MODEL.onnx` on a tiny model made
# at test time (two Conv+Relu groups of one shape and a MatMul: 2 tasks, 3
# kernel calls): every task `lathe tasks` lists gets searched records, the
# estimated model latency is the sum of count x best, tuned tasks are
# skipped (the default schedule's record alone does not make a task tuned),
# --retune tunes again, Ctrl-C and a rerun, the refusals, and a daemon on
# loopback tuning the model's tasks as one weighted job.
# Usage: tune_model_test.sh LATHE PYTHON CASE (exit 77, a skip, when PYTHON
# has no onnx module).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
python=$2
case_name=$3
d=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
  rm -rf "$d"
}
trap cleanup EXIT
cd "$d"

skip_without_onnx "$python"

# m.onnx: x[batch,4,6,6] -> Conv+Relu -> Conv+Relu (one task, count 2) ->
# Flatten -> MatMul (a second task).
"$python" - <<'PY' || fail "making the model"
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(3)
def init(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("Flatten", ["r2"], ["f"]),
    helper.make_node("MatMul", ["f", "w3"], ["y"]),
]
graph = helper.make_graph(
    nodes, "tune_model",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 6, 6])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
    initializer=[init("w1", (4, 4, 3, 3)), init("b1", (4,)), init("w2", (4, 4, 3, 3)),
                 init("b2", (4,)), init("w3", (144, 8))])
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, "m.onnx")
PY
SHAPE=(--shape x=1,4,6,6)
T="host -num-threads=1"
# A small search: the test is about the command, not the search.
SMALL=(--threads 1 --min-time 0.005 --batch 2 --seed 3 --population 4 --generations 1
       --measure-rounds 1)
tune_model() { "$lathe" tune m.onnx "${SHAPE[@]}" "${SMALL[@]}" "$@"; }

"$lathe" tasks m.onnx "${SHAPE[@]}" --json > tasks.json || fail "lathe tasks"

# The keys of the tasks database $1 has tuned, one a line: those with a
# MEASURE_OK record of a program other than the default schedule's (the
# program that `lathe tune` records as runner "local (default schedule)" and
# `lathe bench --db` without --trace measures).
tuned_keys() {
  "$lathe" db export --db "$1" -o records.jsonl > /dev/null
  "$python" - <<'PY'
import json
records = [r for r in (json.loads(l) for l in open("records.jsonl").readlines()[1:])
           if "batch" not in r]
default = {(r["workload_key"], r["structural_hash"]) for r in records
           if r["runner"] == "local (default schedule)" or r["runner"].startswith("lathe bench@")}
print("\n".join(sorted({r["workload_key"] for r in records if r.get("status") == "MEASURE_OK"
                        and (r["workload_key"], r["structural_hash"]) not in default})))
PY
}
# Checks database $1 against tasks.json: every task is tuned or, with $2 a
# file of specs, exactly the tasks listed there are.
check_tuned() {
  tuned_keys "$1" > tuned_keys.txt || fail "records of $1"
  "$python" - "${2:-}" <<'PY' || fail "tasks tuned in $1: $(cat tuned_keys.txt)"
import json, sys
tasks = json.load(open("tasks.json"))["tasks"]
want = {t["key"] for t in tasks}
if sys.argv[1]:
    specs = set(open(sys.argv[1]).read().split("\n")) - {""}
    want = {t["key"] for t in tasks if t["spec"] in specs}
tuned = set(open("tuned_keys.txt").read().split())
assert tuned == want, ("tuned", tuned, "want", want)
PY
}

case $case_name in
tunes_every_task)
  tune_model --trials 6 --db t.db --json > first.json 2> err.txt || fail "tune: $(cat err.txt)"
  check_tuned t.db
  # The JSON summary: the model, each task's count as `lathe tasks` has it,
  # and the estimate: the sum over tasks of count x best median.
  "$python" - <<'PY' || fail "summary: $(cat first.json)"
import json
s = json.load(open("first.json"))
tasks = {t["spec"]: t for t in json.load(open("tasks.json"))["tasks"]}
assert s["model"] == "m.onnx" and s["trials"] == 6 and s["skipped"] == [], s
assert sorted(t["workload"] for t in s["tasks"]) == sorted(tasks), s
assert all(t["count"] == tasks[t["workload"]]["count"] for t in s["tasks"]), s
estimate = sum(t["count"] * t["best_median_s"] for t in s["tasks"])
assert abs(s["model_latency_s"] - estimate) <= 1e-6 * estimate, (estimate, s)
assert s["model_default_latency_s"] > 0, s
PY
  # The HTML report of the job has the model's view: its latency over
  # time and a share for each of its 2 tasks; `lathe report` makes it too.
  grep -q '"report": "t.report.html"' first.json || fail "no report: $(cat first.json)"
  grep -q 'id="model-0-share" data-points="2"' t.report.html || fail "no model view in t.report.html"
  grep -q 'id="model-0-latency" data-points="[1-9]' t.report.html || fail "no latency points"
  "$lathe" report --db t.db m.onnx "${SHAPE[@]}" -o all.html > report.txt || fail "lathe report"
  grep -q 'id="model-0-share" data-points="2"' all.html || fail "lathe report: no model view"
  # Text: progress shows the estimate; the report gives it before and after.
  tune_model --trials 4 --db text.db > text.txt 2> progress.txt || fail "tune: $(cat progress.txt)"
  grep -Eq '^\[[0-9]+/4 trials.*\] latency ~[0-9.]+ (ns|us|ms|s) \(default [0-9.]+ (ns|us|ms|s)\)' \
    progress.txt || fail "progress: $(cat progress.txt)"
  grep -Eq '^model m.onnx, estimated latency: [0-9.]+ (ns|us|ms) with the default schedules -> [0-9.]+ (ns|us|ms) tuned \([0-9.]+x\)$' \
    text.txt || fail "report: $(cat text.txt)"
  [ "$(grep -c '^  count    [12]$' text.txt)" = 2 ] || fail "counts: $(cat text.txt)"
  # Everything tuned: a rerun says so, lists the skipped tasks, measures
  # nothing and exits 0.
  "$lathe" db stats --db t.db --json > before.json
  tune_model --trials 6 --db t.db > again.txt 2> err.txt || fail "rerun: $(cat err.txt)"
  grep -q '^skipped 2 of 2 tasks, tuned in t.db for .* already (--retune tunes them again):$' again.txt \
    || fail "rerun: $(cat again.txt)"
  grep -q '^nothing to tune: every task of m.onnx is tuned in t.db for ' again.txt \
    || fail "rerun: $(cat again.txt)"
  [ "$(grep -c '^  custom:' again.txt)" = 2 ] || fail "skipped list: $(cat again.txt)"
  "$lathe" db stats --db t.db --json > after.json
  cmp -s before.json after.json || fail "a rerun with nothing to tune changed the database"
  tune_model --trials 6 --db t.db --json > again.json
  "$python" -c '
import json
s = json.load(open("again.json"))
assert s["tasks"] == [] and len(s["skipped"]) == 2 and s["model_latency_s"] > 0, s' \
    || fail "rerun --json: $(cat again.json)"
  # --retune tunes them again.
  tune_model --trials 4 --db t.db --retune --json > retune.json || fail "retune"
  "$python" -c '
import json
s = json.load(open("retune.json"))
assert s["trials"] == 4 and len(s["tasks"]) == 2 and s["skipped"] == [], s' \
    || fail "retune: $(cat retune.json)"
  ;;
skips_only_tuned_tasks)
  # The MatMul task tuned alone (as a spec), the Conv task only measured
  # with its default schedule (lathe bench --db): the model's run tunes
  # the Conv task only.
  "$python" -c '
import json
t = json.load(open("tasks.json"))["tasks"]
print(next(x["spec"] for x in t if x["anchor"] == "MatMul"), file=open("matmul.txt", "w"))
print(next(x["spec"] for x in t if x["anchor"] == "Conv"), file=open("conv.txt", "w"))'
  "$lathe" tune "$(cat matmul.txt)" "${SMALL[@]}" --trials 2 --db t.db > /dev/null 2>&1 \
    || fail "tuning the MatMul task"
  "$lathe" bench "$(cat conv.txt)" --threads 1 --min-time 0.005 --db t.db > /dev/null \
    || fail "bench --db"
  check_tuned t.db matmul.txt
  tune_model --trials 2 --db t.db --json > model.json || fail "tune"
  "$python" - <<'PY' || fail "skips: $(cat model.json)"
import json
s = json.load(open("model.json"))
conv, matmul = open("conv.txt").read().strip(), open("matmul.txt").read().strip()
assert [t["workload"] for t in s["skipped"]] == [matmul], s
assert s["skipped"][0]["count"] == 1 and s["skipped"][0]["best_median_s"] > 0, s
assert [t["workload"] for t in s["tasks"]] == [conv], s
assert s["tasks"][0]["count"] == 2 and s["tasks"][0]["trials"] == 2, s
PY
  check_tuned t.db
  # Specs on the command line are tuned whether tuned or not.
  "$lathe" tune "$(cat matmul.txt)" "${SMALL[@]}" --trials 2 --db t.db --json > spec.json
  grep -q '"trials": 2,' spec.json || fail "a spec was skipped: $(cat spec.json)"
  # A --workloads-file's tuned workloads are skipped like a model's tasks.
  cat matmul.txt conv.txt > both.txt
  "$lathe" tune --workloads-file both.txt "${SMALL[@]}" --trials 2 --db t.db > file.txt
  grep -q '^nothing to tune: every workload of both.txt is tuned in t.db' file.txt \
    || fail "workloads file: $(cat file.txt)"
  ;;
sigint_resumes)
  # Not through tune_model(): $! must be lathe's pid, not a subshell's.
  "$lathe" tune m.onnx "${SHAPE[@]}" "${SMALL[@]}" --trials 100000 --db t.db \
    > out.txt 2> err.txt &
  pid=$!
  pids+=("$pid")
  # Wait (bounded) until a batch past the two default schedules is in.
  n=0
  for _ in $(seq 1 600); do
    "$lathe" db stats --db t.db --json > stats.json 2> /dev/null || true
    n=$(grep -m1 -oE '"records": [0-9]+' stats.json | sed -E 's/.*: //' || echo 0)
    [ "${n:-0}" -ge 4 ] && break
    sleep 0.1
  done
  [ "${n:-0}" -ge 4 ] || fail "no records after 60 s"
  kill -INT "$pid"
  wait "$pid" || fail "exit code $? after SIGINT: $(cat err.txt)"
  pids=()
  grep -q '^stopped after [0-9]* trials .*; run again to continue$' out.txt \
    || fail "output: $(cat out.txt)"
  "$lathe" db check --db t.db > /dev/null || fail "check after SIGINT"
  # Which tasks the stopped run tuned: the rerun skips exactly those and
  # tunes the rest.
  tuned_keys t.db > tuned_keys.txt || fail "records"
  [ -s tuned_keys.txt ] || fail "the stopped run tuned no task"
  tune_model --trials 2 --db t.db --json > rerun.json || fail "rerun"
  "$python" - <<'PY' || fail "rerun: $(cat rerun.json)"
import json
s = json.load(open("rerun.json"))
tasks = {t["spec"]: t["key"] for t in json.load(open("tasks.json"))["tasks"]}
tuned = set(open("tuned_keys.txt").read().split())
assert {tasks[t["workload"]] for t in s["skipped"]} == tuned, s
assert {tasks[t["workload"]] for t in s["tasks"]} == set(tasks.values()) - tuned, s
PY
  check_tuned t.db
  ;;
errors)
  expect_error '^lathe: error: m.onnx: a model goes alone; give no workload spec or other model beside it' \
    "$lathe" tune m.onnx matmul:M=4,N=4,K=4 "${SHAPE[@]}"
  expect_error '^lathe: error: m.onnx: a model goes alone' "$lathe" tune m.onnx m.onnx "${SHAPE[@]}"
  expect_error '^lathe: error: nope.onnx: cannot open' "$lathe" tune nope.onnx
  expect_error '^lathe: error: m.onnx: input "x": .* is symbolic; give the shape with --shape' \
    "$lathe" tune m.onnx
  expect_error '^lathe: error: --weights: the tasks of m.onnx are weighted by how often' \
    "$lathe" tune m.onnx "${SHAPE[@]}" --weights 2
  expect_error '^lathe: error: m.onnx: a model goes alone; --workloads-file' \
    "$lathe" tune m.onnx "${SHAPE[@]}" --workloads-file m.onnx
  expect_error '^lathe: error: --shape x=1: --shape is for a model' \
    "$lathe" tune matmul:M=4,N=4,K=4 --shape x=1
  expect_error '^lathe: error: m.onnx: a model goes alone' \
    "$lathe" submit m.onnx matmul:M=4,N=4,K=4 "${SHAPE[@]}" --tuner 127.0.0.1:1 --token-file /dev/null
  expect_error '^lathe: error: nope.onnx: cannot open' \
    "$lathe" submit nope.onnx --tuner 127.0.0.1:1 --token-file /dev/null
  expect_error '^lathe: error: --weights: the tasks of m.onnx are weighted by how often' \
    "$lathe" submit m.onnx "${SHAPE[@]}" --weights 2 --tuner 127.0.0.1:1 --token-file /dev/null
  expect_error '^lathe: error: --shape x=1: --shape is for a model' \
    "$lathe" submit matmul:M=4,N=4,K=4 --shape x=1 --tuner 127.0.0.1:1 --token-file /dev/null
  [ ! -e lathe.db ] || fail "a refused run created lathe.db"
  ;;
submit_model)
  echo "s3cret-$RANDOM$RANDOM" > token
  chmod 600 token
  "$lathe" serve --listen 127.0.0.1:0 --db s.db --token-file token --port-file port \
    --lease-seconds 2 2> serve.log &
  daemon=$!
  pids+=("$daemon")
  for _ in $(seq 1 600); do
    [ -s port ] && break
    kill -0 "$daemon" 2> /dev/null || fail "the daemon exited: $(cat serve.log)"
    sleep 0.05
  done
  [ -s port ] || fail "the daemon did not listen: $(cat serve.log)"
  port=$(cat port)
  "$lathe" runner --connect "127.0.0.1:$port" --token-file token --target "$T" --name a \
    2> runner.log &
  pids+=($!)
  "$lathe" submit m.onnx "${SHAPE[@]}" --tuner "127.0.0.1:$port" --token-file token \
    --target "$T" --trials 4 --batch 2 --min-time 0.01 --wait --json > job.json 2> progress.txt \
    || fail "submit: $(cat progress.txt) $(tail -5 serve.log)"
  # The daemon got the tasks' specs weighted by their counts, and ran them.
  "$python" - <<'PY' || fail "job: $(cat job.json)"
import json
job = json.load(open("job.json"))
tasks = json.load(open("tasks.json"))["tasks"]
assert job["state"] == "JOB_DONE", job
assert job["spec"]["workloads"] == [t["spec"] for t in tasks], job
assert job["spec"]["weights"] == [t["count"] for t in tasks], job
PY
  # Stopped, its database counts the daemon's records as tuned.
  kill -TERM "$daemon"
  wait "$daemon" || fail "the daemon's exit: $(tail -5 serve.log)"
  check_tuned s.db
  tune_model --db s.db --trials 2 > again.txt || fail "tune after the daemon"
  grep -q '^nothing to tune: every task of m.onnx is tuned in s.db' again.txt \
    || fail "after the daemon: $(cat again.txt)"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok
