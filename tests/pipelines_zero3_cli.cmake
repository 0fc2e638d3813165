# `hetsim check` of ZeRO-3 plans of pipelines (session 36, issue 39; docs/heterogeneous.md "Different
# microbatch counts under ZeRO-3"): the plan's lines say what a GPU with fewer microbatches does and where
# the tied matrix shards.
add_test(NAME pipelines_cli.check_zero3_uneven
         COMMAND $<TARGET_FILE:hetsim> check ${PROJECT_SOURCE_DIR}/tests/planner_data/plan-lab-pipelines-zero3-uneven.pbtxt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-lab-pcie.pbtxt)
set_tests_properties(pipelines_cli.check_zero3_uneven PROPERTIES
                     PASS_REGULAR_EXPRESSION "ZeRO-3 at 24, 24, 24, 24, 8, 8 microbatches: a GPU done with its own joins")
add_test(NAME pipelines_cli.check_zero3_tied
         COMMAND $<TARGET_FILE:hetsim> check ${CMAKE_CURRENT_SOURCE_DIR}/chakra/plan-pipelines-zero3-tied.pbtxt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-hapt-case.pbtxt)
set_tests_properties(pipelines_cli.check_zero3_tied PROPERTIES
                     PASS_REGULAR_EXPRESSION "ZeRO-3 tied matrix: shards over every pipeline's first and last stage.*ZeRO-3 at 8, 4 microbatches")
