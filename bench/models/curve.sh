#!/usr/bin/env bash
# A model's end-to-end latency against tuning time, measured: the database a
# tuning run filled, cut at checkpoints, each cut run by Lathe beside ONNX
# Runtime (bench/README.md, "Models").
#
#   bash bench/models/curve.sh --db tuned.db --model mobilenet_v2 --threads 1 [--at 0,60,120,300,600,1200,1800] [--runs N]
#
# The run's start is the first record measured for the target (`host
# -num-threads=N`); the cut at T seconds holds the target's records measured
# by start + T (`lathe db export`, filtered, `lathe db import`), as the
# database was T seconds into the tuning (T = 0: no records, the default
# schedules). So a database tuned from empty gives the curve of that run;
# one whose tuning was resumed gives tuning wall time, not time since the
# start, only when the resumed run followed at once. Each cut's latency is
# the median of three bench_model_latency runs; ONNX Runtime's (ort_latency.js)
# is measured three times, before, midway and after, and the median taken.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build_dir="${LATHE_BUILD_DIR:-build/release}"
db=""
model=""
threads=1
checkpoints="0,60,120,300,600,1200,1800"
runs=30
while [[ $# -gt 0 ]]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --at) checkpoints="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "curve.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$db" && -n "$model" ]] || { echo "curve.sh: --db and --model are required" >&2; exit 2; }
[[ -f "$db" ]] || { echo "curve.sh: no database $db" >&2; exit 1; }

lathe="$build_dir/cli/lathe"
bench_bin="$build_dir/bench/bench_model_latency"
for bin in "$lathe" "$bench_bin"; do
  [[ -x "$bin" ]] || { echo "curve.sh: $bin is missing: bash scripts/build.sh" >&2; exit 1; }
done
source bench/models/common.sh
ensure_ort
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 tests/models/export_models.py "$work" --opsets 13 --models "$model" >/dev/null
onnx="$work/${model}_opset13/model.onnx"

"$lathe" db export --db "$db" -o "$work/all.jsonl" >/dev/null
ort() { ort_median_ms "$onnx" "$threads" "$runs"; }

ort_times=("$(ort)")
rows=()
count=0
IFS=',' read -r -a points <<< "$checkpoints"
for at in "${points[@]}"; do
  cut="$work/cut_$at"
  # The target's records measured within `at` seconds of its first; prints
  # how many.
  records=$(/usr/bin/python3 - "$work/all.jsonl" "$threads" "$at" "$cut.jsonl" <<'PY'
import json, sys
lines, threads, at, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
header, records = None, []
for line in open(lines):
    row = json.loads(line)
    if "format" in row:
        header = line
    elif "measured_at_unix_ms" in row and row["target"]["num_threads"] == threads \
            and row["target"]["kind"] == "llvm":
        records.append((int(row["measured_at_unix_ms"]), line))
if not records:
    sys.exit(f"no records for {threads} thread(s)")
start = min(t for t, _ in records)
kept = [line for t, line in records if at > 0 and t <= start + at * 1000]
with open(out, "w") as f:
    f.write(header)
    f.writelines(kept)
print(len(kept))
PY
)
  args=("$onnx" --threads "$threads" --runs "$runs")
  if [[ $records -gt 0 ]]; then
    "$lathe" db import --db "$cut.db" "$cut.jsonl" >/dev/null
    args+=(--db "$cut.db")
  fi
  times=()
  for _ in 1 2 3; do
    times+=("$("$bench_bin" "${args[@]}" | sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p')")
  done
  rows+=("$at $records $(printf '%s\n' "${times[@]}" | median)")
  count=$((count + 1))
  if [[ $count -eq $(( (${#points[@]} + 1) / 2 )) ]]; then ort_times+=("$(ort)"); fi
done
ort_times+=("$(ort)")
ort_ms=$(printf '%s\n' "${ort_times[@]}" | median)

printf '%s, %d thread(s); ONNX Runtime %.2f ms (median of %s)\n\n' "$model" "$threads" \
  "$ort_ms" "$(printf '%s ' "${ort_times[@]}" | sed 's/ $//')"
printf '| tuning time (s) | records | Lathe (ms) | ORT time / Lathe time |\n'
printf '|---|---|---|---|\n'
for row in "${rows[@]}"; do
  read -r at records ms <<< "$row"
  printf '| %s | %s | %.2f | %.2f |\n' "$at" "$records" "$ms" \
    "$(awk -v a="$ort_ms" -v b="$ms" 'BEGIN {print a / b}')"
done
