#!/usr/bin/env bash
# The tuning service end to end on loopback: real `lathe serve`,
# `lathe runner` and client processes. Usage:
#   service_integration_test.sh LATHE_BIN CASE
# Cases: three_runners kill_runner kill_daemon stop_daemon auth refusals target_mismatch tls
#   oversized_workload
# (tls exits 77, skipped, without openssl).
# Every wait polls observable state (a file, the daemon's answer, the
# database) against a deadline; nothing sleeps and hopes.
set -euo pipefail
lathe=$1
case_name=$2
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
  for f in serve*.log runner*.log; do
    [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }
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
# One thread per runner, a fixed target every process agrees on.
T="host -num-threads=1"
W=matmul:M=64,N=64,K=64

daemon_listening() {
  kill -0 "$daemon" 2>/dev/null || fail "the daemon exited: $(cat "$log")"
  test -s port
}

# start_daemon LOG [ADDRESS] [EXTRA...]: starts `lathe serve`; sets $port and $daemon.
start_daemon() {
  log=$1
  local address=${2:-127.0.0.1:0}
  shift 2 || shift $#
  rm -f port
  "$lathe" serve --listen "$address" --db t.db --token-file token --port-file port \
    --lease-seconds 2 "$@" 2> "$log" &
  daemon=$!
  pids+=("$daemon")
  wait_for 30 "the daemon to listen" daemon_listening
  port=$(cat port)
}

# start_runner NAME [EXTRA...]
start_runner() {
  local name=$1
  shift
  "$lathe" runner --connect "127.0.0.1:$port" --token-file token --target "$T" --name "$name" \
    "$@" 2> "runner-$name.log" &
  pids+=($!)
  eval "runner_$name=$!"
}

client() { "$lathe" "$1" --tuner "127.0.0.1:$port" --token-file token "${@:2}"; }

# The job's state and "done/total" trials from `lathe jobs`.
job_row() { client jobs | awk -v j="$1" '$1 == j {print $2, $3}'; }
job_has_trials() { local t; t=$(job_row "$1" | cut -d' ' -f2); [ "${t%%/*}" -ge "$2" ] 2>/dev/null; }
# (Output is captured before it is searched: `lathe ... | grep -q` fails
# under pipefail when grep exits first and lathe gets EPIPE.)
work_queued() {
  local out
  out=$(client jobs --json) || return 1
  [ "$(grep -o '"work_queued":[0-9]*' <<<"$out" | sed -n '1s/.*://p')" -ge 1 ] 2>/dev/null
}
runner_state() {
  local out
  out=$(client runners) || return 1
  awk -v n="$1" -v s="$2" '$5 == n && $2 == s {found = 1} END {exit !found}' <<<"$out"
}
runner_busy() { runner_state "$1" busy; }
runners_registered() { [ "$(client runners --json | grep -o '"id":' | wc -l)" -ge "$1" ]; }

# The job's records in the database: "HASH RUNNER" lines.
job_records() {
  "$lathe" db export --db t.db -o - | grep "^{\"workload_key\".*\"job\":\"$1\"" |
    sed -E 's/.*"structural_hash":"([0-9a-f]*)".*"runner":"([^"]*)".*/\1 \2/'
}
committed_at_least() { [ "$(job_records "$1" | wc -l)" -ge "$2" ]; }

# Every trial recorded exactly once: as many trial records (not the
# deliberate re-measurements of near-ties) as trials, all distinct programs.
check_exactly_once() {
  local job=$1 trials=$2
  job_records "$job" > records.txt
  grep -v '(re-measure)' records.txt | cut -d' ' -f1 > trials.txt || true
  [ "$(wc -l < trials.txt)" = "$trials" ] || fail "$(wc -l < trials.txt) trial records, want $trials"
  [ "$(sort -u trials.txt | wc -l)" = "$trials" ] || fail "a program was recorded twice: $(sort trials.txt | uniq -d)"
  ! grep -q '(simulated)' records.txt || fail "simulated results in the database"
}

submit() { client submit "$W" --target "$T" --min-time 0.01 --batch 4 --seed 5 "$@"; }

