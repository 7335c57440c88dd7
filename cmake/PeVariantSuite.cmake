# pe_add_variant_suite(NAME SOURCES file... [WITH_BUILTINS] [NO_BENCH] [RC_PARAMS "seed=... max_success=..."])
#
# For an outside project's own kernels, registered in SOURCES with pe/register.h's macros:
#   NAME_props   every pe-suite property over the variants SOURCES register (with WITH_BUILTINS, also
#                over pe-suite's own, as the comparison baseline); RapidCheck's counterexamples shrunk
#   NAME_bench   the benchmark grid over the same (pe_bench's flags: --mode quick|report, --variant GLOB)
# and the ctest entries NAME/properties (NAME_props) and NAME/bench_smoke (every shape once, untimed). The variants are told apart by the file
# that registered them ($PE_VARIANT=@outside selects those not built into libpe).
function(pe_add_variant_suite name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "WITH_BUILTINS;NO_BENCH" "RC_PARAMS" "SOURCES")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "pe_add_variant_suite(${name}): SOURCES is required (the files registering the kernels)")
  endif()
  if(NOT TARGET pe::properties)
    message(FATAL_ERROR "pe_add_variant_suite(${name}): this pe_suite was installed without its property suite")
  endif()
  add_executable(${name}_props ${ARG_SOURCES} ${PE_SUITE_SOURCE_DIR}/test_main.cc)
  target_link_libraries(${name}_props PRIVATE pe::properties pe::properties_support pe::pe)
  target_include_directories(${name}_props PRIVATE ${PE_SUITE_SOURCE_DIR})
  set(selection "PE_VARIANT=@outside")
  set(bench_selection "@outside")
  if(ARG_WITH_BUILTINS)
    set(selection "PE_VARIANT=*")
    set(bench_selection "*")
  endif()
  if(NOT ARG_RC_PARAMS)
    set(ARG_RC_PARAMS "seed=20261130 max_size=100 max_success=25")
  endif()
  add_test(NAME ${name}/properties COMMAND ${name}_props --gtest_brief=1)
  set_tests_properties(${name}/properties PROPERTIES ENVIRONMENT "${selection};RC_PARAMS=${ARG_RC_PARAMS}")
  if(TARGET pe::bench AND NOT ARG_NO_BENCH)
    add_executable(${name}_bench ${ARG_SOURCES} ${PE_SUITE_SOURCE_DIR}/pe_bench.cc)
    target_link_libraries(${name}_bench PRIVATE pe::bench pe::pe)
    # Every shape once, untimed (Google Benchmark's smallest run): the binary works on these variants.
    add_test(NAME ${name}/bench_smoke COMMAND ${name}_bench --mode smoke --variant ${bench_selection})
  endif()
endfunction()
