#!/usr/bin/env bash
# `lathe compile MODEL.onnx`: one library whose C entry runs the model. A
# tiny conv+relu+maxpool+gemm model (tests/models/tiny_models.py conv_relu_gemm) is
# built into a .a, a .so and a .o; a C program calls the entry on the
# model's input (and from four threads at once) and its outputs match
# `lathe run`'s and numpy's; two builds are byte-identical; --require-tuned
# names exactly the untuned tasks and --misses feeds `lathe tune
# --workloads-file`; bad command lines and models that need the host are
# refused with one line; the CMake function lathe_add_model builds it into
# a program; a tuned task's constant weight is embedded packed.
# Usage: compile_model_test.sh LATHE PYTHON TINY_MODELS COMPARE_TENSORS
#          CMAKE GENERATOR PACKAGE_DIR CASE
# (exit 77, a skip, when PYTHON has no onnx module or, for the cases that
# link, there is no C compiler).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
python=$2
tiny_models=$3
compare=$4
cmake=$5
generator=$6
package_dir=$7
case_name=$8
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

skip_without_onnx "$python"
need_cc() {
  command -v cc > /dev/null || { echo "SKIP: no C compiler (cc)"; exit 77; }
}
"$python" "$tiny_models" conv_relu_gemm m > /dev/null || fail "tiny_models.py"
T="host -num-threads=2"

# The C program: the entry on input.raw into out0.raw and out1.raw, then
# the same from four threads at once (each must give the same bytes).
cat > check.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "m.h"
enum { IN0 = 1 * 3 * 8 * 8, OUT0 = 10, OUT1 = 1 * 4 * 8 * 8, THREADS = 4 };
static float in0[IN0], out0[OUT0], out1[OUT1];
struct job { float o0[OUT0], o1[OUT1]; int rc; };
static void* run(void* arg) {
  struct job* job = arg;
  int i;
  for (i = 0; i < 25; ++i) job->rc |= conv_relu_gemm(in0, job->o0, job->o1);
  return NULL;
}
static int io(const char* path, void* data, size_t n, int out) {
  FILE* f = fopen(path, out ? "wb" : "rb");
  size_t done;
  if (f == NULL) return 1;
  done = out ? fwrite(data, 4, n, f) : fread(data, 4, n, f);
  return fclose(f) != 0 || done != n;
}
int main(void) {
  static struct job jobs[THREADS];
  pthread_t threads[THREADS];
  int t;
  if (io("input.raw", in0, IN0, 0)) return 10;
  memset(out0, 0xff, sizeof out0); /* NaNs: every output must be written */
  memset(out1, 0xff, sizeof out1);
  if (conv_relu_gemm(in0, out0, out1) != 0) return 11;
  if (io("out0.raw", out0, OUT0, 1) || io("out1.raw", out1, OUT1, 1)) return 12;
  for (t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, run, &jobs[t]);
  for (t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  for (t = 0; t < THREADS; ++t) {
    if (jobs[t].rc != 0) return 13;
    if (memcmp(jobs[t].o0, out0, sizeof out0) || memcmp(jobs[t].o1, out1, sizeof out1))
      return 14;
  }
  puts("ok");
  return 0;
}
C
"$python" - <<'PY'
import numpy as np, onnx
from onnx import numpy_helper
x = numpy_helper.to_array(onnx.load_tensor("m/input_0.pb")).astype(np.float32)
x.tofile("input.raw")
PY
# Links check.c with the library (linker words $1) and header $2, runs it
# and compares its outputs with `lathe run`'s (run/) and numpy's.
check_library() {
  cp "$2" m.h
  # shellcheck disable=SC2086
  cc -std=c99 -O1 -Wall -Werror -pthread -o check check.c $1 -lpthread -lm \
    || fail "cannot link $1"
  rm -f out0.raw out1.raw
  ./check > check.txt || fail "check on $1 exited $?: $(cat check.txt)"
  compare_outputs "$1"
}
# Compares out0.raw and out1.raw with `lathe run`'s (run/) and numpy's.
compare_outputs() {
  "$python" - <<'PY' || fail "cannot convert the outputs of $1"
import numpy as np
from onnx import numpy_helper
for i, (name, shape) in enumerate([("y", (1, 10)), ("features", (1, 4, 8, 8))]):
    a = np.fromfile("out%d.raw" % i, np.float32).reshape(shape)
    open("c_output_%d.pb" % i, "wb").write(numpy_helper.from_array(a, name).SerializeToString())
PY
  for i in 0 1; do
    "$compare" "c_output_$i.pb" "run/output_$i.pb" || fail "$1: output $i differs from lathe run's"
    "$compare" "c_output_$i.pb" "m/expected_$i.pb" || fail "$1: output $i differs from numpy's"
  done
}

case $case_name in
cmake_function)
  need_cc
  "$lathe" run m/model.onnx --input m/input_0.pb --output-dir run --target "$T" 2> /dev/null \
    || fail "lathe run"
  mkdir project
  cp check.c project/
  cat > project/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(model_user LANGUAGES C)
