# Warnings on and clean for pe-suite's own targets.
function(pe_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(PE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# The test and CLI code's own compile flags (PE_TEST_CODE_FLAGS): the ASan+UBSan preset builds the
# property suites, the CLI and their tests at -O0, which halves their compile time (the unity
# translation units of RapidCheck properties take 53 s at -O1, 30 s at -O0), while the libraries they
# exercise (kernels, reference, harness) keep the preset's -O1: the tests' run time is spent there.
set(PE_TEST_CODE_FLAGS "" CACHE STRING "Extra compile flags for the property suites, the CLI and their tests")
function(pe_test_code target)
  if(PE_TEST_CODE_FLAGS)
    separate_arguments(flags UNIX_COMMAND "${PE_TEST_CODE_FLAGS}")
    target_compile_options(${target} PRIVATE ${flags})
  endif()
endfunction()
