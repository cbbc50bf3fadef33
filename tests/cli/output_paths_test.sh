#!/usr/bin/env bash
# Commands that write files refuse an output that is one of their own
# files (cli/output_paths.h): the database above all, under any of its
# names, and one output over another. Each refusal is one line, exit 1, and
# leaves the database byte for byte as it was.
# Usage: output_paths_test.sh LATHE_BIN
set -euo pipefail
lathe=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
fail() { echo "FAIL: $*" >&2; exit 1; }
W=matmul:M=16,N=16,K=16
T="host -num-threads=1"
"$lathe" bench "$W" --threads 1 --min-time 0.001 --db x.db > /dev/null
ln -s x.db link.db
ln x.db hard.db
before=$(sha256sum < x.db)

# refuses CASE_NAME EXPECTED_MESSAGE_PART COMMAND...
refuses() {
  local name=$1 want=$2
  shift 2
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" = 1 ] || fail "$name: exit $rc: $out"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "$name: not one line: $out"
  grep -q -- "$want" <<<"$out" || fail "$name: $out"
  [ "$(sha256sum < x.db)" = "$before" ] || fail "$name: the database changed"
}

refuses export "-o x.db is the database (--db)" "$lathe" db export --db x.db -o x.db
refuses export_other_name "-o ./x.db is the database" "$lathe" db export --db x.db -o ./x.db
refuses export_symlink "-o link.db is the database" "$lathe" db export --db x.db -o link.db
refuses export_hard_link "-o hard.db is the database" "$lathe" db export --db x.db -o hard.db
refuses trace_out "--trace-out x.db is the database" \
  "$lathe" db best "$W" --db x.db --target "$T" --trace-out x.db
refuses compile_header "--header x.db is the database" \
  "$lathe" compile "$W" --db x.db --target "$T" -o k.a --header x.db
refuses compile_manifest "--manifest x.db is the database" \
  "$lathe" compile "$W" --db x.db --target "$T" -o k.a --manifest x.db
refuses compile_misses "--misses link.db is the database" \
  "$lathe" compile "$W" --db x.db --target "$T" -o k.a --misses link.db
cp x.db lib.a  # a database that happens to be named like the output
out=$("$lathe" compile "$W" --db lib.a --target "$T" -o lib.a 2>&1) && fail "compile over its --db: $out"
grep -q -- "-o lib.a is the database" <<<"$out" || fail "compile over its --db: $out"
"$lathe" db check --db lib.a > /dev/null || fail "lib.a was overwritten"
refuses header_over_output "--header k.a is also -o" \
  "$lathe" compile "$W" -o k.a --header k.a
refuses manifest_over_header "--manifest k.h is also --header" \
  "$lathe" compile "$W" --db x.db --target "$T" -o k.a --header k.h --manifest k.h
[ ! -e k.a ] || fail "a refused compile wrote k.a"
printf 'secret\n' > token
chmod 600 token
refuses serve_port_file "--port-file x.db is the database" \
  "$lathe" serve --listen 127.0.0.1:0 --db x.db --token-file token --port-file x.db

# A compile that cannot write one of its outputs writes none, and keeps
# what was there.
echo old > keep.a
out=$("$lathe" compile "$W" -o keep.a --header no-such-folder/k.h 2>&1) && fail "unwritable header: $out"
grep -q 'cannot write no-such-folder/k.h' <<<"$out" || fail "unwritable header: $out"
[ "$(cat keep.a)" = old ] || fail "a failed compile replaced keep.a"
compgen -G '*partial*' > /dev/null && fail "a failed compile left $(ls -d -- *partial*)"

# Distinct outputs still work.
"$lathe" db export --db x.db -o out.jsonl > /dev/null
"$lathe" compile "$W" --db x.db --target "$T" -o k.a --header k.h --manifest k.json > /dev/null
"$lathe" db check --db x.db > /dev/null
echo "ok"