add_executable(Lathe::lathe IMPORTED)
set_target_properties(Lathe::lathe PROPERTIES IMPORTED_LOCATION "$lathe")
include("$package_dir/LatheKernels.cmake")
add_executable(check check.c)
lathe_add_model(check MODEL "$d/m/model.onnx" NAME m FUNCTION conv_relu_gemm DEVICE "$T"
                OUTPUT_VARIABLE folder)
file(WRITE "\${CMAKE_BINARY_DIR}/folder.txt" "\${folder}")
CMAKE
  "$cmake" -S project -B build -G "$generator" > configure.txt 2>&1 \
    || fail "configure: $(cat configure.txt)"
  "$cmake" --build build > build.txt 2>&1 || fail "build: $(cat build.txt)"
  [ -f build/lathe/m/m.json ] || fail "no manifest: $(ls -R build/lathe)"
  [ "$(cat build/folder.txt)" = "$d/build/lathe/m" ] || fail "OUTPUT_VARIABLE: $(cat build/folder.txt)"
  build/check > check.txt || fail "check exited $?: $(cat check.txt)"
  compare_outputs "lathe_add_model"
  # Nothing changed: not generated again; a new model file: generated again.
  "$cmake" --build build > rebuild.txt 2>&1
  if grep -q 'Lathe: model m' rebuild.txt; then fail "regenerated: $(cat rebuild.txt)"; fi
  touch m/model.onnx
  "$cmake" --build build > rebuild.txt 2>&1 || fail "rebuild: $(cat rebuild.txt)"
  grep -q 'Lathe: model m' rebuild.txt || fail "not regenerated: $(cat rebuild.txt)"
  ;;
library_matches_run)
  need_cc
  "$lathe" run m/model.onnx --input m/input_0.pb --output-dir run --target "$T" 2> /dev/null \
    || fail "lathe run"
  "$lathe" compile m/model.onnx --target "$T" -o m.a --header ma.h --function conv_relu_gemm \
    2> err.txt \
    || fail "compile .a: $(cat err.txt)"
  [ ! -s err.txt ] || fail "warnings without --db: $(cat err.txt)"
  # The header: the entry, each tensor's name and shape, the contract.
  grep -qF 'int conv_relu_gemm(' ma.h || fail "header: $(cat ma.h)"
  grep -qF '/* input 0 "x": float32[1, 3, 8, 8] */ const float* input0' ma.h || fail "header input: $(cat ma.h)"
  grep -qF '/* output 1 "features": float32[1, 4, 8, 8] */ float* output1' ma.h || fail "header output: $(cat ma.h)"
  grep -qF 'Kernels: 3 distinct, 3 calls per run.' ma.h || fail "header kernels: $(cat ma.h)"
  grep -qF 'lathe_set_num_threads' ma.h || fail "header runtime: $(cat ma.h)"
  check_library m.a ma.h
  "$lathe" compile m/model.onnx --target "$T" -o libcrg.so --header mso.h --function conv_relu_gemm
  grep -qF 'void conv_relu_gemm_set_num_threads(int n);' mso.h || fail "header .so: $(cat mso.h)"
  check_library "-L. -lcrg -Wl,-rpath,$d" mso.h
  # The .so exports the entry and its thread control, no kernel.
  nm -D --defined-only libcrg.so | awk '{print $3}' | sort > exports.txt
  printf '%s\n' conv_relu_gemm conv_relu_gemm_release_scratch conv_relu_gemm_set_num_threads \
    > expected_exports.txt
  diff expected_exports.txt exports.txt || fail "exports: $(cat exports.txt)"
  # The header is valid pedantic C and C++.
  printf '#include "mso.h"\nint main(void) { return 0; }\n' > h.c
  cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only h.c || fail "header as C"
  if command -v c++ > /dev/null; then
    cp h.c h.cc; c++ -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only h.cc \
      || fail "header as C++"
  fi
  ;;
