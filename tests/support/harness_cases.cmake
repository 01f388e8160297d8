# harness_cases.cmake — owns turning one harness test executable into one
# CTest test per case. CTest includes it when it loads the tests (the
# directory's TEST_INCLUDE_FILES, set by strobe_add_harness_test in
# tests/CMakeLists.txt), after the per-executable file has set:
#   HARNESS_NAME  the executable's name (tests are named HARNESS_NAME.case)
#   HARNESS_EXE   its path
#   HARNESS_TIMEOUT, HARNESS_LABELS, HARNESS_RUN_SERIAL,
#   HARNESS_FIXTURES_REQUIRED, HARNESS_FIXTURES_SETUP  properties of each case
# The case list comes from the executable itself (`--list`), so the tests
# registered are exactly the cases built. Must never hide a failure: a
# missing executable or a failing --list becomes a failing test of its own.

if(NOT EXISTS "${HARNESS_EXE}")
  # Not built: a test that fails saying so, under the executable's name.
  add_test("${HARNESS_NAME}" "${HARNESS_EXE}")
  return()
endif()

execute_process(COMMAND "${HARNESS_EXE}" --list
                OUTPUT_VARIABLE _harness_out ERROR_VARIABLE _harness_err RESULT_VARIABLE _harness_rc)
if(NOT _harness_rc EQUAL 0 OR _harness_out STREQUAL "")
  add_test("${HARNESS_NAME}.list" "${HARNESS_EXE}" --list)
  return()
endif()

string(REPLACE "\n" ";" _harness_cases "${_harness_out}")
foreach(_harness_case IN LISTS _harness_cases)
  if(_harness_case STREQUAL "")
    continue()
  endif()
  set(_harness_test "${HARNESS_NAME}.${_harness_case}")
  add_test("${_harness_test}" "${HARNESS_EXE}" "${_harness_case}")
  set_tests_properties("${_harness_test}" PROPERTIES TIMEOUT "${HARNESS_TIMEOUT}")
  if(NOT HARNESS_LABELS STREQUAL "")
    set_tests_properties("${_harness_test}" PROPERTIES LABELS "${HARNESS_LABELS}")
  endif()
  if(HARNESS_RUN_SERIAL)
    set_tests_properties("${_harness_test}" PROPERTIES RUN_SERIAL TRUE)
  endif()
  if(NOT HARNESS_FIXTURES_REQUIRED STREQUAL "")
    set_tests_properties("${_harness_test}" PROPERTIES FIXTURES_REQUIRED "${HARNESS_FIXTURES_REQUIRED}")
  endif()
  if(NOT HARNESS_FIXTURES_SETUP STREQUAL "")
    set_tests_properties("${_harness_test}" PROPERTIES FIXTURES_SETUP "${HARNESS_FIXTURES_SETUP}")
  endif()
endforeach()
