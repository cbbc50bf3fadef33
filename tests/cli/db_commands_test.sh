#!/usr/bin/env bash
# `lathe db ...` end to end: records made by `lathe bench
# --db`, looked up, exported, imported, merged, pruned and checked, plus the
# refusals. Usage: db_commands_test.sh LATHE_BIN CASE
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
case_name=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

W=matmul:M=32,N=48,K=16
T="host -num-threads=1"
bench() { "$lathe" bench "$W" --target "$T" --min-time 0.01 --repeats 3 --db lathe.db "$@" > /dev/null; }

case $case_name in
lookups)
  bench --job first
  # Measure the best's trace again: the same program, a new record.
  "$lathe" db best "$W" --target "$T" --trace-out best.json > best.txt
  grep -q '^replay    ok' best.txt || fail "best does not replay: $(cat best.txt)"
  grep -q 'job first' best.txt || fail "no provenance: $(cat best.txt)"
  bench --trace best.json --job second
  # The same program measured again: its latest measurement is what counts,
  # and top lists each program once.
  "$lathe" db top "$W" --target "$T" --json > top.json
  [ "$(grep -c '"id":' top.json)" -eq 1 ] || fail "top does not list the program once: $(cat top.json)"
  grep -q '"job": "second"' top.json || fail "top is not the latest measurement: $(cat top.json)"
  grep -q '"replays": true' top.json || fail "top: $(cat top.json)"
  "$lathe" db list --json > list.json
  grep -q '"records": 2, "ok_records": 2' list.json || fail "list: $(cat list.json)"
  "$lathe" db stats --json > stats.json
  grep -q '"records": 2,' stats.json || fail "stats: $(cat stats.json)"
  grep -q '"jobs": 2,' stats.json || fail "stats jobs: $(cat stats.json)"
  # Exact target matching by default; --compatible reports the difference.
  expect_error 'no measured record of .* (try --compatible)' \
    "$lathe" db best "$W" --target "host -num-threads=2"
  "$lathe" db best "$W" --target "host -num-threads=2" --compatible > compat.txt
  grep -q 'match     compatible: .*measured with 1 threads, asked for 2' compat.txt \
    || fail "compatible: $(cat compat.txt)"
  # A record whose hash this build does not replay to is flagged.
  "$lathe" db export -o all.jsonl
  sed -E 's/"structural_hash":"[0-9a-f]+"/"structural_hash":"00000000deadbeef"/' all.jsonl > stale.jsonl
  "$lathe" db import --db stale.db stale.jsonl > /dev/null
  "$lathe" db best "$W" --target "$T" --db stale.db > stale.txt
  grep -q '^replay    MISMATCH: this Lathe replays its trace to program [0-9a-f]*, it was measured as 00000000deadbeef' stale.txt \
    || fail "stale record not flagged: $(cat stale.txt)"
  "$lathe" db best "$W" --target "$T" --db stale.db --json > stale.json
  grep -q '"replays": false' stale.json || fail "json replays: $(cat stale.json)"
  "$lathe" db check > check.txt || fail "check: $(cat check.txt)"
  # A trace recorded on another workload that replays on this one: a
  # warning, and the record names the workload it measured.
  "$lathe" bench matmul:M=32,N=48,K=32 --target "$T" --min-time 0.01 --repeats 3 \
    --trace best.json --db other.db > /dev/null 2> warn.txt
  grep -q '^lathe: warning: trace best.json was recorded on matmul:K=16,M=32,N=48,dtype=float32, not matmul:K=32,M=32,N=48,dtype=float32$' \
    warn.txt || fail "no warning: $(cat warn.txt)"
  "$lathe" db export --db other.db -o other.jsonl
  [ "$(grep -o '"workload":"[^"]*"' other.jsonl | sort -u)" = '"workload":"matmul:K=32,M=32,N=48,dtype=float32"' ] ||
    fail "the stored trace names another workload: $(grep -o '"workload":"[^"]*"' other.jsonl | sort -u)"
  ;;
transfer)
  bench --job shard-a
  cp lathe.db a.db
  rm lathe.db
  bench --job shard-b
  mv lathe.db b.db
  "$lathe" db export --db a.db -o a.jsonl
  [ "$(sed -n 1p a.jsonl)" = '{"format":"lathe-records","version":2}' ] || fail "header"
  "$lathe" db import --db c.db a.jsonl > import.txt
  grep -q '1 records added, 0 exact duplicates' import.txt || fail "import: $(cat import.txt)"
  "$lathe" db import --db c.db a.jsonl > reimport.txt
  grep -q '0 records added, 1 exact duplicates' reimport.txt || fail "reimport: $(cat reimport.txt)"
  # Export of the import is the same records.
  "$lathe" db export --db c.db -o c.jsonl
  cmp a.jsonl c.jsonl || fail "export/import round trip differs"
  # Merge of the shards keeps both records and the provenance, drops the copy.
  "$lathe" db merge --db merged.db a.db b.db c.db --json > merge.json
  grep -q '"added": 2, "duplicates": 1' merge.json || fail "merge: $(cat merge.json)"
  grep -q '"db": "merged.db", "sources": \["a.db", "b.db", "c.db"\]' merge.json || fail "merge: $(cat merge.json)"
  # One JSON object for an import of several files.
  "$lathe" db import --db d.db a.jsonl c.jsonl --json > import.json
  [ "$(wc -l < import.json)" = 1 ] || fail "import --json: $(cat import.json)"
  grep -q '"sources": \[{"source": "a.jsonl", "added": 1, "duplicates": 0, "batches": 0, "batch_duplicates": 0}, {"source": "c.jsonl", "added": 0, "duplicates": 1, "batches": 0, "batch_duplicates": 0}\], "added": 1, "duplicates": 1' import.json ||
    fail "import --json: $(cat import.json)"
  "$lathe" db export --db merged.db > merged.jsonl
  [ "$(grep -c '"job":"shard-' merged.jsonl)" = 2 ] || fail "provenance: $(cat merged.jsonl)"
  expect_error 'cannot merge a database into itself' "$lathe" db merge --db merged.db merged.db
  # Prune to the fastest record per task.
  "$lathe" db prune --db merged.db -k 1 > prune.txt
  grep -q 'deleted 1 records' prune.txt || fail "prune: $(cat prune.txt)"
  "$lathe" db stats --db merged.db --json > pruned.json
  grep -q '"records": 1,' pruned.json || fail "after prune: $(cat pruned.json)"
  "$lathe" db check --db merged.db > /dev/null
  # A bad line imports nothing and names file and line.
  { head -2 a.jsonl; echo '{"workload_key": 5'; } > bad.jsonl
  "$lathe" db stats --db c.db --json > before.json
  expect_error 'bad.jsonl:3: not a record' "$lathe" db import --db c.db bad.jsonl
  "$lathe" db stats --db c.db --json | cmp - before.json || fail "a failed import changed the database"
  echo '{"format":"lathe-records","version":9}' > newer.jsonl
  expect_error 'records format version 9; this Lathe reads version 2' "$lathe" db import --db c.db newer.jsonl
  ;;
batches)
  # The batches of tuning runs (the report's cost-model accuracy) travel
  # with the records through export, import and merge, numbered per job in
  # the destination and added once.
  tune() {
    "$lathe" tune "$W" --threads 1 --min-time 0.005 --batch 4 --population 16 \
      --generations 1 --trials 8 --no-default "$@" > /dev/null 2>&1
  }
  tune --seed 3 --job shard-a --db a.db
  tune --seed 4 --job shard-b --db b.db
  "$lathe" db export --db a.db -o a.jsonl > export.txt
  # (8 trials and the near-ties measured again, if the timings made any.)
  grep -q '^exported [0-9]* records and 2 batches to a.jsonl$' export.txt || fail "export: $(cat export.txt)"
  [ "$(grep -c '^{"batch":{"job":"shard-a",' a.jsonl)" = 2 ] || fail "batch lines: $(cat a.jsonl)"
  "$lathe" db import --db c.db a.jsonl --json > import.json
  grep -q '"duplicates": 0, "batches": 2, "batch_duplicates": 0}' import.json ||
    fail "import: $(cat import.json)"
  "$lathe" db import --db c.db a.jsonl > reimport.txt
  grep -q '0 batches added, 2 copies skipped' reimport.txt || fail "reimport: $(cat reimport.txt)"
  "$lathe" report --db c.db -o c.html > /dev/null
  grep -q '2 batches recorded' c.html || fail "the imported database's report has no batches"
  grep -q 'job shard-a, its batch 1)' c.html || fail "no accuracy point in the imported database's report"
  # Merged: each job's batches 0 and 1, in a report of the one task.
  "$lathe" db merge --db m.db a.db b.db --json > merge.json
  grep -q '"duplicates": 0, "batches": 4, "batch_duplicates": 0}' merge.json ||
    fail "merge: $(cat merge.json)"
  "$lathe" db merge --db m.db a.db b.db > remerge.txt
  grep -q '0 batches added, 4 copies skipped' remerge.txt || fail "remerge: $(cat remerge.txt)"
  "$lathe" report --db m.db -o m.html > /dev/null
  grep -q '4 batches recorded' m.html || fail "the merged database's report: $(grep -o '[0-9]* batches recorded' m.html)"
  grep -q 'job shard-a, its batch 1)' m.html || fail "shard-a's judged batch"
  grep -q 'job shard-b, its batch 1)' m.html || fail "shard-b's judged batch"
  # A batch line of a task no record before it names is refused, naming
  # the line, and the import adds nothing.
  { sed -n 1p a.jsonl; grep -m1 '^{"batch":' a.jsonl; } > orphan.jsonl
  expect_error 'orphan.jsonl:2: .*no such workload' "$lathe" db import --db d.db orphan.jsonl
  [ ! -e d.db ] || fail "a refused import left d.db behind"
  ;;
refusals)
  expect_error 'lathe.db: no such database' "$lathe" db stats
  echo "not a database at all, just some text that is long enough to fill a header.............." > text.db
  cp text.db text.orig
  expect_error 'text.db: not a Lathe database' "$lathe" db stats --db text.db
  expect_error 'text.db: not a Lathe database' "$lathe" db import --db text.db /dev/null
  cmp text.db text.orig || fail "a refused file was modified"
  [ ! -e text.db-wal ] && [ ! -e text.db-shm ] || fail "side files created"
  bench
  # Truncated: half of a real database.
  "$lathe" db export -o all.jsonl
  "$lathe" db import --db big.db all.jsonl > /dev/null
  size=$(stat -c %s big.db)
  head -c $((size / 2)) big.db > half.db
  cp half.db half.orig
  expect_error 'half.db: truncated' "$lathe" db stats --db half.db
  expect_error 'half.db: truncated' "$lathe" db import --db half.db all.jsonl
  cmp half.db half.orig || fail "a truncated file was modified"
  # Bad command lines.
  expect_error 'required' "$lathe" db prune
  expect_error 'prune keeps k >= 1 records, not 0' "$lathe" db prune -k 0
  ;;
damaged)
  # Bytes flipped inside a page that lookups, exports and merges never read
  # (the cost models' table): `db check` calls it DAMAGED, and every other
  # command refuses it at open, naming the file, and leaves it as it was.
  bench
  "$lathe" db export -o all.jsonl
  "$lathe" db import --db sound.db all.jsonl > /dev/null
  cp lathe.db damaged.db
  read -r page_size root < <(python3 - <<'PY'
import sqlite3
c = sqlite3.connect('file:damaged.db?mode=ro', uri=True)
print(c.execute('PRAGMA page_size').fetchone()[0],
      c.execute("SELECT rootpage FROM sqlite_master WHERE name='cost_models'").fetchone()[0])
PY
)
  [ -n "$root" ] && [ "$root" -gt 1 ] || fail "no page of the cost models: '$root'"
  # The page's cell count (header bytes 3-4) says 65535.
  printf '\xff\xff' | dd of=damaged.db bs=1 seek=$(((root - 1) * page_size + 3)) conv=notrunc status=none
  rm -f damaged.db-wal damaged.db-shm
  cp damaged.db damaged.orig
  if "$lathe" db check --db damaged.db > check.txt 2>&1; then fail "check passes: $(cat check.txt)"; fi
  grep -q 'damaged.db: DAMAGED' check.txt || fail "check: $(cat check.txt)"
  refused() {
    expect_error 'damaged.db: damaged (.*lathe db check' "$@"
    cmp damaged.db damaged.orig || fail "refused, yet modified: $*"
  }
  refused "$lathe" db best "$W" --target "$T" --db damaged.db
  refused "$lathe" db top "$W" --target "$T" --db damaged.db
  refused "$lathe" db list --db damaged.db
  refused "$lathe" db stats --db damaged.db
  refused "$lathe" db export --db damaged.db -o out.jsonl
  refused "$lathe" db import --db damaged.db all.jsonl
  refused "$lathe" db prune -k 1 --db damaged.db
  refused "$lathe" db merge --db damaged.db sound.db
  refused "$lathe" db merge --db sound.db damaged.db
  refused "$lathe" compile "$W" --target "$T" --db damaged.db -o k.o
  refused "$lathe" bench "$W" --target "$T" --min-time 0.01 --repeats 3 --db damaged.db
  refused "$lathe" tune "$W" --target "$T" --trials 2 --db damaged.db
  echo token > token && chmod 600 token
  refused timeout 60 "$lathe" serve --db damaged.db --listen 127.0.0.1:0 --token-file token
  ;;
