# shellcheck shell=bash
# What run.sh and curve.sh share; sourced from the repository root.
#
#   ensure_ort             installs npm's onnxruntime-node@1.30.0 into
#                          build/ort/ once (ONNXRUNTIME_NODE_INSTALL=skip:
#                          its install script would fetch GPU providers)
#   ort_median_ms M T N    ONNX Runtime's median of N timed calls of model
#                          M on T threads (ort_latency.js)
#   median                 the median of the numbers on stdin, one a line
ort_dir="$PWD/build/ort"

ensure_ort() {
  if [[ ! -d "$ort_dir/node_modules/onnxruntime-node" ]]; then
    mkdir -p "$ort_dir"
    (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent \
       onnxruntime-node@1.30.0 >/dev/null)
  fi
}

# NAME=d0,d1,... for each graph input of model $1, as ort_latency.js takes
# them.
graph_input_shapes() {
  /usr/bin/python3 -c '
import sys, onnx
graph = onnx.load(sys.argv[1]).graph
constants = {i.name for i in graph.initializer}
for i in graph.input:
    if i.name not in constants:
        dims = ",".join(str(d.dim_value) for d in i.type.tensor_type.shape.dim)
        print(f"{i.name}={dims}")' "$1"
}

ort_median_ms() {
  local shapes
  shapes=$(graph_input_shapes "$1")
  # shellcheck disable=SC2086  # one argument per input
  NODE_PATH="$ort_dir/node_modules" node bench/models/ort_latency.js "$1" "$2" "$3" \
    $shapes | sed -n 's/.*"median_ms":\([0-9.e+-]*\).*/\1/p'
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
