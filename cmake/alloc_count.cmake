# cmake/alloc_count.cmake — owns strobe_count_allocations(<target>): links the
# allocation-counting shim (tests/support/alloc_count.c, alloc_count.h) into
# a test or bench, with the linker wrapping every allocator entry libstrobe
# could use so no allocation escapes its count. Included by tests/ and bench/.
set(STROBE_ALLOC_COUNT_WRAPS malloc calloc realloc strdup strndup posix_memalign aligned_alloc)

function(strobe_count_allocations target)
  target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support/alloc_count.c")
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  foreach(_fn IN LISTS STROBE_ALLOC_COUNT_WRAPS)
    target_link_options(${target} PRIVATE "-Wl,--wrap=${_fn}")
  endforeach()
endfunction()