import_checks)
  # Records the database cannot judge alone are refused at import, naming
  # the line and the field (cli/record_check.h); a refused import into a
  # new file leaves no file behind.
  bench
  "$lathe" db export -o all.jsonl
  head -1 all.jsonl > header.jsonl
  sed -n 2p all.jsonl > one.jsonl
  # refused NAME SED_EXPRESSION EXPECTED_MESSAGE_PART
  refused() {
    { cat header.jsonl; sed -E "$2" one.jsonl; } > "$1.jsonl"
    grep -q . "$1.jsonl" && ! cmp -s "$1.jsonl" <(cat header.jsonl one.jsonl) ||
      fail "$1: the edit changed nothing"
    expect_error "$1.jsonl:2: .*$3" "$lathe" db import --db "new-$1.db" "$1.jsonl"
    [ ! -e "new-$1.db" ] || fail "$1: a refused import left new-$1.db behind"
  }
  refused key 's/"workload_key":"[0-9a-f]*"/"workload_key":"0000000000000000"/' \
    'workload_key 0000000000000000 is not the key of'
  refused target 's/"canonical":"[^"]*"/"canonical":"garbage target"/' 'target.canonical: .*unknown kind'
  refused kind 's/"kind":"get_loops"/"kind":"zzz"/' 'unknown kind "zzz"'
  refused hash 's/"structural_hash":"[0-9a-f]*"/"structural_hash":"zz"/' 'structural_hash "zz" is not 16 hex digits'
  refused spread 's/"spread":[0-9.e-]*/"spread":-3/' 'spread = -3'
  # The file as exported still imports.
  "$lathe" db import --db fine.db all.jsonl > /dev/null
  "$lathe" db check --db fine.db > /dev/null
  # Stored text is shown with its control characters escaped: a runner named
  # with a terminal escape cannot clear the screen of whoever looks it up.
  { cat header.jsonl; sed -E 's/"runner":"[^"]*"/"runner":"evil\\u001b[2J"/' one.jsonl; } > evil.jsonl
  grep -q 'evil' evil.jsonl || fail "the edit changed nothing"
  "$lathe" db import --db evil.db evil.jsonl > /dev/null
  "$lathe" db best "$W" --target "$T" --db evil.db > evil.txt
  grep -q 'runner evil\\x1b\[2J' evil.txt || fail "runner not escaped: $(cat -v evil.txt)"
  ! grep -q "$(printf '\033')" evil.txt || fail "a raw escape was printed: $(cat -v evil.txt)"
  ;;
