# Chakra round trip through the command line (tests/chakra/round_trip.py): the HAPT case study, and
# the 512-GPU example outside the sanitizer build (35 MB of traces, seconds in Release).
add_test(NAME chakra.round_trip.hapt_case
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/chakra/round_trip.py $<TARGET_FILE:hetsim>
                 ${PROJECT_SOURCE_DIR}/examples/plan-hapt-case.pbtxt ${PROJECT_SOURCE_DIR}/examples/cluster-hapt-case.pbtxt
                 ${CMAKE_CURRENT_BINARY_DIR}/chakra_round_trip/hapt_case)
if(NOT HETSIM_SANITIZE)
  add_test(NAME chakra.round_trip.512gpu
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/chakra/round_trip.py $<TARGET_FILE:hetsim>
                   ${PROJECT_SOURCE_DIR}/examples/plan-512gpu.pbtxt ${PROJECT_SOURCE_DIR}/examples/cluster-512gpu.pbtxt
                   ${CMAKE_CURRENT_BINARY_DIR}/chakra_round_trip/512gpu)
  set_tests_properties(chakra.round_trip.512gpu PROPERTIES TIMEOUT 600)
endif()
