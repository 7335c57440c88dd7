# `pip install .` (pyproject.toml, scikit-build-core): the package pe_suite at the wheel's root with the native
# module, libpe beside it and the CLI in pe_suite/bin (run through the `pe-suite` entry point, pe_suite/_cli.py),
# each finding libpe by an RPATH relative to itself, so the wheel works wherever pip puts it.
install(TARGETS pe LIBRARY DESTINATION pe_suite COMPONENT wheel)
set_target_properties(pe_suite_python PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS pe_suite_python LIBRARY DESTINATION pe_suite COMPONENT wheel)
set_target_properties(pe-suite PROPERTIES INSTALL_RPATH "$ORIGIN/..")
install(TARGETS pe-suite RUNTIME DESTINATION pe_suite/bin COMPONENT wheel)
install(FILES ${pe_python_sources} ${PROJECT_SOURCE_DIR}/harness/data/config_space.json DESTINATION pe_suite
        COMPONENT wheel)
install(FILES ${pe_shipped_configs} DESTINATION pe_suite/hf_configs COMPONENT wheel)
