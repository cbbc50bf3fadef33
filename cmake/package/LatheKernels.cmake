# lathe_add_kernels: kernels tuned by Lathe, built into a CMake target
# (lathe_add_model, below: a whole ONNX model as one library).
#
#   lathe_add_kernels(<target>
#     [DB <tuned.db>]          the tuning database (none: default schedules)
#     [DEVICE <target>]        Lathe target string (default: host)
#     WORKLOADS <spec>...      e.g. dense:M=64,N=256,K=256,bias=1,relu=1
#     [NAME <name>]            library and header name (default: <target>_kernels)
#     [PREFIX <prefix>]        prefix of every function name (two sets in one program)
#     [REQUIRE_TUNED]          fail the build when a workload has no usable record
#     [COMPATIBLE]             let records of a compatible target answer
#     [OUTPUT_VARIABLE <var>]  set to the folder of <name>.a, <name>.h, <name>.json)
#
# At build time `lathe compile` writes <name>.a (every kernel and the Lathe
# runtime), <name>.h (one C function per workload) and <name>.json (which
# database record each kernel came from) under
# ${CMAKE_CURRENT_BINARY_DIR}/lathe/<name>/; <target> links the archive and
# includes the folder, so its sources `#include "<name>.h"`. The step runs
# again when the database's records (or the lathe command) change: every
# build runs `lathe db stamp`, which rewrites <name>.db-stamp only when the
# records differ, so commits a running `lathe tune` or `lathe serve` holds in
# the WAL count, a copy that keeps an older mtime counts, and a write that
# changed no record does not. Workloads without a record fall back to the
# default schedule with a warning in the build log, unless REQUIRE_TUNED.
include_guard(GLOBAL)

# The part lathe_add_kernels and lathe_add_model share, in their scope (a
# macro: it reads their `target`, ARG_*, `args`, `depends`, `dir`, `lib`,
# `header` and `manifest`, and sets ARG_OUTPUT_VARIABLE in their caller's):
# the database arguments and its stamp, the command that generates the
# library, header and manifest, and the target linked to the library. `fn`
# names the calling function in errors, `what` the build step's comment.
macro(_lathe_generate fn what)
  set(stamp "")
  if(ARG_DB)
    get_filename_component(db ${ARG_DB} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND args --db ${db})
    set(stamp ${dir}/${ARG_NAME}.db-stamp)
    list(APPEND depends ${stamp})
  elseif(ARG_REQUIRE_TUNED OR ARG_COMPATIBLE)
    message(FATAL_ERROR "${fn}(${target}): REQUIRE_TUNED and COMPATIBLE need DB")
  endif()
  if(ARG_REQUIRE_TUNED)
    list(APPEND args --require-tuned)
  endif()
  if(ARG_COMPATIBLE)
    list(APPEND args --compatible)
  endif()

  file(MAKE_DIRECTORY ${dir})
  if(stamp)
    # Runs at every build; a byproduct, so Ninja looks at the stamp's mtime
    # again afterwards (restat) and regenerates only when it moved.
    add_custom_target(${ARG_NAME}_db_stamp
      COMMAND Lathe::lathe db stamp --db ${db} --output ${stamp}
      BYPRODUCTS ${stamp}
      VERBATIM)
  endif()
  add_custom_command(
    OUTPUT ${lib} ${header} ${manifest}
    COMMAND Lathe::lathe ${args}
    DEPENDS ${depends}
    COMMENT "Lathe: ${what} ${ARG_NAME} (${ARG_DEVICE})"
    VERBATIM)
  add_custom_target(${ARG_NAME}_generate DEPENDS ${lib} ${header} ${manifest})
  if(stamp)
    add_dependencies(${ARG_NAME}_generate ${ARG_NAME}_db_stamp)
  endif()
  add_dependencies(${target} ${ARG_NAME}_generate)
  # A full path: the link step depends on the archive and relinks when it changes.
  target_link_libraries(${target} PRIVATE ${lib} Threads::Threads m)
  target_include_directories(${target} PRIVATE ${dir})
  if(ARG_OUTPUT_VARIABLE)
    set(${ARG_OUTPUT_VARIABLE} ${dir} PARENT_SCOPE)
  endif()
endmacro()

function(lathe_add_kernels target)
  # Here rather than beside the include guard: imported targets belong to
  # the directory that finds them, and every directory that calls this
  # function links Threads::Threads.
  if(NOT TARGET Threads::Threads)
    find_package(Threads REQUIRED)
  endif()
  cmake_parse_arguments(ARG "REQUIRE_TUNED;COMPATIBLE" "DB;DEVICE;NAME;PREFIX;OUTPUT_VARIABLE"
                        "WORKLOADS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lathe_add_kernels(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_WORKLOADS)
    message(FATAL_ERROR "lathe_add_kernels(${target}): WORKLOADS is required")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "lathe_add_kernels(${target}): no such target")
  endif()
  if(NOT ARG_DEVICE)
    set(ARG_DEVICE host)
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target}_kernels)
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "lathe_add_kernels(${target}): NAME ${ARG_NAME} is not an identifier")
  endif()

  if(TARGET ${ARG_NAME}_generate)
    message(FATAL_ERROR "lathe_add_kernels(${target}): NAME ${ARG_NAME} is taken (each call "
                        "needs its own NAME, e.g. NAME ${target}_tuned)")
  endif()

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/lathe/${ARG_NAME})
  set(lib ${dir}/${ARG_NAME}.a)
  set(header ${dir}/${ARG_NAME}.h)
  set(manifest ${dir}/${ARG_NAME}.json)
  set(args compile ${ARG_WORKLOADS} --target ${ARG_DEVICE} -o ${lib} --header ${header}
           --manifest ${manifest})
  set(depends Lathe::lathe)
  if(ARG_PREFIX)
    list(APPEND args --prefix ${ARG_PREFIX})
  endif()
  _lathe_generate(lathe_add_kernels kernels)
endfunction()

# lathe_add_model: an ONNX model built by Lathe into one library with one C
# function that runs it (`lathe compile MODEL.onnx`), linked into a target.
#
#   lathe_add_model(<target>
#     MODEL <model.onnx>       the model (relative paths: to the current source dir)
#     [DB <tuned.db>]          the tuning database (none: default schedules)
#     [DEVICE <target>]        Lathe target string (default: host)
#     [SHAPES <name=d0,d1,...>...]  values of the inputs' symbolic dimensions
#     [NAME <name>]            library and header name (default: <target>_model)
#     [FUNCTION <function>]    the C function (default: <name>)
#     [REQUIRE_TUNED]          fail the build when a task has no usable record
#     [COMPATIBLE]             let records of a compatible target answer
#     [OUTPUT_VARIABLE <var>]  set to the folder of <name>.a, <name>.h, <name>.json)
#
# As lathe_add_kernels: <name>.a (the model's kernels, its weights, the entry
# and the runtime), <name>.h and <name>.json under
# ${CMAKE_CURRENT_BINARY_DIR}/lathe/<name>/, generated again when the model
# file, the database's records or the lathe command change.
function(lathe_add_model target)
  if(NOT TARGET Threads::Threads)
    find_package(Threads REQUIRED)
  endif()
  cmake_parse_arguments(ARG "REQUIRE_TUNED;COMPATIBLE"
                        "MODEL;DB;DEVICE;NAME;FUNCTION;OUTPUT_VARIABLE" "SHAPES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lathe_add_model(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "lathe_add_model(${target}): MODEL is required")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "lathe_add_model(${target}): no such target")
  endif()
  if(NOT ARG_DEVICE)
    set(ARG_DEVICE host)
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target}_model)
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "lathe_add_model(${target}): NAME ${ARG_NAME} is not an identifier")
  endif()
  if(NOT ARG_FUNCTION)
    set(ARG_FUNCTION ${ARG_NAME})
  endif()
  if(TARGET ${ARG_NAME}_generate)
    message(FATAL_ERROR "lathe_add_model(${target}): NAME ${ARG_NAME} is taken (each call "
                        "needs its own NAME)")
  endif()
  get_filename_component(model ${ARG_MODEL} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})

  set(dir ${CMAKE_CURRENT_BINARY_DIR}/lathe/${ARG_NAME})
  set(lib ${dir}/${ARG_NAME}.a)
  set(header ${dir}/${ARG_NAME}.h)
  set(manifest ${dir}/${ARG_NAME}.json)
  set(args compile ${model} --function ${ARG_FUNCTION} --target ${ARG_DEVICE} -o ${lib}
           --header ${header} --manifest ${manifest})
  foreach(shape IN LISTS ARG_SHAPES)
    list(APPEND args --shape ${shape})
  endforeach()
  set(depends Lathe::lathe ${model})
  _lathe_generate(lathe_add_model model)
endfunction()