case $case_name in
three_runners)
  start_daemon serve.log
  for r in a b c; do start_runner $r; done
  wait_for 30 "three runners" runners_registered 3
  submit --trials 12 --wait > out.txt 2> progress.txt || fail "submit --wait: $(cat out.txt progress.txt)"
  grep -q ' done 12/12 trials' out.txt || fail "summary: $(cat out.txt)"
  grep -q 'running' progress.txt || fail "no live progress: $(cat progress.txt)"
  ! grep -q 'warning' progress.txt || fail "a warning with matching runners: $(cat progress.txt)"
  job=$(cut -d' ' -f1 out.txt)
  check_exactly_once "$job" 12
  # All three took part, and say so in the records' provenance.
  for r in a b c; do grep -q " $r" records.txt || fail "runner $r measured nothing"; done
  client runners > runners.txt
  [ "$(grep -c ' idle ' runners.txt)" = 3 ] || fail "runners: $(cat runners.txt)"
  client jobs > jobs.txt
  grep "$job" jobs.txt | grep ' done ' > /dev/null || fail "jobs: $(cat jobs.txt)"
  # watch on a finished job: its final state, exit 0.
  client watch "$job" > finished.txt || fail "watch of a finished job: $(cat finished.txt)"
  grep -q ' done ' <<<"$(tail -1 finished.txt)" || fail "watch of a finished job: $(cat finished.txt)"
  ;;

kill_runner)
  start_daemon serve.log
  for r in a b c; do start_runner $r; done
  wait_for 30 "three runners" runners_registered 3
  job=$(submit --trials 24)
  wait_for 60 "trials to start" job_has_trials "$job" 3
  # Killed while it holds a lease (measuring): the lease expires and the
  # candidate goes to another runner. Frozen first, so that what `lathe
  # runners` shows (a lease held) is still true at the kill.
  deadline=$((SECONDS + 60))
  until kill -STOP "$runner_b" && runner_busy b; do
    kill -CONT "$runner_b"
    [ $SECONDS -lt $deadline ] || fail "runner b never held a lease"
    sleep 0.05
  done
  kill -9 "$runner_b"
  client watch "$job" > watch.txt || fail "watch: $(tail -3 watch.txt)"
  grep -q ' done 24/24 trials' <<<"$(tail -1 watch.txt)" || fail "job: $(tail -1 watch.txt)"
  # The daemon wrote the job's report beside its database, and watch says where.
  grep -q "| report: t.$job.report.html (on the tuner's machine)\$" <<<"$(tail -1 watch.txt)" ||
    fail "no report path: $(tail -1 watch.txt)"
  [ -s "t.$job.report.html" ] || fail "no report t.$job.report.html"
  check_exactly_once "$job" 24
  wait_for 30 "the daemon to log the expired lease" \
    grep -q 'expired (no heartbeat); its candidate is queued again' serve.log
  client runners > runners.txt
  grep -q '^leases expired: [1-9]' runners.txt || fail "runners: $(cat runners.txt)"
  # Listed as lost once silent for two lease times.
  wait_for 30 "runner b to be listed as lost" runner_state b lost
  ;;

kill_daemon)
  start_daemon serve-1.log
  first_port=$port
  for r in a b c; do start_runner $r; done
  wait_for 30 "three runners" runners_registered 3
  job=$(submit --trials 20)
  # At least one batch committed, then the daemon dies mid-job.
  wait_for 90 "a committed batch" committed_at_least "$job" 4
  kill -9 "$daemon"
  wait "$daemon" 2>/dev/null || true
  job_records "$job" | cut -d' ' -f1 | sort > before.txt
  [ -s before.txt ] || fail "nothing committed before the kill"
  # Restarted on the same port: the runners find it again by themselves.
  start_daemon serve-2.log "127.0.0.1:$first_port"
  grep -q "resuming job $job" serve-2.log || fail "not resumed: $(cat serve-2.log)"
  client watch "$job" > watch.txt || fail "watch after restart: $(tail -3 watch.txt)"
  grep -q ' done 20/20 trials' <<<"$(tail -1 watch.txt)" || fail "job: $(tail -1 watch.txt)"
  check_exactly_once "$job" 20
  # Nothing committed before the kill was lost.
  job_records "$job" | cut -d' ' -f1 | sort > after.txt
  missing=$(comm -23 before.txt after.txt)
  [ -z "$missing" ] || fail "lost after restart: $missing"
  ;;

