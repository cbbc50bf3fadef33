# The layer check: every quoted include of a part's sources must name a
# header of the same part or of a part below it (docs/architecture.md,
# "Layers"). The build runs it (the lathe_layers target, a dependency of
# every library), so an include against the direction fails the build,
# naming the file, the line and the part it may not use.
#
#   cmake -DROOT=<source tree> [-DSTAMP=<file to touch on success>]
#         -P cmake/check_layers.cmake
#
# Parts are folders; a source belongs to the longest one that prefixes its
# path. tests/, bench/ and examples/ may use every part and are not checked.
# Tests: tests/cmake/check_layers_test.sh.
cmake_minimum_required(VERSION 3.25)

# PART: the folders it may include besides its own, bottom to top.
set(LATHE_LAYERS
  "base:"
  "proto:base"
  "compiler/runtime:"
  "compiler/ir:base compiler/arith"
  "compiler/arith:base compiler/ir"
  "compiler/interp:base compiler/ir compiler/arith"
  "compiler/te:base compiler/ir compiler/arith"
  "compiler/workload:base compiler/ir compiler/arith compiler/interp compiler/te"
  "compiler/graph:base compiler/ir compiler/arith compiler/interp compiler/te compiler/workload"
  "compiler/schedule:base proto compiler/ir compiler/arith"
  "compiler/lower:base compiler/ir compiler/arith"
  "compiler/measure:base compiler/ir compiler/arith compiler/interp compiler/te compiler/workload"
  "compiler/frontend:base compiler/ir compiler/arith compiler/interp compiler/graph"
  "compiler/target:base proto"
  "compiler/codegen/cuda:base proto compiler/ir compiler/arith compiler/interp compiler/te compiler/workload compiler/schedule compiler/lower compiler/target"
  "compiler/codegen:base proto compiler"
  "database:base proto"
  "report:base proto compiler database"
  "rpc:base proto"
  "runner:base proto compiler rpc"
  "tuner/cost_model:base compiler/ir"
  "tuner/features:base compiler/ir compiler/arith compiler/target"
  "tuner/space:base compiler/ir compiler/arith compiler/interp compiler/te compiler/workload compiler/schedule compiler/target"
  "tuner/search:base proto compiler database runner tuner/cost_model tuner/features tuner/space"
  "tuner/service:base proto compiler database rpc runner tuner report"
  "api:base proto compiler database"
  "cli:base proto compiler database rpc runner tuner api report"
  "tools:base proto compiler database rpc runner tuner api"
)

if(NOT ROOT)
  message(FATAL_ERROR "check_layers: -DROOT=<source tree> is required")
endif()

set(parts "")
foreach(entry IN LISTS LATHE_LAYERS)
  string(FIND "${entry}" ":" colon)
  string(SUBSTRING "${entry}" 0 ${colon} part)
  math(EXPR rest "${colon} + 1")
  string(SUBSTRING "${entry}" ${rest} -1 allowed)
  string(REPLACE " " ";" allowed "${allowed}")
  list(APPEND parts "${part}")
  set("allowed_${part}" ${part} ${allowed})
endforeach()

# The part a path belongs to: the longest listed folder that prefixes it.
function(part_of path out)
  set(best "")
  set(best_length 0)
  foreach(part IN LISTS parts)
    string(LENGTH "${part}/" length)
    string(SUBSTRING "${path}/" 0 ${length} head)
    if(head STREQUAL "${part}/" AND length GREATER best_length)
      set(best "${part}")
      set(best_length ${length})
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

set(top_folders "")
foreach(part IN LISTS parts)
  string(REGEX REPLACE "/.*" "" top "${part}")
  list(APPEND top_folders "${top}")
endforeach()
list(REMOVE_DUPLICATES top_folders)

set(globs "")
foreach(top IN LISTS top_folders)
  list(APPEND globs "${ROOT}/${top}/*.h" "${ROOT}/${top}/*.cc")
endforeach()
file(GLOB_RECURSE sources RELATIVE "${ROOT}" ${globs})

set(violations "")
foreach(source IN LISTS sources)
  part_of("${source}" part)
  if(part STREQUAL "")
    list(APPEND violations "${source}: belongs to no part of cmake/check_layers.cmake")
    continue()
  endif()
  file(STRINGS "${ROOT}/${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" header "${line}")
    # Headers outside the tree: absl/, gtest/, grpcpp/, LLVM's, and
    # generated protobuf headers (proto/x.pb.h belongs to proto).
    string(REGEX REPLACE "/.*" "" top "${header}")
    if(NOT top IN_LIST top_folders OR header STREQUAL top)
      continue()
    endif()
    part_of("${header}" target_part)
    if(target_part STREQUAL "")
      set(target_part "${top}")
    endif()
    set(ok FALSE)
    foreach(allowed IN LISTS "allowed_${part}")
      string(LENGTH "${allowed}/" length)
      string(SUBSTRING "${target_part}/" 0 ${length} head)
      if(head STREQUAL "${allowed}/")
        set(ok TRUE)
        break()
      endif()
    endforeach()
    if(NOT ok)
      list(APPEND violations
           "${source}: includes \"${header}\": ${part}/ may not use ${target_part}/")
    endif()
  endforeach()
endforeach()

if(violations)
  list(LENGTH violations count)
  string(REPLACE ";" "\n  " shown "${violations}")
  message(FATAL_ERROR
          "layer check: ${count} include(s) against the direction of the "
          "parts (cmake/check_layers.cmake, docs/architecture.md):\n  ${shown}")
endif()
if(STAMP)
  file(TOUCH "${STAMP}")
endif()