# A tuned task whose record packs its constant weight at the root
# (MatMul's W, declared const): the library embeds W packed at build time,
# not as the model has it, and calls the split's main kernel with it; its
# outputs still match `lathe run --db`'s and numpy's, and two builds are
# byte-identical.
tuned_weight_embedded_packed)
  need_cc
  "$python" - <<'PY'
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(7)
w = rng.standard_normal((32, 64)).astype(np.float32)
x = rng.standard_normal((16, 32)).astype(np.float32)
nodes = [helper.make_node("MatMul", ["x", "w"], ["c"], name="mm"),
         helper.make_node("Relu", ["c"], ["y"], name="relu")]
g = helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 32])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 64])],
                      [numpy_helper.from_array(w, "w")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "mm.onnx")
open("x.pb", "wb").write(numpy_helper.from_array(x, "x").SerializeToString())
x.tofile("x.raw")
y = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0).astype(np.float32)
open("expected.pb", "wb").write(numpy_helper.from_array(y, "y").SerializeToString())
w.tofile("w.raw")
PY
  "$lathe" tasks mm.onnx --json > tasks.json || fail "tasks"
  mm=$("$python" -c 'import json; print("".join(t["spec"] for t in json.load(open("tasks.json"))["tasks"] if t["anchor"] == "MatMul"))')
  [[ "$mm" == *"const;"* ]] || fail "the weight is not const: $mm"
  "$lathe" tune "$mm" --target "$T" --trials 4 --batch 4 --population 4 --generations 1 \
    --min-time 0.005 --measure-rounds 1 --seed 1 --db all.db > tune.txt 2>&1 \
    || fail "tune: $(cat tune.txt)"
  # Which record is fastest is up to the machine's timing (the default
  # schedule, packing nothing, is measured too): keep only the records that
  # pack, so that the best one packs by construction.
  "$lathe" db export --db all.db -o all.jsonl || fail "export"
  "$python" - <<'PY' || fail "no tuned record packs the weight ahead"
import json
header, *rows = open("all.jsonl").read().splitlines()
records = [r for r in rows if "workload_key" in json.loads(r)]
packing = [r for r in records if "lathe.layout_free_pack" in r]
assert 0 < len(packing) < len(records), (len(packing), len(records))
open("packed.jsonl", "w").write("".join(l + "\n" for l in [header] + packing))
PY
  "$lathe" db import --db tuned.db packed.jsonl > /dev/null || fail "import"
  "$lathe" db best "$mm" --target "$T" --db tuned.db --trace-out best.json > best.txt \
    || fail "best: $(cat best.txt)"
  grep -q 'lathe.layout_free_pack' best.json || fail "the best record packs nothing ahead"
  "$lathe" run mm.onnx --db tuned.db --input x.pb --output-dir run --target "$T" 2> /dev/null \
    || fail "lathe run"
  for i in 1 2; do
    mkdir "out$i"
    "$lathe" compile mm.onnx --db tuned.db --target "$T" -o "out$i/mm.a" --header "out$i/mm.h" \
      --function mm 2> err.txt || fail "compile: $(cat err.txt)"
  done
  cmp out1/mm.a out2/mm.a || fail "mm.a differs between two builds"
  cmp out1/mm.h out2/mm.h || fail "mm.h differs between two builds"
  cp out1/mm.a mm1.a
  cp out1/mm.h mm1.h
  grep -qF 'input 1 float32[32, 64]: weights embedded packed as float32[' mm1.h \
    || fail "header: $(cat mm1.h)"
  # W is in the library in its packed layout only.
  "$python" - <<'PY' || fail "the weight is embedded as the model has it"
w = open("w.raw", "rb").read()
assert w[:256] not in open("mm1.a", "rb").read()
PY
  cat > mm_check.c <<'C'
