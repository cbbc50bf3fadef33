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