stop_daemon)
  start_daemon serve-1.log
  first_port=$port
  # One daemon per port, and one per database.
  out=$("$lathe" serve --listen "127.0.0.1:$first_port" --db other.db --token-file token 2>&1) &&
    fail "a second daemon on the same port ran"
  grep -q "cannot listen on 127.0.0.1:$first_port" <<<"$out" || fail "same port: $out"
  [ ! -e other.db ] || fail "the daemon that could not listen left the database it created"
  out=$("$lathe" serve --listen 127.0.0.1:0 --db t.db --token-file token 2>&1) &&
    fail "a second daemon on the same database ran"
  grep -q 'another lathe serve (pid [0-9]*) runs on this database' <<<"$out" || fail "same database: $out"
  for r in a b; do start_runner $r; done
  wait_for 30 "two runners" runners_registered 2
  job=$(submit --trials 20)
  wait_for 90 "a committed batch" committed_at_least "$job" 4
  # Stopped cleanly (SIGTERM): the calls in flight are cancelled, and the
  # runners wait for the tuner to come back rather than exit.
  kill -TERM "$daemon"
  wait "$daemon" 2>/dev/null || true
  start_daemon serve-2.log "127.0.0.1:$first_port"
  grep -q "resuming job $job" serve-2.log || fail "not resumed: $(cat serve-2.log)"
  client watch "$job" > watch.txt || fail "watch after restart: $(tail -3 watch.txt)"
  grep -q ' done 20/20 trials' <<<"$(tail -1 watch.txt)" || fail "job: $(tail -1 watch.txt)"
  check_exactly_once "$job" 20
  for r in a b; do
    kill -0 "$(eval echo "\$runner_$r")" 2>/dev/null || fail "runner $r exited: $(cat "runner-$r.log")"
  done
  ;;

auth)
  start_daemon serve.log
  echo "wrong-token" > wrong
  : > empty
  # A client with a wrong token, with an empty token file, with none.
  out=$("$lathe" jobs --tuner "127.0.0.1:$port" --token-file wrong 2>&1) && fail "wrong token accepted"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "not one line: $out"
  grep -q 'refused the credentials' <<<"$out" || fail "client, wrong token: $out"
  out=$("$lathe" jobs --tuner "127.0.0.1:$port" --token-file empty 2>&1) && fail "empty token accepted"
  grep -q 'holds no token' <<<"$out" || fail "client, empty token: $out"
  out=$(env -u LATHE_TOKEN_FILE "$lathe" jobs --tuner "127.0.0.1:$port" 2>&1) && fail "no token accepted"
  grep -q 'token-file' <<<"$out" || fail "client, no token: $out"
  # A runner with a wrong token gives up at once with one clear line.
  out=$("$lathe" runner --connect "127.0.0.1:$port" --token-file wrong --target "$T" 2>&1) &&
    fail "runner with a wrong token ran"
  grep -q '^lathe: error: .*refused the credentials' <<<"$(tail -1 <<<"$out")" || fail "runner: $out"
  client runners --json > runners.json
  grep -q '"id"' runners.json && fail "a refused runner was registered: $(cat runners.json)"
  # And the right token works.
  client jobs > /dev/null || fail "right token refused"
  # A daemon that is not there: one line, non-zero.
  kill -9 "$daemon"
  wait "$daemon" 2>/dev/null || true
  out=$(client jobs --timeout 5 2>&1) && fail "jobs without a daemon succeeded"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "not one line: $out"
  grep -q "tuner at 127.0.0.1:$port is not reachable" <<<"$out" || fail "unreachable: $out"
  ;;

oversized_workload)
  # A token others may read: served, with a warning.
  chmod 644 token
  start_daemon serve.log 127.0.0.1:0 --max-workload-bytes 1099511627776
  grep -q 'lathe serve: warning: --token-file token is readable by every user (mode 0644)' serve.log ||
    fail "no warning for a world-readable token: $(cat serve.log)"
  grep -q 'warning: --listen' serve.log && fail "a loopback address warned about"
  start_runner a
  wait_for 30 "the runner to register" runners_registered 1
  # 16 GiB of tensors against the runner's 8 GiB worker: refused at submit,
  # naming the limit, before any runner tries (and fails) it.
  out=$(client submit relu:M=2,N=1073741824 --target "$T" --trials 4 2>&1) &&
    fail "a workload beyond the runners' memory accepted"
  grep -q "spec.workloads\[0\]: its tensors take 17179869184 bytes, over the largest worker memory limit of the target's runners (8589934592 bytes)" <<<"$out" ||
    fail "oversized workload: $out"
  client runners | grep -q quarantined && fail "a runner was quarantined: $(client runners)"
  # What fits is measured by the same runner.
  submit --trials 4 --wait > out.txt 2> progress.txt || fail "submit --wait: $(cat out.txt progress.txt)"
  grep -q ' done 4/4 trials' out.txt || fail "summary: $(cat out.txt)"
  ;;
