#!/usr/bin/env bash
# deploy/ cannot run here (systemd, Docker, Kubernetes), so this reads its files and
# checks that every `lathe` command line in them is one the CLI accepts:
# `lathe --check-args ...` parses the line and runs nothing.
# Usage: deploy_commands_test.sh LATHE_BIN DEPLOY_DIR
set -euo pipefail
lathe=$1
deploy=$2
checked=0

fail() { echo "FAIL: $*" >&2; exit 1; }

# check WHERE ARGS...: ARGS are lathe's arguments (without "lathe").
check() {
  local where=$1
  shift
  local out
  out=$("$lathe" --check-args "$@" 2>&1) || fail "$where: lathe $* -> $out"
  checked=$((checked + 1))
  echo "ok   $where: lathe $*"
}

# Lines joined where they end in a backslash.
joined() { sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' "$1"; }

# The negative control: a bad line must fail, or the check proves nothing.
! "$lathe" --check-args serve --no-such-option > /dev/null 2>&1 || fail "--check-args accepts anything"
! "$lathe" --check-args runner --token-file t > /dev/null 2>&1 || fail "--check-args skips required options"

# systemd: ExecStart= with the unit's Environment= values substituted (as
# systemd does for ${VAR}).
for unit in "$deploy"/systemd/*.service; do
  where=$(basename "$unit")
  (
    while IFS= read -r line; do
      case $line in Environment=*) export "${line#Environment=}" ;; esac
    done < <(joined "$unit")
    joined "$unit" | grep '^ExecStart=' | while IFS= read -r line; do
      eval "set -- ${line#ExecStart=}"
      [ "$(basename "$1")" = lathe ] || fail "$where: ExecStart runs $1, not lathe"
      shift
      "$lathe" --check-args "$@" > /dev/null 2>&1 || fail "$where: $line"
      echo "ok   $where: lathe $*"
    done
  )
  checked=$((checked + $(joined "$unit" | grep -c '^ExecStart=')))
done

# Dockerfiles: ENTRYPOINT ["lathe"] (the cuda image inherits it) and the
# default CMD (exec form).
for dockerfile in "$deploy"/docker/Dockerfile "$deploy"/docker/Dockerfile.cuda; do
  where=$(basename "$dockerfile")
  if [ "$where" = Dockerfile ]; then
    grep -qx 'ENTRYPOINT \["lathe"\]' "$dockerfile" || fail "$where: the entry point is not lathe"
  else
    ! grep -q '^ENTRYPOINT' "$dockerfile" || fail "$where: an entry point of its own"
  fi
  cmd=$(grep '^CMD \[' "$dockerfile" | sed -E 's/^CMD \[(.*)\]$/\1/; s/", *"/ /g; s/"//g')
  [ -n "$cmd" ] || fail "$where: no CMD"
  # shellcheck disable=SC2086
  check "$where" $cmd
done

# Kubernetes: each container's arguments (after the image's lathe entry
# point), read by a YAML parser.
while IFS=$'\t' read -r where line; do
  eval "set -- $line"
  check "$where" "$@"
done < <(/usr/bin/python3 "$(dirname "$0")/kubernetes_manifests.py" commands "$deploy" ||
         echo "kubernetes_manifests.py	failed")

# compose: each service's command (string form, after the lathe entry
# point), and the `lathe ...` lines of its comments.
compose=$deploy/docker/compose.yaml
while IFS= read -r line; do
  eval "set -- ${line#*command: }"
  check compose.yaml "$@"
done < <(grep -E '^[[:space:]]+command: ' "$compose")
while IFS= read -r line; do
  eval "set -- ${line#*lathe }"
  check "compose.yaml (comment)" "$@"
done < <(grep '^#' "$compose" | sed -E 's/^#[[:space:]]?//' | sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' |
         grep -E '(^| )lathe [a-z]' | grep -v 'docker build\|up -d')

# Every line found: 2 units, 2 Dockerfiles, 3 compose services and 1
# comment, 3 Kubernetes containers.
[ "$checked" = 11 ] || fail "checked $checked command lines, want 11 (a file changed? update the count)"
echo "PASS: $checked command lines"
