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
# Session 38: the report shows each stage's waits for its ranges' other holders' gather calls (the text line;
# the JSON field gather_call_wait_ms and the HTML column are checked in tests/sim/executor/executor_pipelines_test.cc),
# and `hetsim check` names the stages whose passes call the gathers of more than one range.
add_test(NAME pipelines_cli.run_zero3_gather_call_waits
         COMMAND $<TARGET_FILE:hetsim> run ${PROJECT_SOURCE_DIR}/tests/planner_data/plan-lab-pipelines-zero3.pbtxt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-lab-pcie.pbtxt --no-wall-time)
set_tests_properties(pipelines_cli.run_zero3_gather_call_waits PROPERTIES
                     PASS_REGULAR_EXPRESSION "ZeRO-3 gather calls \\(waiting for the ranges' other holders\\): stage 0 \\+[0-9.]+ ms,")
add_test(NAME pipelines_cli.check_zero3_call_order
         COMMAND $<TARGET_FILE:hetsim> check ${PROJECT_SOURCE_DIR}/tests/planner_data/plan-lab-pipelines-zero3.pbtxt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-lab-pcie.pbtxt)
set_tests_properties(pipelines_cli.check_zero3_call_order PROPERTIES
                     PASS_REGULAR_EXPRESSION "ZeRO-3 calls: pipelines\\[4\\] stage 0 holds 2 layer ranges; a pass calls all their gathers")