refusals)
  start_daemon serve.log 127.0.0.1:0 --max-message-bytes 65536 --max-trials-per-job 50
  expect_refused() {
    local want=$1
    shift
    out=$(client submit "$@" 2>&1) && fail "accepted: $*"
    [ "$(wc -l <<<"$out")" = 1 ] || fail "not one line: $out"
    grep -q -- "$want" <<<"$out" || fail "want '$want': $out"
    # The daemon keeps serving.
    client jobs > /dev/null || fail "the daemon stopped serving after: $*"
  }
  expect_refused 'spec.workloads\[0\]: .*missing' 'matmul:M=64' --target "$T" --trials 10
  expect_refused 'spec.workloads\[1\]' "$W" 'nosuchop:X=1' --target "$T" --trials 10
  expect_refused 'spec.workloads\[1\]: the same workload as spec.workloads\[0\]' "$W" "$W,dtype=float32" --target "$T" --trials 10
  expect_refused 'spec.max_trials: 51 exceeds the limit of 50' "$W" --target "$T" --trials 51
  expect_refused 'spec.max_trials: must be at least 1' "$W" --target "$T" --trials 0
  # A negative --min-time is refused by the client itself (the daemon's
  # own check of spec.min_time_s: daemon_test's MalformedSpecsNameTheFieldAtFault).
  expect_refused '--min-time: must be a finite number of seconds' "$W" --target "$T" --trials 10 --min-time -1
  # An oversized request (a 100 kB spec over a 64 kB limit).
  expect_refused 'RESOURCE_EXHAUSTED\|larger than\|max' "matmul:M=64,N=64,K=64,x=$(head -c 100000 /dev/zero | tr '\0' 7)" --target "$T" --trials 10
  # Runners: a malformed registration names its field; the daemon goes on.
  out=$("$lathe" runner --connect "127.0.0.1:$port" --token-file token --target 'fpga' 2>&1) &&
    fail "bad target accepted"
  grep -q 'fpga' <<<"$out" || fail "runner target: $out"
  # A port out of range is refused by name, not wrapped modulo 65536.
  out=$("$lathe" serve --listen 127.0.0.1:99999 --db other.db --token-file token 2>&1) &&
    fail "port 99999 accepted"
  grep -q '^lathe: error: .*port "99999" is not in 0-65535' <<<"$out" || fail "serve port: $out"
  out=$("$lathe" serve --listen no-such-host:7770 --db other.db --token-file token 2>&1) &&
    fail "an unknown host accepted"
  [ "$(wc -l <<<"$out")" = 1 ] && grep -q '^lathe: error: cannot listen on no-such-host:7770' <<<"$out" ||
    fail "serve host: $out"
  out=$("$lathe" jobs --tuner 127.0.0.1:99999 --token-file token 2>&1) && fail "client port accepted"
  grep -q 'port "99999" is not in 0-65535' <<<"$out" || fail "client port: $out"
  # No port (gRPC would use 443), a negative one (it would wrap).
  out=$("$lathe" serve --listen 127.0.0.1 --db other.db --token-file token 2>&1) &&
    fail "an address without a port accepted"
  grep -q 'address "127.0.0.1": no port' <<<"$out" || fail "serve without a port: $out"
  out=$("$lathe" runner --connect 127.0.0.1:-5 --token-file token --target "$T" 2>&1) &&
    fail "a runner with port -5 ran"
  grep -q 'port "-5" is not in 0-65535' <<<"$out" || fail "runner port: $out"
  # Leases under a second expire between heartbeats; an unwritable port file
  # must not leave a script waiting for it.
  out=$("$lathe" serve --listen 127.0.0.1:0 --db other.db --token-file token --lease-seconds 1e-9 2>&1) &&
    fail "a lease of 1e-9 s accepted"
  grep -q -- '--lease-seconds must be in \[1, 86400\]' <<<"$out" || fail "lease: $out"
  out=$("$lathe" serve --listen 127.0.0.1:0 --db other.db --token-file token --build-ahead -1 2>&1) &&
    fail "--build-ahead -1 accepted"
  grep -q -- '--build-ahead: must be a whole number in \[0, 64\]' <<<"$out" || fail "build-ahead: $out"
  out=$("$lathe" serve --listen 127.0.0.1:0 --db other.db --token-file token \
    --port-file /nonexistent/port 2>&1) && fail "an unwritable port file accepted"
  grep -q -- '--port-file /nonexistent/port: cannot write' <<<"$(tail -1 <<<"$out")" || fail "port file: $out"
  out=$(client watch job-none 2>&1) && fail "watch of an unknown job succeeded"
  grep -q 'no job "job-none"' <<<"$out" || fail "watch unknown: $out"
  out=$(client cancel job-none 2>&1) && fail "cancel of an unknown job succeeded"
  client jobs > /dev/null || fail "the daemon stopped serving"
  kill -0 "$daemon" || fail "the daemon died"
  ;;

