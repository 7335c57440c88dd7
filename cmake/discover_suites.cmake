# Included by ctest (TEST_INCLUDE_FILES): asks a GoogleTest binary for its tests and adds one ctest
# per suite, split by family and layout where every test of a parameterised suite names its instance
# ("Registry/RopeProps.X/rope_halfsplit_hwy_f32"), so that the long suites share the cores evenly. The list is derived from the binary, so a new
# suite runs without an edit anywhere; one ctest per suite (not per test) keeps process starts few.
# Inputs: PE_DISCOVER_EXE, PE_DISCOVER_PREFIX (the ctest name prefix).
execute_process(COMMAND "${PE_DISCOVER_EXE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  # Shown as a failing test rather than silently running none.
  add_test("${PE_DISCOVER_PREFIX}/discovery" "${PE_DISCOVER_EXE}" --gtest_list_tests)
  return()
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
set(suite "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.$")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    string(MAKE_C_IDENTIFIER "${suite}" id)
    set(families_${id} "")  # "<family>_<layout>" groups seen
    set(other_${id} OFF)
  elseif(NOT suite STREQUAL "" AND line MATCHES "^  [A-Za-z0-9_]+/((sinusoidal|rope)_[a-z]+)_")
    list(APPEND families_${id} "${CMAKE_MATCH_1}")
  elseif(NOT suite STREQUAL "" AND line MATCHES "^  ")
    set(other_${id} ON)
  endif()
endforeach()
foreach(suite IN LISTS suites)
  string(MAKE_C_IDENTIFIER "${suite}" id)
  string(REGEX REPLACE "^Registry/" "" shown "${suite}")
  list(REMOVE_DUPLICATES families_${id})
  list(LENGTH families_${id} n_families)
  if(n_families GREATER 1 AND NOT other_${id})
    foreach(group IN LISTS families_${id})
      add_test("${PE_DISCOVER_PREFIX}/${shown}/${group}" "${PE_DISCOVER_EXE}"
               "--gtest_filter=${suite}.*/${group}_*")
    endforeach()
  else()
    add_test("${PE_DISCOVER_PREFIX}/${shown}" "${PE_DISCOVER_EXE}" "--gtest_filter=${suite}.*")
  endif()
endforeach()
