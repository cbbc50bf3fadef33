# Helpers of the CLI's shell tests (sourced): fail with a message, and check
# the CLI's error contract (docs/architecture.md, "The command line": one
# clear line on stderr, non-zero).

fail() { echo "FAIL: $*" >&2; exit 1; }
# The command must fail with exactly one line on stderr matching $1.
expect_error() {
  local pattern=$1; shift
  if "$@" > out.txt 2> err.txt; then fail "succeeded: $*"; fi
  [ "$(wc -l < err.txt)" -eq 1 ] || fail "not one line: $(cat err.txt)"
  grep -q -- "$pattern" err.txt || fail "expected '$pattern', got: $(cat err.txt)"
}
# The command must fail and print exactly one line, stdout and stderr
# together, matching $1.
expect_failure_line() {
  local pattern=$1; shift
  if "$@" > out.txt 2>&1; then fail "succeeded: $*"; fi
  [ "$(wc -l < out.txt)" -eq 1 ] || fail "not one line: $(cat out.txt)"
  grep -q -- "$pattern" out.txt || fail "expected '$pattern', got: $(cat out.txt)"
}
# Output is captured to a file before it is searched: `lathe ... | grep -q`
# fails under pipefail when grep exits first and lathe gets EPIPE.
# Exits 77 (the tests' skip) when python $1 cannot import onnx and numpy
# (Debian: python3-onnx), which the model tests make their models with.
skip_without_onnx() {
  if ! "$1" -c 'import onnx, numpy' 2> /dev/null; then
    echo "SKIP: $1 has no onnx module (install python3-onnx)"
    exit 77
  fi
}
# Makes tiny model $1 (tests/models/tiny_models.py) as $1.onnx with the
# caller's $python and $tiny_models.
make_model() { "$python" "$tiny_models" "$1" "$1" > /dev/null || fail "tiny_models.py $1"; }
