#!/usr/bin/env bash
# Copies the shared libraries lathe-gpu-check needs, other than the C and
# C++ runtimes every Linux has, into the binary's folder (its RPATH is
# $ORIGIN), so that the folder runs on a machine without Debian's -dev
# packages (tools/CMakeLists.txt, scripts/gpu-check.sh).
#   gpu-check-bundle.sh PATH/TO/lathe-gpu-check
set -euo pipefail
binary=$1
dir=$(dirname "$binary")
ldd "$binary" | awk '/=> \// {print $3}' | while read -r lib; do
  [[ "$(dirname "$lib")" -ef "$dir" ]] && continue  # already bundled
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -uL "$lib" "$dir/" ;;
  esac
done
