#!/usr/bin/env bash
# Installs Lathe's build and test dependencies on Debian 12 (bookworm) via apt.
#
# Idempotent: when every package is already installed it touches neither the
# network nor apt (a warm machine returns in well under a second). Otherwise
# it runs `apt-get update` once and installs only what is missing.
# Runs as root directly; as another user it uses sudo if available.
#
# Prints one summary line. Environment:
#   LATHE_SKIP_DEPS=1   do nothing (for machines provisioned another way)
set -euo pipefail

# The whole project's dependencies (every part in docs/architecture.md), not
# only what the current code uses, so a machine set up once keeps working.
PACKAGES=(
  # toolchain
  g++ cmake ninja-build ccache pkg-config git
  # RPC and schema
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev
  # cost model, database, codegen
  libxgboost-dev libsqlite3-dev llvm-16-dev
  # the measuring worker's seccomp filter (runner/worker_sandbox.h)
  libseccomp-dev
  # LLVM 16's CMake package links its static components to
  # zstd::libzstd_shared, but llvm-16-dev does not depend on libzstd-dev.
  libzstd-dev
  # command line, formatting (clang-format-14: scripts/check-sources.sh)
  libcli11-dev libfmt-dev clang-format-14
  # fuzzing (scripts/fuzz.sh: clang-14 and its libFuzzer runtime)
  clang-14 libclang-rt-14-dev
  # tests and benchmarks (llvm-16-tools: FileCheck for tests/lit)
  libgtest-dev libgmock-dev libbenchmark-dev llvm-16-tools
  # peers of bench/kernels.cc only (the build skips that bench without them)
  libopenblas-dev libdnnl-dev
  # ONNX models: the importer (compiler/frontend/onnx), the node test suite,
  # and the python side of exporting models in tests/models
  libonnx-dev libonnx-testdata python3-onnx
  # the models the model tests export (ResNet-18, MobileNetV2, an encoder)
  python3-torch python3-torchvision
  # tests/deploy: the Kubernetes manifests parsed and checked
  python3-yaml
  # the HTML report checked in a real browser, headless, with the database
  # read by sqlite3 (tests/report/report_browser_test.sh)
  chromium sqlite3
)

if [[ "${LATHE_SKIP_DEPS:-0}" == "1" ]]; then
  echo "install-deps: skipped (LATHE_SKIP_DEPS=1)"
  exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: dpkg/apt not found; this script supports Debian 12 only" >&2
  exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  # "ii" = desired install, currently installed. Anything else (absent,
  # removed with config files left, half-installed) counts as missing.
  status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != ii* ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps: missing ${missing[*]}; need root or sudo to install" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
start=$SECONDS
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
       "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
         --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installed ${#missing[@]} of ${#PACKAGES[@]} packages" \
     "in $((SECONDS - start))s: ${missing[*]}"
