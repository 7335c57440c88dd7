# `cmake --install`: the libraries with their headers, the pe-suite CLI with the helper programs it
# runs (pe_props, pe_bench, found relative to pe-suite: cli/common.h), and the CMake package
# pe_suite (pe_suiteConfig.cmake, SameMajorVersion) exporting pe::pe, pe::reference, pe::harness, pe::check and,
# as far as they are built, pe::properties (the property suite without main) and pe::bench, with
# pe_add_variant_suite() to run them over an outside project's own kernels (PeVariantSuite.cmake).
include(CMakePackageConfigHelpers)

set(PE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pe_suite)
# Sources and headers an outside suite compiles itself: the property and benchmark mains.
set(PE_SHARED_SOURCE_DIR ${CMAKE_INSTALL_DATADIR}/pe_suite/src)

set(pe_exported pe pe_reference pe_harness pe_check)
if(TARGET pe_plugin)  # the C plugin ABI's header (pe/plugin.h), an interface target
  list(APPEND pe_exported pe_plugin)
endif()
if(TARGET pe_props_objects)
  list(APPEND pe_exported pe_props_support pe_props_objects)
  install(FILES properties/test_main.cc DESTINATION ${PE_SHARED_SOURCE_DIR})
  install(FILES properties/support/rc_params.h properties/support/generators.h
                properties/support/property_util.h properties/support/case_report.h DESTINATION ${PE_SHARED_SOURCE_DIR}/support)
endif()
if(TARGET pe_bench_lib)
  list(APPEND pe_exported pe_bench_lib)
  install(FILES bench/pe_bench.cc bench/alloc_counter.h bench/grid.h bench/plain_console.h bench/machine_limits.h bench/fixture_cache.h
          DESTINATION ${PE_SHARED_SOURCE_DIR})
endif()
install(TARGETS ${pe_exported} EXPORT pe_suiteTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/pe_suite/objects
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY impl/include/ reference/include/ harness/include/ check/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The CLI in bin/, its helpers in libexec/pe-suite/; both find libpe in lib/.
if(TARGET pe-suite)
  set_target_properties(pe-suite PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS pe-suite RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  foreach(helper IN ITEMS pe_props pe_bench)
    if(TARGET ${helper})
      set_target_properties(${helper} PROPERTIES INSTALL_RPATH "$ORIGIN/../../${CMAKE_INSTALL_LIBDIR}")
      install(TARGETS ${helper} RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/pe-suite)
    endif()
  endforeach()
endif()

install(EXPORT pe_suiteTargets NAMESPACE pe:: DESTINATION ${PE_PACKAGE_DIR})
configure_package_config_file(cmake/pe_suiteConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/pe_suiteConfig.cmake
                              INSTALL_DESTINATION ${PE_PACKAGE_DIR} PATH_VARS PE_SHARED_SOURCE_DIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/pe_suiteConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pe_suiteConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/pe_suiteConfigVersion.cmake
              cmake/FindMPFR.cmake cmake/PeVariantSuite.cmake
        DESTINATION ${PE_PACKAGE_DIR})
