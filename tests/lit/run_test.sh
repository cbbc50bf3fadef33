#!/usr/bin/env bash
# Runs one golden test of tests/lit: the `# RUN:` lines of a .test file, in
# order, each with bash under `set -e -o pipefail`, in a fresh work folder.
#
#   run_test.sh LATHE LLVM_TOOLS_DIR CASE.test WORK_DIR
#
# Substitutions in RUN lines:
#   %lathe      the lathe binary
#   %FileCheck  LLVM's FileCheck (LLVM_TOOLS_DIR/FileCheck)
#   %not        LLVM's not: succeeds when the command fails (and did not crash)
#   %s          the test file; %S its folder
#   %t          a path in the work folder for this test's files
#   %python     $LATHE_PYTHON, else python3 (for test inputs made at run time)
# A RUN line ending in '\' continues on the next RUN line. The lines of
# expected output are FileCheck directives in the same file (`# CHECK: ...`);
# a trace for `lathe lower --trace %s` can be the test file itself, whose
# comment lines the trace text parser skips (compiler/schedule/trace_text.h).
#
# `%lathe ... | %FileCheck %s` is safe under pipefail: FileCheck reads all
# its input before it checks, so lathe never writes into a closed pipe, and
# a lathe that fails fails the line. Never pipe lathe into `grep -q` or
# `head`, which exit early.
#
# A line `# REQUIRES: python-onnx` skips the case when %python cannot
# import onnx and numpy (Debian: python3-onnx).
#
# Exit status: 0 all lines passed, 1 a line failed (it is printed), 77 (a
# skip) when FileCheck is not installed (Debian: llvm-16-tools) or a
# requirement is missing.
set -euo pipefail

if [[ $# -ne 4 ]]; then
  echo "usage: $0 LATHE LLVM_TOOLS_DIR CASE.test WORK_DIR" >&2
  exit 2
fi
# Absolute paths: the RUN lines run in the work folder.
absolute() { [[ "$1" == /* ]] && echo "$1" || echo "$PWD/$1"; }
lathe=$(absolute "$1")
tools=$(absolute "$2")
case_file=$(absolute "$3")
work=$(absolute "$4")

for tool in FileCheck not; do
  if [[ ! -x "$tools/$tool" ]]; then
    echo "SKIP: $tools/$tool not found (install llvm-16-tools)" >&2
    exit 77
  fi
done

python=${LATHE_PYTHON:-python3}
if grep -q '^# REQUIRES: python-onnx' "$case_file" \
    && ! "$python" -c 'import onnx, numpy' 2> /dev/null; then
  echo "SKIP: $python cannot import onnx (install python3-onnx)" >&2
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
cd "$work"

# Collects the RUN lines, joining continuations.
commands=()
pending=""
while IFS= read -r line || [[ -n "$line" ]]; do
  [[ "$line" =~ ^[[:space:]]*#[[:space:]]RUN:[[:space:]]?(.*)$ ]] || continue
  text=${BASH_REMATCH[1]}
  if [[ "$text" == *\\ ]]; then
    pending+="${text%\\} "
    continue
  fi
  commands+=("$pending$text")
  pending=""
done < "$case_file"
if [[ -n "$pending" ]]; then
  echo "FAIL: the last RUN line of $case_file ends in '\\'" >&2
  exit 1
fi
if [[ ${#commands[@]} -eq 0 ]]; then
  echo "FAIL: $case_file has no RUN line" >&2
  exit 1
fi

substitute() {
  local text=$1
  text=${text//%lathe/$lathe}
  text=${text//%FileCheck/$tools/FileCheck}
  text=${text//%not/$tools/not}
  text=${text//%python/$python}
  text=${text//%s/$case_file}
  text=${text//%S/$(dirname "$case_file")}
  text=${text//%t/$work/t}
  printf '%s' "$text"
}

n=0
for command in "${commands[@]}"; do
  n=$((n + 1))
  expanded=$(substitute "$command")
  echo "RUN $n: $expanded"
  if ! bash -e -o pipefail -c "$expanded"; then
    echo "FAIL: RUN line $n of $case_file: $command" >&2
    exit 1
  fi
done
echo "PASS: $case_file ($n RUN lines)"