#include <stdio.h>
#include <string.h>
#include "mm1.h"
static float x[16 * 32], y[16 * 64];
int main(void) {
  FILE* f = fopen("x.raw", "rb");
  if (f == NULL || fread(x, 4, 16 * 32, f) != 16 * 32) return 10;
  fclose(f);
  memset(y, 0xff, sizeof y);
  if (mm(x, y) != 0) return 11;
  f = fopen("y.raw", "wb");
  if (f == NULL || fwrite(y, 4, 16 * 64, f) != 16 * 64) return 12;
  return fclose(f) != 0;
}
C
  cc -std=c99 -O1 -Wall -Werror -pthread -o mm_check mm_check.c mm1.a -lpthread -lm \
    || fail "cannot link mm1.a"
  ./mm_check || fail "mm_check exited $?"
  "$python" - <<'PY' || fail "cannot convert y.raw"
import numpy as np
from onnx import numpy_helper
y = np.fromfile("y.raw", np.float32).reshape(16, 64)
open("c_output.pb", "wb").write(numpy_helper.from_array(y, "y").SerializeToString())
PY
  "$compare" c_output.pb run/output_0.pb || fail "differs from lathe run's"
  "$compare" c_output.pb expected.pb || fail "differs from numpy's"
  ;;
reproducible)
  for i in 1 2; do
    mkdir "out$i"
    for ext in o a; do
      (cd "out$i" && "$lathe" compile ../m/model.onnx --target "$T" -o "m.$ext" \
        --header "m$ext.h" 2> /dev/null) || fail "compile $ext"
    done
  done
  for f in m.o m.a mo.h ma.h; do cmp "out1/$f" "out2/$f" || fail "$f differs"; done
  # The default function name is the model file's stem.
  grep -qF 'int model(' out1/ma.h || fail "default name: $(cat out1/ma.h)"
  # The weights are in the object: fc_w's first float is there.
  "$python" - <<'PY' || fail "the weights are not embedded"
import onnx
from onnx import numpy_helper
m = onnx.load("m/model.onnx")
w = [numpy_helper.to_array(t) for t in m.graph.initializer if t.name == "fc_w"][0]
assert w.tobytes() in open("out1/m.o", "rb").read()
PY
  # The shared library is reproducible when the system linker is (GNU ld).
  if command -v cc > /dev/null; then
    for i in 1 2; do
      (cd "out$i" && "$lathe" compile ../m/model.onnx --target "$T" -o m.so 2> /dev/null)
    done
    cmp out1/m.so out2/m.so || fail "m.so differs"
  fi
  ;;
require_tuned_and_misses)
  "$lathe" tasks m/model.onnx --json > tasks.json || fail "tasks"
  spec_of() {
    "$python" -c 'import json, sys; print("".join(t["spec"] for t in json.load(open("tasks.json"))["tasks"] if t["anchor"] == sys.argv[1]))' "$1"
  }
  conv=$(spec_of Conv)
  pool=$(spec_of MaxPool)
  gemm=$(spec_of Gemm)
  [ -n "$conv" ] && [ -n "$pool" ] && [ -n "$gemm" ] || fail "tasks: $(cat tasks.json)"
  tune() { "$lathe" tune "$@" --target "$T" --trials 2 --batch 2 --population 4 --generations 1 \
             --min-time 0.005 --measure-rounds 1 --db tuned.db > tune.txt 2>&1 \
             || fail "tune: $(cat tune.txt)"; }
  tune "$gemm"
  # One of three tasks is tuned: the other two are named, and written.
  expect_error "^lathe: error: --require-tuned: 2 of 3 tasks of m/model.onnx have no usable record" \
    "$lathe" compile m/model.onnx --db tuned.db --target "$T" -o m.a --require-tuned \
    --misses misses.txt
  grep -qF ": $conv, $pool (listed in misses.txt)" err.txt || fail "not the untuned: $(cat err.txt)"
  if grep -qF "$gemm" err.txt; then fail "the tuned task is listed: $(cat err.txt)"; fi
  [ ! -e m.a ] || fail "a library was written"
  [ "$(grep -vc '^#' misses.txt)" -eq 2 ] || fail "misses: $(cat misses.txt)"
  grep -qxF "$conv" misses.txt && grep -qxF "$pool" misses.txt || fail "misses: $(cat misses.txt)"
  # Without --require-tuned: one warning, and the manifest says which is which.
  "$lathe" compile m/model.onnx --db tuned.db --target "$T" -o m.a --manifest m.json \
    2> err.txt || fail "compile: $(cat err.txt)"
  [ "$(wc -l < err.txt)" -eq 1 ] || fail "not one warning: $(cat err.txt)"
  grep -qF '2 of 3 tasks not tuned' err.txt || fail "warning: $(cat err.txt)"
  [ "$(grep -c '"source": "database"' m.json)" -eq 1 ] || fail "manifest: $(cat m.json)"
  [ "$(grep -c '"source": "default"' m.json)" -eq 2 ] || fail "manifest: $(cat m.json)"
  # `lathe tune --workloads-file` takes the misses; then all are tuned.
  tune --workloads-file misses.txt
  "$lathe" compile m/model.onnx --db tuned.db --target "$T" -o m.a --header m.h \
    --require-tuned --misses misses2.txt 2> err.txt || fail "still untuned: $(cat err.txt)"
  [ "$(grep -vc '^#' misses2.txt)" -eq 0 ] || fail "misses2: $(cat misses2.txt)"
  [ "$(grep -c 'schedule: database record [0-9]*' m.h)" -eq 3 ] || fail "header: $(cat m.h)"
  # Another target (a thread count without records): every task is untuned.
  expect_error "^lathe: error: --require-tuned: 3 of 3 tasks" "$lathe" compile m/model.onnx \
    --db tuned.db --target "host -num-threads=1" -o m2.a --require-tuned --misses misses3.txt
  [ "$(grep -vc '^#' misses3.txt)" -eq 3 ] || fail "misses3: $(cat misses3.txt)"
  ;;
