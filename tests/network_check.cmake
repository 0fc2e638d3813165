# ctest "network.check_max_min.*": the bundled 512-GPU what-if and the HAPT case run exact with the
# max-min cross-check on (HETSIM_CHECK_MAX_MIN=1: after every recompute a from-scratch solve, every
# flow's rate within 1e-9 relative, else the run aborts; sim/network/network_check.cc).
foreach(example 512gpu hapt-case)
  add_test(NAME network.check_max_min.${example}
           COMMAND $<TARGET_FILE:hetsim> run ${PROJECT_SOURCE_DIR}/examples/plan-${example}.pbtxt
                   --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-${example}.pbtxt --exact --quiet
                   --report ${CMAKE_CURRENT_BINARY_DIR}/network_check_${example}.json)
  set_tests_properties(network.check_max_min.${example} PROPERTIES ENVIRONMENT HETSIM_CHECK_MAX_MIN=1)
endforeach()
