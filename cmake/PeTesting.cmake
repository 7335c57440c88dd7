# The test binaries' helpers, shared by every layer's tests/ folder.

# The ctest entries of a GoogleTest binary are derived from the binary itself at test time
# (discover_suites.cmake): one per suite and family, named <prefix>/<suite>[/<family>_<layout>].
function(pe_discover_suites target prefix)
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  file(GENERATE OUTPUT "${script}" CONTENT
       "set(PE_DISCOVER_EXE \"$<TARGET_FILE:${target}>\")\nset(PE_DISCOVER_PREFIX \"${prefix}\")\ninclude(\"${PROJECT_SOURCE_DIR}/cmake/discover_suites.cmake\")\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()

# A layer's unit tests: GoogleTest (and RapidCheck) with the property suite's main and generators
# (properties/support), its precompiled headers reused, its suites discovered under `prefix`.
function(pe_layer_test target prefix)
  add_executable(${target} ${PROJECT_SOURCE_DIR}/properties/test_main.cc ${ARGN})
  target_link_libraries(${target} PRIVATE pe_props_support pe_test_source_dir)
  target_precompile_headers(${target} REUSE_FROM pe_props_support)
  pe_warnings(${target})
  pe_test_code(${target})
  pe_unity(${target})
  pe_discover_suites(${target} ${prefix})
endfunction()
