# Registers every case of tests/bad_inputs/cases.txt as the ctest test "bad_input.<name>". Only the
# names are read here (whole lines hold brackets, which CMake lists mishandle); run_case.cmake reads
# the rest.
file(READ ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/cases.txt hetsim_bad_input_text)
string(REGEX MATCHALL "\n[a-z0-9_]+ \\|" hetsim_bad_input_heads "${hetsim_bad_input_text}")
foreach(head IN LISTS hetsim_bad_input_heads)
  string(REGEX MATCH "[a-z0-9_]+" name "${head}")
  add_test(NAME bad_input.${name}
           COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DCASE=${name}
                   -DOUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/bad_input_out/${name}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/run_case.cmake)
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/cases.txt)