refusals)
  # A model whose int64 ArgMax (and the Cast after it) run on the host.
  "$python" - <<'PY'
import onnx
from onnx import TensorProto, helper
nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("ArgMax", ["r"], ["i"], name="argmax", axis=1),
         helper.make_node("Cast", ["i"], ["y"], name="cast", to=TensorProto.FLOAT)]
g = helper.make_graph(nodes, "host", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "host.onnx")
PY
  expect_error '^lathe: error: host.onnx: a model library runs kernels only, and 2 step(s) .*"argmax" (ArgMax); "cast" (Cast)' \
    "$lathe" compile host.onnx -o h.a
  head -c 40 m/model.onnx > truncated.onnx
  expect_error '^lathe: error: .*truncated.onnx' "$lathe" compile truncated.onnx -o t.a
  expect_error '^lathe: error: .*missing.onnx' "$lathe" compile missing.onnx -o t.a
  expect_error '^lathe: error: .*-o' "$lathe" compile m/model.onnx
  expect_error 'output m.lib: unknown extension' "$lathe" compile m/model.onnx -o m.lib
  expect_error '^lathe: error: --function 2x: not a C identifier' \
    "$lathe" compile m/model.onnx -o m.a --function 2x
  expect_error 'a model takes no --expr, --dims, --trace or --prefix' \
    "$lathe" compile m/model.onnx -o m.a --prefix p_
  expect_error 'need --db' "$lathe" compile m/model.onnx -o m.a --require-tuned
  expect_error '^lathe: error: m/model.onnx: a model is compiled alone' \
    "$lathe" compile matmul:M=4,N=4,K=4 m/model.onnx -o m.a
  expect_error '^lathe: error: --shape goes with a model' \
    "$lathe" compile matmul:M=4,N=4,K=4 -o k.a --shape x=1,2
  # A symbolic dimension needs --shape; with it, the header shows the shape.
  "$python" "$tiny_models" symbolic_batch sb > /dev/null || fail "tiny_models.py"
  expect_error '^lathe: error: sb/model.onnx: input "x": dimension 0 ("batch"' \
    "$lathe" compile sb/model.onnx -o sb.a
  "$lathe" compile sb/model.onnx -o sb.o --header sb.h --shape x=2,3 || fail "--shape"
  grep -qF '/* input 0 "x": float32[2, 3] */' sb.h || fail "--shape header: $(cat sb.h)"
  rm sb.o
  expect_error '^lathe: error: --shape "x=1,a"' \
    "$lathe" compile m/model.onnx -o m.a --shape x=1,a
  expect_error 'refusing to overwrite' "$lathe" compile m/model.onnx -o m/model.onnx.a \
    --header m/model.onnx
  if compgen -G "*.a" > /dev/null; then fail "outputs left: $(ls)"; fi
  ;;
*) fail "unknown case $case_name" ;;
esac
