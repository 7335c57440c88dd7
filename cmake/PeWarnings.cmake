# Warnings on and clean for pe-suite's own targets.
function(pe_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(PE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# The test and CLI code's own compile flags (PE_TEST_CODE_FLAGS), empty by default. -O0 halves their
# compile time under ASan (the unity translation units of RapidCheck properties take 53 s at -O1, 30 s at
# -O0) but slows the tests that run there several-fold (a buffer's bytes constructed one call each, the
# check engine's diagnosis): the ASan+UBSan preset no longer sets it, as ccache makes the compile a one-off
# and the tests run on every CI pass. For a quick local ASan build: -DPE_TEST_CODE_FLAGS=-O0.
set(PE_TEST_CODE_FLAGS "" CACHE STRING "Extra compile flags for the property suites, the CLI and their tests")
function(pe_test_code target)
  if(PE_TEST_CODE_FLAGS)
    separate_arguments(flags UNIX_COMMAND "${PE_TEST_CODE_FLAGS}")
    target_compile_options(${target} PRIVATE ${flags})
  endif()
endfunction()
