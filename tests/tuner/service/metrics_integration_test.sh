#!/usr/bin/env bash
# `lathe serve --metrics-listen` end to end on loopback: a real daemon, a
# simulated runner (`lathe runner --simulate-ms`: fast) and a small
# simulated job; Prometheus's scrape played by metrics_scrape.py (urllib),
# which also checks the page's format and that docs/service.md lists every
# metric. Usage:
#   metrics_integration_test.sh LATHE_BIN PYTHON DOCS_SERVICE_MD
# Every wait polls observable state against a deadline.
set -euo pipefail
lathe=$1
python=$2
docs=$3
scrape="$python $(cd "$(dirname "$0")" && pwd)/metrics_scrape.py"
d=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$d"
}
trap cleanup EXIT
cd "$d"

fail() {
  echo "FAIL: $*" >&2
  for f in serve.log runner.log page.txt; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -30 "$f" >&2; }
  done
  exit 1
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 50 ms.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out after ${seconds}s waiting for $what"
    sleep 0.05
  done
}

echo "s3cret-$RANDOM$RANDOM" > token
chmod 600 token
T="host -num-threads=1"

# The flag on deploy command lines (--check-args), and a bad address refused
# before anything runs.
"$lathe" --check-args serve --db t.db --token-file token --metrics-listen 0.0.0.0:9100 ||
  fail "--check-args refuses --metrics-listen 0.0.0.0:9100"
if out=$("$lathe" serve --db t.db --token-file token --metrics-listen 9100 2>&1); then
  fail "--metrics-listen 9100 accepted"
fi
grep -q 'no port' <<<"$out" || fail "bad address: $out"
[ ! -e t.db ] || fail "a refused --metrics-listen left a database"

"$lathe" serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --db t.db --token-file token \
  --port-file port --lease-seconds 2 2> serve.log &
daemon=$!
pids+=("$daemon")
daemon_listening() {
  kill -0 "$daemon" 2>/dev/null || fail "the daemon exited: $(cat serve.log)"
  test -s port && grep -q 'metrics on http://127.0.0.1:[0-9]*/metrics (plain HTTP)' serve.log
}
wait_for 30 "the daemon to listen" daemon_listening
port=$(cat port)
url=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' serve.log)

# SERIES: its value on the last page scraped.
value() { awk -v s="$1" '$1 == s {print $2}' page.txt; }
scrape_page() { $scrape page "$url" "$docs" > page.txt || fail "scrape of $url"; }

# A metrics address already taken: refused, and no database left behind.
taken=${url#http://}
taken=${taken%/metrics}
if out=$("$lathe" serve --listen 127.0.0.1:0 --metrics-listen "$taken" --db other.db \
  --token-file token 2>&1); then
  fail "a second daemon on the same metrics address ran"
fi
grep -q "metrics-listen: address \"$taken\": cannot listen" <<<"$out" || fail "taken: $out"
[ ! -e other.db ] || fail "the daemon that could not serve metrics left its database"

# Before any runner or job: every state there, at 0.
scrape_page
for s in queued running done failed cancelled; do
  [ "$(value "lathe_jobs{state=\"$s\"}")" = 0 ] || fail "jobs $s before any job"
done
for s in idle busy lost quarantined; do
  [ "$(value "lathe_runners{state=\"$s\"}")" = 0 ] || fail "runners $s before any runner"
done
[ "$(value lathe_trials_measured_total)" = 0 ] || fail "trials before any job"
# Only GET (and HEAD) of /metrics.
[ "$($scrape status GET "${url%/metrics}/other")" = 404 ] || fail "GET /other is not 404"
[ "$($scrape status POST "$url")" = 405 ] || fail "POST /metrics is not 405"

"$lathe" runner --connect "127.0.0.1:$port" --token-file token --target "$T" --name a \
  --simulate-ms 1 2> runner.log &
pids+=($!)
runner_counted() {
  scrape_page
  [ "$(value 'lathe_runners{state="idle"}')" = 1 ] || [ "$(value 'lathe_runners{state="busy"}')" = 1 ]
}
wait_for 30 "the runner in lathe_runners" runner_counted

"$lathe" submit matmul:M=64,N=64,K=64 --tuner "127.0.0.1:$port" --token-file token --target "$T" \
  --simulated --trials 8 --batch 4 --min-time 0.01 --wait > out.txt 2> progress.txt ||
  fail "submit --wait: $(cat out.txt progress.txt)"
grep -q ' done 8/8 trials' out.txt || fail "summary: $(cat out.txt)"

scrape_page
[ "$(value lathe_trials_measured_total)" = 8 ] || fail "trials measured, want 8"
[ "$(value 'lathe_jobs{state="done"}')" = 1 ] || fail "jobs done, want 1"
[ "$(value 'lathe_jobs{state="running"}')" = 0 ] || fail "jobs running, want 0"
[ "$(value lathe_work_queued)" = 0 ] || fail "work queued after the job"
[ "$(value lathe_leases_granted_total)" -ge 8 ] || fail "leases granted, want at least 8"
[ "$(value lathe_commit_seconds_count)" -ge 2 ] || fail "commits, want at least 2 (one a batch)"
idle=$(value 'lathe_runners{state="idle"}')
busy=$(value 'lathe_runners{state="busy"}')
[ $((idle + busy)) = 1 ] || fail "runners idle+busy = $idle+$busy, want 1"

# SIGTERM: the daemon stops, metrics endpoint and all.
kill -TERM "$daemon"
stopped() { ! kill -0 "$daemon" 2>/dev/null; }
wait_for 30 "the daemon to stop" stopped
rc=0
wait "$daemon" || rc=$?
[ "$rc" = 0 ] || fail "the daemon exited $rc on SIGTERM"
$scrape refused "$url" || fail "the metrics endpoint outlived the daemon"
echo PASS
