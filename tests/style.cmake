# The tree's shape rules (docs/architecture.md): no function outside tests over 100 lines, and every
# C++ file formatted by .clang-format (when clang-format is installed; scripts/setup.sh installs it).
add_test(NAME style.long_functions COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/long_functions.py --fail
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
find_program(HETSIM_CLANG_FORMAT NAMES clang-format clang-format-14)
if(HETSIM_CLANG_FORMAT)
  add_test(NAME style.clang_format
           COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DCLANG_FORMAT=${HETSIM_CLANG_FORMAT}
                   -P ${PROJECT_SOURCE_DIR}/cmake/check_format.cmake)
endif()
# Issue 38: no hand-written unit factor or bare-number alias for a time or a byte count in base/,
# topology/ and sim/; conversions live in base/time.h and base/units.h (exceptions listed in the script).
add_test(NAME style.units COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/check_units.py ${PROJECT_SOURCE_DIR})
# Every C++ test source sits in tests/<module dir>/, the folder mirroring the module it tests
# (scripts/layout_tests.py moves a file left elsewhere; tests/main_test.cc and tests/fuzz/ excepted).
add_test(NAME test_layout COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/check_test_layout.py ${PROJECT_SOURCE_DIR})
# Every module header is in the namespace its folder says (docs/architecture.md, "Namespaces").
add_test(NAME namespaces COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/check_namespaces.py ${PROJECT_SOURCE_DIR})
