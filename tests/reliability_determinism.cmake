# ctest "reliability.determinism": the bundled examples give byte-identical outputs across runs and
# across --jobs (tests/reliability/determinism_run.cmake does the work).
add_test(NAME reliability.determinism
         COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DEXAMPLES=${PROJECT_SOURCE_DIR}/examples
                 -DOUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/reliability_determinism
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/reliability/determinism_run.cmake)
# The longest test: started first (ctest runs higher COST first), so that it does not run alone at the end.
set_tests_properties(reliability.determinism PROPERTIES COST 1000)
