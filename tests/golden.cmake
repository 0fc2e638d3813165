# ctest "golden.examples": every bundled example plan's report and trace are byte-identical to the
# digests committed in tests/golden/examples.sha256 (scripts/update-goldens.sh regenerates them).
add_test(NAME golden.examples
         COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -DOUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/golden -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/run_examples.cmake)
