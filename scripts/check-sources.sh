#!/usr/bin/env bash
# Checks the sources before a build (.ci/run runs it; run it before a commit):
#
#  1. Every `Tests:` line of a tracked source names files that exist. The line
#     may go on over the next comment lines until its sentence ends ("."); it
#     names paths from the repository root (tests/cli/db_commands_test.sh,
#     a folder such as tests/database/, or dir/{a,b}_test.cc), and a bare file
#     name (reference_test.cc) is taken in the folder of the last tests/ path
#     before it.
#  2. clang-format-14 (the repository's .clang-format) reports no change in
#     the C++ files changed against a base: by default `git merge-base HEAD
#     origin/main` when there is an origin/main, else HEAD~1; with --all,
#     every tracked C++ file (CI: the tree is formatted, and the whole check
#     takes about 15 s on 2 cores).
#
#   bash scripts/check-sources.sh [--all | --base REV]
#
# Prints FILE:LINE: what is wrong for each problem and exits 1 when there is
# one; exits 2 on bad usage or when clang-format-14 is missing
# (scripts/install-deps.sh installs it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

mode=changed
base=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --all) mode=all ;;
    --base)
      [[ $# -ge 2 ]] || { echo "check-sources: --base needs a revision" >&2; exit 2; }
      base="$2"
      shift
      ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-sources: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

status=0

# 1. `Tests:` lines.
if ! git ls-files -z | perl -0 -e '
  use strict;
  use warnings;
  my $bad = 0;
  while (my $file = <STDIN>) {
    chomp $file;
    next if $file =~ /\.(md|json|jsonl|txt|db)$/ && $file !~ /CMakeLists\.txt$/;
    next unless -f $file;
    open(my $fh, "<", $file) or next;
    my @lines = do { local $/ = "\n"; <$fh> };
    close $fh;
    next if grep { /\0/ } @lines;
    for (my $i = 0; $i <= $#lines; $i++) {
      next unless $lines[$i] =~ m{^\s*(?://|#|/?\*)\s*(?:.*?\s)?Tests:(.*)$};
      my $text = $1;
      # The paths go on over the next comment lines until the sentence ends.
      my $j = $i;
      while ($text !~ /\.\s*(?:\*\/)?\s*$/ && $j < $#lines && $j - $i < 4 &&
             $lines[$j + 1] =~ m{^\s*(?://|#|\*)\s?(.*)$}) {
        $j++;
        $text .= " $1";
      }
      $text =~ s{\*/}{}g;
      # dir/{a,b}_test.cc names dir/a_test.cc and dir/b_test.cc.
      $text =~ s{\s*,\s*(?=[^{}]*\})}{,}g;
      while ($text =~ /(\S*)\{([^{}]*)\}(\S*)/) {
        my ($pre, $list, $post) = ($1, $2, $3);
        my $expanded = join(" ", map { "$pre$_$post" } split(/,/, $list));
        $text =~ s/\S*\{[^{}]*\}\S*/$expanded/;
      }
      my $dir = "";
      my @named;
      for my $token (split /[\s,;()`"\x27]+/, $text) {
        $token =~ s/[.:]+$//;
        next unless $token =~ m{^[\w./+-]+$};
        next if $token =~ m{^-};
        next unless $token =~ m{/} || $token =~ /\.(cc|c|h|sh|cmake|txt|py)$/;
        if ($token =~ m{/}) {
          if ($token =~ m{^tests/}) {
            $dir = -d $token ? "$token/" : ($token =~ m{^(.*/)} ? $1 : "");
            $dir =~ s{//$}{/};
          }
          push @named, $token;
        } else {
          push @named, "$dir$token";
        }
      }
      my $where = sprintf("%s:%d", $file, $i + 1);
      if (!@named) {
        print "$where: the Tests: line names no file\n";
        $bad = 1;
      }
      for my $path (@named) {
        next if -e $path;
        print "$where: the Tests: line names $path, which does not exist\n";
        $bad = 1;
      }
    }
  }
  exit $bad;
'; then
  status=1
fi

# 2. Formatting of C++ files.
if ! command -v clang-format-14 >/dev/null 2>&1; then
  echo "check-sources: clang-format-14 not found (bash scripts/install-deps.sh)" >&2
  exit 2
fi
cxx=('*.h' '*.hh' '*.hpp' '*.cc' '*.cpp' '*.cxx')
files=()
if [[ "$mode" == all ]]; then
  mapfile -t files < <(git ls-files -- "${cxx[@]}")
else
  if [[ -z "$base" ]]; then
    if git rev-parse -q --verify origin/main >/dev/null; then
      base="$(git merge-base HEAD origin/main)"
    elif git rev-parse -q --verify HEAD~1 >/dev/null; then
      base="HEAD~1"
    else
      base="$(git hash-object -t tree /dev/null)"  # the empty tree: all files
    fi
  fi
  # Changed since the base, committed or not, and still present.
  mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- "${cxx[@]}")
fi
if [[ ${#files[@]} -gt 0 ]]; then
  # clang-format prints FILE:LINE:COL: error: code should be clang-formatted.
  if ! printf '%s\0' "${files[@]}" |
       xargs -0 -n 40 -P "$(nproc)" clang-format-14 --dry-run -Werror 2>&1 |
       { grep -E "^[^ ]+:[0-9]+:[0-9]+: error" || true; } | sed 's/: error: /: /' | sort -t: -k1,1 -k2,2n |
       awk '{ print } END { exit NR > 0 }'; then
    echo "check-sources: run clang-format-14 -i on the files above" >&2
    status=1
  fi
fi

if [[ $status -eq 0 ]]; then
  echo "check-sources: ok (Tests: lines; format of ${#files[@]} C++ files)"
fi
exit "$status"
