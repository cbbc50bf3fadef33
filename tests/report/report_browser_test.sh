#!/usr/bin/env bash
# The tuning report in a real browser: a short `lathe tune` of a tiny matmul
# writes its report; `lathe report` writes it again; headless Chromium
# (Debian's `chromium`) loads it. The page must load without errors (its
# script sets body[data-report="rendered"] only when every chart holds the
# points it says and was laid out; no console message), the charts must
# hold as many points as the database has trials and judged batches (read
# with sqlite3, not with Lathe), and a crafted job id must not inject
# markup. A screenshot goes to OUT_DIR/report_screenshot.png.
# Without chromium: a failure under CI (CI=true), a skip (77) elsewhere.
# Usage: report_browser_test.sh LATHE_BIN OUT_DIR
set -euo pipefail
lathe=$1
out_dir=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
fail() { echo "FAIL: $*" >&2; exit 1; }

browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" > /dev/null 2>&1; then browser=$candidate; break; fi
done
if [ -z "$browser" ]; then
  if [ "${CI:-}" = true ]; then
    fail "chromium is not installed (scripts/install-deps.sh installs it)"
  fi
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi
command -v sqlite3 > /dev/null || fail "sqlite3 is not installed"

# A crafted job id: markup that would mark the page if it ran.
job='x"><script>document.documentElement.setAttribute("data-pwned","1")</script><b x="'
W=matmul:M=32,N=48,K=16
"$lathe" tune "$W" --threads 1 --min-time 0.005 --batch 4 --seed 3 --population 16 \
  --generations 1 --trials 12 --db tuned.db --job "$job" > tune.txt 2> /dev/null
grep -q "^report: tuned.report.html$" tune.txt || fail "tune printed no report path: $(cat tune.txt)"
[ -s tuned.report.html ] || fail "tune wrote no report"
"$lathe" report --db tuned.db -o report.html > report.txt
[ "$(cat report.txt)" = "report: report.html" ] || fail "report printed: $(cat report.txt)"

# What the database holds, by sqlite3.
q() { sqlite3 tuned.db "$1"; }
trials=$(q "SELECT COUNT(*) FROM records WHERE runner NOT LIKE '%(default schedule)' AND runner NOT LIKE '%(re-measure)'")
judged=$(q "SELECT COUNT(*) FROM batches WHERE accuracy IS NOT NULL")
batches=$(q "SELECT COUNT(*) FROM batches")
batch_trials=$(q "SELECT SUM(trials) FROM batches")
[ "$trials" = 12 ] || fail "$trials trials in the database"
[ "$batches" = 3 ] && [ "$batch_trials" = 12 ] || fail "batches: $batches holding $batch_trials trials"
# The model trains on the default schedule's record before the first
# batch, so each batch may be judged; at least the later ones are.
[ "$judged" -ge 2 ] && [ "$judged" -le 3 ] || fail "$judged judged batches"

# One browser run per file; stderr kept for console messages.
load() {
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$d/profile" --enable-logging=stderr --v=0 \
    --virtual-time-budget=2000 "$@"
}
for page in tuned.report.html report.html; do
  load --dump-dom "file://$d/$page" > "$page.dom" 2> "$page.log" ||
    fail "chromium failed on $page: $(tail -5 "$page.log")"
  grep -q 'data-report="rendered"' "$page.dom" ||
    fail "$page did not render: $(grep -o 'data-report="[^"]*"' "$page.dom" || echo 'no marker')"
  if grep -q 'CONSOLE' "$page.log"; then fail "$page: console: $(grep CONSOLE "$page.log")"; fi
  if grep -q 'data-pwned="1"' "$page.dom"; then fail "$page: the job id injected markup"; fi
  grep -q 'data-charts="3"' "$page.dom" || fail "$page: not 3 charts"
  # Each chart: the points it says, and the points the browser found.
  for chart in trials time; do
    grep -q "id=\"task-0-$chart\" data-points=\"$trials\"" "$page.dom" ||
      fail "$page: task-0-$chart does not say $trials points"
  done
  [ "$(grep -o "data-drawn=\"$trials\"" "$page.dom" | wc -l)" = 2 ] ||
    fail "$page: the browser did not find $trials points in both speed charts"
  grep -q "id=\"task-0-accuracy\" data-points=\"$judged\"" "$page.dom" ||
    fail "$page: the accuracy chart does not say $judged points"
  grep -q "data-drawn=\"$judged\"" "$page.dom" || fail "$page: accuracy points drawn"
done

mkdir -p "$out_dir"
shot="$out_dir/report_screenshot.png"
rm -f "$shot"
load --hide-scrollbars --window-size=1280,1500 --screenshot="$shot" \
  "file://$d/report.html" > /dev/null 2> shot.log || fail "screenshot: $(tail -5 shot.log)"
[ -s "$shot" ] || fail "no screenshot"
echo "screenshot: $shot"

# Errors: one line, non-zero.
if "$lathe" report --db absent.db > out.txt 2> err.txt; then fail "absent db succeeded"; fi
[ "$(wc -l < err.txt)" = 1 ] && grep -q 'absent.db' err.txt || fail "absent db: $(cat err.txt)"
if "$lathe" report --db tuned.db --job nosuch > out.txt 2> err.txt; then fail "unknown job succeeded"; fi
[ "$(wc -l < err.txt)" = 1 ] && grep -q 'no job nosuch' err.txt || fail "unknown job: $(cat err.txt)"
echo PASS