read_only_folder)
  # A database in a folder this user cannot write: SQLite cannot create the
  # -shm a WAL reader needs, and lookups still work (read as it is).
  bench
  mkdir ro
  cp lathe.db ro/r.db
  chmod 755 . ro
  chmod 644 ro/r.db
  if [ "$(id -u)" = 0 ]; then
    command -v setpriv > /dev/null || { echo "skipped: no setpriv to drop root"; exit 77; }
    as_reader() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  else
    chmod 555 ro
    as_reader() { "$@"; }
  fi
  cp ro/r.db before.db
  as_reader "$lathe" db best "$W" --target "$T" --db ro/r.db > best.txt \
    || fail "best in a read-only folder: $(cat best.txt)"
  grep -q '^replay    ok' best.txt || fail "best: $(cat best.txt)"
  as_reader "$lathe" db check --db ro/r.db > /dev/null || fail "check in a read-only folder"
  mkdir out
  chmod 777 out
  as_reader "$lathe" compile "$W" --target "$T" --db ro/r.db -o out/k.o > /dev/null \
    || fail "compile --db in a read-only folder"
  cmp ro/r.db before.db || fail "the database changed"
  [ ! -e ro/r.db-wal ] && [ ! -e ro/r.db-shm ] || fail "side files created"
  chmod 755 ro
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok
