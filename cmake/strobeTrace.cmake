# strobeTrace.cmake — owns strobe_trace_calls(), the one way a CMake project
# builds a unit with call tracing (docs/exploration.md §Building a unit with
# call tracing). Loaded by find_package(strobe) (strobeConfig.cmake) and by
# Strobe's own tree (examples, tests, benches). It only adds compile options:
# the hooks it makes the compiler call are libstrobe's, so the target must
# link strobe::strobe (or strobe::strobe_static) too.
#
#   strobe_trace_calls(<target> [EXCLUDE_FILES path...])
#
# Every function compiled into <target> calls Strobe's hooks at entry and
# exit (-finstrument-functions). Functions inlined from system headers (the
# C++ standard library) and from Strobe's own headers are left out: GCC by
# -finstrument-functions-exclude-file-list (EXCLUDE_FILES adds substrings of
# paths to it), Clang by instrumenting after inlining, so nothing inlined is
# traced (EXCLUDE_FILES is refused with Clang, which has no such list).
include_guard(GLOBAL)

function(strobe_trace_calls target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "EXCLUDE_FILES")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "strobe_trace_calls: ${target} is not a target")
  endif()
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU" OR CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(_files /usr/include/ include/strobe/ ${arg_EXCLUDE_FILES})
    list(JOIN _files "," _files)
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANG_AND_ID:C,GNU>:-finstrument-functions;-finstrument-functions-exclude-file-list=${_files}>"
      "$<$<COMPILE_LANG_AND_ID:CXX,GNU>:-finstrument-functions;-finstrument-functions-exclude-file-list=${_files}>")
  endif()
  if(CMAKE_C_COMPILER_ID MATCHES "Clang" OR CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    if(arg_EXCLUDE_FILES)
      message(FATAL_ERROR "strobe_trace_calls: EXCLUDE_FILES needs GCC (Clang has no file list); mark the functions "
                          "__attribute__((no_instrument_function)) or exclude them by name (strobe_trace_desc.exclude)")
    endif()
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANG_AND_ID:C,Clang>:-finstrument-functions-after-inlining>"
      "$<$<COMPILE_LANG_AND_ID:CXX,Clang>:-finstrument-functions-after-inlining>")
  endif()
endfunction()