target_mismatch)
  start_daemon serve.log
  # This runner measures another target: it must get none of the job's work.
  T_OTHER="host -num-threads=2"
  "$lathe" runner --connect "127.0.0.1:$port" --token-file token --target "$T_OTHER" --name other \
    2> runner-other.log &
  pids+=($!)
  wait_for 30 "the other runner" runners_registered 1
  job=$(submit --trials 4 --remeasure-top -1 2> submit.err)
  grep -q 'warning: no runner of target .* is connected' submit.err ||
    fail "no warning of a job no runner can take: $(cat submit.err)"
  wait_for 30 "queued work" work_queued
  start_runner good
  client watch "$job" > watch.txt || fail "watch: $(tail -3 watch.txt)"
  check_exactly_once "$job" 4
  grep -q ' other' records.txt && fail "the other-target runner measured: $(cat records.txt)"
  client runners --json | tr -d '\n ' | grep -o '{"id"[^}]*"name":"other"[^}]*}' > other.json
  grep -q '"results":"0"' other.json || fail "other runner: $(cat other.json)"
  ;;

tls)
  command -v openssl > /dev/null || exit 77
  # A CA, a certificate for 127.0.0.1 and a client certificate.
  gen() { openssl "$@" > /dev/null 2>&1 || fail "openssl $*"; }
  gen req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=lathe-test-ca
  gen req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > san.ext
  gen x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
    -extfile san.ext
  gen req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=client
  gen x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2
  start_daemon serve.log 127.0.0.1:0 --tls-cert server.pem --tls-key server.key --tls-client-ca ca.pem
  mtls=(--tls-ca ca.pem --tls-cert client.pem --tls-key client.key)
  # Mutual TLS and the token: served.
  client jobs "${mtls[@]}" > /dev/null || fail "mutual TLS client refused"
  # Plaintext, or TLS without a client certificate: refused.
  out=$(client jobs --timeout 5 2>&1) && fail "plaintext client served"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "not one line: $out"
  client jobs --tls-ca ca.pem --timeout 5 > /dev/null 2>&1 && fail "client without a certificate served"
  # The right certificate but a wrong token: refused too.
  echo wrong > wrong
  out=$("$lathe" jobs --tuner "127.0.0.1:$port" --token-file wrong "${mtls[@]}" 2>&1) &&
    fail "wrong token over mutual TLS served"
  grep -q 'refused the credentials' <<<"$out" || fail "wrong token over mutual TLS: $out"
  # A runner over mutual TLS measures a job.
  start_runner a "${mtls[@]}"
  submit --trials 2 --remeasure-top -1 --wait "${mtls[@]}" > out.txt 2> /dev/null ||
    fail "job over TLS: $(cat out.txt)"
  grep -q ' done 2/2 trials' out.txt || fail "job over TLS: $(cat out.txt)"
  # A file that is not the PEM an option wants is refused naming the file
  # (gRPC only said "cannot listen" or "empty address list").
  out=$("$lathe" serve --listen 127.0.0.1:0 --db other.db --token-file token --tls-cert token \
    --tls-key server.key 2>&1) && fail "a token as a certificate accepted"
  grep -q 'TLS certificate token: no PEM CERTIFICATE in it' <<<"$out" || fail "cert: $out"
  out=$("$lathe" serve --listen 127.0.0.1:0 --db other.db --token-file token --tls-cert server.pem \
    --tls-key server.pem 2>&1) && fail "a certificate as a key accepted"
  grep -q 'TLS key server.pem: no PEM PRIVATE KEY in it' <<<"$out" || fail "key: $out"
  # A certificate and a key that are each well formed but not a pair: gRPC
  # only fails to start; the daemon names the two files in one line.
  out=$("$lathe" serve --listen 127.0.0.1:0 --db other.db --token-file token --tls-cert server.pem \
    --tls-key client.key 2>&1) && fail "a certificate with another's key accepted"
  grep -q '^lathe: error: cannot listen on 127.0.0.1:0 with TLS: the certificate server.pem and the key client.key are not a pair' <<<"$out" ||
    fail "mismatched pair: $out"
  # A daemon that never listened leaves no database it created.
  [ ! -e other.db ] && [ ! -e other.db.lock ] || fail "a database was left: $(ls other.db*)"
  out=$(client jobs --tls-ca token 2>&1) && fail "a token as a CA accepted"
  grep -q 'TLS CA token: no PEM CERTIFICATE in it' <<<"$out" || fail "ca: $out"
  ;;

*)
  fail "unknown case $case_name"
  ;;
esac
echo PASS
